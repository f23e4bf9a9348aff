/*
 * Unit tests of Event expiry (event_ttl.c; Kubernetes' --event-ttl): an
 * Event is deleted ttl after its last write, a repeat (count + 1) moves
 * the deadline, ttl 0 keeps Events for ever, and no Event expires while
 * the store cannot save (the control loop decides nothing on top of
 * unsaved changes). Time is the fixture's virtual clock.
 */
#include "test_ctrl_jobs_fixture.h"
#include "test_fullvfs.h"

#include <unistd.h>

#define MIN (60 * 1000)

static void ttl_10m(struct ctrl_config *cfg) { cfg->event_ttl_ms = 10 * MIN; }
static void ttl_off(struct ctrl_config *cfg) { cfg->event_ttl_ms = 0; }

static json_t *subject(const char *name)
{
    return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                     "metadata", "name", name, "namespace", "default", "uid", name);
}

static size_t events(struct fx *f) { return store_count(f->store, KIND_EVENT); }

static void events_expire_after_their_last_write(void **state)
{
    (void)state;
    struct fx *f = fx_new(ttl_10m);
    json_t *a = subject("a"), *b = subject("b");
    ctrl_event(f->ctrl, a, "Normal", "Test", "%s", "hello a");
    ctrl_event(f->ctrl, b, "Normal", "Test", "%s", "hello b");
    fx_run(f);
    assert_int_equal(events(f), 2);
    fx_advance(f, 9 * MIN);
    ctrl_event(f->ctrl, a, "Normal", "Test", "%s", "hello a"); /* a repeat: count 2 */
    fx_run(f);
    assert_int_equal(events(f), 2);
    fx_advance(f, 1 * MIN); /* b: 10 min since its write */
    assert_int_equal(events(f), 1);
    assert_true(fx_has_event(f, "a", "Test"));
    fx_advance(f, 8 * MIN); /* a: 9 min since its repeat */
    assert_int_equal(events(f), 1);
    fx_advance(f, 1 * MIN);
    assert_int_equal(events(f), 0);
    /* a repeat after expiry starts a new Event, which expires in turn */
    ctrl_event(f->ctrl, a, "Normal", "Test", "%s", "hello a");
    fx_run(f);
    assert_int_equal(events(f), 1);
    fx_advance(f, 10 * MIN);
    assert_int_equal(events(f), 0);
    json_decref(a);
    json_decref(b);
    fx_free(f);
}

/* An Event written again and again holds one timer: once the first
 * deadline passes, the next wakeup is the latest write's deadline, not
 * one per earlier write. */
static void repeats_hold_one_timer(void **state)
{
    (void)state;
    struct fx *f = fx_new(ttl_10m);
    json_t *a = subject("a");
    int64_t t0 = f->clock.now_ms;
    for (int i = 0; i < 5; i++) { /* writes at t0, t0 + 1 min, ... t0 + 4 min */
        if (i)
            fx_advance(f, 1 * MIN);
        ctrl_event(f->ctrl, a, "Normal", "Test", "%s", "hello a");
        fx_run(f);
    }
    assert_int_equal(ctrl_next_deadline(f->ctrl), t0 + 10 * MIN);
    fx_advance(f, 6 * MIN); /* t0 + 10 min: the first deadline */
    assert_int_equal(events(f), 1);
    assert_int_equal(ctrl_next_deadline(f->ctrl), t0 + 14 * MIN);
    fx_advance(f, 4 * MIN);
    assert_int_equal(events(f), 0);
    assert_int_equal(ctrl_next_deadline(f->ctrl), INT64_MAX);
    json_decref(a);
    fx_free(f);
}

/* While the store cannot save (test_fullvfs.h: a full disk), a step only
 * retries the save: a due expiry waits, and happens once saving works. */
static void nothing_expires_while_the_store_cannot_save(void **state)
{
    (void)state;
    char dir[] = "/tmp/cueue-ttl-XXXXXX", path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/state.db", dir);
    fullvfs_install();
    struct fx *f = fx_new_at(ttl_10m, path);
    json_t *a = subject("a");
    ctrl_event(f->ctrl, a, "Normal", "Test", "%s", "hello a");
    fx_run(f);
    assert_int_equal(events(f), 1);
    fullvfs_full = true;
    json_t *cm = subject("unsaved"); /* a change that cannot be saved */
    assert_int_equal(store_create(f->store, KIND_CONFIGMAP, "default", cm, NULL), 0);
    assert_int_equal(ctrl_step(f->ctrl), 0);
    assert_false(store_writable(f->store, NULL, 0));
    fx_advance(f, 10 * MIN); /* the Event's deadline */
    assert_int_equal(events(f), 1);
    fullvfs_full = false;
    fx_run(f); /* saves, then expires it */
    assert_true(store_writable(f->store, NULL, 0));
    assert_int_equal(events(f), 0);
    json_decref(cm);
    json_decref(a);
    fx_free(f);
    const char *sfx[] = {"", "-wal", "-shm"};
    for (int i = 0; i < 3; i++) {
        char file[80];
        snprintf(file, sizeof(file), "%s%s", path, sfx[i]);
        unlink(file);
    }
    rmdir(dir);
}

static void ttl_zero_keeps_events(void **state)
{
    (void)state;
    struct fx *f = fx_new(ttl_off);
    json_t *a = subject("a");
    ctrl_event(f->ctrl, a, "Normal", "Test", "%s", "hello a");
    fx_run(f);
    fx_advance(f, 7LL * 24 * 60 * MIN);
    assert_int_equal(events(f), 1);
    json_decref(a);
    fx_free(f);
}

static void default_ttl_is_one_hour(void **state)
{
    (void)state;
    struct ctrl_config cfg;
    ctrl_config_defaults(&cfg);
    assert_int_equal(cfg.event_ttl_ms, 60 * MIN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(events_expire_after_their_last_write),
        cmocka_unit_test(repeats_hold_one_timer),
        cmocka_unit_test(nothing_expires_while_the_store_cannot_save),
        cmocka_unit_test(ttl_zero_keeps_events),
        cmocka_unit_test(default_ttl_is_one_hour),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
