/*
 * cli: the `cueue` command. Dispatches `server` and `sim` to their modules
 * and every other verb (apply, get, describe, delete, logs, create, wait,
 * nodepool, cluster) to the HTTP client, which talks to a running server
 * only through its Kubernetes-shaped API.
 */
#ifndef CUEUE_CLI_CLI_H
#define CUEUE_CLI_CLI_H

/* Run the command line; returns the process exit status. */
int cli_main(int argc, char **argv);

#endif
