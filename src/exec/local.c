/*
 * local: the executor of `cueue server` (see exec_local_new in exec.h).
 * Pods are real process trees on this machine, each run by its own
 * supervisor process (cueue-pod-supervisor, local_sup.c) that outlives the
 * server. This side builds the supervisor's spec, spawns it
 * (local_spawn.c), and follows it without needing
 * to be its parent: one watcher thread waits in one poll() on the
 * supervisors' pidfds, an eventfd (start/stop requests) and inotify on each
 * sandbox (the status file renamed in, the metrics file written), and turns
 * the status file and the metrics into reports. A restarted server adopts
 * the supervisors of the previous one (local_adopt) and carries on, a pod
 * that ended while it was down included.
 *
 * Invariants: all pod state is guarded by mu; only the watcher thread
 * spawns supervisors, reaps them and frees pods, so pointers it collected
 * for poll() stay valid while it waits; a pod reports EXEC_RUNNING once its
 * main containers run (again whenever the status or the metrics change)
 * and exactly one terminal report, once its supervisor is gone, after
 * which it is forgotten.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
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

#include "api/object.h"
#include "exec/local-int.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/log.h"
#include "util/xalloc.h"


#define LOCK_RECHECK_MS 200     /* a supervisor without pidfd: lock checks */
#define FILES_RECHECK_MS 1000   /* a sandbox inotify refused: file checks */
#define STOP_BACKSTOP_MS 5000   /* after grace: kill what the supervisor did not */
#define FREE_WAIT_MS 10000      /* stop-on-free: wait this long for supervisors */
#define METRICS_TAIL_BYTES (1 << 20)
#define FORKSRV_MAX_FAILURES 3  /* then supervisors are executed one by one */

struct lx_pod {
    char *uid;
    char *dir;             /* <state_dir>/pods/<uid>: supervisor files, logs */
    char *sandbox;         /* metrics file, default cwd (usually = dir) */
    char *status_path;
    char *metrics_path;
    int pid;               /* the supervisor; 0 = not known yet */
    int pidfd;             /* -1 = none: lock rechecks instead */
    bool child;            /* spawned by this process: reap it */
    bool spawn_pending;    /* started; the supervisor is not spawned yet */
    char *spec_text;       /* what the supervisor is to run, until spawned */
    bool gone;             /* the supervisor exited */
    bool stop_wanted, stop_sent, backstopped;
    int64_t stop_grace_ms, backstop_at_ms, recheck_at_ms;
    struct lx_status st;   /* the last status read */
    bool have_st;
    uint64_t reported_seq; /* st.seq of the last RUNNING report */
    bool reported_running; /* some RUNNING report was queued */
    bool check_status, check_metrics, metrics_changed;
    char *metrics_text;    /* last metrics line seen */
    json_t *metrics;
    int wd, wd2;           /* inotify watches on dir and sandbox, -1 = none */
    bool unwatched;        /* inotify refused a watch: re-read files on a timer */
    int64_t files_at_ms;
    UT_hash_handle hh;
};

struct exec_local {
    struct exec base;      /* first */
    char *state_dir;
    char *sup_program;     /* cueue-pod-supervisor, NULL = missing */
    char sup_error[512];   /* why it is missing */
    bool use_forksrv;      /* start supervisors through the fork server */
    struct lx_forksrv forksrv; /* sock -1 = not running */
    int forksrv_failures;
    int64_t backoff_ms;
    bool stop_on_free;
    struct lx_hooks hooks;  /* all NULL: a plain local executor */
    const struct api_pod_policy *pod_policy; /* borrowed; NULL = pods run as the server's user */
    char *sandbox_root;    /* pods' sandboxes <root>/<uid> (users switched), NULL = in <dir> */
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

/* ---- supervisors ---- */

static int pidfd_open_(int pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

/* Send sig to the pod's supervisor with value (ms) queued (SI_QUEUE), by
 * pidfd, or by pid while its lock shows it alive. */
static void sup_signal(struct lx_pod *p, int sig, int64_t value)
{
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    si.si_signo = sig;
    si.si_code = SI_QUEUE;
    si.si_pid = getpid();
    si.si_uid = getuid();
    si.si_value.sival_int = value > INT32_MAX ? INT32_MAX : (int)(value < 0 ? 0 : value);
    if (p->pidfd >= 0 && syscall(SYS_pidfd_send_signal, p->pidfd, sig, &si, 0) == 0)
        return;
    if (p->pid > 0 && lx_sup_is_locked(p->dir) &&
        (!p->have_st || lx_proc_start(p->pid) == p->st.pid_start))
        sigqueue(p->pid, sig, si.si_value);
}

/* Kill every container group the status records (verified start times). */
static void kill_groups(const struct lx_status *st)
{
    for (size_t i = 0; i < st->n; i++)
        if (st->c[i].pid > 0)
            lx_group_signal(st->c[i].pid, st->c[i].pid_start, SIGKILL);
}

/* Start following pid as the pod's supervisor (pidfd when the kernel has
 * it; lock rechecks otherwise). */
static void follow(struct lx_pod *p, int pid)
{
    p->pid = pid;
    if (p->pidfd < 0 && pid > 0)
        p->pidfd = pidfd_open_(pid);
}

/* Re-read the status file; true when it changed. */
static bool refresh_status(struct lx_pod *p)
{
    struct lx_status st;
    if (lx_status_read(p->status_path, &st) != 0)
        return false;
    /* an older status of the same supervisor (read through a file that was
     * swapped out as it was opened) changes nothing */
    if (p->have_st && st.seq <= p->st.seq && st.pid == p->st.pid) {
        lx_status_release(&st);
        return false;
    }
    lx_status_release(&p->st);
    p->st = st;
    p->have_st = true;
    if (p->pid <= 0 && st.pid > 0 && !p->gone)
        follow(p, st.pid);
    return true;
}

/* ---- metrics ---- */

/* The last line of the metrics file that is a JSON object, or NULL. */
static json_t *read_metrics(const char *path, char **text_out)
{
    *text_out = NULL;
    /* no symlinks: a pod that runs as another user may write here */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
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

static void fill_containers(const struct lx_status *st, struct exec_report *r)
{
    r->containers = xcalloc(st->n ? st->n : 1, sizeof(*r->containers));
    r->n_containers = st->n;
    for (size_t i = 0; i < st->n; i++) {
        const struct lx_cstatus *c = &st->c[i];
        struct exec_container_report *o = &r->containers[i];
        o->name = xstrdup(c->name);
        o->init = c->init;
        o->state = c->state;
        o->exit_code = c->exit_code;
        o->reason = c->reason ? xstrdup(c->reason) : NULL;
        o->message = c->message ? xstrdup(c->message) : NULL;
        o->started_ms = c->started_ms;
        o->finished_ms = c->finished_ms;
        o->restarts = c->restarts;
    }
}

static struct exec_report *queue_report(struct exec_local *l, struct lx_pod *p,
                                        enum exec_state st, const char *reason,
                                        const char *message)
{
    XGROW(l->queue.items, l->queue.cap, l->queue.n + 1);
    struct exec_report *r = &l->queue.items[l->queue.n++];
    memset(r, 0, sizeof(*r));
    r->uid = xstrdup(p->uid);
    r->state = st;
    r->at_ms = now_ms();
    r->reason = xstrdup(reason);
    r->message = xstrdup(message);
    r->metrics = p->metrics ? json_incref(p->metrics) : NULL;
    fill_containers(&p->st, r);
    return r;
}

/* The supervisor exited without concluding (killed, crashed): whatever
 * ran is over; say so. */
static void conclude_lost(struct lx_pod *p, int64_t now)
{
    kill_groups(&p->st);
    bool ran = false;
    for (size_t i = 0; i < p->st.n; i++) {
        struct lx_cstatus *c = &p->st.c[i];
        if (c->state != EXEC_C_RUNNING)
            continue;
        ran = true;
        c->state = EXEC_C_TERMINATED;
        c->exit_code = 137;
        c->finished_ms = now;
        xfree(c->reason);
        c->reason = xstrdup("Error");
        xfree(c->message);
        c->message = xstrdup("the pod's supervisor exited while the container ran");
    }
    lx_status_conclude(&p->st, now);
    if (p->st.result != EXEC_FAILED || !strcmp(jx_or_empty(p->st.reason), "StartError"))
        return;
    p->st.exit_code = ran ? 137 : 128;
    xfree(p->st.message);
    p->st.message = p->backstopped
                        ? xstrdup("the pod did not stop within its grace period and was killed")
                        : xasprintf("the pod's supervisor (pid %d) exited before the pod "
                                    "finished", p->pid);
}

/* A pod whose main containers ran and ended before the watcher looked at
 * its status still reports EXEC_RUNNING first (exec.h's contract): its
 * main containers as they were while running, started at their start. */
static void report_missed_running(struct exec_local *l, struct lx_pod *p)
{
    struct exec_report *r = queue_report(l, p, EXEC_RUNNING, "Started", "");
    int64_t started = 0;
    for (size_t i = 0; i < r->n_containers; i++) {
        struct exec_container_report *c = &r->containers[i];
        if (c->init || c->state != EXEC_C_TERMINATED)
            continue;
        c->state = EXEC_C_RUNNING;
        c->exit_code = 0;
        c->finished_ms = 0;
        xfree(c->reason);
        xfree(c->message);
        c->reason = c->message = NULL;
        if (c->started_ms > 0 && (!started || c->started_ms < started))
            started = c->started_ms;
    }
    if (started > 0)
        r->at_ms = started;
    p->reported_running = true;
}

/* The supervisor is gone: the one terminal report. */
static void finish(struct exec_local *l, struct lx_pod *p)
{
    int64_t now = now_ms();
    if (!p->st.done) /* a concluded status is the supervisor's last write */
        refresh_status(p);
    refresh_metrics(p);
    if (!p->st.done)
        conclude_lost(p, now);
    if (p->st.mains_started && !p->reported_running)
        report_missed_running(l, p);
    struct exec_report *r =
        queue_report(l, p, p->st.result, p->st.reason ? p->st.reason : "Error",
                     jx_or_empty(p->st.message));
    r->exit_code = p->st.exit_code;
    if (p->st.finished_ms > 0)
        r->at_ms = p->st.finished_ms;
    if (l->hooks.done)
        l->hooks.done(l->hooks.ctx, p->uid, p->dir);
}

/* A pod that never got a supervisor fails with reason/message. */
static void fail_unspawned(struct exec_local *l, struct lx_pod *p, int code,
                           const char *reason, const char *message)
{
    struct exec_report *r = queue_report(l, p, EXEC_FAILED, reason, message);
    r->exit_code = code;
}

/* ---- the watcher's pod state machine ---- */

/* Start p's supervisor through the fork server (started on first use):
 * 0 (followed from here), CU_EEXIST, or CU_EIO when the fork server cannot
 * serve (off, failed too often, or just failed: it is stopped then), with
 * the reason in err. */
static int spawn_forked(struct exec_local *l, struct lx_pod *p, char *err, size_t errlen)
{
    if (!l->use_forksrv || l->forksrv_failures >= FORKSRV_MAX_FAILURES) {
        snprintf(err, errlen, "no pod fork server");
        return CU_EIO;
    }
    if (l->forksrv.sock < 0 && lx_forksrv_start(&l->forksrv, l->sup_program, err, errlen)) {
        log_warn("exec", "%s; starting supervisors one program at a time", err);
        l->forksrv_failures = FORKSRV_MAX_FAILURES;
        return CU_EIO;
    }
    int pid = 0, pidfd = -1;
    int rc = lx_forksrv_spawn(&l->forksrv, p->dir, p->spec_text, &pid, &pidfd, err, errlen);
    if (rc == CU_EIO && l->forksrv.sock < 0 && ++l->forksrv_failures >= FORKSRV_MAX_FAILURES)
        log_warn("exec", "%s; no longer using the pod fork server", err);
    if (rc == 0) {
        p->pidfd = pidfd; /* from the parent, so it names this very process */
        follow(p, pid);
    }
    return rc;
}

static bool spawn(struct exec_local *l, struct lx_pod *p)
{
    p->spawn_pending = false;
    if (p->stop_wanted) {
        fail_unspawned(l, p, 143, "Error", "the pod was stopped before its containers started");
        return false;
    }
    if (!l->sup_program) {
        fail_unspawned(l, p, 128, "StartError", l->sup_error);
        return false;
    }
    char err[512];
    int rc = spawn_forked(l, p, err, sizeof(err));
    if (rc == CU_EIO) { /* no fork server: the supervisor program, executed */
        int pid = 0;
        bool lost = l->forksrv.sock < 0; /* it may have started this one */
        rc = lx_sup_spawn(l->sup_program, p->dir, p->spec_text, &pid, err, sizeof(err));
        if (rc == 0) {
            p->child = true;
            follow(p, pid);
        } else if (rc == CU_EEXIST && lost) {
            rc = 0; /* it did: follow the supervisor by its lock and status */
            p->recheck_at_ms = now_ms();
        }
    }
    XFREE(p->spec_text);
    if (rc != 0) {
        fail_unspawned(l, p, 128, "StartError", err);
        return false;
    }
    return true;
}

/* Is the supervisor gone? (pidfd pods learn it from poll) */
static void check_alive(struct lx_pod *p, int64_t now)
{
    if (p->gone || p->pidfd >= 0 || now < p->recheck_at_ms)
        return;
    p->recheck_at_ms = now + LOCK_RECHECK_MS;
    if (p->child && p->pid > 0 && waitpid(p->pid, NULL, WNOHANG) == p->pid)
        p->gone = true;
    else if (!p->child && !lx_sup_is_locked(p->dir))
        p->gone = true;
}

/* Move one pod forward. Returns true when it is over (the caller frees it). */
static bool advance(struct exec_local *l, struct lx_pod *p, int64_t now)
{
    if (p->spawn_pending && !spawn(l, p))
        return true;
    if (p->unwatched && now >= p->files_at_ms) {
        p->check_status = p->check_metrics = true;
        p->files_at_ms = now + FILES_RECHECK_MS;
    }
    if (p->check_status) {
        p->check_status = false;
        refresh_status(p);
    }
    if (p->check_metrics) {
        p->check_metrics = false;
        p->metrics_changed |= refresh_metrics(p);
    }
    if (p->stop_wanted && !p->stop_sent && p->pid > 0 && !p->gone) {
        sup_signal(p, SIGTERM, p->stop_grace_ms);
        p->stop_sent = true;
        p->backstop_at_ms = now + p->stop_grace_ms + STOP_BACKSTOP_MS;
    }
    if (p->stop_sent && !p->backstopped && !p->gone && now >= p->backstop_at_ms) {
        log_warn("exec", "pod %s: supervisor %d did not stop in time; killing it", p->uid,
                 p->pid);
        sup_signal(p, SIGKILL, 0);
        kill_groups(&p->st);
        p->backstopped = true;
    }
    check_alive(p, now);
    if (p->gone) {
        finish(l, p);
        return true;
    }
    if (p->have_st && p->st.mains_started && !p->st.done &&
        (p->st.seq != p->reported_seq || p->metrics_changed)) {
        queue_report(l, p, EXEC_RUNNING, "Started", "");
        p->reported_running = true;
        p->reported_seq = p->st.seq;
        p->metrics_changed = false;
    }
    return false;
}

static void pod_free(struct exec_local *l, struct lx_pod *p)
{
    if (p->wd >= 0)
        inotify_rm_watch(l->ino_fd, p->wd);
    if (p->wd2 >= 0 && p->wd2 != p->wd)
        inotify_rm_watch(l->ino_fd, p->wd2);
    if (p->pidfd >= 0)
        close(p->pidfd);
    lx_status_release(&p->st);
    xfree(p->uid);
    xfree(p->dir);
    xfree(p->sandbox);
    xfree(p->status_path);
    xfree(p->metrics_path);
    xfree(p->metrics_text);
    xfree(p->spec_text);
    json_decref(p->metrics);
    xfree(p);
}

/* ---- the watcher thread ---- */

static void handle_inotify(struct exec_local *l)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    ssize_t n;
    while ((n = read(l->ino_fd, buf, sizeof(buf))) > 0) {
        for (char *ptr = buf; ptr < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)ptr;
            bool metrics = ev->len && !strcmp(ev->name, EXEC_METRICS_FILE);
            bool status = ev->len && !strcmp(ev->name, LX_STATUS_FILE);
            struct lx_pod *p = NULL, *tmp = NULL;
            HASH_ITER(hh, l->pods, p, tmp) {
                if (p->wd != ev->wd && p->wd2 != ev->wd)
                    continue;
                p->check_metrics |= metrics;
                p->check_status |= status;
            }
            ptr += sizeof(struct inotify_event) + ev->len;
        }
    }
}

struct lx_waits {
    struct pollfd *fds;
    struct lx_pod **pods; /* parallel to fds from index 2 */
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
        if (p->stop_sent && !p->backstopped && p->backstop_at_ms < next)
            next = p->backstop_at_ms;
        if (p->unwatched && p->files_at_ms < next)
            next = p->files_at_ms;
        if (p->pidfd < 0) {
            if (p->recheck_at_ms < next)
                next = p->recheck_at_ms;
            continue;
        }
        XGROW(w->fds, w->cap, w->n + 1);
        w->pods = xreallocarray(w->pods, w->cap, sizeof(*w->pods));
        w->fds[w->n] = (struct pollfd){.fd = p->pidfd, .events = POLLIN};
        w->pods[w->n] = p;
        w->n++;
    }
    if (next == INT64_MAX)
        return -1;
    return next <= now ? 0 : (int)(next - now > 60000 ? 60000 : next - now);
}

static void *watcher(void *arg)
{
    struct exec_local *l = arg;
    struct lx_waits w = {0};
    pthread_mutex_lock(&l->mu);
    while (!l->quit) {
        int timeout = collect(l, &w);
        void (*fn)(void *) = l->queue.n ? l->base.notify : NULL;
        void *ctx = l->base.notify_ctx;
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
        for (size_t i = 2; i < w.n; i++) {
            if (!w.fds[i].revents)
                continue;
            struct lx_pod *p = w.pods[i];
            p->gone = true;
            if (p->child)
                waitpid(p->pid, NULL, WNOHANG);
        }
    }
    pthread_mutex_unlock(&l->mu);
    xfree(w.fds);
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

static struct lx_pod *pod_new(struct exec_local *l, const char *uid, const char *sandbox)
{
    struct lx_pod *p = xcalloc(1, sizeof(*p));
    p->uid = xstrdup(uid);
    p->dir = xasprintf("%s/pods/%s", l->state_dir, uid);
    p->sandbox = xstrdup(sandbox ? sandbox : p->dir);
    p->status_path = xasprintf("%s/%s", p->dir, LX_STATUS_FILE);
    p->metrics_path = xasprintf("%s/%s", p->sandbox, EXEC_METRICS_FILE);
    p->pidfd = -1;
    exec_mkdir_p(p->dir);
    exec_mkdir_p(p->sandbox);
    /* the status file is renamed in; the metrics file is written (or
     * renamed in); closes and the temp file's writes need no wakeup */
    uint32_t mask = IN_MODIFY | IN_MOVED_TO;
    p->wd = inotify_add_watch(l->ino_fd, p->dir, mask);
    p->wd2 = strcmp(p->dir, p->sandbox) ? inotify_add_watch(l->ino_fd, p->sandbox, mask) : -1;
    p->unwatched = p->wd < 0 || (p->wd2 < 0 && strcmp(p->dir, p->sandbox));
    if (p->unwatched)
        log_warn("exec", "pod %s: no inotify watch (%s): its files are re-read every %d ms",
                 uid, strerror(errno), FILES_RECHECK_MS);
    p->check_status = p->check_metrics = true;
    return p;
}

/* The environment every container starts from, as a kubelet gives one
 * from its image: PATH (the server's, which plays the image's here, else
 * the default) and HOME (the home of the user the pod runs as), nothing
 * else of the server's environment (its credentials, tokens, proxies stay
 * with it). The pod's own env and the node agent's come on top.
 * NULL-terminated; caller frees each string and the array. */
static char **base_env(uid_t uid)
{
    const char *path = getenv("PATH");
    struct passwd pwd, *pw = NULL;
    char buf[4096];
    if (getpwuid_r(uid, &pwd, buf, sizeof(buf), &pw) != 0)
        pw = NULL;
    char **env = xcalloc(3, sizeof(*env));
    env[0] = xasprintf("PATH=%s", path && path[0] ? path : LX_DEFAULT_PATH);
    env[1] = xasprintf("HOME=%s", pw && pw->pw_dir && pw->pw_dir[0] ? pw->pw_dir : "/");
    return env;
}

/* The supervisor's spec for pod (lx_spec_dump's text; caller frees); users
 * (check_security's, one per container) are who the containers run as. */
static char *spec_text(struct exec_local *l, struct lx_pod *p, const struct exec_pod *pod,
                       const struct lx_user *users, size_t n_users)
{
    struct exec_pod copy = *pod;
    struct exec_env *env = env_with_metrics(pod, p->metrics_path, &copy.n_env);
    copy.env = env;
    struct lx_spec spec = {.uid = p->uid, .sandbox = p->sandbox, .policy = policy_of(pod->pod),
                           .backoff_ms = l->backoff_ms};
    /* HOME: the pod's user's (its first main container's) */
    size_t n_inits = json_array_size(JX_GET(pod->pod, "spec", "initContainers"));
    const struct lx_user *u0 = n_inits < n_users ? &users[n_inits] : NULL;
    char **env0 = base_env(u0 && u0->set ? (uid_t)u0->uid : geteuid());
    spec.cmds = lx_cmds_build(&copy, env0, p->sandbox, &spec.n);
    for (size_t i = 0; i < spec.n && i < n_users; i++)
        spec.cmds[i].user = users[i];
    for (char **e = env0; *e; e++)
        xfree(*e);
    xfree(env0);
    xfree(env);
    for (size_t i = 0; i < spec.n; i++)
        spec.cmds[i].log_path = exec_log_path(l->state_dir, p->uid, spec.cmds[i].name);
    if (l->hooks.prepare)
        l->hooks.prepare(l->hooks.ctx, p->uid, p->dir, pod, spec.cmds, spec.n);
    char *text = lx_spec_dump(&spec);
    lx_cmds_free(spec.cmds, spec.n);
    return text;
}

/* A securityContext field of container ctr, else of the pod (Kubernetes:
 * the container's wins). */
static const json_t *sc_field(const json_t *pod, const json_t *ctr, const char *name)
{
    const json_t *v = JX_GET(ctr, "securityContext", name);
    return v ? v : JX_GET(pod, "spec", "securityContext", name);
}

/* Can every container run as its securityContext asks (api_pod_run_as
 * under the server's policy; without one, pods run as the server's user
 * and another runAsUser/runAsGroup cannot be honoured), and runAsNonRoot
 * refuses a pod that would run as uid 0 (the kubelet's
 * CreateContainerConfigError). Fills users[0..n) (initContainers first,
 * n = their count plus the containers') and *sandbox_gid. 0 or
 * CU_EFORBIDDEN with the reason in err. */
static int check_security(const struct exec_local *l, const struct exec_pod *pod,
                          struct lx_user *users, size_t n, gid_t *sandbox_gid, char *err,
                          size_t errlen)
{
    const struct api_pod_policy own = {.server_uid = (uint32_t)geteuid(),
                                       .server_gid = (uint32_t)getegid(), .allow_root = true};
    const struct api_pod_policy *pol = l->pod_policy ? l->pod_policy : &own;
    const json_t *spec = JX_GET(pod->pod, "spec");
    const char *const lists[] = {"initContainers", "containers"};
    size_t k = 0;
    *sandbox_gid = (gid_t)getegid();
    for (int li = 0; li < 2; li++) {
        size_t i;
        json_t *ctr;
        json_array_foreach(JX_GET(spec, lists[li]), i, ctr) {
            const char *name = jx_or_empty(JX_STR(ctr, "name"));
            struct api_run_as ra;
            const char *field;
            bool in_ctr;
            char why[256];
            if (api_pod_run_as(pol, spec, ctr, &ra, &field, &in_ctr, why, sizeof(why))) {
                const json_t *v = in_ctr ? JX_GET(ctr, "securityContext", field)
                                         : JX_GET(spec, "securityContext", field);
                char val[32] = "";
                if (json_is_integer(v))
                    snprintf(val, sizeof(val), " %lld", (long long)json_integer_value(v));
                snprintf(err, errlen, "container %s: %s%s cannot be honoured: %s", name, field,
                         val, why);
                return CU_EFORBIDDEN;
            }
            uid_t uid = ra.switch_user ? (uid_t)ra.uid : geteuid();
            if (json_is_true(sc_field(pod->pod, ctr, "runAsNonRoot")) && uid == 0) {
                snprintf(err, errlen, "container has runAsNonRoot and would run as root (uid 0) "
                         "(pod: \"%s/%s\", container: %s)", jx_or_empty(pod->ns),
                         jx_or_empty(pod->name), name);
                return CU_EFORBIDDEN;
            }
            if (k < n) {
                struct lx_user *u = &users[k++];
                memset(u, 0, sizeof(*u));
                u->set = ra.switch_user;
                u->uid = ra.uid;
                u->gid = ra.gid;
                for (size_t g = 0; g < ra.n_groups && g < LX_MAX_GROUPS; g++)
                    u->groups[u->n_groups++] = ra.groups[g];
                if (ra.switch_user)
                    *sandbox_gid = (gid_t)ra.sandbox_gid;
            }
        }
    }
    return 0;
}

/* nftw's callback for share_sandbox's volume walk: the group, and the
 * group's read (and search) bit where the owner has it. */
static _Thread_local gid_t walk_gid;
static int share_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    if (type == FTW_SL || type == FTW_SLN)
        return 0; /* staged volumes have none; never follow one */
    if (lchown(path, (uid_t)-1, walk_gid) == 0) {
        mode_t m = st->st_mode & 07777;
        m |= (m & S_IRUSR ? S_IRGRP : 0) | (m & S_IXUSR && type == FTW_D ? S_IXGRP : 0);
        chmod(path, m & 0777);
    }
    return 0;
}

/* Open pod's sandbox to the users it runs as (a server that runs pods as
 * another user, docs/security.md "Who a pod runs as"; the sandbox is then
 * <sandbox_root>/<uid>, apart from the supervisor's files and logs in the
 * state directory): the sandbox root:gid mode 02770 (every container of
 * the pod has gid among its groups; files made there get the group), its
 * volumes/ root:gid 0750, every configMap/secret volume's directory and files in
 * group gid with the group read bit where the owner has it (Kubernetes'
 * fsGroup ownership), every emptyDir 0777 (Kubernetes' mode for it).
 * hostPath volumes are left as they are. A change that fails is logged:
 * the pod then meets a permission error it can tell. */
static void share_sandbox(const char *sandbox, const json_t *pod, gid_t gid)
{
    char *vols = xasprintf("%s/volumes", sandbox);
    const char *const dirs[] = {sandbox, vols};
    const mode_t modes[] = {02770, 0750};
    for (int i = 0; i < 2; i++) {
        if (chown(dirs[i], 0, gid) != 0 && errno != ENOENT)
            log_warn("exec", "%s: cannot give it to group %u: %s", dirs[i], (unsigned)gid,
                     strerror(errno));
        else if (chmod(dirs[i], modes[i]) != 0 && errno != ENOENT)
            log_warn("exec", "%s: chmod: %s", dirs[i], strerror(errno));
    }
    xfree(vols);
    size_t i;
    json_t *v;
    json_array_foreach(JX_GET(pod, "spec", "volumes"), i, v) {
        const char *name = JX_STR(v, "name");
        if (!name || !exec_is_safe_relpath(name) || strchr(name, '/') || JX_GET(v, "hostPath"))
            continue;
        char *d = exec_volume_dir(sandbox, name);
        if (JX_GET(v, "emptyDir")) {
            if (chmod(d, 0777) != 0 && errno != ENOENT)
                log_warn("exec", "%s: chmod: %s", d, strerror(errno));
        } else {
            walk_gid = gid;
            nftw(d, share_entry, 16, FTW_PHYS);
        }
        xfree(d);
    }
}

static int local_start(struct exec *x, const struct exec_pod *pod, char *err, size_t errlen)
{
    struct exec_local *l = to_local(x);
    if (!pod->uid || !pod->uid[0] || !pod->pod || strchr(pod->uid, '/')) {
        snprintf(err, errlen, "pod without uid or object");
        return CU_EINVAL;
    }
    if (json_array_size(JX_GET(pod->pod, "spec", "containers")) == 0) {
        snprintf(err, errlen, "pod %s has no containers", jx_or_empty(pod->name));
        return CU_EINVAL;
    }
    size_t n_users = json_array_size(JX_GET(pod->pod, "spec", "initContainers")) +
                     json_array_size(JX_GET(pod->pod, "spec", "containers"));
    struct lx_user *users = xcalloc(n_users, sizeof(*users));
    gid_t sandbox_gid;
    int rc = check_security(l, pod, users, n_users, &sandbox_gid, err, errlen);
    if (rc != 0) {
        xfree(users);
        return rc;
    }
    pthread_mutex_lock(&l->mu);
    struct lx_pod *p;
    HASH_FIND_STR(l->pods, pod->uid, p);
    if (p) {
        pthread_mutex_unlock(&l->mu);
        snprintf(err, errlen, "pod %s is already running", pod->uid);
        xfree(users);
        return CU_EEXIST;
    }
    char *dir = xasprintf("%s/pods/%s", l->state_dir, pod->uid);
    bool ran = lx_has_started(dir);
    xfree(dir);
    if (ran) { /* at most once: adopt says what became of it */
        pthread_mutex_unlock(&l->mu);
        snprintf(err, errlen, "pod %s already ran in its sandbox (%s): it is not started twice",
                 pod->uid, LX_STARTED_FILE);
        xfree(users);
        return CU_EEXIST;
    }
    p = pod_new(l, pod->uid, pod->sandbox_dir);
    p->check_status = p->check_metrics = false; /* nothing there yet: inotify says when */
    if (n_users && users[n_users - 1].set)
        share_sandbox(p->sandbox, pod->pod, sandbox_gid);
    p->spec_text = spec_text(l, p, pod, users, n_users);
    xfree(users);
    unlink(p->status_path); /* a previous life's status is not this one's */
    p->spawn_pending = true;
    HASH_ADD_KEYPTR(hh, l->pods, p->uid, strlen(p->uid), p);
    pthread_mutex_unlock(&l->mu);
    wake(l);
    return 0;
}

/* Follow the supervisor a previous server left for pod->uid: a live one,
 * or one that finished while no server watched (its status says done). */
static int local_adopt(struct exec *x, const struct exec_pod *pod)
{
    struct exec_local *l = to_local(x);
    if (!pod->uid || !pod->uid[0] || strchr(pod->uid, '/'))
        return CU_ENOTFOUND;
    pthread_mutex_lock(&l->mu);
    struct lx_pod *p;
    HASH_FIND_STR(l->pods, pod->uid, p);
    if (p) {
        pthread_mutex_unlock(&l->mu);
        return 0;
    }
    char *dir = xasprintf("%s/pods/%s", l->state_dir, pod->uid);
    char *status_path = xasprintf("%s/%s", dir, LX_STATUS_FILE);
    struct lx_status st;
    int rc = lx_status_read(status_path, &st);
    /* pidfd first, lock second: a lock still held after the pidfd was
     * opened proves the pid was the supervisor's (it holds the lock for
     * its whole life, and only one ever exists per pod) */
    int pidfd = rc == 0 && st.pid > 0 && lx_proc_start(st.pid) == st.pid_start
                    ? pidfd_open_(st.pid) : -1;
    bool live = lx_sup_is_locked(dir);
    bool found = live || (rc == 0 && st.done);
    bool ran = !found && lx_has_started(dir);
    if (!found && rc == 0)
        kill_groups(&st); /* a supervisor that died mid-pod: nothing may linger */
    if (!found && l->hooks.done)
        l->hooks.done(l->hooks.ctx, pod->uid, dir);
    else if (found && l->hooks.adopted)
        l->hooks.adopted(l->hooks.ctx, pod->uid, dir);
    xfree(dir);
    xfree(status_path);
    if (!found) {
        if (pidfd >= 0)
            close(pidfd);
        lx_status_release(&st);
        pthread_mutex_unlock(&l->mu);
        return ran ? CU_EEXIST : CU_ENOTFOUND;
    }
    p = pod_new(l, pod->uid, pod->sandbox_dir);
    p->gone = !live;
    if (rc == 0) {
        p->st = st;
        p->have_st = true;
        p->pid = st.pid;
        p->pidfd = live ? pidfd : -1;
        if (!live && pidfd >= 0)
            close(pidfd);
    }
    p->recheck_at_ms = now_ms();
    HASH_ADD_KEYPTR(hh, l->pods, p->uid, strlen(p->uid), p);
    pthread_mutex_unlock(&l->mu);
    log_info("exec", "pod %s: adopted its supervisor (pid %d, %s)", pod->uid, st.pid,
             live ? "running" : "finished");
    wake(l);
    return 0;
}

static int local_stop(struct exec *x, const char *uid, int64_t grace_ms)
{
    struct exec_local *l = to_local(x);
    pthread_mutex_lock(&l->mu);
    struct lx_pod *p;
    HASH_FIND_STR(l->pods, uid, p);
    if (p && !p->stop_wanted) {
        p->stop_wanted = true;
        p->stop_grace_ms = grace_ms > 0 ? grace_ms : 0;
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
    (void)x; /* the watcher keeps its own timers */
    return INT64_MAX;
}

static char *local_log_path(struct exec *x, const char *uid, const char *container)
{
    return exec_log_path(to_local(x)->state_dir, uid, container);
}

/* Stop every pod at once and wait (bounded) for the supervisors to go;
 * then kill whatever is left. The status of a pod killed so is removed:
 * its processes died with the server, so a later server finds nothing to
 * adopt and the pod is lost (ProcessLost), not failed by its own doing.
 * Runs after the watcher thread ended. */
static void stop_all_and_wait(struct exec_local *l)
{
    struct lx_pod *p = NULL, *tmp = NULL;
    HASH_ITER(hh, l->pods, p, tmp) {
        if (p->pid > 0 && !p->gone)
            sup_signal(p, SIGTERM, 0);
    }
    int64_t deadline = now_ms() + FREE_WAIT_MS;
    for (bool left = true; left;) {
        left = false;
        HASH_ITER(hh, l->pods, p, tmp) {
            if (p->gone || p->pid <= 0)
                continue;
            if (p->child)
                p->gone = waitpid(p->pid, NULL, WNOHANG) == p->pid;
            else
                p->gone = !lx_sup_is_locked(p->dir);
            left |= !p->gone;
        }
        if (!left || now_ms() >= deadline)
            break;
        poll(NULL, 0, 20); /* shutdown only: supervisors SIGKILL at once */
    }
    HASH_ITER(hh, l->pods, p, tmp) {
        if (p->pid <= 0)
            continue;
        refresh_status(p);
        if (!p->gone) {
            kill_groups(&p->st);
            sup_signal(p, SIGKILL, 0);
            if (p->child)
                waitpid(p->pid, NULL, 0);
        }
        if (!p->gone || !p->st.done || p->st.stopping)
            unlink(p->status_path);
        if (l->hooks.done)
            l->hooks.done(l->hooks.ctx, p->uid, p->dir);
    }
}

static void local_free(struct exec *x)
{
    struct exec_local *l = to_local(x);
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->quit = true;
    pthread_mutex_unlock(&l->mu);
    wake(l);
    pthread_join(l->thread, NULL);
    if (l->stop_on_free)
        stop_all_and_wait(l);
    lx_forksrv_stop(&l->forksrv); /* the supervisors it started carry on */
    struct lx_pod *p = NULL, *tmp = NULL;
    HASH_ITER(hh, l->pods, p, tmp) {
        HASH_DEL(l->pods, p);
        pod_free(l, p);
    }
    exec_reports_release(&l->queue);
    if (l->hooks.free)
        l->hooks.free(l->hooks.ctx);
    close(l->wake_fd);
    close(l->ino_fd);
    pthread_mutex_destroy(&l->mu);
    xfree(l->sup_program);
    xfree(l->state_dir);
    xfree(l->sandbox_root);
    xfree(l);
}

/* ---- sandboxes of pods that are over ---- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return (flag == FTW_DP ? rmdir(path) : unlink(path)) == 0 || errno == ENOENT ? 0 : -1;
}

static bool uid_ok(const char *uid)
{
    return uid && *uid && !strchr(uid, '/') && strcmp(uid, ".") && strcmp(uid, "..");
}

static int local_remove(struct exec *x, const char *uid)
{
    struct exec_local *l = to_local(x);
    if (!uid_ok(uid))
        return CU_EINVAL;
    struct lx_pod *p = NULL;
    pthread_mutex_lock(&l->mu);
    HASH_FIND_STR(l->pods, uid, p);
    pthread_mutex_unlock(&l->mu);
    if (p)
        return CU_EFORBIDDEN; /* still followed */
    char *dir = xasprintf("%s/pods/%s", l->state_dir, uid);
    int rc = 0;
    if (lx_sup_is_locked(dir)) {
        rc = CU_EFORBIDDEN; /* a live supervisor: not ours to delete */
    } else {
        if (l->hooks.done)
            l->hooks.done(l->hooks.ctx, uid, dir);
        if (nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
            rc = CU_EIO;
        char *sb = l->sandbox_root ? xasprintf("%s/%s", l->sandbox_root, uid) : NULL;
        if (sb && nftw(sb, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
            rc = CU_EIO;
        xfree(sb);
    }
    xfree(dir);
    return rc;
}

static int local_sweep(struct exec *x, bool (*keep)(void *ctx, const char *uid), void *ctx)
{
    struct exec_local *l = to_local(x);
    char *root = xasprintf("%s/pods", l->state_dir);
    DIR *d = opendir(root);
    xfree(root);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || keep(ctx, de->d_name))
            continue;
        n += local_remove(x, de->d_name) == 0;
    }
    closedir(d);
    return n;
}

static char *local_pod_ip(struct exec *x, const char *uid)
{
    struct exec_local *l = to_local(x);
    return l->hooks.pod_ip ? l->hooks.pod_ip(l->hooks.ctx, uid) : NULL;
}

static const struct exec_ops local_ops = {
    .start = local_start,
    .stop = local_stop,
    .poll = local_poll,
    .next_deadline = local_next_deadline,
    .log_path = local_log_path,
    .free = local_free,
    .adopt = local_adopt,
    .remove = local_remove,
    .sweep = local_sweep,
    .pod_ip = local_pod_ip,
};

struct exec *exec_local_new(const char *state_dir) { return lx_new(state_dir, NULL); }

struct exec *lx_new(const char *state_dir, const struct lx_hooks *hooks)
{
    struct exec_local *l = xcalloc(1, sizeof(*l));
    if (hooks)
        l->hooks = *hooks;
    l->base.ops = &local_ops;
    l->state_dir = xstrdup(state_dir ? state_dir : ".");
    l->backoff_ms = 10 * 1000;
    l->sup_program = lx_sup_program(NULL, l->sup_error, sizeof(l->sup_error));
    l->use_forksrv = true;
    l->forksrv.sock = -1;
    if (!l->sup_program)
        log_error("exec", "%s; every pod will fail to start", l->sup_error);
    l->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    l->ino_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    pthread_mutex_init(&l->mu, NULL);
    if (l->wake_fd < 0 || l->ino_fd < 0 ||
        pthread_create(&l->thread, NULL, watcher, l) != 0) {
        log_error("exec", "cannot start the local executor: %s", strerror(errno));
        if (l->wake_fd >= 0)
            close(l->wake_fd);
        if (l->ino_fd >= 0)
            close(l->ino_fd);
        pthread_mutex_destroy(&l->mu);
        xfree(l->sup_program);
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

void lx_set_fork_server(struct exec *x, bool on)
{
    struct exec_local *l = to_local(x);
    pthread_mutex_lock(&l->mu);
    l->use_forksrv = on;
    pthread_mutex_unlock(&l->mu);
}

static char *local_sandbox_dir(struct exec *x, const char *uid)
{
    struct exec_local *l = to_local(x);
    return xasprintf("%s/%s", l->sandbox_root, uid);
}

static const struct exec_stage_ops local_stage_ops = {.sandbox_dir = local_sandbox_dir};

/* The first directory on the way to path (path included) that others
 * cannot search (no o+x), copied into bad; false when there is none. */
static bool unsearchable_on_way(const char *path, char *bad, size_t len)
{
    char *p = xstrdup(path);
    bool found = false;
    for (char *s = p + 1; !found; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char save = *s;
        *s = '\0';
        struct stat st;
        if (stat(p, &st) == 0 && !(st.st_mode & S_IXOTH)) {
            snprintf(bad, len, "%s (mode %04o)", p, (unsigned)(st.st_mode & 07777));
            found = true;
        }
        *s = save;
        if (!save)
            break;
    }
    xfree(p);
    return found;
}

int exec_local_set_pod_policy(struct exec *x, const struct api_pod_policy *pol,
                              const char *sandbox_root, char *err, size_t errlen)
{
    struct exec_local *l = to_local(x);
    bool sw = pol && pol->switch_user;
    if (sw && (!sandbox_root || sandbox_root[0] != '/' || exec_mkdir_p(sandbox_root) != 0 ||
               chown(sandbox_root, 0, 0) != 0 || chmod(sandbox_root, 0711) != 0)) {
        snprintf(err, errlen, "cannot make the pods' sandbox directory %s (mode 0711): %s",
                 sandbox_root ? sandbox_root : "(none)",
                 sandbox_root && sandbox_root[0] == '/' ? strerror(errno)
                                                        : "an absolute path is needed");
        return CU_EIO;
    }
    char bad[PATH_MAX + 32];
    if (sw && unsearchable_on_way(sandbox_root, bad, sizeof(bad))) {
        snprintf(err, errlen, "pods that run as other users cannot reach their sandboxes under "
                 "%s: %s is not searchable by others (choose another --pod-sandboxes)",
                 sandbox_root, bad);
        return CU_EIO;
    }
    pthread_mutex_lock(&l->mu);
    l->pod_policy = pol;
    XFREE(l->sandbox_root);
    l->sandbox_root = sw ? xstrdup(sandbox_root) : NULL;
    l->base.stage_ops = sw ? &local_stage_ops : NULL;
    pthread_mutex_unlock(&l->mu);
    return 0;
}

void exec_local_set_stop_on_free(struct exec *x, bool stop)
{
    struct exec_local *l = to_local(x);
    pthread_mutex_lock(&l->mu);
    l->stop_on_free = stop;
    pthread_mutex_unlock(&l->mu);
}
