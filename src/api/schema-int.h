/*
 * schema-int: what the schema_*.c files share: short constructors for
 * declaring schema trees with designated initialisers, the common
 * sub-schemas (ObjectMeta, LabelSelector, tolerations, pod templates...),
 * each kind's entry, and validators reused across kinds.
 *
 * A schema is written as nested compound literals, e.g.
 *     SCH(.type = SCH_OBJECT, FIELDS(F("name", &s_str), FR("count", &s_int32)))
 * Compound literals at file scope have static storage, so the whole tree is
 * one constant built by the compiler. One limit: cppcheck's preprocessor
 * cannot expand an OBJ(...) or SCH(... FIELDS(...)) written inside the
 * arguments of a SCH(...) that is itself inside FIELDS(...); name such an
 * inner object as its own static schema and point at it (&s_check_rule).
 */
#ifndef CUEUE_API_SCHEMA_INT_H
#define CUEUE_API_SCHEMA_INT_H

#include "api/api-int.h"
#include "api/schema.h"

#define SCH(...) (&(const struct api_schema){__VA_ARGS__})
#define FIELDS(...) .fields = (const struct api_schema_field[]){__VA_ARGS__, {0}}
#define ENUM(...) .enum_values = (const char *const[]){__VA_ARGS__, NULL}
#define F(n, s) {.name = (n), .schema = (s)}
#define FR(n, s) {.name = (n), .schema = (s), .required = true}
#define OBJ(...) SCH(.type = SCH_OBJECT, FIELDS(__VA_ARGS__))
#define ARR(item) SCH(.type = SCH_ARRAY, .items = (item))
#define SET(item) SCH(.type = SCH_ARRAY, .items = (item), .list_type = LIST_SET)
#define KEYED(key, item) \
    SCH(.type = SCH_ARRAY, .items = (item), .list_type = LIST_MAP, .merge_key = (key))
#define MAPOF(item) SCH(.type = SCH_MAP, .items = (item))
/* the fields every top-level object has, then the kind's own */
#define ROOT_FIELDS(...) \
    FIELDS(F("apiVersion", S_STR), F("kind", S_STR), F("metadata", S_OBJECT_META), __VA_ARGS__)

/* leaves and common structures (schema_meta.c, schema_pod.c); use the
 * S_* names in schema literals */
extern const struct api_schema api__s_str, api__s_int32, api__s_int64, api__s_bool,
    api__s_num, api__s_time, api__s_any, api__s_passthrough, api__s_quantity,
    api__s_quantity_nonneg, api__s_int_or_str, api__s_dns_label, api__s_dns_subdomain,
    api__s_qname, api__s_nonneg_int32, api__s_nonneg_int64, api__s_str_map, api__s_str_list,
    api__s_str_set, api__s_resource_list, api__s_label_map, api__s_annotation_map,
    api__s_object_meta, api__s_label_selector, api__s_conditions, api__s_tolerations,
    api__s_taints, api__s_node_selector, api__s_affinity, api__s_template_meta,
    api__s_pod_spec, api__s_pod_template_spec, api__s_pod_status, api__s_resources,
    api__s_job_template;
#define S_STR (&api__s_str)
#define S_INT32 (&api__s_int32)
#define S_INT64 (&api__s_int64)
#define S_BOOL (&api__s_bool)
#define S_NUM (&api__s_num)
#define S_TIME (&api__s_time)
#define S_ANY (&api__s_any)
#define S_PASS (&api__s_passthrough)
#define S_QTY (&api__s_quantity)
#define S_QTY_NONNEG (&api__s_quantity_nonneg)
#define S_INT_OR_STR (&api__s_int_or_str)
#define S_DNS_LABEL (&api__s_dns_label)
#define S_DNS_SUBDOMAIN (&api__s_dns_subdomain)
#define S_QNAME (&api__s_qname)
#define S_NONNEG_INT32 (&api__s_nonneg_int32)
#define S_NONNEG_INT64 (&api__s_nonneg_int64)
#define S_STR_MAP (&api__s_str_map)
#define S_STR_LIST (&api__s_str_list)
#define S_STR_SET (&api__s_str_set)
#define S_RESOURCE_LIST (&api__s_resource_list)
#define S_LABELS (&api__s_label_map)
#define S_ANNOTATIONS (&api__s_annotation_map)
#define S_OBJECT_META (&api__s_object_meta)
#define S_LABEL_SELECTOR (&api__s_label_selector)
#define S_CONDITIONS (&api__s_conditions)
#define S_TOLERATIONS (&api__s_tolerations)
#define S_TAINTS (&api__s_taints)
#define S_NODE_SELECTOR (&api__s_node_selector)
#define S_AFFINITY (&api__s_affinity)
#define S_TEMPLATE_META (&api__s_template_meta)
#define S_POD_SPEC (&api__s_pod_spec)
#define S_POD_TEMPLATE_SPEC (&api__s_pod_template_spec)
#define S_POD_STATUS (&api__s_pod_status)
#define S_RESOURCES (&api__s_resources)
#define S_JOB_TEMPLATE (&api__s_job_template) /* batch/v1 JobTemplateSpec */

/* kind entries */
extern const struct api_kind_schema api__ks_namespace, api__ks_configmap, api__ks_pod,
    api__ks_node, api__ks_event, api__ks_podtemplate, api__ks_job, api__ks_rayjob, api__ks_jobset,
    api__ks_resourceflavor, api__ks_clusterqueue, api__ks_localqueue, api__ks_cohort,
    api__ks_admissioncheck, api__ks_provreqconfig, api__ks_wpc, api__ks_workload,
    api__ks_topology, api__ks_provreq, api__ks_nodepool, api__ks_service, api__ks_endpoints,
    api__ks_endpointslice;

/* ---- validators shared across kinds ---- */

/* Kubernetes apivalidation of a PodSpec at path (containers, resources,
 * volumes, tolerations, restartPolicy...). core: defaults of the core API
 * were applied (Pod, PodTemplate, Job), so e.g. restartPolicy is present. */
void api__validate_pod_spec(struct api_vctx *c, const json_t *spec, const char *path);
/* SetDefaults_PodSpec and friends, for core kinds only (CRDs such as
 * RayJob and Workload get no PodSpec defaults, as in Kubernetes). */
void api__default_pod_spec(json_t *spec);
/* Kueue's mutating webhook for jobs on create, when the job's framework is
 * enabled (c->env->job_policy): in a namespace the policy selects, default
 * the queue-name and priority-class labels from the "default" LocalQueue /
 * WorkloadPriorityClass when they exist (c->env lookups); then suspend the
 * job when Kueue manages it (api_job_policy_manages: a queue name, or
 * manageJobsWithoutQueueName). spec is the object holding `suspend`. */
void api__kueue_job_defaults(struct api_vctx *c, json_t *spec);
/* Kueue's pod webhook on create, when the policy (c->env->job_policy)
 * lists "pod" and manages the Pod (api_job_policy_manages): label it
 * kueue.x-k8s.io/managed=true and add the kueue.x-k8s.io/admission
 * scheduling gate (ctrl/jobs/plainpod.c lifts it on admission). A managed
 * Pod of a pod group (label kueue.x-k8s.io/pod-group-name) needs the
 * annotation kueue.x-k8s.io/pod-group-total-count, a positive integer. */
void api__kueue_pod_defaults(struct api_vctx *c);
/* Kueue's queue-name label rules on a job: a valid DNS subdomain, and on
 * an update of a job that is not suspended, unchanged (not removed). */
void api__validate_queue_name_label(struct api_vctx *c);
/* Immutability of one subtree: "field is immutable" when old != v. */
void api__immutable(struct api_vctx *c, const json_t *v, const json_t *old, const char *path);
/* Parse a quantity (string or number, no diag) in resource's unit; false
 * when absent or invalid. */
bool api__quantity(const json_t *v, const char *resource, int64_t *out);
/* A quantity's text: the string itself, or a number rendered into buf
 * (custom resources keep numbers as sent); NULL for other types. */
const char *api__quantity_text(const json_t *v, char *buf, size_t len);

#endif
