/* patch: JSON merge patch (RFC 7386), see api/patch.h. */
#include "api/patch.h"

#include "util/jsonx.h"

/* Every member is copied once: target's members in target's order (those
 * the patch leaves alone copied, the others merged), then the members the
 * patch adds. A member the patch reaches into is merged from target's own
 * value, never copied first and merged after. */
json_t *api_merge_patch(const json_t *target, const json_t *patch)
{
    if (!json_is_object(patch))
        return jx_deep_copy(patch);
    json_t *out = json_object();
    const char *key;
    json_t *tv, *pv;
    json_object_foreach((json_t *)target, key, tv) /* none when not an object */
    {
        pv = json_object_get(patch, key);
        if (!pv)
            json_object_set_new(out, key, jx_deep_copy(tv));
        else if (!json_is_null(pv))
            json_object_set_new(out, key, api_merge_patch(tv, pv));
    }
    json_object_foreach((json_t *)patch, key, pv)
    {
        if (!json_is_null(pv) && !json_object_get(out, key))
            json_object_set_new(out, key, api_merge_patch(NULL, pv));
    }
    return out;
}
