/* Unit tests for the Slurm node mapping (src/provider/slurm.c): a libslurm
 * node record becomes cpu, memory, google.com/tpu / nvidia.com/gpu counts,
 * features and readiness as docs/slurm.md says; no slurmctld needed. The
 * RPC side (prov_slurm_partition_nodes) is tested against a real Slurm by
 * tests/e2e/t7000-slurm-cluster.sh through tests/helpers/slurm_partition.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <slurm/slurm.h>

#include "provider/slurm.h"
#include "util/err.h"

static void gres_counts_sum_types_and_ignore_suffixes(void **state)
{
    (void)state;
    assert_int_equal(prov_slurm_gres_count("tpu:4", "tpu"), 4);
    assert_int_equal(prov_slurm_gres_count("tpu:4", "gpu"), 0);
    assert_int_equal(prov_slurm_gres_count("gpu:a100:8(S:0-1),tpu:4", "gpu"), 8);
    assert_int_equal(prov_slurm_gres_count("gpu:a100:2(S:0),gpu:h100:6(S:1)", "gpu"), 8);
    assert_int_equal(prov_slurm_gres_count("gpus:4", "gpu"), 0); /* another name */
    assert_int_equal(prov_slurm_gres_count("gpu", "gpu"), 1);
    assert_int_equal(prov_slurm_gres_count("", "gpu"), 0);
    assert_int_equal(prov_slurm_gres_count(NULL, "gpu"), 0);
}

static void a_node_record_maps_to_allocatable_labels_and_readiness(void **state)
{
    (void)state;
    node_info_t ni;
    memset(&ni, 0, sizeof(ni));
    ni.name = "od1";
    ni.node_addr = "10.0.0.1";
    ni.cpus = 8;
    ni.real_memory = 65536;
    ni.gres = "tpu:4";
    ni.features = "tpu-v6e,on-demand";
    ni.node_state = NODE_STATE_IDLE;
    struct prov_slurm_node n;
    prov_slurm_node_from_info(&ni, &n);
    assert_string_equal(n.name, "od1");
    assert_string_equal(n.addr, "10.0.0.1");
    assert_int_equal(n.cpu_milli, 8000);
    assert_int_equal(n.memory_bytes, 65536LL << 20);
    assert_int_equal(n.tpu, 4);
    assert_int_equal(n.gpu, 0);
    assert_int_equal(n.n_features, 2);
    assert_string_equal(n.features[0], "tpu-v6e");
    assert_string_equal(n.features[1], "on-demand");
    assert_true(n.ready);
    assert_false(n.cloud);
    assert_null(n.reason);
    prov_slurm_node_release(&n);
}

static void drained_down_and_powered_down_nodes_are_not_ready(void **state)
{
    (void)state;
    node_info_t ni;
    memset(&ni, 0, sizeof(ni));
    ni.name = "n";
    ni.reason = "maintenance";
    const uint32_t not_ready[] = {NODE_STATE_DOWN, NODE_STATE_IDLE | NODE_STATE_DRAIN,
                                  NODE_STATE_ALLOCATED | NODE_STATE_DRAIN,
                                  NODE_STATE_IDLE | NODE_STATE_NO_RESPOND,
                                  NODE_STATE_IDLE | NODE_STATE_FAIL,
                                  NODE_STATE_IDLE | NODE_STATE_CLOUD | NODE_STATE_POWERED_DOWN,
                                  NODE_STATE_UNKNOWN};
    for (size_t i = 0; i < sizeof(not_ready) / sizeof(not_ready[0]); i++) {
        ni.node_state = not_ready[i];
        struct prov_slurm_node n;
        prov_slurm_node_from_info(&ni, &n);
        assert_false(n.ready);
        assert_string_equal(n.addr, "n"); /* no NodeAddr: the name */
        assert_string_equal(n.reason, "maintenance");
        prov_slurm_node_release(&n);
    }
    ni.node_state = NODE_STATE_IDLE | NODE_STATE_CLOUD | NODE_STATE_POWERED_DOWN;
    struct prov_slurm_node n;
    prov_slurm_node_from_info(&ni, &n);
    assert_true(n.cloud && n.powered_down);
    prov_slurm_node_release(&n);
    ni.node_state = NODE_STATE_MIXED | NODE_STATE_CLOUD; /* powered up, partly used */
    prov_slurm_node_from_info(&ni, &n);
    assert_true(n.ready && n.cloud && !n.powered_down);
    prov_slurm_node_release(&n);
}

/* The reader never blocks: the first get says "not read yet" (1), a later
 * one the read's result; here no configuration (a read that fails at once). */
static void reader_answers_without_blocking(void **state)
{
    (void)state;
    setenv("SLURM_CONF", "/nonexistent/slurm.conf", 1);
    struct prov_slurm_reader *r = prov_slurm_reader_new();
    struct prov_slurm_node *nodes = NULL;
    size_t n = 0;
    char err[512] = "";
    int rc = prov_slurm_reader_get(r, "on-demand", &nodes, &n, err, sizeof(err));
    assert_true(rc == 1 || rc == CU_EIO); /* the thread may already have read */
    for (int i = 0; i < 500 && rc == 1; i++) { /* its thread reads at once */
        usleep(10000);
        rc = prov_slurm_reader_get(r, "on-demand", &nodes, &n, err, sizeof(err));
    }
    assert_int_equal(rc, CU_EIO);
    assert_null(nodes);
    assert_int_equal(n, 0);
    assert_non_null(strstr(err, "cannot read the Slurm configuration /nonexistent/slurm.conf"));
    prov_slurm_reader_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gres_counts_sum_types_and_ignore_suffixes),
        cmocka_unit_test(a_node_record_maps_to_allocatable_labels_and_readiness),
        cmocka_unit_test(drained_down_and_powered_down_nodes_are_not_ready),
        cmocka_unit_test(reader_answers_without_blocking),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
