/*
 * local: the built-in capacity provider of `cueue server`. Availability is
 * whatever each NodePool's spec.capacity says at the moment of the request
 * (Immediate, Delayed by delaySeconds, Stockout), so an admin can switch a
 * pool between plan A and plan B conditions with `cueue apply`. It never
 * takes capacity back on its own (poll reports nothing); the simulator's
 * capacity model does that.
 */
#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "provider/pool.h"
#include "provider/provider.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

struct prov_local {
    struct prov base;
};

static int local_request(struct prov *p, const json_t *pool, int n_nodes, int queued,
                         int64_t now_ms, int64_t *ready_at_ms, char *msg, size_t msglen)
{
    (void)p;
    (void)queued;
    if (msglen)
        msg[0] = '\0';
    if (n_nodes <= 0) {
        *ready_at_ms = now_ms;
        return 0;
    }
    enum prov_capacity_mode mode;
    if (prov_capacity_mode_parse(JX_STR(pool, "spec", "capacity", "mode"), &mode) != 0) {
        snprintf(msg, msglen, "node pool %s: unsupported spec.capacity.mode",
                 jx_or_empty(api_name(pool)));
        return CU_EINVAL;
    }
    int64_t delay_s = JX_INT(pool, 0, "spec", "capacity", "delaySeconds");
    switch (mode) {
    case PROV_CAPACITY_IMMEDIATE:
        *ready_at_ms = now_ms;
        break;
    case PROV_CAPACITY_DELAYED:
        *ready_at_ms = now_ms + (delay_s > 0 ? delay_s * 1000 : 0);
        break;
    case PROV_CAPACITY_STOCKOUT:
        *ready_at_ms = PROV_NEVER;
        snprintf(msg, msglen, "no capacity for %s in pool %s (capacity mode Stockout)",
                 jx_or_empty(JX_STR(pool, "spec", "config", "machineType")),
                 jx_or_empty(api_name(pool)));
        break;
    }
    return 0;
}

static int local_poll(struct prov *p, int64_t now_ms, struct prov_events *out)
{
    (void)p;
    (void)now_ms;
    (void)out;
    return 0;
}

static int64_t local_next_deadline(struct prov *p)
{
    (void)p;
    return PROV_NEVER;
}

static void local_free(struct prov *p)
{
    xfree(p);
}

static const struct prov_ops local_ops = {
    .request = local_request,
    .poll = local_poll,
    .next_deadline = local_next_deadline,
    .free = local_free,
};

struct prov *prov_local_new(void)
{
    struct prov_local *l = xcalloc(1, sizeof(*l));
    l->base.ops = &local_ops;
    return &l->base;
}
