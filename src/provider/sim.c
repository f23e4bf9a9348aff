/*
 * provider/sim: the simulator's capacity model (see prov_sim_new in
 * provider.h). Per node pool: a provisioning delay, stockout windows and
 * revocations at given times, all from the scenario. Pure arithmetic over
 * the times it is given; it never reads a clock.
 *
 * Invariants: each pool's stockout windows are sorted by from_ms; the
 * revocation list (all pools) is sorted by (at_ms, pool order, list order)
 * and `next_rev` indexes the first one not yet reported, so poll() reports
 * each exactly once and in a deterministic order.
 */
#include "provider/provider.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/jsonx.h"
#include "util/xalloc.h"

struct sim_pool {
    char *name;
    int64_t delay_ms;
    struct prov_sim_window *windows;
    size_t n_windows;
};

struct sim_rev {
    int64_t at_ms;
    size_t order; /* tie-break: scenario order */
    size_t pool;  /* index into pools */
    int n_nodes;
};

struct prov_sim {
    struct prov base; /* first */
    struct sim_pool *pools;
    size_t n_pools;
    struct sim_rev *revs;
    size_t n_revs;
    size_t next_rev;
};

static struct prov_sim *to_sim(struct prov *p) { return (struct prov_sim *)p; }

static const struct sim_pool *find_pool(const struct prov_sim *s, const char *name)
{
    for (size_t i = 0; name && i < s->n_pools; i++)
        if (!strcmp(s->pools[i].name, name))
            return &s->pools[i];
    return NULL;
}

static int64_t add_sat(int64_t a, int64_t b)
{
    if (a == PROV_NEVER || b == PROV_NEVER)
        return PROV_NEVER;
    return b > INT64_MAX - a ? PROV_NEVER : a + b;
}

/* First instant >= t outside every window, or PROV_NEVER. */
static int64_t first_free(const struct sim_pool *p, int64_t t)
{
    bool moved = true;
    while (moved) {
        moved = false;
        for (size_t i = 0; i < p->n_windows; i++) {
            const struct prov_sim_window *w = &p->windows[i];
            if (w->from_ms <= t && t < w->to_ms) {
                if (w->to_ms == PROV_NEVER)
                    return PROV_NEVER;
                t = w->to_ms;
                moved = true;
            }
        }
    }
    return t;
}

static const char *machine_type(const json_t *pool)
{
    const char *mt = JX_STR(pool, "spec", "config", "machineType");
    return mt ? mt : "unknown";
}

/* Pools the scenario does not list follow their NodePool spec.capacity. */
static int64_t from_pool_spec(const json_t *pool, int64_t now_ms)
{
    const char *mode = JX_STR(pool, "spec", "capacity", "mode");
    if (!mode || !strcmp(mode, "Immediate"))
        return now_ms;
    if (!strcmp(mode, "Delayed")) {
        int64_t secs = JX_INT(pool, 0, "spec", "capacity", "delaySeconds");
        if (secs < 0)
            secs = 0;
        return add_sat(now_ms, secs > INT64_MAX / 1000 ? PROV_NEVER : secs * 1000);
    }
    return PROV_NEVER; /* Stockout */
}

static int sim_request(struct prov *p, const json_t *pool, int n_nodes, int queued,
                       int64_t now_ms, int64_t *ready_at_ms, char *msg, size_t msglen)
{
    (void)n_nodes;
    (void)queued;
    struct prov_sim *s = to_sim(p);
    const char *name = JX_STR(pool, "metadata", "name");
    const struct sim_pool *sp = find_pool(s, name);
    int64_t at;
    if (sp) {
        at = first_free(sp, now_ms);
        at = add_sat(at, sp->delay_ms);
    } else {
        at = from_pool_spec(pool, now_ms);
    }
    *ready_at_ms = at;
    if (msg && msglen)
        msg[0] = '\0';
    if (at == PROV_NEVER && msg && msglen)
        snprintf(msg, msglen, "no capacity for %s in pool %s", machine_type(pool),
                 jx_or_empty(name));
    return 0;
}

static int sim_poll(struct prov *p, int64_t now_ms, struct prov_events *out)
{
    struct prov_sim *s = to_sim(p);
    int n = 0;
    while (s->next_rev < s->n_revs && s->revs[s->next_rev].at_ms <= now_ms) {
        const struct sim_rev *r = &s->revs[s->next_rev++];
        XGROW(out->items, out->cap, out->n + 1);
        struct prov_event *ev = &out->items[out->n++];
        memset(ev, 0, sizeof(*ev));
        ev->pool = xstrdup(s->pools[r->pool].name);
        ev->n_nodes = r->n_nodes;
        ev->reason = xstrdup("CapacityRevoked");
        ev->message = xstrdup("Capacity provisioned for the Provisioning Request was reclaimed "
                              "and is no longer available in the cluster.");
        ev->at_ms = r->at_ms;
        n++;
    }
    return n;
}

static int64_t sim_next_deadline(struct prov *p)
{
    struct prov_sim *s = to_sim(p);
    return s->next_rev < s->n_revs ? s->revs[s->next_rev].at_ms : PROV_NEVER;
}

static void sim_free(struct prov *p)
{
    if (!p)
        return;
    struct prov_sim *s = to_sim(p);
    for (size_t i = 0; i < s->n_pools; i++) {
        xfree(s->pools[i].name);
        xfree(s->pools[i].windows);
    }
    xfree(s->pools);
    xfree(s->revs);
    xfree(s);
}

static const struct prov_ops sim_ops = {
    .request = sim_request,
    .poll = sim_poll,
    .next_deadline = sim_next_deadline,
    .free = sim_free,
};

static int window_cmp(const void *a, const void *b)
{
    const struct prov_sim_window *x = a, *y = b;
    if (x->from_ms != y->from_ms)
        return x->from_ms < y->from_ms ? -1 : 1;
    return (x->to_ms > y->to_ms) - (x->to_ms < y->to_ms);
}

static int rev_cmp(const void *a, const void *b)
{
    const struct sim_rev *x = a, *y = b;
    if (x->at_ms != y->at_ms)
        return x->at_ms < y->at_ms ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

struct prov *prov_sim_new(const struct prov_sim_pool *pools, size_t n_pools)
{
    struct prov_sim *s = xcalloc(1, sizeof(*s));
    s->base.ops = &sim_ops;
    s->pools = xcalloc(n_pools ? n_pools : 1, sizeof(*s->pools));
    s->n_pools = n_pools;
    size_t n_revs = 0;
    for (size_t i = 0; i < n_pools; i++)
        n_revs += pools[i].n_revocations;
    s->revs = xcalloc(n_revs ? n_revs : 1, sizeof(*s->revs));
    for (size_t i = 0; i < n_pools; i++) {
        struct sim_pool *sp = &s->pools[i];
        sp->name = xstrdup(pools[i].name ? pools[i].name : "");
        sp->delay_ms = pools[i].delay_ms < 0 ? 0 : pools[i].delay_ms;
        sp->n_windows = pools[i].n_stockouts;
        sp->windows = xcalloc(sp->n_windows ? sp->n_windows : 1, sizeof(*sp->windows));
        if (sp->n_windows)
            memcpy(sp->windows, pools[i].stockouts, sp->n_windows * sizeof(*sp->windows));
        qsort(sp->windows, sp->n_windows, sizeof(*sp->windows), window_cmp);
        for (size_t j = 0; j < pools[i].n_revocations; j++) {
            struct sim_rev *r = &s->revs[s->n_revs];
            r->at_ms = pools[i].revocations[j].at_ms;
            r->order = s->n_revs++;
            r->pool = i;
            r->n_nodes = pools[i].revocations[j].n_nodes < 0 ? 0 : pools[i].revocations[j].n_nodes;
        }
    }
    qsort(s->revs, s->n_revs, sizeof(*s->revs), rev_cmp);
    return &s->base;
}
