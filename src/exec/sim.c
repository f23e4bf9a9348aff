/*
 * exec/sim: the simulated executor for `cueue sim` (see exec_sim_new in
 * exec.h). Pods do not run anything: start() schedules two reports, RUNNING
 * now and the final state after the pod's runtime, and poll() hands out the
 * reports whose time the virtual clock has reached.
 *
 * Invariants: pending reports live in one red-black tree ordered by
 * (at_ms, seq), seq being a counter, so reports due at the same instant come
 * out in the order they were scheduled (deterministic). A pod has at most
 * one pending final report, indexed by uid in `finals`; stop() replaces it.
 */
#include "exec/exec.h"

#ifndef __unused
#define __unused __attribute__((unused)) /* used by libbsd tree.h */
#endif
#include <bsd/sys/tree.h>
#include <stdio.h>
#include <string.h>
#include <uthash.h>

#include "util/err.h"
#include "util/xalloc.h"

struct sim_report {
    int64_t at_ms;
    uint64_t seq;
    char *uid;
    enum exec_state state;
    int exit_code;
    bool is_final;
    RB_ENTRY(sim_report) link;
    UT_hash_handle hh; /* in finals, when is_final */
};

static int report_cmp(struct sim_report *a, struct sim_report *b)
{
    if (a->at_ms != b->at_ms)
        return a->at_ms < b->at_ms ? -1 : 1;
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

RB_HEAD(report_tree, sim_report);
RB_GENERATE_STATIC(report_tree, sim_report, link, report_cmp)

struct exec_sim {
    struct exec base; /* first: struct exec * casts to struct exec_sim * */
    struct exec_sim_opts opts;
    struct report_tree pending;
    struct sim_report *finals; /* uthash by uid */
    uint64_t seq;
};

static struct exec_sim *to_sim(struct exec *x) { return (struct exec_sim *)x; }

static int64_t now_ms(struct exec_sim *s) { return clk_now(s->opts.clock); }

static struct sim_report *schedule(struct exec_sim *s, const char *uid, int64_t at_ms,
                                   enum exec_state state, int exit_code, bool is_final)
{
    struct sim_report *r = xcalloc(1, sizeof(*r));
    r->at_ms = at_ms;
    r->seq = ++s->seq;
    r->uid = xstrdup(uid);
    r->state = state;
    r->exit_code = exit_code;
    r->is_final = is_final;
    RB_INSERT(report_tree, &s->pending, r);
    if (is_final)
        HASH_ADD_KEYPTR(hh, s->finals, r->uid, strlen(r->uid), r);
    return r;
}

static void drop(struct exec_sim *s, struct sim_report *r)
{
    RB_REMOVE(report_tree, &s->pending, r);
    if (r->is_final)
        HASH_DEL(s->finals, r);
    xfree(r->uid);
    xfree(r);
}

static struct sim_report *find_final(struct exec_sim *s, const char *uid)
{
    struct sim_report *r = NULL;
    HASH_FIND_STR(s->finals, uid, r);
    return r;
}

static int sim_start(struct exec *x, const struct exec_pod *pod, char *err, size_t errlen)
{
    struct exec_sim *s = to_sim(x);
    if (!pod || !pod->uid || !pod->uid[0]) {
        snprintf(err, errlen, "pod without a uid");
        return CU_EINVAL;
    }
    struct exec_sim_outcome out = {s->opts.default_runtime_ms, 0};
    if (s->opts.outcome)
        s->opts.outcome(s->opts.ctx, pod->pod, &out);
    if (out.runtime_ms < 0)
        out.runtime_ms = 0;
    /* a restart of the same uid forgets the previous run */
    struct sim_report *old = find_final(s, pod->uid);
    if (old)
        drop(s, old);
    int64_t now = now_ms(s);
    schedule(s, pod->uid, now, EXEC_RUNNING, 0, false);
    int64_t end = out.runtime_ms > INT64_MAX - now ? INT64_MAX : now + out.runtime_ms;
    schedule(s, pod->uid, end, out.exit_code ? EXEC_FAILED : EXEC_SUCCEEDED, out.exit_code,
             true);
    return 0;
}

static int sim_stop(struct exec *x, const char *uid, int64_t grace_ms)
{
    struct exec_sim *s = to_sim(x);
    struct sim_report *r = uid ? find_final(s, uid) : NULL;
    if (!r)
        return 0; /* unknown or already finished */
    int64_t now = now_ms(s);
    int64_t at = now;
    int code = 137;
    if (s->opts.honor_grace && grace_ms > 0) {
        at = grace_ms > INT64_MAX - now ? INT64_MAX : now + grace_ms;
        code = 143;
    }
    if (r->at_ms <= at)
        return 0; /* it finishes on its own first */
    char *keep = xstrdup(uid);
    drop(s, r);
    schedule(s, keep, at, EXEC_FAILED, code, true);
    xfree(keep);
    return 0;
}

static void fill_report(const struct sim_report *r, struct exec_report *o)
{
    memset(o, 0, sizeof(*o));
    o->uid = xstrdup(r->uid);
    o->state = r->state;
    o->exit_code = r->exit_code;
    o->at_ms = r->at_ms;
    switch (r->state) {
    case EXEC_RUNNING:
        o->reason = xstrdup("Started");
        o->message = xstrdup("started by the simulator");
        break;
    case EXEC_SUCCEEDED:
        o->reason = xstrdup("Completed");
        o->message = xstrdup("finished after its simulated runtime");
        break;
    case EXEC_FAILED:
        if (r->exit_code == 137 || r->exit_code == 143) {
            o->reason = xstrdup("Error");
            o->message = xasprintf("terminated by the simulator (exit code %d)", r->exit_code);
        } else {
            o->reason = xstrdup("Error");
            o->message = xasprintf("exited with code %d after its simulated runtime",
                                   r->exit_code);
        }
        break;
    }
}

static int sim_poll(struct exec *x, struct exec_reports *out)
{
    struct exec_sim *s = to_sim(x);
    int64_t now = now_ms(s);
    int n = 0;
    struct sim_report *r;
    while ((r = RB_MIN(report_tree, &s->pending)) && r->at_ms <= now) {
        XGROW(out->items, out->cap, out->n + 1);
        fill_report(r, &out->items[out->n++]);
        drop(s, r);
        n++;
    }
    return n;
}

static int64_t sim_next_deadline(struct exec *x)
{
    struct sim_report *r = RB_MIN(report_tree, &to_sim(x)->pending);
    return r ? r->at_ms : INT64_MAX;
}

static char *sim_log_path(struct exec *x, const char *uid, const char *container)
{
    (void)x;
    (void)uid;
    (void)container;
    return NULL; /* simulated pods write no logs */
}

static void sim_free(struct exec *x)
{
    if (!x)
        return;
    struct exec_sim *s = to_sim(x);
    struct sim_report *r, *nr;
    RB_FOREACH_SAFE(r, report_tree, &s->pending, nr)
        drop(s, r);
    xfree(s);
}

static const struct exec_ops sim_ops = {
    .start = sim_start,
    .stop = sim_stop,
    .poll = sim_poll,
    .next_deadline = sim_next_deadline,
    .log_path = sim_log_path,
    .free = sim_free,
};

struct exec *exec_sim_new(const struct exec_sim_opts *opts)
{
    struct exec_sim *s = xcalloc(1, sizeof(*s));
    s->base.ops = &sim_ops;
    s->opts = *opts;
    RB_INIT(&s->pending);
    return &s->base;
}
