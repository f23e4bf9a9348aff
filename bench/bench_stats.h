/*
 * bench_stats: the order statistics the benchmark programs print (header
 * only, bench/ only): sorting samples and the nearest-rank percentile.
 */
#ifndef CUEUE_BENCH_STATS_H
#define CUEUE_BENCH_STATS_H

#include <math.h>
#include <stdlib.h>

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sort n samples ascending, in place. */
static inline void bench_sort(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
}

/* Nearest-rank percentile p (0..100) of n sorted samples (n >= 1). */
static inline double bench_pct(const double *v, int n, double p)
{
    int rank = (int)ceil(p / 100.0 * n);
    return v[rank < 1 ? 0 : rank - 1];
}

#endif
