/*
 * jobs/rayjob: the ray.io/v1 RayJob reconciler. Two roles in one pass:
 *  1. Kueue's ray.io/rayjob integration (kueue.md §4.3) through the generic
 *     lifecycle of jobs/frame.c. Pod sets in Kueue's order: `head` (plus
 *     the autoscaler sidecar, 500m/512Mi or autoscalerOptions.resources,
 *     when enableInTreeAutoscaling; the submitter container in SidecarMode),
 *     one per worker group named lower(groupName) with replicas x numOfHosts
 *     pods, and `submitter` in K8sJobMode. Active unless the deployment
 *     status is "" (New) or Suspended; finished at Complete/Failed;
 *     PodsReady when rayClusterStatus.state is "ready".
 *  2. The KubeRay operator (jobs/ray.c): cluster Pods, submitter Job, status.
 * Elastic RayJobs (kueue.x-k8s.io/elastic-job) get the generation in the
 * Workload name and the slice-name annotation on their pods; they never
 * resize here (no in-tree autoscaler runs), so one slice is all there is.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "ctrl/ctrl-int.h"
#include "ctrl/jobs/jobs.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static json_t *resources_json(const char *cpu_req, const char *mem_req, const char *cpu_lim,
                              const char *mem_lim)
{
    return json_pack("{s:{s:s, s:s}, s:{s:s, s:s}}", "requests", "cpu", cpu_req, "memory",
                     mem_req, "limits", "cpu", cpu_lim, "memory", mem_lim);
}

static json_t *head_podset_template(const json_t *rj)
{
    const json_t *spec = JX_GET(rj, "spec", "rayClusterSpec");
    json_t *t = jx_deep_copy(JX_GET(spec, "headGroupSpec", "template"));
    if (!t)
        t = json_object();
    json_t *ctrs = json_object_get(JX_OBJ(t, "spec"), "containers");
    if (!json_is_array(ctrs)) {
        ctrs = json_array();
        json_object_set_new(JX_OBJ(t, "spec"), "containers", ctrs);
    }
    if (JX_BOOL(spec, false, "enableInTreeAutoscaling")) {
        const json_t *res = JX_GET(spec, "autoscalerOptions", "resources");
        json_t *r = res ? jx_deep_copy(res) : resources_json("500m", "512Mi", "500m", "512Mi");
        json_array_append_new(ctrs, json_pack("{s:s, s:o}", "name", "autoscaler", "resources", r));
    }
    if (!strcmp(jobs_ray_mode(rj), "SidecarMode"))
        json_array_append_new(ctrs, json_pack("{s:s, s:o}", "name", "ray-job-submitter",
                                              "resources",
                                              resources_json("500m", "200Mi", "1", "1Gi")));
    return t;
}

static char *lower_dup(const char *s)
{
    char *d = xstrdup(s);
    for (char *p = d; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

static int rayjob_podsets(struct ctrl *c, const json_t *rj, struct jobs_podsets *out,
                          char *err, size_t errlen)
{
    (void)c;
    const json_t *spec = JX_GET(rj, "spec", "rayClusterSpec");
    if (!json_is_object(spec)) {
        snprintf(err, errlen, "rayClusterSpec is required for a kueue managed job");
        return -1;
    }
    jobs_podsets_add(out, "head", 1, 0, head_podset_template(rj));
    size_t i;
    json_t *wg;
    json_array_foreach(JX_GET(spec, "workerGroupSpecs"), i, wg) {
        int64_t replicas = JX_INT(wg, 1, "replicas");
        int64_t hosts = JX_INT(wg, 1, "numOfHosts");
        if (hosts > 1)
            replicas *= hosts;
        char *name = lower_dup(jx_or_empty(JX_STR(wg, "groupName")));
        json_t *t = jx_deep_copy(JX_GET(wg, "template"));
        jobs_podsets_add(out, name, (int32_t)replicas, 0, t ? t : json_object());
        xfree(name);
    }
    if (!strcmp(jobs_ray_mode(rj), "K8sJobMode")) {
        const json_t *sub = JX_GET(rj, "spec", "submitterPodTemplate");
        jobs_podsets_add(out, "submitter", 1, 0,
                         sub ? jx_deep_copy(sub) : jobs_ray_default_submitter(rj));
    }
    return 0;
}

static json_t *rayjob_template_at(json_t *rj, size_t i, const char *name)
{
    json_t *spec = JX_GET(rj, "spec", "rayClusterSpec");
    json_t *workers = JX_GET(spec, "workerGroupSpecs");
    size_t nw = json_array_size(workers);
    if (i == 0)
        return strcmp(name, "head") ? NULL : JX_OBJ(spec, "headGroupSpec", "template");
    if (i <= nw) {
        json_t *wg = json_array_get(workers, i - 1);
        char *want = lower_dup(jx_or_empty(JX_STR(wg, "groupName")));
        bool ok = !strcmp(want, name);
        xfree(want);
        return ok ? JX_OBJ(wg, "template") : NULL;
    }
    if (i == nw + 1 && !strcmp(name, "submitter") &&
        !strcmp(jobs_ray_mode(rj), "K8sJobMode")) {
        /* Kueue materialises the default submitter template on start */
        if (!JX_GET(rj, "spec", "submitterPodTemplate"))
            JX_SET_NEW(rj, jobs_ray_default_submitter(rj), "spec", "submitterPodTemplate");
        return JX_OBJ(rj, "spec", "submitterPodTemplate");
    }
    return NULL;
}

static const char *deployment_status(const json_t *rj)
{
    return jx_or_empty(JX_STR(rj, "status", "jobDeploymentStatus"));
}

static bool rayjob_is_active(const json_t *rj)
{
    const char *s = deployment_status(rj);
    return s[0] && strcmp(s, "Suspended");
}

static bool rayjob_finished(const json_t *rj, char *msg, size_t msglen, bool *success)
{
    const char *s = deployment_status(rj);
    if (strcmp(s, "Complete") && strcmp(s, "Failed"))
        return false;
    const char *js = jx_or_empty(JX_STR(rj, "status", "jobStatus"));
    *success = !strcmp(js, "SUCCEEDED");
    const char *m = JX_STR(rj, "status", "message");
    snprintf(msg, msglen, "%s", m && m[0] ? m : *success ? "Job finished successfully" : js);
    return true;
}

static bool rayjob_pods_ready(const json_t *rj, const json_t *wl)
{
    (void)wl;
    const char *st = JX_STR(rj, "status", "rayClusterStatus", "state");
    return st && !strcmp(st, "ready");
}

static char *rayjob_name_extra(const json_t *rj)
{
    const char *e = api_annotation(rj, KQ_ELASTIC_ANNOTATION);
    if (!e || strcmp(e, "true"))
        return NULL;
    return xasprintf("%lld", (long long)JX_INT(rj, 1, "metadata", "generation"));
}

static const struct jobs_integration ray_job = {
    .kind = "RayJob",
    .group = "ray.io",
    .api_version = "ray.io/v1",
    .kind_id = KIND_RAYJOB,
    .podsets = rayjob_podsets,
    .template_at = rayjob_template_at,
    .is_active = rayjob_is_active,
    .finished = rayjob_finished,
    .pods_ready = rayjob_pods_ready,
    .name_extra = rayjob_name_extra,
};

static const struct ctrl_reconciler_ops rayjob_ops = {
    .name = "rayjob",
    .on_event = jobs_rec_on_event,
    .reconcile = jobs_rec_reconcile,
    .after_round = NULL,
    .free = jobs_rec_free,
};

void ctrl__rayjob_register(struct ctrl *c)
{
    struct jobs_rec *r = jobs_rec_new(&ray_job, jobs_ray_sync);
    r->rid = ctrl_register(c, &rayjob_ops, r);
    jobs_rec_join(r, c); /* one ownerReferences read per event */
}
