/*
 * preempt: choosing preemption targets, Kueue's classical preemption
 * restated (shared/spec/kueue.md §2.6; pkg/scheduler/preemption/preemption.go,
 * classical/candidate_generator.go, classical/hierarchical_preemption.go),
 * and the per-FR preemption oracle the flavor assigner consults.
 *
 * Candidates: quota holders of the preemptor's ClusterQueue allowed by
 * withinClusterQueue, and holders of other ClusterQueues of the cohort tree
 * that are over nominal in the FRs needing preemption, allowed by
 * reclaimWithinCohort; each is classified (within-CQ, hierarchical reclaim,
 * reclaim without / while borrowing). They are ordered (evicted first,
 * other-CQ first, lower priority, most recently reserved, uid) and removed
 * one by one from the live usage until the preemptor fits; then the set is
 * minimised by adding back in reverse order. Every simulated removal is
 * undone before returning.
 *
 * Classical searches take the order from a holder order kept per cohort
 * tree (struct hord; membership follows cq->holders through
 * eng__hord_add/remove, the candidates' keys are checked at each use),
 * walked once and split into the candidate groups, instead of sorting the
 * candidates each time.
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine-int.h"
#include "util/xalloc.h"

enum variant { V_NEVER, V_WITHIN_CQ, V_HIERARCHICAL, V_RECLAIM_NO_BORROW, V_RECLAIM_BORROW };

static const char *variant_reason(enum variant v)
{
    switch (v) {
    case V_WITHIN_CQ: return "InClusterQueue";
    case V_RECLAIM_BORROW: return "InCohortReclaimWhileBorrowing";
    default: return "InCohortReclamation";
    }
}

/* A candidate with its order key precomputed (Kueue CandidatesOrdering):
 * k1 = group << 36 | biased priority << 3 | variant, where the group puts
 * evicted candidates first and keeps Kueue's lists apart, and the variant
 * (a function of group and priority) never decides; k2 = when the quota was
 * reserved (later first); uid and namespace/name break ties, the uid's
 * first 8 bytes compared as the number k3 first (uid_prefix). */
struct cand {
    uint64_t k1;
    int64_t k2;
    uint64_t k3;
    struct eng__wl *wl;
    struct eng__node *lca;
};

struct cands {
    struct cand *v;
    size_t n, cap;
};

static enum variant cand_variant(const struct cand *c) { return (enum variant)(c->k1 & 7); }

static bool is_evicted(const struct eng__wl *w) { return w->evicted || w->preempted; }

static int64_t reserved_at(const struct eng *e, const struct eng__wl *w)
{
    return w->quota_reserved_ms ? w->quota_reserved_ms : e->now_ms;
}

/* The first 8 bytes of s, big-endian, NUL-padded: ordered as strcmp
 * orders s on those bytes (equal numbers leave the rest to strcmp). */
static uint64_t uid_prefix(const char *s)
{
    uint64_t v = 0;
    if (strnlen(s, 8) == 8) { /* the usual case: one big-endian load */
        memcpy(&v, s, 8);
        return be64toh(v);
    }
    int i = 0;
    for (; i < 8 && s[i]; i++)
        v = v << 8 | (unsigned char)s[i];
    return v << (8 * (8 - i));
}

static inline struct cand cand_make(const struct eng *e, struct eng__wl *wl, struct eng__node *lca,
                             enum variant v, unsigned group)
{
    uint64_t prio = (uint64_t)((int64_t)wl->priority - INT32_MIN);
    return (struct cand){(uint64_t)group << 36 | prio << 3 | (uint64_t)v, reserved_at(e, wl),
                         uid_prefix(wl->uid), wl, lca};
}

static void cands_add(struct cands *c, struct cand x)
{
    XGROW(c->v, c->cap, c->n + 1);
    c->v[c->n++] = x;
}

/* The quota holders of one cohort tree (root) in holder order: evicted
 * first, then priority, reservation time (later first), uid, namespace/name
 * (Kueue CandidatesOrdering without its lists, which depend on the
 * preemptor). Membership follows cq->holders (eng__hord_add/remove); the
 * keys may change behind its back (eviction flags, priority), so every use
 * checks the keys it relies on first and sorts again when one is stale (v
 * stays sorted on the recorded keys until then). Valid
 * for the forest of rebuild gen only. An order left unused for more
 * holder changes than it has holders is dropped (root NULL): building it
 * again costs less than keeping it up to date. */
struct hord {
    const struct eng__node *root;
    uint64_t gen;
    size_t changes; /* holder changes since its last use */
    struct eng__wl **v;
    size_t n, cap;
};

/* Buffers reused across searches, and the last oracle search (its targets
 * serve the nomination that follows when nothing changed in between). */
struct eng__pscratch {
    struct cands all;
    struct cands tmp; /* cands_sort's gather buffer */
    const struct cand **ptr; /* cands_order's pointers and merge buffer */
    size_t cap_ptr;
    int64_t *rem;
    size_t cap_rem;
    struct hord *ho;  /* holder orders, one per cohort tree searched */
    struct hord ho_dirty; /* built for each search while the forest is dirty */
    size_t n_ho, cap_ho;
    uint64_t stamp;   /* the classical search in progress (cq->pstamp) */
    bool check_all;   /* eng__hord_check_all: every walked key checked */
    bool memo_ok;
    uint64_t memo_epoch;
    int64_t memo_now_ms;
    const struct eng__cq *memo_cq;
    const struct eng__wl *memo_wl;
    int memo_fr;
    int64_t memo_val;
    struct eng__targets memo_t;
};

static struct eng__pscratch *scratch(struct eng *e)
{
    if (!e->pre)
        e->pre = xcalloc(1, sizeof(*e->pre));
    return e->pre;
}

void eng__pscratch_free(struct eng *e)
{
    if (!e->pre)
        return;
    xfree(e->pre->all.v);
    xfree(e->pre->tmp.v);
    xfree(e->pre->ptr);
    xfree(e->pre->rem);
    xfree(e->pre->memo_t.v);
    for (size_t i = 0; i < e->pre->n_ho; i++)
        xfree(e->pre->ho[i].v);
    xfree(e->pre->ho);
    xfree(e->pre->ho_dirty.v);
    XFREE(e->pre);
}

void eng__pmemo_reset(struct eng *e)
{
    if (e->pre)
        e->pre->memo_ok = false;
}

/* What one preemption search needs. */
struct pctx {
    struct eng *e;
    struct eng__cq *cq;
    struct eng__wl *wl;
    const int *frs;       /* FRs needing preemption */
    int n_frs;
    const int *use_fr;    /* the preemptor's usage */
    const int64_t *use_amt;
    int n_use;
};

void eng__targets_free(struct eng__targets *t)
{
    xfree(t->v);
    memset(t, 0, sizeof(*t));
}

static void targets_push(struct eng__targets *t, struct eng__wl *wl, const char *reason)
{
    XGROW(t->v, t->cap, t->n + 1);
    t->v[t->n++] = (struct eng__target){wl, reason};
}

bool eng__wl_uses_frs(const struct eng__wl *wl, const int *frs, int n)
{
    if (!wl->n_use)
        return false;
    for (int k = 0; k < n; k++) /* the first usage inline: no array read */
        if (wl->use0_fr == frs[k])
            return true;
    for (int u = 1; u < wl->n_use; u++)
        for (int k = 0; k < n; k++)
            if (wl->use_fr[u] == frs[k])
                return true;
    return false;
}

void eng__sim_remove(struct eng *e, struct eng__wl *wl) { eng__wl_charge(e, wl, -1); }
void eng__sim_add(struct eng *e, struct eng__wl *wl) { eng__wl_charge(e, wl, +1); }

void eng__sim_usage(struct eng *e, struct eng__cq *cq, const int *fr, const int64_t *amt, int n,
                    int sign)
{
    if (e->tree_dirty)
        return;
    for (int u = 0; u < n; u++) {
        int i = eng__node_idx(&cq->node, fr[u]);
        if (i >= 0)
            eng__node_add_usage(e, &cq->node, i, sign > 0 ? amt[u] : -amt[u]);
    }
}

static struct eng__cq *node_cq(struct eng__node *n)
{
    return (struct eng__cq *)((char *)n - offsetof(struct eng__cq, node));
}

/* ---- classification (Kueue classifyPreemptionVariant) ---- */

static inline bool priority_too_high(const struct pctx *p, const struct eng__wl *cand)
{
    enum api_preempt_policy pol = cand->rcq == p->cq ? p->cq->within_cq : p->cq->reclaim;
    bool lower = p->wl->priority > cand->priority;
    if (pol == PP_LOWER_PRIORITY)
        return !lower;
    if (pol == PP_LOWER_OR_NEWER_EQUAL_PRIORITY)
        return !(lower || (p->wl->priority == cand->priority && p->wl->qo_ts_ms < cand->qo_ts_ms));
    return pol != PP_ANY;
}

static inline enum variant classify(const struct pctx *p, const struct eng__wl *cand, bool advantage)
{
    if (!eng__wl_uses_frs(cand, p->frs, p->n_frs) || priority_too_high(p, cand))
        return V_NEVER;
    if (cand->rcq == p->cq)
        return V_WITHIN_CQ;
    if (advantage)
        return V_HIERARCHICAL;
    if (p->cq->borrow_within == PP_NEVER)
        return V_RECLAIM_NO_BORROW;
    if (cand->priority >= p->wl->priority ||
        (p->cq->has_threshold && cand->priority > p->cq->threshold))
        return V_RECLAIM_NO_BORROW;
    return V_RECLAIM_BORROW;
}

/* Classical lists (groups): hierarchical reclaim, other ClusterQueues,
 * the preemptor's own; evicted candidates come before all three. */
enum { L_HIER, L_PRIO, L_SAME, L_N };

static size_t from_cq(const struct pctx *p, struct eng__cq *cq, struct eng__node *lca, bool adv,
                      unsigned list, struct cands *out)
{
    size_t n = 0;
    for (struct eng__wl *w = cq->holders; w; w = w->hnext) {
        enum variant v = classify(p, w, adv);
        if (v == V_NEVER)
            continue;
        XGROW(out->v, out->cap, out->n + 1); /* cands_add, inlined */
        out->v[out->n++] = cand_make(p->e, w, lca, v, is_evicted(w) ? list : list + L_N);
        n++;
    }
    return n;
}

static bool within_nominal(const struct pctx *p, const struct eng__node *n)
{
    return eng__node_within_nominal(n, p->frs, p->n_frs);
}

/* Tag the ClusterQueues of cur's subtree (skip's excluded) whose holders
 * are candidates: not within nominal, nor any cohort between them and cur;
 * their list and lowest common ancestor with the preemptor (root). Returns
 * how many were tagged. */
static size_t in_subtree(const struct pctx *p, struct eng__node *cur, struct eng__node *root,
                         struct eng__node *skip, unsigned list, uint64_t stamp)
{
    size_t n = 0;
    for (size_t k = 0; k < cur->n_kids; k++) {
        struct eng__node *kid = cur->kids[k];
        if (kid == skip || kid == &p->cq->node || within_nominal(p, kid))
            continue;
        if (!kid->is_cq) {
            n += in_subtree(p, kid, root, skip, list, stamp);
            continue;
        }
        struct eng__cq *q = node_cq(kid);
        q->pstamp = stamp;
        q->plca = root;
        q->plist = list;
        n++;
    }
    return n;
}

/* Kueue QuantitiesFitInQuota over the requests still to place (rem). */
static bool fits_in_quota(const struct pctx *p, const struct eng__node *n, int64_t *rem)
{
    bool fits = true;
    for (int u = 0; u < p->n_use; u++) {
        int i = eng__node_idx(n, p->use_fr[u]);
        int64_t usage = i >= 0 ? n->usage[i] : 0, sub = i >= 0 ? n->subtree[i] : 0;
        if (eng__amt_add(usage, rem[u]) > sub)
            fits = false;
        int64_t la = i >= 0 ? eng__local_available(n, i) : 0;
        rem[u] = rem[u] > la ? eng__amt_sub(rem[u], la) : 0;
    }
    return fits;
}

/* Tag the other ClusterQueues of the tree whose holders are candidates,
 * level by level up from the preemptor's parent; returns how many. Levels
 * without the hierarchical advantage are skipped when `prio` is false
 * (their candidates could not be used). */
static size_t hierarchical(const struct pctx *p, bool prio, uint64_t stamp)
{
    if (!p->cq->node.parent || p->cq->reclaim == PP_NEVER)
        return 0;
    struct eng__pscratch *sc = scratch(p->e);
    XGROW(sc->rem, sc->cap_rem, (size_t)p->n_use + 1);
    int64_t *rem = sc->rem;
    if (p->n_use)
        memcpy(rem, p->use_amt, sizeof(int64_t) * (size_t)p->n_use);
    bool adv = fits_in_quota(p, &p->cq->node, rem);
    struct eng__node *prev = NULL;
    size_t n = 0;
    for (struct eng__node *nd = p->cq->node.parent; nd; nd = nd->parent) {
        if (adv || prio)
            n += in_subtree(p, nd, nd, prev, adv ? L_HIER : L_PRIO, stamp);
        adv = fits_in_quota(p, nd, rem) || adv;
        prev = nd;
    }
    return n;
}

/* ---- ordering (Kueue CandidatesOrdering) ---- */

/* True when a (keys a1-a3) comes before b. A strict total order: keys are unique. */
static inline bool keys_before(uint64_t a1, int64_t a2, uint64_t a3, const struct eng__wl *a,
                               uint64_t b1, int64_t b2, uint64_t b3, const struct eng__wl *b)
{
    if (a1 != b1)
        return a1 < b1;
    if (a2 != b2)
        return a2 > b2;
    if (a3 != b3)
        return a3 < b3;
    int c = strcmp(a->uid, b->uid);
    return c ? c < 0 : strcmp(a->key, b->key) < 0;
}

static inline bool cand_before(const struct cand *a, const struct cand *b)
{
    return keys_before(a->k1, a->k2, a->k3, a->wl, b->k1, b->k2, b->k3, b->wl);
}

/* Merge sort of the pointers v[0..n) with tmp (n slots) and the comparison
 * inlined; the order being total, the result is the one any sort gives.
 * Pointers move instead of the 40-byte candidates. */
static void cands_msort(const struct cand **v, const struct cand **tmp, size_t n)
{
    if (n <= 12) { /* insertion sort */
        for (size_t i = 1; i < n; i++) {
            const struct cand *x = v[i];
            size_t j = i;
            for (; j > 0 && cand_before(x, v[j - 1]); j--)
                v[j] = v[j - 1];
            v[j] = x;
        }
        return;
    }
    size_t h = n / 2;
    cands_msort(v, tmp, h);
    cands_msort(v + h, tmp, n - h);
    if (!cand_before(v[h], v[h - 1]))
        return; /* already in order */
    memcpy(tmp, v, h * sizeof(*v));
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        v[k++] = cand_before(v[j], tmp[i]) ? v[j++] : tmp[i++];
    while (i < h)
        v[k++] = tmp[i++];
}

/* The candidates of c in candidate order, as pointers into c->v (valid
 * until the next call or until c changes). */
static const struct cand *const *cands_order(struct eng *e, const struct cands *c)
{
    struct eng__pscratch *sc = scratch(e);
    XGROW(sc->ptr, sc->cap_ptr, 2 * c->n + 1);
    const struct cand **v = sc->ptr;
    for (size_t i = 0; i < c->n; i++)
        v[i] = &c->v[i];
    cands_msort(v, v + c->n, c->n);
    return v;
}

/* Sort c in place (candidate order). */
static void cands_sort(struct eng *e, struct cands *c)
{
    if (c->n < 2)
        return;
    const struct cand *const *v = cands_order(e, c);
    struct eng__pscratch *sc = scratch(e);
    XGROW(sc->tmp.v, sc->tmp.cap, c->n);
    for (size_t i = 0; i < c->n; i++)
        sc->tmp.v[i] = *v[i];
    memcpy(c->v, sc->tmp.v, c->n * sizeof(*c->v));
}

/* ---- holder order per cohort tree ---- */

/* Record w's live holder-order key (cand_make's, the evicted bit as group). */
static inline void hord_snap(const struct eng *e, struct eng__wl *w)
{
    struct cand k = cand_make(e, w, NULL, V_NEVER, !is_evicted(w));
    w->hk1 = k.k1;
    w->hk2 = k.k2;
    w->hk3 = k.k3;
}

/* w's recorded key is still its live one (uid and key never change). */
static inline bool hord_snap_ok(const struct eng *e, const struct eng__wl *w)
{
    uint64_t prio = (uint64_t)((int64_t)w->priority - INT32_MIN);
    return w->hk1 == ((uint64_t)!is_evicted(w) << 36 | prio << 3) && w->hk2 == reserved_at(e, w);
}

/* Holder order on the recorded keys: true when a comes before b. */
static inline bool hord_before(const struct eng__wl *a, const struct eng__wl *b)
{
    return keys_before(a->hk1, a->hk2, a->hk3, a, b->hk1, b->hk2, b->hk3, b);
}

/* The order kept for root in the current forest, or NULL. */
static struct hord *hord_find(struct eng *e, const struct eng__node *root)
{
    struct eng__pscratch *sc = e->pre;
    if (!sc || e->tree_dirty)
        return NULL;
    for (size_t i = 0; i < sc->n_ho; i++)
        if (sc->ho[i].root == root && sc->ho[i].gen == e->tree_gen)
            return &sc->ho[i];
    return NULL;
}

/* Where wl (recorded key) goes in h, or is. */
static size_t hord_pos(const struct hord *h, const struct eng__wl *wl)
{
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (hord_before(h->v[mid], wl))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The order kept for wl's tree, counting a change; NULL when none is kept
 * (or it has just been dropped). */
static struct hord *hord_changed(struct eng *e, const struct eng__wl *wl)
{
    struct hord *h = wl->rcq ? hord_find(e, eng__node_root(&wl->rcq->node)) : NULL;
    if (h && ++h->changes > h->n + 16) {
        h->root = NULL;
        return NULL;
    }
    return h;
}

void eng__hord_add(struct eng *e, struct eng__wl *wl)
{
    struct hord *h = hord_changed(e, wl);
    if (!h)
        return;
    XGROW(h->v, h->cap, h->n + 1);
    hord_snap(e, wl);
    size_t at = hord_pos(h, wl);
    memmove(h->v + at + 1, h->v + at, (h->n - at) * sizeof(*h->v));
    h->v[at] = wl;
    h->n++;
}

void eng__hord_remove(struct eng *e, struct eng__wl *wl)
{
    struct hord *h = hord_changed(e, wl);
    if (!h)
        return;
    size_t at = hord_pos(h, wl);
    if (at >= h->n || h->v[at] != wl) /* not where its recorded key says */
        for (at = 0; at < h->n && h->v[at] != wl; at++)
            ;
    if (at < h->n) {
        memmove(h->v + at, h->v + at + 1, (h->n - at - 1) * sizeof(*h->v));
        h->n--;
    }
}

/* qsort comparison in recorded-key order (builds are rare). */
static int hord_cmp(const void *pa, const void *pb)
{
    const struct eng__wl *a = *(struct eng__wl *const *)pa, *b = *(struct eng__wl *const *)pb;
    return hord_before(a, b) ? -1 : hord_before(b, a);
}

/* Fill h from the holders of every ClusterQueue under h->root, their keys
 * recorded afresh, sorted. */
static void hord_build(struct eng *e, struct hord *h)
{
    h->n = 0;
    for (size_t k = 0; k < e->n_cq_sorted; k++) {
        struct eng__cq *cq = e->cq_sorted[k];
        if (eng__node_root(&cq->node) != h->root)
            continue;
        for (struct eng__wl *w = cq->holders; w; w = w->hnext) {
            XGROW(h->v, h->cap, h->n + 1);
            hord_snap(e, w);
            h->v[h->n++] = w;
        }
    }
    if (h->n > 1)
        qsort(h->v, h->n, sizeof(*h->v), hord_cmp);
}

/* The order kept for root's tree, built when missing (kept from now on).
 * A recorded key may no longer be live: the user checks each (the order
 * is total and h holds the tree's holders, so with every recorded key
 * live h is the holder order) and calls hord_build when one is not. */
static struct hord *hord_get(struct eng *e, const struct eng__node *root)
{
    struct eng__pscratch *sc = scratch(e);
    if (e->tree_dirty) { /* not kept: the rebuild may change every tree */
        sc->ho_dirty.root = root;
        hord_build(e, &sc->ho_dirty);
        return &sc->ho_dirty;
    }
    struct hord *h = hord_find(e, root);
    if (!h) {
        for (size_t i = 0; i < sc->n_ho && !h; i++)
            if (sc->ho[i].gen != e->tree_gen || !sc->ho[i].root)
                h = &sc->ho[i]; /* a stale or dropped one is reused */
        if (!h) {
            XGROW(sc->ho, sc->cap_ho, sc->n_ho + 1);
            h = &sc->ho[sc->n_ho++];
            memset(h, 0, sizeof(*h));
        }
        h->root = root;
        h->gen = e->tree_gen;
        hord_build(e, h);
    }
    h->changes = 0;
    return h;
}

void eng__hord_check_all(struct eng *e, bool on) { scratch(e)->check_all = on; }

size_t eng__hord_of(struct eng *e, struct eng__cq *cq, struct eng__wl *const **out)
{
    struct hord *h = hord_get(e, eng__node_root(&cq->node));
    for (size_t i = 0; i < h->n; i++)
        if (!hord_snap_ok(e, h->v[i])) {
            hord_build(e, h);
            break;
        }
    *out = h->v;
    return h->n;
}

/* ---- the search ---- */

static bool cand_valid(const struct pctx *p, const struct cand *c, bool borrow)
{
    if (c->wl->rcq == p->cq)
        return true;
    if (borrow && cand_variant(c) == V_RECLAIM_NO_BORROW)
        return false;
    if (within_nominal(p, &c->wl->rcq->node))
        return false;
    for (struct eng__node *n = c->wl->rcq->node.parent; n && n != c->lca; n = n->parent)
        if (within_nominal(p, n))
            return false;
    return true;
}

static bool wl_fits(const struct pctx *p, bool allow_borrowing)
{
    const struct eng__node *n = &p->cq->node;
    for (int u = 0; u < p->n_use; u++) {
        int i = eng__node_idx(n, p->use_fr[u]);
        if (i < 0)
            return false;
        if (!allow_borrowing && eng__node_borrowing_with(n, i, p->use_amt[u]))
            return false;
        int64_t av = eng__available(n, i);
        if (p->use_amt[u] > (av > 0 ? av : 0))
            return false;
    }
    return true;
}

static bool under_nominal(const struct pctx *p)
{
    const struct eng__node *n = &p->cq->node;
    for (int k = 0; k < p->n_frs; k++) {
        int i = eng__node_idx(n, p->frs[k]);
        if (i < 0 || n->usage[i] >= n->q[i].nominal)
            return false;
    }
    return true;
}

/* Kueue fillBackWorkloads: from the second-to-last victim down to the
 * first, add each back and drop it when the preemptor still fits.
 *
 * Done in blocks: usage only grows while victims are added back and the
 * fit is monotone in usage, so when the preemptor still fits with the next
 * m victims added back, it fitted after each of them, and adding them back
 * one by one would have dropped them all. A block that does not fit is
 * halved by taking its later half out again, until the rest fits (dropped)
 * or one victim is left that does not fit (kept). The block doubles after
 * a fit, up to FILL_BLOCK_MAX (a miss costs up to the block in charges;
 * e->fill_block_max overrides it, 1 giving the one-by-one loop).
 * The drops are applied in the one-by-one order, so the targets end up as
 * the step-by-step loop leaves them. */
enum { FILL_BLOCK_MAX = 8 };

/* Drop the m victims before index next (next-1 first), as the
 * step-by-step loop does. */
static void fill_drop(struct eng__targets *t, size_t next, size_t m)
{
    for (size_t j = 1; j <= m; j++) {
        t->v[next - j] = t->v[t->n - 1];
        t->n--;
    }
}

static void fill_back(const struct pctx *p, struct eng__targets *t, bool borrow)
{
    if (t->n < 2)
        return;
    size_t next = t->n - 1; /* victims [0, next) are still to be considered */
    size_t b = 1, b_max = p->e->fill_block_max > 0 ? (size_t)p->e->fill_block_max : FILL_BLOCK_MAX;
    while (next > 0) {
        size_t m = b < next ? b : next;
        for (size_t j = 1; j <= m; j++)
            eng__sim_add(p->e, t->v[next - j].wl);
        bool fits = wl_fits(p, borrow);
        if (fits && b < b_max)
            b *= 2;
        while (!fits && m > 1) { /* take the later half out again */
            size_t h = m / 2;
            for (size_t j = h + 1; j <= m; j++)
                eng__sim_remove(p->e, t->v[next - j].wl);
            m = h;
            fits = wl_fits(p, borrow);
            b = 1;
        }
        if (fits) {
            fill_drop(t, next, m);
            next -= m;
        } else { /* m == 1: this victim is needed and stays a target */
            eng__sim_remove(p->e, t->v[next - 1].wl);
            next--;
            b = 1;
        }
    }
}

/* Undo the simulated removal of the victims. */
static void restore(const struct pctx *p, const struct eng__targets *t)
{
    for (size_t i = 0; i < t->n; i++)
        eng__sim_add(p->e, t->v[i].wl);
}

/* Move the block's removals (victims t->v[start..)) from cur to k victims:
 * add back or remove the difference. */
static void block_set(const struct pctx *p, const struct eng__targets *t, size_t start, size_t *cur,
                      size_t k)
{
    for (; *cur > k; --*cur)
        eng__sim_add(p->e, t->v[start + *cur - 1].wl);
    for (; *cur < k; ++*cur)
        eng__sim_remove(p->e, t->v[start + *cur].wl);
}

/* One attempt: remove candidates in order until the preemptor fits, then
 * add back (from the second-to-last) those it does not need.
 *
 * The fit is checked after blocks of removals (doubling up to
 * FILL_BLOCK_MAX, e->fill_block_max as for fill_back): the fit being
 * monotone in usage, the first victim count that fits lies in the first
 * block that fits and is found there by bisection; a candidate's validity
 * is decided with the victims before it removed, as in the one-by-one
 * loop, so the victims are that loop's. */
static bool attempt(const struct pctx *p, const struct cand *const *v, size_t n, bool borrow,
                    struct eng__targets *out)
{
    struct eng__targets t = {0};
    bool fits = false;
    size_t b = 1, b_max = p->e->fill_block_max > 0 ? (size_t)p->e->fill_block_max : FILL_BLOCK_MAX;
    XGROW(t.v, t.cap, n); /* one allocation: every candidate may be taken */
    for (size_t i = 0; i < n && !fits;) {
        size_t start = t.n, m = 0;
        for (; i < n && m < b; i++) {
            if (!cand_valid(p, v[i], borrow))
                continue;
            eng__sim_remove(p->e, v[i]->wl);
            /* targets_push without the growth check: t has room for n */
            t.v[t.n++] = (struct eng__target){v[i]->wl, variant_reason(cand_variant(v[i]))};
            m++;
        }
        if (!m)
            break;
        fits = wl_fits(p, borrow);
        if (!fits) {
            b = b < b_max ? 2 * b : b_max;
            continue;
        }
        size_t lo = 0, hi = m, cur = m; /* start + lo victims do not fit (or none yet), + hi do */
        while (hi - lo > 1) {
            size_t mid = lo + (hi - lo) / 2;
            block_set(p, &t, start, &cur, mid);
            if (wl_fits(p, borrow))
                hi = mid;
            else
                lo = mid;
        }
        block_set(p, &t, start, &cur, hi);
        t.n = start + hi;
    }
    if (fits)
        fill_back(p, &t, borrow);
    restore(p, &t);
    if (!fits) {
        eng__targets_free(&t);
        return false;
    }
    *out = t;
    return true;
}

/* Kueue classical preemption: one ordered list (evicted first; then the
 * hierarchical, other-ClusterQueue and own lists, each in candidate order)
 * tried with and/or without borrowing. When the preemptor may not borrow
 * while preempting and is not under nominal, the only attempt allows
 * borrowing, where candidates reclaimed without borrowing are never valid:
 * they are not even collected. */
/* The candidates of the tagged ClusterQueues (own included when tagged)
 * in candidate order: the tree's holder order walked once, each candidate
 * going to its group (evicted or not x list), groups then laid end to end.
 * Within a group the candidate order is the holder order (the variant is
 * a function of group and priority), so this is the sort's result.
 * Only the tagged holders' keys are checked: v stays sorted on the
 * recorded keys, so when those of the tagged holders are live, their
 * order in v is the holder order whatever the others' keys became.
 * Counts the candidates of the hierarchical and other-ClusterQueue lists. */
static const struct cand *const *collect_tagged(const struct pctx *p, uint64_t stamp,
                                               struct cands *all, size_t *hier, size_t *prio)
{
    struct eng *e = p->e;
    struct hord *h = hord_get(e, eng__node_root(&p->cq->node));
    size_t cnt[2 * L_N] = {0};
    struct eng__pscratch *sc = scratch(e);
    XGROW(all->v, all->cap, h->n + 1);
    for (size_t i = 0; i < h->n; i++) {
        struct eng__wl *w = h->v[i];
        struct eng__cq *q = w->rcq;
        bool tagged = q->pstamp == stamp;
        if (!tagged && !sc->check_all) /* not a candidate: its key does not matter */
            continue;
        if (!hord_snap_ok(e, w)) { /* a key changed: sort again, start over */
            hord_build(e, h);
            memset(cnt, 0, sizeof(cnt));
            all->n = 0;
            i = (size_t)-1;
            continue;
        }
        if (!tagged)
            continue;
        enum variant v = classify(p, w, q->plist == L_HIER);
        if (v == V_NEVER)
            continue;
        unsigned g = is_evicted(w) ? q->plist : q->plist + L_N;
        /* cand_make with the recorded (live) keys */
        all->v[all->n++] = (struct cand){(uint64_t)g << 36 | (w->hk1 & ((1ull << 36) - 1)) | v,
                                         w->hk2, w->hk3, w, q->plca};
        cnt[g]++;
    }
    *hier = cnt[L_HIER] + cnt[L_HIER + L_N];
    *prio = cnt[L_PRIO] + cnt[L_PRIO + L_N];
    XGROW(sc->ptr, sc->cap_ptr, 2 * all->n + 1);
    const struct cand **v = sc->ptr;
    size_t at[2 * L_N];
    for (size_t g = 0, sum = 0; g < 2 * L_N; g++) {
        at[g] = sum;
        sum += cnt[g];
    }
    for (size_t i = 0; i < all->n; i++)
        v[at[all->v[i].k1 >> 36]++] = &all->v[i];
    return v;
}

static void classical(const struct pctx *p, struct eng__targets *out)
{
    struct cands *all = &scratch(p->e)->all;
    size_t hier = 0, prio = 0;
    bool forbidden = p->cq->borrow_within == PP_NEVER;
    bool borrow_only = forbidden && !under_nominal(p);
    uint64_t stamp = ++scratch(p->e)->stamp;
    all->n = 0;
    const struct cand *const *order;
    if (hierarchical(p, !borrow_only, stamp)) {
        if (p->cq->within_cq != PP_NEVER) {
            p->cq->pstamp = stamp;
            p->cq->plca = NULL;
            p->cq->plist = L_SAME;
        }
        order = collect_tagged(p, stamp, all, &hier, &prio);
    } else { /* only the preemptor's own ClusterQueue */
        if (p->cq->within_cq != PP_NEVER)
            from_cq(p, p->cq, NULL, false, L_SAME, all);
        order = cands_order(p->e, all);
    }
    bool opts[2];
    int n_opts;
    if ((hier == 0 && prio == 0) || borrow_only) {
        opts[0] = true;
        n_opts = 1;
    } else if (forbidden && hier == 0) {
        opts[0] = false;
        opts[1] = true;
        n_opts = 2;
    } else {
        opts[0] = true;
        opts[1] = false;
        n_opts = 2;
    }
    for (int o = 0; o < n_opts; o++)
        if (attempt(p, order, all->n, opts[o], out))
            break;
}

/* ---- fair sharing preemption (Kueue fairPreemptions, §2.8) ---- */

/* The node on the path from n up whose parent is lca (n when n->parent is lca). */
static struct eng__node *almost(struct eng__node *n, const struct eng__node *lca)
{
    while (n->parent && n->parent != lca)
        n = n->parent;
    return n;
}

static const struct eng__node *lca_of(const struct eng__node *a, const struct eng__node *b)
{
    for (const struct eng__node *x = a->parent; x; x = x->parent)
        for (const struct eng__node *y = b->parent; y; y = y->parent)
            if (x == y)
                return x;
    return NULL;
}

struct fpool {                /* candidates grouped per target ClusterQueue */
    struct eng__cq **cq;
    struct cands *c;          /* per cq, in candidate order */
    size_t *head;             /* next candidate index */
    bool *pruned;
    size_t n;
    struct eng__node **pruned_cohorts;
    size_t n_pc, cap_pc;
};

static void fpool_build(const struct pctx *p, const struct cands *all, struct fpool *fp)
{
    memset(fp, 0, sizeof(*fp));
    size_t cap = all->n + 1;
    fp->cq = xcalloc(cap, sizeof(*fp->cq));
    fp->c = xcalloc(cap, sizeof(*fp->c));
    fp->head = xcalloc(cap, sizeof(*fp->head));
    fp->pruned = xcalloc(cap, sizeof(*fp->pruned));
    for (size_t i = 0; i < all->n; i++) {
        size_t k = 0;
        while (k < fp->n && fp->cq[k] != all->v[i].wl->rcq)
            k++;
        if (k == fp->n)
            fp->cq[fp->n++] = all->v[i].wl->rcq;
        cands_add(&fp->c[k], all->v[i]);
    }
    (void)p;
}

static void fpool_free(struct fpool *fp)
{
    for (size_t i = 0; i < fp->n; i++)
        xfree(fp->c[i].v);
    xfree(fp->cq);
    xfree(fp->c);
    xfree(fp->head);
    xfree(fp->pruned);
    xfree(fp->pruned_cohorts);
}

static size_t fpool_idx(const struct fpool *fp, const struct eng__cq *cq)
{
    for (size_t i = 0; i < fp->n; i++)
        if (fp->cq[i] == cq)
            return i;
    return fp->n;
}

static bool fpool_has(const struct fpool *fp, const struct eng__cq *cq)
{
    size_t i = fpool_idx(fp, cq);
    return i < fp->n && !fp->pruned[i] && fp->head[i] < fp->c[i].n;
}

static bool cohort_pruned(const struct fpool *fp, const struct eng__node *n)
{
    for (size_t i = 0; i < fp->n_pc; i++)
        if (fp->pruned_cohorts[i] == n)
            return true;
    return false;
}

static void prune_cohort(struct fpool *fp, struct eng__node *n)
{
    XGROW(fp->pruned_cohorts, fp->cap_pc, fp->n_pc + 1);
    fp->pruned_cohorts[fp->n_pc++] = n;
}

static bool on_path(const struct pctx *p, const struct eng__node *n)
{
    for (const struct eng__node *x = p->cq->node.parent; x; x = x->parent)
        if (x == n)
            return true;
    return false;
}

/* Kueue TargetClusterQueueOrdering.nextTarget: the child with the highest
 * share, descending into cohorts; NULL when this step only pruned. */
static struct eng__cq *next_target(const struct pctx *p, struct fpool *fp, struct eng__node *c)
{
    struct eng__cq *hq = NULL;
    struct eng__node *hc = NULL;
    struct eng__drs qd = {0}, cd = {0};
    for (size_t k = 0; k < c->n_kids; k++) {
        struct eng__node *kid = c->kids[k];
        if (kid->is_cq) {
            struct eng__cq *cq = node_cq(kid);
            size_t i = fpool_idx(fp, cq);
            if (i < fp->n && fp->pruned[i])
                continue;
            struct eng__drs d = eng__drs_of(p->e, kid);
            if ((d.ratio == 0 && cq != p->cq) || !fpool_has(fp, cq)) {
                if (i < fp->n)
                    fp->pruned[i] = true;
            } else if (!hq || eng__drs_cmp(d, qd) >= 0) {
                hq = cq;
                qd = d;
            }
        } else if (!cohort_pruned(fp, kid)) {
            struct eng__drs d = eng__drs_of(p->e, kid);
            if (d.ratio == 0 && !on_path(p, kid))
                prune_cohort(fp, kid);
            else if (!hc || eng__drs_cmp(d, cd) >= 0) {
                hc = kid;
                cd = d;
            }
        }
    }
    if (!hq && !hc) {
        prune_cohort(fp, c);
        return NULL;
    }
    if (hc && (!hq || eng__drs_cmp(cd, qd) >= 0))
        return next_target(p, fp, hc);
    return hq;
}

/* The preemptor fits with its own simulated usage taken out again. */
static bool fair_fits(const struct pctx *p)
{
    eng__sim_usage(p->e, p->cq, p->use_fr, p->use_amt, p->n_use, -1);
    bool ok = wl_fits(p, true);
    eng__sim_usage(p->e, p->cq, p->use_fr, p->use_amt, p->n_use, +1);
    return ok;
}

static struct eng__wl *pop(struct fpool *fp, size_t i)
{
    return fp->c[i].v[fp->head[i]++].wl;
}

static void shares(const struct pctx *p, struct eng__cq *t, struct eng__drs *pnew, struct eng__drs *told)
{
    const struct eng__node *lca = lca_of(&p->cq->node, &t->node);
    *pnew = eng__drs_of(p->e, almost(&p->cq->node, lca));
    *told = eng__drs_of(p->e, almost(&t->node, lca));
}

static bool strategy_ok(enum eng_fair_strategy s, struct eng__drs pnew, struct eng__drs told,
                        struct eng__drs tnew)
{
    if (s == FS_LESS_THAN_INITIAL_SHARE)
        return eng__drs_cmp(pnew, told) < 0;
    return eng__drs_cmp(pnew, tnew) <= 0;
}

/* Rule S2-a (or the first configured strategy) over the target order;
 * candidates that fail the strategy go to retry. Returns true on fit. */
static bool fair_first(const struct pctx *p, struct fpool *fp, enum eng_fair_strategy s,
                       bool within_nominal, struct eng__targets *t, struct cands *retry)
{
    struct eng__node *root = eng__node_root(&p->cq->node);
    while (!cohort_pruned(fp, root)) {
        struct eng__cq *tq = next_target(p, fp, root);
        if (!tq)
            continue;
        size_t i = fpool_idx(fp, tq);
        if (tq == p->cq || within_nominal) {
            struct eng__wl *w = pop(fp, i);
            eng__sim_remove(p->e, w);
            targets_push(t, w, tq == p->cq ? "InClusterQueue" : "InCohortReclamation");
            if (fair_fits(p))
                return true;
            continue;
        }
        struct eng__drs pnew, told;
        shares(p, tq, &pnew, &told);
        while (fp->head[i] < fp->c[i].n) {
            struct eng__wl *w = pop(fp, i);
            eng__sim_remove(p->e, w);
            const struct eng__node *lca = lca_of(&p->cq->node, &tq->node);
            struct eng__drs tnew = eng__drs_of(p->e, almost(&tq->node, lca));
            if (strategy_ok(s, pnew, told, tnew)) {
                targets_push(t, w, "InCohortFairSharing");
                if (fair_fits(p))
                    return true;
                break;
            }
            eng__sim_add(p->e, w);
            cands_add(retry, cand_make(p->e, w, NULL, V_RECLAIM_NO_BORROW, 0));
        }
    }
    return false;
}

/* Rule S2-b over the retry candidates. */
static bool fair_second(const struct pctx *p, const struct cands *retry, struct eng__targets *t)
{
    struct fpool fp;
    fpool_build(p, retry, &fp);
    struct eng__node *root = eng__node_root(&p->cq->node);
    bool fits = false;
    while (!fits && !cohort_pruned(&fp, root)) {
        struct eng__cq *tq = next_target(p, &fp, root);
        if (!tq)
            continue;
        size_t i = fpool_idx(&fp, tq);
        struct eng__drs pnew, told;
        shares(p, tq, &pnew, &told);
        if (eng__drs_cmp(pnew, told) < 0) {
            struct eng__wl *w = pop(&fp, i);
            eng__sim_remove(p->e, w);
            targets_push(t, w, "InCohortFairSharing");
            fits = fair_fits(p);
        }
        fp.pruned[i] = true;
    }
    fpool_free(&fp);
    return fits;
}

/* Fair-sharing candidates: evicted first, other ClusterQueues before the
 * preemptor's own (groups 0-3), then candidate order. */
static void fair_from_cq(const struct pctx *p, struct eng__cq *cq, struct cands *out)
{
    for (struct eng__wl *w = cq->holders; w; w = w->hnext) {
        enum variant v = classify(p, w, false);
        if (v != V_NEVER)
            cands_add(out, cand_make(p->e, w, NULL, v, (is_evicted(w) ? 0 : 2) + (cq == p->cq)));
    }
}

static void fair_candidates(const struct pctx *p, struct cands *all)
{
    if (p->cq->within_cq != PP_NEVER)
        fair_from_cq(p, p->cq, all);
    if (!p->cq->node.parent || p->cq->reclaim == PP_NEVER)
        return;
    for (size_t k = 0; k < p->e->n_cq_sorted; k++) {
        struct eng__cq *cq = p->e->cq_sorted[k];
        if (cq == p->cq || eng__node_root(&cq->node) != eng__node_root(&p->cq->node))
            continue;
        bool borrowing = false;
        for (int f = 0; f < p->n_frs; f++)
            borrowing = borrowing || eng__cq_borrowing(cq, p->frs[f]);
        if (borrowing)
            fair_from_cq(p, cq, all);
    }
}

static void fair_preemption(const struct pctx *p, struct eng__targets *out)
{
    struct cands all = {0}, retry = {0};
    fair_candidates(p, &all);
    if (!all.n) {
        xfree(all.v);
        return;
    }
    cands_sort(p->e, &all);
    const struct eng_config *cfg = &p->e->cfg;
    enum eng_fair_strategy s1 = cfg->n_fs_strategies ? cfg->fs_strategies[0] : FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE;
    bool second = cfg->n_fs_strategies ? cfg->n_fs_strategies > 1 : true;
    struct eng__targets t = {0};
    struct fpool fp;
    fpool_build(p, &all, &fp);
    eng__sim_usage(p->e, p->cq, p->use_fr, p->use_amt, p->n_use, +1);
    bool within = true;
    for (int f = 0; f < p->n_frs && within; f++) {
        int i = eng__node_idx(&p->cq->node, p->frs[f]);
        within = i >= 0 && p->cq->node.usage[i] <= p->cq->node.subtree[i];
    }
    bool fits = !p->cq->node.parent ? false : fair_first(p, &fp, s1, within, &t, &retry);
    if (!p->cq->node.parent) {
        size_t i = fpool_idx(&fp, p->cq);
        while (!fits && i < fp.n && fp.head[i] < fp.c[i].n) {
            struct eng__wl *w = pop(&fp, i);
            eng__sim_remove(p->e, w);
            targets_push(&t, w, "InClusterQueue");
            fits = fair_fits(p);
        }
    }
    if (!fits && second && retry.n)
        fits = fair_second(p, &retry, &t);
    eng__sim_usage(p->e, p->cq, p->use_fr, p->use_amt, p->n_use, -1);
    if (fits)
        fill_back(p, &t, true);
    restore(p, &t);
    if (fits)
        *out = t;
    else
        eng__targets_free(&t);
    fpool_free(&fp);
    xfree(all.v);
    xfree(retry.v);
}

static void get_targets(struct eng *e, struct eng__cq *cq, struct eng__wl *wl, const int *frs,
                        int n_frs, const int *use_fr, const int64_t *use_amt, int n_use,
                        struct eng__targets *out)
{
    struct pctx p = {e, cq, wl, frs, n_frs, use_fr, use_amt, n_use};
    memset(out, 0, sizeof(*out));
    if (e->cfg.fair_sharing)
        fair_preemption(&p, out);
    else
        classical(&p, out);
}

/* The oracle's last search answers this one: same preemptor, one FR
 * needing preemption that is also the only one used, same amount, nothing
 * changed since (usage epoch, clock). */
static bool memo_hit(struct eng *e, const struct eng__cq *cq, const struct eng__wl *wl, int fr,
                     const struct eng__asg *a, struct eng__targets *out)
{
    struct eng__pscratch *sc = e->pre;
    if (!sc || !sc->memo_ok || sc->memo_epoch != e->usage_epoch || sc->memo_now_ms != e->now_ms ||
        e->tree_dirty || sc->memo_cq != cq || sc->memo_wl != wl || sc->memo_fr != fr ||
        a->n_use != 1 || a->use_fr[0] != fr || a->use_amt[0] != sc->memo_val)
        return false;
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < sc->memo_t.n; i++)
        targets_push(out, sc->memo_t.v[i].wl, sc->memo_t.v[i].reason);
    return true;
}

static void memo_store(struct eng *e, const struct eng__cq *cq, const struct eng__wl *wl, int fr,
                       int64_t val, const struct eng__targets *t)
{
    struct eng__pscratch *sc = scratch(e);
    sc->memo_ok = !e->tree_dirty;
    sc->memo_epoch = e->usage_epoch;
    sc->memo_now_ms = e->now_ms;
    sc->memo_cq = cq;
    sc->memo_wl = wl;
    sc->memo_fr = fr;
    sc->memo_val = val;
    sc->memo_t.n = 0;
    for (size_t i = 0; i < t->n; i++)
        targets_push(&sc->memo_t, t->v[i].wl, t->v[i].reason);
}

void eng__get_targets(struct eng *e, struct eng__cq *cq, struct eng__wl *wl,
                      const struct eng__asg *a, struct eng__targets *out)
{
    int *frs = xcalloc((size_t)a->n_use + 1, sizeof(int)), n = 0;
    for (int i = 0; i < a->n_ps; i++)
        for (int k = 0; k < a->ps[i].n_ra; k++) {
            const struct eng__ra *ra = &a->ps[i].ra[k];
            if (ra->flv < 0 || ra->mode != ENG__PREEMPT)
                continue;
            bool dup = false;
            for (int j = 0; j < n; j++)
                dup = dup || frs[j] == ra->fr;
            if (!dup && n < a->n_use)
                frs[n++] = ra->fr;
        }
    if (n != 1 || !memo_hit(e, cq, wl, frs[0], a, out))
        get_targets(e, cq, wl, frs, n, a->use_fr, a->use_amt, a->n_use, out);
    xfree(frs);
}

int eng__oracle(struct eng *e, struct eng__cq *cq, struct eng__wl *wl, int fr, int64_t val,
                int *borrow)
{
    struct eng__targets t;
    bool may_reclaim;
    get_targets(e, cq, wl, &fr, 1, &fr, &val, 1, &t);
    if (!t.n) {
        memo_store(e, cq, wl, fr, val, &t);
        eng__targets_free(&t);
        *borrow = eng__lowest_fitting_height(cq, fr, val, &may_reclaim);
        return ENG__PM_NOCAND;
    }
    bool own = false;
    for (size_t i = 0; i < t.n; i++) {
        eng__sim_remove(e, t.v[i].wl);
        own = own || t.v[i].wl->rcq == cq;
    }
    *borrow = eng__lowest_fitting_height(cq, fr, val, &may_reclaim);
    for (size_t i = 0; i < t.n; i++)
        eng__sim_add(e, t.v[i].wl);
    memo_store(e, cq, wl, fr, val, &t);
    eng__targets_free(&t);
    return own ? ENG__PM_PREEMPT : ENG__PM_RECLAIM;
}
