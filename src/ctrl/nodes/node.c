/*
 * nodes/node: v1 Node objects as GKE makes them for a node pool: the name
 * (gke-<cluster>-<pool>-<8 hex>-<4 chars>, cluster "cueue"), the labels and
 * taints of docs/nodepool.md, capacity/allocatable from the machine catalog,
 * a Ready condition and nodeInfo. A multi-host TPU slice's nodes share the
 * 8-hex group (GKE gives each slice its own instance group) and carry
 * annotation cueue.dev/tpu-slice so they can leave together.
 *
 * Names come from the control plane's seeded RNG, so `cueue sim` runs are
 * reproducible.
 */
#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "api/quantity.h"
#include "api/selector.h"
#include "ctrl/nodes/nodes.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/sha1.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#define CLUSTER_NAME "cueue"
#define POOL_NAME_MAX 39 /* keeps node names within a 63-char hostname label */

void nodes_pool_labels(const struct prov_pool *p, struct api_labels *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < p->labels.n; i++)
        api_labels_set(out, p->labels.items[i].key, p->labels.items[i].value);
    api_labels_set(out, LABEL_NODEPOOL, p->name);
    if (!p->machine) /* a Slurm pool: its nodes' labels are Slurm's (slurmpool.c) */
        return;
    api_labels_set(out, LABEL_INSTANCE_TYPE, p->machine->name);
    api_labels_set(out, LABEL_MACHINE_FAMILY, p->machine->family);
    if (p->tpu) {
        api_labels_set(out, LABEL_TPU_ACCELERATOR, p->machine->tpu->node_label);
        api_labels_set(out, LABEL_TPU_TOPOLOGY, p->slice.topology);
    }
    if (p->machine->gpu) {
        char n[16];
        snprintf(n, sizeof(n), "%d", p->machine->accel_count);
        api_labels_set(out, LABEL_GPU_ACCELERATOR, p->machine->gpu);
        api_labels_set(out, LABEL_GPU_COUNT, n);
    }
    if (p->queued)
        api_labels_set(out, LABEL_QUEUED, "true");
    if (p->flex_start)
        api_labels_set(out, LABEL_FLEX_START, "true");
    api_labels_set(out, LABEL_PROVISIONING, p->flex_start ? "flex-start" : "standard");
    /* the topology levels Kueue TAS reads (docs/tas.md "Node labels"): a
     * pool is one block and one sub-block (a TPU slice's hosts sit in one),
     * unless the pool's own labels place it elsewhere */
    char v[POOL_NAME_MAX + 16];
    if (!api_labels_get(out, LABEL_TOPOLOGY_BLOCK)) {
        snprintf(v, sizeof(v), "%s-block", p->name);
        api_labels_set(out, LABEL_TOPOLOGY_BLOCK, v);
    }
    if (!api_labels_get(out, LABEL_TOPOLOGY_SUBBLOCK)) {
        snprintf(v, sizeof(v), "%s-subblock", p->name);
        api_labels_set(out, LABEL_TOPOLOGY_SUBBLOCK, v);
    }
}

static void taint_push(struct api_taint **arr, size_t *n, const char *k, const char *v,
                       const char *effect)
{
    *arr = xreallocarray(*arr, *n + 1, sizeof(**arr));
    (*arr)[*n] = (struct api_taint){xstrdup(k), xstrdup(v), xstrdup(effect)};
    (*n)++;
}

void nodes_pool_taints(const struct prov_pool *p, struct api_taint **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    if (p->tpu)
        taint_push(out, n, "google.com/tpu", "present", "NoSchedule");
    if (p->machine && p->machine->gpu)
        taint_push(out, n, "nvidia.com/gpu", "present", "NoSchedule");
    if (p->queued)
        taint_push(out, n, LABEL_QUEUED, "true", "NoSchedule");
    for (size_t i = 0; i < p->n_taints; i++)
        taint_push(out, n, p->taints[i].key, p->taints[i].value, p->taints[i].effect);
}

static json_t *resources_json(const struct prov_node_shape *sh, bool alloc)
{
    char *cpu = api_quantity_format(alloc ? sh->alloc_cpu_milli : sh->cpu_milli, "cpu");
    json_t *r = json_object();
    json_object_set_new(r, "cpu", json_string(cpu));
    xfree(cpu);
    char buf[40];
    snprintf(buf, sizeof(buf), "%lldKi",
             (long long)((alloc ? sh->alloc_memory_bytes : sh->memory_bytes) / 1024));
    json_object_set_new(r, "memory", json_string(buf));
    snprintf(buf, sizeof(buf), "%lld", (long long)sh->pods);
    json_object_set_new(r, "pods", json_string(buf));
    if (sh->accel_resource) {
        snprintf(buf, sizeof(buf), "%lld", (long long)sh->accel);
        json_object_set_new(r, sh->accel_resource, json_string(buf));
    }
    return r;
}

static json_t *node_conditions(int64_t now_ms)
{
    char ts[TIMEFMT_LEN];
    timefmt_rfc3339(now_ms, false, ts);
    static const struct { const char *type, *status, *reason, *message; } cs[] = {
        {"MemoryPressure", "False", "KubeletHasSufficientMemory",
         "kubelet has sufficient memory available"},
        {"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
        {"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
        {"Ready", "True", "KubeletReady", "kubelet is posting ready status"},
    };
    json_t *arr = json_array();
    for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
        json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "type", cs[i].type,
                                             "status", cs[i].status, "reason", cs[i].reason,
                                             "message", cs[i].message, "lastHeartbeatTime", ts,
                                             "lastTransitionTime", ts));
    return arr;
}

static json_t *node_status(const struct prov_pool *p, const char *name, int64_t now_ms)
{
    struct prov_node_shape sh;
    prov_node_shape(p->machine, &sh);
    json_t *st = json_object();
    json_object_set_new(st, "capacity", resources_json(&sh, false));
    json_object_set_new(st, "allocatable", resources_json(&sh, true));
    json_object_set_new(st, "conditions", node_conditions(now_ms));
    json_object_set_new(st, "addresses",
                        json_pack("[{s:s,s:s},{s:s,s:s}]", "type", "InternalIP", "address",
                                  "127.0.0.1", "type", "Hostname", "address", name));
    json_object_set_new(st, "nodeInfo",
                        json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "architecture", "amd64",
                                  "operatingSystem", "linux", "osImage",
                                  "cueue local node (processes, no containers)",
                                  "kernelVersion", "", "containerRuntimeVersion",
                                  "cueue-exec://local", "kubeletVersion", "v1.34.0-cueue",
                                  "kubeProxyVersion", "v1.34.0-cueue"));
    return st;
}

static json_t *node_json(const struct prov_pool *p, const char *name, const char *provreq_key,
                         const char *slice, int64_t now_ms)
{
    json_t *n = api_object_new("v1", "Node", NULL, name);
    struct api_labels labels;
    nodes_pool_labels(p, &labels);
    for (size_t i = 0; i < labels.n; i++)
        api_set_label(n, labels.items[i].key, labels.items[i].value);
    api_labels_release(&labels);
    api_set_label(n, LABEL_HOSTNAME, name);
    if (provreq_key) {
        const char *slash = strchr(provreq_key, '/');
        api_set_label(n, LABEL_PROVREQ, slash ? slash + 1 : provreq_key);
        api_set_annotation(n, ANNOT_PROVREQ, provreq_key);
    }
    if (slice)
        api_set_annotation(n, ANNOT_SLICE, slice);
    struct api_taint *taints;
    size_t nt;
    nodes_pool_taints(p, &taints, &nt);
    json_t *spec = JX_OBJ(n, "spec");
    json_object_set_new(spec, "providerID", json_sprintf("cueue://local/%s/%s", p->name, name));
    if (nt) {
        json_t *arr = json_array();
        for (size_t i = 0; i < nt; i++) {
            json_t *t = json_pack("{s:s,s:s}", "key", taints[i].key, "effect", taints[i].effect);
            if (taints[i].value[0])
                json_object_set_new(t, "value", json_string(taints[i].value));
            json_array_append_new(arr, t);
            api_taint_release(&taints[i]);
        }
        json_object_set_new(spec, "taints", arr);
    }
    xfree(taints);
    json_object_set_new(n, "status", node_status(p, name, now_ms));
    return n;
}

/* The 8-hex instance-group part: per pool for single-host pools, per slice
 * (drawn from the RNG) for multi-host ones. */
static void group_hex(struct ctrl *c, const struct prov_pool *p, char out[9])
{
    char hex[41];
    if (p->unit > 1) {
        snprintf(out, 9, "%08llx", (unsigned long long)(rng_next(ctrl_rng(c)) & 0xffffffffULL));
        return;
    }
    char *seed = xasprintf("%s/%s", p->name, p->uid);
    sha1_hex(seed, strlen(seed), hex);
    xfree(seed);
    memcpy(out, hex, 8);
    out[8] = '\0';
}

static char *create_one(struct ctrl *c, const struct prov_pool *p, const char *group,
                        const char *provreq_key, const char *slice)
{
    for (int attempt = 0; attempt < 16; attempt++) {
        char sfx[5];
        rng_suffix(ctrl_rng(c), sfx, 4);
        char *name = xasprintf("gke-%s-%.*s-%s-%s", CLUSTER_NAME, POOL_NAME_MAX, p->name, group,
                               sfx);
        json_t *n = node_json(p, name, provreq_key, slice, ctrl_now(c));
        int rc = store_create(ctrl_store(c), KIND_NODE, NULL, n, NULL);
        json_decref(n);
        if (rc == 0)
            return name;
        xfree(name);
        if (rc != CU_EEXIST)
            break;
    }
    return NULL;
}

json_t *nodes_create(struct ctrl *c, const struct prov_pool *p, int n, const char *provreq_key)
{
    json_t *names = json_array();
    int unit = p->unit > 0 ? p->unit : 1;
    for (int made = 0; made < n; made += unit) {
        char group[9];
        group_hex(c, p, group);
        char *slice = unit > 1 ? xasprintf("%.*s-%s", POOL_NAME_MAX, p->name, group) : NULL;
        for (int h = 0; h < unit; h++) {
            char *name = create_one(c, p, group, provreq_key, slice);
            if (name)
                json_array_append_new(names, json_string(name));
            xfree(name);
        }
        xfree(slice);
    }
    return names;
}

int nodes_delete(struct ctrl *c, const json_t *names)
{
    int n = 0;
    size_t i;
    json_t *v;
    json_array_foreach(names, i, v) {
        n += store_delete(ctrl_store(c), KIND_NODE, NULL, json_string_value(v), NULL, NULL) == 0;
    }
    return n;
}

json_t *nodes_of_pool(struct store *s, const char *pool)
{
    json_t *all = store_list(s, KIND_NODE, NULL, NULL);
    json_t *out = json_array();
    size_t i;
    json_t *n;
    json_array_foreach(all, i, n) {
        const char *p = api_label(n, LABEL_NODEPOOL);
        if (p && !strcmp(p, pool))
            json_array_append_new(out, json_string(api_name(n)));
    }
    json_decref(all);
    return out;
}
