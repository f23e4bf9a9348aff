/*
 * tree: the cohort forest and Kueue's quota arithmetic over it
 * (pkg/cache/scheduler/resource_node.go, shared/spec/kueue.md §2.1).
 *
 * The forest is rebuilt from scratch whenever a ClusterQueue or Cohort
 * changes (rare); between rebuilds usage is maintained incrementally by
 * eng__node_add_usage, which propagates only the part of a change that a
 * node stores in its parent. While e->tree_dirty is set the usage arrays are
 * stale and incremental updates are skipped: the rebuild recomputes usage
 * from every ClusterQueue's quota holders.
 *
 * Amounts use Kueue's saturating arithmetic: INT64_MAX is "Unlimited".
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "engine/engine-int.h"
#include "util/xalloc.h"

/* ---- saturating amounts ---- */

int64_t eng__amt_mul(int64_t a, int64_t n)
{
    int64_t r;
    if (a == ENG__UNLIMITED)
        return n ? ENG__UNLIMITED : 0;
    if (__builtin_mul_overflow(a, n, &r))
        return (a > 0) == (n > 0) ? ENG__UNLIMITED : INT64_MIN;
    return r;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- node FR tables ---- */

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Reset node arrays to hold the sorted unique FRs in ids[0..n). */
static void node_set_frs(struct eng__node *nd, int *ids, int n)
{
    if (n)
        qsort(ids, (size_t)n, sizeof(int), int_cmp);
    int m = 0;
    for (int i = 0; i < n; i++)
        if (m == 0 || ids[m - 1] != ids[i])
            ids[m++] = ids[i];
    xfree(nd->fr);
    xfree(nd->pidx);
    xfree(nd->q);
    xfree(nd->subtree);
    xfree(nd->usage);
    nd->n_fr = m;
    nd->fr = xcalloc((size_t)m + 1, sizeof(int));
    if (m)
        memcpy(nd->fr, ids, (size_t)m * sizeof(int));
    nd->pidx = xcalloc((size_t)m + 1, sizeof(int));
    nd->q = xcalloc((size_t)m + 1, sizeof(*nd->q));
    nd->subtree = xcalloc((size_t)m + 1, sizeof(int64_t));
    nd->usage = xcalloc((size_t)m + 1, sizeof(int64_t));
}

struct idbuf {
    int *v;
    size_t n, cap;
};

static void idbuf_push(struct idbuf *b, int id)
{
    XGROW(b->v, b->cap, b->n + 1);
    b->v[b->n++] = id;
}

static void rgs_frs(struct eng *e, const struct eng__rg *rgs, int n, struct idbuf *b)
{
    for (int g = 0; g < n; g++)
        for (int f = 0; f < rgs[g].n_flv; f++)
            for (int r = 0; r < rgs[g].n_cov; r++)
                idbuf_push(b, eng__fr_id(e, rgs[g].flv[f], rgs[g].res[r]));
}

static void rgs_quotas(struct eng *e, struct eng__node *nd, const struct eng__rg *rgs, int n)
{
    for (int g = 0; g < n; g++)
        for (int f = 0; f < rgs[g].n_flv; f++)
            for (int r = 0; r < rgs[g].n_cov; r++) {
                int i = eng__node_idx(nd, eng__fr_id(e, rgs[g].flv[f], rgs[g].res[r]));
                nd->q[i] = rgs[g].quota[f * rgs[g].n_cov + r];
            }
}

/* ---- structure ---- */

static void kids_add(struct eng__node *parent, struct eng__node *kid)
{
    XGROW(parent->kids, parent->cap_kids, parent->n_kids + 1);
    parent->kids[parent->n_kids++] = kid;
}

static int node_name_cmp(const void *a, const void *b)
{
    const struct eng__node *x = *(struct eng__node *const *)a;
    const struct eng__node *y = *(struct eng__node *const *)b;
    return strcmp(x->name, y->name);
}

/* The node of the Cohort name, created on demand (implicit), or NULL when
 * it could not be allocated (the caller then leaves the child without a
 * parent: it neither lends nor borrows until a later rebuild links it). */
static struct eng__node *parent_node(struct eng *e, const char *name, bool *all_linked)
{
    struct eng__cohort *c = eng__cohort_get(e, name);
    if (!c)
        *all_linked = false;
    return c ? &c->node : NULL;
}

/* Link every node to its parent; implicit cohorts are created on demand.
 * Returns false when some parent could not be allocated. */
static bool link_parents(struct eng *e)
{
    bool all_linked = true;
    size_t n = HASH_COUNT(e->cohorts), i = 0;
    struct eng__cohort **all = xcalloc(n + 1, sizeof(*all));
    for (struct eng__cohort *c = e->cohorts; c; c = c->hh.next)
        all[i++] = c;
    for (i = 0; i < n; i++) {
        all[i]->node.parent = NULL;
        all[i]->node.n_kids = 0;
        all[i]->node.in_cycle = false;
    }
    for (i = 0; i < n; i++)
        if (all[i]->has_object && *all[i]->parent_name)
            all[i]->node.parent = parent_node(e, all[i]->parent_name, &all_linked);
    xfree(all);
    for (size_t k = 0; k < e->n_cq_sorted; k++) {
        struct eng__cq *cq = e->cq_sorted[k];
        cq->node.in_cycle = false;
        cq->node.parent = *cq->cohort_name ? parent_node(e, cq->cohort_name, &all_linked) : NULL;
    }
    return all_linked;
}

/* Mark cohorts whose ancestor chain loops and cut them loose. */
static void cut_cycles(struct eng *e)
{
    size_t n = HASH_COUNT(e->cohorts);
    for (struct eng__cohort *c = e->cohorts; c; c = c->hh.next) {
        struct eng__node *p = &c->node;
        size_t steps = 0;
        while (p && steps <= n) {
            p = p->parent;
            steps++;
        }
        if (p)
            c->node.in_cycle = true;
    }
    for (struct eng__cohort *c = e->cohorts; c; c = c->hh.next)
        if (c->node.in_cycle)
            c->node.parent = NULL;
    for (size_t k = 0; k < e->n_cq_sorted; k++) {
        struct eng__cq *cq = e->cq_sorted[k];
        if (cq->node.parent && cq->node.parent->in_cycle)
            cq->node.in_cycle = true;
    }
}

static void drop_empty_implicit(struct eng *e)
{
    struct eng__cohort *c, *tmp;
    bool again = true;
    while (again) {
        again = false;
        for (c = e->cohorts; c; c = c->hh.next)
            c->node.n_kids = 0;
        for (c = e->cohorts; c; c = c->hh.next)
            if (c->node.parent)
                c->node.parent->n_kids++;
        for (size_t k = 0; k < e->n_cq_sorted; k++)
            if (e->cq_sorted[k]->node.parent)
                e->cq_sorted[k]->node.parent->n_kids++;
        for (c = e->cohorts; c; c = tmp) {
        tmp = c->hh.next;
            if (c->has_object || c->node.n_kids)
                continue;
            HASH_DEL(e->cohorts, c);
            xfree(c->node.name);
            xfree(c->parent_name);
            xfree(c->node.kids);
            xfree(c->node.fr);
            xfree(c->node.pidx);
            xfree(c->node.q);
            xfree(c->node.subtree);
            xfree(c->node.usage);
            eng__rgs_free(c->rgs, c->n_rgs);
            xfree(c);
            again = true;
        }
    }
}

static void build_kids(struct eng *e)
{
    for (struct eng__cohort *c = e->cohorts; c; c = c->hh.next)
        c->node.n_kids = 0;
    for (struct eng__cohort *c = e->cohorts; c; c = c->hh.next)
        if (c->node.parent)
            kids_add(c->node.parent, &c->node);
    for (size_t k = 0; k < e->n_cq_sorted; k++)
        if (e->cq_sorted[k]->node.parent)
            kids_add(e->cq_sorted[k]->node.parent, &e->cq_sorted[k]->node);
    for (struct eng__cohort *c = e->cohorts; c; c = c->hh.next)
        if (c->node.n_kids)
            qsort(c->node.kids, c->node.n_kids, sizeof(*c->node.kids), node_name_cmp);
}

/* ---- quantities ---- */

static void cq_tables(struct eng *e, struct eng__cq *cq)
{
    struct idbuf b = {0};
    rgs_frs(e, cq->rgs, cq->n_rgs, &b);
    for (struct eng__wl *w = cq->holders; w; w = w->hnext)
        for (int u = 0; u < w->n_use; u++)
            idbuf_push(&b, w->use_fr[u]);
    node_set_frs(&cq->node, b.v, (int)b.n);
    xfree(b.v);
    rgs_quotas(e, &cq->node, cq->rgs, cq->n_rgs);
    for (int i = 0; i < cq->node.n_fr; i++)
        cq->node.subtree[i] = cq->node.q[i].nominal;
    for (struct eng__wl *w = cq->holders; w; w = w->hnext)
        for (int u = 0; u < w->n_use; u++) {
            int i = eng__node_idx(&cq->node, w->use_fr[u]);
            cq->node.usage[i] = eng__amt_add(cq->node.usage[i], w->use_amt[u]);
        }
    cq->node.height = 0;
}

/* Post-order: build a cohort's tables from its own groups and its kids. */
static void cohort_tables(struct eng *e, struct eng__cohort *c)
{
    struct eng__node *nd = &c->node;
    struct idbuf b = {0};
    int height = nd->n_kids ? 1 : 0;
    for (size_t k = 0; k < nd->n_kids; k++) {
        struct eng__node *kid = nd->kids[k];
        if (kid->is_cq) {
            cq_tables(e, (struct eng__cq *)((char *)kid - offsetof(struct eng__cq, node)));
        } else {
            cohort_tables(e, (struct eng__cohort *)((char *)kid - offsetof(struct eng__cohort, node)));
            if (kid->height + 1 > height)
                height = kid->height + 1;
        }
        for (int i = 0; i < kid->n_fr; i++)
            idbuf_push(&b, kid->fr[i]);
    }
    rgs_frs(e, c->rgs, c->n_rgs, &b);
    node_set_frs(nd, b.v, (int)b.n);
    xfree(b.v);
    nd->height = height;
    rgs_quotas(e, nd, c->rgs, c->n_rgs);
    for (int i = 0; i < nd->n_fr; i++)
        nd->subtree[i] = nd->q[i].nominal;
    for (size_t k = 0; k < nd->n_kids; k++) {
        struct eng__node *kid = nd->kids[k];
        for (int i = 0; i < kid->n_fr; i++) {
            int pi = eng__node_idx(nd, kid->fr[i]);
            int64_t lq = eng__local_quota(kid, i);
            kid->pidx[i] = pi;
            nd->subtree[pi] = eng__amt_add(nd->subtree[pi], eng__amt_sub(kid->subtree[i], lq));
            nd->usage[pi] = eng__amt_add(nd->usage[pi], max64(0, eng__amt_sub(kid->usage[i], lq)));
        }
    }
}

void eng__tree_rebuild(struct eng *e)
{
    if (!e->tree_dirty)
        return;
    bool linked = link_parents(e);
    cut_cycles(e);
    drop_empty_implicit(e);
    build_kids(e);
    for (struct eng__cohort *c = e->cohorts; c; c = c->hh.next)
        if (!c->node.parent)
            cohort_tables(e, c);
    for (size_t k = 0; k < e->n_cq_sorted; k++) {
        struct eng__cq *cq = e->cq_sorted[k];
        if (!cq->node.parent) {
            cq_tables(e, cq);
            for (int i = 0; i < cq->node.n_fr; i++)
                cq->node.pidx[i] = -1;
        }
    }
    for (struct eng__cohort *c = e->cohorts; c; c = c->hh.next)
        if (!c->node.parent)
            for (int i = 0; i < c->node.n_fr; i++)
                c->node.pidx[i] = -1;
    e->tree_dirty = !linked; /* an allocation failed: rebuild again next time */
    if (linked && e->tree_unlinked) /* what the partial forest parked may fit now */
        for (size_t k = 0; k < e->n_cq_sorted; k++)
            eng__cq_mark_requeue(e, e->cq_sorted[k]);
    e->tree_unlinked = !linked;
    e->tree_gen++;
}

int64_t eng__available(const struct eng__node *n, int i)
{
    if (!n->parent)
        return eng__amt_sub(n->subtree[i], n->usage[i]);
    int64_t pa = eng__available(n->parent, n->pidx[i]);
    int64_t sub = n->subtree[i], use = n->usage[i];
    if (!n->q[i].has_ll && use >= 0 && sub >= 0 && sub != ENG__UNLIMITED && use != ENG__UNLIMITED) {
        /* no local quota, plain amounts: local available is 0 and the
         * stored part is the whole subtree quota */
        if (n->q[i].has_bl)
            pa = min64(eng__amt_add(sub - use, n->q[i].borrowing_limit), pa);
        return pa;
    }
    if (n->q[i].has_bl) {
        int64_t lq = eng__local_quota(n, i);
        int64_t stored = eng__amt_sub(n->subtree[i], lq);
        int64_t used = max64(0, eng__amt_sub(n->usage[i], lq));
        int64_t with = eng__amt_add(eng__amt_sub(stored, used), n->q[i].borrowing_limit);
        pa = min64(with, pa);
    }
    return eng__amt_add(eng__local_available(n, i), pa);
}

int64_t eng__cq_available(const struct eng__cq *cq, int fr)
{
    int i = eng__node_idx(&cq->node, fr);
    if (i < 0)
        return 0;
    return max64(0, eng__available(&cq->node, i));
}

int64_t eng__potential_available(const struct eng__node *n, int i)
{
    if (!n->parent)
        return n->subtree[i];
    int64_t av = eng__amt_add(eng__local_quota(n, i), eng__potential_available(n->parent, n->pidx[i]));
    if (n->q[i].has_bl)
        av = min64(eng__amt_add(n->subtree[i], n->q[i].borrowing_limit), av);
    return av;
}

static void undo_log(struct eng *e, struct eng__node *n, int i, int64_t delta)
{
    XGROW(e->undo, e->cap_undo, e->n_undo + 1);
    e->undo[e->n_undo].node = n;
    e->undo[e->n_undo].idx = i;
    e->undo[e->n_undo].delta = delta;
    e->n_undo++;
}

void eng__check_usage(const struct eng *e)
{
#ifndef NDEBUG
    for (size_t k = 0; k < e->n_cq_sorted; k++) {
        const struct eng__node *n = &e->cq_sorted[k]->node;
        for (int i = 0; i < n->n_fr; i++)
            assert(n->usage[i] >= 0); /* never more released than charged */
    }
    for (const struct eng__cohort *c = e->cohorts; c; c = c->hh.next)
        for (int i = 0; i < c->node.n_fr; i++)
            assert(c->node.usage[i] >= 0);
#else
    (void)e;
#endif
}

void eng__node_add_usage(struct eng *e, struct eng__node *n, int i, int64_t delta)
{
    e->usage_epoch++;
    while (n && delta) {
        int64_t u = n->usage[i], nu = eng__amt_add(u, delta);
        n->usage[i] = nu;
        if (!n->parent)
            return; /* what reaches the parent matters no more */
        int64_t lq = eng__local_quota(n, i);
        if (lq == 0 && u >= 0 && nu >= 0 && u != ENG__UNLIMITED && nu != ENG__UNLIMITED) {
            /* no local quota, plain amounts: the whole change reaches the parent */
            delta = nu - u;
        } else {
            int64_t before = max64(0, eng__amt_sub(u, lq));
            int64_t after = max64(0, eng__amt_sub(nu, lq));
            delta = eng__amt_sub(after, before);
        }
        i = n->pidx[i];
        n = n->parent;
    }
}

void eng__cq_add_usage(struct eng *e, struct eng__cq *cq, int fr, int64_t amt)
{
    if (e->tree_dirty || !amt)
        return;
    int i = eng__node_idx(&cq->node, fr);
    if (i < 0)
        return; /* an FR the ClusterQueue does not know cannot be reserved */
    if (e->undo_on)
        undo_log(e, &cq->node, i, amt);
    eng__node_add_usage(e, &cq->node, i, amt);
}

void eng__undo_all(struct eng *e)
{
    while (e->n_undo) {
        struct eng__undo *u = &e->undo[--e->n_undo];
        eng__node_add_usage(e, u->node, u->idx, -u->delta);
    }
}

void eng__wl_charge(struct eng *e, struct eng__wl *wl, int sign)
{
    struct eng__cq *cq = wl->rcq;
    if (!cq || e->tree_dirty)
        return;
    if (wl->n_use == 1) { /* the common case, without the index buffer */
        int i = eng__node_idx(&cq->node, wl->use0_fr);
        if (i < 0) {
            e->tree_dirty = true;
            e->usage_epoch++;
        } else {
            eng__node_add_usage(e, &cq->node, i, sign > 0 ? wl->use0_amt : -wl->use0_amt);
        }
        return;
    }
    int idx[16]; /* the indices, looked up once when there are few FRs */
    bool kept = wl->n_use <= 16;
    for (int u = 0; u < wl->n_use; u++) {
        int i = eng__node_idx(&cq->node, wl->use_fr[u]);
        if (i < 0) {
            e->tree_dirty = true; /* a new FR: the rebuild recounts everything */
            e->usage_epoch++;
            return;
        }
        if (kept)
            idx[u] = i;
    }
    for (int u = 0; u < wl->n_use; u++) {
        int i = kept ? idx[u] : eng__node_idx(&cq->node, wl->use_fr[u]);
        eng__node_add_usage(e, &cq->node, i, sign > 0 ? wl->use_amt[u] : -wl->use_amt[u]);
    }
}

bool eng__cq_borrowing(const struct eng__cq *cq, int fr)
{
    int i = eng__node_idx(&cq->node, fr);
    return i >= 0 && cq->node.usage[i] > cq->node.subtree[i];
}

bool eng__node_borrowing_with(const struct eng__node *n, int i, int64_t val)
{
    return eng__amt_add(n->usage[i], val) > n->subtree[i];
}

int eng__lowest_fitting_height(const struct eng__cq *cq, int fr, int64_t val, bool *may_reclaim)
{
    const struct eng__node *n = &cq->node;
    int i = eng__node_idx(n, fr);
    if (i < 0 || !n->parent || !eng__node_borrowing_with(n, i, val)) {
        *may_reclaim = n->parent != NULL;
        return 0;
    }
    int64_t remaining = eng__amt_sub(val, eng__local_available(n, i));
    i = n->pidx[i];
    n = n->parent;
    for (;;) {
        if (!eng__node_borrowing_with(n, i, remaining) || !n->parent) {
            *may_reclaim = n->parent != NULL;
            return n->height;
        }
        remaining = eng__amt_sub(remaining, eng__local_available(n, i));
        i = n->pidx[i];
        n = n->parent;
    }
}

struct eng__node *eng__node_root(struct eng__node *n)
{
    while (n->parent)
        n = n->parent;
    return n;
}
