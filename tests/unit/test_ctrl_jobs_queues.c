/*
 * What the queues and jobs report: ClusterQueue and LocalQueue status
 * (counts, flavor usage, Active), a pending Workload's resourceRequests and
 * the engine's explanation through ctrl_explain_workload (with the
 * expected-runtime hook), and per-worker metrics gathered on the Job.
 */
#include "test_ctrl_jobs_fixture.h"

static const char *queue_yaml =
    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: rf\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: cluster-queue\n"
    "spec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n"
    "    flavors:\n    - name: rf\n      resources:\n      - name: cpu\n        nominalQuota: 4\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: lq\n"
    "  namespace: default\nspec:\n  clusterQueue: cluster-queue\n";

static void submit(struct fx *f, const char *name, const char *runtime)
{
    char *y = xasprintf("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  labels:\n"
                        "    kueue.x-k8s.io/queue-name: lq\n  annotations:\n"
                        "    cueue.dev/expected-runtime-seconds: \"%s\"\n"
                        "spec:\n  template:\n    spec:\n      restartPolicy: Never\n"
                        "      containers:\n      - name: c\n        image: busybox\n"
                        "        command: [\"true\"]\n        resources:\n"
                        "          requests:\n            cpu: \"4\"\n",
                        name, runtime);
    fx_apply_text(f, y, name);
    xfree(y);
    fx_run(f);
}

static struct fx *two_jobs(void)
{
    struct fx *f = fx_new(NULL);
    fx_apply_text(f, queue_yaml, "queue");
    fx_run(f);
    submit(f, "a", "600");
    submit(f, "b", "60");
    return f;
}

static const char *usage_of(const json_t *obj, const char *list, const char *flavor,
                            const char *res)
{
    size_t i, j;
    json_t *fl, *r;
    json_array_foreach(JX_GET(obj, "status", list), i, fl) {
        if (strcmp(jx_or_empty(JX_STR(fl, "name")), flavor))
            continue;
        json_array_foreach(JX_GET(fl, "resources"), j, r) {
            if (!strcmp(jx_or_empty(JX_STR(r, "name")), res))
                return JX_STR(r, "total");
        }
    }
    return NULL;
}

static void queue_status_counts_and_usage(void **state)
{
    (void)state;
    struct fx *f = two_jobs();
    json_t *cq = fx_get(f, KIND_CLUSTERQUEUE, NULL, "cluster-queue");
    assert_true(api_cond_is_true(cq, "Active"));
    assert_string_equal(fx_message(cq, "Active"), "Can admit new workloads");
    assert_int_equal(JX_INT(cq, -1, "status", "admittedWorkloads"), 1);
    assert_int_equal(JX_INT(cq, -1, "status", "reservingWorkloads"), 1);
    assert_int_equal(JX_INT(cq, -1, "status", "pendingWorkloads"), 1);
    assert_string_equal(usage_of(cq, "flavorsUsage", "rf", "cpu"), "4");
    json_t *lq = fx_get(f, KIND_LOCALQUEUE, "default", "lq");
    assert_true(api_cond_is_true(lq, "Active"));
    assert_string_equal(fx_message(lq, "Active"), "Can submit new workloads to localQueue");
    assert_int_equal(JX_INT(lq, -1, "status", "admittedWorkloads"), 1);
    assert_int_equal(JX_INT(lq, -1, "status", "reservingWorkloads"), 1);
    assert_int_equal(JX_INT(lq, -1, "status", "pendingWorkloads"), 1);
    assert_string_equal(usage_of(lq, "flavorUsage", "rf", "cpu"), "4");
    assert_string_equal(usage_of(lq, "flavorsReservation", "rf", "cpu"), "4");

    json_t *b = fx_workload_of(f, "Job", "b");
    assert_string_equal(api_cond_status(b, "QuotaReserved"), "False");
    assert_string_equal(fx_reason(b, "Admitted"), "NoReservation");
    const json_t *rr = json_array_get(JX_GET(b, "status", "resourceRequests"), 0);
    assert_string_equal(JX_STR(rr, "name"), "main");
    assert_string_equal(JX_STR(rr, "resources", "cpu"), "4");
    assert_int_equal(fx_traces(f, "Pending", NULL) >= 1, 1);

    /* a stopped LocalQueue says so */
    json_t *cp = json_deep_copy(lq);
    JX_SET_NEW(cp, json_string("Hold"), "spec", "stopPolicy");
    assert_int_equal(store_update(f->store, KIND_LOCALQUEUE, "default", cp, STORE_UPDATE_MAIN,
                                  NULL),
                     0);
    fx_run(f);
    json_decref(lq);
    lq = fx_get(f, KIND_LOCALQUEUE, "default", "lq");
    assert_string_equal(fx_reason(lq, "Active"), "Stopped");
    assert_string_equal(fx_message(lq, "Active"), "LocalQueue is stopped");
    json_decref(cp);
    json_decref(b);
    json_decref(lq);
    json_decref(cq);
    fx_free(f);
}

/* Overwrite a queue's status as a client could. */
static void clobber_status(struct fx *f, enum api_kind_id kind, const char *ns, const char *name)
{
    json_t *cur = fx_get(f, kind, ns, name);
    json_t *cp = json_deep_copy(cur);
    JX_SET_NEW(cp, json_integer(99), "status", "pendingWorkloads");
    fx_write_status(f, kind, cp);
    json_decref(cp);
    json_decref(cur);
}

/* Set spec.<field> = value (a string) as a client would, and run. */
static void set_spec(struct fx *f, enum api_kind_id kind, const char *ns, const char *name,
                     const char *field, const char *value)
{
    json_t *cur = fx_get(f, kind, ns, name);
    json_t *cp = json_deep_copy(cur);
    JX_SET_NEW(cp, json_string(value), "spec", field);
    assert_int_equal(store_update(f->store, kind, ns, cp, STORE_UPDATE_MAIN, NULL), 0);
    json_decref(cp);
    json_decref(cur);
    fx_run(f);
}

static void set_stop_policy(struct fx *f, enum api_kind_id kind, const char *ns,
                            const char *name, const char *policy)
{
    set_spec(f, kind, ns, name, "stopPolicy", policy);
}

static void expect_lq_active(struct fx *f, const char *status, const char *reason)
{
    json_t *lq = fx_get(f, KIND_LOCALQUEUE, "default", "lq");
    assert_string_equal(api_cond_status(lq, "Active"), status);
    assert_string_equal(fx_reason(lq, "Active"), reason);
    json_decref(lq);
}

/* Both queues' status says pending Workloads (after a run). */
static void expect_pending(struct fx *f, int pending)
{
    json_t *cq = fx_get(f, KIND_CLUSTERQUEUE, NULL, "cluster-queue");
    json_t *lq = fx_get(f, KIND_LOCALQUEUE, "default", "lq");
    assert_int_equal(JX_INT(cq, -1, "status", "pendingWorkloads"), pending);
    assert_int_equal(JX_INT(lq, -1, "status", "pendingWorkloads"), pending);
    json_decref(cq);
    json_decref(lq);
}

/* A client's status write between the controller's own write and its
 * event seen back (kueue/queues.c remembers the last flush's writes in
 * order, to skip their events): still rewritten. */
static void queue_status_clobbered_between_steps_is_restored(void **state)
{
    (void)state;
    struct fx *f = two_jobs();
    char *y = xasprintf("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: c\n  labels:\n"
                        "    kueue.x-k8s.io/queue-name: lq\n"
                        "spec:\n  template:\n    spec:\n      restartPolicy: Never\n"
                        "      containers:\n      - name: c\n        image: busybox\n"
                        "        command: [\"true\"]\n        resources:\n"
                        "          requests:\n            cpu: \"4\"\n");
    fx_apply_text(f, y, "c");
    xfree(y);
    for (int i = 0; i < 6; i++) {
        ctrl_step(f->ctrl);
        clobber_status(f, KIND_CLUSTERQUEUE, NULL, "cluster-queue");
        clobber_status(f, KIND_LOCALQUEUE, "default", "lq");
    }
    fx_run(f);
    expect_pending(f, 2);
    fx_free(f);
}

static void queue_status_is_restored_and_localqueue_follows_its_clusterqueue(void **state)
{
    (void)state;
    struct fx *f = two_jobs();
    /* figures unchanged since the controller's last write, but the stored
     * status is someone else's: written again */
    clobber_status(f, KIND_CLUSTERQUEUE, NULL, "cluster-queue");
    clobber_status(f, KIND_LOCALQUEUE, "default", "lq");
    fx_run(f);
    expect_pending(f, 1);
    /* a stopped ClusterQueue makes its LocalQueue inactive, and back */
    set_stop_policy(f, KIND_CLUSTERQUEUE, NULL, "cluster-queue", "Hold");
    expect_lq_active(f, "False", "ClusterQueueIsInactive");
    set_stop_policy(f, KIND_CLUSTERQUEUE, NULL, "cluster-queue", "None");
    expect_lq_active(f, "True", "Ready");
    /* a LocalQueue moved to another ClusterQueue follows that one */
    fx_apply_text(f,
                  "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n"
                  "  name: other\nspec:\n  namespaceSelector: {}\n  stopPolicy: Hold\n"
                  "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
                  "    - name: rf\n      resources:\n      - name: cpu\n"
                  "        nominalQuota: 4\n",
                  "other");
    fx_run(f);
    set_spec(f, KIND_LOCALQUEUE, "default", "lq", "clusterQueue", "other");
    expect_lq_active(f, "False", "ClusterQueueIsInactive");
    set_stop_policy(f, KIND_CLUSTERQUEUE, NULL, "other", "None");
    expect_lq_active(f, "True", "Ready");
    set_stop_policy(f, KIND_CLUSTERQUEUE, NULL, "cluster-queue", "Hold");
    expect_lq_active(f, "True", "Ready"); /* no longer its ClusterQueue */
    fx_free(f);
}

/* The LocalQueue counts a reserved Workload's amounts from its admission,
 * read again only when a new version holds another admission object
 * (kueue/queues.c wl_contrib.adm): an admission rewritten by a client with
 * other amounts is counted with those. */
static void localqueue_counts_a_rewritten_admission(void **state)
{
    (void)state;
    struct fx *f = two_jobs();
    json_t *a = fx_workload_of(f, "Job", "a");
    assert_true(api_cond_is_true(a, "Admitted"));
    json_t *cp = jx_deep_copy(a);
    json_t *ps = json_array_get(JX_GET(cp, "status", "admission", "podSetAssignments"), 0);
    JX_SET_NEW(ps, json_string("3"), "resourceUsage", "cpu");
    fx_write_status(f, KIND_WORKLOAD, cp);
    fx_run(f);
    json_t *lq = fx_get(f, KIND_LOCALQUEUE, "default", "lq");
    assert_string_equal(usage_of(lq, "flavorsReservation", "rf", "cpu"), "3");
    assert_string_equal(usage_of(lq, "flavorUsage", "rf", "cpu"), "3");
    json_decref(lq);
    json_decref(cp);
    json_decref(a);
    fx_free(f);
}

/* The queue controller marks a reserved Workload's ClusterQueue from the
 * one it marked last (kueue/queues.c wl_contrib.cq) while the admission
 * names that one: an admission rewritten to name another ClusterQueue
 * marks that one, whose status then counts the Workload. */
static void admission_moved_to_another_clusterqueue_marks_that_one(void **state)
{
    (void)state;
    struct fx *f = two_jobs();
    fx_apply_text(f,
                  "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n"
                  "  name: other\nspec:\n  namespaceSelector: {}\n"
                  "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n"
                  "    - name: rf\n      resources:\n      - name: cpu\n"
                  "        nominalQuota: 4\n",
                  "other");
    fx_run(f);
    json_t *other = fx_get(f, KIND_CLUSTERQUEUE, NULL, "other");
    assert_int_equal(JX_INT(other, -1, "status", "reservingWorkloads"), 0);
    json_decref(other);
    json_t *a = fx_workload_of(f, "Job", "a");
    assert_true(api_cond_is_true(a, "Admitted"));
    json_t *cp = jx_deep_copy(a);
    JX_SET_NEW(cp, json_string("other"), "status", "admission", "clusterQueue");
    fx_write_status(f, KIND_WORKLOAD, cp);
    fx_run(f);
    other = fx_get(f, KIND_CLUSTERQUEUE, NULL, "other");
    assert_int_equal(JX_INT(other, -1, "status", "reservingWorkloads"), 1);
    assert_string_equal(usage_of(other, "flavorsReservation", "rf", "cpu"), "4");
    json_decref(other);
    json_decref(cp);
    json_decref(a);
    fx_free(f);
}

static void explain_names_the_holder_and_an_estimate(void **state)
{
    (void)state;
    struct fx *f = two_jobs();
    json_t *a = fx_workload_of(f, "Job", "a");
    json_t *b = fx_workload_of(f, "Job", "b");
    json_t *x = NULL;
    assert_int_equal(ctrl_explain_workload(f->ctrl, "default", api_name(b), &x), 0);
    assert_non_null(x);
    assert_int_equal(JX_INT(x, -2, "position"), 0);
    assert_string_equal(JX_STR(x, "reason"), fx_reason(b, "QuotaReserved"));
    char *holder = xasprintf("default/%s", api_name(a));
    bool held = false;
    size_t i, j;
    json_t *bl, *h;
    json_array_foreach(JX_GET(x, "blockers"), i, bl) {
        json_array_foreach(JX_GET(bl, "holders"), j, h) {
            held |= !strcmp(json_string_value(h), holder);
        }
    }
    assert_true(held);
    /* a runs 600 s from its admission: b can start then */
    char ts[TIMEFMT_LEN];
    timefmt_rfc3339(api_cond_time_ms(a, "Admitted") + 600000, false, ts);
    assert_string_equal(JX_STR(x, "estimatedAdmissionTime"), ts);
    json_t *none = NULL;
    assert_int_equal(ctrl_explain_workload(f->ctrl, "default", "nope", &none), CU_ENOTFOUND);
    assert_null(none);
    xfree(holder);
    json_decref(x);
    json_decref(b);
    json_decref(a);
    fx_free(f);
}

static void worker_metrics_are_gathered_on_the_job(void **state)
{
    (void)state;
    struct fx *f = two_jobs();
    json_t *job = fx_get(f, KIND_JOB, "default", "a");
    json_t *pods = fx_owned(f, KIND_POD, api_uid(job));
    assert_int_equal(json_array_size(pods), 1);
    const char *pod = api_name(json_array_get(pods, 0));
    json_t *cur = fx_get(f, KIND_POD, "default", pod);
    json_t *cp = json_deep_copy(cur);
    api_set_annotation(cp, "cueue.dev/metrics", "{\"epoch\": 10, \"loss\": 0.9}");
    assert_int_equal(store_update(f->store, KIND_POD, "default", cp, STORE_UPDATE_MAIN, NULL), 0);
    fx_run(f);
    json_decref(job);
    job = fx_get(f, KIND_JOB, "default", "a");
    const char *text = api_annotation(job, "cueue.dev/metrics");
    assert_non_null(text);
    json_t *m = json_loads(text, 0, NULL);
    assert_int_equal(JX_INT(m, -1, pod, "epoch"), 10);
    /* written as people read it: 0.9, not 0.90000000000000002 */
    assert_non_null(strstr(text, "\"loss\":0.9}"));
    json_decref(m);
    json_decref(cp);
    json_decref(cur);
    json_decref(pods);
    json_decref(job);
    fx_free(f);
}

/* Regression: `delete -f` of the seed's queue file deletes the flavors
 * before their ClusterQueue; the flavors must go once the queue is gone
 * (their finalizer was never looked at again, so `delete -f` hung). */
static void flavors_deleted_before_their_queue_go_with_it(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_apply_text(f, queue_yaml, "queues");
    fx_run(f);
    assert_int_equal(store_delete(f->store, KIND_RESOURCEFLAVOR, NULL, "rf", NULL, NULL), 0);
    fx_run(f);
    json_t *rf = fx_get(f, KIND_RESOURCEFLAVOR, NULL, "rf");
    assert_non_null(rf); /* still used by cluster-queue: kept, marked for deletion */
    assert_true(api_is_deleting(rf));
    json_decref(rf);
    assert_int_equal(store_delete(f->store, KIND_CLUSTERQUEUE, NULL, "cluster-queue", NULL, NULL), 0);
    fx_run(f);
    assert_null(store_get(f->store, KIND_CLUSTERQUEUE, NULL, "cluster-queue"));
    assert_null(store_get(f->store, KIND_RESOURCEFLAVOR, NULL, "rf"));
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(flavors_deleted_before_their_queue_go_with_it),
        cmocka_unit_test(queue_status_counts_and_usage),
        cmocka_unit_test(queue_status_is_restored_and_localqueue_follows_its_clusterqueue),
        cmocka_unit_test(queue_status_clobbered_between_steps_is_restored),
        cmocka_unit_test(localqueue_counts_a_rewritten_admission),
        cmocka_unit_test(admission_moved_to_another_clusterqueue_marks_that_one),
        cmocka_unit_test(explain_names_the_holder_and_an_estimate),
        cmocka_unit_test(worker_metrics_are_gathered_on_the_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
