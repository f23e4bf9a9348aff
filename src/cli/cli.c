/* cli: command dispatch (see cli.h). */
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

int cli_main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        printf("usage: cueue <command> [args]\n");
        return argc < 2 ? 1 : 0;
    }
    fprintf(stderr, "cueue: unknown command '%s'\n", argv[1]);
    return 1;
}
