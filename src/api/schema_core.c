/*
 * schema_core: the core/v1 kinds cueue serves (Namespace, ConfigMap, Pod,
 * PodTemplate, Node, Event) with the API server's defaults and validation.
 */
#include <string.h>

#include "api/names.h"
#include "api/quantity.h"
#include "api/schema-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define CONFIGMAP_MAX_BYTES ((size_t)1 << 20) /* core.MaxSecretSize */

/* ---- Namespace ---- */

static const struct api_schema s_namespace = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(F("spec", OBJ(F("finalizers", S_STR_LIST))),
                F("status", OBJ(F("phase", SCH(.type = SCH_STRING,
                                               ENUM("Active", "Terminating"))),
                                F("conditions", S_CONDITIONS))))};

static void namespace_defaults(struct api_vctx *c)
{
    /* NamespaceDefaultLabelName, so namespaceSelectors can name namespaces */
    const char *name = JX_STR(c->obj, "metadata", "name");
    if (name)
        JX_SET_NEW(c->obj, json_string(name), "metadata", "labels",
                   "kubernetes.io/metadata.name");
    if (!c->old && !JX_GET(c->obj, "status", "phase"))
        JX_SET_NEW(c->obj, json_string("Active"), "status", "phase");
}

const struct api_kind_schema api__ks_namespace = {
    .kind = KIND_NAMESPACE, .root = &s_namespace, .name_rule = api_check_dns1123_label,
    .defaults = namespace_defaults};

/* ---- ConfigMap ---- */

static const struct api_schema s_configmap = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(F("data", SCH(.type = SCH_MAP, .items = S_STR, .key_format = FMT_CONFIG_KEY)),
                F("binaryData", SCH(.type = SCH_MAP, .items = S_STR,
                                    .key_format = FMT_CONFIG_KEY)),
                F("immutable", S_BOOL))};

static void configmap_validate(struct api_vctx *c)
{
    json_t *data = json_object_get(c->obj, "data");
    json_t *bin = json_object_get(c->obj, "binaryData");
    size_t total = 0;
    const char *k;
    json_t *v;
    json_object_foreach(data, k, v) {
        total += strlen(jx_or_empty(json_string_value(v)));
        if (json_object_get(bin, k)) {
            char *f = api__path("data[%s]", k);
            api__diag_str(c->d, DIAG_INVALID, f, k, "duplicate of key present in binaryData");
            xfree(f);
        }
    }
    json_object_foreach(bin, k, v) {
        total += strlen(jx_or_empty(json_string_value(v)));
    }
    if (total > CONFIGMAP_MAX_BYTES)
        diag_add(c->d, DIAG_TOO_LONG, "", NULL, "must have at most %zu bytes",
                 CONFIGMAP_MAX_BYTES);
    if (c->old && JX_BOOL(c->old, false, "immutable")) {
        static const char *const fields[] = {"data", "binaryData", "immutable"};
        for (size_t i = 0; i < 3; i++) {
            if (!jx_equal(json_object_get(c->obj, fields[i]), json_object_get(c->old, fields[i])))
                diag_add(c->d, DIAG_FORBIDDEN, fields[i], NULL,
                         "field is immutable when `immutable` is set");
        }
    }
}

const struct api_kind_schema api__ks_configmap = {
    .kind = KIND_CONFIGMAP, .root = &s_configmap, .name_rule = api_check_dns1123_subdomain,
    .validate = configmap_validate};

/* ---- Pod ---- */

static const struct api_schema s_pod = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(FR("spec", S_POD_SPEC), F("status", S_POD_STATUS))};

/* SetDefaults_Pod: a container with limits but no request for a resource
 * requests its limit. */
static void requests_from_limits(json_t *containers)
{
    size_t i;
    json_t *ct;
    json_array_foreach(containers, i, ct) {
        json_t *lim = JX_GET(ct, "resources", "limits");
        const char *k;
        json_t *v;
        json_object_foreach(lim, k, v) {
            if (!JX_GET(ct, "resources", "requests", k))
                JX_SET_NEW(ct, json_incref(v), "resources", "requests", k);
        }
    }
}

static void pod_defaults(struct api_vctx *c)
{
    json_t *spec = json_object_get(c->obj, "spec");
    api__default_pod_spec(spec);
    requests_from_limits(json_object_get(spec, "containers"));
    requests_from_limits(json_object_get(spec, "initContainers"));
    api__kueue_pod_defaults(c);
}

/* Kubernetes allows a pod update to change only images, the active
 * deadline, added tolerations and removed scheduling gates. */
static void pod_spec_update(struct api_vctx *c)
{
    json_t *a = json_deep_copy(json_object_get(c->obj, "spec"));
    json_t *b = json_deep_copy(json_object_get(c->old, "spec"));
    json_t *specs[2] = {a, b};
    for (int s = 0; s < 2; s++) {
        static const char *const lists[] = {"containers", "initContainers"};
        for (int l = 0; l < 2; l++) {
            size_t i;
            json_t *ct;
            json_array_foreach(json_object_get(specs[s], lists[l]), i, ct) {
                json_object_del(ct, "image");
            }
        }
        json_object_del(specs[s], "activeDeadlineSeconds");
        json_object_del(specs[s], "tolerations");
        json_object_del(specs[s], "schedulingGates");
    }
    if (!jx_equal(a, b))
        diag_add(c->d, DIAG_FORBIDDEN, "spec", NULL,
                 "pod updates may not change fields other than `spec.containers[*].image`, "
                 "`spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, "
                 "`spec.tolerations` (only additions to existing tolerations) or "
                 "`spec.schedulingGates` (only removals)");
    json_decref(a);
    json_decref(b);
}

static void pod_validate(struct api_vctx *c)
{
    api__validate_pod_spec(c, json_object_get(c->obj, "spec"), "spec");
    if (c->old && !c->status_update)
        pod_spec_update(c);
}

const struct api_kind_schema api__ks_pod = {
    .kind = KIND_POD, .root = &s_pod, .name_rule = api_check_dns1123_subdomain,
    .defaults = pod_defaults, .validate = pod_validate};

/* ---- PodTemplate ---- */

static const struct api_schema s_podtemplate = {
    .type = SCH_OBJECT, ROOT_FIELDS(F("template", S_POD_TEMPLATE_SPEC))};

static void podtemplate_defaults(struct api_vctx *c)
{
    api__default_pod_spec(JX_GET(c->obj, "template", "spec"));
}

static void podtemplate_validate(struct api_vctx *c)
{
    api__validate_pod_spec(c, JX_GET(c->obj, "template", "spec"), "template.spec");
}

const struct api_kind_schema api__ks_podtemplate = {
    .kind = KIND_PODTEMPLATE, .root = &s_podtemplate, .name_rule = api_check_dns1123_subdomain,
    .defaults = podtemplate_defaults, .validate = podtemplate_validate};

/* ---- Node ---- */

static const struct api_schema s_node = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(
        F("spec", OBJ(F("podCIDR", S_STR), F("podCIDRs", S_STR_LIST), F("providerID", S_STR),
                      F("unschedulable", S_BOOL), F("taints", S_TAINTS),
                      F("configSource", S_PASS), F("externalID", S_STR))),
        F("status",
          OBJ(F("capacity", S_RESOURCE_LIST), F("allocatable", S_RESOURCE_LIST),
              F("phase", S_STR), F("conditions", S_CONDITIONS),
              F("addresses", ARR(OBJ(FR("type", S_STR), FR("address", S_STR)))),
              F("daemonEndpoints", S_PASS),
              F("nodeInfo",
                OBJ(F("machineID", S_STR), F("systemUUID", S_STR), F("bootID", S_STR),
                    F("kernelVersion", S_STR), F("osImage", S_STR),
                    F("containerRuntimeVersion", S_STR), F("kubeletVersion", S_STR),
                    F("kubeProxyVersion", S_STR), F("operatingSystem", S_STR),
                    F("architecture", S_STR), F("swap", S_PASS))),
              F("images", ARR(S_PASS)), F("volumesInUse", S_STR_LIST),
              F("volumesAttached", ARR(S_PASS)), F("config", S_PASS),
              F("runtimeHandlers", ARR(S_PASS)), F("features", S_PASS))))};

const struct api_kind_schema api__ks_node = {
    .kind = KIND_NODE, .root = &s_node, .name_rule = api_check_dns1123_subdomain,
    .keep_status_on_create = true};

/* ---- Event ---- */

static const struct api_schema s_object_reference = {
    .type = SCH_OBJECT,
    FIELDS(F("kind", S_STR), F("namespace", S_STR), F("name", S_STR), F("uid", S_STR),
           F("apiVersion", S_STR), F("resourceVersion", S_STR), F("fieldPath", S_STR))};

static const struct api_schema s_event = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(FR("involvedObject", &s_object_reference), F("reason", S_STR),
                F("message", S_STR), F("source", OBJ(F("component", S_STR), F("host", S_STR))),
                F("firstTimestamp", S_TIME), F("lastTimestamp", S_TIME), F("count", S_INT32),
                F("type", SCH(.type = SCH_STRING, ENUM("Normal", "Warning"))),
                F("eventTime", S_STR), F("series", S_PASS), F("action", S_STR),
                F("related", &s_object_reference), F("reportingComponent", S_STR),
                F("reportingInstance", S_STR))};

static void event_validate(struct api_vctx *c)
{
    const char *ns = jx_or_empty(JX_STR(c->obj, "metadata", "namespace"));
    const char *ions = JX_STR(c->obj, "involvedObject", "namespace");
    bool bad = ions && ions[0] ? strcmp(ns, ions) != 0
                               : ns[0] && strcmp(ns, "default") != 0;
    if (bad)
        api__diag_str(c->d, DIAG_INVALID, "involvedObject.namespace", jx_or_empty(ions),
                      "does not match event.namespace");
}

const struct api_kind_schema api__ks_event = {
    .kind = KIND_EVENT, .root = &s_event, .name_rule = api_check_dns1123_subdomain,
    .validate = event_validate};
