/* Unit tests for util/timefmt: RFC 3339 round trips and kubectl-style ages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/err.h"
#include "util/rng.h"
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

/* The calendar arithmetic gives libc's answers: formatting equals
 * gmtime_r + strftime, parsing equals timegm (including its carry of a day
 * past the month's end and of second 60), over many generated instants from
 * year 1 to past 9999, before and after the epoch. */
static void test_rfc3339_agrees_with_libc_calendar(void **state)
{
    (void)state;
    struct rng r;
    rng_seed(&r, 7);
    const int64_t lo = -62135596800000LL, span = 400000000000000LL - lo;
    for (int i = 0; i < 100000; i++) {
        int64_t ms = lo + (int64_t)rng_below(&r, (uint64_t)span);
        if (i % 4 == 0) /* near the epoch and near day boundaries */
            ms = (int64_t)rng_below(&r, 4000000000ULL) - 2000000000LL;
        time_t secs = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
        struct tm tm;
        assert_non_null(gmtime_r(&secs, &tm));
        char want[TIMEFMT_LEN + 8], got[TIMEFMT_LEN];
        size_t n = strftime(want, TIMEFMT_LEN, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(want + n, sizeof(want) - n, ".%03dZ", (int)(ms - (int64_t)secs * 1000));
        assert_string_equal(timefmt_rfc3339(ms, true, got), want);
    }
    for (int i = 0; i < 100000; i++) {
        struct tm tm = {0};
        int Y = (int)rng_below(&r, 10000), M = 1 + (int)rng_below(&r, 12);
        int D = 1 + (int)rng_below(&r, 31), h = (int)rng_below(&r, 24);
        int mi = (int)rng_below(&r, 60), sec = (int)rng_below(&r, 61);
        int oh = (int)rng_below(&r, 24), om = (int)rng_below(&r, 60);
        bool west = rng_below(&r, 2);
        char text[64];
        snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d%c%02d:%02d", Y, M, D, h, mi,
                 sec, west ? '-' : '+', oh, om);
        tm.tm_year = Y - 1900;
        tm.tm_mon = M - 1;
        tm.tm_mday = D;
        tm.tm_hour = h;
        tm.tm_min = mi;
        tm.tm_sec = sec;
        int64_t want = ((int64_t)timegm(&tm) - (west ? -1 : 1) * (oh * 60 + om) * 60LL) * 1000;
        int64_t got = 0;
        assert_int_equal(timefmt_parse(text, &got), 0);
        if (got != want)
            fail_msg("%s: %lld, timegm says %lld", text, (long long)got, (long long)want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rfc3339_round_trip_keeps_milliseconds),
        cmocka_unit_test(test_rfc3339_rejects_malformed_times),
        cmocka_unit_test(test_age_prints_like_kubectl),
        cmocka_unit_test(test_rfc3339_agrees_with_libc_calendar),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
