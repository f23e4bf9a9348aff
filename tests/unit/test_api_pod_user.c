/*
 * test_api_pod_user: who a container runs as (api_pod_run_as): the
 * container's runAsUser/runAsGroup over the pod's over the server's
 * default; uid/gid 0 only with allow_root; a server that is not root
 * refuses ids other than its own; groups from fsGroup and
 * supplementalGroups; ranges. And admission (api_admit_in) names the field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/object.h"
#include "api/schema.h"
#include "util/err.h"
#include "util/xalloc.h"

static const struct api_pod_policy root_pol = {.switch_user = true, .pod_uid = 65534,
                                               .pod_gid = 65534};

/* spec (JSON text) and its containers[i]. */
static json_t *spec_of(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    assert_non_null(v);
    return v;
}

static int run_as(const struct api_pod_policy *pol, const char *spec_text, size_t ctr,
                  struct api_run_as *out, const char **field, bool *in_ctr, char *why)
{
    json_t *spec = spec_of(spec_text);
    int rc = api_pod_run_as(pol, spec, json_array_get(json_object_get(spec, "containers"), ctr),
                            out, field, in_ctr, why, 256);
    json_decref(spec);
    return rc;
}

static bool has_group(const struct api_run_as *r, uint32_t g)
{
    for (size_t i = 0; i < r->n_groups; i++)
        if (r->groups[i] == g)
            return true;
    return false;
}

static void test_root_server_defaults_and_precedence(void **state)
{
    (void)state;
    struct api_run_as r;
    const char *field;
    bool in_ctr;
    char why[256];
    /* nothing asked: the policy's default user, never root */
    assert_int_equal(run_as(&root_pol, "{\"containers\":[{\"name\":\"a\"}]}", 0, &r, &field,
                            &in_ctr, why), 0);
    assert_true(r.switch_user);
    assert_int_equal(r.uid, 65534);
    assert_int_equal(r.gid, 65534);
    assert_int_equal(r.sandbox_gid, 65534);
    assert_true(has_group(&r, 65534));
    /* the pod's, then the container's (Kubernetes: the container wins) */
    const char *s = "{\"securityContext\":{\"runAsUser\":1234,\"runAsGroup\":5678,"
                    "\"fsGroup\":4000,\"supplementalGroups\":[7,8]},"
                    "\"containers\":[{\"name\":\"a\"},{\"name\":\"b\",\"securityContext\":"
                    "{\"runAsUser\":2345,\"runAsGroup\":6789}}]}";
    assert_int_equal(run_as(&root_pol, s, 0, &r, &field, &in_ctr, why), 0);
    assert_int_equal(r.uid, 1234);
    assert_int_equal(r.gid, 5678);
    assert_int_equal(r.sandbox_gid, 4000); /* fsGroup owns the sandbox */
    assert_true(has_group(&r, 4000) && has_group(&r, 7) && has_group(&r, 8));
    assert_int_equal(run_as(&root_pol, s, 1, &r, &field, &in_ctr, why), 0);
    assert_int_equal(r.uid, 2345);
    assert_int_equal(r.gid, 6789);
    assert_true(has_group(&r, 4000)); /* the sandbox group: every container has it */
    /* without fsGroup the pod-level runAsGroup owns the sandbox */
    assert_int_equal(run_as(&root_pol, "{\"securityContext\":{\"runAsGroup\":42},"
                            "\"containers\":[{\"name\":\"a\"}]}", 0, &r, &field, &in_ctr, why),
                     0);
    assert_int_equal(r.sandbox_gid, 42);
}

static void test_root_needs_leave(void **state)
{
    (void)state;
    struct api_run_as r;
    const char *field;
    bool in_ctr;
    char why[256];
    const char *pod0 = "{\"securityContext\":{\"runAsUser\":0},\"containers\":[{\"name\":\"a\"}]}";
    assert_int_equal(run_as(&root_pol, pod0, 0, &r, &field, &in_ctr, why), 1);
    assert_string_equal(field, "runAsUser");
    assert_false(in_ctr);
    assert_non_null(strstr(why, "--allow-root-pods"));
    const char *g0 = "{\"containers\":[{\"name\":\"a\",\"securityContext\":{\"runAsGroup\":0}}]}";
    assert_int_equal(run_as(&root_pol, g0, 0, &r, &field, &in_ctr, why), 1);
    assert_string_equal(field, "runAsGroup");
    assert_true(in_ctr);
    const char *sup0 = "{\"securityContext\":{\"supplementalGroups\":[0]},"
                       "\"containers\":[{\"name\":\"a\"}]}";
    assert_int_equal(run_as(&root_pol, sup0, 0, &r, &field, &in_ctr, why), 1);
    assert_string_equal(field, "supplementalGroups");
    /* a pod-level 0 that the container overrides is not used */
    const char *over = "{\"securityContext\":{\"runAsUser\":0},\"containers\":[{\"name\":\"a\","
                       "\"securityContext\":{\"runAsUser\":7}}]}";
    assert_int_equal(run_as(&root_pol, over, 0, &r, &field, &in_ctr, why), 0);
    assert_int_equal(r.uid, 7);
    /* with the server's leave, root */
    struct api_pod_policy allow = root_pol;
    allow.allow_root = true;
    assert_int_equal(run_as(&allow, pod0, 0, &r, &field, &in_ctr, why), 0);
    assert_int_equal(r.uid, 0);
    /* no policy (cueue sim): 0 still refused, others pass without a switch */
    assert_int_equal(run_as(NULL, pod0, 0, &r, &field, &in_ctr, why), 1);
    assert_int_equal(run_as(NULL, over, 0, &r, &field, &in_ctr, why), 0);
    assert_false(r.switch_user);
}

static void test_non_root_server(void **state)
{
    (void)state;
    struct api_pod_policy pol = {.server_uid = 1000, .server_gid = 1001};
    struct api_run_as r;
    const char *field;
    bool in_ctr;
    char why[256];
    assert_int_equal(run_as(&pol, "{\"containers\":[{\"name\":\"a\"}]}", 0, &r, &field, &in_ctr,
                            why), 0);
    assert_false(r.switch_user);
    assert_int_equal(r.uid, 1000);
    assert_int_equal(r.gid, 1001);
    /* its own ids are fine, others are not, fsGroup is ignored */
    assert_int_equal(run_as(&pol, "{\"securityContext\":{\"runAsUser\":1000,\"runAsGroup\":1001,"
                            "\"fsGroup\":5},\"containers\":[{\"name\":\"a\"}]}", 0, &r, &field,
                            &in_ctr, why), 0);
    assert_int_equal(r.n_groups, 0);
    assert_int_equal(run_as(&pol, "{\"containers\":[{\"name\":\"a\",\"securityContext\":"
                            "{\"runAsUser\":1234}}]}", 0, &r, &field, &in_ctr, why), 1);
    assert_string_equal(field, "runAsUser");
    assert_true(in_ctr);
    assert_non_null(strstr(why, "cueue server runs as uid 1000"));
}

static void test_ranges(void **state)
{
    (void)state;
    struct api_run_as r;
    const char *field;
    bool in_ctr;
    char why[256];
    assert_int_equal(run_as(&root_pol, "{\"securityContext\":{\"runAsUser\":-1},"
                            "\"containers\":[{\"name\":\"a\"}]}", 0, &r, &field, &in_ctr, why), 1);
    assert_string_equal(why, "must be between 0 and 2147483647, inclusive");
    assert_int_equal(run_as(&root_pol, "{\"securityContext\":{\"fsGroup\":4294967296},"
                            "\"containers\":[{\"name\":\"a\"}]}", 0, &r, &field, &in_ctr, why), 1);
    assert_string_equal(field, "fsGroup");
}

/* Admission names the field: the container's, or the pod's once. */
static void test_admission_field_errors(void **state)
{
    (void)state;
    const struct api_kind *k = api_kind_get(KIND_POD);
    struct api_admit_env env = {.pod_policy = &root_pol};
    json_error_t e;
    json_t *pod = json_loads("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":"
                             "\"p\"},\"spec\":{\"securityContext\":{\"runAsUser\":0},"
                             "\"containers\":[{\"name\":\"a\",\"command\":[\"id\"]},{\"name\":"
                             "\"b\",\"command\":[\"id\"],\"securityContext\":{\"runAsUser\":5,\"runAsGroup\":0}}"
                             "]}}", 0, &e);
    assert_non_null(pod);
    struct diag d;
    diag_init(&d);
    int rc = api_admit_in(k, pod, NULL, "default", &env, &d);
    assert_int_equal(rc, CU_EINVAL);
    char *msg = api_error_message(k, "p", rc, &d);
    assert_non_null(strstr(msg, "spec.securityContext.runAsUser: Forbidden: running pods as "
                                "uid 0 (root) is disallowed by cluster policy"));
    assert_non_null(strstr(msg, "spec.containers[1].securityContext.runAsGroup: Forbidden"));
    assert_null(strstr(strstr(msg, "spec.securityContext.runAsUser") + 1,
                       "spec.securityContext.runAsUser")); /* once */
    xfree(msg);
    diag_release(&d);
    json_decref(pod);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_root_server_defaults_and_precedence),
        cmocka_unit_test(test_root_needs_leave),
        cmocka_unit_test(test_non_root_server),
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_admission_field_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
