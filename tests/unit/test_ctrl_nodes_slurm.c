/* Unit tests: a Slurm node as a Node of a NodePool of provider slurm
 * (nodes_slurm_node_json, ctrl/nodes/slurmpool.c; docs/slurm.md): GRES
 * counts become allocatable google.com/tpu / nvidia.com/gpu, features
 * become labels, a drained node is NotReady and unschedulable, and the
 * Ready condition keeps its transition time while it holds. The libslurm
 * side is tested against a real Slurm by tests/e2e/t7010-slurm-pool-jobs.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/meta.h"
#include "ctrl/nodes/nodes.h"
#include "provider/slurm.h"
#include "util/diag.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static void pool_of(struct prov_pool *p, const char *labels_json)
{
    json_t *obj = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:{s:s},s:{s:o}}}", "apiVersion",
                            "cueue.dev/v1alpha1", "kind", "NodePool", "metadata", "name", "od",
                            "uid", "u1", "spec", "provider", "slurm", "slurm", "partition",
                            "on-demand", "config", "labels", json_loads(labels_json, 0, NULL));
    struct diag d;
    diag_init(&d);
    assert_int_equal(prov_pool_from_json(obj, p, &d), 0);
    assert_null(p->machine);
    assert_string_equal(p->slurm_partition, "on-demand");
    diag_release(&d);
    json_decref(obj);
}

static struct prov_slurm_node node(const char *name, bool ready, int64_t tpu, int64_t gpu)
{
    static char *feats[] = {"tpu-v6e", "on-demand", "bad feature!"};
    struct prov_slurm_node n = {0};
    n.name = (char *)name;
    n.addr = "10.0.0.7";
    n.cpu_milli = 8000;
    n.memory_bytes = 65536LL << 20;
    n.tpu = tpu;
    n.gpu = gpu;
    n.features = feats;
    n.n_features = 3;
    n.ready = ready;
    n.state = ready ? "idle" : "drained";
    n.reason = ready ? NULL : "maintenance";
    return n;
}

static void gres_features_and_pool_labels(void **state)
{
    (void)state;
    struct prov_pool p;
    pool_of(&p, "{\"cloud.google.com/gke-tpu-topology\": \"4x4\"}");
    struct prov_slurm_node sn = node("od1", true, 4, 0);
    json_t *n = nodes_slurm_node_json(&p, &sn, NULL, 1000);
    assert_string_equal(api_name(n), "od1");
    assert_string_equal(JX_STR(n, "status", "allocatable", "cpu"), "8");
    assert_string_equal(JX_STR(n, "status", "allocatable", "memory"), "67108864Ki");
    assert_string_equal(JX_STR(n, "status", "allocatable", "google.com/tpu"), "4");
    assert_null(JX_GET(n, "status", "allocatable", "nvidia.com/gpu"));
    assert_string_equal(api_label(n, "feature.slurm.cueue.dev/tpu-v6e"), "true");
    assert_string_equal(api_label(n, "feature.slurm.cueue.dev/on-demand"), "true");
    assert_int_equal(json_object_size(JX_GET(n, "metadata", "labels")), 6); /* bad one left out */
    assert_string_equal(api_label(n, "cloud.google.com/gke-nodepool"), "od");
    assert_string_equal(api_label(n, "cloud.google.com/gke-tpu-topology"), "4x4");
    assert_string_equal(api_label(n, "slurm.cueue.dev/partition"), "on-demand");
    assert_string_equal(api_label(n, "kubernetes.io/hostname"), "od1");
    assert_string_equal(JX_STR(n, "spec", "providerID"), "slurm://on-demand/od1");
    assert_null(JX_GET(n, "spec", "unschedulable"));
    assert_true(api_cond_is_true(n, "Ready"));
    assert_string_equal(JX_STR(json_array_get(JX_GET(n, "status", "addresses"), 0), "address"),
                        "10.0.0.7");
    json_decref(n);
    sn = node("gpu1", true, 0, 8);
    n = nodes_slurm_node_json(&p, &sn, NULL, 1000);
    assert_string_equal(JX_STR(n, "status", "allocatable", "nvidia.com/gpu"), "8");
    assert_null(JX_GET(n, "status", "allocatable", "google.com/tpu"));
    json_decref(n);
    prov_pool_release(&p);
}

static void drained_node_is_not_ready_and_unschedulable(void **state)
{
    (void)state;
    struct prov_pool p;
    pool_of(&p, "{}");
    struct prov_slurm_node sn = node("od3", false, 4, 0);
    json_t *n = nodes_slurm_node_json(&p, &sn, NULL, 1000);
    assert_true(json_is_true(JX_GET(n, "spec", "unschedulable")));
    assert_false(api_cond_is_true(n, "Ready"));
    json_t *c = json_array_get(JX_GET(n, "status", "conditions"), 0);
    assert_string_equal(JX_STR(c, "reason"), "SlurmNodeNotReady");
    assert_string_equal(JX_STR(c, "message"), "Slurm node od3 is drained: maintenance");
    /* the transition time stays while the status does, and moves with it */
    json_t *later = nodes_slurm_node_json(&p, &sn, n, 99000000);
    assert_string_equal(JX_STR(json_array_get(JX_GET(later, "status", "conditions"), 0),
                               "lastTransitionTime"),
                        JX_STR(c, "lastTransitionTime"));
    sn = node("od3", true, 4, 0);
    json_t *back = nodes_slurm_node_json(&p, &sn, later, 99000000);
    assert_string_not_equal(JX_STR(json_array_get(JX_GET(back, "status", "conditions"), 0),
                                   "lastTransitionTime"),
                            JX_STR(c, "lastTransitionTime"));
    assert_null(JX_GET(back, "spec", "unschedulable"));
    json_decref(back);
    json_decref(later);
    json_decref(n);
    prov_pool_release(&p);
}

static void a_slurm_pool_needs_its_partition(void **state)
{
    (void)state;
    json_t *obj = json_pack("{s:{s:s},s:{s:s}}", "metadata", "name", "p", "spec", "provider",
                            "slurm");
    struct prov_pool p;
    struct diag d;
    diag_init(&d);
    assert_int_equal(prov_pool_from_json(obj, &p, &d), CU_EINVAL);
    char *msg = diag_summary(&d);
    assert_non_null(strstr(msg, "spec.slurm.partition"));
    xfree(msg);
    diag_release(&d);
    json_decref(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(gres_features_and_pool_labels),
        cmocka_unit_test(drained_node_is_not_ready_and_unschedulable),
        cmocka_unit_test(a_slurm_pool_needs_its_partition),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
