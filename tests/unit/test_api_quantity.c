/*
 * test_api_quantity: resource.Quantity parsing into Kueue's units (cpu in
 * milli, everything else whole units, rounded away from zero), the errors
 * for malformed and unrepresentable values, JSON inputs, and the canonical
 * format (which must parse back to the same value).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/quantity.h"
#include "util/err.h"
#include "util/xalloc.h"

struct qcase {
    const char *text, *resource;
    int64_t want;
};

static const struct qcase good[] = {
    {"500m", "cpu", 500},
    {"2", "cpu", 2000},
    {"0.5", "cpu", 500},
    {".5", "cpu", 500},
    {"5.", "cpu", 5000},
    {"+1", "cpu", 1000},
    {"0", "cpu", 0},
    {"0.0001", "cpu", 1},      /* rounds up to the next milli */
    {"1u", "cpu", 1},
    {"1e-3", "cpu", 1},
    {"1000000000", "cpu", 1000000000000LL}, /* the seed's "infinite" cpu */
    {"9223372036854775.807", "cpu", INT64_MAX},
    {"4Gi", "memory", 4294967296LL},
    {"20Gi", "memory", 21474836480LL},
    {"75Gi", "memory", 80530636800LL},
    {"1000000000Gi", "memory", 1073741824000000000LL}, /* the seed's dws memory */
    {"16Gi", "memory", 17179869184LL},
    {"1.5Gi", "memory", 1610612736LL},
    {"1Ki", "memory", 1024},
    {"1Ei", "memory", 1152921504606846976LL},
    {"100m", "memory", 1},     /* a fraction of a byte rounds up */
    {"0.5", "memory", 1},
    {"-0.5", "memory", -1},    /* away from zero, as Quantity.Value() */
    {"1k", "memory", 1000},
    {"1M", "memory", 1000000},
    {"1G", "memory", 1000000000},
    {"1T", "memory", 1000000000000LL},
    {"1P", "memory", 1000000000000000LL},
    {"1E", "memory", 1000000000000000000LL},
    {"1e3", "memory", 1000},
    {"1E3", "memory", 1000},
    {"1e+3", "memory", 1000},
    {"25e-1", "google.com/tpu", 3},
    {"4", "google.com/tpu", 4},
    {"9223372036854775807", "memory", INT64_MAX},
    {"123456789012345678901234567890e-20", "memory", 1234567891},
    {"0.000000000000000000000000000000000000000000000000001", "memory", 1},
    {"1e-100000", "memory", 1},
    {"0e100000", "memory", 0},
};

static void test_parse_valid_quantities_in_kueue_units(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        int64_t v = -42;
        char err[256];
        int rc = api_quantity_parse(good[i].text, good[i].resource, &v, err, sizeof(err));
        if (rc != 0 || v != good[i].want)
            fprintf(stderr, "case %s (%s): rc %d v %lld err %s\n", good[i].text,
                    good[i].resource, rc, (long long)v, err);
        assert_int_equal(rc, 0);
        assert_true(v == good[i].want);
    }
}

struct bad {
    const char *text, *resource, *why;
};

static const struct bad bad[] = {
    {"", "cpu", "quantities must match the regular expression"},
    {" 1", "cpu", "quantities must match the regular expression"},
    {"1 ", "cpu", "quantities must match the regular expression"},
    {"abc", "cpu", "quantities must match the regular expression"},
    {"Gi", "memory", "quantities must match the regular expression"},
    {".", "cpu", "quantities must match the regular expression"},
    {"--1", "cpu", "quantities must match the regular expression"},
    {"1.2.3", "cpu", "unable to parse numeric part of quantity"},
    {"1Kb", "memory", "quantities must match the regular expression"},
    {"1ki", "memory", "unable to parse quantity's suffix"},
    {"1Gii", "memory", "unable to parse quantity's suffix"},
    {"1e", "memory", "unable to parse quantity's suffix"},
    {"1e+", "memory", "unable to parse quantity's suffix"},
    {"1mm", "cpu", "unable to parse quantity's suffix"},
    {"10Ei", "memory", "value too large: memory is counted in whole units"},
    {"9223372036854775808", "memory", "value too large"},
    {"9223372036854775.808", "cpu", "value too large: cpu is counted in milli-units"},
    {"1e100000", "memory", "value too large"},
    {"100000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
     "memory", "value too large"},
};

static void test_parse_rejects_malformed_and_unrepresentable(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        int64_t v = 7;
        char err[256];
        int rc = api_quantity_parse(bad[i].text, bad[i].resource, &v, err, sizeof(err));
        if (rc != CU_EINVAL || !strstr(err, bad[i].why))
            fprintf(stderr, "case '%s': rc %d err '%s'\n", bad[i].text, rc, err);
        assert_int_equal(rc, CU_EINVAL);
        assert_non_null(strstr(err, bad[i].why));
        assert_true(v == 7); /* untouched on error */
    }
    /* a NULL error buffer is allowed */
    int64_t v;
    assert_int_equal(api_quantity_parse("x", "cpu", &v, NULL, 0), CU_EINVAL);
    assert_int_equal(api_quantity_parse(NULL, "cpu", &v, NULL, 0), CU_EINVAL);
}

static void test_only_cpu_is_milli(void **state)
{
    (void)state;
    assert_true(api_resource_is_milli("cpu"));
    assert_false(api_resource_is_milli("memory"));
    assert_false(api_resource_is_milli("google.com/tpu"));
    assert_false(api_resource_is_milli(NULL));
}

static void test_from_json_numbers_and_strings(void **state)
{
    (void)state;
    struct diag d;
    diag_init(&d);
    int64_t v;
    json_t *j = json_integer(10);
    assert_int_equal(api_quantity_from_json(j, "cpu", "q", &v, &d), 0);
    assert_true(v == 10000);
    json_decref(j);
    j = json_real(0.1); /* shortest text "0.1", not 0.1000000000000000055 */
    assert_int_equal(api_quantity_from_json(j, "cpu", "q", &v, &d), 0);
    assert_true(v == 100);
    json_decref(j);
    j = json_real(1e3);
    assert_int_equal(api_quantity_from_json(j, "memory", "q", &v, &d), 0);
    assert_true(v == 1000);
    json_decref(j);
    j = json_string("20Gi");
    assert_int_equal(api_quantity_from_json(j, "memory", "q", &v, &d), 0);
    assert_true(v == 21474836480LL);
    json_decref(j);
    assert_int_equal(d.n, 0);

    j = json_true();
    assert_int_equal(api_quantity_from_json(j, "cpu", "spec.x", &v, &d), CU_EINVAL);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.items[0].type, DIAG_TYPE_INVALID);
    assert_string_equal(d.items[0].field, "spec.x");
    j = json_string("1Zi");
    assert_int_equal(api_quantity_from_json(j, "memory", "spec.y", &v, &d), CU_EINVAL);
    assert_int_equal(d.n, 2);
    assert_int_equal(d.items[1].type, DIAG_INVALID);
    assert_string_equal(d.items[1].field, "spec.y");
    assert_string_equal(d.items[1].value, "\"1Zi\"");
    /* without a diag the error is only returned */
    assert_int_equal(api_quantity_from_json(j, "memory", "spec.y", &v, NULL), CU_EINVAL);
    json_decref(j);
    diag_release(&d);
}

struct fcase {
    int64_t v;
    const char *resource, *want;
};

static const struct fcase formats[] = {
    {1500, "cpu", "1500m"},
    {2000, "cpu", "2"},
    {0, "cpu", "0"},
    {-500, "cpu", "-500m"},
    {4294967296LL, "memory", "4Gi"},
    {1000, "memory", "1k"},
    {1536, "memory", "1536"},
    {1024, "memory", "1Ki"},
    {1073741824000000000LL, "memory", "1000000000Gi"},
    {-2048, "memory", "-2Ki"},
    {0, "memory", "0"},
    {4, "google.com/tpu", "4"},
    {1000000, "pods", "1M"},
    {INT64_MAX, "memory", "9223372036854775807"},
};

static void test_format_is_canonical_and_round_trips(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
        char *s = api_quantity_format(formats[i].v, formats[i].resource);
        assert_string_equal(s, formats[i].want);
        int64_t back;
        assert_int_equal(api_quantity_parse(s, formats[i].resource, &back, NULL, 0), 0);
        assert_true(back == formats[i].v);
        xfree(s);
    }
    /* round trip over a sweep of values */
    for (int64_t v = -5000; v <= 5000; v += 7) {
        for (int r = 0; r < 2; r++) {
            const char *res = r ? "cpu" : "memory";
            char *s = api_quantity_format(v, res);
            int64_t back;
            assert_int_equal(api_quantity_parse(s, res, &back, NULL, 0), 0);
            assert_true(back == v);
            xfree(s);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_valid_quantities_in_kueue_units),
        cmocka_unit_test(test_parse_rejects_malformed_and_unrepresentable),
        cmocka_unit_test(test_only_cpu_is_milli),
        cmocka_unit_test(test_from_json_numbers_and_strings),
        cmocka_unit_test(test_format_is_canonical_and_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
