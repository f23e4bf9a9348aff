/*
 * test_ctrl_nodes_fixture: shared setup for the node reconcilers' tests
 * (nodepool, autoscaler, binder, nodeagent): a memory store, a virtual
 * clock, a seeded RNG, the whole control plane (ctrl_new), a trace
 * collector, builders for NodePools, Pods, PodTemplates and
 * ProvisioningRequests, and a virtual-time driver. Header-only.
 */
#ifndef CUEUE_TEST_CTRL_NODES_FIXTURE_H
#define CUEUE_TEST_CTRL_NODES_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/meta.h"
#include "ctrl/ctrl.h"
#include "provider/provider.h"
#include "store/store.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define NFX_START_MS INT64_C(1767323045000) /* 2026-01-02T03:04:05Z */
#define SEC INT64_C(1000)
#define MIN (60 * SEC)
#define DAY (24 * 60 * MIN)

struct nfx {
    struct clk_virtual clock;
    struct rng rng;
    struct store *s;
    struct ctrl *c;
    json_t *traces;
    struct prov *prov;   /* a test provider, or NULL for the built-in local one */
    struct exec *exec;   /* a test executor, or NULL */
    const char *state_dir;
};

static inline void nfx_trace(void *ctx, json_t *rec)
{
    json_array_append_new(((struct nfx *)ctx)->traces, rec);
}

/* The control plane over f's store (also a restart: after ctrl_free, a
 * new loop over the same store and executor). */
static inline void nfx_ctrl_new(struct nfx *f)
{
    struct ctrl_opts co = {0};
    co.store = f->s;
    co.clock = &f->clock.clk;
    co.rng = &f->rng;
    co.exec = f->exec;
    co.prov = f->prov;
    ctrl_config_defaults(&co.config);
    co.config.state_dir = f->state_dir;
    if (ctrl_new(&co, &f->c) != 0)
        fail_msg("ctrl_new failed");
    f->traces = json_array();
    ctrl_set_trace(f->c, nfx_trace, f);
}

static inline void nfx_start(struct nfx *f)
{
    struct store_opts o = {NULL, &f->clock.clk, &f->rng, 0};
    char err[256];
    if (store_open(&o, &f->s, err, sizeof(err)) != 0)
        fail_msg("store_open: %s", err);
    nfx_ctrl_new(f);
}

static inline struct nfx *nfx_new(void)
{
    struct nfx *f = calloc(1, sizeof(*f));
    clk_virtual_init(&f->clock, NFX_START_MS);
    rng_seed(&f->rng, 7);
    return f;
}

static inline int nfx_setup(void **state)
{
    struct nfx *f = nfx_new();
    nfx_start(f);
    *state = f;
    return 0;
}

static inline int nfx_teardown(void **state)
{
    struct nfx *f = *state;
    ctrl_free(f->c);
    store_close(f->s);
    json_decref(f->traces);
    if (f->prov)
        f->prov->ops->free(f->prov);
    free(f);
    return 0;
}

static inline int64_t nfx_now(struct nfx *f) { return f->clock.now_ms; }

static inline void nfx_step(struct nfx *f) { ctrl_step(f->c); }

/* Move virtual time forward by ms, firing every timer on the way. */
static inline void nfx_advance(struct nfx *f, int64_t ms)
{
    int64_t target = nfx_now(f) + ms;
    nfx_step(f);
    for (int guard = 0; guard < 1000000; guard++) {
        int64_t d = ctrl_next_deadline(f->c);
        if (d > target)
            break;
        clk_virtual_set(&f->clock, d > nfx_now(f) ? d : nfx_now(f));
        nfx_step(f);
    }
    clk_virtual_set(&f->clock, target);
    nfx_step(f);
}

static inline void nfx_create(struct nfx *f, enum api_kind_id kind, const char *ns, json_t *obj)
{
    int rc = store_create(f->s, kind, ns, obj, NULL);
    if (rc != 0)
        fail_msg("store_create %s: %d", jx_or_empty(api_name(obj)), rc);
    json_decref(obj);
}

static inline json_t *nfx_get(struct nfx *f, enum api_kind_id kind, const char *ns,
                              const char *name)
{
    return store_get(f->s, kind, ns, name);
}

/* A NodePool; extra (stolen, may be NULL) is merged into spec. */
static inline json_t *nfx_pool(const char *name, const char *machine, json_t *extra)
{
    json_t *p = json_pack("{s:s,s:s,s:{s:s},s:{s:{s:s}}}", "apiVersion", "cueue.dev/v1alpha1",
                          "kind", "NodePool", "metadata", "name", name, "spec", "config",
                          "machineType", machine);
    if (extra) {
        json_object_update(json_object_get(p, "spec"), extra);
        json_decref(extra);
    }
    return p;
}

/* The seed's plan A pool: ct6e-standard-4t, 4x4, autoscaling 0..4. */
static inline json_t *nfx_ondemand_pool(const char *name)
{
    json_t *p = nfx_pool(name, "ct6e-standard-4t",
                         json_pack("{s:i,s:{s:b,s:i,s:i},s:{s:s}}", "initialNodeCount", 0,
                                   "autoscaling", "enabled", 1, "minNodeCount", 0,
                                   "maxNodeCount", 4, "placementPolicy", "tpuTopology", "4x4"));
    json_object_set_new(JX_GET(p, "spec", "config"), "reservationAffinity",
                        json_pack("{s:s}", "consumeReservationType", "NO_RESERVATION"));
    return p;
}

/* The seed's plan B pool: plan A plus queued provisioning and flex-start. */
static inline json_t *nfx_dws_pool(const char *name, const char *mode, int delay_s)
{
    json_t *p = nfx_ondemand_pool(name);
    json_t *spec = json_object_get(p, "spec");
    json_object_set_new(json_object_get(spec, "config"), "flexStart", json_true());
    json_object_set_new(spec, "queuedProvisioning", json_pack("{s:b}", "enabled", 1));
    json_object_set_new(spec, "capacity", json_pack("{s:s,s:i}", "mode", mode, "delaySeconds",
                                                    delay_s));
    return p;
}

/* A pod requesting cpu/memory (and tpu chips when > 0). */
static inline json_t *nfx_pod(const char *ns, const char *name, const char *cpu,
                              const char *mem, int tpu)
{
    json_t *req = json_pack("{s:s,s:s}", "cpu", cpu, "memory", mem);
    if (tpu > 0)
        json_object_set_new(req, "google.com/tpu", json_sprintf("%d", tpu));
    return json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:[{s:s,s:[s],s:{s:O,s:o}}]}}", "apiVersion",
                     "v1", "kind", "Pod", "metadata", "name", name, "namespace", ns, "spec",
                     "containers", "name", "main", "command", "true", "resources", "limits",
                     req, "requests", req);
}

/* The tolerations and nodeSelector of the seed's TPU worker pods. */
static inline void nfx_tpu_placement(json_t *pod_or_template_spec_owner, const char *pool)
{
    json_t *spec = json_object_get(pod_or_template_spec_owner, "spec");
    json_t *sel = json_pack("{s:s,s:s}", "cloud.google.com/gke-tpu-accelerator",
                            "tpu-v6e-slice", "cloud.google.com/gke-tpu-topology", "4x4");
    if (pool)
        json_object_set_new(sel, "cloud.google.com/gke-nodepool", json_string(pool));
    json_object_set_new(spec, "nodeSelector", sel);
    json_object_set_new(spec, "tolerations",
                        json_pack("[{s:s,s:s,s:s},{s:s,s:s,s:s}]", "key", "google.com/tpu",
                                  "operator", "Exists", "effect", "NoSchedule", "key",
                                  "cloud.google.com/gke-queued", "operator", "Exists", "effect",
                                  "NoSchedule"));
}

/* Nodes of a pool (new array of node objects). */
static inline json_t *nfx_pool_nodes(struct nfx *f, const char *pool)
{
    json_t *all = store_list(f->s, KIND_NODE, NULL, NULL), *out = json_array();
    size_t i;
    json_t *n;
    json_array_foreach(all, i, n) {
        const char *p = api_label(n, "cloud.google.com/gke-nodepool");
        if (p && !strcmp(p, pool))
            json_array_append(out, n);
    }
    json_decref(all);
    return out;
}

static inline size_t nfx_count_nodes(struct nfx *f, const char *pool)
{
    json_t *n = nfx_pool_nodes(f, pool);
    size_t k = json_array_size(n);
    json_decref(n);
    return k;
}

/* The traces with this event name (new array). */
static inline json_t *nfx_traces(struct nfx *f, const char *event)
{
    json_t *out = json_array();
    size_t i;
    json_t *t;
    json_array_foreach(f->traces, i, t)
        if (!strcmp(jx_or_empty(JX_STR(t, "event")), event))
            json_array_append(out, t);
    return out;
}

/* True when an Event with this reason exists about object name. */
static inline bool nfx_has_event(struct nfx *f, const char *name, const char *reason)
{
    json_t *evs = store_list(f->s, KIND_EVENT, NULL, NULL);
    size_t i;
    json_t *e;
    bool found = false;
    json_array_foreach(evs, i, e)
        found |= !strcmp(jx_or_empty(JX_STR(e, "involvedObject", "name")), name) &&
                 !strcmp(jx_or_empty(JX_STR(e, "reason")), reason);
    json_decref(evs);
    return found;
}

static inline const char *nfx_cond_reason(const json_t *obj, const char *type)
{
    return JX_STR(api_cond_get(obj, type), "reason");
}

#endif
