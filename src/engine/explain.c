/*
 * explain: why a pending workload is pending and when it may be admitted
 * (cueue's extension, docs/engine.md).
 *
 *  - position: rank among its ClusterQueue's pending workloads, queue order;
 *  - blockers: for every (flavor, resource) of its ClusterQueue that the
 *    workload's request does not fit into now, how much more is needed and
 *    which quota holders (its ClusterQueue's and the cohort's) use it;
 *  - estimate: a copy of the engine is run forward: at each step the quota
 *    holders whose expected end (eng_set_expected_end) has come finish,
 *    evictions complete at once, and the copy schedules; the first time the
 *    workload gets a reservation is the estimate. Workloads without an
 *    expected end never finish in the copy, so the estimate is 0 (unknown)
 *    when the workload can only start after one of them.
 */
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "engine/engine-int.h"
#include "util/err.h"
#include "util/xalloc.h"

#define EXPLAIN_MAX_STEPS 4096

/* 0-based position among the ClusterQueue's pending workloads in queue order. */
static int32_t position(const struct eng__wl *wl)
{
    const struct eng__cq *cq = wl->qcq;
    if (!cq)
        return -1;
    int32_t pos = 0;
    for (size_t i = 0; i < cq->n_heap; i++)
        if (cq->heap[i] != wl && eng__wl_cmp_queue(cq, cq->heap[i], wl) < 0)
            pos++;
    for (size_t i = 0; i < cq->n_park; i++) {
        const struct eng__wl *w = cq->park[i].wl; /* NULL: a hole */
        if (w && w != wl && eng__wl_cmp_queue(cq, w, wl) < 0)
            pos++;
    }
    return pos;
}

/* ---- blockers ---- */

static int holder_cmp(const void *a, const void *b)
{
    const struct eng__wl *x = *(struct eng__wl *const *)a, *y = *(struct eng__wl *const *)b;
    if (x->quota_reserved_ms != y->quota_reserved_ms)
        return x->quota_reserved_ms < y->quota_reserved_ms ? -1 : 1;
    return strcmp(x->key, y->key);
}

/* Quota holders in cq's cohort tree (or cq) that use fr. */
static void holders_of(struct eng *e, struct eng__cq *cq, int fr, struct eng_blocker *b)
{
    struct eng__wl **v = NULL;
    size_t n = 0, cap = 0;
    struct eng__node *root = eng__node_root(&cq->node);
    for (size_t k = 0; k < e->n_cq_sorted; k++) {
        struct eng__cq *q = e->cq_sorted[k];
        if (q != cq && (!cq->node.parent || eng__node_root(&q->node) != root))
            continue;
        for (struct eng__wl *w = q->holders; w; w = w->hnext)
            if (eng__wl_uses_frs(w, &fr, 1)) {
                XGROW(v, cap, n + 1);
                v[n++] = w;
            }
    }
    if (n)
        qsort(v, n, sizeof(*v), holder_cmp);
    b->holders = xcalloc(n + 1, sizeof(*b->holders));
    for (size_t i = 0; i < n; i++)
        eng__wl_ref_set(&b->holders[b->n_holders++], v[i]);
    xfree(v);
}

static void add_blocker(struct eng *e, struct eng__cq *cq, int flv, int res, int64_t need,
                        struct eng_explanation *out)
{
    out->blockers = xreallocarray(out->blockers, out->n_blockers + 1, sizeof(*out->blockers));
    struct eng_blocker *b = &out->blockers[out->n_blockers++];
    memset(b, 0, sizeof(*b));
    b->flavor = xstrdup(e->flavors[flv].name);
    b->resource = xstrdup(e->res_names[res]);
    b->needed = need;
    holders_of(e, cq, eng__fr_id(e, flv, res), b);
}

/* Every eligible (flavor, resource) whose unused quota is short of what
 * the workload's pod sets ask for (per pod set, in flavor order). */
static void blockers(struct eng *e, struct eng__wl *wl, struct eng_explanation *out)
{
    struct eng__cq *cq = wl->qcq;
    for (int i = 0; i < wl->n_ps; i++) {
        const struct eng__ps *ps = &wl->ps[i];
        int32_t count = ps->count - ps->reclaim;
        for (int r = 0; r < ps->n_req; r++) {
            const struct eng__rg *rg = eng__cq_rg(cq, ps->res[r]);
            int64_t val = eng__amt_mul(ps->per_pod[r], count > 0 ? count : 0);
            for (int f = 0; rg && f < rg->n_flv; f++) {
                int flv = rg->flv[f];
                if (!e->flavors[flv].exists || eng__shape_match(e, ps->shape, flv))
                    continue;
                int64_t avail = eng__cq_available(cq, eng__fr_id(e, flv, ps->res[r]));
                if (val > avail)
                    add_blocker(e, cq, flv, ps->res[r], eng__amt_sub(val, avail), out);
            }
        }
    }
}

/* ---- the forward simulation ---- */

static void release_preempted(struct eng *sim, const struct eng_result *r)
{
    for (size_t i = 0; i < r->n; i++) {
        if (r->items[i].type != ENG_PREEMPT)
            continue;
        struct eng__wl *v = eng__wl_find(sim, r->items[i].wl.ns, r->items[i].wl.name);
        if (v && v->reserved) {
            eng__holder_remove(sim, v, true);
            v->reserved = false;
            v->preempted = false;
            eng__wl_route(sim, v);
        }
    }
}

static bool reserved_in(const struct eng_result *r, const char *ns, const char *name)
{
    for (size_t i = 0; i < r->n; i++)
        if (r->items[i].type == ENG_RESERVE && !strcmp(r->items[i].wl.ns, ns) &&
            !strcmp(r->items[i].wl.name, name))
            return true;
    return false;
}

/* Workloads the simulation reserved at t end their expected run time later. */
static void start_clocks(struct eng *sim, const struct eng_result *r, int64_t t)
{
    for (size_t i = 0; i < r->n; i++) {
        if (r->items[i].type != ENG_RESERVE)
            continue;
        struct eng__wl *v = eng__wl_find(sim, r->items[i].wl.ns, r->items[i].wl.name);
        if (v && v->expected_runtime_ms > 0 && v->expected_end_ms <= 0)
            v->expected_end_ms = t + v->expected_runtime_ms;
    }
}

/* Finish the holders due by t; returns the next expected end after t, or 0. */
static int64_t finish_due(struct eng *sim, int64_t t)
{
    int64_t next = 0;
    struct eng__wl *wl, *tmp;
    for (wl = sim->wls; wl; wl = tmp) {
        tmp = wl->hh.next;
        if (!wl->reserved || wl->expected_end_ms <= 0)
            continue;
        if (wl->expected_end_ms <= t)
            eng_delete_workload(sim, wl->ns, wl->name);
        else if (!next || wl->expected_end_ms < next)
            next = wl->expected_end_ms;
    }
    return next;
}

static int64_t estimate(const struct eng *e, const struct eng__wl *wl, int64_t now_ms)
{
    struct eng *sim = eng__clone(e, wl->qcq);
    int64_t t = now_ms, found = 0;
    for (int step = 0; step < EXPLAIN_MAX_STEPS && !found; step++) {
        finish_due(sim, t);
        struct eng_result r = {0};
        eng_schedule(sim, t, 0, &r);
        bool preempted = false;
        for (size_t i = 0; i < r.n; i++)
            preempted = preempted || r.items[i].type == ENG_PREEMPT;
        int64_t wake = r.next_wakeup_ms;
        if (reserved_in(&r, wl->ns, wl->name))
            found = t;
        start_clocks(sim, &r, t);
        release_preempted(sim, &r);
        eng_result_release(&r);
        if (found || preempted)
            continue; /* evictions completed: schedule again at t */
        int64_t next = finish_due(sim, t);
        if (wake > t && (!next || wake < next))
            next = wake;
        if (!next)
            break;
        t = next;
    }
    eng_free(sim);
    return found;
}

int eng_explain(struct eng *e, const char *ns, const char *name, int64_t now_ms,
                struct eng_explanation *out)
{
    memset(out, 0, sizeof(*out));
    struct eng__wl *wl = eng__wl_find(e, ns, name);
    if (!wl || wl->finished)
        return CU_ENOTFOUND;
    eng__prepare(e, now_ms);
    out->reason = xstrdup(wl->last_reason);
    out->message = xstrdup(wl->last_msg);
    if (!wl->reserved && wl->qcq && wl->qcq->node.in_cycle) {
        /* Kueue skips such a queue without a word; say why */
        xfree(out->reason);
        xfree(out->message);
        out->reason = xstrdup("Pending");
        out->message = xasprintf("ClusterQueue %s is not scheduled: the parents of its cohort "
                                 "%s form a cycle; break the cycle (a Cohort's "
                                 "spec.parentName) to admit its workloads",
                                 wl->qcq->node.name, wl->qcq->cohort_name);
    }
    if (wl->reserved) {
        out->position = -1;
        out->estimated_admission_ms = wl->quota_reserved_ms;
        return 0;
    }
    out->position = position(wl);
    if (wl->qcq)
        blockers(e, wl, out);
    out->estimated_admission_ms = estimate(e, wl, now_ms);
    return 0;
}

void eng_explanation_release(struct eng_explanation *x)
{
    if (!x)
        return;
    xfree(x->reason);
    xfree(x->message);
    for (size_t i = 0; i < x->n_blockers; i++) {
        xfree(x->blockers[i].flavor);
        xfree(x->blockers[i].resource);
        for (size_t h = 0; h < x->blockers[i].n_holders; h++)
            eng_wl_ref_release(&x->blockers[i].holders[h]);
        xfree(x->blockers[i].holders);
    }
    xfree(x->blockers);
    memset(x, 0, sizeof(*x));
}
