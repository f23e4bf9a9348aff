/*
 * usage: quota usage over time, integrated the way Kueue's scheduler
 * performance checker does it: for each ClusterQueue and (flavor,
 * resource), used·time is accumulated between changes, and the usage
 * percentage over the queue's observation window (its first sighting to its
 * last usage change) is Σ used·dt · 100 / (nominal · window). Per class of
 * queues (the scenario's class label on the ClusterQueue) the percentage is
 * Σ over queues of used·dt of their first flavor's first resource · 100 /
 * (Σ of those nominal quotas · the class's window), Kueue's figure.
 *
 * Invariants: `used` only changes through account(), which first adds
 * used·(now - last_ms) to the integral (and to the peak and the minimum
 * when the level was held for a positive time); output is sorted by name.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
/* This file's tables (queues, flavor totals) hash with cueue's
 * word-at-a-time hash: only buckets follow it, never the iteration order. */
#include "util/hash.h"
#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = cu_hash_bytes((keyptr), (size_t)(keylen)))
#include <uthash.h>

#include "api/quantity.h"
#include "sim/sim-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

struct series {
    int64_t used;
    int64_t peak;
    int64_t min;     /* lowest level held for a positive time (when held) */
    bool held;       /* some level was held for a positive time */
    double integral; /* used x ms */
    int64_t first_ms;
    int64_t last_ms;   /* last change */
};

struct flavor_state;

struct cq_res {
    char *flavor;
    char *resource;
    struct flavor_state *total; /* the (flavor, resource) total, once looked up */
    int64_t nominal;
    bool declared; /* in the ClusterQueue's spec */
    struct series s;
};

struct cq_state {
    char *name;
    char *class_name;
    json_t *seen_spec;   /* the spec and labels of the last upsert (references): */
    json_t *seen_labels; /* the same values again change nothing */
    int64_t first_ms;
    int64_t last_ms;
    struct cq_res *res;
    size_t n_res;
    UT_hash_handle hh;
};

struct flavor_state {
    char *key; /* flavor \x1f resource */
    char *flavor;
    char *resource;
    struct series s;
    UT_hash_handle hh;
};

struct sim_usage {
    struct cq_state *cqs;
    struct flavor_state *flavors;
    struct cq_state *last_cq; /* the one sim_usage_cell found last (never freed before u) */
};

struct sim_usage *sim_usage_new(void) { return xcalloc(1, sizeof(struct sim_usage)); }

void sim_usage_free(struct sim_usage *u)
{
    if (!u)
        return;
    struct cq_state *c, *ct;
    HASH_ITER(hh, u->cqs, c, ct) {
        HASH_DEL(u->cqs, c);
        for (size_t i = 0; i < c->n_res; i++) {
            xfree(c->res[i].flavor);
            xfree(c->res[i].resource);
        }
        xfree(c->res);
        xfree(c->name);
        xfree(c->class_name);
        json_decref(c->seen_spec);
        json_decref(c->seen_labels);
        xfree(c);
    }
    struct flavor_state *f, *ft;
    HASH_ITER(hh, u->flavors, f, ft) {
        HASH_DEL(u->flavors, f);
        xfree(f->key);
        xfree(f->flavor);
        xfree(f->resource);
        xfree(f);
    }
    xfree(u);
}

/* Close the interval since the last change, then apply delta. The peak
 * and the minimum only count levels held for a positive time, so the order of changes
 * within one instant (a slice replaced by a larger one) does not show. */
static void account(struct series *s, int64_t delta, int64_t now_ms)
{
    if (now_ms > s->last_ms) {
        s->integral += (double)s->used * (double)(now_ms - s->last_ms);
        if (s->used > s->peak)
            s->peak = s->used;
        if (!s->held || s->used < s->min)
            s->min = s->used;
        s->held = true;
    }
    s->last_ms = now_ms;
    s->used += delta;
}

static struct cq_state *cq_get(struct sim_usage *u, const char *name, int64_t now_ms)
{
    struct cq_state *c;
    HASH_FIND_STR(u->cqs, name, c);
    if (c)
        return c;
    c = xcalloc(1, sizeof(*c));
    c->name = xstrdup(name);
    c->class_name = xstrdup("");
    c->first_ms = c->last_ms = now_ms;
    HASH_ADD_KEYPTR(hh, u->cqs, c->name, strlen(c->name), c);
    return c;
}

static struct cq_res *res_get(struct cq_state *c, const char *flavor, const char *resource,
                              int64_t now_ms)
{
    for (size_t i = 0; i < c->n_res; i++)
        if (!strcmp(c->res[i].flavor, flavor) && !strcmp(c->res[i].resource, resource))
            return &c->res[i];
    c->res = xreallocarray(c->res, c->n_res + 1, sizeof(*c->res));
    struct cq_res *r = &c->res[c->n_res++];
    memset(r, 0, sizeof(*r));
    r->flavor = xstrdup(flavor);
    r->resource = xstrdup(resource);
    r->s.first_ms = r->s.last_ms = now_ms;
    if (now_ms > c->first_ms) { /* nothing was used of it since the queue's window began */
        r->s.held = true;
        r->s.min = 0;
    }
    return r;
}

static struct flavor_state *flavor_get(struct sim_usage *u, const char *flavor,
                                       const char *resource, int64_t now_ms)
{
    char *key = xjoin(flavor, '\x1f', resource);
    struct flavor_state *f;
    HASH_FIND_STR(u->flavors, key, f);
    if (f) {
        xfree(key);
        return f;
    }
    f = xcalloc(1, sizeof(*f));
    f->key = key;
    f->flavor = xstrdup(flavor);
    f->resource = xstrdup(resource);
    f->s.first_ms = f->s.last_ms = now_ms;
    HASH_ADD_KEYPTR(hh, u->flavors, f->key, strlen(f->key), f);
    return f;
}

void sim_usage_cq_upsert(struct sim_usage *u, const json_t *cq, const char *class_label,
                         int64_t now_ms)
{
    static const struct sim_key top_keys[] = {SIM_KEY("metadata"), SIM_KEY("spec")};
    static const struct sim_key md_keys[] = {SIM_KEY("name"), SIM_KEY("labels")};
    json_t *top[2], *md[2];
    sim_members(cq, top_keys, 2, top);
    sim_members(top[0], md_keys, 2, md);
    const char *name = json_string_value(md[0]);
    if (!name)
        return;
    struct cq_state *c = cq_get(u, name, now_ms);
    json_t *spec = top[1];
    json_t *labels = md[1];
    if (c->seen_spec && spec == c->seen_spec && labels == c->seen_labels)
        return; /* a status write: the quotas and the class are those seen */
    json_decref(c->seen_spec);
    json_decref(c->seen_labels);
    c->seen_spec = json_incref(spec);
    c->seen_labels = json_incref(labels);
    const char *cls = JX_STR(cq, "metadata", "labels", class_label);
    xfree(c->class_name);
    c->class_name = xstrdup(cls ? cls : "");
    for (size_t i = 0; i < c->n_res; i++)
        c->res[i].declared = false;
    size_t gi, fi, ri;
    json_t *g, *f, *r;
    json_array_foreach(JX_GET(cq, "spec", "resourceGroups"), gi, g) {
        json_array_foreach(json_object_get(g, "flavors"), fi, f) {
            const char *flavor = jx_or_empty(JX_STR(f, "name"));
            json_array_foreach(json_object_get(f, "resources"), ri, r) {
                const char *res = jx_or_empty(JX_STR(r, "name"));
                int64_t nominal = 0;
                struct diag d;
                diag_init(&d);
                if (api_quantity_from_json(json_object_get(r, "nominalQuota"), res,
                                           "nominalQuota", &nominal, &d))
                    nominal = 0;
                diag_release(&d);
                struct cq_res *cr = res_get(c, flavor, res, now_ms);
                cr->nominal = nominal;
                cr->declared = true;
                cr->total = flavor_get(u, flavor, res, now_ms);
            }
        }
    }
}

struct sim_usage_cell sim_usage_cell(struct sim_usage *u, const char *cq, const char *flavor,
                                     const char *resource, int64_t now_ms)
{
    /* a run's admissions name few queues, often the same one in a row */
    struct cq_state *c = u->last_cq;
    if (!c || strcmp(c->name, cq))
        c = u->last_cq = cq_get(u, cq, now_ms);
    struct cq_res *r = res_get(c, flavor, resource, now_ms);
    if (!r->total)
        r->total = flavor_get(u, flavor, resource, now_ms);
    return (struct sim_usage_cell){c, (size_t)(r - c->res), r->total};
}

void sim_usage_cell_add(struct sim_usage_cell cell, int64_t delta, int64_t now_ms)
{
    account(&cell.cq->res[cell.res].s, delta, now_ms);
    cell.cq->last_ms = now_ms;
    account(&cell.flavor->s, delta, now_ms);
}

void sim_usage_add(struct sim_usage *u, const char *cq, const char *flavor,
                   const char *resource, int64_t delta, int64_t now_ms)
{
    if (!delta)
        return;
    sim_usage_cell_add(sim_usage_cell(u, cq, flavor, resource, now_ms), delta, now_ms);
}

/* ---- summary ---- */

static double round3(double v) { return round(v * 1000.0) / 1000.0; }

/* An amount in display units: cores for cpu, units/bytes otherwise. */
static json_t *amount_json(double v, const char *resource)
{
    if (api_resource_is_milli(resource))
        return json_real(round3(v / 1000.0));
    return json_real(round3(v));
}

static json_t *percent_json(double integral, int64_t nominal, int64_t window_ms)
{
    if (nominal <= 0 || window_ms <= 0)
        return json_null();
    return json_real(round3(integral * 100.0 / ((double)nominal * (double)window_ms)));
}

/* The lowest level held for a positive time up to end_ms (the window's
 * end: the level after the series' last change counts when held). */
static int64_t series_min(const struct series *s, int64_t end_ms)
{
    int64_t min = s->held ? s->min : s->used;
    if (end_ms > s->last_ms && s->used < min)
        min = s->used;
    return min;
}

static json_t *series_json(const struct series *s, int64_t nominal, int64_t window_ms,
                           int64_t end_ms, const char *resource)
{
    json_t *o = json_object();
    json_object_set_new(o, "nominal", amount_json((double)nominal, resource));
    json_object_set_new(o, "meanUsed", window_ms > 0
                                           ? amount_json(s->integral / (double)window_ms, resource)
                                           : json_real(0));
    json_object_set_new(o, "minUsed", amount_json((double)series_min(s, end_ms), resource));
    json_object_set_new(o, "peakUsed", amount_json((double)s->peak, resource));
    json_object_set_new(o, "meanPercent", percent_json(s->integral, nominal, window_ms));
    return o;
}

static int cq_cmp(const void *a, const void *b)
{
    return strcmp((*(struct cq_state *const *)a)->name, (*(struct cq_state *const *)b)->name);
}

/* The first declared (flavor, resource): the one Kueue's checker reads. */
static const struct cq_res *first_res(const struct cq_state *c)
{
    for (size_t i = 0; i < c->n_res; i++)
        if (c->res[i].declared)
            return &c->res[i];
    return c->n_res ? &c->res[0] : NULL;
}

struct class_acc {
    double integral;
    int64_t nominal;
    int64_t first_ms, last_ms;
    double min_pct, sum_pct;
    size_t n_pct, n;
};

static json_t *cq_json(struct cq_state *c, struct class_acc *acc)
{
    json_t *o = json_object();
    json_object_set_new(o, "class", json_string(c->class_name));
    int64_t window = c->last_ms - c->first_ms;
    json_t *res = json_array();
    for (size_t i = 0; i < c->n_res; i++) {
        struct cq_res *r = &c->res[i];
        json_t *e = series_json(&r->s, r->nominal, window, c->last_ms, r->resource);
        json_object_set_new(e, "flavor", json_string(r->flavor));
        json_object_set_new(e, "resource", json_string(r->resource));
        json_array_append_new(res, e);
    }
    const struct cq_res *fr = first_res(c);
    json_t *pct = fr ? percent_json(fr->s.integral, fr->nominal, window) : json_null();
    json_object_set_new(o, "usagePercent", pct);
    json_object_set_new(o, "resources", res);
    if (fr) {
        if (!acc->n || c->first_ms < acc->first_ms)
            acc->first_ms = c->first_ms;
        if (!acc->n || c->last_ms > acc->last_ms)
            acc->last_ms = c->last_ms;
        acc->integral += fr->s.integral;
        acc->nominal += fr->nominal;
        acc->n++;
        if (json_is_real(pct)) {
            double p = json_real_value(pct);
            acc->min_pct = acc->n_pct ? fmin(acc->min_pct, p) : p;
            acc->sum_pct += p;
            acc->n_pct++;
        }
    }
    return o;
}

static json_t *class_json(const struct class_acc *a)
{
    json_t *o = json_object();
    json_object_set_new(o, "clusterQueues", json_integer((json_int_t)a->n));
    json_object_set_new(o, "usagePercent",
                        percent_json(a->integral, a->nominal, a->last_ms - a->first_ms));
    json_object_set_new(o, "minClusterQueuePercent",
                        a->n_pct ? json_real(round3(a->min_pct)) : json_null());
    json_object_set_new(o, "meanClusterQueuePercent",
                        a->n_pct ? json_real(round3(a->sum_pct / (double)a->n_pct))
                                 : json_null());
    return o;
}

static json_t *queues_summary(struct sim_usage *u, json_t **classes_out)
{
    size_t n = HASH_COUNT(u->cqs), i = 0;
    struct cq_state **arr = xcalloc(n + 1, sizeof(*arr));
    struct cq_state *c, *ct;
    HASH_ITER(hh, u->cqs, c, ct)
        arr[i++] = c;
    qsort(arr, n, sizeof(*arr), cq_cmp);
    json_t *cqs = json_object();
    json_t *classes = json_object();
    struct class_acc *accs = xcalloc(n + 1, sizeof(*accs));
    const char **names = xcalloc(n + 1, sizeof(*names));
    size_t n_classes = 0;
    for (i = 0; i < n; i++) {
        size_t k = 0;
        while (k < n_classes && strcmp(names[k], arr[i]->class_name))
            k++;
        if (k == n_classes)
            names[n_classes++] = arr[i]->class_name;
        json_object_set_new(cqs, arr[i]->name, cq_json(arr[i], &accs[k]));
    }
    for (size_t k = 0; k < n_classes; k++)
        json_object_set_new(classes, names[k], class_json(&accs[k]));
    xfree(names);
    xfree(accs);
    xfree(arr);
    *classes_out = classes;
    return cqs;
}

static int flavor_cmp(const void *a, const void *b)
{
    return strcmp((*(struct flavor_state *const *)a)->key,
                  (*(struct flavor_state *const *)b)->key);
}

static json_t *flavors_summary(struct sim_usage *u)
{
    size_t n = HASH_COUNT(u->flavors), i = 0;
    struct flavor_state **arr = xcalloc(n + 1, sizeof(*arr));
    struct flavor_state *f, *ft;
    HASH_ITER(hh, u->flavors, f, ft)
        arr[i++] = f;
    qsort(arr, n, sizeof(*arr), flavor_cmp);
    json_t *out = json_object();
    for (i = 0; i < n; i++) {
        f = arr[i];
        int64_t nominal = 0;
        struct cq_state *c, *ct;
        HASH_ITER(hh, u->cqs, c, ct)
            for (size_t j = 0; j < c->n_res; j++)
                if (c->res[j].declared && !strcmp(c->res[j].flavor, f->flavor) &&
                    !strcmp(c->res[j].resource, f->resource))
                    nominal += c->res[j].nominal;
        json_t *fl = json_object_get(out, f->flavor);
        if (!fl) {
            fl = json_object();
            json_object_set_new(out, f->flavor, fl);
        }
        json_object_set_new(fl, f->resource,
                            series_json(&f->s, nominal, f->s.last_ms - f->s.first_ms,
                                        f->s.last_ms, f->resource));
    }
    xfree(arr);
    return out;
}

/* Usage still held at the end (a run cut by --until) counts up to end_ms;
 * otherwise windows end at the last change, as in Kueue's checker. */
static void close_open_series(struct sim_usage *u, int64_t end_ms)
{
    for (struct cq_state *c = u->cqs; c; c = c->hh.next) {
        for (size_t i = 0; i < c->n_res; i++) {
            if (c->res[i].s.used > 0) {
                account(&c->res[i].s, 0, end_ms);
                c->last_ms = end_ms > c->last_ms ? end_ms : c->last_ms;
            }
        }
    }
    for (struct flavor_state *f = u->flavors; f; f = f->hh.next)
        if (f->s.used > 0)
            account(&f->s, 0, end_ms);
}

json_t *sim_usage_summary(struct sim_usage *u, int64_t end_ms)
{
    close_open_series(u, end_ms);
    json_t *classes = NULL;
    json_t *o = json_object();
    json_object_set_new(o, "clusterQueues", queues_summary(u, &classes));
    json_object_set_new(o, "clusterQueueClasses", classes);
    json_object_set_new(o, "flavors", flavors_summary(u));
    return o;
}
