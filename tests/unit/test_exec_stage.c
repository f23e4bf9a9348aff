/* Unit tests for the executor seam's staging (src/exec/stage.c, exec.c):
 * volumes written where the executor says, paths that leave the volume
 * refused, and an executor's own stage ops used instead of the local
 * layout (what lets the Slurm executor stage where its tasks read). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "exec/exec.h"
#include "util/err.h"
#include "util/xalloc.h"

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char buf[256];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return xstrdup(buf);
}

static void configmap_files_land_in_the_volume_dir_with_their_mode(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/cueue-stage-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char *sandbox = xasprintf("%s/pods/u1", tmpl);
    const struct exec_file files[] = {{"train.py", (const unsigned char *)"print(1)\n", 9, 0600},
                                      {"sub/dir/x", (const unsigned char *)"", 0, 0644}};
    const struct exec_volume vols[] = {{"script", NULL, files, 2}, {"scratch", NULL, NULL, 0}};
    char err[256] = "";
    assert_int_equal(exec_stage(NULL, "u1", sandbox, vols, 2, err, sizeof(err)), 0);
    char *dir = exec_volume_dir(sandbox, "script");
    char *p = xasprintf("%s/train.py", dir);
    char *got = read_all(p);
    assert_string_equal(got, "print(1)\n");
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    xfree(p);
    p = xasprintf("%s/sub/dir/x", dir);
    assert_int_equal(stat(p, &st), 0);
    xfree(p);
    xfree(dir);
    dir = exec_volume_dir(sandbox, "scratch");
    assert_int_equal(stat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    xfree(dir);
    xfree(got);
    xfree(sandbox);
    char *cmd = xasprintf("rm -rf %s", tmpl);
    assert_int_equal(system(cmd), 0);
    xfree(cmd);
}

static void a_file_path_leaving_its_volume_is_refused(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/cueue-stage-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    const struct exec_file bad[] = {{"../escape", (const unsigned char *)"x", 1, 0644}};
    const struct exec_volume vols[] = {{"v", NULL, bad, 1}};
    char err[256] = "";
    assert_int_equal(exec_stage_fs(tmpl, vols, 1, err, sizeof(err)), CU_EINVAL);
    assert_non_null(strstr(err, "../escape"));
    const struct exec_volume badname[] = {{"a/../b", NULL, NULL, 0}};
    assert_int_equal(exec_stage_fs(tmpl, badname, 1, err, sizeof(err)), CU_EINVAL);
    assert_non_null(strstr(err, "invalid name"));
    char *cmd = xasprintf("rm -rf %s", tmpl);
    assert_int_equal(system(cmd), 0);
    xfree(cmd);
}

/* A sandbox or volume directory that cannot be made is CU_EIO, the path
 * named (here a regular file stands where a directory must be). */
static void a_directory_that_cannot_be_made_is_an_io_error(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/cueue-stage-XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    char *file = xasprintf("%s/file", tmpl);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    char *sandbox = xasprintf("%s/pod", file);
    char err[256] = "";
    assert_int_equal(exec_stage_fs(sandbox, NULL, 0, err, sizeof(err)), CU_EIO);
    assert_non_null(strstr(err, sandbox));
    const struct exec_volume host[] = {{"h", sandbox, NULL, 0}};
    err[0] = '\0';
    assert_int_equal(exec_stage_fs(tmpl, host, 1, err, sizeof(err)), CU_EIO);
    assert_non_null(strstr(err, "volume h: cannot create"));
    xfree(sandbox);
    xfree(file);
    char *cmd = xasprintf("rm -rf %s", tmpl);
    assert_int_equal(system(cmd), 0);
    xfree(cmd);
}

/* An executor with its own staging: records the call, writes nothing. */
struct fake {
    struct exec base;
    int stages;
    size_t n_vols;
};

static char *fake_sandbox(struct exec *x, const char *uid)
{
    (void)x;
    return xasprintf("/shared/spool/%s", uid);
}

static int fake_stage(struct exec *x, const char *uid, const char *sandbox,
                      const struct exec_volume *vols, size_t n, char *err, size_t errlen)
{
    (void)uid;
    (void)vols;
    (void)err;
    (void)errlen;
    struct fake *f = (struct fake *)x;
    assert_string_equal(sandbox, "/shared/spool/u2");
    f->stages++;
    f->n_vols = n;
    return 0;
}

static const struct exec_stage_ops fake_stage_ops = {fake_sandbox, fake_stage};

static void an_executor_s_stage_ops_replace_the_local_layout(void **state)
{
    (void)state;
    struct fake f = {0};
    char *def = exec_sandbox_dir(&f.base, "/state", "u2");
    assert_string_equal(def, "/state/pods/u2");
    xfree(def);
    assert_null(exec_sandbox_dir(NULL, NULL, "u2"));
    f.base.stage_ops = &fake_stage_ops;
    char *sb = exec_sandbox_dir(&f.base, "/state", "u2");
    assert_string_equal(sb, "/shared/spool/u2");
    const struct exec_volume vols[] = {{"v", NULL, NULL, 0}};
    char err[64];
    assert_int_equal(exec_stage(&f.base, "u2", sb, vols, 1, err, sizeof(err)), 0);
    assert_int_equal(f.stages, 1);
    assert_int_equal(f.n_vols, 1);
    xfree(sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(configmap_files_land_in_the_volume_dir_with_their_mode),
        cmocka_unit_test(a_file_path_leaving_its_volume_is_refused),
        cmocka_unit_test(a_directory_that_cannot_be_made_is_an_io_error),
        cmocka_unit_test(an_executor_s_stage_ops_replace_the_local_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
