/*
 * jobs/pods: Pod helpers shared by the Job and RayJob controllers: phase
 * and readiness tests, failure text (the executor's StartError for a
 * missing program surfaces here), env injection into containers, the
 * per-worker metrics roll-up and the coordinator port choice.
 *
 * Pod status is written by the node agent in Kubernetes' shape:
 * status.phase, status.conditions[type=Ready], status.containerStatuses[]
 * with state.{waiting,running,terminated}{reason,message,exitCode}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "ctrl/jobs/jobs.h"
#include "util/jsonx.h"
#include "util/sha1.h"
#include "util/xalloc.h"

static bool phase_is(const json_t *pod, const char *phase)
{
    const char *p = JX_STR(pod, "status", "phase");
    return p && !strcmp(p, phase);
}

bool jobs_pod_succeeded(const json_t *pod) { return phase_is(pod, "Succeeded"); }
bool jobs_pod_failed(const json_t *pod) { return phase_is(pod, "Failed"); }
bool jobs_pod_is_terminal(const json_t *pod)
{
    return jobs_pod_succeeded(pod) || jobs_pod_failed(pod);
}

bool jobs_pod_ready(const json_t *pod)
{
    return !jobs_pod_is_terminal(pod) && api_cond_is_true(pod, "Ready");
}

/* The first container state of `which` ("waiting"/"terminated") whose
 * reason is set and (for terminated) failed; NULL when none. */
static const json_t *failing_state(const json_t *pod, const char *which)
{
    size_t i;
    json_t *cs;
    json_array_foreach(JX_GET(pod, "status", "containerStatuses"), i, cs) {
        const json_t *st = JX_GET(cs, "state", which);
        if (!st)
            st = JX_GET(cs, "lastState", which);
        if (!st || !JX_STR(st, "reason"))
            continue;
        if (!strcmp(which, "terminated") && JX_INT(st, 0, "exitCode") == 0 &&
            strcmp(JX_STR(st, "reason"), "StartError"))
            continue;
        return st;
    }
    return NULL;
}

static char *state_text(const json_t *st)
{
    const char *r = JX_STR(st, "reason");
    const char *m = JX_STR(st, "message");
    if (m && m[0])
        return xasprintf("%s: %s", r, m);
    if (JX_GET(st, "exitCode"))
        return xasprintf("%s (exit code %lld)", r, (long long)JX_INT(st, 0, "exitCode"));
    return xstrdup(r);
}

char *jobs_pod_failure(const json_t *pod)
{
    const json_t *st = failing_state(pod, "terminated");
    if (!st)
        st = failing_state(pod, "waiting");
    if (st)
        return state_text(st);
    const char *r = JX_STR(pod, "status", "reason");
    const char *m = JX_STR(pod, "status", "message");
    if (m && m[0])
        return xasprintf("%s%s%s", r ? r : "", r ? ": " : "", m);
    return xstrdup(r ? r : "pod failed");
}

static bool is_start_failure(const char *reason)
{
    static const char *const reasons[] = {"StartError",        "CrashLoopBackOff",
                                          "CreateContainerError", "RunContainerError",
                                          "ContainerCannotRun", "ErrImagePull",
                                          "ImagePullBackOff",  "InvalidImageName", NULL};
    for (int i = 0; reason && reasons[i]; i++)
        if (!strcmp(reason, reasons[i]))
            return true;
    return false;
}

bool jobs_pod_start_failed(const json_t *pod, char **msg)
{
    const char *which[] = {"terminated", "waiting"};
    for (int w = 0; w < 2; w++) {
        const json_t *st = failing_state(pod, which[w]);
        if (st && is_start_failure(JX_STR(st, "reason"))) {
            *msg = state_text(st);
            return true;
        }
    }
    if (is_start_failure(JX_STR(pod, "status", "reason"))) {
        *msg = jobs_pod_failure(pod);
        return true;
    }
    return false;
}

static bool container_has_env(const json_t *ctr, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(JX_GET(ctr, "env"), i, e) {
        const char *n = JX_STR(e, "name");
        if (n && !strcmp(n, name))
            return true;
    }
    return false;
}

void jobs_pod_add_env(json_t *pod_spec, const json_t *env)
{
    size_t i, j;
    json_t *ctr, *e;
    json_array_foreach(JX_GET(pod_spec, "containers"), i, ctr) {
        json_t *list = json_object_get(ctr, "env");
        if (!json_is_array(list)) {
            list = json_array();
            json_object_set_new(ctr, "env", list);
        }
        json_array_foreach(env, j, e) {
            const char *name = JX_STR(e, "name");
            if (name && !container_has_env(ctr, name))
                json_array_append_new(list, jx_deep_copy(e));
        }
    }
}

bool jobs_collect_metrics(json_t *obj, const json_t *pods)
{
    const char *cur_text = api_annotation(obj, KQ_METRICS_ANNOTATION);
    json_t *cur = cur_text ? json_loads(cur_text, 0, NULL) : NULL;
    if (!json_is_object(cur)) {
        json_decref(cur);
        cur = json_object();
    }
    json_t *next = jx_deep_copy(cur);
    size_t i;
    json_t *pod;
    json_array_foreach(pods, i, pod) {
        const char *m = api_annotation(pod, KQ_METRICS_ANNOTATION);
        json_t *dict = m ? json_loads(m, 0, NULL) : NULL;
        if (json_is_object(dict))
            json_object_set(next, api_name(pod), dict);
        json_decref(dict);
    }
    bool changed = !json_equal(cur, next);
    if (changed) {
        char *text = jx_dumps_readable(next);
        api_set_annotation(obj, KQ_METRICS_ANNOTATION, text);
        xfree(text);
    }
    json_decref(cur);
    json_decref(next);
    return changed;
}

int jobs_pod_named_port(const json_t *pod_spec, const char *name)
{
    size_t i, j;
    json_t *ctr, *p;
    json_array_foreach(JX_GET(pod_spec, "containers"), i, ctr) {
        json_array_foreach(JX_GET(ctr, "ports"), j, p) {
            if (!strcmp(jx_or_empty(JX_STR(p, "name")), name))
                return (int)JX_INT(p, 0, "containerPort");
        }
    }
    return 0;
}

int jobs_master_port(const char *uid)
{
    return JOBS_HOST_PORT_BASE +
           (int)(sha1_u32(uid ? uid : "", uid ? strlen(uid) : 0) % JOBS_HOST_PORTS);
}
