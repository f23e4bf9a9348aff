/*
 * assign: flavor assignment, Kueue's flavorassigner restated
 * (shared/spec/kueue.md §2.4, pkg/scheduler/flavorassigner/flavorassigner.go).
 *
 * Pod sets are processed in order; within a pod set each requested resource
 * not yet assigned picks one flavor for its whole resource group, scanning
 * the group's flavors in ClusterQueue order from the recorded scan progress.
 * A flavor is eligible when it exists, its NoSchedule/NoExecute taints are
 * tolerated (pod tolerations plus the flavor's own) and the pod set's
 * nodeSelector/required affinity match its labels on the flavor's own keys.
 * Each resource then gets a granular mode (fit / reclaim / preempt /
 * no-candidates / no-fit) and a borrowing level; flavorFungibility decides
 * whether to stop or keep looking, and the preference picks the best seen.
 * The first pod set that gets no flavor ends the assignment (NoFit).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "api/quantity.h"
#include "engine/engine-int.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

const char *eng__nofit_reason(int nf)
{
    switch (nf) {
    case ENG__NF_NOMATCH: return "NoMatchingFlavor";
    case ENG__NF_EXCEEDS: return "ExceedsMaxQuota";
    case ENG__NF_WAITING: return "WaitingForQuota";
    case ENG__NF_TOPOLOGY: return "TopologyPlacementFailed";
    default: return "";
    }
}

static int worse_nofit(int a, int b) { return a >= b ? a : b; }

char *eng__qty(const struct eng *e, int res, int64_t v)
{
    if (v == INT64_MIN)
        v = -INT64_MAX;
    return api_quantity_format(v, e->res_names[res]);
}

/* ---- granular modes ---- */

struct gmode {
    int pm;     /* enum eng__pmode */
    int borrow;
};

static const struct gmode WORST = {ENG__PM_NOFIT, INT_MAX};

static bool preferred(struct gmode a, struct gmode b, enum api_fung_preference pref)
{
    if (a.pm == ENG__PM_NOFIT)
        return false;
    if (b.pm == ENG__PM_NOFIT)
        return true;
    bool anc = a.pm == ENG__PM_NOCAND, bnc = b.pm == ENG__PM_NOCAND;
    if (anc != bnc)
        return !anc;
    if (pref == PREF_PREEMPTION_OVER_BORROWING) {
        if (a.borrow != b.borrow)
            return a.borrow < b.borrow;
        return a.pm > b.pm;
    }
    if (a.pm != b.pm)
        return a.pm > b.pm;
    return a.borrow < b.borrow;
}

static bool try_next(struct gmode m, const struct eng__cq *cq)
{
    if (m.pm == ENG__PM_NOFIT || m.pm == ENG__PM_NOCAND)
        return true;
    if ((m.pm == ENG__PM_PREEMPT || m.pm == ENG__PM_RECLAIM) && cq->when_preempt == FUNG_TRY_NEXT_FLAVOR)
        return true;
    return m.borrow > 0 && cq->when_borrow == FUNG_TRY_NEXT_FLAVOR;
}

static int mode_of(int pm)
{
    switch (pm) {
    case ENG__PM_FIT: return ENG__FIT;
    case ENG__PM_NOFIT: return ENG__NOFIT;
    default: return ENG__PREEMPT;
    }
}

/* ---- assignment bookkeeping ---- */

int64_t eng__asg_usage(const struct eng__asg *a, int fr)
{
    for (int u = 0; u < a->n_use; u++)
        if (a->use_fr[u] == fr)
            return a->use_amt[u];
    return 0;
}

static void asg_add_usage(struct eng__asg *a, int fr, int64_t amt)
{
    for (int u = 0; u < a->n_use; u++)
        if (a->use_fr[u] == fr) {
            a->use_amt[u] = eng__amt_add(a->use_amt[u], amt);
            return;
        }
    size_t cap = (size_t)a->cap_use;
    XGROW(a->use_fr, cap, (size_t)a->n_use + 1);
    cap = (size_t)a->cap_use;
    XGROW(a->use_amt, cap, (size_t)a->n_use + 1);
    a->cap_use = (int)cap;
    a->use_fr[a->n_use] = fr;
    a->use_amt[a->n_use++] = amt;
}

/* Record a flavor attempt, merging with an earlier one for the same flavor
 * (Kueue mergeFlavorAttempts: worst mode, largest borrow, union of reasons). */
static void attempt_add(struct eng__psa *p, int flv, int pm, int borrow, struct eng__strv *reasons,
                        int nofit)
{
    for (int k = 0; k < p->n_att; k++) {
        struct eng__attempt *a = &p->att[k];
        if (a->flv != flv)
            continue;
        int np = pm == ENG__PM_NOCAND ? 0 : pm == ENG__PM_PREEMPT ? 1 : pm == ENG__PM_RECLAIM ? 2 : -1;
        if (mode_of(pm) < a->mode)
            a->mode = mode_of(pm);
        if (borrow > a->borrow)
            a->borrow = borrow;
        if (np >= 0 && (a->poss < 0 || np < a->poss))
            a->poss = np;
        for (size_t r = 0; reasons && r < reasons->n; r++)
            eng__strv_push(&a->reasons, xstrdup(reasons->v[r]));
        eng__strv_sort_unique(&a->reasons);
        a->nofit = worse_nofit(a->nofit, nofit);
        return;
    }
    size_t cap = (size_t)p->cap_att;
    XGROW(p->att, cap, (size_t)p->n_att + 1);
    p->cap_att = (int)cap;
    struct eng__attempt *a = &p->att[p->n_att++];
    memset(a, 0, sizeof(*a));
    a->flv = flv;
    a->mode = mode_of(pm);
    a->borrow = borrow;
    a->poss = pm == ENG__PM_NOCAND ? 0 : pm == ENG__PM_PREEMPT ? 1 : pm == ENG__PM_RECLAIM ? 2 : -1;
    a->nofit = nofit;
    if (reasons) {
        eng__strv_copy(&a->reasons, reasons);
        eng__strv_sort_unique(&a->reasons);
    }
}

void eng__asg_free(struct eng__asg *a)
{
    for (int i = 0; i < a->n_ps; i++) {
        struct eng__psa *p = &a->ps[i];
        xfree(p->ra);
        eng__strv_clear(&p->reasons);
        for (int k = 0; k < p->n_att; k++)
            eng__strv_clear(&p->att[k].reasons);
        xfree(p->att);
        api_topology_assignment_free(p->ta);
    }
    xfree(a->ps);
    xfree(a->use_fr);
    xfree(a->use_amt);
    memset(a, 0, sizeof(*a));
}

int eng__psa_mode(const struct eng__psa *p)
{
    if (!p->reasons.n)
        return ENG__FIT;
    int mode = ENG__FIT, any = 0;
    for (int k = 0; k < p->n_ra; k++) {
        if (p->ra[k].flv < 0)
            continue;
        any = 1;
        if (p->ra[k].mode < mode)
            mode = p->ra[k].mode;
    }
    return any ? mode : ENG__NOFIT;
}

int eng__asg_mode(const struct eng__asg *a)
{
    if (!a->n_ps)
        return ENG__NOFIT;
    int mode = ENG__FIT;
    for (int i = 0; i < a->n_ps; i++) {
        int m = eng__psa_mode(&a->ps[i]);
        if (m < mode)
            mode = m;
    }
    return mode;
}

bool eng__asg_pending_flavors(const struct eng__asg *a)
{
    for (int i = 0; i < a->n_ps; i++)
        for (int k = 0; k < a->ps[i].n_ra; k++)
            if (a->ps[i].ra[k].flv >= 0 && a->ps[i].ra[k].tried != -1)
                return true;
    return false;
}

char *eng__asg_message(const struct eng__asg *a, const struct eng__wl *wl)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    for (int i = 0; i < a->n_ps; i++) {
        const struct eng__psa *p = &a->ps[i];
        if (!p->reasons.n)
            continue;
        if (sb.len)
            sbuf_adds(&sb, "; ");
        sbuf_adds(&sb, "couldn't assign flavors to pod set ");
        sbuf_adds(&sb, wl->ps[i].name);
        sbuf_adds(&sb, ": ");
        if (p->reasons.n == 1) { /* sorted and unique already */
            sbuf_adds(&sb, p->reasons.v[0]);
            continue;
        }
        struct eng__strv sorted = {0};
        eng__strv_copy(&sorted, &p->reasons);
        eng__strv_sort_unique(&sorted);
        char *j = eng__strv_join(&sorted, ", ");
        sbuf_adds(&sb, j);
        xfree(j);
        eng__strv_clear(&sorted);
    }
    return eng__sbuf_take(&sb);
}

char *eng__asg_attempts_text(const struct eng *e, const struct eng__asg *a, const struct eng__wl *wl)
{
    bool any = false;
    for (int i = 0; i < a->n_ps && !any; i++)
        for (int k = 0; k < a->ps[i].n_att && !any; k++)
            any = a->ps[i].att[k].mode != ENG__FIT || a->ps[i].att[k].borrow != 0;
    if (!any)
        return NULL;
    static const char *const modes[] = {"NoFit", "Preempt", "DeferredFit", "Fit"};
    static const char *const poss[] = {"NoCandidates", "Preempt", "Reclaim"};
    struct sbuf sb, ps;
    sbuf_init(&sb, 0);
    sbuf_init(&ps, 0);
    for (int i = 0; i < a->n_ps; i++) {
        sbuf_reset(&ps);
        for (int k = 0; k < a->ps[i].n_att; k++) {
            const struct eng__attempt *t = &a->ps[i].att[k];
            if (t->mode == ENG__FIT && t->borrow == 0)
                continue;
            sbuf_addf(&ps, "%s%s(", ps.len ? ", " : "", e->flavors[t->flv].name);
            if (t->poss >= 0)
                sbuf_addf(&ps, "preemptionMode=%s", poss[t->poss]);
            else
                sbuf_adds(&ps, modes[t->mode]);
            if (t->borrow > 0)
                sbuf_addf(&ps, ";borrow=%d", t->borrow);
            if (t->reasons.n) {
                char *j = eng__strv_join(&t->reasons, ";");
                sbuf_addf(&ps, ";%s", j);
                xfree(j);
            }
            sbuf_addc(&ps, ')');
        }
        if (ps.len)
            sbuf_addf(&sb, "%s%s: %s", sb.len ? " | " : "", wl->ps[i].name, ps.buf);
    }
    sbuf_release(&ps);
    return eng__sbuf_take(&sb);
}

static int att_cmp(const void *x, const void *y, void *ctx)
{
    const struct eng *e = ctx;
    const struct eng__attempt *a = x, *b = y;
    return strcmp(e->flavors[a->flv].name, e->flavors[b->flv].name);
}

/* ---- the assigner ---- */

struct fa {
    struct eng *e;
    struct eng__cq *cq;
    struct eng__wl *wl;
    const struct eng__wl *old; /* elastic slice being replaced, or NULL */
    struct eng__asg *out;
    const struct eng__asg *pin; /* nominated flavors to stick to, or NULL */
};

static int pinned_flavor(const struct fa *c, int psi, int res)
{
    if (!c->pin || psi >= c->pin->n_ps)
        return -1;
    for (int k = 0; k < c->pin->ps[psi].n_ra; k++)
        if (c->pin->ps[psi].ra[k].res == res)
            return c->pin->ps[psi].ra[k].flv;
    return -1;
}

static void pushf_qty(struct eng__strv *s, const struct eng *e, const char *fmt, int res, int flv,
                      int64_t a, int64_t b, int64_t c)
{
    char *qa = eng__qty(e, res, a), *qb = eng__qty(e, res, b), *qc = eng__qty(e, res, c);
    eng__strv_pushf(s, fmt, e->res_names[res], e->flavors[flv].name, qa, qb, qc);
    xfree(qa);
    xfree(qb);
    xfree(qc);
}

static bool can_preempt_while_borrowing(const struct fa *c)
{
    return c->cq->borrow_within != PP_NEVER ||
           (c->e->cfg.fair_sharing && c->cq->reclaim != PP_NEVER);
}

/* Kueue fitsResourceQuota: the granular mode of one FR for `req` more on
 * top of what earlier pod sets took (`assumed`). Reasons go to rs. */
static struct gmode fits_quota(struct fa *c, int flv, int res, int64_t assumed, int64_t req,
                               struct eng__strv *rs, int *nofit)
{
    struct eng *e = c->e;
    struct eng__cq *cq = c->cq;
    int fr = eng__fr_id(e, flv, res);
    int i = eng__node_idx(&cq->node, fr);
    int64_t avail = i >= 0 ? eng__available(&cq->node, i) : 0;
    int64_t maxcap = i >= 0 ? eng__potential_available(&cq->node, i) : 0;
    int64_t val = eng__amt_add(assumed, req);
    if (avail < 0)
        avail = 0;
    *nofit = ENG__NF_WAITING;
    if (val > maxcap) {
        pushf_qty(rs, e,
                  "insufficient quota for %s in flavor %s, previously considered podsets requests "
                  "(%s) + current podset request (%s) > maximum capacity (%s)",
                  res, flv, assumed, req, maxcap);
        *nofit = ENG__NF_EXCEEDS;
        return (struct gmode){ENG__PM_NOFIT, 0};
    }
    bool may_reclaim = false;
    int borrow = eng__lowest_fitting_height(cq, fr, val, &may_reclaim);
    if (val <= avail) {
        *nofit = ENG__NF_NONE;
        return (struct gmode){ENG__PM_FIT, borrow};
    }
    char *more = eng__qty(e, res, eng__amt_sub(val, avail));
    struct sbuf sb;
    sbuf_init(&sb, 0);
    sbuf_adds(&sb, "insufficient unused quota for ");
    sbuf_adds(&sb, e->res_names[res]);
    sbuf_adds(&sb, " in flavor ");
    sbuf_adds(&sb, e->flavors[flv].name);
    sbuf_adds(&sb, ", ");
    sbuf_adds(&sb, more);
    sbuf_adds(&sb, " more needed");
    eng__strv_push(rs, eng__sbuf_take(&sb));
    xfree(more);
    const struct eng__quota *q = eng__cq_quota(cq, flv, res);
    int64_t nominal = q ? q->nominal : 0;
    if (nominal >= val || may_reclaim || can_preempt_while_borrowing(c)) {
        int b = 0;
        int pm = eng__oracle(e, cq, c->wl, fr, val, &b);
        *nofit = ENG__NF_NONE;
        return (struct gmode){pm, b};
    }
    return (struct gmode){ENG__PM_NOFIT, borrow};
}

static int next_flavor_idx(const struct eng__wl *wl, int psi, int res)
{
    if (!wl->has_last)
        return 0;
    for (int t = 0; t < wl->n_last; t++)
        if (wl->last_idx[3 * t] == psi && wl->last_idx[3 * t + 1] == res)
            return wl->last_idx[3 * t + 2] + 1;
    return 0;
}

static const struct eng__pa *old_pa(const struct eng__wl *old, const char *name)
{
    for (int p = 0; old && p < old->n_pa; p++)
        if (!strcmp(old->pa[p].name, name))
            return &old->pa[p];
    return NULL;
}

/* Elastic slices keep the replaced slice's flavor and are charged only the
 * delta. Returns false (with a reason) on a flavor mismatch. */
static bool elastic_delta(struct fa *c, int psi, int res, int flv, int64_t *val, struct eng__strv *rs)
{
    const struct eng__pa *pa = old_pa(c->old, c->wl->ps[psi].name);
    if (!c->old)
        return true;
    int of = -1;
    int64_t oamt = 0;
    for (int r = 0; pa && r < pa->n; r++)
        if (pa->res[r] == res) {
            of = pa->flv[r];
            oamt = pa->amt[r];
        }
    if (of != flv) {
        eng__strv_pushf(rs, "could not assign %s flavor since the original workload is assigned: %s",
                        c->e->flavors[flv].name, of >= 0 ? c->e->flavors[of].name : "");
        return false;
    }
    *val = eng__amt_sub(*val, oamt);
    return true;
}

/* Zero-count pod sets probe one pod per pod set against maximum capacity. */
static bool probe_fails(struct fa *c, int psi, const int *gk, int ng, int flv, struct eng__strv *rs)
{
    const struct eng__ps *ps = &c->wl->ps[psi];
    struct eng__psa *psa = &c->out->ps[psi];
    bool fails = false;
    for (int j = 0; j < ng; j++) {
        int res = psa->ra[gk[j]].res;
        int64_t one = res == c->cq->pods_res && c->cq->covers_pods ? 1 : 0;
        for (int r = 0; r < ps->n_req; r++)
            if (ps->res[r] == res)
                one = ps->per_pod[r];
        int i = eng__node_idx(&c->cq->node, eng__fr_id(c->e, flv, res));
        int64_t maxcap = i >= 0 ? eng__potential_available(&c->cq->node, i) : 0;
        if (maxcap < one) {
            char *qa = eng__qty(c->e, res, one), *qb = eng__qty(c->e, res, maxcap);
            eng__strv_pushf(rs,
                            "insufficient quota for %s in flavor %s, one pod per zero-count podset "
                            "request (%s) > maximum capacity (%s)",
                            c->e->res_names[res], c->e->flavors[flv].name, qa, qb);
            xfree(qa);
            xfree(qb);
            fails = true;
        }
    }
    return fails;
}

static void strv_append(struct eng__strv *dst, const struct eng__strv *src)
{
    for (size_t i = 0; i < src->n; i++)
        eng__strv_push(dst, xstrdup(src->v[i]));
}

/* Evaluate one eligible flavor for the group's requests (gk). */
static struct gmode try_flavor(struct fa *c, int psi, const int *gk, int ng, int flv, int *tm,
                               int *tb, struct eng__strv *status)
{
    struct eng__psa *psa = &c->out->ps[psi];
    struct gmode rep = {ENG__PM_FIT, 0};
    struct eng__strv fr = {0};
    int maxb = 0, fnofit = ENG__NF_NONE;
    for (int j = 0; j < ng; j++) {
        struct eng__ra *ra = &psa->ra[gk[j]];
        int64_t val = ra->total;
        bool same = elastic_delta(c, psi, ra->res, flv, &val, &fr);
        if (!same) {
            rep = WORST;
            fnofit = worse_nofit(fnofit, ENG__NF_NOMATCH);
        }
        int nf = ENG__NF_NONE;
        struct gmode g = fits_quota(c, flv, ra->res, eng__asg_usage(c->out, eng__fr_id(c->e, flv, ra->res)),
                                    val, &fr, &nf);
        fnofit = worse_nofit(fnofit, nf);
        if (g.borrow > maxb && g.borrow != INT_MAX)
            maxb = g.borrow;
        if (preferred(rep, g, c->cq->preference))
            rep = g;
        if (rep.pm == ENG__PM_NOFIT)
            break;
        tm[j] = mode_of(g.pm);
        tb[j] = g.borrow;
    }
    strv_append(status, &fr);
    attempt_add(psa, flv, rep.pm, maxb, &fr, fnofit);
    eng__strv_clear(&fr);
    return rep;
}

/* Kueue findFlavorForPodSets for the group rg of the pod set psi. */
static bool find_flavor(struct fa *c, int psi, int trigger_res, const struct eng__rg *rg,
                        bool probe, struct eng__strv *status)
{
    struct eng__psa *psa = &c->out->ps[psi];
    int gk[64], ng = 0;
    for (int k = 0; k < psa->n_ra && ng < 64; k++)
        for (int r = 0; r < rg->n_cov; r++)
            if (rg->res[r] == psa->ra[k].res)
                gk[ng++] = k;
    int tm[64], tb[64], bm[64], bb[64], best_flv = -1, attempted = -1;
    struct gmode best = WORST;
    for (int idx = next_flavor_idx(c->wl, psi, trigger_res); idx < rg->n_flv; idx++) {
        int flv = rg->flv[idx];
        attempted = idx;
        if (c->pin && flv != pinned_flavor(c, psi, trigger_res))
            continue;
        struct eng__strv one = {0};
        const char *nomatch = NULL;
        if (!c->e->flavors[flv].exists)
            eng__strv_pushf(&one, "flavor %s not found", c->e->flavors[flv].name);
        else if ((nomatch = eng__shape_match(c->e, c->wl->ps[psi].shape, flv)))
            eng__strv_push(&one, xstrdup(nomatch));
        else if (eng__wl_avoids(c->e, c->wl, flv))
            eng__strv_pushf(&one, "flavor %s is avoided after a capacity failure", c->e->flavors[flv].name);
        int nf = ENG__NF_NOMATCH;
        if (!one.n && probe && probe_fails(c, psi, gk, ng, flv, &one))
            nf = ENG__NF_EXCEEDS;
        if (one.n) {
            strv_append(status, &one);
            attempt_add(psa, flv, ENG__PM_NOFIT, 0, &one, nf);
            eng__strv_clear(&one);
            continue;
        }
        struct gmode rep = try_flavor(c, psi, gk, ng, flv, tm, tb, status);
        bool stop = !try_next(rep, c->cq);
        if (stop || preferred(rep, best, c->cq->preference)) {
            best = rep;
            best_flv = flv;
            memcpy(bm, tm, sizeof(int) * (size_t)ng);
            memcpy(bb, tb, sizeof(int) * (size_t)ng);
        }
        if (stop)
            break;
    }
    if (best_flv < 0)
        return false;
    for (int j = 0; j < ng; j++) {
        struct eng__ra *ra = &psa->ra[gk[j]];
        ra->flv = best_flv;
        ra->fr = eng__fr_id(c->e, best_flv, ra->res);
        ra->mode = bm[j];
        ra->borrow = bb[j];
        ra->tried = attempted == rg->n_flv - 1 ? -1 : attempted;
    }
    if (best.pm == ENG__PM_FIT)
        eng__strv_clear(status);
    return true;
}

static int ra_cmp(const void *x, const void *y, void *ctx)
{
    const struct eng *e = ctx;
    const struct eng__ra *a = x, *b = y;
    return strcmp(e->res_names[a->res], e->res_names[b->res]);
}

static void build_requests(struct fa *c, int psi, int32_t count)
{
    const struct eng__ps *ps = &c->wl->ps[psi];
    struct eng__psa *psa = &c->out->ps[psi];
    psa->count = count;
    psa->ra = xcalloc((size_t)ps->n_req + 2, sizeof(*psa->ra));
    for (int r = 0; r < ps->n_req; r++) {
        struct eng__ra *ra = &psa->ra[psa->n_ra++];
        ra->res = ps->res[r];
        ra->total = eng__amt_mul(ps->per_pod[r], count);
    }
    if (c->cq->covers_pods) {
        struct eng__ra *ra = &psa->ra[psa->n_ra++];
        ra->res = c->cq->pods_res;
        ra->total = count;
    }
    for (int k = 0; k < psa->n_ra; k++) {
        psa->ra[k].flv = psa->ra[k].fr = -1;
        psa->ra[k].tried = -1;
    }
    if (psa->n_ra > 1)
        qsort_r(psa->ra, (size_t)psa->n_ra, sizeof(*psa->ra), ra_cmp, c->e);
}

static void psa_fail(struct eng__psa *psa, struct eng__strv *reasons, int nofit)
{
    eng__strv_clear(&psa->reasons);
    psa->reasons = *reasons;
    memset(reasons, 0, sizeof(*reasons));
    psa->nofit = nofit;
    for (int k = 0; k < psa->n_ra; k++)
        psa->ra[k].flv = psa->ra[k].fr = -1;
}

/* Assign every requested resource of pod set psi. False = no flavor. */
static bool assign_podset(struct fa *c, int psi)
{
    struct eng__psa *psa = &c->out->ps[psi];
    for (int k = 0; k < psa->n_ra; k++) {
        struct eng__ra *ra = &psa->ra[k];
        if (ra->flv >= 0)
            continue;
        const struct eng__rg *rg = eng__cq_rg(c->cq, ra->res);
        if (!rg) {
            if (ra->total == 0 || c->e->cfg.ignore_undeclared_resources)
                continue;
            struct eng__strv st = {0};
            eng__strv_pushf(&st, "resource %s unavailable in ClusterQueue", c->e->res_names[ra->res]);
            psa_fail(psa, &st, ENG__NF_NOMATCH);
            return false;
        }
        struct eng__strv st = {0};
        bool ok = find_flavor(c, psi, ra->res, rg, psa->count == 0, &st);
        if (!ok && psa->count == 0) {
            eng__strv_clear(&st);
            ok = find_flavor(c, psi, ra->res, rg, false, &st);
        }
        if (!ok) {
            psa_fail(psa, &st, ENG__NF_NONE);
            return false;
        }
        strv_append(&psa->reasons, &st);
        eng__strv_clear(&st);
    }
    return true;
}

static void account_podset(struct fa *c, int psi)
{
    struct eng__psa *psa = &c->out->ps[psi];
    for (int k = 0; k < psa->n_ra; k++) {
        struct eng__ra *ra = &psa->ra[k];
        if (ra->flv < 0)
            continue;
        if (ra->borrow > c->out->borrowing)
            c->out->borrowing = ra->borrow;
        int64_t amt = ra->total;
        elastic_delta(c, psi, ra->res, ra->flv, &amt, &(struct eng__strv){0});
        asg_add_usage(c->out, ra->fr, amt);
    }
    if (psa->n_att > 1)
        qsort_r(psa->att, (size_t)psa->n_att, sizeof(*psa->att), att_cmp, c->e);
}

/* Kueue resolveNoFitReason (UnadmittedWorkloadsObservability). */
static void resolve_nofit(struct fa *c)
{
    if (eng__asg_mode(c->out) != ENG__NOFIT)
        return;
    int overall = ENG__NF_NONE;
    for (int i = 0; i < c->out->n_ps; i++) {
        const struct eng__psa *p = &c->out->ps[i];
        if (eng__psa_mode(p) != ENG__NOFIT)
            continue;
        if (!p->n_att) {
            overall = worse_nofit(overall, ENG__NF_NOMATCH);
            continue;
        }
        int reason = p->nofit;
        for (int g = 0; g < c->cq->n_rgs; g++) {
            int gmin = -1;
            for (int k = 0; k < p->n_att; k++) {
                if (p->att[k].mode != ENG__NOFIT)
                    continue;
                for (int f = 0; f < c->cq->rgs[g].n_flv; f++)
                    if (c->cq->rgs[g].flv[f] == p->att[k].flv && (gmin < 0 || p->att[k].nofit < gmin))
                        gmin = p->att[k].nofit;
            }
            if (gmin >= 0)
                reason = worse_nofit(reason, gmin);
        }
        overall = worse_nofit(overall, reason);
    }
    c->out->nofit = overall;
}

void eng__assign(struct eng *e, struct eng__cq *cq, struct eng__wl *wl, const int32_t *counts,
                 const struct eng__wl *old, struct eng__asg *out)
{
    eng__assign_pinned(e, cq, wl, counts, old, NULL, out);
}

void eng__assign_pinned(struct eng *e, struct eng__cq *cq, struct eng__wl *wl, const int32_t *counts,
                        const struct eng__wl *old, const struct eng__asg *pin, struct eng__asg *out)
{
    memset(out, 0, sizeof(*out));
    struct fa c = {e, cq, wl, old, out, pin};
    out->ps = xcalloc((size_t)wl->n_ps + 1, sizeof(*out->ps));
    out->cycle = e->cycle;
    out->gen = cq->alloc_gen;
    for (int i = 0; i < wl->n_ps; i++) {
        int32_t n = wl->ps[i].count - wl->ps[i].reclaim;
        build_requests(&c, i, counts ? counts[i] : (n > 0 ? n : 0));
        out->n_ps = i + 1;
        bool ok = assign_podset(&c, i);
        account_podset(&c, i);
        if (!ok)
            break;
    }
    if (e->n_topos && eng__asg_mode(out) == ENG__FIT)
        eng__tas_assign(e, cq, wl, out);
    resolve_nofit(&c);
}
