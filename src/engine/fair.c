/*
 * fair: fair sharing (shared/spec/kueue.md §2.8). Placeholder until the
 * DRS tournament lands: classical ordering and classical targets.
 */
#include <stdlib.h>

#include "engine/engine-int.h"

void eng__fair_order(struct eng *e, struct eng__entry *v, size_t n)
{
    (void)e;
    (void)v;
    (void)n;
}

void eng__fair_targets(struct eng *e, struct eng__cq *cq, struct eng__wl *wl, const int *frs,
                       int n_frs, const int *use_fr, const int64_t *use_amt, int n_use,
                       struct eng__targets *out)
{
    (void)e;
    (void)cq;
    (void)wl;
    (void)frs;
    (void)n_frs;
    (void)use_fr;
    (void)use_amt;
    (void)n_use;
    (void)out;
}

int64_t eng__weighted_share(struct eng *e, struct eng__cq *cq)
{
    (void)e;
    (void)cq;
    return 0;
}
