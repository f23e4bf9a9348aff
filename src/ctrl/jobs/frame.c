/*
 * jobs/frame: Kueue's generic job lifecycle (jobframework reconciler,
 * kueue.md §4.1), shared by every integration. Per reconcile of a managed
 * job: ensure exactly one Workload (suspending the job first, as Kueue's
 * webhook would have done at creation), report the job's outcome as
 * Workload Finished, keep PodsReady and reclaimablePods current, stop the
 * job on eviction and then release the reservation, start it (admission
 * injected into its pod templates) once the Workload is Admitted, and
 * suspend it again if it runs without admission.
 *
 * Invariant: each step writes at most one object kind per pass and returns;
 * the store event it causes brings the job back (level-triggered).
 */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "api/object.h"
#include "ctrl/jobs/jobs.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

void jobs_podsets_release(struct jobs_podsets *p)
{
    for (size_t i = 0; i < p->n; i++) {
        xfree(p->items[i].name);
        json_decref(p->items[i].tmpl);
    }
    XFREE(p->items);
    p->n = 0;
}

void jobs_podsets_add(struct jobs_podsets *p, const char *name, int32_t count,
                      int32_t min_count, json_t *tmpl)
{
    p->items = xreallocarray(p->items, p->n + 1, sizeof(*p->items));
    p->items[p->n].name = xstrdup(name);
    p->items[p->n].count = count;
    p->items[p->n].min_count = min_count;
    p->items[p->n].tmpl = tmpl;
    p->n++;
}

void jobs_frame_init(struct jobs_frame *f, const struct jobs_integration *in)
{
    f->in = in;
    f->workloads = kq_index_new();
    f->memo = jobs_ref_memo_new();
}

struct jobs_ref_memo *jobs_ref_memo_new(void)
{
    struct jobs_ref_memo *m = xcalloc(1, sizeof(*m));
    m->refs = 1;
    return m;
}

struct jobs_ref_memo *jobs_ref_memo_hold(struct jobs_ref_memo *m)
{
    m->refs++;
    return m;
}

void jobs_ref_memo_drop(struct jobs_ref_memo *m)
{
    if (m && --m->refs == 0)
        xfree(m);
}

const json_t *jobs_ref_memo_owners(struct jobs_ref_memo *m, const struct store_event *ev)
{
    if (m->obj != ev->obj || m->rv != ev->rv) {
        m->obj = ev->obj;
        m->rv = ev->rv;
        m->owners = JX_GET(ev->obj, "metadata", "ownerReferences");
        m->ctrl_known = false;
    }
    /* the memo's check (debug builds): an event's document is never
     * changed in place, so its ownerReferences value is the one kept */
    assert(m->owners == JX_GET(ev->obj, "metadata", "ownerReferences") && "stale ref memo");
    return m->owners;
}

const json_t *jobs_ref_memo_controller(struct jobs_ref_memo *m, const struct store_event *ev)
{
    const json_t *owners = jobs_ref_memo_owners(m, ev);
    if (!m->ctrl_known) {
        m->ctrl_known = true;
        m->ctrl_ref = NULL;
        size_t i, n = json_array_size(owners); /* kq_controller_ref */
        for (i = 0; i < n && !m->ctrl_ref; i++) {
            const json_t *r = json_array_get(owners, i);
            if (JX_BOOL(r, false, "controller"))
                m->ctrl_ref = r;
        }
    }
    return m->ctrl_ref;
}

void jobs_frame_release(struct jobs_frame *f)
{
    kq_index_free(f->workloads);
    f->workloads = NULL;
    jobs_ref_memo_drop(f->memo);
    f->memo = NULL;
}

const char *jobs_frame_observe(struct jobs_frame *f, const struct store_event *ev)
{
    if (ev->kind != KIND_WORKLOAD)
        return NULL;
    const json_t *ref = jobs_ref_memo_controller(f->memo, ev);
    const char *kind = ref ? JX_STR(ref, "kind") : NULL;
    if (!kind || strcmp(kind, f->in->kind))
        return NULL;
    const char *owner = JX_STR(ref, "uid");
    if (ev->type == STORE_DELETED)
        kq_index_remove(f->workloads, owner, api_name(ev->obj));
    else
        kq_index_add(f->workloads, owner, api_name(ev->obj));
    return JX_STR(ref, "name");
}

bool jobs_is_managed(const json_t *job)
{
    const char *q = api_label(job, KQ_QUEUE_NAME_LABEL);
    return q && q[0];
}

bool jobs_is_suspended(const json_t *job) { return JX_BOOL(job, false, "spec", "suspend"); }

/* The job's current Workload: the unfinished one holding a reservation (an
 * elastic job's running slice, while a replacement waits), else the first
 * unfinished one by name, else the last finished one. The stored document
 * (a new reference: never change it), or NULL. */
static json_t *find_workload(struct ctrl *c, struct jobs_frame *f, const json_t *job)
{
    size_t n;
    char *const *names = kq_index_get(f->workloads, api_uid(job), &n);
    json_t *best = NULL;
    int best_rank = 0; /* 3 reserved, 2 unfinished, 1 finished */
    for (size_t i = 0; i < n; i++) {
        json_t *wl = store_get(ctrl_store(c), KIND_WORKLOAD, api_namespace(job), names[i]);
        if (!wl)
            continue;
        int rank = kq_wl_is_finished(wl) ? 1 : kq_wl_has_reservation(wl) ? 3 : 2;
        if (rank > best_rank || (rank == 1 && best_rank == 1)) {
            json_decref(best);
            best = wl;
            best_rank = rank;
        } else {
            json_decref(wl);
        }
    }
    return best;
}

/* The Workload the steps of one reconcile read: the stored document until
 * a step changes it, then its copy (store_status_copy: the status is what
 * the steps change, and the spec's pod sets, see replace_podsets), which
 * the later steps read too. */
struct wl_view {
    const json_t *cur;
    json_t *own; /* NULL until wl_own */
};

static json_t *wl_own(struct wl_view *v)
{
    if (!v->own) {
        v->own = store_status_copy(v->cur, NULL);
        v->cur = v->own;
    }
    return v->own;
}

/* ---- Workload construction (ConstructWorkload) ---- */

static void resolve_priority(struct ctrl *c, const json_t *job, json_t *spec)
{
    const char *cls = api_label(job, KQ_PRIORITY_CLASS_LABEL);
    bool explicit_cls = cls && cls[0];
    if (!explicit_cls)
        cls = "default"; /* WorkloadPriorityClassDefaulting */
    json_t *wpc = store_get(ctrl_store(c), KIND_WORKLOADPRIORITYCLASS, NULL, cls);
    if (wpc) {
        json_object_set_new(spec, "priorityClassName", json_string(cls));
        json_object_set_new(spec, "priorityClassSource", json_string(KQ_WPC_SOURCE));
        json_object_set_new(spec, "priority", json_integer(JX_INT(wpc, 0, "value")));
        json_decref(wpc);
        return;
    }
    if (explicit_cls)
        ctrl_event(c, job, "Warning", "WorkloadPriorityClassNotFound",
                   "WorkloadPriorityClass \"%s\" not found", cls);
    json_object_set_new(spec, "priority", json_integer(0));
}

static void copy_annotations(const json_t *job, json_t *wl)
{
    const char *k;
    json_t *v;
    json_object_foreach(JX_GET(job, "metadata", "annotations"), k, v) {
        if (!json_is_string(v))
            continue;
        if (!strncmp(k, KQ_PROVREQ_PREFIX, strlen(KQ_PROVREQ_PREFIX)) ||
            !strcmp(k, KQ_ELASTIC_ANNOTATION) || !strcmp(k, KQ_EXPECTED_RUNTIME_ANNOTATION))
            api_set_annotation(wl, k, json_string_value(v));
    }
}

json_t *jobs_build_workload(struct ctrl *c, const json_t *job, const struct jobs_podsets *ps,
                            const char *name)
{
    const char *ns = api_namespace(job);
    json_t *wl = api_object_new(api_kind_api_version(api_kind_get(KIND_WORKLOAD)), "Workload",
                                ns, name);
    api_set_label(wl, KQ_JOB_UID_LABEL, jx_or_empty(api_uid(job)));
    copy_annotations(job, wl);
    const char *elastic = api_annotation(job, KQ_ELASTIC_ANNOTATION);
    if (elastic && !strcmp(elastic, "true"))
        api_set_annotation(wl, KQ_SLICE_NAME_ANNOTATION, name);
    api_owner_ref_add(wl, api_owner_ref_new(job, true));
    JX_SET_NEW(wl, json_pack("[s]", KQ_RESOURCE_IN_USE_FINALIZER), "metadata", "finalizers");
    json_t *spec = JX_OBJ(wl, "spec");
    json_t *sets = json_array();
    for (size_t i = 0; i < ps->n; i++) {
        json_t *s = json_pack("{s:s, s:i, s:O}", "name", ps->items[i].name, "count",
                              (int)ps->items[i].count, "template", ps->items[i].tmpl);
        if (ps->items[i].min_count > 0)
            json_object_set_new(s, "minCount", json_integer(ps->items[i].min_count));
        json_t *tr = api_topology_request_from_template(ps->items[i].tmpl);
        if (tr)
            json_object_set_new(s, "topologyRequest", tr);
        json_array_append_new(sets, s);
    }
    json_object_set_new(spec, "podSets", sets);
    json_object_set_new(spec, "queueName", json_string(api_label(job, KQ_QUEUE_NAME_LABEL)));
    resolve_priority(c, job, spec);
    json_object_set_new(spec, "active", json_true());
    const char *max_exec = api_label(job, KQ_MAX_EXEC_TIME_LABEL);
    if (max_exec) {
        long long v = strtoll(max_exec, NULL, 10);
        if (v >= 1)
            json_object_set_new(spec, "maximumExecutionTimeSeconds", json_integer(v));
    }
    return wl;
}

/* Suspend a copy of the job and restore its templates from wl (if any). */
static void stop_job(const struct jobs_integration *in, json_t *job, const json_t *wl)
{
    JX_SET_NEW(job, json_true(), "spec", "suspend");
    if (!wl)
        return;
    size_t i;
    json_t *ps;
    json_array_foreach(JX_GET(wl, "spec", "podSets"), i, ps) {
        json_t *tmpl = in->template_at(job, i, jx_or_empty(JX_STR(ps, "name")));
        if (tmpl)
            kq_template_restore(tmpl, JX_GET(ps, "template"));
    }
    if (in->after_stop)
        in->after_stop(job, wl);
}

/* Write a job copy (spec/metadata) that the caller only releases
 * afterwards (kq_update_take). On conflict requeue. Always true: the job
 * was (or is about to be) written. */
static bool write_job(struct ctrl *c, const struct jobs_frame *f, int rid, json_t *job)
{
    int rc = kq_update_take(c, f->in->kind_id, job, STORE_UPDATE_MAIN);
    if (rc == CU_ECONFLICT)
        ctrl_enqueue(c, rid, api_namespace(job), api_name(job));
    return true;
}

static void write_wl(struct ctrl *c, int rid, const json_t *job, json_t *wl,
                     enum store_update_mode mode)
{
    int rc = kq_update(c, KIND_WORKLOAD, wl, mode);
    if (rc == CU_ECONFLICT)
        ctrl_enqueue(c, rid, api_namespace(job), api_name(job));
}

static bool is_elastic(const json_t *obj)
{
    const char *e = api_annotation(obj, KQ_ELASTIC_ANNOTATION);
    return e && !strcmp(e, "true");
}

/* Elastic scale-up (kueue.md §5): does the job want more pods in some pod
 * set than its reserved slice has? */
static bool scaled_up(struct ctrl *c, const struct jobs_integration *in, const json_t *job,
                      const json_t *wl)
{
    struct jobs_podsets ps = {0};
    char err[256];
    if (in->podsets(c, job, &ps, err, sizeof(err)) != 0)
        return false;
    bool up = false;
    size_t i;
    json_t *w;
    json_array_foreach(JX_GET(wl, "spec", "podSets"), i, w) {
        for (size_t j = 0; j < ps.n; j++)
            if (!strcmp(ps.items[j].name, jx_or_empty(JX_STR(w, "name"))) &&
                ps.items[j].count > JX_INT(w, 1, "count"))
                up = true;
    }
    jobs_podsets_release(&ps);
    return up;
}

/* Create the replacement slice of wl for the job's new size, unless one
 * already waits. */
static void ensure_slice(struct ctrl *c, struct jobs_frame *f, const json_t *job, const json_t *wl)
{
    char *ref = kq_key(api_namespace(wl), api_name(wl));
    size_t n;
    char *const *names = kq_index_get(f->workloads, api_uid(job), &n);
    for (size_t i = 0; i < n; i++) {
        json_t *o = store_get(ctrl_store(c), KIND_WORKLOAD, api_namespace(job), names[i]);
        const char *rf = o ? api_annotation(o, "kueue.x-k8s.io/workload-slice-replacement-for")
                           : NULL;
        bool waiting = rf && !strcmp(rf, ref) && !kq_wl_is_finished(o);
        json_decref(o);
        if (waiting) {
            xfree(ref);
            return;
        }
    }
    struct jobs_podsets ps = {0};
    char err[256];
    if (f->in->podsets(c, job, &ps, err, sizeof(err)) == 0) {
        char *extra = f->in->name_extra ? f->in->name_extra(job) : NULL;
        char *name = kq_workload_name(f->in->kind, f->in->group, api_name(job),
                                      jx_or_empty(api_uid(job)), extra);
        json_t *slice = jobs_build_workload(c, job, &ps, name);
        api_set_annotation(slice, "kueue.x-k8s.io/workload-slice-replacement-for", ref);
        const char *chain = api_annotation(wl, KQ_SLICE_NAME_ANNOTATION);
        api_set_annotation(slice, KQ_SLICE_NAME_ANNOTATION, chain ? chain : api_name(wl));
        if (store_create(ctrl_store(c), KIND_WORKLOAD, api_namespace(job), slice, NULL) == 0)
            ctrl_event(c, job, "Normal", "CreatedWorkload", "Created Workload: %s/%s",
                       api_namespace(job), name);
        json_decref(slice);
        xfree(name);
        xfree(extra);
    }
    jobs_podsets_release(&ps);
    xfree(ref);
}

/* Kueue's webhook routes a job without a queue name to the LocalQueue
 * "default" of its namespace when there is one; cueue does it on the
 * first reconcile of a job that never ran (and is not some other object's
 * child, as a RayJob's submitter is). Returns true when it wrote the job. */
static bool default_queue(struct ctrl *c, struct jobs_frame *f, int rid, const json_t *job)
{
    const char *ns = api_namespace(job);
    char msg[8];
    bool ok;
    if (jobs_is_managed(job) || kq_controller_ref(job) || !ns || !strcmp(ns, "kube-system") ||
        JX_GET(job, "status", "startTime") || f->in->is_active(job) ||
        f->in->finished(job, msg, sizeof(msg), &ok))
        return false;
    json_t *lq = store_get(ctrl_store(c), KIND_LOCALQUEUE, ns, "default");
    if (!lq)
        return false;
    json_decref(lq);
    json_t *cp = jx_deep_copy(job);
    api_set_label(cp, KQ_QUEUE_NAME_LABEL, "default");
    write_job(c, f, rid, cp);
    json_decref(cp);
    return true;
}

static bool ensure_workload(struct ctrl *c, struct jobs_frame *f, int rid, const json_t *job)
{
    const struct jobs_integration *in = f->in;
    char msg[1024];
    bool success;
    if (in->finished(job, msg, sizeof(msg), &success))
        return false;
    /* the name hashes the generation seen before our own suspend write */
    char *extra = in->name_extra ? in->name_extra(job) : NULL;
    char *name = kq_workload_name(in->kind, in->group, api_name(job), jx_or_empty(api_uid(job)),
                                  extra);
    xfree(extra);
    bool wrote = false;
    if (!jobs_is_suspended(job)) {
        /* Kueue's webhook forces suspend=true on a managed job at creation;
         * cueue stores jobs as submitted, so the first reconcile does it. */
        json_t *cp = jx_deep_copy(job);
        stop_job(in, cp, NULL);
        wrote = write_job(c, f, rid, cp);
        json_decref(cp);
    }
    struct jobs_podsets ps = {0};
    char err[512] = "";
    if (in->podsets(c, job, &ps, err, sizeof(err)) != 0) {
        ctrl_event(c, job, "Warning", "FailedToCreateWorkload", "%s", err);
        jobs_podsets_release(&ps);
        xfree(name);
        return wrote;
    }
    json_t *wl = jobs_build_workload(c, job, &ps, name);
    int rc = store_create(ctrl_store(c), KIND_WORKLOAD, api_namespace(job), wl, NULL);
    if (rc == 0)
        ctrl_event(c, job, "Normal", "CreatedWorkload", "Created Workload: %s/%s",
                   api_namespace(job), name);
    json_decref(wl);
    xfree(name);
    jobs_podsets_release(&ps);
    return wrote;
}

/* Whether the job's pod sets differ from the Workload's (Kueue's
 * EquivalentToWorkload). Suspended, holding no quota: names, counts and
 * templates against spec.podSets. Running: the counts against the ones it
 * was admitted with (status.admission.podSetAssignments, else the spec's);
 * the templates then carry the admission's injections and may not change
 * anyway (Job validation). */
static bool podsets_changed(struct ctrl *c, const struct jobs_integration *in,
                            const json_t *job, const json_t *wl, bool running)
{
    struct jobs_podsets ps = {0};
    char err[256];
    if (in->podsets(c, job, &ps, err, sizeof(err)) != 0)
        return false;
    const json_t *spec = JX_GET(wl, "spec", "podSets");
    const json_t *psa = JX_GET(wl, "status", "admission", "podSetAssignments");
    bool changed = json_array_size(spec) != ps.n;
    for (size_t i = 0; !changed && i < ps.n; i++) {
        const json_t *w = json_array_get(spec, i);
        int64_t count = JX_INT(w, 1, "count");
        if (running)
            count = JX_INT(json_array_get(psa, i), count, "count");
        changed = count != ps.items[i].count ||
                  (!running && (strcmp(jx_or_empty(JX_STR(w, "name")), ps.items[i].name) ||
                                !jx_equal(JX_GET(w, "template"), ps.items[i].tmpl)));
    }
    jobs_podsets_release(&ps);
    return changed;
}

static void replace_podsets(struct ctrl *c, const struct jobs_integration *in, const json_t *job,
                            json_t *wl)
{
    struct jobs_podsets ps = {0};
    char err[256];
    if (in->podsets(c, job, &ps, err, sizeof(err)) != 0)
        return;
    json_t *sets = json_array();
    for (size_t i = 0; i < ps.n; i++) {
        json_t *s = json_pack("{s:s, s:i, s:O}", "name", ps.items[i].name, "count",
                              (int)ps.items[i].count, "template", ps.items[i].tmpl);
        if (ps.items[i].min_count > 0)
            json_object_set_new(s, "minCount", json_integer(ps.items[i].min_count));
        json_array_append_new(sets, s);
    }
    /* wl's spec is the stored document's (find_workload): replaced, not changed */
    json_t *spec = json_copy(JX_GET(wl, "spec"));
    json_object_set_new(spec ? spec : (spec = json_object()), "podSets", sets);
    json_object_set_new(wl, "spec", spec);
    jobs_podsets_release(&ps);
}

/* Kueue's generatePodsReadyCondition (§2.11): the PodsReady condition the
 * Workload should carry (status, reason, message), or false when it keeps
 * the one it has. */
static bool pods_ready_want(const struct jobs_integration *in, const json_t *job,
                            const json_t *wl, const char **status, const char **reason,
                            const char **message)
{
    const char *cur_reason = JX_STR(api_cond_get(wl, "PodsReady"), "reason");
    bool recovering = cur_reason && !strcmp(cur_reason, "WaitForRecovery");
    bool was_true = api_cond_is_true(wl, "PodsReady");
    *status = "False";
    *reason = "WaitForStart";
    *message = "Not all pods are ready or succeeded";
    if (!kq_wl_is_admitted(wl))
        return true;
    if (in->pods_ready(job, wl)) {
        if (was_true)
            return false;
        *status = "True";
        *reason = recovering ? "Recovered" : "Started";
        *message = "All pods reached readiness and the workload is running";
    } else if (was_true || recovering) {
        *reason = "WaitForRecovery";
        *message = "At least one pod has failed, waiting for recovery";
    }
    return true;
}

/* Set PodsReady as Kueue's generatePodsReadyCondition would; the Workload
 * is copied only when it changes. True when it changed. */
static bool sync_pods_ready(struct ctrl *c, const struct jobs_integration *in, const json_t *job,
                            struct wl_view *v)
{
    const char *status, *reason, *message;
    if (!pods_ready_want(in, job, v->cur, &status, &reason, &message) ||
        !api_cond_would_change(v->cur, "PodsReady", status, reason, message))
        return false;
    return api_cond_set(wl_own(v), "PodsReady", status, reason, message, ctrl_now(c));
}

/* Eviction (§2.10): stop the job, then release the reservation once the
 * job has no active pods. Returns true when the job was written. */
static bool handle_eviction(struct ctrl *c, struct jobs_frame *f, int rid, const json_t *job,
                            struct wl_view *v)
{
    const json_t *wl = v->cur;
    const json_t *ev = api_cond_get(wl, "Evicted");
    const char *reason = jx_or_empty(JX_STR(ev, "reason"));
    const char *message = jx_or_empty(JX_STR(ev, "message"));
    if (!jobs_is_suspended(job)) {
        json_t *cp = jx_deep_copy(job);
        stop_job(f->in, cp, wl);
        write_job(c, f, rid, cp);
        json_decref(cp);
        ctrl_event(c, job, "Normal", "Stopped", "%s", message);
        return true;
    }
    if (f->in->is_active(job))
        return false;
    char *msg = xstrdup(message), *why = xstrdup(reason); /* wl_own replaces wl */
    json_t *own = wl_own(v);
    kq_wl_clear_reservation(c, own, "PendingEvaluation", msg, why, kq_eviction_requeues(why));
    write_wl(c, rid, job, own, STORE_UPDATE_STATUS);
    xfree(msg);
    xfree(why);
    return false;
}

/* Start (§4.1): inject the admission into the templates and unsuspend. */
static bool start_job(struct ctrl *c, struct jobs_frame *f, int rid, const json_t *job,
                      struct wl_view *v)
{
    const json_t *wl = v->cur;
    const struct jobs_integration *in = f->in;
    struct kq_podset_info *infos = NULL;
    size_t n = 0;
    char err[1024] = "";
    int rc = kq_podset_infos_from_workload(c, wl, &infos, &n, err, sizeof(err));
    json_t *cp = jx_deep_copy(job);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        json_t *tmpl = in->template_at(cp, i, infos[i].name);
        if (!tmpl) {
            snprintf(err, sizeof(err), "invalid podSet infos: expecting %zu got pod set %s", n,
                     infos[i].name);
            rc = CU_EINVAL;
            break;
        }
        rc = kq_template_merge(tmpl, &infos[i], err, sizeof(err));
    }
    if (rc != 0) {
        /* a permanent start error finishes the Workload (FailedToStart) */
        kq_wl_finish(c, wl_own(v), "FailedToStart", err);
        write_wl(c, rid, job, v->own, STORE_UPDATE_STATUS);
        ctrl_event(c, job, "Warning", "FailedToStart", "%s", err);
        kq_podset_infos_free(infos, n);
        json_decref(cp);
        return false;
    }
    if (in->after_start)
        in->after_start(cp, infos, n);
    JX_SET_NEW(cp, json_false(), "spec", "suspend");
    write_job(c, f, rid, cp);
    ctrl_event(c, job, "Normal", "Started", "Admitted by clusterQueue %s",
               jx_or_empty(kq_wl_cluster_queue(wl)));
    kq_podset_infos_free(infos, n);
    json_decref(cp);
    return true;
}

static bool step_deleting(struct ctrl *c, struct jobs_frame *f, int rid, const json_t *job,
                          const json_t *wl)
{
    if (!jobs_is_suspended(job)) {
        json_t *cp = jx_deep_copy(job);
        stop_job(f->in, cp, wl);
        write_job(c, f, rid, cp);
        json_decref(cp);
        return true;
    }
    if (!f->in->is_active(job))
        kq_remove_finalizer(c, KIND_WORKLOAD, api_namespace(wl), api_name(wl),
                            KQ_RESOURCE_IN_USE_FINALIZER);
    return false;
}

/* Status upkeep that needs no decision: reclaimablePods and PodsReady.
 * True when the Workload changed (it is then v's own copy). */
static bool sync_status(struct ctrl *c, const struct jobs_integration *in, const json_t *job,
                        struct wl_view *v)
{
    bool dirty = false;
    if (in->reclaimable && kq_wl_has_reservation(v->cur)) {
        json_t *r = in->reclaimable(job, v->cur);
        const json_t *cur = JX_GET(v->cur, "status", "reclaimablePods");
        if (r && !jx_equal(r, cur)) {
            JX_SET_NEW(wl_own(v), json_incref(r), "status", "reclaimablePods");
            dirty = true;
        }
        json_decref(r);
    }
    if (ctrl_cfg(c)->wait_for_pods_ready)
        dirty |= sync_pods_ready(c, in, job, v);
    return dirty;
}

/* Kueue's ensureOneWorkload for a running job that no longer matches its
 * Workload (its parallelism or replicas changed while it ran, not an
 * elastic job): stop it ("No matching Workload") and delete the Workload;
 * the job's next reconcile queues a new one with the new counts. The
 * deleting Workload keeps its finalizer until the pods are gone
 * (step_deleting). */
static bool no_matching_workload(struct ctrl *c, struct jobs_frame *f, int rid,
                                 const json_t *job, const json_t *wl)
{
    json_t *cp = jx_deep_copy(job);
    stop_job(f->in, cp, wl);
    write_job(c, f, rid, cp);
    json_decref(cp);
    ctrl_event(c, job, "Normal", "Stopped", "No matching Workload");
    if (store_delete(ctrl_store(c), KIND_WORKLOAD, api_namespace(wl), api_name(wl), api_uid(wl),
                     NULL) == 0)
        ctrl_event(c, job, "Normal", "DeletedWorkload", "Deleted not matching Workload: %s/%s",
                   api_namespace(wl), api_name(wl));
    return true;
}

/* Whether job's queue-name label names another LocalQueue than its
 * Workload wl's spec.queueName (an empty or missing label: no). */
static bool queue_changed(const json_t *job, const json_t *wl)
{
    const char *q = api_label(job, KQ_QUEUE_NAME_LABEL);
    const char *wq = JX_STR(wl, "spec", "queueName");
    return q && *q && (!wq || strcmp(q, wq) != 0);
}

static bool step_view(struct ctrl *c, struct jobs_frame *f, int rid, const json_t *job,
                      struct wl_view *v)
{
    const struct jobs_integration *in = f->in;
    if (kq_wl_is_finished(v->cur))
        return false;
    if (api_is_deleting(v->cur))
        return step_deleting(c, f, rid, job, v->cur);
    char msg[1024] = "";
    bool success = false;
    if (in->finished(job, msg, sizeof(msg), &success)) {
        kq_wl_finish(c, wl_own(v), success ? "Succeeded" : "Failed", msg);
        write_wl(c, rid, job, v->own, STORE_UPDATE_STATUS);
        ctrl_event(c, job, "Normal", "FinishedWorkload", "Workload '%s/%s' is declared finished",
                   api_namespace(v->cur), api_name(v->cur));
        return false;
    }
    bool suspended = jobs_is_suspended(job);
    if (suspended && !kq_wl_has_reservation(v->cur) &&
        podsets_changed(c, in, job, v->cur, false)) {
        replace_podsets(c, in, job, wl_own(v));
        write_wl(c, rid, job, v->own, STORE_UPDATE_MAIN);
        return false;
    }
    if (sync_status(c, in, job, v))
        write_wl(c, rid, job, v->own, STORE_UPDATE_STATUS);
    const json_t *wl = v->cur;
    if (is_elastic(job) && !suspended && kq_wl_has_reservation(wl) && !kq_wl_is_evicted(wl) &&
        scaled_up(c, in, job, wl)) {
        /* the job keeps running on its slice while the bigger one waits */
        ensure_slice(c, f, job, wl);
        return false;
    }
    if (!suspended && !is_elastic(job) && kq_wl_has_reservation(wl) &&
        podsets_changed(c, in, job, wl, true))
        return no_matching_workload(c, f, rid, job, wl);
    if (kq_wl_is_evicted(wl) && kq_wl_has_reservation(wl))
        return handle_eviction(c, f, rid, job, v);
    bool admitted = kq_wl_is_admitted(wl);
    if (suspended && admitted)
        return start_job(c, f, rid, job, v);
    if (suspended && !kq_wl_has_reservation(wl) && queue_changed(job, wl)) {
        /* Kueue's reconciler: a suspended job moved to another LocalQueue
         * (its queue-name label changed) moves its Workload with it, while
         * the Workload holds no quota (after that spec.queueName is
         * immutable) */
        json_t *own = wl_own(v); /* shares the stored spec: replaced, not changed */
        json_t *spec = jx_deep_copy(json_object_get(own, "spec"));
        json_object_set_new(spec, "queueName", json_string(api_label(job, KQ_QUEUE_NAME_LABEL)));
        json_object_set_new(own, "spec", spec);
        write_wl(c, rid, job, v->own, STORE_UPDATE_MAIN);
        ctrl_event(c, job, "Normal", "UpdatedWorkload", "Job changed queues, updated Workload %s/%s",
                   api_namespace(wl), api_name(wl));
        return false;
    }
    if (!suspended && !admitted) {
        json_t *cp = jx_deep_copy(job);
        stop_job(in, cp, wl);
        write_job(c, f, rid, cp);
        json_decref(cp);
        ctrl_event(c, job, "Normal", "Stopped", "Not admitted by cluster queue");
        return true;
    }
    return false;
}

/* One reconcile's steps on the job's Workload (stored, borrowed): copied
 * only by the steps that change it. */
static bool step_with_workload(struct ctrl *c, struct jobs_frame *f, int rid, const json_t *job,
                               const json_t *stored)
{
    struct wl_view v = {stored, NULL};
    bool wrote = step_view(c, f, rid, job, &v);
    json_decref(v.own);
    return wrote;
}

/* Whether Kueue manages job (ctrl_config.jobs: its framework enabled, a
 * queue name or manageJobsWithoutQueueName in a selected namespace). */
static bool manages(struct ctrl *c, struct jobs_frame *f, const json_t *job)
{
    const struct api_job_policy *p = &ctrl_cfg(c)->jobs;
    if (jobs_is_managed(job) && (p->frameworks & api_job_framework(f->in->kind_id)))
        return true; /* the common case: no Namespace lookup */
    json_t *ns = p->namespace_selector
                     ? store_get(ctrl_store(c), KIND_NAMESPACE, NULL, api_namespace(job))
                     : NULL;
    bool ok = api_job_policy_manages(p, f->in->kind_id, job, ns);
    json_decref(ns);
    return ok;
}

bool jobs_frame_reconcile(struct ctrl *c, struct jobs_frame *f, int rid, const json_t *job)
{
    if (api_is_deleting(job))
        return false;
    /* Kueue skips a Job owned by a JobSet: the JobSet is the unit it
     * queues (one Workload for all its child Jobs) */
    const json_t *owner = f->in->kind_id == KIND_JOB ? kq_controller_ref(job) : NULL;
    if (owner && !strcmp(jx_or_empty(JX_STR(owner, "kind")), "JobSet"))
        return false;
    if (default_queue(c, f, rid, job))
        return true;
    if (!manages(c, f, job))
        return false;
    json_t *wl = find_workload(c, f, job);
    if (!wl)
        return ensure_workload(c, f, rid, job);
    bool wrote = step_with_workload(c, f, rid, job, wl);
    json_decref(wl);
    return wrote;
}

/* ---- the reconciler shared by the job kinds ---- */

struct jobs_rec *jobs_rec_new(const struct jobs_integration *in,
                              void (*sync)(struct ctrl *c, int rid, struct kq_index *pods_ix,
                                           const json_t *job, int32_t cap))
{
    struct jobs_rec *r = xcalloc(1, sizeof(*r));
    jobs_frame_init(&r->frame, in);
    r->pods = kq_index_new();
    r->sync = sync;
    return r;
}

void jobs_rec_join(struct jobs_rec *r, struct ctrl *c)
{
    struct jobs_ref_memo *m = jobs_gc_ref_memo(c);
    if (!m || m == r->frame.memo)
        return;
    jobs_ref_memo_drop(r->frame.memo);
    r->frame.memo = jobs_ref_memo_hold(m);
}

void jobs_rec_on_event(struct ctrl *c, void *self, const struct store_event *ev)
{
    struct jobs_rec *r = self;
    const struct jobs_integration *in = r->frame.in;
    /* the namespace is read only for an event that enqueues */
    if (ev->kind == in->kind_id) {
        if (ev->type == STORE_DELETED)
            kq_index_drop(r->pods, api_uid(ev->obj));
        ctrl_enqueue(c, r->rid, api_namespace(ev->obj), api_name(ev->obj));
    } else if (ev->kind == KIND_POD || ev->kind == KIND_JOB) {
        const json_t *ref = jobs_ref_memo_controller(r->frame.memo, ev);
        const char *kind = ref ? JX_STR(ref, "kind") : NULL; /* kq_controlled_by_kind */
        if (!kind || strcmp(kind, in->kind))
            return;
        if (ev->kind == KIND_POD && ev->type == STORE_DELETED)
            kq_index_remove(r->pods, JX_STR(ref, "uid"), api_name(ev->obj));
        else if (ev->kind == KIND_POD)
            kq_index_add(r->pods, JX_STR(ref, "uid"), api_name(ev->obj));
        ctrl_enqueue(c, r->rid, api_namespace(ev->obj), JX_STR(ref, "name"));
    } else if (ev->kind == KIND_WORKLOAD) {
        const char *owner = jobs_frame_observe(&r->frame, ev);
        if (owner)
            ctrl_enqueue(c, r->rid, api_namespace(ev->obj), owner);
    }
}

/* An elastic managed job runs at most its reserved slice's admitted count
 * of pods in its first pod set (Kueue gates the others until a bigger slice
 * is admitted); -1 = no cap. */
static int32_t elastic_cap(struct ctrl *c, struct jobs_frame *f, const json_t *job)
{
    if (!jobs_is_managed(job) || !is_elastic(job))
        return -1;
    json_t *wl = find_workload(c, f, job);
    int32_t cap = -1;
    if (wl && kq_wl_has_reservation(wl) && !kq_wl_is_finished(wl)) {
        const json_t *psa =
            json_array_get(JX_GET(wl, "status", "admission", "podSetAssignments"), 0);
        cap = (int32_t)JX_INT(psa, -1, "count");
    }
    json_decref(wl);
    return cap;
}

void jobs_rec_reconcile(struct ctrl *c, void *self, const char *ns, const char *name)
{
    struct jobs_rec *r = self;
    json_t *job = store_get(ctrl_store(c), r->frame.in->kind_id, ns, name);
    if (!job)
        return;
    if (!jobs_frame_reconcile(c, &r->frame, r->rid, job))
        r->sync(c, r->rid, r->pods, job, elastic_cap(c, &r->frame, job));
    json_decref(job);
}

void jobs_rec_free(void *self)
{
    struct jobs_rec *r = self;
    jobs_frame_release(&r->frame);
    kq_index_free(r->pods);
    xfree(r);
}
