/*
 * Conditions (api_cond_set / api_cond_get / api_cond_remove): metav1's
 * SetStatusCondition rules, and that a condition array or condition object
 * shared with another document (a stored one) is replaced by a changed
 * copy instead of being changed in place.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "abort_check.h"

#include "api/meta.h"
#include "util/jsonx.h"

#define T0 INT64_C(1767225600000) /* 2026-01-01T00:00:00Z */

static json_t *obj_with_generation(int gen)
{
    return json_pack("{s:{s:s, s:i}}", "metadata", "name", "x", "generation", gen);
}

static void set_follows_set_status_condition(void **state)
{
    (void)state;
    json_t *o = obj_with_generation(2);
    assert_true(api_cond_set(o, "Ready", "False", "Wait", "not yet", T0));
    json_t *c = api_cond_get(o, "Ready");
    assert_string_equal(JX_STR(c, "lastTransitionTime"), "2026-01-01T00:00:00Z");
    assert_int_equal(JX_INT(c, -1, "observedGeneration"), 2);
    /* same values: nothing changes */
    assert_false(api_cond_set(o, "Ready", "False", "Wait", "not yet", T0 + 5000));
    /* reason and message change without a transition */
    assert_true(api_cond_set(o, "Ready", "False", "Still", "soon", T0 + 5000));
    assert_string_equal(JX_STR(api_cond_get(o, "Ready"), "lastTransitionTime"),
                        "2026-01-01T00:00:00Z");
    assert_true(api_cond_set(o, "Ready", "True", "Done", NULL, T0 + 7000));
    c = api_cond_get(o, "Ready");
    assert_string_equal(JX_STR(c, "lastTransitionTime"), "2026-01-01T00:00:07Z");
    assert_string_equal(JX_STR(c, "message"), "");
    assert_true(api_cond_is_true(o, "Ready"));
    assert_true(api_cond_set(o, "Other", "True", "R", "M", T0));
    assert_true(api_cond_remove(o, "Ready"));
    assert_null(api_cond_get(o, "Ready"));
    assert_false(api_cond_remove(o, "Ready"));
    assert_non_null(api_cond_get(o, "Other"));
    json_decref(o);
}

/* api_cond_would_change answers what api_cond_set would return, without
 * changing anything. */
static void would_change_predicts_set(void **state)
{
    (void)state;
    json_t *o = obj_with_generation(3);
    assert_true(api_cond_would_change(o, "Ready", "False", "Wait", "not yet")); /* absent */
    api_cond_set(o, "Ready", "False", "Wait", "not yet", T0);
    json_t *before = json_deep_copy(o);
    assert_false(api_cond_would_change(o, "Ready", "False", "Wait", "not yet"));
    assert_true(api_cond_would_change(o, "Ready", "True", "Wait", "not yet"));
    assert_true(api_cond_would_change(o, "Ready", "False", "Other", "not yet"));
    assert_true(api_cond_would_change(o, "Ready", "False", "Wait", NULL));
    assert_true(api_cond_would_change(o, "Other", "False", "Wait", "not yet"));
    assert_true(json_equal(o, before)); /* only read */
    /* a new generation: observedGeneration would change */
    json_object_set_new(JX_OBJ(o, "metadata"), "generation", json_integer(4));
    assert_true(api_cond_would_change(o, "Ready", "False", "Wait", "not yet"));
    assert_true(api_cond_set(o, "Ready", "False", "Wait", "not yet", T0));
    assert_false(api_cond_would_change(o, "Ready", "False", "Wait", "not yet"));
    json_decref(before);
    json_decref(o);
}

static void shared_conditions_are_copied_before_a_change(void **state)
{
    (void)state;
    json_t *stored = obj_with_generation(1);
    api_cond_set(stored, "A", "True", "R", "M", T0);
    api_cond_set(stored, "B", "False", "R", "M", T0);
    json_t *stored_conds = JX_GET(stored, "status", "conditions");
    json_t *stored_a = api_cond_get(stored, "A");
    json_t *stored_b = api_cond_get(stored, "B");
    /* a copy sharing the conditions array */
    json_t *cp = json_pack("{s:O, s:{s:O}}", "metadata", JX_GET(stored, "metadata"), "status",
                           "conditions", stored_conds);
    assert_false(api_cond_set(cp, "A", "True", "R", "M", T0 + 1000)); /* no change, no copy */
    assert_ptr_equal(JX_GET(cp, "status", "conditions"), stored_conds);
    assert_true(api_cond_set(cp, "A", "False", "R2", "M2", T0 + 1000));
    assert_ptr_not_equal(JX_GET(cp, "status", "conditions"), stored_conds);
    assert_ptr_not_equal(api_cond_get(cp, "A"), stored_a);
    assert_ptr_equal(api_cond_get(cp, "B"), stored_b); /* untouched ones stay shared */
    assert_false(api_cond_is_true(cp, "A"));
    /* the stored document is unchanged */
    assert_true(api_cond_is_true(stored, "A"));
    assert_string_equal(JX_STR(stored_a, "reason"), "R");
    assert_int_equal(json_array_size(stored_conds), 2);
    /* a private array with a shared condition: only the condition is copied */
    json_t *arr = JX_GET(cp, "status", "conditions");
    assert_true(api_cond_set(cp, "B", "True", "R", "M", T0 + 2000));
    assert_ptr_equal(JX_GET(cp, "status", "conditions"), arr);
    assert_ptr_not_equal(api_cond_get(cp, "B"), stored_b);
    assert_string_equal(JX_STR(stored_b, "status"), "False");
    json_decref(cp);
    json_decref(stored);
}

/* A change to an existing condition, whether the condition is the
 * document's own or shared with another version, gives the same condition,
 * member order included (it is rebuilt in one pass), and never touches the
 * shared one: for a transition, a reason or message change, a new
 * generation, and a condition missing members. */
static void changed_condition_is_rebuilt_in_order(void **state)
{
    (void)state;
    struct {
        const char *cond; /* the condition before, as JSON */
        int gen;
        const char *status, *reason, *message;
        const char *want; /* after, compact JSON */
    } cases[] = {
        {"{\"type\":\"A\",\"status\":\"False\",\"lastTransitionTime\":\"x\","
         "\"reason\":\"R\",\"message\":\"M\",\"observedGeneration\":1}",
         1, "True", "R", "M",
         "{\"type\":\"A\",\"status\":\"True\",\"lastTransitionTime\":\"2026-01-01T00:00:09Z\","
         "\"reason\":\"R\",\"message\":\"M\",\"observedGeneration\":1}"},
        {"{\"type\":\"A\",\"status\":\"False\",\"lastTransitionTime\":\"x\","
         "\"reason\":\"R\",\"message\":\"M\",\"observedGeneration\":1}",
         1, "False", "R2", NULL,
         "{\"type\":\"A\",\"status\":\"False\",\"lastTransitionTime\":\"x\","
         "\"reason\":\"R2\",\"message\":\"\",\"observedGeneration\":1}"},
        {"{\"type\":\"A\",\"status\":\"False\",\"lastTransitionTime\":\"x\","
         "\"reason\":\"R\",\"message\":\"M\",\"observedGeneration\":1}",
         3, "False", "R", "M",
         "{\"type\":\"A\",\"status\":\"False\",\"lastTransitionTime\":\"x\","
         "\"reason\":\"R\",\"message\":\"M\",\"observedGeneration\":3}"},
        {"{\"message\":\"M\",\"extra\":true,\"type\":\"A\",\"observedGeneration\":\"1\"}",
         2, "True", NULL, "M",
         "{\"message\":\"M\",\"extra\":true,\"type\":\"A\",\"observedGeneration\":2,"
         "\"status\":\"True\",\"lastTransitionTime\":\"2026-01-01T00:00:09Z\",\"reason\":\"\"}"},
        {"{\"type\":\"A\",\"status\":\"True\"}", 0, "True", "R", "M",
         "{\"type\":\"A\",\"status\":\"True\",\"reason\":\"R\",\"message\":\"M\"}"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *priv = obj_with_generation(cases[i].gen);
        json_t *shared = obj_with_generation(cases[i].gen);
        json_t *c = json_loads(cases[i].cond, 0, NULL);
        assert_non_null(c);
        JX_SET_NEW(priv, json_pack("[O]", c), "status", "conditions");
        JX_SET_NEW(shared, json_pack("[O]", c), "status", "conditions");
        /* priv's condition is its own; shared's is held by c too */
        json_array_set_new(JX_GET(priv, "status", "conditions"), 0, json_deep_copy(c));
        char *before = json_dumps(c, 0);
        json_t *docs[] = {priv, shared};
        for (size_t d = 0; d < 2; d++) {
            assert_true(api_cond_set(docs[d], "A", cases[i].status, cases[i].reason,
                                     cases[i].message, T0 + 9000));
            char *got = json_dumps(api_cond_get(docs[d], "A"), JSON_COMPACT);
            assert_string_equal(got, cases[i].want);
            free(got);
        }
        assert_ptr_not_equal(api_cond_get(shared, "A"), c);
        char *after = json_dumps(c, 0);
        assert_string_equal(after, before); /* the shared one is untouched */
        free(before);
        free(after);
        json_decref(c);
        json_decref(priv);
        json_decref(shared);
    }
}

static json_t *doc_of_kind(const char *kind)
{
    return json_pack("{s:s, s:s, s:{s:s, s:i}}", "apiVersion", "v1", "kind", kind, "metadata",
                     "name", "x", "generation", 1);
}

static void assert_same_json(const json_t *a, const json_t *b)
{
    char *x = json_dumps(a, JSON_COMPACT);
    char *y = json_dumps(b, JSON_COMPACT);
    assert_string_equal(x, y);
    free(x);
    free(y);
}

/* A Workload's condition equal to one just set on another Workload is the
 * same object (api_cond_set's table), and every document reads as the
 * plain build writes it (an object of another kind, which never shares):
 * member order, a condition not in api_cond_set's order, a text that is not
 * UTF-8. A message-only change keeps the status and lastTransitionTime
 * values (what kueue_memo compares by identity), Evicted its reason too;
 * changing one sharer leaves the others as they were. */
static void workload_conditions_are_shared_and_read_as_built(void **state)
{
    (void)state;
    json_t *w1 = doc_of_kind("Workload"), *w2 = doc_of_kind("Workload");
    json_t *job = doc_of_kind("Job"), *plain = doc_of_kind("Other");
    json_t *docs[] = {w1, w2, job, plain};
    for (size_t d = 0; d < 4; d++)
        assert_true(api_cond_set(docs[d], "Admitted", "True", "Admitted", "in", T0));
    const json_t *a1 = api_cond_get(w1, "Admitted");
    assert_ptr_equal(api_cond_get(w2, "Admitted"), a1);
    assert_ptr_not_equal(api_cond_get(job, "Admitted"), a1); /* Jobs' are changed after */
    assert_same_json(a1, api_cond_get(plain, "Admitted"));
    /* instants of the same second write the same text: shared too */
    assert_true(api_cond_set(w1, "Sub", "True", "R", "m", T0 + 100));
    assert_true(api_cond_set(w2, "Sub", "True", "R", "m", T0 + 900));
    assert_ptr_equal(api_cond_get(w1, "Sub"), api_cond_get(w2, "Sub"));
    assert_true(api_cond_remove(w1, "Sub") && api_cond_remove(w2, "Sub"));
    /* a message-only change keeps status and lastTransitionTime values */
    const json_t *st = JX_GET(a1, "status"), *ltt = JX_GET(a1, "lastTransitionTime");
    for (size_t d = 0; d < 4; d++)
        assert_true(api_cond_set(docs[d], "Admitted", "True", "Admitted", "again", T0 + 5000));
    const json_t *b1 = api_cond_get(w1, "Admitted");
    assert_ptr_equal(JX_GET(b1, "status"), st);
    assert_ptr_equal(JX_GET(b1, "lastTransitionTime"), ltt);
    assert_ptr_equal(api_cond_get(w2, "Admitted"), b1);
    assert_same_json(b1, api_cond_get(plain, "Admitted"));
    /* a transition, then one back at the same instant */
    for (size_t d = 0; d < 4; d++) {
        assert_true(api_cond_set(docs[d], "Admitted", "False", "No", "out", T0 + 9000));
        assert_true(api_cond_set(docs[d], "Admitted", "True", "Admitted", "again", T0 + 9000));
    }
    assert_same_json(api_cond_get(w1, "Admitted"), api_cond_get(plain, "Admitted"));
    assert_ptr_equal(api_cond_get(w1, "Admitted"), api_cond_get(w2, "Admitted"));
    /* changing one sharer leaves the other as it was */
    assert_true(api_cond_set(w1, "Admitted", "True", "Admitted", "w1 only", T0 + 9000));
    assert_true(api_cond_set(plain, "Admitted", "True", "Admitted", "w1 only", T0 + 9000));
    assert_string_equal(JX_STR(api_cond_get(w2, "Admitted"), "message"), "again");
    /* Evicted keeps its own reason value when the reason stays */
    for (size_t d = 0; d < 4; d++)
        assert_true(api_cond_set(docs[d], "Evicted", "True", "Preempted", "m1", T0));
    const json_t *r2 = JX_GET(api_cond_get(w2, "Evicted"), "reason");
    json_t *own = json_string("Preempted"); /* w1's reason, a value of its own */
    json_t *ev1 = json_deep_copy(api_cond_get(w1, "Evicted"));
    json_object_set_new(ev1, "reason", own);
    json_array_set_new(JX_GET(w1, "status", "conditions"), 1, ev1);
    for (size_t d = 0; d < 4; d++)
        assert_true(api_cond_set(docs[(d + 1) % 4], "Evicted", "True", "Preempted", "m2", T0));
    assert_ptr_equal(JX_GET(api_cond_get(w2, "Evicted"), "reason"), r2);
    assert_ptr_equal(JX_GET(api_cond_get(w1, "Evicted"), "reason"), own);
    /* not in api_cond_set's order; a message that is not UTF-8 */
    const char *odd = "{\"message\":\"M\",\"extra\":true,\"type\":\"Odd\"}";
    for (size_t d = 0; d < 4; d++) {
        json_array_append_new(JX_GET(docs[d], "status", "conditions"), json_loads(odd, 0, NULL));
        assert_true(api_cond_set(docs[d], "Odd", "True", "R", "M2", T0));
        assert_true(api_cond_set(docs[d], "Bad", "True", "R", "\xff", T0));
        assert_true(api_cond_set(docs[d], "Bad", "True", "R", "", T0)); /* it had none */
        assert_false(api_cond_set(docs[d], "Bad", "True", "R", "", T0));
    }
    assert_same_json(JX_GET(w1, "status", "conditions"), JX_GET(plain, "status", "conditions"));
    assert_same_json(JX_GET(w2, "status", "conditions"), JX_GET(job, "status", "conditions"));
    for (size_t d = 0; d < 4; d++)
        json_decref(docs[d]);
}

/* api_cond_set reads the table's own conditions from the table (found by
 * address): a Workload holding them, or holding one the table has since let
 * go (thousands of other conditions set meanwhile), reads and changes as a
 * document of another kind does. */
static void table_conditions_read_the_same_after_the_table_moved_on(void **state)
{
    (void)state;
    json_t *w = doc_of_kind("Workload"), *plain = doc_of_kind("Other");
    json_t *docs[] = {w, plain};
    for (size_t d = 0; d < 2; d++) {
        assert_true(api_cond_set(docs[d], "A", "True", "RA", "ma", T0));
        assert_true(api_cond_set(docs[d], "B", "False", "RB", "mb", T0));
        assert_true(api_cond_set(docs[d], "C", "True", "RC", "mc", T0));
    }
    json_t *held = json_incref(api_cond_get(w, "B")); /* the table's */
    for (size_t d = 0; d < 2; d++) { /* unchanged: found by address */
        assert_false(api_cond_set(docs[d], "B", "False", "RB", "mb", T0 + 1000));
        assert_false(api_cond_set(docs[d], "C", "True", "RC", "mc", T0 + 1000));
    }
    /* the table moves on: its entries now hold other conditions */
    json_t *scratch = doc_of_kind("Workload");
    char msg[32];
    for (int i = 0; i < 5000; i++) {
        snprintf(msg, sizeof(msg), "m%d", i);
        assert_true(api_cond_set(scratch, "Fill", i % 2 ? "True" : "False", "R", msg, T0 + i));
    }
    json_decref(scratch);
    assert_ptr_equal(api_cond_get(w, "B"), held);
    for (size_t d = 0; d < 2; d++) {
        assert_false(api_cond_set(docs[d], "B", "False", "RB", "mb", T0 + 2000));
        assert_false(api_cond_set(docs[d], "A", "True", "RA", "ma", T0 + 2000));
        assert_true(api_cond_set(docs[d], "B", "False", "RB", "changed", T0 + 3000));
        assert_true(api_cond_set(docs[d], "C", "False", "RC", "mc", T0 + 3000));
        assert_true(api_cond_set(docs[d], "A", "True", "RA", "ma", T0 + 4000) == false);
    }
    assert_same_json(JX_GET(w, "status", "conditions"), JX_GET(plain, "status", "conditions"));
    assert_string_equal(JX_STR(held, "message"), "mb"); /* never changed in place */
    json_decref(held);
    for (size_t d = 0; d < 2; d++)
        json_decref(docs[d]);
}

/* The transition time formatted for one instant is reused for the next
 * condition set at that instant, and reformatted for another instant. */
static void transition_times_follow_each_call(void **state)
{
    (void)state;
    json_t *o = obj_with_generation(1);
    const int64_t at[] = {T0, T0, T0 + 61000, T0, T0 + 86400000};
    const char *want[] = {"2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z",
                          "2026-01-01T00:01:01Z", "2026-01-01T00:00:00Z",
                          "2026-01-02T00:00:00Z"};
    char type[8];
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
        snprintf(type, sizeof(type), "C%zu", i);
        assert_true(api_cond_set(o, type, "True", "R", "M", at[i]));
        assert_string_equal(JX_STR(api_cond_get(o, type), "lastTransitionTime"), want[i]);
    }
    /* a transition of an existing condition, in place and in a shared copy */
    assert_true(api_cond_set(o, "C0", "False", "R", "M", T0 + 61000));
    assert_string_equal(JX_STR(api_cond_get(o, "C0"), "lastTransitionTime"),
                        "2026-01-01T00:01:01Z");
    json_t *shared = json_incref(api_cond_get(o, "C1"));
    assert_true(api_cond_set(o, "C1", "False", "R", "M", T0 + 86400000));
    assert_string_equal(JX_STR(api_cond_get(o, "C1"), "lastTransitionTime"),
                        "2026-01-02T00:00:00Z");
    assert_string_equal(JX_STR(shared, "lastTransitionTime"), "2026-01-01T00:00:00Z");
    json_decref(shared);
    json_decref(o);
}

static void get_all_finds_the_first_of_each_type_in_one_pass(void **state)
{
    (void)state;
    json_t *o = json_loads("{\"status\":{\"conditions\":[{\"type\":\"B\",\"status\":\"1\"},"
                           "{\"type\":\"A\",\"status\":\"2\"},{\"type\":\"B\",\"status\":\"3\"}]}}",
                           0, NULL);
    static const char *const types[] = {"A", "B", "C"};
    const json_t *c[3];
    api_cond_get_all(o, types, 3, c);
    assert_ptr_equal(c[0], api_cond_get(o, "A"));
    assert_ptr_equal(c[1], api_cond_get(o, "B"));
    assert_string_equal(JX_STR(c[1], "status"), "1");
    assert_null(c[2]);
    api_cond_get_all(NULL, types, 3, c);
    assert_null(c[0]);
    /* the same over the array in hand; none in NULL or a non-array */
    const json_t *d[3];
    api_cond_find_all(JX_GET(o, "status", "conditions"), types, 3, d);
    assert_ptr_equal(d[0], api_cond_get(o, "A"));
    assert_ptr_equal(d[1], api_cond_get(o, "B"));
    assert_null(d[2]);
    api_cond_find_all(JX_GET(o, "status"), types, 3, d);
    assert_null(d[0]);
    assert_null(d[1]);
    json_decref(o);
}

/* "type" first (as api_cond_set writes it) or anywhere else: the same
 * answer; none, or not a string: NULL. */
static void cond_type_wherever_the_member_is(void **state)
{
    (void)state;
    json_t *o = json_loads("{\"status\":{\"conditions\":[{\"status\":\"True\",\"type\":\"Late\"},"
                           "{\"type\":\"First\",\"status\":\"False\"},{\"status\":\"True\"},"
                           "{\"type\":7},{\"typeX\":\"A\",\"type\":\"B\"}]}}",
                           JSON_PRESERVE_ORDER, NULL);
    json_t *conds = JX_GET(o, "status", "conditions");
    assert_string_equal(api_cond_type(json_array_get(conds, 0)), "Late");
    assert_string_equal(api_cond_type(json_array_get(conds, 1)), "First");
    assert_null(api_cond_type(json_array_get(conds, 2)));
    assert_null(api_cond_type(json_array_get(conds, 3)));
    assert_string_equal(api_cond_type(json_array_get(conds, 4)), "B");
    assert_null(api_cond_type(NULL));
    json_t *str = json_string("type");
    assert_null(api_cond_type(str));
    json_decref(str);
    assert_string_equal(JX_STR(api_cond_get(o, "Late"), "status"), "True");
    assert_true(api_cond_set(o, "New", "True", "R", "m", 0));
    assert_string_equal(api_cond_type(json_array_get(conds, 5)), "New");
    json_decref(o);
}

/* api_cond_holds: status "True" only; an absent condition, another
 * status, a missing or non-string status do not hold. */
static void found_condition_holds_only_when_true(void **state)
{
    (void)state;
    const char *const yes[] = {"{\"type\":\"A\",\"status\":\"True\"}"};
    const char *const no[] = {"{\"type\":\"A\",\"status\":\"False\"}",
                              "{\"type\":\"A\",\"status\":\"Unknown\"}",
                              "{\"type\":\"A\",\"status\":\"true\"}",
                              "{\"type\":\"A\"}", "{\"type\":\"A\",\"status\":true}"};
    assert_false(api_cond_holds(NULL));
    const char *const *sets[] = {yes, no};
    const size_t lens[] = {sizeof(yes) / sizeof(yes[0]), sizeof(no) / sizeof(no[0])};
    for (size_t k = 0; k < 2; k++) {
        for (size_t i = 0; i < lens[k]; i++) {
            json_t *c = json_loads(sets[k][i], 0, NULL);
            assert_non_null(c);
            assert_int_equal(api_cond_holds(c), k == 0);
            json_decref(c);
        }
    }
}

/* api_name/api_namespace/api_uid/api_is_deleting find the members wherever
 * they are (near the front of metadata or not), and only strings. */
static void metadata_members_wherever_they_are(void **state)
{
    (void)state;
    json_t *front = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind", "X",
                              "metadata", "name", "a", "namespace", "ns", "uid", "u1");
    assert_string_equal(api_name(front), "a");
    assert_string_equal(api_namespace(front), "ns");
    assert_string_equal(api_uid(front), "u1");
    assert_false(api_is_deleting(front));
    json_t *late = json_pack("{s:s, s:s, s:{}, s:s, s:{s:s, s:s, s:s, s:s, s:s, s:i, s:s, s:s}}",
                             "apiVersion", "v1", "kind", "X", "spec", "status", "s", "metadata",
                             "labels", "l", "annotations", "a", "creationTimestamp", "t",
                             "resourceVersion", "7", "finalizers", "f", "generation", 3, "uid",
                             "u2", "namespace", "ns2");
    json_object_set_new(JX_GET(late, "metadata"), "name", json_string("b"));
    json_object_set_new(JX_GET(late, "metadata"), "deletionTimestamp", json_string("t"));
    assert_string_equal(api_name(late), "b");
    assert_string_equal(api_namespace(late), "ns2");
    assert_string_equal(api_uid(late), "u2");
    assert_true(api_is_deleting(late));
    json_t *odd = json_pack("{s:{s:i, s:n, s:b}}", "metadata", "name", 1, "namespace", "uid", 1);
    assert_null(api_name(odd));
    assert_null(api_namespace(odd));
    assert_null(api_uid(odd));
    json_t *none = json_pack("{s:s}", "kind", "X");
    assert_null(api_name(none));
    assert_null(api_name(NULL));
    assert_false(api_is_deleting(none));
    json_decref(front);
    json_decref(late);
    json_decref(odd);
    json_decref(none);
}

/* api_cond_time_ms remembers the last instant parsed: alternating ones
 * still read right. */
static void condition_times_read_back_alternating(void **state)
{
    (void)state;
    json_t *o = obj_with_generation(1);
    api_cond_set(o, "A", "True", "R", "m", T0);
    api_cond_set(o, "B", "True", "R", "m", T0 + 61000);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(api_cond_time_ms(o, "A"), T0);
        assert_int_equal(api_cond_time_ms(o, "B"), T0 + 61000);
    }
    assert_int_equal(api_cond_time_ms(o, "C"), 0);
    assert_int_equal(api_cond_ltt_ms(api_cond_get(o, "B")), T0 + 61000);
    assert_int_equal(api_cond_ltt_ms(api_cond_get(o, "A")), T0);
    assert_int_equal(api_cond_ltt_ms(NULL), 0);
    json_t *late = json_pack("{s:s, s:s}", "type", "L", "lastTransitionTime",
                             "2026-01-01T00:00:02Z"); /* not where api_cond_set puts it */
    assert_int_equal(api_cond_ltt_ms(late), T0 + 2000);
    json_decref(late);
    json_object_set_new(api_cond_get(o, "A"), "lastTransitionTime", json_string("bad"));
    assert_int_equal(api_cond_time_ms(o, "A"), 0);
    assert_int_equal(api_cond_ltt_ms(api_cond_get(o, "A")), 0);
    assert_int_equal(api_cond_time_ms(o, "B"), T0 + 61000);
    json_decref(o);
}

/* The shared condition table's invariant (a condition it hands out is
 * the one api_cond_set would build) is checked on every hit in debug
 * builds: a shared condition changed in place (a member added behind the
 * table's back) makes the next set that finds it abort instead of writing
 * it into another Workload. */
#ifndef NDEBUG /* the body of a test that runs in debug builds only */
static void set_over_stale_condition(void *arg)
{
    (void)arg;
    const int64_t t = INT64_C(1767225600000);
    json_t *a = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "kueue.x-k8s.io/v1beta1", "kind",
                          "Workload", "metadata", "name", "a");
    json_t *b = json_deep_copy(a);
    json_t *c = json_deep_copy(a);
    api_cond_set(a, "Admitted", "True", "Admitted", "The workload is admitted", t);
    api_cond_set(b, "Admitted", "True", "Admitted", "The workload is admitted", t);
    json_t *ca = json_array_get(JX_GET(a, "status", "conditions"), 0);
    if (ca != json_array_get(JX_GET(b, "status", "conditions"), 0))
        _exit(3); /* not shared: the table did not apply */
    json_object_set_new(ca, "extra", json_true());
    api_cond_set(c, "Admitted", "True", "Admitted", "The workload is admitted", t); /* must abort */
}
#endif

static void stale_shared_condition_aborts_in_debug_builds(void **state)
{
    (void)state;
#ifdef NDEBUG
    skip(); /* the check is compiled in debug builds only (make test's ASan build) */
#else
    assert_child_aborts(set_over_stale_condition, NULL);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(set_follows_set_status_condition),
        cmocka_unit_test(would_change_predicts_set),
        cmocka_unit_test(shared_conditions_are_copied_before_a_change),
        cmocka_unit_test(changed_condition_is_rebuilt_in_order),
        cmocka_unit_test(workload_conditions_are_shared_and_read_as_built),
        cmocka_unit_test(table_conditions_read_the_same_after_the_table_moved_on),
        cmocka_unit_test(found_condition_holds_only_when_true),
        cmocka_unit_test(transition_times_follow_each_call),
        cmocka_unit_test(get_all_finds_the_first_of_each_type_in_one_pass),
        cmocka_unit_test(cond_type_wherever_the_member_is),
        cmocka_unit_test(metadata_members_wherever_they_are),
        cmocka_unit_test(condition_times_read_back_alternating),
        cmocka_unit_test(stale_shared_condition_aborts_in_debug_builds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
