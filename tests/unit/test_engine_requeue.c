/*
 * The ClusterQueue queues' internal layout (engine-int.h: heap arrays with
 * the order keys inline, parked array beside the parked list, workloads not
 * written by heap moves or requeues) against a plain model of the queues as
 * they were before it: a heap of workload pointers in an array (push = sift
 * up; removal = last into the hole, sift down then up; Floyd rebuild), and a
 * parked list. Random pushes, pops, parks, removals, equivalence bulk parks,
 * sticky preemptors, backoffs, namespace mismatches and "retry inadmissible"
 * requeues; after each step the heap ARRAY order, the parked order, every
 * workload's place, its bypassed flag and its backoff-list membership must
 * equal the model's (these orders decide the order of emitted statuses).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine-int.h"
#include "util/xalloc.h"

#define N_WL 96

enum { M_NONE, M_HEAP, M_PARK };

struct model {
    struct eng__wl *heap[N_WL];
    size_t n_heap;
    struct eng__wl *park[N_WL];
    size_t n_park;
    struct eng__wl *sticky;
    bool tp[N_WL];     /* on the backoff list */
    bool byp[N_WL];    /* parked by a bulk move */
    int where[N_WL];
};

struct world {
    struct eng *e;
    struct eng__cq *cq;
    struct eng__wl *w[N_WL];
    struct eng__ns ns[2];
    struct api_kv sel_kv, ns_kv[2];
    struct model m;
    uint64_t rng;
};

static uint32_t rnd(struct world *g, uint32_t n)
{
    g->rng = g->rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(g->rng >> 33) % n;
}

static int idx_of(struct world *g, const struct eng__wl *wl)
{
    for (int i = 0; i < N_WL; i++)
        if (g->w[i] == wl)
            return i;
    fail_msg("unknown workload");
    return -1;
}

/* The order as the model states it (sticky first, then Kueue's keys). */
static int model_cmp(const struct model *m, const struct eng__wl *a, const struct eng__wl *b)
{
    if (m->sticky && a != b) {
        if (a == m->sticky)
            return -1;
        if (b == m->sticky)
            return 1;
    }
    if (a->priority != b->priority)
        return a->priority > b->priority ? -1 : 1;
    if (a->qo_ts_ms != b->qo_ts_ms)
        return a->qo_ts_ms < b->qo_ts_ms ? -1 : 1;
    if (a->creation_ms != b->creation_ms)
        return a->creation_ms < b->creation_ms ? -1 : 1;
    int c = strcmp(a->key, b->key);
    return c ? c : strcmp(a->uid, b->uid);
}

static size_t m_up(struct model *m, size_t i)
{
    struct eng__wl *wl = m->heap[i];
    while (i > 0 && model_cmp(m, wl, m->heap[(i - 1) / 2]) < 0) {
        // cppcheck-suppress arrayIndexOutOfBoundsCond ; i is a filled slot's index (< m->n)
        m->heap[i] = m->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    m->heap[i] = wl;
    return i;
}

static size_t m_down(struct model *m, size_t i)
{
    struct eng__wl *wl = m->heap[i];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, b = i;
        struct eng__wl *best = wl;
        if (l < m->n_heap && model_cmp(m, m->heap[l], best) < 0) {
            b = l;
            best = m->heap[l];
        }
        if (r < m->n_heap && model_cmp(m, m->heap[r], best) < 0)
            b = r;
        if (b == i)
            break;
        m->heap[i] = m->heap[b];
        i = b;
    }
    m->heap[i] = wl;
    return i;
}

static void m_heapify(struct model *m)
{
    for (size_t i = m->n_heap / 2; i-- > 0;)
        m_down(m, i);
}

static void m_heap_remove_at(struct model *m, size_t i)
{
    m->n_heap--;
    if (i != m->n_heap) {
        m->heap[i] = m->heap[m->n_heap];
        m_up(m, m_down(m, i));
    }
}

static bool m_backoff_expired(const struct world *g, const struct eng__wl *wl)
{
    return !wl->requeued_false && wl->requeue_at_ms <= g->e->now_ms;
}

static void m_unqueue(struct world *g, int k)
{
    struct model *m = &g->m;
    struct eng__wl *wl = g->w[k];
    if (m->where[k] == M_HEAP) {
        size_t i = 0;
        while (m->heap[i] != wl)
            i++;
        m_heap_remove_at(m, i);
    } else if (m->where[k] == M_PARK) {
        size_t i = 0;
        while (m->park[i] != wl)
            i++;
        memmove(&m->park[i], &m->park[i + 1], (m->n_park - i - 1) * sizeof(m->park[0]));
        m->n_park--;
    }
    m->where[k] = M_NONE;
    m->tp[k] = m->byp[k] = false;
    if (m->sticky == wl)
        m->sticky = NULL;
}

static void m_park_tail(struct world *g, int k)
{
    struct model *m = &g->m;
    m->park[m->n_park++] = g->w[k];
    m->where[k] = M_PARK;
    m->byp[k] = false;
    m->tp[k] = !m_backoff_expired(g, g->w[k]);
}

static void m_push(struct world *g, int k)
{
    struct model *m = &g->m;
    m->heap[m->n_heap++] = g->w[k];
    m_up(m, m->n_heap - 1);
    m->where[k] = M_HEAP;
}

static size_t m_park_many(struct world *g, uint64_t hash)
{
    struct model *m = &g->m;
    size_t keep = 0, n = 0, nh = m->n_heap;
    for (size_t i = 0; i < nh; i++) {
        struct eng__wl *wl = m->heap[i];
        if (wl->hash == hash) {
            if (m->sticky == wl)
                m->sticky = NULL;
            m_park_tail(g, idx_of(g, wl));
            n++;
            continue;
        }
        m->heap[keep++] = wl;
    }
    m->n_heap = keep;
    if (n)
        m_heapify(m);
    return n;
}

static void m_requeue(struct world *g)
{
    struct model *m = &g->m;
    size_t keep = 0, moved = 0;
    for (size_t i = 0; i < m->n_park; i++) {
        struct eng__wl *wl = m->park[i];
        int k = idx_of(g, wl);
        if (!eng__ns_matches(g->e, g->cq, wl->ns) || !m_backoff_expired(g, wl)) {
            m->park[keep++] = wl;
            continue;
        }
        m->tp[k] = m->byp[k] = false;
        if (m->sticky == wl)
            m->sticky = NULL;
        m->heap[m->n_heap++] = wl;
        m->where[k] = M_HEAP;
        moved++;
    }
    m->n_park = keep;
    if (moved)
        m_heapify(m);
}

/* The engine's queues equal the model's. */
static void check(struct world *g)
{
    struct model *m = &g->m;
    struct eng__cq *cq = g->cq;
    assert_int_equal(cq->n_heap, m->n_heap);
    for (size_t i = 0; i < m->n_heap; i++) {
        assert_ptr_equal(cq->heap[i], m->heap[i]);
        /* exact slots unless a bulk rebuild left them to be refreshed */
        if (!cq->heap_pos_stale)
            assert_int_equal(cq->heap[i]->pos, i);
    }
    assert_int_equal(cq->n_inadm, m->n_park);
    if (cq->n_park)
        assert_non_null(cq->park[cq->n_park - 1].wl); /* no trailing hole */
    size_t live = 0;
    for (size_t s = 0; s < cq->n_park; s++)
        if (cq->park[s].wl) {
            assert_ptr_equal(cq->park[s].wl, m->park[live]);
            assert_int_equal(cq->park[s].time_parked, cq->park[s].wl->time_parked);
            live++;
        }
    assert_int_equal(live, m->n_park);
    assert_ptr_equal(cq->sticky, m->sticky);
    assert_true(eng__cq_bits_ok(g->e)); /* a non-empty heap has its bit */
    for (int k = 0; k < N_WL; k++) {
        const struct eng__wl *w = g->w[k];
        enum eng__wlq want = m->where[k] == M_HEAP ? ENG__Q_HEAP : m->where[k] == M_PARK ? ENG__Q_INADM : ENG__Q_NONE;
        assert_int_equal(eng__wl_where(w), want);
        assert_int_equal(eng__wl_bypassed(w), m->byp[k]);
        assert_int_equal(w->time_parked, m->tp[k]);
        assert_ptr_equal(w->qcq, m->where[k] == M_NONE ? NULL : cq);
    }
}

static void world_init(struct world *g, uint64_t seed, enum api_queueing_strategy strategy)
{
    memset(g, 0, sizeof(*g));
    g->rng = seed;
    g->e = xcalloc(1, sizeof(*g->e));
    g->e->now_ms = 1000;
    g->cq = xcalloc(1, sizeof(*g->cq));
    g->cq->strategy = strategy;
    g->cq->has_ns_selector = true;
    g->sel_kv = (struct api_kv){.key = "team", .value = "a"};
    g->cq->ns_selector.match_labels = (struct api_labels){.items = &g->sel_kv, .n = 1};
    g->e->cq_sorted = &g->cq;
    g->e->n_cq_sorted = 1;
    eng__cq_bits_rebuild(g->e);
    /* "ns-a" matches the selector, "ns-b" does not, "ns-c" does not exist */
    static const char *names[2] = {"ns-a", "ns-b"}, *teams[2] = {"a", "b"};
    for (int i = 0; i < 2; i++) {
        g->ns[i].name = (char *)names[i];
        g->ns_kv[i] = (struct api_kv){.key = "team", .value = (char *)teams[i]};
        g->ns[i].labels = (struct api_labels){.items = &g->ns_kv[i], .n = 1};
        HASH_ADD_KEYPTR(hh, g->e->nss, g->ns[i].name, strlen(g->ns[i].name), &g->ns[i]);
    }
    static const char *wl_ns[4] = {"ns-a", "ns-a", "ns-b", "ns-c"};
    for (int k = 0; k < N_WL; k++) {
        struct eng__wl *w = xcalloc(1, sizeof(*w));
        w->key = xasprintf("%s/w%02d", wl_ns[k % 4], (int)rnd(g, 40)); /* some equal keys */
        w->uid = xasprintf("uid-%d", k);
        w->ns = wl_ns[k % 4];
        g->w[k] = w;
    }
}

static void world_free(struct world *g)
{
    eng__cq_detach_all(g->e, g->cq);
    for (int k = 0; k < N_WL; k++) {
        xfree(g->w[k]->key);
        xfree(g->w[k]->uid);
        xfree(g->w[k]);
    }
    HASH_CLEAR(hh, g->e->nss);
    xfree(g->e->taken);
    xfree(g->e->cq_heap_bits);
    xfree(g->e->cq_rq_bits);
    xfree(g->e);
    xfree(g->cq);
}

/* New queue keys and backoff for a workload in no queue (few distinct
 * values: ties on every key field happen). */
static void rekey(struct world *g, struct eng__wl *w)
{
    w->priority = (int32_t)rnd(g, 3);
    w->qo_ts_ms = rnd(g, 4);
    w->creation_ms = rnd(g, 3);
    w->hash = rnd(g, 3);
    w->requeued_false = rnd(g, 10) == 0;
    w->requeue_at_ms = g->e->now_ms - 5 + (int64_t)rnd(g, 40);
}

static void step(struct world *g)
{
    struct model *m = &g->m;
    struct eng *e = g->e;
    struct eng__cq *cq = g->cq;
    int k = (int)rnd(g, N_WL);
    struct eng__wl *w = g->w[k];
    switch (rnd(g, 9)) {
    case 0: /* a new version of a workload goes to the heap */
        eng__wl_unqueue(e, w);
        m_unqueue(g, k);
        rekey(g, w);
        eng__heap_push(e, cq, w);
        m_push(g, k);
        break;
    case 1: /* parked (status change or failed head) */
        eng__wl_unqueue(e, w);
        m_unqueue(g, k);
        if (rnd(g, 2))
            rekey(g, w);
        eng__wl_park(e, cq, w);
        m_park_tail(g, k);
        if (rnd(g, 3) == 0) { /* parked as bypassed (status change of one bulk-moved) */
            w->bypassed = true;
            m->byp[k] = true;
        }
        break;
    case 2: /* deleted or reserved */
        eng__wl_unqueue(e, w);
        m_unqueue(g, k);
        break;
    case 3: { /* a cycle's head, failed: the sticky preemptor, or parked with its class */
        struct eng__wl *h = eng__heap_pop(cq);
        struct eng__wl *mh = NULL;
        if (m->n_heap) {
            mh = m->heap[0];
            m_heap_remove_at(m, 0);
            m->where[idx_of(g, mh)] = M_NONE;
        }
        assert_ptr_equal(h, mh);
        if (!h)
            break;
        int hk = idx_of(g, h);
        if (cq->strategy == QS_BEST_EFFORT_FIFO && rnd(g, 3) == 0) { /* as the cycle's requeue */
            cq->sticky = m->sticky = h;
            eng__heap_push(e, cq, h);
            m_push(g, hk);
            break;
        }
        if (m->sticky == h)
            cq->sticky = m->sticky = NULL;
        eng__wl_park(e, cq, h);
        m_park_tail(g, hk);
        size_t n = eng__heap_park_many(e, cq, h->hash);
        size_t mn = m_park_many(g, h->hash);
        assert_int_equal(n, mn);
        for (size_t i = 0; i < n; i++) {
            e->taken[i]->bypassed = true;
            m->byp[idx_of(g, e->taken[i])] = true;
        }
        break;
    }
    case 4:
    case 5: /* quota freed: retry inadmissible */
        eng__cq_mark_requeue(e, cq);
        assert_true(eng__cq_bits_ok(e));
        eng__process_requeues(e);
        assert_int_equal(e->cq_rq_bits[0], 0);
        m_requeue(g);
        break;
    case 6: /* time passes */
        e->now_ms += rnd(g, 12);
        break;
    case 7: { /* a bulk park of some class */
        uint64_t hash = rnd(g, 3);
        size_t n = eng__heap_park_many(e, cq, hash);
        assert_int_equal(n, m_park_many(g, hash));
        break;
    }
    default: /* nothing but a check */
        break;
    }
    check(g);
}

static void queues_match_the_pointer_heap_model(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 40; seed++) {
        struct world g;
        world_init(&g, seed, seed % 2 ? QS_BEST_EFFORT_FIFO : QS_STRICT_FIFO);
        for (int s = 0; s < 3000; s++)
            step(&g);
        world_free(&g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(queues_match_the_pointer_heap_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
