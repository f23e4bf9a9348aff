/*
 * fair: fair sharing (shared/spec/kueue.md §2.8; Kueue
 * pkg/cache/scheduler/fair_sharing.go, pkg/scheduler/fair_sharing_iterator.go,
 * pkg/scheduler/preemption/fairsharing/).
 *
 * Dominant resource share of a node (relative to its parent): per resource,
 * the usage above SubtreeQuota summed over flavors, times 1000, divided by
 * what the parent could lend (sum of potentialAvailable over the tree's
 * flavors); the largest ratio, divided by the weight (weight 0 while
 * borrowing = infinite). Admission order: a tournament per root cohort, at
 * every level the child whose nominated workload (i) does not borrow on the
 * flavors it requests, (ii) leaves the lowest share, (iii) has the highest
 * priority, (iv) queued first. Preemption: target ClusterQueues in
 * decreasing share, strategies LessThanOrEqualToFinalShare then
 * LessThanInitialShare; a preemptor within nominal reclaims regardless of
 * shares (FairSharingPreemptWithinNominal).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine-int.h"
#include "util/xalloc.h"

#define drs eng__drs

/* potentialAvailable for an FR the node may not list (then 0 local quota,
 * no borrowing limit: the parent's figure). */
static int64_t pot_fr(const struct eng__node *n, int fr)
{
    for (; n; n = n->parent) {
        int i = eng__node_idx(n, fr);
        if (i >= 0)
            return eng__potential_available(n, i);
    }
    return 0;
}

struct drs eng__drs_of(const struct eng *e, const struct eng__node *n)
{
    struct drs d = {0, n->fair_weight_milli, false};
    if (!n->parent)
        return d;
    const struct eng__node *root = n;
    while (root->parent)
        root = root->parent;
    double *borrowed = xcalloc((size_t)e->n_res + 1, sizeof(double));
    bool *has = xcalloc((size_t)e->n_res + 1, sizeof(bool));
    for (int i = 0; i < n->n_fr; i++) {
        int64_t b = eng__amt_sub(n->usage[i], n->subtree[i]);
        if (b > 0) {
            borrowed[e->fr_res[n->fr[i]]] += (double)b;
            has[e->fr_res[n->fr[i]]] = true;
            d.borrowing = true;
        }
    }
    if (d.borrowing) {
        double *lend = xcalloc((size_t)e->n_res + 1, sizeof(double));
        for (int i = 0; i < root->n_fr; i++)
            if (has[e->fr_res[root->fr[i]]])
                lend[e->fr_res[root->fr[i]]] += (double)pot_fr(n->parent, root->fr[i]);
        for (int r = 0; r < e->n_res; r++)
            if (has[r] && lend[r] > 0) {
                double ratio = borrowed[r] * 1000.0 / lend[r];
                if (ratio > d.ratio)
                    d.ratio = ratio;
            }
        xfree(lend);
    }
    xfree(borrowed);
    xfree(has);
    return d;
}

static bool zero_weight_borrows(struct drs d) { return d.weight_milli == 0 && d.borrowing; }

static double weighted(struct drs d)
{
    if (zero_weight_borrows(d))
        return INFINITY;
    if (d.ratio == 0)
        return 0;
    return d.ratio * 1000.0 / (double)d.weight_milli;
}

/* Kueue CompareDRS: lower is preferred for admission. */
int eng__drs_cmp(struct drs a, struct drs b)
{
    if (zero_weight_borrows(a) && zero_weight_borrows(b))
        return (a.ratio > b.ratio) - (a.ratio < b.ratio);
    if (zero_weight_borrows(a))
        return 1;
    if (zero_weight_borrows(b))
        return -1;
    double x = weighted(a), y = weighted(b);
    return (x > y) - (x < y);
}

int64_t eng__weighted_share(struct eng *e, struct eng__cq *cq)
{
    eng__tree_rebuild(e);
    struct drs d = eng__drs_of(e, &cq->node);
    if (zero_weight_borrows(d))
        return INT64_MAX;
    return (int64_t)ceil(weighted(d));
}

/* ---- admission order: the tournament ---- */

struct level {
    struct eng__node *node; /* node on the entry's path, below `parent` */
    struct drs drs;
    bool borrowing_on;      /* borrows on an FR the workload requests */
};

struct fentry {
    struct eng__entry *en;
    struct level *lv;
    int n_lv;
};

static bool borrows_on(const struct eng__node *n, const struct eng__asg *a)
{
    for (int u = 0; u < a->n_use; u++) {
        int i = eng__node_idx(n, a->use_fr[u]);
        if (a->use_amt[u] > 0 && i >= 0 && n->usage[i] > n->subtree[i])
            return true;
    }
    return false;
}

/* DRS of every node on the entry's path with its workload admitted. */
static void path_shares(struct eng *e, struct fentry *fe)
{
    struct eng__entry *en = fe->en;
    eng__sim_usage(e, en->cq, en->a.use_fr, en->a.use_amt, en->a.n_use, +1);
    int depth = 0;
    for (struct eng__node *n = &en->cq->node; n->parent; n = n->parent)
        depth++;
    fe->lv = xcalloc((size_t)depth + 1, sizeof(*fe->lv));
    for (struct eng__node *n = &en->cq->node; n->parent; n = n->parent) {
        struct level *l = &fe->lv[fe->n_lv++];
        l->node = n;
        l->drs = eng__drs_of(e, n);
        l->borrowing_on = borrows_on(n, &en->a);
    }
    eng__sim_usage(e, en->cq, en->a.use_fr, en->a.use_amt, en->a.n_use, -1);
}

static const struct level *level_at(const struct fentry *fe, const struct eng__node *parent)
{
    for (int i = 0; i < fe->n_lv; i++)
        if (fe->lv[i].node->parent == parent)
            return &fe->lv[i];
    return NULL;
}

static bool fless(const struct fentry *a, const struct fentry *b, const struct eng__node *parent)
{
    const struct level *x = level_at(a, parent), *y = level_at(b, parent);
    if (x->borrowing_on != y->borrowing_on)
        return !x->borrowing_on;
    int c = eng__drs_cmp(x->drs, y->drs);
    if (c)
        return c < 0;
    const struct eng__wl *p = a->en->wl, *q = b->en->wl;
    if (p->priority != q->priority)
        return p->priority > q->priority;
    if (p->qo_ts_ms != q->qo_ts_ms)
        return p->qo_ts_ms < q->qo_ts_ms;
    if (p->creation_ms != q->creation_ms)
        return p->creation_ms < q->creation_ms;
    int k = strcmp(p->key, q->key);
    return k ? k < 0 : strcmp(p->uid, q->uid) < 0;
}

static struct fentry *tournament(struct eng__node *c, struct fentry *fv, size_t n)
{
    struct fentry *best = NULL;
    for (size_t k = 0; k < c->n_kids; k++) {
        struct eng__node *kid = c->kids[k];
        struct fentry *cand = NULL;
        if (kid->is_cq) {
            for (size_t i = 0; i < n && !cand; i++)
                if (&fv[i].en->cq->node == kid)
                    cand = &fv[i];
        } else {
            cand = tournament(kid, fv, n);
        }
        if (cand && (!best || fless(cand, best, c)))
            best = cand;
    }
    return best;
}

size_t eng__fair_next(struct eng *e, struct eng__entry *v, size_t n, const bool *done)
{
    size_t first = n;
    for (size_t i = 0; i < n && first == n; i++)
        if (!done[i])
            first = i;
    if (first == n || !v[first].cq->node.parent)
        return first;
    struct eng__node *root = eng__node_root(&v[first].cq->node);
    struct fentry *fv = xcalloc(n + 1, sizeof(*fv));
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (done[i] || eng__node_root(&v[i].cq->node) != root)
            continue;
        fv[m].en = &v[i];
        path_shares(e, &fv[m++]);
    }
    struct fentry *w = tournament(root, fv, m);
    size_t idx = w ? (size_t)(w->en - v) : first;
    for (size_t i = 0; i < m; i++)
        xfree(fv[i].lv);
    xfree(fv);
    return idx;
}
