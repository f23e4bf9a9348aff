/*
 * event_ttl: v1 Events expire (Kubernetes' kube-apiserver --event-ttl,
 * default 1 hour, which it implements with etcd leases). An Event is
 * deleted ttl after the last write of it this control plane saw: every
 * ADDED or MODIFIED event of an Event object moves its deadline, and the
 * object goes when its timer, on the control plane's clock, fires at or
 * after the deadline. One timer per Event is pending at a time: a repeat
 * (an aggregated Event is written again at every occurrence) only moves
 * the deadline, and the timer that fires before it is set again for the
 * new deadline, so an Event written thousands of times within its ttl
 * holds one timer, not thousands. After a restart every stored
 * Event gets a whole ttl from the start (the resync sees it as new), as an
 * etcd lease does after a leader change. The deadlines are on the clock
 * interface (virtual in `cueue sim` and the tests), never read from the
 * Events' own timestamps, which are text for users.
 *
 * Invariants: deadlines holds one entry per Event object seen and not yet
 * deleted; its expires_ms is the latest deadline set for it; a timer for
 * it is queued at armed_ms <= expires_ms.
 */
#include <string.h>
#include <uthash.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "ctrl/ctrl-int.h"
#include "util/err.h"
#include "util/xalloc.h"

struct ttl_entry {
    UT_hash_handle hh;
    int64_t expires_ms;
    int64_t armed_ms; /* when its pending timer fires */
    char key[]; /* ns, '\x1f', name */
};

struct event_ttl {
    int rid;
    struct ttl_entry *deadlines; /* uthash by key */
};

static char *key_of(const char *ns, const char *name)
{
    return xasprintf("%s\x1f%s", ns ? ns : "", name);
}

static void forget(struct event_ttl *t, struct ttl_entry *e)
{
    HASH_DEL(t->deadlines, e);
    xfree(e);
}

static void ttl_on_event(struct ctrl *c, void *self, const struct store_event *ev)
{
    struct event_ttl *t = self;
    int64_t ttl = ctrl_cfg(c)->event_ttl_ms;
    if (ev->kind != KIND_EVENT || ttl <= 0)
        return;
    const char *ns = api_namespace(ev->obj), *name = api_name(ev->obj);
    if (!name)
        return;
    char *key = key_of(ns, name);
    struct ttl_entry *e;
    HASH_FIND_STR(t->deadlines, key, e);
    if (ev->type == STORE_DELETED) {
        if (e)
            forget(t, e);
    } else {
        if (!e) {
            size_t n = strlen(key);
            e = xcalloc(1, sizeof(*e) + n + 1); /* armed_ms 0: no timer yet */
            memcpy(e->key, key, n + 1);
            HASH_ADD(hh, t->deadlines, key, n, e);
        }
        e->expires_ms = ctrl_now(c) + ttl;
        if (!e->armed_ms) { /* new: else the pending timer re-arms (ttl_reconcile) */
            e->armed_ms = e->expires_ms;
            ctrl_enqueue_at(c, t->rid, ns, name, e->armed_ms);
        }
    }
    xfree(key);
}

static void ttl_reconcile(struct ctrl *c, void *self, const char *ns, const char *name)
{
    struct event_ttl *t = self;
    char *key = key_of(ns, name);
    struct ttl_entry *e;
    HASH_FIND_STR(t->deadlines, key, e);
    xfree(key);
    int64_t now = ctrl_now(c);
    if (!e || now < e->armed_ms)
        return; /* gone, or a timer of an earlier entry of the same name */
    if (now < e->expires_ms) { /* written again since the timer was set */
        e->armed_ms = e->expires_ms;
        ctrl_enqueue_at(c, t->rid, ns, name, e->armed_ms);
        return;
    }
    json_t *cur = store_get(ctrl_store(c), KIND_EVENT, ns, name);
    if (cur)
        store_delete(ctrl_store(c), KIND_EVENT, ns, name, api_uid(cur), NULL);
    json_decref(cur);
    forget(t, e);
}

static void ttl_free(void *self)
{
    struct event_ttl *t = self;
    struct ttl_entry *e, *tmp;
    HASH_ITER(hh, t->deadlines, e, tmp)
        forget(t, e);
    xfree(t);
}

static const struct ctrl_reconciler_ops TTL_OPS = {
    .name = "event-ttl",
    .on_event = ttl_on_event,
    .reconcile = ttl_reconcile,
    .free = ttl_free,
};

void ctrl__event_ttl_register(struct ctrl *c)
{
    struct event_ttl *t = xcalloc(1, sizeof(*t));
    t->rid = ctrl_register(c, &TTL_OPS, t);
}
