/*
 * plainpod: Kueue's pod integration for single plain Pods ("pod" in the
 * Configuration's integrations.frameworks, ctrl_config.jobs). Admission
 * (api/schema_meta.c, api__kueue_pod_defaults) creates a managed Pod with
 * the label kueue.x-k8s.io/managed=true and the scheduling gate
 * kueue.x-k8s.io/admission, so the binder leaves it alone. Here, keyed by
 * the Pod:
 *   - a managed Pod without a Workload gets one: pod set "main", count 1,
 *     the Pod's spec as template, named kq_workload_name("Pod", "", ...);
 *   - once the Workload is admitted, the flavors' nodeSelector and
 *     tolerations (and the admission checks' podSetUpdates) are merged into
 *     the Pod and the gate is removed: the binder places it and it runs;
 *   - PodsReady follows the Pod's Ready condition (waitForPodsReady);
 *   - a Pod that ended, or is being deleted, finishes its Workload
 *     (Succeeded / Failed), which releases the quota;
 *   - an admitted Workload that is evicted stops its Pod as Kueue does:
 *     the Pod is deleted (a plain Pod cannot be suspended), and its
 *     Workload finishes.
 * Pod groups (kueue.x-k8s.io/pod-group-name) are refused at admission
 * (not yet supported).
 */
#include <string.h>

#include "api/meta.h"
#include "ctrl/ctrl-int.h"
#include "ctrl/jobs/jobs.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define ADMISSION_GATE "kueue.x-k8s.io/admission"

struct plainpod {
    int rid;
};

static bool is_managed_pod(const json_t *pod)
{
    const char *m = api_label(pod, KQ_MANAGED_LABEL);
    return m && !strcmp(m, "true") && !kq_controller_ref(pod);
}

static bool is_gated(const json_t *pod)
{
    size_t i;
    const json_t *g;
    json_array_foreach(JX_GET(pod, "spec", "schedulingGates"), i, g) {
        if (!strcmp(jx_or_empty(JX_STR(g, "name")), ADMISSION_GATE))
            return true;
    }
    return false;
}

static void on_event(struct ctrl *c, void *self, const struct store_event *ev)
{
    struct plainpod *pp = self;
    if (ev->kind == KIND_POD && is_managed_pod(ev->obj)) {
        ctrl_enqueue(c, pp->rid, api_namespace(ev->obj), api_name(ev->obj));
    } else if (ev->kind == KIND_WORKLOAD) {
        const json_t *ref = kq_controller_ref(ev->obj);
        if (ref && !strcmp(jx_or_empty(JX_STR(ref, "kind")), "Pod") &&
            !strcmp(jx_or_empty(JX_STR(ref, "apiVersion")), "v1"))
            ctrl_enqueue(c, pp->rid, api_namespace(ev->obj), JX_STR(ref, "name"));
    }
}

/* The Pod's Workload, as Kueue constructs it for a single Pod. */
static void create_workload(struct ctrl *c, const json_t *pod, const char *name)
{
    json_t *tmpl = json_object();
    json_t *meta = JX_OBJ(tmpl, "metadata");
    const json_t *v;
    if ((v = JX_GET(pod, "metadata", "labels")))
        json_object_set_new(meta, "labels", json_deep_copy(v));
    if ((v = JX_GET(pod, "metadata", "annotations")))
        json_object_set_new(meta, "annotations", json_deep_copy(v));
    json_t *spec = json_deep_copy(JX_GET(pod, "spec"));
    json_object_del(spec, "schedulingGates");
    json_object_del(spec, "nodeName");
    json_object_set_new(tmpl, "spec", spec);
    struct jobs_podsets ps = {0};
    jobs_podsets_add(&ps, "main", 1, 0, tmpl);
    json_t *wl = jobs_build_workload(c, pod, &ps, name);
    if (store_create(ctrl_store(c), KIND_WORKLOAD, api_namespace(pod), wl, NULL) == 0)
        ctrl_event(c, pod, "Normal", "CreatedWorkload", "Created Workload: %s/%s",
                   api_namespace(pod), name);
    json_decref(wl);
    jobs_podsets_release(&ps);
}

/* Finish the Workload (a copy) and let it go: the Pod no longer runs. */
static void finish(struct ctrl *c, struct plainpod *pp, const json_t *pod, json_t *wl,
                   const char *reason, const char *msg)
{
    if (!kq_wl_is_finished(wl)) {
        kq_wl_finish(c, wl, reason, msg);
        if (kq_update(c, KIND_WORKLOAD, wl, STORE_UPDATE_STATUS) == CU_ECONFLICT)
            ctrl_enqueue(c, pp->rid, api_namespace(pod), api_name(pod));
    }
    kq_remove_finalizer(c, KIND_WORKLOAD, api_namespace(wl), api_name(wl),
                        KQ_RESOURCE_IN_USE_FINALIZER);
}

/* Admitted: merge the admission into the Pod and remove the gate. */
static void ungate(struct ctrl *c, struct plainpod *pp, const json_t *pod, json_t *wl)
{
    struct kq_podset_info *infos = NULL;
    size_t n = 0;
    char err[1024] = "";
    json_t *cp = jx_deep_copy(pod);
    int rc = kq_podset_infos_from_workload(c, wl, &infos, &n, err, sizeof(err));
    if (rc == 0 && n == 1)
        rc = kq_template_merge(cp, &infos[0], err, sizeof(err));
    if (rc != 0 || n != 1) {
        ctrl_event(c, pod, "Warning", "FailedToStart", "%s", err);
        finish(c, pp, pod, wl, "FailedToStart", err);
    } else {
        json_t *gates = JX_GET(cp, "spec", "schedulingGates");
        for (size_t i = json_array_size(gates); i-- > 0;)
            if (!strcmp(jx_or_empty(JX_STR(json_array_get(gates, i), "name")), ADMISSION_GATE))
                json_array_remove(gates, i);
        if (!json_array_size(gates))
            json_object_del(JX_GET(cp, "spec"), "schedulingGates");
        if (kq_update(c, KIND_POD, cp, STORE_UPDATE_MAIN) == CU_ECONFLICT)
            ctrl_enqueue(c, pp->rid, api_namespace(pod), api_name(pod));
        else
            ctrl_event(c, pod, "Normal", "Started", "Admitted by clusterQueue %s",
                       jx_or_empty(kq_wl_cluster_queue(wl)));
    }
    kq_podset_infos_free(infos, n);
    json_decref(cp);
}

/* PodsReady from the Pod's Ready condition (Kueue's
 * generatePodsReadyCondition for one pod). */
static void sync_pods_ready(struct ctrl *c, struct plainpod *pp, const json_t *pod, json_t *wl)
{
    bool ready = jobs_pod_ready(pod) || jobs_pod_succeeded(pod);
    const char *status = ready ? "True" : "False", *reason = ready ? "Started" : "WaitForStart";
    const char *msg = ready ? "All pods reached readiness and the workload is running"
                            : "Not all pods are ready or succeeded";
    if (api_cond_is_true(wl, "PodsReady") ||
        !api_cond_would_change(wl, "PodsReady", status, reason, msg))
        return;
    api_cond_set(wl, "PodsReady", status, reason, msg, ctrl_now(c));
    if (kq_update(c, KIND_WORKLOAD, wl, STORE_UPDATE_STATUS) == CU_ECONFLICT)
        ctrl_enqueue(c, pp->rid, api_namespace(pod), api_name(pod));
}

static void reconcile(struct ctrl *c, void *self, const char *ns, const char *name)
{
    struct plainpod *pp = self;
    json_t *pod = store_get(ctrl_store(c), KIND_POD, ns, name);
    if (!pod || !is_managed_pod(pod)) {
        json_decref(pod);
        return;
    }
    char *wl_name = kq_workload_name("Pod", "", name, jx_or_empty(api_uid(pod)), NULL);
    json_t *wl = kq_get_copy(c, KIND_WORKLOAD, ns, wl_name);
    bool ended = jobs_pod_is_terminal(pod) || api_is_deleting(pod);
    if (!wl) {
        if (!ended)
            create_workload(c, pod, wl_name);
    } else if (ended) {
        char *why = jobs_pod_succeeded(pod) ? xstrdup("Pod succeeded")
                    : api_is_deleting(pod)  ? xstrdup("Pod was deleted")
                                            : jobs_pod_failure(pod);
        finish(c, pp, pod, wl, jobs_pod_succeeded(pod) ? "Succeeded" : "Failed", why);
        xfree(why);
    } else if (kq_wl_is_finished(wl)) {
        /* nothing: a finished Workload (FailedToStart) keeps its Pod gated */
    } else if (is_gated(pod) && kq_wl_is_admitted(wl) && !kq_wl_is_evicted(wl)) {
        ungate(c, pp, pod, wl);
    } else if (!is_gated(pod) && (kq_wl_is_evicted(wl) || !kq_wl_has_reservation(wl))) {
        /* Kueue stops a plain Pod by deleting it */
        const char *msg = jx_or_empty(JX_STR(api_cond_get(wl, "Evicted"), "message"));
        ctrl_event(c, pod, "Normal", "Stopped", "%s", msg[0] ? msg : "No reservation");
        store_delete(ctrl_store(c), KIND_POD, ns, name, api_uid(pod), NULL);
    } else if (!is_gated(pod) && ctrl_cfg(c)->wait_for_pods_ready) {
        sync_pods_ready(c, pp, pod, wl);
    }
    json_decref(wl);
    xfree(wl_name);
    json_decref(pod);
}

static const struct ctrl_reconciler_ops plainpod_ops = {
    .name = "plainpod",
    .on_event = on_event,
    .reconcile = reconcile,
    .after_round = NULL,
    .free = xfree,
};

void ctrl__plainpod_register(struct ctrl *c)
{
    struct plainpod *pp = xcalloc(1, sizeof(*pp));
    pp->rid = ctrl_register(c, &plainpod_ops, pp);
}
