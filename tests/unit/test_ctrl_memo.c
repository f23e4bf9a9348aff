/*
 * kq_memo (ctrl/kueue/memo.c): a Workload whose engine inputs are the very
 * values last fed is recognised, any change of one of them is not, and the
 * resourceRequests of a spec are remembered for that spec only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "abort_check.h"

#include "api/meta.h"
#include "api/object.h"
#include "ctrl/kueue/kueue.h"
#include "store/store.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define T0 INT64_C(1767225600000)

static json_t *workload(void)
{
    json_t *wl = json_pack("{s:s, s:s, s:{s:s, s:s, s:s, s:{s:s}}, s:{s:s, s:i, s:[{s:s}]}}",
                           "apiVersion", "kueue.x-k8s.io/v1beta1", "kind", "Workload",
                           "metadata", "name", "w", "namespace", "ns", "uid", "u-1", "labels",
                           "a", "b", "spec", "queueName", "q", "priority", 1, "podSets", "name",
                           "main");
    api_cond_set(wl, "QuotaReserved", "False", "Pending", "waiting", T0);
    return wl;
}

/* workload() with a pod template, so that it decodes. */
static json_t *decodable_workload(void)
{
    json_t *wl = workload();
    json_object_set_new(json_array_get(JX_GET(wl, "spec", "podSets"), 0), "template",
                        json_pack("{s:{s:[{s:s}]}}", "spec", "containers", "name", "c"));
    return wl;
}

static void same_values_are_recognised_and_changes_are_not(void **state)
{
    (void)state;
    struct kq_memo *m = kq_memo_new();
    json_t *v1 = workload();
    bool admitted = true;
    assert_false(kq_memo_same(m, v1, &admitted));
    kq_memo_store(m, v1, false);
    assert_true(kq_memo_same(m, v1, &admitted));
    assert_false(admitted);
    /* a status write that changes only a message: the same inputs */
    json_t *v2 = store_status_copy(v1, NULL);
    api_cond_set(v2, "QuotaReserved", "False", "Pending", "still waiting", T0 + 1000);
    JX_SET_NEW(v2, json_string("x"), "status", "somethingElse");
    assert_true(kq_memo_same(m, v2, &admitted));
    /* a changed condition status, spec or label is a change */
    json_t *v3 = store_status_copy(v1, NULL);
    api_cond_set(v3, "QuotaReserved", "True", "QuotaReserved", "", T0 + 1000);
    assert_false(kq_memo_same(m, v3, &admitted));
    json_t *v4 = jx_deep_copy(v1);
    assert_false(kq_memo_same(m, v4, &admitted)); /* equal, but other values */
    json_t *v5 = store_status_copy(v1, NULL);
    JX_SET_NEW(v5, json_pack("{s:s}", "clusterQueue", "cq"), "status", "admission");
    assert_false(kq_memo_same(m, v5, &admitted));
    /* another Workload name is another entry */
    json_t *other = jx_deep_copy(v1);
    JX_SET_NEW(other, json_string("w2"), "metadata", "name");
    assert_false(kq_memo_same(m, other, &admitted));
    kq_memo_store(m, v3, true);
    assert_true(kq_memo_same(m, v3, &admitted));
    assert_true(admitted);
    kq_memo_forget(m, "ns", "w");
    assert_false(kq_memo_same(m, v3, &admitted));
    json_decref(v1);
    json_decref(v2);
    json_decref(v3);
    json_decref(v4);
    json_decref(v5);
    json_decref(other);
    kq_memo_free(m);
}

/* What the decoding reads of the conditions is compared by value: which of
 * them hold, and the times and reason it reads of those that hold. */
/* Conditions are compared by the identity of their status and
 * lastTransitionTime (and Evicted's reason). Regression: a first Pending
 * write (QuotaReserved=False appearing) once counted as no change, because
 * the decoded Workload is the same; but the engine's upsert of it routes the
 * workload again and refreshes its Pending message, and without it the
 * message went stale (a `cueue sim` trace lost a Pending record when the
 * quota it lacked grew later in the same instant). */
static void conditions_compared_by_identity(void **state)
{
    (void)state;
    struct kq_memo *m = kq_memo_new();
    json_t *v1 = workload();
    json_t *v0 = store_status_copy(v1, NULL);
    json_object_del(JX_GET(v0, "status"), "conditions"); /* no conditions yet */
    bool admitted = true;
    kq_memo_store(m, v0, false);
    /* a first Pending write: conditions that do not hold appear */
    json_t *v2 = store_status_copy(v0, NULL);
    api_cond_set(v2, "QuotaReserved", "False", "Pending", "waiting", T0);
    api_cond_set(v2, "Admitted", "False", "NoReservation", "no", T0);
    assert_false(kq_memo_same(m, v2, &admitted));
    kq_memo_store(m, v2, false);
    /* a message-only change shares status and time: the same */
    json_t *v3 = store_status_copy(v2, NULL);
    api_cond_set(v3, "QuotaReserved", "False", "Pending", "waiting longer", T0 + 1000);
    assert_true(kq_memo_same(m, v3, &admitted));
    assert_false(admitted);
    /* Requeued appearing is a change */
    json_t *v4 = store_status_copy(v2, NULL);
    api_cond_set(v4, "Requeued", "False", "Backoff", "", T0 + 1000);
    assert_false(kq_memo_same(m, v4, &admitted));
    /* a reservation: another time is a change */
    json_t *r1 = store_status_copy(v0, NULL);
    api_cond_set(r1, "QuotaReserved", "True", "QuotaReserved", "", T0);
    kq_memo_store(m, r1, true);
    json_t *r2 = store_status_copy(r1, NULL);
    api_cond_set(r2, "QuotaReserved", "True", "QuotaReserved", "other message", T0 + 2000);
    assert_true(kq_memo_same(m, r2, &admitted));
    assert_true(admitted);
    json_t *r3 = store_status_copy(r1, NULL);
    api_cond_set(r3, "QuotaReserved", "False", "Pending", "", T0 + 2000);
    api_cond_set(r3, "QuotaReserved", "True", "QuotaReserved", "", T0 + 2000);
    assert_false(kq_memo_same(m, r3, &admitted));
    /* an eviction's reason is read */
    json_t *e1 = store_status_copy(v0, NULL);
    api_cond_set(e1, "Evicted", "True", "Preempted", "", T0);
    kq_memo_store(m, e1, false);
    json_t *e2 = store_status_copy(e1, NULL);
    api_cond_set(e2, "Evicted", "True", "PodsReadyTimeout", "", T0);
    assert_false(kq_memo_same(m, e2, &admitted));
    /* only the first condition of a type is read (as the decoding does) */
    json_t *e3 = store_status_copy(e1, NULL);
    json_array_append_new(JX_GET(e3, "status", "conditions"),
                          json_pack("{s:s, s:s, s:s}", "type", "Evicted", "status", "False",
                                    "reason", "Other"));
    assert_true(kq_memo_same(m, e3, &admitted));
    json_t *docs[] = {v0, v1, v2, v3, v4, r1, r2, r3, e1, e2, e3};
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
        json_decref(docs[i]);
    kq_memo_free(m);
}

/* kq_memo_decode decodes only the status again while the metadata and
 * spec are the same values, and everything when they are not. */
static void decoding_keeps_what_did_not_change(void **state)
{
    (void)state;
    struct kq_memo *m = kq_memo_new();
    json_t *v1 = workload();
    JX_SET_NEW(v1, json_string("{\"f1\": \"2026-01-01T00:00:00Z\"}"), "metadata",
               "annotations", "cueue.dev/avoid-flavors");
    json_object_set_new(json_array_get(JX_GET(v1, "spec", "podSets"), 0), "template",
                        json_pack("{s:{s:[{s:s, s:{s:{s:s}}}]}}", "spec", "containers", "name",
                                  "c", "resources", "requests", "cpu", "1"));
    const struct api_workload *d = kq_memo_decode(m, v1, NULL);
    assert_non_null(d);
    assert_int_equal(d->priority, 1);
    assert_false(d->has_admission);
    assert_int_equal(d->n_avoid_flavors, 1);
    assert_string_equal(d->avoid_flavors[0].flavor, "f1");
    bool admitted = true;
    assert_true(kq_memo_same(m, v1, &admitted)); /* remembered as fed */
    assert_ptr_equal(kq_memo_decoded_spec(m, "ns", "w", v1), d);
    /* a status write: the new status, the same pod sets and avoid list */
    json_t *v2 = store_status_copy(v1, NULL);
    JX_SET_NEW(v2, json_pack("{s:s, s:[{s:s, s:{s:s}, s:{s:s}}]}", "clusterQueue", "cq",
                             "podSetAssignments", "name", "main", "flavors", "cpu", "f",
                             "resourceUsage", "cpu", "2"),
               "status", "admission");
    api_cond_set(v2, "QuotaReserved", "True", "QuotaReserved", "", T0);
    api_cond_set(v2, "Admitted", "True", "Admitted", "", T0);
    assert_false(kq_memo_same(m, v2, &admitted));
    d = kq_memo_decode(m, v2, NULL);
    assert_true(d->has_admission && d->quota_reserved && d->admitted);
    assert_int_equal(d->admission.podsets[0].count, 1);
    assert_int_equal(d->n_podsets, 1);
    assert_int_equal(d->n_avoid_flavors, 1);
    assert_true(kq_memo_same(m, v2, &admitted));
    assert_true(admitted);
    /* a status write that leaves the admission: kept, the rest follows */
    json_t *v2b = store_status_copy(v2, NULL);
    api_cond_set(v2b, "Admitted", "False", "NoReservation", "", T0 + 1000);
    d = kq_memo_decode(m, v2b, NULL);
    assert_false(d->admitted);
    assert_true(d->has_admission);
    assert_string_equal(d->admission.cluster_queue, "cq");
    assert_int_equal(api_reslist_get(&d->admission.podsets[0].resource_usage, "cpu"), 2000);
    d = kq_memo_decode(m, v2, NULL);
    /* another spec value (priority) and other annotations: decoded again */
    json_t *v3 = jx_deep_copy(v2);
    JX_SET_NEW(v3, json_integer(5), "spec", "priority");
    json_object_del(JX_GET(v3, "metadata", "annotations"), "cueue.dev/avoid-flavors");
    assert_null(kq_memo_decoded_spec(m, "ns", "w", v3));
    d = kq_memo_decode(m, v3, NULL);
    assert_int_equal(d->priority, 5);
    assert_int_equal(d->n_avoid_flavors, 0);
    assert_true(d->admitted);
    /* a status that does not decode: nothing, and the Workload is forgotten */
    json_t *v4 = store_status_copy(v3, NULL);
    JX_SET_NEW(v4, json_pack("{s:s, s:[{s:s, s:{s:s}}]}", "clusterQueue", "cq",
                             "podSetAssignments", "name", "main", "resourceUsage", "cpu",
                             "lots"),
               "status", "admission");
    assert_null(kq_memo_decode(m, v4, NULL));
    assert_false(kq_memo_same(m, v3, &admitted));
    assert_null(kq_memo_decoded_spec(m, "ns", "w", v3));
    /* a plain store drops what was decoded from another document */
    assert_non_null(kq_memo_decode(m, v3, NULL));
    kq_memo_store(m, v2, true);
    assert_null(kq_memo_decoded_spec(m, "ns", "w", v2));
    json_t *docs[] = {v1, v2, v2b, v3, v4};
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
        json_decref(docs[i]);
    kq_memo_free(m);
}

/* A status.admission of decodable_workload()'s pod set: 1 pod, cpu "2"
 * of flavor f in ClusterQueue cq. */
static json_t *admission_value(void)
{
    return json_pack("{s:s, s:[{s:s, s:i, s:{s:s}, s:{s:s}}]}", "clusterQueue", "cq",
                     "podSetAssignments", "name", "main", "count", 1, "flavors", "cpu", "f",
                     "resourceUsage", "cpu", "2");
}

/* What kq_memo_decode gives for a status write equals the full decoding
 * of the written document, through the writes the control plane makes to
 * a Workload (its values shared with the previous version as
 * store_status_copy and api_cond_set share them): a Pending message, a
 * reservation, its Admitted, an eviction, the reservation cleared, a
 * requeue state and reclaimable pods, and a reservation again. The memo
 * decodes only the values that changed (api_workload_status_from_values). */
static void status_writes_decode_as_the_full_decoding(void **state)
{
    (void)state;
    struct kq_memo *m = kq_memo_new();
    json_t *prev = decodable_workload();
    assert_non_null(kq_memo_decode(m, prev, NULL));
    json_t *adm = admission_value();
    for (int step = 0; step < 9; step++) {
        json_t *doc = store_status_copy(prev, NULL);
        int64_t t = T0 + 1000 * (step + 1);
        switch (step) {
        case 0: api_cond_set(doc, "QuotaReserved", "False", "Pending", "again", t); break;
        case 1:
        case 8:
            JX_SET_NEW(doc, json_incref(adm), "status", "admission");
            api_cond_set(doc, "QuotaReserved", "True", "QuotaReserved", "", t);
            break;
        case 2: api_cond_set(doc, "Admitted", "True", "Admitted", "", t); break;
        case 3:
            api_cond_set(doc, "Evicted", "True", "Preempted", "preempted", t);
            api_cond_set(doc, "Preempted", "True", "InClusterQueue", "", t);
            break;
        case 4:
            json_object_del(json_object_get(doc, "status"), "admission");
            api_cond_set(doc, "QuotaReserved", "False", "Pending", "evicted", t);
            api_cond_set(doc, "Admitted", "False", "NoReservation", "", t);
            break;
        case 5:
            JX_SET_NEW(doc, json_pack("{s:i, s:s}", "count", 1, "requeueAt",
                                      "2026-01-01T00:10:00Z"),
                       "status", "requeueState");
            api_cond_set(doc, "Requeued", "False", "Backoff", "", t);
            break;
        case 6:
            api_cond_set(doc, "Evicted", "False", "Requeued", "", t);
            api_cond_set(doc, "Requeued", "True", "BackoffFinished", "", t);
            break;
        default:
            JX_SET_NEW(doc, json_pack("[{s:s, s:i}]", "name", "main", "count", 1), "status",
                       "reclaimablePods");
            break;
        }
        bool status_only = false;
        const struct api_workload *d = kq_memo_decode(m, doc, &status_only);
        assert_non_null(d);
        assert_true(status_only);
        struct api_workload want;
        assert_int_equal(api_workload_from_json(doc, &want), 0);
        assert_int_equal(d->has_admission, want.has_admission);
        if (want.has_admission) {
            assert_string_equal(d->admission.cluster_queue, want.admission.cluster_queue);
            assert_int_equal(d->admission.podsets[0].count, want.admission.podsets[0].count);
        }
        assert_int_equal(d->quota_reserved, want.quota_reserved);
        assert_true(d->quota_reserved_ms == want.quota_reserved_ms);
        assert_int_equal(d->admitted, want.admitted);
        assert_int_equal(d->finished, want.finished);
        assert_int_equal(d->evicted, want.evicted);
        assert_true(d->evicted_ms == want.evicted_ms);
        assert_string_equal(d->evicted_reason ? d->evicted_reason : "-",
                            want.evicted_reason ? want.evicted_reason : "-");
        assert_int_equal(d->requeued_false, want.requeued_false);
        assert_int_equal(d->requeue_count, want.requeue_count);
        assert_true(d->requeue_at_ms == want.requeue_at_ms);
        assert_int_equal(d->n_reclaimable, want.n_reclaimable);
        api_workload_release(&want);
        json_decref(prev);
        prev = doc;
    }
    json_decref(adm);
    json_decref(prev);
    kq_memo_free(m);
}

/* kq_memo_finished: only right after a kq_memo_same that found every
 * value but the conditions the same as the decoded document's, and only
 * when Finished holds. */
static void finished_recognised_without_decoding(void **state)
{
    (void)state;
    struct kq_memo *m = kq_memo_new();
    json_t *v1 = decodable_workload();
    assert_non_null(kq_memo_decode(m, v1, NULL));
    bool admitted = true;
    json_t *f1 = store_status_copy(v1, NULL);
    api_cond_set(f1, "Finished", "True", "Succeeded", "done", T0 + 1000);
    assert_false(kq_memo_same(m, f1, &admitted));
    assert_true(kq_memo_finished(m, f1));
    /* Finished=False is not finished */
    json_t *f2 = store_status_copy(v1, NULL);
    api_cond_set(f2, "Finished", "False", "Running", "", T0 + 1000);
    assert_false(kq_memo_same(m, f2, &admitted));
    assert_false(kq_memo_finished(m, f2));
    /* another value outside the conditions (an admission): decode it */
    json_t *f3 = store_status_copy(f1, NULL);
    JX_SET_NEW(f3, json_pack("{s:s}", "clusterQueue", "cq"), "status", "admission");
    assert_false(kq_memo_same(m, f3, &admitted));
    assert_false(kq_memo_finished(m, f3));
    /* not right after kq_memo_same of that document */
    assert_false(kq_memo_same(m, f1, &admitted));
    kq_memo_forget(m, "ns", "other");
    assert_false(kq_memo_finished(m, f1));
    assert_false(kq_memo_finished(m, f2));
    /* a Workload the memo does not know */
    kq_memo_forget(m, "ns", "w");
    assert_false(kq_memo_same(m, f1, &admitted));
    assert_false(kq_memo_finished(m, f1));
    json_t *docs[] = {v1, f1, f2, f3};
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
        json_decref(docs[i]);
    kq_memo_free(m);
}

/* kq_memo_meta reads what the scheduler needs, and the kq_memo_same or
 * kq_memo_decode right after it answers as it would alone. */
static void meta_then_same_or_decode(void **state)
{
    (void)state;
    struct kq_memo *m = kq_memo_new();
    json_t *v1 = decodable_workload();
    JX_SET_NEW(v1, json_string("7"), "metadata", "annotations", "a");
    struct kq_wl_meta meta;
    kq_memo_meta(m, v1, &meta);
    assert_string_equal(meta.ns, "ns");
    assert_string_equal(meta.name, "w");
    assert_ptr_equal(meta.annotations, JX_GET(v1, "metadata", "annotations"));
    assert_false(meta.deleting);
    bool admitted = true;
    assert_false(kq_memo_same(m, v1, &admitted)); /* unknown yet */
    kq_memo_meta(m, v1, &meta);
    assert_non_null(kq_memo_decode(m, v1, NULL)); /* added */
    kq_memo_meta(m, v1, &meta);
    assert_true(kq_memo_same(m, v1, &admitted));
    json_t *v2 = store_status_copy(v1, NULL);
    api_cond_set(v2, "QuotaReserved", "True", "QuotaReserved", "", T0 + 1000);
    kq_memo_meta(m, v2, &meta);
    assert_false(kq_memo_same(m, v2, &admitted));
    /* a kq_memo_same not right after kq_memo_meta reads its document */
    kq_memo_meta(m, v1, &meta);
    kq_memo_forget(m, "ns", "other");
    assert_true(kq_memo_same(m, v1, &admitted));
    /* deleting; no metadata at all */
    json_t *v3 = jx_deep_copy(v1);
    JX_SET_NEW(v3, json_string("2026-01-01T00:00:00Z"), "metadata", "deletionTimestamp");
    kq_memo_meta(m, v3, &meta);
    assert_true(meta.deleting);
    json_t *bare = json_object();
    kq_memo_meta(m, bare, &meta);
    assert_null(meta.ns);
    assert_null(meta.name);
    assert_null(meta.annotations);
    assert_false(meta.deleting);
    json_t *docs[] = {v1, v2, v3, bare};
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
        json_decref(docs[i]);
    kq_memo_free(m);
}

/* kq_memo_expected_changed: true until the values given to the engine
 * repeat; forgotten with the entry (the engine's copy goes with it). */
static void expected_values_are_given_once(void **state)
{
    (void)state;
    struct kq_memo *m = kq_memo_new();
    json_t *v1 = decodable_workload();
    /* an unknown Workload: always given, nothing remembered */
    assert_true(kq_memo_expected_changed(m, "ns", "w", 1000, false, 0));
    assert_true(kq_memo_expected_changed(m, "ns", "w", 1000, false, 0));
    assert_non_null(kq_memo_decode(m, v1, NULL));
    assert_true(kq_memo_expected_changed(m, "ns", "w", 1000, false, 0));
    assert_false(kq_memo_expected_changed(m, "ns", "w", 1000, false, 0));
    assert_false(kq_memo_expected_changed(m, "ns", "w", 1000, false, 7)); /* no end: unread */
    assert_true(kq_memo_expected_changed(m, "ns", "w", 2000, false, 0));
    assert_true(kq_memo_expected_changed(m, "ns", "w", 2000, true, T0));
    assert_false(kq_memo_expected_changed(m, "ns", "w", 2000, true, T0));
    assert_true(kq_memo_expected_changed(m, "ns", "w", 2000, true, T0 + 1));
    /* another Workload has its own; a status decode keeps them */
    assert_true(kq_memo_expected_changed(m, "ns", "w2", 2000, true, T0 + 1));
    json_t *v2 = store_status_copy(v1, NULL);
    api_cond_set(v2, "QuotaReserved", "True", "QuotaReserved", "", T0);
    assert_non_null(kq_memo_decode(m, v2, NULL));
    assert_false(kq_memo_expected_changed(m, "ns", "w", 2000, true, T0 + 1));
    /* forgotten: given again */
    kq_memo_forget(m, "ns", "w");
    assert_non_null(kq_memo_decode(m, v2, NULL));
    assert_true(kq_memo_expected_changed(m, "ns", "w", 2000, true, T0 + 1));
    /* a document that does not decode forgets them too */
    json_t *v3 = store_status_copy(v2, NULL);
    JX_SET_NEW(v3, json_pack("{s:s, s:[{s:s, s:{s:s}}]}", "clusterQueue", "cq",
                             "podSetAssignments", "name", "main", "resourceUsage", "cpu",
                             "lots"),
               "status", "admission");
    assert_null(kq_memo_decode(m, v3, NULL));
    assert_non_null(kq_memo_decode(m, v2, NULL));
    assert_true(kq_memo_expected_changed(m, "ns", "w", 2000, true, T0 + 1));
    /* the owner references are read with the rest of the metadata */
    struct kq_wl_meta meta;
    kq_memo_meta(m, v2, &meta);
    assert_null(meta.owner_references);
    json_t *v4 = jx_deep_copy(v2);
    JX_SET_NEW(v4, json_pack("[{s:s, s:b}]", "kind", "Job", "controller", 1), "metadata",
               "ownerReferences");
    kq_memo_meta(m, v4, &meta);
    assert_ptr_equal(meta.owner_references, JX_GET(v4, "metadata", "ownerReferences"));
    json_t *docs[] = {v1, v2, v3, v4};
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
        json_decref(docs[i]);
    kq_memo_free(m);
}

static void requests_are_remembered_per_spec_value(void **state)
{
    (void)state;
    struct kq_memo *m = kq_memo_new();
    json_t *v1 = workload();
    assert_null(kq_memo_requests(m, "ns", "w", v1));
    json_t *rr = json_pack("[{s:s}]", "name", "main");
    kq_memo_set_requests(m, "ns", "w", v1, rr);
    json_t *got = kq_memo_requests(m, "ns", "w", v1);
    assert_ptr_equal(got, rr);
    json_decref(got);
    json_t *v2 = store_status_copy(v1, NULL); /* the same spec value */
    got = kq_memo_requests(m, "ns", "w", v2);
    assert_ptr_equal(got, rr);
    json_decref(got);
    json_t *v3 = jx_deep_copy(v1); /* another spec value */
    assert_null(kq_memo_requests(m, "ns", "w", v3));
    json_decref(rr);
    json_decref(v1);
    json_decref(v2);
    json_decref(v3);
    kq_memo_free(m);
}

/* kq_memo_requests_or's compute: counts its calls, records what it was
 * given, returns a new array. */
struct compute_log {
    int calls;
    const struct api_workload *known;
};

static json_t *log_compute(void *ctx, const struct api_workload *known)
{
    struct compute_log *l = ctx;
    l->calls++;
    l->known = known;
    return json_pack("[{s:s}]", "name", "main");
}

/* kq_memo_requests_or computes once per spec value, from the decoded
 * Workload when it was decoded from that very spec. */
static void requests_or_computes_once_per_spec_value(void **state)
{
    (void)state;
    struct kq_memo *m = kq_memo_new();
    struct compute_log l = {0, NULL};
    json_t *v1 = workload(); /* not decoded: compute decodes */
    json_t *rr = kq_memo_requests_or(m, "ns", "w", v1, log_compute, &l);
    assert_int_equal(l.calls, 1);
    assert_null(l.known);
    json_t *v2 = store_status_copy(v1, NULL); /* the same spec value */
    json_t *got = kq_memo_requests_or(m, "ns", "w", v2, log_compute, &l);
    assert_int_equal(l.calls, 1);
    assert_ptr_equal(got, rr);
    json_decref(got);
    json_decref(rr);
    json_t *v3 = decodable_workload(); /* another spec value, decoded */
    const struct api_workload *d = kq_memo_decode(m, v3, NULL);
    assert_non_null(d);
    rr = kq_memo_requests_or(m, "ns", "w", v3, log_compute, &l);
    assert_int_equal(l.calls, 2);
    assert_ptr_equal(l.known, d);
    json_decref(rr);
    json_decref(v1);
    json_decref(v2);
    json_decref(v3);
    kq_memo_free(m);
}

/* The memo holds the values it compares, not the document they came from
 * (the store can then give a Workload's next version the metadata map in
 * place): the document it was fed is freed once its other holders let it
 * go, and a later version sharing its values still compares the same and
 * decodes its status only. */
static void values_outlive_the_document(void **state)
{
    (void)state;
    struct kq_memo *m = kq_memo_new();
    json_t *v1 = decodable_workload();
    assert_non_null(kq_memo_decode(m, v1, NULL));
    kq_wl_view_drop(); /* the reading kept of v1 */
    assert_int_equal(v1->refcount, 1); /* ours only */
    json_t *v2 = store_status_copy(v1, NULL);
    api_cond_set(v2, "QuotaReserved", "False", "Pending", "still waiting", T0 + 1000);
    json_decref(v1); /* gone: its values live on in v2 and the memo */
    bool admitted = true;
    assert_true(kq_memo_same(m, v2, &admitted));
    assert_false(admitted);
    json_t *v3 = store_status_copy(v2, NULL);
    api_cond_set(v3, "Admitted", "True", "Admitted", "", T0 + 2000);
    bool status_only = false;
    const struct api_workload *d = kq_memo_decode(m, v3, &status_only);
    assert_non_null(d);
    assert_true(status_only);
    assert_true(d->admitted);
    kq_wl_view_drop();
    assert_int_equal(v3->refcount, 1);
    /* an equal document built anew: other values, not the same */
    json_t *v4 = workload();
    assert_false(kq_memo_same(m, v4, &admitted));
    json_decref(v2);
    json_decref(v3);
    json_decref(v4);
    kq_memo_free(m);
}

/* A small deterministic generator for the random admissions below. */
static uint64_t next_rand(uint64_t *x)
{
    *x = *x * UINT64_C(6364136223846793005) + UINT64_C(1442695040888963407);
    return *x >> 17;
}

/* A resource amount: the edge values and random ones of every size, in
 * the units of the resource (milli-CPU for cpu). */
static int64_t random_amount(uint64_t *x)
{
    static const int64_t edges[] = {0, 1, 7, 999, 1000, 1001, 1023, 1024, 1500, 1536,
                                    INT64_C(1000000), INT64_C(1048576), INT64_C(1073741824),
                                    INT64_C(1000000000000), INT64_C(1099511627776),
                                    INT64_C(3) << 40, INT64_C(999999999999999),
                                    INT64_C(123456789012345678)};
    uint64_t r = next_rand(x);
    switch (r % 4) {
    case 0: return edges[(r >> 2) % (sizeof(edges) / sizeof(edges[0]))];
    case 1: return (int64_t)((r >> 2) % 100000);
    case 2: return (int64_t)((r >> 2) % 1000 + 1) * (int64_t)(1 << (10 * ((r >> 12) % 4)));
    default: return (int64_t)(next_rand(x) % (UINT64_C(1) << (next_rand(x) % 60)));
    }
}

/* A random admission in the engine's shape: per pod set, a sorted subset
 * of the resources, each with a flavor and a usage. */
static void random_admission(uint64_t *x, struct api_admission *a)
{
    static const char *const res[] = {"cpu", "example.com/dongle", "memory",
                                      "nvidia.com/gpu", "pods"};
    memset(a, 0, sizeof(*a));
    a->cluster_queue = next_rand(x) % 4 ? xstrdup("cq-a") : NULL;
    a->n_podsets = 1 + next_rand(x) % 3;
    a->podsets = xcalloc(a->n_podsets, sizeof(*a->podsets));
    for (size_t i = 0; i < a->n_podsets; i++) {
        struct api_podset_assignment *p = &a->podsets[i];
        p->name = xasprintf("ps-%zu", i);
        p->count = (int32_t)(next_rand(x) % 1000);
        p->flavors.items = xcalloc(5, sizeof(*p->flavors.items));
        p->resource_usage.items = xcalloc(5, sizeof(*p->resource_usage.items));
        for (size_t r = 0; r < 5; r++) {
            if (next_rand(x) % 2)
                continue;
            p->flavors.items[p->flavors.n].key = xstrdup(res[r]);
            p->flavors.items[p->flavors.n++].value = xasprintf("flavor-%d", (int)(next_rand(x) % 3));
            p->resource_usage.items[p->resource_usage.n].name = xstrdup(res[r]);
            p->resource_usage.items[p->resource_usage.n++].value = random_amount(x);
        }
    }
}

/* The status.admission the scheduler writes for an engine admission
 * (kq_admission_json) decodes to that admission exactly (its cluster
 * queue, else the decision's): names, counts, flavors and usage in the
 * same order, every quantity read back as the amount written. The
 * scheduler's admission hint to the memo rests on it. */
static void admission_json_decodes_to_its_admission(void **state)
{
    (void)state;
    uint64_t x = 42;
    for (int k = 0; k < 2000; k++) {
        struct api_admission a;
        random_admission(&x, &a);
        assert_true(api_admission_is_canonical(&a) == (a.cluster_queue != NULL));
        json_t *doc = json_pack("{s:{s:o}}", "status", "admission", kq_admission_json(&a, "cq-d"));
        if (!a.cluster_queue)
            a.cluster_queue = xstrdup("cq-d");
        assert_true(api_admission_is_canonical(&a));
        struct api_workload wl;
        memset(&wl, 0, sizeof(wl));
        assert_int_equal(api_workload_status_from_json(doc, &wl, false), 0);
        assert_true(wl.has_admission);
        assert_true(api_admission_equal(&wl.admission, &a));
        api_workload_release(&wl);
        api_admission_release(&a);
        json_decref(doc);
    }
    /* and what is not in the decoded shape says so */
    struct api_admission a;
    random_admission(&x, &a);
    xfree(a.cluster_queue);
    a.cluster_queue = xstrdup("cq");
    struct api_podset_assignment *p = &a.podsets[0];
    api_labels_release(&p->flavors);
    p->flavors.items = xcalloc(2, sizeof(*p->flavors.items));
    p->flavors.items[0].key = xstrdup("memory");
    p->flavors.items[0].value = xstrdup("f");
    p->flavors.items[1].key = xstrdup("cpu");
    p->flavors.items[1].value = xstrdup("f");
    p->flavors.n = 2;
    assert_false(api_admission_is_canonical(&a));
    api_admission_release(&a);
}

/* The next version of *prev with status.admission adm (taken; NULL:
 * removed), decoded by the memo; *prev becomes it. */
static const struct api_workload *with_admission(struct kq_memo *m, json_t **prev, json_t *adm)
{
    json_t *doc = store_status_copy(*prev, NULL);
    if (adm)
        JX_SET_NEW(doc, adm, "status", "admission");
    else
        json_object_del(json_object_get(doc, "status"), "admission");
    json_decref(*prev);
    *prev = doc;
    const struct api_workload *d = kq_memo_decode(m, doc, NULL);
    assert_non_null(d);
    assert_int_equal(d->has_admission, adm != NULL);
    return d;
}

/* The admission of a document written with kq_admission_json's value (any
 * JSON) decodes as the memo's hint for that very value says, once; another
 * value, even an equal one, is decoded. */
static void an_admission_hint_is_taken_for_its_very_value(void **state)
{
    (void)state;
    struct kq_memo *m = kq_memo_new();
    json_t *prev = decodable_workload();
    assert_non_null(kq_memo_decode(m, prev, NULL));
    json_t *adm = admission_value();
    /* hints equal to adm's decoding (the memo's debug check compares what
     * it answers with a fresh decode); which one was taken is told by the
     * address of its pod sets */
    json_t *src = json_pack("{s:{s:O}}", "status", "admission", adm);
    struct api_workload hinted[2];
    for (int i = 0; i < 2; i++) {
        memset(&hinted[i], 0, sizeof(hinted[i]));
        assert_int_equal(api_workload_status_from_json(src, &hinted[i], false), 0);
    }
    const struct api_podset_assignment *hint_podsets = hinted[0].admission.podsets;
    kq_memo_admission_hint(m, "ns", "w", adm, &hinted[0].admission);
    assert_null(hinted[0].admission.podsets); /* taken */
    /* an equal value, not the very one: decoded */
    const struct api_workload *d = with_admission(m, &prev, jx_deep_copy(adm));
    assert_int_equal(d->admission.podsets[0].count, 1);
    assert_ptr_not_equal(d->admission.podsets, hint_podsets);
    with_admission(m, &prev, NULL);
    /* the very value: the hint */
    d = with_admission(m, &prev, json_incref(adm));
    assert_string_equal(d->admission.cluster_queue, "cq");
    assert_ptr_equal(d->admission.podsets, hint_podsets);
    /* taken once: the very value again later is decoded */
    with_admission(m, &prev, NULL);
    d = with_admission(m, &prev, json_incref(adm));
    assert_int_equal(d->admission.podsets[0].count, 1);
    /* a hint left unused goes with the entry */
    kq_memo_admission_hint(m, "ns", "w", adm, &hinted[1].admission);
    kq_memo_forget(m, "ns", "w");
    for (int i = 0; i < 2; i++)
        api_workload_release(&hinted[i]);
    json_decref(prev);
    json_decref(src);
    json_decref(adm);
    kq_memo_free(m);
}

/* The calls that name a Workload (ns, name) look at the entry the memo
 * found last before the table (kueue/memo.c find_last): each answers for
 * its own Workload only, a name sharing a prefix with the last one's
 * included, and a forgotten last entry is not found again. */
static void last_entry_answers_for_its_name_only(void **state)
{
    (void)state;
    struct kq_memo *m = kq_memo_new();
    json_t *v1 = decodable_workload(); /* ns/w */
    assert_non_null(kq_memo_decode(m, v1, NULL)); /* ns/w found last */
    json_t *rr = json_pack("[{s:s}]", "name", "main");
    kq_memo_set_requests(m, "ns", "w2", v1, rr); /* another Workload's */
    assert_null(kq_memo_requests(m, "ns", "w", v1));
    assert_null(kq_memo_requests(m, "nsw", "", v1));
    assert_null(kq_memo_requests(m, "n", "s", v1));
    json_t *got = kq_memo_requests(m, "ns", "w2", v1);
    assert_ptr_equal(got, rr);
    json_decref(got);
    assert_null(kq_memo_decoded_spec(m, "ns", "w2", v1));
    assert_non_null(kq_memo_decoded_spec(m, "ns", "w", v1));
    assert_true(kq_memo_expected_changed(m, "ns", "w", 1000, false, 0));
    assert_true(kq_memo_expected_changed(m, "ns", "w2", 1000, false, 0));
    assert_false(kq_memo_expected_changed(m, "ns", "w", 1000, false, 0));
    /* w2 forgotten after w was read: w stays */
    struct kq_wl_meta meta;
    kq_memo_meta(m, v1, &meta);
    kq_memo_forget(m, "ns", "w2");
    assert_null(kq_memo_requests(m, "ns", "w2", v1));
    assert_non_null(kq_memo_decoded_spec(m, "ns", "w", v1));
    assert_false(kq_memo_expected_changed(m, "ns", "w", 1000, false, 0));
    /* the last entry forgotten: none found for its name */
    kq_memo_meta(m, v1, &meta);
    kq_memo_forget(m, "ns", "w");
    assert_null(kq_memo_decoded_spec(m, "ns", "w", v1));
    assert_true(kq_memo_expected_changed(m, "ns", "w", 1000, false, 0));
    bool admitted = false;
    assert_false(kq_memo_same(m, v1, &admitted));
    json_decref(rr);
    json_decref(v1);
    kq_memo_free(m);
}

/* The memo's invariant (the same compared values decode to the same
 * Workload) is checked on every hit in debug builds: a stored document
 * changed in place behind the memo's back (its priority value, whose
 * identity the memo compares, now says 7) makes the next "same" abort
 * instead of feeding the engine the stale Workload. */
#ifndef NDEBUG /* the body of a test that runs in debug builds only */
static void hit_stale_entry(void *arg)
{
    (void)arg;
    struct kq_memo *m = kq_memo_new();
    json_t *v1 = decodable_workload();
    if (!kq_memo_decode(m, v1, NULL))
        _exit(3);
    bool admitted = false;
    if (!kq_memo_same(m, v1, &admitted)) /* fresh: the check passes */
        _exit(4);
    json_integer_set(JX_GET(v1, "spec", "priority"), 7);
    kq_memo_same(m, v1, &admitted); /* stale: must abort */
}
#endif

static void stale_entry_aborts_in_debug_builds(void **state)
{
    (void)state;
#ifdef NDEBUG
    skip(); /* the check is compiled in debug builds only (make test's ASan build) */
#else
    assert_child_aborts(hit_stale_entry, NULL);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_values_are_recognised_and_changes_are_not),
        cmocka_unit_test(conditions_compared_by_identity),
        cmocka_unit_test(decoding_keeps_what_did_not_change),
        cmocka_unit_test(status_writes_decode_as_the_full_decoding),
        cmocka_unit_test(finished_recognised_without_decoding),
        cmocka_unit_test(meta_then_same_or_decode),
        cmocka_unit_test(expected_values_are_given_once),
        cmocka_unit_test(requests_are_remembered_per_spec_value),
        cmocka_unit_test(requests_or_computes_once_per_spec_value),
        cmocka_unit_test(values_outlive_the_document),
        cmocka_unit_test(admission_json_decodes_to_its_admission),
        cmocka_unit_test(an_admission_hint_is_taken_for_its_very_value),
        cmocka_unit_test(last_entry_answers_for_its_name_only),
        cmocka_unit_test(stale_entry_aborts_in_debug_builds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
