/* Unit tests of the server's patch functions (JSON merge patch, strategic
 * merge patch with schema and table merge keys and directives, JSON patch). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "api/patch.h"
#include "api/schema.h"
#include "server/srv-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
    if (!v)
        fail_msg("bad test JSON: %s: %s", text, e.text);
    return v;
}

/* Compare canonical (sorted-key) texts so failures print both sides. */
static void assert_json(const json_t *got, const char *want)
{
    json_t *w = J(want);
    char *a = jx_dumps_sorted(got), *b = jx_dumps_sorted(w);
    assert_string_equal(a, b);
    xfree(a);
    xfree(b);
    json_decref(w);
}

static void test_merge_patch_rfc7386(void **state)
{
    (void)state;
    json_t *t = J("{\"a\":\"b\",\"c\":{\"d\":\"e\",\"f\":\"g\"},\"l\":[1,2]}");
    json_t *p = J("{\"a\":\"z\",\"c\":{\"f\":null},\"l\":[3],\"n\":{\"x\":null}}");
    json_t *out = api_merge_patch(t, p);
    assert_json(out, "{\"a\":\"z\",\"c\":{\"d\":\"e\"},\"l\":[3],\"n\":{}}");
    /* the input is not modified */
    assert_json(t, "{\"a\":\"b\",\"c\":{\"d\":\"e\",\"f\":\"g\"},\"l\":[1,2]}");
    json_decref(out);
    json_decref(p);
    p = J("[1]");
    out = api_merge_patch(t, p);
    assert_json(out, "[1]"); /* a non-object patch replaces the target */
    json_decref(out);
    json_decref(p);
    json_decref(t);
}

static json_t *smp(const json_t *target, const char *patch, const struct api_schema *root)
{
    json_t *p = J(patch);
    char err[256] = "";
    json_t *out = api_strategic_merge_patch(root, target, p, err, sizeof(err));
    json_decref(p);
    return out;
}

static const char *JOB =
    "{\"spec\":{\"parallelism\":1,\"template\":{\"spec\":{\"containers\":["
    "{\"name\":\"main\",\"image\":\"busybox:1.36\",\"args\":[\"a\"],"
    "\"env\":[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\",\"value\":\"2\"}],"
    "\"ports\":[{\"containerPort\":80,\"name\":\"http\"}]},"
    "{\"name\":\"side\",\"image\":\"busybox:1.36\"}]}}}}";

/* kubectl's own patch for an image change (kubectl.md §6.2), merged by the
 * schema's keys and by the fallback table alike */
static void test_smp_containers_by_name(void **state)
{
    (void)state;
    const struct api_schema *roots[2] = {api_schema_for_kind(KIND_JOB), NULL};
    for (int i = 0; i < 2; i++) {
        json_t *t = J(JOB);
        json_t *out = smp(t,
                          "{\"spec\":{\"parallelism\":2,\"template\":{\"spec\":{"
                          "\"$setElementOrder/containers\":[{\"name\":\"main\"},{\"name\":\"side\"}],"
                          "\"containers\":[{\"image\":\"busybox:1.37\",\"name\":\"main\"}]}}}}",
                          roots[i]);
        assert_non_null(out);
        json_t *cs = JX_GET(out, "spec", "template", "spec", "containers");
        assert_int_equal(json_array_size(cs), 2);
        assert_string_equal(JX_STR(json_array_get(cs, 0), "image"), "busybox:1.37");
        assert_string_equal(JX_STR(json_array_get(cs, 1), "name"), "side");
        assert_non_null(JX_GET(json_array_get(cs, 0), "args"));
        assert_int_equal(JX_INT(out, 0, "spec", "parallelism"), 2);
        json_decref(out);
        json_decref(t);
    }
}

static void test_smp_nested_keys_and_delete(void **state)
{
    (void)state;
    json_t *t = J(JOB);
    json_t *out = smp(t,
                      "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"main\","
                      "\"env\":[{\"name\":\"B\",\"$patch\":\"delete\"},{\"name\":\"C\",\"value\":\"3\"}],"
                      "\"ports\":[{\"containerPort\":80,\"protocol\":\"TCP\"}]},"
                      "{\"name\":\"side\",\"$patch\":\"delete\"}]}}}}",
                      NULL);
    assert_non_null(out);
    json_t *cs = JX_GET(out, "spec", "template", "spec", "containers");
    assert_int_equal(json_array_size(cs), 1);
    json_t *main = json_array_get(cs, 0);
    assert_json(JX_GET(main, "env"), "[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"C\",\"value\":\"3\"}]");
    /* ports inside containers merge by containerPort */
    assert_json(JX_GET(main, "ports"), "[{\"containerPort\":80,\"name\":\"http\",\"protocol\":\"TCP\"}]");
    json_decref(out);
    json_decref(t);
}

static void test_smp_directives(void **state)
{
    (void)state;
    json_t *t = J("{\"data\":{\"a\":\"1\",\"b\":\"2\"},\"metadata\":{\"finalizers\":[\"x\"]},"
                  "\"spec\":{\"l\":[1,2],\"m\":{\"k\":1}}}");
    json_t *out = smp(t, "{\"data\":{\"$retainKeys\":[\"b\"],\"b\":\"3\"}}", NULL);
    assert_json(JX_GET(out, "data"), "{\"b\":\"3\"}");
    json_decref(out);
    out = smp(t, "{\"spec\":{\"m\":{\"$patch\":\"replace\",\"z\":2}}}", NULL);
    assert_json(JX_GET(out, "spec", "m"), "{\"z\":2}");
    json_decref(out);
    out = smp(t, "{\"spec\":{\"m\":{\"$patch\":\"delete\"}}}", NULL);
    assert_null(JX_GET(out, "spec", "m"));
    json_decref(out);
    /* finalizers merge as a set; other primitive lists are replaced */
    out = smp(t, "{\"metadata\":{\"finalizers\":[\"y\",\"x\"]},\"spec\":{\"l\":[3]}}", NULL);
    assert_json(JX_GET(out, "metadata", "finalizers"), "[\"x\",\"y\"]");
    assert_json(JX_GET(out, "spec", "l"), "[3]");
    json_decref(out);
    out = smp(t, "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"x\"]}}", NULL);
    assert_json(JX_GET(out, "metadata", "finalizers"), "[]");
    json_decref(out);
    /* a whole-document replace */
    out = smp(t, "{\"$patch\":\"replace\",\"only\":1}", NULL);
    assert_json(out, "{\"only\":1}");
    json_decref(out);
    json_decref(t);
}

static void test_smp_errors(void **state)
{
    (void)state;
    json_t *t = J(JOB);
    char err[256] = "";
    json_t *p = J("{\"metadata\":{\"$bogus\":1}}");
    assert_null(api_strategic_merge_patch(NULL, t, p, err, sizeof(err)));
    assert_non_null(strstr(err, "$bogus"));
    json_decref(p);
    p = J("{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"image\":\"x\"}]}}}}");
    assert_null(api_strategic_merge_patch(NULL, t, p, err, sizeof(err)));
    assert_non_null(strstr(err, "merge key"));
    json_decref(p);
    p = J("[1]");
    assert_null(api_strategic_merge_patch(NULL, t, p, err, sizeof(err)));
    json_decref(p);
    json_decref(t);
}

static void test_set_element_order(void **state)
{
    (void)state;
    json_t *t = J("{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]}}");
    json_t *out = smp(t, "{\"spec\":{\"$setElementOrder/containers\":[{\"name\":\"c\"},{\"name\":\"a\"}]}}",
                      NULL);
    assert_json(JX_GET(out, "spec", "containers"),
                "[{\"name\":\"c\"},{\"name\":\"a\"},{\"name\":\"b\"}]");
    json_decref(out);
    json_decref(t);
}

static void test_merge_key_table(void **state)
{
    (void)state;
    assert_string_equal(api_merge_key("spec", "containers"), "name");
    assert_string_equal(api_merge_key("containers", "ports"), "containerPort");
    assert_null(api_merge_key("spec", "ports"));
    assert_string_equal(api_merge_key(NULL, "volumeMounts"), "mountPath");
    assert_null(api_merge_key("spec", "tolerations"));
}

static json_t *jp(const json_t *t, const char *ops, char *err)
{
    json_t *o = J(ops);
    json_t *out = api_json_patch(t, o, err, 256);
    json_decref(o);
    return out;
}

static void test_json_patch(void **state)
{
    (void)state;
    char err[256];
    json_t *t = J("{\"a\":{\"b\":[1,2,3]},\"x/y\":1,\"t~\":2}");
    json_t *out = jp(t,
                     "[{\"op\":\"add\",\"path\":\"/a/b/1\",\"value\":9},"
                     "{\"op\":\"add\",\"path\":\"/a/b/-\",\"value\":4},"
                     "{\"op\":\"remove\",\"path\":\"/x~1y\"},"
                     "{\"op\":\"replace\",\"path\":\"/t~0\",\"value\":3},"
                     "{\"op\":\"copy\",\"from\":\"/a/b/0\",\"path\":\"/c\"},"
                     "{\"op\":\"move\",\"from\":\"/c\",\"path\":\"/d\"},"
                     "{\"op\":\"test\",\"path\":\"/d\",\"value\":1}]",
                     err);
    assert_non_null(out);
    assert_json(out, "{\"a\":{\"b\":[1,9,2,3,4]},\"t~\":3,\"d\":1}");
    json_decref(out);
    assert_null(jp(t, "[{\"op\":\"test\",\"path\":\"/x~1y\",\"value\":2}]", err));
    assert_null(jp(t, "[{\"op\":\"remove\",\"path\":\"/nope\"}]", err));
    assert_null(jp(t, "[{\"op\":\"replace\",\"path\":\"/a/b/7\",\"value\":1}]", err));
    assert_null(jp(t, "[{\"op\":\"frobnicate\",\"path\":\"/a\"}]", err));
    assert_null(jp(t, "{\"op\":\"add\"}", err));
    assert_non_null(strstr(err, "list"));
    /* the target is left untouched, even by a failed patch */
    assert_json(t, "{\"a\":{\"b\":[1,2,3]},\"x/y\":1,\"t~\":2}");
    json_decref(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merge_patch_rfc7386),
        cmocka_unit_test(test_smp_containers_by_name),
        cmocka_unit_test(test_smp_nested_keys_and_delete),
        cmocka_unit_test(test_smp_directives),
        cmocka_unit_test(test_smp_errors),
        cmocka_unit_test(test_set_element_order),
        cmocka_unit_test(test_merge_key_table),
        cmocka_unit_test(test_json_patch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
