/*
 * Client-side apply, the pure part: the last-applied annotation kubectl
 * stores, and the three-way JSON merge patch (unchanged objects give an
 * empty patch; changed fields are set; fields dropped from the file since
 * the last apply are deleted; server-owned fields are left alone).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "cli/cli-int.h"
#include "test_cli_fixtures.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static void assert_json(const json_t *got, const char *want_text)
{
    json_t *want = J(want_text);
    if (!json_equal(got, want)) {
        char *g = jx_dumps_sorted(got);
        fail_msg("got %s\nwant %s", g, want_text);
    }
    json_decref(want);
}

static const char *DOC = "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"ResourceFlavor\","
                         "\"metadata\":{\"name\":\"default-flavor\"},"
                         "\"spec\":{\"nodeLabels\":{\"pool\":\"a\"}}}";

static void test_modified_carries_last_applied(void **state)
{
    (void)state;
    json_t *doc = J(DOC);
    json_t *m = cli__apply_modified(doc);
    const char *last = JX_STR(m, "metadata", "annotations", CLI_LAST_APPLIED);
    assert_non_null(last);
    assert_string_equal(last,
                        "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"ResourceFlavor\","
                        "\"metadata\":{\"annotations\":{},\"name\":\"default-flavor\"},"
                        "\"spec\":{\"nodeLabels\":{\"pool\":\"a\"}}}\n");
    /* the input is not modified */
    assert_null(JX_GET(doc, "metadata", "annotations"));
    json_decref(m);
    json_decref(doc);
}

static void test_user_annotations_kept_and_stale_last_applied_replaced(void **state)
{
    (void)state;
    json_t *doc = J("{\"kind\":\"X\",\"metadata\":{\"name\":\"n\",\"annotations\":{\"a\":\"1\","
                    "\"" CLI_LAST_APPLIED "\":\"old\"}}}");
    json_t *m = cli__apply_modified(doc);
    assert_string_equal(JX_STR(m, "metadata", "annotations", "a"), "1");
    assert_string_equal(JX_STR(m, "metadata", "annotations", CLI_LAST_APPLIED),
                        "{\"kind\":\"X\",\"metadata\":{\"annotations\":{\"a\":\"1\"},"
                        "\"name\":\"n\"}}\n");
    json_decref(m);
    json_decref(doc);
}

/* The live object as the server would return it after applying doc. */
static json_t *live_of(const json_t *modified)
{
    json_t *live = json_deep_copy(modified);
    JX_SET_NEW(live, json_string("abc"), "metadata", "uid");
    JX_SET_NEW(live, json_string("12"), "metadata", "resourceVersion");
    JX_SET_NEW(live, json_string("{}"), "status", "x");
    return live;
}

static void test_same_file_twice_is_unchanged(void **state)
{
    (void)state;
    json_t *doc = J(DOC);
    json_t *m = cli__apply_modified(doc);
    json_t *live = live_of(m);
    json_t *original = J(JX_STR(m, "metadata", "annotations", CLI_LAST_APPLIED));
    json_t *p = cli__apply_patch(original, m, live);
    assert_int_equal(json_object_size(p), 0);
    json_decref(p);
    json_decref(original);
    json_decref(live);
    json_decref(m);
    json_decref(doc);
}

static void test_server_canonical_forms_are_not_changes(void **state)
{
    (void)state;
    json_t *doc = J("{\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"},\"spec\":{"
                    "\"resourceGroups\":[{\"flavors\":[{\"name\":\"f\",\"resources\":["
                    "{\"name\":\"cpu\",\"nominalQuota\":10}]}]}]}}");
    json_t *m = cli__apply_modified(doc);
    json_t *live = live_of(m);
    /* the server stored the quantity as a string and defaulted a field */
    json_t *res = json_array_get(JX_GET(json_array_get(JX_GET(json_array_get(
        JX_GET(live, "spec", "resourceGroups"), 0), "flavors"), 0), "resources"), 0);
    json_object_set_new(res, "nominalQuota", json_string("10"));
    json_object_set_new(res, "borrowingLimit", json_null());
    json_t *original = J(JX_STR(m, "metadata", "annotations", CLI_LAST_APPLIED));
    json_t *p = cli__apply_patch(original, m, live);
    assert_int_equal(json_object_size(p), 0);
    json_decref(p);
    /* but a real change of the quantity is sent (the whole list) */
    json_object_set_new(res, "nominalQuota", json_string("12"));
    p = cli__apply_patch(original, m, live);
    assert_non_null(JX_GET(p, "spec", "resourceGroups"));
    json_decref(p);
    json_decref(original);
    json_decref(live);
    json_decref(m);
    json_decref(doc);
}

static void test_changed_and_removed_fields(void **state)
{
    (void)state;
    json_t *doc1 = J("{\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"},"
                     "\"spec\":{\"cohort\":\"c\",\"stopPolicy\":\"None\","
                     "\"resourceGroups\":[{\"flavors\":[{\"name\":\"f\"}]}]}}");
    json_t *m1 = cli__apply_modified(doc1);
    json_t *live = live_of(m1);
    JX_SET_NEW(live, json_string("BestEffortFIFO"), "spec", "queueingStrategy"); /* default */
    json_t *original = J(JX_STR(m1, "metadata", "annotations", CLI_LAST_APPLIED));
    /* second file: cohort changed, stopPolicy dropped, list changed */
    json_t *doc2 = J("{\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"},"
                     "\"spec\":{\"cohort\":\"d\","
                     "\"resourceGroups\":[{\"flavors\":[{\"name\":\"g\"}]}]}}");
    json_t *m2 = cli__apply_modified(doc2);
    json_t *p = cli__apply_patch(original, m2, live);
    json_t *want = json_pack("{s:{s:{s:s}},s:{s:s,s:n,s:[{s:[{s:s}]}]}}", "metadata",
                             "annotations", CLI_LAST_APPLIED,
                             JX_STR(m2, "metadata", "annotations", CLI_LAST_APPLIED), "spec",
                             "cohort", "d", "stopPolicy", "resourceGroups", "flavors", "name",
                             "g");
    assert_true(json_equal(p, want));
    /* the server's default (queueingStrategy) and status are not touched */
    assert_null(JX_GET(p, "spec", "queueingStrategy"));
    assert_null(JX_GET(p, "status"));
    json_decref(want);
    json_decref(p);
    json_decref(m2);
    json_decref(doc2);
    json_decref(original);
    json_decref(live);
    json_decref(m1);
    json_decref(doc1);
}

static void test_no_previous_apply(void **state)
{
    (void)state;
    /* object created by someone else: only the differences are sent */
    json_t *live = J("{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\",\"uid\":\"u\"},"
                     "\"data\":{\"a\":\"1\",\"b\":\"2\"}}");
    json_t *doc = J("{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"1\"}}");
    json_t *m = cli__apply_modified(doc);
    json_t *p = cli__apply_patch(NULL, m, live);
    assert_non_null(JX_STR(p, "metadata", "annotations", CLI_LAST_APPLIED));
    assert_null(JX_GET(p, "data")); /* b is kept: it was never applied */
    json_decref(p);
    json_decref(m);
    json_decref(doc);
    json_decref(live);
}

static void test_patch_deletes_only_what_live_has(void **state)
{
    (void)state;
    json_t *original = J("{\"spec\":{\"a\":1,\"gone\":2}}");
    json_t *modified = J("{\"spec\":{\"a\":1}}");
    json_t *live = J("{\"spec\":{\"a\":1}}");
    json_t *p = cli__apply_patch(original, modified, live);
    assert_int_equal(json_object_size(p), 0);
    json_decref(p);
    json_decref(live);
    live = J("{\"spec\":{\"a\":1,\"gone\":2}}");
    p = cli__apply_patch(original, modified, live);
    assert_json(p, "{\"spec\":{\"gone\":null}}");
    json_decref(p);
    json_decref(live);
    json_decref(modified);
    json_decref(original);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modified_carries_last_applied),
        cmocka_unit_test(test_user_annotations_kept_and_stale_last_applied_replaced),
        cmocka_unit_test(test_same_file_twice_is_unchanged),
        cmocka_unit_test(test_server_canonical_forms_are_not_changes),
        cmocka_unit_test(test_changed_and_removed_fields),
        cmocka_unit_test(test_no_previous_apply),
        cmocka_unit_test(test_patch_deletes_only_what_live_has),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
