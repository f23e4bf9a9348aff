/*
 * clone: a copy of an engine, built by feeding the original's objects back
 * through the public upserts (so the copy is exactly what the same inputs
 * would have produced). eng_explain runs the copy forward in time; the
 * original is never touched.
 */
#include <stdint.h>
#include <string.h>
#include <utlist.h>

#include "engine/engine-int.h"
#include "util/xalloc.h"

static void groups_out(const struct eng *e, const struct eng__rg *rgs, int n,
                       struct api_resource_group **out, size_t *n_out)
{
    struct api_resource_group *g = xcalloc((size_t)n + 1, sizeof(*g));
    for (int i = 0; i < n; i++) {
        const struct eng__rg *rg = &rgs[i];
        g[i].n_covered = (size_t)rg->n_cov;
        g[i].covered = xcalloc((size_t)rg->n_cov + 1, sizeof(char *));
        for (int c = 0; c < rg->n_cov; c++)
            g[i].covered[c] = e->res_names[rg->res[c]];
        g[i].n_flavors = (size_t)rg->n_flv;
        g[i].flavors = xcalloc((size_t)rg->n_flv + 1, sizeof(*g[i].flavors));
        for (int f = 0; f < rg->n_flv; f++) {
            struct api_flavor_quotas *fq = &g[i].flavors[f];
            fq->name = e->flavors[rg->flv[f]].name;
            fq->n_resources = (size_t)rg->n_cov;
            fq->resources = xcalloc((size_t)rg->n_cov + 1, sizeof(*fq->resources));
            for (int c = 0; c < rg->n_cov; c++) {
                const struct eng__quota *q = &rg->quota[f * rg->n_cov + c];
                fq->resources[c] = (struct api_resource_quota){
                    e->res_names[rg->res[c]], q->nominal, q->has_bl, q->borrowing_limit,
                    q->has_ll, q->lending_limit};
            }
        }
    }
    *out = g;
    *n_out = (size_t)n;
}

static void groups_free(struct api_resource_group *g, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t f = 0; f < g[i].n_flavors; f++)
            xfree(g[i].flavors[f].resources);
        xfree(g[i].flavors);
        xfree(g[i].covered);
    }
    xfree(g);
}

static void clone_cq(struct eng *dst, const struct eng *e, const struct eng__cq *cq)
{
    struct api_cluster_queue in = {0};
    in.name = cq->node.name;
    in.cohort = cq->cohort_name;
    groups_out(e, cq->rgs, cq->n_rgs, &in.groups, &in.n_groups);
    in.queueing_strategy = cq->strategy;
    in.has_namespace_selector = cq->has_ns_selector;
    in.namespace_selector = cq->ns_selector;
    in.when_can_borrow = cq->when_borrow;
    in.when_can_preempt = cq->when_preempt;
    in.preference = cq->preference;
    in.within_cluster_queue = cq->within_cq;
    in.reclaim_within_cohort = cq->reclaim;
    in.borrow_within_cohort = cq->borrow_within;
    in.has_max_priority_threshold = cq->has_threshold;
    in.max_priority_threshold = cq->threshold;
    in.stop_policy = cq->stop_policy;
    in.fair_weight_milli = cq->node.fair_weight_milli;
    in.n_checks = cq->n_checks;
    in.checks = xcalloc(cq->n_checks + 1, sizeof(*in.checks));
    for (size_t c = 0; c < cq->n_checks; c++) {
        in.checks[c].name = cq->check_names[c];
        in.checks[c].n_on_flavors = cq->n_check_flv[c];
        in.checks[c].on_flavors = xcalloc(cq->n_check_flv[c] + 1, sizeof(char *));
        for (size_t f = 0; f < cq->n_check_flv[c]; f++)
            in.checks[c].on_flavors[f] = e->flavors[cq->check_flv[c][f]].name;
    }
    eng_upsert_cluster_queue(dst, &in, cq->ext_inactive_msg);
    for (size_t c = 0; c < cq->n_checks; c++)
        xfree(in.checks[c].on_flavors);
    xfree(in.checks);
    groups_free(in.groups, in.n_groups);
}

static void clone_objects(struct eng *dst, const struct eng *e)
{
    for (int i = 0; i < e->n_flv; i++) {
        const struct eng__flavor *f = &e->flavors[i];
        if (!f->exists)
            continue;
        struct api_resource_flavor rf = {f->name, f->labels, f->taints, f->n_taints, f->tols,
                                         f->n_tols, f->topology};
        eng_upsert_flavor(dst, &rf);
    }
    eng__tas_clone(dst, e);
    for (const struct eng__cohort *c = e->cohorts; c; c = c->hh.next) {
        if (!c->has_object)
            continue;
        struct api_cohort in = {c->node.name, c->parent_name, NULL, 0, c->node.fair_weight_milli};
        groups_out(e, c->rgs, c->n_rgs, &in.groups, &in.n_groups);
        eng_upsert_cohort(dst, &in);
        groups_free(in.groups, in.n_groups);
    }
    for (size_t k = 0; k < e->n_cq_sorted; k++)
        clone_cq(dst, e, e->cq_sorted[k]);
    for (const struct eng__lq *lq = e->lqs; lq; lq = lq->hh.next) {
        struct api_local_queue in = {lq->ns, lq->name, lq->cq_name, lq->stop_policy};
        eng_upsert_local_queue(dst, &in);
    }
    for (const struct eng__ns *ns = e->nss; ns; ns = ns->hh.next)
        eng_upsert_namespace(dst, ns->name, &ns->labels);
}

/* api_* inputs are borrowed and never written: the const is only lost in
 * the struct's field types. */
static char *unconst(const char *s) { return (char *)(uintptr_t)s; }

/* The api view of an engine workload (pointers borrowed from wl). */
static void wl_out(const struct eng *e, const struct eng__wl *wl, struct api_workload *w)
{
    memset(w, 0, sizeof(*w));
    w->ns = unconst(wl->ns);
    w->name = unconst(wl->name);
    w->uid = wl->uid;
    w->creation_ms = wl->creation_ms;
    w->queue_name = unconst(wl->queue_name);
    w->priority = wl->priority;
    w->active = wl->active;
    w->n_podsets = (size_t)wl->n_ps;
    w->podsets = xcalloc((size_t)wl->n_ps + 1, sizeof(*w->podsets));
    w->reclaimable = xcalloc((size_t)wl->n_ps + 1, sizeof(*w->reclaimable));
    for (int i = 0; i < wl->n_ps; i++) {
        const struct eng__ps *ps = &wl->ps[i];
        struct api_podset *p = &w->podsets[i];
        p->name = ps->name;
        p->count = ps->count;
        p->min_count = ps->min_count;
        p->requests.n = (size_t)ps->n_req;
        p->requests.items = xcalloc((size_t)ps->n_req + 1, sizeof(*p->requests.items));
        for (int r = 0; r < ps->n_req; r++)
            p->requests.items[r] = (struct api_res){e->res_names[ps->res[r]], ps->per_pod[r]};
        p->node_selector = ps->shape->node_selector;
        p->affinity_terms = ps->shape->terms;
        p->n_affinity_terms = ps->shape->n_terms;
        p->tolerations = ps->shape->tols;
        p->n_tolerations = ps->shape->n_tols;
        p->topology_mode = (enum api_topology_mode)ps->topo_mode;
        p->topology_level = ps->topo_level;
        p->slice_level = ps->slice_level;
        p->slice_size = ps->slice_size;
        w->reclaimable[w->n_reclaimable++] = (struct api_podset_assignment){.name = ps->name,
                                                                            .count = ps->reclaim};
    }
    w->evicted = wl->qo_ts_ms != wl->creation_ms;
    w->evicted_ms = wl->qo_ts_ms;
    w->evicted_reason = w->evicted ? "PodsReadyTimeout" : NULL;
    w->requeued_false = wl->requeued_false;
    w->requeue_at_ms = wl->requeue_at_ms;
    w->quota_reserved_ms = wl->quota_reserved_ms;
    w->admitted = wl->admitted;
    w->elastic = wl->elastic;
    w->replacement_for = wl->replacement_for;
    w->admission_gated_by = wl->gated_by;
    w->job_uid = wl->job_uid;
    w->n_avoid_flavors = (size_t)wl->n_avoid;
    w->avoid_flavors = xcalloc((size_t)wl->n_avoid + 1, sizeof(*w->avoid_flavors));
    for (int i = 0; i < wl->n_avoid; i++)
        w->avoid_flavors[i] = (struct api_flavor_avoid){e->flavors[wl->avoid_flv[i]].name,
                                                        wl->avoid_until[i]};
}

static void admission_out(const struct eng *e, const struct eng__wl *wl, struct api_workload *w)
{
    w->has_admission = true;
    w->quota_reserved = true;
    w->admission.cluster_queue = wl->rcq_name;
    w->admission.n_podsets = (size_t)wl->n_pa;
    w->admission.podsets = xcalloc((size_t)wl->n_pa + 1, sizeof(*w->admission.podsets));
    for (int p = 0; p < wl->n_pa; p++) {
        const struct eng__pa *pa = &wl->pa[p];
        struct api_podset_assignment *o = &w->admission.podsets[p];
        o->name = pa->name;
        o->count = pa->count;
        o->flavors.items = xcalloc((size_t)pa->n + 1, sizeof(*o->flavors.items));
        o->resource_usage.items = xcalloc((size_t)pa->n + 1, sizeof(*o->resource_usage.items));
        for (int r = 0; r < pa->n; r++) {
            o->flavors.items[o->flavors.n++] =
                (struct api_kv){e->res_names[pa->res[r]], e->flavors[pa->flv[r]].name};
            o->resource_usage.items[o->resource_usage.n++] =
                (struct api_res){e->res_names[pa->res[r]], pa->amt[r]};
        }
        o->topology = pa->ta; /* borrowed, as the rest */
    }
}

static void wl_out_free(struct api_workload *w)
{
    for (size_t i = 0; i < w->n_podsets; i++)
        xfree(w->podsets[i].requests.items);
    xfree(w->podsets);
    xfree(w->reclaimable);
    xfree(w->avoid_flavors);
    for (size_t p = 0; p < w->admission.n_podsets; p++) {
        xfree(w->admission.podsets[p].flavors.items);
        xfree(w->admission.podsets[p].resource_usage.items);
    }
    xfree(w->admission.podsets);
}

/* Upsert src's workload wl (and its reservation, if any) into dst. */
void eng__clone_workload(struct eng *dst, const struct eng *src, const struct eng__wl *wl)
{
    struct api_workload w;
    wl_out(src, wl, &w);
    if (wl->reserved)
        admission_out(src, wl, &w);
    eng_upsert_workload(dst, &w);
    wl_out_free(&w);
    struct eng__wl *c = eng__wl_find(dst, wl->ns, wl->name);
    if (c) {
        c->expected_end_ms = wl->expected_end_ms;
        c->expected_runtime_ms = wl->expected_runtime_ms;
        c->preempted = wl->preempted;
    }
}

static bool in_tree(const struct eng__cq *cq, const struct eng__node *root)
{
    return cq && (!root || eng__node_root((struct eng__node *)&cq->node) == root);
}

struct eng *eng__clone(const struct eng *e, const struct eng__cq *only)
{
    struct eng *dst = eng_new(&e->cfg);
    clone_objects(dst, e);
    const struct eng__node *root = only ? eng__node_root((struct eng__node *)&only->node) : NULL;
    for (const struct eng__wl *wl = e->wls; wl; wl = wl->hh.next) {
        if (wl->finished)
            continue;
        if (root && !in_tree(wl->rcq, root) && !in_tree(wl->qcq, root))
            continue; /* cannot affect the cohort tree of interest */
        eng__clone_workload(dst, e, wl);
    }
    dst->now_ms = e->now_ms;
    return dst;
}
