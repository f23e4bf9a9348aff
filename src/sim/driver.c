/*
 * driver: one simulation run. The same control plane as `cueue server`
 * (ctrl_new with every reconciler and the admission engine) over a memory
 * store, a virtual clock, the simulated executor and the scenario's
 * capacity model. The loop, at each instant:
 *   due actions -> due bare-Workload completions -> ctrl_step -> observe
 *   (repeated while the recorder itself wrote something; in every round of
 *   ctrl_step the recorder reads the new events too, and what both readers
 *   have read leaves the store's event log)
 * then the clock jumps to the earliest of: the next action, the control
 * plane's next timer (its executor's included), the provider's next
 * revocation, the next bare-Workload completion. Without --until it stops
 * at completion: no action or revocation left and nothing the recorder
 * sees can move by itself (every Workload finished or deactivated, every
 * Pod done), however far the remaining timers are; or, busy, after 30
 * simulated days (with a warning). With --until it runs every timer up to
 * that time. Either way it stops when nothing is scheduled, or after
 * IDLE_LIMIT wakeups that changed nothing (timers that keep firing without
 * effect). simulatedSeconds is then the last instant something happened
 * (an action, a trace record, a store write), or the --until / limit.
 */
#include <stdlib.h>
#include <string.h>

#ifndef __unused
#define __unused __attribute__((unused)) /* used by libbsd tree.h */
#endif
#include <bsd/sys/tree.h>

#include "sim/observe-int.h"
#include "store/store.h"
#include "util/err.h"
#include "util/xalloc.h"

#define IDLE_LIMIT 10000
#define QUIESCE_LIMIT 1000
/* Without --until, a run whose timers keep doing something (an unlimited
 * requeue loop) stops here. */
#define DEFAULT_LIMIT_MS (30LL * 24 * 3600 * 1000)

/* The next occurrence of an action, ordered by (time, action index). */
struct due {
    int64_t at_ms;
    size_t idx;
    int32_t occ;
    RB_ENTRY(due) link;
};

static int due_cmp(struct due *a, struct due *b)
{
    if (a->at_ms != b->at_ms)
        return a->at_ms < b->at_ms ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

RB_HEAD(due_tree, due);
RB_GENERATE_STATIC(due_tree, due, link, due_cmp)

static struct prov *make_provider(const struct sim_scenario *sc)
{
    struct prov_sim_pool *pools = xcalloc(sc->n_pools + 1, sizeof(*pools));
    for (size_t i = 0; i < sc->n_pools; i++) {
        const struct sim_pool_cap *pc = &sc->pools[i];
        struct prov_sim_window *w = xcalloc(pc->n_stockouts + 1, sizeof(*w));
        for (size_t j = 0; j < pc->n_stockouts; j++) {
            w[j].from_ms = sc->start_ms + pc->stockouts[j].from_ms;
            w[j].to_ms = pc->stockouts[j].to_ms == PROV_NEVER
                             ? PROV_NEVER
                             : sc->start_ms + pc->stockouts[j].to_ms;
        }
        struct prov_sim_revocation *r = xcalloc(pc->n_revocations + 1, sizeof(*r));
        for (size_t j = 0; j < pc->n_revocations; j++) {
            r[j].at_ms = sc->start_ms + pc->revocations[j].at_ms;
            r[j].n_nodes = pc->revocations[j].n_nodes;
        }
        pools[i] = (struct prov_sim_pool){pc->name, pc->delay_ms, w, pc->n_stockouts, r,
                                          pc->n_revocations};
    }
    struct prov *p = prov_sim_new(pools, sc->n_pools);
    for (size_t i = 0; i < sc->n_pools; i++) {
        xfree((void *)pools[i].stockouts);
        xfree((void *)pools[i].revocations);
    }
    xfree(pools);
    return p;
}

/* The reconcilers' trace records the sink keeps (the others are derived
 * from object state): ctrl builds no record the sink would drop. */
static bool passes_through(const char *event) { return !sim_trace_is_derived(event); }

/* The control loop and the recorder are the store's only event readers:
 * what both have consumed is dropped from the history, so that the old
 * versions of every object do not stay in memory for nothing. */
static void trim_history(struct sim *s)
{
    uint64_t a = ctrl_events_consumed(s->ctrl), b = s->obs->cursor;
    store_events_trim(s->store, a < b ? a : b);
}

/* In each round of a control-plane step, once the round has read the
 * store's events: the recorder reads them too (keeping its records for
 * after the step), and the versions both have read leave the log, so that
 * a version written earlier in the step and replaced in this round is
 * held by the store's index alone, whose metadata map the store may then
 * reuse for the successor (store/mutate.c). */
static void catch_up(void *ctx)
{
    struct sim *s = ctx;
    sim_obs_catch_up(s);
    trim_history(s);
}

int sim_new(const struct sim_scenario *sc, const struct sim_options *opt, struct sim **out,
            char **err)
{
    struct sim *s = xcalloc(1, sizeof(*s));
    s->sc = sc;
    s->opt = *opt;
    clk_virtual_init(&s->clock, sc->start_ms);
    rng_seed(&s->rng, sc->seed);
    char msg[256] = "";
    struct store_opts so = {.db_path = NULL, .clock = &s->clock.clk, .rng = &s->rng};
    if (store_open(&so, &s->store, msg, sizeof(msg))) {
        *err = xasprintf("cannot open the memory store: %s", msg);
        xfree(s);
        return CU_EIO;
    }
    struct exec_sim_opts eo = {
        .clock = &s->clock.clk,
        .outcome = sim_pod_outcome,
        .ctx = s,
        .default_runtime_ms = sc->default_runtime_ms,
        .honor_grace = sc->honor_grace,
    };
    s->exec = exec_sim_new(&eo);
    s->prov = make_provider(sc);
    struct ctrl_opts co = {
        .store = s->store,
        .clock = &s->clock.clk,
        .rng = &s->rng,
        .exec = s->exec,
        .prov = s->prov,
        .config = sc->cfg,
    };
    /* the trace is derived from object state; nothing reads v1 Events */
    co.config.record_events = false;
    /* queue status figures written once a second, as Kueue's
     * UpdatesBatchPeriod does (nothing in the trace reads them) */
    co.config.queue_status_batch_ms = 1000;
    int rc = ctrl_new(&co, &s->ctrl);
    if (rc) {
        *err = xasprintf("cannot start the control plane: %s", cu_strerror(rc));
        sim_free(s);
        return rc;
    }
    ctrl_set_trace(s->ctrl, sim_trace_sink, s);
    ctrl_set_trace_wants(s->ctrl, passes_through);
    ctrl_set_trace_epoch(s->ctrl, sc->start_ms);
    s->obs = sim_observer_new(s);
    ctrl_set_events_hook(s->ctrl, catch_up, s);
    sbuf_init(&s->line, 0);
    s->records = json_array();
    s->warnings = json_array();
    s->event_counts = json_object();
    *out = s;
    return 0;
}

void sim_free(struct sim *s)
{
    if (!s)
        return;
    ctrl_free(s->ctrl);
    sim_observer_free(s->obs);
    if (s->exec)
        s->exec->ops->free(s->exec);
    if (s->prov)
        s->prov->ops->free(s->prov);
    store_close(s->store);
    sim_runtimes_free(s->runtimes);
    sim_admitted_free(s);
    sbuf_release(&s->line);
    json_decref(s->records);
    json_decref(s->event_counts);
    json_decref(s->warned);
    json_decref(s->warnings);
    xfree(s);
}

/* spec.defaultPool: the NodePool `cueue server` creates on its first start
 * (src/server/server_main.c, seed_first_start): default-pool, three
 * n2-standard-16 nodes, no autoscaling. */
static int create_default_pool(struct sim *s, char **err)
{
    json_t *pool = json_pack("{s:s, s:s, s:{s:s}, s:{s:{s:s}, s:i, s:{s:b}}}", "apiVersion",
                             "cueue.dev/v1alpha1", "kind", "NodePool", "metadata", "name",
                             "default-pool", "spec", "config", "machineType", "n2-standard-16",
                             "initialNodeCount", 3, "autoscaling", "enabled", 0);
    int rc = sim_apply(s, pool, -1, "spec.defaultPool", err);
    json_decref(pool);
    return rc;
}

static int create_objects(struct sim *s, char **err)
{
    json_t *ns = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                           "metadata", "name", "default");
    int rc = sim_apply(s, ns, -1, "the default namespace", err);
    json_decref(ns);
    if (!rc && s->sc->default_pool)
        rc = create_default_pool(s, err);
    for (size_t i = 0; !rc && i < s->sc->n_objects; i++)
        rc = sim_apply(s, s->sc->objects[i].obj, -1, s->sc->objects[i].where, err);
    return rc;
}

static void schedule_action(struct due_tree *t, const struct sim_scenario *sc, size_t idx,
                            int32_t occ, struct due *d)
{
    const struct sim_action *a = &sc->actions[idx];
    d->idx = idx;
    d->occ = occ;
    d->at_ms = sc->start_ms + a->at_rel + (int64_t)occ * a->every_ms;
    RB_INSERT(due_tree, t, d);
}

/* Run every action occurrence due at or before now. Returns how many ran,
 * or a negative code (message in *err). */
static int run_due(struct sim *s, struct due_tree *t, char **err)
{
    int64_t now = clk_now(&s->clock.clk);
    int n = 0;
    struct due *d;
    while ((d = RB_MIN(due_tree, t)) && d->at_ms <= now) {
        RB_REMOVE(due_tree, t, d);
        const struct sim_action *a = &s->sc->actions[d->idx];
        int rc = sim_action_run(s, a, d->occ, err);
        if (rc) {
            xfree(d);
            return rc;
        }
        n++;
        if (d->occ + 1 < a->repeat)
            schedule_action(t, s->sc, d->idx, d->occ + 1, d);
        else
            xfree(d);
    }
    return n;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

static int64_t next_time(struct sim *s, struct due_tree *t)
{
    struct due *d = RB_MIN(due_tree, t);
    int64_t next = d ? d->at_ms : INT64_MAX;
    next = min64(next, ctrl_next_deadline(s->ctrl));
    next = min64(next, s->prov->ops->next_deadline(s->prov));
    return min64(next, sim_observer_next_deadline(s));
}

/* Step the control plane and the recorder until neither has more to do at
 * this instant. Returns the work done. */
static int settle(struct sim *s)
{
    int work = ctrl_step(s->ctrl);
    int writes = sim_observe(s);
    s->n_steps++;
    for (int i = 0; writes > 0 && i < QUIESCE_LIMIT; i++) {
        s->n_steps++;
        work += writes + ctrl_step(s->ctrl);
        writes = sim_observe(s);
    }
    trim_history(s);
    return work;
}

/* Something is left that will happen by itself: an action, a scenario
 * capacity revocation, or work the recorder sees going on (a Workload
 * neither finished nor deactivated, a Pod not done). Timers alone (a
 * ProvisioningRequest's 7-day limit, scale-down of idle nodes) are not. */
static bool busy(struct sim *s, struct due_tree *t)
{
    return RB_MIN(due_tree, t) || s->prov->ops->next_deadline(s->prov) != PROV_NEVER ||
           sim_observer_busy(s);
}

/* The run ends at `at` (the clock is left there: the summary's
 * simulatedSeconds) for `why`. */
static int stop(struct sim *s, int64_t at, const char *why)
{
    clk_virtual_set(&s->clock, at); /* forward only: an --until with nothing to do */
    s->end_ms = at;
    s->stopped_by = why;
    return 0;
}

static int loop(struct sim *s, struct due_tree *t, char **err)
{
    int idle = 0;
    bool limit = s->opt.until_rel < 0;
    int64_t until = s->sc->start_ms + (limit ? DEFAULT_LIMIT_MS : s->opt.until_rel);
    int64_t last_change = s->sc->start_ms; /* the last instant something happened */
    for (;;) {
        int64_t now = clk_now(&s->clock.clk);
        size_t records = s->n_records;
        uint64_t rv = store_rv(s->store);
        s->n_wakeups++;
        int acted = run_due(s, t, err);
        if (acted < 0)
            return acted;
        acted += sim_observer_fire(s);
        int work = settle(s);
        bool active = acted > 0 || s->n_records != records;
        idle = active ? 0 : idle + 1;
        if (active || store_rv(s->store) != rv)
            last_change = now;
        /* without --until the run is over once nothing can move by itself,
         * whatever far timers remain */
        if (limit && !busy(s, t))
            return stop(s, last_change, "completion");
        int64_t next = next_time(s, t);
        if (next == INT64_MAX)
            return stop(s, last_change, "completion");
        if (next > until) {
            stop(s, until, limit ? "limit" : "until");
            if (limit)
                sim_warn(s, "still busy after 30 simulated days; stopped (use --until)");
            return 0;
        }
        if (idle > IDLE_LIMIT && !RB_MIN(due_tree, t) &&
            sim_observer_next_deadline(s) == INT64_MAX)
            return stop(s, last_change, "idle");
        if (next <= now && !active && work == 0)
            next = now + 1; /* a deadline nobody consumes: do not spin */
        clk_virtual_set(&s->clock, next);
    }
}

int sim_run(struct sim *s, char **err)
{
    *err = NULL;
    int64_t wall0 = clk_now(clk_real());
    int rc = create_objects(s, err);
    struct due_tree t;
    RB_INIT(&t);
    for (size_t i = 0; i < s->sc->n_actions; i++)
        schedule_action(&t, s->sc, i, 0, xcalloc(1, sizeof(struct due)));
    if (!rc)
        rc = loop(s, &t, err);
    if (!rc) {
        sim_observer_finish(s);
    } else if (*err) { /* "document 3: ...", "spec.actions[2] (at 90s): ..." */
        char *e = xasprintf("%s: %s", s->sc->source, *err);
        xfree(*err);
        *err = e;
    }
    struct due *d, *nd;
    RB_FOREACH_SAFE(d, due_tree, &t, nd) {
        RB_REMOVE(due_tree, &t, d);
        xfree(d);
    }
    if (!s->stopped_by)
        s->end_ms = clk_now(&s->clock.clk); /* stopped by an error */
    s->wall_ms = clk_now(clk_real()) - wall0;
    return rc;
}
