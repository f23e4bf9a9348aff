/*
 * Queues and eligibility (kueue.md §2.2, §2.3 nominate, §2.12): queue order,
 * StrictFIFO versus BestEffortFIFO, parked workloads coming back when
 * capacity is freed, backoff, and the queue-blocker statuses.
 */
#include "test_engine_fixture.h"

static struct fx *one_cq(enum api_queueing_strategy s, const char *quotas)
{
    struct fx *f = fx_new(NULL);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "f1", NULL);
    struct api_cluster_queue *cq = fx_cq_make(f, "cq", NULL, quotas);
    cq->queueing_strategy = s;
    fx_cq_apply(f, cq);
    fx_lq(f, "ns", "lq", "cq");
    return f;
}

static struct api_workload *job(struct fx *f, const char *name, int32_t prio, int64_t created,
                                const char *cpu)
{
    char req[64];
    snprintf(req, sizeof(req), "cpu=%s", cpu);
    struct api_workload *w = fx_wl(f, "ns", name, "lq", prio, created);
    fx_ps(f, w, "main", 1, req);
    fx_submit(f, w);
    return w;
}

static size_t index_of(const struct fx *f, enum eng_decision_type t, const char *name)
{
    for (size_t i = 0; i < f->res.n; i++)
        if (f->res.items[i].type == t && !strcmp(f->res.items[i].wl.name, name))
            return i;
    fail_msg("no decision for %s", name);
    return 0;
}

static void higher_priority_then_older_first(void **state)
{
    (void)state;
    struct fx *f = one_cq(QS_BEST_EFFORT_FIFO, "f1:cpu=10");
    job(f, "old-low", 0, 100, "1");
    job(f, "new-high", 5, 300, "1");
    job(f, "mid-low", 0, 200, "1");
    fx_schedule(f);
    assert_true(index_of(f, ENG_RESERVE, "new-high") < index_of(f, ENG_RESERVE, "old-low"));
    assert_true(index_of(f, ENG_RESERVE, "old-low") < index_of(f, ENG_RESERVE, "mid-low"));
    fx_free(f);
}

static void ties_are_broken_by_name(void **state)
{
    (void)state;
    struct fx *f = one_cq(QS_BEST_EFFORT_FIFO, "f1:cpu=1");
    job(f, "b", 0, 100, "1");
    job(f, "a", 0, 100, "1");
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "a"));
    assert_null(fx_find(f, ENG_RESERVE, "b"));
    fx_free(f);
}

static void strict_fifo_blocked_head_blocks_the_queue(void **state)
{
    (void)state;
    struct fx *f = one_cq(QS_STRICT_FIFO, "f1:cpu=4");
    job(f, "running", 0, 1, "3");
    job(f, "head", 0, 2, "2");
    job(f, "small", 0, 3, "1");
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "running"));
    assert_null(fx_find(f, ENG_RESERVE, "small"));
    assert_non_null(fx_find(f, ENG_PENDING, "head"));
    fx_free(f);
}

static void best_effort_fifo_lets_the_next_one_through(void **state)
{
    (void)state;
    struct fx *f = one_cq(QS_BEST_EFFORT_FIFO, "f1:cpu=4");
    job(f, "running", 0, 1, "3");
    job(f, "head", 0, 2, "2");
    job(f, "small", 0, 3, "1");
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "small"));
    assert_null(fx_find(f, ENG_RESERVE, "head"));
    struct eng_cq_status st;
    eng_cq_status(f->e, "cq", &st);
    assert_int_equal(st.pending, 1);
    assert_int_equal(st.reserving, 2);
    eng_cq_status_release(&st);
    fx_free(f);
}

static void parked_workload_returns_when_quota_is_released(void **state)
{
    (void)state;
    struct fx *f = one_cq(QS_BEST_EFFORT_FIFO, "f1:cpu=4");
    struct api_workload *r = job(f, "running", 0, 1, "3");
    job(f, "head", 0, 2, "2");
    fx_schedule(f);
    fx_apply_reserve(f, r, fx_find(f, ENG_RESERVE, "running"), true);
    fx_schedule(f);
    assert_int_equal(f->res.n, 0); /* parked, nothing changed */
    fx_finish(f, r);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "head"));
    fx_free(f);
}

static void nil_namespace_selector_matches_nothing(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "f1", NULL);
    struct api_cluster_queue *cq = fx_cq_make(f, "cq", NULL, "f1:cpu=4");
    cq->has_namespace_selector = false;
    fx_cq_apply(f, cq);
    fx_lq(f, "ns", "lq", "cq");
    job(f, "w", 0, 1, "1");
    fx_schedule(f);
    const struct eng_decision *d = fx_find(f, ENG_PENDING, "w");
    assert_non_null(d);
    assert_string_equal(d->reason, "Misconfigured");
    assert_string_equal(d->message, "workload namespace doesn't match ClusterQueue selector");
    fx_free(f);
}

static void namespace_selector_match_labels(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_ns(f, "team-a", "team=a");
    fx_ns(f, "team-b", "team=b");
    fx_flavor(f, "f1", NULL);
    struct api_cluster_queue *cq = fx_cq_make(f, "cq", NULL, "f1:cpu=4");
    cq->namespace_selector.match_labels = fx_labels(f, "team=a");
    fx_cq_apply(f, cq);
    fx_lq(f, "team-a", "lq", "cq");
    fx_lq(f, "team-b", "lq", "cq");
    struct api_workload *a = fx_wl(f, "team-a", "a", "lq", 0, 1);
    fx_ps(f, a, "main", 1, "cpu=1");
    struct api_workload *b = fx_wl(f, "team-b", "b", "lq", 0, 1);
    fx_ps(f, b, "main", 1, "cpu=1");
    fx_submit(f, a);
    fx_submit(f, b);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "a"));
    assert_non_null(fx_find(f, ENG_PENDING, "b"));
    fx_free(f);
}

static void missing_namespace_is_misconfigured(void **state)
{
    (void)state;
    struct fx *f = one_cq(QS_BEST_EFFORT_FIFO, "f1:cpu=4");
    fx_lq(f, "ghost", "lq", "cq");
    struct api_workload *w = fx_wl(f, "ghost", "w", "lq", 0, 1);
    fx_ps(f, w, "main", 1, "cpu=1");
    fx_submit(f, w);
    fx_schedule(f);
    const struct eng_decision *d = fx_find(f, ENG_PENDING, "w");
    assert_string_equal(d->message,
                        "workload namespace \"ghost\" does not exist: namespaces \"ghost\" not found");
    fx_free(f);
}

static void queue_blockers_have_kueue_messages(void **state)
{
    (void)state;
    struct fx *f = one_cq(QS_BEST_EFFORT_FIFO, "f1:cpu=4");
    struct api_workload *nolq = fx_wl(f, "ns", "nolq", "missing", 0, 1);
    fx_ps(f, nolq, "main", 1, "cpu=1");
    fx_submit(f, nolq);
    fx_lq(f, "ns", "dangling", "nocq");
    struct api_workload *nocq = fx_wl(f, "ns", "nocq", "dangling", 0, 1);
    fx_ps(f, nocq, "main", 1, "cpu=1");
    fx_submit(f, nocq);
    struct api_workload *off = fx_wl(f, "ns", "off", "lq", 0, 1);
    fx_ps(f, off, "main", 1, "cpu=1");
    off->active = false;
    fx_submit(f, off);
    struct api_workload *gated = fx_wl(f, "ns", "gated", "lq", 0, 1);
    fx_ps(f, gated, "main", 1, "cpu=1");
    gated->admission_gated_by = fx_str(f, "example.com/gate");
    fx_submit(f, gated);
    fx_schedule(f);
    assert_string_equal(fx_find(f, ENG_PENDING, "nolq")->message, "LocalQueue missing doesn't exist");
    assert_string_equal(fx_find(f, ENG_PENDING, "nolq")->reason, "Misconfigured");
    assert_string_equal(fx_find(f, ENG_PENDING, "nocq")->message, "ClusterQueue nocq doesn't exist");
    assert_string_equal(fx_find(f, ENG_PENDING, "off")->reason, "Deactivated");
    assert_string_equal(fx_find(f, ENG_PENDING, "off")->message, "The workload is deactivated");
    assert_string_equal(fx_find(f, ENG_PENDING, "gated")->reason, "AdmissionGated");
    assert_string_equal(fx_find(f, ENG_PENDING, "gated")->message, "Admission is gated by: example.com/gate");
    assert_int_equal(fx_count(f, ENG_RESERVE), 0);
    /* the LocalQueue appears: the workload is evaluated again */
    fx_lq(f, "ns", "missing", "cq");
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "nolq"));
    fx_free(f);
}

static void stopped_queues_admit_nothing(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "f1", NULL);
    struct api_cluster_queue *cq = fx_cq_make(f, "cq", NULL, "f1:cpu=4");
    cq->stop_policy = STOP_HOLD;
    fx_cq_apply(f, cq);
    struct api_local_queue lq = {.ns = "ns", .name = "stopped", .cluster_queue = "cq",
                                 .stop_policy = STOP_HOLD_AND_DRAIN};
    eng_upsert_local_queue(f->e, &lq);
    fx_lq(f, "ns", "lq", "cq");
    struct api_workload *a = fx_wl(f, "ns", "a", "lq", 0, 1);
    fx_ps(f, a, "main", 1, "cpu=1");
    struct api_workload *b = fx_wl(f, "ns", "b", "stopped", 0, 1);
    fx_ps(f, b, "main", 1, "cpu=1");
    fx_submit(f, a);
    fx_submit(f, b);
    fx_schedule(f);
    assert_string_equal(fx_find(f, ENG_PENDING, "a")->message, "ClusterQueue cq is inactive");
    assert_string_equal(fx_find(f, ENG_PENDING, "b")->message, "LocalQueue stopped is inactive");
    struct eng_cq_status st;
    eng_cq_status(f->e, "cq", &st);
    assert_string_equal(st.inactive_reason, "Stopped");
    assert_string_equal(st.inactive_message, "Can't admit new workloads: is stopped.");
    eng_cq_status_release(&st);
    /* a ClusterQueue being deleted: Kueue's Terminating overrides the rest */
    eng_upsert_cluster_queue(f->e, cq, ENG_CQ_TERMINATING);
    eng_cq_status(f->e, "cq", &st);
    assert_false(st.active);
    assert_string_equal(st.inactive_reason, "Terminating");
    assert_string_equal(st.inactive_message,
                        "Can't admit new workloads; clusterQueue is terminating");
    eng_cq_status_release(&st);
    cq->stop_policy = STOP_NONE;
    fx_cq_apply(f, cq);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "a"));
    fx_free(f);
}

static void backoff_parks_until_requeue_at(void **state)
{
    (void)state;
    struct fx *f = one_cq(QS_BEST_EFFORT_FIFO, "f1:cpu=4");
    struct api_workload *w = fx_wl(f, "ns", "w", "lq", 0, 1);
    fx_ps(f, w, "main", 1, "cpu=1");
    w->requeue_at_ms = f->now_ms + 60000;
    fx_submit(f, w);
    fx_schedule(f);
    assert_int_equal(f->res.n, 0);
    assert_int_equal(f->res.next_wakeup_ms, f->now_ms + 60000);
    f->now_ms += 60000;
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "w"));
    fx_free(f);
}

static void requeued_false_parks_until_the_condition_flips(void **state)
{
    (void)state;
    struct fx *f = one_cq(QS_BEST_EFFORT_FIFO, "f1:cpu=4");
    struct api_workload *w = fx_wl(f, "ns", "w", "lq", 0, 1);
    fx_ps(f, w, "main", 1, "cpu=1");
    w->requeued_false = true;
    fx_submit(f, w);
    fx_schedule(f);
    assert_int_equal(f->res.n, 0);
    w->requeued_false = false;
    fx_submit(f, w);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "w"));
    fx_free(f);
}

static void one_head_per_cluster_queue_in_kueue_mode(void **state)
{
    (void)state;
    struct eng_config cfg = {.kueue_one_head_per_cq = true};
    struct fx *f = fx_new(&cfg);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "f1", NULL);
    fx_cq(f, "cq", NULL, "f1:cpu=4");
    fx_lq(f, "ns", "lq", "cq");
    job(f, "a", 0, 1, "1");
    job(f, "b", 0, 2, "1");
    fx_schedule(f);
    assert_int_equal(fx_count(f, ENG_RESERVE), 1);
    assert_non_null(fx_find(f, ENG_RESERVE, "a"));
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "b"));
    fx_free(f);
}

static void max_decisions_bounds_a_call(void **state)
{
    (void)state;
    struct fx *f = one_cq(QS_BEST_EFFORT_FIFO, "f1:cpu=10");
    for (int i = 0; i < 5; i++) {
        char n[8];
        snprintf(n, sizeof(n), "w%d", i);
        job(f, n, 0, i, "1");
    }
    eng_result_release(&f->res);
    assert_int_equal(eng_schedule(f->e, f->now_ms, 2, &f->res), 2);
    assert_non_null(fx_find(f, ENG_RESERVE, "w0"));
    assert_non_null(fx_find(f, ENG_RESERVE, "w1"));
    fx_schedule(f);
    assert_int_equal(fx_count(f, ENG_RESERVE), 3);
    assert_non_null(fx_find(f, ENG_RESERVE, "w2"));
    fx_free(f);
}

/* The steps of a reservation's life with its status-only changes fed
 * through eng_upsert_workload (status_only false) or
 * eng_upsert_workload_status: the same decisions either way. */
static void reservation_life(bool status_only)
{
    struct fx *f = one_cq(QS_BEST_EFFORT_FIFO, "f1:cpu=4");
    f->status_upserts = status_only;
    struct api_workload *r = fx_wl(f, "ns", "running", "lq", 0, 1);
    fx_ps(f, r, "main", 2, "cpu=1");
    fx_submit(f, r);
    struct api_workload *h = job(f, "head", 0, 2, "3");
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_PENDING, "head"));
    fx_apply_reserve(f, r, fx_find(f, ENG_RESERVE, "running"), true);
    fx_schedule(f);
    assert_int_equal(f->res.n, 0); /* head parked: 2 + 3 > 4 */
    /* one pod reclaimable: the reservation charges 1, head fits */
    struct api_podset_assignment *rp = fx_alloc(f, sizeof(*rp));
    rp->name = fx_str(f, "main");
    rp->count = 1;
    r->reclaimable = rp;
    r->n_reclaimable = 1;
    fx_upsert_status(f, r);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "head"));
    fx_apply_reserve(f, h, fx_find(f, ENG_RESERVE, "head"), true);
    /* evicted and requeued: it waits for head's quota */
    r->reclaimable = NULL;
    r->n_reclaimable = 0;
    fx_release(f, r);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_PENDING, "running"));
    fx_finish(f, h);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "running"));
    fx_free(f);
}

static void status_only_upserts_decide_the_same(void **state)
{
    (void)state;
    reservation_life(false);
    reservation_life(true);
}

/* eng_upsert_workload_status updates the engine's copy in place: a backoff
 * set by a status change parks a queued workload, a reservation given and
 * then released by status changes is charged and released again, and the
 * release requeues the parked workload. */
static void status_only_upserts_park_charge_and_release(void **state)
{
    (void)state;
    struct fx *f = one_cq(QS_BEST_EFFORT_FIFO, "f1:cpu=4");
    f->status_upserts = true;
    struct api_workload *a = job(f, "a", 0, 1, "3");
    struct api_workload *b = job(f, "b", 0, 2, "3");
    a->requeue_at_ms = f->now_ms + 60000;
    fx_upsert_status(f, a); /* out of the heap: parked by backoff */
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "b"));
    assert_null(fx_find(f, ENG_RESERVE, "a"));
    fx_apply_reserve(f, b, fx_find(f, ENG_RESERVE, "b"), true); /* charged: 3 of 4 */
    f->now_ms += 60000;
    fx_schedule(f);
    assert_int_equal(fx_count(f, ENG_RESERVE), 0);
    assert_non_null(fx_find(f, ENG_PENDING, "a"));
    fx_release(f, b); /* uncharged; the parked a is requeued */
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "a"));
    assert_null(fx_find(f, ENG_RESERVE, "b"));
    fx_free(f);
}

static void assert_cq_counts(struct fx *f, int32_t reserving, int32_t admitted)
{
    struct eng_cq_status st;
    assert_int_equal(eng_cq_status(f->e, "cq", &st), 0);
    assert_int_equal(st.reserving, reserving);
    assert_int_equal(st.admitted, admitted);
    eng_cq_status_release(&st);
}

/* Status-only upserts of a reserved workload that repeat its reservation
 * (the write-back of what the engine assumed, Admitted flipping) keep it
 * charged exactly once; one that changes the reservation's usage is
 * charged the new usage and frees the difference. */
static void status_upserts_of_the_same_reservation_charge_it_once(void **state)
{
    (void)state;
    struct fx *f = one_cq(QS_BEST_EFFORT_FIFO, "f1:cpu=4");
    f->status_upserts = true;
    struct api_workload *a = job(f, "a", 0, 1, "2");
    fx_schedule(f);
    fx_apply_reserve(f, a, fx_find(f, ENG_RESERVE, "a"), false);
    assert_cq_counts(f, 1, 0);
    a->admitted = true;
    fx_upsert_status(f, a);
    fx_upsert_status(f, a);
    assert_cq_counts(f, 1, 1);
    struct api_workload *b = job(f, "b", 0, 2, "2");
    struct api_workload *c = job(f, "c", 0, 3, "2");
    fx_schedule(f); /* 2 + 2 of 4: b fits, c does not */
    assert_int_equal(fx_count(f, ENG_RESERVE), 1);
    assert_non_null(fx_find(f, ENG_RESERVE, "b"));
    fx_apply_reserve(f, b, fx_find(f, ENG_RESERVE, "b"), true);
    fx_schedule(f);
    assert_int_equal(fx_count(f, ENG_RESERVE), 0);
    assert_cq_counts(f, 2, 2);
    /* a's reservation now says it uses nothing: c fits */
    a->admission.podsets[0].resource_usage.items[0].value = 0;
    fx_upsert_status(f, a);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "c"));
    (void)c;
    fx_free(f);
}

/* A key ("ns/name") longer than eng__wl_find's stack buffer: found too. */
static void long_names_are_found(void **state)
{
    (void)state;
    struct fx *f = one_cq(QS_BEST_EFFORT_FIFO, "f1:cpu=1");
    char name[254];
    memset(name, 'w', sizeof(name) - 1);
    name[sizeof(name) - 1] = '\0';
    struct api_workload *w = job(f, name, 0, 1, "1");
    struct api_workload *next = job(f, "next", 0, 2, "1");
    fx_schedule(f);
    fx_apply_reserve(f, w, fx_find(f, ENG_RESERVE, name), true);
    fx_schedule(f);
    assert_int_equal(f->res.n, 0); /* next parked behind w's reservation */
    fx_finish(f, w); /* found and released */
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "next"));
    (void)next;
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(higher_priority_then_older_first),
        cmocka_unit_test(ties_are_broken_by_name),
        cmocka_unit_test(strict_fifo_blocked_head_blocks_the_queue),
        cmocka_unit_test(best_effort_fifo_lets_the_next_one_through),
        cmocka_unit_test(parked_workload_returns_when_quota_is_released),
        cmocka_unit_test(nil_namespace_selector_matches_nothing),
        cmocka_unit_test(namespace_selector_match_labels),
        cmocka_unit_test(missing_namespace_is_misconfigured),
        cmocka_unit_test(queue_blockers_have_kueue_messages),
        cmocka_unit_test(stopped_queues_admit_nothing),
        cmocka_unit_test(backoff_parks_until_requeue_at),
        cmocka_unit_test(requeued_false_parks_until_the_condition_flips),
        cmocka_unit_test(one_head_per_cluster_queue_in_kueue_mode),
        cmocka_unit_test(max_decisions_bounds_a_call),
        cmocka_unit_test(status_only_upserts_decide_the_same),
        cmocka_unit_test(status_only_upserts_park_charge_and_release),
        cmocka_unit_test(status_upserts_of_the_same_reservation_charge_it_once),
        cmocka_unit_test(long_names_are_found),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
