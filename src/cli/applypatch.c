/*
 * applypatch: kubectl's client-side apply, the pure part. The file's
 * document is stored on the object in the annotation
 * kubectl.kubernetes.io/last-applied-configuration; the next apply sends a
 * JSON merge patch (RFC 7386) computed three-way, as kubectl does for
 * custom resources: what differs between the live object and the file is
 * set, and what the previous apply set but the file no longer has is
 * deleted (null). Fields the file never mentioned (status, server
 * defaults, other writers' fields) are left alone.
 */
#include <string.h>

#include "cli/cli-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

json_t *cli__apply_modified(const json_t *doc)
{
    json_t *copy = json_deep_copy(doc);
    json_t *ann = JX_OBJ(copy, "metadata", "annotations");
    json_object_del(ann, CLI_LAST_APPLIED);
    char *text = jx_dumps_sorted(copy);
    char *value = xasprintf("%s\n", text);
    json_object_set_new(ann, CLI_LAST_APPLIED, json_string(value));
    xfree(value);
    xfree(text);
    return copy;
}

static json_t *three_way(const json_t *original, const json_t *modified, const json_t *live)
{
    json_t *patch = json_object();
    const char *key;
    json_t *mv;
    json_object_foreach((json_t *)modified, key, mv) {
        json_t *lv = json_is_object(live) ? json_object_get(live, key) : NULL;
        json_t *ov = json_is_object(original) ? json_object_get(original, key) : NULL;
        if (json_is_object(mv) && json_is_object(lv)) {
            json_t *sub = three_way(ov, mv, lv);
            if (json_object_size(sub))
                json_object_set(patch, key, sub);
            json_decref(sub);
        } else if (!lv || !json_equal(mv, lv)) {
            json_object_set_new(patch, key, json_deep_copy(mv));
        }
    }
    json_t *ov;
    json_object_foreach((json_t *)(json_is_object(original) ? original : NULL), key, ov) {
        if (json_object_get(modified, key))
            continue;
        if (json_is_object(live) && json_object_get(live, key))
            json_object_set_new(patch, key, json_null());
    }
    return patch;
}

json_t *cli__apply_patch(const json_t *original, const json_t *modified, const json_t *live)
{
    return three_way(original, modified, live);
}
