/*
 * openapi: /openapi/v3 (index) and /openapi/v3/<api/v1|apis/G/V> (one
 * document per group-version), generated from the kind registry.
 * kubectl ≥ 1.29 reads them before `apply`/`create -f` to learn that the
 * server honours ?fieldValidation= for each kind: every kind gets its item
 * path with a `patch` operation carrying the fieldValidation query
 * parameter and x-kubernetes-group-version-kind (kubectl.md §3).
 * components/schemas come from the api schema (api_schema_openapi) for the
 * custom groups only (kueue, ray, autoscaling.x-k8s.io, cueue.dev), which
 * is what `kubectl explain` reads. Built-in kinds (core, batch) deliberately
 * get none: kubectl computes strategic merge patches for them from a schema
 * it finds, and without x-kubernetes-patch-merge-key extensions it would
 * send wrong patches; without one it uses the types compiled into it.
 * /openapi/v2 is openapi_v2.c.
 */
#include <stdio.h>
#include <string.h>

#include "api/schema.h"
#include "server/srv-int.h"
#include "util/xalloc.h"

static json_t *param(const char *name, const char *in, bool required)
{
    return json_pack("{s:s, s:s, s:b, s:{s:s}, s:s}", "name", name, "in", in, "required",
                     required, "schema", "type", "string", "description",
                     !strcmp(name, "fieldValidation")
                         ? "fieldValidation instructs the server on how to handle objects "
                           "containing unknown or duplicate fields: Ignore, Warn or Strict."
                         : "");
}

static json_t *operation(const struct api_kind *k, const char *verb, const char *action)
{
    json_t *params = json_array();
    if (strcmp(action, "get") && strcmp(action, "list")) {
        json_array_append_new(params, param("dryRun", "query", false));
        json_array_append_new(params, param("fieldManager", "query", false));
        json_array_append_new(params, param("fieldValidation", "query", false));
    }
    char *opid = xasprintf("%s%s", verb, k->kind);
    json_t *op = json_pack("{s:s, s:o, s:{s:{s:s}}, s:s, s:{s:s, s:s, s:s}}", "operationId", opid,
                           "parameters", params, "responses", "200", "description", "OK",
                           "x-kubernetes-action", action, "x-kubernetes-group-version-kind",
                           "group", k->group, "version", k->version, "kind", k->kind);
    xfree(opid);
    return op;
}

char *srv__openapi_base_path(const struct api_kind *k)
{
    char *gv = k->group[0] ? xasprintf("/apis/%s/%s", k->group, k->version)
                           : xasprintf("/api/%s", k->version);
    char *p = k->namespaced ? xasprintf("%s/namespaces/{namespace}/%s", gv, k->plural)
                            : xasprintf("%s/%s", gv, k->plural);
    xfree(gv);
    return p;
}

/* "io.x-k8s.kueue.v1beta1.ClusterQueue": the CRD convention (reversed group). */
static char *schema_name(const struct api_kind *k)
{
    struct sbuf sb;
    sbuf_init(&sb, 1024);
    char *g = xstrdup(k->group);
    for (;;) {
        char *dot = strrchr(g, '.');
        sbuf_adds(&sb, dot ? dot + 1 : g);
        sbuf_addc(&sb, '.');
        if (!dot)
            break;
        *dot = '\0';
    }
    sbuf_addf(&sb, "%s.%s", k->version, k->kind);
    xfree(g);
    char *name = sbuf_take(&sb);
    sbuf_release(&sb); /* sbuf_take re-initialises */
    return name;
}

static void add_schema(json_t *schemas, const struct api_kind *k)
{
    const struct api_schema *root = api_schema_for_kind(k->id);
    if (!root)
        return;
    json_t *sch = api_schema_openapi(root);
    json_object_set_new(sch, "x-kubernetes-group-version-kind",
                        json_pack("[{s:s, s:s, s:s}]", "group", k->group, "version", k->version,
                                  "kind", k->kind));
    char *name = schema_name(k);
    json_object_set_new(schemas, name, sch);
    xfree(name);
}

static json_t *gv_document(const char *group, const char *version)
{
    json_t *paths = json_object();
    json_t *schemas = json_object();
    bool builtin = !group[0] || !strcmp(group, "batch");
    bool any = false;
    for (int i = 0; i < KIND__COUNT; i++) {
        const struct api_kind *k = api_kind_get((enum api_kind_id)i);
        if (strcmp(k->group, group) || strcmp(k->version, version))
            continue;
        any = true;
        if (!builtin)
            add_schema(schemas, k);
        char *coll = srv__openapi_base_path(k);
        char *item = xasprintf("%s/{name}", coll);
        json_object_set_new(paths, coll,
                            json_pack("{s:o, s:o}", "get", operation(k, "list", "list"), "post",
                                      operation(k, "create", "post")));
        json_object_set_new(paths, item,
                            json_pack("{s:o, s:o, s:o, s:o}", "get", operation(k, "read", "get"),
                                      "put", operation(k, "replace", "put"), "patch",
                                      operation(k, "patch", "patch"), "delete",
                                      operation(k, "delete", "delete")));
        if (k->has_status) {
            char *st = xasprintf("%s/status", item);
            json_object_set_new(paths, st,
                                json_pack("{s:o}", "patch", operation(k, "patchStatus", "patch")));
            xfree(st);
        }
        xfree(coll);
        xfree(item);
    }
    if (!any) {
        json_decref(paths);
        json_decref(schemas);
        return NULL;
    }
    char *title = group[0] ? xasprintf("cueue %s/%s", group, version)
                           : xasprintf("cueue %s", version);
    json_t *doc = json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:o}}", "openapi", "3.0.0", "info",
                            "title", title, "version", SRV_K8S_GIT_VERSION, "paths", paths, "components",
                            "schemas", schemas);
    xfree(title);
    return doc;
}

static void index_doc(struct srv_resp *r)
{
    json_t *paths = json_object();
    for (int i = 0; i < KIND__COUNT; i++) {
        const struct api_kind *k = api_kind_get((enum api_kind_id)i);
        char *key = k->group[0] ? xasprintf("apis/%s/%s", k->group, k->version)
                                : xasprintf("api/%s", k->version);
        char *url = xasprintf("/openapi/v3/%s", key);
        if (!json_object_get(paths, key))
            json_object_set_new(paths, key, json_pack("{s:s}", "serverRelativeURL", url));
        xfree(key);
        xfree(url);
    }
    srv__resp_json(r, 200, json_pack("{s:o}", "paths", paths));
}

void srv__handle_openapi(struct srv_req *q, struct srv_resp *r, char **segs, int nsegs)
{
    json_t *doc = NULL;
    if (nsegs == 2 && !strcmp(segs[1], "v2")) {
        srv__openapi_v2(q, r);
        return;
    }
    if (nsegs == 2 && !strcmp(segs[1], "v3")) {
        index_doc(r);
        return;
    }
    if (nsegs == 4 && !strcmp(segs[1], "v3") && !strcmp(segs[2], "api"))
        doc = gv_document("", segs[3]);
    else if (nsegs == 5 && !strcmp(segs[1], "v3") && !strcmp(segs[2], "apis"))
        doc = gv_document(segs[3], segs[4]);
    if (doc)
        srv__resp_json(r, 200, doc);
    else
        srv__resp_status(r, 404, "NotFound", "the server could not find the requested resource",
                         json_object());
}
