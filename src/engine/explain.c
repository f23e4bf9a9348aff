/*
 * explain: why a pending workload is pending and when it may be admitted.
 */
#include <string.h>
#include <utlist.h>

#include "engine/engine-int.h"
#include "util/err.h"
#include "util/xalloc.h"

/* 0-based position among the ClusterQueue's pending workloads in queue order. */
static int32_t position(const struct eng__wl *wl)
{
    const struct eng__cq *cq = wl->qcq;
    if (!cq)
        return -1;
    int32_t pos = 0;
    for (size_t i = 0; i < cq->n_heap; i++)
        if (cq->heap[i] != wl && eng__wl_cmp_queue(cq, cq->heap[i], wl) < 0)
            pos++;
    for (const struct eng__wl *w = cq->inadm; w; w = w->next)
        if (w != wl && eng__wl_cmp_queue(cq, w, wl) < 0)
            pos++;
    return pos;
}

int eng_explain(struct eng *e, const char *ns, const char *name, int64_t now_ms,
                struct eng_explanation *out)
{
    memset(out, 0, sizeof(*out));
    struct eng__wl *wl = eng__wl_find(e, ns, name);
    if (!wl || wl->finished)
        return CU_ENOTFOUND;
    (void)now_ms;
    out->position = wl->reserved ? -1 : position(wl);
    out->reason = xstrdup(wl->last_reason);
    out->message = xstrdup(wl->last_msg);
    return 0;
}

void eng_explanation_release(struct eng_explanation *x)
{
    if (!x)
        return;
    xfree(x->reason);
    xfree(x->message);
    for (size_t i = 0; i < x->n_blockers; i++) {
        xfree(x->blockers[i].flavor);
        xfree(x->blockers[i].resource);
        for (size_t h = 0; h < x->blockers[i].n_holders; h++)
            eng_wl_ref_release(&x->blockers[i].holders[h]);
        xfree(x->blockers[i].holders);
    }
    xfree(x->blockers);
    memset(x, 0, sizeof(*x));
}
