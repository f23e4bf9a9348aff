/*
 * fuzz_cli_kubeconfig: the CLI reads a kubeconfig (its current context's
 * token and CA) from a file anyone may have written: cli__kubeconfig_creds.
 */
#include "cli/cli-int.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cli_creds c = {NULL, NULL};
    cli__kubeconfig_creds((const char *)data, size, &c);
    xfree(c.token);
    xfree(c.ca_pem);
    return 0;
}
