/* Unit tests for api/names.c: Kubernetes' name rules and their messages
 * (apimachinery's IsQualifiedName, IsValidLabelValue, IsDNS1123Subdomain). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/names.h"

static void assert_starts(const char *got, const char *want)
{
    assert_non_null(got);
    assert_int_equal(strncmp(got, want, strlen(want)), 0);
}

/* A key with no prefix or one prefix reports its parts; only a key with
 * more than one '/' gets the whole "a qualified name" message. */
static void test_qualified_name_messages_name_the_part(void **state)
{
    (void)state;
    assert_null(api_check_qualified_name("app"));
    assert_null(api_check_qualified_name("example.com/My_name.1"));
    assert_starts(api_check_qualified_name("bad key!"),
                  "name part must consist of alphanumeric characters");
    assert_starts(api_check_qualified_name("example.com/-x"),
                  "name part must consist of alphanumeric characters");
    assert_starts(api_check_qualified_name("a/b/c"), "a qualified name must consist of");
    assert_string_equal(api_check_qualified_name("/x"), "prefix part must be non-empty");
    assert_string_equal(api_check_qualified_name("example.com/"), "name part must be non-empty");
    assert_starts(api_check_qualified_name("Example.com/x"), "prefix part ");
    char long_name[70];
    memset(long_name, 'a', 64);
    long_name[64] = '\0';
    assert_string_equal(api_check_qualified_name(long_name),
                        "name part must be no more than 63 characters");
}

static void test_label_values(void **state)
{
    (void)state;
    assert_null(api_check_label_value(""));
    assert_null(api_check_label_value("tpu-v6e-slice"));
    assert_non_null(api_check_label_value("-x"));
    assert_non_null(api_check_label_value("a b"));
}

static void test_path_dotdot_elements(void **state)
{
    (void)state;
    const char *const escape[] = {"..", "../x", "x/..", "x/../y", "/a/../b"};
    for (size_t i = 0; i < sizeof(escape) / sizeof(*escape); i++)
        assert_true(api_path_has_dotdot(escape[i]));
    const char *const stay[] = {"", "x", "..x", "x..", "a/..b/c", "/a/b", "."};
    for (size_t i = 0; i < sizeof(stay) / sizeof(*stay); i++)
        assert_false(api_path_has_dotdot(stay[i]));
    assert_false(api_path_has_dotdot(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_qualified_name_messages_name_the_part),
        cmocka_unit_test(test_label_values),
        cmocka_unit_test(test_path_dotdot_elements),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
