/*
 * The engine's allocations of hash table entries go through its one
 * wrapper (engine-int.h: uthash_malloc = eng__hash_malloc, non-fatal
 * out-of-memory instead of uthash's exit()). A test hook fails the n-th of
 * them; for every n in a small scenario, each upsert answers 0 or
 * CU_ENOMEM (then nothing changed, and upserting again works), and the
 * decisions afterwards are those of a run without a failure.
 */
#include "test_engine_fixture.h"

#include "engine/engine-int.h"

static int n_enomem;

/* An upsert as a caller that handles CU_ENOMEM makes it: once more when it
 * failed (the hook fails one allocation only). */
#define UPSERT(call)                                                                     \
    do {                                                                                 \
        int rc_ = (call);                                                                \
        if (rc_ == CU_ENOMEM) {                                                          \
            n_enomem++;                                                                  \
            rc_ = (call);                                                                \
        }                                                                                \
        assert_int_equal(rc_, 0);                                                        \
    } while (0)

/* Two ClusterQueues of 2 cpu in cohort co (plus the cohort's own 1 cpu),
 * three workloads: a1 needs to borrow. */
static void setup(struct fx *f)
{
    fx_flavor(f, "f", "pool=a");
    struct api_cohort co = {.name = fx_str(f, "co"), .parent = fx_str(f, ""),
                            .fair_weight_milli = 1000};
    fx_parse_groups(f, "f:cpu=1", &co.groups, &co.n_groups);
    UPSERT(eng_upsert_cohort(f->e, &co));
    UPSERT(eng_upsert_cluster_queue(f->e, fx_cq_make(f, "cq-a", "co", "f:cpu=2"), NULL));
    UPSERT(eng_upsert_cluster_queue(f->e, fx_cq_make(f, "cq-b", "co", "f:cpu=2"), NULL));
    struct api_labels l = fx_labels(f, "team=x");
    UPSERT(eng_upsert_namespace(f->e, "default", &l));
    struct api_local_queue lqa = {.ns = fx_str(f, "default"), .name = fx_str(f, "lq-a"),
                                  .cluster_queue = fx_str(f, "cq-a")};
    struct api_local_queue lqb = {.ns = fx_str(f, "default"), .name = fx_str(f, "lq-b"),
                                  .cluster_queue = fx_str(f, "cq-b")};
    UPSERT(eng_upsert_local_queue(f->e, &lqa));
    UPSERT(eng_upsert_local_queue(f->e, &lqb));
    static const struct {
        const char *name, *lq, *cpu;
    } wls[] = {{"a1", "lq-a", "cpu=4"}, {"b1", "lq-b", "cpu=1"}, {"a2", "lq-a", "cpu=1"}};
    for (size_t i = 0; i < sizeof(wls) / sizeof(wls[0]); i++) {
        struct api_workload *w = fx_wl(f, "default", wls[i].name, wls[i].lq, 0,
                                       1000 * (int64_t)(i + 1));
        fx_ps(f, w, "main", 1, wls[i].cpu);
        XGROW(f->wls, f->cap_wls, f->n_wls + 1);
        f->wls[f->n_wls++] = w;
        UPSERT(eng_upsert_workload(f->e, w));
    }
}

/* The decisions of the last schedule, one line each. */
static char *decisions(const struct fx *f)
{
    char *out = xstrdup("");
    for (size_t i = 0; i < f->res.n; i++) {
        const struct eng_decision *d = &f->res.items[i];
        char *next = xasprintf("%s%d %s %s %s\n", out, (int)d->type, d->wl.name,
                               d->cluster_queue ? d->cluster_queue : "-",
                               d->reason ? d->reason : "-");
        xfree(out);
        out = next;
    }
    return out;
}

static char *reference(unsigned long *allocs)
{
    struct fx *f = fx_new(NULL);
    unsigned long before = eng__hash_alloc_fail_at(0);
    setup(f);
    *allocs = eng__hash_alloc_fail_at(0) - before;
    fx_schedule(f);
    char *d = decisions(f);
    fx_free(f);
    return d;
}

static void test_a_failed_allocation_in_an_upsert_changes_nothing(void **state)
{
    (void)state;
    unsigned long n_allocs;
    char *want = reference(&n_allocs);
    assert_true(n_allocs > 5);
    if (!strstr(want, "0 a1 cq-a")) /* a1 reserved, borrowing */
        fail_msg("reference decisions:\n%s", want);
    n_enomem = 0;
    for (unsigned long k = 1; k <= n_allocs; k++) {
        struct fx *f = fx_new(NULL);
        eng__hash_alloc_fail_at(k);
        setup(f);
        eng__hash_alloc_fail_at(0);
        fx_schedule(f);
        char *got = decisions(f);
        if (strcmp(got, want))
            fail_msg("allocation %lu failed: decisions\n%s\nwant\n%s", k, got, want);
        xfree(got);
        fx_free(f);
    }
    /* the tables' first entries failed as errors (not absorbed, not fatal) */
    assert_true(n_enomem >= 5);
    xfree(want);
}

/* A failure while scheduling (an implicit Cohort, interned messages...)
 * leaves a working engine: nothing over its quota, and the next schedule
 * goes on. */
static void test_a_failed_allocation_while_scheduling_keeps_quota(void **state)
{
    (void)state;
    for (unsigned long k = 1; k <= 12; k++) {
        struct fx *f = fx_new(NULL);
        /* the ClusterQueues name cohort "co2", which no object creates */
        fx_flavor(f, "f", "pool=a");
        UPSERT(eng_upsert_cluster_queue(f->e, fx_cq_make(f, "cq-a", "co2", "f:cpu=2"), NULL));
        UPSERT(eng_upsert_cluster_queue(f->e, fx_cq_make(f, "cq-b", "co2", "f:cpu=2"), NULL));
        fx_ns(f, "default", "");
        fx_lq(f, "default", "lq-a", "cq-a");
        struct api_workload *w = fx_wl(f, "default", "a1", "lq-a", 0, 1000);
        fx_ps(f, w, "main", 1, "cpu=3");
        fx_submit(f, w);
        eng__hash_alloc_fail_at(k);
        fx_schedule(f);
        eng__hash_alloc_fail_at(0);
        size_t reserved = fx_count(f, ENG_RESERVE);
        if (!reserved) { /* the Cohort was missing: a1 could not borrow yet */
            fx_schedule(f);
            reserved = fx_count(f, ENG_RESERVE);
        }
        assert_int_equal(reserved, 1);
        fx_free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_failed_allocation_in_an_upsert_changes_nothing),
        cmocka_unit_test(test_a_failed_allocation_while_scheduling_keeps_quota),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
