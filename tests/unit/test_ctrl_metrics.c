/*
 * The control plane's Prometheus metrics (ctrl/metrics.h) after a
 * preemption in virtual time: Kueue's counters count the admissions, the
 * quota reservations, the eviction (reason Preempted, per ClusterQueue and
 * per LocalQueue) and the preemption (labelled with the preemptor's
 * ClusterQueue and Kueue's reason); the wait-time histograms see the
 * virtual clock; the gauges equal the ClusterQueue's stored status and
 * spec.
 */
#include "test_ctrl_jobs_fixture.h"

#include "ctrl/metrics.h"

static const char *small_queue =
    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: rf\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: cq\n"
    "spec:\n  cohort: team\n  namespaceSelector: {}\n  preemption:\n    withinClusterQueue: LowerPriority\n"
    "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: rf\n"
    "      resources:\n      - name: cpu\n        nominalQuota: 4\n        lendingLimit: 2500m\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: lq\n"
    "  namespace: default\nspec:\n  clusterQueue: cq\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata:\n  name: low\n"
    "value: 10\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata:\n  name: high\n"
    "value: 100\n";

static void submit(struct fx *f, const char *name, const char *prio)
{
    char *y = xasprintf("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  labels:\n"
                        "    kueue.x-k8s.io/queue-name: lq\n"
                        "    kueue.x-k8s.io/priority-class: %s\n"
                        "spec:\n  template:\n    spec:\n"
                        "      restartPolicy: Never\n      containers:\n      - name: c\n"
                        "        image: busybox\n        command: [\"sleep\", \"1\"]\n"
                        "        resources:\n          requests:\n            cpu: \"4\"\n",
                        name, prio);
    fx_apply_text(f, y, name);
    xfree(y);
}

/* The value of the sample line "<series> <value>" in text, or -1. */
static double sample(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = text; (p = strstr(p, series)); p += n) {
        if ((p == text || p[-1] == '\n') && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    }
    return -1;
}

static char *scrape(struct fx *f)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    ctrl_metrics_write(f->ctrl, &sb);
    return sbuf_take(&sb);
}

static void preemption_counts_and_gauges_match_status(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_apply_text(f, small_queue, "queue");
    fx_run(f);
    submit(f, "low", "low");
    fx_run(f);
    fx_advance(f, 5000);
    submit(f, "high", "high");
    fx_run(f);
    char *m = scrape(f);

    json_t *low = fx_workload_of(f, "Job", "low");
    assert_string_equal(fx_reason(low, "Evicted"), "Preempted");
    json_decref(low);
    assert_true(sample(m, "kueue_admitted_workloads_total{cluster_queue=\"cq\"}") == 2);
    assert_true(sample(m, "kueue_quota_reserved_workloads_total{cluster_queue=\"cq\"}") == 2);
    assert_true(sample(m, "kueue_local_queue_admitted_workloads_total{name=\"lq\",namespace=\"default\"}") == 2);
    assert_true(sample(m, "kueue_evicted_workloads_total{cluster_queue=\"cq\",reason=\"Preempted\"}") == 1);
    assert_true(sample(m, "kueue_local_queue_evicted_workloads_total{name=\"lq\",namespace=\"default\",reason=\"Preempted\"}") == 1);
    assert_true(sample(m, "kueue_preempted_workloads_total{preempting_cluster_queue=\"cq\",reason=\"InClusterQueue\"}") == 1);
    assert_true(sample(m, "kueue_admission_attempts_total{result=\"success\"}") >= 2);
    assert_true(sample(m, "kueue_admission_attempt_duration_seconds_count{result=\"success\"}") ==
                sample(m, "kueue_admission_attempts_total{result=\"success\"}"));
    /* waits: low admitted at once (bucket le=1), high after its 0 s too;
     * no admission checks: both 0 s in the checks histogram */
    assert_true(sample(m, "kueue_admission_wait_time_seconds_count{cluster_queue=\"cq\"}") == 2);
    assert_true(sample(m, "kueue_admission_checks_wait_time_seconds_bucket{cluster_queue=\"cq\",le=\"1\"}") == 2);

    /* gauges: the stored ClusterQueue status and spec */
    json_t *cq = fx_get(f, KIND_CLUSTERQUEUE, NULL, "cq");
    double active = sample(m, "kueue_pending_workloads{cluster_queue=\"cq\",status=\"active\"}");
    double inadm = sample(m, "kueue_pending_workloads{cluster_queue=\"cq\",status=\"inadmissible\"}");
    assert_true(active >= 0 && inadm >= 0);
    assert_true(active + inadm == (double)JX_INT(cq, -1, "status", "pendingWorkloads"));
    assert_true(active + inadm == 1); /* low, requeued behind high */
    assert_true(sample(m, "kueue_reserving_active_workloads{cluster_queue=\"cq\"}") ==
                (double)JX_INT(cq, -1, "status", "reservingWorkloads"));
    assert_true(sample(m, "kueue_cluster_queue_status{cluster_queue=\"cq\",status=\"active\"}") == 1);
    assert_true(sample(m, "kueue_cluster_queue_status{cluster_queue=\"cq\",status=\"pending\"}") == 0);
    const char *rf = "{cohort=\"team\",cluster_queue=\"cq\",flavor=\"rf\",resource=\"cpu\"}";
    char *k = xasprintf("kueue_cluster_queue_nominal_quota%s", rf);
    assert_true(sample(m, k) == 4);
    xfree(k);
    k = xasprintf("kueue_cluster_queue_lending_limit%s", rf);
    assert_true(sample(m, k) == 2.5); /* 2500m cpu: cores, as Kueue */
    xfree(k);
    k = xasprintf("\nkueue_cluster_queue_borrowing_limit%s +Inf\n", rf); /* unset */
    assert_non_null(strstr(m, k));
    xfree(k);
    k = xasprintf("kueue_cluster_queue_resource_reservation%s", rf);
    assert_true(sample(m, k) == 4); /* high holds the 4 cpu */
    xfree(k);
    assert_true(sample(m, "kueue_local_queue_reserving_active_workloads{name=\"lq\",namespace=\"default\"}") == 1);
    json_decref(cq);
    free(m);
    fx_free(f);
}

static void waits_follow_the_clock(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_apply_text(f, small_queue, "queue");
    fx_run(f);
    /* high first: it holds the quota; low waits until high's Workload is
     * deleted 100 s later, then is admitted: wait >= 100 s (bucket le=160) */
    submit(f, "high", "high");
    fx_run(f);
    submit(f, "low", "low");
    fx_run(f); /* its Workload is created now */
    fx_advance(f, 100000);
    assert_int_equal(store_delete(f->store, KIND_JOB, "default", "high", NULL, NULL), 0);
    fx_advance(f, 1000);
    char *m = scrape(f);
    assert_true(sample(m, "kueue_admitted_workloads_total{cluster_queue=\"cq\"}") == 2);
    assert_true(sample(m, "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\",le=\"80\"}") == 1);
    assert_true(sample(m, "kueue_admission_wait_time_seconds_bucket{cluster_queue=\"cq\",le=\"160\"}") == 2);
    assert_true(sample(m, "kueue_admission_wait_time_seconds_sum{cluster_queue=\"cq\"}") >= 100);
    assert_true(sample(m, "kueue_quota_reserved_wait_time_seconds_bucket{cluster_queue=\"cq\",le=\"160\"}") == 2);
    free(m);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(preemption_counts_and_gauges_match_status),
        cmocka_unit_test(waits_follow_the_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
