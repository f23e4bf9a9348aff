/*
 * bench_stats: what the benchmark programs share (header only, bench/
 * only): sorting samples, the nearest-rank percentile, count arguments.
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

/* A count argument: a whole decimal number, or -1 when s is not one. */
static inline long bench_count_arg(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    return *s && !*end ? v : -1;
}

#endif
