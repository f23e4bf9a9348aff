/*
 * kueue/kueue: declarations shared by the Kueue-side reconcilers of the ctrl
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
#include "api/meta.h"
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

/* ---- store helpers (kueue/util.c) ---- */

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

/* ---- a Workload event's document, read once (kueue/util.c) ---- */

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
    /* the Workload's state, derived once from cond[] and admission (as
     * api_wl_state_of would derive it from the document): ask this, not
     * cond[], whether it is reserved, admitted, finished or evicted */
    struct api_wl_state state;
    /* the values the scheduler's decode memo compares (kueue/memo.c):
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
/* True when owner owns name (a binary search of its names). */
bool kq_index_has(struct kq_index *ix, const char *owner, const char *name);
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

/* ---- JSON values shared by content (kueue/util.c) ---- */

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

/* ---- Workload status (kueue/wl.c) ---- */

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

/* ---- flavor fallback (kueue/fallback.c; beyond Kueue) ---- */

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

/*
 * kueue_sched: the scheduler reconciler's private pieces (scheduler.c,
 * kueue/queues.c). ctrl-internal.
 *
 * kq_queues keeps what ClusterQueue and LocalQueue status needs between
 * rounds: per-LocalQueue counts and flavor usage, maintained incrementally
 * from Workload events (each Workload's last contribution is remembered and
 * replaced), and the sets of queues whose status must be rewritten. The
 * ClusterQueue figures come from the engine (eng_cq_status).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"

struct kq_queues;

/* A two-way link between two records of the same Workload kept by
 * different tables (the scheduler memo's entry and the queue controller's
 * contribution), so that one reaches the other without a lookup: each
 * embeds a kq_link; peer is the other's, or NULL. Either side cuts it
 * (kq_link_cut) before it is freed, so a peer is never a freed record. */
struct kq_link {
    struct kq_link *peer;
};

/* Join a and b (each cut from any previous peer first). */
static inline void kq_link_join(struct kq_link *a, struct kq_link *b)
{
    if (a->peer == b)
        return;
    if (a->peer)
        a->peer->peer = NULL;
    if (b->peer)
        b->peer->peer = NULL;
    a->peer = b;
    b->peer = a;
}

/* Cut l from its peer, if any (before l's record is freed). */
static inline void kq_link_cut(struct kq_link *l)
{
    if (l->peer)
        l->peer->peer = NULL;
    l->peer = NULL;
}

struct kq_queues *kq_queues_new(void);
void kq_queues_free(struct kq_queues *q);
/* A Workload was added/changed (deleted = false) or removed: update its
 * LocalQueue's figures and mark that LocalQueue and its ClusterQueue.
 * link: the caller's record of the same Workload (kq_memo_link), or NULL:
 * its peer, when it has one, is the Workload's contribution (no table
 * lookup); when it has none, it is joined to the contribution found or
 * made. */
void kq_queues_observe_workload(struct kq_queues *q, struct ctrl *c, const json_t *wl,
                                bool deleted, struct kq_link *link);
/* Mark a queue for a status rewrite. */
void kq_queues_mark_cq(struct kq_queues *q, const char *cq);
void kq_queues_mark_lq(struct kq_queues *q, const char *ns, const char *name);
/* A ClusterQueue or LocalQueue event that changed no spec (a status
 * write): mark the queue for a rewrite (the status is ours), unless obj is
 * the very document our last status write of it left (that write seen
 * back: nothing to rewrite). */
void kq_queues_observe_status(struct kq_queues *q, enum api_kind_id kind, const json_t *obj);
/* Rewrite the status of every marked ClusterQueue (from eng_cq_status;
 * its finalizer is dropped once a deleting ClusterQueue holds nothing) and
 * LocalQueue. Returns true when something was written. */
bool kq_queues_flush(struct kq_queues *q, struct ctrl *c, struct eng *e);

/* ---- scheduler.c ---- */

/* status.admission for the admission a (clusterQueue: a's, else cq):
 * {clusterQueue, podSetAssignments: [{name, flavors, resourceUsage
 * (quantities as kq_quantity_json writes them), count, topologyAssignment
 * when the pod set has one}]}. New reference.
 * Decoding it (api_workload_from_json) gives a back when a is
 * api_admission_is_canonical (test_ctrl_memo). */
json_t *kq_admission_json(const struct api_admission *a, const char *cq);
/* Kueue TAS (kueue/tas.c): give eng every ready, schedulable Node with its
 * status.allocatable minus the requests of its active pods (not Succeeded
 * or Failed) that are not TAS pods (label kueue.x-k8s.io/tas), with "pods"
 * counted per pod (eng_set_nodes). */
void kq_tas_feed_nodes(struct store *st, struct eng *eng);
/* A pod set's topologyAssignment in Kueue's v1beta1 form: {levels: [label
 * keys], domains: [{values: [...], count}]}. New reference. */
json_t *kq_topology_assignment_json(const struct api_topology_assignment *ta);

/* The scheduler's admission engine (borrowed), or NULL when c has no
 * scheduler. Loop thread only (kueue/metrics.c reads its figures). */
struct eng *kq_sched_engine(struct ctrl *c);

/* ---- kueue/memo.c: what the engine was last fed per Workload ---- */

struct kq_memo;

struct kq_memo *kq_memo_new(void);
void kq_memo_free(struct kq_memo *m);
/* What the memo reads of a Workload document that the scheduler needs
 * too, borrowed from the document: metadata.namespace and metadata.name
 * (NULL where absent, as api_namespace/api_name), metadata.annotations
 * and metadata.ownerReferences (NULL where absent) and whether
 * metadata.deletionTimestamp is set (api_is_deleting). */
struct kq_wl_meta {
    const char *ns, *name;
    const json_t *annotations;
    const json_t *owner_references;
    bool deleting;
};
/* obj's kq_wl_meta. The reading is kept for the memo call that follows at
 * once when it is a kq_memo_same, kq_memo_decode or kq_memo_store of the
 * same, unchanged obj (they do not read obj again). */
void kq_memo_meta(struct kq_memo *m, const json_t *obj, struct kq_wl_meta *out);
/* True when every JSON value of obj that api_workload_from_json and
 * kq_avoid_from_workload read outside the conditions is the very value
 * (same reference) of the last kq_memo_store / kq_memo_decode for obj's
 * namespace/name, and the conditions decode the same (the same ones hold,
 * with equal lastTransitionTime, and Evicted reason, where the decoding
 * reads them): decoding obj would give the same Workload, whose upsert
 * engine.h says is a no-op. *admitted then receives the decoded Admitted
 * flag of that store. */
bool kq_memo_same(struct kq_memo *m, const json_t *obj, bool *admitted);
/* After a kq_memo_same(m, obj) that returned false, the very next memo
 * call for obj: true when obj differs from the document last decoded only
 * in its conditions and its Finished condition holds. obj then decodes (it
 * cannot fail: every other value is one that decoded) to a finished
 * Workload, which the engine keeps nothing of (eng_upsert_workload is
 * eng_delete_workload then), so the caller need not decode it. */
bool kq_memo_finished(struct kq_memo *m, const json_t *obj);
/* Remember obj's values (references held) after feeding it to the engine. */
void kq_memo_store(struct kq_memo *m, const json_t *obj, bool admitted);
/* What obj decodes to (api_workload_from_json, with avoid_flavors from
 * kq_avoid_from_workload), to be fed to the engine; the memo then
 * remembers obj as kq_memo_store(obj, its Admitted flag) does. When the
 * last document decoded for obj's namespace/name has the very metadata and
 * spec values of obj, only the status is decoded again
 * (api_workload_status_from_json) and *status_only (when not NULL) is set
 * true: the result differs from the last one only in its status fields
 * (eng_upsert_workload_status may feed it). Borrowed: valid until the memo's next
 * call for that namespace/name. NULL when obj does not decode (the
 * Workload is then forgotten). */
const struct api_workload *kq_memo_decode(struct kq_memo *m, const json_t *obj,
                                          bool *status_only);
/* The Workload last decoded for obj's namespace/name (ns, name: obj's
 * metadata.namespace and metadata.name, which the caller knows; not read
 * again) (kq_memo_decode) when it was decoded from obj's very spec value,
 * else NULL: its spec fields (pod sets, queue, priority) are obj's.
 * Borrowed, as kq_memo_decode's. */
const struct api_workload *kq_memo_decoded_spec(struct kq_memo *m, const char *ns,
                                                const char *name, const json_t *obj);
/* Whether run_ms and end_ms, the expected run time and end the scheduler
 * is about to give the engine for the Workload ns/name
 * (eng_set_expected_runtime, and eng_set_expected_end when has_end),
 * differ from the ones this returned true for last: they are then
 * remembered. True when the memo has no entry for ns/name (nothing
 * is remembered then). The engine keeps both values across upserts of a
 * Workload and loses them only when it is deleted, which the memo is told
 * (kq_memo_forget, or a failed kq_memo_decode), so false means both calls
 * would leave the engine as it is. */
bool kq_memo_expected_changed(struct kq_memo *m, const char *ns, const char *name,
                              int64_t run_ms, bool has_end, int64_t end_ms);
/* Tell the memo that the Workload ns/name is being written with
 * status.admission adm (a reference is held), which decodes to *decoded
 * (taken: left empty; the caller vouches for it, e.g. the engine's
 * decision adm was built from, when api_admission_is_canonical). The
 * kq_memo_decode of a document of ns/name whose admission is the very
 * value adm, where the last one's was not, then takes *decoded instead of
 * decoding adm again. A later hint for ns/name replaces it; forgetting the
 * Workload drops it. */
void kq_memo_admission_hint(struct kq_memo *m, const char *ns, const char *name, json_t *adm,
                            struct api_admission *decoded);
/* The kq_link of ns/name's entry when it is the one the memo's last call
 * for a document found or added (the event's Workload, after the memo
 * calls for it: no lookup), else NULL. Valid until that entry is forgotten
 * (which cuts the link). */
struct kq_link *kq_memo_link(struct kq_memo *m, const char *ns, const char *name);
/* Forget a Workload (deleted, finished, or to be decoded again). */
void kq_memo_forget(struct kq_memo *m, const char *ns, const char *name);
/* The status.resourceRequests remembered for obj's spec (the same spec
 * value), as a new reference, or NULL. ns, name: obj's (as for
 * kq_memo_decoded_spec). */
json_t *kq_memo_requests(struct kq_memo *m, const char *ns, const char *name, const json_t *obj);
/* Remember rr (borrowed: the memo keeps a reference of its own) as the
 * status.resourceRequests of obj's spec. ns, name: obj's. */
void kq_memo_set_requests(struct kq_memo *m, const char *ns, const char *name, const json_t *obj,
                          json_t *rr);
/* kq_memo_requests, else compute(ctx, known) remembered as by
 * kq_memo_set_requests, with one lookup of ns/name: known is what
 * kq_memo_decoded_spec gives (NULL: obj's spec is to be decoded). compute
 * returns a new reference. Returns a new reference. */
json_t *kq_memo_requests_or(struct kq_memo *m, const char *ns, const char *name, const json_t *obj,
                            json_t *(*compute)(void *ctx, const struct api_workload *known),
                            void *ctx);

/* ---- pod set info (podset.c): what starting a job injects, Kueue's podset package ---- */

/* What starting a job injects into one pod set's template
 * (Kueue's podset.PodSetInfo). Every JSON member is owned. */
struct kq_podset_info {
    char *name;
    int32_t count;           /* admitted count */
    json_t *node_selector;   /* object */
    json_t *tolerations;     /* array */
    json_t *labels;          /* object */
    json_t *annotations;     /* object */
};

/* Build the infos for each admitted pod set of wl: flavors' nodeLabels and
 * tolerations (ResourceFlavors read from the store), label
 * kueue.x-k8s.io/podset, the queue labels, the elastic slice annotation,
 * then every admission check's podSetUpdates merged in. Returns 0 or
 * CU_EINVAL with Kueue's conflict message in err. *infos_out is an array of
 * *n_out infos, freed with kq_podset_infos_free. */
int kq_podset_infos_from_workload(struct ctrl *c, const json_t *wl, struct kq_podset_info **infos_out,
                             size_t *n_out, char *err, size_t errlen);
void kq_podset_infos_free(struct kq_podset_info *infos, size_t n);
/* Merge info into a PodTemplateSpec (maps must not conflict; tolerations
 * de-duplicated). Returns 0 or CU_EINVAL with the conflict in err. */
int kq_template_merge(json_t *tmpl, const struct kq_podset_info *info, char *err,
                        size_t errlen);
/* Restore a template's labels, annotations, nodeSelector, tolerations and
 * schedulingGates from the Workload pod set's original template, keeping
 * the labels a Job's selector needs (job-name, controller-uid), which the
 * Workload's template does not carry. */
void kq_template_restore(json_t *tmpl, const json_t *orig);

/* True when some container (or init container) requests or limits res. */
bool kq_spec_uses_resource(const json_t *pod_spec, const char *res);

#endif
