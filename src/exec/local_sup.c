/*
 * local_sup: the per-pod supervisor, the small process that makes a pod
 * outlive `cueue server` (as pods outlive a Kubernetes control-plane
 * restart). It is its own program, cueue-pod-supervisor
 * (src/exec/supervisor/main.c calls lx_sup_main), linked against libc and
 * jansson only, so starting one costs little; the server starts one per
 * pod (local_spawn.c) with the pod's lock on LX_LOCK_FD and the spec on
 * LX_SPEC_FD. The supervisor lives in its own session, holds <pod
 * dir>/supervisor.lock for its whole life, and runs the pod's containers:
 * each container in its own session/process group, stdin /dev/null,
 * stdout+stderr appended to its log, env and cwd from the spec; init
 * containers one after another; restartPolicy with the kubelet's backoff;
 * when a container's main process exits the rest of its group is killed.
 * After every change it rewrites <pod dir>/supervisor.json
 * (local_status.c); the server follows that file and the supervisor's
 * pidfd, now or after a restart. Its own messages go to <pod
 * dir>/supervisor.out, created only when there is one.
 *
 * Status writes: one per change that matters, never one before the first
 * containers start (nothing to tell yet: the server knows the pid it
 * spawned, and a restarted server finds a live supervisor by its lock).
 * A trivial pod writes the file twice: its containers running, its end.
 * No fsync: the file describes processes, which a machine crash ends
 * anyway, and rename keeps readers from half a file.
 *
 * At most once: before anything runs the supervisor creates <pod
 * dir>/supervisor.started (O_EXCL) and fsyncs it and the directory. A
 * supervisor that finds the file already there (the pod ran here before,
 * under a supervisor that is gone) runs nothing and leaves the status file
 * as the earlier one wrote it, so the pod's recorded outcome stands.
 *
 * Stop: SIGTERM. The grace period is the int queued with the signal
 * (pidfd_send_signal / sigqueue with SI_QUEUE, in ms), LX_DEFAULT_GRACE_MS
 * for a plain kill: SIGTERM to every container group, SIGKILL after the
 * grace. SIGINT, SIGHUP and SIGPIPE are ignored.
 *
 * Invariant: st.c[i] describes spec.cmds[i]; a container with pid > 0 is a
 * live (or unreaped) child of this process; the status is done exactly
 * when no container runs or waits for a restart, and is written before
 * the supervisor exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/local-int.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define RESTART_BACKOFF_MAX_MS (300 * 1000)

struct sup {
    const char *dir;
    char *status_path;
    struct lx_spec spec;
    struct lx_status st;   /* st.c parallel to spec.cmds */
    size_t n_init, next_init;
    bool killed;
    int64_t kill_at_ms;
    bool dirty;            /* st changed since the last write */
};

static int64_t now_ms(void) { return clk_now(clk_real()); }

static void set_str(char **dst, const char *v)
{
    xfree(*dst);
    *dst = v ? xstrdup(v) : NULL;
}

/* A message to <dir>/supervisor.out, which becomes stderr the first time
 * (stderr is /dev/null until then, so a pod with nothing to say creates no
 * file). */
static void say(const struct sup *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const struct sup *s, const char *fmt, ...)
{
    static bool opened;
    if (!opened) {
        opened = true;
        char *path = xasprintf("%s/%s", s->dir, LX_OUT_FILE);
        int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        xfree(path);
        if (fd >= 0 && fd != 2) {
            dup2(fd, 2); /* without O_CLOEXEC: containers get their own */
            close(fd);
        }
    }
    va_list ap;
    va_start(ap, fmt);
    fputs("cueue-pod-supervisor: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void write_status(struct sup *s)
{
    s->st.seq++;
    if (lx_status_write(s->status_path, &s->st) != 0)
        say(s, "cannot write %s: %s", s->status_path, strerror(errno));
    s->dirty = false;
}

/* ---- containers ---- */

/* The child's side of lx_spawn_container with a user: an errno value
 * when something failed before the exec (its caller reports it). */
static int child_as_user(const char *path, const struct lx_cmd *cmd, int logfd)
{
    setsid();
    for (int sig = 1; sig < NSIG; sig++)
        signal(sig, SIG_DFL); /* SIGKILL/SIGSTOP and the reserved ones fail: fine */
    int nul = open("/dev/null", O_RDONLY);
    if (nul < 0 || dup2(nul, 0) < 0 || dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0)
        return errno;
    gid_t groups[LX_MAX_GROUPS];
    for (size_t i = 0; i < cmd->user.n_groups; i++)
        groups[i] = (gid_t)cmd->user.groups[i];
    /* groups first, the gid next, the uid last: each needs the privilege
     * the next one drops */
    if (setgroups(cmd->user.n_groups, groups) || setgid((gid_t)cmd->user.gid) ||
        setuid((uid_t)cmd->user.uid))
        return errno;
    if (chdir(cmd->cwd))
        return errno;
    if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC)) /* the error pipe stays until the exec */
        return errno;
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execve(path, cmd->argv, cmd->envp);
    return errno;
}

int lx_spawn_container(const char *path, const struct lx_cmd *cmd, int logfd, int *pid_out)
{
    pid_t pid = 0;
    if (!cmd->user.set) {
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t at;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&fa, logfd, 1);
        posix_spawn_file_actions_adddup2(&fa, logfd, 2);
        posix_spawn_file_actions_addchdir_np(&fa, cmd->cwd);
        posix_spawn_file_actions_addclosefrom_np(&fa, 3);
        lx_spawn_attrs(&at);
        int rc = posix_spawn(&pid, path, &fa, &at, cmd->argv, cmd->envp);
        posix_spawnattr_destroy(&at);
        posix_spawn_file_actions_destroy(&fa);
        *pid_out = (int)pid;
        return rc;
    }
    /* posix_spawn cannot change users: fork (the supervisor is single-
     * threaded) and report the child's errno through a close-on-exec pipe
     * (EOF = the exec happened), as posix_spawn does */
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC))
        return errno;
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    pid = fork();
    if (pid == 0) {
        close(pfd[0]);
        int e = child_as_user(path, cmd, logfd);
        while (write(pfd[1], &e, sizeof(e)) < 0 && errno == EINTR) {}
        _exit(127);
    }
    int e = pid < 0 ? errno : 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(pfd[1]);
    if (pid > 0) {
        int ce = 0;
        ssize_t n;
        while ((n = read(pfd[0], &ce, sizeof(ce))) < 0 && errno == EINTR) {}
        if (n == (ssize_t)sizeof(ce)) {
            e = ce ? ce : EIO;
            waitpid(pid, NULL, 0);
        }
    }
    close(pfd[0]);
    *pid_out = (int)pid;
    return e;
}

static int spawn_proc(const char *path, const struct lx_cmd *cmd, pid_t *pid)
{
    /* no symlinks: a pod that runs as another user may write in the
     * directory (it can make its own log file, not point ours elsewhere) */
    int logfd = open(cmd->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (logfd < 0)
        return errno;
    int p = 0;
    int rc = lx_spawn_container(path, cmd, logfd, &p);
    *pid = (pid_t)p;
    close(logfd);
    return rc;
}

/* Start container i; false (and the container terminated with StartError)
 * when it cannot run. */
static bool start_ctr(struct sup *s, size_t i)
{
    const struct lx_cmd *cmd = &s->spec.cmds[i];
    struct lx_cstatus *c = &s->st.c[i];
    char *err = cmd->error ? xstrdup(cmd->error) : NULL;
    struct stat sb;
    if (!err && (stat(cmd->cwd, &sb) != 0 || !S_ISDIR(sb.st_mode)))
        err = xasprintf("chdir to cwd (\"%s\") set in config.json failed: %s", cmd->cwd,
                        strerror(errno ? errno : ENOTDIR));
    char *path = err ? NULL : lx_find_program(cmd->argv[0], cmd->envp, cmd->cwd, &err);
    pid_t pid = 0;
    int rc = path ? spawn_proc(path, cmd, &pid) : 0;
    if (path && rc != 0)
        err = xasprintf("exec: \"%s\": %s", cmd->argv[0], strerror(rc));
    xfree(path);
    int64_t now = now_ms();
    s->dirty = true;
    if (err) {
        c->state = EXEC_C_TERMINATED;
        c->exit_code = 128;
        set_str(&c->reason, "StartError");
        xfree(c->message);
        c->message = err;
        c->finished_ms = now;
        c->restart_at_ms = 0;
        return false;
    }
    c->pid = pid;
    c->pid_start = lx_proc_start(pid);
    c->state = EXEC_C_RUNNING;
    c->started_ms = now;
    c->finished_ms = 0;
    c->exit_code = 0;
    XFREE(c->reason);
    XFREE(c->message);
    return true;
}

static int64_t backoff(const struct sup *s, int restarts)
{
    if (restarts == 0)
        return 0;
    int64_t d = s->spec.backoff_ms > 0 ? s->spec.backoff_ms : 1;
    for (int i = 1; i < restarts && d < RESTART_BACKOFF_MAX_MS; i++)
        d *= 2;
    return d < RESTART_BACKOFF_MAX_MS ? d : RESTART_BACKOFF_MAX_MS;
}

/* The reason a container's runner left in path (the OCI shim's
 * "OOMKilled"), if any, replaces *reason; the file is removed. */
static void reason_from_file(const char *path, char **reason)
{
    if (!path)
        return;
    char buf[64];
    if (lx_read_line(path, buf, sizeof(buf)) && buf[0])
        set_str(reason, buf);
    unlink(path);
}

/* A child exited: record it on its container. */
static void on_exit_status(struct sup *s, pid_t pid, int wst)
{
    for (size_t i = 0; i < s->st.n; i++) {
        struct lx_cstatus *c = &s->st.c[i];
        if (c->pid != pid)
            continue;
        kill(-pid, SIGKILL); /* the container is over: so is its process group */
        c->pid = 0;
        c->pid_start = 0;
        c->state = EXEC_C_TERMINATED;
        c->finished_ms = now_ms();
        c->exit_code = WIFEXITED(wst) ? WEXITSTATUS(wst) : 128 + WTERMSIG(wst);
        set_str(&c->reason, c->exit_code == 0 ? "Completed" : "Error");
        if (c->exit_code != 0)
            reason_from_file(s->spec.cmds[i].reason_file, &c->reason);
        XFREE(c->message);
        if (WIFSIGNALED(wst))
            c->message = xasprintf("killed by signal %d (%s)", WTERMSIG(wst),
                                   strsignal(WTERMSIG(wst)));
        enum lx_policy pol = s->spec.policy;
        bool again = pol == LX_ALWAYS || (pol == LX_ON_FAILURE && c->exit_code != 0);
        if (c->init)
            again = c->exit_code != 0 && pol != LX_NEVER;
        if (again && !s->st.stopping)
            c->restart_at_ms = c->finished_ms + backoff(s, c->restarts);
        s->dirty = true;
        return;
    }
}

static void reap_all(struct sup *s)
{
    int wst;
    pid_t pid;
    while ((pid = waitpid(-1, &wst, WNOHANG)) > 0)
        on_exit_status(s, pid, wst);
}

static void signal_all(struct sup *s, int sig)
{
    for (size_t i = 0; i < s->st.n; i++)
        if (s->st.c[i].pid > 0)
            kill(-s->st.c[i].pid, sig);
}

static void stop(struct sup *s, int64_t grace_ms)
{
    int64_t at = now_ms() + (grace_ms > 0 ? grace_ms : 0);
    if (s->st.stopping) {
        if (!s->killed && at < s->kill_at_ms)
            s->kill_at_ms = at; /* a shorter grace wins */
        return;
    }
    s->st.stopping = true;
    s->kill_at_ms = at;
    for (size_t i = 0; i < s->st.n; i++)
        s->st.c[i].restart_at_ms = 0;
    signal_all(s, grace_ms > 0 ? SIGTERM : SIGKILL);
    s->killed = grace_ms <= 0;
    s->dirty = true;
}

/* ---- the pod's state machine ---- */

/* Restart container i when its backoff is over. */
static void restart_due(struct sup *s, size_t i, int64_t now)
{
    struct lx_cstatus *c = &s->st.c[i];
    if (c->state != EXEC_C_TERMINATED || c->restart_at_ms <= 0 || c->restart_at_ms > now)
        return;
    c->restart_at_ms = 0;
    c->restarts++;
    start_ctr(s, i);
}

/* Init containers in order; true once every one completed, else *over
 * tells whether the pod ended (an init container failed for good). */
static bool advance_init(struct sup *s, int64_t now, bool *over)
{
    while (s->next_init < s->n_init) {
        struct lx_cstatus *c = &s->st.c[s->next_init];
        if (c->state == EXEC_C_RUNNING)
            return false;
        if (c->state == EXEC_C_TERMINATED && c->exit_code == 0) {
            s->next_init++;
            continue;
        }
        if (c->state == EXEC_C_WAITING) {
            *over = !start_ctr(s, s->next_init);
            return false;
        }
        if (c->restart_at_ms <= 0 || !strcmp(jx_or_empty(c->reason), "StartError")) {
            *over = true;
            return false;
        }
        restart_due(s, s->next_init, now);
        return false;
    }
    return true;
}

static bool all_mains_over(const struct sup *s)
{
    for (size_t i = s->n_init; i < s->st.n; i++)
        if (s->st.c[i].state != EXEC_C_TERMINATED || s->st.c[i].restart_at_ms > 0)
            return false;
    return true;
}

static bool any_running(const struct sup *s)
{
    for (size_t i = 0; i < s->st.n; i++)
        if (s->st.c[i].pid > 0)
            return true;
    return false;
}

/* Move the pod forward; true when it is over (the status is concluded). */
static bool advance(struct sup *s, int64_t now)
{
    if (s->st.stopping) {
        if (!s->killed && now >= s->kill_at_ms) {
            signal_all(s, SIGKILL);
            s->killed = true;
        }
        if (any_running(s))
            return false;
        lx_status_conclude(&s->st, now);
        return true;
    }
    if (!s->st.mains_started) {
        bool over = false;
        if (!advance_init(s, now, &over)) {
            if (over)
                lx_status_conclude(&s->st, now);
            return over;
        }
        for (size_t i = s->n_init; i < s->st.n; i++) {
            if (!start_ctr(s, i)) {
                stop(s, 0); /* a container that cannot start fails the pod */
                return advance(s, now);
            }
        }
        s->st.mains_started = true;
        s->dirty = true;
    }
    for (size_t i = s->n_init; i < s->st.n; i++)
        restart_due(s, i, now);
    if (all_mains_over(s)) {
        lx_status_conclude(&s->st, now);
        return true;
    }
    return false;
}

/* Milliseconds until the next timer (poll timeout), -1 = none. */
static int next_timeout(const struct sup *s, int64_t now)
{
    int64_t next = INT64_MAX;
    if (s->st.stopping && !s->killed)
        next = s->kill_at_ms;
    for (size_t i = 0; i < s->st.n; i++)
        if (s->st.c[i].restart_at_ms > 0 && s->st.c[i].restart_at_ms < next)
            next = s->st.c[i].restart_at_ms;
    if (next == INT64_MAX)
        return -1;
    return next <= now ? 0 : (int)(next - now > 60000 ? 60000 : next - now);
}

static void handle_signals(struct sup *s, int sfd)
{
    struct signalfd_siginfo si;
    while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        if (si.ssi_signo == SIGCHLD)
            reap_all(s);
        else if (si.ssi_signo == SIGTERM)
            stop(s, si.ssi_code == SI_QUEUE ? (int64_t)si.ssi_int : LX_DEFAULT_GRACE_MS);
    }
    reap_all(s); /* SIGCHLDs coalesce: look anyway */
}

/* ---- life ---- */

static int setup_signals(void)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    sigaddset(&set, SIGTERM);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGINT, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

static void init_status(struct sup *s)
{
    s->st.pid = (int)getpid();
    s->st.pid_start = lx_proc_start(s->st.pid);
    s->st.n = s->spec.n;
    s->st.c = xcalloc(s->st.n ? s->st.n : 1, sizeof(*s->st.c));
    for (size_t i = 0; i < s->st.n; i++) {
        s->st.c[i].name = xstrdup(s->spec.cmds[i].name);
        s->st.c[i].init = s->spec.cmds[i].init;
        s->st.c[i].state = EXEC_C_WAITING;
        s->n_init += s->spec.cmds[i].init;
    }
}

/* The spec from LX_SPEC_FD (a memfd: read from its start), then the fd
 * closed. 0 or an error with the reason in err. */
static int read_spec(struct lx_spec *spec, char *err, size_t errlen)
{
    struct stat sb;
    if (fstat(LX_SPEC_FD, &sb) != 0) {
        snprintf(err, errlen, "no spec on fd %d: %s", LX_SPEC_FD, strerror(errno));
        return CU_EINVAL;
    }
    size_t len = (size_t)sb.st_size, got = 0;
    char *text = xmalloc(len + 1);
    while (got < len) {
        ssize_t n = pread(LX_SPEC_FD, text + got, len - got, (off_t)got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(LX_SPEC_FD);
    int rc = got == len ? lx_spec_parse(text, len, spec, err, errlen) : CU_EINVAL;
    if (got != len)
        snprintf(err, errlen, "cannot read the spec: %s", strerror(errno));
    xfree(text);
    return rc;
}

/* Claim the pod directory for this run: create LX_STARTED_FILE, durably.
 * 0, CU_EEXIST when the pod already ran here, CU_EIO (reason in err). */
static int claim_sandbox(const char *dir, char *err, size_t errlen)
{
    char *path = xasprintf("%s/%s", dir, LX_STARTED_FILE);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    int rc = 0;
    if (fd < 0) {
        rc = errno == EEXIST ? CU_EEXIST : CU_EIO;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
    } else {
        dprintf(fd, "%d\n", (int)getpid());
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fsync(fd) != 0 || dfd < 0 || fsync(dfd) != 0) {
            rc = CU_EIO;
            snprintf(err, errlen, "cannot sync %s: %s", path, strerror(errno));
        }
        if (dfd >= 0)
            close(dfd);
        close(fd);
    }
    xfree(path);
    return rc;
}

int lx_sup_main(const char *dir)
{
    struct sup s = {.dir = dir};
    fcntl(LX_LOCK_FD, F_SETFD, FD_CLOEXEC); /* held by us, never by a container */
    s.status_path = xasprintf("%s/%s", dir, LX_STATUS_FILE);
    char err[1024] = "";
    int sfd = setup_signals();
    int rc = read_spec(&s.spec, err, sizeof(err));
    int claim = rc == 0 ? claim_sandbox(dir, err, sizeof(err)) : 0;
    if (claim == CU_EEXIST) {
        say(&s, "the pod already ran in this directory (%s): not running it again", err);
        if (sfd >= 0)
            close(sfd);
        lx_spec_release(&s.spec);
        xfree(s.status_path);
        return 1;
    }
    rc = rc ? rc : claim;
    init_status(&s);
    if (rc != 0 || sfd < 0) {
        say(&s, "%s", rc ? err : strerror(errno));
        s.st.done = true;
        s.st.result = EXEC_FAILED;
        s.st.exit_code = 128;
        s.st.reason = xstrdup("StartError");
        s.st.message = xasprintf("the pod supervisor could not start: %s",
                                 rc ? err : "no signalfd");
        s.st.finished_ms = now_ms();
        write_status(&s);
    }
    while (!s.st.done) {
        int64_t now = now_ms();
        bool over = advance(&s, now);
        if (s.dirty || over)
            write_status(&s);
        if (over)
            break;
        struct pollfd p = {sfd, POLLIN, 0};
        if (poll(&p, 1, next_timeout(&s, now)) > 0)
            handle_signals(&s, sfd);
    }
    if (sfd >= 0)
        close(sfd);
    int status = s.st.result == EXEC_SUCCEEDED ? 0 : 1;
    lx_spec_release(&s.spec);
    lx_status_release(&s.st);
    xfree(s.status_path);
    return status;
}
