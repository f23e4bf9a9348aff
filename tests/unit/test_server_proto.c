/* Unit tests of protobuf request bodies: the exact bytes kubectl 1.32 sends
 * for `create configmap c --from-literal=k=v`, `create job j --image=busybox`
 * and `create job jj --image=busybox -- sh -c 'echo hi'` (captured from
 * the real kubectl), decoded to the JSON object the JSON path would get;
 * and the refusals: a body whose undeclared field holds a value (never
 * dropped silently), another kind, a bad envelope. Regression: `kubectl
 * create job` (protobuf since 1.32) used to be refused for batch/v1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/srv-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static const char CM_PB[] =
    "6b 38 73 00 0a 0f 0a 02 76 31 12 09 43 6f 6e 66 69 67 4d 61 70 12 1b 0a 11 0a 01 63 12 00 "
    "1a 00 22 00 2a 00 32 00 38 00 42 00 12 06 0a 01 6b 12 01 76 1a 00 22 00";

static const char JOB_PB[] =
    "6b 38 73 00 0a 0f 0a 08 62 61 74 63 68 2f 76 31 12 03 4a 6f 62 12 78 0a 11 0a 01 6a 12 00 "
    "1a 00 22 00 2a 00 32 00 38 00 42 00 12 59 32 57 0a 10 0a 00 12 00 1a 00 22 00 2a 00 32 00 "
    "38 00 42 00 12 43 12 20 0a 01 6a 12 07 62 75 73 79 62 6f 78 2a 00 42 00 6a 00 72 00 80 01 "
    "00 88 01 00 90 01 00 a2 01 00 1a 05 4e 65 76 65 72 32 00 42 00 4a 00 52 00 58 00 60 00 68 "
    "00 82 01 00 8a 01 00 9a 01 00 c2 01 00 1a 08 20 00 28 00 30 00 3a 00 1a 00 22 00";

static const char JOB_CMD_PB[] =
    "6b 38 73 00 0a 0f 0a 08 62 61 74 63 68 2f 76 31 12 03 4a 6f 62 12 8b 01 0a 12 0a 02 6a 6a "
    "12 00 1a 00 22 00 2a 00 32 00 38 00 42 00 12 6b 32 69 0a 10 0a 00 12 00 1a 00 22 00 2a 00 "
    "32 00 38 00 42 00 12 55 12 32 0a 02 6a 6a 12 07 62 75 73 79 62 6f 78 1a 02 73 68 1a 02 2d "
    "63 1a 07 65 63 68 6f 20 68 69 2a 00 42 00 6a 00 72 00 80 01 00 88 01 00 90 01 00 a2 01 00 "
    "1a 05 4e 65 76 65 72 32 00 42 00 4a 00 52 00 58 00 60 00 68 00 82 01 00 8a 01 00 9a 01 00 "
    "c2 01 00 1a 08 20 00 28 00 30 00 3a 00 1a 00 22 00";

/* A Job whose container has resources (field 8) with a limit: not declared,
 * not empty. Lengths are single bytes. */
static const char JOB_RESOURCES_PB[] =
    "6b 38 73 00 0a 0f 0a 08 62 61 74 63 68 2f 76 31 12 03 4a 6f 62 12 16 "
    "0a 03 0a 01 6a "                 /* metadata {name j} */
    "12 0f 32 0d 12 0b 12 09 "        /* spec.template.spec.containers[0] */
    "0a 01 6a 42 04 0a 02 0a 00";     /* {name j, resources {limits {..}}} */

static uint8_t *unhex(const char *hex, size_t *len)
{
    uint8_t *out = xmalloc(strlen(hex) / 2 + 1);
    size_t n = 0;
    for (const char *p = hex; *p;) {
        if (*p == ' ') {
            p++;
            continue;
        }
        unsigned v;
        assert_int_equal(sscanf(p, "%2x", &v), 1);
        out[n++] = (uint8_t)v;
        p += 2;
    }
    *len = n;
    return out;
}

static json_t *decode(const char *hex, char *err, size_t errlen)
{
    size_t len;
    uint8_t *b = unhex(hex, &len);
    err[0] = '\0';
    json_t *o = srv_proto_decode(b, len, err, errlen);
    xfree(b);
    return o;
}

static void expect_json(json_t *got, const char *want)
{
    assert_non_null(got);
    char *s = jx_dumps(got);
    json_decref(got);
    assert_string_equal(s, want);
    xfree(s);
}

static void test_configmap(void **state)
{
    (void)state;
    char err[256];
    expect_json(decode(CM_PB, err, sizeof(err)),
                "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"},"
                "\"data\":{\"k\":\"v\"}}");
}

static void test_create_job(void **state)
{
    (void)state;
    char err[256];
    expect_json(decode(JOB_PB, err, sizeof(err)),
                "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"j\"},"
                "\"spec\":{\"template\":{\"metadata\":{},\"spec\":{\"containers\":[{\"name\":\"j\","
                "\"image\":\"busybox\"}],\"restartPolicy\":\"Never\"}}}}");
    expect_json(decode(JOB_CMD_PB, err, sizeof(err)),
                "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{\"name\":\"jj\"},"
                "\"spec\":{\"template\":{\"metadata\":{},\"spec\":{\"containers\":[{\"name\":\"jj\","
                "\"image\":\"busybox\",\"command\":[\"sh\",\"-c\",\"echo hi\"]}],"
                "\"restartPolicy\":\"Never\"}}}}");
}

static void test_undeclared_value_refused(void **state)
{
    (void)state;
    char err[256];
    assert_null(decode(JOB_RESOURCES_PB, err, sizeof(err)));
    assert_string_equal(err, "field 8 of Container is not supported in protobuf bodies; send the "
                             "object as JSON");
}

static void test_other_kinds_and_bad_envelopes(void **state)
{
    (void)state;
    char err[256];
    /* envelope: v1 Pod */
    assert_null(decode("6b 38 73 00 0a 09 0a 02 76 31 12 03 50 6f 64 12 00", err, sizeof(err)));
    assert_non_null(strstr(err, "not v1 \"Pod\"; send JSON"));
    assert_null(decode("6b 38 73", err, sizeof(err)));
    assert_non_null(strstr(err, "expected prefix [107 56 115 0]"));
    assert_null(decode("6b 38 73 00 0a ff", err, sizeof(err)));
    assert_string_equal(err, "malformed protobuf envelope");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_configmap),
        cmocka_unit_test(test_create_job),
        cmocka_unit_test(test_undeclared_value_refused),
        cmocka_unit_test(test_other_kinds_and_bad_envelopes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
