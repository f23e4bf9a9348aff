/* kinds: the table of served kinds (see kinds.h). */
#include "api/kinds.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const kueue_alt[] = {"v1beta2", NULL};
static const char *const provreq_alt[] = {"v1beta1", NULL};

#define KUEUE "kueue.x-k8s.io"

static const struct api_kind kinds[KIND__COUNT] = {
    [KIND_NAMESPACE] = {KIND_NAMESPACE, "", "v1", "Namespace", "namespaces", "namespace",
                        false, {"ns"}, {NULL}, true, NULL},
    [KIND_CONFIGMAP] = {KIND_CONFIGMAP, "", "v1", "ConfigMap", "configmaps", "configmap",
                        true, {"cm"}, {NULL}, false, NULL},
    [KIND_POD] = {KIND_POD, "", "v1", "Pod", "pods", "pod", true, {"po"}, {"all"}, true, NULL},
    [KIND_NODE] = {KIND_NODE, "", "v1", "Node", "nodes", "node", false, {"no"}, {NULL}, true, NULL},
    [KIND_EVENT] = {KIND_EVENT, "", "v1", "Event", "events", "event", true, {"ev"}, {NULL}, false, NULL},
    [KIND_PODTEMPLATE] = {KIND_PODTEMPLATE, "", "v1", "PodTemplate", "podtemplates", "podtemplate",
                          true, {NULL}, {NULL}, false, NULL},
    [KIND_JOB] = {KIND_JOB, "batch", "v1", "Job", "jobs", "job", true, {NULL}, {"all"}, true, NULL},
    [KIND_RAYJOB] = {KIND_RAYJOB, "ray.io", "v1", "RayJob", "rayjobs", "rayjob", true, {NULL},
                     {"all"}, true, NULL},
    [KIND_JOBSET] = {KIND_JOBSET, "jobset.x-k8s.io", "v1alpha2", "JobSet", "jobsets", "jobset",
                     true, {NULL}, {NULL}, true, NULL},
    [KIND_RESOURCEFLAVOR] = {KIND_RESOURCEFLAVOR, KUEUE, "v1beta1", "ResourceFlavor",
                             "resourceflavors", "resourceflavor", false,
                             {"flavor", "flavors", "rf"}, {"kueue"}, false, kueue_alt},
    [KIND_CLUSTERQUEUE] = {KIND_CLUSTERQUEUE, KUEUE, "v1beta1", "ClusterQueue", "clusterqueues",
                           "clusterqueue", false, {"cq"}, {"kueue"}, true, kueue_alt},
    [KIND_LOCALQUEUE] = {KIND_LOCALQUEUE, KUEUE, "v1beta1", "LocalQueue", "localqueues",
                         "localqueue", true, {"queue", "queues", "lq"}, {"kueue"}, true, kueue_alt},
    [KIND_COHORT] = {KIND_COHORT, KUEUE, "v1beta1", "Cohort", "cohorts", "cohort", false,
                     {"co"}, {"kueue"}, true, kueue_alt},
    [KIND_ADMISSIONCHECK] = {KIND_ADMISSIONCHECK, KUEUE, "v1beta1", "AdmissionCheck",
                             "admissionchecks", "admissioncheck", false, {"ac"}, {"kueue"},
                             true, kueue_alt},
    [KIND_PROVISIONINGREQUESTCONFIG] = {KIND_PROVISIONINGREQUESTCONFIG, KUEUE, "v1beta1",
                                        "ProvisioningRequestConfig",
                                        "provisioningrequestconfigs",
                                        "provisioningrequestconfig", false, {"prc"},
                                        {"kueue"}, false, kueue_alt},
    [KIND_WORKLOADPRIORITYCLASS] = {KIND_WORKLOADPRIORITYCLASS, KUEUE, "v1beta1",
                                    "WorkloadPriorityClass", "workloadpriorityclasses",
                                    "workloadpriorityclass", false, {"wpc"}, {"kueue"},
                                    false, kueue_alt},
    [KIND_WORKLOAD] = {KIND_WORKLOAD, KUEUE, "v1beta1", "Workload", "workloads", "workload",
                       true, {"wl", "kwl"}, {"kueue"}, true, kueue_alt},
    [KIND_TOPOLOGY] = {KIND_TOPOLOGY, KUEUE, "v1beta1", "Topology", "topologies", "topology",
                       false, {"topo"}, {"kueue"}, false, kueue_alt},
    [KIND_PROVISIONINGREQUEST] = {KIND_PROVISIONINGREQUEST, "autoscaling.x-k8s.io", "v1",
                                  "ProvisioningRequest", "provisioningrequests",
                                  "provisioningrequest", true, {"provreq", "provreqs"},
                                  {NULL}, true, provreq_alt},
    [KIND_NODEPOOL] = {KIND_NODEPOOL, "cueue.dev", "v1alpha1", "NodePool", "nodepools",
                       "nodepool", false, {"np"}, {NULL}, true, NULL},
    [KIND_SERVICE] = {KIND_SERVICE, "", "v1", "Service", "services", "service", true, {"svc"},
                      {"all"}, true, NULL},
    [KIND_ENDPOINTS] = {KIND_ENDPOINTS, "", "v1", "Endpoints", "endpoints", "endpoints", true,
                        {"ep"}, {NULL}, false, NULL},
    [KIND_ENDPOINTSLICE] = {KIND_ENDPOINTSLICE, "discovery.k8s.io", "v1", "EndpointSlice",
                            "endpointslices", "endpointslice", true, {NULL}, {NULL}, false,
                            NULL},
};

const struct api_kind *api_kind_get(enum api_kind_id id)
{
    if ((int)id < 0 || id >= KIND__COUNT)
        return NULL;
    return &kinds[id];
}

static bool version_ok(const struct api_kind *k, const char *v)
{
    if (!strcmp(k->version, v))
        return true;
    for (const char *const *a = k->alt_versions; a && *a; a++)
        if (!strcmp(*a, v))
            return true;
    return false;
}

const struct api_kind *api_kind_by_gvk(const char *api_version, const char *kind)
{
    if (!api_version || !kind)
        return NULL;
    const char *slash = strchr(api_version, '/');
    for (int i = 0; i < KIND__COUNT; i++) {
        const struct api_kind *k = &kinds[i];
        if (strcmp(k->kind, kind))
            continue;
        if (!slash) {
            if (!k->group[0] && version_ok(k, api_version))
                return k;
            continue;
        }
        size_t glen = (size_t)(slash - api_version);
        if (strlen(k->group) == glen && !strncmp(k->group, api_version, glen) &&
            version_ok(k, slash + 1))
            return k;
    }
    return NULL;
}

const struct api_kind *api_kind_by_resource(const char *group, const char *plural)
{
    for (int i = 0; i < KIND__COUNT; i++)
        if (!strcmp(kinds[i].group, group ? group : "") && !strcmp(kinds[i].plural, plural))
            return &kinds[i];
    return NULL;
}

const struct api_kind *api_kind_resolve(const char *name)
{
    if (!name || !name[0])
        return NULL;
    const char *dot = strchr(name, '.');
    for (int i = 0; i < KIND__COUNT; i++) {
        const struct api_kind *k = &kinds[i];
        if (dot && k->group[0]) {
            size_t n = (size_t)(dot - name);
            if (!strcmp(dot + 1, k->group) &&
                ((strlen(k->plural) == n && !strncmp(k->plural, name, n)) ||
                 (strlen(k->singular) == n && !strncmp(k->singular, name, n))))
                return k;
        }
        if (!strcasecmp(name, k->plural) || !strcasecmp(name, k->singular) ||
            !strcasecmp(name, k->kind))
            return k;
        for (int s = 0; s < 4 && k->short_names[s]; s++)
            if (!strcasecmp(name, k->short_names[s]))
                return k;
    }
    return NULL;
}

static char apiver_buf[KIND__COUNT][96];
static char qual_buf[KIND__COUNT][128];
static char kg_buf[KIND__COUNT][128];

/* Derived names are built once before main() so lookups from any thread
 * only read them. */
__attribute__((constructor)) static void build_names(void)
{
    for (int i = 0; i < KIND__COUNT; i++) {
        const struct api_kind *k = &kinds[i];
        if (!k->group[0]) {
            snprintf(apiver_buf[i], sizeof(apiver_buf[0]), "%s", k->version);
            snprintf(qual_buf[i], sizeof(qual_buf[0]), "%s", k->plural);
            snprintf(kg_buf[i], sizeof(kg_buf[0]), "%s", k->kind);
        } else {
            snprintf(apiver_buf[i], sizeof(apiver_buf[0]), "%s/%s", k->group, k->version);
            snprintf(qual_buf[i], sizeof(qual_buf[0]), "%s.%s", k->plural, k->group);
            snprintf(kg_buf[i], sizeof(kg_buf[0]), "%s.%s", k->kind, k->group);
        }
    }
}

const char *api_kind_api_version(const struct api_kind *k) { return apiver_buf[k->id]; }
const char *api_kind_qualified(const struct api_kind *k) { return qual_buf[k->id]; }
const char *api_kind_kind_group(const struct api_kind *k) { return kg_buf[k->id]; }
