/*
 * kueue/queues: ClusterQueue and LocalQueue status (kueue.md §1.2, §1.3).
 * ClusterQueue figures (Active, pending/reserving/admitted counts,
 * flavorsReservation, flavorsUsage, fairSharing) come from the engine.
 * LocalQueue figures are kept here incrementally: each Workload's last
 * contribution (state and per flavor/resource amounts of its admission) is
 * remembered, so an event replaces one contribution instead of recounting
 * the namespace. Counting follows Kueue: reservingWorkloads includes the
 * admitted ones; pendingWorkloads counts active, unfinished Workloads
 * without a reservation.
 *
 * Queues are marked on every event that may move their figures and flushed
 * once the control plane's step has settled (scheduler.c), so a queue is
 * written at most once per step however many rounds changed it. Each
 * queue remembers the document its last status write stored and the
 * figures it wrote: while the stored document is still that one (nobody
 * wrote since) and the figures are the same, the flush writes nothing
 * without building the status. A ClusterQueue knows its LocalQueues
 * (cq_state.lqs, from the LocalQueues' spec.clusterQueue as last flushed)
 * and marks them when its Active state changes.
 *
 * With ctrl_config.queue_status_batch_ms > 0, a write that would change
 * only figures (the counts, flavor usage and fair share; not the Active
 * condition, on a document that is still our last write) is deferred:
 * the queue waits in kq_queues.deferred_cq/_lq until the batch period that the
 * first such deferral started has passed (a ctrl_wake_at then), and is
 * written once with the figures of that time. This is Kueue's
 * UpdatesBatchPeriod: its ClusterQueue and LocalQueue controllers queue
 * the reconcile a Workload event asks for one second later
 * (workqueue AddAfter), so the events of that second make one status
 * update. Spec changes, other writers' status writes and Active changes
 * are written at once, as Kueue reconciles those events without delay.
 */
#include <stddef.h>
#include <string.h>

/* Workload, LocalQueue and ClusterQueue keys hashed a word at a time
 * (cu_hash_bytes, util/hash.h) rather than by uthash's byte-wise default. */
#include "util/hash.h"
#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = cu_hash_bytes((keyptr), (size_t)(keylen)))
#include <uthash.h>
/* Sparser tables than uthash's default (a bucket doubled at a chain of 10,
 * about 3 entries per bucket): a lookup steps along its chain through
 * entries that are each a cache miss, so the buckets double at a chain of
 * 5 (read where HASH_ADD expands), as the store's index does. */
#undef HASH_BKT_CAPACITY_THRESH
#define HASH_BKT_CAPACITY_THRESH 5U

#include "api/meta.h"
#include "ctrl/kueue/kueue.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

struct fr_amt {
    char *flavor;
    char *resource;
    int64_t amount;
};

struct usage {
    struct fr_amt *items;
    size_t n;
};

/* What a LocalQueue's Active condition says (lq_active). */
enum lq_act { LQ_ACT_NONE, LQ_ACT_STOPPED, LQ_ACT_NO_CQ, LQ_ACT_CQ_INACTIVE, LQ_ACT_READY };

/* The figures of a LocalQueue status write. */
struct lq_figures {
    int32_t pending, reserving, admitted;
    struct usage reserved, used;
    enum lq_act act;
};

/* A queue's last status write: the document it left (reference held, or
 * NULL) and its status's usage lists (reservation, usage; borrowed from
 * doc, NULL where it has no such array). */
struct last_write {
    json_t *doc;
    json_t *lists[2];
    bool deleting; /* doc's api_is_deleting, read when it was written (warm) */
};

/* What a Workload event reads of its queues (their names, the dirty
 * flag, the hash handle and the key it compares) is at the end of each, in
 * the same allocation as the key: the lookups and marks of an event touch
 * one or two cache lines of each, not a separate string. */
struct lq_agg {
    struct lq_figures now;     /* act unused */
    struct last_write written;
    struct lq_figures written_figs;
    char *cq; /* as last seen */
    json_t *spec;              /* the spec mark_wl_cq last read (status writes share it) */
    struct cq_state *spec_cs;  /* the ClusterQueue its spec names, or NULL */
    /* the store's resourceVersion before mark_wl_cq last looked it up (0:
     * never), found then to name spec_cs (NULL: none, or no LocalQueue):
     * while the store's is still that, nothing was written since */
    uint64_t spec_rv;
    bool dirty;                /* in kq_queues.dirty_lq */
    bool deferred;             /* in kq_queues.deferred_lq */
    char *ns;   /* into mem */
    char *name; /* into mem */
    char *key;  /* into mem: "ns/name" */
    UT_hash_handle hh;
    char mem[]; /* "ns/name" NUL ns NUL name NUL */
};

/* A ClusterQueue's last status write and its LocalQueues. */
struct cq_state {
    struct last_write written;
    struct eng_cq_status figs; /* the figures of that write */
    int lqs_active;            /* -1, or the Active state its LocalQueues were marked for */
    uint64_t figs_pass;        /* the flush pass in which figs were the engine's */
    struct kq_set *lqs;        /* LocalQueue keys whose spec.clusterQueue is name */
    bool dirty;                /* in kq_queues.dirty_cq */
    bool deferred;             /* in kq_queues.deferred_cq */
    UT_hash_handle hh;
    char name[]; /* the hash key */
};

enum wl_st { WS_NONE, WS_PENDING, WS_RESERVING, WS_ADMITTED };

struct wl_contrib {
    struct lq_agg *lq; /* its LocalQueue (lq_aggs live as long as kq_queues) */
    /* the ClusterQueue its admission named when last marked (NULL: none
     * yet), compared by name before the table is searched: cq_states live
     * as long as kq_queues */
    struct cq_state *cq;
    enum wl_st st;
    struct usage amt;
    /* the status.admission amt was read from (reference held) while st is
     * WS_RESERVING or WS_ADMITTED, else NULL: stored documents are never
     * changed in place, so while a later version holds the very same
     * admission, its amounts are amt (not read again) */
    json_t *adm;
    struct kq_link link; /* to the scheduler memo's entry (kq_memo_link) */
    UT_hash_handle hh;
    char key[]; /* "ns/name" */
};

/* The queues marked for the next flush, in the order first marked since
 * the last one (each marked once: its dirty flag says it is listed). */
struct dirty_list {
    void **items; /* struct cq_state * or struct lq_agg * */
    size_t n, cap;
};

struct kq_queues {
    struct lq_agg *lqs;
    struct cq_state *cqs;
    struct wl_contrib *wls;
    struct dirty_list dirty_cq;
    struct dirty_list dirty_lq;
    /* the last flush's writes (struct last_write *), in the order their
     * events come back, and how many of those have come back */
    struct dirty_list echo;
    size_t echo_at;
    uint64_t pass; /* kq_queues_flush calls so far */
    /* the queues whose figures-only write waits for due_ms (0: none wait;
     * listed once while their deferred flag is set, in the order deferred) */
    struct dirty_list deferred_cq;
    struct dirty_list deferred_lq;
    int64_t due_ms;
    bool defer_off; /* in a flush at or after due_ms: nothing is deferred */
};

static void dirty_push(struct dirty_list *d, void *item)
{
    XGROW(d->items, d->cap, d->n + 1);
    d->items[d->n++] = item;
}

static void usage_release(struct usage *u)
{
    for (size_t i = 0; i < u->n; i++) {
        xfree(u->items[i].flavor);
        xfree(u->items[i].resource);
    }
    XFREE(u->items);
    u->n = 0;
}

static void usage_add(struct usage *u, const char *flavor, const char *res, int64_t delta)
{
    for (size_t i = 0; i < u->n; i++) {
        if (!strcmp(u->items[i].flavor, flavor) && !strcmp(u->items[i].resource, res)) {
            u->items[i].amount += delta;
            return;
        }
    }
    u->items = xreallocarray(u->items, u->n + 1, sizeof(*u->items));
    u->items[u->n].flavor = xstrdup(flavor);
    u->items[u->n].resource = xstrdup(res);
    u->items[u->n].amount = delta;
    u->n++;
}

static void usage_merge(struct usage *dst, const struct usage *src, int sign)
{
    for (size_t i = 0; i < src->n; i++)
        usage_add(dst, src->items[i].flavor, src->items[i].resource, sign * src->items[i].amount);
}

static bool usage_equal(const struct usage *a, const struct usage *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        if (a->items[i].amount != b->items[i].amount ||
            strcmp(a->items[i].flavor, b->items[i].flavor) ||
            strcmp(a->items[i].resource, b->items[i].resource))
            return false;
    }
    return true;
}

static void usage_copy(struct usage *dst, const struct usage *src)
{
    bool same_keys = dst->n == src->n;
    for (size_t i = 0; i < src->n && same_keys; i++)
        same_keys = !strcmp(dst->items[i].flavor, src->items[i].flavor) &&
                    !strcmp(dst->items[i].resource, src->items[i].resource);
    if (same_keys) { /* the usual case: only the amounts moved */
        for (size_t i = 0; i < src->n; i++)
            dst->items[i].amount = src->items[i].amount;
        return;
    }
    usage_release(dst);
    usage_merge(dst, src, 1);
}

static void lq_figures_release(struct lq_figures *f)
{
    usage_release(&f->reserved);
    usage_release(&f->used);
}

static bool lq_figures_equal(const struct lq_figures *a, const struct lq_figures *b)
{
    return a->pending == b->pending && a->reserving == b->reserving &&
           a->admitted == b->admitted && a->act == b->act &&
           usage_equal(&a->reserved, &b->reserved) && usage_equal(&a->used, &b->used);
}

static void lq_figures_copy(struct lq_figures *dst, const struct lq_figures *src)
{
    dst->pending = src->pending;
    dst->reserving = src->reserving;
    dst->admitted = src->admitted;
    dst->act = src->act;
    usage_copy(&dst->reserved, &src->reserved);
    usage_copy(&dst->used, &src->used);
}

static bool str_equal(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static bool reslist_equal(const struct api_reslist *a, const struct api_reslist *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        if (a->items[i].value != b->items[i].value || strcmp(a->items[i].name, b->items[i].name))
            return false;
    }
    return true;
}

static bool flavor_usage_equal(const struct eng_flavor_usage *a, size_t na,
                               const struct eng_flavor_usage *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        if (!str_equal(a[i].flavor, b[i].flavor) || !reslist_equal(&a[i].total, &b[i].total) ||
            !reslist_equal(&a[i].borrowed, &b[i].borrowed))
            return false;
    }
    return true;
}

/* Whether a and b give the same Active condition. */
static bool cq_active_equal(const struct eng_cq_status *a, const struct eng_cq_status *b)
{
    return a->active == b->active && str_equal(a->inactive_reason, b->inactive_reason) &&
           str_equal(a->inactive_message, b->inactive_message);
}

/* Every field of struct eng_cq_status (engine.h) that the status shows. */
static bool cq_figures_equal(const struct eng_cq_status *a, const struct eng_cq_status *b)
{
    return cq_active_equal(a, b) && a->pending == b->pending &&
           a->reserving == b->reserving && a->admitted == b->admitted &&
           a->weighted_share == b->weighted_share &&
           flavor_usage_equal(a->reservation, a->n_reservation, b->reservation,
                              b->n_reservation) &&
           flavor_usage_equal(a->usage, a->n_usage, b->usage, b->n_usage);
}

static void contrib_free(struct wl_contrib *w)
{
    kq_link_cut(&w->link);
    usage_release(&w->amt);
    json_decref(w->adm);
    xfree(w);
}

struct kq_queues *kq_queues_new(void)
{
    return xcalloc(1, sizeof(struct kq_queues));
}

void kq_queues_free(struct kq_queues *q)
{
    if (!q)
        return;
    struct lq_agg *a, *at;
    HASH_ITER(hh, q->lqs, a, at) {
        HASH_DEL(q->lqs, a);
        lq_figures_release(&a->now);
        lq_figures_release(&a->written_figs);
        json_decref(a->written.doc);
        json_decref(a->spec);
        xfree(a->cq);
        xfree(a);
    }
    struct cq_state *cs, *ct;
    HASH_ITER(hh, q->cqs, cs, ct) {
        HASH_DEL(q->cqs, cs);
        json_decref(cs->written.doc);
        eng_cq_status_release(&cs->figs);
        kq_set_free(cs->lqs);
        xfree(cs);
    }
    struct wl_contrib *w, *wt;
    HASH_ITER(hh, q->wls, w, wt) {
        HASH_DEL(q->wls, w);
        contrib_free(w);
    }
    xfree(q->dirty_cq.items);
    xfree(q->dirty_lq.items);
    xfree(q->echo.items);
    xfree(q->deferred_cq.items);
    xfree(q->deferred_lq.items);
    xfree(q);
}

/* kq_key(ns, name) in buf (n bytes) when it fits; else a new string, also
 * left in *heap for the caller to free. */
static const char *ns_key(char *buf, size_t n, const char *ns, const char *name, char **heap)
{
    ns = ns ? ns : "";
    name = name ? name : "";
    size_t a = strlen(ns), b = strlen(name);
    if (a + b + 2 > n)
        return *heap = kq_key(ns, name);
    memcpy(buf, ns, a);
    buf[a] = '/';
    memcpy(buf + a + 1, name, b + 1);
    return buf;
}

static struct lq_agg *lq_get(struct kq_queues *q, const char *ns, const char *name)
{
    char buf[320], *heap = NULL;
    const char *key = ns_key(buf, sizeof(buf), ns, name, &heap);
    struct lq_agg *a;
    HASH_FIND_STR(q->lqs, key, a);
    if (a) {
        xfree(heap);
        return a;
    }
    ns = jx_or_empty(ns);
    name = jx_or_empty(name);
    size_t kl = strlen(key), nl = strlen(ns), ml = strlen(name);
    a = xcalloc(1, sizeof(*a) + kl + nl + ml + 3);
    a->key = a->mem;
    a->ns = a->key + kl + 1;
    a->name = a->ns + nl + 1;
    memcpy(a->key, key, kl + 1);
    memcpy(a->ns, ns, nl + 1);
    memcpy(a->name, name, ml + 1);
    xfree(heap);
    HASH_ADD_KEYPTR(hh, q->lqs, a->key, kl, a);
    return a;
}

static struct cq_state *cq_state_get(struct kq_queues *q, const char *name)
{
    struct cq_state *cs;
    HASH_FIND_STR(q->cqs, name, cs);
    if (!cs) {
        size_t n = strlen(name);
        cs = xcalloc(1, sizeof(*cs) + n + 1);
        memcpy(cs->name, name, n + 1);
        cs->lqs_active = -1;
        cs->lqs = kq_set_new();
        HASH_ADD_KEYPTR(hh, q->cqs, cs->name, n, cs);
    }
    return cs;
}

static void mark_cq_state(struct kq_queues *q, struct cq_state *cs)
{
    if (!cs->dirty) {
        cs->dirty = true;
        dirty_push(&q->dirty_cq, cs);
    }
}

static void mark_lq_agg(struct kq_queues *q, struct lq_agg *a)
{
    if (!a->dirty) {
        a->dirty = true;
        dirty_push(&q->dirty_lq, a);
    }
}

void kq_queues_mark_cq(struct kq_queues *q, const char *cq)
{
    if (cq && cq[0])
        mark_cq_state(q, cq_state_get(q, cq));
}

void kq_queues_mark_lq(struct kq_queues *q, const char *ns, const char *name)
{
    if (!ns || !name)
        return;
    mark_lq_agg(q, lq_get(q, ns, name));
}

void kq_queues_observe_status(struct kq_queues *q, enum api_kind_id kind, const json_t *obj)
{
    /* the next write of the last flush seen back: obj is its queue's
     * written.doc, nothing to mark (found without reading obj) */
    if (q->echo_at < q->echo.n &&
        ((const struct last_write *)q->echo.items[q->echo_at])->doc == obj) {
        q->echo_at++;
        return;
    }
    if (kind == KIND_CLUSTERQUEUE) {
        const char *name = api_name(obj);
        struct cq_state *cs = NULL;
        if (name)
            HASH_FIND_STR(q->cqs, name, cs);
        if (!cs || cs->written.doc != obj)
            kq_queues_mark_cq(q, name);
        return;
    }
    const json_t *md = JX_GET(obj, "metadata"); /* api_namespace, api_name */
    const char *ns = JX_STR(md, "namespace"), *name = JX_STR(md, "name");
    if (!ns || !name)
        return;
    struct lq_agg *a = lq_get(q, ns, name);
    if (a->written.doc != obj)
        mark_lq_agg(q, a);
}

static void apply_contrib(struct kq_queues *q, const struct wl_contrib *w, int sign)
{
    struct lq_agg *a = w->lq;
    if (!a || w->st == WS_NONE)
        return;
    if (w->st == WS_PENDING)
        a->now.pending += sign;
    if (w->st == WS_RESERVING || w->st == WS_ADMITTED) {
        a->now.reserving += sign;
        usage_merge(&a->now.reserved, &w->amt, sign);
    }
    if (w->st == WS_ADMITTED) {
        a->now.admitted += sign;
        usage_merge(&a->now.used, &w->amt, sign);
    }
    mark_lq_agg(q, a);
}

/* The contribution of the Workload wv views, in w (its adm borrowed, not
 * referenced). prev: the contribution it had (NULL: none); when wv holds
 * prev's very admission, w's amt is not read: *amt_is_prev is set and
 * w->amt left empty, prev->amt being the same. */
static void contrib_from(const struct kq_wl_view *wv, const struct wl_contrib *prev,
                         struct wl_contrib *w, bool *amt_is_prev)
{
    /* kq_wl_is_finished, kq_wl_has_reservation and kq_wl_is_admitted */
    const json_t *adm = wv->admission;
    w->st = WS_NONE;
    *amt_is_prev = false;
    if (wv->state.finished)
        return;
    if (!api_wl_holds_reservation(&wv->state)) {
        w->st = wv->active ? WS_PENDING : WS_NONE; /* kq_wl_is_active */
        return;
    }
    w->st = wv->state.admitted ? WS_ADMITTED : WS_RESERVING;
    w->adm = (json_t *)adm;
    if (prev && prev->adm == adm) {
        *amt_is_prev = true;
        return;
    }
    size_t i;
    json_t *ps;
    /* each looked up once: json_array_foreach and json_object_foreach
     * evaluate their container at every step */
    const json_t *psas = JX_GET(adm, "podSetAssignments");
    json_array_foreach(psas, i, ps) {
        const char *res;
        json_t *v;
        json_t *flavors = JX_GET(ps, "flavors");
        json_t *usage = JX_GET(ps, "resourceUsage");
        json_object_foreach(usage, res, v) {
            const char *flv = JX_STR(flavors, res);
            if (flv)
                usage_add(&w->amt, flv, res, kq_quantity_value(v, res));
        }
    }
}

/* Mark the ClusterQueue of the Workload: its admission's (cq), else its
 * LocalQueue's (ns/queue, from the store; a: that LocalQueue's state, or
 * NULL, remembers the spec read and what it named). w: the Workload's
 * contribution (NULL: none), which remembers the admission's. */
static void mark_wl_cq(struct kq_queues *q, struct ctrl *c, struct wl_contrib *w,
                       const char *cq, const char *ns, const char *queue, struct lq_agg *a)
{
    if (cq || !queue) {
        if (!cq || !cq[0])
            return;
        /* the ClusterQueue of the Workload's last mark, most times */
        struct cq_state *cs = w && w->cq && !strcmp(w->cq->name, cq) ? w->cq
                                                                      : cq_state_get(q, cq);
        if (w)
            w->cq = cs;
        mark_cq_state(q, cs);
        return;
    }
    /* the many events of one round's Workloads of a LocalQueue find the
     * store as the first left it: no lookup */
    uint64_t rv = store_rv(ctrl_store(c));
    if (a && a->spec_rv != 0 && a->spec_rv == rv) {
        if (a->spec_cs)
            mark_cq_state(q, a->spec_cs);
        return;
    }
    json_t *lq = store_get(ctrl_store(c), KIND_LOCALQUEUE, ns, queue);
    json_t *spec = JX_GET(lq, "spec");
    struct cq_state *cs;
    if (a && spec && spec == a->spec) {
        cs = a->spec_cs;
    } else {
        const char *name = JX_STR(spec, "clusterQueue");
        cs = name && name[0] ? cq_state_get(q, name) : NULL;
        if (a && spec) {
            json_decref(a->spec);
            a->spec = json_incref(spec);
        }
    }
    if (a) {
        if (!spec) { /* no LocalQueue (or spec) now: nothing kept of it */
            json_decref(a->spec);
            a->spec = NULL;
        }
        a->spec_cs = cs;
        a->spec_rv = rv;
    }
    if (cs)
        mark_cq_state(q, cs);
    json_decref(lq);
}

/* The LocalQueue ns/queue: w's own when it is that one (no lookup). */
static struct lq_agg *wl_lq(struct kq_queues *q, const struct wl_contrib *w, const char *ns,
                            const char *queue)
{
    if (w && w->lq && str_equal(w->lq->name, queue) && str_equal(w->lq->ns, ns))
        return w->lq;
    return lq_get(q, ns, queue);
}

/* The contribution w (NULL: none yet) had and its Workload's new version
 * wl (in a: NULL when it counts in no LocalQueue) now has (set in now, see
 * contrib_from for *amt_is_prev; true when it is w's). */
static bool contrib_same(const struct wl_contrib *w, const struct kq_wl_view *v,
                         struct lq_agg *a, struct wl_contrib *now, bool *amt_is_prev)
{
    *amt_is_prev = false;
    if (!a)
        return false;
    contrib_from(v, w, now, amt_is_prev);
    return w && w->lq == a && w->st == now->st &&
           (*amt_is_prev || usage_equal(&w->amt, &now->amt));
}

/* The contribution of key (NULL: none): link's peer when it has one (the
 * same Workload's, by construction), else found in the table and joined to
 * link. */
static struct wl_contrib *contrib_find(struct kq_queues *q, const char *key, struct kq_link *link)
{
    struct wl_contrib *w;
    if (link && link->peer)
        return (struct wl_contrib *)((char *)link->peer - offsetof(struct wl_contrib, link));
    HASH_FIND_STR(q->wls, key, w);
    if (w && link)
        kq_link_join(link, &w->link);
    return w;
}

void kq_queues_observe_workload(struct kq_queues *q, struct ctrl *c, const json_t *wl,
                                bool deleted, struct kq_link *link)
{
    /* read once: by the Workload controller, usually */
    const struct kq_wl_view *v = kq_wl_view_peek(wl);
    const char *ns = v->ns;
    char buf[320], *heap = NULL;
    const char *key = ns_key(buf, sizeof(buf), ns, v->name, &heap);
    struct wl_contrib *w = contrib_find(q, key, link);
    const char *queue = v->queue;
    const char *cq = v->cluster_queue; /* kq_wl_cluster_queue */
    struct lq_agg *a = deleted || !queue ? NULL : wl_lq(q, w, ns, queue);
    struct wl_contrib now = {0};
    bool amt_is_prev;
    if (contrib_same(w, v, a, &now, &amt_is_prev)) {
        /* the marks only (apply_contrib's included) */
        usage_release(&now.amt);
        if (w->adm != now.adm) { /* an equal admission: kept from now on */
            json_decref(w->adm);
            w->adm = json_incref(now.adm);
        }
        xfree(heap);
        mark_wl_cq(q, c, w, cq, ns, queue, a);
        mark_lq_agg(q, a);
        return;
    }
    if (w)
        apply_contrib(q, w, -1);
    mark_wl_cq(q, c, w, cq, ns, queue, a);
    if (!a) {
        if (w) {
            HASH_DEL(q->wls, w);
            contrib_free(w);
        }
        xfree(heap);
        return;
    }
    if (w) {
        if (!amt_is_prev) {
            usage_release(&w->amt);
            w->amt = now.amt;
        }
        if (w->adm != now.adm) {
            json_decref(w->adm);
            w->adm = json_incref(now.adm);
        }
    } else {
        size_t kl = strlen(key);
        w = xcalloc(1, sizeof(*w) + kl + 1);
        memcpy(w->key, key, kl + 1);
        HASH_ADD_KEYPTR(hh, q->wls, w->key, kl, w);
        if (link)
            kq_link_join(link, &w->link);
        w->amt = now.amt;
        w->adm = json_incref(now.adm);
    }
    xfree(heap);
    w->lq = a;
    w->st = now.st;
    apply_contrib(q, w, +1);
    mark_lq_agg(q, a);
}

/* ---- status documents ---- */

static json_t *flavor_usage_json(const struct eng_flavor_usage *u, size_t n)
{
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *res = json_array();
        for (size_t j = 0; j < u[i].total.n; j++) {
            const char *r = u[i].total.items[j].name;
            /* built directly: json_pack parses its format at every call */
            json_t *item = json_object();
            json_object_set_new(item, "name", json_string(r));
            json_object_set_new(item, "total", kq_quantity_json(u[i].total.items[j].value, r));
            json_object_set_new(item, "borrowed",
                                kq_quantity_json(api_reslist_get(&u[i].borrowed, r), r));
            json_array_append_new(res, item);
        }
        json_t *fl = json_object();
        json_object_set_new(fl, "name", json_string(u[i].flavor));
        json_object_set_new(fl, "resources", res);
        json_array_append_new(out, fl);
    }
    return out;
}

/* A status member a flush sets: its name (len bytes) and new value
 * (taken), or, when val is NULL, the integer ival (the current value is
 * kept when it already is that integer). */
struct st_member {
    const char *name;
    size_t len;
    json_t *val;
    json_int_t ival;
};

#define ST_VAL(lit, v) {(lit), sizeof(lit) - 1, (v), 0}
#define ST_INT(lit, i) {(lit), sizeof(lit) - 1, NULL, (i)}

/* The value of m for a status whose current value is cur (NULL: none). */
static json_t *st_value(const struct st_member *m, json_t *cur)
{
    if (m->val)
        return m->val;
    if (json_is_integer(cur) && json_integer_value(cur) == m->ival)
        return json_incref(cur);
    return json_integer(m->ival);
}

/* The status map of a queue document to rewrite: cur_st's members in
 * cur_st's order (a non-object counts as empty) with those named in set
 * replaced, the missing ones appended in set's order. A missing
 * "conditions" is appended first, as an empty array for api_cond_set to
 * fill (*had_conds says whether cur_st had an array). cur_st's other values
 * are shared: the flushes only change conditions, through api_cond_set,
 * which copies a shared array before changing it. New reference; set's
 * values are taken. */
static json_t *status_map(const json_t *cur_st, struct st_member *set, size_t n, bool *had_conds)
{
    json_t *out = json_object();
    bool used[8] = {false};
    *had_conds = false;
    bool seen_conds = false;
    const char *key;
    size_t klen;
    json_t *v;
    if (json_is_object(cur_st)) {
        json_object_keylen_foreach((json_t *)cur_st, key, klen, v) {
            json_t *nv = NULL;
            for (size_t i = 0; i < n && !nv; i++) {
                if (!used[i] && klen == set[i].len && !memcmp(key, set[i].name, klen)) {
                    nv = st_value(&set[i], v);
                    used[i] = true;
                }
            }
            if (!nv && klen == 10 && !memcmp(key, "conditions", 10)) {
                seen_conds = true;
                *had_conds = json_is_array(v);
            }
            json_object_setn_new_nocheck(out, key, klen, nv ? nv : json_incref(v));
        }
    }
    if (!seen_conds)
        json_object_set_new(out, "conditions", json_array());
    for (size_t i = 0; i < n; i++) {
        if (!used[i])
            json_object_set_new(out, set[i].name, st_value(&set[i], NULL));
    }
    return out;
}

/* A queue document to rewrite the status of: cur's members shared (its
 * metadata too: the store gives the new version a map of its own,
 * store_update_take), status (taken) in place of cur's. New reference. */
static json_t *status_doc(const json_t *cur, json_t *status)
{
    return jx_shallow_with(cur, "status", 6, status);
}

/* Write cp's status over cur's (cp from status_doc; taken; ns: cur's
 * namespace, NULL for a ClusterQueue); the store writes nothing when it is
 * the same. Returns the document the store now holds for the queue (new
 * reference, NULL when it is gone) and sets *wrote. */
static json_t *write_status_if_changed(struct ctrl *c, enum api_kind_id kind, const char *ns,
                                       json_t *cur, json_t *cp, bool *wrote)
{
    json_t *out = NULL;
    *wrote = store_update_take(ctrl_store(c), kind, ns, cp,
                               STORE_UPDATE_STATUS, &out) == 0 &&
             out != cur;
    return out;
}

/* A LocalQueue's ClusterQueue as last flushed (cq_state.lqs follows it). */
static void lq_set_cq(struct kq_queues *q, struct lq_agg *a, const char *cq)
{
    if (str_equal(a->cq, cq))
        return;
    if (a->cq)
        kq_set_remove(cq_state_get(q, a->cq)->lqs, a->key);
    xfree(a->cq);
    a->cq = cq ? xstrdup(cq) : NULL;
    if (cq)
        kq_set_add(cq_state_get(q, cq)->lqs, a->key);
}

static void mark_lq_key(const char *key, void *arg)
{
    struct kq_queues *q = arg;
    struct lq_agg *a;
    HASH_FIND_STR(q->lqs, key, a);
    if (a)
        mark_lq_agg(q, a);
}

/* What a status document built for a write holds (borrowed): its status
 * map and usage lists (reservation, usage). */
struct doc_parts {
    json_t *status;
    json_t *lists[2];
};

/* The usage list i of the status our last write left (built from the
 * figures `same` says are equal to the new ones), shared instead of built
 * again; NULL when there is none to share. New reference. */
static json_t *reuse_written(const struct last_write *w, int i, bool same)
{
    return same && w->lists[i] ? json_incref(w->lists[i]) : NULL;
}

/* Record the write of a document with parts (their references held by the
 * caller across the write) that left doc (taken; NULL: none): its usage
 * lists are ours when its status is, else looked up by name. */
static void last_write_set(struct last_write *w, json_t *doc, const struct doc_parts *parts,
                           const char *const names[2])
{
    json_decref(w->doc);
    w->doc = doc;
    w->deleting = doc && api_is_deleting(doc);
    json_t *st = JX_GET(doc, "status");
    for (int i = 0; i < 2; i++) {
        json_t *v = st && st == parts->status ? parts->lists[i] : JX_GET(st, names[i]);
        w->lists[i] = json_is_array(v) ? v : NULL;
    }
}

/* Write the status document cp (parts: what it holds) over cur's and
 * record it in w (see write_status_if_changed, last_write_set). */
static bool write_and_record(struct ctrl *c, enum api_kind_id kind, const char *ns,
                             json_t *cur, json_t *cp, const struct doc_parts *parts,
                             const char *const names[2], struct last_write *w)
{
    struct doc_parts held = {json_incref(parts->status),
                             {json_incref(parts->lists[0]), json_incref(parts->lists[1])}};
    bool wrote = false;
    json_t *out = write_status_if_changed(c, kind, ns, cur, cp, &wrote);
    last_write_set(w, out, &held, names);
    json_decref(held.status);
    json_decref(held.lists[0]);
    json_decref(held.lists[1]);
    return wrote;
}

static const char *const CQ_LISTS[2] = {"flavorsReservation", "flavorsUsage"};
static const char *const LQ_LISTS[2] = {"flavorsReservation", "flavorUsage"};

/* The ClusterQueue status document for st, from cur; the usage lists of
 * cs's last write are shared when their figures did not change. The Active
 * condition is set unless cur is our last write and said the same
 * (api_cond_set would change nothing). Taken by the write. */
static json_t *cq_status_doc(struct ctrl *c, const json_t *cur, const struct eng_cq_status *st,
                             const struct cq_state *cs, struct doc_parts *parts)
{
    const json_t *cur_st = JX_GET(cur, "status");
    json_t *res = reuse_written(&cs->written, 0,
                                flavor_usage_equal(st->reservation, st->n_reservation,
                                                   cs->figs.reservation, cs->figs.n_reservation));
    json_t *use = reuse_written(&cs->written, 1,
                                flavor_usage_equal(st->usage, st->n_usage, cs->figs.usage,
                                                   cs->figs.n_usage));
    parts->lists[0] = res ? res : flavor_usage_json(st->reservation, st->n_reservation);
    parts->lists[1] = use ? use : flavor_usage_json(st->usage, st->n_usage);
    struct st_member set[6] = {
        ST_INT("pendingWorkloads", st->pending),
        ST_INT("reservingWorkloads", st->reserving),
        ST_INT("admittedWorkloads", st->admitted),
        ST_VAL("flavorsReservation", parts->lists[0]), /* CQ_LISTS */
        ST_VAL("flavorsUsage", parts->lists[1]),
    };
    size_t n = 5;
    if (ctrl_cfg(c)->engine.fair_sharing) {
        json_t *fs = json_object_get(cur_st, "fairSharing"); /* shared: replaced, not changed */
        fs = json_is_object(fs) ? json_copy(fs) : json_object();
        json_object_set_new(fs, "weightedShare", json_integer(st->weighted_share));
        set[n++] = (struct st_member)ST_VAL("fairSharing", fs);
    }
    bool had_conds;
    parts->status = status_map(cur_st, set, n, &had_conds);
    json_t *cp = status_doc(cur, parts->status);
    bool same_active = had_conds && cur == cs->written.doc && cq_active_equal(st, &cs->figs);
    if (same_active)
        return cp;
    int64_t now = ctrl_now(c);
    if (st->active)
        api_cond_set(cp, "Active", "True", "Ready", "Can admit new workloads", now);
    else
        api_cond_set(cp, "Active", "False", st->inactive_reason ? st->inactive_reason : "Unknown",
                     jx_or_empty(st->inactive_message), now);
    return cp;
}

/* Whether the status write of a queue, about to change only its figures,
 * waits for the batch period (see the file comment): then the queue (item,
 * whose deferred flag is *deferred) is listed in list and the period is
 * started when none runs. */
static bool defer_write(struct kq_queues *q, struct ctrl *c, bool *deferred,
                        struct dirty_list *list, void *item)
{
    int64_t batch_ms = ctrl_cfg(c)->queue_status_batch_ms;
    if (batch_ms <= 0 || q->defer_off)
        return false;
    if (!*deferred) {
        *deferred = true;
        dirty_push(list, item);
    }
    if (q->due_ms == 0) {
        q->due_ms = ctrl_now(c) + batch_ms;
        ctrl_wake_at(c, q->due_ms);
    }
    return true;
}

/* Whether the engine's Active state of cs is the one its last write
 * showed (eng_cq_active, without the figures). */
static bool cq_active_unchanged(struct eng *e, const struct cq_state *cs)
{
    bool active;
    const char *reason, *message;
    return eng_cq_active(e, cs->name, &active, &reason, &message) == 0 &&
           active == cs->figs.active && str_equal(reason, cs->figs.inactive_reason) &&
           str_equal(message, cs->figs.inactive_message);
}

static bool flush_cq(struct kq_queues *q, struct ctrl *c, struct eng *e, struct cq_state *cs)
{
    const char *name = cs->name;
    json_t *cur = store_get(ctrl_store(c), KIND_CLUSTERQUEUE, NULL, name);
    if (!cur)
        return false;
    /* our last write's document (most flushes): known, not read again */
    bool deleting = cur == cs->written.doc ? cs->written.deleting : api_is_deleting(cur);
    if (cs->deferred && !q->defer_off && cur == cs->written.doc && !deleting &&
        cq_active_unchanged(e, cs)) {
        /* waits still: its figures are read when it is written */
        cs->figs_pass = q->pass;
        json_decref(cur);
        return false;
    }
    struct eng_cq_status st;
    if (eng_cq_status(e, name, &st) != 0) {
        json_decref(cur);
        return false;
    }
    bool wrote = false;
    bool figures_only = cur == cs->written.doc && !deleting && cq_active_equal(&st, &cs->figs);
    if (figures_only && cq_figures_equal(&st, &cs->figs)) {
        cs->deferred = false; /* what is stored is up to date */
    } else if (!figures_only ||
               !defer_write(q, c, &cs->deferred, &q->deferred_cq, cs)) {
        cs->deferred = false;
        struct doc_parts parts;
        json_t *cp = cq_status_doc(c, cur, &st, cs, &parts);
        wrote = write_and_record(c, KIND_CLUSTERQUEUE, NULL, cur, cp, &parts, CQ_LISTS,
                                 &cs->written);
        if (wrote)
            dirty_push(&q->echo, &cs->written);
        eng_cq_status_release(&cs->figs);
        cs->figs = st;
        memset(&st, 0, sizeof(st));
    }
    cs->figs_pass = q->pass;
    if (deleting && cs->figs.reserving == 0 && cs->figs.admitted == 0)
        kq_remove_finalizer(c, KIND_CLUSTERQUEUE, NULL, name, KQ_RESOURCE_IN_USE_FINALIZER);
    /* a LocalQueue's Active condition follows its ClusterQueue's */
    if (cs->lqs_active != (int)cs->figs.active) {
        cs->lqs_active = (int)cs->figs.active;
        kq_set_each(cs->lqs, mark_lq_key, q); /* in the order they joined */
    }
    eng_cq_status_release(&st);
    json_decref(cur);
    return wrote;
}

static json_t *lq_usage_json(const struct usage *u)
{
    json_t *out = json_array();
    for (size_t i = 0; i < u->n; i++) {
        json_t *entry = NULL;
        size_t j;
        json_t *f;
        json_array_foreach(out, j, f) {
            if (!strcmp(JX_STR(f, "name"), u->items[i].flavor))
                entry = f;
        }
        if (!entry) {
            entry = json_object();
            json_object_set_new(entry, "name", json_string(u->items[i].flavor));
            json_object_set_new(entry, "resources", json_array());
            json_array_append_new(out, entry);
        }
        json_t *item = json_object();
        json_object_set_new(item, "name", json_string(u->items[i].resource));
        json_object_set_new(item, "total",
                            kq_quantity_json(u->items[i].amount, u->items[i].resource));
        json_array_append_new(JX_GET(entry, "resources"), item);
    }
    return out;
}

/* What the LocalQueue's Active condition says (spec: its spec; cqn: its
 * spec.clusterQueue): its stopPolicy, then its ClusterQueue (missing,
 * inactive). A ClusterQueue flushed in this pass
 * gives its figures (the engine has not changed since); any other is asked
 * of the engine. */
static enum lq_act lq_active_state(struct kq_queues *q, struct eng *e, const json_t *spec,
                                   const char *cqn)
{
    const char *pol = JX_STR(spec, "stopPolicy");
    if (pol && strcmp(pol, "None"))
        return LQ_ACT_STOPPED;
    struct cq_state *cs = NULL;
    if (cqn)
        HASH_FIND_STR(q->cqs, cqn, cs);
    if (cs && cs->figs_pass == q->pass)
        return cs->figs.active ? LQ_ACT_READY : LQ_ACT_CQ_INACTIVE;
    bool active;
    const char *reason, *message;
    if (!cqn || eng_cq_active(e, cqn, &active, &reason, &message) != 0)
        return LQ_ACT_NO_CQ;
    return active ? LQ_ACT_READY : LQ_ACT_CQ_INACTIVE;
}

static void lq_set_active(json_t *cp, enum lq_act act, int64_t now)
{
    if (act == LQ_ACT_STOPPED)
        api_cond_set(cp, "Active", "False", "Stopped", "LocalQueue is stopped", now);
    else if (act == LQ_ACT_NO_CQ)
        api_cond_set(cp, "Active", "False", "ClusterQueueDoesNotExist",
                     "Can't submit new workloads to clusterQueue", now);
    else if (act == LQ_ACT_CQ_INACTIVE)
        api_cond_set(cp, "Active", "False", "ClusterQueueIsInactive",
                     "Can't submit new workloads to clusterQueue", now);
    else
        api_cond_set(cp, "Active", "True", "Ready", "Can submit new workloads to localQueue", now);
}

/* The LocalQueue status document for a's figures, from cur (see
 * cq_status_doc). Taken by the write. */
static json_t *lq_status_doc(struct ctrl *c, const json_t *cur, const struct lq_agg *a,
                             struct doc_parts *parts)
{
    json_t *res = reuse_written(&a->written, 0,
                                usage_equal(&a->now.reserved, &a->written_figs.reserved));
    json_t *use = reuse_written(&a->written, 1, usage_equal(&a->now.used, &a->written_figs.used));
    parts->lists[0] = res ? res : lq_usage_json(&a->now.reserved);
    parts->lists[1] = use ? use : lq_usage_json(&a->now.used);
    struct st_member set[] = {
        ST_INT("pendingWorkloads", a->now.pending),
        ST_INT("reservingWorkloads", a->now.reserving),
        ST_INT("admittedWorkloads", a->now.admitted),
        ST_VAL("flavorsReservation", parts->lists[0]), /* LQ_LISTS */
        ST_VAL("flavorUsage", parts->lists[1]),
    };
    bool had_conds;
    parts->status = status_map(JX_GET(cur, "status"), set, 5, &had_conds);
    json_t *cp = status_doc(cur, parts->status);
    if (!had_conds || cur != a->written.doc || a->now.act != a->written_figs.act)
        lq_set_active(cp, a->now.act, ctrl_now(c));
    return cp;
}

static bool flush_lq(struct kq_queues *q, struct ctrl *c, struct eng *e, struct lq_agg *a)
{
    json_t *cur = store_get(ctrl_store(c), KIND_LOCALQUEUE, a->ns, a->name);
    if (!cur)
        return false;
    const json_t *spec = JX_GET(cur, "spec");
    const char *cqn = JX_STR(spec, "clusterQueue");
    lq_set_cq(q, a, cqn);
    a->now.act = lq_active_state(q, e, spec, cqn);
    bool wrote = false;
    bool figures_only = cur == a->written.doc && a->now.act == a->written_figs.act;
    if (figures_only && lq_figures_equal(&a->now, &a->written_figs)) {
        a->deferred = false; /* what is stored is up to date */
    } else if (!figures_only ||
               !defer_write(q, c, &a->deferred, &q->deferred_lq, a)) {
        a->deferred = false;
        struct doc_parts parts;
        json_t *cp = lq_status_doc(c, cur, a, &parts);
        wrote = write_and_record(c, KIND_LOCALQUEUE, a->ns, cur, cp, &parts, LQ_LISTS,
                                 &a->written);
        if (wrote)
            dirty_push(&q->echo, &a->written);
        lq_figures_copy(&a->written_figs, &a->now);
    }
    json_decref(cur);
    return wrote;
}

/* Take the list d (new marks go to a new one). */
static struct dirty_list dirty_take(struct dirty_list *d)
{
    struct dirty_list out = *d;
    memset(d, 0, sizeof(*d));
    return out;
}

/* The batch period is over: the deferred queues are marked (each once) and
 * this flush writes them, deferring nothing. */
static void batch_due(struct kq_queues *q)
{
    q->due_ms = 0;
    q->defer_off = true;
    struct dirty_list cqs = dirty_take(&q->deferred_cq), lqs = dirty_take(&q->deferred_lq);
    for (size_t i = 0; i < cqs.n; i++) {
        struct cq_state *cs = cqs.items[i];
        if (cs->deferred) {
            cs->deferred = false;
            mark_cq_state(q, cs);
        }
    }
    for (size_t i = 0; i < lqs.n; i++) {
        struct lq_agg *a = lqs.items[i];
        if (a->deferred) {
            a->deferred = false;
            mark_lq_agg(q, a);
        }
    }
    xfree(cqs.items);
    xfree(lqs.items);
}

bool kq_queues_flush(struct kq_queues *q, struct ctrl *c, struct eng *e)
{
    bool wrote = false;
    if (q->due_ms && ctrl_now(c) >= q->due_ms)
        batch_due(q);
    q->pass++;
    q->echo.n = 0; /* the writes of this flush only */
    q->echo_at = 0;
    struct dirty_list cqs = dirty_take(&q->dirty_cq);
    for (size_t i = 0; i < cqs.n; i++)
        ((struct cq_state *)cqs.items[i])->dirty = false;
    for (size_t i = 0; i < cqs.n; i++)
        wrote |= flush_cq(q, c, e, cqs.items[i]); /* marks the LocalQueues of each */
    xfree(cqs.items);
    struct dirty_list lqs = dirty_take(&q->dirty_lq);
    for (size_t i = 0; i < lqs.n; i++)
        ((struct lq_agg *)lqs.items[i])->dirty = false;
    for (size_t i = 0; i < lqs.n; i++)
        wrote |= flush_lq(q, c, e, lqs.items[i]);
    xfree(lqs.items);
    q->defer_off = false;
    return wrote;
}
