/*
 * nodes/autoscaler: cueue's cluster autoscaler (docs/nodes.md). One global pass
 * (key "scale") and one key per ProvisioningRequest (nodes/provreq.c).
 *
 * The pass, in order: provider revocations; provider requests that came
 * due (their Nodes are created now); scale-up for pods the binder marked
 * Unschedulable, by simulating them onto existing nodes, nodes in flight,
 * then new nodes of the first autoscaling pool (by name) they fit —
 * whole slices of multi-host TPU pools, never past maxNodeCount, never
 * queued-provisioning pools, never pods consuming a ProvisioningRequest;
 * scale-down (nodes/scaledown.c). Everything that waits is a timer; the
 * pass reschedules itself at the earliest time anything comes due.
 *
 * Pending provider requests live in memory (struct nodes_pending), in
 * creation order, so repeated runs of `cueue sim` decide identically.
 */
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "ctrl/nodes/nodes.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define SCALE_KEY "scale"

/* ---- pending provider requests ---- */

int nodes_pending_count(const struct nodes_ctx *ctx, const char *pool)
{
    int n = 0;
    for (const struct nodes_pending *p = ctx->pending; p; p = p->next)
        if (!strcmp(p->pool, pool))
            n += p->n_nodes;
    return n;
}

static void pending_free(struct nodes_pending *p)
{
    xfree(p->pool);
    xfree(p->provreq_key);
    xfree(p);
}

void nodes_pending_drop(struct nodes_ctx *ctx, const char *pool, const char *provreq_key)
{
    struct nodes_pending **pp = &ctx->pending;
    while (*pp) {
        struct nodes_pending *p = *pp;
        bool match = (!pool || !strcmp(p->pool, pool)) &&
                     (!provreq_key || (p->provreq_key && !strcmp(p->provreq_key, provreq_key)));
        if (match) {
            *pp = p->next;
            pending_free(p);
        } else {
            pp = &p->next;
        }
    }
}

void nodes_wake_scale(struct ctrl *c, int64_t at_ms)
{
    struct nodes_ctx *ctx = nodes_ctx(c);
    int64_t now = ctrl_now(c);
    if (at_ms == PROV_NEVER || at_ms == INT64_MAX)
        return;
    if (at_ms <= now) {
        ctrl_enqueue(c, ctx->rid_autoscaler, NULL, SCALE_KEY);
        return;
    }
    if (ctx->scale_timer_at > now && ctx->scale_timer_at <= at_ms)
        return; /* an earlier pass is scheduled; it reschedules */
    ctx->scale_timer_at = at_ms;
    ctrl_enqueue_at(c, ctx->rid_autoscaler, NULL, SCALE_KEY, at_ms);
}

int64_t nodes_request(struct ctrl *c, const json_t *pool_obj, const struct prov_pool *pool, int n,
                      const char *provreq_key, int64_t asked_ms, char *msg, size_t msglen)
{
    struct nodes_ctx *ctx = nodes_ctx(c);
    int64_t now = ctrl_now(c), ready = PROV_NEVER;
    int64_t asked = asked_ms > 0 && asked_ms < now ? asked_ms : now;
    msg[0] = '\0';
    int rc = ctx->prov->ops->request(ctx->prov, pool_obj, n, provreq_key != NULL, asked, &ready,
                                     msg, msglen);
    if (rc != 0 || ready == PROV_NEVER) {
        if (!msg[0])
            snprintf(msg, msglen, "no capacity for %s in node pool %s", pool->machine->name,
                     pool->name);
        json_object_set_new(ctx->pool_retry_at, pool->name, json_integer(now + NODES_RETRY_MS));
        nodes_wake_scale(c, now + NODES_RETRY_MS);
        return PROV_NEVER;
    }
    if (ready < now)
        ready = now;
    struct nodes_pending *p = xcalloc(1, sizeof(*p));
    p->pool = xstrdup(pool->name);
    p->n_nodes = n;
    p->ready_at_ms = ready;
    p->provreq_key = xstrdup(provreq_key);
    struct nodes_pending **tail = &ctx->pending;
    while (*tail)
        tail = &(*tail)->next;
    *tail = p;
    json_object_del(ctx->pool_retry_at, pool->name);
    nodes_wake_scale(c, ready);
    return ready;
}

void nodes_report_scaled_up(struct ctrl *c, const char *pool, const json_t *names,
                            const char *provreq_key)
{
    size_t n = json_array_size(names);
    if (n == 0)
        return;
    json_t *f = json_pack("{s:s,s:O,s:i}", "nodePool", pool, "nodes", names, "count", (int)n);
    if (provreq_key)
        json_object_set_new(f, "provisioningRequest", json_string(provreq_key));
    ctrl_trace(c, "NodesScaledUp", f);
    json_t *obj = store_get(ctrl_store(c), KIND_NODEPOOL, NULL, pool);
    if (obj) {
        ctrl_event(c, obj, "Normal", "ScaledUpGroup",
                   "Scale-up: added %zu node(s) to node pool %s%s%s", n, pool,
                   provreq_key ? " for ProvisioningRequest " : "", provreq_key ? provreq_key : "");
        json_decref(obj);
    }
}

/* Provider requests that came due: create their Nodes (PR-driven ones are
 * the request reconciler's to finish). Returns the earliest one still
 * waiting. */
static int64_t create_due(struct ctrl *c, struct nodes_ctx *ctx)
{
    int64_t now = ctrl_now(c), next = INT64_MAX;
    struct nodes_pending **pp = &ctx->pending;
    while (*pp) {
        struct nodes_pending *p = *pp;
        if (p->ready_at_ms > now || p->provreq_key) {
            if (p->ready_at_ms > now && p->ready_at_ms < next)
                next = p->ready_at_ms;
            else if (p->provreq_key && p->ready_at_ms <= now) {
                const char *slash = strchr(p->provreq_key, '/');
                char *ns = xstrndup(p->provreq_key, (size_t)(slash - p->provreq_key));
                ctrl_enqueue(c, ctx->rid_autoscaler, ns, slash + 1);
                xfree(ns);
            }
            pp = &p->next;
            continue;
        }
        *pp = p->next;
        struct prov_pool *pool = nodes_pool_get(ctrl_store(c), p->pool);
        if (pool) {
            json_t *names = nodes_create(c, pool, p->n_nodes, NULL);
            nodes_report_scaled_up(c, p->pool, names, NULL);
            json_decref(names);
            prov_pool_release(pool);
            xfree(pool);
        }
        pending_free(p);
    }
    return next;
}

/* Revocations the provider reports (capacity taken back). */
static void poll_provider(struct ctrl *c, struct nodes_ctx *ctx)
{
    struct prov_events evs = {0};
    if (ctx->prov->ops->poll(ctx->prov, ctrl_now(c), &evs) > 0)
        for (size_t i = 0; i < evs.n; i++)
            nodes_provreq_revoke(c, &evs.items[i]);
    prov_events_release(&evs);
}

static void scale_pass(struct ctrl *c, struct nodes_ctx *ctx)
{
    int64_t now = ctrl_now(c);
    if (ctx->scale_timer_at <= now)
        ctx->scale_timer_at = 0;
    poll_provider(c, ctx);
    int64_t next = create_due(c, ctx);
    struct nodes_snap snap;
    nodes_snap_build(ctrl_store(c), &snap);
    struct nodes_pools pools;
    nodes_pools_load(ctrl_store(c), &pools);
    nodes_scale_up(c, ctx, &snap, &pools);
    int64_t due = nodes_scale_down(c, ctx, &snap, &pools);
    if (due < next)
        next = due;
    nodes_pools_release(&pools);
    nodes_snap_release(&snap);
    const char *k;
    json_t *v;
    json_object_foreach(ctx->pool_retry_at, k, v) {
        if (json_integer_value(v) > now && json_integer_value(v) < next)
            next = json_integer_value(v);
    }
    int64_t pd = ctx->prov->ops->next_deadline(ctx->prov);
    if (pd < next)
        next = pd;
    nodes_wake_scale(c, next);
}

static void as_reconcile(struct ctrl *c, void *self, const char *ns, const char *name)
{
    struct nodes_ctx *ctx = self;
    if (!ns && !strcmp(name, SCALE_KEY))
        scale_pass(c, ctx);
    else if (ns)
        nodes_provreq_reconcile(c, ns, name);
}

static void as_on_event(struct ctrl *c, void *self, const struct store_event *ev)
{
    struct nodes_ctx *ctx = self;
    switch (ev->kind) {
    case KIND_POD:
    case KIND_NODE:
    case KIND_NODEPOOL:
        ctrl_enqueue(c, ctx->rid_autoscaler, NULL, SCALE_KEY);
        break;
    case KIND_PROVISIONINGREQUEST:
        ctrl_enqueue(c, ctx->rid_autoscaler, api_namespace(ev->obj), api_name(ev->obj));
        /* a booking that ends makes its nodes candidates for scale-down */
        ctrl_enqueue(c, ctx->rid_autoscaler, NULL, SCALE_KEY);
        break;
    case KIND_PODTEMPLATE: {
        /* a request may have arrived before its templates */
        const char *ns = api_namespace(ev->obj);
        json_t *prs = store_list(ctrl_store(c), KIND_PROVISIONINGREQUEST, ns, NULL);
        size_t i;
        json_t *pr;
        json_array_foreach(prs, i, pr) {
            if (!api_cond_get(pr, "Accepted") && !api_cond_get(pr, "Failed"))
                ctrl_enqueue(c, ctx->rid_autoscaler, ns, api_name(pr));
        }
        json_decref(prs);
        break;
    }
    default:
        break;
    }
}

static const struct ctrl_reconciler_ops as_ops = {
    .name = "autoscaler",
    .on_event = as_on_event,
    .reconcile = as_reconcile,
};

void ctrl__autoscaler_register(struct ctrl *c)
{
    struct nodes_ctx *ctx = nodes_ctx(c);
    if (ctx)
        ctx->rid_autoscaler = ctrl_register(c, &as_ops, ctx);
}
