/*
 * nodes/binder: cueue's kube-scheduler. Binds each unbound pod (no spec.nodeName,
 * no schedulingGates, not being deleted) to a node: kube-scheduler's
 * filters (node unschedulable, taints NoSchedule/NoExecute vs tolerations,
 * nodeSelector and required node affinity, requests vs allocatable minus
 * the requests of the node's non-terminated pods), then the most allocated
 * fitting node (bin packing, so idle nodes can scale down), ties by name.
 * Pods consuming a ProvisioningRequest go only to the nodes of the
 * request's node pool, its own nodes first.
 *
 * A bound pod gets spec.nodeName and PodScheduled=True (event Scheduled);
 * one that fits nowhere PodScheduled=False reason Unschedulable with the
 * scheduler's message (event FailedScheduling), which is what the
 * autoscaler scales up for.
 *
 * One pass (key "bind") handles every unbound pod, highest spec.priority
 * first, then oldest, against one snapshot; it runs again on any change
 * that can free or add room.
 */
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "ctrl/nodes/nodes.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define BIND_KEY "bind"
#define NOT_PR_POOL "node(s) didn't belong to the ProvisioningRequest's node pool"

struct binder {
    int rid;
};

static bool is_unbound(const json_t *pod)
{
    const char *nn = JX_STR(pod, "spec", "nodeName");
    return (!nn || !nn[0]) && !api_is_deleting(pod) && nodes_pod_is_active(pod) &&
           json_array_size(JX_GET(pod, "spec", "schedulingGates")) == 0;
}

struct cand {
    const json_t *pod;
    int64_t priority, created_ms;
    size_t order;
};

static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->priority != y->priority)
        return x->priority > y->priority ? -1 : 1;
    if (x->created_ms != y->created_ms)
        return x->created_ms < y->created_ms ? -1 : 1;
    return x->order < y->order ? -1 : (x->order > y->order);
}

/* The pool (and key) a consuming pod is restricted to, or NULL. Caller
 * frees both. */
static char *provreq_pool(struct ctrl *c, const json_t *pod, char **key)
{
    const char *name = nodes_pod_provreq(pod);
    *key = NULL;
    if (!name)
        return NULL;
    const char *ns = api_namespace(pod);
    json_t *pr = store_get(ctrl_store(c), KIND_PROVISIONINGREQUEST, ns, name);
    const char *pool = pr ? JX_STR(pr, "status", "provisioningClassDetails", "NodePoolName")
                          : NULL;
    char *out = xstrdup(pool);
    *key = xasprintf("%s/%s", jx_or_empty(ns), name);
    json_decref(pr);
    return out;
}

/* The best node for the pod, or -1 with the scheduler's message. */
static long choose(struct ctrl *c, struct nodes_snap *snap, const json_t *pod,
                   const struct api_podset *ps, char **msg)
{
    char *key, *pool = provreq_pool(c, pod, &key);
    long best = -1;
    int64_t best_score = -1;
    bool best_own = false;
    struct nodes_fiterr fe = {0};
    for (size_t i = 0; i < snap->n; i++) {
        const struct nodes_node *n = &snap->nodes[i];
        struct nodes_why why = {0};
        if (n->is_virtual)
            continue;
        if (pool && strcmp(n->pool, pool)) {
            why.reasons[why.n++] = xstrdup(NOT_PR_POOL);
        } else if (nodes_fit(n, ps, &why)) {
            bool own = key && n->provreq && !strcmp(n->provreq, key);
            int64_t score = nodes_score(n, ps);
            if (best < 0 || (own && !best_own) || (own == best_own && score > best_score)) {
                best = (long)i;
                best_score = score;
                best_own = own;
            }
            fe.n_nodes++;
            continue;
        }
        nodes_fiterr_add(&fe, &why);
        nodes_why_release(&why);
    }
    *msg = best < 0 ? nodes_fiterr_message(&fe) : NULL;
    nodes_fiterr_release(&fe);
    xfree(pool);
    xfree(key);
    return best;
}

/* Returns false on a write conflict (the pass runs again). */
static bool bind_pod(struct ctrl *c, const json_t *pod, const char *node)
{
    json_t *cp = jx_deep_copy(pod);
    JX_SET_NEW(cp, json_string(node), "spec", "nodeName");
    api_cond_set(cp, "PodScheduled", "True", "", "", ctrl_now(c));
    nodes_pod_tidy_conditions(cp);
    /* cp is ours alone: stored as it is */
    int rc = store_update_take(ctrl_store(c), KIND_POD, api_namespace(pod), cp, STORE_UPDATE_ALL,
                               NULL);
    if (rc == 0)
        ctrl_event(c, pod, "Normal", "Scheduled", "Successfully assigned %s/%s to %s",
                   api_namespace(pod), api_name(pod), node);
    return rc == 0;
}

static bool mark_unschedulable(struct ctrl *c, const json_t *pod, const char *msg)
{
    json_t *cp = jx_deep_copy(pod);
    int rc = 0;
    if (api_cond_set(cp, "PodScheduled", "False", "Unschedulable", msg, ctrl_now(c))) {
        rc = store_update_take(ctrl_store(c), KIND_POD, api_namespace(pod), json_incref(cp),
                               STORE_UPDATE_STATUS, NULL); /* cp is not changed after */
        if (rc == 0)
            ctrl_event(c, pod, "Warning", "FailedScheduling", "%s", msg);
    }
    json_decref(cp);
    return rc == 0 || rc == CU_ENOTFOUND;
}

static void bind_pass(struct ctrl *c, struct binder *b)
{
    json_t *pods = store_list(ctrl_store(c), KIND_POD, NULL, NULL);
    struct cand *cands = xcalloc(json_array_size(pods) + 1, sizeof(*cands));
    size_t n = 0, i;
    json_t *pod;
    json_array_foreach(pods, i, pod) {
        if (is_unbound(pod))
            cands[n++] = (struct cand){pod, JX_INT(pod, 0, "spec", "priority"),
                                       api_creation_ms(pod), i};
    }
    if (n > 0) {
        qsort(cands, n, sizeof(*cands), cand_cmp);
        struct nodes_snap snap;
        nodes_snap_build(ctrl_store(c), &snap);
        bool again = false;
        for (i = 0; i < n; i++) {
            struct api_podset ps;
            if (nodes_pod_view(cands[i].pod, &ps) != 0)
                continue;
            char *msg;
            long k = choose(c, &snap, cands[i].pod, &ps, &msg);
            if (k >= 0 && bind_pod(c, cands[i].pod, snap.nodes[k].name))
                nodes_node_account(&snap.nodes[k], &ps);
            else if (k >= 0 || !mark_unschedulable(c, cands[i].pod, msg))
                again = true;
            xfree(msg);
            api_podset_release(&ps);
        }
        nodes_snap_release(&snap);
        if (again)
            ctrl_enqueue(c, b->rid, NULL, BIND_KEY);
    }
    xfree(cands);
    json_decref(pods);
}

static void binder_reconcile(struct ctrl *c, void *self, const char *ns, const char *name)
{
    (void)ns;
    (void)name;
    bind_pass(c, self);
}

static void binder_on_event(struct ctrl *c, void *self, const struct store_event *ev)
{
    struct binder *b = self;
    bool relevant = false;
    switch (ev->kind) {
    case KIND_POD:
        /* an unbound pod, or a bound one that frees room */
        relevant = is_unbound(ev->obj) || ev->type == STORE_DELETED ||
                   !nodes_pod_is_active(ev->obj);
        break;
    case KIND_NODE:
    case KIND_PROVISIONINGREQUEST:
        relevant = true;
        break;
    default:
        break;
    }
    if (relevant)
        ctrl_enqueue(c, b->rid, NULL, BIND_KEY);
}

static void binder_free(void *self)
{
    xfree(self);
}

static const struct ctrl_reconciler_ops binder_ops = {
    .name = "binder",
    .on_event = binder_on_event,
    .reconcile = binder_reconcile,
    .free = binder_free,
};

void ctrl__binder_register(struct ctrl *c)
{
    struct binder *b = xcalloc(1, sizeof(*b));
    b->rid = ctrl_register(c, &binder_ops, b);
    struct nodes_ctx *ctx = nodes_ctx(c);
    if (ctx)
        ctx->rid_binder = b->rid;
}
