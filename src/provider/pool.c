/*
 * pool: NodePool decoding and the rules of docs/nodepool.md (see pool.h).
 * Every rule is checked and reported; the struct is only valid when 0 is
 * returned.
 */
#include "provider/pool.h"

#include <string.h>

#include "api/meta.h"
#include "api/selector.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

int prov_capacity_mode_parse(const char *text, enum prov_capacity_mode *out)
{
    if (!text || !strcmp(text, "Immediate"))
        *out = PROV_CAPACITY_IMMEDIATE;
    else if (!strcmp(text, "Delayed"))
        *out = PROV_CAPACITY_DELAYED;
    else if (!strcmp(text, "Stockout"))
        *out = PROV_CAPACITY_STOCKOUT;
    else
        return CU_EINVAL;
    return 0;
}

static void decode_taints(const json_t *arr, struct prov_pool *p, struct diag *d)
{
    size_t i;
    json_t *t;
    json_array_foreach(arr, i, t) {
        const char *key = JX_STR(t, "key");
        const char *effect = JX_STR(t, "effect");
        char field[64];
        snprintf(field, sizeof(field), "spec.config.taints[%zu]", i);
        if (!key || !key[0]) {
            diag_add(d, DIAG_REQUIRED, field, NULL, "taint key is required");
            continue;
        }
        if (!effect || (strcmp(effect, "NoSchedule") && strcmp(effect, "PreferNoSchedule") &&
                        strcmp(effect, "NoExecute"))) {
            diag_add(d, DIAG_NOT_SUPPORTED, field, effect,
                     "supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"");
            continue;
        }
        p->taints = xreallocarray(p->taints, p->n_taints + 1, sizeof(*p->taints));
        struct api_taint *dst = &p->taints[p->n_taints++];
        dst->key = xstrdup(key);
        dst->value = xstrdup(jx_or_empty(JX_STR(t, "value")));
        dst->effect = xstrdup(effect);
    }
}

static void check_multiple(struct diag *d, const char *field, int32_t v, int unit)
{
    if (unit > 1 && v % unit != 0)
        diag_add(d, DIAG_INVALID, field, NULL,
                 "%d: must be a multiple of the TPU slice's %d hosts (a multi-host slice's "
                 "nodes come and go together)", v, unit);
}

static void decode_machine(const json_t *spec, struct prov_pool *p, struct diag *d)
{
    const char *mt = JX_STR(spec, "config", "machineType");
    p->machine = prov_machine_find(mt);
    if (!mt) {
        diag_add(d, DIAG_REQUIRED, "spec.config.machineType", NULL, NULL);
        return;
    }
    if (!p->machine) {
        diag_add(d, DIAG_NOT_SUPPORTED, "spec.config.machineType", mt,
                 "machine type is not in the catalog (see `cueue nodepool machine-types`)");
        return;
    }
    p->tpu = p->machine->tpu != NULL;
    const char *topo = JX_STR(spec, "placementPolicy", "tpuTopology");
    p->unit = 1;
    if (p->tpu) {
        char err[256];
        if (prov_slice_for(p->machine, topo, &p->slice, err, sizeof(err)) != 0)
            diag_add(d, DIAG_INVALID, "spec.placementPolicy.tpuTopology", topo, "%s", err);
        else
            p->unit = p->slice.hosts;
    } else if (topo && topo[0]) {
        diag_add(d, DIAG_INVALID, "spec.placementPolicy.tpuTopology", topo,
                 "machine type %s has no TPU", mt);
    }
}

static void decode_scaling(const json_t *spec, struct prov_pool *p, struct diag *d)
{
    p->initial_nodes = (int32_t)JX_INT(spec, 0, "initialNodeCount");
    p->autoscaling = JX_BOOL(spec, false, "autoscaling", "enabled");
    if (p->autoscaling) {
        p->min_nodes = (int32_t)JX_INT(spec, 0, "autoscaling", "minNodeCount");
        p->max_nodes = (int32_t)JX_INT(spec, 0, "autoscaling", "maxNodeCount");
    }
    if (p->initial_nodes < 0)
        diag_add(d, DIAG_INVALID, "spec.initialNodeCount", NULL, "%d: must be >= 0",
                 p->initial_nodes);
    if (p->min_nodes < 0 || p->max_nodes < 0 || p->min_nodes > p->max_nodes)
        diag_add(d, DIAG_INVALID, "spec.autoscaling", NULL,
                 "minNodeCount %d, maxNodeCount %d: need 0 <= minNodeCount <= maxNodeCount",
                 p->min_nodes, p->max_nodes);
    check_multiple(d, "spec.initialNodeCount", p->initial_nodes, p->unit);
    check_multiple(d, "spec.autoscaling.minNodeCount", p->min_nodes, p->unit);
    check_multiple(d, "spec.autoscaling.maxNodeCount", p->max_nodes, p->unit);
}

static void decode_provisioning(const json_t *spec, struct prov_pool *p, struct diag *d)
{
    p->queued = JX_BOOL(spec, false, "queuedProvisioning", "enabled");
    p->flex_start = JX_BOOL(spec, false, "config", "flexStart");
    const char *ra = JX_STR(spec, "config", "reservationAffinity", "consumeReservationType");
    bool no_res = !ra || !strcmp(ra, "NO_RESERVATION");
    if (p->queued && (!p->autoscaling || p->initial_nodes != 0 || p->min_nodes != 0 || !no_res))
        diag_add(d, DIAG_INVALID, "spec.queuedProvisioning.enabled", "true",
                 "queued provisioning requires autoscaling.enabled, initialNodeCount 0, "
                 "minNodeCount 0 and reservation affinity NO_RESERVATION");
    if (p->flex_start && !no_res)
        diag_add(d, DIAG_INVALID, "spec.config.reservationAffinity.consumeReservationType", ra,
                 "flex-start requires NO_RESERVATION");
    const char *mode = JX_STR(spec, "capacity", "mode");
    if (prov_capacity_mode_parse(mode, &p->capacity) != 0)
        diag_add(d, DIAG_NOT_SUPPORTED, "spec.capacity.mode", mode,
                 "supported values: \"Immediate\", \"Delayed\", \"Stockout\"");
    int64_t delay = JX_INT(spec, 0, "capacity", "delaySeconds");
    if (delay < 0)
        diag_add(d, DIAG_INVALID, "spec.capacity.delaySeconds", NULL, "%lld: must be >= 0",
                 (long long)delay);
    p->capacity_delay_ms = delay > 0 ? delay * 1000 : 0;
    json_t *sd = JX_GET(spec, "scaleDownUnneededSeconds");
    p->scale_down_unneeded_ms = -1;
    if (json_is_integer(sd)) {
        if (json_integer_value(sd) < 0)
            diag_add(d, DIAG_INVALID, "spec.scaleDownUnneededSeconds", NULL, "must be >= 0");
        else
            p->scale_down_unneeded_ms = (int64_t)json_integer_value(sd) * 1000;
    }
}

int prov_pool_from_json(const json_t *pool, struct prov_pool *p, struct diag *d)
{
    memset(p, 0, sizeof(*p));
    size_t before = diag_count(d);
    const json_t *spec = JX_GET(pool, "spec");
    p->name = xstrdup(jx_or_empty(api_name(pool)));
    p->uid = xstrdup(jx_or_empty(api_uid(pool)));
    const char *provider = JX_STR(spec, "provider");
    if (provider && !strcmp(provider, "slurm")) {
        const char *part = JX_STR(spec, "slurm", "partition");
        if (!part || !part[0])
            diag_add(d, DIAG_REQUIRED, "spec.slurm.partition", NULL, NULL);
        p->slurm_partition = xstrdup(jx_or_empty(part));
        p->unit = 1;
        p->scale_down_unneeded_ms = -1;
        api_labels_from_json(JX_GET(spec, "config", "labels"), &p->labels);
        decode_taints(JX_GET(spec, "config", "taints"), p, d);
        if (diag_count(d) != before) {
            prov_pool_release(p);
            return CU_EINVAL;
        }
        return 0;
    }
    decode_machine(spec, p, d);
    decode_scaling(spec, p, d);
    decode_provisioning(spec, p, d);
    api_labels_from_json(JX_GET(spec, "config", "labels"), &p->labels);
    decode_taints(JX_GET(spec, "config", "taints"), p, d);
    if (diag_count(d) != before || !p->machine) {
        prov_pool_release(p);
        return CU_EINVAL;
    }
    return 0;
}

void prov_pool_release(struct prov_pool *p)
{
    if (!p)
        return;
    XFREE(p->name);
    XFREE(p->uid);
    XFREE(p->slurm_partition);
    api_labels_release(&p->labels);
    for (size_t i = 0; i < p->n_taints; i++)
        api_taint_release(&p->taints[i]);
    XFREE(p->taints);
    p->n_taints = 0;
}
