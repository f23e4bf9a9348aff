/*
 * dashboard: the web dashboard's listener (`cueue server
 * --dashboard-listen`, port 8265 by default; docs/dashboard.md). It answers,
 * before the API's own dispatch:
 *   /              302 to /ui/
 *   /ui/, /ui/F    the files of web/, embedded into the binary at build time
 *                  (the generated dashboard_assets.c): nothing is read from
 *                  disk or fetched at run time
 *   /ui/events     the server-sent event stream the pages live on
 *                  (dashboard_sse.c)
 *   /login?token=T sets the token cookie and redirects to /ui/
 * and lets every other GET/HEAD through to the API (the pages read lists,
 * the visibility API and pod logs from the same origin). Anything else is
 * refused: the dashboard's port is read-only, so a page of another site
 * that posts to it changes nothing.
 *
 * Access: when the listener has a token (srv_opts.token; the API's bearer
 * token once the API has one), a request must carry it as ?token=, as the
 * cookie cueue_dashboard_token (set by /login), or as Authorization:
 * Bearer. Without a token the listener is open to whoever can reach it,
 * which is why it listens on loopback by default.
 */
#include <openssl/crypto.h>
#include <string.h>

#include "server/srv-int.h"
#include "util/xalloc.h"

#define DASH_COOKIE "cueue_dashboard_token"
/* The pages load only their own files and talk only to their own origin. */
#define DASH_CSP                                                                   \
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; " \
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

/* Compare in constant time (OpenSSL's CRYPTO_memcmp, as auth.c compares
 * the API's tokens), so the time taken says nothing of where a guess went
 * wrong. */
static bool token_equal(const char *a, size_t alen, const char *b)
{
    return alen == strlen(b) && !CRYPTO_memcmp(a, b, alen);
}

/* The value of cookie name in a Cookie header ("a=1; b=2"), or NULL; *len
 * gets its length. */
static const char *cookie_value(const char *header, const char *name, size_t *len)
{
    size_t n = strlen(name);
    for (const char *p = header; p && *p;) {
        while (*p == ' ' || *p == ';')
            p++;
        const char *end = strchr(p, ';');
        size_t l = end ? (size_t)(end - p) : strlen(p);
        if (l > n && !strncmp(p, name, n) && p[n] == '=') {
            *len = l - n - 1;
            return p + n + 1;
        }
        p = end;
    }
    return NULL;
}

static bool authorized(const struct srv_req *q)
{
    const char *want = q->srv->token;
    if (!want)
        return true;
    const char *t = srv__q(q, "token");
    if (t && token_equal(t, strlen(t), want))
        return true;
    size_t len = 0;
    const char *c = cookie_value(q->cookie, DASH_COOKIE, &len);
    if (c && token_equal(c, len, want))
        return true;
    const char *bearer = "Bearer ";
    return !strncmp(q->authorization, bearer, strlen(bearer)) &&
           token_equal(q->authorization + strlen(bearer),
                       strlen(q->authorization + strlen(bearer)), want);
}

static void redirect(struct srv_resp *r, const char *to)
{
    srv__resp_text(r, 302, "", 0);
    srv__resp_header(r, "Location", to);
}

static const struct srv_asset *asset_find(const char *path)
{
    for (size_t i = 0; i < srv__n_assets; i++)
        if (!strcmp(srv__assets[i].path, path))
            return &srv__assets[i];
    return NULL;
}

static void serve_asset(const char *rel, struct srv_resp *r)
{
    const struct srv_asset *a = asset_find(*rel ? rel : "index.html");
    if (!a) {
        srv__resp_statusf(r, 404, "NotFound", "no dashboard file \"%s\"", rel);
        return;
    }
    srv__resp_bytes(r, 200, a->data, a->len, a->content_type);
    srv__resp_header(r, "Content-Security-Policy", DASH_CSP);
    srv__resp_header(r, "X-Content-Type-Options", "nosniff");
    srv__resp_header(r, "Referrer-Policy", "no-referrer");
}

bool srv__dashboard_route(struct srv_req *q, struct srv_resp *r)
{
    const char *p = q->path;
    bool is_get = !strcmp(q->method, "GET") || !strcmp(q->method, "HEAD");
    if (!is_get) {
        srv__resp_statusf(r, 405, "MethodNotAllowed",
                          "the dashboard's port is read-only: %s is not allowed (use the API's "
                          "port to change objects)",
                          q->method);
        return true;
    }
    if (!strcmp(p, "/login")) {
        const char *t = srv__q(q, "token");
        if (!q->srv->token || !t || !token_equal(t, strlen(t), q->srv->token)) {
            srv__resp_statusf(r, 401, "Unauthorized", "the dashboard token is missing or wrong");
            return true;
        }
        char *cookie = xasprintf(DASH_COOKIE "=%s; Path=/; HttpOnly; SameSite=Strict", t);
        redirect(r, "/ui/");
        srv__resp_header(r, "Set-Cookie", cookie);
        xfree(cookie);
        return true;
    }
    if (!authorized(q)) {
        srv__resp_statusf(r, 401, "Unauthorized",
                          "the dashboard needs its token: open the login URL `cueue server` "
                          "printed at start-up");
        return true;
    }
    if (!strcmp(p, "/") || !strcmp(p, "/ui")) {
        redirect(r, "/ui/");
    } else if (!strcmp(p, "/ui/events")) {
        srv__dashboard_events(q, r);
    } else if (!strncmp(p, "/ui/", 4)) {
        serve_asset(p + 4, r);
    } else {
        return false;
    }
    return true;
}
