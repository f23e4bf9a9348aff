/*
 * nodes/slurmpool: the Nodes of a NodePool of provider slurm (docs/slurm.md).
 * Such a pool has exactly its Slurm partition's nodes, read through libslurm
 * (provider/slurm.c) by a reader thread (an unanswering slurmctld blocks
 * its reads for seconds, never the control loop), and applied each time the
 * node-pool reconciler passes, at least every NODES_SLURM_REFRESH_MS: a node
 * the partition gains becomes a Node of the same name, one it loses is
 * deleted, and each Node's allocatable, labels and readiness follow Slurm's
 * record of it.
 */
#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "api/names.h"
#include "api/quantity.h"
#include "ctrl/nodes/nodes.h"
#include "provider/slurm.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

static void set_count(json_t *r, const char *res, int64_t v)
{
    char buf[32];
    snprintf(buf, sizeof(buf), "%lld", (long long)v);
    json_object_set_new(r, res, json_string(buf));
}

static json_t *slurm_resources(const struct prov_slurm_node *sn)
{
    json_t *r = json_object();
    char *cpu = api_quantity_format(sn->cpu_milli, "cpu");
    json_object_set_new(r, "cpu", json_string(cpu));
    xfree(cpu);
    char buf[40];
    snprintf(buf, sizeof(buf), "%lldKi", (long long)(sn->memory_bytes / 1024));
    json_object_set_new(r, "memory", json_string(buf));
    set_count(r, "pods", 110);
    if (sn->tpu > 0)
        set_count(r, "google.com/tpu", sn->tpu);
    if (sn->gpu > 0)
        set_count(r, "nvidia.com/gpu", sn->gpu);
    return r;
}

/* The Ready condition; its lastTransitionTime is old's while the status
 * stays the same. */
static json_t *ready_condition(const struct prov_slurm_node *sn, const json_t *old,
                               int64_t now_ms)
{
    const char *status = sn->ready ? "True" : "False";
    char ts[TIMEFMT_LEN];
    timefmt_rfc3339(now_ms, false, ts);
    const char *since = ts;
    size_t i;
    json_t *c;
    json_array_foreach(JX_GET(old, "status", "conditions"), i, c) {
        const char *t = JX_STR(c, "lastTransitionTime");
        if (!strcmp(jx_or_empty(JX_STR(c, "type")), "Ready") &&
            !strcmp(jx_or_empty(JX_STR(c, "status")), status) && t)
            since = t;
    }
    char *msg = sn->ready ? xasprintf("Slurm node %s is %s", sn->name, sn->state)
                          : xasprintf("Slurm node %s is %s%s%s", sn->name, sn->state,
                                      sn->reason ? ": " : "", sn->reason ? sn->reason : "");
    json_t *cond = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "type", "Ready", "status", status,
                             "reason", sn->ready ? "SlurmNodeReady" : "SlurmNodeNotReady",
                             "message", msg, "lastHeartbeatTime", since, "lastTransitionTime",
                             since);
    xfree(msg);
    return cond;
}

json_t *nodes_slurm_node_json(const struct prov_pool *p, const struct prov_slurm_node *sn,
                              const json_t *old, int64_t now_ms)
{
    json_t *n = api_object_new("v1", "Node", NULL, sn->name);
    for (size_t i = 0; i < p->labels.n; i++)
        api_set_label(n, p->labels.items[i].key, p->labels.items[i].value);
    for (size_t i = 0; i < sn->n_features; i++) {
        char *key = xasprintf("%s%s", NODES_SLURM_FEATURE_PREFIX, sn->features[i]);
        if (!api_check_qualified_name(key))
            api_set_label(n, key, "true");
        xfree(key);
    }
    api_set_label(n, LABEL_NODEPOOL, p->name);
    api_set_label(n, LABEL_HOSTNAME, sn->name);
    api_set_label(n, LABEL_SLURM_PARTITION, p->slurm_partition);
    json_t *spec = JX_OBJ(n, "spec");
    json_object_set_new(spec, "providerID",
                        json_sprintf("slurm://%s/%s", p->slurm_partition, sn->name));
    if (!sn->ready)
        json_object_set_new(spec, "unschedulable", json_true());
    if (p->n_taints) {
        json_t *arr = json_array();
        for (size_t i = 0; i < p->n_taints; i++) {
            json_t *t = json_pack("{s:s,s:s}", "key", p->taints[i].key, "effect",
                                  p->taints[i].effect);
            if (p->taints[i].value[0])
                json_object_set_new(t, "value", json_string(p->taints[i].value));
            json_array_append_new(arr, t);
        }
        json_object_set_new(spec, "taints", arr);
    }
    json_t *st = JX_OBJ(n, "status");
    json_object_set_new(st, "capacity", slurm_resources(sn));
    json_object_set_new(st, "allocatable", slurm_resources(sn));
    json_object_set_new(st, "conditions", json_pack("[o]", ready_condition(sn, old, now_ms)));
    json_object_set_new(st, "addresses",
                        json_pack("[{s:s,s:s},{s:s,s:s}]", "type", "InternalIP", "address",
                                  sn->addr, "type", "Hostname", "address", sn->name));
    json_object_set_new(st, "nodeInfo",
                        json_pack("{s:s,s:s,s:s,s:s,s:s}", "architecture", "amd64",
                                  "operatingSystem", "linux", "osImage", "Slurm node",
                                  "containerRuntimeVersion", "slurm://", "kubeletVersion",
                                  "v1.34.0-cueue"));
    return n;
}

/* Create or update one Node (when it changed). A Node of that name that
 * belongs to another pool is left alone (an event says so). */
static void sync_one(struct ctrl *c, const json_t *pool_obj, const struct prov_pool *p,
                     const struct prov_slurm_node *sn)
{
    struct store *s = ctrl_store(c);
    json_t *old = store_get(s, KIND_NODE, NULL, sn->name);
    const char *owner = old ? api_label(old, LABEL_NODEPOOL) : NULL;
    if (old && (!owner || strcmp(owner, p->name))) {
        ctrl_event(c, pool_obj, "Warning", "NodeNameTaken",
                   "Slurm node %s is not added: a Node of that name belongs to %s", sn->name,
                   owner ? owner : "no node pool");
        json_decref(old);
        return;
    }
    json_t *n = nodes_slurm_node_json(p, sn, old, ctrl_now(c));
    if (!old) {
        store_create_take(s, KIND_NODE, NULL, n, NULL);
        return;
    }
    /* compare without the times, which only the transition moves */
    bool same = jx_equal(JX_GET(old, "metadata", "labels"), JX_GET(n, "metadata", "labels")) &&
                jx_equal(JX_GET(old, "spec"), JX_GET(n, "spec")) &&
                jx_equal(JX_GET(old, "status"), JX_GET(n, "status"));
    if (!same) {
        JX_SET_NEW(n, json_string(jx_or_empty(JX_STR(old, "metadata", "uid"))), "metadata",
                   "uid");
        store_update_take(s, KIND_NODE, NULL, n, STORE_UPDATE_ALL, NULL);
    } else {
        json_decref(n);
    }
    json_decref(old);
}

int nodes_slurm_sync(struct ctrl *c, struct nodes_ctx *ctx, const json_t *pool_obj,
                     const struct prov_pool *p, char *msg, size_t msglen)
{
    struct prov_slurm_node *sns = NULL;
    size_t n = 0;
    if (!ctx->slurm_reader)
        ctx->slurm_reader = prov_slurm_reader_new();
    int rc = prov_slurm_reader_get(ctx->slurm_reader, p->slurm_partition, &sns, &n, msg, msglen);
    if (rc != 0)
        return rc;
    json_t *keep = json_object();
    for (size_t i = 0; i < n; i++) {
        sync_one(c, pool_obj, p, &sns[i]);
        json_object_set_new(keep, sns[i].name, json_true());
        prov_slurm_node_release(&sns[i]);
    }
    xfree(sns);
    json_t *names = nodes_of_pool(ctrl_store(c), p->name);
    json_t *gone = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(names, i, v) {
        if (!json_object_get(keep, json_string_value(v)))
            json_array_append(gone, v);
    }
    if (nodes_delete(c, gone) > 0)
        ctrl_trace(c, "NodesScaledDown",
                   json_pack("{s:s,s:O,s:s}", "nodePool", p->name, "nodes", gone, "reason",
                             "SlurmPartitionChanged"));
    json_decref(gone);
    json_decref(names);
    json_decref(keep);
    return 0;
}
