/*
 * workload: the engine's copy of a Workload (pod sets with per-pod requests
 * and interned placement shapes, the quota reservation and the usage it
 * charges), and the upsert/delete entry points.
 *
 * A quota-holding workload (status.admission, not finished) is charged to
 * its ClusterQueue and listed in that queue's holders. Releasing a
 * reservation (deletion, finish, eviction done, smaller reclaimable usage)
 * bumps the ClusterQueue's allocatable generation and retries the
 * inadmissible workloads of its cohort tree, as Kueue does.
 *
 * An upsert whose scheduling-relevant state did not change keeps the
 * workload where it was (heap slot or parked), so the control plane writing
 * a pending status back does not requeue the workload.
 */
#include <string.h>
#include <utlist.h>

#include "engine/engine-int.h"
#include "util/err.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

/* ---- hashing (64 bits, word at a time) ----
 * The hashes only ever decide equality (equivalence classes, "nothing
 * placement-relevant changed"), so any well-mixed 64-bit hash will do. */

/* NULL hashes as "" (as before); the length separates adjacent strings. */
static uint64_t hash_str(uint64_t h, const char *s) { return cu_hash_str(h, s); }

static uint64_t hash_i64(uint64_t h, int64_t v) { return cu_hash_word(h, (uint64_t)v); }

/* ---- shapes ---- */

static void shape_key(struct sbuf *sb, const struct api_podset *p)
{
    for (size_t i = 0; i < p->node_selector.n; i++)
        sbuf_addf(sb, "%s=%s,", p->node_selector.items[i].key, p->node_selector.items[i].value);
    sbuf_addc(sb, '|');
    for (size_t t = 0; t < p->n_affinity_terms; t++) {
        const struct api_node_term *term = &p->affinity_terms[t];
        for (size_t x = 0; x < term->n_exprs; x++) {
            sbuf_addf(sb, "%s %d(", term->exprs[x].key, (int)term->exprs[x].op);
            for (size_t v = 0; v < term->exprs[x].n_values; v++)
                sbuf_addf(sb, "%s,", term->exprs[x].values[v]);
            sbuf_addc(sb, ')');
        }
        sbuf_addc(sb, ';');
    }
    sbuf_addc(sb, '|');
    for (size_t i = 0; i < p->n_tolerations; i++) {
        const struct api_toleration *t = &p->tolerations[i];
        sbuf_addf(sb, "%s/%s/%s/%s,", t->key ? t->key : "", t->op ? t->op : "",
                  t->value ? t->value : "", t->effect ? t->effect : "");
    }
}

static struct eng__shape *shape_intern(struct eng *e, const struct api_podset *p)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    shape_key(&sb, p);
    struct eng__shape *s;
    HASH_FIND_STR(e->shapes, sb.buf, s);
    if (s) {
        sbuf_release(&sb);
        s->refs++;
        return s;
    }
    s = xcalloc(1, sizeof(*s));
    s->key = eng__sbuf_take(&sb);
    s->refs = 1;
    eng__labels_copy(&s->node_selector, &p->node_selector);
    s->n_terms = p->n_affinity_terms;
    s->terms = s->n_terms ? xcalloc(s->n_terms, sizeof(*s->terms)) : NULL;
    for (size_t t = 0; t < s->n_terms; t++)
        eng__reqs_copy(&s->terms[t].exprs, &s->terms[t].n_exprs, p->affinity_terms[t].exprs,
                       p->affinity_terms[t].n_exprs);
    eng__tols_copy(&s->tols, &s->n_tols, p->tolerations, p->n_tolerations);
    bool in; /* not in the table: this shape is unshared, freed by its last release */
    ENG__HASH_ADD(e->shapes, s->key, strlen(s->key), s, in);
    (void)in;
    return s;
}

/* ---- conversion ---- */

static int64_t queue_order_ts(const struct api_workload *in)
{
    if (in->evicted && in->evicted_reason &&
        (!strcmp(in->evicted_reason, "PodsReadyTimeout") ||
         !strcmp(in->evicted_reason, "AdmissionCheck")))
        return in->evicted_ms;
    return in->creation_ms;
}

static int32_t reclaimable_of(const struct api_workload *in, const char *ps)
{
    for (size_t i = 0; i < in->n_reclaimable; i++)
        if (in->reclaimable[i].name && !strcmp(in->reclaimable[i].name, ps))
            return in->reclaimable[i].count;
    return 0;
}

/* Interned string for s (NULL = ""), taking another reference on prev when
 * it is the same text (an upsert of a known workload saves the lookup). */
static const char *istr_reuse(struct eng *e, const char *prev, const char *s)
{
    if (!s)
        s = "";
    return prev && !strcmp(prev, s) ? eng__istr_ref(prev) : eng__istr_get(e, s);
}

/* Resource id of name; prev (the id the old version used at the same
 * place, or -1) is checked first. */
static int res_reuse(struct eng *e, int prev, const char *name)
{
    return prev >= 0 && !strcmp(e->res_names[prev], name) ? prev : eng__res_id(e, name);
}

/* prev: the old version's pod set at the same index, or NULL. */
static void ps_build(struct eng *e, struct eng__ps *ps, const struct api_podset *p, int32_t reclaim,
                     const struct eng__ps *prev)
{
    ps->name = xstrdup(p->name ? p->name : "main");
    ps->count = p->count;
    ps->min_count = p->min_count;
    ps->reclaim = reclaim;
    ps->n_req = (int)p->requests.n;
    /* one allocation: per_pod, then res */
    ps->per_pod = xcalloc((size_t)ps->n_req + 1, sizeof(int64_t) + sizeof(int));
    ps->res = (int *)(ps->per_pod + ps->n_req + 1);
    for (int r = 0; r < ps->n_req; r++) {
        ps->res[r] = res_reuse(e, prev && r < prev->n_req ? prev->res[r] : -1, p->requests.items[r].name);
        ps->per_pod[r] = p->requests.items[r].value;
    }
    ps->shape = shape_intern(e, p);
    ps->topo_mode = (int)p->topology_mode;
    ps->topo_level = p->topology_level ? xstrdup(p->topology_level) : NULL;
    ps->slice_level = p->slice_level ? xstrdup(p->slice_level) : NULL;
    ps->slice_size = p->slice_size;
}

static uint64_t sched_hash(const struct eng__wl *wl, const struct eng *e)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    h = hash_i64(h, wl->priority);
    for (int i = 0; i < wl->n_ps; i++) {
        const struct eng__ps *ps = &wl->ps[i];
        h = hash_str(h, ps->name);
        h = hash_i64(h, ps->count);
        h = hash_i64(h, ps->min_count);
        h = hash_str(h, ps->shape->key);
        h = hash_i64(h, ps->topo_mode);
        if (ps->topo_level)
            h = hash_str(h, ps->topo_level);
        if (ps->slice_level) {
            h = hash_str(h, ps->slice_level);
            h = hash_i64(h, ps->slice_size);
        }
        for (int r = 0; r < ps->n_req; r++) {
            h = hash_str(h, e->res_names[ps->res[r]]);
            h = hash_i64(h, ps->per_pod[r]);
        }
    }
    /* flavors kept off (flavor fallback) change what can fit: workloads
     * avoiding different flavors are not equivalent */
    for (int i = 0; i < wl->n_avoid; i++) {
        h = hash_i64(h, wl->avoid_flv[i]);
        h = hash_i64(h, wl->avoid_until[i]);
    }
    return h;
}

static uint64_t state_hash(const struct eng__wl *wl)
{
    uint64_t h = hash_i64(wl->hash, wl->qo_ts_ms);
    h = hash_str(h, wl->queue_name);
    h = hash_str(h, wl->gated_by);
    h = hash_i64(h, wl->active);
    h = hash_i64(h, wl->requeued_false);
    h = hash_i64(h, wl->requeue_at_ms);
    h = hash_i64(h, wl->creation_ms);
    for (int i = 0; i < wl->n_ps; i++)
        h = hash_i64(h, wl->ps[i].reclaim);
    return h;
}

static void usage_add(struct eng__wl *wl, int fr, int64_t amt, size_t *cap)
{
    for (int u = 0; u < wl->n_use; u++)
        if (wl->use_fr[u] == fr) {
            wl->use_amt[u] = eng__amt_add(wl->use_amt[u], amt);
            if (u == 0)
                wl->use0_amt = wl->use_amt[0];
            return;
        }
    size_t cap2 = *cap;
    XGROW(wl->use_fr, cap2, (size_t)wl->n_use + 1);
    XGROW(wl->use_amt, *cap, (size_t)wl->n_use + 1);
    if (!wl->n_use) {
        wl->use0_fr = fr;
        wl->use0_amt = amt;
    }
    wl->use_fr[wl->n_use] = fr;
    wl->use_amt[wl->n_use++] = amt;
}

/* Usage charged by a reservation: resourceUsage scaled down by reclaimable
 * pods (Kueue workload.Info TotalRequests from the admission). */
void eng__wl_recompute_usage(struct eng *e, struct eng__wl *wl)
{
    size_t cap = 0;
    XFREE(wl->use_fr);
    XFREE(wl->use_amt);
    wl->n_use = 0;
    for (int p = 0; p < wl->n_pa; p++) {
        const struct eng__pa *pa = &wl->pa[p];
        int32_t reclaim = 0;
        for (int i = 0; i < wl->n_ps; i++)
            if (!strcmp(wl->ps[i].name, pa->name))
                reclaim = wl->ps[i].reclaim;
        int32_t after = pa->count - reclaim;
        for (int r = 0; r < pa->n; r++) {
            if (pa->flv[r] < 0)
                continue;
            int64_t amt = pa->amt[r];
            if (reclaim > 0 && after < pa->count && pa->count > 0)
                amt = amt / pa->count * (after > 0 ? after : 0);
            usage_add(wl, eng__fr_id(e, pa->flv[r], pa->res[r]), amt, &cap);
        }
    }
}

static void admission_build(struct eng *e, struct eng__wl *wl, const struct api_workload *in)
{
    const struct api_admission *a = &in->admission;
    wl->rcq_name = xstrdup(a->cluster_queue ? a->cluster_queue : "");
    wl->n_pa = (int)a->n_podsets;
    wl->pa = xcalloc((size_t)wl->n_pa + 1, sizeof(*wl->pa));
    for (int p = 0; p < wl->n_pa; p++) {
        const struct api_podset_assignment *s = &a->podsets[p];
        struct eng__pa *pa = &wl->pa[p];
        pa->name = xstrdup(s->name ? s->name : "main");
        pa->count = s->count;
        if (pa->count <= 0)
            for (int i = 0; i < wl->n_ps; i++)
                if (!strcmp(wl->ps[i].name, pa->name))
                    pa->count = wl->ps[i].count;
        pa->n = (int)s->flavors.n;
        eng__pa_alloc(pa, pa->n);
        for (int r = 0; r < pa->n; r++) {
            pa->res[r] = eng__res_id(e, s->flavors.items[r].key);
            pa->flv[r] = eng__flv_id(e, s->flavors.items[r].value);
            pa->amt[r] = api_reslist_get(&s->resource_usage, s->flavors.items[r].key);
        }
        pa->ta = api_topology_assignment_dup(s->topology);
    }
    eng__wl_recompute_usage(e, wl);
}

/* The status's single-valued fields the engine keeps. */
static void status_scalars(struct eng__wl *wl, const struct api_workload *in)
{
    wl->qo_ts_ms = queue_order_ts(in);
    wl->requeue_at_ms = in->requeue_at_ms;
    wl->quota_reserved_ms = in->quota_reserved_ms;
    wl->finished = in->finished;
    wl->evicted = in->evicted;
    wl->requeued_false = in->requeued_false;
    wl->admitted = in->admitted;
}

/* The status parts of wl from in (wl's spec parts are in place). */
static void wl_build_status(struct eng *e, struct eng__wl *wl, const struct api_workload *in)
{
    status_scalars(wl, in);
    for (int i = 0; i < wl->n_ps && (size_t)i < in->n_podsets; i++)
        wl->ps[i].reclaim = reclaimable_of(in, in->podsets[i].name);
    wl->state_hash = state_hash(wl);
    if (in->has_admission && !in->finished) {
        wl->reserved = true;
        admission_build(e, wl, in);
    }
}

/* old: the current version of the same workload, or NULL. */
static struct eng__wl *wl_build(struct eng *e, const struct api_workload *in, const struct eng__wl *old)
{
    /* the key ("ns/name") and the uid live in the same allocation */
    const char *uid = in->uid ? in->uid : "";
    size_t ln = strlen(in->ns), lm = strlen(in->name), lu = strlen(uid);
    struct eng__wl *wl = xcalloc(1, sizeof(*wl) + ln + lm + 2 + lu + 1);
    char *tail = (char *)(wl + 1);
    memcpy(tail, in->ns, ln);
    tail[ln] = '/';
    memcpy(tail + ln + 1, in->name, lm + 1);
    memcpy(tail + ln + lm + 2, uid, lu + 1);
    wl->key = tail;
    wl->name = tail + ln + 1;
    wl->uid = tail + ln + lm + 2;
    wl->ns = istr_reuse(e, old ? old->ns : NULL, in->ns);
    wl->queue_name = istr_reuse(e, old ? old->queue_name : NULL, in->queue_name);
    wl->gated_by = in->admission_gated_by && *in->admission_gated_by ? xstrdup(in->admission_gated_by) : NULL;
    wl->replacement_for = in->replacement_for && *in->replacement_for ? xstrdup(in->replacement_for) : NULL;
    wl->job_uid = in->job_uid && *in->job_uid ? xstrdup(in->job_uid) : NULL;
    if (in->n_avoid_flavors) {
        wl->avoid_flv = xcalloc(in->n_avoid_flavors, sizeof(*wl->avoid_flv));
        wl->avoid_until = xcalloc(in->n_avoid_flavors, sizeof(*wl->avoid_until));
        for (size_t i = 0; i < in->n_avoid_flavors; i++, wl->n_avoid++) {
            wl->avoid_flv[i] = eng__flv_id(e, in->avoid_flavors[i].flavor);
            wl->avoid_until[i] = in->avoid_flavors[i].until_ms;
        }
    }
    wl->priority = in->priority;
    wl->creation_ms = in->creation_ms;
    wl->active = in->active;
    wl->elastic = in->elastic;
    wl->n_ps = (int)in->n_podsets;
    wl->ps = xcalloc((size_t)wl->n_ps + 1, sizeof(*wl->ps));
    for (int i = 0; i < wl->n_ps; i++)
        ps_build(e, &wl->ps[i], &in->podsets[i], 0, old && i < old->n_ps ? &old->ps[i] : NULL);
    wl->hash = sched_hash(wl, e);
    wl_build_status(e, wl, in);
    return wl;
}

void eng__pa_alloc(struct eng__pa *pa, int n)
{
    /* one zeroed allocation: amt, then res, then flv */
    pa->amt = xcalloc((size_t)n + 1, sizeof(int64_t) + 2 * sizeof(int));
    pa->res = (int *)(pa->amt + n + 1);
    pa->flv = pa->res + n + 1;
}

void eng__pa_free(struct eng__pa *pa, int n)
{
    for (int p = 0; p < n; p++) {
        xfree(pa[p].name);
        xfree(pa[p].amt); /* res and flv live in the same allocation */
        api_topology_assignment_free(pa[p].ta);
    }
    xfree(pa);
}

void eng__wl_free(struct eng *e, struct eng__wl *wl)
{
    for (int i = 0; i < wl->n_ps; i++) {
        xfree(wl->ps[i].name);
        xfree(wl->ps[i].per_pod); /* res too */
        xfree(wl->ps[i].topo_level);
        xfree(wl->ps[i].slice_level);
        eng__shape_release(e, wl->ps[i].shape);
    }
    xfree(wl->ps);
    eng__pa_free(wl->pa, wl->n_pa);
    xfree(wl->use_fr);
    xfree(wl->use_amt);
    xfree(wl->last_idx);
    eng__istr_put(e, wl->ns); /* key and uid are part of wl's allocation */
    eng__istr_put(e, wl->queue_name);
    xfree(wl->gated_by);
    xfree(wl->replacement_for);
    xfree(wl->job_uid);
    xfree(wl->avoid_flv);
    xfree(wl->avoid_until);
    xfree(wl->rcq_name);
    eng__istr_put(e, wl->last_reason);
    eng__istr_put(e, wl->last_msg);
    xfree(wl);
}

/* ---- quota holders ---- */

/* True when the ClusterQueue's admission checks apply to the flavors the
 * workload was given (Kueue AdmissionChecksForWorkload after reservation). */
bool eng__checks_apply(const struct eng__cq *cq, const struct eng__wl *wl)
{
    for (size_t c = 0; c < cq->n_checks; c++) {
        if (!cq->n_check_flv[c])
            return true;
        for (int p = 0; p < wl->n_pa; p++)
            for (int r = 0; r < wl->pa[p].n; r++)
                for (size_t f = 0; f < cq->n_check_flv[c]; f++)
                    if (wl->pa[p].flv[r] == cq->check_flv[c][f])
                        return true;
    }
    return false;
}

void eng__holder_add(struct eng *e, struct eng__wl *wl, struct eng__cq *cq)
{
    if (!cq)
        cq = eng__cq_find(e, wl->rcq_name);
    wl->rcq = cq;
    if (!cq)
        return;
    DL_APPEND2(cq->holders, wl, hprev, hnext);
    eng__hord_add(e, wl);
    e->usage_epoch++;
    cq->n_reserving++;
    if (wl->admitted)
        cq->n_admitted++;
    eng__wl_charge(e, wl, +1);
}

/* Release the reservation's usage; `freed` requeues the cohort tree. */
void eng__holder_remove(struct eng *e, struct eng__wl *wl, bool freed)
{
    struct eng__cq *cq = wl->rcq;
    if (!cq)
        return;
    eng__wl_charge(e, wl, -1);
    eng__hord_remove(e, wl);
    DL_DELETE2(cq->holders, wl, hprev, hnext);
    e->usage_epoch++;
    cq->n_reserving--;
    if (wl->admitted)
        cq->n_admitted--;
    wl->rcq = NULL;
    if (freed) {
        cq->alloc_gen++;
        eng__requeue_tree(e, cq);
    }
}

static bool same_usage(const struct eng__wl *a, const struct eng__wl *b)
{
    if (!a->reserved || !b->reserved || a->n_use != b->n_use || strcmp(a->rcq_name, b->rcq_name))
        return false;
    for (int u = 0; u < a->n_use; u++)
        if (a->use_fr[u] != b->use_fr[u] || a->use_amt[u] > b->use_amt[u])
            return false;
    return true;
}

/* Carry the engine's memory over to the new version of a workload. */
static void carry_over(struct eng__wl *nw, struct eng__wl *old)
{
    nw->last_reason = old->last_reason;
    nw->last_msg = old->last_msg;
    old->last_reason = old->last_msg = NULL;
    nw->blocker_emitted = old->blocker_emitted;
    nw->expected_end_ms = old->expected_end_ms;
    nw->expected_runtime_ms = old->expected_runtime_ms;
    nw->preempted = old->preempted && nw->reserved;
    if (old->has_last && old->hash == nw->hash && old->n_ps == nw->n_ps) {
        nw->has_last = true;
        nw->last_idx = old->last_idx;
        nw->n_last = old->n_last;
        old->last_idx = NULL;
        nw->last_cycle = old->last_cycle;
        nw->last_gen = old->last_gen;
        nw->last_hash = old->last_hash;
    }
    if (!nw->reserved)
        nw->quota_reserved_ms = 0;
}

/* Put nw where old was when nothing placement-relevant changed. */
static bool keep_place(struct eng *e, struct eng__wl *nw, enum eng__wlq q, struct eng__cq *qcq,
                       bool sticky, bool bypassed)
{
    if (q == ENG__Q_NONE || !qcq)
        return false;
    if (q == ENG__Q_HEAP) {
        if (sticky)
            qcq->sticky = nw;
        eng__heap_push(e, qcq, nw);
    } else {
        eng__wl_park(e, qcq, nw);
        nw->bypassed = bypassed;
    }
    eng__wl_route(e, nw); /* refreshes blocker statuses, keeps the place */
    return true;
}

/* Where a workload's previous version was, for its next one. */
struct place {
    enum eng__wlq q;
    struct eng__cq *qcq;
    bool sticky, bypassed;
    bool same;   /* nothing placement-relevant changed */
    bool unsent; /* its last status is still to be emitted */
};

/* Take old out of everything but e->wls (its reservation released,
 * requeueing its cohort tree when the usage shrank; its queue; the unsent
 * list) before nw, its next version, is put back. */
static struct place take_out(struct eng *e, struct eng__wl *old, const struct eng__wl *nw)
{
    struct place p = {.q = eng__wl_where(old), .qcq = old->qcq, .bypassed = eng__wl_bypassed(old)};
    p.sticky = p.qcq && p.qcq->sticky == old;
    p.same = !old->reserved && !nw->reserved && old->state_hash == nw->state_hash;
    if (old->reserved)
        eng__holder_remove(e, old, !same_usage(old, nw));
    eng__wl_unqueue(e, old);
    p.unsent = old->unsent;
    eng__unsent_forget(e, old);
    return p;
}

/* Move wl, which is in e->wls, to the end of its order (what a delete and
 * re-add does) with no allocation that can fail: a table that keeps other
 * entries takes it back (ENG__HASH_ADD), and a lone entry is last already. */
static void wls_move_last(struct eng *e, struct eng__wl *wl)
{
    if (HASH_COUNT(e->wls) == 1)
        return;
    HASH_DEL(e->wls, wl);
    bool in;
    ENG__HASH_ADD(e->wls, wl->key, strlen(wl->key), wl, in);
    (void)in; /* always: the table has other entries */
}

/* Charge or place nw, last in e->wls' order: where its previous version
 * was when nothing placement-relevant changed. */
static void put_back(struct eng *e, struct eng__wl *nw, const struct place *p)
{
    if (p->unsent && !nw->reserved) {
        DL_APPEND2(e->unsent, nw, uprev, unext);
        nw->unsent = true;
    }
    if (nw->reserved) {
        eng__holder_add(e, nw, NULL);
        return;
    }
    if (!(p->same && keep_place(e, nw, p->q, p->qcq, p->sticky, p->bypassed)))
        eng__wl_route(e, nw);
}

/* Replace old (NULL: none) by nw, its new version. nw goes into e->wls
 * first (last in its order, as a delete and re-add leaves it), which fails
 * only when the table is empty, so old is there to take out only once
 * nothing can fail. CU_ENOMEM (nw freed, nothing changed) or 0. */
static int replace(struct eng *e, struct eng__wl *old, struct eng__wl *nw)
{
    bool in;
    ENG__HASH_ADD(e->wls, nw->key, strlen(nw->key), nw, in);
    if (!in) {
        eng__wl_free(e, nw);
        return CU_ENOMEM;
    }
    struct place p = {0};
    if (old) {
        carry_over(nw, old);
        p = take_out(e, old, nw);
        HASH_DEL(e->wls, old);
        eng__wl_free(e, old);
    }
    put_back(e, nw, &p);
    return 0;
}

int eng_upsert_workload(struct eng *e, const struct api_workload *in)
{
    if (!in || !in->ns || !in->name)
        return 0;
    if (in->finished) { /* the engine keeps nothing of it: its old version goes */
        eng_delete_workload(e, in->ns, in->name);
        return 0;
    }
    struct eng__wl *old = eng__wl_find(e, in->ns, in->name);
    return replace(e, old, wl_build(e, in, old));
}

/* replace(e, wl, <wl with in's status>) without a new version: wl
 * takes in's status in place, with the same steps in the same order (its
 * reservation released, unqueued, re-added last to e->wls, then charged or
 * placed), so nothing observable differs. The new status is built first
 * into a copy (the release compares old and new usage), which then
 * becomes wl. */
/* True when in holds the reservation wl holds already: same ClusterQueue
 * (found), same pod set assignments (names, counts, flavors, usage), same
 * reclaimable pods, so admission_build would rebuild wl's very usage; the
 * status write that follows an admission (the control plane writing back
 * what eng__admit assumed) or a condition change of a reserved workload. */
static bool same_reservation(const struct eng *e, const struct eng__wl *wl, const struct api_workload *in)
{
    const struct api_admission *a = &in->admission;
    if (!wl->reserved || !wl->rcq || !in->has_admission || in->finished ||
        strcmp(wl->rcq_name, a->cluster_queue ? a->cluster_queue : "") || (size_t)wl->n_pa != a->n_podsets)
        return false;
    for (int i = 0; i < wl->n_ps && (size_t)i < in->n_podsets; i++)
        if (wl->ps[i].reclaim != reclaimable_of(in, in->podsets[i].name))
            return false;
    for (int p = 0; p < wl->n_pa; p++) {
        const struct api_podset_assignment *s = &a->podsets[p];
        const struct eng__pa *pa = &wl->pa[p];
        const char *name = s->name ? s->name : "main";
        int32_t count = s->count;
        if (count <= 0) /* as admission_build */
            for (int i = 0; i < wl->n_ps; i++)
                if (!strcmp(wl->ps[i].name, name))
                    count = wl->ps[i].count;
        if (strcmp(pa->name, name) || pa->count != count || (size_t)pa->n != s->flavors.n)
            return false;
        for (int r = 0; r < pa->n; r++) {
            const char *res = s->flavors.items[r].key, *flv = s->flavors.items[r].value;
            if (pa->res[r] < 0 || pa->flv[r] < 0 || !res || !flv || strcmp(e->res_names[pa->res[r]], res) ||
                strcmp(e->flavors[pa->flv[r]].name, flv) ||
                pa->amt[r] != api_reslist_get(&s->resource_usage, res))
                return false;
        }
    }
    return true;
}

/* update_status when same_reservation holds: the same steps as the
 * general path (the reservation released and charged again, last in the
 * ClusterQueue's holders and in e->wls, unqueued, unsent status dropped)
 * without rebuilding the assignments and usage, which stay as they are. */
static void keep_reservation(struct eng *e, struct eng__wl *wl, const struct api_workload *in)
{
    struct eng__cq *cq = wl->rcq; /* the one rcq_name names */
    eng__holder_remove(e, wl, false);
    eng__wl_unqueue(e, wl);
    eng__unsent_forget(e, wl);
    status_scalars(wl, in); /* finished stays false */
    wl->state_hash = state_hash(wl); /* the reclaim counts are unchanged */
    wl->queued = false;
    wl->qcq = NULL;
    wl->time_parked = wl->bypassed = wl->unsent = false;
    wl->victim_cycle = 0;
    wls_move_last(e, wl);
    eng__holder_add(e, wl, cq);
}

static void update_status(struct eng *e, struct eng__wl *wl, const struct api_workload *in)
{
    if (same_reservation(e, wl, in)) {
        keep_reservation(e, wl, in);
        return;
    }
    struct eng__wl nw = *wl;
    nw.reserved = false;
    nw.rcq_name = NULL;
    nw.pa = NULL;
    nw.n_pa = 0;
    nw.use_fr = NULL;
    nw.use_amt = NULL;
    nw.n_use = 0;
    /* the pod sets' reclaim counts change in place: the release and the
     * unqueue below read neither */
    wl_build_status(e, &nw, in);
    struct place p = take_out(e, wl, &nw);
    eng__pa_free(wl->pa, wl->n_pa);
    xfree(wl->use_fr);
    xfree(wl->use_amt);
    xfree(wl->rcq_name);
    /* the new status; the links as a new version's start out (take_out
     * changed only links, which nw has from before) */
    *wl = nw;
    wl->queued = false;
    wl->qcq = NULL;
    wl->rcq = NULL;
    wl->time_parked = wl->bypassed = wl->unsent = false;
    wl->victim_cycle = 0;
    /* as carry_over */
    wl->preempted = wl->preempted && wl->reserved;
    if (!wl->reserved)
        wl->quota_reserved_ms = 0;
    wls_move_last(e, wl);
    put_back(e, wl, &p);
}

int eng_upsert_workload_status(struct eng *e, const struct api_workload *in)
{
    if (!in || !in->ns || !in->name)
        return 0;
    struct eng__wl *old = in->finished ? NULL : eng__wl_find(e, in->ns, in->name);
    if (!old)
        return eng_upsert_workload(e, in);
    update_status(e, old, in);
    return 0;
}

void eng_delete_workload(struct eng *e, const char *ns, const char *name)
{
    struct eng__wl *wl = eng__wl_find(e, ns, name);
    if (!wl)
        return;
    if (wl->reserved)
        eng__holder_remove(e, wl, true);
    eng__wl_unqueue(e, wl);
    eng__unsent_forget(e, wl);
    HASH_DEL(e->wls, wl);
    eng__wl_free(e, wl);
}

struct eng__wl *eng__wl_find(const struct eng *e, const char *ns, const char *name)
{
    /* ns and name are never NULL here; the key is built on the stack
     * unless it is unusually long */
    char buf[256];
    size_t len;
    char *key = eng__key_join(buf, sizeof(buf), ns, name, &len);
    struct eng__wl *wl;
    HASH_FIND(hh, e->wls, key, len, wl);
    if (key != buf)
        xfree(key);
    return wl;
}

void eng_set_expected_end(struct eng *e, const char *ns, const char *name, int64_t end_ms)
{
    struct eng__wl *wl = eng__wl_find(e, ns, name);
    if (wl)
        wl->expected_end_ms = end_ms;
}

void eng_set_expected_runtime(struct eng *e, const char *ns, const char *name,
                              int64_t runtime_ms)
{
    struct eng__wl *wl = eng__wl_find(e, ns, name);
    if (wl)
        wl->expected_runtime_ms = runtime_ms > 0 ? runtime_ms : 0;
}
