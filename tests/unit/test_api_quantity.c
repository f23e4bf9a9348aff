/*
 * test_api_quantity: resource.Quantity parsing into Kueue's units (cpu in
 * milli, everything else whole units, rounded away from zero), the errors
 * for malformed values, saturation of what int64 cannot hold, JSON inputs, and the canonical
 * format (which must parse back to the same value).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include <string.h>

#include "api/api-int.h"
#include "api/quantity.h"
#include "util/err.h"
#include "util/rng.h"
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
};

/* Every quantity Kubernetes accepts parses; what int64 cannot hold in the
 * resource's unit saturates at INT64_MAX, Kueue's Unlimited (kueue#9843:
 * nominalQuota 1E of cpu was read as 0). */
static const struct qcase saturating[] = {
    {"1E", "cpu", INT64_MAX},                  /* 10^21 milli */
    {"1E", "memory", INT64_C(1000000000000000000)}, /* fits in bytes */
    {"1Ei", "memory", INT64_C(1152921504606846976)},
    {"1Ei", "cpu", INT64_MAX},
    {"9223372036854776", "memory", INT64_C(9223372036854776)},
    {"9223372036854776", "cpu", INT64_MAX},
    {"10Ei", "memory", INT64_MAX},
    {"9223372036854775808", "memory", INT64_MAX},
    {"9223372036854775.808", "cpu", INT64_MAX},
    {"1e100000", "memory", INT64_MAX},
    {"100000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
     "memory", INT64_MAX},
    {"-10Ei", "memory", -INT64_MAX},
    {"1e-100000", "memory", 1}, /* rounded away from zero, as Value() does */
};

static void test_parse_saturates_what_int64_cannot_hold(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(saturating) / sizeof(saturating[0]); i++) {
        int64_t v = 7;
        char err[256] = "";
        int rc = api_quantity_parse(saturating[i].text, saturating[i].resource, &v, err, sizeof(err));
        if (rc != 0 || v != saturating[i].want)
            fprintf(stderr, "case '%s' %s: rc %d v %" PRId64 " err '%s'\n", saturating[i].text,
                    saturating[i].resource, rc, v, err);
        assert_int_equal(rc, 0);
        assert_true(v == saturating[i].want);
    }
}

static void test_parse_rejects_malformed(void **state)
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

/* The fast path agrees with the general parser wherever it answers, over
 * many generated texts (signs, leading zeros, fractions, every suffix, some
 * not suffixes, values near int64's edge), and declines what it must. */
static void test_fast_path_matches_general_parser(void **state)
{
    (void)state;
    static const char *const sfx[] = {"",   "",   "",   "m",  "k",  "M",  "G",  "T",  "P",
                                      "E",  "n",  "u",  "Ki", "Mi", "Gi", "Ti", "Pi", "Ei",
                                      "K",  "ki", "mi", "i",  "e3", "E2", "Ki2", "x"};
    static const char *const sign[] = {"", "", "+", "-"};
    static const int exps[] = {0, 3, 9};
    struct rng r;
    rng_seed(&r, 42);
    int fast = 0, n = 200000;
    for (int i = 0; i < n; i++) {
        char text[64];
        size_t k = 0;
        const char *sg = sign[rng_below(&r, 4)];
        memcpy(text + k, sg, strlen(sg));
        k += strlen(sg);
        int nint = (int)(rng_below(&r, 4) ? rng_below(&r, 12) : rng_below(&r, 21));
        int nfrac = (int)rng_below(&r, 8) - 5; /* mostly no fraction */
        for (int j = 0; j < nint; j++)
            text[k++] = (char)('0' + (rng_below(&r, 3) ? rng_below(&r, 10) : 0));
        if (nfrac >= 0) {
            text[k++] = '.';
            for (int j = 0; j < nfrac; j++)
                text[k++] = (char)('0' + rng_below(&r, 10));
        }
        const char *sf = sfx[rng_below(&r, sizeof(sfx) / sizeof(sfx[0]))];
        memcpy(text + k, sf, strlen(sf) + 1);
        int e = exps[rng_below(&r, 3)];
        int64_t q = 12345, g = 54321;
        bool ok = api__quantity_quick(text, e, &q);
        int rc = api__quantity_parse_general(text, e, &g);
        if (ok) {
            fast++;
            if (rc != 0 || g != q)
                fail_msg("%s (10^%d): fast %lld, general rc %d value %lld", text, e,
                         (long long)q, rc, (long long)g);
        } else {
            assert_true(q == 12345); /* nothing written when declining */
        }
    }
    assert_true(fast > n / 4); /* the comparison above really ran */

    int64_t v = 0;
    assert_true(api__quantity_quick("4Gi", 0, &v) && v == 4294967296LL);
    assert_true(api__quantity_quick("500m", 3, &v) && v == 500);
    assert_true(api__quantity_quick("500m", 0, &v) && v == 1); /* rounds up */
    assert_true(api__quantity_quick("-1.5", 0, &v) && v == -2); /* away from zero */
    assert_true(api__quantity_quick("1E", 0, &v) && v == 1000000000000000000LL); /* exa */
    assert_true(api__quantity_quick("922337203685477580", 0, &v) && v == 922337203685477580LL);
    static const char *const declined[] = {"5.",   ".5", "1e3", "1ki", "1K",  "1Ei2", "",
                                           "abc",  "+",  "1..2", "9223372036854775807",
                                           "9100000000000000Ki", "9000000000000000000", "1 "};
    for (size_t i = 0; i < sizeof(declined) / sizeof(declined[0]); i++)
        assert_false(api__quantity_quick(declined[i], 0, &v));
    assert_false(api__quantity_quick("9223372036854775", 6, &v)); /* overflow goes the slow way */
    assert_int_equal(api_quantity_parse("9223372036854775", "x", &v, NULL, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_valid_quantities_in_kueue_units),
        cmocka_unit_test(test_parse_rejects_malformed),
        cmocka_unit_test(test_parse_saturates_what_int64_cannot_hold),
        cmocka_unit_test(test_only_cpu_is_milli),
        cmocka_unit_test(test_from_json_numbers_and_strings),
        cmocka_unit_test(test_format_is_canonical_and_round_trips),
        cmocka_unit_test(test_fast_path_matches_general_parser),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
