/*
 * Flavor fallback (beyond Kueue, issue "Kueue-faithful admission engine" §3):
 * a workload whose capacity never came on a flavor is evicted by the control
 * plane with that flavor to avoid until a time (api_workload.avoid_flavors);
 * flavor assignment then skips it, the workload is looked at again when the
 * avoidance ends, and Preempted messages carry the owner job's uid.
 */
#include "test_engine_fixture.h"

/* The seed's shape: on-demand first, dws as plan B. */
static struct fx *seed_like(void)
{
    struct fx *f = fx_new(NULL);
    fx_ns(f, "default", NULL);
    fx_flavor(f, "on-demand", "pool=on-demand");
    fx_flavor(f, "dws", "pool=dws");
    fx_cq(f, "cq", NULL, "on-demand:cpu=32,google.com/tpu=16;dws:cpu=1000,google.com/tpu=1000");
    fx_lq(f, "default", "lq", "cq");
    return f;
}

static struct api_workload *tpu_job(struct fx *f, const char *name)
{
    struct api_workload *w = fx_wl(f, "default", name, "lq", 0, 1);
    fx_ps(f, w, "main", 4, "cpu=8,google.com/tpu=4");
    return w;
}

static void avoid(struct fx *f, struct api_workload *w, const char *flavor, int64_t until_ms)
{
    w->avoid_flavors = fx_alloc(f, sizeof(*w->avoid_flavors));
    w->avoid_flavors[0].flavor = fx_str(f, flavor);
    w->avoid_flavors[0].until_ms = until_ms;
    w->n_avoid_flavors = 1;
}

static void avoided_flavor_is_skipped_for_the_next_one(void **state)
{
    (void)state;
    struct fx *f = seed_like();
    struct api_workload *w = tpu_job(f, "job1");
    avoid(f, w, "on-demand", f->now_ms + 600000);
    fx_submit(f, w);
    fx_schedule(f);
    const struct eng_decision *d = fx_find(f, ENG_RESERVE, "job1");
    assert_non_null(d);
    assert_string_equal(fx_flavor_of(d, "main", "google.com/tpu"), "dws");
    fx_free(f);
}

static void avoidance_that_ended_no_longer_counts(void **state)
{
    (void)state;
    struct fx *f = seed_like();
    struct api_workload *w = tpu_job(f, "job1");
    avoid(f, w, "on-demand", f->now_ms - 1);
    fx_submit(f, w);
    fx_schedule(f);
    const struct eng_decision *d = fx_find(f, ENG_RESERVE, "job1");
    assert_non_null(d);
    assert_string_equal(fx_flavor_of(d, "main", "google.com/tpu"), "on-demand");
    fx_free(f);
}

static void only_flavor_avoided_waits_and_wakes_when_avoidance_ends(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_ns(f, "default", NULL);
    fx_flavor(f, "on-demand", "pool=on-demand");
    fx_cq(f, "cq", NULL, "on-demand:cpu=32,google.com/tpu=16");
    fx_lq(f, "default", "lq", "cq");
    struct api_workload *w = tpu_job(f, "job1");
    int64_t until = f->now_ms + 300000;
    avoid(f, w, "on-demand", until);
    fx_submit(f, w);
    fx_schedule(f);
    const struct eng_decision *d = fx_find(f, ENG_PENDING, "job1");
    assert_non_null(d);
    assert_string_equal(d->reason, "NoMatchingFlavor");
    assert_string_equal(d->message, "couldn't assign flavors to pod set main: flavor on-demand is "
                                    "avoided after a capacity failure");
    assert_null(fx_find(f, ENG_RESERVE, "job1"));
    assert_int_equal(f->res.next_wakeup_ms, until);
    /* nothing changes before the end */
    f->now_ms = until - 1;
    fx_schedule(f);
    assert_null(fx_find(f, ENG_RESERVE, "job1"));
    /* at the end the workload is looked at again, without any upsert */
    f->now_ms = until;
    fx_schedule(f);
    d = fx_find(f, ENG_RESERVE, "job1");
    assert_non_null(d);
    assert_string_equal(fx_flavor_of(d, "main", "google.com/tpu"), "on-demand");
    fx_free(f);
}

static void preempted_message_names_the_owner_job(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_ns(f, "default", NULL);
    fx_flavor(f, "f", NULL);
    struct api_cluster_queue *cq = fx_cq_make(f, "cq", NULL, "f:cpu=4");
    cq->within_cluster_queue = PP_LOWER_PRIORITY;
    fx_cq_apply(f, cq);
    fx_lq(f, "default", "lq", "cq");
    struct api_workload *low = fx_wl(f, "default", "low", "lq", 0, 1);
    fx_ps(f, low, "main", 1, "cpu=4");
    low->job_uid = fx_str(f, "job-uid-of-low");
    fx_submit(f, low);
    fx_admit(f);
    struct api_workload *high = fx_wl(f, "default", "high", "lq", 100, 2);
    fx_ps(f, high, "main", 1, "cpu=4");
    high->job_uid = fx_str(f, "job-uid-of-high");
    fx_submit(f, high);
    fx_schedule(f);
    const struct eng_decision *d = fx_find(f, ENG_PREEMPT, "low");
    assert_non_null(d);
    assert_non_null(strstr(d->message, "(UID: uid-high, JobUID: job-uid-of-high)"));
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(avoided_flavor_is_skipped_for_the_next_one),
        cmocka_unit_test(avoidance_that_ended_no_longer_counts),
        cmocka_unit_test(only_flavor_avoided_waits_and_wakes_when_avoidance_ends),
        cmocka_unit_test(preempted_message_names_the_owner_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
