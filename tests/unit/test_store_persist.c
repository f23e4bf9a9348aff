/*
 * Unit tests for the store's SQLite persistence: objects survive a
 * restart unchanged, the resourceVersion counter continues, close flushes,
 * deletes persist, and unreadable databases fail with CU_EIO and a clear
 * message instead of crashing. Each test works in its own temporary
 * directory.
 */
#include "test_store_fixture.h"

#include <sqlite3.h>
#include <stdio.h>
#include <unistd.h>

struct pfx {
    struct fx f;
    char dir[64];
    char path[128];
};

static int pfx_setup(void **state)
{
    struct pfx *p = calloc(1, sizeof(*p));
    clk_virtual_init(&p->f.clock, FX_START_MS);
    rng_seed(&p->f.rng, 7);
    if (fx_tmpdb_make(p->dir, p->path))
        return -1;
    *state = p;
    return 0;
}

static int pfx_teardown(void **state)
{
    struct pfx *p = *state;
    store_close(p->f.s);
    fx_tmpdb_remove(p->dir, p->path);
    free(p);
    return 0;
}

static void reopen(struct pfx *p)
{
    store_close(p->f.s);
    p->f.s = NULL;
    fx_open_opts(&p->f, p->path, 0);
}

/* A workload with status and finalizers, updated twice, plus a flavor. */
static void populate(struct pfx *p)
{
    struct store *s = fx_open_opts(&p->f, p->path, 0);
    json_t *in = json_pack("{s:s, s:s, s:{s:s, s:[s]}, s:{s:s}}", "apiVersion",
                           "kueue.x-k8s.io/v1beta1", "kind", "Workload", "metadata", "name", "wl",
                           "finalizers", "kueue.x-k8s.io/resource-in-use", "spec", "queueName",
                           "q");
    json_t *wl = fx_create(s, KIND_WORKLOAD, "team", in);
    clk_virtual_set(&p->f.clock, FX_START_MS + 1500);
    json_t *upd = json_deep_copy(wl);
    json_object_set_new(JX_OBJ(upd, "spec"), "queueName", json_string("q2"));
    json_t *wl2 = NULL;
    assert_int_equal(store_update(s, KIND_WORKLOAD, "team", upd, STORE_UPDATE_MAIN, &wl2), 0);
    json_object_set_new(upd, "status", json_pack("{s:[]}", "conditions"));
    json_object_set_new(JX_OBJ(upd, "metadata"), "resourceVersion", json_string("2"));
    assert_int_equal(store_update(s, KIND_WORKLOAD, "team", upd, STORE_UPDATE_STATUS, NULL), 0);
    json_decref(fx_create(s, KIND_RESOURCEFLAVOR, NULL, fx_rf("rf")));
    json_decref(upd);
    json_decref(wl);
    json_decref(wl2);
}

static void objects_survive_restart_unchanged(void **state)
{
    struct pfx *p = *state;
    populate(p);
    assert_int_equal(store_flush(p->f.s), 0);
    json_t *before_wl = store_get(p->f.s, KIND_WORKLOAD, "team", "wl");
    json_t *before_rf = store_get(p->f.s, KIND_RESOURCEFLAVOR, NULL, "rf");
    assert_int_equal(store_rv(p->f.s), 4);

    reopen(p);
    assert_int_equal(store_rv(p->f.s), 4);
    json_t *wl = store_get(p->f.s, KIND_WORKLOAD, "team", "wl");
    json_t *rf = store_get(p->f.s, KIND_RESOURCEFLAVOR, NULL, "rf");
    assert_non_null(wl);
    assert_true(json_equal(wl, before_wl)); /* uid, rv, generation, timestamps, status */
    assert_true(json_equal(rf, before_rf));
    assert_string_equal(fx_meta(wl, "resourceVersion"), "3");
    assert_int_equal(fx_gen(wl), 2);
    assert_int_equal(store_count(p->f.s, KIND_WORKLOAD), 1);

    /* the counter continues; old events are not replayable */
    json_t *rf2 = fx_create(p->f.s, KIND_RESOURCEFLAVOR, NULL, fx_rf("rf2"));
    assert_string_equal(fx_meta(rf2, "resourceVersion"), "5");
    struct store_events ev = {0};
    assert_int_equal(store_events_since(p->f.s, 3, -1, NULL, 0, &ev), CU_EGONE);
    assert_int_equal(store_events_since(p->f.s, 4, -1, NULL, 0, &ev), 1);
    store_events_release(&ev);
    json_decref(rf2);
    json_decref(wl);
    json_decref(rf);
    json_decref(before_wl);
    json_decref(before_rf);
}

static void close_flushes_pending_writes(void **state)
{
    struct pfx *p = *state;
    populate(p); /* no store_flush */
    reopen(p);
    assert_int_equal(store_rv(p->f.s), 4);
    assert_int_equal(store_count(p->f.s, KIND_WORKLOAD), 1);
    assert_int_equal(store_count(p->f.s, KIND_RESOURCEFLAVOR), 1);
}

static void deletes_and_deletion_marks_persist(void **state)
{
    struct pfx *p = *state;
    populate(p);
    clk_virtual_set(&p->f.clock, FX_START_MS + 9000);
    assert_int_equal(store_delete(p->f.s, KIND_RESOURCEFLAVOR, NULL, "rf", NULL, NULL), 0);
    json_t *marked = NULL;
    assert_int_equal(store_delete(p->f.s, KIND_WORKLOAD, "team", "wl", NULL, &marked), 0);
    assert_int_equal(store_flush(p->f.s), 0);
    reopen(p);
    assert_int_equal(store_rv(p->f.s), 6);
    assert_int_equal(store_count(p->f.s, KIND_RESOURCEFLAVOR), 0);
    json_t *wl = store_get(p->f.s, KIND_WORKLOAD, "team", "wl");
    assert_true(json_equal(wl, marked));
    assert_string_equal(fx_meta(wl, "deletionTimestamp"), "2026-01-02T03:04:14.678Z");

    /* finishing the deletion after the restart removes it from disk too */
    json_t *upd = json_deep_copy(wl);
    json_object_del(JX_OBJ(upd, "metadata"), "finalizers");
    assert_int_equal(store_update(p->f.s, KIND_WORKLOAD, "team", upd, STORE_UPDATE_MAIN, NULL), 0);
    reopen(p);
    assert_int_equal(store_count(p->f.s, KIND_WORKLOAD), 0);
    assert_int_equal(store_rv(p->f.s), 7);
    json_decref(upd);
    json_decref(wl);
    json_decref(marked);
}

static void many_writes_between_flushes(void **state)
{
    struct pfx *p = *state;
    struct store *s = fx_open_opts(&p->f, p->path, 0);
    for (int i = 0; i < 500; i++) {
        char name[16];
        snprintf(name, sizeof(name), "cm-%03d", i);
        json_t *cm = json_pack("{s:{s:s}, s:{s:i}}", "metadata", "name", name, "data", "i", i);
        json_decref(fx_create(s, KIND_CONFIGMAP, "ns", cm));
        if (i % 100 == 99)
            assert_int_equal(store_flush(s), 0);
    }
    assert_int_equal(store_flush(s), 0);
    assert_int_equal(store_flush(s), 0); /* nothing pending: a no-op */
    reopen(p);
    json_t *all = store_list(p->f.s, KIND_CONFIGMAP, "ns", NULL);
    assert_int_equal(json_array_size(all), 500);
    assert_string_equal(fx_meta(json_array_get(all, 0), "name"), "cm-000");
    assert_int_equal(JX_INT(json_array_get(all, 499), -1, "data", "i"), 499);
    json_decref(all);
}

static void memory_store_flush_is_noop(void **state)
{
    struct pfx *p = *state;
    fx_open_opts(&p->f, NULL, 0);
    json_decref(fx_create(p->f.s, KIND_RESOURCEFLAVOR, NULL, fx_rf("x")));
    assert_int_equal(store_flush(p->f.s), 0);
    assert_int_equal(access(p->path, F_OK), -1);
}

static void expect_open_fails(struct pfx *p, const char *path, const char *needle)
{
    struct store_opts o = {path, &p->f.clock.clk, &p->f.rng, 0};
    char err[512] = "";
    struct store *s = (struct store *)1;
    assert_int_equal(store_open(&o, &s, err, sizeof(err)), CU_EIO);
    assert_null(s);
    if (!strstr(err, needle))
        fail_msg("error \"%s\" does not mention \"%s\"", err, needle);
}

static void corrupt_file_is_eio_with_message(void **state)
{
    struct pfx *p = *state;
    FILE *fp = fopen(p->path, "w");
    assert_non_null(fp);
    for (int i = 0; i < 200; i++)
        fputs("this is not an SQLite database, just text. ", fp);
    fclose(fp);
    expect_open_fails(p, p->path, "not a database");
    expect_open_fails(p, p->path, p->path);
}

static void missing_directory_is_eio(void **state)
{
    struct pfx *p = *state;
    char path[160];
    snprintf(path, sizeof(path), "%s/no/such/dir/state.db", p->dir);
    expect_open_fails(p, path, "unable to open");
}

/* Open the file with SQLite directly and run sql. */
static void raw_exec(const char *path, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
}

static void bad_document_is_eio_naming_the_object(void **state)
{
    struct pfx *p = *state;
    populate(p);
    store_close(p->f.s);
    p->f.s = NULL;
    raw_exec(p->path, "UPDATE objects SET doc = '{\"metadata\": [' WHERE name = 'wl'");
    expect_open_fails(p, p->path, "workloads.kueue.x-k8s.io team/wl");
}

static void foreign_schema_is_eio(void **state)
{
    struct pfx *p = *state;
    raw_exec(p->path, "CREATE TABLE objects (x INTEGER)");
    expect_open_fails(p, p->path, "has no column named kind");
}

static void newer_schema_version_is_eio(void **state)
{
    struct pfx *p = *state;
    populate(p);
    store_close(p->f.s);
    p->f.s = NULL;
    raw_exec(p->path, "UPDATE meta SET value = 99 WHERE key = 'schemaVersion'");
    expect_open_fails(p, p->path, "schema version 99");
}

static void unknown_kind_rows_are_skipped(void **state)
{
    struct pfx *p = *state;
    populate(p);
    store_close(p->f.s);
    p->f.s = NULL;
    raw_exec(p->path, "INSERT INTO objects VALUES ('widgets.example.com', '', 'w', '{}')");
    reopen(p);
    assert_int_equal(store_count(p->f.s, KIND_WORKLOAD), 1);
    assert_int_equal(store_rv(p->f.s), 4);
}

static void failed_flush_keeps_changes_for_the_next_one(void **state)
{
    struct pfx *p = *state;
    struct store *s = fx_open_opts(&p->f, p->path, 0);
    json_decref(fx_create(s, KIND_RESOURCEFLAVOR, NULL, fx_rf("a")));
    assert_int_equal(store_flush(s), 0);
    /* make the table vanish under the store: its writes fail */
    raw_exec(p->path, "ALTER TABLE objects RENAME TO objects_away");
    json_decref(fx_create(s, KIND_RESOURCEFLAVOR, NULL, fx_rf("b")));
    assert_int_equal(store_flush(s), CU_EIO);
    assert_int_equal(store_count(s, KIND_RESOURCEFLAVOR), 2); /* memory is ahead */
    raw_exec(p->path, "ALTER TABLE objects_away RENAME TO objects");
    assert_int_equal(store_flush(s), 0);
    reopen(p);
    assert_int_equal(store_count(p->f.s, KIND_RESOURCEFLAVOR), 2);
    assert_int_equal(store_rv(p->f.s), 2);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, pfx_setup, pfx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(objects_survive_restart_unchanged),
        T(close_flushes_pending_writes),
        T(deletes_and_deletion_marks_persist),
        T(many_writes_between_flushes),
        T(memory_store_flush_is_noop),
        T(corrupt_file_is_eio_with_message),
        T(missing_directory_is_eio),
        T(bad_document_is_eio_naming_the_object),
        T(foreign_schema_is_eio),
        T(newer_schema_version_is_eio),
        T(unknown_kind_rows_are_skipped),
        T(failed_flush_keeps_changes_for_the_next_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
