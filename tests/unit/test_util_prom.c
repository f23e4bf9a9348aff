/* Unit tests for util/prom.h: the Prometheus text exposition format as
 * Prometheus reads it: HELP/TYPE lines, label value escaping, histogram
 * _bucket lines cumulative with le labels and +Inf, _sum and _count,
 * series sorted by label values, values in a form that reads back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/prom.h"
#include "util/sbuf.h"

static char *written(const struct prom_vec *v)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    prom_vec_write(v, &sb);
    return sbuf_take(&sb);
}

static void test_counter_has_help_type_and_sorted_series(void **state)
{
    (void)state;
    const char *labels[] = {"cluster_queue", "reason"};
    struct prom_vec *v = prom_vec_new("kueue_evicted_workloads_total", "Evictions.\nPer queue \\ reason.",
                                      PROM_COUNTER, labels, 2, NULL, 0);
    prom_vec_add(v, (const char *[]){"b", "Preempted"}, 1);
    prom_vec_add(v, (const char *[]){"a", "PodsReadyTimeout"}, 2);
    prom_vec_add(v, (const char *[]){"b", "Preempted"}, 1);
    assert_int_equal(prom_vec_size(v), 2);
    assert_true(prom_vec_get(v, (const char *[]){"b", "Preempted"}) == 2);
    assert_true(prom_vec_get(v, (const char *[]){"c", "x"}) == 0);
    char *s = written(v);
    assert_string_equal(s, "# HELP kueue_evicted_workloads_total Evictions.\\nPer queue \\\\ reason.\n"
                           "# TYPE kueue_evicted_workloads_total counter\n"
                           "kueue_evicted_workloads_total{cluster_queue=\"a\",reason=\"PodsReadyTimeout\"} 2\n"
                           "kueue_evicted_workloads_total{cluster_queue=\"b\",reason=\"Preempted\"} 2\n");
    free(s);
    prom_vec_free(v);
}

static void test_label_values_escape_backslash_quote_newline(void **state)
{
    (void)state;
    const char *labels[] = {"name"};
    struct prom_vec *v = prom_vec_new("g", "h", PROM_GAUGE, labels, 1, NULL, 0);
    prom_vec_set(v, (const char *[]){"a\\b\"c\nd"}, 1);
    char *s = written(v);
    assert_non_null(strstr(s, "g{name=\"a\\\\b\\\"c\\nd\"} 1\n"));
    free(s);
    prom_vec_free(v);
}

static void test_histogram_buckets_are_cumulative_with_inf_sum_count(void **state)
{
    (void)state;
    const char *labels[] = {"cluster_queue"};
    const double bounds[] = {1, 2.5, 5};
    struct prom_vec *v =
        prom_vec_new("w_seconds", "Wait.", PROM_HISTOGRAM, labels, 1, bounds, 3);
    const char *cq[] = {"cq"};
    prom_vec_observe(v, cq, 0.5);
    prom_vec_observe(v, cq, 1);   /* le is inclusive */
    prom_vec_observe(v, cq, 3);
    prom_vec_observe(v, cq, 100); /* only +Inf */
    char *s = written(v);
    assert_string_equal(s, "# HELP w_seconds Wait.\n"
                           "# TYPE w_seconds histogram\n"
                           "w_seconds_bucket{cluster_queue=\"cq\",le=\"1\"} 2\n"
                           "w_seconds_bucket{cluster_queue=\"cq\",le=\"2.5\"} 2\n"
                           "w_seconds_bucket{cluster_queue=\"cq\",le=\"5\"} 3\n"
                           "w_seconds_bucket{cluster_queue=\"cq\",le=\"+Inf\"} 4\n"
                           "w_seconds_sum{cluster_queue=\"cq\"} 104.5\n"
                           "w_seconds_count{cluster_queue=\"cq\"} 4\n");
    assert_true(prom_vec_get(v, cq) == 4);
    free(s);
    prom_vec_free(v);
}

static void test_unlabelled_family_and_empty_family(void **state)
{
    (void)state;
    struct prom_vec *v = prom_vec_new("up_total", "x", PROM_COUNTER, NULL, 0, NULL, 0);
    char *s = written(v);
    assert_string_equal(s, "# HELP up_total x\n# TYPE up_total counter\n");
    free(s);
    prom_vec_add(v, NULL, 3);
    s = written(v);
    assert_non_null(strstr(s, "\nup_total 3\n"));
    free(s);
    prom_vec_free(v);
    const double b[] = {1};
    v = prom_vec_new("h", "x", PROM_HISTOGRAM, NULL, 0, b, 1);
    prom_vec_observe(v, NULL, 0.25);
    s = written(v);
    assert_non_null(strstr(s, "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 0.25\nh_count 1\n"));
    free(s);
    prom_vec_free(v);
}

static void test_values_read_back_exactly(void **state)
{
    (void)state;
    const double xs[] = {0, 1, -3, 0.1, 1.0 / 3, 17179869184.0, 1e-9, 123456789.125, 2e20};
    for (size_t i = 0; i < sizeof(xs) / sizeof(xs[0]); i++) {
        struct sbuf sb;
        sbuf_init(&sb, 0);
        prom_format_value(&sb, xs[i]);
        assert_true(strtod(sb.buf, NULL) == xs[i]);
        sbuf_release(&sb);
    }
    struct sbuf sb;
    sbuf_init(&sb, 0);
    prom_format_value(&sb, 17179869184.0);
    assert_string_equal(sb.buf, "17179869184");
    sbuf_reset(&sb);
    prom_format_value(&sb, INFINITY);
    prom_format_value(&sb, -INFINITY);
    prom_format_value(&sb, NAN);
    assert_string_equal(sb.buf, "+Inf-InfNaN");
    sbuf_release(&sb);
}

static void test_kueue_wait_bounds_match_kueue(void **state)
{
    (void)state;
    /* 1, then 2.5 doubling: 14 bounds up to 10240 s */
    assert_true(prom_kueue_wait_bounds[0] == 1);
    for (int i = 1; i < 14; i++)
        assert_true(prom_kueue_wait_bounds[i] == 2.5 * pow(2, i - 1));
    assert_true(prom_default_bounds[0] == 0.005 && prom_default_bounds[10] == 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counter_has_help_type_and_sorted_series),
        cmocka_unit_test(test_label_values_escape_backslash_quote_newline),
        cmocka_unit_test(test_histogram_buckets_are_cumulative_with_inf_sum_count),
        cmocka_unit_test(test_unlabelled_family_and_empty_family),
        cmocka_unit_test(test_values_read_back_exactly),
        cmocka_unit_test(test_kueue_wait_bounds_match_kueue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
