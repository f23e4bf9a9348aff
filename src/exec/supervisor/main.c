/*
 * cueue-pod-supervisor: the per-pod supervisor program of the local
 * executor (src/exec/local_sup.c holds all of it; local-int.h says what it
 * is handed). Its own small program, linked against libc and jansson only,
 * so that starting a pod does not load the whole of cueue. Started by
 * `cueue server` (local_spawn.c) as
 *   cueue-pod-supervisor <pod dir>
 * with the pod's lock on fd 3 and its spec on fd 4, or, to start many pods
 * cheaply, once as
 *   cueue-pod-supervisor --fork-server
 * with a socket on fd 3 over which the server asks for supervisors, which
 * it forks (local_forksrv.c). The OCI executor's pods run each container
 * through the same program as `cueue-pod-supervisor --oci-shim ...`
 * (oci_shim.c). Not meant to be run by hand.
 */
#include <stdio.h>
#include <string.h>

#include "exec/local-int.h"
#include "exec/oci-int.h"

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], LX_FORKSRV_ARG))
        return lx_forksrv_main(LX_FORKSRV_FD);
    if (argc >= 2 && !strcmp(argv[1], OCI_SHIM_ARG))
        return oci_shim_main(argc, argv);
    if (argc != 2 || !argv[1][0] || argv[1][0] == '-') {
        fprintf(stderr,
                "usage: %s POD_DIR | " LX_FORKSRV_ARG "\n"
                "the local executor's per-pod supervisor, started by `cueue server` with the "
                "pod's lock on fd %d and its spec on fd %d (or its fork server, with a socket on "
                "fd %d); not meant to be run by hand\n",
                argc > 0 ? argv[0] : LX_SUP_PROGRAM, LX_LOCK_FD, LX_SPEC_FD, LX_FORKSRV_FD);
        return 2;
    }
    return lx_sup_main(argv[1]);
}
