/* Unit tests for util/hash.h: every byte counts, strings are delimited,
 * and keys that differ only in their last digits spread over buckets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "util/hash.h"

/* Changing any one byte of a key of 1 to 40 bytes changes its hash (the
 * tail reads overlap; a byte skipped there would go unnoticed). */
static void test_every_byte_is_read(void **state)
{
    (void)state;
    unsigned char key[40];
    for (size_t len = 1; len <= sizeof(key); len++) {
        for (size_t i = 0; i < len; i++)
            key[i] = (unsigned char)('a' + i % 26);
        unsigned h0 = cu_hash_bytes(key, len);
        for (size_t i = 0; i < len; i++) {
            key[i] ^= 0x01;
            assert_true(cu_hash_bytes(key, len) != h0);
            key[i] ^= 0x01;
        }
        assert_int_equal(cu_hash_bytes(key, len), h0);
    }
}

/* The length is part of the hash: a key and the same key with trailing
 * NULs differ, and so do adjacent strings split differently. */
static void test_lengths_and_string_boundaries_count(void **state)
{
    (void)state;
    const char z[8] = "ab";
    assert_true(cu_hash_bytes(z, 2) != cu_hash_bytes(z, 3));
    assert_true(cu_hash_bytes(z, 3) != cu_hash_bytes(z, 8));
    uint64_t ab_c = cu_hash_str(cu_hash_str(CU_HASH_SEED, "ab"), "c");
    uint64_t a_bc = cu_hash_str(cu_hash_str(CU_HASH_SEED, "a"), "bc");
    assert_true(ab_c != a_bc);
    /* NULL mixes as "" */
    assert_true(cu_hash_str(CU_HASH_SEED, NULL) == cu_hash_str(CU_HASH_SEED, ""));
}

/* 1,000 names like large.yaml's queues ("cq-0-17-cohort-3") fill most of
 * 1,024 buckets taken from the low bits, as random keys would (about 63%
 * for 1,000 keys); a hash without the final mix fills far fewer. */
static void test_similar_names_spread_over_low_bits(void **state)
{
    (void)state;
    static unsigned char used[1024];
    memset(used, 0, sizeof(used));
    char name[64];
    int n = 0;
    for (int c = 0; c < 10; c++)
        for (int q = 0; q < 100; q++) {
            int len = snprintf(name, sizeof(name), "cq-0-%d-cohort-%d", q, c);
            used[cu_hash_bytes(name, (size_t)len) & 1023] = 1;
        }
    for (int i = 0; i < 1024; i++)
        n += used[i];
    assert_true(n > 560); /* 55%: random keys give ~63% */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_byte_is_read),
        cmocka_unit_test(test_lengths_and_string_boundaries_count),
        cmocka_unit_test(test_similar_names_spread_over_low_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
