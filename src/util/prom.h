/*
 * prom: metric families written in the Prometheus text exposition format,
 * version 0.0.4 (the format every Prometheus server and `promtool check
 * metrics` read; served with content type PROM_CONTENT_TYPE).
 *
 * A family (struct prom_vec) has a name, a help text, a type (counter,
 * gauge, histogram) and label names; its series are keyed by their label
 * values. Histograms have fixed upper bounds and write, per series, one
 * cumulative `_bucket` line per bound plus `le="+Inf"`, then `_sum` and
 * `_count`, as the format requires. Output is deterministic: series in
 * byte order of their label values. Label values and help text are
 * escaped as the format says (label values: backslash, double quote and
 * newline; help: backslash and newline). Values are written in the
 * shortest %g form that reads back to the same double (integers up to
 * 10^17 without an exponent), with +Inf, -Inf and NaN spelled as the
 * format spells them.
 *
 * Debian packages no C client library for Prometheus (only prometheus-cpp),
 * hence this small writer. Not thread-safe: one owner at a time.
 */
#ifndef CUEUE_UTIL_PROM_H
#define CUEUE_UTIL_PROM_H

#include <stddef.h>

struct sbuf;

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define PROM_MAX_LABELS 6

enum prom_type { PROM_COUNTER, PROM_GAUGE, PROM_HISTOGRAM };

struct prom_vec;

/* A new empty family. name, help and every label name are copied;
 * n_labels <= PROM_MAX_LABELS. For PROM_HISTOGRAM, bounds are the n_bounds
 * bucket upper bounds in increasing order (copied; +Inf is implied, do not
 * pass it); for other types pass NULL, 0. Free with prom_vec_free. */
struct prom_vec *prom_vec_new(const char *name, const char *help, enum prom_type type,
                              const char *const *labels, size_t n_labels, const double *bounds,
                              size_t n_bounds);
void prom_vec_free(struct prom_vec *v);

/* Counter or gauge: add delta to the series with these label values (as
 * many as the family's label names; copied), created at 0 when new. */
void prom_vec_add(struct prom_vec *v, const char *const *values, double delta);
/* Gauge: set the series to x (created when new). */
void prom_vec_set(struct prom_vec *v, const char *const *values, double x);
/* Histogram: count one observation x in the series (created when new). */
void prom_vec_observe(struct prom_vec *v, const char *const *values, double x);
/* The value of a counter or gauge series (histogram: its count); 0 when
 * the series does not exist. */
double prom_vec_get(const struct prom_vec *v, const char *const *values);
/* Number of series. */
size_t prom_vec_size(const struct prom_vec *v);

/* Append the family: "# HELP", "# TYPE", then its series, sorted. A
 * family without series writes only the two comment lines. */
void prom_vec_write(const struct prom_vec *v, struct sbuf *out);

/* Kueue's wait-time histogram bounds (seconds): 1, then 2.5 doubling 13
 * times (2.5, 5, ..., 10240): 14 bounds. */
extern const double prom_kueue_wait_bounds[14];
/* client_golang's default bounds (prometheus.DefBuckets, seconds): 11. */
extern const double prom_default_bounds[11];

/* Append s escaped as a label value (without the quotes). */
void prom_escape_label_value(struct sbuf *out, const char *s);
/* Append x as the format writes sample values. */
void prom_format_value(struct sbuf *out, double x);

#endif
