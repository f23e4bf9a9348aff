/*
 * jsonx: small conveniences over jansson for walking Kubernetes-shaped
 * objects by key paths. Paths are key lists, not dotted strings, because
 * label keys contain dots and slashes:
 *
 *     const char *name = JX_STR(obj, "metadata", "name");
 *     JX_SET_NEW(obj, json_string("True"), "status", "phase");
 *
 * Getters return borrowed references (or NULL when any step is missing or
 * not an object); setters create intermediate objects as needed.
 */
#ifndef CUEUE_UTIL_JSONX_H
#define CUEUE_UTIL_JSONX_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define JX_KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Borrowed value at the path, or NULL. */
json_t *jx_get_(const json_t *root, const char *const *keys);
/* String at the path, or NULL when absent or not a string. Borrowed. */
const char *jx_str_(const json_t *root, const char *const *keys);
/* Boolean at the path, or def when absent or not a boolean. */
bool jx_bool_(const json_t *root, const char *const *keys, bool def);
/* The object at the path, created (with parents) if absent or not an
 * object. Borrowed. root must be an object. */
json_t *jx_obj_(json_t *root, const char *const *keys);
/* Set the last key of the path to v (reference stolen), creating parents. */
void jx_set_new_(json_t *root, json_t *v, const char *const *keys);
/* Remove the last key of the path if present. */
void jx_del_(json_t *root, const char *const *keys);

/* One step of a key path, as jx_get_ takes it: o's member key, NULL when
 * o is not an object, o itself for a NULL key (a NULL key ends jx_get_'s
 * path). Inline, so that the key's length folds to a constant for a
 * literal and a lookup is one call into jansson: the JX_GET, JX_STR,
 * JX_INT and JX_BOOL macros below chain it (they run on every object
 * read, thousands of times per reconcile round). */
static inline json_t *jx_step_(const json_t *o, const char *key)
{
    if (!key)
        return (json_t *)o;
    return json_is_object(o) ? json_object_getn(o, key, strlen(key)) : NULL;
}

/* v's string, or NULL when v is NULL or not a string (jx_str_ on the value
 * a path reached). Borrowed. Out of line: inlined, the compiler would see
 * the NULL of a missing path flow into callers' printf("%s") and refuse
 * them. */
const char *jx_str_of_(const json_t *v);
/* The integer (the boolean) a path reached, or def when it reached nothing
 * or something else. */
static inline int64_t jx_int_of_(const json_t *v, int64_t def)
{
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : def;
}
static inline bool jx_bool_of_(const json_t *v, bool def)
{
    return json_is_boolean(v) ? json_is_true(v) : def;
}

/* JX_PATH_(root, k1, ..., kn) = jx_step_(...jx_step_(root, k1)..., kn),
 * for 1 to 12 keys (more does not compile). */
#define JX_NARG_(...) JX_NARG_I_(__VA_ARGS__, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define JX_NARG_I_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, n, ...) n
#define JX_CAT_(a, b) JX_CAT_I_(a, b)
#define JX_CAT_I_(a, b) a##b
#define JX_PATH_(root, ...) JX_CAT_(JX_PATH_, JX_NARG_(__VA_ARGS__))(root, __VA_ARGS__)
#define JX_PATH_1(r, a) jx_step_((r), (a))
#define JX_PATH_2(r, a, b) jx_step_(JX_PATH_1(r, a), (b))
#define JX_PATH_3(r, a, b, c) jx_step_(JX_PATH_2(r, a, b), (c))
#define JX_PATH_4(r, a, b, c, d) jx_step_(JX_PATH_3(r, a, b, c), (d))
#define JX_PATH_5(r, a, b, c, d, e) jx_step_(JX_PATH_4(r, a, b, c, d), (e))
#define JX_PATH_6(r, a, b, c, d, e, f) jx_step_(JX_PATH_5(r, a, b, c, d, e), (f))
#define JX_PATH_7(r, a, b, c, d, e, f, g) jx_step_(JX_PATH_6(r, a, b, c, d, e, f), (g))
#define JX_PATH_8(r, a, b, c, d, e, f, g, h) jx_step_(JX_PATH_7(r, a, b, c, d, e, f, g), (h))
#define JX_PATH_9(r, a, b, c, d, e, f, g, h, i)                                              \
    jx_step_(JX_PATH_8(r, a, b, c, d, e, f, g, h), (i))
#define JX_PATH_10(r, a, b, c, d, e, f, g, h, i, j)                                          \
    jx_step_(JX_PATH_9(r, a, b, c, d, e, f, g, h, i), (j))
#define JX_PATH_11(r, a, b, c, d, e, f, g, h, i, j, k)                                       \
    jx_step_(JX_PATH_10(r, a, b, c, d, e, f, g, h, i, j), (k))
#define JX_PATH_12(r, a, b, c, d, e, f, g, h, i, j, k, l)                                    \
    jx_step_(JX_PATH_11(r, a, b, c, d, e, f, g, h, i, j, k), (l))

/* The getters by path, inline (JX_GET, JX_STR and JX_BOOL give what
 * jx_get_, jx_str_ and jx_bool_ give over JX_KEYS(...); JX_INT the integer
 * at the path, or def). */
#define JX_GET(root, ...) JX_PATH_((root), __VA_ARGS__)
#define JX_STR(root, ...) jx_str_of_(JX_PATH_((root), __VA_ARGS__))
#define JX_INT(root, def, ...) jx_int_of_(JX_PATH_((root), __VA_ARGS__), (def))
#define JX_BOOL(root, def, ...) jx_bool_of_(JX_PATH_((root), __VA_ARGS__), (def))
#define JX_OBJ(root, ...) jx_obj_((root), JX_KEYS(__VA_ARGS__))
#define JX_SET_NEW(root, v, ...) jx_set_new_((root), (v), JX_KEYS(__VA_ARGS__))
#define JX_DEL(root, ...) jx_del_((root), JX_KEYS(__VA_ARGS__))

/* A copy of a JSON tree whose objects and arrays are new and whose
 * scalars (strings, numbers, booleans, null) are shared with v: cueue never
 * modifies a scalar in place (it replaces it), so only containers need
 * copying. Unlike json_deep_copy it does not look for reference loops
 * (jansson formats the address of every container it copies to do so):
 * v must be a tree, as every decoded or stored document is. NULL for NULL.
 * New reference. */
json_t *jx_deep_copy(const json_t *v);

/* Visit the members of the object m in order with the jansson iterator
 * it (json_object_iter_key/_key_len/_value): the iterator walk alone, as
 * jansson's foreach macros look each key up again at every step. m NULL
 * or not an object visits nothing. */
#define JX_MEMBERS_FOREACH(m, it) \
    for (void *it = json_object_iter((json_t *)(m)); it; \
         it = json_object_iter_next((json_t *)(m), it))

/* Walk the members of the objects a and b side by side, iterators ia and
 * ib, while both have members left (equal sizes: they end together). */
#define JX_PAIRS_FOREACH(a, b, ia, ib)                                                    \
    for (void *ia = json_object_iter((json_t *)(a)), *ib = json_object_iter((json_t *)(b)); \
         ia && ib;                                                                        \
         ia = json_object_iter_next((json_t *)(a), ia), ib = json_object_iter_next((json_t *)(b), ib))

/* Whether the object iterators ia and ib are at members of the same key. */
static inline bool jx_iter_same_key(void *ia, void *ib)
{
    size_t len = json_object_iter_key_len(ia);
    return len == json_object_iter_key_len(ib) &&
           !memcmp(json_object_iter_key(ia), json_object_iter_key(ib), len);
}

/* The members of o named keys[0..n) into out[0..n) (NULL where absent, or
 * all NULL when o is not an object), found in one pass over o's members
 * that stops once all are found: for the handful of members of a
 * Kubernetes object, its metadata, its status or a condition, fewer steps
 * than one hash lookup per key. keys must be distinct. Borrowed from o. */
void jx_members(const json_t *o, const char *const *keys, size_t n, json_t **out);

/* A new object with the members of obj in obj's order, each value shared
 * (a new reference to it), except the member key (klen bytes), whose value
 * is val (taken), appended last when obj has no such member (obj NULL or
 * not an object: {key: val}). For a new version of a document that
 * replaces one member and shares the rest; stored values are never
 * changed in place. New reference. */
json_t *jx_shallow_with(const json_t *obj, const char *key, size_t klen, json_t *val);

/* Whether a and b are equal, walked in member order: shared values
 * (pointer-equal, as unchanged members of two versions of a document are)
 * are equal without a look inside, arrays element by element, scalars by
 * json_equal. Objects whose members come in another key order are equal
 * only when any_order (then json_equal decides, which ignores order);
 * without it the member order is part of what is compared (a document's
 * text). NULL equals only NULL. */
bool jx_equal_walk(const json_t *a, const json_t *b, bool any_order);

/* json_string(s) (a new JSON string, or NULL when s is NULL or not valid
 * UTF-8), faster for the usual ASCII text: jansson checks UTF-8 one
 * character at a time, this checks for bytes >= 0x80 first and lets
 * jansson check only the strings that have some. New reference. */
json_t *jx_string(const char *s);

/* json_object_set_new(obj, key, v) for a string-literal key: its length
 * is known at compile time and a literal is valid UTF-8, so jansson's
 * strlen and UTF-8 check of the key are skipped. */
#define JX_SET_LIT(obj, key, v) json_object_setn_new_nocheck((obj), "" key "", sizeof(key) - 1, (v))

/* String value or "" (never NULL) for printing. */
static inline const char *jx_or_empty(const char *s) { return s ? s : ""; }

/* Compact JSON text of v (keys in insertion order). Caller frees with xfree. */
char *jx_dumps(const json_t *v);
/* Compact JSON text with keys sorted, for byte-stable output. Caller frees. */
char *jx_dumps_sorted(const json_t *v);
/* Like jx_dumps_sorted with reals written with 15 significant digits
 * (0.9, not 0.90000000000000002): for values people read, such as the
 * metrics workers report. Caller frees (xfree). */
char *jx_dumps_readable(const json_t *v);
/* True when a and b are equal JSON values (jansson's json_equal, NULL-safe). */
bool jx_equal(const json_t *a, const json_t *b);

#endif
