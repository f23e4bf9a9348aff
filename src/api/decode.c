/*
 * decode: YAML/JSON text to JSON documents (see decode.h), built directly
 * from libyaml's event stream.
 *
 * Scalars are typed as sigs.k8s.io/yaml does (it runs go-yaml v2, a YAML
 * 1.1 resolver, then converts to JSON): unquoted y/yes/on/true (any of
 * go-yaml's spellings) are booleans, n/no/off/false too, ""/~/null are
 * null, integers follow Go's ParseInt with base prefixes (0x, 0o, 0b,
 * leading-0 octal) after dropping '_', floats follow go-yaml's float
 * pattern; quoted and block scalars are strings; explicit standard tags
 * (!!str, !!int, ...) are honoured. Kubernetes itself decodes YAML this way
 * (kubectl and the API server both call YAMLToJSON without a target type),
 * so `value: yes` is a boolean there as here.
 *
 * Invariants: a returned document is a JSON object; anchors are resolved
 * by copying (no shared subtrees, callers may mutate); expansion through
 * aliases is capped (API_MAX_ALIAS_NODES), as are nesting depth and size.
 */
#include "api/decode.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include <yaml.h>

#include "api/api-int.h"
#include "util/err.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

#define TAG_PREFIX "tag:yaml.org,2002:"

/* An anchor's latest definition, found by name in a hash table: a
 * document with many anchors costs linear time (a list searched per
 * anchor and alias made 150,000 anchors take minutes). */
struct anchor {
    UT_hash_handle hh;
    json_t *value;
    size_t nodes; /* nodes in value */
    size_t depth; /* nesting depth of value */
    char name[];
};

struct dec {
    yaml_parser_t parser;
    const char *source;
    struct diag *d;
    int rc;            /* first error */
    size_t depth;      /* current nesting */
    size_t alias_nodes;
    struct anchor *anchors; /* uthash by name */
    const char *text;  /* the input, for positions of reader errors */
    size_t len;
};

static int fail(struct dec *x, int rc, const yaml_mark_t *m, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Record the first error with the position of m (1-based line/column). */
static int fail(struct dec *x, int rc, const yaml_mark_t *m, const char *fmt, ...)
{
    if (x->rc)
        return x->rc;
    struct sbuf sb;
    sbuf_init(&sb, 1 << 16);
    sbuf_addf(&sb, "%s: yaml: ", x->source);
    if (m)
        sbuf_addf(&sb, "line %zu, column %zu: ", m->line + 1, m->column + 1);
    va_list ap;
    va_start(ap, fmt);
    sbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    diag_add(x->d, DIAG_SYNTAX, "", NULL, "%s", sb.buf);
    sbuf_release(&sb);
    x->rc = rc;
    return rc;
}

static int parser_fail(struct dec *x)
{
    yaml_parser_t *p = &x->parser;
    const char *problem = p->problem ? p->problem : "unknown error";
    if (p->error == YAML_READER_ERROR && x->text) {
        /* the reader gives a byte offset, not a mark: count lines to it */
        yaml_mark_t m = {0, 0, 0};
        for (size_t i = 0; i < p->problem_offset && i < x->len; i++) {
            if (x->text[i] == '\n') {
                m.line++;
                m.column = 0;
            } else {
                m.column++;
            }
        }
        if (p->problem_value < 0)
            return fail(x, CU_EBADREQ, &m, "%s", problem);
        return fail(x, CU_EBADREQ, &m, "%s (character 0x%02x)", problem,
                    (unsigned)p->problem_value);
    }
    if (p->context)
        return fail(x, CU_EBADREQ, &p->problem_mark, "%s (%s at line %zu, column %zu)", problem,
                    p->context, p->context_mark.line + 1, p->context_mark.column + 1);
    return fail(x, CU_EBADREQ, &p->problem_mark, "%s", problem);
}

static bool next_event(struct dec *x, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&x->parser, ev)) {
        parser_fail(x);
        return false;
    }
    return true;
}

/* ---- scalar resolution (go-yaml v2 rules) ---- */

enum sv_kind { SV_STR, SV_NULL, SV_BOOL, SV_INT, SV_UINT, SV_FLOAT, SV_NONFINITE };

struct sval {
    enum sv_kind kind;
    bool b;
    int64_t i;
    uint64_t u;
    double f;
};

static const char *const TRUE_WORDS[] = {"y", "Y", "yes", "Yes", "YES", "true", "True",
                                         "TRUE", "on", "On", "ON", NULL};
static const char *const FALSE_WORDS[] = {"n", "N", "no", "No", "NO", "false", "False",
                                          "FALSE", "off", "Off", "OFF", NULL};
static const char *const NULL_WORDS[] = {"", "~", "null", "Null", "NULL", NULL};
static const char *const NONFINITE_WORDS[] = {".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF",
                                              "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf",
                                              "-.INF", NULL};

static bool in_list(const char *s, const char *const *l)
{
    for (; *l; l++)
        if ((*l)[0] == s[0] && !strcmp(s, *l)) /* the first byte: no call */
            return true;
    return false;
}

static int digit_val(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return 99;
}

/* Go strconv.ParseUint(s, 0, 64) on an unsigned magnitude text. */
static bool go_parse_uint(const char *s, uint64_t *out)
{
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    } else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
        base = 8;
        s += 2;
    } else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
        base = 2;
        s += 2;
    } else if (s[0] == '0' && s[1]) {
        base = 8;
        s += 1;
    }
    if (!*s)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        int dv = digit_val(*s);
        if (dv >= base)
            return false;
        if (v > (UINT64_MAX - (uint64_t)dv) / (uint64_t)base)
            return false;
        v = v * (uint64_t)base + (uint64_t)dv;
    }
    *out = v;
    return true;
}

/* go-yaml's float pattern: [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static bool yaml_float_syntax(const char *s)
{
    if (*s == '+' || *s == '-')
        s++;
    size_t ndig = 0;
    if (*s == '.') {
        s++;
        for (; *s >= '0' && *s <= '9'; s++)
            ndig++;
        if (!ndig)
            return false;
    } else {
        for (; *s >= '0' && *s <= '9'; s++)
            ndig++;
        if (!ndig)
            return false;
        if (*s == '.')
            for (s++; *s >= '0' && *s <= '9'; s++)
                ;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        size_t edig = 0;
        for (; *s >= '0' && *s <= '9'; s++)
            edig++;
        if (!edig)
            return false;
    }
    return *s == '\0';
}

static bool parse_float(const char *s, double *out)
{
    errno = 0;
    char *end = NULL;
    double v = strtod(s, &end);
    if (!end || *end || (errno == ERANGE && isinf(v)))
        return false; /* Go: out of range is an error, the text stays a string */
    *out = v;
    return true;
}

/* A number-looking plain scalar: int, uint or float, else string. */
static void resolve_number(const char *in, struct sval *sv)
{
    size_t n = strlen(in);
    char small[64];
    char *plain = n < sizeof(small) ? small : xmalloc(n + 1);
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
        if (in[i] != '_')
            plain[j++] = in[i];
    plain[j] = '\0';
    const char *mag = plain;
    bool neg = false;
    if (*mag == '+' || *mag == '-')
        neg = *mag++ == '-';
    uint64_t u;
    if (go_parse_uint(mag, &u)) {
        if (!neg && u <= (uint64_t)INT64_MAX) {
            sv->kind = SV_INT;
            sv->i = (int64_t)u;
        } else if (neg && u <= (uint64_t)INT64_MAX + 1) {
            sv->kind = SV_INT;
            sv->i = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
        } else if (!neg && plain[0] != '+') {
            sv->kind = SV_UINT;
            sv->u = u;
        }
    }
    if (sv->kind == SV_STR && yaml_float_syntax(plain) && parse_float(plain, &sv->f))
        sv->kind = SV_FLOAT;
    if (plain != small)
        xfree(plain);
}

/* The longest word of the lists above ("false", "+.inf"...). */
#define MAX_WORD_LEN 5

/* Resolve a plain, untagged scalar as go-yaml v2's resolve() does. */
static void resolve_plain(const char *in, struct sval *sv)
{
    memset(sv, 0, sizeof(*sv));
    sv->kind = SV_STR;
    char c = in[0];
    bool hinted = !c || strchr("+-0123456789yYnNtTfFoO~.", c) != NULL;
    if (!hinted)
        return;
    bool short_word = strnlen(in, MAX_WORD_LEN + 1) <= MAX_WORD_LEN;
    if (short_word && (in_list(in, TRUE_WORDS) || in_list(in, FALSE_WORDS))) {
        sv->kind = SV_BOOL;
        sv->b = in_list(in, TRUE_WORDS);
        return;
    }
    if (short_word && in_list(in, NULL_WORDS)) {
        sv->kind = SV_NULL;
        return;
    }
    if (short_word && in_list(in, NONFINITE_WORDS)) {
        sv->kind = SV_NONFINITE;
        return;
    }
    if ((c >= '0' && c <= '9') || c == '+' || c == '-') {
        resolve_number(in, sv);
    } else if (c == '.' && parse_float(in, &sv->f)) {
        sv->kind = SV_FLOAT;
    }
}

/* Apply an explicit standard tag; false when the text cannot have it. */
static bool resolve_tagged(const char *tag, const char *in, struct sval *sv)
{
    const char *t = tag + strlen(TAG_PREFIX);
    memset(sv, 0, sizeof(*sv));
    sv->kind = SV_STR;
    if (!strcmp(t, "str") || !strcmp(t, "binary") || !strcmp(t, "timestamp"))
        return true;
    struct sval r;
    resolve_plain(in, &r);
    bool ok = true;
    if (!strcmp(t, "null")) {
        ok = r.kind == SV_NULL;
    } else if (!strcmp(t, "bool")) {
        ok = r.kind == SV_BOOL;
    } else if (!strcmp(t, "int")) {
        ok = r.kind == SV_INT || r.kind == SV_UINT;
    } else if (!strcmp(t, "float")) {
        if (r.kind == SV_INT) {
            r.kind = SV_FLOAT;
            r.f = (double)r.i;
        }
        ok = r.kind == SV_FLOAT || r.kind == SV_NONFINITE;
    } else {
        return true; /* other standard tags on a scalar: keep the text */
    }
    if (ok)
        *sv = r;
    return ok;
}

static json_t *sval_json(const struct sval *sv, const char *text, size_t len)
{
    switch (sv->kind) {
    case SV_NULL: return json_null();
    case SV_BOOL: return json_boolean(sv->b);
    case SV_INT: return json_integer(sv->i);
    case SV_UINT: return json_real((double)sv->u); /* beyond int64: JSON keeps it a number */
    case SV_FLOAT: return json_real(sv->f);
    case SV_NONFINITE: return NULL;
    case SV_STR: break;
    }
    return json_stringn(text, len);
}

static json_t *build_scalar(struct dec *x, yaml_event_t *ev)
{
    const char *text = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    if (memchr(text, '\0', len)) {
        fail(x, CU_EBADREQ, &ev->start_mark, "NUL characters are not allowed in strings");
        return NULL;
    }
    const char *tag = (const char *)ev->data.scalar.tag;
    struct sval sv;
    memset(&sv, 0, sizeof(sv));
    sv.kind = SV_STR;
    if (tag && !strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX))) {
        if (!resolve_tagged(tag, text, &sv)) {
            fail(x, CU_EBADREQ, &ev->start_mark, "cannot decode `%s` as a !!%s", text,
                 tag + strlen(TAG_PREFIX));
            return NULL;
        }
    } else if (!tag && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        resolve_plain(text, &sv);
    }
    json_t *v = sval_json(&sv, text, len);
    if (!v) {
        fail(x, CU_EBADREQ, &ev->start_mark, "%s",
             sv.kind == SV_NONFINITE ? "infinity and NaN cannot be represented in JSON"
                                     : "string is not valid UTF-8");
    }
    return v;
}

/* ---- anchors ---- */

static size_t count_nodes(const json_t *v, size_t depth, size_t *max_depth)
{
    if (depth > *max_depth)
        *max_depth = depth;
    size_t n = 1;
    const char *k;
    json_t *c;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, c) {
            n += count_nodes(c, depth + 1, max_depth);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, c) {
            n += count_nodes(c, depth + 1, max_depth);
        }
    }
    return n;
}

static void anchor_set(struct dec *x, const char *name, json_t *v)
{
    struct anchor *a;
    HASH_FIND_STR(x->anchors, name, a);
    if (!a) {
        size_t n = strlen(name);
        a = xcalloc(1, sizeof(*a) + n + 1);
        memcpy(a->name, name, n + 1);
        HASH_ADD(hh, x->anchors, name, n, a);
    } else {
        json_decref(a->value);
    }
    a->value = json_incref(v);
    a->depth = 0;
    a->nodes = count_nodes(v, 0, &a->depth);
}

static void anchors_clear(struct dec *x)
{
    struct anchor *a, *tmp;
    HASH_ITER(hh, x->anchors, a, tmp) {
        HASH_DEL(x->anchors, a);
        json_decref(a->value);
        xfree(a);
    }
}

static json_t *expand_alias(struct dec *x, yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    struct anchor *a;
    HASH_FIND_STR(x->anchors, name, a);
    if (!a) {
        fail(x, CU_EBADREQ, &ev->start_mark, "unknown anchor '%s' referenced", name);
        return NULL;
    }
    if (x->depth + a->depth > API_MAX_DEPTH) {
        fail(x, CU_ELIMIT, &ev->start_mark,
             "nesting exceeds the maximum depth of %d (through alias *%s)", API_MAX_DEPTH, name);
        return NULL;
    }
    if (x->alias_nodes + a->nodes > API_MAX_ALIAS_NODES) {
        fail(x, CU_ELIMIT, &ev->start_mark,
             "document contains excessive aliasing (more than %zu nodes expanded)",
             (size_t)API_MAX_ALIAS_NODES);
        return NULL;
    }
    x->alias_nodes += a->nodes;
    return json_deep_copy(a->value);
}

/* ---- nodes ---- */

static json_t *parse_node(struct dec *x, yaml_event_t *ev);

static const char *anchor_of(const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_SCALAR_EVENT: return (const char *)ev->data.scalar.anchor;
    case YAML_SEQUENCE_START_EVENT: return (const char *)ev->data.sequence_start.anchor;
    case YAML_MAPPING_START_EVENT: return (const char *)ev->data.mapping_start.anchor;
    default: return NULL;
    }
}

static bool enter(struct dec *x, const yaml_event_t *ev)
{
    if (++x->depth > API_MAX_DEPTH) {
        fail(x, CU_ELIMIT, &ev->start_mark, "nesting exceeds the maximum depth of %d",
             API_MAX_DEPTH);
        return false;
    }
    return true;
}

static json_t *parse_sequence(struct dec *x, yaml_event_t *start)
{
    if (!enter(x, start))
        return NULL;
    json_t *arr = json_array();
    for (;;) {
        yaml_event_t ev;
        if (!next_event(x, &ev))
            break;
        if (ev.type == YAML_SEQUENCE_END_EVENT) {
            yaml_event_delete(&ev);
            x->depth--;
            return arr;
        }
        json_t *item = parse_node(x, &ev);
        yaml_event_delete(&ev);
        if (!item)
            break;
        json_array_append_new(arr, item);
    }
    json_decref(arr);
    return NULL;
}

static char *key_text_typed(struct dec *x, yaml_event_t *ev);

/* A mapping key as JSON text: scalars as sigs.k8s.io/yaml converts them.
 * A key that stays a string is ev's own text (valid while ev is; *owned
 * NULL, no JSON value built: libyaml's scalars are valid UTF-8, which
 * json_object_set checks again); others are new strings in *owned. */
static const char *key_text(struct dec *x, yaml_event_t *ev, bool *is_merge, char **owned)
{
    *is_merge = false;
    *owned = NULL;
    if (ev->type != YAML_SCALAR_EVENT) {
        fail(x, CU_EBADREQ, &ev->start_mark, "mapping keys must be scalars");
        return NULL;
    }
    const char *text = (const char *)ev->data.scalar.value;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    if (plain && !ev->data.scalar.tag && !strcmp(text, "<<")) {
        *is_merge = true;
        return text;
    }
    if (!ev->data.scalar.tag && !memchr(text, '\0', ev->data.scalar.length)) {
        struct sval sv = {.kind = SV_STR};
        if (plain)
            resolve_plain(text, &sv);
        if (sv.kind == SV_STR)
            return text;
    }
    *owned = key_text_typed(x, ev);
    return *owned;
}

/* key_text of a key that build_scalar must type (or reject). */
static char *key_text_typed(struct dec *x, yaml_event_t *ev)
{
    json_t *v = build_scalar(x, ev);
    if (!v)
        return NULL;
    char *k = NULL;
    if (json_is_string(v))
        k = xstrdup(json_string_value(v));
    else if (json_is_integer(v))
        k = xasprintf("%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_boolean(v))
        k = xstrdup(json_is_true(v) ? "true" : "false");
    else if (json_is_real(v))
        k = xasprintf("%.9g", json_real_value(v));
    else
        fail(x, CU_EBADREQ, &ev->start_mark, "unsupported map key: null");
    json_decref(v);
    return k;
}

/* Fold a `<<` merge source (mapping or list of mappings) into merged. */
static bool merge_into(struct dec *x, json_t *merged, json_t *src, const yaml_mark_t *m)
{
    json_t *one = src;
    size_t i = 0, n = json_is_array(src) ? json_array_size(src) : 1;
    for (; i < n; i++) {
        if (json_is_array(src))
            one = json_array_get(src, i);
        if (!json_is_object(one)) {
            fail(x, CU_EBADREQ, m, "map merge requires map or sequence of maps as the value");
            return false;
        }
        const char *k;
        json_t *v;
        json_object_foreach(one, k, v) {
            if (!json_object_get(merged, k)) /* earlier sources win */
                json_object_set(merged, k, v);
        }
    }
    return true;
}

static bool mapping_entry(struct dec *x, yaml_event_t *kev, json_t *obj, json_t **merged)
{
    bool is_merge;
    yaml_mark_t km = kev->start_mark;
    char *owned;
    const char *key = key_text(x, kev, &is_merge, &owned);
    if (!key)
        return false;
    yaml_event_t vev;
    json_t *val = NULL;
    if (next_event(x, &vev)) {
        val = parse_node(x, &vev);
        yaml_event_delete(&vev);
    }
    bool ok = val != NULL;
    if (ok && is_merge) {
        if (!*merged)
            *merged = json_object();
        ok = merge_into(x, *merged, val, &km);
    } else if (ok) {
        /* a key already there is replaced, not added: the mapping is
         * dropped on this error */
        size_t before = json_object_size(obj);
        if (json_object_set(obj, key, val)) {
            fail(x, CU_EBADREQ, &km, "%s", "string is not valid UTF-8");
            ok = false;
        } else if (json_object_size(obj) == before) {
            fail(x, CU_EBADREQ, &km, "duplicate key \"%s\" in mapping", key);
            ok = false;
        }
    }
    json_decref(val);
    xfree(owned);
    return ok;
}

static json_t *parse_mapping(struct dec *x, yaml_event_t *start)
{
    if (!enter(x, start))
        return NULL;
    json_t *obj = json_object();
    json_t *merged = NULL; /* made at the first `<<` */
    for (;;) {
        yaml_event_t ev;
        if (!next_event(x, &ev))
            break;
        if (ev.type == YAML_MAPPING_END_EVENT) {
            yaml_event_delete(&ev);
            x->depth--;
            const char *k;
            json_t *v;
            json_object_foreach(merged, k, v) { /* none when merged is NULL */
                if (!json_object_get(obj, k)) /* explicit keys win over merged ones */
                    json_object_set(obj, k, v);
            }
            json_decref(merged);
            return obj;
        }
        bool ok = mapping_entry(x, &ev, obj, &merged);
        yaml_event_delete(&ev);
        if (!ok)
            break;
    }
    json_decref(obj);
    json_decref(merged);
    return NULL;
}

static json_t *parse_node(struct dec *x, yaml_event_t *ev)
{
    json_t *v = NULL;
    switch (ev->type) {
    case YAML_ALIAS_EVENT: return expand_alias(x, ev);
    case YAML_SCALAR_EVENT: v = build_scalar(x, ev); break;
    case YAML_SEQUENCE_START_EVENT: v = parse_sequence(x, ev); break;
    case YAML_MAPPING_START_EVENT: v = parse_mapping(x, ev); break;
    default:
        fail(x, CU_EBADREQ, &ev->start_mark, "unexpected YAML event %d", (int)ev->type);
        return NULL;
    }
    const char *anchor = anchor_of(ev);
    if (v && anchor)
        anchor_set(x, anchor, v);
    return v;
}

/* ---- documents ---- */

/* One document, from just after DOCUMENT_START to DOCUMENT_END. */
static int parse_document(struct dec *x, const yaml_mark_t *start, size_t index,
                          json_t *docs)
{
    yaml_event_t ev;
    if (!next_event(x, &ev))
        return x->rc;
    yaml_mark_t root_mark = ev.start_mark;
    json_t *root = parse_node(x, &ev);
    yaml_event_delete(&ev);
    if (!root)
        return x->rc;
    if (!next_event(x, &ev)) {
        json_decref(root);
        return x->rc;
    }
    size_t span = ev.end_mark.index - start->index;
    yaml_event_delete(&ev);
    anchors_clear(x);
    int rc = 0;
    if (span > API_MAX_DOCUMENT_BYTES) {
        rc = fail(x, CU_ELIMIT, start, "document %zu is %zu bytes, more than the limit of %zu",
                  index + 1, span, (size_t)API_MAX_DOCUMENT_BYTES);
    } else if (json_is_object(root)) {
        json_array_append(docs, root);
    } else if (!json_is_null(root)) {
        const char *t = api__json_type_name(root);
        rc = fail(x, CU_EBADREQ, &root_mark, "document %zu must be a mapping (an object), not %s %s",
                  index + 1, strchr("aeiou", t[0]) ? "an" : "a", t);
    }
    json_decref(root);
    return rc;
}

static int parse_yaml(struct dec *x, const char *text, size_t len, json_t *docs)
{
    yaml_parser_initialize(&x->parser);
    yaml_parser_set_input_string(&x->parser, (const unsigned char *)text, len);
    x->text = text;
    x->len = len;
    size_t index = 0;
    bool done = false;
    while (!done && !x->rc) {
        yaml_event_t ev;
        if (!next_event(x, &ev))
            break;
        if (ev.type == YAML_DOCUMENT_START_EVENT) {
            yaml_mark_t start = ev.start_mark;
            yaml_event_delete(&ev);
            parse_document(x, &start, index++, docs);
            continue;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    anchors_clear(x);
    yaml_parser_delete(&x->parser);
    return x->rc;
}

/* ---- JSON fast path ---- */

static size_t json_depth(const json_t *v)
{
    size_t max = 0;
    count_nodes(v, 1, &max);
    return max;
}

/* A stream of JSON objects. Returns false (docs untouched) when the text is
 * not plain JSON, so the caller can let the YAML parser report it. */
static bool parse_json_stream(const char *text, size_t len, json_t *docs)
{
    json_t *tmp = json_array();
    size_t off = 0;
    while (off < len) {
        while (off < len && strchr(" \t\r\n", text[off]))
            off++;
        if (off == len)
            break;
        json_error_t jerr;
        json_t *v = json_loadb(text + off, len - off,
                               JSON_REJECT_DUPLICATES | JSON_DISABLE_EOF_CHECK |
                                   JSON_DECODE_ANY,
                               &jerr);
        if (!v || !json_is_object(v) || json_depth(v) > API_MAX_DEPTH ||
            jerr.position <= 0) {
            json_decref(v);
            json_decref(tmp);
            return false;
        }
        json_array_append_new(tmp, v);
        off += (size_t)jerr.position;
    }
    json_array_extend(docs, tmp);
    json_decref(tmp);
    return true;
}

int api_parse_documents(const char *text, size_t len, const char *source, json_t **docs_out,
                        struct diag *d)
{
    struct dec x;
    memset(&x, 0, sizeof(x));
    x.source = source && source[0] ? source : "<input>";
    x.d = d;
    *docs_out = NULL;
    if (len > API_MAX_STREAM_BYTES) {
        return fail(&x, CU_ELIMIT, NULL, "input is %zu bytes, more than the limit of %zu", len,
                    (size_t)API_MAX_STREAM_BYTES);
    }
    json_t *docs = json_array();
    size_t i = 0;
    while (i < len && strchr(" \t\r\n", text[i]))
        i++;
    bool json_done = i < len && text[i] == '{' && len - i <= API_MAX_DOCUMENT_BYTES &&
                     parse_json_stream(text + i, len - i, docs);
    if (!json_done && parse_yaml(&x, text, len, docs) != 0) {
        json_decref(docs);
        return x.rc;
    }
    *docs_out = docs;
    return 0;
}
