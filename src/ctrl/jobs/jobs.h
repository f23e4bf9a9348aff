/*
 * jobs/jobs: the generic job lifecycle shared by the job integrations
 * (batch/v1 Job in job.c, ray.io/v1 RayJob in rayjob.c, jobset.x-k8s.io
 * JobSet in jobset.c), after Kueue's
 * jobframework (kueue.md §4.1): a managed job (label
 * kueue.x-k8s.io/queue-name) is suspended until its Workload is Admitted,
 * started with the admission injected into its pod templates, stopped (and
 * its templates restored) on eviction, and its outcome is written back as
 * Workload Finished. ctrl-internal.
 *
 * An integration describes its kind through struct jobs_integration; the
 * shared reconcile step (jobs_frame_reconcile) does the rest. Indexes
 * (owner uid -> Workload names) are kept by the caller's reconciler from
 * store events (jobs_frame_observe).
 */
#ifndef CUEUE_CTRL_JOBS_INT_H
#define CUEUE_CTRL_JOBS_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctrl/ctrl.h"
#include "ctrl/kueue/kueue.h"

/* One pod set as an integration derives it (Kueue's podset.PodSet). */
struct jobs_podset {
    char *name;
    int32_t count;
    int32_t min_count; /* 0 = not set */
    json_t *tmpl;      /* PodTemplateSpec {metadata, spec}; owned */
};

struct jobs_podsets {
    struct jobs_podset *items;
    size_t n;
};

void jobs_podsets_release(struct jobs_podsets *p);
/* Append a pod set (name copied, tmpl stolen). */
void jobs_podsets_add(struct jobs_podsets *p, const char *name, int32_t count,
                      int32_t min_count, json_t *tmpl);

/* The Workload for job (Kueue's jobframework ConstructWorkload): named
 * name, controlled by job (kueue.x-k8s.io/job-uid label, resource-in-use
 * finalizer), with the pod sets ps, the job's queue-name label as
 * spec.queueName, its WorkloadPriorityClass resolved, its provisioning and
 * elastic annotations. New reference. */
json_t *jobs_build_workload(struct ctrl *c, const json_t *job, const struct jobs_podsets *ps,
                            const char *name);

struct jobs_integration {
    const char *kind;  /* "Job" */
    const char *group; /* "batch" */
    const char *api_version; /* "batch/v1" */
    enum api_kind_id kind_id;
    /* Kueue's pod sets for the job. Returns 0, or CU_EINVAL with a reason. */
    int (*podsets)(struct ctrl *c, const json_t *job, struct jobs_podsets *out, char *err,
                   size_t errlen);
    /* The job's pod template for pod set i named name (mutable, inside
     * job), created when the integration materialises it (RayJob's
     * submitter); NULL when the job has no such pod set. */
    json_t *(*template_at)(json_t *job, size_t i, const char *name);
    /* Kueue's IsActive: the job still has running pods. */
    bool (*is_active)(const json_t *job);
    /* Finished? Writes the message and whether it succeeded. */
    bool (*finished)(const json_t *job, char *msg, size_t msglen, bool *success);
    /* PodsReady as the integration computes it (wl is the Workload). */
    bool (*pods_ready)(const json_t *job, const json_t *wl);
    /* Extra start/stop steps (partial admission's parallelism); may be NULL. */
    void (*after_start)(json_t *job, const struct kq_podset_info *infos, size_t n);
    void (*after_stop)(json_t *job, const json_t *wl);
    /* reclaimablePods JSON array for the Workload, or NULL; may be NULL. */
    json_t *(*reclaimable)(const json_t *job, const json_t *wl);
    /* Extra text hashed into the Workload name ("<generation>" for
     * elastic jobs), or NULL. Caller frees. */
    char *(*name_extra)(const json_t *job);
};

/* Per-reconciler state of the generic lifecycle. */
/* The ownerReferences of the last store event read, shared by the
 * reconcilers of one controller that read them (gc and the job
 * integrations: each event reaches all of them). An event is known by its
 * resourceVersion and object, unique in one store while the event is
 * dispatched. */
struct jobs_ref_memo {
    int refs;               /* holders */
    uint64_t rv;            /* the event's */
    const json_t *obj;      /* the event's object (NULL: none read yet) */
    const json_t *owners;   /* its metadata.ownerReferences (borrowed), or NULL */
    bool ctrl_known;        /* ctrl_ref was looked up */
    const json_t *ctrl_ref; /* its controller reference (borrowed), or NULL */
};

/* A new memo with one holder; release with jobs_ref_memo_drop. */
struct jobs_ref_memo *jobs_ref_memo_new(void);
/* One more holder of m; returns m. */
struct jobs_ref_memo *jobs_ref_memo_hold(struct jobs_ref_memo *m);
/* One holder fewer (freed with the last; NULL: nothing). */
void jobs_ref_memo_drop(struct jobs_ref_memo *m);
/* ev's object's metadata.ownerReferences (borrowed from ev->obj; NULL when
 * it has none), read once per event for every holder of m. */
const json_t *jobs_ref_memo_owners(struct jobs_ref_memo *m, const struct store_event *ev);
/* ev's object's controller ownerReference, as kq_controller_ref (borrowed),
 * read once per event for every holder of m. */
const json_t *jobs_ref_memo_controller(struct jobs_ref_memo *m, const struct store_event *ev);
/* The memo of c's garbage collector (gc.c; borrowed), or NULL when c has
 * no gc reconciler. */
struct jobs_ref_memo *jobs_gc_ref_memo(struct ctrl *c);

struct jobs_frame {
    const struct jobs_integration *in;
    struct kq_index *workloads; /* job uid -> Workload names */
    struct jobs_ref_memo *memo; /* shared with gc, see jobs_rec_join */
};

void jobs_frame_init(struct jobs_frame *f, const struct jobs_integration *in);
void jobs_frame_release(struct jobs_frame *f);
/* Keep the index current from a store event of a Workload; returns the
 * owning job's name (borrowed from the event object) when the Workload is
 * controlled by this integration's kind, else NULL. */
const char *jobs_frame_observe(struct jobs_frame *f, const struct store_event *ev);

/* A job kind's reconciler state: the generic lifecycle, the owner -> Pods
 * index, and the kind's own controller step (Kubernetes' Job controller,
 * the KubeRay operator) run when the Kueue step left the job alone. The
 * jobs_rec_* functions are its ctrl_reconciler_ops callbacks. */
struct jobs_rec {
    int rid;
    struct jobs_frame frame;
    struct kq_index *pods; /* job uid -> Pod names */
    /* cap: pods the job may run in its first pod set (an elastic job's
     * admitted slice), -1 = no cap */
    void (*sync)(struct ctrl *c, int rid, struct kq_index *pods_ix, const json_t *job,
                 int32_t cap);
};

/* Let r share the ownerReferences memo of c's garbage collector (each
 * event's references then read once for gc and every integration);
 * nothing when c has none. */
void jobs_rec_join(struct jobs_rec *r, struct ctrl *c);
struct jobs_rec *jobs_rec_new(const struct jobs_integration *in,
                              void (*sync)(struct ctrl *c, int rid, struct kq_index *pods_ix,
                                           const json_t *job, int32_t cap));
/* Map events of the job kind, the Pods and Jobs it controls, and its
 * Workloads to the job's key (keeping the indexes current). */
void jobs_rec_on_event(struct ctrl *c, void *self, const struct store_event *ev);
/* The Kueue step, then (unless it wrote the job) the kind's own step. */
void jobs_rec_reconcile(struct ctrl *c, void *self, const char *ns, const char *name);
void jobs_rec_free(void *self);

/* True when the job is managed by Kueue (has the queue-name label). */
bool jobs_is_managed(const json_t *job);
bool jobs_is_suspended(const json_t *job);

/* One reconcile step of the generic lifecycle for job (the stored object;
 * borrowed). Returns true when it wrote the job (the caller stops this
 * reconcile and waits for the resulting event), false when the job is
 * untouched. rid is the caller's reconciler id (for requeues). */
bool jobs_frame_reconcile(struct ctrl *c, struct jobs_frame *f, int rid, const json_t *job);

/* ---- pods (jobs/pods.c) ---- */

/* Phase helpers over a Pod object. */
bool jobs_pod_is_terminal(const json_t *pod);
bool jobs_pod_succeeded(const json_t *pod);
bool jobs_pod_failed(const json_t *pod);
bool jobs_pod_ready(const json_t *pod);
/* The pod's failure text ("<reason>: <message>" of the first failed
 * container, else status.message); caller frees; never NULL. */
char *jobs_pod_failure(const json_t *pod);
/* True when a container could not start (StartError, CrashLoopBackOff,
 * ErrImagePull...). Fills the message (caller frees). */
bool jobs_pod_start_failed(const json_t *pod, char **msg);
/* Append env vars (`env`: a JSON array of {"name","value"}) to every
 * container of the pod spec unless the container already sets the name. */
void jobs_pod_add_env(json_t *pod_spec, const json_t *env);
/* Copy pod annotation cueue.dev/metrics of each pod into the object's
 * annotation cueue.dev/metrics as {pod-name: dict} (keeping workers seen
 * before). True when the annotation changed. */
bool jobs_collect_metrics(json_t *obj, const json_t *pods);
/* The containerPort of the port named name in any container of pod_spec
 * (a Pod's spec; borrowed), the first found in container order, or 0 when
 * none has that name. */
int jobs_pod_named_port(const json_t *pod_spec, const char *name);
/* The host ports cueue hands to pods that share the host's network (the
 * process executor): 12000-31999, below Linux's ephemeral range
 * (ip_local_port_range, 32768-60999 by default), so that no outgoing
 * connection of any program on the machine holds one when a pod binds it. */
#define JOBS_HOST_PORT_BASE 12000
#define JOBS_HOST_PORTS 20000
/* Deterministic coordinator port for a job uid: JOBS_HOST_PORT_BASE +
 * (sha1(uid) % JOBS_HOST_PORTS). */
int jobs_master_port(const char *uid);

/* ---- the Kubernetes Job controller (jobs/batch.c) ---- */

/* Run kube-controller-manager's Job controller once for job (borrowed):
 * create Pods for an unsuspended Job (NonIndexed/Indexed, parallelism,
 * completions, the multi-host env), delete active Pods of a suspended or
 * finished one, and write status (active, ready, succeeded, failed,
 * startTime, completionTime, completedIndexes, conditions Suspended,
 * SuccessCriteriaMet/Complete, FailureTarget/Failed) and the per-worker
 * metrics annotation. pods_ix maps a Job uid to its Pods' names. cap >= 0
 * limits the active pods (an elastic Job's admitted slice; the others wait
 * as Kueue's scheduling gate would hold them); -1 = parallelism. */
void jobs_batch_sync(struct ctrl *c, int rid, struct kq_index *pods_ix, const json_t *job,
                     int32_t cap);
/* The owner's Pods (names from the index, current state, controller uid
 * checked) as a new array. */
json_t *jobs_owned_pods(struct ctrl *c, struct kq_index *pods_ix, const json_t *owner);

/* ---- the KubeRay operator (jobs/ray.c) ---- */

/* Kueue's default submitter pod template for a RayJob in K8sJobMode
 * (container ray-job-submitter, the head image, requests 500m/200Mi,
 * limits 1/1Gi, restartPolicy Never). New reference. */
json_t *jobs_ray_default_submitter(const json_t *rayjob);
/* The RayJob's submission mode ("K8sJobMode" when unset). Borrowed. */
const char *jobs_ray_mode(const json_t *rayjob);
/* Run the KubeRay operator once for a RayJob (borrowed): the deployment
 * state machine of provisioning.md §3.2 (Initializing -> Running ->
 * Complete/Failed, Suspending -> Suspended), the cluster's Pods (head with
 * the autoscaler sidecar, numOfHosts workers per replica with the TPU
 * webhook's env) and the submitter Job. pods_ix maps a RayJob uid to its
 * Pods. A Ray pod that cannot start (no `ray` here) fails the RayJob with
 * a message that says so. cap is ignored (RayJobs do not resize here). */
void jobs_ray_sync(struct ctrl *c, int rid, struct kq_index *pods_ix, const json_t *rayjob,
                   int32_t cap);

#endif
