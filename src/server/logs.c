/*
 * logs: GET /api/v1/namespaces/NS/pods/NAME/log, text/plain, from the file
 * the executor names (exec_ops.log_path: the local executor's
 * <state>/pods/<uid>/<c>.log, a Slurm task's output file).
 * Query: container (default: the only container; with several, 400 as the
 * API server answers), tailLines, limitBytes, timestamps, follow.
 * follow=true streams (chunked) what is appended until the pod reaches
 * Succeeded/Failed (or is deleted) and the file is drained.
 * timestamps=true prefixes each line with an RFC 3339 time; the file has no
 * per-line times, so lines already written get the file's modification
 * time and followed lines the time they were read (documented).
 * previous, sinceSeconds and sinceTime are accepted and ignored.
 * Memory is bounded whatever the file's size: every answer is streamed
 * (chunked) from the file in LOG_CHUNK_BYTES reads, tailLines is found by
 * reading backwards from the end, and limitBytes stops the reads.
 * Invariant: without follow, an answer ends at the file's size when the
 * request came (a log that keeps growing does not keep the answer open).
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
    if (s->exec && s->exec->ops->log_path)
        return s->exec->ops->log_path(s->exec, pod_uid, container);
    return exec_log_path(s->state_dir, pod_uid, container);
}

/* One log answer being streamed: the bytes of the file from pos, up to
 * `end` when not following, at most `limit` bytes. */
struct log_stream {
    struct srv *srv;
    char *ns, *name, *uid;
    char *path;
    int fd;              /* the log file, -1 until it exists */
    int client_fd;
    bool follow;
    bool timestamps;
    bool at_line_start;
    int64_t limit;       /* bytes left to send; -1 = no limit */
    off_t pos;           /* file offset of the next read */
    off_t end;           /* the file's size when the request came */
    int64_t mtime_ms;    /* its modification time then (timestamps of
                            the lines already written) */
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

off_t srv__log_tail_offset(int fd, off_t size, long long n)
{
    if (n < 0 || size <= 0)
        return 0;
    if (n == 0)
        return size;
    char buf[LOG_CHUNK_BYTES];
    off_t end = size;
    long long seen = 0;
    bool last = true; /* the byte at size-1: a final newline ends the last
                         line, it does not start another */
    while (end > 0) {
        off_t start = end > (off_t)sizeof(buf) ? end - (off_t)sizeof(buf) : 0;
        ssize_t got = pread(fd, buf, (size_t)(end - start), start);
        if (got <= 0)
            return 0;
        for (ssize_t i = got; i > 0; i--) {
            bool nl = buf[i - 1] == '\n';
            if (nl && !last && ++seen == n)
                return start + i;
            last = false;
        }
        end = start;
    }
    return 0;
}

/* Read the next piece of the file into out. Returns the bytes read (0 at
 * the current end of the file or of the answer). */
static ssize_t read_piece(struct log_stream *f, struct sbuf *out)
{
    if (f->fd < 0)
        return 0;
    char buf[LOG_CHUNK_BYTES];
    size_t want = sizeof(buf);
    if (f->limit >= 0 && (int64_t)want > f->limit)
        want = (size_t)f->limit;
    /* the lines there when the request came carry the file's time; a read
     * never crosses that point, so each piece has one time */
    bool existing = f->pos < f->end;
    if (existing && (off_t)want > f->end - f->pos)
        want = (size_t)(f->end - f->pos);
    if (!existing && !f->follow)
        return 0;
    ssize_t n = pread(f->fd, buf, want, f->pos);
    if (n <= 0)
        return 0;
    add_text(out, buf, (size_t)n, f->timestamps, &f->at_line_start,
             existing ? f->mtime_ms : clk_now(f->srv->clock));
    f->pos += n;
    if (f->limit > 0)
        f->limit -= n;
    return n;
}

/* block: wait for the file to grow (srv_stream.next), or return
 * SRV_STREAM_IDLE when it has not (srv_stream.poll). */
static int log_run(struct log_stream *f, struct sbuf *out, bool block)
{
    for (;;) {
        if (atomic_load(&f->srv->stopping) || srv__client_gone(f->client_fd) || !f->limit)
            return 1;
        if (f->fd < 0 && f->follow)
            f->fd = f->path ? open(f->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) : -1;
        if (read_piece(f, out) > 0)
            return 0;
        if (!f->follow)
            return 1;
        /* drained: stop once the pod is over (read the file once more after
         * seeing it done, so the last lines are not lost) */
        json_t *pod = store_get(f->srv->store, KIND_POD, f->ns, f->name);
        bool over = !pod || pod_done(pod) || strcmp(jx_or_empty(api_uid(pod)), f->uid);
        json_decref(pod);
        if (over)
            return read_piece(f, out) > 0 ? 0 : 1;
        if (!block)
            return SRV_STREAM_IDLE;
        store_wait(f->srv->store, store_rv(f->srv->store), LOG_POLL_MS);
    }
}

static int log_next(void *ctx, struct sbuf *out) { return log_run(ctx, out, true); }

static int log_poll(void *ctx, struct sbuf *out) { return log_run(ctx, out, false); }

static void log_free(void *ctx)
{
    struct log_stream *f = ctx;
    if (f->fd >= 0)
        close(f->fd);
    xfree(f->ns);
    xfree(f->name);
    xfree(f->uid);
    xfree(f->path);
    xfree(f);
}

/* Start streaming: from the start of the last tailLines lines (or the
 * beginning), to the file's current end, or on and on with follow. */
static void stream_log(struct srv_req *q, struct srv_resp *r, const json_t *pod,
                       char *path, int fd, long long tail, long long limit)
{
    struct log_stream *f = xcalloc(1, sizeof(*f));
    f->srv = q->srv;
    f->ns = xstrdup(api_namespace(pod));
    f->name = xstrdup(api_name(pod));
    f->uid = xstrdup(api_uid(pod));
    f->path = path;
    f->fd = fd;
    f->client_fd = q->client_fd;
    f->follow = srv__qbool(q, "follow");
    f->timestamps = srv__qbool(q, "timestamps");
    f->at_line_start = true;
    f->limit = limit;
    struct stat st;
    if (fd >= 0 && !fstat(fd, &st)) {
        f->end = st.st_size;
        f->mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
        f->pos = srv__log_tail_offset(fd, f->end, tail);
    }
    r->code = 200;
    r->content_type = xstrdup("text/plain; charset=utf-8");
    r->stream.next = log_next;
    r->stream.poll = log_poll;
    r->stream.free = log_free;
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
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) : -1; /* NULL: no file */
    const char *phase = JX_STR(pod, "status", "phase");
    if (fd < 0 && (!phase || !strcmp(phase, "Pending")) && !srv__qbool(q, "follow")) {
        srv__resp_statusf(r, 400, "BadRequest",
                          "container \"%s\" in pod \"%s\" is waiting to start: ContainerCreating",
                          c, rt->name);
        xfree(path);
    } else {
        stream_log(q, r, pod, path, fd, tail, limit); /* takes path and fd */
    }
    json_decref(pod);
}
