/*
 * describe_jobs: describe sections for batch/v1 Job, ray.io/v1 RayJob and
 * Pod. Jobs list their pods (the same selection as `logs job/NAME`; for a
 * RayJob the label ray.io/originated-from-cr-name) with phase and node,
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
    char *sel = xasprintf("ray.io/originated-from-cr-name=%s",
                          jx_or_empty(JX_STR(rj, "metadata", "name")));
    json_t *pods = NULL;
    if (cli__list_kind(c, api_kind_get(KIND_POD), JX_STR(rj, "metadata", "namespace"), sel, NULL,
                       &pods, NULL, 0) == 0)
        desc__pods_table(c, "Pods", pods);
    json_decref(pods);
    xfree(sel);
    desc__metrics(c, rj);
}

static void containers(struct cli_ctx *c, const json_t *pod)
{
    struct cli_table t;
    size_t i;
    json_t *ct;
    cli__table_init(&t, 4);
    cli__table_rowv(&t, "Name", "Image", "State", "Requests");
    json_array_foreach(JX_GET(pod, "spec", "containers"), i, ct) {
        const char *name = jx_or_empty(JX_STR(ct, "name"));
        const char *state = "";
        size_t j;
        json_t *cs;
        char buf[96] = "";
        json_array_foreach(JX_GET(pod, "status", "containerStatuses"), j, cs) {
            if (strcmp(jx_or_empty(JX_STR(cs, "name")), name))
                continue;
            if (JX_GET(cs, "state", "running"))
                state = "Running";
            else if (JX_GET(cs, "state", "terminated")) {
                snprintf(buf, sizeof(buf), "Terminated (%s, exit %lld)",
                         jx_or_empty(JX_STR(cs, "state", "terminated", "reason")),
                         (long long)JX_INT(cs, 0, "state", "terminated", "exitCode"));
                state = buf;
            } else if (JX_GET(cs, "state", "waiting")) {
                snprintf(buf, sizeof(buf), "Waiting (%s)",
                         jx_or_empty(JX_STR(cs, "state", "waiting", "reason")));
                state = buf;
            }
        }
        char *req = desc__map_text(JX_GET(ct, "resources", "requests"));
        cli__table_rowv(&t, name, JX_STR(ct, "image"), state, req);
        xfree(req);
    }
    cli__desc_table(c, 0, "Containers", &t);
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
    containers(c, pod);
    char *sel = desc__map_text(JX_GET(pod, "spec", "nodeSelector"));
    cli__desc_kv(c, 0, "Node-Selectors", "%s", sel);
    xfree(sel);
    if (json_array_size(JX_GET(pod, "spec", "tolerations")))
        cli__desc_yaml(c, 0, "Tolerations", JX_GET(pod, "spec", "tolerations"));
    else
        cli__desc_kv(c, 0, "Tolerations", "<none>");
}
