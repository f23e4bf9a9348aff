/*
 * test_engine_fixture: helpers shared by the engine's unit tests. They build
 * the api_* input structs from compact strings (every allocation is owned by
 * the fixture's arena and freed by fx_free), drive eng_schedule, play the
 * control plane's part (writing a reservation back, releasing an evicted
 * workload's quota) and look decisions up.
 *
 * Compact syntax:
 *   labels / selectors   "k=v,k2=v2"
 *   requests             "cpu=2500m,memory=4608Mi,google.com/tpu=4"
 *   ClusterQueue quotas  "flavor:res=nominal[/borrowingLimit[/lendingLimit]],...;flavor2:..."
 *                        resource groups separated by "|"; "-" = no limit
 */
#ifndef CUEUE_TEST_ENGINE_FIXTURE_H
#define CUEUE_TEST_ENGINE_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/quantity.h"
#include "api/types.h"
#include "engine/engine.h"
#include "util/err.h"
#include "util/xalloc.h"

struct fx {
    struct eng *e;
    struct eng_result res;
    void **mem;
    size_t n_mem, cap_mem;
    int64_t now_ms;
    struct api_workload **wls; /* every workload submitted */
    size_t n_wls, cap_wls;
    /* fx_apply_reserve, fx_finish, fx_release feed their status-only
     * changes through eng_upsert_workload_status */
    bool status_upserts;
    /* topology assignments fx_apply_reserve copied (freed by fx_free) */
    struct api_topology_assignment **tas;
    size_t n_tas, cap_tas;
};

/* Feed w after a change of its status fields only. */
static inline void fx_upsert_status(struct fx *f, struct api_workload *w)
{
    if (f->status_upserts)
        eng_upsert_workload_status(f->e, w);
    else
        eng_upsert_workload(f->e, w);
}

static inline void *fx_alloc(struct fx *f, size_t n)
{
    void *p = xcalloc(1, n ? n : 1);
    XGROW(f->mem, f->cap_mem, f->n_mem + 1);
    f->mem[f->n_mem++] = p;
    return p;
}

static inline char *fx_str(struct fx *f, const char *s)
{
    char *p = fx_alloc(f, strlen(s) + 1);
    memcpy(p, s, strlen(s) + 1);
    return p;
}

static inline struct fx *fx_new(const struct eng_config *cfg)
{
    struct fx *f = xcalloc(1, sizeof(*f));
    f->e = eng_new(cfg);
    f->now_ms = 1000000;
    return f;
}

static inline void fx_free(struct fx *f)
{
    eng_result_release(&f->res);
    eng_free(f->e);
    for (size_t i = 0; i < f->n_mem; i++)
        xfree(f->mem[i]);
    xfree(f->mem);
    xfree(f->wls);
    for (size_t i = 0; i < f->n_tas; i++)
        api_topology_assignment_free(f->tas[i]);
    xfree(f->tas);
    xfree(f);
}

/* Split s at sep into at most max fields (copies owned by the arena). */
static inline size_t fx_split(struct fx *f, const char *s, char sep, char **out, size_t max)
{
    size_t n = 0;
    while (s && *s && n < max) {
        const char *end = strchr(s, sep);
        size_t len = end ? (size_t)(end - s) : strlen(s);
        char *p = fx_alloc(f, len + 1);
        memcpy(p, s, len);
        out[n++] = p;
        s = end ? end + 1 : NULL;
    }
    return n;
}

static inline int64_t fx_qty(const char *text, const char *res)
{
    int64_t v = 0;
    char err[128];
    if (api_quantity_parse(text, res, &v, err, sizeof(err)) != 0)
        fail_msg("bad quantity %s for %s: %s", text, res, err);
    return v;
}

static inline int fx_kv_cmp(const void *a, const void *b)
{
    return strcmp(((const struct api_kv *)a)->key, ((const struct api_kv *)b)->key);
}

static inline struct api_labels fx_labels(struct fx *f, const char *s)
{
    struct api_labels l = {0};
    char *parts[32];
    size_t n = fx_split(f, s, ',', parts, 32);
    l.items = fx_alloc(f, (n + 1) * sizeof(*l.items));
    for (size_t i = 0; i < n; i++) {
        char *eq = strchr(parts[i], '=');
        if (eq)
            *eq = '\0';
        l.items[l.n].key = parts[i];
        l.items[l.n++].value = eq ? eq + 1 : fx_str(f, "");
    }
    qsort(l.items, l.n, sizeof(*l.items), fx_kv_cmp);
    return l;
}

static inline int fx_res_cmp(const void *a, const void *b)
{
    return strcmp(((const struct api_res *)a)->name, ((const struct api_res *)b)->name);
}

static inline struct api_reslist fx_reslist(struct fx *f, const char *s)
{
    struct api_reslist r = {0};
    char *parts[32];
    size_t n = fx_split(f, s, ',', parts, 32);
    r.items = fx_alloc(f, (n + 1) * sizeof(*r.items));
    for (size_t i = 0; i < n; i++) {
        char *eq = strchr(parts[i], '=');
        *eq = '\0';
        r.items[r.n].name = parts[i];
        r.items[r.n++].value = fx_qty(eq + 1, parts[i]);
    }
    qsort(r.items, r.n, sizeof(*r.items), fx_res_cmp);
    return r;
}

/* ---- objects ---- */

static inline void fx_flavor(struct fx *f, const char *name, const char *labels)
{
    struct api_resource_flavor rf = {0};
    rf.name = fx_str(f, name);
    rf.node_labels = fx_labels(f, labels);
    eng_upsert_flavor(f->e, &rf);
}

/* A flavor with one taint ("key=value:Effect"). */
static inline void fx_flavor_taint(struct fx *f, const char *name, const char *labels,
                                   const char *taint)
{
    struct api_resource_flavor rf = {0};
    rf.name = fx_str(f, name);
    rf.node_labels = fx_labels(f, labels);
    rf.node_taints = fx_alloc(f, sizeof(*rf.node_taints));
    char *t = fx_str(f, taint), *colon = strchr(t, ':'), *eq = strchr(t, '=');
    *colon = '\0';
    rf.node_taints[0].effect = colon + 1;
    if (eq) {
        *eq = '\0';
        rf.node_taints[0].value = eq + 1;
    } else {
        rf.node_taints[0].value = fx_str(f, "");
    }
    rf.node_taints[0].key = t;
    rf.n_node_taints = 1;
    eng_upsert_flavor(f->e, &rf);
}

static inline void fx_parse_groups(struct fx *f, const char *spec, struct api_resource_group **out,
                                   size_t *n_out)
{
    char *groups[16];
    size_t ng = fx_split(f, spec, '|', groups, 16);
    struct api_resource_group *g = fx_alloc(f, (ng + 1) * sizeof(*g));
    for (size_t i = 0; i < ng; i++) {
        char *flv[64];
        size_t nf = fx_split(f, groups[i], ';', flv, 64);
        g[i].flavors = fx_alloc(f, (nf + 1) * sizeof(*g[i].flavors));
        g[i].n_flavors = nf;
        for (size_t k = 0; k < nf; k++) {
            char *colon = strchr(flv[k], ':');
            *colon = '\0';
            g[i].flavors[k].name = flv[k];
            char *res[64];
            size_t nr = fx_split(f, colon + 1, ',', res, 64);
            g[i].flavors[k].resources = fx_alloc(f, (nr + 1) * sizeof(struct api_resource_quota));
            g[i].flavors[k].n_resources = nr;
            if (k == 0) {
                g[i].covered = fx_alloc(f, (nr + 1) * sizeof(char *));
                g[i].n_covered = nr;
            }
            for (size_t r = 0; r < nr; r++) {
                struct api_resource_quota *q = &g[i].flavors[k].resources[r];
                char *eq = strchr(res[r], '=');
                *eq = '\0';
                q->name = res[r];
                if (k == 0)
                    g[i].covered[r] = res[r];
                char *lim[3];
                size_t nl = fx_split(f, eq + 1, '/', lim, 3);
                q->nominal = fx_qty(lim[0], res[r]);
                if (nl > 1 && strcmp(lim[1], "-")) {
                    q->has_borrowing_limit = true;
                    q->borrowing_limit = fx_qty(lim[1], res[r]);
                }
                if (nl > 2 && strcmp(lim[2], "-")) {
                    q->has_lending_limit = true;
                    q->lending_limit = fx_qty(lim[2], res[r]);
                }
            }
        }
    }
    *out = g;
    *n_out = ng;
}

/* A ClusterQueue with Kueue's defaults and namespaceSelector {}. The test may
 * adjust fields, then call fx_cq_apply. */
static inline struct api_cluster_queue *fx_cq_make(struct fx *f, const char *name, const char *cohort,
                                                   const char *quotas)
{
    struct api_cluster_queue *cq = fx_alloc(f, sizeof(*cq));
    cq->name = fx_str(f, name);
    cq->cohort = fx_str(f, cohort ? cohort : "");
    fx_parse_groups(f, quotas, &cq->groups, &cq->n_groups);
    cq->queueing_strategy = QS_BEST_EFFORT_FIFO;
    cq->has_namespace_selector = true;
    cq->when_can_borrow = FUNG_MAY_STOP_SEARCH;
    cq->when_can_preempt = FUNG_TRY_NEXT_FLAVOR;
    cq->fair_weight_milli = 1000;
    return cq;
}

static inline void fx_cq_apply(struct fx *f, const struct api_cluster_queue *cq)
{
    eng_upsert_cluster_queue(f->e, cq, NULL);
}

static inline void fx_cq(struct fx *f, const char *name, const char *cohort, const char *quotas)
{
    fx_cq_apply(f, fx_cq_make(f, name, cohort, quotas));
}

static inline void fx_cohort(struct fx *f, const char *name, const char *parent, const char *quotas)
{
    struct api_cohort c = {0};
    c.name = fx_str(f, name);
    c.parent = fx_str(f, parent ? parent : "");
    if (quotas)
        fx_parse_groups(f, quotas, &c.groups, &c.n_groups);
    c.fair_weight_milli = 1000;
    eng_upsert_cohort(f->e, &c);
}

static inline void fx_lq(struct fx *f, const char *ns, const char *name, const char *cq)
{
    struct api_local_queue lq = {0};
    lq.ns = fx_str(f, ns);
    lq.name = fx_str(f, name);
    lq.cluster_queue = fx_str(f, cq);
    eng_upsert_local_queue(f->e, &lq);
}

static inline void fx_ns(struct fx *f, const char *name, const char *labels)
{
    struct api_labels l = fx_labels(f, labels ? labels : "");
    eng_upsert_namespace(f->e, name, &l);
}

/* ---- workloads ---- */

static inline struct api_workload *fx_wl(struct fx *f, const char *ns, const char *name,
                                         const char *queue, int32_t priority, int64_t created_ms)
{
    struct api_workload *w = fx_alloc(f, sizeof(*w));
    w->ns = fx_str(f, ns);
    w->name = fx_str(f, name);
    char uid[64];
    snprintf(uid, sizeof(uid), "uid-%s", name);
    w->uid = fx_str(f, uid);
    w->queue_name = fx_str(f, queue);
    w->priority = priority;
    w->creation_ms = created_ms;
    w->active = true;
    w->podsets = fx_alloc(f, 18 * sizeof(*w->podsets));
    return w;
}

static inline struct api_podset *fx_ps(struct fx *f, struct api_workload *w, const char *name,
                                       int32_t count, const char *requests)
{
    struct api_podset *p = &w->podsets[w->n_podsets++];
    p->name = fx_str(f, name);
    p->count = count;
    p->requests = fx_reslist(f, requests);
    return p;
}

static inline void fx_ps_selector(struct fx *f, struct api_podset *p, const char *labels)
{
    p->node_selector = fx_labels(f, labels);
}

static inline void fx_ps_tolerate(struct fx *f, struct api_podset *p, const char *key,
                                  const char *effect)
{
    struct api_toleration *t = fx_alloc(f, (p->n_tolerations + 1) * sizeof(*t));
    if (p->n_tolerations)
        memcpy(t, p->tolerations, p->n_tolerations * sizeof(*t));
    t[p->n_tolerations].key = fx_str(f, key);
    t[p->n_tolerations].op = fx_str(f, "Exists");
    t[p->n_tolerations].value = fx_str(f, "");
    t[p->n_tolerations].effect = fx_str(f, effect);
    p->tolerations = t;
    p->n_tolerations++;
}

static inline void fx_submit(struct fx *f, struct api_workload *w)
{
    bool known = false;
    for (size_t i = 0; i < f->n_wls; i++)
        known = known || f->wls[i] == w;
    if (!known) {
        XGROW(f->wls, f->cap_wls, f->n_wls + 1);
        f->wls[f->n_wls++] = w;
    }
    eng_upsert_workload(f->e, w);
}

static inline struct api_workload *fx_get(struct fx *f, const char *name)
{
    for (size_t i = 0; i < f->n_wls; i++)
        if (!strcmp(f->wls[i]->name, name))
            return f->wls[i];
    fail_msg("unknown workload %s", name);
    return NULL;
}

/* ---- scheduling and decisions ---- */

static inline int fx_schedule(struct fx *f)
{
    eng_result_release(&f->res);
    return eng_schedule(f->e, f->now_ms, 0, &f->res);
}

static inline const struct eng_decision *fx_find(const struct fx *f, enum eng_decision_type t,
                                                 const char *name)
{
    for (size_t i = 0; i < f->res.n; i++)
        if (f->res.items[i].type == t && !strcmp(f->res.items[i].wl.name, name))
            return &f->res.items[i];
    return NULL;
}

static inline size_t fx_count(const struct fx *f, enum eng_decision_type t)
{
    size_t n = 0;
    for (size_t i = 0; i < f->res.n; i++)
        n += f->res.items[i].type == t;
    return n;
}

/* The flavor a reservation gave to (pod set, resource), or NULL. */
static inline const char *fx_flavor_of(const struct eng_decision *d, const char *ps, const char *res)
{
    if (!d)
        return NULL;
    for (size_t i = 0; i < d->admission.n_podsets; i++) {
        if (strcmp(d->admission.podsets[i].name, ps))
            continue;
        for (size_t k = 0; k < d->admission.podsets[i].flavors.n; k++)
            if (!strcmp(d->admission.podsets[i].flavors.items[k].key, res))
                return d->admission.podsets[i].flavors.items[k].value;
    }
    return NULL;
}

/* The control plane writes a reservation back (status.admission,
 * QuotaReserved=True, Admitted when no check applies). */
static inline void fx_apply_reserve(struct fx *f, struct api_workload *w, const struct eng_decision *d,
                                    bool admitted)
{
    w->has_admission = true;
    w->quota_reserved = true;
    w->admitted = admitted;
    w->quota_reserved_ms = f->now_ms;
    w->admission.cluster_queue = fx_str(f, d->cluster_queue);
    w->admission.n_podsets = d->admission.n_podsets;
    w->admission.podsets = fx_alloc(f, (d->admission.n_podsets + 1) * sizeof(*w->admission.podsets));
    for (size_t i = 0; i < d->admission.n_podsets; i++) {
        const struct api_podset_assignment *s = &d->admission.podsets[i];
        struct api_podset_assignment *o = &w->admission.podsets[i];
        o->name = fx_str(f, s->name);
        o->count = s->count;
        o->flavors.items = fx_alloc(f, (s->flavors.n + 1) * sizeof(*o->flavors.items));
        o->resource_usage.items = fx_alloc(f, (s->resource_usage.n + 1) * sizeof(*o->resource_usage.items));
        for (size_t k = 0; k < s->flavors.n; k++) {
            o->flavors.items[k].key = fx_str(f, s->flavors.items[k].key);
            o->flavors.items[k].value = fx_str(f, s->flavors.items[k].value);
        }
        o->flavors.n = s->flavors.n;
        for (size_t k = 0; k < s->resource_usage.n; k++) {
            o->resource_usage.items[k].name = fx_str(f, s->resource_usage.items[k].name);
            o->resource_usage.items[k].value = s->resource_usage.items[k].value;
        }
        o->resource_usage.n = s->resource_usage.n;
        o->topology = api_topology_assignment_dup(s->topology);
        if (o->topology) {
            XGROW(f->tas, f->cap_tas, f->n_tas + 1);
            f->tas[f->n_tas++] = o->topology;
        }
    }
    fx_upsert_status(f, w);
}

/* The workload finished: its quota is released. */
static inline void fx_finish(struct fx *f, struct api_workload *w)
{
    w->finished = true;
    fx_upsert_status(f, w);
}

/* Eviction completed: the reservation is cleared, Requeued=True. */
static inline void fx_release(struct fx *f, struct api_workload *w)
{
    w->has_admission = false;
    w->quota_reserved = false;
    w->admitted = false;
    w->evicted = true;
    w->evicted_ms = f->now_ms;
    w->evicted_reason = fx_str(f, "Preempted");
    fx_upsert_status(f, w);
}

/* Apply every reservation of the last call (as admitted, no checks). */
static inline void fx_apply_all(struct fx *f)
{
    for (size_t i = 0; i < f->res.n; i++)
        if (f->res.items[i].type == ENG_RESERVE)
            fx_apply_reserve(f, fx_get(f, f->res.items[i].wl.name), &f->res.items[i], true);
}

/* Complete the evictions of the last call: victims release their quota. */
static inline void fx_release_preempted(struct fx *f)
{
    for (size_t i = 0; i < f->res.n; i++)
        if (f->res.items[i].type == ENG_PREEMPT)
            fx_release(f, fx_get(f, f->res.items[i].wl.name));
}

/* Schedule and write every reservation back; returns the decisions made. */
static inline int fx_admit(struct fx *f)
{
    int n = fx_schedule(f);
    fx_apply_all(f);
    return n;
}

#endif
