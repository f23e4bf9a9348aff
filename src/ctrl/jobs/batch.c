/*
 * jobs/batch: what Kubernetes' kube-controller-manager Job controller does
 * for a batch/v1 Job, on this machine. For an unsuspended Job it keeps
 * min(parallelism, remaining completions) Pods active (NonIndexed), or one
 * Pod per incomplete index up to parallelism (Indexed), replacing failed
 * Pods until backoffLimit; it deletes the active Pods of a suspended or
 * finished Job, and writes the Job status the way Kubernetes >= 1.31 does
 * (SuccessCriteriaMet then Complete, FailureTarget then Failed).
 *
 * Pods get the names, labels, annotations, hostname/subdomain and owner
 * reference Kubernetes gives them, plus the environment multi-host training
 * reads (shared/spec/provisioning.md §4): JOB_COMPLETION_INDEX, and for
 * Indexed Jobs MASTER_ADDR/MASTER_PORT, WORLD_SIZE, RANK, LOCAL_RANK,
 * JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID, and
 * TPU_WORKER_ID/TPU_WORKER_HOSTNAMES when the pod requests google.com/tpu.
 * Every host of this machine is "localhost" (127.0.0.1).
 *
 * Counts survive Pod deletion only as far as Kubernetes' do without its
 * tracking finalizers: succeeded/failed never decrease, completedIndexes
 * is a union. restartPolicy OnFailure is treated like Never (a failed Pod
 * is replaced, not restarted in place).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "ctrl/jobs/jobs.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#define JOB_DEFAULT_BACKOFF_LIMIT 6
#define JOB_NAME_TRIES 5
#define JOB_MAX_CREATES_PER_SYNC 500 /* per second; Kubernetes' MaxPodCreateDeletePerSync */

struct batch_view {
    const json_t *job;
    const char *ns;
    const char *name;
    const char *uid;
    int32_t parallelism;
    int32_t completions; /* 0 when unset */
    bool indexed;
    int32_t backoff_limit;
    int64_t deadline_s; /* activeDeadlineSeconds, 0 = none */
    json_t *pods;       /* owned array */
    int32_t active, ready, succeeded_pods, failed_pods;
    bool *done;      /* completed indexes [0, completions) */
    bool *running;   /* indexes with an active pod */
};

json_t *jobs_owned_pods(struct ctrl *c, struct kq_index *pods_ix, const json_t *owner)
{
    json_t *out = json_array();
    size_t n;
    char *const *names = kq_index_get(pods_ix, api_uid(owner), &n);
    for (size_t i = 0; i < n; i++) {
        json_t *p = store_get(ctrl_store(c), KIND_POD, api_namespace(owner), names[i]);
        if (p && !strcmp(jx_or_empty(api_controller_uid(p)), jx_or_empty(api_uid(owner))))
            json_array_append(out, p);
        json_decref(p);
    }
    return out;
}

static bool pod_is_active(const json_t *pod)
{
    return !jobs_pod_is_terminal(pod) && !api_is_deleting(pod);
}

static int32_t pod_index(const json_t *pod)
{
    const char *s = api_annotation(pod, "batch.kubernetes.io/job-completion-index");
    return s ? (int32_t)strtol(s, NULL, 10) : -1;
}

/* "0-3,5" -> done[] (indexes outside [0, n) ignored). */
static void parse_indexes(const char *text, bool *done, int32_t n)
{
    const char *p = text;
    while (p && *p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            break;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        for (long i = a; i <= b && i < n; i++)
            if (i >= 0)
                done[i] = true;
        p = *end == ',' ? end + 1 : NULL;
    }
}

static char *format_indexes(const bool *done, int32_t n)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    for (int32_t i = 0; i < n;) {
        if (!done[i]) {
            i++;
            continue;
        }
        int32_t j = i;
        while (j + 1 < n && done[j + 1])
            j++;
        if (sb.len)
            sbuf_addc(&sb, ',');
        if (j == i)
            sbuf_addf(&sb, "%d", i);
        else
            sbuf_addf(&sb, "%d-%d", i, j);
        i = j + 1;
    }
    char *s = sbuf_take(&sb);
    sbuf_release(&sb);
    return s;
}

static void view_init(struct ctrl *c, struct kq_index *ix, const json_t *job,
                      struct batch_view *v)
{
    memset(v, 0, sizeof(*v));
    v->job = job;
    v->ns = api_namespace(job);
    v->name = api_name(job);
    v->uid = jx_or_empty(api_uid(job));
    v->parallelism = (int32_t)JX_INT(job, 1, "spec", "parallelism");
    v->completions = (int32_t)JX_INT(job, 0, "spec", "completions");
    const char *mode = JX_STR(job, "spec", "completionMode");
    v->indexed = mode && !strcmp(mode, "Indexed") && v->completions > 0;
    v->backoff_limit = (int32_t)JX_INT(job, JOB_DEFAULT_BACKOFF_LIMIT, "spec", "backoffLimit");
    v->deadline_s = JX_INT(job, 0, "spec", "activeDeadlineSeconds");
    v->pods = jobs_owned_pods(c, ix, job);
    int32_t n = v->completions > 0 ? v->completions : 1;
    v->done = xcalloc((size_t)n, sizeof(bool));
    v->running = xcalloc((size_t)n, sizeof(bool));
    if (v->indexed)
        parse_indexes(JX_STR(job, "status", "completedIndexes"), v->done, v->completions);
    size_t i;
    json_t *pod;
    json_array_foreach(v->pods, i, pod) {
        int32_t idx = pod_index(pod);
        bool in_range = v->indexed && idx >= 0 && idx < v->completions;
        if (jobs_pod_succeeded(pod)) {
            v->succeeded_pods++;
            if (in_range)
                v->done[idx] = true;
        } else if (jobs_pod_failed(pod)) {
            v->failed_pods++;
        } else if (pod_is_active(pod)) {
            v->active++;
            v->ready += jobs_pod_ready(pod);
            if (in_range)
                v->running[idx] = true;
        }
    }
}

static void view_release(struct batch_view *v)
{
    json_decref(v->pods);
    xfree(v->done);
    xfree(v->running);
}

static int32_t view_succeeded(const struct batch_view *v, const json_t *status)
{
    if (v->indexed) {
        int32_t n = 0;
        for (int32_t i = 0; i < v->completions; i++)
            n += v->done[i];
        return n;
    }
    int32_t prev = (int32_t)JX_INT(status, 0, "succeeded");
    return prev > v->succeeded_pods ? prev : v->succeeded_pods;
}

/* ---- pods ---- */

/* The multi-host training env of one Indexed pod (provisioning.md §4). */
static json_t *pod_env(const struct batch_view *v, int32_t index, bool uses_tpu)
{
    json_t *env = json_array();
#define ENV(n, val) json_array_append_new(env, json_pack("{s:s, s:s}", "name", (n), "value", (val)))
    char buf[64], port[16];
    if (!v->indexed)
        return env;
    snprintf(port, sizeof(port), "%d", jobs_master_port(v->uid));
    snprintf(buf, sizeof(buf), "%d", index);
    ENV("JOB_COMPLETION_INDEX", buf);
    if (uses_tpu) {
        ENV("TPU_WORKER_ID", buf);
        struct sbuf sb;
        sbuf_init(&sb, 0);
        for (int32_t i = 0; i < v->completions; i++)
            sbuf_addf(&sb, "%slocalhost", i ? "," : "");
        ENV("TPU_WORKER_HOSTNAMES", sb.buf);
        sbuf_release(&sb);
    }
    ENV("MASTER_ADDR", "127.0.0.1");
    ENV("MASTER_PORT", port);
    char world[16];
    snprintf(world, sizeof(world), "%d", v->completions);
    ENV("WORLD_SIZE", world);
    ENV("RANK", buf);
    ENV("LOCAL_RANK", "0");
    char coord[48];
    snprintf(coord, sizeof(coord), "127.0.0.1:%s", port);
    ENV("JAX_COORDINATOR_ADDRESS", coord);
    ENV("JAX_NUM_PROCESSES", world);
    ENV("JAX_PROCESS_ID", buf);
#undef ENV
    return env;
}

static json_t *build_pod(struct ctrl *c, const struct batch_view *v, int32_t index)
{
    const json_t *tmpl = JX_GET(v->job, "spec", "template");
    char sfx[6];
    rng_suffix(ctrl_rng(c), sfx, 5);
    char *name = index >= 0 ? xasprintf("%s-%d-%s", v->name, index, sfx)
                            : xasprintf("%s-%s", v->name, sfx);
    json_t *pod = api_object_new("v1", "Pod", v->ns, name);
    xfree(name);
    json_t *md = JX_OBJ(pod, "metadata");
    json_t *labels = jx_deep_copy(JX_GET(tmpl, "metadata", "labels"));
    json_object_set_new(md, "labels", labels ? labels : json_object());
    json_t *ann = JX_GET(tmpl, "metadata", "annotations");
    if (ann)
        json_object_set_new(md, "annotations", jx_deep_copy(ann));
    api_set_label(pod, "batch.kubernetes.io/controller-uid", v->uid);
    api_set_label(pod, "batch.kubernetes.io/job-name", v->name);
    api_set_label(pod, "controller-uid", v->uid);
    api_set_label(pod, "job-name", v->name);
    api_owner_ref_add(pod, api_owner_ref_new(v->job, true));
    json_t *spec = jx_deep_copy(JX_GET(tmpl, "spec"));
    if (!spec)
        spec = json_object();
    if (index >= 0) {
        char idx[16];
        snprintf(idx, sizeof(idx), "%d", index);
        api_set_label(pod, "batch.kubernetes.io/job-completion-index", idx);
        api_set_annotation(pod, "batch.kubernetes.io/job-completion-index", idx);
        char *host = xasprintf("%s-%d", v->name, index);
        json_object_set_new(spec, "hostname", json_string(host));
        xfree(host);
    }
    json_t *env = pod_env(v, index, kq_spec_uses_resource(spec, "google.com/tpu"));
    jobs_pod_add_env(spec, env);
    json_decref(env);
    json_object_set_new(pod, "spec", spec);
    JX_SET_NEW(pod, json_string("Pending"), "status", "phase");
    return pod;
}

static bool create_pod(struct ctrl *c, const struct batch_view *v, int32_t index)
{
    for (int t = 0; t < JOB_NAME_TRIES; t++) {
        json_t *pod = build_pod(c, v, index);
        int rc = store_create(ctrl_store(c), KIND_POD, v->ns, pod, NULL);
        if (rc == 0)
            ctrl_event(c, v->job, "Normal", "SuccessfulCreate", "Created pod: %s", api_name(pod));
        json_decref(pod);
        if (rc != CU_EEXIST)
            return rc == 0;
    }
    return false;
}

/* Delete every active pod (suspension, success, failure). Returns how many. */
static int32_t delete_active(struct ctrl *c, const struct batch_view *v)
{
    int32_t n = 0;
    size_t i;
    json_t *pod;
    json_array_foreach(v->pods, i, pod) {
        if (!pod_is_active(pod))
            continue;
        if (store_delete(ctrl_store(c), KIND_POD, v->ns, api_name(pod), api_uid(pod), NULL) == 0) {
            ctrl_event(c, v->job, "Normal", "SuccessfulDelete", "Deleted pod: %s", api_name(pod));
            n++;
        }
    }
    return n;
}

/* One more pod may be created in this sync (see create_missing). */
struct create_pace {
    int32_t budget; /* creates left in this sync */
    bool stopped;   /* the budget ran out or a create failed: sync again later */
};

static bool paced_create(struct ctrl *c, const struct batch_view *v, int32_t index,
                         struct create_pace *p)
{
    if (p->stopped || p->budget == 0 || !create_pod(c, v, index)) {
        p->stopped = true;
        return false;
    }
    p->budget--;
    return true;
}

/* Pods of the Job created in the current second (creationTimestamp has a
 * second's resolution). */
static int32_t created_this_second(const struct batch_view *v, int64_t now)
{
    int32_t n = 0;
    size_t i;
    json_t *pod;
    json_array_foreach(v->pods, i, pod) {
        int64_t at = 0;
        if (timefmt_parse(jx_or_empty(JX_STR(pod, "metadata", "creationTimestamp")), &at) == 0 &&
            at >= now - now % 1000)
            n++;
    }
    return n;
}

/* Create the pods an unsuspended, unfinished Job lacks; returns how many.
 * Paced: at most JOB_MAX_CREATES_PER_SYNC per second (the number
 * Kubernetes' Job controller creates per sync, its
 * MaxPodCreateDeletePerSync; counted from the pods' creationTimestamps, so
 * syncs that follow one another, a restart included, share it), and a
 * failed create ends the creates (its slow start stops at the first
 * error); either way the Job syncs again at the next second for the rest,
 * so one Job with parallelism 100000 cannot flood the store and the
 * machine in one go. */
static int32_t create_missing(struct ctrl *c, int rid, const struct batch_view *v,
                              int32_t succeeded)
{
    int32_t active = v->active, created = 0;
    int64_t now = ctrl_now(c);
    int32_t recent = created_this_second(v, now);
    struct create_pace pace = {recent < JOB_MAX_CREATES_PER_SYNC
                                   ? JOB_MAX_CREATES_PER_SYNC - recent : 0, false};
    if (v->indexed) {
        for (int32_t i = 0; i < v->completions && active < v->parallelism && !pace.stopped;
             i++) {
            if (v->done[i] || v->running[i])
                continue;
            if (paced_create(c, v, i, &pace)) {
                created++;
                active++;
            }
        }
    } else {
        int32_t want;
        if (v->completions > 0) {
            int32_t remaining = v->completions - succeeded;
            want = remaining < v->parallelism ? remaining : v->parallelism;
        } else {
            want = succeeded > 0 ? 0 : v->parallelism;
        }
        for (; active < want && paced_create(c, v, -1, &pace); active++)
            created++;
    }
    if (pace.stopped)
        ctrl_enqueue_at(c, rid, v->ns, v->name, now - now % 1000 + 1000);
    return created;
}

/* ---- status ---- */

/* Set a JobCondition; true only when status, reason or message changed. */
static bool cond_set_job(json_t *job, const char *type, const char *status, const char *reason,
                         const char *message, int64_t now)
{
    json_t *cur = api_cond_get(job, type);
    if (cur && !strcmp(jx_or_empty(JX_STR(cur, "status")), status) &&
        !strcmp(jx_or_empty(JX_STR(cur, "reason")), jx_or_empty(reason)) &&
        !strcmp(jx_or_empty(JX_STR(cur, "message")), jx_or_empty(message)))
        return false;
    bool changed = api_cond_set(job, type, status, reason, message, now);
    json_t *cond = api_cond_get(job, type);
    if (changed && cond) {
        /* batch/v1 JobCondition carries lastProbeTime, no observedGeneration */
        json_object_del(cond, "observedGeneration");
        json_object_set(cond, "lastProbeTime", json_object_get(cond, "lastTransitionTime"));
    }
    return changed;
}

static void set_time(json_t *status, const char *key, int64_t ms)
{
    char ts[TIMEFMT_LEN];
    json_object_set_new(status, key, json_string(timefmt_rfc3339(ms, false, ts)));
}

/* Suspended Job: no pods, Suspended=True. */
static void sync_suspended(struct ctrl *c, const struct batch_view *v, json_t *cp)
{
    int64_t now = ctrl_now(c);
    delete_active(c, v);
    if (cond_set_job(cp, "Suspended", "True", "JobSuspended", "Job suspended", now))
        ctrl_event(c, v->job, "Normal", "Suspended", "Job suspended");
    json_t *st = JX_OBJ(cp, "status");
    json_object_del(st, "startTime");
    json_object_set_new(st, "active", json_integer(0));
    json_object_set_new(st, "ready", json_integer(0));
}

/* Failure checks: backoff limit and active deadline (FailureTarget). */
static void check_failure(struct ctrl *c, int rid, const struct batch_view *v, json_t *cp,
                          int32_t failed)
{
    int64_t now = ctrl_now(c);
    if (api_cond_is_true(cp, "FailureTarget"))
        return;
    const char *reason = NULL, *msg = NULL;
    if (failed > v->backoff_limit) {
        reason = "BackoffLimitExceeded";
        msg = "Job has reached the specified backoff limit";
    } else if (v->deadline_s > 0) {
        int64_t start = 0;
        timefmt_parse(jx_or_empty(JX_STR(cp, "status", "startTime")), &start);
        int64_t at = start + v->deadline_s * 1000;
        if (start > 0 && now >= at) {
            reason = "DeadlineExceeded";
            msg = "Job was active longer than specified deadline";
        } else if (start > 0) {
            ctrl_enqueue_at(c, rid, v->ns, v->name, at);
        }
    }
    if (!reason)
        return;
    cond_set_job(cp, "FailureTarget", "True", reason, msg, now);
    ctrl_event(c, v->job, "Warning", reason, "%s", msg);
}

static void sync_running(struct ctrl *c, int rid, const struct batch_view *v, json_t *cp)
{
    int64_t now = ctrl_now(c);
    json_t *st = JX_OBJ(cp, "status");
    if (api_cond_is_true(cp, "Suspended")) {
        cond_set_job(cp, "Suspended", "False", "JobResumed", "Job resumed", now);
        ctrl_event(c, v->job, "Normal", "Resumed", "Job resumed");
        set_time(st, "startTime", now);
    }
    if (!JX_STR(st, "startTime"))
        set_time(st, "startTime", now);
    int32_t prev_failed = (int32_t)JX_INT(st, 0, "failed");
    int32_t failed = prev_failed > v->failed_pods ? prev_failed : v->failed_pods;
    int32_t succeeded = view_succeeded(v, st);
    check_failure(c, rid, v, cp, failed);
    bool success = v->completions > 0 ? succeeded >= v->completions
                                      : succeeded > 0 && v->active == 0;
    int32_t active = v->active;
    if (api_cond_is_true(cp, "FailureTarget")) {
        active -= delete_active(c, v);
        if (active <= 0) {
            const json_t *ft = api_cond_get(cp, "FailureTarget");
            cond_set_job(cp, "Failed", "True", JX_STR(ft, "reason"), JX_STR(ft, "message"), now);
        }
    } else if (success || api_cond_is_true(cp, "SuccessCriteriaMet")) {
        const char *m = "Reached expected number of succeeded pods";
        cond_set_job(cp, "SuccessCriteriaMet", "True", "CompletionsReached", m, now);
        active -= delete_active(c, v);
        if (active <= 0 && cond_set_job(cp, "Complete", "True", "CompletionsReached", m, now)) {
            set_time(st, "completionTime", now);
            ctrl_event(c, v->job, "Normal", "Completed", "Job completed");
        }
    } else {
        active += create_missing(c, rid, v, succeeded);
    }
    json_object_set_new(st, "active", json_integer(active < 0 ? 0 : active));
    json_object_set_new(st, "ready", json_integer(v->ready));
    json_object_set_new(st, "succeeded", json_integer(succeeded));
    json_object_set_new(st, "failed", json_integer(failed));
}

static void sync_counts_only(const struct batch_view *v, json_t *cp)
{
    json_t *st = JX_OBJ(cp, "status");
    int32_t prev_failed = (int32_t)JX_INT(st, 0, "failed");
    json_object_set_new(st, "active", json_integer(v->active));
    json_object_set_new(st, "ready", json_integer(v->ready));
    json_object_set_new(st, "succeeded", json_integer(view_succeeded(v, st)));
    json_object_set_new(st, "failed",
                        json_integer(prev_failed > v->failed_pods ? prev_failed : v->failed_pods));
}

void jobs_batch_sync(struct ctrl *c, int rid, struct kq_index *pods_ix, const json_t *job,
                     int32_t cap)
{
    if (api_is_deleting(job))
        return;
    struct batch_view v;
    view_init(c, pods_ix, job, &v);
    if (cap >= 0 && cap < v.parallelism)
        v.parallelism = cap;
    /* only the status changes (and an annotation, below): the rest shared */
    json_t *cp = store_status_copy(job, NULL);
    bool finished = api_cond_is_true(job, "Complete") || api_cond_is_true(job, "Failed");
    if (finished) {
        v.active -= delete_active(c, &v);
        sync_counts_only(&v, cp);
    } else if (jobs_is_suspended(job)) {
        sync_counts_only(&v, cp);
        sync_suspended(c, &v, cp);
    } else {
        sync_running(c, rid, &v, cp);
    }
    if (v.indexed) {
        char *idx = format_indexes(v.done, v.completions);
        if (idx[0])
            JX_SET_NEW(cp, json_string(idx), "status", "completedIndexes");
        xfree(idx);
    }
    int rc = 0;
    if (!jx_equal(JX_GET(cp, "status"), JX_GET(job, "status")))
        rc = kq_update_take(c, KIND_JOB, cp, STORE_UPDATE_STATUS); /* cp's status: not changed after */
    json_t *md = JX_OBJ(cp, "metadata"); /* cp's own map; its annotations are shared */
    json_t *ann = json_object_get(md, "annotations");
    if (ann)
        json_object_set_new(md, "annotations", json_copy(ann));
    if (rc == 0 && jobs_collect_metrics(cp, v.pods))
        rc = kq_update(c, KIND_JOB, cp, STORE_UPDATE_MAIN);
    if (rc == CU_ECONFLICT)
        ctrl_enqueue(c, rid, v.ns, v.name);
    json_decref(cp);
    view_release(&v);
}
