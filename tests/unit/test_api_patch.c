/*
 * Unit tests for api_merge_patch (JSON merge patch, RFC 7386): null
 * deletes, objects merge member by member, anything else replaces; the
 * result keeps the target's member order (patched members in place, new
 * ones last), owns its containers (the target is never changed, nor
 * reachable through the result).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "api/patch.h"

/* target merged with patch, serialised in its member order */
static void assert_merges(const char *target, const char *patch, const char *want)
{
    json_t *t = json_loads(target, JSON_DECODE_ANY, NULL);
    json_t *p = json_loads(patch, JSON_DECODE_ANY, NULL);
    assert_non_null(t);
    assert_non_null(p);
    char *before = json_dumps(t, JSON_COMPACT | JSON_ENCODE_ANY);
    json_t *out = api_merge_patch(t, p);
    char *got = json_dumps(out, JSON_COMPACT | JSON_ENCODE_ANY);
    assert_string_equal(got, want);
    char *after = json_dumps(t, JSON_COMPACT | JSON_ENCODE_ANY);
    assert_string_equal(after, before); /* the target is left as it was */
    free(after);
    free(got);
    free(before);
    json_decref(out);
    json_decref(t);
    json_decref(p);
}

/* RFC 7386's rules case by case (section 2), and what a patch does to a null or
 * non-object target: {target, patch, result}. */
static const char *const CASES[][3] = {
    {"{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
    {"{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}"},
    {"{\"a\":\"b\"}", "{\"a\":null}", "{}"},
    {"{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}"},
    {"{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}"},
    {"{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}"},
    {"{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}", "{\"a\":{\"b\":\"d\"}}"},
    {"{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}"},
    {"[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]"},
    {"{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]"},
    {"{\"a\":\"foo\"}", "null", "null"},
    {"{\"a\":\"foo\"}", "\"bar\"", "\"bar\""},
    {"{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}"},
    {"[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}"},
    {"{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}"},
    {"null", "{\"a\":1}", "{\"a\":1}"},
};

static void rfc7386_cases(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(CASES) / sizeof(CASES[0]); i++)
        assert_merges(CASES[i][0], CASES[i][1], CASES[i][2]);
}

static void member_order_is_the_targets(void **state)
{
    (void)state;
    assert_merges("{\"z\":1,\"m\":{\"y\":1,\"x\":2},\"a\":3,\"d\":4}",
                  "{\"n\":5,\"m\":{\"x\":9,\"w\":0},\"z\":null,\"a\":7}",
                  "{\"m\":{\"y\":1,\"x\":9,\"w\":0},\"a\":7,\"d\":4,\"n\":5}");
}

static void result_owns_its_containers(void **state)
{
    (void)state;
    json_t *t = json_loads("{\"spec\":{\"list\":[1],\"keep\":{\"k\":1}},\"meta\":{\"n\":1}}", 0,
                           NULL);
    json_t *p = json_loads("{\"spec\":{\"x\":1}}", 0, NULL);
    assert_non_null(t);
    assert_non_null(p);
    json_t *out = api_merge_patch(t, p);
    json_t *tspec = json_object_get(t, "spec"), *ospec = json_object_get(out, "spec");
    assert_ptr_not_equal(ospec, tspec);
    assert_ptr_not_equal(json_object_get(ospec, "list"), json_object_get(tspec, "list"));
    assert_ptr_not_equal(json_object_get(ospec, "keep"), json_object_get(tspec, "keep"));
    assert_ptr_not_equal(json_object_get(out, "meta"), json_object_get(t, "meta"));
    /* changing the result leaves the target alone */
    json_array_append_new(json_object_get(ospec, "list"), json_integer(2));
    assert_int_equal(json_array_size(json_object_get(tspec, "list")), 1);
    json_decref(out);
    json_decref(t);
    json_decref(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(rfc7386_cases),
        cmocka_unit_test(member_order_is_the_targets),
        cmocka_unit_test(result_owns_its_containers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
