/* rng_uuid_skip advances the generator exactly as rng_uuid does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(uuid_skip_takes_the_draws_of_a_uuid),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
