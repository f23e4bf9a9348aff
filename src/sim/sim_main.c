/* sim_main: `cueue sim` (placeholder until the simulator lands). */
#include "sim/sim.h"

#include <stdio.h>

int sim_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "cueue sim: not implemented yet\n");
    return 1;
}
