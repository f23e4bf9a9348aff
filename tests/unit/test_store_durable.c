/*
 * Unit tests for durable writes (store_txn_*) and for a store whose disk
 * is full (test_fullvfs.h makes every SQLite write fail with SQLITE_FULL
 * on demand): a write that could not be saved is undone in memory (no
 * object, event or resourceVersion of it remains), store_writable says
 * why until a flush succeeds again, flushes retry by themselves, a durable
 * write does not start on top of unsaved changes, and closing with unsaved
 * changes reports it.
 */
#include "test_store_fixture.h"
#include "test_fullvfs.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

struct dfx {
    struct fx f;
    char dir[64];
    char path[128];
};

static int dfx_setup(void **state)
{
    fullvfs_install();
    fullvfs_full = false;
    struct dfx *p = calloc(1, sizeof(*p));
    clk_virtual_init(&p->f.clock, FX_START_MS);
    rng_seed(&p->f.rng, 11);
    if (fx_tmpdb_make(p->dir, p->path))
        return -1;
    fx_open_opts(&p->f, p->path, 0);
    *state = p;
    return 0;
}

static int dfx_teardown(void **state)
{
    struct dfx *p = *state;
    fullvfs_full = false;
    store_close(p->f.s);
    fx_tmpdb_remove(p->dir, p->path);
    free(p);
    return 0;
}

static json_t *cm(const char *name, const char *val)
{
    return json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                     "metadata", "name", name, "data", "k", val);
}

/* Create name inside its own durable write; returns commit's result. */
static int txn_create(struct store *s, const char *name, char *why, size_t whylen)
{
    int rc = store_txn_begin(s, why, whylen);
    if (rc)
        return rc;
    json_t *o = cm(name, "v");
    assert_int_equal(store_create(s, KIND_CONFIGMAP, "ns", o, NULL), 0);
    json_decref(o);
    return store_txn_commit(s, why, whylen);
}

static void reopen(struct dfx *p)
{
    assert_int_equal(store_close(p->f.s), 0);
    p->f.s = NULL;
    fx_open_opts(&p->f, p->path, 0);
}

static void assert_mentions(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("\"%s\" does not mention \"%s\"", text, needle);
}

static void committed_write_is_on_disk(void **state)
{
    struct dfx *p = *state;
    char why[512];
    assert_int_equal(txn_create(p->f.s, "a", why, sizeof(why)), 0);
    assert_string_equal(why, "");
    /* nothing left to flush: the commit saved it */
    fullvfs_full = true;
    assert_int_equal(store_flush(p->f.s), 0);
    fullvfs_full = false;
    reopen(p);
    json_t *a = store_get(p->f.s, KIND_CONFIGMAP, "ns", "a");
    assert_non_null(a);
    json_decref(a);
}

static void failed_commit_leaves_memory_as_before(void **state)
{
    struct dfx *p = *state;
    struct store *s = p->f.s;
    char why[512];
    assert_int_equal(txn_create(s, "a", why, sizeof(why)), 0);
    assert_int_equal(txn_create(s, "gone", why, sizeof(why)), 0);
    json_t *a0 = store_get(s, KIND_CONFIGMAP, "ns", "a");
    json_t *gone0 = store_get(s, KIND_CONFIGMAP, "ns", "gone");
    uint64_t rv0 = store_rv(s);

    fullvfs_full = true;
    assert_int_equal(store_txn_begin(s, why, sizeof(why)), 0);
    json_t *b = cm("b", "v");
    assert_int_equal(store_create(s, KIND_CONFIGMAP, "ns", b, NULL), 0);
    json_t *a1 = cm("a", "changed");
    assert_int_equal(store_update(s, KIND_CONFIGMAP, "ns", a1, STORE_UPDATE_ALL, NULL), 0);
    json_t *a2in = cm("a", "twice");
    assert_int_equal(store_update(s, KIND_CONFIGMAP, "ns", a2in, STORE_UPDATE_ALL, NULL), 0);
    json_decref(a2in);
    assert_int_equal(store_delete(s, KIND_CONFIGMAP, "ns", "gone", NULL, NULL), 0);
    /* the writer itself reads its own writes inside the durable write */
    json_t *seen = store_get(s, KIND_CONFIGMAP, "ns", "b");
    assert_non_null(seen);
    json_decref(seen);
    assert_int_equal(store_txn_commit(s, why, sizeof(why)), CU_EIO);
    assert_mentions(why, "database or disk is full");
    assert_mentions(why, p->path);

    /* memory is as it was: objects, resourceVersion, events */
    assert_null(store_get(s, KIND_CONFIGMAP, "ns", "b"));
    json_t *a = store_get(s, KIND_CONFIGMAP, "ns", "a");
    json_t *gone = store_get(s, KIND_CONFIGMAP, "ns", "gone");
    assert_true(json_equal(a, a0));
    assert_true(json_equal(gone, gone0));
    assert_int_equal(store_rv(s), rv0);
    struct store_events ev = {0};
    assert_int_equal(store_events_since(s, rv0, -1, NULL, 0, &ev), 0);
    assert_int_equal(store_events_since(s, rv0 - 1, -1, NULL, 0, &ev), 1);
    store_events_release(&ev);
    char st[512];
    assert_false(store_writable(s, st, sizeof(st)));
    assert_string_equal(st, why);

    /* the next write takes the next resourceVersion, as if nothing happened */
    fullvfs_full = false;
    assert_int_equal(txn_create(s, "c", why, sizeof(why)), 0);
    json_t *c = store_get(s, KIND_CONFIGMAP, "ns", "c");
    assert_int_equal(fx_rv(c), rv0 + 1);
    assert_true(store_writable(s, st, sizeof(st)));
    assert_string_equal(st, "");
    reopen(p);
    assert_null(store_get(p->f.s, KIND_CONFIGMAP, "ns", "b"));
    json_t *a2 = store_get(p->f.s, KIND_CONFIGMAP, "ns", "a");
    assert_true(json_equal(a2, a0));
    assert_int_equal(store_count(p->f.s, KIND_CONFIGMAP), 3);
    json_decref(a2);
    json_decref(c);
    json_decref(a);
    json_decref(gone);
    json_decref(a0);
    json_decref(gone0);
    json_decref(a1);
    json_decref(b);
}

static void rollback_undoes_deletion_marks(void **state)
{
    struct dfx *p = *state;
    struct store *s = p->f.s;
    json_t *in = cm("fin", "v");
    json_object_set_new(JX_OBJ(in, "metadata"), "finalizers", json_pack("[s]", "x/y"));
    json_t *fin0 = fx_create(s, KIND_CONFIGMAP, "ns", in);
    uint64_t rv0 = store_rv(s);
    assert_int_equal(store_txn_begin(s, NULL, 0), 0);
    assert_int_equal(store_delete(s, KIND_CONFIGMAP, "ns", "fin", NULL, NULL), 0);
    json_t *marked = store_get(s, KIND_CONFIGMAP, "ns", "fin");
    assert_non_null(fx_meta(marked, "deletionTimestamp"));
    /* clearing the finalizers removes it */
    json_t *upd = json_deep_copy(marked);
    json_object_del(JX_OBJ(upd, "metadata"), "finalizers");
    assert_int_equal(store_update(s, KIND_CONFIGMAP, "ns", upd, STORE_UPDATE_ALL, NULL), 0);
    assert_null(store_get(s, KIND_CONFIGMAP, "ns", "fin"));
    store_txn_rollback(s);
    json_t *fin = store_get(s, KIND_CONFIGMAP, "ns", "fin");
    assert_true(json_equal(fin, fin0));
    assert_int_equal(store_rv(s), rv0);
    json_decref(fin);
    json_decref(upd);
    json_decref(marked);
    json_decref(fin0);
}

/* A status write over a version only the store holds would take the new
 * resourceVersion in the stored metadata map itself; inside a durable
 * write the noted version keeps its map, so a failed commit brings it
 * back with its own resourceVersion. */
static void failed_status_write_keeps_the_old_metadata(void **state)
{
    struct dfx *p = *state;
    struct store *s = p->f.s;
    json_t *q0 = fx_create(s, KIND_LOCALQUEUE, "ns", fx_lq("ns", "q", "cq"));
    json_t *want = json_deep_copy(q0);
    json_decref(q0);
    store_events_trim(s, store_rv(s)); /* no event holds the version either */
    assert_int_equal(store_flush(s), 0);
    fullvfs_full = true;
    assert_int_equal(store_txn_begin(s, NULL, 0), 0);
    json_t *cp = store_get_status_copy(s, KIND_LOCALQUEUE, "ns", "q", NULL);
    JX_SET_NEW(cp, json_integer(3), "status", "pendingWorkloads");
    assert_int_equal(store_update_take(s, KIND_LOCALQUEUE, "ns", cp, STORE_UPDATE_STATUS, NULL),
                     0);
    assert_int_equal(store_txn_commit(s, NULL, 0), CU_EIO);
    json_t *q = store_get(s, KIND_LOCALQUEUE, "ns", "q");
    assert_true(json_equal(q, want));
    assert_string_equal(fx_meta(q, "resourceVersion"), fx_meta(want, "resourceVersion"));
    json_decref(q);
    json_decref(want);
}

static void memory_store_rollback(void **state)
{
    struct fx f;
    fx_open_memory(&f, 3, 0);
    (void)state;
    json_decref(fx_create(f.s, KIND_CONFIGMAP, "ns", cm("keep", "v")));
    assert_int_equal(store_txn_begin(f.s, NULL, 0), 0);
    json_t *o = cm("drop", "v");
    assert_int_equal(store_create(f.s, KIND_CONFIGMAP, "ns", o, NULL), 0);
    assert_int_equal(store_delete(f.s, KIND_CONFIGMAP, "ns", "keep", NULL, NULL), 0);
    store_txn_rollback(f.s);
    assert_int_equal(store_count(f.s, KIND_CONFIGMAP), 1);
    json_t *keep = store_get(f.s, KIND_CONFIGMAP, "ns", "keep");
    assert_non_null(keep);
    assert_int_equal(store_rv(f.s), 1);
    assert_int_equal(store_txn_begin(f.s, NULL, 0), 0);
    assert_int_equal(store_create(f.s, KIND_CONFIGMAP, "ns", o, NULL), 0);
    assert_int_equal(store_txn_commit(f.s, NULL, 0), 0);
    assert_int_equal(store_rv(f.s), 2);
    json_decref(keep);
    json_decref(o);
    store_close(f.s);
}

/* A history shorter than the durable write: its first event was dropped
 * from the ring by its own later ones; rolling back still leaves the log
 * consistent with the resourceVersion. */
static void rollback_with_short_history(void **state)
{
    struct fx f;
    fx_open_memory(&f, 3, 2);
    (void)state;
    json_decref(fx_create(f.s, KIND_CONFIGMAP, "ns", cm("a", "v")));
    assert_int_equal(store_txn_begin(f.s, NULL, 0), 0);
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "t%d", i);
        json_t *o = cm(name, "v");
        assert_int_equal(store_create(f.s, KIND_CONFIGMAP, "ns", o, NULL), 0);
        json_decref(o);
    }
    store_txn_rollback(f.s);
    assert_int_equal(store_rv(f.s), 1);
    struct store_events ev = {0};
    assert_int_equal(store_events_since(f.s, 1, -1, NULL, 0, &ev), 0);
    json_decref(fx_create(f.s, KIND_CONFIGMAP, "ns", cm("b", "v")));
    assert_int_equal(store_events_since(f.s, 1, -1, NULL, 0, &ev), 1);
    assert_string_equal(fx_meta(ev.items[0].obj, "name"), "b");
    store_events_release(&ev);
    store_close(f.s);
}

static void control_loop_changes_are_retried_and_block_durable_writes(void **state)
{
    struct dfx *p = *state;
    struct store *s = p->f.s;
    char why[512];
    fullvfs_full = true;
    /* a controller's write: in memory, unsaved */
    json_decref(fx_create(s, KIND_CONFIGMAP, "ns", cm("ctrl", "v")));
    assert_int_equal(store_flush(s), CU_EIO);
    assert_false(store_writable(s, why, sizeof(why)));
    assert_mentions(why, "database or disk is full");
    /* a user's write does not start on top of it */
    assert_int_equal(txn_create(s, "user", why, sizeof(why)), CU_EIO);
    assert_mentions(why, "database or disk is full");
    assert_null(store_get(s, KIND_CONFIGMAP, "ns", "user"));
    assert_int_equal(store_flush(s), CU_EIO); /* still full: still failing */
    fullvfs_full = false;
    assert_int_equal(store_flush(s), 0); /* the retry saves it */
    assert_true(store_writable(s, NULL, 0));
    assert_int_equal(txn_create(s, "user", why, sizeof(why)), 0);
    reopen(p);
    assert_int_equal(store_count(p->f.s, KIND_CONFIGMAP), 2);
}

/* After a failed durable write nothing is left to save, yet the store
 * stays unwritable until a flush finds that writing works again. */
static void flush_probes_after_failed_write(void **state)
{
    struct dfx *p = *state;
    struct store *s = p->f.s;
    fullvfs_full = true;
    assert_int_equal(txn_create(s, "x", NULL, 0), CU_EIO);
    assert_false(store_writable(s, NULL, 0));
    assert_int_equal(store_flush(s), CU_EIO);
    assert_false(store_writable(s, NULL, 0));
    fullvfs_full = false;
    assert_int_equal(store_flush(s), 0);
    assert_true(store_writable(s, NULL, 0));
}

static void close_with_unsaved_changes_reports_it(void **state)
{
    struct dfx *p = *state;
    fullvfs_full = true;
    json_decref(fx_create(p->f.s, KIND_CONFIGMAP, "ns", cm("lost", "v")));
    assert_int_equal(store_close(p->f.s), CU_EIO);
    p->f.s = NULL;
    fullvfs_full = false;
    fx_open_opts(&p->f, p->path, 0);
    assert_null(store_get(p->f.s, KIND_CONFIGMAP, "ns", "lost"));
    /* nothing unsaved: a clean close */
    assert_int_equal(store_close(p->f.s), 0);
    p->f.s = NULL;
}

/* Another thread's store call waits for the durable write to end, so it
 * never sees a change that is then undone. */
struct reader {
    struct store *s;
    int started;
    int found; /* 1: saw "late", 0: did not, -1: not yet */
};

static void *read_late(void *arg)
{
    struct reader *r = arg;
    __atomic_store_n(&r->started, 1, __ATOMIC_SEQ_CST);
    json_t *o = store_get(r->s, KIND_CONFIGMAP, "ns", "late");
    __atomic_store_n(&r->found, o ? 1 : 0, __ATOMIC_SEQ_CST);
    json_decref(o);
    return NULL;
}

static void other_threads_wait_for_the_write(void **state)
{
    struct dfx *p = *state;
    struct store *s = p->f.s;
    struct reader r = {s, 0, -1};
    fullvfs_full = true;
    assert_int_equal(store_txn_begin(s, NULL, 0), 0);
    json_t *o = cm("late", "v");
    assert_int_equal(store_create(s, KIND_CONFIGMAP, "ns", o, NULL), 0);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, read_late, &r), 0);
    while (!__atomic_load_n(&r.started, __ATOMIC_SEQ_CST))
        sched_yield();
    /* the reader is blocked (or not yet at the lock); either way it can
     * only read after the commit */
    assert_int_equal(__atomic_load_n(&r.found, __ATOMIC_SEQ_CST), -1);
    assert_int_equal(store_txn_commit(s, NULL, 0), CU_EIO);
    pthread_join(th, NULL);
    assert_int_equal(r.found, 0);
    json_decref(o);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, dfx_setup, dfx_teardown)
    const struct CMUnitTest tests[] = {
        T(committed_write_is_on_disk),
        T(failed_commit_leaves_memory_as_before),
        T(rollback_undoes_deletion_marks),
        T(failed_status_write_keeps_the_old_metadata),
        cmocka_unit_test(memory_store_rollback),
        cmocka_unit_test(rollback_with_short_history),
        T(control_loop_changes_are_retried_and_block_durable_writes),
        T(flush_probes_after_failed_write),
        T(close_with_unsaved_changes_reports_it),
        T(other_threads_wait_for_the_write),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
