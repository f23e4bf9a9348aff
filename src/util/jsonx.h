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

#define JX_KEYS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* Borrowed value at the path, or NULL. */
json_t *jx_get_(const json_t *root, const char *const *keys);
/* String at the path, or NULL when absent or not a string. Borrowed. */
const char *jx_str_(const json_t *root, const char *const *keys);
/* Integer at the path, or def when absent or not an integer. */
int64_t jx_int_(const json_t *root, const char *const *keys, int64_t def);
/* Boolean at the path, or def when absent or not a boolean. */
bool jx_bool_(const json_t *root, const char *const *keys, bool def);
/* The object at the path, created (with parents) if absent or not an
 * object. Borrowed. root must be an object. */
json_t *jx_obj_(json_t *root, const char *const *keys);
/* Set the last key of the path to v (reference stolen), creating parents. */
void jx_set_new_(json_t *root, json_t *v, const char *const *keys);
/* Remove the last key of the path if present. */
void jx_del_(json_t *root, const char *const *keys);

#define JX_GET(root, ...) jx_get_((root), JX_KEYS(__VA_ARGS__))
#define JX_STR(root, ...) jx_str_((root), JX_KEYS(__VA_ARGS__))
#define JX_INT(root, def, ...) jx_int_((root), JX_KEYS(__VA_ARGS__), (def))
#define JX_BOOL(root, def, ...) jx_bool_((root), JX_KEYS(__VA_ARGS__), (def))
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
