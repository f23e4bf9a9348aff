/*
 * jobs/job: the batch/v1 Job reconciler. Two roles in one pass per Job:
 *  1. Kueue's batch/job integration (kueue.md §4.2) through the generic
 *     lifecycle of jobs/frame.c: one pod set "main" with count
 *     min(parallelism, completions), partial admission through
 *     kueue.x-k8s.io/job-min-parallelism, reclaimable pods, PodsReady when
 *     succeeded + ready >= count. Only Jobs with the queue-name label.
 *  2. Kubernetes' Job controller (jobs/batch.c): Pods and status, for every
 *     Job (managed or not, RayJob submitters included).
 * The Kueue step runs first; when it writes the Job (suspend/start) the pass
 * ends and the Job's own event brings it back, so pods are never created for
 * a managed Job that Kueue has not started.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "ctrl/ctrl-int.h"
#include "ctrl/jobs/jobs.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static int32_t job_count(const json_t *job)
{
    int32_t par = (int32_t)JX_INT(job, 1, "spec", "parallelism");
    json_t *comp = JX_GET(job, "spec", "completions");
    if (json_is_integer(comp) && json_integer_value(comp) < par)
        return (int32_t)json_integer_value(comp);
    return par;
}

static void drop_legacy_labels(json_t *tmpl)
{
    json_t *labels = JX_GET(tmpl, "metadata", "labels");
    json_object_del(labels, "job-name");
    json_object_del(labels, "controller-uid");
    json_object_del(labels, "batch.kubernetes.io/controller-uid");
}

static int job_podsets(struct ctrl *c, const json_t *job, struct jobs_podsets *out, char *err,
                       size_t errlen)
{
    (void)c;
    const json_t *tmpl = JX_GET(job, "spec", "template");
    if (!json_is_object(tmpl)) {
        snprintf(err, errlen, "spec.template: Required value");
        return -1;
    }
    int32_t count = job_count(job);
    int32_t min = 0;
    const char *m = api_annotation(job, KQ_MIN_PARALLELISM_ANNOTATION);
    if (m) {
        long v = strtol(m, NULL, 10);
        if (v > 0 && v < count)
            min = (int32_t)v;
    }
    json_t *t = jx_deep_copy(tmpl);
    drop_legacy_labels(t);
    jobs_podsets_add(out, "main", count, min, t);
    return 0;
}

static json_t *job_template_at(json_t *job, size_t i, const char *name)
{
    if (i != 0 || strcmp(name, "main"))
        return NULL;
    return JX_OBJ(job, "spec", "template");
}

static bool job_is_active(const json_t *job) { return JX_INT(job, 0, "status", "active") > 0; }

static bool job_finished(const json_t *job, char *msg, size_t msglen, bool *success)
{
    const char *types[] = {"Complete", "Failed"};
    for (int i = 0; i < 2; i++) {
        if (api_cond_is_true(job, types[i])) {
            snprintf(msg, msglen, "%s", jx_or_empty(JX_STR(api_cond_get(job, types[i]), "message")));
            *success = i == 0;
            return true;
        }
    }
    return false;
}

/* The admitted count of pod set main (spec count when not admitted). */
static int32_t admitted_count(const json_t *wl)
{
    const json_t *psa = json_array_get(JX_GET(wl, "status", "admission", "podSetAssignments"), 0);
    int32_t spec = (int32_t)JX_INT(json_array_get(JX_GET(wl, "spec", "podSets"), 0), 1, "count");
    return psa ? (int32_t)JX_INT(psa, spec, "count") : spec;
}

static bool job_pods_ready(const json_t *job, const json_t *wl)
{
    int64_t done = JX_INT(job, 0, "status", "succeeded") + JX_INT(job, 0, "status", "ready");
    return done >= admitted_count(wl);
}

static void job_after_start(json_t *job, const struct kq_podset_info *infos, size_t n)
{
    if (n == 0 || !api_annotation(job, KQ_MIN_PARALLELISM_ANNOTATION))
        return;
    JX_SET_NEW(job, json_integer(infos[0].count), "spec", "parallelism");
    const char *eq = api_annotation(job, KQ_COMPLETIONS_EQ_PARALLELISM_ANNOTATION);
    if (eq && !strcmp(eq, "true"))
        JX_SET_NEW(job, json_integer(infos[0].count), "spec", "completions");
}

static void job_after_stop(json_t *job, const json_t *wl)
{
    const json_t *ps = json_array_get(JX_GET(wl, "spec", "podSets"), 0);
    if (!JX_GET(ps, "minCount"))
        return;
    JX_SET_NEW(job, json_integer(JX_INT(ps, 1, "count")), "spec", "parallelism");
    const char *eq = api_annotation(job, KQ_COMPLETIONS_EQ_PARALLELISM_ANNOTATION);
    if (eq && !strcmp(eq, "true"))
        JX_SET_NEW(job, json_integer(JX_INT(ps, 1, "count")), "spec", "completions");
}

/* Kueue's reclaimable pods for a Job (§4.2). */
static json_t *job_reclaimable(const json_t *job, const json_t *wl)
{
    (void)wl;
    int64_t par = JX_INT(job, 1, "spec", "parallelism");
    json_t *comp = JX_GET(job, "spec", "completions");
    if (par <= 1 || !json_is_integer(comp))
        return NULL;
    int64_t terminated = JX_INT(job, 0, "status", "succeeded");
    int64_t remaining = json_integer_value(comp) - terminated;
    if (remaining >= par)
        return NULL;
    return json_pack("[{s:s, s:I}]", "name", "main", "count",
                     (json_int_t)(par - (remaining < 0 ? 0 : remaining)));
}

static char *job_name_extra(const json_t *job)
{
    const char *e = api_annotation(job, KQ_ELASTIC_ANNOTATION);
    if (!e || strcmp(e, "true"))
        return NULL;
    return xasprintf("%lld", (long long)JX_INT(job, 1, "metadata", "generation"));
}

static const struct jobs_integration batch_job = {
    .kind = "Job",
    .group = "batch",
    .api_version = "batch/v1",
    .kind_id = KIND_JOB,
    .podsets = job_podsets,
    .template_at = job_template_at,
    .is_active = job_is_active,
    .finished = job_finished,
    .pods_ready = job_pods_ready,
    .after_start = job_after_start,
    .after_stop = job_after_stop,
    .reclaimable = job_reclaimable,
    .name_extra = job_name_extra,
};

static const struct ctrl_reconciler_ops job_ops = {
    .name = "job",
    .on_event = jobs_rec_on_event,
    .reconcile = jobs_rec_reconcile,
    .after_round = NULL,
    .free = jobs_rec_free,
};

void ctrl__job_register(struct ctrl *c)
{
    struct jobs_rec *r = jobs_rec_new(&batch_job, jobs_batch_sync);
    r->rid = ctrl_register(c, &job_ops, r);
    jobs_rec_join(r, c); /* one ownerReferences read per event */
}
