/*
 * nodes/fit: the scheduling model shared by the binder and the autoscaler:
 * a snapshot of Nodes with the requests of the pods bound to them, and
 * kube-scheduler's filters (NodeUnschedulable, TaintToleration,
 * NodeAffinity, NodeResourcesFit) with their reason strings, so an
 * unschedulable pod reads like it would on Kubernetes:
 * "0/4 nodes are available: 1 Insufficient google.com/tpu, 3 node(s) didn't
 * match Pod's node affinity/selector."
 *
 * Pure object logic over store documents; the snapshot is sorted by node
 * name so every decision made from it is deterministic.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "api/object.h"
#include "api/quantity.h"
#include "api/selector.h"
#include "ctrl/nodes/nodes.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

int nodes_pod_view(const json_t *pod, struct api_podset *out)
{
    int rc = api_podset_from_template(pod, jx_or_empty(api_name(pod)), 1, out);
    if (rc == 0)
        api_reslist_set(&out->requests, "pods", 1);
    return rc;
}

bool nodes_pod_is_active(const json_t *pod)
{
    const char *phase = JX_STR(pod, "status", "phase");
    return !phase || (strcmp(phase, "Succeeded") && strcmp(phase, "Failed"));
}

void nodes_pod_tidy_conditions(json_t *pod)
{
    size_t i;
    json_t *c;
    json_array_foreach(JX_GET(pod, "status", "conditions"), i, c) {
        const char *const keys[] = {"reason", "message"};
        for (int k = 0; k < 2; k++)
            if (!strcmp(jx_or_empty(JX_STR(c, keys[k])), "") && json_object_get(c, keys[k]))
                json_object_del(c, keys[k]);
    }
}

const char *nodes_pod_provreq(const json_t *pod)
{
    const char *v = api_annotation(pod, ANNOT_CONSUME_PR);
    return v ? v : api_annotation(pod, ANNOT_CONSUME_PR_OLD);
}

static void parse_alloc(const json_t *map, struct api_reslist *out)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)map, key, v) {
        int64_t q;
        char err[128];
        if (json_is_string(v) &&
            api_quantity_parse(json_string_value(v), key, &q, err, sizeof(err)) == 0)
            api_reslist_set(out, key, q);
    }
}

static void node_from_json(const json_t *obj, struct nodes_node *n)
{
    memset(n, 0, sizeof(*n));
    n->name = xstrdup(api_name(obj));
    n->pool = xstrdup(jx_or_empty(api_label(obj, LABEL_NODEPOOL)));
    n->provreq = xstrdup(api_annotation(obj, ANNOT_PROVREQ));
    n->slice = xstrdup(api_annotation(obj, ANNOT_SLICE));
    api_labels_from_json(JX_GET(obj, "metadata", "labels"), &n->labels);
    const json_t *taints = JX_GET(obj, "spec", "taints");
    n->n_taints = json_array_size(taints);
    n->taints = xcalloc(n->n_taints ? n->n_taints : 1, sizeof(*n->taints));
    for (size_t i = 0; i < n->n_taints; i++)
        api_taint_from_json(json_array_get(taints, i), &n->taints[i]);
    parse_alloc(JX_GET(obj, "status", "allocatable"), &n->alloc);
    n->unschedulable = JX_BOOL(obj, false, "spec", "unschedulable");
    n->ready = api_cond_is_true(obj, "Ready");
}

void nodes_node_release(struct nodes_node *n)
{
    xfree(n->name);
    xfree(n->pool);
    xfree(n->provreq);
    xfree(n->slice);
    api_labels_release(&n->labels);
    for (size_t i = 0; i < n->n_taints; i++)
        api_taint_release(&n->taints[i]);
    xfree(n->taints);
    api_reslist_release(&n->alloc);
    api_reslist_release(&n->used);
    memset(n, 0, sizeof(*n));
}

void nodes_node_account(struct nodes_node *n, const struct api_podset *pod)
{
    for (size_t i = 0; i < pod->requests.n; i++) {
        const struct api_res *r = &pod->requests.items[i];
        api_reslist_set(&n->used, r->name, api_reslist_get(&n->used, r->name) + r->value);
    }
    n->n_pods++;
}

static int node_cmp(const void *a, const void *b)
{
    return strcmp(((const struct nodes_node *)a)->name, ((const struct nodes_node *)b)->name);
}

struct nodes_node *nodes_snap_find(struct nodes_snap *snap, const char *name)
{
    for (size_t i = 0; name && i < snap->n; i++)
        if (!strcmp(snap->nodes[i].name, name))
            return &snap->nodes[i];
    return NULL;
}

void nodes_snap_build(struct store *s, struct nodes_snap *out)
{
    memset(out, 0, sizeof(*out));
    json_t *nodes = store_list(s, KIND_NODE, NULL, NULL);
    out->n = json_array_size(nodes);
    out->nodes = xcalloc(out->n ? out->n : 1, sizeof(*out->nodes));
    for (size_t i = 0; i < out->n; i++)
        node_from_json(json_array_get(nodes, i), &out->nodes[i]);
    json_decref(nodes);
    qsort(out->nodes, out->n, sizeof(*out->nodes), node_cmp);
    json_t *pods = store_list(s, KIND_POD, NULL, NULL);
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod) {
        const char *nn = JX_STR(pod, "spec", "nodeName");
        if (!nn || !nn[0] || !nodes_pod_is_active(pod))
            continue;
        struct nodes_node *n = nodes_snap_find(out, nn);
        struct api_podset ps;
        if (!n || nodes_pod_view(pod, &ps) != 0)
            continue;
        nodes_node_account(n, &ps);
        api_podset_release(&ps);
    }
    json_decref(pods);
}

void nodes_snap_release(struct nodes_snap *snap)
{
    for (size_t i = 0; i < snap->n; i++)
        nodes_node_release(&snap->nodes[i]);
    XFREE(snap->nodes);
    snap->n = 0;
}

struct nodes_node *nodes_snap_add_virtual(struct nodes_snap *snap, const struct prov_pool *pool)
{
    snap->nodes = xreallocarray(snap->nodes, snap->n + 1, sizeof(*snap->nodes));
    struct nodes_node *n = &snap->nodes[snap->n++];
    memset(n, 0, sizeof(*n));
    n->name = xasprintf("(new %s node)", pool->name);
    n->pool = xstrdup(pool->name);
    nodes_pool_labels(pool, &n->labels);
    nodes_pool_taints(pool, &n->taints, &n->n_taints);
    struct prov_node_shape sh;
    prov_node_shape(pool->machine, &sh);
    api_reslist_set(&n->alloc, "cpu", sh.alloc_cpu_milli);
    api_reslist_set(&n->alloc, "memory", sh.alloc_memory_bytes);
    api_reslist_set(&n->alloc, "pods", sh.pods);
    if (sh.accel_resource)
        api_reslist_set(&n->alloc, sh.accel_resource, sh.accel);
    n->ready = true;
    n->is_virtual = true;
    return n;
}

static void why_add(struct nodes_why *why, char *reason)
{
    if (why && why->n < (int)(sizeof(why->reasons) / sizeof(why->reasons[0])))
        why->reasons[why->n++] = reason;
    else
        xfree(reason);
}

void nodes_why_release(struct nodes_why *why)
{
    for (int i = 0; i < why->n; i++)
        xfree(why->reasons[i]);
    why->n = 0;
}

static const struct api_taint *untolerated(const struct nodes_node *node,
                                           const struct api_podset *pod)
{
    for (size_t i = 0; i < node->n_taints; i++) {
        const struct api_taint *t = &node->taints[i];
        if (strcmp(t->effect, "NoSchedule") && strcmp(t->effect, "NoExecute"))
            continue;
        if (!api_tolerations_tolerate(pod->tolerations, pod->n_tolerations, t))
            return t;
    }
    return NULL;
}

static bool selector_matches(const struct nodes_node *node, const struct api_podset *pod)
{
    for (size_t i = 0; i < pod->node_selector.n; i++) {
        const char *v = api_labels_get(&node->labels, pod->node_selector.items[i].key);
        if (!v || strcmp(v, pod->node_selector.items[i].value))
            return false;
    }
    return pod->n_affinity_terms == 0 ||
           api_node_terms_match(pod->affinity_terms, pod->n_affinity_terms, &node->labels);
}

/* Filters before resources; the first failing one explains (as the
 * scheduler stops at a node's first failing filter). */
static bool fit_static(const struct nodes_node *node, const struct api_podset *pod,
                       struct nodes_why *why)
{
    if (node->unschedulable) {
        why_add(why, xstrdup("node(s) were unschedulable"));
        return false;
    }
    const struct api_taint *t = untolerated(node, pod);
    if (t) {
        why_add(why, xasprintf("node(s) had untolerated taint {%s: %s}", t->key, t->value));
        return false;
    }
    if (!selector_matches(node, pod)) {
        why_add(why, xstrdup("node(s) didn't match Pod's node affinity/selector"));
        return false;
    }
    return true;
}

bool nodes_fit_static(const struct nodes_node *node, const struct api_podset *pod)
{
    return fit_static(node, pod, NULL);
}

bool nodes_fit(const struct nodes_node *node, const struct api_podset *pod,
               struct nodes_why *why)
{
    if (!fit_static(node, pod, why))
        return false;
    bool ok = true;
    if (node->n_pods + 1 > api_reslist_get(&node->alloc, "pods")) {
        why_add(why, xstrdup("Too many pods"));
        ok = false;
    }
    for (size_t i = 0; i < pod->requests.n; i++) {
        const struct api_res *r = &pod->requests.items[i];
        if (r->value <= 0 || !strcmp(r->name, "pods"))
            continue;
        int64_t free_ = api_reslist_get(&node->alloc, r->name) -
                        api_reslist_get(&node->used, r->name);
        if (free_ < r->value) {
            why_add(why, xasprintf("Insufficient %s", r->name));
            ok = false;
        }
    }
    return ok;
}

int64_t nodes_score(const struct nodes_node *node, const struct api_podset *pod)
{
    int64_t sum = 0, n = 0;
    for (size_t i = 0; i < node->alloc.n; i++) {
        const struct api_res *a = &node->alloc.items[i];
        if (a->value <= 0 || !strcmp(a->name, "pods"))
            continue;
        int64_t req = api_reslist_get(&pod->requests, a->name);
        if (req <= 0 && strcmp(a->name, "cpu") && strcmp(a->name, "memory"))
            continue;
        int64_t used = api_reslist_get(&node->used, a->name) + req;
        sum += used >= a->value ? 1000 : (int64_t)((double)used * 1000.0 / (double)a->value);
        n++;
    }
    return n ? sum / n : 0;
}

void nodes_fiterr_add(struct nodes_fiterr *fe, struct nodes_why *why)
{
    fe->n_nodes++;
    for (int k = 0; k < why->n; k++) {
        size_t i = 0;
        while (i < fe->n && strcmp(fe->items[i].reason, why->reasons[k]))
            i++;
        if (i == fe->n) {
            fe->items = xreallocarray(fe->items, fe->n + 1, sizeof(*fe->items));
            fe->items[fe->n].reason = xstrdup(why->reasons[k]);
            fe->items[fe->n++].count = 0;
        }
        fe->items[i].count++;
    }
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

char *nodes_fiterr_message(const struct nodes_fiterr *fe)
{
    if (fe->n_nodes == 0)
        return xstrdup("no nodes available to schedule pods");
    char **parts = xcalloc(fe->n ? fe->n : 1, sizeof(char *));
    for (size_t i = 0; i < fe->n; i++)
        parts[i] = xasprintf("%d %s", fe->items[i].count, fe->items[i].reason);
    qsort(parts, fe->n, sizeof(char *), str_cmp); /* as the scheduler sorts them */
    struct sbuf sb;
    sbuf_init(&sb, 0);
    sbuf_addf(&sb, "0/%d nodes are available", fe->n_nodes);
    for (size_t i = 0; i < fe->n; i++) {
        sbuf_addf(&sb, "%s%s", i ? ", " : ": ", parts[i]);
        xfree(parts[i]);
    }
    sbuf_addc(&sb, '.');
    xfree(parts);
    char *s = sbuf_take(&sb);
    sbuf_release(&sb);
    return s;
}

void nodes_fiterr_release(struct nodes_fiterr *fe)
{
    for (size_t i = 0; i < fe->n; i++)
        xfree(fe->items[i].reason);
    XFREE(fe->items);
    fe->n = 0;
    fe->n_nodes = 0;
}
