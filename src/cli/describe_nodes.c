/*
 * describe_nodes: describe sections for cueue's NodePool (its gcloud-like
 * settings, the local provider's capacity mode, and its nodes, selected by
 * the label cloud.google.com/gke-nodepool=<pool>) and for Node (taints,
 * capacity vs allocatable, the pods bound to it).
 */
#include <string.h>

#include "cli/describe-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define POOL_LABEL "cloud.google.com/gke-nodepool"

static const char *yes_no(bool b)
{
    return b ? "true" : "false";
}

/* List objects of kind kid in every namespace with a label or field
 * selector. Returns the items (new ref) or NULL. */
static json_t *list_selected(struct cli_ctx *c, enum api_kind_id kid, const char *label_sel,
                             const char *field_sel)
{
    json_t *items = NULL;
    if (cli__list_kind(c, api_kind_get(kid), NULL, label_sel, field_sel, &items, NULL, 0))
        return NULL;
    return items;
}

static void pool_nodes(struct cli_ctx *c, const char *pool)
{
    char *sel = xasprintf(POOL_LABEL "=%s", pool);
    json_t *nodes = list_selected(c, KIND_NODE, sel, NULL);
    xfree(sel);
    if (!json_array_size(nodes)) {
        cli__desc_kv(c, 0, "Nodes", "<none>");
        json_decref(nodes);
        return;
    }
    struct cli_table t;
    size_t i;
    json_t *n;
    cli__table_init(&t, 4);
    cli__table_rowv(&t, "Name", "Ready", "Age", "Allocatable");
    json_array_foreach(nodes, i, n) {
        char age[32];
        const char *ready = "Unknown";
        size_t j;
        json_t *cond;
        json_array_foreach(JX_GET(n, "status", "conditions"), j, cond)
            if (!strcmp(jx_or_empty(JX_STR(cond, "type")), "Ready"))
                ready = jx_or_empty(JX_STR(cond, "status"));
        char *alloc = desc__map_text(JX_GET(n, "status", "allocatable"));
        cli__table_rowv(&t, JX_STR(n, "metadata", "name"), ready,
                        cli__age(JX_STR(n, "metadata", "creationTimestamp"), age), alloc);
        xfree(alloc);
    }
    cli__desc_table(c, 0, "Nodes", &t);
    json_decref(nodes);
}

void desc__nodepool(struct cli_ctx *c, const struct api_kind *k, const json_t *p)
{
    (void)k;
    const json_t *s = JX_GET(p, "spec");
    cli__desc_kv(c, 0, "Machine Type", "%s", desc__or_none(JX_STR(s, "config", "machineType")));
    cli__desc_kv(c, 0, "TPU Topology", "%s",
                 desc__or_none(JX_STR(s, "placementPolicy", "tpuTopology")));
    cli__desc_kv(c, 0, "Initial Nodes", "%lld", (long long)JX_INT(s, 0, "initialNodeCount"));
    if (JX_BOOL(s, false, "autoscaling", "enabled"))
        cli__desc_kv(c, 0, "Autoscaling", "%lld to %lld nodes",
                     (long long)JX_INT(s, 0, "autoscaling", "minNodeCount"),
                     (long long)JX_INT(s, 0, "autoscaling", "maxNodeCount"));
    else
        cli__desc_kv(c, 0, "Autoscaling", "off");
    cli__desc_kv(c, 0, "Queued Provisioning", "%s",
                 yes_no(JX_BOOL(s, false, "queuedProvisioning", "enabled")));
    cli__desc_kv(c, 0, "Flex Start", "%s", yes_no(JX_BOOL(s, false, "config", "flexStart")));
    cli__desc_kv(c, 0, "Reservation Affinity", "%s",
                 desc__or_none(JX_STR(s, "config", "reservationAffinity",
                                      "consumeReservationType")));
    const char *mode = JX_STR(s, "capacity", "mode");
    if (mode && !strcmp(mode, "Delayed"))
        cli__desc_kv(c, 0, "Capacity", "Delayed (%llds)",
                     (long long)JX_INT(s, 0, "capacity", "delaySeconds"));
    else
        cli__desc_kv(c, 0, "Capacity", "%s", mode ? mode : "Immediate");
    cli__desc_map(c, 0, "Node Labels", JX_GET(s, "config", "labels"), NULL);
    if (json_array_size(JX_GET(s, "config", "taints")))
        cli__desc_yaml(c, 0, "Node Taints", JX_GET(s, "config", "taints"));
    cli__desc_kv(c, 0, "Node Count", "%lld (%lld ready)",
                 (long long)JX_INT(p, 0, "status", "nodeCount"),
                 (long long)JX_INT(p, 0, "status", "readyNodeCount"));
    pool_nodes(c, jx_or_empty(JX_STR(p, "metadata", "name")));
}

void desc__node(struct cli_ctx *c, const struct api_kind *k, const json_t *n)
{
    (void)k;
    const char *name = jx_or_empty(JX_STR(n, "metadata", "name"));
    if (json_array_size(JX_GET(n, "spec", "taints")))
        cli__desc_yaml(c, 0, "Taints", JX_GET(n, "spec", "taints"));
    else
        cli__desc_kv(c, 0, "Taints", "<none>");
    cli__desc_kv(c, 0, "Unschedulable", "%s", yes_no(JX_BOOL(n, false, "spec", "unschedulable")));
    char *cap = desc__map_text(JX_GET(n, "status", "capacity"));
    char *alloc = desc__map_text(JX_GET(n, "status", "allocatable"));
    cli__desc_kv(c, 0, "Capacity", "%s", cap);
    cli__desc_kv(c, 0, "Allocatable", "%s", alloc);
    xfree(cap);
    xfree(alloc);
    char *sel = xasprintf("spec.nodeName=%s", name);
    json_t *pods = list_selected(c, KIND_POD, NULL, sel);
    xfree(sel);
    if (pods)
        desc__pods_table(c, "Pods", pods);
    json_decref(pods);
}
