/*
 * api-int: helpers shared by the api module's own files (the libuv "__"
 * convention: not for other modules). Diagnostics with rendered values,
 * and small JSON accessors used by the validators.
 */
#ifndef CUEUE_API_API_INT_H
#define CUEUE_API_API_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/diag.h"

/* diag_add with the value rendered as a JSON string ("\"abc\""). */
void api__diag_str(struct diag *d, enum diag_type t, const char *field, const char *value,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* diag_add with an integer value. */
void api__diag_int(struct diag *d, enum diag_type t, const char *field, int64_t value,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* "Unsupported value" with Kubernetes' "supported values: \"a\", \"b\""
 * detail built from a NULL-terminated list. */
void api__diag_not_supported(struct diag *d, const char *field, const char *value,
                             const char *const *supported);

/* printf into a new string (xasprintf), for building field paths. */
char *api__path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "object", "array", "string", "number", "boolean" or "null". */
const char *api__json_type_name(const json_t *v);
/* A JSON number as text: integers exactly, reals as the shortest decimal
 * that reads back the same double ("0.1", "1000"). */
void api__number_text(const json_t *v, char *buf, size_t n);

/* A quantity times 10^exp10 (e.g. 9 for nano-units), rounded away from
 * zero. 0 or CU_EINVAL (syntax, or too large for int64). */
int api__quantity_parse_scaled(const char *text, int exp10, int64_t *out);
/* The fast path of the quantity parsers: true with *out set for plain
 * [+-]?digits[.digits] (at most 18 digits) with no or one exact SI/binary
 * suffix whose value fits int64; false (nothing set) for anything else,
 * which the general parser then handles. Same value as the general parser. */
bool api__quantity_quick(const char *text, int exp10, int64_t *out);
/* The general parser alone (no fast path), as api__quantity_parse_scaled;
 * for tests proving the fast path agrees with it. */
int api__quantity_parse_general(const char *text, int exp10, int64_t *out);

/* True when s is one of the NULL-terminated list. */
bool api__str_in(const char *s, const char *const *list);

#endif
