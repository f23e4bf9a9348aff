/* rng_uuid_skip advances the generator exactly as rng_uuid does; rng_uuid
 * writes the version-4 text printf would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "util/rng.h"

static void uuid_skip_takes_the_draws_of_a_uuid(void **state)
{
    (void)state;
    struct rng a, b;
    rng_seed(&a, 7);
    rng_seed(&b, 7);
    char uuid[37];
    rng_uuid(&a, uuid);
    rng_uuid_skip(&b);
    assert_int_equal(rng_next(&a), rng_next(&b));
}

/* The digits written directly equal printf's %08x-%04x-%04x-%04x-%012llx of
 * the same two draws (version and variant bits set), over many seeds. */
static void uuid_text_is_the_printf_format_of_its_draws(void **state)
{
    (void)state;
    for (uint64_t seed = 0; seed < 20000; seed++) {
        struct rng a, b;
        rng_seed(&a, seed * 0x9e3779b97f4a7c15ULL);
        b = a;
        char got[37], want[37];
        memset(got, 'X', sizeof(got));
        rng_uuid(&a, got);
        uint64_t x = rng_next(&b), y = rng_next(&b);
        x = (x & 0xffffffffffff0fffULL) | 0x4000ULL;
        y = (y & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
        snprintf(want, sizeof(want), "%08x-%04x-%04x-%04x-%012llx", (unsigned)(x >> 32),
                 (unsigned)((x >> 16) & 0xffff), (unsigned)(x & 0xffff), (unsigned)(y >> 48),
                 (unsigned long long)(y & 0xffffffffffffULL));
        assert_string_equal(got, want);
        assert_int_equal(got[14], '4'); /* version 4 */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uuid_skip_takes_the_draws_of_a_uuid),
        cmocka_unit_test(uuid_text_is_the_printf_format_of_its_draws),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
