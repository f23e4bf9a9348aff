/*
 * Equivalence-hash parking under BestEffortFIFO (kueue.md §2.2): when a
 * workload is parked for NoFit or no preemption candidates, the heap
 * workloads with the same scheduling shape are parked with it and told so.
 */
#include "test_engine_fixture.h"

static struct fx *cluster(enum api_queueing_strategy s)
{
    struct fx *f = fx_new(NULL);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "f", NULL);
    struct api_cluster_queue *cq = fx_cq_make(f, "cq", NULL, "f:cpu=4");
    cq->queueing_strategy = s;
    fx_cq_apply(f, cq);
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

static void equivalent_workloads_are_bypassed(void **state)
{
    (void)state;
    struct fx *f = cluster(QS_BEST_EFFORT_FIFO);
    struct api_workload *r = job(f, "running", 1, "3");
    fx_admit(f);
    job(f, "big-1", 2, "2");
    job(f, "big-2", 3, "2");
    job(f, "big-3", 4, "2");
    job(f, "small", 5, "1");
    fx_schedule(f);
    assert_string_equal(fx_find(f, ENG_PENDING, "big-1")->message,
                        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                        "flavor f, 1 more needed");
    for (int i = 2; i <= 3; i++) {
        char n[16];
        snprintf(n, sizeof(n), "big-%d", i);
        const struct eng_decision *d = fx_find(f, ENG_PENDING, n);
        assert_non_null(d);
        assert_string_equal(d->reason, "WaitingForQuota");
        assert_string_equal(d->message,
                            "Bypassed scheduling evaluation because an equivalent workload recently failed");
    }
    assert_non_null(fx_find(f, ENG_RESERVE, "small"));
    fx_apply_all(f);
    /* capacity freed: all of them are evaluated again, the first fits */
    fx_finish(f, r);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "big-1"));
    fx_free(f);
}

static void strict_fifo_does_not_bypass(void **state)
{
    (void)state;
    struct fx *f = cluster(QS_STRICT_FIFO);
    job(f, "running", 1, "3");
    fx_admit(f);
    job(f, "big-1", 2, "2");
    job(f, "big-2", 3, "2");
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_PENDING, "big-1"));
    assert_null(fx_find(f, ENG_PENDING, "big-2"));
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(equivalent_workloads_are_bypassed),
        cmocka_unit_test(strict_fifo_does_not_bypass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
