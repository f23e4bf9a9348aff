/*
 * logs_pods: what `cueue logs` needs of a Job and its pods, shared by the
 * one-shot path (cmd_logs.c) and the follower (logs_follow.c): the pods in
 * completion-index order, a pod's log path, and the Job's final line
 * ("Job 'NAME' succeeded" / "Job 'NAME' failed: REASON").
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "cli/logs-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static int64_t completion_index(const json_t *pod)
{
    const char *key = "batch.kubernetes.io/job-completion-index";
    const char *v = JX_STR(pod, "metadata", "annotations", key);
    if (!v)
        v = JX_STR(pod, "metadata", "labels", key);
    char *end;
    long long i = v ? strtoll(v, &end, 10) : -1;
    return v && *v && !*end && i >= 0 ? (int64_t)i : INT64_MAX;
}

int cli__pod_index_cmp(const void *a, const void *b)
{
    const json_t *pa = *(const json_t *const *)a, *pb = *(const json_t *const *)b;
    int64_t ia = completion_index(pa), ib = completion_index(pb);
    if (ia != ib)
        return ia < ib ? -1 : 1;
    int c = strcmp(jx_or_empty(JX_STR(pa, "metadata", "creationTimestamp")),
                   jx_or_empty(JX_STR(pb, "metadata", "creationTimestamp")));
    if (c)
        return c;
    return strcmp(jx_or_empty(JX_STR(pa, "metadata", "name")),
                  jx_or_empty(JX_STR(pb, "metadata", "name")));
}

bool cli__job_failed(const json_t *job)
{
    size_t i;
    json_t *cond;
    json_array_foreach(JX_GET(job, "status", "conditions"), i, cond) {
        if (!strcmp(jx_or_empty(JX_STR(cond, "type")), "Failed") &&
            !strcmp(jx_or_empty(JX_STR(cond, "status")), "True"))
            return true;
    }
    return false;
}

char *cli__job_final_line(const json_t *job)
{
    size_t i;
    json_t *cond;
    const char *name = jx_or_empty(JX_STR(job, "metadata", "name"));
    json_array_foreach(JX_GET(job, "status", "conditions"), i, cond) {
        if (strcmp(jx_or_empty(JX_STR(cond, "status")), "True"))
            continue;
        const char *type = jx_or_empty(JX_STR(cond, "type"));
        if (!strcmp(type, "Complete"))
            return xasprintf("Job '%s' succeeded", name);
        if (!strcmp(type, "Failed")) {
            const char *reason = JX_STR(cond, "reason"), *msg = JX_STR(cond, "message");
            return xasprintf("Job '%s' failed: %s%s%s", name, reason ? reason : "Failed",
                             msg && *msg ? ": " : "", msg && *msg ? msg : "");
        }
    }
    return NULL;
}

int logs__pod_path(struct cli_ctx *c, const struct logs_opts *o, const json_t *pod,
                   bool follow, struct sbuf *path)
{
    const struct api_kind *k = api_kind_get(KIND_POD);
    const char *ns = JX_STR(pod, "metadata", "namespace");
    if (cli__path(c, path, k, ns ? ns : c->ns, jx_or_empty(JX_STR(pod, "metadata", "name")),
                  "log") != 0)
        return 1;
    const char *container = o->container;
    if (!container)
        container = JX_STR(pod, "metadata", "annotations", "kubectl.kubernetes.io/default-container");
    if (!container)
        container = JX_STR(json_array_get(JX_GET(pod, "spec", "containers"), 0), "name");
    if (container)
        cli__query(path, "container", container);
    if (follow)
        cli__query(path, "follow", "true");
    if (o->tail)
        cli__query(path, "tailLines", o->tail);
    if (o->timestamps)
        cli__query(path, "timestamps", "true");
    return 0;
}

void logs__print_final(struct cli_ctx *c, const json_t *job, const json_t *pods,
                       const bool *quiet, const char *final)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    if (cli__job_failed(job))
        cli__pod_failure_lines(pods, quiet, &sb);
    fwrite(sb.buf, 1, sb.len, c->out);
    fprintf(c->out, "%s\n", final);
    fflush(c->out);
    sbuf_release(&sb);
}

int logs__job_pods(struct cli_ctx *c, const json_t *job, json_t **pods)
{
    struct sbuf sel;
    const char *key;
    json_t *v;
    sbuf_init(&sel, 0);
    json_object_foreach(JX_GET(job, "spec", "selector", "matchLabels"), key, v)
        sbuf_addf(&sel, "%s%s=%s", sel.len ? "," : "", key, jx_or_empty(json_string_value(v)));
    if (!sel.len)
        sbuf_addf(&sel, "batch.kubernetes.io/controller-uid=%s",
                  jx_or_empty(JX_STR(job, "metadata", "uid")));
    int rc = cli__list_kind(c, api_kind_get(KIND_POD),
                            jx_or_empty(JX_STR(job, "metadata", "namespace")), sel.buf, NULL, pods,
                            NULL, 0);
    if (rc == 0) {
        /* sort a plain C array of the items, then rebuild the JSON array */
        size_t n = json_array_size(*pods);
        json_t **arr = xcalloc(n ? n : 1, sizeof(*arr));
        for (size_t i = 0; i < n; i++)
            arr[i] = json_incref(json_array_get(*pods, i));
        qsort(arr, n, sizeof(*arr), cli__pod_index_cmp);
        json_array_clear(*pods);
        for (size_t i = 0; i < n; i++)
            json_array_append_new(*pods, arr[i]);
        xfree(arr);
    }
    sbuf_release(&sel);
    return rc;
}
