/*
 * server: `cueue server`, the control plane process: the object store
 * (SQLite in a state directory), the control loop (ctrl) on its own thread,
 * and a Kubernetes-shaped HTTP API on loopback (libmicrohttpd).
 */
#ifndef CUEUE_SERVER_SERVER_H
#define CUEUE_SERVER_SERVER_H

/* Entry point of `cueue server [flags]` (argv[0] is "server"). Returns the
 * process exit status. */
int srv_main(int argc, char **argv);

#endif
