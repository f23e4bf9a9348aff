/*
 * The seed's RayJobs (examples/rayjob-tpu-v6e-dws.yaml) through the whole
 * control plane: the Workload's pod sets exactly as Kueue derives them,
 * job 1 admitted with head and submitter on default-cpu and workers on
 * on-demand, job 2 on dws after its ProvisioningRequest, the cluster pods
 * KubeRay would create (with the TPU webhook's env), the submitter Job, and
 * the two endings: Ray missing on this machine (the RayJob fails with a
 * message that says so) and a successful run (as in `cueue sim`).
 */
#include "test_ctrl_jobs_fixture.h"

#include "util/sha1.h"

#define RJ1 "rayjob-tpu-v6e-dws-1"
#define RJ2 "rayjob-tpu-v6e-dws-2"

static struct fx *seed_with_rayjobs(int n)
{
    struct fx *f = fx_new(NULL);
    fx_seed_queues(f);
    fx_submit_example(f, "rayjob-tpu-v6e-dws.yaml", "1");
    if (n > 1)
        fx_submit_example(f, "rayjob-tpu-v6e-dws.yaml", "2");
    return f;
}

static const json_t *podset(const json_t *wl, const char *name)
{
    size_t i;
    json_t *ps;
    json_array_foreach(JX_GET(wl, "spec", "podSets"), i, ps) {
        if (!strcmp(jx_or_empty(JX_STR(ps, "name")), name))
            return ps;
    }
    return NULL;
}

static const json_t *container(const json_t *tmpl, const char *name)
{
    size_t i;
    json_t *c;
    json_array_foreach(JX_GET(tmpl, "spec", "containers"), i, c) {
        if (!strcmp(jx_or_empty(JX_STR(c, "name")), name))
            return c;
    }
    return NULL;
}

/* Cluster pods of the RayJob with ray.io/node-type == type. */
static json_t *ray_pods(struct fx *f, const json_t *rj, const char *type)
{
    json_t *all = fx_owned(f, KIND_POD, api_uid(rj));
    json_t *out = json_array();
    size_t i;
    json_t *p;
    json_array_foreach(all, i, p) {
        if (!strcmp(jx_or_empty(api_label(p, "ray.io/node-type")), type))
            json_array_append(out, p);
    }
    json_decref(all);
    return out;
}

static bool argv_has(const json_t *ctr, const char *arg)
{
    size_t i;
    json_t *a;
    json_array_foreach(JX_GET(ctr, "command"), i, a) {
        if (!strcmp(json_string_value(a), arg))
            return true;
    }
    return false;
}

static void workload_pod_sets_are_kueues(void **state)
{
    (void)state;
    struct fx *f = seed_with_rayjobs(1);
    json_t *rj = fx_get(f, KIND_RAYJOB, "default", RJ1);
    json_t *wl = fx_workload_of(f, "RayJob", RJ1);
    assert_non_null(wl);
    /* elastic: the generation the job had when the Workload was made */
    char *in = xasprintf("RayJob\nray.io\n%s\n%s\n1", RJ1, api_uid(rj));
    char hex[41];
    sha1_hex(in, strlen(in), hex);
    char *want = xasprintf("rayjob-%s-%.5s", RJ1, hex);
    assert_string_equal(api_name(wl), want);
    assert_string_equal(api_annotation(wl, "kueue.x-k8s.io/elastic-job"), "true");
    assert_string_equal(api_annotation(wl, "kueue.x-k8s.io/workload-slice-name"), want);
    xfree(want);
    xfree(in);

    assert_int_equal(json_array_size(JX_GET(wl, "spec", "podSets")), 3);
    const json_t *head = podset(wl, "head");
    const json_t *tpu = podset(wl, "tpu-group");
    const json_t *sub = podset(wl, "submitter");
    assert_int_equal(JX_INT(head, 0, "count"), 1);
    assert_int_equal(JX_INT(tpu, 0, "count"), 4);
    assert_int_equal(JX_INT(sub, 0, "count"), 1);
    const json_t *as = container(JX_GET(head, "template"), "autoscaler");
    assert_non_null(as);
    assert_string_equal(JX_STR(as, "resources", "requests", "cpu"), "500m");
    assert_string_equal(JX_STR(as, "resources", "requests", "memory"), "512Mi");
    const json_t *sc = container(JX_GET(sub, "template"), "ray-job-submitter");
    assert_non_null(sc);
    assert_string_equal(JX_STR(sc, "image"), "rayproject/ray:2.53.0-py311");
    assert_string_equal(JX_STR(sc, "resources", "requests", "memory"), "200Mi");
    assert_string_equal(JX_STR(sc, "resources", "limits", "cpu"), "1");

    assert_true(api_cond_is_true(wl, "Admitted"));
    assert_string_equal(fx_flavor(wl, "head", "cpu"), "default-cpu");
    assert_string_equal(fx_flavor(wl, "submitter", "cpu"), "default-cpu");
    assert_string_equal(fx_flavor(wl, "tpu-group", "google.com/tpu"), "on-demand");
    json_decref(wl);
    json_decref(rj);
    fx_free(f);
}

static void admitted_rayjob_runs_its_cluster_pods(void **state)
{
    (void)state;
    struct fx *f = seed_with_rayjobs(1);
    json_t *rj = fx_get(f, KIND_RAYJOB, "default", RJ1);
    assert_false(JX_BOOL(rj, true, "spec", "suspend"));
    assert_string_equal(JX_STR(rj, "status", "jobDeploymentStatus"), "Initializing");
    const char *cluster = JX_STR(rj, "status", "rayClusterName");
    assert_non_null(cluster);
    assert_int_equal(strncmp(cluster, RJ1 "-", strlen(RJ1) + 1), 0);

    json_t *heads = ray_pods(f, rj, "head");
    json_t *workers = ray_pods(f, rj, "worker");
    assert_int_equal(json_array_size(heads), 1);
    assert_int_equal(json_array_size(workers), 4);
    const json_t *h = json_array_get(heads, 0);
    assert_string_equal(JX_STR(h, "spec", "nodeSelector", "cloud.google.com/gke-nodepool"),
                        "default-pool");
    const json_t *rh = container(h, "ray-head");
    assert_true(argv_has(rh, "--head"));
    assert_true(argv_has(rh, "--num-cpus=2"));
    assert_true(argv_has(rh, "--memory=4294967296"));
    assert_true(argv_has(rh, "--no-monitor"));
    assert_string_equal(json_string_value(json_array_get(JX_GET(rh, "command"), 0)), "ray");
    assert_non_null(container(h, "autoscaler"));
    assert_string_equal(api_label(h, "kueue.x-k8s.io/podset"), "head");

    bool seen[4] = {false, false, false, false};
    size_t i;
    json_t *w;
    json_array_foreach(workers, i, w) {
        assert_string_equal(JX_STR(w, "spec", "nodeSelector", "cloud.google.com/gke-nodepool"),
                            "on-demand-pool");
        assert_string_equal(api_label(w, "kueue.x-k8s.io/podset"), "tpu-group");
        const char *id = fx_env(w, 0, "TPU_WORKER_ID");
        assert_non_null(id);
        int n = atoi(id);
        assert_true(n >= 0 && n < 4);
        // cppcheck-suppress negativeIndex ; assert_true above ends the test when n is out of range
        seen[n] = true;
        assert_string_equal(fx_env(w, 0, "TPU_NAME"), "tpu-group-0");
        assert_string_equal(fx_env(w, 0, "TPU_WORKER_HOSTNAMES"),
                            "localhost,localhost,localhost,localhost");
        char host[64];
        snprintf(host, sizeof(host), "tpu-group-0-%d", n);
        assert_string_equal(JX_STR(w, "spec", "hostname"), host);
        assert_true(argv_has(container(w, "ray-worker"), "--resources={\"TPU\":4}"));
    }
    assert_true(seen[0] && seen[1] && seen[2] && seen[3]);
    json_decref(heads);
    json_decref(workers);
    json_decref(rj);
    fx_free(f);
}

static void second_rayjob_waits_for_dws_provisioning(void **state)
{
    (void)state;
    struct fx *f = seed_with_rayjobs(2);
    json_t *wl = fx_workload_of(f, "RayJob", RJ2);
    assert_true(api_cond_is_true(wl, "QuotaReserved"));
    assert_false(api_cond_is_true(wl, "Admitted"));
    assert_string_equal(fx_flavor(wl, "tpu-group", "google.com/tpu"), "dws");
    assert_string_equal(fx_flavor(wl, "head", "cpu"), "default-cpu");
    char *prname = xasprintf("%s-dws-prov-1", api_name(wl));
    json_t *pr = fx_get(f, KIND_PROVISIONINGREQUEST, "default", prname);
    assert_non_null(pr);
    /* only the pod set that uses the managed resource google.com/tpu */
    assert_int_equal(json_array_size(JX_GET(pr, "spec", "podSets")), 1);
    json_t *ps = json_array_get(JX_GET(pr, "spec", "podSets"), 0);
    assert_int_equal(JX_INT(ps, 0, "count"), 4);
    char *pt = xasprintf("ppt-%s-tpu-group", prname);
    assert_string_equal(JX_STR(ps, "podTemplateRef", "name"), pt);
    json_t *rj = fx_get(f, KIND_RAYJOB, "default", RJ2);
    assert_true(JX_BOOL(rj, false, "spec", "suspend"));
    json_decref(rj);

    fx_set_pr_cond(f, prname, "Provisioned", "True", "Provisioned", "ok");
    json_decref(wl);
    wl = fx_workload_of(f, "RayJob", RJ2);
    assert_true(api_cond_is_true(wl, "Admitted"));
    rj = fx_get(f, KIND_RAYJOB, "default", RJ2);
    json_t *workers = ray_pods(f, rj, "worker");
    json_t *heads = ray_pods(f, rj, "head");
    assert_int_equal(json_array_size(workers), 4);
    const json_t *w = json_array_get(workers, 0);
    assert_string_equal(api_annotation(w, "autoscaling.x-k8s.io/consume-provisioning-request"),
                        prname);
    assert_string_equal(JX_STR(w, "spec", "nodeSelector", "cloud.google.com/gke-nodepool"),
                        "dws-pool");
    assert_null(api_annotation(json_array_get(heads, 0),
                               "autoscaling.x-k8s.io/consume-provisioning-request"));
    json_decref(heads);
    json_decref(workers);
    json_decref(rj);
    json_decref(pr);
    xfree(pt);
    xfree(prname);
    json_decref(wl);
    fx_free(f);
}

static void missing_ray_fails_the_rayjob(void **state)
{
    (void)state;
    struct fx *f = seed_with_rayjobs(1);
    json_t *rj = fx_get(f, KIND_RAYJOB, "default", RJ1);
    json_t *heads = ray_pods(f, rj, "head");
    fx_fail_pod_start(f, api_name(json_array_get(heads, 0)), "ray");
    fx_run(f);
    json_decref(rj);
    rj = fx_get(f, KIND_RAYJOB, "default", RJ1);
    assert_string_equal(JX_STR(rj, "status", "jobDeploymentStatus"), "Failed");
    const char *msg = JX_STR(rj, "status", "message");
    assert_non_null(msg);
    assert_non_null(strstr(msg, "\"ray\""));
    assert_non_null(strstr(msg, "Ray is not installed"));
    json_t *wl = fx_workload_of(f, "RayJob", RJ1);
    assert_true(api_cond_is_true(wl, "Finished"));
    assert_string_equal(fx_reason(wl, "Finished"), "Failed");
    assert_non_null(strstr(fx_message(wl, "Finished"), "ray"));
    /* shutdownAfterJobFinishes: the cluster is gone; quota is back */
    json_t *left = fx_owned(f, KIND_POD, api_uid(rj));
    assert_int_equal(json_array_size(left), 0);
    json_t *keep;
    assert_string_equal(fx_cq_reserved(f, "on-demand", "google.com/tpu", &keep), "0");
    json_decref(keep);
    json_decref(left);
    json_decref(wl);
    json_decref(heads);
    json_decref(rj);
    fx_free(f);
}

static void successful_run_completes_rayjob_and_workload(void **state)
{
    (void)state;
    struct fx *f = seed_with_rayjobs(1);
    json_t *rj = fx_get(f, KIND_RAYJOB, "default", RJ1);
    json_t *all = fx_owned(f, KIND_POD, api_uid(rj));
    fx_set_all_pods(f, all, "Running", true);
    json_decref(rj);
    rj = fx_get(f, KIND_RAYJOB, "default", RJ1);
    assert_string_equal(JX_STR(rj, "status", "jobDeploymentStatus"), "Running");
    assert_string_equal(JX_STR(rj, "status", "rayClusterStatus", "state"), "ready");
    json_t *wl = fx_workload_of(f, "RayJob", RJ1);
    assert_true(api_cond_is_true(wl, "PodsReady"));
    json_decref(wl);

    json_t *sub = fx_get(f, KIND_JOB, "default", RJ1);
    assert_non_null(sub);
    assert_string_equal(api_controller_uid(sub), api_uid(rj));
    assert_null(api_label(sub, "kueue.x-k8s.io/queue-name"));
    const json_t *sc = json_array_get(JX_GET(sub, "spec", "template", "spec", "containers"), 0);
    assert_true(argv_has(sc, "submit"));
    assert_true(argv_has(sc, "python /app/train.py"));
    assert_true(argv_has(sc, "--runtime-env-json"));
    assert_string_equal(JX_STR(sub, "spec", "template", "spec", "nodeSelector",
                               "cloud.google.com/gke-nodepool"),
                        "default-pool");
    json_t *spods = fx_owned(f, KIND_POD, api_uid(sub));
    assert_int_equal(json_array_size(spods), 1);
    fx_set_all_pods(f, spods, "Succeeded", false);

    json_decref(rj);
    rj = fx_get(f, KIND_RAYJOB, "default", RJ1);
    assert_string_equal(JX_STR(rj, "status", "jobDeploymentStatus"), "Complete");
    assert_string_equal(JX_STR(rj, "status", "jobStatus"), "SUCCEEDED");
    wl = fx_workload_of(f, "RayJob", RJ1);
    assert_string_equal(fx_reason(wl, "Finished"), "Succeeded");
    json_t *left = ray_pods(f, rj, "worker");
    assert_int_equal(json_array_size(left), 0);
    json_t *still = fx_get(f, KIND_JOB, "default", RJ1);
    assert_non_null(still); /* the submitter stays for its logs */
    json_decref(still);
    json_decref(left);
    json_decref(wl);
    json_decref(spods);
    json_decref(sub);
    json_decref(all);
    json_decref(rj);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(workload_pod_sets_are_kueues),
        cmocka_unit_test(admitted_rayjob_runs_its_cluster_pods),
        cmocka_unit_test(second_rayjob_waits_for_dws_provisioning),
        cmocka_unit_test(missing_ray_fails_the_rayjob),
        cmocka_unit_test(successful_run_completes_rayjob_and_workload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
