/*
 * Unit tests for the store's copy-saving paths: store_get_status_copy (a
 * document whose status alone is the caller's), store_update_take and
 * store_create_take (writes that keep the caller's values instead of
 * copying them), store_update_status_take (the same, giving the document
 * back), with the same results, preconditions and no-op rule as
 * store_update and store_create.
 */
#include "test_store_fixture.h"

#include "api/meta.h"

static json_t *make_wl(struct fx *f)
{
    json_t *in = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:s, s:i, s:[{s:s}]}, "
                           "s:{s:[{s:s, s:s}]}}",
                           "apiVersion", "kueue.x-k8s.io/v1beta1", "kind", "Workload",
                           "metadata", "name", "wl", "labels", "a", "1", "spec", "queueName",
                           "q", "priority", 1, "podSets", "name", "main", "status",
                           "conditions", "type", "QuotaReserved", "status", "False");
    return fx_create(f->s, KIND_WORKLOAD, "ns", in);
}

static void status_copy_owns_only_status_and_metadata_map(void **state)
{
    struct fx *f = *state;
    json_t *wl = make_wl(f);
    json_t *cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    assert_non_null(cp);
    assert_ptr_not_equal(cp, wl);
    assert_true(json_equal(cp, wl));
    /* spec and metadata are the stored document's own; status is new */
    assert_ptr_equal(JX_GET(cp, "spec"), JX_GET(wl, "spec"));
    assert_ptr_equal(JX_GET(cp, "metadata"), JX_GET(wl, "metadata"));
    assert_ptr_not_equal(JX_GET(cp, "status"), JX_GET(wl, "status"));
    assert_ptr_not_equal(JX_GET(cp, "status", "conditions"), JX_GET(wl, "status", "conditions"));
    /* store_status_copy: the metadata map is new, its values shared */
    json_t *own = store_status_copy(wl, NULL);
    assert_true(json_equal(own, wl));
    assert_ptr_not_equal(JX_GET(own, "metadata"), JX_GET(wl, "metadata"));
    assert_ptr_equal(JX_GET(own, "metadata", "labels"), JX_GET(wl, "metadata", "labels"));
    /* changing the copies' status and the own copy's metadata keys leaves
     * the store alone */
    api_cond_set(cp, "QuotaReserved", "True", "QuotaReserved", "m", FX_START_MS);
    api_cond_set(own, "QuotaReserved", "True", "QuotaReserved", "m", FX_START_MS);
    json_object_set_new(JX_GET(own, "metadata"), "resourceVersion", json_string("99"));
    json_t *got = store_get(f->s, KIND_WORKLOAD, "ns", "wl");
    assert_ptr_equal(got, wl);
    assert_false(api_cond_is_true(got, "QuotaReserved"));
    assert_string_equal(fx_meta(got, "resourceVersion"), "1");
    json_decref(got);
    json_decref(own);
    json_decref(cp);
    json_decref(wl);
    assert_null(store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "missing", NULL));
    /* members named as shared are the stored document's own */
    json_t *rr = json_pack("[{s:s}]", "name", "main");
    json_t *in = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    JX_SET_NEW(in, rr, "status", "resourceRequests");
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", in, STORE_UPDATE_STATUS, NULL),
                     0);
    static const char *const shared[] = {"resourceRequests", NULL};
    json_t *a = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", shared);
    json_t *b = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    assert_ptr_equal(JX_GET(a, "status", "resourceRequests"), rr);
    assert_ptr_not_equal(JX_GET(b, "status", "resourceRequests"), rr);
    assert_true(json_equal(JX_GET(b, "status", "resourceRequests"), rr));
    json_decref(a);
    json_decref(b);
}

static void update_take_status_keeps_the_callers_status(void **state)
{
    struct fx *f = *state;
    json_t *wl = make_wl(f);
    json_t *cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    api_cond_set(cp, "QuotaReserved", "True", "QuotaReserved", "reserved", FX_START_MS);
    json_t *st = JX_GET(cp, "status");
    json_t *out = NULL;
    assert_int_equal(
        store_update_take(f->s, KIND_WORKLOAD, "ns", json_incref(cp), STORE_UPDATE_STATUS, &out),
        0);
    assert_ptr_equal(JX_GET(out, "status"), st); /* stored as it is, not copied */
    assert_ptr_equal(JX_GET(out, "spec"), JX_GET(wl, "spec"));
    assert_true(api_cond_is_true(out, "QuotaReserved"));
    assert_string_equal(fx_meta(out, "resourceVersion"), "2");
    assert_int_equal(fx_gen(out), 1);
    /* the caller's metadata map is not the stored one */
    assert_string_equal(fx_meta(cp, "resourceVersion"), "1");
    /* the old version is untouched */
    assert_false(api_cond_is_true(wl, "QuotaReserved"));
    assert_string_equal(fx_meta(wl, "resourceVersion"), "1");
    json_decref(out);
    json_decref(cp);

    /* the same status again: no new version, no event */
    cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    assert_int_equal(
        store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, NULL), 0);
    assert_int_equal(store_rv(f->s), 2);
    json_decref(wl);
}

static void update_take_checks_preconditions_and_input(void **state)
{
    struct fx *f = *state;
    json_t *wl = make_wl(f);
    json_t *cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    json_t *stale = json_deep_copy(cp);
    api_cond_set(cp, "Admitted", "True", "Admitted", "", FX_START_MS);
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, NULL),
                     0);
    /* resourceVersion 1 is stale now */
    api_cond_set(stale, "Finished", "True", "Succeeded", "", FX_START_MS);
    assert_int_equal(
        store_update_take(f->s, KIND_WORKLOAD, "ns", stale, STORE_UPDATE_STATUS, NULL),
        CU_ECONFLICT);
    json_t *other = json_deep_copy(wl);
    json_object_set_new(JX_OBJ(other, "metadata"), "resourceVersion", json_string(""));
    json_object_set_new(JX_OBJ(other, "metadata"), "uid", json_string("someone-else"));
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", other, STORE_UPDATE_ALL, NULL),
                     CU_ECONFLICT);
    json_t *missing = json_pack("{s:{s:s}}", "metadata", "name", "nope");
    assert_int_equal(
        store_update_take(f->s, KIND_WORKLOAD, "ns", missing, STORE_UPDATE_STATUS, NULL),
        CU_ENOTFOUND);
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", json_string("x"),
                                       STORE_UPDATE_STATUS, NULL),
                     CU_EINVAL);
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", json_pack("{s:{}}", "metadata"),
                                       STORE_UPDATE_STATUS, NULL),
                     CU_EINVAL);
    assert_int_equal(store_rv(f->s), 2);
    json_t *got = store_get(f->s, KIND_WORKLOAD, "ns", "wl");
    assert_false(api_cond_is_true(got, "Finished"));
    json_decref(got);
    json_decref(wl);
}

static void update_take_main_and_all_match_store_update(void **state)
{
    struct fx *f = *state;
    json_t *wl = make_wl(f);
    /* MAIN: spec and metadata from the input, status kept */
    json_t *upd = json_deep_copy(wl);
    json_object_set_new(JX_OBJ(upd, "spec"), "priority", json_integer(5));
    json_object_set_new(JX_OBJ(upd, "status"), "ignored", json_true());
    api_set_label(upd, "b", "2");
    json_t *out = NULL;
    assert_int_equal(
        store_update_take(f->s, KIND_WORKLOAD, "ns", json_incref(upd), STORE_UPDATE_MAIN, &out),
        0);
    assert_int_equal(JX_INT(out, 0, "spec", "priority"), 5);
    assert_ptr_equal(JX_GET(out, "spec"), JX_GET(upd, "spec"));
    assert_null(JX_GET(out, "status", "ignored"));
    assert_ptr_equal(JX_GET(out, "status"), JX_GET(wl, "status"));
    assert_string_equal(api_label(out, "b"), "2");
    assert_int_equal(fx_gen(out), 2);
    assert_string_equal(fx_meta(out, "resourceVersion"), "2");
    assert_string_equal(fx_meta(out, "uid"), fx_meta(wl, "uid"));
    /* the caller's metadata map did not get the server's fields */
    assert_string_equal(fx_meta(upd, "resourceVersion"), "1");
    json_decref(out);
    json_decref(upd);

    /* ALL: everything from the input, server metadata from the store */
    json_t *cur = store_get(f->s, KIND_WORKLOAD, "ns", "wl");
    upd = json_deep_copy(cur);
    json_decref(cur);
    json_object_set_new(JX_OBJ(upd, "status"), "admitted", json_true());
    json_object_set_new(JX_OBJ(upd, "metadata"), "generation", json_integer(40));
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", upd, STORE_UPDATE_ALL, &out),
                     0);
    assert_true(JX_BOOL(out, false, "status", "admitted"));
    assert_int_equal(fx_gen(out), 2);
    assert_string_equal(fx_meta(out, "resourceVersion"), "3");
    json_decref(out);
    json_decref(wl);
}

static void create_take_keeps_the_callers_values(void **state)
{
    struct fx *f = *state;
    json_t *in = fx_lq("team-a", "main", "cq");
    json_t *spec = JX_GET(in, "spec");
    json_t *out = NULL;
    assert_int_equal(
        store_create_take(f->s, KIND_LOCALQUEUE, NULL, json_incref(in), &out), 0);
    assert_ptr_equal(JX_GET(out, "spec"), spec); /* not copied */
    assert_string_equal(fx_meta(out, "namespace"), "team-a");
    assert_string_equal(fx_meta(out, "resourceVersion"), "1");
    assert_non_null(fx_meta(out, "uid"));
    /* the caller's maps did not get the server's fields */
    assert_null(fx_meta(in, "uid"));
    assert_null(fx_meta(in, "resourceVersion"));
    json_decref(out);
    /* the same name again, or no name: refused, obj released */
    assert_int_equal(store_create_take(f->s, KIND_LOCALQUEUE, NULL, in, NULL), CU_EEXIST);
    assert_int_equal(store_create_take(f->s, KIND_LOCALQUEUE, "ns",
                                       json_pack("{s:{}}", "metadata"), NULL),
                     CU_EINVAL);
    assert_int_equal(store_count(f->s, KIND_LOCALQUEUE), 1);
    /* handed over as the only reference: stored as it is, not even the
     * top-level and metadata maps copied */
    in = fx_lq("team-a", "second", "cq");
    json_t *meta = JX_GET(in, "metadata");
    assert_int_equal(store_create_take(f->s, KIND_LOCALQUEUE, NULL, in, &out), 0);
    assert_ptr_equal(out, in);
    assert_ptr_equal(JX_GET(out, "metadata"), meta);
    assert_string_equal(fx_meta(out, "resourceVersion"), "2");
    json_t *got = store_get(f->s, KIND_LOCALQUEUE, "team-a", "second");
    assert_ptr_equal(got, out);
    json_decref(got);
    json_decref(out);
}

/* The member names of an object, in its order, joined by ','. */
static void keys_of(const json_t *o, char *buf, size_t len)
{
    buf[0] = '\0';
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v) {
        if (buf[0])
            strncat(buf, ",", len - strlen(buf) - 1);
        strncat(buf, key, len - strlen(buf) - 1);
    }
}

static void status_writes_keep_member_order(void **state)
{
    struct fx *f = *state;
    char keys[256];
    /* status in the middle stays in the middle; metadata keeps its order */
    json_t *wl = make_wl(f);
    json_t *cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    keys_of(cp, keys, sizeof(keys));
    assert_string_equal(keys, "apiVersion,kind,metadata,spec,status");
    json_t *mkeys = JX_GET(wl, "metadata");
    char want[256], got[256];
    keys_of(mkeys, want, sizeof(want));
    keys_of(JX_GET(cp, "metadata"), got, sizeof(got));
    assert_string_equal(got, want);
    api_cond_set(cp, "Admitted", "True", "Admitted", "", FX_START_MS);
    json_t *out = NULL;
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, &out),
                     0);
    keys_of(out, keys, sizeof(keys));
    assert_string_equal(keys, "apiVersion,kind,metadata,spec,status");
    keys_of(JX_GET(out, "metadata"), got, sizeof(got));
    assert_string_equal(got, want);
    json_decref(out);
    json_decref(wl);

    /* a status written where there was none goes last; removing it keeps
     * the rest in order */
    json_t *lq = fx_create(f->s, KIND_LOCALQUEUE, NULL, fx_lq("ns", "lq", "cq"));
    json_t *upd = json_deep_copy(lq);
    JX_SET_NEW(upd, json_integer(3), "status", "pendingWorkloads");
    assert_int_equal(store_update(f->s, KIND_LOCALQUEUE, "ns", upd, STORE_UPDATE_STATUS, &out),
                     0);
    keys_of(out, keys, sizeof(keys));
    assert_string_equal(keys, "apiVersion,kind,metadata,spec,status");
    assert_ptr_equal(JX_GET(out, "spec"), JX_GET(lq, "spec"));
    json_decref(out);
    json_t *none = json_deep_copy(lq);
    json_object_del(none, "status");
    json_object_del(JX_GET(none, "metadata"), "resourceVersion");
    assert_int_equal(store_update(f->s, KIND_LOCALQUEUE, "ns", none, STORE_UPDATE_STATUS, &out),
                     0);
    keys_of(out, keys, sizeof(keys));
    assert_string_equal(keys, "apiVersion,kind,metadata,spec");
    assert_string_equal(fx_meta(out, "resourceVersion"), "5");
    /* removing an absent status again changes nothing */
    json_t *again = NULL;
    assert_int_equal(
        store_update(f->s, KIND_LOCALQUEUE, "ns", none, STORE_UPDATE_STATUS, &again), 0);
    assert_ptr_equal(again, out);
    assert_int_equal(store_rv(f->s), 5);
    json_decref(again);
    json_decref(out);
    json_decref(none);
    json_decref(upd);
    json_decref(lq);
}

/* A status write handed the only reference to an untouched status copy
 * stores that very document; one whose metadata the caller changed (which
 * a status write ignores), or one still referenced elsewhere, is copied. */
static void update_take_status_stores_a_sole_status_copy_itself(void **state)
{
    struct fx *f = *state;
    json_t *wl = make_wl(f);
    json_t *cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    json_t *meta = JX_GET(cp, "metadata");
    api_cond_set(cp, "QuotaReserved", "True", "QuotaReserved", "r", FX_START_MS);
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, NULL),
                     0);
    json_t *got = store_get(f->s, KIND_WORKLOAD, "ns", "wl");
    assert_ptr_equal(got, cp); /* stored as it is */
    /* with a new metadata map of its own: the old version's is untouched */
    assert_ptr_not_equal(JX_GET(got, "metadata"), meta);
    assert_ptr_equal(meta, JX_GET(wl, "metadata"));
    assert_ptr_equal(JX_GET(got, "metadata", "labels"), JX_GET(wl, "metadata", "labels"));
    assert_ptr_equal(JX_GET(got, "metadata", "uid"), JX_GET(wl, "metadata", "uid"));
    assert_string_equal(fx_meta(got, "resourceVersion"), "2");
    assert_true(api_cond_is_true(got, "QuotaReserved"));
    assert_ptr_equal(JX_GET(got, "spec"), JX_GET(wl, "spec"));
    assert_string_equal(fx_meta(wl, "resourceVersion"), "1"); /* the old one untouched */
    json_decref(got);

    /* labels replaced on a store_status_copy (its metadata keys are the
     * caller's to set): not stored (status write), the copy is not reused */
    got = store_get(f->s, KIND_WORKLOAD, "ns", "wl");
    cp = store_status_copy(got, NULL);
    json_decref(got);
    json_object_set_new(JX_GET(cp, "metadata"), "labels", json_pack("{s:s}", "a", "changed"));
    api_cond_set(cp, "Admitted", "True", "Admitted", "", FX_START_MS);
    json_t *out = NULL;
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, &out),
                     0);
    assert_ptr_not_equal(out, cp);
    assert_string_equal(api_label(out, "a"), "1");
    assert_true(api_cond_is_true(out, "Admitted"));
    assert_string_equal(fx_meta(out, "resourceVersion"), "3");
    json_decref(out);

    /* an unchanged sole copy: nothing stored, the current document returned */
    cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    got = store_get(f->s, KIND_WORKLOAD, "ns", "wl");
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, &out),
                     0);
    assert_ptr_equal(out, got);
    assert_int_equal(store_rv(f->s), 3);
    json_decref(out);
    json_decref(got);

    /* the status removed: stored without one, the rest in order */
    cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    json_object_del(cp, "status");
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, &out),
                     0);
    assert_ptr_equal(out, cp);
    assert_null(JX_GET(out, "status"));
    char keys[256];
    keys_of(out, keys, sizeof(keys));
    assert_string_equal(keys, "apiVersion,kind,metadata,spec");
    json_decref(out);

    /* and added back: last */
    cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    api_cond_set(cp, "Finished", "True", "Succeeded", "", FX_START_MS);
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, &out),
                     0);
    assert_ptr_equal(out, cp);
    keys_of(out, keys, sizeof(keys));
    assert_string_equal(keys, "apiVersion,kind,metadata,spec,status");
    assert_string_equal(fx_meta(out, "resourceVersion"), "5");
    json_decref(out);
    json_decref(wl);
}

/* A store_get_status_copy shares the stored metadata map: a status write
 * gives the new version a map of its own (new resourceVersion, the other
 * values shared, the same order) and leaves the old version's, and a copy
 * someone else holds, as they were; a stale copy is refused; a deleting
 * object stays marked. */
static void status_copy_shared_metadata_is_never_changed(void **state)
{
    struct fx *f = *state;
    json_t *wl = make_wl(f);
    json_t *md1 = JX_GET(wl, "metadata");
    char want[256], got_keys[256];
    keys_of(md1, want, sizeof(want));

    /* a copy the caller keeps a reference to: the store copies it */
    json_t *cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    json_t *stale = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    api_cond_set(cp, "QuotaReserved", "True", "QuotaReserved", "r", FX_START_MS);
    json_t *out = NULL;
    assert_int_equal(
        store_update_take(f->s, KIND_WORKLOAD, "ns", json_incref(cp), STORE_UPDATE_STATUS, &out),
        0);
    assert_ptr_not_equal(out, cp);
    assert_ptr_equal(JX_GET(cp, "metadata"), md1); /* the caller's copy untouched */
    assert_ptr_not_equal(JX_GET(out, "metadata"), md1);
    assert_string_equal(fx_meta(wl, "resourceVersion"), "1");
    assert_string_equal(fx_meta(out, "resourceVersion"), "2");
    assert_ptr_equal(JX_GET(out, "metadata", "labels"), JX_GET(md1, "labels"));
    keys_of(JX_GET(out, "metadata"), got_keys, sizeof(got_keys));
    assert_string_equal(got_keys, want);
    assert_true(api_cond_is_true(out, "QuotaReserved"));
    json_decref(out);
    json_decref(cp);

    /* the other copy shares version 1's map: refused, nothing changed */
    api_cond_set(stale, "Finished", "True", "Succeeded", "", FX_START_MS);
    assert_int_equal(store_update_status_take(f->s, KIND_WORKLOAD, "ns", &stale), CU_ECONFLICT);
    assert_ptr_equal(JX_GET(stale, "metadata"), md1);
    assert_string_equal(fx_meta(wl, "resourceVersion"), "1");
    json_t *cur = store_get(f->s, KIND_WORKLOAD, "ns", "wl");
    assert_false(api_cond_is_true(cur, "Finished"));
    assert_string_equal(fx_meta(cur, "resourceVersion"), "2");
    json_decref(cur);
    json_decref(stale);

    /* a deleting object (finalizer kept): a status write keeps it marked */
    json_t *in = json_deep_copy(wl);
    json_object_del(JX_GET(in, "metadata"), "resourceVersion");
    json_object_set_new(JX_GET(in, "metadata"), "finalizers", json_pack("[s]", "x/y"));
    assert_int_equal(store_update(f->s, KIND_WORKLOAD, "ns", in, STORE_UPDATE_MAIN, NULL), 0);
    json_decref(in);
    assert_int_equal(store_delete(f->s, KIND_WORKLOAD, "ns", "wl", NULL, NULL), 0);
    cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    json_t *md4 = json_incref(JX_GET(cp, "metadata"));
    api_cond_set(cp, "Admitted", "True", "Admitted", "", FX_START_MS);
    assert_int_equal(store_update_status_take(f->s, KIND_WORKLOAD, "ns", &cp), 0);
    assert_ptr_not_equal(JX_GET(cp, "metadata"), md4);
    assert_string_equal(fx_meta(cp, "resourceVersion"), "5");
    assert_string_equal(fx_meta(cp, "deletionTimestamp"),
                        json_string_value(JX_GET(md4, "deletionTimestamp")));
    assert_string_equal(json_string_value(JX_GET(md4, "resourceVersion")), "4");
    assert_int_equal(store_count(f->s, KIND_WORKLOAD), 1);
    json_decref(md4);
    json_decref(cp);
    json_decref(wl);
}

/* store_update_status_take: on success the caller's reference becomes the
 * stored document (its own copy, stored as it is); on failure the caller
 * keeps its copy, unchanged and readable. */
static void update_status_take_gives_back_the_document(void **state)
{
    struct fx *f = *state;
    json_t *wl = make_wl(f);
    json_t *cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    json_t *mine = cp;
    api_cond_set(cp, "QuotaReserved", "True", "QuotaReserved", "r", FX_START_MS);
    assert_int_equal(store_update_status_take(f->s, KIND_WORKLOAD, "ns", &cp), 0);
    assert_ptr_equal(cp, mine); /* the sole copy, stored without a copy */
    assert_string_equal(fx_meta(cp, "resourceVersion"), "2");
    json_t *got = store_get(f->s, KIND_WORKLOAD, "ns", "wl");
    assert_ptr_equal(got, cp);
    json_decref(got);
    json_decref(cp); /* the store still holds it */
    got = store_get(f->s, KIND_WORKLOAD, "ns", "wl");
    assert_true(api_cond_is_true(got, "QuotaReserved"));
    json_decref(got);

    /* a copy someone else also holds: stored as a copy, *doc replaced */
    cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    json_t *keep = json_incref(cp);
    api_cond_set(cp, "Admitted", "True", "Admitted", "", FX_START_MS);
    assert_int_equal(store_update_status_take(f->s, KIND_WORKLOAD, "ns", &cp), 0);
    assert_ptr_not_equal(cp, keep);
    assert_true(api_cond_is_true(cp, "Admitted"));
    assert_string_equal(fx_meta(cp, "resourceVersion"), "3");
    assert_string_equal(fx_meta(keep, "resourceVersion"), "2");
    json_decref(cp);
    json_decref(keep);

    /* refused (stale resourceVersion, then gone): *doc is the caller's still */
    cp = json_deep_copy(wl);
    mine = cp;
    api_cond_set(cp, "Finished", "True", "Succeeded", "", FX_START_MS);
    assert_int_equal(store_update_status_take(f->s, KIND_WORKLOAD, "ns", &cp), CU_ECONFLICT);
    assert_ptr_equal(cp, mine);
    assert_int_equal(cp->refcount, 1);
    assert_true(api_cond_is_true(cp, "Finished"));
    assert_string_equal(fx_meta(cp, "resourceVersion"), "1");
    assert_int_equal(store_delete(f->s, KIND_WORKLOAD, "ns", "wl", NULL, NULL), 0);
    assert_int_equal(store_update_status_take(f->s, KIND_WORKLOAD, "ns", &cp), CU_ENOTFOUND);
    assert_ptr_equal(cp, mine);
    assert_int_equal(cp->refcount, 1);
    assert_string_equal(api_name(cp), "wl");
    json_decref(cp);
    json_t *bad = json_string("x");
    assert_int_equal(store_update_status_take(f->s, KIND_WORKLOAD, "ns", &bad), CU_EINVAL);
    assert_int_equal(bad->refcount, 1);
    json_decref(bad);
    assert_int_equal(store_rv(f->s), 4);
    json_decref(wl);
}

/* A taken status write compares the statuses member by member in order,
 * and by key when the order differs: equal contents in other maps (or in
 * another order) are a no-op, a different value is a write. A taken copy
 * without a status removes it; one whose members moved keeps the stored
 * member order (its status is taken, the document not stored as it is). */
static void update_take_status_noop_and_removal(void **state)
{
    struct fx *f = *state;
    char keys[256];
    json_t *wl = make_wl(f);
    uint64_t rv = store_rv(f->s);
    /* the same status rebuilt from scratch, members reversed */
    json_t *cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    JX_SET_NEW(cp, json_integer(2), "status", "requeueCount");
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, NULL),
                     0);
    json_t *cur = store_get(f->s, KIND_WORKLOAD, "ns", "wl");
    assert_int_equal(store_rv(f->s), rv + 1);
    json_t *rebuilt = json_pack("{s:i, s:O}", "requeueCount", 2, "conditions",
                                JX_GET(cur, "status", "conditions"));
    json_t *deep = json_deep_copy(JX_GET(rebuilt, "conditions"));
    json_object_set_new(rebuilt, "conditions", deep);
    cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    json_object_set_new(cp, "status", rebuilt);
    json_t *out = NULL;
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, &out),
                     0);
    assert_ptr_equal(out, cur); /* a no-op: the stored document itself */
    assert_int_equal(store_rv(f->s), rv + 1);
    json_decref(out);
    /* in order, one member an equal copy, the other different */
    cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    JX_SET_NEW(cp, json_deep_copy(JX_GET(cur, "status", "conditions")), "status", "conditions");
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, NULL),
                     0);
    assert_int_equal(store_rv(f->s), rv + 1);
    cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    JX_SET_NEW(cp, json_deep_copy(JX_GET(cur, "status", "conditions")), "status", "conditions");
    JX_SET_NEW(cp, json_integer(3), "status", "requeueCount");
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, &out),
                     0);
    assert_int_equal(store_rv(f->s), rv + 2);
    assert_int_equal(JX_INT(out, -1, "status", "requeueCount"), 3);
    json_decref(out);
    json_decref(cur);
    /* a copy whose other members moved: its status alone is taken, the
     * stored order kept */
    cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    JX_SET_NEW(cp, json_integer(4), "status", "requeueCount");
    json_object_del(cp, "kind");
    json_object_set_new(cp, "kind", json_string("Workload"));
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, &out),
                     0);
    keys_of(out, keys, sizeof(keys));
    assert_string_equal(keys, "apiVersion,kind,metadata,spec,status");
    assert_int_equal(JX_INT(out, -1, "status", "requeueCount"), 4);
    assert_int_equal(store_rv(f->s), rv + 3);
    json_decref(out);
    /* no status at all: removed, the rest in order; again: a no-op */
    for (int i = 0; i < 2; i++) {
        cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
        json_object_del(cp, "status");
        assert_int_equal(
            store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, &out), 0);
        keys_of(out, keys, sizeof(keys));
        assert_string_equal(keys, "apiVersion,kind,metadata,spec");
        assert_int_equal(store_rv(f->s), rv + 4);
        json_decref(out);
    }
    /* a status written where there was none: stored as it is, last */
    cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    JX_SET_NEW(cp, json_integer(5), "status", "requeueCount");
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, &out),
                     0);
    assert_ptr_equal(out, cp);
    keys_of(out, keys, sizeof(keys));
    assert_string_equal(keys, "apiVersion,kind,metadata,spec,status");
    assert_int_equal(fx_rv(out), rv + 5);
    json_decref(out);
    json_decref(wl);
}

/* A taken status write over a version that only the store holds (its
 * event trimmed, no reader) gives the new version the stored metadata map
 * itself with the new resourceVersion; a version still held by a reader or
 * by the event log keeps its map and resourceVersion. */
static void status_write_reuses_an_unheld_metadata_map(void **state)
{
    struct fx *f = *state;
    json_decref(make_wl(f));
    store_events_trim(f->s, store_rv(f->s));
    json_t *cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    json_t *meta = JX_GET(cp, "metadata");
    JX_SET_NEW(cp, json_integer(1), "status", "requeueCount");
    json_t *out = NULL;
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, &out),
                     0);
    assert_ptr_equal(JX_GET(out, "metadata"), meta); /* the very map */
    assert_string_equal(fx_meta(out, "resourceVersion"), "2");
    assert_string_equal(fx_meta(out, "name"), "wl");
    struct store_events ev = {0};
    assert_int_equal(store_events_since(f->s, 1, -1, NULL, 0, &ev), 1);
    assert_ptr_equal(ev.items[0].obj, out);
    store_events_release(&ev);
    /* held by a reader (out) and by the log: a new map, the old intact */
    cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    JX_SET_NEW(cp, json_integer(2), "status", "requeueCount");
    json_t *out2 = NULL;
    assert_int_equal(
        store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, &out2), 0);
    assert_ptr_not_equal(JX_GET(out2, "metadata"), meta);
    assert_string_equal(fx_meta(out2, "resourceVersion"), "3");
    assert_string_equal(fx_meta(out, "resourceVersion"), "2");
    json_decref(out);
    json_decref(out2);
    /* held by the log alone (version 3's event): a new map again */
    cp = store_get_status_copy(f->s, KIND_WORKLOAD, "ns", "wl", NULL);
    meta = JX_GET(cp, "metadata");
    JX_SET_NEW(cp, json_integer(3), "status", "requeueCount");
    assert_int_equal(store_update_take(f->s, KIND_WORKLOAD, "ns", cp, STORE_UPDATE_STATUS, &out),
                     0);
    assert_ptr_not_equal(JX_GET(out, "metadata"), meta);
    assert_int_equal(store_events_since(f->s, 2, -1, NULL, 0, &ev), 2);
    assert_string_equal(fx_meta(ev.items[0].obj, "resourceVersion"), "3");
    assert_int_equal(JX_INT(ev.items[0].obj, -1, "status", "requeueCount"), 2);
    assert_string_equal(fx_meta(ev.items[1].obj, "resourceVersion"), "4");
    store_events_release(&ev);
    json_decref(out);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(status_copy_owns_only_status_and_metadata_map),
        T(status_writes_keep_member_order),
        T(update_take_status_stores_a_sole_status_copy_itself),
        T(update_take_status_keeps_the_callers_status),
        T(update_status_take_gives_back_the_document),
        T(status_copy_shared_metadata_is_never_changed),
        T(update_take_checks_preconditions_and_input),
        T(update_take_main_and_all_match_store_update),
        T(create_take_keeps_the_callers_values),
        T(update_take_status_noop_and_removal),
        T(status_write_reuses_an_unheld_metadata_map),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
