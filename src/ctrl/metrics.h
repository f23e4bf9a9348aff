/*
 * ctrl metrics: the control plane's Prometheus metrics (docs/metrics.md):
 * Kueue's own families under Kueue's names and labels (kueue_*), and
 * cueue's for node pools, ProvisioningRequests and the executor (cueue_*).
 *
 * Counters and histograms are counted where the events happen, by the
 * hooks below, which reconcilers call on the loop thread. Gauges are not
 * kept: ctrl_metrics_write computes them from the admission engine (the
 * figures ClusterQueue status is written from) and the store at scrape
 * time, so they are the API's numbers. Everything runs on the loop thread
 * (the server scrapes through ctrl_call), so no lock is needed.
 *
 * Counters start at 0 when the process starts (as Kueue's do) and count
 * what this process decided; a status write that loses a conflict with a
 * concurrent API write is decided again and may then count twice.
 */
#ifndef CUEUE_CTRL_METRICS_H
#define CUEUE_CTRL_METRICS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

struct ctrl;
struct ctrl_metrics;
struct sbuf;

/* Append every control-plane family, in the Prometheus text format
 * (util/prom.h), to out. Runs fn on the loop thread (ctrl_call), so an
 * HTTP thread may call it; in single-threaded use it runs at once. */
void ctrl_metrics_write(struct ctrl *c, struct sbuf *out);

/* ---- for ctrl.c ---- */
struct ctrl_metrics *ctrl__metrics_new(void);
void ctrl__metrics_free(struct ctrl_metrics *m);
/* c's metrics (owned by c). */
struct ctrl_metrics *ctrl__metrics(struct ctrl *c);

/* ---- hooks for reconcilers (loop thread) ---- */

/* After eng_schedule (started at clk_mono_s() == started_s, util/clock.h)
 * returned r: one admission attempt when it had heads (r->head_cycles),
 * 'success' when it reserved quota for a Workload. */
struct eng_result;
void ctrl_metrics_schedule_done(struct ctrl *c, const struct eng_result *r, double started_s);
/* One admission attempt (Kueue: one scheduling cycle that had heads; here
 * one eng_schedule call that had heads): success when it reserved quota
 * for at least one Workload; seconds: its wall time. */
void ctrl_metrics_admission_attempt(struct ctrl *c, bool success, double seconds);
/* wl got quota reserved in cq at now: counts it, and its wait since it was
 * created or last requeued (the Requeued condition's time), per
 * ClusterQueue and per LocalQueue (wl's spec.queueName). */
void ctrl_metrics_quota_reserved(struct ctrl *c, const json_t *wl, const char *cq, int64_t now);
/* wl became Admitted in cq at now: counts it, its wait since created or
 * requeued, and its admission checks' wait (now - reserved_ms, the
 * QuotaReserved time; 0 when reserved_ms <= 0 or later). */
void ctrl_metrics_admitted(struct ctrl *c, const json_t *wl, const char *cq, int64_t reserved_ms,
                           int64_t now);
/* wl, holding quota in cq, was evicted with the Evicted condition's
 * reason. */
void ctrl_metrics_evicted(struct ctrl *c, const json_t *wl, const char *cq, const char *reason);
/* A Workload was preempted for a workload of preempting_cq, with Kueue's
 * preemption reason (InClusterQueue, InCohortReclamation, ...). */
void ctrl_metrics_preempted(struct ctrl *c, const char *preempting_cq, const char *reason);
/* The executor started a pod's processes. */
void ctrl_metrics_pod_started(struct ctrl *c);
/* A pod ended (executor report, or it could not start): phase "Succeeded"
 * or "Failed". */
void ctrl_metrics_pod_finished(struct ctrl *c, const char *phase);

/* ---- gauges, computed at scrape time (loop thread) ---- */

/* Kueue's ClusterQueue and LocalQueue gauges (kueue/metrics.c). */
void kq_metrics_gauges(struct ctrl *c, struct sbuf *out);
/* cueue's node pool, ProvisioningRequest and pod gauges (nodes/metrics.c). */
void nodes_metrics_gauges(struct ctrl *c, struct sbuf *out);

#endif
