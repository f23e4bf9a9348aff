/*
 * describe_jobs: describe sections for batch/v1 Job, ray.io/v1 RayJob,
 * jobset.x-k8s.io/v1alpha2 JobSet and Pod. Jobs list their pods (the same
 * selection as `logs job/NAME`; for a RayJob the label
 * ray.io/originated-from-cr-name, for a JobSet jobset.sigs.k8s.io/jobset-name)
 * with phase and node,
 * and the per-worker metrics of cueue.dev/metrics.
 */
#include <string.h>

#include "cli/describe-int.h"
#include "cli/logs-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define QUEUE_LABEL "kueue.x-k8s.io/queue-name"

void desc__pods_table(struct cli_ctx *c, const char *title, const json_t *pods)
{
    struct cli_table t;
    size_t i;
    json_t *p;
    if (!json_array_size(pods)) {
        cli__desc_kv(c, 0, title, "<none>");
        return;
    }
    cli__table_init(&t, 5);
    cli__table_rowv(&t, "Name", "Index", "Phase", "Node", "Age");
    json_array_foreach(pods, i, p) {
        char age[32];
        const char *idx = JX_STR(p, "metadata", "annotations",
                                 "batch.kubernetes.io/job-completion-index");
        cli__table_rowv(&t, JX_STR(p, "metadata", "name"), idx ? idx : "-",
                        JX_STR(p, "status", "phase"),
                        desc__or_none(JX_STR(p, "spec", "nodeName")),
                        cli__age(JX_STR(p, "metadata", "creationTimestamp"), age));
    }
    cli__desc_table(c, 0, title, &t);
}

void desc__metrics(struct cli_ctx *c, const json_t *obj)
{
    struct cli_table t;
    if (cli__metrics_table(obj, &t) != 0)
        return;
    cli__desc_table(c, 0, "Worker Metrics", &t);
}

void desc__job(struct cli_ctx *c, const struct api_kind *k, const json_t *job)
{
    (void)k;
    char *par = desc__scalar(JX_GET(job, "spec", "parallelism"));
    char *comp = desc__scalar(JX_GET(job, "spec", "completions"));
    cli__desc_kv(c, 0, "Queue", "%s", desc__or_none(JX_STR(job, "metadata", "labels", QUEUE_LABEL)));
    cli__desc_kv(c, 0, "Parallelism", "%s", par);
    cli__desc_kv(c, 0, "Completions", "%s", comp);
    cli__desc_kv(c, 0, "Completion Mode", "%s",
                 JX_STR(job, "spec", "completionMode") ? JX_STR(job, "spec", "completionMode")
                                                       : "NonIndexed");
    cli__desc_kv(c, 0, "Suspend", "%s",
                 JX_BOOL(job, false, "spec", "suspend") ? "true (waiting for admission)"
                                                        : "false");
    if (JX_STR(job, "status", "startTime"))
        cli__desc_kv(c, 0, "Start Time", "%s", JX_STR(job, "status", "startTime"));
    if (JX_STR(job, "status", "completionTime"))
        cli__desc_kv(c, 0, "Completed At", "%s", JX_STR(job, "status", "completionTime"));
    cli__desc_kv(c, 0, "Pods Statuses", "%lld Active (%lld Ready) / %lld Succeeded / %lld Failed",
                 (long long)JX_INT(job, 0, "status", "active"),
                 (long long)JX_INT(job, 0, "status", "ready"),
                 (long long)JX_INT(job, 0, "status", "succeeded"),
                 (long long)JX_INT(job, 0, "status", "failed"));
    xfree(par);
    xfree(comp);
    json_t *pods = NULL;
    if (logs__job_pods(c, job, &pods) == 0)
        desc__pods_table(c, "Pods", pods);
    json_decref(pods);
    desc__metrics(c, job);
}

static void worker_groups(struct cli_ctx *c, const json_t *rj)
{
    struct cli_table t;
    size_t i;
    json_t *g;
    cli__table_init(&t, 6);
    cli__table_rowv(&t, "Group", "Replicas", "Min", "Max", "Hosts", "Requests (per pod)");
    json_array_foreach(JX_GET(rj, "spec", "rayClusterSpec", "workerGroupSpecs"), i, g) {
        char *cells[4] = {desc__scalar(JX_GET(g, "replicas")), desc__scalar(JX_GET(g, "minReplicas")),
                          desc__scalar(JX_GET(g, "maxReplicas")),
                          desc__scalar(JX_GET(g, "numOfHosts"))};
        json_t *ct = json_array_get(JX_GET(g, "template", "spec", "containers"), 0);
        char *req = desc__map_text(JX_GET(ct, "resources", "requests"));
        cli__table_rowv(&t, JX_STR(g, "groupName"), cells[0], cells[1], cells[2], cells[3], req);
        for (int j = 0; j < 4; j++)
            xfree(cells[j]);
        xfree(req);
    }
    cli__desc_table(c, 0, "Worker Groups", &t);
}

/* The Pods table of the pods in obj's namespace labelled key=<obj's name>. */
static void labelled_pods(struct cli_ctx *c, const json_t *obj, const char *key)
{
    char *sel = xasprintf("%s=%s", key, jx_or_empty(JX_STR(obj, "metadata", "name")));
    json_t *pods = NULL;
    if (cli__list_kind(c, api_kind_get(KIND_POD), JX_STR(obj, "metadata", "namespace"), sel,
                       NULL, &pods, NULL, 0) == 0)
        desc__pods_table(c, "Pods", pods);
    json_decref(pods);
    xfree(sel);
}

void desc__rayjob(struct cli_ctx *c, const struct api_kind *k, const json_t *rj)
{
    (void)k;
    json_t *head = json_array_get(
        JX_GET(rj, "spec", "rayClusterSpec", "headGroupSpec", "template", "spec", "containers"), 0);
    char *head_req = desc__map_text(JX_GET(head, "resources", "requests"));
    cli__desc_kv(c, 0, "Queue", "%s", desc__or_none(JX_STR(rj, "metadata", "labels", QUEUE_LABEL)));
    cli__desc_kv(c, 0, "Entrypoint", "%s", desc__or_none(JX_STR(rj, "spec", "entrypoint")));
    cli__desc_kv(c, 0, "Suspend", "%s",
                 JX_BOOL(rj, false, "spec", "suspend") ? "true (waiting for admission)" : "false");
    cli__desc_kv(c, 0, "Job Status", "%s", desc__or_none(JX_STR(rj, "status", "jobStatus")));
    cli__desc_kv(c, 0, "Deployment Status", "%s",
                 desc__or_none(JX_STR(rj, "status", "jobDeploymentStatus")));
    cli__desc_kv(c, 0, "Ray Cluster", "%s", desc__or_none(JX_STR(rj, "status", "rayClusterName")));
    if (JX_STR(rj, "status", "message"))
        cli__desc_kv(c, 0, "Message", "%s", JX_STR(rj, "status", "message"));
    cli__desc_kv(c, 0, "Head Requests", "%s", head_req);
    xfree(head_req);
    worker_groups(c, rj);
    /* KubeRay labels every pod of the RayJob's cluster with the RayJob */
    labelled_pods(c, rj, "ray.io/originated-from-cr-name");
    desc__metrics(c, rj);
}

/* The replicated jobs: spec (replicas, pods per Job, requests) beside
 * status.replicatedJobsStatus (child Jobs ready/active/succeeded/failed/
 * suspended). */
static void replicated_jobs(struct cli_ctx *c, const json_t *js)
{
    struct cli_table t;
    size_t i;
    json_t *rj;
    cli__table_init(&t, 9);
    cli__table_rowv(&t, "Replicated Job", "Replicas", "Pods/Job", "Ready", "Active", "Succeeded",
                    "Failed", "Suspended", "Requests (per pod)");
    const json_t *st = JX_GET(js, "status", "replicatedJobsStatus");
    json_array_foreach(JX_GET(js, "spec", "replicatedJobs"), i, rj) {
        const json_t *s = NULL;
        size_t k;
        json_t *e;
        json_array_foreach(st, k, e) {
            if (!strcmp(jx_or_empty(JX_STR(e, "name")), jx_or_empty(JX_STR(rj, "name"))))
                s = e;
        }
        const json_t *jspec = JX_GET(rj, "template", "spec");
        char *cells[7] = {desc__scalar(JX_GET(rj, "replicas")),
                          desc__scalar(JX_GET(jspec, "parallelism")),
                          desc__scalar(JX_GET(s, "ready")), desc__scalar(JX_GET(s, "active")),
                          desc__scalar(JX_GET(s, "succeeded")), desc__scalar(JX_GET(s, "failed")),
                          desc__scalar(JX_GET(s, "suspended"))};
        json_t *ct = json_array_get(JX_GET(jspec, "template", "spec", "containers"), 0);
        char *req = desc__map_text(JX_GET(ct, "resources", "requests"));
        cli__table_rowv(&t, JX_STR(rj, "name"), cells[0], cells[1], cells[2], cells[3], cells[4],
                        cells[5], cells[6], req);
        for (int j = 0; j < 7; j++)
            xfree(cells[j]);
        xfree(req);
    }
    cli__desc_table(c, 0, "Replicated Jobs", &t);
}

void desc__jobset(struct cli_ctx *c, const struct api_kind *k, const json_t *js)
{
    (void)k;
    cli__desc_kv(c, 0, "Queue", "%s", desc__or_none(JX_STR(js, "metadata", "labels", QUEUE_LABEL)));
    cli__desc_kv(c, 0, "Suspend", "%s",
                 JX_BOOL(js, false, "spec", "suspend") ? "true (waiting for admission)" : "false");
    cli__desc_kv(c, 0, "Success Policy", "%s",
                 desc__or_none(JX_STR(js, "spec", "successPolicy", "operator")));
    cli__desc_kv(c, 0, "Max Restarts", "%lld",
                 (long long)JX_INT(js, 0, "spec", "failurePolicy", "maxRestarts"));
    cli__desc_kv(c, 0, "Restarts", "%lld", (long long)JX_INT(js, 0, "status", "restarts"));
    cli__desc_kv(c, 0, "Terminal State", "%s",
                 desc__or_none(JX_STR(js, "status", "terminalState")));
    replicated_jobs(c, js);
    /* JobSet labels every child Job's pods with the JobSet's name */
    labelled_pods(c, js, "jobset.sigs.k8s.io/jobset-name");
}

/* One container state as kubectl describe prints it ("State:", "Last
 * State:"), with the terminated reason, message and exit code. */
static void container_state(struct cli_ctx *c, const char *title, const json_t *state)
{
    const json_t *t;
    if ((t = JX_GET(state, "running"))) {
        cli__desc_kv(c, 2, title, "Running");
        if (JX_STR(t, "startedAt"))
            cli__desc_kv(c, 3, "Started", "%s", JX_STR(t, "startedAt"));
    } else if ((t = JX_GET(state, "terminated"))) {
        cli__desc_kv(c, 2, title, "Terminated");
        if (JX_STR(t, "reason") && *JX_STR(t, "reason"))
            cli__desc_kv(c, 3, "Reason", "%s", JX_STR(t, "reason"));
        if (JX_STR(t, "message") && *JX_STR(t, "message"))
            cli__desc_kv(c, 3, "Message", "%s", JX_STR(t, "message"));
        cli__desc_kv(c, 3, "Exit Code", "%lld", (long long)JX_INT(t, 0, "exitCode"));
        if (JX_INT(t, 0, "signal") > 0)
            cli__desc_kv(c, 3, "Signal", "%lld", (long long)JX_INT(t, 0, "signal"));
        if (JX_STR(t, "startedAt"))
            cli__desc_kv(c, 3, "Started", "%s", JX_STR(t, "startedAt"));
        if (JX_STR(t, "finishedAt"))
            cli__desc_kv(c, 3, "Finished", "%s", JX_STR(t, "finishedAt"));
    } else {
        t = JX_GET(state, "waiting");
        cli__desc_kv(c, 2, title, "Waiting");
        if (JX_STR(t, "reason") && *JX_STR(t, "reason"))
            cli__desc_kv(c, 3, "Reason", "%s", JX_STR(t, "reason"));
        if (JX_STR(t, "message") && *JX_STR(t, "message"))
            cli__desc_kv(c, 3, "Message", "%s", JX_STR(t, "message"));
    }
}

static void resource_lines(struct cli_ctx *c, const char *title, const json_t *map)
{
    const char *key;
    json_t *v;
    if (!json_object_size(map))
        return;
    cli__desc_kv(c, 2, title, NULL);
    json_object_foreach((json_t *)map, key, v) {
        char *t = desc__scalar(v);
        cli__desc_kv(c, 3, key, "%s", t);
        xfree(t);
    }
}

/* "Command:" and one argument per line below it, as kubectl prints them. */
static void string_list(struct cli_ctx *c, const char *title, const json_t *arr)
{
    size_t i;
    json_t *v;
    if (!json_array_size(arr))
        return;
    cli__desc_kv(c, 2, title, NULL);
    json_array_foreach(arr, i, v)
        fprintf(c->out, "%*s%s\n", 6, "", jx_or_empty(json_string_value(v)));
}

/* The status of the container named name, or NULL. */
static const json_t *container_status(const json_t *pod, const char *list, const char *name)
{
    size_t i;
    json_t *cs;
    json_array_foreach(JX_GET(pod, "status", list), i, cs)
        if (!strcmp(jx_or_empty(JX_STR(cs, "name")), name))
            return cs;
    return NULL;
}

/* kubectl describe's container blocks: image, command, state (with the
 * reason, message and exit code of a terminated one), last state, ready,
 * restarts, requests and limits. */
static void containers(struct cli_ctx *c, const json_t *pod, const char *title,
                       const char *spec_key, const char *status_key)
{
    size_t i;
    json_t *ct;
    json_t *list = JX_GET(pod, "spec", spec_key);
    if (!json_array_size(list))
        return;
    cli__desc_kv(c, 0, title, NULL);
    json_array_foreach(list, i, ct) {
        const char *name = jx_or_empty(JX_STR(ct, "name"));
        const json_t *cs = container_status(pod, status_key, name);
        cli__desc_kv(c, 1, name, NULL);
        cli__desc_kv(c, 2, "Image", "%s", desc__or_none(JX_STR(ct, "image")));
        string_list(c, "Command", JX_GET(ct, "command"));
        string_list(c, "Args", JX_GET(ct, "args"));
        container_state(c, "State", JX_GET(cs, "state"));
        if (json_object_size(JX_GET(cs, "lastState")))
            container_state(c, "Last State", JX_GET(cs, "lastState"));
        cli__desc_kv(c, 2, "Ready", "%s", JX_BOOL(cs, false, "ready") ? "True" : "False");
        cli__desc_kv(c, 2, "Restart Count", "%lld", (long long)JX_INT(cs, 0, "restartCount"));
        resource_lines(c, "Limits", JX_GET(ct, "resources", "limits"));
        resource_lines(c, "Requests", JX_GET(ct, "resources", "requests"));
    }
}

void desc__pod(struct cli_ctx *c, const struct api_kind *k, const json_t *pod)
{
    (void)k;
    cli__desc_kv(c, 0, "Node", "%s", desc__or_none(JX_STR(pod, "spec", "nodeName")));
    cli__desc_kv(c, 0, "Phase", "%s", desc__or_none(JX_STR(pod, "status", "phase")));
    if (JX_STR(pod, "status", "startTime"))
        cli__desc_kv(c, 0, "Start Time", "%s", JX_STR(pod, "status", "startTime"));
    if (JX_STR(pod, "status", "reason") || JX_STR(pod, "status", "message"))
        cli__desc_kv(c, 0, "Message", "%s%s%s", jx_or_empty(JX_STR(pod, "status", "reason")),
                     JX_STR(pod, "status", "message") ? ": " : "",
                     jx_or_empty(JX_STR(pod, "status", "message")));
    containers(c, pod, "Init Containers", "initContainers", "initContainerStatuses");
    containers(c, pod, "Containers", "containers", "containerStatuses");
    char *sel = desc__map_text(JX_GET(pod, "spec", "nodeSelector"));
    cli__desc_kv(c, 0, "Node-Selectors", "%s", sel);
    xfree(sel);
    if (json_array_size(JX_GET(pod, "spec", "tolerations")))
        cli__desc_yaml(c, 0, "Tolerations", JX_GET(pod, "spec", "tolerations"));
    else
        cli__desc_kv(c, 0, "Tolerations", "<none>");
}
