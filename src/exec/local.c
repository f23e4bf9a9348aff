/*
 * local: the executor of `cueue server` (see exec_local_new in exec.h).
 * Pods are real process trees on this machine. One reaper thread owns
 * every process: it spawns containers (posix_spawn, own session), waits on
 * their pidfds, an eventfd (start/stop requests) and an inotify watch on
 * each sandbox (metrics file) in one poll(), and runs the per-pod state
 * machine: init containers in order, then the main containers, restarts
 * per restartPolicy, SIGTERM then SIGKILL after the grace period.
 *
 * Invariants: all pod state is guarded by mu; only the reaper thread
 * spawns, reaps and frees pods, so pointers it collected for poll() stay
 * valid while it waits; a pod reports EXEC_RUNNING once its main
 * containers run (again on restarts and metrics changes) and exactly one
 * terminal report, after which it is forgotten.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uthash.h>

#include "exec/local-int.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/log.h"
#include "util/xalloc.h"

extern char **environ;

#define RESTART_BACKOFF_MAX_MS (300 * 1000)
#define NO_PIDFD_RECHECK_MS 200
#define METRICS_TAIL_BYTES (1 << 20)

enum lx_policy { LX_NEVER, LX_ON_FAILURE, LX_ALWAYS };

struct lx_ctr {
    const struct lx_cmd *cmd; /* into lx_pod.cmds */
    char *log_path;
    pid_t pid;             /* 0 = not running */
    int pidfd;             /* -1 = none (pidfd_open unavailable: rechecked) */
    enum exec_cstate state;
    int exit_code;
    char *reason;
    char *message;
    int64_t started_ms, finished_ms;
    int restarts;
    int64_t restart_at_ms; /* > 0: restart due then */
};

struct lx_pod {
    char *uid;
    char *dir;             /* sandbox */
    char *metrics_path;
    struct lx_cmd *cmds;
    struct lx_ctr *c;       /* parallel to cmds */
    size_t n, n_init;
    enum lx_policy policy;
    size_t next_init;      /* next init container to complete */
    bool mains_started;
    bool stopping, killed;
    int64_t kill_at_ms;
    bool report_running;   /* a RUNNING (update) report is owed */
    bool check_metrics;
    char *metrics_text;    /* last metrics line seen */
    json_t *metrics;
    int wd;                /* inotify watch, -1 = none */
    UT_hash_handle hh;
};

struct exec_local {
    struct exec base;      /* first */
    char *state_dir;
    int64_t backoff_ms;
    pthread_mutex_t mu;
    pthread_t thread;
    int wake_fd, ino_fd;
    bool quit;
    struct lx_pod *pods;   /* by uid */
    struct exec_reports queue;
};

static struct exec_local *to_local(struct exec *x) { return (struct exec_local *)x; }
static int64_t now_ms(void) { return clk_now(clk_real()); }

static void wake(struct exec_local *l)
{
    uint64_t one = 1;
    if (write(l->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        log_warn("exec", "wakeup: %s", strerror(errno));
}

static void mkdir_p(const char *path)
{
    char *p = xstrdup(path);
    for (char *s = p + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0755);
            *s = '/';
        }
    }
    mkdir(p, 0755);
    xfree(p);
}

static void set_str(char **dst, const char *v)
{
    xfree(*dst);
    *dst = xstrdup(v);
}

/* ---- metrics ---- */

/* The last line of the metrics file that is a JSON object, or NULL. */
static json_t *read_metrics(const char *path, char **text_out)
{
    *text_out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    off_t size = lseek(fd, 0, SEEK_END);
    off_t from = size > METRICS_TAIL_BYTES ? size - METRICS_TAIL_BYTES : 0;
    size_t len = (size_t)(size - from);
    char *buf = xmalloc(len + 1);
    ssize_t got = size > 0 ? pread(fd, buf, len, from) : 0;
    close(fd);
    buf[got > 0 ? got : 0] = '\0';
    json_t *found = NULL;
    for (char *end = buf + (got > 0 ? got : 0); end > buf && !found;) {
        char *nl = end - 1;
        *end = '\0';
        while (nl > buf && nl[-1] != '\n')
            nl--;
        json_t *v = json_loads(nl, JSON_REJECT_DUPLICATES, NULL);
        if (json_is_object(v)) {
            found = v;
            *text_out = xstrdup(nl);
        } else {
            json_decref(v);
        }
        end = nl > buf ? nl - 1 : buf;
    }
    xfree(buf);
    return found;
}

/* Re-read the metrics; true when they changed. */
static bool refresh_metrics(struct lx_pod *p)
{
    char *text;
    json_t *m = read_metrics(p->metrics_path, &text);
    if (!m || (p->metrics_text && !strcmp(p->metrics_text, text))) {
        json_decref(m);
        xfree(text);
        return false;
    }
    json_decref(p->metrics);
    p->metrics = m;
    xfree(p->metrics_text);
    p->metrics_text = text;
    return true;
}

/* ---- reports ---- */

static void fill_containers(const struct lx_pod *p, struct exec_report *r)
{
    r->containers = xcalloc(p->n ? p->n : 1, sizeof(*r->containers));
    r->n_containers = p->n;
    for (size_t i = 0; i < p->n; i++) {
        const struct lx_ctr *c = &p->c[i];
        struct exec_container_report *o = &r->containers[i];
        o->name = xstrdup(c->cmd->name);
        o->init = c->cmd->init;
        o->state = c->state;
        o->exit_code = c->exit_code;
        o->reason = xstrdup(c->reason);
        o->message = xstrdup(c->message);
        o->started_ms = c->started_ms;
        o->finished_ms = c->finished_ms;
        o->restarts = c->restarts;
    }
}

static struct exec_report *queue_report(struct exec_local *l, struct lx_pod *p,
                                        enum exec_state st)
{
    XGROW(l->queue.items, l->queue.cap, l->queue.n + 1);
    struct exec_report *r = &l->queue.items[l->queue.n++];
    memset(r, 0, sizeof(*r));
    r->uid = xstrdup(p->uid);
    r->state = st;
    r->at_ms = now_ms();
    r->metrics = p->metrics ? json_incref(p->metrics) : NULL;
    fill_containers(p, r);
    return r;
}

static void report_running(struct exec_local *l, struct lx_pod *p)
{
    struct exec_report *r = queue_report(l, p, EXEC_RUNNING);
    r->reason = xstrdup("Started");
    r->message = xstrdup("");
    p->report_running = false;
}

/* The pod is over: one terminal report, then it is forgotten. */
static void finish(struct exec_local *l, struct lx_pod *p)
{
    refresh_metrics(p);
    /* the cause: a container that could not start, else the first failure */
    const struct lx_ctr *bad = NULL;
    for (size_t i = 0; i < p->n && !bad; i++)
        if (p->c[i].state == EXEC_C_TERMINATED && !strcmp(jx_or_empty(p->c[i].reason), "StartError"))
            bad = &p->c[i];
    for (size_t i = 0; i < p->n && !bad; i++)
        if (p->c[i].state == EXEC_C_TERMINATED && p->c[i].exit_code != 0)
            bad = &p->c[i];
    bool ran = false;
    for (size_t i = 0; i < p->n; i++)
        ran |= p->c[i].started_ms > 0 || p->c[i].state == EXEC_C_TERMINATED;
    struct exec_report *r;
    if (bad) {
        r = queue_report(l, p, EXEC_FAILED);
        r->exit_code = bad->exit_code;
        r->reason = xstrdup(bad->reason ? bad->reason : "Error");
        r->message = xstrdup(bad->message ? bad->message : "");
    } else if (!ran || (p->n > p->n_init && !p->mains_started)) {
        r = queue_report(l, p, EXEC_FAILED);
        r->exit_code = 143;
        r->reason = xstrdup("Error");
        r->message = xstrdup("the pod was stopped before its containers started");
    } else {
        r = queue_report(l, p, EXEC_SUCCEEDED);
        r->reason = xstrdup("Completed");
        r->message = xstrdup("");
    }
}

/* ---- processes ---- */

static void signal_all(struct lx_pod *p, int sig)
{
    for (size_t i = 0; i < p->n; i++)
        if (p->c[i].pid > 0)
            kill(-p->c[i].pid, sig);
}

static int spawn_proc(const char *path, struct lx_ctr *c, pid_t *pid)
{
    int logfd = open(c->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (logfd < 0)
        return errno;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, logfd, 1);
    posix_spawn_file_actions_adddup2(&fa, logfd, 2);
    posix_spawn_file_actions_addchdir_np(&fa, c->cmd->cwd);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    posix_spawnattr_init(&at);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    int rc = posix_spawn(pid, path, &fa, &at, c->cmd->argv, c->cmd->envp);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    close(logfd);
    return rc;
}

/* Start one container; false (and the container terminated with
 * StartError) when it cannot run. */
static bool start_ctr(struct lx_ctr *c)
{
    char *err = c->cmd->error ? xstrdup(c->cmd->error) : NULL;
    struct stat st;
    if (!err && (stat(c->cmd->cwd, &st) != 0 || !S_ISDIR(st.st_mode)))
        err = xasprintf("chdir to cwd (\"%s\") set in config.json failed: %s", c->cmd->cwd,
                        strerror(errno ? errno : ENOTDIR));
    char *path = err ? NULL : lx_find_program(c->cmd->argv[0], c->cmd->envp, c->cmd->cwd, &err);
    pid_t pid = 0;
    int rc = path ? spawn_proc(path, c, &pid) : 0;
    if (path && rc != 0)
        err = xasprintf("exec: \"%s\": %s", c->cmd->argv[0], strerror(rc));
    xfree(path);
    int64_t now = now_ms();
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
    c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    c->state = EXEC_C_RUNNING;
    c->started_ms = now;
    c->finished_ms = 0;
    c->exit_code = 0;
    XFREE(c->reason);
    XFREE(c->message);
    return true;
}

static int64_t backoff(const struct exec_local *l, int restarts)
{
    if (restarts == 0)
        return 0;
    int64_t d = l->backoff_ms;
    for (int i = 1; i < restarts && d < RESTART_BACKOFF_MAX_MS; i++)
        d *= 2;
    return d < RESTART_BACKOFF_MAX_MS ? d : RESTART_BACKOFF_MAX_MS;
}

/* Collect a container's exit if it has one; true when it exited. */
static bool reap(struct exec_local *l, struct lx_pod *p, struct lx_ctr *c)
{
    int st;
    pid_t r = waitpid(c->pid, &st, WNOHANG);
    if (r == 0 || (r < 0 && errno == EINTR))
        return false;
    kill(-c->pid, SIGKILL); /* the container is over: so is its process group */
    if (c->pidfd >= 0)
        close(c->pidfd);
    c->pidfd = -1;
    c->pid = 0;
    c->state = EXEC_C_TERMINATED;
    c->finished_ms = now_ms();
    c->exit_code = r < 0 ? 255 : WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    set_str(&c->reason, c->exit_code == 0 ? "Completed" : "Error");
    XFREE(c->message);
    if (r > 0 && WIFSIGNALED(st))
        c->message = xasprintf("killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
    bool again = p->policy == LX_ALWAYS || (p->policy == LX_ON_FAILURE && c->exit_code != 0);
    if (c->cmd->init)
        again = c->exit_code != 0 && p->policy != LX_NEVER;
    if (again && !p->stopping)
        c->restart_at_ms = c->finished_ms + backoff(l, c->restarts);
    return true;
}

/* Restart a container whose backoff is over; true when something ran. */
static bool restart_due(struct lx_ctr *c, int64_t now)
{
    if (c->state != EXEC_C_TERMINATED || c->restart_at_ms <= 0 || c->restart_at_ms > now)
        return false;
    c->restart_at_ms = 0;
    c->restarts++;
    return start_ctr(c);
}

/* Init containers in order; true once every one completed. */
static bool advance_init(struct exec_local *l, struct lx_pod *p, int64_t now)
{
    while (p->next_init < p->n_init) {
        struct lx_ctr *c = &p->c[p->next_init];
        if (c->state == EXEC_C_RUNNING)
            return false;
        if (c->state == EXEC_C_TERMINATED && c->exit_code == 0) {
            p->next_init++;
            continue;
        }
        if (c->state == EXEC_C_WAITING) {
            if (!start_ctr(c))
                finish(l, p);
            return false;
        }
        /* failed init container */
        if (c->restart_at_ms <= 0 || !strcmp(jx_or_empty(c->reason), "StartError")) {
            finish(l, p);
            return false;
        }
        if (restart_due(c, now))
            p->report_running = p->mains_started;
        return false;
    }
    return true;
}

static bool all_mains_over(const struct lx_pod *p)
{
    for (size_t i = p->n_init; i < p->n; i++)
        if (p->c[i].state != EXEC_C_TERMINATED || p->c[i].restart_at_ms > 0)
            return false;
    return true;
}

/* Move one pod forward at time now. Returns true when it is finished (the
 * caller frees it). */
static bool advance(struct exec_local *l, struct lx_pod *p, int64_t now)
{
    if (p->stopping) {
        if (!p->killed && now >= p->kill_at_ms) {
            signal_all(p, SIGKILL);
            p->killed = true;
        }
        for (size_t i = 0; i < p->n; i++)
            if (p->c[i].pid > 0)
                return false;
        finish(l, p);
        return true;
    }
    size_t queued_before = l->queue.n;
    if (!p->mains_started) {
        if (!advance_init(l, p, now))
            return l->queue.n > queued_before; /* finish() queued the end */
        for (size_t i = p->n_init; i < p->n; i++) {
            if (!start_ctr(&p->c[i])) {
                signal_all(p, SIGKILL); /* a container that cannot start fails the pod */
                for (size_t k = p->n_init; k < p->n; k++)
                    p->c[k].restart_at_ms = 0;
                p->stopping = p->killed = true;
                return advance(l, p, now);
            }
        }
        p->mains_started = true;
        p->report_running = true;
    }
    for (size_t i = p->n_init; i < p->n; i++)
        if (restart_due(&p->c[i], now))
            p->report_running = true;
    if (p->check_metrics) {
        p->check_metrics = false;
        if (refresh_metrics(p))
            p->report_running = true;
    }
    if (all_mains_over(p)) {
        finish(l, p);
        return true;
    }
    if (p->report_running)
        report_running(l, p);
    return false;
}

static void pod_free(struct exec_local *l, struct lx_pod *p)
{
    if (p->wd >= 0)
        inotify_rm_watch(l->ino_fd, p->wd);
    for (size_t i = 0; i < p->n; i++) {
        struct lx_ctr *c = &p->c[i];
        if (c->pid > 0) {
            kill(-c->pid, SIGKILL);
            waitpid(c->pid, NULL, 0);
        }
        if (c->pidfd >= 0)
            close(c->pidfd);
        xfree(c->log_path);
        xfree(c->reason);
        xfree(c->message);
    }
    lx_cmds_free(p->cmds, p->n);
    xfree(p->c);
    xfree(p->uid);
    xfree(p->dir);
    xfree(p->metrics_path);
    xfree(p->metrics_text);
    json_decref(p->metrics);
    xfree(p);
}

/* ---- the reaper thread ---- */

static void handle_inotify(struct exec_local *l)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(l->ino_fd, buf, sizeof(buf))) > 0) {
        for (char *ptr = buf; ptr < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)ptr;
            if (ev->len && !strcmp(ev->name, EXEC_METRICS_FILE)) {
                struct lx_pod *p = NULL, *tmp = NULL;
                HASH_ITER(hh, l->pods, p, tmp) {
                    if (p->wd == ev->wd)
                        p->check_metrics = true;
                }
            }
            ptr += sizeof(struct inotify_event) + ev->len;
        }
    }
}

struct lx_waits {
    struct pollfd *fds;
    struct lx_ctr **ctrs; /* parallel to fds from index 2 */
    struct lx_pod **pods;
    size_t n, cap;
};

/* Advance every pod, collect what to wait on; returns the poll timeout. */
static int collect(struct exec_local *l, struct lx_waits *w)
{
    int64_t now = now_ms(), next = INT64_MAX;
    w->n = 2;
    XGROW(w->fds, w->cap, 2);
    w->fds[0] = (struct pollfd){.fd = l->wake_fd, .events = POLLIN};
    w->fds[1] = (struct pollfd){.fd = l->ino_fd, .events = POLLIN};
    struct lx_pod *p = NULL, *tmp = NULL;
    HASH_ITER(hh, l->pods, p, tmp) {
        if (advance(l, p, now)) {
            HASH_DEL(l->pods, p);
            pod_free(l, p);
            continue;
        }
        if (p->stopping && !p->killed && p->kill_at_ms < next)
            next = p->kill_at_ms;
        for (size_t i = 0; i < p->n; i++) {
            struct lx_ctr *c = &p->c[i];
            if (c->restart_at_ms > 0 && c->restart_at_ms < next)
                next = c->restart_at_ms;
            if (c->pid <= 0)
                continue;
            if (c->pidfd < 0 && now + NO_PIDFD_RECHECK_MS < next)
                next = now + NO_PIDFD_RECHECK_MS;
            XGROW(w->fds, w->cap, w->n + 1);
            w->ctrs = xreallocarray(w->ctrs, w->cap, sizeof(*w->ctrs));
            w->pods = xreallocarray(w->pods, w->cap, sizeof(*w->pods));
            w->fds[w->n] = (struct pollfd){.fd = c->pidfd, .events = POLLIN};
            w->ctrs[w->n] = c;
            w->pods[w->n] = p;
            w->n++;
        }
    }
    if (next == INT64_MAX)
        return -1;
    return next <= now ? 0 : (int)(next - now > 60000 ? 60000 : next - now);
}

static void take_notify(struct exec_local *l, void (**fn)(void *), void **ctx)
{
    *fn = l->queue.n ? l->base.notify : NULL;
    *ctx = l->base.notify_ctx;
}

static void *reaper(void *arg)
{
    struct exec_local *l = arg;
    struct lx_waits w = {0};
    pthread_mutex_lock(&l->mu);
    while (!l->quit) {
        int timeout = collect(l, &w);
        void (*fn)(void *);
        void *ctx;
        take_notify(l, &fn, &ctx);
        pthread_mutex_unlock(&l->mu);
        if (fn)
            fn(ctx);
        int r = poll(w.fds, w.n, timeout);
        pthread_mutex_lock(&l->mu);
        if (r < 0)
            continue;
        uint64_t v;
        if (w.fds[0].revents & POLLIN)
            while (read(l->wake_fd, &v, sizeof(v)) > 0) {}
        if (w.fds[1].revents & POLLIN)
            handle_inotify(l);
        for (size_t i = 2; i < w.n; i++)
            if (w.fds[i].revents || w.ctrs[i]->pidfd < 0)
                reap(l, w.pods[i], w.ctrs[i]);
    }
    pthread_mutex_unlock(&l->mu);
    xfree(w.fds);
    xfree(w.ctrs);
    xfree(w.pods);
    return NULL;
}

/* ---- the executor's operations ---- */

static enum lx_policy policy_of(const json_t *pod)
{
    const char *rp = JX_STR(pod, "spec", "restartPolicy");
    if (rp && !strcmp(rp, "OnFailure"))
        return LX_ON_FAILURE;
    if (rp && !strcmp(rp, "Always"))
        return LX_ALWAYS;
    return LX_NEVER;
}

/* The pod's extra env plus CUEUE_METRICS_FILE when the caller left it out. */
static struct exec_env *env_with_metrics(const struct exec_pod *pod, const char *metrics_path,
                                         size_t *n)
{
    struct exec_env *env = xcalloc(pod->n_env + 1, sizeof(*env));
    bool has = false;
    for (size_t i = 0; i < pod->n_env; i++) {
        env[i] = pod->env[i];
        has |= !strcmp(pod->env[i].name, EXEC_METRICS_ENV);
    }
    *n = pod->n_env;
    if (!has)
        env[(*n)++] = (struct exec_env){(char *)EXEC_METRICS_ENV, (char *)metrics_path};
    return env;
}

static struct lx_pod *pod_new(struct exec_local *l, const struct exec_pod *pod)
{
    struct lx_pod *p = xcalloc(1, sizeof(*p));
    p->uid = xstrdup(pod->uid);
    p->dir = pod->sandbox_dir ? xstrdup(pod->sandbox_dir)
                              : xasprintf("%s/pods/%s", l->state_dir, pod->uid);
    char *logdir = xasprintf("%s/pods/%s", l->state_dir, pod->uid);
    mkdir_p(logdir);
    mkdir_p(p->dir);
    xfree(logdir);
    p->metrics_path = xasprintf("%s/%s", p->dir, EXEC_METRICS_FILE);
    struct exec_pod copy = *pod;
    struct exec_env *env = env_with_metrics(pod, p->metrics_path, &copy.n_env);
    copy.env = env;
    p->cmds = lx_cmds_build(&copy, environ, p->dir, &p->n);
    xfree(env);
    p->c = xcalloc(p->n ? p->n : 1, sizeof(*p->c));
    for (size_t i = 0; i < p->n; i++) {
        p->c[i].cmd = &p->cmds[i];
        p->c[i].pidfd = -1;
        p->c[i].state = EXEC_C_WAITING;
        p->c[i].log_path = exec_log_path(l->state_dir, pod->uid, p->cmds[i].name);
        p->n_init += p->cmds[i].init;
    }
    p->policy = policy_of(pod->pod);
    p->wd = inotify_add_watch(l->ino_fd, p->dir, IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO);
    return p;
}

static int local_start(struct exec *x, const struct exec_pod *pod, char *err, size_t errlen)
{
    struct exec_local *l = to_local(x);
    if (!pod->uid || !pod->uid[0] || !pod->pod) {
        snprintf(err, errlen, "pod without uid or object");
        return CU_EINVAL;
    }
    if (json_array_size(JX_GET(pod->pod, "spec", "containers")) == 0) {
        snprintf(err, errlen, "pod %s has no containers", jx_or_empty(pod->name));
        return CU_EINVAL;
    }
    pthread_mutex_lock(&l->mu);
    struct lx_pod *p;
    HASH_FIND_STR(l->pods, pod->uid, p);
    if (p) {
        pthread_mutex_unlock(&l->mu);
        snprintf(err, errlen, "pod %s is already running", pod->uid);
        return CU_EEXIST;
    }
    p = pod_new(l, pod);
    HASH_ADD_KEYPTR(hh, l->pods, p->uid, strlen(p->uid), p);
    pthread_mutex_unlock(&l->mu);
    wake(l);
    return 0;
}

static int local_stop(struct exec *x, const char *uid, int64_t grace_ms)
{
    struct exec_local *l = to_local(x);
    pthread_mutex_lock(&l->mu);
    struct lx_pod *p;
    HASH_FIND_STR(l->pods, uid, p);
    if (p && !p->stopping) {
        p->stopping = true;
        p->kill_at_ms = now_ms() + (grace_ms > 0 ? grace_ms : 0);
        for (size_t i = 0; i < p->n; i++)
            p->c[i].restart_at_ms = 0;
        signal_all(p, grace_ms > 0 ? SIGTERM : SIGKILL);
        p->killed = grace_ms <= 0;
    }
    pthread_mutex_unlock(&l->mu);
    wake(l);
    return 0;
}

static int local_poll(struct exec *x, struct exec_reports *out)
{
    struct exec_local *l = to_local(x);
    pthread_mutex_lock(&l->mu);
    size_t n = l->queue.n;
    XGROW(out->items, out->cap, out->n + n);
    if (n)
        memcpy(out->items + out->n, l->queue.items, n * sizeof(*out->items));
    out->n += n;
    l->queue.n = 0;
    pthread_mutex_unlock(&l->mu);
    return (int)n;
}

static int64_t local_next_deadline(struct exec *x)
{
    (void)x; /* the reaper keeps its own timers */
    return INT64_MAX;
}

static char *local_log_path(struct exec *x, const char *uid, const char *container)
{
    return exec_log_path(to_local(x)->state_dir, uid, container);
}

static void local_free(struct exec *x)
{
    struct exec_local *l = to_local(x);
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->quit = true;
    struct lx_pod *p = NULL, *tmp = NULL;
    HASH_ITER(hh, l->pods, p, tmp) {
        signal_all(p, SIGKILL);
    }
    pthread_mutex_unlock(&l->mu);
    wake(l);
    pthread_join(l->thread, NULL);
    HASH_ITER(hh, l->pods, p, tmp) {
        HASH_DEL(l->pods, p);
        pod_free(l, p);
    }
    exec_reports_release(&l->queue);
    close(l->wake_fd);
    close(l->ino_fd);
    pthread_mutex_destroy(&l->mu);
    xfree(l->state_dir);
    xfree(l);
}

static const struct exec_ops local_ops = {
    .start = local_start,
    .stop = local_stop,
    .poll = local_poll,
    .next_deadline = local_next_deadline,
    .log_path = local_log_path,
    .free = local_free,
};

struct exec *exec_local_new(const char *state_dir)
{
    struct exec_local *l = xcalloc(1, sizeof(*l));
    l->base.ops = &local_ops;
    l->state_dir = xstrdup(state_dir ? state_dir : ".");
    l->backoff_ms = 10 * 1000;
    l->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    l->ino_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    pthread_mutex_init(&l->mu, NULL);
    if (l->wake_fd < 0 || l->ino_fd < 0 ||
        pthread_create(&l->thread, NULL, reaper, l) != 0) {
        log_error("exec", "cannot start the local executor: %s", strerror(errno));
        if (l->wake_fd >= 0)
            close(l->wake_fd);
        if (l->ino_fd >= 0)
            close(l->ino_fd);
        pthread_mutex_destroy(&l->mu);
        xfree(l->state_dir);
        xfree(l);
        return NULL;
    }
    return &l->base;
}

void exec_local_set_restart_backoff(struct exec *x, int64_t base_ms)
{
    struct exec_local *l = to_local(x);
    pthread_mutex_lock(&l->mu);
    l->backoff_ms = base_ms > 0 ? base_ms : 1;
    pthread_mutex_unlock(&l->mu);
}
