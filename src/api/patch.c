/* patch: JSON merge patch (RFC 7386), see api/patch.h. */
#include "api/patch.h"

#include "util/jsonx.h"

json_t *api_merge_patch(const json_t *target, const json_t *patch)
{
    if (!json_is_object(patch))
        return jx_deep_copy(patch);
    json_t *out = json_is_object(target) ? jx_deep_copy(target) : json_object();
    const char *key;
    json_t *pv;
    json_object_foreach((json_t *)patch, key, pv)
    {
        if (json_is_null(pv)) {
            json_object_del(out, key);
            continue;
        }
        json_object_set_new(out, key, api_merge_patch(json_object_get(out, key), pv));
    }
    return out;
}
