/* jsonx: path helpers over jansson (see jsonx.h). */
#include "util/jsonx.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

json_t *jx_get_(const json_t *root, const char *const *keys)
{
    const json_t *cur = root;
    for (; *keys; keys++) {
        if (!json_is_object(cur))
            return NULL;
        cur = json_object_get(cur, *keys);
    }
    return (json_t *)cur;
}

const char *jx_str_(const json_t *root, const char *const *keys)
{
    return jx_str_of_(jx_get_(root, keys));
}

const char *jx_str_of_(const json_t *v)
{
    return json_is_string(v) ? json_string_value(v) : NULL;
}

bool jx_bool_(const json_t *root, const char *const *keys, bool def)
{
    json_t *v = jx_get_(root, keys);
    return json_is_boolean(v) ? json_is_true(v) : def;
}

json_t *jx_obj_(json_t *root, const char *const *keys)
{
    json_t *cur = root;
    for (; *keys; keys++) {
        json_t *next = json_object_get(cur, *keys);
        if (!json_is_object(next)) {
            next = json_object();
            json_object_set_new(cur, *keys, next);
        }
        cur = next;
    }
    return cur;
}

void jx_set_new_(json_t *root, json_t *v, const char *const *keys)
{
    const char *const *last = keys;
    while (last[1])
        last++;
    json_t *cur = root;
    for (const char *const *k = keys; k != last; k++) {
        json_t *next = json_object_get(cur, *k);
        if (!json_is_object(next)) {
            next = json_object();
            json_object_set_new(cur, *k, next);
        }
        cur = next;
    }
    json_object_set_new(cur, *last, v);
}

void jx_del_(json_t *root, const char *const *keys)
{
    const char *const *last = keys;
    while (last[1])
        last++;
    json_t *cur = root;
    for (const char *const *k = keys; k != last; k++) {
        cur = json_object_get(cur, *k);
        if (!json_is_object(cur))
            return;
    }
    json_object_del(cur, *last);
}

static char *dup_and_free(char *s)
{
    if (!s)
        return xstrdup("null");
    char *out = xstrdup(s);
    free(s); /* jansson's allocation */
    return out;
}

char *jx_dumps(const json_t *v)
{
    return dup_and_free(json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT));
}

char *jx_dumps_sorted(const json_t *v)
{
    return dup_and_free(json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS));
}

char *jx_dumps_readable(const json_t *v)
{
    return dup_and_free(json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_SORT_KEYS |
                                          JSON_REAL_PRECISION(15)));
}

json_t *jx_string(const char *s)
{
    if (!s)
        return NULL;
    /* any byte with the high bit set, eight bytes at a time */
    size_t n = strlen(s), i = 0;
    uint64_t acc = 0, w;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, s + i, 8);
        acc |= w;
    }
    for (; i < n; i++)
        acc |= (unsigned char)s[i];
    return acc & 0x8080808080808080ULL ? json_string(s) : json_stringn_nocheck(s, n);
}

bool jx_equal(const json_t *a, const json_t *b)
{
    if (!a || !b)
        return a == b;
    return json_equal(a, b);
}

void jx_members(const json_t *o, const char *const *keys, size_t n, json_t **out)
{
    memset(out, 0, n * sizeof(*out));
    size_t left = n;
    for (void *it = json_object_iter((json_t *)o); it && left;
         it = json_object_iter_next((json_t *)o, it)) {
        const char *key = json_object_iter_key(it);
        for (size_t i = 0; i < n; i++) {
            if (!out[i] && key[0] == keys[i][0] && !strcmp(key, keys[i])) {
                out[i] = json_object_iter_value(it);
                left--;
                break;
            }
        }
    }
}

json_t *jx_shallow_with(const json_t *obj, const char *key, size_t klen, json_t *val)
{
    json_t *out = json_object();
    bool had = false;
    JX_MEMBERS_FOREACH(obj, it) {
        size_t kl = json_object_iter_key_len(it);
        const char *k = json_object_iter_key(it);
        json_t *v;
        if (kl == klen && !memcmp(k, key, klen)) {
            v = val;
            had = true;
        } else {
            v = json_incref(json_object_iter_value(it));
        }
        json_object_setn_new_nocheck(out, k, kl, v);
    }
    if (!had)
        json_object_setn_new_nocheck(out, key, klen, val);
    return out;
}

json_t *jx_deep_copy(const json_t *v)
{
    if (json_is_object(v)) {
        json_t *out = json_object();
        const char *key;
        size_t klen;
        json_t *x;
        json_object_keylen_foreach((json_t *)v, key, klen, x) {
            json_object_setn_new_nocheck(out, key, klen, jx_deep_copy(x));
        }
        return out;
    }
    if (json_is_array(v)) {
        size_t n = json_array_size(v);
        json_t *out = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(out, jx_deep_copy(json_array_get(v, i)));
        return out;
    }
    return json_incref((json_t *)v);
}

bool jx_equal_walk(const json_t *a, const json_t *b, bool any_order)
{
    if (a == b)
        return true;
    if (!a || !b || json_typeof(a) != json_typeof(b))
        return false;
    if (json_is_array(a)) {
        size_t n = json_array_size(a);
        if (n != json_array_size(b))
            return false;
        for (size_t i = 0; i < n; i++)
            if (!jx_equal_walk(json_array_get(a, i), json_array_get(b, i), any_order))
                return false;
        return true;
    }
    if (!json_is_object(a))
        return json_equal(a, b);
    if (json_object_size(a) != json_object_size(b))
        return false;
    JX_PAIRS_FOREACH(a, b, ia, ib) {
        if (!jx_iter_same_key(ia, ib))
            return any_order && json_equal(a, b); /* another key order */
        if (!jx_equal_walk(json_object_iter_value(ia), json_object_iter_value(ib), any_order))
            return false;
    }
    return true;
}
