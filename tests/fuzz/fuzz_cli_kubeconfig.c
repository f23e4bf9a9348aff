/*
 * fuzz_cli_kubeconfig: the CLI reads a kubeconfig (its current context's
 * token, CA and server) from a file anyone may have written:
 * cli__kubeconfig_creds, then binds them to a server (cli__creds_bind).
 */
#include "cli/cli-int.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cli_creds c = {NULL, NULL, NULL};
    cli__kubeconfig_creds((const char *)data, size, &c);
    cli__creds_bind(&c, "https://127.0.0.1:6443");
    xfree(c.token);
    xfree(c.ca_pem);
    xfree(c.server);
    return 0;
}
