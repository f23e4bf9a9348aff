/*
 * Flavor assignment (kueue.md §2.4): node-label matching on the flavor's own
 * keys, taints and tolerations, missing resources and flavors, quota modes,
 * and Kueue's exact pending reasons and messages.
 */
#include "test_engine_fixture.h"

static struct fx *one_cq(const char *quotas)
{
    struct fx *f = fx_new(NULL);
    fx_ns(f, "ns", NULL);
    fx_cq(f, "cq", NULL, quotas);
    fx_lq(f, "ns", "lq", "cq");
    return f;
}

static void assert_pending(const struct fx *f, const char *wl, const char *reason, const char *msg)
{
    const struct eng_decision *d = fx_find(f, ENG_PENDING, wl);
    assert_non_null(d);
    assert_string_equal(d->reason, reason);
    assert_string_equal(d->message, msg);
}

static void request_above_maximum_capacity_is_exceeds_max_quota(void **state)
{
    (void)state;
    struct fx *f = one_cq("f1:cpu=4,memory=8Gi");
    fx_flavor(f, "f1", NULL);
    struct api_workload *w = fx_wl(f, "ns", "big", "lq", 0, 1);
    fx_ps(f, w, "main", 2, "cpu=3,memory=1Gi");
    fx_submit(f, w);
    fx_schedule(f);
    assert_pending(f, "big", "ExceedsMaxQuota",
                   "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor f1, "
                   "previously considered podsets requests (0) + current podset request (6) > "
                   "maximum capacity (4)");
    fx_free(f);
}

static void earlier_pod_sets_count_against_maximum_capacity(void **state)
{
    (void)state;
    struct fx *f = one_cq("f1:cpu=4");
    fx_flavor(f, "f1", NULL);
    struct api_workload *w = fx_wl(f, "ns", "two", "lq", 0, 1);
    fx_ps(f, w, "a", 1, "cpu=3");
    fx_ps(f, w, "b", 1, "cpu=1500m");
    fx_submit(f, w);
    fx_schedule(f);
    assert_pending(f, "two", "ExceedsMaxQuota",
                   "couldn't assign flavors to pod set b: insufficient quota for cpu in flavor f1, "
                   "previously considered podsets requests (3) + current podset request (1500m) > "
                   "maximum capacity (4)");
    fx_free(f);
}

static void untolerated_taint_is_no_matching_flavor(void **state)
{
    (void)state;
    struct fx *f = one_cq("tainted:cpu=4");
    fx_flavor_taint(f, "tainted", NULL, "dedicated=gpu:NoSchedule");
    struct api_workload *w = fx_wl(f, "ns", "w", "lq", 0, 1);
    fx_ps(f, w, "main", 1, "cpu=1");
    fx_submit(f, w);
    fx_schedule(f);
    assert_pending(f, "w", "NoMatchingFlavor",
                   "couldn't assign flavors to pod set main: untolerated taint {dedicated gpu "
                   "NoSchedule <nil>} in flavor tainted");
    fx_free(f);
}

static void toleration_lets_the_tainted_flavor_through(void **state)
{
    (void)state;
    struct fx *f = one_cq("tainted:cpu=4");
    fx_flavor_taint(f, "tainted", NULL, "dedicated=gpu:NoSchedule");
    struct api_workload *w = fx_wl(f, "ns", "w", "lq", 0, 1);
    struct api_podset *p = fx_ps(f, w, "main", 1, "cpu=1");
    fx_ps_tolerate(f, p, "dedicated", "NoSchedule");
    fx_submit(f, w);
    fx_schedule(f);
    assert_string_equal(fx_flavor_of(fx_find(f, ENG_RESERVE, "w"), "main", "cpu"), "tainted");
    fx_free(f);
}

static void prefer_no_schedule_taints_are_ignored(void **state)
{
    (void)state;
    struct fx *f = one_cq("soft:cpu=4");
    fx_flavor_taint(f, "soft", NULL, "dedicated=gpu:PreferNoSchedule");
    struct api_workload *w = fx_wl(f, "ns", "w", "lq", 0, 1);
    fx_ps(f, w, "main", 1, "cpu=1");
    fx_submit(f, w);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "w"));
    fx_free(f);
}

static void selector_is_matched_on_the_flavor_own_keys_only(void **state)
{
    (void)state;
    struct fx *f = one_cq("a:cpu=1;b:cpu=4");
    fx_flavor(f, "a", "pool=a");
    fx_flavor(f, "b", "pool=b,zone=z1");
    struct api_workload *w = fx_wl(f, "ns", "w", "lq", 0, 1);
    struct api_podset *p = fx_ps(f, w, "main", 1, "cpu=1");
    /* zone is not a key of flavor a: ignored there; pool=b rules a out */
    fx_ps_selector(f, p, "pool=b,zone=z1");
    struct api_workload *w2 = fx_wl(f, "ns", "w2", "lq", 0, 2);
    struct api_podset *p2 = fx_ps(f, w2, "main", 1, "cpu=1");
    fx_ps_selector(f, p2, "unrelated=x"); /* no flavor has the key: matches all */
    fx_submit(f, w);
    fx_submit(f, w2);
    fx_schedule(f);
    const struct eng_decision *d = fx_find(f, ENG_RESERVE, "w");
    assert_string_equal(fx_flavor_of(d, "main", "cpu"), "b");
    assert_string_equal(d->event_message,
                        "Quota reserved in ClusterQueue cq, wait time since queued was 1000s; Flavors "
                        "considered: main: a(NoFit;flavor a doesn't match node affinity)");
    assert_string_equal(fx_flavor_of(fx_find(f, ENG_RESERVE, "w2"), "main", "cpu"), "a");
    fx_free(f);
}

static void selector_mismatch_everywhere_lists_every_flavor(void **state)
{
    (void)state;
    struct fx *f = one_cq("a:cpu=1;b:cpu=4");
    fx_flavor(f, "a", "pool=a");
    fx_flavor(f, "b", "pool=b");
    struct api_workload *w = fx_wl(f, "ns", "w", "lq", 0, 1);
    struct api_podset *p = fx_ps(f, w, "main", 1, "cpu=1");
    fx_ps_selector(f, p, "pool=c");
    fx_submit(f, w);
    fx_schedule(f);
    assert_pending(f, "w", "NoMatchingFlavor",
                   "couldn't assign flavors to pod set main: flavor a doesn't match node affinity, "
                   "flavor b doesn't match node affinity");
    fx_free(f);
}

static void uncovered_resource_is_unavailable(void **state)
{
    (void)state;
    struct fx *f = one_cq("f1:cpu=4");
    fx_flavor(f, "f1", NULL);
    struct api_workload *w = fx_wl(f, "ns", "w", "lq", 0, 1);
    fx_ps(f, w, "main", 1, "cpu=1,nvidia.com/gpu=1");
    struct api_workload *z = fx_wl(f, "ns", "zero", "lq", 0, 2);
    fx_ps(f, z, "main", 1, "cpu=1,nvidia.com/gpu=0"); /* a zero request needs no flavor */
    fx_submit(f, w);
    fx_submit(f, z);
    fx_schedule(f);
    assert_pending(f, "w", "NoMatchingFlavor",
                   "couldn't assign flavors to pod set main: resource nvidia.com/gpu unavailable in "
                   "ClusterQueue");
    const struct eng_decision *d = fx_find(f, ENG_RESERVE, "zero");
    assert_non_null(d);
    assert_null(fx_flavor_of(d, "main", "nvidia.com/gpu"));
    assert_int_equal(d->admission.podsets[0].resource_usage.n, 1);
    fx_free(f);
}

static void ignore_undeclared_skips_uncovered_resources(void **state)
{
    (void)state;
    struct eng_config cfg = {.ignore_undeclared_resources = true};
    struct fx *f = fx_new(&cfg);
    fx_ns(f, "ns", NULL);
    fx_cq(f, "cq", NULL, "f1:cpu=4");
    fx_lq(f, "ns", "lq", "cq");
    fx_flavor(f, "f1", NULL);
    struct api_workload *w = fx_wl(f, "ns", "w", "lq", 0, 1);
    fx_ps(f, w, "main", 1, "cpu=1,nvidia.com/gpu=1");
    fx_submit(f, w);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "w"));
    fx_free(f);
}

static void missing_flavor_object_makes_the_cluster_queue_inactive(void **state)
{
    (void)state;
    struct fx *f = one_cq("f1:cpu=4;f2:cpu=4");
    fx_flavor(f, "f1", NULL);
    struct api_workload *w = fx_wl(f, "ns", "w", "lq", 0, 1);
    fx_ps(f, w, "main", 1, "cpu=1");
    fx_submit(f, w);
    fx_schedule(f);
    assert_pending(f, "w", "Suspended", "ClusterQueue cq is inactive");
    assert_null(fx_find(f, ENG_RESERVE, "w"));
    struct eng_cq_status st;
    assert_int_equal(eng_cq_status(f->e, "cq", &st), 0);
    assert_false(st.active);
    assert_string_equal(st.inactive_reason, "FlavorNotFound");
    assert_string_equal(st.inactive_message,
                        "Can't admit new workloads: references missing ResourceFlavor(s): f2.");
    assert_int_equal(st.pending, 1);
    eng_cq_status_release(&st);
    fx_flavor(f, "f2", NULL);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "w"));
    fx_free(f);
}

static void busy_quota_is_waiting_for_quota(void **state)
{
    (void)state;
    struct fx *f = one_cq("f1:cpu=4");
    fx_flavor(f, "f1", NULL);
    struct api_workload *a = fx_wl(f, "ns", "a", "lq", 0, 1);
    fx_ps(f, a, "main", 1, "cpu=3");
    struct api_workload *b = fx_wl(f, "ns", "b", "lq", 0, 2);
    fx_ps(f, b, "main", 1, "cpu=2");
    fx_submit(f, a);
    fx_submit(f, b);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "a"));
    assert_pending(f, "b", "WaitingForQuota",
                   "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                   "flavor f1, 1 more needed");
    /* the same status is not emitted twice */
    fx_schedule(f);
    assert_int_equal(f->res.n, 0);
    fx_free(f);
}

static void borrow_try_next_flavor_prefers_a_flavor_without_borrowing(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "x", NULL);
    fx_flavor(f, "y", NULL);
    struct api_cluster_queue *cq = fx_cq_make(f, "cq", "co", "x:cpu=1;y:cpu=4");
    cq->when_can_borrow = FUNG_TRY_NEXT_FLAVOR;
    fx_cq_apply(f, cq);
    fx_cq(f, "lender", "co", "x:cpu=10;y:cpu=0");
    fx_lq(f, "ns", "lq", "cq");
    struct api_workload *w = fx_wl(f, "ns", "w", "lq", 0, 1);
    fx_ps(f, w, "main", 1, "cpu=2");
    fx_submit(f, w);
    fx_schedule(f);
    const struct eng_decision *d = fx_find(f, ENG_RESERVE, "w");
    assert_string_equal(fx_flavor_of(d, "main", "cpu"), "y");
    assert_false(d->borrowing);
    assert_string_equal(d->event_message,
                        "Quota reserved in ClusterQueue cq, wait time since queued was 1000s; Flavors "
                        "considered: main: x(Fit;borrow=1)");
    fx_free(f);
}

static void may_stop_search_takes_the_first_flavor_even_if_it_borrows(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "x", NULL);
    fx_flavor(f, "y", NULL);
    fx_cq(f, "cq", "co", "x:cpu=1;y:cpu=4");
    fx_cq(f, "lender", "co", "x:cpu=10;y:cpu=0");
    fx_lq(f, "ns", "lq", "cq");
    struct api_workload *w = fx_wl(f, "ns", "w", "lq", 0, 1);
    fx_ps(f, w, "main", 1, "cpu=2");
    fx_submit(f, w);
    fx_schedule(f);
    const struct eng_decision *d = fx_find(f, ENG_RESERVE, "w");
    assert_string_equal(fx_flavor_of(d, "main", "cpu"), "x");
    assert_true(d->borrowing);
    fx_free(f);
}

static void pods_resource_counts_pods_when_covered(void **state)
{
    (void)state;
    struct fx *f = one_cq("f1:cpu=100,pods=3");
    fx_flavor(f, "f1", NULL);
    struct api_workload *w = fx_wl(f, "ns", "w", "lq", 0, 1);
    fx_ps(f, w, "main", 4, "cpu=1");
    fx_submit(f, w);
    fx_schedule(f);
    assert_pending(f, "w", "ExceedsMaxQuota",
                   "couldn't assign flavors to pod set main: insufficient quota for pods in flavor f1, "
                   "previously considered podsets requests (0) + current podset request (4) > maximum "
                   "capacity (3)");
    struct api_workload *w2 = fx_wl(f, "ns", "w2", "lq", 0, 2);
    fx_ps(f, w2, "main", 3, "cpu=1");
    fx_submit(f, w2);
    fx_schedule(f);
    const struct eng_decision *d = fx_find(f, ENG_RESERVE, "w2");
    assert_string_equal(fx_flavor_of(d, "main", "pods"), "f1");
    assert_int_equal(api_reslist_get(&d->admission.podsets[0].resource_usage, "pods"), 3);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(request_above_maximum_capacity_is_exceeds_max_quota),
        cmocka_unit_test(earlier_pod_sets_count_against_maximum_capacity),
        cmocka_unit_test(untolerated_taint_is_no_matching_flavor),
        cmocka_unit_test(toleration_lets_the_tainted_flavor_through),
        cmocka_unit_test(prefer_no_schedule_taints_are_ignored),
        cmocka_unit_test(selector_is_matched_on_the_flavor_own_keys_only),
        cmocka_unit_test(selector_mismatch_everywhere_lists_every_flavor),
        cmocka_unit_test(uncovered_resource_is_unavailable),
        cmocka_unit_test(ignore_undeclared_skips_uncovered_resources),
        cmocka_unit_test(missing_flavor_object_makes_the_cluster_queue_inactive),
        cmocka_unit_test(busy_quota_is_waiting_for_quota),
        cmocka_unit_test(borrow_try_next_flavor_prefers_a_flavor_without_borrowing),
        cmocka_unit_test(may_stop_search_takes_the_first_flavor_even_if_it_borrows),
        cmocka_unit_test(pods_resource_counts_pods_when_covered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
