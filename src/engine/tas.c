/*
 * tas: Topology Aware Scheduling, Kueue's TAS restated (KEP-2724,
 * pkg/cache/tas_flavor_snapshot.go; docs/tas.md lists what is covered).
 *
 * A ResourceFlavor with spec.topologyName places each pod set it is
 * assigned on topology domains. The domains come from the nodes the caller
 * gives (eng_set_nodes): a node that carries the flavor's nodeLabels, the
 * pod set's nodeSelector and every level's label is in the leaf domain of
 * its level values; a leaf's free capacity is the sum of its nodes' free
 * capacity (allocatable minus non-TAS pods) minus what admitted TAS pod
 * sets were assigned there. Each domain holds the number of the pod set's
 * pods that fit (per leaf the least, over the requested resources, of free
 * / per-pod request; a parent sums its children).
 *
 *  - required LEVEL: the domain of LEVEL that fits every pod and has the
 *    fewest free pod slots (Kueue's BestFit); none fits: Kueue's message
 *    "topology \"T\" allows to fit only N out of M pod(s)" with N the
 *    largest domain's count;
 *  - preferred LEVEL: as required, climbing to higher levels while no
 *    domain fits; at the top level the largest domains are taken greedily;
 *  - unconstrained: the leaves with the fewest free slots first (Kueue's
 *    LeastFreeCapacity), as many as needed;
 *  - no request: unconstrained when every flavor of the ClusterQueue has a
 *    topology (Kueue's implicit default), else no TAS placement;
 *  - slices (podSetSliceRequiredTopology SL, podSetSliceSize S): from SL up
 *    domains count whole slices (a domain of SL holds its pods / S), the
 *    request's level is chosen in slices, and each slice stays in one
 *    domain of SL; the top level when only slices are asked for.
 * Below the chosen level, each chosen domain spreads its pods over its
 * children in decreasing count, the last one being the smallest child
 * that holds what remains (per parent, so a spread at a high level keeps
 * the counts it chose per domain).
 * The assignment lists the lowest level only when it is
 * kubernetes.io/hostname, else every level (Kueue v1beta1).
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine-int.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

#define HOSTNAME_LABEL "kubernetes.io/hostname"

/* ---- topologies and nodes ---- */

static struct eng__topology *topo_find(const struct eng *e, const char *name)
{
    for (int i = 0; name && i < e->n_topos; i++)
        if (!strcmp(e->topos[i].name, name))
            return &e->topos[i];
    return NULL;
}

static void topo_clear(struct eng__topology *t)
{
    xfree(t->name);
    for (int l = 0; l < t->n_levels; l++)
        xfree(t->levels[l]);
    xfree(t->levels);
    memset(t, 0, sizeof(*t));
}

static void requeue_all(struct eng *e)
{
    for (size_t i = 0; i < e->n_cq_sorted; i++)
        eng__cq_mark_requeue(e, e->cq_sorted[i]);
}

void eng_upsert_topology(struct eng *e, const char *name, const char *const *levels,
                         size_t n_levels)
{
    if (!name)
        return;
    struct eng__topology *t = topo_find(e, name);
    if (t && t->n_levels == (int)n_levels) {
        bool same = true;
        for (size_t l = 0; l < n_levels && same; l++)
            same = !strcmp(t->levels[l], levels[l]);
        if (same)
            return;
    }
    if (!t) {
        e->topos = xreallocarray(e->topos, (size_t)e->n_topos + 1, sizeof(*e->topos));
        t = &e->topos[e->n_topos++];
        memset(t, 0, sizeof(*t));
    } else {
        topo_clear(t);
    }
    t->name = xstrdup(name);
    t->n_levels = (int)n_levels;
    t->levels = xcalloc(n_levels + 1, sizeof(*t->levels));
    for (size_t l = 0; l < n_levels; l++)
        t->levels[l] = xstrdup(levels[l]);
    requeue_all(e);
}

void eng_delete_topology(struct eng *e, const char *name)
{
    struct eng__topology *t = topo_find(e, name);
    if (!t)
        return;
    topo_clear(t);
    *t = e->topos[--e->n_topos];
    requeue_all(e);
}

static void tnode_clear(struct eng__tnode *n)
{
    xfree(n->name);
    api_labels_release(&n->labels);
    xfree(n->res);
    xfree(n->free);
}

static int tnode_cmp(const void *a, const void *b)
{
    return strcmp(((const struct eng__tnode *)a)->name, ((const struct eng__tnode *)b)->name);
}

static bool tnode_same(const struct eng__tnode *a, const struct eng__tnode *b)
{
    if (strcmp(a->name, b->name) || a->n != b->n || a->labels.n != b->labels.n)
        return false;
    for (size_t i = 0; i < a->labels.n; i++)
        if (strcmp(a->labels.items[i].key, b->labels.items[i].key) ||
            strcmp(a->labels.items[i].value, b->labels.items[i].value))
            return false;
    for (int r = 0; r < a->n; r++)
        if (a->res[r] != b->res[r] || a->free[r] != b->free[r])
            return false;
    return true;
}

void eng_set_nodes(struct eng *e, const struct eng_node *nodes, size_t n)
{
    struct eng__tnode *nn = xcalloc(n + 1, sizeof(*nn));
    for (size_t i = 0; i < n; i++) {
        struct eng__tnode *t = &nn[i];
        t->name = xstrdup(nodes[i].name ? nodes[i].name : "");
        if (nodes[i].labels)
            eng__labels_copy(&t->labels, nodes[i].labels);
        size_t nr = nodes[i].free ? nodes[i].free->n : 0;
        t->res = xcalloc(nr + 1, sizeof(*t->res));
        t->free = xcalloc(nr + 1, sizeof(*t->free));
        for (size_t r = 0; r < nr; r++) {
            t->res[t->n] = eng__res_id(e, nodes[i].free->items[r].name);
            t->free[t->n++] = nodes[i].free->items[r].value;
        }
    }
    if (n > 1)
        qsort(nn, n, sizeof(*nn), tnode_cmp);
    bool same = n == e->n_tnodes;
    for (size_t i = 0; i < n && same; i++)
        same = tnode_same(&nn[i], &e->tnodes[i]);
    if (same) {
        for (size_t i = 0; i < n; i++)
            tnode_clear(&nn[i]);
        xfree(nn);
        return;
    }
    for (size_t i = 0; i < e->n_tnodes; i++)
        tnode_clear(&e->tnodes[i]);
    xfree(e->tnodes);
    e->tnodes = nn;
    e->n_tnodes = n;
    if (e->n_topos)
        requeue_all(e);
}

void eng__tas_clone(struct eng *dst, const struct eng *src)
{
    for (int i = 0; i < src->n_topos; i++)
        eng_upsert_topology(dst, src->topos[i].name, (const char *const *)src->topos[i].levels,
                            (size_t)src->topos[i].n_levels);
    struct eng_node *nodes = xcalloc(src->n_tnodes + 1, sizeof(*nodes));
    struct api_reslist *free = xcalloc(src->n_tnodes + 1, sizeof(*free));
    for (size_t i = 0; i < src->n_tnodes; i++) {
        const struct eng__tnode *t = &src->tnodes[i];
        free[i].items = xcalloc((size_t)t->n + 1, sizeof(*free[i].items));
        for (int r = 0; r < t->n; r++)
            free[i].items[free[i].n++] = (struct api_res){src->res_names[t->res[r]], t->free[r]};
        nodes[i] = (struct eng_node){t->name, &t->labels, &free[i]};
    }
    eng_set_nodes(dst, nodes, src->n_tnodes);
    for (size_t i = 0; i < src->n_tnodes; i++)
        xfree(free[i].items);
    xfree(free);
    xfree(nodes);
}

void eng__tas_free(struct eng *e)
{
    for (int i = 0; i < e->n_topos; i++)
        topo_clear(&e->topos[i]);
    xfree(e->topos);
    for (size_t i = 0; i < e->n_tnodes; i++)
        tnode_clear(&e->tnodes[i]);
    xfree(e->tnodes);
    e->topos = NULL;
    e->tnodes = NULL;
    e->n_topos = 0;
    e->n_tnodes = 0;
}

/* ---- the snapshot of one flavor for one pod set ---- */

/* A domain: the level values of its first leaf up to its level. */
struct dom {
    int level;
    int leaf;       /* a leaf of it (its values prefix this domain's) */
    int64_t state;  /* pods that fit, then pods assigned */
    int first_kid, n_kids; /* children: consecutive domains of level + 1 */
};

struct snap {
    const struct eng__topology *t;
    int n_res;             /* requested resources, plus "pods" when known */
    int res[66];
    int64_t per_pod[66];
    int n_leaves;
    char ***leaf_vals;     /* per leaf: n_levels values (borrowed) */
    int64_t *leaf_free;    /* [leaf * n_res + r] */
    struct dom *doms;      /* by level, then by values */
    int n_doms;
    int *level_first, *level_n;
};

static const char *node_label(const struct eng__tnode *n, const char *key)
{
    return api_labels_get(&n->labels, key);
}

static bool node_eligible(const struct eng__tnode *n, const struct eng__flavor *f,
                          const struct eng__shape *shape, const struct eng__topology *t)
{
    for (size_t i = 0; i < f->labels.n; i++) {
        const char *v = node_label(n, f->labels.items[i].key);
        if (!v || strcmp(v, f->labels.items[i].value))
            return false;
    }
    for (size_t i = 0; i < shape->node_selector.n; i++) {
        const char *v = node_label(n, shape->node_selector.items[i].key);
        if (!v || strcmp(v, shape->node_selector.items[i].value))
            return false;
    }
    for (int l = 0; l < t->n_levels; l++)
        if (!node_label(n, t->levels[l]))
            return false;
    return true;
}

/* Compare the first upto+1 level values of leaves a and b. */
static int vals_cmp(const struct snap *s, int a, int b, int upto)
{
    for (int l = 0; l <= upto; l++) {
        int c = strcmp(s->leaf_vals[a][l], s->leaf_vals[b][l]);
        if (c)
            return c;
    }
    return 0;
}

static int res_slot(const struct snap *s, int res)
{
    for (int r = 0; r < s->n_res; r++)
        if (s->res[r] == res)
            return r;
    return -1;
}

/* The leaf whose values match domain values vals of the assignment's
 * levels, or -1. */
static int leaf_of(const struct snap *s, const struct api_topology_assignment *ta, char **vals)
{
    int idx[16];
    if (ta->n_levels > 16)
        return -1;
    for (size_t l = 0; l < ta->n_levels; l++) {
        idx[l] = -1;
        for (int k = 0; k < s->t->n_levels; k++)
            if (!strcmp(s->t->levels[k], ta->levels[l]))
                idx[l] = k;
        if (idx[l] < 0)
            return -1;
    }
    for (int leaf = 0; leaf < s->n_leaves; leaf++) {
        bool ok = true;
        for (size_t l = 0; l < ta->n_levels && ok; l++)
            ok = !strcmp(s->leaf_vals[leaf][idx[l]], vals[l]);
        if (ok)
            return leaf;
    }
    return -1;
}

/* Subtract what assignment ta of a pod set with per-pod requests (res,
 * per_pod, n) took from the leaves. */
static void take_usage(struct snap *s, const struct api_topology_assignment *ta, const int *res,
                       const int64_t *per_pod, int n, int pods_res)
{
    for (size_t d = 0; d < ta->n_domains; d++) {
        int leaf = leaf_of(s, ta, ta->domains[d].values);
        if (leaf < 0)
            continue;
        int64_t cnt = ta->domains[d].count;
        for (int r = 0; r < n; r++) {
            int k = res_slot(s, res[r]);
            if (k >= 0)
                s->leaf_free[leaf * s->n_res + k] -= eng__amt_mul(per_pod[r], cnt);
        }
        int k = res_slot(s, pods_res);
        if (k >= 0)
            s->leaf_free[leaf * s->n_res + k] -= cnt;
    }
}

static const struct eng__ps *ps_named(const struct eng__wl *wl, const char *name)
{
    for (int i = 0; i < wl->n_ps; i++)
        if (!strcmp(wl->ps[i].name, name))
            return &wl->ps[i];
    return NULL;
}

static int pa_flavor(const struct eng__pa *pa)
{
    for (int r = 0; r < pa->n; r++)
        if (pa->flv[r] >= 0)
            return pa->flv[r];
    return -1;
}

/* Usage of the quota holders placed on topology t (other than wl). */
static void take_holders(struct eng *e, struct snap *s, const struct eng__wl *wl, int pods_res)
{
    for (size_t c = 0; c < e->n_cq_sorted; c++)
        for (const struct eng__wl *h = e->cq_sorted[c]->holders; h; h = h->hnext) {
            if (h == wl || h->finished)
                continue;
            for (int p = 0; p < h->n_pa; p++) {
                const struct eng__pa *pa = &h->pa[p];
                int f = pa_flavor(pa);
                const struct eng__ps *ps = ps_named(h, pa->name);
                if (!pa->ta || f < 0 || !ps || !e->flavors[f].topology ||
                    strcmp(e->flavors[f].topology, s->t->name))
                    continue;
                take_usage(s, pa->ta, ps->res, ps->per_pod, ps->n_req, pods_res);
            }
        }
}

static void snap_free(struct snap *s)
{
    xfree(s->leaf_vals);
    xfree(s->leaf_free);
    xfree(s->doms);
    xfree(s->level_first);
    xfree(s->level_n);
}

static int leaf_sort_cmp(const void *a, const void *b, void *ctx)
{
    const struct snap *s = ctx;
    return vals_cmp(s, *(const int *)a, *(const int *)b, s->t->n_levels - 1);
}

/* Build leaves (sorted by values) and the domains of every level. */
static void snap_build(struct eng *e, struct snap *s, int flv, const struct eng__ps *ps,
                       const struct eng__wl *wl, const struct eng__asg *a, int upto_ps)
{
    const struct eng__flavor *f = &e->flavors[flv];
    const struct eng__topology *t = s->t;
    int pods_res = eng__res_find(e, "pods");
    s->n_res = 0;
    for (int r = 0; r < ps->n_req && s->n_res < 64; r++) {
        if (ps->res[r] == pods_res)
            continue;
        s->res[s->n_res] = ps->res[r];
        s->per_pod[s->n_res++] = ps->per_pod[r];
    }
    if (pods_res >= 0) {
        s->res[s->n_res] = pods_res;
        s->per_pod[s->n_res++] = 1;
    }
    /* leaves: eligible nodes grouped by their level values */
    int *order = xcalloc(e->n_tnodes + 1, sizeof(int));
    char ***vals = xcalloc(e->n_tnodes + 1, sizeof(char **));
    int n_el = 0;
    for (size_t i = 0; i < e->n_tnodes; i++)
        if (node_eligible(&e->tnodes[i], f, ps->shape, t))
            order[n_el++] = (int)i;
    char **flat = xcalloc((size_t)n_el * (size_t)t->n_levels + 1, sizeof(char *));
    for (int i = 0; i < n_el; i++) {
        vals[i] = flat + (size_t)i * (size_t)t->n_levels;
        for (int l = 0; l < t->n_levels; l++)
            vals[i][l] = (char *)node_label(&e->tnodes[order[i]], t->levels[l]);
    }
    s->leaf_vals = vals;
    s->n_leaves = n_el;
    int *idx = xcalloc((size_t)n_el + 1, sizeof(int));
    for (int i = 0; i < n_el; i++)
        idx[i] = i;
    qsort_r(idx, (size_t)n_el, sizeof(int), leaf_sort_cmp, s);
    /* merge equal leaves, summing capacity */
    char ***lv = xcalloc((size_t)n_el + 1, sizeof(char **));
    int64_t *lf = xcalloc((size_t)(n_el + 1) * (size_t)s->n_res, sizeof(int64_t));
    int nl = 0;
    for (int k = 0; k < n_el; k++) {
        int i = idx[k];
        if (!nl || vals_cmp(&(struct snap){.t = t, .leaf_vals = vals}, i, idx[k - 1],
                            t->n_levels - 1)) {
            lv[nl++] = vals[i];
        }
        const struct eng__tnode *n = &e->tnodes[order[i]];
        for (int r = 0; r < s->n_res; r++) {
            /* a node that does not report "pods" does not limit them */
            int64_t v = s->res[r] == pods_res ? INT32_MAX : 0;
            for (int q = 0; q < n->n; q++)
                if (n->res[q] == s->res[r])
                    v = n->free[q];
            lf[(nl - 1) * s->n_res + r] = eng__amt_add(lf[(nl - 1) * s->n_res + r], v);
        }
    }
    /* lv keeps pointers into flat (owned via vals[0] block): keep both */
    s->leaf_vals = lv;
    s->n_leaves = nl;
    s->leaf_free = lf;
    take_holders(e, s, wl, pods_res);
    for (int j = 0; j < upto_ps; j++)
        if (a->ps[j].ta)
            take_usage(s, a->ps[j].ta, wl->ps[j].res, wl->ps[j].per_pod, wl->ps[j].n_req,
                       pods_res);
    /* domains per level: leaves are sorted, so a level's domains are runs */
    s->level_first = xcalloc((size_t)t->n_levels + 1, sizeof(int));
    s->level_n = xcalloc((size_t)t->n_levels + 1, sizeof(int));
    s->doms = xcalloc((size_t)(nl + 1) * (size_t)t->n_levels, sizeof(*s->doms));
    for (int l = 0; l < t->n_levels; l++) {
        s->level_first[l] = s->n_doms;
        for (int leaf = 0; leaf < nl; leaf++)
            if (!leaf || vals_cmp(s, leaf, leaf - 1, l))
                s->doms[s->n_doms++] = (struct dom){l, leaf, 0, 0, 0};
        s->level_n[l] = s->n_doms - s->level_first[l];
    }
    /* states: leaves, then sums upwards; children links */
    int last = t->n_levels - 1;
    for (int d = 0; d < s->level_n[last]; d++) {
        struct dom *x = &s->doms[s->level_first[last] + d];
        int64_t fit = INT32_MAX;
        for (int r = 0; r < s->n_res; r++) {
            if (s->per_pod[r] <= 0)
                continue;
            int64_t free = lf[x->leaf * s->n_res + r];
            int64_t k = free > 0 ? free / s->per_pod[r] : 0;
            if (k < fit)
                fit = k;
        }
        x->state = fit;
    }
    for (int l = last - 1; l >= 0; l--) {
        int kid = s->level_first[l + 1], kend = kid + s->level_n[l + 1];
        for (int d = 0; d < s->level_n[l]; d++) {
            struct dom *x = &s->doms[s->level_first[l] + d];
            x->first_kid = kid;
            while (kid < kend && !vals_cmp(s, s->doms[kid].leaf, x->leaf, l)) {
                x->state = eng__amt_add(x->state, s->doms[kid].state);
                x->n_kids++;
                kid++;
            }
        }
    }
    xfree(idx);
    xfree(order);
    s->leaf_vals = lv;
    /* flat is freed with vals; lv points into it, so keep it alive through
     * vals[0]: stash flat in the last slot of lv */
    lv[nl] = flat;
    xfree(vals);
}

static void snap_release(struct snap *s)
{
    if (s->leaf_vals)
        xfree(s->leaf_vals[s->n_leaves]); /* flat */
    snap_free(s);
}

/* Domain pointers sorted by state (desc when desc) then values. */
struct dsort {
    const struct snap *s;
    bool desc;
};

static int dom_cmp(const void *a, const void *b, void *ctx)
{
    const struct dsort *c = ctx;
    const struct dom *x = *(struct dom *const *)a, *y = *(struct dom *const *)b;
    if (x->state != y->state)
        return (x->state > y->state) == c->desc ? -1 : 1;
    return vals_cmp(c->s, x->leaf, y->leaf, x->level);
}

static void sort_doms(const struct snap *s, struct dom **v, int n, bool desc)
{
    struct dsort c = {s, desc};
    if (n > 1)
        qsort_r(v, (size_t)n, sizeof(*v), dom_cmp, &c);
}

/* The fitting domain with the fewest pods that fit (BestFit) among v
 * (sorted by decreasing state), or -1. */
static int best_fit(struct dom **v, int n, int64_t count)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (v[i]->state >= count)
            best = i; /* later = smaller (or equal with larger values) */
    if (best < 0)
        return -1;
    /* among equal states keep the first by values */
    while (best > 0 && v[best - 1]->state == v[best]->state)
        best--;
    return best;
}

/* Greedy over v (sorted by decreasing state): the domains taken, with the
 * last one replaced by the best fit for what remains; counts in state.
 * Returns how many went to out. */
static int take_min(struct dom **v, int n, int64_t count, struct dom **out)
{
    int k = 0;
    int64_t rem = count;
    for (int i = 0; i < n && rem > 0; i++) {
        if (v[i]->state >= rem) {
            int b = i + best_fit(v + i, n - i, rem);
            v[b]->state = rem;
            out[k++] = v[b];
            return k;
        }
        if (v[i]->state <= 0)
            break;
        rem -= v[i]->state;
        out[k++] = v[i];
    }
    return k;
}

static char *not_fit(const struct snap *s, int64_t fit, int64_t count)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    if (fit <= 0)
        sbuf_addf(&sb, "topology \"%s\" doesn't allow to fit any of %lld pod(s)", s->t->name,
                  (long long)count);
    else
        sbuf_addf(&sb, "topology \"%s\" allows to fit only %lld out of %lld pod(s)", s->t->name,
                  (long long)fit, (long long)count);
    return eng__sbuf_take(&sb);
}

static int dom_out_cmp(const void *a, const void *b, void *ctx)
{
    const struct snap *s = ctx;
    const struct dom *x = *(struct dom *const *)a, *y = *(struct dom *const *)b;
    return vals_cmp(s, x->leaf, y->leaf, x->level);
}

static struct api_topology_assignment *build_assignment(const struct snap *s, struct dom **v, int n)
{
    const struct eng__topology *t = s->t;
    int from = !strcmp(t->levels[t->n_levels - 1], HOSTNAME_LABEL) ? t->n_levels - 1 : 0;
    struct api_topology_assignment *ta = xcalloc(1, sizeof(*ta));
    ta->n_levels = (size_t)(t->n_levels - from);
    ta->levels = xcalloc(ta->n_levels + 1, sizeof(char *));
    for (size_t l = 0; l < ta->n_levels; l++)
        ta->levels[l] = xstrdup(t->levels[from + (int)l]);
    if (n > 1)
        qsort_r(v, (size_t)n, sizeof(*v), dom_out_cmp, (void *)s);
    ta->domains = xcalloc((size_t)n + 1, sizeof(*ta->domains));
    for (int i = 0; i < n; i++) {
        if (v[i]->state <= 0)
            continue;
        struct api_topology_domain *d = &ta->domains[ta->n_domains++];
        d->count = (int32_t)v[i]->state;
        d->values = xcalloc(ta->n_levels + 1, sizeof(char *));
        for (size_t l = 0; l < ta->n_levels; l++)
            d->values[l] = xstrdup(s->leaf_vals[v[i]->leaf][from + (int)l]);
    }
    return ta;
}

/* Kueue TAS pod set slices: count in slices of `size` pods from the slice
 * level sl up (a domain of sl holds its pods / size slices, a higher one
 * the sum of its children's). */
static void to_slices(struct snap *s, int sl, int64_t size)
{
    for (int d = 0; d < s->level_n[sl]; d++)
        s->doms[s->level_first[sl] + d].state /= size;
    for (int l = sl - 1; l >= 0; l--)
        for (int d = 0; d < s->level_n[l]; d++) {
            struct dom *x = &s->doms[s->level_first[l] + d];
            x->state = 0;
            for (int k = 0; k < x->n_kids; k++)
                x->state += s->doms[x->first_kid + k].state;
        }
}

/* Place count pods (in slices of `unit` pods from level sl up, sl -1: no
 * slices): the assignment, or NULL with *msg (caller frees). */
static struct api_topology_assignment *place(struct snap *s, int mode, int level, int64_t count,
                                             int sl, int64_t unit, char **msg)
{
    const struct eng__topology *t = s->t;
    int last = t->n_levels - 1;
    struct dom **v = xcalloc((size_t)s->n_doms + 1, sizeof(*v));
    struct dom **cur = xcalloc((size_t)s->n_doms + 1, sizeof(*cur));
    int n_cur = 0, at = -1;
    struct api_topology_assignment *ta = NULL;
    *msg = NULL;
    if (sl < 0)
        unit = 1;
    else
        to_slices(s, sl, unit);
    int64_t want = count / unit;
    if (!s->level_n[0]) {
        *msg = not_fit(s, 0, count);
        goto out;
    }
    if (mode == TOPO_UNCONSTRAINED) {
        int n = s->level_n[last];
        for (int i = 0; i < n; i++)
            v[i] = &s->doms[s->level_first[last] + i];
        sort_doms(s, v, n, false);
        int64_t rem = count;
        for (int i = 0; i < n && rem > 0; i++) {
            if (v[i]->state <= 0)
                continue;
            if (v[i]->state > rem)
                v[i]->state = rem;
            rem -= v[i]->state;
            cur[n_cur++] = v[i];
        }
        if (rem > 0)
            *msg = not_fit(s, count - rem, count);
        else
            ta = build_assignment(s, cur, n_cur);
        goto out;
    }
    for (int l = level; l >= 0 && at < 0; l--) {
        int n = s->level_n[l];
        for (int i = 0; i < n; i++)
            v[i] = &s->doms[s->level_first[l] + i];
        sort_doms(s, v, n, true);
        int b = best_fit(v, n, want);
        if (b >= 0) {
            cur[n_cur++] = v[b];
            at = l;
        } else if (mode == TOPO_REQUIRED) {
            *msg = not_fit(s, v[0]->state * unit, count);
            goto out;
        } else if (l == 0) {
            n_cur = take_min(v, n, want, cur);
            int64_t got = 0;
            for (int i = 0; i < n_cur; i++)
                got += cur[i]->state;
            if (got < want) {
                *msg = not_fit(s, got * unit, count);
                goto out;
            }
            at = 0;
        }
    }
    if (n_cur == 1)
        cur[0]->state = want;
    for (int l = at;; l++) {
        if (l == sl) /* slices become pods from here down */
            for (int i = 0; i < n_cur; i++)
                cur[i]->state *= unit;
        if (l >= last)
            break;
        /* each chosen domain spreads its own count over its children */
        struct dom **next = xcalloc((size_t)s->n_doms + 1, sizeof(*next));
        int n_next = 0;
        for (int i = 0; i < n_cur; i++) {
            int n = cur[i]->n_kids;
            for (int k = 0; k < n; k++)
                v[k] = &s->doms[cur[i]->first_kid + k];
            sort_doms(s, v, n, true);
            n_next += take_min(v, n, cur[i]->state, next + n_next);
        }
        memcpy(cur, next, sizeof(*cur) * (size_t)n_next);
        n_cur = n_next;
        xfree(next);
    }
    ta = build_assignment(s, cur, n_cur);
out:
    xfree(v);
    xfree(cur);
    return ta;
}

static int level_of(const struct eng__topology *t, const char *key)
{
    for (int l = 0; l < t->n_levels; l++)
        if (!strcmp(t->levels[l], key))
            return l;
    return -1;
}

static bool cq_tas_only(const struct eng *e, const struct eng__cq *cq)
{
    bool any = false;
    for (int g = 0; g < cq->n_rgs; g++)
        for (int f = 0; f < cq->rgs[g].n_flv; f++) {
            if (!e->flavors[cq->rgs[g].flv[f]].topology)
                return false;
            any = true;
        }
    return any;
}

static void fail(struct eng__psa *psa, char *msg)
{
    eng__strv_clear(&psa->reasons);
    eng__strv_push(&psa->reasons, msg);
    psa->nofit = ENG__NF_TOPOLOGY;
    for (int k = 0; k < psa->n_ra; k++)
        psa->ra[k].flv = psa->ra[k].fr = -1;
}

void eng__tas_assign(struct eng *e, const struct eng__cq *cq, const struct eng__wl *wl,
                     struct eng__asg *a)
{
    for (int i = 0; i < a->n_ps && i < wl->n_ps; i++) {
        struct eng__psa *psa = &a->ps[i];
        const struct eng__ps *ps = &wl->ps[i];
        int flv = -1;
        for (int k = 0; k < psa->n_ra && flv < 0; k++)
            flv = psa->ra[k].flv;
        if (flv < 0 || !e->flavors[flv].topology || psa->count <= 0)
            continue;
        int mode = ps->topo_mode;
        if (mode == TOPO_NONE) {
            if (!ps->slice_level && !cq_tas_only(e, cq))
                continue;
            mode = TOPO_UNCONSTRAINED;
        }
        struct snap s = {0};
        s.t = topo_find(e, e->flavors[flv].topology);
        if (!s.t || !s.t->n_levels) {
            fail(psa, xasprintf("topology \"%s\" not found", e->flavors[flv].topology));
            continue;
        }
        int level = s.t->n_levels - 1, sl = -1;
        if (ps->slice_level) {
            /* slices: required or preferred at the request's level (the
             * top level when there is none) */
            if (mode == TOPO_UNCONSTRAINED)
                mode = TOPO_PREFERRED;
            sl = level_of(s.t, ps->slice_level);
            char *err = NULL;
            if (sl < 0)
                err = xasprintf("no requested topology level for slices: %s", ps->slice_level);
            else if (ps->slice_size < 1)
                err = xasprintf("pod set slice size must be at least 1 (kueue.x-k8s.io/podset-slice-size)");
            else if (psa->count % ps->slice_size)
                err = xasprintf("pod set count %d is not a multiple of the slice size %d",
                                psa->count, ps->slice_size);
            if (err) {
                fail(psa, err);
                continue;
            }
        }
        if (mode != TOPO_UNCONSTRAINED) {
            level = ps->topo_level ? level_of(s.t, ps->topo_level) : 0;
            if (level < 0) {
                fail(psa, xasprintf("no requested topology level: %s", ps->topo_level));
                continue;
            }
            if (sl >= 0 && sl < level) {
                fail(psa, xasprintf("slice topology level %s is above the pod set's level %s",
                                    ps->slice_level, ps->topo_level));
                continue;
            }
        }
        snap_build(e, &s, flv, ps, wl, a, i);
        char *msg = NULL;
        struct api_topology_assignment *ta = place(&s, mode, level, psa->count, sl,
                                                   ps->slice_size, &msg);
        snap_release(&s);
        if (!ta) {
            fail(psa, msg);
            continue;
        }
        api_topology_assignment_free(psa->ta);
        psa->ta = ta;
    }
}
