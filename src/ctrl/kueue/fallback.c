/*
 * kueue/fallback: beyond Kueue, flavor fallback on stockout
 * (ctrl_config.flavor_fallback). Kueue expresses plan A / plan B only by
 * flavor order; once a Workload holds a flavor whose capacity never comes
 * (an on-demand pool in a stockout, a ProvisioningRequest that stays
 * queued), it waits there. With fallback on, the workload controller:
 *  - evicts a reserved Workload whose provisioning check's request is not
 *    Provisioned fallback_provreq_timeout_ms after it was created, and
 *  - evicts an admitted Workload some of whose pods have no node
 *    fallback_node_wait_ms after admission,
 * with reason NoCapacity (requeued at once, like a preemption), and records
 * the failed flavors in the annotation cueue.dev/avoid-flavors
 * ({"<flavor>": "<RFC 3339 until>"}, until = now +
 * fallback_flavor_backoff_ms). The scheduler hands that list to the engine
 * (api_workload.avoid_flavors), whose flavor assignment skips those flavors
 * until then, so the next admission tries the next flavor.
 */
#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "ctrl/kueue/kueue.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

void kq_avoid_from_workload(const json_t *wl, struct api_flavor_avoid **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    const char *text = api_annotation(wl, KQ_AVOID_FLAVORS_ANNOTATION);
    json_t *m = text ? json_loads(text, 0, NULL) : NULL;
    if (json_is_object(m) && json_object_size(m) > 0) {
        *out = xcalloc(json_object_size(m), sizeof(**out));
        const char *flv;
        json_t *v;
        json_object_foreach(m, flv, v) {
            int64_t until = 0;
            if (!json_is_string(v) || timefmt_parse(json_string_value(v), &until) != 0)
                continue;
            (*out)[*n].flavor = xstrdup(flv);
            (*out)[*n].until_ms = until;
            (*n)++;
        }
    }
    json_decref(m);
}

void kq_avoid_release(struct api_flavor_avoid *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        xfree(a[i].flavor);
    xfree(a);
}

/* Add the admitted flavors of pod set ps to the set (a JSON object). */
static void podset_flavors(const json_t *wl, const char *ps, json_t *set)
{
    size_t i;
    json_t *a;
    json_array_foreach(JX_GET(wl, "status", "admission", "podSetAssignments"), i, a) {
        if (strcmp(jx_or_empty(JX_STR(a, "name")), ps))
            continue;
        const char *res;
        json_t *f;
        json_object_foreach(JX_GET(a, "flavors"), res, f) {
            if (json_is_string(f))
                json_object_set_new(set, json_string_value(f), json_true());
        }
    }
}

static char *duration_text(int64_t ms)
{
    char buf[TIMEFMT_LEN];
    return xstrdup(timefmt_age(ms, buf));
}

/* Record the flavors to avoid (MAIN write) and evict (in memory). */
static bool fallback_evict(struct ctrl *c, json_t *wl, const json_t *flavors, const char *why)
{
    const struct ctrl_config *cfg = ctrl_cfg(c);
    int64_t until = ctrl_now(c) + cfg->fallback_flavor_backoff_ms;
    const char *cur = api_annotation(wl, KQ_AVOID_FLAVORS_ANNOTATION);
    json_t *m = cur ? json_loads(cur, 0, NULL) : NULL;
    if (!json_is_object(m)) {
        json_decref(m);
        m = json_object();
    }
    char ts[TIMEFMT_LEN];
    timefmt_rfc3339(until, false, ts);
    struct sbuf names;
    sbuf_init(&names, 0);
    const char *flv;
    json_t *v;
    json_object_foreach((json_t *)flavors, flv, v) {
        json_object_set_new(m, flv, json_string(ts));
        sbuf_addf(&names, "%s%s", names.len ? " " : "", flv);
    }
    char *text = jx_dumps_sorted(m);
    api_set_annotation(wl, KQ_AVOID_FLAVORS_ANNOTATION, text);
    xfree(text);
    json_decref(m);
    if (kq_update(c, KIND_WORKLOAD, wl, STORE_UPDATE_MAIN) != 0) {
        sbuf_release(&names);
        return false;
    }
    char *msg = xasprintf("No capacity in flavor(s) [%s]: %s; trying the next flavor", names.buf,
                          why);
    kq_wl_evict(c, wl, KQ_FALLBACK_REASON, NULL, msg);
    xfree(msg);
    sbuf_release(&names);
    return true;
}

/* (a) a provisioning request that is not Provisioned in time. */
static bool check_requests(struct ctrl *c, int rid, json_t *wl)
{
    const struct ctrl_config *cfg = ctrl_cfg(c);
    if (cfg->fallback_provreq_timeout_ms <= 0)
        return false;
    json_t *prs = store_list(ctrl_store(c), KIND_PROVISIONINGREQUEST, api_namespace(wl), NULL);
    bool done = false;
    size_t i;
    json_t *pr;
    json_array_foreach(prs, i, pr) {
        if (done || !api_is_owned_by(pr, jx_or_empty(api_uid(wl))) ||
            api_cond_is_true(pr, "Provisioned") || api_cond_is_true(pr, "Failed"))
            continue;
        int64_t at = api_creation_ms(pr) + cfg->fallback_provreq_timeout_ms;
        if (ctrl_now(c) < at) {
            ctrl_enqueue_at(c, rid, api_namespace(wl), api_name(wl), at);
            continue;
        }
        json_t *flavors = json_object();
        char *prefix = xasprintf("ppt-%s-", api_name(pr));
        size_t j;
        json_t *ps;
        json_array_foreach(JX_GET(pr, "spec", "podSets"), j, ps) {
            const char *t = jx_or_empty(JX_STR(ps, "podTemplateRef", "name"));
            if (!strncmp(t, prefix, strlen(prefix)))
                podset_flavors(wl, t + strlen(prefix), flavors);
        }
        char *d = duration_text(cfg->fallback_provreq_timeout_ms);
        char *why = xasprintf("ProvisioningRequest %s was not provisioned within %s",
                              api_name(pr), d);
        if (json_object_size(flavors) > 0)
            done = fallback_evict(c, wl, flavors, why);
        xfree(why);
        xfree(d);
        xfree(prefix);
        json_decref(flavors);
    }
    json_decref(prs);
    return done;
}

/* The pods that run for wl's owner (its own, a RayJob's submitter's, and
 * a JobSet's child Jobs' pods, which carry the JobSet's uid as the label
 * jobset.sigs.k8s.io/jobset-uid). */
static json_t *owner_pods(struct ctrl *c, const json_t *wl)
{
    json_t *out = json_array();
    const json_t *ref = kq_controller_ref(wl);
    if (!ref)
        return out;
    const char *owner_uid = jx_or_empty(JX_STR(ref, "uid"));
    json_t *sub = NULL;
    bool jobset = !strcmp(jx_or_empty(JX_STR(ref, "kind")), "JobSet");
    if (!strcmp(jx_or_empty(JX_STR(ref, "kind")), "RayJob"))
        sub = store_get(ctrl_store(c), KIND_JOB, api_namespace(wl), JX_STR(ref, "name"));
    const char *sub_uid = sub && !strcmp(jx_or_empty(api_controller_uid(sub)), owner_uid)
                              ? api_uid(sub)
                              : NULL;
    json_t *pods = store_list(ctrl_store(c), KIND_POD, api_namespace(wl), NULL);
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p) {
        const char *u = jx_or_empty(api_controller_uid(p));
        const char *js_uid = jobset ? api_label(p, "jobset.sigs.k8s.io/jobset-uid") : NULL;
        if (!strcmp(u, owner_uid) || (sub_uid && !strcmp(u, sub_uid)) ||
            (js_uid && !strcmp(js_uid, owner_uid)))
            json_array_append(out, p);
    }
    json_decref(pods);
    json_decref(sub);
    return out;
}

/* (b) admitted pods that find no node in time. */
static bool check_nodes(struct ctrl *c, int rid, json_t *wl)
{
    const struct ctrl_config *cfg = ctrl_cfg(c);
    if (cfg->fallback_node_wait_ms <= 0 || !kq_wl_is_admitted(wl) ||
        api_cond_is_true(wl, "PodsReady"))
        return false;
    int64_t at = api_cond_time_ms(wl, "Admitted") + cfg->fallback_node_wait_ms;
    if (ctrl_now(c) < at) {
        ctrl_enqueue_at(c, rid, api_namespace(wl), api_name(wl), at);
        return false;
    }
    json_t *pods = owner_pods(c, wl);
    json_t *flavors = json_object();
    int unbound = 0;
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p) {
        const char *phase = jx_or_empty(JX_STR(p, "status", "phase"));
        if (JX_STR(p, "spec", "nodeName") || !strcmp(phase, "Succeeded") ||
            !strcmp(phase, "Failed") || api_is_deleting(p))
            continue;
        unbound++;
        podset_flavors(wl, jx_or_empty(api_label(p, KQ_PODSET_LABEL)), flavors);
    }
    bool done = false;
    if (unbound > 0 && json_object_size(flavors) > 0) {
        char *d = duration_text(cfg->fallback_node_wait_ms);
        char *why = xasprintf("%d pod(s) found no node within %s of admission", unbound, d);
        done = fallback_evict(c, wl, flavors, why);
        xfree(why);
        xfree(d);
    }
    json_decref(flavors);
    json_decref(pods);
    return done;
}

bool kq_fallback_step(struct ctrl *c, int rid, json_t *wl)
{
    if (!ctrl_cfg(c)->flavor_fallback || !kq_wl_has_reservation(wl) || kq_wl_is_evicted(wl) ||
        kq_wl_is_finished(wl) || !kq_wl_is_active(wl))
        return false;
    return check_requests(c, rid, wl) || check_nodes(c, rid, wl);
}
