/* Unit tests for util/timefmt: RFC 3339 round trips and kubectl-style ages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "util/err.h"
#include "util/timefmt.h"

static void test_rfc3339_round_trip_keeps_milliseconds(void **state)
{
    (void)state;
    char buf[TIMEFMT_LEN];
    int64_t ms = 1796032800123LL; /* 2026-11-30T10:00:00.123Z */
    assert_string_equal(timefmt_rfc3339(ms, true, buf), "2026-11-30T10:00:00.123Z");
    assert_string_equal(timefmt_rfc3339(ms, false, buf), "2026-11-30T10:00:00Z");
    /* before the epoch, and years that are not four digits */
    assert_string_equal(timefmt_rfc3339(-1, true, buf), "1969-12-31T23:59:59.999Z");
    assert_string_equal(timefmt_rfc3339(253402300800000LL, false, buf), "10000-01-01T00:00:00Z");
    assert_string_equal(timefmt_rfc3339(253402300799999LL, true, buf), "9999-12-31T23:59:59.999Z");
    int64_t back = 0;
    assert_int_equal(timefmt_parse("2026-11-30T10:00:00.123Z", &back), 0);
    assert_int_equal(back, ms);
    assert_int_equal(timefmt_parse("2026-11-30T12:00:00+02:00", &back), 0);
    assert_int_equal(back, ms - 123);
}

static void test_rfc3339_rejects_malformed_times(void **state)
{
    (void)state;
    int64_t ms;
    assert_int_equal(timefmt_parse("2026-13-01T00:00:00Z", &ms), CU_EINVAL);
    assert_int_equal(timefmt_parse("2026-11-30T10:00:00", &ms), CU_EINVAL);
    assert_int_equal(timefmt_parse("2026-11-30T10:00:00.Z", &ms), CU_EINVAL);
    assert_int_equal(timefmt_parse("yesterday", &ms), CU_EINVAL);
    assert_int_equal(timefmt_parse(NULL, &ms), CU_EINVAL);
}

static void check_age(int64_t secs, const char *want)
{
    char buf[TIMEFMT_LEN];
    assert_string_equal(timefmt_age(secs * 1000, buf), want);
}

static void test_age_prints_like_kubectl(void **state)
{
    (void)state;
    check_age(-5, "0s");
    check_age(0, "0s");
    check_age(119, "119s");
    check_age(120, "2m");
    check_age(125, "2m5s");
    check_age(600, "10m");
    check_age(179 * 60, "179m");
    check_age(3 * 3600, "3h");
    check_age(3 * 3600 + 60, "3h1m");
    check_age(8 * 3600 + 60, "8h");
    check_age(47 * 3600, "47h");
    check_age(3 * 86400, "3d");
    check_age(3 * 86400 + 3600, "3d1h");
    check_age(9 * 86400 + 3600, "9d");
    check_age(800LL * 86400, "2y70d");
    check_age(3000LL * 86400, "8y");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc3339_round_trip_keeps_milliseconds),
        cmocka_unit_test(test_rfc3339_rejects_malformed_times),
        cmocka_unit_test(test_age_prints_like_kubectl),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
