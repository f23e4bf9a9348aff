/* Unit tests for the trace format (fixed key order, stable numbers) and the
 * expected-facts checker of `cueue sim --check` (src/sim/trace.c, check.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/sim-int.h"
#include "util/xalloc.h"

static char *fmt(int64_t ms, const char *event, json_t *fields)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    sim_trace_format(&sb, ms, event, fields);
    json_decref(fields);
    char *s = sbuf_take(&sb);
    sbuf_release(&sb);
    return s;
}

static void test_keys_come_in_contract_order_then_sorted(void **state)
{
    (void)state;
    json_t *f = json_pack("{s:s, s:s, s:s, s:[{s:{s:s, s:s}, s:i, s:s}], s:s, s:s}",
                          "zeta", "z", "message", "m", "clusterQueue", "cq",
                          "podSets", "flavors", "memory", "on-demand", "cpu", "default-cpu",
                          "count", 4, "name", "workers", "reason", "QuotaReserved",
                          "workload", "default/a");
    char *line = fmt(12500, "QuotaReserved", f);
    assert_string_equal(line,
        "{\"time\":12.5,\"event\":\"QuotaReserved\",\"workload\":\"default/a\","
        "\"clusterQueue\":\"cq\",\"podSets\":[{\"name\":\"workers\",\"count\":4,"
        "\"flavors\":{\"cpu\":\"default-cpu\",\"memory\":\"on-demand\"}}],"
        "\"reason\":\"QuotaReserved\",\"message\":\"m\",\"zeta\":\"z\"}");
    xfree(line);
}

static void test_record_without_fields_and_time_fields_ignored(void **state)
{
    (void)state;
    char *line = fmt(100, "Admitted", NULL);
    assert_string_equal(line, "{\"time\":0.1,\"event\":\"Admitted\"}");
    xfree(line);
    line = fmt(3000, "Pending", json_pack("{s:f, s:s}", "time", 99.0, "event", "X"));
    assert_string_equal(line, "{\"time\":3,\"event\":\"Pending\"}");
    xfree(line);
}

static void test_strings_are_escaped(void **state)
{
    (void)state;
    char *line = fmt(0, "Pending", json_pack("{s:s}", "message", "a \"quoted\"\nline"));
    assert_string_equal(line, "{\"time\":0,\"event\":\"Pending\",\"message\":"
                              "\"a \\\"quoted\\\"\\nline\"}");
    xfree(line);
}

/* sim_trace_emit counts records per event in s->event_counts, remembering
 * each counter by the address of the event name: a name at an address that
 * held another name (a reused buffer) must count as its own event. */
static void test_event_counts_follow_names_not_addresses(void **state)
{
    (void)state;
    struct sim_scenario sc;
    memset(&sc, 0, sizeof(sc));
    struct sim *s = xcalloc(1, sizeof(*s));
    s->sc = &sc;
    clk_virtual_init(&s->clock, 0);
    s->event_counts = json_object();
    char buf[32];
    snprintf(buf, sizeof(buf), "%s", "Pending");
    sim_trace_emit(s, buf, NULL);
    sim_trace_emit(s, buf, NULL);
    snprintf(buf, sizeof(buf), "%s", "Admitted"); /* same address, another event */
    sim_trace_emit(s, buf, NULL);
    sim_trace_emit(s, "Pending", NULL); /* another address, a counted event */
    snprintf(buf, sizeof(buf), "%s", "Pending");
    sim_trace_emit(s, buf, NULL);
    for (int i = 0; i < 40; i++) /* many events: slots replaced */
        sim_trace_emit(s, i % 2 ? "Finished" : "Evicted", NULL);
    snprintf(buf, sizeof(buf), "%s", "Admitted");
    sim_trace_emit(s, buf, NULL);
    assert_int_equal(json_integer_value(json_object_get(s->event_counts, "Pending")), 4);
    assert_int_equal(json_integer_value(json_object_get(s->event_counts, "Admitted")), 2);
    assert_int_equal(json_integer_value(json_object_get(s->event_counts, "Finished")), 20);
    assert_int_equal(json_integer_value(json_object_get(s->event_counts, "Evicted")), 20);
    assert_int_equal(json_object_size(s->event_counts), 4);
    assert_int_equal(s->n_records, 46);
    json_decref(s->event_counts);
    xfree(s);
}

static void test_contract_events_are_derived(void **state)
{
    (void)state;
    assert_true(sim_trace_is_derived("QuotaReserved"));
    assert_true(sim_trace_is_derived("NodesScaledDown"));
    assert_true(sim_trace_is_derived("ProvisioningRequestUpdated"));
    assert_false(sim_trace_is_derived("FlavorFallback"));
    assert_false(sim_trace_is_derived(NULL));
}

/* ---- check ---- */

static json_t *trace(void)
{
    return json_pack("[{s:f,s:s,s:s}, {s:f,s:s,s:s,s:[{s:s,s:i}]}, {s:f,s:s,s:s},"
                     " {s:f,s:s,s:s,s:s}, {s:f,s:s,s:s}]",
                     "time", 0.0, "event", "Pending", "workload", "default/b",
                     "time", 1.0, "event", "QuotaReserved", "workload", "default/a",
                     "podSets", "name", "main", "count", 1,
                     "time", 1.0, "event", "Admitted", "workload", "default/a",
                     "time", 2.5, "event", "Pending", "workload", "default/b", "reason",
                     "WaitingForQuota",
                     "time", 3.0, "event", "Finished", "workload", "default/a");
}

static int run_check_warnings(const char *facts_json, json_t *warnings, char **report)
{
    json_error_t e;
    json_t *facts = json_loads(facts_json, 0, &e);
    assert_non_null(facts);
    json_t *recs = trace();
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    int rc = sim_check(facts, recs, warnings, out);
    fclose(out);
    *report = buf;
    json_decref(facts);
    json_decref(recs);
    return rc;
}

static int run_check(const char *facts_json, char **report)
{
    return run_check_warnings(facts_json, NULL, report);
}

static void test_facts_match_in_order_as_a_subsequence(void **state)
{
    (void)state;
    char *r;
    assert_int_equal(run_check("[{\"event\":\"QuotaReserved\",\"workload\":\"default/a\","
                               "\"podSets\":[{\"name\":\"main\",\"count\":1}]},"
                               "{\"event\":\"Pending\",\"workload\":\"default/b\",\"time\":2.5},"
                               "{\"event\":\"Finished\",\"time\":3}]", &r), 0);
    assert_non_null(strstr(r, "ok: 3 facts hold"));
    free(r);
    /* order matters: Finished before QuotaReserved does not hold */
    assert_int_equal(run_check("[{\"event\":\"Finished\"},{\"event\":\"QuotaReserved\"}]", &r), 1);
    assert_non_null(strstr(r, "FAIL: no record matches expect[1]"));
    assert_non_null(strstr(r, "searched after #5"));
    free(r);
}

static void test_field_values_must_be_exact(void **state)
{
    (void)state;
    char *r;
    /* a sub-object must match whole: a missing key in the fact fails */
    assert_int_equal(run_check("[{\"event\":\"QuotaReserved\",\"podSets\":[{\"name\":\"main\"}]}]",
                               &r), 1);
    assert_non_null(strstr(r, "records about the same event"));
    free(r);
    assert_int_equal(run_check("[{\"event\":\"Pending\",\"workload\":\"default/b\","
                               "\"reason\":\"NoFit\"}]", &r), 1);
    assert_non_null(strstr(r, "records about the same workload"));
    assert_non_null(strstr(r, "#4 {\"time\":2.5,\"event\":\"Pending\",\"workload\":\"default/b\","
                              "\"reason\":\"WaitingForQuota\"}"));
    free(r);
}

static void test_tilde_keys_match_globs(void **state)
{
    (void)state;
    char *r;
    assert_int_equal(run_check("[{\"event\":\"Pending\",\"workload~\":\"default/*\","
                               "\"reason~\":\"Waiting*\"}]", &r), 0);
    free(r);
    assert_int_equal(run_check("[{\"event\":\"Admitted\",\"workload~\":\"other/*\"}]", &r), 1);
    assert_non_null(strstr(r, "no record about the same workload"));
    free(r);
    /* a glob key needs a string record value */
    assert_int_equal(run_check("[{\"event\":\"QuotaReserved\",\"podSets~\":\"*\"}]", &r), 1);
    free(r);
}

static void test_negative_facts_cover_the_gap_between_matches(void **state)
{
    (void)state;
    char *r;
    /* no Admitted for b anywhere */
    assert_int_equal(run_check("[{\"notEvent\":\"Admitted\",\"workload\":\"default/b\"}]", &r), 0);
    free(r);
    /* no Pending between a's reservation and its finish: there is one (t=2.5) */
    assert_int_equal(run_check("[{\"event\":\"QuotaReserved\"},{\"notEvent\":\"Pending\"},"
                               "{\"event\":\"Finished\"}]", &r), 1);
    assert_non_null(strstr(r, "unexpected record for expect[1]"));
    free(r);
    /* ... but none between the reservation and the admission */
    assert_int_equal(run_check("[{\"event\":\"QuotaReserved\"},{\"notEvent\":\"Pending\"},"
                               "{\"event\":\"Admitted\"}]", &r), 0);
    free(r);
}

/* A fact naming an event the trace never has, or a key no record has, is
 * malformed (exit 2), not a fact that quietly fails or always holds. */
static void test_unknown_events_and_keys_are_malformed(void **state)
{
    (void)state;
    char *r;
    assert_int_equal(run_check("[{\"event\":\"Bogus\"}]", &r), -1);
    assert_non_null(strstr(r, "malformed expect[0]: unknown event \"Bogus\""));
    free(r);
    assert_int_equal(run_check("[{\"event\":\"Admitted\"},{\"notEvent\":\"Evicted\","
                               "\"workload\":\"default/a\",\"resaon\":\"Preempted\"}]", &r), -1);
    assert_non_null(strstr(r, "malformed expect[1]: unknown key \"resaon\""));
    free(r);
    assert_int_equal(run_check("[{\"event\":\"Admitted\",\"foo~\":\"*\"}]", &r), -1);
    assert_non_null(strstr(r, "unknown key \"foo~\""));
    free(r);
    /* a value of the wrong type can never match: malformed too */
    assert_int_equal(run_check("[{\"event\":\"Admitted\",\"time\":\"x\"}]", &r), -1);
    assert_non_null(strstr(r, "malformed expect[0]: key \"time\" takes a number"));
    free(r);
    assert_int_equal(run_check("[{\"event\":\"Admitted\",\"workload~\":3}]", &r), -1);
    assert_non_null(strstr(r, "takes a string pattern"));
    free(r);
}

/* Warning facts: the no-pool warning of a run can be asserted by a
 * conformance scenario (order-free, beside the trace facts). */
static void test_warning_facts_match_the_runs_warnings(void **state)
{
    (void)state;
    char *r;
    json_t *w = json_pack("[s,s]", "pods of Job default/a never found a node: no NodePool",
                          "something else");
    assert_int_equal(run_check_warnings("[{\"event\":\"Admitted\"},"
                                        "{\"warning~\":\"pods of Job default/a never*\"},"
                                        "{\"warning\":\"something else\"},"
                                        "{\"notWarning~\":\"*still busy*\"}]", w, &r), 0);
    assert_non_null(strstr(r, "ok: 4 facts hold (1 matched in order, 5 trace records; 3 about "
                              "2 warnings)"));
    free(r);
    assert_int_equal(run_check_warnings("[{\"warning~\":\"*default/b*\"},"
                                        "{\"notWarning~\":\"*never found*\"}]", w, &r), 2);
    assert_non_null(strstr(r, "FAIL: no warning matches expect[0]"));
    assert_non_null(strstr(r, "  warning: something else"));
    assert_non_null(strstr(r, "FAIL: a warning matches expect[1]"));
    free(r);
    assert_int_equal(run_check_warnings("[{\"warning\":\"x\"}]", NULL, &r), 1);
    assert_non_null(strstr(r, "the run gave no warning"));
    free(r);
    assert_int_equal(run_check_warnings("[{\"warning\":\"x\",\"event\":\"Admitted\"}]", w, &r),
                     -1);
    assert_non_null(strstr(r, "malformed expect[0]: a warning fact has one string key"));
    free(r);
    json_decref(w);
}

static void test_malformed_facts_are_reported(void **state)
{
    (void)state;
    char *r;
    assert_int_equal(run_check("[{\"workload\":\"default/a\"}]", &r), -1);
    assert_non_null(strstr(r, "malformed expect[0]"));
    free(r);
    assert_int_equal(run_check("[]", &r), -1);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys_come_in_contract_order_then_sorted),
        cmocka_unit_test(test_record_without_fields_and_time_fields_ignored),
        cmocka_unit_test(test_strings_are_escaped),
        cmocka_unit_test(test_event_counts_follow_names_not_addresses),
        cmocka_unit_test(test_contract_events_are_derived),
        cmocka_unit_test(test_facts_match_in_order_as_a_subsequence),
        cmocka_unit_test(test_field_values_must_be_exact),
        cmocka_unit_test(test_tilde_keys_match_globs),
        cmocka_unit_test(test_negative_facts_cover_the_gap_between_matches),
        cmocka_unit_test(test_unknown_events_and_keys_are_malformed),
        cmocka_unit_test(test_warning_facts_match_the_runs_warnings),
        cmocka_unit_test(test_malformed_facts_are_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
