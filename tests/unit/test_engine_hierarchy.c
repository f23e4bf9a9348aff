/*
 * Hierarchical cohorts (kueue.md §2.1, §2.4 borrow levels, §2.6
 * hierarchical reclaim): Cohort objects with parents, borrow level = height
 * of the lowest subtree that fits, reclaiming from another team's subtree.
 */
#include "test_engine_fixture.h"

static struct fx *teams(enum api_preempt_policy reclaim)
{
    struct fx *f = fx_new(NULL);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "f", NULL);
    fx_cohort(f, "root", NULL, NULL);
    fx_cohort(f, "team1", "root", NULL);
    fx_cohort(f, "team2", "root", NULL);
    struct api_cluster_queue *a = fx_cq_make(f, "a", "team1", "f:cpu=2");
    a->reclaim_within_cohort = reclaim;
    fx_cq_apply(f, a);
    fx_cq(f, "b", "team1", "f:cpu=2");
    fx_cq(f, "c", "team2", "f:cpu=4");
    fx_lq(f, "ns", "qa", "a");
    fx_lq(f, "ns", "qc", "c");
    return f;
}

static struct api_workload *job(struct fx *f, const char *name, const char *lq, int32_t prio,
                                const char *cpu)
{
    char req[32];
    snprintf(req, sizeof(req), "cpu=%s", cpu);
    struct api_workload *w = fx_wl(f, "ns", name, lq, prio, 1);
    fx_ps(f, w, "main", 1, req);
    fx_submit(f, w);
    return w;
}

static void borrow_level_is_the_height_of_the_lowest_subtree_that_fits(void **state)
{
    (void)state;
    struct fx *f = teams(PP_NEVER);
    job(f, "in-team", "qa", 0, "3");
    fx_schedule(f);
    assert_string_equal(fx_find(f, ENG_RESERVE, "in-team")->event_message,
                        "Quota reserved in ClusterQueue a, wait time since queued was 1000s; Flavors "
                        "considered: main: f(Fit;borrow=1)");
    fx_free(f);
    f = teams(PP_NEVER);
    job(f, "from-root", "qa", 0, "5");
    fx_schedule(f);
    assert_string_equal(fx_find(f, ENG_RESERVE, "from-root")->event_message,
                        "Quota reserved in ClusterQueue a, wait time since queued was 1000s; Flavors "
                        "considered: main: f(Fit;borrow=2)");
    fx_free(f);
}

static void team_takes_back_its_subtree_quota(void **state)
{
    (void)state;
    struct fx *f = teams(PP_ANY);
    job(f, "wc", "qc", 10, "6");
    fx_admit(f);
    job(f, "wa", "qa", 0, "3");
    fx_schedule(f);
    const struct eng_decision *p = fx_find(f, ENG_PREEMPT, "wc");
    assert_non_null(p);
    assert_string_equal(p->reason, "InCohortReclamation");
    assert_string_equal(p->message,
                        "Preempted to accommodate a workload (UID: uid-wa, JobUID: UNKNOWN) due to "
                        "reclamation within the cohort; preemptor path: /root/team1/a; preemptee path: "
                        "/root/team2/c");
    fx_free(f);
}

static void cohort_quota_and_lending_limit_nest(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "f", NULL);
    fx_cohort(f, "root", NULL, "f:cpu=10");
    fx_cohort(f, "team", "root", "f:cpu=4/-/1"); /* lends only 1 of its 4 */
    fx_cq(f, "a", "team", "f:cpu=0");
    fx_cq(f, "z", "root", "f:cpu=0");
    fx_lq(f, "ns", "qa", "a");
    fx_lq(f, "ns", "qz", "z");
    job(f, "z-all", "qz", 0, "11");
    job(f, "z12", "qz", 0, "12");
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "z-all"));
    assert_string_equal(fx_find(f, ENG_PENDING, "z12")->reason, "ExceedsMaxQuota");
    fx_apply_all(f);
    job(f, "a3", "qa", 0, "3");
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "a3"));
    fx_free(f);
}

static void cohort_cycle_disables_its_queues(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "f", NULL);
    fx_cohort(f, "x", "y", NULL);
    fx_cohort(f, "y", "x", NULL);
    fx_cq(f, "a", "x", "f:cpu=2");
    fx_lq(f, "ns", "qa", "a");
    job(f, "w", "qa", 0, "1");
    fx_schedule(f);
    assert_null(fx_find(f, ENG_RESERVE, "w"));
    /* Kueue says nothing here; eng_explain says why */
    struct eng_explanation x;
    assert_int_equal(eng_explain(f->e, "ns", "w", f->now_ms, &x), 0);
    assert_string_equal(x.reason, "Pending");
    assert_non_null(strstr(x.message, "ClusterQueue a is not scheduled: the parents of its "
                                      "cohort x form a cycle"));
    eng_explanation_release(&x);
    fx_cohort(f, "y", NULL, NULL); /* cycle removed */
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "w"));
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(borrow_level_is_the_height_of_the_lowest_subtree_that_fits),
        cmocka_unit_test(team_takes_back_its_subtree_quota),
        cmocka_unit_test(cohort_quota_and_lending_limit_nest),
        cmocka_unit_test(cohort_cycle_disables_its_queues),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
