/*
 * metrics: the control plane's counters and histograms (ctrl/metrics.h),
 * one util/prom family each, named and labelled as Kueue names them
 * (pkg/metrics in Kueue; docs/metrics.md lists them with what differs),
 * and the scrape: the families, then the gauges computed from the engine
 * and the store (kueue/metrics.c, nodes/metrics.c). Loop thread only.
 */
#include <string.h>

#include "api/meta.h"
#include "ctrl/ctrl.h"
#include "ctrl/metrics.h"
#include "engine/engine.h"
#include "util/clock.h"
#include "util/jsonx.h"
#include "util/prom.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

enum fam {
    F_ATTEMPTS,
    F_ATTEMPT_DURATION,
    F_QR_TOTAL,
    F_QR_WAIT,
    F_ADM_TOTAL,
    F_ADM_WAIT,
    F_CHECKS_WAIT,
    F_EVICTED,
    F_PREEMPTED,
    F_LQ_QR_TOTAL,
    F_LQ_QR_WAIT,
    F_LQ_ADM_TOTAL,
    F_LQ_ADM_WAIT,
    F_LQ_CHECKS_WAIT,
    F_LQ_EVICTED,
    F_PODS_STARTED,
    F_PODS_FINISHED,
    F__COUNT
};

/* label sets */
static const char *const L_RESULT[] = {"result"};
static const char *const L_CQ[] = {"cluster_queue"};
static const char *const L_CQ_REASON[] = {"cluster_queue", "reason"};
static const char *const L_PREEMPT[] = {"preempting_cluster_queue", "reason"};
static const char *const L_LQ[] = {"name", "namespace"};
static const char *const L_LQ_REASON[] = {"name", "namespace", "reason"};
static const char *const L_PHASE[] = {"phase"};

struct fam_desc {
    const char *name, *help;
    enum prom_type type;
    const char *const *labels;
    size_t n_labels;
    const double *bounds;
    size_t n_bounds;
};

#define WAIT prom_kueue_wait_bounds, 14
#define NOB NULL, 0
static const struct fam_desc fams[F__COUNT] = {
    [F_ATTEMPTS] = {"kueue_admission_attempts_total",
                    "The total number of attempts to admit workloads; result is 'success' when at "
                    "least one workload got quota reserved, else 'inadmissible'.",
                    PROM_COUNTER, L_RESULT, 1, NOB},
    [F_ATTEMPT_DURATION] = {"kueue_admission_attempt_duration_seconds",
                            "The latency of an admission attempt, per result.", PROM_HISTOGRAM,
                            L_RESULT, 1, prom_default_bounds, 11},
    [F_QR_TOTAL] = {"kueue_quota_reserved_workloads_total",
                    "The total number of quota reserved workloads per 'cluster_queue'.",
                    PROM_COUNTER, L_CQ, 1, NOB},
    [F_QR_WAIT] = {"kueue_quota_reserved_wait_time_seconds",
                   "The time between a workload was created or requeued until it got quota "
                   "reservation, per 'cluster_queue'.",
                   PROM_HISTOGRAM, L_CQ, 1, WAIT},
    [F_ADM_TOTAL] = {"kueue_admitted_workloads_total",
                     "The total number of admitted workloads per 'cluster_queue'.", PROM_COUNTER,
                     L_CQ, 1, NOB},
    [F_ADM_WAIT] = {"kueue_admission_wait_time_seconds",
                    "The time between a workload was created or requeued until admission, per "
                    "'cluster_queue'.",
                    PROM_HISTOGRAM, L_CQ, 1, WAIT},
    [F_CHECKS_WAIT] = {"kueue_admission_checks_wait_time_seconds",
                       "The time from when a workload got the quota reservation until admission, "
                       "per 'cluster_queue'.",
                       PROM_HISTOGRAM, L_CQ, 1, WAIT},
    [F_EVICTED] = {"kueue_evicted_workloads_total",
                   "The number of evicted workloads per 'cluster_queue' and 'reason' (Preempted, "
                   "PodsReadyTimeout, AdmissionCheck, ClusterQueueStopped, LocalQueueStopped, "
                   "Deactivated, and cueue's NoCapacity: flavor fallback).",
                   PROM_COUNTER, L_CQ_REASON, 2, NOB},
    [F_PREEMPTED] = {"kueue_preempted_workloads_total",
                     "The number of preempted workloads per 'preempting_cluster_queue' and "
                     "'reason' (InClusterQueue, InCohortReclamation, InCohortFairSharing, "
                     "InCohortReclaimWhileBorrowing).",
                     PROM_COUNTER, L_PREEMPT, 2, NOB},
    [F_LQ_QR_TOTAL] = {"kueue_local_queue_quota_reserved_workloads_total",
                       "The total number of quota reserved workloads per 'local_queue'.",
                       PROM_COUNTER, L_LQ, 2, NOB},
    [F_LQ_QR_WAIT] = {"kueue_local_queue_quota_reserved_wait_time_seconds",
                      "The time between a workload was created or requeued until it got quota "
                      "reservation, per 'local_queue'.",
                      PROM_HISTOGRAM, L_LQ, 2, WAIT},
    [F_LQ_ADM_TOTAL] = {"kueue_local_queue_admitted_workloads_total",
                        "The total number of admitted workloads per 'local_queue'.",
                        PROM_COUNTER, L_LQ, 2, NOB},
    [F_LQ_ADM_WAIT] = {"kueue_local_queue_admission_wait_time_seconds",
                       "The time between a workload was created or requeued until admission, "
                       "per 'local_queue'.",
                       PROM_HISTOGRAM, L_LQ, 2, WAIT},
    [F_LQ_CHECKS_WAIT] = {"kueue_local_queue_admission_checks_wait_time_seconds",
                          "The time from when a workload got the quota reservation until "
                          "admission, per 'local_queue'.",
                          PROM_HISTOGRAM, L_LQ, 2, WAIT},
    [F_LQ_EVICTED] = {"kueue_local_queue_evicted_workloads_total",
                      "The number of evicted workloads per 'local_queue' and 'reason'.",
                      PROM_COUNTER, L_LQ_REASON, 3, NOB},
    [F_PODS_STARTED] = {"cueue_executor_pods_started_total",
                        "Pods whose processes the executor started.", PROM_COUNTER, NULL, 0,
                        NOB},
    [F_PODS_FINISHED] = {"cueue_executor_pods_finished_total",
                         "Pods that ended, per final 'phase' (Succeeded or Failed; a pod that "
                         "could not start counts as Failed).",
                         PROM_COUNTER, L_PHASE, 1, NOB},
};

struct ctrl_metrics {
    struct prom_vec *v[F__COUNT];
};

struct ctrl_metrics *ctrl__metrics_new(void)
{
    struct ctrl_metrics *m = xcalloc(1, sizeof(*m));
    for (int i = 0; i < F__COUNT; i++) {
        const struct fam_desc *d = &fams[i];
        m->v[i] = prom_vec_new(d->name, d->help, d->type, d->labels, d->n_labels, d->bounds,
                               d->n_bounds);
    }
    return m;
}

void ctrl__metrics_free(struct ctrl_metrics *m)
{
    if (!m)
        return;
    for (int i = 0; i < F__COUNT; i++)
        prom_vec_free(m->v[i]);
    xfree(m);
}

static struct prom_vec *fam(struct ctrl *c, enum fam f)
{
    return ctrl__metrics(c)->v[f];
}

/* Seconds from since_ms to now (0 when unknown or in the future). */
static double secs_since(int64_t since_ms, int64_t now)
{
    return since_ms > 0 && now > since_ms ? (double)(now - since_ms) / 1000.0 : 0;
}

/* Kueue's queued wait: since the Requeued condition's last transition when
 * there is one, else since creation. */
static double queued_wait_s(const json_t *wl, int64_t now)
{
    int64_t t = api_cond_time_ms(wl, "Requeued");
    if (t <= 0)
        t = api_creation_ms(wl);
    return secs_since(t, now);
}

void ctrl_metrics_schedule_done(struct ctrl *c, const struct eng_result *r, double started_s)
{
    if (!r->head_cycles)
        return;
    bool reserved = false;
    for (size_t i = 0; i < r->n && !reserved; i++)
        reserved = r->items[i].type == ENG_RESERVE;
    ctrl_metrics_admission_attempt(c, reserved, clk_mono_s() - started_s);
}

void ctrl_metrics_admission_attempt(struct ctrl *c, bool success, double seconds)
{
    const char *r[] = {success ? "success" : "inadmissible"};
    prom_vec_add(fam(c, F_ATTEMPTS), r, 1);
    prom_vec_observe(fam(c, F_ATTEMPT_DURATION), r, seconds);
}

void ctrl_metrics_quota_reserved(struct ctrl *c, const json_t *wl, const char *cq, int64_t now)
{
    double w = queued_wait_s(wl, now);
    const char *q[] = {jx_or_empty(cq)};
    const char *lq[] = {jx_or_empty(JX_STR(wl, "spec", "queueName")),
                        jx_or_empty(api_namespace(wl))};
    prom_vec_add(fam(c, F_QR_TOTAL), q, 1);
    prom_vec_observe(fam(c, F_QR_WAIT), q, w);
    prom_vec_add(fam(c, F_LQ_QR_TOTAL), lq, 1);
    prom_vec_observe(fam(c, F_LQ_QR_WAIT), lq, w);
}

void ctrl_metrics_admitted(struct ctrl *c, const json_t *wl, const char *cq, int64_t reserved_ms,
                           int64_t now)
{
    double w = queued_wait_s(wl, now), checks = secs_since(reserved_ms, now);
    const char *q[] = {jx_or_empty(cq)};
    const char *lq[] = {jx_or_empty(JX_STR(wl, "spec", "queueName")),
                        jx_or_empty(api_namespace(wl))};
    prom_vec_add(fam(c, F_ADM_TOTAL), q, 1);
    prom_vec_observe(fam(c, F_ADM_WAIT), q, w);
    prom_vec_observe(fam(c, F_CHECKS_WAIT), q, checks);
    prom_vec_add(fam(c, F_LQ_ADM_TOTAL), lq, 1);
    prom_vec_observe(fam(c, F_LQ_ADM_WAIT), lq, w);
    prom_vec_observe(fam(c, F_LQ_CHECKS_WAIT), lq, checks);
}

void ctrl_metrics_evicted(struct ctrl *c, const json_t *wl, const char *cq, const char *reason)
{
    const char *q[] = {jx_or_empty(cq), jx_or_empty(reason)};
    const char *lq[] = {jx_or_empty(JX_STR(wl, "spec", "queueName")),
                        jx_or_empty(api_namespace(wl)), jx_or_empty(reason)};
    prom_vec_add(fam(c, F_EVICTED), q, 1);
    prom_vec_add(fam(c, F_LQ_EVICTED), lq, 1);
}

void ctrl_metrics_preempted(struct ctrl *c, const char *preempting_cq, const char *reason)
{
    const char *v[] = {jx_or_empty(preempting_cq), jx_or_empty(reason)};
    prom_vec_add(fam(c, F_PREEMPTED), v, 1);
}

void ctrl_metrics_pod_started(struct ctrl *c)
{
    prom_vec_add(fam(c, F_PODS_STARTED), NULL, 1);
}

void ctrl_metrics_pod_finished(struct ctrl *c, const char *phase)
{
    const char *v[] = {jx_or_empty(phase)};
    prom_vec_add(fam(c, F_PODS_FINISHED), v, 1);
}

static void write_on_loop(struct ctrl *c, void *arg)
{
    struct sbuf *out = arg;
    struct ctrl_metrics *m = ctrl__metrics(c);
    for (int i = 0; i < F__COUNT; i++)
        prom_vec_write(m->v[i], out);
    kq_metrics_gauges(c, out);
    nodes_metrics_gauges(c, out);
}

void ctrl_metrics_write(struct ctrl *c, struct sbuf *out)
{
    ctrl_call(c, write_on_loop, out);
}
