/* Unit tests: ProvisioningRequest fulfilment (GKE queued provisioning and
 * the OSS classes), through store objects and virtual time. */
#include "test_ctrl_nodes_fixture.h"

#define QUEUED "queued-provisioning.gke.io"

/* The PodTemplate Kueue makes for the seed's tpu-group pod set. */
static void tpu_template(struct nfx *f, const char *name, const char *pool)
{
    json_t *pod = nfx_pod("default", "x", "8", "16Gi", 4);
    nfx_tpu_placement(pod, pool);
    json_t *t = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:{},s:O}}", "apiVersion", "v1", "kind",
                          "PodTemplate", "metadata", "name", name, "namespace", "default",
                          "template", "metadata", "spec", json_object_get(pod, "spec"));
    json_decref(pod);
    nfx_create(f, KIND_PODTEMPLATE, "default", t);
}

static void provreq(struct nfx *f, const char *name, const char *cls, const char *tmpl,
                    int count, json_t *params)
{
    json_t *pr = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:[{s:{s:s},s:i}]}}", "apiVersion",
                           "autoscaling.x-k8s.io/v1", "kind", "ProvisioningRequest", "metadata",
                           "name", name, "namespace", "default", "spec",
                           "provisioningClassName", cls, "podSets", "podTemplateRef", "name",
                           tmpl, "count", count);
    if (params)
        json_object_set_new(json_object_get(pr, "spec"), "parameters", params);
    nfx_create(f, KIND_PROVISIONINGREQUEST, "default", pr);
}

/* Pods consuming the request (they bind and keep its nodes busy). */
static void consumers(struct nfx *f, const char *pr, int n)
{
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "%s-w%d", pr, i);
        json_t *p = nfx_pod("default", name, "8", "16Gi", 4);
        nfx_tpu_placement(p, NULL);
        api_set_annotation(p, "autoscaling.x-k8s.io/consume-provisioning-request", pr);
        api_set_annotation(p, "autoscaling.x-k8s.io/provisioning-class-name", QUEUED);
        nfx_create(f, KIND_POD, "default", p);
    }
}

static json_t *get_pr(struct nfx *f, const char *name)
{
    return nfx_get(f, KIND_PROVISIONINGREQUEST, "default", name);
}

static void assert_cond(struct nfx *f, const char *pr, const char *type, const char *status,
                        const char *reason)
{
    json_t *o = get_pr(f, pr);
    json_t *c = api_cond_get(o, type);
    if (!c)
        fail_msg("%s has no %s condition", pr, type);
    assert_string_equal(JX_STR(c, "status"), status);
    if (reason)
        assert_string_equal(JX_STR(c, "reason"), reason);
    json_decref(o);
}

static void test_queued_request_provisions_all_nodes_at_once(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL, nfx_dws_pool("dws-pool", "Delayed", 300));
    tpu_template(f, "ppt-pr-1-tpu-group", "dws-pool");
    provreq(f, "pr-1", QUEUED, "ppt-pr-1-tpu-group", 4, NULL);
    nfx_step(f);
    assert_cond(f, "pr-1", "Accepted", "True", "SuccessfullyQueued");
    assert_cond(f, "pr-1", "Provisioned", "False", NULL);
    json_t *o = get_pr(f, "pr-1");
    assert_string_equal(JX_STR(api_cond_get(o, "Accepted"), "message"),
                        "Provisioning Request was successfully queued.");
    assert_string_equal(JX_STR(o, "status", "provisioningClassDetails", "NodePoolName"),
                        "dws-pool");
    json_decref(o);
    nfx_advance(f, 299 * SEC);
    assert_int_equal(nfx_count_nodes(f, "dws-pool"), 0);
    nfx_advance(f, 1 * SEC);
    assert_cond(f, "pr-1", "Provisioned", "True", "Provisioned");
    json_t *nodes = nfx_pool_nodes(f, "dws-pool");
    assert_int_equal(json_array_size(nodes), 4);
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n) {
        assert_string_equal(api_label(n, "autoscaling.gke.io/provisioning-request"), "pr-1");
        assert_string_equal(api_label(n, "cloud.google.com/gke-queued"), "true");
        assert_string_equal(api_label(n, "cloud.google.com/gke-flex-start"), "true");
        assert_string_equal(api_label(n, "cloud.google.com/gke-provisioning"), "flex-start");
        assert_int_equal(json_array_size(JX_GET(n, "spec", "taints")), 2);
    }
    json_decref(nodes);
    json_t *up = nfx_traces(f, "NodesScaledUp");
    assert_int_equal(json_array_size(up), 1); /* all at once */
    assert_int_equal(JX_INT(json_array_get(up, 0), 0, "count"), 4);
    assert_string_equal(JX_STR(json_array_get(up, 0), "provisioningRequest"), "default/pr-1");
    json_decref(up);
    json_t *upd = nfx_traces(f, "ProvisioningRequestUpdated");
    assert_int_equal(json_array_size(upd), 3); /* Accepted, Provisioned=False, Provisioned=True */
    json_t *last = json_array_get(upd, 2);
    assert_string_equal(JX_STR(last, "provisioningRequest"), "default/pr-1");
    assert_string_equal(JX_STR(last, "condition"), "Provisioned");
    assert_string_equal(JX_STR(last, "status"), "True");
    json_decref(upd);
}

static void test_consumer_pods_bind_to_the_requests_nodes(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL, nfx_ondemand_pool("on-demand-pool"));
    nfx_create(f, KIND_NODEPOOL, NULL, nfx_dws_pool("dws-pool", "Immediate", 0));
    tpu_template(f, "t", "dws-pool");
    provreq(f, "pr-1", QUEUED, "t", 4, NULL);
    nfx_step(f);
    assert_cond(f, "pr-1", "Provisioned", "True", "Provisioned");
    consumers(f, "pr-1", 4);
    nfx_step(f);
    for (int i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof(name), "pr-1-w%d", i);
        json_t *p = nfx_get(f, KIND_POD, "default", name);
        json_t *node = nfx_get(f, KIND_NODE, NULL, JX_STR(p, "spec", "nodeName"));
        assert_non_null(node);
        assert_string_equal(api_label(node, "cloud.google.com/gke-nodepool"), "dws-pool");
        json_decref(node);
        json_decref(p);
    }
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 0);
}

static void test_booking_expires_then_idle_nodes_go(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL, nfx_dws_pool("dws-pool", "Immediate", 0));
    tpu_template(f, "t", "dws-pool");
    provreq(f, "pr-1", QUEUED, "t", 4, NULL);
    nfx_step(f);
    assert_cond(f, "pr-1", "Provisioned", "True", "Provisioned");
    nfx_advance(f, 10 * MIN - SEC);
    json_t *o = get_pr(f, "pr-1");
    assert_null(api_cond_get(o, "BookingExpired"));
    json_decref(o);
    assert_int_equal(nfx_count_nodes(f, "dws-pool"), 4); /* booked: not idle */
    nfx_advance(f, SEC);
    assert_cond(f, "pr-1", "BookingExpired", "True", "BookingExpired");
    nfx_advance(f, 9 * MIN);
    assert_int_equal(nfx_count_nodes(f, "dws-pool"), 4);
    nfx_advance(f, 2 * MIN);
    assert_int_equal(nfx_count_nodes(f, "dws-pool"), 0);
}

static void test_stockout_fails_after_the_maximum_wait(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL, nfx_dws_pool("dws-pool", "Stockout", 0));
    tpu_template(f, "t", "dws-pool");
    provreq(f, "pr-1", QUEUED, "t", 4, NULL);
    nfx_step(f);
    assert_cond(f, "pr-1", "Accepted", "True", "SuccessfullyQueued");
    json_t *o = get_pr(f, "pr-1");
    assert_non_null(strstr(JX_STR(api_cond_get(o, "Provisioned"), "message"), "no capacity"));
    json_decref(o);
    nfx_advance(f, 7 * DAY - MIN);
    o = get_pr(f, "pr-1");
    assert_null(api_cond_get(o, "Failed"));
    json_decref(o);
    nfx_advance(f, MIN);
    assert_cond(f, "pr-1", "Failed", "True", "WaitTimeExceeded");
    assert_int_equal(nfx_count_nodes(f, "dws-pool"), 0);
}

static void test_valid_until_seconds_limits_the_wait(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL, nfx_dws_pool("dws-pool", "Delayed", 3600));
    tpu_template(f, "t", "dws-pool");
    provreq(f, "pr-1", QUEUED, "t", 4, json_pack("{s:s}", "ValidUntilSeconds", "600"));
    nfx_advance(f, 600 * SEC);
    assert_cond(f, "pr-1", "Failed", "True", "WaitTimeExceeded");
    json_t *o = get_pr(f, "pr-1");
    assert_string_equal(JX_STR(api_cond_get(o, "Failed"), "message"),
                        "Provisioning Request could not provision queued instances in the "
                        "allocated time.");
    json_decref(o);
    nfx_advance(f, 2 * 3600 * SEC); /* the dropped request never brings nodes */
    assert_int_equal(nfx_count_nodes(f, "dws-pool"), 0);
}

static void test_provider_revocation_marks_capacity_revoked(void **state)
{
    struct nfx *f = nfx_new();
    struct prov_sim_revocation rev = {NFX_START_MS + 3600 * SEC, 0};
    struct prov_sim_pool sp = {"dws-pool", 0, NULL, 0, &rev, 1};
    f->prov = prov_sim_new(&sp, 1);
    nfx_start(f);
    *state = f;
    nfx_create(f, KIND_NODEPOOL, NULL, nfx_dws_pool("dws-pool", "Immediate", 0));
    tpu_template(f, "t", "dws-pool");
    provreq(f, "pr-1", QUEUED, "t", 4, NULL);
    nfx_step(f);
    assert_cond(f, "pr-1", "Provisioned", "True", "Provisioned");
    consumers(f, "pr-1", 4);
    nfx_advance(f, 3600 * SEC - SEC);
    assert_int_equal(nfx_count_nodes(f, "dws-pool"), 4);
    nfx_advance(f, SEC);
    assert_cond(f, "pr-1", "CapacityRevoked", "True", "CapacityRevoked");
    assert_int_equal(nfx_count_nodes(f, "dws-pool"), 0);
    json_t *down = nfx_traces(f, "NodesScaledDown");
    assert_int_equal(json_array_size(down), 1);
    assert_string_equal(JX_STR(json_array_get(down, 0), "reason"), "CapacityRevoked");
    json_decref(down);
}

static void test_max_run_duration_revokes(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL, nfx_dws_pool("dws-pool", "Immediate", 0));
    tpu_template(f, "t", "dws-pool");
    provreq(f, "pr-1", QUEUED, "t", 4, json_pack("{s:s}", "maxRunDurationSeconds", "7200"));
    nfx_step(f);
    consumers(f, "pr-1", 4);
    nfx_advance(f, 7200 * SEC - SEC);
    assert_int_equal(nfx_count_nodes(f, "dws-pool"), 4);
    nfx_advance(f, SEC);
    assert_cond(f, "pr-1", "CapacityRevoked", "True", "CapacityRevoked");
    assert_int_equal(nfx_count_nodes(f, "dws-pool"), 0);
}

static void test_deleted_request_drops_its_pending_capacity(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL, nfx_dws_pool("dws-pool", "Delayed", 300));
    tpu_template(f, "t", "dws-pool");
    provreq(f, "pr-1", QUEUED, "t", 4, NULL);
    nfx_advance(f, 100 * SEC);
    assert_int_equal(store_delete(f->s, KIND_PROVISIONINGREQUEST, "default", "pr-1", NULL, NULL),
                     0);
    nfx_advance(f, 600 * SEC);
    assert_int_equal(nfx_count_nodes(f, "dws-pool"), 0);
}

static void test_requests_that_cannot_be_served_fail_clearly(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL, nfx_dws_pool("dws-pool", "Immediate", 0));
    nfx_create(f, KIND_NODEPOOL, NULL, nfx_ondemand_pool("on-demand-pool"));
    tpu_template(f, "t", "dws-pool");
    tpu_template(f, "nopool", "no-such-pool");
    tpu_template(f, "plain", "on-demand-pool");
    provreq(f, "too-big", QUEUED, "t", 8, NULL); /* two slices, max one */
    provreq(f, "lost", QUEUED, "nopool", 4, NULL);
    provreq(f, "not-queued", QUEUED, "plain", 4, NULL);
    nfx_step(f);
    assert_cond(f, "too-big", "Failed", "True", "OutOfResources");
    assert_cond(f, "lost", "Failed", "True", "NoMatchingNodePool");
    assert_cond(f, "not-queued", "Failed", "True", "NoMatchingNodePool");
    json_t *o = get_pr(f, "not-queued");
    assert_non_null(strstr(JX_STR(api_cond_get(o, "Failed"), "message"),
                           "does not have queued provisioning enabled"));
    json_decref(o);
    assert_int_equal(nfx_count_nodes(f, "dws-pool"), 0);
}

static void test_missing_template_waits_then_fails(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL, nfx_dws_pool("dws-pool", "Immediate", 0));
    provreq(f, "early", QUEUED, "late-template", 4, NULL);
    provreq(f, "never", QUEUED, "missing", 4, NULL);
    nfx_step(f);
    json_t *o = get_pr(f, "early");
    assert_null(api_cond_get(o, "Accepted"));
    json_decref(o);
    tpu_template(f, "late-template", "dws-pool");
    nfx_step(f);
    assert_cond(f, "early", "Provisioned", "True", "Provisioned");
    nfx_advance(f, 61 * SEC);
    assert_cond(f, "never", "Failed", "True", "FailedToCreatePods");
}

static void test_check_capacity_and_best_effort_atomic(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL, nfx_ondemand_pool("on-demand-pool"));
    tpu_template(f, "t", "on-demand-pool");
    provreq(f, "check", "check-capacity.autoscaling.x-k8s.io", "t", 4, NULL);
    provreq(f, "check-once", "check-capacity.autoscaling.x-k8s.io", "t", 4,
            json_pack("{s:s}", "noRetry", "true"));
    nfx_step(f);
    assert_cond(f, "check", "Accepted", "True", "Accepted");
    assert_cond(f, "check", "Provisioned", "False", "CapacityIsNotFound");
    assert_cond(f, "check-once", "Failed", "True", "CapacityIsNotFound");
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 0); /* check-capacity never scales */
    provreq(f, "atomic", "best-effort-atomic-scale-up.autoscaling.x-k8s.io", "t", 4, NULL);
    nfx_step(f);
    assert_cond(f, "atomic", "Provisioned", "True", "CapacityIsProvisioned");
    assert_int_equal(nfx_count_nodes(f, "on-demand-pool"), 4);
    /* the capacity now exists: the retried check finds it */
    nfx_advance(f, 61 * SEC);
    assert_cond(f, "check", "Provisioned", "True", "CapacityIsFound");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_queued_request_provisions_all_nodes_at_once,
                                        nfx_setup, nfx_teardown),
        cmocka_unit_test_setup_teardown(test_consumer_pods_bind_to_the_requests_nodes, nfx_setup,
                                        nfx_teardown),
        cmocka_unit_test_setup_teardown(test_booking_expires_then_idle_nodes_go, nfx_setup,
                                        nfx_teardown),
        cmocka_unit_test_setup_teardown(test_stockout_fails_after_the_maximum_wait, nfx_setup,
                                        nfx_teardown),
        cmocka_unit_test_setup_teardown(test_valid_until_seconds_limits_the_wait, nfx_setup,
                                        nfx_teardown),
        cmocka_unit_test_teardown(test_provider_revocation_marks_capacity_revoked, nfx_teardown),
        cmocka_unit_test_setup_teardown(test_max_run_duration_revokes, nfx_setup, nfx_teardown),
        cmocka_unit_test_setup_teardown(test_deleted_request_drops_its_pending_capacity,
                                        nfx_setup, nfx_teardown),
        cmocka_unit_test_setup_teardown(test_requests_that_cannot_be_served_fail_clearly,
                                        nfx_setup, nfx_teardown),
        cmocka_unit_test_setup_teardown(test_missing_template_waits_then_fails, nfx_setup,
                                        nfx_teardown),
        cmocka_unit_test_setup_teardown(test_check_capacity_and_best_effort_atomic, nfx_setup,
                                        nfx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
