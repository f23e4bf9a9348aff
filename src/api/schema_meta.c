/*
 * schema_meta: the leaf schemas and the structures every kind shares
 * (ObjectMeta, LabelSelector, conditions, taints, tolerations, node
 * selectors, affinity, resource lists) with their Kubernetes field rules.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/names.h"
#include "api/object.h"
#include "api/quantity.h"
#include "api/schema-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

/* ---- leaves ---- */

const struct api_schema api__s_str = {.type = SCH_STRING};
const struct api_schema api__s_int32 = {.type = SCH_INTEGER, .int32 = true};
const struct api_schema api__s_int64 = {.type = SCH_INTEGER};
const struct api_schema api__s_bool = {.type = SCH_BOOLEAN};
const struct api_schema api__s_num = {.type = SCH_NUMBER};
const struct api_schema api__s_time = {.type = SCH_STRING, .format = FMT_DATE_TIME};
const struct api_schema api__s_any = {.type = SCH_ANY};
const struct api_schema api__s_passthrough = {.type = SCH_PASSTHROUGH,
                                              .doc = "pass-through: not validated"};
const struct api_schema api__s_quantity = {.type = SCH_QUANTITY};
const struct api_schema api__s_quantity_nonneg = {.type = SCH_QUANTITY, .has_min = true,
                                                  .min = 0};
const struct api_schema api__s_int_or_str = {.type = SCH_INT_OR_STRING};
const struct api_schema api__s_dns_label = {.type = SCH_STRING, .format = FMT_DNS_LABEL};
const struct api_schema api__s_dns_subdomain = {.type = SCH_STRING,
                                                .format = FMT_DNS_SUBDOMAIN};
const struct api_schema api__s_qname = {.type = SCH_STRING, .format = FMT_QUALIFIED_NAME};
const struct api_schema api__s_nonneg_int32 = {.type = SCH_INTEGER, .int32 = true,
                                               .has_min = true, .min = 0};
const struct api_schema api__s_nonneg_int64 = {.type = SCH_INTEGER, .has_min = true,
                                               .min = 0};
const struct api_schema api__s_str_map = {.type = SCH_MAP, .items = &api__s_str};
const struct api_schema api__s_str_list = {.type = SCH_ARRAY, .items = &api__s_str};
const struct api_schema api__s_str_set = {.type = SCH_ARRAY, .items = &api__s_str,
                                          .list_type = LIST_SET};
const struct api_schema api__s_resource_list = {
    .type = SCH_MAP, .items = &api__s_quantity_nonneg, .key_format = FMT_QUALIFIED_NAME,
    .doc = "resource name to quantity"};
const struct api_schema api__s_label_map = {
    .type = SCH_MAP, .key_format = FMT_QUALIFIED_NAME,
    .items = SCH(.type = SCH_STRING, .format = FMT_LABEL_VALUE)};

static void check_annotations(struct api_vctx *c, const json_t *v, const char *path,
                              const json_t *old)
{
    size_t total = 0;
    const char *k;
    json_t *val;
    json_object_foreach((json_t *)v, k, val) {
        total += strlen(k) + strlen(jx_or_empty(json_string_value(val)));
    }
    if (total > API_ANNOTATIONS_MAX_BYTES)
        diag_add(c->d, DIAG_TOO_LONG, path, NULL, "must have at most %zu bytes",
                 API_ANNOTATIONS_MAX_BYTES);
}

const struct api_schema api__s_annotation_map = {
    .type = SCH_MAP, .key_format = FMT_QUALIFIED_NAME, .items = &api__s_str,
    .check = check_annotations};

/* ---- ObjectMeta ---- */

const struct api_schema api__s_object_meta = {
    .type = SCH_OBJECT,
    .doc = "standard object metadata",
    FIELDS(F("name", S_STR), F("generateName", S_STR), F("namespace", S_STR),
           F("labels", S_LABELS), F("annotations", S_ANNOTATIONS), F("uid", S_STR),
           F("resourceVersion", S_STR), F("generation", S_INT64),
           F("creationTimestamp", S_TIME), F("deletionTimestamp", S_TIME),
           F("deletionGracePeriodSeconds", S_INT64),
           F("ownerReferences",
             KEYED("uid", OBJ(FR("apiVersion", S_STR), FR("kind", S_STR), FR("name", S_STR),
                              FR("uid", S_STR), F("controller", S_BOOL),
                              F("blockOwnerDeletion", S_BOOL)))),
           F("finalizers", SCH(.type = SCH_ARRAY, .list_type = LIST_SET, .items = S_QNAME)),
           F("managedFields", ARR(S_ANY)), F("selfLink", S_STR)),
};
const struct api_schema api__s_template_meta = {
    .type = SCH_OBJECT,
    .doc = "pod template metadata",
    FIELDS(F("name", S_STR), F("generateName", S_STR), F("namespace", S_STR),
           F("labels", S_LABELS), F("annotations", S_ANNOTATIONS), F("uid", S_STR),
           F("resourceVersion", S_STR), F("generation", S_INT64),
           F("creationTimestamp", S_TIME), F("finalizers", S_STR_LIST)),
};

/* ---- LabelSelector ---- */

static void check_label_requirement(struct api_vctx *c, const json_t *v, const char *path,
                                    const json_t *old)
{
    const char *op = JX_STR(v, "operator");
    size_t n = json_array_size(json_object_get(v, "values"));
    char *f = api__path("%s.values", path);
    if (op && (!strcmp(op, "In") || !strcmp(op, "NotIn")) && n == 0)
        diag_add(c->d, DIAG_REQUIRED, f, NULL,
                 "must be specified when `operator` is 'In' or 'NotIn'");
    if (op && (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) && n > 0)
        diag_add(c->d, DIAG_FORBIDDEN, f, NULL,
                 "may not be specified when `operator` is 'Exists' or 'DoesNotExist'");
    if (op && (!strcmp(op, "Gt") || !strcmp(op, "Lt")) && n != 1)
        diag_add(c->d, DIAG_REQUIRED, f, NULL,
                 "must be specified single value when `operator` is 'Lt' or 'Gt'");
    xfree(f);
}

const struct api_schema api__s_label_selector = {
    .type = SCH_OBJECT,
    FIELDS(F("matchLabels", S_LABELS),
           F("matchExpressions",
             ARR(SCH(.type = SCH_OBJECT, .check = check_label_requirement,
                     FIELDS(FR("key", S_QNAME),
                            FR("operator", SCH(.type = SCH_STRING,
                                               ENUM("In", "NotIn", "Exists", "DoesNotExist"))),
                            F("values", S_STR_LIST)))))),
};

/* ---- conditions ---- */

const struct api_schema api__s_conditions = {
    .type = SCH_ARRAY, .list_type = LIST_MAP, .merge_key = "type",
    .items = OBJ(FR("type", S_STR),
                 FR("status", SCH(.type = SCH_STRING, ENUM("True", "False", "Unknown"))),
                 F("observedGeneration", S_INT64), F("lastTransitionTime", S_TIME),
                 F("lastProbeTime", S_TIME), F("lastHeartbeatTime", S_TIME),
                 F("lastUpdateTime", S_TIME), F("reason", S_STR), F("message", S_STR))};

/* ---- taints and tolerations ---- */

static const char *const TAINT_EFFECTS[] = {"NoSchedule", "PreferNoSchedule", "NoExecute",
                                            NULL};

static void check_toleration(struct api_vctx *c, const json_t *v, const char *path,
                             const json_t *old)
{
    const char *key = jx_or_empty(JX_STR(v, "key"));
    const char *op = jx_or_empty(JX_STR(v, "operator"));
    const char *value = jx_or_empty(JX_STR(v, "value"));
    const char *effect = jx_or_empty(JX_STR(v, "effect"));
    char *f = NULL;
    if (!key[0] && strcmp(op, "Exists")) {
        f = api__path("%s.operator", path);
        api__diag_str(c->d, DIAG_INVALID, f, op,
                      "operator must be Exists when `key` is empty, which means \"match all "
                      "values and all keys\"");
        XFREE(f);
    }
    if (json_object_get(v, "tolerationSeconds") && strcmp(effect, "NoExecute")) {
        f = api__path("%s.effect", path);
        api__diag_str(c->d, DIAG_INVALID, f, effect,
                      "effect must be 'NoExecute' when `tolerationSeconds` is set");
        XFREE(f);
    }
    const char *msg;
    if (!op[0] || !strcmp(op, "Equal")) {
        if ((msg = api_check_label_value(value))) {
            f = api__path("%s.value", path);
            api__diag_str(c->d, DIAG_INVALID, f, value, "%s", msg);
            XFREE(f);
        }
    } else if (!strcmp(op, "Exists")) {
        if (value[0]) {
            f = api__path("%s.value", path);
            api__diag_str(c->d, DIAG_INVALID, f, value,
                          "value must be empty when `operator` is 'Exists'");
            XFREE(f);
        }
    } else {
        static const char *const ops[] = {"Equal", "Exists", NULL};
        f = api__path("%s.operator", path);
        api__diag_not_supported(c->d, f, op, ops);
        XFREE(f);
    }
    if (effect[0] && !api__str_in(effect, TAINT_EFFECTS)) {
        f = api__path("%s.effect", path);
        api__diag_not_supported(c->d, f, effect, TAINT_EFFECTS);
        XFREE(f);
    }
}

const struct api_schema api__s_tolerations = {
    .type = SCH_ARRAY,
    .items = SCH(.type = SCH_OBJECT, .check = check_toleration,
                 FIELDS(F("key", S_QNAME), F("operator", S_STR), F("value", S_STR),
                        F("effect", S_STR), F("tolerationSeconds", S_INT64)))};

static void check_taints(struct api_vctx *c, const json_t *v, const char *path,
                         const json_t *old)
{
    size_t i, j;
    json_t *a, *b;
    json_array_foreach(v, i, a) {
        json_array_foreach(v, j, b) {
            if (j >= i)
                break;
            if (jx_equal(json_object_get(a, "key"), json_object_get(b, "key")) &&
                jx_equal(json_object_get(a, "effect"), json_object_get(b, "effect"))) {
                char *f = api__path("%s[%zu]", path, i);
                diag_addj(c->d, DIAG_DUPLICATE, f, a,
                          "taints must be unique by key and effect pair");
                xfree(f);
                break;
            }
        }
    }
}

const struct api_schema api__s_taints = {
    .type = SCH_ARRAY, .check = check_taints,
    .items = OBJ(FR("key", S_QNAME),
                 F("value", SCH(.type = SCH_STRING, .format = FMT_LABEL_VALUE)),
                 FR("effect", SCH(.type = SCH_STRING,
                                  ENUM("NoSchedule", "PreferNoSchedule", "NoExecute"))),
                 F("timeAdded", S_TIME))};

/* ---- node selectors and affinity ---- */

static const struct api_schema s_node_requirement = {
    .type = SCH_OBJECT, .check = check_label_requirement,
    FIELDS(FR("key", S_QNAME),
           FR("operator", SCH(.type = SCH_STRING,
                              ENUM("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"))),
           F("values", S_STR_LIST))};

static const struct api_schema s_node_term = {
    .type = SCH_OBJECT,
    FIELDS(F("matchExpressions", ARR(&s_node_requirement)),
           F("matchFields", ARR(&s_node_requirement)))};

const struct api_schema api__s_node_selector = {
    .type = SCH_OBJECT,
    FIELDS(FR("nodeSelectorTerms", SCH(.type = SCH_ARRAY, .items = &s_node_term,
                                       .min_items = 1)))};

const struct api_schema api__s_affinity = {
    .type = SCH_OBJECT,
    FIELDS(F("nodeAffinity",
             OBJ(F("requiredDuringSchedulingIgnoredDuringExecution", S_NODE_SELECTOR),
                 F("preferredDuringSchedulingIgnoredDuringExecution",
                   ARR(OBJ(FR("weight", SCH(.type = SCH_INTEGER, .int32 = true,
                                            .has_min = true, .min = 1, .has_max = true,
                                            .max = 100)),
                           FR("preference", &s_node_term)))))),
           F("podAffinity", S_PASS), F("podAntiAffinity", S_PASS))};

/* ---- shared validators ---- */

void api__immutable(struct api_vctx *c, const json_t *v, const json_t *old, const char *path)
{
    if (c->old && !jx_equal(v, old))
        diag_addj(c->d, DIAG_INVALID, path, v, "field is immutable");
}

bool api__quantity(const json_t *v, const char *resource, int64_t *out)
{
    *out = 0;
    return v && api_quantity_from_json(v, resource, "", out, NULL) == 0;
}

const char *api__quantity_text(const json_t *v, char *buf, size_t len)
{
    if (json_is_string(v))
        return json_string_value(v);
    if (!json_is_number(v))
        return NULL;
    api__number_text(v, buf, len);
    return buf;
}

void api__kueue_job_defaults(struct api_vctx *c, json_t *spec)
{
    if (c->old)
        return;
    const struct api_admit_env *env = c->env;
    struct api_job_policy def;
    const struct api_job_policy *p = env ? env->job_policy : NULL;
    if (!p) {
        api_job_policy_defaults(&def);
        p = &def;
    }
    const char *ns = jx_or_empty(JX_STR(c->obj, "metadata", "namespace"));
    json_t *nso = env && env->get && p->namespace_selector && ns[0]
                      ? env->get(env->ctx, KIND_NAMESPACE, "", ns)
                      : NULL;
    if (!(p->frameworks & api_job_framework(c->kind->id))) {
        json_decref(nso);
        return;
    }
    bool selected = api_job_policy_namespace_selected(p, c->obj, nso);
    if (selected && env && env->exists && !JX_STR(c->obj, "metadata", "labels", "kueue.x-k8s.io/queue-name") &&
        env->exists(env->ctx, KIND_LOCALQUEUE, ns, "default"))
        JX_SET_NEW(c->obj, json_string("default"), "metadata", "labels",
                   "kueue.x-k8s.io/queue-name");
    if (selected && env && env->exists &&
        !JX_STR(c->obj, "metadata", "labels", "kueue.x-k8s.io/priority-class") &&
        env->exists(env->ctx, KIND_WORKLOADPRIORITYCLASS, "", "default"))
        JX_SET_NEW(c->obj, json_string("default"), "metadata", "labels",
                   "kueue.x-k8s.io/priority-class");
    /* Kueue's job webhooks create a managed job suspended */
    if (api_job_policy_manages(p, c->kind->id, c->obj, nso) && json_is_object(spec))
        json_object_set_new(spec, "suspend", json_true());
    json_decref(nso);
}

void api__kueue_pod_defaults(struct api_vctx *c)
{
    const struct api_admit_env *env = c->env;
    const struct api_job_policy *p = env ? env->job_policy : NULL;
    if (c->old || !p || !(p->frameworks & API_FW_POD))
        return;
    const char *ns = jx_or_empty(JX_STR(c->obj, "metadata", "namespace"));
    json_t *nso = env->get && p->namespace_selector && ns[0]
                      ? env->get(env->ctx, KIND_NAMESPACE, "", ns)
                      : NULL;
    bool managed = api_job_policy_manages(p, KIND_POD, c->obj, nso);
    json_decref(nso);
    if (!managed)
        return;
    if (JX_STR(c->obj, "metadata", "labels", "kueue.x-k8s.io/pod-group-name")) {
        /* Kueue's pod webhook: a group's Pods say how many it has */
        const char *n = JX_STR(c->obj, "metadata", "annotations",
                               "kueue.x-k8s.io/pod-group-total-count");
        char *end = NULL;
        long v = n ? strtol(n, &end, 10) : 0;
        if (!n)
            api__diag_str(c->d, DIAG_REQUIRED,
                          "metadata.annotations[kueue.x-k8s.io/pod-group-total-count]", NULL,
                          "required for a Pod with the label kueue.x-k8s.io/pod-group-name");
        else if (!*n || *end || v < 1 || v > INT32_MAX)
            api__diag_str(c->d, DIAG_INVALID,
                          "metadata.annotations[kueue.x-k8s.io/pod-group-total-count]", n,
                          "must be a positive integer");
    }
    JX_SET_NEW(c->obj, json_string("true"), "metadata", "labels", "kueue.x-k8s.io/managed");
    json_t *spec = json_object_get(c->obj, "spec");
    json_t *gates = json_object_get(spec, "schedulingGates");
    if (!json_is_array(gates)) {
        gates = json_array();
        json_object_set_new(spec, "schedulingGates", gates);
    }
    json_array_append_new(gates, json_pack("{s:s}", "name", "kueue.x-k8s.io/admission"));
}

void api__validate_queue_name_label(struct api_vctx *c)
{
    const char *q = JX_STR(c->obj, "metadata", "labels", "kueue.x-k8s.io/queue-name");
    const char *msg = q ? api_check_dns1123_subdomain(q) : NULL;
    if (msg)
        api__diag_str(c->d, DIAG_INVALID, "metadata.labels[kueue.x-k8s.io/queue-name]", q,
                      "%s", msg);
    /* Kueue's job webhook: the queue of a job that is not suspended (it
     * runs on its queue's quota) does not change, nor is it removed */
    if (c->old && !c->status_update && !JX_BOOL(c->obj, false, "spec", "suspend")) {
        const char *old = JX_STR(c->old, "metadata", "labels", "kueue.x-k8s.io/queue-name");
        if ((q || old) && (!q || !old || strcmp(q, old)))
            api__diag_str(c->d, DIAG_INVALID, "metadata.labels[kueue.x-k8s.io/queue-name]",
                          q ? q : "", "field is immutable");
    }
}
