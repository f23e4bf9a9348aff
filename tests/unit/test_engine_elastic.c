/*
 * Elastic workload slices (kueue.md §5): a replacement slice keeps the
 * replaced slice's flavors, is charged only the delta, names the slice it
 * replaces, and the replaced slice stops holding quota.
 */
#include "test_engine_fixture.h"

static struct fx *seedlike(const char *on_demand_tpu)
{
    struct fx *f = fx_new(NULL);
    fx_ns(f, "default", NULL);
    fx_flavor(f, "on-demand", "pool=on-demand");
    fx_flavor(f, "dws", "pool=dws");
    char q[256];
    snprintf(q, sizeof(q), "on-demand:cpu=100,google.com/tpu=%s;dws:cpu=1000,google.com/tpu=1000",
             on_demand_tpu);
    fx_cq(f, "cq", NULL, q);
    fx_lq(f, "default", "q", "cq");
    return f;
}

static struct api_workload *slice(struct fx *f, const char *name, int32_t workers, const char *replaces)
{
    struct api_workload *w = fx_wl(f, "default", name, "q", 0, 1);
    fx_ps(f, w, "workers", workers, "cpu=1,google.com/tpu=4");
    w->elastic = true;
    if (replaces)
        w->replacement_for = fx_str(f, replaces);
    fx_submit(f, w);
    return w;
}

static void scale_up_slice_is_charged_only_the_delta_on_the_same_flavor(void **state)
{
    (void)state;
    struct fx *f = seedlike("24");
    slice(f, "job-gen1", 4, NULL);
    fx_admit(f);
    slice(f, "job-gen2", 6, "default/job-gen1");
    fx_schedule(f);
    const struct eng_decision *d = fx_find(f, ENG_RESERVE, "job-gen2");
    assert_non_null(d);
    assert_string_equal(fx_flavor_of(d, "workers", "google.com/tpu"), "on-demand");
    assert_int_equal(d->admission.podsets[0].count, 6);
    assert_int_equal(api_reslist_get(&d->admission.podsets[0].resource_usage, "google.com/tpu"), 24);
    assert_string_equal(d->replaces.name, "job-gen1");
    assert_int_equal(fx_count(f, ENG_PREEMPT), 0);
    struct eng_cq_status st;
    eng_cq_status(f->e, "cq", &st);
    assert_int_equal(api_reslist_get(&st.reservation[0].total, "google.com/tpu"), 24);
    assert_int_equal(st.reserving, 1);
    eng_cq_status_release(&st);
    fx_free(f);
}

static void replacement_slice_never_moves_to_another_flavor(void **state)
{
    (void)state;
    struct fx *f = seedlike("20");
    slice(f, "job-gen1", 4, NULL);
    fx_admit(f);
    slice(f, "job-gen2", 6, "default/job-gen1");
    fx_schedule(f);
    assert_null(fx_find(f, ENG_RESERVE, "job-gen2"));
    const struct eng_decision *d = fx_find(f, ENG_PENDING, "job-gen2");
    assert_non_null(d);
    assert_non_null(strstr(d->message, "could not assign dws flavor since the original workload is "
                                       "assigned: on-demand"));
    assert_non_null(strstr(d->message, "insufficient unused quota for google.com/tpu in flavor "
                                       "on-demand, 4 more needed"));
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scale_up_slice_is_charged_only_the_delta_on_the_same_flavor),
        cmocka_unit_test(replacement_slice_never_moves_to_another_flavor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
