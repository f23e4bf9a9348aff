/*
 * CLI flag parsing: global flags anywhere on the line, verb flags, kubectl's
 * usage errors, --help; the value parsers (durations, counts, booleans);
 * and where the CLI finds the server (flag, $CUEUE_SERVER, the server's
 * server.url in its default state directory, the fallback).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli-int.h"
#include "test_cli_fixtures.h"
#include "util/xalloc.h"

struct seen {
    const char *output;
    int watch;
    int codes[8];
    int n;
};

static int record(struct cli_ctx *c, void *st, int code, const char *arg)
{
    struct seen *s = st;
    (void)c;
    if (code == 'o')
        s->output = arg;
    if (code == 'w')
        s->watch++;
    if (s->n < 8)
        s->codes[s->n++] = code;
    return 0;
}

static const struct option get_opts[] = {
    {"output", required_argument, NULL, 'o'},
    {"watch", no_argument, NULL, 'w'},
    {"field-selector", required_argument, NULL, 256},
    {0, 0, 0, 0},
};
static const struct cli_verb get_verb = {"get", "HELP TEXT\n", get_opts, "o:w"};

static int parse(struct cap *k, struct seen *s, struct cli_args *a, int argc, const char **argv)
{
    return cli__parse(&k->c, &get_verb, argc, (char **)argv, record, s, a);
}

static void test_global_flags_anywhere(void **state)
{
    (void)state;
    struct cap k;
    struct seen s = {0};
    struct cli_args a;
    cap_open(&k);
    const char *argv[] = {"get", "-n", "team-a", "wl", "--server=http://h:1", "-o", "yaml",
                          "name1", "-A", "--state-dir", "/tmp/x", "-w"};
    assert_int_equal(parse(&k, &s, &a, 12, argv), 0);
    assert_string_equal(k.c.ns, "team-a");
    assert_true(k.c.ns_explicit);
    assert_true(k.c.all_ns);
    assert_string_equal(k.c.server_flag, "http://h:1");
    assert_string_equal(k.c.state_dir_flag, "/tmp/x");
    assert_string_equal(s.output, "yaml");
    assert_int_equal(s.watch, 1);
    assert_int_equal(a.n, 2);
    assert_string_equal(a.v[0], "wl");
    assert_string_equal(a.v[1], "name1");
    cap_close(&k);
}

static void test_long_namespace_and_double_dash(void **state)
{
    (void)state;
    struct cap k;
    struct seen s = {0};
    struct cli_args a;
    cap_open(&k);
    const char *argv[] = {"get", "--namespace=ns2", "cq", "--", "-o"};
    assert_int_equal(parse(&k, &s, &a, 5, argv), 0);
    assert_string_equal(k.c.ns, "ns2");
    assert_null(s.output);
    assert_int_equal(a.n, 2);
    assert_string_equal(a.v[1], "-o");
    cap_close(&k);
}

static void test_unknown_flag_is_a_usage_error(void **state)
{
    (void)state;
    struct cap k;
    struct seen s = {0};
    struct cli_args a;
    cap_open(&k);
    const char *argv[] = {"get", "cq", "--bogus=1"};
    assert_int_equal(parse(&k, &s, &a, 3, argv), -1);
    fflush(k.c.err);
    assert_string_equal(k.err_buf, "error: unknown flag: --bogus\n"
                                   "See 'cueue get --help' for usage.\n");
    cap_close(&k);
}

static void test_unknown_short_flag_and_missing_value(void **state)
{
    (void)state;
    struct cap k;
    struct seen s = {0};
    struct cli_args a;
    cap_open(&k);
    const char *argv[] = {"get", "-z"};
    assert_int_equal(parse(&k, &s, &a, 2, argv), -1);
    fflush(k.c.err);
    assert_non_null(strstr(k.err_buf, "error: unknown flag: -z\n"));
    cap_close(&k);

    cap_open(&k);
    const char *argv2[] = {"get", "cq", "-o"};
    assert_int_equal(parse(&k, &s, &a, 3, argv2), -1);
    fflush(k.c.err);
    assert_non_null(strstr(k.err_buf, "error: flag needs an argument: -o\n"));
    cap_close(&k);
}

static void test_help_prints_verb_help(void **state)
{
    (void)state;
    struct cap k;
    struct seen s = {0};
    struct cli_args a;
    cap_open(&k);
    const char *argv[] = {"get", "cq", "--help"};
    assert_int_equal(parse(&k, &s, &a, 3, argv), CLI_HELP);
    fflush(k.c.out);
    assert_string_equal(k.out_buf, "HELP TEXT\n");
    cap_close(&k);
}

static void test_parse_is_repeatable(void **state)
{
    (void)state;
    /* getopt's global state must be reset between calls */
    for (int i = 0; i < 3; i++) {
        struct cap k;
        struct seen s = {0};
        struct cli_args a;
        cap_open(&k);
        const char *argv[] = {"get", "cq", "-o", "json"};
        assert_int_equal(parse(&k, &s, &a, 4, argv), 0);
        assert_string_equal(s.output, "json");
        assert_int_equal(a.n, 1);
        cap_close(&k);
    }
}

static void test_counts_and_booleans(void **state)
{
    (void)state;
    int32_t n;
    bool b;
    assert_int_equal(cli__parse_count("4", &n), 0);
    assert_int_equal(n, 4);
    assert_int_equal(cli__parse_count("0", &n), 0);
    assert_int_equal(n, 0);
    assert_int_equal(cli__parse_count("-1", &n), -1);
    assert_int_equal(cli__parse_count("4x", &n), -1);
    assert_int_equal(cli__parse_count("", &n), -1);
    assert_int_equal(cli__parse_count("3000000000", &n), -1);
    assert_int_equal(cli__parse_bool("TRUE", &b), 0);
    assert_true(b);
    assert_int_equal(cli__parse_bool("false", &b), 0);
    assert_false(b);
    assert_int_equal(cli__parse_bool("maybe", &b), -1);
}

static void test_targets(void **state)
{
    (void)state;
    struct cap k;
    struct cli_targets t = {0};
    cap_open(&k);
    k.c.verb = "get";
    char *a1[] = {"cq,lq", "x", "y"};
    struct cli_args a = {3, a1};
    assert_int_equal(cli__parse_targets(&k.c, &a, &t), 0);
    assert_int_equal(t.n, 4); /* each kind with each name */
    assert_int_equal(t.items[0].k->id, KIND_CLUSTERQUEUE);
    assert_string_equal(t.items[1].name, "y");
    assert_int_equal(t.items[3].k->id, KIND_LOCALQUEUE);
    xfree(t.items);

    t = (struct cli_targets){0};
    char *a2[] = {"workloads.kueue.x-k8s.io/w1", "rf/f1"};
    a = (struct cli_args){2, a2};
    assert_int_equal(cli__parse_targets(&k.c, &a, &t), 0);
    assert_int_equal(t.n, 2);
    assert_int_equal(t.items[0].k->id, KIND_WORKLOAD);
    assert_string_equal(t.items[0].name, "w1");
    assert_int_equal(t.items[1].k->id, KIND_RESOURCEFLAVOR);
    xfree(t.items);

    t = (struct cli_targets){0};
    char *a3[] = {"np"};
    a = (struct cli_args){1, a3};
    assert_int_equal(cli__parse_targets(&k.c, &a, &t), 0);
    assert_int_equal(t.n, 1);
    assert_null(t.items[0].name); /* a list */
    xfree(t.items);

    t = (struct cli_targets){0};
    char *a4[] = {"gizmos"};
    a = (struct cli_args){1, a4};
    assert_int_equal(cli__parse_targets(&k.c, &a, &t), 1);
    xfree(t.items);
    t = (struct cli_targets){0};
    char *a5[] = {"cq/x", "lq"};
    a = (struct cli_args){2, a5};
    assert_int_equal(cli__parse_targets(&k.c, &a, &t), 1); /* mixed forms */
    xfree(t.items);
    fflush(k.c.err);
    assert_non_null(strstr(k.err_buf, "doesn't have a resource type \"gizmos\""));
    assert_non_null(strstr(k.err_buf, "resource/name form"));
    cap_close(&k);
}

/* ---- server resolution with a fake environment ---- */

static const char *env_keys[8], *env_vals[8];
static int env_n;

static char *fake_getenv(const char *key)
{
    for (int i = 0; i < env_n; i++)
        if (!strcmp(env_keys[i], key))
            return (char *)env_vals[i];
    return NULL;
}

static void env_set(const char *k, const char *v)
{
    env_keys[env_n] = k;
    env_vals[env_n++] = v;
}

static void test_server_flag_and_env(void **state)
{
    (void)state;
    env_n = 0;
    env_set("CUEUE_SERVER", "http://env:1/");
    char *u = cli__resolve_server("127.0.0.1:7000/", NULL, fake_getenv);
    assert_string_equal(u, "http://127.0.0.1:7000");
    xfree(u);
    u = cli__resolve_server(NULL, NULL, fake_getenv);
    assert_string_equal(u, "http://env:1");
    xfree(u);
    env_n = 0;
    u = cli__resolve_server(NULL, NULL, fake_getenv);
    assert_string_equal(u, CLI_DEFAULT_SERVER);
    xfree(u);
}

static void test_server_url_file_in_state_dirs(void **state)
{
    (void)state;
    char tmpl[] = "/tmp/cueue-cli-test-XXXXXX";
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    char *sub = xasprintf("%s/cueue", dir);
    char *file = xasprintf("%s/server.url", sub);
    char *cmd = xasprintf("mkdir -p %s", sub);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(file, "w");
    fputs("http://127.0.0.1:41234\n", f);
    fclose(f);

    env_n = 0; /* XDG_STATE_HOME/cueue/server.url */
    env_set("XDG_STATE_HOME", dir);
    env_set("HOME", "/nonexistent");
    char *u = cli__resolve_server(NULL, NULL, fake_getenv);
    assert_string_equal(u, "http://127.0.0.1:41234");
    xfree(u);

    env_n = 0; /* CUEUE_STATE_DIR wins over XDG */
    env_set("CUEUE_STATE_DIR", "/nonexistent-state");
    env_set("XDG_STATE_HOME", dir);
    u = cli__resolve_server(NULL, NULL, fake_getenv);
    assert_string_equal(u, CLI_DEFAULT_SERVER);
    xfree(u);

    u = cli__resolve_server(NULL, sub, fake_getenv); /* --state-dir */
    assert_string_equal(u, "http://127.0.0.1:41234");
    xfree(u);

    char *sd = cli__state_dir(NULL, fake_getenv);
    assert_string_equal(sd, "/nonexistent-state");
    xfree(sd);

    unlink(file);
    rmdir(sub);
    rmdir(dir);
    xfree(cmd);
    xfree(file);
    xfree(sub);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_global_flags_anywhere),
        cmocka_unit_test(test_long_namespace_and_double_dash),
        cmocka_unit_test(test_unknown_flag_is_a_usage_error),
        cmocka_unit_test(test_unknown_short_flag_and_missing_value),
        cmocka_unit_test(test_help_prints_verb_help),
        cmocka_unit_test(test_parse_is_repeatable),
        cmocka_unit_test(test_counts_and_booleans),
        cmocka_unit_test(test_targets),
        cmocka_unit_test(test_server_flag_and_env),
        cmocka_unit_test(test_server_url_file_in_state_dirs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
