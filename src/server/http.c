/*
 * http: the libmicrohttpd glue. One thread per connection (watches and
 * `logs -f` hold theirs for minutes; legacy discovery sends ~6 requests in
 * parallel). A request body is capped at SRV_MAX_BODY_BYTES: a larger
 * Content-Length is answered 413 before the body is read, and a body that
 * grows past the cap is discarded and answered 413. Handlers see a
 * struct srv_req and fill a struct srv_resp; this file turns the latter
 * into an MHD response (buffered, or chunked through a content reader for
 * streams).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/srv-int.h"
#include "util/err.h"
#include "util/log.h"
#include "util/xalloc.h"

struct conn_ctx {
    struct sbuf body;
    bool too_large;
    bool answered;
};

struct stream_reader {
    struct srv *srv;
    struct srv_stream st;
    struct sbuf pending;
    size_t off;
    bool ended;
};

bool srv__client_gone(int fd)
{
    if (fd < 0)
        return false;
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};
    if (poll(&p, 1, 0) <= 0)
        return false;
    return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

static enum MHD_Result collect_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    if (key)
        json_object_set_new((json_t *)cls, key, json_string(value ? value : ""));
    return MHD_YES;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct stream_reader *sr = cls;
    while (sr->off >= sr->pending.len) {
        if (sr->ended)
            return MHD_CONTENT_READER_END_OF_STREAM;
        sbuf_reset(&sr->pending);
        sr->off = 0;
        if (sr->st.next(sr->st.ctx, &sr->pending) != 0)
            sr->ended = true;
    }
    size_t n = sr->pending.len - sr->off;
    if (n > max)
        n = max;
    memcpy(buf, sr->pending.buf + sr->off, n);
    sr->off += n;
    return (ssize_t)n;
}

static void stream_free(void *cls)
{
    struct stream_reader *sr = cls;
    if (sr->st.free)
        sr->st.free(sr->st.ctx);
    sbuf_release(&sr->pending);
    xfree(sr);
}

/* Warning: 299 - "text" with quotes and backslashes escaped (kubectl drops
 * a header whose quotes are not escaped). */
static void add_warning(struct MHD_Response *resp, const char *text)
{
    struct sbuf sb;
    sbuf_init(&sb, 8192);
    sbuf_adds(&sb, "299 - \"");
    for (const char *p = text; *p; p++) {
        if (*p == '"' || *p == '\\')
            sbuf_addc(&sb, '\\');
        sbuf_addc(&sb, (*p == '\n' || *p == '\r') ? ' ' : *p);
    }
    sbuf_addc(&sb, '"');
    MHD_add_response_header(resp, "Warning", sb.buf);
    sbuf_release(&sb);
}

static struct MHD_Response *make_response(struct srv *s, struct srv_resp *r)
{
    struct MHD_Response *resp;
    if (r->stream.next) {
        struct stream_reader *sr = xcalloc(1, sizeof(*sr));
        sr->srv = s;
        sr->st = r->stream;
        memset(&r->stream, 0, sizeof(r->stream)); /* ownership moves to MHD */
        sbuf_init(&sr->pending, 0);
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, stream_read,
                                                 sr, stream_free);
    } else {
        resp = MHD_create_response_from_buffer(r->len, r->body ? r->body : (char *)"",
                                               MHD_RESPMEM_MUST_COPY);
    }
    if (!resp)
        return NULL;
    if (r->content_type)
        MHD_add_response_header(resp, "Content-Type", r->content_type);
    MHD_add_response_header(resp, "Cache-Control", "no-cache, private");
    for (int i = 0; i < r->n_warnings; i++)
        add_warning(resp, r->warnings[i]);
    for (int i = 0; i < r->n_headers; i++)
        MHD_add_response_header(resp, r->headers[i][0], r->headers[i][1]);
    return resp;
}

static enum MHD_Result answer(struct srv *s, struct MHD_Connection *conn, struct srv_resp *r,
                              const char *method, const char *url)
{
    srv__count(s, r->verb, r->code);
    log_debug("http", "%s %s -> %d", method, url, r->code);
    struct MHD_Response *resp = make_response(s, r);
    if (!resp)
        return MHD_NO;
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)r->code, resp);
    MHD_destroy_response(resp);
    return ret;
}

static enum MHD_Result too_large(struct srv *s, struct MHD_Connection *conn,
                                 const char *method, const char *url)
{
    struct srv_resp r;
    srv__resp_init(&r);
    srv__resp_statusf(&r, 413, "RequestEntityTooLarge",
                      "the request body is too large: the limit is %zu bytes",
                      SRV_MAX_BODY_BYTES);
    enum MHD_Result ret = answer(s, conn, &r, method, url);
    srv__resp_release(&r);
    return ret;
}

static const char *header(struct MHD_Connection *conn, const char *name)
{
    const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
    return v ? v : "";
}

static enum MHD_Result handle(struct srv *s, struct MHD_Connection *conn, const char *url,
                              const char *method, struct conn_ctx *cc)
{
    json_t *query = json_object();
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, collect_arg, query);
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct srv_req q = {
        .srv = s,
        .method = method,
        .path = url,
        .query = query,
        .accept = header(conn, "Accept"),
        .content_type = header(conn, "Content-Type"),
        .body = cc->body.buf,
        .body_len = cc->body.len,
        .body_too_large = cc->too_large,
        .cookie = header(conn, "Cookie"),
        .authorization = header(conn, "Authorization"),
        .client_fd = ci ? ci->connect_fd : -1,
    };
    struct srv_resp r;
    srv__resp_init(&r);
    if (q.body_too_large)
        srv__resp_statusf(&r, 413, "RequestEntityTooLarge",
                          "the request body is too large: the limit is %zu bytes",
                          SRV_MAX_BODY_BYTES);
    else if (!s->dashboard || !srv__dashboard_route(&q, &r))
        srv__dispatch(&q, &r);
    enum MHD_Result ret = answer(s, conn, &r, method, url);
    srv__resp_release(&r);
    json_decref(query);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version;
    struct srv *s = cls;
    struct conn_ctx *cc = *con_cls;
    if (!cc) {
        cc = xcalloc(1, sizeof(*cc));
        sbuf_init(&cc->body, SRV_MAX_BODY_BYTES);
        *con_cls = cc;
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
        if (cl && strtoull(cl, NULL, 10) > SRV_MAX_BODY_BYTES) {
            cc->answered = true;
            return too_large(s, conn, method, url);
        }
        return MHD_YES;
    }
    if (*upload_data_size) {
        if (!cc->too_large && sbuf_add(&cc->body, upload_data, *upload_data_size))
            cc->too_large = true;
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (cc->answered)
        return MHD_YES;
    cc->answered = true;
    return handle(s, conn, url, method, cc);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    struct conn_ctx *cc = *con_cls;
    if (cc) {
        sbuf_release(&cc->body);
        xfree(cc);
        *con_cls = NULL;
    }
}

/* Bind and listen ourselves: clear errors, port 0, IPv4 and IPv6. */
static int open_listener(const char *addr, uint16_t port, int *fd_out, uint16_t *port_out,
                         char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof(ss));
    socklen_t sl;
    const char *a = !strcmp(addr, "localhost") ? "127.0.0.1" : addr;
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, a, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons(port);
        sl = sizeof(*s4);
    } else if (inet_pton(AF_INET6, a, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(port);
        sl = sizeof(*s6);
    } else {
        snprintf(err, errlen, "invalid --listen address \"%s\": want an IPv4 or IPv6 literal",
                 addr);
        return CU_EINVAL;
    }
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return CU_EIO;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&ss, sl) || listen(fd, 128)) {
        snprintf(err, errlen, "cannot listen on %s:%u: %s", addr, port, strerror(errno));
        close(fd);
        return CU_EIO;
    }
    struct sockaddr_storage bound;
    socklen_t bl = sizeof(bound);
    getsockname(fd, (struct sockaddr *)&bound, &bl);
    *port_out = bound.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&bound)->sin6_port)
                                           : ntohs(((struct sockaddr_in *)&bound)->sin_port);
    *fd_out = fd;
    return 0;
}

int srv_start(const struct srv_opts *opts, struct srv **out, char *err, size_t errlen)
{
    *out = NULL;
    const char *addr = opts->listen_addr ? opts->listen_addr : "127.0.0.1";
    int fd;
    uint16_t port;
    int rc = open_listener(addr, opts->port, &fd, &port, err, errlen);
    if (rc)
        return rc;
    struct srv *s = xcalloc(1, sizeof(*s));
    s->store = opts->store;
    s->ctrl = opts->ctrl;
    s->clock = opts->clock ? opts->clock : clk_real();
    s->state_dir = xstrdup(opts->state_dir);
    s->pod_policy = opts->pod_policy;
    s->exec = opts->exec;
    s->listen_addr = xstrdup(addr);
    s->port = port;
    s->listen_fd = fd;
    s->dashboard = opts->dashboard;
    s->token = opts->token ? xstrdup(opts->token) : NULL;
    pthread_mutex_init(&s->rng_mu, NULL);
    pthread_mutex_init(&s->metrics_mu, NULL);
    rng_seed_os(&s->rng);
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_POLL | MHD_USE_ITC;
    if (strchr(addr, ':'))
        flags |= MHD_USE_IPv6;
    s->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, fd,
                              MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                              MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)0,
                              MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(256 * 1024),
                              MHD_OPTION_END);
    if (!s->mhd) {
        snprintf(err, errlen, "cannot start the HTTP server on %s:%u", addr, port);
        close(fd);
        srv_stop(s);
        return CU_EIO;
    }
    *out = s;
    return 0;
}

uint16_t srv_port(const struct srv *s) { return s->port; }

void srv_stop(struct srv *s)
{
    if (!s)
        return;
    atomic_store(&s->stopping, 1);
    if (s->mhd) {
        /* quiesce first so no new connection arrives; streams notice
         * `stopping` within their poll interval and end */
        MHD_socket lfd = MHD_quiesce_daemon(s->mhd);
        if (s->store)
            store_wakeup(s->store);
        MHD_stop_daemon(s->mhd);
        if (lfd != MHD_INVALID_SOCKET)
            close(lfd);
    }
    pthread_mutex_destroy(&s->rng_mu);
    pthread_mutex_destroy(&s->metrics_mu);
    xfree(s->state_dir);
    xfree(s->listen_addr);
    xfree(s->token);
    xfree(s);
}
