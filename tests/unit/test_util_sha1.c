/* Unit tests for util/sha1.h: the hex digest is SHA-1's (FIPS 180 test
 * vectors) and sha1_u32 is the number its first 8 hex digits spell, the
 * value that ports and ClusterIPs have been drawn from. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/sha1.h"

static void test_known_digests(void **state)
{
    (void)state;
    char hex[41];
    sha1_hex("abc", 3, hex);
    assert_string_equal(hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
    sha1_hex("", 0, hex);
    assert_string_equal(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    assert_int_equal(sha1_u32("abc", 3), 0xa9993e36u);
    assert_int_equal(sha1_u32("", 0), 0xda39a3eeu);
}

static void test_u32_is_the_first_eight_hex_digits(void **state)
{
    (void)state;
    for (int i = 0; i < 200; i++) {
        char key[32], hex[41];
        int n = snprintf(key, sizeof(key), "default/job-%d", i);
        sha1_hex(key, (size_t)n, hex);
        hex[8] = '\0';
        assert_int_equal(sha1_u32(key, (size_t)n), (uint32_t)strtoul(hex, NULL, 16));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_digests),
        cmocka_unit_test(test_u32_is_the_first_eight_hex_digits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
