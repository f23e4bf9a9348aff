/*
 * eng_explain (cueue's extension): position in queue, the quota that blocks
 * a pending workload and who holds it, and an admission-time estimate from
 * running a copy of the engine forward over the expected ends.
 */
#include "test_engine_fixture.h"

static struct fx *cluster(void)
{
    struct fx *f = fx_new(NULL);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "f", NULL);
    fx_cq(f, "cq", NULL, "f:cpu=4");
    fx_lq(f, "ns", "q", "cq");
    return f;
}

static struct api_workload *job(struct fx *f, const char *name, int64_t created, const char *cpu)
{
    char req[32];
    snprintf(req, sizeof(req), "cpu=%s", cpu);
    struct api_workload *w = fx_wl(f, "ns", name, "q", 0, created);
    fx_ps(f, w, "main", 1, req);
    fx_submit(f, w);
    return w;
}

static void pending_workload_is_explained(void **state)
{
    (void)state;
    struct fx *f = cluster();
    job(f, "r1", 1, "2");
    job(f, "r2", 2, "2");
    fx_admit(f);
    eng_set_expected_end(f->e, "ns", "r1", f->now_ms + 60000);
    eng_set_expected_end(f->e, "ns", "r2", f->now_ms + 120000);
    job(f, "w3", 3, "3");
    job(f, "w4", 4, "1");
    fx_schedule(f);

    struct eng_explanation x;
    assert_int_equal(eng_explain(f->e, "ns", "w3", f->now_ms, &x), 0);
    assert_int_equal(x.position, 0);
    assert_string_equal(x.reason, "WaitingForQuota");
    assert_int_equal(x.n_blockers, 1);
    assert_string_equal(x.blockers[0].flavor, "f");
    assert_string_equal(x.blockers[0].resource, "cpu");
    assert_int_equal(x.blockers[0].needed, 3000);
    assert_int_equal(x.blockers[0].n_holders, 2);
    assert_string_equal(x.blockers[0].holders[0].name, "r1");
    /* r1 ends at +60s (2 free), r2 at +120s: w3 needs 3 */
    assert_int_equal(x.estimated_admission_ms, f->now_ms + 120000);
    eng_explanation_release(&x);

    assert_int_equal(eng_explain(f->e, "ns", "w4", f->now_ms, &x), 0);
    assert_int_equal(x.position, 1);
    assert_int_equal(x.estimated_admission_ms, f->now_ms + 60000);
    eng_explanation_release(&x);

    /* the engine itself was not changed */
    fx_schedule(f);
    assert_int_equal(f->res.n, 0);
    assert_int_equal(eng_explain(f->e, "ns", "nope", f->now_ms, &x), CU_ENOTFOUND);
    fx_free(f);
}

/* The estimate reaches past the workloads running now: e2 (4 cpu, runs
 * 20 s once admitted) waits for e1 (ends at +20 s); e3 waits for e2, so
 * +40 s. Without e2's run time e3 has no estimate. */
static void run_times_carry_the_estimate_through_generations(void **state)
{
    (void)state;
    struct fx *f = cluster();
    job(f, "e1", 1, "4");
    fx_admit(f);
    eng_set_expected_end(f->e, "ns", "e1", f->now_ms + 20000);
    job(f, "e2", 2, "4");
    job(f, "e3", 3, "2");
    fx_schedule(f);
    struct eng_explanation x;
    assert_int_equal(eng_explain(f->e, "ns", "e3", f->now_ms, &x), 0);
    assert_int_equal(x.estimated_admission_ms, 0); /* e2's run time unknown */
    eng_explanation_release(&x);
    eng_set_expected_runtime(f->e, "ns", "e2", 20000);
    assert_int_equal(eng_explain(f->e, "ns", "e2", f->now_ms, &x), 0);
    assert_int_equal(x.estimated_admission_ms, f->now_ms + 20000);
    eng_explanation_release(&x);
    assert_int_equal(eng_explain(f->e, "ns", "e3", f->now_ms, &x), 0);
    assert_int_equal(x.estimated_admission_ms, f->now_ms + 40000);
    eng_explanation_release(&x);
    fx_free(f);
}

static void unknown_ends_give_no_estimate(void **state)
{
    (void)state;
    struct fx *f = cluster();
    job(f, "r1", 1, "4");
    fx_admit(f);
    job(f, "w", 2, "1");
    fx_schedule(f);
    struct eng_explanation x;
    assert_int_equal(eng_explain(f->e, "ns", "w", f->now_ms, &x), 0);
    assert_int_equal(x.estimated_admission_ms, 0);
    eng_explanation_release(&x);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pending_workload_is_explained),
        cmocka_unit_test(run_times_carry_the_estimate_through_generations),
        cmocka_unit_test(unknown_ends_give_no_estimate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
