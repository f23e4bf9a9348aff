/*
 * Unit tests for the store's event log: order, filters, history limit
 * (CU_EGONE), trimming, blocking reads and wakeups across threads, and concurrent
 * writers. Threads synchronise by polling with a bounded timed wait, never
 * by fixed sleeps.
 */
#include "test_store_fixture.h"

#include <pthread.h>
#include <time.h>

static void events_in_order_with_types_and_objects(void **state)
{
    struct fx *f = *state;
    json_t *a = fx_create(f->s, KIND_LOCALQUEUE, "ns", fx_lq(NULL, "a", "cq"));
    json_t *upd = json_deep_copy(a);
    json_object_set_new(JX_OBJ(upd, "spec"), "clusterQueue", json_string("cq2"));
    json_t *a2 = NULL;
    assert_int_equal(store_update(f->s, KIND_LOCALQUEUE, "ns", upd, STORE_UPDATE_MAIN, &a2), 0);
    json_decref(upd);
    assert_int_equal(store_delete(f->s, KIND_LOCALQUEUE, "ns", "a", NULL, NULL), 0);

    struct store_events ev = {0};
    assert_int_equal(store_events_since(f->s, 0, -1, NULL, 0, &ev), 3);
    assert_int_equal(ev.n, 3);
    enum store_event_type want[] = {STORE_ADDED, STORE_MODIFIED, STORE_DELETED};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(ev.items[i].type, want[i]);
        assert_int_equal(ev.items[i].kind, KIND_LOCALQUEUE);
        assert_int_equal(ev.items[i].rv, i + 1);
        assert_int_equal(fx_rv(ev.items[i].obj), i + 1);
    }
    assert_ptr_equal(ev.items[0].obj, a);
    assert_ptr_equal(ev.items[1].obj, a2);
    /* appending to a batch keeps what is there */
    assert_int_equal(store_events_since(f->s, 2, -1, NULL, 0, &ev), 1);
    assert_int_equal(ev.n, 4);
    assert_int_equal(ev.items[3].rv, 3);
    store_events_release(&ev);
    assert_null(ev.items);
    assert_int_equal(ev.n, 0);
    /* nothing past the head */
    assert_int_equal(store_events_since(f->s, 3, -1, NULL, 0, &ev), 0);
    assert_int_equal(store_events_since(f->s, 99, -1, NULL, 0, &ev), 0);
    store_events_release(&ev);
    json_decref(a);
    json_decref(a2);
}

static void events_filter_by_kind_and_namespace(void **state)
{
    struct fx *f = *state;
    json_decref(fx_create(f->s, KIND_LOCALQUEUE, "x", fx_lq(NULL, "q1", "cq")));
    json_decref(fx_create(f->s, KIND_RESOURCEFLAVOR, NULL, fx_rf("rf")));
    json_decref(fx_create(f->s, KIND_LOCALQUEUE, "y", fx_lq(NULL, "q2", "cq")));
    json_decref(fx_create(f->s, KIND_LOCALQUEUE, "x", fx_lq(NULL, "q3", "cq")));

    struct store_events ev = {0};
    assert_int_equal(store_events_since(f->s, 0, KIND_LOCALQUEUE, NULL, 0, &ev), 3);
    assert_int_equal(ev.items[0].rv, 1);
    assert_int_equal(ev.items[1].rv, 3);
    assert_int_equal(ev.items[2].rv, 4);
    store_events_release(&ev);
    assert_int_equal(store_events_since(f->s, 0, KIND_LOCALQUEUE, "x", 0, &ev), 2);
    assert_string_equal(fx_meta(ev.items[1].obj, "name"), "q3");
    store_events_release(&ev);
    assert_int_equal(store_events_since(f->s, 0, -1, "y", 0, &ev), 1);
    store_events_release(&ev);
    assert_int_equal(store_events_since(f->s, 0, KIND_RESOURCEFLAVOR, "", 0, &ev), 1);
    assert_int_equal(ev.items[0].rv, 2);
    store_events_release(&ev);
    assert_int_equal(store_events_since(f->s, 2, KIND_RESOURCEFLAVOR, NULL, 0, &ev), 0);
    store_events_release(&ev);
}

static void events_older_than_history_are_gone(void **state)
{
    struct fx *f = *state;
    store_close(f->s);
    fx_open_opts(f, NULL, 3);
    for (int i = 0; i < 5; i++) {
        char name[8];
        snprintf(name, sizeof(name), "rf%d", i);
        json_decref(fx_create(f->s, KIND_RESOURCEFLAVOR, NULL, fx_rf(name)));
    }
    /* kept: rv 3, 4, 5 */
    struct store_events ev = {0};
    assert_int_equal(store_events_since(f->s, 0, -1, NULL, 0, &ev), CU_EGONE);
    assert_int_equal(store_events_since(f->s, 1, -1, NULL, 0, &ev), CU_EGONE);
    assert_int_equal(ev.n, 0);
    assert_int_equal(store_events_since(f->s, 2, -1, NULL, 0, &ev), 3);
    assert_int_equal(ev.items[0].rv, 3);
    assert_int_equal(ev.items[2].rv, 5);
    store_events_release(&ev);
    /* a filter does not hide the gap */
    assert_int_equal(store_events_since(f->s, 1, KIND_WORKLOAD, NULL, 0, &ev), CU_EGONE);
    assert_int_equal(store_events_since(f->s, 4, -1, NULL, 0, &ev), 1);
    assert_int_equal(ev.items[0].rv, 5);
    assert_string_equal(fx_meta(ev.items[0].obj, "name"), "rf4");
    store_events_release(&ev);
}

static void create_flavors(struct fx *f, int from, int to)
{
    for (int i = from; i < to; i++) {
        char name[16];
        snprintf(name, sizeof(name), "rf%d", i);
        json_decref(fx_create(f->s, KIND_RESOURCEFLAVOR, NULL, fx_rf(name)));
    }
}

/* rv of every event after since, in order, as "3,4,5"; "gone" for CU_EGONE. */
static void expect_since(struct fx *f, uint64_t since, const char *want)
{
    struct store_events ev = {0};
    char got[128] = "";
    int n = store_events_since(f->s, since, -1, NULL, 0, &ev);
    if (n == CU_EGONE)
        snprintf(got, sizeof(got), "gone");
    for (size_t i = 0; n >= 0 && i < ev.n; i++) {
        size_t len = strlen(got);
        snprintf(got + len, sizeof(got) - len, "%s%llu", i ? "," : "",
                 (unsigned long long)ev.items[i].rv);
        char name[32];
        snprintf(name, sizeof(name), "rf%llu", (unsigned long long)ev.items[i].rv - 1);
        assert_string_equal(fx_meta(ev.items[i].obj, "name"), name);
    }
    store_events_release(&ev);
    assert_string_equal(got, want);
}

/* store_events_trim before the ring is full size (events kept at the
 * front), once it wraps, and trimming everything; appends after each trim
 * land where readers find them, and the history limit still holds. */
static void trimmed_events_are_gone_and_appends_continue(void **state)
{
    struct fx *f = *state;
    store_close(f->s);
    fx_open_opts(f, NULL, 4);
    create_flavors(f, 0, 3); /* rv 1..3 */
    store_events_trim(f->s, 0); /* nothing to drop */
    expect_since(f, 0, "1,2,3");
    store_events_trim(f->s, 2);
    expect_since(f, 1, "gone");
    expect_since(f, 2, "3");
    create_flavors(f, 3, 6); /* rv 4..6: the limit (4) drops nothing yet */
    expect_since(f, 2, "3,4,5,6");
    create_flavors(f, 6, 7); /* rv 7: now full, rv 3 goes */
    expect_since(f, 2, "gone");
    expect_since(f, 3, "4,5,6,7");
    store_events_trim(f->s, 5); /* in the wrapped ring */
    expect_since(f, 4, "gone");
    expect_since(f, 5, "6,7");
    create_flavors(f, 7, 10); /* rv 8..10 fill the freed slots */
    expect_since(f, 6, "7,8,9,10");
    store_events_trim(f->s, 99); /* past the head: everything */
    expect_since(f, 10, "");
    expect_since(f, 9, "gone");
    create_flavors(f, 10, 12);
    expect_since(f, 10, "11,12");
}

/* ---- threads ---- */

struct waiter {
    struct store *s;
    uint64_t since;
    int kind;
    int timeout_ms;
    bool use_wait; /* store_wait instead of store_events_since */
    int result;
    uint64_t rv_result;
    struct store_events ev;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done; /* under mu */
};

static void *waiter_main(void *arg)
{
    struct waiter *w = arg;
    if (w->use_wait)
        w->rv_result = store_wait(w->s, w->since, w->timeout_ms);
    else
        w->result = store_events_since(w->s, w->since, w->kind, NULL, w->timeout_ms, &w->ev);
    pthread_mutex_lock(&w->mu);
    w->done = true;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static void waiter_start(struct waiter *w, pthread_t *t)
{
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->done = false;
    assert_int_equal(pthread_create(t, NULL, waiter_main, w), 0);
}

static void waiter_join(struct waiter *w, pthread_t t)
{
    pthread_join(t, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
}

/* Wait for the waiter's done signal in 1 ms slices (5 s in all), calling
 * kick before each slice: a wakeup only reaches a thread already blocked,
 * so it is repeated until one lands. */
static bool poll_done(struct waiter *w, void (*kick)(struct store *s))
{
    bool done = false;
    for (int i = 0; i < 5000 && !done; i++) {
        if (kick)
            kick(w->s);
        pthread_mutex_lock(&w->mu);
        if (!w->done) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 1000000;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&w->cv, &w->mu, &ts);
        }
        done = w->done;
        pthread_mutex_unlock(&w->mu);
    }
    return done;
}

static void blocked_reader_returns_on_new_event(void **state)
{
    struct fx *f = *state;
    json_decref(fx_create(f->s, KIND_LOCALQUEUE, "ns", fx_lq(NULL, "a", "cq")));
    struct waiter w = {.s = f->s, .since = 1, .kind = KIND_LOCALQUEUE, .timeout_ms = -1};
    pthread_t t;
    waiter_start(&w, &t);
    json_decref(fx_create(f->s, KIND_LOCALQUEUE, "ns", fx_lq(NULL, "b", "cq")));
    assert_true(poll_done(&w, NULL));
    waiter_join(&w, t);
    assert_int_equal(w.result, 1);
    assert_int_equal(w.ev.items[0].rv, 2);
    assert_string_equal(fx_meta(w.ev.items[0].obj, "name"), "b");
    store_events_release(&w.ev);
}

static void blocked_reader_returns_on_unmatched_event(void **state)
{
    struct fx *f = *state;
    struct waiter w = {.s = f->s, .since = 0, .kind = KIND_WORKLOAD, .timeout_ms = -1};
    pthread_t t;
    waiter_start(&w, &t);
    json_decref(fx_create(f->s, KIND_LOCALQUEUE, "ns", fx_lq(NULL, "a", "cq")));
    assert_true(poll_done(&w, NULL));
    waiter_join(&w, t);
    assert_int_equal(w.result, 0); /* progress, nothing that matches */
    store_events_release(&w.ev);
}

static void wakeup_releases_blocked_reader_without_events(void **state)
{
    struct fx *f = *state;
    struct waiter w = {.s = f->s, .since = 0, .kind = -1, .timeout_ms = -1};
    pthread_t t;
    waiter_start(&w, &t);
    bool ok = poll_done(&w, store_wakeup);
    if (!ok) /* release the thread before failing */
        json_decref(fx_create(f->s, KIND_RESOURCEFLAVOR, NULL, fx_rf("unblock")));
    waiter_join(&w, t);
    assert_true(ok);
    assert_int_equal(w.result, 0);
    assert_int_equal(store_rv(f->s), 0);
    store_events_release(&w.ev);
}

/* store_hold_wakeups: writes made while held are visible at once to a
 * reader that looks, and the release wakes a reader blocked meanwhile (the
 * broadcast the writes owed is not lost). */
static void held_wakeups_are_delivered_on_release(void **state)
{
    struct fx *f = *state;
    struct waiter w = {.s = f->s, .since = 0, .kind = KIND_LOCALQUEUE, .timeout_ms = -1};
    pthread_t t;
    waiter_start(&w, &t);
    store_hold_wakeups(f->s, true);
    json_decref(fx_create(f->s, KIND_LOCALQUEUE, "ns", fx_lq(NULL, "a", "cq")));
    json_decref(fx_create(f->s, KIND_LOCALQUEUE, "ns", fx_lq(NULL, "b", "cq")));
    struct store_events now = {0};
    assert_int_equal(store_events_since(f->s, 0, KIND_LOCALQUEUE, NULL, 0, &now), 2);
    store_events_release(&now);
    store_hold_wakeups(f->s, false);
    bool ok = poll_done(&w, NULL);
    if (!ok) /* release the thread before failing */
        store_wakeup(f->s);
    waiter_join(&w, t);
    assert_true(ok);
    assert_true(w.result >= 1); /* both, or the first if it was not blocked yet */
    assert_int_equal(w.ev.items[0].rv, 1);
    store_events_release(&w.ev);
    /* released: a write wakes readers at once again */
    struct waiter w2 = {.s = f->s, .since = 2, .kind = -1, .timeout_ms = -1};
    waiter_start(&w2, &t);
    json_decref(fx_create(f->s, KIND_RESOURCEFLAVOR, NULL, fx_rf("x")));
    assert_true(poll_done(&w2, NULL));
    waiter_join(&w2, t);
    assert_int_equal(w2.result, 1);
    store_events_release(&w2.ev);
}

static void wakeup_releases_store_wait(void **state)
{
    struct fx *f = *state;
    struct waiter w = {.s = f->s, .since = 0, .timeout_ms = -1, .use_wait = true};
    pthread_t t;
    waiter_start(&w, &t);
    bool ok = poll_done(&w, store_wakeup);
    if (!ok)
        json_decref(fx_create(f->s, KIND_RESOURCEFLAVOR, NULL, fx_rf("unblock")));
    waiter_join(&w, t);
    assert_true(ok);
    assert_int_equal(w.rv_result, 0);
}

static void store_wait_returns_on_event(void **state)
{
    struct fx *f = *state;
    struct waiter w = {.s = f->s, .since = 0, .timeout_ms = -1, .use_wait = true};
    pthread_t t;
    waiter_start(&w, &t);
    json_decref(fx_create(f->s, KIND_RESOURCEFLAVOR, NULL, fx_rf("x")));
    assert_true(poll_done(&w, NULL));
    waiter_join(&w, t);
    assert_int_equal(w.rv_result, 1);
}

static void wait_seq_sees_wakeup_that_came_before_blocking(void **state)
{
    struct fx *f = *state;
    uint64_t seen = store_wakeup_seq(f->s);
    store_wakeup(f->s);
    /* would block forever without the sequence number */
    assert_int_equal(store_wait_seq(f->s, 0, seen, -1), 0);
    assert_int_equal(store_wakeup_seq(f->s), seen + 1);
}

static void timeouts_return_without_events(void **state)
{
    struct fx *f = *state;
    struct store_events ev = {0};
    assert_int_equal(store_events_since(f->s, 0, -1, NULL, 20, &ev), 0);
    assert_int_equal(ev.n, 0);
    assert_int_equal(store_wait(f->s, 0, 20), 0);
    assert_int_equal(store_wait(f->s, 0, 0), 0);
    /* already past since_rv: no wait at all, even with "forever" */
    json_decref(fx_create(f->s, KIND_RESOURCEFLAVOR, NULL, fx_rf("x")));
    assert_int_equal(store_wait(f->s, 0, -1), 1);
    assert_int_equal(store_events_since(f->s, 0, -1, NULL, -1, &ev), 1);
    store_events_release(&ev);
}

/* ---- concurrent writers ---- */

#define WRITERS 4
#define PER_WRITER 200

struct writer {
    struct store *s;
    int id;
    int conflicts;
    int errors; /* cmocka asserts only work on the test's own thread */
};

/* Read-modify-write of the shared counter with conflict retry. */
static void bump_counter(struct writer *w)
{
    for (;;) {
        json_t *cur = store_get(w->s, KIND_CONFIGMAP, "ns", "counter");
        json_t *upd = json_deep_copy(cur);
        json_decref(cur);
        json_int_t n = JX_INT(upd, 0, "data", "n");
        json_object_set_new(JX_OBJ(upd, "data"), "n", json_integer(n + 1));
        int rc = store_update(w->s, KIND_CONFIGMAP, "ns", upd, STORE_UPDATE_ALL, NULL);
        json_decref(upd);
        if (rc == 0)
            return;
        if (rc != CU_ECONFLICT) {
            w->errors++;
            return;
        }
        w->conflicts++;
    }
}

static void *writer_main(void *arg)
{
    struct writer *w = arg;
    for (int i = 0; i < PER_WRITER; i++) {
        char name[32];
        snprintf(name, sizeof(name), "w%d-%d", w->id, i);
        json_t *cm = json_pack("{s:{s:s}, s:{s:i}}", "metadata", "name", name, "data", "v", i);
        int rc = store_create(w->s, KIND_CONFIGMAP, "ns", cm, NULL);
        json_decref(cm);
        if (rc != 0)
            w->errors++;
        bump_counter(w);
    }
    return NULL;
}

static void concurrent_writers_keep_rv_strict_and_lose_nothing(void **state)
{
    struct fx *f = *state;
    store_close(f->s);
    fx_open_opts(f, NULL, 1000000);
    json_decref(fx_create(f->s, KIND_CONFIGMAP, "ns",
                          json_pack("{s:{s:s}, s:{s:i}}", "metadata", "name", "counter", "data",
                                    "n", 0)));
    struct writer w[WRITERS];
    pthread_t t[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        w[i] = (struct writer){f->s, i, 0, 0};
        assert_int_equal(pthread_create(&t[i], NULL, writer_main, &w[i]), 0);
    }
    for (int i = 0; i < WRITERS; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].errors, 0);
    }

    const uint64_t total = 1 + 2 * WRITERS * PER_WRITER;
    assert_int_equal(store_rv(f->s), total);
    assert_int_equal(store_count(f->s, KIND_CONFIGMAP), 1 + WRITERS * PER_WRITER);
    json_t *counter = store_get(f->s, KIND_CONFIGMAP, "ns", "counter");
    assert_int_equal(JX_INT(counter, -1, "data", "n"), WRITERS * PER_WRITER);
    assert_int_equal(fx_gen(counter), 1 + WRITERS * PER_WRITER);
    json_decref(counter);

    struct store_events ev = {0};
    assert_int_equal(store_events_since(f->s, 0, -1, NULL, 0, &ev), (int)total);
    for (size_t i = 0; i < ev.n; i++) {
        assert_int_equal(ev.items[i].rv, i + 1);
        assert_int_equal(fx_rv(ev.items[i].obj), i + 1);
    }
    store_events_release(&ev);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(events_in_order_with_types_and_objects),
        T(events_filter_by_kind_and_namespace),
        T(events_older_than_history_are_gone),
        T(trimmed_events_are_gone_and_appends_continue),
        T(blocked_reader_returns_on_new_event),
        T(blocked_reader_returns_on_unmatched_event),
        T(wakeup_releases_blocked_reader_without_events),
        T(wakeup_releases_store_wait),
        T(held_wakeups_are_delivered_on_release),
        T(store_wait_returns_on_event),
        T(wait_seq_sees_wakeup_that_came_before_blocking),
        T(timeouts_return_without_events),
        T(concurrent_writers_keep_rv_strict_and_lose_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
