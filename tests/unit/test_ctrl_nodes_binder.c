/* Unit tests: the binder (kube-scheduler's filters, messages, choice). */
#include "test_ctrl_nodes_fixture.h"

/* 3 n2-standard-16 nodes plus one fixed single-chip TPU node. */
static void cluster(struct nfx *f)
{
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("default-pool", "n2-standard-16", json_pack("{s:i}", "initialNodeCount", 3)));
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("tpu1", "ct6e-standard-1t", json_pack("{s:i}", "initialNodeCount", 1)));
    nfx_step(f);
}

static json_t *pod_get(struct nfx *f, const char *name)
{
    return nfx_get(f, KIND_POD, "default", name);
}

static const char *sched_msg(struct nfx *f, const char *name, char buf[512])
{
    json_t *p = pod_get(f, name);
    snprintf(buf, 512, "%s", jx_or_empty(JX_STR(api_cond_get(p, "PodScheduled"), "message")));
    json_decref(p);
    return buf;
}

static void test_unschedulable_message_reads_like_kubernetes(void **state)
{
    struct nfx *f = *state;
    cluster(f);
    json_t *p = nfx_pod("default", "tpu4", "1", "1Gi", 4);
    JX_SET_NEW(p, json_pack("{s:s}", "cloud.google.com/gke-tpu-accelerator", "tpu-v6e-slice"),
               "spec", "nodeSelector");
    JX_SET_NEW(p, json_pack("[{s:s,s:s}]", "key", "google.com/tpu", "operator", "Exists"),
               "spec", "tolerations");
    nfx_create(f, KIND_POD, "default", p);
    nfx_create(f, KIND_POD, "default", nfx_pod("default", "huge", "20", "1Gi", 0));
    nfx_step(f);
    char buf[512];
    assert_string_equal(sched_msg(f, "tpu4", buf),
                        "0/4 nodes are available: 1 Insufficient google.com/tpu, 3 node(s) "
                        "didn't match Pod's node affinity/selector.");
    assert_string_equal(sched_msg(f, "huge", buf),
                        "0/4 nodes are available: 1 node(s) had untolerated taint "
                        "{google.com/tpu: present}, 3 Insufficient cpu.");
    json_t *o = pod_get(f, "huge");
    assert_string_equal(nfx_cond_reason(o, "PodScheduled"), "Unschedulable");
    assert_null(JX_STR(o, "spec", "nodeName"));
    json_decref(o);
    assert_true(nfx_has_event(f, "huge", "FailedScheduling"));
}

static void test_most_allocated_node_first(void **state)
{
    struct nfx *f = *state;
    cluster(f);
    nfx_create(f, KIND_POD, "default", nfx_pod("default", "a", "4", "4Gi", 0));
    nfx_step(f);
    nfx_create(f, KIND_POD, "default", nfx_pod("default", "b", "4", "4Gi", 0));
    nfx_create(f, KIND_POD, "default", nfx_pod("default", "c", "10", "4Gi", 0));
    nfx_step(f);
    json_t *a = pod_get(f, "a"), *b = pod_get(f, "b"), *c = pod_get(f, "c");
    const char *na = JX_STR(a, "spec", "nodeName"), *nb = JX_STR(b, "spec", "nodeName"),
               *nc = JX_STR(c, "spec", "nodeName");
    assert_non_null(na);
    assert_non_null(nb);
    assert_non_null(nc);
    assert_string_equal(na, nb); /* packed onto the fuller node */
    assert_string_not_equal(na, nc); /* 4+4+10 > 15.89 CPU */
    assert_true(api_cond_is_true(b, "PodScheduled"));
    json_decref(a);
    json_decref(b);
    json_decref(c);
}

static void test_requests_of_finished_pods_are_free_again(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("one", "e2-standard-4", json_pack("{s:i}", "initialNodeCount", 1)));
    nfx_step(f);
    nfx_create(f, KIND_POD, "default", nfx_pod("default", "first", "3", "1Gi", 0));
    nfx_step(f);
    nfx_create(f, KIND_POD, "default", nfx_pod("default", "second", "3", "1Gi", 0));
    nfx_step(f);
    json_t *s = pod_get(f, "second");
    assert_null(JX_STR(s, "spec", "nodeName"));
    json_decref(s);
    json_t *first = pod_get(f, "first");
    json_t *cp = json_deep_copy(first);
    JX_SET_NEW(cp, json_string("Succeeded"), "status", "phase");
    assert_int_equal(store_update(f->s, KIND_POD, "default", cp, STORE_UPDATE_STATUS, NULL), 0);
    json_decref(cp);
    json_decref(first);
    nfx_step(f);
    s = pod_get(f, "second");
    assert_non_null(JX_STR(s, "spec", "nodeName"));
    json_decref(s);
}

static void test_gates_and_required_affinity(void **state)
{
    struct nfx *f = *state;
    cluster(f);
    json_t *gated = nfx_pod("default", "gated", "1", "1Gi", 0);
    JX_SET_NEW(gated, json_pack("[{s:s}]", "name", "kueue.x-k8s.io/admission"), "spec",
               "schedulingGates");
    nfx_create(f, KIND_POD, "default", gated);
    json_t *aff = nfx_pod("default", "aff", "1", "1Gi", 0);
    JX_SET_NEW(aff, json_pack("{s:{s:{s:[{s:[{s:s,s:s,s:[s]}]}]}}}", "nodeAffinity",
                              "requiredDuringSchedulingIgnoredDuringExecution",
                              "nodeSelectorTerms", "matchExpressions", "key",
                              "cloud.google.com/gke-nodepool", "operator", "NotIn", "values",
                              "default-pool"),
               "spec", "affinity");
    nfx_create(f, KIND_POD, "default", aff);
    nfx_step(f);
    json_t *g = pod_get(f, "gated");
    assert_null(JX_STR(g, "spec", "nodeName"));
    assert_null(api_cond_get(g, "PodScheduled"));
    json_decref(g);
    char buf[512];
    assert_string_equal(sched_msg(f, "aff", buf),
                        "0/4 nodes are available: 1 node(s) had untolerated taint "
                        "{google.com/tpu: present}, 3 node(s) didn't match Pod's node "
                        "affinity/selector.");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_unschedulable_message_reads_like_kubernetes,
                                        nfx_setup, nfx_teardown),
        cmocka_unit_test_setup_teardown(test_most_allocated_node_first, nfx_setup, nfx_teardown),
        cmocka_unit_test_setup_teardown(test_requests_of_finished_pods_are_free_again, nfx_setup,
                                        nfx_teardown),
        cmocka_unit_test_setup_teardown(test_gates_and_required_affinity, nfx_setup,
                                        nfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
