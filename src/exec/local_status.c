/*
 * local_status: what a pod's supervisor shares with the server (see
 * local-int.h): the spec (what to run; the server dumps it into a memfd,
 * the supervisor parses it) and the status file (what happened; the
 * supervisor rewrites it after every change, the server reads it, now or
 * after a restart). Both are JSON through jansson; the status file is
 * written in one write() to "<file>.tmp" and swapped into place, so a
 * reader never sees half a file, a watcher of the directory sees one
 * change, not one per JSON token, and the swaps create and delete no
 * inodes (see dump_atomic). Also the process-identity helpers that keep a
 * restarted server from signalling a reused pid.
 *
 * Status file, times in ms since the epoch:
 *   {"pid", "pidStart", "seq", "mainsStarted", "stopping", "done",
 *    "result": {"state": "Succeeded"|"Failed", "exitCode", "reason",
 *               "message", "finishedMs"}            (when done)
 *    "containers": [{"name", "init", "state": "Waiting"|"Running"|
 *                    "Terminated", "pid", "pidStart", "exitCode", "reason",
 *                    "message", "startedMs", "finishedMs", "restarts",
 *                    "restartAtMs"}]}
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "exec/local-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static const char *const policy_names[] = {"Never", "OnFailure", "Always"};
static const char *const cstate_names[] = {"Waiting", "Running", "Terminated"};

/* Put tmp in place of path: swapped with the file there (RENAME_EXCHANGE:
 * tmp keeps the old file, to be rewritten next time), renamed when there is
 * none (or the file system cannot swap). */
static int replace(const char *tmp, const char *path)
{
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) == 0)
        return 0;
    return errno == ENOENT || errno == EINVAL || errno == ENOSYS ? rename(tmp, path) : -1;
}

/* Write v to path: into "<path>.tmp" (one write, O_TRUNC: after the first
 * two writes an existing file) and swapped into place. A reader sees the
 * old file or the new one, never half of one (an empty file at worst, when
 * it opened the old one just before it was rewritten: a later change
 * follows). No file is created or deleted after the first two writes,
 * which on ext4 without a journal keeps every other file creation on the
 * disk from skipping recently deleted inodes one by one. */
static int dump_atomic(const json_t *v, const char *path, int mode)
{
    char *text = jx_dumps(v);
    char *tmp = xasprintf("%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
    int rc = CU_EIO;
    if (fd >= 0) {
        /* no fsync: the file describes processes, which a machine crash
         * ends anyway */
        size_t len = strlen(text);
        bool ok = write(fd, text, len) == (ssize_t)len;
        ok &= close(fd) == 0;
        if (ok && replace(tmp, path) == 0)
            rc = 0;
    }
    xfree(text);
    xfree(tmp);
    return rc;
}

static json_t *load(const char *path, int *rc)
{
    json_error_t je;
    json_t *v = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    *rc = v ? 0 : access(path, F_OK) != 0 && errno == ENOENT ? CU_ENOTFOUND : CU_EINVAL;
    if (v && !json_is_object(v)) {
        json_decref(v);
        v = NULL;
        *rc = CU_EINVAL;
    }
    return v;
}

static json_t *strv_json(char *const *v)
{
    if (!v)
        return json_null();
    json_t *a = json_array();
    for (; *v; v++)
        json_array_append_new(a, json_string(*v));
    return a;
}

/* A NULL-terminated copy of a JSON string array; NULL when not an array. */
static char **json_strv(const json_t *a)
{
    if (!json_is_array(a))
        return NULL;
    char **v = xcalloc(json_array_size(a) + 1, sizeof(char *));
    size_t i, k = 0;
    json_t *s;
    json_array_foreach(a, i, s) {
        if (json_is_string(s))
            v[k++] = xstrdup(json_string_value(s));
    }
    return v;
}

static char *dup_or_null(const char *s) { return s ? xstrdup(s) : NULL; }

static int name_index(const char *const *names, size_t n, const char *s, int def)
{
    for (size_t i = 0; s && i < n; i++)
        if (!strcmp(names[i], s))
            return (int)i;
    return def;
}

/* ---- spec ---- */

char *lx_spec_dump(const struct lx_spec *spec)
{
    json_t *ctrs = json_array();
    for (size_t i = 0; i < spec->n; i++) {
        const struct lx_cmd *c = &spec->cmds[i];
        json_array_append_new(
            ctrs, json_pack("{s:s,s:b,s:o,s:o,s:s,s:s?,s:s,s:s*}", "name", c->name, "init",
                            c->init, "argv", strv_json(c->argv), "env", strv_json(c->envp),
                            "cwd", c->cwd, "startError", c->error, "log", c->log_path,
                            "reasonFile", c->reason_file));
        if (c->user.set) {
            json_t *g = json_array();
            for (size_t k = 0; k < c->user.n_groups; k++)
                json_array_append_new(g, json_integer(c->user.groups[k]));
            json_object_set_new(json_array_get(ctrs, i), "user",
                                json_pack("{s:I,s:I,s:o}", "uid", (json_int_t)c->user.uid,
                                          "gid", (json_int_t)c->user.gid, "groups", g));
        }
    }
    json_t *v = json_pack("{s:s,s:s,s:s,s:I,s:o}", "uid", spec->uid, "sandbox", spec->sandbox,
                          "restartPolicy", policy_names[spec->policy], "restartBackoffMs",
                          (json_int_t)spec->backoff_ms, "containers", ctrs);
    char *text = jx_dumps(v);
    json_decref(v);
    return text;
}

int lx_spec_parse(const char *text, size_t len, struct lx_spec *spec, char *err, size_t errlen)
{
    memset(spec, 0, sizeof(*spec));
    json_error_t je;
    json_t *v = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    const json_t *ctrs = JX_GET(v, "containers");
    if (!json_is_object(v) || !JX_STR(v, "uid") || !JX_STR(v, "sandbox") ||
        !json_is_array(ctrs)) {
        snprintf(err, errlen, "not a pod supervisor spec: %s",
                 v ? "uid, sandbox or containers missing" : je.text);
        json_decref(v);
        return CU_EINVAL;
    }
    spec->uid = xstrdup(JX_STR(v, "uid"));
    spec->sandbox = xstrdup(JX_STR(v, "sandbox"));
    spec->policy = (enum lx_policy)name_index(policy_names, 3, JX_STR(v, "restartPolicy"), 0);
    spec->backoff_ms = JX_INT(v, 10000, "restartBackoffMs");
    spec->n = json_array_size(ctrs);
    spec->cmds = xcalloc(spec->n ? spec->n : 1, sizeof(*spec->cmds));
    size_t i;
    json_t *c;
    json_array_foreach(ctrs, i, c) {
        struct lx_cmd *o = &spec->cmds[i];
        o->name = xstrdup(jx_or_empty(JX_STR(c, "name")));
        o->init = JX_BOOL(c, false, "init");
        o->argv = json_strv(JX_GET(c, "argv"));
        o->envp = json_strv(JX_GET(c, "env"));
        if (!o->envp)
            o->envp = xcalloc(1, sizeof(char *));
        o->cwd = xstrdup(JX_STR(c, "cwd") ? JX_STR(c, "cwd") : spec->sandbox);
        o->error = dup_or_null(JX_STR(c, "startError"));
        if (!o->argv && !o->error)
            o->error = xasprintf("container %s has no command", o->name);
        o->log_path = dup_or_null(JX_STR(c, "log"));
        o->reason_file = dup_or_null(JX_STR(c, "reasonFile"));
        const json_t *u = JX_GET(c, "user");
        if (u) { /* a user the spec names but that does not parse runs nothing */
            json_int_t uid = JX_INT(u, -1, "uid"), gid = JX_INT(u, -1, "gid");
            const json_t *g = JX_GET(u, "groups");
            o->user.set = true;
            o->user.uid = (uint32_t)uid;
            o->user.gid = (uint32_t)gid;
            bool ok = uid >= 0 && uid <= INT32_MAX && gid >= 0 && gid <= INT32_MAX &&
                      json_array_size(g) <= LX_MAX_GROUPS;
            size_t k;
            json_t *x;
            json_array_foreach(g, k, x) {
                ok = ok && json_is_integer(x) && json_integer_value(x) >= 0 &&
                     json_integer_value(x) <= INT32_MAX;
                if (ok)
                    o->user.groups[o->user.n_groups++] = (uint32_t)json_integer_value(x);
            }
            if (!ok && !o->error)
                o->error = xasprintf("container %s: the user to run as is not valid", o->name);
        }
    }
    json_decref(v);
    return 0;
}

void lx_spec_release(struct lx_spec *spec)
{
    xfree(spec->uid);
    xfree(spec->sandbox);
    lx_cmds_free(spec->cmds, spec->n);
    memset(spec, 0, sizeof(*spec));
}

/* ---- status ---- */

int lx_status_write(const char *path, const struct lx_status *st)
{
    json_t *ctrs = json_array();
    for (size_t i = 0; i < st->n; i++) {
        const struct lx_cstatus *c = &st->c[i];
        json_array_append_new(
            ctrs, json_pack("{s:s,s:b,s:s,s:i,s:I,s:i,s:s?,s:s?,s:I,s:I,s:i,s:I}", "name",
                            jx_or_empty(c->name), "init", c->init, "state",
                            cstate_names[c->state], "pid", c->pid, "pidStart",
                            (json_int_t)c->pid_start, "exitCode", c->exit_code, "reason",
                            c->reason, "message", c->message, "startedMs",
                            (json_int_t)c->started_ms, "finishedMs", (json_int_t)c->finished_ms,
                            "restarts", c->restarts, "restartAtMs",
                            (json_int_t)c->restart_at_ms));
    }
    json_t *v = json_pack("{s:i,s:I,s:I,s:b,s:b,s:b,s:o}", "pid", st->pid, "pidStart",
                          (json_int_t)st->pid_start, "seq", (json_int_t)st->seq, "mainsStarted",
                          st->mains_started, "stopping", st->stopping, "done", st->done,
                          "containers", ctrs);
    if (st->done)
        json_object_set_new(v, "result",
                            json_pack("{s:s,s:i,s:s,s:s,s:I}", "state",
                                      st->result == EXEC_SUCCEEDED ? "Succeeded" : "Failed",
                                      "exitCode", st->exit_code, "reason",
                                      jx_or_empty(st->reason), "message",
                                      jx_or_empty(st->message), "finishedMs",
                                      (json_int_t)st->finished_ms));
    int rc = dump_atomic(v, path, 0644);
    json_decref(v);
    return rc;
}

static void cstatus_read(const json_t *c, struct lx_cstatus *o)
{
    o->name = xstrdup(jx_or_empty(JX_STR(c, "name")));
    o->init = JX_BOOL(c, false, "init");
    o->state = (enum exec_cstate)name_index(cstate_names, 3, JX_STR(c, "state"), 0);
    o->pid = (int)JX_INT(c, 0, "pid");
    o->pid_start = (uint64_t)JX_INT(c, 0, "pidStart");
    o->exit_code = (int)JX_INT(c, 0, "exitCode");
    o->reason = dup_or_null(JX_STR(c, "reason"));
    o->message = dup_or_null(JX_STR(c, "message"));
    o->started_ms = JX_INT(c, 0, "startedMs");
    o->finished_ms = JX_INT(c, 0, "finishedMs");
    o->restarts = (int)JX_INT(c, 0, "restarts");
    o->restart_at_ms = JX_INT(c, 0, "restartAtMs");
}

int lx_status_read(const char *path, struct lx_status *st)
{
    memset(st, 0, sizeof(*st));
    int rc;
    json_t *v = load(path, &rc);
    const json_t *ctrs = JX_GET(v, "containers");
    if (!rc && (!json_is_integer(JX_GET(v, "pid")) || !json_is_array(ctrs)))
        rc = CU_EINVAL;
    if (rc) {
        json_decref(v);
        return rc;
    }
    st->pid = (int)JX_INT(v, 0, "pid");
    st->pid_start = (uint64_t)JX_INT(v, 0, "pidStart");
    st->seq = (uint64_t)JX_INT(v, 0, "seq");
    st->mains_started = JX_BOOL(v, false, "mainsStarted");
    st->stopping = JX_BOOL(v, false, "stopping");
    st->done = JX_BOOL(v, false, "done");
    const char *res = JX_STR(v, "result", "state");
    st->result = res && !strcmp(res, "Succeeded") ? EXEC_SUCCEEDED : EXEC_FAILED;
    st->exit_code = (int)JX_INT(v, 0, "result", "exitCode");
    st->reason = dup_or_null(JX_STR(v, "result", "reason"));
    st->message = dup_or_null(JX_STR(v, "result", "message"));
    st->finished_ms = JX_INT(v, 0, "result", "finishedMs");
    st->n = json_array_size(ctrs);
    st->c = xcalloc(st->n ? st->n : 1, sizeof(*st->c));
    size_t i;
    json_t *c;
    json_array_foreach(ctrs, i, c) {
        cstatus_read(c, &st->c[i]);
    }
    json_decref(v);
    return 0;
}

void lx_status_release(struct lx_status *st)
{
    for (size_t i = 0; i < st->n; i++) {
        xfree(st->c[i].name);
        xfree(st->c[i].reason);
        xfree(st->c[i].message);
    }
    xfree(st->c);
    xfree(st->reason);
    xfree(st->message);
    memset(st, 0, sizeof(*st));
}

void lx_status_conclude(struct lx_status *st, int64_t now_ms)
{
    const struct lx_cstatus *bad = NULL;
    for (size_t i = 0; i < st->n && !bad; i++)
        if (st->c[i].state == EXEC_C_TERMINATED &&
            !strcmp(jx_or_empty(st->c[i].reason), "StartError"))
            bad = &st->c[i];
    for (size_t i = 0; i < st->n && !bad; i++)
        if (st->c[i].state == EXEC_C_TERMINATED && st->c[i].exit_code != 0)
            bad = &st->c[i];
    bool ran = false, has_mains = false;
    for (size_t i = 0; i < st->n; i++) {
        ran |= st->c[i].started_ms > 0 || st->c[i].state == EXEC_C_TERMINATED;
        has_mains |= !st->c[i].init;
    }
    xfree(st->reason);
    xfree(st->message);
    st->done = true;
    st->finished_ms = now_ms;
    if (bad) {
        st->result = EXEC_FAILED;
        st->exit_code = bad->exit_code;
        st->reason = xstrdup(bad->reason ? bad->reason : "Error");
        st->message = xstrdup(jx_or_empty(bad->message));
    } else if (!ran || (has_mains && !st->mains_started)) {
        st->result = EXEC_FAILED;
        st->exit_code = 143;
        st->reason = xstrdup("Error");
        st->message = xstrdup("the pod was stopped before its containers started");
    } else {
        st->result = EXEC_SUCCEEDED;
        st->exit_code = 0;
        st->reason = xstrdup("Completed");
        st->message = xstrdup("");
    }
}

/* ---- processes ---- */

uint64_t lx_proc_start(int pid)
{
    if (pid <= 0)
        return 0;
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    /* "pid (comm) state ppid ...": comm may hold spaces and parentheses,
     * so count fields from the last ')'; starttime is field 22 */
    char *p = strrchr(buf, ')');
    unsigned long long start = 0;
    if (!p || sscanf(p + 1, " %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                            "%*s %*s %*s %llu", &start) != 1)
        return 0;
    return (uint64_t)start;
}

void lx_spawn_attrs(posix_spawnattr_t *at)
{
    posix_spawnattr_init(at);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(at, &none);
    posix_spawnattr_setsigdefault(at, &all);
    posix_spawnattr_setflags(at, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK |
                                     POSIX_SPAWN_SETSIGDEF);
}

bool lx_group_signal(int pid, uint64_t pid_start, int sig)
{
    if (pid <= 0 || pid_start == 0 || lx_proc_start(pid) != pid_start)
        return false;
    return kill(-pid, sig) == 0;
}

bool lx_sup_is_locked(const char *dir)
{
    char *path = xasprintf("%s/%s", dir, LX_LOCK_FILE);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    xfree(path);
    if (fd < 0)
        return false;
    bool held = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd); /* drops our shared lock, if we got it */
    return held;
}

bool lx_has_started(const char *dir)
{
    char *path = xasprintf("%s/%s", dir, LX_STARTED_FILE);
    bool has = access(path, F_OK) == 0;
    xfree(path);
    return has;
}

bool lx_read_line(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, len - 1) : -1;
    if (fd >= 0)
        close(fd);
    buf[n > 0 ? n : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return n > 0;
}
