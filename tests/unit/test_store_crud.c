/*
 * Unit tests for the store's objects: create/get/list/count, metadata
 * stamping, generateName, namespaces, the three update modes, generation,
 * preconditions, no-op updates, delete, finalizers.
 */
#include "test_store_fixture.h"

#include "api/meta.h"
#include "store/store-int.h"

static void create_stamps_kubernetes_metadata(void **state)
{
    struct fx *f = *state;
    json_t *lq = fx_create(f->s, KIND_LOCALQUEUE, "team-a", fx_lq(NULL, "main", "cq"));
    assert_string_equal(fx_meta(lq, "name"), "main");
    assert_string_equal(fx_meta(lq, "namespace"), "team-a");
    assert_string_equal(fx_meta(lq, "creationTimestamp"), "2026-01-02T03:04:05.678Z");
    assert_string_equal(fx_meta(lq, "resourceVersion"), "1");
    assert_int_equal(fx_gen(lq), 1);
    const char *uid = fx_meta(lq, "uid");
    assert_non_null(uid);
    assert_int_equal(strlen(uid), 36);
    assert_int_equal(uid[14], '4');
    assert_string_equal(JX_STR(lq, "spec", "clusterQueue"), "cq");
    assert_int_equal(store_rv(f->s), 1);

    json_t *got = store_get(f->s, KIND_LOCALQUEUE, "team-a", "main");
    assert_ptr_equal(got, lq); /* the same immutable document */
    json_decref(got);
    json_decref(lq);
}

/* creationTimestamp is the clock's time at each create: the text kept for
 * one instant is made again when the clock moves (the virtual clock only
 * moves forward). */
static void create_timestamp_follows_the_clock(void **state)
{
    struct fx *f = *state;
    static const int64_t offsets_ms[] = {0, 0, 1, 61001, 61001, 61002};
    for (size_t i = 0; i < sizeof(offsets_ms) / sizeof(offsets_ms[0]); i++) {
        clk_virtual_set(&f->clock, FX_START_MS + offsets_ms[i]);
        char name[16], want[TIMEFMT_LEN];
        snprintf(name, sizeof(name), "q%zu", i);
        json_t *lq = fx_create(f->s, KIND_LOCALQUEUE, "ns", fx_lq(NULL, name, "cq"));
        timefmt_rfc3339(FX_START_MS + offsets_ms[i], true, want);
        assert_string_equal(fx_meta(lq, "creationTimestamp"), want);
        json_decref(lq);
    }
}

static void create_does_not_keep_callers_object(void **state)
{
    struct fx *f = *state;
    json_t *in = fx_lq("ns", "q", "cq");
    json_t *out = NULL;
    assert_int_equal(store_create(f->s, KIND_LOCALQUEUE, NULL, in, &out), 0);
    json_object_set_new(JX_OBJ(in, "spec"), "clusterQueue", json_string("changed"));
    json_t *got = store_get(f->s, KIND_LOCALQUEUE, "ns", "q");
    assert_string_equal(JX_STR(got, "spec", "clusterQueue"), "cq");
    assert_null(JX_GET(in, "metadata", "uid"));
    json_decref(in);
    json_decref(got);
    json_decref(out);
}

static void create_keeps_given_uid_and_drops_server_fields(void **state)
{
    struct fx *f = *state;
    json_t *in = fx_rf("a");
    json_t *m = JX_OBJ(in, "metadata");
    json_object_set_new(m, "uid", json_string("11111111-2222-4333-8444-555555555555"));
    json_object_set_new(m, "namespace", json_string("ignored"));
    json_object_set_new(m, "resourceVersion", json_string("77"));
    json_object_set_new(m, "generation", json_integer(9));
    json_object_set_new(m, "deletionTimestamp", json_string("2026-01-01T00:00:00Z"));
    json_object_set_new(m, "creationTimestamp", json_string("2020-01-01T00:00:00Z"));
    json_t *rf = fx_create(f->s, KIND_RESOURCEFLAVOR, "also-ignored", in);
    assert_string_equal(fx_meta(rf, "uid"), "11111111-2222-4333-8444-555555555555");
    assert_null(fx_meta(rf, "namespace")); /* cluster-scoped */
    assert_string_equal(fx_meta(rf, "resourceVersion"), "1");
    assert_int_equal(fx_gen(rf), 1);
    assert_null(JX_GET(rf, "metadata", "deletionTimestamp"));
    assert_string_equal(fx_meta(rf, "creationTimestamp"), "2026-01-02T03:04:05.678Z");
    json_decref(rf);
    json_t *got = store_get(f->s, KIND_RESOURCEFLAVOR, NULL, "a");
    assert_non_null(got);
    json_decref(got);
    got = store_get(f->s, KIND_RESOURCEFLAVOR, "", "a");
    assert_non_null(got);
    json_decref(got);
}

static void create_namespace_from_argument_or_object(void **state)
{
    struct fx *f = *state;
    /* the argument wins over the object's own namespace */
    json_t *a = fx_create(f->s, KIND_LOCALQUEUE, "arg", fx_lq("own", "q1", "cq"));
    assert_string_equal(fx_meta(a, "namespace"), "arg");
    /* without an argument the object's namespace is used */
    json_t *b = fx_create(f->s, KIND_LOCALQUEUE, NULL, fx_lq("own", "q2", "cq"));
    assert_string_equal(fx_meta(b, "namespace"), "own");
    /* a namespaced kind with no namespace at all is refused */
    json_t *c = fx_lq(NULL, "q3", "cq");
    json_t *out = (json_t *)1;
    assert_int_equal(store_create(f->s, KIND_LOCALQUEUE, "", c, &out), CU_EINVAL);
    assert_null(out);
    json_decref(c);
    assert_int_equal(store_count(f->s, KIND_LOCALQUEUE), 2);
    assert_int_equal(store_rv(f->s), 2);
    json_decref(a);
    json_decref(b);
}

static void create_rejects_bad_input_without_change(void **state)
{
    struct fx *f = *state;
    json_t *bad[] = {
        json_string("x"),
        json_pack("{s:s}", "kind", "ResourceFlavor"),
        json_pack("{s:s}", "metadata", "notanobject"),
        json_pack("{s:{s:s}}", "metadata", "name", ""),
        json_pack("{s:{s:i}}", "metadata", "name", 3),
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(store_create(f->s, KIND_RESOURCEFLAVOR, NULL, bad[i], NULL), CU_EINVAL);
        json_decref(bad[i]);
    }
    json_t *rf = fx_rf("x");
    assert_int_equal(store_create(f->s, (enum api_kind_id)KIND__COUNT, NULL, rf, NULL),
                     CU_EINVAL);
    json_decref(rf);
    assert_int_equal(store_rv(f->s), 0);
    assert_int_equal(store_count(f->s, KIND_RESOURCEFLAVOR), 0);
}

static void create_existing_name_is_already_exists(void **state)
{
    struct fx *f = *state;
    json_decref(fx_create(f->s, KIND_LOCALQUEUE, "ns", fx_lq(NULL, "q", "cq1")));
    json_t *dup = fx_lq(NULL, "q", "cq2");
    json_t *out = NULL;
    assert_int_equal(store_create(f->s, KIND_LOCALQUEUE, "ns", dup, &out), CU_EEXIST);
    assert_null(out);
    json_decref(dup);
    /* the same name in another namespace or kind is a different object */
    json_decref(fx_create(f->s, KIND_LOCALQUEUE, "other", fx_lq(NULL, "q", "cq")));
    json_t *got = store_get(f->s, KIND_LOCALQUEUE, "ns", "q");
    assert_string_equal(JX_STR(got, "spec", "clusterQueue"), "cq1");
    json_decref(got);
    assert_int_equal(store_rv(f->s), 2);
}

static void generate_name_appends_suffix_and_retries_collisions(void **state)
{
    struct fx *f = *state;
    /* predict the suffixes: the store draws from the same seeded sequence */
    struct rng mirror;
    rng_seed(&mirror, 42);
    char s1[6], s2[6];
    rng_suffix(&mirror, s1, 5);
    rng_suffix(&mirror, s2, 5);

    /* take the first predicted name (explicit uid: no draw from the rng) */
    json_t *taken = fx_lq(NULL, "", "cq");
    char name1[32];
    snprintf(name1, sizeof(name1), "job-%s", s1);
    json_object_set_new(JX_OBJ(taken, "metadata"), "name", json_string(name1));
    json_object_set_new(JX_OBJ(taken, "metadata"), "uid", json_string("fixed"));
    json_decref(fx_create(f->s, KIND_LOCALQUEUE, "ns", taken));

    json_t *in = fx_lq(NULL, "", "cq");
    json_object_del(JX_OBJ(in, "metadata"), "name");
    json_object_set_new(JX_OBJ(in, "metadata"), "generateName", json_string("job-"));
    json_t *out = fx_create(f->s, KIND_LOCALQUEUE, "ns", in);
    char name2[32];
    snprintf(name2, sizeof(name2), "job-%s", s2);
    assert_string_equal(fx_meta(out, "name"), name2);
    assert_string_equal(fx_meta(out, "generateName"), "job-");
    for (const char *p = s2; *p; p++)
        assert_non_null(strchr("bcdfghjklmnpqrstvwxz2456789", *p));
    json_decref(out);
}

static void generate_name_truncates_long_base(void **state)
{
    struct fx *f = *state;
    char base[80];
    memset(base, 'a', 70);
    base[70] = '\0';
    json_t *in = json_pack("{s:{s:s}}", "metadata", "generateName", base);
    json_t *out = fx_create(f->s, KIND_RESOURCEFLAVOR, NULL, in);
    const char *name = fx_meta(out, "name");
    assert_int_equal(strlen(name), 63);
    assert_memory_equal(name, base, 58);
    json_decref(out);
}

static void list_orders_by_namespace_then_name(void **state)
{
    struct fx *f = *state;
    const char *keys[][2] = {{"b", "z"}, {"a", "y"}, {"b", "a"}, {"a", "b"}, {"c", "m"}};
    for (size_t i = 0; i < 5; i++)
        json_decref(fx_create(f->s, KIND_LOCALQUEUE, keys[i][0], fx_lq(NULL, keys[i][1], "cq")));
    json_decref(fx_create(f->s, KIND_RESOURCEFLAVOR, NULL, fx_rf("other-kind")));
    uint64_t rv = 0;
    json_t *all = store_list(f->s, KIND_LOCALQUEUE, NULL, &rv);
    assert_int_equal(rv, 6);
    const char *want[][2] = {{"a", "b"}, {"a", "y"}, {"b", "a"}, {"b", "z"}, {"c", "m"}};
    assert_int_equal(json_array_size(all), 5);
    for (size_t i = 0; i < 5; i++) {
        json_t *o = json_array_get(all, i);
        assert_string_equal(fx_meta(o, "namespace"), want[i][0]);
        assert_string_equal(fx_meta(o, "name"), want[i][1]);
    }
    json_decref(all);
    json_t *b = store_list(f->s, KIND_LOCALQUEUE, "b", NULL);
    assert_int_equal(json_array_size(b), 2);
    assert_string_equal(fx_meta(json_array_get(b, 0), "name"), "a");
    assert_string_equal(fx_meta(json_array_get(b, 1), "name"), "z");
    json_decref(b);
    json_t *none = store_list(f->s, KIND_LOCALQUEUE, "aa", NULL);
    assert_int_equal(json_array_size(none), 0);
    json_decref(none);
    assert_int_equal(store_count(f->s, KIND_LOCALQUEUE), 5);
    assert_int_equal(store_count(f->s, KIND_RESOURCEFLAVOR), 1);
    assert_int_equal(store_count(f->s, KIND_WORKLOAD), 0);
}

static void get_missing_is_null(void **state)
{
    struct fx *f = *state;
    assert_null(store_get(f->s, KIND_LOCALQUEUE, "ns", "nope"));
    json_decref(fx_create(f->s, KIND_LOCALQUEUE, "ns", fx_lq(NULL, "q", "cq")));
    assert_null(store_get(f->s, KIND_LOCALQUEUE, "other", "q"));
    assert_null(store_get(f->s, KIND_LOCALQUEUE, NULL, "q"));
    assert_null(store_get(f->s, KIND_CLUSTERQUEUE, NULL, "q"));
}

/* A Workload-like object with spec and status for the update tests. */
static json_t *make_wl(struct fx *f)
{
    json_t *in = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:s, s:i}, s:{s:[]}}",
                           "apiVersion", "kueue.x-k8s.io/v1beta1", "kind", "Workload",
                           "metadata", "name", "wl", "labels", "a", "1", "spec", "queueName",
                           "q", "priority", 1, "status", "conditions");
    return fx_create(f->s, KIND_WORKLOAD, "ns", in);
}

static void update_main_keeps_status(void **state)
{
    struct fx *f = *state;
    json_t *wl = make_wl(f);
    json_t *upd = json_deep_copy(wl);
    json_object_set_new(JX_OBJ(upd, "spec"), "priority", json_integer(5));
    json_object_set_new(JX_OBJ(upd, "status"), "hacked", json_true());
    api_set_label(upd, "b", "2");
    clk_virtual_set(&f->clock, FX_START_MS + 60000);
    json_t *out = NULL;
    assert_int_equal(store_update(f->s, KIND_WORKLOAD, "ns", upd, STORE_UPDATE_MAIN, &out), 0);
    assert_int_equal(JX_INT(out, 0, "spec", "priority"), 5);
    assert_null(JX_GET(out, "status", "hacked"));
    assert_non_null(JX_GET(out, "status", "conditions"));
    assert_string_equal(api_label(out, "b"), "2");
    assert_string_equal(fx_meta(out, "uid"), fx_meta(wl, "uid"));
    assert_string_equal(fx_meta(out, "creationTimestamp"), fx_meta(wl, "creationTimestamp"));
    assert_int_equal(fx_gen(out), 2);
    assert_string_equal(fx_meta(out, "resourceVersion"), "2");
    /* the old document is untouched (immutable) */
    assert_int_equal(JX_INT(wl, 0, "spec", "priority"), 1);
    assert_string_equal(fx_meta(wl, "resourceVersion"), "1");
    json_decref(upd);
    json_decref(out);
    json_decref(wl);
}

static void update_status_keeps_everything_else(void **state)
{
    struct fx *f = *state;
    json_t *wl = make_wl(f);
    json_t *upd = json_deep_copy(wl);
    json_object_set_new(JX_OBJ(upd, "spec"), "priority", json_integer(9));
    api_set_label(upd, "a", "changed");
    json_object_set_new(JX_OBJ(upd, "status"), "admitted", json_true());
    json_t *out = NULL;
    assert_int_equal(store_update(f->s, KIND_WORKLOAD, "ns", upd, STORE_UPDATE_STATUS, &out), 0);
    assert_true(JX_BOOL(out, false, "status", "admitted"));
    assert_int_equal(JX_INT(out, 0, "spec", "priority"), 1);
    assert_string_equal(api_label(out, "a"), "1");
    assert_int_equal(fx_gen(out), 1); /* status changes never bump generation */
    assert_string_equal(fx_meta(out, "resourceVersion"), "2");
    json_decref(out);

    /* a status update without status clears it */
    json_object_del(upd, "status");
    json_object_set_new(JX_OBJ(upd, "metadata"), "resourceVersion", json_string("2"));
    assert_int_equal(store_update(f->s, KIND_WORKLOAD, "ns", upd, STORE_UPDATE_STATUS, &out), 0);
    assert_null(JX_GET(out, "status"));
    json_decref(out);
    json_decref(upd);
    json_decref(wl);
}

static void update_all_replaces_whole_object(void **state)
{
    struct fx *f = *state;
    json_t *wl = make_wl(f);
    json_t *upd = json_deep_copy(wl);
    json_object_set_new(JX_OBJ(upd, "spec"), "priority", json_integer(3));
    json_object_set_new(JX_OBJ(upd, "status"), "admitted", json_true());
    /* server-owned fields in the input are ignored */
    json_object_set_new(JX_OBJ(upd, "metadata"), "generation", json_integer(40));
    json_object_set_new(JX_OBJ(upd, "metadata"), "creationTimestamp", json_string("x"));
    json_object_set_new(JX_OBJ(upd, "metadata"), "deletionTimestamp", json_string("y"));
    json_t *out = NULL;
    assert_int_equal(store_update(f->s, KIND_WORKLOAD, "ns", upd, STORE_UPDATE_ALL, &out), 0);
    assert_int_equal(JX_INT(out, 0, "spec", "priority"), 3);
    assert_true(JX_BOOL(out, false, "status", "admitted"));
    assert_int_equal(fx_gen(out), 2);
    assert_string_equal(fx_meta(out, "creationTimestamp"), fx_meta(wl, "creationTimestamp"));
    assert_null(JX_GET(out, "metadata", "deletionTimestamp"));
    json_decref(out);
    json_decref(upd);
    json_decref(wl);
}

static void update_main_on_kind_without_status_subresource_takes_status(void **state)
{
    struct fx *f = *state;
    json_t *rf = fx_create(f->s, KIND_RESOURCEFLAVOR, NULL, fx_rf("f"));
    json_t *upd = json_deep_copy(rf);
    json_object_set_new(upd, "status", json_pack("{s:b}", "x", 1));
    json_t *out = NULL;
    assert_int_equal(
        store_update(f->s, KIND_RESOURCEFLAVOR, NULL, upd, STORE_UPDATE_MAIN, &out), 0);
    assert_true(JX_BOOL(out, false, "status", "x"));
    assert_int_equal(fx_gen(out), 1);
    json_decref(out);
    json_decref(upd);
    json_decref(rf);
}

static void generation_bumps_only_outside_metadata_and_status(void **state)
{
    struct fx *f = *state;
    json_t *cur = make_wl(f);
    json_t *upd, *out;
    /* metadata only: labels, annotations, finalizers */
    upd = json_deep_copy(cur);
    api_set_annotation(upd, "note", "x");
    assert_int_equal(store_update(f->s, KIND_WORKLOAD, "ns", upd, STORE_UPDATE_ALL, &out), 0);
    assert_int_equal(fx_gen(out), 1);
    json_decref(upd);
    json_decref(cur);
    cur = out;
    /* a new top-level field (not spec) counts as outside metadata/status */
    upd = json_deep_copy(cur);
    json_object_set_new(upd, "data", json_pack("{s:s}", "k", "v"));
    assert_int_equal(store_update(f->s, KIND_WORKLOAD, "ns", upd, STORE_UPDATE_ALL, &out), 0);
    assert_int_equal(fx_gen(out), 2);
    json_decref(upd);
    json_decref(cur);
    cur = out;
    /* removing a top-level field too */
    upd = json_deep_copy(cur);
    json_object_del(upd, "data");
    assert_int_equal(store_update(f->s, KIND_WORKLOAD, "ns", upd, STORE_UPDATE_ALL, &out), 0);
    assert_int_equal(fx_gen(out), 3);
    json_decref(upd);
    json_decref(cur);
    cur = out;
    /* a status change through ALL does not bump */
    upd = json_deep_copy(cur);
    json_object_set_new(JX_OBJ(upd, "status"), "x", json_integer(1));
    assert_int_equal(store_update(f->s, KIND_WORKLOAD, "ns", upd, STORE_UPDATE_ALL, &out), 0);
    assert_int_equal(fx_gen(out), 3);
    assert_string_equal(fx_meta(out, "resourceVersion"), "5");
    json_decref(upd);
    json_decref(cur);
    json_decref(out);
}

static void update_with_stale_resource_version_conflicts(void **state)
{
    struct fx *f = *state;
    json_t *v1 = make_wl(f);
    json_t *upd = json_deep_copy(v1);
    json_object_set_new(JX_OBJ(upd, "spec"), "priority", json_integer(2));
    json_t *v2 = NULL;
    assert_int_equal(store_update(f->s, KIND_WORKLOAD, "ns", upd, STORE_UPDATE_MAIN, &v2), 0);
    /* the same input again still carries resourceVersion 1 */
    json_object_set_new(JX_OBJ(upd, "spec"), "priority", json_integer(3));
    json_t *out = (json_t *)1;
    assert_int_equal(store_update(f->s, KIND_WORKLOAD, "ns", upd, STORE_UPDATE_MAIN, &out),
                     CU_ECONFLICT);
    assert_null(out);
    json_object_set_new(JX_OBJ(upd, "metadata"), "resourceVersion", json_integer(2));
    assert_int_equal(store_update(f->s, KIND_WORKLOAD, "ns", upd, STORE_UPDATE_STATUS, NULL),
                     CU_ECONFLICT);
    assert_int_equal(store_rv(f->s), 2);
    /* without a resourceVersion (or "", "0") the update is unconditional */
    const char *uncond[] = {NULL, "", "0"};
    for (int i = 0; i < 3; i++) {
        if (uncond[i])
            json_object_set_new(JX_OBJ(upd, "metadata"), "resourceVersion",
                                json_string(uncond[i]));
        else
            json_object_del(JX_OBJ(upd, "metadata"), "resourceVersion");
        json_object_set_new(JX_OBJ(upd, "spec"), "priority", json_integer(10 + i));
        assert_int_equal(store_update(f->s, KIND_WORKLOAD, "ns", upd, STORE_UPDATE_MAIN, NULL),
                         0);
    }
    assert_int_equal(store_rv(f->s), 5);
    json_decref(upd);
    json_decref(v1);
    json_decref(v2);
}

static void update_with_other_uid_conflicts(void **state)
{
    struct fx *f = *state;
    json_t *v1 = make_wl(f);
    json_t *upd = json_deep_copy(v1);
    json_object_set_new(JX_OBJ(upd, "metadata"), "uid", json_string("someone-else"));
    json_object_set_new(JX_OBJ(upd, "spec"), "priority", json_integer(2));
    assert_int_equal(store_update(f->s, KIND_WORKLOAD, "ns", upd, STORE_UPDATE_MAIN, NULL),
                     CU_ECONFLICT);
    json_object_del(JX_OBJ(upd, "metadata"), "uid");
    json_t *out = NULL;
    assert_int_equal(store_update(f->s, KIND_WORKLOAD, "ns", upd, STORE_UPDATE_MAIN, &out), 0);
    assert_string_equal(fx_meta(out, "uid"), fx_meta(v1, "uid"));
    json_decref(out);
    json_decref(upd);
    json_decref(v1);
}

static void update_missing_or_invalid(void **state)
{
    struct fx *f = *state;
    json_t *lq = fx_lq("ns", "nope", "cq");
    json_t *out = (json_t *)1;
    assert_int_equal(store_update(f->s, KIND_LOCALQUEUE, "ns", lq, STORE_UPDATE_MAIN, &out),
                     CU_ENOTFOUND);
    assert_null(out);
    json_object_del(JX_OBJ(lq, "metadata"), "name");
    assert_int_equal(store_update(f->s, KIND_LOCALQUEUE, "ns", lq, STORE_UPDATE_MAIN, NULL),
                     CU_EINVAL);
    json_decref(lq);
    assert_int_equal(store_rv(f->s), 0);
}

static void noop_update_emits_nothing(void **state)
{
    struct fx *f = *state;
    json_t *wl = make_wl(f);
    json_t *same = json_deep_copy(wl);
    json_t *out = NULL;
    clk_virtual_set(&f->clock, FX_START_MS + 5000);
    for (int mode = STORE_UPDATE_MAIN; mode <= STORE_UPDATE_ALL; mode++) {
        assert_int_equal(
            store_update(f->s, KIND_WORKLOAD, "ns", same, (enum store_update_mode)mode, &out), 0);
        assert_ptr_equal(out, wl);
        json_decref(out);
    }
    /* ignored server fields do not make a change either */
    json_object_set_new(JX_OBJ(same, "metadata"), "generation", json_integer(7));
    json_object_del(JX_OBJ(same, "metadata"), "resourceVersion");
    json_object_del(JX_OBJ(same, "metadata"), "creationTimestamp");
    assert_int_equal(store_update(f->s, KIND_WORKLOAD, "ns", same, STORE_UPDATE_ALL, &out), 0);
    assert_ptr_equal(out, wl);
    json_decref(out);
    assert_int_equal(store_rv(f->s), 1);
    struct store_events ev = {0};
    assert_int_equal(store_events_since(f->s, 1, -1, NULL, 0, &ev), 0);
    store_events_release(&ev);
    json_decref(same);
    json_decref(wl);
}

static void delete_removes_and_returns_last_state(void **state)
{
    struct fx *f = *state;
    json_t *lq = fx_create(f->s, KIND_LOCALQUEUE, "ns", fx_lq(NULL, "q", "cq"));
    json_t *out = NULL;
    assert_int_equal(store_delete(f->s, KIND_LOCALQUEUE, "ns", "q", NULL, &out), 0);
    assert_string_equal(fx_meta(out, "uid"), fx_meta(lq, "uid"));
    assert_string_equal(fx_meta(out, "resourceVersion"), "2");
    assert_string_equal(JX_STR(out, "spec", "clusterQueue"), "cq");
    json_decref(out);
    assert_null(store_get(f->s, KIND_LOCALQUEUE, "ns", "q"));
    assert_int_equal(store_count(f->s, KIND_LOCALQUEUE), 0);
    assert_int_equal(store_delete(f->s, KIND_LOCALQUEUE, "ns", "q", NULL, &out), CU_ENOTFOUND);
    assert_null(out);
    /* the name can be reused, with a new uid */
    json_t *again = fx_create(f->s, KIND_LOCALQUEUE, "ns", fx_lq(NULL, "q", "cq"));
    assert_string_not_equal(fx_meta(again, "uid"), fx_meta(lq, "uid"));
    json_decref(again);
    json_decref(lq);
}

static void delete_uid_precondition(void **state)
{
    struct fx *f = *state;
    json_t *lq = fx_create(f->s, KIND_LOCALQUEUE, "ns", fx_lq(NULL, "q", "cq"));
    assert_int_equal(store_delete(f->s, KIND_LOCALQUEUE, "ns", "q", "wrong", NULL),
                     CU_ECONFLICT);
    assert_int_equal(store_count(f->s, KIND_LOCALQUEUE), 1);
    assert_int_equal(store_delete(f->s, KIND_LOCALQUEUE, "ns", "q", fx_meta(lq, "uid"), NULL), 0);
    assert_int_equal(store_count(f->s, KIND_LOCALQUEUE), 0);
    json_decref(lq);
}

static void finalizers_delay_deletion_until_cleared(void **state)
{
    struct fx *f = *state;
    json_t *in = fx_lq(NULL, "q", "cq");
    json_object_set_new(JX_OBJ(in, "metadata"), "finalizers", json_pack("[s]", "kueue.x-k8s.io/x"));
    json_t *v1 = fx_create(f->s, KIND_LOCALQUEUE, "ns", in);
    clk_virtual_set(&f->clock, FX_START_MS + 1000);

    json_t *marked = NULL;
    assert_int_equal(store_delete(f->s, KIND_LOCALQUEUE, "ns", "q", NULL, &marked), 0);
    assert_true(api_is_deleting(marked));
    assert_string_equal(fx_meta(marked, "deletionTimestamp"), "2026-01-02T03:04:06.678Z");
    assert_int_equal(JX_INT(marked, -1, "metadata", "deletionGracePeriodSeconds"), 0);
    assert_int_equal(fx_gen(marked), 2);
    assert_string_equal(fx_meta(marked, "resourceVersion"), "2");
    assert_int_equal(store_count(f->s, KIND_LOCALQUEUE), 1);

    /* deleting again changes nothing */
    clk_virtual_set(&f->clock, FX_START_MS + 2000);
    json_t *again = NULL;
    assert_int_equal(store_delete(f->s, KIND_LOCALQUEUE, "ns", "q", NULL, &again), 0);
    assert_ptr_equal(again, marked);
    json_decref(again);
    assert_int_equal(store_rv(f->s), 2);

    /* an update cannot remove the deletionTimestamp; keeping a finalizer keeps the object */
    json_t *upd = json_deep_copy(marked);
    json_object_del(JX_OBJ(upd, "metadata"), "deletionTimestamp");
    json_array_append_new(JX_GET(upd, "metadata", "finalizers"), json_string("other"));
    json_t *v3 = NULL;
    assert_int_equal(store_update(f->s, KIND_LOCALQUEUE, "ns", upd, STORE_UPDATE_MAIN, &v3), 0);
    assert_true(api_is_deleting(v3));
    assert_int_equal(store_count(f->s, KIND_LOCALQUEUE), 1);

    /* clearing the finalizers deletes, with a DELETED event */
    json_decref(upd);
    upd = json_deep_copy(v3);
    json_object_set_new(JX_OBJ(upd, "metadata"), "finalizers", json_array());
    json_t *gone = NULL;
    assert_int_equal(store_update(f->s, KIND_LOCALQUEUE, "ns", upd, STORE_UPDATE_MAIN, &gone), 0);
    assert_string_equal(fx_meta(gone, "resourceVersion"), "4");
    assert_null(store_get(f->s, KIND_LOCALQUEUE, "ns", "q"));
    struct store_events ev = {0};
    assert_int_equal(store_events_since(f->s, 0, -1, NULL, 0, &ev), 4);
    assert_int_equal(ev.items[0].type, STORE_ADDED);
    assert_int_equal(ev.items[1].type, STORE_MODIFIED);
    assert_int_equal(ev.items[2].type, STORE_MODIFIED);
    assert_int_equal(ev.items[3].type, STORE_DELETED);
    assert_ptr_equal(ev.items[3].obj, gone);
    store_events_release(&ev);
    json_decref(gone);
    json_decref(upd);
    json_decref(v3);
    json_decref(marked);
    json_decref(v1);
}

static void clearing_finalizers_without_deletion_is_plain_update(void **state)
{
    struct fx *f = *state;
    json_t *in = fx_lq(NULL, "q", "cq");
    json_object_set_new(JX_OBJ(in, "metadata"), "finalizers", json_pack("[s]", "x"));
    json_t *v1 = fx_create(f->s, KIND_LOCALQUEUE, "ns", in);
    json_t *upd = json_deep_copy(v1);
    json_object_del(JX_OBJ(upd, "metadata"), "finalizers");
    json_t *out = NULL;
    assert_int_equal(store_update(f->s, KIND_LOCALQUEUE, "ns", upd, STORE_UPDATE_MAIN, &out), 0);
    assert_non_null(out);
    assert_int_equal(store_count(f->s, KIND_LOCALQUEUE), 1);
    assert_int_equal(fx_gen(out), 1);
    /* now a delete removes it at once */
    assert_int_equal(store_delete(f->s, KIND_LOCALQUEUE, "ns", "q", NULL, NULL), 0);
    assert_int_equal(store_count(f->s, KIND_LOCALQUEUE), 0);
    json_decref(out);
    json_decref(upd);
    json_decref(v1);
}

/* Enough objects to grow the index's hash table many times (its buckets
 * double while they fill): every object stays findable, removed ones are
 * gone, and lists keep (namespace, name) order. */
static void many_objects_stay_findable(void **state)
{
    struct fx *f = *state;
    enum { N = 3000 };
    char ns[32], name[32];
    for (int i = 0; i < N; i++) {
        snprintf(ns, sizeof(ns), "ns-%d", i % 7);
        snprintf(name, sizeof(name), "lq-%05d", i);
        json_decref(fx_create(f->s, KIND_LOCALQUEUE, NULL, fx_lq(ns, name, "cq")));
    }
    for (int i = 0; i < N; i += 3) {
        snprintf(ns, sizeof(ns), "ns-%d", i % 7);
        snprintf(name, sizeof(name), "lq-%05d", i);
        assert_int_equal(store_delete(f->s, KIND_LOCALQUEUE, ns, name, NULL, NULL), 0);
    }
    assert_int_equal(store_count(f->s, KIND_LOCALQUEUE), N - N / 3);
    for (int i = 0; i < N; i++) {
        snprintf(ns, sizeof(ns), "ns-%d", i % 7);
        snprintf(name, sizeof(name), "lq-%05d", i);
        json_t *got = store_get(f->s, KIND_LOCALQUEUE, ns, name);
        if (i % 3 == 0) {
            assert_null(got);
        } else {
            assert_non_null(got);
            assert_string_equal(fx_meta(got, "name"), name);
            assert_string_equal(fx_meta(got, "namespace"), ns);
        }
        json_decref(got);
        /* the same name in another namespace is another object */
        snprintf(ns, sizeof(ns), "ns-%d", (i + 1) % 7);
        assert_null(store_get(f->s, KIND_LOCALQUEUE, ns, name));
    }
    json_t *all = store_list(f->s, KIND_LOCALQUEUE, NULL, NULL);
    assert_int_equal(json_array_size(all), N - N / 3);
    for (size_t i = 1; i < json_array_size(all); i++) {
        const json_t *a = json_array_get(all, i - 1), *b = json_array_get(all, i);
        int c = strcmp(fx_meta(a, "namespace"), fx_meta(b, "namespace"));
        assert_true(c < 0 || (c == 0 && strcmp(fx_meta(a, "name"), fx_meta(b, "name")) < 0));
    }
    json_decref(all);
}

/* The index hashes and compares (namespace, name) in place: keys of every
 * length (each way the hash reads a key's last bytes), keys that only
 * split differently between namespace and name ("ab"/"c" vs "a"/"bc"),
 * and a name that is a prefix of another are all distinct objects. */
static void keys_split_differently_are_distinct(void **state)
{
    struct fx *f = *state;
    static const char *const pairs[][2] = {
        {"ab", "c"}, {"a", "bc"}, {"abc", "d"}, {"a", "b"}, {"a", "b0"}, {"a", "b01234567"},
        {"a0123456", "b"}, {"a01234567", "b"}, {"a012345", "6b"},
    };
    enum { NP = sizeof(pairs) / sizeof(pairs[0]) };
    for (int i = 0; i < NP; i++)
        json_decref(fx_create(f->s, KIND_LOCALQUEUE, NULL, fx_lq(pairs[i][0], pairs[i][1], "cq")));
    /* names of 1 to 40 characters in one namespace */
    char name[48];
    for (int len = 1; len <= 40; len++) {
        memset(name, 'x', (size_t)len);
        name[len] = '\0';
        json_decref(fx_create(f->s, KIND_LOCALQUEUE, NULL, fx_lq("n", name, "cq")));
    }
    for (int i = 0; i < NP; i++) {
        json_t *got = store_get(f->s, KIND_LOCALQUEUE, pairs[i][0], pairs[i][1]);
        assert_non_null(got);
        assert_string_equal(fx_meta(got, "namespace"), pairs[i][0]);
        assert_string_equal(fx_meta(got, "name"), pairs[i][1]);
        json_decref(got);
    }
    assert_null(store_get(f->s, KIND_LOCALQUEUE, "abc", ""));
    assert_null(store_get(f->s, KIND_LOCALQUEUE, "a", "bcd"));
    assert_null(store_get(f->s, KIND_LOCALQUEUE, "a0123456", "b0"));
    for (int len = 1; len <= 40; len++) {
        memset(name, 'x', (size_t)len);
        name[len] = '\0';
        json_t *got = store_get(f->s, KIND_LOCALQUEUE, "n", name);
        assert_non_null(got);
        assert_string_equal(fx_meta(got, "name"), name);
        json_decref(got);
        assert_null(store_get(f->s, KIND_LOCALQUEUE, "nx", name + 1));
    }
    /* removing one leaves its neighbours */
    assert_int_equal(store_delete(f->s, KIND_LOCALQUEUE, "ab", "c", NULL, NULL), 0);
    assert_null(store_get(f->s, KIND_LOCALQUEUE, "ab", "c"));
    json_t *got = store_get(f->s, KIND_LOCALQUEUE, "a", "bc");
    assert_non_null(got);
    json_decref(got);
    assert_int_equal(store_count(f->s, KIND_LOCALQUEUE), NP - 1 + 40);
}

/* Keys that differ only in a few trailing digits (queue-0001, ...) still
 * spread over the index's buckets as random ones would (about 63% of the
 * buckets used when there are as many entries as buckets), so lookups
 * stay short chains. Read through the index's uthash table. */
static void similar_keys_spread_over_buckets(void **state)
{
    struct fx *f = *state;
    char name[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof(name), "lq-%04d", i);
        json_decref(fx_create(f->s, KIND_LOCALQUEUE, NULL, fx_lq("team-a", name, "cq")));
        snprintf(name, sizeof(name), "cq-%04d", i);
        json_decref(fx_create(f->s, KIND_RESOURCEFLAVOR, NULL, fx_rf(name)));
    }
    static const enum api_kind_id kinds[] = {KIND_LOCALQUEUE, KIND_RESOURCEFLAVOR};
    for (size_t k = 0; k < 2; k++) {
        UT_hash_table *t = f->s->idx[kinds[k]].hash->hh.tbl;
        unsigned used = 0, longest = 0;
        for (unsigned b = 0; b < t->num_buckets; b++) {
            used += t->buckets[b].count > 0;
            if (t->buckets[b].count > longest)
                longest = t->buckets[b].count;
        }
        assert_int_equal(t->num_items, 1000);
        /* random placement: 1 - (1 - 1/B)^1000 of B buckets */
        unsigned want = t->num_buckets <= 1024 ? 550 : 700;
        assert_true(used >= want);
        assert_true(longest <= 8);
    }
}

/* The index compares the entry it found last before hashing: a key that
 * matches it only in part (same name in another namespace, a name that is
 * its prefix or extension) is still looked up, and a deleted entry (the
 * last found) is never found again, nor taken for a successor of the same
 * name. */
static void last_found_entry_is_checked_and_forgotten_on_delete(void **state)
{
    struct fx *f = *state;
    json_decref(fx_create(f->s, KIND_LOCALQUEUE, NULL, fx_lq("a", "q", "cq-a")));
    json_decref(fx_create(f->s, KIND_LOCALQUEUE, NULL, fx_lq("b", "q", "cq-b")));
    json_decref(fx_create(f->s, KIND_LOCALQUEUE, NULL, fx_lq("a", "q1", "cq-a1")));
    const char *const order[][3] = {{"a", "q", "cq-a"},   {"a", "q", "cq-a"},
                                    {"b", "q", "cq-b"},   {"a", "q1", "cq-a1"},
                                    {"a", "q", "cq-a"},   {"b", "q", "cq-b"}};
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        json_t *got = store_get(f->s, KIND_LOCALQUEUE, order[i][0], order[i][1]);
        assert_non_null(got);
        assert_string_equal(JX_STR(got, "spec", "clusterQueue"), order[i][2]);
        json_decref(got);
    }
    json_t *none = store_get(f->s, KIND_LOCALQUEUE, "b", "q1");
    assert_null(none);
    none = store_get(f->s, KIND_LOCALQUEUE, "a", "");
    assert_null(none);

    /* b/q was found last: delete it, then look for it and recreate it */
    json_t *got = store_get(f->s, KIND_LOCALQUEUE, "b", "q");
    const char *old_uid = api_uid(got);
    assert_non_null(old_uid);
    char uid[64];
    snprintf(uid, sizeof(uid), "%s", old_uid);
    json_decref(got);
    assert_int_equal(store_delete(f->s, KIND_LOCALQUEUE, "b", "q", NULL, NULL), 0);
    assert_null(store_get(f->s, KIND_LOCALQUEUE, "b", "q"));
    json_decref(fx_create(f->s, KIND_LOCALQUEUE, NULL, fx_lq("b", "q", "cq-new")));
    got = store_get(f->s, KIND_LOCALQUEUE, "b", "q");
    assert_string_equal(JX_STR(got, "spec", "clusterQueue"), "cq-new");
    assert_string_not_equal(api_uid(got), uid);
    json_decref(got);
    /* a status write to an entry found last, then its deletion */
    json_t *st = store_get_status_copy(f->s, KIND_LOCALQUEUE, "a", "q1", NULL);
    json_object_set_new(st, "status", json_pack("{s:i}", "pendingWorkloads", 3));
    assert_int_equal(store_update_status_take(f->s, KIND_LOCALQUEUE, NULL, &st), 0);
    json_decref(st);
    assert_int_equal(store_delete(f->s, KIND_LOCALQUEUE, "a", "q1", NULL, NULL), 0);
    assert_null(store_get(f->s, KIND_LOCALQUEUE, "a", "q1"));
    got = store_get(f->s, KIND_LOCALQUEUE, "a", "q");
    assert_string_equal(JX_STR(got, "spec", "clusterQueue"), "cq-a");
    json_decref(got);
    assert_int_equal(store_count(f->s, KIND_LOCALQUEUE), 2);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(create_stamps_kubernetes_metadata),
        T(create_timestamp_follows_the_clock),
        T(create_does_not_keep_callers_object),
        T(create_keeps_given_uid_and_drops_server_fields),
        T(create_namespace_from_argument_or_object),
        T(create_rejects_bad_input_without_change),
        T(create_existing_name_is_already_exists),
        T(generate_name_appends_suffix_and_retries_collisions),
        T(generate_name_truncates_long_base),
        T(list_orders_by_namespace_then_name),
        T(get_missing_is_null),
        T(many_objects_stay_findable),
        T(keys_split_differently_are_distinct),
        T(similar_keys_spread_over_buckets),
        T(last_found_entry_is_checked_and_forgotten_on_delete),
        T(update_main_keeps_status),
        T(update_status_keeps_everything_else),
        T(update_all_replaces_whole_object),
        T(update_main_on_kind_without_status_subresource_takes_status),
        T(generation_bumps_only_outside_metadata_and_status),
        T(update_with_stale_resource_version_conflicts),
        T(update_with_other_uid_conflicts),
        T(update_missing_or_invalid),
        T(noop_update_emits_nothing),
        T(delete_removes_and_returns_last_state),
        T(delete_uid_precondition),
        T(finalizers_delay_deletion_until_cleared),
        T(clearing_finalizers_without_deletion_is_plain_update),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
