/*
 * jobpolicy: which jobs Kueue manages (object.h, struct api_job_policy),
 * after Kueue's jobframework rules: the framework must be enabled in the
 * Configuration's integrations.frameworks; a job with the queue-name label
 * is managed; one without it only with manageJobsWithoutQueueName, when it
 * is no other job's child and its namespace matches
 * managedJobsNamespaceSelector. For the Pod-based frameworks the selector
 * is a strong exemption: a Pod outside it is never managed, label or not.
 */
#include <string.h>

#include "api/meta.h"
#include "api/object.h"
#include "api/selector.h"
#include "util/jsonx.h"

#define QUEUE_NAME_LABEL "kueue.x-k8s.io/queue-name"

void api_job_policy_defaults(struct api_job_policy *p)
{
    memset(p, 0, sizeof(*p));
    p->frameworks = API_FW_BATCH_JOB | API_FW_RAYJOB | API_FW_JOBSET;
}

unsigned api_job_framework(enum api_kind_id kind)
{
    switch (kind) {
    case KIND_JOB: return API_FW_BATCH_JOB;
    case KIND_RAYJOB: return API_FW_RAYJOB;
    case KIND_JOBSET: return API_FW_JOBSET;
    case KIND_POD: return API_FW_POD;
    default: return 0;
    }
}

bool api_job_policy_namespace_selected(const struct api_job_policy *p, const json_t *obj,
                               const json_t *ns_obj)
{
    const char *ns = jx_or_empty(JX_STR(obj, "metadata", "namespace"));
    if (!p->namespace_selector)
        return strcmp(ns, "kube-system") && strcmp(ns, "kueue-system");
    struct api_labels labels = {0};
    api_labels_from_json(JX_GET(ns_obj, "metadata", "labels"), &labels);
    api_labels_set(&labels, "kubernetes.io/metadata.name", ns);
    bool ok = api_label_selector_matches(p->namespace_selector, &labels);
    api_labels_release(&labels);
    return ok;
}

static bool has_controller_owner(const json_t *obj)
{
    size_t i;
    const json_t *ref;
    json_array_foreach(JX_GET(obj, "metadata", "ownerReferences"), i, ref) {
        if (JX_BOOL(ref, false, "controller"))
            return true;
    }
    return false;
}

bool api_job_policy_manages(const struct api_job_policy *p, enum api_kind_id kind,
                            const json_t *obj, const json_t *ns_obj)
{
    struct api_job_policy def;
    if (!p) {
        api_job_policy_defaults(&def);
        p = &def;
    }
    bool selected = api_job_policy_namespace_selected(p, obj, ns_obj);
    unsigned fw = api_job_framework(kind);
    if (!fw || !(p->frameworks & fw))
        return false;
    /* Pods: the selector is a strong exemption, and a Pod some controller
     * owns (a Job's) is its owner's business */
    if (kind == KIND_POD && (!selected || has_controller_owner(obj)))
        return false;
    const char *q = JX_STR(obj, "metadata", "labels", QUEUE_NAME_LABEL);
    if (q && q[0])
        return true;
    return p->manage_without_queue_name && selected && !has_controller_owner(obj);
}
