/*
 * client: the CLI's only way to the server, HTTP/1.1 over libcurl. One easy
 * handle per context is reused so a verb's requests share a keep-alive
 * connection. Plain requests have a 5 s connect and a 30 s total limit;
 * streams (watch, logs -f) have no total limit. Response bodies are capped
 * (CLI_MAX_BODY) so a runaway answer cannot exhaust memory. Paths are
 * sent as built (CURLOPT_PATH_AS_IS): paths.c has already escaped them.
 * A server that cannot be reached is reported once per command.
 */
#include <curl/curl.h>
#include <string.h>

#include "cli/cli-int.h"
#include "util/err.h"
#include "util/xalloc.h"

#define CLI_MAX_BODY ((size_t)256 << 20)
#define CLI_CONNECT_TIMEOUT_MS 5000L
#define CLI_REQUEST_TIMEOUT_MS 30000L

void cli__ctx_release(struct cli_ctx *c)
{
    XFREE(c->server_flag);
    XFREE(c->state_dir_flag);
    XFREE(c->server);
    XFREE(c->ns);
    cli__creds_free(c->creds);
    c->creds = NULL;
    if (c->curl) {
        curl_easy_cleanup(c->curl);
        c->curl = NULL;
    }
}

void cli__call_init(struct cli_call *r)
{
    memset(r, 0, sizeof(*r));
    sbuf_init(&r->body, CLI_MAX_BODY);
}

void cli__call_release(struct cli_call *r)
{
    sbuf_release(&r->body);
    json_decref(r->json);
    r->json = NULL;
    XFREE(r->transport);
}

bool cli__call_ok(const struct cli_call *r)
{
    return r->http_status >= 200 && r->http_status < 300;
}

static size_t collect_cb(char *p, size_t size, size_t n, void *ud)
{
    struct sbuf *sb = ud;
    if (sbuf_add(sb, p, size * n) != 0)
        return 0; /* over the cap: abort the transfer */
    return size * n;
}

static CURL *handle(struct cli_ctx *c)
{
    if (!c->curl)
        c->curl = curl_easy_init();
    else
        curl_easy_reset(c->curl);
    return c->curl;
}

static struct curl_slist *base_headers(struct cli_ctx *c, const char *accept,
                                       const char *content_type)
{
    struct curl_slist *h = NULL;
    char line[512];
    const struct cli_creds *cr = cli__creds(c);
    if (cr->token) {
        char *auth = xasprintf("Authorization: Bearer %s", cr->token);
        h = curl_slist_append(h, auth);
        xfree(auth);
    }
    snprintf(line, sizeof(line), "Accept: %s", accept ? accept : CLI_JSON);
    h = curl_slist_append(h, line);
    if (content_type) {
        snprintf(line, sizeof(line), "Content-Type: %s", content_type);
        h = curl_slist_append(h, line);
    }
    h = curl_slist_append(h, "Expect:"); /* no 100-continue round trip */
    return h;
}

static void setup(struct cli_ctx *c, CURL *h, const char *url, struct curl_slist *hdrs,
                  char *errbuf)
{
    const struct cli_creds *cr = cli__creds(c);
    if (cr->ca_pem) { /* the server's own CA (kubeconfig certificate-authority-data) */
        struct curl_blob blob = {.data = cr->ca_pem, .len = strlen(cr->ca_pem),
                                 .flags = CURL_BLOB_COPY};
        curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
    }
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "cueue/" CLI_VERSION);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, CLI_CONNECT_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    /* paths go out exactly as paths.c built them: libcurl must not fold
     * "/./" or "/../" (which would turn a name into its collection) */
    curl_easy_setopt(h, CURLOPT_PATH_AS_IS, 1L);
    errbuf[0] = '\0';
}

/* Parse the collected body and record the outcome of a finished transfer.
 * A stream that breaks after a 2xx answer simply ended (the server went
 * away or closed it); a plain request that breaks is a transport error. */
static int finish(CURL *h, CURLcode cc, const char *errbuf, struct cli_call *r, bool stream,
                  bool stopped)
{
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    r->http_status = code;
    if (r->body.len) {
        json_error_t je;
        r->json = json_loadb(r->body.buf, r->body.len, JSON_DECODE_ANY, &je);
    }
    if (stopped || cc == CURLE_OK || (stream && code != 0))
        return 0;
    r->http_status = 0;
    r->transport = xstrdup(errbuf[0] ? errbuf : curl_easy_strerror(cc));
    return CU_EIO;
}

int cli__http(struct cli_ctx *c, const char *method, const char *path, const char *accept,
              const char *content_type, const char *body, struct cli_call *r)
{
    CURL *h = handle(c);
    char errbuf[CURL_ERROR_SIZE];
    char *url = xasprintf("%s%s", cli__server(c), path);
    struct curl_slist *hdrs = base_headers(c, accept, body ? content_type : NULL);
    setup(c, h, url, hdrs, errbuf);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, CLI_REQUEST_TIMEOUT_MS);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    if (body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    }
    if (!strcmp(method, "HEAD"))
        curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect_cb);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &r->body);
    CURLcode cc = curl_easy_perform(h);
    int rc = finish(h, cc, errbuf, r, false, false);
    curl_slist_free_all(hdrs);
    xfree(url);
    return rc;
}

struct stream_state {
    CURL *h;
    cli_sink_fn sink;
    void *st;
    struct sbuf *errbody;
    bool stopped;
};

static size_t stream_cb(char *p, size_t size, size_t n, void *ud)
{
    struct stream_state *s = ud;
    long code = 0;
    curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &code);
    if (code < 200 || code >= 300) {
        if (!s->errbody)
            return size * n;
        return sbuf_add(s->errbody, p, size * n) == 0 ? size * n : 0;
    }
    if (s->sink && s->sink(s->st, p, size * n) != 0) {
        s->stopped = true;
        return 0;
    }
    return size * n;
}

int cli__http_stream(struct cli_ctx *c, const char *path, const char *accept, cli_sink_fn sink,
                     void *st, struct cli_call *r)
{
    CURL *h = handle(c);
    char errbuf[CURL_ERROR_SIZE];
    char *url = xasprintf("%s%s", cli__server(c), path);
    struct curl_slist *hdrs = base_headers(c, accept, NULL);
    struct stream_state s = {h, sink, st, &r->body, false};
    setup(c, h, url, hdrs, errbuf);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, stream_cb);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &s);
    CURLcode cc = curl_easy_perform(h);
    int rc = finish(h, cc, errbuf, r, true, s.stopped);
    curl_slist_free_all(hdrs);
    xfree(url);
    return rc;
}

/* A multi-handle stream keeps its state with the easy handle (PRIVATE). */
struct multi_state {
    struct stream_state s;
    struct curl_slist *hdrs;
    char *url;
    char errbuf[CURL_ERROR_SIZE];
};

void *cli__stream_handle(struct cli_ctx *c, const char *path, cli_sink_fn sink, void *st)
{
    CURL *h = curl_easy_init();
    if (!h)
        return NULL;
    struct multi_state *m = xcalloc(1, sizeof(*m));
    m->s = (struct stream_state){h, sink, st, NULL, false};
    m->hdrs = base_headers(c, "*/*", NULL);
    m->url = xasprintf("%s%s", cli__server(c), path);
    setup(c, h, m->url, m->hdrs, m->errbuf);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, stream_cb);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &m->s);
    curl_easy_setopt(h, CURLOPT_PRIVATE, m);
    return h;
}

void cli__stream_handle_free(void *handle_)
{
    CURL *h = handle_;
    struct multi_state *m = NULL;
    if (!h)
        return;
    curl_easy_getinfo(h, CURLINFO_PRIVATE, (char **)&m);
    curl_easy_cleanup(h);
    if (m) {
        curl_slist_free_all(m->hdrs);
        xfree(m->url);
        xfree(m);
    }
}

int cli__print_unreachable(struct cli_ctx *c, const struct cli_call *r)
{
    if (c->unreachable)
        return 1;
    c->unreachable = true;
    if (c->out)
        fflush(c->out);
    fprintf(c->err,
            "error: cannot reach the cueue server at %s (%s); is `cueue server` running? "
            "(use --server URL or $CUEUE_SERVER)\n",
            cli__server(c), r->transport ? r->transport : "no response");
    return 1;
}
