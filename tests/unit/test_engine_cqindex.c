/*
 * The engine's ClusterQueue bitmaps (cq_heap_bits, cq_rq_bits): cycles and
 * retry-inadmissible passes visit only the ClusterQueues they name, so after
 * any sequence of operations every ClusterQueue with a non-empty heap or a
 * pending requeue must have its bit, and every sorted_idx must be its index
 * in cq_sorted (checked against a scan of all of them). Random operations
 * over several ClusterQueues in two cohorts: submissions, schedules with
 * their reservations applied, finishes, ClusterQueue deletions and
 * re-creations (which renumber cq_sorted), stops and restarts. Also the
 * cached most flavors of a resource group (cq_max_flv, eng_schedule's soft
 * cycle limit) against a recount, as ClusterQueues gain and lose a flavor.
 */
#include "test_engine_fixture.h"

#include "engine/engine-int.h"

#define N_CQ 9
#define N_OPS 600

static uint64_t rnd(uint64_t *s, uint64_t n)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (*s >> 33) % n;
}

static void cq_up(struct fx *f, int c, enum api_stop_policy stop, bool two_flavors)
{
    char name[16];
    snprintf(name, sizeof(name), "cq%d", c);
    struct api_cluster_queue *cq = fx_cq_make(f, name, c % 2 ? "odd" : "even",
                                              two_flavors ? "f1:cpu=3;f2:cpu=1" : "f1:cpu=3");
    cq->queueing_strategy = c % 3 ? QS_BEST_EFFORT_FIFO : QS_STRICT_FIFO;
    cq->stop_policy = stop;
    fx_cq_apply(f, cq);
}

/* The bitmaps, and the cached most flavors of a group (when not marked
 * for a recount) against a count over every ClusterQueue. */
static void check_bits(const struct fx *f)
{
    const struct eng *e = f->e;
    assert_true(eng__cq_bits_ok(e));
    if (e->cq_max_flv < 0)
        return;
    int m = 0;
    for (size_t i = 0; i < e->n_cq_sorted; i++)
        for (int g = 0; g < e->cq_sorted[i]->n_rgs; g++)
            if (e->cq_sorted[i]->rgs[g].n_flv > m)
                m = e->cq_sorted[i]->rgs[g].n_flv;
    assert_int_equal(e->cq_max_flv, m);
}

static void one_op(struct fx *f, uint64_t *s, int *n_wl)
{
    char name[32], lq[16];
    switch (rnd(s, 8)) {
    case 0:
    case 1:
    case 2: { /* a new workload in a random LocalQueue */
        snprintf(name, sizeof(name), "w%d", (*n_wl)++);
        snprintf(lq, sizeof(lq), "lq%d", (int)rnd(s, N_CQ));
        struct api_workload *w = fx_wl(f, "ns", name, lq, (int32_t)rnd(s, 3), f->now_ms);
        fx_ps(f, w, "main", 1, rnd(s, 2) ? "cpu=1" : "cpu=2");
        fx_submit(f, w);
        break;
    }
    case 3:
    case 4: /* schedule; reservations written back */
        fx_admit(f);
        break;
    case 5: /* a random admitted workload finishes: quota freed, requeues */
        for (size_t i = 0; i < f->n_wls; i++) {
            struct api_workload *w = f->wls[(i + rnd(s, f->n_wls)) % f->n_wls];
            if (w->has_admission && !w->finished) {
                fx_finish(f, w);
                break;
            }
        }
        break;
    case 6: { /* a ClusterQueue deleted and made again: cq_sorted renumbered */
        int c = (int)rnd(s, N_CQ);
        snprintf(name, sizeof(name), "cq%d", c);
        eng_delete_cluster_queue(f->e, name);
        check_bits(f);
        fx_schedule(f);
        check_bits(f);
        cq_up(f, c, STOP_NONE, false);
        break;
    }
    default: /* a stop (Hold) or a restart, with one flavor or two */
        cq_up(f, (int)rnd(s, N_CQ), rnd(s, 2) ? STOP_HOLD : STOP_NONE, rnd(s, 4) == 0);
        break;
    }
    f->now_ms += (int64_t)rnd(s, 1500);
}

static void bitmaps_cover_every_busy_cluster_queue(void **state)
{
    (void)state;
    for (uint64_t seed = 1; seed <= 6; seed++) {
        uint64_t s = seed;
        struct fx *f = fx_new(NULL);
        fx_ns(f, "ns", NULL);
        fx_flavor(f, "f1", NULL);
        fx_flavor(f, "f2", NULL);
        for (int c = 0; c < N_CQ; c++) {
            char lq[16], cq[16];
            snprintf(lq, sizeof(lq), "lq%d", c);
            snprintf(cq, sizeof(cq), "cq%d", c);
            cq_up(f, c, STOP_NONE, false);
            fx_lq(f, "ns", lq, cq);
        }
        int n_wl = 0;
        for (int op = 0; op < N_OPS; op++) {
            one_op(f, &s, &n_wl);
            check_bits(f);
        }
        /* what is left is still scheduled: the last heads are found */
        fx_admit(f);
        check_bits(f);
        fx_free(f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bitmaps_cover_every_busy_cluster_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
