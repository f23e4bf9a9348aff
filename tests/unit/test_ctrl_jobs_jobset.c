/*
 * JobSets through the whole control plane (the seed's queues, no executor:
 * the test plays the node agent): the child Jobs' names, labels, owner and
 * env; a child Job is never queued by itself; the failure policy restarts
 * the whole set (status.restarts, restart-attempt, new Jobs) until
 * maxRestarts and then fails the JobSet and its Workload; an eviction
 * suspends the child Jobs (Suspended condition, replicatedJobsStatus) and a
 * new admission resumes them with the flavor's nodeSelector.
 */
#include "test_ctrl_jobs_fixture.h"

#define JS "js"

/* A JobSet of 2 replicated-job replicas of 1 pod each on default-cpu; the
 * Job template carries the queue-name label (it must not queue the Jobs). */
static const char *const jobset_yaml =
    "apiVersion: jobset.x-k8s.io/v1alpha2\n"
    "kind: JobSet\n"
    "metadata:\n"
    "  name: " JS "\n"
    "  labels: {kueue.x-k8s.io/queue-name: user-queue}\n"
    "spec:\n"
    "  failurePolicy: {maxRestarts: 1}\n"
    "  replicatedJobs:\n"
    "    - name: workers\n"
    "      replicas: 2\n"
    "      template:\n"
    "        metadata: {labels: {kueue.x-k8s.io/queue-name: user-queue, team: a}}\n"
    "        spec:\n"
    "          backoffLimit: 0\n"
    "          template:\n"
    "            spec:\n"
    "              restartPolicy: Never\n"
    "              containers: [{name: w, image: python, resources: {requests: {cpu: '1', "
    "memory: 1Gi}}}]\n";

static struct fx *with_jobset(void)
{
    struct fx *f = fx_new(NULL);
    fx_seed_queues(f);
    fx_apply_text(f, jobset_yaml, "jobset");
    fx_run(f);
    return f;
}

static json_t *child(struct fx *f, int index)
{
    char name[64];
    snprintf(name, sizeof(name), JS "-workers-%d", index);
    return fx_get(f, KIND_JOB, "default", name);
}

/* Fail the (one) pod of a child Job. */
static void fail_child(struct fx *f, int index)
{
    json_t *job = child(f, index);
    assert_non_null(job);
    json_t *pods = fx_owned(f, KIND_POD, api_uid(job));
    assert_int_equal(json_array_size(pods), 1);
    fx_set_all_pods(f, pods, "Failed", false);
    json_decref(pods);
    json_decref(job);
}

static void test_child_jobs_labels_owner_env_and_no_own_workload(void **state)
{
    (void)state;
    struct fx *f = with_jobset();
    json_t *js = fx_get(f, KIND_JOBSET, "default", JS);
    json_t *wl = fx_workload_of(f, "JobSet", JS);
    assert_non_null(wl);
    assert_true(api_cond_is_true(wl, "Admitted"));
    for (int i = 0; i < 2; i++) {
        json_t *job = child(f, i);
        assert_non_null(job);
        char idx[4];
        snprintf(idx, sizeof(idx), "%d", i);
        assert_string_equal(api_label(job, "jobset.sigs.k8s.io/jobset-name"), JS);
        assert_string_equal(api_label(job, "jobset.sigs.k8s.io/replicatedjob-name"), "workers");
        assert_string_equal(api_label(job, "jobset.sigs.k8s.io/job-index"), idx);
        assert_string_equal(api_label(job, "jobset.sigs.k8s.io/restart-attempt"), "0");
        assert_string_equal(api_label(job, "team"), "a");
        assert_string_equal(api_controller_uid(job), api_uid(js));
        assert_null(fx_workload_of(f, "Job", api_name(job)));
        assert_false(JX_BOOL(job, true, "spec", "suspend"));
        /* the flavor default-cpu's nodeSelector, injected on admission */
        assert_string_equal(JX_STR(job, "spec", "template", "spec", "nodeSelector",
                                   "cloud.google.com/gke-nodepool"),
                            "default-pool");
        json_t *pods = fx_owned(f, KIND_POD, api_uid(job));
        assert_int_equal(json_array_size(pods), 1);
        const json_t *pod = json_array_get(pods, 0);
        assert_string_equal(fx_env(pod, 0, "JOBSET_NAME"), JS);
        assert_string_equal(fx_env(pod, 0, "REPLICATED_JOB_NAME"), "workers");
        assert_string_equal(fx_env(pod, 0, "JOB_INDEX"), idx);
        assert_string_equal(JX_STR(pod, "spec", "subdomain"), JS);
        json_decref(pods);
        json_decref(job);
    }
    json_t *svc = fx_get(f, KIND_SERVICE, "default", JS);
    assert_non_null(svc);
    assert_string_equal(JX_STR(svc, "spec", "clusterIP"), "None");
    json_decref(svc);
    json_decref(wl);
    json_decref(js);
    fx_free(f);
}

static void test_failure_restarts_then_fails(void **state)
{
    (void)state;
    struct fx *f = with_jobset();
    json_t *first = child(f, 1);
    fail_child(f, 0);
    json_t *js = fx_get(f, KIND_JOBSET, "default", JS);
    assert_int_equal(JX_INT(js, -1, "status", "restarts"), 1);
    assert_false(api_cond_is_true(js, "Failed"));
    json_decref(js);
    /* every child Job was recreated for attempt 1 */
    for (int i = 0; i < 2; i++) {
        json_t *job = child(f, i);
        assert_non_null(job);
        assert_string_equal(api_label(job, "jobset.sigs.k8s.io/restart-attempt"), "1");
        json_decref(job);
    }
    json_t *again = child(f, 1);
    assert_string_not_equal(api_uid(again), api_uid(first));
    json_decref(again);
    json_decref(first);
    json_t *wl = fx_workload_of(f, "JobSet", JS);
    assert_false(api_cond_is_true(wl, "Finished"));
    assert_false(api_cond_is_true(wl, "Evicted"));
    json_decref(wl);
    /* the second failure is beyond maxRestarts 1 */
    fail_child(f, 1);
    js = fx_get(f, KIND_JOBSET, "default", JS);
    assert_true(api_cond_is_true(js, "Failed"));
    assert_string_equal(fx_reason(js, "Failed"), "ReachedMaxRestarts");
    assert_string_equal(JX_STR(js, "status", "terminalState"), "Failed");
    assert_int_equal(JX_INT(js, -1, "status", "restarts"), 1);
    const json_t *st = json_array_get(JX_GET(js, "status", "replicatedJobsStatus"), 0);
    assert_int_equal(JX_INT(st, -1, "failed"), 1);
    json_decref(js);
    wl = fx_workload_of(f, "JobSet", JS);
    assert_true(api_cond_is_true(wl, "Finished"));
    assert_string_equal(fx_reason(wl, "Finished"), "Failed");
    assert_string_equal(fx_message(wl, "Finished"),
                        "jobset failed due to reaching max number of restarts");
    json_decref(wl);
    fx_free(f);
}

static void set_active(struct fx *f, bool active)
{
    json_t *cur = fx_workload_of(f, "JobSet", JS);
    json_t *wl = json_deep_copy(cur);
    json_decref(cur);
    JX_SET_NEW(wl, json_boolean(active), "spec", "active");
    assert_int_equal(store_update(f->store, KIND_WORKLOAD, "default", wl, STORE_UPDATE_MAIN,
                                  NULL),
                     0);
    json_decref(wl);
    fx_run(f);
}

static void test_eviction_suspends_child_jobs_and_admission_resumes_them(void **state)
{
    (void)state;
    struct fx *f = with_jobset();
    set_active(f, false); /* Kueue evicts a deactivated Workload */
    json_t *js = fx_get(f, KIND_JOBSET, "default", JS);
    assert_true(JX_BOOL(js, false, "spec", "suspend"));
    assert_true(api_cond_is_true(js, "Suspended"));
    const json_t *st = json_array_get(JX_GET(js, "status", "replicatedJobsStatus"), 0);
    assert_int_equal(JX_INT(st, -1, "suspended"), 2);
    assert_int_equal(JX_INT(st, -1, "active"), 0);
    json_decref(js);
    json_t *job = child(f, 0);
    assert_true(JX_BOOL(job, false, "spec", "suspend"));
    json_t *pods = fx_owned(f, KIND_POD, api_uid(job));
    assert_int_equal(json_array_size(pods), 0);
    json_decref(pods);
    json_decref(job);
    json_t *wl = fx_workload_of(f, "JobSet", JS);
    assert_false(api_cond_is_true(wl, "Admitted"));
    json_decref(wl);
    set_active(f, true);
    js = fx_get(f, KIND_JOBSET, "default", JS);
    assert_false(JX_BOOL(js, true, "spec", "suspend"));
    assert_false(api_cond_is_true(js, "Suspended"));
    json_decref(js);
    job = child(f, 0);
    assert_false(JX_BOOL(job, true, "spec", "suspend"));
    assert_string_equal(JX_STR(job, "spec", "template", "spec", "nodeSelector",
                               "cloud.google.com/gke-nodepool"),
                        "default-pool");
    pods = fx_owned(f, KIND_POD, api_uid(job));
    assert_int_equal(json_array_size(pods), 1);
    json_decref(pods);
    json_decref(job);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_child_jobs_labels_owner_env_and_no_own_workload),
        cmocka_unit_test(test_failure_restarts_then_fails),
        cmocka_unit_test(test_eviction_suspends_child_jobs_and_admission_resumes_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
