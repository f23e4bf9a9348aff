/* Unit tests of the CLI's credentials from a kubeconfig (src/cli/config.c):
 * the current context's token and CA, quoted tokens, missing parts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
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
    xfree(c.token);
    xfree(c.ca_pem);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
