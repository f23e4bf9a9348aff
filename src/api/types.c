/*
 * types: release functions and the sorted-map helpers of the typed views
 * (see types.h). Every _release frees what the struct owns and zeroes it,
 * so releasing twice or releasing a zeroed struct is harmless.
 */
#include "api/types.h"

#include <string.h>

#include "util/xalloc.h"

void api_labels_release(struct api_labels *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++) {
        xfree(l->items[i].key);
        xfree(l->items[i].value);
    }
    xfree(l->items);
    memset(l, 0, sizeof(*l));
}

void api_reslist_release(struct api_reslist *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++)
        xfree(r->items[i].name);
    xfree(r->items);
    memset(r, 0, sizeof(*r));
}

void api_taint_release(struct api_taint *t)
{
    if (!t)
        return;
    xfree(t->key);
    xfree(t->value);
    xfree(t->effect);
    memset(t, 0, sizeof(*t));
}

void api_toleration_release(struct api_toleration *t)
{
    if (!t)
        return;
    xfree(t->key);
    xfree(t->op);
    xfree(t->value);
    xfree(t->effect);
    memset(t, 0, sizeof(*t));
}

void api_sel_req_release(struct api_sel_req *r)
{
    if (!r)
        return;
    xfree(r->key);
    for (size_t i = 0; i < r->n_values; i++)
        xfree(r->values[i]);
    xfree(r->values);
    memset(r, 0, sizeof(*r));
}

static void sel_reqs_release(struct api_sel_req *reqs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        api_sel_req_release(&reqs[i]);
    xfree(reqs);
}

void api_label_selector_release(struct api_label_selector *s)
{
    if (!s)
        return;
    api_labels_release(&s->match_labels);
    sel_reqs_release(s->exprs, s->n_exprs);
    memset(s, 0, sizeof(*s));
}

void api_node_term_release(struct api_node_term *t)
{
    if (!t)
        return;
    sel_reqs_release(t->exprs, t->n_exprs);
    memset(t, 0, sizeof(*t));
}

void api_podset_release(struct api_podset *p)
{
    if (!p)
        return;
    xfree(p->name);
    api_reslist_release(&p->requests);
    api_labels_release(&p->node_selector);
    for (size_t i = 0; i < p->n_affinity_terms; i++)
        api_node_term_release(&p->affinity_terms[i]);
    xfree(p->affinity_terms);
    for (size_t i = 0; i < p->n_tolerations; i++)
        api_toleration_release(&p->tolerations[i]);
    xfree(p->tolerations);
    xfree(p->topology_level);
    xfree(p->slice_level);
    memset(p, 0, sizeof(*p));
}

void api_resource_flavor_release(struct api_resource_flavor *rf)
{
    if (!rf)
        return;
    xfree(rf->name);
    api_labels_release(&rf->node_labels);
    for (size_t i = 0; i < rf->n_node_taints; i++)
        api_taint_release(&rf->node_taints[i]);
    xfree(rf->node_taints);
    for (size_t i = 0; i < rf->n_tolerations; i++)
        api_toleration_release(&rf->tolerations[i]);
    xfree(rf->tolerations);
    xfree(rf->topology_name);
    memset(rf, 0, sizeof(*rf));
}

static void flavor_quotas_release(struct api_flavor_quotas *f)
{
    xfree(f->name);
    for (size_t i = 0; i < f->n_resources; i++)
        xfree(f->resources[i].name);
    xfree(f->resources);
}

void api_resource_group_release(struct api_resource_group *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n_covered; i++)
        xfree(g->covered[i]);
    xfree(g->covered);
    for (size_t i = 0; i < g->n_flavors; i++)
        flavor_quotas_release(&g->flavors[i]);
    xfree(g->flavors);
    memset(g, 0, sizeof(*g));
}

static void groups_release(struct api_resource_group *g, size_t n)
{
    for (size_t i = 0; i < n; i++)
        api_resource_group_release(&g[i]);
    xfree(g);
}

void api_cluster_queue_release(struct api_cluster_queue *cq)
{
    if (!cq)
        return;
    xfree(cq->name);
    xfree(cq->cohort);
    groups_release(cq->groups, cq->n_groups);
    api_label_selector_release(&cq->namespace_selector);
    for (size_t i = 0; i < cq->n_checks; i++) {
        xfree(cq->checks[i].name);
        for (size_t j = 0; j < cq->checks[i].n_on_flavors; j++)
            xfree(cq->checks[i].on_flavors[j]);
        xfree(cq->checks[i].on_flavors);
    }
    xfree(cq->checks);
    memset(cq, 0, sizeof(*cq));
}

void api_cohort_release(struct api_cohort *c)
{
    if (!c)
        return;
    xfree(c->name);
    xfree(c->parent);
    groups_release(c->groups, c->n_groups);
    memset(c, 0, sizeof(*c));
}

void api_local_queue_release(struct api_local_queue *lq)
{
    if (!lq)
        return;
    xfree(lq->ns);
    xfree(lq->name);
    xfree(lq->cluster_queue);
    memset(lq, 0, sizeof(*lq));
}

void api_priority_class_release(struct api_priority_class *pc)
{
    if (!pc)
        return;
    xfree(pc->name);
    memset(pc, 0, sizeof(*pc));
}

void api_podset_assignment_release(struct api_podset_assignment *a)
{
    if (!a)
        return;
    xfree(a->name);
    api_labels_release(&a->flavors);
    api_reslist_release(&a->resource_usage);
    api_topology_assignment_free(a->topology);
    memset(a, 0, sizeof(*a));
}

void api_topology_assignment_free(struct api_topology_assignment *t)
{
    if (!t)
        return;
    for (size_t d = 0; d < t->n_domains; d++) {
        for (size_t l = 0; l < t->n_levels; l++)
            xfree(t->domains[d].values[l]);
        xfree(t->domains[d].values);
    }
    xfree(t->domains);
    for (size_t l = 0; l < t->n_levels; l++)
        xfree(t->levels[l]);
    xfree(t->levels);
    xfree(t);
}

struct api_topology_assignment *api_topology_assignment_dup(const struct api_topology_assignment *t)
{
    if (!t)
        return NULL;
    struct api_topology_assignment *o = xcalloc(1, sizeof(*o));
    o->n_levels = t->n_levels;
    o->levels = xcalloc(t->n_levels + 1, sizeof(*o->levels));
    for (size_t l = 0; l < t->n_levels; l++)
        o->levels[l] = xstrdup(t->levels[l]);
    o->n_domains = t->n_domains;
    o->domains = xcalloc(t->n_domains + 1, sizeof(*o->domains));
    for (size_t d = 0; d < t->n_domains; d++) {
        o->domains[d].count = t->domains[d].count;
        o->domains[d].values = xcalloc(t->n_levels + 1, sizeof(char *));
        for (size_t l = 0; l < t->n_levels; l++)
            o->domains[d].values[l] = xstrdup(t->domains[d].values[l]);
    }
    return o;
}

bool api_topology_assignment_equal(const struct api_topology_assignment *a,
                                   const struct api_topology_assignment *b)
{
    if (!a || !b)
        return a == b;
    if (a->n_levels != b->n_levels || a->n_domains != b->n_domains)
        return false;
    for (size_t l = 0; l < a->n_levels; l++)
        if (strcmp(a->levels[l], b->levels[l]))
            return false;
    for (size_t d = 0; d < a->n_domains; d++) {
        if (a->domains[d].count != b->domains[d].count)
            return false;
        for (size_t l = 0; l < a->n_levels; l++)
            if (strcmp(a->domains[d].values[l], b->domains[d].values[l]))
                return false;
    }
    return true;
}

static void assignments_release(struct api_podset_assignment *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        api_podset_assignment_release(&a[i]);
    xfree(a);
}

void api_admission_release(struct api_admission *a)
{
    if (!a)
        return;
    xfree(a->cluster_queue);
    assignments_release(a->podsets, a->n_podsets);
    memset(a, 0, sizeof(*a));
}

void api_workload_release(struct api_workload *wl)
{
    if (!wl)
        return;
    xfree(wl->ns);
    xfree(wl->name);
    xfree(wl->uid);
    xfree(wl->queue_name);
    xfree(wl->priority_class);
    for (size_t i = 0; i < wl->n_podsets; i++)
        api_podset_release(&wl->podsets[i]);
    xfree(wl->podsets);
    api_admission_release(&wl->admission);
    xfree(wl->evicted_reason);
    assignments_release(wl->reclaimable, wl->n_reclaimable);
    xfree(wl->replacement_for);
    xfree(wl->admission_gated_by);
    xfree(wl->job_uid);
    for (size_t i = 0; i < wl->n_avoid_flavors; i++)
        xfree(wl->avoid_flavors[i].flavor);
    xfree(wl->avoid_flavors);
    memset(wl, 0, sizeof(*wl));
}

/* Binary search over an array of structs whose first member is the
 * (char *) key: index of key, or the insertion point with *found false.
 * Used for api_kv (key) and api_res (name). */
static size_t sorted_find(const void *base, size_t n, size_t stride, const char *key,
                          bool *found)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *k = *(char *const *)((const char *)base + mid * stride);
        int c = strcmp(k, key);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static bool str_same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static bool assignment_equal(const struct api_podset_assignment *a,
                             const struct api_podset_assignment *b)
{
    if (!str_same(a->name, b->name) || a->count != b->count || a->flavors.n != b->flavors.n ||
        a->resource_usage.n != b->resource_usage.n)
        return false;
    for (size_t j = 0; j < a->flavors.n; j++)
        if (!str_same(a->flavors.items[j].key, b->flavors.items[j].key) ||
            !str_same(a->flavors.items[j].value, b->flavors.items[j].value))
            return false;
    for (size_t j = 0; j < a->resource_usage.n; j++)
        if (!str_same(a->resource_usage.items[j].name, b->resource_usage.items[j].name) ||
            a->resource_usage.items[j].value != b->resource_usage.items[j].value)
            return false;
    return api_topology_assignment_equal(a->topology, b->topology);
}

bool api_admission_equal(const struct api_admission *a, const struct api_admission *b)
{
    if (!str_same(a->cluster_queue, b->cluster_queue) || a->n_podsets != b->n_podsets)
        return false;
    for (size_t i = 0; i < a->n_podsets; i++)
        if (!assignment_equal(&a->podsets[i], &b->podsets[i]))
            return false;
    return true;
}

static bool labels_equal(const struct api_labels *a, const struct api_labels *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (!str_same(a->items[i].key, b->items[i].key) ||
            !str_same(a->items[i].value, b->items[i].value))
            return false;
    return true;
}

static bool reslist_equal(const struct api_reslist *a, const struct api_reslist *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (!str_same(a->items[i].name, b->items[i].name) || a->items[i].value != b->items[i].value)
            return false;
    return true;
}

static bool sel_reqs_equal(const struct api_sel_req *a, size_t na, const struct api_sel_req *b,
                           size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        if (!str_same(a[i].key, b[i].key) || a[i].op != b[i].op ||
            a[i].n_values != b[i].n_values)
            return false;
        for (size_t j = 0; j < a[i].n_values; j++)
            if (!str_same(a[i].values[j], b[i].values[j]))
                return false;
    }
    return true;
}

static bool podset_equal(const struct api_podset *a, const struct api_podset *b)
{
    if (!str_same(a->name, b->name) || a->count != b->count || a->min_count != b->min_count ||
        !reslist_equal(&a->requests, &b->requests) ||
        !labels_equal(&a->node_selector, &b->node_selector) ||
        a->n_affinity_terms != b->n_affinity_terms || a->n_tolerations != b->n_tolerations)
        return false;
    for (size_t i = 0; i < a->n_affinity_terms; i++)
        if (!sel_reqs_equal(a->affinity_terms[i].exprs, a->affinity_terms[i].n_exprs,
                            b->affinity_terms[i].exprs, b->affinity_terms[i].n_exprs))
            return false;
    for (size_t i = 0; i < a->n_tolerations; i++) {
        const struct api_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
        if (!str_same(x->key, y->key) || !str_same(x->op, y->op) ||
            !str_same(x->value, y->value) || !str_same(x->effect, y->effect) ||
            x->has_seconds != y->has_seconds || (x->has_seconds && x->seconds != y->seconds))
            return false;
    }
    return true;
}

bool api_workload_equal(const struct api_workload *a, const struct api_workload *b)
{
    if (!str_same(a->ns, b->ns) || !str_same(a->name, b->name) || !str_same(a->uid, b->uid) ||
        a->creation_ms != b->creation_ms || !str_same(a->queue_name, b->queue_name) ||
        a->priority != b->priority || !str_same(a->priority_class, b->priority_class) ||
        a->active != b->active || a->n_podsets != b->n_podsets)
        return false;
    for (size_t i = 0; i < a->n_podsets; i++)
        if (!podset_equal(&a->podsets[i], &b->podsets[i]))
            return false;
    if (a->has_admission != b->has_admission ||
        (a->has_admission && !api_admission_equal(&a->admission, &b->admission)))
        return false;
    if (a->quota_reserved != b->quota_reserved || a->admitted != b->admitted ||
        a->finished != b->finished || a->evicted != b->evicted ||
        a->evicted_ms != b->evicted_ms || !str_same(a->evicted_reason, b->evicted_reason) ||
        a->requeued_false != b->requeued_false || a->requeue_at_ms != b->requeue_at_ms ||
        a->requeue_count != b->requeue_count || a->quota_reserved_ms != b->quota_reserved_ms ||
        a->n_reclaimable != b->n_reclaimable || a->elastic != b->elastic ||
        !str_same(a->replacement_for, b->replacement_for) ||
        !str_same(a->admission_gated_by, b->admission_gated_by) ||
        !str_same(a->job_uid, b->job_uid) || a->n_avoid_flavors != b->n_avoid_flavors)
        return false;
    for (size_t i = 0; i < a->n_reclaimable; i++)
        if (!assignment_equal(&a->reclaimable[i], &b->reclaimable[i]))
            return false;
    for (size_t i = 0; i < a->n_avoid_flavors; i++)
        if (!str_same(a->avoid_flavors[i].flavor, b->avoid_flavors[i].flavor) ||
            a->avoid_flavors[i].until_ms != b->avoid_flavors[i].until_ms)
            return false;
    return true;
}

bool api_admission_is_canonical(const struct api_admission *a)
{
    if (!a->cluster_queue)
        return false;
    for (size_t i = 0; i < a->n_podsets; i++) {
        const struct api_podset_assignment *p = &a->podsets[i];
        if (!p->name)
            return false;
        for (size_t j = 0; j < p->flavors.n; j++) {
            const struct api_kv *kv = &p->flavors.items[j];
            if (!kv->key || !kv->value || (j > 0 && strcmp(p->flavors.items[j - 1].key, kv->key) >= 0))
                return false;
        }
        for (size_t j = 0; j < p->resource_usage.n; j++) {
            const char *name = p->resource_usage.items[j].name;
            if (!name || (j > 0 && strcmp(p->resource_usage.items[j - 1].name, name) >= 0))
                return false;
        }
    }
    return true;
}

static size_t labels_find(const struct api_labels *l, const char *key, bool *found)
{
    return sorted_find(l->items, l->n, sizeof(*l->items), key, found);
}

const char *api_labels_get(const struct api_labels *l, const char *key)
{
    if (!l || !key)
        return NULL;
    bool found;
    size_t i = labels_find(l, key, &found);
    return found ? l->items[i].value : NULL;
}

void api_labels_set(struct api_labels *l, const char *key, const char *value)
{
    bool found;
    size_t i = labels_find(l, key, &found);
    if (found) {
        xfree(l->items[i].value);
        l->items[i].value = xstrdup(value ? value : "");
        return;
    }
    l->items = xreallocarray(l->items, l->n + 1, sizeof(*l->items));
    memmove(&l->items[i + 1], &l->items[i], (l->n - i) * sizeof(*l->items));
    l->items[i].key = xstrdup(key);
    l->items[i].value = xstrdup(value ? value : "");
    l->n++;
}

static size_t reslist_find(const struct api_reslist *r, const char *name, bool *found)
{
    return sorted_find(r->items, r->n, sizeof(*r->items), name, found);
}

int64_t api_reslist_get(const struct api_reslist *r, const char *name)
{
    if (!r || !name)
        return 0;
    bool found;
    size_t i = reslist_find(r, name, &found);
    return found ? r->items[i].value : 0;
}

void api_reslist_set(struct api_reslist *r, const char *name, int64_t value)
{
    bool found;
    size_t i = reslist_find(r, name, &found);
    if (found) {
        r->items[i].value = value;
        return;
    }
    r->items = xreallocarray(r->items, r->n + 1, sizeof(*r->items));
    memmove(&r->items[i + 1], &r->items[i], (r->n - i) * sizeof(*r->items));
    r->items[i].name = xstrdup(name);
    r->items[i].value = value;
    r->n++;
}
