/*
 * provider: the capacity-provider seam. The autoscaler (ctrl/nodes/autoscaler.c)
 * asks it when nodes for a node pool can exist; the provider answers with a
 * time (now, later, or never: a stockout), and reports asynchronous capacity
 * changes (revocations) through poll. Node objects themselves are created by
 * the autoscaler from the pool's machine type (provider/catalog.h), so a
 * provider only models *availability*.
 *
 * Implementations: the local provider (per-pool setting in NodePool
 * spec.capacity: Immediate, Delayed by N seconds, or Stockout) for `cueue
 * server`, and the simulator's capacity model (delays, stockout windows,
 * revocations from the scenario) for `cueue sim`. Later: an external-command
 * provider and a Slurm partition provider.
 */
#ifndef CUEUE_PROVIDER_PROVIDER_H
#define CUEUE_PROVIDER_PROVIDER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define PROV_NEVER INT64_MAX

struct prov;

/* A capacity change the provider reports on its own. */
struct prov_event {
    char *pool;      /* NodePool name */
    int n_nodes;     /* how many of the pool's nodes are taken back (0 = all) */
    char *reason;    /* e.g. "CapacityRevoked" */
    char *message;
    int64_t at_ms;
};

struct prov_events {
    struct prov_event *items;
    size_t n, cap;
};

struct prov_ops {
    /* When can n_nodes new nodes of `pool` (the NodePool object, borrowed)
     * be ready, for a request made at now_ms? Sets *ready_at_ms (>= now_ms)
     * or PROV_NEVER when the provider has no capacity (stockout); msg gets a
     * human reason for a stockout ("no capacity for ct6e-standard-4t in
     * pool dws-pool"). queued is true for ProvisioningRequest-driven
     * (all-at-once) requests. Returns 0 or a negative code. */
    int (*request)(struct prov *p, const json_t *pool, int n_nodes, int queued,
                   int64_t now_ms, int64_t *ready_at_ms, char *msg, size_t msglen);
    /* Append capacity changes that happened up to now_ms. Returns how many. */
    int (*poll)(struct prov *p, int64_t now_ms, struct prov_events *out);
    /* Earliest time the provider has something to report, or PROV_NEVER. */
    int64_t (*next_deadline)(struct prov *p);
    /* Free the provider. */
    void (*free)(struct prov *p);
};

struct prov {
    const struct prov_ops *ops;
};

/* The local provider (reads NodePool spec.capacity). Free with ops->free. */
struct prov *prov_local_new(void);
/* Release the events (reusable after). */
void prov_events_release(struct prov_events *ev);

/* ---- the simulator's capacity model (`cueue sim`) ---- */

/* A stockout window [from_ms, to_ms): no capacity. to_ms = PROV_NEVER for a
 * window that never ends. Times are absolute ms (the scenario's start plus
 * its offsets). */
struct prov_sim_window {
    int64_t from_ms;
    int64_t to_ms;
};

/* At at_ms the pool loses n_nodes nodes (0 = all of them). */
struct prov_sim_revocation {
    int64_t at_ms;
    int n_nodes;
};

/* One node pool's capacity model. */
struct prov_sim_pool {
    const char *name;       /* NodePool name */
    int64_t delay_ms;       /* provisioning delay: request -> nodes ready */
    const struct prov_sim_window *stockouts;
    size_t n_stockouts;
    const struct prov_sim_revocation *revocations;
    size_t n_revocations;
};

/* The simulator's provider (pools copied). A request for a listed pool made
 * at t is served at the first instant >= t outside every stockout window,
 * plus the pool's delay; a request inside a window without end gets
 * PROV_NEVER. Pools not listed behave as their NodePool spec.capacity says
 * (Immediate, Delayed by delaySeconds, Stockout = never), like the local
 * provider. Revocations are reported by poll() once their time has come,
 * as events with reason "CapacityRevoked". Free with ops->free. */
struct prov *prov_sim_new(const struct prov_sim_pool *pools, size_t n_pools);

#endif
