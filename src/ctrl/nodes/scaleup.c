/*
 * nodes/scaleup: the autoscaler's scale-up for pending pods (see
 * autoscaler.c for the pass). Pods are taken oldest first; each is placed,
 * in simulation, on the first node that fits it — existing nodes, then
 * nodes in flight, then nodes planned in this pass — and only a pod that
 * fits nowhere opens new capacity: whole units (a multi-host slice) of the
 * first autoscaling, non-queued pool by name whose node would fit it,
 * within maxNodeCount. Each pool with planned nodes makes one provider
 * request. As the cluster autoscaler, it tells the pods with events:
 * TriggeredScaleUp, or FailedScaleUp on a stockout (retried later).
 */
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "ctrl/nodes/nodes.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

void nodes_pools_load(struct store *s, struct nodes_pools *out)
{
    memset(out, 0, sizeof(*out));
    json_t *list = store_list(s, KIND_NODEPOOL, NULL, NULL);
    out->items = xcalloc(json_array_size(list) + 1, sizeof(*out->items));
    size_t i;
    json_t *obj;
    json_array_foreach(list, i, obj) {
        struct diag d;
        diag_init(&d);
        struct nodes_pool_item *it = &out->items[out->n];
        if (!api_is_deleting(obj) && prov_pool_from_json(obj, &it->pool, &d) == 0) {
            if (it->pool.slurm_partition) { /* its partition sizes it (slurmpool.c) */
                prov_pool_release(&it->pool);
            } else {
                it->obj = json_incref(obj);
                out->n++;
            }
        }
        diag_release(&d);
    }
    json_decref(list);
}

void nodes_pools_release(struct nodes_pools *pools)
{
    for (size_t i = 0; i < pools->n; i++) {
        json_decref(pools->items[i].obj);
        prov_pool_release(&pools->items[i].pool);
    }
    XFREE(pools->items);
    pools->n = 0;
}

int nodes_snap_count_pool(const struct nodes_snap *snap, const char *pool)
{
    int n = 0;
    for (size_t i = 0; i < snap->n; i++)
        n += !snap->nodes[i].is_virtual && !strcmp(snap->nodes[i].pool, pool);
    return n;
}

/* A pod the binder could not place, waiting for ordinary scale-up. */
static bool wants_scale_up(const json_t *pod)
{
    const char *nn = JX_STR(pod, "spec", "nodeName");
    if (nn && nn[0]) /* bound: most pods, so before the condition scan */
        return false;
    json_t *c = api_cond_get(pod, "PodScheduled");
    return !api_is_deleting(pod) && nodes_pod_is_active(pod) &&
           json_array_size(JX_GET(pod, "spec", "schedulingGates")) == 0 && c &&
           !strcmp(jx_or_empty(JX_STR(c, "status")), "False") &&
           !strcmp(jx_or_empty(JX_STR(c, "reason")), "Unschedulable") && !nodes_pod_provreq(pod);
}

struct cand {
    const json_t *pod;
    int64_t created_ms;
    size_t order;
};

static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->created_ms != y->created_ms)
        return x->created_ms < y->created_ms ? -1 : 1;
    return x->order < y->order ? -1 : (x->order > y->order);
}

bool nodes_place_existing(struct nodes_snap *snap, const struct api_podset *ps)
{
    for (size_t i = 0; i < snap->n; i++) {
        if (nodes_fit(&snap->nodes[i], ps, NULL)) {
            nodes_node_account(&snap->nodes[i], ps);
            return true;
        }
    }
    return false;
}

static bool pool_node_fits(const struct prov_pool *pool, const struct api_podset *ps)
{
    struct nodes_snap tmp = {0};
    nodes_snap_add_virtual(&tmp, pool);
    bool ok = nodes_fit(&tmp.nodes[0], ps, NULL);
    nodes_snap_release(&tmp);
    return ok;
}

int nodes_plan_new(struct nodes_ctx *ctx, struct nodes_snap *snap,
                    const struct nodes_pools *pools, int *planned, const struct api_podset *ps,
                    int64_t now)
{
    for (size_t k = 0; k < pools->n; k++) {
        const struct prov_pool *p = &pools->items[k].pool;
        json_t *retry = json_object_get(ctx->pool_retry_at, p->name);
        if (!p->autoscaling || p->queued || (retry && json_integer_value(retry) > now))
            continue;
        if (!pool_node_fits(p, ps))
            continue;
        int have = nodes_snap_count_pool(snap, p->name) + nodes_pending_count(ctx, p->name) +
                   planned[k];
        if (have + p->unit > p->max_nodes)
            continue;
        planned[k] += p->unit;
        size_t first = snap->n;
        for (int u = 0; u < p->unit; u++)
            nodes_snap_add_virtual(snap, p);
        nodes_node_account(&snap->nodes[first], ps);
        return (int)k;
    }
    return -1;
}

static void tell_pods(struct ctrl *c, json_t *pods, const char *type, const char *reason,
                      const char *msg)
{
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod) {
        ctrl_event(c, pod, type, reason, "%s", msg);
    }
}

static void request_planned(struct ctrl *c, struct nodes_snap *snap,
                            const struct nodes_pools *pools, const int *planned, json_t **pods)
{
    for (size_t k = 0; k < pools->n; k++) {
        if (planned[k] == 0)
            continue;
        const struct prov_pool *p = &pools->items[k].pool;
        int before = nodes_snap_count_pool(snap, p->name) +
                     nodes_pending_count(nodes_ctx(c), p->name);
        char msg[256], *text;
        if (nodes_request(c, pools->items[k].obj, p, planned[k], NULL, 0, msg, sizeof(msg)) ==
            PROV_NEVER) {
            text = xasprintf("Node scale up in node pool %s associated with this pod failed: %s. "
                             "Pod is at risk of not being scheduled.", p->name, msg);
            tell_pods(c, pods[k], "Warning", "FailedScaleUp", text);
            ctrl_event(c, pools->items[k].obj, "Warning", "FailedScaleUp",
                       "Cannot add %d node(s): %s", planned[k], msg);
        } else {
            text = xasprintf("pod triggered scale-up: [{%s %d->%d (max: %d)}]", p->name, before,
                             before + planned[k], p->max_nodes);
            tell_pods(c, pods[k], "Normal", "TriggeredScaleUp", text);
        }
        xfree(text);
    }
}

static struct cand *collect(json_t *all, size_t *n)
{
    struct cand *cands = xcalloc(json_array_size(all) + 1, sizeof(*cands));
    size_t i;
    json_t *pod;
    *n = 0;
    json_array_foreach(all, i, pod) {
        if (wants_scale_up(pod))
            cands[(*n)++] = (struct cand){pod, api_creation_ms(pod), i};
    }
    qsort(cands, *n, sizeof(*cands), cand_cmp);
    return cands;
}

void nodes_scale_up(struct ctrl *c, struct nodes_ctx *ctx, struct nodes_snap *snap,
                    const struct nodes_pools *pools)
{
    for (const struct nodes_pending *p = ctx->pending; p; p = p->next) {
        for (size_t k = 0; !p->provreq_key && k < pools->n; k++)
            if (!strcmp(pools->items[k].pool.name, p->pool))
                for (int u = 0; u < p->n_nodes; u++)
                    nodes_snap_add_virtual(snap, &pools->items[k].pool);
    }
    json_t *all = store_list(ctrl_store(c), KIND_POD, NULL, NULL);
    size_t n;
    struct cand *cands = collect(all, &n);
    int *planned = xcalloc(pools->n + 1, sizeof(int));
    json_t **pods = xcalloc(pools->n + 1, sizeof(json_t *));
    bool any = false;
    for (size_t i = 0; i < n; i++) {
        struct api_podset ps;
        if (nodes_pod_view(cands[i].pod, &ps) != 0)
            continue;
        int k = nodes_place_existing(snap, &ps)
                    ? -1
                    : nodes_plan_new(ctx, snap, pools, planned, &ps, ctrl_now(c));
        if (k >= 0) {
            if (!pods[k])
                pods[k] = json_array();
            json_array_append(pods[k], (json_t *)cands[i].pod);
            any = true;
        }
        api_podset_release(&ps);
    }
    if (any)
        request_planned(c, snap, pools, planned, pods);
    for (size_t k = 0; k < pools->n; k++)
        json_decref(pods[k]);
    xfree(pods);
    xfree(planned);
    xfree(cands);
    json_decref(all);
}
