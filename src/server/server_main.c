/* server_main: `cueue server` (placeholder until the server lands). */
#include "server/server.h"

#include <stdio.h>

int srv_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "cueue server: not implemented yet\n");
    return 1;
}
