/*
 * schema_batch: batch/v1 Job with the API server's defaults
 * (SetDefaults_Job, the generated selector of PrepareForCreate) and
 * validation (ValidateJob / ValidateJobUpdate), plus Kueue's job webhook
 * rules for the queue-name label and partial admission annotation.
 */
#include <stdlib.h>
#include <string.h>

#include "api/names.h"
#include "api/schema-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define JOB_NAME_LABEL "batch.kubernetes.io/job-name"
#define LEGACY_JOB_NAME_LABEL "job-name"
#define CONTROLLER_UID_LABEL "batch.kubernetes.io/controller-uid"
#define LEGACY_CONTROLLER_UID_LABEL "controller-uid"
#define MAX_INDEXED_COMPLETIONS 100000
#define JOB_MIN_PARALLELISM_ANNOTATION "kueue.x-k8s.io/job-min-parallelism"

static const struct api_schema s_job_spec = {
    .type = SCH_OBJECT,
    FIELDS(F("parallelism", S_NONNEG_INT32), F("completions", S_NONNEG_INT32),
           F("activeDeadlineSeconds", S_NONNEG_INT64), F("podFailurePolicy", S_PASS),
           F("successPolicy", S_PASS), F("backoffLimit", S_NONNEG_INT32),
           F("backoffLimitPerIndex", S_NONNEG_INT32), F("maxFailedIndexes", S_NONNEG_INT32),
           F("selector", S_LABEL_SELECTOR), F("manualSelector", S_BOOL),
           FR("template", S_POD_TEMPLATE_SPEC), F("ttlSecondsAfterFinished", S_NONNEG_INT32),
           F("completionMode", SCH(.type = SCH_STRING, ENUM("NonIndexed", "Indexed"),
                                   .immutable = true)),
           F("suspend", S_BOOL),
           F("podReplacementPolicy", SCH(.type = SCH_STRING,
                                         ENUM("TerminatingOrFailed", "Failed"))),
           F("managedBy", SCH(.type = SCH_STRING, .max_length = 63, .immutable = true)))};

static const struct api_schema s_job_status = {
    .type = SCH_OBJECT,
    FIELDS(F("conditions", S_CONDITIONS), F("startTime", S_TIME), F("completionTime", S_TIME),
           F("active", S_NONNEG_INT32), F("ready", S_NONNEG_INT32),
           F("succeeded", S_NONNEG_INT32), F("failed", S_NONNEG_INT32),
           F("terminating", S_NONNEG_INT32), F("completedIndexes", S_STR),
           F("failedIndexes", S_STR),
           F("uncountedTerminatedPods", OBJ(F("succeeded", S_STR_SET), F("failed", S_STR_SET))))};

static const struct api_schema s_job = {
    .type = SCH_OBJECT, ROOT_FIELDS(FR("spec", &s_job_spec), F("status", &s_job_status))};

/* batch/v1 JobTemplateSpec (schema-int.h): a JobSet's replicated job. */
const struct api_schema api__s_job_template = {
    .type = SCH_OBJECT, FIELDS(F("metadata", S_TEMPLATE_META), FR("spec", &s_job_spec))};

static void set_if_absent(json_t *o, const char *key, json_t *v)
{
    if (!json_object_get(o, key))
        json_object_set_new(o, key, v);
    else
        json_decref(v);
}

/* PrepareForCreate's generateSelector (schema.h). */
void api_job_generate_selector(json_t *job)
{
    const char *uid = JX_STR(job, "metadata", "uid");
    const char *name = JX_STR(job, "metadata", "name");
    if (!uid || !name)
        return; /* the server assigns uid before admission; without it there is nothing to generate */
    json_t *tl = JX_OBJ(job, "spec", "template", "metadata", "labels");
    set_if_absent(tl, LEGACY_JOB_NAME_LABEL, json_string(name));
    set_if_absent(tl, JOB_NAME_LABEL, json_string(name));
    set_if_absent(tl, LEGACY_CONTROLLER_UID_LABEL, json_string(uid));
    set_if_absent(tl, CONTROLLER_UID_LABEL, json_string(uid));
    json_t *ml = JX_OBJ(job, "spec", "selector", "matchLabels");
    set_if_absent(ml, CONTROLLER_UID_LABEL, json_string(uid));
}

static void job_defaults(struct api_vctx *c)
{
    json_t *spec = json_object_get(c->obj, "spec");
    if (!json_object_get(spec, "completions") && !json_object_get(spec, "parallelism"))
        json_object_set_new(spec, "completions", json_integer(1));
    set_if_absent(spec, "parallelism", json_integer(1));
    set_if_absent(spec, "backoffLimit", json_integer(json_object_get(spec, "backoffLimitPerIndex")
                                                         ? INT32_MAX
                                                         : 6));
    json_t *tl = JX_GET(spec, "template", "metadata", "labels");
    json_t *ml = JX_GET(c->obj, "metadata", "labels");
    if (json_is_object(tl) && json_object_size(ml) == 0)
        JX_SET_NEW(c->obj, json_deep_copy(tl), "metadata", "labels");
    set_if_absent(spec, "completionMode", json_string("NonIndexed"));
    set_if_absent(spec, "suspend", json_false());
    set_if_absent(spec, "podReplacementPolicy",
                  json_string(json_object_get(spec, "podFailurePolicy") ? "Failed"
                                                                        : "TerminatingOrFailed"));
    api__default_pod_spec(JX_GET(spec, "template", "spec"));
    if (!c->old && !JX_BOOL(spec, false, "manualSelector"))
        api_job_generate_selector(c->obj);
    api__kueue_job_defaults(c, spec);
}

/* A selector matches the template's labels (matchLabels only; the API
 * server converts the whole selector, expressions included). */
static bool selector_matches_template(const json_t *spec)
{
    json_t *ml = JX_GET(spec, "selector", "matchLabels");
    json_t *tl = JX_GET(spec, "template", "metadata", "labels");
    const char *k;
    json_t *v;
    json_object_foreach(ml, k, v) {
        if (!jx_equal(json_object_get(tl, k), v))
            return false;
    }
    return true;
}

static void validate_selector(struct api_vctx *c, const json_t *spec)
{
    json_t *sel = json_object_get(spec, "selector");
    const char *uid = JX_STR(c->obj, "metadata", "uid");
    if (!sel) {
        if (uid || JX_BOOL(spec, false, "manualSelector"))
            diag_add(c->d, DIAG_REQUIRED, "spec.selector", NULL, NULL);
        return;
    }
    if (json_object_size(sel) == 0)
        diag_addj(c->d, DIAG_INVALID, "spec.selector", sel, "empty selector is invalid for job");
    if (!selector_matches_template(spec))
        diag_addj(c->d, DIAG_INVALID, "spec.template.metadata.labels",
                  JX_GET(spec, "template", "metadata", "labels"),
                  "`selector` does not match template `labels`");
}

static void validate_generated_selector(struct api_vctx *c, const json_t *spec)
{
    const char *uid = JX_STR(c->obj, "metadata", "uid");
    const char *got = JX_STR(spec, "selector", "matchLabels", CONTROLLER_UID_LABEL);
    if (JX_BOOL(spec, false, "manualSelector") || !uid || !json_object_get(spec, "selector"))
        return;
    if (!got || strcmp(got, uid))
        diag_addj(c->d, DIAG_INVALID, "spec.selector", json_object_get(spec, "selector"),
                  "`selector` not auto-generated");
}

static void validate_indexed(struct api_vctx *c, const json_t *spec)
{
    bool indexed = !strcmp(jx_or_empty(JX_STR(spec, "completionMode")), "Indexed");
    json_t *comp = json_object_get(spec, "completions");
    if (indexed && !comp)
        diag_add(c->d, DIAG_REQUIRED, "spec.completions", NULL,
                 "when completion mode is Indexed");
    if (indexed && JX_INT(spec, 0, "completions") > MAX_INDEXED_COMPLETIONS)
        api__diag_int(c->d, DIAG_INVALID, "spec.completions", JX_INT(spec, 0, "completions"),
                      "must be less than or equal to %d when completion mode is Indexed",
                      MAX_INDEXED_COMPLETIONS);
    if (indexed && JX_INT(spec, 0, "parallelism") > MAX_INDEXED_COMPLETIONS)
        api__diag_int(c->d, DIAG_INVALID, "spec.parallelism", JX_INT(spec, 0, "parallelism"),
                      "must be less than or equal to %d when completion mode is Indexed",
                      MAX_INDEXED_COMPLETIONS);
    if (json_object_get(spec, "backoffLimitPerIndex") && !indexed)
        diag_add(c->d, DIAG_FORBIDDEN, "spec.backoffLimitPerIndex", NULL,
                 "requires indexed completion mode");
    json_t *mfi = json_object_get(spec, "maxFailedIndexes");
    if (mfi && !json_object_get(spec, "backoffLimitPerIndex"))
        diag_add(c->d, DIAG_REQUIRED, "spec.backoffLimitPerIndex", NULL,
                 "when maxFailedIndexes is specified");
    if (mfi && comp && json_integer_value(mfi) > json_integer_value(comp))
        api__diag_int(c->d, DIAG_INVALID, "spec.maxFailedIndexes", json_integer_value(mfi),
                      "must be less than or equal to completions");
}

static void validate_restart_policy(struct api_vctx *c, const json_t *spec)
{
    static const char *const allowed[] = {"OnFailure", "Never", NULL};
    const char *rp = JX_STR(spec, "template", "spec", "restartPolicy");
    if (!rp)
        diag_add(c->d, DIAG_REQUIRED, "spec.template.spec.restartPolicy", NULL,
                 "valid values: \"OnFailure\", \"Never\"");
    else if (!api__str_in(rp, allowed))
        api__diag_not_supported(c->d, "spec.template.spec.restartPolicy", rp, allowed);
    if (json_object_get(spec, "podFailurePolicy")) {
        static const char *const never[] = {"Never", NULL};
        static const char *const failed[] = {"Failed", NULL};
        if (rp && strcmp(rp, "Never"))
            api__diag_not_supported(c->d, "spec.template.spec.restartPolicy", rp, never);
        const char *prp = JX_STR(spec, "podReplacementPolicy");
        if (prp && strcmp(prp, "Failed"))
            api__diag_not_supported(c->d, "spec.podReplacementPolicy", prp, failed);
    }
}

/* kueue.x-k8s.io/job-min-parallelism: an integer in (0, parallelism). */
static void validate_min_parallelism(struct api_vctx *c, const json_t *spec)
{
    const char *v = JX_STR(c->obj, "metadata", "annotations", JOB_MIN_PARALLELISM_ANNOTATION);
    if (!v)
        return;
    const char *f = "metadata.annotations[" JOB_MIN_PARALLELISM_ANNOTATION "]";
    char *end = NULL;
    long n = strtol(v, &end, 10);
    long count = (long)JX_INT(spec, 1, "parallelism");
    if (!v[0] || *end)
        api__diag_str(c->d, DIAG_INVALID, f, v, "must be an integer");
    else if (n <= 0 || n >= count)
        api__diag_str(c->d, DIAG_INVALID, f, v, "should be between 0 and %ld", count - 1);
}

/* While a job is suspended only its scheduling directives may change. */
static void validate_template_update(struct api_vctx *c, const json_t *spec)
{
    const json_t *nt = json_object_get(spec, "template");
    const json_t *ot = JX_GET(c->old, "spec", "template");
    if (jx_equal(nt, ot))
        return;
    bool suspended = JX_BOOL(c->old, false, "spec", "suspend");
    json_t *a = json_deep_copy(nt), *b = json_deep_copy(ot);
    static const char *const sched[] = {"nodeSelector", "tolerations", "affinity",
                                        "schedulingGates"};
    json_object_del(a, "metadata");
    json_object_del(b, "metadata");
    for (size_t i = 0; i < 4; i++) {
        json_object_del(json_object_get(a, "spec"), sched[i]);
        json_object_del(json_object_get(b, "spec"), sched[i]);
    }
    if (!suspended || !jx_equal(a, b))
        diag_add(c->d, DIAG_INVALID, "spec.template", NULL, "field is immutable");
    json_decref(a);
    json_decref(b);
}

/* spec.completions is immutable except on an Indexed Job (elastic Indexed
 * Jobs, GA in Kubernetes 1.31), where it may change together with
 * parallelism: the new completions must equal the new parallelism
 * (Kubernetes' validateCompletions). (completionMode is immutable through
 * its schema.) */
static void validate_completions_update(struct api_vctx *c, const json_t *spec,
                                        const json_t *os)
{
    const json_t *nc = json_object_get(spec, "completions"), *oc = json_object_get(os, "completions");
    if (strcmp(jx_or_empty(JX_STR(spec, "completionMode")), "Indexed")) {
        api__immutable(c, nc, oc, "spec.completions");
        return;
    }
    if (jx_equal(nc, oc) || !json_is_integer(nc))
        return; /* an Indexed Job without completions is reported by validate_indexed */
    if (json_integer_value(nc) != JX_INT(spec, 1, "parallelism"))
        diag_addj(c->d, DIAG_INVALID, "spec.completions", nc,
                  "can only be modified in tandem with spec.parallelism");
}

static void job_validate(struct api_vctx *c)
{
    const json_t *spec = json_object_get(c->obj, "spec");
    validate_selector(c, spec);
    validate_generated_selector(c, spec);
    validate_indexed(c, spec);
    validate_restart_policy(c, spec);
    api__validate_pod_spec(c, JX_GET(spec, "template", "spec"), "spec.template.spec");
    api__validate_queue_name_label(c);
    validate_min_parallelism(c, spec);
    if (c->old && !c->status_update) {
        const json_t *os = json_object_get(c->old, "spec");
        api__immutable(c, json_object_get(spec, "selector"), json_object_get(os, "selector"),
                       "spec.selector");
        validate_template_update(c, spec);
        validate_completions_update(c, spec, os);
    }
}

const struct api_kind_schema api__ks_job = {
    .kind = KIND_JOB, .root = &s_job, .name_rule = api_check_dns1123_subdomain,
    .name_max = 63, .defaults = job_defaults, .validate = job_validate};
