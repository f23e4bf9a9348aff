/*
 * latency: end-to-end admission latency and throughput of a running
 * `cueue server`, measured from the client (a benchmark, not a test; run by
 * bench/run.sh).
 *
 *   latency URL latency N QUEUE|-      sequential 1-pod Jobs (`sleep 0.3`)
 *   latency URL throughput N QUEUE|- [SUBMITTERS]
 *                                      N 1-pod Jobs (`true`) at once
 *
 * QUEUE is the LocalQueue the Jobs name in kueue.x-k8s.io/queue-name, or "-"
 * for Jobs without the label (no Workload, no admission: the baseline).
 * Jobs are batch/v1, namespace default, one container requesting 10m CPU and
 * 16Mi, named "<mode>-<index>".
 *
 * Three watch streams (?watch=1 from the resourceVersion of a list taken
 * before the first submit, so nothing is missed) record, per Job, when the
 * client first saw its Workload Admitted=True, its pod Running (or already
 * Succeeded), and the Job Complete=True. Times are CLOCK_MONOTONIC on this
 * side: submit = just before the POST.
 *
 * latency: each Job is submitted once the previous one's pod ran (5 warm-up
 * Jobs first, not counted). Prints one line of key=value: median and p99
 * (nearest rank) of submit->Admitted and submit->running, in ms.
 * throughput: SUBMITTERS threads (default 4) POST all N Jobs; prints the
 * seconds from the first submit to the N-th Complete and jobs/s.
 * Exit status 1 when a Job is refused or the run times out.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

#define WARMUP 5
#define STEP_TIMEOUT_MS 30000.0
#define RUN_TIMEOUT_MS 300000.0 /* LATENCY_RUN_TIMEOUT_S overrides */

struct job_times {
    double submit_ms, admitted_ms, running_ms, complete_ms; /* 0 = not yet */
};

/* Shared between the submitters, the watch threads and main. */
static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const char *url;
    const char *queue; /* NULL = no queue label */
    const char *prefix;
    const char *command;
    int n;              /* jobs, warm-up included */
    struct job_times *t;
    int n_complete, n_failed;
    double last_complete_ms;
    bool stop;
    int refused;
} B = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The index of a Job named "<prefix>-<index>", or -1. */
static int job_index(const char *name)
{
    size_t pl = strlen(B.prefix);
    if (!name || strncmp(name, B.prefix, pl) || name[pl] != '-')
        return -1;
    char *end;
    long i = strtol(name + pl + 1, &end, 10);
    return (*end || i < 0 || i >= B.n) ? -1 : (int)i;
}

static bool cond_true(const json_t *obj, const char *type)
{
    size_t i;
    json_t *c;
    json_array_foreach(JX_GET(obj, "status", "conditions"), i, c) {
        if (!strcmp(jx_or_empty(JX_STR(c, "type")), type))
            return !strcmp(jx_or_empty(JX_STR(c, "status")), "True");
    }
    return false;
}

/* Record what one watch event shows. Called with B.mu held. */
static void on_object(const char *kind, const json_t *obj, double t)
{
    if (!strcmp(kind, "workloads")) {
        int i = job_index(JX_STR(json_array_get(JX_GET(obj, "metadata", "ownerReferences"), 0), "name"));
        if (i >= 0 && !B.t[i].admitted_ms && cond_true(obj, "Admitted"))
            B.t[i].admitted_ms = t;
    } else if (!strcmp(kind, "pods")) {
        int i = job_index(JX_STR(obj, "metadata", "labels", "batch.kubernetes.io/job-name"));
        const char *phase = jx_or_empty(JX_STR(obj, "status", "phase"));
        if (i >= 0 && !B.t[i].running_ms && (!strcmp(phase, "Running") || !strcmp(phase, "Succeeded")))
            B.t[i].running_ms = t;
    } else {
        int i = job_index(JX_STR(obj, "metadata", "name"));
        if (i >= 0 && !B.t[i].complete_ms && cond_true(obj, "Complete")) {
            B.t[i].complete_ms = t;
            B.n_complete++;
            B.last_complete_ms = t;
        } else if (i >= 0 && !B.t[i].complete_ms && cond_true(obj, "Failed")) {
            B.t[i].complete_ms = t;
            B.n_failed++;
        }
    }
}

struct watch {
    const char *kind; /* "workloads", "pods" or "jobs" */
    char *url;
    struct sbuf buf;
    pthread_t thread;
};

static size_t watch_write(char *p, size_t size, size_t nmemb, void *arg)
{
    struct watch *w = arg;
    double t = now_ms();
    if (sbuf_add(&w->buf, p, size * nmemb))
        return 0;
    char *line = w->buf.buf, *nl;
    pthread_mutex_lock(&B.mu);
    while ((nl = memchr(line, '\n', w->buf.len - (size_t)(line - w->buf.buf)))) {
        json_t *ev = json_loadb(line, (size_t)(nl - line), 0, NULL);
        if (ev && JX_GET(ev, "object"))
            on_object(w->kind, JX_GET(ev, "object"), t);
        json_decref(ev);
        line = nl + 1;
    }
    pthread_cond_broadcast(&B.cv);
    pthread_mutex_unlock(&B.mu);
    size_t rest = w->buf.len - (size_t)(line - w->buf.buf);
    memmove(w->buf.buf, line, rest);
    w->buf.len = rest;
    w->buf.buf[rest] = '\0';
    return size * nmemb;
}

/* curl calls this about once a second even when idle: ends the stream. */
static int watch_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
    (void)arg; (void)a; (void)b; (void)c; (void)d;
    pthread_mutex_lock(&B.mu);
    bool stop = B.stop;
    pthread_mutex_unlock(&B.mu);
    return stop;
}

static void *watch_main(void *arg)
{
    struct watch *w = arg;
    CURL *h = curl_easy_init();
    curl_easy_setopt(h, CURLOPT_URL, w->url);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, watch_write);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, w);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, watch_progress);
    CURLcode rc = curl_easy_perform(h);
    pthread_mutex_lock(&B.mu);
    if (!B.stop)
        fprintf(stderr, "latency: watch of %s ended: %s\n", w->kind, curl_easy_strerror(rc));
    pthread_mutex_unlock(&B.mu);
    curl_easy_cleanup(h);
    return NULL;
}

static size_t sink(char *p, size_t size, size_t nmemb, void *arg)
{
    struct sbuf *sb = arg;
    if (sbuf_add(sb, p, size * nmemb))
        return 0;
    return size * nmemb;
}

/* GET a path; returns the parsed body (new ref) or NULL. */
static json_t *get_json(CURL *h, const char *path)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    char *url = xasprintf("%s%s", B.url, path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sb);
    json_t *j = curl_easy_perform(h) == CURLE_OK ? json_loads(sb.buf, 0, NULL) : NULL;
    xfree(url);
    sbuf_release(&sb);
    return j;
}

static char *job_body(int i)
{
    json_t *labels = json_object();
    if (B.queue)
        json_object_set_new(labels, "kueue.x-k8s.io/queue-name", json_string(B.queue));
    char name[64];
    snprintf(name, sizeof(name), "%s-%05d", B.prefix, i);
    json_t *job = json_pack(
        "{s:s, s:s, s:{s:s, s:o}, s:{s:i, s:{s:{s:s, s:[{s:s, s:s, s:[s,s,s], s:{s:{s:s, s:s}}}]}}}}",
        "apiVersion", "batch/v1", "kind", "Job",
        "metadata", "name", name, "labels", labels,
        "spec", "backoffLimit", 0, "template", "spec", "restartPolicy", "Never",
        "containers", "name", "c", "image", "busybox", "command", "sh", "-c", B.command,
        "resources", "requests", "cpu", "10m", "memory", "16Mi");
    char *s = json_dumps(job, JSON_COMPACT);
    json_decref(job);
    return s;
}

/* POST Job i; records its submit time. Returns 0, or -1 when refused. */
static int submit(CURL *h, struct curl_slist *hdr, int i)
{
    char *body = job_body(i);
    char *url = xasprintf("%s/apis/batch/v1/namespaces/default/jobs", B.url);
    struct sbuf sb;
    sbuf_init(&sb, 0);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sb);
    pthread_mutex_lock(&B.mu);
    B.t[i].submit_ms = now_ms();
    pthread_mutex_unlock(&B.mu);
    long code = 0;
    if (curl_easy_perform(h) == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (code != 201) {
        fprintf(stderr, "latency: POST %s-%05d: HTTP %ld %s\n", B.prefix, i, code, sb.buf);
        pthread_mutex_lock(&B.mu);
        B.refused++;
        pthread_mutex_unlock(&B.mu);
    }
    sbuf_release(&sb);
    xfree(url);
    xfree(body);
    return code == 201 ? 0 : -1;
}

/* Watch kinds [first, first + n) of workloads, pods, jobs into w[0..n). */
static void start_watches(struct watch *w, int first, int n)
{
    CURL *h = curl_easy_init();
    json_t *list = get_json(h, "/apis/batch/v1/jobs?limit=1");
    const char *rv = JX_STR(list, "metadata", "resourceVersion");
    if (!rv) {
        fprintf(stderr, "latency: no resourceVersion from %s\n", B.url);
        exit(1);
    }
    static const char *const paths[] = {"/apis/kueue.x-k8s.io/v1beta1/workloads", "/api/v1/pods",
                                        "/apis/batch/v1/jobs"};
    static const char *const kinds[] = {"workloads", "pods", "jobs"};
    for (int k = 0; k < n; k++) {
        w[k].kind = kinds[first + k];
        w[k].url = xasprintf("%s%s?watch=1&resourceVersion=%s", B.url, paths[first + k], rv);
        sbuf_init(&w[k].buf, 0);
        pthread_create(&w[k].thread, NULL, watch_main, &w[k]);
    }
    json_decref(list);
    curl_easy_cleanup(h);
}

static void stop_watches(struct watch *w, int n)
{
    pthread_mutex_lock(&B.mu);
    B.stop = true;
    pthread_mutex_unlock(&B.mu);
    for (int k = 0; k < n; k++) {
        pthread_join(w[k].thread, NULL);
        sbuf_release(&w[k].buf);
        xfree(w[k].url);
    }
}

/* Wait on B.cv (B.mu held) for at most ms milliseconds. */
static void timed_wait(double ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long ns = ts.tv_nsec + (long)(fmod(ms, 1000.0) * 1e6);
    ts.tv_sec += (time_t)(ms / 1000.0) + ns / 1000000000L;
    ts.tv_nsec = ns % 1000000000L;
    pthread_cond_timedwait(&B.cv, &B.mu, &ts);
}

/* The whole run's limit: RUN_TIMEOUT_MS, or LATENCY_RUN_TIMEOUT_S seconds
 * (isolated pods start slower). */
static double run_timeout_ms(void)
{
    const char *v = getenv("LATENCY_RUN_TIMEOUT_S");
    double s = v ? strtod(v, NULL) : 0;
    return s > 0 ? s * 1000.0 : RUN_TIMEOUT_MS;
}

/* Wait (B.mu held) until job i has what the mode needs; false on timeout. */
static bool wait_job(int i, double deadline_ms)
{
    while (!B.t[i].running_ms || (B.queue && !B.t[i].admitted_ms)) {
        double left = deadline_ms - now_ms();
        if (left <= 0)
            return false;
        timed_wait(left);
    }
    return true;
}

static void print_dist(const char *key, double *v, int n)
{
    bench_sort(v, n);
    printf("%s_p50_ms=%.2f %s_p99_ms=%.2f ", key, bench_pct(v, n, 50), key, bench_pct(v, n, 99));
}

static int run_latency(int n)
{
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        if (submit(h, hdr, i))
            rc = 1;
        pthread_mutex_lock(&B.mu);
        if (!rc && !wait_job(i, now_ms() + STEP_TIMEOUT_MS)) {
            fprintf(stderr, "latency: job %d not %s within %.0f s\n", i,
                    B.t[i].running_ms ? "admitted" : "running", STEP_TIMEOUT_MS / 1e3);
            rc = 1;
        }
        pthread_mutex_unlock(&B.mu);
    }
    if (!rc) {
        int m = n - WARMUP;
        double *adm = xcalloc((size_t)m, sizeof(double)), *run = xcalloc((size_t)m, sizeof(double));
        pthread_mutex_lock(&B.mu);
        for (int i = 0; i < m; i++) {
            const struct job_times *t = &B.t[WARMUP + i];
            adm[i] = t->admitted_ms - t->submit_ms;
            run[i] = t->running_ms - t->submit_ms;
        }
        pthread_mutex_unlock(&B.mu);
        printf("jobs=%d ", m);
        if (B.queue)
            print_dist("admitted", adm, m);
        print_dist("running", run, m);
        printf("\n");
        xfree(adm);
        xfree(run);
    }
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return rc;
}

struct submitter {
    int first, step, n;
    pthread_t thread;
};

static void *submitter_main(void *arg)
{
    struct submitter *s = arg;
    CURL *h = curl_easy_init();
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    for (int i = s->first; i < s->n; i += s->step)
        submit(h, hdr, i);
    curl_slist_free_all(hdr);
    curl_easy_cleanup(h);
    return NULL;
}

static int run_throughput(int n, int threads)
{
    struct submitter *s = xcalloc((size_t)threads, sizeof(*s));
    double t0 = now_ms();
    for (int k = 0; k < threads; k++) {
        s[k] = (struct submitter){.first = k, .step = threads, .n = n};
        pthread_create(&s[k].thread, NULL, submitter_main, &s[k]);
    }
    for (int k = 0; k < threads; k++)
        pthread_join(s[k].thread, NULL);
    double submitted = now_ms();
    xfree(s);
    pthread_mutex_lock(&B.mu);
    int rc = B.refused ? 1 : 0;
    while (!rc && B.n_complete < n) {
        if (B.n_failed || now_ms() - t0 > run_timeout_ms()) {
            fprintf(stderr, "latency: %d of %d jobs complete, %d failed, after %.0f s\n", B.n_complete, n,
                    B.n_failed, (now_ms() - t0) / 1e3);
            rc = 1;
        } else {
            timed_wait(1000);
        }
    }
    double secs = (B.last_complete_ms - t0) / 1e3;
    pthread_mutex_unlock(&B.mu);
    if (!rc)
        printf("jobs=%d submit_s=%.3f seconds=%.3f jobs_per_s=%.1f\n", n, (submitted - t0) / 1e3, secs,
               n / secs);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 5 || (strcmp(argv[2], "latency") && strcmp(argv[2], "throughput"))) {
        fprintf(stderr, "usage: latency URL latency|throughput N QUEUE|- [SUBMITTERS]\n");
        return 2;
    }
    bool lat = !strcmp(argv[2], "latency");
    long n_arg = bench_count_arg(argv[3]), subs = argc > 5 ? bench_count_arg(argv[5]) : 4;
    int n = n_arg > 0 && n_arg <= 1000000 ? (int)n_arg : 0;
    if (n < 1 || n > 1000000 || subs < 1 || subs > 64) {
        fprintf(stderr, "latency: N must be 1..1000000 and SUBMITTERS 1..64\n");
        return 2;
    }
    B.url = argv[1];
    B.queue = strcmp(argv[4], "-") ? argv[4] : NULL;
    B.prefix = lat ? "lat" : "tput";
    B.command = lat ? "sleep 0.3" : "true";
    B.n = lat ? n + WARMUP : n;
    B.t = xcalloc((size_t)B.n, sizeof(*B.t));
    curl_global_init(CURL_GLOBAL_DEFAULT);
    struct watch w[2];
    memset(w, 0, sizeof(w));
    /* latency: workloads and pods; throughput: jobs only (the fewest events
     * the server must send while it is measured) */
    int nw = lat ? 2 : 1;
    start_watches(w, lat ? 0 : 2, nw);
    int rc = lat ? run_latency(B.n) : run_throughput(n, (int)subs);
    stop_watches(w, nw);
    xfree(B.t);
    curl_global_cleanup();
    return rc;
}
