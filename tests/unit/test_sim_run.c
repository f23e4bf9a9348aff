/* Unit tests for a whole simulation in-process (src/sim/driver.c, apply.c,
 * observe*.c, usage.c): repeated actions with ${i}, bare Workloads finished
 * after their runtime, waits and usage in the summary, --until, and clear
 * errors for manifests the API rejects. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/patch.h"
#include "sim/sim-int.h"
#include "store/store.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static const char queue[] =
    "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: default}\n"
    "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
    "metadata: {name: cq, labels: {cueue.dev/sim-class: queues}}\n"
    "spec:\n  namespaceSelector: {}\n  resourceGroups:\n  - coveredResources: [cpu]\n"
    "    flavors: [{name: default, resources: [{name: cpu, nominalQuota: 4}]}]\n"
    "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
    "metadata: {name: lq, namespace: default}\nspec: {clusterQueue: cq}\n";

struct run {
    struct sim_scenario sc;
    struct sim *s;
    json_t *summary;
    int rc;
    char *err;
};

static void run_text(struct run *r, const char *spec, int64_t until_rel)
{
    char *text = xasprintf("%s%s", spec, queue);
    char *err = NULL;
    memset(r, 0, sizeof(*r));
    int prc = sim_scenario_parse(text, strlen(text), "t.yaml", &r->sc, &err);
    if (prc)
        print_error("%s\n", err ? err : "?");
    assert_int_equal(prc, 0);
    xfree(text);
    struct sim_options opt = {.until_rel = until_rel, .keep_records = true,
                              .quiet_warnings = true};
    assert_int_equal(sim_new(&r->sc, &opt, &r->s, &err), 0);
    r->rc = sim_run(r->s, &r->err);
    if (!r->rc)
        r->summary = sim_observer_summary(r->s);
}

static void run_release(struct run *r)
{
    json_decref(r->summary);
    xfree(r->err);
    sim_free(r->s);
    sim_scenario_release(&r->sc);
}

/* The index of the first record with this event and workload, or -1. */
static int find(const struct run *r, const char *event, const char *wl, double *time)
{
    size_t i;
    json_t *rec;
    json_array_foreach(r->s->records, i, rec) {
        if (!strcmp(jx_or_empty(JX_STR(rec, "event")), event) &&
            !strcmp(jx_or_empty(JX_STR(rec, "workload")), wl)) {
            if (time)
                *time = json_number_value(json_object_get(rec, "time"));
            return (int)i;
        }
    }
    return -1;
}

static const char repeated[] =
    "apiVersion: cueue.dev/v1alpha1\nkind: Scenario\n"
    "spec:\n  actions:\n"
    "  - at: 1s\n    repeat: {count: 3, every: 10s}\n    runFor: 15s\n"
    "    apply:\n      apiVersion: kueue.x-k8s.io/v1beta1\n      kind: Workload\n"
    "      metadata: {name: \"w-${i}\", labels: {cueue.dev/sim-class: batch}}\n"
    "      spec:\n        queueName: lq\n        podSets:\n"
    "        - {name: main, count: 1, template: {spec: {containers: [{name: c, image: p,"
    " resources: {requests: {cpu: \"3\"}}}]}}}\n";

static void test_repeated_bare_workloads_wait_run_and_finish(void **state)
{
    (void)state;
    struct run r;
    run_text(&r, repeated, -1);
    assert_int_equal(r.rc, 0);
    /* w-0 at 1 s runs to 16 s; w-1 (created 11 s) waits for it; w-2 (21 s)
     * waits for w-1 (admitted 16 s, done 31 s) */
    double t;
    assert_true(find(&r, "Admitted", "default/w-0", &t) >= 0);
    assert_true(t == 1);
    assert_true(find(&r, "Finished", "default/w-0", &t) >= 0);
    assert_true(t == 16);
    assert_true(find(&r, "Pending", "default/w-1", &t) >= 0);
    assert_true(t == 11);
    assert_true(find(&r, "Admitted", "default/w-1", &t) >= 0);
    assert_true(t == 16);
    assert_true(find(&r, "Admitted", "default/w-2", &t) >= 0);
    assert_true(t == 31);
    assert_true(find(&r, "Finished", "default/w-2", &t) >= 0);
    assert_true(t == 46);
    /* summary: waits 0, 5, 10 s */
    const json_t *c = JX_GET(r.summary, "classes", "batch");
    assert_int_equal(JX_INT(c, 0, "count"), 3);
    assert_true(json_real_value(json_object_get(c, "meanWaitSeconds")) == 5.0);
    assert_true(json_real_value(json_object_get(c, "p50WaitSeconds")) == 5.0);
    assert_true(json_real_value(json_object_get(c, "maxWaitSeconds")) == 10.0);
    assert_true(json_real_value(json_object_get(r.summary, "makespanSeconds")) == 46.0);
    assert_string_equal(JX_STR(r.summary, "stoppedBy"), "completion");
    /* usage: 3 cpu held from 1 s to 46 s of the window 0..46 s, nominal 4 */
    const json_t *u = JX_GET(r.summary, "clusterQueueClasses", "queues");
    double pct = json_real_value(json_object_get(u, "usagePercent"));
    assert_true(pct > 73.36 && pct < 73.38); /* 3*45/(4*46) */
    /* w-1 is admitted in the instant w-0 finishes: the peak is 3, not 6 */
    const json_t *res = json_array_get(JX_GET(r.summary, "clusterQueues", "cq", "resources"), 0);
    assert_true(json_real_value(json_object_get(res, "peakUsed")) == 3.0);
    /* ... and the lowest level held is 0 (before the first admission at 1 s) */
    assert_true(json_real_value(json_object_get(res, "minUsed")) == 0.0);
    assert_true(json_real_value(json_object_get(res, "nominal")) == 4.0);
    assert_int_equal(JX_INT(r.summary, 0, "workloads", "finished"), 3);
    run_release(&r);
}

static void test_until_stops_the_run_and_counts_held_usage(void **state)
{
    (void)state;
    struct run r;
    run_text(&r, repeated, 20000);
    assert_int_equal(r.rc, 0);
    assert_string_equal(JX_STR(r.summary, "stoppedBy"), "until");
    assert_true(json_real_value(json_object_get(r.summary, "simulatedSeconds")) == 20.0);
    assert_int_equal(find(&r, "Admitted", "default/w-2", NULL), -1); /* created at 21 s */
    assert_int_equal(JX_INT(r.summary, 0, "workloads", "unfinished"), 1);
    run_release(&r);
}

/* A manifest the API would reject is refused when the scenario is read,
 * before any simulated time passes, with the action's field path. */
static void test_rejected_manifest_stops_with_the_api_message(void **state)
{
    (void)state;
    char *text = xasprintf("%s%s",
        "apiVersion: cueue.dev/v1alpha1\nkind: Scenario\nspec:\n  actions:\n"
        "  - at: 5s\n    apply: {apiVersion: kueue.x-k8s.io/v1beta1, kind: ClusterQueue,"
        " metadata: {name: bad}, spec: {queueingStrategy: Sometimes}}\n", queue);
    struct sim_scenario sc;
    char *err = NULL;
    memset(&sc, 0, sizeof(sc));
    assert_true(sim_scenario_parse(text, strlen(text), "t.yaml", &sc, &err) < 0);
    assert_non_null(err);
    assert_non_null(strstr(err, "spec.actions[0].apply.spec.queueingStrategy: "));
    assert_non_null(strstr(err, "Unsupported value"));
    assert_non_null(strstr(err, "Sometimes"));
    xfree(err);
    xfree(text);
    sim_scenario_release(&sc);
}

static void test_missing_namespace_is_an_error(void **state)
{
    (void)state;
    struct run r;
    run_text(&r, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: nowhere}\n",
             -1);
    assert_true(r.rc < 0);
    assert_string_equal(r.err, "t.yaml: document 1: namespaces \"nowhere\" not found");
    run_release(&r);
}

static void test_merge_patch_and_index_substitution(void **state)
{
    (void)state;
    json_t *t = json_pack("{s:{s:i, s:i}, s:[i], s:s}", "a", "x", 1, "y", 2, "l", 1, "k", "v");
    json_t *p = json_pack("{s:{s:n, s:i}, s:[i,i], s:{s:s}}", "a", "x", "y", 3, "l", 4, 5, "k",
                          "deep", "${i}");
    json_t *merged = api_merge_patch(t, p); /* the API server's, api/patch.h */
    json_decref(t);
    t = merged;
    char *s = jx_dumps_sorted(t);
    assert_string_equal(s, "{\"a\":{\"y\":3},\"k\":{\"deep\":\"${i}\"},\"l\":[4,5]}");
    xfree(s);
    json_t *sub = sim_subst_index(t, 7);
    s = jx_dumps_sorted(sub);
    assert_string_equal(s, "{\"a\":{\"y\":3},\"k\":{\"deep\":\"7\"},\"l\":[4,5]}");
    xfree(s);
    json_decref(sub);
    json_decref(p);
    json_decref(t);
}

/* ${i} is replaced in every string value (in objects and arrays, several
 * times in one string), never in keys; keys keep their order, and the
 * template is left as it was for the next occurrence. */
static void test_index_substitution_copies_and_keeps_template(void **state)
{
    (void)state;
    json_t *t = json_pack("{s:s, s:[s, i, {s:s}], s:b, s:{s:s}}", "z", "w-${i}-${i}", "a",
                          "x${i}", 3, "${i}", "p${i}", "m", 1, "k", "n", "plain");
    json_t *sub = sim_subst_index(t, 12);
    char *s = json_dumps(sub, JSON_COMPACT);
    assert_string_equal(s, "{\"z\":\"w-12-12\",\"a\":[\"x12\",3,{\"${i}\":\"p12\"}],"
                           "\"m\":true,\"k\":{\"n\":\"plain\"}}");
    free(s); /* jansson's allocation */
    json_object_set_new(json_object_get(sub, "k"), "n", json_string("changed"));
    s = json_dumps(t, JSON_COMPACT);
    assert_string_equal(s, "{\"z\":\"w-${i}-${i}\",\"a\":[\"x${i}\",3,{\"${i}\":\"p${i}\"}],"
                           "\"m\":true,\"k\":{\"n\":\"plain\"}}");
    free(s);
    json_decref(sub);
    json_decref(t);
}

/* A Workload apply of `at` (seconds), `repeat` occurrences 10 s apart
 * (repeat 0: no repeat key), named `name`. */
static char *wl_action(int at, int repeat, const char *name)
{
    char *rep = repeat ? xasprintf("    repeat: {count: %d, every: 10s}\n", repeat) : xstrdup("");
    char *a = xasprintf(
        "  - at: %ds\n%s    runFor: 15s\n"
        "    apply:\n      apiVersion: kueue.x-k8s.io/v1beta1\n      kind: Workload\n"
        "      metadata: {name: \"%s\", labels: {cueue.dev/sim-class: batch, tier: gold}}\n"
        "      spec:\n        queueName: lq\n        priority: 5\n        podSets:\n"
        "        - {name: main, count: 1, template: {spec: {containers: [{name: c, image: p,"
        " resources: {requests: {cpu: \"3\"}}}]}}}\n",
        at, rep, name);
    xfree(rep);
    return a;
}

/* A repeated Workload apply whose only ${i} is its name is admitted once
 * and then created from that admitted object (apply.c, admitted_apply):
 * the store's Workloads (uids, defaults, timestamps), the records and the
 * summary are those of the same Workloads applied one by one, each through
 * the full admission. */
static void test_repeated_apply_matches_one_by_one(void **state)
{
    (void)state;
    static const char head[] = "apiVersion: cueue.dev/v1alpha1\nkind: Scenario\n"
                               "spec:\n  actions:\n";
    char *rep = wl_action(1, 3, "w-${i}");
    char *a0 = wl_action(1, 0, "w-0"), *a1 = wl_action(11, 0, "w-1"),
         *a2 = wl_action(21, 0, "w-2");
    char *t1 = xasprintf("%s%s", head, rep);
    char *t2 = xasprintf("%s%s%s%s", head, a0, a1, a2);
    struct run r1, r2;
    run_text(&r1, t1, 25000);
    run_text(&r2, t2, 25000);
    assert_int_equal(r1.rc, 0);
    assert_int_equal(r2.rc, 0);
    json_t *l1 = store_list(r1.s->store, KIND_WORKLOAD, NULL, NULL);
    json_t *l2 = store_list(r2.s->store, KIND_WORKLOAD, NULL, NULL);
    assert_int_equal(json_array_size(l1), 3);
    char *d1 = json_dumps(l1, JSON_COMPACT), *d2 = json_dumps(l2, JSON_COMPACT);
    assert_string_equal(d1, d2); /* same members in the same order */
    free(d1); /* jansson's allocations */
    free(d2);
    assert_true(json_equal(r1.s->records, r2.s->records));
    json_object_del(r1.summary, "wallSeconds");
    json_object_del(r2.summary, "wallSeconds");
    assert_true(json_equal(r1.summary, r2.summary));
    json_decref(l1);
    json_decref(l2);
    run_release(&r1);
    run_release(&r2);
    xfree(t1);
    xfree(t2);
    xfree(rep);
    xfree(a0);
    xfree(a1);
    xfree(a2);
}

/* The name of each occurrence is still checked: 251 letters and ${i} give
 * names of 252 and 253 characters up to i = 99, and 254 at i = 100, which
 * the Workload name rule (a DNS subdomain, at most 253) rejects with the
 * API's message, after the 100 valid ones were created. */
/* A patch the API's patch code cannot apply (a JSON patch whose test
 * operation fails) stops the run with its message, naming the action, and
 * leaves the object as it was. */
static void test_a_patch_that_cannot_apply_stops_the_run(void **state)
{
    (void)state;
    struct run r;
    run_text(&r,
             "apiVersion: cueue.dev/v1alpha1\nkind: Scenario\n"
             "spec:\n  actions:\n"
             "  - {at: 10s, patch: {kind: ClusterQueue, name: cq, json: [\n"
             "      {op: test, path: /spec/queueingStrategy, value: StrictFIFO},\n"
             "      {op: replace, path: /spec/queueingStrategy, value: StrictFIFO}]}}\n",
             -1);
    assert_int_not_equal(r.rc, 0);
    assert_non_null(r.err);
    assert_non_null(strstr(r.err, "spec.actions[0] (at 10s): ClusterQueue \"cq\": "
                                  "the patch could not be applied: "));
    json_t *cq = store_get(r.s->store, KIND_CLUSTERQUEUE, NULL, "cq");
    assert_string_equal(JX_STR(cq, "spec", "queueingStrategy"), "BestEffortFIFO");
    json_decref(cq);
    run_release(&r);
}

static void test_repeated_apply_rejects_an_occurrence_whose_name_is_invalid(void **state)
{
    (void)state;
    char prefix[252];
    memset(prefix, 'a', 251);
    prefix[251] = '\0';
    char *name = xasprintf("%s${i}", prefix);
    char *act = wl_action(1, 101, name);
    char *text = xasprintf("apiVersion: cueue.dev/v1alpha1\nkind: Scenario\n"
                           "spec:\n  actions:\n%s", act);
    struct run r;
    run_text(&r, text, -1);
    assert_int_not_equal(r.rc, 0);
    assert_non_null(r.err);
    assert_non_null(strstr(r.err, "spec.actions[0] (i=100, at 1001s): Workload.kueue.x-k8s.io"));
    assert_non_null(strstr(r.err, "metadata.name"));
    assert_non_null(strstr(r.err, "253"));
    json_t *l = store_list(r.s->store, KIND_WORKLOAD, NULL, NULL);
    assert_int_equal(json_array_size(l), 100);
    json_decref(l);
    run_release(&r);
    xfree(text);
    xfree(act);
    xfree(name);
}

/* A capacity model for a pool that no NodePool carries (a typo) is said,
 * once, at the end of the run. */
static void test_capacity_for_a_missing_pool_is_a_warning(void **state)
{
    (void)state;
    struct run r;
    run_text(&r, "apiVersion: cueue.dev/v1alpha1\nkind: Scenario\nspec:\n"
                 "  capacity:\n    nopool: {provisioningDelay: 1m}\n---\n", -1);
    assert_int_equal(r.rc, 0);
    size_t i, hits = 0;
    json_t *w;
    json_array_foreach(r.s->warnings, i, w) {
        if (strstr(json_string_value(w), "spec.capacity.nopool: no NodePool nopool exists at "
                                         "the end of the run"))
            hits++;
    }
    assert_int_equal(hits, 1);
    run_release(&r);
}

/* A Workload deleted before it finished is counted as deleted, so the
 * totals add up (total = finished + unfinished + deleted). */
static void test_deleted_workloads_are_counted(void **state)
{
    (void)state;
    struct run r;
    run_text(&r, "apiVersion: cueue.dev/v1alpha1\nkind: Scenario\nspec:\n  actions:\n"
                 "  - at: 0s\n    runFor: 1h\n    apply: {apiVersion: kueue.x-k8s.io/v1beta1, "
                 "kind: Workload, metadata: {name: gone}, spec: {queueName: lq, podSets: "
                 "[{name: main, count: 1, template: {spec: {containers: [{name: c, image: x, "
                 "resources: {requests: {cpu: '1'}}}]}}}]}}\n"
                 "  - at: 10s\n    delete: {kind: Workload, name: gone}\n---\n", -1);
    assert_int_equal(r.rc, 0);
    const json_t *w = json_object_get(r.summary, "workloads");
    assert_int_equal(JX_INT(w, -1, "total"), 1);
    assert_int_equal(JX_INT(w, -1, "finished"), 0);
    assert_int_equal(JX_INT(w, -1, "unfinished"), 0);
    assert_int_equal(JX_INT(w, -1, "deleted"), 1);
    run_release(&r);
}

/* The recorder reads a condition again only when it is a new object: a
 * Pending message that changes (the quota grows but stays short) is a new
 * record; the reservation that follows is recorded once. */
static void test_changed_pending_message_is_recorded_again(void **state)
{
    (void)state;
    static const char cq_at[] =
        "    apply: {apiVersion: kueue.x-k8s.io/v1beta1, kind: ClusterQueue, metadata: {name: cq},"
        " spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [cpu], flavors: "
        "[{name: default, resources: [{name: cpu, nominalQuota: %d}]}]}]}}\n";
    char *grow5 = xasprintf(cq_at, 5), *grow6 = xasprintf(cq_at, 6);
    char *text = xasprintf(
        "apiVersion: cueue.dev/v1alpha1\nkind: Scenario\nspec:\n  actions:\n"
        "  - at: 0s\n    runFor: 1h\n    apply: {apiVersion: kueue.x-k8s.io/v1beta1, "
        "kind: Workload, metadata: {name: big}, spec: {queueName: lq, podSets: "
        "[{name: main, count: 1, template: {spec: {containers: [{name: c, image: x, "
        "resources: {requests: {cpu: '6'}}}]}}}]}}\n"
        "  - at: 10s\n%s  - at: 20s\n%s---\n", grow5, grow6);
    struct run r;
    run_text(&r, text, -1);
    assert_int_equal(r.rc, 0);
    const char *msgs[2] = {NULL, NULL};
    int n_pending = 0, n_reserved = 0;
    size_t i;
    json_t *rec;
    json_array_foreach(r.s->records, i, rec) {
        const char *ev = jx_or_empty(JX_STR(rec, "event"));
        if (!strcmp(ev, "Pending") && n_pending < 2)
            msgs[n_pending] = JX_STR(rec, "message");
        n_pending += !strcmp(ev, "Pending");
        n_reserved += !strcmp(ev, "QuotaReserved");
    }
    assert_int_equal(n_pending, 2);
    assert_non_null(strstr(jx_or_empty(msgs[0]), "maximum capacity (4)"));
    assert_non_null(strstr(jx_or_empty(msgs[1]), "maximum capacity (5)"));
    assert_int_equal(n_reserved, 1);
    double t = -1;
    assert_true(find(&r, "QuotaReserved", "default/big", &t) >= 0);
    assert_true(t == 20.0);
    run_release(&r);
    xfree(text);
    xfree(grow5);
    xfree(grow6);
}

/* A Workload deleted and created again under its name is a new Workload
 * for the recorder (found by its new uid, the old one's state forgotten
 * with its uid memo): each is reserved, the second finishes after its own
 * runtime, and the summary counts both. */
static void test_recreated_workload_is_a_new_workload(void **state)
{
    (void)state;
    static const char wl[] =
        "    apply: {apiVersion: kueue.x-k8s.io/v1beta1, kind: Workload, metadata: {name: again},"
        " spec: {queueName: lq, podSets: [{name: main, count: 1, template: {spec: {containers: "
        "[{name: c, image: x, resources: {requests: {cpu: '1'}}}]}}}]}}\n";
    char *text = xasprintf("apiVersion: cueue.dev/v1alpha1\nkind: Scenario\nspec:\n  actions:\n"
                           "  - at: 0s\n    runFor: 1h\n%s"
                           "  - at: 10s\n    delete: {kind: Workload, name: again}\n"
                           "  - at: 20s\n    runFor: 5s\n%s---\n", wl, wl);
    struct run r;
    run_text(&r, text, -1);
    assert_int_equal(r.rc, 0);
    int n_reserved = 0, n_finished = 0;
    double finished_at = -1;
    size_t i;
    json_t *rec;
    json_array_foreach(r.s->records, i, rec) {
        const char *ev = jx_or_empty(JX_STR(rec, "event"));
        if (strcmp(jx_or_empty(JX_STR(rec, "workload")), "default/again"))
            continue;
        n_reserved += !strcmp(ev, "QuotaReserved");
        if (!strcmp(ev, "Finished")) {
            n_finished++;
            finished_at = json_number_value(json_object_get(rec, "time"));
        }
    }
    assert_int_equal(n_reserved, 2);
    assert_int_equal(n_finished, 1);
    assert_true(finished_at == 25.0);
    const json_t *w = json_object_get(r.summary, "workloads");
    assert_int_equal(JX_INT(w, -1, "total"), 2);
    assert_int_equal(JX_INT(w, -1, "finished"), 1);
    assert_int_equal(JX_INT(w, -1, "deleted"), 1);
    run_release(&r);
    xfree(text);
}

/* The text summary lists up to SIM_TEXT_MAX_WORKLOADS workloads: its
 * summary object leaves perWorkload out beyond that, and the text says how
 * many there are; the full summary (-o json) still lists each one. */
static void test_text_summary_counts_workloads_it_does_not_list(void **state)
{
    (void)state;
    struct run r;
    run_text(&r, "apiVersion: cueue.dev/v1alpha1\nkind: Scenario\nspec:\n  actions:\n"
                 "  - at: 1s\n    repeat: {count: 101}\n    runFor: 1s\n"
                 "    apply: {apiVersion: kueue.x-k8s.io/v1beta1, kind: Workload, metadata: "
                 "{name: \"w-${i}\"}, spec: {queueName: lq, podSets: [{name: main, count: 1, "
                 "template: {spec: {containers: [{name: c, image: x, resources: {requests: "
                 "{cpu: '1'}}}]}}}]}}\n---\n", -1);
    assert_int_equal(r.rc, 0);
    assert_int_equal(json_array_size(json_object_get(r.summary, "perWorkload")), 101);
    json_t *brief = sim_observer_summary_for_text(r.s);
    assert_null(json_object_get(brief, "perWorkload"));
    char *text = sim_summary_text(brief);
    assert_non_null(strstr(text, "(101 workloads: -o json lists each one)"));
    xfree(text);
    json_decref(brief);
    run_release(&r);
    run_text(&r, repeated, -1);
    brief = sim_observer_summary_for_text(r.s);
    assert_int_equal(json_array_size(json_object_get(brief, "perWorkload")), 3);
    text = sim_summary_text(brief);
    assert_non_null(strstr(text, "default/w-2"));
    xfree(text);
    json_decref(brief);
    run_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeated_bare_workloads_wait_run_and_finish),
        cmocka_unit_test(test_until_stops_the_run_and_counts_held_usage),
        cmocka_unit_test(test_rejected_manifest_stops_with_the_api_message),
        cmocka_unit_test(test_missing_namespace_is_an_error),
        cmocka_unit_test(test_merge_patch_and_index_substitution),
        cmocka_unit_test(test_index_substitution_copies_and_keeps_template),
        cmocka_unit_test(test_repeated_apply_matches_one_by_one),
        cmocka_unit_test(test_repeated_apply_rejects_an_occurrence_whose_name_is_invalid),
        cmocka_unit_test(test_a_patch_that_cannot_apply_stops_the_run),
        cmocka_unit_test(test_capacity_for_a_missing_pool_is_a_warning),
        cmocka_unit_test(test_deleted_workloads_are_counted),
        cmocka_unit_test(test_changed_pending_message_is_recorded_again),
        cmocka_unit_test(test_recreated_workload_is_a_new_workload),
        cmocka_unit_test(test_text_summary_counts_workloads_it_does_not_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
