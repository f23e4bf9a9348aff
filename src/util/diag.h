/*
 * diag: validation diagnostics, collected whole (never stop at the first) and
 * reported the way the Kubernetes API reports field errors: each cause has a
 * type, a field path ("spec.resourceGroups[0].flavors[1].name") and a
 * message ("Invalid value: \"-1\": must be greater than or equal to 0").
 *
 * Decode errors (unknown fields, wrong JSON types, YAML syntax) are kept
 * apart from semantic ones because the API answers them with 400 BadRequest
 * ("strict decoding error: ...") while semantic ones get 422 Invalid.
 */
#ifndef CUEUE_UTIL_DIAG_H
#define CUEUE_UTIL_DIAG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum diag_type {
    DIAG_INVALID,       /* FieldValueInvalid: "Invalid value: <v>: <detail>" */
    DIAG_REQUIRED,      /* FieldValueRequired: "Required value[: <detail>]" */
    DIAG_NOT_SUPPORTED, /* FieldValueNotSupported: "Unsupported value: <v>: <detail>" */
    DIAG_DUPLICATE,     /* FieldValueDuplicate: "Duplicate value: <v>" */
    DIAG_FORBIDDEN,     /* FieldValueForbidden: "Forbidden: <detail>" */
    DIAG_TOO_LONG,      /* FieldValueTooLong: "Too long: <detail>" */
    DIAG_TOO_MANY,      /* FieldValueTooMany: "Too many: <v>: <detail>" */
    DIAG_NOT_FOUND,     /* FieldValueNotFound: "Not found: <v>" */
    /* decode errors (400 BadRequest) */
    DIAG_UNKNOWN_FIELD, /* strict decoding: unknown field "<field>" */
    DIAG_TYPE_INVALID,  /* wrong JSON type: "Invalid type: <detail>" */
    DIAG_SYNTAX,        /* YAML/JSON syntax error: "<detail>" */
};

struct diag_cause {
    enum diag_type type;
    char *field;  /* owned; "" when the error concerns the whole document */
    char *value;  /* owned rendered value ("\"abc\"", "-1"), or NULL */
    char *detail; /* owned; may be "" */
};

/* At most this many causes are kept; later ones are only counted
 * (dropped), so a body with 700,000 bad items answers with a bounded
 * Status: the first DIAG_MAX_CAUSES causes and "and N more errors". */
#define DIAG_MAX_CAUSES 100

struct diag {
    struct diag_cause *items; /* owned; n <= DIAG_MAX_CAUSES */
    size_t n, cap;
    size_t dropped;      /* causes recorded past DIAG_MAX_CAUSES (not kept) */
    bool dropped_decode; /* one of them was a decode error */
};

/* Initialise an empty diagnostics list (no allocation). */
void diag_init(struct diag *d);
/* Free every cause; d may be reused after diag_init. */
void diag_release(struct diag *d);
/* Record a cause. field and value are copied (value may be NULL); the
 * detail is printf-formatted (fmt may be NULL for none). */
void diag_add(struct diag *d, enum diag_type type, const char *field,
              const char *value, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Like diag_add with the value rendered from JSON (strings quoted). */
void diag_addj(struct diag *d, enum diag_type type, const char *field,
               const json_t *value, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Move all causes of src to the end of dst; src is left empty. */
void diag_merge(struct diag *dst, struct diag *src);
/* How many causes were recorded, kept or dropped (compare counts taken
 * before and after a check to see whether it found anything: n alone
 * stops growing at the cap). */
size_t diag_count(const struct diag *d);
/* True when at least one cause was recorded (kept or dropped). */
bool diag_has_errors(const struct diag *d);
/* True when some cause is a decode error (unknown field, type, syntax). */
bool diag_has_decode_errors(const struct diag *d);
/* Kubernetes StatusCause.reason for a type ("FieldValueInvalid", ...). */
const char *diag_type_reason(enum diag_type type);
/* The cause's message without the field ("Invalid value: \"x\": why").
 * Caller frees the result. */
char *diag_cause_message(const struct diag_cause *c);
/* "<field>: <message>" (or the message alone for an empty field).
 * Caller frees. */
char *diag_cause_string(const struct diag_cause *c);
/* All causes joined the way apimachinery aggregates them: "a" for one,
 * "[a, b]" for several, then ", and N more errors" when some were
 * dropped. Decode errors render as
 * "strict decoding error: unknown field \"spec.x\", ...". Caller frees. */
char *diag_summary(const struct diag *d);
/* Status.details.causes array: [{"reason","message","field"}], plus a
 * last {"reason": "TooManyErrors", "message": "N more errors not shown"}
 * when some were dropped. New ref. */
json_t *diag_causes_json(const struct diag *d);

#endif
