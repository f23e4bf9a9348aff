/*
 * nodes/nodes: what the node-side reconcilers (nodepool, autoscaler, binder,
 * nodeagent) and their helper files (nodes_*.c) share inside ctrl/. The
 * cluster model is rebuilt from the store whenever a pass needs it (a
 * "snapshot" of Nodes and the requests of the pods bound to them), so no
 * state here can drift from the store except what only lives in memory on
 * purpose: pending provider requests, idle-since times, retry times.
 *
 * Well-known strings (labels, taints, annotations) are GKE's and cluster
 * autoscaler's, restated in docs/nodes.md.
 */
#ifndef CUEUE_CTRL_NODES_INT_H
#define CUEUE_CTRL_NODES_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/types.h"
#include "ctrl/ctrl-int.h"
#include "provider/pool.h"
#include "provider/provider.h"

#define LABEL_NODEPOOL "cloud.google.com/gke-nodepool"
#define LABEL_INSTANCE_TYPE "node.kubernetes.io/instance-type"
#define LABEL_MACHINE_FAMILY "cloud.google.com/machine-family"
#define LABEL_HOSTNAME "kubernetes.io/hostname"
#define LABEL_TPU_ACCELERATOR "cloud.google.com/gke-tpu-accelerator"
#define LABEL_TPU_TOPOLOGY "cloud.google.com/gke-tpu-topology"
/* GKE's compact-placement topology labels (Kueue TAS levels); a local
 * pool is one block holding one sub-block, both named after the pool */
#define LABEL_TOPOLOGY_BLOCK "cloud.google.com/gce-topology-block"
#define LABEL_TOPOLOGY_SUBBLOCK "cloud.google.com/gce-topology-subblock"
#define LABEL_GPU_ACCELERATOR "cloud.google.com/gke-accelerator"
#define LABEL_GPU_COUNT "cloud.google.com/gke-accelerator-count"
#define LABEL_QUEUED "cloud.google.com/gke-queued"
#define LABEL_FLEX_START "cloud.google.com/gke-flex-start"
#define LABEL_PROVISIONING "cloud.google.com/gke-provisioning"
#define LABEL_PROVREQ "autoscaling.gke.io/provisioning-request"
#define ANNOT_SLICE "cueue.dev/tpu-slice"
#define ANNOT_PROVREQ "cueue.dev/provisioning-request"
#define ANNOT_CONSUME_PR "autoscaling.x-k8s.io/consume-provisioning-request"
#define ANNOT_CONSUME_PR_OLD "cluster-autoscaler.kubernetes.io/consume-provisioning-request"
#define ANNOT_METRICS "cueue.dev/metrics"
#define FINALIZER_POD "cueue.dev/pod-process"
#define LABEL_KUEUE_TAS "kueue.x-k8s.io/tas"          /* pods of a TAS pod set */
#define ANNOT_KUEUE_WORKLOAD "kueue.x-k8s.io/workload" /* their Workload's name */
#define LABEL_SLURM_PARTITION "slurm.cueue.dev/partition"
#define NODES_SLURM_FEATURE_PREFIX "feature.slurm.cueue.dev/"
#define NODES_SLURM_REFRESH_MS 2000 /* a Slurm pool's Nodes follow the last read this often */

#define NODES_RETRY_MS (60 * 1000) /* stockout / missing-room retry period */

/* ---- scheduling views (nodes/fit.c) ---- */

/* One node as the binder and the autoscaler see it. */
struct nodes_node {
    char *name;
    char *pool;               /* label cloud.google.com/gke-nodepool, "" if none */
    char *provreq;            /* annotation cueue.dev/provisioning-request ("ns/name")
                                 of the request that brought it, or NULL */
    char *slice;              /* annotation cueue.dev/tpu-slice or NULL */
    struct api_labels labels;
    struct api_taint *taints;
    size_t n_taints;
    struct api_reslist alloc; /* status.allocatable (cpu milli, pods, ...) */
    struct api_reslist used;  /* requests of non-terminated pods bound here */
    int64_t n_pods;           /* non-terminated pods bound here */
    bool unschedulable;       /* spec.unschedulable */
    bool ready;               /* Ready=True */
    bool is_virtual;          /* a node the autoscaler plans, not in the store */
};

/* Every Node, with the usage of the pods bound to it. */
struct nodes_snap {
    struct nodes_node *nodes; /* sorted by name */
    size_t n;
};

/* The scheduling view of a pod: requests (with "pods": 1), nodeSelector,
 * required node affinity, tolerations. Returns 0 or CU_EINVAL. */
int nodes_pod_view(const json_t *pod, struct api_podset *out);
/* True when the pod counts against its node (not Succeeded/Failed). */
bool nodes_pod_is_active(const json_t *pod);
/* Drop empty reason/message fields of a pod's conditions (v1.PodCondition
 * omits them; api_cond_set writes ""). */
void nodes_pod_tidy_conditions(json_t *pod);
/* The ProvisioningRequest a pod consumes (annotation), or NULL. */
const char *nodes_pod_provreq(const json_t *pod);

/* Build the snapshot from the store (Nodes, then every active bound Pod). */
void nodes_snap_build(struct store *s, struct nodes_snap *out);
void nodes_snap_release(struct nodes_snap *snap);
struct nodes_node *nodes_snap_find(struct nodes_snap *snap, const char *name);
/* Append a virtual node shaped like pool's nodes (labels, taints,
 * allocatable); returns it (valid until the next append). */
struct nodes_node *nodes_snap_add_virtual(struct nodes_snap *snap, const struct prov_pool *pool);
/* Count a pod's requests against a node. */
void nodes_node_account(struct nodes_node *n, const struct api_podset *pod);
void nodes_node_release(struct nodes_node *n);

/* Why a pod does not fit a node: kube-scheduler's reason strings. */
struct nodes_why {
    char *reasons[8];
    int n;
};
/* True when pod fits node (taints, selector/affinity, free resources, in
 * kube-scheduler's filter order); otherwise the reasons go to *why (may be
 * NULL). Release why with nodes_why_release. */
bool nodes_fit(const struct nodes_node *node, const struct api_podset *pod,
               struct nodes_why *why);
/* True when the pod's selector, affinity and tolerations accept node (no
 * resource check). */
bool nodes_fit_static(const struct nodes_node *node, const struct api_podset *pod);
void nodes_why_release(struct nodes_why *why);

/* Histogram of reasons over nodes -> "0/4 nodes are available: 1
 * Insufficient google.com/tpu, 3 node(s) didn't match Pod's node
 * affinity/selector." (kube-scheduler's FitError text). */
struct nodes_fiterr {
    struct { char *reason; int count; } *items;
    size_t n;
    int n_nodes;
};
void nodes_fiterr_add(struct nodes_fiterr *fe, struct nodes_why *why);
char *nodes_fiterr_message(const struct nodes_fiterr *fe);
void nodes_fiterr_release(struct nodes_fiterr *fe);

/* Most-allocated score of placing pod on node (higher = fuller), per mille. */
int64_t nodes_score(const struct nodes_node *node, const struct api_podset *pod);

/* ---- Node objects (nodes/node.c) ---- */

/* The labels / taints every node of pool carries (hostname and the
 * provisioning-request label excluded). */
void nodes_pool_labels(const struct prov_pool *pool, struct api_labels *out);
void nodes_pool_taints(const struct prov_pool *pool, struct api_taint **out, size_t *n);
/* Create n nodes of pool in whole slices (a multi-host pool's unit). Nodes
 * brought by a ProvisioningRequest (provreq_key "ns/name" non-NULL) get
 * label autoscaling.gke.io/provisioning-request=<name> and annotation
 * cueue.dev/provisioning-request=<ns/name>. Names (new JSON array of
 * strings, caller decrefs) are GKE's gke-cueue-<pool>-<8 hex>-<4 chars>. */
json_t *nodes_create(struct ctrl *c, const struct prov_pool *pool, int n,
                     const char *provreq_key);
/* Delete Nodes by name (array of strings). Returns how many went. */
int nodes_delete(struct ctrl *c, const json_t *names);
/* Names of the Nodes of a pool (new array, sorted). */
json_t *nodes_of_pool(struct store *s, const char *pool);

/* ---- Slurm pools (nodes/slurmpool.c, docs/slurm.md) ---- */

struct prov_slurm_node;
struct prov_slurm_reader;
struct nodes_ctx;
/* The Node for Slurm node sn of pool p (spec.provider slurm): named as in
 * Slurm; labels = the pool's config.labels, cloud.google.com/gke-nodepool,
 * kubernetes.io/hostname, slurm.cueue.dev/partition and
 * feature.slurm.cueue.dev/<feature>=true per Slurm feature (a feature that
 * makes no valid label key is left out); allocatable = capacity = CPUs,
 * RealMemory, pods 110, GRES tpu -> google.com/tpu and gpu ->
 * nvidia.com/gpu; a node that takes no new work (down, drained, ...) is
 * Ready=False (reason SlurmNodeNotReady, Slurm's reason in the message)
 * and spec.unschedulable. old (the stored Node or NULL) keeps the Ready
 * condition's transition time. Pure; new reference. */
json_t *nodes_slurm_node_json(const struct prov_pool *p, const struct prov_slurm_node *sn,
                              const json_t *old, int64_t now_ms);
/* Make pool p's Nodes its Slurm partition's as ctx's reader last read them
 * (prov_slurm_reader_get: never blocks): create, update, delete. Returns
 * 0; 1 when the partition was not read yet (nothing changed: ask again
 * soon); or CU_ENOTFOUND (no such partition) / CU_EIO (slurmctld
 * unreachable, no configuration) with the reason in msg, the Nodes then
 * left as they were. */
int nodes_slurm_sync(struct ctrl *c, struct nodes_ctx *ctx, const json_t *pool_obj,
                     const struct prov_pool *p, char *msg, size_t msglen);

/* ---- shared state (nodepool.c) ---- */

/* A provider request in flight. */
struct nodes_pending {
    char *pool;
    int n_nodes;
    int64_t ready_at_ms;
    char *provreq_key;     /* "ns/name" of the ProvisioningRequest it serves, or NULL */
    struct nodes_pending *next;
};

struct nodes_ctx {
    struct prov *prov;       /* ctrl_prov() or own_prov */
    struct prov *own_prov;
    int rid_pool, rid_autoscaler, rid_binder, rid_agent;
    struct nodes_pending *pending; /* ordered by creation */
    json_t *idle_since;      /* node name -> ms first seen idle */
    json_t *pool_retry_at;   /* pool name -> ms of the next stockout retry */
    json_t *provreqs;        /* "ns/name" -> in-memory request state */
    int64_t scale_timer_at;  /* the earliest "scale" timer pending, 0 = none */
    json_t *slurm_refresh_at; /* Slurm pool name -> ms of its pending refresh timer */
    struct prov_slurm_reader *slurm_reader; /* made for the first Slurm pool */
};

/* The node reconcilers' shared state (owned by the nodepool reconciler). */
struct nodes_ctx *nodes_ctx(struct ctrl *c);
/* Decode a NodePool; NULL (and no error output) when absent or invalid.
 * Release with prov_pool_release + xfree. */
struct prov_pool *nodes_pool_get(struct store *s, const char *name);
/* Nodes in flight for pool (pending provider requests). */
int nodes_pending_count(const struct nodes_ctx *ctx, const char *pool);
/* Ask the provider for n nodes of pool (pool_obj: the NodePool, borrowed)
 * as of asked_ms (0 = now; earlier for a request a previous server made,
 * so a restart does not start its delay over). On success a pending entry
 * is recorded (for a ProvisioningRequest
 * when provreq_key "ns/name" is given: queued, all-at-once) and the
 * autoscaler runs at the ready time; nodes of entries without provreq_key
 * are created then. Returns ready_at (ms), or PROV_NEVER with the
 * provider's message in msg (the pool is then retried NODES_RETRY_MS
 * later). */
int64_t nodes_request(struct ctrl *c, const json_t *pool_obj, const struct prov_pool *pool, int n,
                      const char *provreq_key, int64_t asked_ms, char *msg, size_t msglen);
/* Drop pending requests of a pool (pool deleted) or of one PR key. */
void nodes_pending_drop(struct nodes_ctx *ctx, const char *pool, const char *provreq_key);
/* Schedule the autoscaler's global pass at at_ms (coalesced). */
void nodes_wake_scale(struct ctrl *c, int64_t at_ms);
/* Trace and record an event for nodes that came (count > 0). */
void nodes_report_scaled_up(struct ctrl *c, const char *pool, const json_t *names,
                            const char *provreq_key);

/* ---- scale-up / scale-down (nodes/scaleup.c, nodes/scaledown.c) ---- */

/* Every valid NodePool, by name, with its object. */
struct nodes_pools {
    struct nodes_pool_item {
        json_t *obj;           /* the NodePool (reference) */
        struct prov_pool pool;
    } *items;
    size_t n;
};
void nodes_pools_load(struct store *s, struct nodes_pools *out);
void nodes_pools_release(struct nodes_pools *pools);
/* Existing Nodes of pool in the snapshot (virtual ones excluded). */
int nodes_snap_count_pool(const struct nodes_snap *snap, const char *pool);

/* Place a pod (simulation) on the first snapshot node that fits it, and
 * count it there; false when none does. */
bool nodes_place_existing(struct nodes_snap *snap, const struct api_podset *ps);
/* Plan new nodes for a pod that fits no node: whole units of the first
 * autoscaling, non-queued pool (by name) whose node fits it, within
 * maxNodeCount counting existing, in-flight and planned[] nodes, skipping
 * pools in stockout retry. Adds the virtual nodes to snap and the pod to
 * the first; returns the pool's index in pools, or -1. */
int nodes_plan_new(struct nodes_ctx *ctx, struct nodes_snap *snap, const struct nodes_pools *pools,
                   int *planned, const struct api_podset *ps, int64_t now);
/* Scale autoscaling pools up for the pods marked Unschedulable (see
 * autoscaler.c). snap gains virtual nodes for what is in flight. */
void nodes_scale_up(struct ctrl *c, struct nodes_ctx *ctx, struct nodes_snap *snap,
                    const struct nodes_pools *pools);
/* Remove nodes idle for the pool's scale-down time, down to minNodeCount,
 * whole slices; returns the earliest time another node becomes due (or
 * INT64_MAX). */
int64_t nodes_scale_down(struct ctrl *c, struct nodes_ctx *ctx, const struct nodes_snap *snap,
                         const struct nodes_pools *pools);

/* ---- ProvisioningRequests (nodes/provreq.c) ---- */

/* Reconcile one ProvisioningRequest (class queued-provisioning.gke.io,
 * best-effort-atomic-scale-up or check-capacity). */
void nodes_provreq_reconcile(struct ctrl *c, const char *ns, const char *name);
/* True when nodes of the request provreq_key ("ns/name") are protected
 * from scale-down: it is Provisioned and its booking has not ended. */
bool nodes_provreq_booked(struct ctrl *c, const char *provreq_key);
/* Handle provider revocations for pool: mark PRs CapacityRevoked, delete nodes. */
void nodes_provreq_revoke(struct ctrl *c, const struct prov_event *ev);

/* ---- node agent helpers (nodes/volumes.c, nodes/podenv.c) ---- */

/* Stage pod's volumes through the executor (exec_stage): the sandbox, each
 * configMap's files and each emptyDir under exec_volume_dir(sandbox, name);
 * hostPath volumes are created where they point. Returns 0, CU_ENOTFOUND
 * (a ConfigMap is missing: retry later), CU_EINVAL (an unsupported volume)
 * or CU_EIO, with the kubelet-like reason in msg. */
int nodes_volumes_prepare(struct ctrl *c, const json_t *pod, const char *sandbox, char *msg,
                          size_t msglen);
/* The mountPath -> host directory rewrites of every container's
 * volumeMounts (subPath appended); the first container's mount of a path
 * wins. Appends to (*out, *n); strings owned. */
void nodes_volume_mounts(const json_t *pod, const char *sandbox, struct exec_env **out,
                         size_t *n);

/* A pod prepared for the executor: volumes materialised, env resolved. */
struct nodes_podrun {
    json_t *pod;               /* deep copy with every env value resolved */
    char *sandbox;             /* exec_sandbox_dir(), NULL in sim */
    struct exec_env *env;      /* node-derived variables */
    size_t n_env;
    struct exec_env *mounts;   /* mountPath -> host dir */
    size_t n_mounts;
};
/* Prepare pod (bound to node) for start: *out filled (release with
 * nodes_podrun_release, also after a failure). Returns 0, CU_ENOTFOUND
 * when a volume's or env's ConfigMap is missing (retry later; msg says
 * which), CU_EINVAL when the pod cannot run here, or CU_EIO when its
 * volumes cannot be staged (the reason in msg). */
int nodes_podrun_prepare(struct ctrl *c, const json_t *pod, const json_t *node,
                         struct nodes_podrun *out, char *msg, size_t msglen);
void nodes_podrun_release(struct nodes_podrun *r);

/*
 * nodes_provreq: internals of ProvisioningRequest fulfilment shared by
 * nodes/provreq.c (lifecycle: conditions, timers, booking, revocation) and
 * nodes/provreq_plan.c (what a request needs: its PodTemplates, the node
 * pool it targets, how many nodes, and the per-class steps).
 */


#define PRC_QUEUED_NAME "queued-provisioning.gke.io"
#define PRC_ATOMIC_NAME "best-effort-atomic-scale-up.autoscaling.x-k8s.io"
#define PRC_CHECK_NAME "check-capacity.autoscaling.x-k8s.io"

enum prc { PRC_QUEUED, PRC_ATOMIC, PRC_CHECK };

/* The reasons and messages a class writes (GKE's for queued provisioning,
 * the OSS cluster autoscaler's for the other two; provisioning.md §1.5, §1.7). */
struct prc_texts {
    const char *accepted_reason, *accepted_msg;
    const char *provisioned_reason, *provisioned_msg;
    const char *waiting_reason, *waiting_msg;
    const char *booking_reason, *booking_msg;
    const char *expired_reason, *expired_msg;
};
const struct prc_texts *prc_texts(enum prc cls);

/* One request being reconciled: the working copy whose status is written
 * back once, and its in-memory state (ctx->provreqs[key]). */
struct pr_work {
    struct ctrl *c;
    struct nodes_ctx *ctx;
    enum prc cls;
    const char *ns, *name;
    char *key;              /* "ns/name" */
    json_t *pr;             /* deep copy */
    json_t *state;          /* borrowed from ctx->provreqs */
    struct api_podset *podsets;
    size_t n_podsets;
};

/* Set a condition on w->pr; traces ProvisioningRequestUpdated when its
 * status changes (or it is new). */
void pr_set_cond(struct pr_work *w, const char *type, const char *status, const char *reason,
                 const char *message);
/* Queue the request's key at at_ms. */
void pr_timer(struct pr_work *w, int64_t at_ms);
/* Fail the request (terminal): Failed=True, pending provider requests dropped. */
void pr_fail(struct pr_work *w, const char *reason, const char *message);
/* Create the nodes of the request's provider requests that came due
 * (labelled with the request); *waiting tells whether some are still in
 * flight (a timer is set for them). Returns the number of nodes created. */
int pr_finish_pending(struct pr_work *w, bool *waiting);
/* True when the request has a provider request in flight. */
bool pr_has_pending(const struct pr_work *w);

/* Load the request's PodTemplates into w->podsets. Returns 0, CU_ENOTFOUND
 * (msg names the missing template) or CU_EINVAL. */
int pr_load_templates(struct pr_work *w, char *msg, size_t msglen);
/* The per-class steps for a request that is not provisioned yet. */
void pr_step_queued(struct pr_work *w);
void pr_step_atomic(struct pr_work *w);
void pr_step_check(struct pr_work *w);

#endif
