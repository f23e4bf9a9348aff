/*
 * fieldsel: field selectors (?fieldSelector=) as apimachinery's fields
 * package parses them: comma-separated terms `path=value`, `path==value`,
 * `path!=value`, in any order, values may be empty, and `\,` `\=` `\!` `\\`
 * escape. Paths are generic dotted paths into the object
 * (metadata.name, involvedObject.kind, spec.nodeName, status.phase), so
 * every kind supports every field its schema has; a path the kind's schema
 * does not have (a typo) is refused as Kubernetes refuses an unsupported
 * field label. Also the list filter combining them
 * with label selectors. Pure.
 */
#include <stdio.h>
#include <string.h>

#include "api/schema.h"
#include "api/selector.h"
#include "server/srv-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define FS_MAX_TERMS 64

static void term_release(struct srv_fs_term *t)
{
    xfree(t->path);
    xfree(t->value);
}

void srv_fieldsel_release(struct srv_fieldsel *fs)
{
    for (size_t i = 0; i < fs->n; i++)
        term_release(&fs->terms[i]);
    XFREE(fs->terms);
    fs->n = 0;
}

/* Split at unescaped commas; unescape into the term text. */
static int next_term(const char **p, struct sbuf *out)
{
    sbuf_reset(out);
    while (**p && **p != ',') {
        if (**p == '\\' && (*p)[1]) {
            /* keep the escape so the operator split can tell \= from = */
            sbuf_addc(out, **p);
            (*p)++;
        }
        sbuf_addc(out, **p);
        (*p)++;
    }
    if (**p == ',')
        (*p)++;
    return 0;
}

static char *unescape(const char *s, size_t n)
{
    char *o = xmalloc(n + 1), *w = o;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' && i + 1 < n)
            i++;
        *w++ = s[i];
    }
    *w = '\0';
    return o;
}

static int parse_term(const char *t, struct srv_fs_term *out, char *err, size_t errlen)
{
    size_t n = strlen(t);
    for (size_t i = 0; i < n; i++) {
        if (t[i] == '\\') {
            i++;
            continue;
        }
        size_t oplen = 0;
        enum srv_fs_op op = SRV_FS_EQ;
        if (t[i] == '!' && t[i + 1] == '=') {
            op = SRV_FS_NE;
            oplen = 2;
        } else if (t[i] == '=' && t[i + 1] == '=') {
            oplen = 2;
        } else if (t[i] == '=') {
            oplen = 1;
        }
        if (!oplen)
            continue;
        if (i == 0)
            break;
        out->path = unescape(t, i);
        out->op = op;
        out->value = unescape(t + i + oplen, n - i - oplen);
        return 0;
    }
    snprintf(err, errlen, "invalid selector: '%s'; can't understand '%s'", t, t);
    return CU_EBADREQ;
}

int srv_fieldsel_parse(const char *text, struct srv_fieldsel *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    if (!text)
        return 0;
    struct sbuf t;
    sbuf_init(&t, 1 << 16);
    const char *p = text;
    size_t cap = 0;
    int rc = 0;
    while (*p && !rc) {
        next_term(&p, &t);
        if (!t.len)
            continue; /* "a=b," and "" are fine */
        if (out->n == FS_MAX_TERMS) {
            snprintf(err, errlen, "invalid selector: more than %d terms", FS_MAX_TERMS);
            rc = CU_EBADREQ;
            break;
        }
        XGROW(out->terms, cap, out->n + 1);
        rc = parse_term(t.buf, &out->terms[out->n], err, errlen);
        if (!rc)
            out->n++;
    }
    sbuf_release(&t);
    if (rc)
        srv_fieldsel_release(out);
    return rc;
}

/* The value at a dotted path as text ("" when missing or null). */
static char *field_text(const json_t *obj, const char *path)
{
    char *p = xstrdup(path);
    const json_t *cur = obj;
    for (char *save = NULL, *seg = strtok_r(p, ".", &save); seg && cur;
         seg = strtok_r(NULL, ".", &save))
        cur = json_is_object(cur) ? json_object_get(cur, seg) : NULL;
    xfree(p);
    if (!cur || json_is_null(cur))
        return xstrdup("");
    if (json_is_string(cur))
        return xstrdup(json_string_value(cur));
    return jx_dumps(cur);
}

bool srv_fieldsel_matches(const struct srv_fieldsel *fs, const json_t *obj)
{
    for (size_t i = 0; i < fs->n; i++) {
        const struct srv_fs_term *t = &fs->terms[i];
        char *v = field_text(obj, t->path);
        bool eq = !strcmp(v, t->value);
        xfree(v);
        if (eq != (t->op == SRV_FS_EQ))
            return false;
    }
    return true;
}

bool srv_fieldsel_path_known(const struct api_kind *k, const char *path)
{
    const struct api_schema *s = api_schema_for_kind(k->id);
    char *copy = xstrdup(path), *save = NULL;
    bool known = true;
    for (char *seg = strtok_r(copy, ".", &save); seg && s; seg = strtok_r(NULL, ".", &save)) {
        while (s && s->type == SCH_ARRAY)
            s = api_schema_items(s);
        if (!s || s->type == SCH_PASSTHROUGH || s->type == SCH_ANY)
            break; /* stored as given: any path may exist */
        if (s->type == SCH_MAP) { /* the segment is a key (data.k, labels.app) */
            s = api_schema_items(s);
            continue;
        }
        if (s->type != SCH_OBJECT) {
            known = false; /* a path below a scalar */
            break;
        }
        s = api_schema_field(s, seg);
        known = s != NULL;
    }
    xfree(copy);
    return known;
}

int srv__filter_init(struct srv_filter *f, const struct srv_req *q, struct srv_resp *r,
                     const struct api_kind *k)
{
    memset(f, 0, sizeof(*f));
    char err[512];
    if (srv_fieldsel_parse(srv__q(q, "fieldSelector"), &f->fields, err, sizeof(err))) {
        srv__resp_status(r, 400, "BadRequest", err, NULL);
        return CU_EBADREQ;
    }
    for (size_t i = 0; k && i < f->fields.n; i++) {
        if (!srv_fieldsel_path_known(k, f->fields.terms[i].path)) {
            srv__resp_statusf(r, 400, "BadRequest", "field label not supported: %s",
                              f->fields.terms[i].path);
            srv_fieldsel_release(&f->fields);
            return CU_EBADREQ;
        }
    }
    const char *ls = srv__q(q, "labelSelector");
    if (ls && *ls) {
        struct diag d;
        diag_init(&d);
        if (api_label_selector_parse(ls, &f->labels, &d)) {
            char *s = diag_summary(&d);
            srv__resp_statusf(r, 400, "BadRequest", "unable to parse requirement: %s", s);
            xfree(s);
            diag_release(&d);
            srv_fieldsel_release(&f->fields);
            return CU_EBADREQ;
        }
        diag_release(&d);
        f->has_labels = true;
    }
    return 0;
}

void srv__filter_release(struct srv_filter *f)
{
    if (f->has_labels)
        api_label_selector_release(&f->labels);
    srv_fieldsel_release(&f->fields);
    f->has_labels = false;
}

bool srv__filter_matches(const struct srv_filter *f, const json_t *obj)
{
    if (!srv_fieldsel_matches(&f->fields, obj))
        return false;
    if (!f->has_labels)
        return true;
    struct api_labels l = {0};
    api_labels_from_json(JX_GET(obj, "metadata", "labels"), &l);
    bool ok = api_label_selector_matches(&f->labels, &l);
    api_labels_release(&l);
    return ok;
}
