/*
 * nodes/metrics: cueue's own gauges for the capacity side, computed from
 * the store at scrape time on the loop thread (ctrl/metrics.h): node pools
 * (nodes, ready nodes, autoscaling bounds, shape), ProvisioningRequests by
 * state, and pods by phase. Kueue has no such metrics (the cluster
 * autoscaler and the kubelet export theirs); the names use the prefix
 * cueue_.
 */
#include <string.h>

#include "api/meta.h"
#include "api/object.h"
#include "ctrl/ctrl.h"
#include "ctrl/metrics.h"
#include "util/jsonx.h"
#include "util/prom.h"
#include "util/sbuf.h"

static const char *const L_POOL[] = {"node_pool"};
static const char *const L_POOL_INFO[] = {"node_pool", "machine_type", "tpu_topology",
                                          "queued_provisioning"};
static const char *const L_STATE[] = {"state"};
static const char *const L_PHASE[] = {"phase"};

static void write_free(struct prom_vec *v, struct sbuf *out)
{
    prom_vec_write(v, out);
    prom_vec_free(v);
}

static struct prom_vec *pool_gauge(const char *name, const char *help)
{
    return prom_vec_new(name, help, PROM_GAUGE, L_POOL, 1, NULL, 0);
}

static void pools(struct ctrl *c, struct sbuf *out)
{
    struct prom_vec *nodes = pool_gauge("cueue_node_pool_nodes",
                                          "Nodes of the node pool that exist now "
                                          "(NodePool status.nodeCount).");
    struct prom_vec *ready = pool_gauge("cueue_node_pool_ready_nodes",
                                          "Ready nodes of the node pool (status.readyNodeCount).");
    struct prom_vec *min = pool_gauge("cueue_node_pool_min_nodes",
                                        "Autoscaling lower bound (spec.autoscaling.minNodeCount; "
                                        "pools with autoscaling only).");
    struct prom_vec *max = pool_gauge("cueue_node_pool_max_nodes",
                                        "Autoscaling upper bound (spec.autoscaling.maxNodeCount; "
                                        "pools with autoscaling only).");
    struct prom_vec *info = prom_vec_new("cueue_node_pool_info",
                                         "1 per node pool, with its machine type, TPU topology "
                                         "and whether it uses queued provisioning.",
                                         PROM_GAUGE, L_POOL_INFO, 4, NULL, 0);
    json_t *list = store_list(ctrl_store(c), KIND_NODEPOOL, NULL, NULL);
    size_t i;
    json_t *p;
    json_array_foreach(list, i, p) {
        const char *l[] = {jx_or_empty(api_name(p))};
        prom_vec_set(nodes, l, (double)JX_INT(p, 0, "status", "nodeCount"));
        prom_vec_set(ready, l, (double)JX_INT(p, 0, "status", "readyNodeCount"));
        if (json_is_true(JX_GET(p, "spec", "autoscaling", "enabled"))) {
            prom_vec_set(min, l, (double)JX_INT(p, 0, "spec", "autoscaling", "minNodeCount"));
            prom_vec_set(max, l, (double)JX_INT(p, 0, "spec", "autoscaling", "maxNodeCount"));
        }
        bool queued = json_is_true(JX_GET(p, "spec", "queuedProvisioning", "enabled"));
        const char *il[] = {l[0], jx_or_empty(JX_STR(p, "spec", "config", "machineType")),
                            jx_or_empty(JX_STR(p, "spec", "placementPolicy", "tpuTopology")),
                            queued ? "true" : "false"};
        prom_vec_set(info, il, 1);
    }
    json_decref(list);
    write_free(nodes, out);
    write_free(ready, out);
    write_free(min, out);
    write_free(max, out);
    write_free(info, out);
}

/* A ProvisioningRequest's state: its furthest condition that holds. */
static const char *provreq_state(const json_t *pr)
{
    static const char *const order[] = {"Failed", "CapacityRevoked", "BookingExpired",
                                        "Provisioned", "Accepted"};
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        if (api_cond_holds(api_cond_get(pr, order[i])))
            return order[i];
    return "Pending";
}

static void provreqs(struct ctrl *c, struct sbuf *out)
{
    static const char *const states[] = {"Pending", "Accepted", "Provisioned",
                                         "BookingExpired", "CapacityRevoked", "Failed"};
    struct prom_vec *v = prom_vec_new(
        "cueue_provisioning_requests",
        "ProvisioningRequests by 'state': the furthest of their conditions that holds (Failed, "
        "CapacityRevoked, BookingExpired, Provisioned, Accepted), else Pending.",
        PROM_GAUGE, L_STATE, 1, NULL, 0);
    for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++)
        prom_vec_set(v, (const char *[]){states[i]}, 0);
    json_t *list = store_list(ctrl_store(c), KIND_PROVISIONINGREQUEST, NULL, NULL);
    size_t i;
    json_t *pr;
    json_array_foreach(list, i, pr)
        prom_vec_add(v, (const char *[]){provreq_state(pr)}, 1);
    json_decref(list);
    write_free(v, out);
}

static void pods(struct ctrl *c, struct sbuf *out)
{
    static const char *const phases[] = {"Pending", "Running", "Succeeded", "Failed"};
    struct prom_vec *v = prom_vec_new("cueue_pods", "Pods by status.phase (Pending when unset).",
                                      PROM_GAUGE, L_PHASE, 1, NULL, 0);
    for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
        prom_vec_set(v, (const char *[]){phases[i]}, 0);
    json_t *list = store_list(ctrl_store(c), KIND_POD, NULL, NULL);
    size_t i;
    json_t *p;
    json_array_foreach(list, i, p) {
        const char *phase = JX_STR(p, "status", "phase");
        prom_vec_add(v, (const char *[]){phase && *phase ? phase : "Pending"}, 1);
    }
    json_decref(list);
    write_free(v, out);
}

void nodes_metrics_gauges(struct ctrl *c, struct sbuf *out)
{
    pools(c, out);
    provreqs(c, out);
    pods(c, out);
}
