/*
 * engine: the admission engine. Pure: no I/O, no clock, no globals, no
 * logging. It keeps Kueue's scheduling state (ResourceFlavors, Cohorts,
 * ClusterQueues with their quotas and usage, LocalQueues, namespaces, and
 * every pending or quota-holding Workload in per-ClusterQueue queues) and,
 * given `now`, runs scheduling cycles that return decisions. The control
 * plane (ctrl/kueue/scheduler.c) feeds it object changes and applies its
 * decisions to the store; `cueue sim` and the unit tests drive the very
 * same code with a virtual clock.
 *
 * Behaviour is Kueue's (shared/spec/kueue.md §2, default feature gates):
 * BestEffortFIFO/StrictFIFO queues ordered by priority then queue-order
 * timestamp then creation order; flavor assignment per pod set in the
 * ClusterQueue's flavor order with node label / taint matching and
 * flavorFungibility; nominalQuota, cohorts (flat and hierarchical) with
 * borrowingLimit and lendingLimit; preemption (withinClusterQueue,
 * reclaimWithinCohort, borrowWithinCohort) with Kueue's candidate order and
 * minimal victim sets; fair sharing; partial admission; elastic workload
 * slices. Beyond Kueue: one eng_schedule call runs Kueue's cycles back to
 * back until nothing changes, so several workloads per ClusterQueue are
 * admitted per call, in the order Kueue would reach over successive cycles;
 * and eng_explain says why a workload is pending and when it may start.
 * docs/engine.md lists every behaviour with its test.
 *
 * Units: quantities are int64 (cpu in milli-CPU, memory in bytes, other
 * resources in units); times are ms since the epoch.
 *
 * Ownership: every input struct is borrowed (the engine copies what it
 * keeps); every output struct is owned by the caller and released with its
 * _release function. Engine state is not thread-safe: one caller at a time.
 */
#ifndef CUEUE_ENGINE_ENGINE_H
#define CUEUE_ENGINE_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/types.h"

struct eng;

enum eng_fair_strategy {
    FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,
    FS_LESS_THAN_INITIAL_SHARE,
};

struct eng_config {
    bool fair_sharing;                       /* Kueue config fairSharing.enable */
    enum eng_fair_strategy fs_strategies[2]; /* used when fair_sharing */
    int n_fs_strategies;                     /* 0 = Kueue default (both, in order) */
    bool ignore_undeclared_resources;        /* quotaCheckStrategy IgnoreUndeclared */
    bool kueue_one_head_per_cq;              /* true = one Kueue cycle (one head
                                                per ClusterQueue) per eng_schedule
                                                call, for comparisons; false =
                                                cueue default: cycles until
                                                nothing changes */
};

/* A new engine (cfg may be NULL for defaults). Free with eng_free. */
struct eng *eng_new(const struct eng_config *cfg);
/* Free the engine and everything it holds. NULL is a no-op. */
void eng_free(struct eng *e);

/* ---- inputs: objects as they change (idempotent upserts) ----
 * Every input is borrowed; the engine copies what it keeps. An upsert whose
 * scheduling-relevant fields did not change is a no-op (cheap to repeat on
 * every status write). A real change re-evaluates what it affects and, as
 * Kueue does, retries the inadmissible workloads of the affected
 * ClusterQueues (at the next eng_schedule). Deleting an unknown object is a
 * no-op.
 *
 * The upserts that return int return 0, or CU_ENOMEM when the engine could
 * not allocate the table entry of an object it did not know (only the
 * first entry of an empty table can fail: engine-int.h, ENG__HASH_ADD).
 * The engine is then unchanged (the object stays unknown) and a later
 * upsert of it tries again. Other allocations abort, as xalloc's do. */

/* A ResourceFlavor (nodeLabels, nodeTaints, tolerations); its existence
 * decides whether ClusterQueues naming it are active (FlavorNotFound). */
void eng_upsert_flavor(struct eng *e, const struct api_resource_flavor *rf);
void eng_delete_flavor(struct eng *e, const char *name);
/* Kueue TAS: a Topology object (levels = spec.levels[].nodeLabel, highest
 * first); a ResourceFlavor whose spec.topologyName names it places pod sets
 * on topology domains (docs/tas.md). Upserting changes nothing else. */
void eng_upsert_topology(struct eng *e, const char *name, const char *const *levels,
                         size_t n_levels);
void eng_delete_topology(struct eng *e, const char *name);

/* A node for TAS: labels and the capacity left for TAS pod sets. */
struct eng_node {
    const char *name;
    const struct api_labels *labels;
    const struct api_reslist *free; /* status.allocatable minus the requests
                                       of the node's active pods that belong
                                       to no TAS workload (same units as
                                       pod sets; "pods" counts pods) */
};
/* Replace the whole node set TAS builds its domains from (nodes borrowed,
 * copied; unschedulable or not-ready nodes are left out by the caller).
 * When it differs from the previous set, every ClusterQueue retries its
 * inadmissible workloads at the next eng_schedule. */
void eng_set_nodes(struct eng *e, const struct eng_node *nodes, size_t n);

/* A Cohort object (parent, resourceGroups = shared pool, fair weight).
 * Cohorts named only by ClusterQueues or parents exist implicitly. */
int eng_upsert_cohort(struct eng *e, const struct api_cohort *c);
void eng_delete_cohort(struct eng *e, const char *name);
/* inactive_message: NULL when the ClusterQueue's admission checks exist and
 * are active; otherwise the part of Kueue's inactive message the engine cannot
 * know ("references missing AdmissionCheck(s): [x]"), or exactly
 * ENG_CQ_TERMINATING for a ClusterQueue being deleted (Kueue's reason
 * Terminating, which overrides every other). The engine adds its own
 * reasons (missing flavors, stopPolicy). */
#define ENG_CQ_TERMINATING "clusterQueue is terminating"
int eng_upsert_cluster_queue(struct eng *e, const struct api_cluster_queue *cq,
                             const char *inactive_message);
/* Removing a ClusterQueue unqueues its workloads (they report "ClusterQueue
 * <cq> doesn't exist") and drops the usage of its quota holders. */
void eng_delete_cluster_queue(struct eng *e, const char *name);
/* A LocalQueue routes its namespace's workloads to its ClusterQueue;
 * stopPolicy != None makes it inactive ("LocalQueue <lq> is inactive"). */
int eng_upsert_local_queue(struct eng *e, const struct api_local_queue *lq);
void eng_delete_local_queue(struct eng *e, const char *ns, const char *name);
/* Namespaces and their labels (ClusterQueue namespaceSelector; a workload
 * in an unknown namespace is Misconfigured). labels may be NULL. */
int eng_upsert_namespace(struct eng *e, const char *name, const struct api_labels *labels);
void eng_delete_namespace(struct eng *e, const char *name);
/* A Workload in any state. Pending (no admission) workloads are queued when
 * eligible (active, not finished, not parked by Requeued=False, requeueAt
 * passed, no admission gate); workloads with status.admission hold quota
 * until they are upserted without it or deleted. Finished workloads hold
 * nothing. */
int eng_upsert_workload(struct eng *e, const struct api_workload *wl);
/* eng_upsert_workload of a Workload whose last upsert had the very same
 * metadata and spec (wl differs from it in the fields
 * api_workload_status_from_json decodes at most: conditions, admission,
 * requeueState, reclaimablePods): the same result, cheaper, as the pod
 * sets, names and avoided flavors of the engine's copy are kept instead of
 * being built again. The caller vouches for the sameness (the scheduler's
 * decode memo knows it); the engine does not compare them. */
int eng_upsert_workload_status(struct eng *e, const struct api_workload *wl);
/* Deleting a quota holder releases its usage and retries the inadmissible
 * workloads of its cohort tree. */
void eng_delete_workload(struct eng *e, const char *ns, const char *name);
/* Expected end of an admitted workload (ms), used only by eng_explain's
 * admission-time estimate. 0 = unknown. */
void eng_set_expected_end(struct eng *e, const char *ns, const char *name, int64_t end_ms);
/* Expected run time of a workload once admitted (ms; 0 = unknown), used
 * only by eng_explain: a workload the forward simulation admits is
 * expected to finish this long after, so the estimate reaches past the
 * workloads running now (a queue of several generations). */
void eng_set_expected_runtime(struct eng *e, const char *ns, const char *name,
                              int64_t runtime_ms);

/* ---- outputs ---- */

struct eng_wl_ref {
    char *ns;
    char *name;
    char *uid;
};

enum eng_decision_type {
    ENG_RESERVE, /* write status.admission + QuotaReserved=True */
    ENG_PREEMPT, /* evict `wl` (Evicted=True/Preempted, Preempted=True/<reason>) */
    ENG_PENDING, /* write QuotaReserved=False/<reason> <message> (only on change) */
};

struct eng_decision {
    enum eng_decision_type type;
    struct eng_wl_ref wl;
    char *cluster_queue;
    /* ENG_RESERVE */
    struct api_admission admission; /* podSetAssignments with counts, flavors, usage */
    bool borrowing;                 /* the admission borrows from the cohort */
    char *event_message;            /* "Quota reserved in ClusterQueue cq, wait time
                                       since queued was 3s; Flavors considered: ..." */
    struct eng_wl_ref replaces;     /* elastic slice replaced (ns NULL when none) */
    /* ENG_PREEMPT */
    struct eng_wl_ref preemptor;
    char *reason;  /* ENG_PREEMPT: InClusterQueue|InCohortReclamation|...;
                      ENG_PENDING: WaitingForQuota|NoMatchingFlavor|... */
    char *message; /* Kueue's message text */
};

struct eng_result {
    struct eng_decision *items; /* in the order they were decided */
    size_t n, cap;
    int64_t next_wakeup_ms;     /* earliest time a parked workload becomes
                                   eligible (backoff), 0 = none */
    uint64_t cycles;            /* scheduling cycles run by this call */
    uint64_t head_cycles;       /* those that found heads to try (Kueue's
                                   admission attempts) */
};

/* Run scheduling cycles at time now_ms until no more workloads can be
 * admitted or preempted for (bounded by max_decisions, 0 = no bound), and
 * append decisions to *out (initialise with {0}). Reserved workloads are
 * assumed immediately (their usage counts at once); a caller that fails to
 * apply a reservation upserts the workload's real state to undo it.
 * Returns the number of decisions appended. */
int eng_schedule(struct eng *e, int64_t now_ms, size_t max_decisions, struct eng_result *out);
/* Release the decisions (the result may be reused). NULL-safe. */
void eng_result_release(struct eng_result *r);

/* ---- observability ---- */

struct eng_flavor_usage {
    char *flavor;
    struct api_reslist total;    /* quota reserved by workloads, per resource */
    struct api_reslist borrowed; /* part above nominal */
};

struct eng_cq_status {
    bool active;
    char *inactive_reason;  /* "FlavorNotFound", "Stopped", ... or NULL */
    char *inactive_message; /* Kueue's "Can't admit new workloads: ..." or NULL */
    int32_t pending;        /* pendingWorkloads */
    int32_t reserving;      /* reservingWorkloads */
    int32_t admitted;       /* admittedWorkloads */
    struct eng_flavor_usage *reservation; /* flavorsReservation (quota-reserving) */
    size_t n_reservation;
    struct eng_flavor_usage *usage;       /* flavorsUsage (admitted) */
    size_t n_usage;
    int64_t weighted_share;               /* fairSharing.weightedShare */
};

/* Status figures for a ClusterQueue (Kueue ClusterQueue status): per
 * flavor in the ClusterQueue's order, per covered resource, the reserved
 * total and the part above nominal; usage counts Admitted holders only;
 * pending = queued + parked. Fills *out (release with
 * eng_cq_status_release). Returns 0 or CU_ENOTFOUND. */
int eng_cq_status(struct eng *e, const char *name, struct eng_cq_status *out);
/* The Active part of eng_cq_status alone (active, inactive_reason and
 * inactive_message, borrowed: valid until the engine's next change), for a
 * caller that needs the figures only when it changed. Returns 0 or
 * CU_ENOTFOUND. */
int eng_cq_active(struct eng *e, const char *name, bool *active, const char **reason,
                  const char **message);
/* Called by eng_each_pending for one queued Workload: its ClusterQueue,
 * namespace and LocalQueue (spec.queueName) names (borrowed for the call)
 * and whether it is parked as inadmissible (Kueue's inadmissible set)
 * rather than in the ClusterQueue's heap (Kueue's "active"). */
typedef void (*eng_pending_fn)(void *ctx, const char *cq, const char *ns, const char *lq,
                               bool inadmissible);
/* Call fn for every Workload queued in a ClusterQueue (pending = queued +
 * parked, as eng_cq_status counts them), ClusterQueues in name order, each
 * one's heap first (in heap-array order), then its parked ones. For
 * Kueue's kueue_pending_workloads{status="active"|"inadmissible"}. fn must
 * not change the engine. */
void eng_each_pending(struct eng *e, eng_pending_fn fn, void *ctx);
/* Free what eng_cq_status filled in. NULL-safe. */
void eng_cq_status_release(struct eng_cq_status *s);

struct eng_blocker {
    char *flavor;
    char *resource;
    int64_t needed;   /* how much more is needed */
    struct eng_wl_ref *holders; /* admitted workloads holding that quota */
    size_t n_holders;
};

struct eng_explanation {
    int32_t position;         /* 0-based position in its ClusterQueue's queue; -1 if not queued */
    char *reason;             /* current pending reason */
    char *message;            /* current pending message */
    struct eng_blocker *blockers;
    size_t n_blockers;
    int64_t estimated_admission_ms; /* 0 = unknown (no expected ends) */
};

/* Why a pending workload is pending and when it may be admitted: its
 * position, the quota that blocks it and who holds it, and an estimate from
 * running the engine forward over a copy of the state with the admitted
 * workloads' expected ends. Returns 0 or CU_ENOTFOUND. */
int eng_explain(struct eng *e, const char *ns, const char *name, int64_t now_ms,
                struct eng_explanation *out);
/* Free what eng_explain filled in. NULL-safe. */
void eng_explanation_release(struct eng_explanation *x);

/* Free a reference's strings. NULL-safe. */
void eng_wl_ref_release(struct eng_wl_ref *r);

#endif
