/*
 * Unit tests: the node agent (pod sandbox, env resolution, TPU variables,
 * status from executor reports, finalizer and deletion), with a recording
 * executor the test drives, and one run through the real local executor.
 */
#include <libgen.h>
#include <poll.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_ctrl_nodes_fixture.h"
#include "util/clock.h"
#include "util/err.h"

/* ---- a recording executor ---- */

struct fake_exec {
    struct exec base;
    json_t *starts; /* [{uid, name, sandbox, env:{}, mounts:{}, pod}] */
    json_t *stops;  /* [{uid, grace}] */
    json_t *adopts; /* [uid] */
    int adopt_rc;   /* what adopt answers */
    struct exec_reports queue;
};

static int fake_start(struct exec *x, const struct exec_pod *p, char *err, size_t errlen)
{
    struct fake_exec *fe = (struct fake_exec *)x;
    json_t *env = json_object(), *mounts = json_object();
    for (size_t i = 0; i < p->n_env; i++)
        json_object_set_new(env, p->env[i].name, json_string(p->env[i].value));
    for (size_t i = 0; i < p->n_mounts; i++)
        json_object_set_new(mounts, p->mounts[i].name, json_string(p->mounts[i].value));
    json_array_append_new(fe->starts,
                          json_pack("{s:s,s:s,s:s?,s:o,s:o,s:O}", "uid", p->uid, "name", p->name,
                                    "sandbox", p->sandbox_dir, "env", env, "mounts", mounts,
                                    "pod", p->pod));
    (void)err;
    (void)errlen;
    return 0;
}

static int fake_stop(struct exec *x, const char *uid, int64_t grace_ms)
{
    struct fake_exec *fe = (struct fake_exec *)x;
    json_array_append_new(fe->stops, json_pack("{s:s,s:I}", "uid", uid, "grace",
                                               (json_int_t)grace_ms));
    return 0;
}

static int fake_poll(struct exec *x, struct exec_reports *out)
{
    struct fake_exec *fe = (struct fake_exec *)x;
    int n = (int)fe->queue.n;
    for (size_t i = 0; i < fe->queue.n; i++) {
        XGROW(out->items, out->cap, out->n + 1);
        out->items[out->n++] = fe->queue.items[i];
    }
    fe->queue.n = 0;
    return n;
}

static int64_t fake_deadline(struct exec *x)
{
    (void)x;
    return INT64_MAX;
}

static char *fake_log_path(struct exec *x, const char *uid, const char *c)
{
    (void)x;
    return xasprintf("/dev/null/%s/%s", uid, c);
}

static int fake_adopt(struct exec *x, const struct exec_pod *p)
{
    struct fake_exec *fe = (struct fake_exec *)x;
    json_array_append_new(fe->adopts, json_string(p->uid));
    return fe->adopt_rc;
}

static void fake_free(struct exec *x)
{
    struct fake_exec *fe = (struct fake_exec *)x;
    json_decref(fe->starts);
    json_decref(fe->stops);
    json_decref(fe->adopts);
    exec_reports_release(&fe->queue);
    free(fe);
}

static const struct exec_ops fake_ops = {fake_start, fake_stop, fake_poll, fake_deadline,
                                         fake_log_path, fake_free, fake_adopt, NULL, NULL, NULL};
/* An executor that cannot adopt (the simulator's kind). */
static const struct exec_ops fake_ops_no_adopt = {fake_start, fake_stop, fake_poll,
                                                  fake_deadline, fake_log_path, fake_free,
                                                  NULL, NULL, NULL, NULL};

static void push(struct fake_exec *fe, const char *uid, enum exec_state st, int code,
                 const char *reason, json_t *metrics, int64_t at)
{
    XGROW(fe->queue.items, fe->queue.cap, fe->queue.n + 1);
    struct exec_report *r = &fe->queue.items[fe->queue.n++];
    memset(r, 0, sizeof(*r));
    r->uid = xstrdup(uid);
    r->state = st;
    r->exit_code = code;
    r->reason = xstrdup(reason);
    r->message = xstrdup(code ? "it broke" : "");
    r->at_ms = at;
    r->metrics = metrics;
}

/* ---- fixture ---- */

struct afx {
    struct nfx *f;
    struct fake_exec *fe;
    char dir[64];
};

static int afx_setup(void **state)
{
    struct afx *a = calloc(1, sizeof(*a));
    snprintf(a->dir, sizeof(a->dir), "/tmp/cueue-agent-XXXXXX");
    if (!mkdtemp(a->dir))
        return -1;
    a->fe = calloc(1, sizeof(*a->fe));
    a->fe->base.ops = &fake_ops;
    a->fe->starts = json_array();
    a->fe->stops = json_array();
    a->fe->adopts = json_array();
    a->f = nfx_new();
    a->f->exec = &a->fe->base;
    a->f->state_dir = a->dir;
    nfx_start(a->f);
    *state = a;
    return 0;
}

static int afx_teardown(void **state)
{
    struct afx *a = *state;
    void *f = a->f;
    nfx_teardown(&f);
    fake_free(&a->fe->base);
    char *cmd = xasprintf("rm -rf '%s'", a->dir);
    if (system(cmd) != 0) {}
    xfree(cmd);
    free(a);
    return 0;
}

static json_t *start_of(struct afx *a, const char *pod)
{
    size_t i;
    json_t *s;
    json_array_foreach(a->fe->starts, i, s)
        if (!strcmp(JX_STR(s, "name"), pod))
            return s;
    return NULL;
}

static char *uid_of(struct nfx *f, const char *pod)
{
    json_t *p = nfx_get(f, KIND_POD, "default", pod);
    char *u = xstrdup(api_uid(p));
    json_decref(p);
    return u;
}

static bool has_finalizer(struct nfx *f, const char *pod)
{
    json_t *p = nfx_get(f, KIND_POD, "default", pod);
    bool found = false;
    size_t i;
    json_t *v;
    json_array_foreach(JX_GET(p, "metadata", "finalizers"), i, v)
        found |= !strcmp(json_string_value(v), "cueue.dev/pod-process");
    json_decref(p);
    return found;
}

static void tpu_cluster_and_pod(struct nfx *f, const char *topology, const char *machine)
{
    json_t *pool = nfx_ondemand_pool("tpu");
    json_t *spec = json_object_get(pool, "spec");
    JX_SET_NEW(pool, json_string(machine), "spec", "config", "machineType");
    JX_SET_NEW(pool, json_string(topology), "spec", "placementPolicy", "tpuTopology");
    json_object_set_new(spec, "autoscaling", json_pack("{s:b}", "enabled", 0));
    json_object_set_new(spec, "initialNodeCount", json_integer(strcmp(topology, "4x4") ? 1 : 4));
    nfx_create(f, KIND_NODEPOOL, NULL, pool);
    json_t *p = nfx_pod("default", "w", "1", "1Gi", 4);
    nfx_tpu_placement(p, "tpu");
    JX_SET_NEW(p, json_string(topology), "spec", "nodeSelector",
               "cloud.google.com/gke-tpu-topology");
    nfx_create(f, KIND_POD, "default", p);
    nfx_step(f);
}

/* ---- tests ---- */

static void test_without_executor_bound_pods_stay_pending(void **state)
{
    struct nfx *f = *state;
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("p", "e2-standard-4", json_pack("{s:i}", "initialNodeCount", 1)));
    nfx_create(f, KIND_POD, "default", nfx_pod("default", "x", "1", "1Gi", 0));
    nfx_advance(f, 10 * MIN);
    json_t *p = nfx_get(f, KIND_POD, "default", "x");
    assert_non_null(JX_STR(p, "spec", "nodeName"));
    const char *phase = JX_STR(p, "status", "phase");
    assert_true(!phase || !strcmp(phase, "Pending"));
    assert_null(JX_GET(p, "metadata", "finalizers"));
    json_decref(p);
}

static void test_multi_host_tpu_env_and_metrics_file(void **state)
{
    struct afx *a = *state;
    tpu_cluster_and_pod(a->f, "4x4", "ct6e-standard-4t");
    json_t *s = start_of(a, "w");
    assert_non_null(s);
    json_t *env = json_object_get(s, "env");
    assert_string_equal(JX_STR(env, "TPU_TOPOLOGY"), "4x4");
    assert_string_equal(JX_STR(env, "TPU_ACCELERATOR_TYPE"), "v6e-16");
    assert_string_equal(JX_STR(env, "TPU_HOST_BOUNDS"), "2,2,1");
    assert_string_equal(JX_STR(env, "TPU_CHIPS_PER_HOST_BOUNDS"), "2,2,1");
    assert_string_equal(JX_STR(env, "TPU_SKIP_MDS_QUERY"), "true");
    assert_string_equal(JX_STR(env, "TPU_RUNTIME_METRICS_PORTS"), "8431,8432,8433,8434");
    assert_null(JX_GET(env, "TPU_WORKER_ID")); /* the job controller's on multi-host */
    char *uid = uid_of(a->f, "w");
    char *mf = xasprintf("%s/pods/%s/metrics.jsonl", a->dir, uid);
    assert_string_equal(JX_STR(env, "CUEUE_METRICS_FILE"), mf);
    xfree(mf);
    xfree(uid);
    assert_true(has_finalizer(a->f, "w"));
}

static void test_single_host_tpu_gets_worker_identity(void **state)
{
    struct afx *a = *state;
    tpu_cluster_and_pod(a->f, "2x2", "ct6e-standard-4t");
    json_t *env = json_object_get(start_of(a, "w"), "env");
    assert_string_equal(JX_STR(env, "TPU_ACCELERATOR_TYPE"), "v6e-4");
    assert_string_equal(JX_STR(env, "TPU_WORKER_ID"), "0");
    assert_string_equal(JX_STR(env, "TPU_WORKER_HOSTNAMES"), "localhost");
    assert_string_equal(JX_STR(env, "TPU_HOST_BOUNDS"), "1,1,1");
}

static void test_env_value_from_is_resolved(void **state)
{
    struct afx *a = *state;
    struct nfx *f = a->f;
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("p", "e2-standard-4", json_pack("{s:i}", "initialNodeCount", 1)));
    nfx_create(f, KIND_CONFIGMAP, "default",
               json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s}}", "apiVersion", "v1", "kind",
                         "ConfigMap", "metadata", "name", "cfg", "namespace", "default", "data",
                         "mode", "fast", "LEVEL", "3"));
    json_t *p = nfx_pod("default", "e", "500m", "1Gi", 0);
    api_set_label(p, "app", "trainer");
    json_t *ctr = json_array_get(JX_GET(p, "spec", "containers"), 0);
    json_object_set_new(ctr, "env", json_pack(
        "[{s:s,s:{s:{s:s}}},{s:s,s:{s:{s:s}}},{s:s,s:{s:{s:s}}},{s:s,s:{s:{s:s}}},"
        "{s:s,s:{s:{s:s,s:s}}},{s:s,s:{s:{s:s}}},{s:s,s:s}]",
        "name", "POD_NAME", "valueFrom", "fieldRef", "fieldPath", "metadata.name",
        "name", "APP", "valueFrom", "fieldRef", "fieldPath", "metadata.labels['app']",
        "name", "NODE", "valueFrom", "fieldRef", "fieldPath", "spec.nodeName",
        "name", "IP", "valueFrom", "fieldRef", "fieldPath", "status.podIP",
        "name", "MODE", "valueFrom", "configMapKeyRef", "name", "cfg", "key", "mode",
        "name", "CPUS", "valueFrom", "resourceFieldRef", "resource", "limits.cpu",
        "name", "PLAIN", "value", "x"));
    json_object_set_new(ctr, "envFrom", json_pack("[{s:{s:s},s:s}]", "configMapRef", "name",
                                                  "cfg", "prefix", "CFG_"));
    nfx_create(f, KIND_POD, "default", p);
    nfx_step(f);
    json_t *s = start_of(a, "e");
    assert_non_null(s);
    json_t *env = JX_GET(json_array_get(JX_GET(s, "pod", "spec", "containers"), 0), "env");
    json_t *vals = json_object();
    size_t i;
    json_t *e;
    json_array_foreach(env, i, e) {
        assert_null(JX_GET(e, "valueFrom"));
        json_object_set(vals, JX_STR(e, "name"), json_object_get(e, "value"));
    }
    json_t *pod = nfx_get(f, KIND_POD, "default", "e");
    assert_string_equal(JX_STR(vals, "POD_NAME"), "e");
    assert_string_equal(JX_STR(vals, "APP"), "trainer");
    assert_string_equal(JX_STR(vals, "NODE"), JX_STR(pod, "spec", "nodeName"));
    assert_string_equal(JX_STR(vals, "IP"), "127.0.0.1");
    assert_string_equal(JX_STR(vals, "MODE"), "fast");
    assert_string_equal(JX_STR(vals, "CPUS"), "1"); /* 500m rounded up */
    assert_string_equal(JX_STR(vals, "PLAIN"), "x");
    assert_string_equal(JX_STR(vals, "CFG_LEVEL"), "3");
    json_decref(pod);
    json_decref(vals);
}

static bool file_is(const char *path, const char *want)
{
    FILE *fp = fopen(path, "r");
    char buf[256] = "";
    size_t n = fp ? fread(buf, 1, sizeof(buf) - 1, fp) : 0;
    buf[n] = '\0';
    if (fp)
        fclose(fp);
    return fp && !strcmp(buf, want);
}

static void test_volumes_are_materialised_and_mounted(void **state)
{
    struct afx *a = *state;
    struct nfx *f = a->f;
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("p", "e2-standard-4", json_pack("{s:i}", "initialNodeCount", 1)));
    json_t *p = nfx_pod("default", "v", "1", "1Gi", 0);
    JX_SET_NEW(p, json_pack("[{s:s,s:{s:s}},{s:s,s:{s:s,s:[{s:s,s:s}]}},{s:s,s:{}}]", "name",
                            "script", "configMap", "name", "jax-train-script", "name", "one",
                            "configMap", "name", "jax-train-script", "items", "key", "train.py",
                            "path", "sub/renamed.py", "name", "scratch", "emptyDir"),
               "spec", "volumes");
    json_object_set_new(json_array_get(JX_GET(p, "spec", "containers"), 0), "volumeMounts",
                        json_pack("[{s:s,s:s},{s:s,s:s},{s:s,s:s}]", "name", "script",
                                  "mountPath", "/app", "name", "one", "mountPath", "/one",
                                  "name", "scratch", "mountPath", "/scratch"));
    nfx_create(f, KIND_POD, "default", p);
    nfx_step(f);
    assert_null(start_of(a, "v")); /* its ConfigMap does not exist yet */
    assert_true(nfx_has_event(f, "v", "FailedMount"));
    nfx_create(f, KIND_CONFIGMAP, "default",
               json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s}}", "apiVersion", "v1", "kind",
                         "ConfigMap", "metadata", "name", "jax-train-script", "namespace",
                         "default", "data", "train.py", "print('hi')\n", "README", "r"));
    nfx_advance(f, 5 * SEC);
    json_t *s = start_of(a, "v");
    assert_non_null(s);
    char *uid = uid_of(f, "v");
    char *vol = xasprintf("%s/pods/%s/volumes", a->dir, uid);
    char *path = xasprintf("%s/script/train.py", vol);
    assert_true(file_is(path, "print('hi')\n"));
    xfree(path);
    path = xasprintf("%s/one/sub/renamed.py", vol);
    assert_true(file_is(path, "print('hi')\n"));
    xfree(path);
    path = xasprintf("%s/one/README", vol);
    assert_int_not_equal(access(path, F_OK), 0); /* items select keys */
    xfree(path);
    path = xasprintf("%s/scratch", vol);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    xfree(path);
    path = xasprintf("%s/script", vol);
    assert_string_equal(JX_STR(s, "mounts", "/app"), path);
    xfree(path);
    xfree(vol);
    xfree(uid);
}

static void test_reports_become_pod_status(void **state)
{
    struct afx *a = *state;
    struct nfx *f = a->f;
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("p", "e2-standard-4", json_pack("{s:i}", "initialNodeCount", 1)));
    nfx_create(f, KIND_POD, "default", nfx_pod("default", "r", "1", "1Gi", 0));
    nfx_step(f);
    char *uid = uid_of(f, "r");
    push(a->fe, uid, EXEC_RUNNING, 0, "Started", NULL, nfx_now(f));
    nfx_step(f);
    json_t *p = nfx_get(f, KIND_POD, "default", "r");
    assert_string_equal(JX_STR(p, "status", "phase"), "Running");
    assert_non_null(JX_STR(p, "status", "startTime"));
    assert_string_equal(JX_STR(p, "status", "podIP"), "127.0.0.1");
    assert_string_equal(JX_STR(p, "status", "hostIP"), "127.0.0.1");
    assert_true(api_cond_is_true(p, "Ready"));
    assert_true(api_cond_is_true(p, "ContainersReady"));
    assert_true(api_cond_is_true(p, "Initialized"));
    assert_true(api_cond_is_true(p, "PodScheduled"));
    json_t *cs = json_array_get(JX_GET(p, "status", "containerStatuses"), 0);
    assert_string_equal(JX_STR(cs, "name"), "main");
    assert_non_null(JX_GET(cs, "state", "running", "startedAt"));
    json_decref(p);
    push(a->fe, uid, EXEC_RUNNING, 0, "Started", json_pack("{s:f,s:i}", "loss", 0.25, "epoch", 40),
         nfx_now(f));
    nfx_step(f);
    p = nfx_get(f, KIND_POD, "default", "r");
    json_t *m = json_loads(api_annotation(p, "cueue.dev/metrics"), 0, NULL);
    assert_int_equal(JX_INT(m, -1, "epoch"), 40);
    json_decref(m);
    json_decref(p);
    push(a->fe, uid, EXEC_FAILED, 3, "Error", NULL, nfx_now(f));
    nfx_step(f);
    p = nfx_get(f, KIND_POD, "default", "r");
    assert_string_equal(JX_STR(p, "status", "phase"), "Failed");
    cs = json_array_get(JX_GET(p, "status", "containerStatuses"), 0);
    assert_int_equal(JX_INT(cs, -1, "state", "terminated", "exitCode"), 3);
    assert_string_equal(JX_STR(cs, "state", "terminated", "reason"), "Error");
    assert_non_null(JX_STR(cs, "state", "terminated", "finishedAt"));
    assert_string_equal(nfx_cond_reason(p, "Ready"), "PodCompleted");
    assert_non_null(api_annotation(p, "cueue.dev/metrics")); /* kept */
    json_decref(p);
    assert_false(has_finalizer(f, "r"));
    xfree(uid);
}

static void test_delete_stops_with_grace_then_removes(void **state)
{
    struct afx *a = *state;
    struct nfx *f = a->f;
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("p", "e2-standard-4", json_pack("{s:i}", "initialNodeCount", 1)));
    json_t *p = nfx_pod("default", "d", "1", "1Gi", 0);
    JX_SET_NEW(p, json_integer(5), "spec", "terminationGracePeriodSeconds");
    nfx_create(f, KIND_POD, "default", p);
    nfx_create(f, KIND_POD, "default", nfx_pod("default", "d30", "1", "1Gi", 0));
    nfx_step(f);
    char *uid = uid_of(f, "d");
    push(a->fe, uid, EXEC_RUNNING, 0, "Started", NULL, nfx_now(f));
    nfx_step(f);
    assert_int_equal(store_delete(f->s, KIND_POD, "default", "d", NULL, NULL), 0);
    assert_int_equal(store_delete(f->s, KIND_POD, "default", "d30", NULL, NULL), 0);
    nfx_step(f);
    json_t *still = nfx_get(f, KIND_POD, "default", "d");
    assert_non_null(still); /* the finalizer holds it while processes run */
    assert_true(api_is_deleting(still));
    json_decref(still);
    assert_int_equal(json_array_size(a->fe->stops), 2);
    size_t i;
    json_t *s;
    json_array_foreach(a->fe->stops, i, s)
        assert_int_equal(JX_INT(s, -1, "grace"), !strcmp(JX_STR(s, "uid"), uid) ? 5000 : 30000);
    push(a->fe, uid, EXEC_FAILED, 143, "Error", NULL, nfx_now(f));
    nfx_step(f);
    assert_null(nfx_get(f, KIND_POD, "default", "d"));
    xfree(uid);
}

static void test_pod_on_a_vanished_node_fails(void **state)
{
    struct afx *a = *state;
    struct nfx *f = a->f;
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("p", "e2-standard-4", json_pack("{s:i}", "initialNodeCount", 1)));
    nfx_create(f, KIND_POD, "default", nfx_pod("default", "n", "1", "1Gi", 0));
    nfx_step(f);
    char *uid = uid_of(f, "n");
    json_t *p = nfx_get(f, KIND_POD, "default", "n");
    assert_int_equal(store_delete(f->s, KIND_NODE, NULL, JX_STR(p, "spec", "nodeName"), NULL,
                                  NULL), 0);
    json_decref(p);
    assert_int_equal(store_delete(f->s, KIND_NODEPOOL, NULL, "p", NULL, NULL), 0);
    nfx_step(f);
    json_t *s = json_array_get(a->fe->stops, 0);
    assert_non_null(s);
    assert_int_equal(JX_INT(s, -1, "grace"), 0);
    push(a->fe, uid, EXEC_FAILED, 137, "Error", NULL, nfx_now(f));
    nfx_step(f);
    p = nfx_get(f, KIND_POD, "default", "n");
    assert_string_equal(JX_STR(p, "status", "phase"), "Failed");
    assert_string_equal(JX_STR(p, "status", "reason"), "NodeLost");
    json_decref(p);
    xfree(uid);
}

/* A control-plane restart: the loop and its reconcilers go (the node
 * agent forgets what it tracked), the store and the executor stay. */
static void restart_ctrl(struct nfx *f)
{
    ctrl_free(f->c);
    json_decref(f->traces);
    nfx_ctrl_new(f);
}

/* A running pod "r" (started, reported Running), then a restart. */
static char *running_then_restart(struct afx *a)
{
    struct nfx *f = a->f;
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("p", "e2-standard-4", json_pack("{s:i}", "initialNodeCount", 1)));
    nfx_create(f, KIND_POD, "default", nfx_pod("default", "r", "1", "1Gi", 0));
    nfx_step(f);
    char *uid = uid_of(f, "r");
    push(a->fe, uid, EXEC_RUNNING, 0, "Started", NULL, nfx_now(f));
    nfx_step(f);
    assert_int_equal(json_array_size(a->fe->starts), 1);
    restart_ctrl(f);
    nfx_step(f);
    return uid;
}

static void test_restart_adopts_running_pods(void **state)
{
    struct afx *a = *state;
    struct nfx *f = a->f;
    char *uid = running_then_restart(a);
    assert_int_equal(json_array_size(a->fe->adopts), 1);
    assert_string_equal(json_string_value(json_array_get(a->fe->adopts, 0)), uid);
    assert_int_equal(json_array_size(a->fe->starts), 1); /* not started again */
    json_t *p = nfx_get(f, KIND_POD, "default", "r");
    assert_string_equal(JX_STR(p, "status", "phase"), "Running");
    assert_null(JX_STR(p, "status", "reason"));
    json_decref(p);
    /* its reports flow again: the exit that happened meanwhile ends it */
    push(a->fe, uid, EXEC_SUCCEEDED, 0, "Completed", NULL, nfx_now(f));
    nfx_step(f);
    p = nfx_get(f, KIND_POD, "default", "r");
    assert_string_equal(JX_STR(p, "status", "phase"), "Succeeded");
    json_decref(p);
    assert_false(has_finalizer(f, "r"));
    xfree(uid);
}

static void test_restart_with_processes_gone_is_process_lost(void **state)
{
    struct afx *a = *state;
    struct nfx *f = a->f;
    a->fe->adopt_rc = CU_ENOTFOUND;
    char *uid = running_then_restart(a);
    assert_int_equal(json_array_size(a->fe->adopts), 1);
    json_t *p = nfx_get(f, KIND_POD, "default", "r");
    assert_string_equal(JX_STR(p, "status", "phase"), "Failed");
    assert_string_equal(JX_STR(p, "status", "reason"), "ProcessLost");
    json_decref(p);
    assert_false(has_finalizer(f, "r"));
    assert_int_equal(json_array_size(a->fe->starts), 1);
    xfree(uid);
}

static void test_restart_without_adopt_is_process_lost(void **state)
{
    struct afx *a = *state;
    a->fe->base.ops = &fake_ops_no_adopt;
    char *uid = running_then_restart(a);
    json_t *p = nfx_get(a->f, KIND_POD, "default", "r");
    assert_string_equal(JX_STR(p, "status", "reason"), "ProcessLost");
    json_decref(p);
    a->fe->base.ops = &fake_ops;
    xfree(uid);
}

/* Pod q started (the finalizer on it, one start) but never reported,
 * then the control plane restarts and offers it to adopt once. */
static void started_then_restart(struct afx *a)
{
    struct nfx *f = a->f;
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("p", "e2-standard-4", json_pack("{s:i}", "initialNodeCount", 1)));
    nfx_create(f, KIND_POD, "default", nfx_pod("default", "q", "1", "1Gi", 0));
    nfx_step(f);
    assert_true(has_finalizer(f, "q"));
    assert_int_equal(json_array_size(a->fe->starts), 1);
    restart_ctrl(f);
    nfx_step(f);
    assert_int_equal(json_array_size(a->fe->adopts), 1);
}

static void test_restart_restarts_a_pending_pod_with_nothing_left(void **state)
{
    struct afx *a = *state;
    struct nfx *f = a->f;
    a->fe->adopt_rc = CU_ENOTFOUND;
    started_then_restart(a);
    assert_int_equal(json_array_size(a->fe->starts), 2); /* started afresh */
    json_t *p = nfx_get(f, KIND_POD, "default", "q");
    assert_null(JX_STR(p, "status", "reason"));
    json_decref(p);
}

/* At most once: a Pending pod that started before the restart (the
 * executor's marker says so) but left nothing is failed, never started
 * again. */
static void test_restart_fails_a_started_pod_with_nothing_left(void **state)
{
    struct afx *a = *state;
    struct nfx *f = a->f;
    a->fe->adopt_rc = CU_EEXIST;
    started_then_restart(a);
    assert_int_equal(json_array_size(a->fe->starts), 1); /* not started again */
    json_t *p = nfx_get(f, KIND_POD, "default", "q");
    assert_string_equal(JX_STR(p, "status", "phase"), "Failed");
    assert_string_equal(JX_STR(p, "status", "reason"), "ProcessLost");
    assert_non_null(strstr(JX_STR(p, "status", "message"), "not run a second time"));
    json_decref(p);
    assert_false(has_finalizer(f, "q"));
}

static void test_restart_then_delete_stops_the_adopted_pod(void **state)
{
    struct afx *a = *state;
    struct nfx *f = a->f;
    char *uid = running_then_restart(a);
    assert_int_equal(store_delete(f->s, KIND_POD, "default", "r", NULL, NULL), 0);
    nfx_step(f);
    assert_int_equal(json_array_size(a->fe->stops), 1);
    assert_string_equal(JX_STR(json_array_get(a->fe->stops, 0), "uid"), uid);
    push(a->fe, uid, EXEC_FAILED, 143, "Error", NULL, nfx_now(f));
    nfx_step(f);
    assert_null(nfx_get(f, KIND_POD, "default", "r"));
    xfree(uid);
}

/* The real executor, through the whole control plane. */
static void test_real_process_runs_to_completion(void **state)
{
    (void)state;
    char dir[64];
    snprintf(dir, sizeof(dir), "/tmp/cueue-agent-XXXXXX");
    assert_non_null(mkdtemp(dir));
    const char *bin = getenv("CUEUE_BIN");
    char *copy = xstrdup(bin ? bin : "./cueue");
    char *probe = xasprintf("%s/exec_probe", dirname(copy));
    xfree(copy);
    if (access(probe, X_OK) != 0)
        fail_msg("helper %s missing: build the exec_probe target", probe);
    struct nfx *f = nfx_new();
    f->exec = exec_local_new(dir);
    exec_local_set_stop_on_free(f->exec, true);
    f->state_dir = dir;
    nfx_start(f);
    nfx_create(f, KIND_NODEPOOL, NULL,
               nfx_pool("p", "e2-standard-4", json_pack("{s:i}", "initialNodeCount", 1)));
    json_t *p = nfx_pod("default", "real", "1", "1Gi", 0);
    json_t *ctr = json_array_get(JX_GET(p, "spec", "containers"), 0);
    json_object_set_new(ctr, "command", json_pack("[s]", probe));
    json_object_set_new(ctr, "args", json_pack("[s,s,s,s,s,s]", "env", "POD", "metric",
                                               "{\"epoch\": 4}", "exit", "0"));
    json_object_set_new(ctr, "env", json_pack("[{s:s,s:{s:{s:s}}}]", "name", "POD", "valueFrom",
                                              "fieldRef", "fieldPath", "metadata.name"));
    nfx_create(f, KIND_POD, "default", p);
    const char *phase = NULL;
    json_t *pod = NULL;
    int64_t deadline = clk_now(clk_real()) + 15000;
    while (clk_now(clk_real()) < deadline) {
        nfx_step(f);
        json_decref(pod);
        pod = nfx_get(f, KIND_POD, "default", "real");
        phase = JX_STR(pod, "status", "phase");
        if (phase && !strcmp(phase, "Succeeded"))
            break;
        store_wait(f->s, store_rv(f->s), 50); /* woken by the executor's notify */
    }
    assert_string_equal(phase, "Succeeded");
    json_t *m = json_loads(api_annotation(pod, "cueue.dev/metrics"), 0, NULL);
    assert_int_equal(JX_INT(m, -1, "epoch"), 4);
    json_decref(m);
    char *log = exec_log_path(dir, api_uid(pod), "main");
    assert_true(file_is(log, "POD=real\n"));
    xfree(log);
    json_decref(pod);
    void *fp = f;
    struct exec *x = f->exec;
    nfx_teardown(&fp);
    x->ops->free(x);
    char *cmd = xasprintf("rm -rf '%s'", dir);
    if (system(cmd) != 0) {}
    xfree(cmd);
    xfree(probe);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_without_executor_bound_pods_stay_pending, nfx_setup,
                                        nfx_teardown),
        cmocka_unit_test_setup_teardown(test_multi_host_tpu_env_and_metrics_file, afx_setup,
                                        afx_teardown),
        cmocka_unit_test_setup_teardown(test_single_host_tpu_gets_worker_identity, afx_setup,
                                        afx_teardown),
        cmocka_unit_test_setup_teardown(test_env_value_from_is_resolved, afx_setup, afx_teardown),
        cmocka_unit_test_setup_teardown(test_volumes_are_materialised_and_mounted, afx_setup,
                                        afx_teardown),
        cmocka_unit_test_setup_teardown(test_reports_become_pod_status, afx_setup, afx_teardown),
        cmocka_unit_test_setup_teardown(test_delete_stops_with_grace_then_removes, afx_setup,
                                        afx_teardown),
        cmocka_unit_test_setup_teardown(test_pod_on_a_vanished_node_fails, afx_setup,
                                        afx_teardown),
        cmocka_unit_test_setup_teardown(test_restart_adopts_running_pods, afx_setup,
                                        afx_teardown),
        cmocka_unit_test_setup_teardown(test_restart_with_processes_gone_is_process_lost,
                                        afx_setup, afx_teardown),
        cmocka_unit_test_setup_teardown(test_restart_without_adopt_is_process_lost, afx_setup,
                                        afx_teardown),
        cmocka_unit_test_setup_teardown(test_restart_restarts_a_pending_pod_with_nothing_left,
                                        afx_setup, afx_teardown),
        cmocka_unit_test_setup_teardown(test_restart_fails_a_started_pod_with_nothing_left,
                                        afx_setup, afx_teardown),
        cmocka_unit_test_setup_teardown(test_restart_then_delete_stops_the_adopted_pod,
                                        afx_setup, afx_teardown),
        cmocka_unit_test(test_real_process_runs_to_completion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
