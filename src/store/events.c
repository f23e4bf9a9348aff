/*
 * events: the store's single ordered event log, a ring of the last
 * `history` events (one per resourceVersion, so they are contiguous), read
 * by HTTP watches and the control loop through store_events_since.
 *
 * Invariants: log.n <= log.cap; the oldest retained event has
 * resourceVersion store.rv - log.n + 1; each slot owns one reference to
 * its object.
 */
#include "store/store-int.h"

#include <string.h>

#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

void store__log_init(struct store_log *log, size_t cap)
{
    memset(log, 0, sizeof(*log));
    log->cap = cap;
}

void store__log_release(struct store_log *log)
{
    for (size_t i = 0; i < log->n; i++)
        json_decref(log->items[(log->head + i) % log->cap].obj);
    xfree(log->items);
    memset(log, 0, sizeof(*log));
}

void store__log_append(struct store *s, enum store_event_type type, enum api_kind_id kind,
                       json_t *obj)
{
    struct store_log *log = &s->log;
    s->rv++;
    struct store_event ev = {type, kind, s->rv, obj};
    if (log->n < log->cap && log->alloc == log->cap) {
        /* a full-size ring with room (store_events_trim made it) */
        log->items[(log->head + log->n) % log->cap] = ev;
        log->n++;
    } else if (log->n < log->cap) {
        /* not wrapped yet: head is 0 and slots fill in order */
        XGROW(log->items, log->alloc, log->n + 1);
        if (log->alloc > log->cap) {
            log->items = xreallocarray(log->items, log->cap, sizeof(*log->items));
            log->alloc = log->cap;
        }
        log->items[log->n++] = ev;
    } else {
        struct store_event *old = &log->items[log->head];
        json_decref(old->obj);
        *old = ev;
        log->head = (log->head + 1) % log->cap;
    }
    if (s->hold_wakeups)
        s->held_events = true;
    else
        pthread_cond_broadcast(&s->cv);
}

void store__log_pop(struct store *s)
{
    struct store_log *log = &s->log;
    s->rv--;
    if (log->n == 0) /* a history shorter than the write already dropped it */
        return;
    json_decref(log->items[(log->head + log->n - 1) % log->cap].obj);
    if (--log->n == 0)
        log->head = 0;
}

static bool event_matches(const struct store_event *ev, int kind, const char *ns)
{
    if (kind >= 0 && (int)ev->kind != kind)
        return false;
    if (ns && ns[0]) {
        const char *ens = JX_STR(ev->obj, "metadata", "namespace");
        if (!ens || strcmp(ens, ns) != 0)
            return false;
    }
    return true;
}

int store_events_since(struct store *s, uint64_t since_rv, int kind, const char *ns,
                       int timeout_ms, struct store_events *out)
{
    store__lock(s);
    store__wait_locked(s, since_rv, s->wakeups, timeout_ms);
    struct store_log *log = &s->log;
    if (since_rv >= s->rv) {
        store__unlock(s);
        return 0;
    }
    if (s->rv - since_rv > log->n) {
        store__unlock(s);
        return CU_EGONE; /* the events right after since_rv are gone */
    }
    size_t first = log->n - (size_t)(s->rv - since_rv);
    int added = 0;
    for (size_t i = first; i < log->n; i++) {
        const struct store_event *ev = &log->items[(log->head + i) % log->cap];
        if (!event_matches(ev, kind, ns))
            continue;
        XGROW(out->items, out->cap, out->n + 1);
        out->items[out->n] = *ev;
        json_incref(ev->obj);
        out->n++;
        added++;
    }
    store__unlock(s);
    return added;
}

void store_events_trim(struct store *s, uint64_t upto_rv)
{
    store__lock(s);
    struct store_log *log = &s->log;
    uint64_t oldest = s->rv - log->n + 1;
    size_t k = upto_rv < oldest ? 0 : (size_t)(upto_rv - oldest + 1);
    if (k > log->n)
        k = log->n;
    for (size_t i = 0; i < k; i++)
        json_decref(log->items[(log->head + i) % log->cap].obj);
    log->n -= k;
    if (log->n == 0) {
        log->head = 0;
    } else if (log->alloc < log->cap) {
        /* not a full-size ring yet (head is 0): keep the events at the
         * front, where the next append expects them */
        memmove(log->items, log->items + k, log->n * sizeof(*log->items));
    } else {
        log->head = (log->head + k) % log->cap;
    }
    store__unlock(s);
}

void store_events_release(struct store_events *ev)
{
    for (size_t i = 0; i < ev->n; i++)
        json_decref(ev->items[i].obj);
    xfree(ev->items);
    ev->items = NULL;
    ev->n = ev->cap = 0;
}
