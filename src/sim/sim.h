/*
 * sim: `cueue sim SCENARIO`, the control plane in virtual time: the same
 * reconcilers and admission engine as `cueue server`, a memory store, a
 * virtual clock, an executor whose pods finish after scenario-given
 * durations, and a capacity model per node pool. Prints a trace (one JSON
 * object per line) and a summary.
 */
#ifndef CUEUE_SIM_SIM_H
#define CUEUE_SIM_SIM_H

/* Entry point of `cueue sim [flags] SCENARIO` (argv[0] is "sim"). Returns
 * the process exit status. */
int sim_main(int argc, char **argv);

#endif
