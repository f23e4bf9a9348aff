/*
 * The seed flow with batch/v1 Jobs of the seed's shape (examples/
 * job-tpu-v6e-dws.yaml: Indexed, 4 pods of 8 cpu / 4 TPU / 16Gi, the
 * tutorial's tolerations and TPU nodeSelector, queue user-queue) through
 * the whole control plane: job 1 takes the on-demand flavor and runs at
 * once; job 2 falls back to dws, waits for its ProvisioningRequest, runs
 * with the consume annotations; finished jobs finish their Workloads and
 * give the quota back.
 */
#include "test_ctrl_jobs_fixture.h"

#include "util/sha1.h"

#define JOB1 "train-tpu-v6e-dws-1"
#define JOB2 "train-tpu-v6e-dws-2"

static struct fx *seed_with_jobs(int n)
{
    struct fx *f = fx_new(NULL);
    fx_seed_queues(f);
    fx_submit_example(f, "job-tpu-v6e-dws.yaml", "1");
    if (n > 1)
        fx_submit_example(f, "job-tpu-v6e-dws.yaml", "2");
    return f;
}

static void job1_gets_on_demand_and_runs_with_env(void **state)
{
    (void)state;
    struct fx *f = seed_with_jobs(1);
    json_t *job = fx_get(f, KIND_JOB, "default", JOB1);
    json_t *wl = fx_workload_of(f, "Job", JOB1);
    assert_non_null(job);
    assert_non_null(wl);

    /* Kueue's name: job-<name>-<sha1(kind\ngroup\nname\nuid)[:5]> */
    char *in = xasprintf("Job\nbatch\n%s\n%s", JOB1, api_uid(job));
    char hex[41];
    sha1_hex(in, strlen(in), hex);
    char *want = xasprintf("job-%s-%.5s", JOB1, hex);
    assert_string_equal(api_name(wl), want);
    xfree(want);
    xfree(in);
    assert_string_equal(api_label(wl, "kueue.x-k8s.io/job-uid"), api_uid(job));
    assert_string_equal(JX_STR(wl, "spec", "queueName"), "user-queue");
    assert_int_equal(JX_INT(json_array_get(JX_GET(wl, "spec", "podSets"), 0), 0, "count"), 4);

    assert_true(api_cond_is_true(wl, "QuotaReserved"));
    assert_true(api_cond_is_true(wl, "Admitted"));
    assert_null(JX_GET(wl, "status", "admissionChecks"));
    assert_string_equal(fx_flavor(wl, "main", "google.com/tpu"), "on-demand");
    assert_false(JX_BOOL(job, true, "spec", "suspend"));
    assert_string_equal(JX_STR(job, "spec", "template", "spec", "nodeSelector",
                               "cloud.google.com/gke-nodepool"),
                        "on-demand-pool");
    assert_true(fx_has_event(f, JOB1, "Started"));

    json_t *pods = fx_owned(f, KIND_POD, api_uid(job));
    assert_int_equal(json_array_size(pods), 4);
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p) {
        const char *idx = api_label(p, "batch.kubernetes.io/job-completion-index");
        assert_non_null(idx);
        char host[128];
        snprintf(host, sizeof(host), "%s-%s", JOB1, idx);
        assert_string_equal(JX_STR(p, "spec", "hostname"), host);
        assert_string_equal(api_label(p, "batch.kubernetes.io/job-name"), JOB1);
        assert_string_equal(api_label(p, "kueue.x-k8s.io/podset"), "main");
        assert_string_equal(JX_STR(p, "spec", "nodeSelector", "cloud.google.com/gke-nodepool"),
                            "on-demand-pool");
        assert_string_equal(JX_STR(p, "spec", "nodeSelector", "cloud.google.com/gke-tpu-topology"),
                            "4x4");
        assert_string_equal(fx_env(p, 0, "JOB_COMPLETION_INDEX"), idx);
        assert_string_equal(fx_env(p, 0, "TPU_WORKER_ID"), idx);
        assert_string_equal(fx_env(p, 0, "RANK"), idx);
        assert_string_equal(fx_env(p, 0, "JAX_PROCESS_ID"), idx);
        assert_string_equal(fx_env(p, 0, "TPU_WORKER_HOSTNAMES"),
                            "localhost,localhost,localhost,localhost");
        assert_string_equal(fx_env(p, 0, "MASTER_ADDR"), "127.0.0.1");
        assert_string_equal(fx_env(p, 0, "WORLD_SIZE"), "4");
        assert_string_equal(fx_env(p, 0, "JAX_NUM_PROCESSES"), "4");
        assert_string_equal(fx_env(p, 0, "LOCAL_RANK"), "0");
        char coord[64];
        snprintf(coord, sizeof(coord), "127.0.0.1:%s", fx_env(p, 0, "MASTER_PORT"));
        assert_string_equal(fx_env(p, 0, "JAX_COORDINATOR_ADDRESS"), coord);
        assert_string_equal(JX_STR(json_array_get(JX_GET(p, "metadata", "ownerReferences"), 0),
                                   "uid"),
                            api_uid(job));
    }
    char *key = xasprintf("default/%s", api_name(wl));
    assert_int_equal(fx_traces(f, "QuotaReserved", key), 1);
    assert_int_equal(fx_traces(f, "Admitted", key), 1);
    xfree(key);
    json_decref(pods);
    json_decref(wl);
    json_decref(job);
    fx_free(f);
}

static void job2_falls_back_to_dws_and_waits_for_provisioning(void **state)
{
    (void)state;
    struct fx *f = seed_with_jobs(2);
    json_t *job2 = fx_get(f, KIND_JOB, "default", JOB2);
    json_t *wl2 = fx_workload_of(f, "Job", JOB2);
    assert_non_null(wl2);
    assert_true(api_cond_is_true(wl2, "QuotaReserved"));
    assert_false(api_cond_is_true(wl2, "Admitted"));
    assert_string_equal(fx_reason(wl2, "Admitted"), "UnsatisfiedAdmissionChecks");
    assert_string_equal(fx_flavor(wl2, "main", "google.com/tpu"), "dws");
    json_t *ac = fx_check(wl2, "dws-prov");
    assert_non_null(ac);
    assert_string_equal(JX_STR(ac, "state"), "Pending");
    assert_true(JX_BOOL(job2, false, "spec", "suspend"));
    json_t *pods = fx_owned(f, KIND_POD, api_uid(job2));
    assert_int_equal(json_array_size(pods), 0);
    json_decref(pods);

    char *prname = xasprintf("%s-dws-prov-1", api_name(wl2));
    json_t *pr = fx_get(f, KIND_PROVISIONINGREQUEST, "default", prname);
    assert_non_null(pr);
    assert_string_equal(JX_STR(pr, "spec", "provisioningClassName"), "queued-provisioning.gke.io");
    assert_int_equal(json_array_size(JX_GET(pr, "spec", "podSets")), 1);
    json_t *ps = json_array_get(JX_GET(pr, "spec", "podSets"), 0);
    assert_int_equal(JX_INT(ps, 0, "count"), 4);
    char *ptname = xasprintf("ppt-%s-main", prname);
    assert_string_equal(JX_STR(ps, "podTemplateRef", "name"), ptname);
    assert_string_equal(api_label(pr, "kueue.x-k8s.io/managed"), "true");
    assert_string_equal(api_controller_uid(pr), api_uid(wl2));
    json_t *pt = fx_get(f, KIND_PODTEMPLATE, "default", ptname);
    assert_non_null(pt);
    assert_string_equal(JX_STR(pt, "template", "spec", "nodeSelector",
                               "cloud.google.com/gke-nodepool"),
                        "dws-pool");
    assert_string_equal(api_label(pt, "kueue.x-k8s.io/managed"), "true");
    assert_string_equal(api_controller_uid(pt), api_uid(pr));
    assert_true(fx_has_event(f, api_name(wl2), "ProvisioningRequestCreated"));
    assert_int_equal(fx_traces(f, "ProvisioningRequestCreated", NULL), 1);

    /* the autoscaler's part: the request is provisioned */
    fx_set_pr_cond(f, prname, "Provisioned", "True", "Provisioned",
                   "Provisioning Request was successfully provisioned.");
    json_decref(wl2);
    wl2 = fx_workload_of(f, "Job", JOB2);
    ac = fx_check(wl2, "dws-prov");
    assert_string_equal(JX_STR(ac, "state"), "Ready");
    assert_true(api_cond_is_true(wl2, "Admitted"));
    assert_true(fx_has_event(f, api_name(wl2), "AdmissionCheckUpdated"));
    json_decref(job2);
    job2 = fx_get(f, KIND_JOB, "default", JOB2);
    assert_false(JX_BOOL(job2, true, "spec", "suspend"));
    pods = fx_owned(f, KIND_POD, api_uid(job2));
    assert_int_equal(json_array_size(pods), 4);
    json_t *p = json_array_get(pods, 0);
    assert_string_equal(api_annotation(p, "autoscaling.x-k8s.io/consume-provisioning-request"),
                        prname);
    assert_string_equal(api_annotation(p, "autoscaling.x-k8s.io/provisioning-class-name"),
                        "queued-provisioning.gke.io");
    assert_string_equal(JX_STR(p, "spec", "nodeSelector", "cloud.google.com/gke-nodepool"),
                        "dws-pool");
    json_decref(pods);
    json_decref(pt);
    json_decref(pr);
    xfree(ptname);
    xfree(prname);
    json_decref(wl2);
    json_decref(job2);
    fx_free(f);
}

static void finished_jobs_finish_workloads_and_release_quota(void **state)
{
    (void)state;
    struct fx *f = seed_with_jobs(2);
    json_t *wl2 = fx_workload_of(f, "Job", JOB2);
    char *prname = xasprintf("%s-dws-prov-1", api_name(wl2));
    fx_set_pr_cond(f, prname, "Provisioned", "True", "Provisioned", "ok");

    json_t *keep;
    assert_string_equal(fx_cq_reserved(f, "on-demand", "google.com/tpu", &keep), "16");
    json_decref(keep);

    const char *jobs[] = {JOB1, JOB2};
    for (int j = 0; j < 2; j++) {
        json_t *job = fx_get(f, KIND_JOB, "default", jobs[j]);
        json_t *pods = fx_owned(f, KIND_POD, api_uid(job));
        fx_set_all_pods(f, pods, "Running", true);
        json_t *wl = fx_workload_of(f, "Job", jobs[j]);
        assert_true(api_cond_is_true(wl, "PodsReady"));
        json_decref(wl);
        fx_set_all_pods(f, pods, "Succeeded", false);
        json_decref(job);
        job = fx_get(f, KIND_JOB, "default", jobs[j]);
        assert_true(api_cond_is_true(job, "Complete"));
        assert_true(api_cond_is_true(job, "SuccessCriteriaMet"));
        assert_string_equal(fx_reason(job, "Complete"), "CompletionsReached");
        assert_int_equal(JX_INT(job, 0, "status", "succeeded"), 4);
        assert_string_equal(JX_STR(job, "status", "completedIndexes"), "0-3");
        assert_non_null(JX_STR(job, "status", "completionTime"));
        wl = fx_workload_of(f, "Job", jobs[j]);
        assert_true(api_cond_is_true(wl, "Finished"));
        assert_string_equal(fx_reason(wl, "Finished"), "Succeeded");
        assert_string_equal(fx_message(wl, "Finished"), "Reached expected number of succeeded pods");
        assert_true(fx_has_event(f, jobs[j], "FinishedWorkload"));
        json_decref(wl);
        json_decref(pods);
        json_decref(job);
    }
    const char *flv[] = {"on-demand", "dws"};
    for (int i = 0; i < 2; i++) {
        const char *q = fx_cq_reserved(f, flv[i], "google.com/tpu", &keep);
        assert_non_null(q);
        assert_string_equal(q, "0");
        json_decref(keep);
    }
    /* the finished workload's provisioning request is cleaned up */
    json_t *pr = fx_get(f, KIND_PROVISIONINGREQUEST, "default", prname);
    assert_null(pr);
    assert_true(fx_traces(f, "Finished", NULL) == 2);
    xfree(prname);
    json_decref(wl2);
    fx_free(f);
}

/* An unmanaged Job (no queue label) just runs. */
static void unmanaged_job_runs_without_workload(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_seed_queues(f);
    fx_apply_text(f,
                  "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: plain\n"
                  "spec:\n  parallelism: 2\n  completions: 3\n  template:\n    spec:\n"
                  "      restartPolicy: Never\n      containers:\n      - name: c\n"
                  "        image: busybox\n        command: [\"true\"]\n",
                  "plain");
    fx_run(f);
    json_t *job = fx_get(f, KIND_JOB, "default", "plain");
    assert_null(fx_workload_of(f, "Job", "plain"));
    json_t *pods = fx_owned(f, KIND_POD, api_uid(job));
    assert_int_equal(json_array_size(pods), 2);
    /* one pod succeeds: a third is created (completions 3, parallelism 2) */
    fx_set_pod(f, api_name(json_array_get(pods, 0)), "Succeeded", false);
    fx_run(f);
    json_decref(pods);
    pods = fx_owned(f, KIND_POD, api_uid(job));
    assert_int_equal(json_array_size(pods), 3);
    fx_set_all_pods(f, pods, "Succeeded", false);
    json_decref(job);
    job = fx_get(f, KIND_JOB, "default", "plain");
    assert_true(api_cond_is_true(job, "Complete"));
    assert_int_equal(JX_INT(job, 0, "status", "succeeded"), 3);
    json_decref(pods);
    json_decref(job);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(job1_gets_on_demand_and_runs_with_env),
        cmocka_unit_test(job2_falls_back_to_dws_and_waits_for_provisioning),
        cmocka_unit_test(finished_jobs_finish_workloads_and_release_quota),
        cmocka_unit_test(unmanaged_job_runs_without_workload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
