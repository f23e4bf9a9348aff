/*
 * Eviction, requeue and the other ways a Workload leaves its quota
 * (kueue.md §2.6, §2.10-2.12, §4): preemption within a ClusterQueue,
 * waitForPodsReady timeouts with the requeuing backoff and its limit,
 * maximumExecutionTimeSeconds, HoldAndDrain, a Job's backoffLimit, a
 * WorkloadPriorityClass value change, and deletion cascades through
 * ownerReferences (gc). Virtual time throughout.
 */
#include "test_ctrl_jobs_fixture.h"

#define JOB1 "train-tpu-v6e-dws-1"

/* A small queue of its own: 4 cpu, preemption within the ClusterQueue. */
static const char *small_queue =
    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: rf\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: cluster-queue\n"
    "spec:\n  namespaceSelector: {}\n  preemption:\n    withinClusterQueue: LowerPriority\n"
    "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: rf\n"
    "      resources:\n      - name: cpu\n        nominalQuota: 4\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: lq\n"
    "  namespace: default\nspec:\n  clusterQueue: cluster-queue\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata:\n  name: low\n"
    "value: 10\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata:\n  name: high\n"
    "value: 100\n";

static void submit_small(struct fx *f, const char *name, const char *prio, int backoff_limit,
                         const char *extra_label)
{
    char *y = xasprintf("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  labels:\n"
                        "    kueue.x-k8s.io/queue-name: lq\n"
                        "    kueue.x-k8s.io/priority-class: %s\n%s"
                        "spec:\n  backoffLimit: %d\n  template:\n    spec:\n"
                        "      restartPolicy: Never\n      containers:\n      - name: c\n"
                        "        image: busybox\n        command: [\"sleep\", \"1\"]\n"
                        "        resources:\n          requests:\n            cpu: \"4\"\n",
                        name, prio, extra_label ? extra_label : "", backoff_limit);
    fx_apply_text(f, y, name);
    xfree(y);
    fx_run(f);
}

static struct fx *small(void (*tweak)(struct ctrl_config *))
{
    struct fx *f = fx_new(tweak);
    fx_apply_text(f, small_queue, "small-queue");
    fx_run(f);
    return f;
}

static json_t *job_pods(struct fx *f, const char *job_name)
{
    json_t *job = fx_get(f, KIND_JOB, "default", job_name);
    json_t *pods = fx_owned(f, KIND_POD, api_uid(job));
    json_decref(job);
    return pods;
}

static void higher_priority_preempts_and_victim_requeues(void **state)
{
    (void)state;
    struct fx *f = small(NULL);
    submit_small(f, "low", "low", 6, NULL);
    json_t *low = fx_workload_of(f, "Job", "low");
    assert_true(api_cond_is_true(low, "Admitted"));
    assert_int_equal(JX_INT(low, 0, "spec", "priority"), 10);
    json_decref(low);
    json_t *pods = job_pods(f, "low");
    fx_set_all_pods(f, pods, "Running", true);
    json_decref(pods);

    submit_small(f, "high", "high", 6, NULL);
    low = fx_workload_of(f, "Job", "low");
    json_t *high = fx_workload_of(f, "Job", "high");
    assert_string_equal(fx_reason(low, "Preempted"), "InClusterQueue");
    assert_string_equal(fx_reason(low, "Evicted"), "Preempted");
    assert_false(api_cond_is_true(low, "QuotaReserved"));
    assert_true(api_cond_is_true(low, "Requeued"));
    assert_string_equal(fx_reason(low, "Requeued"), "Preempted");
    json_t *lowjob = fx_get(f, KIND_JOB, "default", "low");
    assert_true(JX_BOOL(lowjob, false, "spec", "suspend"));
    pods = job_pods(f, "low");
    assert_int_equal(json_array_size(pods), 0);
    assert_true(api_cond_is_true(high, "Admitted"));
    char *key = xasprintf("default/%s", api_name(low));
    assert_int_equal(fx_traces(f, "Preempted", key), 1);
    assert_int_equal(fx_traces(f, "Evicted", key), 1);
    assert_int_equal(fx_traces(f, "Requeued", key), 1);
    xfree(key);
    json_decref(pods);
    json_decref(lowjob);
    json_decref(high);
    json_decref(low);
    fx_free(f);
}

static void short_pods_ready(struct ctrl_config *cfg)
{
    cfg->pods_ready_timeout_ms = 60000;
    cfg->requeue_backoff_limit = 1;
}

static void pods_ready_timeout_evicts_then_requeues(void **state)
{
    (void)state;
    struct fx *f = fx_new(short_pods_ready);
    fx_seed_queues(f);
    fx_submit_example(f, "job-tpu-v6e-dws.yaml", "1");
    int64_t t0 = f->clock.now_ms;
    fx_advance(f, 59000);
    json_t *wl = fx_workload_of(f, "Job", JOB1);
    assert_true(api_cond_is_true(wl, "Admitted"));
    assert_string_equal(fx_reason(wl, "PodsReady"), "WaitForStart");
    json_decref(wl);
    fx_advance(f, 1000);
    wl = fx_workload_of(f, "Job", JOB1);
    assert_string_equal(fx_reason(wl, "Evicted"), "PodsReadyTimeout");
    char *msg = xasprintf("Exceeded the PodsReady timeout default/%s", api_name(wl));
    assert_string_equal(fx_message(wl, "Evicted"), msg);
    xfree(msg);
    assert_false(api_cond_is_true(wl, "QuotaReserved"));
    assert_string_equal(fx_reason(wl, "Requeued"), "PodsReadyTimeout");
    assert_int_equal(JX_INT(wl, 0, "status", "requeueState", "count"), 1);
    int64_t at = 0;
    timefmt_parse(JX_STR(wl, "status", "requeueState", "requeueAt"), &at);
    assert_int_equal(at, t0 + 60000 + 60000);
    json_t *pods = job_pods(f, JOB1);
    assert_int_equal(json_array_size(pods), 0);
    json_decref(pods);
    json_decref(wl);

    /* after the backoff it is admitted again and the pods come back */
    fx_advance(f, 60000);
    wl = fx_workload_of(f, "Job", JOB1);
    assert_true(api_cond_is_true(wl, "Admitted"));
    assert_string_equal(fx_reason(wl, "Requeued"), "BackoffFinished");
    assert_string_equal(api_cond_status(wl, "Evicted"), "False");
    pods = job_pods(f, JOB1);
    assert_int_equal(json_array_size(pods), 4);
    json_decref(pods);
    json_decref(wl);

    /* the second timeout passes requeue_backoff_limit (1): deactivated */
    fx_advance(f, 60000);
    wl = fx_workload_of(f, "Job", JOB1);
    assert_false(JX_BOOL(wl, true, "spec", "active"));
    assert_string_equal(fx_reason(wl, "Evicted"), "DeactivatedDueToRequeuingLimitExceeded");
    json_decref(wl);
    fx_free(f);
}

static void maximum_execution_time_deactivates(void **state)
{
    (void)state;
    struct fx *f = small(NULL);
    submit_small(f, "capped", "low", 6, "    kueue.x-k8s.io/max-exec-time-seconds: \"120\"\n");
    json_t *wl = fx_workload_of(f, "Job", "capped");
    assert_int_equal(JX_INT(wl, 0, "spec", "maximumExecutionTimeSeconds"), 120);
    json_decref(wl);
    json_t *pods = job_pods(f, "capped");
    fx_set_all_pods(f, pods, "Running", true);
    json_decref(pods);
    fx_advance(f, 120000);
    wl = fx_workload_of(f, "Job", "capped");
    assert_false(JX_BOOL(wl, true, "spec", "active"));
    assert_string_equal(fx_reason(wl, "Evicted"), "DeactivatedDueToMaximumExecutionTimeExceeded");
    assert_true(fx_has_event(f, api_name(wl), "MaximumExecutionTimeExceeded"));
    assert_false(api_cond_is_true(wl, "QuotaReserved"));
    json_decref(wl);
    fx_free(f);
}

static void hold_and_drain_evicts_and_restart_requeues(void **state)
{
    (void)state;
    struct fx *f = small(NULL);
    submit_small(f, "a", "low", 6, NULL);
    json_t *cq = fx_get(f, KIND_CLUSTERQUEUE, NULL, "cluster-queue");
    json_t *cp = json_deep_copy(cq);
    JX_SET_NEW(cp, json_string("HoldAndDrain"), "spec", "stopPolicy");
    assert_int_equal(store_update(f->store, KIND_CLUSTERQUEUE, NULL, cp, STORE_UPDATE_MAIN, NULL), 0);
    fx_run(f);
    json_t *wl = fx_workload_of(f, "Job", "a");
    assert_string_equal(fx_reason(wl, "Evicted"), "ClusterQueueStopped");
    assert_string_equal(fx_reason(wl, "Requeued"), "ClusterQueueStopped");
    assert_false(api_cond_is_true(wl, "QuotaReserved"));
    json_decref(wl);
    json_decref(cq);
    cq = fx_get(f, KIND_CLUSTERQUEUE, NULL, "cluster-queue");
    json_decref(cp);
    cp = json_deep_copy(cq);
    JX_SET_NEW(cp, json_string("None"), "spec", "stopPolicy");
    assert_int_equal(store_update(f->store, KIND_CLUSTERQUEUE, NULL, cp, STORE_UPDATE_MAIN, NULL), 0);
    fx_run(f);
    wl = fx_workload_of(f, "Job", "a");
    assert_string_equal(fx_reason(wl, "Requeued"), "ClusterQueueRestarted");
    assert_true(api_cond_is_true(wl, "Admitted"));
    json_decref(wl);
    json_decref(cp);
    json_decref(cq);
    fx_free(f);
}

static void backoff_limit_fails_job_and_finishes_workload(void **state)
{
    (void)state;
    struct fx *f = small(NULL);
    submit_small(f, "flaky", "low", 1, NULL);
    for (int i = 0; i < 2; i++) {
        json_t *pods = job_pods(f, "flaky");
        size_t j;
        json_t *p;
        json_array_foreach(pods, j, p) {
            if (strcmp(jx_or_empty(JX_STR(p, "status", "phase")), "Failed"))
                fx_set_pod(f, api_name(p), "Failed", false);
        }
        fx_run(f);
        json_decref(pods);
    }
    json_t *job = fx_get(f, KIND_JOB, "default", "flaky");
    assert_true(api_cond_is_true(job, "Failed"));
    assert_true(api_cond_is_true(job, "FailureTarget"));
    assert_string_equal(fx_reason(job, "Failed"), "BackoffLimitExceeded");
    assert_string_equal(fx_message(job, "Failed"), "Job has reached the specified backoff limit");
    assert_int_equal(JX_INT(job, 0, "status", "failed"), 2);
    json_t *wl = fx_workload_of(f, "Job", "flaky");
    assert_string_equal(fx_reason(wl, "Finished"), "Failed");
    assert_string_equal(fx_message(wl, "Finished"), "Job has reached the specified backoff limit");
    json_t *keep;
    assert_string_equal(fx_cq_reserved(f, "rf", "cpu", &keep), "0");
    json_decref(keep);
    json_decref(wl);
    json_decref(job);
    fx_free(f);
}

static void priority_class_change_updates_workloads(void **state)
{
    (void)state;
    struct fx *f = small(NULL);
    submit_small(f, "a", "low", 6, NULL);
    json_t *wpc = fx_get(f, KIND_WORKLOADPRIORITYCLASS, NULL, "low");
    json_t *cp = json_deep_copy(wpc);
    json_object_set_new(cp, "value", json_integer(50));
    assert_int_equal(store_update(f->store, KIND_WORKLOADPRIORITYCLASS, NULL, cp,
                                  STORE_UPDATE_MAIN, NULL),
                     0);
    fx_run(f);
    json_t *wl = fx_workload_of(f, "Job", "a");
    assert_int_equal(JX_INT(wl, 0, "spec", "priority"), 50);
    assert_string_equal(JX_STR(wl, "spec", "priorityClassName"), "low");
    json_decref(wl);
    json_decref(cp);
    json_decref(wpc);
    fx_free(f);
}

static void deleting_jobs_cascades_to_what_they_own(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_seed_queues(f);
    fx_submit_example(f, "job-tpu-v6e-dws.yaml", "1");
    json_t *job = fx_get(f, KIND_JOB, "default", JOB1);
    json_t *wl = fx_workload_of(f, "Job", JOB1);
    assert_non_null(wl);
    assert_int_equal(store_delete(f->store, KIND_JOB, "default", JOB1, NULL, NULL), 0);
    fx_run(f);
    json_t *gone = fx_get(f, KIND_WORKLOAD, "default", api_name(wl));
    assert_null(gone);
    json_t *pods = fx_owned(f, KIND_POD, api_uid(job));
    assert_int_equal(json_array_size(pods), 0);
    json_decref(pods);

    /* a RayJob (on-demand is free again): its cluster pods, its submitter
     * Job and that Job's pods */
    fx_submit_example(f, "rayjob-tpu-v6e-dws.yaml", "1");
    json_t *rj = fx_get(f, KIND_RAYJOB, "default", "rayjob-tpu-v6e-dws-1");
    json_t *all = fx_owned(f, KIND_POD, api_uid(rj));
    fx_set_all_pods(f, all, "Running", true);
    json_t *sub = fx_get(f, KIND_JOB, "default", "rayjob-tpu-v6e-dws-1");
    assert_non_null(sub);
    json_t *spods = fx_owned(f, KIND_POD, api_uid(sub));
    assert_int_equal(json_array_size(spods), 1);
    assert_int_equal(store_delete(f->store, KIND_RAYJOB, "default", "rayjob-tpu-v6e-dws-1",
                                  NULL, NULL),
                     0);
    fx_run(f);
    json_t *left = fx_owned(f, KIND_POD, api_uid(rj));
    assert_int_equal(json_array_size(left), 0);
    json_decref(left);
    left = fx_owned(f, KIND_POD, api_uid(sub));
    assert_int_equal(json_array_size(left), 0);
    json_t *subgone = fx_get(f, KIND_JOB, "default", "rayjob-tpu-v6e-dws-1");
    assert_null(subgone);
    json_t *rwl = fx_workload_of(f, "RayJob", "rayjob-tpu-v6e-dws-1");
    assert_null(rwl);
    json_t *keep;
    assert_string_equal(fx_cq_reserved(f, "on-demand", "google.com/tpu", &keep), "0");
    json_decref(keep);
    json_decref(left);
    json_decref(spods);
    json_decref(sub);
    json_decref(all);
    json_decref(rj);
    json_decref(wl);
    json_decref(job);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(higher_priority_preempts_and_victim_requeues),
        cmocka_unit_test(pods_ready_timeout_evicts_then_requeues),
        cmocka_unit_test(maximum_execution_time_deactivates),
        cmocka_unit_test(hold_and_drain_evicts_and_restart_requeues),
        cmocka_unit_test(backoff_limit_fails_job_and_finishes_workload),
        cmocka_unit_test(priority_class_change_updates_workloads),
        cmocka_unit_test(deleting_jobs_cascades_to_what_they_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
