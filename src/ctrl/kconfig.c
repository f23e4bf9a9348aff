/*
 * kconfig: Kueue's Configuration (config.kueue.x-k8s.io/v1beta1) for
 * `cueue server --config` (kconfig.h). Field names, defaults and rules are
 * Kueue's (apis/config/v1beta1 and pkg/config/validation.go); every object
 * of the file is checked against a table of its known fields, so an
 * unknown one is a strict-decoding error and a known one cueue does not
 * honour becomes a warning.
 */
#include "ctrl/kconfig.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "api/decode.h"
#include "api/quantity.h"
#include "api/selector.h"
#include "util/duration.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

#define KCONFIG_API_VERSION "config.kueue.x-k8s.io/v1beta1"

/* What cueue does with a known field. */
enum use {
    USED,       /* read below */
    NO_EFFECT,  /* a Kueue manager setting with no counterpart in cueue */
    NOT_YET,    /* a Kueue behaviour cueue does not implement (validated) */
};

struct field {
    const char *name;
    json_type type; /* JSON_TRUE stands for a boolean, JSON_INTEGER for an int */
    enum use use;
    const char *why; /* the warning's reason for NO_EFFECT / NOT_YET */
};

#define MANAGER "a setting of the Kueue manager process with no counterpart in cueue"

static const struct field top_fields[] = {
    {"apiVersion", JSON_STRING, USED, NULL},
    {"kind", JSON_STRING, USED, NULL},
    {"namespace", JSON_STRING, NO_EFFECT, MANAGER},
    {"webhook", JSON_OBJECT, NO_EFFECT, MANAGER},
    {"leaderElection", JSON_OBJECT, NO_EFFECT, MANAGER},
    {"metrics", JSON_OBJECT, NO_EFFECT, MANAGER " (cueue serves /metrics on its API port)"},
    {"health", JSON_OBJECT, NO_EFFECT, MANAGER " (cueue serves /healthz and /readyz)"},
    {"pprofBindAddress", JSON_STRING, NO_EFFECT, MANAGER},
    {"controller", JSON_OBJECT, NO_EFFECT, MANAGER},
    {"manageJobsWithoutQueueName", JSON_TRUE, USED, NULL},
    {"managedJobsNamespaceSelector", JSON_OBJECT, USED, NULL},
    {"internalCertManagement", JSON_OBJECT, NO_EFFECT, MANAGER},
    {"waitForPodsReady", JSON_OBJECT, USED, NULL},
    {"clientConnection", JSON_OBJECT, NO_EFFECT, MANAGER},
    {"integrations", JSON_OBJECT, USED, NULL},
    {"queueVisibility", JSON_OBJECT, NO_EFFECT,
     "deprecated in Kueue; cueue serves the visibility API on demand"},
    {"multiKueue", JSON_OBJECT, NOT_YET, "cueue has no MultiKueue"},
    {"fairSharing", JSON_OBJECT, USED, NULL},
    {"admissionFairSharing", JSON_OBJECT, USED, NULL},
    {"resources", JSON_OBJECT, USED, NULL},
    {"featureGates", JSON_OBJECT, NO_EFFECT,
     "cueue has no feature gates: what it implements is always on"},
    {"objectRetentionPolicies", JSON_OBJECT, NOT_YET,
     "cueue keeps finished Workloads until their job is deleted"},
    {NULL, 0, 0, NULL}};

static const struct field pods_ready_fields[] = {
    {"enable", JSON_TRUE, USED, NULL},
    {"timeout", JSON_STRING, USED, NULL},
    {"blockAdmission", JSON_TRUE, USED, NULL},
    {"requeuingStrategy", JSON_OBJECT, USED, NULL},
    {"recoveryTimeout", JSON_STRING, NOT_YET,
     "cueue does not time the recovery of a workload whose pods stopped being ready"},
    {NULL, 0, 0, NULL}};

static const struct field requeuing_fields[] = {
    {"timestamp", JSON_STRING, USED, NULL},
    {"backoffLimitCount", JSON_INTEGER, USED, NULL},
    {"backoffBaseSeconds", JSON_INTEGER, USED, NULL},
    {"backoffMaxSeconds", JSON_INTEGER, USED, NULL},
    {NULL, 0, 0, NULL}};

static const struct field fair_fields[] = {
    {"enable", JSON_TRUE, USED, NULL},
    {"preemptionStrategies", JSON_ARRAY, USED, NULL},
    {NULL, 0, 0, NULL}};

static const struct field afs_fields[] = {
    {"usageHalfLifeTime", JSON_STRING, USED, NULL},
    {"usageSamplingInterval", JSON_STRING, USED, NULL},
    {"resourceWeights", JSON_OBJECT, USED, NULL},
    {NULL, 0, 0, NULL}};

static const struct field integrations_fields[] = {
    {"frameworks", JSON_ARRAY, USED, NULL},
    {"externalFrameworks", JSON_ARRAY, NOT_YET, "cueue manages only its own job kinds"},
    {"podOptions", JSON_OBJECT, NO_EFFECT,
     "deprecated in Kueue; use managedJobsNamespaceSelector"},
    {"labelKeysToCopy", JSON_ARRAY, NOT_YET, "cueue copies no job labels to Workloads"},
    {NULL, 0, 0, NULL}};

static const struct field resources_fields[] = {
    {"excludeResourcePrefixes", JSON_ARRAY, USED, NULL},
    {"transformations", JSON_ARRAY, USED, NULL},
    {NULL, 0, 0, NULL}};

static const struct field transformation_fields[] = {
    {"input", JSON_STRING, USED, NULL},
    {"strategy", JSON_STRING, USED, NULL},
    {"outputs", JSON_OBJECT, USED, NULL},
    {NULL, 0, 0, NULL}};

/* The frameworks Kueue knows (integrations.frameworks). bit 0: Kueue has
 * it but cueue has no such job kind (warned). */
static const struct {
    const char *name;
    unsigned bit;
} frameworks[] = {
    {"batch/job", API_FW_BATCH_JOB},
    {"ray.io/rayjob", API_FW_RAYJOB},
    {"jobset.x-k8s.io/jobset", API_FW_JOBSET},
    {"pod", API_FW_POD},
    {"ray.io/raycluster", 0},
    {"kubeflow.org/mpijob", 0},
    {"kubeflow.org/paddlejob", 0},
    {"kubeflow.org/pytorchjob", 0},
    {"kubeflow.org/tfjob", 0},
    {"kubeflow.org/xgboostjob", 0},
    {"kubeflow.org/jaxjob", 0},
    {"trainer.kubeflow.org/trainjob", 0},
    {"workload.codeflare.dev/appwrapper", 0},
    {"deployment", 0},
    {"statefulset", 0},
    {"leaderworkerset.x-k8s.io/leaderworkerset", 0},
};
#define N_FRAMEWORKS (sizeof(frameworks) / sizeof(frameworks[0]))

struct kctx {
    struct ctrl_config *cfg;
    struct ctrl_kconfig *kc;
    struct diag *d;
};

static char *path_of(const char *base, const char *key)
{
    return base[0] ? xasprintf("%s.%s", base, key) : xstrdup(key);
}

static void warn(struct kctx *k, const char *field, const char *why)
{
    struct ctrl_kconfig *kc = k->kc;
    kc->warnings = xrealloc(kc->warnings, (kc->n_warnings + 1) * sizeof(*kc->warnings));
    kc->warnings[kc->n_warnings++] = xasprintf("%s: %s", field, why);
}

static bool type_ok(const json_t *v, json_type t)
{
    if (t == JSON_TRUE)
        return json_is_boolean(v);
    return json_typeof(v) == t;
}

static const char *type_name(json_type t)
{
    switch (t) {
    case JSON_TRUE: return "boolean";
    case JSON_INTEGER: return "integer";
    case JSON_STRING: return "string";
    case JSON_ARRAY: return "array";
    default: return "object";
    }
}

/* Check obj's members against its table: unknown and mistyped ones are
 * decode errors, NO_EFFECT/NOT_YET ones warnings. Null members are as
 * absent (Go's decoder leaves the field unset). */
static void check_fields(struct kctx *k, const json_t *obj, const char *base,
                         const struct field *table)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        const struct field *f = table;
        while (f->name && strcmp(f->name, key))
            f++;
        char *path = path_of(base, key);
        if (!f->name)
            diag_add(k->d, DIAG_UNKNOWN_FIELD, path, NULL, NULL);
        else if (!json_is_null(v) && !type_ok(v, f->type))
            diag_add(k->d, DIAG_TYPE_INVALID, path, NULL, "expected %s", type_name(f->type));
        else if (!json_is_null(v) && f->use != USED)
            warn(k, path, f->why);
        xfree(path);
    }
}

/* Member key of obj when present, non-null and of its table's type (so
 * check_fields already reported anything else). */
static const json_t *get(const json_t *obj, const char *key, json_type t)
{
    const json_t *v = json_object_get(obj, key);
    return v && !json_is_null(v) && type_ok(v, t) ? v : NULL;
}

/* A metav1.Duration (Go's time.ParseDuration text) into *ms; records a
 * cause and returns false when it does not parse or is negative. */
static bool duration(struct kctx *k, const json_t *v, const char *field, int64_t *ms)
{
    const char *why = "must be greater than or equal to 0";
    int64_t out;
    if (cu_duration_parse_ms(json_string_value(v), &out, &why) || out < 0) {
        diag_addj(k->d, DIAG_INVALID, field, v, "%s", why);
        return false;
    }
    *ms = out;
    return true;
}

static bool nonneg_int32(struct kctx *k, const json_t *v, const char *field, int64_t *out)
{
    json_int_t n = json_integer_value(v);
    if (n < 0 || n > INT32_MAX) {
        diag_addj(k->d, DIAG_INVALID, field, v, "must be between 0 and %d", INT32_MAX);
        return false;
    }
    *out = n;
    return true;
}

static void requeuing(struct kctx *k, const json_t *rs, const char *base)
{
    check_fields(k, rs, base, requeuing_fields);
    struct ctrl_config *cfg = k->cfg;
    const json_t *v;
    int64_t n;
    char *f;
    if ((v = get(rs, "timestamp", JSON_STRING))) {
        f = path_of(base, "timestamp");
        const char *s = json_string_value(v);
        if (!strcmp(s, "Creation"))
            warn(k, f, "\"Creation\" is not supported: cueue requeues an evicted workload "
                       "by its eviction time (\"Eviction\", Kueue's default)");
        else if (strcmp(s, "Eviction"))
            diag_addj(k->d, DIAG_NOT_SUPPORTED, f, v,
                      "supported values: \"Eviction\", \"Creation\"");
        xfree(f);
    }
    static const char *const keys[] = {"backoffLimitCount", "backoffBaseSeconds",
                                       "backoffMaxSeconds"};
    for (int i = 0; i < 3; i++) {
        if (!(v = get(rs, keys[i], JSON_INTEGER)))
            continue;
        f = path_of(base, keys[i]);
        if (nonneg_int32(k, v, f, &n)) {
            if (i == 0)
                cfg->requeue_backoff_limit = (int32_t)n;
            else if (i == 1)
                cfg->requeue_backoff_base_ms = n * 1000;
            else
                cfg->requeue_backoff_max_ms = n * 1000;
        }
        xfree(f);
    }
}

static void pods_ready(struct kctx *k, const json_t *w)
{
    const char *base = "waitForPodsReady";
    check_fields(k, w, base, pods_ready_fields);
    struct ctrl_config *cfg = k->cfg;
    const json_t *v;
    cfg->wait_for_pods_ready = json_is_true(get(w, "enable", JSON_TRUE));
    cfg->pods_ready_block_admission = cfg->wait_for_pods_ready;
    /* only honoured with enable (Kueue) */
    if ((v = get(w, "blockAdmission", JSON_TRUE)))
        cfg->pods_ready_block_admission = cfg->wait_for_pods_ready && json_is_true(v);
    if ((v = get(w, "timeout", JSON_STRING)))
        duration(k, v, "waitForPodsReady.timeout", &cfg->pods_ready_timeout_ms);
    int64_t ms;
    if ((v = get(w, "recoveryTimeout", JSON_STRING)))
        duration(k, v, "waitForPodsReady.recoveryTimeout", &ms);
    if ((v = get(w, "requeuingStrategy", JSON_OBJECT)))
        requeuing(k, v, "waitForPodsReady.requeuingStrategy");
}

static void fair_sharing(struct kctx *k, const json_t *fs)
{
    const char *base = "fairSharing";
    check_fields(k, fs, base, fair_fields);
    struct eng_config *e = &k->cfg->engine;
    e->fair_sharing = json_is_true(get(fs, "enable", JSON_TRUE));
    const json_t *ps = get(fs, "preemptionStrategies", JSON_ARRAY);
    size_t i;
    const json_t *v;
    e->n_fs_strategies = 0;
    json_array_foreach(ps, i, v) {
        char *f = xasprintf("%s.preemptionStrategies[%zu]", base, i);
        const char *s = json_string_value(v);
        enum eng_fair_strategy st = FS_LESS_THAN_INITIAL_SHARE;
        bool known = s && (!strcmp(s, "LessThanOrEqualToFinalShare") ||
                           !strcmp(s, "LessThanInitialShare"));
        if (known && !strcmp(s, "LessThanOrEqualToFinalShare"))
            st = FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE;
        if (!known)
            diag_addj(k->d, DIAG_NOT_SUPPORTED, f, v,
                      "supported values: \"LessThanOrEqualToFinalShare\", "
                      "\"LessThanInitialShare\"");
        /* Kueue's rule: [Final], [Initial] or [Final, Initial] */
        else if (i > 1 || (i == 1 && (st != FS_LESS_THAN_INITIAL_SHARE ||
                                      e->fs_strategies[0] != FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE)))
            diag_addj(k->d, DIAG_INVALID, f, v,
                      "the strategies must be one of [LessThanOrEqualToFinalShare], "
                      "[LessThanInitialShare] or [LessThanOrEqualToFinalShare, "
                      "LessThanInitialShare]");
        else
            e->fs_strategies[e->n_fs_strategies++] = st;
        xfree(f);
    }
}

/* admissionFairSharing: validated, not applied (cueue orders a
 * ClusterQueue's workloads by priority and time only). */
static void admission_fair_sharing(struct kctx *k, const json_t *afs)
{
    const char *base = "admissionFairSharing";
    check_fields(k, afs, base, afs_fields);
    const json_t *v;
    int64_t ms;
    if ((v = get(afs, "usageHalfLifeTime", JSON_STRING)))
        duration(k, v, "admissionFairSharing.usageHalfLifeTime", &ms);
    if ((v = get(afs, "usageSamplingInterval", JSON_STRING)) &&
        duration(k, v, "admissionFairSharing.usageSamplingInterval", &ms) && ms == 0)
        diag_addj(k->d, DIAG_INVALID, "admissionFairSharing.usageSamplingInterval", v,
                  "must be greater than 0");
    const char *res;
    json_t *w;
    json_object_foreach((json_t *)get(afs, "resourceWeights", JSON_OBJECT), res, w) {
        char *f = xasprintf("%s.resourceWeights[%s]", base, res);
        if (!json_is_number(w))
            diag_add(k->d, DIAG_TYPE_INVALID, f, NULL, "expected number");
        else if (json_number_value(w) < 0 || !isfinite(json_number_value(w)))
            diag_addj(k->d, DIAG_INVALID, f, w, "must be greater than or equal to 0");
        xfree(f);
    }
    warn(k, base,
         "not supported yet: cueue orders a ClusterQueue's workloads by priority and "
         "creation time, not by their LocalQueue's past usage");
}

int ctrl_kconfig_frameworks(const json_t *list, const char *field, unsigned *bits,
                            struct ctrl_kconfig *kc, struct diag *d)
{
    unsigned out = 0, seen = 0;
    size_t i, before = diag_count(d);
    const json_t *v;
    json_array_foreach(list, i, v) {
        char *f = xasprintf("%s[%zu]", field, i);
        const char *s = json_string_value(v);
        size_t j = 0;
        while (s && j < N_FRAMEWORKS && strcmp(frameworks[j].name, s))
            j++;
        if (!s)
            diag_add(d, DIAG_TYPE_INVALID, f, NULL, "expected string");
        else if (j == N_FRAMEWORKS)
            diag_addj(d, DIAG_NOT_SUPPORTED, f, v,
                      "supported values: \"batch/job\", \"ray.io/rayjob\", "
                      "\"jobset.x-k8s.io/jobset\", \"pod\" and Kueue's other frameworks");
        else if (seen & (1u << j))
            diag_addj(d, DIAG_DUPLICATE, f, v, NULL);
        else if (!frameworks[j].bit && kc) {
            struct kctx k = {NULL, kc, d};
            warn(&k, f, "cueue has no such job kind; ignored");
        } else if (!frameworks[j].bit)
            diag_addj(d, DIAG_NOT_SUPPORTED, f, v, "cueue has no such job kind");
        if (s && j < N_FRAMEWORKS) {
            seen |= 1u << j;
            out |= frameworks[j].bit;
        }
        xfree(f);
    }
    *bits = out;
    return diag_count(d) == before ? 0 : CU_EINVAL;
}

static void integrations(struct kctx *k, const json_t *in)
{
    check_fields(k, in, "integrations", integrations_fields);
    const json_t *fw = get(in, "frameworks", JSON_ARRAY);
    k->cfg->jobs.frameworks = API_FW_BATCH_JOB;
    if (fw)
        ctrl_kconfig_frameworks(fw, "integrations.frameworks", &k->cfg->jobs.frameworks, k->kc,
                                k->d);
}

/* resources: validated, not applied yet. */
static void resources(struct kctx *k, const json_t *r)
{
    check_fields(k, r, "resources", resources_fields);
    size_t i;
    const json_t *v;
    json_array_foreach(get(r, "excludeResourcePrefixes", JSON_ARRAY), i, v) {
        if (!json_is_string(v)) {
            char *f = xasprintf("resources.excludeResourcePrefixes[%zu]", i);
            diag_add(k->d, DIAG_TYPE_INVALID, f, NULL, "expected string");
            xfree(f);
        }
    }
    if (json_array_size(get(r, "excludeResourcePrefixes", JSON_ARRAY)))
        warn(k, "resources.excludeResourcePrefixes",
             "not supported yet: every resource a pod requests counts against quota");
    const json_t *tr = get(r, "transformations", JSON_ARRAY);
    json_array_foreach(tr, i, v) {
        char *base = xasprintf("resources.transformations[%zu]", i);
        if (!json_is_object(v)) {
            diag_add(k->d, DIAG_TYPE_INVALID, base, NULL, "expected object");
            xfree(base);
            continue;
        }
        check_fields(k, v, base, transformation_fields);
        const json_t *in = get(v, "input", JSON_STRING), *st = get(v, "strategy", JSON_STRING);
        char *f = path_of(base, "input");
        if (!in || !json_string_length(in))
            diag_add(k->d, DIAG_REQUIRED, f, NULL, NULL);
        for (size_t j = 0; in && j < i; j++)
            if (jx_equal(in, JX_GET(json_array_get(tr, j), "input"))) {
                diag_addj(k->d, DIAG_DUPLICATE, f, in, NULL);
                break;
            }
        xfree(f);
        if (st && strcmp(json_string_value(st), "Retain") &&
            strcmp(json_string_value(st), "Replace")) {
            f = path_of(base, "strategy");
            diag_addj(k->d, DIAG_NOT_SUPPORTED, f, st, "supported values: \"Retain\", \"Replace\"");
            xfree(f);
        }
        const char *res;
        json_t *q;
        json_object_foreach((json_t *)get(v, "outputs", JSON_OBJECT), res, q) {
            f = xasprintf("%s.outputs[%s]", base, res);
            int64_t n;
            api_quantity_from_json(q, res, f, &n, k->d);
            xfree(f);
        }
        xfree(base);
    }
    if (json_array_size(tr))
        warn(k, "resources.transformations",
             "not supported yet: pods' requests count against quota as written");
}

int ctrl_kconfig_load(const char *text, size_t len, const char *source,
                      struct ctrl_config *cfg, struct ctrl_kconfig *kc, struct diag *d)
{
    memset(kc, 0, sizeof(*kc));
    json_t *docs = NULL;
    int rc = api_parse_documents(text, len, source, &docs, d);
    if (rc)
        return rc;
    if (json_array_size(docs) != 1) {
        diag_add(d, DIAG_SYNTAX, "", NULL, "%s: want one Configuration document, found %zu",
                 source, json_array_size(docs));
        json_decref(docs);
        return CU_EBADREQ;
    }
    const json_t *doc = json_array_get(docs, 0);
    struct kctx k = {cfg, kc, d};
    check_fields(&k, doc, "", top_fields);
    const char *av = JX_STR(doc, "apiVersion"), *kind = JX_STR(doc, "kind");
    if (!av || strcmp(av, KCONFIG_API_VERSION) || !kind || strcmp(kind, "Configuration"))
        diag_add(d, DIAG_SYNTAX, "", NULL,
                 "%s: want apiVersion \"%s\" and kind \"Configuration\", got \"%s\" \"%s\"",
                 source, KCONFIG_API_VERSION, av ? av : "", kind ? kind : "");
    /* Kueue's defaults for what the file leaves out (kconfig.h) */
    cfg->wait_for_pods_ready = false;
    cfg->pods_ready_block_admission = false;
    cfg->pods_ready_timeout_ms = 5 * 60 * 1000;
    cfg->requeue_backoff_base_ms = 60 * 1000;
    cfg->requeue_backoff_max_ms = 3600 * 1000;
    cfg->requeue_backoff_limit = -1;
    cfg->engine.fair_sharing = false;
    cfg->engine.n_fs_strategies = 0;
    api_job_policy_defaults(&cfg->jobs);
    cfg->jobs.frameworks = API_FW_BATCH_JOB;
    const json_t *v;
    if ((v = get(doc, "waitForPodsReady", JSON_OBJECT)))
        pods_ready(&k, v);
    if ((v = get(doc, "fairSharing", JSON_OBJECT)))
        fair_sharing(&k, v);
    if ((v = get(doc, "admissionFairSharing", JSON_OBJECT)))
        admission_fair_sharing(&k, v);
    if ((v = get(doc, "integrations", JSON_OBJECT)))
        integrations(&k, v);
    else
        warn(&k, "integrations.frameworks",
             "not set: only \"batch/job\" is managed (Kueue's default); RayJobs and "
             "other kinds with a queue-name label run without queueing");
    if ((v = get(doc, "resources", JSON_OBJECT)))
        resources(&k, v);
    cfg->jobs.manage_without_queue_name =
        json_is_true(get(doc, "manageJobsWithoutQueueName", JSON_TRUE));
    if ((v = get(doc, "managedJobsNamespaceSelector", JSON_OBJECT))) {
        if (!api_label_selector_from_json(v, "managedJobsNamespaceSelector", &kc->ns_selector,
                                          d))
            cfg->jobs.namespace_selector = &kc->ns_selector;
    }
    json_decref(docs);
    if (diag_has_decode_errors(d))
        return CU_EBADREQ;
    return diag_has_errors(d) ? CU_EINVAL : 0;
}

void ctrl_kconfig_release(struct ctrl_kconfig *kc)
{
    api_label_selector_release(&kc->ns_selector);
    for (size_t i = 0; i < kc->n_warnings; i++)
        xfree(kc->warnings[i]);
    xfree(kc->warnings);
    memset(kc, 0, sizeof(*kc));
}

int ctrl_kconfig_load_file(const char *path, struct ctrl_config *cfg, struct ctrl_kconfig *kc,
                           struct diag *d)
{
    memset(kc, 0, sizeof(*kc));
    FILE *f = fopen(path, "rb");
    if (!f) {
        diag_add(d, DIAG_SYNTAX, "", NULL, "%s: %s", path, strerror(errno));
        return CU_EIO;
    }
    struct sbuf sb;
    sbuf_init(&sb, API_MAX_DOCUMENT_BYTES);
    char buf[16384];
    size_t n;
    int rc = 0;
    while (!rc && (n = fread(buf, 1, sizeof(buf), f)) > 0)
        if (sbuf_add(&sb, buf, n)) {
            diag_add(d, DIAG_SYNTAX, "", NULL, "%s: larger than %zu MiB", path,
                     API_MAX_DOCUMENT_BYTES >> 20);
            rc = CU_ELIMIT;
        }
    if (!rc && ferror(f)) {
        diag_add(d, DIAG_SYNTAX, "", NULL, "%s: cannot read: %s", path, strerror(errno));
        rc = CU_EIO;
    }
    fclose(f);
    if (!rc)
        rc = ctrl_kconfig_load(sb.buf ? sb.buf : "", sb.len, path, cfg, kc, d);
    sbuf_release(&sb);
    return rc;
}
