/*
 * Fair sharing (kueue.md §2.8): dominant resource shares, weights, the
 * admission tournament, and fair-sharing preemption (LessThanOrEqualTo-
 * FinalShare then LessThanInitialShare; reclaim within nominal).
 */
#include "test_engine_fixture.h"

static struct fx *cohort(bool fair, int64_t weight_a)
{
    struct eng_config cfg = {.fair_sharing = fair};
    struct fx *f = fx_new(&cfg);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "f", NULL);
    struct api_cluster_queue *a = fx_cq_make(f, "a", "c", "f:cpu=4");
    a->fair_weight_milli = weight_a;
    a->reclaim_within_cohort = PP_ANY;
    fx_cq_apply(f, a);
    fx_cq(f, "b", "c", "f:cpu=4");
    fx_cq(f, "z", "c", "f:cpu=5");
    fx_lq(f, "ns", "qa", "a");
    fx_lq(f, "ns", "qb", "b");
    return f;
}

static struct api_workload *job(struct fx *f, const char *name, const char *lq, int64_t created,
                                const char *cpu)
{
    char req[32];
    snprintf(req, sizeof(req), "cpu=%s", cpu);
    struct api_workload *w = fx_wl(f, "ns", name, lq, 0, created);
    fx_ps(f, w, "main", 1, req);
    fx_submit(f, w);
    return w;
}

/* a uses 6, b uses 5 of 13; one more 2-cpu workload fits. */
static void setup_usage(struct fx *f)
{
    job(f, "a-run", "qa", 1, "6");
    job(f, "b-run", "qb", 2, "5");
    fx_admit(f);
    job(f, "wa", "qa", 10, "2"); /* older */
    job(f, "wb", "qb", 20, "2");
}

static void classical_order_takes_the_older_head(void **state)
{
    (void)state;
    struct fx *f = cohort(false, 1000);
    setup_usage(f);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "wa"));
    assert_null(fx_find(f, ENG_RESERVE, "wb"));
    fx_free(f);
}

static void tournament_admits_the_lower_share_first(void **state)
{
    (void)state;
    struct fx *f = cohort(true, 1000);
    setup_usage(f);
    struct eng_cq_status st;
    eng_cq_status(f->e, "b", &st);
    assert_int_equal(st.weighted_share, 77); /* ceil(1 * 1000 / 13) */
    eng_cq_status_release(&st);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "wb"));
    assert_null(fx_find(f, ENG_RESERVE, "wa"));
    fx_free(f);
}

static void weight_lowers_the_share(void **state)
{
    (void)state;
    struct fx *f = cohort(true, 2000);
    setup_usage(f);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "wa"));
    assert_null(fx_find(f, ENG_RESERVE, "wb"));
    fx_free(f);
}

static void zero_weight_borrower_has_infinite_share(void **state)
{
    (void)state;
    struct fx *f = cohort(true, 0);
    job(f, "a-run", "qa", 1, "6");
    fx_admit(f);
    struct eng_cq_status st;
    eng_cq_status(f->e, "a", &st);
    assert_int_equal(st.weighted_share, INT64_MAX);
    eng_cq_status_release(&st);
    fx_free(f);
}

static struct fx *borrower_b(int64_t weight_a)
{
    struct fx *f = cohort(true, weight_a);
    for (int i = 1; i <= 6; i++) {
        char n[8];
        snprintf(n, sizeof(n), "b%d", i);
        job(f, n, "qb", i, "1");
        f->now_ms += 1000;
        fx_admit(f);
    }
    return f;
}

static void preemptor_within_nominal_reclaims(void **state)
{
    (void)state;
    struct fx *f = borrower_b(1000);
    struct api_cluster_queue *z = fx_cq_make(f, "z", "c", "f:cpu=0");
    fx_cq_apply(f, z); /* total 8: b uses 6, a needs 4 */
    job(f, "wa", "qa", 100, "4");
    fx_schedule(f);
    assert_int_equal(fx_count(f, ENG_PREEMPT), 2);
    assert_string_equal(fx_find(f, ENG_PREEMPT, "b6")->reason, "InCohortReclamation");
    assert_string_equal(fx_find(f, ENG_PREEMPT, "b5")->reason, "InCohortReclamation");
    fx_free(f);
}

static void fair_preemption_uses_both_rules(void **state)
{
    (void)state;
    struct fx *f = borrower_b(2000);
    struct api_cluster_queue *z = fx_cq_make(f, "z", "c", "f:cpu=1");
    fx_cq_apply(f, z); /* total 9: b uses 6 (borrows 2), a wants 5 (borrows 1) */
    job(f, "wa", "qa", 100, "5");
    fx_schedule(f);
    assert_int_equal(fx_count(f, ENG_PREEMPT), 2);
    const struct eng_decision *p6 = fx_find(f, ENG_PREEMPT, "b6");
    const struct eng_decision *p5 = fx_find(f, ENG_PREEMPT, "b5");
    assert_non_null(p6);
    assert_non_null(p5);
    assert_string_equal(p6->reason, "InCohortFairSharing");
    assert_string_equal(p6->message,
                        "Preempted to accommodate a workload (UID: uid-wa, JobUID: UNKNOWN) due to Fair "
                        "Sharing within the cohort; preemptor path: /c/a; preemptee path: /c/b");
    fx_free(f);
}

static void equal_weights_refuse_an_unfair_preemption(void **state)
{
    (void)state;
    struct fx *f = borrower_b(1000);
    struct api_cluster_queue *z = fx_cq_make(f, "z", "c", "f:cpu=1");
    fx_cq_apply(f, z);
    job(f, "wa", "qa", 100, "5");
    fx_schedule(f);
    assert_int_equal(fx_count(f, ENG_PREEMPT), 0);
    assert_string_equal(fx_find(f, ENG_PENDING, "wa")->reason, "WaitingForQuota");
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(classical_order_takes_the_older_head),
        cmocka_unit_test(tournament_admits_the_lower_share_first),
        cmocka_unit_test(weight_lowers_the_share),
        cmocka_unit_test(zero_weight_borrower_has_infinite_share),
        cmocka_unit_test(preemptor_within_nominal_reclaims),
        cmocka_unit_test(fair_preemption_uses_both_rules),
        cmocka_unit_test(equal_weights_refuse_an_unfair_preemption),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
