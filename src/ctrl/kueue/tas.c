/*
 * kueue/tas: what Kueue's TAS cache reads from the cluster, for the engine
 * (engine/tas.c): every ready, schedulable Node with its labels and the
 * capacity left by the pods that are not TAS pods. TAS pods (label
 * kueue.x-k8s.io/tas, set when a job's TAS pod set starts: kueue/podset.c)
 * are counted by the engine from their Workloads' topology assignments
 * instead, so they count once, from admission on. Kueue: KEP-2724
 * "Computing the assignment" (non-TAS pods usage); docs/tas.md.
 */
#include <stdlib.h>
#include <string.h>

#include "api/object.h"
#include "api/quantity.h"
#include "api/selector.h"
#include "ctrl/kueue/kueue.h"
#include "engine/engine.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define TAS_POD_LABEL "kueue.x-k8s.io/tas"

struct tas_node {
    const char *name;
    struct api_labels labels;
    struct api_reslist free;
    bool has_pods; /* allocatable lists "pods" */
};

static int node_cmp(const void *a, const void *b)
{
    return strcmp(((const struct tas_node *)a)->name, ((const struct tas_node *)b)->name);
}

static bool usable(const json_t *node)
{
    const json_t *ready = api_cond_get(node, "Ready");
    return api_name(node) && !JX_BOOL(node, false, "spec", "unschedulable") &&
           !strcmp(jx_or_empty(JX_STR(ready, "status")), "True");
}

/* The pod's requests (containers and init containers as the scheduler
 * sums them) subtracted from its node's free capacity, "pods" by one. */
static void take_pod(struct tas_node *n, const json_t *pod)
{
    struct api_podset ps;
    if (api_podset_from_template(pod, NULL, 1, &ps) != 0)
        return;
    for (size_t r = 0; r < ps.requests.n; r++) {
        const char *res = ps.requests.items[r].name;
        api_reslist_set(&n->free, res, api_reslist_get(&n->free, res) - ps.requests.items[r].value);
    }
    if (n->has_pods)
        api_reslist_set(&n->free, "pods", api_reslist_get(&n->free, "pods") - 1);
    api_podset_release(&ps);
}

void kq_tas_feed_nodes(struct store *st, struct eng *eng)
{
    json_t *nodes = store_list(st, KIND_NODE, NULL, NULL);
    struct tas_node *tn = xcalloc(json_array_size(nodes) + 1, sizeof(*tn));
    size_t n = 0, i;
    json_t *o;
    json_array_foreach(nodes, i, o) {
        if (!usable(o))
            continue;
        struct tas_node *t = &tn[n++];
        t->name = api_name(o);
        api_labels_from_json(JX_GET(o, "metadata", "labels"), &t->labels);
        const char *res;
        json_t *q;
        json_object_foreach(JX_GET(o, "status", "allocatable"), res, q) {
            int64_t v;
            if (api_quantity_from_json(q, res, "", &v, NULL) == 0)
                api_reslist_set(&t->free, res, v);
            t->has_pods |= !strcmp(res, "pods");
        }
    }
    if (n > 1)
        qsort(tn, n, sizeof(*tn), node_cmp);
    json_t *pods = store_list(st, KIND_POD, NULL, NULL);
    json_array_foreach(pods, i, o) {
        const char *nn = JX_STR(o, "spec", "nodeName"), *phase = JX_STR(o, "status", "phase");
        if (!nn || !nn[0] || api_label(o, TAS_POD_LABEL) ||
            (phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))))
            continue;
        struct tas_node key = {.name = nn};
        struct tas_node *t = n ? bsearch(&key, tn, n, sizeof(*tn), node_cmp) : NULL;
        if (t)
            take_pod(t, o);
    }
    json_decref(pods);
    struct eng_node *in = xcalloc(n + 1, sizeof(*in));
    for (i = 0; i < n; i++)
        in[i] = (struct eng_node){tn[i].name, &tn[i].labels, &tn[i].free};
    eng_set_nodes(eng, in, n);
    xfree(in);
    for (i = 0; i < n; i++) {
        api_labels_release(&tn[i].labels);
        api_reslist_release(&tn[i].free);
    }
    xfree(tn);
    json_decref(nodes); /* names borrowed from it until here */
}
