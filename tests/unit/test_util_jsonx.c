/*
 * jx_deep_copy: new containers, shared scalars, the same keys in the same
 * order, and changes to the copy's containers never reach the original.
 * The inline path macros (JX_GET, JX_STR, ...) against the functions, and
 * jx_string against json_string.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "util/jsonx.h"
#include "util/xalloc.h"

static void deep_copy_copies_containers_and_shares_scalars(void **state)
{
    (void)state;
    json_t *v = json_loads("{\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"1\"}},"
                           "\"spec\":{\"n\":3,\"f\":1.5,\"on\":true,\"none\":null,"
                           "\"list\":[{\"k\":\"v\"},[1,2],\"s\"]}}",
                           0, NULL);
    assert_non_null(v);
    json_t *c = jx_deep_copy(v);
    assert_true(json_equal(c, v));
    /* same key order (dumps keep insertion order) */
    char *a = jx_dumps(v), *b = jx_dumps(c);
    assert_string_equal(a, b);
    xfree(a);
    xfree(b);
    /* containers are new, scalars shared */
    assert_ptr_not_equal(c, v);
    assert_ptr_not_equal(JX_GET(c, "metadata", "labels"), JX_GET(v, "metadata", "labels"));
    assert_ptr_not_equal(JX_GET(c, "spec", "list"), JX_GET(v, "spec", "list"));
    assert_ptr_not_equal(json_array_get(JX_GET(c, "spec", "list"), 0),
                         json_array_get(JX_GET(v, "spec", "list"), 0));
    assert_ptr_equal(JX_GET(c, "metadata", "name"), JX_GET(v, "metadata", "name"));
    assert_ptr_equal(JX_GET(c, "spec", "n"), JX_GET(v, "spec", "n"));
    /* changing the copy leaves the original alone */
    JX_SET_NEW(c, json_string("2"), "metadata", "labels", "x");
    json_array_append_new(JX_GET(c, "spec", "list"), json_integer(9));
    json_object_set_new(json_array_get(JX_GET(c, "spec", "list"), 0), "k", json_string("w"));
    assert_string_equal(JX_STR(v, "metadata", "labels", "x"), "1");
    assert_int_equal(json_array_size(JX_GET(v, "spec", "list")), 3);
    assert_string_equal(JX_STR(json_array_get(JX_GET(v, "spec", "list"), 0), "k"), "v");
    json_decref(c);
    /* the original outlives the copy's release, and scalars alone are shared */
    assert_string_equal(JX_STR(v, "metadata", "name"), "a");
    json_t *s = json_string("x");
    json_t *sc = jx_deep_copy(s);
    assert_ptr_equal(sc, s);
    json_decref(sc);
    json_decref(s);
    assert_null(jx_deep_copy(NULL));
    json_decref(v);
}

/* The inline path macros give what jx_get_ and friends give over the same
 * keys: members at any depth, NULL past a missing member or a non-object,
 * a NULL last key ending the path early, each argument evaluated once. */
static void path_macros_match_the_functions(void **state)
{
    (void)state;
    json_t *o = json_loads("{\"metadata\":{\"name\":\"n\",\"generation\":3,"
                           "\"labels\":{\"a.b/c\":\"v\"}},\"spec\":{\"on\":true,"
                           "\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{\"f\":{\"g\":\"deep\"}}}}}}},"
                           "\"list\":[1]}",
                           0, NULL);
    assert_non_null(o);
    assert_string_equal(JX_STR(o, "metadata", "name"), "n");
    assert_ptr_equal(JX_STR(o, "metadata", "name"), jx_str_(o, JX_KEYS("metadata", "name")));
    assert_int_equal(JX_INT(o, -1, "metadata", "generation"), 3);
    assert_int_equal(JX_INT(o, -1, "metadata", "name"), -1); /* not an integer */
    assert_true(JX_BOOL(o, false, "spec", "on"));
    assert_false(JX_BOOL(o, false, "spec", "off"));
    assert_string_equal(JX_STR(o, "spec", "a", "b", "c", "d", "e", "f", "g"), "deep");
    const char *key = "a.b/c";
    assert_string_equal(JX_STR(o, "metadata", "labels", key), "v");
    /* missing members and non-objects on the way */
    assert_null(JX_GET(o, "nope", "name"));
    assert_null(JX_GET(o, "list", "x"));
    assert_null(JX_STR(o, "metadata", "name", "x"));
    assert_null(JX_GET(NULL, "metadata"));
    assert_null(JX_STR(o, "metadata")); /* an object, not a string */
    /* a NULL key ends the path where it stands, as in jx_get_ */
    const char *none = NULL;
    assert_ptr_equal(JX_GET(o, "metadata", "labels", none), JX_GET(o, "metadata", "labels"));
    assert_ptr_equal(JX_GET(o, "metadata", "labels", none),
                     jx_get_(o, JX_KEYS("metadata", "labels", none)));
    assert_null(JX_STR(o, "metadata", "labels", none));
    /* each argument once */
    int calls = 0, k1 = 0, k2 = 0;
    assert_string_equal(JX_STR((calls++, o), (k1++, "metadata"), (k2++, "name")), "n");
    assert_int_equal(calls, 1);
    assert_int_equal(k1, 1);
    assert_int_equal(k2, 1);
    json_decref(o);
}

/* jx_string is json_string: the same value for ASCII and valid UTF-8,
 * NULL for invalid UTF-8 and for NULL. */
static void string_matches_json_string(void **state)
{
    (void)state;
    const char *ok[] = {"", "QuotaReserved", "couldn't assign flavors: 5 more needed",
                        "caf\xc3\xa9 \xe2\x82\xac"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        json_t *a = jx_string(ok[i]), *b = json_string(ok[i]);
        assert_non_null(a);
        assert_true(json_equal(a, b));
        assert_int_equal(json_string_length(a), strlen(ok[i]));
        json_decref(a);
        json_decref(b);
    }
    /* a non-ASCII byte at every position of the word-at-a-time scan */
    for (size_t len = 1; len <= 40; len++) {
        for (size_t at = 0; at < len; at++) {
            char text[48], bad[48];
            memset(text, 'a', len);
            text[len] = '\0';
            memcpy(bad, text, len + 1);
            bad[at] = (char)0xff;
            assert_null(jx_string(bad)); /* invalid UTF-8: json_string's NULL */
            if (at + 2 <= len) {
                text[at] = (char)0xc3; /* a valid two-byte character */
                text[at + 1] = (char)0xa9;
                json_t *a = jx_string(text), *b = json_string(text);
                assert_non_null(a);
                assert_true(json_equal(a, b));
                json_decref(a);
                json_decref(b);
            }
            json_t *plain = jx_string(text + len); /* "" */
            assert_string_equal(json_string_value(plain), "");
            json_decref(plain);
        }
    }
    assert_null(jx_string("bad \xff byte"));
    assert_null(jx_string("cut \xc3"));
    assert_null(jx_string(NULL));
}

/* jx_members finds what json_object_get finds, absent keys as NULL, in
 * one pass whatever the order; a non-object gives all NULL. */
static void members_match_lookups(void **state)
{
    (void)state;
    json_t *o = json_pack("{s:i, s:s, s:[], s:{}}", "b", 1, "status", "True", "a", "c");
    static const char *const keys[] = {"c", "status", "missing", "b", "st"};
    json_t *out[5];
    jx_members(o, keys, 5, out);
    for (size_t i = 0; i < 5; i++)
        assert_ptr_equal(out[i], json_object_get(o, keys[i]));
    assert_null(out[2]);
    assert_null(out[4]); /* a prefix of "status" is another key */
    json_t *arr = json_array();
    out[0] = o; /* overwritten */
    jx_members(arr, keys, 2, out);
    assert_null(out[0]);
    assert_null(out[1]);
    jx_members(NULL, keys, 1, out);
    assert_null(out[0]);
    json_decref(arr);
    json_decref(o);
}

/* jx_shallow_with keeps the order, shares every other value, replaces the
 * member in place, appends it when absent, and leaves obj alone. */
static void shallow_with_replaces_one_member(void **state)
{
    (void)state;
    json_t *spec = json_object();
    json_t *o = json_pack("{s:s, s:O, s:s}", "kind", "Workload", "spec", spec, "status", "old");
    json_t *st = json_string("new");
    json_t *c = jx_shallow_with(o, "status", 6, st);
    char *text = jx_dumps(c);
    assert_string_equal(text, "{\"kind\":\"Workload\",\"spec\":{},\"status\":\"new\"}");
    xfree(text);
    assert_ptr_equal(json_object_get(c, "spec"), spec); /* shared */
    assert_ptr_equal(json_object_get(c, "status"), st); /* taken */
    assert_string_equal(json_string_value(json_object_get(o, "status")), "old");
    json_decref(c);
    json_object_del(o, "status");
    c = jx_shallow_with(o, "status", 6, json_string("added"));
    text = jx_dumps(c);
    assert_string_equal(text, "{\"kind\":\"Workload\",\"spec\":{},\"status\":\"added\"}");
    xfree(text);
    json_decref(c);
    c = jx_shallow_with(NULL, "metadata", 8, json_object());
    text = jx_dumps(c);
    assert_string_equal(text, "{\"metadata\":{}}");
    xfree(text);
    json_decref(c);
    json_decref(spec);
    json_decref(o);
}

/* jx_equal_walk: member order counts unless any_order; shared values and
 * deep values compare as json_equal does otherwise. */
static void equal_walk_orders_and_shares(void **state)
{
    (void)state;
    json_t *a = json_loads("{\"x\": 1, \"y\": [1, {\"p\": \"q\", \"r\": 2}], \"z\": null}", 0, NULL);
    json_t *b = json_loads("{\"x\": 1, \"y\": [1, {\"p\": \"q\", \"r\": 2}], \"z\": null}", 0, NULL);
    json_t *swapped = json_loads("{\"x\": 1, \"y\": [1, {\"r\": 2, \"p\": \"q\"}], \"z\": null}", 0, NULL);
    json_t *other = json_loads("{\"x\": 1, \"y\": [1, {\"p\": \"q\", \"r\": 3}], \"z\": null}", 0, NULL);
    json_t *shorter = json_loads("{\"x\": 1, \"y\": [1]}", 0, NULL);
    for (int any = 0; any < 2; any++) {
        assert_true(jx_equal_walk(a, a, any));
        assert_true(jx_equal_walk(a, b, any));
        assert_false(jx_equal_walk(a, other, any));
        assert_false(jx_equal_walk(a, shorter, any));
        assert_false(jx_equal_walk(a, NULL, any));
        assert_true(jx_equal_walk(NULL, NULL, any));
    }
    /* the same members in another order: equal only when order may differ */
    assert_false(jx_equal_walk(a, swapped, false));
    assert_true(jx_equal_walk(a, swapped, true));
    /* an integer and a real are different JSON, as json_equal says */
    json_t *i1 = json_integer(1), *r1 = json_real(1.0);
    assert_false(jx_equal_walk(i1, r1, true));
    assert_int_equal(jx_equal_walk(i1, r1, true), json_equal(i1, r1));
    /* a version sharing an unchanged member with the old one */
    json_t *v2 = jx_shallow_with(a, "z", 1, json_string("new"));
    assert_false(jx_equal_walk(a, v2, true));
    assert_ptr_equal(json_object_get(a, "y"), json_object_get(v2, "y"));
    json_t *v3 = jx_shallow_with(a, "z", 1, json_null());
    assert_true(jx_equal_walk(a, v3, false));
    json_decref(i1);
    json_decref(r1);
    json_decref(v2);
    json_decref(v3);
    json_decref(a);
    json_decref(b);
    json_decref(swapped);
    json_decref(other);
    json_decref(shorter);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(deep_copy_copies_containers_and_shares_scalars),
        cmocka_unit_test(path_macros_match_the_functions),
        cmocka_unit_test(string_matches_json_string),
        cmocka_unit_test(members_match_lookups),
        cmocka_unit_test(shallow_with_replaces_one_member),
        cmocka_unit_test(equal_walk_orders_and_shares),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
