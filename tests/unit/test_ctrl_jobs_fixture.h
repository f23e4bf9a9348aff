/*
 * test_ctrl_jobs_fixture: shared setup for the Kueue-side controller tests
 * (test_ctrl_jobs_*.c): a memory store, a virtual clock, the whole control
 * plane (ctrl_new, no executor: tests play the node agent by writing pod
 * phases), the seed's objects read from examples/ with the tutorial's
 * envsubst values, and helpers to look at what the controllers wrote.
 * Header-only; every function is static.
 */
#ifndef CUEUE_TEST_CTRL_JOBS_FIXTURE_H
#define CUEUE_TEST_CTRL_JOBS_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/decode.h"
#include "api/kinds.h"
#include "api/meta.h"
#include "api/object.h"
#include "ctrl/ctrl.h"
#include "store/store.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

/* 2026-03-01T00:00:00Z */
#define FX_START_MS INT64_C(1772323200000)

struct fx {
    struct clk_virtual clock;
    struct rng rng;
    struct store *store;
    struct ctrl *ctrl;
    json_t *trace; /* every trace record, in order */
};

static inline void fx_trace_sink(void *ctx, json_t *rec)
{
    struct fx *f = ctx;
    json_array_append_new(f->trace, rec);
}

static inline int fx_run(struct fx *f)
{
    int total = 0;
    for (int i = 0; i < 50; i++) {
        int n = ctrl_step(f->ctrl);
        total += n;
        if (n == 0)
            break;
    }
    return total;
}

/* The fixture over a store saved in the SQLite database db_path (NULL:
 * a memory store). */
static inline struct fx *fx_new_at(void (*tweak)(struct ctrl_config *), const char *db_path)
{
    struct fx *f = calloc(1, sizeof(*f));
    clk_virtual_init(&f->clock, FX_START_MS);
    rng_seed(&f->rng, 7);
    struct store_opts so = {db_path, &f->clock.clk, &f->rng, 0};
    char err[256];
    if (store_open(&so, &f->store, err, sizeof(err)) != 0)
        fail_msg("store_open: %s", err);
    struct ctrl_opts co;
    memset(&co, 0, sizeof(co));
    co.store = f->store;
    co.clock = &f->clock.clk;
    co.rng = &f->rng;
    ctrl_config_defaults(&co.config);
    if (tweak)
        tweak(&co.config);
    if (ctrl_new(&co, &f->ctrl) != 0)
        fail_msg("ctrl_new failed");
    f->trace = json_array();
    ctrl_set_trace(f->ctrl, fx_trace_sink, f);
    return f;
}

static inline struct fx *fx_new(void (*tweak)(struct ctrl_config *))
{
    return fx_new_at(tweak, NULL);
}

static inline void fx_free(struct fx *f)
{
    ctrl_free(f->ctrl);
    store_close(f->store);
    json_decref(f->trace);
    free(f);
}

/* Admit (defaults + validation, as the API server does) and store every
 * document of text; fails the test on any rejection. */
static inline void fx_apply_text(struct fx *f, const char *text, const char *source)
{
    json_t *docs = NULL;
    struct diag d;
    diag_init(&d);
    if (api_parse_documents(text, strlen(text), source, &docs, &d) != 0)
        fail_msg("%s: parse error", source);
    size_t i;
    json_t *doc;
    json_array_foreach(docs, i, doc) {
        const struct api_kind *k = api_doc_kind(doc, &d);
        if (!k)
            fail_msg("%s: unknown kind", source);
        const char *ns = k->namespaced ? (api_namespace(doc) ? api_namespace(doc) : "default")
                                       : NULL;
        int rc = api_admit(k, doc, NULL, ns, &d);
        if (rc != 0) {
            char *m = api_error_message(k, api_name(doc), rc, &d);
            fail_msg("%s: %s", source, m);
        }
        rc = store_create(f->store, k->id, ns, doc, NULL);
        if (rc != 0)
            fail_msg("%s: store_create %s: %d", source, api_name(doc), rc);
    }
    diag_release(&d);
    json_decref(docs);
}

/* Read examples/<file> with ${VAR} replaced (vars: name, value, ..., NULL). */
static inline char *fx_example(const char *file, ...)
{
    const char *src = getenv("CUEUE_SRC");
    char path[1024];
    snprintf(path, sizeof(path), "%s/examples/%s", src ? src : ".", file);
    FILE *fp = fopen(path, "r");
    if (!fp)
        fail_msg("cannot read %s (set CUEUE_SRC)", path);
    struct sbuf sb;
    sbuf_init(&sb, 0);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
        sbuf_add(&sb, buf, n);
    fclose(fp);
    char *text = sbuf_take(&sb);
    sbuf_release(&sb);
    va_list ap;
    va_start(ap, file);
    const char *var;
    while ((var = va_arg(ap, const char *))) {
        const char *val = va_arg(ap, const char *);
        char pat[128];
        snprintf(pat, sizeof(pat), "${%s}", var);
        char *p;
        while ((p = strstr(text, pat))) {
            char *next = xasprintf("%.*s%s%s", (int)(p - text), text, val, p + strlen(pat));
            xfree(text);
            text = next;
        }
    }
    va_end(ap);
    return text;
}

/* The seed's queue objects, the default namespace, and the flex-start pool
 * in a stockout, so the autoscaler accepts ProvisioningRequests but leaves
 * their outcome to the test (fx_set_pr_cond). */
static inline void fx_seed_queues(struct fx *f)
{
    fx_apply_text(f,
                  "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n"
                  "  labels:\n    kubernetes.io/metadata.name: default\n",
                  "namespace");
    fx_apply_text(f,
                  "apiVersion: cueue.dev/v1alpha1\nkind: NodePool\nmetadata:\n  name: dws-pool\n"
                  "spec:\n  config:\n    machineType: ct6e-standard-4t\n    flexStart: true\n"
                  "    reservationAffinity:\n      consumeReservationType: NO_RESERVATION\n"
                  "  initialNodeCount: 0\n  autoscaling:\n    enabled: true\n"
                  "    minNodeCount: 0\n    maxNodeCount: 4\n  placementPolicy:\n"
                  "    tpuTopology: 4x4\n  queuedProvisioning:\n    enabled: true\n"
                  "  capacity:\n    mode: Stockout\n",
                  "dws-pool");
    char *q = fx_example("dws-tpu-queue.yaml", "ONDEMAND_NODEPOOL", "on-demand-pool",
                         "DWS_NODEPOOL", "dws-pool", (const char *)NULL);
    fx_apply_text(f, q, "dws-tpu-queue.yaml");
    xfree(q);
    fx_run(f);
}

static inline void fx_submit_example(struct fx *f, const char *file, const char *job_id)
{
    char *t = fx_example(file, "JOB_ID", job_id, (const char *)NULL);
    fx_apply_text(f, t, file);
    xfree(t);
    fx_run(f);
}

static inline void fx_advance(struct fx *f, int64_t ms)
{
    clk_virtual_set(&f->clock, f->clock.now_ms + ms);
    fx_run(f);
}

static inline json_t *fx_get(struct fx *f, enum api_kind_id k, const char *ns, const char *name)
{
    return store_get(f->store, k, ns, name);
}

/* The (first) Workload controlled by the named owner. New reference. */
static inline json_t *fx_workload_of(struct fx *f, const char *kind, const char *owner)
{
    json_t *all = store_list(f->store, KIND_WORKLOAD, "default", NULL);
    json_t *out = NULL;
    size_t i;
    json_t *wl;
    json_array_foreach(all, i, wl) {
        size_t j;
        json_t *ref;
        json_array_foreach(JX_GET(wl, "metadata", "ownerReferences"), j, ref) {
            if (!out && !strcmp(jx_or_empty(JX_STR(ref, "kind")), kind) &&
                !strcmp(jx_or_empty(JX_STR(ref, "name")), owner))
                out = json_incref(wl);
        }
    }
    json_decref(all);
    return out;
}

/* Objects of kind in default whose controller uid is owner_uid, by name. */
static inline json_t *fx_owned(struct fx *f, enum api_kind_id k, const char *owner_uid)
{
    json_t *all = store_list(f->store, k, "default", NULL);
    json_t *out = json_array();
    size_t i;
    json_t *o;
    json_array_foreach(all, i, o) {
        const char *u = api_controller_uid(o);
        if (u && !strcmp(u, owner_uid))
            json_array_append(out, o);
    }
    json_decref(all);
    return out;
}

static inline const char *fx_reason(const json_t *obj, const char *type)
{
    return JX_STR(api_cond_get(obj, type), "reason");
}

static inline const char *fx_message(const json_t *obj, const char *type)
{
    return JX_STR(api_cond_get(obj, type), "message");
}

/* The value of env var name in container idx of a pod, or NULL. */
static inline const char *fx_env(const json_t *pod, size_t idx, const char *name)
{
    const json_t *ctr = json_array_get(JX_GET(pod, "spec", "containers"), idx);
    size_t i;
    json_t *e;
    json_array_foreach(JX_GET(ctr, "env"), i, e) {
        if (!strcmp(jx_or_empty(JX_STR(e, "name")), name))
            return JX_STR(e, "value");
    }
    return NULL;
}

static inline void fx_write_status(struct fx *f, enum api_kind_id k, json_t *obj)
{
    int rc = store_update(f->store, k, api_namespace(obj), obj, STORE_UPDATE_STATUS, NULL);
    if (rc != 0)
        fail_msg("status update of %s: %d", api_name(obj), rc);
}

/* Play the node agent: phase (Running/Succeeded/Failed) and Ready. */
static inline void fx_set_pod(struct fx *f, const char *name, const char *phase, bool ready)
{
    json_t *cur = fx_get(f, KIND_POD, "default", name);
    assert_non_null(cur);
    json_t *pod = json_deep_copy(cur);
    json_decref(cur);
    JX_SET_NEW(pod, json_string(phase), "status", "phase");
    api_cond_set(pod, "Ready", ready ? "True" : "False", NULL, NULL, f->clock.now_ms);
    fx_write_status(f, KIND_POD, pod);
    json_decref(pod);
}

/* A pod whose first container could not start (the executor's StartError). */
static inline void fx_fail_pod_start(struct fx *f, const char *name, const char *program)
{
    json_t *cur = fx_get(f, KIND_POD, "default", name);
    assert_non_null(cur);
    json_t *pod = json_deep_copy(cur);
    json_decref(cur);
    char *msg = xasprintf("exec: \"%s\": executable file not found in $PATH", program);
    JX_SET_NEW(pod, json_string("Failed"), "status", "phase");
    JX_SET_NEW(pod,
               json_pack("[{s:s, s:{s:{s:s, s:s, s:i}}}]", "name", "c", "state", "terminated",
                         "reason", "StartError", "message", msg, "exitCode", 128),
               "status", "containerStatuses");
    fx_write_status(f, KIND_POD, pod);
    json_decref(pod);
    xfree(msg);
}

static inline void fx_set_all_pods(struct fx *f, const json_t *pods, const char *phase, bool ready)
{
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p) {
        fx_set_pod(f, api_name(p), phase, ready);
    }
    fx_run(f);
}

/* Set a condition on a ProvisioningRequest (what the autoscaler does). */
static inline void fx_set_pr_cond(struct fx *f, const char *name, const char *type, const char *status,
                           const char *reason, const char *msg)
{
    json_t *cur = fx_get(f, KIND_PROVISIONINGREQUEST, "default", name);
    assert_non_null(cur);
    json_t *pr = json_deep_copy(cur);
    json_decref(cur);
    api_cond_set(pr, type, status, reason, msg, f->clock.now_ms);
    fx_write_status(f, KIND_PROVISIONINGREQUEST, pr);
    json_decref(pr);
    fx_run(f);
}

/* The admission check entry named check of wl (borrowed), or NULL. */
static inline json_t *fx_check(const json_t *wl, const char *check)
{
    size_t i;
    json_t *ac;
    json_array_foreach(JX_GET(wl, "status", "admissionChecks"), i, ac) {
        if (!strcmp(jx_or_empty(JX_STR(ac, "name")), check))
            return ac;
    }
    return NULL;
}

/* The flavor of resource res in pod set ps of wl's admission, or NULL. */
static inline const char *fx_flavor(const json_t *wl, const char *ps, const char *res)
{
    size_t i;
    json_t *a;
    json_array_foreach(JX_GET(wl, "status", "admission", "podSetAssignments"), i, a) {
        if (!strcmp(jx_or_empty(JX_STR(a, "name")), ps))
            return JX_STR(a, "flavors", res);
    }
    return NULL;
}

/* Number of trace records of event (for workload wl_key when non-NULL). */
static inline int fx_traces(struct fx *f, const char *event, const char *wl_key)
{
    int n = 0;
    size_t i;
    json_t *r;
    json_array_foreach(f->trace, i, r) {
        if (strcmp(jx_or_empty(JX_STR(r, "event")), event))
            continue;
        if (wl_key && strcmp(jx_or_empty(JX_STR(r, "workload")), wl_key))
            continue;
        n++;
    }
    return n;
}

/* True when an Event with this reason exists about the named object. */
static inline bool fx_has_event(struct fx *f, const char *obj_name, const char *reason)
{
    json_t *evs = store_list(f->store, KIND_EVENT, NULL, NULL);
    bool found = false;
    size_t i;
    json_t *e;
    json_array_foreach(evs, i, e) {
        if (!strcmp(jx_or_empty(JX_STR(e, "involvedObject", "name")), obj_name) &&
            !strcmp(jx_or_empty(JX_STR(e, "reason")), reason))
            found = true;
    }
    json_decref(evs);
    return found;
}

/* A quantity field of the ClusterQueue's status flavorsReservation, as text. */
static inline const char *fx_cq_reserved(struct fx *f, const char *flavor, const char *res,
                                  json_t **keep)
{
    json_t *cq = fx_get(f, KIND_CLUSTERQUEUE, NULL, "cluster-queue");
    *keep = cq;
    size_t i, j;
    json_t *fl, *r;
    json_array_foreach(JX_GET(cq, "status", "flavorsReservation"), i, fl) {
        if (strcmp(jx_or_empty(JX_STR(fl, "name")), flavor))
            continue;
        json_array_foreach(JX_GET(fl, "resources"), j, r) {
            if (!strcmp(jx_or_empty(JX_STR(r, "name")), res))
                return JX_STR(r, "total");
        }
    }
    return NULL;
}

#endif
