/*
 * jobs/endpoints: Kubernetes' endpoints and endpointslice controllers in
 * one reconciler. For every Service with a selector it keeps an Endpoints
 * object of the same name and EndpointSlices labelled
 * kubernetes.io/service-name=<service> in step with the pods the selector
 * matches: a pod with status.podIP (127.0.0.1 under the process executor,
 * its own IP under the OCI runtime's network) is an address, ready when its
 * Ready condition is True (else a notReadyAddress, unless the Service sets
 * publishNotReadyAddresses). Each Service port's targetPort is resolved per
 * pod (a name against the pod's containerPorts, as kube-proxy does); pods
 * whose resolved ports differ go into separate subsets and slices, one per
 * port set, slice name <service>-<5 hex of the port set>. A Service
 * without a selector is left alone (its Endpoints are the user's). Both
 * objects are owned by the Service, so garbage collection removes them
 * with it. Keys: Service namespace/name; a Pod event requeues the
 * Services of its namespace whose selector matches the pod or whose last
 * reconcile selected it (a relabelled pod leaves them), as Kubernetes'
 * controller does with the pod's old and new labels.
 */
#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "ctrl/ctrl-int.h"
#include "ctrl/jobs/jobs.h"
#include "util/jsonx.h"
#include "util/sha1.h"
#include "util/xalloc.h"

#define SLICE_MANAGED_BY "endpointslice-controller.k8s.io"

struct ep_rec {
    int rid;
    /* "namespace/service" -> names of the pods its last reconcile selected */
    struct kq_index *members;
};

static bool selector_matches(const json_t *sel, const json_t *pod)
{
    const json_t *labels = JX_GET(pod, "metadata", "labels");
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)sel, k, v) {
        if (!jx_equal(json_object_get(labels, k), v))
            return false;
    }
    return true;
}

/* The pod's port for a Service port's targetPort, or 0 when a named one
 * is not among its containerPorts. */
static int resolve_target(const json_t *pod, const json_t *sp)
{
    const json_t *tp = json_object_get(sp, "targetPort");
    if (!tp)
        tp = json_object_get(sp, "port");
    if (json_is_integer(tp))
        return (int)json_integer_value(tp);
    const char *want = json_string_value(tp);
    return want && want[0] ? jobs_pod_named_port(JX_GET(pod, "spec"), want) : 0;
}

/* The endpoint ports of one pod for the Service (new array). */
static json_t *pod_ports(const json_t *svc, const json_t *pod)
{
    json_t *out = json_array();
    size_t i;
    json_t *sp;
    json_array_foreach(JX_GET(svc, "spec", "ports"), i, sp) {
        int port = resolve_target(pod, sp);
        if (port <= 0)
            continue;
        json_t *ep = json_pack("{s:i, s:s}", "port", port, "protocol",
                               jx_or_empty(JX_STR(sp, "protocol")));
        const char *name = JX_STR(sp, "name");
        if (name && name[0])
            json_object_set_new(ep, "name", json_string(name));
        json_array_append_new(out, ep);
    }
    return out;
}

static json_t *target_ref(const json_t *pod)
{
    return json_pack("{s:s, s:s, s:s, s:s}", "kind", "Pod", "namespace",
                     jx_or_empty(api_namespace(pod)), "name", api_name(pod), "uid",
                     jx_or_empty(api_uid(pod)));
}

/* One group of pods sharing a port set. */
struct ep_group {
    json_t *ports;     /* borrowed from groups' entry */
    json_t *ready;     /* Endpoints addresses */
    json_t *not_ready; /* Endpoints notReadyAddresses */
    json_t *slice_eps; /* EndpointSlice endpoints */
};

/* Group the selected pods by port set: {ports-json: {ports, ready,
 * notReady, eps}} (new object). */
static json_t *collect(const json_t *svc, const json_t *pods)
{
    json_t *groups = json_object();
    const json_t *sel = JX_GET(svc, "spec", "selector");
    bool publish = JX_BOOL(svc, false, "spec", "publishNotReadyAddresses");
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod) {
        const char *ip = JX_STR(pod, "status", "podIP");
        if (!ip || !ip[0] || api_is_deleting(pod) || !selector_matches(sel, pod))
            continue;
        const char *phase = jx_or_empty(JX_STR(pod, "status", "phase"));
        if (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))
            continue;
        bool ready = api_cond_is_true(pod, "Ready");
        json_t *ports = pod_ports(svc, pod);
        char *key = jx_dumps_sorted(ports);
        json_t *g = json_object_get(groups, key);
        if (!g) {
            g = json_pack("{s:O, s:[], s:[], s:[]}", "ports", ports, "ready", "notReady", "eps");
            json_object_set_new(groups, key, g);
        }
        xfree(key);
        json_decref(ports);
        json_t *addr = json_pack("{s:s, s:o}", "ip", ip, "targetRef", target_ref(pod));
        const char *node = JX_STR(pod, "spec", "nodeName");
        if (node)
            json_object_set_new(addr, "nodeName", json_string(node));
        json_array_append_new(json_object_get(g, ready || publish ? "ready" : "notReady"), addr);
        json_t *ep = json_pack("{s:[s], s:{s:b, s:b, s:b}, s:o}", "addresses", ip, "conditions",
                               "ready", ready || publish, "serving", ready, "terminating", 0,
                               "targetRef", target_ref(pod));
        if (node)
            json_object_set_new(ep, "nodeName", json_string(node));
        json_array_append_new(json_object_get(g, "eps"), ep);
    }
    return groups;
}

/* Create obj, or replace the stored one when it differs in what cueue
 * writes (labels, ownerReferences and the kind's content fields). */
static void apply(struct ctrl *c, enum api_kind_id kind, json_t *obj, const char *const *fields)
{
    const char *ns = api_namespace(obj);
    json_t *cur = store_get(ctrl_store(c), kind, ns, api_name(obj));
    if (!cur) {
        store_create(ctrl_store(c), kind, ns, obj, NULL);
        return;
    }
    bool same = jx_equal(JX_GET(cur, "metadata", "labels"), JX_GET(obj, "metadata", "labels"));
    for (const char *const *f = fields; same && *f; f++)
        same = jx_equal(json_object_get(cur, *f), json_object_get(obj, *f));
    if (!same) {
        json_t *next = jx_deep_copy(cur);
        json_object_set(JX_OBJ(next, "metadata"), "labels", JX_GET(obj, "metadata", "labels"));
        json_object_set(JX_OBJ(next, "metadata"), "ownerReferences",
                        JX_GET(obj, "metadata", "ownerReferences"));
        for (const char *const *f = fields; *f; f++) {
            json_t *v = json_object_get(obj, *f);
            if (v)
                json_object_set(next, *f, v);
            else
                json_object_del(next, *f);
        }
        store_update(ctrl_store(c), kind, ns, next, STORE_UPDATE_ALL, NULL);
        json_decref(next);
    }
    json_decref(cur);
}

static json_t *owned_new(const json_t *svc, const char *api_version, const char *kind,
                         const char *name)
{
    json_t *o = api_object_new(api_version, kind, api_namespace(svc), name);
    json_t *labels = jx_deep_copy(JX_GET(svc, "metadata", "labels"));
    if (labels)
        json_object_set_new(JX_OBJ(o, "metadata"), "labels", labels);
    api_owner_ref_add(o, api_owner_ref_new(svc, true));
    return o;
}

static void write_endpoints(struct ctrl *c, const json_t *svc, const json_t *groups)
{
    json_t *ep = owned_new(svc, "v1", "Endpoints", api_name(svc));
    json_t *subsets = json_array();
    const char *k;
    json_t *g;
    json_object_foreach((json_t *)groups, k, g) {
        json_t *s = json_pack("{s:O}", "ports", json_object_get(g, "ports"));
        if (json_array_size(json_object_get(g, "ready")))
            json_object_set(s, "addresses", json_object_get(g, "ready"));
        if (json_array_size(json_object_get(g, "notReady")))
            json_object_set(s, "notReadyAddresses", json_object_get(g, "notReady"));
        json_array_append_new(subsets, s);
    }
    if (json_array_size(subsets))
        json_object_set(ep, "subsets", subsets);
    json_decref(subsets);
    static const char *const fields[] = {"subsets", NULL};
    apply(c, KIND_ENDPOINTS, ep, fields);
    json_decref(ep);
}

/* Write one slice per port set (at least one, empty, as Kubernetes keeps)
 * and delete the Service's other slices. */
static void write_slices(struct ctrl *c, const json_t *svc, const json_t *groups)
{
    json_t *keep = json_object();
    json_t *none = json_pack("{s:[], s:[]}", "ports", "eps");
    const json_t *gs = json_object_size(groups) ? groups : NULL;
    const char *k;
    json_t *g;
    json_t *one = gs ? NULL : json_pack("{s:O}", "", none);
    json_object_foreach((json_t *)(gs ? gs : one), k, g) {
        char hex[41];
        sha1_hex(k, strlen(k), hex);
        hex[5] = '\0';
        char *name = xasprintf("%s-%s", api_name(svc), hex);
        json_t *sl = owned_new(svc, "discovery.k8s.io/v1", "EndpointSlice", name);
        api_set_label(sl, "kubernetes.io/service-name", api_name(svc));
        api_set_label(sl, "endpointslice.kubernetes.io/managed-by", SLICE_MANAGED_BY);
        json_object_set_new(sl, "addressType", json_string("IPv4"));
        json_object_set(sl, "endpoints", json_object_get(g, "eps"));
        json_object_set(sl, "ports", json_object_get(g, "ports"));
        static const char *const fields[] = {"addressType", "endpoints", "ports", NULL};
        apply(c, KIND_ENDPOINTSLICE, sl, fields);
        json_object_set_new(keep, name, json_true());
        json_decref(sl);
        xfree(name);
    }
    json_decref(one);
    json_decref(none);
    json_t *all = store_list(ctrl_store(c), KIND_ENDPOINTSLICE, api_namespace(svc), NULL);
    size_t i;
    json_t *sl;
    json_array_foreach(all, i, sl) {
        if (!strcmp(jx_or_empty(api_label(sl, "kubernetes.io/service-name")), api_name(svc)) &&
            !strcmp(jx_or_empty(api_label(sl, "endpointslice.kubernetes.io/managed-by")),
                    SLICE_MANAGED_BY) &&
            !json_object_get(keep, api_name(sl)))
            store_delete(ctrl_store(c), KIND_ENDPOINTSLICE, api_namespace(sl), api_name(sl),
                         api_uid(sl), NULL);
    }
    json_decref(all);
    json_decref(keep);
}

/* Record the pods in groups (by their endpoints' targetRef) as key's. */
static void remember_members(struct ep_rec *r, const char *key, const json_t *groups)
{
    kq_index_drop(r->members, key);
    const char *k;
    json_t *g, *ep;
    size_t i;
    json_object_foreach((json_t *)groups, k, g) {
        json_array_foreach(json_object_get(g, "eps"), i, ep) {
            kq_index_add(r->members, key, JX_STR(ep, "targetRef", "name"));
        }
    }
}

static void ep_reconcile(struct ctrl *c, void *self, const char *ns, const char *name)
{
    struct ep_rec *r = self;
    char *key = xasprintf("%s/%s", ns, name);
    json_t *svc = store_get(ctrl_store(c), KIND_SERVICE, ns, name);
    if (!svc || api_is_deleting(svc) || !json_is_object(JX_GET(svc, "spec", "selector"))) {
        kq_index_drop(r->members, key);
        xfree(key);
        json_decref(svc);
        return; /* gone: gc removes what it owned; no selector: the user's */
    }
    json_t *pods = store_list(ctrl_store(c), KIND_POD, ns, NULL);
    json_t *groups = collect(svc, pods);
    write_endpoints(c, svc, groups);
    write_slices(c, svc, groups);
    remember_members(r, key, groups);
    xfree(key);
    json_decref(groups);
    json_decref(pods);
    json_decref(svc);
}

static void ep_on_event(struct ctrl *c, void *self, const struct store_event *ev)
{
    struct ep_rec *r = self;
    const char *ns = api_namespace(ev->obj);
    if (ev->kind == KIND_SERVICE) {
        ctrl_enqueue(c, r->rid, ns, api_name(ev->obj));
    } else if (ev->kind == KIND_POD) {
        json_t *svcs = store_list(ctrl_store(c), KIND_SERVICE, ns, NULL);
        size_t i;
        json_t *s;
        json_array_foreach(svcs, i, s) {
            const json_t *sel = JX_GET(s, "spec", "selector");
            if (!json_is_object(sel))
                continue; /* its Endpoints are the user's */
            bool in = selector_matches(sel, ev->obj);
            if (!in) { /* relabelled away from it? */
                char *key = xasprintf("%s/%s", ns, api_name(s));
                in = kq_index_has(r->members, key, api_name(ev->obj));
                xfree(key);
            }
            if (in)
                ctrl_enqueue(c, r->rid, ns, api_name(s));
        }
        json_decref(svcs);
    }
}

static void ep_free(void *self)
{
    struct ep_rec *r = self;
    kq_index_free(r->members);
    xfree(r);
}

static const struct ctrl_reconciler_ops ep_ops = {
    .name = "endpoints",
    .on_event = ep_on_event,
    .reconcile = ep_reconcile,
    .after_round = NULL,
    .free = ep_free,
};

void ctrl__endpoints_register(struct ctrl *c)
{
    struct ep_rec *r = xcalloc(1, sizeof(*r));
    r->members = kq_index_new();
    r->rid = ctrl_register(c, &ep_ops, r);
}
