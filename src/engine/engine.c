/*
 * engine: lifetime of the admission engine and the scheduling entry point.
 *
 * eng_schedule first brings the model up to date (cohort forest, routing
 * after object changes, deferred "retry inadmissible" requeues, expired
 * backoffs, statuses decided between calls), then runs Kueue scheduling
 * cycles. By default it keeps running cycles while they make progress, so
 * one call admits everything that fits, in the order Kueue would reach over
 * successive cycles (several admissions per ClusterQueue per call).
 * cfg.kueue_one_head_per_cq runs exactly one Kueue cycle per call instead.
 * Cycles that only change statuses or flavor-scan progress are bounded, so
 * a call always ends.
 */
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "engine/engine-int.h"
#include "util/xalloc.h"

/* The one allocator wrapper of the engine's hash tables (engine-int.h).
 * The counters are the test hook's, not state that decides anything. */
static unsigned long hash_allocs, hash_fail_at;

void *eng__hash_malloc(size_t n)
{
    if (++hash_allocs == hash_fail_at)
        return NULL;
    return malloc(n);
}

void eng__hash_free(void *p) { free(p); }

unsigned long eng__hash_alloc_fail_at(unsigned long n)
{
    hash_fail_at = n ? hash_allocs + n : 0;
    return hash_allocs;
}

struct eng *eng_new(const struct eng_config *cfg)
{
    struct eng *e = xcalloc(1, sizeof(*e));
    if (cfg)
        e->cfg = *cfg;
    return e;
}

static void free_node(struct eng__node *n)
{
    xfree(n->name);
    xfree(n->fr);
    xfree(n->pidx);
    xfree(n->q);
    xfree(n->subtree);
    xfree(n->usage);
    xfree(n->kids);
}

static void free_names(struct eng__name **tab)
{
    struct eng__name *n, *tmp;
    for (n = *tab; n; n = tmp) {
        tmp = n->hh.next;
        HASH_DEL(*tab, n);
        xfree(n->name);
        xfree(n);
    }
}

static void free_workloads(struct eng *e)
{
    struct eng__wl *wl, *tmp;
    for (wl = e->wls; wl; wl = tmp) {
        tmp = wl->hh.next;
        HASH_DEL(e->wls, wl);
        eng__wl_free(e, wl);
    }
}

static void free_queues(struct eng *e)
{
    while (e->n_cq_sorted)
        eng_delete_cluster_queue(e, e->cq_sorted[0]->node.name);
    struct eng__cohort *c, *ct;
    for (c = e->cohorts; c; c = ct) {
        ct = c->hh.next;
        HASH_DEL(e->cohorts, c);
        free_node(&c->node);
        xfree(c->parent_name);
        eng__rgs_free(c->rgs, c->n_rgs);
        xfree(c);
    }
    struct eng__lq *lq, *lt;
    for (lq = e->lqs; lq; lq = lt) {
        lt = lq->hh.next;
        eng_delete_local_queue(e, lq->ns, lq->name);
    }
    struct eng__ns *ns, *nt;
    for (ns = e->nss; ns; ns = nt) {
        nt = ns->hh.next;
        eng_delete_namespace(e, ns->name);
    }
}

void eng_free(struct eng *e)
{
    if (!e)
        return;
    free_queues(e);
    free_workloads(e);
    for (int i = 0; i < e->n_flv; i++) {
        struct eng__flavor *f = &e->flavors[i];
        xfree(f->name);
        api_labels_release(&f->labels);
        eng__taints_free(f->taints, f->n_taints);
        eng__tols_free(f->tols, f->n_tols);
        xfree(f->topology);
    }
    xfree(e->flavors);
    eng__tas_free(e);
    for (int i = 0; i < e->n_res; i++)
        xfree(e->res_names[i]);
    xfree(e->res_names);
    free_names(&e->res_ids);
    free_names(&e->flv_ids);
    struct eng__fr_key *k, *kt;
    for (k = e->fr_ids; k; k = kt) {
        kt = k->hh.next;
        HASH_DEL(e->fr_ids, k);
        xfree(k);
    }
    xfree(e->fr_flv);
    xfree(e->fr_res);
    eng__fp_free_all(e);
    struct eng__istr *is, *it;
    for (is = e->istrs; is; is = it) {
        it = is->hh.next;
        HASH_DEL(e->istrs, is);
        xfree(is);
    }
    xfree(e->cq_sorted);
    xfree(e->cq_heap_bits);
    xfree(e->cq_rq_bits);
    xfree(e->undo);
    xfree(e->cyc);
    xfree(e->cyc_done);
    xfree(e->taken);
    eng__pscratch_free(e);
    xfree(e);
}

/* Recounted only after a ClusterQueue change (e->cq_max_flv < 0): a scan
 * of every ClusterQueue's groups is a cache miss or two each. */
static int soft_cycle_limit(struct eng *e)
{
    if (e->cq_max_flv < 0) {
        int m = 0;
        for (size_t i = 0; i < e->n_cq_sorted; i++)
            for (int g = 0; g < e->cq_sorted[i]->n_rgs; g++)
                if (e->cq_sorted[i]->rgs[g].n_flv > m)
                    m = e->cq_sorted[i]->rgs[g].n_flv;
        e->cq_max_flv = m;
    }
    return e->cq_max_flv + 2;
}

static int64_t next_wakeup(const struct eng *e)
{
    int64_t w = 0;
    for (const struct eng__wl *wl = e->time_parked; wl; wl = wl->tnext) {
        if (!wl->requeued_false && wl->requeue_at_ms > e->now_ms && (!w || wl->requeue_at_ms < w))
            w = wl->requeue_at_ms;
        int64_t a = eng__wl_avoid_end(e, wl);
        if (a && (!w || a < w))
            w = a;
    }
    return w;
}

/* Bring queues and quotas up to date before cycles run. */
void eng__prepare(struct eng *e, int64_t now_ms)
{
    e->now_ms = now_ms;
    eng__tree_rebuild(e);
    if (e->route_all)
        eng__route_all(e);
    eng__process_requeues(e);
    eng__process_time_parked(e);
}

int eng_schedule(struct eng *e, int64_t now_ms, size_t max_decisions, struct eng_result *out)
{
    size_t start = out->n;
    e->out = out;
    e->max_decisions = max_decisions;
    e->n_decided = 0;
    eng__prepare(e, now_ms);
    eng__flush_unsent(e);
    int soft = 0, soft_max = soft_cycle_limit(e);
    while (eng__budget_left(e)) {
        uint64_t hp = e->hard_progress, p = e->progress;
        bool had = false;
        eng__run_cycle(e, &had);
        out->cycles++;
        out->head_cycles += had;
        if (!had || e->cfg.kueue_one_head_per_cq)
            break;
        if (e->hard_progress != hp) {
            soft = 0;
            continue;
        }
        if (e->progress == p || ++soft > soft_max)
            break;
    }
    out->next_wakeup_ms = next_wakeup(e);
    e->out = NULL;
    eng__check_usage(e);
    return (int)(out->n - start);
}
