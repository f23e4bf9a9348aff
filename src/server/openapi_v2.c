/*
 * openapi_v2: GET /openapi/v2, the OpenAPI v2 document kubectl ≤ 1.28
 * reads before `apply`, `create -f` and `--dry-run=server`. It holds, per
 * kind, the item path with a `patch` operation whose query parameters are
 * dryRun, fieldManager and fieldValidation, tagged with
 * x-kubernetes-group-version-kind: from it kubectl learns that the server
 * honours dry runs and server-side field validation for that kind. It has
 * no definitions, so kubectl's client-side schema validation finds nothing
 * to check (the server validates), and every kubectl keeps computing
 * strategic merge patches from its compiled-in types (merge patch for
 * custom kinds), as without the document.
 * Protobuf (the gnostic openapi.v2.Document, built with protobuf-c from
 * src/server/proto/openapiv2.proto) when Accept names
 * application/com.github.proto-openapi.spec.v2, else the same as JSON.
 */
#include <stdio.h>
#include <string.h>

#include "openapiv2.pb-c.h"
#include "server/srv-int.h"
#include "util/xalloc.h"

/* the reply's type: the requested one with '.' for '@', which Go's mime
 * parser (client-go) accepts, as kube-openapi answers */
#define OPENAPI_V2_PB "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
#define N_PARAMS 3

static const char *const PARAMS[N_PARAMS] = {"dryRun", "fieldManager", "fieldValidation"};

static char *item_path(const struct api_kind *k)
{
    char *coll = srv__openapi_base_path(k);
    char *item = xasprintf("%s/{name}", coll);
    xfree(coll);
    return item;
}

static json_t *json_document(void)
{
    json_t *paths = json_object();
    for (int i = 0; i < KIND__COUNT; i++) {
        const struct api_kind *k = api_kind_get((enum api_kind_id)i);
        json_t *params = json_array();
        for (int p = 0; p < N_PARAMS; p++)
            json_array_append_new(params, json_pack("{s:s, s:s, s:s}", "name", PARAMS[p], "in",
                                                    "query", "type", "string"));
        char *opid = xasprintf("patch%s", k->kind);
        char *path = item_path(k);
        json_object_set_new(
            paths, path,
            json_pack("{s:{s:s, s:o, s:{s:s, s:s, s:s}}}", "patch", "operationId", opid,
                      "parameters", params, "x-kubernetes-group-version-kind", "group", k->group,
                      "kind", k->kind, "version", k->version));
        xfree(opid);
        xfree(path);
    }
    return json_pack("{s:s, s:{s:s, s:s}, s:o}", "swagger", "2.0", "info", "title", "cueue",
                     "version", SRV_K8S_GIT_VERSION, "paths", paths);
}

/* One kind's path item and everything it points to (protobuf-c messages
 * refer to each other by pointer; these hold them until packing). */
struct v2_kind {
    Cueue__Openapiv2__NamedPathItem named;
    Cueue__Openapiv2__PathItem item;
    Cueue__Openapiv2__Operation op;
    Cueue__Openapiv2__ParametersItem pitem[N_PARAMS];
    Cueue__Openapiv2__ParametersItem *pitem_ptr[N_PARAMS];
    Cueue__Openapiv2__Parameter param[N_PARAMS];
    Cueue__Openapiv2__NonBodyParameter nonbody[N_PARAMS];
    Cueue__Openapiv2__QueryParameterSubSchema query[N_PARAMS];
    Cueue__Openapiv2__NamedAny ext;
    Cueue__Openapiv2__NamedAny *ext_ptr;
    Cueue__Openapiv2__Any gvk;
    char *path, *opid, *yaml;
};

static void v2_kind_init(struct v2_kind *v, const struct api_kind *k)
{
    cueue__openapiv2__named_path_item__init(&v->named);
    cueue__openapiv2__path_item__init(&v->item);
    cueue__openapiv2__operation__init(&v->op);
    for (int p = 0; p < N_PARAMS; p++) {
        cueue__openapiv2__query_parameter_sub_schema__init(&v->query[p]);
        v->query[p].name = (char *)PARAMS[p];
        v->query[p].in = (char *)"query";
        v->query[p].type = (char *)"string";
        cueue__openapiv2__non_body_parameter__init(&v->nonbody[p]);
        v->nonbody[p].query_parameter_sub_schema = &v->query[p];
        cueue__openapiv2__parameter__init(&v->param[p]);
        v->param[p].non_body_parameter = &v->nonbody[p];
        cueue__openapiv2__parameters_item__init(&v->pitem[p]);
        v->pitem[p].parameter = &v->param[p];
        v->pitem_ptr[p] = &v->pitem[p];
    }
    v->path = item_path(k);
    v->opid = xasprintf("patch%s", k->kind);
    v->yaml = k->group[0] ? xasprintf("group: %s\nkind: %s\nversion: %s\n", k->group, k->kind,
                                      k->version)
                          : xasprintf("group: \"\"\nkind: %s\nversion: %s\n", k->kind, k->version);
    cueue__openapiv2__any__init(&v->gvk);
    v->gvk.yaml = v->yaml;
    cueue__openapiv2__named_any__init(&v->ext);
    v->ext.name = (char *)"x-kubernetes-group-version-kind";
    v->ext.value = &v->gvk;
    v->ext_ptr = &v->ext;
    v->op.operation_id = v->opid;
    v->op.n_parameters = N_PARAMS;
    v->op.parameters = v->pitem_ptr;
    v->op.n_vendor_extension = 1;
    v->op.vendor_extension = &v->ext_ptr;
    v->item.patch = &v->op;
    v->named.name = v->path;
    v->named.value = &v->item;
}

static void protobuf_document(struct srv_resp *r)
{
    struct v2_kind *kinds = xcalloc(KIND__COUNT, sizeof(*kinds));
    Cueue__Openapiv2__NamedPathItem **items = xcalloc(KIND__COUNT, sizeof(*items));
    for (int i = 0; i < KIND__COUNT; i++) {
        v2_kind_init(&kinds[i], api_kind_get((enum api_kind_id)i));
        items[i] = &kinds[i].named;
    }
    Cueue__Openapiv2__Paths paths = CUEUE__OPENAPIV2__PATHS__INIT;
    paths.n_path = KIND__COUNT;
    paths.path = items;
    Cueue__Openapiv2__Info info = CUEUE__OPENAPIV2__INFO__INIT;
    info.title = (char *)"cueue";
    info.version = (char *)SRV_K8S_GIT_VERSION;
    Cueue__Openapiv2__Document doc = CUEUE__OPENAPIV2__DOCUMENT__INIT;
    doc.swagger = (char *)"2.0";
    doc.info = &info;
    doc.paths = &paths;
    size_t len = cueue__openapiv2__document__get_packed_size(&doc);
    uint8_t *buf = xmalloc(len ? len : 1);
    cueue__openapiv2__document__pack(&doc, buf);
    srv__resp_bytes(r, 200, buf, len, OPENAPI_V2_PB);
    xfree(buf);
    for (int i = 0; i < KIND__COUNT; i++) {
        xfree(kinds[i].path);
        xfree(kinds[i].opid);
        xfree(kinds[i].yaml);
    }
    xfree(items);
    xfree(kinds);
}

void srv__openapi_v2(const struct srv_req *q, struct srv_resp *r)
{
    if (strstr(q->accept, "application/com.github.proto-openapi.spec.v2"))
        protobuf_document(r);
    else
        srv__resp_json(r, 200, json_document());
}
