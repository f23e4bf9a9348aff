/*
 * admit: quota reservation (Kueue scheduler.admit + assumeWorkload,
 * shared/spec/kueue.md §2.9 phase 1): the ENG_RESERVE decision with the
 * status.admission shape and the QuotaReserved event text, and the engine
 * assuming the reservation at once (usage counted before the next entry).
 * An elastic replacement slice finishes the slice it replaces (§5).
 */
#include <string.h>

#include "engine/engine-int.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

/* status.admission.podSetAssignments for the decision. */
static void admission_out(const struct eng *e, const struct eng__wl *wl, const struct eng__asg *a,
                          const char *cq, struct api_admission *out)
{
    out->cluster_queue = xstrdup(cq);
    out->n_podsets = (size_t)a->n_ps;
    out->podsets = xcalloc((size_t)a->n_ps + 1, sizeof(*out->podsets));
    for (int i = 0; i < a->n_ps; i++) {
        const struct eng__psa *p = &a->ps[i];
        struct api_podset_assignment *o = &out->podsets[i];
        int n = 0;
        for (int k = 0; k < p->n_ra; k++)
            n += p->ra[k].flv >= 0;
        o->name = xstrdup(wl->ps[i].name);
        o->count = p->count;
        o->flavors.items = xcalloc((size_t)n + 1, sizeof(*o->flavors.items));
        o->resource_usage.items = xcalloc((size_t)n + 1, sizeof(*o->resource_usage.items));
        for (int k = 0; k < p->n_ra; k++) {
            const struct eng__ra *ra = &p->ra[k];
            if (ra->flv < 0)
                continue;
            o->flavors.items[o->flavors.n].key = xstrdup(e->res_names[ra->res]);
            o->flavors.items[o->flavors.n++].value = xstrdup(e->flavors[ra->flv].name);
            o->resource_usage.items[o->resource_usage.n].name = xstrdup(e->res_names[ra->res]);
            o->resource_usage.items[o->resource_usage.n++].value = ra->total;
        }
        o->topology = api_topology_assignment_dup(p->ta);
    }
}

/* The workload's own copy of the admission (full usage, not the delta). */
static void assume(struct eng *e, struct eng__cq *cq, struct eng__wl *wl, const struct eng__asg *a)
{
    eng__pa_free(wl->pa, wl->n_pa);
    wl->n_pa = a->n_ps;
    wl->pa = xcalloc((size_t)a->n_ps + 1, sizeof(*wl->pa));
    for (int i = 0; i < a->n_ps; i++) {
        const struct eng__psa *p = &a->ps[i];
        struct eng__pa *pa = &wl->pa[i];
        pa->name = xstrdup(wl->ps[i].name);
        pa->count = p->count;
        eng__pa_alloc(pa, p->n_ra);
        for (int k = 0; k < p->n_ra; k++) {
            if (p->ra[k].flv < 0)
                continue;
            pa->res[pa->n] = p->ra[k].res;
            pa->flv[pa->n] = p->ra[k].flv;
            pa->amt[pa->n++] = p->ra[k].total;
        }
        pa->ta = api_topology_assignment_dup(p->ta);
    }
    xfree(wl->rcq_name);
    wl->rcq_name = xstrdup(cq->node.name);
    eng__wl_recompute_usage(e, wl);
    wl->reserved = true;
    wl->quota_reserved_ms = e->now_ms;
    wl->admitted = !eng__checks_apply(cq, wl);
    eng__istr_put(e, wl->last_reason);
    eng__istr_put(e, wl->last_msg);
    wl->last_reason = wl->last_msg = NULL;
    wl->blocker_emitted = false;
    wl->has_last = false;
    XFREE(wl->last_idx);
    wl->n_last = 0;
    eng__unsent_forget(e, wl);
    eng__holder_add(e, wl, cq); /* cq is the one named rcq_name */
}

/* Whole seconds of a non-negative wait, as printf's "%.0f" prints
 * wait_ms / 1000.0 (nearest, ties to even); a negative wait prints 0. */
static void add_wait_s(struct sbuf *sb, int64_t wait_ms)
{
    int64_t q = wait_ms > 0 ? wait_ms / 1000 : 0, r = wait_ms > 0 ? wait_ms % 1000 : 0;
    if (r > 500 || (r == 500 && (q & 1)))
        q++;
    char digits[24];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + q % 10);
        q /= 10;
    } while (q);
    while (n)
        sbuf_addc(sb, digits[--n]);
}

void eng__admit(struct eng *e, struct eng__cq *cq, struct eng__wl *wl, const struct eng__asg *a,
                struct eng__wl *old)
{
    struct eng_decision *d = eng__decision_new(e, ENG_RESERVE, wl, cq->node.name);
    admission_out(e, wl, a, cq->node.name, &d->admission);
    d->borrowing = a->borrowing > 0;
    d->reason = xstrdup("QuotaReserved");
    struct sbuf sb;
    sbuf_init(&sb, 0);
    sbuf_adds(&sb, "Quota reserved in ClusterQueue ");
    sbuf_adds(&sb, cq->node.name);
    d->message = xstrdup(sb.buf);
    sbuf_adds(&sb, ", wait time since queued was ");
    add_wait_s(&sb, e->now_ms - wl->qo_ts_ms);
    sbuf_addc(&sb, 's');
    char *att = eng__asg_attempts_text(e, a, wl);
    if (att) {
        sbuf_adds(&sb, "; Flavors considered: ");
        sbuf_adds(&sb, att);
    }
    d->event_message = eng__sbuf_take(&sb);
    xfree(att);
    if (old)
        eng__wl_ref_set(&d->replaces, old);
    if (cq->preemptor == wl)
        cq->preemptor = NULL;
    if (cq->sticky == wl)
        cq->sticky = NULL;
    assume(e, cq, wl, a);
    e->hard_progress++;
    if (old) {
        /* finished in Kueue right after the replacement is admitted */
        eng__holder_remove(e, old, false);
        old->reserved = false;
        old->finished = true;
        eng__wl_unqueue(e, old);
    }
}
