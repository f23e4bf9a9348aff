/*
 * scenario: decode a scenario file (docs/sim.md) into struct sim_scenario.
 * The file is YAML: at most one `cueue.dev/v1alpha1 Scenario` document and
 * any number of manifests (objects created at time 0, after spec.objects).
 * Decoding is strict like the API server's: unknown fields and wrong types
 * are errors, and every problem is reported with its field path. Manifests
 * are only checked for a known kind here; they are admitted (defaults,
 * validation) when the simulation creates them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/patch.h"
#include "api/decode.h"
#include "api/object.h"
#include "ctrl/kconfig.h"
#include "sim/sim-int.h"
#include "util/err.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#define SCENARIO_API_VERSION "cueue.dev/v1alpha1"
#define SCENARIO_KIND "Scenario"
#define MAX_SCENARIO_BYTES ((size_t)256 << 20)

/* ---- strict decoding helpers ---- */

static char *path_key(const char *base, const char *key)
{
    return base && base[0] ? xasprintf("%s.%s", base, key) : xstrdup(key);
}

static char *path_idx(const char *base, size_t i)
{
    return xasprintf("%s[%zu]", base, i);
}

/* Unknown keys of obj (allowed: NULL-terminated list) become causes. */
static void only_keys(const json_t *obj, const char *base, const char *const *allowed,
                      struct diag *d)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v) {
        bool ok = false;
        for (size_t i = 0; allowed[i]; i++)
            ok = ok || !strcmp(allowed[i], k);
        if (!ok) {
            char *f = path_key(base, k);
            diag_add(d, DIAG_UNKNOWN_FIELD, f, NULL, NULL);
            xfree(f);
        }
    }
}

static bool want_type(const json_t *v, json_type t, const char *field, const char *what,
                      struct diag *d)
{
    if (v && json_typeof(v) == t)
        return true;
    diag_add(d, DIAG_TYPE_INVALID, field, NULL, "expected %s", what);
    return false;
}

/* Object member `key` of obj if present (type-checked), else NULL. */
static json_t *member(const json_t *obj, const char *base, const char *key, json_type t,
                      const char *what, struct diag *d)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return NULL;
    char *f = path_key(base, key);
    bool ok = want_type(v, t, f, what, d);
    xfree(f);
    return ok ? v : NULL;
}

static int duration_member(const json_t *obj, const char *base, const char *key, int64_t *ms,
                           struct diag *d)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return 1; /* absent */
    char *f = path_key(base, key);
    int rc = sim_duration_json(v, f, ms, d);
    xfree(f);
    return rc;
}

static bool bool_member(const json_t *obj, const char *base, const char *key, bool *out,
                        struct diag *d)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return false;
    if (!json_is_boolean(v)) {
        char *f = path_key(base, key);
        diag_add(d, DIAG_TYPE_INVALID, f, NULL, "expected boolean");
        xfree(f);
        return false;
    }
    *out = json_is_true(v);
    return true;
}

static bool int_member(const json_t *obj, const char *base, const char *key, int64_t min,
                       int64_t max, int64_t *out, struct diag *d)
{
    json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return false;
    char *f = path_key(base, key);
    bool ok = false;
    if (!json_is_integer(v)) {
        diag_add(d, DIAG_TYPE_INVALID, f, NULL, "expected integer");
    } else if (json_integer_value(v) < min || json_integer_value(v) > max) {
        diag_addj(d, DIAG_INVALID, f, v, "must be between %lld and %lld", (long long)min,
                  (long long)max);
    } else {
        *out = json_integer_value(v);
        ok = true;
    }
    xfree(f);
    return ok;
}

/* Copy the causes of kd under the field prefix `where`. */
static void merge_prefixed(const char *where, const struct diag *kd, struct diag *d)
{
    for (size_t j = 0; j < kd->n; j++) {
        const struct diag_cause *c = &kd->items[j];
        char *f = c->field && c->field[0] ? path_key(where, c->field) : xstrdup(where);
        diag_add(d, c->type, f, c->value, "%s", c->detail ? c->detail : "");
        xfree(f);
    }
}

/* ---- spec.controller ---- */

static void decode_pods_ready(const json_t *w, const char *base, struct ctrl_config *cfg,
                              struct diag *d)
{
    static const char *const keys[] = {"enable", "timeout", "blockAdmission",
                                       "requeuingStrategy", NULL};
    only_keys(w, base, keys, d);
    bool_member(w, base, "enable", &cfg->wait_for_pods_ready, d);
    duration_member(w, base, "timeout", &cfg->pods_ready_timeout_ms, d);
    bool_member(w, base, "blockAdmission", &cfg->pods_ready_block_admission, d);
    char *rb = path_key(base, "requeuingStrategy");
    json_t *rs = member(w, base, "requeuingStrategy", JSON_OBJECT, "object", d);
    if (rs) {
        static const char *const rkeys[] = {"timestamp", "backoffBaseSeconds",
                                            "backoffMaxSeconds", "backoffLimitCount", NULL};
        only_keys(rs, rb, rkeys, d);
        int64_t v;
        if (int_member(rs, rb, "backoffBaseSeconds", 0, INT32_MAX, &v, d))
            cfg->requeue_backoff_base_ms = v * 1000;
        if (int_member(rs, rb, "backoffMaxSeconds", 0, INT32_MAX, &v, d))
            cfg->requeue_backoff_max_ms = v * 1000;
        if (int_member(rs, rb, "backoffLimitCount", 0, INT32_MAX, &v, d))
            cfg->requeue_backoff_limit = (int32_t)v;
        json_t *ts = member(rs, rb, "timestamp", JSON_STRING, "string", d);
        if (ts && strcmp(json_string_value(ts), "Eviction") &&
            strcmp(json_string_value(ts), "Creation")) {
            char *f = path_key(rb, "timestamp");
            diag_addj(d, DIAG_NOT_SUPPORTED, f, ts, "supported values: \"Eviction\", \"Creation\"");
            xfree(f);
        }
    }
    xfree(rb);
}

static void decode_fair_sharing(const json_t *fs, const char *base, struct ctrl_config *cfg,
                                struct diag *d)
{
    static const char *const keys[] = {"enable", "preemptionStrategies", NULL};
    only_keys(fs, base, keys, d);
    bool_member(fs, base, "enable", &cfg->engine.fair_sharing, d);
    json_t *ps = member(fs, base, "preemptionStrategies", JSON_ARRAY, "array", d);
    size_t i;
    json_t *v;
    char *pb = path_key(base, "preemptionStrategies");
    json_array_foreach(ps, i, v) {
        char *f = path_idx(pb, i);
        const char *s = json_string_value(v);
        if (i < 2 && s && !strcmp(s, "LessThanOrEqualToFinalShare"))
            cfg->engine.fs_strategies[cfg->engine.n_fs_strategies++] =
                FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE;
        else if (i < 2 && s && !strcmp(s, "LessThanInitialShare"))
            cfg->engine.fs_strategies[cfg->engine.n_fs_strategies++] = FS_LESS_THAN_INITIAL_SHARE;
        else
            diag_addj(d, DIAG_NOT_SUPPORTED, f, v,
                      "supported values: \"LessThanOrEqualToFinalShare\", "
                      "\"LessThanInitialShare\" (at most two)");
        xfree(f);
    }
    xfree(pb);
}

static void decode_fallback(const json_t *fb, const char *base, struct ctrl_config *cfg,
                            struct diag *d)
{
    static const char *const keys[] = {"enable", "nodeWait", "provisioningRequestTimeout",
                                       "flavorBackoff", NULL};
    only_keys(fb, base, keys, d);
    bool_member(fb, base, "enable", &cfg->flavor_fallback, d);
    duration_member(fb, base, "nodeWait", &cfg->fallback_node_wait_ms, d);
    duration_member(fb, base, "provisioningRequestTimeout", &cfg->fallback_provreq_timeout_ms,
                    d);
    duration_member(fb, base, "flavorBackoff", &cfg->fallback_flavor_backoff_ms, d);
}

static void decode_controller(const json_t *c, const char *base, struct ctrl_config *cfg,
                              struct diag *d)
{
    static const char *const keys[] = {"waitForPodsReady", "scaleDownUnneededTime",
                                       "provisioningMaxWait", "bookingDuration",
                                       "fairSharing", "admitOneHeadPerClusterQueue",
                                       "quotaCheckStrategy", "flavorFallback",
                                       "integrations", "manageJobsWithoutQueueName", NULL};
    only_keys(c, base, keys, d);
    json_t *v;
    char *f;
    if ((v = member(c, base, "waitForPodsReady", JSON_OBJECT, "object", d))) {
        f = path_key(base, "waitForPodsReady");
        decode_pods_ready(v, f, cfg, d);
        xfree(f);
    }
    duration_member(c, base, "scaleDownUnneededTime", &cfg->scale_down_unneeded_ms, d);
    duration_member(c, base, "provisioningMaxWait", &cfg->provisioning_max_wait_ms, d);
    duration_member(c, base, "bookingDuration", &cfg->booking_duration_ms, d);
    if ((v = member(c, base, "fairSharing", JSON_OBJECT, "object", d))) {
        f = path_key(base, "fairSharing");
        decode_fair_sharing(v, f, cfg, d);
        xfree(f);
    }
    bool_member(c, base, "admitOneHeadPerClusterQueue", &cfg->engine.kueue_one_head_per_cq, d);
    if ((v = member(c, base, "quotaCheckStrategy", JSON_STRING, "string", d))) {
        const char *s = json_string_value(v);
        if (!strcmp(s, "IgnoreUndeclared")) {
            cfg->engine.ignore_undeclared_resources = true;
        } else if (strcmp(s, "BlockUndeclared")) {
            f = path_key(base, "quotaCheckStrategy");
            diag_addj(d, DIAG_NOT_SUPPORTED, f, v,
                      "supported values: \"BlockUndeclared\", \"IgnoreUndeclared\"");
            xfree(f);
        }
    }
    if ((v = member(c, base, "integrations", JSON_OBJECT, "object", d))) {
        /* Kueue's Configuration's integrations.frameworks (ctrl/kconfig.h) */
        f = path_key(base, "integrations");
        static const char *const ikeys[] = {"frameworks", NULL};
        only_keys(v, f, ikeys, d);
        json_t *fw = member(v, f, "frameworks", JSON_ARRAY, "array", d);
        char *ff = path_key(f, "frameworks");
        if (fw)
            ctrl_kconfig_frameworks(fw, ff, &cfg->jobs.frameworks, NULL, d);
        xfree(ff);
        xfree(f);
    }
    bool_member(c, base, "manageJobsWithoutQueueName", &cfg->jobs.manage_without_queue_name, d);
    if ((v = member(c, base, "flavorFallback", JSON_OBJECT, "object", d))) {
        f = path_key(base, "flavorFallback");
        decode_fallback(v, f, cfg, d);
        xfree(f);
    }
}

/* ---- spec.capacity ---- */

static void decode_windows(const json_t *arr, const char *base, struct sim_pool_cap *pc,
                           struct diag *d)
{
    pc->stockouts = xcalloc(json_array_size(arr) + 1, sizeof(*pc->stockouts));
    size_t i;
    json_t *w;
    json_array_foreach(arr, i, w) {
        char *f = path_idx(base, i);
        if (want_type(w, JSON_OBJECT, f, "object", d)) {
            static const char *const keys[] = {"from", "to", NULL};
            only_keys(w, f, keys, d);
            struct prov_sim_window *win = &pc->stockouts[pc->n_stockouts];
            win->from_ms = 0;
            win->to_ms = PROV_NEVER;
            duration_member(w, f, "from", &win->from_ms, d);
            if (!duration_member(w, f, "to", &win->to_ms, d) && win->to_ms <= win->from_ms) {
                char *tf = path_key(f, "to");
                diag_addj(d, DIAG_INVALID, tf, json_object_get(w, "to"),
                          "must be after `from`");
                xfree(tf);
            }
            pc->n_stockouts++;
        }
        xfree(f);
    }
}

static void decode_revocations(const json_t *arr, const char *base, struct sim_pool_cap *pc,
                               struct diag *d)
{
    pc->revocations = xcalloc(json_array_size(arr) + 1, sizeof(*pc->revocations));
    size_t i;
    json_t *r;
    json_array_foreach(arr, i, r) {
        char *f = path_idx(base, i);
        if (want_type(r, JSON_OBJECT, f, "object", d)) {
            static const char *const keys[] = {"at", "nodes", NULL};
            only_keys(r, f, keys, d);
            struct prov_sim_revocation *rv = &pc->revocations[pc->n_revocations++];
            if (duration_member(r, f, "at", &rv->at_ms, d) > 0) {
                char *af = path_key(f, "at");
                diag_add(d, DIAG_REQUIRED, af, NULL, NULL);
                xfree(af);
            }
            int64_t n = 0;
            int_member(r, f, "nodes", 0, INT32_MAX, &n, d);
            rv->n_nodes = (int)n;
        }
        xfree(f);
    }
}

static void decode_capacity(const json_t *cap, const char *base, struct sim_scenario *sc,
                            struct diag *d)
{
    sc->pools = xcalloc(json_object_size(cap) + 1, sizeof(*sc->pools));
    const char *pool;
    json_t *v;
    json_object_foreach((json_t *)cap, pool, v) {
        char *f = path_key(base, pool);
        if (want_type(v, JSON_OBJECT, f, "object", d)) {
            static const char *const keys[] = {"provisioningDelay", "stockouts", "revocations",
                                               NULL};
            only_keys(v, f, keys, d);
            struct sim_pool_cap *pc = &sc->pools[sc->n_pools++];
            pc->name = xstrdup(pool);
            duration_member(v, f, "provisioningDelay", &pc->delay_ms, d);
            json_t *a;
            char *af;
            if ((a = member(v, f, "stockouts", JSON_ARRAY, "array", d))) {
                af = path_key(f, "stockouts");
                decode_windows(a, af, pc, d);
                xfree(af);
            }
            if ((a = member(v, f, "revocations", JSON_ARRAY, "array", d))) {
                af = path_key(f, "revocations");
                decode_revocations(a, af, pc, d);
                xfree(af);
            }
        }
        xfree(f);
    }
}

/* ---- spec.actions ---- */

/* kind (+ optional apiVersion), namespace and name of a target. */
static void decode_target(const json_t *t, const char *base, struct sim_action *a, struct diag *d)
{
    json_t *kind = member(t, base, "kind", JSON_STRING, "string", d);
    json_t *av = member(t, base, "apiVersion", JSON_STRING, "string", d);
    json_t *ns = member(t, base, "namespace", JSON_STRING, "string", d);
    json_t *name = member(t, base, "name", JSON_STRING, "string", d);
    char *f;
    if (!kind) {
        f = path_key(base, "kind");
        if (!json_object_get(t, "kind"))
            diag_add(d, DIAG_REQUIRED, f, NULL, NULL);
        xfree(f);
    } else {
        a->kind = av ? api_kind_by_gvk(json_string_value(av), json_string_value(kind))
                     : api_kind_resolve(json_string_value(kind));
        if (!a->kind) {
            f = path_key(base, "kind");
            diag_addj(d, DIAG_NOT_SUPPORTED, f, kind, "no such kind%s%s", av ? " in " : "",
                      av ? json_string_value(av) : "");
            xfree(f);
        }
    }
    if (!name) {
        f = path_key(base, "name");
        if (!json_object_get(t, "name"))
            diag_add(d, DIAG_REQUIRED, f, NULL, NULL);
        xfree(f);
    } else {
        a->name = xstrdup(json_string_value(name));
    }
    if (a->kind && a->kind->namespaced) {
        a->ns = xstrdup(ns ? json_string_value(ns) : "default");
    } else if (a->kind && ns) {
        f = path_key(base, "namespace");
        diag_add(d, DIAG_FORBIDDEN, f, NULL, "%s is cluster-scoped", a->kind->kind);
        xfree(f);
    }
}

static void decode_scale(const json_t *t, const char *base, struct sim_action *a, struct diag *d)
{
    static const char *const keys[] = {"kind", "apiVersion", "namespace", "name",
                                       "parallelism", "replicas", "count", "workerGroup",
                                       "podSet", NULL};
    only_keys(t, base, keys, d);
    decode_target(t, base, a, d);
    static const char *const sizes[] = {"parallelism", "replicas", "count"};
    int n = 0;
    for (size_t i = 0; i < 3; i++) {
        int64_t v;
        n += json_object_get(t, sizes[i]) != NULL; /* given, valid or not (said once) */
        if (int_member(t, base, sizes[i], 0, INT32_MAX, &v, d))
            a->size = (int32_t)v;
    }
    if (n != 1)
        diag_add(d, DIAG_REQUIRED, base, NULL,
                 "exactly one of parallelism (Job), replicas (RayJob) or count (Workload)");
    json_t *g = member(t, base, "workerGroup", JSON_STRING, "string", d);
    if (!g)
        g = member(t, base, "podSet", JSON_STRING, "string", d);
    if (g)
        a->group = xstrdup(json_string_value(g));
    if (a->kind && a->kind->id != KIND_JOB && a->kind->id != KIND_RAYJOB &&
        a->kind->id != KIND_WORKLOAD) {
        char *f = path_key(base, "kind");
        diag_add(d, DIAG_NOT_SUPPORTED, f, a->kind->kind,
                 "supported kinds: Job, RayJob, Workload");
        xfree(f);
    }
}

/* conditions: {kind, [apiVersion], [namespace], name, set: [{type, status,
 * [reason], [message]}]}: what an external controller (a cluster
 * autoscaler answering a ProvisioningRequest class cueue does not serve)
 * writes through the status subresource. */
static void decode_conditions(const json_t *t, const char *base, struct sim_action *a,
                              struct diag *d)
{
    static const char *const keys[] = {"kind", "apiVersion", "namespace", "name", "set", NULL};
    only_keys(t, base, keys, d);
    decode_target(t, base, a, d);
    json_t *set = member(t, base, "set", JSON_ARRAY, "array", d);
    char *f = path_key(base, "set");
    if (!set) {
        if (!json_object_get(t, "set"))
            diag_add(d, DIAG_REQUIRED, f, NULL, NULL);
        xfree(f);
        return;
    }
    if (!json_array_size(set))
        diag_add(d, DIAG_REQUIRED, f, NULL, "at least one condition");
    size_t i;
    json_t *c;
    json_array_foreach(set, i, c) {
        char *cf = xasprintf("%s[%zu]", f, i);
        if (!json_is_object(c)) {
            diag_addj(d, DIAG_TYPE_INVALID, cf, c, "expected object");
            xfree(cf);
            continue;
        }
        static const char *const ckeys[] = {"type", "status", "reason", "message", NULL};
        only_keys(c, cf, ckeys, d);
        json_t *type = member(c, cf, "type", JSON_STRING, "string", d);
        json_t *st = member(c, cf, "status", JSON_STRING, "string", d);
        member(c, cf, "reason", JSON_STRING, "string", d);
        member(c, cf, "message", JSON_STRING, "string", d);
        if (!type || !json_string_length(type)) {
            char *tf = path_key(cf, "type");
            diag_add(d, DIAG_REQUIRED, tf, NULL, NULL);
            xfree(tf);
        }
        const char *sv = st ? json_string_value(st) : NULL;
        if (!st) {
            char *sf = path_key(cf, "status");
            if (!json_object_get(c, "status"))
                diag_add(d, DIAG_REQUIRED, sf, NULL, NULL);
            xfree(sf);
        } else if (strcmp(sv, "True") && strcmp(sv, "False") && strcmp(sv, "Unknown")) {
            char *sf = path_key(cf, "status");
            diag_addj(d, DIAG_NOT_SUPPORTED, sf, st,
                      "supported values: \"True\", \"False\", \"Unknown\"");
            xfree(sf);
        }
        xfree(cf);
    }
    a->manifest = json_incref(set); /* only read from here on */
    xfree(f);
}

/* A patch action (spec.actions[i].patch): its target and exactly one of
 * merge (an RFC 7386 merge patch, an object), strategic (a strategic merge
 * patch, an object; built-in kinds only, as the API server takes it) or
 * json (an RFC 6902 JSON patch, an array of operations). */
static void decode_patch(const json_t *v, const char *f, struct sim_action *a, struct diag *d)
{
    static const char *const keys[] = {"kind", "apiVersion", "namespace", "name",
                                       "merge", "strategic", "json", NULL};
    static const char *const forms[] = {"merge", "strategic", "json"};
    only_keys(v, f, keys, d);
    decode_target(v, f, a, d);
    size_t n = 0;
    for (size_t i = 0; i < 3; i++) {
        if (!json_object_get(v, forms[i]))
            continue;
        n++;
        json_t *m = member(v, f, forms[i], i == 2 ? JSON_ARRAY : JSON_OBJECT,
                           i == 2 ? "array" : "object", d);
        if (m && !a->manifest) {
            a->manifest = json_incref(m); /* only read (and copied) from here on */
            a->patch_type = (enum sim_patch_type)i;
        }
    }
    if (n != 1) {
        diag_add(d, n ? DIAG_FORBIDDEN : DIAG_REQUIRED, f, NULL,
                 "exactly one of merge, strategic, json");
    } else if (a->patch_type == SIM_PATCH_STRATEGIC && a->kind &&
               !api_patch_strategic_kind(a->kind)) {
        char *sf = path_key(f, "strategic");
        diag_add(d, DIAG_FORBIDDEN, sf, NULL,
                 "a strategic merge patch applies to built-in kinds only; use merge or json");
        xfree(sf);
    }
}

static void decode_action_body(const json_t *act, const char *base, struct sim_action *a,
                               struct sim_precheck_memo *memo, struct diag *d)
{
    static const char *const verbs[] = {"apply", "delete", "patch", "scale", "conditions"};
    int n = 0;
    for (int i = 0; i < 5; i++) {
        json_t *v = member(act, base, verbs[i], JSON_OBJECT, "object", d);
        if (!v)
            continue;
        n++;
        a->type = (enum sim_action_type)i;
        char *f = path_key(base, verbs[i]);
        if (a->type == SIM_ACT_APPLY) {
            a->manifest = json_incref(v); /* only read (and copied) from here on */
            struct diag kd;
            diag_init(&kd);
            if (sim_apply_precheck_memo(memo, v, &kd, &a->admitted))
                merge_prefixed(f, &kd, d);
            diag_release(&kd);
        } else if (a->type == SIM_ACT_DELETE) {
            static const char *const keys[] = {"kind", "apiVersion", "namespace", "name", NULL};
            only_keys(v, f, keys, d);
            decode_target(v, f, a, d);
        } else if (a->type == SIM_ACT_PATCH) {
            decode_patch(v, f, a, d);
        } else if (a->type == SIM_ACT_SCALE) {
            decode_scale(v, f, a, d);
        } else {
            decode_conditions(v, f, a, d);
        }
        xfree(f);
    }
    if (n != 1)
        diag_add(d, DIAG_REQUIRED, base, NULL,
                 "exactly one of apply, delete, patch, scale, conditions");
}

static void decode_action(const json_t *act, const char *base, struct sim_action *a,
                          struct sim_precheck_memo *memo, struct diag *d)
{
    static const char *const keys[] = {"at", "apply", "delete", "patch", "scale", "conditions",
                                       "runFor", "repeat", NULL};
    only_keys(act, base, keys, d);
    a->repeat = 1;
    a->run_for_ms = -1;
    if (duration_member(act, base, "at", &a->at_rel, d) > 0) {
        char *f = path_key(base, "at");
        diag_add(d, DIAG_REQUIRED, f, NULL, NULL);
        xfree(f);
    }
    decode_action_body(act, base, a, memo, d);
    if (duration_member(act, base, "runFor", &a->run_for_ms, d) == 0 &&
        a->type != SIM_ACT_APPLY) {
        char *f = path_key(base, "runFor");
        diag_add(d, DIAG_FORBIDDEN, f, NULL, "only with apply");
        xfree(f);
    }
    json_t *rep = member(act, base, "repeat", JSON_OBJECT, "object", d);
    if (rep) {
        char *f = path_key(base, "repeat");
        static const char *const rkeys[] = {"count", "every", NULL};
        only_keys(rep, f, rkeys, d);
        int64_t cnt = 1;
        if (!int_member(rep, f, "count", 1, SIM_MAX_SCENARIO_SIZE, &cnt, d) &&
            !json_object_get(rep, "count")) {
            char *cf = path_key(f, "count");
            diag_add(d, DIAG_REQUIRED, cf, NULL, NULL);
            xfree(cf);
        }
        a->repeat = (int32_t)cnt;
        duration_member(rep, f, "every", &a->every_ms, d);
        /* both at most SIM_MAX_DURATION_MS and count 1e6: no overflow */
        if (a->at_rel + (a->repeat - 1) * a->every_ms > SIM_MAX_DURATION_MS)
            diag_add(d, DIAG_INVALID, f, NULL,
                     "the last occurrence (at + (count - 1) * every) is later than %s",
                     SIM_MAX_DURATION_TEXT);
        xfree(f);
    }
}

static int action_cmp(const void *x, const void *y)
{
    const struct sim_action *a = x, *b = y;
    if (a->at_rel != b->at_rel)
        return a->at_rel < b->at_rel ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static void decode_actions(const json_t *arr, const char *base, struct sim_scenario *sc,
                           struct diag *d)
{
    sc->actions = xcalloc(json_array_size(arr) + 1, sizeof(*sc->actions));
    struct sim_precheck_memo *memo = sim_precheck_memo_new();
    size_t i;
    json_t *act;
    json_array_foreach(arr, i, act) {
        char *f = path_idx(base, i);
        if (want_type(act, JSON_OBJECT, f, "object", d)) {
            struct sim_action *a = &sc->actions[sc->n_actions++];
            a->index = i;
            a->where = xstrdup(f);
            decode_action(act, f, a, memo, d);
        }
        xfree(f);
    }
    sim_precheck_memo_free(memo);
    qsort(sc->actions, sc->n_actions, sizeof(*sc->actions), action_cmp);
}

/* ---- the Scenario document ---- */

static void add_object(struct sim_scenario *sc, const json_t *obj, char *where)
{
    sc->objects = xreallocarray(sc->objects, sc->n_objects + 1, sizeof(*sc->objects));
    /* shared with the parsed document: nothing changes either (sim_apply
     * admits a copy) */
    sc->objects[sc->n_objects].obj = json_incref((json_t *)obj);
    sc->objects[sc->n_objects].where = where;
    sc->n_objects++;
}

static void check_object_kind(const json_t *obj, const char *where, struct diag *d)
{
    struct diag kd;
    diag_init(&kd);
    if (!json_is_object(obj))
        diag_add(d, DIAG_TYPE_INVALID, where, NULL, "expected object");
    else if (!api_doc_kind(obj, &kd))
        merge_prefixed(where, &kd, d);
    diag_release(&kd);
}

static void decode_spec_basics(const json_t *spec, struct sim_scenario *sc, struct diag *d)
{
    int64_t seed;
    if (int_member(spec, "spec", "seed", 0, INT64_MAX, &seed, d))
        sc->seed = (uint64_t)seed;
    json_t *v;
    if ((v = member(spec, "spec", "start", JSON_STRING, "string", d)) &&
        timefmt_parse(json_string_value(v), &sc->start_ms))
        diag_addj(d, DIAG_INVALID, "spec.start", v,
                  "must be an RFC 3339 time such as 2026-01-01T00:00:00Z");
    if ((v = member(spec, "spec", "classLabel", JSON_STRING, "string", d))) {
        xfree(sc->class_label);
        sc->class_label = xstrdup(json_string_value(v));
    }
    duration_member(spec, "spec", "defaultRuntime", &sc->default_runtime_ms, d);
    bool_member(spec, "spec", "honorTerminationGrace", &sc->honor_grace, d);
    bool_member(spec, "spec", "defaultPool", &sc->default_pool, d);
    duration_member(spec, "spec", "until", &sc->until_rel, d);
}

static void decode_scenario_doc(const json_t *doc, struct sim_scenario *sc, struct diag *d)
{
    static const char *const top[] = {"apiVersion", "kind", "metadata", "spec", "expect", NULL};
    only_keys(doc, "", top, d);
    json_t *md = member(doc, "", "metadata", JSON_OBJECT, "object", d);
    json_t *name = md ? member(md, "metadata", "name", JSON_STRING, "string", d) : NULL;
    if (name) {
        xfree(sc->name);
        sc->name = xstrdup(json_string_value(name));
    }
    json_t *exp = member(doc, "", "expect", JSON_ARRAY, "array", d);
    if (exp)
        sc->expect = json_incref(exp);
    json_t *spec = member(doc, "", "spec", JSON_OBJECT, "object", d);
    if (!spec)
        return;
    static const char *const keys[] = {"seed", "start", "classLabel", "defaultRuntime",
                                       "honorTerminationGrace", "until", "defaultPool",
                                       "controller", "capacity", "objects", "actions", NULL};
    only_keys(spec, "spec", keys, d);
    decode_spec_basics(spec, sc, d);
    json_t *v;
    if ((v = member(spec, "spec", "controller", JSON_OBJECT, "object", d)))
        decode_controller(v, "spec.controller", &sc->cfg, d);
    if ((v = member(spec, "spec", "capacity", JSON_OBJECT, "object", d)))
        decode_capacity(v, "spec.capacity", sc, d);
    if ((v = member(spec, "spec", "objects", JSON_ARRAY, "array", d))) {
        size_t i;
        json_t *o;
        json_array_foreach(v, i, o) {
            char *where = path_idx("spec.objects", i);
            check_object_kind(o, where, d);
            if (json_is_object(o))
                add_object(sc, o, where);
            else
                xfree(where);
        }
    }
    if ((v = member(spec, "spec", "actions", JSON_ARRAY, "array", d)))
        decode_actions(v, "spec.actions", sc, d);
}

static bool is_scenario_doc(const json_t *doc)
{
    const char *k = json_string_value(json_object_get(doc, "kind"));
    const char *av = json_string_value(json_object_get(doc, "apiVersion"));
    return k && !strcmp(k, SCENARIO_KIND) && av && !strcmp(av, SCENARIO_API_VERSION);
}

static char *diag_report(const char *source, const char *what, const struct diag *d)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    for (size_t i = 0; i < d->n; i++) {
        char *m = diag_cause_string(&d->items[i]);
        sbuf_addf(&sb, "%s%s%s%s%s%s", i ? "\n" : "", source ? source : "", source ? ": " : "",
                  what, what[0] ? ": " : "", m);
        xfree(m);
    }
    char *s = sbuf_take(&sb);
    sbuf_release(&sb);
    return s;
}

static void scenario_defaults(struct sim_scenario *sc, const char *source)
{
    memset(sc, 0, sizeof(*sc));
    sc->source = xstrdup(source);
    sc->name = xstrdup("");
    sc->seed = 1;
    timefmt_parse(SIM_DEFAULT_START, &sc->start_ms);
    sc->class_label = xstrdup(SIM_DEFAULT_CLASS_LABEL);
    sc->default_runtime_ms = SIM_DEFAULT_RUNTIME_MS;
    sc->until_rel = -1;
    ctrl_config_defaults(&sc->cfg);
}

int sim_scenario_parse(const char *text, size_t len, const char *source,
                       struct sim_scenario *out, char **err)
{
    scenario_defaults(out, source);
    struct diag d;
    diag_init(&d);
    json_t *docs = NULL;
    int rc = api_parse_documents(text, len, source, &docs, &d);
    if (rc) {
        *err = diag_report(NULL, "", &d); /* the causes start with the source */
        goto fail;
    }
    if (json_array_size(docs) == 0) {
        *err = xasprintf("%s: no documents: a scenario is a Scenario document "
                         "(apiVersion: %s) and/or the manifests to create", source,
                         SCENARIO_API_VERSION);
        rc = CU_EINVAL;
        goto fail;
    }
    size_t i, first = 0;
    json_t *doc;
    json_array_foreach(docs, i, doc) {
        if (!is_scenario_doc(doc))
            continue;
        if (first) {
            *err = xasprintf("%s: document %zu: a second Scenario document (the first is "
                             "document %zu); a file holds at most one", source, i + 1, first);
            rc = CU_EINVAL;
            goto fail;
        }
        first = i + 1;
        decode_scenario_doc(doc, out, &d);
    }
    if (diag_has_errors(&d)) {
        *err = diag_report(source, "Scenario", &d);
        rc = CU_EINVAL;
        goto fail;
    }
    json_array_foreach(docs, i, doc) {
        if (is_scenario_doc(doc))
            continue;
        char *where = xasprintf("document %zu", i + 1);
        check_object_kind(doc, where, &d);
        add_object(out, doc, where);
    }
    if (diag_has_errors(&d)) {
        *err = diag_report(source, "", &d);
        rc = CU_EINVAL;
        goto fail;
    }
    if (sim_scenario_size(out) > SIM_MAX_SCENARIO_SIZE) {
        uint64_t total = sim_scenario_size(out);
        *err = xasprintf("%s: too large: %zu objects at time 0 and %llu action occurrences "
                         "(the sum of spec.actions[].repeat.count) make %llu; a scenario may "
                         "ask for at most %llu", source, out->n_objects,
                         (unsigned long long)(total - out->n_objects), (unsigned long long)total,
                         (unsigned long long)SIM_MAX_SCENARIO_SIZE);
        rc = CU_ELIMIT;
        goto fail;
    }
    json_decref(docs);
    diag_release(&d);
    return 0;
fail:
    json_decref(docs);
    diag_release(&d);
    sim_scenario_release(out);
    return rc ? rc : CU_EINVAL;
}

uint64_t sim_scenario_size(const struct sim_scenario *sc)
{
    uint64_t n = sc->n_objects;
    for (size_t i = 0; i < sc->n_actions; i++)
        n += (uint64_t)sc->actions[i].repeat;
    return n;
}

static int read_all(const char *path, char **text, size_t *len, char **err)
{
    bool is_stdin = !strcmp(path, "-");
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        *err = xasprintf("%s: %s", path, strerror(errno));
        return CU_EIO;
    }
    struct stat st;
    if (!is_stdin && fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        *err = xasprintf("%s: is a directory (a scenario is one YAML file)", path);
        fclose(f);
        return CU_EIO;
    }
    struct sbuf sb;
    sbuf_init(&sb, MAX_SCENARIO_BYTES);
    char buf[65536];
    size_t n;
    int rc = 0;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
        if (sbuf_add(&sb, buf, n)) {
            *err = xasprintf("%s: larger than %zu MiB", path, MAX_SCENARIO_BYTES >> 20);
            rc = CU_ELIMIT;
            break;
        }
    }
    if (!rc && ferror(f)) {
        *err = xasprintf("%s: cannot read: %s", path, strerror(errno));
        rc = CU_EIO;
    }
    if (!is_stdin)
        fclose(f);
    *len = sb.len;
    *text = sbuf_take(&sb);
    sbuf_release(&sb);
    return rc;
}

int sim_scenario_load(const char *path, struct sim_scenario *out, char **err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = read_all(path, &text, &len, err);
    if (!rc)
        rc = sim_scenario_parse(text, len, path, out, err);
    else
        memset(out, 0, sizeof(*out));
    xfree(text);
    return rc;
}

void sim_scenario_release(struct sim_scenario *sc)
{
    if (!sc)
        return;
    for (size_t i = 0; i < sc->n_objects; i++) {
        json_decref(sc->objects[i].obj);
        xfree(sc->objects[i].where);
    }
    for (size_t i = 0; i < sc->n_pools; i++) {
        xfree(sc->pools[i].name);
        xfree(sc->pools[i].stockouts);
        xfree(sc->pools[i].revocations);
    }
    for (size_t i = 0; i < sc->n_actions; i++) {
        struct sim_action *a = &sc->actions[i];
        xfree(a->where);
        json_decref(a->manifest);
        json_decref(a->admitted);
        xfree(a->ns);
        xfree(a->name);
        xfree(a->group);
    }
    xfree(sc->objects);
    xfree(sc->pools);
    xfree(sc->actions);
    xfree(sc->source);
    xfree(sc->name);
    xfree(sc->class_label);
    json_decref(sc->expect);
    memset(sc, 0, sizeof(*sc));
}
