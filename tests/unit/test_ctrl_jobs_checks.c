/*
 * The ProvisioningRequest admission check's unhappy paths (kueue.md §3.2,
 * §3.5) on the seed: a failed request turns the check to Retry, the
 * Workload is evicted (AdmissionCheck) and re-queued after the check's
 * backoff (60 s, then 120 s...) with the next attempt's request; past
 * backoffLimitCount the check is Rejected and the Workload deactivated;
 * CapacityRevoked rejects a running Workload at once. Virtual time.
 */
#include "test_ctrl_jobs_fixture.h"

#define JOB2 "train-tpu-v6e-dws-2"

static struct fx *seed_two_jobs(void)
{
    struct fx *f = fx_new(NULL);
    fx_seed_queues(f);
    fx_submit_example(f, "job-tpu-v6e-dws.yaml", "1");
    fx_submit_example(f, "job-tpu-v6e-dws.yaml", "2");
    return f;
}

static char *pr_name(const json_t *wl, int attempt)
{
    return xasprintf("%s-dws-prov-%d", api_name(wl), attempt);
}

static int64_t requeue_at(const json_t *wl)
{
    int64_t at = 0;
    timefmt_parse(jx_or_empty(JX_STR(wl, "status", "requeueState", "requeueAt")), &at);
    return at;
}

/* Fail attempt n of job 2's request; returns the Workload afterwards. */
static json_t *fail_attempt(struct fx *f, int n)
{
    json_t *wl = fx_workload_of(f, "Job", JOB2);
    char *name = pr_name(wl, n);
    json_t *pr = fx_get(f, KIND_PROVISIONINGREQUEST, "default", name);
    if (!pr)
        fail_msg("no ProvisioningRequest %s", name);
    json_decref(pr);
    fx_set_pr_cond(f, name, "Failed", "True", "Failed", "Provisioning Request has failed.");
    xfree(name);
    json_decref(wl);
    return fx_workload_of(f, "Job", JOB2);
}

static void failed_request_retries_after_backoff(void **state)
{
    (void)state;
    struct fx *f = seed_two_jobs();
    int64_t t0 = f->clock.now_ms;
    json_t *wl = fail_attempt(f, 1);
    assert_true(api_cond_is_true(wl, "Evicted"));
    assert_string_equal(fx_reason(wl, "Evicted"), "AdmissionCheck");
    assert_string_equal(fx_message(wl, "Evicted"),
                        "Evicted due to AdmissionCheck in Retry state: \"dws-prov\" (Retrying "
                        "after failure: Provisioning Request has failed.)");
    assert_false(api_cond_is_true(wl, "QuotaReserved"));
    assert_null(JX_GET(wl, "status", "admission"));
    assert_string_equal(api_cond_status(wl, "Requeued"), "False");
    assert_string_equal(fx_reason(wl, "Requeued"), "AdmissionCheck");
    assert_int_equal(requeue_at(wl), t0 + 60000);
    json_t *ac = fx_check(wl, "dws-prov");
    assert_string_equal(JX_STR(ac, "state"), "Pending");
    assert_int_equal(JX_INT(ac, 0, "retryCount"), 1);
    assert_string_equal(JX_STR(ac, "message"), "Reset to Pending after eviction. Previously: Retry");
    char *old = pr_name(wl, 1);
    json_t *gone = fx_get(f, KIND_PROVISIONINGREQUEST, "default", old);
    assert_null(gone);
    xfree(old);
    json_t *job = fx_get(f, KIND_JOB, "default", JOB2);
    assert_true(JX_BOOL(job, false, "spec", "suspend"));
    json_decref(job);
    assert_true(fx_traces(f, "AdmissionCheckUpdated", NULL) >= 1);

    /* not before the backoff */
    json_decref(wl);
    fx_advance(f, 59000);
    wl = fx_workload_of(f, "Job", JOB2);
    assert_false(api_cond_is_true(wl, "QuotaReserved"));
    json_decref(wl);
    fx_advance(f, 1000);
    wl = fx_workload_of(f, "Job", JOB2);
    assert_true(api_cond_is_true(wl, "Requeued"));
    assert_string_equal(fx_reason(wl, "Requeued"), "BackoffFinished");
    assert_true(api_cond_is_true(wl, "QuotaReserved"));
    assert_string_equal(fx_flavor(wl, "main", "google.com/tpu"), "dws");
    char *next = pr_name(wl, 2);
    json_t *pr2 = fx_get(f, KIND_PROVISIONINGREQUEST, "default", next);
    assert_non_null(pr2);
    json_decref(pr2);
    xfree(next);

    /* the second failure waits twice as long */
    int64_t t1 = f->clock.now_ms;
    json_decref(wl);
    wl = fail_attempt(f, 2);
    assert_int_equal(requeue_at(wl), t1 + 120000);
    assert_int_equal(JX_INT(fx_check(wl, "dws-prov"), 0, "retryCount"), 2);
    json_decref(wl);
    fx_free(f);
}

static void rejected_past_backoff_limit_deactivates(void **state)
{
    (void)state;
    struct fx *f = seed_two_jobs();
    const int64_t waits[] = {60000, 120000, 240000};
    for (int n = 1; n <= 3; n++) {
        json_t *wl = fail_attempt(f, n);
        assert_string_equal(fx_reason(wl, "Evicted"), "AdmissionCheck");
        json_decref(wl);
        fx_advance(f, waits[n - 1]);
    }
    json_t *wl = fail_attempt(f, 4);
    assert_false(JX_BOOL(wl, true, "spec", "active"));
    assert_true(api_cond_is_true(wl, "Evicted"));
    assert_string_equal(fx_reason(wl, "Evicted"), "DeactivatedDueToAdmissionCheck");
    assert_string_equal(fx_message(wl, "Evicted"),
                        "The workload is deactivated due to AdmissionCheck in Rejected state: "
                        "\"dws-prov\" (Provisioning Request has failed.)");
    assert_null(api_cond_get(wl, "DeactivationTarget"));
    assert_false(api_cond_is_true(wl, "QuotaReserved"));
    assert_true(fx_has_event(f, api_name(wl), "AdmissionCheckRejected"));
    assert_true(fx_traces(f, "Deactivated", NULL) == 1);
    /* a deactivated Workload stays out of the queue */
    json_decref(wl);
    fx_advance(f, 3600 * 1000);
    wl = fx_workload_of(f, "Job", JOB2);
    assert_false(api_cond_is_true(wl, "QuotaReserved"));
    json_t *job = fx_get(f, KIND_JOB, "default", JOB2);
    assert_true(JX_BOOL(job, false, "spec", "suspend"));
    json_decref(job);
    json_decref(wl);
    fx_free(f);
}

static void capacity_revoked_rejects_a_running_workload(void **state)
{
    (void)state;
    struct fx *f = seed_two_jobs();
    json_t *wl = fx_workload_of(f, "Job", JOB2);
    char *name = pr_name(wl, 1);
    fx_set_pr_cond(f, name, "Provisioned", "True", "Provisioned", "ok");
    json_t *job = fx_get(f, KIND_JOB, "default", JOB2);
    json_t *pods = fx_owned(f, KIND_POD, api_uid(job));
    assert_int_equal(json_array_size(pods), 4);
    fx_set_all_pods(f, pods, "Running", true);
    fx_set_pr_cond(f, name, "CapacityRevoked", "True", "CapacityRevoked",
                   "Capacity provisioned for the Provisioning Request was reclaimed and is no "
                   "longer available in the cluster.");
    json_decref(wl);
    wl = fx_workload_of(f, "Job", JOB2);
    assert_false(JX_BOOL(wl, true, "spec", "active"));
    assert_string_equal(fx_reason(wl, "Evicted"), "DeactivatedDueToAdmissionCheck");
    json_decref(job);
    job = fx_get(f, KIND_JOB, "default", JOB2);
    assert_true(JX_BOOL(job, false, "spec", "suspend"));
    json_decref(pods);
    pods = fx_owned(f, KIND_POD, api_uid(job));
    assert_int_equal(json_array_size(pods), 0);
    assert_false(api_cond_is_true(wl, "QuotaReserved"));
    json_decref(pods);
    json_decref(job);
    xfree(name);
    json_decref(wl);
    fx_free(f);
}

/* Accepted with a Provisioned=False condition: the check stays Pending
 * and carries the request's progress message. */
static void pending_check_carries_the_request_progress(void **state)
{
    (void)state;
    struct fx *f = seed_two_jobs();
    json_t *wl = fx_workload_of(f, "Job", JOB2);
    char *name = pr_name(wl, 1);
    fx_set_pr_cond(f, name, "Accepted", "True", "SuccessfullyQueued",
                   "Provisioning Request was successfully queued.");
    fx_set_pr_cond(f, name, "Provisioned", "False", "NotProvisioned", "waiting for capacity");
    json_decref(wl);
    wl = fx_workload_of(f, "Job", JOB2);
    json_t *ac = fx_check(wl, "dws-prov");
    assert_string_equal(JX_STR(ac, "state"), "Pending");
    assert_string_equal(JX_STR(ac, "message"), "waiting for capacity");
    xfree(name);
    json_decref(wl);
    fx_free(f);
}

/* A Workload that finishes after its checks are gone (its
 * status.admissionChecks emptied) still has its ProvisioningRequest
 * deleted: the provisioning controller skips a finished Workload's event
 * only while no request exists at all. */
static void finished_workload_without_checks_loses_its_request(void **state)
{
    (void)state;
    struct fx *f = seed_two_jobs();
    json_t *wl = fx_workload_of(f, "Job", JOB2);
    char *name = pr_name(wl, 1);
    json_t *pr = fx_get(f, KIND_PROVISIONINGREQUEST, "default", name);
    assert_non_null(pr);
    json_decref(pr);
    json_t *cp = jx_deep_copy(wl);
    JX_DEL(cp, "status", "admissionChecks");
    api_cond_set(cp, "Finished", "True", "Succeeded", "done", f->clock.now_ms);
    fx_write_status(f, KIND_WORKLOAD, cp);
    json_decref(cp);
    fx_run(f);
    pr = fx_get(f, KIND_PROVISIONINGREQUEST, "default", name);
    assert_null(pr);
    xfree(name);
    json_decref(wl);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(failed_request_retries_after_backoff),
        cmocka_unit_test(rejected_past_backoff_limit_deactivates),
        cmocka_unit_test(capacity_revoked_rejects_a_running_workload),
        cmocka_unit_test(pending_check_carries_the_request_progress),
        cmocka_unit_test(finished_workload_without_checks_loses_its_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
