/* Unit tests: the NodePool reconciler (nodes, labels, taints, status). */
#include "test_ctrl_nodes_fixture.h"

static bool name_has_gke_shape(const char *name, const char *pool)
{
    /* gke-cueue-<pool>-<8 hex>-<4 chars> */
    char *prefix = xasprintf("gke-cueue-%s-", pool);
    bool ok = !strncmp(name, prefix, strlen(prefix));
    const char *rest = name + strlen(prefix);
    ok = ok && strlen(rest) == 13 && rest[8] == '-';
    for (int i = 0; ok && i < 8; i++)
        ok = strchr("0123456789abcdef", rest[i]) != NULL;
    xfree(prefix);
    return ok;
}

static void test_default_pool_gets_three_n2_nodes(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("default-pool", "n2-standard-16", json_pack("{s:i}", "initialNodeCount", 3)));
    nfx_step(f);
    json_t *nodes = nfx_pool_nodes(f, "default-pool");
    assert_int_equal(json_array_size(nodes), 3);
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n) {
        assert_true(name_has_gke_shape(api_name(n), "default-pool"));
        assert_string_equal(api_label(n, "node.kubernetes.io/instance-type"), "n2-standard-16");
        assert_string_equal(api_label(n, "cloud.google.com/machine-family"), "n2");
        assert_string_equal(api_label(n, "kubernetes.io/hostname"), api_name(n));
        assert_string_equal(api_label(n, "cloud.google.com/gke-provisioning"), "standard");
        assert_null(api_label(n, "cloud.google.com/gke-tpu-accelerator"));
        assert_null(JX_GET(n, "spec", "taints"));
        assert_string_equal(JX_STR(n, "status", "allocatable", "cpu"), "15890m");
        assert_string_equal(JX_STR(n, "status", "capacity", "cpu"), "16");
        assert_string_equal(JX_STR(n, "status", "capacity", "memory"), "67108864Ki");
        assert_string_equal(JX_STR(n, "status", "allocatable", "pods"), "110");
        assert_true(api_cond_is_true(n, "Ready"));
        assert_string_equal(JX_STR(n, "status", "nodeInfo", "operatingSystem"), "linux");
    }
    json_decref(nodes);
    json_t *pool = nfx_get(f, KIND_NODEPOOL, NULL, "default-pool");
    assert_int_equal(JX_INT(pool, -1, "status", "nodeCount"), 3);
    assert_int_equal(JX_INT(pool, -1, "status", "readyNodeCount"), 3);
    assert_true(api_cond_is_true(pool, "Ready"));
    json_decref(pool);
    json_t *up = nfx_traces(f, "NodesScaledUp");
    assert_int_equal(json_array_size(up), 1);
    assert_int_equal(JX_INT(json_array_get(up, 0), 0, "count"), 3);
    json_decref(up);
}

static void test_seed_pools_carry_gke_labels_and_taints(void **state)
{
    struct nfx *f = *state;
    json_t *od = nfx_ondemand_pool("on-demand-pool");
    json_object_set_new(json_object_get(od, "spec"), "initialNodeCount", json_integer(4));
    nfx_create(f, KIND_NODEPOOL, NULL, od);
    json_t *dws = nfx_dws_pool("dws-pool", "Immediate", 0);
    nfx_create(f, KIND_NODEPOOL, NULL, dws);
    nfx_step(f);
    json_t *nodes = nfx_pool_nodes(f, "on-demand-pool");
    assert_int_equal(json_array_size(nodes), 4);
    json_t *n = json_array_get(nodes, 0);
    assert_string_equal(api_label(n, "cloud.google.com/gke-tpu-accelerator"), "tpu-v6e-slice");
    assert_string_equal(api_label(n, "cloud.google.com/gke-tpu-topology"), "4x4");
    assert_string_equal(api_label(n, "node.kubernetes.io/instance-type"), "ct6e-standard-4t");
    assert_string_equal(api_label(n, "cloud.google.com/machine-family"), "ct6e");
    /* Kueue TAS levels: the pool is one block and one sub-block */
    assert_string_equal(api_label(n, "cloud.google.com/gce-topology-block"), "on-demand-pool-block");
    assert_string_equal(api_label(n, "cloud.google.com/gce-topology-subblock"),
                        "on-demand-pool-subblock");
    assert_null(api_label(n, "cloud.google.com/gke-queued"));
    assert_null(api_label(n, "cloud.google.com/gke-flex-start"));
    json_t *taints = JX_GET(n, "spec", "taints");
    assert_int_equal(json_array_size(taints), 1);
    assert_string_equal(JX_STR(json_array_get(taints, 0), "key"), "google.com/tpu");
    assert_string_equal(JX_STR(json_array_get(taints, 0), "value"), "present");
    assert_string_equal(JX_STR(json_array_get(taints, 0), "effect"), "NoSchedule");
    assert_string_equal(JX_STR(n, "status", "allocatable", "google.com/tpu"), "4");
    /* one slice: the four hosts share their instance group and slice */
    const char *slice = api_annotation(n, "cueue.dev/tpu-slice");
    assert_non_null(slice);
    for (size_t i = 1; i < 4; i++)
        assert_string_equal(api_annotation(json_array_get(nodes, i), "cueue.dev/tpu-slice"),
                            slice);
    json_decref(nodes);
    /* the queued pool starts (and stays) empty */
    assert_int_equal(nfx_count_nodes(f, "dws-pool"), 0);
    json_t *pool = nfx_get(f, KIND_NODEPOOL, NULL, "dws-pool");
    assert_int_equal(JX_INT(pool, -1, "status", "nodeCount"), 0);
    json_decref(pool);
}

static void test_unknown_machine_type_is_explained_without_nodes(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("bad", "n9-mega-1", json_pack("{s:i}", "initialNodeCount", 2)));
    json_t *topo = nfx_ondemand_pool("badtopo");
    JX_SET_NEW(topo, json_string("3x3"), "spec", "placementPolicy", "tpuTopology");
    nfx_create(f, KIND_NODEPOOL, NULL, topo);
    nfx_step(f);
    assert_int_equal(nfx_count_nodes(f, "bad"), 0);
    json_t *pool = nfx_get(f, KIND_NODEPOOL, NULL, "bad");
    json_t *c = api_cond_get(pool, "Ready");
    assert_non_null(c);
    assert_string_equal(JX_STR(c, "status"), "False");
    assert_string_equal(JX_STR(c, "reason"), "InvalidSpec");
    assert_non_null(strstr(JX_STR(c, "message"), "spec.config.machineType"));
    assert_non_null(strstr(JX_STR(c, "message"), "n9-mega-1"));
    json_decref(pool);
    pool = nfx_get(f, KIND_NODEPOOL, NULL, "badtopo");
    assert_non_null(strstr(JX_STR(api_cond_get(pool, "Ready"), "message"), "\"3x3\""));
    json_decref(pool);
}

static void test_deleting_a_pool_deletes_its_nodes(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("p", "e2-standard-4", json_pack("{s:i}", "initialNodeCount", 2)));
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("q", "e2-standard-8", json_pack("{s:i}", "initialNodeCount", 1)));
    nfx_step(f);
    assert_int_equal(nfx_count_nodes(f, "p"), 2);
    assert_int_equal(store_delete(f->s, KIND_NODEPOOL, NULL, "p", NULL, NULL), 0);
    nfx_step(f);
    assert_int_equal(nfx_count_nodes(f, "p"), 0);
    assert_int_equal(nfx_count_nodes(f, "q"), 1);
    json_t *down = nfx_traces(f, "NodesScaledDown");
    assert_int_equal(json_array_size(down), 1);
    assert_string_equal(JX_STR(json_array_get(down, 0), "nodePool"), "p");
    assert_string_equal(JX_STR(json_array_get(down, 0), "reason"), "NodePoolDeleted");
    json_decref(down);
}

static void test_fixed_pool_keeps_its_size(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("fixed", "n2-standard-4", json_pack("{s:i}", "initialNodeCount", 2)));
    nfx_step(f);
    json_t *nodes = nfx_pool_nodes(f, "fixed");
    assert_int_equal(store_delete(f->s, KIND_NODE, NULL, api_name(json_array_get(nodes, 0)),
                                  NULL, NULL), 0);
    json_decref(nodes);
    nfx_advance(f, 30 * MIN); /* never scaled down: not autoscaled */
    assert_int_equal(nfx_count_nodes(f, "fixed"), 2);
}

static void test_autoscaled_pool_keeps_min_and_drops_initial_when_idle(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("auto", "e2-standard-4",
                        json_pack("{s:i,s:{s:b,s:i,s:i}}", "initialNodeCount", 3, "autoscaling",
                                  "enabled", 1, "minNodeCount", 1, "maxNodeCount", 5)));
    nfx_step(f);
    assert_int_equal(nfx_count_nodes(f, "auto"), 3);
    nfx_advance(f, 9 * MIN);
    assert_int_equal(nfx_count_nodes(f, "auto"), 3);
    nfx_advance(f, 2 * MIN); /* past the 10-minute unneeded time */
    assert_int_equal(nfx_count_nodes(f, "auto"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_default_pool_gets_three_n2_nodes, nfx_setup,
                                        nfx_teardown),
        cmocka_unit_test_setup_teardown(test_seed_pools_carry_gke_labels_and_taints, nfx_setup,
                                        nfx_teardown),
        cmocka_unit_test_setup_teardown(test_unknown_machine_type_is_explained_without_nodes,
                                        nfx_setup, nfx_teardown),
        cmocka_unit_test_setup_teardown(test_deleting_a_pool_deletes_its_nodes, nfx_setup,
                                        nfx_teardown),
        cmocka_unit_test_setup_teardown(test_fixed_pool_keeps_its_size, nfx_setup, nfx_teardown),
        cmocka_unit_test_setup_teardown(test_autoscaled_pool_keeps_min_and_drops_initial_when_idle,
                                        nfx_setup, nfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
