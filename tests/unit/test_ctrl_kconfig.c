/*
 * ctrl_kconfig_load (ctrl/kconfig.c): Kueue's Configuration file for
 * `cueue server --config`. Every field cueue applies lands in the control
 * plane's settings; Kueue's defaults fill what the file leaves out; an
 * unknown field, a wrong type, a bad duration or value is an error naming
 * the field; a known field cueue does not honour is a warning naming it;
 * the managed-jobs policy it builds decides which jobs Kueue manages.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/decode.h"
#include "api/object.h"
#include "ctrl/kconfig.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define HEAD "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"

struct loaded {
    struct ctrl_config cfg;
    struct ctrl_kconfig kc;
    struct diag d;
    int rc;
};

static void load(struct loaded *l, const char *text)
{
    ctrl_config_defaults(&l->cfg);
    diag_init(&l->d);
    l->rc = ctrl_kconfig_load(text, strlen(text), "kueue.yaml", &l->cfg, &l->kc, &l->d);
}

static void unload(struct loaded *l)
{
    ctrl_kconfig_release(&l->kc);
    diag_release(&l->d);
}

/* The one cause of l, as "<field>: <message>" (cmocka prints the rest). */
static void assert_one_error(struct loaded *l, int rc, const char *want)
{
    assert_int_equal(l->rc, rc);
    assert_int_equal(l->d.n, 1);
    char *s = diag_cause_string(&l->d.items[0]);
    assert_string_equal(s, want);
    xfree(s);
}

static bool has_warning(const struct loaded *l, const char *prefix)
{
    for (size_t i = 0; i < l->kc.n_warnings; i++)
        if (!strncmp(l->kc.warnings[i], prefix, strlen(prefix)))
            return true;
    return false;
}

static void every_applied_field(void **state)
{
    (void)state;
    struct loaded l;
    load(&l, HEAD "waitForPodsReady:\n"
                  "  enable: true\n"
                  "  timeout: 90s\n"
                  "  blockAdmission: false\n"
                  "  requeuingStrategy:\n"
                  "    timestamp: Eviction\n"
                  "    backoffLimitCount: 3\n"
                  "    backoffBaseSeconds: 10\n"
                  "    backoffMaxSeconds: 100\n"
                  "fairSharing:\n"
                  "  enable: true\n"
                  "  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]\n"
                  "manageJobsWithoutQueueName: true\n"
                  "managedJobsNamespaceSelector:\n"
                  "  matchLabels: {team: a}\n"
                  "integrations:\n"
                  "  frameworks: [batch/job, ray.io/rayjob, pod]\n");
    assert_int_equal(l.rc, 0);
    assert_int_equal(l.d.n, 0);
    assert_int_equal(l.kc.n_warnings, 0);
    assert_true(l.cfg.wait_for_pods_ready);
    assert_int_equal(l.cfg.pods_ready_timeout_ms, 90000);
    assert_false(l.cfg.pods_ready_block_admission);
    assert_int_equal(l.cfg.requeue_backoff_limit, 3);
    assert_int_equal(l.cfg.requeue_backoff_base_ms, 10000);
    assert_int_equal(l.cfg.requeue_backoff_max_ms, 100000);
    assert_true(l.cfg.engine.fair_sharing);
    assert_int_equal(l.cfg.engine.n_fs_strategies, 2);
    assert_int_equal(l.cfg.engine.fs_strategies[0], FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE);
    assert_int_equal(l.cfg.engine.fs_strategies[1], FS_LESS_THAN_INITIAL_SHARE);
    assert_true(l.cfg.jobs.manage_without_queue_name);
    assert_ptr_equal(l.cfg.jobs.namespace_selector, &l.kc.ns_selector);
    assert_int_equal(l.cfg.jobs.frameworks, API_FW_BATCH_JOB | API_FW_RAYJOB | API_FW_POD);
    unload(&l);
}

/* Kueue's API defaults: waitForPodsReady off unless enabled, then a 5 min
 * timeout and blockAdmission on; fair sharing off; only batch/job. */
static void kueue_defaults_fill_the_rest(void **state)
{
    (void)state;
    struct loaded l;
    load(&l, HEAD);
    assert_int_equal(l.rc, 0);
    assert_false(l.cfg.wait_for_pods_ready);
    assert_false(l.cfg.engine.fair_sharing);
    assert_false(l.cfg.jobs.manage_without_queue_name);
    assert_null(l.cfg.jobs.namespace_selector);
    assert_int_equal(l.cfg.jobs.frameworks, API_FW_BATCH_JOB);
    assert_true(has_warning(&l, "integrations.frameworks: not set"));
    unload(&l);
    load(&l, HEAD "waitForPodsReady: {enable: true}\nintegrations: {frameworks: [batch/job]}\n");
    assert_int_equal(l.rc, 0);
    assert_int_equal(l.kc.n_warnings, 0);
    assert_true(l.cfg.wait_for_pods_ready);
    assert_true(l.cfg.pods_ready_block_admission);
    assert_int_equal(l.cfg.pods_ready_timeout_ms, 5 * 60 * 1000);
    assert_int_equal(l.cfg.requeue_backoff_base_ms, 60000);
    assert_int_equal(l.cfg.requeue_backoff_max_ms, 3600000);
    assert_int_equal(l.cfg.requeue_backoff_limit, -1);
    unload(&l);
    /* blockAdmission is honoured only with enable */
    load(&l, HEAD "waitForPodsReady: {enable: false, blockAdmission: true}\n");
    assert_int_equal(l.rc, 0);
    assert_false(l.cfg.wait_for_pods_ready);
    assert_false(l.cfg.pods_ready_block_admission);
    unload(&l);
}

static void unknown_fields_are_errors(void **state)
{
    (void)state;
    struct loaded l;
    load(&l, HEAD "waitForPodsReady:\n  enable: true\n  foo: 1\n");
    assert_one_error(&l, CU_EBADREQ, "unknown field \"waitForPodsReady.foo\"");
    unload(&l);
    load(&l, HEAD "spec: {}\n");
    assert_one_error(&l, CU_EBADREQ, "unknown field \"spec\"");
    unload(&l);
    load(&l, HEAD "resources:\n  transformations:\n  - input: nvidia.com/mig-1g.5gb\n"
                  "    output: {}\n");
    assert_one_error(&l, CU_EBADREQ, "unknown field \"resources.transformations[0].output\"");
    unload(&l);
    load(&l, HEAD "waitForPodsReady: {enable: 1}\n");
    assert_one_error(&l, CU_EBADREQ, "waitForPodsReady.enable: Invalid type: expected boolean");
    unload(&l);
    load(&l, "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n");
    assert_int_equal(l.rc, CU_EBADREQ);
    assert_non_null(strstr(l.d.items[0].detail, "want apiVersion"));
    unload(&l);
}

static void bad_values_name_field_and_rule(void **state)
{
    (void)state;
    struct loaded l;
    load(&l, HEAD "waitForPodsReady: {enable: true, timeout: 5 minutes}\n");
    assert_int_equal(l.rc, CU_EINVAL);
    assert_int_equal(l.d.n, 1);
    assert_string_equal(l.d.items[0].field, "waitForPodsReady.timeout");
    assert_int_equal(l.d.items[0].type, DIAG_INVALID);
    unload(&l);
    load(&l, HEAD "waitForPodsReady: {enable: true, timeout: -1s}\n");
    assert_one_error(&l, CU_EINVAL, "waitForPodsReady.timeout: Invalid value: \"-1s\": must be "
                                    "greater than or equal to 0");
    unload(&l);
    load(&l, HEAD "waitForPodsReady:\n  requeuingStrategy: {backoffLimitCount: -1}\n");
    assert_one_error(&l, CU_EINVAL, "waitForPodsReady.requeuingStrategy.backoffLimitCount: "
                                    "Invalid value: -1: must be between 0 and 2147483647");
    unload(&l);
    load(&l, HEAD "waitForPodsReady:\n  requeuingStrategy: {timestamp: Later}\n");
    assert_int_equal(l.rc, CU_EINVAL);
    assert_int_equal(l.d.items[0].type, DIAG_NOT_SUPPORTED);
    unload(&l);
    load(&l, HEAD "fairSharing: {preemptionStrategies: [LessThanInitialShare, "
                  "LessThanOrEqualToFinalShare]}\n");
    assert_int_equal(l.rc, CU_EINVAL);
    assert_string_equal(l.d.items[0].field, "fairSharing.preemptionStrategies[1]");
    unload(&l);
    load(&l, HEAD "integrations: {frameworks: [batch/job, batch/job, example.com/foo]}\n");
    assert_int_equal(l.rc, CU_EINVAL);
    assert_int_equal(l.d.n, 2);
    assert_int_equal(l.d.items[0].type, DIAG_DUPLICATE);
    assert_string_equal(l.d.items[1].field, "integrations.frameworks[2]");
    assert_int_equal(l.d.items[1].type, DIAG_NOT_SUPPORTED);
    unload(&l);
    load(&l, HEAD "managedJobsNamespaceSelector:\n  matchExpressions:\n"
                  "  - {key: team, operator: Near}\n");
    assert_int_equal(l.rc, CU_EINVAL);
    assert_non_null(strstr(l.d.items[0].field, "managedJobsNamespaceSelector.matchExpressions"));
    unload(&l);
    load(&l, HEAD "resources:\n  transformations:\n  - {input: a, strategy: Keep}\n"
                  "  - {input: a, outputs: {cpu: lots}}\n");
    assert_int_equal(l.rc, CU_EINVAL);
    assert_int_equal(l.d.n, 3);
    assert_string_equal(l.d.items[0].field, "resources.transformations[0].strategy");
    assert_string_equal(l.d.items[1].field, "resources.transformations[1].input");
    assert_string_equal(l.d.items[2].field, "resources.transformations[1].outputs[cpu]");
    unload(&l);
    load(&l, HEAD "admissionFairSharing: {usageSamplingInterval: 0s, "
                  "resourceWeights: {cpu: -1}}\n");
    assert_int_equal(l.rc, CU_EINVAL);
    assert_int_equal(l.d.n, 2);
    unload(&l);
}

/* Known fields cueue does not honour: validated, then one warning each
 * that names the field; the file still loads. */
static void unsupported_fields_are_warnings(void **state)
{
    (void)state;
    struct loaded l;
    load(&l, HEAD "namespace: kueue-system\n"
                  "health: {healthProbeBindAddress: ':8081'}\n"
                  "featureGates: {TopologyAwareScheduling: true}\n"
                  "waitForPodsReady:\n  enable: true\n  recoveryTimeout: 3m\n"
                  "  requeuingStrategy: {timestamp: Creation}\n"
                  "admissionFairSharing: {usageHalfLifeTime: 168h, usageSamplingInterval: 5m,"
                  " resourceWeights: {cpu: 2.0, memory: 1}}\n"
                  "resources:\n  excludeResourcePrefixes: [example.com/]\n"
                  "  transformations:\n  - {input: nvidia.com/mig-1g.5gb, strategy: Replace,"
                  " outputs: {example.com/accelerator-memory: 5Gi}}\n"
                  "integrations:\n  frameworks: [batch/job, kubeflow.org/mpijob]\n"
                  "  labelKeysToCopy: [team]\n");
    assert_int_equal(l.rc, 0);
    assert_int_equal(l.d.n, 0);
    static const char *const want[] = {
        "namespace:", "health:", "featureGates:", "waitForPodsReady.recoveryTimeout:",
        "waitForPodsReady.requeuingStrategy.timestamp:", "admissionFairSharing:",
        "resources.excludeResourcePrefixes:", "resources.transformations:",
        "integrations.frameworks[1]:", "integrations.labelKeysToCopy:"};
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_true(has_warning(&l, want[i]));
    assert_int_equal(l.kc.n_warnings, sizeof(want) / sizeof(want[0]));
    unload(&l);
    /* a bad value under a warned field is still an error */
    load(&l, HEAD "waitForPodsReady: {recoveryTimeout: soon}\n");
    assert_int_equal(l.rc, CU_EINVAL);
    assert_string_equal(l.d.items[0].field, "waitForPodsReady.recoveryTimeout");
    unload(&l);
}

static json_t *doc(const char *yaml)
{
    json_t *docs = NULL;
    struct diag d;
    diag_init(&d);
    assert_int_equal(api_parse_documents(yaml, strlen(yaml), "t", &docs, &d), 0);
    diag_release(&d);
    json_t *o = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return o;
}

/* The policy a file builds: which jobs Kueue manages. */
static void policy_decides_managed_jobs(void **state)
{
    (void)state;
    struct loaded l;
    load(&l, HEAD "manageJobsWithoutQueueName: true\n"
                  "managedJobsNamespaceSelector: {matchLabels: {team: a}}\n"
                  "integrations: {frameworks: [batch/job, pod]}\n");
    assert_int_equal(l.rc, 0);
    const struct api_job_policy *p = &l.cfg.jobs;
    json_t *labelled = doc("metadata: {namespace: b, labels: {kueue.x-k8s.io/queue-name: q}}");
    json_t *bare = doc("metadata: {namespace: b}");
    json_t *child = doc("metadata: {namespace: b, ownerReferences: [{controller: true}]}");
    json_t *ns_a = doc("metadata: {name: b, labels: {team: a}}");
    json_t *ns_other = doc("metadata: {name: b, labels: {team: c}}");
    /* a queue name: managed (a Job even outside the selector; a Pod not) */
    assert_true(api_job_policy_manages(p, KIND_JOB, labelled, ns_other));
    assert_false(api_job_policy_manages(p, KIND_POD, labelled, ns_other));
    assert_true(api_job_policy_manages(p, KIND_POD, labelled, ns_a));
    /* a framework not listed: never */
    assert_false(api_job_policy_manages(p, KIND_RAYJOB, labelled, ns_a));
    /* no queue name: only in a selected namespace, and not a child */
    assert_true(api_job_policy_manages(p, KIND_JOB, bare, ns_a));
    assert_false(api_job_policy_manages(p, KIND_JOB, bare, ns_other));
    assert_false(api_job_policy_manages(p, KIND_JOB, child, ns_a));
    unload(&l);
    /* cueue's default (no --config): queue-name jobs, not plain Pods */
    struct api_job_policy def;
    api_job_policy_defaults(&def);
    assert_true(api_job_policy_manages(&def, KIND_JOB, labelled, NULL));
    assert_true(api_job_policy_manages(&def, KIND_RAYJOB, labelled, NULL));
    assert_false(api_job_policy_manages(&def, KIND_POD, labelled, NULL));
    assert_false(api_job_policy_manages(&def, KIND_JOB, bare, NULL));
    json_decref(labelled);
    json_decref(bare);
    json_decref(child);
    json_decref(ns_a);
    json_decref(ns_other);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_applied_field),
        cmocka_unit_test(kueue_defaults_fill_the_rest),
        cmocka_unit_test(unknown_fields_are_errors),
        cmocka_unit_test(bad_values_name_field_and_rule),
        cmocka_unit_test(unsupported_fields_are_warnings),
        cmocka_unit_test(policy_decides_managed_jobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
