/*
 * prom: the Prometheus text exposition format (prom.h). A family keeps its
 * series in an array sorted by label values (binary search; families have
 * at most a few thousand series: one per queue, flavor and resource), so
 * writing needs no sort and the output order is the label values' byte
 * order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/prom.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

const double prom_kueue_wait_bounds[14] = {1,   2.5, 5,    10,   20,   40,   80,
                                           160, 320, 640, 1280, 2560, 5120, 10240};
const double prom_default_bounds[11] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                        0.5,   1,    2.5,   5,    10};

struct prom_series {
    char **values;    /* n_labels strings */
    double value;     /* counter/gauge value; histogram: sum */
    unsigned long long count;    /* histogram: observations */
    unsigned long long *buckets; /* histogram: per bound, not cumulative */
};

struct prom_vec {
    char *name, *help;
    enum prom_type type;
    char *labels[PROM_MAX_LABELS];
    size_t n_labels;
    double *bounds;
    size_t n_bounds;
    struct prom_series *s;
    size_t n, cap;
};

struct prom_vec *prom_vec_new(const char *name, const char *help, enum prom_type type,
                              const char *const *labels, size_t n_labels, const double *bounds,
                              size_t n_bounds)
{
    struct prom_vec *v = xcalloc(1, sizeof(*v));
    v->name = xstrdup(name);
    v->help = xstrdup(help);
    v->type = type;
    v->n_labels = n_labels < PROM_MAX_LABELS ? n_labels : PROM_MAX_LABELS;
    for (size_t i = 0; i < v->n_labels; i++)
        v->labels[i] = xstrdup(labels[i]);
    if (type == PROM_HISTOGRAM && n_bounds) {
        v->bounds = xmalloc(n_bounds * sizeof(*bounds));
        memcpy(v->bounds, bounds, n_bounds * sizeof(*bounds));
        v->n_bounds = n_bounds;
    }
    return v;
}

void prom_vec_free(struct prom_vec *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        for (size_t j = 0; j < v->n_labels; j++)
            xfree(v->s[i].values[j]);
        xfree(v->s[i].values);
        xfree(v->s[i].buckets);
    }
    xfree(v->s);
    for (size_t i = 0; i < v->n_labels; i++)
        xfree(v->labels[i]);
    xfree(v->bounds);
    xfree(v->name);
    xfree(v->help);
    xfree(v);
}

static int cmp_values(const struct prom_vec *v, char *const *a, const char *const *b)
{
    for (size_t i = 0; i < v->n_labels; i++) {
        int c = strcmp(a[i], b[i] ? b[i] : "");
        if (c)
            return c;
    }
    return 0;
}

/* Index of the series with these values, or -(insertion point) - 1. */
static long find(const struct prom_vec *v, const char *const *values)
{
    size_t lo = 0, hi = v->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_values(v, v->s[mid].values, values);
        if (!c)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -(long)lo - 1;
}

static struct prom_series *get_or_add(struct prom_vec *v, const char *const *values)
{
    long i = find(v, values);
    if (i >= 0)
        return &v->s[i];
    size_t at = (size_t)(-i - 1);
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 8;
        v->s = xrealloc(v->s, v->cap * sizeof(*v->s));
    }
    memmove(&v->s[at + 1], &v->s[at], (v->n - at) * sizeof(*v->s));
    v->n++;
    struct prom_series *s = &v->s[at];
    memset(s, 0, sizeof(*s));
    s->values = xcalloc(v->n_labels ? v->n_labels : 1, sizeof(char *));
    for (size_t j = 0; j < v->n_labels; j++)
        s->values[j] = xstrdup(values[j] ? values[j] : "");
    if (v->type == PROM_HISTOGRAM)
        s->buckets = xcalloc(v->n_bounds + 1, sizeof(*s->buckets));
    return s;
}

void prom_vec_add(struct prom_vec *v, const char *const *values, double delta)
{
    get_or_add(v, values)->value += delta;
}

void prom_vec_set(struct prom_vec *v, const char *const *values, double x)
{
    get_or_add(v, values)->value = x;
}

void prom_vec_observe(struct prom_vec *v, const char *const *values, double x)
{
    struct prom_series *s = get_or_add(v, values);
    s->value += x;
    s->count++;
    size_t b = 0;
    while (b < v->n_bounds && x > v->bounds[b])
        b++;
    if (s->buckets)
        s->buckets[b]++;
}

double prom_vec_get(const struct prom_vec *v, const char *const *values)
{
    long i = find(v, values);
    if (i < 0)
        return 0;
    return v->type == PROM_HISTOGRAM ? (double)v->s[i].count : v->s[i].value;
}

size_t prom_vec_size(const struct prom_vec *v)
{
    return v->n;
}

void prom_escape_label_value(struct sbuf *out, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '\\')
            sbuf_adds(out, "\\\\");
        else if (*s == '"')
            sbuf_adds(out, "\\\"");
        else if (*s == '\n')
            sbuf_adds(out, "\\n");
        else
            sbuf_addc(out, *s);
    }
}

static void escape_help(struct sbuf *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\')
            sbuf_adds(out, "\\\\");
        else if (*s == '\n')
            sbuf_adds(out, "\\n");
        else
            sbuf_addc(out, *s);
    }
}

void prom_format_value(struct sbuf *out, double x)
{
    if (isnan(x)) {
        sbuf_adds(out, "NaN");
        return;
    }
    if (isinf(x)) {
        sbuf_adds(out, x > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (x == floor(x) && fabs(x) < 1e17) {
        sbuf_addf(out, "%.0f", x);
        return;
    }
    char buf[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof(buf), "%.*g", prec, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    sbuf_adds(out, buf);
}

/* name{label="value",...[,extra_name="extra_value"]} */
static void series_name(const struct prom_vec *v, const struct prom_series *s, const char *suffix,
                        const char *extra_name, const char *extra_value, struct sbuf *out)
{
    sbuf_adds(out, v->name);
    sbuf_adds(out, suffix);
    if (!v->n_labels && !extra_name)
        return;
    sbuf_addc(out, '{');
    for (size_t i = 0; i < v->n_labels; i++) {
        sbuf_addf(out, "%s%s=\"", i ? "," : "", v->labels[i]);
        prom_escape_label_value(out, s->values[i]);
        sbuf_addc(out, '"');
    }
    if (extra_name) {
        sbuf_addf(out, "%s%s=\"%s\"", v->n_labels ? "," : "", extra_name, extra_value);
    }
    sbuf_addc(out, '}');
}

static void write_histogram(const struct prom_vec *v, const struct prom_series *s,
                            struct sbuf *out)
{
    unsigned long long cum = 0;
    struct sbuf le;
    sbuf_init(&le, 0);
    for (size_t b = 0; b <= v->n_bounds; b++) {
        cum += s->buckets[b];
        sbuf_reset(&le);
        prom_format_value(&le, b < v->n_bounds ? v->bounds[b] : INFINITY);
        series_name(v, s, "_bucket", "le", le.buf, out);
        sbuf_addf(out, " %llu\n", cum);
    }
    sbuf_release(&le);
    series_name(v, s, "_sum", NULL, NULL, out);
    sbuf_addc(out, ' ');
    prom_format_value(out, s->value);
    sbuf_addc(out, '\n');
    series_name(v, s, "_count", NULL, NULL, out);
    sbuf_addf(out, " %llu\n", s->count);
}

void prom_vec_write(const struct prom_vec *v, struct sbuf *out)
{
    static const char *const types[] = {"counter", "gauge", "histogram"};
    sbuf_addf(out, "# HELP %s ", v->name);
    escape_help(out, v->help);
    sbuf_addf(out, "\n# TYPE %s %s\n", v->name, types[v->type]);
    for (size_t i = 0; i < v->n; i++) {
        const struct prom_series *s = &v->s[i];
        if (v->type == PROM_HISTOGRAM) {
            write_histogram(v, s, out);
            continue;
        }
        series_name(v, s, "", NULL, NULL, out);
        sbuf_addc(out, ' ');
        prom_format_value(out, s->value);
        sbuf_addc(out, '\n');
    }
}
