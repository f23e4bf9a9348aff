/*
 * http: the libmicrohttpd glue. MHD runs its epoll event loop on a small
 * pool of threads (--http-threads); handlers run on those threads and must
 * not block for long. Streams (watch, `logs -f`) are content readers that
 * poll their source without blocking; when a stream has nothing to send,
 * its connection is suspended ("parked") and a pump thread resumes every
 * parked connection when the store changes or once a second, so a
 * thousand idle watches hold no thread.
 *
 * Limits (limits.c counts, this file answers): connections per client IP
 * and in total, streams per client and in total (a stream stops counting as
 * a connection while it lasts), request body size (a larger Content-Length
 * is answered 413 before the body is read, a body that grows past the cap
 * is discarded and answered 413), time to receive a body, and an idle
 * timeout for connections that send nothing (streams are exempt). A request
 * over a limit gets 429 TooManyRequests with Retry-After and the connection
 * is closed after the answer; nobody else is affected.
 *
 * Handlers see a struct srv_req and fill a struct srv_resp; this file turns
 * the latter into an MHD response (buffered, or chunked through a content
 * reader for streams).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "server/srv-int.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/log.h"
#include "util/xalloc.h"

#define PUMP_TICK_MS 1000 /* parked streams poll at least this often */
#define RETRY_AFTER_S 1

/* One TCP connection (MHD's socket context). */
struct sock_ctx {
    char client[INET6_ADDRSTRLEN]; /* peer IP address */
    bool streaming;                /* counted as a stream just now */
};

/* One request (MHD's con_cls). */
struct conn_ctx {
    struct sbuf body;
    bool too_large;
    bool answered;
    bool stream_slot; /* holds a stream slot of the limits table */
    int64_t start_ms; /* monotonic, when the request arrived */
    struct srv_principal *who; /* owned; the token's holder, NULL: no
                                  restriction (admin, public path, no auth) */
};

struct stream_reader {
    struct srv *srv;
    struct MHD_Connection *conn;
    struct srv_stream st;
    struct sbuf pending;
    size_t off;
    bool ended;
    bool parked; /* in srv->parked, its connection suspended */
    struct stream_reader *prev, *next;
};

static int64_t mono_ms(void)
{
    return (int64_t)(clk_mono_s() * 1000.0);
}

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

/* Park sr: suspend its connection until the pump's next sweep. Returns
 * false (nothing done) when a sweep ran since gen was read, or the server
 * stops: the caller polls again. */
static bool park(struct stream_reader *sr, uint64_t gen)
{
    struct srv *s = sr->srv;
    bool parked = false;
    pthread_mutex_lock(&s->parked_mu);
    if (!s->pump_closed && s->pump_gen == gen) {
        sr->parked = true;
        sr->prev = NULL;
        sr->next = s->parked;
        if (s->parked)
            s->parked->prev = sr;
        s->parked = sr;
        MHD_suspend_connection(sr->conn);
        parked = true;
    }
    pthread_mutex_unlock(&s->parked_mu);
    return parked;
}

static void unlink_parked(struct srv *s, struct stream_reader *sr)
{
    if (sr->prev)
        sr->prev->next = sr->next;
    else
        s->parked = sr->next;
    if (sr->next)
        sr->next->prev = sr->prev;
    sr->prev = sr->next = NULL;
    sr->parked = false;
}

/* Resume every parked stream (they poll again). Called with parked_mu. */
static void sweep_locked(struct srv *s)
{
    s->pump_gen++;
    while (s->parked) {
        struct stream_reader *sr = s->parked;
        unlink_parked(s, sr);
        MHD_resume_connection(sr->conn);
    }
}

/* The pump: sweeps after every store change and at least every
 * PUMP_TICK_MS (timeouts, bookmarks, hung-up clients, growing log files).
 * The rv and wake-up count are read before the sweep, so a change that a
 * stream's poll missed always causes one more sweep. */
static void *pump_main(void *arg)
{
    struct srv *s = arg;
    while (!atomic_load(&s->stopping)) {
        uint64_t rv = store_rv(s->store);
        uint64_t seq = store_wakeup_seq(s->store);
        pthread_mutex_lock(&s->parked_mu);
        sweep_locked(s);
        pthread_mutex_unlock(&s->parked_mu);
        store_wait_seq(s->store, rv, seq, PUMP_TICK_MS);
    }
    return NULL;
}

/* Fill sr->pending from the stream: 1 when there is data or the stream
 * ended, 0 when the connection was parked. */
static int refill(struct stream_reader *sr)
{
    for (;;) {
        sbuf_reset(&sr->pending);
        sr->off = 0;
        if (!sr->st.poll) {
            if (sr->st.next(sr->st.ctx, &sr->pending) != 0)
                sr->ended = true;
            return 1;
        }
        pthread_mutex_lock(&sr->srv->parked_mu);
        uint64_t gen = sr->srv->pump_gen;
        pthread_mutex_unlock(&sr->srv->parked_mu);
        int rc = sr->st.poll(sr->st.ctx, &sr->pending);
        if (rc == 1)
            sr->ended = true;
        if (rc != SRV_STREAM_IDLE || sr->pending.len)
            return 1;
        if (park(sr, gen))
            return 0;
    }
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)pos;
    struct stream_reader *sr = cls;
    while (sr->off >= sr->pending.len) {
        if (sr->ended)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (!refill(sr))
            return 0; /* parked: called again after the resume */
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
    pthread_mutex_lock(&sr->srv->parked_mu);
    if (sr->parked)
        unlink_parked(sr->srv, sr);
    pthread_mutex_unlock(&sr->srv->parked_mu);
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

static struct MHD_Response *make_response(struct srv *s, struct MHD_Connection *conn,
                                          struct srv_resp *r)
{
    struct MHD_Response *resp;
    if (r->stream.next) {
        struct stream_reader *sr = xcalloc(1, sizeof(*sr));
        sr->srv = s;
        sr->conn = conn;
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
    struct MHD_Response *resp = make_response(s, conn, r);
    if (!resp)
        return MHD_NO;
    if (r->code == 429) {
        char ra[16];
        snprintf(ra, sizeof(ra), "%d", RETRY_AFTER_S);
        MHD_add_response_header(resp, "Retry-After", ra);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    }
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
                      "the request body is too large: the limit is %zu bytes "
                      "(--max-request-body)",
                      s->limits.max_body_bytes);
    enum MHD_Result ret = answer(s, conn, &r, method, url);
    srv__resp_release(&r);
    return ret;
}

static const char *header(struct MHD_Connection *conn, const char *name)
{
    const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
    return v ? v : "";
}

/* The checks of a request's headers, made when they arrive, before its
 * body is read (so nobody without a token makes the server read and keep
 * a body): Host (DNS rebinding, loopback only), Origin, the bearer token.
 * Returns true to go on (*who: the token's principal, owned by the caller,
 * or NULL for an admin token, a public path or no authentication), or
 * false with r filled in. */
static bool check_headers(struct srv *s, struct MHD_Connection *conn, const char *path,
                          struct srv_resp *r, struct srv_principal **who)
{
    *who = NULL;
    const char *host = header(conn, "Host");
    if (!srv__host_allowed(s->loopback, host)) {
        srv__resp_statusf(r, 403, "Forbidden",
                          "the Host header \"%s\" is not allowed: this server listens on "
                          "loopback and answers only to loopback names (localhost, 127.0.0.1, "
                          "[::1])",
                          host);
        return false;
    }
    if (!srv__origin_allowed(header(conn, "Origin"), host, s->tls)) {
        srv__resp_statusf(r, 403, "Forbidden",
                          "cross-origin requests are not allowed (Origin \"%s\")",
                          header(conn, "Origin"));
        return false;
    }
    if (s->tokens && !srv__public_path(path)) {
        *who = srv_tokens_check(s->tokens, header(conn, "Authorization"));
        if (!*who) {
            srv__resp_status(r, 401, "Unauthorized", "Unauthorized", NULL);
            return false;
        }
        if ((*who)->admin) {
            srv_principal_free(*who);
            *who = NULL;
        }
    }
    return true;
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
    if (q.body_len && !srv__write_media_type_ok(q.method, q.content_type)) {
        srv__resp_statusf(&r, 415, "UnsupportedMediaType",
                          "the body of the request was in an unknown format - accepted media "
                          "types include: application/json, application/yaml, "
                          "application/vnd.kubernetes.protobuf (a %s with Content-Type \"%s\")",
                          q.method, q.content_type);
    } else if (q.body_too_large) {
        srv__resp_statusf(&r, 413, "RequestEntityTooLarge",
                          "the request body is too large: the limit is %zu bytes "
                          "(--max-request-body)",
                          s->limits.max_body_bytes);
    } else if (!s->dashboard || !srv__dashboard_route(&q, &r)) {
        q.principal = cc->who;
        srv__dispatch(&q, &r);
    }
    if (r.stream.next) /* a stream never times out for being quiet */
        MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
    enum MHD_Result ret = answer(s, conn, &r, method, url);
    srv__resp_release(&r);
    json_decref(query);
    return ret;
}

static struct sock_ctx *sock_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static bool query_true(struct MHD_Connection *conn, const char *name)
{
    const char *v = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, name);
    return v && (!strcmp(v, "true") || !strcmp(v, "1"));
}

/* 429 TooManyRequests for the limit named by flag; the connection closes
 * after the answer. Logged for the first refusal and then at every power
 * of two, so that a flood does not flood the log. */
static enum MHD_Result over_limit(struct srv *s, struct MHD_Connection *conn,
                                  const char *method, const char *url, const char *client,
                                  const char *flag)
{
    static atomic_ullong refusals;
    unsigned long long n = atomic_fetch_add(&refusals, 1) + 1;
    if (!(n & (n - 1)))
        log_warn("http", "%s %s from %s refused: over the limit %s (%llu refusals so far)",
                 method, url, client, flag, n);
    struct srv_resp r;
    srv__resp_init(&r);
    json_t *details = json_pack("{s:i}", "retryAfterSeconds", RETRY_AFTER_S);
    char msg[256];
    snprintf(msg, sizeof(msg),
             "too many open connections or watches from %s: over the server's limit %s", client,
             flag);
    srv__resp_status(&r, 429, "TooManyRequests", msg, details);
    enum MHD_Result ret = answer(s, conn, &r, method, url);
    srv__resp_release(&r);
    return ret;
}

/* The first call for a request (its headers, no body yet): limits by
 * client, the header checks (check_headers), then the body size. */
static enum MHD_Result on_request_start(struct srv *s, struct MHD_Connection *conn,
                                        const char *url, const char *method,
                                        struct conn_ctx *cc)
{
    struct sock_ctx *sk = sock_of(conn);
    if (sk) {
        const char *over = srv_conn_check(s->conns, sk->client);
        if (!over && (query_true(conn, "watch") || query_true(conn, "follow"))) {
            over = srv_watch_begin(s->conns, sk->client);
            if (!over)
                cc->stream_slot = sk->streaming = true;
        }
        if (over) {
            cc->answered = true;
            return over_limit(s, conn, method, url, sk->client, over);
        }
    }
    struct srv_resp r;
    srv__resp_init(&r);
    if (!check_headers(s, conn, url, &r, &cc->who)) {
        cc->answered = true;
        enum MHD_Result ret = answer(s, conn, &r, method, url);
        srv__resp_release(&r);
        return ret;
    }
    srv__resp_release(&r);
    const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
    if (cl && strtoull(cl, NULL, 10) > s->limits.max_body_bytes) {
        cc->answered = true;
        return too_large(s, conn, method, url);
    }
    return MHD_YES;
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
        sbuf_init(&cc->body, s->limits.max_body_bytes);
        cc->start_ms = mono_ms();
        *con_cls = cc;
        return on_request_start(s, conn, url, method, cc);
    }
    if (*upload_data_size) {
        if (s->limits.request_timeout_ms > 0 &&
            mono_ms() - cc->start_ms > s->limits.request_timeout_ms) {
            const struct sock_ctx *sk = sock_of(conn);
            log_warn("http", "%s %s from %s: the body took longer than %lld ms "
                     "(--request-timeout); connection closed",
                     method, url, sk ? sk->client : "?",
                     (long long)s->limits.request_timeout_ms);
            return MHD_NO;
        }
        /* a request answered before its body (401, 413, ...) keeps none */
        if (!cc->answered && !cc->too_large &&
            sbuf_add(&cc->body, upload_data, *upload_data_size))
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
    (void)toe;
    struct srv *s = cls;
    struct conn_ctx *cc = *con_cls;
    if (cc) {
        struct sock_ctx *sk = sock_of(conn);
        if (cc->stream_slot && sk) {
            srv_watch_end(s->conns, sk->client);
            sk->streaming = false;
        }
        sbuf_release(&cc->body);
        srv_principal_free(cc->who);
        xfree(cc);
        *con_cls = NULL;
    }
}

/* The client's IP address as text (an IPv4-mapped IPv6 address as IPv4). */
static void client_text(const struct sockaddr *sa, char *out, size_t outlen)
{
    snprintf(out, outlen, "?");
    if (!sa)
        return;
    if (sa->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, (socklen_t)outlen);
    } else if (sa->sa_family == AF_INET6) {
        const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(a))
            inet_ntop(AF_INET, &a->s6_addr[12], out, (socklen_t)outlen);
        else
            inet_ntop(AF_INET6, a, out, (socklen_t)outlen);
    }
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct srv *s = cls;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        struct sock_ctx *sk = xcalloc(1, sizeof(*sk));
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        client_text(ci ? ci->client_addr : NULL, sk->client, sizeof(sk->client));
        srv_conn_opened(s->conns, sk->client);
        *socket_context = sk;
    } else if (*socket_context) {
        struct sock_ctx *sk = *socket_context;
        srv_conn_closed(s->conns, sk->client, sk->streaming);
        xfree(sk);
        *socket_context = NULL;
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

/* The most connections MHD keeps open: every limit's room plus some to
 * answer 429s, within the file descriptors this process may open (the
 * soft limit is raised to the hard one; 128 stay for SQLite, logs, pods). */
static unsigned connection_cap(const struct srv_limits *l)
{
    unsigned long want = (unsigned long)l->max_connections + l->max_watches + 64;
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        if (rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            setrlimit(RLIMIT_NOFILE, &rl);
            getrlimit(RLIMIT_NOFILE, &rl);
        }
        if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want + 128) {
            unsigned long cap = rl.rlim_cur > 256 ? rl.rlim_cur - 128 : 128;
            log_warn("http", "only %lu file descriptors: at most %lu connections in all "
                     "(the limits allow %lu)", (unsigned long)rl.rlim_cur, cap, want);
            want = cap;
        }
    }
    return (unsigned)want;
}

static void log_limits(const struct srv_limits *l, unsigned cap)
{
    log_info("http",
             "limits: --max-connections=%u --max-connections-per-client=%u "
             "--max-watches=%u --max-watches-per-client=%u --max-request-body=%zu "
             "--request-timeout=%lldms --idle-timeout=%us --http-threads=%u "
             "(at most %u sockets)",
             l->max_connections, l->max_connections_per_client, l->max_watches,
             l->max_watches_per_client, l->max_body_bytes, (long long)l->request_timeout_ms,
             l->idle_timeout_s, l->threads, cap);
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
    s->job_policy = opts->job_policy;
    s->exec = opts->exec;
    s->listen_addr = xstrdup(addr);
    s->port = port;
    s->listen_fd = fd;
    s->dashboard = opts->dashboard;
    s->token = opts->token ? xstrdup(opts->token) : NULL;
    if (opts->limits)
        s->limits = *opts->limits;
    else
        srv_limits_defaults(&s->limits);
    if (s->limits.threads < 1)
        s->limits.threads = 1;
    s->conns = srv_conn_table_new(&s->limits);
    s->tokens = opts->tokens;
    s->loopback = srv__is_loopback(addr);
    pthread_mutex_init(&s->rng_mu, NULL);
    pthread_mutex_init(&s->metrics_mu, NULL);
    pthread_mutex_init(&s->parked_mu, NULL);
    rng_seed_os(&s->rng);
    unsigned cap = connection_cap(&s->limits);
    log_limits(&s->limits, cap);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC |
                     MHD_ALLOW_SUSPEND_RESUME;
    if (strchr(addr, ':'))
        flags |= MHD_USE_IPv6;
    struct MHD_OptionItem o[12];
    int n = 0;
#define OPT(opt, val, ptr) (o[n++] = (struct MHD_OptionItem){(opt), (intptr_t)(val), (ptr)})
    OPT(MHD_OPTION_LISTEN_SOCKET, fd, NULL);
    OPT(MHD_OPTION_NOTIFY_COMPLETED, on_completed, s);
    OPT(MHD_OPTION_NOTIFY_CONNECTION, on_connection, s);
    OPT(MHD_OPTION_THREAD_POOL_SIZE, s->limits.threads, NULL);
    OPT(MHD_OPTION_CONNECTION_LIMIT, cap, NULL);
    OPT(MHD_OPTION_CONNECTION_TIMEOUT, s->limits.idle_timeout_s, NULL);
    OPT(MHD_OPTION_CONNECTION_MEMORY_LIMIT, 256 * 1024, NULL);
    if (opts->tls) {
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            snprintf(err, errlen, "this libmicrohttpd has no TLS support: cannot serve HTTPS");
            close(fd);
            srv_stop(s);
            return CU_EINTERNAL;
        }
        flags |= MHD_USE_TLS;
        OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, opts->tls->key_pem);
        OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, opts->tls->cert_pem);
        s->tls = true;
    }
    OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
    s->mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_ARRAY, o,
                              MHD_OPTION_END);
    if (!s->mhd) {
        snprintf(err, errlen, "cannot start the HTTP server on %s:%u", addr, port);
        close(fd);
        srv_stop(s);
        return CU_EIO;
    }
    if (s->store && pthread_create(&s->pump, NULL, pump_main, s) == 0)
        s->pump_started = true;
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
        /* quiesce first so no new connection arrives; then no stream parks
         * any more and every parked one is resumed (MHD must not stop with
         * suspended connections): streams see `stopping` and end */
        MHD_socket lfd = MHD_quiesce_daemon(s->mhd);
        if (s->store)
            store_wakeup(s->store);
        if (s->pump_started)
            pthread_join(s->pump, NULL);
        pthread_mutex_lock(&s->parked_mu);
        s->pump_closed = true;
        sweep_locked(s);
        pthread_mutex_unlock(&s->parked_mu);
        MHD_stop_daemon(s->mhd);
        if (lfd != MHD_INVALID_SOCKET)
            close(lfd);
    }
    srv_conn_table_free(s->conns);
    pthread_mutex_destroy(&s->rng_mu);
    pthread_mutex_destroy(&s->metrics_mu);
    pthread_mutex_destroy(&s->parked_mu);
    xfree(s->state_dir);
    xfree(s->listen_addr);
    xfree(s->token);
    xfree(s);
}
