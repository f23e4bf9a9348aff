/*
 * observe_objects: the recorder's walk over the store's event log, and the
 * objects other than Workloads: ProvisioningRequests (created, condition
 * changes), Nodes (scale up/down per pool, consecutive changes of one pool
 * in one direction coalesced into one record) and ClusterQueues (quotas and
 * class for the usage figures).
 */
#include <string.h>

#include "api/meta.h"
#include "sim/observe-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define LABEL_NODEPOOL "cloud.google.com/gke-nodepool"
#define LABEL_PROVREQ "autoscaling.gke.io/provisioning-request"

struct pr_state {
    char *key;        /* ns/name */
    json_t *conds;    /* type -> "status\x1freason" */
    UT_hash_handle hh;
};

struct pool_count {
    char *pool;
    int nodes;
    UT_hash_handle hh;
};

/* ---- class of a workload ---- */

char *sim_obs_class_of(struct sim *s, const json_t *obj)
{
    json_t *cur = json_incref((json_t *)obj);
    char *cls = NULL;
    for (int depth = 0; cur && depth < 4 && !cls; depth++) {
        const char *l = api_label(cur, s->sc->class_label);
        if (l)
            cls = xstrdup(l);
        json_t *next = cls ? NULL : sim_controller_owner(s, cur);
        json_decref(cur);
        cur = next;
    }
    json_decref(cur);
    return cls ? cls : xstrdup("");
}

/* ---- ProvisioningRequests ---- */

static const char *pr_workload(const json_t *pr, char *buf, size_t len)
{
    size_t i;
    json_t *r;
    json_array_foreach(JX_GET(pr, "metadata", "ownerReferences"), i, r) {
        if (!strcmp(jx_or_empty(JX_STR(r, "kind")), "Workload")) {
            snprintf(buf, len, "%s/%s", jx_or_empty(api_namespace(pr)),
                     jx_or_empty(JX_STR(r, "name")));
            return buf;
        }
    }
    return NULL;
}

static json_t *pr_fields(const json_t *pr, const char *key)
{
    json_t *f = json_object();
    char buf[600];
    const char *wl = pr_workload(pr, buf, sizeof(buf));
    if (wl)
        json_object_set_new(f, "workload", json_string(wl));
    json_object_set_new(f, "request", json_string(key));
    return f;
}

static void pr_created(struct sim *s, const json_t *pr, const char *key)
{
    json_t *f = pr_fields(pr, key);
    json_object_set_new(f, "provisioningClassName",
                        json_string(jx_or_empty(JX_STR(pr, "spec", "provisioningClassName"))));
    json_int_t count = 0;
    size_t i;
    json_t *ps;
    json_array_foreach(JX_GET(pr, "spec", "podSets"), i, ps)
        count += JX_INT(ps, 0, "count");
    json_object_set_new(f, "count", json_integer(count));
    sim_obs_emit(s, "ProvisioningRequestCreated", f);
}

static void on_provreq(struct sim *s, const struct store_event *ev)
{
    struct sim_observer *o = s->obs;
    char *key = xasprintf("%s/%s", jx_or_empty(api_namespace(ev->obj)),
                          jx_or_empty(api_name(ev->obj)));
    struct pr_state *p;
    HASH_FIND_STR(o->prs, key, p);
    if (ev->type == STORE_DELETED) {
        if (p) {
            HASH_DEL(o->prs, p);
            xfree(p->key);
            json_decref(p->conds);
            xfree(p);
        }
        xfree(key);
        return;
    }
    if (!p) {
        p = xcalloc(1, sizeof(*p));
        p->key = key;
        p->conds = json_object();
        HASH_ADD_KEYPTR(hh, o->prs, p->key, strlen(p->key), p);
        if (!o->pr_names)
            o->pr_names = json_object();
        json_object_set_new(o->pr_names, jx_or_empty(api_name(ev->obj)), json_string(p->key));
        pr_created(s, ev->obj, p->key);
    } else {
        xfree(key);
    }
    size_t i;
    json_t *c;
    json_array_foreach(JX_GET(ev->obj, "status", "conditions"), i, c) {
        const char *type = jx_or_empty(JX_STR(c, "type"));
        char *val = xasprintf("%s\x1f%s", jx_or_empty(JX_STR(c, "status")),
                              jx_or_empty(JX_STR(c, "reason")));
        const char *prev = json_string_value(json_object_get(p->conds, type));
        if (!prev || strcmp(prev, val)) {
            json_object_set_new(p->conds, type, json_string(val));
            json_t *f = pr_fields(ev->obj, p->key);
            json_object_set_new(f, "condition", json_string(type));
            json_object_set_new(f, "status", json_string(jx_or_empty(JX_STR(c, "status"))));
            json_object_set_new(f, "reason", json_string(jx_or_empty(JX_STR(c, "reason"))));
            json_object_set_new(f, "message", json_string(jx_or_empty(JX_STR(c, "message"))));
            sim_obs_emit(s, "ProvisioningRequestUpdated", f);
        }
        xfree(val);
    }
}

/* ---- Nodes ---- */

static struct pool_count *pool_get(struct sim_observer *o, const char *pool)
{
    struct pool_count *p;
    HASH_FIND_STR(o->pools, pool, p);
    if (!p) {
        p = xcalloc(1, sizeof(*p));
        p->pool = xstrdup(pool);
        HASH_ADD_KEYPTR(hh, o->pools, p->pool, strlen(p->pool), p);
    }
    return p;
}

void sim_obs_flush_nodes(struct sim *s)
{
    struct node_run *r = &s->obs->run;
    if (!r->n)
        return;
    json_t *f = json_object();
    json_object_set_new(f, "pool", json_string(r->pool));
    json_object_set_new(f, "nodes", json_integer(r->n));
    json_object_set_new(f, "total", json_integer(pool_get(s->obs, r->pool)->nodes));
    if (r->request)
        json_object_set_new(f, "request", json_string(r->request));
    json_object_set_new(f, "names", r->names);
    r->names = NULL;
    r->n = 0; /* before emitting: the emit must not re-enter the flush */
    sim_obs_record(s, r->dir > 0 ? "NodesScaledUp" : "NodesScaledDown", f);
    XFREE(r->pool);
    XFREE(r->request);
}

/* A node's provisioning-request label holds the request's name only: the
 * trace names requests ns/name, so use the one seen under that name. */
static char *request_key(struct sim_observer *o, const char *name)
{
    if (!name)
        return NULL;
    const char *key = json_string_value(json_object_get(o->pr_names, name));
    return xstrdup(key ? key : name);
}

static void on_node(struct sim *s, const struct store_event *ev)
{
    if (ev->type == STORE_MODIFIED)
        return;
    struct sim_observer *o = s->obs;
    const char *pool = jx_or_empty(api_label(ev->obj, LABEL_NODEPOOL));
    const char *req = api_label(ev->obj, LABEL_PROVREQ);
    char *req_key = request_key(o, req);
    int dir = ev->type == STORE_ADDED ? 1 : -1;
    struct node_run *r = &o->run;
    if (r->n && (r->dir != dir || strcmp(r->pool, pool) ||
                 (r->request == NULL) != (req_key == NULL) ||
                 (req_key && strcmp(r->request, req_key))))
        sim_obs_flush_nodes(s);
    pool_get(o, pool)->nodes += dir;
    if (!r->n) {
        r->pool = xstrdup(pool);
        r->request = req_key;
        req_key = NULL;
        r->dir = dir;
        r->names = json_array();
    }
    json_array_append_new(r->names, json_string(jx_or_empty(api_name(ev->obj))));
    r->n++;
    xfree(req_key);
}

/* ---- the loop ---- */

static void dispatch(struct sim *s, const struct store_event *ev)
{
    switch (ev->kind) {
    case KIND_WORKLOAD:
        sim_obs_workload(s, ev);
        break;
    case KIND_PROVISIONINGREQUEST:
        on_provreq(s, ev);
        break;
    case KIND_NODE:
        on_node(s, ev);
        break;
    case KIND_POD:
        sim_obs_pod(s, ev);
        break;
    case KIND_CLUSTERQUEUE:
        if (ev->type != STORE_DELETED)
            sim_usage_cq_upsert(s->obs->usage, ev->obj, s->sc->class_label,
                                clk_now(&s->clock.clk));
        break;
    default:
        break;
    }
}

/* The log no longer reaches back to the cursor: replay current objects
 * (transitions in between are lost; said once on stderr). Workloads and
 * Pods deleted in the gap are forgotten. */
static void resync(struct sim *s)
{
    static const enum api_kind_id kinds[] = {KIND_CLUSTERQUEUE, KIND_WORKLOAD,
                                             KIND_PROVISIONINGREQUEST, KIND_POD};
    uint64_t rv = store_rv(s->store);
    sim_warn(s, "the store's event history was exceeded; some transitions are missing "
                "from the trace");
    sim_obs_pods_forget_all(s->obs);
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        json_t *list = store_list(s->store, kinds[k], NULL, NULL);
        if (kinds[k] == KIND_WORKLOAD)
            sim_obs_workloads_prune(s, list);
        size_t i;
        json_t *obj;
        json_array_foreach(list, i, obj) {
            struct store_event ev = {STORE_MODIFIED, kinds[k], rv, obj};
            dispatch(s, &ev);
        }
        json_decref(list);
    }
    s->obs->cursor = rv;
}

/* Consume the events since the cursor (the pending node run is left as
 * it is). */
static void consume(struct sim *s)
{
    struct sim_observer *o = s->obs;
    struct store_events evs = {0};
    int n = store_events_since(s->store, o->cursor, -1, NULL, 0, &evs);
    if (n == CU_EGONE) {
        store_events_release(&evs);
        resync(s);
    } else {
        for (size_t i = 0; i < evs.n; i++) {
            o->cursor = evs.items[i].rv;
            dispatch(s, &evs.items[i]);
        }
        store_events_release(&evs);
    }
}

int sim_obs_consume(struct sim *s)
{
    consume(s);
    sim_obs_flush_nodes(s);
    return 0;
}

void sim_obs_catch_up(struct sim *s)
{
    s->obs->deferring = true;
    consume(s);
    s->obs->deferring = false;
}

void sim_obs_objects_free(struct sim_observer *o)
{
    struct pr_state *p, *pt;
    HASH_ITER(hh, o->prs, p, pt) {
        HASH_DEL(o->prs, p);
        xfree(p->key);
        json_decref(p->conds);
        xfree(p);
    }
    struct pool_count *c, *ct;
    HASH_ITER(hh, o->pools, c, ct) {
        HASH_DEL(o->pools, c);
        xfree(c->pool);
        xfree(c);
    }
    json_decref(o->pr_names);
    xfree(o->run.pool);
    xfree(o->run.request);
    json_decref(o->run.names);
}
