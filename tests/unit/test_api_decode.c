/*
 * test_api_decode: YAML/JSON text to documents: scalar typing as
 * sigs.k8s.io/yaml (go-yaml v2) does it, anchors and merge keys,
 * multi-document streams, the JSON path, and every error path of the
 * decoder (syntax with line and column, duplicate keys, limits, aliases,
 * tags, keys, non-mapping documents).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_api_lib.h"
#include "util/err.h"
#include "util/jsonx.h"

/* Parse one document and return its "v" field (borrowed from *docs). */
static json_t *value_of(const char *yaml_value, json_t **docs)
{
    char *text = xasprintf("v: %s\n", yaml_value);
    *docs = t_parse_ok(text);
    xfree(text);
    assert_int_equal(json_array_size(*docs), 1);
    return JX_GET(json_array_get(*docs, 0), "v");
}

/* Parse text that must fail; returns rc and the message (caller frees). */
static int parse_err(const char *text, char **msg)
{
    struct diag d;
    diag_init(&d);
    json_t *docs = (json_t *)1;
    int rc = api_parse_documents(text, strlen(text), "in.yaml", &docs, &d);
    assert_null(docs);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.items[0].type, DIAG_SYNTAX);
    *msg = diag_summary(&d);
    diag_release(&d);
    return rc;
}

static void expect_err(const char *text, int want_rc, const char *want)
{
    char *msg = NULL;
    int rc = parse_err(text, &msg);
    if (rc != want_rc || !strstr(msg, want))
        fprintf(stderr, "input %s\n  rc %d msg %s\n", text, rc, msg);
    assert_int_equal(rc, want_rc);
    assert_non_null(strstr(msg, want));
    xfree(msg);
}

/* ---- typing ---- */

static void test_yaml11_booleans_as_kubernetes_reads_them(void **state)
{
    (void)state;
    static const char *const yes[] = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE",
                                      "on", "On", "ON"};
    static const char *const no[] = {"n", "N", "no", "No", "NO", "false", "False", "FALSE",
                                     "off", "Off", "OFF"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        json_t *docs;
        json_t *v = value_of(yes[i], &docs);
        assert_true(json_is_true(v));
        json_decref(docs);
        v = value_of(no[i], &docs);
        assert_true(json_is_false(v));
        json_decref(docs);
    }
    json_t *docs;
    /* quoted stays a string; other spellings are strings */
    assert_string_equal(json_string_value(value_of("\"yes\"", &docs)), "yes");
    json_decref(docs);
    assert_string_equal(json_string_value(value_of("yES", &docs)), "yES");
    json_decref(docs);
    assert_string_equal(json_string_value(value_of("'true'", &docs)), "true");
    json_decref(docs);
}

static void test_null_forms(void **state)
{
    (void)state;
    static const char *const nulls[] = {"~", "null", "Null", "NULL", ""};
    for (size_t i = 0; i < sizeof(nulls) / sizeof(nulls[0]); i++) {
        json_t *docs;
        json_t *v = value_of(nulls[i], &docs);
        assert_true(json_is_null(v));
        json_decref(docs);
    }
    json_t *docs;
    assert_string_equal(json_string_value(value_of("nULL", &docs)), "nULL");
    json_decref(docs);
}

static void test_numbers_follow_go_parse_rules(void **state)
{
    (void)state;
    struct {
        const char *in;
        long long i;
    } ints[] = {{"42", 42},   {"-7", -7},   {"+3", 3},       {"0x1F", 31}, {"0o17", 15},
                {"017", 15},  {"0b101", 5}, {"1_000", 1000}, {"0", 0},
                {"9223372036854775807", 9223372036854775807LL}};
    for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
        json_t *docs;
        json_t *v = value_of(ints[i].in, &docs);
        assert_true(json_is_integer(v));
        assert_true(json_integer_value(v) == ints[i].i);
        json_decref(docs);
    }
    struct {
        const char *in;
        double f;
    } reals[] = {{"1.5", 1.5}, {"1e3", 1000}, {".5", 0.5}, {"-2.5e-1", -0.25}, {"09", 9},
                 {"12345678901234567890", 12345678901234567890.0}};
    for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++) {
        json_t *docs;
        json_t *v = value_of(reals[i].in, &docs);
        assert_true(json_is_real(v));
        assert_true(json_real_value(v) == reals[i].f);
        json_decref(docs);
    }
    /* not numbers: strings */
    static const char *const strs[] = {"1e999", "1.2.3", "0x", "4x4", "1Gi", "20Gi", "v1",
                                       "2026-01-02", "12:30", "."};
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
        json_t *docs;
        json_t *v = value_of(strs[i], &docs);
        assert_true(json_is_string(v));
        assert_string_equal(json_string_value(v), strs[i]);
        json_decref(docs);
    }
}

static void test_tags_and_block_scalars(void **state)
{
    (void)state;
    json_t *docs = t_parse_ok("a: !!str 5\nb: !!float 1\nc: !!int \"7\"\nd: |-\n  line1\n  line2\n"
                              "e: >\n  folded\n  text\nf: !custom 8\ng: !!bool yes\nh: !!null ~\n");
    json_t *o = json_array_get(docs, 0);
    assert_string_equal(JX_STR(o, "a"), "5");
    assert_true(json_is_real(json_object_get(o, "b")));
    assert_int_equal(JX_INT(o, 0, "c"), 7);
    assert_string_equal(JX_STR(o, "d"), "line1\nline2");
    assert_string_equal(JX_STR(o, "e"), "folded text\n");
    assert_string_equal(JX_STR(o, "f"), "8");
    assert_true(json_is_true(json_object_get(o, "g")));
    assert_true(json_is_null(json_object_get(o, "h")));
    json_decref(docs);
}

static void test_keys_become_strings(void **state)
{
    (void)state;
    /* as in go-yaml v2, even a key "n" is the boolean false, hence "false" */
    json_t *docs = t_parse_ok("1: a\ntrue: b\n1.5: c\n\"q\": d\nn: e\n");
    json_t *o = json_array_get(docs, 0);
    assert_int_equal(json_object_size(o), 5);
    assert_string_equal(JX_STR(o, "false"), "e");
    assert_string_equal(JX_STR(o, "1"), "a");
    assert_string_equal(JX_STR(o, "true"), "b");
    assert_string_equal(JX_STR(o, "1.5"), "c");
    assert_string_equal(JX_STR(o, "q"), "d");
    json_decref(docs);
    docs = t_parse_ok("\"n\": e\n");
    assert_string_equal(JX_STR(json_array_get(docs, 0), "n"), "e");
    json_decref(docs);
}

static void test_anchors_are_copies_and_merge_keys_apply(void **state)
{
    (void)state;
    json_t *docs = t_parse_ok("base: &b\n  x: 1\n  w: 2\nuse:\n  <<: *b\n  w: 3\n"
                              "list: &l [1, 2]\nagain: *l\n"
                              "multi:\n  <<: [*b, {z: 9, x: 0}]\n");
    json_t *o = json_array_get(docs, 0);
    assert_int_equal(JX_INT(o, 0, "use", "x"), 1);
    assert_int_equal(JX_INT(o, 0, "use", "w"), 3); /* explicit keys win */
    assert_int_equal(JX_INT(o, 0, "multi", "x"), 1); /* earlier merge sources win */
    assert_int_equal(JX_INT(o, 0, "multi", "z"), 9);
    /* aliases are copies: mutating one leaves the other alone */
    json_array_append_new(json_object_get(o, "again"), json_integer(3));
    assert_int_equal(json_array_size(json_object_get(o, "list")), 2);
    json_object_set_new(json_object_get(o, "use"), "x", json_integer(5));
    assert_int_equal(JX_INT(o, 0, "base", "x"), 1);
    json_decref(docs);
}

static void test_streams_skip_empty_documents(void **state)
{
    (void)state;
    json_t *docs = t_parse_ok("---\n# only a comment\n---\na: 1\n---\n---\nb: 2\n...\n---\n~\n");
    assert_int_equal(json_array_size(docs), 2);
    assert_int_equal(JX_INT(json_array_get(docs, 0), 0, "a"), 1);
    assert_int_equal(JX_INT(json_array_get(docs, 1), 0, "b"), 2);
    json_decref(docs);
    docs = t_parse_ok("");
    assert_int_equal(json_array_size(docs), 0);
    json_decref(docs);
    docs = t_parse_ok("# nothing here\n");
    assert_int_equal(json_array_size(docs), 0);
    json_decref(docs);
}

static void test_json_input_and_json_streams(void **state)
{
    (void)state;
    json_t *docs = t_parse_ok("{\"a\": 1, \"b\": [true, null]}\n{\"c\": \"x\"}");
    assert_int_equal(json_array_size(docs), 2);
    assert_int_equal(JX_INT(json_array_get(docs, 0), 0, "a"), 1);
    assert_string_equal(JX_STR(json_array_get(docs, 1), "c"), "x");
    json_decref(docs);
    /* flow YAML that is not JSON still parses (YAML fallback) */
    docs = t_parse_ok("  {a: yes, b: 0x10}");
    assert_true(json_is_true(JX_GET(json_array_get(docs, 0), "a")));
    assert_int_equal(JX_INT(json_array_get(docs, 0), 0, "b"), 16);
    json_decref(docs);
    /* JSON with duplicate keys is reported by the YAML parser with a position */
    expect_err("{\"a\": 1, \"a\": 2}", CU_EBADREQ, "line 1, column 10: duplicate key \"a\"");
}

static void test_seed_files_decode(void **state)
{
    (void)state;
    char *q = t_seed_queue_yaml();
    json_t *docs = t_parse_ok(q);
    assert_int_equal(json_array_size(docs), 7);
    json_t *cq = json_array_get(docs, 3);
    json_t *g = json_array_get(JX_GET(cq, "spec", "resourceGroups"), 0);
    json_t *dws = json_array_get(json_object_get(g, "flavors"), 2);
    json_t *res = json_object_get(dws, "resources");
    assert_int_equal(JX_INT(json_array_get(res, 0), 0, "nominalQuota"), 1000000000);
    assert_string_equal(JX_STR(json_array_get(res, 1), "nominalQuota"), "1000000000Gi");
    assert_string_equal(JX_STR(json_array_get(docs, 1), "spec", "nodeLabels",
                               "cloud.google.com/gke-nodepool"), "on-demand-pool");
    json_decref(docs);
    xfree(q);
    char *r = t_seed_rayjob_yaml("2");
    docs = t_parse_ok(r);
    json_t *rj = json_array_get(docs, 0);
    assert_string_equal(JX_STR(rj, "metadata", "name"), "rayjob-tpu-v6e-dws-2");
    assert_string_equal(JX_STR(rj, "spec", "runtimeEnvYAML"),
                        "pip:\n  - jax[tpu]==0.8.2\n  - pandas==2.3.3\n");
    assert_true(json_is_object(JX_GET(rj, "spec", "rayClusterSpec", "headGroupSpec",
                                      "rayStartParams")));
    json_decref(docs);
    xfree(r);
}

/* ---- error paths ---- */

/* prefix + n '[' + inner + n ']' + suffix. Caller frees. */
static char *nested(const char *prefix, int n, const char *inner, const char *suffix)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    sbuf_adds(&sb, prefix);
    for (int i = 0; i < n; i++)
        sbuf_addc(&sb, '[');
    sbuf_adds(&sb, inner);
    for (int i = 0; i < n; i++)
        sbuf_addc(&sb, ']');
    sbuf_adds(&sb, suffix);
    char *s = sbuf_take(&sb);
    sbuf_release(&sb);
    return s;
}

static void test_syntax_errors_name_line_and_column(void **state)
{
    (void)state;
    expect_err("a: 1\nb: c: d\n", CU_EBADREQ,
               "in.yaml: yaml: line 2, column 5: mapping values are not allowed in this context");
    expect_err("a:\n  - 1\n - 2\n", CU_EBADREQ, "yaml: line 3, column 2:");
    expect_err("a: [1, 2\n", CU_EBADREQ, "yaml: line 2, column 1:");
    expect_err("a: \"unterminated\n", CU_EBADREQ, "found unexpected end of stream");
    expect_err("\tkey: 1\n", CU_EBADREQ, "yaml: line 1, column 1:");
    /* the reader's errors (bytes, not tokens) name their line too */
    expect_err("a: 1\nb: x\001y\n", CU_EBADREQ,
               "yaml: line 2, column 5: control characters are not allowed (character 0x01)");
    expect_err("a: 1\nb: \xff\n", CU_EBADREQ, "yaml: line 2, column 4: invalid leading UTF-8");
}

static void test_duplicate_keys_are_errors(void **state)
{
    (void)state;
    expect_err("a: 1\nb:\n  x: 1\n  x: 2\n", CU_EBADREQ,
               "yaml: line 4, column 3: duplicate key \"x\" in mapping");
    /* keys that only collide after conversion to JSON strings */
    expect_err("1: a\n\"1\": b\n", CU_EBADREQ, "duplicate key \"1\"");
}

static void test_non_mapping_documents_are_errors(void **state)
{
    (void)state;
    expect_err("just a string\n", CU_EBADREQ, "document 1 must be a mapping");
    expect_err("a: 1\n---\n- x\n", CU_EBADREQ, "document 2 must be a mapping");
    expect_err("42\n", CU_EBADREQ, "not a number");
    expect_err("[1, 2]", CU_EBADREQ, "not an array");
}

/* 150,000 anchors, each used once, in 2.6 MB (the reproduction of issue
 * 13: 2.7 MB): every value arrives. Anchors used to live in a list
 * searched at every definition and alias, quadratic: this took minutes
 * (far longer under ASan, where the test's time limit ends it); a hash
 * table makes it linear. */
/* "k" and i in three base-62 digits: a short anchor name that is also a
 * plain string scalar (never a number, boolean or null). */
static const char *short_name(int i, char out[5])
{
    static const char digits[] =
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    out[0] = 'k';
    out[1] = digits[i / (62 * 62) % 62];
    out[2] = digits[i / 62 % 62];
    out[3] = digits[i % 62];
    out[4] = '\0';
    return out;
}

static void test_many_anchors_decode(void **state)
{
    (void)state;
    enum { N = 150000 };
    char name[5];
    struct sbuf sb;
    sbuf_init(&sb, 0);
    sbuf_adds(&sb, "d: [");
    for (int i = 0; i < N; i++)
        sbuf_addf(&sb, "%s&%s %s", i ? "," : "", short_name(i, name), name);
    sbuf_adds(&sb, "]\nc: [");
    for (int i = 0; i < N; i++)
        sbuf_addf(&sb, "%s*%s", i ? "," : "", short_name(N - 1 - i, name));
    sbuf_adds(&sb, "]\n");
    assert_true(sb.len < API_MAX_DOCUMENT_BYTES);
    json_t *docs = t_parse_ok(sb.buf);
    json_t *doc = json_array_get(docs, 0);
    assert_int_equal(json_array_size(json_object_get(doc, "d")), N);
    json_t *copies = json_object_get(doc, "c");
    assert_int_equal(json_array_size(copies), N);
    for (int i = 0; i < N; i += 997)
        assert_string_equal(json_string_value(json_array_get(copies, (size_t)i)),
                            short_name(N - 1 - i, name));
    json_decref(docs);
    sbuf_release(&sb);
}

/* An alias names the latest anchor of that name before it (YAML 1.2
 * 3.2.2.2): a redefined anchor replaces the earlier one from there on. */
static void test_redefined_anchor_takes_the_latest(void **state)
{
    (void)state;
    json_t *docs = t_parse_ok("a: &x 1\nb: *x\nc: &x [2]\nd: *x\n");
    json_t *doc = json_array_get(docs, 0);
    assert_int_equal(json_integer_value(json_object_get(doc, "b")), 1);
    json_t *d = json_object_get(doc, "d");
    assert_true(json_is_array(d));
    assert_int_equal(json_integer_value(json_array_get(d, 0)), 2);
    json_decref(docs);
}

static void test_limits_size_depth_aliases(void **state)
{
    (void)state;
    /* depth: the mapping plus 99 sequences is 100 levels, fine; 101 is not */
    char *ok = nested("a: ", 99, "1", "\n");
    json_t *docs = t_parse_ok(ok);
    json_decref(docs);
    xfree(ok);
    char *deep = nested("a: ", 100, "1", "\n");
    expect_err(deep, CU_ELIMIT, "nesting exceeds the maximum depth of 100");
    xfree(deep);
    /* depth reached through an alias: 96 levels under "a", copied 4 deeper */
    char *anchored = nested("a: &x ", 96, "1", "\nb: [[[[*x]]]]\n");
    expect_err(anchored, CU_ELIMIT, "through alias *x");
    xfree(anchored);
    /* billion laughs */
    struct sbuf sb;
    sbuf_init(&sb, 0);
    sbuf_adds(&sb, "a: &a [1,1,1,1,1,1,1,1,1,1]\n");
    for (char c = 'b'; c <= 'i'; c++) {
        sbuf_addf(&sb, "%c: &%c [", c, c);
        for (int i = 0; i < 10; i++)
            sbuf_addf(&sb, "%s*%c", i ? "," : "", c - 1);
        sbuf_adds(&sb, "]\n");
    }
    expect_err(sb.buf, CU_ELIMIT, "document contains excessive aliasing");
    sbuf_release(&sb);
    /* a document over the size limit, and input over the stream limit */
    size_t n = API_MAX_DOCUMENT_BYTES + 10;
    char *big = xmalloc(n + 32);
    memcpy(big, "a: \"", 4);
    memset(big + 4, 'x', n);
    memcpy(big + 4 + n, "\"\n", 3);
    expect_err(big, CU_ELIMIT, "more than the limit of 3145728");
    xfree(big);
    struct diag d;
    diag_init(&d);
    json_t *out = NULL;
    assert_int_equal(api_parse_documents("a: 1", API_MAX_STREAM_BYTES + 1, "huge", &out, &d),
                     CU_ELIMIT);
    assert_null(out);
    diag_release(&d);
}

static void test_other_decoder_errors(void **state)
{
    (void)state;
    expect_err("a: *nope\n", CU_EBADREQ, "line 1, column 4: unknown anchor 'nope' referenced");
    expect_err("a: .inf\n", CU_EBADREQ, "infinity and NaN cannot be represented in JSON");
    expect_err("a: .nan\n", CU_EBADREQ, "infinity and NaN");
    expect_err("a: \"x\\0y\"\n", CU_EBADREQ, "NUL characters are not allowed in strings");
    expect_err("a: !!int abc\n", CU_EBADREQ, "cannot decode `abc` as a !!int");
    expect_err("a: !!bool 3\n", CU_EBADREQ, "cannot decode `3` as a !!bool");
    expect_err("a: !!null x\n", CU_EBADREQ, "as a !!null");
    expect_err("a: !!float x\n", CU_EBADREQ, "as a !!float");
    expect_err("~: a\n", CU_EBADREQ, "unsupported map key: null");
    expect_err("? [a]\n: b\n", CU_EBADREQ, "mapping keys must be scalars");
    expect_err("a:\n  <<: 5\n", CU_EBADREQ, "map merge requires map or sequence of maps");
    expect_err("a:\n  <<: [5]\n", CU_EBADREQ, "map merge requires map");
    expect_err("a: \"\\uD800\"\n", CU_EBADREQ, "yaml: line 1, column"); /* a lone surrogate */
    expect_err("a: \"\xff\"\n", CU_EBADREQ, "invalid"); /* raw bytes that are not UTF-8 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yaml11_booleans_as_kubernetes_reads_them),
        cmocka_unit_test(test_null_forms),
        cmocka_unit_test(test_numbers_follow_go_parse_rules),
        cmocka_unit_test(test_tags_and_block_scalars),
        cmocka_unit_test(test_keys_become_strings),
        cmocka_unit_test(test_anchors_are_copies_and_merge_keys_apply),
        cmocka_unit_test(test_streams_skip_empty_documents),
        cmocka_unit_test(test_json_input_and_json_streams),
        cmocka_unit_test(test_seed_files_decode),
        cmocka_unit_test(test_syntax_errors_name_line_and_column),
        cmocka_unit_test(test_duplicate_keys_are_errors),
        cmocka_unit_test(test_non_mapping_documents_are_errors),
        cmocka_unit_test(test_limits_size_depth_aliases),
        cmocka_unit_test(test_many_anchors_decode),
        cmocka_unit_test(test_redefined_anchor_takes_the_latest),
        cmocka_unit_test(test_other_decoder_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
