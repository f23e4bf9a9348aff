/*
 * A Job's pods are created paced (jobs/batch.c create_missing, as
 * Kubernetes' Job controller paces them): at most 500 per sync, the rest a
 * second later, so one Job with a huge parallelism cannot create all its
 * pods at once (issue 13: parallelism 100000 made 100,000 pods in about a
 * second). Virtual time throughout.
 */
#include "test_ctrl_jobs_fixture.h"

/* A Job outside Kueue (no queue name) with parallelism = completions = n. */
static struct fx *wide_job(int n, bool indexed)
{
    struct fx *f = fx_new(NULL);
    char *y = xasprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n---\n"
                        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: wide\n"
                        "  namespace: default\nspec:\n  parallelism: %d\n  completions: %d\n"
                        "%s  template:\n    spec:\n      restartPolicy: Never\n"
                        "      containers:\n      - name: c\n        image: pause\n"
                        "        command: [\"true\"]\n",
                        n, n, indexed ? "  completionMode: Indexed\n" : "");
    fx_apply_text(f, y, "wide");
    xfree(y);
    fx_run(f);
    return f;
}

static size_t pods_of(struct fx *f)
{
    json_t *job = fx_get(f, KIND_JOB, "default", "wide");
    json_t *pods = fx_owned(f, KIND_POD, api_uid(job));
    size_t n = json_array_size(pods);
    json_decref(pods);
    json_decref(job);
    return n;
}

static void check_paced(bool indexed)
{
    struct fx *f = wide_job(1200, indexed);
    assert_int_equal(pods_of(f), 500); /* one sync's worth */
    fx_advance(f, 999);
    assert_int_equal(pods_of(f), 500); /* not before the pace */
    fx_advance(f, 1);
    assert_int_equal(pods_of(f), 1000);
    fx_advance(f, 1000);
    assert_int_equal(pods_of(f), 1200);
    json_t *job = fx_get(f, KIND_JOB, "default", "wide");
    assert_int_equal(JX_INT(job, -1, "status", "active"), 1200);
    json_decref(job);
    fx_advance(f, 5000);
    assert_int_equal(pods_of(f), 1200); /* and no more than asked */
    fx_free(f);
}

static void a_wide_job_gets_500_pods_a_second(void **state)
{
    (void)state;
    check_paced(false);
}

static void a_wide_indexed_job_gets_500_pods_a_second(void **state)
{
    (void)state;
    check_paced(true);
}

/* A Job within one sync's worth gets all its pods at once, as before. */
static void a_small_job_gets_every_pod_in_one_sync(void **state)
{
    (void)state;
    struct fx *f = wide_job(500, false);
    assert_int_equal(pods_of(f), 500);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_wide_job_gets_500_pods_a_second),
        cmocka_unit_test(a_wide_indexed_job_gets_500_pods_a_second),
        cmocka_unit_test(a_small_job_gets_every_pod_in_one_sync),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
