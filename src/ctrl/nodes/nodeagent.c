/*
 * nodes/nodeagent: cueue's kubelet. For every pod bound to a node it starts the
 * pod's processes through the executor (volumes materialised, env resolved:
 * nodes/volumes.c, nodes/podenv.c) and turns the executor's reports into
 * pod status as the kubelet writes it: Pending -> Running (startTime,
 * podIP/hostIP 127.0.0.1, containerStatuses running, Initialized /
 * ContainersReady / Ready / PodScheduled) -> Succeeded or Failed
 * (containerStatuses terminated with exitCode, reason, message,
 * finishedAt). The last metrics dict a pod reported is its annotation
 * cueue.dev/metrics.
 *
 * Deletion: while processes run the pod carries finalizer
 * cueue.dev/pod-process, so a delete only marks it; the agent stops the
 * processes (SIGTERM, SIGKILL after deletionGracePeriodSeconds /
 * terminationGracePeriodSeconds, default 30 s) and removes the finalizer
 * once they are gone. A pod whose node disappears fails (reason NodeLost).
 * Without an executor bound pods stay Pending.
 *
 * Restart: pods outlive the control plane, as they outlive a Kubernetes
 * control-plane restart. A bound pod that carries the finalizer but is not
 * tracked (the agent that started it is gone) is offered to the executor's
 * adopt: when its processes still run, or finished while nobody watched,
 * it is tracked again and its state flows through the reports (its exit
 * included); when nothing is left a Running pod fails (ProcessLost), and so
 * does a Pending one whose sandbox shows that it started (the executor's
 * durable "started" marker: it may have run, so it never runs again); a
 * Pending pod that never started is started now.
 *
 * Crashes: a side effect is recorded before it happens. A pod is started
 * only once its intent (the finalizer, written with the pod, its Job's
 * admission and everything else the round changed) is on disk: the start
 * waits in `intent` until the round's flush succeeds, then runs in the next
 * round. So a restarted server always finds the Pod of every process that
 * may have run and never makes a second pod for it. A deleted pod's sandbox
 * goes only once the deletion is on disk (`doomed`), so a pod that may
 * still come back after a crash keeps its "started" marker. In `cueue sim`
 * (no state directory, nothing on disk) pods start at once.
 *
 * Invariant: `running` maps the uid of every pod the executor runs to its
 * "ns/name"; a uid leaves it with its terminal report. `intent` holds the
 * uids whose start waits for a flush ("ns/name"), `durable` those whose
 * intent is on disk and whose start is due.
 */
#include <string.h>

#include "api/meta.h"
#include "ctrl/metrics.h"
#include "ctrl/nodes/nodes.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#define RETRY_MOUNT_MS 5000
#define RETRY_FLUSH_MS 1000
#define DEFAULT_GRACE_S 30

struct agent {
    int rid;
    json_t *running;  /* uid -> {"key": "ns/name", "stopping": bool} */
    json_t *intent;   /* uid -> "ns/name": start once the next flush succeeds */
    json_t *durable;  /* uid -> true: intent on disk, start due */
    json_t *doomed;   /* uid -> true: deleted; sandbox removed after a flush */
};

static void ts(int64_t ms, char out[TIMEFMT_LEN]) { timefmt_rfc3339(ms, false, out); }

/* ---- finalizer ---- */

static bool has_finalizer(const json_t *pod)
{
    size_t i;
    json_t *f;
    json_array_foreach(JX_GET(pod, "metadata", "finalizers"), i, f) {
        if (!strcmp(jx_or_empty(json_string_value(f)), FINALIZER_POD))
            return true;
    }
    return false;
}

static void set_finalizer(json_t *pod, bool on)
{
    json_t *arr = JX_GET(pod, "metadata", "finalizers");
    if (on && !has_finalizer(pod)) {
        if (!json_is_array(arr))
            JX_SET_NEW(pod, arr = json_array(), "metadata", "finalizers");
        json_array_append_new(arr, json_string(FINALIZER_POD));
    }
    for (size_t i = json_array_size(arr); !on && i-- > 0;)
        if (!strcmp(jx_or_empty(json_string_value(json_array_get(arr, i))), FINALIZER_POD))
            json_array_remove(arr, i);
}

/* Write a pod copy the caller only releases afterwards (never changes it
 * again): the store keeps its values instead of copying them. */
static int write_pod(struct ctrl *c, json_t *cp)
{
    return store_update_take(ctrl_store(c), KIND_POD, api_namespace(cp), json_incref(cp),
                             STORE_UPDATE_ALL, NULL);
}

static void drop_finalizer(struct ctrl *c, const json_t *pod)
{
    if (!has_finalizer(pod))
        return;
    json_t *cp = jx_deep_copy(pod);
    JX_DEL(cp, "metadata", "resourceVersion");
    set_finalizer(cp, false);
    write_pod(c, cp);
    json_decref(cp);
}

/* ---- status ---- */

static void set_ready(json_t *pod, bool ready, const char *reason, int64_t now)
{
    const char *st = ready ? "True" : "False";
    api_cond_set(pod, "PodReadyToStartContainers", "True", "", "", now);
    api_cond_set(pod, "Initialized", "True", "", "", now);
    api_cond_set(pod, "Ready", st, reason, "", now);
    api_cond_set(pod, "ContainersReady", st, reason, "", now);
    api_cond_set(pod, "PodScheduled", "True", "", "", now);
}

static json_t *ctr_state(const struct exec_container_report *cr, const char *cid)
{
    char a[TIMEFMT_LEN], b[TIMEFMT_LEN];
    if (cr->state == EXEC_C_RUNNING) {
        ts(cr->started_ms, a);
        return json_pack("{s:{s:s}}", "running", "startedAt", a);
    }
    if (cr->state == EXEC_C_WAITING)
        return json_pack("{s:{s:s}}", "waiting", "reason",
                         cr->reason ? cr->reason : "PodInitializing");
    ts(cr->started_ms ? cr->started_ms : cr->finished_ms, a);
    ts(cr->finished_ms, b);
    json_t *t = json_pack("{s:i,s:s,s:s,s:s,s:s}", "exitCode", cr->exit_code, "reason",
                          cr->reason ? cr->reason : (cr->exit_code ? "Error" : "Completed"),
                          "startedAt", a, "finishedAt", b, "containerID", cid);
    if (cr->message && cr->message[0])
        json_object_set_new(t, "message", json_string(cr->message));
    return json_pack("{s:o}", "terminated", t);
}

/* Container statuses from the report, or synthesised from the pod's state
 * when the executor gives no per-container detail (the simulator). */
static void container_statuses(json_t *pod, const struct exec_report *r)
{
    json_t *inits = json_array(), *mains = json_array();
    const char *const lists[] = {"initContainers", "containers"};
    size_t idx = 0;
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *ctr;
        json_array_foreach(JX_GET(pod, "spec", lists[l]), i, ctr) {
            struct exec_container_report syn = {0};
            const struct exec_container_report *cr =
                idx < r->n_containers ? &r->containers[idx] : &syn;
            idx++;
            syn.state = r->state == EXEC_RUNNING && l == 1 ? EXEC_C_RUNNING : EXEC_C_TERMINATED;
            syn.exit_code = l == 0 ? 0 : r->exit_code;
            syn.reason = l == 0 ? "Completed" : r->reason;
            syn.message = l == 0 ? NULL : r->message;
            syn.started_ms = r->at_ms;
            syn.finished_ms = r->at_ms;
            const char *name = jx_or_empty(JX_STR(ctr, "name"));
            char *cid = xasprintf("cueue://%s/%s", jx_or_empty(api_uid(pod)), name);
            bool running = cr->state == EXEC_C_RUNNING;
            json_t *cs = json_pack("{s:s,s:s,s:s,s:b,s:b,s:i,s:o}", "name", name, "image",
                                   jx_or_empty(JX_STR(ctr, "image")), "imageID", "", "ready",
                                   running, "started", running, "restartCount", cr->restarts,
                                   "state", ctr_state(cr, cid));
            json_object_set_new(cs, "containerID", json_string(cid));
            xfree(cid);
            json_array_append_new(l == 0 ? inits : mains, cs);
        }
    }
    json_t *st = JX_OBJ(pod, "status");
    if (json_array_size(inits))
        json_object_set_new(st, "initContainerStatuses", inits);
    else
        json_decref(inits);
    json_object_set_new(st, "containerStatuses", mains);
}

static void apply_report(json_t *pod, const struct exec_report *r)
{
    json_t *st = JX_OBJ(pod, "status");
    char t[TIMEFMT_LEN];
    const char *phase = r->state == EXEC_RUNNING     ? "Running"
                        : r->state == EXEC_SUCCEEDED ? "Succeeded"
                                                     : "Failed";
    json_object_set_new(st, "phase", json_string(phase));
    ts(r->at_ms, t);
    if (!JX_GET(st, "startTime"))
        json_object_set_new(st, "startTime", json_string(t));
    const char *host_ip = r->host_ip ? r->host_ip : "127.0.0.1";
    if (!JX_GET(st, "podIP")) { /* an IP of its own (handle_report) stays */
        json_object_set_new(st, "podIP", json_string(host_ip));
        json_object_set_new(st, "podIPs", json_pack("[{s:s}]", "ip", host_ip));
    }
    json_object_set_new(st, "hostIP", json_string(host_ip));
    json_object_set_new(st, "hostIPs", json_pack("[{s:s}]", "ip", host_ip));
    set_ready(pod, r->state == EXEC_RUNNING, r->state == EXEC_RUNNING ? "" : "PodCompleted",
              r->at_ms);
    container_statuses(pod, r);
    nodes_pod_tidy_conditions(pod);
    if (r->metrics) {
        char *m = jx_dumps_readable(r->metrics);
        api_set_annotation(pod, ANNOT_METRICS, m);
        xfree(m);
    }
}

/* Fail a pod that cannot run (or lost its node) without processes. */
static void fail_pod(struct ctrl *c, const json_t *pod, const char *reason, const char *msg)
{
    json_t *cp = jx_deep_copy(pod);
    JX_DEL(cp, "metadata", "resourceVersion");
    struct exec_report r = {0};
    r.state = EXEC_FAILED;
    r.exit_code = 128;
    r.reason = (char *)reason;
    r.message = (char *)msg;
    r.at_ms = ctrl_now(c);
    apply_report(cp, &r);
    JX_SET_NEW(cp, json_string(reason), "status", "reason");
    JX_SET_NEW(cp, json_string(msg), "status", "message");
    set_finalizer(cp, false);
    if (write_pod(c, cp) == 0)
        ctrl_metrics_pod_finished(c, "Failed");
    json_decref(cp);
    ctrl_event(c, pod, "Warning", reason, "%s", msg);
}

/* ---- starting and stopping ---- */

static void track(struct agent *a, const json_t *pod)
{
    char *key = xasprintf("%s/%s", api_namespace(pod), api_name(pod));
    json_object_set_new(a->running, api_uid(pod),
                        json_pack("{s:s,s:b}", "key", key, "stopping", 0));
    xfree(key);
}

/* Offer pod to the executor's adopt (see the file comment): 0 when the
 * executor follows it again (it is tracked from here), CU_EEXIST when it
 * started once and nothing of it is left (it must not run again),
 * CU_ENOTFOUND when it never started (or the executor cannot adopt). */
static int adopt_pod(struct ctrl *c, struct agent *a, const json_t *pod)
{
    struct exec *x = ctrl_exec(c);
    if (!x->ops->adopt || !has_finalizer(pod))
        return CU_ENOTFOUND;
    const char *state_dir = ctrl_cfg(c)->state_dir;
    char *sandbox = exec_sandbox_dir(x, state_dir, api_uid(pod));
    json_t *node = store_get(ctrl_store(c), KIND_NODE, NULL,
                             jx_or_empty(JX_STR(pod, "spec", "nodeName")));
    struct exec_pod ep = {api_namespace(pod), api_name(pod), api_uid(pod), pod, sandbox,
                          NULL, 0, NULL, 0, node};
    int rc = x->ops->adopt(x, &ep);
    xfree(sandbox);
    json_decref(node);
    if (rc == 0)
        track(a, pod);
    return rc == 0 || rc == CU_EEXIST ? rc : CU_ENOTFOUND;
}

/* A pod whose volumes cannot be mounted yet: as the kubelet reports it,
 * every container waiting with reason ContainerCreating (init containers:
 * PodInitializing), so `get pods` says ContainerCreating. Written once. */
static void mark_container_creating(struct ctrl *c, const json_t *pod)
{
    json_t *cur = json_array_get(JX_GET(pod, "status", "containerStatuses"), 0);
    if (!strcmp(jx_or_empty(JX_STR(cur, "state", "waiting", "reason")), "ContainerCreating"))
        return;
    json_t *cp = jx_deep_copy(pod);
    const char *const lists[] = {"initContainers", "containers"};
    const char *const fields[] = {"initContainerStatuses", "containerStatuses"};
    for (int l = 0; l < 2; l++) {
        json_t *out = json_array();
        size_t i;
        json_t *ctr;
        json_array_foreach(JX_GET(pod, "spec", lists[l]), i, ctr) {
            json_array_append_new(
                out, json_pack("{s:s,s:s,s:b,s:i,s:b,s:{s:{s:s}}}", "name",
                               jx_or_empty(JX_STR(ctr, "name")), "image",
                               jx_or_empty(JX_STR(ctr, "image")), "ready", 0, "restartCount", 0,
                               "started", 0, "state", "waiting", "reason",
                               l ? "ContainerCreating" : "PodInitializing"));
        }
        if (json_array_size(out))
            JX_SET_NEW(cp, out, "status", fields[l]);
        else
            json_decref(out);
    }
    store_update(ctrl_store(c), KIND_POD, api_namespace(cp), cp, STORE_UPDATE_STATUS, NULL);
    json_decref(cp);
}

/* The intent to start pod: the finalizer (so a delete cannot lose running
 * processes, and a restarted server offers the pod to adopt), on disk
 * before anything runs. True when it is on disk and the pod may start
 * now; false when the start waits for the round's flush (after_round
 * enqueues the pod again once it succeeded) or the write conflicted. A
 * store without a state directory (the simulator) starts at once. */
static bool record_intent(struct ctrl *c, struct agent *a, const json_t *pod)
{
    const char *uid = jx_or_empty(api_uid(pod));
    bool on_disk = ctrl_cfg(c)->state_dir != NULL;
    if (has_finalizer(pod) && (!on_disk || json_object_get(a->durable, uid))) {
        json_object_del(a->durable, uid);
        return true;
    }
    if (!has_finalizer(pod)) {
        json_t *cp = jx_deep_copy(pod);
        set_finalizer(cp, true);
        int rc = write_pod(c, cp);
        json_decref(cp);
        if (rc != 0) {
            ctrl_enqueue(c, a->rid, api_namespace(pod), api_name(pod)); /* conflict: again */
            return false;
        }
        if (!on_disk)
            return true;
    }
    char *key = xasprintf("%s/%s", api_namespace(pod), api_name(pod));
    json_object_set_new(a->intent, uid, json_string(key));
    xfree(key);
    return false;
}

static void start_pod(struct ctrl *c, struct agent *a, const json_t *pod, const json_t *node)
{
    struct nodes_podrun run;
    char msg[512] = "";
    int rc = nodes_podrun_prepare(c, pod, node, &run, msg, sizeof(msg));
    if (rc == CU_ENOTFOUND) {
        mark_container_creating(c, pod);
        ctrl_event(c, pod, "Warning", "FailedMount", "%s", msg);
        ctrl_enqueue_at(c, a->rid, api_namespace(pod), api_name(pod),
                        ctrl_now(c) + RETRY_MOUNT_MS);
    } else if (rc != 0) {
        fail_pod(c, pod, "CreateContainerConfigError", msg);
    } else if (!record_intent(c, a, pod)) {
        /* the start waits for the flush that puts its intent on disk */
    } else {
        struct exec *x = ctrl_exec(c);
        struct exec_pod ep = {api_namespace(pod), api_name(pod), api_uid(pod), run.pod,
                              run.sandbox, run.env, run.n_env, run.mounts, run.n_mounts, node};
        int src = x->ops->start(x, &ep, msg, sizeof(msg));
        if (src != 0) {
            json_t *cur = store_get(ctrl_store(c), KIND_POD, api_namespace(pod), api_name(pod));
            if (cur)
                fail_pod(c, cur,
                         src == CU_EFORBIDDEN ? "CreateContainerConfigError" : "StartError", msg);
            json_decref(cur);
        } else {
            track(a, pod);
            ctrl_metrics_pod_started(c);
        }
    }
    nodes_podrun_release(&run);
}

/* The grace period of a deletion: metadata.deletionGracePeriodSeconds when
 * a delete asked for one (> 0; the store writes 0 for every finalizer
 * deletion), else spec.terminationGracePeriodSeconds, else 30 s. */
static int64_t grace_ms(const json_t *pod)
{
    json_t *g = JX_GET(pod, "metadata", "deletionGracePeriodSeconds");
    if (!json_is_integer(g) || json_integer_value(g) <= 0)
        g = JX_GET(pod, "spec", "terminationGracePeriodSeconds");
    int64_t s = json_is_integer(g) ? (int64_t)json_integer_value(g) : DEFAULT_GRACE_S;
    return s > 0 ? s * 1000 : 0;
}

static void stop_pod(struct ctrl *c, struct agent *a, const char *uid, int64_t grace)
{
    json_t *t = json_object_get(a->running, uid);
    if (!t || json_is_true(json_object_get(t, "stopping")))
        return;
    json_object_set_new(t, "stopping", json_true());
    ctrl_exec(c)->ops->stop(ctrl_exec(c), uid, grace);
}

/* The uid the executor runs for ns/name, or NULL. */
static const char *tracked_uid(struct agent *a, const char *ns, const char *name)
{
    char *key = xasprintf("%s/%s", ns ? ns : "", name);
    const char *uid;
    json_t *v, *found = NULL;
    json_object_foreach(a->running, uid, v) {
        if (!strcmp(jx_or_empty(JX_STR(v, "key")), key)) {
            found = v;
            break;
        }
    }
    xfree(key);
    return found ? uid : NULL;
}

static void agent_reconcile(struct ctrl *c, void *self, const char *ns, const char *name)
{
    struct agent *a = self;
    if (!ctrl_exec(c))
        return;
    json_t *pod = store_get(ctrl_store(c), KIND_POD, ns, name);
    const char *uid = tracked_uid(a, ns, name);
    if (!pod || (uid && strcmp(uid, jx_or_empty(api_uid(pod))))) {
        if (uid)
            stop_pod(c, a, uid, 0); /* removed without us: stop at once */
        json_decref(pod);
        if (!pod || !uid)
            return;
        pod = store_get(ctrl_store(c), KIND_POD, ns, name); /* a new pod of the same name */
        uid = NULL;
    }
    const char *node_name = JX_STR(pod, "spec", "nodeName");
    json_t *node = node_name && node_name[0]
                       ? store_get(ctrl_store(c), KIND_NODE, NULL, node_name) : NULL;
    const char *phase = jx_or_empty(JX_STR(pod, "status", "phase"));
    int adopted = CU_ENOTFOUND;
    if (!uid && node_name && node_name[0] &&
        !json_object_get(a->durable, jx_or_empty(api_uid(pod))) &&
        !json_object_get(a->intent, jx_or_empty(api_uid(pod))) &&
        (adopted = adopt_pod(c, a, pod)) == 0)
        uid = tracked_uid(a, ns, name); /* started by the agent before a restart */
    if (!node_name || !node_name[0]) {
        /* not bound: nothing to run */
    } else if (api_is_deleting(pod)) {
        if (uid)
            stop_pod(c, a, uid, grace_ms(pod));
        else
            drop_finalizer(c, pod);
    } else if (!node) {
        if (uid)
            stop_pod(c, a, uid, 0);
        else if (nodes_pod_is_active(pod))
            fail_pod(c, pod, "NodeLost", "the node the pod was bound to no longer exists");
    } else if (uid) {
        /* running: the executor's reports drive the status */
    } else if (!strcmp(phase, "Running")) {
        fail_pod(c, pod, "ProcessLost",
                 "the pod's processes are not known to this node agent (control plane "
                 "restarted?)");
    } else if (adopted == CU_EEXIST && nodes_pod_is_active(pod)) {
        fail_pod(c, pod, "ProcessLost",
                 "the pod was started before the control plane restarted and nothing of its "
                 "processes is left: it is not run a second time");
    } else if (!nodes_pod_is_active(pod)) {
        drop_finalizer(c, pod);
    } else {
        start_pod(c, a, pod, node);
    }
    json_decref(node);
    json_decref(pod);
}

/* ---- reports ---- */

static void handle_report(struct ctrl *c, struct agent *a, const struct exec_report *r)
{
    json_t *t = json_object_get(a->running, r->uid);
    if (!t)
        return;
    const char *key = JX_STR(t, "key");
    const char *slash = strchr(key, '/');
    char *ns = xstrndup(key, (size_t)(slash - key));
    json_t *pod = store_get(ctrl_store(c), KIND_POD, ns, slash + 1);
    bool terminal = r->state != EXEC_RUNNING;
    if (pod && !strcmp(jx_or_empty(api_uid(pod)), r->uid)) {
        json_t *cp = jx_deep_copy(pod);
        JX_DEL(cp, "metadata", "resourceVersion");
        json_t *node = store_get(ctrl_store(c), KIND_NODE, NULL,
                                 jx_or_empty(JX_STR(pod, "spec", "nodeName")));
        bool node_gone = !node;
        json_decref(node);
        apply_report(cp, r);
        struct exec *x = ctrl_exec(c);
        char *ip = x->ops->pod_ip ? x->ops->pod_ip(x, r->uid) : NULL;
        if (ip) { /* the pod's own network namespace (the OCI executor) */
            JX_SET_NEW(cp, json_string(ip), "status", "podIP");
            JX_SET_NEW(cp, json_pack("[{s:s}]", "ip", ip), "status", "podIPs");
            xfree(ip);
        }
        if (terminal && node_gone && !api_is_deleting(pod)) {
            JX_SET_NEW(cp, json_string("Failed"), "status", "phase");
            JX_SET_NEW(cp, json_string("NodeLost"), "status", "reason");
        }
        if (terminal) {
            set_finalizer(cp, false);
            ctrl_metrics_pod_finished(c, JX_STR(cp, "status", "phase"));
        }
        write_pod(c, cp);
        json_decref(cp);
    }
    if (terminal)
        json_object_del(a->running, r->uid);
    json_decref(pod);
    xfree(ns);
}

/* Reconcile the pod named by key ("ns/name") at at_ms (0 = now). */
static void enqueue_key(struct ctrl *c, struct agent *a, const char *key, int64_t at_ms)
{
    const char *slash = strchr(key, '/');
    char *ns = xstrndup(key, (size_t)(slash - key));
    if (at_ms)
        ctrl_enqueue_at(c, a->rid, ns, slash + 1, at_ms);
    else
        ctrl_enqueue(c, a->rid, ns, slash + 1);
    xfree(ns);
}

/* Put the round's intents on disk, then let their starts (and the
 * removal of deleted pods' sandboxes) go ahead. True when it did work. A
 * failed flush keeps everything waiting and retries later: nothing starts
 * whose intent is not on disk. */
static bool flush_intents(struct ctrl *c, struct agent *a)
{
    struct exec *x = ctrl_exec(c);
    if (!json_object_size(a->intent) && !json_object_size(a->doomed))
        return false;
    if (store_flush(ctrl_store(c)) != 0) {
        const char *uid;
        json_t *v;
        json_object_foreach(a->intent, uid, v)
            enqueue_key(c, a, json_string_value(v), ctrl_now(c) + RETRY_FLUSH_MS);
        return false;
    }
    const char *uid;
    json_t *v;
    json_object_foreach(a->intent, uid, v) {
        json_object_set_new(a->durable, uid, json_true());
        enqueue_key(c, a, json_string_value(v), 0);
    }
    json_object_clear(a->intent);
    json_object_foreach(a->doomed, uid, v) {
        if (!json_object_get(a->running, uid))
            x->ops->remove(x, uid);
    }
    json_object_clear(a->doomed);
    return true;
}

static bool agent_after_round(struct ctrl *c, void *self)
{
    struct agent *a = self;
    struct exec *x = ctrl_exec(c);
    if (!x)
        return false;
    bool flushed = flush_intents(c, a);
    struct exec_reports reps = {0};
    int n = x->ops->poll(x, &reps);
    for (size_t i = 0; i < reps.n; i++)
        handle_report(c, a, &reps.items[i]);
    exec_reports_release(&reps);
    return n > 0 || flushed;
}

static void agent_on_event(struct ctrl *c, void *self, const struct store_event *ev)
{
    struct agent *a = self;
    struct exec *x = ctrl_exec(c);
    if (ev->kind == KIND_POD && ev->type == STORE_DELETED && x && x->ops->remove &&
        !json_object_get(a->running, jx_or_empty(api_uid(ev->obj)))) {
        /* the kubelet removes a deleted pod's directory: its logs go too,
         * once the deletion is on disk (until then a crash brings the pod
         * back, and its sandbox says whether it ran) */
        const char *uid = jx_or_empty(api_uid(ev->obj));
        json_object_del(a->intent, uid);
        json_object_del(a->durable, uid);
        if (ctrl_cfg(c)->state_dir)
            json_object_set_new(a->doomed, uid, json_true());
        else
            x->ops->remove(x, uid);
        return;
    }
    if (ev->kind == KIND_POD) {
        const char *nn = JX_STR(ev->obj, "spec", "nodeName");
        if ((nn && nn[0]) || json_object_get(a->running, jx_or_empty(api_uid(ev->obj))))
            ctrl_enqueue(c, a->rid, api_namespace(ev->obj), api_name(ev->obj));
    } else if (ev->kind == KIND_CONFIGMAP && ev->type != STORE_DELETED) {
        /* pods waiting for this ConfigMap's volume or env start now */
        json_t *pods = store_list(ctrl_store(c), KIND_POD, api_namespace(ev->obj), NULL);
        size_t i;
        json_t *p;
        json_array_foreach(pods, i, p) {
            const char *nn = JX_STR(p, "spec", "nodeName");
            const char *phase = jx_or_empty(JX_STR(p, "status", "phase"));
            if (nn && nn[0] && (!phase[0] || !strcmp(phase, "Pending")) &&
                !json_object_get(a->running, jx_or_empty(api_uid(p))))
                ctrl_enqueue(c, a->rid, api_namespace(p), api_name(p));
        }
        json_decref(pods);
    } else if (ev->kind == KIND_NODE && ev->type == STORE_DELETED) {
        json_t *pods = store_list(ctrl_store(c), KIND_POD, NULL, NULL);
        size_t i;
        json_t *p;
        json_array_foreach(pods, i, p) {
            if (!strcmp(jx_or_empty(JX_STR(p, "spec", "nodeName")), api_name(ev->obj)))
                ctrl_enqueue(c, a->rid, api_namespace(p), api_name(p));
        }
        json_decref(pods);
    }
}

static void agent_notify(void *ctx)
{
    store_wakeup(ctx);
}

static void agent_free(void *self)
{
    struct agent *a = self;
    json_decref(a->running);
    json_decref(a->intent);
    json_decref(a->durable);
    json_decref(a->doomed);
    xfree(a);
}

static const struct ctrl_reconciler_ops agent_ops = {
    .name = "nodeagent",
    .on_event = agent_on_event,
    .reconcile = agent_reconcile,
    .after_round = agent_after_round,
    .free = agent_free,
};

static bool pod_uid_stored(void *ctx, const char *uid)
{
    return json_object_get(ctx, uid) != NULL;
}

/* Sandboxes of pods deleted while no server ran (or whose removal found a
 * supervisor still alive) go at start; pods still stored keep theirs. */
static void sweep_sandboxes(struct ctrl *c, struct exec *x)
{
    if (!x || !x->ops->sweep)
        return;
    json_t *uids = json_object();
    json_t *pods = store_list(ctrl_store(c), KIND_POD, NULL, NULL);
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p)
        json_object_set_new(uids, jx_or_empty(api_uid(p)), json_true());
    json_decref(pods);
    x->ops->sweep(x, pod_uid_stored, uids);
    json_decref(uids);
}

void ctrl__nodeagent_register(struct ctrl *c)
{
    struct agent *a = xcalloc(1, sizeof(*a));
    a->running = json_object();
    a->intent = json_object();
    a->durable = json_object();
    a->doomed = json_object();
    a->rid = ctrl_register(c, &agent_ops, a);
    struct nodes_ctx *ctx = nodes_ctx(c);
    if (ctx)
        ctx->rid_agent = a->rid;
    struct exec *x = ctrl_exec(c);
    if (x && !x->notify) {
        x->notify_ctx = ctrl_store(c); /* before notify (exec.h) */
        x->notify = agent_notify;
    }
    sweep_sandboxes(c, x);
}
