/*
 * nodes/scaledown: the autoscaler's scale-down (cluster autoscaler's
 * --scale-down-unneeded-time, per pool spec.scaleDownUnneededSeconds). A
 * node of an autoscaling pool is unneeded while no non-terminated pod is
 * bound to it (nor placed on it by the scale-up simulation) and no active
 * ProvisioningRequest booking protects it; after the unneeded time it is
 * removed, oldest names first, never below minNodeCount, and a multi-host
 * slice only as a whole (all its hosts unneeded).
 *
 * The "unneeded since" times live in memory (ctx->idle_since): a restarted
 * control plane starts counting again, as the cluster autoscaler does.
 */
#include <string.h>

#include "api/meta.h"
#include "ctrl/nodes/nodes.h"
#include "util/jsonx.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

/* The unneeded state of one node; returns true when due for removal. */
static bool track_idle(struct ctrl *c, struct nodes_ctx *ctx, const struct nodes_node *n,
                       int64_t unneeded_ms, int64_t *next)
{
    int64_t now = ctrl_now(c);
    bool idle = n->n_pods == 0 && !(n->provreq && nodes_provreq_booked(c, n->provreq));
    if (!idle) {
        json_object_del(ctx->idle_since, n->name);
        return false;
    }
    json_t *since = json_object_get(ctx->idle_since, n->name);
    if (!since) {
        since = json_integer(now);
        json_object_set_new(ctx->idle_since, n->name, since);
    }
    int64_t due = json_integer_value(since) + unneeded_ms;
    if (due <= now)
        return true;
    if (due < *next)
        *next = due;
    return false;
}

/* The group a node leaves with: its slice for multi-host pools, else itself. */
static const char *group_of(const struct prov_pool *p, const struct nodes_node *n)
{
    return p->unit > 1 && n->slice ? n->slice : n->name;
}

static void report(struct ctrl *c, const struct nodes_pool_item *it, json_t *gone,
                   int64_t unneeded_ms)
{
    int n = nodes_delete(c, gone);
    if (n <= 0)
        return;
    ctrl_trace(c, "NodesScaledDown",
               json_pack("{s:s,s:O,s:i,s:s}", "nodePool", it->pool.name, "nodes", gone, "count",
                         n, "reason", "Unneeded"));
    char age[TIMEFMT_LEN];
    timefmt_age(unneeded_ms, age);
    char *list = jx_dumps(gone);
    ctrl_event(c, it->obj, "Normal", "ScaleDown",
               "Scale-down: removed %d unneeded node(s) of node pool %s (idle for %s): %s", n,
               it->pool.name, age, list);
    xfree(list);
}

static int64_t pool_down(struct ctrl *c, struct nodes_ctx *ctx, const struct nodes_snap *snap,
                         const struct nodes_pool_item *it, json_t *seen)
{
    const struct prov_pool *p = &it->pool;
    int64_t unneeded = p->scale_down_unneeded_ms >= 0 ? p->scale_down_unneeded_ms
                                                      : ctrl_cfg(c)->scale_down_unneeded_ms;
    int64_t next = INT64_MAX;
    json_t *groups = json_object(); /* group -> [names], insertion = name order */
    json_t *blocked = json_object(); /* groups with a member not due */
    int remaining = 0;
    for (size_t i = 0; i < snap->n; i++) {
        const struct nodes_node *n = &snap->nodes[i];
        if (n->is_virtual || strcmp(n->pool, p->name))
            continue;
        json_object_set_new(seen, n->name, json_true());
        remaining++;
        const char *g = group_of(p, n);
        json_t *members = json_object_get(groups, g);
        if (!members)
            json_object_set_new(groups, g, members = json_array());
        json_array_append_new(members, json_string(n->name));
        if (!track_idle(c, ctx, n, unneeded, &next))
            json_object_set_new(blocked, g, json_true());
    }
    json_t *gone = json_array();
    const char *g;
    json_t *members;
    json_object_foreach(groups, g, members) {
        int size = (int)json_array_size(members);
        if (json_object_get(blocked, g) || remaining - size < p->min_nodes)
            continue;
        json_array_extend(gone, members);
        remaining -= size;
    }
    if (json_array_size(gone)) {
        report(c, it, gone, unneeded);
        size_t i;
        json_t *v;
        json_array_foreach(gone, i, v) {
            json_object_del(ctx->idle_since, json_string_value(v));
        }
    }
    json_decref(gone);
    json_decref(groups);
    json_decref(blocked);
    return next;
}

int64_t nodes_scale_down(struct ctrl *c, struct nodes_ctx *ctx, const struct nodes_snap *snap,
                         const struct nodes_pools *pools)
{
    int64_t next = INT64_MAX;
    json_t *seen = json_object();
    for (size_t k = 0; k < pools->n; k++) {
        if (!pools->items[k].pool.autoscaling)
            continue;
        int64_t t = pool_down(c, ctx, snap, &pools->items[k], seen);
        if (t < next)
            next = t;
    }
    /* forget nodes that are gone or no longer in an autoscaling pool */
    const char *k;
    json_t *v, *tmp;
    json_object_foreach_safe(ctx->idle_since, tmp, k, v) {
        if (!json_object_get(seen, k))
            json_object_del(ctx->idle_since, k);
    }
    json_decref(seen);
    return next;
}
