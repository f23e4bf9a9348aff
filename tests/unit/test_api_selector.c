/*
 * test_api_selector: label selectors (JSON and query-string forms) and
 * their matching, node selector terms, and taint/toleration matching with
 * the scheduler's semantics.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "api/selector.h"
#include "util/err.h"
#include "util/xalloc.h"

static struct api_labels labels_of(const char *json)
{
    json_t *j = json_loads(json, 0, NULL);
    assert_non_null(j);
    struct api_labels l;
    api_labels_from_json(j, &l);
    json_decref(j);
    return l;
}

static bool query_matches(const char *query, const char *labels_json)
{
    struct diag d;
    diag_init(&d);
    struct api_label_selector sel;
    int rc = api_label_selector_parse(query, &sel, &d);
    if (rc)
        fprintf(stderr, "parse %s: %s\n", query, d.n ? d.items[0].detail : "");
    assert_int_equal(rc, 0);
    struct api_labels l = labels_of(labels_json);
    bool m = api_label_selector_matches(&sel, &l);
    api_labels_release(&l);
    api_label_selector_release(&sel);
    diag_release(&d);
    return m;
}

static void test_query_syntax_and_semantics(void **state)
{
    (void)state;
    const char *L = "{\"app\":\"web\",\"tier\":\"front\",\"gen\":\"5\"}";
    assert_true(query_matches("", L));
    assert_true(query_matches("app=web", L));
    assert_true(query_matches("app==web", L));
    assert_false(query_matches("app=db", L));
    assert_true(query_matches("app!=db", L));
    assert_true(query_matches("missing!=x", L)); /* != matches an absent key */
    assert_true(query_matches("app in (web, db)", L));
    assert_false(query_matches("app notin (web,db)", L));
    assert_true(query_matches("zone notin (a)", L));
    assert_true(query_matches("app", L));
    assert_false(query_matches("!app", L));
    assert_true(query_matches("!zone", L));
    assert_true(query_matches("gen>4,gen<6", L));
    assert_false(query_matches("gen>5", L));
    assert_false(query_matches("app>1", L)); /* not an integer label */
    assert_true(query_matches(" app = web , tier in (front) , !zone ", L));
    assert_false(query_matches("app=web,tier=back", L));
    assert_true(query_matches("app=", "{\"app\":\"\"}")); /* empty value */
    assert_true(query_matches("example.com/role=x", "{\"example.com/role\":\"x\"}"));
}

static void test_query_errors(void **state)
{
    (void)state;
    static const char *const bad[] = {"app in web",  "app=web,",   "=web",     "app web",
                                      "app=web=x",   "-bad=1",     "a>b",      "app in (a",
                                      "a=b c",       "app=has space", "!",     "a=x,,b=y"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct diag d;
        diag_init(&d);
        struct api_label_selector sel;
        int rc = api_label_selector_parse(bad[i], &sel, &d);
        if (rc != CU_EBADREQ)
            fprintf(stderr, "accepted: %s\n", bad[i]);
        assert_int_equal(rc, CU_EBADREQ);
        assert_int_equal(d.n, 1);
        assert_non_null(strstr(d.items[0].detail, "unable to parse requirement"));
        assert_int_equal(sel.n_exprs, 0);
        diag_release(&d);
    }
}

static void test_json_selector_parse_and_match(void **state)
{
    (void)state;
    json_t *j = json_loads("{\"matchLabels\":{\"team\":\"a\"},\"matchExpressions\":["
                           "{\"key\":\"env\",\"operator\":\"In\",\"values\":[\"prod\",\"dev\"]},"
                           "{\"key\":\"legacy\",\"operator\":\"DoesNotExist\"}]}",
                           0, NULL);
    struct diag d;
    diag_init(&d);
    struct api_label_selector sel;
    assert_int_equal(api_label_selector_from_json(j, "spec.sel", &sel, &d), 0);
    assert_int_equal(d.n, 0);
    struct api_labels yes = labels_of("{\"team\":\"a\",\"env\":\"dev\"}");
    struct api_labels no1 = labels_of("{\"team\":\"a\",\"env\":\"qa\"}");
    struct api_labels no2 = labels_of("{\"team\":\"a\",\"env\":\"dev\",\"legacy\":\"1\"}");
    assert_true(api_label_selector_matches(&sel, &yes));
    assert_false(api_label_selector_matches(&sel, &no1));
    assert_false(api_label_selector_matches(&sel, &no2));
    api_labels_release(&yes);
    api_labels_release(&no1);
    api_labels_release(&no2);
    api_label_selector_release(&sel);
    json_decref(j);
    /* the empty selector matches everything */
    j = json_object();
    assert_int_equal(api_label_selector_from_json(j, "s", &sel, &d), 0);
    struct api_labels none = {0};
    assert_true(api_label_selector_matches(&sel, &none));
    api_label_selector_release(&sel);
    json_decref(j);
    diag_release(&d);
}

static void test_json_selector_errors_name_fields(void **state)
{
    (void)state;
    json_t *j = json_loads("{\"matchLabels\":{\"bad key\":\"v\"},\"matchExpressions\":["
                           "{\"key\":\"a\",\"operator\":\"In\"},"
                           "{\"key\":\"b\",\"operator\":\"Exists\",\"values\":[\"x\"]},"
                           "{\"key\":\"c\",\"operator\":\"Gt\",\"values\":[\"1\"]}]}",
                           0, NULL);
    struct diag d;
    diag_init(&d);
    struct api_label_selector sel;
    assert_int_equal(api_label_selector_from_json(j, "spec.s", &sel, &d), CU_EINVAL);
    assert_int_equal(d.n, 4);
    assert_string_equal(d.items[0].field, "spec.s.matchLabels");
    assert_string_equal(d.items[1].field, "spec.s.matchExpressions[0].values");
    assert_int_equal(d.items[1].type, DIAG_REQUIRED);
    assert_string_equal(d.items[2].field, "spec.s.matchExpressions[1].values");
    assert_int_equal(d.items[2].type, DIAG_FORBIDDEN);
    assert_string_equal(d.items[3].field, "spec.s.matchExpressions[2].operator");
    assert_int_equal(d.items[3].type, DIAG_NOT_SUPPORTED);
    api_label_selector_release(&sel);
    json_decref(j);
    diag_release(&d);
}

static void test_node_terms_or_of_ands(void **state)
{
    (void)state;
    json_t *j = json_loads("[{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\","
                           "\"values\":[\"a\"]},{\"key\":\"cpus\",\"operator\":\"Gt\","
                           "\"values\":[\"8\"]}]},{\"matchExpressions\":[{\"key\":\"gpu\","
                           "\"operator\":\"Exists\"}]}]",
                           0, NULL);
    struct api_node_term terms[2];
    api_node_term_from_json(json_array_get(j, 0), &terms[0]);
    api_node_term_from_json(json_array_get(j, 1), &terms[1]);
    struct api_labels a = labels_of("{\"zone\":\"a\",\"cpus\":\"16\"}");
    struct api_labels b = labels_of("{\"zone\":\"a\",\"cpus\":\"4\"}");
    struct api_labels c = labels_of("{\"gpu\":\"1\"}");
    assert_true(api_node_terms_match(terms, 2, &a));
    assert_false(api_node_terms_match(terms, 2, &b));
    assert_true(api_node_terms_match(terms, 2, &c));
    assert_true(api_node_terms_match(NULL, 0, &b)); /* no affinity: every node */
    struct api_node_term empty = {0};
    assert_false(api_node_terms_match(&empty, 1, &a)); /* an empty term: none */
    api_labels_release(&a);
    api_labels_release(&b);
    api_labels_release(&c);
    api_node_term_release(&terms[0]);
    api_node_term_release(&terms[1]);
    json_decref(j);
}

static struct api_taint taint(const char *k, const char *v, const char *e)
{
    struct api_taint t = {(char *)k, (char *)v, (char *)e};
    return t;
}

static struct api_toleration tol(const char *k, const char *op, const char *v, const char *e)
{
    struct api_toleration t = {(char *)k, (char *)op, (char *)v, (char *)e, false, 0};
    return t;
}

static void test_toleration_semantics(void **state)
{
    (void)state;
    struct api_taint tpu = taint("google.com/tpu", "present", "NoSchedule");
    struct api_taint queued = taint("cloud.google.com/gke-queued", "true", "NoSchedule");
    /* the seed's tolerations: key + Exists + effect */
    struct api_toleration seed[2] = {tol("google.com/tpu", "Exists", "", "NoSchedule"),
                                     tol("cloud.google.com/gke-queued", "Exists", "",
                                         "NoSchedule")};
    assert_true(api_tolerations_tolerate(seed, 2, &tpu));
    assert_true(api_tolerations_tolerate(seed, 2, &queued));
    assert_false(api_tolerations_tolerate(seed, 1, &queued));
    struct api_taint exec = taint("google.com/tpu", "present", "NoExecute");
    assert_false(api_tolerations_tolerate(seed, 2, &exec)); /* effect differs */
    struct api_toleration all = tol("", "Exists", "", "");
    assert_true(api_toleration_tolerates(&all, &exec)); /* empty key + Exists: everything */
    struct api_toleration any_effect = tol("google.com/tpu", "Equal", "present", "");
    assert_true(api_toleration_tolerates(&any_effect, &exec));
    struct api_toleration wrong_value = tol("google.com/tpu", "Equal", "absent", "NoSchedule");
    assert_false(api_toleration_tolerates(&wrong_value, &tpu));
    struct api_toleration default_op = tol("google.com/tpu", "", "present", "NoSchedule");
    assert_true(api_toleration_tolerates(&default_op, &tpu)); /* "" means Equal */
    struct api_toleration other_key = tol("nvidia.com/gpu", "Exists", "", "");
    assert_false(api_toleration_tolerates(&other_key, &tpu));
    struct api_toleration odd_op = tol("google.com/tpu", "Lt", "1", "");
    assert_false(api_toleration_tolerates(&odd_op, &tpu));
    assert_false(api_tolerations_tolerate(NULL, 0, &tpu));
}

static void test_taint_and_toleration_from_json(void **state)
{
    (void)state;
    json_t *t = json_loads("{\"key\":\"k\",\"effect\":\"NoSchedule\"}", 0, NULL);
    struct api_taint ta;
    api_taint_from_json(t, &ta);
    assert_string_equal(ta.key, "k");
    assert_string_equal(ta.value, "");
    assert_string_equal(ta.effect, "NoSchedule");
    json_t *o = json_loads("{\"key\":\"k\",\"tolerationSeconds\":30,\"effect\":\"NoExecute\"}",
                           0, NULL);
    struct api_toleration to;
    api_toleration_from_json(o, &to);
    assert_string_equal(to.op, "Equal");
    assert_true(to.has_seconds);
    assert_int_equal(to.seconds, 30);
    assert_true(api_toleration_tolerates(&to, &ta) == false); /* effect differs */
    api_taint_release(&ta);
    api_toleration_release(&to);
    json_decref(t);
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_query_syntax_and_semantics),
        cmocka_unit_test(test_query_errors),
        cmocka_unit_test(test_json_selector_parse_and_match),
        cmocka_unit_test(test_json_selector_errors_name_fields),
        cmocka_unit_test(test_node_terms_or_of_ands),
        cmocka_unit_test(test_toleration_semantics),
        cmocka_unit_test(test_taint_and_toleration_from_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
