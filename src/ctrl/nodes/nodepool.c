/*
 * nodes/nodepool: the NodePool reconciler (docs/nodepool.md, docs/nodes.md).
 * Keeps each pool's floor of nodes (initialNodeCount at creation; a fixed
 * size without autoscaling; minNodeCount with it) by asking the capacity
 * provider through the autoscaler's request path, deletes a deleted pool's
 * Nodes, and writes status: observedGeneration, nodeCount, readyNodeCount,
 * and a Ready condition whose message explains an invalid pool (unknown
 * machine type, bad topology) — such a pool gets no nodes.
 *
 * It also owns the state the node reconcilers share (struct nodes_ctx),
 * found by the others through nodes_ctx().
 *
 * "At creation" is a pool whose status has no observedGeneration yet: the
 * first reconcile applies initialNodeCount once; an autoscaled pool may
 * then shrink to minNodeCount.
 */
#include <string.h>

#include "api/meta.h"
#include "api/schema.h"
#include "provider/catalog.h"
#include "provider/slurm.h"
#include "ctrl/nodes/nodes.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

struct nodes_ctx *nodes_ctx(struct ctrl *c)
{
    void *self = NULL;
    return ctrl_find(c, "nodepool", &self) >= 0 ? self : NULL;
}

struct prov_pool *nodes_pool_get(struct store *s, const char *name)
{
    json_t *obj = store_get(s, KIND_NODEPOOL, NULL, name);
    if (!obj)
        return NULL;
    struct prov_pool *p = xcalloc(1, sizeof(*p));
    struct diag d;
    diag_init(&d);
    int rc = api_is_deleting(obj) ? -1 : prov_pool_from_json(obj, p, &d);
    diag_release(&d);
    json_decref(obj);
    if (rc != 0) {
        xfree(p);
        return NULL;
    }
    return p;
}

static void pool_gone(struct ctrl *c, struct nodes_ctx *ctx, const char *name)
{
    json_t *names = nodes_of_pool(ctrl_store(c), name);
    int n = nodes_delete(c, names);
    if (n > 0)
        ctrl_trace(c, "NodesScaledDown",
                   json_pack("{s:s,s:O,s:i,s:s}", "nodePool", name, "nodes", names, "count", n,
                             "reason", "NodePoolDeleted"));
    json_decref(names);
    nodes_pending_drop(ctx, name, NULL);
    json_object_del(ctx->pool_retry_at, name);
    json_object_del(ctx->slurm_refresh_at, name);
}

static void count_nodes(struct store *s, const char *pool, int *total, int *ready)
{
    json_t *all = store_list(s, KIND_NODE, NULL, NULL);
    size_t i;
    json_t *n;
    *total = *ready = 0;
    json_array_foreach(all, i, n) {
        const char *p = api_label(n, LABEL_NODEPOOL);
        if (!p || strcmp(p, pool))
            continue;
        (*total)++;
        *ready += api_cond_is_true(n, "Ready");
    }
    json_decref(all);
}

static void write_status(struct ctrl *c, const json_t *obj, const char *ready_status,
                         const char *reason, const char *message)
{
    json_t *cp = jx_deep_copy(obj);
    JX_DEL(cp, "metadata", "resourceVersion");
    int total, ready;
    count_nodes(ctrl_store(c), api_name(obj), &total, &ready);
    json_t *st = JX_OBJ(cp, "status");
    json_object_set_new(st, "observedGeneration",
                        json_integer(JX_INT(obj, 0, "metadata", "generation")));
    json_object_set_new(st, "nodeCount", json_integer(total));
    json_object_set_new(st, "readyNodeCount", json_integer(ready));
    api_cond_set(cp, "Ready", ready_status, reason, message, ctrl_now(c));
    if (!jx_equal(JX_GET(obj, "status"), st))
        store_update(ctrl_store(c), KIND_NODEPOOL, NULL, cp, STORE_UPDATE_STATUS, NULL);
    json_decref(cp);
}

/* Surplus nodes of a fixed-size pool, highest names first, whole slices. */
static void shrink_fixed(struct ctrl *c, const struct prov_pool *p, int surplus)
{
    json_t *names = nodes_of_pool(ctrl_store(c), p->name);
    json_t *gone = json_array();
    surplus -= surplus % p->unit;
    for (size_t i = json_array_size(names); i-- > 0 && (int)json_array_size(gone) < surplus;)
        json_array_append(gone, json_array_get(names, i));
    int n = nodes_delete(c, gone);
    if (n > 0)
        ctrl_trace(c, "NodesScaledDown",
                   json_pack("{s:s,s:O,s:i,s:s}", "nodePool", p->name, "nodes", gone, "count", n,
                             "reason", "NodePoolResized"));
    json_decref(gone);
    json_decref(names);
}

/* Ask for the nodes that bring the pool up to its floor. */
static void keep_floor(struct ctrl *c, struct nodes_ctx *ctx, const json_t *obj,
                       const struct prov_pool *p)
{
    bool first = !JX_GET(obj, "status", "observedGeneration");
    int floor = p->autoscaling ? p->min_nodes : p->initial_nodes;
    if (p->autoscaling && first && p->initial_nodes > floor)
        floor = p->initial_nodes < p->max_nodes ? p->initial_nodes : p->max_nodes;
    int existing, ready;
    count_nodes(ctrl_store(c), p->name, &existing, &ready);
    if (!p->autoscaling && existing > p->initial_nodes) {
        shrink_fixed(c, p, existing - p->initial_nodes);
        return;
    }
    int have = existing + nodes_pending_count(ctx, p->name);
    json_t *retry = json_object_get(ctx->pool_retry_at, p->name);
    if (have >= floor || (retry && json_integer_value(retry) > ctrl_now(c)))
        return;
    int need = floor - have;
    need += (p->unit - need % p->unit) % p->unit;
    char msg[256];
    if (nodes_request(c, obj, p, need, NULL, 0, msg, sizeof(msg)) == PROV_NEVER) {
        ctrl_event(c, obj, "Warning", "FailedScaleUp", "Cannot create %d node(s): %s", need, msg);
        ctrl_enqueue_at(c, ctx->rid_pool, NULL, p->name, ctrl_now(c) + NODES_RETRY_MS);
    }
}

/* A Slurm pool: its Nodes are its partition's, read now and again every
 * NODES_SLURM_REFRESH_MS (one timer pending per pool). An unreachable
 * slurmctld or a missing partition leaves the Nodes as they were and makes
 * the pool Ready=False with the reason (an event when it first happens). */
static void slurm_pool(struct ctrl *c, struct nodes_ctx *ctx, const json_t *obj,
                       const struct prov_pool *p)
{
    int64_t now = ctrl_now(c);
    json_t *due = json_object_get(ctx->slurm_refresh_at, p->name);
    if (!due || json_integer_value(due) <= now) {
        json_object_set_new(ctx->slurm_refresh_at, p->name,
                            json_integer(now + NODES_SLURM_REFRESH_MS));
        ctrl_enqueue_at(c, ctx->rid_pool, NULL, p->name, now + NODES_SLURM_REFRESH_MS);
    }
    char msg[512];
    int rc = nodes_slurm_sync(c, ctx, obj, p, msg, sizeof(msg));
    if (rc == 1) { /* the first read is under way */
        ctrl_enqueue_at(c, ctx->rid_pool, NULL, p->name, now + 200);
        return;
    }
    if (rc == 0) {
        write_status(c, obj, "True", "Running", "node pool is running");
        return;
    }
    const char *reason = rc == CU_ENOTFOUND ? "SlurmPartitionNotFound" : "SlurmUnavailable";
    const char *was = NULL;
    size_t i;
    json_t *cond;
    json_array_foreach(JX_GET(obj, "status", "conditions"), i, cond) {
        if (!strcmp(jx_or_empty(JX_STR(cond, "type")), "Ready"))
            was = JX_STR(cond, "reason");
    }
    if (!was || strcmp(was, reason))
        ctrl_event(c, obj, "Warning", reason, "%s", msg);
    write_status(c, obj, "False", reason, msg);
}

static void pool_reconcile(struct ctrl *c, void *self, const char *ns, const char *name)
{
    (void)ns;
    struct nodes_ctx *ctx = self;
    json_t *obj = store_get(ctrl_store(c), KIND_NODEPOOL, NULL, name);
    if (!obj || api_is_deleting(obj)) {
        pool_gone(c, ctx, name);
        json_decref(obj);
        return;
    }
    struct prov_pool p;
    struct diag d;
    diag_init(&d);
    if (prov_pool_from_json(obj, &p, &d) != 0) {
        char *msg = diag_summary(&d);
        write_status(c, obj, "False", "InvalidSpec", msg);
        xfree(msg);
    } else if (p.slurm_partition) {
        slurm_pool(c, ctx, obj, &p);
        prov_pool_release(&p);
    } else {
        keep_floor(c, ctx, obj, &p);
        write_status(c, obj, "True", "Running", "node pool is running");
        prov_pool_release(&p);
    }
    diag_release(&d);
    json_decref(obj);
}

static void pool_on_event(struct ctrl *c, void *self, const struct store_event *ev)
{
    struct nodes_ctx *ctx = self;
    if (ev->kind == KIND_NODEPOOL) {
        ctrl_enqueue(c, ctx->rid_pool, NULL, api_name(ev->obj));
    } else if (ev->kind == KIND_NODE) {
        const char *pool = api_label(ev->obj, LABEL_NODEPOOL);
        if (pool)
            ctrl_enqueue(c, ctx->rid_pool, NULL, pool);
    }
}

static void ctx_free(void *self)
{
    struct nodes_ctx *ctx = self;
    if (!ctx)
        return;
    nodes_pending_drop(ctx, NULL, NULL);
    json_decref(ctx->idle_since);
    json_decref(ctx->pool_retry_at);
    json_decref(ctx->provreqs);
    json_decref(ctx->slurm_refresh_at);
    prov_slurm_reader_free(ctx->slurm_reader);
    if (ctx->own_prov)
        ctx->own_prov->ops->free(ctx->own_prov);
    xfree(ctx);
}

static const struct ctrl_reconciler_ops pool_ops = {
    .name = "nodepool",
    .on_event = pool_on_event,
    .reconcile = pool_reconcile,
    .free = ctx_free,
};

void ctrl__nodepool_register(struct ctrl *c)
{
    /* admission checks NodePools against this catalog (docs/nodepool.md) */
    api_set_machine_catalog(prov_api_catalog());
    struct nodes_ctx *ctx = xcalloc(1, sizeof(*ctx));
    ctx->prov = ctrl_prov(c);
    if (!ctx->prov)
        ctx->prov = ctx->own_prov = prov_local_new();
    ctx->idle_since = json_object();
    ctx->pool_retry_at = json_object();
    ctx->provreqs = json_object();
    ctx->slurm_refresh_at = json_object();
    ctx->rid_pool = ctrl_register(c, &pool_ops, ctx);
    ctx->rid_autoscaler = ctx->rid_binder = ctx->rid_agent = -1;
}
