/*
 * Partial admission (kueue.md §2.7): the largest counts between minCount and
 * count that fit, found by binary search; the admission records them.
 */
#include "test_engine_fixture.h"

static struct fx *cluster(const char *quotas)
{
    struct fx *f = fx_new(NULL);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "f", NULL);
    fx_cq(f, "cq", NULL, quotas);
    fx_lq(f, "ns", "q", "cq");
    return f;
}

static void reduced_count_is_the_largest_that_fits(void **state)
{
    (void)state;
    struct fx *f = cluster("f:cpu=50");
    struct api_workload *w = fx_wl(f, "ns", "w", "q", 0, 1);
    struct api_podset *p = fx_ps(f, w, "main", 50, "cpu=2");
    p->min_count = 20;
    fx_submit(f, w);
    fx_schedule(f);
    const struct eng_decision *d = fx_find(f, ENG_RESERVE, "w");
    assert_non_null(d);
    assert_int_equal(d->admission.podsets[0].count, 25);
    assert_int_equal(api_reslist_get(&d->admission.podsets[0].resource_usage, "cpu"), 50000);
    fx_free(f);
}

static void below_min_count_stays_pending_with_the_full_request_message(void **state)
{
    (void)state;
    struct fx *f = cluster("f:cpu=30");
    struct api_workload *w = fx_wl(f, "ns", "w", "q", 0, 1);
    struct api_podset *p = fx_ps(f, w, "main", 50, "cpu=2");
    p->min_count = 20;
    fx_submit(f, w);
    fx_schedule(f);
    assert_null(fx_find(f, ENG_RESERVE, "w"));
    assert_string_equal(fx_find(f, ENG_PENDING, "w")->message,
                        "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor f, "
                        "previously considered podsets requests (0) + current podset request (100) > "
                        "maximum capacity (30)");
    fx_free(f);
}

static void full_count_is_kept_when_it_fits(void **state)
{
    (void)state;
    struct fx *f = cluster("f:cpu=200");
    struct api_workload *w = fx_wl(f, "ns", "w", "q", 0, 1);
    struct api_podset *p = fx_ps(f, w, "main", 50, "cpu=2");
    p->min_count = 20;
    fx_submit(f, w);
    fx_schedule(f);
    assert_int_equal(fx_find(f, ENG_RESERVE, "w")->admission.podsets[0].count, 50);
    fx_free(f);
}

static void partial_admission_uses_what_others_left(void **state)
{
    (void)state;
    struct fx *f = cluster("f:cpu=10");
    struct api_workload *a = fx_wl(f, "ns", "a", "q", 0, 1);
    fx_ps(f, a, "main", 1, "cpu=3");
    fx_submit(f, a);
    fx_admit(f);
    struct api_workload *w = fx_wl(f, "ns", "w", "q", 0, 2);
    struct api_podset *p = fx_ps(f, w, "main", 10, "cpu=1");
    p->min_count = 2;
    fx_submit(f, w);
    fx_schedule(f);
    assert_int_equal(fx_find(f, ENG_RESERVE, "w")->admission.podsets[0].count, 7);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reduced_count_is_the_largest_that_fits),
        cmocka_unit_test(below_min_count_stays_pending_with_the_full_request_message),
        cmocka_unit_test(full_count_is_kept_when_it_fits),
        cmocka_unit_test(partial_admission_uses_what_others_left),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
