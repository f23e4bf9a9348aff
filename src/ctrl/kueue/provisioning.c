/*
 * kueue/provisioning: Kueue's ProvisioningRequest admission check controller
 * (kueue.md §3, shared/spec/provisioning.md §1.9), for AdmissionChecks with
 * controllerName kueue.x-k8s.io/provisioning-request.
 *  - AdmissionCheck: Active=True/Active, or False/BadParametersRef when
 *    its parameters do not name a ProvisioningRequestConfig or name one
 *    that does not exist (a ClusterQueue using it is then inactive).
 *  - Workload holding a quota reservation, per provisioning check: resolve
 *    the ProvisioningRequestConfig; decide whether a request is needed (a
 *    pod set with count > 0 using a managed resource); find the active
 *    request <wl>-<check>-<N> (highest N, in sync with the config); map its
 *    conditions to the check state (§3.2 table, first match wins); create
 *    the next attempt's PodTemplates ppt-<pr>-<podset> and
 *    ProvisioningRequest when the check is Pending without one.
 *  - Finished, evicted or deleted Workloads lose their requests.
 * Making requests Provisioned (nodes) is the autoscaler's job
 * (autoscaler.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "ctrl/ctrl-int.h"
#include "ctrl/kueue/kueue.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define AC_KEY_PREFIX "ac:"
#define PRC_DEFAULT_LIMIT 3
#define PRC_DEFAULT_BASE_S 60
#define PRC_DEFAULT_MAX_S 1800

struct prov_rec {
    int rid;
};

/* One provisioning check of a Workload and what it needs. */
struct pcheck {
    const char *name;
    json_t *prc;    /* ProvisioningRequestConfig or NULL */
    json_t *needed; /* [{name, count, template}] pod sets for the request */
    json_t *active; /* active ProvisioningRequest (borrowed from owned) or NULL */
    int64_t active_n;
};

/* ---- AdmissionCheck Active condition ---- */

static const char *bad_parameters(const json_t *ac, char *buf, size_t len)
{
    const json_t *p = JX_GET(ac, "spec", "parameters");
    if (!p)
        return "missing parameters reference";
    const char *g = jx_or_empty(JX_STR(p, "apiGroup"));
    const char *k = jx_or_empty(JX_STR(p, "kind"));
    const char *n = jx_or_empty(JX_STR(p, "name"));
    if (strcmp(g, "kueue.x-k8s.io")) {
        snprintf(buf, len, "wrong group \"%s\", expecting \"kueue.x-k8s.io\"", g);
        return buf;
    }
    if (strcmp(k, "ProvisioningRequestConfig")) {
        snprintf(buf, len, "wrong kind \"%s\", expecting \"ProvisioningRequestConfig\"", k);
        return buf;
    }
    if (!n[0])
        return "empty name: parameters.name";
    return NULL;
}

static void reconcile_ac(struct ctrl *c, const char *name)
{
    json_t *ac = kq_get_copy(c, KIND_ADMISSIONCHECK, NULL, name);
    if (!ac || strcmp(jx_or_empty(JX_STR(ac, "spec", "controllerName")), KQ_PROVREQ_CONTROLLER)) {
        json_decref(ac);
        return;
    }
    char buf[256];
    const char *bad = bad_parameters(ac, buf, sizeof(buf));
    if (!bad) {
        /* Kueue's ConfigFromRef also reads the config: a reference to one
         * that does not exist is a bad reference too, with the API's
         * NotFound message, until the config appears (its events requeue
         * every check) */
        const char *prc_name = JX_STR(ac, "spec", "parameters", "name");
        json_t *prc = store_get(ctrl_store(c), KIND_PROVISIONINGREQUESTCONFIG, NULL, prc_name);
        if (!prc) {
            snprintf(buf, sizeof(buf), "provisioningrequestconfigs.kueue.x-k8s.io \"%s\" not found",
                     prc_name);
            bad = buf;
        }
        json_decref(prc);
    }
    bool changed = bad ? api_cond_set(ac, "Active", "False", "BadParametersRef", bad, ctrl_now(c))
                       : api_cond_set(ac, "Active", "True", "Active",
                                      "The admission check is active", ctrl_now(c));
    if (changed)
        kq_update(c, KIND_ADMISSIONCHECK, ac, STORE_UPDATE_STATUS);
    json_decref(ac);
}

/* ---- what a check needs ---- */

static json_t *check_prc(struct ctrl *c, const char *check)
{
    json_t *ac = store_get(ctrl_store(c), KIND_ADMISSIONCHECK, NULL, check);
    json_t *prc = NULL;
    char buf[64];
    if (ac && !strcmp(jx_or_empty(JX_STR(ac, "spec", "controllerName")), KQ_PROVREQ_CONTROLLER) &&
        !bad_parameters(ac, buf, sizeof(buf)))
        prc = store_get(ctrl_store(c), KIND_PROVISIONINGREQUESTCONFIG, NULL,
                        JX_STR(ac, "spec", "parameters", "name"));
    json_decref(ac);
    return prc;
}

static bool is_provisioning_check(struct ctrl *c, const char *check)
{
    json_t *ac = store_get(ctrl_store(c), KIND_ADMISSIONCHECK, NULL, check);
    bool yes = ac && !strcmp(jx_or_empty(JX_STR(ac, "spec", "controllerName")),
                             KQ_PROVREQ_CONTROLLER);
    json_decref(ac);
    return yes;
}

static bool uses_managed(const json_t *tmpl, const json_t *managed)
{
    if (json_array_size(managed) == 0)
        return true;
    size_t i;
    json_t *r;
    json_array_foreach(managed, i, r) {
        if (json_is_string(r) && kq_spec_uses_resource(JX_GET(tmpl, "spec"), json_string_value(r)))
            return true;
    }
    return false;
}

static const json_t *spec_podset(const json_t *wl, const char *name)
{
    size_t i;
    json_t *ps;
    json_t *podsets = JX_GET(wl, "spec", "podSets"); /* looked up once, not per step */
    json_array_foreach(podsets, i, ps) {
        if (!strcmp(jx_or_empty(JX_STR(ps, "name")), name))
            return ps;
    }
    return NULL;
}

/* Scheduling requirements compared by IdenticalWorkloadSchedulingRequirements. */
static json_t *sched_requirements(const json_t *tmpl)
{
    const json_t *spec = JX_GET(tmpl, "spec");
    json_t *req = json_pack("{s:[], s:[]}", "containers", "initContainers");
    const char *lists[] = {"containers", "initContainers"};
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *ctr;
        json_t *ctrs = JX_GET(spec, lists[l]); /* looked up once, not per step */
        json_array_foreach(ctrs, i, ctr) {
            json_t *r = JX_GET(ctr, "resources", "requests");
            json_array_append_new(JX_GET(req, lists[l]), r ? jx_deep_copy(r) : json_object());
        }
    }
    const char *keys[] = {"resources", "nodeSelector", "tolerations", "affinity",
                          "resourceClaims"};
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        json_t *v = JX_GET(spec, keys[k]);
        if (v)
            json_object_set_new(req, keys[k], jx_deep_copy(v));
    }
    return req;
}

static bool podsets_mergeable(const char *policy, const json_t *a, const json_t *b)
{
    if (!policy)
        return false;
    if (!strcmp(policy, "IdenticalPodTemplates"))
        return jx_equal(a, b);
    if (!strcmp(policy, "IdenticalWorkloadSchedulingRequirements")) {
        json_t *ra = sched_requirements(a), *rb = sched_requirements(b);
        bool eq = jx_equal(ra, rb);
        json_decref(ra);
        json_decref(rb);
        return eq;
    }
    return false;
}

/* The pod sets a request needs (§3.2 step 3, §3.3): [{name, count, template}]. */
static json_t *needed_podsets(const json_t *wl, const json_t *prc)
{
    json_t *out = json_array();
    const json_t *managed = JX_GET(prc, "spec", "managedResources");
    const char *policy = JX_STR(prc, "spec", "podSetMergePolicy");
    size_t i;
    json_t *psa;
    json_t *psas = JX_GET(wl, "status", "admission", "podSetAssignments"); /* looked up once, not per step */
    json_array_foreach(psas, i, psa) {
        const char *name = jx_or_empty(JX_STR(psa, "name"));
        const json_t *ps = spec_podset(wl, name);
        int64_t count = JX_INT(psa, JX_INT(ps, 1, "count"), "count");
        const json_t *tmpl = JX_GET(ps, "template");
        if (!ps || count <= 0 || !uses_managed(tmpl, managed))
            continue;
        bool merged = false;
        size_t j;
        json_t *prev;
        json_array_foreach(out, j, prev) {
            if (podsets_mergeable(policy, JX_GET(prev, "template"), tmpl)) {
                json_object_set_new(prev, "count",
                                    json_integer(JX_INT(prev, 0, "count") + count));
                merged = true;
                break;
            }
        }
        if (!merged)
            json_array_append_new(out, json_pack("{s:s, s:I, s:O, s:O}", "name", name, "count",
                                                 (json_int_t)count, "template", tmpl,
                                                 "assignment", psa));
    }
    return out;
}

/* ---- owned ProvisioningRequests ---- */

static json_t *owned_requests(struct ctrl *c, const json_t *wl)
{
    json_t *all = store_list(ctrl_store(c), KIND_PROVISIONINGREQUEST, api_namespace(wl), NULL);
    json_t *out = json_array();
    size_t i;
    json_t *pr;
    json_array_foreach(all, i, pr) {
        if (api_is_owned_by(pr, jx_or_empty(api_uid(wl))))
            json_array_append(out, pr);
    }
    json_decref(all);
    return out;
}

static void delete_requests(struct ctrl *c, const json_t *prs)
{
    size_t i;
    json_t *pr;
    json_array_foreach(prs, i, pr) {
        store_delete(ctrl_store(c), KIND_PROVISIONINGREQUEST, api_namespace(pr), api_name(pr),
                     api_uid(pr), NULL);
    }
}

/* Attempt N of "<wl>-<check>-<N>", or 0 when the name is not of that form. */
static int64_t request_attempt(const char *pr_name, const char *wl, const char *check)
{
    char *prefix = xasprintf("%s-%s-", wl, check);
    size_t n = strlen(prefix);
    int64_t attempt = 0;
    if (!strncmp(pr_name, prefix, n) && pr_name[n]) {
        char *end;
        long long v = strtoll(pr_name + n, &end, 10);
        if (!*end && v > 0)
            attempt = v;
    }
    xfree(prefix);
    return attempt;
}

/* The PRC's parameters overlaid with the Workload's provreq annotations. */
static json_t *request_parameters(const json_t *wl, const json_t *prc)
{
    json_t *params = jx_deep_copy(JX_GET(prc, "spec", "parameters"));
    if (!json_is_object(params)) {
        json_decref(params);
        params = json_object();
    }
    const char *k;
    json_t *v;
    json_t *annotations = JX_GET(wl, "metadata", "annotations"); /* looked up once, not per step */
    json_object_foreach(annotations, k, v) {
        if (!strncmp(k, KQ_PROVREQ_PREFIX, strlen(KQ_PROVREQ_PREFIX)) && json_is_string(v))
            json_object_set(params, k + strlen(KQ_PROVREQ_PREFIX), v);
    }
    return params;
}

static bool request_in_sync(const json_t *pr, const json_t *prc)
{
    if (strcmp(jx_or_empty(JX_STR(pr, "spec", "provisioningClassName")),
               jx_or_empty(JX_STR(prc, "spec", "provisioningClassName"))))
        return false;
    const char *k;
    json_t *v;
    json_t *params = JX_GET(prc, "spec", "parameters"); /* looked up once, not per step */
    json_object_foreach(params, k, v) {
        if (!jx_equal(JX_GET(pr, "spec", "parameters", k), v))
            return false;
    }
    return true;
}

/* Pick the active request of a check; delete its other requests. */
static void find_active(struct ctrl *c, const json_t *wl, const json_t *owned, struct pcheck *pc)
{
    pc->active = NULL;
    pc->active_n = 0;
    size_t i;
    json_t *pr;
    json_array_foreach(owned, i, pr) {
        int64_t n = request_attempt(api_name(pr), api_name(wl), pc->name);
        if (n > pc->active_n && pc->prc && request_in_sync(pr, pc->prc)) {
            pc->active = pr;
            pc->active_n = n;
        }
    }
    json_array_foreach(owned, i, pr) {
        if (pr != pc->active && request_attempt(api_name(pr), api_name(wl), pc->name) > 0)
            store_delete(ctrl_store(c), KIND_PROVISIONINGREQUEST, api_namespace(pr),
                         api_name(pr), api_uid(pr), NULL);
    }
}

/* ---- check state (§3.2 step 5) ---- */

static int64_t retry_backoff_s(const json_t *prc, int64_t n)
{
    const json_t *rs = JX_GET(prc, "spec", "retryStrategy");
    int64_t base = JX_INT(rs, PRC_DEFAULT_BASE_S, "backoffBaseSeconds");
    int64_t max = JX_INT(rs, PRC_DEFAULT_MAX_S, "backoffMaxSeconds");
    return kq_backoff_ms(base * 1000, max * 1000, (int32_t)n) / 1000;
}

static json_t *provisioned_updates(const struct pcheck *pc)
{
    json_t *out = json_array();
    const char *class = jx_or_empty(JX_STR(pc->prc, "spec", "provisioningClassName"));
    size_t i, j;
    json_t *ps, *sel;
    json_array_foreach(pc->needed, i, ps) {
        json_t *u = json_pack("{s:s, s:{s:s, s:s}}", "name", JX_STR(ps, "name"), "annotations",
                              KQ_CONSUME_ANNOTATION, api_name(pc->active), KQ_CLASS_ANNOTATION,
                              class);
        json_t *selectors = JX_GET(pc->prc, "spec", "podSetUpdates", "nodeSelector"); /* looked up once, not per step */
        json_array_foreach(selectors, j, sel) {
            const char *key = JX_STR(sel, "key");
            const char *detail = JX_STR(sel, "valueFromProvisioningClassDetail");
            const char *val = detail ? JX_STR(pc->active, "status", "provisioningClassDetails",
                                              detail)
                                     : NULL;
            if (key && val)
                JX_SET_NEW(u, json_string(val), "nodeSelector", key);
        }
        json_array_append_new(out, u);
    }
    return out;
}

/* A failed (or booking-expired) attempt: Retry while attempts remain,
 * else Rejected. */
static bool failed_attempt(struct ctrl *c, json_t *wl, const struct pcheck *pc, json_t *ac,
                           const char *prefix, const char *msg)
{
    int64_t limit = JX_INT(pc->prc, PRC_DEFAULT_LIMIT, "spec", "retryStrategy",
                           "backoffLimitCount");
    if (pc->active_n > limit)
        return kq_wl_set_check_state(c, wl, pc->name, "Rejected", msg);
    char *m = xasprintf("%s%s", prefix, msg);
    int64_t retries = JX_INT(ac, 0, "retryCount");
    bool changed;
    if (pc->active_n > retries) {
        changed = kq_wl_set_check_state(c, wl, pc->name, "Retry", m);
        ac = kq_wl_check(wl, pc->name);
        int64_t after = retry_backoff_s(pc->prc, retries + 1);
        if (JX_INT(ac, -1, "requeueAfterSeconds") != after) {
            json_object_set_new(ac, "requeueAfterSeconds", json_integer(after));
            changed = true;
        }
    } else {
        changed = kq_wl_set_check_state(c, wl, pc->name, jx_or_empty(JX_STR(ac, "state")), m);
    }
    xfree(m);
    return changed;
}

static bool set_ready(struct ctrl *c, json_t *wl, const char *check, const char *msg,
                      json_t *updates)
{
    bool changed = kq_wl_set_check_state(c, wl, check, "Ready", msg);
    json_t *ac = kq_wl_check(wl, check);
    if (updates && !jx_equal(JX_GET(ac, "podSetUpdates"), updates)) {
        json_object_set(ac, "podSetUpdates", updates);
        changed = true;
    } else if (!updates && JX_GET(ac, "podSetUpdates")) {
        json_object_del(ac, "podSetUpdates");
        changed = true;
    }
    json_decref(updates);
    return changed;
}

static bool sync_state(struct ctrl *c, json_t *wl, const struct pcheck *pc)
{
    json_t *ac = kq_wl_check(wl, pc->name);
    const char *state = jx_or_empty(JX_STR(ac, "state"));
    if (!pc->prc)
        return kq_wl_set_check_state(c, wl, pc->name, "Pending", "the check is not active");
    if (json_array_size(pc->needed) == 0)
        return set_ready(c, wl, pc->name, "the provisioning request is not needed", NULL);
    const json_t *pr = pc->active;
    if (!pr)
        return !strcmp(state, "Ready") ? false
                                       : kq_wl_set_check_state(c, wl, pc->name, state[0] ? state : "Pending",
                                                               jx_or_empty(JX_STR(ac, "message")));
    const char *fmsg = jx_or_empty(JX_STR(api_cond_get(pr, "Failed"), "message"));
    if (api_cond_is_true(pr, "Failed"))
        return failed_attempt(c, wl, pc, ac, "Retrying after failure: ", fmsg);
    if (api_cond_is_true(pr, "CapacityRevoked"))
        return kq_wl_set_check_state(c, wl, pc->name, "Rejected",
                                     JX_STR(api_cond_get(pr, "CapacityRevoked"), "message"));
    if (api_cond_is_true(pr, "BookingExpired")) {
        if (kq_wl_is_admitted(wl))
            return false;
        return failed_attempt(c, wl, pc, ac, "Retrying after booking expired: ",
                              jx_or_empty(JX_STR(api_cond_get(pr, "BookingExpired"), "message")));
    }
    const char *pmsg = JX_STR(api_cond_get(pr, "Provisioned"), "message");
    if (api_cond_is_true(pr, "Provisioned"))
        return !strcmp(state, "Ready") ? false
                                       : set_ready(c, wl, pc->name, pmsg, provisioned_updates(pc));
    if (api_cond_is_true(pr, "Accepted") && api_cond_get(pr, "Provisioned"))
        return kq_wl_set_check_state(c, wl, pc->name, "Pending", pmsg);
    return kq_wl_set_check_state(c, wl, pc->name, "Pending", "");
}

/* ---- request creation (§3.2 step 6) ---- */

static void fill_requests_from_limits(json_t *spec)
{
    const char *lists[] = {"containers", "initContainers"};
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *ctr;
        json_t *ctrs = JX_GET(spec, lists[l]); /* looked up once, not per step */
        json_array_foreach(ctrs, i, ctr) {
            const char *res;
            json_t *v;
            json_t *limits = JX_GET(ctr, "resources", "limits"); /* looked up once, not per step */
            json_object_foreach(limits, res, v) {
                if (!JX_GET(ctr, "resources", "requests", res))
                    JX_SET_NEW(ctr, json_incref(v), "resources", "requests", res);
            }
        }
    }
}

static json_t *build_pod_template(struct ctrl *c, const json_t *wl, const json_t *ps,
                                  const char *name)
{
    json_t *tmpl = jx_deep_copy(JX_GET(ps, "template"));
    if (!tmpl)
        tmpl = json_object();
    json_t *spec = JX_OBJ(tmpl, "spec");
    struct kq_podset_info info = {0};
    info.name = (char *)JX_STR(ps, "name");
    info.node_selector = json_object();
    info.tolerations = json_array();
    info.labels = json_object();
    info.annotations = json_object();
    /* the flavors of this pod set's assignment */
    const json_t *flv = JX_GET(ps, "assignment", "flavors");
    const char *res;
    json_t *f;
    json_object_foreach((json_t *)flv, res, f) {
        json_t *rf = store_get(ctrl_store(c), KIND_RESOURCEFLAVOR, NULL, json_string_value(f));
        const char *k;
        json_t *v;
        json_t *node_labels = JX_GET(rf, "spec", "nodeLabels"); /* looked up once, not per step */
        json_object_foreach(node_labels, k, v) {
            if (!json_object_get(info.node_selector, k))
                json_object_set(info.node_selector, k, v);
        }
        size_t i;
        json_t *t;
        json_t *tolerations = JX_GET(rf, "spec", "tolerations"); /* looked up once, not per step */
        json_array_foreach(tolerations, i, t) {
            json_array_append(info.tolerations, t);
        }
        json_decref(rf);
    }
    char err[256];
    kq_template_merge(tmpl, &info, err, sizeof(err));
    json_decref(info.node_selector);
    json_decref(info.tolerations);
    json_decref(info.labels);
    json_decref(info.annotations);
    fill_requests_from_limits(spec);
    json_t *pt = api_object_new("v1", "PodTemplate", api_namespace(wl), name);
    api_set_label(pt, KQ_MANAGED_LABEL, "true");
    api_owner_ref_add(pt, api_owner_ref_new(wl, true));
    json_object_set_new(pt, "template", tmpl);
    return pt;
}

/* Move a PodTemplate's controller owner from the Workload to the request. */
static void adopt_template(struct ctrl *c, const char *ns, const char *name, const json_t *pr)
{
    json_t *pt = kq_get_copy(c, KIND_PODTEMPLATE, ns, name);
    if (!pt)
        return;
    JX_SET_NEW(pt, json_array(), "metadata", "ownerReferences");
    api_owner_ref_add(pt, api_owner_ref_new(pr, true));
    kq_update(c, KIND_PODTEMPLATE, pt, STORE_UPDATE_MAIN);
    json_decref(pt);
}

static void create_request(struct ctrl *c, const json_t *wl, const struct pcheck *pc,
                           int64_t attempt)
{
    const char *ns = api_namespace(wl);
    char *full = xasprintf("%s-%s-%lld", api_name(wl), pc->name, (long long)attempt);
    char *name = kq_limit_name(full);
    json_t *sets = json_array();
    json_t *tnames = json_array();
    size_t i;
    json_t *ps;
    json_array_foreach(pc->needed, i, ps) {
        char *tf = xasprintf("ppt-%s-%s", name, JX_STR(ps, "name"));
        char *tn = kq_limit_name(tf);
        json_t *pt = build_pod_template(c, wl, ps, tn);
        int rc = store_create(ctrl_store(c), KIND_PODTEMPLATE, ns, pt, NULL);
        if (rc != 0 && rc != CU_EEXIST)
            ctrl_event(c, wl, "Warning", "FailedCreate", "Error creating PodTemplate \"%s\": %s",
                       tn, cu_strerror(rc));
        json_array_append_new(sets, json_pack("{s:{s:s}, s:O}", "podTemplateRef", "name", tn,
                                              "count", JX_GET(ps, "count")));
        json_array_append_new(tnames, json_string(tn));
        json_decref(pt);
        xfree(tn);
        xfree(tf);
    }
    json_t *pr = api_object_new("autoscaling.x-k8s.io/v1", "ProvisioningRequest", ns, name);
    api_set_label(pr, KQ_MANAGED_LABEL, "true");
    api_owner_ref_add(pr, api_owner_ref_new(wl, true));
    JX_SET_NEW(pr, json_string(jx_or_empty(JX_STR(pc->prc, "spec", "provisioningClassName"))),
               "spec", "provisioningClassName");
    JX_SET_NEW(pr, request_parameters(wl, pc->prc), "spec", "parameters");
    JX_SET_NEW(pr, sets, "spec", "podSets");
    json_t *stored = NULL;
    int rc = store_create(ctrl_store(c), KIND_PROVISIONINGREQUEST, ns, pr, &stored);
    if (rc == 0) {
        json_array_foreach(tnames, i, ps) {
            adopt_template(c, ns, json_string_value(ps), stored);
        }
        ctrl_event(c, wl, "Normal", "ProvisioningRequestCreated",
                   "Created ProvisioningRequest: \"%s\"", name);
        if (ctrl_traces(c, "ProvisioningRequestCreated")) {
            json_t *f = kq_wl_trace_fields(wl, kq_wl_cluster_queue(wl));
            json_object_set_new(f, "check", json_string(pc->name));
            json_object_set_new(f, "name", json_string(name));
            ctrl_trace(c, "ProvisioningRequestCreated", f);
        }
    } else if (rc != CU_EEXIST) {
        ctrl_event(c, wl, "Warning", "FailedCreate",
                   "Error creating ProvisioningRequest \"%s\": %s", name, cu_strerror(rc));
    }
    json_decref(stored);
    json_decref(pr);
    json_decref(tnames);
    xfree(name);
    xfree(full);
}

static void maybe_create(struct ctrl *c, const json_t *wl, const struct pcheck *pc)
{
    const json_t *ac = kq_wl_check(wl, pc->name);
    if (!pc->prc || json_array_size(pc->needed) == 0 ||
        strcmp(jx_or_empty(JX_STR(ac, "state")), "Pending"))
        return;
    const json_t *pr = pc->active;
    bool retry_pr = pr && (api_cond_is_true(pr, "Failed") ||
                           (api_cond_is_true(pr, "BookingExpired") && !kq_wl_is_admitted(wl)));
    if (pr && !retry_pr)
        return;
    int64_t attempt = JX_INT(ac, 0, "retryCount") + 1;
    if (retry_pr && attempt <= pc->active_n)
        attempt = pc->active_n + 1;
    create_request(c, wl, pc, attempt);
}

/* True when one of the Workload's admission checks is a provisioning one. */
static bool has_provisioning_check(struct ctrl *c, const json_t *wl)
{
    size_t i;
    json_t *ac;
    json_t *checks = JX_GET(wl, "status", "admissionChecks"); /* looked up once, not per step */
    json_array_foreach(checks, i, ac) {
        const char *check = JX_STR(ac, "name");
        if (check && is_provisioning_check(c, check))
            return true;
    }
    return false;
}

/* Sync the provisioning checks of a reserved Workload (cur is the stored
 * document; it is copied only here, where the checks may change). */
static void sync_checks(struct ctrl *c, struct prov_rec *r, const json_t *cur,
                        const json_t *owned)
{
    json_t *wl = jx_deep_copy(cur);
    bool dirty = false;
    size_t i;
    json_t *ac;
    json_t *checks = JX_GET(wl, "status", "admissionChecks"); /* looked up once, not per step */
    json_array_foreach(checks, i, ac) {
        const char *check = JX_STR(ac, "name");
        if (!check || !is_provisioning_check(c, check))
            continue;
        struct pcheck pc = {check, check_prc(c, check), NULL, NULL, 0};
        pc.needed = pc.prc ? needed_podsets(wl, pc.prc) : json_array();
        find_active(c, wl, owned, &pc);
        dirty |= sync_state(c, wl, &pc);
        maybe_create(c, wl, &pc);
        json_decref(pc.needed);
        json_decref(pc.prc);
    }
    if (dirty && kq_update(c, KIND_WORKLOAD, wl, STORE_UPDATE_STATUS) == CU_ECONFLICT)
        ctrl_enqueue(c, r->rid, api_namespace(cur), api_name(cur));
    json_decref(wl);
}

static void reconcile_wl(struct ctrl *c, struct prov_rec *r, const char *ns, const char *name)
{
    json_t *cur = store_get(ctrl_store(c), KIND_WORKLOAD, ns, name);
    if (!cur)
        return;
    json_t *owned = owned_requests(c, cur);
    if (kq_wl_is_finished(cur) || kq_wl_is_evicted(cur) || api_is_deleting(cur))
        delete_requests(c, owned);
    else if (kq_wl_has_reservation(cur) && has_provisioning_check(c, cur))
        sync_checks(c, r, cur, owned);
    json_decref(owned);
    json_decref(cur);
}

static void prov_reconcile(struct ctrl *c, void *self, const char *ns, const char *name)
{
    struct prov_rec *r = self;
    if (!ns && !strncmp(name, AC_KEY_PREFIX, strlen(AC_KEY_PREFIX)))
        reconcile_ac(c, name + strlen(AC_KEY_PREFIX));
    else if (ns)
        reconcile_wl(c, r, ns, name);
}

/* Queue every AdmissionCheck (a config changed) and the Workloads using it. */
static void enqueue_checks(struct ctrl *c, struct prov_rec *r, const char *only)
{
    json_t *acs = store_list(ctrl_store(c), KIND_ADMISSIONCHECK, NULL, NULL);
    size_t i;
    json_t *ac;
    json_array_foreach(acs, i, ac) {
        if (only && strcmp(only, api_name(ac)))
            continue;
        char *key = xasprintf(AC_KEY_PREFIX "%s", api_name(ac));
        ctrl_enqueue(c, r->rid, NULL, key);
        xfree(key);
    }
    json_decref(acs);
}

static void enqueue_reserved_workloads(struct ctrl *c, struct prov_rec *r)
{
    json_t *wls = store_list(ctrl_store(c), KIND_WORKLOAD, NULL, NULL);
    size_t i;
    json_t *wl;
    json_array_foreach(wls, i, wl) {
        if (JX_GET(wl, "status", "admissionChecks"))
            ctrl_enqueue(c, r->rid, api_namespace(wl), api_name(wl));
    }
    json_decref(wls);
}

static void prov_on_event(struct ctrl *c, void *self, const struct store_event *ev)
{
    struct prov_rec *r = self;
    switch (ev->kind) {
    case KIND_WORKLOAD: {
        /* finished or evicted: its requests are deleted (nothing to do
         * while no request exists at all; one created later brings its
         * owner back). Read from the event's view, which the Workload
         * controller and the scheduler read before (kq_wl_view_peek). */
        if (ev->type == STORE_DELETED)
            break;
        const struct kq_wl_view *w = kq_wl_view_peek(ev->obj);
        if (w->admission_checks ||
            (store_count(ctrl_store(c), KIND_PROVISIONINGREQUEST) > 0 &&
             (w->state.finished || w->state.evicted)))
            ctrl_enqueue(c, r->rid, w->ns, w->name);
        break;
    }
    case KIND_PROVISIONINGREQUEST:
        if (kq_controlled_by_kind(ev->obj, "Workload"))
            ctrl_enqueue(c, r->rid, api_namespace(ev->obj),
                         JX_STR(kq_controller_ref(ev->obj), "name"));
        break;
    case KIND_ADMISSIONCHECK:
        if (ev->type != STORE_DELETED && JX_INT(ev->obj, 0, "metadata", "generation") !=
                                             JX_INT(api_cond_get(ev->obj, "Active"), -1,
                                                    "observedGeneration"))
            enqueue_checks(c, r, api_name(ev->obj));
        break;
    case KIND_PROVISIONINGREQUESTCONFIG:
        enqueue_checks(c, r, NULL);
        enqueue_reserved_workloads(c, r);
        break;
    default:
        break;
    }
}

static const struct ctrl_reconciler_ops prov_ops = {
    .name = "provisioning",
    .on_event = prov_on_event,
    .reconcile = prov_reconcile,
    .after_round = NULL,
    .free = xfree,
};

void ctrl__provisioning_register(struct ctrl *c)
{
    struct prov_rec *r = xcalloc(1, sizeof(*r));
    r->rid = ctrl_register(c, &prov_ops, r);
}
