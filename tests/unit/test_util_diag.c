/*
 * Unit tests of diag's bound: at most DIAG_MAX_CAUSES causes are kept and
 * the rest counted, so a body with hundreds of thousands of bad items gets
 * a bounded answer (issue 13, item 8) that still says how many there were;
 * diag_count sees every cause, so "did this check find anything" stays
 * true past the cap; merges respect the cap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/diag.h"
#include "util/xalloc.h"

static void causes_past_the_cap_are_counted(void **state)
{
    (void)state;
    struct diag d;
    diag_init(&d);
    for (int i = 0; i < 1000; i++)
        diag_add(&d, DIAG_DUPLICATE, "metadata.finalizers[1]", "\"x\"", NULL);
    assert_int_equal(d.n, DIAG_MAX_CAUSES);
    assert_int_equal(d.dropped, 1000 - DIAG_MAX_CAUSES);
    assert_int_equal(diag_count(&d), 1000);
    assert_true(diag_has_errors(&d));
    assert_false(diag_has_decode_errors(&d));
    char *sum = diag_summary(&d);
    size_t len = strlen(sum);
    const char *tail = ", and 900 more errors";
    assert_true(len > strlen(tail));
    assert_string_equal(sum + len - strlen(tail), tail);
    assert_true(len < 8192);
    xfree(sum);
    json_t *causes = diag_causes_json(&d);
    assert_int_equal(json_array_size(causes), DIAG_MAX_CAUSES + 1);
    json_t *last = json_array_get(causes, DIAG_MAX_CAUSES);
    assert_string_equal(json_string_value(json_object_get(last, "reason")), "TooManyErrors");
    assert_string_equal(json_string_value(json_object_get(last, "message")),
                        "900 more errors not shown");
    json_decref(causes);
    /* a decode error past the cap still makes the whole a decode error */
    diag_add(&d, DIAG_UNKNOWN_FIELD, "spec.x", NULL, NULL);
    assert_true(diag_has_decode_errors(&d));
    diag_release(&d);
    assert_int_equal(diag_count(&d), 0);
}

static void merge_keeps_the_cap(void **state)
{
    (void)state;
    struct diag a, b;
    diag_init(&a);
    diag_init(&b);
    for (int i = 0; i < 60; i++) {
        diag_add(&a, DIAG_INVALID, "a", NULL, "bad %d", i);
        diag_add(&b, DIAG_INVALID, "b", NULL, "bad %d", i);
    }
    diag_add(&b, DIAG_INVALID, "b", NULL, NULL); /* 61 in b */
    diag_merge(&a, &b);
    assert_int_equal(a.n, DIAG_MAX_CAUSES);
    assert_int_equal(diag_count(&a), 121);
    assert_int_equal(diag_count(&b), 0);
    diag_release(&a);
    diag_release(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(causes_past_the_cap_are_counted),
        cmocka_unit_test(merge_keeps_the_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
