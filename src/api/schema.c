/*
 * schema: the generic machinery over the schema trees (see schema.h):
 * the three admission phases (decode, default, validate), lookups for
 * strategic merge patch, the visitor and the OpenAPI v3 generator. The
 * trees themselves live in schema_*.c; the kind table is at the end.
 *
 * Invariants of the walk: after SCHEMA_DECODE without errors every value
 * has its schema's JSON type, no object holds a null, integral reals in
 * integer fields are integers and quantities are strings; later phases
 * rely on that and never re-check types.
 */
#include "api/schema.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <uthash.h>

#include "api/names.h"
#include "api/quantity.h"
#include "api/schema-int.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

struct walk {
    enum api_schema_phase ph;
    struct api_vctx *c;
    struct sbuf path;
};

/* ---- paths ---- */

static size_t push_field(struct walk *w, const char *name)
{
    size_t mark = w->path.len;
    if (mark)
        sbuf_addc(&w->path, '.');
    sbuf_adds(&w->path, name);
    return mark;
}

static size_t push_index(struct walk *w, size_t i)
{
    size_t mark = w->path.len;
    sbuf_addf(&w->path, "[%zu]", i);
    return mark;
}

static size_t push_key(struct walk *w, const char *key)
{
    size_t mark = w->path.len;
    sbuf_addf(&w->path, "[%s]", key);
    return mark;
}

static void pop(struct walk *w, size_t mark)
{
    w->path.len = mark;
    w->path.buf[mark] = '\0';
}

static const char *expected_name(const struct api_schema *s)
{
    switch (s->type) {
    case SCH_STRING: return "string";
    case SCH_INTEGER: return s->int32 ? "integer (int32)" : "integer";
    case SCH_NUMBER: return "number";
    case SCH_BOOLEAN: return "boolean";
    case SCH_OBJECT:
    case SCH_MAP:
    case SCH_PASSTHROUGH: return "object";
    case SCH_ARRAY: return "array";
    case SCH_QUANTITY: return "quantity (string or number)";
    case SCH_INT_OR_STRING: return "integer or string";
    case SCH_ANY: return "any value";
    }
    return "value";
}

/* ---- decode phase ---- */

static bool integral(const json_t *v, json_int_t *out)
{
    if (json_is_integer(v)) {
        *out = json_integer_value(v);
        return true;
    }
    if (!json_is_real(v))
        return false;
    double d = json_real_value(v);
    if (!isfinite(d) || d != floor(d) || fabs(d) > 9.2e18)
        return false;
    *out = (json_int_t)d;
    return true;
}

/* Type check; *repl receives a normalised replacement when one is due. */
static bool type_ok(const struct api_schema *s, json_t *v, json_t **repl)
{
    json_int_t iv;
    char buf[64];
    *repl = NULL;
    switch (s->type) {
    case SCH_STRING: return json_is_string(v);
    case SCH_NUMBER: return json_is_number(v);
    case SCH_BOOLEAN: return json_is_boolean(v);
    case SCH_OBJECT:
    case SCH_MAP:
    case SCH_PASSTHROUGH: return json_is_object(v);
    case SCH_ARRAY: return json_is_array(v);
    case SCH_ANY: return true;
    case SCH_INTEGER:
    case SCH_INT_OR_STRING:
        if (s->type == SCH_INT_OR_STRING && json_is_string(v))
            return true;
        if (!integral(v, &iv))
            return false;
        if (s->int32 && (iv < INT32_MIN || iv > INT32_MAX))
            return false;
        if (json_is_real(v))
            *repl = json_integer(iv);
        return true;
    case SCH_QUANTITY:
        if (json_is_string(v))
            return true;
        if (!json_is_number(v))
            return false;
        api__number_text(v, buf, sizeof(buf));
        *repl = json_string(buf);
        return true;
    }
    return false;
}

static json_t *walk(struct walk *w, const struct api_schema *s, json_t *v, const json_t *old,
                    const char *resource);

static void decode_object(struct walk *w, const struct api_schema *s, json_t *v)
{
    const char *k;
    json_t *child;
    void *tmp;
    json_object_foreach_safe(v, tmp, k, child) {
        if (json_is_null(child)) { /* like Go: a null field is an absent field */
            json_object_del(v, k);
            continue;
        }
        const struct api_schema *fs = api_schema_field(s, k);
        size_t mark = push_field(w, k);
        if (!fs) {
            diag_add(w->c->d, DIAG_UNKNOWN_FIELD, w->path.buf, NULL, NULL);
        } else {
            json_t *repl = walk(w, fs, child, NULL, NULL);
            if (repl)
                json_object_set_new(v, k, repl);
        }
        pop(w, mark);
    }
}

static void decode_container(struct walk *w, const struct api_schema *s, json_t *v)
{
    if (s->type == SCH_ARRAY) {
        size_t i;
        json_t *child;
        json_array_foreach(v, i, child) {
            size_t mark = push_index(w, i);
            json_t *repl = walk(w, s->items, child, NULL, NULL);
            if (repl)
                json_array_set_new(v, i, repl);
            pop(w, mark);
        }
        return;
    }
    const char *k;
    json_t *child;
    json_object_foreach(v, k, child) {
        size_t mark = push_key(w, k);
        json_t *repl = NULL;
        if (json_is_null(child) && s->items->type == SCH_STRING)
            repl = json_string(""); /* map[string]string: null reads as "" */
        else
            repl = walk(w, s->items, child, NULL, NULL);
        if (repl)
            json_object_set_new(v, k, repl);
        pop(w, mark);
    }
}

/* Kinds the Kubernetes API server itself serves (core, batch...; groups
 * without a dot or under .k8s.io) as opposed to CustomResourceDefinitions
 * (kueue.x-k8s.io, ray.io, autoscaling.x-k8s.io, cueue.dev). */
static bool builtin_kind(const struct api_kind *k)
{
    if (!k || !strchr(k->group, '.'))
        return true;
    size_t n = strlen(k->group), m = strlen(".k8s.io");
    return n > m && !strcmp(k->group + n - m, ".k8s.io");
}

static json_t *decode(struct walk *w, const struct api_schema *s, json_t *v)
{
    json_t *repl = NULL;
    if (!type_ok(s, v, &repl)) {
        diag_addj(w->c->d, DIAG_TYPE_INVALID, w->path.buf, v, "expected %s, got %s",
                  expected_name(s), api__json_type_name(v));
        return NULL;
    }
    /* A built-in kind stores a quantity as a string (resource.Quantity); a
     * custom resource keeps an int-or-string value as it was sent, so that
     * kubectl's three-way merge of an unchanged file finds nothing to do */
    if (s->type == SCH_QUANTITY && repl && !builtin_kind(w->c->kind)) {
        json_decref(repl);
        repl = NULL;
    }
    if (s->type == SCH_OBJECT)
        decode_object(w, s, v);
    else if (s->type == SCH_ARRAY || s->type == SCH_MAP)
        decode_container(w, s, v);
    return repl;
}

/* ---- default phase ---- */

static void defaults(struct walk *w, const struct api_schema *s, json_t *v)
{
    if (s->type == SCH_OBJECT) {
        /* members not met yet: none left, no lookup finds one */
        size_t left = json_object_size(v);
        for (const struct api_schema_field *f = s->fields; f->name; f++) {
            json_t *child = left ? json_object_get(v, f->name) : NULL;
            if (child) {
                left--;
            } else if (f->schema->default_json) {
                json_object_set_new(v, f->name, json_loads(f->schema->default_json,
                                                           JSON_DECODE_ANY, NULL));
                child = json_object_get(v, f->name);
            }
            if (child)
                defaults(w, f->schema, child);
        }
    } else if (s->type == SCH_ARRAY || s->type == SCH_MAP) {
        size_t i;
        const char *k;
        json_t *child;
        if (json_is_array(v)) {
            json_array_foreach(v, i, child) {
                defaults(w, s->items, child);
            }
        } else {
            json_object_foreach(v, k, child) {
                defaults(w, s->items, child);
            }
        }
    }
}

/* ---- validate phase ---- */

static const char *format_check(enum api_schema_format f, const char *s)
{
    int64_t ms;
    switch (f) {
    case FMT_NONE: return NULL;
    case FMT_DNS_LABEL: return api_check_dns1123_label(s);
    case FMT_DNS_SUBDOMAIN: return api_check_dns1123_subdomain(s);
    case FMT_DNS1035_LABEL: return api_check_dns1035_label(s);
    case FMT_QUALIFIED_NAME: return api_check_qualified_name(s);
    case FMT_LABEL_VALUE: return api_check_label_value(s);
    case FMT_CONFIG_KEY: return api_check_config_key(s);
    case FMT_RESOURCE_NAME: return api_check_container_resource_name(s);
    case FMT_DATE_TIME:
        return timefmt_parse(s, &ms) < 0 ? "must be an RFC 3339 date-time "
                                           "(e.g. 2026-01-02T15:04:05Z)"
                                         : NULL;
    }
    return NULL;
}

static void validate_string(struct walk *w, const struct api_schema *s, const json_t *v)
{
    const char *str = json_string_value(v);
    struct diag *d = w->c->d;
    if (s->enum_values && !api__str_in(str, s->enum_values)) {
        api__diag_not_supported(d, w->path.buf, str, s->enum_values);
        return;
    }
    if (s->max_length && strlen(str) > s->max_length)
        diag_add(d, DIAG_TOO_LONG, w->path.buf, NULL, "may not be more than %zu bytes",
                  s->max_length);
    const char *msg = format_check(s->format, str);
    if (msg && (str[0] || s->format == FMT_CONFIG_KEY || s->format == FMT_DATE_TIME))
        api__diag_str(d, DIAG_INVALID, w->path.buf, str, "%s", msg);
}

static void validate_integer(struct walk *w, const struct api_schema *s, const json_t *v)
{
    if (!json_is_integer(v))
        return; /* int-or-string given as a string */
    json_int_t iv = json_integer_value(v);
    if (s->has_min && iv < s->min)
        api__diag_int(w->c->d, DIAG_INVALID, w->path.buf, iv,
                      "must be greater than or equal to %lld", (long long)s->min);
    if (s->has_max && iv > s->max)
        api__diag_int(w->c->d, DIAG_INVALID, w->path.buf, iv,
                      "must be less than or equal to %lld", (long long)s->max);
}

static void validate_quantity(struct walk *w, const struct api_schema *s, const json_t *v,
                              const char *resource)
{
    int64_t q;
    if (api_quantity_from_json(v, resource, w->path.buf, &q, w->c->d) < 0)
        return;
    if (s->has_min && q < s->min) {
        /* Kueue words it with the quantity's text, quoted, a number too */
        char text[64];
        api__diag_str(w->c->d, DIAG_INVALID, w->path.buf, api__quantity_text(v, text, sizeof(text)),
                      "must be greater than or equal to %lld", (long long)s->min);
    }
}

/* The element of old (a list) that corresponds to element i of a keyed
 * list, matched by the merge key; positional for other lists. */
static const json_t *old_element(const struct api_schema *s, const json_t *old,
                                 const json_t *el, size_t i)
{
    if (!json_is_array(old))
        return NULL;
    if (s->list_type != LIST_MAP || !s->merge_key)
        return json_array_get(old, i);
    const json_t *key = json_object_get(el, s->merge_key);
    size_t j;
    json_t *o;
    json_array_foreach(old, j, o) {
        if (key && jx_equal(json_object_get(o, s->merge_key), key))
            return o;
    }
    return NULL;
}

/* The key a set or keyed list is unique by: the element, or its merge key
 * (NULL when absent: never a duplicate). */
static const json_t *unique_key(const struct api_schema *s, const json_t *el)
{
    return s->list_type == LIST_MAP ? json_object_get(el, s->merge_key) : el;
}

struct seen_key {
    UT_hash_handle hh;
};

/* dup[i] is set when element i of a set or keyed list repeats an earlier
 * element's key. String keys go through a hash table, so a list of
 * 700,000 finalizers costs linear time; lists with other keys compare
 * pairs. Caller frees the result (n entries, all false for an atomic
 * list). */
static bool *find_duplicates(const struct api_schema *s, const json_t *v, size_t n)
{
    bool *dup = xcalloc(n ? n : 1, sizeof(*dup));
    if (s->list_type == LIST_ATOMIC)
        return dup;
    bool all_strings = true;
    for (size_t i = 0; i < n && all_strings; i++) {
        const json_t *k = unique_key(s, json_array_get(v, i));
        all_strings = !k || json_is_string(k);
    }
    if (!all_strings) {
        for (size_t i = 0; i < n; i++) {
            const json_t *a = unique_key(s, json_array_get(v, i));
            for (size_t j = 0; j < i && a && !dup[i]; j++) {
                const json_t *b = unique_key(s, json_array_get(v, j));
                dup[i] = b && jx_equal(a, b);
            }
        }
        return dup;
    }
    struct seen_key *set = NULL, *e;
    struct seen_key *entries = xcalloc(n ? n : 1, sizeof(*entries));
    for (size_t i = 0; i < n; i++) {
        const json_t *k = unique_key(s, json_array_get(v, i));
        if (!k)
            continue;
        const char *str = json_string_value(k);
        size_t len = json_string_length(k);
        HASH_FIND(hh, set, str, len, e);
        if (e)
            dup[i] = true;
        else
            HASH_ADD_KEYPTR(hh, set, str, len, &entries[i]);
    }
    HASH_CLEAR(hh, set);
    xfree(entries);
    return dup;
}

static void validate_list(struct walk *w, const struct api_schema *s, json_t *v,
                          const json_t *old, const char *resource)
{
    size_t n = json_array_size(v);
    struct diag *d = w->c->d;
    if (s->max_items && n > s->max_items)
        api__diag_int(d, DIAG_TOO_MANY, w->path.buf, (int64_t)n, "must have at most %zu items",
                      s->max_items);
    if (s->min_items && n < s->min_items) {
        if (n == 0)
            diag_add(d, DIAG_REQUIRED, w->path.buf, NULL, "must have at least %zu item%s",
                     s->min_items, s->min_items == 1 ? "" : "s");
        else
            api__diag_int(d, DIAG_INVALID, w->path.buf, (int64_t)n,
                          "must have at least %zu items", s->min_items);
    }
    bool *dup = find_duplicates(s, v, n);
    for (size_t i = 0; i < n; i++) {
        json_t *el = json_array_get(v, i);
        size_t mark = push_index(w, i);
        if (dup[i]) {
            size_t m2 = s->list_type == LIST_MAP ? push_field(w, s->merge_key) : w->path.len;
            diag_addj(d, DIAG_DUPLICATE, w->path.buf, unique_key(s, el), NULL);
            pop(w, m2);
        }
        walk(w, s->items, el, old_element(s, old, el, i), resource);
        pop(w, mark);
    }
    xfree(dup);
}

static void validate_map(struct walk *w, const struct api_schema *s, json_t *v,
                         const json_t *old)
{
    const char *k;
    json_t *child;
    size_t n = json_object_size(v);
    if (s->max_items && n > s->max_items)
        api__diag_int(w->c->d, DIAG_TOO_MANY, w->path.buf, (int64_t)n,
                      "must have at most %zu items", s->max_items);
    json_object_foreach(v, k, child) {
        const char *msg = format_check(s->key_format, k);
        if (msg)
            api__diag_str(w->c->d, DIAG_INVALID, w->path.buf, k, "%s", msg);
        size_t mark = push_key(w, k);
        walk(w, s->items, child, json_object_get(old, k), k);
        pop(w, mark);
    }
}

static void validate_object(struct walk *w, const struct api_schema *s, json_t *v,
                            const json_t *old, const char *resource)
{
    if (s->resource_field && JX_STR(v, s->resource_field))
        resource = JX_STR(v, s->resource_field);
    /* members not met yet: none left, no lookup finds one */
    size_t left = json_object_size(v);
    for (const struct api_schema_field *f = s->fields; f->name; f++) {
        json_t *child = left ? json_object_get(v, f->name) : NULL;
        if (child)
            left--;
        const json_t *oc = old ? json_object_get(old, f->name) : NULL;
        bool empty = json_is_string(child) && json_string_length(child) == 0;
        bool required = (!child || empty) && f->required;
        bool immutable = !child && oc && f->schema->immutable && w->c->old;
        if (!child && !required && !immutable)
            continue; /* nothing to say: no path needed */
        size_t mark = push_field(w, f->name);
        if (required)
            diag_add(w->c->d, DIAG_REQUIRED, w->path.buf, NULL, NULL);
        if (immutable)
            diag_add(w->c->d, DIAG_INVALID, w->path.buf, NULL, "field is immutable");
        if (child)
            walk(w, f->schema, child, oc, resource);
        pop(w, mark);
    }
}

static void validate(struct walk *w, const struct api_schema *s, json_t *v, const json_t *old,
                     const char *resource)
{
    switch (s->type) {
    case SCH_STRING: validate_string(w, s, v); break;
    case SCH_INTEGER:
    case SCH_INT_OR_STRING: validate_integer(w, s, v); break;
    case SCH_QUANTITY: validate_quantity(w, s, v, resource); break;
    case SCH_OBJECT: validate_object(w, s, v, old, resource); break;
    case SCH_ARRAY: validate_list(w, s, v, old, resource); break;
    case SCH_MAP: validate_map(w, s, v, old); break;
    case SCH_NUMBER:
    case SCH_BOOLEAN:
    case SCH_PASSTHROUGH:
    case SCH_ANY: break;
    }
    if (s->immutable && old && w->c->old && !jx_equal(v, old))
        diag_addj(w->c->d, DIAG_INVALID, w->path.buf, v, "field is immutable");
    if (s->check)
        s->check(w->c, v, w->path.buf, old);
}

static json_t *walk(struct walk *w, const struct api_schema *s, json_t *v, const json_t *old,
                    const char *resource)
{
    switch (w->ph) {
    case SCHEMA_DECODE: return decode(w, s, v);
    case SCHEMA_DEFAULT: defaults(w, s, v); return NULL;
    case SCHEMA_VALIDATE: validate(w, s, v, old, resource); return NULL;
    }
    return NULL;
}

void api_schema_run(enum api_schema_phase phase, const struct api_schema *s, json_t *v,
                    const char *path, struct api_vctx *c, const json_t *old)
{
    struct walk w = {.ph = phase, .c = c};
    sbuf_init(&w.path, 1 << 16);
    sbuf_adds(&w.path, path ? path : "");
    json_t *repl = walk(&w, s, v, old, NULL);
    json_decref(repl); /* a root is always an object: never replaced */
    sbuf_release(&w.path);
}

/* ---- lookups ---- */

const struct api_schema *api_schema_field(const struct api_schema *obj, const char *name)
{
    if (!obj || obj->type != SCH_OBJECT || !name)
        return NULL;
    for (const struct api_schema_field *f = obj->fields; f->name; f++)
        if (!strcmp(f->name, name))
            return f->schema;
    return NULL;
}

const struct api_schema *api_schema_items(const struct api_schema *s)
{
    if (!s || (s->type != SCH_ARRAY && s->type != SCH_MAP))
        return NULL;
    return s->items;
}

const char *api_schema_merge_key(const struct api_schema *s)
{
    if (!s || s->type != SCH_ARRAY || s->list_type != LIST_MAP)
        return NULL;
    return s->merge_key;
}

const struct api_schema *api_schema_at(enum api_kind_id id, const char *const *keys)
{
    const struct api_schema *s = api_schema_for_kind(id);
    for (; s && *keys; keys++) {
        while (s && (s->type == SCH_ARRAY || s->type == SCH_MAP))
            s = s->items;
        s = api_schema_field(s, *keys);
    }
    return s;
}

void api_schema_visit(const struct api_schema *s, const char *path,
                      bool (*fn)(void *ctx, const char *path, const struct api_schema *s),
                      void *ctx)
{
    if (!fn(ctx, path, s))
        return;
    if (s->type == SCH_OBJECT) {
        for (const struct api_schema_field *f = s->fields; f->name; f++) {
            char *p = path[0] ? xasprintf("%s.%s", path, f->name) : xstrdup(f->name);
            api_schema_visit(f->schema, p, fn, ctx);
            xfree(p);
        }
    } else if (s->type == SCH_ARRAY || s->type == SCH_MAP) {
        char *p = xasprintf("%s%s", path, s->type == SCH_ARRAY ? "[]" : "{}");
        api_schema_visit(s->items, p, fn, ctx);
        xfree(p);
    }
}

/* ---- OpenAPI ---- */

static const char *openapi_format(enum api_schema_format f)
{
    switch (f) {
    case FMT_DATE_TIME: return "date-time";
    case FMT_DNS_LABEL: return "dns1123-label";
    case FMT_DNS_SUBDOMAIN: return "dns1123-subdomain";
    case FMT_DNS1035_LABEL: return "dns1035-label";
    case FMT_QUALIFIED_NAME: return "qualified-name";
    case FMT_LABEL_VALUE: return "label-value";
    case FMT_CONFIG_KEY: return "config-key";
    case FMT_RESOURCE_NAME: return "resource-name";
    case FMT_NONE: return NULL;
    }
    return NULL;
}

static void openapi_scalar(const struct api_schema *s, json_t *o)
{
    static const char *const types[] = {
        [SCH_STRING] = "string", [SCH_INTEGER] = "integer", [SCH_NUMBER] = "number",
        [SCH_BOOLEAN] = "boolean", [SCH_OBJECT] = "object", [SCH_ARRAY] = "array",
        [SCH_MAP] = "object", [SCH_PASSTHROUGH] = "object"};
    if (s->type == SCH_QUANTITY || s->type == SCH_INT_OR_STRING) {
        json_object_set_new(o, "x-kubernetes-int-or-string", json_true());
        if (s->type == SCH_QUANTITY)
            json_object_set_new(o, "pattern",
                                json_string("^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))"
                                            "(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?"
                                            "(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$"));
    } else if (s->type != SCH_ANY) {
        json_object_set_new(o, "type", json_string(types[s->type]));
    }
    if (s->type == SCH_INTEGER)
        json_object_set_new(o, "format", json_string(s->int32 ? "int32" : "int64"));
    if (openapi_format(s->format))
        json_object_set_new(o, "format", json_string(openapi_format(s->format)));
    if (s->enum_values) {
        json_t *e = json_array();
        for (const char *const *p = s->enum_values; *p; p++)
            json_array_append_new(e, json_string(*p));
        json_object_set_new(o, "enum", e);
    }
    if (s->has_min && s->type == SCH_INTEGER)
        json_object_set_new(o, "minimum", json_integer(s->min));
    if (s->has_max && s->type == SCH_INTEGER)
        json_object_set_new(o, "maximum", json_integer(s->max));
    if (s->max_length)
        json_object_set_new(o, "maxLength", json_integer((json_int_t)s->max_length));
    if (s->default_json)
        json_object_set_new(o, "default", json_loads(s->default_json, JSON_DECODE_ANY, NULL));
    if (s->doc)
        json_object_set_new(o, "description", json_string(s->doc));
}

json_t *api_schema_openapi(const struct api_schema *s)
{
    json_t *o = json_object();
    openapi_scalar(s, o);
    if (s->type == SCH_OBJECT) {
        json_t *props = json_object(), *req = json_array();
        for (const struct api_schema_field *f = s->fields; f->name; f++) {
            json_object_set_new(props, f->name, api_schema_openapi(f->schema));
            if (f->required)
                json_array_append_new(req, json_string(f->name));
        }
        json_object_set_new(o, "properties", props);
        if (json_array_size(req))
            json_object_set_new(o, "required", req);
        else
            json_decref(req);
    } else if (s->type == SCH_MAP) {
        json_object_set_new(o, "additionalProperties", api_schema_openapi(s->items));
    } else if (s->type == SCH_ARRAY) {
        json_object_set_new(o, "items", api_schema_openapi(s->items));
        static const char *const lt[] = {"atomic", "set", "map"};
        json_object_set_new(o, "x-kubernetes-list-type", json_string(lt[s->list_type]));
        if (s->merge_key)
            json_object_set_new(o, "x-kubernetes-list-map-keys",
                                json_pack("[s]", s->merge_key));
        if (s->max_items)
            json_object_set_new(o, "maxItems", json_integer((json_int_t)s->max_items));
        if (s->min_items)
            json_object_set_new(o, "minItems", json_integer((json_int_t)s->min_items));
    } else if (s->type == SCH_PASSTHROUGH || s->type == SCH_ANY) {
        json_object_set_new(o, "x-kubernetes-preserve-unknown-fields", json_true());
    }
    return o;
}

/* ---- the kind table ---- */

static const struct api_kind_schema *const kind_schemas[KIND__COUNT] = {
    [KIND_NAMESPACE] = &api__ks_namespace,
    [KIND_CONFIGMAP] = &api__ks_configmap,
    [KIND_POD] = &api__ks_pod,
    [KIND_NODE] = &api__ks_node,
    [KIND_EVENT] = &api__ks_event,
    [KIND_PODTEMPLATE] = &api__ks_podtemplate,
    [KIND_JOB] = &api__ks_job,
    [KIND_RAYJOB] = &api__ks_rayjob,
    [KIND_JOBSET] = &api__ks_jobset,
    [KIND_RESOURCEFLAVOR] = &api__ks_resourceflavor,
    [KIND_CLUSTERQUEUE] = &api__ks_clusterqueue,
    [KIND_LOCALQUEUE] = &api__ks_localqueue,
    [KIND_COHORT] = &api__ks_cohort,
    [KIND_ADMISSIONCHECK] = &api__ks_admissioncheck,
    [KIND_PROVISIONINGREQUESTCONFIG] = &api__ks_provreqconfig,
    [KIND_WORKLOADPRIORITYCLASS] = &api__ks_wpc,
    [KIND_WORKLOAD] = &api__ks_workload,
    [KIND_TOPOLOGY] = &api__ks_topology,
    [KIND_PROVISIONINGREQUEST] = &api__ks_provreq,
    [KIND_NODEPOOL] = &api__ks_nodepool,
    [KIND_SERVICE] = &api__ks_service,
    [KIND_ENDPOINTS] = &api__ks_endpoints,
    [KIND_ENDPOINTSLICE] = &api__ks_endpointslice,
};

const struct api_kind_schema *api_kind_schema(enum api_kind_id id)
{
    if ((int)id < 0 || id >= KIND__COUNT)
        return NULL;
    return kind_schemas[id];
}

const struct api_schema *api_schema_for_kind(enum api_kind_id id)
{
    const struct api_kind_schema *ks = api_kind_schema(id);
    return ks ? ks->root : NULL;
}
