/*
 * observe_summary: the summary object built from what the recorder saw:
 * per workload the wait from creation to its first admission, per class
 * (the scenario's class label) mean and nearest-rank percentiles, the
 * usage figures (usage.c), makespan, counts. Field names are documented in
 * docs/sim.md; times are seconds rounded to the millisecond.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/observe-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define NO_CLASS "(none)"

static json_t *secs(int64_t ms) { return json_real((double)ms / 1000.0); }

static json_t *secs_or_null(int64_t ms, int64_t base)
{
    return ms < 0 ? json_null() : secs(ms - base);
}

static double round3(double v) { return round(v * 1000.0) / 1000.0; }

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Stats of waits (seconds) into o: mean, p50, p90, p99, max. */
static void wait_stats(json_t *o, double *waits, size_t n)
{
    qsort(waits, n, sizeof(*waits), dbl_cmp);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += waits[i];
    if (!n) {
        static const char *const keys[] = {"meanWaitSeconds", "p50WaitSeconds",
                                           "p90WaitSeconds", "p99WaitSeconds",
                                           "maxWaitSeconds"};
        for (size_t i = 0; i < 5; i++)
            json_object_set_new(o, keys[i], json_null());
        return;
    }
    json_object_set_new(o, "meanWaitSeconds", json_real(round3(sum / (double)n)));
    json_object_set_new(o, "p50WaitSeconds", json_real(round3(sim_percentile(waits, n, 50))));
    json_object_set_new(o, "p90WaitSeconds", json_real(round3(sim_percentile(waits, n, 90))));
    json_object_set_new(o, "p99WaitSeconds", json_real(round3(sim_percentile(waits, n, 99))));
    json_object_set_new(o, "maxWaitSeconds", json_real(round3(waits[n - 1])));
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static json_t *classes_json(struct sim_observer *o)
{
    /* distinct class names, sorted */
    const char **names = xcalloc(o->n_all + 1, sizeof(*names));
    size_t n_names = 0;
    for (size_t i = 0; i < o->n_all; i++)
        names[n_names++] = o->all[i]->class_name[0] ? o->all[i]->class_name : NO_CLASS;
    qsort(names, n_names, sizeof(*names), str_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n_names; i++)
        if (!u || strcmp(names[u - 1], names[i]))
            names[u++] = names[i];
    json_t *out = json_object();
    double *waits = xcalloc(o->n_all + 1, sizeof(*waits));
    for (size_t k = 0; k < u; k++) {
        size_t count = 0, n = 0;
        for (size_t i = 0; i < o->n_all; i++) {
            struct wl_state *w = o->all[i];
            const char *c = w->class_name[0] ? w->class_name : NO_CLASS;
            if (strcmp(c, names[k]))
                continue;
            count++;
            if (w->admitted_ms >= 0)
                waits[n++] = (double)(w->admitted_ms - w->created_ms) / 1000.0;
        }
        json_t *c = json_object();
        json_object_set_new(c, "count", json_integer((json_int_t)count));
        json_object_set_new(c, "admitted", json_integer((json_int_t)n));
        wait_stats(c, waits, n);
        json_object_set_new(out, names[k], c);
    }
    xfree(waits);
    xfree(names);
    return out;
}

/* The workloads part of the summary; *per_out receives perWorkload, or
 * NULL when per_out is NULL (not built). */
static json_t *workloads_json(struct sim *s, json_t **per_out)
{
    struct sim_observer *o = s->obs;
    size_t admitted = 0, finished = 0, deleted = 0, evictions = 0, n = 0;
    double *waits = xcalloc(o->n_all + 1, sizeof(*waits));
    json_t *per = per_out ? json_array() : NULL;
    int64_t t0 = s->sc->start_ms;
    for (size_t i = 0; i < o->n_all; i++) {
        struct wl_state *w = o->all[i];
        admitted += w->admitted_ms >= 0;
        finished += w->finished_ms >= 0;
        deleted += w->deleted && w->finished_ms < 0;
        evictions += (size_t)w->evictions;
        if (w->admitted_ms >= 0)
            waits[n++] = (double)(w->admitted_ms - w->created_ms) / 1000.0;
        if (!per)
            continue;
        /* one entry per Workload: keys set without jansson's checks */
        json_t *e = json_object();
        JX_SET_LIT(e, "workload", jx_string(w->key));
        JX_SET_LIT(e, "class", jx_string(w->class_name));
        JX_SET_LIT(e, "createdSeconds", secs(w->created_ms - t0));
        JX_SET_LIT(e, "admittedSeconds", secs_or_null(w->admitted_ms, t0));
        JX_SET_LIT(e, "waitSeconds", secs_or_null(w->admitted_ms, w->created_ms));
        JX_SET_LIT(e, "finishedSeconds", secs_or_null(w->finished_ms, t0));
        JX_SET_LIT(e, "evictions", json_integer(w->evictions));
        json_array_append_new(per, e);
    }
    json_t *wl = json_object();
    json_object_set_new(wl, "total", json_integer((json_int_t)o->n_all));
    json_object_set_new(wl, "admitted", json_integer((json_int_t)admitted));
    json_object_set_new(wl, "finished", json_integer((json_int_t)finished));
    json_object_set_new(wl, "unfinished", json_integer((json_int_t)sim_observer_unfinished(s)));
    json_object_set_new(wl, "deleted", json_integer((json_int_t)deleted));
    json_object_set_new(wl, "evictions", json_integer((json_int_t)evictions));
    wait_stats(wl, waits, n);
    xfree(waits);
    if (per_out)
        *per_out = per;
    return wl;
}

static json_t *summary(struct sim *s, bool per_workload)
{
    struct sim_observer *o = s->obs;
    int64_t t0 = s->sc->start_ms;
    json_t *sum = json_object();
    json_object_set_new(sum, "scenario", json_string(s->sc->name));
    json_object_set_new(sum, "source", json_string(s->sc->source));
    json_object_set_new(sum, "stoppedBy", json_string(s->stopped_by ? s->stopped_by : ""));
    json_object_set_new(sum, "simulatedSeconds", secs(s->end_ms - t0));
    json_object_set_new(sum, "wallSeconds", secs(s->wall_ms));
    json_object_set_new(sum, "makespanSeconds", secs_or_null(o->last_finish_ms, t0));
    json_t *per = NULL;
    json_object_set_new(sum, "workloads", workloads_json(s, per_workload ? &per : NULL));
    json_object_set_new(sum, "classes", classes_json(o));
    json_t *usage = sim_usage_summary(o->usage, s->end_ms);
    json_object_update(sum, usage);
    json_decref(usage);
    json_object_set(sum, "events", s->event_counts);
    json_object_set_new(sum, "unschedulablePods",
                        o->unplaced ? json_incref(o->unplaced) : json_array());
    json_object_set_new(sum, "warnings", json_integer((json_int_t)s->n_warnings));
    json_object_set_new(sum, "wakeups", json_integer((json_int_t)s->n_wakeups));
    json_object_set_new(sum, "steps", json_integer((json_int_t)s->n_steps));
    if (per)
        json_object_set_new(sum, "perWorkload", per);
    return sum;
}

json_t *sim_observer_summary(struct sim *s) { return summary(s, true); }

json_t *sim_observer_summary_for_text(struct sim *s)
{
    return summary(s, s->obs->n_all <= SIM_TEXT_MAX_WORKLOADS);
}
