/*
 * Workloads created directly (no job integration, no ownerReferences):
 * the Workload controller skips their events when its reconcile would
 * change nothing (workload.c wl_quiet), so these check the events it must
 * not skip: a user deactivating an admitted Workload, an admitted Workload
 * with maximumExecutionTimeSeconds, and one whose ClusterQueue is stopped
 * while it is admitted (HoldAndDrain). Virtual time throughout.
 */
#include "test_ctrl_jobs_fixture.h"

static const char *bare_queue =
    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: rf\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: cq\n"
    "spec:\n  namespaceSelector: {}\n"
    "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: rf\n"
    "      resources:\n      - name: cpu\n        nominalQuota: 4\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: lq\n"
    "  namespace: default\nspec:\n  clusterQueue: cq\n";

/* A queue, and the bare Workload "w" (extra: more spec lines), admitted,
 * under the configuration tweak makes (NULL: the defaults). */
static struct fx *admitted_with(void (*tweak)(struct ctrl_config *), const char *extra)
{
    struct fx *f = fx_new(tweak);
    fx_apply_text(f, bare_queue, "queue");
    fx_run(f);
    char *y = xasprintf("apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata:\n"
                        "  name: w\n  namespace: default\nspec:\n  queueName: lq\n%s"
                        "  podSets:\n  - name: main\n    count: 1\n    template:\n"
                        "      spec:\n        containers:\n        - name: c\n"
                        "          image: pause\n          resources:\n"
                        "            requests:\n              cpu: \"1\"\n",
                        extra);
    fx_apply_text(f, y, "w");
    xfree(y);
    fx_run(f);
    json_t *wl = fx_get(f, KIND_WORKLOAD, "default", "w");
    assert_true(api_cond_is_true(wl, "Admitted"));
    assert_null(JX_GET(wl, "metadata", "ownerReferences"));
    json_decref(wl);
    return f;
}

static struct fx *admitted(const char *extra) { return admitted_with(NULL, extra); }

/* Without waitForPodsReady: an admitted Workload's events can be quiet. */
static void no_pods_ready_wait(struct ctrl_config *cfg) { cfg->wait_for_pods_ready = false; }

/* Write spec/<field> of the stored object (kind, ns/name) as value (taken). */
static void set_spec(struct fx *f, enum api_kind_id k, const char *ns, const char *name,
                     const char *field, json_t *value)
{
    json_t *cur = fx_get(f, k, ns, name);
    json_t *cp = jx_deep_copy(cur);
    json_decref(cur);
    JX_SET_NEW(cp, value, "spec", field);
    if (store_update(f->store, k, ns, cp, STORE_UPDATE_MAIN, NULL) != 0)
        fail_msg("update of %s", name);
    json_decref(cp);
    fx_run(f);
}

static void deactivating_an_admitted_bare_workload_evicts_it(void **state)
{
    (void)state;
    struct fx *f = admitted("");
    set_spec(f, KIND_WORKLOAD, "default", "w", "active", json_false());
    json_t *wl = fx_get(f, KIND_WORKLOAD, "default", "w");
    assert_string_equal(fx_reason(wl, "Evicted"), "Deactivated");
    assert_false(api_cond_is_true(wl, "QuotaReserved"));
    assert_null(JX_GET(wl, "status", "admission"));
    json_decref(wl);
    fx_free(f);
}

static void admitted_bare_workload_past_its_maximum_execution_time_is_deactivated(void **state)
{
    (void)state;
    struct fx *f = admitted("  maximumExecutionTimeSeconds: 60\n");
    fx_advance(f, 30000);
    json_t *wl = fx_get(f, KIND_WORKLOAD, "default", "w");
    assert_true(api_cond_is_true(wl, "Admitted"));
    json_decref(wl);
    fx_advance(f, 31000);
    wl = fx_get(f, KIND_WORKLOAD, "default", "w");
    assert_false(JX_BOOL(wl, true, "spec", "active"));
    assert_string_equal(fx_reason(wl, "Evicted"),
                        "DeactivatedDueToMaximumExecutionTimeExceeded");
    json_decref(wl);
    fx_free(f);
}

static void hold_and_drain_evicts_an_admitted_bare_workload(void **state)
{
    (void)state;
    struct fx *f = admitted("");
    set_spec(f, KIND_CLUSTERQUEUE, NULL, "cq", "stopPolicy", json_string("HoldAndDrain"));
    json_t *wl = fx_get(f, KIND_WORKLOAD, "default", "w");
    assert_string_equal(fx_reason(wl, "Evicted"), "ClusterQueueStopped");
    assert_false(api_cond_is_true(wl, "QuotaReserved"));
    json_decref(wl);
    /* restarted: requeued and admitted again */
    set_spec(f, KIND_CLUSTERQUEUE, NULL, "cq", "stopPolicy", json_string("None"));
    wl = fx_get(f, KIND_WORKLOAD, "default", "w");
    assert_string_equal(fx_reason(wl, "Requeued"), "ClusterQueueRestarted");
    assert_true(api_cond_is_true(wl, "Admitted"));
    json_decref(wl);
    fx_free(f);
}

/* Write label key=value on the bare Workload "w" as a client would, and run:
 * one more event of it. */
static void label_workload(struct fx *f, const char *key, const char *value)
{
    json_t *cur = fx_get(f, KIND_WORKLOAD, "default", "w");
    json_t *cp = jx_deep_copy(cur);
    json_decref(cur);
    json_object_set_new(JX_OBJ(cp, "metadata", "labels"), key, json_string(value));
    if (store_update(f->store, KIND_WORKLOAD, "default", cp, STORE_UPDATE_MAIN, NULL) != 0)
        fail_msg("update of w");
    json_decref(cp);
    fx_run(f);
}

/* The Workload controller finds whether the admitted Workload's
 * ClusterQueue has check rules once per store version (workload.c
 * cq_has_rules): rules added to the ClusterQueue later are seen at the next
 * event of the Workload, whose checks then follow them. */
static void check_rules_added_later_reach_an_admitted_bare_workload(void **state)
{
    (void)state;
    struct fx *f = admitted_with(no_pods_ready_wait, "");
    label_workload(f, "seen", "1"); /* an event with no rules: quiet */
    json_t *wl = fx_get(f, KIND_WORKLOAD, "default", "w");
    assert_null(JX_GET(wl, "status", "admissionChecks"));
    assert_true(api_cond_is_true(wl, "Admitted"));
    json_decref(wl);
    json_t *checks = json_array();
    json_array_append_new(checks, json_string("ac"));
    set_spec(f, KIND_CLUSTERQUEUE, NULL, "cq", "admissionChecks", checks);
    label_workload(f, "seen", "2");
    wl = fx_get(f, KIND_WORKLOAD, "default", "w");
    assert_non_null(fx_check(wl, "ac"));
    assert_string_equal(JX_STR(fx_check(wl, "ac"), "state"), "Pending");
    assert_false(api_cond_is_true(wl, "Admitted"));
    json_decref(wl);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(deactivating_an_admitted_bare_workload_evicts_it),
        cmocka_unit_test(admitted_bare_workload_past_its_maximum_execution_time_is_deactivated),
        cmocka_unit_test(hold_and_drain_evicts_an_admitted_bare_workload),
        cmocka_unit_test(check_rules_added_later_reach_an_admitted_bare_workload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
