/*
 * object: admission of incoming objects (strict decoding against each
 * kind's schema, defaults, semantic validation) and the typed decoders
 * that turn stored documents into the views of types.h.
 *
 * Behaviour follows the Kubernetes API server with fieldValidation=Strict
 * plus each ecosystem's webhooks (Kueue's, KubeRay's): unknown fields and
 * wrong JSON types are decode errors (400 BadRequest, "strict decoding
 * error: unknown field \"spec.foo\""); rule violations are 422 Invalid with
 * one cause per problem, every problem reported, each naming its field path.
 */
#ifndef CUEUE_API_OBJECT_H
#define CUEUE_API_OBJECT_H

#include <jansson.h>

#include "api/kinds.h"
#include "api/types.h"
#include "util/diag.h"

/* The kind named by doc's apiVersion and kind. On failure records a cause
 * (missing apiVersion/kind, or "no matches for kind \"X\" in version \"Y\"")
 * and returns NULL. */
const struct api_kind *api_doc_kind(const json_t *doc, struct diag *d);

/* Admit obj (mutable; defaults are applied in place) as a create (old ==
 * NULL) or an update of old (immutable fields checked). ns is the request's
 * namespace for namespaced kinds (a different metadata.namespace is an
 * error; an absent one is filled in; cluster-scoped kinds lose any
 * metadata.namespace). status is dropped on create (Node keeps it, as
 * kubelets create nodes with status) and copied from old on an update of
 * the main resource. A kueue.x-k8s.io/v1beta2 object is converted to the
 * stored v1beta1 (ClusterQueue cohortName -> cohort, Workload
 * priorityClassRef -> priorityClassName/priorityClassSource).
 * On create the server sets metadata.uid first: a Job's selector and pod
 * labels are generated from it. Returns 0, CU_EBADREQ (decode errors:
 * unknown fields, wrong JSON types, apiVersion/kind or namespace
 * mismatch) or CU_EINVAL (validation), with every cause in d. Schema,
 * defaults and rules per kind: src/api/schema_*.c, docs/api.md. */
int api_admit(const struct api_kind *k, json_t *obj, const json_t *old, const char *ns,
              struct diag *d);
/* What admission may look up in the cluster: Kueue's mutating webhooks
 * read the store (a LocalQueue named "default" in the job's namespace, a
 * WorkloadPriorityClass named "default"). Borrowed for the call. */
/* What the server lets pods do beyond Kubernetes' own rules (docs/security.md,
 * "What a pod may do"): privileged containers, hostPath volumes under
 * the given prefixes (borrowed strings), and the users pods run as. */
struct api_pod_policy {
    bool allow_privileged;
    const char *const *host_path_prefixes;
    size_t n_host_path_prefixes;
    /* Users (api_pod_run_as). switch_user: the server runs as root and
     * runs each container as its securityContext's runAsUser/runAsGroup,
     * else as pod_uid/pod_gid (--pod-user, default 65534:65534); uid or
     * gid 0 only with allow_root (--allow-root-pods). !switch_user: pods
     * run as the server's server_uid/server_gid and may not ask for other
     * ones. */
    bool switch_user;
    bool allow_root;
    uint32_t pod_uid, pod_gid;
    uint32_t server_uid, server_gid;
};

/* Kueue's job frameworks (Configuration integrations.frameworks), as bits
 * of api_job_policy.frameworks. */
#define API_FW_BATCH_JOB (1u << 0) /* "batch/job" */
#define API_FW_RAYJOB (1u << 1)    /* "ray.io/rayjob" */
#define API_FW_JOBSET (1u << 2)    /* "jobset.x-k8s.io/jobset" */
#define API_FW_POD (1u << 3)       /* "pod" (plain Pods) */

/* Which jobs Kueue manages, from Kueue's Configuration
 * (integrations.frameworks, manageJobsWithoutQueueName,
 * managedJobsNamespaceSelector; `cueue server --config`, ctrl/kconfig.h).
 * Read by admission (Kueue's job webhooks suspend a managed job on create)
 * and by the job reconcilers (only managed jobs get a Workload). */
struct api_job_policy {
    unsigned frameworks;            /* API_FW_* bits */
    bool manage_without_queue_name; /* manageJobsWithoutQueueName */
    /* managedJobsNamespaceSelector, borrowed; NULL = every namespace but
     * kube-system and kueue-system (Kueue's default selector) */
    const struct api_label_selector *namespace_selector;
};

/* cueue's policy without --config: Jobs, RayJobs and JobSets with the
 * queue-name label are managed; plain Pods are not (docs/server.md). */
void api_job_policy_defaults(struct api_job_policy *p);
/* The API_FW_* bit of a kind (0: not a job kind Kueue can manage). */
unsigned api_job_framework(enum api_kind_id kind);
/* Whether Kueue manages obj, of kind `kind`, under policy p (Kueue's
 * jobframework.IsManaged rules): its framework is enabled; and it has a
 * non-empty kueue.x-k8s.io/queue-name label, or manageJobsWithoutQueueName
 * is on, it has no controller owner (a child of another job is the
 * parent's business) and its namespace matches the selector. ns_obj is the
 * stored Namespace (NULL when unknown: only its name, taken from obj, is
 * matched, as the label kubernetes.io/metadata.name Kubernetes sets on
 * every Namespace). */
bool api_job_policy_manages(const struct api_job_policy *p, enum api_kind_id kind,
                            const json_t *obj, const json_t *ns_obj);
/* Whether obj's namespace matches p's managedJobsNamespaceSelector (ns_obj
 * as above; without a selector: every namespace but kube-system and
 * kueue-system). p must not be NULL. */
bool api_job_policy_namespace_selected(const struct api_job_policy *p, const json_t *obj,
                                       const json_t *ns_obj);

/* At most this many supplementary groups per container (the sandbox
 * group, the pod's supplementalGroups and fsGroup). */
#define API_RUN_AS_MAX_GROUPS 32

/* Who one container runs as. */
struct api_run_as {
    bool switch_user;   /* false: the server's own user (nothing to change) */
    uint32_t uid, gid;
    uint32_t groups[API_RUN_AS_MAX_GROUPS]; /* supplementary groups */
    size_t n_groups;
    uint32_t sandbox_gid; /* the group owning the pod's sandbox: fsGroup,
                             else the pod-level runAsGroup, else pod_gid */
};

/* Resolve who container ctr (an element of spec.containers or
 * spec.initContainers) of pod spec `spec` runs as under policy pol
 * (Kubernetes: the container's securityContext.runAsUser/runAsGroup win
 * over the pod's spec.securityContext). When pol->switch_user: uid =
 * runAsUser, else pol->pod_uid; gid = runAsGroup, else pol->pod_gid;
 * groups = sandbox_gid (the group that owns the pod's sandbox), the
 * pod's supplementalGroups and fsGroup. pol NULL: no server policy (cueue sim, unit tests): only
 * the uid/gid 0 rule applies and out->switch_user is false.
 * Returns 0 with *out, or 1 with *field set to the offending field
 * ("runAsUser", "runAsGroup", "supplementalGroups" or "fsGroup"), *in_ctr
 * true when it is the container's (else the pod's securityContext) and
 * the reason (Kubernetes Forbidden style, without the field) in why:
 * uid/gid 0 without pol->allow_root; a uid/gid other than the server's
 * when !pol->switch_user; a value outside 0..2147483647; too many
 * groups. */
int api_pod_run_as(const struct api_pod_policy *pol, const json_t *spec, const json_t *ctr,
                   struct api_run_as *out, const char **field, bool *in_ctr, char *why,
                   size_t whylen);

struct api_admit_env {
    /* true when an object of this kind exists at ns/name (ns "" for
     * cluster-scoped kinds) */
    bool (*exists)(void *ctx, enum api_kind_id kind, const char *ns, const char *name);
    void *ctx;
    /* the server's pod policy; NULL = none allowed (no privileged
     * containers, no hostPath volumes) */
    const struct api_pod_policy *pod_policy;
    /* the stored object (a new reference) or NULL; NULL callback = no
     * lookups (the Namespace for managedJobsNamespaceSelector) */
    json_t *(*get)(void *ctx, enum api_kind_id kind, const char *ns, const char *name);
    /* which jobs Kueue manages; NULL = api_job_policy_defaults */
    const struct api_job_policy *job_policy;
};
/* api_admit with lookups: on create of a Job or RayJob in a namespace other
 * than kube-system and kueue-system, a missing kueue.x-k8s.io/queue-name
 * label becomes "default" when that LocalQueue exists, and a missing
 * kueue.x-k8s.io/priority-class label "default" when that
 * WorkloadPriorityClass exists (Kueue's ApplyDefaultLocalQueue and
 * ApplyDefaultWorkloadPriorityClass, kueue.md §1.10); the job is then
 * created suspended like any job with a queue name. env may be NULL (no
 * lookups: api_admit). Same returns as api_admit. */
int api_admit_in(const struct api_kind *k, json_t *obj, const json_t *old, const char *ns,
                 const struct api_admit_env *env, struct diag *d);
/* ---- the create path before admission ----
 * What the API server does to a new object before admitting it, in this
 * order, shared by `cueue server` (src/server/write.c) and `cueue sim`
 * (src/sim/apply.c) so the two cannot drift:
 *  1. api_create_prepare: drop the metadata the server owns (uid,
 *     resourceVersion, creationTimestamp, deletionTimestamp,
 *     deletionGracePeriodSeconds, generation, selfLink, managedFields);
 *     kubectl create -f of a `get -o yaml` output carries them.
 *  2. api_create_name: with no metadata.name, name = the first
 *     API_GENERATE_NAME_BASE_MAX characters of generateName + suffix (the
 *     caller's 5 random characters; NULL leaves it unnamed). Each retry
 *     after a taken name starts again from the prepared object.
 *  3. api_create_stamp: metadata.uid = uid (before admission: Job selectors
 *     are derived from it), and a Namespace's kubernetes.io/metadata.name
 *     label (Kubernetes' NamespaceDefaultLabelName).
 * Then api_admit_in with the store's lookups, then the store. obj is
 * changed in place; nothing is returned. */
#define API_GENERATE_NAME_BASE_MAX 58 /* 63 - 5, Kubernetes' name generator */
void api_create_prepare(json_t *obj);
void api_create_name(json_t *obj, const char *suffix);
void api_create_stamp(const struct api_kind *k, json_t *obj, const char *uid);
/* A copy of the stored Namespace ns with status.phase Active (the API
 * server's namespace strategy, applied right after a create). New
 * reference. */
json_t *api_namespace_activated(const json_t *ns);
/* Admit a write to the /status subresource: obj is decoded strictly like
 * api_admit, then everything but status is taken from old (a status write
 * changes nothing else), defaults applied and the kind's rules run (e.g.
 * Workload admission and reclaimablePods invariants). Same returns. */
int api_admit_status(const struct api_kind *k, json_t *obj, const json_t *old,
                     struct diag *d);

/* The message Kubernetes prints for a rejected object, e.g.
 * `ClusterQueue.kueue.x-k8s.io "cq" is invalid: [spec...: Invalid value: ...]`
 * or, for decode errors, `ClusterQueue in version "v1beta1" cannot be handled
 * as a ClusterQueue: strict decoding error: unknown field "spec.x"`.
 * Caller frees. */
char *api_error_message(const struct api_kind *k, const char *name, int rc,
                        const struct diag *d);

/* Typed decoders for stored (already admitted) documents. Each fills *out
 * (released with the matching _release) and returns 0, or CU_EINVAL if the
 * document is not of the expected shape (not an object, no name, a quantity
 * that does not parse); *out is then empty. Quantities are in Kueue's units
 * (quantity.h). v1beta1 and v1beta2 spellings are both read. The Workload
 * view fills every status field of struct api_workload except
 * avoid_flavors (the scheduler driver's). See docs/api.md. */
int api_resource_flavor_from_json(const json_t *obj, struct api_resource_flavor *out);
int api_cluster_queue_from_json(const json_t *obj, struct api_cluster_queue *out);
int api_cohort_from_json(const json_t *obj, struct api_cohort *out);
int api_local_queue_from_json(const json_t *obj, struct api_local_queue *out);
int api_priority_class_from_json(const json_t *obj, struct api_priority_class *out);
int api_workload_from_json(const json_t *obj, struct api_workload *out);
/* Decode again only the status fields of *wl (has_admission, admission,
 * the condition flags and times, evicted_reason, requeue state,
 * reclaimable pods) from obj, keeping everything else *wl holds: for a
 * Workload whose metadata and spec are the very ones *wl was decoded from
 * by api_workload_from_json, which it then equals (a status write seen by
 * the scheduler driver). keep_admission: obj's status.admission is also
 * the very value (or absence) *wl's admission was decoded from, which is
 * then kept as it is. Returns 0, or CU_EINVAL (obj is not an object, a
 * resourceUsage quantity does not parse) with *wl released (empty). */
int api_workload_status_from_json(const json_t *obj, struct api_workload *wl,
                                  bool keep_admission);

/* The values of a Workload's status that the decoding reads, borrowed,
 * NULL where absent: status.admission, requeueState, reclaimablePods, and
 * the first condition of each type in the order of the API_WL_COND_*
 * indices (what api_cond_find_all finds in status.conditions). */
enum { API_WL_COND_QUOTA_RESERVED, API_WL_COND_ADMITTED, API_WL_COND_FINISHED,
       API_WL_COND_EVICTED, API_WL_COND_REQUEUED, API_WL_N_CONDS };
struct api_wl_status_values {
    const json_t *admission, *requeue_state, *reclaimable;
    const json_t *cond[API_WL_N_CONDS];
};
/* api_workload_status_from_json from the status values v the caller found
 * (a reading it has already made of the document), decoding again only
 * what was read from a value that is not the very one (same address) in
 * was: *wl was decoded from a document whose values were was (NULL: not
 * known, everything is decoded), and each status field is read from one
 * value only, so the fields of an unchanged value are kept as they are.
 * The caller vouches that was's values are alive and unchanged (stored
 * documents are immutable; it holds references). The scheduler's decode
 * memo (ctrl/kueue/memo.c) uses it for status writes, which change one or
 * two of these values. Returns 0, or CU_EINVAL (a resourceUsage quantity
 * does not parse) with *wl released (empty). */
int api_workload_status_from_values(const struct api_wl_status_values *v,
                                    const struct api_wl_status_values *was,
                                    struct api_workload *wl);

/* Whether a stored ClusterQueue (JSON) names the ResourceFlavor `flavor`
 * in spec.resourceGroups[].flavors[], or the AdmissionCheck `check` in
 * spec.admissionChecks[] or spec.admissionChecksStrategy.admissionChecks[]
 * (.name): the uses Kueue's resource-in-use finalizer on a ResourceFlavor
 * or AdmissionCheck waits for. Pure; false for NULL or malformed input. */
bool api_cluster_queue_uses_flavor(const json_t *cq, const char *flavor);
bool api_cluster_queue_uses_check(const json_t *cq, const char *check);

/* Kueue TAS pod-set annotations (kueue.x-k8s.io/podset-required-topology,
 * -preferred-topology, -unconstrained-topology: "true") of a pod template
 * as a Workload spec.podSets[].topologyRequest object ({required: LEVEL} /
 * {preferred: LEVEL} / {unconstrained: true}); a new reference, or NULL
 * when the template has none. Required wins over preferred over
 * unconstrained, as Kueue's validation allows only one. With
 * kueue.x-k8s.io/podset-slice-required-topology: LEVEL it also holds
 * podSetSliceRequiredTopology and, when kueue.x-k8s.io/podset-slice-size is
 * a whole number >= 1, podSetSliceSize. */
json_t *api_topology_request_from_template(const json_t *tmpl);
/* Decode a topologyRequest object (NULL: none) into p's topology_mode,
 * topology_level, slice_level and slice_size (replacing them). */
void api_topology_request_decode(const json_t *tr, struct api_podset *p);
/* The scheduling view of a PodTemplateSpec ({metadata, spec}) as Kueue
 * computes it: per-pod requests = max(max(initContainers), sum(containers))
 * + overhead, with limits filling absent requests; nodeSelector; required
 * node affinity terms; tolerations. name and count are copied into out.
 * Restartable (sidecar) init containers count with the containers and
 * with every later init container, pod-level spec.resources.requests
 * replace the sums where given (k8s component-helpers PodRequests); sums
 * saturate at INT64_MAX; the `pods` resource is not derived here. name NULL
 * means "main". Returns 0, or CU_EINVAL (out released) when tmpl has no
 * spec object or holds an unparseable quantity. Release with
 * api_podset_release. */
int api_podset_from_template(const json_t *tmpl, const char *name, int32_t count,
                             struct api_podset *out);

#endif
