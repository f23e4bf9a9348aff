/*
 * queue: per-ClusterQueue pending queues (Kueue pkg/cache/queue): an active
 * heap ordered by (BestEffortFIFO sticky preemptor, priority, queue-order
 * timestamp, creation time, namespace/name, uid) and an inadmissible list
 * of parked workloads; routing of a pending workload to its queue through
 * its LocalQueue, with Kueue's queue-blocker statuses; and the "retry
 * inadmissible" requeue of whole cohort trees.
 *
 * Invariants: a workload is in at most one place; wl->queued says it is
 * in one, wl->qcq is the ClusterQueue holding it. A parked workload holds
 * slot wl->pos of qcq->park (the array never holds a workload twice, so
 * park[pos].wl == wl says "parked"); in the heap, wl->pos is its slot:
 * the sifts of one push, pop, removal or fix write the pos of the
 * workloads they move (O(log n)); the bulk rebuilds (requeue, bulk park)
 * write only the heap arrays and mark the positions stale, to be written
 * again in one pass when a workload's slot is next needed.
 */
#include <stdlib.h>
#include <assert.h>
#include <string.h>
#include <utlist.h>

#include "api/selector.h"
#include "engine/engine-int.h"
#include "util/xalloc.h"

/* ---- heap ---- */

/* The order key of a workload (what the heap and parked arrays keep). */
static inline struct eng__qkey qkey_of(const struct eng__wl *wl)
{
    return (struct eng__qkey){.qo_ts_ms = wl->qo_ts_ms,
                              .creation_ms = wl->creation_ms,
                              .hash = wl->hash,
                              .priority = wl->priority};
}

/* Queue order without the sticky preemptor, from the keys; the workloads
 * are read only on a tie of priority and both timestamps. */
static inline int cmp_order(const struct eng__wl *a, const struct eng__qkey *ka,
                            const struct eng__wl *b, const struct eng__qkey *kb)
{
    if (ka->priority != kb->priority)
        return ka->priority > kb->priority ? -1 : 1;
    if (ka->qo_ts_ms != kb->qo_ts_ms)
        return ka->qo_ts_ms < kb->qo_ts_ms ? -1 : 1;
    if (ka->creation_ms != kb->creation_ms)
        return ka->creation_ms < kb->creation_ms ? -1 : 1;
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
static inline int cmp_q(const struct eng__wl *sticky, const struct eng__wl *a, const struct eng__qkey *ka,
                        const struct eng__wl *b, const struct eng__qkey *kb)
{
    if (sticky && a != b) {
        if (a == sticky)
            return -1;
        if (b == sticky)
            return 1;
    }
    return cmp_order(a, ka, b, kb);
}

int eng__wl_cmp_order(const struct eng__wl *a, const struct eng__wl *b)
{
    struct eng__qkey ka = qkey_of(a), kb = qkey_of(b);
    return cmp_order(a, &ka, b, &kb);
}

int eng__wl_cmp_queue(const struct eng__cq *cq, const struct eng__wl *a, const struct eng__wl *b)
{
    struct eng__qkey ka = qkey_of(a), kb = qkey_of(b);
    return cmp_q(sticky_of(cq), a, &ka, b, &kb);
}

/* Slot i of the heap holds wl with key k (the workload is not written:
 * the sifts write pos, bulk rebuilds mark the positions stale). */
static inline void heap_set(struct eng__cq *cq, size_t i, struct eng__wl *wl, const struct eng__qkey *k)
{
    cq->heap[i] = wl;
    cq->hkey[i] = *k;
}

/* Room for n workloads in cq's heap arrays. */
static void heap_reserve(struct eng__cq *cq, size_t n)
{
    if (n <= cq->cap_heap)
        return;
    size_t cap = cq->cap_heap;
    XGROW(cq->heap, cap, n);
    cq->hkey = xreallocarray(cq->hkey, cap, sizeof(*cq->hkey));
    cq->cap_heap = cap;
}

/* Move slot i up to its place; returns where it landed. */
static size_t sift_up(struct eng__cq *cq, size_t i)
{
    const struct eng__wl *sticky = sticky_of(cq);
    struct eng__wl *wl = cq->heap[i];
    struct eng__qkey k = cq->hkey[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (cmp_q(sticky, wl, &k, cq->heap[p], &cq->hkey[p]) >= 0)
            break;
        heap_set(cq, i, cq->heap[p], &cq->hkey[p]);
        cq->heap[i]->pos = (uint32_t)i;
        i = p;
    }
    heap_set(cq, i, wl, &k);
    wl->pos = (uint32_t)i;
    return i;
}

/* sift_down with sticky_of(cq) looked up; forced inline: heapify's loop
 * (the requeue and bulk-move rebuilds) calls it for half the heap, with
 * track false (no workload written: the positions are marked stale).
 * Returns where slot i's workload landed. */
static inline __attribute__((always_inline)) size_t sift_down_s(struct eng__cq *cq, size_t i,
                                                                const struct eng__wl *sticky,
                                                                bool track)
{
    struct eng__wl **h = cq->heap;
    const struct eng__qkey *hk = cq->hkey;
    size_t n = cq->n_heap;
    struct eng__wl *wl = h[i];
    struct eng__qkey k = hk[i];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        struct eng__wl *best = wl;
        const struct eng__qkey *bk = &k;
        if (l < n && cmp_q(sticky, h[l], &hk[l], best, bk) < 0) {
            m = l;
            best = h[l];
            bk = &hk[l];
        }
        if (r < n && cmp_q(sticky, h[r], &hk[r], best, bk) < 0)
            m = r;
        if (m == i)
            break;
        heap_set(cq, i, h[m], &hk[m]);
        if (track)
            h[i]->pos = (uint32_t)i;
        i = m;
    }
    heap_set(cq, i, wl, &k);
    if (track)
        wl->pos = (uint32_t)i;
    return i;
}

/* Restore the heap order of the whole array (Floyd). */
static void heapify(struct eng__cq *cq)
{
    const struct eng__wl *sticky = sticky_of(cq);
    for (size_t i = cq->n_heap / 2; i-- > 0;)
        sift_down_s(cq, i, sticky, false);
    cq->heap_pos_stale = true;
}

void eng__heap_push(struct eng *e, struct eng__cq *cq, struct eng__wl *wl)
{
    assert(!wl->queued); /* a workload is never in two queues */
    eng__bit_set(e->cq_heap_bits, cq->sorted_idx);
    heap_reserve(cq, cq->n_heap + 1);
    struct eng__qkey k = qkey_of(wl);
    heap_set(cq, cq->n_heap++, wl, &k);
    size_t at = sift_up(cq, cq->n_heap - 1);
    /* heap positions are consistent: wl's slot and its parent's order */
    assert(cq->heap[wl->pos] == wl && at == wl->pos);
    assert(at == 0 || cmp_q(sticky_of(cq), cq->heap[(at - 1) / 2], &cq->hkey[(at - 1) / 2], wl,
                            &cq->hkey[at]) <= 0);
    (void)at;
    wl->queued = true;
    wl->qcq = cq;
}

/* wl's slot in cq's heap: its pos, once the positions a bulk rebuild left
 * stale are written again (one pass, then exact until the next rebuild:
 * removing or fixing one workload stays O(log n)). */
static size_t heap_find(struct eng__cq *cq, struct eng__wl *wl)
{
    if (cq->heap_pos_stale) {
        for (size_t i = 0; i < cq->n_heap; i++)
            cq->heap[i]->pos = (uint32_t)i;
        cq->heap_pos_stale = false;
    }
    /* wl is queued in cq and not parked, so it is in the heap: the tests
     * (Debug builds) check it */
    assert(wl->pos < cq->n_heap && cq->heap[wl->pos] == wl);
    return wl->pos;
}

/* Take heap slot i out (its workload's links are left to the caller). */
static void heap_remove_at(struct eng__cq *cq, size_t i)
{
    cq->n_heap--;
    if (i != cq->n_heap) {
        heap_set(cq, i, cq->heap[cq->n_heap], &cq->hkey[cq->n_heap]);
        sift_up(cq, sift_down_s(cq, i, sticky_of(cq), true));
    }
}

void eng__heap_remove(struct eng__cq *cq, struct eng__wl *wl)
{
    heap_remove_at(cq, heap_find(cq, wl));
    wl->queued = false;
    wl->qcq = NULL;
}

void eng__heap_fix(struct eng__cq *cq, struct eng__wl *wl)
{
    size_t i = heap_find(cq, wl);
    cq->hkey[i] = qkey_of(wl);
    sift_up(cq, sift_down_s(cq, i, sticky_of(cq), true));
}

static inline bool is_parked(const struct eng__wl *wl);

/* Append wl, in no queue or leaving cq's heap (k: its key), to cq's
 * parked list (and to the time-parked list while it waits for a time). */
static inline __attribute__((always_inline)) void park_tail(struct eng *e, struct eng__cq *cq, struct eng__wl *wl,
                                                             const struct eng__qkey *k)
{
    /* never in two queues: parked once, and only from cq's own heap */
    assert(!wl->queued || (wl->qcq == cq && !is_parked(wl)));
    XGROW(cq->park, cq->cap_park, cq->n_park + 1);
    /* a workload kept off a flavor (flavor fallback) is looked at again
     * when the avoidance ends, like one in backoff (eng__wl_backoff_expired
     * written out: park_many's loop runs this for every workload parked) */
    bool timed = wl->requeued_false || wl->requeue_at_ms > e->now_ms || (wl->n_avoid && eng__wl_avoid_end(e, wl));
    cq->park[cq->n_park] = (struct eng__parked){.wl = wl,
                                                .ns = wl->ns,
                                                .requeue_at_ms = wl->requeue_at_ms,
                                                .k = *k,
                                                .requeued_false = wl->requeued_false,
                                                .time_parked = timed};
    wl->pos = (uint32_t)cq->n_park++;
    cq->n_inadm++;
    wl->queued = true;
    wl->bypassed = false;
    wl->qcq = cq;
    if (timed) {
        DL_APPEND2(e->time_parked, wl, tprev, tnext);
        wl->time_parked = true;
    }
}

size_t eng__heap_park_many(struct eng *e, struct eng__cq *cq, uint64_t hash)
{
    enum { AHEAD = 8 }; /* workloads prefetched ahead of park_tail */
    size_t keep = 0, n = 0, nh = cq->n_heap;
    XGROW(e->taken, e->cap_taken, nh); /* room for all, grown once */
    for (size_t i = 0; i < nh; i++) {
        if (i + AHEAD < nh && cq->hkey[i + AHEAD].hash == hash)
            __builtin_prefetch(cq->heap[i + AHEAD], 1);
        struct eng__wl *wl = cq->heap[i];
        if (cq->hkey[i].hash == hash) {
            if (cq->sticky == wl)
                cq->sticky = NULL;
            park_tail(e, cq, wl, &cq->hkey[i]);
            e->taken[n++] = wl;
            continue;
        }
        heap_set(cq, keep++, wl, &cq->hkey[i]);
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
    heap_remove_at(cq, 0);
    wl->queued = false;
    wl->qcq = NULL;
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

/* wl holds its slot in qcq's parked array (pos is exact for parked
 * workloads; the array never holds a workload twice). */
static inline bool is_parked(const struct eng__wl *wl)
{
    const struct eng__cq *cq = wl->qcq;
    return wl->queued && wl->pos < cq->n_park && cq->park[wl->pos].wl == wl;
}

enum eng__wlq eng__wl_where(const struct eng__wl *wl)
{
    if (!wl->queued)
        return ENG__Q_NONE;
    return is_parked(wl) ? ENG__Q_INADM : ENG__Q_HEAP;
}

bool eng__wl_bypassed(const struct eng__wl *wl)
{
    return wl->bypassed && is_parked(wl);
}

/* Keep only the parked array's live slots, in order (their pos follow). */
static void park_compact(struct eng__cq *cq)
{
    size_t k = 0;
    for (size_t i = 0; i < cq->n_park; i++) {
        if (!cq->park[i].wl)
            continue;
        cq->park[k] = cq->park[i];
        cq->park[k].wl->pos = (uint32_t)k;
        k++;
    }
    cq->n_park = k;
}

/* Take parked wl out of cq's array and list: its slot becomes a hole
 * (trailing holes are dropped; the array is compacted when holes
 * outnumber the workloads, so it stays within twice their count). */
static void park_remove(struct eng__cq *cq, struct eng__wl *wl)
{
    cq->park[wl->pos].wl = NULL;
    while (cq->n_park && !cq->park[cq->n_park - 1].wl)
        cq->n_park--;
    cq->n_inadm--;
    if (cq->n_park > 2 * cq->n_inadm + 16)
        park_compact(cq);
}

void eng__wl_unqueue(struct eng *e, struct eng__wl *wl)
{
    struct eng__cq *cq = wl->qcq;
    if (wl->queued) {
        if (is_parked(wl))
            park_remove(cq, wl);
        else
            heap_remove_at(cq, heap_find(cq, wl));
        wl->queued = false;
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
    if (wl->queued)
        eng__wl_unqueue(e, wl);
    struct eng__qkey k = qkey_of(wl);
    park_tail(e, cq, wl, &k);
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
    eng__heap_push(e, cq, wl);
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
    if (cq && !wl->queued)
        enqueue(e, cq, wl);
    if (b.reason) {
        eng__emit_pending(e, wl, b.reason, b.msg);
        wl->blocker_emitted = true;
    } else if (wl->blocker_emitted && !eng__wl_bypassed(wl)) {
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
        eng__cq_mark_requeue(e, (struct eng__cq *)((char *)n - offsetof(struct eng__cq, node)));
        return;
    }
    for (size_t k = 0; k < n->n_kids; k++)
        mark_subtree(e, n->kids[k]);
}

void eng__requeue_tree(struct eng *e, struct eng__cq *cq)
{
    if (e->tree_dirty) {
        for (size_t i = 0; i < e->n_cq_sorted; i++)
            eng__cq_mark_requeue(e, e->cq_sorted[i]);
        return;
    }
    mark_subtree(e, eng__node_root(&cq->node));
}

/* Kueue QueueInadmissibleWorkloads for one ClusterQueue. The workloads
 * that may move are appended to the heap in parked order and the heap is
 * rebuilt once. The walk reads the parked array's copies only: a moved
 * workload is not written (it is no longer in the parked array, which is
 * what says it is parked), so only the workloads that stay may be. */
static void requeue_cq(struct eng *e, struct eng__cq *cq)
{
    const char *last_ns = NULL;
    bool last_ok = false;
    cq->requeue_pending = false;
    for (size_t i = 0; i < cq->n_bulk; i++)
        xfree(cq->bulk_reason[i]);
    cq->n_bulk = 0;
    heap_reserve(cq, cq->n_heap + cq->n_inadm);
    size_t moved = 0, keep = 0;
    for (size_t i = 0; i < cq->n_park; i++) {
        const struct eng__parked *p = &cq->park[i];
        struct eng__wl *wl = p->wl;
        if (!wl)
            continue;
        if (last_ns != p->ns) {
            last_ns = p->ns;
            last_ok = eng__ns_matches(e, cq, p->ns);
        }
        if (!last_ok || p->requeued_false || p->requeue_at_ms > e->now_ms) { /* stays */
            if (keep != i) {
                cq->park[keep] = *p;
                wl->pos = (uint32_t)keep;
            }
            keep++;
            continue;
        }
        /* eng__wl_unqueue for a workload parked in cq */
        if (p->time_parked)
            time_list_remove(e, wl);
        if (cq->sticky == wl)
            cq->sticky = NULL;
        if (cq->preemptor == wl)
            cq->preemptor = NULL;
        heap_set(cq, cq->n_heap++, wl, &p->k);
        moved++;
    }
    cq->n_park = keep;
    if (!moved)
        return;
    cq->n_inadm = keep;
    eng__bit_set(e->cq_heap_bits, cq->sorted_idx);
    heapify(cq);
}

void eng__cq_mark_requeue(struct eng *e, struct eng__cq *cq)
{
    cq->requeue_pending = true;
    eng__bit_set(e->cq_rq_bits, cq->sorted_idx);
}

/* Visits the ClusterQueues of e->cq_rq_bits in cq_sorted order (requeue_cq
 * marks no other ClusterQueue) and clears the bitmap. */
void eng__process_requeues(struct eng *e)
{
    size_t nw = (e->n_cq_sorted + 63) / 64;
    for (size_t w = 0; w < nw; w++) {
        uint64_t b = e->cq_rq_bits[w];
        e->cq_rq_bits[w] = 0;
        for (; b; b &= b - 1) {
            struct eng__cq *cq = e->cq_sorted[w * 64 + (size_t)__builtin_ctzll(b)];
            if (cq->requeue_pending)
                requeue_cq(e, cq);
        }
    }
}

void eng__cq_bits_rebuild(struct eng *e)
{
    size_t nw = (e->n_cq_sorted + 63) / 64;
    xfree(e->cq_heap_bits);
    xfree(e->cq_rq_bits);
    e->cq_heap_bits = xcalloc(nw + 1, sizeof(uint64_t));
    e->cq_rq_bits = xcalloc(nw + 1, sizeof(uint64_t));
    for (size_t i = 0; i < e->n_cq_sorted; i++) {
        struct eng__cq *cq = e->cq_sorted[i];
        cq->sorted_idx = (uint32_t)i;
        if (cq->n_heap)
            eng__bit_set(e->cq_heap_bits, i);
        if (cq->requeue_pending)
            eng__bit_set(e->cq_rq_bits, i);
    }
}

static bool bit_of(const uint64_t *bits, size_t i)
{
    return (bits[i >> 6] >> (i & 63)) & 1;
}

bool eng__cq_bits_ok(const struct eng *e)
{
    for (size_t i = 0; i < e->n_cq_sorted; i++) {
        const struct eng__cq *cq = e->cq_sorted[i];
        if (cq->sorted_idx != i || (cq->n_heap && !bit_of(e->cq_heap_bits, i)) ||
            (cq->requeue_pending && !bit_of(e->cq_rq_bits, i)))
            return false;
    }
    return true;
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
    while (cq->n_park) /* the last slot is never a hole (park_remove) */
        eng__wl_unqueue(e, cq->park[cq->n_park - 1].wl);
    XFREE(cq->hkey); /* with cq->heap's capacity: both go */
    XFREE(cq->heap);
    cq->cap_heap = 0;
    XFREE(cq->park);
    cq->n_park = cq->cap_park = 0;
    while (cq->holders) {
        struct eng__wl *wl = cq->holders;
        eng__hord_remove(e, wl);
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
    if (s->hh.tbl)
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
