/*
 * Server errors as kubectl prints them (spec/kubectl.md §5): NotFound and
 * AlreadyExists Status messages, Invalid with one, several or no causes,
 * "error when creating" actions, and the generic text for bodies that are
 * not a Status.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cli/cli-int.h"
#include "test_cli_fixtures.h"
#include "util/xalloc.h"

static void call_from(struct cli_call *r, long code, const char *body)
{
    cli__call_init(r);
    r->http_status = code;
    sbuf_adds(&r->body, body);
    json_error_t e;
    r->json = json_loads(body, 0, &e);
}

static void assert_text(long code, const char *body, const struct api_kind *k, const char *name,
                        const char *verb, const char *action, const char *want)
{
    struct cli_call r;
    call_from(&r, code, body);
    char *t = cli__status_text(&r, k, name, verb, action);
    assert_string_equal(t, want);
    xfree(t);
    cli__call_release(&r);
}

static void test_not_found_status(void **state)
{
    (void)state;
    const char *body =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
        "\"message\":\"clusterqueues.kueue.x-k8s.io \\\"x\\\" not found\",\"reason\":\"NotFound\","
        "\"details\":{\"name\":\"x\",\"group\":\"kueue.x-k8s.io\",\"kind\":\"clusterqueues\"},"
        "\"code\":404}";
    const struct api_kind *cq = api_kind_get(KIND_CLUSTERQUEUE);
    assert_text(404, body, cq, "x", "get", NULL,
                "Error from server (NotFound): clusterqueues.kueue.x-k8s.io \"x\" not found");
    assert_text(404, body, cq, "x", "delete", "error when deleting \"f/kueue.yaml\": ",
                "Error from server (NotFound): error when deleting \"f/kueue.yaml\": "
                "clusterqueues.kueue.x-k8s.io \"x\" not found");
    struct cli_call r;
    call_from(&r, 404, body);
    assert_string_equal(cli__status_reason(&r), "NotFound");
    cli__call_release(&r);
}

static void test_invalid_with_causes(void **state)
{
    (void)state;
    const struct api_kind *cq = api_kind_get(KIND_CLUSTERQUEUE);
    assert_text(422,
                "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Invalid\",\"code\":422,"
                "\"message\":\"ignored\",\"details\":{\"name\":\"bad-queue\",\"kind\":\"ClusterQueue\","
                "\"causes\":[{\"reason\":\"FieldValueRequired\",\"message\":\"Required value\","
                "\"field\":\"spec.resourceGroups[0].flavors\"}]}}",
                cq, "bad-queue", "post", "error when creating \"x.yaml\": ",
                "The ClusterQueue \"bad-queue\" is invalid: spec.resourceGroups[0].flavors: "
                "Required value");
    assert_text(422,
                "{\"kind\":\"Status\",\"reason\":\"Invalid\",\"code\":422,"
                "\"details\":{\"name\":\"two-errors\",\"kind\":\"ClusterQueue\",\"causes\":["
                "{\"message\":\"Required value\",\"field\":\"spec.resourceGroups[0].flavors\"},"
                "{\"message\":\"Invalid value: \\\"Bad\\\": must be lowercase\","
                "\"field\":\"spec.cohort\"}]}}",
                cq, "two-errors", "post", NULL,
                "The ClusterQueue \"two-errors\" is invalid: \n"
                "* spec.resourceGroups[0].flavors: Required value\n"
                "* spec.cohort: Invalid value: \"Bad\": must be lowercase");
    assert_text(422,
                "{\"kind\":\"Status\",\"reason\":\"Invalid\",\"code\":422,\"message\":\"dropped\","
                "\"details\":{\"name\":\"two-errors\",\"kind\":\"ClusterQueue\"}}",
                cq, "two-errors", "post", NULL, "The ClusterQueue \"two-errors\" is invalid");
}

static void test_bad_request_and_conflict(void **state)
{
    (void)state;
    const struct api_kind *cq = api_kind_get(KIND_CLUSTERQUEUE);
    assert_text(400,
                "{\"kind\":\"Status\",\"reason\":\"BadRequest\",\"code\":400,\"message\":"
                "\"ClusterQueue in version \\\"v1beta1\\\" cannot be handled as a ClusterQueue: "
                "strict decoding error: unknown field \\\"spec.foo\\\"\"}",
                cq, "q", "post", "error when creating \"q.yaml\": ",
                "Error from server (BadRequest): error when creating \"q.yaml\": ClusterQueue in "
                "version \"v1beta1\" cannot be handled as a ClusterQueue: strict decoding error: "
                "unknown field \"spec.foo\"");
    assert_text(409,
                "{\"kind\":\"Status\",\"reason\":\"AlreadyExists\",\"code\":409,\"message\":"
                "\"configmaps \\\"jax-train-script\\\" already exists\"}",
                api_kind_get(KIND_CONFIGMAP), "jax-train-script", "post", NULL,
                "Error from server (AlreadyExists): configmaps \"jax-train-script\" already exists");
}

static void test_generic_bodies(void **state)
{
    (void)state;
    const struct api_kind *cq = api_kind_get(KIND_CLUSTERQUEUE);
    assert_text(404, "404 page not found", cq, "nope", "get", NULL,
                "Error from server (NotFound): the server could not find the requested resource "
                "(get clusterqueues.kueue.x-k8s.io nope)");
    assert_text(500, "boom\nmore", cq, NULL, "list", NULL,
                "Error from server (InternalError): an error on the server (\"boom\") has "
                "prevented the request from succeeding (list clusterqueues.kueue.x-k8s.io)");
    assert_text(503, "{}", NULL, NULL, "get", NULL,
                "Error from server (ServiceUnavailable): the server is currently unable to "
                "handle the request");
}

static void test_print_unreachable_names_the_url(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    struct cli_ctx c = {0};
    c.err = open_memstream(&buf, &len);
    c.server_flag = xstrdup("http://127.0.0.1:1");
    struct cli_call r;
    cli__call_init(&r);
    r.transport = xstrdup("Failed to connect to 127.0.0.1 port 1: Connection refused");
    assert_int_equal(cli__print_call_error(&c, &r, NULL, NULL, "get", NULL), 1);
    /* said once a command: later failures (the next documents) print nothing */
    assert_int_equal(cli__print_unreachable(&c, &r), 1);
    assert_int_equal(cli__print_call_error(&c, &r, NULL, NULL, "get", NULL), 1);
    assert_true(c.unreachable);
    fclose(c.err);
    assert_non_null(strstr(buf, "error: cannot reach the cueue server at http://127.0.0.1:1 "
                                "(Failed to connect"));
    assert_ptr_equal(strchr(buf, '\n'), buf + len - 1); /* exactly one line */
    cli__call_release(&r);
    cli__ctx_release(&c);
    free(buf);
}

/* `delete` that times out says which finalizers hold the object. */
static void test_deletion_holdup(void **state)
{
    (void)state;
    const struct api_kind *rf = api_kind_get(KIND_RESOURCEFLAVOR);
    json_t *held = J("{\"metadata\":{\"name\":\"dws\",\"deletionTimestamp\":\"2025-01-01T00:00:00Z\","
                     "\"finalizers\":[\"kueue.x-k8s.io/resource-in-use\"]}}");
    json_t *cqs = J("[{\"metadata\":{\"name\":\"other\"},\"spec\":{\"resourceGroups\":[{"
                    "\"flavors\":[{\"name\":\"on-demand\"}]}]}},"
                    "{\"metadata\":{\"name\":\"cluster-queue\"},\"spec\":{\"resourceGroups\":["
                    "{\"flavors\":[{\"name\":\"default\"}]},{\"flavors\":[{\"name\":\"dws\"}]}]}}]");
    char *users = cli__in_use_by(cqs, rf, "dws");
    assert_string_equal(users, "still used by ClusterQueue cluster-queue");
    char *t = cli__deletion_holdup(rf, held, users);
    assert_string_equal(t, "resourceflavor.kueue.x-k8s.io \"dws\" is being deleted: waiting for "
                           "finalizer kueue.x-k8s.io/resource-in-use (still used by ClusterQueue "
                           "cluster-queue)");
    xfree(t);
    xfree(users);
    assert_null(cli__in_use_by(cqs, rf, "nobody-uses-me"));
    /* an AdmissionCheck is used through either spelling of the queue's checks */
    json_t *acq = J("[{\"metadata\":{\"name\":\"a\"},\"spec\":{\"admissionChecks\":[\"prov\"]}},"
                    "{\"metadata\":{\"name\":\"b\"},\"spec\":{\"admissionChecksStrategy\":{"
                    "\"admissionChecks\":[{\"name\":\"prov\",\"onFlavors\":[\"dws\"]}]}}},"
                    "{\"metadata\":{\"name\":\"c\"},\"spec\":{\"admissionChecks\":[\"other\"]}}]");
    const struct api_kind *ac = api_kind_get(KIND_ADMISSIONCHECK);
    users = cli__in_use_by(acq, ac, "prov");
    assert_string_equal(users, "still used by ClusterQueues a, b");
    xfree(users);
    assert_null(cli__in_use_by(acq, ac, "dws"));
    json_decref(acq);
    t = cli__deletion_holdup(rf, held, NULL);
    assert_string_equal(t, "resourceflavor.kueue.x-k8s.io \"dws\" is being deleted: waiting for "
                           "finalizer kueue.x-k8s.io/resource-in-use");
    xfree(t);
    json_t *two = J("{\"metadata\":{\"name\":\"c\",\"deletionTimestamp\":\"x\","
                    "\"finalizers\":[\"a/b\",\"c/d\"]}}");
    t = cli__deletion_holdup(api_kind_get(KIND_CONFIGMAP), two, "");
    assert_string_equal(t, "configmap \"c\" is being deleted: waiting for finalizers a/b, c/d");
    xfree(t);
    json_t *not_deleting = J("{\"metadata\":{\"name\":\"x\",\"finalizers\":[\"a/b\"]}}");
    assert_null(cli__deletion_holdup(rf, not_deleting, NULL));
    json_decref(not_deleting);
    json_decref(two);
    json_decref(cqs);
    json_decref(held);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_found_status),
        cmocka_unit_test(test_invalid_with_causes),
        cmocka_unit_test(test_bad_request_and_conflict),
        cmocka_unit_test(test_generic_bodies),
        cmocka_unit_test(test_print_unreachable_names_the_url),
        cmocka_unit_test(test_deletion_holdup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
