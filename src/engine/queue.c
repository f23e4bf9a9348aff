/*
 * queue: per-ClusterQueue pending queues (Kueue pkg/cache/queue): an active
 * heap ordered by (BestEffortFIFO sticky preemptor, priority, queue-order
 * timestamp, creation time, namespace/name, uid) and an inadmissible list
 * of parked workloads; routing of a pending workload to its queue through
 * its LocalQueue, with Kueue's queue-blocker statuses; and the "retry
 * inadmissible" requeue of whole cohort trees.
 *
 * Invariants: a workload is in at most one place (wl->q); wl->qcq is the
 * ClusterQueue holding it; wl->heap_idx is its heap slot while in a heap.
 */
#include <string.h>
#include <utlist.h>

#include "api/selector.h"
#include "engine/engine-int.h"
#include "util/xalloc.h"

/* ---- heap ---- */

/* Queue order without the sticky preemptor. */
static inline int cmp_order(const struct eng__wl *a, const struct eng__wl *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority ? -1 : 1;
    if (a->qo_ts_ms != b->qo_ts_ms)
        return a->qo_ts_ms < b->qo_ts_ms ? -1 : 1;
    if (a->creation_ms != b->creation_ms)
        return a->creation_ms < b->creation_ms ? -1 : 1;
    int c = strcmp(a->key, b->key);
    if (c)
        return c;
    return strcmp(a->uid, b->uid);
}

/* The sticky preemptor that heads cq's queue, or NULL. */
static inline const struct eng__wl *sticky_of(const struct eng__cq *cq)
{
    return cq->strategy == QS_BEST_EFFORT_FIFO ? cq->sticky : NULL;
}

/* eng__wl_cmp_queue with sticky_of(cq) already looked up. */
static inline int cmp_q(const struct eng__wl *sticky, const struct eng__wl *a, const struct eng__wl *b)
{
    if (sticky && a != b) {
        if (a == sticky)
            return -1;
        if (b == sticky)
            return 1;
    }
    return cmp_order(a, b);
}

int eng__wl_cmp_queue(const struct eng__cq *cq, const struct eng__wl *a, const struct eng__wl *b)
{
    return cmp_q(sticky_of(cq), a, b);
}

static void heap_set(struct eng__cq *cq, size_t i, struct eng__wl *wl)
{
    cq->heap[i] = wl;
    wl->heap_idx = i;
}

static void sift_up(struct eng__cq *cq, size_t i)
{
    const struct eng__wl *sticky = sticky_of(cq);
    struct eng__wl *wl = cq->heap[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (cmp_q(sticky, wl, cq->heap[p]) >= 0)
            break;
        heap_set(cq, i, cq->heap[p]);
        i = p;
    }
    heap_set(cq, i, wl);
}

/* sift_down with sticky_of(cq) looked up; forced inline: heapify's loop
 * (the requeue and bulk-move rebuilds) calls it for half the heap. */
static inline __attribute__((always_inline)) void sift_down_s(struct eng__cq *cq, size_t i,
                                                              const struct eng__wl *sticky)
{
    struct eng__wl **h = cq->heap;
    size_t n = cq->n_heap;
    struct eng__wl *wl = h[i];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        struct eng__wl *best = wl;
        if (l < n && cmp_q(sticky, h[l], best) < 0) {
            m = l;
            best = h[l];
        }
        if (r < n && cmp_q(sticky, h[r], best) < 0)
            m = r;
        if (m == i)
            break;
        heap_set(cq, i, h[m]);
        i = m;
    }
    heap_set(cq, i, wl);
}

static void sift_down(struct eng__cq *cq, size_t i)
{
    sift_down_s(cq, i, sticky_of(cq));
}

/* Restore the heap order of the whole array (Floyd). */
static void heapify(struct eng__cq *cq)
{
    const struct eng__wl *sticky = sticky_of(cq);
    for (size_t i = cq->n_heap / 2; i-- > 0;)
        sift_down_s(cq, i, sticky);
}

void eng__heap_push(struct eng__cq *cq, struct eng__wl *wl)
{
    XGROW(cq->heap, cq->cap_heap, cq->n_heap + 1);
    heap_set(cq, cq->n_heap++, wl);
    sift_up(cq, cq->n_heap - 1);
    wl->q = ENG__Q_HEAP;
    wl->qcq = cq;
}

void eng__heap_remove(struct eng__cq *cq, struct eng__wl *wl)
{
    size_t i = wl->heap_idx;
    cq->n_heap--;
    if (i != cq->n_heap) {
        struct eng__wl *moved = cq->heap[cq->n_heap];
        heap_set(cq, i, moved);
        sift_down(cq, i);
        sift_up(cq, moved->heap_idx);
    }
    wl->q = ENG__Q_NONE;
    wl->qcq = NULL;
}

void eng__heap_fix(struct eng__cq *cq, struct eng__wl *wl)
{
    sift_down(cq, wl->heap_idx);
    sift_up(cq, wl->heap_idx);
}

/* Append wl, in no queue, to cq's parked list (and to the time-parked
 * list while it waits for a time). */
static inline void park_tail(struct eng *e, struct eng__cq *cq, struct eng__wl *wl)
{
    DL_APPEND(cq->inadm, wl);
    cq->n_inadm++;
    wl->q = ENG__Q_INADM;
    wl->qcq = cq;
    /* a workload kept off a flavor (flavor fallback) is looked at again
     * when the avoidance ends, like one in backoff */
    if (!eng__wl_backoff_expired(e, wl) || eng__wl_avoid_end(e, wl)) {
        DL_APPEND2(e->time_parked, wl, tprev, tnext);
        wl->time_parked = true;
    }
}

size_t eng__heap_park_many(struct eng *e, struct eng__cq *cq, uint64_t hash)
{
    size_t keep = 0, n = 0;
    XGROW(e->taken, e->cap_taken, cq->n_heap); /* room for all, grown once */
    for (size_t i = 0; i < cq->n_heap; i++) {
        struct eng__wl *wl = cq->heap[i];
        if (wl->hash == hash) {
            if (cq->sticky == wl)
                cq->sticky = NULL;
            park_tail(e, cq, wl);
            e->taken[n++] = wl;
            continue;
        }
        heap_set(cq, keep++, wl);
    }
    cq->n_heap = keep;
    if (n)
        heapify(cq);
    return n;
}

struct eng__wl *eng__heap_pop(struct eng__cq *cq)
{
    if (!cq->n_heap)
        return NULL;
    struct eng__wl *wl = cq->heap[0];
    eng__heap_remove(cq, wl);
    return wl;
}

/* ---- parking ---- */

static void time_list_remove(struct eng *e, struct eng__wl *wl)
{
    if (wl->time_parked) {
        DL_DELETE2(e->time_parked, wl, tprev, tnext);
        wl->time_parked = false;
    }
}

void eng__wl_unqueue(struct eng *e, struct eng__wl *wl)
{
    struct eng__cq *cq = wl->qcq;
    if (wl->q == ENG__Q_HEAP) {
        eng__heap_remove(cq, wl);
    } else if (wl->q == ENG__Q_INADM) {
        DL_DELETE(cq->inadm, wl);
        cq->n_inadm--;
        wl->q = ENG__Q_NONE;
        wl->qcq = NULL;
    }
    time_list_remove(e, wl);
    wl->bypassed = false;
    if (cq && cq->sticky == wl)
        cq->sticky = NULL;
    if (cq && cq->preemptor == wl)
        cq->preemptor = NULL;
}

bool eng__wl_backoff_expired(const struct eng *e, const struct eng__wl *wl)
{
    return !wl->requeued_false && wl->requeue_at_ms <= e->now_ms;
}

int64_t eng__wl_avoid_end(const struct eng *e, const struct eng__wl *wl)
{
    int64_t w = 0;
    for (int i = 0; i < wl->n_avoid; i++)
        if (wl->avoid_until[i] > e->now_ms && (!w || wl->avoid_until[i] < w))
            w = wl->avoid_until[i];
    return w;
}

bool eng__wl_avoids(const struct eng *e, const struct eng__wl *wl, int flv)
{
    for (int i = 0; i < wl->n_avoid; i++)
        if (wl->avoid_flv[i] == flv && wl->avoid_until[i] > e->now_ms)
            return true;
    return false;
}

void eng__wl_park(struct eng *e, struct eng__cq *cq, struct eng__wl *wl)
{
    if (wl->q != ENG__Q_NONE)
        eng__wl_unqueue(e, wl);
    park_tail(e, cq, wl);
}

static const char *bulk_reason(const struct eng__cq *cq, uint64_t hash)
{
    for (size_t i = 0; i < cq->n_bulk; i++)
        if (cq->bulk_hash[i] == hash)
            return cq->bulk_reason[i];
    return NULL;
}

static void emit_bypassed(struct eng *e, struct eng__wl *wl, const char *reason)
{
    wl->bypassed = true;
    eng__emit_pending(e, wl, reason,
                      "Bypassed scheduling evaluation because an equivalent workload recently failed");
}

/* Put a pending workload into cq (Kueue ClusterQueue.PushOrUpdate). */
static void enqueue(struct eng *e, struct eng__cq *cq, struct eng__wl *wl)
{
    if (!eng__wl_backoff_expired(e, wl)) {
        eng__wl_park(e, cq, wl);
        return;
    }
    const char *br = cq->strategy == QS_BEST_EFFORT_FIFO ? bulk_reason(cq, wl->hash) : NULL;
    if (br) {
        eng__wl_park(e, cq, wl);
        emit_bypassed(e, wl, br);
        return;
    }
    eng__heap_push(cq, wl);
}

/* ---- routing ---- */

struct blocker {
    const char *reason;
    char *msg;
};

/* The ClusterQueue a pending workload belongs to, or a blocker. */
static struct eng__cq *resolve(struct eng *e, struct eng__wl *wl, struct blocker *b)
{
    if (!wl->active) {
        b->reason = "Deactivated";
        b->msg = xstrdup("The workload is deactivated");
        return NULL;
    }
    if (wl->gated_by) {
        b->reason = "AdmissionGated";
        b->msg = xasprintf("Admission is gated by: %s", wl->gated_by);
        return NULL;
    }
    struct eng__lq *lq = eng__lq_find(e, wl->ns, wl->queue_name);
    if (!lq) {
        b->reason = "Misconfigured";
        b->msg = xasprintf("LocalQueue %s doesn't exist", wl->queue_name);
        return NULL;
    }
    if (lq->stop_policy != STOP_NONE) {
        b->reason = "Suspended";
        b->msg = xasprintf("LocalQueue %s is inactive", wl->queue_name);
        return NULL;
    }
    struct eng__cq *cq = eng__cq_find(e, lq->cq_name);
    if (!cq) {
        b->reason = "Misconfigured";
        b->msg = xasprintf("ClusterQueue %s doesn't exist", lq->cq_name);
        return NULL;
    }
    if (!cq->active) {
        b->reason = "Suspended";
        b->msg = xasprintf("ClusterQueue %s is inactive", cq->node.name);
    }
    return cq;
}

void eng__wl_route(struct eng *e, struct eng__wl *wl)
{
    if (wl->reserved || wl->finished) {
        eng__wl_unqueue(e, wl);
        return;
    }
    struct blocker b = {0};
    struct eng__cq *cq = resolve(e, wl, &b);
    if (wl->qcq && wl->qcq != cq)
        eng__wl_unqueue(e, wl);
    if (cq && wl->q == ENG__Q_NONE)
        enqueue(e, cq, wl);
    if (b.reason) {
        eng__emit_pending(e, wl, b.reason, b.msg);
        wl->blocker_emitted = true;
    } else if (wl->blocker_emitted && !wl->bypassed) {
        eng__emit_pending(e, wl, "PendingEvaluation",
                          "Workload is pending evaluation in the scheduling queue");
        wl->blocker_emitted = false;
    }
    xfree(b.msg);
}

void eng__route_all(struct eng *e)
{
    e->route_all = false;
    for (struct eng__wl *wl = e->wls; wl; wl = wl->hh.next)
        if (!wl->reserved && !wl->finished)
            eng__wl_route(e, wl);
}

/* ---- retry inadmissible ---- */

static void mark_subtree(struct eng *e, struct eng__node *n)
{
    if (n->is_cq) {
        ((struct eng__cq *)((char *)n - offsetof(struct eng__cq, node)))->requeue_pending = true;
        return;
    }
    for (size_t k = 0; k < n->n_kids; k++)
        mark_subtree(e, n->kids[k]);
}

void eng__requeue_tree(struct eng *e, struct eng__cq *cq)
{
    if (e->tree_dirty) {
        for (size_t i = 0; i < e->n_cq_sorted; i++)
            e->cq_sorted[i]->requeue_pending = true;
        return;
    }
    mark_subtree(e, eng__node_root(&cq->node));
}

/* Kueue QueueInadmissibleWorkloads for one ClusterQueue. The workloads
 * that may move are appended to the heap and the heap is rebuilt once. */
static void requeue_cq(struct eng *e, struct eng__cq *cq)
{
    const char *last_ns = NULL;
    bool last_ok = false;
    cq->requeue_pending = false;
    for (size_t i = 0; i < cq->n_bulk; i++)
        xfree(cq->bulk_reason[i]);
    cq->n_bulk = 0;
    XGROW(cq->heap, cq->cap_heap, cq->n_heap + cq->n_inadm);
    size_t moved = 0;
    /* the list is rebuilt from the workloads that stay, in their order */
    struct eng__wl *stay = NULL, *next;
    for (struct eng__wl *wl = cq->inadm; wl; wl = next) {
        next = wl->next;
        if (last_ns != wl->ns) {
            last_ns = wl->ns;
            last_ok = eng__ns_matches(e, cq, wl->ns);
        }
        if (!last_ok || !eng__wl_backoff_expired(e, wl)) {
            DL_APPEND(stay, wl);
            continue;
        }
        /* eng__wl_unqueue for a workload parked in cq */
        time_list_remove(e, wl);
        wl->bypassed = false;
        if (cq->sticky == wl)
            cq->sticky = NULL;
        if (cq->preemptor == wl)
            cq->preemptor = NULL;
        heap_set(cq, cq->n_heap++, wl);
        wl->q = ENG__Q_HEAP;
        wl->qcq = cq;
        moved++;
    }
    cq->inadm = stay;
    cq->n_inadm -= moved;
    if (moved)
        heapify(cq);
}

void eng__process_requeues(struct eng *e)
{
    for (size_t i = 0; i < e->n_cq_sorted; i++)
        if (e->cq_sorted[i]->requeue_pending)
            requeue_cq(e, e->cq_sorted[i]);
}

/* Forget that workloads of this equivalence hash recently failed in cq: one
 * of them is due for another look (its flavor avoidance ended). */
static void bulk_forget(struct eng__cq *cq, uint64_t hash)
{
    for (size_t i = 0; i < cq->n_bulk; i++) {
        if (cq->bulk_hash[i] != hash)
            continue;
        xfree(cq->bulk_reason[i]);
        cq->bulk_hash[i] = cq->bulk_hash[cq->n_bulk - 1];
        cq->bulk_reason[i] = cq->bulk_reason[cq->n_bulk - 1];
        cq->n_bulk--;
        return;
    }
}

void eng__process_time_parked(struct eng *e)
{
    struct eng__wl *wl, *tmp;
    for (wl = e->time_parked; wl; wl = tmp) {
        tmp = wl->tnext;
        if (!eng__wl_backoff_expired(e, wl) || eng__wl_avoid_end(e, wl))
            continue;
        struct eng__cq *cq = wl->qcq;
        if (!cq) { /* parked in no ClusterQueue: nothing to put it back into */
            eng__wl_unqueue(e, wl);
            continue;
        }
        if (wl->n_avoid)
            bulk_forget(cq, wl->hash);
        eng__wl_unqueue(e, wl);
        enqueue(e, cq, wl);
    }
}

/* Drop every link from workloads to cq (it is being deleted). */
void eng__cq_detach_all(struct eng *e, struct eng__cq *cq)
{
    while (cq->n_heap)
        eng__wl_unqueue(e, cq->heap[0]);
    while (cq->inadm)
        eng__wl_unqueue(e, cq->inadm);
    while (cq->holders) {
        struct eng__wl *wl = cq->holders;
        DL_DELETE2(cq->holders, wl, hprev, hnext);
        wl->rcq = NULL;
    }
    cq->n_reserving = cq->n_admitted = 0;
}

/* ---- shapes: interned placement constraints ---- */

/* Kueue prints an untolerated taint with Go's %v of corev1.Taint. */
static char *taint_text(const struct api_taint *t)
{
    return xasprintf("{%s %s %s <nil>}", t->key, t->value ? t->value : "", t->effect);
}

static bool taints_tolerated(const struct eng__flavor *f, const struct eng__shape *s,
                             const struct api_taint **bad)
{
    for (size_t i = 0; i < f->n_taints; i++) {
        const struct api_taint *t = &f->taints[i];
        if (strcmp(t->effect, "NoSchedule") && strcmp(t->effect, "NoExecute"))
            continue;
        if (api_tolerations_tolerate(s->tols, s->n_tols, t) ||
            api_tolerations_tolerate(f->tols, f->n_tols, t))
            continue;
        *bad = t;
        return false;
    }
    return true;
}

/* Kueue flavorSelector: only the flavor's own label keys are considered. */
static bool selector_matches(const struct eng__flavor *f, const struct eng__shape *s)
{
    for (size_t i = 0; i < s->node_selector.n; i++) {
        const char *have = api_labels_get(&f->labels, s->node_selector.items[i].key);
        if (have && strcmp(have, s->node_selector.items[i].value))
            return false;
    }
    if (!s->n_terms)
        return true;
    bool any_term = false;
    for (size_t t = 0; t < s->n_terms; t++) {
        const struct api_node_term *term = &s->terms[t];
        size_t kept = 0;
        bool ok = true;
        for (size_t x = 0; x < term->n_exprs; x++) {
            if (!api_labels_get(&f->labels, term->exprs[x].key))
                continue;
            kept++;
            if (!api_sel_req_matches(&term->exprs[x], &f->labels))
                ok = false;
        }
        if (kept == 0)
            return true; /* an emptied term matches anything */
        any_term = any_term || ok;
    }
    return any_term;
}

const char *eng__shape_match(struct eng *e, struct eng__shape *s, int flv)
{
    const struct eng__flavor *f = &e->flavors[flv];
    if ((size_t)flv >= s->n_cache) {
        size_t n = (size_t)e->n_flv;
        s->cache_gen = xreallocarray(s->cache_gen, n, sizeof(uint64_t));
        s->cache_msg = xreallocarray(s->cache_msg, n, sizeof(char *));
        for (size_t i = s->n_cache; i < n; i++) {
            s->cache_gen[i] = 0;
            s->cache_msg[i] = NULL;
        }
        s->n_cache = n;
    }
    if (s->cache_gen[flv] == f->gen + 1)
        return s->cache_msg[flv];
    XFREE(s->cache_msg[flv]);
    const struct api_taint *bad = NULL;
    if (!taints_tolerated(f, s, &bad)) {
        char *tt = taint_text(bad);
        s->cache_msg[flv] = xasprintf("untolerated taint %s in flavor %s", tt, f->name);
        xfree(tt);
    } else if (!selector_matches(f, s)) {
        s->cache_msg[flv] = xasprintf("flavor %s doesn't match node affinity", f->name);
    }
    s->cache_gen[flv] = f->gen + 1;
    return s->cache_msg[flv];
}

void eng__shape_release(struct eng *e, struct eng__shape *s)
{
    if (!s || --s->refs > 0)
        return;
    HASH_DEL(e->shapes, s);
    xfree(s->key);
    api_labels_release(&s->node_selector);
    for (size_t i = 0; i < s->n_terms; i++)
        eng__reqs_free(s->terms[i].exprs, s->terms[i].n_exprs);
    xfree(s->terms);
    eng__tols_free(s->tols, s->n_tols);
    for (size_t i = 0; i < s->n_cache; i++)
        xfree(s->cache_msg[i]);
    xfree(s->cache_msg);
    xfree(s->cache_gen);
    xfree(s);
}
