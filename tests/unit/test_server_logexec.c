/* Unit tests for the log endpoint's side of the executor seam
 * (src/server/logs.c): a pod's log is the file its executor names
 * (exec_ops.log_path), wherever that is (a Slurm job's output file), not a
 * path the server derives from its state directory; an executor that
 * names none answers as a log not written yet. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "exec/exec.h"
#include "test_server_fixture.h"

/* An executor that only names log files: <dir>/job-<uid>.out, or none. */
struct fake {
    struct exec base;
    char dir[64];
    bool none;
};

static char *fake_log_path(struct exec *x, const char *uid, const char *container)
{
    struct fake *f = (struct fake *)x;
    (void)container;
    return f->none ? NULL : xasprintf("%s/job-%s.out", f->dir, uid);
}

static const struct exec_ops fake_ops = {.log_path = fake_log_path};

static void the_log_is_the_file_the_executor_names(void **state)
{
    (void)state;
    struct sfx *s = sfx_new(false);
    struct fake f = {.base.ops = &fake_ops};
    snprintf(f.dir, sizeof(f.dir), "/tmp/cueue-test-logexec.XXXXXX");
    assert_non_null(mkdtemp(f.dir));
    s->srv.exec = &f.base;
    sfx_put_pod(s, "u-7", "Running");
    char *path = xasprintf("%s/job-u-7.out", f.dir);
    FILE *out = fopen(path, "w");
    assert_non_null(out);
    fputs("Epoch 1: Loss 0.5\nTraining Complete!\n", out);
    fclose(out);
    struct srv_resp r;
    sfx_req(s, "GET", "/api/v1/namespaces/default/pods/p/log", NULL, NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    size_t len, max_chunk;
    char *text = sfx_drain(&r, &len, &max_chunk);
    srv__resp_release(&r);
    assert_string_equal(text, "Epoch 1: Loss 0.5\nTraining Complete!\n");
    xfree(text);
    unlink(path);
    rmdir(f.dir);
    xfree(path);
    sfx_free(s);
}

static void an_executor_naming_no_file_answers_as_not_started(void **state)
{
    (void)state;
    struct sfx *s = sfx_new(false);
    struct fake f = {.base.ops = &fake_ops, .none = true};
    s->srv.exec = &f.base;
    sfx_put_pod(s, "u-7", "Pending");
    char msg[256];
    assert_int_equal(sfx_call(s, "GET", "/api/v1/namespaces/default/pods/p/log", NULL, NULL,
                              NULL, msg, sizeof(msg)),
                     400);
    assert_non_null(strstr(msg, "is waiting to start"));
    sfx_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_log_is_the_file_the_executor_names),
        cmocka_unit_test(an_executor_naming_no_file_answers_as_not_started),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
