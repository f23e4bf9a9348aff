/*
 * local-int: internals shared by the local executor's files. Not a public
 * API.
 *   local.c        the server side: start/stop/poll/adopt, one watcher
 *                  thread that follows every pod's supervisor (pidfd,
 *                  inotify on the sandbox) and turns its status file and the
 *                  metrics file into reports
 *   local_spawn.c  the server side of starting a supervisor: finding its
 *                  program, handing it the lock and the spec
 *   local_sup.c    the per-pod supervisor (the program cueue-pod-supervisor,
 *                  src/exec/supervisor/main.c): runs the containers, writes
 *                  the status file
 *   local_forksrv.c the same program's fork server: one per executor,
 *                  forking a supervisor per pod without an exec
 *   local_status.c what the two sides share (the spec text, the status
 *                  file) and the process-identity helpers
 *   local_cmd.c    turning a Pod's containers into argv/envp/cwd, finding
 *                  programs
 *
 * The supervisor is its own small program (libc and jansson only), not the
 * cueue binary run again: a pod start then costs one exec of a small
 * program instead of loading cueue and its ~40 shared libraries.
 *
 * Files in a pod's directory <state_dir>/pods/<uid>/ (none ends in ".log",
 * so none can be taken for a container's log):
 *   supervisor.json       the status (the supervisor rewrites it after every
 *                         change; "seq" counts them)
 *   supervisor.json.tmp   the status before the last one: rewritten with the
 *                         next one and swapped with supervisor.json
 *                         (RENAME_EXCHANGE), so updates delete no inodes
 *   supervisor.lock       flock()ed by the supervisor for its whole life: a
 *                         held lock = a live supervisor, whoever asks
 *   supervisor.out        the supervisor's own messages (created only when
 *                         it has one)
 *   supervisor.started    the pod ran here: created (O_EXCL, fsynced with
 *                         its directory) by the supervisor before its first
 *                         container starts, never removed while the sandbox
 *                         lives. A supervisor that finds it runs nothing, the
 *                         executor never starts a pod that has it, and adopt
 *                         tells a pod that ran and vanished (CU_EEXIST) from
 *                         one that never started: a pod runs at most once
 *                         across crashes of the server
 * The spec (what to run) travels in a memfd, never through the file system:
 * only the supervisor ever reads it, once, as it starts.
 */
#ifndef CUEUE_EXEC_LOCAL_INT_H
#define CUEUE_EXEC_LOCAL_INT_H

#include <spawn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/exec.h"

/* The supervisor program, found next to the running program
 * (/proc/self/exe): `cueue-pod-supervisor <pod dir>`, with the pod's lock
 * on fd LX_LOCK_FD and its spec (lx_spec_dump's text) on fd LX_SPEC_FD. */
#define LX_SUP_PROGRAM "cueue-pod-supervisor"
#define LX_LOCK_FD 3
#define LX_SPEC_FD 4
/* `cueue-pod-supervisor --fork-server`: the fork server, its socket on
 * LX_FORKSRV_FD (local_forksrv.c). */
#define LX_FORKSRV_ARG "--fork-server"
#define LX_FORKSRV_FD 3
#define LX_STATUS_FILE "supervisor.json"
#define LX_LOCK_FILE "supervisor.lock"
#define LX_OUT_FILE "supervisor.out"
#define LX_STARTED_FILE "supervisor.started"
/* Grace of a plain SIGTERM to a supervisor (one without a queued value):
 * Kubernetes' default terminationGracePeriodSeconds. */
#define LX_DEFAULT_GRACE_MS 30000
/* A container's PATH when the server has none. */
#define LX_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* Who a container runs as when it is not the supervisor's own user. */
#define LX_MAX_GROUPS 32
struct lx_user {
    bool set;       /* false: the supervisor's user (nothing changes) */
    uint32_t uid, gid;
    uint32_t groups[LX_MAX_GROUPS]; /* supplementary groups (setgroups) */
    size_t n_groups;
};

/* What one container runs. All strings owned. */
struct lx_cmd {
    struct lx_user user; /* set by the executor (api_pod_run_as) */
    char *name;
    bool init;     /* an initContainer */
    char **argv;   /* NULL-terminated; NULL when error is set */
    char **envp;   /* NULL-terminated */
    char *cwd;
    char *error;   /* set when the container cannot start (StartError message) */
    char *log_path; /* stdout+stderr (exec_log_path); set by the executor */
    char *reason_file; /* NULL, or a file that, when the container ended
                          non-zero, may hold its reason (the OCI shim writes
                          "OOMKilled" there); read and removed then */
};

/* Build the commands of every container of pod (initContainers first, then
 * containers), applying the kubelet's $(VAR) expansion and the mountPath
 * rewrites. base_env is the server's environment (NULL-terminated,
 * borrowed). Returns the array (caller frees with lx_cmds_free) and its
 * length in *n. */
struct lx_cmd *lx_cmds_build(const struct exec_pod *pod, char *const *base_env,
                             const char *sandbox, size_t *n);
void lx_cmds_free(struct lx_cmd *cmds, size_t n);

/* Kubernetes' $(VAR) expansion of s against names/values[0..n) (later
 * entries win): "$$" -> "$", unknown references stay as written. Caller
 * frees. */
char *lx_expand(const char *s, char *const *envp);

/* Rewrite every occurrence of a mount path that stands as a path token
 * (at the start, or after a space, '=', ':' or quote; followed by the end,
 * '/', a space, ':', ';' or a quote) to its host directory, longest mount
 * path first. Caller frees. */
char *lx_rewrite_mounts(const char *s, const struct exec_env *mounts, size_t n_mounts);

/* Find the program argv0 the way execvp would, with PATH taken from envp
 * (default "/usr/local/bin:/usr/bin:/bin"), relative names with a '/' taken
 * from cwd. Returns the path (caller frees), or NULL with the runtime's
 * message in *err (caller frees): `exec: "ray": executable file not found
 * in $PATH`. */
char *lx_find_program(const char *argv0, char *const *envp, const char *cwd, char **err);

/* ---- hooks: what another executor adds to the local one ---- */

/* Called by the local executor, under its lock (hooks take their own
 * locks only inside). The OCI executor (oci.c) is the local executor with
 * these. */
struct lx_hooks {
    void *ctx;
    /* At start (the control loop's thread), after the containers' commands
     * are built (argv, envp, cwd resolved; error set for those that cannot
     * start): rewrite them (what the supervisor runs), or set error on them
     * (the pod then fails with StartError). dir = <state_dir>/pods/<uid>. */
    void (*prepare)(void *ctx, const char *uid, const char *dir, const struct exec_pod *pod,
                    struct lx_cmd *cmds, size_t n);
    /* A pod is over (its terminal report is queued), was lost, killed with
     * the executor, or is removed: release what prepare took. Idempotent. */
    void (*done)(void *ctx, const char *uid, const char *dir);
    /* A restarted server adopted the pod in dir. */
    void (*adopted)(void *ctx, const char *uid, const char *dir);
    /* The pod's IP (caller frees), NULL = none of its own. */
    char *(*pod_ip)(void *ctx, const char *uid);
    void (*free)(void *ctx);
};

/* The local executor (exec_local_new) with hooks (copied; NULL = none).
 * On failure (NULL) the hooks' free is not called. */
struct exec *lx_new(const char *state_dir, const struct lx_hooks *hooks);

/* ---- the supervisor's input: the spec ---- */

enum lx_policy { LX_NEVER, LX_ON_FAILURE, LX_ALWAYS };

struct lx_spec {
    char *uid;
    char *sandbox;        /* the pod's sandbox (metrics file, default cwd) */
    enum lx_policy policy;
    int64_t backoff_ms;   /* restart backoff base (doubles to 5 min) */
    struct lx_cmd *cmds;  /* initContainers then containers */
    size_t n;
};

/* The spec as compact JSON text (caller frees): {"uid", "sandbox",
 * "restartPolicy", "restartBackoffMs", "containers": [{"name", "init",
 * "argv", "env", "cwd", "startError", "log", "reasonFile", "user":
 * {"uid", "gid", "groups"} (only when user.set)}]}. */
char *lx_spec_dump(const struct lx_spec *spec);
/* Parse text (len bytes, need not be NUL-terminated) written by
 * lx_spec_dump into *spec (release with lx_spec_release; zeroed first).
 * 0, or CU_EINVAL with the reason in err. */
int lx_spec_parse(const char *text, size_t len, struct lx_spec *spec, char *err,
                  size_t errlen);
void lx_spec_release(struct lx_spec *spec);

/* ---- the supervisor's output: supervisor.json ---- */

/* One container (Kubernetes ContainerStatus plus what a restarted server
 * needs to find its processes). Strings owned. */
struct lx_cstatus {
    char *name;
    bool init;
    enum exec_cstate state;
    int pid;               /* RUNNING: main process = process group id; 0 = none */
    uint64_t pid_start;    /* pid's start time (/proc/<pid>/stat, clock ticks
                              since boot) so a reused pid is never signalled */
    int exit_code;         /* TERMINATED: exit status, 128+signal when killed */
    char *reason;          /* TERMINATED: Completed / Error / StartError */
    char *message;
    int64_t started_ms, finished_ms;
    int restarts;
    int64_t restart_at_ms; /* > 0: a restart is due then */
};

struct lx_status {
    int pid;               /* the supervisor */
    uint64_t pid_start;
    uint64_t seq;          /* incremented by every write */
    bool mains_started;    /* the main containers were started */
    bool stopping;         /* a stop was requested */
    bool done;             /* every container is over; result_* hold the outcome */
    enum exec_state result;
    int exit_code;
    char *reason, *message;
    int64_t finished_ms;
    struct lx_cstatus *c;  /* initContainers then containers */
    size_t n;
};

/* Write st to path as JSON: to "<path>.tmp" then swapped with path
 * (renamed when path does not exist), so a reader sees the old or the new
 * file, never half of one; "<path>.tmp" keeps the old one. 0 or CU_EIO. */
int lx_status_write(const char *path, const struct lx_status *st);
/* Read a status file into *st (release with lx_status_release; *st is
 * zeroed first). 0, CU_ENOTFOUND (no file), CU_EINVAL (not a status). */
int lx_status_read(const char *path, struct lx_status *st);
void lx_status_release(struct lx_status *st);
/* Decide the pod's outcome from its containers (kubelet semantics): the
 * first container that could not start (StartError), else the first that
 * exited non-zero, fails the pod with its code, reason and message; a pod
 * whose main containers never started failed ("the pod was stopped before
 * its containers started", 143); else it Succeeded. Sets done, result_*,
 * finished_ms = now_ms. */
void lx_status_conclude(struct lx_status *st, int64_t now_ms);

/* ---- processes ---- */

/* Start time of process pid (field 22 of /proc/<pid>/stat), 0 when it does
 * not exist. */
uint64_t lx_proc_start(int pid);
/* Spawn attributes of every process the executor starts (supervisors,
 * containers): its own session, no blocked signals, every disposition back
 * to the default. Destroy with posix_spawnattr_destroy. */
void lx_spawn_attrs(posix_spawnattr_t *at);
/* Signal the process group pid when its leader is still the process that
 * started at pid_start (never a reused pid). True when signalled. */
bool lx_group_signal(int pid, uint64_t pid_start, int sig);
/* True while a supervisor holds the lock file of pod directory dir. */
bool lx_sup_is_locked(const char *dir);
/* True when pod directory dir has LX_STARTED_FILE (a supervisor began to
 * run the pod there once). */
bool lx_has_started(const char *dir);
/* The first line of the small file at path (its first len-1 bytes at
 * most, the newline cut) into buf, NUL-terminated. True when the file
 * could be read and was not empty; else buf is "". */
bool lx_read_line(const char *path, char *buf, size_t len);

/* The supervisor program in dir, NULL = next to the running program
 * (dirname of /proc/self/exe): dir/LX_SUP_PROGRAM (caller frees). NULL
 * when it is not there or not executable, with the reason in err ("the pod
 * supervisor program /x/cueue-pod-supervisor is missing (No such file or
 * directory): it is built and installed next to cueue ..."). */
char *lx_sup_program(const char *dir, char *err, size_t errlen);
/* Start cmd's process (the supervisor does, for each container): path
 * with cmd->argv/envp, stdin /dev/null, stdout and stderr on logfd, its
 * own session, default signals, nothing else open; when cmd->user.set,
 * as that user: supplementary groups set, then the gid, then the uid
 * (all before chdir to cmd->cwd and the exec, so both are checked as the
 * pod's user). Returns 0 with *pid, or an errno value (the child's, from
 * chdir, the id changes or exec, when it got that far). */
int lx_spawn_container(const char *path, const struct lx_cmd *cmd, int logfd, int *pid);

/* Start the supervisor of pod directory dir: program (lx_sup_program) with
 * the pod's lock file taken here and handed over on LX_LOCK_FD, spec_text
 * in a memfd on LX_SPEC_FD, its own session, stdin/stdout/stderr
 * /dev/null, cwd dir. Returns 0 with *pid, CU_EEXIST when a supervisor
 * already holds the pod's lock, or CU_EIO with the reason in err. */
int lx_sup_spawn(const char *program, const char *dir, const char *spec_text, int *pid,
                 char *err, size_t errlen);
/* The fork server's answer to one request: pid > 0 (the supervisor,
 * its pidfd attached) or err (an errno value). */
struct lx_forksrv_reply {
    int32_t pid;
    int32_t err;
};

/* The server's handle on its fork server. */
struct lx_forksrv {
    int sock; /* -1 = none running */
    int pid;
};

/* Start the fork server: program (lx_sup_program) with LX_FORKSRV_ARG and
 * one end of a SOCK_SEQPACKET socket pair on LX_FORKSRV_FD, in its own
 * session, stdio /dev/null. 0, or CU_EIO with the reason in err. */
int lx_forksrv_start(struct lx_forksrv *fs, const char *program, char *err, size_t errlen);
/* Have the fork server start the supervisor of pod directory dir: the
 * pod's lock taken here and handed over with spec_text in a memfd, as
 * lx_sup_spawn does. Waits for the answer (bounded: a fork server silent
 * for 5 s is stopped). Returns 0 with *pid and *pidfd (caller closes; -1
 * when the kernel gave none), CU_EEXIST when a supervisor already holds
 * the lock, CU_EIO when the fork server failed (it is stopped then; the
 * caller may start a new one or spawn directly), with the reason in err. */
int lx_forksrv_spawn(struct lx_forksrv *fs, const char *dir, const char *spec_text, int *pid,
                     int *pidfd, char *err, size_t errlen);
/* Stop the fork server (close its socket: it exits once idle; the
 * supervisors it started carry on) and reap it. No-op when none runs. */
void lx_forksrv_stop(struct lx_forksrv *fs);
/* Whether the local executor x starts supervisors through its fork server
 * (true, the default: cheap) or executes the supervisor program for each
 * pod (false: tests cover both ways). For pods started from now on. */
void lx_set_fork_server(struct exec *x, bool on);
/* The fork server's whole life (single-threaded; serves requests on sock
 * until it is closed; returns its exit status). local_forksrv.c. */
int lx_forksrv_main(int sock);

/* The supervisor's whole life (single-threaded; returns its exit status):
 * read the spec from LX_SPEC_FD, run the containers, rewrite the status
 * file after every change; SIGTERM stops the pod (grace = the signal's
 * queued int in ms, or LX_DEFAULT_GRACE_MS). Expects LX_LOCK_FD to hold
 * the pod's lock. The main of cueue-pod-supervisor. */
int lx_sup_main(const char *dir);

#endif
