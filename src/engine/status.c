/*
 * status: ClusterQueue status figures (Kueue ClusterQueue status:
 * flavorsReservation, flavorsUsage, pending/reserving/admitted counts, the
 * Active condition) and eng_explain's view of one pending workload.
 */
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "engine/engine-int.h"
#include "util/err.h"
#include "util/xalloc.h"

/* Append to l, whose items have room (sized by the caller). */
static void reslist_put(struct api_reslist *l, const char *name, int64_t v)
{
    l->items[l->n].name = xstrdup(name);
    l->items[l->n++].value = v;
}

static int res_cmp(const void *a, const void *b)
{
    return strcmp(((const struct api_res *)a)->name, ((const struct api_res *)b)->name);
}

/* Reserved totals per node FR of cq, in one pass over its holders. */
static int64_t *holder_totals(const struct eng__cq *cq, bool admitted_only)
{
    int64_t *t = xcalloc((size_t)cq->node.n_fr + 1, sizeof(int64_t));
    for (const struct eng__wl *w = cq->holders; w; w = w->hnext) {
        if (admitted_only && !w->admitted)
            continue;
        for (int k = 0; k < w->n_use; k++) {
            int i = eng__node_idx(&cq->node, w->use_fr[k]);
            if (i >= 0)
                t[i] = eng__amt_add(t[i], w->use_amt[k]);
        }
    }
    return t;
}

/* Per flavor (in ClusterQueue order), per covered resource: the total and
 * the part above nominal. admitted_only restricts to Admitted holders. */
static struct eng_flavor_usage *flavor_usage(struct eng *e, struct eng__cq *cq, bool admitted_only,
                                             size_t *n_out)
{
    size_t n = 0, cap = 0;
    struct eng_flavor_usage *out = NULL;
    int64_t *totals = holder_totals(cq, admitted_only);
    for (int g = 0; g < cq->n_rgs; g++) {
        const struct eng__rg *rg = &cq->rgs[g];
        for (int f = 0; f < rg->n_flv; f++) {
            XGROW(out, cap, n + 1);
            struct eng_flavor_usage *u = &out[n++];
            memset(u, 0, sizeof(*u));
            u->flavor = xstrdup(e->flavors[rg->flv[f]].name);
            if (rg->n_cov > 0) {
                u->total.items = xcalloc((size_t)rg->n_cov, sizeof(*u->total.items));
                u->borrowed.items = xcalloc((size_t)rg->n_cov, sizeof(*u->borrowed.items));
            }
            for (int r = 0; r < rg->n_cov; r++) {
                int i = eng__node_idx(&cq->node, eng__fr_id(e, rg->flv[f], rg->res[r]));
                int64_t total = i >= 0 ? totals[i] : 0;
                int64_t nominal = rg->quota[f * rg->n_cov + r].nominal;
                int64_t borrowed = total > nominal ? eng__amt_sub(total, nominal) : 0;
                reslist_put(&u->total, e->res_names[rg->res[r]], total);
                reslist_put(&u->borrowed, e->res_names[rg->res[r]], borrowed);
            }
            if (u->total.n > 1) {
                qsort(u->total.items, u->total.n, sizeof(*u->total.items), res_cmp);
                qsort(u->borrowed.items, u->borrowed.n, sizeof(*u->borrowed.items), res_cmp);
            }
        }
    }
    xfree(totals);
    *n_out = n;
    return out;
}

int eng_cq_status(struct eng *e, const char *name, struct eng_cq_status *out)
{
    memset(out, 0, sizeof(*out));
    struct eng__cq *cq = eng__cq_find(e, name);
    if (!cq)
        return CU_ENOTFOUND;
    eng__tree_rebuild(e);
    out->active = cq->active;
    out->inactive_reason = xstrdup(cq->inactive_reason);
    out->inactive_message = xstrdup(cq->inactive_msg);
    out->pending = (int32_t)(cq->n_heap + cq->n_inadm);
    out->reserving = cq->n_reserving;
    out->admitted = cq->n_admitted;
    out->reservation = flavor_usage(e, cq, false, &out->n_reservation);
    out->usage = flavor_usage(e, cq, true, &out->n_usage);
    out->weighted_share = eng__weighted_share(e, cq);
    return 0;
}

void eng_each_pending(struct eng *e, eng_pending_fn fn, void *ctx)
{
    eng__tree_rebuild(e);
    for (size_t i = 0; i < e->n_cq_sorted; i++) {
        const struct eng__cq *cq = e->cq_sorted[i];
        for (size_t j = 0; j < cq->n_heap; j++)
            fn(ctx, cq->node.name, cq->heap[j]->ns, cq->heap[j]->queue_name, false);
        for (size_t j = 0; j < cq->n_park; j++)
            if (cq->park[j].wl)
                fn(ctx, cq->node.name, cq->park[j].wl->ns, cq->park[j].wl->queue_name, true);
    }
}

int eng_cq_active(struct eng *e, const char *name, bool *active, const char **reason,
                  const char **message)
{
    struct eng__cq *cq = eng__cq_find(e, name);
    if (!cq)
        return CU_ENOTFOUND;
    eng__tree_rebuild(e);
    *active = cq->active;
    *reason = cq->inactive_reason;
    *message = cq->inactive_msg;
    return 0;
}

static void flavor_usage_free(struct eng_flavor_usage *u, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        xfree(u[i].flavor);
        api_reslist_release(&u[i].total);
        api_reslist_release(&u[i].borrowed);
    }
    xfree(u);
}

void eng_cq_status_release(struct eng_cq_status *s)
{
    if (!s)
        return;
    xfree(s->inactive_reason);
    xfree(s->inactive_message);
    flavor_usage_free(s->reservation, s->n_reservation);
    flavor_usage_free(s->usage, s->n_usage);
    memset(s, 0, sizeof(*s));
}
