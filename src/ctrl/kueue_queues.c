/*
 * kueue_queues: ClusterQueue and LocalQueue status (kueue.md §1.2, §1.3).
 * ClusterQueue figures (Active, pending/reserving/admitted counts,
 * flavorsReservation, flavorsUsage, fairSharing) come from the engine.
 * LocalQueue figures are kept here incrementally: each Workload's last
 * contribution (state and per flavor/resource amounts of its admission) is
 * remembered, so an event replaces one contribution instead of recounting
 * the namespace. Counting follows Kueue: reservingWorkloads includes the
 * admitted ones; pendingWorkloads counts active, unfinished Workloads
 * without a reservation.
 */
#include <string.h>
#include <uthash.h>

#include "api/meta.h"
#include "ctrl/kueue_int.h"
#include "ctrl/kueue_sched.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

struct fr_amt {
    char *flavor;
    char *resource;
    int64_t amount;
};

struct usage {
    struct fr_amt *items;
    size_t n;
};

struct lq_agg {
    char *key; /* "ns/name" */
    char *ns;
    char *name;
    char *cq; /* as last seen */
    int32_t pending, reserving, admitted;
    struct usage reserved, used;
    UT_hash_handle hh;
};

enum wl_st { WS_NONE, WS_PENDING, WS_RESERVING, WS_ADMITTED };

struct wl_contrib {
    char *key; /* "ns/name" */
    char *lq;  /* LocalQueue key */
    enum wl_st st;
    struct usage amt;
    UT_hash_handle hh;
};

struct kq_queues {
    struct lq_agg *lqs;
    struct wl_contrib *wls;
    struct kq_set *dirty_cq;
    struct kq_set *dirty_lq; /* "ns/name" */
};

static void usage_release(struct usage *u)
{
    for (size_t i = 0; i < u->n; i++) {
        xfree(u->items[i].flavor);
        xfree(u->items[i].resource);
    }
    XFREE(u->items);
    u->n = 0;
}

static void usage_add(struct usage *u, const char *flavor, const char *res, int64_t delta)
{
    for (size_t i = 0; i < u->n; i++) {
        if (!strcmp(u->items[i].flavor, flavor) && !strcmp(u->items[i].resource, res)) {
            u->items[i].amount += delta;
            return;
        }
    }
    u->items = xreallocarray(u->items, u->n + 1, sizeof(*u->items));
    u->items[u->n].flavor = xstrdup(flavor);
    u->items[u->n].resource = xstrdup(res);
    u->items[u->n].amount = delta;
    u->n++;
}

static void usage_merge(struct usage *dst, const struct usage *src, int sign)
{
    for (size_t i = 0; i < src->n; i++)
        usage_add(dst, src->items[i].flavor, src->items[i].resource, sign * src->items[i].amount);
}

struct kq_queues *kq_queues_new(void)
{
    struct kq_queues *q = xcalloc(1, sizeof(*q));
    q->dirty_cq = kq_set_new();
    q->dirty_lq = kq_set_new();
    return q;
}

void kq_queues_free(struct kq_queues *q)
{
    if (!q)
        return;
    struct lq_agg *a, *at;
    HASH_ITER(hh, q->lqs, a, at) {
        HASH_DEL(q->lqs, a);
        usage_release(&a->reserved);
        usage_release(&a->used);
        xfree(a->key);
        xfree(a->ns);
        xfree(a->name);
        xfree(a->cq);
        xfree(a);
    }
    struct wl_contrib *w, *wt;
    HASH_ITER(hh, q->wls, w, wt) {
        HASH_DEL(q->wls, w);
        usage_release(&w->amt);
        xfree(w->key);
        xfree(w->lq);
        xfree(w);
    }
    kq_set_free(q->dirty_cq);
    kq_set_free(q->dirty_lq);
    xfree(q);
}

static struct lq_agg *lq_get(struct kq_queues *q, const char *ns, const char *name)
{
    char *key = kq_key(ns, name);
    struct lq_agg *a;
    HASH_FIND_STR(q->lqs, key, a);
    if (a) {
        xfree(key);
        return a;
    }
    a = xcalloc(1, sizeof(*a));
    a->key = key;
    a->ns = xstrdup(ns);
    a->name = xstrdup(name);
    HASH_ADD_KEYPTR(hh, q->lqs, a->key, strlen(a->key), a);
    return a;
}

void kq_queues_mark_cq(struct kq_queues *q, const char *cq)
{
    if (cq && cq[0])
        kq_set_add(q->dirty_cq, cq);
}

void kq_queues_mark_lq(struct kq_queues *q, const char *ns, const char *name)
{
    if (!ns || !name)
        return;
    struct lq_agg *a = lq_get(q, ns, name);
    kq_set_add(q->dirty_lq, a->key);
}

static void apply_contrib(struct kq_queues *q, const struct wl_contrib *w, int sign)
{
    if (!w->lq || w->st == WS_NONE)
        return;
    struct lq_agg *a;
    HASH_FIND_STR(q->lqs, w->lq, a);
    if (!a)
        return;
    if (w->st == WS_PENDING)
        a->pending += sign;
    if (w->st == WS_RESERVING || w->st == WS_ADMITTED) {
        a->reserving += sign;
        usage_merge(&a->reserved, &w->amt, sign);
    }
    if (w->st == WS_ADMITTED) {
        a->admitted += sign;
        usage_merge(&a->used, &w->amt, sign);
    }
    kq_set_add(q->dirty_lq, a->key);
}

static void contrib_from(const json_t *wl, struct wl_contrib *w)
{
    w->st = WS_NONE;
    if (kq_wl_is_finished(wl))
        return;
    if (!kq_wl_has_reservation(wl)) {
        w->st = kq_wl_is_active(wl) ? WS_PENDING : WS_NONE;
        return;
    }
    w->st = kq_wl_is_admitted(wl) ? WS_ADMITTED : WS_RESERVING;
    size_t i;
    json_t *ps;
    json_array_foreach(JX_GET(wl, "status", "admission", "podSetAssignments"), i, ps) {
        const char *res;
        json_t *v;
        json_object_foreach(JX_GET(ps, "resourceUsage"), res, v) {
            const char *flv = JX_STR(ps, "flavors", res);
            if (flv)
                usage_add(&w->amt, flv, res, kq_quantity_value(v, res));
        }
    }
}

void kq_queues_observe_workload(struct kq_queues *q, struct ctrl *c, const json_t *wl,
                                bool deleted)
{
    char *key = kq_key(api_namespace(wl), api_name(wl));
    struct wl_contrib *w;
    HASH_FIND_STR(q->wls, key, w);
    if (w) {
        apply_contrib(q, w, -1);
        HASH_DEL(q->wls, w);
        usage_release(&w->amt);
        xfree(w->key);
        xfree(w->lq);
        xfree(w);
    }
    const char *queue = JX_STR(wl, "spec", "queueName");
    const char *cq = kq_wl_cluster_queue(wl);
    char *lq_cq = NULL;
    if (!cq && queue) {
        lq_cq = kq_wl_queue_cq(c, wl);
        cq = lq_cq;
    }
    kq_queues_mark_cq(q, cq);
    xfree(lq_cq);
    if (deleted || !queue) {
        xfree(key);
        return;
    }
    struct lq_agg *a = lq_get(q, api_namespace(wl), queue);
    w = xcalloc(1, sizeof(*w));
    w->key = key;
    w->lq = xstrdup(a->key);
    contrib_from(wl, w);
    HASH_ADD_KEYPTR(hh, q->wls, w->key, strlen(w->key), w);
    apply_contrib(q, w, +1);
    kq_set_add(q->dirty_lq, a->key);
}

/* ---- status documents ---- */

static json_t *flavor_usage_json(const struct eng_flavor_usage *u, size_t n)
{
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *res = json_array();
        for (size_t j = 0; j < u[i].total.n; j++) {
            const char *r = u[i].total.items[j].name;
            json_array_append_new(
                res, json_pack("{s:s, s:o, s:o}", "name", r, "total",
                               kq_quantity_json(u[i].total.items[j].value, r), "borrowed",
                               kq_quantity_json(api_reslist_get(&u[i].borrowed, r), r)));
        }
        json_array_append_new(out, json_pack("{s:s, s:o}", "name", u[i].flavor, "resources", res));
    }
    return out;
}

static int write_status_if_changed(struct ctrl *c, enum api_kind_id kind, const json_t *cur,
                                   json_t *cp)
{
    if (jx_equal(JX_GET(cur, "status"), JX_GET(cp, "status")))
        return 0;
    return kq_update(c, kind, cp, STORE_UPDATE_STATUS) == 0;
}

static bool flush_cq(struct kq_queues *q, struct ctrl *c, struct eng *e, const char *name)
{
    json_t *cur = store_get(ctrl_store(c), KIND_CLUSTERQUEUE, NULL, name);
    struct eng_cq_status st;
    memset(&st, 0, sizeof(st));
    if (!cur || eng_cq_status(e, name, &st) != 0) {
        json_decref(cur);
        return false;
    }
    json_t *cp = json_deep_copy(cur);
    int64_t now = ctrl_now(c);
    if (st.active)
        api_cond_set(cp, "Active", "True", "Ready", "Can admit new workloads", now);
    else
        api_cond_set(cp, "Active", "False", st.inactive_reason ? st.inactive_reason : "Unknown",
                     jx_or_empty(st.inactive_message), now);
    json_t *s = JX_OBJ(cp, "status");
    json_object_set_new(s, "pendingWorkloads", json_integer(st.pending));
    json_object_set_new(s, "reservingWorkloads", json_integer(st.reserving));
    json_object_set_new(s, "admittedWorkloads", json_integer(st.admitted));
    json_object_set_new(s, "flavorsReservation", flavor_usage_json(st.reservation, st.n_reservation));
    json_object_set_new(s, "flavorsUsage", flavor_usage_json(st.usage, st.n_usage));
    if (ctrl_cfg(c)->engine.fair_sharing)
        JX_SET_NEW(s, json_integer(st.weighted_share), "fairSharing", "weightedShare");
    bool wrote = write_status_if_changed(c, KIND_CLUSTERQUEUE, cur, cp) > 0;
    if (api_is_deleting(cur) && st.reserving == 0 && st.admitted == 0)
        kq_remove_finalizer(c, KIND_CLUSTERQUEUE, NULL, name, KQ_RESOURCE_IN_USE_FINALIZER);
    eng_cq_status_release(&st);
    json_decref(cp);
    json_decref(cur);
    /* a LocalQueue's Active condition follows its ClusterQueue's */
    struct lq_agg *a, *t;
    HASH_ITER(hh, q->lqs, a, t) {
        if (a->cq && !strcmp(a->cq, name))
            kq_set_add(q->dirty_lq, a->key);
    }
    return wrote;
}

static json_t *lq_usage_json(const struct usage *u)
{
    json_t *out = json_array();
    for (size_t i = 0; i < u->n; i++) {
        json_t *entry = NULL;
        size_t j;
        json_t *f;
        json_array_foreach(out, j, f) {
            if (!strcmp(JX_STR(f, "name"), u->items[i].flavor))
                entry = f;
        }
        if (!entry) {
            entry = json_pack("{s:s, s:[]}", "name", u->items[i].flavor, "resources");
            json_array_append_new(out, entry);
        }
        json_array_append_new(JX_GET(entry, "resources"),
                              json_pack("{s:s, s:o}", "name", u->items[i].resource, "total",
                                        kq_quantity_json(u->items[i].amount,
                                                         u->items[i].resource)));
    }
    return out;
}

static void lq_active(struct ctrl *c, struct eng *e, const json_t *lq, json_t *cp)
{
    int64_t now = ctrl_now(c);
    const char *pol = JX_STR(lq, "spec", "stopPolicy");
    const char *cqn = JX_STR(lq, "spec", "clusterQueue");
    struct eng_cq_status st;
    memset(&st, 0, sizeof(st));
    int rc = cqn ? eng_cq_status(e, cqn, &st) : -1;
    if (pol && strcmp(pol, "None"))
        api_cond_set(cp, "Active", "False", "Stopped", "LocalQueue is stopped", now);
    else if (rc != 0)
        api_cond_set(cp, "Active", "False", "ClusterQueueDoesNotExist",
                     "Can't submit new workloads to clusterQueue", now);
    else if (!st.active)
        api_cond_set(cp, "Active", "False", "ClusterQueueIsInactive",
                     "Can't submit new workloads to clusterQueue", now);
    else
        api_cond_set(cp, "Active", "True", "Ready", "Can submit new workloads to localQueue", now);
    if (rc == 0)
        eng_cq_status_release(&st);
}

static bool flush_lq(struct kq_queues *q, struct ctrl *c, struct eng *e, const char *key)
{
    struct lq_agg *a;
    HASH_FIND_STR(q->lqs, key, a);
    if (!a)
        return false;
    json_t *cur = store_get(ctrl_store(c), KIND_LOCALQUEUE, a->ns, a->name);
    if (!cur)
        return false;
    xfree(a->cq);
    a->cq = xstrdup(JX_STR(cur, "spec", "clusterQueue"));
    json_t *cp = json_deep_copy(cur);
    lq_active(c, e, cur, cp);
    json_t *s = JX_OBJ(cp, "status");
    json_object_set_new(s, "pendingWorkloads", json_integer(a->pending));
    json_object_set_new(s, "reservingWorkloads", json_integer(a->reserving));
    json_object_set_new(s, "admittedWorkloads", json_integer(a->admitted));
    json_object_set_new(s, "flavorsReservation", lq_usage_json(&a->reserved));
    json_object_set_new(s, "flavorUsage", lq_usage_json(&a->used));
    bool wrote = write_status_if_changed(c, KIND_LOCALQUEUE, cur, cp) > 0;
    json_decref(cp);
    json_decref(cur);
    return wrote;
}

struct flush_ctx {
    struct kq_queues *q;
    struct ctrl *c;
    struct eng *e;
    bool wrote;
};

static void flush_cq_cb(const char *name, void *arg)
{
    struct flush_ctx *x = arg;
    x->wrote |= flush_cq(x->q, x->c, x->e, name);
}

static void flush_lq_cb(const char *key, void *arg)
{
    struct flush_ctx *x = arg;
    x->wrote |= flush_lq(x->q, x->c, x->e, key);
}

bool kq_queues_flush(struct kq_queues *q, struct ctrl *c, struct eng *e)
{
    struct flush_ctx x = {q, c, e, false};
    struct kq_set *cqs = q->dirty_cq;
    q->dirty_cq = kq_set_new();
    kq_set_each(cqs, flush_cq_cb, &x); /* marks the LocalQueues of each */
    kq_set_free(cqs);
    struct kq_set *lqs = q->dirty_lq;
    q->dirty_lq = kq_set_new();
    kq_set_each(lqs, flush_lq_cb, &x);
    kq_set_free(lqs);
    return x.wrote;
}
