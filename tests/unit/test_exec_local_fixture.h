/*
 * test_exec_local_fixture: shared setup for the local executor's tests
 * (test_exec_local*.c): a temporary state directory, a local executor on
 * it whose notify writes to a pipe, the exec_probe helper program, and
 * bounded waits (the test blocks on the notify pipe or polls with a
 * timeout, never on fixed sleeps). The executor kills its pods when freed
 * (exec_local_set_stop_on_free), so no test leaves processes behind;
 * fx_reopen() plays a server restart. Header-only.
 */
#ifndef CUEUE_TEST_EXEC_LOCAL_FIXTURE_H
#define CUEUE_TEST_EXEC_LOCAL_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <libgen.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/exec.h"
#include "exec/local-int.h"
#include "util/clock.h"
#include "util/xalloc.h"

#define WAIT_MS 15000

struct fx {
    char dir[64];
    char *probe;
    struct exec *x;
    int pipe[2];
    struct exec_reports seen; /* every report so far (of the current executor) */
};

static inline void fx_on_notify(void *ctx)
{
    struct fx *f = ctx;
    char c = 1;
    if (write(f->pipe[1], &c, 1) < 0) {}
}

/* A local executor on f->dir that kills its pods when freed. */
static inline void fx_open(struct fx *f)
{
    f->x = exec_local_new(f->dir);
    f->x->notify_ctx = f; /* before notify: the watcher already runs */
    f->x->notify = fx_on_notify;
    exec_local_set_restart_backoff(f->x, 20);
    exec_local_set_stop_on_free(f->x, true);
}

/* A server restart: the executor goes, leaving its pods running, and a new
 * one comes up on the same state directory (nothing adopted yet). */
static inline void fx_reopen(struct fx *f)
{
    exec_local_set_stop_on_free(f->x, false);
    f->x->ops->free(f->x);
    exec_reports_release(&f->seen);
    fx_open(f);
}

static inline int setup(void **state)
{
    struct fx *f = xcalloc(1, sizeof(*f));
    snprintf(f->dir, sizeof(f->dir), "/tmp/cueue-exec-XXXXXX");
    if (!mkdtemp(f->dir))
        return -1;
    const char *bin = getenv("CUEUE_BIN");
    char *copy = xstrdup(bin ? bin : "./cueue");
    f->probe = xasprintf("%s/exec_probe", dirname(copy));
    xfree(copy);
    if (access(f->probe, X_OK) != 0) {
        fprintf(stderr, "helper %s missing: build the exec_probe target\n", f->probe);
        return -1;
    }
    if (pipe2(f->pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    fx_open(f);
    *state = f;
    return 0;
}

static inline int teardown(void **state)
{
    struct fx *f = *state;
    f->x->ops->free(f->x);
    exec_reports_release(&f->seen);
    close(f->pipe[0]);
    close(f->pipe[1]);
    char *cmd = xasprintf("rm -rf '%s'", f->dir);
    if (system(cmd) != 0) {}
    xfree(cmd);
    xfree(f->probe);
    xfree(f);
    return 0;
}

/* The latest report for uid in a terminal state (want < 0) or in state
 * want, waiting up to WAIT_MS for it. */
static inline const struct exec_report *wait_report(struct fx *f, const char *uid, int want)
{
    int64_t deadline = clk_now(clk_real()) + WAIT_MS;
    for (;;) {
        f->x->ops->poll(f->x, &f->seen);
        for (size_t i = f->seen.n; i-- > 0;) {
            const struct exec_report *r = &f->seen.items[i];
            if (strcmp(r->uid, uid))
                continue;
            if ((want < 0 && r->state != EXEC_RUNNING) || (int)r->state == want)
                return r;
        }
        int64_t left = deadline - clk_now(clk_real());
        if (left <= 0)
            return NULL;
        struct pollfd p = {f->pipe[0], POLLIN, 0};
        poll(&p, 1, (int)left);
        char buf[64];
        while (read(f->pipe[0], buf, sizeof(buf)) > 0) {}
    }
}

/* Bounded re-checks (every 5 ms, up to WAIT_MS) until check(arg) holds. */
static inline bool wait_for(bool (*check)(const void *arg), const void *arg)
{
    for (int i = 0; i < WAIT_MS / 5; i++) {
        if (check(arg))
            return true;
        struct pollfd none = {-1, 0, 0};
        poll(&none, 0, 5);
    }
    return check(arg);
}

static inline bool file_exists(const void *path) { return access(path, F_OK) == 0; }

/* Wait for a helper's readiness mark. */
static inline bool wait_file(const char *path) { return wait_for(file_exists, path); }

static inline char *read_file(const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return xstrdup("");
    char *buf = xcalloc(1, 65536);
    size_t n = fread(buf, 1, 65535, fp);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

/* A pod with one container running the probe with the given actions. */
static inline json_t *probe_pod(struct fx *f, const char *policy, json_t *args)
{
    return json_pack("{s:{s:s, s:[{s:s, s:[s], s:o}]}}", "spec", "restartPolicy", policy,
                     "containers", "name", "main", "command", f->probe, "args", args);
}

static inline int start(struct fx *f, const char *uid, json_t *pod, const struct exec_env *env,
                        size_t n_env, const struct exec_env *mounts, size_t n_mounts)
{
    struct exec_pod ep = {"default", uid, uid, pod, NULL, env, n_env, mounts, n_mounts, NULL};
    char err[256];
    return f->x->ops->start(f->x, &ep, err, sizeof(err));
}

static inline char *log_of(struct fx *f, const char *uid, const char *ctr)
{
    char *p = exec_log_path(f->dir, uid, ctr);
    char *s = read_file(p);
    xfree(p);
    return s;
}

#endif
