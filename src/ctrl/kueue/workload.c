/*
 * kueue/workload: Kueue's workload controller (kueue.md §2.9-2.12). Per
 * Workload, in this order:
 *   - a deleting Workload whose owner job is gone loses its finalizer;
 *   - admission checks (§2.9): the list follows the flavors of the
 *     reservation; Rejected -> DeactivationTarget; Retry -> eviction
 *     (AdmissionCheck) with requeueAt; all Ready -> Admitted=True;
 *   - maximumExecutionTimeSeconds -> DeactivationTarget;
 *   - deactivation: DeactivationTarget -> spec.active=false -> eviction
 *     (Deactivated[DueTo<cause>]), Requeued=False until reactivated;
 *   - stop policies of the LocalQueue/ClusterQueue (§2.12);
 *   - waitForPodsReady timeouts (§2.11) with the requeuing backoff and
 *     backoffLimitCount -> DeactivationTarget/RequeuingLimitExceeded;
 *   - Requeued=False -> True when its backoff passed or its queue restarted;
 *   - Workloads without a job integration (created directly) get their
 *     eviction completed here (reservation released).
 * Everything that waits is a timer (ctrl_enqueue_at) on the Workload key.
 */
#include <stdio.h>
#include <string.h>
#include <uthash.h>

#include "api/meta.h"
#include "ctrl/ctrl-int.h"
#include "ctrl/kueue/kueue.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

/* The last stopPolicy seen per queue, to requeue its Workloads on change. */
struct stop_seen {
    char *key; /* "cq/<name>" or "lq/<ns>/<name>" */
    char *policy;
    UT_hash_handle hh;
};

/* Whether a ClusterQueue has admission check rules, as found when the
 * store's resourceVersion was rv (nothing written since while it still is). */
struct rules_seen {
    char *name;
    uint64_t rv;
    bool any;
    UT_hash_handle hh;
};

struct wl_rec {
    int rid;
    struct stop_seen *seen;
    size_t n_stopped; /* entries of seen whose policy is not None */
    struct rules_seen *rules; /* by ClusterQueue name (wl_steady's) */
};

/* The condition types the steps read, in the order of cond_types. */
enum { C_FINISHED, C_EVICTED, C_QUOTA_RESERVED, C_ADMITTED, C_DEACTIVATION_TARGET, C_REQUEUED,
       C_PODS_READY, C__COUNT };
static const char *const cond_types[C__COUNT] = {"Finished", "Evicted", "QuotaReserved",
                                                 "Admitted", "DeactivationTarget", "Requeued",
                                                 "PodsReady"};

/* One reconcile. wl is what the steps read: the stored document until a
 * step must change something, then a copy whose status is private (wl_mut),
 * or all of it (wl_mut_all); orig keeps the stored one alive meanwhile, so
 * pointers read from it stay valid. Most reconciles change nothing and copy
 * nothing. */
struct wl_ctx {
    struct ctrl *c;
    struct wl_rec *r;
    json_t *wl;
    json_t *orig;
    bool all; /* wl is private throughout (wl_mut_all) */
    bool dirty;
    int64_t now;
    const json_t *conds[C__COUNT]; /* orig's first condition of each C_* type */
    const json_t *spec, *status;   /* orig's members (NULL when absent) */
    int8_t active;                 /* orig's spec.active: -1 not read yet, else 0/1 */
    int8_t reserved;               /* x_reserved of orig: -1 not read yet, else 0/1 */
    uint8_t truth[C__COUNT];       /* x_true of orig's conds: 0 not read yet, 1 no, 2 yes */
};

/* The Workload's condition of type cond_types[t] (api_cond_get): found
 * once per reconcile in the stored document (conds), and looked up again
 * only once a step has made its own copy, which it may have changed. */
static const json_t *x_cond(const struct wl_ctx *x, int t)
{
    return x->wl == x->orig ? x->conds[t] : api_cond_get(x->wl, cond_types[t]);
}

/* api_cond_status and api_cond_is_true over x_cond. */
static const char *x_status(const struct wl_ctx *x, int t)
{
    const json_t *c = x_cond(x, t);
    return c ? JX_STR(c, "status") : NULL;
}

static bool x_true(struct wl_ctx *x, int t)
{
    if (x->wl == x->orig && x->truth[t])
        return x->truth[t] == 2;
    bool yes = api_cond_holds(x_cond(x, t)); /* x_status(x, t) is "True" */
    if (x->wl == x->orig)
        x->truth[t] = yes ? 2 : 1;
    return yes;
}

/* kq_wl_has_reservation over x_cond. */
static bool x_reserved(struct wl_ctx *x)
{
    /* the condition first: found already, where the admission is a
     * lookup */
    if (x->wl != x->orig)
        return x_true(x, C_QUOTA_RESERVED) && JX_GET(x->wl, "status", "admission") != NULL;
    if (x->reserved < 0)
        x->reserved =
            x_true(x, C_QUOTA_RESERVED) && json_object_get(x->status, "admission") != NULL;
    return x->reserved;
}

/* kq_wl_is_active of the Workload the steps read (orig's read once). */
static bool x_active(struct wl_ctx *x)
{
    if (x->wl != x->orig)
        return kq_wl_is_active(x->wl);
    if (x->active < 0)
        x->active = x->spec ? JX_BOOL(x->spec, true, "active") : true;
    return x->active;
}

/* The status members the steps only replace or remove (never change in
 * place): wl_mut shares them with the stored document instead of copying
 * them. The others (admissionChecks, requeueState, schedulingStats) are
 * changed in place by kq_wl_evict and the backoff steps. */
static const char *const WL_REPLACED_ONLY[] = {"admission", "resourceRequests", NULL};

/* The Workload with a status the caller may change (store_status_copy on
 * the first call: the rest is the stored document's, and so are the
 * WL_REPLACED_ONLY members of the status). */
static json_t *wl_mut(struct wl_ctx *x)
{
    if (x->wl == x->orig)
        x->wl = store_status_copy(x->orig, WL_REPLACED_ONLY);
    return x->wl;
}

/* The Workload, private throughout (spec, metadata and the status members
 * wl_mut shares too). */
static json_t *wl_mut_all(struct wl_ctx *x)
{
    json_t *wl = wl_mut(x);
    if (!x->all) {
        const char *key;
        json_t *v;
        json_object_foreach(wl, key, v) {
            if (strcmp(key, "status") != 0)
                json_object_set_new(wl, key, jx_deep_copy(v));
        }
        json_t *st = json_object_get(wl, "status");
        for (size_t i = 0; WL_REPLACED_ONLY[i]; i++) {
            json_t *m = json_object_get(st, WL_REPLACED_ONLY[i]);
            if (m)
                json_object_set_new(st, WL_REPLACED_ONLY[i], jx_deep_copy(m));
        }
        x->all = true;
    }
    return wl;
}

static const char *stop_policy(const json_t *obj)
{
    const char *p = JX_STR(obj, "spec", "stopPolicy");
    return p && p[0] ? p : "None";
}

/* ---- admission checks (§2.9) ---- */

/* "<Prefix> in <state> state: \"a\" (m1); \"b\" (m2)", or NULL if none. */
static char *checks_in_state(const json_t *wl, const char *state, const char *prefix)
{
    const json_t *checks = JX_GET(wl, "status", "admissionChecks");
    if (!json_array_size(checks))
        return NULL;
    struct sbuf sb;
    sbuf_init(&sb, 0);
    int n = 0;
    size_t i;
    json_t *ac;
    json_array_foreach(checks, i, ac) {
        if (strcmp(jx_or_empty(JX_STR(ac, "state")), state))
            continue;
        sbuf_addf(&sb, "%s\"%s\" (%s)", n ? "; " : "", jx_or_empty(JX_STR(ac, "name")),
                  jx_or_empty(JX_STR(ac, "message")));
        n++;
    }
    char *list = sbuf_take(&sb);
    sbuf_release(&sb);
    char *out = n ? xasprintf("%s%s in %s state: %s", prefix, n > 1 ? "s" : "", state, list)
                  : NULL;
    xfree(list);
    return out;
}

static void set_requeue_at(json_t *wl, int64_t at_ms)
{
    char ts[TIMEFMT_LEN];
    JX_SET_NEW(wl, json_string(timefmt_rfc3339(at_ms, false, ts)), "status", "requeueState",
               "requeueAt");
}

static void retry_eviction(struct wl_ctx *x)
{
    char *list = checks_in_state(x->wl, "Retry", "AdmissionCheck");
    int64_t at = 0;
    size_t i;
    json_t *ac;
    const json_t *checks = JX_GET(x->wl, "status", "admissionChecks"); /* looked up once */
    json_array_foreach(checks, i, ac) {
        if (strcmp(jx_or_empty(JX_STR(ac, "state")), "Retry"))
            continue;
        int64_t ltt = 0;
        timefmt_parse(jx_or_empty(JX_STR(ac, "lastTransitionTime")), &ltt);
        int64_t t = ltt + JX_INT(ac, 0, "requeueAfterSeconds") * 1000;
        if (t > at)
            at = t;
    }
    char *msg = xasprintf("Evicted due to %s", list);
    json_t *wl = wl_mut(x);
    kq_wl_evict(x->c, wl, "AdmissionCheck", NULL, msg);
    if (at > 0)
        set_requeue_at(wl, at);
    xfree(msg);
    xfree(list);
    x->dirty = true;
}

/* Admitted follows the checks: True once all are Ready (or there are
 * none), else False (UnsatisfiedAdmissionChecks). */
static void step_checks_admitted(struct wl_ctx *x, bool all_ready)
{
    if (all_ready) {
        if (!x_true(x, C_ADMITTED)) {
            kq_wl_set_admitted(x->c, wl_mut(x));
            x->dirty = true;
        }
    } else {
        const char *reason = JX_STR(x_cond(x, C_ADMITTED), "reason");
        if (x_true(x, C_ADMITTED) || !reason || strcmp(reason, "UnsatisfiedAdmissionChecks")) {
            kq_wl_unset_admitted(x->c, wl_mut(x), "UnsatisfiedAdmissionChecks",
                                 "The workload has not all checks ready");
            x->dirty = true;
        }
    }
}

static void step_checks(struct wl_ctx *x)
{
    json_t *wl = x->wl;
    if (!x_reserved(x) || x_true(x, C_EVICTED) || !x_active(x))
        return;
    struct kq_check_rule *rules;
    size_t n;
    const json_t *adm = wl == x->orig ? json_object_get(x->status, "admission")
                                      : JX_GET(wl, "status", "admission");
    kq_cq_check_rules(x->c, JX_STR(adm, "clusterQueue"), &rules, &n);
    const json_t *acs = wl == x->orig ? json_object_get(x->status, "admissionChecks") : NULL;
    if (n == 0 && wl == x->orig && (!acs || (json_is_array(acs) && !json_array_size(acs)))) {
        /* no rule and no check (the usual case): in sync, none Rejected or
         * in Retry, all (none) Ready */
        kq_rules_release(rules, n);
        step_checks_admitted(x, true);
        return;
    }
    json_t *names = kq_checks_for_admission(rules, n, adm);
    if (!kq_wl_checks_in_sync(wl, names)) {
        wl = wl_mut(x);
        x->dirty |= kq_wl_sync_checks(wl, names, x->now);
    }
    json_decref(names);
    kq_rules_release(rules, n);
    char *rejected = checks_in_state(wl, "Rejected", "AdmissionCheck");
    if (rejected) {
        wl = wl_mut(x);
        x->dirty |= api_cond_set(wl, "DeactivationTarget", "True", "AdmissionCheck", rejected,
                                 x->now);
        ctrl_event(x->c, wl, "Warning", "AdmissionCheckRejected", "Deactivated due to %s",
                   rejected);
        xfree(rejected);
        return;
    }
    bool retry = false;
    size_t i;
    json_t *ac;
    const json_t *checks = JX_GET(wl, "status", "admissionChecks"); /* looked up once */
    json_array_foreach(checks, i, ac) {
        retry |= !strcmp(jx_or_empty(JX_STR(ac, "state")), "Retry");
    }
    if (retry) {
        retry_eviction(x);
        return;
    }
    step_checks_admitted(x, kq_wl_all_checks_ready(wl));
}

/* ---- maximum execution time (§2.10) ---- */

static void step_max_exec(struct wl_ctx *x)
{
    json_t *wl = x->wl;
    if (!x_true(x, C_ADMITTED)) /* the found condition before the spec's lookup */
        return;
    int64_t max_s = wl == x->orig ? JX_INT(x->spec, 0, "maximumExecutionTimeSeconds")
                                  : JX_INT(wl, 0, "spec", "maximumExecutionTimeSeconds");
    if (max_s <= 0 || x_true(x, C_EVICTED) || !x_active(x) || x_true(x, C_DEACTIVATION_TARGET))
        return;
    int64_t acc = JX_INT(wl, 0, "status", "accumulatedPastExexcutionTimeSeconds");
    int64_t at = api_cond_time_ms(wl, "Admitted") + (max_s - acc) * 1000;
    if (x->now < at) {
        ctrl_enqueue_at(x->c, x->r->rid, api_namespace(wl), api_name(wl), at);
        return;
    }
    wl = wl_mut(x);
    api_cond_set(wl, "DeactivationTarget", "True", "MaximumExecutionTimeExceeded",
                 "exceeding the maximum execution time", x->now);
    ctrl_event(x->c, wl, "Warning", "MaximumExecutionTimeExceeded",
               "The maximum execution time (%llds) exceeded", (long long)max_s);
    x->dirty = true;
}

/* ---- deactivation ---- */

/* Returns true when the Workload is inactive (later steps skip it). */
static bool step_deactivation(struct wl_ctx *x)
{
    json_t *wl = x->wl;
    const json_t *dt = x_cond(x, C_DEACTIVATION_TARGET);
    bool has_dt = x_true(x, C_DEACTIVATION_TARGET);
    if (has_dt && x_active(x)) {
        wl = wl_mut_all(x);
        JX_SET_NEW(wl, json_false(), "spec", "active");
        if (kq_update(x->c, KIND_WORKLOAD, wl, STORE_UPDATE_MAIN) != 0)
            return true; /* requeued by the event or the conflict */
    }
    if (x_active(x)) {
        const char *rq = JX_STR(x_cond(x, C_REQUEUED), "reason");
        if (x_status(x, C_REQUEUED) && !x_true(x, C_REQUEUED) && rq &&
            !strncmp(rq, "Deactivated", 11)) {
            api_cond_set(wl_mut(x), "Requeued", "True", "Reactivated",
                         "The workload was reactivated", x->now);
            x->dirty = true;
        }
        return false;
    }
    if (!x_true(x, C_EVICTED) || has_dt) {
        wl = wl_mut(x);
        dt = x_cond(x, C_DEACTIVATION_TARGET);
        char *reason = has_dt ? xasprintf("DeactivatedDueTo%s", JX_STR(dt, "reason"))
                              : xstrdup("Deactivated");
        char *msg = has_dt ? xasprintf("The workload is deactivated due to %s",
                                       jx_or_empty(JX_STR(dt, "message")))
                           : xstrdup("The workload is deactivated");
        if (!x_true(x, C_EVICTED))
            kq_wl_evict(x->c, wl, reason, has_dt ? JX_STR(dt, "reason") : NULL, msg);
        if (ctrl_traces(x->c, "Deactivated")) {
            json_t *f = kq_wl_trace_fields(wl, kq_wl_cluster_queue(wl));
            json_object_set_new(f, "reason", json_string(reason));
            json_object_set_new(f, "message", json_string(msg));
            ctrl_trace(x->c, "Deactivated", f);
        }
        api_cond_remove(wl, "DeactivationTarget");
        JX_DEL(wl, "status", "requeueState");
        if (!x_reserved(x)) {
            api_cond_set(wl, "QuotaReserved", "False", "Deactivated",
                         "The workload is deactivated", x->now);
            api_cond_set(wl, "Requeued", "False", reason, msg, x->now);
        }
        xfree(reason);
        xfree(msg);
        x->dirty = true;
    }
    return true;
}

/* ---- stop policies (§2.12) ---- */

/* The stop policies that apply to the Workload: its LocalQueue's and its
 * ClusterQueue's (the admission's, else the LocalQueue's). While no queue
 * at all is stopped (wl_rec.n_stopped, kept from queue events) nothing is
 * looked up. *cqn_out names the ClusterQueue (borrowed from the Workload
 * or from *lq_obj; NULL while no queue is stopped); the caller decrefs
 * *cq_obj and *lq_obj. */
static void stop_policies(struct wl_ctx *x, bool *cq_stopped, bool *lq_stopped,
                          const char **cq_stop, const char **lq_stop, const char **cqn_out,
                          json_t **cq_obj, json_t **lq_obj)
{
    json_t *wl = x->wl;
    *cq_stopped = *lq_stopped = false;
    *cq_stop = *lq_stop = "None";
    *cqn_out = NULL; /* read only when a queue is stopped */
    *cq_obj = *lq_obj = NULL;
    if (x->r->n_stopped == 0)
        return;
    *cqn_out = kq_wl_cluster_queue(wl);
    const char *q = JX_STR(wl, "spec", "queueName");
    *lq_obj = q ? store_get(ctrl_store(x->c), KIND_LOCALQUEUE, api_namespace(wl), q) : NULL;
    if (!*cqn_out && *lq_obj)
        *cqn_out = JX_STR(*lq_obj, "spec", "clusterQueue");
    *cq_obj = *cqn_out ? store_get(ctrl_store(x->c), KIND_CLUSTERQUEUE, NULL, *cqn_out) : NULL;
    *cq_stop = *cq_obj ? stop_policy(*cq_obj) : "None";
    *lq_stop = *lq_obj ? stop_policy(*lq_obj) : "None";
    *cq_stopped = strcmp(*cq_stop, "None") != 0;
    *lq_stopped = strcmp(*lq_stop, "None") != 0;
}

static void step_stop(struct wl_ctx *x)
{
    json_t *wl = x->wl;
    bool cq_stopped, lq_stopped;
    const char *cq_stop, *lq_stop, *cqn;
    json_t *cq, *lq;
    stop_policies(x, &cq_stopped, &lq_stopped, &cq_stop, &lq_stop, &cqn, &cq, &lq);
    if (x_reserved(x) && !x_true(x, C_EVICTED) && (cq_stopped || lq_stopped)) {
        const char *policy = cq_stopped ? cq_stop : lq_stop;
        if (!x_true(x, C_ADMITTED)) {
            char *msg = cq_stopped ? xasprintf("ClusterQueue %s is stopped", cqn)
                                   : xasprintf("LocalQueue %s is stopped",
                                               JX_STR(wl, "spec", "queueName"));
            wl = wl_mut(x);
            kq_wl_clear_reservation(x->c, wl, "Suspended", msg, NULL, false);
            xfree(msg);
            x->dirty = true;
        } else if (!strcmp(policy, "HoldAndDrain")) {
            wl = wl_mut(x);
            kq_wl_evict(x->c, wl, cq_stopped ? "ClusterQueueStopped" : "LocalQueueStopped", NULL,
                        cq_stopped ? "The ClusterQueue is stopped" : "The LocalQueue is stopped");
            x->dirty = true;
        }
    }
    const char *rq = JX_STR(x_cond(x, C_REQUEUED), "reason");
    if (rq && !x_true(x, C_REQUEUED)) {
        if (!strcmp(rq, "ClusterQueueStopped") && !cq_stopped) {
            api_cond_set(wl_mut(x), "Requeued", "True", "ClusterQueueRestarted",
                         "The ClusterQueue was restarted after being stopped", x->now);
            x->dirty = true;
        } else if (!strcmp(rq, "LocalQueueStopped") && !lq_stopped) {
            api_cond_set(wl_mut(x), "Requeued", "True", "LocalQueueRestarted",
                         "The LocalQueue was restarted after being stopped", x->now);
            x->dirty = true;
        }
    }
    json_decref(lq);
    json_decref(cq);
}

/* ---- waitForPodsReady (§2.11) ---- */

static void step_pods_ready(struct wl_ctx *x)
{
    const struct ctrl_config *cfg = ctrl_cfg(x->c);
    json_t *wl = x->wl;
    const json_t *pr = x_cond(x, C_PODS_READY);
    if (!cfg->wait_for_pods_ready || !pr || x_true(x, C_PODS_READY) ||
        !x_true(x, C_ADMITTED) || x_true(x, C_EVICTED))
        return;
    const char *reason = jx_or_empty(JX_STR(pr, "reason"));
    int64_t start = !strcmp(reason, "WaitForRecovery") ? api_cond_time_ms(wl, "PodsReady")
                                                      : api_cond_time_ms(wl, "Admitted");
    int64_t at = start + cfg->pods_ready_timeout_ms;
    if (x->now < at) {
        ctrl_enqueue_at(x->c, x->r->rid, api_namespace(wl), api_name(wl), at);
        return;
    }
    int32_t count = (int32_t)JX_INT(wl, 0, "status", "requeueState", "count");
    wl = wl_mut(x);
    if (cfg->requeue_backoff_limit >= 0 && count + 1 > cfg->requeue_backoff_limit) {
        api_cond_set(wl, "DeactivationTarget", "True", "RequeuingLimitExceeded",
                     "exceeding the maximum number of re-queuing retries", x->now);
        x->dirty = true;
        return;
    }
    char *msg = xasprintf("Exceeded the PodsReady timeout %s/%s", api_namespace(wl), api_name(wl));
    kq_wl_evict(x->c, wl, "PodsReadyTimeout", NULL, msg);
    xfree(msg);
    JX_SET_NEW(wl, json_integer(count + 1), "status", "requeueState", "count");
    set_requeue_at(wl, x->now + kq_backoff_ms(cfg->requeue_backoff_base_ms,
                                              cfg->requeue_backoff_max_ms, count + 1));
    x->dirty = true;
}

/* ---- Requeued=False -> True after the backoff (§2.10) ---- */

static void step_backoff(struct wl_ctx *x)
{
    json_t *wl = x->wl;
    const char *rq = JX_STR(x_cond(x, C_REQUEUED), "reason");
    if (!rq || x_true(x, C_REQUEUED) || x_reserved(x) ||
        (strcmp(rq, "PodsReadyTimeout") && strcmp(rq, "AdmissionCheck")))
        return;
    int64_t at = 0;
    timefmt_parse(jx_or_empty(JX_STR(wl, "status", "requeueState", "requeueAt")), &at);
    if (at > x->now) {
        ctrl_enqueue_at(x->c, x->r->rid, api_namespace(wl), api_name(wl), at);
        return;
    }
    wl = wl_mut(x);
    api_cond_set(wl, "Requeued", "True", "BackoffFinished", "The workload backoff was finished",
                 x->now);
    if (ctrl_traces(x->c, "Requeued")) {
        json_t *f = kq_wl_trace_fields(wl, NULL);
        json_object_set_new(f, "reason", json_string("BackoffFinished"));
        json_object_set_new(f, "message", json_string("The workload backoff was finished"));
        ctrl_trace(x->c, "Requeued", f);
    }
    x->dirty = true;
}

/* ---- Workloads with no job integration ---- */

static bool has_integration_owner(const json_t *wl)
{
    /* kq_controlled_by_kind(wl, "Job") || kq_controlled_by_kind(wl, "RayJob"),
     * from one lookup of the references */
    const json_t *r = kq_controller_ref_in(JX_GET(wl, "metadata", "ownerReferences"));
    const char *k = r ? JX_STR(r, "kind") : NULL;
    return k && (!strcmp(k, "Job") || !strcmp(k, "RayJob"));
}

/* The status members step_bare never changes in place (the last step:
 * kq_wl_clear_reservation only sets conditions, through api_cond_set, and
 * replaces or removes members), shared by its copy when it makes the
 * first one. */
static const char *const BARE_SHARED[] = {"admission", "resourceRequests", "requeueState",
                                          "schedulingStats", "admissionChecks", NULL};

static void step_bare(struct wl_ctx *x)
{
    json_t *wl = x->wl;
    /* the conditions (found already) before the owner references */
    if (!x_true(x, C_EVICTED) || !x_reserved(x) || has_integration_owner(wl))
        return;
    /* read before the copy, which shares orig's conditions: found already */
    const json_t *ev = x_cond(x, C_EVICTED);
    if (x->wl == x->orig)
        x->wl = store_status_copy(x->orig, BARE_SHARED);
    wl = x->wl;
    const char *reason = jx_or_empty(JX_STR(ev, "reason"));
    char *msg = xstrdup(jx_or_empty(JX_STR(ev, "message")));
    char *rs = xstrdup(reason);
    kq_wl_clear_reservation(x->c, wl, "PendingEvaluation", msg, rs, kq_eviction_requeues(rs));
    xfree(rs);
    xfree(msg);
    x->dirty = true;
}

/* A deleting Workload keeps its finalizer while its job may still run. */
static void step_deleting(struct ctrl *c, const json_t *wl)
{
    if (!kq_has_finalizer(wl, KQ_RESOURCE_IN_USE_FINALIZER))
        return;
    const json_t *ref = kq_controller_ref(wl);
    const char *kind = ref ? JX_STR(ref, "kind") : NULL;
    json_t *owner = NULL;
    if (kind && !strcmp(kind, "Job"))
        owner = store_get(ctrl_store(c), KIND_JOB, api_namespace(wl), JX_STR(ref, "name"));
    else if (kind && !strcmp(kind, "RayJob"))
        owner = store_get(ctrl_store(c), KIND_RAYJOB, api_namespace(wl), JX_STR(ref, "name"));
    bool owner_alive = owner && !strcmp(jx_or_empty(api_uid(owner)), jx_or_empty(JX_STR(ref, "uid")));
    /* with a live owner, the job integration releases it once stopped */
    if (!owner_alive || kq_wl_is_finished(wl) || !kq_wl_has_reservation(wl))
        kq_remove_finalizer(c, KIND_WORKLOAD, api_namespace(wl), api_name(wl),
                            KQ_RESOURCE_IN_USE_FINALIZER);
    json_decref(owner);
}

static void wl_reconcile(struct ctrl *c, void *self, const char *ns, const char *name)
{
    struct wl_rec *r = self;
    json_t *wl = store_get(ctrl_store(c), KIND_WORKLOAD, ns, name);
    if (!wl)
        return;
    if (api_is_deleting(wl)) {
        step_deleting(c, wl);
        json_decref(wl);
        return;
    }
    struct wl_ctx x = {.c = c, .r = r, .wl = wl, .orig = wl, .now = ctrl_now(c),
                       .spec = json_object_get(wl, "spec"),
                       .status = json_object_get(wl, "status"), .active = -1,
                       .reserved = -1};
    api_cond_get_all(wl, cond_types, C__COUNT, x.conds);
    if (x_true(&x, C_FINISHED)) {
        json_decref(wl);
        return;
    }
    step_checks(&x);
    if (ctrl_cfg(c)->flavor_fallback)
        x.dirty |= kq_fallback_step(c, r->rid, wl_mut_all(&x));
    step_max_exec(&x);
    if (!step_deactivation(&x)) {
        step_stop(&x);
        step_pods_ready(&x);
        step_backoff(&x);
    }
    step_bare(&x);
    if (x.dirty) {
        /* the copy is not used after its write: the store takes it */
        json_t *w = x.wl == x.orig ? json_incref(x.wl) : x.wl;
        if (store_update_take(ctrl_store(c), KIND_WORKLOAD, ns, w, STORE_UPDATE_STATUS, NULL) ==
            CU_ECONFLICT)
            ctrl_enqueue(c, r->rid, ns, name);
    } else if (x.wl != x.orig) {
        json_decref(x.wl);
    }
    json_decref(x.orig);
}

/* Requeue every Workload of a queue whose stopPolicy changed. */
static void stop_changed(struct ctrl *c, struct wl_rec *r, const struct store_event *ev)
{
    bool is_cq = ev->kind == KIND_CLUSTERQUEUE;
    const char *pol = ev->type == STORE_DELETED ? "None" : stop_policy(ev->obj);
    if (r->n_stopped == 0 && !strcmp(pol, "None"))
        return; /* every queue seen so far has None (or no entry): unchanged */
    char *key = is_cq ? xasprintf("cq/%s", api_name(ev->obj))
                      : xasprintf("lq/%s/%s", api_namespace(ev->obj), api_name(ev->obj));
    struct stop_seen *s;
    HASH_FIND_STR(r->seen, key, s);
    bool changed = s ? strcmp(s->policy, pol) != 0 : strcmp(pol, "None") != 0;
    if (!s) {
        s = xcalloc(1, sizeof(*s));
        s->key = key;
        s->policy = xstrdup("None");
        HASH_ADD_KEYPTR(hh, r->seen, s->key, strlen(s->key), s);
        key = NULL;
    }
    if (changed) {
        r->n_stopped -= strcmp(s->policy, "None") != 0;
        r->n_stopped += strcmp(pol, "None") != 0;
        xfree(s->policy);
        s->policy = xstrdup(pol);
    }
    xfree(key);
    if (!changed)
        return;
    json_t *wls = store_list(ctrl_store(c), KIND_WORKLOAD, is_cq ? NULL : api_namespace(ev->obj),
                             NULL);
    size_t i;
    json_t *wl;
    json_array_foreach(wls, i, wl) {
        const char *q = JX_STR(wl, "spec", "queueName");
        if (is_cq || (q && !strcmp(q, api_name(ev->obj))))
            ctrl_enqueue(c, r->rid, api_namespace(wl), api_name(wl));
    }
    json_decref(wls);
}

/* Whether kq_cq_check_rules finds rules for ClusterQueue cq (NULL: none):
 * looked up once per store resourceVersion (the events of a round find
 * the store as the first left it). */
static bool cq_has_rules(struct ctrl *c, struct wl_rec *r, const char *cq)
{
    if (!cq)
        return false;
    uint64_t rv = store_rv(ctrl_store(c));
    struct rules_seen *e;
    HASH_FIND_STR(r->rules, cq, e);
    if (e && e->rv == rv)
        return e->any;
    struct kq_check_rule *rules;
    size_t n;
    kq_cq_check_rules(c, cq, &rules, &n);
    kq_rules_release(rules, n);
    if (!e) {
        e = xcalloc(1, sizeof(*e));
        e->name = xstrdup(cq);
        HASH_ADD_KEYPTR(hh, r->rules, e->name, strlen(e->name), e);
    }
    e->rv = rv;
    e->any = n > 0;
    return e->any;
}

/* Whether wl_reconcile of the admitted Workload v views (active, without
 * DeactivationTarget True or Requeued other than True) would do nothing:
 * with its reservation (QuotaReserved and the admission), Admitted, not
 * Evicted, no admission check in its status nor a check rule in its
 * ClusterQueue (read now: the reconcile would read the same; only users
 * write a ClusterQueue's spec), no maximumExecutionTimeSeconds, no queue
 * stopped and neither waitForPodsReady nor flavor fallback: then the checks
 * are in sync and all (none) Ready with Admitted True already, and the
 * other steps need a stop policy, a timeout, an eviction, a deactivation
 * or a requeue. */
static bool wl_steady(struct ctrl *c, struct wl_rec *r, const struct kq_wl_view *v)
{
    if (!api_wl_holds_reservation(&v->state) || !v->state.admitted || v->state.evicted ||
        r->n_stopped != 0 || ctrl_cfg(c)->wait_for_pods_ready)
        return false;
    const json_t *acs = v->admission_checks;
    if ((acs && (!json_is_array(acs) || json_array_size(acs))) || v->max_exec_s > 0)
        return false;
    return !cq_has_rules(c, r, v->cluster_queue);
}

/* Whether wl_reconcile of the Workload v views, as stored, would do
 * nothing, whatever the time: not deleting and Finished; or, without
 * flavor fallback, active with neither QuotaReserved, Admitted nor
 * DeactivationTarget True and no Requeued condition other than True (each
 * read from the first condition of its type, as the steps do): then no
 * step acts (checks, stop and bare need a reservation, maximum execution
 * time and waitForPodsReady need Admitted, deactivation needs
 * DeactivationTarget, spec.active=false or Requeued not True, backoff and
 * restarts need Requeued not True); or admitted and steady (wl_steady).
 * Only for a Workload without ownerReferences: no reconciler that runs
 * before this one in a round (gc, job integrations) writes such a
 * Workload, so the document the event carries is still the one the
 * reconcile of this round would read. A queue whose stopPolicy changes
 * later requeues its Workloads (stop_changed). Errs towards false. */
static bool wl_quiet(struct ctrl *c, struct wl_rec *r, const struct kq_wl_view *v)
{
    if (v->deleting || v->owned)
        return false;
    if (v->state.finished)
        return true; /* the reconcile stops there */
    if (v->state.deactivation_target || v->cond[KQ_VC_REQUEUED] == 1 ||
        ctrl_cfg(c)->flavor_fallback || !v->active)
        return false;
    if (!v->state.quota_reserved && !v->state.admitted)
        return true; /* pending */
    return wl_steady(c, r, v);
}

static void wl_on_event(struct ctrl *c, void *self, const struct store_event *ev)
{
    struct wl_rec *r = self;
    if (ev->kind == KIND_WORKLOAD && ev->type != STORE_DELETED) {
        /* read once for the queue controller and the memo too */
        const struct kq_wl_view *v = kq_wl_view_peek(ev->obj);
        if (!wl_quiet(c, r, v))
            ctrl_enqueue(c, r->rid, v->ns, v->name);
    }
    else if (ev->kind == KIND_CLUSTERQUEUE || ev->kind == KIND_LOCALQUEUE)
        stop_changed(c, r, ev);
}

static void wl_free(void *self)
{
    struct wl_rec *r = self;
    struct stop_seen *s, *t;
    kq_wl_view_drop();
    HASH_ITER(hh, r->seen, s, t) {
        HASH_DEL(r->seen, s);
        xfree(s->key);
        xfree(s->policy);
        xfree(s);
    }
    struct rules_seen *e, *et;
    HASH_ITER(hh, r->rules, e, et) {
        HASH_DEL(r->rules, e);
        xfree(e->name);
        xfree(e);
    }
    xfree(r);
}

static const struct ctrl_reconciler_ops wl_ops = {
    .name = "workload",
    .on_event = wl_on_event,
    .reconcile = wl_reconcile,
    .after_round = NULL,
    .free = wl_free,
};

void ctrl__workload_register(struct ctrl *c)
{
    struct wl_rec *r = xcalloc(1, sizeof(*r));
    r->rid = ctrl_register(c, &wl_ops, r);
}
