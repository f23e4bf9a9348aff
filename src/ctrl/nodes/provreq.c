/*
 * nodes/provreq: cueue plays the cluster autoscaler for ProvisioningRequests
 * (autoscaling.x-k8s.io/v1): GKE's queued-provisioning.gke.io (all nodes of
 * a queued-provisioning pool at once, when the provider finds capacity),
 * and the OSS classes best-effort-atomic-scale-up and check-capacity.
 *
 * Lifecycle (conditions as GKE / the OSS autoscaler write them, see
 * nodes/provreq_plan.c for the steps before Provisioned):
 *   not provisioned by creation + ValidUntilSeconds (or the 7-day limit)
 *       -> Failed (WaitTimeExceeded / Expired)
 *   Provisioned -> BookingExpired after the booking time (nodes are then
 *       ordinary: removable when idle)
 *   queued: Provisioned + maxRunDurationSeconds (7 days) -> CapacityRevoked
 *       (nodes deleted), as are provider revocations.
 * Failed and CapacityRevoked are terminal. A deleted request drops its
 * pending provider request; nodes it brought stay until idle.
 *
 * Every change of a condition's status is traced as
 * ProvisioningRequestUpdated; every wait is a timer on the request's key.
 */
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "ctrl/nodes/nodes.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define TEMPLATE_GRACE_MS (60 * 1000) /* a request may come before its templates */
#define MAX_RUN_DEFAULT_MS (7LL * 24 * 3600 * 1000)

static const struct prc_texts texts_queued = {
    "SuccessfullyQueued", "Provisioning Request was successfully queued.",
    "Provisioned", "Provisioning Request was successfully provisioned.",
    "NotProvisioned", "Provisioning Request wasn't provisioned.",
    "BookingExpired",
    "Capacity booking for the Provisioning Request has expired and the nodes are now candidates "
    "for scale down when underutilized.",
    "WaitTimeExceeded",
    "Provisioning Request could not provision queued instances in the allocated time.",
};
static const struct prc_texts texts_atomic = {
    "Accepted", "ProvisioningRequest is accepted by ClusterAutoscaler",
    "CapacityIsProvisioned", "Capacity is found in the cluster",
    "CapacityIsNotFound", "Capacity is not found, CA will try to find it later.",
    "CapacityReservationTimeExpired", "Capacity reservation time is expired",
    "Expired", "ProvisioningRequest is expired",
};
static const struct prc_texts texts_check = {
    "Accepted", "ProvisioningRequest is accepted by ClusterAutoscaler",
    "CapacityIsFound", "Capacity is found in the cluster",
    "CapacityIsNotFound", "Capacity is not found, CA will try to find it later.",
    "CapacityReservationTimeExpired", "Capacity reservation time is expired",
    "Expired", "ProvisioningRequest is expired",
};

const struct prc_texts *prc_texts(enum prc cls)
{
    return cls == PRC_QUEUED ? &texts_queued : cls == PRC_ATOMIC ? &texts_atomic : &texts_check;
}

static bool class_of(const json_t *pr, enum prc *out)
{
    const char *cn = JX_STR(pr, "spec", "provisioningClassName");
    if (!cn)
        return false;
    if (!strcmp(cn, PRC_QUEUED_NAME))
        *out = PRC_QUEUED;
    else if (!strcmp(cn, PRC_ATOMIC_NAME))
        *out = PRC_ATOMIC;
    else if (!strcmp(cn, PRC_CHECK_NAME))
        *out = PRC_CHECK;
    else
        return false;
    return true;
}

void pr_set_cond(struct pr_work *w, const char *type, const char *status, const char *reason,
                 const char *message)
{
    const char *before = api_cond_status(w->pr, type);
    bool changed_status = !before || strcmp(before, status);
    api_cond_set(w->pr, type, status, reason, message, ctrl_now(w->c));
    if (changed_status)
        ctrl_trace(w->c, "ProvisioningRequestUpdated",
                   json_pack("{s:s,s:s,s:s,s:s,s:s}", "provisioningRequest", w->key,
                             "condition", type, "status", status, "reason", reason, "message",
                             message));
}

void pr_timer(struct pr_work *w, int64_t at_ms)
{
    if (at_ms != INT64_MAX && at_ms != PROV_NEVER)
        ctrl_enqueue_at(w->c, w->ctx->rid_autoscaler, w->ns, w->name, at_ms);
}

void pr_fail(struct pr_work *w, const char *reason, const char *message)
{
    pr_set_cond(w, "Failed", "True", reason, message);
    nodes_pending_drop(w->ctx, NULL, w->key);
    json_object_del(w->ctx->provreqs, w->key);
    w->state = NULL;
}

static int64_t param_seconds_ms(const json_t *pr, const char *key, int64_t def)
{
    const char *v = JX_STR(pr, "spec", "parameters", key);
    char *end;
    long long s = v ? strtoll(v, &end, 10) : 0;
    if (!v || *end || s <= 0 || s > INT64_MAX / 1000)
        return def; /* ignored when not a positive number, as GKE does */
    return (int64_t)s * 1000;
}

static int64_t provisioned_at(const struct pr_work *w)
{
    json_t *v = w->state ? json_object_get(w->state, "provisionedAt") : NULL;
    return v ? json_integer_value(v) : api_cond_time_ms(w->pr, "Provisioned");
}

/* Delete every Node the request brought; returns how many. */
static int delete_request_nodes(struct ctrl *c, const char *key, const char *reason)
{
    json_t *all = store_list(ctrl_store(c), KIND_NODE, NULL, NULL);
    json_t *names = json_array();
    const char *pool = NULL;
    size_t i;
    json_t *n;
    json_array_foreach(all, i, n) {
        const char *k = api_annotation(n, ANNOT_PROVREQ);
        if (k && !strcmp(k, key)) {
            json_array_append_new(names, json_string(api_name(n)));
            pool = api_label(n, LABEL_NODEPOOL);
        }
    }
    int gone = nodes_delete(c, names);
    if (gone > 0)
        ctrl_trace(c, "NodesScaledDown",
                   json_pack("{s:s,s:O,s:i,s:s,s:s}", "nodePool", jx_or_empty(pool), "nodes",
                             names, "count", gone, "reason", reason, "provisioningRequest", key));
    json_decref(names);
    json_decref(all);
    return gone;
}

static void revoke(struct pr_work *w)
{
    pr_set_cond(w, "CapacityRevoked", "True", "CapacityRevoked",
                "Capacity provisioned for the Provisioning Request was reclaimed and is no "
                "longer available in the cluster.");
    delete_request_nodes(w->c, w->key, "CapacityRevoked");
    json_object_del(w->ctx->provreqs, w->key);
    w->state = NULL;
}

/* A provisioned request: booking, then (queued) the max run duration. */
static void provisioned_step(struct pr_work *w)
{
    int64_t now = ctrl_now(w->c), at = provisioned_at(w);
    const struct prc_texts *t = prc_texts(w->cls);
    if (!api_cond_is_true(w->pr, "BookingExpired")) {
        int64_t end = at + ctrl_cfg(w->c)->booking_duration_ms;
        if (now >= end)
            pr_set_cond(w, "BookingExpired", "True", t->booking_reason, t->booking_msg);
        else
            pr_timer(w, end);
    }
    if (w->cls == PRC_QUEUED) {
        int64_t end = at + param_seconds_ms(w->pr, "maxRunDurationSeconds", MAX_RUN_DEFAULT_MS);
        if (now >= end)
            revoke(w);
        else
            pr_timer(w, end);
    }
}

int pr_finish_pending(struct pr_work *w, bool *waiting)
{
    int64_t now = ctrl_now(w->c);
    int made = 0;
    *waiting = false;
    struct nodes_pending **pp = &w->ctx->pending;
    while (*pp) {
        struct nodes_pending *p = *pp;
        if (!p->provreq_key || strcmp(p->provreq_key, w->key)) {
            pp = &p->next;
            continue;
        }
        if (p->ready_at_ms > now) {
            *waiting = true;
            pr_timer(w, p->ready_at_ms);
            pp = &p->next;
            continue;
        }
        *pp = p->next;
        struct prov_pool *pool = nodes_pool_get(ctrl_store(w->c), p->pool);
        if (pool) {
            json_t *names = nodes_create(w->c, pool, p->n_nodes, w->key);
            nodes_report_scaled_up(w->c, pool->name, names, w->key);
            made += (int)json_array_size(names);
            json_decref(names);
            prov_pool_release(pool);
            xfree(pool);
        }
        xfree(p->pool);
        xfree(p->provreq_key);
        xfree(p);
    }
    return made;
}

static void write_back(struct ctrl *c, const json_t *orig, json_t *cp)
{
    if (jx_equal(JX_GET(orig, "status"), JX_GET(cp, "status")))
        return;
    JX_DEL(cp, "metadata", "resourceVersion");
    store_update(ctrl_store(c), KIND_PROVISIONINGREQUEST, api_namespace(orig), cp,
                 STORE_UPDATE_STATUS, NULL);
}

/* Not provisioned yet: the wait limit, the templates, then the class. */
static void pending_step(struct pr_work *w)
{
    int64_t now = ctrl_now(w->c), created = api_creation_ms(w->pr);
    int64_t valid = param_seconds_ms(w->pr, "ValidUntilSeconds", 0);
    int64_t deadline = created + (valid ? valid : ctrl_cfg(w->c)->provisioning_max_wait_ms);
    const struct prc_texts *t = prc_texts(w->cls);
    if (now >= deadline) {
        if (w->cls == PRC_QUEUED || !valid)
            pr_fail(w, t->expired_reason, t->expired_msg);
        else
            pr_fail(w, "WaitTimeExceeded", texts_queued.expired_msg);
        return;
    }
    pr_timer(w, deadline);
    char msg[512];
    int rc = pr_load_templates(w, msg, sizeof(msg));
    if (rc == CU_ENOTFOUND && now < created + TEMPLATE_GRACE_MS) {
        pr_timer(w, created + TEMPLATE_GRACE_MS);
        return;
    }
    if (rc != 0) {
        pr_fail(w, "FailedToCreatePods", msg);
        return;
    }
    if (w->cls == PRC_QUEUED)
        pr_step_queued(w);
    else if (w->cls == PRC_ATOMIC)
        pr_step_atomic(w);
    else
        pr_step_check(w);
}

void nodes_provreq_reconcile(struct ctrl *c, const char *ns, const char *name)
{
    struct nodes_ctx *ctx = nodes_ctx(c);
    char *key = xasprintf("%s/%s", ns, name);
    json_t *pr = store_get(ctrl_store(c), KIND_PROVISIONINGREQUEST, ns, name);
    enum prc cls;
    if (!pr || api_is_deleting(pr) || !class_of(pr, &cls) || api_cond_is_true(pr, "Failed") ||
        api_cond_is_true(pr, "CapacityRevoked")) {
        nodes_pending_drop(ctx, NULL, key);
        json_object_del(ctx->provreqs, key);
        json_decref(pr);
        xfree(key);
        return;
    }
    struct pr_work w = {c, ctx, cls, ns, name, key, jx_deep_copy(pr), NULL, NULL, 0};
    w.state = json_object_get(ctx->provreqs, key);
    if (!w.state) {
        w.state = json_object();
        json_object_set_new(ctx->provreqs, key, w.state);
        /* accepted by a previous server (this one keeps its state until the
         * request ends): its capacity was asked for when it was accepted */
        if (api_cond_is_true(pr, "Accepted") && !api_cond_is_true(pr, "Provisioned"))
            json_object_set_new(w.state, "askedAt",
                                json_integer(api_cond_time_ms(pr, "Accepted")));
    }
    if (api_cond_is_true(pr, "Provisioned")) {
        bool waiting;
        pr_finish_pending(&w, &waiting); /* best-effort-atomic nodes arriving */
        provisioned_step(&w);
    } else {
        pending_step(&w);
    }
    write_back(c, pr, w.pr);
    for (size_t i = 0; i < w.n_podsets; i++)
        api_podset_release(&w.podsets[i]);
    xfree(w.podsets);
    json_decref(w.pr);
    json_decref(pr);
    xfree(key);
}

bool nodes_provreq_booked(struct ctrl *c, const char *provreq_key)
{
    const char *slash = strchr(provreq_key, '/');
    if (!slash)
        return false;
    char *ns = xstrndup(provreq_key, (size_t)(slash - provreq_key));
    json_t *pr = store_get(ctrl_store(c), KIND_PROVISIONINGREQUEST, ns, slash + 1);
    xfree(ns);
    bool booked = pr && api_cond_is_true(pr, "Provisioned") &&
                  !api_cond_is_true(pr, "BookingExpired") && !api_cond_is_true(pr, "Failed") &&
                  !api_cond_is_true(pr, "CapacityRevoked");
    json_decref(pr);
    return booked;
}

bool pr_has_pending(const struct pr_work *w)
{
    for (const struct nodes_pending *p = w->ctx->pending; p; p = p->next)
        if (p->provreq_key && !strcmp(p->provreq_key, w->key))
            return true;
    return false;
}

/* Mark one request CapacityRevoked (if it still holds capacity) and delete
 * its nodes. */
static void revoke_key(struct ctrl *c, const char *key)
{
    const char *slash = strchr(key, '/');
    char *ns = xstrndup(key, (size_t)(slash - key));
    json_t *pr = store_get(ctrl_store(c), KIND_PROVISIONINGREQUEST, ns, slash + 1);
    enum prc cls;
    if (pr && class_of(pr, &cls) && !api_cond_is_true(pr, "Failed") &&
        !api_cond_is_true(pr, "CapacityRevoked")) {
        struct pr_work w = {c, nodes_ctx(c), cls, ns, slash + 1, (char *)key,
                            jx_deep_copy(pr), NULL, NULL, 0};
        revoke(&w);
        write_back(c, pr, w.pr);
        json_decref(w.pr);
    } else {
        delete_request_nodes(c, key, "CapacityRevoked");
    }
    json_decref(pr);
    xfree(ns);
}

/* The nodes a revocation of n nodes (0 = all) takes: by name, extended to
 * whole slices; the requests whose nodes are among them go entirely. */
static json_t *revoked_nodes(struct ctrl *c, const char *pool, int n, json_t *keys)
{
    json_t *all = store_list(ctrl_store(c), KIND_NODE, NULL, NULL);
    json_t *slices = json_object(), *gone = json_array();
    size_t i;
    json_t *node;
    int taken = 0;
    json_array_foreach(all, i, node) {
        const char *p = api_label(node, LABEL_NODEPOOL);
        if (!p || strcmp(p, pool) || (n > 0 && taken >= n))
            continue;
        taken++;
        const char *slice = api_annotation(node, ANNOT_SLICE);
        if (slice)
            json_object_set_new(slices, slice, json_true());
    }
    taken = 0;
    json_array_foreach(all, i, node) {
        const char *p = api_label(node, LABEL_NODEPOOL);
        const char *slice = api_annotation(node, ANNOT_SLICE);
        if (!p || strcmp(p, pool))
            continue;
        bool in_slice = slice && json_object_get(slices, slice);
        if (!in_slice && n > 0 && taken >= n)
            continue;
        taken++;
        const char *key = api_annotation(node, ANNOT_PROVREQ);
        if (key)
            json_object_set_new(keys, key, json_true());
        else
            json_array_append_new(gone, json_string(api_name(node)));
    }
    json_decref(slices);
    json_decref(all);
    return gone;
}

void nodes_provreq_revoke(struct ctrl *c, const struct prov_event *ev)
{
    json_t *keys = json_object();
    json_t *gone = revoked_nodes(c, ev->pool, ev->n_nodes, keys);
    const char *key;
    json_t *v;
    json_object_foreach(keys, key, v) {
        revoke_key(c, key);
    }
    int n = nodes_delete(c, gone);
    if (n > 0)
        ctrl_trace(c, "NodesScaledDown",
                   json_pack("{s:s,s:O,s:i,s:s}", "nodePool", ev->pool, "nodes", gone, "count",
                             n, "reason", ev->reason ? ev->reason : "CapacityRevoked"));
    json_t *pool = store_get(ctrl_store(c), KIND_NODEPOOL, NULL, ev->pool);
    if (pool && (n > 0 || json_object_size(keys) > 0))
        ctrl_event(c, pool, "Warning", ev->reason ? ev->reason : "CapacityRevoked", "%s",
                   ev->message && ev->message[0] ? ev->message
                                                 : "the provider took capacity back");
    json_decref(pool);
    json_decref(gone);
    json_decref(keys);
}
