/*
 * exec_bench: the local executor alone (src/exec/local*.c), without the
 * control plane: how fast it starts pods and how many it runs per second
 * (a benchmark, not a test; run by bench/run.sh). What `cueue server`
 * cannot beat however cheap its control plane becomes.
 *
 *   exec_bench [LATENCY_PODS [THROUGHPUT_PODS]]     (100, 1000)
 *
 * latency: LATENCY_PODS pods (`sh -c 'exec sleep 1'`) started one after
 * another, each once the previous one reported EXEC_RUNNING: start() ->
 * the EXEC_RUNNING report, median and p99 (nearest rank), in ms; 5 warm-up
 * pods first, not counted.
 * throughput: THROUGHPUT_PODS pods (`sh -c true`) started at once, first
 * start() to the last terminal report; pods/s, and the CPU each pod cost
 * this process (the executor: its watcher thread and start()) and its
 * children (the fork server, the supervisors and the containers; counted
 * once they are reaped, i.e. after the executor is freed).
 * Pods live under $TMPDIR (default /tmp). Prints one line of key=value.
 * Exit status 1 when a pod fails or a wait times out (30 s).
 */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench_stats.h"
#include "exec/exec.h"
#include "util/xalloc.h"

#define WARMUP 5
#define WAIT_MS 30000.0

static int notify_pipe[2];

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double cpu_ms(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static void on_notify(void *ctx)
{
    (void)ctx;
    char c = 1;
    if (write(notify_pipe[1], &c, 1) < 0) {}
}

/* Block until the executor says it has reports (or up to ms). */
static void wait_notify(double ms)
{
    struct pollfd p = {notify_pipe[0], POLLIN, 0};
    poll(&p, 1, ms > 0 ? (int)ms : 0);
    char buf[256];
    while (read(notify_pipe[0], buf, sizeof(buf)) > 0) {}
}

static struct exec *open_exec(const char *dir)
{
    struct exec *x = exec_local_new(dir);
    if (!x)
        exit(1);
    x->notify = on_notify;
    exec_local_set_stop_on_free(x, true);
    return x;
}

static int start_pod(struct exec *x, const char *uid, const char *script)
{
    json_t *pod = json_pack("{s:{s:s, s:[{s:s, s:[s,s,s]}]}}", "spec", "restartPolicy", "Never",
                            "containers", "name", "c", "command", "/bin/sh", "-c", script);
    struct exec_pod ep = {.ns = "default", .name = uid, .uid = uid, .pod = pod};
    char err[256];
    int rc = x->ops->start(x, &ep, err, sizeof(err));
    if (rc)
        fprintf(stderr, "exec_bench: start %s: %s\n", uid, err);
    json_decref(pod);
    return rc;
}

/* start -> EXEC_RUNNING of n pods, one at a time. */
static int run_latency(const char *dir, int n)
{
    struct exec *x = open_exec(dir);
    struct exec_reports got = {0};
    double *ms = xcalloc((size_t)n, sizeof(double));
    int rc = 0;
    for (int i = 0; i < n + WARMUP && !rc; i++) {
        char uid[32];
        snprintf(uid, sizeof(uid), "lat-%05d", i);
        double t0 = now_ms();
        rc = start_pod(x, uid, "exec sleep 1");
        bool running = false;
        while (!rc && !running) {
            double left = t0 + WAIT_MS - now_ms();
            if (left <= 0) {
                fprintf(stderr, "exec_bench: %s not running after %.0f s\n", uid, WAIT_MS / 1e3);
                rc = 1;
                break;
            }
            size_t from = got.n;
            x->ops->poll(x, &got);
            for (size_t k = from; k < got.n; k++) {
                if (strcmp(got.items[k].uid, uid))
                    continue;
                if (got.items[k].state != EXEC_RUNNING) {
                    fprintf(stderr, "exec_bench: %s failed: %s\n", uid, got.items[k].message);
                    rc = 1;
                }
                running = true;
            }
            if (!running && !rc)
                wait_notify(left);
        }
        if (i >= WARMUP)
            ms[i - WARMUP] = now_ms() - t0;
    }
    x->ops->free(x);
    exec_reports_release(&got);
    if (!rc) {
        bench_sort(ms, n);
        printf("pods=%d running_p50_ms=%.2f running_p99_ms=%.2f ", n, bench_pct(ms, n, 50),
               bench_pct(ms, n, 99));
    }
    xfree(ms);
    return rc;
}

/* n pods `true` at once: pods/s and CPU per pod. */
static int run_throughput(const char *dir, int n)
{
    double self0 = cpu_ms(RUSAGE_SELF), kids0 = cpu_ms(RUSAGE_CHILDREN);
    struct exec *x = open_exec(dir);
    struct exec_reports got = {0};
    double t0 = now_ms();
    int rc = 0, done = 0, failed = 0;
    for (int i = 0; i < n && !rc; i++) {
        char uid[32];
        snprintf(uid, sizeof(uid), "tput-%05d", i);
        rc = start_pod(x, uid, "true");
    }
    while (!rc && done < n) {
        double left = t0 + WAIT_MS - now_ms();
        if (left <= 0) {
            fprintf(stderr, "exec_bench: %d of %d pods over after %.0f s\n", done, n, WAIT_MS / 1e3);
            rc = 1;
            break;
        }
        size_t from = got.n;
        x->ops->poll(x, &got);
        for (size_t k = from; k < got.n; k++) {
            done += got.items[k].state != EXEC_RUNNING;
            failed += got.items[k].state == EXEC_FAILED;
        }
        if (done < n)
            wait_notify(left);
    }
    double secs = (now_ms() - t0) / 1e3;
    x->ops->free(x); /* reaps the fork server, so its children's CPU counts */
    exec_reports_release(&got);
    if (failed) {
        fprintf(stderr, "exec_bench: %d of %d pods failed\n", failed, n);
        rc = 1;
    }
    if (!rc)
        printf("pods=%d seconds=%.3f pods_per_s=%.1f executor_cpu_ms=%.3f pods_cpu_ms=%.3f", n,
               secs, n / secs, (cpu_ms(RUSAGE_SELF) - self0) / n,
               (cpu_ms(RUSAGE_CHILDREN) - kids0) / n);
    return rc;
}

int main(int argc, char **argv)
{
    long n_lat = argc > 1 ? bench_count_arg(argv[1]) : 100, n_tput = argc > 2 ? bench_count_arg(argv[2]) : 1000;
    if (n_lat < 1 || n_tput < 1 || n_lat > 100000 || n_tput > 100000) {
        fprintf(stderr, "usage: exec_bench [LATENCY_PODS [THROUGHPUT_PODS]] (1..100000 each)\n");
        return 2;
    }
    const char *tmpdir = getenv("TMPDIR");
    char *dir = xasprintf("%s/cueue-exec-bench-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(dir) || pipe2(notify_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        perror("exec_bench");
        return 1;
    }
    int rc = run_latency(dir, (int)n_lat);
    if (!rc)
        rc = run_throughput(dir, (int)n_tput);
    printf("\n");
    char *rm = xasprintf("rm -rf '%s'", dir);
    if (system(rm) != 0) {}
    xfree(rm);
    xfree(dir);
    return rc;
}
