/*
 * logs-int: what cmd_logs.c, logs_follow.c and logs_pods.c share (cmd_logs
 * calls logs_follow, both call logs_pods).
 */
#ifndef CUEUE_CLI_LOGS_INT_H
#define CUEUE_CLI_LOGS_INT_H

#include "cli/cli-int.h"

struct logs_opts {
    const char *container; /* -c, or NULL for each pod's default */
    bool follow;
    bool prefix;
    bool timestamps;
    const char *tail; /* --tail N as given (validated) */
};

/* Append the log path of pod (its namespace, the container to read) with
 * follow/tail/timestamps queries to path. Returns 0, or 1 after printing
 * (a name or namespace that cannot be a path segment). */
int logs__pod_path(struct cli_ctx *c, const struct logs_opts *o, const json_t *pod,
                   bool follow, struct sbuf *path);
/* The end of a finished Job's logs: when it failed, why each of its quiet
 * pods (quiet[i]: nothing was printed from pods[i]) failed
 * (cli__pod_failure_lines), then the final line. */
void logs__print_final(struct cli_ctx *c, const json_t *job, const json_t *pods,
                       const bool *quiet, const char *final);
/* The Job's pods (spec.selector.matchLabels, else controller-uid), sorted
 * with cli__pod_index_cmp. Returns 0 with *pods (new ref) or 1 after
 * printing the error. */
int logs__job_pods(struct cli_ctx *c, const json_t *job, json_t **pods);
/* logs -f job/NAME: follow every pod's log (curl multi) until the Job has
 * finished and every stream has ended, then print the final line. Returns
 * 0 or 1. */
int logs__follow_job(struct cli_ctx *c, const struct logs_opts *o, const json_t *job);

#endif
