/*
 * logs: GET /api/v1/namespaces/NS/pods/NAME/log, text/plain, from the file
 * the local executor writes (exec_log_path: <state>/pods/<uid>/<c>.log).
 * Query: container (default: the only container; with several, 400 as the
 * API server answers), tailLines, limitBytes, timestamps, follow.
 * follow=true streams (chunked) what is appended until the pod reaches
 * Succeeded/Failed (or is deleted) and the file is drained.
 * timestamps=true prefixes each line with an RFC 3339 time; the file has no
 * per-line times, so lines already written get the file's modification
 * time and followed lines the time they were read (documented).
 * previous, sinceSeconds and sinceTime are accepted and ignored.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/meta.h"
#include "exec/exec.h"
#include "server/srv-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#define LOG_POLL_MS 200
#define LOG_CHUNK_BYTES 65536

char *srv__log_path(struct srv *s, const char *pod_uid, const char *container)
{
    return exec_log_path(s->state_dir, pod_uid, container);
}

struct follow {
    struct srv *srv;
    char *ns, *name, *uid;
    int fd;       /* the log file, -1 until it exists */
    char *path;
    int client_fd;
    bool timestamps;
    bool at_line_start;
    int64_t limit; /* bytes left to send; -1 = no limit */
    struct sbuf initial; /* the file's existing text, sent first */
};

static bool container_in(const json_t *list, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(list, i, c)
    {
        if (!strcmp(jx_or_empty(JX_STR(c, "name")), name))
            return true;
    }
    return false;
}

/* The container to read, or NULL after answering r with the error. */
static const char *pick_container(struct srv_req *q, struct srv_resp *r, const json_t *pod)
{
    const char *c = srv__q(q, "container");
    json_t *cs = JX_GET(pod, "spec", "containers");
    json_t *ics = JX_GET(pod, "spec", "initContainers");
    const char *name = api_name(pod);
    if (c && *c) {
        if (container_in(cs, c) || container_in(ics, c))
            return c;
        srv__resp_statusf(r, 400, "BadRequest", "container %s is not valid for pod %s", c, name);
        return NULL;
    }
    if (json_array_size(cs) == 1)
        return JX_STR(json_array_get(cs, 0), "name");
    struct sbuf sb;
    sbuf_init(&sb, 1 << 16);
    size_t i;
    json_t *it;
    json_array_foreach(cs, i, it)
    {
        sbuf_addf(&sb, "%s%s", i ? " " : "", jx_or_empty(JX_STR(it, "name")));
    }
    srv__resp_statusf(r, 400, "BadRequest",
                      "a container name must be specified for pod %s, choose one of: [%s]", name,
                      sb.buf);
    sbuf_release(&sb);
    return NULL;
}

static bool pod_done(const json_t *pod)
{
    const char *ph = JX_STR(pod, "status", "phase");
    return ph && (!strcmp(ph, "Succeeded") || !strcmp(ph, "Failed"));
}

/* Append data to out, prefixing lines with ts when asked. */
static void add_text(struct sbuf *out, const char *data, size_t n, bool timestamps,
                     bool *at_line_start, int64_t when_ms)
{
    if (!timestamps) {
        sbuf_add(out, data, n);
        return;
    }
    char ts[TIMEFMT_LEN];
    timefmt_rfc3339(when_ms, true, ts);
    for (size_t i = 0; i < n; i++) {
        if (*at_line_start) {
            sbuf_adds(out, ts);
            sbuf_addc(out, ' ');
        }
        sbuf_addc(out, data[i]);
        *at_line_start = data[i] == '\n';
    }
}

/* Offset where the last n lines start in text[0..len). */
static size_t tail_offset(const char *text, size_t len, long n)
{
    if (n < 0)
        return 0;
    if (n == 0)
        return len;
    size_t end = len;
    if (end && text[end - 1] == '\n')
        end--;
    long seen = 0;
    for (size_t i = end; i > 0; i--) {
        if (text[i - 1] == '\n' && ++seen == n)
            return i;
    }
    return 0;
}

static char *read_file(const char *path, size_t *len, int64_t *mtime_ms)
{
    struct sbuf sb;
    sbuf_init(&sb, SBUF_DEFAULT_MAX);
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        sbuf_release(&sb);
        return NULL;
    }
    struct stat st;
    *mtime_ms = fstat(fd, &st) ? 0 : (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
    char buf[LOG_CHUNK_BYTES];
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        if (sbuf_add(&sb, buf, (size_t)n))
            break;
    close(fd);
    *len = sb.len;
    char *text = sbuf_take(&sb);
    sbuf_release(&sb); /* sbuf_take re-initialises */
    return text;
}

static int follow_next(void *ctx, struct sbuf *out)
{
    struct follow *f = ctx;
    if (f->initial.len) {
        sbuf_add(out, f->initial.buf, f->initial.len);
        sbuf_reset(&f->initial);
        return 0;
    }
    for (;;) {
        if (atomic_load(&f->srv->stopping) || srv__client_gone(f->client_fd) || !f->limit)
            return 1;
        if (f->fd < 0)
            f->fd = open(f->path, O_RDONLY | O_CLOEXEC);
        if (f->fd >= 0) {
            char buf[LOG_CHUNK_BYTES];
            size_t want = sizeof(buf);
            if (f->limit > 0 && (int64_t)want > f->limit)
                want = (size_t)f->limit;
            ssize_t n = read(f->fd, buf, want);
            if (n > 0) {
                add_text(out, buf, (size_t)n, f->timestamps, &f->at_line_start,
                         clk_now(f->srv->clock));
                if (f->limit > 0)
                    f->limit -= n;
                return 0;
            }
        }
        /* drained: stop once the pod is over (re-read the file once more
         * after seeing it done, so the last lines are not lost) */
        json_t *pod = store_get(f->srv->store, KIND_POD, f->ns, f->name);
        bool over = !pod || pod_done(pod) || strcmp(jx_or_empty(api_uid(pod)), f->uid);
        json_decref(pod);
        if (over) {
            if (f->fd >= 0) {
                char buf[LOG_CHUNK_BYTES];
                ssize_t n = read(f->fd, buf, sizeof(buf));
                if (n > 0) {
                    add_text(out, buf, (size_t)n, f->timestamps, &f->at_line_start,
                             clk_now(f->srv->clock));
                    return 0;
                }
            }
            return 1;
        }
        store_wait(f->srv->store, store_rv(f->srv->store), LOG_POLL_MS);
    }
}

static void follow_free(void *ctx)
{
    struct follow *f = ctx;
    if (f->fd >= 0)
        close(f->fd);
    sbuf_release(&f->initial);
    xfree(f->ns);
    xfree(f->name);
    xfree(f->uid);
    xfree(f->path);
    xfree(f);
}

static void stream_log(struct srv_req *q, struct srv_resp *r, const json_t *pod,
                       const char *path, const char *text, size_t off, size_t len,
                       int64_t mtime_ms, int64_t limit)
{
    struct follow *f = xcalloc(1, sizeof(*f));
    f->srv = q->srv;
    f->ns = xstrdup(api_namespace(pod));
    f->name = xstrdup(api_name(pod));
    f->uid = xstrdup(api_uid(pod));
    f->path = xstrdup(path);
    f->client_fd = q->client_fd;
    f->timestamps = srv__qbool(q, "timestamps");
    f->at_line_start = true;
    f->limit = limit;
    f->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (f->fd >= 0)
        lseek(f->fd, (off_t)len, SEEK_SET);
    /* what the file already holds goes out as the first chunk */
    sbuf_init(&f->initial, 0);
    size_t n = len - off;
    if (limit >= 0 && (int64_t)n > limit)
        n = (size_t)limit;
    add_text(&f->initial, text + off, n, f->timestamps, &f->at_line_start, mtime_ms);
    if (f->limit > 0)
        f->limit -= (int64_t)n;
    r->code = 200;
    r->content_type = xstrdup("text/plain; charset=utf-8");
    r->stream.next = follow_next;
    r->stream.free = follow_free;
    r->stream.ctx = f;
}

void srv__handle_log(struct srv_req *q, struct srv_resp *r, struct srv_route *rt)
{
    r->verb = SRV_VERB_GET;
    long long tail = -1, limit = -1;
    if (srv__qint(q, r, "tailLines", 0, &tail) < 0 || srv__qint(q, r, "limitBytes", 1, &limit) < 0)
        return;
    json_t *pod = store_get(q->srv->store, KIND_POD, rt->ns, rt->name);
    if (!pod) {
        srv__resp_err(r, CU_ENOTFOUND, rt->kind, rt->name);
        return;
    }
    const char *c = pick_container(q, r, pod);
    if (!c) {
        json_decref(pod);
        return;
    }
    char *path = srv__log_path(q->srv, jx_or_empty(api_uid(pod)), c);
    size_t len = 0;
    int64_t mtime = 0;
    char *text = read_file(path, &len, &mtime);
    const char *phase = JX_STR(pod, "status", "phase");
    if (!text && (!phase || !strcmp(phase, "Pending")) && !srv__qbool(q, "follow")) {
        srv__resp_statusf(r, 400, "BadRequest",
                          "container \"%s\" in pod \"%s\" is waiting to start: ContainerCreating",
                          c, rt->name);
    } else {
        size_t off = tail_offset(text ? text : "", len, (long)tail);
        if (srv__qbool(q, "follow")) {
            stream_log(q, r, pod, path, text ? text : "", off, len, mtime, limit);
        } else {
            struct sbuf out;
            sbuf_init(&out, 0);
            size_t n = len - off;
            if (limit >= 0 && (int64_t)n > limit)
                n = (size_t)limit;
            bool ls = true;
            add_text(&out, (text ? text : "") + off, n, srv__qbool(q, "timestamps"), &ls, mtime);
            srv__resp_text(r, 200, out.buf, out.len);
            sbuf_release(&out);
        }
    }
    xfree(text);
    xfree(path);
    json_decref(pod);
}
