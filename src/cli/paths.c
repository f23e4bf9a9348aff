/*
 * paths: Kubernetes API paths for the kinds of api/kinds.h
 * (/api/v1/..., /apis/GROUP/VERSION/[namespaces/NS/]PLURAL[/NAME]), query
 * strings, kind resolution as kubectl does it, and the two reads every verb
 * needs (one object, one list).
 */
#include <curl/curl.h>
#include <string.h>

#include "cli/cli-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

void cli__path(struct sbuf *sb, const struct api_kind *k, const char *ns, const char *name)
{
    if (!k->group[0])
        sbuf_addf(sb, "/api/%s", k->version);
    else
        sbuf_addf(sb, "/apis/%s/%s", k->group, k->version);
    if (k->namespaced && ns)
        sbuf_addf(sb, "/namespaces/%s", ns);
    sbuf_addf(sb, "/%s", k->plural);
    if (name) {
        char *esc = curl_easy_escape(NULL, name, 0);
        sbuf_addf(sb, "/%s", esc ? esc : name);
        curl_free(esc);
    }
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
    sbuf_init(&path, 0);
    cli__path(&path, k, ns, name);
    int rc = cli__send(c, "GET", path.buf, NULL, NULL, &w, out);
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

static int slash_targets(struct cli_ctx *c, const struct cli_args *a, struct cli_targets *out)
{
    for (int i = 0; i < a->n; i++) {
        const char *name;
        if (!strchr(a->v[i], '/'))
            return cli__usage_error(c, "there is no need to specify a resource type as a "
                                    "separate argument when passing arguments in "
                                    "resource/name form (e.g. 'cueue %s resource/<name>' "
                                    "instead of 'cueue %s resource resource/<name>')",
                                    c->verb, c->verb);
        const struct api_kind *k = cli__resolve_kind(c, a->v[i], &name, NULL);
        if (!k)
            return 1;
        if (!name || !*name)
            return cli__usage_error(c, "a name must follow the slash: %s", a->v[i]);
        add_target(out, k, name);
    }
    return 0;
}

int cli__parse_targets(struct cli_ctx *c, const struct cli_args *a, struct cli_targets *out)
{
    if (a->n == 0)
        return cli__usage_error(c, "you must specify the type of resource");
    if (strchr(a->v[0], '/'))
        return slash_targets(c, a, out);
    char *kinds = xstrdup(a->v[0]), *save = NULL;
    int rc = 0;
    for (char *t = strtok_r(kinds, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
        const struct api_kind *k = cli__resolve_kind(c, t, NULL, NULL);
        if (!k)
            rc = 1;
        else if (a->n == 1)
            add_target(out, k, NULL);
        for (int i = 1; k && i < a->n; i++) {
            if (strchr(a->v[i], '/')) {
                rc = cli__usage_error(c, "there is no need to specify a resource type as a "
                                      "separate argument when passing arguments in "
                                      "resource/name form");
                break;
            }
            add_target(out, k, a->v[i]);
        }
    }
    xfree(kinds);
    return rc;
}

int cli__list(struct cli_ctx *c, const char *path, json_t **items, char *rv, size_t rv_len)
{
    struct cli_call r;
    int rc = 0;
    *items = NULL;
    cli__call_init(&r);
    if (cli__http(c, "GET", path, CLI_JSON, NULL, NULL, &r) != 0) {
        rc = cli__print_unreachable(c, &r);
    } else if (!cli__call_ok(&r) || !json_is_array(JX_GET(r.json, "items"))) {
        rc = cli__print_call_error(c, &r, NULL, NULL, "list", NULL);
    } else {
        *items = json_incref(JX_GET(r.json, "items"));
        if (rv && rv_len)
            snprintf(rv, rv_len, "%s", jx_or_empty(JX_STR(r.json, "metadata", "resourceVersion")));
    }
    cli__call_release(&r);
    return rc;
}

int cli__list_kind(struct cli_ctx *c, const struct api_kind *k, const char *ns,
                   const char *label_sel, const char *field_sel, json_t **items, char *rv,
                   size_t rv_len)
{
    struct sbuf path;
    sbuf_init(&path, 0);
    cli__path(&path, k, ns, NULL);
    cli__query(&path, "limit", "500");
    if (label_sel)
        cli__query(&path, "labelSelector", label_sel);
    if (field_sel)
        cli__query(&path, "fieldSelector", field_sel);
    int rc = cli__list(c, path.buf, items, rv, rv_len);
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
