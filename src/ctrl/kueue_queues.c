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
 *
 * Queues are marked on every event that may move their figures and flushed
 * once the control plane's step has settled (scheduler.c), so a queue is
 * written at most once per step however many rounds changed it. Each
 * queue remembers the document its last status write stored and the
 * figures it wrote: while the stored document is still that one (nobody
 * wrote since) and the figures are the same, the flush writes nothing
 * without building the status. A ClusterQueue knows its LocalQueues
 * (cq_state.lqs, from the LocalQueues' spec.clusterQueue as last flushed)
 * and marks them when its Active state changes.
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

/* What a LocalQueue's Active condition says (lq_active). */
enum lq_act { LQ_ACT_NONE, LQ_ACT_STOPPED, LQ_ACT_NO_CQ, LQ_ACT_CQ_INACTIVE, LQ_ACT_READY };

/* The figures of a LocalQueue status write. */
struct lq_figures {
    int32_t pending, reserving, admitted;
    struct usage reserved, used;
    enum lq_act act;
};

struct lq_agg {
    char *key; /* "ns/name" */
    char *ns;
    char *name;
    char *cq; /* as last seen */
    struct lq_figures now;     /* act unused */
    json_t *written;           /* the document our last status write left, or NULL */
    struct lq_figures written_figs;
    UT_hash_handle hh;
};

/* A ClusterQueue's last status write and its LocalQueues. */
struct cq_state {
    char *name;
    json_t *written;           /* the document our last status write left, or NULL */
    struct eng_cq_status figs; /* the figures of that write */
    int lqs_active;            /* -1, or the Active state its LocalQueues were marked for */
    uint64_t figs_pass;        /* the flush pass in which figs were the engine's */
    struct kq_set *lqs;        /* LocalQueue keys whose spec.clusterQueue is name */
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
    struct cq_state *cqs;
    struct wl_contrib *wls;
    struct kq_set *dirty_cq;
    struct kq_set *dirty_lq; /* "ns/name" */
    uint64_t pass;           /* kq_queues_flush calls so far */
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

static bool usage_equal(const struct usage *a, const struct usage *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        if (a->items[i].amount != b->items[i].amount ||
            strcmp(a->items[i].flavor, b->items[i].flavor) ||
            strcmp(a->items[i].resource, b->items[i].resource))
            return false;
    }
    return true;
}

static void usage_copy(struct usage *dst, const struct usage *src)
{
    usage_release(dst);
    usage_merge(dst, src, 1);
}

static void lq_figures_release(struct lq_figures *f)
{
    usage_release(&f->reserved);
    usage_release(&f->used);
}

static bool lq_figures_equal(const struct lq_figures *a, const struct lq_figures *b)
{
    return a->pending == b->pending && a->reserving == b->reserving &&
           a->admitted == b->admitted && a->act == b->act &&
           usage_equal(&a->reserved, &b->reserved) && usage_equal(&a->used, &b->used);
}

static void lq_figures_copy(struct lq_figures *dst, const struct lq_figures *src)
{
    dst->pending = src->pending;
    dst->reserving = src->reserving;
    dst->admitted = src->admitted;
    dst->act = src->act;
    usage_copy(&dst->reserved, &src->reserved);
    usage_copy(&dst->used, &src->used);
}

static bool str_equal(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static bool reslist_equal(const struct api_reslist *a, const struct api_reslist *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++) {
        if (a->items[i].value != b->items[i].value || strcmp(a->items[i].name, b->items[i].name))
            return false;
    }
    return true;
}

static bool flavor_usage_equal(const struct eng_flavor_usage *a, size_t na,
                               const struct eng_flavor_usage *b, size_t nb)
{
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        if (!str_equal(a[i].flavor, b[i].flavor) || !reslist_equal(&a[i].total, &b[i].total) ||
            !reslist_equal(&a[i].borrowed, &b[i].borrowed))
            return false;
    }
    return true;
}

/* Every field of struct eng_cq_status (engine.h) that the status shows. */
static bool cq_figures_equal(const struct eng_cq_status *a, const struct eng_cq_status *b)
{
    return a->active == b->active && str_equal(a->inactive_reason, b->inactive_reason) &&
           str_equal(a->inactive_message, b->inactive_message) && a->pending == b->pending &&
           a->reserving == b->reserving && a->admitted == b->admitted &&
           a->weighted_share == b->weighted_share &&
           flavor_usage_equal(a->reservation, a->n_reservation, b->reservation,
                              b->n_reservation) &&
           flavor_usage_equal(a->usage, a->n_usage, b->usage, b->n_usage);
}

static void contrib_free(struct wl_contrib *w)
{
    usage_release(&w->amt);
    xfree(w->key);
    xfree(w->lq);
    xfree(w);
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
        lq_figures_release(&a->now);
        lq_figures_release(&a->written_figs);
        json_decref(a->written);
        xfree(a->key);
        xfree(a->ns);
        xfree(a->name);
        xfree(a->cq);
        xfree(a);
    }
    struct cq_state *cs, *ct;
    HASH_ITER(hh, q->cqs, cs, ct) {
        HASH_DEL(q->cqs, cs);
        json_decref(cs->written);
        eng_cq_status_release(&cs->figs);
        kq_set_free(cs->lqs);
        xfree(cs->name);
        xfree(cs);
    }
    struct wl_contrib *w, *wt;
    HASH_ITER(hh, q->wls, w, wt) {
        HASH_DEL(q->wls, w);
        contrib_free(w);
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

void kq_queues_observe_status(struct kq_queues *q, enum api_kind_id kind, const json_t *obj)
{
    if (kind == KIND_CLUSTERQUEUE) {
        const char *name = api_name(obj);
        struct cq_state *cs = NULL;
        if (name)
            HASH_FIND_STR(q->cqs, name, cs);
        if (!cs || cs->written != obj)
            kq_queues_mark_cq(q, name);
        return;
    }
    const char *ns = api_namespace(obj), *name = api_name(obj);
    if (!ns || !name)
        return;
    struct lq_agg *a = lq_get(q, ns, name);
    if (a->written != obj)
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
        a->now.pending += sign;
    if (w->st == WS_RESERVING || w->st == WS_ADMITTED) {
        a->now.reserving += sign;
        usage_merge(&a->now.reserved, &w->amt, sign);
    }
    if (w->st == WS_ADMITTED) {
        a->now.admitted += sign;
        usage_merge(&a->now.used, &w->amt, sign);
    }
    kq_set_add(q->dirty_lq, a->key);
}

static void contrib_from(const json_t *wl, struct wl_contrib *w)
{
    /* kq_wl_is_finished, kq_wl_has_reservation and kq_wl_is_admitted, from
     * one scan of the conditions */
    static const char *const types[] = {"Finished", "QuotaReserved", "Admitted"};
    const json_t *conds[3];
    api_cond_get_all(wl, types, 3, conds);
    w->st = WS_NONE;
    if (api_cond_holds(conds[0]))
        return;
    if (!JX_GET(wl, "status", "admission") || !api_cond_holds(conds[1])) {
        w->st = kq_wl_is_active(wl) ? WS_PENDING : WS_NONE;
        return;
    }
    w->st = api_cond_holds(conds[2]) ? WS_ADMITTED : WS_RESERVING;
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

/* Mark the ClusterQueue of the Workload: its admission's, else its
 * LocalQueue's. */
static void mark_wl_cq(struct kq_queues *q, struct ctrl *c, const json_t *wl, const char *queue)
{
    const char *cq = kq_wl_cluster_queue(wl);
    if (cq || !queue) {
        kq_queues_mark_cq(q, cq);
        return;
    }
    json_t *lq = store_get(ctrl_store(c), KIND_LOCALQUEUE, api_namespace(wl), queue);
    kq_queues_mark_cq(q, JX_STR(lq, "spec", "clusterQueue"));
    json_decref(lq);
}

void kq_queues_observe_workload(struct kq_queues *q, struct ctrl *c, const json_t *wl,
                                bool deleted)
{
    char *key = kq_key(api_namespace(wl), api_name(wl));
    struct wl_contrib *w;
    HASH_FIND_STR(q->wls, key, w);
    const char *queue = JX_STR(wl, "spec", "queueName");
    struct lq_agg *a = deleted || !queue ? NULL : lq_get(q, api_namespace(wl), queue);
    struct wl_contrib now = {0};
    if (a)
        contrib_from(wl, &now);
    if (w && a && !strcmp(w->lq, a->key) && w->st == now.st && usage_equal(&w->amt, &now.amt)) {
        /* the same contribution: the marks only (apply_contrib's included) */
        usage_release(&now.amt);
        xfree(key);
        mark_wl_cq(q, c, wl, queue);
        kq_set_add(q->dirty_lq, a->key);
        return;
    }
    if (w) {
        apply_contrib(q, w, -1);
        HASH_DEL(q->wls, w);
        contrib_free(w);
    }
    mark_wl_cq(q, c, wl, queue);
    if (!a) {
        xfree(key);
        return;
    }
    w = xcalloc(1, sizeof(*w));
    *w = now;
    w->key = key;
    w->lq = xstrdup(a->key);
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
            /* built directly: json_pack parses its format at every call */
            json_t *item = json_object();
            json_object_set_new(item, "name", json_string(r));
            json_object_set_new(item, "total", kq_quantity_json(u[i].total.items[j].value, r));
            json_object_set_new(item, "borrowed",
                                kq_quantity_json(api_reslist_get(&u[i].borrowed, r), r));
            json_array_append_new(res, item);
        }
        json_t *fl = json_object();
        json_object_set_new(fl, "name", json_string(u[i].flavor));
        json_object_set_new(fl, "resources", res);
        json_array_append_new(out, fl);
    }
    return out;
}

/* A queue document to rewrite the status of: new top-level, metadata and
 * status maps whose values are cur's. The flushes only replace status
 * members and change conditions through api_cond_set (which copies the
 * shared conditions before changing them). New reference. */
static json_t *status_base(const json_t *cur)
{
    json_t *cp = json_copy((json_t *)cur);
    json_object_set_new(cp, "metadata", json_copy(json_object_get(cur, "metadata")));
    json_t *st = json_object_get(cur, "status");
    json_object_set_new(cp, "status", json_is_object(st) ? json_copy(st) : json_object());
    return cp;
}

/* Write cp's status over cur's (cp from status_base; taken); the store
 * writes nothing when it is the same. Returns the document the store now
 * holds for the queue (new reference, NULL when it is gone) and sets
 * *wrote. */
static json_t *write_status_if_changed(struct ctrl *c, enum api_kind_id kind, json_t *cur,
                                       json_t *cp, bool *wrote)
{
    json_t *out = NULL;
    *wrote = store_update_take(ctrl_store(c), kind, api_namespace(cur), cp,
                               STORE_UPDATE_STATUS, &out) == 0 &&
             out != cur;
    return out;
}

static struct cq_state *cq_state_get(struct kq_queues *q, const char *name)
{
    struct cq_state *cs;
    HASH_FIND_STR(q->cqs, name, cs);
    if (!cs) {
        cs = xcalloc(1, sizeof(*cs));
        cs->name = xstrdup(name);
        cs->lqs_active = -1;
        cs->lqs = kq_set_new();
        HASH_ADD_KEYPTR(hh, q->cqs, cs->name, strlen(cs->name), cs);
    }
    return cs;
}

/* A LocalQueue's ClusterQueue as last flushed (cq_state.lqs follows it). */
static void lq_set_cq(struct kq_queues *q, struct lq_agg *a, const char *cq)
{
    if (str_equal(a->cq, cq))
        return;
    if (a->cq)
        kq_set_remove(cq_state_get(q, a->cq)->lqs, a->key);
    xfree(a->cq);
    a->cq = cq ? xstrdup(cq) : NULL;
    if (cq)
        kq_set_add(cq_state_get(q, cq)->lqs, a->key);
}

static void mark_lq_key(const char *key, void *arg)
{
    kq_set_add(((struct kq_queues *)arg)->dirty_lq, key);
}

/* The usage list `member` of the status our last write left (`written`,
 * built from the figures `same` says are equal to the new ones), shared
 * instead of built again; NULL when there is none to share. New reference. */
static json_t *reuse_written(const json_t *written, const char *member, bool same)
{
    json_t *v = same ? JX_GET(written, "status", member) : NULL;
    return json_is_array(v) ? json_incref(v) : NULL;
}

/* The ClusterQueue status document for st, from cur; the usage lists of
 * cs's last write are shared when their figures did not change. Taken by
 * the write. */
static json_t *cq_status_doc(struct ctrl *c, const json_t *cur, const struct eng_cq_status *st,
                             const struct cq_state *cs)
{
    json_t *cp = status_base(cur);
    int64_t now = ctrl_now(c);
    if (st->active)
        api_cond_set(cp, "Active", "True", "Ready", "Can admit new workloads", now);
    else
        api_cond_set(cp, "Active", "False", st->inactive_reason ? st->inactive_reason : "Unknown",
                     jx_or_empty(st->inactive_message), now);
    json_t *s = JX_OBJ(cp, "status");
    json_object_set_new(s, "pendingWorkloads", json_integer(st->pending));
    json_object_set_new(s, "reservingWorkloads", json_integer(st->reserving));
    json_object_set_new(s, "admittedWorkloads", json_integer(st->admitted));
    json_t *res = reuse_written(cs->written, "flavorsReservation",
                                flavor_usage_equal(st->reservation, st->n_reservation,
                                                   cs->figs.reservation, cs->figs.n_reservation));
    json_t *use = reuse_written(cs->written, "flavorsUsage",
                                flavor_usage_equal(st->usage, st->n_usage, cs->figs.usage,
                                                   cs->figs.n_usage));
    json_object_set_new(s, "flavorsReservation",
                        res ? res : flavor_usage_json(st->reservation, st->n_reservation));
    json_object_set_new(s, "flavorsUsage", use ? use : flavor_usage_json(st->usage, st->n_usage));
    if (ctrl_cfg(c)->engine.fair_sharing) {
        json_t *fs = json_object_get(s, "fairSharing"); /* shared: replaced, not changed */
        fs = json_is_object(fs) ? json_copy(fs) : json_object();
        json_object_set_new(fs, "weightedShare", json_integer(st->weighted_share));
        json_object_set_new(s, "fairSharing", fs);
    }
    return cp;
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
    struct cq_state *cs = cq_state_get(q, name);
    bool deleting = api_is_deleting(cur);
    bool wrote = false;
    if (cur != cs->written || deleting || !cq_figures_equal(&st, &cs->figs)) {
        json_t *cp = cq_status_doc(c, cur, &st, cs);
        json_t *now_doc = write_status_if_changed(c, KIND_CLUSTERQUEUE, cur, cp, &wrote);
        json_decref(cs->written);
        cs->written = now_doc;
        eng_cq_status_release(&cs->figs);
        cs->figs = st;
        memset(&st, 0, sizeof(st));
    }
    cs->figs_pass = q->pass;
    if (deleting && cs->figs.reserving == 0 && cs->figs.admitted == 0)
        kq_remove_finalizer(c, KIND_CLUSTERQUEUE, NULL, name, KQ_RESOURCE_IN_USE_FINALIZER);
    /* a LocalQueue's Active condition follows its ClusterQueue's */
    if (cs->lqs_active != (int)cs->figs.active) {
        cs->lqs_active = (int)cs->figs.active;
        kq_set_each(cs->lqs, mark_lq_key, q);
    }
    eng_cq_status_release(&st);
    json_decref(cur);
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
            entry = json_object();
            json_object_set_new(entry, "name", json_string(u->items[i].flavor));
            json_object_set_new(entry, "resources", json_array());
            json_array_append_new(out, entry);
        }
        json_t *item = json_object();
        json_object_set_new(item, "name", json_string(u->items[i].resource));
        json_object_set_new(item, "total",
                            kq_quantity_json(u->items[i].amount, u->items[i].resource));
        json_array_append_new(JX_GET(entry, "resources"), item);
    }
    return out;
}

/* What the LocalQueue's Active condition says: its stopPolicy, then its
 * ClusterQueue (missing, inactive). A ClusterQueue flushed in this pass
 * gives its figures (the engine has not changed since); any other is asked
 * of the engine. */
static enum lq_act lq_active_state(struct kq_queues *q, struct eng *e, const json_t *lq)
{
    const char *pol = JX_STR(lq, "spec", "stopPolicy");
    const char *cqn = JX_STR(lq, "spec", "clusterQueue");
    if (pol && strcmp(pol, "None"))
        return LQ_ACT_STOPPED;
    struct cq_state *cs = NULL;
    if (cqn)
        HASH_FIND_STR(q->cqs, cqn, cs);
    if (cs && cs->figs_pass == q->pass)
        return cs->figs.active ? LQ_ACT_READY : LQ_ACT_CQ_INACTIVE;
    struct eng_cq_status st;
    memset(&st, 0, sizeof(st));
    if (!cqn || eng_cq_status(e, cqn, &st) != 0)
        return LQ_ACT_NO_CQ;
    bool active = st.active;
    eng_cq_status_release(&st);
    return active ? LQ_ACT_READY : LQ_ACT_CQ_INACTIVE;
}

static void lq_set_active(json_t *cp, enum lq_act act, int64_t now)
{
    if (act == LQ_ACT_STOPPED)
        api_cond_set(cp, "Active", "False", "Stopped", "LocalQueue is stopped", now);
    else if (act == LQ_ACT_NO_CQ)
        api_cond_set(cp, "Active", "False", "ClusterQueueDoesNotExist",
                     "Can't submit new workloads to clusterQueue", now);
    else if (act == LQ_ACT_CQ_INACTIVE)
        api_cond_set(cp, "Active", "False", "ClusterQueueIsInactive",
                     "Can't submit new workloads to clusterQueue", now);
    else
        api_cond_set(cp, "Active", "True", "Ready", "Can submit new workloads to localQueue", now);
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
    lq_set_cq(q, a, JX_STR(cur, "spec", "clusterQueue"));
    a->now.act = lq_active_state(q, e, cur);
    bool wrote = false;
    if (cur != a->written || !lq_figures_equal(&a->now, &a->written_figs)) {
        json_t *cp = status_base(cur);
        lq_set_active(cp, a->now.act, ctrl_now(c));
        json_t *s = JX_OBJ(cp, "status");
        json_object_set_new(s, "pendingWorkloads", json_integer(a->now.pending));
        json_object_set_new(s, "reservingWorkloads", json_integer(a->now.reserving));
        json_object_set_new(s, "admittedWorkloads", json_integer(a->now.admitted));
        json_t *res = reuse_written(a->written, "flavorsReservation",
                                    usage_equal(&a->now.reserved, &a->written_figs.reserved));
        json_t *use = reuse_written(a->written, "flavorUsage",
                                    usage_equal(&a->now.used, &a->written_figs.used));
        json_object_set_new(s, "flavorsReservation", res ? res : lq_usage_json(&a->now.reserved));
        json_object_set_new(s, "flavorUsage", use ? use : lq_usage_json(&a->now.used));
        json_decref(a->written);
        a->written = write_status_if_changed(c, KIND_LOCALQUEUE, cur, cp, &wrote);
        lq_figures_copy(&a->written_figs, &a->now);
    }
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
    q->pass++;
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
