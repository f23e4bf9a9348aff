/*
 * nodes/provreq_plan: what a ProvisioningRequest needs before it is
 * Provisioned (see nodes/provreq.c for the lifecycle).
 *
 * queued-provisioning.gke.io: the pods of every pod set (built from the
 * PodTemplates) go to one queued-provisioning node pool — the one their
 * nodeSelector cloud.google.com/gke-nodepool names, else the first by name
 * whose nodes they fit. The number of nodes is a first-fit packing of the
 * pods onto fresh nodes of that pool, in whole slices. The request is
 * Accepted, the provider asked for all of them at once, and when it answers
 * every node is created together (label autoscaling.gke.io/provisioning-
 * request) and the request Provisioned. A stockout keeps it waiting
 * (Provisioned=False with the provider's message), retried periodically.
 *
 * best-effort-atomic-scale-up: pods that fit existing nodes are dropped;
 * the rest are planned onto autoscaling pools like ordinary scale-up, and
 * the request is Provisioned as soon as every provider request succeeded
 * (all or nothing). check-capacity: Provisioned only if every pod fits the
 * nodes that exist. Both retry with the cluster autoscaler's backoff
 * (1 min doubling to 10 min).
 */
#include <string.h>

#include "api/meta.h"
#include "api/object.h"
#include "ctrl/nodes/nodes.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define BACKOFF_BASE_MS (60 * 1000)
#define BACKOFF_MAX_MS (10 * 60 * 1000)

int pr_load_templates(struct pr_work *w, char *msg, size_t msglen)
{
    const json_t *sets = JX_GET(w->pr, "spec", "podSets");
    size_t n = json_array_size(sets);
    w->podsets = xcalloc(n ? n : 1, sizeof(*w->podsets));
    for (size_t i = 0; i < n; i++) {
        const json_t *set = json_array_get(sets, i);
        const char *tname = JX_STR(set, "podTemplateRef", "name");
        int32_t count = (int32_t)JX_INT(set, 1, "count");
        json_t *t = tname ? store_get(ctrl_store(w->c), KIND_PODTEMPLATE, w->ns, tname) : NULL;
        if (!t) {
            snprintf(msg, msglen, "PodTemplate %s/%s of spec.podSets[%zu] not found", w->ns,
                     jx_or_empty(tname), i);
            return CU_ENOTFOUND;
        }
        int rc = api_podset_from_template(JX_GET(t, "template"), tname, count, &w->podsets[i]);
        json_decref(t);
        if (rc != 0) {
            snprintf(msg, msglen, "PodTemplate %s/%s: cannot build pods from its template",
                     w->ns, tname);
            return CU_EINVAL;
        }
        api_reslist_set(&w->podsets[i].requests, "pods", 1);
        w->n_podsets++;
    }
    return 0;
}

static void why_text(struct nodes_why *why, char *msg, size_t msglen)
{
    size_t off = 0;
    for (int i = 0; i < why->n && off < msglen; i++)
        off += (size_t)snprintf(msg + off, msglen - off, "%s%s", i ? ", " : "",
                                why->reasons[i]);
    nodes_why_release(why);
}

/* Does every pod set fit this pool's nodes (ignoring resources)? */
static bool pool_fits(const struct pr_work *w, const struct prov_pool *p, char *msg,
                      size_t msglen)
{
    struct nodes_snap vs = {0};
    nodes_snap_add_virtual(&vs, p);
    bool ok = true;
    for (size_t i = 0; i < w->n_podsets && ok; i++) {
        struct nodes_why why = {0};
        struct nodes_node *node = &vs.nodes[0];
        if (!nodes_fit_static(node, &w->podsets[i])) {
            nodes_fit(node, &w->podsets[i], &why);
            char reasons[256];
            why_text(&why, reasons, sizeof(reasons));
            snprintf(msg, msglen, "pod set %s cannot run on node pool %s: %s",
                     w->podsets[i].name, p->name, reasons);
            ok = false;
        }
    }
    nodes_snap_release(&vs);
    return ok;
}

/* The queued-provisioning pool the request targets; index or -1 (msg). */
static int target_pool(const struct pr_work *w, const struct nodes_pools *pools, char *msg,
                       size_t msglen)
{
    const char *want = NULL;
    for (size_t i = 0; i < w->n_podsets; i++) {
        const char *v = api_labels_get(&w->podsets[i].node_selector, LABEL_NODEPOOL);
        if (v)
            want = v;
    }
    snprintf(msg, msglen, want ? "node pool %s not found" :
                          "no node pool with queued provisioning fits the request's pod sets",
             want);
    for (size_t k = 0; k < pools->n; k++) {
        const struct prov_pool *p = &pools->items[k].pool;
        if (want && strcmp(p->name, want))
            continue;
        if (!p->queued) {
            if (want)
                snprintf(msg, msglen, "node pool %s does not have queued provisioning enabled "
                                      "(class %s needs it)", p->name, PRC_QUEUED_NAME);
            continue;
        }
        char why[512];
        if (pool_fits(w, p, why, sizeof(why)))
            return (int)k;
        if (want)
            snprintf(msg, msglen, "%s", why);
    }
    return -1;
}

/* First-fit packing of every pod onto fresh nodes of p; -1 (msg) when a
 * pod does not fit an empty node. */
static int nodes_needed(const struct pr_work *w, const struct prov_pool *p, char *msg,
                        size_t msglen)
{
    struct nodes_snap vs = {0};
    int result = 0;
    for (size_t i = 0; i < w->n_podsets && result >= 0; i++) {
        const struct api_podset *ps = &w->podsets[i];
        for (int32_t k = 0; k < ps->count && result >= 0; k++) {
            if (nodes_place_existing(&vs, ps))
                continue;
            size_t first = vs.n;
            for (int u = 0; u < p->unit; u++)
                nodes_snap_add_virtual(&vs, p);
            struct nodes_why why = {0};
            if (!nodes_fit(&vs.nodes[first], ps, &why)) {
                char reasons[256];
                why_text(&why, reasons, sizeof(reasons));
                snprintf(msg, msglen, "a pod of pod set %s does not fit a %s node: %s", ps->name,
                         p->machine->name, reasons);
                result = -1;
                break;
            }
            nodes_node_account(&vs.nodes[first], ps);
        }
    }
    if (result >= 0)
        result = (int)vs.n;
    nodes_snap_release(&vs);
    return result;
}

static void set_details(struct pr_work *w, const struct prov_pool *p)
{
    json_t *d = JX_OBJ(w->pr, "status", "provisioningClassDetails");
    json_object_set_new(d, "NodePoolName", json_string(p->name));
    json_object_set_new(d, "ResizeRequestName", json_string(w->name));
    json_object_set_new(d, "ProvisioningMode", json_string("resize_request"));
    json_object_set_new(d, "NodePoolAutoProvisioned", json_string("false"));
    if (p->tpu)
        json_object_set_new(d, "AcceleratorType", json_string(p->machine->tpu->node_label));
    else if (p->machine->gpu)
        json_object_set_new(d, "AcceleratorType", json_string(p->machine->gpu));
}

static void provisioned(struct pr_work *w, const char *reason, const char *message)
{
    pr_set_cond(w, "Provisioned", "True", reason, message);
    if (w->state)
        json_object_set_new(w->state, "provisionedAt", json_integer(ctrl_now(w->c)));
}

static bool retry_pending(struct pr_work *w)
{
    json_t *r = w->state ? json_object_get(w->state, "retryAt") : NULL;
    if (r && json_integer_value(r) > ctrl_now(w->c)) {
        pr_timer(w, json_integer_value(r));
        return true;
    }
    return false;
}

static void retry_later(struct pr_work *w, int64_t delay_ms)
{
    int64_t at = ctrl_now(w->c) + delay_ms;
    json_object_set_new(w->state, "retryAt", json_integer(at));
    pr_timer(w, at);
}

/* Ask the provider for the pool's nodes, all at once. */
static void queued_request(struct pr_work *w, const struct nodes_pool_item *it, int n)
{
    const struct prov_pool *p = &it->pool;
    const struct prc_texts *t = prc_texts(PRC_QUEUED);
    int existing = 0;
    json_t *names = nodes_of_pool(ctrl_store(w->c), p->name);
    existing = (int)json_array_size(names);
    json_decref(names);
    char msg[512];
    if (existing + nodes_pending_count(w->ctx, p->name) + n > p->max_nodes) {
        snprintf(msg, sizeof(msg), "%s Waiting for room in node pool %s (maxNodeCount %d, %d "
                 "node(s) in use or in flight, %d needed).", t->waiting_msg, p->name,
                 p->max_nodes, existing + nodes_pending_count(w->ctx, p->name), n);
        pr_set_cond(w, "Provisioned", "False", t->waiting_reason, msg);
        retry_later(w, NODES_RETRY_MS);
        return;
    }
    /* once: a request resumed after a restart keeps its original time */
    int64_t asked = JX_INT(w->state, 0, "askedAt");
    json_object_del(w->state, "askedAt");
    int64_t ready = nodes_request(w->c, it->obj, p, n, w->key, asked, msg, sizeof(msg));
    if (ready == PROV_NEVER) {
        char *text = xasprintf("%s %s", t->waiting_msg, msg);
        pr_set_cond(w, "Provisioned", "False", t->waiting_reason, text);
        xfree(text);
        retry_later(w, NODES_RETRY_MS);
        return;
    }
    pr_set_cond(w, "Provisioned", "False", t->waiting_reason, t->waiting_msg);
    bool waiting;
    if (pr_finish_pending(w, &waiting) > 0)
        provisioned(w, t->provisioned_reason, t->provisioned_msg);
}

void pr_step_queued(struct pr_work *w)
{
    const struct prc_texts *t = prc_texts(PRC_QUEUED);
    struct nodes_pools pools;
    nodes_pools_load(ctrl_store(w->c), &pools);
    char msg[512];
    int k = target_pool(w, &pools, msg, sizeof(msg));
    int n = k >= 0 ? nodes_needed(w, &pools.items[k].pool, msg, sizeof(msg)) : -1;
    if (k < 0) {
        pr_fail(w, "NoMatchingNodePool", msg);
    } else if (n < 0) {
        pr_fail(w, "PodsDoNotFit", msg);
    } else if (n > pools.items[k].pool.max_nodes) {
        snprintf(msg, sizeof(msg), "node pool %s allows at most %d node(s) (maxNodeCount); the "
                 "request needs %d", pools.items[k].pool.name, pools.items[k].pool.max_nodes, n);
        pr_fail(w, "OutOfResources", msg);
    } else {
        if (!api_cond_is_true(w->pr, "Accepted")) {
            pr_set_cond(w, "Accepted", "True", t->accepted_reason, t->accepted_msg);
            pr_set_cond(w, "Provisioned", "False", t->waiting_reason, t->waiting_msg);
            set_details(w, &pools.items[k].pool);
        }
        bool waiting;
        if (pr_finish_pending(w, &waiting) > 0)
            provisioned(w, t->provisioned_reason, t->provisioned_msg);
        else if (!waiting && !retry_pending(w))
            queued_request(w, &pools.items[k], n);
    }
    nodes_pools_release(&pools);
}

static void backoff_retry(struct pr_work *w, enum prc cls)
{
    const struct prc_texts *t = prc_texts(cls);
    int attempt = (int)JX_INT(w->state, 0, "attempt") + 1;
    json_object_set_new(w->state, "attempt", json_integer(attempt));
    int64_t d = BACKOFF_BASE_MS;
    for (int i = 1; i < attempt && d < BACKOFF_MAX_MS; i++)
        d *= 2;
    pr_set_cond(w, "Provisioned", "False", t->waiting_reason, t->waiting_msg);
    retry_later(w, d < BACKOFF_MAX_MS ? d : BACKOFF_MAX_MS);
}

/* Place every pod on existing nodes, else (planned != NULL) on new nodes
 * of pools. Returns false when some pod fits nowhere. */
static bool place_all(struct pr_work *w, struct nodes_snap *snap, const struct nodes_pools *pools,
                      int *planned)
{
    for (size_t i = 0; i < w->n_podsets; i++) {
        for (int32_t k = 0; k < w->podsets[i].count; k++) {
            if (nodes_place_existing(snap, &w->podsets[i]))
                continue;
            if (!planned)
                return false;
            if (nodes_plan_new(w->ctx, snap, pools, planned, &w->podsets[i],
                               ctrl_now(w->c)) < 0)
                return false;
        }
    }
    return true;
}

static void accept_oss(struct pr_work *w)
{
    const struct prc_texts *t = prc_texts(w->cls);
    if (!api_cond_is_true(w->pr, "Accepted"))
        pr_set_cond(w, "Accepted", "True", t->accepted_reason, t->accepted_msg);
}

void pr_step_atomic(struct pr_work *w)
{
    accept_oss(w);
    if (retry_pending(w) || pr_has_pending(w))
        return;
    struct nodes_snap snap;
    struct nodes_pools pools;
    nodes_snap_build(ctrl_store(w->c), &snap);
    nodes_pools_load(ctrl_store(w->c), &pools);
    int *planned = xcalloc(pools.n + 1, sizeof(int));
    bool ok = place_all(w, &snap, &pools, planned), any = false;
    int64_t asked = JX_INT(w->state, 0, "askedAt"); /* see queued_request */
    json_object_del(w->state, "askedAt");
    for (size_t k = 0; ok && k < pools.n; k++) {
        char msg[256];
        if (planned[k] && nodes_request(w->c, pools.items[k].obj, &pools.items[k].pool,
                                        planned[k], w->key, asked, msg, sizeof(msg)) == PROV_NEVER)
            ok = false;
        any |= planned[k] > 0;
    }
    if (!ok) {
        nodes_pending_drop(w->ctx, NULL, w->key); /* all or nothing */
        backoff_retry(w, PRC_ATOMIC);
    } else if (any) {
        provisioned(w, "CapacityIsProvisioned", prc_texts(PRC_ATOMIC)->provisioned_msg);
    } else {
        provisioned(w, "CapacityIsFound", prc_texts(PRC_ATOMIC)->provisioned_msg);
    }
    xfree(planned);
    nodes_pools_release(&pools);
    nodes_snap_release(&snap);
}

void pr_step_check(struct pr_work *w)
{
    accept_oss(w);
    if (retry_pending(w))
        return;
    struct nodes_snap snap;
    struct nodes_pools none = {0};
    nodes_snap_build(ctrl_store(w->c), &snap);
    if (place_all(w, &snap, &none, NULL)) {
        provisioned(w, "CapacityIsFound", prc_texts(PRC_CHECK)->provisioned_msg);
    } else if (!strcmp(jx_or_empty(JX_STR(w->pr, "spec", "parameters", "noRetry")), "true")) {
        pr_fail(w, "CapacityIsNotFound", "CA could not find requested capacity");
    } else {
        backoff_retry(w, PRC_CHECK);
    }
    nodes_snap_release(&snap);
}
