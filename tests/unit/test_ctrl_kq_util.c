/*
 * kq_quantity_value (ctrl/kueue/util.c): the plain-integer shortcut gives
 * what the general quantity parser gives, in the resource's units (cpu in
 * milli-units), and every other form still goes through the parser;
 * kq_quantity_json's own formatting of plain numbers writes what
 * api_quantity_format writes. kq_wl_view reads what the lookups it
 * replaces read (api_cond_get_all's first condition of each type,
 * api_cond_holds, spec.queueName, status.admission.clusterQueue), and
 * kq_wl_view_peek reads each document once and holds the one it keeps.
 * kq_shared gives the value kept for a key back for that key only (parts
 * never run together), and starts again past its bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "abort_check.h"

#include "api/meta.h"
#include "api/quantity.h"
#include "ctrl/kueue/kueue.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

/* kq_quantity_value of the JSON string text, checked against the parser. */
static int64_t value_of(const char *text, const char *resource)
{
    json_t *v = json_string(text);
    int64_t got = kq_quantity_value(v, resource);
    json_decref(v);
    int64_t want = 0;
    if (api_quantity_parse(text, resource, &want, NULL, 0) != 0)
        want = 0;
    assert_int_equal(got, want);
    return got;
}

static void plain_integers_match_the_parser(void **state)
{
    (void)state;
    assert_int_equal(value_of("1", "cpu"), 1000);
    assert_int_equal(value_of("20", "cpu"), 20000);
    assert_int_equal(value_of("20", "memory"), 20);
    assert_int_equal(value_of("0", "nvidia.com/gpu"), 0);
    assert_int_equal(value_of("007", "cpu"), 7000);
    assert_int_equal(value_of("999999999999999", "cpu"), INT64_C(999999999999999000));
    /* 16 digits and more: the parser's (here: beyond int64 in milli-units,
     * saturated to Kueue's Unlimited) */
    assert_int_equal(value_of("9999999999999999", "memory"), INT64_C(9999999999999999));
    assert_int_equal(value_of("99999999999999999999", "cpu"), INT64_MAX);
}

static void other_forms_go_through_the_parser(void **state)
{
    (void)state;
    assert_int_equal(value_of("500m", "cpu"), 500);
    assert_int_equal(value_of("2Gi", "memory"), INT64_C(2147483648));
    assert_int_equal(value_of("1.5", "cpu"), 1500);
    assert_int_equal(value_of("+3", "cpu"), 3000);
    assert_int_equal(value_of("-3", "memory"), -3);
    assert_int_equal(value_of("", "cpu"), 0);
    assert_int_equal(value_of("12x", "cpu"), 0);
    json_t *n = json_integer(4);
    assert_int_equal(kq_quantity_value(n, "cpu"), 4000);
    json_decref(n);
}

/* kq_quantity_json's text for value, checked against api_quantity_format. */
static void json_matches_format(int64_t value, const char *resource)
{
    json_t *j = kq_quantity_json(value, resource);
    char *want = api_quantity_format(value, resource);
    assert_non_null(j);
    assert_string_equal(json_string_value(j), want);
    xfree(want);
    json_decref(j);
}

static void json_text_matches_the_formatter(void **state)
{
    (void)state;
    static const char *const resources[] = {"cpu", "memory", "nvidia.com/gpu", NULL};
    static const int64_t values[] = {0,    1,        7,         999,          1000,
                                     1001, 1024,     1500,      2000,         2048,
                                     3000, 1000000,  123456789, INT64_C(1) << 40,
                                     -1,   -1000,    -1024,     INT64_MAX,    INT64_MIN,
                                     INT64_C(999999999999999999)};
    for (size_t r = 0; r < sizeof(resources) / sizeof(resources[0]); r++) {
        for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
            json_matches_format(values[i], resources[r]);
        for (int64_t v = 0; v < 5000; v++)
            json_matches_format(v, resources[r]);
    }
}

/* A Workload document with these conditions (JSON array text). */
static json_t *workload(const char *conds, const char *extra_md)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\","
             "\"metadata\":{\"name\":\"w\",\"namespace\":\"ns\"%s},"
             "\"spec\":{\"priority\":1,\"queueName\":\"lq\"},"
             "\"status\":{\"admission\":{\"clusterQueue\":\"cq\"},\"conditions\":%s}}",
             extra_md, conds);
    json_error_t err;
    json_t *wl = json_loads(text, 0, &err);
    assert_non_null(wl);
    return wl;
}

static void view_reads_what_the_lookups_read(void **state)
{
    (void)state;
    /* the first of each type counts; status found where it is not second */
    json_t *wl = workload("[{\"type\":\"QuotaReserved\",\"status\":\"True\"},"
                          "{\"type\":\"Admitted\",\"reason\":\"x\",\"status\":\"True\"},"
                          "{\"type\":\"QuotaReserved\",\"status\":\"False\"},"
                          "{\"type\":\"Requeued\",\"status\":\"False\"},"
                          "{\"type\":\"Evicted\",\"status\":\"True\"},"
                          "{\"type\":\"Finishe\",\"status\":\"True\"}]",
                          ",\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"");
    struct kq_wl_view v;
    kq_wl_view(wl, &v);
    assert_string_equal(v.ns, "ns");
    assert_string_equal(v.name, "w");
    assert_string_equal(v.queue, "lq");
    assert_string_equal(v.cluster_queue, "cq");
    assert_ptr_equal(v.spec, json_object_get(wl, "spec"));
    assert_true(v.deleting);
    assert_false(v.owned);
    static const char *const types[KQ__VC_COUNT] = {"Finished", "QuotaReserved", "Admitted",
                                                    "DeactivationTarget", "Requeued", "Evicted"};
    const json_t *conds[KQ__VC_COUNT];
    api_cond_get_all(wl, types, KQ__VC_COUNT, conds);
    for (int k = 0; k < KQ__VC_COUNT; k++)
        assert_int_equal(v.cond[k], !conds[k] ? 0 : api_cond_holds(conds[k]) ? 2 : 1);
    assert_int_equal(v.cond[KQ_VC_QUOTA_RESERVED], 2);
    assert_int_equal(v.cond[KQ_VC_ADMITTED], 2);
    assert_int_equal(v.cond[KQ_VC_REQUEUED], 1);
    assert_int_equal(v.cond[KQ_VC_FINISHED], 0);
    assert_int_equal(v.cond[KQ_VC_EVICTED], 2);
    assert_ptr_equal(v.status, json_object_get(wl, "status"));
    /* the condition objects: the first of each type */
    for (int k = 0; k < KQ__VC_COUNT; k++)
        assert_ptr_equal(v.cond_obj[k], conds[k]);
    /* the values the decode memo compares */
    assert_ptr_equal(v.deletion_timestamp, JX_GET(wl, "metadata", "deletionTimestamp"));
    assert_ptr_equal(v.conditions, JX_GET(wl, "status", "conditions"));
    assert_null(v.uid);
    assert_null(v.labels);
    assert_null(v.owner_references);
    assert_null(v.requeue_state);
    json_t *md = json_object_get(wl, "metadata");
    json_t *st = json_object_get(wl, "status");
    json_object_set_new(md, "uid", json_string("u"));
    json_object_set_new(md, "creationTimestamp", json_string("2024-01-01T00:00:00Z"));
    json_object_set_new(md, "labels", json_object());
    json_object_set_new(md, "annotations", json_object());
    json_object_set_new(md, "ownerReferences", json_array());
    json_object_set_new(st, "requeueState", json_object());
    json_object_set_new(st, "reclaimablePods", json_array());
    kq_wl_view(wl, &v);
    assert_ptr_equal(v.uid, json_object_get(md, "uid"));
    assert_ptr_equal(v.creation_timestamp, json_object_get(md, "creationTimestamp"));
    assert_ptr_equal(v.labels, json_object_get(md, "labels"));
    assert_ptr_equal(v.annotations, json_object_get(md, "annotations"));
    assert_ptr_equal(v.owner_references, json_object_get(md, "ownerReferences"));
    assert_true(v.owned);
    assert_ptr_equal(v.requeue_state, json_object_get(st, "requeueState"));
    assert_ptr_equal(v.reclaimable_pods, json_object_get(st, "reclaimablePods"));
    assert_ptr_equal(v.admission, json_object_get(st, "admission"));
    json_decref(wl);
}

/* kq_wl_view_peek reads a document once: asked again for the very same
 * document it gives the kept reading (not a new one); asked for another it
 * reads that one and keeps it instead; the kept document is held. */
static void peek_reads_each_document_once(void **state)
{
    (void)state;
    json_t *a = workload("[{\"type\":\"Finished\",\"status\":\"True\"}]", "");
    json_t *b = workload("[]", "");
    const struct kq_wl_view *p = kq_wl_view_peek(a);
    assert_string_equal(p->queue, "lq");
    assert_int_equal(p->cond[KQ_VC_FINISHED], 2);
    assert_ptr_equal(kq_wl_view_peek(a), p); /* the kept one */
    p = kq_wl_view_peek(b); /* another: read now, kept */
    assert_string_equal(p->queue, "lq");
    assert_int_equal(p->cond[KQ_VC_FINISHED], 0);
    assert_false(p->owned);
    kq_wl_view_drop(); /* dropped: read now */
    json_object_set_new(json_object_get(b, "metadata"), "ownerReferences", json_array());
    assert_true(kq_wl_view_peek(b)->owned);
    /* the peeked document is held while kept */
    kq_wl_view_peek(a);
    json_decref(a);
    assert_int_equal(kq_wl_view_peek(a)->cond[KQ_VC_FINISHED], 2);
    kq_wl_view_drop();
    json_decref(b);
}

/* The memo's invariant (a kept document is never changed in place) is
 * checked on every hit in debug builds: a document changed behind the
 * memo's back makes the next peek abort instead of answering stale. */
#ifndef NDEBUG /* the body of a test that runs in debug builds only */
static void peek_stale_view(void *arg)
{
    (void)arg;
    json_t *b = workload("[]", "");
    kq_wl_view_peek(b);
    json_object_set_new(json_object_get(b, "metadata"), "ownerReferences", json_array());
    kq_wl_view_peek(b); /* stale: must abort */
}
#endif

static void stale_peek_aborts_in_debug_builds(void **state)
{
    (void)state;
#ifdef NDEBUG
    skip(); /* the check is compiled in debug builds only (make test's ASan build) */
#else
    assert_child_aborts(peek_stale_view, NULL);
#endif
}

/* The view's state is the document's state (api_wl_state_of), read once. */
static void view_state_is_the_documents_state(void **state)
{
    (void)state;
    static const char *const conds[] = {
        "[]",
        "[{\"type\":\"QuotaReserved\",\"status\":\"True\"}]",
        "[{\"type\":\"QuotaReserved\",\"status\":\"True\"},{\"type\":\"Admitted\",\"status\":\"True\"}]",
        "[{\"type\":\"Finished\",\"status\":\"True\"},{\"type\":\"Evicted\",\"status\":\"True\"}]",
        "[{\"type\":\"DeactivationTarget\",\"status\":\"True\"},{\"type\":\"Admitted\",\"status\":\"False\"}]",
    };
    for (size_t i = 0; i < sizeof(conds) / sizeof(conds[0]); i++) {
        json_t *wl = workload(conds[i], "");
        struct kq_wl_view v;
        kq_wl_view(wl, &v);
        struct api_wl_state st = api_wl_state_of(wl);
        assert_int_equal(v.state.phase, st.phase);
        assert_int_equal(v.state.quota_reserved, st.quota_reserved);
        assert_int_equal(v.state.has_admission, st.has_admission);
        assert_int_equal(v.state.admitted, st.admitted);
        assert_int_equal(v.state.finished, st.finished);
        assert_int_equal(v.state.evicted, st.evicted);
        assert_int_equal(v.state.deactivation_target, st.deactivation_target);
        /* the one-flag questions (kueue/wl.c read only their condition)
         * answer as the state does, with status.admission and without */
        for (int adm = 1; adm >= 0; adm--) {
            if (!adm)
                json_object_del(json_object_get(wl, "status"), "admission");
            st = api_wl_state_of(wl);
            assert_int_equal(kq_wl_has_reservation(wl), api_wl_holds_reservation(&st));
            assert_int_equal(kq_wl_is_admitted(wl), st.admitted);
            assert_int_equal(kq_wl_is_finished(wl), st.finished);
            assert_int_equal(kq_wl_is_evicted(wl), st.evicted);
        }
        json_decref(wl);
    }
}

/* The key "a" "bc" for kq_shared. */
static void key_a_bc(struct kq_shared *t)
{
    kq_shared_key_reset(t);
    kq_shared_key_str(t, "a");
    kq_shared_key_str(t, "bc");
}

static void shared_values_by_key(void **state)
{
    (void)state;
    struct kq_shared *t = kq_shared_new(2);
    key_a_bc(t);
    assert_null(kq_shared_find(t));
    json_t *v = json_pack("{s:i}", "x", 1);
    json_t *got = kq_shared_keep(t, json_incref(v)); /* v: ours, kept */
    assert_ptr_equal(got, v);
    assert_int_equal(v->refcount, 3); /* ours, the table's, got */
    json_decref(got);
    key_a_bc(t);
    got = kq_shared_find(t);
    assert_ptr_equal(got, v);
    json_decref(got);
    /* the same bytes cut otherwise, NULL, an int, an extra part: other keys */
    kq_shared_key_reset(t);
    kq_shared_key_str(t, "ab");
    kq_shared_key_str(t, "c");
    assert_null(kq_shared_find(t));
    kq_shared_key_reset(t);
    kq_shared_key_str(t, "a");
    kq_shared_key_str(t, NULL);
    assert_null(kq_shared_find(t));
    kq_shared_key_reset(t);
    kq_shared_key_str(t, "");
    assert_null(kq_shared_find(t));
    key_a_bc(t);
    kq_shared_key_int(t, 7);
    assert_null(kq_shared_find(t));
    json_decref(kq_shared_keep(t, json_string("seven")));
    key_a_bc(t);
    kq_shared_key_int(t, 8);
    assert_null(kq_shared_find(t));
    /* a third value passes the bound of 2: only it is kept */
    json_decref(kq_shared_keep(t, json_string("eight")));
    assert_int_equal(v->refcount, 1); /* let go */
    key_a_bc(t);
    assert_null(kq_shared_find(t));
    key_a_bc(t);
    kq_shared_key_int(t, 8);
    got = kq_shared_find(t);
    assert_string_equal(json_string_value(got), "eight");
    json_decref(got);
    json_decref(v);
    kq_shared_free(t);
    kq_shared_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_integers_match_the_parser),
        cmocka_unit_test(other_forms_go_through_the_parser),
        cmocka_unit_test(json_text_matches_the_formatter),
        cmocka_unit_test(view_reads_what_the_lookups_read),
        cmocka_unit_test(stale_peek_aborts_in_debug_builds),
        cmocka_unit_test(view_state_is_the_documents_state),
        cmocka_unit_test(peek_reads_each_document_once),
        cmocka_unit_test(shared_values_by_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
