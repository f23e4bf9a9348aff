/*
 * typed: decoders from admitted JSON documents to the typed views of
 * types.h (object.h). Documents are trusted to have passed api_admit, so
 * only shape errors that would make the view meaningless (not an object,
 * no name, an unparseable quantity) return CU_EINVAL; the output is then
 * released. v1beta1 and v1beta2 spellings are both read (cohort /
 * cohortName, admissionChecks / admissionChecksStrategy, priorityClassName
 * / priorityClassRef).
 */
#include <string.h>

#include "api/meta.h"
#include "api/object.h"
#include "api/quantity.h"
#include "api/selector.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

static char *dup_or(const char *s, const char *def) { return xstrdup(s ? s : def); }

static bool is(const char *s, const char *want) { return s && !strcmp(s, want); }

static char **string_array(const json_t *arr, size_t *n)
{
    *n = json_array_size(arr);
    char **out = *n ? xcalloc(*n, sizeof(*out)) : NULL;
    for (size_t i = 0; i < *n; i++)
        out[i] = xstrdup(jx_or_empty(json_string_value(json_array_get(arr, i))));
    return out;
}

/* ---- ResourceFlavor ---- */

int api_resource_flavor_from_json(const json_t *obj, struct api_resource_flavor *out)
{
    memset(out, 0, sizeof(*out));
    if (!json_is_object(obj) || !api_name(obj))
        return CU_EINVAL;
    const json_t *spec = json_object_get(obj, "spec");
    out->name = xstrdup(api_name(obj));
    api_labels_from_json(json_object_get(spec, "nodeLabels"), &out->node_labels);
    json_t *taints = json_object_get(spec, "nodeTaints");
    out->n_node_taints = json_array_size(taints);
    out->node_taints = out->n_node_taints ? xcalloc(out->n_node_taints, sizeof(*out->node_taints))
                                          : NULL;
    for (size_t i = 0; i < out->n_node_taints; i++)
        api_taint_from_json(json_array_get(taints, i), &out->node_taints[i]);
    json_t *tols = json_object_get(spec, "tolerations");
    out->n_tolerations = json_array_size(tols);
    out->tolerations = out->n_tolerations ? xcalloc(out->n_tolerations, sizeof(*out->tolerations))
                                          : NULL;
    for (size_t i = 0; i < out->n_tolerations; i++)
        api_toleration_from_json(json_array_get(tols, i), &out->tolerations[i]);
    const char *topo = JX_STR(spec, "topologyName");
    out->topology_name = topo ? xstrdup(topo) : NULL;
    return 0;
}

/* ---- resource groups ---- */

static int quota_from_json(const json_t *rq, struct api_resource_quota *q)
{
    q->name = dup_or(JX_STR(rq, "name"), "");
    if (api_quantity_from_json(json_object_get(rq, "nominalQuota"), q->name, "", &q->nominal,
                               NULL) < 0)
        return CU_EINVAL;
    json_t *bl = json_object_get(rq, "borrowingLimit");
    json_t *ll = json_object_get(rq, "lendingLimit");
    q->has_borrowing_limit = bl != NULL;
    q->has_lending_limit = ll != NULL;
    if (bl && api_quantity_from_json(bl, q->name, "", &q->borrowing_limit, NULL) < 0)
        return CU_EINVAL;
    if (ll && api_quantity_from_json(ll, q->name, "", &q->lending_limit, NULL) < 0)
        return CU_EINVAL;
    return 0;
}

static int group_from_json(const json_t *rg, struct api_resource_group *g)
{
    g->covered = string_array(json_object_get(rg, "coveredResources"), &g->n_covered);
    json_t *flavors = json_object_get(rg, "flavors");
    size_t nf = json_array_size(flavors);
    g->flavors = nf ? xcalloc(nf, sizeof(*g->flavors)) : NULL;
    for (size_t i = 0; i < nf; i++, g->n_flavors++) {
        const json_t *fq = json_array_get(flavors, i);
        struct api_flavor_quotas *f = &g->flavors[i];
        f->name = dup_or(JX_STR(fq, "name"), "");
        json_t *res = json_object_get(fq, "resources");
        size_t nr = json_array_size(res);
        f->resources = nr ? xcalloc(nr, sizeof(*f->resources)) : NULL;
        for (size_t j = 0; j < nr; j++, f->n_resources++) {
            if (quota_from_json(json_array_get(res, j), &f->resources[j]) < 0) {
                f->n_resources++; /* the partly filled one is released too */
                g->n_flavors++;
                return CU_EINVAL;
            }
        }
    }
    return 0;
}

static int groups_from_json(const json_t *arr, struct api_resource_group **out, size_t *n)
{
    size_t count = json_array_size(arr);
    *out = count ? xcalloc(count, sizeof(**out)) : NULL;
    *n = 0;
    for (size_t i = 0; i < count; i++) {
        (*n)++;
        if (group_from_json(json_array_get(arr, i), &(*out)[i]) < 0)
            return CU_EINVAL;
    }
    return 0;
}

/* fairSharing.weight in thousandths; 1 (1000) when unset. */
static int64_t fair_weight_milli(const json_t *spec)
{
    int64_t w = 1000;
    json_t *v = JX_GET(spec, "fairSharing", "weight");
    if (v && api_quantity_from_json(v, "cpu", "", &w, NULL) < 0)
        w = 1000;
    return w;
}

/* ---- ClusterQueue ---- */

static enum api_fungibility fungibility(const char *s, enum api_fungibility def)
{
    if (!s)
        return def;
    return is(s, "TryNextFlavor") ? FUNG_TRY_NEXT_FLAVOR : FUNG_MAY_STOP_SEARCH;
}

static enum api_preempt_policy preempt_policy(const char *s)
{
    if (is(s, "LowerPriority"))
        return PP_LOWER_PRIORITY;
    if (is(s, "LowerOrNewerEqualPriority"))
        return PP_LOWER_OR_NEWER_EQUAL_PRIORITY;
    if (is(s, "Any"))
        return PP_ANY;
    return PP_NEVER;
}

static enum api_stop_policy stop_policy(const char *s)
{
    if (is(s, "Hold"))
        return STOP_HOLD;
    if (is(s, "HoldAndDrain"))
        return STOP_HOLD_AND_DRAIN;
    return STOP_NONE;
}

static void cq_checks(const json_t *spec, struct api_cluster_queue *cq)
{
    json_t *rules = JX_GET(spec, "admissionChecksStrategy", "admissionChecks");
    json_t *names = json_object_get(spec, "admissionChecks"); /* v1beta1 */
    size_t n = json_array_size(rules) + json_array_size(names);
    cq->checks = n ? xcalloc(n, sizeof(*cq->checks)) : NULL;
    size_t i;
    json_t *v;
    json_array_foreach(rules, i, v) {
        struct api_admission_check_rule *r = &cq->checks[cq->n_checks++];
        r->name = dup_or(JX_STR(v, "name"), "");
        r->on_flavors = string_array(json_object_get(v, "onFlavors"), &r->n_on_flavors);
    }
    json_array_foreach(names, i, v) {
        cq->checks[cq->n_checks++].name = xstrdup(jx_or_empty(json_string_value(v)));
    }
}

static void cq_policies(const json_t *spec, struct api_cluster_queue *cq)
{
    cq->queueing_strategy =
        is(JX_STR(spec, "queueingStrategy"), "StrictFIFO") ? QS_STRICT_FIFO : QS_BEST_EFFORT_FIFO;
    cq->when_can_borrow = fungibility(JX_STR(spec, "flavorFungibility", "whenCanBorrow"),
                                      FUNG_MAY_STOP_SEARCH);
    cq->when_can_preempt = fungibility(JX_STR(spec, "flavorFungibility", "whenCanPreempt"),
                                       FUNG_TRY_NEXT_FLAVOR);
    const char *pref = JX_STR(spec, "flavorFungibility", "preference");
    cq->preference = is(pref, "BorrowingOverPreemption")   ? PREF_BORROWING_OVER_PREEMPTION
                     : is(pref, "PreemptionOverBorrowing") ? PREF_PREEMPTION_OVER_BORROWING
                                                           : PREF_UNSET;
    cq->within_cluster_queue = preempt_policy(JX_STR(spec, "preemption", "withinClusterQueue"));
    cq->reclaim_within_cohort = preempt_policy(JX_STR(spec, "preemption", "reclaimWithinCohort"));
    cq->borrow_within_cohort =
        preempt_policy(JX_STR(spec, "preemption", "borrowWithinCohort", "policy"));
    json_t *thr = JX_GET(spec, "preemption", "borrowWithinCohort", "maxPriorityThreshold");
    cq->has_max_priority_threshold = json_is_integer(thr);
    cq->max_priority_threshold = (int32_t)json_integer_value(thr);
    cq->stop_policy = stop_policy(JX_STR(spec, "stopPolicy"));
    cq->fair_weight_milli = fair_weight_milli(spec);
}

int api_cluster_queue_from_json(const json_t *obj, struct api_cluster_queue *out)
{
    memset(out, 0, sizeof(*out));
    if (!json_is_object(obj) || !api_name(obj))
        return CU_EINVAL;
    const json_t *spec = json_object_get(obj, "spec");
    out->name = xstrdup(api_name(obj));
    const char *cohort = JX_STR(spec, "cohort");
    out->cohort = dup_or(cohort ? cohort : JX_STR(spec, "cohortName"), "");
    if (groups_from_json(json_object_get(spec, "resourceGroups"), &out->groups,
                         &out->n_groups) < 0) {
        api_cluster_queue_release(out);
        return CU_EINVAL;
    }
    json_t *sel = json_object_get(spec, "namespaceSelector");
    out->has_namespace_selector = json_is_object(sel);
    if (out->has_namespace_selector) {
        struct diag d;
        diag_init(&d);
        api_label_selector_from_json(sel, "spec.namespaceSelector", &out->namespace_selector,
                                     &d);
        diag_release(&d);
    }
    cq_policies(spec, out);
    cq_checks(spec, out);
    return 0;
}

/* ---- Cohort, LocalQueue, WorkloadPriorityClass ---- */

int api_cohort_from_json(const json_t *obj, struct api_cohort *out)
{
    memset(out, 0, sizeof(*out));
    if (!json_is_object(obj) || !api_name(obj))
        return CU_EINVAL;
    const json_t *spec = json_object_get(obj, "spec");
    out->name = xstrdup(api_name(obj));
    out->parent = dup_or(JX_STR(spec, "parentName"), "");
    out->fair_weight_milli = fair_weight_milli(spec);
    if (groups_from_json(json_object_get(spec, "resourceGroups"), &out->groups,
                         &out->n_groups) < 0) {
        api_cohort_release(out);
        return CU_EINVAL;
    }
    return 0;
}

int api_local_queue_from_json(const json_t *obj, struct api_local_queue *out)
{
    memset(out, 0, sizeof(*out));
    if (!json_is_object(obj) || !api_name(obj))
        return CU_EINVAL;
    out->ns = dup_or(api_namespace(obj), "");
    out->name = xstrdup(api_name(obj));
    out->cluster_queue = dup_or(JX_STR(obj, "spec", "clusterQueue"), "");
    out->stop_policy = stop_policy(JX_STR(obj, "spec", "stopPolicy"));
    return 0;
}

int api_priority_class_from_json(const json_t *obj, struct api_priority_class *out)
{
    memset(out, 0, sizeof(*out));
    json_t *v = json_object_get(obj, "value");
    if (!json_is_object(obj) || !api_name(obj) || !json_is_integer(v))
        return CU_EINVAL;
    out->name = xstrdup(api_name(obj));
    out->value = (int32_t)json_integer_value(v);
    return 0;
}

/* ---- Workload ---- */

/* spec.podSets (sets) into wl. */
static int wl_podsets(const json_t *sets, struct api_workload *wl)
{
    size_t n = json_array_size(sets);
    wl->podsets = n ? xcalloc(n, sizeof(*wl->podsets)) : NULL;
    for (size_t i = 0; i < n; i++) {
        const json_t *ps = json_array_get(sets, i);
        struct api_podset *p = &wl->podsets[i];
        if (api_podset_from_template(json_object_get(ps, "template"), JX_STR(ps, "name"),
                                     (int32_t)JX_INT(ps, 1, "count"), p) < 0)
            return CU_EINVAL;
        wl->n_podsets++;
        p->min_count = (int32_t)JX_INT(ps, 0, "minCount");
        const json_t *tr = json_object_get(ps, "topologyRequest");
        if (tr)
            api_topology_request_decode(tr, p);
    }
    return 0;
}

static int64_t podset_count(const struct api_workload *wl, const char *name)
{
    for (size_t i = 0; i < wl->n_podsets; i++)
        if (is(wl->podsets[i].name, name))
            return wl->podsets[i].count;
    return 0;
}

/* topologyAssignment {levels, domains: [{values, count}]} (Kueue v1beta1);
 * domains whose values do not match the levels are skipped. */
static struct api_topology_assignment *topology_assignment_from_json(const json_t *topo)
{
    const json_t *levels = json_object_get(topo, "levels"), *domains = json_object_get(topo, "domains");
    struct api_topology_assignment *t = xcalloc(1, sizeof(*t));
    size_t nl = json_array_size(levels), nd = json_array_size(domains);
    t->levels = xcalloc(nl + 1, sizeof(*t->levels));
    for (size_t l = 0; l < nl; l++)
        t->levels[t->n_levels++] = dup_or(json_string_value(json_array_get(levels, l)), "");
    t->domains = xcalloc(nd + 1, sizeof(*t->domains));
    for (size_t d = 0; d < nd; d++) {
        const json_t *dom = json_array_get(domains, d), *vals = json_object_get(dom, "values");
        if (json_array_size(vals) != nl)
            continue;
        struct api_topology_domain *o = &t->domains[t->n_domains++];
        o->count = (int32_t)JX_INT(dom, 0, "count");
        o->values = xcalloc(nl + 1, sizeof(char *));
        for (size_t l = 0; l < nl; l++)
            o->values[l] = dup_or(json_string_value(json_array_get(vals, l)), "");
    }
    return t;
}

/* A pod set assignment's members (read in one pass: cheaper than a lookup
 * of each). */
static int assignment_from_json(const json_t *psa, const struct api_workload *wl,
                                struct api_podset_assignment *a)
{
    const json_t *name = NULL, *count = NULL, *flavors = NULL, *usage = NULL, *topo = NULL;
    for (void *it = json_object_iter((json_t *)psa); it;
         it = json_object_iter_next((json_t *)psa, it)) {
        const char *key = json_object_iter_key(it);
        const json_t **slot = key[0] == 'n' && !strcmp(key, "name")            ? &name
                              : key[0] == 'c' && !strcmp(key, "count")         ? &count
                              : key[0] == 'f' && !strcmp(key, "flavors")       ? &flavors
                              : key[0] == 'r' && !strcmp(key, "resourceUsage") ? &usage
                              : key[0] == 't' && !strcmp(key, "topologyAssignment") ? &topo
                                                                               : NULL;
        if (slot)
            *slot = json_object_iter_value(it);
    }
    a->name = dup_or(jx_str_of_(name), "");
    a->count = (int32_t)jx_int_of_(count, podset_count(wl, a->name));
    api_labels_from_json(flavors, &a->flavors);
    const char *res;
    json_t *q;
    json_object_foreach((json_t *)usage, res, q) {
        int64_t v;
        if (api_quantity_from_json(q, res, "", &v, NULL) < 0)
            return CU_EINVAL;
        api_reslist_set(&a->resource_usage, res, v);
    }
    if (json_is_object(topo))
        a->topology = topology_assignment_from_json(topo);
    return 0;
}

/* The status values the decoding reads (api_wl_status_values), from one
 * pass over the status (a status has few members: cheaper than a hash
 * lookup of each) and one over its conditions. */
static void wl_status_values_of(const json_t *st, struct api_wl_status_values *v)
{
    static const char *const keys[] = {"admission", "conditions", "requeueState",
                                       "reclaimablePods"};
    static const char *const types[API_WL_N_CONDS] = {"QuotaReserved", "Admitted", "Finished",
                                                      "Evicted", "Requeued"};
    json_t *m[4];
    jx_members(st, keys, 4, m);
    v->admission = m[0];
    v->requeue_state = m[2];
    v->reclaimable = m[3];
    api_cond_find_all(m[1], types, API_WL_N_CONDS, v->cond);
}

/* status.admission (adm, NULL: none) into wl, whose admission is empty. */
static int wl_admission(const json_t *adm, struct api_workload *wl)
{
    wl->has_admission = json_is_object(adm);
    if (!wl->has_admission)
        return 0;
    wl->admission.cluster_queue = dup_or(JX_STR(adm, "clusterQueue"), "");
    json_t *psas = json_object_get(adm, "podSetAssignments");
    size_t n = json_array_size(psas);
    wl->admission.podsets = n ? xcalloc(n, sizeof(*wl->admission.podsets)) : NULL;
    for (size_t i = 0; i < n; i++) {
        wl->admission.n_podsets++;
        if (assignment_from_json(json_array_get(psas, i), wl, &wl->admission.podsets[i]) < 0)
            return CU_EINVAL;
    }
    return 0;
}

/* The fields of wl read from c, the first condition of the k-th type of
 * api_wl_status_values.cond (NULL: none), replacing what they held. */
static void wl_condition(const json_t *c, int k, struct api_workload *wl)
{
    switch (k) {
    case API_WL_COND_QUOTA_RESERVED:
        wl->quota_reserved = api_cond_holds(c);
        wl->quota_reserved_ms = wl->quota_reserved ? api_cond_ltt_ms(c) : 0;
        break;
    case API_WL_COND_ADMITTED:
        wl->admitted = api_cond_holds(c);
        break;
    case API_WL_COND_FINISHED:
        wl->finished = api_cond_holds(c);
        break;
    case API_WL_COND_EVICTED: {
        wl->evicted = api_cond_holds(c);
        wl->evicted_ms = wl->evicted ? api_cond_ltt_ms(c) : 0;
        const char *reason = JX_STR(c, "reason");
        xfree(wl->evicted_reason);
        wl->evicted_reason = wl->evicted && reason ? xstrdup(reason) : NULL;
        break;
    }
    default: /* API_WL_COND_REQUEUED */
        wl->requeued_false = is(JX_STR(c, "status"), "False");
        break;
    }
}

/* status.requeueState (rs, NULL: none), replacing what wl held. */
static void wl_requeue_state(const json_t *rs, struct api_workload *wl)
{
    wl->requeue_count = (int32_t)JX_INT(rs, 0, "count");
    int64_t ms = 0;
    const char *at = JX_STR(rs, "requeueAt");
    wl->requeue_at_ms = at && timefmt_parse(at, &ms) == 0 ? ms : 0;
}

/* status.reclaimablePods (rps, NULL: none), replacing what wl held. */
static void wl_reclaimable(const json_t *rps, struct api_workload *wl)
{
    for (size_t i = 0; i < wl->n_reclaimable; i++)
        api_podset_assignment_release(&wl->reclaimable[i]);
    xfree(wl->reclaimable);
    wl->n_reclaimable = 0;
    size_t n = json_array_size(rps);
    wl->reclaimable = n ? xcalloc(n, sizeof(*wl->reclaimable)) : NULL;
    for (size_t i = 0; i < n; i++, wl->n_reclaimable++) {
        const json_t *rp = json_array_get(rps, i);
        wl->reclaimable[i].name = dup_or(JX_STR(rp, "name"), "");
        wl->reclaimable[i].count = (int32_t)JX_INT(rp, 0, "count");
    }
}

/* The labels and annotations the view reads (metadata's labels and
 * annotations objects, NULL where absent). */
static void wl_meta_misc(const json_t *labels, const json_t *annotations,
                         struct api_workload *wl)
{
    const char *elastic = jx_str_of_(json_object_get(annotations, "kueue.x-k8s.io/elastic-job"));
    wl->elastic = is(elastic, "true");
    const char *rf =
        jx_str_of_(json_object_get(annotations, "kueue.x-k8s.io/workload-slice-replacement-for"));
    wl->replacement_for = rf ? xstrdup(rf) : NULL;
    const char *gate = jx_str_of_(json_object_get(annotations, "kueue.x-k8s.io/admission-gated-by"));
    wl->admission_gated_by = gate ? xstrdup(gate) : NULL;
    const char *job_uid = jx_str_of_(json_object_get(labels, "kueue.x-k8s.io/job-uid"));
    wl->job_uid = job_uid ? xstrdup(job_uid) : NULL;
}

/* The status fields of wl decoded again from v, but for those read from
 * a value that is the very one (same address) in was (NULL: none is),
 * which wl keeps; keep_admission keeps the admission in any case (the
 * admission reads the pod set counts). Each field is read from one value
 * only (the admission from status.admission, quota_reserved and its time
 * from QuotaReserved, ...), so the result is the full decoding's. */
static int wl_status_apply(const struct api_wl_status_values *v,
                           const struct api_wl_status_values *was, bool keep_admission,
                           struct api_workload *wl)
{
    if (!keep_admission && (!was || was->admission != v->admission)) {
        api_admission_release(&wl->admission);
        wl->has_admission = false;
        if (wl_admission(v->admission, wl) < 0)
            return CU_EINVAL;
    }
    for (int k = 0; k < API_WL_N_CONDS; k++)
        if (!was || was->cond[k] != v->cond[k])
            wl_condition(v->cond[k], k, wl);
    if (!was || was->requeue_state != v->requeue_state)
        wl_requeue_state(v->requeue_state, wl);
    if (!was || was->reclaimable != v->reclaimable)
        wl_reclaimable(v->reclaimable, wl);
    return 0;
}

/* The status fields (read from obj's status), but for the admission when
 * it is kept. */
static int wl_status(const json_t *obj, struct api_workload *wl, bool keep_admission)
{
    struct api_wl_status_values v;
    wl_status_values_of(json_object_getn(obj, "status", 6), &v);
    return wl_status_apply(&v, NULL, keep_admission, wl);
}

/* The members of a Workload document, its metadata and its spec that
 * api_workload_from_json reads, each object read in one pass (jx_members:
 * they have few members). */
enum { WM_NAME, WM_NAMESPACE, WM_UID, WM_CREATED, WM_LABELS, WM_ANNOTATIONS, WM__N };
enum { WS_QUEUE, WS_PRIORITY, WS_CLASS, WS_CLASS_REF, WS_ACTIVE, WS_PODSETS, WS__N };

int api_workload_from_json(const json_t *obj, struct api_workload *out)
{
    static const char *const top_keys[] = {"metadata", "spec", "status"};
    static const char *const md_keys[WM__N] = {"name",   "namespace",         "uid",
                                               "creationTimestamp", "labels", "annotations"};
    static const char *const spec_keys[WS__N] = {"queueName",        "priority", "priorityClassName",
                                                 "priorityClassRef", "active",   "podSets"};
    memset(out, 0, sizeof(*out));
    json_t *top[3], *md[WM__N], *spec[WS__N];
    jx_members(obj, top_keys, 3, top);
    jx_members(top[0], md_keys, WM__N, md);
    const char *name = json_string_value(md[WM_NAME]);
    if (!json_is_object(obj) || !name)
        return CU_EINVAL;
    jx_members(top[1], spec_keys, WS__N, spec);
    out->ns = dup_or(json_string_value(md[WM_NAMESPACE]), "");
    out->name = xstrdup(name);
    out->uid = dup_or(json_string_value(md[WM_UID]), "");
    int64_t created = 0;
    out->creation_ms = timefmt_parse(jx_str_of_(md[WM_CREATED]), &created) < 0 ? 0 : created;
    out->queue_name = dup_or(jx_str_of_(spec[WS_QUEUE]), "");
    out->priority = (int32_t)jx_int_of_(spec[WS_PRIORITY], 0);
    const char *pc = jx_str_of_(spec[WS_CLASS]);
    out->priority_class = dup_or(pc ? pc : JX_STR(spec[WS_CLASS_REF], "name"), "");
    out->active = jx_bool_of_(spec[WS_ACTIVE], true);
    struct api_wl_status_values v;
    wl_status_values_of(top[2], &v);
    if (wl_podsets(spec[WS_PODSETS], out) < 0 || wl_status_apply(&v, NULL, false, out) < 0) {
        api_workload_release(out);
        return CU_EINVAL;
    }
    wl_meta_misc(md[WM_LABELS], md[WM_ANNOTATIONS], out);
    return 0;
}

int api_workload_status_from_json(const json_t *obj, struct api_workload *wl,
                                  bool keep_admission)
{
    if (!json_is_object(obj) || wl_status(obj, wl, keep_admission) < 0) {
        api_workload_release(wl);
        return CU_EINVAL;
    }
    return 0;
}

int api_workload_status_from_values(const struct api_wl_status_values *v,
                                    const struct api_wl_status_values *was,
                                    struct api_workload *wl)
{
    if (wl_status_apply(v, was, false, wl) < 0) {
        api_workload_release(wl);
        return CU_EINVAL;
    }
    return 0;
}

bool api_cluster_queue_uses_flavor(const json_t *cq, const char *flavor)
{
    size_t g, f;
    json_t *grp, *fl;
    json_array_foreach(JX_GET(cq, "spec", "resourceGroups"), g, grp) {
        json_array_foreach(JX_GET(grp, "flavors"), f, fl) {
            if (!strcmp(jx_or_empty(JX_STR(fl, "name")), flavor))
                return true;
        }
    }
    return false;
}

bool api_cluster_queue_uses_check(const json_t *cq, const char *check)
{
    size_t i;
    json_t *v;
    json_array_foreach(JX_GET(cq, "spec", "admissionChecks"), i, v) {
        if (!strcmp(jx_or_empty(json_string_value(v)), check))
            return true;
    }
    json_array_foreach(JX_GET(cq, "spec", "admissionChecksStrategy", "admissionChecks"), i, v) {
        if (!strcmp(jx_or_empty(JX_STR(v, "name")), check))
            return true;
    }
    return false;
}
