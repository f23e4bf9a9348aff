/*
 * schema_jobset: jobset.x-k8s.io/v1alpha2 JobSet as the JobSet project
 * defines it (its CRD, its defaulting and validating webhooks), plus
 * Kueue's JobSet webhook for JobSets with the kueue.x-k8s.io/queue-name
 * label. The fields cueue acts on are typed (replicatedJobs with their
 * batch/v1 Job templates, successPolicy, failurePolicy.maxRestarts,
 * network, suspend); the rest of the spec (startupPolicy, coordinator,
 * failurePolicy.rules...) is kept as sent and documented as not acted on
 * (docs/jobset.md).
 *
 * Defaults (JobSet's webhook): replicas 1, successPolicy {operator: All},
 * network.enableDNSHostnames and publishNotReadyAddresses true, the child
 * Job's completionMode Indexed (completions = parallelism = 1 when neither
 * is set) and its pods' restartPolicy OnFailure. Like a RayJob, the pod
 * templates get no core PodSpec defaults (a CRD has none); the child Jobs
 * the controller creates from them do.
 */
#include <stdio.h>
#include <string.h>

#include "api/names.h"
#include "api/schema-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define QUEUE_LABEL "kueue.x-k8s.io/queue-name"
/* Kueue's limit on a Workload's pod sets, one per replicated job */
#define MAX_KUEUE_PODSETS 8
/* child Job names are <jobset>-<replicatedJob>-<index>; their pods'
 * hostnames <job>-<podIndex> must stay a DNS label */
#define DNS_LABEL_MAX 63

static const struct api_schema s_replicated_job = {
    .type = SCH_OBJECT,
    FIELDS(FR("name", S_DNS_LABEL), FR("template", S_JOB_TEMPLATE),
           F("replicas", SCH(.type = SCH_INTEGER, .int32 = true, .has_min = true, .min = 0,
                             .default_json = "1")),
           F("groupName", S_STR), F("dependsOn", S_PASS))};

static const struct api_schema s_success_policy = {
    .type = SCH_OBJECT,
    FIELDS(F("operator", SCH(.type = SCH_STRING, ENUM("All", "Any"))),
           F("targetReplicatedJobs", S_STR_LIST))};

static const struct api_schema s_failure_policy = {
    .type = SCH_OBJECT,
    FIELDS(F("maxRestarts", S_NONNEG_INT32), F("restartStrategy", S_STR), F("rules", S_PASS))};

static const struct api_schema s_network = {
    .type = SCH_OBJECT,
    FIELDS(F("enableDNSHostnames", S_BOOL), F("subdomain", S_DNS_LABEL),
           F("publishNotReadyAddresses", S_BOOL))};

static const struct api_schema s_jobset_spec = {
    .type = SCH_OBJECT,
    FIELDS(F("replicatedJobs", KEYED("name", &s_replicated_job)), F("network", &s_network),
           F("successPolicy", &s_success_policy), F("failurePolicy", &s_failure_policy),
           F("startupPolicy", S_PASS), F("suspend", S_BOOL), F("coordinator", S_PASS),
           F("managedBy", SCH(.type = SCH_STRING, .max_length = 63, .immutable = true)),
           F("ttlSecondsAfterFinished", S_NONNEG_INT32), F("volumeClaimPolicies", S_PASS))};

static const struct api_schema s_rjob_status = {
    .type = SCH_OBJECT,
    FIELDS(FR("name", S_STR), F("ready", S_NONNEG_INT32), F("succeeded", S_NONNEG_INT32),
           F("failed", S_NONNEG_INT32), F("active", S_NONNEG_INT32),
           F("suspended", S_NONNEG_INT32), F("jobRestarts", S_PASS))};

static const struct api_schema s_jobset_status = {
    .type = SCH_OBJECT,
    FIELDS(F("conditions", S_CONDITIONS), F("restarts", S_NONNEG_INT32),
           F("restartsCountTowardsMax", S_NONNEG_INT32), F("terminalState", S_STR),
           F("replicatedJobsStatus", KEYED("name", &s_rjob_status)))};

static const struct api_schema s_jobset = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(F("spec", &s_jobset_spec), F("status", &s_jobset_status))};

static void set_if_absent(json_t *o, const char *key, json_t *v)
{
    if (json_is_object(o) && !json_object_get(o, key))
        json_object_set_new(o, key, v);
    else
        json_decref(v);
}

static void jobset_defaults(struct api_vctx *c)
{
    if (!json_object_get(c->obj, "spec"))
        json_object_set_new(c->obj, "spec", json_object());
    json_t *spec = json_object_get(c->obj, "spec");
    set_if_absent(spec, "successPolicy", json_object());
    set_if_absent(json_object_get(spec, "successPolicy"), "operator", json_string("All"));
    set_if_absent(spec, "network", json_object());
    json_t *net = json_object_get(spec, "network");
    set_if_absent(net, "enableDNSHostnames", json_true());
    set_if_absent(net, "publishNotReadyAddresses", json_true());
    size_t i;
    json_t *rj;
    json_array_foreach(json_object_get(spec, "replicatedJobs"), i, rj) {
        json_t *js = JX_GET(rj, "template", "spec");
        if (!json_is_object(js))
            continue;
        set_if_absent(js, "completionMode", json_string("Indexed"));
        if (!json_object_get(js, "completions") && !json_object_get(js, "parallelism")) {
            json_object_set_new(js, "completions", json_integer(1));
            json_object_set_new(js, "parallelism", json_integer(1));
        }
        set_if_absent(js, "parallelism", json_integer(1));
        set_if_absent(JX_GET(js, "template", "spec"), "restartPolicy", json_string("OnFailure"));
    }
    api__kueue_job_defaults(c, spec);
}

static void validate_rjob(struct api_vctx *c, const json_t *rj, size_t i, size_t name_len)
{
    const json_t *js = JX_GET(rj, "template", "spec");
    const char *mode = JX_STR(js, "completionMode");
    if (mode && !strcmp(mode, "Indexed") && !json_object_get(js, "completions")) {
        char *f = api__path("spec.replicatedJobs[%zu].template.spec.completions", i);
        diag_add(c->d, DIAG_REQUIRED, f, NULL, "when completion mode is Indexed");
        xfree(f);
    }
    int64_t comp = JX_INT(js, 0, "completions"), par = JX_INT(js, 1, "parallelism");
    if (mode && !strcmp(mode, "Indexed") && comp > 0 && par > comp) {
        char *f = api__path("spec.replicatedJobs[%zu].template.spec.parallelism", i);
        api__diag_int(c->d, DIAG_INVALID, f, par,
                      "must be less than or equal to completions (%lld) in a JobSet",
                      (long long)comp);
        xfree(f);
    }
    /* the longest child Job name <jobset>-<rjob>-<replicas-1> and its
     * pods' hostnames <job>-<completions-1> must be DNS labels */
    char idx[24], pidx[24];
    snprintf(idx, sizeof(idx), "%lld", (long long)(JX_INT(rj, 1, "replicas") - 1));
    snprintf(pidx, sizeof(pidx), "%lld", (long long)(comp > 0 ? comp - 1 : 0));
    const char *rname = jx_or_empty(JX_STR(rj, "name"));
    size_t len = name_len + 1 + strlen(rname) + 1 + strlen(idx) + 1 + strlen(pidx);
    if (len > DNS_LABEL_MAX) {
        char *f = api__path("spec.replicatedJobs[%zu].name", i);
        api__diag_str(c->d, DIAG_INVALID, f, rname,
                      "the pod hostnames <jobset>-<replicatedJob>-<jobIndex>-<podIndex> "
                      "generated for this JobSet would exceed %d characters",
                      DNS_LABEL_MAX);
        xfree(f);
    }
    const char *rp = JX_STR(js, "template", "spec", "restartPolicy");
    static const char *const allowed[] = {"OnFailure", "Never", NULL};
    if (rp && !api__str_in(rp, allowed)) {
        char *f = api__path("spec.replicatedJobs[%zu].template.spec.template.spec.restartPolicy",
                            i);
        api__diag_not_supported(c->d, f, rp, allowed);
        xfree(f);
    }
}

static bool has_rjob(const json_t *rjobs, const char *name)
{
    size_t i;
    json_t *rj;
    json_array_foreach(rjobs, i, rj) {
        if (!strcmp(jx_or_empty(JX_STR(rj, "name")), name))
            return true;
    }
    return false;
}

static void validate_success_policy(struct api_vctx *c, const json_t *spec)
{
    const json_t *rjobs = json_object_get(spec, "replicatedJobs");
    size_t i;
    json_t *t;
    json_array_foreach(JX_GET(spec, "successPolicy", "targetReplicatedJobs"), i, t) {
        const char *name = json_string_value(t);
        if (!name || has_rjob(rjobs, name))
            continue;
        char *f = api__path("spec.successPolicy.targetReplicatedJobs[%zu]", i);
        api__diag_str(c->d, DIAG_INVALID, f, name,
                      "does not name a replicated job of spec.replicatedJobs");
        xfree(f);
    }
}

/* Kueue's JobSet webhook: one pod set per replicated job, at most 8. */
static void validate_kueue(struct api_vctx *c, const json_t *spec)
{
    size_t n = json_array_size(json_object_get(spec, "replicatedJobs"));
    if (n > MAX_KUEUE_PODSETS)
        api__diag_int(c->d, DIAG_TOO_MANY, "spec.replicatedJobs", (int64_t)n,
                      "must have at most %d items", MAX_KUEUE_PODSETS);
}

static void jobset_validate(struct api_vctx *c)
{
    const json_t *spec = json_object_get(c->obj, "spec");
    const json_t *rjobs = json_object_get(spec, "replicatedJobs");
    if (json_array_size(rjobs) == 0)
        diag_add(c->d, DIAG_REQUIRED, "spec.replicatedJobs", NULL,
                 "a JobSet needs at least one replicated job");
    size_t name_len = strlen(jx_or_empty(JX_STR(c->obj, "metadata", "name")));
    size_t i;
    json_t *rj;
    json_array_foreach(rjobs, i, rj)
        validate_rjob(c, rj, i, name_len);
    validate_success_policy(c, spec);
    bool managed = JX_STR(c->obj, "metadata", "labels", QUEUE_LABEL) != NULL;
    if (managed)
        validate_kueue(c, spec);
    if (managed || (c->old && JX_STR(c->old, "metadata", "labels", QUEUE_LABEL)))
        api__validate_queue_name_label(c);
    if (c->old) {
        const json_t *os = json_object_get(c->old, "spec");
        static const char *const fixed[] = {"replicatedJobs", "network", "successPolicy",
                                            "failurePolicy"};
        for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++) {
            char *f = api__path("spec.%s", fixed[k]);
            /* a suspended JobSet's pod templates may change (Kueue injects
             * the flavors' node selectors on admission) */
            if (k > 0 || !JX_BOOL(os, false, "suspend"))
                api__immutable(c, json_object_get(spec, fixed[k]),
                               json_object_get(os, fixed[k]), f);
            xfree(f);
        }
    }
}

const struct api_kind_schema api__ks_jobset = {
    .kind = KIND_JOBSET, .root = &s_jobset, .name_rule = api_check_dns1035_label,
    .defaults = jobset_defaults, .validate = jobset_validate};
