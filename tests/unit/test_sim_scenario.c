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
#include "util/sbuf.h"
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
    "       apply: {apiVersion: batch/v1, kind: Job, metadata: {name: \"j-${i}\"},\n"
    "               spec: {template: {spec: {restartPolicy: Never,\n"
    "                      containers: [{name: c, image: busybox}]}}}}}\n"
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

/* A patch action takes exactly one of the API's three formats, a
 * strategic merge patch for built-in kinds only (the API server answers
 * 415 for the others), a JSON patch as a list of operations. */
static void test_patch_action_errors_name_the_field(void **state)
{
    (void)state;
    static const char bad[] =
        "apiVersion: cueue.dev/v1alpha1\nkind: Scenario\n"
        "spec:\n"
        "  actions:\n"
        "    - {at: 1s, patch: {kind: ClusterQueue, name: cq}}\n"
        "    - {at: 1s, patch: {kind: ClusterQueue, name: cq, merge: {}, json: []}}\n"
        "    - {at: 1s, patch: {kind: ClusterQueue, name: cq, strategic: {spec: {}}}}\n"
        "    - {at: 1s, patch: {kind: Job, name: j, json: {op: add}}}\n";
    static const char *const needles[] = {
        "spec.actions[0].patch: Required value: exactly one of merge, strategic, json",
        "spec.actions[1].patch: Forbidden: exactly one of merge, strategic, json",
        "spec.actions[2].patch.strategic: Forbidden: a strategic merge patch applies to "
        "built-in kinds only",
        "spec.actions[3].patch.json: Invalid type",
        NULL,
    };
    expect_error(bad, needles);
}

/* The conditions action (what an external controller writes through the
 * status subresource) is decoded as strictly as the others: set is
 * required and not empty, each condition an object with a type and a
 * status True, False or Unknown. */
static void test_conditions_action_errors_name_the_field(void **state)
{
    (void)state;
    static const char bad[] =
        "apiVersion: cueue.dev/v1alpha1\nkind: Scenario\n"
        "spec:\n"
        "  actions:\n"
        "    - {at: 1s, conditions: {kind: Workload, namespace: ns, name: w}}\n"
        "    - {at: 1s, conditions: {kind: Workload, namespace: ns, name: w, set: []}}\n"
        "    - {at: 1s, conditions: {kind: Workload, namespace: ns, name: w, set: [\n"
        "        {type: Provisioned, status: Maybe}, {status: \"True\", why: x}, 3]}}\n";
    static const char *const needles[] = {
        "spec.actions[0].conditions.set: Required value",
        "spec.actions[1].conditions.set: Required value: at least one condition",
        "spec.actions[2].conditions.set[0].status: Unsupported value: \"Maybe\"",
        "spec.actions[2].conditions.set[1].type: Required value",
        "unknown field \"spec.actions[2].conditions.set[1].why\"",
        "spec.actions[2].conditions.set[2]: Invalid type: 3: expected object",
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
    static const char *const two[] = {"s.yaml: document 2: a second Scenario document (the "
                                      "first is document 1); a file holds at most one", NULL};
    expect_error("apiVersion: cueue.dev/v1alpha1\nkind: Scenario\n---\n"
                 "apiVersion: cueue.dev/v1alpha1\nkind: Scenario\n", two);
}

static void test_missing_file_is_reported(void **state)
{
    (void)state;
    struct sim_scenario sc;
    char *err = NULL;
    assert_true(sim_scenario_load("/nonexistent/x.yaml", &sc, &err) < 0);
    assert_string_equal(err, "/nonexistent/x.yaml: No such file or directory");
    xfree(err);
    /* a directory opens but is no scenario: said so, not "read error" */
    assert_true(sim_scenario_load("/", &sc, &err) < 0);
    assert_string_equal(err, "/: is a directory (a scenario is one YAML file)");
    xfree(err);
}

/* Regression: an empty file (or one of comments and separators) ran as an
 * empty scenario and printed a summary of nothing. */
static void test_a_file_without_documents_is_an_error(void **state)
{
    (void)state;
    static const char *const needles[] = {"s.yaml: no documents: a scenario is a Scenario "
                                          "document", NULL};
    expect_error("", needles);
    expect_error("# only a comment\n---\n---\n", needles);
}

/* Regression: a syntax error named the file twice ("g.bin: g.bin: yaml:"). */
static void test_syntax_errors_name_the_file_once(void **state)
{
    (void)state;
    struct sim_scenario sc;
    char *err;
    assert_true(parse("\xff\xfe binary", &sc, &err) < 0);
    assert_non_null(strstr(err, "s.yaml: yaml: line 1"));
    assert_null(strstr(err, "s.yaml: s.yaml"));
    xfree(err);
}

/* Regression: 1e300s and 99999999999d were "not negative" (an exponent is
 * now not a duration at all: the one parser, Go's grammar, has none). */
static void test_durations_too_large_say_so_with_the_limit(void **state)
{
    (void)state;
    static const char *const needles[] = {
        "spec.defaultRuntime: Invalid value: \"1e300s\": must be a duration such as",
        "spec.until: Invalid value: \"99999999999d\": too large: at most 36500d",
        "spec.controller.bookingDuration: Invalid value: 1.0000000000000001e300: too large",
        "spec.actions[0].at: Invalid value: \"-5s\": must not be negative",
        "spec.actions[1].repeat: Invalid value: the last occurrence (at + (count - 1) * every) "
        "is later than 36500d",
        NULL,
    };
    expect_error("apiVersion: cueue.dev/v1alpha1\nkind: Scenario\n"
                 "spec:\n  defaultRuntime: 1e300s\n  until: 99999999999d\n"
                 "  controller: {bookingDuration: 1e300}\n"
                 "  actions:\n    - {at: -5s, delete: {kind: Job, name: a}}\n"
                 "    - {at: 1s, repeat: {count: 3, every: 20000d}, delete: {kind: Job, name: a}}\n",
                 needles);
}

/* Regression: repeat.count up to 10,000,000 ran out of memory (SIGABRT):
 * the scenario's size is capped, before anything is created. */
static void test_scenario_size_is_capped(void **state)
{
    (void)state;
    static const char *const one[] = {
        "spec.actions[0].repeat.count: Invalid value: 10000000: must be between 1 and 1000000",
        NULL};
    expect_error("apiVersion: cueue.dev/v1alpha1\nkind: Scenario\nspec:\n  actions:\n"
                 "    - {at: 0s, repeat: {count: 10000000}, delete: {kind: Job, name: a}}\n", one);
    static const char *const sum[] = {
        "s.yaml: too large: 1 objects at time 0 and 1000000 action occurrences (the sum of "
        "spec.actions[].repeat.count) make 1000001; a scenario may ask for at most 1000000",
        NULL};
    expect_error("apiVersion: cueue.dev/v1alpha1\nkind: Scenario\nspec:\n  actions:\n"
                 "    - {at: 0s, repeat: {count: 600000}, delete: {kind: Job, name: a}}\n"
                 "    - {at: 0s, repeat: {count: 400000}, delete: {kind: Job, name: a}}\n"
                 "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: n}\n", sum);
    struct sim_scenario sc;
    char *err;
    assert_int_equal(parse("apiVersion: cueue.dev/v1alpha1\nkind: Scenario\nspec:\n  actions:\n"
                           "    - {at: 0s, repeat: {count: 1000000}, delete: {kind: Job, name: a}}\n",
                           &sc, &err), 0);
    assert_int_equal(sim_scenario_size(&sc), 1000000);
    sim_scenario_release(&sc);
}

/* Regression: an action applying an object the API rejects failed only
 * when its time came, after part of the trace was written. */
static void test_invalid_apply_actions_fail_before_the_run(void **state)
{
    (void)state;
    static const char *const needles[] = {
        "s.yaml: Scenario: spec.actions[0].apply.spec.queueingStrategy: Unsupported value: "
        "\"Sometimes\"",
        "spec.actions[1].apply.spec.resourceGroups: Invalid type",
        "unknown field \"spec.actions[2].apply.spec.colour\"",
        NULL,
    };
    expect_error("apiVersion: cueue.dev/v1alpha1\nkind: Scenario\nspec:\n  actions:\n"
                 "    - {at: 1h, apply: {apiVersion: kueue.x-k8s.io/v1beta1, kind: ClusterQueue,"
                 " metadata: {name: a}, spec: {queueingStrategy: Sometimes}}}\n"
                 "    - {at: 2h, apply: {apiVersion: kueue.x-k8s.io/v1beta1, kind: ClusterQueue,"
                 " metadata: {name: b}, spec: {resourceGroups: 7}}}\n"
                 "    - {at: 3h, repeat: {count: 2}, apply: {apiVersion: kueue.x-k8s.io/v1beta1,"
                 " kind: ResourceFlavor, metadata: {name: \"f-${i}\"}, spec: {colour: red}}}\n",
                 needles);
}

/* One Workload apply action at t seconds in namespace ns, queue q (none
 * when NULL), name name, priority prio. */
static char *wl_act(int t, const char *ns, const char *q, const char *name, int prio)
{
    char *qf = q ? xasprintf("queueName: %s, ", q) : xstrdup("");
    char *a = xasprintf("    - {at: %ds, repeat: {count: 3, every: 1s}, apply: {apiVersion: "
                        "kueue.x-k8s.io/v1beta1, kind: Workload, metadata: {name: \"%s\", "
                        "namespace: %s, labels: {tier: gold}}, spec: {%spriority: %d, podSets: "
                        "[{name: main, count: 1, template: {spec: {containers: [{name: c, "
                        "image: p, resources: {requests: {cpu: \"2\"}}}]}}}]}}}\n",
                        t, name, ns, qf, prio);
    xfree(qf);
    return a;
}

static char *dump(const json_t *v)
{
    char *t = json_dumps(v, JSON_COMPACT);
    char *r = xstrdup(t);
    free(t); /* jansson's allocation */
    return r;
}

/* Workload actions that differ only in name, namespace and queueName are
 * admitted once at load (apply.c, sim_apply_precheck_memo): every
 * action's admitted object is still the one its own full precheck gives,
 * members in the same order, whether it came from the memo (b, c) or not
 * (d: another priority; e: no queueName; f: the name first). */
static void test_similar_workload_actions_are_admitted_as_each_alone(void **state)
{
    (void)state;
    char *acts[] = {wl_act(1, "ns-a", "q-a", "w-${i}", 5), wl_act(2, "ns-b", "q-b", "x-${i}", 5),
                    wl_act(3, "ns-c", "q-c", "w-${i}-c", 5), wl_act(4, "ns-d", "q-d", "w", 6),
                    wl_act(5, "ns-e", NULL, "w-${i}", 5), NULL};
    struct sbuf sb;
    sbuf_init(&sb, 0);
    sbuf_adds(&sb, "apiVersion: cueue.dev/v1alpha1\nkind: Scenario\nspec:\n  actions:\n");
    for (char **a = acts; *a; a++)
        sbuf_adds(&sb, *a);
    struct sim_scenario sc;
    char *err;
    assert_int_equal(parse(sb.buf, &sc, &err), 0);
    assert_int_equal(sc.n_actions, 5);
    for (size_t i = 0; i < sc.n_actions; i++) {
        struct diag d;
        diag_init(&d);
        json_t *alone = NULL;
        assert_int_equal(sim_apply_precheck(sc.actions[i].manifest, &d, &alone), 0);
        assert_non_null(sc.actions[i].admitted);
        char *x = dump(sc.actions[i].admitted), *y = dump(alone);
        assert_string_equal(x, y);
        xfree(x);
        xfree(y);
        json_decref(alone);
        diag_release(&d);
    }
    sim_scenario_release(&sc);
    sbuf_release(&sb);
    for (char **a = acts; *a; a++)
        xfree(*a);
}

/* A name or namespace the rules reject, in an action otherwise like an
 * admitted one, gets the message the full admission gives. */
static void test_similar_workload_action_with_a_bad_name_gets_the_full_message(void **state)
{
    (void)state;
    static const char *const bad[][2] = {{"ns-b", "X_${i}"}, {"Ns_B", "w-${i}"}};
    for (size_t k = 0; k < 2; k++) {
        char *good = wl_act(1, "ns-a", "q-a", "w-${i}", 5);
        char *b = wl_act(2, bad[k][0], "q-b", bad[k][1], 5);
        char *alone_text = xasprintf("apiVersion: cueue.dev/v1alpha1\nkind: Scenario\nspec:\n"
                                     "  actions:\n%s", b);
        char *both_text = xasprintf("apiVersion: cueue.dev/v1alpha1\nkind: Scenario\nspec:\n"
                                    "  actions:\n%s%s", good, b);
        struct sim_scenario s1, s2;
        char *e1, *e2;
        assert_int_not_equal(parse(alone_text, &s1, &e1), 0);
        assert_int_not_equal(parse(both_text, &s2, &e2), 0);
        /* the same message, about actions[0] alone and actions[1] after good */
        char *p1 = strstr(e1, "spec.actions[0].apply.metadata.");
        char *p2 = strstr(e2, "spec.actions[1].apply.metadata.");
        assert_non_null(p1);
        assert_non_null(p2);
        assert_string_equal(p1 + strlen("spec.actions[0]"), p2 + strlen("spec.actions[1]"));
        xfree(e1);
        xfree(e2);
        xfree(good);
        xfree(b);
        xfree(alone_text);
        xfree(both_text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manifests_only_get_every_default),
        cmocka_unit_test(test_every_field_is_decoded),
        cmocka_unit_test(test_errors_name_the_file_and_every_field),
        cmocka_unit_test(test_conditions_action_errors_name_the_field),
        cmocka_unit_test(test_patch_action_errors_name_the_field),
        cmocka_unit_test(test_unknown_kinds_and_syntax_errors),
        cmocka_unit_test(test_missing_file_is_reported),
        cmocka_unit_test(test_a_file_without_documents_is_an_error),
        cmocka_unit_test(test_syntax_errors_name_the_file_once),
        cmocka_unit_test(test_durations_too_large_say_so_with_the_limit),
        cmocka_unit_test(test_scenario_size_is_capped),
        cmocka_unit_test(test_invalid_apply_actions_fail_before_the_run),
        cmocka_unit_test(test_similar_workload_actions_are_admitted_as_each_alone),
        cmocka_unit_test(test_similar_workload_action_with_a_bad_name_gets_the_full_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
