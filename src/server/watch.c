/*
 * watch: ?watch=true on a collection, streamed as newline-delimited
 * {"type","object"} events (chunked), fed by the store's event log.
 *  - resourceVersion "" or "0": synthetic ADDED for every current object,
 *    then changes after the list's RV (what the API server does for a
 *    watch without a starting point); N: changes after N; a start older
 *    than the store's retained history gets one ERROR event with a 410
 *    Expired Status and the stream ends (the client re-lists). A start
 *    that is not a 64-bit decimal is refused (400), one past the store's
 *    resourceVersion too (504 "Too large resource version").
 *  - labelSelector/fieldSelector filter; an object that stops matching is
 *    sent as DELETED, one that starts matching as ADDED (the watch cache's
 *    behaviour), so `kubectl wait`/`get -w` stay consistent.
 *  - Accept: as=Table wraps every object in a one-row Table (column
 *    definitions in the first event).
 *  - timeoutSeconds ends the stream; allowWatchBookmarks=true adds BOOKMARK
 *    events while idle. The stream also ends when the client hangs up or
 *    the server stops (checked every WATCH_POLL_MS).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "api/meta.h"
#include "server/srv-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define WATCH_POLL_MS 1000
#define WATCH_BOOKMARK_MS 30000

struct seen_key {
    char *key;
    UT_hash_handle hh;
};

struct watch {
    struct srv *srv;
    const struct api_kind *k;
    char *ns;
    struct srv_filter filter;
    bool tracking;      /* a selector is set: keep the set of matching keys */
    struct seen_key *seen;
    bool table;
    bool sent_columns;
    bool bookmarks;
    char *include;
    uint64_t rv;
    int64_t deadline_ms; /* 0 = none */
    int64_t last_sent_ms;
    int fd;
    json_t *initial;     /* synthetic ADDED objects still to send, or NULL */
    bool expired;        /* send ERROR 410 then end */
    uint64_t expired_rv;
};

static char *key_of(const json_t *obj)
{
    return xasprintf("%s/%s", jx_or_empty(api_namespace(obj)), jx_or_empty(api_name(obj)));
}

static bool seen_has(struct watch *w, const char *key)
{
    struct seen_key *e;
    HASH_FIND_STR(w->seen, key, e);
    return e != NULL;
}

static void seen_set(struct watch *w, const char *key, bool on)
{
    struct seen_key *e;
    HASH_FIND_STR(w->seen, key, e);
    if (on && !e) {
        e = xcalloc(1, sizeof(*e));
        e->key = xstrdup(key);
        HASH_ADD_KEYPTR(hh, w->seen, e->key, strlen(e->key), e);
    } else if (!on && e) {
        HASH_DEL(w->seen, e);
        xfree(e->key);
        xfree(e);
    }
}

/* json_dump_callback's sink: appends to an sbuf (a full one ends the dump) */
static int add_to_sbuf(const char *buf, size_t n, void *data)
{
    return sbuf_add(data, buf, n) ? -1 : 0;
}

static void emit(struct watch *w, struct sbuf *out, const char *type, const json_t *obj)
{
    json_t *payload;
    if (w->table) {
        json_t *one = json_pack("[O]", obj);
        uint64_t rv = strtoull(jx_or_empty(JX_STR(obj, "metadata", "resourceVersion")), NULL, 10);
        payload = srv_table_new(w->k, one, rv ? rv : w->rv,
                                clk_now(w->srv->clock), w->include, !w->sent_columns);
        w->sent_columns = true;
        json_decref(one);
    } else {
        payload = srv__with_type(w->k, (json_t *)obj);
    }
    json_t *ev = json_pack("{s:s, s:o}", "type", type, "object", payload);
    /* serialised straight into the stream's buffer (no string to copy) */
    json_dump_callback(ev, add_to_sbuf, out, JSON_COMPACT);
    sbuf_addc(out, '\n');
    json_decref(ev);
    w->last_sent_ms = clk_now(w->srv->clock);
}

static void emit_bookmark(struct watch *w, struct sbuf *out)
{
    char rvs[32];
    snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)w->rv);
    json_t *obj;
    if (w->table)
        obj = json_pack("{s:s, s:s, s:{s:s}, s:[], s:[]}", "kind", "Table", "apiVersion",
                        "meta.k8s.io/v1", "metadata", "resourceVersion", rvs,
                        "columnDefinitions", "rows");
    else
        obj = json_pack("{s:s, s:s, s:{s:s}}", "kind", w->k->kind, "apiVersion",
                        api_kind_api_version(w->k), "metadata", "resourceVersion", rvs);
    json_t *ev = json_pack("{s:s, s:o}", "type", "BOOKMARK", "object", obj);
    char *text = jx_dumps(ev);
    sbuf_adds(out, text);
    sbuf_addc(out, '\n');
    xfree(text);
    json_decref(ev);
    w->last_sent_ms = clk_now(w->srv->clock);
}

static void emit_expired(struct watch *w, struct sbuf *out)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "too old resource version: %llu (%llu)",
             (unsigned long long)w->expired_rv, (unsigned long long)store_rv(w->srv->store));
    json_t *ev = json_pack("{s:s, s:{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}}", "type", "ERROR",
                           "object", "kind", "Status", "apiVersion", "v1", "metadata", "status",
                           "Failure", "message", msg, "reason", "Expired", "code", 410);
    char *text = jx_dumps(ev);
    sbuf_adds(out, text);
    sbuf_addc(out, '\n');
    xfree(text);
    json_decref(ev);
}

/* Decide what this watcher sees for one store event. */
static void on_event(struct watch *w, struct sbuf *out, const struct store_event *e)
{
    bool match = srv__filter_matches(&w->filter, e->obj);
    const char *type = e->type == STORE_ADDED      ? "ADDED"
                       : e->type == STORE_MODIFIED ? "MODIFIED"
                                                   : "DELETED";
    if (!w->tracking) {
        emit(w, out, type, e->obj);
        return;
    }
    char *key = key_of(e->obj);
    bool was = seen_has(w, key);
    if (e->type == STORE_DELETED) {
        if (was || match)
            emit(w, out, "DELETED", e->obj);
        seen_set(w, key, false);
    } else if (match) {
        emit(w, out, was ? "MODIFIED" : "ADDED", e->obj);
        seen_set(w, key, true);
    } else if (was) {
        emit(w, out, "DELETED", e->obj);
        seen_set(w, key, false);
    }
    xfree(key);
}

static bool should_end(struct watch *w)
{
    if (atomic_load(&w->srv->stopping) || srv__client_gone(w->fd))
        return true;
    return w->deadline_ms && clk_now(w->srv->clock) >= w->deadline_ms;
}

/* The stream: block says whether to wait for events (srv_stream.next) or
 * return SRV_STREAM_IDLE when there are none (srv_stream.poll). */
static int watch_run(struct watch *w, struct sbuf *out, bool block)
{
    if (w->initial) {
        size_t i;
        json_t *o;
        json_array_foreach(w->initial, i, o)
        {
            emit(w, out, "ADDED", o);
        }
        json_decref(w->initial);
        w->initial = NULL;
        if (out->len)
            return 0;
    }
    if (w->expired) {
        emit_expired(w, out);
        return 1;
    }
    while (!should_end(w)) {
        int timeout = block ? WATCH_POLL_MS : 0;
        if (block && w->deadline_ms) {
            int64_t left = w->deadline_ms - clk_now(w->srv->clock);
            if (left < timeout)
                timeout = left > 0 ? (int)left : 0;
        }
        uint64_t before = store_rv(w->srv->store);
        struct store_events ev = {0};
        int n = store_events_since(w->srv->store, w->rv, (int)w->k->id, w->ns, timeout, &ev);
        if (n == CU_EGONE) {
            w->expired_rv = w->rv;
            emit_expired(w, out);
            return 1;
        }
        for (size_t i = 0; i < ev.n; i++) {
            if (ev.items[i].rv <= w->rv)
                continue;
            w->rv = ev.items[i].rv;
            on_event(w, out, &ev.items[i]);
        }
        store_events_release(&ev);
        if (n <= 0 && before > w->rv)
            w->rv = before; /* nothing of ours up to `before` */
        if (out->len)
            return 0;
        if (w->bookmarks && clk_now(w->srv->clock) - w->last_sent_ms >= WATCH_BOOKMARK_MS) {
            emit_bookmark(w, out);
            return 0;
        }
        if (!block)
            return SRV_STREAM_IDLE;
    }
    return 1;
}

static int watch_next(void *ctx, struct sbuf *out) { return watch_run(ctx, out, true); }

static int watch_poll(void *ctx, struct sbuf *out) { return watch_run(ctx, out, false); }

static void watch_free(void *ctx)
{
    struct watch *w = ctx;
    struct seen_key *e, *tmp;
    HASH_ITER(hh, w->seen, e, tmp)
    {
        HASH_DEL(w->seen, e);
        xfree(e->key);
        xfree(e);
    }
    srv__filter_release(&w->filter);
    json_decref(w->initial);
    atomic_fetch_sub(&w->srv->active_watches, 1);
    xfree(w->include);
    xfree(w->ns);
    xfree(w);
}

/* Fill the initial state: synthetic ADDED (no RV) or the matching set for
 * selector tracking (explicit RV). */
static void watch_start(struct watch *w, bool from_now)
{
    uint64_t list_rv = 0;
    json_t *all = store_list(w->srv->store, w->k->id, w->ns, &list_rv);
    json_t *matching = json_array();
    size_t i;
    json_t *o;
    json_array_foreach(all, i, o)
    {
        if (!srv__filter_matches(&w->filter, o))
            continue;
        json_array_append(matching, o);
        if (w->tracking) {
            char *key = key_of(o);
            seen_set(w, key, true);
            xfree(key);
        }
    }
    json_decref(all);
    if (from_now) {
        w->initial = matching;
        w->rv = list_rv;
    } else {
        json_decref(matching);
    }
}

/* The watch's starting resourceVersion (rvs, non-empty) into *start, as
 * the API server parses it: a decimal number that fits 64 bits, else 400
 * BadRequest naming the parameter. One the store has not reached yet is
 * refused the way the API server refuses it once its cache has not caught
 * up: 504 Timeout "Too large resource version: N, current: M", cause
 * ResourceVersionTooLarge (client-go re-lists on it). The store is the
 * source here, so there is nothing to wait for; starting there would skip
 * every change in between. Returns 0, or -1 after answering r. */
int srv_rv_parse(const char *rvs, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = rvs[0] >= '0' && rvs[0] <= '9' ? strtoull(rvs, &end, 10) : 0;
    if (!end || *end || errno == ERANGE)
        return -1;
    *out = v;
    return 0;
}

static int parse_start_rv(struct srv_req *q, struct srv_resp *r, const char *rvs,
                          uint64_t *start)
{
    uint64_t v;
    if (srv_rv_parse(rvs, &v)) {
        srv__resp_statusf(r, 400, "BadRequest",
                          "invalid resource version \"%.64s\": resourceVersion must be a "
                          "decimal number from 0 to 18446744073709551615",
                          rvs);
        return -1;
    }
    uint64_t current = store_rv(q->srv->store);
    if (v > current) {
        char msg[128];
        snprintf(msg, sizeof(msg), "Too large resource version: %llu, current: %llu",
                 (unsigned long long)v, (unsigned long long)current);
        json_t *details = json_pack("{s:[{s:s, s:s}], s:i}", "causes", "reason",
                                    "ResourceVersionTooLarge", "message",
                                    "Too large resource version", "retryAfterSeconds", 1);
        srv__resp_status(r, 504, "Timeout", msg, details);
        return -1;
    }
    *start = v;
    return 0;
}

void srv__handle_watch(struct srv_req *q, struct srv_resp *r, struct srv_route *rt)
{
    r->verb = SRV_VERB_WATCH;
    const char *rvs = srv__q(q, "resourceVersion");
    bool from_now = !rvs || !*rvs || !strcmp(rvs, "0");
    uint64_t start = 0;
    if (!from_now && parse_start_rv(q, r, rvs, &start))
        return;
    long long timeout_s = 0;
    if (srv__qint(q, r, "timeoutSeconds", 0, &timeout_s) < 0)
        return;
    struct watch *w = xcalloc(1, sizeof(*w));
    if (srv__filter_init(&w->filter, q, r, rt->kind)) {
        xfree(w);
        return;
    }
    w->srv = q->srv;
    w->k = rt->kind;
    w->ns = xstrdup(rt->ns);
    w->tracking = w->filter.fields.n > 0 || w->filter.has_labels;
    w->table = srv__wants_table(q->accept);
    w->bookmarks = srv__qbool(q, "allowWatchBookmarks");
    const char *inc = srv__q(q, "includeObject");
    w->include = xstrdup(inc && *inc ? inc : "Metadata");
    w->fd = q->client_fd;
    w->rv = start;
    w->last_sent_ms = clk_now(q->srv->clock);
    if (timeout_s > 0)
        w->deadline_ms = clk_now(q->srv->clock) + timeout_s * 1000LL;
    atomic_fetch_add(&q->srv->active_watches, 1);
    if (from_now || w->tracking)
        watch_start(w, from_now);
    r->code = 200;
    r->content_type = xstrdup(w->table ? "application/json;as=Table;v=v1;g=meta.k8s.io"
                                       : "application/json");
    r->stream.next = watch_next;
    r->stream.poll = watch_poll;
    r->stream.free = watch_free;
    r->stream.ctx = w;
}
