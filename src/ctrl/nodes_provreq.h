/*
 * nodes_provreq: internals of ProvisioningRequest fulfilment shared by
 * nodes_provreq.c (lifecycle: conditions, timers, booking, revocation) and
 * nodes_provreq_plan.c (what a request needs: its PodTemplates, the node
 * pool it targets, how many nodes, and the per-class steps).
 */
#ifndef CUEUE_CTRL_NODES_PROVREQ_H
#define CUEUE_CTRL_NODES_PROVREQ_H

#include "ctrl/nodes_int.h"

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
