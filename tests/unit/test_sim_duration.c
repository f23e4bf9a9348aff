/* Unit tests for the simulator's durations (its range over the one parser,
 * util/duration.h, tested whole in test_util_duration.c), trace time format
 * and percentiles (src/sim/duration.c, summary.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sim/sim-int.h"
#include "util/err.h"

static int64_t dur(const char *s)
{
    int64_t ms = -1;
    assert_int_equal(sim_duration_ms(s, &ms), 0);
    return ms;
}

static void test_durations_accept_every_unit(void **state)
{
    (void)state;
    assert_int_equal(dur("200ms"), 200);
    assert_int_equal(dur("1.5s"), 1500);
    assert_int_equal(dur("10m"), 600000);
    assert_int_equal(dur("2h"), 7200000);
    assert_int_equal(dur("1d"), 86400000);
    assert_int_equal(dur("1h30m"), 5400000);
    assert_int_equal(dur("1m0.5s"), 60500);
    assert_int_equal(dur("30"), 30000);
    assert_int_equal(dur("0.1"), 100);
    assert_int_equal(dur("0s"), 0);
    assert_int_equal(dur(".5s"), 500);
}

static void test_bad_durations_are_rejected(void **state)
{
    (void)state;
    static const char *const bad[] = {"", "s", "10x", "-1s", "1e3s", "10 s", "1h-5m", "ms",
                                      "0x10", "1.2.3s", "5mss"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t ms = 7;
        assert_int_equal(sim_duration_ms(bad[i], &ms), CU_EINVAL);
        assert_int_equal(ms, 7);
    }
}

/* Regression: durations past the limit were reported as malformed or
 * negative; now CU_ELIMIT. Exponents ("1e300s") are not durations. */
static void test_durations_past_the_limit_are_too_large(void **state)
{
    (void)state;
    assert_int_equal(dur("36500d"), SIM_MAX_DURATION_MS);
    static const char *const big[] = {"36500d1ms", "99999999999d", "3153600000001ms",
                                      "99999999999999999999"};
    for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
        int64_t ms = 7;
        assert_int_equal(sim_duration_ms(big[i], &ms), CU_ELIMIT);
        assert_int_equal(ms, 7);
    }
    /* an exponent is malformed, not "too large" */
    int64_t ms;
    assert_int_equal(sim_duration_ms("1e3s", &ms), CU_EINVAL);
    assert_int_equal(sim_duration_ms("1e300s", &ms), CU_EINVAL);
    struct diag d;
    diag_init(&d);
    json_t *v = json_string("99999999999d");
    assert_int_equal(sim_duration_json(v, "spec.defaultRuntime", &ms, &d), CU_EINVAL);
    json_decref(v);
    v = json_real(-0.5);
    assert_int_equal(sim_duration_json(v, "spec.until", &ms, &d), CU_EINVAL);
    json_decref(v);
    v = json_string("-1m");
    assert_int_equal(sim_duration_json(v, "spec.at", &ms, &d), CU_EINVAL);
    json_decref(v);
    v = json_string("1e3s");
    assert_int_equal(sim_duration_json(v, "spec.x", &ms, &d), CU_EINVAL);
    json_decref(v);
    assert_int_equal(d.n, 4);
    assert_string_equal(d.items[0].detail, "too large: at most 36500d (100 years)");
    assert_string_equal(d.items[1].detail, "must not be negative");
    assert_string_equal(d.items[2].detail, "must not be negative");
    assert_non_null(strstr(d.items[3].detail, "must be a duration such as"));
    diag_release(&d);
}

static void test_duration_from_json_names_the_field(void **state)
{
    (void)state;
    struct diag d;
    diag_init(&d);
    int64_t ms = 0;
    json_t *n = json_real(2.5);
    assert_int_equal(sim_duration_json(n, "spec.x", &ms, &d), 0);
    assert_int_equal(ms, 2500);
    json_decref(n);
    json_t *bad = json_string("soon");
    assert_int_equal(sim_duration_json(bad, "spec.actions[1].at", &ms, &d), CU_EINVAL);
    json_decref(bad);
    json_t *neg = json_integer(-3);
    assert_int_equal(sim_duration_json(neg, "spec.until", &ms, &d), CU_EINVAL);
    json_decref(neg);
    assert_int_equal(d.n, 2);
    assert_string_equal(d.items[0].field, "spec.actions[1].at");
    assert_string_equal(d.items[0].value, "\"soon\"");
    assert_string_equal(d.items[1].field, "spec.until");
    diag_release(&d);
}

static void test_seconds_print_without_float_noise(void **state)
{
    (void)state;
    char b[SIM_SECONDS_LEN];
    assert_string_equal(sim_format_seconds(12500, b), "12.5");
    assert_string_equal(sim_format_seconds(100, b), "0.1");
    assert_string_equal(sim_format_seconds(12000, b), "12");
    assert_string_equal(sim_format_seconds(0, b), "0");
    assert_string_equal(sim_format_seconds(1, b), "0.001");
    assert_string_equal(sim_format_seconds(61010, b), "61.01");
    assert_string_equal(sim_format_seconds(-1500, b), "-1.5");
    assert_string_equal(sim_format_seconds(604800000, b), "604800");
}

static void test_percentiles_are_nearest_rank(void **state)
{
    (void)state;
    double v[10];
    for (int i = 0; i < 10; i++)
        v[i] = i + 1;
    assert_true(sim_percentile(v, 10, 50) == 5);
    assert_true(sim_percentile(v, 10, 90) == 9);
    assert_true(sim_percentile(v, 10, 99) == 10);
    assert_true(sim_percentile(v, 10, 0) == 1);
    assert_true(sim_percentile(v, 1, 99) == 1);
    assert_true(sim_percentile(v, 0, 50) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_durations_accept_every_unit),
        cmocka_unit_test(test_bad_durations_are_rejected),
        cmocka_unit_test(test_durations_past_the_limit_are_too_large),
        cmocka_unit_test(test_duration_from_json_names_the_field),
        cmocka_unit_test(test_seconds_print_without_float_noise),
        cmocka_unit_test(test_percentiles_are_nearest_rank),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
