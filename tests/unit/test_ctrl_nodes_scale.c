/* Unit tests: the autoscaler's scale-up and scale-down, with the binder. */
#include "test_ctrl_nodes_fixture.h"

/* The seed's TPU worker pod: 8 CPU, 16Gi, 4 chips, on the given pool. */
static void tpu_pod(struct nfx *f, const char *name, const char *pool)
{
    json_t *p = nfx_pod("default", name, "8", "16Gi", 4);
    nfx_tpu_placement(p, pool);
    nfx_create(f, KIND_POD, "default", p);
}

static const char *node_of(struct nfx *f, const char *pod, char buf[128])
{
    json_t *p = nfx_get(f, KIND_POD, "default", pod);
    snprintf(buf, 128, "%s", jx_or_empty(JX_STR(p, "spec", "nodeName")));
    json_decref(p);
    return buf;
}

static void set_phase(struct nfx *f, const char *pod, const char *phase)
{
    json_t *p = nfx_get(f, KIND_POD, "default", pod);
    json_t *cp = json_deep_copy(p);
    JX_SET_NEW(cp, json_string(phase), "status", "phase");
    assert_int_equal(store_update(f->s, KIND_POD, "default", cp, STORE_UPDATE_STATUS, NULL), 0);
    json_decref(cp);
    json_decref(p);
}

static void seed_pools(struct nfx *f)
{
    nfx_create(f, KIND_NODEPOOL, NULL, nfx_ondemand_pool("on-demand-pool"));
    nfx_create(f, KIND_NODEPOOL, NULL, nfx_dws_pool("dws-pool", "Immediate", 0));
    nfx_step(f);
}

static void test_tpu_pod_set_scales_one_slice_and_binds(void **state)
{
    struct nfx *f = *state;
    seed_pools(f);
    char name[16], buf[128];
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "worker-%d", i);
        tpu_pod(f, name, "on-demand-pool");
    }
    nfx_step(f);
    json_t *nodes = nfx_pool_nodes(f, "on-demand-pool");
    assert_int_equal(json_array_size(nodes), 4); /* 0 -> 4: one whole slice */
    json_decref(nodes);
    assert_int_equal(nfx_count_nodes(f, "dws-pool"), 0);
    json_t *up = nfx_traces(f, "NodesScaledUp");
    assert_int_equal(json_array_size(up), 1);
    assert_string_equal(JX_STR(json_array_get(up, 0), "nodePool"), "on-demand-pool");
    assert_int_equal(JX_INT(json_array_get(up, 0), 0, "count"), 4);
    assert_int_equal(json_array_size(JX_GET(json_array_get(up, 0), "nodes")), 4);
    json_decref(up);
    /* every worker on its own host */
    json_t *seen = json_object();
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "worker-%d", i);
        assert_true(node_of(f, name, buf)[0]);
        assert_null(json_object_get(seen, buf));
        json_object_set_new(seen, buf, json_true());
        json_t *p = nfx_get(f, KIND_POD, "default", name);
        assert_true(api_cond_is_true(p, "PodScheduled"));
        json_decref(p);
    }
    json_decref(seen);
    assert_true(nfx_has_event(f, "worker-0", "TriggeredScaleUp"));
    assert_true(nfx_has_event(f, "worker-0", "FailedScheduling"));
    assert_true(nfx_has_event(f, "worker-0", "Scheduled"));
}

static void test_idle_slice_scales_down_to_zero(void **state)
{
    struct nfx *f = *state;
    seed_pools(f);
    char name[16];
    for (int i = 0; i < 4; i++) {
        snprintf(name, sizeof(name), "worker-%d", i);
        tpu_pod(f, name, "on-demand-pool");
    }
    nfx_step(f);
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 4);
    nfx_advance(f, 30 * MIN); /* busy nodes stay */
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 4);
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof(name), "worker-%d", i);
        set_phase(f, name, "Succeeded");
    }
    nfx_advance(f, 20 * MIN); /* one host still busy: the slice stays whole */
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 4);
    set_phase(f, "worker-3", "Failed");
    nfx_advance(f, 9 * MIN);
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 4);
    nfx_advance(f, 2 * MIN);
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 0);
    json_t *down = nfx_traces(f, "NodesScaledDown");
    assert_int_equal(json_array_size(down), 1);
    assert_int_equal(JX_INT(json_array_get(down, 0), 0, "count"), 4);
    /* at 10 minutes after the last pod finished */
    double t = json_real_value(json_object_get(json_array_get(down, 0), "time"));
    assert_true(t >= (30 + 20 + 10) * 60.0 && t <= (30 + 20 + 11) * 60.0);
    json_decref(down);
}

static void test_per_pool_unneeded_time(void **state)
{
    struct nfx *f = *state;
    json_t *p = nfx_ondemand_pool("on-demand-pool");
    json_object_set_new(json_object_get(p, "spec"), "scaleDownUnneededSeconds",
                        json_integer(60));
    nfx_create(f, KIND_NODEPOOL, NULL, p);
    tpu_pod(f, "w", "on-demand-pool");
    nfx_step(f);
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 4);
    set_phase(f, "w", "Succeeded");
    nfx_advance(f, 61 * SEC);
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 0);
}

static void test_queued_pool_never_scales_for_plain_pods(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL, nfx_dws_pool("dws-pool", "Immediate", 0));
    nfx_step(f);
    tpu_pod(f, "w", "dws-pool");
    tpu_pod(f, "any", NULL); /* fits the queued pool's labels and taints */
    nfx_advance(f, 60 * MIN);
    assert_int_equal(nfx_count_nodes(f, "dws-pool"), 0);
    json_t *pod = nfx_get(f, KIND_POD, "default", "w");
    assert_string_equal(nfx_cond_reason(pod, "PodScheduled"), "Unschedulable");
    assert_string_equal(JX_STR(api_cond_get(pod, "PodScheduled"), "message"),
                        "no nodes available to schedule pods");
    json_decref(pod);
}

static void test_scale_up_respects_max_nodes(void **state)
{
    struct nfx *f = *state;
    seed_pools(f);
    char name[16];
    for (int i = 0; i < 8; i++) { /* two slices' worth; max is one */
        snprintf(name, sizeof(name), "worker-%d", i);
        tpu_pod(f, name, "on-demand-pool");
    }
    nfx_advance(f, 5 * MIN);
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 4);
    json_t *pod = nfx_get(f, KIND_POD, "default", "worker-7");
    assert_string_equal(nfx_cond_reason(pod, "PodScheduled"), "Unschedulable");
    json_decref(pod);
}

static void test_stockout_keeps_pods_pending_then_retries(void **state)
{
    struct nfx *f = *state;
    json_t *p = nfx_ondemand_pool("on-demand-pool");
    json_object_set_new(json_object_get(p, "spec"), "capacity",
                        json_pack("{s:s}", "mode", "Stockout"));
    nfx_create(f, KIND_NODEPOOL, NULL, p);
    tpu_pod(f, "w", "on-demand-pool");
    nfx_advance(f, 10 * MIN);
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 0);
    assert_true(nfx_has_event(f, "w", "FailedScaleUp"));
    assert_true(nfx_has_event(f, "on-demand-pool", "FailedScaleUp"));
    /* capacity comes back: the next retry finds it */
    json_t *cur = nfx_get(f, KIND_NODEPOOL, NULL, "on-demand-pool");
    json_t *cp = json_deep_copy(cur);
    JX_SET_NEW(cp, json_string("Immediate"), "spec", "capacity", "mode");
    assert_int_equal(store_update(f->s, KIND_NODEPOOL, NULL, cp, STORE_UPDATE_MAIN, NULL), 0);
    json_decref(cp);
    json_decref(cur);
    nfx_advance(f, 61 * SEC);
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 4);
    char buf[128];
    assert_true(node_of(f, "w", buf)[0]);
}

static void test_delayed_capacity_arrives_on_time(void **state)
{
    struct nfx *f = *state;
    json_t *p = nfx_ondemand_pool("on-demand-pool");
    json_object_set_new(json_object_get(p, "spec"), "capacity",
                        json_pack("{s:s,s:i}", "mode", "Delayed", "delaySeconds", 120));
    nfx_create(f, KIND_NODEPOOL, NULL, p);
    tpu_pod(f, "w", "on-demand-pool");
    tpu_pod(f, "v", "on-demand-pool");
    nfx_advance(f, 119 * SEC);
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 0);
    nfx_advance(f, 1 * SEC);
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 4);
    json_t *up = nfx_traces(f, "NodesScaledUp");
    assert_int_equal(json_array_size(up), 1); /* one request for both pods */
    json_decref(up);
}

static void test_pods_consuming_a_request_do_not_trigger_scale_up(void **state)
{
    struct nfx *f = *state;
    seed_pools(f);
    json_t *p = nfx_pod("default", "c", "8", "16Gi", 4);
    nfx_tpu_placement(p, "on-demand-pool");
    api_set_annotation(p, "autoscaling.x-k8s.io/consume-provisioning-request", "pr-1");
    nfx_create(f, KIND_POD, "default", p);
    nfx_advance(f, 5 * MIN);
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 0);
}

static void test_cpu_pods_use_cpu_pool_not_tpu_pool(void **state)
{
    struct nfx *f = *state;
    seed_pools(f);
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("cpu-pool", "e2-standard-8",
                        json_pack("{s:{s:b,s:i,s:i}}", "autoscaling", "enabled", 1,
                                  "minNodeCount", 0, "maxNodeCount", 3)));
    nfx_step(f);
    nfx_create(f, KIND_POD, "default", nfx_pod("default", "a", "5", "1Gi", 0));
    nfx_create(f, KIND_POD, "default", nfx_pod("default", "b", "5", "1Gi", 0));
    nfx_step(f);
    /* TPU nodes are tainted: only the CPU pool fits; 5 CPU each -> 2 nodes */
    assert_int_equal(nfx_count_nodes(f, "cpu-pool"), 2);
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tpu_pod_set_scales_one_slice_and_binds, nfx_setup,
                                        nfx_teardown),
        cmocka_unit_test_setup_teardown(test_idle_slice_scales_down_to_zero, nfx_setup,
                                        nfx_teardown),
        cmocka_unit_test_setup_teardown(test_per_pool_unneeded_time, nfx_setup, nfx_teardown),
        cmocka_unit_test_setup_teardown(test_queued_pool_never_scales_for_plain_pods, nfx_setup,
                                        nfx_teardown),
        cmocka_unit_test_setup_teardown(test_scale_up_respects_max_nodes, nfx_setup,
                                        nfx_teardown),
        cmocka_unit_test_setup_teardown(test_stockout_keeps_pods_pending_then_retries, nfx_setup,
                                        nfx_teardown),
        cmocka_unit_test_setup_teardown(test_delayed_capacity_arrives_on_time, nfx_setup,
                                        nfx_teardown),
        cmocka_unit_test_setup_teardown(test_pods_consuming_a_request_do_not_trigger_scale_up,
                                        nfx_setup, nfx_teardown),
        cmocka_unit_test_setup_teardown(test_cpu_pods_use_cpu_pool_not_tpu_pool, nfx_setup,
                                        nfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
