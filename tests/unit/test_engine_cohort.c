/*
 * Cohort quota arithmetic (kueue.md §2.1): borrowing from a flat cohort,
 * borrowingLimit, lendingLimit keeping private capacity, the no-overadmission
 * rule inside one call, and hierarchical cohorts with Cohort quotas.
 */
#include "test_engine_fixture.h"

static struct fx *cluster(void)
{
    struct fx *f = fx_new(NULL);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "f", NULL);
    return f;
}

static struct api_workload *job(struct fx *f, const char *name, const char *lq, int64_t created,
                                const char *cpu)
{
    char req[64];
    snprintf(req, sizeof(req), "cpu=%s", cpu);
    struct api_workload *w = fx_wl(f, "ns", name, lq, 0, created);
    fx_ps(f, w, "main", 1, req);
    fx_submit(f, w);
    return w;
}

/* Worked example of kueue.md §2.1: C = {a: 10, b: 6 with lendingLimit 2}. */
static void lending_limit_keeps_private_capacity(void **state)
{
    (void)state;
    struct fx *f = cluster();
    fx_cq(f, "a", "c", "f:cpu=10");
    fx_cq(f, "b", "c", "f:cpu=6/-/2");
    fx_lq(f, "ns", "qa", "a");
    fx_lq(f, "ns", "qb", "b");
    job(f, "a13", "qa", 1, "13");
    job(f, "a12", "qa", 2, "12");
    fx_schedule(f);
    const struct eng_decision *d = fx_find(f, ENG_PENDING, "a13");
    assert_string_equal(d->reason, "ExceedsMaxQuota");
    assert_string_equal(d->message,
                        "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor f, "
                        "previously considered podsets requests (0) + current podset request (13) > "
                        "maximum capacity (12)");
    const struct eng_decision *r = fx_find(f, ENG_RESERVE, "a12");
    assert_non_null(r);
    assert_true(r->borrowing);
    /* b still has its 4 private units */
    job(f, "b4", "qb", 3, "4");
    job(f, "b1", "qb", 4, "1");
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "b4"));
    assert_non_null(fx_find(f, ENG_PENDING, "b1"));
    struct eng_cq_status st;
    eng_cq_status(f->e, "a", &st);
    assert_int_equal(api_reslist_get(&st.reservation[0].total, "cpu"), 12000);
    assert_int_equal(api_reslist_get(&st.reservation[0].borrowed, "cpu"), 2000);
    eng_cq_status_release(&st);
    fx_free(f);
}

static void borrowing_limit_caps_maximum_capacity(void **state)
{
    (void)state;
    struct fx *f = cluster();
    fx_cq(f, "a", "c", "f:cpu=10/1");
    fx_cq(f, "b", "c", "f:cpu=6/-/2");
    fx_lq(f, "ns", "qa", "a");
    job(f, "a12", "qa", 1, "12");
    job(f, "a11", "qa", 2, "11");
    fx_schedule(f);
    const struct eng_decision *d = fx_find(f, ENG_PENDING, "a12");
    assert_string_equal(d->message,
                        "couldn't assign flavors to pod set main: insufficient quota for cpu in flavor f, "
                        "previously considered podsets requests (0) + current podset request (12) > "
                        "maximum capacity (11)");
    assert_non_null(fx_find(f, ENG_RESERVE, "a11"));
    fx_free(f);
}

static void without_cohort_there_is_no_borrowing(void **state)
{
    (void)state;
    struct fx *f = cluster();
    fx_cq(f, "a", NULL, "f:cpu=10");
    fx_cq(f, "b", NULL, "f:cpu=10");
    fx_lq(f, "ns", "qa", "a");
    job(f, "a11", "qa", 1, "11");
    fx_schedule(f);
    assert_string_equal(fx_find(f, ENG_PENDING, "a11")->reason, "ExceedsMaxQuota");
    fx_free(f);
}

/* Entries of one cycle consume cohort capacity in order: never more than
 * the capacity left by the earlier ones. */
static void no_overadmission_within_a_cycle(void **state)
{
    (void)state;
    struct fx *f = cluster();
    fx_cq(f, "a", "c", "f:cpu=4");
    fx_cq(f, "b", "c", "f:cpu=4");
    fx_lq(f, "ns", "qa", "a");
    fx_lq(f, "ns", "qb", "b");
    job(f, "a6", "qa", 1, "6");
    job(f, "b6", "qb", 2, "6");
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "a6"));
    assert_null(fx_find(f, ENG_RESERVE, "b6"));
    struct eng_cq_status st;
    eng_cq_status(f->e, "b", &st);
    assert_int_equal(st.pending, 1);
    eng_cq_status_release(&st);
    fx_free(f);
}

/* Entries that do not borrow go first (kueue.md §2.3 step 4). */
static void non_borrowing_entries_go_first(void **state)
{
    (void)state;
    struct fx *f = cluster();
    fx_cq(f, "a", "c", "f:cpu=4");
    fx_cq(f, "b", "c", "f:cpu=4");
    fx_lq(f, "ns", "qa", "a");
    fx_lq(f, "ns", "qb", "b");
    job(f, "a-borrow", "qa", 1, "6"); /* older, but borrows */
    job(f, "b-own", "qb", 2, "4");
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "b-own"));
    assert_null(fx_find(f, ENG_RESERVE, "a-borrow"));
    fx_free(f);
}

/* Among entries at the same borrowing level, higher priority goes first even
 * across ClusterQueues, then the older one. */
static void priority_orders_entries_across_cluster_queues(void **state)
{
    (void)state;
    struct fx *f = cluster();
    fx_cq(f, "a", "c", "f:cpu=2");
    fx_cq(f, "b", "c", "f:cpu=2");
    fx_cq(f, "z", "c", "f:cpu=2");
    fx_lq(f, "ns", "qa", "a");
    fx_lq(f, "ns", "qb", "b");
    struct api_workload *wa = fx_wl(f, "ns", "old-low", "qa", 0, 1);
    fx_ps(f, wa, "main", 1, "cpu=4");
    struct api_workload *wb = fx_wl(f, "ns", "new-high", "qb", 5, 2);
    fx_ps(f, wb, "main", 1, "cpu=4");
    fx_submit(f, wa);
    fx_submit(f, wb);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "new-high"));
    assert_null(fx_find(f, ENG_RESERVE, "old-low"));
    fx_free(f);
}

static void cohort_object_quota_is_a_shared_pool(void **state)
{
    (void)state;
    struct fx *f = cluster();
    fx_cohort(f, "root", NULL, "f:cpu=5");
    fx_cohort(f, "team", "root", NULL);
    fx_cq(f, "a", "team", "f:cpu=2");
    fx_lq(f, "ns", "qa", "a");
    job(f, "a8", "qa", 1, "8");
    job(f, "a7", "qa", 2, "7");
    fx_schedule(f);
    assert_string_equal(fx_find(f, ENG_PENDING, "a8")->reason, "ExceedsMaxQuota");
    const struct eng_decision *d = fx_find(f, ENG_RESERVE, "a7");
    assert_non_null(d);
    assert_true(d->borrowing);
    assert_string_equal(d->event_message,
                        "Quota reserved in ClusterQueue a, wait time since queued was 1000s; Flavors "
                        "considered: main: f(Fit;borrow=2)");
    fx_free(f);
}

static void released_quota_in_the_cohort_requeues_other_queues(void **state)
{
    (void)state;
    struct fx *f = cluster();
    fx_cq(f, "a", "c", "f:cpu=4");
    fx_cq(f, "b", "c", "f:cpu=0");
    fx_lq(f, "ns", "qa", "a");
    fx_lq(f, "ns", "qb", "b");
    struct api_workload *a = job(f, "a4", "qa", 1, "4");
    job(f, "b2", "qb", 2, "2");
    fx_schedule(f);
    fx_apply_reserve(f, a, fx_find(f, ENG_RESERVE, "a4"), true);
    fx_schedule(f);
    assert_int_equal(f->res.n, 0);
    fx_finish(f, a);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "b2"));
    fx_free(f);
}

static void unlimited_quotas_saturate(void **state)
{
    (void)state;
    struct fx *f = cluster();
    fx_cq(f, "a", "c", "f:cpu=9223372036854775807m");
    fx_cq(f, "b", "c", "f:cpu=9223372036854775807m");
    fx_lq(f, "ns", "qa", "a");
    job(f, "huge", "qa", 1, "1000000000");
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "huge"));
    fx_free(f);
}

/* The QuotaReserved event's wait time is whole seconds rounded to nearest
 * with ties to even (printf "%.0f"), and 0 when the workload was queued
 * after now. */
static void event_wait_time_rounds_half_to_even(void **state)
{
    (void)state;
    static const struct {
        int64_t created_ms;
        const char *text;
    } cases[] = {
        {1000000 - 2500, "2s"},  {1000000 - 3500, "4s"}, {1000000 - 3499, "3s"},
        {1000000 - 3501, "4s"},  {1000000 - 499, "0s"},  {1000000 - 500, "0s"},
        {1000000 - 1500, "2s"},  {1000000, "0s"},        {1000000 + 7000, "0s"},
        {1000000 - 120000, "120s"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct fx *f = cluster();
        fx_cq(f, "a", NULL, "f:cpu=1");
        fx_lq(f, "ns", "qa", "a");
        job(f, "w", "qa", cases[i].created_ms, "1");
        fx_schedule(f);
        const struct eng_decision *d = fx_find(f, ENG_RESERVE, "w");
        assert_non_null(d);
        char want[160];
        snprintf(want, sizeof(want), "Quota reserved in ClusterQueue a, wait time since queued was %s",
                 cases[i].text);
        assert_string_equal(d->message, "Quota reserved in ClusterQueue a");
        assert_string_equal(d->event_message, want);
        fx_free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lending_limit_keeps_private_capacity),
        cmocka_unit_test(borrowing_limit_caps_maximum_capacity),
        cmocka_unit_test(without_cohort_there_is_no_borrowing),
        cmocka_unit_test(no_overadmission_within_a_cycle),
        cmocka_unit_test(non_borrowing_entries_go_first),
        cmocka_unit_test(priority_orders_entries_across_cluster_queues),
        cmocka_unit_test(cohort_object_quota_is_a_shared_pool),
        cmocka_unit_test(released_quota_in_the_cohort_requeues_other_queues),
        cmocka_unit_test(unlimited_quotas_saturate),
        cmocka_unit_test(event_wait_time_rounds_half_to_even),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
