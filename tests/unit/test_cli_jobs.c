/*
 * Job views: the closing line of `logs job/NAME` (Ray's submitter style),
 * pods in completion-index order, and the per-worker metrics table from the
 * job's cueue.dev/metrics annotation.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "test_cli_fixtures.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static void test_final_line(void **state)
{
    (void)state;
    json_t *running = J("{\"metadata\":{\"name\":\"train\"},\"status\":{\"conditions\":["
                        "{\"type\":\"Suspended\",\"status\":\"False\"}]}}");
    assert_null(cli__job_final_line(running));
    json_t *ok = J("{\"metadata\":{\"name\":\"train\"},\"status\":{\"conditions\":["
                   "{\"type\":\"SuccessCriteriaMet\",\"status\":\"True\"},"
                   "{\"type\":\"Complete\",\"status\":\"True\"}]}}");
    char *s = cli__job_final_line(ok);
    assert_string_equal(s, "Job 'train' succeeded");
    xfree(s);
    json_t *bad = J("{\"metadata\":{\"name\":\"train\"},\"status\":{\"conditions\":["
                    "{\"type\":\"Failed\",\"status\":\"True\",\"reason\":\"BackoffLimitExceeded\","
                    "\"message\":\"Job has reached the specified backoff limit\"}]}}");
    s = cli__job_final_line(bad);
    assert_string_equal(s, "Job 'train' failed: BackoffLimitExceeded: Job has reached the "
                           "specified backoff limit");
    xfree(s);
    json_t *not_yet = J("{\"metadata\":{\"name\":\"t\"},\"status\":{\"conditions\":["
                        "{\"type\":\"Complete\",\"status\":\"False\"}]}}");
    assert_null(cli__job_final_line(not_yet));
    json_decref(not_yet);
    json_decref(bad);
    json_decref(ok);
    json_decref(running);
}

static void test_pod_order_by_completion_index(void **state)
{
    (void)state;
    json_t *pods = J("["
        "{\"metadata\":{\"name\":\"t-2-x\",\"annotations\":{\"batch.kubernetes.io/job-completion-index\":\"2\"}}},"
        "{\"metadata\":{\"name\":\"t-10-x\",\"annotations\":{\"batch.kubernetes.io/job-completion-index\":\"10\"}}},"
        "{\"metadata\":{\"name\":\"z-none\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"}},"
        "{\"metadata\":{\"name\":\"t-0-x\",\"labels\":{\"batch.kubernetes.io/job-completion-index\":\"0\"}}},"
        "{\"metadata\":{\"name\":\"a-none\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"}}]");
    json_t *arr[5];
    for (int i = 0; i < 5; i++)
        arr[i] = json_array_get(pods, (size_t)i);
    qsort(arr, 5, sizeof(arr[0]), cli__pod_index_cmp);
    const char *want[] = {"t-0-x", "t-2-x", "t-10-x", "a-none", "z-none"};
    for (int i = 0; i < 5; i++)
        assert_string_equal(JX_STR(arr[i], "metadata", "name"), want[i]);
    json_decref(pods);
}

static void test_metrics_table(void **state)
{
    (void)state;
    json_t *job = json_pack(
        "{s:{s:{s:s}}}", "metadata", "annotations", "cueue.dev/metrics",
        "{\"train-1-b\":{\"loss\":0.25,\"epoch\":40},\"train-0-a\":{\"epoch\":40,\"loss\":0.0001,"
        "\"note\":\"done\"}}");
    struct cli_table t;
    assert_int_equal(cli__metrics_table(job, &t), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cli__table_print(&t, f, "");
    fclose(f);
    assert_string_equal(buf, "Pod         epoch   loss     note\n"
                             "train-0-a   40      0.0001   done\n"
                             "train-1-b   40      0.25     \n");
    free(buf);
    cli__table_release(&t);
    json_decref(job);

    json_t *none = J("{\"metadata\":{\"annotations\":{\"cueue.dev/metrics\":\"not json\"}}}");
    assert_int_equal(cli__metrics_table(none, &t), -1);
    json_decref(none);
    none = J("{\"metadata\":{}}");
    assert_int_equal(cli__metrics_table(none, &t), -1);
    json_decref(none);
}

/* A container that could not start leaves an empty log: the failed Job's
 * output says why each such pod failed, identical reasons folded. */
static void test_pod_failure_lines(void **state)
{
    (void)state;
    const char *start_error =
        "\"status\":{\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"main\",\"state\":"
        "{\"terminated\":{\"reason\":\"StartError\",\"exitCode\":128,\"message\":\"container main "
        "has no command\"}}}]}";
    char *text = xasprintf("[{\"metadata\":{\"name\":\"p-a\"},%s},"
                           "{\"metadata\":{\"name\":\"p-b\"},%s},"
                           "{\"metadata\":{\"name\":\"p-c\"},%s},"
                           "{\"metadata\":{\"name\":\"p-ok\"},\"status\":{\"phase\":\"Succeeded\","
                           "\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"terminated\":"
                           "{\"reason\":\"Completed\",\"exitCode\":0}}}]}},"
                           "{\"metadata\":{\"name\":\"p-oom\"},\"status\":{\"phase\":\"Failed\","
                           "\"containerStatuses\":[{\"name\":\"main\",\"state\":{\"terminated\":"
                           "{\"reason\":\"Error\",\"exitCode\":137}}}]}},"
                           "{\"metadata\":{\"name\":\"p-dl\"},\"status\":{\"phase\":\"Failed\","
                           "\"reason\":\"DeadlineExceeded\",\"message\":\"Pod was active too long\"}}]",
                           start_error, start_error, start_error);
    json_t *pods = J(text);
    xfree(text);
    char *why = cli__pod_failure(json_array_get(pods, 0));
    assert_string_equal(why, "StartError: container main has no command (exit code 128)");
    xfree(why);
    assert_null(cli__pod_failure(json_array_get(pods, 3)));
    bool quiet[6] = {true, true, true, true, true, true};
    struct sbuf sb;
    sbuf_init(&sb, 0);
    cli__pod_failure_lines(pods, quiet, &sb);
    assert_string_equal(sb.buf,
                        "Pod 'p-a' failed: StartError: container main has no command (exit code "
                        "128) (and 2 more pods with the same error)\n"
                        "Pod 'p-oom' failed: Error (exit code 137)\n"
                        "Pod 'p-dl' failed: DeadlineExceeded: Pod was active too long\n");
    /* a pod that wrote its own log tells its own story */
    sbuf_reset(&sb);
    quiet[0] = quiet[1] = quiet[4] = quiet[5] = false;
    cli__pod_failure_lines(pods, quiet, &sb);
    assert_string_equal(sb.buf, "Pod 'p-c' failed: StartError: container main has no command "
                                "(exit code 128)\n");
    sbuf_release(&sb);
    json_t *job = J("{\"status\":{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\"}]}}");
    assert_true(cli__job_failed(job));
    json_decref(job);
    json_decref(pods);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_final_line),
        cmocka_unit_test(test_pod_order_by_completion_index),
        cmocka_unit_test(test_metrics_table),
        cmocka_unit_test(test_pod_failure_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
