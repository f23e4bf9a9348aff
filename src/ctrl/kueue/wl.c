/*
 * kueue/wl: Workload status transitions shared by the scheduler, the
 * workload controller, the job integrations and the provisioning check
 * (kueue.md §2.9-2.10, §6). Every function edits a mutable Workload copy in
 * memory (conditions, admission, admission checks) and may record events and
 * trace records; writing the copy back is the caller's job, so one reconcile
 * can combine several transitions into one store update.
 */
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "api/object.h"
#include "ctrl/kueue/kueue.h"
#include "ctrl/metrics.h"
#include "util/jsonx.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

/* These four give the flag of api_wl_state_of's state they name, by the
 * same rule (the first condition of the type holds: api_cond_holds), but
 * read only the condition asked: a full api_wl_state_of pass (five types,
 * both status members) costs about three times one lookup, and the job
 * reconciler asks several of them per Workload (measured with callgrind on
 * a 400-Job `cueue sim`). Callers holding a kq_wl_view ask its state. */
bool kq_wl_has_reservation(const json_t *wl)
{
    return JX_GET(wl, "status", "admission") != NULL && api_cond_is_true(wl, "QuotaReserved");
}

bool kq_wl_is_admitted(const json_t *wl) { return api_cond_is_true(wl, "Admitted"); }
bool kq_wl_is_finished(const json_t *wl) { return api_cond_is_true(wl, "Finished"); }
bool kq_wl_is_evicted(const json_t *wl) { return api_cond_is_true(wl, "Evicted"); }
bool kq_wl_is_active(const json_t *wl) { return JX_BOOL(wl, true, "spec", "active"); }

const char *kq_wl_cluster_queue(const json_t *wl)
{
    return JX_STR(wl, "status", "admission", "clusterQueue");
}

char *kq_wl_queue_cq(struct ctrl *c, const json_t *wl)
{
    const char *q = JX_STR(wl, "spec", "queueName");
    if (!q)
        return NULL;
    json_t *lq = store_get(ctrl_store(c), KIND_LOCALQUEUE, api_namespace(wl), q);
    char *cq = lq ? xstrdup(JX_STR(lq, "spec", "clusterQueue")) : NULL;
    json_decref(lq);
    return cq;
}

json_t *kq_wl_trace_fields(const json_t *wl, const char *cq)
{
    char *key = kq_key(api_namespace(wl), api_name(wl));
    json_t *f = json_pack("{s:s}", "workload", key);
    xfree(key);
    if (cq)
        json_object_set_new(f, "clusterQueue", json_string(cq));
    return f;
}

json_t *kq_wl_trace_podsets(const json_t *wl)
{
    json_t *out = json_array();
    size_t i;
    json_t *ps;
    /* looked up once (json_array_foreach evaluates its array at each step) */
    const json_t *psas = JX_GET(wl, "status", "admission", "podSetAssignments");
    json_array_foreach(psas, i, ps) {
        json_t *flv = JX_GET(ps, "flavors");
        json_t *count = JX_GET(ps, "count");
        json_array_append_new(out, json_pack("{s:s, s:O, s:O}", "name",
                                             jx_or_empty(JX_STR(ps, "name")), "count",
                                             count ? count : json_null(), "flavors",
                                             flv ? flv : json_null()));
    }
    return out;
}

static void reset_checks_after_eviction(json_t *wl, int64_t now)
{
    char ts[TIMEFMT_LEN];
    timefmt_rfc3339(now, false, ts);
    size_t i;
    json_t *ac;
    const json_t *checks = JX_GET(wl, "status", "admissionChecks"); /* looked up once */
    json_array_foreach(checks, i, ac) {
        const char *st = JX_STR(ac, "state");
        if (!st || !strcmp(st, "Pending"))
            continue;
        if (!strcmp(st, "Retry"))
            json_object_set_new(ac, "retryCount",
                                json_integer(JX_INT(ac, 0, "retryCount") + 1));
        char *msg = xasprintf("Reset to Pending after eviction. Previously: %s", st);
        json_object_set_new(ac, "message", json_string(msg));
        xfree(msg);
        json_object_set_new(ac, "state", json_string("Pending"));
        json_object_set_new(ac, "lastTransitionTime", json_string(ts));
        json_object_del(ac, "podSetUpdates");
        json_object_del(ac, "requeueAfterSeconds");
    }
}

static void count_eviction(json_t *wl, const char *reason, const char *underlying)
{
    json_t *stats = JX_OBJ(wl, "status", "schedulingStats");
    json_t *ev = json_object_get(stats, "evictions");
    if (!json_is_array(ev)) {
        ev = json_array();
        json_object_set_new(stats, "evictions", ev);
    }
    size_t i;
    json_t *e;
    json_array_foreach(ev, i, e) {
        if (!strcmp(jx_or_empty(JX_STR(e, "reason")), reason) &&
            !strcmp(jx_or_empty(JX_STR(e, "underlyingCause")), jx_or_empty(underlying))) {
            json_object_set_new(e, "count", json_integer(JX_INT(e, 0, "count") + 1));
            return;
        }
    }
    json_t *n = json_object(); /* built directly: json_pack parses its format */
    JX_SET_LIT(n, "reason", jx_string(reason));
    JX_SET_LIT(n, "underlyingCause", jx_string(jx_or_empty(underlying)));
    JX_SET_LIT(n, "count", json_integer(1));
    json_array_append_new(ev, n);
}

void kq_wl_evict(struct ctrl *c, json_t *wl, const char *reason, const char *underlying,
                 const char *message)
{
    int64_t now = ctrl_now(c);
    api_cond_set(wl, "Evicted", "True", reason, message, now);
    reset_checks_after_eviction(wl, now);
    count_eviction(wl, reason, underlying);
    ctrl_metrics_evicted(c, wl, kq_wl_cluster_queue(wl), reason);
    char *ev_reason = xasprintf("EvictedDueTo%s", reason);
    ctrl_event(c, wl, "Normal", ev_reason, "%s", message);
    xfree(ev_reason);
    if (ctrl_traces(c, "Evicted")) {
        const char *cq = kq_wl_cluster_queue(wl);
        json_t *f = kq_wl_trace_fields(wl, cq);
        json_object_set_new(f, "reason", json_string(reason));
        json_object_set_new(f, "message", json_string(message));
        if (underlying && underlying[0])
            json_object_set_new(f, "underlyingCause", json_string(underlying));
        ctrl_trace(c, "Evicted", f);
    }
}

void kq_wl_unset_admitted(struct ctrl *c, json_t *wl, const char *reason, const char *message)
{
    int64_t now = ctrl_now(c);
    const json_t *admitted = api_cond_get(wl, "Admitted"); /* found once */
    if (api_cond_holds(admitted)) {
        int64_t since = api_cond_ltt_ms(admitted);
        int64_t add_s = since > 0 && now > since ? (now - since) / 1000 : 0;
        json_t *st = JX_OBJ(wl, "status");
        int64_t acc = JX_INT(st, 0, "accumulatedPastExexcutionTimeSeconds");
        JX_SET_LIT(st, "accumulatedPastExexcutionTimeSeconds", json_integer(acc + add_s));
    }
    api_cond_set(wl, "Admitted", "False", reason, message, now);
}

void kq_wl_clear_reservation(struct ctrl *c, json_t *wl, const char *qr_reason,
                             const char *message, const char *requeued_reason,
                             bool requeued)
{
    int64_t now = ctrl_now(c);
    char *cq = xstrdup(kq_wl_cluster_queue(wl));
    api_cond_set(wl, "QuotaReserved", "False", qr_reason, message, now);
    JX_DEL(wl, "status", "admission");
    kq_wl_unset_admitted(c, wl, "NoReservation", "The workload has no reservation");
    if (requeued_reason) {
        api_cond_set(wl, "Requeued", requeued ? "True" : "False", requeued_reason, message, now);
        if (requeued && ctrl_traces(c, "Requeued")) {
            json_t *f = kq_wl_trace_fields(wl, cq);
            json_object_set_new(f, "reason", json_string(requeued_reason));
            json_object_set_new(f, "message", json_string(message));
            ctrl_trace(c, "Requeued", f);
        }
    }
    xfree(cq);
}

void kq_wl_finish(struct ctrl *c, json_t *wl, const char *reason, const char *message)
{
    api_cond_set(wl, "Finished", "True", reason, message, ctrl_now(c));
    if (ctrl_traces(c, "Finished")) {
        json_t *f = kq_wl_trace_fields(wl, kq_wl_cluster_queue(wl));
        json_object_set_new(f, "reason", json_string(reason));
        json_object_set_new(f, "message", json_string(message));
        ctrl_trace(c, "Finished", f);
    }
}

/* ms (>= 0) as printf's "%.0f" prints ms / 1000.0: whole seconds,
 * rounded to nearest, a half to the even neighbour, written at out (at
 * least 20 bytes, not NUL-terminated). Returns the length. */
static size_t whole_seconds(char *out, int64_t ms)
{
    int64_t s = ms / 1000, frac = ms % 1000;
    s += frac > 500 || (frac == 500 && s % 2 == 1);
    char buf[20];
    char *p = buf + sizeof(buf);
    do {
        *--p = (char)('0' + s % 10);
        s /= 10;
    } while (s > 0);
    size_t n = (size_t)(buf + sizeof(buf) - p);
    memcpy(out, p, n);
    return n;
}

void kq_wl_set_admitted(struct ctrl *c, json_t *wl)
{
    kq_wl_set_admitted_at(c, wl, kq_wl_cluster_queue(wl), -1);
}

void kq_wl_set_admitted_at(struct ctrl *c, json_t *wl, const char *cq, int64_t reserved_ms)
{
    int64_t now = ctrl_now(c);
    api_cond_set(wl, "Admitted", "True", "Admitted", "The workload is admitted", now);
    int64_t since = reserved_ms >= 0 ? reserved_ms : api_cond_time_ms(wl, "QuotaReserved");
    ctrl_metrics_admitted(c, wl, cq, since, now);
    /* "Admitted by ClusterQueue <cq>, wait time since reservation was
     * <s>s", without printf or a heap buffer for the usual name */
    static const char head[] = "Admitted by ClusterQueue ";
    static const char mid[] = ", wait time since reservation was ";
    const char *name = jx_or_empty(cq);
    size_t nl = strlen(name), max = sizeof(head) + nl + sizeof(mid) + 20;
    char buf[256];
    char *msg = max <= sizeof(buf) ? buf : xmalloc(max);
    char *p = msg;
    memcpy(p, head, sizeof(head) - 1);
    p += sizeof(head) - 1;
    memcpy(p, name, nl);
    p += nl;
    memcpy(p, mid, sizeof(mid) - 1);
    p += sizeof(mid) - 1;
    p += whole_seconds(p, since > 0 && now > since ? now - since : 0);
    *p++ = 's';
    *p = '\0';
    ctrl_event(c, wl, "Normal", "Admitted", "%s", msg);
    if (msg != buf)
        xfree(msg);
    if (ctrl_traces(c, "Admitted")) {
        json_t *f = kq_wl_trace_fields(wl, cq);
        json_object_set_new(f, "podSets", kq_wl_trace_podsets(wl));
        ctrl_trace(c, "Admitted", f);
    }
}

/* ---- admission checks ---- */

void kq_rules_release(struct kq_check_rule *r, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        xfree(r[i].name);
        for (size_t j = 0; j < r[i].n_on_flavors; j++)
            xfree(r[i].on_flavors[j]);
        xfree(r[i].on_flavors);
    }
    xfree(r);
}

void kq_cq_check_rules(struct ctrl *c, const char *cq_name, struct kq_check_rule **out,
                       size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    if (!cq_name)
        return;
    json_t *obj = store_get(ctrl_store(c), KIND_CLUSTERQUEUE, NULL, cq_name);
    const json_t *spec = json_object_get(obj, "spec");
    if (!json_array_size(JX_GET(spec, "admissionChecksStrategy", "admissionChecks")) &&
        !json_array_size(json_object_get(spec, "admissionChecks"))) {
        json_decref(obj); /* no rules: nothing to decode */
        return;
    }
    struct api_cluster_queue cq;
    memset(&cq, 0, sizeof(cq));
    if (api_cluster_queue_from_json(obj, &cq) == 0 && cq.n_checks > 0) {
        struct kq_check_rule *r = xcalloc(cq.n_checks, sizeof(*r));
        for (size_t i = 0; i < cq.n_checks; i++) {
            r[i].name = xstrdup(cq.checks[i].name);
            r[i].n_on_flavors = cq.checks[i].n_on_flavors;
            r[i].on_flavors = xcalloc(r[i].n_on_flavors + 1, sizeof(char *));
            for (size_t j = 0; j < r[i].n_on_flavors; j++)
                r[i].on_flavors[j] = xstrdup(cq.checks[i].on_flavors[j]);
        }
        *out = r;
        *n_out = cq.n_checks;
    }
    api_cluster_queue_release(&cq);
    json_decref(obj);
}

static bool admission_uses_flavor(const json_t *admission, const char *flavor)
{
    size_t i;
    json_t *ps;
    const json_t *psas = JX_GET(admission, "podSetAssignments"); /* looked up once */
    json_array_foreach(psas, i, ps) {
        const char *res;
        json_t *f;
        json_t *flavors = JX_GET(ps, "flavors");
        json_object_foreach(flavors, res, f) {
            if (json_is_string(f) && !strcmp(json_string_value(f), flavor))
                return true;
        }
    }
    return false;
}

static int cmp_json_str(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

static void sort_string_array(json_t *arr)
{
    size_t n = json_array_size(arr);
    if (n < 2)
        return;
    json_t **items = xcalloc(n, sizeof(*items));
    for (size_t i = 0; i < n; i++)
        items[i] = json_incref(json_array_get(arr, i));
    qsort(items, n, sizeof(*items), cmp_json_str);
    json_array_clear(arr);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, items[i]);
    xfree(items);
}

json_t *kq_checks_for_admission(const struct kq_check_rule *rules, size_t n,
                                const json_t *admission)
{
    json_t *names = json_array();
    for (size_t i = 0; i < n; i++) {
        bool applies = rules[i].n_on_flavors == 0;
        for (size_t j = 0; !applies && j < rules[i].n_on_flavors; j++)
            applies = admission_uses_flavor(admission, rules[i].on_flavors[j]);
        if (applies)
            json_array_append_new(names, json_string(rules[i].name));
    }
    sort_string_array(names);
    return names;
}

json_t *kq_wl_check(const json_t *wl, const char *name)
{
    size_t i;
    json_t *ac;
    const json_t *checks = JX_GET(wl, "status", "admissionChecks"); /* looked up once */
    json_array_foreach(checks, i, ac) {
        const char *n = JX_STR(ac, "name");
        if (n && !strcmp(n, name))
            return ac;
    }
    return NULL;
}

/* The status.admissionChecks kq_wl_sync_checks wants (new reference) and
 * whether it differs from the Workload's. */
static json_t *checks_next(const json_t *wl, const json_t *names, int64_t now_ms, bool *changed)
{
    json_t *cur = JX_GET(wl, "status", "admissionChecks");
    json_t *next = json_array();
    char ts[TIMEFMT_LEN] = "";
    size_t i;
    json_t *n;
    json_array_foreach(names, i, n) {
        json_t *have = kq_wl_check(wl, json_string_value(n));
        if (have) {
            json_array_append(next, have);
        } else {
            if (!ts[0])
                timefmt_rfc3339(now_ms, false, ts);
            json_array_append_new(next, json_pack("{s:O, s:s, s:s, s:s}", "name", n, "state",
                                                  "Pending", "lastTransitionTime", ts,
                                                  "message", ""));
        }
    }
    *changed = !jx_equal(cur, next) && !(cur == NULL && json_array_size(next) == 0);
    return next;
}

bool kq_wl_checks_in_sync(const json_t *wl, const json_t *names)
{
    if (!json_array_size(names)) { /* kq_wl_sync_checks would drop any */
        const json_t *cur = JX_GET(wl, "status", "admissionChecks");
        return !cur || (json_is_array(cur) && json_array_size(cur) == 0);
    }
    bool changed;
    json_decref(checks_next(wl, names, 0, &changed));
    return !changed;
}

bool kq_wl_sync_checks(json_t *wl, const json_t *names, int64_t now_ms)
{
    bool changed;
    json_t *next = checks_next(wl, names, now_ms, &changed);
    if (changed) {
        if (json_array_size(next) == 0)
            JX_DEL(wl, "status", "admissionChecks");
        else
            JX_SET_NEW(wl, json_incref(next), "status", "admissionChecks");
    }
    json_decref(next);
    return changed;
}

bool kq_wl_all_checks_ready(const json_t *wl)
{
    size_t i;
    json_t *ac;
    const json_t *checks = JX_GET(wl, "status", "admissionChecks"); /* looked up once */
    json_array_foreach(checks, i, ac) {
        const char *st = JX_STR(ac, "state");
        if (!st || strcmp(st, "Ready"))
            return false;
    }
    return true;
}

bool kq_wl_set_check_state(struct ctrl *c, json_t *wl, const char *check, const char *state,
                           const char *message)
{
    json_t *ac = kq_wl_check(wl, check);
    if (!ac)
        return false;
    bool changed = false;
    char *old = xstrdup(jx_or_empty(JX_STR(ac, "state")));
    if (strcmp(old, state)) {
        char ts[TIMEFMT_LEN];
        json_object_set_new(ac, "state", json_string(state));
        json_object_set_new(ac, "lastTransitionTime",
                            json_string(timefmt_rfc3339(ctrl_now(c), false, ts)));
        changed = true;
        if (message && message[0])
            ctrl_event(c, wl, "Normal", "AdmissionCheckUpdated",
                       "Admission check %s updated state from %s to %s with message: %s",
                       check, old, state, message);
        else
            ctrl_event(c, wl, "Normal", "AdmissionCheckUpdated",
                       "Admission check %s updated state from %s to %s", check, old, state);
        if (ctrl_traces(c, "AdmissionCheckUpdated")) {
            json_t *f = kq_wl_trace_fields(wl, kq_wl_cluster_queue(wl));
            json_object_set_new(f, "check", json_string(check));
            json_object_set_new(f, "state", json_string(state));
            json_object_set_new(f, "previousState", json_string(old));
            json_object_set_new(f, "message", json_string(jx_or_empty(message)));
            ctrl_trace(c, "AdmissionCheckUpdated", f);
        }
    }
    if (strcmp(jx_or_empty(JX_STR(ac, "message")), jx_or_empty(message))) {
        json_object_set_new(ac, "message", json_string(jx_or_empty(message)));
        changed = true;
    }
    xfree(old);
    return changed;
}

bool kq_eviction_requeues(const char *reason)
{
    return reason && (!strcmp(reason, "Preempted") || !strcmp(reason, "NodeFailures") ||
                      !strcmp(reason, KQ_FALLBACK_REASON));
}

int64_t kq_backoff_ms(int64_t base_ms, int64_t max_ms, int32_t count)
{
    if (count < 1)
        count = 1;
    int64_t wait = base_ms;
    for (int32_t i = 1; i < count; i++) {
        if (wait > max_ms / 2) {
            wait = max_ms;
            break;
        }
        wait *= 2;
    }
    return wait > max_ms ? max_ms : wait;
}
