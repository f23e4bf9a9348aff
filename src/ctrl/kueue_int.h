/*
 * kueue_int: declarations shared by the Kueue-side reconcilers of the ctrl
 * module only (job, rayjob, workload, scheduler, provisioning, gc and their
 * jobs_*.c / kueue_*.c helpers). Nothing here is public API.
 *
 * Conventions: objects read from the store are immutable; every helper that
 * changes an object works on a deep copy (kq_get_copy) and writes it back
 * with kq_update, which keeps the copy's resourceVersion current so several
 * writes in one reconcile do not conflict with themselves. A CU_ECONFLICT
 * means someone else (an HTTP client) wrote in between: the caller requeues
 * its key and reads again (level-triggered).
 *
 * Workloads are stored as kueue.x-k8s.io/v1beta1 (spec.priorityClassName,
 * spec.priorityClassSource, status.accumulatedPastExexcutionTimeSeconds with
 * the v1beta1 spelling).
 */
#ifndef CUEUE_CTRL_KUEUE_INT_H
#define CUEUE_CTRL_KUEUE_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api/kinds.h"
#include "api/types.h"
#include "ctrl/ctrl.h"
#include "store/store.h"
#include "util/hash.h"

/* ---- label, annotation and name constants (kueue.md §1.10) ---- */
#define KQ_QUEUE_NAME_LABEL "kueue.x-k8s.io/queue-name"
#define KQ_PRIORITY_CLASS_LABEL "kueue.x-k8s.io/priority-class"
#define KQ_MAX_EXEC_TIME_LABEL "kueue.x-k8s.io/max-exec-time-seconds"
#define KQ_JOB_UID_LABEL "kueue.x-k8s.io/job-uid"
#define KQ_PODSET_LABEL "kueue.x-k8s.io/podset"
#define KQ_LQ_NAME_LABEL "kueue.x-k8s.io/local-queue-name"
#define KQ_CQ_NAME_LABEL "kueue.x-k8s.io/cluster-queue-name"
#define KQ_MANAGED_LABEL "kueue.x-k8s.io/managed"
#define KQ_ELASTIC_ANNOTATION "kueue.x-k8s.io/elastic-job"
#define KQ_SLICE_NAME_ANNOTATION "kueue.x-k8s.io/workload-slice-name"
#define KQ_MIN_PARALLELISM_ANNOTATION "kueue.x-k8s.io/job-min-parallelism"
#define KQ_COMPLETIONS_EQ_PARALLELISM_ANNOTATION "kueue.x-k8s.io/job-completions-equal-parallelism"
#define KQ_PROVREQ_PREFIX "provreq.kueue.x-k8s.io/"
#define KQ_RESOURCE_IN_USE_FINALIZER "kueue.x-k8s.io/resource-in-use"
#define KQ_WPC_SOURCE "kueue.x-k8s.io/workloadpriorityclass"
#define KQ_PROVREQ_CONTROLLER "kueue.x-k8s.io/provisioning-request"
#define KQ_CONSUME_ANNOTATION "autoscaling.x-k8s.io/consume-provisioning-request"
#define KQ_CLASS_ANNOTATION "autoscaling.x-k8s.io/provisioning-class-name"
/* cueue's own: a hint of how long an admitted job runs, for eng_explain */
#define KQ_EXPECTED_RUNTIME_ANNOTATION "cueue.dev/expected-runtime-seconds"
/* cueue's own: per-worker metrics (pod annotation, aggregated on the job) */
#define KQ_METRICS_ANNOTATION "cueue.dev/metrics"
/* cueue's own (flavor fallback): {"<flavor>": "<RFC 3339 until>"} on a Workload */
#define KQ_AVOID_FLAVORS_ANNOTATION "cueue.dev/avoid-flavors"
/* cueue's own eviction reason for the flavor fallback (requeued at once) */
#define KQ_FALLBACK_REASON "NoCapacity"

/* ---- store helpers (kueue_util.c) ---- */

/* A mutable deep copy of the stored object, or NULL when absent. */
json_t *kq_get_copy(struct ctrl *c, enum api_kind_id kind, const char *ns, const char *name);
/* Write obj (a copy from kq_get_copy) back with store_update(mode). On
 * success obj's metadata.resourceVersion/generation follow the stored
 * object, so the caller may modify and write again. Returns 0,
 * CU_ENOTFOUND or CU_ECONFLICT. */
int kq_update(struct ctrl *c, enum api_kind_id kind, json_t *obj, enum store_update_mode mode);
/* kq_update through store_update_take, for a copy the caller does not
 * change again: what the write stores (the status, or everything but the
 * top-level and metadata maps, which stay the caller's) becomes part of
 * the stored document instead of being deep-copied, so the caller may
 * read obj, update it with kq_update (its metadata.resourceVersion and
 * generation follow the stored object as there) and must release it, but
 * must not change anything else in it. Same results as kq_update. */
int kq_update_take(struct ctrl *c, enum api_kind_id kind, json_t *obj,
                   enum store_update_mode mode);
/* Remove finalizer `fin` from the stored object (no-op when absent).
 * Returns 0 or a store error. */
int kq_remove_finalizer(struct ctrl *c, enum api_kind_id kind, const char *ns,
                        const char *name, const char *fin);
/* True when obj lists finalizer fin. */
bool kq_has_finalizer(const json_t *obj, const char *fin);

/* The controller ownerReference of obj (borrowed), or NULL. */
const json_t *kq_controller_ref(const json_t *obj);
/* The controller reference among refs (an object's
 * metadata.ownerReferences array, or NULL) (borrowed), or NULL. */
const json_t *kq_controller_ref_in(const json_t *refs);
/* True when obj's controller ownerReference has this kind. */
bool kq_controlled_by_kind(const json_t *obj, const char *kind);

/* Kueue's object-name limit (limitObjectName): names longer than 253
 * characters keep their first 247 characters plus "-" and the first 5 hex
 * digits of the SHA-1 of the full name. Caller frees. */
char *kq_limit_name(const char *full);
/* Kueue's workload name for a job (jobframework workload_names.go):
 * "<lower(kind)>-<job>" cut to 247 characters + "-" + the first 5 hex
 * digits of SHA-1("kind\ngroup\njob\nuid[\nextra]"). extra may be NULL.
 * Caller frees. */
char *kq_workload_name(const char *kind, const char *group, const char *job,
                       const char *uid, const char *extra);

/* Quantity JSON string for value in resource's units (new reference). */
json_t *kq_quantity_json(int64_t value, const char *resource);
/* Parse a JSON quantity (string or number) of resource; 0 when invalid. */
int64_t kq_quantity_value(const json_t *v, const char *resource);

/* "ns/name" (caller frees). */
char *kq_key(const char *ns, const char *name);

/* ---- a Workload event's document, read once (kueue_util.c) ---- */

/* The condition types kq_wl_view reads, as indices of kq_wl_view.cond. */
enum kq_view_cond { KQ_VC_FINISHED, KQ_VC_QUOTA_RESERVED, KQ_VC_ADMITTED,
                    KQ_VC_DEACTIVATION_TARGET, KQ_VC_REQUEUED, KQ_VC_EVICTED, KQ__VC_COUNT };

/* What the Workload and queue controllers read of a Workload when its
 * event arrives. Values borrowed from the document; NULL where absent (or,
 * for the strings, not a string). */
struct kq_wl_view {
    const json_t *spec, *status, *admission;
    const char *ns, *name;
    const char *queue;         /* spec.queueName */
    const char *cluster_queue; /* status.admission.clusterQueue */
    bool deleting;             /* metadata.deletionTimestamp present (any value) */
    bool owned;                /* metadata.ownerReferences present (any value) */
    bool active;               /* spec.active, true unless it is false (kq_wl_is_active) */
    int64_t max_exec_s;        /* spec.maximumExecutionTimeSeconds when an integer, else 0 */
    const json_t *admission_checks; /* status.admissionChecks */
    /* per kq_view_cond, of the first condition of that type (what
     * api_cond_get_all finds): 0 none, 1 its status is not "True", 2 it
     * is (api_cond_holds) */
    uint8_t cond[KQ__VC_COUNT];
    /* per kq_view_cond, the first condition of that type, NULL none */
    const json_t *cond_obj[KQ__VC_COUNT];
    /* the values the scheduler's decode memo compares (kueue_memo.c):
     * metadata uid, creationTimestamp, labels, annotations,
     * deletionTimestamp and ownerReferences; status requeueState,
     * reclaimablePods and conditions. NULL where absent. */
    const json_t *uid, *creation_timestamp, *labels, *annotations, *deletion_timestamp;
    const json_t *owner_references;
    const json_t *requeue_state, *reclaimable_pods, *conditions;
};
/* Fill v from wl (a Workload document) in one pass over the members of wl
 * and of its metadata, spec, status, status.admission and conditions
 * (of a condition, its type and status only, when they come first):
 * documents have few members there, and comparing keys costs less than
 * hashing each one looked up. */
void kq_wl_view(const json_t *wl, struct kq_wl_view *v);
/* The kq_wl_view of wl, read once per document: the last one read (per
 * thread) is kept, with a reference to wl held so that no other document
 * can have its address, and given again while wl is the document asked
 * for. The Workload controller, the scheduler's memo and the queue
 * controller read each Workload event this way, in any order. Borrowed:
 * valid until the thread's next peek of another document or drop. wl may
 * be NULL (an empty view). */
const struct kq_wl_view *kq_wl_view_peek(const json_t *wl);
/* Drop the kept view and its reference, if any (at shutdown). */
void kq_wl_view_drop(void);

/* ---- an index from an owner (uid) to the names of what it owns ---- */

struct kq_index;
struct kq_index *kq_index_new(void);
void kq_index_free(struct kq_index *ix);
/* Record that `owner` owns `name` (idempotent). */
void kq_index_add(struct kq_index *ix, const char *owner, const char *name);
/* Forget one name of owner (no-op when absent). */
void kq_index_remove(struct kq_index *ix, const char *owner, const char *name);
/* Forget owner and everything it owned. */
void kq_index_drop(struct kq_index *ix, const char *owner);
/* The names owned by owner, sorted; *n receives their count. The array is
 * borrowed and valid until the next change of the index. */
char *const *kq_index_get(struct kq_index *ix, const char *owner, size_t *n);

/* ---- a set of strings (insertion order, uthash) ---- */

struct kq_set;
struct kq_set *kq_set_new(void);
void kq_set_free(struct kq_set *s);
/* Add (copied) / remove; both idempotent. */
void kq_set_add(struct kq_set *s, const char *key);
void kq_set_remove(struct kq_set *s, const char *key);
size_t kq_set_count(const struct kq_set *s);
/* Call fn(key, arg) for every member, in insertion order. */
void kq_set_each(const struct kq_set *s, void (*fn)(const char *key, void *arg), void *arg);

/* ---- JSON values shared by content (kueue_util.c) ---- */

/* A table of immutable JSON values by a key that determines their content
 * (the inputs they are built from), so that equal values written into many
 * documents are built once and are one value (as api_cond_set's shared
 * conditions). Only for values that every document holding them replaces
 * or removes whole, never changes in place. Holds at most `max` values:
 * past it, it starts again empty. Single-threaded (one reconciler's). */
struct kq_shared;
struct kq_shared *kq_shared_new(size_t max);
void kq_shared_free(struct kq_shared *t); /* NULL-safe */
/* Start the key of the next lookup; then append its parts, in an order
 * and number the caller fixes per kind of value (a string is encoded with
 * its length, NULL apart from every string, so parts never run together). */
void kq_shared_key_reset(struct kq_shared *t);
void kq_shared_key_str(struct kq_shared *t, const char *str);
void kq_shared_key_int(struct kq_shared *t, int64_t v);
/* The value kept for the key built, as a new reference, or NULL. */
json_t *kq_shared_find(struct kq_shared *t);
/* Keep v (a reference taken) for the key built (which has none); returns a
 * new reference to v. */
json_t *kq_shared_keep(struct kq_shared *t, json_t *v);

/* ---- Workload status (kueue_wl.c) ---- */

/* True when the Workload holds a quota reservation (QuotaReserved=True and
 * status.admission present). */
bool kq_wl_has_reservation(const json_t *wl);
bool kq_wl_is_admitted(const json_t *wl);
bool kq_wl_is_finished(const json_t *wl);
bool kq_wl_is_evicted(const json_t *wl);
bool kq_wl_is_active(const json_t *wl);
/* ClusterQueue of the admission, or NULL (borrowed). */
const char *kq_wl_cluster_queue(const json_t *wl);
/* The ClusterQueue the Workload's LocalQueue points at (from the store), or
 * NULL. Caller frees. */
char *kq_wl_queue_cq(struct ctrl *c, const json_t *wl);

/* Evict (kueue.md §2.10): Evicted=True/reason with message; every
 * non-Pending admission check reset to Pending ("Reset to Pending after
 * eviction. Previously: <state>", retryCount+1 for Retry);
 * schedulingStats.evictions counted (reason, underlyingCause); Normal event
 * "EvictedDueTo<reason>"; trace "Evicted". Modifies wl; the caller writes. */
void kq_wl_evict(struct ctrl *c, json_t *wl, const char *reason, const char *underlying,
                 const char *message);
/* Release the reservation of an evicted/stopped Workload (§2.10):
 * QuotaReserved=False/<qr_reason> with message, admission removed,
 * Admitted=False/NoReservation (accumulating admitted time), and, when
 * requeued_reason is non-NULL, Requeued=<requeued>/<requeued_reason>
 * (trace "Requeued" when True). Modifies wl; the caller writes. */
void kq_wl_clear_reservation(struct ctrl *c, json_t *wl, const char *qr_reason,
                             const char *message, const char *requeued_reason,
                             bool requeued);
/* Finished=True/reason with message and trace "Finished" (events are the
 * caller's: Kueue records them on the job). Modifies wl; the caller writes. */
void kq_wl_finish(struct ctrl *c, json_t *wl, const char *reason, const char *message);
/* Admitted=True (Phase 2) with event "Admitted by ClusterQueue <cq>, wait
 * time since reservation was <s>s" and trace "Admitted". Modifies wl. */
void kq_wl_set_admitted(struct ctrl *c, json_t *wl);
/* kq_wl_set_admitted with what the caller knows already: cq, the
 * Workload's status.admission.clusterQueue (borrowed; may be NULL), and
 * reserved_ms, the QuotaReserved condition's lastTransitionTime as it
 * reads back (whole seconds), or -1 to read it from wl. */
void kq_wl_set_admitted_at(struct ctrl *c, json_t *wl, const char *cq, int64_t reserved_ms);
/* Admitted=False/reason leaving admission: adds the admitted time to
 * accumulatedPastExexcutionTimeSeconds when it was True. */
void kq_wl_unset_admitted(struct ctrl *c, json_t *wl, const char *reason, const char *message);
/* Trace fields {"workload":"ns/name","clusterQueue":cq} (cq may be NULL). */
json_t *kq_wl_trace_fields(const json_t *wl, const char *cq);
/* The admission's podSets as trace JSON [{name,count,flavors}]. */
json_t *kq_wl_trace_podsets(const json_t *wl);

/* The admission check rules (name, onFlavors) of ClusterQueue cq_name from
 * the store; n_out = 0 when none or missing. Release with kq_rules_release. */
struct kq_check_rule {
    char *name;
    char **on_flavors;
    size_t n_on_flavors;
};
void kq_cq_check_rules(struct ctrl *c, const char *cq_name, struct kq_check_rule **out,
                       size_t *n_out);
void kq_rules_release(struct kq_check_rule *r, size_t n);
/* Names of the checks that apply to the Workload's admission (§2.9: every
 * rule whose onFlavors is empty or intersects the admitted flavors), sorted.
 * Returns a new JSON array of strings. */
json_t *kq_checks_for_admission(const struct kq_check_rule *rules, size_t n,
                                const json_t *admission);
/* Make status.admissionChecks hold exactly `names` (sorted by name): add
 * missing ones as Pending, drop others. True when anything changed. */
bool kq_wl_sync_checks(json_t *wl, const json_t *names, int64_t now_ms);
/* True when kq_wl_sync_checks(wl, names, ...) would change nothing (read
 * only: decide before copying the Workload). */
bool kq_wl_checks_in_sync(const json_t *wl, const json_t *names);
/* True when every entry of status.admissionChecks is Ready. */
bool kq_wl_all_checks_ready(const json_t *wl);
/* The status.admissionChecks entry named name (borrowed), or NULL. */
json_t *kq_wl_check(const json_t *wl, const char *name);
/* Set a check's state/message (lastTransitionTime changes with the state),
 * emit event AdmissionCheckUpdated and trace "AdmissionCheckUpdated" when
 * the state changes. True when anything changed. */
bool kq_wl_set_check_state(struct ctrl *c, json_t *wl, const char *check, const char *state,
                           const char *message);

/* True when an eviction with this reason requeues at once (Requeued=True:
 * Preempted, NodeFailures, and cueue's NoCapacity); others wait (§2.10). */
bool kq_eviction_requeues(const char *reason);

/* ---- flavor fallback (kueue_fallback.c; beyond Kueue) ---- */

/* The Workload's avoided flavors from cueue.dev/avoid-flavors (all entries,
 * expired or not). *out is freed with kq_avoid_release. */
void kq_avoid_from_workload(const json_t *wl, struct api_flavor_avoid **out, size_t *n);
void kq_avoid_release(struct api_flavor_avoid *a, size_t n);
/* With ctrl_config.flavor_fallback: evict a reserved Workload whose
 * ProvisioningRequest is not provisioned within fallback_provreq_timeout_ms,
 * or whose admitted pods find no node within fallback_node_wait_ms, marking
 * the flavors to avoid (a MAIN write of wl, done here) and evicting it in
 * memory (reason NoCapacity; the caller writes status). Otherwise arms a
 * timer on rid. Returns true when it evicted. */
bool kq_fallback_step(struct ctrl *c, int rid, json_t *wl);

/* Requeue backoff: base * 2^(count-1) capped at max (ms). */
int64_t kq_backoff_ms(int64_t base_ms, int64_t max_ms, int32_t count);

#endif
