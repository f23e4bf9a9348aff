/*
 * CLI output formats: the YAML printer (kubectl's -o yaml layout through
 * libyaml's emitter), kubectl's JSONPath subset, gcloud's get()/value()
 * projections (the seed's `--format="get(config.flexStart)"` -> True), and
 * the -o parser.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "test_cli_fixtures.h"
#include "util/xalloc.h"

static void assert_yaml(const char *json, const char *want)
{
    json_t *v = J(json);
    struct sbuf sb;
    sbuf_init(&sb, 0);
    assert_int_equal(cli__yaml_append(&sb, v), 0);
    assert_string_equal(sb.buf, want);
    sbuf_release(&sb);
    json_decref(v);
}

static void test_yaml_kubectl_layout(void **state)
{
    (void)state;
    assert_yaml("{\"kind\":\"ClusterQueue\",\"apiVersion\":\"kueue.x-k8s.io/v1beta1\","
                "\"metadata\":{\"name\":\"cq\",\"generation\":1},"
                "\"spec\":{\"namespaceSelector\":{},\"admissionChecks\":[],"
                "\"resourceGroups\":[{\"coveredResources\":[\"cpu\",\"memory\"],"
                "\"flavors\":[{\"name\":\"default-cpu\",\"resources\":[{\"name\":\"cpu\","
                "\"nominalQuota\":10},{\"name\":\"memory\",\"nominalQuota\":\"20Gi\"}]}]}]}}",
                "apiVersion: kueue.x-k8s.io/v1beta1\n"
                "kind: ClusterQueue\n"
                "metadata:\n"
                "  generation: 1\n"
                "  name: cq\n"
                "spec:\n"
                "  admissionChecks: []\n"
                "  namespaceSelector: {}\n"
                "  resourceGroups:\n"
                "  - coveredResources:\n"
                "    - cpu\n"
                "    - memory\n"
                "    flavors:\n"
                "    - name: default-cpu\n"
                "      resources:\n"
                "      - name: cpu\n"
                "        nominalQuota: 10\n"
                "      - name: memory\n"
                "        nominalQuota: 20Gi\n");
}

static void test_yaml_quotes_strings_that_read_back_as_other_types(void **state)
{
    (void)state;
    assert_yaml("{\"a\":\"2\",\"b\":\"true\",\"c\":\"\",\"d\":\"null\",\"e\":\"1e3\","
                "\"f\":\"2026-01-01T00:00:00Z\",\"g\":\"4x4\",\"h\":\"yes\",\"i\":\"0.5\","
                "\"j\":\"1000000000Gi\",\"k\":true,\"l\":null,\"m\":2.5,\"n\":\"~\"}",
                "a: \"2\"\nb: \"true\"\nc: \"\"\nd: \"null\"\ne: \"1e3\"\n"
                "f: \"2026-01-01T00:00:00Z\"\ng: 4x4\nh: \"yes\"\ni: \"0.5\"\n"
                "j: 1000000000Gi\nk: true\nl: null\nm: 2.5\n\"n\": \"~\"\n");
}

static void test_yaml_multiline_and_special_strings(void **state)
{
    (void)state;
    assert_yaml("{\"script\":\"import jax\\nprint(1)\\n\",\"colon\":\"a: b\","
                "\"dash\":\"- x\",\"key.with/slash\":\"v\"}",
                "colon: 'a: b'\n"
                "dash: '- x'\n"
                "key.with/slash: v\n"
                "script: |\n"
                "  import jax\n"
                "  print(1)\n");
}

static char *jp(const char *tmpl, const char *json)
{
    char err[256] = "";
    struct cli_jsonpath *p = cli__jsonpath_parse(tmpl, err, sizeof(err));
    if (!p)
        fail_msg("jsonpath %s: %s", tmpl, err);
    json_t *v = J(json);
    struct sbuf sb;
    sbuf_init(&sb, 0);
    cli__jsonpath_exec(p, v, &sb);
    json_decref(v);
    cli__jsonpath_free(p);
    return cli__sbuf_done(&sb);
}

#define ASSERT_JP(tmpl, json, want)                                                          \
    do {                                                                                     \
        char *got_ = jp(tmpl, json);                                                         \
        assert_string_equal(got_, want);                                                     \
        xfree(got_);                                                                         \
    } while (0)

static const char *LIST =
    "{\"kind\":\"List\",\"items\":["
    "{\"metadata\":{\"name\":\"a\",\"labels\":{\"app.kubernetes.io/name\":\"x\"}},"
    "\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Admitted\",\"status\":\"True\"},"
    "{\"type\":\"Finished\",\"status\":\"False\"}],\"n\":3}},"
    "{\"metadata\":{\"name\":\"b\"},\"status\":{\"phase\":\"Pending\",\"n\":1.5}}]}";

static void test_jsonpath_fields_indexes_wildcards(void **state)
{
    (void)state;
    ASSERT_JP("{.kind}", LIST, "List");
    ASSERT_JP("{.items[*].metadata.name}", LIST, "a b");
    ASSERT_JP("{.items[0].status.phase}", LIST, "Running");
    ASSERT_JP("{.items[-1].metadata.name}", LIST, "b");
    ASSERT_JP("{.items[0:1].metadata.name}", LIST, "a");
    ASSERT_JP("{.items[*].status.n}", LIST, "3 1.5");
    ASSERT_JP("{.items[0].metadata.labels.app\\.kubernetes\\.io/name}", LIST, "x");
    ASSERT_JP("{.items[0].metadata.labels['app.kubernetes.io/name']}", LIST, "x");
    ASSERT_JP("{.missing.field}", LIST, "");
    ASSERT_JP("name={.items[1].metadata.name}!", LIST, "name=b!");
    ASSERT_JP("{..phase}", LIST, "Running Pending");
    ASSERT_JP("{.items[1].metadata}", LIST, "{\"name\":\"b\"}");
}

static void test_jsonpath_filters_and_ranges(void **state)
{
    (void)state;
    ASSERT_JP("{.items[0].status.conditions[?(@.type==\"Admitted\")].status}", LIST, "True");
    ASSERT_JP("{.items[0].status.conditions[?(@.status!='True')].type}", LIST, "Finished");
    ASSERT_JP("{.items[?(@.status.n==3)].metadata.name}", LIST, "a");
    ASSERT_JP("{.items[?(@.status.conditions)].metadata.name}", LIST, "a");
    ASSERT_JP("{range .items[*]}{.metadata.name}{\"\\t\"}{.status.phase}{\"\\n\"}{end}", LIST,
              "a\tRunning\nb\tPending\n");
    ASSERT_JP("{range .items[*]}[{.metadata.name}]{end}", LIST, "[a][b]");
    ASSERT_JP("{@.kind}", LIST, "List");
}

static void test_jsonpath_syntax_errors(void **state)
{
    (void)state;
    static const char *const bad[] = {"{.a", "{.a[}", "{range .items[*]}{.a}", "{end}",
                                      "{.a[?(@.x==\"y\"}", "{.a[x]}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char err[256] = "";
        struct cli_jsonpath *p = cli__jsonpath_parse(bad[i], err, sizeof(err));
        if (p)
            fail_msg("expected a syntax error for %s", bad[i]);
        assert_true(err[0] != '\0');
    }
}

static char *gf(const char *fmt, const char *json, int want_rc)
{
    json_t *v = J(json);
    struct sbuf sb;
    char err[256] = "";
    sbuf_init(&sb, 0);
    assert_int_equal(cli__gformat(fmt, v, &sb, err, sizeof(err)), want_rc);
    json_decref(v);
    if (want_rc)
        sbuf_adds(&sb, err);
    return cli__sbuf_done(&sb);
}

static void test_gcloud_get_projection(void **state)
{
    (void)state;
    const char *pool = "{\"name\":\"dws-pool\",\"config\":{\"flexStart\":true,"
                       "\"machineType\":\"ct6e-standard-4t\",\"labels\":{\"a\":\"1\",\"b\":\"2\"}},"
                       "\"autoscaling\":{\"enabled\":false,\"maxNodeCount\":4},"
                       "\"tags\":[\"x\",\"y\"],\"ratio\":0.5}";
    char *s = gf("get(config.flexStart)", pool, 0);
    assert_string_equal(s, "True\n");
    xfree(s);
    s = gf("value(autoscaling.enabled, autoscaling.maxNodeCount,name)", pool, 0);
    assert_string_equal(s, "False\t4\tdws-pool\n");
    xfree(s);
    s = gf("get(config.missing)", pool, 0);
    assert_string_equal(s, "\n");
    xfree(s);
    s = gf("get(tags)", pool, 0);
    assert_string_equal(s, "x;y\n");
    xfree(s);
    s = gf("get(tags[1],config.labels,ratio)", pool, 0);
    assert_string_equal(s, "y\ta=1;b=2\t0.5\n");
    xfree(s);
    s = gf("table(name)", pool, -1);
    assert_non_null(strstr(s, "unsupported --format"));
    xfree(s);
}

static void test_output_flag_parsing(void **state)
{
    (void)state;
    struct cli_outfmt f;
    char err[256];
    assert_int_equal(cli__outfmt_parse("yaml", &f, err, sizeof(err)), 0);
    assert_int_equal(f.kind, CLI_OUT_YAML);
    assert_int_equal(cli__outfmt_parse("wide", &f, err, sizeof(err)), 0);
    assert_int_equal(f.kind, CLI_OUT_WIDE);
    assert_int_equal(cli__outfmt_parse("jsonpath='{.metadata.name}'", &f, err, sizeof(err)), 0);
    assert_int_equal(f.kind, CLI_OUT_JSONPATH);
    json_t *v = J("{\"metadata\":{\"name\":\"n\"}}");
    struct sbuf sb;
    sbuf_init(&sb, 0);
    cli__jsonpath_exec(f.jp, v, &sb);
    assert_string_equal(sb.buf, "n");
    sbuf_release(&sb);
    json_decref(v);
    cli__outfmt_release(&f);
    assert_int_equal(cli__outfmt_parse("xml", &f, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "unable to match a printer"));
    assert_int_equal(cli__outfmt_parse("jsonpath={.a", &f, err, sizeof(err)), -1);
    /* an empty template is kubectl's error, not an empty output */
    const char *empty[] = {"jsonpath=", "jsonpath", "jsonpath=''"};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(cli__outfmt_parse(empty[i], &f, err, sizeof(err)), -1);
        assert_string_equal(err, "template format specified but no template given");
    }
}

static void test_table_alignment(void **state)
{
    (void)state;
    struct cli_table t;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cli__table_init(&t, 3);
    cli__table_rowv(&t, "NAME", "COHORT", "AGE");
    cli__table_rowv(&t, "cluster-queue", (const char *)NULL, "5m");
    cli__table_print(&t, f, NULL);
    fclose(f);
    assert_string_equal(buf, "NAME            COHORT   AGE\n"
                             "cluster-queue            5m\n");
    cli__table_release(&t);
    free(buf);
}

static void test_describe_alignment(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cli__align_tabs("Name:\tcq\nAnnotations:\ta=b\n\tc=d\nSpec:\n  Cohort:\t<none>\n"
                    "  Queueing Strategy:\tBestEffortFIFO\nFlavors:\n  x   y\n",
                    f);
    fclose(f);
    assert_string_equal(buf, "Name:         cq\n"
                             "Annotations:  a=b\n"
                             "              c=d\n"
                             "Spec:\n"
                             "  Cohort:             <none>\n"
                             "  Queueing Strategy:  BestEffortFIFO\n"
                             "Flavors:\n"
                             "  x   y\n");
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yaml_kubectl_layout),
        cmocka_unit_test(test_yaml_quotes_strings_that_read_back_as_other_types),
        cmocka_unit_test(test_yaml_multiline_and_special_strings),
        cmocka_unit_test(test_jsonpath_fields_indexes_wildcards),
        cmocka_unit_test(test_jsonpath_filters_and_ranges),
        cmocka_unit_test(test_jsonpath_syntax_errors),
        cmocka_unit_test(test_gcloud_get_projection),
        cmocka_unit_test(test_output_flag_parsing),
        cmocka_unit_test(test_table_alignment),
        cmocka_unit_test(test_describe_alignment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
