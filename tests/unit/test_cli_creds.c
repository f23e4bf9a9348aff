/* Unit tests of the CLI's credentials from a kubeconfig (src/cli/config.c):
 * the current context's token, CA and server, quoted tokens, missing parts,
 * and that the token goes only to its own server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <string.h>

#include "cli/cli-int.h"
#include "util/err.h"
#include "util/xalloc.h"

static void test_current_context_token_and_ca(void **state)
{
    (void)state;
    /* "LS0tLS1CRUdJTg==" is base64 of "-----BEGIN" */
    const char *kc = "apiVersion: v1\n"
                     "kind: Config\n"
                     "clusters:\n"
                     "- cluster: {server: 'https://x:1'}\n"
                     "  name: other\n"
                     "- cluster:\n"
                     "    certificate-authority-data: LS0tLS1CRUdJTg==\n"
                     "    server: https://127.0.0.1:6443\n"
                     "  name: cueue\n"
                     "contexts:\n"
                     "- context: {cluster: other, user: other}\n"
                     "  name: other\n"
                     "- context: {cluster: cueue, user: cueue}\n"
                     "  name: cueue\n"
                     "current-context: cueue\n"
                     "users:\n"
                     "- name: other\n"
                     "  user: {token: wrong}\n"
                     "- name: cueue\n"
                     "  user:\n"
                     "    token: \"1234e5\"\n";
    struct cli_creds c = {0};
    assert_int_equal(cli__kubeconfig_creds(kc, strlen(kc), &c), 0);
    assert_string_equal(c.token, "1234e5"); /* quoted: a string, not a float */
    assert_string_equal(c.ca_pem, "-----BEGIN");
    assert_string_equal(c.server, "https://127.0.0.1:6443");
    xfree(c.token);
    xfree(c.ca_pem);
    xfree(c.server);
}

/* The kubeconfig's token and CA go to its own server only: --server or
 * $CUEUE_SERVER naming another one (another port, plain http) gets neither. */
static void test_creds_bound_to_their_server(void **state)
{
    (void)state;
    static const struct {
        const char *server;
        bool kept;
    } cases[] = {
        {"https://127.0.0.1:6443", true},
        {"https://127.0.0.1:6444", false},
        {"http://127.0.0.1:6443", false},
        {"https://evil.example:6443", false},
        {NULL, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cli_creds c = {xstrdup("tok"), xstrdup("PEM"), xstrdup("https://127.0.0.1:6443/")};
        cli__creds_bind(&c, cases[i].server);
        assert_int_equal(c.token != NULL, cases[i].kept);
        assert_int_equal(c.ca_pem != NULL, cases[i].kept);
        xfree(c.token);
        xfree(c.ca_pem);
        xfree(c.server);
    }
    /* a kubeconfig that names no server binds to none */
    struct cli_creds c = {xstrdup("tok"), NULL, NULL};
    cli__creds_bind(&c, "https://127.0.0.1:6443");
    assert_null(c.token);
}

static void test_missing_parts_stay_null(void **state)
{
    (void)state;
    const char *kc = "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user: {}\n";
    struct cli_creds c = {0};
    assert_int_equal(cli__kubeconfig_creds(kc, strlen(kc), &c), 0);
    assert_null(c.token);
    assert_null(c.ca_pem);
    assert_int_equal(cli__kubeconfig_creds("a: [", 4, &c), CU_EBADREQ);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_current_context_token_and_ca),
        cmocka_unit_test(test_missing_parts_stay_null),
        cmocka_unit_test(test_creds_bound_to_their_server),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
