/*
 * exec: the executor seam. The node agent (ctrl/nodeagent.c) hands it the
 * pods bound to nodes it serves; the executor runs their containers and
 * reports what happened, asynchronously, through exec_poll. Two
 * implementations: the local one (real processes on this machine, logs in
 * the state directory) for `cueue server`, and the simulated one (pods that
 * finish after a scenario-given duration) for `cueue sim`. The seam is kept
 * wide enough for an engine that places and runs pods itself (Slurm): start
 * never blocks and every state change comes back through poll.
 */
#ifndef CUEUE_EXEC_EXEC_H
#define CUEUE_EXEC_EXEC_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/clock.h"

struct exec;

/* One environment variable. */
struct exec_env {
    char *name;
    char *value;
};

/* What the executor needs to start a pod. All borrowed for the call. */
struct exec_pod {
    const char *ns;
    const char *name;
    const char *uid;
    const json_t *pod;       /* the Pod object (spec.containers: command, args,
                                env, workingDir; volumes; restartPolicy) */
    const char *sandbox_dir; /* per-pod directory the executor may use; volume
                                contents are already materialised under it */
    const struct exec_env *env; /* extra variables (multi-host identity,
                                   CUEUE_METRICS_FILE, ...) added to each container */
    size_t n_env;
    /* mountPath -> host directory rewrites: a command/arg/env/workingDir
     * value equal to a mountPath or starting with "mountPath/" is rewritten
     * to the host directory (pods run without containers, see docs). */
    const struct exec_env *mounts; /* name = mountPath, value = host dir */
    size_t n_mounts;
};

enum exec_state {
    EXEC_RUNNING,   /* every container started */
    EXEC_SUCCEEDED, /* all containers exited 0 */
    EXEC_FAILED,    /* a container exited non-zero, was killed, or could not start */
};

/* A state change of one pod. */
struct exec_report {
    char *uid;
    enum exec_state state;
    int exit_code;        /* first failing container's code (128+signal if killed) */
    char *reason;         /* "Completed", "Error", "StartError", "OOMKilled", ... */
    char *message;        /* human text, e.g. "ray: command not found" */
    int64_t at_ms;        /* when it happened */
    json_t *metrics;      /* last metrics dict the pod reported, or NULL (new ref) */
};

struct exec_reports {
    struct exec_report *items;
    size_t n, cap;
};

struct exec_ops {
    /* Start the pod's containers. Must not block. Returns 0 (the pod will
     * report EXEC_RUNNING or a failure through poll) or a negative code. */
    int (*start)(struct exec *x, const struct exec_pod *pod, char *err, size_t errlen);
    /* Stop a pod: SIGTERM now, SIGKILL after grace_ms (0 = kill at once).
     * The final state comes through poll. Unknown uids are ignored. */
    int (*stop)(struct exec *x, const char *uid, int64_t grace_ms);
    /* Append every state change since the last call to *out (non-blocking).
     * Returns the number appended. */
    int (*poll)(struct exec *x, struct exec_reports *out);
    /* Earliest time (ms) the executor needs poll to be called again without
     * an external wakeup (timers such as kill-after-grace or simulated
     * completions), or INT64_MAX. */
    int64_t (*next_deadline)(struct exec *x);
    /* Path of a container's log file (caller frees), or NULL if none. */
    char *(*log_path)(struct exec *x, const char *uid, const char *container);
    /* Stop everything and free the executor. */
    void (*free)(struct exec *x);
};

struct exec {
    const struct exec_ops *ops;
    /* Set by the control loop: called (from any thread) when new reports
     * are ready, so the loop wakes up and polls. May be NULL. */
    void (*notify)(void *ctx);
    void *notify_ctx;
};

/* Release the reports (reusable after). */
void exec_reports_release(struct exec_reports *r);

/* ---- the simulated executor (`cueue sim`) ---- */

/* What a simulated pod does: run for runtime_ms, then exit with exit_code
 * (0 = EXEC_SUCCEEDED, else EXEC_FAILED). */
struct exec_sim_outcome {
    int64_t runtime_ms;
    int exit_code;
};

struct exec_sim_opts {
    struct clk *clock;        /* borrowed; the simulation's virtual clock */
    /* Decide a pod's outcome from its Pod object (borrowed); *out arrives
     * filled with the defaults below. NULL = defaults for every pod. */
    void (*outcome)(void *ctx, const json_t *pod, struct exec_sim_outcome *out);
    void *ctx;
    int64_t default_runtime_ms; /* used when outcome is NULL or keeps it */
    bool honor_grace;           /* stop(): terminate after grace_ms (true) or
                                   at once (false) */
};

/* A simulated executor: start() reports EXEC_RUNNING at once and the final
 * state runtime_ms later (virtual time); stop() ends a running pod with exit
 * code 137 (128+SIGKILL) at once, or 143 (SIGTERM) after the grace period
 * when honor_grace. next_deadline() is the earliest pending report, so the
 * simulator can jump the clock straight to it. Reports come out of poll()
 * in (time, order of scheduling) order, only once the clock reached them.
 * Returns a new executor (opts copied); free with ops->free. */
struct exec *exec_sim_new(const struct exec_sim_opts *opts);

#endif
