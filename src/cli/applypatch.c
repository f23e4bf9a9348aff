/*
 * applypatch: kubectl's client-side apply, the pure part. The file's
 * document is stored on the object in the annotation
 * kubectl.kubernetes.io/last-applied-configuration; the next apply sends a
 * JSON merge patch (RFC 7386) computed three-way, as kubectl does for
 * custom resources: what differs between the live object and the file is
 * set, and what the previous apply set but the file no longer has is
 * deleted (null). Fields the file never mentioned (status, server
 * defaults, other writers' fields) are left alone. Unlike kubectl, a value
 * the server only canonicalised (10 stored as "10", defaults added inside
 * list items) does not count as a difference, so re-applying an unchanged
 * file prints "unchanged".
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

/* True when a number and a string spell the same value (10 and "10"): the
 * server may store quantities in canonical string form. */
static bool same_number_text(const json_t *num, const json_t *str)
{
    if (!json_is_number(num) || !json_is_string(str))
        return false;
    char buf[64];
    if (json_is_integer(num))
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(num));
    else
        snprintf(buf, sizeof(buf), "%.17g", json_real_value(num));
    return !strcmp(buf, json_string_value(str));
}

/* True when live already holds everything in want: equal scalars (numbers
 * and their string spelling alike), lists of the same length whose items
 * hold want's items, objects holding every key of want (extra keys are
 * the server's defaults; sending want again would change nothing). */
static bool holds(const json_t *live, const json_t *want)
{
    if (json_is_object(want)) {
        const char *key;
        json_t *v;
        if (!json_is_object(live))
            return false;
        json_object_foreach((json_t *)want, key, v) {
            json_t *lv = json_object_get(live, key);
            if (!lv || !holds(lv, v))
                return false;
        }
        return true;
    }
    if (json_is_array(want)) {
        if (!json_is_array(live) || json_array_size(live) != json_array_size(want))
            return false;
        for (size_t i = 0; i < json_array_size(want); i++)
            if (!holds(json_array_get(live, i), json_array_get(want, i)))
                return false;
        return true;
    }
    return json_equal(live, want) || same_number_text(want, live) ||
           same_number_text(live, want);
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
        } else if (!lv || !holds(lv, mv)) {
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
