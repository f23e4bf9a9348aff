/*
 * cycle: one scheduling cycle, Kueue's scheduler.schedule restated
 * (shared/spec/kueue.md §2.3): take one head per active ClusterQueue,
 * nominate each (admissibility, flavor assignment, preemption targets,
 * partial admission), order the entries globally, process them in order
 * against the live usage (every admission or preemptor reservation consumes
 * capacity before the next entry is checked: no over-admission), then
 * requeue what was not admitted.
 *
 * The live usage plays the role of Kueue's snapshot: admissions are assumed
 * permanently; preemptor reservations and capacity reservations for
 * unreclaimable preemptors are cycle-local (undo log), victims stay counted
 * until the control plane releases their quota.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine-int.h"
#include "util/sbuf.h"
#include "util/xalloc.h"


/* ---- nomination ---- */

static struct eng__wl *replaced_slice(struct eng *e, struct eng__wl *wl, struct eng__cq *cq)
{
    if (!wl->replacement_for)
        return NULL;
    const char *slash = strchr(wl->replacement_for, '/');
    if (!slash)
        return NULL;
    char *ns = xstrndup(wl->replacement_for, (size_t)(slash - wl->replacement_for));
    struct eng__wl *old = eng__wl_find(e, ns, slash + 1);
    xfree(ns);
    return old && old->reserved && old->rcq == cq ? old : NULL;
}

static bool can_partially_admit(const struct eng__wl *wl)
{
    for (int i = 0; i < wl->n_ps; i++)
        if (wl->ps[i].min_count > 0 && wl->ps[i].count > wl->ps[i].min_count)
            return true;
    return false;
}

/* Binary search over the shrink budget (Kueue PodSetReducer, §2.7). */
static bool partial(struct eng *e, struct eng__entry *en)
{
    struct eng__wl *wl = en->wl;
    int64_t total = 0;
    int32_t *counts = xcalloc((size_t)wl->n_ps + 1, sizeof(int32_t));
    for (int i = 0; i < wl->n_ps; i++)
        if (wl->ps[i].min_count > 0 && wl->ps[i].count > wl->ps[i].min_count)
            total += wl->ps[i].count - wl->ps[i].min_count;
    int64_t lo = 0, hi = total + 1;
    bool found = false;
    struct eng__asg best = {0};
    struct eng__targets bt = {0};
    while (lo < hi) {
        int64_t k = lo + (hi - lo) / 2;
        eng__pmemo_reset(e);
        for (int i = 0; i < wl->n_ps; i++) {
            const struct eng__ps *ps = &wl->ps[i];
            int64_t d = ps->min_count > 0 && ps->count > ps->min_count ? ps->count - ps->min_count : 0;
            int32_t base = ps->count - ps->reclaim;
            counts[i] = (int32_t)(base - (total ? d * k / total : 0));
            if (counts[i] < 0)
                counts[i] = 0;
        }
        struct eng__asg a;
        struct eng__targets t = {0};
        eng__assign(e, en->cq, wl, counts, NULL, &a);
        int m = eng__asg_mode(&a);
        bool ok = m == ENG__FIT;
        if (m == ENG__PREEMPT) {
            eng__get_targets(e, en->cq, wl, &a, &t);
            ok = t.n > 0;
        }
        if (ok) {
            eng__asg_free(&best);
            eng__targets_free(&bt);
            best = a;
            bt = t;
            found = true;
            hi = k;
        } else {
            eng__asg_free(&a);
            eng__targets_free(&t);
            lo = k + 1;
        }
    }
    xfree(counts);
    if (found && lo <= total) {
        eng__asg_free(&en->a);
        en->a = best;
        en->t = bt;
        return true;
    }
    eng__asg_free(&best);
    eng__targets_free(&bt);
    return false;
}

/* Kueue getInitialAssignments. */
static void get_assignments(struct eng *e, struct eng__entry *en)
{
    eng__pmemo_reset(e);
    en->old = replaced_slice(e, en->wl, en->cq);
    eng__assign(e, en->cq, en->wl, NULL, en->old, &en->a);
    int m = eng__asg_mode(&en->a);
    if (m == ENG__FIT)
        return;
    if (m == ENG__PREEMPT) {
        eng__get_targets(e, en->cq, en->wl, &en->a, &en->t);
        if (en->t.n)
            return;
    }
    if (!en->old && can_partially_admit(en->wl) && partial(e, en))
        return;
}

static uint64_t scan_sig(const struct eng__wl *wl)
{
    uint64_t h = wl->has_last ? 1469598103934665603ULL : 7;
    for (int i = 0; wl->has_last && i < 3 * wl->n_last; i++)
        h = (h ^ (uint64_t)(uint32_t)wl->last_idx[i]) * 1099511628211ULL;
    return h;
}

static void clear_last(struct eng__wl *wl)
{
    wl->has_last = false;
    XFREE(wl->last_idx);
    wl->n_last = 0;
}

/* Remember where the flavor scan stopped (Kueue LastAssignment). */
static void record_last(struct eng *e, struct eng__wl *wl, const struct eng__asg *a)
{
    clear_last(wl);
    int n = 0;
    for (int i = 0; i < a->n_ps; i++)
        n += a->ps[i].n_ra;
    wl->last_idx = xcalloc(3 * (size_t)n + 1, sizeof(int));
    for (int i = 0; i < a->n_ps; i++)
        for (int k = 0; k < a->ps[i].n_ra; k++) {
            const struct eng__ra *ra = &a->ps[i].ra[k];
            if (ra->flv < 0)
                continue;
            wl->last_idx[3 * wl->n_last] = i;
            wl->last_idx[3 * wl->n_last + 1] = ra->res;
            wl->last_idx[3 * wl->n_last + 2] = ra->tried;
            wl->n_last++;
        }
    wl->has_last = true;
    wl->last_cycle = e->cycle;
    wl->last_gen = a->gen;
    wl->last_hash = wl->hash;
}

static void nominate(struct eng *e, struct eng__entry *en)
{
    struct eng__wl *wl = en->wl;
    struct eng__ns *ns;
    HASH_FIND_STR(e->nss, wl->ns, ns);
    if (!ns) {
        en->msg = xasprintf("workload namespace \"%s\" does not exist: namespaces \"%s\" not found",
                            wl->ns, wl->ns);
        en->reason = "Misconfigured";
        return;
    }
    if (!eng__ns_matches(e, en->cq, wl->ns)) {
        en->msg = xstrdup("workload namespace doesn't match ClusterQueue selector");
        en->reason = "Misconfigured";
        en->rq = ENG__RQ_NS_MISMATCH;
        return;
    }
    en->scan_before = scan_sig(wl);
    if (wl->has_last && (wl->last_hash != wl->hash ||
                         (wl->last_cycle + 1 < e->cycle && en->cq->alloc_gen > wl->last_gen)))
        clear_last(wl);
    get_assignments(e, en);
    en->nominated = true;
    en->keep_scan = true;
    if (eng__asg_mode(&en->a) != ENG__FIT)
        en->msg = eng__asg_message(&en->a, wl);
}

/* ---- ordering (Kueue classicalIterator, plus unique tie-breaks) ---- */

static int entry_cmp(const void *x, const void *y)
{
    const struct eng__entry *a = x, *b = y;
    if (a->nominated != b->nominated)
        return a->nominated ? -1 : 1;
    if (a->a.borrowing != b->a.borrowing)
        return a->a.borrowing < b->a.borrowing ? -1 : 1;
    return eng__wl_cmp_order(a->wl, b->wl);
}

/* ---- processing ---- */

/* The victims of this cycle's preemptions so far; membership is the
 * workload's victim_cycle mark. */
struct victims {
    struct eng__wl **v;
    size_t n, cap;
};

static bool victims_has(const struct eng *e, const struct eng__wl *wl)
{
    return wl->victim_cycle == e->cycle;
}

static void victims_add(struct eng *e, struct victims *vs, struct eng__wl *wl)
{
    if (victims_has(e, wl))
        return;
    wl->victim_cycle = e->cycle;
    XGROW(vs->v, vs->cap, vs->n + 1);
    vs->v[vs->n++] = wl;
}

/* Only usage in cq's own cohort tree matters to what fits in cq. */
static bool in_tree(const struct eng__wl *v, const struct eng__node *root)
{
    return v->rcq && eng__node_root(&v->rcq->node) == root;
}

/* Simulate the removal (sign -1) or return (+1) of the earlier victims in
 * cq's tree and of the entry's own targets that are not among them. */
static void sim_victims(struct eng *e, const struct eng__entry *en, const struct victims *vs,
                        bool own, int sign)
{
    const struct eng__node *root = eng__node_root(&en->cq->node);
    for (size_t i = 0; i < vs->n; i++)
        if (in_tree(vs->v[i], root))
            eng__wl_charge(e, vs->v[i], sign);
    for (size_t i = 0; own && i < en->t.n; i++)
        if (!victims_has(e, en->t.v[i].wl) && in_tree(en->t.v[i].wl, root))
            eng__wl_charge(e, en->t.v[i].wl, sign);
}

/* cq.Fits(usage) with earlier victims and own targets simulated away. */
static bool fits_now(struct eng *e, struct eng__entry *en, const struct victims *vs)
{
    sim_victims(e, en, vs, true, -1);
    bool ok = true;
    for (int u = 0; u < en->a.n_use && ok; u++)
        ok = en->a.use_amt[u] <= eng__cq_available(en->cq, en->a.use_fr[u]);
    sim_victims(e, en, vs, true, +1);
    return ok;
}

/* Targets overlap earlier victims: recompute on the nominated flavors as if
 * those victims were gone; a fit waits for them (DeferredFit, §2.3 a/d). */
static bool deferred_fit(struct eng *e, struct eng__entry *en, const struct victims *vs)
{
    int32_t *counts = xcalloc((size_t)en->a.n_ps + 1, sizeof(int32_t));
    for (int i = 0; i < en->a.n_ps; i++)
        counts[i] = en->a.ps[i].count;
    sim_victims(e, en, vs, false, -1);
    clear_last(en->wl); /* the recomputation starts from the first flavor */
    en->keep_scan = false;
    struct eng__asg b;
    eng__assign_pinned(e, en->cq, en->wl, en->a.n_ps == en->wl->n_ps ? counts : NULL, en->old, &en->a, &b);
    bool fit = eng__asg_mode(&b) == ENG__FIT;
    sim_victims(e, en, vs, false, +1);
    xfree(counts);
    if (fit) {
        for (int u = 0; u < b.n_use; u++)
            eng__cq_add_usage(e, en->cq, b.use_fr[u], b.use_amt[u]);
        xfree(en->msg);
        en->msg = xstrdup("Workload has overlapping preemption targets with another workload, but will "
                          "fit after these preemptions complete");
        en->reason = "WaitingForPreemptedWorkloads";
        en->rq = ENG__RQ_PENDING_PREEMPTION;
    }
    eng__asg_free(&b);
    return fit;
}

/* Kueue resourcesToReserve for a Preempt entry without candidates. */
static void reserve_capacity(struct eng *e, struct eng__entry *en)
{
    if (en->cq->reclaim == PP_ANY)
        return;
    for (int u = 0; u < en->a.n_use; u++) {
        int fr = en->a.use_fr[u];
        int64_t amt = en->a.use_amt[u];
        int i = eng__node_idx(&en->cq->node, fr);
        if (i < 0)
            continue;
        const struct eng__quota *q = &en->cq->node.q[i];
        int64_t used = en->cq->node.usage[i], r;
        if (en->a.borrowing > 0) {
            r = amt;
            if (q->has_bl) {
                int64_t lim = eng__amt_sub(eng__amt_add(q->nominal, q->borrowing_limit), used);
                r = amt < lim ? amt : lim;
            }
        } else {
            int64_t lim = eng__amt_sub(q->nominal, used);
            r = amt < lim ? amt : lim;
            if (r < 0)
                r = 0;
        }
        eng__cq_add_usage(e, en->cq, fr, r);
    }
}

/* "/root/.../n" (Kueue's queue path of a preemption message). */
static void path_add(struct sbuf *sb, const struct eng__node *n)
{
    if (!n) {
        sbuf_adds(sb, "/UNKNOWN");
        return;
    }
    if (n->parent)
        path_add(sb, n->parent);
    sbuf_addc(sb, '/');
    sbuf_adds(sb, n->name);
}

static const char *human_reason(const char *r)
{
    if (!strcmp(r, "InClusterQueue"))
        return "prioritization in the ClusterQueue";
    if (!strcmp(r, "InCohortReclamation"))
        return "reclamation within the cohort";
    if (!strcmp(r, "InCohortFairSharing"))
        return "Fair Sharing within the cohort";
    if (!strcmp(r, "InCohortReclaimWhileBorrowing"))
        return "reclamation within the cohort while borrowing";
    return "UNKNOWN";
}

/* Kueue IssuePreemptions; returns how many targets count as preempted. */
static size_t issue_preemptions(struct eng *e, struct eng__entry *en)
{
    size_t n = 0;
    for (size_t i = 0; i < en->t.n; i++) {
        struct eng__wl *v = en->t.v[i].wl;
        if (v == en->old)
            continue;
        n++;
        if (v->evicted || v->preempted)
            continue;
        v->preempted = true;
        e->usage_epoch++;
        e->hard_progress++;
        struct eng_decision *d = eng__decision_new(e, ENG_PREEMPT, v, v->rcq_name);
        eng__wl_ref_set(&d->preemptor, en->wl);
        d->reason = xstrdup(en->t.v[i].reason);
        struct sbuf sb;
        sbuf_init(&sb, 0);
        sbuf_adds(&sb, "Preempted to accommodate a workload (UID: ");
        sbuf_adds(&sb, *en->wl->uid ? en->wl->uid : "UNKNOWN");
        sbuf_adds(&sb, ", JobUID: ");
        sbuf_adds(&sb, en->wl->job_uid ? en->wl->job_uid : "UNKNOWN");
        sbuf_adds(&sb, ") due to ");
        sbuf_adds(&sb, human_reason(en->t.v[i].reason));
        sbuf_adds(&sb, "; preemptor path: ");
        path_add(&sb, &en->cq->node);
        sbuf_adds(&sb, "; preemptee path: ");
        path_add(&sb, v->rcq ? &v->rcq->node : NULL);
        d->message = eng__sbuf_take(&sb);
    }
    return n;
}

static void process(struct eng *e, struct eng__entry *en, struct victims *vs)
{
    int mode = eng__asg_mode(&en->a);
    if (mode == ENG__NOFIT) {
        en->rq = ENG__RQ_NOFIT;
        en->reason = eng__nofit_reason(en->a.nofit);
        if (!*en->reason)
            en->reason = "WaitingForQuota";
        return;
    }
    if (mode == ENG__PREEMPT && !en->t.n) {
        en->rq = ENG__RQ_NOCAND;
        en->reason = "WaitingForQuota";
        reserve_capacity(e, en);
        return;
    }
    bool overlap = false;
    for (size_t i = 0; i < en->t.n; i++)
        overlap = overlap || victims_has(e, en->t.v[i].wl);
    if (overlap && deferred_fit(e, en, vs))
        return;
    if (overlap || !fits_now(e, en, vs)) {
        en->skipped = true;
        xfree(en->msg);
        en->msg = xstrdup(overlap ? "Workload has overlapping preemption targets with another workload"
                                  : "Workload no longer fits after processing another workload");
        en->reason = "WaitingForQuota";
        clear_last(en->wl);
        en->keep_scan = false;
        return;
    }
    for (size_t i = 0; i < en->t.n; i++)
        victims_add(e, vs, en->t.v[i].wl);
    if (mode == ENG__PREEMPT) {
        for (int u = 0; u < en->a.n_use; u++)
            eng__cq_add_usage(e, en->cq, en->a.use_fr[u], en->a.use_amt[u]);
        en->reason = "WaitingForPreemptedWorkloads";
        size_t n = issue_preemptions(e, en);
        char *m = xasprintf("%s. Pending the preemption of %zu workload(s)", en->msg, n);
        xfree(en->msg);
        en->msg = m;
        en->rq = ENG__RQ_PENDING_PREEMPTION;
        clear_last(en->wl);
        en->keep_scan = false;
        return;
    }
    en->assumed = true;
    eng__admit(e, en->cq, en->wl, &en->a, en->old);
}

/* ---- requeue (Kueue requeueAndUpdate / RequeueIfNotPresent) ---- */

/* Equivalence hashing: park every heap workload with the same scheduling
 * hash (BestEffortFIFO only). One pass over the heap array (deterministic
 * order), then the heap is rebuilt. */
static void bulk_move(struct eng *e, struct eng__cq *cq, uint64_t hash, const char *reason)
{
    size_t cap = cq->cap_bulk;
    XGROW(cq->bulk_hash, cap, cq->n_bulk + 1);
    cap = cq->cap_bulk;
    XGROW(cq->bulk_reason, cap, cq->n_bulk + 1);
    cq->cap_bulk = cap;
    cq->bulk_hash[cq->n_bulk] = hash;
    cq->bulk_reason[cq->n_bulk++] = xstrdup(reason);
    size_t n = eng__heap_park_many(e, cq, hash);
    if (!n)
        return;
    struct eng__wl **m = e->taken;
    const char *ir = eng__istr_get(e, reason);
    const char *im = eng__istr_get(e, "Bypassed scheduling evaluation because an equivalent workload "
                                      "recently failed");
    for (size_t i = 0; i < n; i++) { /* parked already */
        if (i + 8 < n)
            __builtin_prefetch(m[i + 8], 1);
        m[i]->bypassed = true;
        if (m[i]->last_reason != ir || m[i]->last_msg != im) /* else nothing new to emit */
            eng__emit_pending_interned(e, m[i], eng__istr_ref(ir), eng__istr_ref(im));
    }
    eng__istr_put(e, ir);
    eng__istr_put(e, im);
}

static void requeue(struct eng *e, struct eng__entry *en)
{
    struct eng__cq *cq = en->cq;
    struct eng__wl *wl = en->wl;
    if (en->nominated && en->keep_scan)
        record_last(e, wl, &en->a);
    if (en->nominated && scan_sig(wl) != en->scan_before)
        e->progress++;
    if (en->nominated && en->rq == ENG__RQ_GENERIC)
        en->rq = ENG__RQ_FAILED_AFTER_NOMINATION;
    bool immediate = cq->strategy == QS_STRICT_FIFO
                         ? en->rq != ENG__RQ_NS_MISMATCH
                         : en->rq == ENG__RQ_FAILED_AFTER_NOMINATION || en->rq == ENG__RQ_PENDING_PREEMPTION;
    if (en->rq == ENG__RQ_PENDING_PREEMPTION) {
        cq->preemptor = wl;
        if (cq->strategy == QS_BEST_EFFORT_FIFO)
            cq->sticky = wl;
    } else if (cq->preemptor == wl) {
        cq->preemptor = NULL;
        if (cq->sticky == wl)
            cq->sticky = NULL;
    }
    bool pending_flv = false;
    for (int t = 0; wl->has_last && t < wl->n_last; t++)
        pending_flv = pending_flv || wl->last_idx[3 * t + 2] != -1;
    if (eng__wl_backoff_expired(e, wl) && (immediate || pending_flv)) {
        eng__heap_push(e, cq, wl);
    } else {
        eng__wl_park(e, cq, wl);
        e->hard_progress++;
        if (cq->strategy == QS_BEST_EFFORT_FIFO && (en->rq == ENG__RQ_NOFIT || en->rq == ENG__RQ_NOCAND))
            bulk_move(e, cq, wl->hash, en->reason ? en->reason : "PendingEvaluation");
    }
    if (en->msg && en->reason)
        eng__emit_pending(e, wl, en->reason, en->msg);
}

static void entry_free(struct eng__entry *en)
{
    eng__asg_free(&en->a);
    eng__targets_free(&en->t);
    xfree(en->msg);
}

int eng__run_cycle(struct eng *e, bool *had_heads)
{
    size_t n = 0;
    XGROW(e->cyc, e->cap_cyc, e->n_cq_sorted + 1);
    e->cyc_done = xreallocarray(e->cyc_done, e->cap_cyc, sizeof(bool));
    struct eng__entry *v = e->cyc;
    bool *done = e->cyc_done;
    e->cycle++;
    /* the heads, in cq_sorted order: only the ClusterQueues of
     * cq_heap_bits can have one; a bit whose heap is empty is cleared */
    size_t nw = (e->n_cq_sorted + 63) / 64;
    for (size_t w = 0; w < nw; w++) {
        for (uint64_t b = e->cq_heap_bits[w]; b; b &= b - 1) {
            size_t bit = (size_t)__builtin_ctzll(b);
            struct eng__cq *cq = e->cq_sorted[w * 64 + bit];
            if (!cq->n_heap) {
                e->cq_heap_bits[w] &= ~(UINT64_C(1) << bit);
                continue;
            }
            if (!cq->active || cq->node.in_cycle)
                continue;
            memset(&v[n], 0, sizeof(v[n]));
            done[n] = false;
            v[n].cq = cq;
            v[n++].wl = eng__heap_pop(cq);
        }
    }
    *had_heads = n > 0;
    e->undo_on = true;
    for (size_t i = 0; i < n; i++)
        nominate(e, &v[i]);
    if (!e->cfg.fair_sharing && n > 1)
        qsort(v, n, sizeof(*v), entry_cmp);
    struct victims vs = {0};
    for (size_t k = 0; k < n && eng__budget_left(e); k++) {
        size_t i = e->cfg.fair_sharing ? eng__fair_next(e, v, n, done) : k;
        done[i] = true;
        v[i].processed = true;
        if (v[i].nominated)
            process(e, &v[i], &vs);
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i].assumed)
            continue;
        if (!v[i].processed) {
            eng__heap_push(e, v[i].cq, v[i].wl); /* out of budget: untouched */
            continue;
        }
        requeue(e, &v[i]);
    }
    eng__undo_all(e);
    e->undo_on = false;
    for (size_t i = 0; i < n; i++)
        entry_free(&v[i]);
    xfree(vs.v);
    return (int)n;
}
