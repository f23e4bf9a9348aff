/*
 * cueue: one binary. `cueue server` runs the control plane, `cueue sim`
 * runs it in virtual time, and every other verb is the CLI, which talks to
 * a server over HTTP only.
 */
#include "cli/cli.h"

int main(int argc, char **argv)
{
    return cli_main(argc, argv);
}
