/*
 * gformat: gcloud's --format="get(KEY,...)" and "value(KEY,...)" projections,
 * so the seed's `... describe dws-pool --format="get(config.flexStart)"`
 * prints exactly `True`. Keys are dotted paths with optional [N] indexes;
 * values print the way gcloud (Python) prints them: True/False, ints,
 * floats, strings raw, None and missing keys as empty, lists joined by ';'
 * and dicts as k=v;k2=v2. Several keys are tab-separated on one line.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "util/xalloc.h"

static const json_t *lookup(const json_t *obj, const char *key)
{
    const json_t *v = obj;
    const char *p = key;
    while (*p && v) {
        size_t n = strcspn(p, ".[");
        if (n) {
            char *name = xstrndup(p, n);
            v = json_is_object(v) ? json_object_get(v, name) : NULL;
            xfree(name);
            p += n;
        }
        if (*p == '[') {
            char *end;
            long idx = strtol(p + 1, &end, 10);
            if (*end != ']')
                return NULL;
            if (json_is_array(v)) {
                long size = (long)json_array_size(v);
                if (idx < 0)
                    idx += size;
                v = idx >= 0 && idx < size ? json_array_get(v, (size_t)idx) : NULL;
            } else {
                v = NULL;
            }
            p = end + 1;
        }
        if (*p == '.')
            p++;
    }
    return v;
}

static void print_py(struct sbuf *sb, const json_t *v)
{
    size_t i;
    const char *k;
    json_t *item;
    switch (json_typeof(v)) {
    case JSON_TRUE:
        sbuf_adds(sb, "True");
        break;
    case JSON_FALSE:
        sbuf_adds(sb, "False");
        break;
    case JSON_INTEGER:
        sbuf_addf(sb, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        break;
    case JSON_REAL:
        sbuf_addf(sb, "%.17g", json_real_value(v));
        break;
    case JSON_STRING:
        sbuf_adds(sb, json_string_value(v));
        break;
    case JSON_ARRAY:
        json_array_foreach(v, i, item) {
            if (i)
                sbuf_addc(sb, ';');
            print_py(sb, item);
        }
        break;
    case JSON_OBJECT:
        i = 0;
        json_object_foreach((json_t *)v, k, item) {
            if (i++)
                sbuf_addc(sb, ';');
            sbuf_addf(sb, "%s=", k);
            print_py(sb, item);
        }
        break;
    case JSON_NULL:
        break;
    }
}

int cli__gformat(const char *format, const json_t *obj, struct sbuf *sb, char *err,
                 size_t errlen)
{
    const char *open = strchr(format, '(');
    size_t n = strlen(format);
    size_t head = open ? (size_t)(open - format) : n;
    if (!open || format[n - 1] != ')' ||
        !((head == 3 && !strncmp(format, "get", 3)) ||
          (head == 5 && !strncmp(format, "value", 5)))) {
        snprintf(err, errlen,
                 "unsupported --format \"%s\": use yaml, json, get(KEY,...) or value(KEY,...)",
                 format);
        return -1;
    }
    char *keys = xstrndup(open + 1, n - head - 2);
    char *save = NULL;
    int col = 0;
    for (char *tok = strtok_r(keys, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*tok))
            tok++;
        char *e = tok + strlen(tok);
        while (e > tok && isspace((unsigned char)e[-1]))
            *--e = '\0';
        if (col++)
            sbuf_addc(sb, '\t');
        const json_t *v = lookup(obj, tok);
        if (v)
            print_py(sb, v);
    }
    sbuf_addc(sb, '\n');
    xfree(keys);
    return 0;
}
