/* Unit tests for the recorder's memo from a Workload document's uid to its
 * state (src/sim/observe.c, uid_cache): it grows with the live Workloads,
 * taking its entries along, and every event still finds its own
 * Workload's state (each Workload's records, exactly once each). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/observe-int.h"
#include "sim/sim-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

/* More Workloads than the memo's first table has sets, so that it grows
 * (twice) while they are created and later events (admission, finish) read
 * the grown table. */
#define N_WL ((1 << (SIM_UID_CACHE_LOG2 - SIM_UID_WAYS_LOG2)) * 2 + 100)

static const char scenario[] =
    "apiVersion: cueue.dev/v1alpha1\nkind: Scenario\nspec:\n  actions:\n"
    "  - at: 1s\n    repeat: {count: %d}\n    runFor: 1s\n"
    "    apply: {apiVersion: kueue.x-k8s.io/v1beta1, kind: Workload, metadata: "
    "{name: \"w-${i}\"}, spec: {queueName: lq, podSets: [{name: main, count: 1, "
    "template: {spec: {containers: [{name: c, image: x, resources: {requests: "
    "{cpu: '1'}}}]}}}]}}\n"
    "  - at: 3s\n    delete: {kind: Workload, name: w-7}\n"
    "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: default}\n"
    "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: cq}\n"
    "spec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n"
    "    flavors: [{name: default, resources: [{name: cpu, nominalQuota: 100000}]}]\n"
    "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
    "metadata: {name: lq, namespace: default}\nspec: {clusterQueue: cq}\n";

/* Index of a record's workload name w-<i>, or -1. */
static int wl_index(const json_t *rec)
{
    const char *wl = JX_STR(rec, "workload");
    if (!wl || strncmp(wl, "default/w-", 10))
        return -1;
    int i = atoi(wl + 10);
    return i >= 0 && i < N_WL ? i : -1;
}

static void test_grown_uid_memo_finds_each_workload(void **state)
{
    (void)state;
    char *text = xasprintf(scenario, N_WL);
    struct sim_scenario sc;
    char *err = NULL;
    assert_int_equal(sim_scenario_parse(text, strlen(text), "t.yaml", &sc, &err), 0);
    struct sim_options opt = {.until_rel = -1, .keep_records = true, .quiet_warnings = true};
    struct sim *s = NULL;
    assert_int_equal(sim_new(&sc, &opt, &s, &err), 0);
    assert_int_equal(sim_run(s, &err), 0);
    /* the memo grew past its first size */
    assert_true(s->obs->uid_cache_log2 > SIM_UID_CACHE_LOG2);
    int *reserved = xcalloc(N_WL, sizeof(int)), *admitted = xcalloc(N_WL, sizeof(int));
    int *finished = xcalloc(N_WL, sizeof(int));
    size_t i;
    json_t *rec;
    json_array_foreach(s->records, i, rec) {
        int k = wl_index(rec);
        const char *ev = jx_or_empty(JX_STR(rec, "event"));
        if (k < 0)
            continue;
        reserved[k] += !strcmp(ev, "QuotaReserved");
        admitted[k] += !strcmp(ev, "Admitted");
        finished[k] += !strcmp(ev, "Finished");
    }
    for (int k = 0; k < N_WL; k++) {
        assert_int_equal(reserved[k], 1);
        assert_int_equal(admitted[k], 1);
        assert_int_equal(finished[k], 1);
    }
    json_t *sum = sim_observer_summary(s);
    const json_t *w = json_object_get(sum, "workloads");
    assert_int_equal(JX_INT(w, -1, "total"), N_WL);
    assert_int_equal(JX_INT(w, -1, "finished"), N_WL);
    assert_int_equal(JX_INT(w, -1, "unfinished"), 0);
    /* w-7, deleted after it finished, left the live Workloads */
    assert_int_equal(s->obs->n_live, N_WL - 1);
    json_decref(sum);
    xfree(reserved);
    xfree(admitted);
    xfree(finished);
    xfree(text);
    sim_free(s);
    sim_scenario_release(&sc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grown_uid_memo_finds_each_workload),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
