/*
 * types: typed views of the objects the admission engine and the
 * controllers reason about, decoded from the stored JSON documents by
 * api_*_from_json (see object.h). Only scheduling-relevant fields are typed;
 * the JSON document stays the source of truth for everything else.
 *
 * Units: every quantity is int64 in Kueue's units: cpu in milli-CPU,
 * memory and ephemeral-storage in bytes, every other resource (pods,
 * google.com/tpu, nvidia.com/gpu) in whole units.
 *
 * Ownership: every pointer inside these structs is owned by the struct and
 * freed by its _release function; arrays are (items, n) pairs.
 */
#ifndef CUEUE_API_TYPES_H
#define CUEUE_API_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A key/value pair: labels, nodeSelector, nodeLabels. */
struct api_kv {
    char *key;
    char *value;
};

/* A string map kept sorted by key (unique keys). */
struct api_labels {
    struct api_kv *items;
    size_t n;
};

/* A named amount of a resource. */
struct api_res {
    char *name;    /* "cpu", "memory", "google.com/tpu" */
    int64_t value; /* milli-CPU for cpu; bytes for memory; units otherwise */
};

/* A resource list kept sorted by name (unique names). */
struct api_reslist {
    struct api_res *items;
    size_t n;
};

struct api_taint {
    char *key;
    char *value;  /* "" when absent */
    char *effect; /* "NoSchedule", "PreferNoSchedule", "NoExecute" */
};

struct api_toleration {
    char *key;      /* "" = every key (operator must be Exists) */
    char *op;       /* "Equal" (default) or "Exists" */
    char *value;    /* "" when absent */
    char *effect;   /* "" = every effect */
    bool has_seconds;
    int64_t seconds; /* tolerationSeconds */
};

enum api_sel_op { SEL_IN, SEL_NOT_IN, SEL_EXISTS, SEL_DOES_NOT_EXIST, SEL_GT, SEL_LT };

/* One requirement: key op (values). */
struct api_sel_req {
    char *key;
    enum api_sel_op op;
    char **values;
    size_t n_values;
};

/* metav1.LabelSelector: matchLabels AND every matchExpression. An empty
 * selector matches everything. */
struct api_label_selector {
    struct api_labels match_labels;
    struct api_sel_req *exprs;
    size_t n_exprs;
};

/* One NodeSelectorTerm (matchExpressions only; matchFields are ignored by
 * Kueue's flavor matching). Terms of a node affinity are ORed. */
struct api_node_term {
    struct api_sel_req *exprs;
    size_t n_exprs;
};

/* Kueue TAS: a pod set's topologyRequest (Workload spec.podSets[].
 * topologyRequest, or the pod template's kueue.x-k8s.io/podset-*-topology
 * annotations). */
enum api_topology_mode {
    TOPO_NONE,          /* no request (a TAS-only ClusterQueue defaults it) */
    TOPO_REQUIRED,      /* required: all pods in one domain of level */
    TOPO_PREFERRED,     /* preferred: level, else higher, else spread */
    TOPO_UNCONSTRAINED, /* unconstrained: any domains */
};

/* One domain of a topology assignment: the values of the assignment's
 * levels and how many pods go there. */
struct api_topology_domain {
    char **values;
    int32_t count;
};

/* status.admission.podSetAssignments[].topologyAssignment (Kueue v1beta1
 * form): levels (node label keys), domains with counts. */
struct api_topology_assignment {
    char **levels;
    size_t n_levels;
    struct api_topology_domain *domains; /* each with n_levels values */
    size_t n_domains;
};

/* The scheduling-relevant part of one pod set (a Workload podSet, or what a
 * Job/RayJob derives). */
struct api_podset {
    char *name;
    int32_t count;
    int32_t min_count;               /* 0 = not set (no partial admission) */
    struct api_reslist requests;     /* per pod: max(init, sum(containers)) +
                                        overhead; limits fill absent requests */
    struct api_labels node_selector; /* pod spec nodeSelector */
    struct api_node_term *affinity_terms; /* requiredDuringScheduling... */
    size_t n_affinity_terms;
    struct api_toleration *tolerations;
    size_t n_tolerations;
    enum api_topology_mode topology_mode; /* topologyRequest */
    char *topology_level;                 /* its node label key; NULL when none */
    char *slice_level;    /* podSetSliceRequiredTopology: each slice of
                             slice_size pods in one domain of it; NULL: none */
    int32_t slice_size;   /* podSetSliceSize (>= 1 with slice_level) */
};

/* ---- Kueue kinds ---- */

struct api_resource_flavor {
    char *name;
    struct api_labels node_labels;
    struct api_taint *node_taints;
    size_t n_node_taints;
    struct api_toleration *tolerations;
    size_t n_tolerations;
    char *topology_name; /* NULL when unset */
};

struct api_resource_quota {
    char *name; /* resource */
    int64_t nominal;
    bool has_borrowing_limit;
    int64_t borrowing_limit;
    bool has_lending_limit;
    int64_t lending_limit;
};

struct api_flavor_quotas {
    char *name; /* ResourceFlavor name */
    struct api_resource_quota *resources;
    size_t n_resources;
};

struct api_resource_group {
    char **covered; /* coveredResources, in order */
    size_t n_covered;
    struct api_flavor_quotas *flavors; /* in preference order */
    size_t n_flavors;
};

enum api_queueing_strategy { QS_BEST_EFFORT_FIFO, QS_STRICT_FIFO };
enum api_fungibility { FUNG_MAY_STOP_SEARCH, FUNG_TRY_NEXT_FLAVOR };
enum api_fung_preference { PREF_UNSET, PREF_BORROWING_OVER_PREEMPTION, PREF_PREEMPTION_OVER_BORROWING };
enum api_preempt_policy {
    PP_NEVER,
    PP_LOWER_PRIORITY,
    PP_LOWER_OR_NEWER_EQUAL_PRIORITY,
    PP_ANY,
};
enum api_stop_policy { STOP_NONE, STOP_HOLD, STOP_HOLD_AND_DRAIN };

struct api_admission_check_rule {
    char *name;
    char **on_flavors; /* empty = every flavor of the ClusterQueue */
    size_t n_on_flavors;
};

struct api_cluster_queue {
    char *name;
    char *cohort; /* "" = none (v1beta1 spec.cohort, v1beta2 spec.cohortName) */
    struct api_resource_group *groups;
    size_t n_groups;
    enum api_queueing_strategy queueing_strategy;
    bool has_namespace_selector; /* false: nil selector, matches no namespace */
    struct api_label_selector namespace_selector;
    enum api_fungibility when_can_borrow;  /* default MayStopSearch */
    enum api_fungibility when_can_preempt; /* default TryNextFlavor */
    enum api_fung_preference preference;
    enum api_preempt_policy within_cluster_queue;  /* Never|LowerPriority|LowerOrNewerEqualPriority */
    enum api_preempt_policy reclaim_within_cohort; /* Never|LowerPriority|Any */
    enum api_preempt_policy borrow_within_cohort;  /* Never|LowerPriority */
    bool has_max_priority_threshold;
    int32_t max_priority_threshold;
    struct api_admission_check_rule *checks; /* admissionChecksStrategy (v1beta1
                                                spec.admissionChecks converted) */
    size_t n_checks;
    enum api_stop_policy stop_policy;
    int64_t fair_weight_milli; /* fairSharing.weight x 1000; default 1000 */
};

struct api_cohort {
    char *name;
    char *parent; /* "" = root */
    struct api_resource_group *groups;
    size_t n_groups;
    int64_t fair_weight_milli;
};

struct api_local_queue {
    char *ns;
    char *name;
    char *cluster_queue;
    enum api_stop_policy stop_policy;
};

struct api_priority_class {
    char *name;
    int32_t value;
};

/* A flavor to skip until a time (flavor fallback, see api_workload). */
struct api_flavor_avoid {
    char *flavor;
    int64_t until_ms;
};

/* One pod set's admission (status.admission.podSetAssignments[]). */
struct api_podset_assignment {
    char *name;
    int32_t count;
    struct api_labels flavors;       /* resource -> flavor */
    struct api_reslist resource_usage; /* total for the pod set */
    struct api_topology_assignment *topology; /* topologyAssignment or NULL */
};

struct api_admission {
    char *cluster_queue;
    struct api_podset_assignment *podsets;
    size_t n_podsets;
};

struct api_workload {
    char *ns;
    char *name;
    char *uid;
    int64_t creation_ms;
    char *queue_name;            /* spec.queueName */
    int32_t priority;            /* spec.priority (resolved) */
    char *priority_class;        /* spec.priorityClassName or "" */
    bool active;                 /* spec.active (default true) */
    struct api_podset *podsets;
    size_t n_podsets;
    /* status */
    bool has_admission;
    struct api_admission admission;
    bool quota_reserved;         /* QuotaReserved=True */
    bool admitted;               /* Admitted=True */
    bool finished;               /* Finished=True */
    bool evicted;                /* Evicted=True */
    int64_t evicted_ms;          /* Evicted lastTransitionTime */
    char *evicted_reason;        /* Evicted reason or NULL */
    bool requeued_false;         /* Requeued=False (parked until backoff/reactivation) */
    int64_t requeue_at_ms;       /* status.requeueState.requeueAt, 0 = none */
    int32_t requeue_count;       /* status.requeueState.count */
    int64_t quota_reserved_ms;   /* QuotaReserved lastTransitionTime when True */
    struct api_podset_assignment *reclaimable; /* status.reclaimablePods (name, count) */
    size_t n_reclaimable;
    bool elastic;                /* annotation kueue.x-k8s.io/elastic-job: "true" */
    char *replacement_for;       /* kueue.x-k8s.io/workload-slice-replacement-for or NULL */
    char *admission_gated_by;    /* kueue.x-k8s.io/admission-gated-by or NULL */
    char *job_uid;               /* label kueue.x-k8s.io/job-uid (the owner job's uid) or NULL */
    /* Beyond Kueue (flavor fallback on stockout): flavors this Workload must
     * not be assigned while now < until_ms. Filled by ctrl/kueue/scheduler.c from
     * the annotation cueue.dev/avoid-flavors (api_workload_from_json leaves
     * it empty); the engine's flavor assignment skips them as if they did
     * not fit ("flavor <f> is avoided until <t> after a capacity failure"). */
    struct api_flavor_avoid *avoid_flavors;
    size_t n_avoid_flavors;
};

/* Free the contents (the struct itself is not freed); NULL-safe. */
void api_labels_release(struct api_labels *l);
void api_reslist_release(struct api_reslist *r);
void api_taint_release(struct api_taint *t);
void api_toleration_release(struct api_toleration *t);
void api_sel_req_release(struct api_sel_req *r);
void api_label_selector_release(struct api_label_selector *s);
void api_node_term_release(struct api_node_term *t);
void api_podset_release(struct api_podset *p);
void api_resource_flavor_release(struct api_resource_flavor *rf);
void api_resource_group_release(struct api_resource_group *g);
void api_cluster_queue_release(struct api_cluster_queue *cq);
void api_cohort_release(struct api_cohort *c);
void api_local_queue_release(struct api_local_queue *lq);
void api_priority_class_release(struct api_priority_class *pc);
void api_podset_assignment_release(struct api_podset_assignment *a);
/* Free a topology assignment and its contents; NULL-safe. */
void api_topology_assignment_free(struct api_topology_assignment *t);
/* A deep copy (NULL for NULL); free with api_topology_assignment_free. */
struct api_topology_assignment *api_topology_assignment_dup(const struct api_topology_assignment *t);
/* Whether a and b are the same assignment (both NULL counts as same). */
bool api_topology_assignment_equal(const struct api_topology_assignment *a,
                                   const struct api_topology_assignment *b);
void api_admission_release(struct api_admission *a);
void api_workload_release(struct api_workload *wl);

/* Whether a and b hold the same admission: cluster queue, and per pod
 * set (in order) name, count, flavors and resource usage (in order). NULL
 * strings equal NULL only. */
bool api_admission_equal(const struct api_admission *a, const struct api_admission *b);
/* Whether a and b are the same decoded Workload: every field of struct
 * api_workload compared by value (strings by content, NULL equal to NULL
 * only; lists in order), pod sets included. For the checks that recompute
 * what a cache answered (ctrl/kueue/memo.c's debug check). */
bool api_workload_equal(const struct api_workload *a, const struct api_workload *b);
/* Whether a is in the shape decoding status.admission gives
 * (api_workload_from_json): every string set, and each pod set's flavors
 * and resource usage sorted by key without repeats (api_labels_set,
 * api_reslist_set). */
bool api_admission_is_canonical(const struct api_admission *a);

/* Value for key, or NULL. */
const char *api_labels_get(const struct api_labels *l, const char *key);
/* Set key (copied) to value (copied), keeping the map sorted. */
void api_labels_set(struct api_labels *l, const char *key, const char *value);
/* Amount for resource name, or 0 when absent. */
int64_t api_reslist_get(const struct api_reslist *r, const char *name);
/* Set name (copied) to value, keeping the list sorted. */
void api_reslist_set(struct api_reslist *r, const char *name, int64_t value);

#endif
