/* sbuf_addf: formatted appends that fit the room already allocated, that
 * need the buffer to grow, and that would pass the cap (refused, the
 * content left as it was and still NUL-terminated). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/err.h"
#include "util/sbuf.h"

static void addf_appends_in_place_and_when_growing(void **state)
{
    (void)state;
    struct sbuf sb;
    sbuf_init(&sb, 0);
    assert_int_equal(sbuf_addf(&sb, "%s=%d", "a", 1), 0);
    assert_int_equal(sbuf_addf(&sb, ",%s", "b"), 0);
    assert_string_equal(sb.buf, "a=1,b");
    assert_int_equal(sb.len, 5);
    /* longer than the initial allocation: grows and formats again */
    char big[300];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(sbuf_addf(&sb, "[%s]", big), 0);
    assert_int_equal(sb.len, 5 + 2 + 299);
    assert_int_equal(sb.buf[5], '[');
    assert_int_equal(sb.buf[sb.len - 1], ']');
    assert_int_equal(sb.buf[sb.len], '\0');
    assert_int_equal(strlen(sb.buf), sb.len);
    sbuf_release(&sb);
}

static void addf_past_the_cap_changes_nothing(void **state)
{
    (void)state;
    struct sbuf sb;
    sbuf_init(&sb, 8); /* the cap is below the first allocation */
    assert_int_equal(sbuf_addf(&sb, "%s", "abc"), 0);
    assert_int_equal(sbuf_addf(&sb, "%s", "defgh1"), CU_ELIMIT);
    assert_string_equal(sb.buf, "abc");
    assert_int_equal(sb.len, 3);
    assert_int_equal(sbuf_addf(&sb, "%d", 12345), 0);
    assert_string_equal(sb.buf, "abc12345");
    assert_int_equal(sbuf_addf(&sb, "%c", 'z'), CU_ELIMIT);
    assert_string_equal(sb.buf, "abc12345");
    sbuf_release(&sb);

    sbuf_init(&sb, 100); /* a text that needs growth and passes the cap */
    assert_int_equal(sbuf_addf(&sb, "%s", "start"), 0);
    char big[200];
    memset(big, 'y', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    assert_int_equal(sbuf_addf(&sb, "%s", big), CU_ELIMIT);
    assert_string_equal(sb.buf, "start");
    assert_int_equal(sb.len, 5);
    sbuf_release(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(addf_appends_in_place_and_when_growing),
        cmocka_unit_test(addf_past_the_cap_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
