/*
 * ctrl_config.record_events: with it off (`cueue sim`) no v1 Event object
 * is written, yet everything else the control plane does (objects, their
 * UIDs and generated names, the trace) is exactly what it does with it on,
 * because ctrl_event still takes the random draws a new Event takes.
 */
#include "test_ctrl_jobs_fixture.h"
#include "ctrl/kueue/kueue.h"

static const char *queues =
    "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: rf\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata:\n  name: cq\n"
    "spec:\n  namespaceSelector: {}\n  preemption:\n    withinClusterQueue: LowerPriority\n"
    "  resourceGroups:\n  - coveredResources: [cpu]\n"
    "    flavors:\n    - name: rf\n      resources:\n      - name: cpu\n        nominalQuota: 4\n"
    "---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  name: lq\n"
    "  namespace: default\nspec:\n  clusterQueue: cq\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata:\n  name: low\n"
    "value: 10\n---\n"
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata:\n  name: high\n"
    "value: 100\n";

static void job(struct fx *f, const char *name, const char *priority, const char *cpu)
{
    char *y = xasprintf("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: %s\n"
                        "  labels:\n    kueue.x-k8s.io/queue-name: lq\n"
                        "    kueue.x-k8s.io/priority-class: %s\n"
                        "spec:\n  parallelism: 1\n  completions: 1\n  template:\n    spec:\n"
                        "      restartPolicy: Never\n      containers:\n"
                        "      - name: c\n        image: busybox\n        command: [\"true\"]\n"
                        "        resources:\n          requests:\n            cpu: \"%s\"\n",
                        name, priority, cpu);
    fx_apply_text(f, y, name);
    xfree(y);
    fx_run(f);
}

static void events_off(struct ctrl_config *cfg) { cfg->record_events = false; }

/* A second reader of the event log, as `cueue sim`'s recorder: called
 * by ctrl_set_events_hook in every round, it reads the log on every
 * other call only, then drops what both it and the control loop have read
 * (driver.c's rule). */
struct lagging_reader {
    struct store *store;
    struct ctrl *ctrl;
    uint64_t cursor; /* last event read */
    int calls;
    size_t n_read;
    bool gap; /* an event missing, out of order, or CU_EGONE */
    bool ctrl_behind; /* the hook ran before the round read the log */
};

static void lagging_read(void *ctx)
{
    struct lagging_reader *r = ctx;
    uint64_t consumed = ctrl_events_consumed(r->ctrl);
    r->ctrl_behind |= consumed != store_rv(r->store);
    if (r->calls++ % 2) {
        struct store_events evs = {0};
        int n = store_events_since(r->store, r->cursor, -1, NULL, 0, &evs);
        r->gap |= n < 0;
        for (size_t i = 0; i < evs.n; i++) {
            r->gap |= evs.items[i].rv != r->cursor + 1;
            r->cursor = evs.items[i].rv;
            r->n_read++;
        }
        store_events_release(&evs);
    }
    store_events_trim(r->store, consumed < r->cursor ? consumed : r->cursor);
}

/* Admissions, a pending Job and a preemption (messages carry UIDs); with
 * reader (NULL: none) reading the log between rounds. */
static struct fx *play_read(void (*tweak)(struct ctrl_config *), struct lagging_reader *reader)
{
    struct fx *f = fx_new(tweak);
    if (reader) {
        reader->store = f->store;
        reader->ctrl = f->ctrl;
        ctrl_set_events_hook(f->ctrl, lagging_read, reader);
    }
    fx_apply_text(f, queues, "queues");
    fx_run(f);
    job(f, "a", "low", "3");
    job(f, "b", "low", "3");
    fx_advance(f, 1000);
    job(f, "c", "high", "2");
    fx_advance(f, 1000);
    return f;
}

static struct fx *play(void (*tweak)(struct ctrl_config *)) { return play_read(tweak, NULL); }

/* Every object of kind as name -> uid. */
static json_t *uids(struct fx *f, enum api_kind_id kind)
{
    json_t *all = store_list(f->store, kind, NULL, NULL);
    json_t *out = json_object();
    size_t i;
    json_t *o;
    json_array_foreach(all, i, o) {
        json_object_set_new(out, api_name(o), json_string(api_uid(o)));
    }
    json_decref(all);
    return out;
}

static void no_events_and_the_same_objects_without_record_events(void **state)
{
    (void)state;
    struct fx *on = play(NULL);
    struct fx *off = play(events_off);
    assert_true(store_count(on->store, KIND_EVENT) > 0);
    assert_int_equal(store_count(off->store, KIND_EVENT), 0);
    const enum api_kind_id kinds[] = {KIND_JOB, KIND_WORKLOAD, KIND_POD};
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        json_t *a = uids(on, kinds[k]);
        json_t *b = uids(off, kinds[k]);
        assert_true(json_object_size(a) > 0);
        assert_true(json_equal(a, b));
        json_decref(a);
        json_decref(b);
    }
    /* the trace includes the preemption message with the preemptor's UID */
    bool preempted = false;
    size_t i;
    json_t *rec;
    json_array_foreach(on->trace, i, rec) {
        preempted |= !strcmp(jx_or_empty(JX_STR(rec, "event")), "Preempted");
    }
    assert_true(preempted);
    assert_true(json_equal(on->trace, off->trace));
    fx_free(on);
    fx_free(off);
}

/* The Events of involved object uid with this reason, in store order. */
static json_t *events_of(struct fx *f, const char *uid, const char *reason)
{
    json_t *all = store_list(f->store, KIND_EVENT, NULL, NULL);
    json_t *out = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(all, i, e) {
        if (!strcmp(jx_or_empty(JX_STR(e, "involvedObject", "uid")), uid) &&
            !strcmp(jx_or_empty(JX_STR(e, "reason")), reason))
            json_array_append(out, e);
    }
    json_decref(all);
    return out;
}

/* A repeat counts on the same Event, short or long message (the key is
 * built on the stack or on the heap); another message is another Event;
 * a repeat whose Event is gone starts a new one. */
static void repeats_aggregate_whatever_the_message_length(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind",
                            "ConfigMap", "metadata", "name", "cm", "namespace", "default",
                            "uid", "u-1");
    char *long_msg = xcalloc(1, 3001);
    memset(long_msg, 'x', 3000);
    for (int k = 0; k < 2; k++) {
        ctrl_event(f->ctrl, obj, "Normal", "Short", "message %d", 7);
        ctrl_event(f->ctrl, obj, "Normal", "Long", "%s", long_msg);
    }
    ctrl_event(f->ctrl, obj, "Normal", "Short", "message %d", 8);
    json_t *s = events_of(f, "u-1", "Short"), *l = events_of(f, "u-1", "Long");
    assert_int_equal(json_array_size(s), 2);
    assert_int_equal(json_array_size(l), 1);
    assert_int_equal(JX_INT(json_array_get(l, 0), -1, "count"), 2);
    assert_int_equal(strlen(jx_or_empty(JX_STR(json_array_get(l, 0), "message"))), 3000);
    int counts = 0;
    for (size_t i = 0; i < 2; i++)
        counts += (int)JX_INT(json_array_get(s, i), -1, "count");
    assert_int_equal(counts, 3);
    /* the long one's Event deleted: its next repeat writes a new Event */
    const char *gone = api_name(json_array_get(l, 0));
    assert_int_equal(store_delete(f->store, KIND_EVENT, "default", gone, NULL, NULL), 0);
    ctrl_event(f->ctrl, obj, "Normal", "Long", "%s", long_msg);
    json_t *l2 = events_of(f, "u-1", "Long");
    assert_int_equal(json_array_size(l2), 1);
    assert_int_equal(JX_INT(json_array_get(l2, 0), -1, "count"), 1);
    assert_string_not_equal(api_name(json_array_get(l2, 0)), gone);
    json_decref(l2);
    json_decref(s);
    json_decref(l);
    json_decref(obj);
    xfree(long_msg);
    fx_free(f);
}

/* Many distinct keys, some differing only in one byte anywhere in a word
 * of the key (the table hashes keys a word at a time): each repeat counts
 * on its own Event, none on another's. */
static void distinct_keys_never_share_an_event(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    json_t *obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion", "v1", "kind",
                            "ConfigMap", "metadata", "name", "cm", "namespace", "default",
                            "uid", "u-3");
    enum { N = 300 };
    char msg[64];
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++) {
            memset(msg, 'm', 40);
            msg[40] = '\0';
            msg[i % 40] = (char)('A' + i / 40); /* one byte changed, at i % 40 */
            ctrl_event(f->ctrl, obj, "Normal", "Many", "%s", msg);
        }
    }
    json_t *evs = events_of(f, "u-3", "Many");
    assert_int_equal(json_array_size(evs), N);
    size_t i;
    json_t *e;
    json_array_foreach(evs, i, e) {
        assert_int_equal(JX_INT(e, -1, "count"), 2);
    }
    json_decref(evs);
    json_decref(obj);
    fx_free(f);
}

/* The Admitted event's wait since the reservation in whole seconds, as
 * printf's "%.0f" rounds: to nearest, a half to the even neighbour. */
static void admitted_event_rounds_the_wait_half_to_even(void **state)
{
    (void)state;
    static const struct {
        int64_t wait_ms;
        const char *secs;
    } cases[] = {{0, "0"}, {499, "0"}, {500, "0"}, {1500, "2"}, {2500, "2"},
                 {2501, "3"}, {3500, "4"}, {12345678, "12346"}};
    struct fx *f = fx_new(NULL);
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        char uid[16];
        snprintf(uid, sizeof(uid), "u-w%zu", k);
        json_t *wl = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:{s:s}}}", "apiVersion",
                               "kueue.x-k8s.io/v1beta1", "kind", "Workload", "metadata", "name",
                               "w", "namespace", "default", "uid", uid, "status", "admission",
                               "clusterQueue", "cq");
        int64_t since = FX_START_MS + (int64_t)k * 100000000; /* whole seconds */
        clk_virtual_set(&f->clock, since);
        api_cond_set(wl, "QuotaReserved", "True", "QuotaReserved", "r", since);
        clk_virtual_set(&f->clock, since + cases[k].wait_ms);
        kq_wl_set_admitted(f->ctrl, wl);
        json_t *evs = events_of(f, uid, "Admitted");
        assert_int_equal(json_array_size(evs), 1);
        char *want = xasprintf("Admitted by ClusterQueue cq, wait time since reservation was %ss",
                               cases[k].secs);
        assert_string_equal(JX_STR(json_array_get(evs, 0), "message"), want);
        xfree(want);
        json_decref(evs);
        json_decref(wl);
    }
    fx_free(f);
}

/* A reservation and admission in the same scheduling pass, at an instant
 * that is not a whole second: the Admitted event's wait is measured from
 * QuotaReserved's lastTransitionTime as written (whole seconds, so 0.7 s
 * before, rounding to 1 s), the same as a later admission reads it. */
static void admitted_at_reservation_waits_since_the_written_transition(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_apply_text(f, queues, "queues");
    fx_run(f);
    for (int k = 0; k < 2; k++) {
        fx_advance(f, k == 0 ? 700 : 1100); /* x.700 s, then (x+1).800 s */
        char name[8];
        snprintf(name, sizeof(name), "j%d", k);
        job(f, name, "low", "1");
        json_t *wl = fx_workload_of(f, "Job", name);
        assert_non_null(wl);
        assert_string_equal(fx_reason(wl, "Admitted"), "Admitted");
        int64_t since = api_cond_time_ms(wl, "QuotaReserved");
        assert_int_equal(since % 1000, 0);
        assert_true(f->clock.now_ms - since == 700 + 100 * k);
        json_t *evs = events_of(f, api_uid(wl), "Admitted");
        assert_int_equal(json_array_size(evs), 1);
        assert_string_equal(JX_STR(json_array_get(evs, 0), "message"),
                            "Admitted by ClusterQueue cq, wait time since reservation was 1s");
        json_decref(evs);
        json_decref(wl);
    }
    fx_free(f);
}

/* The events hook runs in every round once the round has read the log;
 * a reader that trims there keeps every event it has not read yet (it
 * reads each version, in order, with no gap), and the log trimmed while
 * the control plane steps changes nothing the control plane does. */
static void events_hook_trims_only_what_every_reader_read(void **state)
{
    (void)state;
    struct lagging_reader r = {0};
    struct fx *hooked = play_read(events_off, &r);
    struct fx *plain = play(events_off);
    assert_true(r.calls > 4);
    assert_false(r.ctrl_behind);
    assert_false(r.gap);
    /* the reader's last call may have been a skipped one: the rest of the
     * log is still there for it */
    struct store_events evs = {0};
    int n = store_events_since(hooked->store, r.cursor, -1, NULL, 0, &evs);
    assert_true(n >= 0);
    assert_int_equal(r.n_read + evs.n, store_rv(hooked->store));
    assert_int_equal(store_rv(hooked->store), store_rv(plain->store));
    store_events_release(&evs);
    const enum api_kind_id kinds[] = {KIND_JOB, KIND_WORKLOAD, KIND_POD};
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        json_t *a = uids(hooked, kinds[k]);
        json_t *b = uids(plain, kinds[k]);
        assert_true(json_equal(a, b));
        json_decref(a);
        json_decref(b);
    }
    assert_true(json_equal(hooked->trace, plain->trace));
    fx_free(hooked);
    fx_free(plain);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_events_and_the_same_objects_without_record_events),
        cmocka_unit_test(repeats_aggregate_whatever_the_message_length),
        cmocka_unit_test(distinct_keys_never_share_an_event),
        cmocka_unit_test(admitted_event_rounds_the_wait_half_to_even),
        cmocka_unit_test(admitted_at_reservation_waits_since_the_written_transition),
        cmocka_unit_test(events_hook_trims_only_what_every_reader_read),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
