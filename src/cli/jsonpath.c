/*
 * jsonpath: the subset of kubectl's JSONPath templates that people use with
 * `get -o jsonpath=...` and `wait --for=jsonpath=...`:
 *   text outside braces            printed as is
 *   {.a.b} {.a['b.c']} {.a.b\.c}   fields (a backslash escapes a dot)
 *   {.items[0]} [-1] [*] [1:3]     indexes, wildcard, slices
 *   {.a.*} {..name}                every field, recursive descent
 *   [?(@.type=="Ready")]           filters with == != (or bare existence)
 *   {range .items[*]}...{end}      iteration ({.x} inside is relative)
 *   {"\n"} {@} {$.a}               literals, current value, root
 * No library for this ships in Debian, so it is small and self-contained.
 * A template is parsed once into nodes; evaluation keeps borrowed values.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

enum jp_step_type { JP_FIELD, JP_ALLFIELDS, JP_INDEX, JP_SLICE, JP_ALL, JP_RECURSE, JP_FILTER };
enum jp_op { JP_EXISTS, JP_EQ, JP_NE };

struct jp_path;

struct jp_step {
    enum jp_step_type type;
    char *name;            /* JP_FIELD, JP_RECURSE */
    int64_t a, b;          /* JP_INDEX (a), JP_SLICE [a:b) */
    bool has_a, has_b;
    struct jp_path *lhs;   /* JP_FILTER: path from @ */
    enum jp_op op;
    json_t *rhs;           /* JP_FILTER literal */
};

struct jp_path {
    struct jp_step *steps;
    size_t n, cap;
    bool from_root; /* $ */
};

enum jp_node_type { JN_TEXT, JN_PATH, JN_RANGE, JN_END };

struct jp_node {
    enum jp_node_type type;
    char *text;          /* JN_TEXT (also string literals) */
    struct jp_path path; /* JN_PATH, JN_RANGE */
};

struct cli_jsonpath {
    struct jp_node *nodes;
    size_t n, cap;
};

struct jp_parser {
    const char *p;   /* cursor inside one {...} expression */
    const char *end; /* end of the expression */
    char *err;
    size_t errlen;
    bool failed;
};

static void perr(struct jp_parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void perr(struct jp_parser *ps, const char *fmt, ...)
{
    if (ps->failed)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err, ps->errlen, fmt, ap);
    va_end(ap);
    ps->failed = true;
}

static void path_release(struct jp_path *p);

static void step_release(struct jp_step *s)
{
    xfree(s->name);
    if (s->lhs) {
        path_release(s->lhs);
        xfree(s->lhs);
    }
    json_decref(s->rhs);
}

static void path_release(struct jp_path *p)
{
    for (size_t i = 0; i < p->n; i++)
        step_release(&p->steps[i]);
    xfree(p->steps);
    memset(p, 0, sizeof(*p));
}

static struct jp_step *add_step(struct jp_path *p, enum jp_step_type t)
{
    XGROW(p->steps, p->cap, p->n + 1);
    struct jp_step *s = &p->steps[p->n++];
    memset(s, 0, sizeof(*s));
    s->type = t;
    return s;
}

/* A field name up to '.', '[', or the end; "\." keeps a dot. */
static char *parse_name(struct jp_parser *ps)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    while (ps->p < ps->end && *ps->p != '.' && *ps->p != '[' && *ps->p != ' ' &&
           *ps->p != '=' && *ps->p != '!' && *ps->p != ')') {
        if (*ps->p == '\\' && ps->p + 1 < ps->end)
            ps->p++;
        sbuf_addc(&sb, *ps->p++);
    }
    return cli__sbuf_done(&sb);
}

/* A quoted string starting at the cursor ('...' or "..."), escapes \n \t. */
static char *parse_quoted(struct jp_parser *ps)
{
    char q = *ps->p++;
    struct sbuf sb;
    sbuf_init(&sb, 0);
    while (ps->p < ps->end && *ps->p != q) {
        char ch = *ps->p++;
        if (ch == '\\' && ps->p < ps->end) {
            ch = *ps->p++;
            ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch == 'r' ? '\r' : ch;
        }
        sbuf_addc(&sb, ch);
    }
    if (ps->p >= ps->end)
        perr(ps, "unterminated string");
    else
        ps->p++;
    return cli__sbuf_done(&sb);
}

static void skip_ws(struct jp_parser *ps)
{
    while (ps->p < ps->end && isspace((unsigned char)*ps->p))
        ps->p++;
}

static bool parse_int(struct jp_parser *ps, int64_t *out)
{
    char *e;
    long long v = strtoll(ps->p, &e, 10);
    if (e == ps->p || e > ps->end)
        return false;
    ps->p = e;
    *out = v;
    return true;
}

static void parse_path(struct jp_parser *ps, struct jp_path *out, bool in_filter);

static json_t *parse_literal(struct jp_parser *ps)
{
    skip_ws(ps);
    if (ps->p < ps->end && (*ps->p == '"' || *ps->p == '\'')) {
        char *s = parse_quoted(ps);
        json_t *v = json_string(s);
        xfree(s);
        return v;
    }
    const char *start = ps->p;
    while (ps->p < ps->end && *ps->p != ')' && !isspace((unsigned char)*ps->p))
        ps->p++;
    char *word = xstrndup(start, (size_t)(ps->p - start));
    json_t *v = NULL;
    char *e;
    double d = strtod(word, &e);
    if (!strcmp(word, "true") || !strcmp(word, "false"))
        v = json_boolean(!strcmp(word, "true"));
    else if (word[0] && !*e)
        v = json_real(d);
    else
        perr(ps, "invalid filter value %s", word);
    xfree(word);
    return v;
}

/* [?(@.a.b=="x")] with the cursor after "[?(". */
static void parse_filter(struct jp_parser *ps, struct jp_path *out)
{
    struct jp_step *s = add_step(out, JP_FILTER);
    s->lhs = xcalloc(1, sizeof(*s->lhs));
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '@')
        ps->p++;
    parse_path(ps, s->lhs, true);
    skip_ws(ps);
    if (ps->end - ps->p >= 2 && !strncmp(ps->p, "==", 2)) {
        ps->p += 2;
        s->op = JP_EQ;
    } else if (ps->end - ps->p >= 2 && !strncmp(ps->p, "!=", 2)) {
        ps->p += 2;
        s->op = JP_NE;
    } else {
        s->op = JP_EXISTS;
    }
    if (s->op != JP_EXISTS)
        s->rhs = parse_literal(ps);
    skip_ws(ps);
    if (ps->end - ps->p < 2 || ps->p[0] != ')' || ps->p[1] != ']')
        perr(ps, "unterminated filter");
    else
        ps->p += 2;
}

/* One [...] step with the cursor on '['. */
static void parse_bracket(struct jp_parser *ps, struct jp_path *out)
{
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && (*ps->p == '\'' || *ps->p == '"')) {
        add_step(out, JP_FIELD)->name = parse_quoted(ps);
    } else if (ps->end - ps->p >= 2 && ps->p[0] == '?' && ps->p[1] == '(') {
        ps->p += 2;
        parse_filter(ps, out);
        return;
    } else if (ps->p < ps->end && *ps->p == '*') {
        ps->p++;
        add_step(out, JP_ALL);
    } else {
        struct jp_step *s = add_step(out, JP_INDEX);
        s->has_a = parse_int(ps, &s->a);
        if (ps->p < ps->end && *ps->p == ':') {
            ps->p++;
            s->type = JP_SLICE;
            s->has_b = parse_int(ps, &s->b);
        } else if (!s->has_a) {
            perr(ps, "invalid array index");
        }
    }
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != ']')
        perr(ps, "missing ']'");
    else
        ps->p++;
}

static void parse_path(struct jp_parser *ps, struct jp_path *out, bool in_filter)
{
    if (ps->p < ps->end && *ps->p == '$') {
        out->from_root = true;
        ps->p++;
    } else if (ps->p < ps->end && *ps->p == '@') {
        ps->p++;
    } else if (ps->p < ps->end && isalpha((unsigned char)*ps->p)) {
        add_step(out, JP_FIELD)->name = parse_name(ps); /* "metadata.name" */
    }
    while (!ps->failed && ps->p < ps->end) {
        char ch = *ps->p;
        if (in_filter && (ch == '=' || ch == '!' || ch == ')' || isspace((unsigned char)ch)))
            return;
        if (ch == '[') {
            parse_bracket(ps, out);
        } else if (ch == '.' && ps->p + 1 < ps->end && ps->p[1] == '.') {
            ps->p += 2;
            add_step(out, JP_RECURSE)->name = parse_name(ps);
        } else if (ch == '.' && ps->p + 1 < ps->end && ps->p[1] == '*') {
            ps->p += 2;
            add_step(out, JP_ALLFIELDS);
        } else if (ch == '.') {
            ps->p++;
            if (ps->p < ps->end && *ps->p != '[' && *ps->p != '.')
                add_step(out, JP_FIELD)->name = parse_name(ps);
        } else {
            perr(ps, "unexpected character '%c'", ch);
        }
    }
}

static struct jp_node *add_node(struct cli_jsonpath *jp, enum jp_node_type t)
{
    XGROW(jp->nodes, jp->cap, jp->n + 1);
    struct jp_node *n = &jp->nodes[jp->n++];
    memset(n, 0, sizeof(*n));
    n->type = t;
    return n;
}

/* One {...} expression [start, end). */
static void parse_expr(struct cli_jsonpath *jp, struct jp_parser *ps)
{
    skip_ws(ps);
    while (ps->end > ps->p && isspace((unsigned char)ps->end[-1]))
        ps->end--;
    size_t len = (size_t)(ps->end - ps->p);
    if (len == 3 && !strncmp(ps->p, "end", 3)) {
        add_node(jp, JN_END);
    } else if (len > 6 && !strncmp(ps->p, "range ", 6)) {
        ps->p += 6;
        skip_ws(ps);
        parse_path(ps, &add_node(jp, JN_RANGE)->path, false);
    } else if (len && (*ps->p == '"' || *ps->p == '\'')) {
        add_node(jp, JN_TEXT)->text = parse_quoted(ps);
        if (ps->p != ps->end)
            perr(ps, "unexpected text after string literal");
    } else {
        parse_path(ps, &add_node(jp, JN_PATH)->path, false);
    }
}

/* The closing '}' of an expression starting at p (quotes may hold '}'). */
static const char *expr_end(const char *p)
{
    char q = 0;
    for (; *p; p++) {
        if (q) {
            if (*p == '\\' && p[1])
                p++;
            else if (*p == q)
                q = 0;
        } else if (*p == '"' || *p == '\'') {
            q = *p;
        } else if (*p == '}') {
            return p;
        }
    }
    return NULL;
}

static bool check_ranges(const struct cli_jsonpath *jp, char *err, size_t errlen)
{
    int depth = 0;
    for (size_t i = 0; i < jp->n; i++) {
        if (jp->nodes[i].type == JN_RANGE)
            depth++;
        else if (jp->nodes[i].type == JN_END && --depth < 0) {
            snprintf(err, errlen, "not in range, nothing to end");
            return false;
        }
    }
    if (depth > 0) {
        snprintf(err, errlen, "unclosed range");
        return false;
    }
    return true;
}

struct cli_jsonpath *cli__jsonpath_parse(const char *tmpl, char *err, size_t errlen)
{
    struct cli_jsonpath *jp = xcalloc(1, sizeof(*jp));
    struct jp_parser ps = {.err = err, .errlen = errlen};
    const char *p = tmpl;
    while (*p && !ps.failed) {
        const char *open = strchr(p, '{');
        if (!open) {
            add_node(jp, JN_TEXT)->text = xstrdup(p);
            break;
        }
        if (open > p)
            add_node(jp, JN_TEXT)->text = xstrndup(p, (size_t)(open - p));
        const char *close = expr_end(open + 1);
        if (!close) {
            perr(&ps, "unclosed action");
            break;
        }
        ps.p = open + 1;
        ps.end = close;
        parse_expr(jp, &ps);
        p = close + 1;
    }
    if (ps.failed || !check_ranges(jp, err, errlen)) {
        cli__jsonpath_free(jp);
        return NULL;
    }
    return jp;
}

void cli__jsonpath_free(struct cli_jsonpath *jp)
{
    if (!jp)
        return;
    for (size_t i = 0; i < jp->n; i++) {
        xfree(jp->nodes[i].text);
        path_release(&jp->nodes[i].path);
    }
    xfree(jp->nodes);
    xfree(jp);
}

/* ---- evaluation: values are borrowed, collected in JSON arrays ---- */

static void eval_path(const struct jp_path *p, const json_t *root, const json_t *cur, json_t *out);

static void recurse_collect(const json_t *v, const char *name, json_t *out)
{
    if (json_is_object(v)) {
        const char *k;
        json_t *child;
        json_t *hit = json_object_get(v, name);
        if (hit)
            json_array_append(out, hit);
        json_object_foreach((json_t *)v, k, child)
            recurse_collect(child, name, out);
    } else if (json_is_array(v)) {
        size_t i;
        json_t *child;
        json_array_foreach(v, i, child)
            recurse_collect(child, name, out);
    }
}

static bool filter_match(const struct jp_step *s, const json_t *root, const json_t *item)
{
    json_t *vals = json_array();
    eval_path(s->lhs, root, item, vals);
    bool match = false;
    for (size_t i = 0; i < json_array_size(vals) && !match; i++) {
        json_t *v = json_array_get(vals, i);
        if (s->op == JP_EXISTS) {
            match = true;
        } else if (json_is_number(v) && json_is_number(s->rhs)) {
            match = json_number_value(v) == json_number_value(s->rhs);
        } else {
            match = json_equal(v, s->rhs);
        }
    }
    if (s->op == JP_NE)
        match = json_array_size(vals) > 0 && !match;
    json_decref(vals);
    return match;
}

static void apply_index(const struct jp_step *s, const json_t *v, json_t *out)
{
    int64_t n = (int64_t)json_array_size(v);
    if (s->type == JP_INDEX) {
        int64_t i = s->a < 0 ? n + s->a : s->a;
        if (i >= 0 && i < n)
            json_array_append(out, json_array_get(v, (size_t)i));
        return;
    }
    int64_t a = s->has_a ? s->a : 0, b = s->has_b ? s->b : n;
    if (a < 0)
        a += n;
    if (b < 0)
        b += n;
    for (int64_t i = a < 0 ? 0 : a; i < b && i < n; i++)
        json_array_append(out, json_array_get(v, (size_t)i));
}

static void apply_step(const struct jp_step *s, const json_t *root, const json_t *v, json_t *out)
{
    size_t i;
    const char *k;
    json_t *child;
    switch (s->type) {
    case JP_FIELD:
        if (json_is_object(v) && (child = json_object_get(v, s->name)))
            json_array_append(out, child);
        break;
    case JP_ALLFIELDS:
        if (json_is_object(v))
            json_object_foreach((json_t *)v, k, child)
                json_array_append(out, child);
        break;
    case JP_ALL:
        if (json_is_array(v))
            json_array_extend(out, (json_t *)v);
        else if (json_is_object(v))
            json_object_foreach((json_t *)v, k, child)
                json_array_append(out, child);
        break;
    case JP_INDEX:
    case JP_SLICE:
        if (json_is_array(v))
            apply_index(s, v, out);
        break;
    case JP_RECURSE:
        recurse_collect(v, s->name, out);
        break;
    case JP_FILTER:
        if (json_is_array(v))
            json_array_foreach(v, i, child)
                if (filter_match(s, root, child))
                    json_array_append(out, child);
        break;
    }
}

static void eval_path(const struct jp_path *p, const json_t *root, const json_t *cur, json_t *out)
{
    json_t *vals = json_array();
    json_array_append(vals, (json_t *)(p->from_root ? root : cur));
    for (size_t i = 0; i < p->n; i++) {
        json_t *next = json_array();
        size_t j;
        json_t *v;
        json_array_foreach(vals, j, v)
            apply_step(&p->steps[i], root, v, next);
        json_decref(vals);
        vals = next;
    }
    json_array_extend(out, vals);
    json_decref(vals);
}

static void print_value(struct sbuf *sb, const json_t *v)
{
    if (json_is_string(v)) {
        sbuf_adds(sb, json_string_value(v));
    } else if (json_is_real(v)) {
        sbuf_addf(sb, "%.15g", json_real_value(v));
    } else {
        char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        sbuf_adds(sb, t ? t : "");
        free(t);
    }
}

/* Index of the END matching the RANGE at i. */
static size_t range_end(const struct cli_jsonpath *jp, size_t i)
{
    int depth = 0;
    for (size_t j = i; j < jp->n; j++) {
        if (jp->nodes[j].type == JN_RANGE)
            depth++;
        else if (jp->nodes[j].type == JN_END && --depth == 0)
            return j;
    }
    return jp->n;
}

static void exec_nodes(const struct cli_jsonpath *jp, size_t from, size_t to, const json_t *root,
                       const json_t *cur, struct sbuf *sb)
{
    for (size_t i = from; i < to; i++) {
        const struct jp_node *n = &jp->nodes[i];
        if (n->type == JN_TEXT) {
            sbuf_adds(sb, n->text);
        } else if (n->type == JN_PATH) {
            json_t *vals = json_array();
            eval_path(&n->path, root, cur, vals);
            for (size_t j = 0; j < json_array_size(vals); j++) {
                if (j)
                    sbuf_addc(sb, ' ');
                print_value(sb, json_array_get(vals, j));
            }
            json_decref(vals);
        } else if (n->type == JN_RANGE) {
            size_t end = range_end(jp, i);
            json_t *vals = json_array();
            eval_path(&n->path, root, cur, vals);
            /* ranging over one array value iterates its elements */
            if (json_array_size(vals) == 1 && json_is_array(json_array_get(vals, 0))) {
                json_t *arr = json_incref(json_array_get(vals, 0));
                json_decref(vals);
                vals = arr;
            }
            for (size_t j = 0; j < json_array_size(vals); j++)
                exec_nodes(jp, i + 1, end, root, json_array_get(vals, j), sb);
            json_decref(vals);
            i = end;
        }
    }
}

int cli__jsonpath_exec(const struct cli_jsonpath *jp, const json_t *root, struct sbuf *sb)
{
    exec_nodes(jp, 0, jp->n, root, root, sb);
    return 0;
}

json_t *cli__jsonpath_values(const struct cli_jsonpath *jp, const json_t *root)
{
    json_t *out = json_array();
    for (size_t i = 0; i < jp->n; i++)
        if (jp->nodes[i].type == JN_PATH)
            eval_path(&jp->nodes[i].path, root, root, out);
    return out;
}
