/*
 * visibility: Kueue's visibility API (group visibility.kueue.x-k8s.io,
 * versions v1beta1 and v1beta2, the same shapes), answered from the
 * control plane's admission engine, with cueue's "why pending, and when"
 * on every item:
 *
 *   GET /apis/visibility.kueue.x-k8s.io/V/clusterqueues/CQ/pendingworkloads
 *   GET /apis/visibility.kueue.x-k8s.io/V/namespaces/NS/localqueues/LQ/pendingworkloads
 *       ?offset=N (default 0) &limit=N (default 1000): a PendingWorkloadsSummary,
 *       items in queue order (positionInClusterQueue), as Kueue pages them
 *   GET /apis/visibility.kueue.x-k8s.io/V/namespaces/NS/workloads/NAME/pendingworkload
 *       (cueue only): one PendingWorkload, for `describe workload`
 *
 * An item is Kueue's PendingWorkload {metadata {name, namespace,
 * creationTimestamp, ownerReferences}, priority, localQueueName,
 * positionInClusterQueue, positionInLocalQueue} plus cueue's reason,
 * message, blockers [{flavor, resource, needed, holders [{namespace,
 * name}]}] and estimatedAdmissionTime (RFC 3339; absent when unknown), all
 * from ctrl_explain_workload (the engine's eng_explain, run on the control
 * loop). Positions are the engine's: a workload the engine does not queue
 * (its LocalQueue or ClusterQueue is missing or stopped) is not listed.
 * Each explained workload costs one engine run forward from the current
 * state (ctrl_explain_workload); a request explains the pending workloads
 * of the queue it names, one control-loop call each.
 * Invariant: read only; nothing here writes the store.
 */
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "ctrl/ctrl.h"
#include "server/srv-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define VIS_DEFAULT_LIMIT 1000 /* Kueue's DefaultPendingWorkloadsLimit */

static const char *const vis_versions[] = {"v1beta1", "v1beta2", NULL};

bool srv__visibility_path(const char *group)
{
    return !strcmp(group, SRV_VISIBILITY_GROUP);
}

static bool version_ok(const char *v)
{
    for (const char *const *p = vis_versions; *p; p++)
        if (!strcmp(*p, v))
            return true;
    return false;
}

/* ---- one pending workload ---- */

struct vis_item {
    json_t *wl; /* the Workload (borrowed from the list) */
    json_t *x;  /* ctrl_explain_workload's answer (owned) */
    int32_t pos_cq;
};

static bool is_candidate(const json_t *wl)
{
    if (!JX_STR(wl, "spec", "queueName") || api_is_deleting(wl))
        return false;
    struct api_wl_state st = api_wl_state_of(wl);
    return !st.has_admission && !st.finished;
}

/* Explain wl; true when the engine queues it (position >= 0). */
static bool explain(struct srv *s, json_t *wl, struct vis_item *out)
{
    json_t *x = NULL;
    if (ctrl_explain_workload(s->ctrl, api_namespace(wl), api_name(wl), &x) || !x)
        return false;
    json_int_t pos = JX_INT(x, -1, "position");
    if (pos < 0) {
        json_decref(x);
        return false;
    }
    out->wl = wl;
    out->x = x;
    out->pos_cq = (int32_t)pos;
    return true;
}

static int item_cmp(const void *a, const void *b)
{
    const struct vis_item *x = a, *y = b;
    if (x->pos_cq != y->pos_cq)
        return x->pos_cq < y->pos_cq ? -1 : 1;
    int c = strcmp(api_namespace(x->wl), api_namespace(y->wl));
    return c ? c : strcmp(api_name(x->wl), api_name(y->wl));
}

/* The queued pending workloads among wls that match (ns, lq) when lq is
 * set, else whose LocalQueue is in lqs (a {"ns/name": true} set), in queue
 * order. *n_out gets the count. */
static struct vis_item *collect(struct srv *s, json_t *wls, const json_t *lqs, const char *ns,
                                const char *lq, size_t *n_out)
{
    struct vis_item *items = xcalloc(json_array_size(wls) + 1, sizeof(*items));
    size_t n = 0, i;
    json_t *wl;
    json_array_foreach(wls, i, wl)
    {
        if (!is_candidate(wl))
            continue;
        const char *q = JX_STR(wl, "spec", "queueName");
        bool mine;
        if (lq) {
            mine = !strcmp(q, lq) && !strcmp(api_namespace(wl), ns);
        } else {
            char *key = xasprintf("%s/%s", api_namespace(wl), q);
            mine = json_object_get(lqs, key) != NULL;
            xfree(key);
        }
        if (mine && explain(s, wl, &items[n]))
            n++;
    }
    qsort(items, n, sizeof(*items), item_cmp);
    *n_out = n;
    return items;
}

static void items_free(struct vis_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++)
        json_decref(items[i].x);
    xfree(items);
}

static json_t *owner_refs(const json_t *wl)
{
    json_t *out = json_array();
    size_t i;
    json_t *ref;
    json_array_foreach(JX_GET(wl, "metadata", "ownerReferences"), i, ref)
    {
        json_array_append_new(out, json_pack("{s:s, s:s, s:s, s:s}", "apiVersion",
                                             jx_or_empty(JX_STR(ref, "apiVersion")), "kind",
                                             jx_or_empty(JX_STR(ref, "kind")), "name",
                                             jx_or_empty(JX_STR(ref, "name")), "uid",
                                             jx_or_empty(JX_STR(ref, "uid"))));
    }
    return out;
}

/* blockers with holders as {namespace, name} (the explanation says "ns/name"). */
static json_t *blockers_json(const json_t *x)
{
    json_t *out = json_array();
    size_t i, j;
    json_t *b, *h;
    json_array_foreach(JX_GET(x, "blockers"), i, b)
    {
        json_t *holders = json_array();
        json_array_foreach(JX_GET(b, "holders"), j, h)
        {
            const char *key = jx_or_empty(json_string_value(h));
            const char *slash = strchr(key, '/');
            char *ns = slash ? xstrndup(key, (size_t)(slash - key)) : xstrdup("");
            json_array_append_new(holders, json_pack("{s:s, s:s}", "namespace", ns, "name",
                                                     slash ? slash + 1 : key));
            xfree(ns);
        }
        json_t *o = json_pack("{s:s, s:s, s:O, s:o}", "flavor", jx_or_empty(JX_STR(b, "flavor")),
                              "resource", jx_or_empty(JX_STR(b, "resource")), "needed",
                              JX_GET(b, "needed") ? JX_GET(b, "needed") : json_null(), "holders",
                              holders);
        json_array_append_new(out, o);
    }
    return out;
}

static json_t *item_json(const struct vis_item *it, int32_t pos_lq)
{
    const json_t *wl = it->wl;
    json_t *md = json_pack("{s:s, s:s}", "name", api_name(wl), "namespace", api_namespace(wl));
    if (JX_STR(wl, "metadata", "creationTimestamp"))
        json_object_set_new(md, "creationTimestamp",
                            json_string(JX_STR(wl, "metadata", "creationTimestamp")));
    if (json_array_size(JX_GET(wl, "metadata", "ownerReferences")))
        json_object_set_new(md, "ownerReferences", owner_refs(wl));
    json_t *o = json_pack("{s:o, s:I, s:s, s:i, s:i, s:s, s:s, s:o}", "metadata", md, "priority",
                          (json_int_t)JX_INT(wl, 0, "spec", "priority"), "localQueueName",
                          jx_or_empty(JX_STR(wl, "spec", "queueName")), "positionInClusterQueue",
                          (int)it->pos_cq, "positionInLocalQueue", (int)pos_lq, "reason",
                          jx_or_empty(JX_STR(it->x, "reason")), "message",
                          jx_or_empty(JX_STR(it->x, "message")), "blockers",
                          blockers_json(it->x));
    const char *eta = JX_STR(it->x, "estimatedAdmissionTime");
    if (eta && *eta)
        json_object_set_new(o, "estimatedAdmissionTime", json_string(eta));
    return o;
}

static json_t *summary(const char *version, json_t *items)
{
    char *av = xasprintf("%s/%s", SRV_VISIBILITY_GROUP, version);
    json_t *s = json_pack("{s:s, s:s, s:{}, s:o}", "kind", "PendingWorkloadsSummary",
                          "apiVersion", av, "metadata", "items", items);
    xfree(av);
    return s;
}

/* Kueue answers an unknown queue with NotFound on the singular resource
 * ("clusterqueue.visibility.kueue.x-k8s.io \"x\" not found"). */
static void vis_not_found(struct srv_resp *r, const char *singular, const char *name)
{
    char msg[512];
    snprintf(msg, sizeof(msg), "%s.%s \"%s\" not found", singular, SRV_VISIBILITY_GROUP, name);
    srv__resp_status(r, 404, "NotFound", msg,
                     json_pack("{s:s, s:s, s:s}", "name", name, "group", SRV_VISIBILITY_GROUP,
                               "kind", singular));
}

/* ?offset= and ?limit=; -1 after answering r with 400. */
static int paging(struct srv_req *q, struct srv_resp *r, long long *offset, long long *limit)
{
    *offset = 0;
    *limit = VIS_DEFAULT_LIMIT;
    if (srv__qint(q, r, "offset", 0, offset) < 0 || srv__qint(q, r, "limit", 1, limit) < 0)
        return -1;
    return 0;
}

static void cq_pending(struct srv_req *q, struct srv_resp *r, const char *version,
                       const char *cq)
{
    long long offset, limit;
    if (paging(q, r, &offset, &limit))
        return;
    struct store *st = q->srv->store;
    json_t *cqo = store_get(st, KIND_CLUSTERQUEUE, NULL, cq);
    if (!cqo) {
        vis_not_found(r, "clusterqueue", cq);
        return;
    }
    json_decref(cqo);
    json_t *lqs = json_object(), *all = store_list(st, KIND_LOCALQUEUE, NULL, NULL);
    size_t i, n;
    json_t *it;
    json_array_foreach(all, i, it)
    {
        if (!strcmp(jx_or_empty(JX_STR(it, "spec", "clusterQueue")), cq)) {
            char *key = xasprintf("%s/%s", api_namespace(it), api_name(it));
            json_object_set_new(lqs, key, json_true());
            xfree(key);
        }
    }
    json_decref(all);
    json_t *wls = store_list(st, KIND_WORKLOAD, NULL, NULL);
    struct vis_item *items = collect(q->srv, wls, lqs, NULL, NULL, &n);
    json_t *out = json_array(), *lq_pos = json_object();
    for (i = 0; i < n && (long long)i < offset + limit; i++) {
        /* positions in each LocalQueue count from the queue's head */
        char *key = xasprintf("%s/%s", api_namespace(items[i].wl),
                              JX_STR(items[i].wl, "spec", "queueName"));
        json_int_t pos = json_integer_value(json_object_get(lq_pos, key));
        json_object_set_new(lq_pos, key, json_integer(pos + 1));
        xfree(key);
        if ((long long)i >= offset)
            json_array_append_new(out, item_json(&items[i], (int32_t)pos));
    }
    items_free(items, n);
    json_decref(lq_pos);
    json_decref(wls);
    json_decref(lqs);
    srv__resp_json(r, 200, summary(version, out));
}

static void lq_pending(struct srv_req *q, struct srv_resp *r, const char *version,
                       const char *ns, const char *lq)
{
    long long offset, limit;
    if (paging(q, r, &offset, &limit))
        return;
    struct store *st = q->srv->store;
    json_t *lqo = store_get(st, KIND_LOCALQUEUE, ns, lq);
    if (!lqo) {
        vis_not_found(r, "localqueue", lq);
        return;
    }
    json_decref(lqo);
    json_t *wls = store_list(st, KIND_WORKLOAD, ns, NULL);
    size_t n;
    struct vis_item *items = collect(q->srv, wls, NULL, ns, lq, &n);
    json_t *out = json_array();
    for (size_t i = (size_t)offset; i < n && (long long)i < offset + limit; i++)
        json_array_append_new(out, item_json(&items[i], (int32_t)i));
    items_free(items, n);
    json_decref(wls);
    srv__resp_json(r, 200, summary(version, out));
}

/* One workload's entry (cueue's extension): 404 when it does not exist or
 * is not pending in a queue. */
static void wl_pending(struct srv_req *q, struct srv_resp *r, const char *version,
                       const char *ns, const char *name)
{
    struct store *st = q->srv->store;
    json_t *wl = store_get(st, KIND_WORKLOAD, ns, name);
    if (!wl) {
        srv__resp_err(r, CU_ENOTFOUND, api_kind_get(KIND_WORKLOAD), name);
        return;
    }
    const char *lq = JX_STR(wl, "spec", "queueName");
    json_t *wls = is_candidate(wl) ? store_list(st, KIND_WORKLOAD, ns, NULL) : json_array();
    size_t n;
    struct vis_item *items = collect(q->srv, wls, NULL, ns, lq ? lq : "", &n);
    size_t i = 0;
    while (i < n && strcmp(api_name(items[i].wl), name))
        i++;
    if (i == n) {
        srv__resp_statusf(r, 404, "NotFound",
                          "workload \"%s\" is not pending in a queue (it holds quota, has "
                          "finished, or its LocalQueue or ClusterQueue is missing or stopped)",
                          name);
    } else {
        json_t *o = item_json(&items[i], (int32_t)i);
        char *av = xasprintf("%s/%s", SRV_VISIBILITY_GROUP, version);
        json_object_set_new(o, "kind", json_string("PendingWorkload"));
        json_object_set_new(o, "apiVersion", json_string(av));
        xfree(av);
        srv__resp_json(r, 200, o);
    }
    items_free(items, n);
    json_decref(wls);
    json_decref(wl);
}

void srv__handle_visibility(struct srv_req *q, struct srv_resp *r, const char *version,
                            char **segs, int nsegs)
{
    r->verb = SRV_VERB_GET;
    bool cq = nsegs == 3 && !strcmp(segs[0], "clusterqueues") &&
              !strcmp(segs[2], "pendingworkloads");
    bool lq = nsegs == 5 && !strcmp(segs[0], "namespaces") && !strcmp(segs[2], "localqueues") &&
              !strcmp(segs[4], "pendingworkloads");
    bool wl = nsegs == 5 && !strcmp(segs[0], "namespaces") && !strcmp(segs[2], "workloads") &&
              !strcmp(segs[4], "pendingworkload");
    if (!q->srv->ctrl || !version_ok(version) || !(cq || lq || wl)) {
        srv__resp_status(r, 404, "NotFound", "the server could not find the requested resource",
                         json_object());
    } else if (strcmp(q->method, "GET")) {
        srv__resp_statusf(r, 405, "MethodNotAllowed",
                          "the server does not allow this method on the requested resource "
                          "(%s %s)", q->method, q->path);
    } else if (cq) {
        if (!srv__check_segment(r, "Name", segs[1]))
            cq_pending(q, r, version, segs[1]);
    } else if (!srv__check_segment(r, "Namespace", segs[1]) &&
               !srv__check_segment(r, "Name", segs[3])) {
        if (lq)
            lq_pending(q, r, version, segs[1], segs[3]);
        else
            wl_pending(q, r, version, segs[1], segs[3]);
    }
}

/* ---- discovery ---- */

static json_t *gvk(const char *version, const char *kind)
{
    return json_pack("{s:s, s:s, s:s}", "group", SRV_VISIBILITY_GROUP, "version", version, "kind",
                     kind);
}

/* The three parents: plural, singular, kind, namespaced, subresource, its
 * kind. Each parent has its own kind (Kueue's visibility types ClusterQueue
 * and LocalQueue), so kubectl's mapping from a kind back to a resource
 * stays one-to-one. */
static const struct vis_res {
    const char *plural, *singular, *kind;
    bool namespaced;
    const char *sub, *sub_kind;
} vis_res[] = {
    {"clusterqueues", "clusterqueue", "ClusterQueue", false, "pendingworkloads",
     "PendingWorkloadsSummary"},
    {"localqueues", "localqueue", "LocalQueue", true, "pendingworkloads",
     "PendingWorkloadsSummary"},
    {"workloads", "workload", "Workload", true, "pendingworkload", "PendingWorkload"},
};
#define N_VIS_RES (sizeof(vis_res) / sizeof(*vis_res))

json_t *srv__visibility_agg_group(const struct srv *s)
{
    if (!s->ctrl)
        return NULL;
    json_t *versions = json_array();
    for (const char *const *v = vis_versions; *v; v++) {
        json_t *res = json_array();
        for (size_t i = 0; i < N_VIS_RES; i++) {
            const struct vis_res *x = &vis_res[i];
            /* the parents only carry the subresource (no verbs of their own) */
            json_array_append_new(
                res, json_pack("{s:s, s:o, s:s, s:s, s:[], s:[{s:s, s:o, s:[s]}]}", "resource",
                               x->plural, "responseKind", gvk(*v, x->kind),
                               "scope", x->namespaced ? "Namespaced" : "Cluster",
                               "singularResource", x->singular, "verbs", "subresources",
                               "subresource", x->sub, "responseKind", gvk(*v, x->sub_kind),
                               "verbs", "get"));
        }
        json_array_append_new(versions, json_pack("{s:s, s:o, s:s}", "version", *v, "resources",
                                                  res, "freshness", "Current"));
    }
    return json_pack("{s:{s:s}, s:o}", "metadata", "name", SRV_VISIBILITY_GROUP, "versions",
                     versions);
}

json_t *srv__visibility_group_entry(const struct srv *s, bool typed)
{
    if (!s->ctrl)
        return NULL;
    json_t *versions = json_array();
    for (const char *const *v = vis_versions; *v; v++) {
        char *gv = xasprintf("%s/%s", SRV_VISIBILITY_GROUP, *v);
        json_array_append_new(versions,
                              json_pack("{s:s, s:s}", "groupVersion", gv, "version", *v));
        xfree(gv);
    }
    char *pref = xasprintf("%s/%s", SRV_VISIBILITY_GROUP, vis_versions[0]);
    json_t *g = json_pack("{s:s, s:o, s:{s:s, s:s}}", "name", SRV_VISIBILITY_GROUP, "versions",
                          versions, "preferredVersion", "groupVersion", pref, "version",
                          vis_versions[0]);
    xfree(pref);
    if (typed) {
        json_object_set_new(g, "kind", json_string("APIGroup"));
        json_object_set_new(g, "apiVersion", json_string("v1"));
    }
    return g;
}

bool srv__visibility_resource_list(const struct srv *s, const char *version,
                                   struct srv_resp *r)
{
    if (!s->ctrl || !version_ok(version))
        return false;
    json_t *res = json_array();
    for (size_t i = 0; i < N_VIS_RES; i++) {
        const struct vis_res *x = &vis_res[i];
        char *sub = xasprintf("%s/%s", x->plural, x->sub);
        json_array_append_new(res, json_pack("{s:s, s:s, s:b, s:s, s:[]}", "name", x->plural,
                                             "singularName", x->singular, "namespaced",
                                             x->namespaced, "kind", x->kind,
                                             "verbs"));
        json_array_append_new(res, json_pack("{s:s, s:s, s:b, s:s, s:[s]}", "name", sub,
                                             "singularName", "", "namespaced", x->namespaced,
                                             "kind", x->sub_kind, "verbs", "get"));
        xfree(sub);
    }
    char *gv = xasprintf("%s/%s", SRV_VISIBILITY_GROUP, version);
    srv__resp_json(r, 200,
                   json_pack("{s:s, s:s, s:s, s:o}", "kind", "APIResourceList", "apiVersion",
                             "v1", "groupVersion", gv, "resources", res));
    xfree(gv);
    return true;
}
