/* Unit tests for the scenario format (src/sim/scenario.c): defaults, every
 * spec field, actions sorted by time, capacity windows, and strict decoding
 * errors that name the file and the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sim/sim-int.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

static int parse(const char *text, struct sim_scenario *sc, char **err)
{
    *err = NULL;
    return sim_scenario_parse(text, strlen(text), "s.yaml", sc, err);
}

static void test_manifests_only_get_every_default(void **state)
{
    (void)state;
    struct sim_scenario sc;
    char *err;
    assert_int_equal(parse("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
                           "metadata: {name: a}\n---\napiVersion: v1\nkind: Namespace\n"
                           "metadata: {name: n}\n", &sc, &err), 0);
    assert_int_equal(sc.n_objects, 2);
    assert_string_equal(sc.objects[0].where, "document 1");
    assert_string_equal(sc.objects[1].where, "document 2");
    assert_int_equal(sc.seed, 1);
    int64_t start;
    timefmt_parse(SIM_DEFAULT_START, &start);
    assert_int_equal(sc.start_ms, start);
    assert_string_equal(sc.class_label, SIM_DEFAULT_CLASS_LABEL);
    assert_int_equal(sc.default_runtime_ms, SIM_DEFAULT_RUNTIME_MS);
    assert_int_equal(sc.until_rel, -1);
    assert_true(sc.cfg.wait_for_pods_ready);
    assert_null(sc.expect);
    sim_scenario_release(&sc);
}

static const char full[] =
    "apiVersion: cueue.dev/v1alpha1\n"
    "kind: Scenario\n"
    "metadata: {name: full}\n"
    "spec:\n"
    "  seed: 42\n"
    "  start: \"2027-03-01T10:00:00Z\"\n"
    "  classLabel: team\n"
    "  defaultRuntime: 90s\n"
    "  honorTerminationGrace: true\n"
    "  until: 2h\n"
    "  controller:\n"
    "    waitForPodsReady: {enable: false, timeout: 5m,\n"
    "      requeuingStrategy: {backoffBaseSeconds: 10, backoffLimitCount: 3}}\n"
    "    scaleDownUnneededTime: 1m\n"
    "    provisioningMaxWait: 1d\n"
    "    fairSharing: {enable: true, preemptionStrategies: [LessThanInitialShare]}\n"
    "    admitOneHeadPerClusterQueue: true\n"
    "    quotaCheckStrategy: IgnoreUndeclared\n"
    "  capacity:\n"
    "    dws: {provisioningDelay: 2m, stockouts: [{from: 0s, to: 1h}, {from: 3h}],\n"
    "          revocations: [{at: 5h, nodes: 4}, {at: 6h}]}\n"
    "  objects:\n"
    "    - {apiVersion: kueue.x-k8s.io/v1beta1, kind: ResourceFlavor, metadata: {name: f}}\n"
    "  actions:\n"
    "    - {at: 1m, delete: {kind: Job, name: a}}\n"
    "    - {at: 10s, runFor: 30s, repeat: {count: 3, every: 1s},\n"
    "       apply: {apiVersion: batch/v1, kind: Job, metadata: {name: \"j-${i}\"}}}\n"
    "    - {at: 10s, patch: {kind: cq, name: cq, merge: {spec: {cohort: x}}}}\n"
    "    - {at: 2m, scale: {kind: RayJob, namespace: ml, name: r, workerGroup: tpu, replicas: 2}}\n"
    "expect:\n"
    "  - {event: Admitted}\n"
    "---\n"
    "apiVersion: v1\nkind: Namespace\nmetadata: {name: ml}\n";

static void test_every_field_is_decoded(void **state)
{
    (void)state;
    struct sim_scenario sc;
    char *err;
    assert_int_equal(parse(full, &sc, &err), 0);
    assert_string_equal(sc.name, "full");
    assert_int_equal(sc.seed, 42);
    int64_t start;
    timefmt_parse("2027-03-01T10:00:00Z", &start);
    assert_int_equal(sc.start_ms, start);
    assert_string_equal(sc.class_label, "team");
    assert_int_equal(sc.default_runtime_ms, 90000);
    assert_true(sc.honor_grace);
    assert_int_equal(sc.until_rel, 7200000);
    assert_false(sc.cfg.wait_for_pods_ready);
    assert_int_equal(sc.cfg.pods_ready_timeout_ms, 300000);
    assert_int_equal(sc.cfg.requeue_backoff_base_ms, 10000);
    assert_int_equal(sc.cfg.requeue_backoff_limit, 3);
    assert_int_equal(sc.cfg.scale_down_unneeded_ms, 60000);
    assert_int_equal(sc.cfg.provisioning_max_wait_ms, 86400000);
    assert_true(sc.cfg.engine.fair_sharing);
    assert_int_equal(sc.cfg.engine.n_fs_strategies, 1);
    assert_int_equal(sc.cfg.engine.fs_strategies[0], FS_LESS_THAN_INITIAL_SHARE);
    assert_true(sc.cfg.engine.kueue_one_head_per_cq);
    assert_true(sc.cfg.engine.ignore_undeclared_resources);
    /* capacity */
    assert_int_equal(sc.n_pools, 1);
    assert_string_equal(sc.pools[0].name, "dws");
    assert_int_equal(sc.pools[0].delay_ms, 120000);
    assert_int_equal(sc.pools[0].n_stockouts, 2);
    assert_int_equal(sc.pools[0].stockouts[0].to_ms, 3600000);
    assert_true(sc.pools[0].stockouts[1].to_ms == PROV_NEVER);
    assert_int_equal(sc.pools[0].n_revocations, 2);
    assert_int_equal(sc.pools[0].revocations[0].n_nodes, 4);
    assert_int_equal(sc.pools[0].revocations[1].n_nodes, 0);
    /* objects: spec.objects first, then documents */
    assert_int_equal(sc.n_objects, 2);
    assert_string_equal(sc.objects[0].where, "spec.objects[0]");
    assert_string_equal(sc.objects[1].where, "document 2");
    /* actions sorted by time, file order among equals */
    assert_int_equal(sc.n_actions, 4);
    assert_int_equal(sc.actions[0].type, SIM_ACT_APPLY);
    assert_int_equal(sc.actions[0].at_rel, 10000);
    assert_int_equal(sc.actions[0].repeat, 3);
    assert_int_equal(sc.actions[0].every_ms, 1000);
    assert_int_equal(sc.actions[0].run_for_ms, 30000);
    assert_string_equal(sc.actions[0].where, "spec.actions[1]");
    assert_int_equal(sc.actions[1].type, SIM_ACT_PATCH);
    assert_int_equal(sc.actions[1].kind->id, KIND_CLUSTERQUEUE);
    assert_null(sc.actions[1].ns);
    assert_int_equal(sc.actions[2].type, SIM_ACT_DELETE);
    assert_string_equal(sc.actions[2].ns, "default");
    assert_int_equal(sc.actions[3].type, SIM_ACT_SCALE);
    assert_string_equal(sc.actions[3].group, "tpu");
    assert_int_equal(sc.actions[3].size, 2);
    assert_string_equal(sc.actions[3].ns, "ml");
    assert_int_equal(json_array_size(sc.expect), 1);
    sim_scenario_release(&sc);
}

static void expect_error(const char *text, const char *const *needles)
{
    struct sim_scenario sc;
    char *err;
    assert_true(parse(text, &sc, &err) < 0);
    assert_non_null(err);
    for (size_t i = 0; needles[i]; i++) {
        if (!strstr(err, needles[i]))
            fail_msg("missing \"%s\" in:\n%s", needles[i], err);
    }
    xfree(err);
}

static void test_errors_name_the_file_and_every_field(void **state)
{
    (void)state;
    static const char bad[] =
        "apiVersion: cueue.dev/v1alpha1\nkind: Scenario\n"
        "spec:\n"
        "  sead: 1\n"
        "  start: yesterday\n"
        "  capacity: {p: {stockouts: [{from: 1h, to: 30m}], revocations: [{nodes: -1}]}}\n"
        "  actions:\n"
        "    - {at: soon, apply: {apiVersion: v1, kind: Pod}}\n"
        "    - {at: 1s}\n"
        "    - {at: 1s, delete: {kind: Gizmo, name: x}}\n"
        "    - {at: 1s, runFor: 3s, delete: {kind: ResourceFlavor, namespace: team, name: x}}\n"
        "    - {at: 1s, scale: {kind: Job, name: j}}\n";
    static const char *const needles[] = {
        "s.yaml: Scenario: ",
        "unknown field \"spec.sead\"",
        "spec.start: Invalid value: \"yesterday\"",
        "spec.capacity.p.stockouts[0].to: Invalid value: \"30m\": must be after `from`",
        "spec.capacity.p.revocations[0].at: Required value",
        "spec.capacity.p.revocations[0].nodes: Invalid value: -1",
        "spec.actions[0].at: Invalid value: \"soon\"",
        "spec.actions[1]: Required value: exactly one of apply, delete, patch, scale",
        "spec.actions[2].delete.kind: Unsupported value: \"Gizmo\"",
        "spec.actions[3].delete.namespace: Forbidden: ResourceFlavor is cluster-scoped",
        "spec.actions[3].runFor: Forbidden: only with apply",
        "spec.actions[4].scale: Required value: exactly one of parallelism",
        NULL,
    };
    expect_error(bad, needles);
}

static void test_unknown_kinds_and_syntax_errors(void **state)
{
    (void)state;
    static const char *const kind[] = {"s.yaml: document 1", "Gadget", NULL};
    expect_error("apiVersion: v1\nkind: Gadget\nmetadata: {name: x}\n", kind);
    static const char *const syntax[] = {"s.yaml", "line", NULL};
    expect_error("apiVersion: v1\nkind: [\n", syntax);
    static const char *const two[] = {"at most one Scenario", NULL};
    expect_error("apiVersion: cueue.dev/v1alpha1\nkind: Scenario\n---\n"
                 "apiVersion: cueue.dev/v1alpha1\nkind: Scenario\n", two);
}

static void test_missing_file_is_reported(void **state)
{
    (void)state;
    struct sim_scenario sc;
    char *err = NULL;
    assert_true(sim_scenario_load("/nonexistent/x.yaml", &sc, &err) < 0);
    assert_non_null(strstr(err, "/nonexistent/x.yaml"));
    xfree(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manifests_only_get_every_default),
        cmocka_unit_test(test_every_field_is_decoded),
        cmocka_unit_test(test_errors_name_the_file_and_every_field),
        cmocka_unit_test(test_unknown_kinds_and_syntax_errors),
        cmocka_unit_test(test_missing_file_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
