/*
 * test_api_service: admission of v1 Service, Endpoints and
 * discovery.k8s.io/v1 EndpointSlice (schema_service.c): the API server's
 * defaults (type, sessionAffinity, protocol, targetPort, a recorded
 * clusterIP), headless Services, and each rule's error naming its field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_api_lib.h"
#include "api/schema.h"
#include "util/err.h"
#include "util/jsonx.h"

static json_t *svc_doc(const char *yaml)
{
    json_t *docs = t_parse_ok(yaml);
    json_t *doc = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return doc;
}

static void assert_has(const char *hay, const char *needle)
{
    if (!strstr(hay, needle))
        fail_msg("'%s' not in '%s'", needle, hay);
}

static void test_service_defaults(void **state)
{
    (void)state;
    json_t *s = svc_doc("apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n"
                        "  selector: {app: web}\n  ports: [{name: http, port: 80}]\n");
    t_admit_ok(s, "default");
    json_t *spec = json_object_get(s, "spec");
    assert_string_equal(JX_STR(spec, "type"), "ClusterIP");
    assert_string_equal(JX_STR(spec, "sessionAffinity"), "None");
    json_t *p = json_array_get(json_object_get(spec, "ports"), 0);
    assert_string_equal(JX_STR(p, "protocol"), "TCP");
    assert_int_equal(JX_INT(p, 0, "targetPort"), 80); /* targetPort defaults to port */
    assert_true(strncmp(jx_or_empty(JX_STR(spec, "clusterIP")), "10.96.", 6) == 0);
    assert_string_equal(json_string_value(json_array_get(JX_GET(spec, "clusterIPs"), 0)),
                        JX_STR(spec, "clusterIP"));
    json_decref(s);

    json_t *h = svc_doc("apiVersion: v1\nkind: Service\nmetadata: {name: h}\nspec:\n"
                        "  clusterIP: None\n  selector: {app: web}\n");
    t_admit_ok(h, "default"); /* headless: ports may be empty */
    assert_string_equal(JX_STR(h, "spec", "clusterIP"), "None");
    json_decref(h);

    json_t *n = svc_doc("apiVersion: v1\nkind: Service\nmetadata: {name: named}\nspec:\n"
                        "  ports: [{name: gcs-server, port: 6379, targetPort: gcs-server}]\n");
    t_admit_ok(n, "default"); /* targetPort by name */
    json_decref(n);
}

static void expect_err(const char *yaml, const char *want)
{
    json_t *s = svc_doc(yaml);
    int rc;
    char *msg = t_admit_err(s, "default", &rc);
    assert_int_equal(rc, CU_EINVAL);
    assert_has(msg, want);
    xfree(msg);
    json_decref(s);
}

static void test_service_errors_name_the_field(void **state)
{
    (void)state;
    /* the spec's fields after "spec:\n", and what the error must say */
    static const struct {
        const char *spec, *want;
    } cases[] = {
        {"  selector: {app: x}\n", "spec.ports: Required value"},
        {"  ports: [{port: 80}, {port: 81}]\n", "spec.ports[1].name: Required value"},
        {"  ports: [{name: a, port: 80}, {name: a, port: 81}]\n",
         "spec.ports[1].name: Duplicate value: \"a\""},
        {"  ports: [{name: a, port: 80, targetPort: Bad_Name}]\n",
         "spec.ports[0].targetPort: Invalid value: \"Bad_Name\""},
        {"  ports: [{name: a, port: 80, targetPort: 0}]\n",
         "spec.ports[0].targetPort: Invalid value: 0"},
        {"  ports: [{name: a, port: 70000}]\n", "spec.ports[0].port"},
        {"  type: NodePort\n  ports: [{port: 80}]\n",
         "spec.type: Unsupported value: \"NodePort\""},
        {"  selector: {'bad key!': x}\n  ports: [{port: 80}]\n", "spec.selector[bad key!]"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char y[512];
        snprintf(y, sizeof(y), "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n%s",
                 cases[i].spec);
        expect_err(y, cases[i].want);
    }
}

static void test_endpoints_and_slices(void **state)
{
    (void)state;
    json_t *e = svc_doc("apiVersion: v1\nkind: Endpoints\nmetadata: {name: web}\nsubsets:\n"
                        "- addresses: [{ip: 127.0.0.1}]\n  ports: [{name: http, port: 8000}]\n");
    t_admit_ok(e, "default");
    json_decref(e);
    expect_err("apiVersion: v1\nkind: Endpoints\nmetadata: {name: web}\nsubsets:\n"
               "- addresses: [{hostname: x}]\n",
               "subsets[0].addresses[0].ip: Required value");
    json_t *sl = svc_doc("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\n"
                         "metadata: {name: web-1}\naddressType: IPv4\n"
                         "endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}}]\n"
                         "ports: [{name: http, port: 8000}]\n");
    t_admit_ok(sl, "default");
    json_decref(sl);
    expect_err("apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: w}\n"
               "addressType: IPv9\n",
               "addressType: Unsupported value: \"IPv9\"");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_service_defaults),
        cmocka_unit_test(test_service_errors_name_the_field),
        cmocka_unit_test(test_endpoints_and_slices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
