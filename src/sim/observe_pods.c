/*
 * observe_pods: what the recorder follows about Pods. Two things:
 *   - how many pods are alive and not done (phase neither Succeeded nor
 *     Failed): while any is, the run is not complete (sim_observer_busy);
 *   - pods the binder could not place (PodScheduled=False, Unschedulable),
 *     grouped by their controller owner and nodeSelector: a group none of
 *     whose pods ever got a node is reported once at the end of the run
 *     (a warning and the summary's `unschedulablePods`), with the reason
 *     in words: no NodePool carries the selected pool label, the scenario
 *     has no NodePool at all, or the scheduler's last message.
 *
 * Invariants: `pods` holds the live pods by uid; n_running_pods counts
 * those not done; a group is created the first time one of its pods is
 * unschedulable or bound, and groups iterate in creation order (uthash's
 * insertion order), so the report is deterministic.
 */
#include <string.h>

#include "api/meta.h"
#include "api/quantity.h"
#include "provider/pool.h"
#include "sim/observe-int.h"
#include "store/store.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define LABEL_NODEPOOL "cloud.google.com/gke-nodepool"
/* Groups reported by name; more are counted in one line. */
#define REPORT_MAX_GROUPS 10

struct pod_group {
    char *key;           /* owner \x1f nodeSelector (sorted JSON) */
    char *owner;         /* "Job default/sample", or "pod default/p" without owner */
    json_t *selector;    /* the pods' nodeSelector (object, may be empty) */
    char *message;       /* the scheduler's last Unschedulable message */
    int64_t cpu_milli;   /* one pod's requests (sum over its containers) */
    int64_t memory_bytes;
    size_t unplaced;     /* pods seen unschedulable */
    bool placed;         /* some pod of the group got a node */
    UT_hash_handle hh;
};

struct pod_state {
    char *uid;
    bool done;           /* Succeeded or Failed */
    bool bound;
    bool unschedulable;  /* counted in group->unplaced */
    struct pod_group *group;
    UT_hash_handle hh;
};

static char *owner_of(const json_t *pod)
{
    size_t i;
    json_t *r;
    const json_t *refs = JX_GET(pod, "metadata", "ownerReferences");
    json_array_foreach(refs, i, r) { /* (the macro reads refs at every step) */
        if (json_is_true(json_object_get(r, "controller")))
            return xasprintf("%s %s/%s", jx_or_empty(JX_STR(r, "kind")),
                             jx_or_empty(api_namespace(pod)), jx_or_empty(JX_STR(r, "name")));
    }
    return xasprintf("pod %s/%s", jx_or_empty(api_namespace(pod)), jx_or_empty(api_name(pod)));
}

/* Sum of the containers' requests of resource (Kueue units), 0 if none. */
static int64_t pod_request(const json_t *pod, const char *resource)
{
    int64_t sum = 0;
    size_t i;
    json_t *c;
    const json_t *containers = JX_GET(pod, "spec", "containers");
    json_array_foreach(containers, i, c) { /* (the macro reads containers at every step) */
        int64_t v;
        const json_t *q = JX_GET(c, "resources", "requests", resource);
        if (q && !api_quantity_from_json(q, resource, resource, &v, NULL) && v > 0 &&
            sum <= INT64_MAX - v)
            sum += v;
    }
    return sum;
}

static struct pod_group *group_of(struct sim_observer *o, struct pod_state *p, const json_t *pod)
{
    if (p->group)
        return p->group;
    char *owner = owner_of(pod);
    json_t *sel = JX_GET(pod, "spec", "nodeSelector");
    json_t *selector = json_is_object(sel) ? json_deep_copy(sel) : json_object();
    char *dump = jx_dumps_sorted(selector);
    char *key = xasprintf("%s\x1f%s", owner, dump);
    xfree(dump);
    struct pod_group *g;
    HASH_FIND_STR(o->pod_groups, key, g);
    if (g) {
        xfree(key);
        xfree(owner);
        json_decref(selector);
    } else {
        g = xcalloc(1, sizeof(*g));
        g->key = key;
        g->owner = owner;
        g->selector = selector;
        g->cpu_milli = pod_request(pod, "cpu");
        g->memory_bytes = pod_request(pod, "memory");
        HASH_ADD_KEYPTR(hh, o->pod_groups, g->key, strlen(g->key), g);
    }
    p->group = g;
    return g;
}

static void pod_forget(struct sim_observer *o, struct pod_state *p)
{
    if (!p->done)
        o->n_running_pods--;
    HASH_DEL(o->pods, p);
    xfree(p->uid);
    xfree(p);
}

void sim_obs_pod(struct sim *s, const struct store_event *ev)
{
    struct sim_observer *o = s->obs;
    const char *uid = jx_or_empty(api_uid(ev->obj));
    struct pod_state *p;
    HASH_FIND_STR(o->pods, uid, p);
    if (ev->type == STORE_DELETED) {
        if (p)
            pod_forget(o, p);
        return;
    }
    if (!p) {
        p = xcalloc(1, sizeof(*p));
        p->uid = xstrdup(uid);
        HASH_ADD_KEYPTR(hh, o->pods, p->uid, strlen(p->uid), p);
        o->n_running_pods++;
    }
    const char *phase = jx_or_empty(JX_STR(ev->obj, "status", "phase"));
    bool done = !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
    if (done && !p->done)
        o->n_running_pods--;
    else if (!done && p->done)
        o->n_running_pods++;
    p->done = done;
    const char *node = JX_STR(ev->obj, "spec", "nodeName");
    if (node && node[0]) {
        if (!p->bound)
            group_of(o, p, ev->obj)->placed = true;
        p->bound = true;
        return;
    }
    const json_t *c = api_cond_get(ev->obj, "PodScheduled");
    if (c && !strcmp(jx_or_empty(JX_STR(c, "status")), "False") &&
        !strcmp(jx_or_empty(JX_STR(c, "reason")), "Unschedulable")) {
        struct pod_group *g = group_of(o, p, ev->obj);
        if (!p->unschedulable)
            g->unplaced++;
        p->unschedulable = true;
        xfree(g->message);
        g->message = xstrdup(jx_or_empty(JX_STR(c, "message")));
    }
}

/* "a node of NodePool p (machine) has only X allocatable cpu; each pod
 * asks for Y" when a pod is larger than any node of the pool, else NULL. */
static char *too_big(const json_t *np, const struct pod_group *g)
{
    struct prov_pool pool;
    struct diag d;
    diag_init(&d);
    char *out = NULL;
    if (!prov_pool_from_json(np, &pool, &d) && !pool.machine) { /* a Slurm pool */
        prov_pool_release(&pool);
    } else if (pool.machine) {
        struct prov_node_shape shape;
        prov_node_shape(pool.machine, &shape);
        const char *res = NULL;
        int64_t has = 0, asks = 0;
        if (g->cpu_milli > shape.alloc_cpu_milli)
            res = "cpu", has = shape.alloc_cpu_milli, asks = g->cpu_milli;
        else if (g->memory_bytes > shape.alloc_memory_bytes)
            res = "memory", has = shape.alloc_memory_bytes, asks = g->memory_bytes;
        if (res) {
            char *h = api_quantity_format(has, res), *a = api_quantity_format(asks, res);
            out = xasprintf("a node of NodePool %s (%s) has %s allocatable %s; each pod "
                            "asks for %s", pool.name, pool.machine->name, h, res, a);
            xfree(h);
            xfree(a);
        }
        prov_pool_release(&pool);
    }
    diag_release(&d);
    return out;
}

/* "NodePool p has no capacity ..." when the capacity model gives pool
 * nothing at the end of the run (a stockout without end, or the pool's
 * own spec.capacity.mode Stockout), else NULL. */
static char *no_capacity(struct sim *s, const json_t *np, const char *pool)
{
    const struct sim_scenario *sc = s->sc;
    int64_t end_rel = s->end_ms - sc->start_ms;
    for (size_t i = 0; i < sc->n_pools; i++) {
        if (strcmp(sc->pools[i].name, pool))
            continue;
        for (size_t j = 0; j < sc->pools[i].n_stockouts; j++) {
            const struct prov_sim_window *w = &sc->pools[i].stockouts[j];
            if (w->from_ms <= end_rel && w->to_ms == PROV_NEVER) {
                char from[SIM_SECONDS_LEN];
                return xasprintf("NodePool %s has no capacity (spec.capacity.%s.stockouts[%zu]"
                                 " from %ss never ends)", pool, pool, j,
                                 sim_format_seconds(w->from_ms, from));
            }
        }
        return NULL; /* the scenario's model replaces the pool's own setting */
    }
    const char *mode = JX_STR(np, "spec", "capacity", "mode");
    if (mode && !strcmp(mode, "Stockout"))
        return xasprintf("NodePool %s has no capacity (its spec.capacity.mode is Stockout)",
                         pool);
    return NULL;
}

/* Why a group's pods found no node, in words (caller frees). */
static char *unplaced_reason(struct sim *s, const struct pod_group *g)
{
    const char *pool = json_string_value(json_object_get(g->selector, LABEL_NODEPOOL));
    json_t *np = pool ? store_get(s->store, KIND_NODEPOOL, NULL, pool) : NULL;
    bool missing = pool && !np;
    char *big = np ? too_big(np, g) : NULL;
    if (!big && np)
        big = no_capacity(s, np, pool);
    json_decref(np);
    if (big)
        return big;
    if (missing && !strcmp(pool, "default-pool"))
        return xasprintf("no NodePool in the scenario matches %s=%s (`cueue server` creates "
                         "default-pool on its first start; `cueue sim` only with "
                         "spec.defaultPool: true)", LABEL_NODEPOOL, pool);
    if (missing)
        return xasprintf("no NodePool in the scenario matches %s=%s", LABEL_NODEPOOL, pool);
    if (store_count(s->store, KIND_NODEPOOL) == 0)
        return xstrdup("the scenario has no NodePool (nodes come only from NodePools; "
                       "spec.defaultPool: true adds the server's default-pool)");
    return xasprintf("%s", g->message && g->message[0] ? g->message : "no node fits them");
}

json_t *sim_obs_pods_report(struct sim *s)
{
    struct sim_observer *o = s->obs;
    json_t *out = json_array();
    size_t n = 0;
    struct pod_group *g, *t;
    HASH_ITER(hh, o->pod_groups, g, t) {
        if (g->placed || !g->unplaced)
            continue;
        char *why = unplaced_reason(s, g);
        if (n++ < REPORT_MAX_GROUPS)
            sim_warn(s, "pods of %s never found a node: %s", g->owner, why);
        json_t *e = json_object();
        json_object_set_new(e, "owner", json_string(g->owner));
        json_object_set(e, "nodeSelector", g->selector);
        json_object_set_new(e, "pods", json_integer((json_int_t)g->unplaced));
        json_object_set_new(e, "reason", json_string(why));
        json_object_set_new(e, "message", json_string(g->message ? g->message : ""));
        json_array_append_new(out, e);
        xfree(why);
    }
    if (n > REPORT_MAX_GROUPS)
        sim_warn(s, "and the pods of %zu more owners never found a node (the summary's "
                    "unschedulablePods lists them all)", n - REPORT_MAX_GROUPS);
    return out;
}

void sim_obs_pods_forget_all(struct sim_observer *o)
{
    struct pod_state *p, *pt;
    HASH_ITER(hh, o->pods, p, pt)
        pod_forget(o, p);
}

void sim_obs_pods_free(struct sim_observer *o)
{
    sim_obs_pods_forget_all(o);
    struct pod_group *g, *gt;
    HASH_ITER(hh, o->pod_groups, g, gt) {
        HASH_DEL(o->pod_groups, g);
        xfree(g->key);
        xfree(g->owner);
        xfree(g->message);
        json_decref(g->selector);
        xfree(g);
    }
    json_decref(o->unplaced);
}
