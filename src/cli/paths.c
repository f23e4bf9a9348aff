/*
 * paths: the one place where the CLI builds Kubernetes API paths for the
 * kinds of api/kinds.h (/api/v1/..., /apis/GROUP/VERSION/[namespaces/NS/]
 * PLURAL[/NAME[/SUB]]), query strings, kind resolution as kubectl does it,
 * and the two reads every verb needs (one object, every page of a list).
 *
 * Invariants: every name and namespace that goes into a path passes
 * client-go's path-segment rule first (not empty, not "." or "..", no "/"
 * or "%"; refused with kubectl's words) and is percent-escaped, so no
 * user text can change which collection a request addresses; lists follow
 * metadata.continue until the server has sent every page.
 */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define CLI_PAGE_SIZE "500" /* kubectl's default --chunk-size */
#define CLI_MAX_PAGES 100000 /* a server that never stops paging is an error */

/* "/SEG" with SEG percent-escaped (RFC 3986 unreserved characters kept). */
static void add_segment(struct sbuf *sb, const char *seg)
{
    char *esc = curl_easy_escape(NULL, seg, 0);
    if (!esc)
        abort(); /* libcurl could not allocate: as xalloc does */
    sbuf_addf(sb, "/%s", esc);
    curl_free(esc);
}

int cli__path(struct cli_ctx *c, struct sbuf *sb, const struct api_kind *k, const char *ns,
              const char *name, const char *sub)
{
    if (k->namespaced && ns && cli__check_namespace(c, ns) != 0)
        return 1;
    if (name && cli__check_name(c, name) != 0)
        return 1;
    if (!k->group[0])
        sbuf_addf(sb, "/api/%s", k->version);
    else
        sbuf_addf(sb, "/apis/%s/%s", k->group, k->version);
    if (k->namespaced && ns) {
        sbuf_adds(sb, "/namespaces");
        add_segment(sb, ns);
    }
    sbuf_addf(sb, "/%s", k->plural);
    if (name)
        add_segment(sb, name);
    if (name && sub)
        sbuf_addf(sb, "/%s", sub);
    return 0;
}

int cli__pending_workloads_path(struct cli_ctx *c, struct sbuf *sb, const char *ns,
                                const char *lq)
{
    if (cli__check_namespace(c, ns) != 0 || cli__check_name(c, lq) != 0)
        return 1;
    sbuf_adds(sb, "/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces");
    add_segment(sb, ns);
    sbuf_adds(sb, "/localqueues");
    add_segment(sb, lq);
    sbuf_adds(sb, "/pendingworkloads");
    return 0;
}

void cli__query(struct sbuf *sb, const char *key, const char *value)
{
    char *esc = curl_easy_escape(NULL, value, 0);
    sbuf_addf(sb, "%c%s=%s", strchr(sb->buf, '?') ? '&' : '?', key, esc ? esc : "");
    curl_free(esc);
}

const char *cli__ns_for(const struct cli_ctx *c, const struct api_kind *k)
{
    if (!k->namespaced || c->all_ns)
        return NULL;
    return c->ns ? c->ns : CLI_DEFAULT_NAMESPACE;
}

const char *cli__kind_prefix(const struct api_kind *k)
{
    static char bufs[KIND__COUNT][128];
    char *b = bufs[k->id];
    if (!b[0]) {
        if (k->group[0])
            snprintf(b, sizeof(bufs[0]), "%s.%s", k->singular, k->group);
        else
            snprintf(b, sizeof(bufs[0]), "%s", k->singular);
    }
    return b;
}

const struct api_kind *cli__resolve_kind(struct cli_ctx *c, const char *text, const char **name,
                                         size_t *name_len)
{
    const char *slash = strchr(text, '/');
    char *kind_text = slash ? xstrndup(text, (size_t)(slash - text)) : xstrdup(text);
    const struct api_kind *k = api_kind_resolve(kind_text);
    if (!k)
        fprintf(c->err, "error: the server doesn't have a resource type \"%s\"\n", kind_text);
    xfree(kind_text);
    if (name) {
        *name = slash ? slash + 1 : NULL;
        if (name_len)
            *name_len = slash ? strlen(slash + 1) : 0;
    }
    return k;
}

size_t cli__category_kinds(const char *word, const struct api_kind **out, size_t max)
{
    size_t n = 0;
    for (int id = 0; id < KIND__COUNT; id++) {
        const struct api_kind *k = api_kind_get((enum api_kind_id)id);
        for (size_t j = 0; j < sizeof(k->categories) / sizeof(k->categories[0]); j++) {
            if (!k->categories[j])
                break;
            if (!strcmp(k->categories[j], word)) {
                if (n < max)
                    out[n] = k;
                n++;
                break;
            }
        }
    }
    return n;
}

int cli__send(struct cli_ctx *c, const char *method, const char *path, const char *ctype,
              const json_t *body, const struct cli_what *w, json_t **out)
{
    struct cli_call r;
    char *text = body ? jx_dumps(body) : NULL;
    int rc = 0;
    if (out)
        *out = NULL;
    cli__call_init(&r);
    if (cli__http(c, method, path, CLI_JSON, text ? (ctype ? ctype : CLI_JSON) : NULL, text,
                  &r) != 0) {
        rc = cli__print_unreachable(c, &r);
    } else if (cli__call_ok(&r)) {
        if (out)
            *out = json_incref(r.json);
    } else if (r.http_status == 404) {
        if (!w->quiet_404)
            cli__print_call_error(c, &r, w->k, w->name, w->verb, w->action);
        rc = CU_ENOTFOUND;
    } else {
        rc = cli__print_call_error(c, &r, w->k, w->name, w->verb, w->action);
    }
    cli__call_release(&r);
    xfree(text);
    return rc;
}

int cli__get_object(struct cli_ctx *c, const struct api_kind *k, const char *ns,
                    const char *name, bool quiet_404, json_t **out)
{
    struct sbuf path;
    struct cli_what w = {k, name, "get", NULL, quiet_404};
    *out = NULL;
    sbuf_init(&path, 0);
    int rc = cli__path(c, &path, k, ns, name, NULL);
    if (rc == 0)
        rc = cli__send(c, "GET", path.buf, NULL, NULL, &w, out);
    sbuf_release(&path);
    if (rc != 0)
        return rc == CU_ENOTFOUND ? CU_ENOTFOUND : CU_EIO;
    if (!json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        cli__error(c, "the server's answer for %s/%s is not an object", k->plural, name);
        return CU_EIO;
    }
    return 0;
}

void cli__no_resources(struct cli_ctx *c, const struct api_kind *k)
{
    if (k->namespaced && !c->all_ns)
        fprintf(c->err, "No resources found in %s namespace.\n", c->ns);
    else
        fprintf(c->err, "No resources found\n");
}

static void add_target(struct cli_targets *t, const struct api_kind *k, const char *name)
{
    XGROW(t->items, t->cap, t->n + 1);
    t->items[t->n++] = (struct cli_target){k, name};
}

/* One "KIND/NAME" argument, checked as kubectl's splitResourceTypeName does. */
static int slash_target(struct cli_ctx *c, const char *arg, struct cli_targets *out)
{
    const char *slash = strchr(arg, '/');
    if (!slash)
        return cli__usage_error(c, "there is no need to specify a resource type as a "
                                "separate argument when passing arguments in "
                                "resource/name form (e.g. 'cueue %s resource/<name>' "
                                "instead of 'cueue %s resource resource/<name>')",
                                c->verb, c->verb);
    if (strchr(slash + 1, '/'))
        return cli__error(c, "arguments in resource/name form may not have more than one slash");
    if (slash == arg || !slash[1])
        return cli__error(c, "arguments in resource/name form must have a single resource and "
                          "name");
    const char *name;
    const struct api_kind *k = cli__resolve_kind(c, arg, &name, NULL);
    if (!k || cli__check_name(c, name) != 0)
        return 1;
    add_target(out, k, name);
    return 0;
}

/* The kinds one word of "KIND[,KIND...]" stands for: a kind, or every kind
 * of a category ("all", "kueue"), as kubectl expands categories. */
static int word_kinds(struct cli_ctx *c, const char *word, const struct api_kind **ks,
                      size_t *n)
{
    const struct api_kind *k = api_kind_resolve(word);
    if (k) {
        ks[0] = k;
        *n = 1;
        return 0;
    }
    *n = cli__category_kinds(word, ks, KIND__COUNT);
    if (*n == 0)
        return cli__error(c, "the server doesn't have a resource type \"%s\"", word);
    return 0;
}

static int kind_targets(struct cli_ctx *c, const struct cli_args *a, struct cli_targets *out)
{
    for (int i = 1; i < a->n; i++) {
        if (strchr(a->v[i], '/'))
            return cli__usage_error(c, "there is no need to specify a resource type as a "
                                    "separate argument when passing arguments in "
                                    "resource/name form");
        if (cli__check_name(c, a->v[i]) != 0)
            return 1;
    }
    char *kinds = xstrdup(a->v[0]), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(kinds, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        const struct api_kind *ks[KIND__COUNT];
        size_t nk;
        rc = word_kinds(c, t, ks, &nk);
        for (size_t j = 0; rc == 0 && j < nk; j++) {
            if (a->n == 1)
                add_target(out, ks[j], NULL);
            for (int i = 1; i < a->n; i++)
                add_target(out, ks[j], a->v[i]);
        }
    }
    xfree(kinds);
    if (rc == 0 && out->n == 0)
        rc = cli__usage_error(c, "you must specify the type of resource");
    return rc;
}

int cli__parse_targets(struct cli_ctx *c, const struct cli_args *a, struct cli_targets *out)
{
    int rc = 0;
    if (a->n == 0)
        return cli__usage_error(c, "you must specify the type of resource");
    if (strchr(a->v[0], '/')) {
        for (int i = 0; rc == 0 && i < a->n; i++)
            rc = slash_target(c, a->v[i], out);
    } else {
        rc = kind_targets(c, a, out);
    }
    for (size_t i = 0; rc == 0 && i < out->n; i++)
        if (out->items[i].name && c->all_ns)
            rc = cli__error(c, "a resource cannot be retrieved by name across all namespaces");
    return rc;
}

/* Add one page's items (or Table rows) to *doc, the first page. */
static void merge_page(json_t **doc, json_t *page)
{
    if (!*doc) {
        *doc = json_incref(page);
        return;
    }
    const char *key = !strcmp(jx_or_empty(JX_STR(page, "kind")), "Table") ? "rows" : "items";
    json_t *have = json_object_get(*doc, key), *more = json_object_get(page, key);
    if (!json_is_array(more))
        return;
    if (json_is_array(have))
        json_array_extend(have, more);
    else
        json_object_set(*doc, key, more);
}

/* GET one page; returns the answer (new ref) or NULL after printing. */
static json_t *get_page(struct cli_ctx *c, const char *path, const char *accept,
                        const struct api_kind *k, const char *token)
{
    struct sbuf p;
    struct cli_call r;
    json_t *page = NULL;
    sbuf_init(&p, 0);
    sbuf_adds(&p, path);
    cli__query(&p, "limit", CLI_PAGE_SIZE);
    if (token)
        cli__query(&p, "continue", token);
    cli__call_init(&r);
    if (cli__http(c, "GET", p.buf, accept, NULL, NULL, &r) != 0)
        cli__print_unreachable(c, &r);
    else if (!cli__call_ok(&r) || !json_is_object(r.json))
        cli__print_call_error(c, &r, k, NULL, "list", NULL);
    else
        page = json_incref(r.json);
    cli__call_release(&r);
    sbuf_release(&p);
    return page;
}

int cli__list_pages(struct cli_ctx *c, const char *path, const char *accept,
                    const struct api_kind *k, json_t **doc)
{
    char *token = NULL;
    int rc = 0;
    *doc = NULL;
    for (long n = 0; rc == 0; n++) {
        json_t *page = get_page(c, path, accept, k, token);
        if (!page) {
            rc = 1;
            break;
        }
        merge_page(doc, page);
        const char *next = JX_STR(page, "metadata", "continue");
        if (next && *next && token && !strcmp(next, token))
            rc = cli__error(c, "the server sent the same continue token twice (%s)", next);
        else if (next && *next && n + 1 >= CLI_MAX_PAGES)
            rc = cli__error(c, "the server's list has more than %d pages", CLI_MAX_PAGES);
        bool more = next && *next && rc == 0;
        xfree(token);
        token = more ? xstrdup(next) : NULL;
        json_decref(page);
        if (!more)
            break;
    }
    xfree(token);
    if (rc != 0) {
        json_decref(*doc);
        *doc = NULL;
        return 1;
    }
    json_t *meta = json_object_get(*doc, "metadata");
    json_object_del(meta, "continue");
    json_object_del(meta, "remainingItemCount");
    return 0;
}

int cli__list(struct cli_ctx *c, const char *path, json_t **items, char *rv, size_t rv_len)
{
    json_t *doc;
    *items = NULL;
    if (cli__list_pages(c, path, CLI_JSON, NULL, &doc) != 0)
        return 1;
    int rc = 0;
    if (!json_is_array(JX_GET(doc, "items"))) {
        rc = cli__error(c, "the server's answer to a list is not a list");
    } else {
        *items = json_incref(JX_GET(doc, "items"));
        if (rv && rv_len)
            snprintf(rv, rv_len, "%s", jx_or_empty(JX_STR(doc, "metadata", "resourceVersion")));
    }
    json_decref(doc);
    return rc;
}

int cli__list_kind(struct cli_ctx *c, const struct api_kind *k, const char *ns,
                   const char *label_sel, const char *field_sel, json_t **items, char *rv,
                   size_t rv_len)
{
    struct sbuf path;
    *items = NULL;
    sbuf_init(&path, 0);
    int rc = cli__path(c, &path, k, ns, NULL, NULL);
    if (rc == 0 && label_sel && *label_sel)
        cli__query(&path, "labelSelector", label_sel);
    if (rc == 0 && field_sel && *field_sel)
        cli__query(&path, "fieldSelector", field_sel);
    if (rc == 0)
        rc = cli__list(c, path.buf, items, rv, rv_len);
    sbuf_release(&path);
    size_t i;
    json_t *it;
    json_array_foreach(rc ? NULL : *items, i, it) {
        if (!JX_STR(it, "apiVersion"))
            json_object_set_new(it, "apiVersion", json_string(api_kind_api_version(k)));
        if (!JX_STR(it, "kind"))
            json_object_set_new(it, "kind", json_string(k->kind));
    }
    return rc;
}
