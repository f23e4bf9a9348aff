/*
 * kq_quantity_value (ctrl/kueue_util.c): the plain-integer shortcut gives
 * what the general quantity parser gives, in the resource's units (cpu in
 * milli-units), and every other form still goes through the parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "api/quantity.h"
#include "ctrl/kueue_int.h"

/* kq_quantity_value of the JSON string text, checked against the parser. */
static int64_t value_of(const char *text, const char *resource)
{
    json_t *v = json_string(text);
    int64_t got = kq_quantity_value(v, resource);
    json_decref(v);
    int64_t want = 0;
    if (api_quantity_parse(text, resource, &want, NULL, 0) != 0)
        want = 0;
    assert_int_equal(got, want);
    return got;
}

static void plain_integers_match_the_parser(void **state)
{
    (void)state;
    assert_int_equal(value_of("1", "cpu"), 1000);
    assert_int_equal(value_of("20", "cpu"), 20000);
    assert_int_equal(value_of("20", "memory"), 20);
    assert_int_equal(value_of("0", "nvidia.com/gpu"), 0);
    assert_int_equal(value_of("007", "cpu"), 7000);
    assert_int_equal(value_of("999999999999999", "cpu"), INT64_C(999999999999999000));
    /* 16 digits and more: the parser's (here: too large in milli-units) */
    assert_int_equal(value_of("9999999999999999", "memory"), INT64_C(9999999999999999));
    assert_int_equal(value_of("99999999999999999999", "cpu"), 0);
}

static void other_forms_go_through_the_parser(void **state)
{
    (void)state;
    assert_int_equal(value_of("500m", "cpu"), 500);
    assert_int_equal(value_of("2Gi", "memory"), INT64_C(2147483648));
    assert_int_equal(value_of("1.5", "cpu"), 1500);
    assert_int_equal(value_of("+3", "cpu"), 3000);
    assert_int_equal(value_of("-3", "memory"), -3);
    assert_int_equal(value_of("", "cpu"), 0);
    assert_int_equal(value_of("12x", "cpu"), 0);
    json_t *n = json_integer(4);
    assert_int_equal(kq_quantity_value(n, "cpu"), 4000);
    json_decref(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_integers_match_the_parser),
        cmocka_unit_test(other_forms_go_through_the_parser),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
