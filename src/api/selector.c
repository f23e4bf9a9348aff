/*
 * selector: label selectors (metav1.LabelSelector and the query-string form
 * of k8s.io/apimachinery/pkg/labels), node selector terms, and taint /
 * toleration matching with the scheduler's TaintToleration semantics.
 * Pure functions; parsed selectors own their strings.
 */
#include "api/selector.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "api/api-int.h"
#include "api/names.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

static const char *const LABEL_SELECTOR_OPS[] = {"In", "NotIn", "Exists", "DoesNotExist", NULL};

void api_labels_from_json(const json_t *map, struct api_labels *out)
{
    memset(out, 0, sizeof(*out));
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)map, k, v) {
        if (json_is_string(v))
            api_labels_set(out, k, json_string_value(v));
    }
}

static bool op_from_name(const char *s, enum api_sel_op *op)
{
    static const struct {
        const char *name;
        enum api_sel_op op;
    } ops[] = {{"In", SEL_IN}, {"NotIn", SEL_NOT_IN}, {"Exists", SEL_EXISTS},
               {"DoesNotExist", SEL_DOES_NOT_EXIST}, {"Gt", SEL_GT}, {"Lt", SEL_LT}};
    for (size_t i = 0; s && i < sizeof(ops) / sizeof(ops[0]); i++) {
        if (!strcmp(s, ops[i].name)) {
            *op = ops[i].op;
            return true;
        }
    }
    return false;
}

static void req_add_value(struct api_sel_req *r, const char *v)
{
    r->values = xreallocarray(r->values, r->n_values + 1, sizeof(*r->values));
    r->values[r->n_values++] = xstrdup(v);
}

/* One matchExpressions entry; problems go to d under path. */
static void expr_from_json(const json_t *e, const char *path, struct api_sel_req *r,
                           struct diag *d)
{
    memset(r, 0, sizeof(*r));
    const char *key = JX_STR(e, "key");
    const char *opname = JX_STR(e, "operator");
    r->key = xstrdup(key ? key : "");
    char *f = api__path("%s.key", path);
    const char *msg = api_check_qualified_name(r->key);
    if (msg)
        api__diag_str(d, DIAG_INVALID, f, r->key, "%s", msg);
    xfree(f);
    f = api__path("%s.operator", path);
    if (!op_from_name(opname, &r->op) || r->op == SEL_GT || r->op == SEL_LT) {
        api__diag_not_supported(d, f, opname ? opname : "", LABEL_SELECTOR_OPS);
        r->op = SEL_IN;
    }
    xfree(f);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(e, "values"), i, v) {
        if (json_is_string(v))
            req_add_value(r, json_string_value(v));
    }
    f = api__path("%s.values", path);
    if ((r->op == SEL_IN || r->op == SEL_NOT_IN) && r->n_values == 0)
        diag_add(d, DIAG_REQUIRED, f, NULL,
                 "must be specified when `operator` is 'In' or 'NotIn'");
    if ((r->op == SEL_EXISTS || r->op == SEL_DOES_NOT_EXIST) && r->n_values > 0)
        diag_add(d, DIAG_FORBIDDEN, f, NULL,
                 "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
    xfree(f);
}

int api_label_selector_from_json(const json_t *v, const char *field,
                                 struct api_label_selector *out, struct diag *d)
{
    memset(out, 0, sizeof(*out));
    size_t before = diag_count(d);
    json_t *ml = json_object_get(v, "matchLabels");
    const char *k;
    json_t *val;
    json_object_foreach(ml, k, val) {
        char *f = api__path("%s.matchLabels", field);
        const char *msg = api_check_qualified_name(k);
        if (msg)
            api__diag_str(d, DIAG_INVALID, f, k, "%s", msg);
        const char *s = json_is_string(val) ? json_string_value(val) : "";
        msg = api_check_label_value(s);
        if (msg)
            api__diag_str(d, DIAG_INVALID, f, s, "%s", msg);
        xfree(f);
        api_labels_set(&out->match_labels, k, s);
    }
    json_t *exprs = json_object_get(v, "matchExpressions");
    size_t n = json_array_size(exprs);
    out->exprs = n ? xcalloc(n, sizeof(*out->exprs)) : NULL;
    for (size_t i = 0; i < n; i++) {
        char *f = api__path("%s.matchExpressions[%zu]", field, i);
        expr_from_json(json_array_get(exprs, i), f, &out->exprs[i], d);
        out->n_exprs++;
        xfree(f);
    }
    return diag_count(d) > before ? CU_EINVAL : 0;
}

/* ---- query-string form ---- */

struct lex {
    const char *s;
    size_t i;
};

static void skip_ws(struct lex *l)
{
    while (l->s[l->i] && isspace((unsigned char)l->s[l->i]))
        l->i++;
}

/* A key or value token: anything up to a delimiter. */
static char *token(struct lex *l)
{
    skip_ws(l);
    size_t start = l->i;
    while (l->s[l->i] && !strchr(" \t,()=!<>", l->s[l->i]))
        l->i++;
    return xstrndup(l->s + start, l->i - start);
}

static bool word_at(struct lex *l, const char *w)
{
    size_t n = strlen(w);
    if (strncmp(l->s + l->i, w, n))
        return false;
    char after = l->s[l->i + n];
    if (after && !isspace((unsigned char)after) && after != '(')
        return false;
    l->i += n;
    return true;
}

/* "(a, b, c)" into r->values. */
static bool parse_set(struct lex *l, struct api_sel_req *r, const char **why)
{
    skip_ws(l);
    if (l->s[l->i] != '(') {
        *why = "expected '(' after 'in' or 'notin'";
        return false;
    }
    l->i++;
    for (;;) {
        char *v = token(l);
        req_add_value(r, v);
        xfree(v);
        skip_ws(l);
        char c = l->s[l->i];
        if (c == ',') {
            l->i++;
            continue;
        }
        if (c == ')') {
            l->i++;
            return true;
        }
        *why = "expected ',' or ')' in a set of values";
        return false;
    }
}

/* The operator and values after a key. */
static bool parse_op(struct lex *l, struct api_sel_req *r, const char **why)
{
    skip_ws(l);
    const char *p = l->s + l->i;
    char *v = NULL;
    if (!*p || *p == ',') {
        r->op = SEL_EXISTS;
        return true;
    }
    if (!strncmp(p, "==", 2) || !strncmp(p, "!=", 2)) {
        r->op = p[0] == '!' ? SEL_NOT_IN : SEL_IN;
        l->i += 2;
    } else if (*p == '=' || *p == '>' || *p == '<') {
        r->op = *p == '=' ? SEL_IN : *p == '>' ? SEL_GT : SEL_LT;
        l->i += 1;
    } else if (word_at(l, "notin")) {
        r->op = SEL_NOT_IN;
        return parse_set(l, r, why);
    } else if (word_at(l, "in")) {
        r->op = SEL_IN;
        return parse_set(l, r, why);
    } else {
        *why = "expected one of '=', '==', '!=', 'in', 'notin', '>', '<', ',' or end";
        return false;
    }
    v = token(l);
    req_add_value(r, v);
    xfree(v);
    return true;
}

static bool check_req(const struct api_sel_req *r, const char **why)
{
    if ((*why = api_check_qualified_name(r->key)))
        return false;
    for (size_t i = 0; i < r->n_values; i++) {
        if (r->op == SEL_GT || r->op == SEL_LT) {
            char *end = NULL;
            errno = 0;
            strtoll(r->values[i], &end, 10);
            if (!r->values[i][0] || *end || errno) {
                *why = "for 'Gt', 'Lt' operators, the value must be an integer";
                return false;
            }
        } else if ((*why = api_check_label_value(r->values[i]))) {
            return false;
        }
    }
    return true;
}

static bool parse_req(struct lex *l, struct api_label_selector *out, const char **why)
{
    skip_ws(l);
    bool negate = l->s[l->i] == '!';
    if (negate)
        l->i++;
    out->exprs = xreallocarray(out->exprs, out->n_exprs + 1, sizeof(*out->exprs));
    struct api_sel_req *r = &out->exprs[out->n_exprs++];
    memset(r, 0, sizeof(*r));
    r->key = token(l);
    if (!r->key[0]) {
        *why = "found no key, expected a label key";
        return false;
    }
    if (negate) {
        r->op = SEL_DOES_NOT_EXIST;
    } else if (!parse_op(l, r, why)) {
        return false;
    }
    return check_req(r, why);
}

int api_label_selector_parse(const char *text, struct api_label_selector *out,
                             struct diag *d)
{
    memset(out, 0, sizeof(*out));
    struct lex l = {text ? text : "", 0};
    skip_ws(&l);
    const char *why = NULL;
    while (l.s[l.i]) {
        if (!parse_req(&l, out, &why))
            break;
        skip_ws(&l);
        if (l.s[l.i] == ',') {
            l.i++;
            skip_ws(&l);
            if (!l.s[l.i]) {
                why = "found end after ',', expected a requirement";
                break;
            }
        } else if (l.s[l.i]) {
            why = "expected ',' between requirements";
            break;
        }
    }
    if (why) {
        diag_add(d, DIAG_SYNTAX, "", NULL, "unable to parse requirement in \"%s\" at offset %zu: %s",
                 l.s, l.i, why);
        api_label_selector_release(out);
        return CU_EBADREQ;
    }
    return 0;
}

/* ---- matching ---- */

static bool value_in(const struct api_sel_req *r, const char *v)
{
    for (size_t i = 0; i < r->n_values; i++)
        if (!strcmp(r->values[i], v))
            return true;
    return false;
}

static bool parse_i64(const char *s, long long *out)
{
    char *end = NULL;
    errno = 0;
    *out = strtoll(s, &end, 10);
    return s[0] && end && !*end && !errno;
}

bool api_sel_req_matches(const struct api_sel_req *r, const struct api_labels *labels)
{
    const char *v = api_labels_get(labels, r->key);
    long long a, b;
    switch (r->op) {
    case SEL_IN: return v && value_in(r, v);
    case SEL_NOT_IN: return !v || !value_in(r, v);
    case SEL_EXISTS: return v != NULL;
    case SEL_DOES_NOT_EXIST: return v == NULL;
    case SEL_GT:
    case SEL_LT:
        if (!v || r->n_values != 1 || !parse_i64(v, &a) || !parse_i64(r->values[0], &b))
            return false;
        return r->op == SEL_GT ? a > b : a < b;
    }
    return false;
}

bool api_label_selector_matches(const struct api_label_selector *sel,
                                const struct api_labels *labels)
{
    for (size_t i = 0; i < sel->match_labels.n; i++) {
        const char *v = api_labels_get(labels, sel->match_labels.items[i].key);
        if (!v || strcmp(v, sel->match_labels.items[i].value))
            return false;
    }
    for (size_t i = 0; i < sel->n_exprs; i++)
        if (!api_sel_req_matches(&sel->exprs[i], labels))
            return false;
    return true;
}

void api_node_term_from_json(const json_t *term, struct api_node_term *out)
{
    memset(out, 0, sizeof(*out));
    json_t *exprs = json_object_get(term, "matchExpressions");
    size_t n = json_array_size(exprs);
    out->exprs = n ? xcalloc(n, sizeof(*out->exprs)) : NULL;
    size_t i;
    json_t *e;
    json_array_foreach(exprs, i, e) {
        struct api_sel_req *r = &out->exprs[out->n_exprs++];
        r->key = xstrdup(jx_or_empty(JX_STR(e, "key")));
        if (!op_from_name(JX_STR(e, "operator"), &r->op))
            r->op = SEL_IN; /* validated documents never get here */
        size_t j;
        json_t *v;
        json_array_foreach(json_object_get(e, "values"), j, v) {
            if (json_is_string(v))
                req_add_value(r, json_string_value(v));
        }
    }
}

bool api_node_terms_match(const struct api_node_term *terms, size_t n,
                          const struct api_labels *labels)
{
    if (n == 0)
        return true;
    for (size_t t = 0; t < n; t++) {
        if (terms[t].n_exprs == 0)
            continue; /* an empty term matches no node */
        bool all = true;
        for (size_t i = 0; i < terms[t].n_exprs && all; i++)
            all = api_sel_req_matches(&terms[t].exprs[i], labels);
        if (all)
            return true;
    }
    return false;
}

/* ---- taints and tolerations ---- */

void api_taint_from_json(const json_t *v, struct api_taint *out)
{
    out->key = xstrdup(jx_or_empty(JX_STR(v, "key")));
    out->value = xstrdup(jx_or_empty(JX_STR(v, "value")));
    out->effect = xstrdup(jx_or_empty(JX_STR(v, "effect")));
}

void api_toleration_from_json(const json_t *v, struct api_toleration *out)
{
    const char *op = JX_STR(v, "operator");
    out->key = xstrdup(jx_or_empty(JX_STR(v, "key")));
    out->op = xstrdup(op && op[0] ? op : "Equal");
    out->value = xstrdup(jx_or_empty(JX_STR(v, "value")));
    out->effect = xstrdup(jx_or_empty(JX_STR(v, "effect")));
    json_t *secs = json_object_get(v, "tolerationSeconds");
    out->has_seconds = json_is_integer(secs);
    out->seconds = out->has_seconds ? (int64_t)json_integer_value(secs) : 0;
}

bool api_toleration_tolerates(const struct api_toleration *tol, const struct api_taint *taint)
{
    const char *effect = tol->effect ? tol->effect : "";
    const char *key = tol->key ? tol->key : "";
    if (effect[0] && strcmp(effect, jx_or_empty(taint->effect)))
        return false;
    if (key[0] && strcmp(key, jx_or_empty(taint->key)))
        return false;
    const char *op = tol->op && tol->op[0] ? tol->op : "Equal";
    if (!strcmp(op, "Exists"))
        return true;
    if (!strcmp(op, "Equal"))
        return !strcmp(jx_or_empty(tol->value), jx_or_empty(taint->value));
    return false;
}

bool api_tolerations_tolerate(const struct api_toleration *tols, size_t n,
                              const struct api_taint *taint)
{
    for (size_t i = 0; i < n; i++)
        if (api_toleration_tolerates(&tols[i], taint))
            return true;
    return false;
}
