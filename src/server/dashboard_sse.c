/*
 * dashboard_sse: GET /ui/events on the dashboard's listener, the one
 * stream the pages live on (text/event-stream, the browser's EventSource).
 * A browser opens at most six connections to one origin, so the kinds the
 * pages show come multiplexed on this single stream rather than as one
 * `?watch=1` per kind. What it sends:
 *   event: reset    data {"resourceVersion": RV}: forget everything known
 *   data: {"type":"ADDED","object":{...}}   one per current object of each
 *                   kind below (a snapshot, kinds one after another)
 *   event: synced   data {}: the snapshot is complete
 *   data: {"type":"ADDED"|"MODIFIED"|"DELETED","object":{...}}  then every
 *                   change of those kinds, from the store's event log, in
 *                   resourceVersion order
 *   ": ping"        a comment while idle (every SSE_PING_MS)
 * Every object carries apiVersion and kind. The snapshot lists each kind
 * at its own resourceVersion and the changes start after the smallest, so
 * a change may repeat what the snapshot already showed: the pages keep
 * the newer resourceVersion of each object. When the log no longer holds
 * the stream's position (410 Expired for a watch) a new reset and snapshot
 * follow; when the connection drops, EventSource reconnects and gets one.
 * The stream ends when the client hangs up or the server stops.
 * Invariant: read only.
 */
#include <stdio.h>
#include <string.h>

#include "server/srv-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define SSE_POLL_MS 1000
#define SSE_PING_MS 15000

/* The kinds the pages show (ConfigMaps, PodTemplates and the rest stay
 * out: nothing shows them, and a ConfigMap can be large). */
static const enum api_kind_id sse_kinds[] = {
    KIND_RESOURCEFLAVOR, KIND_COHORT, KIND_CLUSTERQUEUE, KIND_LOCALQUEUE,
    KIND_ADMISSIONCHECK, KIND_WORKLOAD, KIND_JOB, KIND_RAYJOB,
    KIND_POD, KIND_NODE, KIND_NODEPOOL, KIND_PROVISIONINGREQUEST, KIND_EVENT,
};
#define SSE_N_KINDS (sizeof(sse_kinds) / sizeof(sse_kinds[0]))

struct sse {
    struct srv *srv;
    uint64_t rv;
    bool need_snapshot;
    int fd;
    int64_t last_sent_ms;
};

static bool sse_kind_shown(enum api_kind_id id)
{
    for (size_t i = 0; i < SSE_N_KINDS; i++)
        if (sse_kinds[i] == id)
            return true;
    return false;
}

static int add_to_sbuf(const char *buf, size_t n, void *data)
{
    return sbuf_add(data, buf, n) ? -1 : 0;
}

/* One `data:` message; compact JSON holds no newline, so one line. */
static void sse_emit(struct sbuf *out, const char *type, enum api_kind_id kind, json_t *obj)
{
    json_t *typed = srv__with_type(api_kind_get(kind), obj);
    json_t *ev = json_pack("{s:s, s:o}", "type", type, "object", typed);
    sbuf_adds(out, "data: ");
    json_dump_callback(ev, add_to_sbuf, out, JSON_COMPACT);
    sbuf_adds(out, "\n\n");
    json_decref(ev);
}

static void sse_snapshot(struct sse *s, struct sbuf *out)
{
    uint64_t first_rv = 0;
    json_t *lists[SSE_N_KINDS];
    for (size_t k = 0; k < SSE_N_KINDS; k++) {
        uint64_t rv = 0;
        lists[k] = store_list(s->srv->store, sse_kinds[k], NULL, &rv);
        if (!k || rv < first_rv)
            first_rv = rv;
    }
    sbuf_addf(out, "event: reset\ndata: {\"resourceVersion\":\"%llu\"}\n\n",
              (unsigned long long)first_rv);
    for (size_t k = 0; k < SSE_N_KINDS; k++) {
        size_t i;
        json_t *o;
        json_array_foreach(lists[k], i, o)
        {
            sse_emit(out, "ADDED", sse_kinds[k], o);
        }
        json_decref(lists[k]);
    }
    sbuf_adds(out, "event: synced\ndata: {}\n\n");
    s->rv = first_rv;
    s->need_snapshot = false;
}

/* The stream: block says whether to wait for changes (srv_stream.next) or
 * return SRV_STREAM_IDLE when there are none and no ping is due
 * (srv_stream.poll: the HTTP layer parks the connection, so the stream
 * holds no event-loop thread). */
static int sse_run(struct sse *s, struct sbuf *out, bool block)
{
    if (s->need_snapshot) {
        sse_snapshot(s, out);
        s->last_sent_ms = clk_now(s->srv->clock);
        return 0;
    }
    while (!atomic_load(&s->srv->stopping) && !srv__client_gone(s->fd)) {
        uint64_t before = store_rv(s->srv->store);
        struct store_events ev = {0};
        int n = store_events_since(s->srv->store, s->rv, -1, NULL, block ? SSE_POLL_MS : 0,
                                   &ev);
        if (n == CU_EGONE) {
            s->need_snapshot = true;
            return sse_run(s, out, block);
        }
        for (size_t i = 0; i < ev.n; i++) {
            const struct store_event *e = &ev.items[i];
            if (e->rv <= s->rv)
                continue;
            s->rv = e->rv;
            if (!sse_kind_shown(e->kind))
                continue;
            sse_emit(out, e->type == STORE_ADDED      ? "ADDED"
                          : e->type == STORE_MODIFIED ? "MODIFIED"
                                                      : "DELETED",
                     e->kind, e->obj);
        }
        store_events_release(&ev);
        if (n <= 0 && before > s->rv)
            s->rv = before;
        int64_t now = clk_now(s->srv->clock);
        if (!out->len && now - s->last_sent_ms >= SSE_PING_MS)
            sbuf_adds(out, ": ping\n\n");
        if (out->len) {
            s->last_sent_ms = now;
            return 0;
        }
        if (!block)
            return SRV_STREAM_IDLE;
    }
    return 1;
}

static int sse_next(void *ctx, struct sbuf *out) { return sse_run(ctx, out, true); }

static int sse_poll(void *ctx, struct sbuf *out) { return sse_run(ctx, out, false); }

static void sse_free(void *ctx)
{
    struct sse *s = ctx;
    atomic_fetch_sub(&s->srv->active_watches, 1);
    xfree(s);
}

void srv__dashboard_events(struct srv_req *q, struct srv_resp *r)
{
    r->verb = SRV_VERB_WATCH;
    struct sse *s = xcalloc(1, sizeof(*s));
    s->srv = q->srv;
    s->need_snapshot = true;
    s->fd = q->client_fd;
    atomic_fetch_add(&q->srv->active_watches, 1);
    r->code = 200;
    r->content_type = xstrdup("text/event-stream");
    r->stream.next = sse_next;
    r->stream.poll = sse_poll;
    r->stream.free = sse_free;
    r->stream.ctx = s;
}
