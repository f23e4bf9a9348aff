/*
 * Preemption (kueue.md §2.6, §2.3 c-i): policies, candidate order, minimal
 * victim sets with fill-back, the exact Preempted messages and reasons, the
 * preemptor never admitted in the cycle that preempts, reclaim within the
 * cohort, borrowWithinCohort with maxPriorityThreshold, capacity reservation
 * for unreclaimable preemptors, and overlapping targets.
 */
#include "test_engine_fixture.h"

#include "engine/engine-int.h"

static struct fx *cluster(void)
{
    struct fx *f = fx_new(NULL);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "f", NULL);
    return f;
}

static struct api_cluster_queue *cq_with(struct fx *f, const char *name, const char *cohort,
                                         const char *quotas, enum api_preempt_policy within,
                                         enum api_preempt_policy reclaim)
{
    struct api_cluster_queue *cq = fx_cq_make(f, name, cohort, quotas);
    cq->within_cluster_queue = within;
    cq->reclaim_within_cohort = reclaim;
    fx_cq_apply(f, cq);
    char lq[64];
    snprintf(lq, sizeof(lq), "q-%s", name);
    fx_lq(f, "ns", lq, name);
    return cq;
}

static struct api_workload *job(struct fx *f, const char *name, const char *cq, int32_t prio,
                                int64_t created, const char *cpu)
{
    char req[64], lq[64];
    snprintf(req, sizeof(req), "cpu=%s", cpu);
    snprintf(lq, sizeof(lq), "q-%s", cq);
    struct api_workload *w = fx_wl(f, "ns", name, lq, prio, created);
    fx_ps(f, w, "main", 1, req);
    fx_submit(f, w);
    return w;
}

static const struct eng_decision *preempt_of(const struct fx *f, const char *victim)
{
    const struct eng_decision *d = fx_find(f, ENG_PREEMPT, victim);
    assert_non_null(d);
    return d;
}

static void lower_priority_is_preempted_within_the_cluster_queue(void **state)
{
    (void)state;
    struct fx *f = cluster();
    cq_with(f, "cq", NULL, "f:cpu=4", PP_LOWER_PRIORITY, PP_NEVER);
    job(f, "low", "cq", 0, 1, "3");
    fx_admit(f);
    job(f, "high", "cq", 10, 2, "2");
    fx_schedule(f);
    const struct eng_decision *p = preempt_of(f, "low");
    assert_string_equal(p->reason, "InClusterQueue");
    assert_string_equal(p->preemptor.name, "high");
    assert_string_equal(p->message,
                        "Preempted to accommodate a workload (UID: uid-high, JobUID: UNKNOWN) due to "
                        "prioritization in the ClusterQueue; preemptor path: /cq; preemptee path: /cq");
    /* never admitted in the cycle that preempts */
    assert_null(fx_find(f, ENG_RESERVE, "high"));
    const struct eng_decision *pend = fx_find(f, ENG_PENDING, "high");
    assert_string_equal(pend->reason, "WaitingForPreemptedWorkloads");
    assert_string_equal(pend->message,
                        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                        "flavor f, 1 more needed. Pending the preemption of 1 workload(s)");
    assert_int_equal(fx_count(f, ENG_PREEMPT), 1);
    /* still waiting: nothing new to decide */
    fx_schedule(f);
    assert_int_equal(f->res.n, 0);
    /* the eviction completes: the preemptor gets the quota */
    struct eng_result keep = f->res;
    (void)keep;
    fx_release(f, fx_get(f, "low"));
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "high"));
    assert_string_equal(fx_find(f, ENG_PENDING, "low")->reason, "WaitingForQuota");
    fx_free(f);
}

static void equal_priority_is_not_preempted_by_lower_priority_policy(void **state)
{
    (void)state;
    struct fx *f = cluster();
    cq_with(f, "cq", NULL, "f:cpu=4", PP_LOWER_PRIORITY, PP_NEVER);
    job(f, "old", "cq", 5, 1, "3");
    fx_admit(f);
    job(f, "new", "cq", 5, 2, "2");
    fx_schedule(f);
    assert_int_equal(fx_count(f, ENG_PREEMPT), 0);
    assert_string_equal(fx_find(f, ENG_PENDING, "new")->reason, "WaitingForQuota");
    fx_free(f);
}

static void lower_or_newer_equal_priority_preempts_newer_equals(void **state)
{
    (void)state;
    struct fx *f = cluster();
    cq_with(f, "cq", NULL, "f:cpu=4", PP_LOWER_OR_NEWER_EQUAL_PRIORITY, PP_NEVER);
    job(f, "newer", "cq", 5, 50, "3");
    fx_admit(f);
    job(f, "older", "cq", 5, 10, "2"); /* created before the running one */
    fx_schedule(f);
    assert_string_equal(preempt_of(f, "newer")->reason, "InClusterQueue");
    fx_free(f);
}

/* Lower priority first, then the most recently reserved. */
static void candidates_are_ordered_and_the_set_is_minimal(void **state)
{
    (void)state;
    struct fx *f = cluster();
    cq_with(f, "cq", NULL, "f:cpu=4", PP_LOWER_PRIORITY, PP_NEVER);
    const char *names[] = {"v1", "v2", "v3", "v4"};
    const int32_t prio[] = {1, 0, 0, 2};
    for (int i = 0; i < 4; i++) {
        job(f, names[i], "cq", prio[i], i, "1");
        f->now_ms += 1000;
        fx_admit(f);
    }
    job(f, "p", "cq", 5, 10, "2");
    fx_schedule(f);
    assert_int_equal(fx_count(f, ENG_PREEMPT), 2);
    assert_non_null(fx_find(f, ENG_PREEMPT, "v3"));
    assert_non_null(fx_find(f, ENG_PREEMPT, "v2"));
    assert_true(fx_find(f, ENG_PREEMPT, "v3") < fx_find(f, ENG_PREEMPT, "v2"));
    assert_string_equal(fx_find(f, ENG_PENDING, "p")->message,
                        "couldn't assign flavors to pod set main: insufficient unused quota for cpu in "
                        "flavor f, 2 more needed. Pending the preemption of 2 workload(s)");
    fx_free(f);
}

static void fill_back_keeps_victims_that_are_not_needed(void **state)
{
    (void)state;
    struct fx *f = cluster();
    cq_with(f, "cq", NULL, "f:cpu=4", PP_LOWER_PRIORITY, PP_NEVER);
    job(f, "big", "cq", 0, 1, "3");
    f->now_ms += 1000;
    fx_admit(f);
    job(f, "small", "cq", 0, 2, "1"); /* more recent: tried first */
    f->now_ms += 1000;
    fx_admit(f);
    job(f, "p", "cq", 5, 3, "3");
    fx_schedule(f);
    assert_int_equal(fx_count(f, ENG_PREEMPT), 1);
    assert_non_null(fx_find(f, ENG_PREEMPT, "big"));
    fx_free(f);
}

static void reclaim_within_cohort_takes_back_lent_quota(void **state)
{
    (void)state;
    struct fx *f = cluster();
    cq_with(f, "a", "c", "f:cpu=4", PP_NEVER, PP_ANY);
    cq_with(f, "b", "c", "f:cpu=4", PP_NEVER, PP_NEVER);
    job(f, "wb", "b", 10, 1, "6");
    fx_admit(f);
    job(f, "wa", "a", 0, 2, "4");
    fx_schedule(f);
    const struct eng_decision *p = preempt_of(f, "wb");
    assert_string_equal(p->reason, "InCohortReclamation");
    assert_string_equal(p->cluster_queue, "b");
    assert_string_equal(p->message,
                        "Preempted to accommodate a workload (UID: uid-wa, JobUID: UNKNOWN) due to "
                        "reclamation within the cohort; preemptor path: /c/a; preemptee path: /c/b");
    fx_free(f);
}

static void workloads_within_nominal_are_not_reclaimed(void **state)
{
    (void)state;
    struct fx *f = cluster();
    cq_with(f, "a", "c", "f:cpu=4", PP_NEVER, PP_ANY);
    cq_with(f, "b", "c", "f:cpu=4", PP_NEVER, PP_NEVER);
    job(f, "wb", "b", 0, 1, "4");
    job(f, "wa1", "a", 0, 1, "2");
    fx_admit(f);
    job(f, "wa2", "a", 10, 2, "4");
    fx_schedule(f);
    assert_int_equal(fx_count(f, ENG_PREEMPT), 0);
    fx_free(f);
}

/* In a flat cohort a workload that must borrow cannot preempt unless
 * borrowWithinCohort allows it (kueue.md §9.4). */
static void borrowing_preemptor_needs_borrow_within_cohort(void **state)
{
    (void)state;
    struct fx *f = cluster();
    cq_with(f, "a", "c", "f:cpu=2", PP_NEVER, PP_LOWER_PRIORITY);
    cq_with(f, "b", "c", "f:cpu=4", PP_NEVER, PP_NEVER);
    job(f, "wb", "b", 0, 1, "5");
    fx_admit(f);
    job(f, "wa", "a", 10, 2, "3");
    fx_schedule(f);
    assert_int_equal(fx_count(f, ENG_PREEMPT), 0);
    const struct eng_decision *d = fx_find(f, ENG_PENDING, "wa");
    assert_string_equal(d->reason, "WaitingForQuota");
    assert_string_equal(d->message, "couldn't assign flavors to pod set main: insufficient unused quota "
                                    "for cpu in flavor f, 2 more needed");
    fx_free(f);
}

static void borrow_within_cohort_reclaims_while_borrowing(void **state)
{
    (void)state;
    struct fx *f = cluster();
    struct api_cluster_queue *a = cq_with(f, "a", "c", "f:cpu=2", PP_NEVER, PP_LOWER_PRIORITY);
    a->borrow_within_cohort = PP_LOWER_PRIORITY;
    fx_cq_apply(f, a);
    cq_with(f, "b", "c", "f:cpu=4", PP_NEVER, PP_NEVER);
    job(f, "wb", "b", 0, 1, "5");
    fx_admit(f);
    job(f, "wa", "a", 10, 2, "3");
    fx_schedule(f);
    const struct eng_decision *p = preempt_of(f, "wb");
    assert_string_equal(p->reason, "InCohortReclaimWhileBorrowing");
    assert_string_equal(p->message,
                        "Preempted to accommodate a workload (UID: uid-wa, JobUID: UNKNOWN) due to "
                        "reclamation within the cohort while borrowing; preemptor path: /c/a; "
                        "preemptee path: /c/b");
    fx_free(f);
}

static void max_priority_threshold_protects_higher_candidates(void **state)
{
    (void)state;
    struct fx *f = cluster();
    struct api_cluster_queue *a = cq_with(f, "a", "c", "f:cpu=2", PP_NEVER, PP_LOWER_PRIORITY);
    a->borrow_within_cohort = PP_LOWER_PRIORITY;
    a->has_max_priority_threshold = true;
    a->max_priority_threshold = -1;
    fx_cq_apply(f, a);
    cq_with(f, "b", "c", "f:cpu=4", PP_NEVER, PP_NEVER);
    job(f, "wb", "b", 0, 1, "5");
    fx_admit(f);
    job(f, "wa", "a", 10, 2, "3");
    fx_schedule(f);
    assert_int_equal(fx_count(f, ENG_PREEMPT), 0);
    assert_string_equal(fx_find(f, ENG_PENDING, "wa")->reason, "WaitingForQuota");
    fx_free(f);
}

/* A Preempt head without candidates reserves its capacity for the cycle when
 * its ClusterQueue cannot always reclaim (kueue.md §2.3 c). */
static void unreclaimable_preemptor_reserves_capacity_for_the_cycle(void **state)
{
    (void)state;
    struct eng_config cfg = {.kueue_one_head_per_cq = true};
    struct fx *f = fx_new(&cfg);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "f", NULL);
    cq_with(f, "a", "c", "f:cpu=4", PP_NEVER, PP_NEVER);
    cq_with(f, "b", "c", "f:cpu=0", PP_NEVER, PP_NEVER);
    job(f, "wa1", "a", 0, 1, "2");
    fx_admit(f);
    job(f, "wa2", "a", 5, 2, "4");
    job(f, "wb", "b", 0, 1, "2");
    fx_schedule(f);
    assert_null(fx_find(f, ENG_RESERVE, "wb"));
    assert_string_equal(fx_find(f, ENG_PENDING, "wb")->message,
                        "Workload no longer fits after processing another workload");
    assert_string_equal(fx_find(f, ENG_PENDING, "wa2")->reason, "WaitingForQuota");
    fx_schedule(f); /* next cycle: wa2 is parked, wb may borrow */
    assert_non_null(fx_find(f, ENG_RESERVE, "wb"));
    fx_free(f);
}

static void reclaim_any_does_not_reserve_capacity(void **state)
{
    (void)state;
    struct eng_config cfg = {.kueue_one_head_per_cq = true};
    struct fx *f = fx_new(&cfg);
    fx_ns(f, "ns", NULL);
    fx_flavor(f, "f", NULL);
    cq_with(f, "a", "c", "f:cpu=4", PP_NEVER, PP_ANY);
    cq_with(f, "b", "c", "f:cpu=0", PP_NEVER, PP_NEVER);
    job(f, "wa1", "a", 0, 1, "2");
    fx_admit(f);
    job(f, "wa2", "a", 5, 2, "4");
    job(f, "wb", "b", 0, 1, "2");
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "wb"));
    fx_free(f);
}

static void overlapping_targets_defer_the_second_preemptor(void **state)
{
    (void)state;
    struct fx *f = cluster();
    cq_with(f, "a", "c", "f:cpu=2", PP_NEVER, PP_ANY);
    cq_with(f, "b", "c", "f:cpu=2", PP_NEVER, PP_ANY);
    cq_with(f, "d", "c", "f:cpu=0", PP_NEVER, PP_NEVER);
    job(f, "wd", "d", 0, 1, "4");
    fx_admit(f);
    job(f, "wa", "a", 5, 2, "2");
    job(f, "wb", "b", 5, 3, "2");
    fx_schedule(f);
    assert_int_equal(fx_count(f, ENG_PREEMPT), 1);
    assert_string_equal(preempt_of(f, "wd")->preemptor.name, "wa");
    const struct eng_decision *d = fx_find(f, ENG_PENDING, "wb");
    assert_string_equal(d->reason, "WaitingForPreemptedWorkloads");
    assert_string_equal(d->message, "Workload has overlapping preemption targets with another workload, "
                                    "but will fit after these preemptions complete");
    fx_release_preempted(f);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "wa"));
    assert_non_null(fx_find(f, ENG_RESERVE, "wb"));
    fx_free(f);
}

static void sticky_preemptor_holds_the_head_of_a_best_effort_queue(void **state)
{
    (void)state;
    struct fx *f = cluster();
    cq_with(f, "cq", NULL, "f:cpu=4", PP_LOWER_PRIORITY, PP_NEVER);
    job(f, "low", "cq", 0, 1, "3");
    fx_admit(f);
    job(f, "high", "cq", 10, 2, "4");
    job(f, "tiny", "cq", 0, 3, "1"); /* would fit in the free unit */
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_PREEMPT, "low"));
    assert_null(fx_find(f, ENG_RESERVE, "tiny"));
    assert_null(fx_find(f, ENG_PENDING, "tiny")); /* never evaluated */
    fx_release_preempted(f);
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "high"));
    fx_free(f);
}

/* out (taken) followed by f's decisions, one line each: type, Workload,
 * reason, message. */
static char *decisions_append(char *out, const struct fx *f)
{
    for (size_t i = 0; i < f->res.n; i++) {
        const struct eng_decision *d = &f->res.items[i];
        char *line = xasprintf("%s%d %s %s %s\n", out, (int)d->type, d->wl.name,
                               d->reason ? d->reason : "", d->message ? d->message : "");
        xfree(out);
        out = line;
    }
    return out;
}

/* A random cohort of busy ClusterQueues and one big preemptor; returns the
 * decisions (type, Workload, message) as one string, and counts the
 * preemptions in *n_preempt. fill_block_max as in struct eng. */
static char *random_preemption(unsigned seed, int fill_block_max, size_t *n_preempt)
{
    uint64_t r = seed * 6364136223846793005ULL + 1442695040888963407ULL;
#define NEXT(n) ((r = r * 6364136223846793005ULL + 1442695040888963407ULL), (int)((r >> 33) % (n)))
    struct fx *f = cluster();
    f->e->fill_block_max = fill_block_max;
    int n_cq = 2 + NEXT(4), nominal[6] = {0};
    char name[32], quota[32], cpu[16];
    for (int q = 0; q < n_cq; q++) {
        snprintf(name, sizeof(name), "cq%d", q);
        nominal[q] = 3 + NEXT(6);
        snprintf(quota, sizeof(quota), "f:cpu=%d", nominal[q]);
        cq_with(f, name, "co", quota, PP_LOWER_PRIORITY, NEXT(2) ? PP_ANY : PP_LOWER_PRIORITY);
    }
    int n_jobs = 15 + NEXT(30);
    for (int j = 0; j < n_jobs; j++) {
        char wl[32], cq[32];
        snprintf(wl, sizeof(wl), "w%d", j);
        int cq_i = NEXT(n_cq);
        snprintf(cq, sizeof(cq), "cq%d", cq_i);
        snprintf(cpu, sizeof(cpu), "%d", 1 + NEXT(2));
        job(f, wl, cq, NEXT(4), j, cpu);
        f->now_ms += 1000 * NEXT(2);
        fx_admit(f);
    }
    int pq = NEXT(n_cq);
    snprintf(name, sizeof(name), "cq%d", pq);
    snprintf(cpu, sizeof(cpu), "%d", 2 + NEXT(nominal[pq] - 1)); /* within its nominal quota */
    job(f, "p", name, 10, n_jobs, cpu);
    fx_schedule(f);
#undef NEXT
    char *out = decisions_append(xstrdup(""), f);
    *n_preempt = fx_count(f, ENG_PREEMPT);
    fx_free(f);
    return out;
}

/* The removal loop checks the fit after blocks of victims and fill_back
 * adds victims back in blocks: the decisions must be those of the
 * one-victim-at-a-time loops, whatever the block size. */
static void fill_back_in_blocks_decides_as_one_by_one(void **state)
{
    (void)state;
    size_t several = 0;
    for (unsigned seed = 1; seed <= 200; seed++) {
        size_t n1, n2, n8;
        char *one = random_preemption(seed, 1, &n1);
        char *two = random_preemption(seed, 2, &n2);
        char *dflt = random_preemption(seed, 0, &n8);
        assert_string_equal(one, two);
        assert_string_equal(one, dflt);
        several += n1 >= 2;
        xfree(one);
        xfree(two);
        xfree(dflt);
    }
    assert_true(several >= 20); /* the inputs do exercise fill-back */
}


/* Holder order restated: evicted (or preempted) first, lower priority,
 * later reservation, uid, namespace/name. */
static const struct eng *order_e;

static int holder_cmp(const void *pa, const void *pb)
{
    const struct eng__wl *a = *(struct eng__wl *const *)pa, *b = *(struct eng__wl *const *)pb;
    bool ea = a->evicted || a->preempted, eb = b->evicted || b->preempted;
    if (ea != eb)
        return ea ? -1 : 1;
    if (a->priority != b->priority)
        return a->priority < b->priority ? -1 : 1;
    int64_t ra = a->quota_reserved_ms ? a->quota_reserved_ms : order_e->now_ms;
    int64_t rb = b->quota_reserved_ms ? b->quota_reserved_ms : order_e->now_ms;
    if (ra != rb)
        return ra > rb ? -1 : 1;
    int c = strcmp(a->uid, b->uid);
    return c ? c : strcmp(a->key, b->key);
}

/* The kept holder order of cq0's tree equals a fresh sort of its holders. */
static void assert_holder_order(struct fx *f)
{
    struct eng__cq *cq0 = eng__cq_find(f->e, "cq0");
    struct eng__wl *const *kept;
    size_t n = eng__hord_of(f->e, cq0, &kept);
    struct eng__wl *fresh[512] = {NULL};
    size_t m = 0;
    for (size_t k = 0; k < f->e->n_cq_sorted; k++) {
        struct eng__cq *cq = f->e->cq_sorted[k];
        if (eng__node_root(&cq->node) == eng__node_root(&cq0->node))
            for (struct eng__wl *w = cq->holders; w; w = w->hnext) {
                assert_true(m < 512);
                fresh[m++] = w;
            }
    }
    order_e = f->e;
    qsort(fresh, m, sizeof(*fresh), holder_cmp);
    assert_int_equal(n, m);
    for (size_t i = 0; i < n; i++)
        assert_ptr_equal(kept[i], fresh[i]);
}

/* One round of random arrivals (Workloads w<*j>... in cq0..cq<n_cq-1>,
 * higher priorities after round 2), then the clock moves on; r is the
 * random state (LCG as NEXT). */
static void arrivals(struct fx *f, uint64_t *rs, int *j, int n_cq, int round)
{
    uint64_t r = *rs;
#define NEXT(n) ((r = r * 6364136223846793005ULL + 1442695040888963407ULL), (int)((r >> 33) % (n)))
    char wl[32], name[32], cpu[16];
    for (int k = NEXT(6); k >= 0; k--, ++*j) {
        snprintf(wl, sizeof(wl), "w%d", *j);
        int cq_i = NEXT(n_cq);
        snprintf(name, sizeof(name), "cq%d", cq_i);
        snprintf(cpu, sizeof(cpu), "%d", 1 + NEXT(3));
        job(f, wl, name, NEXT(5) * (round > 2 ? 3 : 1), *j, cpu);
    }
    f->now_ms += 1000 * NEXT(3);
#undef NEXT
    *rs = r;
}

/* Classical preemption keeps each cohort tree's holders in candidate
 * order between searches (holders joining and leaving, workloads preempted
 * or evicted while holding, new reservations): the kept order must be a
 * fresh sort of the holders at every step. */
static void kept_holder_order_equals_a_fresh_sort(void **state)
{
    (void)state;
    size_t preempted = 0, flagged = 0;
    for (unsigned seed = 1; seed <= 40; seed++) {
        uint64_t r = seed * 6364136223846793005ULL + 1442695040888963407ULL;
#define NEXT(n) ((r = r * 6364136223846793005ULL + 1442695040888963407ULL), (int)((r >> 33) % (n)))
        struct fx *f = cluster();
        int n_cq = 2 + NEXT(4);
        char name[32], quota[32], wl[32];
        for (int q = 0; q < n_cq; q++) {
            snprintf(name, sizeof(name), "cq%d", q);
            snprintf(quota, sizeof(quota), "f:cpu=%d", 3 + NEXT(6));
            cq_with(f, name, "co", quota, PP_LOWER_PRIORITY, PP_ANY);
        }
        int j = 0;
        for (int round = 0; round < 12; round++) {
            arrivals(f, &r, &j, n_cq, round);
            fx_schedule(f); /* searches keep the order; preemptions flag holders */
            preempted += fx_count(f, ENG_PREEMPT);
            assert_holder_order(f);
            fx_apply_all(f);
            assert_holder_order(f);
            if (NEXT(2))
                fx_release_preempted(f); /* holders leave */
            for (int w = 0; w < j; w++) { /* some finish, some are evicted while holding */
                snprintf(wl, sizeof(wl), "w%d", w);
                struct api_workload *a = fx_get(f, wl);
                if (!a->quota_reserved || a->finished || NEXT(8))
                    continue;
                if (NEXT(2)) {
                    fx_finish(f, a);
                } else {
                    a->evicted = true;
                    fx_upsert_status(f, a);
                    flagged++;
                }
            }
            assert_holder_order(f);
        }
#undef NEXT
        fx_free(f);
    }
    assert_true(preempted >= 20); /* searches did run and flag holders */
    assert_true(flagged >= 20);
}

/* Rounds of arrivals, searches, releases, finishes and evictions while
 * holding in a random cohort; returns every decision (type, Workload,
 * reason, message) as one string. With check_all, classical searches
 * check the recorded key of every holder they walk (eng__hord_check_all). */
static char *stale_key_rounds(unsigned seed, bool check_all, size_t *n_preempt, size_t *n_flagged)
{
    uint64_t r = seed * 6364136223846793005ULL + 1442695040888963407ULL;
#define NEXT(n) ((r = r * 6364136223846793005ULL + 1442695040888963407ULL), (int)((r >> 33) % (n)))
    struct fx *f = cluster();
    eng__hord_check_all(f->e, check_all);
    int n_cq = 2 + NEXT(5);
    char name[32], quota[32], wl[32];
    for (int q = 0; q < n_cq; q++) {
        snprintf(name, sizeof(name), "cq%d", q);
        snprintf(quota, sizeof(quota), "f:cpu=%d", 3 + NEXT(8));
        cq_with(f, name, "co", quota, PP_LOWER_PRIORITY, NEXT(3) ? PP_ANY : PP_LOWER_PRIORITY);
    }
    char *out = xstrdup("");
    int j = 0;
    for (int round = 0; round < 12; round++) {
        arrivals(f, &r, &j, n_cq, round);
        fx_schedule(f);
        *n_preempt += fx_count(f, ENG_PREEMPT);
        out = decisions_append(out, f);
        fx_apply_all(f);
        if (NEXT(2))
            fx_release_preempted(f);
        for (int w = 0; w < j; w++) { /* keys change behind the kept order */
            snprintf(wl, sizeof(wl), "w%d", w);
            struct api_workload *a = fx_get(f, wl);
            if (!a->quota_reserved || a->finished || NEXT(6))
                continue;
            if (NEXT(3)) {
                a->evicted = true;
                fx_upsert_status(f, a);
                ++*n_flagged;
            } else {
                fx_finish(f, a);
            }
        }
    }
#undef NEXT
    fx_free(f);
    return out;
}

/* A classical search checks the recorded keys of its candidates only (the
 * kept order stays sorted on the recorded keys, so the candidates' order
 * holds whatever the other holders' keys became): its decisions must be
 * those of a search checking every key it walks. */
static void candidate_key_checks_decide_as_checking_all(void **state)
{
    (void)state;
    size_t preempted = 0, flagged = 0, p2 = 0, f2 = 0;
    for (unsigned seed = 1; seed <= 60; seed++) {
        char *some = stale_key_rounds(seed, false, &preempted, &flagged);
        char *all = stale_key_rounds(seed, true, &p2, &f2);
        assert_string_equal(some, all);
        xfree(some);
        xfree(all);
    }
    assert_true(preempted >= 20); /* searches ran while keys were stale */
    assert_true(flagged >= 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(lower_priority_is_preempted_within_the_cluster_queue),
        cmocka_unit_test(equal_priority_is_not_preempted_by_lower_priority_policy),
        cmocka_unit_test(lower_or_newer_equal_priority_preempts_newer_equals),
        cmocka_unit_test(candidates_are_ordered_and_the_set_is_minimal),
        cmocka_unit_test(fill_back_keeps_victims_that_are_not_needed),
        cmocka_unit_test(reclaim_within_cohort_takes_back_lent_quota),
        cmocka_unit_test(workloads_within_nominal_are_not_reclaimed),
        cmocka_unit_test(borrowing_preemptor_needs_borrow_within_cohort),
        cmocka_unit_test(borrow_within_cohort_reclaims_while_borrowing),
        cmocka_unit_test(max_priority_threshold_protects_higher_candidates),
        cmocka_unit_test(unreclaimable_preemptor_reserves_capacity_for_the_cycle),
        cmocka_unit_test(reclaim_any_does_not_reserve_capacity),
        cmocka_unit_test(overlapping_targets_defer_the_second_preemptor),
        cmocka_unit_test(sticky_preemptor_holds_the_head_of_a_best_effort_queue),
        cmocka_unit_test(fill_back_in_blocks_decides_as_one_by_one),
        cmocka_unit_test(kept_holder_order_equals_a_fresh_sort),
        cmocka_unit_test(candidate_key_checks_decide_as_checking_all),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
