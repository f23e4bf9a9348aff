/* Unit tests for the Slurm executor's pure parts (src/exec/slurm.c,
 * docs/slurm.md): which Nodes are Slurm's, the GRES a container asks for
 * as libslurm's tres_per_node, and the batch script (quoting for sh). The
 * jobs themselves run against a real Slurm in
 * tests/e2e/t7010-slurm-pool-jobs.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "exec/exec.h"
#include "util/xalloc.h"

static void slurm_nodes_by_provider_id(void **state)
{
    (void)state;
    json_t *n = json_pack("{s:{s:s}}", "spec", "providerID", "slurm://on-demand/od1");
    assert_true(exec_slurm_node(n));
    json_decref(n);
    n = json_pack("{s:{s:s}}", "spec", "providerID", "cueue://local/p/gke-x");
    assert_false(exec_slurm_node(n));
    json_decref(n);
    assert_false(exec_slurm_node(NULL));
}

static void gres_from_requests_or_limits(void **state)
{
    (void)state;
    json_t *c = json_pack("{s:{s:{s:s,s:s}}}", "resources", "requests", "cpu", "8",
                          "google.com/tpu", "4");
    char *t = exec_slurm_tres(c);
    assert_string_equal(t, "gres:tpu:4");
    xfree(t);
    json_decref(c);
    c = json_pack("{s:{s:{s:s,s:i}}}", "resources", "limits", "nvidia.com/gpu", "8",
                  "google.com/tpu", 2);
    t = exec_slurm_tres(c);
    assert_string_equal(t, "gres:tpu:2,gres:gpu:8");
    xfree(t);
    json_decref(c);
    c = json_pack("{s:{s:{s:s}}}", "resources", "requests", "cpu", "1");
    assert_null(exec_slurm_tres(c));
    json_decref(c);
}

static void script_quotes_every_word(void **state)
{
    (void)state;
    char *argv[] = {"python3", "/app/train.py", "it's", "$HOME", NULL};
    char *s = exec_slurm_script(argv, "/tmp/a b");
    assert_string_equal(s, "#!/bin/sh\n# a cueue pod (docs/slurm.md)\n"
                           "cd '/tmp/a b' || exit 1\n"
                           "exec 'python3' '/app/train.py' 'it'\\''s' '$HOME'\n");
    xfree(s);
    s = exec_slurm_script(argv, NULL);
    assert_null(strstr(s, "cd "));
    xfree(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(slurm_nodes_by_provider_id),
        cmocka_unit_test(gres_from_requests_or_limits),
        cmocka_unit_test(script_quotes_every_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
