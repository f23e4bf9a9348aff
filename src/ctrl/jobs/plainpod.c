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
 * Pod groups: Pods sharing the label kueue.x-k8s.io/pod-group-name G and
 * the annotation kueue.x-k8s.io/pod-group-total-count N (admission gates
 * them the same way) form one Workload named G, created once N of them
 * exist, owned by all of them, with one pod set per role (pod_role: Pods
 * of the same shape share one), named by the role's hash. Once admitted,
 * every Pod of the group is ungated with its role's flavors; the Workload
 * finishes when all N have ended (Succeeded when all succeeded), and on
 * eviction every running Pod of the group is deleted. A group is
 * reconciled under the key "group/G" (no Pod name has a '/').
 */
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "ctrl/ctrl-int.h"
#include "ctrl/jobs/jobs.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/sha1.h"
#include "util/xalloc.h"

#define ADMISSION_GATE "kueue.x-k8s.io/admission"
#define GROUP_LABEL "kueue.x-k8s.io/pod-group-name"
#define GROUP_COUNT_ANNOTATION "kueue.x-k8s.io/pod-group-total-count"
#define GROUP_KEY_PREFIX "group/"

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
    const char *group = api_label(ev->obj, GROUP_LABEL);
    if ((ev->kind == KIND_POD && is_managed_pod(ev->obj)) ||
        (ev->kind == KIND_WORKLOAD && group)) {
        if (group) {
            char *key = xasprintf(GROUP_KEY_PREFIX "%s", group);
            ctrl_enqueue(c, pp->rid, api_namespace(ev->obj), key);
            xfree(key);
        } else {
            ctrl_enqueue(c, pp->rid, api_namespace(ev->obj), api_name(ev->obj));
        }
    } else if (ev->kind == KIND_WORKLOAD) {
        const json_t *ref = kq_controller_ref(ev->obj);
        if (ref && !strcmp(jx_or_empty(JX_STR(ref, "kind")), "Pod") &&
            !strcmp(jx_or_empty(JX_STR(ref, "apiVersion")), "v1"))
            ctrl_enqueue(c, pp->rid, api_namespace(ev->obj), JX_STR(ref, "name"));
    }
}

/* A Pod as a pod set template: its labels, annotations and spec without
 * its gates and node. New reference. */
static json_t *pod_template(const json_t *pod)
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
    return tmpl;
}

/* The Pod's Workload, as Kueue constructs it for a single Pod. */
static void create_workload(struct ctrl *c, const json_t *pod, const char *name)
{
    struct jobs_podsets ps = {0};
    jobs_podsets_add(&ps, "main", 1, 0, pod_template(pod));
    json_t *wl = jobs_build_workload(c, pod, &ps, name);
    if (store_create(ctrl_store(c), KIND_WORKLOAD, api_namespace(pod), wl, NULL) == 0)
        ctrl_event(c, pod, "Normal", "CreatedWorkload", "Created Workload: %s/%s",
                   api_namespace(pod), name);
    json_decref(wl);
    jobs_podsets_release(&ps);
}

/* Finish the Workload (a copy) and let it go: the Pod no longer runs. */
static void finish(struct ctrl *c, struct plainpod *pp, const char *key, json_t *wl,
                   const char *reason, const char *msg)
{
    if (!kq_wl_is_finished(wl)) {
        kq_wl_finish(c, wl, reason, msg);
        if (kq_update(c, KIND_WORKLOAD, wl, STORE_UPDATE_STATUS) == CU_ECONFLICT)
            ctrl_enqueue(c, pp->rid, api_namespace(wl), key);
    }
    kq_remove_finalizer(c, KIND_WORKLOAD, api_namespace(wl), api_name(wl),
                        KQ_RESOURCE_IN_USE_FINALIZER);
}

/* Admitted: merge the admission of pod set `podset` (NULL: the only one)
 * into the Pod and remove the gate. */
static void ungate(struct ctrl *c, struct plainpod *pp, const json_t *pod, json_t *wl,
                   const char *podset)
{
    struct kq_podset_info *infos = NULL;
    size_t n = 0, at = 0;
    char err[1024] = "";
    json_t *cp = jx_deep_copy(pod);
    int rc = kq_podset_infos_from_workload(c, wl, &infos, &n, err, sizeof(err));
    while (podset && at < n && strcmp(infos[at].name, podset))
        at++;
    bool found = podset ? at < n : n == 1;
    if (rc == 0 && !found)
        snprintf(err, sizeof(err), "no pod set %s in the Workload's admission",
                 podset ? podset : "main");
    if (rc == 0 && found)
        rc = kq_template_merge(cp, &infos[at], err, sizeof(err));
    if (rc != 0 || !found) {
        ctrl_event(c, pod, "Warning", "FailedToStart", "%s", err);
        finish(c, pp, api_name(pod), wl, "FailedToStart", err);
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

/* PodsReady from the Pods' readiness (ready: every Pod Ready or
 * Succeeded; Kueue's generatePodsReadyCondition); pod is the key to
 * requeue on a conflict. */
static void sync_pods_ready(struct ctrl *c, struct plainpod *pp, const json_t *pod, json_t *wl,
                            bool ready)
{
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

/* The role of a Pod in its group (after Kueue's role hash): the first 8
 * hex digits of the SHA-1 of its shape, what decides where and on what
 * quota it runs: each container's and init container's name, image,
 * resources and ports, and the spec's nodeSelector, affinity,
 * tolerations, runtimeClassName, priorityClassName, priority, overhead
 * and topologySpreadConstraints. Pods that differ only in commands,
 * arguments or environment share a role. */
static void pod_role(const json_t *pod, char out[9])
{
    static const char *const spec_keys[] = {"nodeSelector", "affinity", "tolerations",
                                            "runtimeClassName", "priorityClassName",
                                            "priority", "overhead",
                                            "topologySpreadConstraints"};
    static const char *const ct_keys[] = {"name", "image", "resources", "ports"};
    const json_t *spec = JX_GET(pod, "spec");
    json_t *shape = json_object();
    for (size_t k = 0; k < sizeof(spec_keys) / sizeof(spec_keys[0]); k++) {
        const json_t *v = json_object_get(spec, spec_keys[k]);
        if (v)
            json_object_set(shape, spec_keys[k], (json_t *)v);
    }
    static const char *const lists[] = {"initContainers", "containers"};
    for (int l = 0; l < 2; l++) {
        json_t *out_list = json_array();
        size_t i;
        const json_t *ct;
        json_array_foreach(json_object_get(spec, lists[l]), i, ct) {
            json_t *o = json_object();
            for (size_t k = 0; k < sizeof(ct_keys) / sizeof(ct_keys[0]); k++) {
                const json_t *v = json_object_get(ct, ct_keys[k]);
                if (v)
                    json_object_set(o, ct_keys[k], (json_t *)v);
            }
            json_array_append_new(out_list, o);
        }
        json_object_set_new(shape, lists[l], out_list);
    }
    char *text = json_dumps(shape, JSON_SORT_KEYS | JSON_COMPACT);
    char hex[41];
    sha1_hex(text, strlen(text), hex);
    memcpy(out, hex, 8);
    out[8] = '\0';
    free(text);
    json_decref(shape);
}

/* The Workload of a complete group: one pod set per role, in the order
 * roles first appear among the Pods (sorted by name), owned by every Pod. */
static void create_group_workload(struct ctrl *c, const char *group, const json_t *pods)
{
    struct jobs_podsets ps = {0};
    size_t i;
    const json_t *pod;
    json_array_foreach(pods, i, pod) {
        char role[9];
        pod_role(pod, role);
        size_t j = 0;
        while (j < ps.n && strcmp(ps.items[j].name, role))
            j++;
        if (j < ps.n)
            ps.items[j].count++;
        else
            jobs_podsets_add(&ps, role, 1, 0, pod_template(pod));
    }
    const json_t *first = json_array_get(pods, 0);
    json_t *wl = jobs_build_workload(c, first, &ps, group);
    json_t *refs = json_array();
    json_array_foreach(pods, i, pod) {
        json_array_append_new(refs, api_owner_ref_new(pod, false));
    }
    JX_SET_NEW(wl, refs, "metadata", "ownerReferences");
    api_set_label(wl, GROUP_LABEL, group);
    if (store_create(ctrl_store(c), KIND_WORKLOAD, api_namespace(first), wl, NULL) == 0)
        ctrl_event(c, first, "Normal", "CreatedWorkload", "Created Workload: %s/%s",
                   api_namespace(first), group);
    json_decref(wl);
    jobs_podsets_release(&ps);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(api_name(*(json_t *const *)a), api_name(*(json_t *const *)b));
}

/* The managed Pods of group G in ns, sorted by name (new array). */
static json_t *group_pods(struct ctrl *c, const char *ns, const char *group)
{
    json_t *all = store_list(ctrl_store(c), KIND_POD, ns, NULL);
    size_t n = 0, i;
    json_t *pod;
    json_t **v = xcalloc(json_array_size(all) + 1, sizeof(*v));
    json_array_foreach(all, i, pod) {
        const char *g = api_label(pod, GROUP_LABEL);
        if (g && !strcmp(g, group) && is_managed_pod(pod))
            v[n++] = pod;
    }
    qsort(v, n, sizeof(*v), by_name);
    json_t *out = json_array();
    for (i = 0; i < n; i++)
        json_array_append(out, v[i]);
    xfree(v);
    json_decref(all);
    return out;
}

static void reconcile_group(struct ctrl *c, struct plainpod *pp, const char *ns,
                            const char *key)
{
    const char *group = key + strlen(GROUP_KEY_PREFIX);
    json_t *pods = group_pods(c, ns, group);
    json_t *wl = kq_get_copy(c, KIND_WORKLOAD, ns, group);
    const json_t *first = json_array_get(pods, 0);
    long total = first ? strtol(jx_or_empty(api_annotation(first, GROUP_COUNT_ANNOTATION)),
                                NULL, 10)
                       : 0;
    size_t i, ended = 0, succeeded = 0, ready = 0;
    const json_t *pod;
    json_array_foreach(pods, i, pod) {
        ended += jobs_pod_is_terminal(pod) || api_is_deleting(pod);
        succeeded += jobs_pod_succeeded(pod);
        ready += jobs_pod_ready(pod) || jobs_pod_succeeded(pod);
    }
    if (!wl) {
        /* Kueue waits for the whole group before it creates the Workload */
        if (total > 0 && json_array_size(pods) == (size_t)total && !ended)
            create_group_workload(c, group, pods);
    } else if (kq_wl_is_finished(wl)) {
        /* nothing */
    } else if (total > 0 && ended >= (size_t)total) {
        bool ok = succeeded == (size_t)total;
        finish(c, pp, key, wl, ok ? "Succeeded" : "Failed",
               ok ? "Pods succeeded" : "Some Pods of the group failed");
    } else if (kq_wl_is_admitted(wl) && !kq_wl_is_evicted(wl)) {
        json_array_foreach(pods, i, pod) {
            char role[9];
            pod_role(pod, role);
            if (is_gated(pod))
                ungate(c, pp, pod, wl, role);
        }
        if (ctrl_cfg(c)->wait_for_pods_ready && first)
            sync_pods_ready(c, pp, first, wl, total > 0 && ready >= (size_t)total);
    } else if (!json_array_size(pods)) {
        /* every Pod gone (stopped on eviction, or deleted) */
        finish(c, pp, key, wl, "Failed", "The Pods of the group were deleted");
    } else if (kq_wl_is_evicted(wl) || !kq_wl_has_reservation(wl)) {
        json_array_foreach(pods, i, pod) {
            if (is_gated(pod) || jobs_pod_is_terminal(pod) || api_is_deleting(pod))
                continue;
            ctrl_event(c, pod, "Normal", "Stopped", "%s",
                       jx_or_empty(JX_STR(api_cond_get(wl, "Evicted"), "message")));
            store_delete(ctrl_store(c), KIND_POD, ns, api_name(pod), api_uid(pod), NULL);
        }
    }
    json_decref(wl);
    json_decref(pods);
}

static void reconcile(struct ctrl *c, void *self, const char *ns, const char *name)
{
    struct plainpod *pp = self;
    if (!strncmp(name, GROUP_KEY_PREFIX, strlen(GROUP_KEY_PREFIX))) {
        reconcile_group(c, pp, ns, name);
        return;
    }
    json_t *pod = store_get(ctrl_store(c), KIND_POD, ns, name);
    if (!pod || !is_managed_pod(pod) || api_label(pod, GROUP_LABEL)) {
        json_decref(pod); /* a group's Pods are reconciled under its key */
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
        finish(c, pp, name, wl, jobs_pod_succeeded(pod) ? "Succeeded" : "Failed", why);
        xfree(why);
    } else if (kq_wl_is_finished(wl)) {
        /* nothing: a finished Workload (FailedToStart) keeps its Pod gated */
    } else if (is_gated(pod) && kq_wl_is_admitted(wl) && !kq_wl_is_evicted(wl)) {
        ungate(c, pp, pod, wl, NULL);
    } else if (!is_gated(pod) && (kq_wl_is_evicted(wl) || !kq_wl_has_reservation(wl))) {
        /* Kueue stops a plain Pod by deleting it */
        const char *msg = jx_or_empty(JX_STR(api_cond_get(wl, "Evicted"), "message"));
        ctrl_event(c, pod, "Normal", "Stopped", "%s", msg[0] ? msg : "No reservation");
        store_delete(ctrl_store(c), KIND_POD, ns, name, api_uid(pod), NULL);
    } else if (!is_gated(pod) && ctrl_cfg(c)->wait_for_pods_ready) {
        sync_pods_ready(c, pp, pod, wl, jobs_pod_ready(pod) || jobs_pod_succeeded(pod));
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
