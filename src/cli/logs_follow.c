/*
 * logs_follow: `cueue logs -f job/NAME`. One curl multi handle follows the
 * log stream of every pod of the Job at once; the Job and its pod list are
 * re-read every second so pods that start later (or are recreated) join.
 * Each stream has its own line buffer, so lines from different pods never
 * mix mid-line. The command ends when the Job has finished (Complete or
 * Failed) and every pod's stream has ended, then prints the final line.
 * A pod whose log cannot be read yet (not started) is retried at the next
 * refresh, at most FOLLOW_MAX_TRIES times once it has left Pending.
 */
#include <curl/curl.h>
#include <string.h>

#include "cli/logs-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define FOLLOW_REFRESH_MS 1000
#define FOLLOW_MAX_TRIES 10

struct follow_state;

struct follower {
    char *pod;
    CURL *h;                /* streaming now, or NULL */
    struct cli_lines lines;
    bool done;              /* its stream ended after a 2xx answer */
    bool wrote;             /* some bytes of its log arrived */
    bool pending;           /* phase Pending at the last refresh */
    int tries;
    struct follow_state *fs;
};

struct follow_state {
    struct cli_ctx *c;
    const struct logs_opts *o;
    CURLM *multi;
    struct follower **f;
    size_t n, cap;
    bool prefix;
    int active;
    json_t *pods;           /* the Job's pods at the last refresh */
};

static int on_line(void *st, const char *line, size_t n)
{
    struct follower *f = st;
    FILE *out = f->fs->c->out;
    if (f->fs->prefix)
        fprintf(out, "[%s] ", f->pod);
    fwrite(line, 1, n, out);
    fputc('\n', out);
    fflush(out);
    return 0;
}

static int sink(void *st, const char *data, size_t n)
{
    struct follower *f = st;
    f->wrote |= n > 0;
    return cli__lines_feed(&f->lines, data, n);
}

static struct follower *find_or_add(struct follow_state *fs, const char *pod)
{
    for (size_t i = 0; i < fs->n; i++)
        if (!strcmp(fs->f[i]->pod, pod))
            return fs->f[i];
    XGROW(fs->f, fs->cap, fs->n + 1);
    struct follower *f = xcalloc(1, sizeof(*f));
    f->pod = xstrdup(pod);
    f->fs = fs;
    cli__lines_init(&f->lines, on_line, f);
    fs->f[fs->n++] = f;
    return f;
}

static void start_stream(struct follow_state *fs, struct follower *f, const json_t *pod)
{
    struct sbuf path;
    sbuf_init(&path, 0);
    if (logs__pod_path(fs->c, fs->o, pod, true, &path) != 0) {
        f->done = true; /* a name the server cannot have made: nothing to read */
        sbuf_release(&path);
        return;
    }
    f->h = cli__stream_handle(fs->c, path.buf, sink, f);
    sbuf_release(&path);
    if (f->h) {
        curl_multi_add_handle(fs->multi, f->h);
        fs->active++;
        f->tries++;
    }
}

/* Re-read the Job and its pods; start streams for pods that can be read.
 * Returns 0, or 1 when the Job is gone or cannot be read. */
static int refresh(struct follow_state *fs, json_t **job, bool *warned)
{
    struct cli_ctx *c = fs->c;
    json_t *fresh = NULL, *pods = NULL;
    char name[256];
    snprintf(name, sizeof(name), "%s", jx_or_empty(JX_STR(*job, "metadata", "name")));
    if (cli__get_object(c, api_kind_get(KIND_JOB), c->ns, name, false, &fresh) != 0)
        return 1;
    json_decref(*job);
    *job = fresh;
    if (logs__job_pods(c, *job, &pods) != 0)
        return 1;
    int64_t width = JX_INT(*job, 1, "spec", "parallelism");
    fs->prefix = fs->o->prefix && (json_array_size(pods) > 1 || width > 1 ||
                                   JX_INT(*job, 1, "spec", "completions") > 1);
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod) {
        struct follower *f = find_or_add(fs, jx_or_empty(JX_STR(pod, "metadata", "name")));
        f->pending = !strcmp(jx_or_empty(JX_STR(pod, "status", "phase")), "Pending");
        if (!f->h && !f->done && !f->pending && f->tries < FOLLOW_MAX_TRIES)
            start_stream(fs, f, pod);
    }
    if (json_array_size(pods) == 0 && !*warned && JX_BOOL(*job, false, "spec", "suspend")) {
        fprintf(c->err, "job/%s is suspended (waiting for admission); waiting for its pods...\n",
                name);
        *warned = true;
    }
    json_decref(fs->pods);
    fs->pods = pods;
    return 0;
}

/* Collect finished transfers. */
static void reap(struct follow_state *fs)
{
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read(fs->multi, &left)) != NULL) {
        if (m->msg != CURLMSG_DONE)
            continue;
        struct follower *f = NULL;
        for (size_t i = 0; i < fs->n && !f; i++)
            if (fs->f[i]->h == m->easy_handle)
                f = fs->f[i];
        long code = 0;
        curl_easy_getinfo(m->easy_handle, CURLINFO_RESPONSE_CODE, &code);
        curl_multi_remove_handle(fs->multi, m->easy_handle);
        cli__stream_handle_free(m->easy_handle);
        fs->active--;
        if (!f)
            continue;
        f->h = NULL;
        if (code >= 200 && code < 300) {
            f->done = true;
            cli__lines_finish(&f->lines);
            cli__lines_init(&f->lines, on_line, f);
        } else if (f->tries >= FOLLOW_MAX_TRIES) {
            fprintf(fs->c->err, "error: cannot read the log of pod/%s (HTTP %ld)\n", f->pod,
                    code);
            f->done = true;
        }
    }
}

static bool all_ended(const struct follow_state *fs)
{
    if (fs->active)
        return false;
    for (size_t i = 0; i < fs->n; i++)
        if (!fs->f[i]->done && !fs->f[i]->pending && fs->f[i]->tries < FOLLOW_MAX_TRIES)
            return false;
    return true;
}

/* The final line, after why the quiet pods failed (a failed Job). */
static void print_final(struct follow_state *fs, const json_t *job, const char *final)
{
    size_t n = json_array_size(fs->pods);
    bool *quiet = xcalloc(n ? n : 1, sizeof(*quiet));
    for (size_t i = 0; i < n; i++) {
        const char *pod = jx_or_empty(JX_STR(json_array_get(fs->pods, i), "metadata", "name"));
        quiet[i] = true;
        for (size_t j = 0; j < fs->n; j++)
            if (!strcmp(fs->f[j]->pod, pod))
                quiet[i] = !fs->f[j]->wrote;
    }
    logs__print_final(fs->c, job, fs->pods, quiet, final);
    xfree(quiet);
}

int logs__follow_job(struct cli_ctx *c, const struct logs_opts *o, const json_t *job0)
{
    struct follow_state fs = {c, o, curl_multi_init(), NULL, 0, 0, false, 0, NULL};
    json_t *job = json_incref((json_t *)job0);
    bool warned = false;
    int rc = 0;
    int64_t next_refresh = 0;
    char *final = NULL;
    for (;;) {
        if (cli__now_ms() >= next_refresh) {
            if (refresh(&fs, &job, &warned) != 0) {
                rc = 1;
                break;
            }
            xfree(final);
            final = cli__job_final_line(job);
            next_refresh = cli__now_ms() + FOLLOW_REFRESH_MS;
        }
        int running = 0;
        curl_multi_perform(fs.multi, &running);
        reap(&fs);
        if (final && all_ended(&fs))
            break;
        curl_multi_poll(fs.multi, NULL, 0, 200, NULL);
    }
    if (rc == 0 && final)
        print_final(&fs, job, final);
    for (size_t i = 0; i < fs.n; i++) {
        if (fs.f[i]->h) {
            curl_multi_remove_handle(fs.multi, fs.f[i]->h);
            cli__stream_handle_free(fs.f[i]->h);
        }
        cli__lines_finish(&fs.f[i]->lines);
        xfree(fs.f[i]->pod);
        xfree(fs.f[i]);
    }
    xfree(fs.f);
    xfree(final);
    json_decref(fs.pods);
    curl_multi_cleanup(fs.multi);
    json_decref(job);
    return rc;
}
