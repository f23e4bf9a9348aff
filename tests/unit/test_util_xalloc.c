/* xjoin: a, a separator, b; NULL reads as "". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "util/xalloc.h"

static void join_puts_the_separator_between(void **state)
{
    (void)state;
    char *k = xjoin("ns", '/', "name");
    assert_string_equal(k, "ns/name");
    xfree(k);
    k = xjoin(NULL, '\x1f', "x");
    assert_string_equal(k, "\x1fx");
    xfree(k);
    k = xjoin("a", ':', NULL);
    assert_string_equal(k, "a:");
    xfree(k);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(join_puts_the_separator_between),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
