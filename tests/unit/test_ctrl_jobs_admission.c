/*
 * Admission paths around the job integrations: the LocalQueue "default"
 * routing Kueue's webhook does, an elastic Job's scale-up through a new
 * Workload slice (kueue.md §5), and waitForPodsReady.blockAdmission
 * (§2.11).
 */
#include "test_ctrl_jobs_fixture.h"

static const char *queues =
    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: rf\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: cluster-queue\n"
    "spec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n"
    "    flavors:\n    - name: rf\n      resources:\n      - name: cpu\n        nominalQuota: 8\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: default\n"
    "  namespace: default\nspec:\n  clusterQueue: cluster-queue\n";

static void job(struct fx *f, const char *name, const char *labels, const char *annotations,
                int parallelism, int completions, const char *cpu)
{
    char *y = xasprintf("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n%s%s"
                        "spec:\n  parallelism: %d\n  completions: %d\n"
                        "  completionMode: Indexed\n  template:\n    spec:\n"
                        "      restartPolicy: Never\n      containers:\n      - name: c\n"
                        "        image: busybox\n        command: [\"true\"]\n"
                        "        resources:\n          requests:\n            cpu: \"%s\"\n",
                        name, labels, annotations, parallelism, completions, cpu);
    fx_apply_text(f, y, name);
    xfree(y);
    fx_run(f);
}

static struct fx *with_queues(void (*tweak)(struct ctrl_config *))
{
    struct fx *f = fx_new(tweak);
    fx_apply_text(f, queues, "queues");
    fx_run(f);
    return f;
}

static size_t count_pods(struct fx *f, const char *name)
{
    json_t *j = fx_get(f, KIND_JOB, "default", name);
    json_t *pods = fx_owned(f, KIND_POD, api_uid(j));
    size_t n = json_array_size(pods);
    json_decref(pods);
    json_decref(j);
    return n;
}

static void job_without_queue_goes_to_the_default_localqueue(void **state)
{
    (void)state;
    struct fx *f = with_queues(NULL);
    job(f, "plain", "", "", 1, 1, "1");
    json_t *j = fx_get(f, KIND_JOB, "default", "plain");
    assert_string_equal(api_label(j, "kueue.x-k8s.io/queue-name"), "default");
    json_t *wl = fx_workload_of(f, "Job", "plain");
    assert_non_null(wl);
    assert_true(api_cond_is_true(wl, "Admitted"));
    json_decref(wl);
    json_decref(j);
    /* a Job that is another object's child (as a RayJob's submitter is) is
     * left alone */
    fx_apply_text(f, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: owner\n", "owner");
    json_t *owner = fx_get(f, KIND_CONFIGMAP, "default", "owner");
    char *refs = xasprintf("  ownerReferences:\n  - apiVersion: v1\n    kind: ConfigMap\n"
                           "    name: owner\n    uid: %s\n    controller: true\n",
                           api_uid(owner));
    job(f, "child", refs, "", 1, 1, "1");
    j = fx_get(f, KIND_JOB, "default", "child");
    assert_non_null(j);
    assert_null(api_label(j, "kueue.x-k8s.io/queue-name"));
    assert_null(fx_workload_of(f, "Job", "child"));
    assert_int_equal(count_pods(f, "child"), 1);
    xfree(refs);
    json_decref(owner);
    json_decref(j);
    fx_free(f);
}

static void elastic_scale_up_gets_a_new_slice(void **state)
{
    (void)state;
    struct fx *f = with_queues(NULL);
    job(f, "grow", "  labels:\n    kueue.x-k8s.io/queue-name: default\n",
        "  annotations:\n    kueue.x-k8s.io/elastic-job: \"true\"\n", 1, 4, "2");
    json_t *old = fx_workload_of(f, "Job", "grow");
    assert_true(api_cond_is_true(old, "Admitted"));
    assert_int_equal(count_pods(f, "grow"), 1);

    json_t *cur = fx_get(f, KIND_JOB, "default", "grow");
    json_t *cp = json_deep_copy(cur);
    JX_SET_NEW(cp, json_integer(3), "spec", "parallelism");
    assert_int_equal(store_update(f->store, KIND_JOB, "default", cp, STORE_UPDATE_MAIN, NULL), 0);
    fx_run(f);

    json_t *o = fx_get(f, KIND_WORKLOAD, "default", api_name(old));
    assert_true(api_cond_is_true(o, "Finished"));
    assert_string_equal(fx_reason(o, "Finished"), "WorkloadSliceReplaced");
    assert_null(api_cond_get(o, "Preempted"));
    json_t *all = store_list(f->store, KIND_WORKLOAD, "default", NULL);
    json_t *slice = NULL;
    size_t i;
    json_t *w;
    json_array_foreach(all, i, w) {
        if (strcmp(api_name(w), api_name(old)))
            slice = w;
    }
    assert_non_null(slice);
    char *ref = xasprintf("default/%s", api_name(old));
    assert_string_equal(api_annotation(slice, "kueue.x-k8s.io/workload-slice-replacement-for"),
                        ref);
    assert_string_equal(api_annotation(slice, "kueue.x-k8s.io/workload-slice-name"),
                        api_name(old));
    assert_true(api_cond_is_true(slice, "Admitted"));
    assert_int_equal(JX_INT(json_array_get(JX_GET(slice, "spec", "podSets"), 0), 0, "count"), 3);
    json_t *job_now = fx_get(f, KIND_JOB, "default", "grow");
    assert_false(JX_BOOL(job_now, true, "spec", "suspend"));
    assert_int_equal(count_pods(f, "grow"), 3);
    json_decref(job_now);
    xfree(ref);
    json_decref(all);
    json_decref(o);
    json_decref(cp);
    json_decref(cur);
    json_decref(old);
    fx_free(f);
}

static void block_admission(struct ctrl_config *cfg) { cfg->pods_ready_block_admission = true; }

static void block_admission_waits_for_ready_pods(void **state)
{
    (void)state;
    struct fx *f = with_queues(block_admission);
    job(f, "first", "  labels:\n    kueue.x-k8s.io/queue-name: default\n", "", 1, 1, "2");
    job(f, "second", "  labels:\n    kueue.x-k8s.io/queue-name: default\n", "", 1, 1, "2");
    json_t *second = fx_workload_of(f, "Job", "second");
    assert_false(api_cond_is_true(second, "QuotaReserved"));
    assert_string_equal(fx_reason(second, "QuotaReserved"), "WaitingForPodsReady");
    assert_string_equal(fx_message(second, "QuotaReserved"),
                        "waiting for all admitted workloads to be in PodsReady condition");
    json_decref(second);
    json_t *j = fx_get(f, KIND_JOB, "default", "first");
    json_t *pods = fx_owned(f, KIND_POD, api_uid(j));
    fx_set_all_pods(f, pods, "Running", true);
    second = fx_workload_of(f, "Job", "second");
    assert_true(api_cond_is_true(second, "QuotaReserved"));
    json_decref(second);
    json_decref(pods);
    json_decref(j);
    fx_free(f);
}

/* Workloads admitted with the same assignment (ClusterQueue, pod sets,
 * counts, flavors, usage) share one status.admission value; another
 * assignment gets its own, with its own figures. Pending ones with the same
 * pod sets share one status.resourceRequests. */
static void equal_admissions_are_one_value(void **state)
{
    (void)state;
    struct fx *f = with_queues(NULL);
    job(f, "a", "", "", 1, 1, "1");
    job(f, "b", "", "", 1, 1, "1");
    job(f, "c", "", "", 2, 2, "1");
    json_t *a = fx_workload_of(f, "Job", "a"), *b = fx_workload_of(f, "Job", "b");
    json_t *c = fx_workload_of(f, "Job", "c");
    assert_true(api_cond_is_true(a, "Admitted") && api_cond_is_true(b, "Admitted") &&
                api_cond_is_true(c, "Admitted"));
    const json_t *aa = JX_GET(a, "status", "admission");
    assert_non_null(aa);
    assert_ptr_equal(aa, JX_GET(b, "status", "admission"));
    assert_string_equal(JX_STR(aa, "clusterQueue"), "cluster-queue");
    const json_t *psa = json_array_get(JX_GET(aa, "podSetAssignments"), 0);
    assert_int_equal(JX_INT(psa, 0, "count"), 1);
    assert_string_equal(JX_STR(psa, "flavors", "cpu"), "rf");
    assert_string_equal(JX_STR(psa, "resourceUsage", "cpu"), "1");
    const json_t *ca = JX_GET(c, "status", "admission");
    assert_ptr_not_equal(ca, aa);
    psa = json_array_get(JX_GET(ca, "podSetAssignments"), 0);
    assert_int_equal(JX_INT(psa, 0, "count"), 2);
    assert_string_equal(JX_STR(psa, "resourceUsage", "cpu"), "2");
    /* pending ones with the same pod sets share their resourceRequests */
    job(f, "big1", "", "", 9, 9, "1");
    job(f, "big2", "", "", 9, 9, "1");
    json_t *b1 = fx_workload_of(f, "Job", "big1"), *b2 = fx_workload_of(f, "Job", "big2");
    assert_false(api_cond_is_true(b1, "QuotaReserved"));
    const json_t *rr = JX_GET(b1, "status", "resourceRequests");
    assert_non_null(rr);
    assert_ptr_equal(rr, JX_GET(b2, "status", "resourceRequests"));
    assert_string_equal(JX_STR(json_array_get(rr, 0), "resources", "cpu"), "9");
    json_decref(b1);
    json_decref(b2);
    json_decref(a);
    json_decref(b);
    json_decref(c);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(job_without_queue_goes_to_the_default_localqueue),
        cmocka_unit_test(elastic_scale_up_gets_a_new_slice),
        cmocka_unit_test(block_admission_waits_for_ready_pods),
        cmocka_unit_test(equal_admissions_are_one_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
