/*
 * Reference-model test: a naive, obviously-correct admission model checked
 * against the engine on thousands of random small clusters.
 *
 * The model restates Kueue's classic cycle for a restricted world, with
 * plain arrays and the kueue.md §2.1 formulas written out for one flat
 * cohort: ClusterQueues (BestEffortFIFO or StrictFIFO, an ordered subset of
 * the flavors, nominal quota with optional borrowingLimit/lendingLimit, no
 * preemption), one resource group over two resources, one pod set per
 * workload. Each cycle takes one head per ClusterQueue (queue order:
 * priority, creation, name), assigns flavors (first flavor that fits, even
 * borrowing; a flavor only short of unused quota counts as "preempt
 * without candidates" and reserves capacity for the cycle; beyond maximum
 * capacity it does not fit), orders the heads (non-borrowing first,
 * priority, creation, name) and admits those that still fit. BestEffortFIFO
 * parks what fails, together with identical workloads; capacity freed in a
 * cohort brings its parked workloads back.
 *
 * Each case runs several rounds (new workloads, a schedule, the control
 * plane writing reservations back, some workloads finishing) and compares
 * every reservation, in order, and what is left pending. A failure prints
 * the seed; CUEUE_SEED=<n> replays that one case.
 */
#include "test_engine_fixture.h"
#include "util/rng.h"

#define MAX_CQ 4
#define MAX_FLV 3
#define NRES 2
#define MAX_WL 40

static const char *const RES[NRES] = {"example.com/a", "example.com/b"};
static const char *const FLV[MAX_FLV] = {"f0", "f1", "f2"};

struct mq { /* model ClusterQueue */
    bool cohort, strict;
    int n_flv, flv[MAX_FLV];
    int64_t nominal[MAX_FLV][NRES];
    bool has_bl[MAX_FLV][NRES], has_ll[MAX_FLV][NRES];
    int64_t bl[MAX_FLV][NRES], ll[MAX_FLV][NRES];
    int64_t usage[MAX_FLV][NRES], extra[MAX_FLV][NRES]; /* extra: cycle-local */
};

enum mstate { M_ABSENT, M_QUEUED, M_PARKED, M_ADMITTED, M_DONE };

struct mw { /* model workload */
    int cq, prio, count;
    int64_t req[NRES]; /* per pod */
    int64_t created;
    enum mstate st;
    int flv; /* admitted flavor */
    char name[16];
    struct api_workload *api;
};

struct model {
    int n_cq, n_wl;
    struct mq q[MAX_CQ];
    struct mw w[MAX_WL];
    bool bulk[MAX_CQ][MAX_WL]; /* bulk-moved hashes, by representative wl */
    int log[MAX_WL * 2][2];    /* reservations: wl, flavor */
    int n_log;
};

/* ---- §2.1 for one flat cohort ---- */

static int64_t use(const struct mq *q, int f, int r) { return q->usage[f][r] + q->extra[f][r]; }

static int fidx(const struct mq *q, int flavor)
{
    for (int i = 0; i < q->n_flv; i++)
        if (q->flv[i] == flavor)
            return i;
    return -1;
}

static int64_t local_quota(const struct mq *q, int f, int r)
{
    if (!q->cohort || !q->has_ll[f][r])
        return 0;
    int64_t v = q->nominal[f][r] - q->ll[f][r];
    return v > 0 ? v : 0;
}

/* Cohort SubtreeQuota and Usage for a flavor/resource. */
static void cohort_totals(const struct model *m, int flavor, int r, int64_t *sub, int64_t *usage)
{
    *sub = *usage = 0;
    for (int i = 0; i < m->n_cq; i++) {
        const struct mq *q = &m->q[i];
        int f = fidx(q, flavor);
        if (!q->cohort || f < 0)
            continue;
        int64_t lq = local_quota(q, f, r), u = use(q, f, r) - lq;
        *sub += q->nominal[f][r] - lq;
        *usage += u > 0 ? u : 0;
    }
}

static int64_t available(const struct model *m, int c, int f, int r)
{
    const struct mq *q = &m->q[c];
    if (!q->cohort) {
        int64_t a = q->nominal[f][r] - use(q, f, r);
        return a > 0 ? a : 0;
    }
    int64_t sub, usage, lq = local_quota(q, f, r);
    cohort_totals(m, q->flv[f], r, &sub, &usage);
    int64_t parent = sub - usage;
    if (q->has_bl[f][r]) {
        int64_t used = use(q, f, r) - lq;
        int64_t lim = (q->nominal[f][r] - lq) - (used > 0 ? used : 0) + q->bl[f][r];
        parent = lim < parent ? lim : parent;
    }
    int64_t local = lq - use(q, f, r);
    int64_t a = (local > 0 ? local : 0) + parent;
    return a > 0 ? a : 0;
}

static int64_t potential(const struct model *m, int c, int f, int r)
{
    const struct mq *q = &m->q[c];
    if (!q->cohort)
        return q->nominal[f][r];
    int64_t sub, usage;
    cohort_totals(m, q->flv[f], r, &sub, &usage);
    int64_t v = local_quota(q, f, r) + sub;
    if (q->has_bl[f][r] && q->nominal[f][r] + q->bl[f][r] < v)
        v = q->nominal[f][r] + q->bl[f][r];
    return v;
}

/* ---- the model's scheduling ---- */

enum mmode { MM_NOFIT, MM_NOCAND, MM_FIT };

struct massign {
    int mode, flv, borrow; /* the flavor's worst resource */
    int maxb;              /* Assignment.Borrowing: highest level of any resource */
};

/* One flavor: the worst resource decides (no-fit < no-candidates < fit,
 * then the higher borrow level). */
static struct massign try_flavor(const struct model *m, const struct mw *w, int f)
{
    const struct mq *q = &m->q[w->cq];
    struct massign a = {MM_FIT, f, 0, 0};
    for (int r = 0; r < NRES; r++) {
        int64_t val = w->req[r] * w->count;
        int borrow = q->cohort && use(q, f, r) + val > q->nominal[f][r];
        int mode;
        if (val > potential(m, w->cq, f, r)) {
            mode = MM_NOFIT;
            borrow = 0;
        } else if (val <= available(m, w->cq, f, r)) {
            mode = MM_FIT;
        } else if (q->nominal[f][r] >= val) {
            mode = MM_NOCAND;
        } else {
            mode = MM_NOFIT;
        }
        if (mode < a.mode || (mode == a.mode && borrow > a.borrow)) {
            a.mode = mode;
            a.borrow = borrow;
        }
        if (borrow > a.maxb)
            a.maxb = borrow;
        if (a.mode == MM_NOFIT)
            break;
    }
    return a;
}

static struct massign assign(const struct model *m, const struct mw *w)
{
    struct massign best = {MM_NOFIT, -1, 0, 0};
    for (int f = 0; f < m->q[w->cq].n_flv; f++) {
        struct massign a = try_flavor(m, w, f);
        if (a.mode == MM_FIT)
            return a;
        if (a.mode == MM_NOCAND && (best.mode == MM_NOFIT || a.borrow < best.borrow))
            best = a;
    }
    return best;
}

static bool fits(const struct model *m, const struct mw *w, int f)
{
    for (int r = 0; r < NRES; r++)
        if (w->req[r] * w->count > available(m, w->cq, f, r))
            return false;
    return true;
}

static int queue_cmp(const struct mw *a, const struct mw *b)
{
    if (a->prio != b->prio)
        return a->prio > b->prio ? -1 : 1;
    if (a->created != b->created)
        return a->created < b->created ? -1 : 1;
    return strcmp(a->name, b->name);
}

static bool same_hash(const struct mw *a, const struct mw *b)
{
    return a->prio == b->prio && a->count == b->count && a->req[0] == b->req[0] &&
           a->req[1] == b->req[1];
}

static void park(struct model *m, int i, bool bulk)
{
    struct mw *w = &m->w[i];
    w->st = M_PARKED;
    if (!bulk)
        return;
    m->bulk[w->cq][i] = true;
    for (int j = 0; j < m->n_wl; j++)
        if (m->w[j].st == M_QUEUED && m->w[j].cq == w->cq && same_hash(&m->w[j], w))
            m->w[j].st = M_PARKED;
}

struct mentry {
    int wl;
    struct massign a;
};

static int entry_cmp(const struct model *m, const struct mentry *x, const struct mentry *y)
{
    if (x->a.maxb != y->a.maxb)
        return x->a.maxb < y->a.maxb ? -1 : 1;
    return queue_cmp(&m->w[x->wl], &m->w[y->wl]);
}

static void reserve_capacity(struct model *m, const struct mw *w, const struct massign *a)
{
    struct mq *q = &m->q[w->cq];
    for (int r = 0; r < NRES; r++) {
        int64_t amt = w->req[r] * w->count, u = use(q, a->flv, r), res;
        if (a->maxb > 0) {
            res = amt;
            if (q->has_bl[a->flv][r] && q->nominal[a->flv][r] + q->bl[a->flv][r] - u < res)
                res = q->nominal[a->flv][r] + q->bl[a->flv][r] - u;
        } else {
            res = q->nominal[a->flv][r] - u < amt ? q->nominal[a->flv][r] - u : amt;
            res = res > 0 ? res : 0;
        }
        q->extra[a->flv][r] += res;
    }
}

/* One Kueue cycle; returns true when something was admitted or parked. */
static bool model_cycle(struct model *m)
{
    struct mentry e[MAX_CQ];
    int n = 0;
    for (int c = 0; c < m->n_cq; c++) {
        int head = -1;
        for (int i = 0; i < m->n_wl; i++)
            if (m->w[i].st == M_QUEUED && m->w[i].cq == c &&
                (head < 0 || queue_cmp(&m->w[i], &m->w[head]) < 0))
                head = i;
        if (head >= 0)
            e[n++] = (struct mentry){head, assign(m, &m->w[head])};
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && entry_cmp(m, &e[j], &e[j - 1]) < 0; j--) {
            struct mentry t = e[j];
            e[j] = e[j - 1];
            e[j - 1] = t;
        }
    bool progress = false;
    for (int k = 0; k < n; k++) {
        struct mw *w = &m->w[e[k].wl];
        struct mq *q = &m->q[w->cq];
        if (getenv("CUEUE_REF_VERBOSE"))
            fprintf(stderr, "  model: %s mode=%d flv=%d borrow=%d fits=%d\n", w->name, e[k].a.mode,
                    e[k].a.flv >= 0 ? q->flv[e[k].a.flv] : -1, e[k].a.borrow,
                    e[k].a.mode == MM_FIT ? fits(m, w, e[k].a.flv) : -1);
        if (e[k].a.mode == MM_NOCAND)
            reserve_capacity(m, w, &e[k].a);
        if (e[k].a.mode != MM_FIT) {
            if (!q->strict) {
                park(m, e[k].wl, true);
                progress = true;
            }
            continue;
        }
        if (!fits(m, w, e[k].a.flv))
            continue; /* skipped: stays queued */
        for (int r = 0; r < NRES; r++)
            q->usage[e[k].a.flv][r] += w->req[r] * w->count;
        w->st = M_ADMITTED;
        w->flv = q->flv[e[k].a.flv];
        m->log[m->n_log][0] = e[k].wl;
        m->log[m->n_log++][1] = w->flv;
        progress = true;
    }
    for (int c = 0; c < m->n_cq; c++)
        memset(m->q[c].extra, 0, sizeof(m->q[c].extra));
    return progress;
}

static void model_requeue(struct model *m, int cq)
{
    for (int c = 0; c < m->n_cq; c++) {
        if (c != cq && !(m->q[c].cohort && m->q[cq].cohort))
            continue;
        memset(m->bulk[c], 0, sizeof(m->bulk[c]));
        for (int i = 0; i < m->n_wl; i++)
            if (m->w[i].st == M_PARKED && m->w[i].cq == c)
                m->w[i].st = M_QUEUED;
    }
}

static void model_submit(struct model *m, int i)
{
    struct mw *w = &m->w[i];
    w->st = M_QUEUED;
    if (m->q[w->cq].strict)
        return;
    for (int j = 0; j < m->n_wl; j++)
        if (m->bulk[w->cq][j] && same_hash(&m->w[j], w))
            w->st = M_PARKED;
}

/* ---- random cases ---- */

static void random_cluster(struct fx *f, struct model *m, struct rng *g)
{
    fx_ns(f, "ns", NULL);
    for (int i = 0; i < MAX_FLV; i++)
        fx_flavor(f, FLV[i], NULL);
    m->n_cq = 1 + (int)rng_below(g, MAX_CQ);
    for (int c = 0; c < m->n_cq; c++) {
        struct mq *q = &m->q[c];
        q->cohort = rng_below(g, 10) < 7;
        q->strict = rng_below(g, 4) == 0;
        int order[MAX_FLV] = {0, 1, 2};
        for (int i = MAX_FLV - 1; i > 0; i--) {
            int j = (int)rng_below(g, (uint64_t)i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        q->n_flv = 1 + (int)rng_below(g, MAX_FLV);
        char spec[512] = "", part[128];
        for (int k = 0; k < q->n_flv; k++) {
            q->flv[k] = order[k];
            snprintf(part, sizeof(part), "%s%s:", k ? ";" : "", FLV[order[k]]);
            strncat(spec, part, sizeof(spec) - strlen(spec) - 1);
            for (int r = 0; r < NRES; r++) {
                q->nominal[k][r] = (int64_t)rng_below(g, 9);
                q->has_bl[k][r] = q->cohort && rng_below(g, 10) < 3;
                q->bl[k][r] = (int64_t)rng_below(g, 5);
                q->has_ll[k][r] = q->cohort && rng_below(g, 10) < 3;
                q->ll[k][r] = (int64_t)rng_below(g, (uint64_t)q->nominal[k][r] + 1);
                char bl[24] = "-", ll[24] = "-";
                if (q->has_bl[k][r])
                    snprintf(bl, sizeof(bl), "%lld", (long long)q->bl[k][r]);
                if (q->has_ll[k][r])
                    snprintf(ll, sizeof(ll), "%lld", (long long)q->ll[k][r]);
                snprintf(part, sizeof(part), "%s%s=%lld/%s/%s", r ? "," : "", RES[r],
                         (long long)q->nominal[k][r], bl, ll);
                strncat(spec, part, sizeof(spec) - strlen(spec) - 1);
            }
        }
        char name[16], lq[16];
        snprintf(name, sizeof(name), "cq%d", c);
        snprintf(lq, sizeof(lq), "q%d", c);
        struct api_cluster_queue *cq = fx_cq_make(f, name, q->cohort ? "c" : NULL, spec);
        cq->queueing_strategy = q->strict ? QS_STRICT_FIFO : QS_BEST_EFFORT_FIFO;
        fx_cq_apply(f, cq);
        fx_lq(f, "ns", lq, name);
    }
}

static void random_workload(struct fx *f, struct model *m, struct rng *g)
{
    int i = m->n_wl++;
    struct mw *w = &m->w[i];
    w->cq = (int)rng_below(g, (uint64_t)m->n_cq);
    w->prio = (int)rng_below(g, 3);
    w->count = 1 + (int)rng_below(g, 3);
    do {
        w->req[0] = (int64_t)rng_below(g, 4);
        w->req[1] = (int64_t)rng_below(g, 4);
    } while (!w->req[0] && !w->req[1]);
    w->created = i + 1;
    snprintf(w->name, sizeof(w->name), "w%02d", i);
    char lq[8], req[96];
    snprintf(lq, sizeof(lq), "q%d", w->cq);
    snprintf(req, sizeof(req), "%s=%lld,%s=%lld", RES[0], (long long)w->req[0], RES[1],
             (long long)w->req[1]);
    w->api = fx_wl(f, "ns", w->name, lq, w->prio, w->created);
    fx_ps(f, w->api, "main", w->count, req);
    fx_submit(f, w->api);
    model_submit(m, i);
}

static int flavor_id(const char *name)
{
    for (int i = 0; i < MAX_FLV; i++)
        if (!strcmp(FLV[i], name))
            return i;
    return -1;
}

/* Compare the engine's reservations of this round with the model's. */
static void compare_round(struct fx *f, struct model *m, int first_log, uint64_t seed, int round)
{
    int k = first_log;
    for (size_t i = 0; i < f->res.n; i++) {
        const struct eng_decision *d = &f->res.items[i];
        if (d->type == ENG_PREEMPT)
            fail_msg("seed %llu round %d: unexpected preemption of %s", (unsigned long long)seed,
                     round, d->wl.name);
        if (d->type != ENG_RESERVE)
            continue;
        if (k >= m->n_log)
            fail_msg("seed %llu round %d: engine admitted %s, model admitted nothing more",
                     (unsigned long long)seed, round, d->wl.name);
        const struct mw *w = &m->w[m->log[k][0]];
        int flv = flavor_id(fx_flavor_of(d, "main", w->req[0] ? RES[0] : RES[1]));
        if (strcmp(d->wl.name, w->name) || flv != m->log[k][1])
            fail_msg("seed %llu round %d: reservation %d: engine %s on %s, model %s on %s",
                     (unsigned long long)seed, round, k, d->wl.name, flv >= 0 ? FLV[flv] : "?",
                     w->name, FLV[m->log[k][1]]);
        k++;
    }
    if (k != m->n_log)
        fail_msg("seed %llu round %d: model admitted %s, the engine did not",
                 (unsigned long long)seed, round, m->w[m->log[k][0]].name);
}

static void dump(const struct fx *f, const struct model *m, int round)
{
    if (!getenv("CUEUE_REF_VERBOSE"))
        return;
    fprintf(stderr, "== round %d\n", round);
    for (int c = 0; c < m->n_cq; c++) {
        const struct mq *q = &m->q[c];
        fprintf(stderr, "cq%d cohort=%d strict=%d:", c, q->cohort, q->strict);
        for (int k = 0; k < q->n_flv; k++) {
            fprintf(stderr, " %s[", FLV[q->flv[k]]);
            for (int r = 0; r < NRES; r++)
                fprintf(stderr, " n=%lld bl=%s%lld ll=%s%lld u=%lld", (long long)q->nominal[k][r],
                        q->has_bl[k][r] ? "" : "-", (long long)q->bl[k][r], q->has_ll[k][r] ? "" : "-",
                        (long long)q->ll[k][r], (long long)q->usage[k][r]);
            fprintf(stderr, " ]");
        }
        fprintf(stderr, "\n");
    }
    for (int i = 0; i < m->n_wl; i++)
        fprintf(stderr, "%s cq%d prio=%d count=%d req=%lld,%lld st=%d\n", m->w[i].name, m->w[i].cq,
                m->w[i].prio, m->w[i].count, (long long)m->w[i].req[0], (long long)m->w[i].req[1],
                m->w[i].st);
    for (size_t i = 0; i < f->res.n; i++)
        fprintf(stderr, "  engine: %d %s %s %s\n", f->res.items[i].type, f->res.items[i].wl.name,
                f->res.items[i].reason ? f->res.items[i].reason : "",
                f->res.items[i].message ? f->res.items[i].message : "");
}

static void run_case(uint64_t seed)
{
    struct rng g;
    rng_seed(&g, seed);
    struct fx *f = fx_new(NULL);
    struct model *m = xcalloc(1, sizeof(*m));
    random_cluster(f, m, &g);
    for (int round = 0; round < 5; round++) {
        int add = (int)rng_below(&g, 6);
        for (int i = 0; i < add && m->n_wl < MAX_WL; i++)
            random_workload(f, m, &g);
        int first = m->n_log;
        while (model_cycle(m))
            if (getenv("CUEUE_REF_VERBOSE"))
                fprintf(stderr, "  model: --- cycle\n");
        fx_schedule(f);
        dump(f, m, round);
        compare_round(f, m, first, seed, round);
        fx_apply_all(f);
        for (int i = 0; i < m->n_wl; i++) {
            struct mw *w = &m->w[i];
            if (w->st != M_ADMITTED || rng_below(&g, 3))
                continue;
            fx_finish(f, w->api);
            w->st = M_DONE;
            struct mq *q = &m->q[w->cq];
            int fi = fidx(q, w->flv);
            for (int r = 0; r < NRES; r++)
                q->usage[fi][r] -= w->req[r] * w->count;
            model_requeue(m, w->cq);
        }
    }
    struct eng_cq_status st;
    for (int c = 0; c < m->n_cq; c++) {
        char name[16];
        snprintf(name, sizeof(name), "cq%d", c);
        int pending = 0;
        for (int i = 0; i < m->n_wl; i++)
            pending += m->w[i].cq == c && (m->w[i].st == M_QUEUED || m->w[i].st == M_PARKED);
        eng_cq_status(f->e, name, &st);
        if (st.pending != pending)
            fail_msg("seed %llu: %s has %d pending, model %d", (unsigned long long)seed, name,
                     st.pending, pending);
        eng_cq_status_release(&st);
    }
    xfree(m);
    fx_free(f);
}

static void engine_matches_the_reference_model(void **state)
{
    (void)state;
    const char *env = getenv("CUEUE_SEED");
    if (env && *env) {
        run_case(strtoull(env, NULL, 10));
        return;
    }
    for (uint64_t seed = 1; seed <= 3000; seed++)
        run_case(seed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(engine_matches_the_reference_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
