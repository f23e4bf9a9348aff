/*
 * ctrl: the control plane's loop and its reconcilers. One thread (or the
 * simulator's single thread) calls ctrl_step(), which consumes the store's
 * event log, fires due timers, and runs every reconciler over the keys that
 * changed, until nothing is left to do; then the caller waits for the next
 * store change or timer (server: ctrl_run) or advances virtual time (sim).
 *
 * Reconcilers are level-triggered, as in Kubernetes controllers: each gets
 * (namespace, name) keys and reads the current state from the store, so a
 * missed or repeated event is harmless. Everything that waits (backoff,
 * provisioning delays, grace periods, the 7-day limit, scale-down after
 * idleness) is a timer on the clock, never a sleep.
 *
 * Reconcilers, in the order they run each round (ctrl_new registers them):
 *   gc          deletes objects whose owner is gone (ownerReferences)
 *   nodepool    NodePool status; local provider; Node objects
 *   job         batch/v1 Job -> Workload; start/stop on admission; Pods; status
 *   rayjob      ray.io/v1 RayJob -> Workload (head, worker groups, submitter)
 *   plainpod    Kueue's pod integration: a gated plain Pod -> Workload
 *   workload    Workload conditions, eviction/requeue/backoff, Finished
 *   scheduler   feeds the admission engine and applies its decisions
 *   provisioning Kueue's ProvisioningRequest admission check
 *   autoscaler  ProvisioningRequest fulfilment and pool scale up/down
 *   binder      Pod -> Node (nodeSelector, taints, free resources)
 *   nodeagent   runs bound pods through the executor, reports their status
 */
#ifndef CUEUE_CTRL_CTRL_H
#define CUEUE_CTRL_CTRL_H

#include <jansson.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/object.h"
#include "engine/engine.h"
#include "exec/exec.h"
#include "store/store.h"
#include "util/clock.h"
#include "util/rng.h"

struct ctrl;
struct prov; /* provider/provider.h */

struct ctrl_config {
    const char *state_dir;             /* pod sandboxes and logs; NULL in sim */
    int64_t scale_down_unneeded_ms;    /* idle time before a node is removed
                                          (cluster autoscaler: 10 min) */
    int64_t provisioning_max_wait_ms;  /* queued ProvisioningRequest limit (7 days) */
    int64_t booking_duration_ms;       /* Provisioned -> BookingExpired (10 min) */
    bool wait_for_pods_ready;          /* Kueue waitForPodsReady (default on) */
    int64_t pods_ready_timeout_ms;     /* 30 min */
    bool pods_ready_block_admission;   /* blockAdmission (default false) */
    int64_t requeue_backoff_base_ms;   /* requeuingStrategy.backoffBaseSeconds (60 s) */
    int64_t requeue_backoff_max_ms;    /* backoffMaxSeconds (3600 s) */
    int32_t requeue_backoff_limit;     /* backoffLimitCount (-1 = unlimited) */
    /* Beyond Kueue: fall back to the next flavor when capacity does not come */
    bool flavor_fallback;              /* enabled */
    int64_t fallback_node_wait_ms;     /* admitted pods without nodes this long */
    int64_t fallback_provreq_timeout_ms; /* ProvisioningRequest not provisioned this long */
    int64_t fallback_flavor_backoff_ms;  /* avoid the failed flavor this long */
    /* Write v1 Event objects (ctrl_event) into the store. Default on;
     * `cueue sim` turns it off: its trace comes from object state and
     * nothing reads the Events, which cost as much as the Workload writes
     * they describe. Off, ctrl_event still draws the same random names, so
     * UIDs and generated names (and the trace) do not change. */
    bool record_events;
    /* Events are deleted this long after their last write (Kubernetes'
     * kube-apiserver --event-ttl, 1 hour); 0 = never (event_ttl.c). */
    int64_t event_ttl_ms;
    /* Kueue's UpdatesBatchPeriod for ClusterQueue and LocalQueue status:
     * a status write that only moves the counts and flavor usage (not the
     * Active condition) waits this long, the writes of the period made
     * one (kueue/queues.c). 0 (the default here) = written at once. */
    int64_t queue_status_batch_ms;
    /* The executor gives every pod its own network namespace and IP (the
     * OCI runtime): pods listen on the containerPorts their manifests say.
     * false (the default, the process executor): pods share the host's
     * ports, so the KubeRay operator gives each Ray pod its own block of
     * ports (jobs/ray.c, docs/controllers.md "Ports"). */
    bool pods_have_own_ip;
    /* Which jobs Kueue manages (integrations.frameworks,
     * manageJobsWithoutQueueName, managedJobsNamespaceSelector of Kueue's
     * Configuration, ctrl/kconfig.h); api_job_policy_defaults. The
     * selector is borrowed: it outlives the control plane. */
    struct api_job_policy jobs;
    struct eng_config engine;
};

/* Kueue's and the cluster autoscaler's defaults. */
void ctrl_config_defaults(struct ctrl_config *cfg);

struct ctrl_opts {
    struct store *store; /* borrowed */
    struct clk *clock;   /* borrowed */
    struct rng *rng;     /* borrowed */
    struct exec *exec;   /* borrowed; NULL = pods are bound but never run */
    struct prov *prov;   /* borrowed; NULL = the built-in local provider */
    struct ctrl_config config;
};

/* Create the control plane and register every reconciler. Free with ctrl_free. */
int ctrl_new(const struct ctrl_opts *opts, struct ctrl **out);
void ctrl_free(struct ctrl *c);

/* Process store events, due timers and reconciler work at the clock's
 * current time until quiescent or the round budget is spent, then save
 * the step's changes (store_flush). Returns the number of work items
 * processed (0 = nothing to do). While the store cannot save (a failed
 * flush, store_writable false), a step only retries the save and does
 * nothing else, so no decision, and no side effect, follows one that is
 * not on disk; ctrl_run then retries every 500 ms. */
int ctrl_step(struct ctrl *c);
/* Earliest timer (ms) that needs a step without any store change; INT64_MAX
 * when none. */
int64_t ctrl_next_deadline(struct ctrl *c);
/* The resourceVersion of the last store event the control loop consumed
 * (0 before the first step): events up to it are behind it. */
uint64_t ctrl_events_consumed(struct ctrl *c);
/* Call fn(ctx) in every round of ctrl_step right after the round has
 * consumed the store's events (ctrl_events_consumed is then the store's
 * resourceVersion) and before anything of the round runs: a second reader
 * of the event log (`cueue sim`'s recorder) catches up there, so that the
 * versions both have read can leave the log (store_events_trim) before
 * the round's writes replace them. NULL = none (the default; `cueue
 * server` sets none). fn must not step the control plane. */
void ctrl_set_events_hook(struct ctrl *c, void (*fn)(void *ctx), void *ctx);
/* Server loop: step, then wait for a store change, an executor report or
 * the next deadline; until *stop becomes non-zero (set from another thread,
 * hence atomic). */
void ctrl_run(struct ctrl *c, atomic_int *stop);
/* Declare, before the loop thread starts, that ctrl_run will own the
 * control plane on its own thread: from here on ctrl_call queues work for
 * that thread instead of running it inline (no race with a request that
 * arrives before ctrl_run has begun). */
void ctrl_set_threaded(struct ctrl *c);
/* Run fn(c, arg) on the loop thread and wait for it (from an HTTP thread).
 * In single-threaded use (sim) it runs at once. */
void ctrl_call(struct ctrl *c, void (*fn)(struct ctrl *c, void *arg), void *arg);

/* Why a pending Workload waits and when it may be admitted (the admission
 * engine's eng_explain), as a new JSON object:
 *   {"position": <0-based place in its ClusterQueue's queue, -1 = not queued>,
 *    "reason": <QuotaReserved=False reason>, "message": <its message>,
 *    "blockers": [{"flavor", "resource", "needed": <quantity>,
 *                  "holders": ["ns/name", ...]}],
 *    "estimatedAdmissionTime": <RFC 3339> | null}
 * Runs on the loop thread (ctrl_call), so HTTP threads may call it.
 * Returns 0 (*out set, caller decrefs) or CU_ENOTFOUND (*out NULL). */
int ctrl_explain_workload(struct ctrl *c, const char *ns, const char *name, json_t **out);

/* ---- for reconcilers ---- */

struct ctrl_reconciler_ops {
    const char *name;
    /* Map a store event to keys (ctrl_enqueue). May be NULL. */
    void (*on_event)(struct ctrl *c, void *self, const struct store_event *ev);
    /* Reconcile one key (the object may no longer exist). */
    void (*reconcile)(struct ctrl *c, void *self, const char *ns, const char *name);
    /* Called once per round after the queues drained; returns true when it
     * did work (another round follows). May be NULL. */
    bool (*after_round)(struct ctrl *c, void *self);
    /* Free self. May be NULL. */
    void (*free)(void *self);
};

/* Register a reconciler (self is owned by ctrl from here, freed with
 * ops->free). Returns its id for ctrl_enqueue. */
int ctrl_register(struct ctrl *c, const struct ctrl_reconciler_ops *ops, void *self);
/* The reconciler registered under this name, or -1; *self_out gets its self. */
int ctrl_find(struct ctrl *c, const char *name, void **self_out);
/* Queue (ns, name) for reconciler rid (deduplicated while queued). ns may be
 * NULL for cluster-scoped objects. */
void ctrl_enqueue(struct ctrl *c, int rid, const char *ns, const char *name);
/* Queue (ns, name) for reconciler rid at time at_ms (a timer). */
void ctrl_enqueue_at(struct ctrl *c, int rid, const char *ns, const char *name, int64_t at_ms);
/* Ask for another round at at_ms even without store changes (e.g. the
 * scheduler's backoff wakeup). */
void ctrl_wake_at(struct ctrl *c, int64_t at_ms);

struct store *ctrl_store(struct ctrl *c);
int64_t ctrl_now(struct ctrl *c);
struct rng *ctrl_rng(struct ctrl *c);
struct exec *ctrl_exec(struct ctrl *c);
struct prov *ctrl_prov(struct ctrl *c);
const struct ctrl_config *ctrl_cfg(struct ctrl *c);

/* Record a v1 Event about obj (type "Normal"/"Warning"), aggregating repeats
 * (count, lastTimestamp) as Kubernetes does. Without config.record_events
 * nothing is written, but the random draw a new Event's name takes happens
 * all the same (the rng is shared with the store's UIDs). */
void ctrl_event(struct ctrl *c, const json_t *obj, const char *type, const char *reason,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Trace sink for `cueue sim`: every trace record is handed to fn (ownership
 * of rec passes to fn). NULL disables tracing. */
void ctrl_set_trace(struct ctrl *c, void (*fn)(void *ctx, json_t *rec), void *ctx);
/* True when a trace sink is set. */
bool ctrl_tracing(struct ctrl *c);
/* Restrict tracing to the events wants(event) accepts (NULL = all): a
 * sink that drops some events (`cueue sim` derives those from object
 * state) spares the reconcilers building them. */
void ctrl_set_trace_wants(struct ctrl *c, bool (*wants)(const char *event));
/* True when a trace sink is set and takes this event: reconcilers test it
 * before building a record's fields. */
bool ctrl_traces(struct ctrl *c, const char *event);
/* Emit one trace record: {"time": <s since start>, "event": event, ...fields}
 * (fields stolen; NULL = none). No-op without a sink. */
void ctrl_trace(struct ctrl *c, const char *event, json_t *fields);
/* Simulation start (ms) for trace times; defaults to the clock at ctrl_new. */
void ctrl_set_trace_epoch(struct ctrl *c, int64_t epoch_ms);

#endif
