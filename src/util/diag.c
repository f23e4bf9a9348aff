/* diag: Kubernetes-style field error collection (see diag.h). */
#include "util/diag.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/sbuf.h"
#include "util/xalloc.h"

void diag_init(struct diag *d)
{
    d->items = NULL;
    d->n = d->cap = 0;
    d->dropped = 0;
    d->dropped_decode = false;
}

void diag_release(struct diag *d)
{
    for (size_t i = 0; i < d->n; i++) {
        xfree(d->items[i].field);
        xfree(d->items[i].value);
        xfree(d->items[i].detail);
    }
    XFREE(d->items);
    d->n = d->cap = 0;
    d->dropped = 0;
    d->dropped_decode = false;
}

static bool is_decode(enum diag_type t)
{
    return t == DIAG_UNKNOWN_FIELD || t == DIAG_TYPE_INVALID || t == DIAG_SYNTAX;
}

/* Count a cause past the cap instead of keeping it. */
static void drop(struct diag *d, enum diag_type type)
{
    d->dropped++;
    if (is_decode(type))
        d->dropped_decode = true;
}

/* Whether d keeps no more causes; if so the cause of this type is counted
 * (dropped), before its value is rendered or copied for nothing. */
static bool full(struct diag *d, enum diag_type type)
{
    if (d->n < DIAG_MAX_CAUSES)
        return false;
    drop(d, type);
    return true;
}

/* Keep a cause (d is not full: the callers checked). */
static void vadd(struct diag *d, enum diag_type type, const char *field,
                 char *value_owned, const char *fmt, va_list ap)
{
    XGROW(d->items, d->cap, d->n + 1);
    struct diag_cause *c = &d->items[d->n++];
    c->type = type;
    c->field = xstrdup(field ? field : "");
    c->value = value_owned;
    if (fmt) {
        struct sbuf sb;
        sbuf_init(&sb, 1 << 20);
        sbuf_vaddf(&sb, fmt, ap);
        c->detail = sbuf_take(&sb);
        sbuf_release(&sb);
    } else {
        c->detail = xstrdup("");
    }
}

void diag_add(struct diag *d, enum diag_type type, const char *field,
              const char *value, const char *fmt, ...)
{
    if (full(d, type))
        return;
    va_list ap;
    va_start(ap, fmt);
    vadd(d, type, field, xstrdup(value), fmt, ap);
    va_end(ap);
}

static char *render_json(const json_t *v)
{
    if (!v)
        return xstrdup("null");
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    if (!s)
        return xstrdup("?");
    char *out = xstrdup(s);
    free(s); /* jansson allocates with malloc */
    return out;
}

void diag_addj(struct diag *d, enum diag_type type, const char *field,
               const json_t *value, const char *fmt, ...)
{
    if (full(d, type))
        return;
    va_list ap;
    va_start(ap, fmt);
    vadd(d, type, field, render_json(value), fmt, ap);
    va_end(ap);
}

void diag_merge(struct diag *dst, struct diag *src)
{
    for (size_t i = 0; i < src->n; i++) {
        struct diag_cause *c = &src->items[i];
        if (full(dst, c->type)) {
            xfree(c->field);
            xfree(c->value);
            xfree(c->detail);
            continue;
        }
        XGROW(dst->items, dst->cap, dst->n + 1);
        dst->items[dst->n++] = *c;
    }
    dst->dropped += src->dropped;
    dst->dropped_decode = dst->dropped_decode || src->dropped_decode;
    XFREE(src->items);
    src->n = src->cap = 0;
    src->dropped = 0;
    src->dropped_decode = false;
}

size_t diag_count(const struct diag *d) { return d->n + d->dropped; }

bool diag_has_errors(const struct diag *d) { return diag_count(d) > 0; }

bool diag_has_decode_errors(const struct diag *d)
{
    if (d->dropped_decode)
        return true;
    for (size_t i = 0; i < d->n; i++)
        if (is_decode(d->items[i].type))
            return true;
    return false;
}

const char *diag_type_reason(enum diag_type type)
{
    switch (type) {
    case DIAG_INVALID: return "FieldValueInvalid";
    case DIAG_REQUIRED: return "FieldValueRequired";
    case DIAG_NOT_SUPPORTED: return "FieldValueNotSupported";
    case DIAG_DUPLICATE: return "FieldValueDuplicate";
    case DIAG_FORBIDDEN: return "FieldValueForbidden";
    case DIAG_TOO_LONG: return "FieldValueTooLong";
    case DIAG_TOO_MANY: return "FieldValueTooMany";
    case DIAG_NOT_FOUND: return "FieldValueNotFound";
    case DIAG_UNKNOWN_FIELD: return "FieldValueUnknown";
    case DIAG_TYPE_INVALID: return "FieldValueTypeInvalid";
    case DIAG_SYNTAX: return "FieldValueInvalid";
    }
    return "FieldValueInvalid";
}

static const char *type_label(enum diag_type t)
{
    switch (t) {
    case DIAG_INVALID: return "Invalid value";
    case DIAG_REQUIRED: return "Required value";
    case DIAG_NOT_SUPPORTED: return "Unsupported value";
    case DIAG_DUPLICATE: return "Duplicate value";
    case DIAG_FORBIDDEN: return "Forbidden";
    case DIAG_TOO_LONG: return "Too long";
    case DIAG_TOO_MANY: return "Too many";
    case DIAG_NOT_FOUND: return "Not found";
    case DIAG_UNKNOWN_FIELD: return "unknown field";
    case DIAG_TYPE_INVALID: return "Invalid type";
    case DIAG_SYNTAX: return "syntax error";
    }
    return "Invalid value";
}

char *diag_cause_message(const struct diag_cause *c)
{
    struct sbuf sb;
    sbuf_init(&sb, 1 << 20);
    if (c->type == DIAG_UNKNOWN_FIELD) {
        sbuf_addf(&sb, "unknown field \"%s\"", c->field);
    } else if (c->type == DIAG_SYNTAX) {
        sbuf_adds(&sb, c->detail);
    } else {
        sbuf_adds(&sb, type_label(c->type));
        if (c->value)
            sbuf_addf(&sb, ": %s", c->value);
        if (c->detail && c->detail[0])
            sbuf_addf(&sb, ": %s", c->detail);
    }
    char *s = sbuf_take(&sb);
    sbuf_release(&sb);
    return s;
}

char *diag_cause_string(const struct diag_cause *c)
{
    char *m = diag_cause_message(c);
    if (!c->field[0] || c->type == DIAG_UNKNOWN_FIELD)
        return m;
    char *s = xasprintf("%s: %s", c->field, m);
    xfree(m);
    return s;
}

char *diag_summary(const struct diag *d)
{
    struct sbuf sb;
    sbuf_init(&sb, 4 << 20);
    if (diag_has_decode_errors(d)) {
        /* Kubernetes reports decode failures alone: strict decoding error */
        bool first = true;
        bool strict = false;
        for (size_t i = 0; i < d->n; i++)
            if (d->items[i].type == DIAG_UNKNOWN_FIELD)
                strict = true;
        if (strict)
            sbuf_adds(&sb, "strict decoding error: ");
        for (size_t i = 0; i < d->n; i++) {
            if (!is_decode(d->items[i].type))
                continue;
            char *m = diag_cause_string(&d->items[i]);
            sbuf_addf(&sb, "%s%s", first ? "" : ", ", m);
            xfree(m);
            first = false;
        }
    } else {
        if (d->n > 1)
            sbuf_addc(&sb, '[');
        for (size_t i = 0; i < d->n; i++) {
            char *m = diag_cause_string(&d->items[i]);
            sbuf_addf(&sb, "%s%s", i ? ", " : "", m);
            xfree(m);
        }
        if (d->n > 1)
            sbuf_addc(&sb, ']');
    }
    if (d->dropped)
        sbuf_addf(&sb, ", and %zu more error%s", d->dropped, d->dropped == 1 ? "" : "s");
    char *s = sbuf_take(&sb);
    sbuf_release(&sb);
    return s;
}

json_t *diag_causes_json(const struct diag *d)
{
    json_t *arr = json_array();
    for (size_t i = 0; i < d->n; i++) {
        const struct diag_cause *c = &d->items[i];
        char *m = diag_cause_message(c);
        json_array_append_new(arr, json_pack("{s:s, s:s, s:s}",
            "reason", diag_type_reason(c->type), "message", m, "field", c->field));
        xfree(m);
    }
    if (d->dropped) {
        char m[96];
        snprintf(m, sizeof(m), "%zu more error%s not shown", d->dropped,
                 d->dropped == 1 ? "" : "s");
        json_array_append_new(arr, json_pack("{s:s, s:s, s:s}", "reason", "TooManyErrors",
                                             "message", m, "field", ""));
    }
    return arr;
}
