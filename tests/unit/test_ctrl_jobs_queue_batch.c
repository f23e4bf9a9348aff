/*
 * ClusterQueue and LocalQueue status with ctrl_config.queue_status_batch_ms
 * (Kueue's UpdatesBatchPeriod, kueue/queues.c): writes that only move the
 * counts and flavor usage wait for the batch period and are then written
 * once with the figures of that time; Active changes, spec changes and
 * other writers' status writes are written at once.
 */
#include "test_ctrl_jobs_fixture.h"

static const char *queue_yaml =
    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: rf\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: cq\n"
    "spec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n"
    "    flavors:\n    - name: rf\n      resources:\n      - name: cpu\n        nominalQuota: 4\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: lq\n"
    "  namespace: default\nspec:\n  clusterQueue: cq\n";

static void batch_one_second(struct ctrl_config *cfg)
{
    cfg->queue_status_batch_ms = 1000;
}

static void submit(struct fx *f, const char *name)
{
    char *y = xasprintf("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n  labels:\n"
                        "    kueue.x-k8s.io/queue-name: lq\n"
                        "spec:\n  template:\n    spec:\n      restartPolicy: Never\n"
                        "      containers:\n      - name: c\n        image: busybox\n"
                        "        command: [\"true\"]\n        resources:\n"
                        "          requests:\n            cpu: \"4\"\n",
                        name);
    fx_apply_text(f, y, name);
    xfree(y);
    fx_run(f);
}

/* The counts both queues' status shows: admitted, pending (-1: absent). */
static void expect_counts(struct fx *f, int admitted, int pending)
{
    json_t *cq = fx_get(f, KIND_CLUSTERQUEUE, NULL, "cq");
    json_t *lq = fx_get(f, KIND_LOCALQUEUE, "default", "lq");
    assert_int_equal(JX_INT(cq, -1, "status", "admittedWorkloads"), admitted);
    assert_int_equal(JX_INT(lq, -1, "status", "admittedWorkloads"), admitted);
    assert_int_equal(JX_INT(cq, -1, "status", "pendingWorkloads"), pending);
    assert_int_equal(JX_INT(lq, -1, "status", "pendingWorkloads"), pending);
    json_decref(cq);
    json_decref(lq);
}

static void counts_wait_for_the_batch_period(void **state)
{
    (void)state;
    struct fx *f = fx_new(batch_one_second);
    fx_apply_text(f, queue_yaml, "queue");
    fx_run(f);
    /* new queues: their first status (Active) is written at once */
    json_t *cq = fx_get(f, KIND_CLUSTERQUEUE, NULL, "cq");
    assert_true(api_cond_is_true(cq, "Active"));
    json_decref(cq);
    expect_counts(f, 0, 0);
    int64_t t0 = f->clock.now_ms;

    submit(f, "a");
    json_t *a = fx_workload_of(f, "Job", "a");
    assert_true(api_cond_is_true(a, "Admitted"));
    json_decref(a);
    /* admitted now, counted once the period has passed; a wakeup says when */
    expect_counts(f, 0, 0);
    assert_true(ctrl_next_deadline(f->ctrl) <= t0 + 1000);
    fx_advance(f, 400);
    submit(f, "b"); /* within the same period: written with it */
    expect_counts(f, 0, 0);
    fx_advance(f, 599);
    expect_counts(f, 0, 0);
    fx_advance(f, 1);
    expect_counts(f, 1, 1);

    /* a ClusterQueue stopped: the Active change is written at once, with
     * the figures of the moment, on both queues */
    json_t *cur = fx_get(f, KIND_CLUSTERQUEUE, NULL, "cq");
    json_t *cp = json_deep_copy(cur);
    JX_SET_NEW(cp, json_string("Hold"), "spec", "stopPolicy");
    assert_int_equal(store_update(f->store, KIND_CLUSTERQUEUE, NULL, cp, STORE_UPDATE_MAIN, NULL),
                     0);
    json_decref(cp);
    json_decref(cur);
    fx_run(f);
    cq = fx_get(f, KIND_CLUSTERQUEUE, NULL, "cq");
    assert_string_equal(api_cond_status(cq, "Active"), "False");
    json_decref(cq);
    json_t *lq = fx_get(f, KIND_LOCALQUEUE, "default", "lq");
    assert_string_equal(fx_reason(lq, "Active"), "ClusterQueueIsInactive");
    json_decref(lq);
    expect_counts(f, 1, 1);
    fx_free(f);
}

/* Another writer's status is replaced at once, not after the period. */
static void other_writers_status_is_restored_at_once(void **state)
{
    (void)state;
    struct fx *f = fx_new(batch_one_second);
    fx_apply_text(f, queue_yaml, "queue");
    fx_run(f);
    submit(f, "a");
    fx_advance(f, 1000);
    expect_counts(f, 1, 0);
    const char *names[2] = {NULL, "default"};
    const enum api_kind_id kinds[2] = {KIND_CLUSTERQUEUE, KIND_LOCALQUEUE};
    for (int i = 0; i < 2; i++) {
        json_t *cur = fx_get(f, kinds[i], names[i], i ? "lq" : "cq");
        json_t *cp = json_deep_copy(cur);
        JX_SET_NEW(cp, json_integer(99), "status", "pendingWorkloads");
        fx_write_status(f, kinds[i], cp);
        json_decref(cp);
        json_decref(cur);
    }
    fx_run(f);
    expect_counts(f, 1, 0);
    fx_free(f);
}

/* Without a batch period (the default), every settled step writes. */
static void without_a_period_counts_are_written_at_once(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_apply_text(f, queue_yaml, "queue");
    fx_run(f);
    submit(f, "a");
    expect_counts(f, 1, 0);
    submit(f, "b");
    expect_counts(f, 1, 1);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counts_wait_for_the_batch_period),
        cmocka_unit_test(other_writers_status_is_restored_at_once),
        cmocka_unit_test(without_a_period_counts_are_written_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
