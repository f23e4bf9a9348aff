/*
 * ctrl: the loop framework (see ctrl.h). Work queues are FIFO lists of keys,
 * deduplicated while queued; timers live in a red-black tree ordered by
 * (time, sequence) so equal deadlines fire in the order they were set. One
 * step drains: store events -> due timers -> reconcile queues ->
 * after_round hooks, and repeats while anything happened, within a budget.
 */
#include "ctrl/ctrl.h"

#ifndef __unused
#define __unused __attribute__((unused)) /* used by libbsd tree.h */
#endif
#include <bsd/sys/tree.h>
#include <pthread.h>
#include <string.h>
#include <uthash.h>
#include <utlist.h>

#include "api/kinds.h"
#include "ctrl/ctrl-int.h"
#include "ctrl/metrics.h"
#include "provider/provider.h"
#include "util/err.h"
#include "util/xalloc.h"

#define MAX_RECONCILERS 32
#define ROUND_BUDGET 100000
/* how often a loop whose store cannot save tries again */
#define CTRL_SAVE_RETRY_MS 500

struct wq_item {
    struct wq_item *prev, *next;
    UT_hash_handle hh;
    char key[]; /* "ns\x1fname", allocated with the item */
};

struct reconciler {
    const struct ctrl_reconciler_ops *ops;
    void *self;
    struct wq_item *list; /* utlist DL list, FIFO */
    struct wq_item *set;  /* uthash by key */
};

struct timer {
    int64_t at_ms;
    uint64_t seq;
    int rid; /* -1 = plain wakeup */
    char *ns;
    char *name;
    RB_ENTRY(timer) link;
};

static int timer_cmp(struct timer *a, struct timer *b)
{
    if (a->at_ms != b->at_ms)
        return a->at_ms < b->at_ms ? -1 : 1;
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

RB_HEAD(timer_tree, timer);
RB_GENERATE_STATIC(timer_tree, timer, link, timer_cmp)

struct call_req {
    void (*fn)(struct ctrl *c, void *arg);
    void *arg;
    int done;
    struct call_req *next;
};

struct ctrl {
    struct store *store;
    struct clk *clock;
    struct rng *rng;
    struct exec *exec;
    struct prov *prov;
    struct ctrl_config cfg;
    struct reconciler rec[MAX_RECONCILERS];
    int n_rec;
    struct timer_tree timers;
    uint64_t timer_seq;
    uint64_t cursor_rv; /* last store event consumed */
    bool need_resync;
    void (*events_hook)(void *ctx); /* ctrl_set_events_hook */
    void *events_ctx;
    struct event_agg *events; /* Event aggregation (event.c) */
    void (*trace_fn)(void *ctx, json_t *rec);
    void *trace_ctx;
    bool (*trace_wants)(const char *event); /* NULL = every event */
    int64_t trace_epoch_ms;
    bool in_loop_thread; /* a loop thread owns the control plane (ctrl_call queues) */
    pthread_mutex_t call_mu;
    pthread_cond_t call_cv;
    struct call_req *calls;
    int round_work; /* ctrl__round_work */
    struct ctrl_metrics *metrics; /* ctrl/metrics.h */
};

void ctrl_config_defaults(struct ctrl_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->scale_down_unneeded_ms = 10 * 60 * 1000;
    cfg->provisioning_max_wait_ms = 7LL * 24 * 3600 * 1000;
    cfg->booking_duration_ms = 10 * 60 * 1000;
    api_job_policy_defaults(&cfg->jobs);
    cfg->wait_for_pods_ready = true;
    cfg->pods_ready_timeout_ms = 30 * 60 * 1000;
    cfg->pods_ready_block_admission = false;
    cfg->requeue_backoff_base_ms = 60 * 1000;
    cfg->requeue_backoff_max_ms = 3600 * 1000;
    cfg->requeue_backoff_limit = -1;
    cfg->flavor_fallback = false;
    cfg->fallback_node_wait_ms = 15 * 60 * 1000;
    cfg->fallback_provreq_timeout_ms = 0;
    cfg->fallback_flavor_backoff_ms = 10 * 60 * 1000;
    cfg->record_events = true;
    cfg->event_ttl_ms = 60 * 60 * 1000;
}

int ctrl_new(const struct ctrl_opts *opts, struct ctrl **out)
{
    struct ctrl *c = xcalloc(1, sizeof(*c));
    c->store = opts->store;
    c->clock = opts->clock;
    c->rng = opts->rng;
    c->exec = opts->exec;
    c->prov = opts->prov;
    c->cfg = opts->config;
    RB_INIT(&c->timers);
    c->cursor_rv = 0;
    c->need_resync = true; /* first step: every stored object is "new" */
    c->trace_epoch_ms = clk_now(c->clock);
    pthread_mutex_init(&c->call_mu, NULL);
    pthread_cond_init(&c->call_cv, NULL);
    c->metrics = ctrl__metrics_new();
    ctrl__gc_register(c);
    ctrl__nodepool_register(c);
    ctrl__job_register(c);
    ctrl__rayjob_register(c);
    ctrl__jobset_register(c);
    ctrl__plainpod_register(c);
    ctrl__workload_register(c);
    ctrl__scheduler_register(c);
    ctrl__provisioning_register(c);
    ctrl__autoscaler_register(c);
    ctrl__binder_register(c);
    ctrl__nodeagent_register(c);
    ctrl__event_ttl_register(c);
    ctrl__endpoints_register(c);
    *out = c;
    return 0;
}

static void wq_clear(struct reconciler *r)
{
    struct wq_item *it, *tmp;
    HASH_ITER(hh, r->set, it, tmp) {
        HASH_DEL(r->set, it);
        DL_DELETE(r->list, it);
        xfree(it);
    }
}

void ctrl_free(struct ctrl *c)
{
    if (!c)
        return;
    for (int i = 0; i < c->n_rec; i++) {
        wq_clear(&c->rec[i]);
        if (c->rec[i].ops->free)
            c->rec[i].ops->free(c->rec[i].self);
    }
    struct timer *t, *nt;
    RB_FOREACH_SAFE(t, timer_tree, &c->timers, nt) {
        RB_REMOVE(timer_tree, &c->timers, t);
        xfree(t->ns);
        xfree(t->name);
        xfree(t);
    }
    ctrl__events_free(&c->events);
    ctrl__metrics_free(c->metrics);
    pthread_mutex_destroy(&c->call_mu);
    pthread_cond_destroy(&c->call_cv);
    xfree(c);
}

int ctrl_register(struct ctrl *c, const struct ctrl_reconciler_ops *ops, void *self)
{
    if (c->n_rec >= MAX_RECONCILERS)
        return -1;
    c->rec[c->n_rec].ops = ops;
    c->rec[c->n_rec].self = self;
    return c->n_rec++;
}

int ctrl_find(struct ctrl *c, const char *name, void **self_out)
{
    for (int i = 0; i < c->n_rec; i++) {
        if (!strcmp(c->rec[i].ops->name, name)) {
            if (self_out)
                *self_out = c->rec[i].self;
            return i;
        }
    }
    return -1;
}

void ctrl_enqueue(struct ctrl *c, int rid, const char *ns, const char *name)
{
    if (rid < 0 || rid >= c->n_rec)
        return;
    struct reconciler *r = &c->rec[rid];
    /* the key "ns\x1fname" (NULL reads as ""), built where the item would
     * hold it, so a key already queued costs no allocation */
    size_t nns = ns ? strlen(ns) : 0, nname = name ? strlen(name) : 0;
    size_t klen = nns + 1 + nname;
    char stack[256];
    char *key = klen < sizeof(stack) ? stack : xmalloc(klen + 1);
    memcpy(key, ns ? ns : "", nns);
    key[nns] = '\x1f';
    memcpy(key + nns + 1, name ? name : "", nname);
    key[klen] = '\0';
    struct wq_item *it;
    HASH_FIND(hh, r->set, key, klen, it);
    if (!it) {
        it = xmalloc(sizeof(*it) + klen + 1);
        memset(it, 0, sizeof(*it));
        memcpy(it->key, key, klen + 1);
        HASH_ADD_KEYPTR(hh, r->set, it->key, klen, it);
        DL_APPEND(r->list, it);
    }
    if (key != stack)
        xfree(key);
}

static void add_timer(struct ctrl *c, int rid, const char *ns, const char *name, int64_t at_ms)
{
    struct timer *t = xcalloc(1, sizeof(*t));
    t->at_ms = at_ms;
    t->seq = ++c->timer_seq;
    t->rid = rid;
    t->ns = xstrdup(ns);
    t->name = xstrdup(name);
    RB_INSERT(timer_tree, &c->timers, t);
}

void ctrl_enqueue_at(struct ctrl *c, int rid, const char *ns, const char *name, int64_t at_ms)
{
    if (at_ms <= ctrl_now(c)) {
        ctrl_enqueue(c, rid, ns, name);
        return;
    }
    add_timer(c, rid, ns, name, at_ms);
}

void ctrl_wake_at(struct ctrl *c, int64_t at_ms)
{
    add_timer(c, -1, NULL, NULL, at_ms);
}

uint64_t ctrl_events_consumed(struct ctrl *c) { return c->cursor_rv; }

void ctrl_set_events_hook(struct ctrl *c, void (*fn)(void *ctx), void *ctx)
{
    c->events_hook = fn;
    c->events_ctx = ctx;
}

int64_t ctrl_next_deadline(struct ctrl *c)
{
    struct timer *t = RB_MIN(timer_tree, &c->timers);
    int64_t d = t ? t->at_ms : INT64_MAX;
    if (c->exec && c->exec->ops->next_deadline) {
        int64_t e = c->exec->ops->next_deadline(c->exec);
        if (e < d)
            d = e;
    }
    if (c->prov && c->prov->ops->next_deadline) {
        int64_t p = c->prov->ops->next_deadline(c->prov);
        if (p < d)
            d = p;
    }
    return d;
}

static int fire_timers(struct ctrl *c)
{
    int n = 0;
    int64_t now = ctrl_now(c);
    struct timer *t;
    while ((t = RB_MIN(timer_tree, &c->timers)) && t->at_ms <= now) {
        RB_REMOVE(timer_tree, &c->timers, t);
        if (t->rid >= 0)
            ctrl_enqueue(c, t->rid, t->ns, t->name);
        xfree(t->ns);
        xfree(t->name);
        xfree(t);
        n++;
    }
    return n;
}

static void dispatch_event(struct ctrl *c, const struct store_event *ev)
{
    for (int i = 0; i < c->n_rec; i++)
        if (c->rec[i].ops->on_event)
            c->rec[i].ops->on_event(c, c->rec[i].self, ev);
}

/* Replay every stored object as ADDED: at start, and when the event log no
 * longer reaches back to our cursor (level-triggered reconcilers make this
 * safe). */
static int resync(struct ctrl *c)
{
    uint64_t rv = 0;
    int n = 0;
    for (int k = 0; k < KIND__COUNT; k++) {
        json_t *list = store_list(c->store, (enum api_kind_id)k, NULL, &rv);
        size_t i;
        json_t *obj;
        json_array_foreach(list, i, obj) {
            struct store_event ev = {STORE_ADDED, (enum api_kind_id)k, rv, obj};
            dispatch_event(c, &ev);
            n++;
        }
        json_decref(list);
    }
    c->cursor_rv = rv;
    c->need_resync = false;
    return n;
}

static int consume_events(struct ctrl *c)
{
    if (c->need_resync) {
        /* cursor first, so events racing with the listing are seen again */
        uint64_t before = store_rv(c->store);
        int n = resync(c);
        c->cursor_rv = before;
        return n + 1;
    }
    struct store_events evs = {0};
    int n = store_events_since(c->store, c->cursor_rv, -1, NULL, 0, &evs);
    if (n == CU_EGONE) {
        c->need_resync = true;
        store_events_release(&evs);
        return 1;
    }
    for (size_t i = 0; i < evs.n; i++) {
        dispatch_event(c, &evs.items[i]);
        c->cursor_rv = evs.items[i].rv;
    }
    store_events_release(&evs);
    return n > 0 ? n : 0;
}

static int drain_queues(struct ctrl *c)
{
    int n = 0;
    bool any = true;
    while (any && n < ROUND_BUDGET) {
        any = false;
        for (int i = 0; i < c->n_rec; i++) {
            struct reconciler *r = &c->rec[i];
            /* take the current batch; keys queued meanwhile wait their turn */
            while (r->list && n < ROUND_BUDGET) {
                struct wq_item *it = r->list;
                DL_DELETE(r->list, it);
                HASH_DEL(r->set, it);
                char *sep = strchr(it->key, '\x1f');
                *sep = '\0';
                const char *ns = it->key[0] ? it->key : NULL;
                if (r->ops->reconcile)
                    r->ops->reconcile(c, r->self, ns, sep + 1);
                xfree(it);
                n++;
                any = true;
            }
        }
    }
    return n;
}

static void run_calls(struct ctrl *c)
{
    pthread_mutex_lock(&c->call_mu);
    while (c->calls) {
        struct call_req *r = c->calls;
        c->calls = r->next;
        pthread_mutex_unlock(&c->call_mu);
        r->fn(c, r->arg);
        pthread_mutex_lock(&c->call_mu);
        r->done = 1;
        pthread_cond_broadcast(&c->call_cv);
    }
    pthread_mutex_unlock(&c->call_mu);
}

int ctrl_step(struct ctrl *c)
{
    /* no decision is built on changes that are not on disk: while the
     * store cannot save, a step only retries the save (the wait between
     * steps is CTRL_SAVE_RETRY_MS then, see ctrl_run) */
    if (store_flush(c->store) < 0)
        return 0;
    int total = 0;
    for (int round = 0; round < 1000; round++) {
        /* a round's writes wake the watch streams once, at its end */
        store_hold_wakeups(c->store, true);
        int n = consume_events(c);
        if (c->events_hook)
            c->events_hook(c->events_ctx);
        n += fire_timers(c);
        n += drain_queues(c);
        c->round_work = n;
        for (int i = 0; i < c->n_rec; i++)
            if (c->rec[i].ops->after_round && c->rec[i].ops->after_round(c, c->rec[i].self))
                n++;
        store_hold_wakeups(c->store, false);
        total += n;
        if (n == 0)
            break;
    }
    store_flush(c->store);
    return total;
}

int ctrl__round_work(struct ctrl *c) { return c->round_work; }

void ctrl_set_threaded(struct ctrl *c)
{
    c->in_loop_thread = true;
}

void ctrl_run(struct ctrl *c, atomic_int *stop)
{
    c->in_loop_thread = true;
    while (!atomic_load(stop)) {
        /* read the wakeup count before looking for work, so a ctrl_call or
         * executor notification arriving meanwhile is never lost */
        uint64_t seen = store_wakeup_seq(c->store);
        run_calls(c);
        ctrl_step(c);
        run_calls(c);
        int64_t now = ctrl_now(c);
        int64_t d = ctrl_next_deadline(c);
        int64_t wait = d == INT64_MAX ? 1000 : d - now;
        if (wait > 1000)
            wait = 1000;
        if (wait < 0)
            wait = 0;
        if (!store_writable(c->store, NULL, 0))
            wait = CTRL_SAVE_RETRY_MS; /* due timers wait for the save */
        pthread_mutex_lock(&c->call_mu);
        bool pending_calls = c->calls != NULL;
        pthread_mutex_unlock(&c->call_mu);
        if (!pending_calls && wait > 0)
            store_wait_seq(c->store, c->cursor_rv, seen, (int)wait);
    }
    run_calls(c);
    c->in_loop_thread = false;
}

void ctrl_call(struct ctrl *c, void (*fn)(struct ctrl *c, void *arg), void *arg)
{
    if (!c->in_loop_thread) {
        fn(c, arg);
        return;
    }
    struct call_req r = {fn, arg, 0, NULL};
    pthread_mutex_lock(&c->call_mu);
    struct call_req **pp = &c->calls;
    while (*pp)
        pp = &(*pp)->next;
    *pp = &r;
    pthread_mutex_unlock(&c->call_mu);
    store_wakeup(c->store);
    pthread_mutex_lock(&c->call_mu);
    while (!r.done)
        pthread_cond_wait(&c->call_cv, &c->call_mu);
    pthread_mutex_unlock(&c->call_mu);
}

struct store *ctrl_store(struct ctrl *c) { return c->store; }
int64_t ctrl_now(struct ctrl *c) { return clk_now(c->clock); }
struct rng *ctrl_rng(struct ctrl *c) { return c->rng; }
struct exec *ctrl_exec(struct ctrl *c) { return c->exec; }
struct prov *ctrl_prov(struct ctrl *c) { return c->prov; }
const struct ctrl_config *ctrl_cfg(struct ctrl *c) { return &c->cfg; }

struct event_agg **ctrl__events(struct ctrl *c) { return &c->events; }

struct ctrl_metrics *ctrl__metrics(struct ctrl *c) { return c->metrics; }

void ctrl_set_trace(struct ctrl *c, void (*fn)(void *ctx, json_t *rec), void *ctx)
{
    c->trace_fn = fn;
    c->trace_ctx = ctx;
}

bool ctrl_tracing(struct ctrl *c) { return c->trace_fn != NULL; }

void ctrl_set_trace_wants(struct ctrl *c, bool (*wants)(const char *event))
{
    c->trace_wants = wants;
}

bool ctrl_traces(struct ctrl *c, const char *event)
{
    return c->trace_fn && (!c->trace_wants || c->trace_wants(event));
}

void ctrl_set_trace_epoch(struct ctrl *c, int64_t epoch_ms) { c->trace_epoch_ms = epoch_ms; }

void ctrl_trace(struct ctrl *c, const char *event, json_t *fields)
{
    if (!ctrl_traces(c, event)) {
        json_decref(fields);
        return;
    }
    json_t *rec = json_object();
    double t = (double)(ctrl_now(c) - c->trace_epoch_ms) / 1000.0;
    json_object_set_new(rec, "time", json_real(t));
    json_object_set_new(rec, "event", json_string(event));
    if (fields)
        json_object_update(rec, fields);
    json_decref(fields);
    c->trace_fn(c->trace_ctx, rec);
}
