/* api-int: diagnostics helpers shared inside the api module (see api-int.h). */
#include "api/api-int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/sbuf.h"
#include "util/xalloc.h"

static void add_v(struct diag *d, enum diag_type t, const char *field, const json_t *v,
                  const char *fmt, va_list ap)
{
    struct sbuf sb;
    sbuf_init(&sb, 1 << 20);
    if (fmt)
        sbuf_vaddf(&sb, fmt, ap);
    char *msg = sbuf_take(&sb);
    sbuf_release(&sb);
    diag_addj(d, t, field, v, "%s", msg);
    xfree(msg);
}

void api__diag_str(struct diag *d, enum diag_type t, const char *field, const char *value,
                   const char *fmt, ...)
{
    json_t *v = json_string(value ? value : "");
    if (!v) /* not UTF-8: render it as an empty string rather than fail */
        v = json_string("");
    va_list ap;
    va_start(ap, fmt);
    add_v(d, t, field, v, fmt, ap);
    va_end(ap);
    json_decref(v);
}

void api__diag_int(struct diag *d, enum diag_type t, const char *field, int64_t value,
                   const char *fmt, ...)
{
    json_t *v = json_integer(value);
    va_list ap;
    va_start(ap, fmt);
    add_v(d, t, field, v, fmt, ap);
    va_end(ap);
    json_decref(v);
}

void api__diag_not_supported(struct diag *d, const char *field, const char *value,
                             const char *const *supported)
{
    struct sbuf sb;
    sbuf_init(&sb, 1 << 16);
    sbuf_adds(&sb, "supported values: ");
    for (size_t i = 0; supported && supported[i]; i++)
        sbuf_addf(&sb, "%s\"%s\"", i ? ", " : "", supported[i]);
    char *msg = sbuf_take(&sb);
    sbuf_release(&sb);
    api__diag_str(d, DIAG_NOT_SUPPORTED, field, value, "%s", msg);
    xfree(msg);
}

char *api__path(const char *fmt, ...)
{
    struct sbuf sb;
    sbuf_init(&sb, 1 << 16);
    va_list ap;
    va_start(ap, fmt);
    sbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    char *s = sbuf_take(&sb);
    sbuf_release(&sb);
    return s;
}

const char *api__json_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER:
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    case JSON_NULL: return "null";
    }
    return "value";
}

void api__number_text(const json_t *v, char *buf, size_t n)
{
    if (json_is_integer(v)) {
        snprintf(buf, n, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return;
    }
    double d = json_real_value(v);
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            return;
    }
}

bool api__str_in(const char *s, const char *const *list)
{
    for (size_t i = 0; s && list && list[i]; i++)
        if (!strcmp(s, list[i]))
            return true;
    return false;
}
