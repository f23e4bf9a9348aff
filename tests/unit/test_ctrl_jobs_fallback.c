/*
 * Beyond Kueue: flavor fallback on stockout (ctrl_config.flavor_fallback).
 * On the seed, a ProvisioningRequest that stays queued past
 * fallback_provreq_timeout_ms, or admitted pods that find no node within
 * fallback_node_wait_ms, evict the Workload (NoCapacity, requeued at once)
 * and mark the failed flavor in cueue.dev/avoid-flavors for
 * fallback_flavor_backoff_ms. Off by default: then nothing moves.
 */
#include "test_ctrl_jobs_fixture.h"

#define JOB1 "train-tpu-v6e-dws-1"
#define JOB2 "train-tpu-v6e-dws-2"

static void fallback_on(struct ctrl_config *cfg)
{
    cfg->flavor_fallback = true;
    cfg->fallback_provreq_timeout_ms = 10 * 60 * 1000;
    cfg->fallback_node_wait_ms = 15 * 60 * 1000;
    cfg->fallback_flavor_backoff_ms = 30 * 60 * 1000;
}

/* The message of the last "Evicted" trace record of wl with reason NoCapacity
 * (the Workload itself may already hold a new reservation: it is requeued
 * at once), or NULL. Borrowed from the trace. */
static const char *fallback_eviction(struct fx *f, const json_t *wl)
{
    char *key = xasprintf("default/%s", api_name(wl));
    const char *msg = NULL;
    size_t i;
    json_t *r;
    json_array_foreach(f->trace, i, r) {
        if (!strcmp(jx_or_empty(JX_STR(r, "event")), "Evicted") &&
            !strcmp(jx_or_empty(JX_STR(r, "workload")), key) &&
            !strcmp(jx_or_empty(JX_STR(r, "reason")), "NoCapacity"))
            msg = JX_STR(r, "message");
    }
    xfree(key);
    return msg;
}

/* The until-time of flavor in the Workload's avoid annotation, 0 if none. */
static int64_t avoided_until(const json_t *wl, const char *flavor)
{
    const char *text = api_annotation(wl, "cueue.dev/avoid-flavors");
    json_t *m = text ? json_loads(text, 0, NULL) : NULL;
    int64_t at = 0;
    if (m && JX_STR(m, flavor))
        timefmt_parse(JX_STR(m, flavor), &at);
    json_decref(m);
    return at;
}

static void queued_request_past_timeout_falls_back(void **state)
{
    (void)state;
    struct fx *f = fx_new(fallback_on);
    fx_seed_queues(f);
    fx_submit_example(f, "job-tpu-v6e-dws.yaml", "1");
    fx_submit_example(f, "job-tpu-v6e-dws.yaml", "2");
    json_t *wl = fx_workload_of(f, "Job", JOB2);
    char *pr = xasprintf("%s-dws-prov-1", api_name(wl));
    json_decref(wl);
    fx_advance(f, 10 * 60 * 1000 - 1000);
    wl = fx_workload_of(f, "Job", JOB2);
    assert_null(fallback_eviction(f, wl));
    json_decref(wl);

    fx_advance(f, 1000);
    int64_t now = f->clock.now_ms;
    wl = fx_workload_of(f, "Job", JOB2);
    char *want = xasprintf("No capacity in flavor(s) [dws]: ProvisioningRequest %s was not "
                           "provisioned within 10m; trying the next flavor",
                           pr);
    assert_non_null(fallback_eviction(f, wl));
    assert_string_equal(fallback_eviction(f, wl), want);
    assert_int_equal(avoided_until(wl, "dws"), now + 30 * 60 * 1000);
    assert_int_equal(avoided_until(wl, "on-demand"), 0);
    /* requeued at once, like a preemption; the job never ran */
    assert_string_equal(fx_reason(wl, "Requeued"), "NoCapacity");
    assert_true(api_cond_is_true(wl, "Requeued"));
    json_t *job = fx_get(f, KIND_JOB, "default", JOB2);
    assert_true(JX_BOOL(job, false, "spec", "suspend"));
    json_decref(job);
    xfree(want);
    xfree(pr);
    json_decref(wl);
    fx_free(f);
}

static void pods_without_nodes_fall_back(void **state)
{
    (void)state;
    struct fx *f = fx_new(fallback_on);
    fx_seed_queues(f); /* no on-demand-pool NodePool: its pods never get a node */
    fx_submit_example(f, "job-tpu-v6e-dws.yaml", "1");
    fx_advance(f, 15 * 60 * 1000);
    json_t *wl = fx_workload_of(f, "Job", JOB1);
    const char *msg = fallback_eviction(f, wl);
    assert_non_null(msg);
    assert_non_null(strstr(msg, "[on-demand]"));
    assert_non_null(strstr(msg, "4 pod(s) found no node within 15m"));
    assert_true(avoided_until(wl, "on-demand") > 0);
    json_decref(wl);
    fx_free(f);
}

static void without_fallback_nothing_moves(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_seed_queues(f);
    fx_submit_example(f, "job-tpu-v6e-dws.yaml", "1");
    fx_submit_example(f, "job-tpu-v6e-dws.yaml", "2");
    fx_advance(f, 20 * 60 * 1000);
    json_t *wl = fx_workload_of(f, "Job", JOB2);
    assert_true(api_cond_is_true(wl, "QuotaReserved"));
    assert_null(api_annotation(wl, "cueue.dev/avoid-flavors"));
    json_decref(wl);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(queued_request_past_timeout_falls_back),
        cmocka_unit_test(pods_without_nodes_fall_back),
        cmocka_unit_test(without_fallback_nothing_moves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
