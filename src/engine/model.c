/*
 * model: the engine's copy of the cluster objects (ResourceFlavors, Cohorts,
 * ClusterQueues, LocalQueues, Namespaces) and the interning of resource
 * names, flavors and (flavor, resource) pairs.
 *
 * Upserts are idempotent and cheap when nothing scheduling-relevant changed
 * (the control plane re-upserts objects on every status write): each object
 * keeps a fingerprint of the fields the engine reads and an upsert with the
 * same fingerprint is a no-op. A real change marks the cohort forest dirty
 * (rebuilt lazily), asks for workloads to be re-routed and, like Kueue,
 * retries the inadmissible workloads of the affected ClusterQueues.
 */
#include <string.h>

#include "engine/engine-int.h"
#include "util/err.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

/* ---- interning ---- */

/* The name tables are indexes of the id arrays (e->res_names,
 * e->flavors, e->fr_flv/fr_res). An id whose index entry could not be
 * allocated (only possible for a table's first entry, ENG__HASH_ADD) is
 * still found: while a table holds fewer entries than there are ids, a
 * miss scans the array. */
static void index_name(struct eng__name **tab, const char *name, int id)
{
    struct eng__name *n = xcalloc(1, sizeof(*n));
    n->name = xstrdup(name);
    n->id = id;
    bool in;
    ENG__HASH_ADD(*tab, n->name, strlen(n->name), n, in);
    if (!in) {
        xfree(n->name);
        xfree(n);
    }
}

static int lookup(struct eng__name *tab, const char *name)
{
    struct eng__name *n;
    HASH_FIND_STR(tab, name, n);
    return n ? n->id : -1;
}

int eng__res_find(const struct eng *e, const char *name)
{
    int id = lookup(e->res_ids, name);
    if (id < 0 && HASH_COUNT(e->res_ids) < (unsigned)e->n_res)
        for (int i = 0; i < e->n_res; i++)
            if (!strcmp(e->res_names[i], name))
                return i;
    return id;
}

int eng__res_id(struct eng *e, const char *name)
{
    int id = eng__res_find(e, name);
    if (id >= 0)
        return id;
    index_name(&e->res_ids, name, e->n_res);
    XGROW(e->res_names, e->cap_res, (size_t)e->n_res + 1);
    e->res_names[e->n_res] = xstrdup(name);
    return e->n_res++;
}

int eng__flv_find(const struct eng *e, const char *name)
{
    int id = lookup(e->flv_ids, name);
    if (id < 0 && HASH_COUNT(e->flv_ids) < (unsigned)e->n_flv)
        for (int i = 0; i < e->n_flv; i++)
            if (!strcmp(e->flavors[i].name, name))
                return i;
    return id;
}

int eng__flv_id(struct eng *e, const char *name)
{
    int id = eng__flv_find(e, name);
    if (id >= 0)
        return id;
    index_name(&e->flv_ids, name, e->n_flv);
    XGROW(e->flavors, e->cap_flv, (size_t)e->n_flv + 1);
    struct eng__flavor *f = &e->flavors[e->n_flv];
    memset(f, 0, sizeof(*f));
    f->name = xstrdup(name);
    return e->n_flv++;
}

int eng__fr_find(const struct eng *e, int flv, int res)
{
    int64_t key = ((int64_t)flv << 32) | (uint32_t)res;
    struct eng__fr_key *k;
    HASH_FIND(hh, e->fr_ids, &key, sizeof(key), k);
    if (!k && HASH_COUNT(e->fr_ids) < (unsigned)e->n_fr) /* an id not indexed */
        for (int i = 0; i < e->n_fr; i++)
            if (e->fr_flv[i] == flv && e->fr_res[i] == res)
                return i;
    return k ? k->id : -1;
}

int eng__fr_id(struct eng *e, int flv, int res)
{
    int id = eng__fr_find(e, flv, res);
    if (id >= 0)
        return id;
    struct eng__fr_key *k = xcalloc(1, sizeof(*k));
    k->key = ((int64_t)flv << 32) | (uint32_t)res;
    k->id = e->n_fr;
    bool in;
    ENG__HASH_ADD(e->fr_ids, &k->key, sizeof(k->key), k, in);
    if (!in) /* found by a scan (eng__fr_find) */
        xfree(k);
    size_t cap = e->cap_fr;
    XGROW(e->fr_flv, cap, (size_t)e->n_fr + 1);
    cap = e->cap_fr;
    XGROW(e->fr_res, cap, (size_t)e->n_fr + 1);
    e->cap_fr = cap;
    e->fr_flv[e->n_fr] = flv;
    e->fr_res[e->n_fr] = res;
    return e->n_fr++;
}

/* ---- copies of api values (the engine owns what it keeps) ---- */

void eng__labels_copy(struct api_labels *dst, const struct api_labels *src)
{
    dst->n = src ? src->n : 0;
    dst->items = dst->n ? xcalloc(dst->n, sizeof(*dst->items)) : NULL;
    for (size_t i = 0; i < dst->n; i++) {
        dst->items[i].key = xstrdup(src->items[i].key);
        dst->items[i].value = xstrdup(src->items[i].value ? src->items[i].value : "");
    }
}

static char *dup_or_empty(const char *s) { return xstrdup(s ? s : ""); }

void eng__tols_copy(struct api_toleration **dst, size_t *n, const struct api_toleration *src,
                    size_t n_src)
{
    *n = n_src;
    *dst = n_src ? xcalloc(n_src, sizeof(**dst)) : NULL;
    for (size_t i = 0; i < n_src; i++) {
        (*dst)[i].key = dup_or_empty(src[i].key);
        (*dst)[i].op = dup_or_empty(src[i].op);
        (*dst)[i].value = dup_or_empty(src[i].value);
        (*dst)[i].effect = dup_or_empty(src[i].effect);
        (*dst)[i].has_seconds = src[i].has_seconds;
        (*dst)[i].seconds = src[i].seconds;
    }
}

void eng__tols_free(struct api_toleration *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        api_toleration_release(&t[i]);
    xfree(t);
}

static void taints_copy(struct api_taint **dst, size_t *n, const struct api_taint *src,
                        size_t n_src)
{
    *n = n_src;
    *dst = n_src ? xcalloc(n_src, sizeof(**dst)) : NULL;
    for (size_t i = 0; i < n_src; i++) {
        (*dst)[i].key = dup_or_empty(src[i].key);
        (*dst)[i].value = dup_or_empty(src[i].value);
        (*dst)[i].effect = dup_or_empty(src[i].effect);
    }
}

void eng__taints_free(struct api_taint *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        api_taint_release(&t[i]);
    xfree(t);
}

void eng__reqs_copy(struct api_sel_req **dst, size_t *n, const struct api_sel_req *src,
                    size_t n_src)
{
    *n = n_src;
    *dst = n_src ? xcalloc(n_src, sizeof(**dst)) : NULL;
    for (size_t i = 0; i < n_src; i++) {
        struct api_sel_req *d = &(*dst)[i];
        d->key = dup_or_empty(src[i].key);
        d->op = src[i].op;
        d->n_values = src[i].n_values;
        d->values = d->n_values ? xcalloc(d->n_values, sizeof(char *)) : NULL;
        for (size_t j = 0; j < d->n_values; j++)
            d->values[j] = dup_or_empty(src[i].values[j]);
    }
}

void eng__reqs_free(struct api_sel_req *r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        api_sel_req_release(&r[i]);
    xfree(r);
}

void eng__selector_copy(struct api_label_selector *dst, const struct api_label_selector *src)
{
    eng__labels_copy(&dst->match_labels, &src->match_labels);
    eng__reqs_copy(&dst->exprs, &dst->n_exprs, src->exprs, src->n_exprs);
}

/* ---- fingerprints: the fields the engine reads, as one string ---- */

static void fp_labels(struct sbuf *sb, const struct api_labels *l)
{
    for (size_t i = 0; l && i < l->n; i++)
        sbuf_addf(sb, "%s=%s,", l->items[i].key, l->items[i].value ? l->items[i].value : "");
    sbuf_addc(sb, ';');
}

static void fp_tols(struct sbuf *sb, const struct api_toleration *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sbuf_addf(sb, "%s|%s|%s|%s|%d|%lld,", t[i].key ? t[i].key : "", t[i].op ? t[i].op : "",
                  t[i].value ? t[i].value : "", t[i].effect ? t[i].effect : "",
                  (int)t[i].has_seconds, (long long)t[i].seconds);
    sbuf_addc(sb, ';');
}

static void fp_groups(struct sbuf *sb, const struct api_resource_group *g, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        for (size_t c = 0; c < g[i].n_covered; c++)
            sbuf_addf(sb, "%s,", g[i].covered[c]);
        for (size_t f = 0; f < g[i].n_flavors; f++) {
            const struct api_flavor_quotas *fq = &g[i].flavors[f];
            sbuf_addf(sb, "[%s:", fq->name);
            for (size_t r = 0; r < fq->n_resources; r++) {
                const struct api_resource_quota *q = &fq->resources[r];
                sbuf_addf(sb, "%s %lld %d %lld %d %lld,", q->name, (long long)q->nominal,
                          (int)q->has_borrowing_limit, (long long)q->borrowing_limit,
                          (int)q->has_lending_limit, (long long)q->lending_limit);
            }
            sbuf_adds(sb, "]");
        }
        sbuf_addc(sb, '|');
    }
    sbuf_addc(sb, ';');
}

/* Fingerprints are stored in a side table keyed by "<kind>/<name>". */
struct eng__fp {
    char *key;
    char *fp;
    UT_hash_handle hh;
};

static struct eng__fp **fp_table(struct eng *e) { return &e->fp_tab; }

/* True when key's fingerprint changed (and records the new one). */
bool eng__fp_changed(struct eng *e, const char *kind, const char *name, struct sbuf *sb)
{
    char *key = xasprintf("%s/%s", kind, name);
    struct eng__fp **tab = fp_table(e), *f;
    HASH_FIND_STR(*tab, key, f);
    if (f && strcmp(f->fp, sb->buf) == 0) {
        xfree(key);
        sbuf_release(sb);
        return false;
    }
    if (!f) {
        f = xcalloc(1, sizeof(*f));
        f->key = key;
        bool in;
        ENG__HASH_ADD(*tab, f->key, strlen(f->key), f, in);
        if (!in) { /* not recorded: the next upsert compares as changed too */
            xfree(f->key);
            xfree(f);
            sbuf_release(sb);
            return true;
        }
    } else {
        xfree(key);
        xfree(f->fp);
    }
    f->fp = eng__sbuf_take(sb);
    return true;
}

void eng__fp_forget(struct eng *e, const char *kind, const char *name)
{
    char *key = xasprintf("%s/%s", kind, name);
    struct eng__fp **tab = fp_table(e), *f;
    HASH_FIND_STR(*tab, key, f);
    if (f) {
        HASH_DEL(*tab, f);
        xfree(f->key);
        xfree(f->fp);
        xfree(f);
    }
    xfree(key);
}

void eng__fp_free_all(struct eng *e)
{
    struct eng__fp **tab = fp_table(e), *f, *tmp;
    for (f = *tab; f; f = tmp) {
        tmp = f->hh.next;
        HASH_DEL(*tab, f);
        xfree(f->key);
        xfree(f->fp);
        xfree(f);
    }
}

/* ---- ResourceFlavors ---- */

static void flavor_clear(struct eng__flavor *f)
{
    api_labels_release(&f->labels);
    eng__taints_free(f->taints, f->n_taints);
    eng__tols_free(f->tols, f->n_tols);
    f->taints = NULL;
    f->tols = NULL;
    f->n_taints = f->n_tols = 0;
    xfree(f->topology);
    f->topology = NULL;
}

/* Flavor existence changes ClusterQueue activity; every CQ is re-checked. */
static void flavors_changed(struct eng *e)
{
    for (size_t i = 0; i < e->n_cq_sorted; i++) {
        eng__cq_update_active(e, e->cq_sorted[i]);
        eng__cq_mark_requeue(e, e->cq_sorted[i]);
    }
    e->route_all = true;
}

void eng_upsert_flavor(struct eng *e, const struct api_resource_flavor *rf)
{
    if (!rf || !rf->name)
        return;
    struct sbuf sb;
    sbuf_init(&sb, 0);
    fp_labels(&sb, &rf->node_labels);
    for (size_t i = 0; i < rf->n_node_taints; i++)
        sbuf_addf(&sb, "%s=%s:%s,", rf->node_taints[i].key, rf->node_taints[i].value,
                  rf->node_taints[i].effect);
    fp_tols(&sb, rf->tolerations, rf->n_tolerations);
    sbuf_addf(&sb, "topo=%s", rf->topology_name ? rf->topology_name : "");
    if (!eng__fp_changed(e, "rf", rf->name, &sb))
        return;
    int id = eng__flv_id(e, rf->name);
    struct eng__flavor *f = &e->flavors[id];
    flavor_clear(f);
    f->exists = true;
    f->gen++;
    eng__labels_copy(&f->labels, &rf->node_labels);
    taints_copy(&f->taints, &f->n_taints, rf->node_taints, rf->n_node_taints);
    eng__tols_copy(&f->tols, &f->n_tols, rf->tolerations, rf->n_tolerations);
    f->topology = rf->topology_name ? xstrdup(rf->topology_name) : NULL;
    flavors_changed(e);
}

void eng_delete_flavor(struct eng *e, const char *name)
{
    int id = eng__flv_find(e, name);
    eng__fp_forget(e, "rf", name);
    if (id < 0 || !e->flavors[id].exists)
        return;
    flavor_clear(&e->flavors[id]);
    e->flavors[id].exists = false;
    e->flavors[id].gen++;
    flavors_changed(e);
}

/* ---- resource groups ---- */

void eng__rgs_free(struct eng__rg *rgs, int n)
{
    for (int i = 0; i < n; i++) {
        xfree(rgs[i].res);
        xfree(rgs[i].flv);
        xfree(rgs[i].quota);
    }
    xfree(rgs);
}

struct eng__rg *eng__rgs_build(struct eng *e, const struct api_resource_group *g, size_t n)
{
    struct eng__rg *rgs = n ? xcalloc(n, sizeof(*rgs)) : NULL;
    for (size_t i = 0; i < n; i++) {
        struct eng__rg *rg = &rgs[i];
        rg->n_cov = (int)g[i].n_covered;
        rg->n_flv = (int)g[i].n_flavors;
        rg->res = xcalloc((size_t)rg->n_cov + 1, sizeof(int));
        rg->flv = xcalloc((size_t)rg->n_flv + 1, sizeof(int));
        rg->quota = xcalloc((size_t)(rg->n_cov * rg->n_flv) + 1, sizeof(*rg->quota));
        for (int c = 0; c < rg->n_cov; c++)
            rg->res[c] = eng__res_id(e, g[i].covered[c]);
        for (int f = 0; f < rg->n_flv; f++) {
            const struct api_flavor_quotas *fq = &g[i].flavors[f];
            rg->flv[f] = eng__flv_id(e, fq->name);
            for (size_t r = 0; r < fq->n_resources; r++) {
                int res = eng__res_id(e, fq->resources[r].name);
                for (int c = 0; c < rg->n_cov; c++) {
                    if (rg->res[c] != res)
                        continue;
                    struct eng__quota *q = &rg->quota[f * rg->n_cov + c];
                    q->nominal = fq->resources[r].nominal;
                    q->has_bl = fq->resources[r].has_borrowing_limit;
                    q->borrowing_limit = fq->resources[r].borrowing_limit;
                    q->has_ll = fq->resources[r].has_lending_limit;
                    q->lending_limit = fq->resources[r].lending_limit;
                }
            }
        }
    }
    return rgs;
}

const struct eng__rg *eng__cq_rg(const struct eng__cq *cq, int res)
{
    for (int i = 0; i < cq->n_rgs; i++)
        for (int c = 0; c < cq->rgs[i].n_cov; c++)
            if (cq->rgs[i].res[c] == res)
                return &cq->rgs[i];
    return NULL;
}

const struct eng__quota *eng__cq_quota(const struct eng__cq *cq, int flv, int res)
{
    for (int i = 0; i < cq->n_rgs; i++) {
        const struct eng__rg *rg = &cq->rgs[i];
        for (int c = 0; c < rg->n_cov; c++) {
            if (rg->res[c] != res)
                continue;
            for (int f = 0; f < rg->n_flv; f++)
                if (rg->flv[f] == flv)
                    return &rg->quota[f * rg->n_cov + c];
        }
    }
    return NULL;
}

/* ---- Cohorts ---- */

struct eng__cohort *eng__cohort_get(struct eng *e, const char *name)
{
    struct eng__cohort *c;
    HASH_FIND_STR(e->cohorts, name, c);
    if (c)
        return c;
    c = xcalloc(1, sizeof(*c));
    c->node.name = xstrdup(name);
    c->parent_name = xstrdup("");
    c->node.fair_weight_milli = 1000;
    bool in;
    ENG__HASH_ADD(e->cohorts, c->node.name, strlen(c->node.name), c, in);
    if (!in) {
        xfree(c->node.name);
        xfree(c->parent_name);
        xfree(c);
        return NULL;
    }
    return c;
}

static void requeue_everything(struct eng *e)
{
    for (size_t i = 0; i < e->n_cq_sorted; i++)
        eng__cq_mark_requeue(e, e->cq_sorted[i]);
}

int eng_upsert_cohort(struct eng *e, const struct api_cohort *co)
{
    if (!co || !co->name)
        return 0;
    struct sbuf sb;
    sbuf_init(&sb, 0);
    sbuf_addf(&sb, "%s;%lld;", co->parent ? co->parent : "", (long long)co->fair_weight_milli);
    fp_groups(&sb, co->groups, co->n_groups);
    if (!eng__fp_changed(e, "cohort", co->name, &sb))
        return 0;
    struct eng__cohort *c = eng__cohort_get(e, co->name);
    if (!c) { /* nothing changed: the next upsert tries again */
        eng__fp_forget(e, "cohort", co->name);
        return CU_ENOMEM;
    }
    c->has_object = true;
    xfree(c->parent_name);
    c->parent_name = xstrdup(co->parent ? co->parent : "");
    eng__rgs_free(c->rgs, c->n_rgs);
    c->rgs = eng__rgs_build(e, co->groups, co->n_groups);
    c->n_rgs = (int)co->n_groups;
    c->node.fair_weight_milli = co->fair_weight_milli;
    e->tree_dirty = true;
    requeue_everything(e);
    return 0;
}

void eng_delete_cohort(struct eng *e, const char *name)
{
    struct eng__cohort *c;
    eng__fp_forget(e, "cohort", name);
    HASH_FIND_STR(e->cohorts, name, c);
    if (!c || !c->has_object)
        return;
    c->has_object = false;
    xfree(c->parent_name);
    c->parent_name = xstrdup("");
    eng__rgs_free(c->rgs, c->n_rgs);
    c->rgs = NULL;
    c->n_rgs = 0;
    c->node.fair_weight_milli = 1000;
    e->tree_dirty = true;
    requeue_everything(e);
}
