/*
 * exec: the executor seam. The node agent (ctrl/nodes/nodeagent.c) hands it the
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
    const json_t *node;      /* the Node the pod is bound to, or NULL (the
                                Slurm executor runs pods of Slurm Nodes) */
};

/* One file of a staged volume. Borrowed. */
struct exec_file {
    const char *path;          /* relative to the volume's directory, no ".." */
    const unsigned char *data;
    size_t len;
    int mode;                  /* permission bits, e.g. 0644 */
};

/* A pod volume staged for its processes (exec_stage_ops.stage): a directory
 * holding files (configMap: one per key or item; emptyDir: none), or a
 * host path (hostPath: created where it points). Borrowed. */
struct exec_volume {
    const char *name;          /* spec.volumes[].name, one path component */
    const char *host_path;     /* hostPath.path, else NULL */
    const struct exec_file *files;
    size_t n_files;
};

enum exec_state {
    EXEC_RUNNING,   /* every container started */
    EXEC_SUCCEEDED, /* all containers exited 0 */
    EXEC_FAILED,    /* a container exited non-zero, was killed, or could not start */
};

/* One container's state inside a report (Kubernetes ContainerStatus). */
enum exec_cstate { EXEC_C_WAITING, EXEC_C_RUNNING, EXEC_C_TERMINATED };

struct exec_container_report {
    char *name;
    bool init;            /* an initContainer */
    enum exec_cstate state;
    int exit_code;        /* TERMINATED: exit status, 128+signal when killed */
    char *reason;         /* TERMINATED: "Completed"/"Error"/"StartError";
                             WAITING: "PodInitializing", "CrashLoopBackOff" */
    char *message;        /* or NULL */
    int64_t started_ms;   /* 0 = never started */
    int64_t finished_ms;  /* TERMINATED only */
    int restarts;         /* restartCount */
};

/* A state change of one pod. An executor may report EXEC_RUNNING again for
 * a running pod: when a container restarts (restartPolicy OnFailure) or when
 * the pod's metrics change (metrics then holds the new dict). Receivers
 * treat a repeated EXEC_RUNNING as an update, never as a new start. */
struct exec_report {
    char *uid;
    enum exec_state state;
    int exit_code;        /* first failing container's code (128+signal if killed) */
    char *reason;         /* "Completed", "Error", "StartError", "OOMKilled", ... */
    char *message;        /* human text, e.g. "ray: command not found" */
    int64_t at_ms;        /* when it happened */
    json_t *metrics;      /* last metrics dict the pod reported, or NULL (new ref) */
    char *host_ip;        /* the address of the host running it (owned), NULL
                             = this machine (127.0.0.1, the local executor) */
    /* Per-container detail (owned), in spec order: initContainers then
     * containers. n_containers 0 = not given (every container shares the
     * pod's state; the simulated executor reports so). */
    struct exec_container_report *containers;
    size_t n_containers;
};

struct exec_reports {
    struct exec_report *items;
    size_t n, cap;
};

struct exec_ops {
    /* Start the pod's containers. Must not block. Returns 0 (the pod will
     * report EXEC_RUNNING or a failure through poll) or a negative code:
     * CU_EEXIST for a pod that already started once in this executor's
     * keeping, even under an earlier server (a pod runs at most once;
     * executors that outlive the server keep a durable mark of it);
     * CU_EFORBIDDEN for a pod whose securityContext cannot be honoured
     * (runAsNonRoot that would run as root, a runAsUser the executor
     * cannot take), the reason in err. */
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
    /* Path of a container's log file on this machine (caller frees), or
     * NULL if none. Called from any thread (the server's log endpoint reads
     * and follows it). */
    char *(*log_path)(struct exec *x, const char *uid, const char *container);
    /* Free the executor. Whether the pods it runs stop with it depends on
     * the executor (the local one leaves them running unless told
     * otherwise: exec_local_set_stop_on_free). */
    void (*free)(struct exec *x);
    /* Take over a pod a previous instance of the executor started (a
     * restarted control plane re-attaching to running pods, as pods
     * survive a Kubernetes control-plane restart). pod->uid names it;
     * pod->sandbox_dir as given to start (NULL = the default); the other
     * fields may be left out. Returns 0 when the pod's processes are still
     * running or finished while nobody watched: from here it is the
     * executor's as if started by start() (every state change comes through
     * poll, the first one at once, an exit that already happened included);
     * CU_EEXIST when it started once (it may have run) but nothing of it
     * is left: it must not run again (the node agent fails it);
     * CU_ENOTFOUND when it never started (start may run it now).
     * Adopting a pod already followed returns 0. NULL = not supported
     * (treated as CU_ENOTFOUND). Must not block. */
    int (*adopt)(struct exec *x, const struct exec_pod *pod);
    /* Delete what the executor keeps of a pod that is over and whose Pod
     * object is gone (its sandbox: logs, volumes, status, as the kubelet
     * removes a deleted pod's directory). Returns 0 (also when nothing was
     * there), CU_EFORBIDDEN for a pod still followed or running (left as
     * it is), CU_EINVAL for a uid that is not one path component, CU_EIO.
     * NULL = the executor keeps nothing. Blocks on the file system. */
    int (*remove)(struct exec *x, const char *uid);
    /* At start: remove (as remove) every pod the executor keeps that
     * keep(ctx, uid) does not want, so sandboxes of pods deleted while no
     * server ran do not pile up. Returns how many were removed. NULL =
     * nothing kept. */
    int (*sweep)(struct exec *x, bool (*keep)(void *ctx, const char *uid), void *ctx);
    /* The pod's own IP ("10.88.0.7", caller frees) while the executor
     * runs it in its own network namespace (the OCI executor), for
     * status.podIP; NULL = the pod shares the host's network (127.0.0.1).
     * NULL op = never. */
    char *(*pod_ip)(struct exec *x, const char *uid);
};

/* Where an executor keeps a pod's files: optional (struct exec.stage_ops
 * NULL = both defaults, the local layout on this machine). An executor
 * whose pods run elsewhere (Slurm) sets it so that nothing outside it
 * assumes where a pod's files are. */
struct exec_stage_ops {
    /* Where a pod's sandbox lives on the executor's side (its staged
     * volumes, its metrics file), caller frees; NULL = the executor keeps
     * none. NULL = exec_sandbox_dir's default layout. Must not block. */
    char *(*sandbox_dir)(struct exec *x, const char *uid);
    /* Make a pod's volumes readable by its processes before start: the
     * sandbox is created, each volume's files are written under
     * exec_volume_dir(sandbox, name) (hostPath volumes: the host path is
     * created). Returns 0, CU_EINVAL (a volume or file path that is not
     * relative and inside it) or CU_EIO, with the reason in err. NULL =
     * exec_stage_fs on this machine. Blocks on the file system. */
    int (*stage)(struct exec *x, const char *uid, const char *sandbox,
                 const struct exec_volume *vols, size_t n, char *err, size_t errlen);
};

struct exec {
    const struct exec_ops *ops;
    const struct exec_stage_ops *stage_ops; /* NULL = the defaults */
    /* Set by the control loop: called (from any thread) when new reports
     * are ready, so the loop wakes up and polls. May be NULL. Atomic: it
     * is set while an executor's thread may already read it, so set
     * notify_ctx first, then notify (a reader that sees notify sees its
     * ctx). */
    void (*_Atomic notify)(void *ctx);
    void *_Atomic notify_ctx;
};

/* Release the reports (reusable after). */
void exec_reports_release(struct exec_reports *r);

/* The log file of one container: <state_dir>/pods/<pod_uid>/<container>.log
 * (stdout and stderr appended, restarts included). The contract between
 * the local executor (writer) and the server's log endpoint (reader).
 * Caller frees. */
char *exec_log_path(const char *state_dir, const char *pod_uid, const char *container);

/* The sandbox of pod uid: x->stage_ops->sandbox_dir when the executor has one,
 * else the default layout <state_dir>/pods/<uid> (NULL when state_dir is
 * NULL: nothing kept, as in `cueue sim`). Caller frees. */
char *exec_sandbox_dir(struct exec *x, const char *state_dir, const char *uid);
/* The directory a non-hostPath volume is staged in: <sandbox>/volumes/<name>
 * (the contract between stage and the mountPath rewrites). Caller frees. */
char *exec_volume_dir(const char *sandbox, const char *name);
/* Stage vols (n of them, borrowed) for pod uid in sandbox:
 * x->stage_ops->stage when set, else exec_stage_fs (x may be NULL). Returns
 * what that returns: 0, CU_EINVAL or CU_EIO with the reason in
 * err[0..errlen). Blocks on the file system. */
int exec_stage(struct exec *x, const char *uid, const char *sandbox,
               const struct exec_volume *vols, size_t n, char *err, size_t errlen);
/* Stage vols on this machine's file system (see exec_stage_ops.stage): mkdir -p
 * of sandbox, of each volume's directory, files written with their mode
 * (truncated first). 0, CU_EINVAL or CU_EIO (err names the path and the
 * system's reason). */
int exec_stage_fs(const char *sandbox, const struct exec_volume *vols, size_t n, char *err,
                  size_t errlen);
/* mkdir -p path (0755); an existing path (of any type) counts as made.
 * 0 or CU_EIO (errno set). */
int exec_mkdir_p(const char *path);
/* True when p is a non-empty relative path without a ".." component. */
bool exec_is_safe_relpath(const char *p);

/* The metrics file name inside a pod's sandbox. A pod's processes find its
 * full path in env CUEUE_METRICS_FILE and append one JSON object per line
 * (what Ray Train's report() would record); the last valid line is the
 * pod's metrics. */
#define EXEC_METRICS_FILE "metrics.jsonl"
#define EXEC_METRICS_ENV "CUEUE_METRICS_FILE"

/* ---- the local executor (`cueue server`) ---- */

/* Real processes on this machine, each pod under its own supervisor
 * process (the program cueue-pod-supervisor, found next to the running
 * program, own session; forked by that program's fork server, or executed
 * when the fork server cannot serve) that outlives the executor: it runs
 * the containers and records their state in
 * <state_dir>/pods/<uid>/supervisor.json, and a new executor on the same
 * state_dir adopts it (ops->adopt). A missing supervisor program is logged
 * here and fails every pod with StartError naming it. Each container's
 * command+args runs in its own session/process group with env = PATH (the
 * server's, else LX_DEFAULT_PATH) and HOME (the home of the user it runs
 * as), nothing else of the server's environment, then the container's env
 * (valueFrom already resolved by the node agent; $(VAR) references
 * expanded as the kubelet does) and exec_pod.env, in the container's
 * workingDir (default: the pod sandbox), stdout+stderr appended
 * to exec_log_path(). Init containers run one after another first. A
 * container without command, or whose program is not found, fails the pod
 * with reason StartError (`exec: "ray": executable file not found in
 * $PATH`). restartPolicy Never/OnFailure/Always as the kubelet applies it
 * (restart backoff 10 s doubling to 5 min). A watcher thread waits on the
 * supervisors' pidfds (it need not be their parent) and inotify on the
 * sandboxes (no busy polling) and calls notify. state_dir is copied; pod
 * sandboxes default to <state_dir>/pods/<uid>. Free with ops->free (see
 * exec_local_set_stop_on_free). Returns NULL (logged) when the system
 * refuses an eventfd, an inotify instance or a thread. */
struct exec *exec_local_new(const char *state_dir);
/* Change the local executor's restart backoff base (ms; tests use small
 * values) for pods started from now on. No-op on other executors' handles
 * is not checked: pass only an exec_local_new() result. */
void exec_local_set_restart_backoff(struct exec *x, int64_t base_ms);
/* What ops->free does with running pods: false (the default) leaves them
 * running under their supervisors, for the next executor on the same
 * state directory to adopt, as a Kubernetes control-plane restart leaves
 * pods running; true kills every pod at once (SIGKILL) and waits (up to
 * 10 s) for its supervisor to record the end, so nothing is left behind
 * (`cueue server --stop-pods-on-exit`, tests, the demo). Pass only an
 * exec_local_new() result. */
void exec_local_set_stop_on_free(struct exec *x, bool stop);
/* Who the local (and OCI) executor's pods run as: pol (borrowed; it must
 * outlive the executor) is the server's pod policy, resolved per container
 * by api_pod_run_as. With pol->switch_user (a root server) each container
 * runs as its runAsUser/runAsGroup or pol's default user, with its
 * supplementary groups, and each pod's sandbox (cwd, volumes, metrics
 * file) is <sandbox_root>/<uid>, owned by root and the pod's group
 * (sandbox_root is made mode 0711: searchable, not listable), while the
 * supervisor's files and the logs stay in the private state directory.
 * NULL (the default) = every pod runs as the server's own user, in
 * <state_dir>/pods/<uid>, and a runAsUser/runAsGroup other than the
 * server's fails the pod at start. Call before the first pod starts.
 * 0, or CU_EIO with the reason in err (sandbox_root not absolute or not
 * made). */
struct api_pod_policy;
int exec_local_set_pod_policy(struct exec *x, const struct api_pod_policy *pol,
                              const char *sandbox_root, char *err, size_t errlen);

/* ---- the OCI executor (`cueue server --runtime=oci`) ---- */

/* The local executor (supervisors, status files, adoption, logs, as
 * above) with every container run by an OCI runtime (runc, else crun;
 * runtime names another, a path or a name in PATH): each container its
 * own pid, mount, ipc and uts namespaces (hostname = the pod's) and its
 * own cgroup (limits.memory, limits.cpu, requests.cpu), the pod's network
 * namespace shared by its containers, with its own IP on the host-only
 * bridge cueue0 (10.88.0.0/16) and an /etc/hosts naming the pods of its
 * namespace; the root file system the host's, read-only (or the directory
 * the annotation cueue.dev/rootfs names), with a private /tmp and the
 * pod's sandbox and volumes writable; nvidia.com/gpu: N binds N distinct
 * /dev/nvidia<i>. A container the kernel OOM-killed ends with reason
 * OOMKilled. docs/nodes.md has the whole of it. Returns NULL with the
 * reason in err when pods cannot be isolated here (not root, no runtime,
 * no namespaces, no writable cgroup, no bridge): the caller falls back to
 * exec_local_new. */
struct exec *exec_oci_new(const char *state_dir, const char *runtime, char *err, size_t errlen);

/* ---- the Slurm executor (`cueue server`, docs/slurm.md) ---- */

/* Pods bound to a Node of a Slurm node pool (exec_slurm_node) run as Slurm
 * batch jobs through libslurm; every other pod goes to inner (the local or
 * OCI executor, owned from here: freed with the result). One job per pod
 * (name cueue-<uid>), pinned to its node (req_nodes) in the node's
 * partition (label slurm.cueue.dev/partition), one task with the pod's
 * cpu request (whole CPUs, rounded up) per task, its memory request per
 * node and exec_slurm_tres per node; the batch script is exec_slurm_script
 * of the container's command (after $(VAR) expansion and the mountPath
 * rewrites, as the local executor does), its environment the container's
 * and exec_pod.env on top of PATH and HOME; stdout and stderr appended to
 * exec_log_path, so the sandbox (state_dir) must be on a file system the
 * Slurm nodes share. A pod with init containers or more than one container
 * is refused (CU_EINVAL). Job phase -> reports: PENDING nothing, RUNNING
 * EXEC_RUNNING, COMPLETED with 0 EXEC_SUCCEEDED, anything else
 * EXEC_FAILED with the exit code (128+signal when killed; OUT_OF_MEMORY:
 * reason OOMKilled). stop: SIGTERM to the batch script and its steps, the
 * job cancelled (SIGKILL) after the grace period, or at once while it is
 * pending. The job id is recorded in <sandbox>/slurm-job ("submitting"
 * before the submit); adopt follows it after a restart (see slurm.c).
 * libslurm is first used on the first Slurm pod (SLURM_CONF, else
 * /etc/slurm/slurm.conf); its RPCs run on the executor's own thread, never
 * in start/stop/poll. Free with ops->free. */
struct exec *exec_slurm_new(const char *state_dir, struct exec *inner);
/* What ops->free does with the Slurm jobs of pods it follows: false (the
 * default) leaves them to run, for the next server to adopt; true cancels
 * them (`cueue server --stop-pods-on-exit`, tests, the demo), as
 * exec_local_set_stop_on_free does for local pods. Pass only an
 * exec_slurm_new() result. */
void exec_slurm_set_stop_on_free(struct exec *x, bool stop);
/* True when node (a Node object, may be NULL) is a Slurm node: its
 * spec.providerID starts with "slurm://". */
bool exec_slurm_node(const json_t *node);
/* The per-node GRES a container asks for, as libslurm's tres_per_node
 * text: google.com/tpu N -> "gres:tpu:N", nvidia.com/gpu N ->
 * "gres:gpu:N", comma-separated (requests, else limits); NULL when none.
 * Caller frees. */
char *exec_slurm_tres(const json_t *container);
/* The batch script that runs argv (NULL-terminated, each word quoted for
 * sh) in cwd (NULL = the job's working directory): "#!/bin/sh", "cd CWD ||
 * exit 1", "exec ARGV...". Caller frees. */
char *exec_slurm_script(char *const *argv, const char *cwd);

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
