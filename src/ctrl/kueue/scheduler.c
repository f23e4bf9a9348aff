/*
 * kueue/scheduler: the glue between the store and the admission engine
 * (engine/engine.h). Store events of ResourceFlavor, Cohort, ClusterQueue
 * (with the part of the inactive message only the control plane knows:
 * missing or inactive AdmissionChecks), LocalQueue, Namespace and Workload
 * are decoded and upserted into the engine; a WorkloadPriorityClass whose
 * value changes updates spec.priority of the Workloads that use it. After
 * every round the engine runs (eng_schedule at the clock's now) and its
 * decisions are written back the way Kueue's scheduler writes them
 * (kueue.md §2.3 step 6, §2.6, §2.9):
 *   ENG_RESERVE  status.admission + QuotaReserved=True, the admission
 *                checks that apply added as Pending, and Admitted=True at
 *                once when there are none; events QuotaReserved/Admitted
 *   ENG_PREEMPT  Evicted=True/Preempted + Preempted=True/<reason>
 *   ENG_PENDING  QuotaReserved=False/<reason>, Admitted=False/NoReservation,
 *                status.resourceRequests, a Warning event
 * with one trace record each (QuotaReserved, Admitted, Preempted, Pending).
 * ClusterQueue/LocalQueue status is rewritten for the queues that changed
 * (kueue/queues.c), once per step: in the round where it settles.
 * ctrl_explain_workload answers eng_explain as JSON; the
 * explanation is not written into Workload status (it runs the engine
 * forward, too costly for every pending Workload every round).
 */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <uthash.h>

#include "api/meta.h"
#include "api/object.h"
#include "api/selector.h"
#include "ctrl/ctrl-int.h"
#include "ctrl/kueue/kueue.h"
#include "ctrl/metrics.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#define WPC_KEY_PREFIX "wpc:"
#define AC_KEY_PREFIX "ac:" /* reconcile keys of deleting AdmissionChecks */
/* Most distinct values kept per table of shared status values */
#define SHARED_MAX 4096

/* The spec version of a queue object last fed to the engine. */
struct spec_seen {
    char *key; /* "<kind id>/<ns>/<name>" */
    int64_t generation;
    bool deleting;
    UT_hash_handle hh;
};

struct sched {
    int rid;
    struct eng *eng;
    struct kq_queues *queues;
    struct kq_memo *memo; /* what the engine was last fed per Workload */
    struct spec_seen *seen;
    struct kq_set *not_ready; /* admitted, unfinished, not PodsReady ("ns/name") */
    struct kq_set *queued;    /* waiting for a reservation ("ns/name") */
    bool checks_changed; /* an AdmissionCheck changed: re-upsert ClusterQueues */
    int64_t wake_at;     /* last wakeup requested */
    struct kq_shared *adms; /* status.admission values by assignment */
    struct kq_shared *rrs;  /* status.resourceRequests values by pod sets */
    int n_topologies;    /* Topology objects known (TAS is off without) */
    bool nodes_dirty;    /* a Node or Pod changed since the engine's node set */
};

/* ---- inputs ---- */

/* Kueue's inactive-message parts for the ClusterQueue's admission checks:
 * "references missing AdmissionCheck(s): [a b]", "references inactive
 * AdmissionCheck(s): [c]" joined by ", "; NULL when all are active. */
static char *checks_inactive_message(struct ctrl *c, const struct api_cluster_queue *cq)
{
    struct sbuf missing, inactive;
    sbuf_init(&missing, 0);
    sbuf_init(&inactive, 0);
    for (size_t i = 0; i < cq->n_checks; i++) {
        json_t *ac = store_get(ctrl_store(c), KIND_ADMISSIONCHECK, NULL, cq->checks[i].name);
        struct sbuf *sb = !ac ? &missing : !api_cond_is_true(ac, "Active") ? &inactive : NULL;
        if (sb)
            sbuf_addf(sb, "%s%s", sb->len ? " " : "", cq->checks[i].name);
        json_decref(ac);
    }
    char *out = NULL;
    if (missing.len && inactive.len)
        out = xasprintf("references missing AdmissionCheck(s): [%s], references inactive "
                        "AdmissionCheck(s): [%s]",
                        missing.buf, inactive.buf);
    else if (missing.len)
        out = xasprintf("references missing AdmissionCheck(s): [%s]", missing.buf);
    else if (inactive.len)
        out = xasprintf("references inactive AdmissionCheck(s): [%s]", inactive.buf);
    sbuf_release(&missing);
    sbuf_release(&inactive);
    return out;
}

static void upsert_cq(struct ctrl *c, struct sched *s, const json_t *obj)
{
    struct api_cluster_queue cq;
    memset(&cq, 0, sizeof(cq));
    if (api_cluster_queue_from_json(obj, &cq) == 0) {
        char *msg = checks_inactive_message(c, &cq);
        if (api_is_deleting(obj)) {
            xfree(msg);
            msg = xstrdup(ENG_CQ_TERMINATING);
        }
        eng_upsert_cluster_queue(s->eng, &cq, msg);
        xfree(msg);
    }
    api_cluster_queue_release(&cq);
    kq_queues_mark_cq(s->queues, api_name(obj));
}

static void upsert_all_cqs(struct ctrl *c, struct sched *s)
{
    json_t *cqs = store_list(ctrl_store(c), KIND_CLUSTERQUEUE, NULL, NULL);
    size_t i;
    json_t *cq;
    json_array_foreach(cqs, i, cq) {
        upsert_cq(c, s, cq);
    }
    json_decref(cqs);
}

/* Expected run time of a Workload for eng_explain (ms, 0 = unknown): the
 * annotation cueue.dev/expected-runtime-seconds (copied from the job;
 * `cueue sim` sets it from its durations) when it is a number of seconds
 * greater than 0 and at most 100 years, else the job's
 * activeDeadlineSeconds (its longest run). */
static int64_t expected_runtime(struct ctrl *c, const struct kq_wl_meta *meta)
{
    const char *ann =
        json_string_value(json_object_get(meta->annotations, KQ_EXPECTED_RUNTIME_ANNOTATION));
    if (ann) {
        char *end = NULL;
        errno = 0;
        double v = strtod(ann, &end);
        if (end != ann && !*end && !errno && isfinite(v) && v > 0 && v <= 3153600000.0)
            return (int64_t)(v * 1000.0);
    }
    const json_t *ref = kq_controller_ref_in(meta->owner_references);
    const char *kind = ref ? JX_STR(ref, "kind") : NULL;
    enum api_kind_id k = kind && !strcmp(kind, "Job")      ? KIND_JOB
                         : kind && !strcmp(kind, "RayJob") ? KIND_RAYJOB
                                                           : KIND__COUNT;
    if (k == KIND__COUNT)
        return 0;
    json_t *job = store_get(ctrl_store(c), k, meta->ns, JX_STR(ref, "name"));
    int64_t ads = JX_INT(job, 0, "spec", "activeDeadlineSeconds");
    json_decref(job);
    return ads > 0 ? ads * 1000 : 0;
}

/* Keep the sets blockAdmission looks at (§2.11); without blockAdmission
 * (fixed at ctrl_new) nothing looks at them. */
static void track_readiness(struct ctrl *c, struct sched *s, const json_t *obj, bool deleted)
{
    const struct ctrl_config *cfg = ctrl_cfg(c);
    if (!cfg->wait_for_pods_ready || !cfg->pods_ready_block_admission)
        return;
    char *key = kq_key(api_namespace(obj), api_name(obj));
    bool live = !deleted && !kq_wl_is_finished(obj) && !api_is_deleting(obj);
    if (live && kq_wl_is_admitted(obj) && !kq_wl_is_evicted(obj) &&
        !api_cond_is_true(obj, "PodsReady"))
        kq_set_add(s->not_ready, key);
    else
        kq_set_remove(s->not_ready, key);
    if (live && !kq_wl_has_reservation(obj) && kq_wl_is_active(obj))
        kq_set_add(s->queued, key);
    else
        kq_set_remove(s->queued, key);
    xfree(key);
}

/* Decode obj and upsert it into the engine (the memo remembers what was
 * fed). Returns the decoded Admitted flag. */
static bool upsert_workload(struct sched *s, const json_t *obj)
{
    bool status_only = false;
    const struct api_workload *wl = kq_memo_decode(s->memo, obj, &status_only);
    if (!wl)
        return false;
    if (status_only) /* the engine's copy has these very pod sets */
        eng_upsert_workload_status(s->eng, wl);
    else
        eng_upsert_workload(s->eng, wl);
    bool admitted = wl->admitted;
    if (wl->finished) /* the engine keeps nothing of it */
        kq_memo_forget(s->memo, api_namespace(obj), api_name(obj));
    return admitted;
}

/* A Workload event. force: feed the engine even when the memo says it has
 * this state already (it assumed a decision that could not be applied). */
static void observe_workload(struct ctrl *c, struct sched *s, const struct store_event *ev,
                             bool force)
{
    const json_t *obj = ev->obj;
    bool deleted = ev->type == STORE_DELETED;
    track_readiness(c, s, obj, deleted);
    struct kq_wl_meta meta; /* read once, with what the memo reads next */
    kq_memo_meta(s->memo, obj, &meta);
    /* a deleting Workload is no longer queued; its reservation, if any,
     * counts until it is gone */
    if (deleted || (meta.deleting && !kq_wl_has_reservation(obj))) {
        eng_delete_workload(s->eng, meta.ns, meta.name);
        kq_memo_forget(s->memo, meta.ns, meta.name);
    } else {
        bool admitted = false;
        bool changed = force || !kq_memo_same(s->memo, obj, &admitted);
        if (changed && !force && kq_memo_finished(s->memo, obj)) {
            /* what upsert_workload does with it, without decoding it */
            eng_delete_workload(s->eng, meta.ns, meta.name);
            kq_memo_forget(s->memo, meta.ns, meta.name);
            changed = false;
        } else if (changed) {
            admitted = upsert_workload(s, obj);
        }
        if (changed || admitted) {
            int64_t run = expected_runtime(c, &meta);
            bool has_end = admitted && run > 0;
            int64_t end = has_end ? api_cond_time_ms(obj, "Admitted") + run : 0;
            /* the engine keeps both: give them only when they change */
            if (kq_memo_expected_changed(s->memo, meta.ns, meta.name, run, has_end, end)) {
                eng_set_expected_runtime(s->eng, meta.ns, meta.name, run);
                if (has_end)
                    eng_set_expected_end(s->eng, meta.ns, meta.name, end);
            }
        }
    }
    /* the queue controller's record of the Workload, reached from the
     * memo's (found above) without a lookup in its own table */
    kq_queues_observe_workload(s->queues, c, obj, deleted,
                               kq_memo_link(s->memo, meta.ns, meta.name));
}

static void observe_flavor(struct ctrl *c, struct sched *s, const struct store_event *ev)
{
    if (ev->type == STORE_DELETED) {
        eng_delete_flavor(s->eng, api_name(ev->obj));
        return;
    }
    struct api_resource_flavor rf;
    memset(&rf, 0, sizeof(rf));
    if (api_resource_flavor_from_json(ev->obj, &rf) == 0)
        eng_upsert_flavor(s->eng, &rf);
    api_resource_flavor_release(&rf);
    if (api_is_deleting(ev->obj))
        ctrl_enqueue(c, s->rid, NULL, api_name(ev->obj)); /* finalizer check */
}

/* True when a queue object's event carries a spec the engine has not seen
 * (status-only writes, e.g. ours, are not fed again). Forgets deleted ones. */
static bool spec_changed(struct sched *s, const struct store_event *ev)
{
    /* "<kind>/<ns>/<name>", on the stack when it fits (a queue's status
     * write comes back here every time it is flushed) */
    const json_t *md = json_object_get(ev->obj, "metadata"); /* read once */
    const char *ns = jx_or_empty(JX_STR(md, "namespace")), *nm = jx_or_empty(JX_STR(md, "name"));
    char kind[12];
    char *kp = kind + sizeof(kind);
    *--kp = '\0';
    for (unsigned k = (unsigned)ev->kind;; k /= 10) {
        *--kp = (char)('0' + k % 10);
        if (k < 10)
            break;
    }
    size_t kl = strlen(kp), nl = strlen(ns), ml = strlen(nm), len = kl + 1 + nl + 1 + ml;
    char buf[256];
    char *key = len < sizeof(buf) ? buf : xmalloc(len + 1);
    memcpy(key, kp, kl);
    key[kl] = '/';
    memcpy(key + kl + 1, ns, nl);
    key[kl + 1 + nl] = '/';
    memcpy(key + kl + 2 + nl, nm, ml + 1);
    struct spec_seen *seen;
    HASH_FIND(hh, s->seen, key, len, seen);
    int64_t gen = JX_INT(md, 0, "generation");
    bool deleting = json_is_string(json_object_get(md, "deletionTimestamp")); /* api_is_deleting */
    bool changed = !seen || seen->generation != gen || seen->deleting != deleting ||
                   ev->type != STORE_MODIFIED;
    if (ev->type == STORE_DELETED) {
        if (seen) {
            HASH_DEL(s->seen, seen);
            xfree(seen->key);
            xfree(seen);
        }
    } else {
        if (!seen) {
            seen = xcalloc(1, sizeof(*seen));
            seen->key = key == buf ? xstrdup(buf) : key;
            key = buf;
            HASH_ADD_KEYPTR(hh, s->seen, seen->key, len, seen);
        }
        seen->generation = gen;
        seen->deleting = deleting;
    }
    if (key != buf)
        xfree(key);
    return changed;
}

static void enqueue_check_finalizer(struct ctrl *c, struct sched *s, const char *name)
{
    char *key = xasprintf(AC_KEY_PREFIX "%s", name);
    ctrl_enqueue(c, s->rid, NULL, key);
    xfree(key);
}

/* A ClusterQueue went away or changed its spec: flavors and admission
 * checks waiting to be deleted may no longer be in use, so their
 * finalizers are looked at again. */
static void recheck_deleting_flavors(struct ctrl *c, struct sched *s)
{
    json_t *rfs = store_list(ctrl_store(c), KIND_RESOURCEFLAVOR, NULL, NULL);
    size_t i;
    json_t *o;
    json_array_foreach(rfs, i, o) {
        if (api_is_deleting(o))
            ctrl_enqueue(c, s->rid, NULL, api_name(o));
    }
    json_decref(rfs);
    json_t *acs = store_list(ctrl_store(c), KIND_ADMISSIONCHECK, NULL, NULL);
    json_array_foreach(acs, i, o) {
        if (api_is_deleting(o))
            enqueue_check_finalizer(c, s, api_name(o));
    }
    json_decref(acs);
}

static void observe_queue(struct ctrl *c, struct sched *s, const struct store_event *ev)
{
    const json_t *obj = ev->obj;
    bool del = ev->type == STORE_DELETED;
    if (!spec_changed(s, ev)) {
        /* someone wrote its status: ours is the truth, write it again */
        if (ev->kind == KIND_CLUSTERQUEUE || ev->kind == KIND_LOCALQUEUE)
            kq_queues_observe_status(s->queues, ev->kind, obj);
        return;
    }
    if (ev->kind == KIND_CLUSTERQUEUE) {
        if (del)
            eng_delete_cluster_queue(s->eng, api_name(obj));
        else
            upsert_cq(c, s, obj);
        recheck_deleting_flavors(c, s);
        return;
    }
    if (ev->kind == KIND_COHORT) {
        struct api_cohort co;
        memset(&co, 0, sizeof(co));
        if (del)
            eng_delete_cohort(s->eng, api_name(obj));
        else if (api_cohort_from_json(obj, &co) == 0)
            eng_upsert_cohort(s->eng, &co);
        api_cohort_release(&co);
        return;
    }
    /* LocalQueue */
    struct api_local_queue lq;
    memset(&lq, 0, sizeof(lq));
    if (del)
        eng_delete_local_queue(s->eng, api_namespace(obj), api_name(obj));
    else if (api_local_queue_from_json(obj, &lq) == 0)
        eng_upsert_local_queue(s->eng, &lq);
    api_local_queue_release(&lq);
    if (!del)
        kq_queues_mark_lq(s->queues, api_namespace(obj), api_name(obj));
}

/* Kueue TAS: a Topology object (spec.levels[].nodeLabel) into the engine. */
static void observe_topology(struct ctrl *c, struct sched *s, const struct store_event *ev)
{
    const char *name = api_name(ev->obj);
    if (ev->type == STORE_DELETED) {
        eng_delete_topology(s->eng, name);
    } else {
        const json_t *levels = JX_GET(ev->obj, "spec", "levels");
        size_t n = json_array_size(levels);
        const char **keys = xcalloc(n + 1, sizeof(*keys));
        for (size_t i = 0; i < n; i++)
            keys[i] = jx_or_empty(JX_STR(json_array_get(levels, i), "nodeLabel"));
        eng_upsert_topology(s->eng, name, keys, n);
        xfree(keys);
    }
    json_t *all = store_list(ctrl_store(c), KIND_TOPOLOGY, NULL, NULL);
    s->n_topologies = (int)json_array_size(all);
    json_decref(all);
    s->nodes_dirty = true;
}

/* Kueue TAS: the engine's node set again, only while a Topology exists
 * and a Node or Pod changed since (kq_tas_feed_nodes). */
static void feed_nodes(struct ctrl *c, struct sched *s)
{
    if (!s->nodes_dirty || s->n_topologies == 0)
        return;
    s->nodes_dirty = false;
    kq_tas_feed_nodes(ctrl_store(c), s->eng);
}

static void sched_on_event(struct ctrl *c, void *self, const struct store_event *ev)
{
    struct sched *s = self;
    switch (ev->kind) {
    case KIND_TOPOLOGY:
        observe_topology(c, s, ev);
        break;
    case KIND_NODE:
    case KIND_POD:
        s->nodes_dirty = true;
        break;
    case KIND_WORKLOAD:
        observe_workload(c, s, ev, false);
        break;
    case KIND_RESOURCEFLAVOR:
        observe_flavor(c, s, ev);
        break;
    case KIND_CLUSTERQUEUE:
    case KIND_COHORT:
    case KIND_LOCALQUEUE:
        observe_queue(c, s, ev);
        break;
    case KIND_NAMESPACE:
        if (ev->type == STORE_DELETED) {
            eng_delete_namespace(s->eng, api_name(ev->obj));
        } else {
            struct api_labels l = {0};
            api_labels_from_json(JX_GET(ev->obj, "metadata", "labels"), &l);
            eng_upsert_namespace(s->eng, api_name(ev->obj), &l);
            api_labels_release(&l);
        }
        break;
    case KIND_ADMISSIONCHECK:
        s->checks_changed = true;
        if (api_is_deleting(ev->obj) && ev->type != STORE_DELETED)
            enqueue_check_finalizer(c, s, api_name(ev->obj));
        break;
    case KIND_WORKLOADPRIORITYCLASS:
        if (ev->type != STORE_DELETED) {
            char *key = xasprintf(WPC_KEY_PREFIX "%s", api_name(ev->obj));
            ctrl_enqueue(c, s->rid, NULL, key);
            xfree(key);
        }
        break;
    default:
        break;
    }
}

/* A WorkloadPriorityClass value changed: update the Workloads using it. */
static void sync_priority_class(struct ctrl *c, struct sched *s, const char *name)
{
    json_t *wpc = store_get(ctrl_store(c), KIND_WORKLOADPRIORITYCLASS, NULL, name);
    if (!wpc)
        return;
    int64_t value = JX_INT(wpc, 0, "value");
    json_decref(wpc);
    json_t *wls = store_list(ctrl_store(c), KIND_WORKLOAD, NULL, NULL);
    size_t i;
    json_t *wl;
    json_array_foreach(wls, i, wl) {
        const char *cls = JX_STR(wl, "spec", "priorityClassName");
        const char *src = JX_STR(wl, "spec", "priorityClassSource");
        if (!cls || strcmp(cls, name) || (src && strcmp(src, KQ_WPC_SOURCE)) ||
            JX_INT(wl, 0, "spec", "priority") == value || kq_wl_is_finished(wl))
            continue;
        json_t *cp = jx_deep_copy(wl);
        JX_SET_NEW(cp, json_integer(value), "spec", "priority");
        if (kq_update(c, KIND_WORKLOAD, cp, STORE_UPDATE_MAIN) == CU_ECONFLICT) {
            char *key = xasprintf(WPC_KEY_PREFIX "%s", name);
            ctrl_enqueue(c, s->rid, NULL, key);
            xfree(key);
        }
        json_decref(cp);
    }
    json_decref(wls);
}

/* A deleting ResourceFlavor or AdmissionCheck keeps its finalizer while a
 * ClusterQueue uses it (Kueue's resource-in-use finalizer). */
static void sync_in_use_finalizer(struct ctrl *c, enum api_kind_id kind, const char *name)
{
    json_t *obj = store_get(ctrl_store(c), kind, NULL, name);
    if (!obj || !api_is_deleting(obj)) {
        json_decref(obj);
        return;
    }
    json_decref(obj);
    json_t *cqs = store_list(ctrl_store(c), KIND_CLUSTERQUEUE, NULL, NULL);
    bool used = false;
    size_t i;
    json_t *cq;
    json_array_foreach(cqs, i, cq) {
        used |= kind == KIND_ADMISSIONCHECK ? api_cluster_queue_uses_check(cq, name)
                                            : api_cluster_queue_uses_flavor(cq, name);
    }
    json_decref(cqs);
    if (!used)
        kq_remove_finalizer(c, kind, NULL, name, KQ_RESOURCE_IN_USE_FINALIZER);
}

static void sched_reconcile(struct ctrl *c, void *self, const char *ns, const char *name)
{
    struct sched *s = self;
    (void)ns;
    if (!strncmp(name, WPC_KEY_PREFIX, strlen(WPC_KEY_PREFIX)))
        sync_priority_class(c, s, name + strlen(WPC_KEY_PREFIX));
    else if (!strncmp(name, AC_KEY_PREFIX, strlen(AC_KEY_PREFIX)))
        sync_in_use_finalizer(c, KIND_ADMISSIONCHECK, name + strlen(AC_KEY_PREFIX));
    else
        sync_in_use_finalizer(c, KIND_RESOURCEFLAVOR, name);
}

/* ---- decisions ---- */

/* Re-read a Workload and feed its real state back (a decision could not be
 * applied). */
static void resync_workload(struct ctrl *c, struct sched *s, const struct eng_wl_ref *ref)
{
    json_t *obj = store_get(ctrl_store(c), KIND_WORKLOAD, ref->ns, ref->name);
    struct store_event ev = {obj ? STORE_MODIFIED : STORE_DELETED, KIND_WORKLOAD, 0, obj};
    if (!obj) {
        eng_delete_workload(s->eng, ref->ns, ref->name);
        kq_memo_forget(s->memo, ref->ns, ref->name);
        return;
    }
    observe_workload(c, s, &ev, true);
    json_decref(obj);
}

/* The status members a preemption only replaces or removes. */
static const char *const REPLACED_ONLY[] = {"admission", "resourceRequests", NULL};
/* The status members a reservation or a pending decision leaves alone or
 * replaces whole (only the conditions change inside: api_cond_set copies
 * what it changes); a preemption changes admissionChecks and
 * schedulingStats in place (kq_wl_evict). */
static const char *const REPLACED_OR_KEPT[] = {"admission",
                                               "resourceRequests",
                                               "admissionChecks",
                                               "requeueState",
                                               "reclaimablePods",
                                               "schedulingStats",
                                               "accumulatedPastExexcutionTimeSeconds",
                                               NULL};

/* The Workload a decision names, if it is still the same object (uid), as
 * a copy whose status may be changed (store_get_status_copy: the rest is
 * the stored document's and must not be; so are the shared status members,
 * which the decision replaces whole: shared is REPLACED_ONLY or
 * REPLACED_OR_KEPT). */
static json_t *decision_target(struct ctrl *c, const struct eng_wl_ref *ref,
                               const char *const *shared)
{
    json_t *wl = store_get_status_copy(ctrl_store(c), KIND_WORKLOAD, ref->ns, ref->name, shared);
    const char *uid = wl && ref->uid ? api_uid(wl) : NULL;
    if (uid && strcmp(ref->uid, uid)) {
        json_decref(wl);
        return NULL;
    }
    return wl;
}

/* kq_wl_is_finished(wl) || kq_wl_has_reservation(wl), from wl's first
 * Finished (c[0]) and QuotaReserved (c[1]) conditions: a reservation or
 * pending decision no longer applies. */
static bool finished_or_reserved_in(const json_t *wl, const json_t *const c[2])
{
    return api_cond_holds(c[0]) ||
           (api_cond_holds(c[1]) && JX_GET(wl, "status", "admission") != NULL);
}

/* finished_or_reserved_in, from one scan of the conditions. */
static bool finished_or_reserved(const json_t *wl)
{
    static const char *const types[] = {"Finished", "QuotaReserved"};
    const json_t *c[2];
    api_cond_get_all(wl, types, 2, c);
    return finished_or_reserved_in(wl, c);
}

/* now_ms as a lastTransitionTime api_cond_set writes at now_ms reads
 * back (api_cond_ltt_ms): RFC 3339 with whole seconds, so rounded down
 * to the second. */
static int64_t transition_ms_of(int64_t now_ms)
{
    int64_t r = now_ms % 1000;
    return now_ms - (r < 0 ? r + 1000 : r);
}

/* Write a decision's Workload status (*wl: a decision_target copy of the
 * Workload ref names, the caller's only reference), which the store keeps
 * as it is, without a copy. On success *wl is the stored document (the
 * same object, or an equal one), on failure still the caller's copy:
 * readable either way, but never changed again. */
static int write_status(struct ctrl *c, const struct eng_wl_ref *ref, json_t **wl)
{
    return store_update_status_take(ctrl_store(c), KIND_WORKLOAD, ref->ns, wl);
}

/* json_object_set_new(obj, key, v) without jansson's character-by-
 * character UTF-8 check of key when key is ASCII (resource and flavor
 * names are). */
static void set_named(json_t *obj, const char *key, json_t *v)
{
    size_t n = 0;
    unsigned char high = 0;
    for (; key[n]; n++)
        high |= (unsigned char)key[n];
    if (high < 0x80)
        json_object_setn_new_nocheck(obj, key, n, v);
    else
        json_object_set_new(obj, key, v);
}

json_t *kq_topology_assignment_json(const struct api_topology_assignment *ta)
{
    json_t *levels = json_array(), *domains = json_array();
    for (size_t l = 0; l < ta->n_levels; l++)
        json_array_append_new(levels, jx_string(ta->levels[l]));
    for (size_t d = 0; d < ta->n_domains; d++) {
        json_t *vals = json_array();
        for (size_t l = 0; l < ta->n_levels; l++)
            json_array_append_new(vals, jx_string(ta->domains[d].values[l]));
        json_t *dom = json_object();
        JX_SET_LIT(dom, "values", vals);
        JX_SET_LIT(dom, "count", json_integer(ta->domains[d].count));
        json_array_append_new(domains, dom);
    }
    json_t *out = json_object();
    JX_SET_LIT(out, "levels", levels);
    JX_SET_LIT(out, "domains", domains);
    return out;
}

json_t *kq_admission_json(const struct api_admission *a, const char *cq)
{
    json_t *psas = json_array();
    for (size_t i = 0; i < a->n_podsets; i++) {
        const struct api_podset_assignment *p = &a->podsets[i];
        json_t *flv = json_object();
        for (size_t j = 0; j < p->flavors.n; j++)
            set_named(flv, p->flavors.items[j].key, jx_string(p->flavors.items[j].value));
        json_t *use = json_object();
        for (size_t j = 0; j < p->resource_usage.n; j++)
            set_named(use, p->resource_usage.items[j].name,
                      kq_quantity_json(p->resource_usage.items[j].value,
                                       p->resource_usage.items[j].name));
        /* built directly: json_pack parses its format at every call */
        json_t *psa = json_object();
        JX_SET_LIT(psa, "name", jx_string(p->name));
        JX_SET_LIT(psa, "flavors", flv);
        JX_SET_LIT(psa, "resourceUsage", use);
        JX_SET_LIT(psa, "count", json_integer(p->count));
        if (p->topology)
            JX_SET_LIT(psa, "topologyAssignment", kq_topology_assignment_json(p->topology));
        json_array_append_new(psas, psa);
    }
    json_t *out = json_object();
    JX_SET_LIT(out, "clusterQueue", jx_string(a->cluster_queue ? a->cluster_queue : cq));
    JX_SET_LIT(out, "podSetAssignments", psas);
    return out;
}

/* The key of kq_admission_json(a, cq) in t: every value it reads. */
static void adm_key(struct kq_shared *t, const struct api_admission *a, const char *cq)
{
    kq_shared_key_reset(t);
    kq_shared_key_str(t, a->cluster_queue ? a->cluster_queue : cq);
    kq_shared_key_int(t, (int64_t)a->n_podsets);
    for (size_t i = 0; i < a->n_podsets; i++) {
        const struct api_podset_assignment *p = &a->podsets[i];
        kq_shared_key_str(t, p->name);
        kq_shared_key_int(t, p->count);
        kq_shared_key_int(t, (int64_t)p->flavors.n);
        for (size_t j = 0; j < p->flavors.n; j++) {
            kq_shared_key_str(t, p->flavors.items[j].key);
            kq_shared_key_str(t, p->flavors.items[j].value);
        }
        kq_shared_key_int(t, (int64_t)p->resource_usage.n);
        for (size_t j = 0; j < p->resource_usage.n; j++) {
            kq_shared_key_str(t, p->resource_usage.items[j].name);
            kq_shared_key_int(t, p->resource_usage.items[j].value);
        }
        const struct api_topology_assignment *ta = p->topology;
        kq_shared_key_int(t, ta ? (int64_t)ta->n_domains : -1);
        for (size_t l = 0; ta && l < ta->n_levels; l++)
            kq_shared_key_str(t, ta->levels[l]);
        for (size_t d = 0; ta && d < ta->n_domains; d++) {
            kq_shared_key_int(t, ta->domains[d].count);
            for (size_t l = 0; l < ta->n_levels; l++)
                kq_shared_key_str(t, ta->domains[d].values[l]);
        }
    }
}

/* kq_admission_json(a, cq) as a new reference to a value shared by every
 * Workload admitted with the same assignment (many are, in every
 * ClusterQueue): built once, not per reservation, and freed once. Sharing
 * is safe as for api_cond_set's shared conditions: stored documents are
 * immutable, and a status.admission is only ever replaced or removed
 * whole (REPLACED_OR_KEPT, kq_wl_clear_reservation), never changed in
 * place. */
static json_t *admission_shared(struct sched *s, const struct api_admission *a, const char *cq)
{
    adm_key(s->adms, a, cq);
    json_t *v = kq_shared_find(s->adms);
    return v ? v : kq_shared_keep(s->adms, kq_admission_json(a, cq));
}

/* JX_SET_NEW(wl, v, "status", key) (v taken), without walking the path
 * or checking key's UTF-8 (an ASCII literal) when wl has a status. */
static void set_status_member(json_t *wl, const char *key, json_t *v)
{
    json_t *st = json_object_get(wl, "status");
    if (json_is_object(st))
        json_object_setn_new_nocheck(st, key, strlen(key), v);
    else
        JX_SET_NEW(wl, v, "status", key);
}

/* Reset the active Evicted and Preempted conditions on reservation (§2.9).
 * conds: wl's first Evicted and Preempted conditions, found before wl's
 * conditions changed: still alive (the stored document's, or wl's own
 * array's), and setting one condition leaves the others as they are. */
static void reset_on_reserve(json_t *wl, int64_t now, const json_t *const conds[2])
{
    static const char *const types[] = {"Evicted", "Preempted"};
    for (size_t i = 0; i < 2; i++) {
        if (!api_cond_holds(conds[i]))
            continue;
        const char *was = jx_or_empty(JX_STR(conds[i], "message"));
        size_t n = strlen(was);
        char *msg = xmalloc(sizeof("Previously: ") + n);
        memcpy(msg, "Previously: ", sizeof("Previously: ") - 1);
        memcpy(msg + sizeof("Previously: ") - 1, was, n + 1);
        api_cond_set(wl, types[i], "False", "QuotaReserved", msg, now);
        xfree(msg);
    }
}

/* Elastic slices: the replaced slice finishes (kueue.md §5). */
static void finish_replaced(struct ctrl *c, const struct eng_decision *d, const json_t *wl)
{
    if (!d->replaces.ns)
        return;
    json_t *old = kq_get_copy(c, KIND_WORKLOAD, d->replaces.ns, d->replaces.name);
    if (!old || kq_wl_is_finished(old)) {
        json_decref(old);
        return;
    }
    char *msg = xasprintf("Replaced to accommodate a workload (UID: %s, JobUID: %s) due to "
                          "workload slice aggregation",
                          jx_or_empty(api_uid(wl)),
                          jx_or_empty(api_label(wl, KQ_JOB_UID_LABEL)));
    kq_wl_finish(c, old, "WorkloadSliceReplaced", msg);
    ctrl_event(c, old, "Normal", "Replaced", "%s", msg);
    kq_update(c, KIND_WORKLOAD, old, STORE_UPDATE_STATUS);
    xfree(msg);
    json_decref(old);
}

/* Hand the memo d's admission (taken: d's is left empty), which adm, the
 * status.admission written for it, decodes to, so that the Workload event
 * of the write does not decode adm again (kq_memo_admission_hint). Only
 * in the shape decoding gives: kq_admission_json writes the cluster queue
 * d names when the admission names none, and decoding sorts the flavors
 * and the usage by resource; the quantities read back exactly
 * (kq_quantity_json, test_ctrl_memo). */
static void hint_admission(struct sched *s, struct eng_decision *d, json_t *adm)
{
    struct api_admission *a = &d->admission;
    if (!a->cluster_queue && d->cluster_queue)
        a->cluster_queue = xstrdup(d->cluster_queue);
    if (api_admission_is_canonical(a))
        kq_memo_admission_hint(s->memo, d->wl.ns, d->wl.name, adm, a);
}

static void apply_reserve(struct ctrl *c, struct sched *s, struct eng_decision *d)
{
    json_t *wl = decision_target(c, &d->wl, REPLACED_OR_KEPT);
    /* the conditions read here, in one scan: the first two decide, the
     * others are reset */
    static const char *const types[] = {"Finished", "QuotaReserved", "Evicted", "Preempted"};
    const json_t *conds[4];
    if (wl)
        api_cond_get_all(wl, types, 4, conds);
    if (!wl || finished_or_reserved_in(wl, conds) || api_is_deleting(wl)) {
        json_decref(wl);
        resync_workload(c, s, &d->wl);
        return;
    }
    bool qr_held = api_cond_holds(conds[1]);
    int64_t now = ctrl_now(c);
    json_t *adm = admission_shared(s, &d->admission, d->cluster_queue);
    set_status_member(wl, "admission", adm); /* taken; wl holds it */
    /* "Quota reserved in ClusterQueue <cq>", without printf */
    static const char prefix[] = "Quota reserved in ClusterQueue ";
    const char *cqn = d->cluster_queue ? d->cluster_queue : "(null)"; /* as printf did */
    size_t cl = strlen(cqn);
    char buf[256];
    char *msg = sizeof(prefix) + cl <= sizeof(buf) ? buf : xmalloc(sizeof(prefix) + cl);
    memcpy(msg, prefix, sizeof(prefix) - 1);
    memcpy(msg + sizeof(prefix) - 1, cqn, cl + 1);
    api_cond_set(wl, "QuotaReserved", "True", "QuotaReserved", msg, now);
    if (msg != buf)
        xfree(msg);
    reset_on_reserve(wl, now, conds + 2);
    struct kq_check_rule *rules;
    size_t n;
    kq_cq_check_rules(c, d->cluster_queue, &rules, &n);
    /* no rules and no checks: nothing to sync, and all (none) are ready */
    bool no_checks = n == 0 && !JX_GET(wl, "status", "admissionChecks");
    if (!no_checks) {
        json_t *names = kq_checks_for_admission(rules, n, JX_GET(wl, "status", "admission"));
        kq_wl_sync_checks(wl, names, now);
        json_decref(names);
    }
    kq_rules_release(rules, n);
    ctrl_event(c, wl, "Normal", "QuotaReserved", "%s",
               d->event_message ? d->event_message : "Quota reserved");
    if (ctrl_traces(c, "QuotaReserved")) {
        json_t *f = kq_wl_trace_fields(wl, d->cluster_queue);
        json_object_set_new(f, "podSets", kq_wl_trace_podsets(wl));
        if (d->borrowing)
            json_object_set_new(f, "borrowing", json_true());
        ctrl_trace(c, "QuotaReserved", f);
    }
    if (no_checks || kq_wl_all_checks_ready(wl))
        /* QuotaReserved flipped to True now unless it held already */
        kq_wl_set_admitted_at(c, wl,
                              d->admission.cluster_queue ? d->admission.cluster_queue
                                                         : d->cluster_queue,
                              qr_held ? -1 : transition_ms_of(now));
    else
        api_cond_set(wl, "Admitted", "False", "UnsatisfiedAdmissionChecks",
                     "The workload has not all checks ready", now);
    hint_admission(s, d, adm);
    if (write_status(c, &d->wl, &wl) != 0) {
        resync_workload(c, s, &d->wl);
    } else {
        ctrl_metrics_quota_reserved(c, wl, d->cluster_queue, now);
        finish_replaced(c, d, wl);
    }
    json_decref(wl);
}

/* kueue_preempted_workloads_total: labelled with the preemptor's
 * ClusterQueue (its LocalQueue's), which the decision does not carry. */
static void count_preemption(struct ctrl *c, const struct eng_decision *d, const char *reason)
{
    json_t *p = store_get(ctrl_store(c), KIND_WORKLOAD, d->preemptor.ns, d->preemptor.name);
    char *cq = p ? kq_wl_queue_cq(c, p) : NULL;
    ctrl_metrics_preempted(c, cq, reason);
    xfree(cq);
    json_decref(p);
}

static void apply_preempt(struct ctrl *c, struct sched *s, const struct eng_decision *d)
{
    json_t *wl = decision_target(c, &d->wl, REPLACED_ONLY);
    if (!wl || kq_wl_is_finished(wl) || kq_wl_is_evicted(wl)) {
        json_decref(wl);
        resync_workload(c, s, &d->wl);
        return;
    }
    const char *msg = d->message ? d->message : "Preempted";
    const char *reason = d->reason ? d->reason : "InClusterQueue";
    kq_wl_evict(c, wl, "Preempted", reason, msg);
    api_cond_set(wl, "Preempted", "True", reason, msg, ctrl_now(c));
    ctrl_event(c, wl, "Normal", "Preempted", "%s", msg);
    if (ctrl_traces(c, "Preempted")) {
        json_t *f = kq_wl_trace_fields(wl, d->cluster_queue ? d->cluster_queue
                                                            : kq_wl_cluster_queue(wl));
        char *pk = kq_key(d->preemptor.ns, d->preemptor.name);
        json_object_set_new(f, "preemptor", json_string(pk));
        xfree(pk);
        json_object_set_new(f, "reason", json_string(reason));
        json_object_set_new(f, "message", json_string(msg));
        ctrl_trace(c, "Preempted", f);
    }
    if (write_status(c, &d->wl, &wl) != 0)
        resync_workload(c, s, &d->wl);
    else
        count_preemption(c, d, reason);
    json_decref(wl);
}

/* status.resourceRequests: per pod set, the total requests of its pods. */
static json_t *resource_requests(const struct api_workload *wl)
{
    json_t *out = json_array();
    for (size_t i = 0; i < wl->n_podsets; i++) {
        const struct api_podset *ps = &wl->podsets[i];
        json_t *res = json_object();
        for (size_t j = 0; j < ps->requests.n; j++) {
            int64_t per = ps->requests.items[j].value;
            int64_t total = per > INT64_MAX / (ps->count > 0 ? ps->count : 1)
                                ? INT64_MAX
                                : per * ps->count;
            set_named(res, ps->requests.items[j].name,
                      kq_quantity_json(total, ps->requests.items[j].name));
        }
        json_t *item = json_object();
        JX_SET_LIT(item, "name", jx_string(ps->name));
        JX_SET_LIT(item, "resources", res);
        json_array_append_new(out, item);
    }
    return out;
}

/* resource_requests(wl) as a new reference to a value shared by every
 * Workload with the same pod sets (names, counts, requests), as
 * admission_shared: a status.resourceRequests is only ever replaced whole. */
static json_t *resource_requests_shared(struct sched *s, const struct api_workload *wl)
{
    struct kq_shared *t = s->rrs;
    kq_shared_key_reset(t);
    kq_shared_key_int(t, (int64_t)wl->n_podsets);
    for (size_t i = 0; i < wl->n_podsets; i++) {
        const struct api_podset *ps = &wl->podsets[i];
        kq_shared_key_str(t, ps->name);
        kq_shared_key_int(t, ps->count);
        kq_shared_key_int(t, (int64_t)ps->requests.n);
        for (size_t j = 0; j < ps->requests.n; j++) {
            kq_shared_key_str(t, ps->requests.items[j].name);
            kq_shared_key_int(t, ps->requests.items[j].value);
        }
    }
    json_t *v = kq_shared_find(t);
    return v ? v : kq_shared_keep(t, resource_requests(wl));
}

/* What resource_requests_of reads: the scheduler and the Workload
 * document. */
struct rr_ctx {
    struct sched *s;
    const json_t *obj;
};

/* resource_requests of the document's spec (kq_memo_requests_or's
 * compute), from known, the Workload the memo decoded from that spec,
 * when there is one. */
static json_t *resource_requests_of(void *ctx, const struct api_workload *known)
{
    struct rr_ctx *x = ctx;
    if (known)
        return resource_requests_shared(x->s, known);
    struct api_workload wl;
    memset(&wl, 0, sizeof(wl));
    json_t *out = api_workload_from_json(x->obj, &wl) == 0 ? resource_requests(&wl) : json_array();
    api_workload_release(&wl);
    return out;
}

static void apply_pending(struct ctrl *c, struct sched *s, const struct eng_decision *d)
{
    json_t *wl = decision_target(c, &d->wl, REPLACED_OR_KEPT);
    if (!wl || finished_or_reserved(wl)) {
        json_decref(wl);
        resync_workload(c, s, &d->wl);
        return;
    }
    int64_t now = ctrl_now(c);
    const char *reason = d->reason ? d->reason : "Pending";
    const char *msg = d->message ? d->message : "";
    api_cond_set(wl, "QuotaReserved", "False", reason, msg, now);
    api_cond_set(wl, "Admitted", "False", "NoReservation", "The workload has no reservation", now);
    /* they follow the spec: computed once per spec value */
    struct rr_ctx x = {s, wl};
    json_t *rr = kq_memo_requests_or(s->memo, d->wl.ns, d->wl.name, wl, resource_requests_of, &x);
    set_status_member(wl, "resourceRequests", rr);
    int rc = write_status(c, &d->wl, &wl);
    ctrl_event(c, wl, "Warning", reason, "%s", msg);
    if (ctrl_traces(c, "Pending")) {
        json_t *f = kq_wl_trace_fields(wl, d->cluster_queue);
        json_object_set_new(f, "reason", json_string(reason));
        json_object_set_new(f, "message", json_string(msg));
        ctrl_trace(c, "Pending", f);
    }
    if (rc != 0)
        resync_workload(c, s, &d->wl);
    json_decref(wl);
}

struct block_ctx {
    struct ctrl *c;
    bool wrote;
};

static void mark_waiting_for_pods_ready(const char *key, void *arg)
{
    struct block_ctx *b = arg;
    const char *slash = strchr(key, '/');
    char *ns = xstrndup(key, (size_t)(slash - key));
    json_t *wl = kq_get_copy(b->c, KIND_WORKLOAD, ns, slash + 1);
    const char *reason = JX_STR(api_cond_get(wl, "QuotaReserved"), "reason");
    const char *msg = "waiting for all admitted workloads to be in PodsReady condition";
    if (wl && !kq_wl_has_reservation(wl) && (!reason || strcmp(reason, "WaitingForPodsReady"))) {
        int64_t now = ctrl_now(b->c);
        api_cond_set(wl, "QuotaReserved", "False", "WaitingForPodsReady", msg, now);
        api_cond_set(wl, "Admitted", "False", "NoReservation", "The workload has no reservation",
                     now);
        if (kq_update(b->c, KIND_WORKLOAD, wl, STORE_UPDATE_STATUS) == 0) {
            ctrl_event(b->c, wl, "Warning", "WaitingForPodsReady", "%s", msg);
            if (ctrl_traces(b->c, "Pending")) {
                char *cq = kq_wl_queue_cq(b->c, wl);
                json_t *f = kq_wl_trace_fields(wl, cq);
                json_object_set_new(f, "reason", json_string("WaitingForPodsReady"));
                json_object_set_new(f, "message", json_string(msg));
                ctrl_trace(b->c, "Pending", f);
                xfree(cq);
            }
            b->wrote = true;
        }
    }
    json_decref(wl);
    xfree(ns);
}

/* waitForPodsReady.blockAdmission (§2.11): while an admitted Workload's pods
 * are not ready, nothing new is admitted; the waiting ones say why. */
static bool admission_blocked(struct ctrl *c, struct sched *s, bool *wrote)
{
    const struct ctrl_config *cfg = ctrl_cfg(c);
    if (!cfg->wait_for_pods_ready || !cfg->pods_ready_block_admission ||
        kq_set_count(s->not_ready) == 0)
        return false;
    struct block_ctx b = {c, false};
    kq_set_each(s->queued, mark_waiting_for_pods_ready, &b);
    *wrote = b.wrote;
    return true;
}

/* Queue statuses are written once the step settles: in a round where
 * nothing happened before the hooks (ctrl__round_work) and the scheduler
 * itself decided and wrote nothing (its callers return true without
 * calling this then). Until then every round would rewrite the queues the
 * previous one changed; a skipped flush is always followed by another
 * round (the work or the decisions make one). */
static bool flush_when_settled(struct ctrl *c, struct sched *s)
{
    if (ctrl__round_work(c) > 0)
        return false;
    return kq_queues_flush(s->queues, c, s->eng);
}

/* One scheduling pass: decisions applied, queue statuses flushed when
 * settled. True when it wrote anything. */
static bool sched_round(struct ctrl *c, struct sched *s)
{
    if (s->checks_changed) {
        s->checks_changed = false;
        upsert_all_cqs(c, s);
    }
    bool blocked_wrote = false;
    if (admission_blocked(c, s, &blocked_wrote))
        return blocked_wrote || flush_when_settled(c, s);
    int64_t now = ctrl_now(c);
    feed_nodes(c, s);
    struct eng_result res = {0};
    double t0 = clk_mono_s();
    int n = eng_schedule(s->eng, now, 0, &res);
    ctrl_metrics_schedule_done(c, &res, t0);
    for (size_t i = 0; i < res.n; i++) {
        struct eng_decision *d = &res.items[i]; /* apply_reserve takes its admission */
        kq_queues_mark_cq(s->queues, d->cluster_queue);
        if (d->type == ENG_RESERVE)
            apply_reserve(c, s, d);
        else if (d->type == ENG_PREEMPT)
            apply_preempt(c, s, d);
        else
            apply_pending(c, s, d);
    }
    if (res.next_wakeup_ms > now && res.next_wakeup_ms != s->wake_at) {
        s->wake_at = res.next_wakeup_ms;
        ctrl_wake_at(c, res.next_wakeup_ms);
    }
    eng_result_release(&res);
    return n > 0 || flush_when_settled(c, s);
}

/* The round's end for the scheduler. It is the last reader of Workload
 * documents through kq_wl_view_peek in a round (the Workload controller's
 * and its own event handlers, its decisions' re-observations), so the
 * reading kept per thread is let go here, on the loop's own thread: no
 * document is held past the round, nor at shutdown. */
static bool sched_after_round(struct ctrl *c, void *self)
{
    bool did = sched_round(c, self);
    kq_wl_view_drop();
    return did;
}

/* ---- explain ---- */

struct explain_call {
    const char *ns;
    const char *name;
    json_t *out;
    int rc;
};

static json_t *explanation_json(const struct eng_explanation *x)
{
    json_t *blockers = json_array();
    for (size_t i = 0; i < x->n_blockers; i++) {
        const struct eng_blocker *b = &x->blockers[i];
        json_t *holders = json_array();
        for (size_t j = 0; j < b->n_holders; j++) {
            char *k = kq_key(b->holders[j].ns, b->holders[j].name);
            json_array_append_new(holders, json_string(k));
            xfree(k);
        }
        json_array_append_new(blockers,
                              json_pack("{s:s, s:s, s:o, s:o}", "flavor", jx_or_empty(b->flavor),
                                        "resource", jx_or_empty(b->resource), "needed",
                                        kq_quantity_json(b->needed, jx_or_empty(b->resource)),
                                        "holders", holders));
    }
    json_t *eta = json_null();
    if (x->estimated_admission_ms > 0) {
        char ts[TIMEFMT_LEN];
        eta = json_string(timefmt_rfc3339(x->estimated_admission_ms, false, ts));
    }
    return json_pack("{s:i, s:s, s:s, s:o, s:o}", "position", x->position, "reason",
                     jx_or_empty(x->reason), "message", jx_or_empty(x->message), "blockers",
                     blockers, "estimatedAdmissionTime", eta);
}

static void explain_on_loop(struct ctrl *c, void *arg)
{
    struct explain_call *call = arg;
    void *self = NULL;
    if (ctrl_find(c, "scheduler", &self) < 0 || !self) {
        call->rc = CU_EINTERNAL;
        return;
    }
    struct sched *s = self;
    struct eng_explanation x;
    memset(&x, 0, sizeof(x));
    call->rc = eng_explain(s->eng, call->ns, call->name, ctrl_now(c), &x);
    if (call->rc == 0)
        call->out = explanation_json(&x);
    eng_explanation_release(&x);
}

struct eng *kq_sched_engine(struct ctrl *c)
{
    void *self = NULL;
    if (ctrl_find(c, "scheduler", &self) < 0 || !self)
        return NULL;
    return ((struct sched *)self)->eng;
}

int ctrl_explain_workload(struct ctrl *c, const char *ns, const char *name, json_t **out)
{
    struct explain_call call = {ns, name, NULL, 0};
    ctrl_call(c, explain_on_loop, &call);
    *out = call.out;
    return call.rc;
}

/* ---- registration ---- */

static void sched_free(void *self)
{
    struct sched *s = self;
    struct spec_seen *x, *t;
    HASH_ITER(hh, s->seen, x, t) {
        HASH_DEL(s->seen, x);
        xfree(x->key);
        xfree(x);
    }
    eng_free(s->eng);
    kq_queues_free(s->queues);
    kq_memo_free(s->memo);
    kq_set_free(s->not_ready);
    kq_set_free(s->queued);
    kq_shared_free(s->adms);
    kq_shared_free(s->rrs);
    xfree(s);
}

static const struct ctrl_reconciler_ops sched_ops = {
    .name = "scheduler",
    .on_event = sched_on_event,
    .reconcile = sched_reconcile,
    .after_round = sched_after_round,
    .free = sched_free,
};

void ctrl__scheduler_register(struct ctrl *c)
{
    struct sched *s = xcalloc(1, sizeof(*s));
    s->eng = eng_new(&ctrl_cfg(c)->engine);
    s->queues = kq_queues_new();
    s->memo = kq_memo_new();
    s->not_ready = kq_set_new();
    s->queued = kq_set_new();
    s->adms = kq_shared_new(SHARED_MAX);
    s->rrs = kq_shared_new(SHARED_MAX);
    s->rid = ctrl_register(c, &sched_ops, s);
}
