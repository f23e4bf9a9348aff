/*
 * flavorFungibility (kueue.md §2.4 steps 4-5) and flavor scan progress kept
 * across cycles (§2.5).
 */
#include "test_engine_fixture.h"

static struct fx *cohort_ab(enum api_fungibility borrow, enum api_fungibility preempt,
                            enum api_fung_preference pref)
{
    struct fx *f = fx_new(NULL);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "x", "only=x");
    fx_flavor(f, "y", "only=y");
    struct api_cluster_queue *a = fx_cq_make(f, "a", "c", "x:cpu=1;y:cpu=2");
    a->when_can_borrow = borrow;
    a->when_can_preempt = preempt;
    a->preference = pref;
    a->within_cluster_queue = PP_LOWER_PRIORITY;
    fx_cq_apply(f, a);
    fx_cq(f, "lender", "c", "x:cpu=10;y:cpu=0");
    fx_lq(f, "ns", "qa", "a");
    struct api_workload *r = fx_wl(f, "ns", "running", "qa", 0, 1);
    struct api_podset *p = fx_ps(f, r, "main", 1, "cpu=2");
    fx_ps_selector(f, p, "only=y");
    fx_submit(f, r);
    fx_admit(f);
    struct api_workload *w = fx_wl(f, "ns", "p", "qa", 5, 2);
    fx_ps(f, w, "main", 1, "cpu=2");
    fx_submit(f, w);
    return f;
}

static void borrowing_over_preemption_is_the_default(void **state)
{
    (void)state;
    struct fx *f = cohort_ab(FUNG_TRY_NEXT_FLAVOR, FUNG_TRY_NEXT_FLAVOR, PREF_UNSET);
    fx_schedule(f);
    const struct eng_decision *d = fx_find(f, ENG_RESERVE, "p");
    assert_string_equal(fx_flavor_of(d, "main", "cpu"), "x");
    assert_true(d->borrowing);
    assert_int_equal(fx_count(f, ENG_PREEMPT), 0);
    assert_string_equal(d->event_message,
                        "Quota reserved in ClusterQueue a, wait time since queued was 1000s; Flavors "
                        "considered: main: x(Fit;borrow=1), y(preemptionMode=Preempt;insufficient "
                        "unused quota for cpu in flavor y, 2 more needed)");
    fx_free(f);
}

static void preemption_over_borrowing_preempts_instead(void **state)
{
    (void)state;
    struct fx *f = cohort_ab(FUNG_TRY_NEXT_FLAVOR, FUNG_TRY_NEXT_FLAVOR, PREF_PREEMPTION_OVER_BORROWING);
    fx_schedule(f);
    assert_null(fx_find(f, ENG_RESERVE, "p"));
    assert_non_null(fx_find(f, ENG_PREEMPT, "running"));
    fx_free(f);
}

static void may_stop_search_on_preemption_stops_at_the_first_preemptable_flavor(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "x", NULL);
    fx_flavor(f, "y", NULL);
    struct api_cluster_queue *a = fx_cq_make(f, "a", NULL, "x:cpu=2;y:cpu=4");
    a->when_can_preempt = FUNG_MAY_STOP_SEARCH;
    a->within_cluster_queue = PP_LOWER_PRIORITY;
    fx_cq_apply(f, a);
    fx_lq(f, "ns", "qa", "a");
    struct api_workload *r = fx_wl(f, "ns", "running", "qa", 0, 1);
    fx_ps(f, r, "main", 1, "cpu=2");
    fx_submit(f, r);
    fx_admit(f);
    struct api_workload *w = fx_wl(f, "ns", "p", "qa", 5, 2);
    fx_ps(f, w, "main", 1, "cpu=2");
    fx_submit(f, w);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_PREEMPT, "running"));
    /* the default (TryNextFlavor) would have used y */
    a->when_can_preempt = FUNG_TRY_NEXT_FLAVOR;
    fx_cq_apply(f, a);
    struct api_workload *w2 = fx_wl(f, "ns", "p2", "qa", 5, 3);
    fx_ps(f, w2, "main", 1, "cpu=2");
    fx_submit(f, w2);
    fx_schedule(f);
    assert_string_equal(fx_flavor_of(fx_find(f, ENG_RESERVE, "p2"), "main", "cpu"), "y");
    fx_free(f);
}

static struct fx *two_podsets(bool kueue_mode)
{
    struct eng_config cfg = {.kueue_one_head_per_cq = kueue_mode};
    struct fx *f = fx_new(&cfg);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "x", NULL);
    fx_flavor(f, "y", NULL);
    fx_cq(f, "a", NULL, "x:cpu=4;y:cpu=4");
    fx_lq(f, "ns", "qa", "a");
    struct api_workload *w = fx_wl(f, "ns", "w", "qa", 0, 1);
    fx_ps(f, w, "small", 1, "cpu=1");
    fx_ps(f, w, "huge", 1, "cpu=8");
    fx_submit(f, w);
    return f;
}

#define CYCLE1_MSG                                                                               \
    "couldn't assign flavors to pod set huge: insufficient quota for cpu in flavor x, previously " \
    "considered podsets requests (1) + current podset request (8) > maximum capacity (4), "        \
    "insufficient quota for cpu in flavor y, previously considered podsets requests (0) + current " \
    "podset request (8) > maximum capacity (4)"
#define CYCLE2_MSG                                                                               \
    "couldn't assign flavors to pod set huge: insufficient quota for cpu in flavor x, previously " \
    "considered podsets requests (0) + current podset request (8) > maximum capacity (4), "        \
    "insufficient quota for cpu in flavor y, previously considered podsets requests (1) + current " \
    "podset request (8) > maximum capacity (4)"

/* Pod set "small" stopped at flavor x with flavors left: the workload is
 * retried at once and the next cycle resumes the scan at y. */
static void scan_progress_resumes_at_the_next_flavor(void **state)
{
    (void)state;
    struct fx *f = two_podsets(true);
    fx_schedule(f);
    assert_string_equal(fx_find(f, ENG_PENDING, "w")->message, CYCLE1_MSG);
    fx_schedule(f);
    assert_string_equal(fx_find(f, ENG_PENDING, "w")->message, CYCLE2_MSG);
    fx_schedule(f); /* scan exhausted: parked, nothing new */
    assert_int_equal(f->res.n, 0);
    fx_free(f);
}

static void one_call_follows_the_scan_to_its_end(void **state)
{
    (void)state;
    struct fx *f = two_podsets(false);
    fx_schedule(f);
    assert_int_equal(fx_count(f, ENG_PENDING), 2);
    assert_string_equal(f->res.items[f->res.n - 1].message, CYCLE2_MSG);
    struct eng_cq_status st;
    eng_cq_status(f->e, "a", &st);
    assert_int_equal(st.pending, 1);
    eng_cq_status_release(&st);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(borrowing_over_preemption_is_the_default),
        cmocka_unit_test(preemption_over_borrowing_preempts_instead),
        cmocka_unit_test(may_stop_search_on_preemption_stops_at_the_first_preemptable_flavor),
        cmocka_unit_test(scan_progress_resumes_at_the_next_flavor),
        cmocka_unit_test(one_call_follows_the_scan_to_its_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
