/* Unit tests of util/base64: round trips of every padding length, the
 * NUL after decoded bytes, line breaks, and text that is not base64. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "util/base64.h"
#include "util/xalloc.h"

static void check_round_trip(const char *data, size_t n, const char *want_b64)
{
    char *b64 = cu_base64_encode(data, n);
    assert_string_equal(b64, want_b64);
    size_t len = 99;
    unsigned char *back = cu_base64_decode(b64, strlen(b64), &len);
    assert_non_null(back);
    assert_int_equal(len, n);
    assert_memory_equal(back, data, n);
    assert_int_equal(back[n], '\0');
    xfree(back);
    xfree(b64);
}

static void test_round_trips(void **state)
{
    (void)state;
    check_round_trip("", 0, "");
    check_round_trip("a", 1, "YQ==");
    check_round_trip("ab", 2, "YWI=");
    check_round_trip("abc", 3, "YWJj");
    check_round_trip("-----BEGIN", 10, "LS0tLS1CRUdJTg==");
    check_round_trip("\0\xff\0", 3, "AP8A"); /* bytes, not text */
}

static void test_line_breaks_are_allowed(void **state)
{
    (void)state;
    const char *b64 = "LS0tLS1C\nRUdJTg==\n";
    size_t len = 0;
    unsigned char *out = cu_base64_decode(b64, strlen(b64), &len);
    assert_non_null(out);
    assert_int_equal(len, 10);
    assert_string_equal((char *)out, "-----BEGIN");
    xfree(out);
}

static void test_text_that_is_not_base64_is_refused(void **state)
{
    (void)state;
    static const char *const bad[] = {"YQ", "Y", "Y*==", "YQ==YQ==x", "@@@@"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        size_t len = 7;
        assert_null(cu_base64_decode(bad[i], strlen(bad[i]), &len));
        assert_int_equal(len, 7); /* untouched */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_line_breaks_are_allowed),
        cmocka_unit_test(test_text_that_is_not_base64_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
