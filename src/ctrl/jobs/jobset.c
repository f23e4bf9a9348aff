/*
 * jobs/jobset: the jobset.x-k8s.io/v1alpha2 JobSet reconciler. Two roles
 * in one pass, like jobs/rayjob.c:
 *  1. Kueue's jobset.x-k8s.io/jobset integration through the generic
 *     lifecycle of jobs/frame.c: one pod set per replicated job, named
 *     after it, count replicas x min(parallelism, completions), template the
 *     Job's pod template; active while a replicated job has active child
 *     Jobs; finished at the Completed or Failed condition; PodsReady when
 *     every replicated job's child Jobs are all ready or succeeded.
 *  2. The JobSet controller: child Jobs <jobset>-<replicatedJob>-<jobIndex>
 *     labelled and annotated with JobSet's keys (jobset.sigs.k8s.io/...),
 *     owned by the JobSet (so Kueue never queues them by themselves), the
 *     headless Service named by network.subdomain (default the JobSet's
 *     name) that gives pods the hostnames <job>-<podIndex>.<subdomain>;
 *     suspend/resume of the child Jobs with the JobSet (a resumed child Job
 *     takes the JobSet's current pod template, where Kueue injected the
 *     flavors' node selectors and tolerations); the success policy (All or
 *     Any of targetReplicatedJobs' Jobs completed) and the failure policy
 *     (a failed child Job restarts the whole set, recreating every child
 *     Job with restart-attempt = status.restarts, until maxRestarts, then
 *     the JobSet fails); status.replicatedJobsStatus, conditions Completed,
 *     Failed and Suspended, terminalState.
 * cueue also gives every container the identity multi-host code reads
 * (JOBSET_NAME, REPLICATED_JOB_NAME, JOB_INDEX, JOB_GLOBAL_INDEX) and, for a
 * pod set that requests google.com/tpu, TPU_WORKER_HOSTNAMES with the
 * child Job's pod host names as GKE's TPU webhook does for a JobSet (the
 * Job controller adds TPU_WORKER_ID = the completion index). Not done:
 * failurePolicy.rules, startupPolicy, dependsOn, coordinator, exclusive
 * placement, ttlSecondsAfterFinished (kept as sent; docs/jobset.md).
 */
#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "api/schema.h"
#include "ctrl/ctrl-int.h"
#include "ctrl/jobs/jobs.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

#define JS_NAME_KEY "jobset.sigs.k8s.io/jobset-name"
#define JS_UID_KEY "jobset.sigs.k8s.io/jobset-uid"
#define JS_RJOB_KEY "jobset.sigs.k8s.io/replicatedjob-name"
#define JS_RJOB_REPLICAS_KEY "jobset.sigs.k8s.io/replicatedjob-replicas"
#define JS_GLOBAL_REPLICAS_KEY "jobset.sigs.k8s.io/global-replicas"
#define JS_JOB_INDEX_KEY "jobset.sigs.k8s.io/job-index"
#define JS_JOB_GLOBAL_INDEX_KEY "jobset.sigs.k8s.io/job-global-index"
#define JS_RESTART_KEY "jobset.sigs.k8s.io/restart-attempt"

/* ---- Kueue's integration ---- */

/* Pods of one child Job: min(parallelism, completions), as Kueue counts. */
static int32_t job_pods(const json_t *rj)
{
    const json_t *js = JX_GET(rj, "template", "spec");
    int64_t par = JX_INT(js, 1, "parallelism");
    const json_t *comp = json_object_get(js, "completions");
    if (json_is_integer(comp) && json_integer_value(comp) < par)
        par = json_integer_value(comp);
    return (int32_t)par;
}

static int32_t rjob_replicas(const json_t *rj) { return (int32_t)JX_INT(rj, 1, "replicas"); }

static int jobset_podsets(struct ctrl *c, const json_t *js, struct jobs_podsets *out,
                          char *err, size_t errlen)
{
    (void)c;
    const json_t *rjobs = JX_GET(js, "spec", "replicatedJobs");
    if (json_array_size(rjobs) == 0) {
        snprintf(err, errlen, "spec.replicatedJobs: Required value");
        return CU_EINVAL;
    }
    size_t i;
    json_t *rj;
    json_array_foreach(rjobs, i, rj) {
        json_t *t = jx_deep_copy(JX_GET(rj, "template", "spec", "template"));
        jobs_podsets_add(out, jx_or_empty(JX_STR(rj, "name")),
                         rjob_replicas(rj) * job_pods(rj), 0, t ? t : json_object());
    }
    return 0;
}

static json_t *jobset_template_at(json_t *js, size_t i, const char *name)
{
    json_t *rj = json_array_get(JX_GET(js, "spec", "replicatedJobs"), i);
    if (!rj || strcmp(jx_or_empty(JX_STR(rj, "name")), name))
        return NULL;
    return JX_OBJ(rj, "template", "spec", "template");
}

static bool jobset_is_active(const json_t *js)
{
    size_t i;
    json_t *st;
    json_array_foreach(JX_GET(js, "status", "replicatedJobsStatus"), i, st) {
        if (JX_INT(st, 0, "active") > 0)
            return true;
    }
    return false;
}

static bool jobset_finished(const json_t *js, char *msg, size_t msglen, bool *success)
{
    const char *type = api_cond_is_true(js, "Completed") ? "Completed"
                       : api_cond_is_true(js, "Failed")  ? "Failed"
                                                         : NULL;
    if (!type)
        return false;
    *success = !strcmp(type, "Completed");
    snprintf(msg, msglen, "%s", jx_or_empty(JX_STR(api_cond_get(js, type), "message")));
    return true;
}

static bool jobset_pods_ready(const json_t *js, const json_t *wl)
{
    (void)wl;
    const json_t *st = JX_GET(js, "status", "replicatedJobsStatus");
    size_t i;
    json_t *rj;
    json_array_foreach(JX_GET(js, "spec", "replicatedJobs"), i, rj) {
        const json_t *s = json_array_get(st, i);
        if (JX_INT(s, 0, "ready") + JX_INT(s, 0, "succeeded") < rjob_replicas(rj))
            return false;
    }
    return true;
}

static const struct jobs_integration jobset_integration = {
    .kind = "JobSet",
    .group = "jobset.x-k8s.io",
    .api_version = "jobset.x-k8s.io/v1alpha2",
    .kind_id = KIND_JOBSET,
    .podsets = jobset_podsets,
    .template_at = jobset_template_at,
    .is_active = jobset_is_active,
    .finished = jobset_finished,
    .pods_ready = jobset_pods_ready,
};

/* ---- the JobSet controller ---- */

/* One child Job slot: replicated job i, index j. */
struct child {
    const json_t *rj;
    size_t rjob;
    int32_t index, global_index;
    json_t *job; /* the existing child Job of the current restart, or NULL */
};

struct js_view {
    const json_t *js;
    const char *ns;
    int64_t restarts;
    struct child *kids;
    size_t n;
};

static bool job_cond(const json_t *job, const char *type) { return api_cond_is_true(job, type); }
static bool job_finished(const json_t *job)
{
    return job_cond(job, "Complete") || job_cond(job, "Failed");
}

static char *child_name(const json_t *js, const json_t *rj, int32_t index)
{
    return xasprintf("%s-%s-%d", api_name(js), jx_or_empty(JX_STR(rj, "name")), index);
}

static const char *subdomain(const json_t *js)
{
    const char *s = JX_STR(js, "spec", "network", "subdomain");
    return s && s[0] ? s : api_name(js);
}

static bool dns_hostnames(const json_t *js)
{
    return JX_BOOL(js, true, "spec", "network", "enableDNSHostnames");
}

/* Read the child Jobs; a Job of an earlier restart attempt is deleted
 * (the restart recreates it) and counts as missing. */
static void view_init(struct ctrl *c, const json_t *js, struct js_view *v)
{
    memset(v, 0, sizeof(*v));
    v->js = js;
    v->ns = api_namespace(js);
    v->restarts = JX_INT(js, 0, "status", "restarts");
    const json_t *rjobs = JX_GET(js, "spec", "replicatedJobs");
    size_t i, total = 0;
    json_t *rj;
    json_array_foreach(rjobs, i, rj)
        total += (size_t)rjob_replicas(rj);
    v->kids = xcalloc(total ? total : 1, sizeof(*v->kids));
    char buf[24];
    snprintf(buf, sizeof(buf), "%lld", (long long)v->restarts);
    json_array_foreach(rjobs, i, rj) {
        for (int32_t j = 0; j < rjob_replicas(rj); j++) {
            struct child *k = &v->kids[v->n];
            k->rj = rj;
            k->rjob = i;
            k->index = j;
            k->global_index = (int32_t)v->n++;
            char *name = child_name(js, rj, j);
            json_t *job = store_get(ctrl_store(c), KIND_JOB, v->ns, name);
            xfree(name);
            if (job && strcmp(jx_or_empty(api_controller_uid(job)), jx_or_empty(api_uid(js)))) {
                json_decref(job); /* someone else's Job of that name */
                continue;
            }
            const char *attempt = job ? api_label(job, JS_RESTART_KEY) : NULL;
            if (job && (!attempt || strcmp(attempt, buf))) {
                if (!api_is_deleting(job))
                    store_delete(ctrl_store(c), KIND_JOB, v->ns, api_name(job), api_uid(job),
                                 NULL);
                json_decref(job);
                continue;
            }
            k->job = job;
        }
    }
}

static void view_release(struct js_view *v)
{
    for (size_t i = 0; i < v->n; i++)
        json_decref(v->kids[i].job);
    xfree(v->kids);
}

static void add_env(json_t *env, const char *name, const char *value)
{
    json_array_append_new(env, json_pack("{s:s, s:s}", "name", name, "value", value));
}

static void set_identity(json_t *obj, const struct js_view *v, const struct child *k)
{
    char idx[16], gidx[16], reps[16], greps[16], attempt[24];
    snprintf(idx, sizeof(idx), "%d", k->index);
    snprintf(gidx, sizeof(gidx), "%d", k->global_index);
    snprintf(reps, sizeof(reps), "%d", rjob_replicas(k->rj));
    snprintf(greps, sizeof(greps), "%zu", v->n);
    snprintf(attempt, sizeof(attempt), "%lld", (long long)v->restarts);
    const char *kv[][2] = {{JS_NAME_KEY, api_name(v->js)},
                           {JS_UID_KEY, jx_or_empty(api_uid(v->js))},
                           {JS_RJOB_KEY, jx_or_empty(JX_STR(k->rj, "name"))},
                           {JS_RJOB_REPLICAS_KEY, reps},
                           {JS_GLOBAL_REPLICAS_KEY, greps},
                           {JS_JOB_INDEX_KEY, idx},
                           {JS_JOB_GLOBAL_INDEX_KEY, gidx},
                           {JS_RESTART_KEY, attempt}};
    for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++) {
        api_set_label(obj, kv[i][0], kv[i][1]);
        api_set_annotation(obj, kv[i][0], kv[i][1]);
    }
}

/* The child Job's pod template from the JobSet's current one (admission
 * injected): JobSet's labels and annotations, the subdomain, and the
 * identity env. New reference. */
static json_t *child_template(const struct js_view *v, const struct child *k, const char *name)
{
    json_t *t = jx_deep_copy(JX_GET(k->rj, "template", "spec", "template"));
    if (!t)
        t = json_object();
    set_identity(t, v, k);
    json_t *spec = JX_OBJ(t, "spec");
    if (dns_hostnames(v->js) && !JX_STR(spec, "subdomain"))
        json_object_set_new(spec, "subdomain", json_string(subdomain(v->js)));
    json_t *env = json_array();
    char buf[16];
    add_env(env, "JOBSET_NAME", api_name(v->js));
    add_env(env, "REPLICATED_JOB_NAME", jx_or_empty(JX_STR(k->rj, "name")));
    snprintf(buf, sizeof(buf), "%d", k->index);
    add_env(env, "JOB_INDEX", buf);
    snprintf(buf, sizeof(buf), "%d", k->global_index);
    add_env(env, "JOB_GLOBAL_INDEX", buf);
    if (kq_spec_uses_resource(spec, "google.com/tpu")) {
        int64_t pods = JX_INT(k->rj, job_pods(k->rj), "template", "spec", "completions");
        struct sbuf sb;
        sbuf_init(&sb, 0);
        for (int64_t p = 0; p < pods; p++)
            sbuf_addf(&sb, "%s%s-%lld.%s", p ? "," : "", name, (long long)p, subdomain(v->js));
        add_env(env, "TPU_WORKER_HOSTNAMES", sb.buf);
        sbuf_release(&sb);
    }
    jobs_pod_add_env(spec, env);
    json_decref(env);
    return t;
}

static void create_child(struct ctrl *c, const struct js_view *v, const struct child *k)
{
    char *name = child_name(v->js, k->rj, k->index);
    json_t *job = api_object_new("batch/v1", "Job", v->ns, name);
    char uid[37];
    rng_uuid(ctrl_rng(c), uid); /* for the selector the API server would generate */
    JX_SET_NEW(job, json_string(uid), "metadata", "uid");
    const json_t *md = JX_GET(k->rj, "template", "metadata");
    if (JX_GET(md, "labels"))
        JX_SET_NEW(job, jx_deep_copy(JX_GET(md, "labels")), "metadata", "labels");
    if (JX_GET(md, "annotations"))
        JX_SET_NEW(job, jx_deep_copy(JX_GET(md, "annotations")), "metadata", "annotations");
    set_identity(job, v, k);
    api_owner_ref_add(job, api_owner_ref_new(v->js, true));
    json_t *spec = jx_deep_copy(JX_GET(k->rj, "template", "spec"));
    json_object_set_new(spec, "template", child_template(v, k, name));
    json_object_set_new(spec, "suspend", json_false());
    if (!json_object_get(spec, "backoffLimit"))
        json_object_set_new(spec, "backoffLimit", json_integer(6));
    json_object_set_new(job, "spec", spec);
    api_job_generate_selector(job);
    if (store_create(ctrl_store(c), KIND_JOB, v->ns, job, NULL) == 0)
        ctrl_event(c, v->js, "Normal", "SuccessfulCreate", "Created Job: %s", name);
    json_decref(job);
    xfree(name);
}

/* Suspend (true) or resume (false) an existing child Job; a resumed Job
 * takes the JobSet's current pod template (JobSet's resume path). */
static void set_child_suspend(struct ctrl *c, const struct js_view *v, const struct child *k,
                              bool suspend)
{
    json_t *cp = jx_deep_copy(k->job);
    json_object_set_new(JX_OBJ(cp, "spec"), "suspend", json_boolean(suspend));
    if (!suspend) {
        json_t *t = child_template(v, k, api_name(k->job));
        /* keep the labels the API server generated for the selector */
        const char *lk;
        json_t *lv;
        json_object_foreach(JX_GET(k->job, "spec", "template", "metadata", "labels"), lk, lv) {
            if (!JX_GET(t, "metadata", "labels", lk))
                JX_SET_NEW(t, json_incref(lv), "metadata", "labels", lk);
        }
        JX_SET_NEW(cp, t, "spec", "template");
    }
    kq_update_take(c, KIND_JOB, cp, STORE_UPDATE_MAIN);
    json_decref(cp);
}

static void delete_children(struct ctrl *c, const struct js_view *v, bool active_only)
{
    for (size_t i = 0; i < v->n; i++) {
        const json_t *job = v->kids[i].job;
        if (!job || (active_only && job_finished(job)) || api_is_deleting(job))
            continue;
        if (store_delete(ctrl_store(c), KIND_JOB, v->ns, api_name(job), api_uid(job), NULL) == 0)
            ctrl_event(c, v->js, "Normal", "SuccessfulDelete", "Deleted Job: %s", api_name(job));
    }
}

/* The headless Service <subdomain> selecting the JobSet's pods, owned by
 * the JobSet (garbage collection removes it with the JobSet). */
static void ensure_service(struct ctrl *c, const json_t *js)
{
    if (!dns_hostnames(js))
        return;
    const char *name = subdomain(js);
    json_t *cur = store_get(ctrl_store(c), KIND_SERVICE, api_namespace(js), name);
    if (cur) {
        json_decref(cur);
        return;
    }
    json_t *svc = api_object_new("v1", "Service", api_namespace(js), name);
    api_set_label(svc, JS_NAME_KEY, api_name(js));
    api_owner_ref_add(svc, api_owner_ref_new(js, true));
    JX_SET_NEW(svc, json_pack("{s:s}", JS_NAME_KEY, api_name(js)), "spec", "selector");
    JX_SET_NEW(svc, json_string("None"), "spec", "clusterIP");
    JX_SET_NEW(svc, json_pack("[s]", "None"), "spec", "clusterIPs");
    JX_SET_NEW(svc, json_string("ClusterIP"), "spec", "type");
    JX_SET_NEW(svc, json_boolean(JX_BOOL(js, true, "spec", "network", "publishNotReadyAddresses")),
               "spec", "publishNotReadyAddresses");
    if (store_create(ctrl_store(c), KIND_SERVICE, api_namespace(js), svc, NULL) == 0)
        ctrl_event(c, js, "Normal", "SuccessfulCreate", "Created Service: %s", name);
    json_decref(svc);
}

/* status.replicatedJobsStatus from the child Jobs. */
static json_t *rjob_status(const struct js_view *v)
{
    json_t *out = json_array();
    size_t i;
    json_t *rj;
    json_array_foreach(JX_GET(v->js, "spec", "replicatedJobs"), i, rj) {
        int32_t ready = 0, succeeded = 0, failed = 0, active = 0, suspended = 0;
        for (size_t k = 0; k < v->n; k++) {
            const json_t *job = v->kids[k].job;
            if (v->kids[k].rjob != i || !job)
                continue;
            if (job_cond(job, "Complete"))
                succeeded++;
            else if (job_cond(job, "Failed"))
                failed++;
            else if (JX_BOOL(job, false, "spec", "suspend"))
                suspended++;
            if (!job_finished(job) && JX_INT(job, 0, "status", "active") > 0)
                active++;
            if (!job_finished(job) && JX_INT(job, 0, "status", "ready") +
                                              JX_INT(job, 0, "status", "succeeded") >=
                                          job_pods(rj))
                ready++;
        }
        json_array_append_new(out, json_pack("{s:s, s:i, s:i, s:i, s:i, s:i}", "name",
                                             jx_or_empty(JX_STR(rj, "name")), "ready", ready,
                                             "succeeded", succeeded, "failed", failed,
                                             "active", active, "suspended", suspended));
    }
    return out;
}

static bool targeted(const json_t *js, const json_t *rj)
{
    const json_t *t = JX_GET(js, "spec", "successPolicy", "targetReplicatedJobs");
    if (json_array_size(t) == 0)
        return true;
    size_t i;
    json_t *n;
    json_array_foreach(t, i, n) {
        if (!strcmp(jx_or_empty(json_string_value(n)), jx_or_empty(JX_STR(rj, "name"))))
            return true;
    }
    return false;
}

/* JobSet's success policy: All (every Job of the targeted replicated jobs
 * completed) or Any (one of them completed). */
static bool success_met(const struct js_view *v)
{
    bool any_op = !strcmp(jx_or_empty(JX_STR(v->js, "spec", "successPolicy", "operator")), "Any");
    bool all = true, any = false, seen = false;
    for (size_t i = 0; i < v->n; i++) {
        if (!targeted(v->js, v->kids[i].rj))
            continue;
        seen = true;
        bool done = v->kids[i].job && job_cond(v->kids[i].job, "Complete");
        all &= done;
        any |= done;
    }
    return seen && (any_op ? any : all);
}

static const json_t *first_failed(const struct js_view *v)
{
    for (size_t i = 0; i < v->n; i++)
        if (v->kids[i].job && job_cond(v->kids[i].job, "Failed"))
            return v->kids[i].job;
    return NULL;
}

static void finish(struct ctrl *c, const struct js_view *v, json_t *cp, bool ok,
                   const char *reason, const char *msg)
{
    int64_t now = ctrl_now(c);
    api_cond_set(cp, ok ? "Completed" : "Failed", "True", reason, msg, now);
    JX_SET_NEW(cp, json_string(ok ? "Completed" : "Failed"), "status", "terminalState");
    ctrl_event(c, v->js, ok ? "Normal" : "Warning", reason, "%s", msg);
    delete_children(c, v, true);
}

/* An unsuspended, unfinished JobSet: the policies, then the child Jobs. */
static void sync_running(struct ctrl *c, const struct js_view *v, json_t *cp)
{
    const json_t *failed = first_failed(v);
    if (failed) {
        int64_t max = JX_INT(v->js, 0, "spec", "failurePolicy", "maxRestarts");
        if (v->restarts < max) {
            /* restart the whole set: every child Job is recreated */
            JX_SET_NEW(cp, json_integer(v->restarts + 1), "status", "restarts");
            JX_SET_NEW(cp, json_integer(JX_INT(v->js, 0, "status", "restartsCountTowardsMax") + 1),
                       "status", "restartsCountTowardsMax");
            ctrl_event(c, v->js, "Warning", "Restarting",
                       "restarting the JobSet (attempt %lld of %lld): job %s failed",
                       (long long)v->restarts + 1, (long long)max, api_name(failed));
            delete_children(c, v, false);
            return;
        }
        finish(c, v, cp, false, max > 0 ? "ReachedMaxRestarts" : "FailedJobs",
               max > 0 ? "jobset failed due to reaching max number of restarts"
                       : "jobset failed due to one or more job failures");
        return;
    }
    if (success_met(v)) {
        finish(c, v, cp, true, "AllJobsCompleted", "jobset completed successfully");
        return;
    }
    if (api_cond_is_true(v->js, "Suspended")) {
        api_cond_set(cp, "Suspended", "False", "ResumeJobs", "jobset is resumed", ctrl_now(c));
        ctrl_event(c, v->js, "Normal", "ResumeJobs", "jobset is resumed");
    }
    ensure_service(c, v->js);
    for (size_t i = 0; i < v->n; i++) {
        const struct child *k = &v->kids[i];
        if (!k->job)
            create_child(c, v, k);
        else if (JX_BOOL(k->job, false, "spec", "suspend") && !job_finished(k->job))
            set_child_suspend(c, v, k, false);
    }
}

static void jobset_sync(struct ctrl *c, int rid, struct kq_index *pods_ix, const json_t *js,
                        int32_t cap)
{
    (void)pods_ix;
    (void)cap;
    if (api_is_deleting(js))
        return;
    struct js_view v;
    view_init(c, js, &v);
    json_t *cp = store_status_copy(js, NULL);
    bool terminal = api_cond_is_true(js, "Completed") || api_cond_is_true(js, "Failed");
    if (terminal) {
        delete_children(c, &v, true);
    } else if (jobs_is_suspended(js)) {
        for (size_t i = 0; i < v.n; i++) {
            const struct child *k = &v.kids[i];
            if (k->job && !JX_BOOL(k->job, false, "spec", "suspend") && !job_finished(k->job))
                set_child_suspend(c, &v, k, true);
        }
        if (!api_cond_is_true(js, "Suspended") &&
            api_cond_set(cp, "Suspended", "True", "SuspendJobs", "jobset is suspended",
                         ctrl_now(c)))
            ctrl_event(c, js, "Normal", "SuspendJobs", "jobset is suspended");
    } else {
        sync_running(c, &v, cp);
    }
    JX_SET_NEW(cp, rjob_status(&v), "status", "replicatedJobsStatus");
    if (!JX_GET(cp, "status", "restarts"))
        JX_SET_NEW(cp, json_integer(0), "status", "restarts");
    if (!jx_equal(JX_GET(cp, "status"), JX_GET(js, "status")) &&
        kq_update_take(c, KIND_JOBSET, cp, STORE_UPDATE_STATUS) == CU_ECONFLICT)
        ctrl_enqueue(c, rid, v.ns, api_name(js));
    json_decref(cp);
    view_release(&v);
}

static const struct ctrl_reconciler_ops jobset_ops = {
    .name = "jobset",
    .on_event = jobs_rec_on_event,
    .reconcile = jobs_rec_reconcile,
    .after_round = NULL,
    .free = jobs_rec_free,
};

void ctrl__jobset_register(struct ctrl *c)
{
    struct jobs_rec *r = jobs_rec_new(&jobset_integration, jobset_sync);
    r->rid = ctrl_register(c, &jobset_ops, r);
    jobs_rec_join(r, c); /* one ownerReferences read per event */
}
