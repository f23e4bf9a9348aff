/* Unit tests of field selectors (parse + match). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "api/kinds.h"
#include "server/server.h"
#include "server/srv-int.h"
#include "util/err.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    if (!v)
        fail_msg("bad test JSON: %s", e.text);
    return v;
}

static bool sel(const char *selector, const json_t *obj)
{
    struct srv_fieldsel fs;
    char err[256];
    assert_int_equal(srv_fieldsel_parse(selector, &fs, err, sizeof(err)), 0);
    bool m = srv_fieldsel_matches(&fs, obj);
    srv_fieldsel_release(&fs);
    return m;
}

static void test_parse_terms_any_order(void **state)
{
    (void)state;
    struct srv_fieldsel fs;
    char err[256];
    assert_int_equal(srv_fieldsel_parse("involvedObject.uid=u1,involvedObject.name==cq,"
                                        "involvedObject.namespace=,status.phase!=Failed",
                                        &fs, err, sizeof(err)),
                     0);
    assert_int_equal(fs.n, 4);
    assert_string_equal(fs.terms[0].path, "involvedObject.uid");
    assert_string_equal(fs.terms[1].value, "cq");
    assert_int_equal(fs.terms[1].op, SRV_FS_EQ);
    assert_string_equal(fs.terms[2].value, "");
    assert_int_equal(fs.terms[3].op, SRV_FS_NE);
    srv_fieldsel_release(&fs);
    assert_int_equal(srv_fieldsel_parse("", &fs, err, sizeof(err)), 0);
    assert_int_equal(fs.n, 0);
    assert_int_equal(srv_fieldsel_parse(NULL, &fs, err, sizeof(err)), 0);
}

static void test_parse_errors_and_escapes(void **state)
{
    (void)state;
    struct srv_fieldsel fs;
    char err[256];
    assert_int_equal(srv_fieldsel_parse("metadata.name", &fs, err, sizeof(err)), CU_EBADREQ);
    assert_non_null(strstr(err, "metadata.name"));
    assert_int_equal(srv_fieldsel_parse("=x", &fs, err, sizeof(err)), CU_EBADREQ);
    assert_int_equal(srv_fieldsel_parse("a=b\\,c,d=e\\=f", &fs, err, sizeof(err)), 0);
    assert_int_equal(fs.n, 2);
    assert_string_equal(fs.terms[0].value, "b,c");
    assert_string_equal(fs.terms[1].value, "e=f");
    srv_fieldsel_release(&fs);
}

static void test_match(void **state)
{
    (void)state;
    json_t *ev = J("{\"metadata\":{\"name\":\"e1\",\"namespace\":\"default\"},"
                   "\"involvedObject\":{\"kind\":\"ClusterQueue\",\"name\":\"cq\",\"uid\":\"u1\"},"
                   "\"count\":3,\"spec\":{\"nodeName\":\"n1\"},\"status\":{\"phase\":\"Running\"}}");
    assert_true(sel("metadata.name=e1", ev));
    assert_false(sel("metadata.name=e2", ev));
    /* a missing field reads as "" (involvedObject.namespace= for cluster objects) */
    assert_true(sel("involvedObject.namespace=,involvedObject.kind=ClusterQueue", ev));
    assert_false(sel("involvedObject.namespace=default", ev));
    assert_true(sel("spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed", ev));
    assert_false(sel("status.phase!=Running", ev));
    assert_true(sel("count=3", ev)); /* numbers compare by their JSON text */
    assert_true(sel("", ev));
    json_decref(ev);
}

/* Field paths are checked against the kind's schema: the paths kubectl
 * and people use are known, a typo is not, pass-through subtrees and map
 * keys accept anything. */
static void test_field_paths_follow_the_schema(void **state)
{
    (void)state;
    const struct api_kind *pod = api_kind_get(KIND_POD), *ev = api_kind_get(KIND_EVENT);
    const struct api_kind *cm = api_kind_get(KIND_CONFIGMAP), *wl = api_kind_get(KIND_WORKLOAD);
    const struct api_kind *cq = api_kind_get(KIND_CLUSTERQUEUE);
    assert_true(srv_fieldsel_path_known(pod, "metadata.name"));
    assert_true(srv_fieldsel_path_known(pod, "metadata.namespace"));
    assert_true(srv_fieldsel_path_known(pod, "spec.nodeName"));
    assert_true(srv_fieldsel_path_known(pod, "status.phase"));
    assert_true(srv_fieldsel_path_known(ev, "involvedObject.uid"));
    assert_true(srv_fieldsel_path_known(ev, "involvedObject.name"));
    assert_true(srv_fieldsel_path_known(ev, "reason"));
    assert_true(srv_fieldsel_path_known(ev, "type"));
    assert_true(srv_fieldsel_path_known(cm, "data.anything"));
    assert_true(srv_fieldsel_path_known(wl, "spec.queueName"));
    assert_true(srv_fieldsel_path_known(wl, "metadata.labels.app"));
    assert_false(srv_fieldsel_path_known(wl, "spec.bogus"));
    assert_false(srv_fieldsel_path_known(cq, "spec.cohortt"));
    assert_false(srv_fieldsel_path_known(pod, "metadata.name.x"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_terms_any_order),
        cmocka_unit_test(test_parse_errors_and_escapes),
        cmocka_unit_test(test_match),
        cmocka_unit_test(test_field_paths_follow_the_schema),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
