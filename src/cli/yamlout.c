/*
 * yamlout: JSON values printed as YAML through libyaml's emitter, the way
 * `kubectl get -o yaml` prints them (sigs.k8s.io/yaml over go-yaml):
 * mapping keys sorted, block style, sequences inside mappings not indented,
 * empty maps/lists as {} and [], strings that would read back as a number,
 * boolean, null or timestamp double-quoted ("2", "true",
 * "2026-01-01T00:00:00Z"), multi-line strings as literal blocks.
 * The emitter does the escaping and layout; this file only picks styles.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "cli/cli-int.h"
#include "util/err.h"
#include "util/xalloc.h"

static int write_cb(void *data, unsigned char *buf, size_t size)
{
    return sbuf_add(data, buf, size) == 0 ? 1 : 0;
}

static const char *const yaml11_words[] = {
    "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
    "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF",
    ".inf", ".Inf", ".INF", "-.inf", "-.Inf", "-.INF", "+.inf", ".nan", ".NaN", ".NAN", NULL,
};

/* True when a plain scalar s would be read back as something other than a
 * string by a YAML 1.1 reader. Errs on the side of quoting. */
static bool needs_quotes(const char *s)
{
    if (!*s)
        return true;
    for (const char *const *w = yaml11_words; *w; w++)
        if (!strcmp(s, *w))
            return true;
    /* numbers: anything strtod/strtoll consume whole (ints, floats, hex,
     * exponents, "inf"), also with '_' separators YAML 1.1 allows */
    char *end;
    const char *p = s;
    if (*p == '+' || *p == '-' || *p == '.' || isdigit((unsigned char)*p)) {
        (void)strtod(s, &end);
        if (*end == '\0')
            return true;
        (void)strtoll(s, &end, 0);
        if (*end == '\0')
            return true;
        /* 1_000, 1:30 (base 60), 0b101, 0o17 */
        if (strspn(s, "+-0123456789_.:") == strlen(s) && strpbrk(s, "0123456789"))
            return true;
        if (s[0] == '0' && (s[1] == 'b' || s[1] == 'o') && s[2] &&
            strspn(s + 2, "01234567_") == strlen(s + 2))
            return true;
    }
    /* timestamps: YYYY-MM-DD... */
    if (strlen(s) >= 10 && isdigit((unsigned char)s[0]) && isdigit((unsigned char)s[3]) &&
        s[4] == '-' && isdigit((unsigned char)s[5]) && s[7] == '-')
        return true;
    return false;
}

static int emit_scalar(yaml_emitter_t *em, const char *s, yaml_scalar_style_t style)
{
    yaml_event_t ev;
    if (!yaml_scalar_event_initialize(&ev, NULL, (yaml_char_t *)YAML_STR_TAG,
                                      (yaml_char_t *)s, (int)strlen(s), 1, 1, style))
        return -1;
    return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

static int emit_string(yaml_emitter_t *em, const char *s)
{
    yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;
    if (strchr(s, '\n'))
        style = YAML_LITERAL_SCALAR_STYLE;
    else if (needs_quotes(s))
        style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
    return emit_scalar(em, s, style);
}

static void format_real(double d, char *buf, size_t len)
{
    /* shortest text that reads back as the same double */
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, d);
        if (strtod(buf, NULL) == d)
            return;
    }
}

static int emit_value(yaml_emitter_t *em, const json_t *v);

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int emit_object(yaml_emitter_t *em, const json_t *v)
{
    yaml_event_t ev;
    size_t n = json_object_size(v), i = 0;
    const char **keys = xcalloc(n ? n : 1, sizeof(*keys));
    const char *key;
    json_t *val;
    int rc = 0;
    json_object_foreach((json_t *)v, key, val)
        keys[i++] = key;
    qsort(keys, n, sizeof(*keys), cmp_str);
    yaml_mapping_start_event_initialize(&ev, NULL, (yaml_char_t *)YAML_MAP_TAG, 1,
                                        YAML_BLOCK_MAPPING_STYLE);
    if (!yaml_emitter_emit(em, &ev))
        rc = -1;
    for (i = 0; rc == 0 && i < n; i++) {
        if (emit_string(em, keys[i]) != 0 ||
            emit_value(em, json_object_get(v, keys[i])) != 0)
            rc = -1;
    }
    xfree(keys);
    if (rc == 0) {
        yaml_mapping_end_event_initialize(&ev);
        rc = yaml_emitter_emit(em, &ev) ? 0 : -1;
    }
    return rc;
}

static int emit_array(yaml_emitter_t *em, const json_t *v)
{
    yaml_event_t ev;
    size_t i;
    json_t *item;
    yaml_sequence_start_event_initialize(&ev, NULL, (yaml_char_t *)YAML_SEQ_TAG, 1,
                                         YAML_BLOCK_SEQUENCE_STYLE);
    if (!yaml_emitter_emit(em, &ev))
        return -1;
    json_array_foreach(v, i, item) {
        if (emit_value(em, item) != 0)
            return -1;
    }
    yaml_sequence_end_event_initialize(&ev);
    return yaml_emitter_emit(em, &ev) ? 0 : -1;
}

static int emit_value(yaml_emitter_t *em, const json_t *v)
{
    char buf[64];
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return emit_object(em, v);
    case JSON_ARRAY:
        return emit_array(em, v);
    case JSON_STRING:
        return emit_string(em, json_string_value(v));
    case JSON_INTEGER:
        snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return emit_scalar(em, buf, YAML_PLAIN_SCALAR_STYLE);
    case JSON_REAL:
        format_real(json_real_value(v), buf, sizeof(buf));
        return emit_scalar(em, buf, YAML_PLAIN_SCALAR_STYLE);
    case JSON_TRUE:
        return emit_scalar(em, "true", YAML_PLAIN_SCALAR_STYLE);
    case JSON_FALSE:
        return emit_scalar(em, "false", YAML_PLAIN_SCALAR_STYLE);
    case JSON_NULL:
    default:
        return emit_scalar(em, "null", YAML_PLAIN_SCALAR_STYLE);
    }
}

int cli__yaml_append(struct sbuf *sb, const json_t *v)
{
    yaml_emitter_t em;
    yaml_event_t ev;
    int rc = 0;
    if (!yaml_emitter_initialize(&em))
        return CU_EINTERNAL;
    yaml_emitter_set_output(&em, write_cb, sb);
    yaml_emitter_set_unicode(&em, 1);
    yaml_emitter_set_width(&em, -1);
    yaml_emitter_set_indent(&em, 2);
    yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    if (!yaml_emitter_emit(&em, &ev))
        rc = -1;
    if (rc == 0) {
        yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
        rc = yaml_emitter_emit(&em, &ev) ? 0 : -1;
    }
    if (rc == 0)
        rc = emit_value(&em, v ? v : json_null());
    if (rc == 0) {
        yaml_document_end_event_initialize(&ev, 1);
        rc = yaml_emitter_emit(&em, &ev) ? 0 : -1;
    }
    if (rc == 0) {
        yaml_stream_end_event_initialize(&ev);
        rc = yaml_emitter_emit(&em, &ev) ? 0 : -1;
    }
    yaml_emitter_delete(&em);
    return rc == 0 ? 0 : CU_EINTERNAL;
}
