/*
 * schema_kueue: kueue.x-k8s.io/v1beta1 ResourceFlavor, ClusterQueue,
 * LocalQueue, Cohort, AdmissionCheck, ProvisioningRequestConfig,
 * WorkloadPriorityClass and Topology: Kueue's CRD schemas (defaults,
 * enums, bounds) and its validating webhooks, with Kueue's messages.
 * (Workload is in schema_workload.c.)
 */
#include <stdlib.h>
#include <string.h>

#include "api/names.h"
#include "api/quantity.h"
#include "api/schema-int.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

#define RESOURCE_IN_USE_FINALIZER "kueue.x-k8s.io/resource-in-use"

static const char *const STOP_POLICIES[] = {"None", "Hold", "HoldAndDrain", NULL};

static void add_finalizer(struct api_vctx *c)
{
    if (c->old)
        return;
    json_t *md = JX_OBJ(c->obj, "metadata");
    json_t *fin = json_object_get(md, "finalizers");
    if (!json_is_array(fin)) {
        fin = json_array();
        json_object_set_new(md, "finalizers", fin);
    }
    size_t i;
    json_t *f;
    json_array_foreach(fin, i, f) {
        if (!strcmp(jx_or_empty(json_string_value(f)), RESOURCE_IN_USE_FINALIZER))
            return;
    }
    json_array_append_new(fin, json_string(RESOURCE_IN_USE_FINALIZER));
}

/* ---- ResourceFlavor ---- */

static const struct api_schema s_rf = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(F("spec",
                  SCH(.type = SCH_OBJECT, .default_json = "{}",
                      FIELDS(F("nodeLabels", SCH(.type = SCH_MAP, .max_items = 8,
                                                 .key_format = FMT_QUALIFIED_NAME,
                                                 .items = SCH(.type = SCH_STRING,
                                                              .format = FMT_LABEL_VALUE))),
                             F("nodeTaints", S_TAINTS), F("tolerations", S_TOLERATIONS),
                             F("topologyName", SCH(.type = SCH_STRING,
                                                   .format = FMT_DNS_SUBDOMAIN,
                                                   .immutable = true))))))};

static void rf_validate(struct api_vctx *c)
{
    const json_t *spec = json_object_get(c->obj, "spec");
    static const char *const lists[] = {"nodeTaints", "tolerations"};
    for (int i = 0; i < 2; i++) {
        size_t n = json_array_size(json_object_get(spec, lists[i]));
        if (n > 8) {
            char *f = api__path("spec.%s", lists[i]);
            api__diag_int(c->d, DIAG_TOO_MANY, f, (int64_t)n, "must have at most 8 items");
            xfree(f);
        }
    }
    if (JX_STR(spec, "topologyName") && json_object_size(json_object_get(spec, "nodeLabels")) == 0)
        diag_add(c->d, DIAG_INVALID, "spec", NULL,
                 "at least one nodeLabel is required when topology is set");
}

static void rf_defaults(struct api_vctx *c) { add_finalizer(c); }

const struct api_kind_schema api__ks_resourceflavor = {
    .kind = KIND_RESOURCEFLAVOR, .root = &s_rf, .name_rule = api_check_dns1123_subdomain,
    .defaults = rf_defaults, .validate = rf_validate};

/* ---- resource groups (ClusterQueue and Cohort) ---- */

static const struct api_schema s_resource_quota = {
    .type = SCH_OBJECT, .resource_field = "name",
    FIELDS(FR("name", S_QNAME), FR("nominalQuota", S_QTY_NONNEG),
           F("borrowingLimit", S_QTY_NONNEG), F("lendingLimit", S_QTY_NONNEG))};

static const struct api_schema s_flavor_quotas = {
    .type = SCH_OBJECT,
    FIELDS(FR("name", S_DNS_SUBDOMAIN),
           FR("resources", SCH(.type = SCH_ARRAY, .list_type = LIST_MAP, .merge_key = "name",
                               .items = &s_resource_quota, .min_items = 1, .max_items = 64)))};

static const struct api_schema s_resource_groups = {
    .type = SCH_ARRAY, .max_items = 16,
    .items = OBJ(FR("coveredResources", SCH(.type = SCH_ARRAY, .list_type = LIST_SET,
                                            .items = S_QNAME, .min_items = 1,
                                            .max_items = 64)),
                 FR("flavors", SCH(.type = SCH_ARRAY, .list_type = LIST_MAP,
                                   .merge_key = "name", .items = &s_flavor_quotas,
                                   .min_items = 1, .max_items = 64)))};

static const struct api_schema s_fair_sharing = {
    .type = SCH_OBJECT, FIELDS(F("weight", S_QTY_NONNEG))};

/* One ResourceQuota's limits: allowed only under a cohort/parent; the
 * lending limit of a ClusterQueue may not exceed its nominal quota. */
static void validate_quota_limits(struct api_vctx *c, const json_t *rq, const char *path,
                                  bool has_parent, bool is_cohort)
{
    static const char *const limits[] = {"borrowingLimit", "lendingLimit"};
    for (int i = 0; i < 2; i++) {
        json_t *l = json_object_get(rq, limits[i]);
        if (!l || has_parent)
            continue;
        char *f = api__path("%s.%s", path, limits[i]), text[64];
        api__diag_str(c->d, DIAG_INVALID, f, api__quantity_text(l, text, sizeof(text)),
                      "must be nil when %s is empty", is_cohort ? "parent" : "cohort");
        xfree(f);
    }
    const char *res = JX_STR(rq, "name");
    int64_t lend, nominal;
    if (!is_cohort && api__quantity(json_object_get(rq, "lendingLimit"), res, &lend) &&
        api__quantity(json_object_get(rq, "nominalQuota"), res, &nominal) && lend > nominal) {
        char *f = api__path("%s.lendingLimit", path), text[64];
        api__diag_str(c->d, DIAG_INVALID, f,
                      api__quantity_text(json_object_get(rq, "lendingLimit"), text, sizeof(text)),
                      "must be less than or equal to the nominalQuota");
        xfree(f);
    }
}

static void validate_flavor_quotas(struct api_vctx *c, const json_t *fq, const json_t *covered,
                                   const char *path, bool has_parent, bool is_cohort)
{
    size_t k;
    json_t *rq;
    json_array_foreach(json_object_get(fq, "resources"), k, rq) {
        char *rp = api__path("%s.resources[%zu]", path, k);
        const char *want = json_string_value(json_array_get(covered, k));
        const char *got = JX_STR(rq, "name");
        if (want && got && strcmp(want, got)) {
            char *f = api__path("%s.name", rp);
            api__diag_str(c->d, DIAG_INVALID, f, got, "must match the name in coveredResources");
            xfree(f);
        }
        validate_quota_limits(c, rq, rp, has_parent, is_cohort);
        xfree(rp);
    }
}

/* Checks that a name was not used by an earlier group. */
static bool seen_before(const json_t *groups, size_t upto, const char *list, const char *key,
                        const char *name)
{
    for (size_t g = 0; g < upto; g++) {
        size_t i;
        json_t *v;
        json_array_foreach(json_object_get(json_array_get(groups, g), list), i, v) {
            const char *s = key ? JX_STR(v, key) : json_string_value(v);
            if (s && !strcmp(s, name))
                return true;
        }
    }
    return false;
}

static void validate_group(struct api_vctx *c, const json_t *groups, size_t i, bool has_parent,
                           bool is_cohort, size_t *n_flavors, size_t *n_covered)
{
    const json_t *rg = json_array_get(groups, i);
    const json_t *covered = json_object_get(rg, "coveredResources");
    size_t j, sum = 0;
    json_t *v;
    json_array_foreach(covered, j, v) {
        if (seen_before(groups, i, "coveredResources", NULL, json_string_value(v))) {
            char *f = api__path("spec.resourceGroups[%zu].coveredResources[%zu]", i, j);
            diag_addj(c->d, DIAG_DUPLICATE, f, v, NULL);
            xfree(f);
        }
    }
    json_array_foreach(json_object_get(rg, "flavors"), j, v) {
        char *fp = api__path("spec.resourceGroups[%zu].flavors[%zu]", i, j);
        const char *name = JX_STR(v, "name");
        if (name && seen_before(groups, i, "flavors", "name", name)) {
            char *f = api__path("%s.name", fp);
            api__diag_str(c->d, DIAG_DUPLICATE, f, name, NULL);
            xfree(f);
        }
        size_t nres = json_array_size(json_object_get(v, "resources"));
        if (nres != json_array_size(covered)) {
            char *f = api__path("%s.resources", fp);
            api__diag_int(c->d, DIAG_INVALID, f, (int64_t)nres,
                          "must list the %zu coveredResources of its group, in the same order",
                          json_array_size(covered));
            xfree(f);
        }
        validate_flavor_quotas(c, v, covered, fp, has_parent, is_cohort);
        sum += nres;
        xfree(fp);
    }
    if (sum > 512) {
        char *f = api__path("spec.resourceGroups[%zu]", i);
        api__diag_int(c->d, DIAG_TOO_MANY, f, (int64_t)sum,
                      "must have at most 512 flavor resources in a group");
        xfree(f);
    }
    *n_flavors += json_array_size(json_object_get(rg, "flavors"));
    *n_covered += json_array_size(covered);
}

static void validate_resource_groups(struct api_vctx *c, const json_t *groups, bool has_parent,
                                     bool is_cohort)
{
    size_t n_flavors = 0, n_covered = 0;
    for (size_t i = 0; i < json_array_size(groups); i++)
        validate_group(c, groups, i, has_parent, is_cohort, &n_flavors, &n_covered);
    if (n_flavors > 256)
        api__diag_int(c->d, DIAG_TOO_MANY, "spec.resourceGroups", (int64_t)n_flavors,
                      "must have at most 256 flavors in total");
    if (n_covered > 256)
        api__diag_int(c->d, DIAG_TOO_MANY, "spec.resourceGroups", (int64_t)n_covered,
                      "must have at most 256 coveredResources in total");
}

/* fairSharing.weight: >= 0 (schema) and, when not 0, > 1e-9: in
 * nano-units rounded up, a valid non-zero weight is at least 2. */
static void validate_fair_weight(struct api_vctx *c, const json_t *spec)
{
    char text[64];
    const char *w = api__quantity_text(JX_GET(spec, "fairSharing", "weight"), text, sizeof(text));
    int64_t nano;
    if (w && api__quantity_parse_scaled(w, 9, &nano) == 0 && nano == 1)
        api__diag_str(c->d, DIAG_INVALID, "spec.fairSharing.weight", w,
                      "When not 0, weight must be > 10e-9");
}

/* ---- ClusterQueue ---- */

static const struct api_schema s_flavors_usage = {
    .type = SCH_ARRAY, .list_type = LIST_MAP, .merge_key = "name", .max_items = 64,
    .items = OBJ(FR("name", S_STR),
                 F("resources", KEYED("name", SCH(.type = SCH_OBJECT, .resource_field = "name",
                                                  FIELDS(FR("name", S_STR), F("total", S_QTY),
                                                         F("borrowed", S_QTY))))))};

static const struct api_schema s_fungibility = {
    .type = SCH_OBJECT, .default_json = "{}",
    FIELDS(F("whenCanBorrow", SCH(.type = SCH_STRING,
                                  ENUM("MayStopSearch", "TryNextFlavor", "Borrow"),
                                  .default_json = "\"MayStopSearch\"")),
           F("whenCanPreempt", SCH(.type = SCH_STRING,
                                   ENUM("MayStopSearch", "TryNextFlavor", "Preempt"),
                                   .default_json = "\"TryNextFlavor\"")),
           F("preference", SCH(.type = SCH_STRING,
                               ENUM("BorrowingOverPreemption", "PreemptionOverBorrowing"))))};

static const struct api_schema s_borrow_within_cohort = {
    .type = SCH_OBJECT,
    FIELDS(F("policy", SCH(.type = SCH_STRING, ENUM("Never", "LowerPriority"),
                           .default_json = "\"Never\"")),
           F("maxPriorityThreshold", S_INT32))};

static const struct api_schema s_preemption = {
    .type = SCH_OBJECT, .default_json = "{}",
    FIELDS(F("reclaimWithinCohort", SCH(.type = SCH_STRING, ENUM("Never", "LowerPriority", "Any"),
                                        .default_json = "\"Never\"")),
           F("borrowWithinCohort", &s_borrow_within_cohort),
           F("withinClusterQueue",
             SCH(.type = SCH_STRING, ENUM("Never", "LowerPriority", "LowerOrNewerEqualPriority"),
                 .default_json = "\"Never\"")))};

static const struct api_schema s_check_rule = {
    .type = SCH_OBJECT,
    FIELDS(FR("name", S_STR),
           F("onFlavors", SCH(.type = SCH_ARRAY, .list_type = LIST_SET, .items = S_STR,
                              .max_items = 64)))};

static const struct api_schema s_cq_spec = {
    .type = SCH_OBJECT, .default_json = "{}",
    FIELDS(F("resourceGroups", &s_resource_groups), F("cohort", S_DNS_SUBDOMAIN),
           F("queueingStrategy", SCH(.type = SCH_STRING, ENUM("StrictFIFO", "BestEffortFIFO"),
                                     .default_json = "\"BestEffortFIFO\"")),
           F("namespaceSelector", S_LABEL_SELECTOR),
           F("flavorFungibility", &s_fungibility), F("preemption", &s_preemption),
           F("admissionChecks", SCH(.type = SCH_ARRAY, .list_type = LIST_SET, .items = S_STR,
                                    .max_items = 64)),
           F("admissionChecksStrategy",
             OBJ(F("admissionChecks",
                   SCH(.type = SCH_ARRAY, .list_type = LIST_MAP, .merge_key = "name",
                       .max_items = 64, .items = &s_check_rule)))),
           F("stopPolicy", SCH(.type = SCH_STRING, .enum_values = STOP_POLICIES,
                               .default_json = "\"None\"")),
           F("fairSharing", &s_fair_sharing),
           F("admissionScope",
             OBJ(FR("admissionMode", SCH(.type = SCH_STRING,
                                         ENUM("UsageBasedAdmissionFairSharing",
                                              "NoAdmissionFairSharing"))))))};

static const struct api_schema s_cq = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(
        F("spec", &s_cq_spec),
        F("status",
          OBJ(F("conditions", S_CONDITIONS), F("flavorsReservation", &s_flavors_usage),
              F("flavorsUsage", &s_flavors_usage), F("pendingWorkloads", S_INT32),
              F("reservingWorkloads", S_INT32), F("admittedWorkloads", S_INT32),
              F("pendingWorkloadsStatus", S_PASS),
              F("fairSharing", OBJ(F("weightedShare", S_INT64),
                                   F("admissionFairSharingStatus", S_PASS))))))};

/* Every onFlavors entry names a flavor of this ClusterQueue. */
static void validate_on_flavors(struct api_vctx *c, const json_t *spec)
{
    const char **names = NULL;
    size_t n = 0;
    size_t i, j;
    json_t *rg, *f;
    json_array_foreach(json_object_get(spec, "resourceGroups"), i, rg) {
        json_array_foreach(json_object_get(rg, "flavors"), j, f) {
            names = xreallocarray(names, n + 2, sizeof(*names));
            names[n++] = jx_or_empty(JX_STR(f, "name"));
        }
    }
    if (names)
        names[n] = NULL;
    static const char *const none[] = {NULL};
    json_t *ac;
    json_array_foreach(JX_GET(spec, "admissionChecksStrategy", "admissionChecks"), i, ac) {
        json_array_foreach(json_object_get(ac, "onFlavors"), j, f) {
            const char *name = json_string_value(f);
            if (api__str_in(name, names))
                continue;
            char *p = api__path("spec.admissionChecksStrategy.admissionChecks[%zu].onFlavors[%zu]",
                                i, j);
            api__diag_not_supported(c->d, p, name, names ? names : none);
            xfree(p);
        }
    }
    xfree(names);
}

static void validate_cq_policies(struct api_vctx *c, const json_t *spec)
{
    const char *reclaim = JX_STR(spec, "preemption", "reclaimWithinCohort");
    const char *borrow = JX_STR(spec, "preemption", "borrowWithinCohort", "policy");
    if (reclaim && !strcmp(reclaim, "Never") && borrow && strcmp(borrow, "Never"))
        diag_addj(c->d, DIAG_INVALID, "spec.preemption", JX_GET(spec, "preemption"),
                  "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never");
    const char *wcb = jx_or_empty(JX_STR(spec, "flavorFungibility", "whenCanBorrow"));
    const char *wcp = jx_or_empty(JX_STR(spec, "flavorFungibility", "whenCanPreempt"));
    if (JX_STR(spec, "flavorFungibility", "preference") &&
        (strcmp(wcb, "TryNextFlavor") || strcmp(wcp, "TryNextFlavor")))
        diag_addj(c->d, DIAG_INVALID, "spec.flavorFungibility.preference",
                  JX_GET(spec, "flavorFungibility", "preference"),
                  "can only be set when whenCanBorrow and whenCanPreempt are both TryNextFlavor");
    if (json_array_size(json_object_get(spec, "admissionChecks")) &&
        json_object_get(spec, "admissionChecksStrategy"))
        diag_add(c->d, DIAG_INVALID, "spec", NULL,
                 "Either AdmissionChecks or AdmissionCheckStrategy can be set, but not both");
}

static void cq_validate(struct api_vctx *c)
{
    const json_t *spec = json_object_get(c->obj, "spec");
    const char *cohort = JX_STR(spec, "cohort");
    validate_resource_groups(c, json_object_get(spec, "resourceGroups"), cohort && cohort[0],
                             false);
    validate_on_flavors(c, spec);
    validate_cq_policies(c, spec);
    validate_fair_weight(c, spec);
}

static void cq_defaults(struct api_vctx *c) { add_finalizer(c); }

const struct api_kind_schema api__ks_clusterqueue = {
    .kind = KIND_CLUSTERQUEUE, .root = &s_cq, .name_rule = api_check_dns1123_subdomain,
    .defaults = cq_defaults, .validate = cq_validate};

/* ---- Cohort ---- */

static const struct api_schema s_cohort = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(F("spec", SCH(.type = SCH_OBJECT, .default_json = "{}",
                              FIELDS(F("parentName", S_DNS_SUBDOMAIN),
                                     F("resourceGroups", &s_resource_groups),
                                     F("fairSharing", &s_fair_sharing)))),
                F("status", OBJ(F("fairSharing", OBJ(F("weightedShare", S_INT64))),
                                F("conditions", S_CONDITIONS))))};

static void cohort_validate(struct api_vctx *c)
{
    const json_t *spec = json_object_get(c->obj, "spec");
    const char *parent = JX_STR(spec, "parentName");
    validate_resource_groups(c, json_object_get(spec, "resourceGroups"), parent && parent[0],
                             true);
    validate_fair_weight(c, spec);
    const char *name = JX_STR(c->obj, "metadata", "name");
    if (parent && name && !strcmp(parent, name))
        api__diag_str(c->d, DIAG_INVALID, "spec.parentName", parent,
                      "cohort cannot be its own parent");
}

const struct api_kind_schema api__ks_cohort = {
    .kind = KIND_COHORT, .root = &s_cohort, .name_rule = api_check_dns1123_subdomain,
    .validate = cohort_validate};

/* ---- LocalQueue ---- */

static const struct api_schema s_lq = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(
        FR("spec", OBJ(FR("clusterQueue", SCH(.type = SCH_STRING, .format = FMT_DNS_SUBDOMAIN,
                                              .immutable = true)),
                       F("stopPolicy", SCH(.type = SCH_STRING, .enum_values = STOP_POLICIES,
                                           .default_json = "\"None\"")),
                       F("fairSharing", &s_fair_sharing))),
        F("status",
          OBJ(F("conditions", S_CONDITIONS), F("pendingWorkloads", S_INT32),
              F("reservingWorkloads", S_INT32), F("admittedWorkloads", S_INT32),
              F("flavorsReservation", &s_flavors_usage), F("flavorUsage", &s_flavors_usage),
              F("flavorsUsage", &s_flavors_usage), F("flavors", ARR(S_PASS)),
              F("fairSharing", S_PASS))))};

const struct api_kind_schema api__ks_localqueue = {
    .kind = KIND_LOCALQUEUE, .root = &s_lq, .name_rule = api_check_dns1123_subdomain};

/* ---- AdmissionCheck ---- */

static const struct api_schema s_ac = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(
        FR("spec",
           OBJ(FR("controllerName", SCH(.type = SCH_STRING, .max_length = 253,
                                        .immutable = true)),
               F("retryDelayMinutes", SCH(.type = SCH_INTEGER, .has_min = true, .min = 0,
                                          .default_json = "15")),
               F("parameters",
                 OBJ(FR("apiGroup", SCH(.type = SCH_STRING, .max_length = 253,
                                        .format = FMT_DNS_SUBDOMAIN)),
                     FR("kind", SCH(.type = SCH_STRING, .max_length = 63)),
                     FR("name", SCH(.type = SCH_STRING, .max_length = 63,
                                    .format = FMT_DNS_SUBDOMAIN)))))),
        F("status", OBJ(F("conditions", S_CONDITIONS))))};

/* Kueue's AdmissionCheck controller adds the resource-in-use finalizer. */
static void ac_defaults(struct api_vctx *c) { add_finalizer(c); }

const struct api_kind_schema api__ks_admissioncheck = {
    .kind = KIND_ADMISSIONCHECK, .root = &s_ac, .name_rule = api_check_dns1123_subdomain,
    .defaults = ac_defaults};

/* ---- ProvisioningRequestConfig ---- */

static const struct api_schema s_prc = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(FR(
        "spec",
        OBJ(FR("provisioningClassName", SCH(.type = SCH_STRING, .max_length = 253,
                                            .format = FMT_DNS_SUBDOMAIN)),
            F("parameters", SCH(.type = SCH_MAP, .max_items = 100,
                                .items = SCH(.type = SCH_STRING, .max_length = 255))),
            F("managedResources", SCH(.type = SCH_ARRAY, .list_type = LIST_SET,
                                      .items = S_QNAME, .max_items = 100)),
            F("retryStrategy",
              SCH(.type = SCH_OBJECT, .default_json = "{}",
                  FIELDS(F("backoffLimitCount", SCH(.type = SCH_INTEGER, .int32 = true,
                                                    .has_min = true, .min = 0,
                                                    .default_json = "3")),
                         F("backoffBaseSeconds", SCH(.type = SCH_INTEGER, .int32 = true,
                                                     .has_min = true, .min = 0,
                                                     .default_json = "60")),
                         F("backoffMaxSeconds", SCH(.type = SCH_INTEGER, .int32 = true,
                                                    .has_min = true, .min = 0,
                                                    .default_json = "1800"))))),
            F("podSetUpdates",
              OBJ(F("nodeSelector",
                    SCH(.type = SCH_ARRAY, .list_type = LIST_MAP, .merge_key = "key",
                        .max_items = 8,
                        .items = OBJ(FR("key", SCH(.type = SCH_STRING, .max_length = 317,
                                                   .format = FMT_QUALIFIED_NAME)),
                                     FR("valueFromProvisioningClassDetail",
                                        SCH(.type = SCH_STRING, .max_length = 32768))))))),
            F("podSetMergePolicy", SCH(.type = SCH_STRING,
                                       ENUM("IdenticalPodTemplates",
                                            "IdenticalWorkloadSchedulingRequirements"))))))};

const struct api_kind_schema api__ks_provreqconfig = {
    .kind = KIND_PROVISIONINGREQUESTCONFIG, .root = &s_prc,
    .name_rule = api_check_dns1123_subdomain};

/* ---- WorkloadPriorityClass ---- */

static const struct api_schema s_wpc = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(FR("value", S_INT32), F("description", SCH(.type = SCH_STRING,
                                                           .max_length = 2048)))};

const struct api_kind_schema api__ks_wpc = {
    .kind = KIND_WORKLOADPRIORITYCLASS, .root = &s_wpc, .name_rule = api_check_dns1123_subdomain};

/* ---- Topology ---- */

static const struct api_schema s_topology = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(FR("spec", OBJ(FR("levels", SCH(.type = SCH_ARRAY, .list_type = LIST_MAP,
                                                .merge_key = "nodeLabel", .min_items = 1,
                                                .max_items = 16, .immutable = true,
                                                .items = OBJ(FR("nodeLabel",
                                                                SCH(.type = SCH_STRING,
                                                                    .max_length = 316,
                                                                    .format = FMT_QUALIFIED_NAME)))))))
                )};

static void topology_validate(struct api_vctx *c)
{
    json_t *levels = JX_GET(c->obj, "spec", "levels");
    size_t i;
    json_t *l;
    json_array_foreach(levels, i, l) {
        const char *label = JX_STR(l, "nodeLabel");
        if (label && !strcmp(label, "kubernetes.io/hostname") && i + 1 != json_array_size(levels)) {
            char *f = api__path("spec.levels[%zu].nodeLabel", i);
            api__diag_str(c->d, DIAG_INVALID, f, label,
                          "kubernetes.io/hostname can only be used at the lowest level");
            xfree(f);
        }
    }
}

const struct api_kind_schema api__ks_topology = {
    .kind = KIND_TOPOLOGY, .root = &s_topology, .name_rule = api_check_dns1123_subdomain,
    .validate = topology_validate};
