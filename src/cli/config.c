/*
 * config: where the CLI finds the server and how it authenticates. The
 * server writes its URL to <state-dir>/server.url and a kubeconfig (with
 * the admin bearer token and, with TLS, its CA) to <state-dir>/kubeconfig
 * when it starts; the CLI reads both from the same default state
 * directory, so `cueue server &` then `cueue get cq` works with no flags.
 * Explicit flags, $CUEUE_SERVER and $CUEUE_TOKEN win; the kubeconfig's token
 * and CA go only to the server the kubeconfig names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "api/decode.h"
#include "util/base64.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

char *cli__state_dir(const char *flag, char *(*getenv_fn)(const char *))
{
    const char *v;
    if (flag && *flag)
        return xstrdup(flag);
    if ((v = getenv_fn("CUEUE_STATE_DIR")) && *v)
        return xstrdup(v);
    if ((v = getenv_fn("XDG_STATE_HOME")) && *v)
        return xasprintf("%s/cueue", v);
    if ((v = getenv_fn("HOME")) && *v)
        return xasprintf("%s/.local/state/cueue", v);
    return NULL;
}

/* First line of path without trailing whitespace, or NULL. Caller frees. */
static char *read_first_line(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char line[1024];
    char *res = NULL;
    if (fgets(line, sizeof(line), f)) {
        size_t n = strcspn(line, "\r\n");
        while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
            n--;
        if (n > 0)
            res = xstrndup(line, n);
    }
    fclose(f);
    return res;
}

static char *normalise(const char *url)
{
    size_t n = strlen(url);
    while (n > 0 && url[n - 1] == '/')
        n--;
    if (!strstr(url, "://"))
        return xasprintf("http://%.*s", (int)n, url);
    return xstrndup(url, n);
}

char *cli__resolve_server(const char *server_flag, const char *state_dir_flag,
                          char *(*getenv_fn)(const char *))
{
    const char *v;
    if (server_flag && *server_flag)
        return normalise(server_flag);
    if ((v = getenv_fn("CUEUE_SERVER")) && *v)
        return normalise(v);
    char *dir = cli__state_dir(state_dir_flag, getenv_fn);
    if (dir) {
        char *path = xasprintf("%s/server.url", dir);
        char *url = read_first_line(path);
        xfree(path);
        xfree(dir);
        if (url) {
            char *res = normalise(url);
            xfree(url);
            return res;
        }
    }
    return xstrdup(CLI_DEFAULT_SERVER);
}

const char *cli__server(struct cli_ctx *c)
{
    if (!c->server)
        c->server = cli__resolve_server(c->server_flag, c->state_dir_flag, getenv);
    return c->server;
}

/* The entry of a kubeconfig list (clusters, users, contexts) named name,
 * else the first one; its member field (cluster, user, context). */
static json_t *named(json_t *doc, const char *list, const char *name, const char *field)
{
    json_t *arr = json_object_get(doc, list), *e, *first = NULL;
    size_t i;
    json_array_foreach(arr, i, e)
    {
        if (!first)
            first = e;
        const char *n = JX_STR(e, "name");
        if (name && n && !strcmp(n, name))
            return json_object_get(e, field);
    }
    return first ? json_object_get(first, field) : NULL;
}

int cli__kubeconfig_creds(const char *text, size_t len, struct cli_creds *creds)
{
    json_t *docs = NULL;
    struct diag d;
    diag_init(&d);
    int rc = api_parse_documents(text, len, "kubeconfig", &docs, &d);
    diag_release(&d);
    if (rc)
        return CU_EBADREQ;
    json_t *doc = json_array_get(docs, 0);
    const char *cur = JX_STR(doc, "current-context");
    json_t *ctx = named(doc, "contexts", cur, "context");
    json_t *user = named(doc, "users", JX_STR(ctx, "user"), "user");
    json_t *cluster = named(doc, "clusters", JX_STR(ctx, "cluster"), "cluster");
    const char *tok = JX_STR(user, "token");
    const char *ca = JX_STR(cluster, "certificate-authority-data");
    const char *srv = JX_STR(cluster, "server");
    if (srv && *srv)
        creds->server = xstrdup(srv);
    if (tok && *tok)
        creds->token = xstrdup(tok);
    if (ca && *ca)
        creds->ca_pem = (char *)cu_base64_decode(ca, strlen(ca), NULL);
    json_decref(docs);
    return 0;
}

void cli__creds_bind(struct cli_creds *creds, const char *server)
{
    char *own = creds->server ? normalise(creds->server) : NULL;
    if (!own || !server || strcmp(own, server)) {
        XFREE(creds->token);
        XFREE(creds->ca_pem);
    }
    xfree(own);
}

void cli__creds_free(struct cli_creds *creds)
{
    if (!creds)
        return;
    xfree(creds->token);
    xfree(creds->ca_pem);
    xfree(creds->server);
    xfree(creds);
}

const struct cli_creds *cli__creds(struct cli_ctx *c)
{
    if (c->creds)
        return c->creds;
    c->creds = xcalloc(1, sizeof(*c->creds));
    char *dir = cli__state_dir(c->state_dir_flag, getenv);
    if (dir) {
        char *path = xasprintf("%s/kubeconfig", dir);
        FILE *f = fopen(path, "r");
        if (f) {
            struct sbuf sb;
            sbuf_init(&sb, (size_t)1 << 20);
            char buf[4096];
            size_t n;
            while ((n = fread(buf, 1, sizeof(buf), f)) > 0 && !sbuf_add(&sb, buf, n)) {
            }
            fclose(f);
            cli__kubeconfig_creds(sb.buf, sb.len, c->creds);
            sbuf_release(&sb);
            cli__creds_bind(c->creds, cli__server(c));
        }
        xfree(path);
        xfree(dir);
    }
    const char *env = getenv("CUEUE_TOKEN");
    if (env && *env) {
        xfree(c->creds->token);
        c->creds->token = xstrdup(env);
    }
    return c->creds;
}
