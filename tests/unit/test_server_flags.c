/* Unit tests of `cueue server`'s flags (src/server/flags.c): one table
 * drives getopt_long and --help. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/flags.h"
#include "util/log.h"

/* Parse the words after "server"; *out_text and *err_text get what was
 * printed (caller frees). */
static int parse(struct srv_flags *f, const char *const *words, char **out_text,
                 char **err_text)
{
    char *argv[32] = {(char *)"server"};
    int argc = 1;
    for (; words[argc - 1]; argc++)
        argv[argc] = (char *)words[argc - 1];
    size_t no, ne;
    FILE *out = open_memstream(out_text, &no), *err = open_memstream(err_text, &ne);
    int rc = srv_flags_parse(f, argc, argv, out, err);
    fclose(out);
    fclose(err);
    return rc;
}

/* Who pods run as: --pod-user UID[:GID] (GID = UID when not given), 0
 * only with --allow-root-pods, --pod-sandboxes; the defaults. */
static void test_pod_user_flags(void **state)
{
    (void)state;
    struct srv_flags f;
    char *o, *e;
    static const char *const none[] = {NULL};
    assert_int_equal(parse(&f, none, &o, &e), -1);
    assert_int_equal(f.pods.pod_uid, 65534);
    assert_int_equal(f.pods.pod_gid, 65534);
    assert_false(f.pods.allow_root);
    assert_null(f.pod_sandboxes);
    srv_flags_release(&f);
    free(o);
    free(e);
    static const char *const some[] = {"--pod-user", "1234", "--pod-sandboxes", "/srv/sb", NULL};
    assert_int_equal(parse(&f, some, &o, &e), -1);
    assert_int_equal(f.pods.pod_uid, 1234);
    assert_int_equal(f.pods.pod_gid, 1234);
    assert_string_equal(f.pod_sandboxes, "/srv/sb");
    srv_flags_release(&f);
    free(o);
    free(e);
    static const char *const root[] = {"--pod-user=0:0", "--allow-root-pods", NULL};
    assert_int_equal(parse(&f, root, &o, &e), -1);
    assert_int_equal(f.pods.pod_uid, 0);
    assert_true(f.pods.allow_root);
    srv_flags_release(&f);
    free(o);
    free(e);
    static const char *const bad[][3] = {
        {"--pod-user", "0", "needs --allow-root-pods too"},
        {"--pod-user", "7:0", "needs --allow-root-pods too"},
        {"--pod-user", "x", "invalid --pod-user \"x\""},
        {"--pod-user", "1:", "invalid --pod-user \"1:\""},
        {"--pod-user", "-1", "invalid --pod-user \"-1\""},
        {"--pod-user", "2147483648", "invalid --pod-user"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *const words[] = {bad[i][0], bad[i][1], NULL};
        assert_int_equal(parse(&f, words, &o, &e), 2);
        assert_non_null(strstr(e, bad[i][2]));
        srv_flags_release(&f);
        free(o);
        free(e);
    }
}

static void test_every_flag_sets_its_field(void **state)
{
    (void)state;
    static const char *const words[] = {
        "--state-dir", "/tmp/x", "--listen=::1", "--port", "0",
        "--scale-down-unneeded-time=90s", "--provisioning-max-wait", "1.5h",
        "--flavor-fallback", "--fallback-node-wait=1h30m", "--fallback-provisioning-timeout=0",
        "--fallback-flavor-backoff", "300ms", "--no-default-pool", "--stop-pods-on-exit",
        "--log-level=debug", NULL};
    struct srv_flags f;
    char *o, *e;
    assert_int_equal(parse(&f, words, &o, &e), -1);
    assert_string_equal(e, "");
    assert_string_equal(f.state_dir, "/tmp/x");
    assert_string_equal(f.listen, "::1");
    assert_int_equal(f.port, 0);
    assert_int_equal(f.scale_down_ms, 90000);
    assert_int_equal(f.provisioning_max_wait_ms, 5400000); /* 1.5h, as the sim reads it */
    assert_true(f.flavor_fallback);
    assert_int_equal(f.fallback_node_wait_ms, 5400000);
    assert_int_equal(f.fallback_provreq_timeout_ms, 0);
    assert_int_equal(f.fallback_backoff_ms, 300);
    assert_true(f.no_default_pool);
    assert_true(f.stop_pods_on_exit);
    assert_int_equal(f.log_level, LOG_DEBUG);
    srv_flags_release(&f);
    free(o);
    free(e);
}

static void test_defaults_when_no_flag_is_given(void **state)
{
    (void)state;
    static const char *const none[] = {NULL};
    struct srv_flags f;
    char *o, *e;
    setenv("CUEUE_STATE_DIR", "/tmp/from-env", 1);
    assert_int_equal(parse(&f, none, &o, &e), -1);
    assert_string_equal(f.state_dir, "/tmp/from-env");
    assert_string_equal(f.listen, "127.0.0.1");
    assert_int_equal(f.port, 6443);
    assert_int_equal(f.scale_down_ms, -1);
    assert_int_equal(f.provisioning_max_wait_ms, -1);
    assert_int_equal(f.log_level, -1);
    assert_false(f.flavor_fallback);
    srv_flags_release(&f);
    free(o);
    free(e);
}

static void test_bad_flags_exit_2_naming_them(void **state)
{
    (void)state;
    static const struct {
        const char *words[4];
        const char *err;
    } cases[] = {
        {{"--port", "nope"}, "cueue server: invalid --port \"nope\": want 0..65535\n"},
        {{"--state-dir="}, "cueue server: invalid --state-dir \"\": want a directory path\n"},
        {{"--fallback-node-wait=soon"}, "invalid --fallback-node-wait \"soon\""},
        {{"--provisioning-max-wait", "-1h"}, "must not be negative"},
        {{"--log-level", "loud"}, "invalid --log-level \"loud\": want error, warn, info or debug"},
        {{"--bogus"}, "cueue server: unknown flag \"--bogus\" (see cueue server --help)\n"},
        {{"--port"}, "cueue server: flag --port needs a value\n"},
        {{"extra"}, "unexpected argument \"extra\""},
        {{"--max-connections=0"}, "invalid --max-connections \"0\": want an integer in 1..1000000"},
        {{"--max-watches-per-client", "-3"}, "invalid --max-watches-per-client \"-3\""},
        {{"--http-threads=257"}, "invalid --http-threads \"257\": want an integer in 1..256"},
        {{"--max-request-body=10"}, "invalid --max-request-body \"10\": want an integer in 1024.."},
        {{"--idle-timeout=soon"}, "invalid --idle-timeout \"soon\""},
        {{"--anonymous", "--listen=0.0.0.0"},
         "--anonymous is allowed only with a loopback --listen address"},
        {{"--dashboard-listen=0.0.0.0:8265"},
         "invalid --dashboard-listen \"0.0.0.0\": the dashboard has no TLS"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct srv_flags f;
        char *o, *e;
        assert_int_equal(parse(&f, cases[i].words, &o, &e), 2);
        if (!strstr(e, cases[i].err))
            fail_msg("%s: printed \"%s\", want \"%s\"", cases[i].words[0], e, cases[i].err);
        srv_flags_release(&f);
        free(o);
        free(e);
    }
}

/* The limit flags (limits-auth) fill struct srv_limits; defaults are
 * srv_limits_defaults'; without --anonymous the server serves TLS. */
static void test_limit_and_auth_flags(void **state)
{
    (void)state;
    static const char *const words[] = {
        "--max-connections=10", "--max-connections-per-client", "2", "--max-watches=30",
        "--max-watches-per-client=4", "--max-request-body=2048", "--request-timeout=5s",
        "--idle-timeout=1500ms", "--http-threads=8", NULL};
    struct srv_flags f;
    char *o, *e;
    assert_int_equal(parse(&f, words, &o, &e), -1);
    assert_string_equal(e, "");
    assert_int_equal(f.limits.max_connections, 10);
    assert_int_equal(f.limits.max_connections_per_client, 2);
    assert_int_equal(f.limits.max_watches, 30);
    assert_int_equal(f.limits.max_watches_per_client, 4);
    assert_int_equal(f.limits.max_body_bytes, 2048);
    assert_int_equal(f.limits.request_timeout_ms, 5000);
    assert_int_equal(f.limits.idle_timeout_s, 2); /* rounded up */
    assert_int_equal(f.limits.threads, 8);
    assert_false(f.anonymous);
    assert_true(f.tls);
    srv_flags_release(&f);
    free(o);
    free(e);

    static const char *const none[] = {NULL};
    struct srv_limits def;
    srv_limits_defaults(&def);
    assert_int_equal(parse(&f, none, &o, &e), -1);
    assert_memory_equal(&f.limits, &def, sizeof(def));
    srv_flags_release(&f);
    free(o);
    free(e);

    static const char *const anon[] = {"--anonymous", "--listen=::1", NULL};
    assert_int_equal(parse(&f, anon, &o, &e), -1);
    assert_true(f.anonymous);
    assert_false(f.tls);
    srv_flags_release(&f);
    free(o);
    free(e);

    static const char *const anon_tls[] = {"--anonymous", "--tls", NULL};
    assert_int_equal(parse(&f, anon_tls, &o, &e), -1);
    assert_true(f.tls);
    srv_flags_release(&f);
    free(o);
    free(e);
}

/* --help lists every flag of the table with its value placeholder. */
static void test_help_is_generated_from_the_table(void **state)
{
    (void)state;
    static const char *const help[] = {"--help", NULL};
    struct srv_flags f;
    char *o, *e;
    assert_int_equal(parse(&f, help, &o, &e), 0);
    static const char *const lines[] = {
        "\n  --state-dir DIR     state directory",
        "\n                      else ~/.local/state/cueue\n",
        "\n  --port N            port (default 6443",
        "\n  --provisioning-max-wait DUR\n                      how long",
        "\n  --flavor-fallback   beyond Kueue",
        "\n  --stop-pods-on-exit kill every pod",
        "\n  --log-level LEVEL   error, warn",
        "\n  --max-connections-per-client N\n                      open connections per client",
        "\n  --anonymous         serve without authentication",
        "\n  --tls               serve HTTPS",
        "cueue server token create",
        "\n  -h, --help          show this help\n",
    };
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
        if (!strstr(o, lines[i]))
            fail_msg("--help lacks \"%s\":\n%s", lines[i], o);
    srv_flags_release(&f);
    free(o);
    free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_flag_sets_its_field),
        cmocka_unit_test(test_pod_user_flags),
        cmocka_unit_test(test_defaults_when_no_flag_is_given),
        cmocka_unit_test(test_limit_and_auth_flags),
        cmocka_unit_test(test_bad_flags_exit_2_naming_them),
        cmocka_unit_test(test_help_is_generated_from_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
