/*
 * schema_ray: ray.io/v1 RayJob as KubeRay defines it (CRD defaults, the
 * operator's ValidateRayJobSpec / ValidateRayClusterSpec rules and
 * messages), plus Kueue's RayJob webhook for jobs that carry the
 * kueue.x-k8s.io/queue-name label (kueue.md §4.3). Pod templates inside a
 * RayJob get no core PodSpec defaults: a CRD has none.
 */
#include <string.h>

#include "api/decode.h"
#include "api/names.h"
#include "api/object.h"
#include "api/schema-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define QUEUE_LABEL "kueue.x-k8s.io/queue-name"
#define ELASTIC_ANNOTATION "kueue.x-k8s.io/elastic-job"
#define MAX_KUEUE_PODSETS 18
#define RAYJOB_NAME_MAX 47 /* RayCluster names are <rayjob>-<5 chars>, at most 53 */

static const struct api_schema s_head_group = {
    .type = SCH_OBJECT,
    FIELDS(FR("template", S_POD_TEMPLATE_SPEC), F("rayStartParams", S_STR_MAP),
           F("serviceType", SCH(.type = SCH_STRING,
                                ENUM("ClusterIP", "NodePort", "LoadBalancer", "ExternalName"))),
           F("headService", S_PASS), F("enableIngress", S_BOOL), F("resources", S_STR_MAP),
           F("labels", S_STR_MAP))};

static const struct api_schema s_worker_group = {
    .type = SCH_OBJECT,
    FIELDS(FR("groupName", SCH(.type = SCH_STRING, .max_length = 63)),
           F("replicas", SCH(.type = SCH_INTEGER, .int32 = true, .has_min = true, .min = 0,
                             .default_json = "0")),
           F("minReplicas", SCH(.type = SCH_INTEGER, .int32 = true, .has_min = true, .min = 0,
                                .default_json = "0")),
           F("maxReplicas", SCH(.type = SCH_INTEGER, .int32 = true, .has_min = true, .min = 0,
                                .default_json = "2147483647")),
           F("numOfHosts", SCH(.type = SCH_INTEGER, .int32 = true, .has_min = true, .min = 1,
                               .default_json = "1")),
           F("rayStartParams", S_STR_MAP), FR("template", S_POD_TEMPLATE_SPEC),
           F("scaleStrategy", OBJ(F("workersToDelete", S_STR_LIST))),
           F("idleTimeoutSeconds", S_INT32), F("suspend", S_BOOL), F("resources", S_STR_MAP),
           F("labels", S_STR_MAP))};

static const struct api_schema s_ray_cluster_spec = {
    .type = SCH_OBJECT,
    FIELDS(FR("headGroupSpec", &s_head_group),
           F("workerGroupSpecs", KEYED("groupName", &s_worker_group)), F("rayVersion", S_STR),
           F("enableInTreeAutoscaling", S_BOOL), F("autoscalerOptions", S_PASS),
           F("suspend", S_BOOL), F("gcsFaultToleranceOptions", S_PASS),
           F("headServiceAnnotations", S_STR_MAP), F("managedBy", S_STR),
           F("upgradeStrategy", S_PASS), F("authOptions", S_PASS))};

static const struct api_schema s_rayjob_spec = {
    .type = SCH_OBJECT,
    FIELDS(F("entrypoint", S_STR), F("runtimeEnvYAML", S_STR), F("jobId", S_STR),
           F("submissionMode", SCH(.type = SCH_STRING,
                                   ENUM("K8sJobMode", "HTTPMode", "InteractiveMode",
                                        "SidecarMode"),
                                   .default_json = "\"K8sJobMode\"")),
           F("shutdownAfterJobFinishes", S_BOOL),
           F("ttlSecondsAfterFinished", SCH(.type = SCH_INTEGER, .int32 = true,
                                            .default_json = "0")),
           F("activeDeadlineSeconds", S_INT32),
           F("preRunningDeadlineSeconds", SCH(.type = SCH_INTEGER, .int32 = true,
                                              .has_min = true, .min = 1)),
           F("backoffLimit", SCH(.type = SCH_INTEGER, .int32 = true, .default_json = "0")),
           F("suspend", S_BOOL), F("rayClusterSpec", &s_ray_cluster_spec),
           F("clusterSelector", S_STR_MAP), F("submitterPodTemplate", S_POD_TEMPLATE_SPEC),
           F("submitterConfig", OBJ(F("backoffLimit", S_INT32))),
           F("entrypointNumCpus", S_NUM), F("entrypointNumGpus", S_NUM),
           F("entrypointResources", S_STR), F("metadata", S_STR_MAP),
           F("managedBy", SCH(.type = SCH_STRING,
                              ENUM("ray.io/kuberay-operator", "kueue.x-k8s.io/multikueue"),
                              .immutable = true)),
           F("deletionStrategy", S_PASS), F("jobStatusCheckTimeoutSeconds", S_INT32))};

static const struct api_schema s_rayjob_status = {
    .type = SCH_OBJECT,
    FIELDS(F("jobStatus", S_STR), F("jobDeploymentStatus", S_STR), F("reason", S_STR),
           F("message", S_STR), F("jobId", S_STR), F("rayClusterName", S_STR),
           F("dashboardURL", S_STR), F("startTime", S_TIME), F("endTime", S_TIME),
           F("rayJobInfo", OBJ(F("startTime", S_TIME), F("endTime", S_TIME))),
           F("succeeded", S_INT32), F("failed", S_INT32), F("rayClusterStatus", S_PASS),
           F("observedGeneration", S_INT64), F("jobStatusCheckFailureStartTime", S_TIME))};

static const struct api_schema s_rayjob = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(F("spec", &s_rayjob_spec), F("status", &s_rayjob_status))};

static bool has_queue_label(const json_t *obj)
{
    return JX_STR(obj, "metadata", "labels", QUEUE_LABEL) != NULL;
}

/* Kueue manages the RayJob (its webhook's rules apply): a queue name, or
 * manageJobsWithoutQueueName, with ray.io/rayjob among the frameworks
 * (api_job_policy_manages; the Namespace's labels are not looked up). */
static bool is_managed(const struct api_vctx *c, const json_t *obj)
{
    return api_job_policy_manages(c->env ? c->env->job_policy : NULL, KIND_RAYJOB, obj, NULL);
}

static void rayjob_defaults(struct api_vctx *c)
{
    if (!json_object_get(c->obj, "spec"))
        json_object_set_new(c->obj, "spec", json_object());
    api__kueue_job_defaults(c, json_object_get(c->obj, "spec"));
}

/* ---- KubeRay rules ---- */

static void invalid(struct api_vctx *c, const char *field, const char *msg)
{
    diag_add(c->d, DIAG_INVALID, field, NULL, "The RayJob spec is invalid: %s", msg);
}

static void validate_group(struct api_vctx *c, const json_t *g, const char *path,
                           const char *group)
{
    static const char *const res_params[] = {"num-cpus", "num-gpus", "memory", "resources"};
    json_t *rsp = json_object_get(g, "rayStartParams");
    bool has = false;
    for (int i = 0; i < 4; i++)
        has |= JX_STR(rsp, res_params[i]) && JX_STR(rsp, res_params[i])[0];
    char *f = api__path("%s.resources", path);
    if (has && json_object_size(json_object_get(g, "resources")))
        diag_add(c->d, DIAG_INVALID, f, NULL,
                 "resource fields should not be set in both rayStartParams and Resources for "
                 "%s group; please use only one", group);
    xfree(f);
    if (json_object_get(rsp, "labels")) {
        f = api__path("%s.rayStartParams", path);
        diag_add(c->d, DIAG_INVALID, f, NULL,
                 "rayStartParams['labels'] is not supported for %s group; please use the "
                 "top-level Labels field instead", group);
        xfree(f);
    }
}

static void validate_cluster_spec(struct api_vctx *c, const json_t *cs)
{
    const char *p = "spec.rayClusterSpec";
    validate_group(c, json_object_get(cs, "headGroupSpec"), "spec.rayClusterSpec.headGroupSpec",
                   "Head");
    bool autoscaling = JX_BOOL(cs, false, "enableInTreeAutoscaling");
    size_t i;
    json_t *wg;
    json_array_foreach(json_object_get(cs, "workerGroupSpecs"), i, wg) {
        char *wp = api__path("%s.workerGroupSpecs[%zu]", p, i);
        const char *name = jx_or_empty(JX_STR(wg, "groupName"));
        validate_group(c, wg, wp, name);
        int64_t min = JX_INT(wg, 0, "minReplicas"), max = JX_INT(wg, INT32_MAX, "maxReplicas");
        if (min > max) {
            char *f = api__path("%s.minReplicas", wp);
            api__diag_int(c->d, DIAG_INVALID, f, min,
                          "minReplicas (%lld) of worker group %s must not be greater than "
                          "maxReplicas (%lld)", (long long)min, name, (long long)max);
            xfree(f);
        }
        if (autoscaling && JX_BOOL(wg, false, "suspend")) {
            char *f = api__path("%s.suspend", wp);
            diag_add(c->d, DIAG_INVALID, f, NULL,
                     "worker group %s cannot be suspended with Autoscaler enabled", name);
            xfree(f);
        }
        xfree(wp);
    }
}

static void validate_modes(struct api_vctx *c, const json_t *spec)
{
    const char *mode = jx_or_empty(JX_STR(spec, "submissionMode"));
    json_t *sel = json_object_get(spec, "clusterSelector");
    bool selector_mode = json_object_size(sel) > 0;
    if (selector_mode && !JX_STR(sel, "ray.io/cluster"))
        diag_add(c->d, DIAG_INVALID, "spec.clusterSelector", NULL,
                 "cluster name in ClusterSelector should not be empty");
    if (selector_mode && !strcmp(mode, "SidecarMode"))
        diag_add(c->d, DIAG_INVALID, "spec.clusterSelector", NULL,
                 "ClusterSelector is not supported in SidecarMode");
    if (!strcmp(mode, "InteractiveMode") && JX_INT(spec, 0, "backoffLimit") > 0)
        invalid(c, "spec.backoffLimit", "BackoffLimit is incompatible with InteractiveMode");
    if (!strcmp(mode, "SidecarMode")) {
        if (json_object_get(spec, "submitterPodTemplate"))
            diag_add(c->d, DIAG_INVALID, "spec.submitterPodTemplate", NULL,
                     "Currently, SidecarMode doesn't support SubmitterPodTemplate");
        if (json_object_get(spec, "submitterConfig"))
            diag_add(c->d, DIAG_INVALID, "spec.submitterConfig", NULL,
                     "Currently, SidecarMode doesn't support SubmitterConfig");
        const char *rp = JX_STR(spec, "rayClusterSpec", "headGroupSpec", "template", "spec",
                                "restartPolicy");
        if (rp && strcmp(rp, "Never"))
            diag_add(c->d, DIAG_INVALID,
                     "spec.rayClusterSpec.headGroupSpec.template.spec.restartPolicy", NULL,
                     "restartPolicy for head Pod should be Never or unset when using "
                     "SidecarMode");
    }
}

static void validate_runtime_env(struct api_vctx *c, const json_t *spec)
{
    const char *yaml = JX_STR(spec, "runtimeEnvYAML");
    if (!yaml)
        return;
    struct diag tmp;
    diag_init(&tmp);
    json_t *docs = NULL;
    if (api_parse_documents(yaml, strlen(yaml), "runtimeEnvYAML", &docs, &tmp) < 0 ||
        json_array_size(docs) > 1)
        diag_add(c->d, DIAG_INVALID, "spec.runtimeEnvYAML", NULL,
                 "failed to unmarshal RuntimeEnvYAML: %s",
                 tmp.n ? tmp.items[0].detail : "more than one YAML document");
    json_decref(docs);
    diag_release(&tmp);
}

static void validate_kuberay(struct api_vctx *c, const json_t *spec)
{
    bool suspend = JX_BOOL(spec, false, "suspend");
    bool selector_mode = json_object_size(json_object_get(spec, "clusterSelector")) > 0;
    if (suspend && !JX_BOOL(spec, false, "shutdownAfterJobFinishes"))
        invalid(c, "spec.suspend",
                "a RayJob with shutdownAfterJobFinishes set to false is not allowed to be "
                "suspended");
    if (suspend && selector_mode)
        invalid(c, "spec.suspend", "the ClusterSelector mode doesn't support the suspend operation");
    if (!json_object_get(spec, "rayClusterSpec") && !selector_mode)
        diag_add(c->d, DIAG_REQUIRED, "spec.rayClusterSpec", NULL,
                 "The RayJob spec is invalid: one of RayClusterSpec or ClusterSelector must be "
                 "set");
    if (JX_INT(spec, 0, "ttlSecondsAfterFinished") < 0)
        invalid(c, "spec.ttlSecondsAfterFinished",
                "TTLSecondsAfterFinished must be a non-negative integer");
    if (json_object_get(spec, "activeDeadlineSeconds") && JX_INT(spec, 0, "activeDeadlineSeconds") <= 0)
        invalid(c, "spec.activeDeadlineSeconds", "activeDeadlineSeconds must be a positive integer");
    if (JX_INT(spec, 0, "backoffLimit") < 0)
        invalid(c, "spec.backoffLimit", "backoffLimit must be a positive integer");
    validate_modes(c, spec);
    if (json_object_get(spec, "rayClusterSpec"))
        validate_cluster_spec(c, json_object_get(spec, "rayClusterSpec"));
    validate_runtime_env(c, spec);
}

/* ---- Kueue's RayJob webhook (managed jobs only) ---- */

static void validate_kueue(struct api_vctx *c, const json_t *spec)
{
    bool has_selector = json_object_size(json_object_get(spec, "clusterSelector")) > 0;
    const json_t *cs = json_object_get(spec, "rayClusterSpec");
    if (has_selector && cs) {
        diag_addj(c->d, DIAG_INVALID, "spec.clusterSelector", json_object_get(spec, "clusterSelector"),
                  "a kueue managed job should not use an existing cluster");
        return;
    }
    if (has_selector)
        return; /* jobs on an existing cluster are not managed by Kueue */
    if (!cs) {
        diag_add(c->d, DIAG_REQUIRED, "spec.rayClusterSpec", NULL,
                 "rayClusterSpec is required for Kueue-managed jobs that don't use "
                 "clusterSelector");
        return;
    }
    if (!JX_BOOL(spec, false, "shutdownAfterJobFinishes"))
        diag_addj(c->d, DIAG_INVALID, "spec.shutdownAfterJobFinishes", json_false(),
                  "a kueue managed job should delete the cluster after finishing");
    const char *elastic = JX_STR(c->obj, "metadata", "annotations", ELASTIC_ANNOTATION);
    if (JX_BOOL(cs, false, "enableInTreeAutoscaling") && !(elastic && !strcmp(elastic, "true")))
        diag_addj(c->d, DIAG_INVALID, "spec.rayClusterSpec.enableInTreeAutoscaling", json_true(),
                  "a kueue managed job should only use autoscaling when workload slicing is "
                  "enabled");
    json_t *workers = json_object_get(cs, "workerGroupSpecs");
    const char *mode = jx_or_empty(JX_STR(spec, "submissionMode"));
    size_t max = MAX_KUEUE_PODSETS - 1 - (!strcmp(mode, "K8sJobMode") ? 1 : 0);
    if (json_array_size(workers) > max)
        api__diag_int(c->d, DIAG_TOO_MANY, "spec.rayClusterSpec.workerGroupSpecs",
                      (int64_t)json_array_size(workers), "must have at most %zu items", max);
    size_t i;
    json_t *wg;
    json_array_foreach(workers, i, wg) {
        const char *name = JX_STR(wg, "groupName");
        if (!name || strcmp(name, "head"))
            continue;
        char *f = api__path("spec.rayClusterSpec.workerGroupSpecs[%zu].groupName", i);
        diag_add(c->d, DIAG_FORBIDDEN, f, NULL, "\"head\" is reserved for the head group");
        xfree(f);
    }
}

static void rayjob_validate(struct api_vctx *c)
{
    const json_t *spec = json_object_get(c->obj, "spec");
    validate_kuberay(c, spec);
    if (is_managed(c, c->obj))
        validate_kueue(c, spec);
    if (has_queue_label(c->obj) || (c->old && has_queue_label(c->old)))
        api__validate_queue_name_label(c);
}

const struct api_kind_schema api__ks_rayjob = {
    .kind = KIND_RAYJOB, .root = &s_rayjob, .name_rule = api_check_dns1035_label,
    .name_max = RAYJOB_NAME_MAX, .defaults = rayjob_defaults, .validate = rayjob_validate};
