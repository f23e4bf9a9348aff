/*
 * discovery: /version and API discovery, generated from the kind registry.
 *   - /api and /apis as aggregated discovery (apidiscovery.k8s.io v2 or
 *     v2beta1) when Accept asks for it, with the exact content type kubectl
 *     requires; the first acceptable media range in Accept order wins, and
 *     v2 is never sent unless `v=v2` is asked for (kubectl.md §2.1);
 *   - otherwise legacy APIVersions / APIGroupList, and /apis/G (APIGroup),
 *     /api/v1 and /apis/G/V (APIResourceList) always.
 * /version stays fixed at v1.32.0: the gcloud kubectl dispatcher picks its
 * kubectl binary from major/minor and caches the answer for hours.
 */
#include <stdio.h>
#include <string.h>

#include "server/srv-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define AGG_V2 "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
#define AGG_V2BETA1 "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"

#if defined(__x86_64__)
#define PLATFORM "linux/amd64"
#elif defined(__aarch64__)
#define PLATFORM "linux/arm64"
#else
#define PLATFORM "linux/unknown"
#endif

void srv__handle_version(struct srv_req *q, struct srv_resp *r)
{
    (void)q;
    srv__resp_json(r, 200,
                   json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "major", SRV_K8S_MAJOR,
                             "minor", SRV_K8S_MINOR, "gitVersion", SRV_K8S_GIT_VERSION, "gitCommit", "cueue",
                             "gitTreeState", "clean", "buildDate", "2025-01-01T00:00:00Z",
                             "goVersion", "none (cueue is C)", "compiler", "cueue",
                             "platform", PLATFORM));
}

/* 2 = v2, 1 = v2beta1, 0 = legacy: the first media range in Accept that
 * names an APIGroupDiscoveryList version we serve, or plain JSON. */
static int aggregated_version(const char *accept)
{
    char *a = xstrdup(accept ? accept : "");
    int v = 0;
    for (char *save = NULL, *mr = strtok_r(a, ",", &save); mr; mr = strtok_r(NULL, ",", &save)) {
        if (!strstr(mr, "as=APIGroupDiscoveryList") || !strstr(mr, "g=apidiscovery.k8s.io"))
            continue;
        bool v2 = false, v2b1 = false;
        char *p = xstrdup(mr);
        for (char *s2 = NULL, *param = strtok_r(p, ";", &s2); param;
             param = strtok_r(NULL, ";", &s2)) {
            while (*param == ' ')
                param++;
            size_t n = strlen(param);
            while (n && param[n - 1] == ' ')
                param[--n] = '\0';
            v2 = v2 || !strcmp(param, "v=v2");
            v2b1 = v2b1 || !strcmp(param, "v=v2beta1");
        }
        xfree(p);
        if (v2 || v2b1) {
            v = v2 ? 2 : 1;
            break;
        }
    }
    xfree(a);
    return v;
}

bool srv__has_deletecollection(const struct api_kind *k)
{
    return k->id != KIND_NAMESPACE;
}

/* The kind's verbs: all of them, except deletecollection for Namespaces
 * (the API server has no collection delete for them). */
static json_t *verbs_all(const struct api_kind *k)
{
    json_t *v = json_pack("[s,s,s,s,s,s,s,s]", "create", "delete", "deletecollection", "get",
                          "list", "patch", "update", "watch");
    if (!srv__has_deletecollection(k))
        json_array_remove(v, 2);
    return v;
}

static json_t *str_list(const char *const *items, size_t max)
{
    json_t *a = json_array();
    for (size_t i = 0; i < max && items[i]; i++)
        json_array_append_new(a, json_string(items[i]));
    return a;
}

static json_t *gvk(const char *group, const char *version, const char *kind)
{
    return json_pack("{s:s, s:s, s:s}", "group", group, "version", version, "kind", kind);
}

static json_t *agg_resource(const struct api_kind *k)
{
    json_t *subs = json_array();
    if (k->has_status)
        json_array_append_new(subs, json_pack("{s:s, s:o, s:[s,s,s]}", "subresource", "status",
                                              "responseKind", gvk(k->group, k->version, k->kind),
                                              "verbs", "get", "patch", "update"));
    if (k->id == KIND_POD) {
        json_array_append_new(subs, json_pack("{s:s, s:o, s:[s]}", "subresource", "log",
                                              "responseKind", gvk("", "v1", "Pod"), "verbs",
                                              "get"));
        json_array_append_new(subs, json_pack("{s:s, s:o, s:[s,s]}", "subresource",
                                              "portforward", "responseKind",
                                              gvk("", "v1", "PodPortForwardOptions"), "verbs",
                                              "create", "get"));
    }
    json_t *res = json_pack("{s:s, s:o, s:s, s:s, s:o, s:o}", "resource", k->plural,
                            "responseKind", gvk(k->group, k->version, k->kind), "scope",
                            k->namespaced ? "Namespaced" : "Cluster", "singularResource",
                            k->singular, "verbs", verbs_all(k), "subresources", subs);
    if (k->short_names[0])
        json_object_set_new(res, "shortNames", str_list(k->short_names, 4));
    if (k->categories[0])
        json_object_set_new(res, "categories", str_list(k->categories, 3));
    return res;
}

/* Distinct groups in registry order (core first when include_core). */
static int groups(const char **out, int max, bool include_core)
{
    int n = 0;
    for (int i = 0; i < KIND__COUNT; i++) {
        const struct api_kind *k = api_kind_get((enum api_kind_id)i);
        if (!k->group[0] && !include_core)
            continue;
        bool seen = false;
        for (int j = 0; j < n; j++)
            seen = seen || !strcmp(out[j], k->group);
        if (!seen && n < max)
            out[n++] = k->group;
    }
    return n;
}

static const char *group_version(const char *group)
{
    for (int i = 0; i < KIND__COUNT; i++) {
        const struct api_kind *k = api_kind_get((enum api_kind_id)i);
        if (!strcmp(k->group, group))
            return k->version;
    }
    return NULL;
}

static json_t *agg_group(const char *group)
{
    json_t *resources = json_array();
    for (int i = 0; i < KIND__COUNT; i++) {
        const struct api_kind *k = api_kind_get((enum api_kind_id)i);
        if (!strcmp(k->group, group))
            json_array_append_new(resources, agg_resource(k));
    }
    return json_pack("{s:{s:s}, s:[{s:s, s:o, s:s}]}", "metadata", "name", group, "versions",
                     "version", group_version(group), "resources", resources, "freshness",
                     "Current");
}

static void aggregated(const struct srv *s, struct srv_resp *r, int v, bool core)
{
    const char *gs[KIND__COUNT];
    int n = groups(gs, KIND__COUNT, true);
    json_t *items = json_array();
    for (int i = 0; i < n; i++)
        if (core == !gs[i][0])
            json_array_append_new(items, agg_group(gs[i]));
    /* the visibility group comes last: kubectl resolves a resource name
     * served by several groups (clusterqueues, localqueues, workloads) to
     * the first group in discovery order, which must stay Kueue's */
    json_t *vis = core ? NULL : srv__visibility_agg_group(s);
    if (vis)
        json_array_append_new(items, vis);
    json_t *list = json_pack("{s:s, s:s, s:{}, s:o}", "kind", "APIGroupDiscoveryList",
                             "apiVersion",
                             v == 2 ? "apidiscovery.k8s.io/v2" : "apidiscovery.k8s.io/v2beta1",
                             "metadata", "items", items);
    srv__resp_json_ct(r, 200, list, v == 2 ? AGG_V2 : AGG_V2BETA1);
}

static json_t *group_entry(const char *group, bool typed)
{
    char *gv = xasprintf("%s/%s", group, group_version(group));
    json_t *g = json_pack("{s:s, s:[{s:s, s:s}], s:{s:s, s:s}}", "name", group, "versions",
                          "groupVersion", gv, "version", group_version(group),
                          "preferredVersion", "groupVersion", gv, "version",
                          group_version(group));
    xfree(gv);
    if (typed) {
        json_object_set_new(g, "kind", json_string("APIGroup"));
        json_object_set_new(g, "apiVersion", json_string("v1"));
    }
    return g;
}

static json_t *legacy_resource(const struct api_kind *k)
{
    json_t *res = json_pack("{s:s, s:s, s:b, s:s, s:o}", "name", k->plural, "singularName",
                            k->singular, "namespaced", k->namespaced, "kind", k->kind, "verbs",
                            verbs_all(k));
    if (k->short_names[0])
        json_object_set_new(res, "shortNames", str_list(k->short_names, 4));
    if (k->categories[0])
        json_object_set_new(res, "categories", str_list(k->categories, 3));
    return res;
}

static void sub_entry(json_t *arr, const struct api_kind *k, const char *sub, const char *kind,
                      json_t *verbs)
{
    char *name = xasprintf("%s/%s", k->plural, sub);
    json_array_append_new(arr, json_pack("{s:s, s:s, s:b, s:s, s:o}", "name", name,
                                         "singularName", "", "namespaced", k->namespaced,
                                         "kind", kind, "verbs", verbs));
    xfree(name);
}

static void resource_list(struct srv_resp *r, const char *group, const char *version)
{
    json_t *res = json_array();
    bool any = false;
    for (int i = 0; i < KIND__COUNT; i++) {
        const struct api_kind *k = api_kind_get((enum api_kind_id)i);
        if (strcmp(k->group, group) || strcmp(k->version, version))
            continue;
        any = true;
        json_array_append_new(res, legacy_resource(k));
        if (k->has_status)
            sub_entry(res, k, "status", k->kind, json_pack("[s,s,s]", "get", "patch", "update"));
        if (k->id == KIND_POD) {
            sub_entry(res, k, "log", "Pod", json_pack("[s]", "get"));
            sub_entry(res, k, "portforward", "PodPortForwardOptions",
                      json_pack("[s,s]", "create", "get"));
        }
    }
    if (!any) {
        json_decref(res);
        srv__resp_status(r, 404, "NotFound", "the server could not find the requested resource",
                         json_object());
        return;
    }
    char *gv = group[0] ? xasprintf("%s/%s", group, version) : xstrdup(version);
    srv__resp_json(r, 200,
                   json_pack("{s:s, s:s, s:s, s:o}", "kind", "APIResourceList", "apiVersion",
                             "v1", "groupVersion", gv, "resources", res));
    xfree(gv);
}

static void legacy_api(struct srv_req *q, struct srv_resp *r)
{
    char addr[128];
    snprintf(addr, sizeof(addr), "%s:%u", q->srv->listen_addr, q->srv->port);
    srv__resp_json(r, 200,
                   json_pack("{s:s, s:[s], s:[{s:s, s:s}]}", "kind", "APIVersions", "versions",
                             "v1", "serverAddressByClientCIDRs", "clientCIDR", "0.0.0.0/0",
                             "serverAddress", addr));
}

static void legacy_apis(const struct srv *s, struct srv_resp *r)
{
    const char *gs[KIND__COUNT];
    int n = groups(gs, KIND__COUNT, false);
    json_t *arr = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(arr, group_entry(gs[i], false));
    json_t *vis = srv__visibility_group_entry(s, false); /* last, as above */
    if (vis)
        json_array_append_new(arr, vis);
    srv__resp_json(r, 200,
                   json_pack("{s:s, s:s, s:o}", "kind", "APIGroupList", "apiVersion", "v1",
                             "groups", arr));
}

void srv__handle_discovery(struct srv_req *q, struct srv_resp *r, char **segs, int nsegs)
{
    bool core = !strcmp(segs[0], "api");
    if (nsegs == 1) {
        int v = aggregated_version(q->accept);
        if (v)
            aggregated(q->srv, r, v, core);
        else if (core)
            legacy_api(q, r);
        else
            legacy_apis(q->srv, r);
    } else if (core) {
        resource_list(r, "", segs[1]);
    } else if (srv__visibility_path(segs[1])) {
        json_t *g = nsegs == 2 ? srv__visibility_group_entry(q->srv, true) : NULL;
        if (g)
            srv__resp_json(r, 200, g);
        else if (nsegs == 2 || !srv__visibility_resource_list(q->srv, segs[2], r))
            srv__resp_status(r, 404, "NotFound",
                             "the server could not find the requested resource", json_object());
    } else if (nsegs == 2) {
        if (group_version(segs[1]) && segs[1][0])
            srv__resp_json(r, 200, group_entry(segs[1], true));
        else
            srv__resp_status(r, 404, "NotFound",
                             "the server could not find the requested resource", json_object());
    } else {
        resource_list(r, segs[1], segs[2]);
    }
}
