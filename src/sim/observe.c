/*
 * observe: the simulator's recorder. In every round of a control-plane
 * step (sim_obs_catch_up) and after the step it reads the store's event
 * log from its own cursor and compares each new version of a Workload,
 * ProvisioningRequest, Node or ClusterQueue with the previous one it saw.
 * Every transition the trace contract names becomes a trace record, at the
 * virtual time of the step that made it, in the order the writes happened
 * (records made during the step are written out after it, after the
 * reconcilers' own records of that step), and the same transitions feed
 * the summary (waits, usage). Deriving the trace from object state keeps it complete whichever
 * reconciler made the change, and makes reason/message exactly what was
 * written on the objects.
 *
 * It also plays the job integration for bare Workloads (no controller
 * owner), as Kueue's performance runner does: an admitted one finishes
 * (Finished=True, reason Succeeded) after its runtime, and an evicted one
 * gets its quota reservation released and its Requeued condition set.
 *
 * Invariants: a wl_state lives from its Workload's creation to the end of
 * the run (deleted ones leave the `live` index but stay in `all` for the
 * summary); usage contributed by a Workload is exactly what it currently
 * adds to sim_usage, removed before any change is re-added.
 */
#include <assert.h>
#include <string.h>
/* This file's indexes (live, by_uid) are asked mostly for Workloads they
 * do not hold yet (every creation looks its uid and its name up first), a
 * walk of a whole chain of cold entries each time without uthash's Bloom
 * filter. Only this file creates, changes or frees those tables (the
 * filter's fields come after the others in UT_hash_table). */
#define HASH_BLOOM 20 /* 2^20 bits = 128 KiB per table */
/* and they hash with cueue's word-at-a-time hash (util/hash.h), not
 * uthash's byte-wise default: only buckets follow the hash, never the
 * iteration (insertion) order */
#include "util/hash.h"
#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = cu_hash_bytes((keyptr), (size_t)(keylen)))
#include <uthash.h>

#ifndef __unused
#define __unused __attribute__((unused)) /* used by libbsd tree.h */
#endif
#include <bsd/sys/tree.h>

#include "api/meta.h"
#include "api/quantity.h"
#include "sim/observe-int.h"
#include "store/store.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

RB_GENERATE(sim_finish_tree, sim_finish, link, sim_finish_cmp)

int sim_finish_cmp(struct sim_finish *a, struct sim_finish *b)
{
    if (a->at_ms != b->at_ms)
        return a->at_ms < b->at_ms ? -1 : 1;
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

struct sim_observer *sim_observer_new(struct sim *s)
{
    struct sim_observer *o = xcalloc(1, sizeof(*o));
    RB_INIT(&o->finishes);
    o->usage = sim_usage_new();
    o->last_finish_ms = -1;
    o->uid_cache_log2 = SIM_UID_CACHE_LOG2;
    o->uid_cache = xcalloc((size_t)1 << o->uid_cache_log2, sizeof(*o->uid_cache));
    (void)s;
    return o;
}

static void wl_free(struct wl_state *w)
{
    xfree(w->key);
    xfree(w->ns);
    xfree(w->name);
    xfree(w->uid);
    json_decref(w->uid_json);
    xfree(w->class_name);
    xfree(w->cq);
    xfree(w->requeued);
    xfree(w->pending);
    json_decref(w->checks);
    json_decref(w->contrib_from);
    json_decref(w->seen_spec);
    json_decref(w->seen_status);
    xfree(w->contrib);
    xfree(w->conds);
    xfree(w);
}

void sim_observer_free(struct sim_observer *o)
{
    if (!o)
        return;
    HASH_CLEAR(hh, o->live);
    HASH_CLEAR(hh_uid, o->by_uid);
    for (size_t i = 0; i < o->n_all; i++)
        wl_free(o->all[i]);
    xfree(o->all);
    struct sim_finish *f, *nf;
    RB_FOREACH_SAFE(f, sim_finish_tree, &o->finishes, nf) {
        RB_REMOVE(sim_finish_tree, &o->finishes, f);
        xfree(f);
    }
    sim_obs_objects_free(o);
    sim_obs_pods_free(o);
    for (size_t i = 0; i < o->n_deferred; i++)
        json_decref(o->deferred[i].fields);
    xfree(o->deferred);
    for (size_t i = 0; i < SIM_FINISH_MSGS; i++)
        xfree(o->finish_msg[i]);
    xfree(o->release);
    xfree(o->uid_cache);
    sim_usage_free(o->usage);
    xfree(o);
}

/* ---- emission ---- */

void sim_obs_record(struct sim *s, const char *event, json_t *fields)
{
    struct sim_observer *o = s->obs;
    if (!o->deferring) {
        sim_trace_emit(s, event, fields);
        return;
    }
    XGROW(o->deferred, o->cap_deferred, o->n_deferred + 1);
    o->deferred[o->n_deferred++] = (struct sim_deferred){event, fields};
}

void sim_obs_emit(struct sim *s, const char *event, json_t *fields)
{
    sim_obs_flush_nodes(s);
    sim_obs_record(s, event, fields);
}

/* The records sim_obs_catch_up kept, in order. */
static void emit_deferred(struct sim *s)
{
    struct sim_observer *o = s->obs;
    for (size_t i = 0; i < o->n_deferred; i++)
        sim_trace_emit(s, o->deferred[i].event, o->deferred[i].fields);
    o->n_deferred = 0;
}

/* f (NULL: fields not wanted, see wl_fields) with the condition's reason
 * and message. */
static json_t *cond_fields(json_t *f, const json_t *cond)
{
    if (!f)
        return NULL;
    json_object_set_new(f, "reason", json_string(jx_or_empty(JX_STR(cond, "reason"))));
    json_object_set_new(f, "message", json_string(jx_or_empty(JX_STR(cond, "message"))));
    return f;
}

static const char *wl_cq(struct sim *s, struct wl_state *w, const json_t *obj)
{
    if (w->cq_read == obj)
        return w->cq; /* read already in this diff */
    w->cq_read = obj;
    const char *cq = w->cur_adm_cq;
    if (cq && (!w->cq || strcmp(w->cq, cq))) {
        xfree(w->cq);
        w->cq = xstrdup(cq);
    }
    if (!w->cq) {
        const char *lq = w->queue_name;
        json_t *q = lq ? store_get(s->store, KIND_LOCALQUEUE, w->ns, lq) : NULL;
        const char *name = JX_STR(q, "spec", "clusterQueue");
        if (name)
            w->cq = xstrdup(name);
        json_decref(q);
    }
    return w->cq;
}

/* A Workload record's leading fields, or NULL when no record's fields are
 * printed or kept (sim_trace_wants_fields): then the record is only counted,
 * and every caller adds its fields only to a non-NULL f. The ClusterQueue
 * is remembered either way (the summary reads w->cq). */
static json_t *wl_fields(struct sim *s, struct wl_state *w, const json_t *obj)
{
    const char *cq = wl_cq(s, w, obj);
    if (!sim_trace_wants_fields(s))
        return NULL;
    json_t *f = json_object();
    json_object_set_new(f, "workload", json_string(w->key));
    if (cq)
        json_object_set_new(f, "clusterQueue", json_string(cq));
    return f;
}

static json_t *podsets_json(const json_t *obj)
{
    json_t *out = json_array();
    size_t i;
    json_t *ps;
    const json_t *psas = JX_GET(obj, "status", "admission", "podSetAssignments");
    json_array_foreach(psas, i, ps) { /* (the macro reads psas at every step) */
        json_t *e = json_object();
        json_object_set_new(e, "name", json_string(jx_or_empty(JX_STR(ps, "name"))));
        json_t *count = json_object_get(ps, "count");
        if (json_is_integer(count))
            json_object_set_new(e, "count", json_incref(count));
        json_t *fl = json_object_get(ps, "flavors");
        json_object_set_new(e, "flavors", json_is_object(fl) ? jx_deep_copy(fl) : json_object());
        json_t *ta = json_object_get(ps, "topologyAssignment"); /* Kueue TAS */
        if (json_is_object(ta))
            json_object_set_new(e, "topologyAssignment", jx_deep_copy(ta));
        json_array_append_new(out, e);
    }
    return out;
}

/* "(UID: <uid>," in a Preempted message -> the preemptor's ns/name. */
static const char *preemptor_of(struct sim_observer *o, const char *msg)
{
    const char *p = msg ? strstr(msg, "(UID: ") : NULL;
    if (!p)
        return NULL;
    p += 6;
    size_t n = strcspn(p, ",)");
    char *uid = xstrndup(p, n);
    struct wl_state *w;
    HASH_FIND(hh_uid, o->by_uid, uid, strlen(uid), w);
    xfree(uid);
    return w ? w->key : NULL;
}

static char *two(const char *a, const char *b)
{
    return xjoin(a, '\x1f', b); /* NULL reads as "" */
}

/* True when *slot already holds two(a, b) (compared without building it). */
static bool same_two(const char *slot, const char *a, const char *b)
{
    if (!slot)
        return false;
    a = jx_or_empty(a);
    b = jx_or_empty(b);
    size_t na = strlen(a);
    return !strncmp(slot, a, na) && slot[na] == '\x1f' && !strcmp(slot + na + 1, b);
}

/* Store two(a, b) in *slot; false when it already held that. */
static bool set_two_if_changed(char **slot, const char *a, const char *b)
{
    if (same_two(*slot, a, b))
        return false;
    xfree(*slot);
    *slot = two(a, b);
    return true;
}

/* ---- Workload transitions, in the order the trace lists them ---- */

/* The condition types a Workload's transitions come from. */
enum wl_cond_type { WC_PREEMPTED, WC_EVICTED, WC_REQUEUED, WC_QUOTA_RESERVED, WC_ADMITTED,
                    WC_FINISHED, WC_N };

/* The first condition of each type (as api_cond_get finds it), whether its
 * status is "True", and whether it is the very condition the previous diff
 * read for that type (then it has not changed since). */
struct wl_conds {
    const json_t *c[WC_N];
    bool is_true[WC_N];
    bool unchanged[WC_N];
};


/* Which of the transition types t is (-1 another): one comparison, chosen
 * by the first letter (each type's is distinct). */
static int8_t cond_kind(const char *t)
{
    static const char *const types[WC_N] = {"Preempted", "Evicted", "Requeued",
                                            "QuotaReserved", "Admitted", "Finished"};
    int8_t k;
    switch (t[0]) {
    case 'P': k = WC_PREEMPTED; break;
    case 'E': k = WC_EVICTED; break;
    case 'R': k = WC_REQUEUED; break;
    case 'Q': k = WC_QUOTA_RESERVED; break;
    case 'A': k = WC_ADMITTED; break;
    case 'F': k = WC_FINISHED; break;
    default: return -1;
    }
    return strcmp(t, types[k]) ? -1 : k;
}

/* Which of the transition types cond is (-1 another), and into *is_true
 * whether its status is "True" when it is one of them (api_cond_type,
 * api_cond_holds). Conditions are written with type then status first:
 * those are read from the first two members, other orders by name. */
static int8_t cond_read(const json_t *cond, bool *is_true)
{
    /* type then status, as api_cond_set writes them: one walk of two
     * members; anything else is read as api_cond_type/api_cond_holds do */
    void *it = json_object_iter((json_t *)cond);
    const char *t = NULL;
    if (it && json_object_iter_key_len(it) == 4 && !memcmp(json_object_iter_key(it), "type", 4)) {
        t = json_string_value(json_object_iter_value(it));
        it = json_object_iter_next((json_t *)cond, it);
    } else {
        t = api_cond_type(cond);
        it = NULL;
    }
    int8_t k = t ? cond_kind(t) : -1;
    if (k < 0)
        return -1;
    if (it && json_object_iter_key_len(it) == 6 &&
        !memcmp(json_object_iter_key(it), "status", 6)) {
        const char *st = json_string_value(json_object_iter_value(it));
        *is_true = st && !strcmp(st, "True");
    } else {
        *is_true = api_cond_holds(cond);
    }
    return k;
}

/* The memo entry of w's previous conditions for cond, or NULL. */
static const struct wl_cond_memo *cond_memo_find(const struct wl_state *w, size_t i,
                                                 const json_t *cond)
{
    if (i < w->n_conds && w->conds[i].cond == cond)
        return &w->conds[i]; /* the usual case: same place */
    for (size_t j = 0; j < w->n_conds; j++)
        if (w->conds[j].cond == cond)
            return &w->conds[j];
    return NULL;
}

/* Find the conditions of obj in one pass and make them w's memo. A
 * condition the previous diff saw (same pointer, so same content: stored
 * documents are never changed in place) is not read again: its type and
 * status come from the memo. Debug builds (make test's ASan build) read it
 * again and compare. */
static void collect_conds(struct wl_state *w, struct wl_conds *wc)
{
    memset(wc, 0, sizeof(*wc));
    const json_t *arr = w->cur_conds;
    size_t n = json_array_size(arr);
    struct wl_cond_memo small[8];
    struct wl_cond_memo *next = n <= 8 ? small : xcalloc(n, sizeof(*next));
    for (size_t i = 0; i < n; i++) {
        const json_t *c = json_array_get(arr, i);
        const struct wl_cond_memo *m = cond_memo_find(w, i, c);
        struct wl_cond_memo e = {c, -1, false, false};
        if (m) {
            e.type = m->type;
            e.is_true = m->is_true;
#ifndef NDEBUG
            bool now_true = false; /* the memo's check (debug builds): read again */
            assert(cond_read(c, &now_true) == m->type && now_true == m->is_true &&
                   "stale condition memo");
#endif
        } else {
            e.type = cond_read(c, &e.is_true);
        }
        if (e.type >= 0 && !wc->c[e.type]) {
            e.first = true;
            wc->c[e.type] = c;
            wc->is_true[e.type] = e.is_true;
            wc->unchanged[e.type] = m && m->first;
        }
        next[i] = e;
    }
    XGROW(w->conds, w->cap_conds, n);
    if (n)
        memcpy(w->conds, next, n * sizeof(*next));
    w->n_conds = n;
    if (next != small)
        xfree(next);
}

static void emit_eviction(struct sim *s, struct wl_state *w, const json_t *obj,
                          const struct wl_conds *wc)
{
    const json_t *pc = wc->c[WC_PREEMPTED];
    bool preempted = wc->is_true[WC_PREEMPTED];
    if (preempted && !w->preempted) {
        json_t *f = cond_fields(wl_fields(s, w, obj), pc);
        const char *by = f ? preemptor_of(s->obs, JX_STR(pc, "message")) : NULL;
        if (by)
            json_object_set_new(f, "preemptor", json_string(by));
        sim_obs_emit(s, "Preempted", f);
    }
    w->preempted = preempted;
    const json_t *ec = wc->c[WC_EVICTED];
    bool evicted = wc->is_true[WC_EVICTED];
    if (evicted && !w->evicted) {
        w->evictions++;
        sim_obs_emit(s, "Evicted", cond_fields(wl_fields(s, w, obj), ec));
    }
    w->evicted = evicted;
}

/* A Requeued record for each change of the condition's status or reason,
 * and for each release of the quota reservation while it is present (a
 * second preemption leaves both unchanged but is another requeue). */
static void emit_requeue_and_pending(struct sim *s, struct wl_state *w, const json_t *obj,
                                     const struct wl_conds *wc, bool reserved)
{
    const json_t *rq = wc->c[WC_REQUEUED];
    bool released = w->reserved && !reserved;
    /* an unchanged condition left w->requeued as the previous diff set it */
    bool changed = rq && !wc->unchanged[WC_REQUEUED] &&
                   set_two_if_changed(&w->requeued, JX_STR(rq, "status"), JX_STR(rq, "reason"));
    if (rq && (changed || released)) {
        json_t *f = wl_fields(s, w, obj);
        if (f)
            json_object_set_new(f, "status", json_string(jx_or_empty(JX_STR(rq, "status"))));
        sim_obs_emit(s, "Requeued", cond_fields(f, rq));
    }
    /* an unchanged QuotaReserved: the previous diff set w->pending from it */
    const json_t *qr = wc->c[WC_QUOTA_RESERVED];
    if (reserved) {
        XFREE(w->pending);
    } else if (qr && !wc->unchanged[WC_QUOTA_RESERVED] &&
               !strcmp(jx_or_empty(JX_STR(qr, "status")), "False") &&
               set_two_if_changed(&w->pending, JX_STR(qr, "reason"), JX_STR(qr, "message"))) {
        sim_obs_emit(s, "Pending", cond_fields(wl_fields(s, w, obj), qr));
    }
}

static void emit_checks(struct sim *s, struct wl_state *w, const json_t *obj)
{
    const json_t *acs = w->cur_checks;
    if (!json_array_size(acs) && !json_object_size(w->checks))
        return; /* none before, none now */
    json_t *seen = json_object();
    size_t i;
    json_t *ac;
    json_array_foreach(acs, i, ac) {
        const char *name = jx_or_empty(JX_STR(ac, "name"));
        const char *state = jx_or_empty(JX_STR(ac, "state"));
        json_object_set_new(seen, name, json_string(state));
        const char *prev = json_string_value(json_object_get(w->checks, name));
        if (prev && !strcmp(prev, state))
            continue;
        json_t *f = wl_fields(s, w, obj);
        if (f) {
            json_object_set_new(f, "check", json_string(name));
            json_object_set_new(f, "state", json_string(state));
            json_object_set_new(f, "message", json_string(jx_or_empty(JX_STR(ac, "message"))));
        }
        sim_obs_emit(s, "AdmissionCheckUpdated", f);
    }
    json_decref(w->checks);
    w->checks = seen;
}

/* spec: obj's spec; spec_same: it is the one the previous diff read (then
 * spec.active is what it was). */
static void diff_workload(struct sim *s, struct wl_state *w, const json_t *obj,
                          const json_t *spec, bool spec_same)
{
    int64_t now = clk_now(&s->clock.clk);
    bool active = spec_same ? w->active : JX_BOOL(spec, true, "active");
    if (!active && w->active)
        sim_obs_emit(s, "Deactivated", wl_fields(s, w, obj));
    w->active = active;
    struct wl_conds wc;
    collect_conds(w, &wc);
    emit_eviction(s, w, obj, &wc);
    bool reserved = wc.is_true[WC_QUOTA_RESERVED];
    emit_requeue_and_pending(s, w, obj, &wc, reserved);
    if (reserved && !w->reserved) {
        json_t *f = wl_fields(s, w, obj);
        if (f)
            json_object_set_new(f, "podSets", podsets_json(obj));
        sim_obs_emit(s, "QuotaReserved", cond_fields(f, wc.c[WC_QUOTA_RESERVED]));
    }
    w->reserved = reserved;
    emit_checks(s, w, obj);
    bool admitted = wc.is_true[WC_ADMITTED];
    if (admitted && !w->admitted) {
        if (w->admitted_ms < 0)
            w->admitted_ms = now;
        sim_obs_emit(s, "Admitted", cond_fields(wl_fields(s, w, obj), wc.c[WC_ADMITTED]));
    }
    w->admitted = admitted;
    bool finished = wc.is_true[WC_FINISHED];
    if (finished && !w->finished) {
        w->finished_ms = now;
        if (now > s->obs->last_finish_ms)
            s->obs->last_finish_ms = now;
        sim_obs_emit(s, "Finished", cond_fields(wl_fields(s, w, obj), wc.c[WC_FINISHED]));
    }
    w->finished = finished;
    w->cq_read = NULL; /* obj may be gone before the next diff */
}

/* ---- usage held by admitted workloads ---- */

static void drop_usage(struct sim *s, struct wl_state *w, int64_t now)
{
    for (size_t i = 0; i < w->n_contrib; i++)
        sim_usage_cell_add(w->contrib[i].cell, -w->contrib[i].amount, now);
    w->n_contrib = 0;
}

static void add_contrib(struct sim *s, struct wl_state *w, const char *cq, const char *flavor,
                        const char *res, int64_t amount, int64_t now)
{
    if (!amount)
        return; /* adds nothing, creates no figure (as sim_usage_add) */
    XGROW(w->contrib, w->cap_contrib, w->n_contrib + 1);
    struct sim_contrib *c = &w->contrib[w->n_contrib++];
    c->cell = sim_usage_cell(s->obs->usage, cq, flavor, res, now);
    c->amount = amount;
    sim_usage_cell_add(c->cell, amount, now);
}

/* Kueue's flavorsUsage: what admitted, unfinished workloads hold. A
 * Workload that keeps contributing from an equal status.admission is left
 * as it is: removing and adding the same amounts at one instant changes no
 * figure. Reads w->cur_adm: called during a diff. */
static void update_usage(struct sim *s, struct wl_state *w)
{
    int64_t now = clk_now(&s->clock.clk);
    json_t *adm = w->cur_adm;
    const char *cq = w->cur_adm_cq;
    bool on = cq && w->admitted && !w->finished;
    if (on && w->contrib_from && json_equal(adm, w->contrib_from))
        return;
    drop_usage(s, w, now);
    json_decref(w->contrib_from);
    w->contrib_from = on ? json_incref(adm) : NULL;
    if (!on)
        return;
    size_t i;
    json_t *ps;
    /* (the foreach macros evaluate their container once per step) */
    const json_t *psas = w->cur_psas;
    json_array_foreach(psas, i, ps) {
        static const struct sim_key ps_keys[] = {SIM_KEY("flavors"), SIM_KEY("resourceUsage")};
        json_t *m[2];
        sim_members(ps, ps_keys, 2, m);
        json_t *flavors = m[0], *usage = m[1];
        const char *res;
        json_t *q;
        json_object_foreach(usage, res, q) {
            const char *flavor = json_string_value(json_object_get(flavors, res));
            int64_t v = 0;
            struct diag d;
            diag_init(&d);
            if (flavor && !api_quantity_from_json(q, res, "resourceUsage", &v, &d))
                add_contrib(s, w, cq, flavor, res, v, now);
            diag_release(&d);
        }
    }
}

/* ---- bare Workloads: the simulator plays their job integration ---- */

static void cancel_finish(struct sim_observer *o, struct wl_state *w)
{
    if (w->finish) {
        RB_REMOVE(sim_finish_tree, &o->finishes, w->finish);
        xfree(w->finish);
        w->finish = NULL;
    }
}

static void play_bare(struct sim *s, struct wl_state *w, const json_t *obj)
{
    struct sim_observer *o = s->obs;
    if (!w->admitted || w->finished) {
        cancel_finish(o, w);
    } else if (!w->finish) {
        int64_t rt = sim_object_runtime(s, obj);
        if (rt < 0)
            rt = s->sc->default_runtime_ms;
        struct sim_finish *f = xcalloc(1, sizeof(*f));
        f->at_ms = clk_now(&s->clock.clk) + rt;
        f->seq = ++o->seq;
        f->w = w;
        w->run_ms = rt;
        w->finish = f;
        RB_INSERT(sim_finish_tree, &o->finishes, f);
    }
    if (w->evicted && w->reserved && !w->finished && !w->needs_release) {
        w->needs_release = true;
        XGROW(o->release, o->cap_release, o->n_release + 1);
        o->release[o->n_release++] = w;
    }
}

/* ---- finding a Workload's state from its uid ---- */

/* The set of SIM_UID_WAYS slots uid maps to (one cache line). */
static struct uid_slot *uid_set(struct sim_observer *o, const json_t *uid)
{
    uint64_t h = (uint64_t)(uintptr_t)uid * 0x9E3779B97F4A7C15ULL;
    unsigned set_log2 = o->uid_cache_log2 - SIM_UID_WAYS_LOG2;
    return &o->uid_cache[(h >> (64 - set_log2)) << SIM_UID_WAYS_LOG2];
}

/* Remember (uid, w) first in uid's set; the set's last entry goes. */
static void uid_cache_put(struct sim_observer *o, json_t *uid, struct wl_state *w)
{
    struct uid_slot *set = uid_set(o, uid);
    memmove(set + 1, set, (SIM_UID_WAYS - 1) * sizeof(*set));
    set[0] = (struct uid_slot){uid, w};
}

/* Forget w's slot, if its set still holds it. */
static void uid_cache_drop(struct sim_observer *o, struct wl_state *w)
{
    if (!w->uid_json)
        return;
    struct uid_slot *set = uid_set(o, w->uid_json);
    for (size_t i = 0; i < SIM_UID_WAYS; i++)
        if (set[i].w == w)
            set[i] = (struct uid_slot){NULL, NULL};
}

/* The live Workload whose uid is uidj's text ("" when uidj is not a
 * string), or NULL. A found one takes uidj as its uid_json and a slot of
 * uidj's set. */
static struct wl_state *wl_by_uid(struct sim_observer *o, json_t *uidj)
{
    if (uidj) {
        const struct uid_slot *set = uid_set(o, uidj);
        for (size_t i = 0; i < SIM_UID_WAYS; i++)
            if (set[i].uid == uidj)
                return set[i].w; /* the usual case: uidj itself is not even
                                    read (a slot only ever holds a string) */
    }
    if (!json_is_string(uidj))
        uidj = NULL;
    const char *uid = jx_or_empty(json_string_value(uidj));
    struct wl_state *w;
    HASH_FIND(hh_uid, o->by_uid, uid, strlen(uid), w);
    if (!w || !uidj)
        return w;
    if (w->uid_json != uidj) {
        uid_cache_drop(o, w);
        json_decref(w->uid_json);
        w->uid_json = json_incref(uidj);
    }
    uid_cache_put(o, uidj, w);
    return w;
}

/* One more live Workload: once they outnumber the memo's sets, a table
 * twice as large, which takes the old one's entries. */
static void uid_cache_count(struct sim_observer *o)
{
    o->n_live++;
    size_t n = (size_t)1 << o->uid_cache_log2;
    if (o->n_live <= n / SIM_UID_WAYS || o->uid_cache_log2 >= SIM_UID_CACHE_MAX_LOG2)
        return;
    struct uid_slot *old = o->uid_cache;
    o->uid_cache_log2++;
    o->uid_cache = xcalloc(n * 2, sizeof(*o->uid_cache));
    /* each set's oldest first, so that the most recent come first again */
    for (size_t i = n; i-- > 0;)
        if (old[i].uid)
            uid_cache_put(o, (json_t *)old[i].uid, old[i].w);
    xfree(old);
}

/* ---- a Workload's state ---- */

/* The state of a new Workload obj: key ns/name, ns, name and uid (not
 * NULL) read from its metadata. */
static struct wl_state *wl_new(struct sim *s, const json_t *obj, const char *key,
                               const char *ns, const char *name, const char *uid)
{
    struct sim_observer *o = s->obs;
    struct wl_state *w = xcalloc(1, sizeof(*w));
    w->key = xstrdup(key);
    w->ns = xstrdup(ns);
    w->name = xstrdup(name);
    w->uid = xstrdup(uid);
    w->created_ms = clk_now(&s->clock.clk);
    w->admitted_ms = w->finished_ms = -1;
    w->active = true;
    w->bare = api_controller_uid(obj) == NULL;
    w->class_name = sim_obs_class_of(s, obj);
    HASH_ADD_KEYPTR(hh, o->live, w->key, strlen(w->key), w);
    HASH_ADD_KEYPTR(hh_uid, o->by_uid, w->uid, strlen(w->uid), w);
    uid_cache_count(o);
    XGROW(o->all, o->cap_all, o->n_all + 1);
    o->all[o->n_all++] = w;
    return w;
}

/* Keep n_progressing in step with w: live, not finished, not deactivated
 * (a deactivated Workload waits for someone to reactivate it). */
static void recount(struct sim_observer *o, struct wl_state *w)
{
    bool now = !w->deleted && !w->finished && w->active;
    if (now != w->progressing)
        o->n_progressing += now ? 1 : (size_t)-1;
    w->progressing = now;
}

static void wl_forget(struct sim *s, struct wl_state *w)
{
    int64_t now = clk_now(&s->clock.clk);
    drop_usage(s, w, now);
    json_decref(w->contrib_from);
    w->contrib_from = NULL;
    cancel_finish(s->obs, w);
    HASH_DELETE(hh, s->obs->live, w);
    HASH_DELETE(hh_uid, s->obs->by_uid, w);
    s->obs->n_live--;
    uid_cache_drop(s->obs, w);
    json_decref(w->uid_json);
    w->uid_json = NULL;
    json_decref(w->seen_spec);
    json_decref(w->seen_status);
    w->seen_spec = w->seen_status = NULL;
    w->queue_name = NULL; /* it went with seen_spec */
    w->n_conds = 0; /* its pointers went with seen_status */
    w->deleted = true;
    recount(s->obs, w);
}

void sim_obs_workload(struct sim *s, const struct store_event *ev)
{
    const json_t *obj = ev->obj;
    static const struct sim_key top_keys[] = {SIM_KEY("metadata"), SIM_KEY("spec"),
                                              SIM_KEY("status")};
    json_t *top[3];
    sim_members(obj, top_keys, 3, top);
    const json_t *md = top[0]; /* read once for uid, ns, name */
    json_t *uidj = json_object_get(md, "uid");
    /* the live Workload with this uid has this name (names are immutable);
     * only a uid not seen live needs the name index */
    struct wl_state *w = wl_by_uid(s->obs, uidj);
    char *key = NULL;
    const char *ns = NULL, *name = NULL, *uid = NULL;
    if (!w) {
        uid = jx_or_empty(json_string_value(uidj));
        static const struct sim_key id_keys[] = {SIM_KEY("namespace"), SIM_KEY("name")};
        json_t *id[2];
        sim_members(md, id_keys, 2, id);
        ns = json_string_value(id[0]);
        name = json_string_value(id[1]);
        key = xjoin(ns, '/', name);
        HASH_FIND(hh, s->obs->live, key, strlen(key), w);
        if (w) {
            wl_forget(s, w); /* a new object under an old name */
            w = NULL;
        }
    }
    if (ev->type == STORE_DELETED) {
        if (w)
            wl_forget(s, w);
        xfree(key);
        return;
    }
    if (!w) {
        w = wl_new(s, obj, key, ns, name, uid);
        if (json_is_string(uidj)) {
            w->uid_json = json_incref(uidj);
            uid_cache_put(s->obs, uidj, w);
        }
        xfree(key);
    }
    /* diff_workload and update_usage read only spec and status, and a
     * second pass over what they last saw changes nothing (no record, same
     * state, same usage): a write that left both alone (metadata, such as
     * a finalizer) is not diffed again */
    json_t *spec = top[1], *status = top[2];
    if (!status || spec != w->seen_spec || status != w->seen_status) {
        bool spec_same = spec && spec == w->seen_spec;
        /* read while the new spec is warm (creation), not at the first
         * record that names the ClusterQueue */
        if (!spec_same)
            w->queue_name = JX_STR(spec, "queueName");
        static const struct sim_key status_keys[] = {
            SIM_KEY("conditions"), SIM_KEY("admissionChecks"), SIM_KEY("admission")};
        json_t *st[3];
        sim_members(status, status_keys, 3, st);
        w->cur_conds = st[0];
        w->cur_checks = st[1];
        w->cur_adm = st[2];
        static const struct sim_key adm_keys[] = {SIM_KEY("clusterQueue"),
                                                  SIM_KEY("podSetAssignments")};
        json_t *adm[2];
        sim_members(w->cur_adm, adm_keys, 2, adm);
        w->cur_adm_cq = json_string_value(adm[0]);
        w->cur_psas = adm[1];
        diff_workload(s, w, obj, spec, spec_same);
        update_usage(s, w);
        if (!spec_same) { /* (an unchanged spec's refcount is left untouched: cold) */
            json_decref(w->seen_spec);
            w->seen_spec = json_incref(spec);
        }
        json_decref(w->seen_status);
        w->seen_status = json_incref(status);
    }
    recount(s->obs, w);
    if (w->bare)
        play_bare(s, w, obj);
}

void sim_obs_workloads_prune(struct sim *s, const json_t *list)
{
    json_t *uids = json_object();
    size_t i;
    json_t *obj;
    json_array_foreach(list, i, obj)
        json_object_set_new(uids, jx_or_empty(api_uid(obj)), json_true());
    struct wl_state *w, *t;
    HASH_ITER(hh, s->obs->live, w, t)
        if (!json_object_get(uids, w->uid))
            wl_forget(s, w);
    json_decref(uids);
}

/* Status members the recorder's writes only remove or leave alone. */
static const char *const SHARED[] = {"admission", "resourceRequests", NULL};

static int release_one(struct sim *s, struct wl_state *w)
{
    w->needs_release = false;
    /* w is as of the last event consumed, so as stored now: nothing to
     * release (the workload controller may have done it) needs no copy */
    if (w->deleted || !w->evicted || !w->reserved || w->finished)
        return 0;
    /* a copy whose status may change (the rest is shared with the store;
     * so is the admission, which is only removed) */
    json_t *obj = store_get_status_copy(s->store, KIND_WORKLOAD, w->ns, w->name, SHARED);
    int n = 0;
    struct api_wl_state st = api_wl_state_of(obj);
    if (obj && st.evicted && st.quota_reserved && !st.finished) {
        int64_t now = clk_now(&s->clock.clk);
        json_t *ec = api_cond_get(obj, "Evicted");
        const char *why = jx_or_empty(JX_STR(ec, "reason"));
        char *reason = xstrdup(why);
        char *msg = xstrdup(jx_or_empty(JX_STR(ec, "message")));
        bool requeue = !strcmp(reason, "Preempted") || !strcmp(reason, "NodeFailures");
        JX_DEL(obj, "status", "admission");
        api_cond_set(obj, "QuotaReserved", "False", "PendingEvaluation", msg, now);
        api_cond_set(obj, "Admitted", "False", "NoReservation", "The workload has no reservation",
                     now);
        api_cond_set(obj, "Requeued", requeue ? "True" : "False", reason, msg, now);
        if (!store_update_take(s->store, KIND_WORKLOAD, w->ns, obj, STORE_UPDATE_STATUS, NULL))
            n = 1;
        obj = NULL;
        xfree(reason);
        xfree(msg);
    }
    json_decref(obj);
    return n;
}

int sim_observe(struct sim *s)
{
    emit_deferred(s);
    int writes = sim_obs_consume(s);
    struct sim_observer *o = s->obs;
    for (size_t i = 0; i < o->n_release; i++)
        writes += release_one(s, o->release[i]);
    o->n_release = 0;
    return writes;
}

int64_t sim_observer_next_deadline(struct sim *s)
{
    struct sim_finish *f = RB_MIN(sim_finish_tree, &s->obs->finishes);
    return f ? f->at_ms : INT64_MAX;
}

/* "The workload ran for <run_ms as seconds>s in the simulator" (borrowed
 * from the observer's memo). */
static const char *finish_message(struct sim_observer *o, int64_t run_ms)
{
    size_t n = o->n_finish_msgs < SIM_FINISH_MSGS ? o->n_finish_msgs : SIM_FINISH_MSGS;
    for (size_t i = 0; i < n; i++)
        if (o->finish_msg_ms[i] == run_ms)
            return o->finish_msg[i];
    size_t slot = o->n_finish_msgs++ % SIM_FINISH_MSGS;
    char secs[SIM_SECONDS_LEN];
    xfree(o->finish_msg[slot]);
    o->finish_msg[slot] = xasprintf("The workload ran for %ss in the simulator",
                                    sim_format_seconds(run_ms, secs));
    o->finish_msg_ms[slot] = run_ms;
    return o->finish_msg[slot];
}

static int finish_one(struct sim *s, struct wl_state *w)
{
    /* a copy whose status may change (the rest is shared with the store;
     * so is the admission, which is only removed) */
    json_t *obj = store_get_status_copy(s->store, KIND_WORKLOAD, w->ns, w->name, SHARED);
    int n = 0;
    static const char *const types[] = {"Admitted", "Finished"};
    const json_t *c[2] = {NULL, NULL};
    if (obj)
        api_cond_get_all(obj, types, 2, c); /* one walk of the conditions */
    if (obj && api_cond_holds(c[0]) && !api_cond_holds(c[1])) {
        const char *msg = finish_message(s->obs, w->run_ms);
        api_cond_set(obj, "Finished", "True", "Succeeded", msg, clk_now(&s->clock.clk));
        if (!store_update_take(s->store, KIND_WORKLOAD, w->ns, obj, STORE_UPDATE_STATUS, NULL))
            n = 1;
        obj = NULL;
    }
    json_decref(obj);
    return n;
}

int sim_observer_fire(struct sim *s)
{
    struct sim_observer *o = s->obs;
    int64_t now = clk_now(&s->clock.clk);
    int n = 0;
    struct sim_finish *f;
    while ((f = RB_MIN(sim_finish_tree, &o->finishes)) && f->at_ms <= now) {
        struct wl_state *w = f->w;
        RB_REMOVE(sim_finish_tree, &o->finishes, f);
        xfree(f);
        w->finish = NULL;
        n += finish_one(s, w);
    }
    return n;
}

bool sim_observer_busy(struct sim *s)
{
    const struct sim_observer *o = s->obs;
    return o->n_progressing > 0 || o->n_running_pods > 0 || RB_MIN(sim_finish_tree,
                                                                  &s->obs->finishes);
}

/* A spec.capacity entry for a pool no NodePool of the run carries at its
 * end (a typo, most often) modelled nothing: say so. */
static void warn_unused_capacity(struct sim *s)
{
    for (size_t i = 0; i < s->sc->n_pools; i++) {
        const char *name = s->sc->pools[i].name;
        json_t *np = store_get(s->store, KIND_NODEPOOL, NULL, name);
        if (!np)
            sim_warn(s, "spec.capacity.%s: no NodePool %s exists at the end of the run, so this "
                        "capacity model applied to nothing (NodePools: metadata.name)",
                     name, name);
        json_decref(np);
    }
}

void sim_observer_finish(struct sim *s)
{
    json_decref(s->obs->unplaced);
    s->obs->unplaced = sim_obs_pods_report(s);
    warn_unused_capacity(s);
}

size_t sim_observer_unfinished(struct sim *s)
{
    size_t n = 0;
    struct wl_state *w, *t;
    HASH_ITER(hh, s->obs->live, w, t)
        if (!w->finished)
            n++;
    return n;
}
