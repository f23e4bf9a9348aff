/* Unit tests for util/duration.c, the one duration parser: Go's
 * time.ParseDuration grammar (as Kubernetes and Kueue use it) plus bare
 * seconds and days. One table: text, expected result code, nanoseconds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "util/duration.h"
#include "util/err.h"

#define MS 1000000LL
#define SEC (1000 * MS)

static const struct {
    const char *text;
    int rc;
    int64_t ns;
} cases[] = {
    /* Go's grammar */
    {"0", 0, 0},
    {"-0", 0, 0},
    {"+0", 0, 0},
    {"0s", 0, 0},
    {"1ns", 0, 1},
    {"1us", 0, 1000},
    {"1\xc2\xb5s", 0, 1000}, /* U+00B5 micro sign */
    {"1\xce\xbcs", 0, 1000}, /* U+03BC Greek mu */
    {"300ms", 0, 300 * MS},
    {"1.5s", 0, 1500 * MS},
    {"10m", 0, 600 * SEC},
    {"1.5h", 0, 5400 * SEC},
    {"1h30m", 0, 5400 * SEC},
    {"-1.5h", 0, -5400 * SEC},
    {"+5s", 0, 5 * SEC},
    {"1h2m3s4ms5us6ns", 0, 3723 * SEC + 4 * MS + 5000 + 6},
    {"1m0.5s", 0, 60500 * MS},
    {".5s", 0, 500 * MS},
    {"1.s", 0, SEC},
    {"0.3333333333333333333h", 0, 1199999999999},  /* digits past the 15th dropped */
    {"0.000000001s", 0, 1},
    {"0.0000000009s", 0, 0},                        /* below a nanosecond: truncated */
    {"2562047h47m16.854775807s", 0, INT64_MAX},     /* the longest */
    /* ours: days and bare seconds */
    {"7d", 0, 7 * 86400 * SEC},
    {"1.5d", 0, 129600 * SEC},
    {"30", 0, 30 * SEC},
    {"0.1", 0, 100 * MS},
    {"-2", 0, -2 * SEC},
    /* not durations */
    {"", CU_EINVAL, 0},
    {"-", CU_EINVAL, 0},
    {"s", CU_EINVAL, 0},
    {"ms", CU_EINVAL, 0},
    {".s", CU_EINVAL, 0},
    {"10x", CU_EINVAL, 0},
    {"5mss", CU_EINVAL, 0},
    {"1e3s", CU_EINVAL, 0},
    {"1e300s", CU_EINVAL, 0},
    {"0x10s", CU_EINVAL, 0},
    {"5 s", CU_EINVAL, 0},
    {" 5s", CU_EINVAL, 0},
    {"m5", CU_EINVAL, 0},
    {"1h-5m", CU_EINVAL, 0},
    {"1.2.3s", CU_EINVAL, 0},
    {"1h30", CU_EINVAL, 0},  /* a unit is needed after the first part */
    {"1.5S", CU_EINVAL, 0},  /* units are lower case */
    /* too large for int64 nanoseconds */
    {"2562047h47m16.854775808s", CU_ELIMIT, 0},
    {"2562048h", CU_ELIMIT, 0},
    {"99999999999d", CU_ELIMIT, 0},
    {"999999999999999999999h", CU_ELIMIT, 0},
    {"99999999999999999999", CU_ELIMIT, 0},
};

static void test_every_form_parses_to_its_nanoseconds(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t ns = 42;
        const char *why = NULL;
        int rc = cu_duration_parse_ns(cases[i].text, &ns, &why);
        if (rc != cases[i].rc || (!rc && ns != cases[i].ns))
            fail_msg("\"%s\": rc %d ns %lld, want rc %d ns %lld", cases[i].text, rc,
                     (long long)ns, cases[i].rc, (long long)cases[i].ns);
        if (rc) {
            assert_int_equal(ns, 42); /* untouched on error */
            assert_non_null(why);
        }
    }
}

static void test_milliseconds_round_to_nearest(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int64_t ms;
    } ms_cases[] = {
        {"1.5h", 5400000}, {"0.0005s", 1}, {"0.0004999s", 0}, {"1499999ns", 1},
        {"1500us", 2},     {"-1500us", -2}, {"30", 30000},      {"0", 0},
    };
    for (size_t i = 0; i < sizeof(ms_cases) / sizeof(ms_cases[0]); i++) {
        int64_t ms = 42;
        assert_int_equal(cu_duration_parse_ms(ms_cases[i].text, &ms, NULL), 0);
        assert_int_equal(ms, ms_cases[i].ms);
    }
    int64_t ms = 42;
    assert_int_equal(cu_duration_parse_ms("1x", &ms, NULL), CU_EINVAL);
    assert_int_equal(cu_duration_parse_ms(NULL, &ms, NULL), CU_EINVAL);
    assert_int_equal(ms, 42);
}

static void test_errors_name_the_rule(void **state)
{
    (void)state;
    int64_t ns;
    const char *why = NULL;
    assert_int_equal(cu_duration_parse_ns("10x", &ns, &why), CU_EINVAL);
    assert_non_null(strstr(why, "unknown unit"));
    assert_int_equal(cu_duration_parse_ns("1h30", &ns, &why), CU_EINVAL);
    assert_non_null(strstr(why, "missing unit"));
    assert_int_equal(cu_duration_parse_ns("99999999999d", &ns, &why), CU_ELIMIT);
    assert_non_null(strstr(why, "too large"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_form_parses_to_its_nanoseconds),
        cmocka_unit_test(test_milliseconds_round_to_nearest),
        cmocka_unit_test(test_errors_name_the_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
