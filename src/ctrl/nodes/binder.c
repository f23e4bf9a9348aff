/*
 * nodes/binder: cueue's kube-scheduler. Binds each unbound pod (no spec.nodeName,
 * no schedulingGates, not being deleted) to a node: kube-scheduler's
 * filters (node unschedulable, taints NoSchedule/NoExecute vs tolerations,
 * nodeSelector and required node affinity, requests vs allocatable minus
 * the requests of the node's non-terminated pods), then the most allocated
 * fitting node (bin packing, so idle nodes can scale down), ties by name.
 * Pods consuming a ProvisioningRequest go only to the nodes of the
 * request's node pool, its own nodes first. Pods of a Kueue TAS pod set
 * (label kueue.x-k8s.io/tas, annotation kueue.x-k8s.io/workload) go only
 * to the nodes of their pod set's topologyAssignment, each domain taking
 * as many of the pod set's pods as its count (Kueue's TopologyUngater,
 * which cueue does without a scheduling gate: the binder is its own).
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
#define NOT_TAS_DOMAIN "node(s) didn't belong to the pod set's assigned topology domains"
#define PODSET_LABEL "kueue.x-k8s.io/podset"

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

/* ---- Kueue TAS ---- */

/* A TAS pod set's assignment and the nodes its pods were bound to (this
 * pass included). */
struct tas_set {
    char *key;              /* ns \x1f workload \x1f podset */
    json_t *ta;             /* topologyAssignment (reference) */
    json_t *bound;          /* node names of its bound active pods */
    struct tas_set *next;
};

static bool node_in_domain(const struct nodes_node *n, const json_t *levels, const json_t *values)
{
    size_t l;
    json_t *k;
    json_array_foreach(levels, l, k) {
        const char *v = api_labels_get(&n->labels, jx_or_empty(json_string_value(k)));
        if (!v || strcmp(v, jx_or_empty(json_string_value(json_array_get(values, l)))))
            return false;
    }
    return true;
}

/* The pod's TAS pod set (loaded on first use), or NULL for other pods. */
static struct tas_set *tas_set_of(struct ctrl *c, struct tas_set **sets, const json_t *pods,
                                  const json_t *pod)
{
    const char *wl = api_annotation(pod, ANNOT_KUEUE_WORKLOAD), *ps = api_label(pod, PODSET_LABEL);
    if (!api_label(pod, LABEL_KUEUE_TAS) || !wl || !ps)
        return NULL;
    const char *ns = jx_or_empty(api_namespace(pod));
    char *key = xasprintf("%s\x1f%s\x1f%s", ns, wl, ps);
    for (struct tas_set *t = *sets; t; t = t->next)
        if (!strcmp(t->key, key)) {
            xfree(key);
            return t;
        }
    struct tas_set *t = xcalloc(1, sizeof(*t));
    t->key = key;
    t->bound = json_array();
    json_t *w = store_get(ctrl_store(c), KIND_WORKLOAD, ns, wl);
    size_t i;
    json_t *psa;
    json_array_foreach(JX_GET(w, "status", "admission", "podSetAssignments"), i, psa) {
        if (!strcmp(jx_or_empty(JX_STR(psa, "name")), ps))
            t->ta = json_incref(json_object_get(psa, "topologyAssignment"));
    }
    json_decref(w);
    json_t *p;
    json_array_foreach(pods, i, p) {
        const char *nn = JX_STR(p, "spec", "nodeName");
        if (nn && nn[0] && nodes_pod_is_active(p) && api_label(p, LABEL_KUEUE_TAS) &&
            !strcmp(jx_or_empty(api_namespace(p)), ns) &&
            !strcmp(jx_or_empty(api_annotation(p, ANNOT_KUEUE_WORKLOAD)), wl) &&
            !strcmp(jx_or_empty(api_label(p, PODSET_LABEL)), ps))
            json_array_append_new(t->bound, json_string(nn));
    }
    t->next = *sets;
    *sets = t;
    return t;
}

/* Whether node n is in a domain of t that still has room for a pod. */
static bool tas_node_allowed(const struct tas_set *t, const struct nodes_snap *snap,
                             const struct nodes_node *n)
{
    if (!t->ta)
        return false; /* no assignment (yet): wait for it */
    const json_t *levels = json_object_get(t->ta, "levels");
    size_t d;
    json_t *dom;
    json_array_foreach(json_object_get(t->ta, "domains"), d, dom) {
        const json_t *values = json_object_get(dom, "values");
        if (!node_in_domain(n, levels, values))
            continue;
        json_int_t used = 0;
        size_t i;
        json_t *b;
        json_array_foreach(t->bound, i, b) {
            const struct nodes_node *bn = nodes_snap_find((struct nodes_snap *)snap,
                                                          json_string_value(b));
            if (bn && node_in_domain(bn, levels, values))
                used++;
        }
        return used < JX_INT(dom, 0, "count");
    }
    return false;
}

static void tas_sets_free(struct tas_set *t)
{
    while (t) {
        struct tas_set *next = t->next;
        xfree(t->key);
        json_decref(t->ta);
        json_decref(t->bound);
        xfree(t);
        t = next;
    }
}

/* The best node for the pod (within its TAS domains when tas is given),
 * or -1 with the scheduler's message. */
static long choose(struct ctrl *c, struct nodes_snap *snap, const json_t *pod,
                   const struct api_podset *ps, const struct tas_set *tas, char **msg)
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
        } else if (tas && !tas_node_allowed(tas, snap, n)) {
            why.reasons[why.n++] = xstrdup(NOT_TAS_DOMAIN);
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
        struct tas_set *sets = NULL;
        for (i = 0; i < n; i++) {
            struct api_podset ps;
            if (nodes_pod_view(cands[i].pod, &ps) != 0)
                continue;
            char *msg;
            struct tas_set *tas = tas_set_of(c, &sets, pods, cands[i].pod);
            long k = choose(c, &snap, cands[i].pod, &ps, tas, &msg);
            if (k >= 0 && bind_pod(c, cands[i].pod, snap.nodes[k].name)) {
                nodes_node_account(&snap.nodes[k], &ps);
                if (tas)
                    json_array_append_new(tas->bound, json_string(snap.nodes[k].name));
            } else if (k >= 0 || !mark_unschedulable(c, cands[i].pod, msg))
                again = true;
            xfree(msg);
            api_podset_release(&ps);
        }
        tas_sets_free(sets);
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
