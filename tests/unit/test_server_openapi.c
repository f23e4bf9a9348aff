/* Unit tests of the OpenAPI documents: /openapi/v2 in protobuf (what
 * kubectl 1.20-1.28 decode before apply and --dry-run=server) and JSON,
 * the v3 index and a per-group-version document. Regressions: /openapi/v2
 * used to be 404, which made `kubectl apply` of 1.20-1.28 fail without
 * --validate=false; without per-kind patch operations listing dryRun,
 * kubectl 1.20 refused --dry-run=server ("doesn't support dry-run"). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "openapiv2.pb-c.h"
#include "server/srv-int.h"
#include "util/jsonx.h"

static void get(const char *path, const char *accept, struct srv_resp *r)
{
    char buf[256];
    char *segs[8];
    int n = 0;
    snprintf(buf, sizeof(buf), "%s", path + 1);
    for (char *save = NULL, *s = strtok_r(buf, "/", &save); s && n < 8; s = strtok_r(NULL, "/", &save))
        segs[n++] = s;
    json_t *query = json_object();
    struct srv_req q = {.method = "GET", .path = path, .query = query, .accept = accept,
                        .content_type = "", .body = "", .client_fd = -1};
    srv__resp_init(r);
    srv__handle_openapi(&q, r, segs, n);
    json_decref(query);
}

static json_t *body_json(const struct srv_resp *r)
{
    json_error_t e;
    json_t *v = json_loadb(r->body, r->len, 0, &e);
    if (!v)
        fail_msg("not JSON: %s", e.text);
    return v;
}

static void test_v2_protobuf(void **state)
{
    (void)state;
    struct srv_resp r;
    get("/openapi/v2", "application/com.github.proto-openapi.spec.v2@v1.0+protobuf", &r);
    assert_int_equal(r.code, 200);
    /* '@' would make Go's mime.ParseMediaType (client-go) fail the request */
    assert_string_equal(r.content_type, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
    Cueue__Openapiv2__Document *d =
        cueue__openapiv2__document__unpack(NULL, r.len, (const uint8_t *)r.body);
    assert_non_null(d);
    assert_string_equal(d->swagger, "2.0");
    assert_non_null(d->info);
    assert_string_equal(d->info->version, SRV_K8S_GIT_VERSION);
    /* one path per kind; ClusterQueue's patch takes dryRun and names its GVK */
    assert_non_null(d->paths);
    assert_int_equal(d->paths->n_path, KIND__COUNT);
    const Cueue__Openapiv2__Operation *op = NULL;
    for (size_t i = 0; i < d->paths->n_path; i++)
        if (!strcmp(d->paths->path[i]->name, "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/{name}"))
            op = d->paths->path[i]->value->patch;
    assert_non_null(op);
    assert_int_equal(op->n_parameters, 3);
    assert_string_equal(op->parameters[0]->parameter->non_body_parameter->query_parameter_sub_schema->name,
                        "dryRun");
    assert_string_equal(op->vendor_extension[0]->name, "x-kubernetes-group-version-kind");
    assert_string_equal(op->vendor_extension[0]->value->yaml,
                        "group: kueue.x-k8s.io\nkind: ClusterQueue\nversion: v1beta1\n");
    cueue__openapiv2__document__free_unpacked(d, NULL);
    srv__resp_release(&r);
}

static void test_v2_json(void **state)
{
    (void)state;
    struct srv_resp r;
    get("/openapi/v2", "application/json", &r);
    assert_int_equal(r.code, 200);
    assert_string_equal(r.content_type, "application/json");
    json_t *d = body_json(&r);
    assert_string_equal(JX_STR(d, "swagger"), "2.0");
    assert_int_equal(json_object_size(JX_GET(d, "paths")), KIND__COUNT);
    const json_t *patch = JX_GET(d, "paths", "/api/v1/namespaces/{namespace}/configmaps/{name}", "patch");
    assert_string_equal(JX_STR(patch, "x-kubernetes-group-version-kind", "kind"), "ConfigMap");
    assert_string_equal(JX_STR(patch, "x-kubernetes-group-version-kind", "group"), "");
    assert_string_equal(JX_STR(json_array_get(JX_GET(patch, "parameters"), 2), "name"), "fieldValidation");
    assert_null(JX_GET(d, "definitions"));
    json_decref(d);
    srv__resp_release(&r);
}

static void test_v3_index_and_gv(void **state)
{
    (void)state;
    struct srv_resp r;
    get("/openapi/v3", "application/json", &r);
    json_t *d = body_json(&r);
    assert_string_equal(JX_STR(d, "paths", "apis/kueue.x-k8s.io/v1beta1", "serverRelativeURL"),
                        "/openapi/v3/apis/kueue.x-k8s.io/v1beta1");
    json_decref(d);
    srv__resp_release(&r);
    get("/openapi/v3/apis/kueue.x-k8s.io/v1beta1", "application/json", &r);
    d = body_json(&r);
    const json_t *patch = JX_GET(d, "paths", "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/{name}", "patch");
    assert_string_equal(JX_STR(patch, "x-kubernetes-group-version-kind", "kind"), "ClusterQueue");
    bool fv = false;
    size_t i;
    json_t *p;
    json_array_foreach(JX_GET(patch, "parameters"), i, p)
    {
        fv = fv || !strcmp(JX_STR(p, "name"), "fieldValidation");
    }
    assert_true(fv);
    json_decref(d);
    srv__resp_release(&r);
    get("/openapi/v3/apis/nope/v1", "application/json", &r);
    assert_int_equal(r.code, 404);
    srv__resp_release(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_v2_protobuf),
        cmocka_unit_test(test_v2_json),
        cmocka_unit_test(test_v3_index_and_gv),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
