/*
 * Unit tests: the local executor runs real processes (tests/helpers/
 * exec_probe) and reports through poll. Waits are bounded: the test blocks
 * on the executor's notify pipe with a timeout, never on fixed sleeps.
 */
#include "test_exec_local_fixture.h"
#include "util/err.h"

static void test_exit_codes_are_reported(void **state)
{
    struct fx *f = *state;
    json_t *ok = probe_pod(f, "Never", json_pack("[s,s]", "out", "hello"));
    json_t *bad = probe_pod(f, "Never", json_pack("[s,s]", "exit", "3"));
    assert_int_equal(start(f, "ok", ok, NULL, 0, NULL, 0), 0);
    assert_int_equal(start(f, "bad", bad, NULL, 0, NULL, 0), 0);
    const struct exec_report *r = wait_report(f, "ok", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_SUCCEEDED);
    assert_string_equal(r->reason, "Completed");
    assert_int_equal(r->n_containers, 1);
    assert_int_equal(r->containers[0].state, EXEC_C_TERMINATED);
    r = wait_report(f, "bad", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_FAILED);
    assert_int_equal(r->exit_code, 3);
    assert_string_equal(r->reason, "Error");
    assert_non_null(wait_report(f, "ok", EXEC_RUNNING)); /* it was running first */
    json_decref(ok);
    json_decref(bad);
}

static void test_env_expansion_and_extra_env(void **state)
{
    struct fx *f = *state;
    json_t *pod = probe_pod(f, "Never", json_pack("[s,s,s,s,s,s,s,s,s,s,s,s,s,s]", "env", "A", "env",
                                                  "B", "env", "EXTRA", "env",
                                                  "CUEUE_METRICS_FILE", "env", "PATH", "env",
                                                  "CUEUE_TEST_SECRET", "env", "HOME"));
    json_t *ctr = json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
    json_object_set_new(ctr, "env", json_pack("[{s:s,s:s},{s:s,s:s}]", "name", "A", "value",
                                              "x", "name", "B", "value", "$(A)-$(EXTRA)-$$(A)"));
    struct exec_env extra[] = {{"EXTRA", "1"}};
    setenv("CUEUE_TEST_SECRET", "s3cret", 1); /* the server's: not the pod's */
    assert_int_equal(start(f, "env", pod, extra, 1, NULL, 0), 0);
    unsetenv("CUEUE_TEST_SECRET");
    const struct exec_report *r = wait_report(f, "env", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_SUCCEEDED);
    char *log = log_of(f, "env", "main");
    assert_non_null(strstr(log, "A=x\n"));
    assert_non_null(strstr(log, "B=x-1-$(A)\n"));
    assert_non_null(strstr(log, "EXTRA=1\n"));
    char *mf = xasprintf("CUEUE_METRICS_FILE=%s/pods/env/metrics.jsonl\n", f->dir);
    assert_non_null(strstr(log, mf));
    assert_null(strstr(log, "PATH unset")); /* PATH and HOME, as a kubelet gives */
    assert_null(strstr(log, "HOME unset"));
    assert_non_null(strstr(log, "CUEUE_TEST_SECRET unset")); /* nothing else of the server's */
    xfree(mf);
    xfree(log);
    json_decref(pod);
}

/* securityContext honoured or refused: pods run as the server's user, so a
 * runAsUser/runAsGroup of another id is refused, and runAsNonRoot refuses
 * a pod that would run as root; nothing starts then. */
static void test_security_context_honoured_or_refused(void **state)
{
    struct fx *f = *state;
    json_t *pod = probe_pod(f, "Never", json_pack("[s,s]", "out", "hi"));
    json_t *spec = json_object_get(pod, "spec");
    json_t *ctr = json_array_get(json_object_get(spec, "containers"), 0);
    struct exec_pod ep = {"default", "sec", "sec", pod, NULL, NULL, 0, NULL, 0, NULL};
    char err[256];
    /* its own uid: honoured */
    json_object_set_new(spec, "securityContext",
                        json_pack("{s:I}", "runAsUser", (json_int_t)geteuid()));
    assert_int_equal(f->x->ops->start(f->x, &ep, err, sizeof(err)), 0);
    assert_int_equal(wait_report(f, "sec", -1)->state, EXEC_SUCCEEDED);
    /* another uid (the container's field wins over the pod's) */
    json_int_t other = geteuid() == 4242 ? 4343 : 4242;
    json_object_set_new(ctr, "securityContext", json_pack("{s:I}", "runAsUser", other));
    ep.uid = "sec2";
    assert_int_equal(f->x->ops->start(f->x, &ep, err, sizeof(err)), CU_EFORBIDDEN);
    char *want = xasprintf("container main: runAsUser %lld cannot be honoured", (long long)other);
    assert_non_null(strstr(err, want));
    xfree(want);
    /* runAsNonRoot while the pod would run as root */
    json_object_set_new(ctr, "securityContext",
                        json_pack("{s:b,s:i}", "runAsNonRoot", 1, "runAsUser", 0));
    ep.uid = "sec3";
    int rc = f->x->ops->start(f->x, &ep, err, sizeof(err));
    assert_int_equal(rc, CU_EFORBIDDEN); /* as root: non-root policy; else: uid 0 not ours */
    assert_non_null(strstr(err, geteuid() == 0 ? "container has runAsNonRoot and would run as "
                                                 "root (uid 0) (pod: \"default/sec\", "
                                                 "container: main)"
                                               : "runAsUser 0 cannot be honoured"));
    json_decref(pod);
}

static void test_working_dir_and_one_log_for_both_streams(void **state)
{
    struct fx *f = *state;
    char *wd = xasprintf("%s/wd", f->dir);
    mkdir(wd, 0755);
    json_t *pod = probe_pod(f, "Never", json_pack("[s,s,s,s,s]", "pwd", "out", "to-stdout",
                                                  "err", "to-stderr"));
    json_t *ctr = json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
    json_object_set_new(ctr, "workingDir", json_string(wd));
    json_t *dflt = probe_pod(f, "Never", json_pack("[s]", "pwd"));
    assert_int_equal(start(f, "wd", pod, NULL, 0, NULL, 0), 0);
    assert_int_equal(start(f, "dflt", dflt, NULL, 0, NULL, 0), 0);
    assert_non_null(wait_report(f, "wd", -1));
    assert_non_null(wait_report(f, "dflt", -1));
    char *log = log_of(f, "wd", "main");
    char *expect = xasprintf("%s\nto-stdout\nto-stderr\n", wd);
    assert_string_equal(log, expect);
    xfree(log);
    xfree(expect);
    log = log_of(f, "dflt", "main");
    expect = xasprintf("%s/pods/dflt\n", f->dir);
    assert_string_equal(log, expect);
    xfree(log);
    xfree(expect);
    xfree(wd);
    json_decref(pod);
    json_decref(dflt);
}

static void test_sigterm_then_sigkill_after_grace(void **state)
{
    struct fx *f = *state;
    char *ready = xasprintf("%s/ready", f->dir);
    json_t *stubborn = probe_pod(f, "Never", json_pack("[s,s,s,s]", "trap-term", "touch", ready,
                                                       "pause"));
    assert_int_equal(start(f, "stubborn", stubborn, NULL, 0, NULL, 0), 0);
    assert_true(wait_file(ready));
    int64_t t0 = clk_now(clk_real());
    f->x->ops->stop(f->x, "stubborn", 300);
    const struct exec_report *r = wait_report(f, "stubborn", -1);
    assert_non_null(r);
    assert_true(clk_now(clk_real()) - t0 >= 300);
    assert_int_equal(r->state, EXEC_FAILED);
    assert_int_equal(r->exit_code, 137);

    char *ready2 = xasprintf("%s/ready2", f->dir);
    json_t *polite = probe_pod(f, "Never", json_pack("[s,s,s,s,s]", "term-exit", "0", "touch",
                                                     ready2, "pause"));
    assert_int_equal(start(f, "polite", polite, NULL, 0, NULL, 0), 0);
    assert_true(wait_file(ready2));
    t0 = clk_now(clk_real());
    f->x->ops->stop(f->x, "polite", 10000);
    r = wait_report(f, "polite", -1);
    assert_non_null(r);
    assert_true(clk_now(clk_real()) - t0 < 10000); /* SIGTERM was enough */
    assert_int_equal(r->state, EXEC_SUCCEEDED);
    xfree(ready);
    xfree(ready2);
    json_decref(stubborn);
    json_decref(polite);
}

static void test_missing_program_is_a_start_error(void **state)
{
    struct fx *f = *state;
    json_t *pod = json_pack("{s:{s:[{s:s, s:[s,s]}]}}", "spec", "containers", "name", "ray-head",
                            "command", "ray", "start");
    json_t *nocmd = json_pack("{s:{s:[{s:s, s:s}]}}", "spec", "containers", "name", "app",
                              "image", "rayproject/ray:2.53.0");
    assert_int_equal(start(f, "ray", pod, NULL, 0, NULL, 0), 0);
    assert_int_equal(start(f, "img", nocmd, NULL, 0, NULL, 0), 0);
    const struct exec_report *r = wait_report(f, "ray", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_FAILED);
    assert_string_equal(r->reason, "StartError");
    assert_string_equal(r->message, "exec: \"ray\": executable file not found in $PATH");
    assert_string_equal(r->containers[0].reason, "StartError");
    r = wait_report(f, "img", -1);
    assert_non_null(r);
    assert_string_equal(r->reason, "StartError");
    assert_non_null(strstr(r->message, "cueue runs processes, not images"));
    /* one container cannot start: the pod fails with StartError, the others are killed */
    json_t *two = json_pack("{s:{s:[{s:s,s:[s],s:[s]},{s:s,s:[s]}]}}", "spec", "containers",
                            "name", "worker", "command", f->probe, "args", "pause", "name",
                            "ray", "command", "ray");
    assert_int_equal(start(f, "two", two, NULL, 0, NULL, 0), 0);
    r = wait_report(f, "two", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_FAILED);
    assert_string_equal(r->reason, "StartError");
    assert_int_equal(r->n_containers, 2);
    assert_int_equal(r->containers[0].state, EXEC_C_TERMINATED);
    json_decref(two);
    json_decref(pod);
    json_decref(nocmd);
}

static void test_metrics_file_last_valid_line(void **state)
{
    struct fx *f = *state;
    char *ready = xasprintf("%s/m-ready", f->dir);
    json_t *live = probe_pod(f, "Never", json_pack("[s,s,s,s,s]", "metric", "{\"epoch\": 0}",
                                                   "touch", ready, "pause"));
    assert_int_equal(start(f, "live", live, NULL, 0, NULL, 0), 0);
    /* a RUNNING report carrying the metrics arrives while it runs */
    int64_t deadline = clk_now(clk_real()) + WAIT_MS;
    const struct exec_report *r = NULL;
    while (!r && clk_now(clk_real()) < deadline) {
        const struct exec_report *x = wait_report(f, "live", EXEC_RUNNING);
        if (x && x->metrics)
            r = x;
        else {
            struct pollfd p = {f->pipe[0], POLLIN, 0};
            poll(&p, 1, 100);
        }
    }
    assert_non_null(r);
    assert_int_equal(json_integer_value(json_object_get(r->metrics, "epoch")), 0);
    f->x->ops->stop(f->x, "live", 0);
    assert_non_null(wait_report(f, "live", -1));

    json_t *done = probe_pod(f, "Never",
                             json_pack("[s,s,s,s,s,s]", "metric", "{\"loss\": 0.5, \"epoch\": 0}",
                                       "metric", "{\"loss\": 0.25, \"epoch\": 40}", "metric",
                                       "not json"));
    assert_int_equal(start(f, "done", done, NULL, 0, NULL, 0), 0);
    r = wait_report(f, "done", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_SUCCEEDED);
    assert_non_null(r->metrics);
    assert_int_equal(json_integer_value(json_object_get(r->metrics, "epoch")), 40);
    xfree(ready);
    json_decref(live);
    json_decref(done);
}

static void test_mount_paths_are_rewritten(void **state)
{
    struct fx *f = *state;
    char *vol = xasprintf("%s/vol", f->dir);
    mkdir(vol, 0755);
    char *file = xasprintf("%s/train.py", vol);
    FILE *fp = fopen(file, "w");
    fputs("print('hi')\n", fp);
    fclose(fp);
    json_t *pod = probe_pod(f, "Never", json_pack("[s,s,s]", "cat", "/app/train.py", "pwd"));
    json_t *ctr = json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
    json_object_set_new(ctr, "workingDir", json_string("/app"));
    struct exec_env mounts[] = {{"/app", vol}};
    assert_int_equal(start(f, "mnt", pod, NULL, 0, mounts, 1), 0);
    const struct exec_report *r = wait_report(f, "mnt", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_SUCCEEDED);
    char *log = log_of(f, "mnt", "main");
    char *expect = xasprintf("print('hi')\n%s\n", vol);
    assert_string_equal(log, expect);
    xfree(log);
    xfree(expect);

    char *s = lx_rewrite_mounts("python /app/train.py --out=/app/x /application /app", mounts, 1);
    char *want = xasprintf("python %s/train.py --out=%s/x /application %s", vol, vol, vol);
    assert_string_equal(s, want);
    xfree(s);
    xfree(want);
    xfree(vol);
    xfree(file);
    json_decref(pod);
}

static void test_on_failure_restarts_and_counts(void **state)
{
    struct fx *f = *state;
    char *count = xasprintf("%s/count", f->dir);
    json_t *pod = probe_pod(f, "OnFailure", json_pack("[s,s,s]", "fail-until", count, "3"));
    assert_int_equal(start(f, "retry", pod, NULL, 0, NULL, 0), 0);
    const struct exec_report *r = wait_report(f, "retry", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_SUCCEEDED);
    assert_int_equal(r->containers[0].restarts, 2);
    json_t *never = probe_pod(f, "Never", json_pack("[s,s,s]", "fail-until", count, "99"));
    assert_int_equal(start(f, "once", never, NULL, 0, NULL, 0), 0);
    r = wait_report(f, "once", -1);
    assert_int_equal(r->state, EXEC_FAILED);
    assert_int_equal(r->containers[0].restarts, 0);
    xfree(count);
    json_decref(pod);
    json_decref(never);
}

static void test_init_containers_run_first(void **state)
{
    struct fx *f = *state;
    char *mark = xasprintf("%s/init-mark", f->dir);
    json_t *pod = json_pack("{s:{s:s, s:[{s:s,s:[s],s:[s,s]}], s:[{s:s,s:[s],s:[s,s]}]}}",
                            "spec", "restartPolicy", "Never", "initContainers", "name", "prep",
                            "command", f->probe, "args", "touch", mark, "containers", "name",
                            "main", "command", f->probe, "args", "cat", mark);
    assert_int_equal(start(f, "init", pod, NULL, 0, NULL, 0), 0);
    const struct exec_report *r = wait_report(f, "init", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_SUCCEEDED);
    assert_int_equal(r->n_containers, 2);
    assert_true(r->containers[0].init);
    char *log = log_of(f, "init", "main");
    assert_string_equal(log, "\n"); /* the mark existed when main ran */
    xfree(log);

    json_t *bad = json_pack("{s:{s:[{s:s,s:[s],s:[s,s]}], s:[{s:s,s:[s],s:[s,s]}]}}", "spec",
                            "initContainers", "name", "prep", "command", f->probe, "args",
                            "exit", "4", "containers", "name", "main", "command", f->probe,
                            "args", "out", "never");
    assert_int_equal(start(f, "badinit", bad, NULL, 0, NULL, 0), 0);
    r = wait_report(f, "badinit", -1);
    assert_non_null(r);
    assert_int_equal(r->state, EXEC_FAILED);
    assert_int_equal(r->exit_code, 4);
    char *mainlog = exec_log_path(f->dir, "badinit", "main");
    assert_int_not_equal(access(mainlog, F_OK), 0);
    xfree(mainlog);
    xfree(mark);
    json_decref(pod);
    json_decref(bad);
}

static void test_expansion_rules(void **state)
{
    (void)state;
    char *envp[] = {"A=1", "B=two", "A=3", NULL};
    char *s = lx_expand("$(A) $(B) $(C) $$(A) $ $(A", envp);
    assert_string_equal(s, "3 two $(C) $(A) $ $(A");
    xfree(s);
    char *err = NULL;
    char *p = lx_find_program("sh", (char *[]){"PATH=/nonexistent:/bin:/usr/bin", NULL}, "/",
                              &err);
    assert_non_null(p);
    assert_null(err);
    xfree(p);
    p = lx_find_program("/no/such/prog", NULL, "/", &err);
    assert_null(p);
    assert_string_equal(err, "exec: \"/no/such/prog\": stat /no/such/prog: No such file or "
                             "directory");
    xfree(err);
}

static bool keep_none(void *ctx, const char *uid)
{
    (void)ctx;
    (void)uid;
    return false;
}

static bool keep_all(void *ctx, const char *uid)
{
    (void)ctx;
    (void)uid;
    return true;
}

/* A pod's sandbox is removed only once the pod is over: a running one is
 * refused; sweep removes what keep() does not want. */
static void test_remove_and_sweep_sandboxes(void **state)
{
    struct fx *f = *state;
    char *ready = xasprintf("%s/ready", f->dir);
    json_t *p = probe_pod(f, "Never", json_pack("[s,s,s]", "touch", ready, "pause"));
    assert_int_equal(start(f, "live", p, NULL, 0, NULL, 0), 0);
    assert_true(wait_file(ready));
    char *dir = xasprintf("%s/pods/live", f->dir);
    assert_int_equal(f->x->ops->remove(f->x, "live"), CU_EFORBIDDEN);
    assert_int_equal(f->x->ops->sweep(f->x, keep_none, NULL), 0);
    assert_int_equal(access(dir, F_OK), 0);
    assert_int_equal(f->x->ops->remove(f->x, "../x"), CU_EINVAL);
    f->x->ops->stop(f->x, "live", 0);
    assert_non_null(wait_report(f, "live", -1));
    assert_int_equal(f->x->ops->sweep(f->x, keep_all, NULL), 0);
    assert_int_equal(access(dir, F_OK), 0);
    assert_int_equal(f->x->ops->remove(f->x, "live"), 0);
    assert_int_equal(access(dir, F_OK), -1);
    assert_int_equal(f->x->ops->remove(f->x, "live"), 0); /* nothing there: fine */
    json_t *q = probe_pod(f, "Never", json_pack("[s,s]", "out", "x"));
    assert_int_equal(start(f, "done", q, NULL, 0, NULL, 0), 0);
    assert_non_null(wait_report(f, "done", -1));
    assert_int_equal(f->x->ops->sweep(f->x, keep_none, NULL), 1);
    xfree(dir);
    xfree(ready);
    json_decref(p);
    json_decref(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_exit_codes_are_reported, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_expansion_and_extra_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_security_context_honoured_or_refused, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_working_dir_and_one_log_for_both_streams, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_sigterm_then_sigkill_after_grace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_program_is_a_start_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics_file_last_valid_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mount_paths_are_rewritten, setup, teardown),
        cmocka_unit_test_setup_teardown(test_on_failure_restarts_and_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_init_containers_run_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_remove_and_sweep_sandboxes, setup, teardown),
        cmocka_unit_test(test_expansion_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
