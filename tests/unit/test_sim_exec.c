/* Unit tests for the simulated executor (src/exec/sim.c): pods report
 * RUNNING at once and their final state after the simulated runtime, in
 * virtual time; stop() ends them early; reports come out in order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "exec/exec.h"

static void outcome_from_annotation(void *ctx, const json_t *pod, struct exec_sim_outcome *out)
{
    (void)ctx;
    json_t *rt = json_object_get(pod, "runtime_ms");
    if (json_is_integer(rt))
        out->runtime_ms = json_integer_value(rt);
    json_t *code = json_object_get(pod, "exit");
    if (json_is_integer(code))
        out->exit_code = (int)json_integer_value(code);
}

struct fixture {
    struct clk_virtual clock;
    struct exec *x;
};

static struct exec *new_exec(struct fixture *f, bool grace)
{
    clk_virtual_init(&f->clock, 1000000);
    struct exec_sim_opts o = {
        .clock = &f->clock.clk,
        .outcome = outcome_from_annotation,
        .default_runtime_ms = 5000,
        .honor_grace = grace,
    };
    f->x = exec_sim_new(&o);
    return f->x;
}

static int start(struct exec *x, const char *uid, json_t *pod)
{
    char err[128];
    struct exec_pod p = {.ns = "default", .name = uid, .uid = uid, .pod = pod};
    int rc = x->ops->start(x, &p, err, sizeof(err));
    json_decref(pod);
    return rc;
}

static void test_pod_runs_for_its_runtime_then_succeeds(void **state)
{
    (void)state;
    struct fixture f;
    struct exec *x = new_exec(&f, false);
    assert_int_equal(start(x, "a", json_pack("{s:i}", "runtime_ms", 200)), 0);
    struct exec_reports r = {0};
    assert_int_equal(x->ops->poll(x, &r), 1);
    assert_string_equal(r.items[0].uid, "a");
    assert_int_equal(r.items[0].state, EXEC_RUNNING);
    assert_int_equal(r.items[0].at_ms, 1000000);
    exec_reports_release(&r);
    assert_int_equal(x->ops->next_deadline(x), 1000200);
    clk_virtual_set(&f.clock, 1000199);
    assert_int_equal(x->ops->poll(x, &r), 0);
    clk_virtual_set(&f.clock, 1000200);
    assert_int_equal(x->ops->poll(x, &r), 1);
    assert_int_equal(r.items[0].state, EXEC_SUCCEEDED);
    assert_int_equal(r.items[0].exit_code, 0);
    assert_int_equal(r.items[0].at_ms, 1000200);
    assert_string_equal(r.items[0].reason, "Completed");
    exec_reports_release(&r);
    assert_int_equal(x->ops->next_deadline(x), INT64_MAX);
    x->ops->free(x);
}

static void test_default_runtime_and_failure_exit_code(void **state)
{
    (void)state;
    struct fixture f;
    struct exec *x = new_exec(&f, false);
    assert_int_equal(start(x, "b", json_pack("{s:i}", "exit", 3)), 0);
    assert_int_equal(x->ops->next_deadline(x), 1000000); /* RUNNING due now */
    struct exec_reports r = {0};
    x->ops->poll(x, &r);
    exec_reports_release(&r);
    assert_int_equal(x->ops->next_deadline(x), 1005000);
    clk_virtual_set(&f.clock, 1010000);
    assert_int_equal(x->ops->poll(x, &r), 1);
    assert_int_equal(r.items[0].state, EXEC_FAILED);
    assert_int_equal(r.items[0].exit_code, 3);
    assert_int_equal(r.items[0].at_ms, 1005000);
    exec_reports_release(&r);
    x->ops->free(x);
}

static void test_reports_come_out_in_time_then_start_order(void **state)
{
    (void)state;
    struct fixture f;
    struct exec *x = new_exec(&f, false);
    start(x, "late", json_pack("{s:i}", "runtime_ms", 300));
    start(x, "first", json_pack("{s:i}", "runtime_ms", 100));
    start(x, "second", json_pack("{s:i}", "runtime_ms", 100));
    clk_virtual_set(&f.clock, 1000300);
    struct exec_reports r = {0};
    assert_int_equal(x->ops->poll(x, &r), 6);
    const char *want[] = {"late", "first", "second", "first", "second", "late"};
    for (int i = 0; i < 6; i++)
        assert_string_equal(r.items[i].uid, want[i]);
    assert_int_equal(r.items[3].state, EXEC_SUCCEEDED);
    exec_reports_release(&r);
    x->ops->free(x);
}

static void test_stop_kills_at_once_without_grace(void **state)
{
    (void)state;
    struct fixture f;
    struct exec *x = new_exec(&f, false);
    start(x, "a", json_pack("{s:i}", "runtime_ms", 10000));
    clk_virtual_set(&f.clock, 1001000);
    assert_int_equal(x->ops->stop(x, "a", 30000), 0);
    struct exec_reports r = {0};
    assert_int_equal(x->ops->poll(x, &r), 2);
    assert_int_equal(r.items[1].state, EXEC_FAILED);
    assert_int_equal(r.items[1].exit_code, 137);
    assert_int_equal(r.items[1].at_ms, 1001000);
    exec_reports_release(&r);
    assert_int_equal(x->ops->next_deadline(x), INT64_MAX);
    /* stopping a finished or unknown pod is harmless */
    assert_int_equal(x->ops->stop(x, "a", 0), 0);
    assert_int_equal(x->ops->stop(x, "nope", 0), 0);
    assert_int_equal(x->ops->poll(x, &r), 0);
    x->ops->free(x);
}

static void test_stop_honours_grace_when_configured(void **state)
{
    (void)state;
    struct fixture f;
    struct exec *x = new_exec(&f, true);
    start(x, "a", json_pack("{s:i}", "runtime_ms", 10000));
    start(x, "quick", json_pack("{s:i}", "runtime_ms", 500));
    x->ops->stop(x, "a", 2000);
    x->ops->stop(x, "quick", 2000); /* finishes before the grace ends */
    assert_int_equal(x->ops->next_deadline(x), 1000000);
    clk_virtual_set(&f.clock, 1002000);
    struct exec_reports r = {0};
    assert_int_equal(x->ops->poll(x, &r), 4);
    assert_string_equal(r.items[2].uid, "quick");
    assert_int_equal(r.items[2].state, EXEC_SUCCEEDED);
    assert_string_equal(r.items[3].uid, "a");
    assert_int_equal(r.items[3].exit_code, 143);
    assert_int_equal(r.items[3].at_ms, 1002000);
    exec_reports_release(&r);
    x->ops->free(x);
}

static void test_free_with_pending_reports_and_no_logs(void **state)
{
    (void)state;
    struct fixture f;
    struct exec *x = new_exec(&f, false);
    start(x, "a", json_object());
    assert_null(x->ops->log_path(x, "a", "main"));
    struct exec_pod p = {.ns = "default", .name = "x", .uid = "", .pod = NULL};
    char err[64];
    assert_true(x->ops->start(x, &p, err, sizeof(err)) < 0);
    x->ops->free(x); /* pending reports freed (ASan checks) */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pod_runs_for_its_runtime_then_succeeds),
        cmocka_unit_test(test_default_runtime_and_failure_exit_code),
        cmocka_unit_test(test_reports_come_out_in_time_then_start_order),
        cmocka_unit_test(test_stop_kills_at_once_without_grace),
        cmocka_unit_test(test_stop_honours_grace_when_configured),
        cmocka_unit_test(test_free_with_pending_reports_and_no_logs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
