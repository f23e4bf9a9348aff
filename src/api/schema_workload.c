/*
 * schema_workload: kueue.x-k8s.io/v1beta1 Workload (spec and status) with
 * Kueue's CRD defaults and the Workload webhook's create, update and status
 * rules (kueue.md §1.5), messages as Kueue writes them.
 */
#include <string.h>

#include "api/names.h"
#include "api/schema-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define MAX_PODSETS 18
#define ELASTIC_ANNOTATION "kueue.x-k8s.io/elastic-job"

static const struct api_schema s_podset = {
    .type = SCH_OBJECT,
    FIELDS(F("name", SCH(.type = SCH_STRING, .format = FMT_DNS_LABEL, .default_json = "\"main\"")),
           FR("template", S_POD_TEMPLATE_SPEC),
           F("count", SCH(.type = SCH_INTEGER, .int32 = true, .has_min = true, .min = 0,
                          .default_json = "1")),
           F("minCount", SCH(.type = SCH_INTEGER, .int32 = true, .has_min = true, .min = 1)),
           F("topologyRequest", S_PASS))};

static const struct api_schema s_named = {.type = SCH_OBJECT, FIELDS(FR("name", S_QNAME))};

static const struct api_schema s_wl_spec = {
    .type = SCH_OBJECT,
    FIELDS(FR("podSets", SCH(.type = SCH_ARRAY, .list_type = LIST_MAP, .merge_key = "name",
                             .items = &s_podset, .min_items = 1, .max_items = MAX_PODSETS)),
           F("queueName", S_STR), F("priorityClassName", S_DNS_SUBDOMAIN),
           F("priority", S_INT32),
           F("priorityClassSource",
             SCH(.type = SCH_STRING,
                 ENUM("kueue.x-k8s.io/workloadpriorityclass", "scheduling.k8s.io/priorityclass",
                      ""),
                 .default_json = "\"\"")),
           F("active", SCH(.type = SCH_BOOLEAN, .default_json = "true")),
           F("maximumExecutionTimeSeconds", SCH(.type = SCH_INTEGER, .int32 = true,
                                                .has_min = true, .min = 1)),
           F("preemptionGates", SCH(.type = SCH_ARRAY, .list_type = LIST_MAP, .merge_key = "name",
                                    .max_items = 8, .items = &s_named)))};

static const struct api_schema s_assignment = {
    .type = SCH_OBJECT,
    FIELDS(FR("name", S_STR), F("flavors", S_STR_MAP), F("resourceUsage", S_RESOURCE_LIST),
           F("count", S_NONNEG_INT32), F("topologyAssignment", S_PASS),
           F("delayedTopologyRequest", SCH(.type = SCH_STRING, ENUM("Pending", "Ready"))))};

static const struct api_schema s_podset_update = {
    .type = SCH_OBJECT,
    FIELDS(FR("name", S_STR), F("labels", S_LABELS), F("annotations", S_ANNOTATIONS),
           F("nodeSelector", S_LABELS), F("tolerations", S_TOLERATIONS))};

static const struct api_schema s_reclaimable = {
    .type = SCH_OBJECT, FIELDS(FR("name", S_STR), FR("count", S_NONNEG_INT32))};

static const struct api_schema s_resource_request = {
    .type = SCH_OBJECT, FIELDS(FR("name", S_STR), F("resources", S_RESOURCE_LIST))};

static const struct api_schema s_check_state = {
    .type = SCH_OBJECT,
    FIELDS(FR("name", S_STR),
           FR("state", SCH(.type = SCH_STRING, ENUM("Pending", "Ready", "Retry", "Rejected"))),
           F("lastTransitionTime", S_TIME), F("message", SCH(.type = SCH_STRING,
                                                             .max_length = 32768)),
           F("requeueAfterSeconds", S_NONNEG_INT32), F("retryCount", S_NONNEG_INT32),
           F("podSetUpdates",
             SCH(.type = SCH_ARRAY, .list_type = LIST_MAP, .merge_key = "name",
                 .max_items = MAX_PODSETS, .items = &s_podset_update)))};

static const struct api_schema s_wl_status = {
    .type = SCH_OBJECT,
    FIELDS(F("conditions", S_CONDITIONS),
           F("admission", OBJ(FR("clusterQueue", S_STR),
                              FR("podSetAssignments",
                                 SCH(.type = SCH_ARRAY, .list_type = LIST_MAP,
                                     .merge_key = "name", .max_items = MAX_PODSETS,
                                     .items = &s_assignment)))),
           F("requeueState", OBJ(F("count", S_NONNEG_INT32), F("requeueAt", S_TIME))),
           F("reclaimablePods", SCH(.type = SCH_ARRAY, .list_type = LIST_MAP, .merge_key = "name",
                                    .max_items = MAX_PODSETS, .items = &s_reclaimable)),
           F("admissionChecks", SCH(.type = SCH_ARRAY, .list_type = LIST_MAP, .merge_key = "name",
                                    .max_items = 8, .items = &s_check_state)),
           F("resourceRequests", SCH(.type = SCH_ARRAY, .list_type = LIST_MAP,
                                     .merge_key = "name", .max_items = MAX_PODSETS,
                                     .items = &s_resource_request)),
           F("accumulatedPastExexcutionTimeSeconds", S_NONNEG_INT32),
           F("accumulatedPastExecutionTimeSeconds", S_NONNEG_INT32),
           F("schedulingStats",
             OBJ(F("evictions", ARR(OBJ(FR("reason", S_STR), F("underlyingCause", S_STR),
                                        FR("count", S_NONNEG_INT32)))))),
           F("nominatedClusterNames", S_STR_SET), F("clusterName", S_STR),
           F("unhealthyNodes", KEYED("name", OBJ(FR("name", S_STR)))),
           F("preemptionGates", ARR(S_PASS)))};

static const struct api_schema s_workload = {
    .type = SCH_OBJECT, ROOT_FIELDS(FR("spec", &s_wl_spec), F("status", &s_wl_status))};

/* ---- helpers ---- */

static const json_t *find_podset(const json_t *obj, const char *name)
{
    size_t i;
    json_t *ps;
    json_array_foreach(JX_GET(obj, "spec", "podSets"), i, ps) {
        const char *n = JX_STR(ps, "name");
        if (n && name && !strcmp(n, name))
            return ps;
    }
    return NULL;
}

static const char **podset_names(const json_t *obj)
{
    json_t *sets = JX_GET(obj, "spec", "podSets");
    const char **names = xcalloc(json_array_size(sets) + 1, sizeof(*names));
    size_t i;
    json_t *ps;
    json_array_foreach(sets, i, ps) {
        names[i] = jx_or_empty(JX_STR(ps, "name"));
    }
    return names;
}

static bool has_quota_reservation(const json_t *obj)
{
    size_t i;
    json_t *cnd;
    json_array_foreach(JX_GET(obj, "status", "conditions"), i, cnd) {
        const char *t = JX_STR(cnd, "type"), *s = JX_STR(cnd, "status");
        if (t && s && !strcmp(t, "QuotaReserved") && !strcmp(s, "True"))
            return true;
    }
    return false;
}

/* ---- spec rules ---- */

static void validate_podsets(struct api_vctx *c)
{
    size_t i, with_min = 0;
    json_t *ps;
    json_t *sets = JX_GET(c->obj, "spec", "podSets");
    json_array_foreach(sets, i, ps) {
        char *base = api__path("spec.podSets[%zu]", i);
        char *tpl = api__path("%s.template.spec", base);
        api__validate_pod_spec(c, JX_GET(ps, "template", "spec"), tpl);
        static const char *const lists[] = {"initContainers", "containers"};
        for (int l = 0; l < 2; l++) {
            size_t j;
            json_t *ct;
            json_array_foreach(JX_GET(ps, "template", "spec", lists[l]), j, ct) {
                if (!JX_GET(ct, "resources", "requests", "pods"))
                    continue;
                char *f = api__path("%s.%s[%zu].resources.requests[pods]", tpl, lists[l], j);
                api__diag_str(c->d, DIAG_INVALID, f, "pods",
                              "the key is reserved for internal kueue use");
                xfree(f);
            }
        }
        json_t *min = json_object_get(ps, "minCount");
        if (min) {
            with_min++;
            if (json_integer_value(min) > JX_INT(ps, 1, "count")) {
                char *f = api__path("%s.minCount", base);
                api__diag_int(c->d, DIAG_INVALID, f, json_integer_value(min),
                              "should be less than or equal to count");
                xfree(f);
            }
        }
        xfree(tpl);
        xfree(base);
    }
    if (with_min > 1)
        api__diag_int(c->d, DIAG_INVALID, "spec.podSets", (int64_t)with_min,
                      "at most one podSet can use minCount");
    const char *elastic = JX_STR(c->obj, "metadata", "annotations", ELASTIC_ANNOTATION);
    if (with_min && elastic && !strcmp(elastic, "true"))
        diag_add(c->d, DIAG_INVALID, "spec.podSets", NULL,
                 "partial admission and elastic job cannot be used together");
}

static void validate_priority(struct api_vctx *c)
{
    const json_t *spec = json_object_get(c->obj, "spec");
    const char *pc = JX_STR(spec, "priorityClassName");
    if (pc && pc[0] && !json_object_get(spec, "priority"))
        diag_add(c->d, DIAG_INVALID, "spec", NULL,
                 "priority should not be nil when priorityClassName is set");
}

/* ---- status rules ---- */

static void validate_admission(struct api_vctx *c)
{
    json_t *adm = JX_GET(c->obj, "status", "admission");
    if (!has_quota_reservation(c->obj))
        return;
    if (!adm) {
        diag_add(c->d, DIAG_REQUIRED, "status.admission", NULL,
                 "admission is required while the QuotaReserved condition is True");
        return;
    }
    size_t i;
    json_t *psa;
    json_array_foreach(json_object_get(adm, "podSetAssignments"), i, psa) {
        const char *name = JX_STR(psa, "name");
        if (!find_podset(c->obj, name)) {
            char *f = api__path("status.admission.podSetAssignments[%zu].name", i);
            api__diag_str(c->d, DIAG_NOT_FOUND, f, jx_or_empty(name), NULL);
            xfree(f);
        }
        int64_t count = JX_INT(psa, 0, "count");
        const char *res;
        json_t *q;
        json_object_foreach(json_object_get(psa, "resourceUsage"), res, q) {
            int64_t v;
            if (count <= 0 || !api__quantity(q, res, &v) || v % count == 0)
                continue;
            char *f = api__path("status.admission.podSetAssignments[%zu].resourceUsage[%s]", i,
                                res);
            api__diag_str(c->d, DIAG_INVALID, f, json_string_value(q),
                          "is not a multiple of %lld", (long long)count);
            xfree(f);
        }
    }
}

static void validate_reclaimable(struct api_vctx *c, const char **names)
{
    size_t i;
    json_t *rp;
    json_array_foreach(JX_GET(c->obj, "status", "reclaimablePods"), i, rp) {
        const char *name = jx_or_empty(JX_STR(rp, "name"));
        const json_t *ps = find_podset(c->obj, name);
        char *f = NULL;
        if (!ps) {
            f = api__path("status.reclaimablePods[%s].name", name);
            api__diag_not_supported(c->d, f, name, names);
        } else if (JX_INT(rp, 0, "count") > JX_INT(ps, 1, "count")) {
            f = api__path("status.reclaimablePods[%s].count", name);
            api__diag_int(c->d, DIAG_INVALID, f, JX_INT(rp, 0, "count"),
                          "should be less or equal to %lld", (long long)JX_INT(ps, 1, "count"));
        }
        xfree(f);
    }
}

static void validate_podset_updates(struct api_vctx *c, const char **names)
{
    size_t i, j;
    json_t *ac, *psu;
    json_array_foreach(JX_GET(c->obj, "status", "admissionChecks"), i, ac) {
        json_array_foreach(json_object_get(ac, "podSetUpdates"), j, psu) {
            const char *name = jx_or_empty(JX_STR(psu, "name"));
            if (find_podset(c->obj, name))
                continue;
            char *f = api__path("status.admissionChecks[%zu].podSetUpdates[%zu].name", i, j);
            api__diag_not_supported(c->d, f, name, names);
            xfree(f);
        }
    }
}

/* ---- update rules ---- */

/* PodSets are frozen while the old object holds quota (counts may shrink
 * for elastic workloads). */
static void validate_podsets_update(struct api_vctx *c)
{
    json_t *nw = JX_GET(c->obj, "spec", "podSets");
    json_t *od = JX_GET(c->old, "spec", "podSets");
    if (json_array_size(nw) != json_array_size(od)) {
        diag_add(c->d, DIAG_INVALID, "spec.podSets", NULL, "field is immutable");
        return;
    }
    for (size_t i = 0; i < json_array_size(nw); i++) {
        json_t *a = json_deep_copy(json_array_get(nw, i));
        json_t *b = json_array_get(od, i);
        if (JX_INT(a, 1, "count") < JX_INT(b, 1, "count"))
            json_object_set(a, "count", json_object_get(b, "count"));
        if (!jx_equal(a, b)) {
            char *f = api__path("spec.podSets[%zu]", i);
            diag_add(c->d, DIAG_INVALID, f, NULL, "field is immutable");
            xfree(f);
        }
        json_decref(a);
    }
}

static void validate_reclaimable_update(struct api_vctx *c)
{
    size_t i;
    json_t *rp;
    json_array_foreach(JX_GET(c->old, "status", "reclaimablePods"), i, rp) {
        const char *name = jx_or_empty(JX_STR(rp, "name"));
        json_t *now = NULL;
        size_t j;
        json_t *x;
        json_array_foreach(JX_GET(c->obj, "status", "reclaimablePods"), j, x) {
            if (!strcmp(jx_or_empty(JX_STR(x, "name")), name))
                now = x;
        }
        char *f = NULL;
        if (!now) {
            f = api__path("status.reclaimablePods[%s]", name);
            diag_add(c->d, DIAG_REQUIRED, f, NULL, "cannot be removed");
        } else if (JX_INT(now, 0, "count") < JX_INT(rp, 0, "count")) {
            f = api__path("status.reclaimablePods[%s].count", name);
            api__diag_int(c->d, DIAG_INVALID, f, JX_INT(now, 0, "count"),
                          "cannot be less then %lld", (long long)JX_INT(rp, 0, "count"));
        }
        xfree(f);
    }
}

static void validate_update(struct api_vctx *c)
{
    bool old_reserved = has_quota_reservation(c->old);
    if (old_reserved) {
        validate_podsets_update(c);
        api__immutable(c, JX_GET(c->obj, "spec", "queueName"), JX_GET(c->old, "spec", "queueName"),
                       "spec.queueName");
    }
    if (old_reserved && has_quota_reservation(c->obj))
        validate_reclaimable_update(c);
    json_t *na = JX_GET(c->obj, "status", "admission");
    json_t *oa = JX_GET(c->old, "status", "admission");
    if (na && oa)
        api__immutable(c, na, oa, "status.admission");
    size_t i;
    json_t *oc;
    json_array_foreach(JX_GET(c->old, "status", "admissionChecks"), i, oc) {
        size_t j;
        json_t *nc;
        json_array_foreach(JX_GET(c->obj, "status", "admissionChecks"), j, nc) {
            if (jx_equal(json_object_get(nc, "name"), json_object_get(oc, "name")) &&
                !strcmp(jx_or_empty(JX_STR(oc, "state")), "Ready") &&
                !strcmp(jx_or_empty(JX_STR(nc, "state")), "Ready")) {
                char *f = api__path("status.admissionChecks[%zu].podSetUpdates", j);
                api__immutable(c, json_object_get(nc, "podSetUpdates"),
                               json_object_get(oc, "podSetUpdates"), f);
                xfree(f);
            }
        }
    }
}

static void workload_validate(struct api_vctx *c)
{
    validate_podsets(c);
    validate_priority(c);
    validate_admission(c);
    const char **names = podset_names(c->obj);
    validate_reclaimable(c, names);
    validate_podset_updates(c, names);
    xfree(names);
    if (c->old)
        validate_update(c);
}

const struct api_kind_schema api__ks_workload = {
    .kind = KIND_WORKLOAD, .root = &s_workload, .name_rule = api_check_dns1123_subdomain,
    .validate = workload_validate};
