/*
 * summary: statistics helpers and the text form of the summary object
 * (observe_summary.c builds it; -o json prints it as is). The text form
 * lists every class and usage figure, and each workload only when there
 * are few of them (the JSON form always has them all).
 */
#include <math.h>
#include <string.h>

#include "sim/sim-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define TEXT_MAX_QUEUES 50

double sim_percentile(const double *sorted, size_t n, double p)
{
    if (!n)
        return 0;
    double rank = ceil(p / 100.0 * (double)n);
    size_t idx = rank < 1 ? 0 : (size_t)rank - 1;
    if (idx >= n)
        idx = n - 1;
    return sorted[idx];
}

/* A number (or "-" for null) right-aligned in width. */
static void num(struct sbuf *sb, const json_t *v, int width)
{
    if (json_is_integer(v))
        sbuf_addf(sb, " %*lld", width, (long long)json_integer_value(v));
    else if (json_is_number(v))
        sbuf_addf(sb, " %*.3f", width, json_number_value(v));
    else
        sbuf_addf(sb, " %*s", width, "-");
}

static void header(struct sbuf *sb, const json_t *sum)
{
    const char *name = JX_STR(sum, "scenario");
    sbuf_addf(sb, "scenario: %s%s%s%s\n", name && name[0] ? name : "(unnamed)",
              " (", jx_or_empty(JX_STR(sum, "source")), ")");
    sbuf_adds(sb, "simulated seconds:");
    num(sb, json_object_get(sum, "simulatedSeconds"), 0);
    sbuf_adds(sb, "   wall seconds:");
    num(sb, json_object_get(sum, "wallSeconds"), 0);
    sbuf_adds(sb, "   makespan seconds:");
    num(sb, json_object_get(sum, "makespanSeconds"), 0);
    sbuf_addf(sb, "   stopped by: %s\n", jx_or_empty(JX_STR(sum, "stoppedBy")));
    const json_t *w = json_object_get(sum, "workloads");
    sbuf_addf(sb, "workloads: %lld total, %lld admitted, %lld finished, %lld unfinished, "
                  "%lld deleted, %lld evictions\n",
              (long long)JX_INT(w, 0, "total"), (long long)JX_INT(w, 0, "admitted"),
              (long long)JX_INT(w, 0, "finished"), (long long)JX_INT(w, 0, "unfinished"),
              (long long)JX_INT(w, 0, "deleted"), (long long)JX_INT(w, 0, "evictions"));
}

/* Pods none of whose group ever got a node (right after the header: the
 * usual reason a run never finishes). */
static void unschedulable(struct sbuf *sb, const json_t *sum)
{
    const json_t *u = json_object_get(sum, "unschedulablePods");
    if (!json_array_size(u))
        return;
    sbuf_adds(sb, "\npods that never found a node\n");
    size_t i;
    json_t *e;
    json_array_foreach(u, i, e) {
        sbuf_addf(sb, "  %s (%lld pods): %s\n", jx_or_empty(JX_STR(e, "owner")),
                  (long long)JX_INT(e, 0, "pods"), jx_or_empty(JX_STR(e, "reason")));
    }
}

static void classes(struct sbuf *sb, const json_t *sum)
{
    static const char *const stats[] = {"meanWaitSeconds", "p50WaitSeconds", "p90WaitSeconds",
                                        "p99WaitSeconds", "maxWaitSeconds"};
    sbuf_addf(sb, "\nwait until admission (seconds)\n  %-20s %8s %8s %10s %10s %10s %10s %10s\n",
              "CLASS", "COUNT", "ADMITTED", "MEAN", "P50", "P90", "P99", "MAX");
    const char *k;
    json_t *c;
    json_object_foreach(json_object_get(sum, "classes"), k, c) {
        sbuf_addf(sb, "  %-20s", k);
        num(sb, json_object_get(c, "count"), 8);
        num(sb, json_object_get(c, "admitted"), 8);
        for (size_t i = 0; i < 5; i++)
            num(sb, json_object_get(c, stats[i]), 10);
        sbuf_addc(sb, '\n');
    }
    const json_t *w = json_object_get(sum, "workloads");
    sbuf_addf(sb, "  %-20s", "(all)");
    num(sb, json_object_get(w, "total"), 8);
    num(sb, json_object_get(w, "admitted"), 8);
    for (size_t i = 0; i < 5; i++)
        num(sb, json_object_get(w, stats[i]), 10);
    sbuf_addc(sb, '\n');
}

static void usage(struct sbuf *sb, const json_t *sum)
{
    const char *k;
    json_t *c;
    sbuf_addf(sb, "\nClusterQueue usage (%% of nominal over each queue's active window)\n"
                  "  %-20s %7s %10s %10s %10s\n",
              "CLASS", "QUEUES", "USAGE%", "MIN CQ%", "MEAN CQ%");
    json_object_foreach(json_object_get(sum, "clusterQueueClasses"), k, c) {
        sbuf_addf(sb, "  %-20s", k[0] ? k : "(none)");
        num(sb, json_object_get(c, "clusterQueues"), 7);
        num(sb, json_object_get(c, "usagePercent"), 10);
        num(sb, json_object_get(c, "minClusterQueuePercent"), 10);
        num(sb, json_object_get(c, "meanClusterQueuePercent"), 10);
        sbuf_addc(sb, '\n');
    }
    const json_t *cqs = json_object_get(sum, "clusterQueues");
    if (json_object_size(cqs) <= TEXT_MAX_QUEUES) {
        sbuf_addf(sb, "  %-30s %-12s %-16s %10s %10s %10s %10s %10s\n", "CLUSTERQUEUE",
                  "FLAVOR", "RESOURCE", "NOMINAL", "MIN USED", "MEAN USED", "PEAK", "MEAN%");
        json_object_foreach((json_t *)cqs, k, c) {
            size_t i;
            json_t *r;
            json_array_foreach(json_object_get(c, "resources"), i, r) {
                sbuf_addf(sb, "  %-30s %-12s %-16s", k, jx_or_empty(JX_STR(r, "flavor")),
                          jx_or_empty(JX_STR(r, "resource")));
                num(sb, json_object_get(r, "nominal"), 10);
                num(sb, json_object_get(r, "minUsed"), 10);
                num(sb, json_object_get(r, "meanUsed"), 10);
                num(sb, json_object_get(r, "peakUsed"), 10);
                num(sb, json_object_get(r, "meanPercent"), 10);
                sbuf_addc(sb, '\n');
            }
        }
    }
    sbuf_addf(sb, "\nflavor usage\n  %-20s %-16s %10s %10s %10s %10s %10s\n", "FLAVOR",
              "RESOURCE", "NOMINAL", "MIN USED", "MEAN USED", "PEAK", "MEAN%");
    json_object_foreach(json_object_get(sum, "flavors"), k, c) {
        const char *res;
        json_t *r;
        json_object_foreach(c, res, r) {
            sbuf_addf(sb, "  %-20s %-16s", k, res);
            num(sb, json_object_get(r, "nominal"), 10);
            num(sb, json_object_get(r, "minUsed"), 10);
            num(sb, json_object_get(r, "meanUsed"), 10);
            num(sb, json_object_get(r, "peakUsed"), 10);
            num(sb, json_object_get(r, "meanPercent"), 10);
            sbuf_addc(sb, '\n');
        }
    }
}

static void per_workload(struct sbuf *sb, const json_t *sum)
{
    const json_t *per = json_object_get(sum, "perWorkload");
    /* without perWorkload: too many to list (sim_observer_summary_for_text) */
    size_t n = per ? json_array_size(per) : (size_t)JX_INT(sum, 0, "workloads", "total");
    if (n > SIM_TEXT_MAX_WORKLOADS) {
        sbuf_addf(sb, "\n(%zu workloads: -o json lists each one)\n", n);
        return;
    }
    sbuf_addf(sb, "\nworkloads (seconds)\n  %-40s %-12s %10s %10s %10s %10s %9s\n", "WORKLOAD",
              "CLASS", "CREATED", "ADMITTED", "WAIT", "FINISHED", "EVICTIONS");
    size_t i;
    json_t *w;
    json_array_foreach(per, i, w) {
        const char *cls = JX_STR(w, "class");
        sbuf_addf(sb, "  %-40s %-12s", jx_or_empty(JX_STR(w, "workload")),
                  cls && cls[0] ? cls : "-");
        num(sb, json_object_get(w, "createdSeconds"), 10);
        num(sb, json_object_get(w, "admittedSeconds"), 10);
        num(sb, json_object_get(w, "waitSeconds"), 10);
        num(sb, json_object_get(w, "finishedSeconds"), 10);
        num(sb, json_object_get(w, "evictions"), 9);
        sbuf_addc(sb, '\n');
    }
}

char *sim_summary_text(const json_t *sum)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    header(&sb, sum);
    unschedulable(&sb, sum);
    classes(&sb, sum);
    usage(&sb, sum);
    sbuf_adds(&sb, "\ntrace events\n");
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(sum, "events"), k, v)
        sbuf_addf(&sb, "  %-28s %lld\n", k, (long long)json_integer_value(v));
    per_workload(&sb, sum);
    char *s = sbuf_take(&sb);
    sbuf_release(&sb);
    return s;
}
