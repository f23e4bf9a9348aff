/*
 * test_api_types: the typed views (types.h) and their decoders (object.h):
 * sorted maps, release functions, the seed's flavors and ClusterQueue in
 * Kueue's units, pod-set requests as Kueue computes them (the seed
 * RayJob's worker group, init containers, sidecars, overhead, limits), and
 * every status field of a Workload.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_api_lib.h"
#include "api/meta.h"
#include "api/object.h"
#include "api/selector.h"
#include "api/types.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/timefmt.h"

/* ---- maps ---- */

static void test_labels_sorted_set_get(void **state)
{
    (void)state;
    struct api_labels l = {0};
    static const char *const keys[] = {"m", "a", "z", "b", "y", "c"};
    for (size_t i = 0; i < 6; i++)
        api_labels_set(&l, keys[i], keys[i]);
    api_labels_set(&l, "m", "again");
    assert_int_equal(l.n, 6);
    for (size_t i = 1; i < l.n; i++)
        assert_true(strcmp(l.items[i - 1].key, l.items[i].key) < 0);
    assert_string_equal(api_labels_get(&l, "m"), "again");
    assert_string_equal(api_labels_get(&l, "a"), "a");
    assert_null(api_labels_get(&l, "q"));
    assert_null(api_labels_get(NULL, "a"));
    api_labels_set(&l, "n", NULL);
    assert_string_equal(api_labels_get(&l, "n"), "");
    api_labels_release(&l);
    assert_int_equal(l.n, 0);
    api_labels_release(&l); /* twice is harmless */
    api_labels_release(NULL);
}

static void test_reslist_sorted_set_get(void **state)
{
    (void)state;
    struct api_reslist r = {0};
    api_reslist_set(&r, "memory", 5);
    api_reslist_set(&r, "cpu", 3);
    api_reslist_set(&r, "google.com/tpu", 4);
    api_reslist_set(&r, "cpu", 7);
    assert_int_equal(r.n, 3);
    assert_string_equal(r.items[0].name, "cpu");
    assert_string_equal(r.items[1].name, "google.com/tpu");
    assert_string_equal(r.items[2].name, "memory");
    assert_int_equal(api_reslist_get(&r, "cpu"), 7);
    assert_int_equal(api_reslist_get(&r, "pods"), 0);
    assert_int_equal(api_reslist_get(NULL, "cpu"), 0);
    api_reslist_release(&r);
    api_reslist_release(&r);
}

static void test_release_zeroed_structs(void **state)
{
    (void)state;
    struct api_workload wl = {0};
    struct api_cluster_queue cq = {0};
    struct api_cohort co = {0};
    struct api_resource_flavor rf = {0};
    struct api_podset ps = {0};
    struct api_local_queue lq = {0};
    struct api_priority_class pc = {0};
    struct api_admission adm = {0};
    api_workload_release(&wl);
    api_cluster_queue_release(&cq);
    api_cohort_release(&co);
    api_resource_flavor_release(&rf);
    api_podset_release(&ps);
    api_local_queue_release(&lq);
    api_priority_class_release(&pc);
    api_admission_release(&adm);
    api_workload_release(NULL);
    api_cluster_queue_release(NULL);
    api_sel_req_release(NULL);
    api_node_term_release(NULL);
    api_label_selector_release(NULL);
    api_taint_release(NULL);
    api_toleration_release(NULL);
    api_podset_assignment_release(NULL);
    api_resource_group_release(NULL);
}

/* ---- the seed's queue objects ---- */

static json_t *seed_docs(void)
{
    char *yaml = t_seed_queue_yaml();
    json_t *docs = t_parse_ok(yaml);
    xfree(yaml);
    size_t i;
    json_t *doc;
    json_array_foreach(docs, i, doc)
        t_admit_ok(doc, "default");
    return docs;
}

static void test_seed_flavors(void **state)
{
    (void)state;
    json_t *docs = seed_docs();
    static const char *const names[] = {"default-cpu", "on-demand", "dws"};
    static const char *const pools[] = {"default-pool", "on-demand-pool", "dws-pool"};
    for (size_t i = 0; i < 3; i++) {
        struct api_resource_flavor rf;
        assert_int_equal(api_resource_flavor_from_json(json_array_get(docs, i), &rf), 0);
        assert_string_equal(rf.name, names[i]);
        assert_int_equal(rf.node_labels.n, 1);
        assert_string_equal(api_labels_get(&rf.node_labels, "cloud.google.com/gke-nodepool"),
                            pools[i]);
        assert_int_equal(rf.n_node_taints, 0);
        assert_null(rf.topology_name);
        api_resource_flavor_release(&rf);
    }
    json_decref(docs);
}

static void expect_quota(const struct api_flavor_quotas *f, const char *name, int64_t cpu_milli,
                         int64_t mem_bytes, int64_t tpu)
{
    assert_string_equal(f->name, name);
    assert_int_equal(f->n_resources, 3);
    assert_string_equal(f->resources[0].name, "cpu");
    assert_true(f->resources[0].nominal == cpu_milli);
    assert_string_equal(f->resources[1].name, "memory");
    assert_true(f->resources[1].nominal == mem_bytes);
    assert_string_equal(f->resources[2].name, "google.com/tpu");
    assert_true(f->resources[2].nominal == tpu);
    for (int i = 0; i < 3; i++) {
        assert_false(f->resources[i].has_borrowing_limit);
        assert_false(f->resources[i].has_lending_limit);
    }
}

static void test_seed_cluster_queue_in_kueue_units(void **state)
{
    (void)state;
    json_t *docs = seed_docs();
    struct api_cluster_queue cq;
    assert_int_equal(api_cluster_queue_from_json(json_array_get(docs, 3), &cq), 0);
    assert_string_equal(cq.name, "cluster-queue");
    assert_string_equal(cq.cohort, "");
    assert_int_equal(cq.n_groups, 1);
    const struct api_resource_group *g = &cq.groups[0];
    assert_int_equal(g->n_covered, 3);
    assert_string_equal(g->covered[0], "cpu");
    assert_string_equal(g->covered[1], "memory");
    assert_string_equal(g->covered[2], "google.com/tpu");
    assert_int_equal(g->n_flavors, 3); /* in preference order */
    expect_quota(&g->flavors[0], "default-cpu", 10000, 21474836480LL, 0);
    expect_quota(&g->flavors[1], "on-demand", 40000, 80530636800LL, 16);
    expect_quota(&g->flavors[2], "dws", 1000000000000LL, 1073741824000000000LL, 1000000000);
    assert_true(cq.has_namespace_selector); /* {} matches every namespace */
    struct api_labels any = {0};
    assert_true(api_label_selector_matches(&cq.namespace_selector, &any));
    assert_int_equal(cq.queueing_strategy, QS_BEST_EFFORT_FIFO);
    assert_int_equal(cq.when_can_borrow, FUNG_MAY_STOP_SEARCH);
    assert_int_equal(cq.when_can_preempt, FUNG_TRY_NEXT_FLAVOR);
    assert_int_equal(cq.preference, PREF_UNSET);
    assert_int_equal(cq.within_cluster_queue, PP_NEVER);
    assert_int_equal(cq.reclaim_within_cohort, PP_NEVER);
    assert_int_equal(cq.borrow_within_cohort, PP_NEVER);
    assert_false(cq.has_max_priority_threshold);
    assert_int_equal(cq.n_checks, 1);
    assert_string_equal(cq.checks[0].name, "dws-prov");
    assert_int_equal(cq.checks[0].n_on_flavors, 1);
    assert_string_equal(cq.checks[0].on_flavors[0], "dws");
    assert_int_equal(cq.stop_policy, STOP_NONE);
    assert_int_equal(cq.fair_weight_milli, 1000);
    api_cluster_queue_release(&cq);

    struct api_local_queue lq;
    assert_int_equal(api_local_queue_from_json(json_array_get(docs, 4), &lq), 0);
    assert_string_equal(lq.ns, "default");
    assert_string_equal(lq.name, "user-queue");
    assert_string_equal(lq.cluster_queue, "cluster-queue");
    assert_int_equal(lq.stop_policy, STOP_NONE);
    api_local_queue_release(&lq);
    json_decref(docs);
}

static void test_cluster_queue_variants(void **state)
{
    (void)state;
    /* v1beta2 spelling, nil selector, v1beta1 admissionChecks list, policies */
    json_t *docs = t_parse_ok(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: cq}\n"
        "spec:\n  cohortName: team\n  queueingStrategy: StrictFIFO\n"
        "  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor,"
        " preference: PreemptionOverBorrowing}\n"
        "  preemption: {withinClusterQueue: LowerOrNewerEqualPriority, reclaimWithinCohort: Any,"
        " borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}}\n"
        "  stopPolicy: HoldAndDrain\n  fairSharing: {weight: 0.5}\n"
        "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: f\n"
        "      resources:\n      - {name: cpu, nominalQuota: 1500m, borrowingLimit: 2,"
        " lendingLimit: 1}\n");
    json_t *doc = json_array_get(docs, 0);
    t_admit_ok(doc, NULL);
    assert_string_equal(JX_STR(doc, "apiVersion"), "kueue.x-k8s.io/v1beta1");
    struct api_cluster_queue cq;
    assert_int_equal(api_cluster_queue_from_json(doc, &cq), 0);
    assert_string_equal(cq.cohort, "team");
    assert_false(cq.has_namespace_selector); /* nil: matches no namespace */
    assert_int_equal(cq.queueing_strategy, QS_STRICT_FIFO);
    assert_int_equal(cq.when_can_borrow, FUNG_TRY_NEXT_FLAVOR);
    assert_int_equal(cq.preference, PREF_PREEMPTION_OVER_BORROWING);
    assert_int_equal(cq.within_cluster_queue, PP_LOWER_OR_NEWER_EQUAL_PRIORITY);
    assert_int_equal(cq.reclaim_within_cohort, PP_ANY);
    assert_int_equal(cq.borrow_within_cohort, PP_LOWER_PRIORITY);
    assert_true(cq.has_max_priority_threshold);
    assert_int_equal(cq.max_priority_threshold, 100);
    assert_int_equal(cq.stop_policy, STOP_HOLD_AND_DRAIN);
    assert_int_equal(cq.fair_weight_milli, 500);
    const struct api_resource_quota *q = &cq.groups[0].flavors[0].resources[0];
    assert_int_equal(q->nominal, 1500);
    assert_true(q->has_borrowing_limit);
    assert_int_equal(q->borrowing_limit, 2000);
    assert_true(q->has_lending_limit);
    assert_int_equal(q->lending_limit, 1000);
    api_cluster_queue_release(&cq);
    json_decref(docs);

    docs = t_parse_ok("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
                      "metadata: {name: cq}\nspec:\n  admissionChecks: [a, b]\n");
    doc = json_array_get(docs, 0);
    t_admit_ok(doc, NULL);
    assert_int_equal(api_cluster_queue_from_json(doc, &cq), 0);
    assert_int_equal(cq.n_checks, 2);
    assert_string_equal(cq.checks[1].name, "b");
    assert_int_equal(cq.checks[1].n_on_flavors, 0); /* every flavor */
    api_cluster_queue_release(&cq);
    json_decref(docs);
}

static void test_cohort_and_priority_class(void **state)
{
    (void)state;
    json_t *docs = t_parse_ok(
        "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: child}\n"
        "spec:\n  parentName: root\n  resourceGroups:\n  - coveredResources: [memory]\n"
        "    flavors:\n    - name: f\n      resources:\n      - {name: memory, nominalQuota: 1Gi,"
        " lendingLimit: 2Gi}\n---\napiVersion: kueue.x-k8s.io/v1beta1\n"
        "kind: WorkloadPriorityClass\nmetadata: {name: high}\nvalue: 1000\n");
    t_admit_ok(json_array_get(docs, 0), NULL);
    t_admit_ok(json_array_get(docs, 1), NULL);
    struct api_cohort co;
    assert_int_equal(api_cohort_from_json(json_array_get(docs, 0), &co), 0);
    assert_string_equal(co.parent, "root");
    assert_int_equal(co.groups[0].flavors[0].resources[0].nominal, 1073741824);
    assert_int_equal(co.groups[0].flavors[0].resources[0].lending_limit, 2147483648LL);
    assert_int_equal(co.fair_weight_milli, 1000);
    api_cohort_release(&co);
    struct api_priority_class pc;
    assert_int_equal(api_priority_class_from_json(json_array_get(docs, 1), &pc), 0);
    assert_string_equal(pc.name, "high");
    assert_int_equal(pc.value, 1000);
    api_priority_class_release(&pc);
    json_decref(docs);
    /* shape errors */
    json_t *bad = json_string("x");
    struct api_resource_flavor rf;
    assert_int_equal(api_resource_flavor_from_json(bad, &rf), CU_EINVAL);
    assert_int_equal(api_priority_class_from_json(bad, &pc), CU_EINVAL);
    struct api_workload wl;
    assert_int_equal(api_workload_from_json(bad, &wl), CU_EINVAL);
    json_decref(bad);
    bad = json_loads("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"resourceGroups\":[{"
                     "\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"f\",\"resources\":["
                     "{\"name\":\"cpu\",\"nominalQuota\":\"lots\"}]}]}]}}",
                     0, NULL);
    struct api_cluster_queue cq;
    assert_int_equal(api_cluster_queue_from_json(bad, &cq), CU_EINVAL);
    assert_int_equal(api_cohort_from_json(bad, &co), CU_EINVAL);
    json_decref(bad);
}

/* ---- pod sets ---- */

static void test_seed_rayjob_worker_podset(void **state)
{
    (void)state;
    char *yaml = t_seed_rayjob_yaml("1");
    json_t *docs = t_parse_ok(yaml);
    xfree(yaml);
    json_t *rj = json_array_get(docs, 0);
    t_admit_ok(rj, "default");
    json_t *wg = json_array_get(JX_GET(rj, "spec", "rayClusterSpec", "workerGroupSpecs"), 0);
    struct api_podset ps;
    assert_int_equal(api_podset_from_template(json_object_get(wg, "template"), "tpu-group", 4,
                                              &ps),
                     0);
    assert_string_equal(ps.name, "tpu-group");
    assert_int_equal(ps.count, 4);
    assert_int_equal(ps.requests.n, 3);
    assert_int_equal(api_reslist_get(&ps.requests, "cpu"), 8000);
    assert_true(api_reslist_get(&ps.requests, "memory") == 17179869184LL);
    assert_int_equal(api_reslist_get(&ps.requests, "google.com/tpu"), 4);
    assert_int_equal(api_reslist_get(&ps.requests, "pods"), 0); /* not derived here */
    assert_int_equal(ps.node_selector.n, 2);
    assert_string_equal(api_labels_get(&ps.node_selector, "cloud.google.com/gke-tpu-topology"),
                        "4x4");
    assert_int_equal(ps.n_tolerations, 2);
    assert_string_equal(ps.tolerations[1].key, "cloud.google.com/gke-queued");
    assert_string_equal(ps.tolerations[1].op, "Exists");
    assert_int_equal(ps.n_affinity_terms, 0);
    api_podset_release(&ps);
    json_t *head = JX_GET(rj, "spec", "rayClusterSpec", "headGroupSpec", "template");
    assert_int_equal(api_podset_from_template(head, "head", 1, &ps), 0);
    assert_int_equal(api_reslist_get(&ps.requests, "cpu"), 2000);
    assert_true(api_reslist_get(&ps.requests, "memory") == 4294967296LL);
    assert_string_equal(api_labels_get(&ps.node_selector, "cloud.google.com/gke-nodepool"),
                        "default-pool");
    api_podset_release(&ps);
    json_decref(docs);
}

static struct api_podset podset_of(const char *yaml)
{
    json_t *docs = t_parse_ok(yaml);
    struct api_podset ps;
    assert_int_equal(api_podset_from_template(json_array_get(docs, 0), NULL, 2, &ps), 0);
    json_decref(docs);
    return ps;
}

static void test_podset_requests_rules(void **state)
{
    (void)state;
    /* limits fill absent requests; containers add up */
    struct api_podset ps = podset_of(
        "spec:\n  containers:\n  - {name: a, resources: {requests: {cpu: 500m},"
        " limits: {cpu: 1, memory: 1Gi}}}\n  - {name: b, resources: {limits: {memory: 1Gi,"
        " nvidia.com/gpu: 1}}}\n");
    assert_string_equal(ps.name, "main");
    assert_int_equal(ps.count, 2);
    assert_int_equal(api_reslist_get(&ps.requests, "cpu"), 500);
    assert_true(api_reslist_get(&ps.requests, "memory") == 2147483648LL);
    assert_int_equal(api_reslist_get(&ps.requests, "nvidia.com/gpu"), 1);
    api_podset_release(&ps);
    /* the biggest init container wins when above the containers' sum */
    ps = podset_of("spec:\n  initContainers:\n  - {name: i1, resources: {requests: {cpu: 3}}}\n"
                   "  - {name: i2, resources: {requests: {cpu: 1, memory: 8Gi}}}\n"
                   "  containers:\n  - {name: a, resources: {requests: {cpu: 2, memory: 1Gi}}}\n");
    assert_int_equal(api_reslist_get(&ps.requests, "cpu"), 3000);
    assert_true(api_reslist_get(&ps.requests, "memory") == 8589934592LL);
    api_podset_release(&ps);
    /* a sidecar adds to the containers and to later init containers;
     * the overhead is added last */
    ps = podset_of("spec:\n  overhead: {cpu: 100m}\n  initContainers:\n"
                   "  - {name: side, restartPolicy: Always, resources: {requests: {cpu: 1}}}\n"
                   "  - {name: init, resources: {requests: {cpu: 2500m}}}\n"
                   "  containers:\n  - {name: a, resources: {requests: {cpu: 1}}}\n");
    /* containers 1 + sidecar 1 = 2; init 2.5 + sidecar 1 = 3.5 wins; + 0.1 */
    assert_int_equal(api_reslist_get(&ps.requests, "cpu"), 3600);
    api_podset_release(&ps);
    /* pod-level requests replace the containers' sum; affinity terms */
    ps = podset_of("spec:\n  resources: {requests: {cpu: 4}}\n  affinity:\n    nodeAffinity:\n"
                   "      requiredDuringSchedulingIgnoredDuringExecution:\n"
                   "        nodeSelectorTerms:\n        - matchExpressions:\n"
                   "          - {key: zone, operator: In, values: [a, b]}\n"
                   "  containers:\n  - {name: a, resources: {requests: {cpu: 1}}}\n");
    assert_int_equal(api_reslist_get(&ps.requests, "cpu"), 4000);
    assert_int_equal(ps.n_affinity_terms, 1);
    assert_int_equal(ps.affinity_terms[0].n_exprs, 1);
    assert_int_equal(ps.affinity_terms[0].exprs[0].n_values, 2);
    api_podset_release(&ps);
    /* sums saturate */
    ps = podset_of("spec:\n  containers:\n  - {name: a, resources: {requests: {memory: 5Ei}}}\n"
                   "  - {name: b, resources: {requests: {memory: 5Ei}}}\n");
    assert_true(api_reslist_get(&ps.requests, "memory") == INT64_MAX);
    api_podset_release(&ps);
    /* not a template */
    json_t *j = json_object();
    assert_int_equal(api_podset_from_template(j, "x", 1, &ps), CU_EINVAL);
    json_decref(j);
    j = json_loads("{\"spec\":{\"containers\":[{\"resources\":{\"requests\":{\"cpu\":\"x\"}}}]}}",
                   0, NULL);
    assert_int_equal(api_podset_from_template(j, "x", 1, &ps), CU_EINVAL);
    assert_null(ps.name);
    json_decref(j);
}

/* ---- workloads ---- */

static const char WORKLOAD[] =
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\nmetadata:\n  name: rayjob-x-1a2b3\n"
    "  namespace: default\n  uid: u-1\n  creationTimestamp: \"2026-01-02T03:04:05Z\"\n"
    "  annotations:\n    kueue.x-k8s.io/elastic-job: \"true\"\n"
    "    kueue.x-k8s.io/workload-slice-replacement-for: default/old\n"
    "    kueue.x-k8s.io/admission-gated-by: someone\n"
    "spec:\n  queueName: user-queue\n  priority: 7\n  priorityClassName: high\n"
    "  priorityClassSource: kueue.x-k8s.io/workloadpriorityclass\n  podSets:\n"
    "  - name: head\n    count: 1\n    template:\n      spec:\n        containers:\n"
    "        - {name: h, resources: {requests: {cpu: 2, memory: 4Gi}}}\n"
    "  - name: tpu-group\n    count: 4\n    minCount: 2\n    template:\n      spec:\n"
    "        containers:\n        - {name: w, resources: {requests: {cpu: 8, google.com/tpu: 4}}}\n"
    "status:\n  conditions:\n"
    "  - {type: QuotaReserved, status: \"True\", reason: QuotaReserved,"
    " lastTransitionTime: \"2026-01-02T03:05:00Z\"}\n"
    "  - {type: Admitted, status: \"True\", lastTransitionTime: \"2026-01-02T03:05:01Z\"}\n"
    "  - {type: Evicted, status: \"True\", reason: Preempted,"
    " lastTransitionTime: \"2026-01-02T03:06:00Z\"}\n"
    "  - {type: Requeued, status: \"False\", lastTransitionTime: \"2026-01-02T03:06:00Z\"}\n"
    "  admission:\n    clusterQueue: cluster-queue\n    podSetAssignments:\n"
    "    - name: head\n      flavors: {cpu: default-cpu, memory: default-cpu}\n"
    "      resourceUsage: {cpu: \"2\", memory: 4Gi}\n"
    "    - name: tpu-group\n      count: 4\n      flavors: {cpu: on-demand, google.com/tpu: on-demand}\n"
    "      resourceUsage: {cpu: \"32\", google.com/tpu: \"16\"}\n"
    "  requeueState: {count: 2, requeueAt: \"2026-01-02T04:00:00Z\"}\n"
    "  reclaimablePods:\n  - {name: tpu-group, count: 1}\n";

static int64_t ms_of(const char *ts)
{
    int64_t ms = 0;
    assert_int_equal(timefmt_parse(ts, &ms), 0);
    return ms;
}

static void test_workload_every_field(void **state)
{
    (void)state;
    json_t *docs = t_parse_ok(WORKLOAD);
    json_t *doc = json_array_get(docs, 0);
    struct api_workload wl;
    assert_int_equal(api_workload_from_json(doc, &wl), 0);
    assert_string_equal(wl.ns, "default");
    assert_string_equal(wl.name, "rayjob-x-1a2b3");
    assert_string_equal(wl.uid, "u-1");
    assert_true(wl.creation_ms == ms_of("2026-01-02T03:04:05Z"));
    assert_string_equal(wl.queue_name, "user-queue");
    assert_int_equal(wl.priority, 7);
    assert_string_equal(wl.priority_class, "high");
    assert_true(wl.active);
    assert_int_equal(wl.n_podsets, 2);
    assert_string_equal(wl.podsets[1].name, "tpu-group");
    assert_int_equal(wl.podsets[1].count, 4);
    assert_int_equal(wl.podsets[1].min_count, 2);
    assert_int_equal(api_reslist_get(&wl.podsets[1].requests, "google.com/tpu"), 4);
    assert_true(wl.has_admission);
    assert_string_equal(wl.admission.cluster_queue, "cluster-queue");
    assert_int_equal(wl.admission.n_podsets, 2);
    assert_int_equal(wl.admission.podsets[0].count, 1); /* absent: the pod set's count */
    assert_string_equal(api_labels_get(&wl.admission.podsets[0].flavors, "cpu"), "default-cpu");
    assert_true(api_reslist_get(&wl.admission.podsets[0].resource_usage, "memory") ==
                4294967296LL);
    assert_int_equal(api_reslist_get(&wl.admission.podsets[1].resource_usage, "cpu"), 32000);
    assert_true(wl.quota_reserved);
    assert_true(wl.quota_reserved_ms == ms_of("2026-01-02T03:05:00Z"));
    assert_true(wl.admitted);
    assert_false(wl.finished);
    assert_true(wl.evicted);
    assert_true(wl.evicted_ms == ms_of("2026-01-02T03:06:00Z"));
    assert_string_equal(wl.evicted_reason, "Preempted");
    assert_true(wl.requeued_false);
    assert_int_equal(wl.requeue_count, 2);
    assert_true(wl.requeue_at_ms == ms_of("2026-01-02T04:00:00Z"));
    assert_int_equal(wl.n_reclaimable, 1);
    assert_string_equal(wl.reclaimable[0].name, "tpu-group");
    assert_int_equal(wl.reclaimable[0].count, 1);
    assert_true(wl.elastic);
    assert_string_equal(wl.replacement_for, "default/old");
    assert_string_equal(wl.admission_gated_by, "someone");
    api_workload_release(&wl);
    json_decref(docs);
}

/* A status decoded again over a decoded Workload: the status fields follow
 * the new document (set and cleared), the others stay; a bad status empties
 * the Workload. */
static void test_workload_status_decoded_again(void **state)
{
    (void)state;
    json_t *docs = t_parse_ok(WORKLOAD);
    json_t *full = json_array_get(docs, 0);
    json_t *bare = json_deep_copy(full);
    json_object_del(bare, "status");
    struct api_workload wl, want;
    assert_int_equal(api_workload_from_json(bare, &wl), 0);
    assert_false(wl.has_admission);
    assert_int_equal(api_workload_status_from_json(full, &wl, false), 0);
    assert_int_equal(api_workload_from_json(full, &want), 0);
    assert_string_equal(wl.name, want.name);
    assert_int_equal(wl.n_podsets, 2);
    assert_true(wl.has_admission);
    assert_string_equal(wl.admission.cluster_queue, "cluster-queue");
    assert_int_equal(wl.admission.podsets[0].count, 1); /* from the kept pod sets */
    assert_int_equal(api_reslist_get(&wl.admission.podsets[1].resource_usage, "cpu"), 32000);
    assert_true(wl.quota_reserved && wl.admitted && wl.evicted && wl.requeued_false);
    assert_false(wl.finished);
    assert_true(wl.quota_reserved_ms == want.quota_reserved_ms);
    assert_true(wl.evicted_ms == want.evicted_ms);
    assert_string_equal(wl.evicted_reason, "Preempted");
    assert_int_equal(wl.requeue_count, 2);
    assert_true(wl.requeue_at_ms == want.requeue_at_ms);
    assert_int_equal(wl.n_reclaimable, 1);
    assert_string_equal(wl.reclaimable[0].name, "tpu-group");
    assert_true(wl.elastic);
    assert_string_equal(wl.admission_gated_by, "someone");
    /* the same admission kept as decoded, the rest decoded again */
    json_t *fin = json_deep_copy(full);
    JX_SET_NEW(json_array_get(JX_GET(fin, "status", "conditions"), 1), json_string("False"),
               "status");
    json_t *c = json_pack("{s:s, s:s}", "type", "Finished", "status", "True");
    json_array_append_new(JX_GET(fin, "status", "conditions"), c);
    assert_int_equal(api_workload_status_from_json(fin, &wl, true), 0);
    assert_true(wl.finished);
    assert_false(wl.admitted);
    assert_true(wl.has_admission);
    assert_string_equal(wl.admission.cluster_queue, "cluster-queue");
    assert_int_equal(wl.admission.n_podsets, 2);
    assert_int_equal(wl.n_reclaimable, 1);
    json_decref(fin);
    /* back to no status: every status field cleared, the rest kept */
    assert_int_equal(api_workload_status_from_json(bare, &wl, false), 0);
    assert_false(wl.has_admission || wl.quota_reserved || wl.admitted || wl.evicted ||
                 wl.requeued_false);
    assert_null(wl.admission.podsets);
    assert_null(wl.evicted_reason);
    assert_true(wl.evicted_ms == 0 && wl.quota_reserved_ms == 0 && wl.requeue_at_ms == 0);
    assert_int_equal(wl.requeue_count, 0);
    assert_int_equal(wl.n_reclaimable, 0);
    assert_int_equal(wl.n_podsets, 2);
    assert_string_equal(wl.queue_name, "user-queue");
    /* a quantity that does not parse */
    JX_SET_NEW(bare, json_loads("{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{\"name\":"
                                "\"head\",\"resourceUsage\":{\"cpu\":\"lots\"}}]}",
                                0, NULL),
               "status", "admission");
    assert_int_equal(api_workload_status_from_json(bare, &wl, false), CU_EINVAL);
    assert_null(wl.name);
    assert_int_equal(wl.n_podsets, 0);
    api_workload_release(&wl);
    api_workload_release(&want);
    json_decref(bare);
    json_decref(docs);
}

/* Whether the status fields of a and b are equal (strings by content). */
static void assert_same_status(const struct api_workload *a, const struct api_workload *b)
{
    assert_int_equal(a->has_admission, b->has_admission);
    assert_string_equal(a->admission.cluster_queue ? a->admission.cluster_queue : "-",
                        b->admission.cluster_queue ? b->admission.cluster_queue : "-");
    assert_int_equal(a->admission.n_podsets, b->admission.n_podsets);
    for (size_t i = 0; i < a->admission.n_podsets; i++) {
        const struct api_podset_assignment *x = &a->admission.podsets[i],
                                           *y = &b->admission.podsets[i];
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->count, y->count);
        assert_int_equal(x->flavors.n, y->flavors.n);
        for (size_t k = 0; k < x->flavors.n; k++) {
            assert_string_equal(x->flavors.items[k].key, y->flavors.items[k].key);
            assert_string_equal(x->flavors.items[k].value, y->flavors.items[k].value);
        }
        assert_int_equal(x->resource_usage.n, y->resource_usage.n);
        for (size_t k = 0; k < x->resource_usage.n; k++) {
            assert_string_equal(x->resource_usage.items[k].name, y->resource_usage.items[k].name);
            assert_true(x->resource_usage.items[k].value == y->resource_usage.items[k].value);
        }
    }
    assert_int_equal(a->quota_reserved, b->quota_reserved);
    assert_int_equal(a->admitted, b->admitted);
    assert_int_equal(a->finished, b->finished);
    assert_int_equal(a->evicted, b->evicted);
    assert_true(a->evicted_ms == b->evicted_ms);
    assert_string_equal(a->evicted_reason ? a->evicted_reason : "-",
                        b->evicted_reason ? b->evicted_reason : "-");
    assert_int_equal(a->requeued_false, b->requeued_false);
    assert_true(a->requeue_at_ms == b->requeue_at_ms);
    assert_int_equal(a->requeue_count, b->requeue_count);
    assert_true(a->quota_reserved_ms == b->quota_reserved_ms);
    assert_int_equal(a->n_reclaimable, b->n_reclaimable);
    for (size_t i = 0; i < a->n_reclaimable; i++) {
        assert_string_equal(a->reclaimable[i].name, b->reclaimable[i].name);
        assert_int_equal(a->reclaimable[i].count, b->reclaimable[i].count);
    }
}

/* The status values of doc, found as the scheduler's memo finds them. */
static void status_values_of(const json_t *doc, struct api_wl_status_values *v)
{
    static const char *const types[API_WL_N_CONDS] = {"QuotaReserved", "Admitted", "Finished",
                                                      "Evicted", "Requeued"};
    const json_t *st = json_object_get(doc, "status");
    v->admission = json_object_get(st, "admission");
    v->requeue_state = json_object_get(st, "requeueState");
    v->reclaimable = json_object_get(st, "reclaimablePods");
    api_cond_find_all(json_object_get(st, "conditions"), types, API_WL_N_CONDS, v->cond);
}

/* A condition (new reference). */
static json_t *cond_of(const char *type, const char *status, const char *reason, const char *ltt)
{
    return json_pack("{s:s, s:s, s:s, s:s}", "type", type, "status", status, "reason", reason,
                     "lastTransitionTime", ltt);
}

/* Status writes as the control plane makes them (unchanged values shared
 * with the previous version, changed ones new), decoded again from the
 * values that changed only (api_workload_status_from_values, as the
 * scheduler's memo does) and in full: the same status fields, on a
 * random sequence of 400 writes over every value the decoding reads. */
static void test_workload_status_from_changed_values_equals_full(void **state)
{
    (void)state;
    json_t *docs = t_parse_ok(WORKLOAD);
    json_t *base = json_array_get(docs, 0);
    const json_t *adm0 = JX_GET(base, "status", "admission");
    /* the pools each status member is drawn from (NULL: absent) */
    json_t *adms[3] = {NULL, json_deep_copy(adm0), json_deep_copy(adm0)};
    JX_SET_NEW(adms[2], json_string("other-queue"), "clusterQueue");
    json_object_del(json_array_get(JX_GET(adms[2], "podSetAssignments"), 1), "count");
    json_t *rqs[3] = {NULL, json_pack("{s:i, s:s}", "count", 1, "requeueAt", "2026-01-02T04:00:00Z"),
                      json_pack("{s:i}", "count", 3)};
    json_t *rps[3] = {NULL, json_pack("[{s:s, s:i}]", "name", "tpu-group", "count", 1),
                      json_pack("[{s:s, s:i}, {s:s, s:i}]", "name", "head", "count", 1, "name",
                                "tpu-group", "count", 2)};
    static const char *const types[] = {"QuotaReserved", "Admitted", "Finished", "Evicted",
                                        "Requeued", "PodsReady"};
    static const char *const sts[] = {"True", "False"};
    static const char *const reasons[] = {"Preempted", "PodsReadyTimeout"};
    static const char *const ltts[] = {"2026-01-02T03:05:00Z", "2026-01-02T03:07:30Z"};
    json_t *conds[6][4]; /* per type: status x time x reason */
    for (int t = 0; t < 6; t++)
        for (int k = 0; k < 4; k++)
            conds[t][k] = cond_of(types[t], sts[k & 1], reasons[k >> 1], ltts[(k >> 1) ^ (k & 1)]);
    json_t *cur_conds[6] = {NULL}; /* the condition of each type the document holds */
    int cur_adm = 0, cur_rq = 0, cur_rp = 0;
    struct api_workload wl;
    json_t *prev = json_deep_copy(base);
    json_object_del(prev, "status");
    assert_int_equal(api_workload_from_json(prev, &wl), 0);
    struct api_wl_status_values was;
    status_values_of(prev, &was);
    uint32_t seed = 12345;
    for (int step = 0; step < 400; step++) {
        /* change one to three members; unchanged ones stay the same values */
        for (int n = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 3; n > 0; n--) {
            uint32_t r = (seed = seed * 1103515245u + 12345u) >> 16;
            switch (r % 9) {
            case 0: cur_adm = (int)(r / 9 % 3); break;
            case 1: cur_rq = (int)(r / 9 % 3); break;
            case 2: cur_rp = (int)(r / 9 % 3); break;
            default: {
                int t = (int)(r / 9 % 6), k = (int)(r / 54 % 5);
                cur_conds[t] = k == 4 ? NULL : conds[t][k];
            }
            }
        }
        json_t *doc = json_object();
        json_object_set(doc, "metadata", json_object_get(prev, "metadata"));
        json_object_set(doc, "spec", json_object_get(prev, "spec"));
        json_t *st = json_object();
        if (adms[cur_adm])
            json_object_set(st, "admission", adms[cur_adm]);
        if (rqs[cur_rq])
            json_object_set(st, "requeueState", rqs[cur_rq]);
        if (rps[cur_rp])
            json_object_set(st, "reclaimablePods", rps[cur_rp]);
        json_t *ca = json_array();
        for (int t = 5; t >= 0; t--) /* a second condition of a type is not read */
            if (cur_conds[t]) {
                json_array_append(ca, cur_conds[t]);
                if (t == step % 6)
                    json_array_append(ca, conds[t][(step / 6) % 4]);
            }
        json_object_set_new(st, "conditions", ca);
        json_object_set_new(doc, "status", st);
        struct api_wl_status_values now;
        status_values_of(doc, &now);
        assert_int_equal(api_workload_status_from_values(&now, &was, &wl), 0);
        struct api_workload want;
        assert_int_equal(api_workload_from_json(doc, &want), 0);
        assert_same_status(&wl, &want);
        assert_int_equal(wl.n_podsets, want.n_podsets);
        api_workload_release(&want);
        json_decref(prev); /* the values doc shares stay alive */
        prev = doc;
        was = now;
    }
    api_workload_release(&wl);
    json_decref(prev);
    for (int i = 0; i < 3; i++) {
        json_decref(adms[i]);
        json_decref(rqs[i]);
        json_decref(rps[i]);
    }
    for (int t = 0; t < 6; t++)
        for (int k = 0; k < 4; k++)
            json_decref(conds[t][k]);
    json_decref(docs);
}

static void test_workload_defaults_and_v1beta2(void **state)
{
    (void)state;
    json_t *docs = t_parse_ok(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w}\nspec:\n"
        "  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: low}\n"
        "  priority: 1\n  podSets:\n  - template:\n      spec:\n        containers: [{name: c}]\n");
    json_t *doc = json_array_get(docs, 0);
    t_admit_ok(doc, "ns1");
    assert_string_equal(JX_STR(doc, "spec", "priorityClassSource"),
                        "kueue.x-k8s.io/workloadpriorityclass");
    struct api_workload wl;
    assert_int_equal(api_workload_from_json(doc, &wl), 0);
    assert_string_equal(wl.ns, "ns1");
    assert_string_equal(wl.priority_class, "low");
    assert_string_equal(wl.podsets[0].name, "main"); /* defaulted */
    assert_int_equal(wl.podsets[0].count, 1);
    assert_int_equal(wl.podsets[0].min_count, 0);
    assert_true(wl.active);
    assert_false(wl.has_admission);
    assert_false(wl.quota_reserved);
    assert_false(wl.evicted);
    assert_null(wl.evicted_reason);
    assert_int_equal(wl.requeue_at_ms, 0);
    assert_false(wl.elastic);
    assert_null(wl.replacement_for);
    assert_null(wl.admission_gated_by);
    api_workload_release(&wl);
    json_decref(docs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_labels_sorted_set_get),
        cmocka_unit_test(test_reslist_sorted_set_get),
        cmocka_unit_test(test_release_zeroed_structs),
        cmocka_unit_test(test_seed_flavors),
        cmocka_unit_test(test_seed_cluster_queue_in_kueue_units),
        cmocka_unit_test(test_cluster_queue_variants),
        cmocka_unit_test(test_cohort_and_priority_class),
        cmocka_unit_test(test_seed_rayjob_worker_podset),
        cmocka_unit_test(test_podset_requests_rules),
        cmocka_unit_test(test_workload_every_field),
        cmocka_unit_test(test_workload_status_decoded_again),
        cmocka_unit_test(test_workload_status_from_changed_values_equals_full),
        cmocka_unit_test(test_workload_defaults_and_v1beta2),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
