/*
 * exec/slurm: pods on the Nodes of a Slurm node pool run as Slurm batch jobs
 * (exec.h, docs/slurm.md); every other pod goes to the inner executor (the
 * local one). One job per pod, pinned to the Slurm node the pod is bound to
 * (req_nodes), one task, the pod's requests as CPUs per task, memory per
 * node and GRES per node; the batch script changes to the container's
 * working directory and execs its command with its environment (the node
 * agent's multi-host variables included), output to the pod's log file
 * (exec_log_path: the same place as the local executor's, so logs read
 * alike).
 *
 * Durability: before a job is submitted, the pod's sandbox gets
 * SJ_FILE = "submitting"; after, its job id. A restarted server adopts
 * the job by that id, or, when it crashed in between, by the job name
 * cueue-<uid>; a pod that says "submitting" and has no job is not run
 * again (CU_EEXIST).
 *
 * Slurm's RPCs block (up to slurmctld's MessageTimeout), so they run on
 * one thread of the executor's: submissions, signals, and every
 * SJ_POLL_MS a slurm_load_job per job that is not over. An unreachable
 * slurmctld leaves the pods as they were (logged once) and is retried.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "api/meta.h"
#include "api/quantity.h"
#include "exec/exec.h"
#include "exec/local-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/log.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

#define SJ_FILE "slurm-job"
#define SJ_SUBMITTING "submitting"
#define SJ_POLL_MS 500
#define SJ_CONF_DEFAULT "/etc/slurm/slurm.conf"

enum sj_phase { SJ_SUBMIT, SJ_QUEUED, SJ_RUNNING, SJ_DONE };

/* One pod run as a Slurm job. */
struct sj {
    char *uid;
    char *sandbox;
    char *log;             /* stdout+stderr */
    char *job_name;        /* cueue-<uid> */
    /* what to submit (SJ_SUBMIT only) */
    char *script;
    char **env;
    char *partition, *node, *tres;
    uint16_t cpus;
    uint64_t mem_mb;
    uint32_t job_id;       /* 0 = not submitted */
    enum sj_phase phase;
    bool want_stop, term_sent;
    int64_t kill_at_ms;    /* SIGKILL due (0 = none) */
    struct sj *next;
};

struct exec_slurm {
    struct exec base;
    struct exec *inner;
    char *state_dir;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool thread_started, quit;
    struct sj *jobs;
    struct exec_reports out;
    bool warned_unreachable;
    bool stop_on_free;     /* free cancels the jobs still running */
};

static struct exec_slurm *to_sl(struct exec *x) { return (struct exec_slurm *)x; }

static int64_t wall_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void sj_free(struct sj *j)
{
    xfree(j->uid);
    xfree(j->sandbox);
    xfree(j->log);
    xfree(j->job_name);
    xfree(j->script);
    for (char **e = j->env; e && *e; e++)
        xfree(*e);
    xfree(j->env);
    xfree(j->partition);
    xfree(j->node);
    xfree(j->tres);
    xfree(j);
}

static struct sj *find(struct exec_slurm *s, const char *uid)
{
    for (struct sj *j = s->jobs; j; j = j->next)
        if (!strcmp(j->uid, uid))
            return j;
    return NULL;
}

/* ---- pure parts (exec/slurm.h) ---- */

bool exec_slurm_node(const json_t *node)
{
    const char *pid = JX_STR(node, "spec", "providerID");
    return pid && !strncmp(pid, "slurm://", 8);
}

char *exec_slurm_tres(const json_t *container)
{
    static const char *const gres[][2] = {{"google.com/tpu", "tpu"}, {"nvidia.com/gpu", "gpu"}};
    struct sbuf sb;
    sbuf_init(&sb, 0);
    for (size_t i = 0; i < sizeof(gres) / sizeof(gres[0]); i++) {
        json_t *v = JX_GET(container, "resources", "requests", gres[i][0]);
        if (!v)
            v = JX_GET(container, "resources", "limits", gres[i][0]);
        int64_t n = 0;
        if (api_quantity_from_json(v, gres[i][0], "", &n, NULL) != 0 || n <= 0)
            continue;
        sbuf_addf(&sb, "%sgres:%s:%lld", sb.len ? "," : "", gres[i][1], (long long)n);
    }
    if (!sb.len) {
        sbuf_release(&sb);
        return NULL;
    }
    char *out = xstrdup(sb.buf);
    sbuf_release(&sb);
    return out;
}

static void quote(struct sbuf *sb, const char *s)
{
    sbuf_addc(sb, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            sbuf_addf(sb, "'\\''");
        else
            sbuf_addc(sb, *s);
    }
    sbuf_addc(sb, '\'');
}

char *exec_slurm_script(char *const *argv, const char *cwd)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    sbuf_addf(&sb, "#!/bin/sh\n# a cueue pod (docs/slurm.md)\n");
    if (cwd) {
        sbuf_addf(&sb, "cd ");
        quote(&sb, cwd);
        sbuf_addf(&sb, " || exit 1\n");
    }
    sbuf_addf(&sb, "exec");
    for (char *const *a = argv; a && *a; a++) {
        sbuf_addc(&sb, ' ');
        quote(&sb, *a);
    }
    sbuf_addc(&sb, '\n');
    char *out = xstrdup(sb.buf);
    sbuf_release(&sb);
    return out;
}

/* A finished job's exit code as a container's: the status from wait, a
 * signal as 128+signal. */
static int exit_of(uint32_t status)
{
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

static const char *state_name(uint32_t st)
{
    switch (st & JOB_STATE_BASE) {
    case JOB_PENDING: return "PENDING";
    case JOB_RUNNING: return "RUNNING";
    case JOB_SUSPENDED: return "SUSPENDED";
    case JOB_COMPLETE: return "COMPLETED";
    case JOB_CANCELLED: return "CANCELLED";
    case JOB_FAILED: return "FAILED";
    case JOB_TIMEOUT: return "TIMEOUT";
    case JOB_NODE_FAIL: return "NODE_FAIL";
    case JOB_PREEMPTED: return "PREEMPTED";
    case JOB_BOOT_FAIL: return "BOOT_FAIL";
    case JOB_DEADLINE: return "DEADLINE";
    case JOB_OOM: return "OUT_OF_MEMORY";
    default: return "UNKNOWN";
    }
}

/* ---- files ---- */

static int write_mark(const char *sandbox, const char *text)
{
    char *tmp = xasprintf("%s/%s.tmp", sandbox, SJ_FILE);
    char *path = xasprintf("%s/%s", sandbox, SJ_FILE);
    int rc = CU_EIO;
    FILE *f = fopen(tmp, "w");
    if (f) {
        bool ok = fputs(text, f) >= 0;
        ok = fflush(f) == 0 && fsync(fileno(f)) == 0 && ok;
        ok = fclose(f) == 0 && ok;
        if (ok && rename(tmp, path) == 0)
            rc = 0;
    }
    xfree(tmp);
    xfree(path);
    return rc;
}

/* The mark's text (caller frees) or NULL when there is none. */
static char *read_mark(const char *sandbox)
{
    char *path = xasprintf("%s/%s", sandbox, SJ_FILE);
    char buf[64] = "";
    FILE *f = fopen(path, "r");
    xfree(path);
    if (!f)
        return NULL;
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return xstrdup(buf);
}

/* ---- libslurm ---- */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static bool init_ok;

static void init_slurm(void)
{
    const char *conf = getenv("SLURM_CONF");
    if (!conf || !*conf)
        conf = SJ_CONF_DEFAULT;
    /* libslurm ends the process when it finds no configuration */
    if (access(conf, R_OK) != 0) {
        log_error("slurm", "cannot read the Slurm configuration %s (set SLURM_CONF): %s", conf,
                  strerror(errno));
        return;
    }
    slurm_init(conf);
    init_ok = true;
}

static bool slurm_ready(void)
{
    pthread_once(&init_once, init_slurm);
    return init_ok;
}

static void push(struct exec_slurm *s, const char *uid, enum exec_state st, int code,
                 const char *reason, const char *msg)
{
    if (s->out.n == s->out.cap) {
        s->out.cap = s->out.cap ? 2 * s->out.cap : 8;
        s->out.items = xreallocarray(s->out.items, s->out.cap, sizeof(*s->out.items));
    }
    struct exec_report *r = &s->out.items[s->out.n++];
    memset(r, 0, sizeof(*r));
    r->uid = xstrdup(uid);
    r->state = st;
    r->exit_code = code;
    r->reason = reason ? xstrdup(reason) : NULL;
    r->message = msg ? xstrdup(msg) : NULL;
    r->at_ms = wall_ms();
}

static void notify(struct exec_slurm *s)
{
    void (*fn)(void *) = s->base.notify;
    if (fn)
        fn(s->base.notify_ctx);
}

/* Submit j's job (thread; j's submit fields are the thread's while in
 * SJ_SUBMIT). Returns the job id or 0 with the reason in err. */
static uint32_t submit(struct sj *j, char *err, size_t errlen)
{
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.name = j->job_name;
    d.script = j->script;
    d.environment = j->env;
    uint32_t n = 0;
    while (j->env[n])
        n++;
    d.env_size = n;
    d.partition = j->partition;
    d.req_nodes = j->node;
    d.min_nodes = 1;
    d.max_nodes = 1;
    d.num_tasks = 1;
    d.cpus_per_task = j->cpus ? j->cpus : 1;
    if (j->mem_mb)
        d.pn_min_memory = j->mem_mb;
    d.tres_per_node = j->tres;
    d.std_out = j->log;
    d.std_err = j->log;
    d.open_mode = OPEN_MODE_APPEND;
    d.work_dir = j->sandbox;
    d.user_id = getuid();
    d.group_id = getgid();
    submit_response_msg_t *resp = NULL;
    if (slurm_submit_batch_job(&d, &resp) != 0 || !resp) {
        snprintf(err, errlen, "Slurm refused the job: %s", slurm_strerror(slurm_get_errno()));
        return 0;
    }
    uint32_t id = resp->job_id;
    slurm_free_submit_response_response_msg(resp);
    return id;
}

/* A job's state from slurmctld: 0, or -1 (unreachable: nothing known) or
 * -2 (slurmctld does not know the job). */
static int load_state(uint32_t id, uint32_t *state, uint32_t *exit_code)
{
    job_info_msg_t *m = NULL;
    if (slurm_load_job(&m, id, SHOW_ALL) != 0)
        return slurm_get_errno() == ESLURM_INVALID_JOB_ID ? -2 : -1;
    int rc = -2;
    for (uint32_t i = 0; m && i < m->record_count; i++) {
        if (m->job_array[i].job_id == id) {
            *state = m->job_array[i].job_state;
            *exit_code = m->job_array[i].exit_code;
            rc = 0;
        }
    }
    slurm_free_job_info_msg(m);
    return rc;
}

/* What the thread does for one job in a pass, decided under the lock. */
struct work {
    struct sj *j;        /* valid: only a job this thread made SJ_DONE leaves the list */
    bool submit, term, kill, query;
    uint32_t job_id;
};

/* Apply a job's state (under the lock). */
static void observe(struct exec_slurm *s, struct sj *j, uint32_t st, uint32_t status)
{
    uint32_t base = st & JOB_STATE_BASE;
    if (base == JOB_PENDING)
        return;
    if (base == JOB_RUNNING || base == JOB_SUSPENDED) {
        if (j->phase != SJ_RUNNING) {
            j->phase = SJ_RUNNING;
            push(s, j->uid, EXEC_RUNNING, 0, NULL, NULL);
        }
        return;
    }
    int code = exit_of(status);
    bool ok = base == JOB_COMPLETE && code == 0;
    if (!ok && code == 0)
        code = base == JOB_CANCELLED ? 128 + SIGKILL : 1;
    char msg[128];
    snprintf(msg, sizeof(msg), "Slurm job %u ended %s", j->job_id, state_name(st));
    j->phase = SJ_DONE;
    push(s, j->uid, ok ? EXEC_SUCCEEDED : EXEC_FAILED, code,
         ok ? "Completed" : base == JOB_OOM ? "OOMKilled" : "Error", ok ? NULL : msg);
}

static void pass(struct exec_slurm *s)
{
    pthread_mutex_lock(&s->mu);
    size_t n = 0;
    for (struct sj *j = s->jobs; j; j = j->next)
        n++;
    struct work *w = xcalloc(n + 1, sizeof(*w));
    size_t k = 0;
    int64_t now = wall_ms();
    for (struct sj *j = s->jobs; j; j = j->next) {
        if (j->phase == SJ_DONE)
            continue;
        struct work *it = &w[k++];
        it->j = j;
        it->job_id = j->job_id;
        if (j->phase == SJ_SUBMIT && j->want_stop) {
            /* stopped before it reached Slurm: it never runs */
            j->phase = SJ_DONE;
            write_mark(j->sandbox, "stopped");
            push(s, j->uid, EXEC_FAILED, 128 + SIGKILL, "Error",
                 "stopped before it was submitted to Slurm");
            k--;
            continue;
        }
        it->submit = j->phase == SJ_SUBMIT;
        it->term = j->job_id && j->want_stop && !j->term_sent;
        it->kill = j->job_id && j->kill_at_ms && now >= j->kill_at_ms;
        if (it->term)
            j->term_sent = true;
        if (it->kill)
            j->kill_at_ms = 0;
        it->query = j->job_id != 0;
    }
    pthread_mutex_unlock(&s->mu);
    bool changed = false;
    for (size_t i = 0; i < k; i++) {
        struct work *it = &w[i];
        char err[256] = "";
        uint32_t id = it->submit ? submit(it->j, err, sizeof(err)) : it->job_id;
        if (it->submit && id) {
            char text[16];
            snprintf(text, sizeof(text), "%u", id);
            if (write_mark(it->j->sandbox, text) != 0)
                log_error("slurm", "pod %s: cannot record Slurm job %u in %s", it->j->uid, id,
                          it->j->sandbox);
        }
        if (it->term && slurm_kill_job(id, SIGTERM, KILL_FULL_JOB) != 0)
            it->kill = true; /* not running yet (pending): cancel at once */
        if (it->kill)
            slurm_kill_job(id, SIGKILL, 0);
        uint32_t st = 0, status = 0;
        int q = id ? load_state(id, &st, &status) : -1;
        pthread_mutex_lock(&s->mu);
        struct sj *j = it->j;
        if (it->submit && !id) {
            j->phase = SJ_DONE;
            write_mark(j->sandbox, "refused");
            push(s, j->uid, EXEC_FAILED, 128, "StartError", err);
            changed = true;
        } else if (it->submit) {
            j->job_id = id;
            j->phase = SJ_QUEUED;
            if (j->want_stop)
                j->kill_at_ms = wall_ms(); /* deleted while it was submitted */
        }
        size_t before = s->out.n;
        if (q == 0) {
            observe(s, j, st, status);
            s->warned_unreachable = false;
        } else if (q == -2 && id) {
            j->phase = SJ_DONE;
            push(s, j->uid, EXEC_FAILED, 128, "ProcessLost",
                 "Slurm no longer knows the pod's job (purged after MinJobAge?)");
        } else if (q == -1 && id && !s->warned_unreachable) {
            s->warned_unreachable = true;
            log_warn("slurm", "cannot read Slurm job %u: %s (retrying)", id,
                     slurm_strerror(slurm_get_errno()));
        }
        changed |= s->out.n != before;
        pthread_mutex_unlock(&s->mu);
    }
    xfree(w);
    if (changed)
        notify(s);
}

static void *thread_main(void *arg)
{
    struct exec_slurm *s = arg;
    pthread_mutex_lock(&s->mu);
    while (!s->quit) {
        pthread_mutex_unlock(&s->mu);
        pass(s);
        pthread_mutex_lock(&s->mu);
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += SJ_POLL_MS * 1000000L;
        t.tv_sec += t.tv_nsec / 1000000000L;
        t.tv_nsec %= 1000000000L;
        if (!s->quit)
            pthread_cond_timedwait(&s->cv, &s->mu, &t);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* Start the thread once (under the lock). False when libslurm cannot run. */
static bool ensure_thread(struct exec_slurm *s)
{
    if (!slurm_ready())
        return false;
    if (!s->thread_started && pthread_create(&s->thread, NULL, thread_main, s) == 0)
        s->thread_started = true;
    return s->thread_started;
}

static void add(struct exec_slurm *s, struct sj *j)
{
    j->next = s->jobs;
    s->jobs = j;
    pthread_cond_signal(&s->cv);
}

/* ---- ops ---- */

static char **base_env(void)
{
    const char *path = getenv("PATH");
    const char *home = getenv("HOME");
    char **env = xcalloc(3, sizeof(*env));
    env[0] = xasprintf("PATH=%s", path && path[0] ? path : LX_DEFAULT_PATH);
    env[1] = xasprintf("HOME=%s", home && home[0] ? home : "/");
    return env;
}

static int64_t request_of(const json_t *ctr, const char *res)
{
    json_t *v = JX_GET(ctr, "resources", "requests", res);
    if (!v)
        v = JX_GET(ctr, "resources", "limits", res);
    int64_t n = 0;
    return v && api_quantity_from_json(v, res, "", &n, NULL) == 0 ? n : 0;
}

static int sl_start(struct exec *x, const struct exec_pod *pod, char *err, size_t errlen)
{
    struct exec_slurm *s = to_sl(x);
    if (!exec_slurm_node(pod->node))
        return s->inner->ops->start(s->inner, pod, err, errlen);
    const json_t *spec = JX_GET(pod->pod, "spec");
    if (json_array_size(JX_GET(spec, "initContainers")) ||
        json_array_size(JX_GET(spec, "containers")) != 1) {
        snprintf(err, errlen, "a pod on a Slurm node has one container and no init containers "
                              "(docs/slurm.md)");
        return CU_EINVAL;
    }
    char **env0 = base_env();
    size_t n = 0;
    struct lx_cmd *cmds = lx_cmds_build(pod, env0, pod->sandbox_dir, &n);
    for (char **e = env0; *e; e++)
        xfree(*e);
    xfree(env0);
    if (cmds[0].error) {
        snprintf(err, errlen, "%s", cmds[0].error);
        lx_cmds_free(cmds, n);
        return CU_EINVAL;
    }
    const json_t *ctr = json_array_get(JX_GET(spec, "containers"), 0);
    struct sj *j = xcalloc(1, sizeof(*j));
    j->uid = xstrdup(pod->uid);
    j->sandbox = xstrdup(pod->sandbox_dir);
    j->log = exec_log_path(s->state_dir, pod->uid, cmds[0].name);
    /* the log's directory (<state>/pods/<uid>): the sandbox may live
     * elsewhere (--pod-sandboxes), and Slurm fails a job whose output file
     * it cannot open */
    char *log_dir = xasprintf("%s/pods/%s", s->state_dir, pod->uid);
    exec_mkdir_p(log_dir);
    xfree(log_dir);
    j->job_name = xasprintf("cueue-%s", pod->uid);
    j->script = exec_slurm_script(cmds[0].argv, cmds[0].cwd);
    j->env = cmds[0].envp;
    cmds[0].envp = NULL;
    j->partition = xstrdup(jx_or_empty(api_label(pod->node, "slurm.cueue.dev/partition")));
    j->node = xstrdup(jx_or_empty(JX_STR(pod->node, "metadata", "name")));
    j->tres = exec_slurm_tres(ctr);
    int64_t cpu = request_of(ctr, "cpu");
    j->cpus = (uint16_t)(cpu > 0 ? (cpu + 999) / 1000 : 1);
    j->mem_mb = (uint64_t)(request_of(ctr, "memory") + (1 << 20) - 1) >> 20;
    lx_cmds_free(cmds, n);
    /* the intent, on disk before the job exists */
    if (write_mark(j->sandbox, SJ_SUBMITTING) != 0) {
        snprintf(err, errlen, "cannot write %s/%s: %s", j->sandbox, SJ_FILE, strerror(errno));
        sj_free(j);
        return CU_EIO;
    }
    pthread_mutex_lock(&s->mu);
    bool ok = ensure_thread(s);
    if (ok)
        add(s, j);
    pthread_mutex_unlock(&s->mu);
    if (!ok) {
        snprintf(err, errlen, "Slurm cannot be used here (no readable slurm.conf: set "
                              "SLURM_CONF; see the server's log)");
        write_mark(j->sandbox, "refused");
        sj_free(j);
        return CU_EIO;
    }
    return 0;
}

static int sl_stop(struct exec *x, const char *uid, int64_t grace_ms)
{
    struct exec_slurm *s = to_sl(x);
    pthread_mutex_lock(&s->mu);
    struct sj *j = find(s, uid);
    if (j && j->phase != SJ_DONE) {
        j->want_stop = true;
        int64_t at = wall_ms() + (grace_ms > 0 ? grace_ms : 0);
        if (!j->kill_at_ms || at < j->kill_at_ms)
            j->kill_at_ms = at;
        pthread_cond_signal(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return j ? 0 : s->inner->ops->stop(s->inner, uid, grace_ms);
}

static int sl_poll(struct exec *x, struct exec_reports *out)
{
    struct exec_slurm *s = to_sl(x);
    int n = s->inner->ops->poll(s->inner, out);
    pthread_mutex_lock(&s->mu);
    for (size_t i = 0; i < s->out.n; i++) {
        if (out->n == out->cap) {
            out->cap = out->cap ? 2 * out->cap : 8;
            out->items = xreallocarray(out->items, out->cap, sizeof(*out->items));
        }
        out->items[out->n++] = s->out.items[i];
        n++;
    }
    s->out.n = 0;
    /* jobs over and reported are forgotten */
    for (struct sj **pp = &s->jobs; *pp;) {
        if ((*pp)->phase == SJ_DONE) {
            struct sj *d = *pp;
            *pp = d->next;
            sj_free(d);
        } else {
            pp = &(*pp)->next;
        }
    }
    pthread_mutex_unlock(&s->mu);
    return n;
}

static int64_t sl_next_deadline(struct exec *x)
{
    struct exec_slurm *s = to_sl(x);
    return s->inner->ops->next_deadline(s->inner);
}

static char *sl_log_path(struct exec *x, const char *uid, const char *container)
{
    struct exec_slurm *s = to_sl(x);
    return s->inner->ops->log_path(s->inner, uid, container);
}

/* A job of this name that slurmctld knows, or 0. */
static uint32_t job_by_name(const char *name)
{
    job_info_msg_t *m = NULL;
    uint32_t id = 0;
    if (slurm_load_jobs(0, &m, SHOW_ALL) != 0)
        return 0;
    for (uint32_t i = 0; i < m->record_count; i++)
        if (m->job_array[i].name && !strcmp(m->job_array[i].name, name))
            id = m->job_array[i].job_id;
    slurm_free_job_info_msg(m);
    return id;
}

static int sl_adopt(struct exec *x, const struct exec_pod *pod)
{
    struct exec_slurm *s = to_sl(x);
    char *sandbox = pod->sandbox_dir ? xstrdup(pod->sandbox_dir)
                                     : xasprintf("%s/pods/%s", s->state_dir, pod->uid);
    char *mark = read_mark(sandbox);
    if (!mark) {
        xfree(sandbox);
        return s->inner->ops->adopt ? s->inner->ops->adopt(s->inner, pod) : CU_ENOTFOUND;
    }
    pthread_mutex_lock(&s->mu);
    if (find(s, pod->uid)) {
        pthread_mutex_unlock(&s->mu);
        xfree(mark);
        xfree(sandbox);
        return 0;
    }
    pthread_mutex_unlock(&s->mu);
    char *name = xasprintf("cueue-%s", pod->uid);
    uint32_t id = (uint32_t)strtoul(mark, NULL, 10);
    if (!id && !strcmp(mark, SJ_SUBMITTING) && slurm_ready())
        id = job_by_name(name); /* the server stopped between submit and record */
    int rc = CU_EEXIST;
    if (id) {
        struct sj *j = xcalloc(1, sizeof(*j));
        j->uid = xstrdup(pod->uid);
        j->sandbox = sandbox;
        sandbox = NULL;
        j->job_name = name;
        name = NULL;
        j->job_id = id;
        j->phase = SJ_QUEUED;
        char text[16];
        snprintf(text, sizeof(text), "%u", id);
        write_mark(j->sandbox, text);
        pthread_mutex_lock(&s->mu);
        if (ensure_thread(s)) {
            add(s, j);
            rc = 0;
        } else {
            sj_free(j);
        }
        pthread_mutex_unlock(&s->mu);
    }
    xfree(name);
    xfree(mark);
    xfree(sandbox);
    return rc;
}

static int sl_remove(struct exec *x, const char *uid)
{
    struct exec_slurm *s = to_sl(x);
    pthread_mutex_lock(&s->mu);
    bool followed = find(s, uid) != NULL;
    pthread_mutex_unlock(&s->mu);
    if (followed)
        return CU_EFORBIDDEN;
    return s->inner->ops->remove ? s->inner->ops->remove(s->inner, uid) : 0;
}

static int sl_sweep(struct exec *x, bool (*keep)(void *ctx, const char *uid), void *ctx)
{
    struct exec_slurm *s = to_sl(x);
    return s->inner->ops->sweep ? s->inner->ops->sweep(s->inner, keep, ctx) : 0;
}

static char *sl_pod_ip(struct exec *x, const char *uid)
{
    struct exec_slurm *s = to_sl(x);
    pthread_mutex_lock(&s->mu);
    bool ours = find(s, uid) != NULL;
    pthread_mutex_unlock(&s->mu);
    return !ours && s->inner->ops->pod_ip ? s->inner->ops->pod_ip(s->inner, uid) : NULL;
}

static void sl_free(struct exec *x)
{
    struct exec_slurm *s = to_sl(x);
    pthread_mutex_lock(&s->mu);
    s->quit = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    if (s->thread_started)
        pthread_join(s->thread, NULL);
    for (struct sj *j = s->jobs; s->stop_on_free && j; j = j->next)
        if (j->job_id && j->phase != SJ_DONE && slurm_kill_job(j->job_id, SIGKILL, 0) != 0)
            log_warn("slurm", "cannot cancel Slurm job %u: %s", j->job_id,
                     slurm_strerror(slurm_get_errno()));
    while (s->jobs) {
        struct sj *j = s->jobs;
        s->jobs = j->next;
        sj_free(j);
    }
    exec_reports_release(&s->out);
    s->inner->ops->free(s->inner);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    xfree(s->state_dir);
    xfree(s);
}

static const struct exec_ops slurm_ops = {
    .start = sl_start,
    .stop = sl_stop,
    .poll = sl_poll,
    .next_deadline = sl_next_deadline,
    .log_path = sl_log_path,
    .free = sl_free,
    .adopt = sl_adopt,
    .remove = sl_remove,
    .sweep = sl_sweep,
    .pod_ip = sl_pod_ip,
};

/* The inner executor's reports wake whoever the outer one wakes. */
static void forward_notify(void *ctx)
{
    notify(ctx);
}

void exec_slurm_set_stop_on_free(struct exec *x, bool stop)
{
    to_sl(x)->stop_on_free = stop;
}

/* The inner executor's sandboxes and staging (the local executor's
 * --pod-sandboxes layout when pods switch users), for every pod: a Slurm
 * job reads its files where the local executor would have put them. */
static char *slurm_sandbox_dir(struct exec *x, const char *uid)
{
    struct exec_slurm *s = to_sl(x);
    return exec_sandbox_dir(s->inner, s->state_dir, uid);
}

static int slurm_stage(struct exec *x, const char *uid, const char *sandbox,
                       const struct exec_volume *vols, size_t n, char *err, size_t errlen)
{
    return exec_stage(to_sl(x)->inner, uid, sandbox, vols, n, err, errlen);
}

static const struct exec_stage_ops slurm_stage_ops = {.sandbox_dir = slurm_sandbox_dir,
                                                      .stage = slurm_stage};

struct exec *exec_slurm_new(const char *state_dir, struct exec *inner)
{
    struct exec_slurm *s = xcalloc(1, sizeof(*s));
    s->base.ops = &slurm_ops;
    s->base.stage_ops = &slurm_stage_ops; /* pods' files where the local executor has them */
    s->inner = inner;
    s->state_dir = xstrdup(state_dir ? state_dir : ".");
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    inner->notify_ctx = s;
    inner->notify = forward_notify;
    return &s->base;
}
