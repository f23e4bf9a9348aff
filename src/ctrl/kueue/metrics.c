/*
 * kueue/metrics: Kueue's ClusterQueue and LocalQueue gauges, computed at
 * scrape time on the loop thread (ctrl/metrics.h). The ClusterQueue
 * figures come from the admission engine, the very figures its status is
 * written from (eng_cq_status); the pending split (active = in the
 * ClusterQueue's heap, inadmissible = parked) from eng_each_pending; the
 * quotas from the stored spec; the LocalQueue figures from the stored
 * LocalQueue status. Resource values are Kueue's: cpu in cores, every
 * other resource in its unit (bytes for memory); an unset borrowing or
 * lending limit is +Inf, as recent Kueue reports it.
 */
#include <math.h>
#include <string.h>
#include <uthash.h>

#include "api/meta.h"
#include "api/object.h"
#include "api/quantity.h"
#include "ctrl/kueue/kueue.h"
#include "ctrl/metrics.h"
#include "engine/engine.h"
#include "util/jsonx.h"
#include "util/prom.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

static const char *const L_CQ[] = {"cluster_queue"};
static const char *const L_CQ_STATUS[] = {"cluster_queue", "status"};
static const char *const L_CQ_RES[] = {"cohort", "cluster_queue", "flavor", "resource"};
static const char *const L_LQ[] = {"name", "namespace"};
static const char *const L_LQ_STATUS[] = {"name", "namespace", "status"};
static const char *const L_LQ_ACTIVE[] = {"name", "namespace", "active"};
static const char *const L_LQ_RES[] = {"name", "namespace", "flavor", "resource"};

/* A quantity in Kueue's metric unit: cpu cores, else the resource's unit.
 * A saturated amount (INT64_MAX: a quantity beyond int64, Kueue's
 * Unlimited) is +Inf, as Kueue reports unlimited quotas since its fix for
 * overflowing quota metrics. */
static double res_value(const char *resource, int64_t v)
{
    if (v == INT64_MAX)
        return INFINITY;
    return !strcmp(resource, "cpu") ? (double)v / 1000.0 : (double)v;
}

static struct prom_vec *gauge(const char *name, const char *help, const char *const *labels,
                              size_t n)
{
    return prom_vec_new(name, help, PROM_GAUGE, labels, n, NULL, 0);
}

/* ---- pending split ---- */

struct pending_count {
    UT_hash_handle hh;
    char *key; /* "<kind>\x1f<a>\x1f<b>" */
    long active, inadmissible;
};

static void count_key(struct pending_count **t, const char *key, bool inadmissible)
{
    struct pending_count *p;
    HASH_FIND_STR(*t, key, p);
    if (!p) {
        p = xcalloc(1, sizeof(*p));
        p->key = xstrdup(key);
        HASH_ADD_KEYPTR(hh, *t, p->key, strlen(p->key), p);
    }
    if (inadmissible)
        p->inadmissible++;
    else
        p->active++;
}

static void on_pending(void *ctx, const char *cq, const char *ns, const char *lq, bool inadm)
{
    struct pending_count **t = ctx;
    char *k = xasprintf("c\x1f%s", cq);
    count_key(t, k, inadm);
    xfree(k);
    k = xasprintf("l\x1f%s\x1f%s", ns ? ns : "", lq ? lq : "");
    count_key(t, k, inadm);
    xfree(k);
}

static const struct pending_count *pending_of(struct pending_count *t, const char *key)
{
    struct pending_count *p;
    HASH_FIND_STR(t, key, p);
    return p;
}

static void pending_free(struct pending_count **t)
{
    struct pending_count *p, *tmp;
    HASH_ITER(hh, *t, p, tmp) {
        HASH_DEL(*t, p);
        xfree(p->key);
        xfree(p);
    }
}

/* ---- ClusterQueues ---- */

enum cq_fam {
    CQ_PENDING,
    CQ_RESERVING,
    CQ_ADMITTED,
    CQ_STATUS,
    CQ_RESERVATION,
    CQ_USAGE,
    CQ_NOMINAL,
    CQ_BORROWING,
    CQ_LENDING,
    CQ__COUNT
};

static void cq_families(struct prom_vec **v)
{
    v[CQ_PENDING] = gauge("kueue_pending_workloads",
                          "The number of pending workloads, per 'cluster_queue' and 'status' "
                          "(active: in the admission queue; inadmissible: a failed admission "
                          "attempt, not retried until the cluster changes).",
                          L_CQ_STATUS, 2);
    v[CQ_RESERVING] = gauge("kueue_reserving_active_workloads",
                            "The number of Workloads that are reserving quota, per "
                            "'cluster_queue'.",
                            L_CQ, 1);
    v[CQ_ADMITTED] = gauge("kueue_admitted_active_workloads",
                           "The number of admitted Workloads that are active (unsuspended and "
                           "not finished), per 'cluster_queue'.",
                           L_CQ, 1);
    v[CQ_STATUS] = gauge("kueue_cluster_queue_status",
                         "Reports 'cluster_queue' with its 'status' (pending, active or "
                         "terminating): 1 for its status, 0 for the others.",
                         L_CQ_STATUS, 2);
    v[CQ_RESERVATION] = gauge("kueue_cluster_queue_resource_reservation",
                              "Reports the cluster_queue's total resource reservation within "
                              "all the flavors.",
                              L_CQ_RES, 4);
    v[CQ_USAGE] = gauge("kueue_cluster_queue_resource_usage",
                        "Reports the cluster_queue's total resource usage within all the "
                        "flavors.",
                        L_CQ_RES, 4);
    v[CQ_NOMINAL] = gauge("kueue_cluster_queue_nominal_quota",
                          "Reports the cluster_queue's resource nominal quota within all the "
                          "flavors.",
                          L_CQ_RES, 4);
    v[CQ_BORROWING] = gauge("kueue_cluster_queue_borrowing_limit",
                            "Reports the cluster_queue's resource borrowing limit within all "
                            "the flavors (+Inf when unset).",
                            L_CQ_RES, 4);
    v[CQ_LENDING] = gauge("kueue_cluster_queue_lending_limit",
                          "Reports the cluster_queue's resource lending limit within all the "
                          "flavors (+Inf when unset).",
                          L_CQ_RES, 4);
}

/* The reserved (or admitted) total of flavor/resource in figures. */
static int64_t usage_of(const struct eng_flavor_usage *u, size_t n, const char *flavor,
                        const char *resource)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(u[i].flavor, flavor))
            continue;
        for (size_t j = 0; j < u[i].total.n; j++)
            if (!strcmp(u[i].total.items[j].name, resource))
                return u[i].total.items[j].value;
    }
    return 0;
}

static void cq_quotas(struct prom_vec **v, const struct api_cluster_queue *cq,
                      const struct eng_cq_status *st)
{
    for (size_t g = 0; g < cq->n_groups; g++) {
        const struct api_resource_group *rg = &cq->groups[g];
        for (size_t f = 0; f < rg->n_flavors; f++) {
            const struct api_flavor_quotas *fq = &rg->flavors[f];
            for (size_t r = 0; r < fq->n_resources; r++) {
                const struct api_resource_quota *q = &fq->resources[r];
                const char *l[] = {cq->cohort ? cq->cohort : "", cq->name, fq->name, q->name};
                prom_vec_set(v[CQ_NOMINAL], l, res_value(q->name, q->nominal));
                prom_vec_set(v[CQ_BORROWING], l,
                             q->has_borrowing_limit ? res_value(q->name, q->borrowing_limit)
                                                    : INFINITY);
                prom_vec_set(v[CQ_LENDING], l,
                             q->has_lending_limit ? res_value(q->name, q->lending_limit)
                                                  : INFINITY);
                int64_t res = st ? usage_of(st->reservation, st->n_reservation, fq->name,
                                            q->name)
                                 : 0;
                int64_t use = st ? usage_of(st->usage, st->n_usage, fq->name, q->name) : 0;
                prom_vec_set(v[CQ_RESERVATION], l, res_value(q->name, res));
                prom_vec_set(v[CQ_USAGE], l, res_value(q->name, use));
            }
        }
    }
}

static void one_cq(struct prom_vec **v, struct eng *e, const json_t *obj,
                   struct pending_count *pend)
{
    struct api_cluster_queue cq;
    memset(&cq, 0, sizeof(cq));
    if (api_cluster_queue_from_json(obj, &cq) != 0 || !cq.name) {
        api_cluster_queue_release(&cq);
        return;
    }
    struct eng_cq_status st;
    bool have = e && eng_cq_status(e, cq.name, &st) == 0;
    char *key = xasprintf("c\x1f%s", cq.name);
    const struct pending_count *p = pending_of(pend, key);
    xfree(key);
    prom_vec_set(v[CQ_PENDING], (const char *[]){cq.name, "active"}, p ? (double)p->active : 0);
    prom_vec_set(v[CQ_PENDING], (const char *[]){cq.name, "inadmissible"},
                 p ? (double)p->inadmissible : 0);
    prom_vec_set(v[CQ_RESERVING], (const char *[]){cq.name}, have ? st.reserving : 0);
    prom_vec_set(v[CQ_ADMITTED], (const char *[]){cq.name}, have ? st.admitted : 0);
    const char *status = api_is_deleting(obj) ? "terminating"
                         : have && st.active  ? "active"
                                              : "pending";
    static const char *const statuses[] = {"pending", "active", "terminating"};
    for (int i = 0; i < 3; i++)
        prom_vec_set(v[CQ_STATUS], (const char *[]){cq.name, statuses[i]},
                     !strcmp(status, statuses[i]));
    cq_quotas(v, &cq, have ? &st : NULL);
    if (have)
        eng_cq_status_release(&st);
    api_cluster_queue_release(&cq);
}

/* ---- LocalQueues ---- */

enum lq_fam { LQ_PENDING, LQ_RESERVING, LQ_ADMITTED, LQ_STATUS, LQ_RESERVATION, LQ_USAGE, LQ__COUNT };

static void lq_families(struct prom_vec **v)
{
    v[LQ_PENDING] = gauge("kueue_local_queue_pending_workloads",
                          "The number of pending workloads, per 'local_queue' and 'status' "
                          "(active or inadmissible).",
                          L_LQ_STATUS, 3);
    v[LQ_RESERVING] = gauge("kueue_local_queue_reserving_active_workloads",
                            "The number of Workloads that are reserving quota, per "
                            "'local_queue'.",
                            L_LQ, 2);
    v[LQ_ADMITTED] = gauge("kueue_local_queue_admitted_active_workloads",
                           "The number of admitted Workloads that are active (unsuspended and "
                           "not finished), per 'local_queue'.",
                           L_LQ, 2);
    v[LQ_STATUS] = gauge("kueue_local_queue_status",
                         "Reports 'local_queue' with its Active condition status ('True', "
                         "'False' or 'Unknown'): 1 for its status, 0 for the others.",
                         L_LQ_ACTIVE, 3);
    v[LQ_RESERVATION] = gauge("kueue_local_queue_resource_reservation",
                              "Reports the local_queue's total resource reservation within all "
                              "the flavors.",
                              L_LQ_RES, 4);
    v[LQ_USAGE] = gauge("kueue_local_queue_resource_usage",
                        "Reports the local_queue's total resource usage within all the "
                        "flavors.",
                        L_LQ_RES, 4);
}

/* LocalQueue status.flavorsReservation / flavorUsage: [{name, resources:
 * [{name, total}]}] */
static void lq_flavors(struct prom_vec *v, const char *name, const char *ns, const json_t *list)
{
    size_t i, j;
    const json_t *f, *r;
    json_array_foreach(list, i, f) {
        json_array_foreach(JX_GET(f, "resources"), j, r) {
            const char *res = jx_or_empty(JX_STR(r, "name"));
            int64_t x = 0;
            if (api_quantity_from_json(JX_GET(r, "total"), res, "total", &x, NULL) != 0)
                continue;
            prom_vec_set(v, (const char *[]){name, ns, jx_or_empty(JX_STR(f, "name")), res},
                         res_value(res, x));
        }
    }
}

static void one_lq(struct prom_vec **v, const json_t *obj, struct pending_count *pend)
{
    const char *name = jx_or_empty(api_name(obj)), *ns = jx_or_empty(api_namespace(obj));
    char *key = xasprintf("l\x1f%s\x1f%s", ns, name);
    const struct pending_count *p = pending_of(pend, key);
    xfree(key);
    prom_vec_set(v[LQ_PENDING], (const char *[]){name, ns, "active"}, p ? (double)p->active : 0);
    prom_vec_set(v[LQ_PENDING], (const char *[]){name, ns, "inadmissible"},
                 p ? (double)p->inadmissible : 0);
    const json_t *st = JX_GET(obj, "status");
    prom_vec_set(v[LQ_RESERVING], (const char *[]){name, ns},
                 (double)JX_INT(st, 0, "reservingWorkloads"));
    prom_vec_set(v[LQ_ADMITTED], (const char *[]){name, ns},
                 (double)JX_INT(st, 0, "admittedWorkloads"));
    const char *active = JX_STR(api_cond_get(obj, "Active"), "status");
    if (!active || (strcmp(active, "True") && strcmp(active, "False")))
        active = "Unknown";
    static const char *const values[] = {"True", "False", "Unknown"};
    for (int i = 0; i < 3; i++)
        prom_vec_set(v[LQ_STATUS], (const char *[]){name, ns, values[i]},
                     !strcmp(active, values[i]));
    lq_flavors(v[LQ_RESERVATION], name, ns, JX_GET(st, "flavorsReservation"));
    lq_flavors(v[LQ_USAGE], name, ns, JX_GET(st, "flavorUsage")); /* Kueue's spelling */
}

void kq_metrics_gauges(struct ctrl *c, struct sbuf *out)
{
    struct eng *e = kq_sched_engine(c);
    struct pending_count *pend = NULL;
    if (e)
        eng_each_pending(e, on_pending, &pend);
    struct prom_vec *cqv[CQ__COUNT], *lqv[LQ__COUNT];
    cq_families(cqv);
    lq_families(lqv);
    json_t *list = store_list(ctrl_store(c), KIND_CLUSTERQUEUE, NULL, NULL);
    size_t i;
    json_t *obj;
    json_array_foreach(list, i, obj)
        one_cq(cqv, e, obj, pend);
    json_decref(list);
    list = store_list(ctrl_store(c), KIND_LOCALQUEUE, NULL, NULL);
    json_array_foreach(list, i, obj)
        one_lq(lqv, obj, pend);
    json_decref(list);
    for (int k = 0; k < CQ__COUNT; k++) {
        prom_vec_write(cqv[k], out);
        prom_vec_free(cqv[k]);
    }
    for (int k = 0; k < LQ__COUNT; k++) {
        prom_vec_write(lqv[k], out);
        prom_vec_free(lqv[k]);
    }
    pending_free(&pend);
}
