/*
 * oci_shim: `cueue-pod-supervisor --oci-shim RUNTIME STATE_ROOT BUNDLE ID
 * REASON_FILE CGROUP`, what the pod supervisor runs as the main process of
 * a container when the pod runs under an OCI runtime (the role conmon
 * plays for CRI-O). It becomes a child subreaper, runs `RUNTIME --root
 * STATE_ROOT run --detach --pid-file ... --bundle BUNDLE ID` (the
 * container's stdout/stderr are the shim's: the container's log file), so
 * the container's init is reparented to it and its exit status is waited
 * for like a child's. SIGTERM/SIGINT are passed on to the container's
 * init. When the container is over: if the kernel OOM-killed in its
 * cgroup (v2 memory.events or v1 memory.oom_control "oom_kill N" under
 * CGROUP), "OOMKilled" goes to REASON_FILE (the supervisor's container
 * reason); then `RUNTIME delete --force ID` removes it, its cgroup
 * included; the shim ends as the container did (the same exit code, or
 * killed by the same signal). libc only: it runs in the supervisor
 * program.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/oci-int.h"

static volatile sig_atomic_t pending_sig;
static volatile sig_atomic_t container_pid; /* 0 until the runtime started it */

/* Passed on from the handler itself (kill is async-signal-safe), so a
 * signal that lands just before waitpid blocks is not held back until the
 * container ends; one that comes before the container runs waits in
 * pending_sig. */
static void on_signal(int sig)
{
    if (container_pid > 0)
        kill((pid_t)container_pid, sig);
    else
        pending_sig = sig;
}

/* Run argv (a runtime command) and wait for it; its exit status. */
static int run_wait(char *const *argv)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    int wst;
    while (waitpid(pid, &wst, 0) < 0)
        if (errno != EINTR)
            return -1;
    return wst;
}

static long read_pid(const char *path)
{
    FILE *f = fopen(path, "r");
    long pid = 0;
    if (f) {
        if (fscanf(f, "%ld", &pid) != 1)
            pid = 0;
        fclose(f);
    }
    return pid;
}

/* "oom_kill N" in the cgroup's memory events file (v2, or the v1 memory
 * controller's oom_control), either layout. */
static long oom_kills(const char *cgroup)
{
    static const char *const files[] = {"/sys/fs/cgroup%s/memory.events",
                                        "/sys/fs/cgroup/memory%s/memory.oom_control",
                                        "/sys/fs/cgroup/unified%s/memory.events"};
    for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
        char path[512], line[128];
        snprintf(path, sizeof(path), files[i], cgroup);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        long n = 0;
        while (fgets(line, sizeof(line), f))
            if (sscanf(line, "oom_kill %ld", &n) == 1)
                break;
        fclose(f);
        if (n > 0)
            return n;
    }
    return 0;
}

static void write_reason(const char *path, const char *reason)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (write(fd, reason, strlen(reason)) < 0) {
        /* the container's reason stays "Error" */
    }
    close(fd);
}

int oci_shim_main(int argc, char **argv)
{
    if (argc != 8) {
        fprintf(stderr, "usage: %s " OCI_SHIM_ARG
                        " RUNTIME STATE_ROOT BUNDLE ID REASON_FILE CGROUP\n",
                argv[0]);
        return 2;
    }
    char *runtime = argv[2], *root = argv[3], *bundle = argv[4], *id = argv[5];
    const char *reason_file = argv[6], *cgroup = argv[7];
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    char pid_file[4096];
    snprintf(pid_file, sizeof(pid_file), "%s/container.pid", bundle);
    unlink(pid_file);
    unlink(reason_file);
    char *del[] = {runtime, "--root", root, "delete", "--force", id, NULL};
    char *run[] = {runtime, "--root", root, "run", "--detach", "--pid-file", pid_file,
                   "--bundle", bundle, id, NULL};
    int wst = run_wait(run);
    if (wst != 0) { /* a container of that name left over: once more */
        run_wait(del);
        wst = run_wait(run);
    }
    long cpid = wst == 0 ? read_pid(pid_file) : 0;
    if (cpid <= 0) {
        fprintf(stderr, "cueue: the OCI runtime %s could not start the container\n", runtime);
        write_reason(reason_file, "StartError");
        run_wait(del);
        return 128;
    }
    int cst = 0;
    container_pid = (sig_atomic_t)cpid;
    if (pending_sig)
        kill((pid_t)cpid, pending_sig);
    for (;;) {
        /* who exited, left a zombie (WNOWAIT): the handler stops passing
         * signals on before the container's pid is reaped and can be
         * reused */
        siginfo_t si = {0};
        if (waitid(P_ALL, 0, &si, WEXITED | WNOWAIT) != 0) {
            if (errno == ECHILD)
                break; /* not reparented to us (no subreaper): nothing to wait for */
            continue;  /* EINTR: the handler passed a signal on */
        }
        if (si.si_pid == (pid_t)cpid)
            container_pid = 0;
        if (waitpid(si.si_pid, &wst, 0) == (pid_t)cpid) {
            cst = wst;
            break;
        }
    }
    if (!(WIFEXITED(cst) && WEXITSTATUS(cst) == 0) && oom_kills(cgroup) > 0)
        write_reason(reason_file, "OOMKilled");
    run_wait(del);
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
    if (WIFSIGNALED(cst)) {
        signal(WTERMSIG(cst), SIG_DFL);
        kill(getpid(), WTERMSIG(cst));
    }
    return WIFEXITED(cst) ? WEXITSTATUS(cst) : 137;
}
