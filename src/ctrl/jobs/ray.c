/*
 * jobs/ray: what the KubeRay operator does for a RayJob
 * (shared/spec/provisioning.md §3), on this machine. There is no RayCluster
 * object: the cluster's Pods are owned by the RayJob directly and labelled
 * ray.io/cluster=<status.rayClusterName>. Deployment states:
 *   "" (New) / Suspended --unsuspend--> Initializing (cluster Pods created)
 *   Initializing --every cluster pod running--> Running (submitter Job)
 *   Running --submitter Job Complete/Failed--> Complete / Failed
 *   Initializing/Running --spec.suspend--> Suspending --all gone--> Suspended
 * A Ray pod that fails (here: `ray` cannot be executed, the executor's
 * StartError) fails the RayJob at once with a message naming the cause,
 * instead of waiting forever for a cluster that cannot come up.
 *
 * Commands: KubeRay wraps `ray start` in a bash line (`ulimit -n ...; ray
 * start ...`); cueue runs the `ray` program directly (argv, parameters
 * sorted as KubeRay sorts them) so a missing Ray is reported as a start
 * error of the pod. Ports: KubeRay's named container ports (gcs-server,
 * dashboard, client, metrics; defaults 6379, 8265, 10001, 8080) and the
 * dashboard agent's 52365. Pods with their own IP (ctrl_config
 * pods_have_own_ip) listen on those; pods sharing the host's ports (the
 * process executor) each get a block of RAY_PORT_BLOCK ports derived from
 * a key (the cluster name for the head, the pod name for a worker), and
 * their containerPorts are rewritten to it so that a Service's named
 * targetPort finds them. The head's address is 127.0.0.1 on the host's
 * ports, its Service name otherwise; status.dashboardURL keeps KubeRay's
 * service name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "api/meta.h"
#include "api/schema.h"
#include "ctrl/jobs/jobs.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/rng.h"
#include "util/sbuf.h"
#include "util/sha1.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#define RAY_SUBMITTER_BACKOFF_LIMIT 2
/* Host-port blocks: RAY_PORT_BLOCKS blocks of RAY_PORT_BLOCK ports from
 * RAY_PORT_BASE (jobs.h's host port range, jobs_master_port's too). */
#define RAY_PORT_BASE JOBS_HOST_PORT_BASE
#define RAY_PORT_BLOCK 16
#define RAY_PORT_BLOCKS (JOBS_HOST_PORTS / RAY_PORT_BLOCK)

const char *jobs_ray_mode(const json_t *rj)
{
    const char *m = JX_STR(rj, "spec", "submissionMode");
    return m && m[0] ? m : "K8sJobMode";
}

static const char *head_image(const json_t *rj)
{
    const json_t *c0 = json_array_get(
        JX_GET(rj, "spec", "rayClusterSpec", "headGroupSpec", "template", "spec", "containers"),
        0);
    return jx_or_empty(JX_STR(c0, "image"));
}

json_t *jobs_ray_default_submitter(const json_t *rj)
{
    return json_pack("{s:{s:[{s:s, s:s, s:{s:{s:s, s:s}, s:{s:s, s:s}}}], s:s}}", "spec",
                     "containers", "name", "ray-job-submitter", "image", head_image(rj),
                     "resources", "requests", "cpu", "500m", "memory", "200Mi", "limits", "cpu",
                     "1", "memory", "1Gi", "restartPolicy", "Never");
}

/* ---- the cluster's pods ---- */

struct ray_param {
    char *key;
    char *value; /* NULL = bare flag */
};

static int cmp_param(const void *a, const void *b)
{
    return strcmp(((const struct ray_param *)a)->key, ((const struct ray_param *)b)->key);
}

static void param_add(struct ray_param *ps, size_t *n, const char *k, const char *v)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(ps[i].key, k))
            return; /* the user's rayStartParams win */
    ps[*n].key = xstrdup(k);
    ps[*n].value = v ? xstrdup(v) : NULL;
    (*n)++;
}

/* The resource amount a container declares (limit, else request), 0 if none. */
static int64_t ctr_amount(const json_t *ctr, const char *res)
{
    const json_t *v = JX_GET(ctr, "resources", "limits", res);
    if (!v)
        v = JX_GET(ctr, "resources", "requests", res);
    return v ? kq_quantity_value(v, res) : 0;
}

/* ---- ports ---- */

/* Ray's ports, in block order: KubeRay's container-port name, the `ray
 * start` parameter that sets it, the default. */
enum ray_port { RP_GCS, RP_DASHBOARD, RP_CLIENT, RP_METRICS, RP_AGENT, RP_KNOWN };
static const struct {
    const char *name;
    const char *param;
    int def;
} ray_known_ports[RP_KNOWN] = {
    {"gcs-server", "port", 6379},
    {"dashboard", "dashboard-port", 8265},
    {"client", "ray-client-server-port", 10001},
    {"metrics", "metrics-export-port", 8080},
    {"dashboard-agent", "dashboard-agent-listen-port", 52365},
};

/* The first port of key's host-port block. */
static int port_block(const char *key)
{
    return RAY_PORT_BASE + (int)(sha1_u32(key, strlen(key)) % RAY_PORT_BLOCKS) * RAY_PORT_BLOCK;
}

/* The ports of one Ray pod of group: with host_net, key's block; else the
 * group template's named containerPort, the group's rayStartParams, or
 * Ray's default, in that order. */
static void ray_ports(const json_t *group, bool host_net, const char *key, int out[RP_KNOWN])
{
    int base = host_net ? port_block(key) : 0;
    const json_t *spec = JX_GET(group, "template", "spec");
    for (int i = 0; i < RP_KNOWN; i++) {
        if (host_net) {
            out[i] = base + i;
            continue;
        }
        out[i] = jobs_pod_named_port(spec, ray_known_ports[i].name);
        const char *v = JX_STR(group, "rayStartParams", ray_known_ports[i].param);
        char *end = NULL;
        long n = v ? strtol(v, &end, 10) : 0;
        if (!out[i] && v && end && !*end)
            out[i] = (int)(n > 0 && n <= 65535 ? n : 0);
        if (out[i] <= 0 || out[i] > 65535)
            out[i] = ray_known_ports[i].def;
    }
}

/* The head's ports for cluster (its block key is the cluster name). */
static void head_ports(struct ctrl *c, const json_t *rj, const char *cluster, int out[RP_KNOWN])
{
    ray_ports(JX_GET(rj, "spec", "rayClusterSpec", "headGroupSpec"),
              !ctrl_cfg(c)->pods_have_own_ip, cluster, out);
}

/* The host the head listens on, as pods and the submitter reach it
 * (caller frees). */
static char *head_host(struct ctrl *c, const json_t *rj, const char *cluster)
{
    if (!ctrl_cfg(c)->pods_have_own_ip)
        return xstrdup("127.0.0.1");
    return xasprintf("%s-head-svc.%s.svc.cluster.local", cluster, jx_or_empty(api_namespace(rj)));
}

/* Give the pod's containers the ports chosen: KubeRay's named ports the
 * first container lacks are added (head: gcs-server, dashboard, client,
 * metrics; worker: metrics); with host_net every declared port moves into
 * the pod's block (Ray's named ones to their slot, others after them). */
static void set_container_ports(json_t *spec, bool head, bool host_net, const int ports[RP_KNOWN])
{
    json_t *ctr0 = json_array_get(JX_GET(spec, "containers"), 0);
    if (!ctr0)
        return;
    for (int i = head ? 0 : RP_METRICS; i <= RP_METRICS; i++) {
        if (jobs_pod_named_port(spec, ray_known_ports[i].name))
            continue;
        json_t *arr = json_object_get(ctr0, "ports");
        if (!json_is_array(arr)) {
            arr = json_array();
            json_object_set_new(ctr0, "ports", arr);
        }
        json_array_append_new(arr, json_pack("{s:s, s:i, s:s}", "name", ray_known_ports[i].name,
                                             "containerPort", ports[i], "protocol", "TCP"));
    }
    if (!host_net)
        return;
    int next = ports[0] + RP_KNOWN; /* block slots after Ray's own */
    size_t i, j;
    json_t *ctr, *p;
    json_array_foreach(JX_GET(spec, "containers"), i, ctr) {
        json_array_foreach(JX_GET(ctr, "ports"), j, p) {
            const char *name = jx_or_empty(JX_STR(p, "name"));
            int to = 0;
            for (int k = 0; k < RP_KNOWN && !to; k++)
                if (!strcmp(name, ray_known_ports[k].name))
                    to = ports[k];
            if (!to && next < ports[0] + RAY_PORT_BLOCK)
                to = next++;
            if (to)
                json_object_set_new(p, "containerPort", json_integer(to));
        }
    }
}

/* argv for `ray start` (KubeRay common/pod.go, parameters sorted); the
 * pod's ports (ports) and the head's address come first, so they win. */
static json_t *ray_start_argv(const json_t *group, const json_t *ctr, bool head, bool autoscale,
                              const int ports[RP_KNOWN], const char *gcs_addr)
{
    const json_t *user = JX_GET(group, "rayStartParams");
    struct ray_param ps[64] = {{0}};
    size_t n = 0;
    char buf[128];
    for (int i = head ? 0 : RP_METRICS; i < RP_KNOWN; i++) {
        snprintf(buf, sizeof(buf), "%d", ports[i]);
        param_add(ps, &n, ray_known_ports[i].param, buf);
    }
    if (!head)
        param_add(ps, &n, "address", gcs_addr);
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)user, k, v) {
        if (n < 48 && json_is_string(v))
            param_add(ps, &n, k, strcmp(json_string_value(v), "true") ? json_string_value(v)
                                                                      : NULL);
    }
    param_add(ps, &n, "block", NULL);
    if (head)
        param_add(ps, &n, "dashboard-host", "0.0.0.0");
    if (head && autoscale)
        param_add(ps, &n, "no-monitor", NULL);
    int64_t cpu = ctr_amount(ctr, "cpu");
    if (cpu > 0) {
        snprintf(buf, sizeof(buf), "%lld", (long long)((cpu + 999) / 1000));
        param_add(ps, &n, "num-cpus", buf);
    }
    int64_t mem = ctr_amount(ctr, "memory");
    if (mem > 0) {
        snprintf(buf, sizeof(buf), "%lld", (long long)mem);
        param_add(ps, &n, "memory", buf);
    }
    int64_t gpu = ctr_amount(ctr, "nvidia.com/gpu");
    if (gpu > 0) {
        snprintf(buf, sizeof(buf), "%lld", (long long)gpu);
        param_add(ps, &n, "num-gpus", buf);
    }
    int64_t tpu = ctr_amount(ctr, "google.com/tpu");
    if (tpu > 0) {
        snprintf(buf, sizeof(buf), "{\"TPU\":%lld}", (long long)tpu);
        param_add(ps, &n, "resources", buf);
    }
    qsort(ps, n, sizeof(ps[0]), cmp_param);
    json_t *argv = json_pack("[s, s]", "ray", "start");
    if (head)
        json_array_append_new(argv, json_string("--head"));
    for (size_t i = 0; i < n; i++) {
        char *arg = ps[i].value ? xasprintf("--%s=%s", ps[i].key, ps[i].value)
                                : xasprintf("--%s", ps[i].key);
        json_array_append_new(argv, json_string(arg));
        xfree(arg);
        xfree(ps[i].key);
        xfree(ps[i].value);
    }
    return argv;
}

static void add_env(json_t *env, const char *name, const char *value)
{
    json_array_append_new(env, json_pack("{s:s, s:s}", "name", name, "value", value));
}

/* Identity of one cluster pod. */
struct ray_slot {
    bool head;
    const json_t *group; /* headGroupSpec or workerGroupSpecs[i] */
    const char *group_name;
    int64_t replica, host, hosts;
};

/* KubeRay's env of a Ray pod: RAY_IP/RAY_PORT/RAY_ADDRESS name the head's
 * GCS (gcs_host, gcs_port). */
static void slot_env(const json_t *rj, const char *cluster, const struct ray_slot *s,
                     json_t *spec, json_t *env, const char *gcs_host, int gcs_port)
{
    char buf[64];
    add_env(env, "RAY_CLUSTER_NAME", cluster);
    add_env(env, "RAY_CLUSTER_NAMESPACE", jx_or_empty(api_namespace(rj)));
    add_env(env, "RAY_IP", gcs_host);
    snprintf(buf, sizeof(buf), "%d", gcs_port);
    add_env(env, "RAY_PORT", buf);
    char *addr = xasprintf("%s:%d", gcs_host, gcs_port);
    add_env(env, "RAY_ADDRESS", addr);
    xfree(addr);
    add_env(env, "RAY_USAGE_STATS_KUBERAY_IN_USE", "1");
    if (s->head || !kq_spec_uses_resource(spec, "google.com/tpu"))
        return;
    /* what the KubeRay TPU webhook injects; every host here is localhost */
    snprintf(buf, sizeof(buf), "%lld", (long long)s->host);
    add_env(env, "TPU_WORKER_ID", buf);
    char *slice = xasprintf("%s-%lld", s->group_name, (long long)s->replica);
    add_env(env, "TPU_NAME", slice);
    struct sbuf sb;
    sbuf_init(&sb, 0);
    for (int64_t i = 0; i < s->hosts; i++)
        sbuf_addf(&sb, "%slocalhost", i ? "," : "");
    add_env(env, "TPU_WORKER_HOSTNAMES", sb.buf);
    sbuf_release(&sb);
    const char *topo = JX_STR(spec, "nodeSelector", "cloud.google.com/gke-tpu-topology");
    if (topo)
        add_env(env, "TPU_TOPOLOGY", topo);
    char *host = xasprintf("%s-%lld", slice, (long long)s->host);
    json_object_set_new(spec, "hostname", json_string(host));
    char *sub = xasprintf("%s-headless", cluster);
    json_object_set_new(spec, "subdomain", json_string(sub));
    xfree(sub);
    xfree(host);
    xfree(slice);
}

static void slot_labels(json_t *pod, const json_t *rj, const char *cluster,
                        const struct ray_slot *s)
{
    char buf[32];
    api_set_label(pod, "ray.io/cluster", cluster);
    api_set_label(pod, "ray.io/node-type", s->head ? "head" : "worker");
    api_set_label(pod, "ray.io/group", s->head ? "headgroup" : s->group_name);
    api_set_label(pod, "ray.io/is-ray-node", "yes");
    char *ident = xasprintf("%s-%s", cluster, s->head ? "head" : "worker");
    api_set_label(pod, "ray.io/identifier", ident);
    xfree(ident);
    api_set_label(pod, "ray.io/originated-from-cr-name", api_name(rj));
    api_set_label(pod, "ray.io/originated-from-crd", "RayJob");
    api_set_label(pod, "app.kubernetes.io/created-by", "kuberay-operator");
    api_set_label(pod, "app.kubernetes.io/name", "kuberay");
    if (!s->head) {
        snprintf(buf, sizeof(buf), "%lld", (long long)s->replica);
        api_set_label(pod, "ray.io/worker-group-replica-index", buf);
        snprintf(buf, sizeof(buf), "%lld", (long long)s->host);
        api_set_label(pod, "ray.io/replica-host-index", buf);
        char *rn = xasprintf("%s-%s-%lld", cluster, s->group_name, (long long)s->replica);
        api_set_label(pod, "ray.io/worker-group-replica-name", rn);
        xfree(rn);
    }
}

static json_t *build_ray_pod(struct ctrl *c, const json_t *rj, const char *cluster,
                             const struct ray_slot *s)
{
    const json_t *tmpl = JX_GET(s->group, "template");
    char sfx[6];
    rng_suffix(ctrl_rng(c), sfx, 5);
    char *name = s->head ? xasprintf("%s-head-%s", cluster, sfx)
                         : xasprintf("%s-%s-worker-%s", cluster, s->group_name, sfx);
    json_t *pod = api_object_new("v1", "Pod", api_namespace(rj), name);
    xfree(name);
    json_t *md = JX_OBJ(pod, "metadata");
    json_t *l = JX_GET(tmpl, "metadata", "labels");
    json_t *a = JX_GET(tmpl, "metadata", "annotations");
    json_object_set_new(md, "labels", l ? jx_deep_copy(l) : json_object());
    if (a)
        json_object_set_new(md, "annotations", jx_deep_copy(a));
    slot_labels(pod, rj, cluster, s);
    api_owner_ref_add(pod, api_owner_ref_new(rj, true));
    json_t *spec = jx_deep_copy(JX_GET(tmpl, "spec"));
    if (!spec)
        spec = json_object();
    bool autoscale = JX_BOOL(rj, false, "spec", "rayClusterSpec", "enableInTreeAutoscaling");
    bool host_net = !ctrl_cfg(c)->pods_have_own_ip;
    int ports[RP_KNOWN], head[RP_KNOWN];
    head_ports(c, rj, cluster, head);
    if (s->head)
        memcpy(ports, head, sizeof(ports));
    else
        ray_ports(s->group, host_net, api_name(pod), ports);
    char *host = head_host(c, rj, cluster);
    char *gcs = xasprintf("%s:%d", host, head[RP_GCS]);
    set_container_ports(spec, s->head, host_net, ports);
    json_t *ctr0 = json_array_get(JX_GET(spec, "containers"), 0);
    if (ctr0 && !JX_GET(ctr0, "command"))
        json_object_set_new(ctr0, "command",
                            ray_start_argv(s->group, ctr0, s->head, autoscale, ports, gcs));
    xfree(gcs);
    if (s->head && autoscale && json_is_array(JX_GET(spec, "containers"))) {
        json_t *res = jx_deep_copy(
            JX_GET(rj, "spec", "rayClusterSpec", "autoscalerOptions", "resources"));
        if (!res)
            res = json_pack("{s:{s:s, s:s}, s:{s:s, s:s}}", "requests", "cpu", "500m", "memory",
                            "512Mi", "limits", "cpu", "500m", "memory", "512Mi");
        json_array_append_new(
            JX_GET(spec, "containers"),
            json_pack("{s:s, s:s, s:[s, s, s, s, s, s], s:o}", "name", "autoscaler", "image",
                      jx_or_empty(JX_STR(ctr0, "image")), "command", "ray", "kuberay-autoscaling",
                      "--cluster-name", cluster, "--cluster-namespace",
                      jx_or_empty(api_namespace(rj)), "resources", res));
    }
    json_t *env = json_array();
    slot_env(rj, cluster, s, spec, env, host, head[RP_GCS]);
    xfree(host);
    jobs_pod_add_env(spec, env);
    json_decref(env);
    json_object_set_new(pod, "spec", spec);
    JX_SET_NEW(pod, json_string("Pending"), "status", "phase");
    return pod;
}

/* The pod of slot s among pods (current cluster), or NULL. */
static const json_t *find_slot_pod(const json_t *pods, const char *cluster,
                                   const struct ray_slot *s)
{
    char r[32], h[32];
    snprintf(r, sizeof(r), "%lld", (long long)s->replica);
    snprintf(h, sizeof(h), "%lld", (long long)s->host);
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p) {
        const char *cl = api_label(p, "ray.io/cluster");
        if (!cl || strcmp(cl, cluster) || api_is_deleting(p))
            continue;
        const char *type = jx_or_empty(api_label(p, "ray.io/node-type"));
        if (s->head) {
            if (!strcmp(type, "head"))
                return p;
            continue;
        }
        if (!strcmp(type, "worker") &&
            !strcmp(jx_or_empty(api_label(p, "ray.io/group")), s->group_name) &&
            !strcmp(jx_or_empty(api_label(p, "ray.io/worker-group-replica-index")), r) &&
            !strcmp(jx_or_empty(api_label(p, "ray.io/replica-host-index")), h))
            return p;
    }
    return NULL;
}

struct cluster_state {
    int32_t desired;  /* worker pods wanted */
    int32_t running;  /* worker pods running */
    bool all_running; /* head and every worker running (or done) */
    char *failure;    /* first failed pod's text, or NULL */
    char *head_pod;
};

static void check_slot(struct ctrl *c, const json_t *rj, const char *cluster, const json_t *pods,
                       const struct ray_slot *s, struct cluster_state *cs)
{
    const json_t *p = find_slot_pod(pods, cluster, s);
    if (!p) {
        json_t *pod = build_ray_pod(c, rj, cluster, s);
        if (store_create(ctrl_store(c), KIND_POD, api_namespace(rj), pod, NULL) == 0 && s->head)
            cs->head_pod = xstrdup(api_name(pod));
        json_decref(pod);
        cs->all_running = false;
        return;
    }
    if (s->head)
        cs->head_pod = xstrdup(api_name(p));
    char *msg = NULL;
    if (!cs->failure && (jobs_pod_failed(p) || jobs_pod_start_failed(p, &msg))) {
        char *why = msg ? msg : jobs_pod_failure(p);
        cs->failure = xasprintf("Ray %s pod %s failed: %s", s->head ? "head" : "worker",
                                api_name(p), why);
        xfree(why);
        msg = NULL;
    }
    xfree(msg);
    const char *phase = jx_or_empty(JX_STR(p, "status", "phase"));
    bool up = !strcmp(phase, "Running") || !strcmp(phase, "Succeeded");
    if (!up)
        cs->all_running = false;
    else if (!s->head)
        cs->running++;
}

/* Create missing cluster pods and summarise their state. */
static void sync_cluster(struct ctrl *c, const json_t *rj, const char *cluster, const json_t *pods,
                         struct cluster_state *cs)
{
    memset(cs, 0, sizeof(*cs));
    cs->all_running = true;
    const json_t *spec = JX_GET(rj, "spec", "rayClusterSpec");
    struct ray_slot head = {true, JX_GET(spec, "headGroupSpec"), "headgroup", 0, 0, 1};
    check_slot(c, rj, cluster, pods, &head, cs);
    size_t i;
    json_t *wg;
    json_array_foreach(JX_GET(spec, "workerGroupSpecs"), i, wg) {
        int64_t replicas = JX_INT(wg, 1, "replicas");
        int64_t hosts = JX_INT(wg, 1, "numOfHosts");
        if (hosts < 1)
            hosts = 1;
        for (int64_t r = 0; r < replicas; r++) {
            for (int64_t h = 0; h < hosts; h++) {
                struct ray_slot s = {false, wg, jx_or_empty(JX_STR(wg, "groupName")), r, h, hosts};
                check_slot(c, rj, cluster, pods, &s, cs);
                cs->desired++;
            }
        }
    }
}

/* ---- the head Service ---- */

/* KubeRay's head Service <cluster>-head-svc: selects the head pod, one
 * port per named port of the head's first container (the manifest's
 * number, targetPort by name, so under the process executor it reaches
 * the pod's own block; jobs/endpoints.c resolves it). Owned by the RayJob,
 * so garbage collection removes it with the RayJob. */
static void ensure_head_service(struct ctrl *c, const json_t *rj, const char *cluster)
{
    char *name = xasprintf("%s-head-svc", cluster);
    json_t *cur = store_get(ctrl_store(c), KIND_SERVICE, api_namespace(rj), name);
    if (cur) {
        json_decref(cur);
        xfree(name);
        return;
    }
    const json_t *head = JX_GET(rj, "spec", "rayClusterSpec", "headGroupSpec");
    int ports[RP_KNOWN];
    ray_ports(head, false, cluster, ports);
    json_t *spec = jx_deep_copy(JX_GET(head, "template", "spec"));
    if (!spec)
        spec = json_object();
    set_container_ports(spec, true, false, ports);
    json_t *svc = api_object_new("v1", "Service", api_namespace(rj), name);
    api_set_label(svc, "ray.io/cluster", cluster);
    api_set_label(svc, "ray.io/node-type", "head");
    api_set_label(svc, "ray.io/originated-from-cr-name", api_name(rj));
    api_set_label(svc, "ray.io/originated-from-crd", "RayJob");
    api_set_label(svc, "app.kubernetes.io/created-by", "kuberay-operator");
    api_owner_ref_add(svc, api_owner_ref_new(rj, true));
    json_t *sp = json_array();
    size_t j;
    json_t *p;
    json_array_foreach(JX_GET(json_array_get(JX_GET(spec, "containers"), 0), "ports"), j, p) {
        const char *pn = JX_STR(p, "name");
        if (!pn || !pn[0])
            continue;
        json_array_append_new(sp, json_pack("{s:s, s:I, s:s, s:s}", "name", pn, "port",
                                            (json_int_t)JX_INT(p, 0, "containerPort"),
                                            "targetPort", pn, "protocol", "TCP"));
    }
    JX_SET_NEW(svc, json_pack("{s:s, s:s}", "ray.io/cluster", cluster, "ray.io/node-type", "head"),
               "spec", "selector");
    JX_SET_NEW(svc, sp, "spec", "ports");
    JX_SET_NEW(svc, json_string("ClusterIP"), "spec", "type");
    store_create(ctrl_store(c), KIND_SERVICE, api_namespace(rj), svc, NULL);
    json_decref(svc);
    json_decref(spec);
    xfree(name);
}

static void delete_head_service(struct ctrl *c, const json_t *rj)
{
    const char *cluster = JX_STR(rj, "status", "rayClusterName");
    if (!cluster)
        return;
    char *name = xasprintf("%s-head-svc", cluster);
    store_delete(ctrl_store(c), KIND_SERVICE, api_namespace(rj), name, NULL, NULL);
    xfree(name);
}

/* ---- the submitter Job ---- */

/* runtimeEnvYAML as compact JSON (caller frees), or NULL. */
static char *runtime_env_json(const json_t *rj)
{
    const char *y = JX_STR(rj, "spec", "runtimeEnvYAML");
    if (!y || !y[0])
        return NULL;
    json_t *docs = NULL;
    struct diag d;
    diag_init(&d);
    char *out = NULL;
    if (api_parse_documents(y, strlen(y), "runtimeEnvYAML", &docs, &d) == 0 &&
        json_array_size(docs) > 0)
        out = jx_dumps_sorted(json_array_get(docs, 0));
    diag_release(&d);
    json_decref(docs);
    return out;
}

/* The head's dashboard as the submitter reaches it (caller frees). */
static char *dashboard_addr(struct ctrl *c, const json_t *rj)
{
    const char *cluster = jx_or_empty(JX_STR(rj, "status", "rayClusterName"));
    int ports[RP_KNOWN];
    head_ports(c, rj, cluster, ports);
    char *host = head_host(c, rj, cluster);
    char *addr = xasprintf("http://%s:%d", host, ports[RP_DASHBOARD]);
    xfree(host);
    return addr;
}

static json_t *submit_argv(const json_t *rj, const char *addr)
{
    json_t *argv = json_pack("[s, s, s, s, s]", "ray", "job", "submit", "--address", addr);
    char *env = runtime_env_json(rj);
    if (env) {
        json_array_append_new(argv, json_string("--runtime-env-json"));
        json_array_append_new(argv, json_string(env));
        xfree(env);
    }
    json_array_append_new(argv, json_string("--submission-id"));
    json_array_append_new(argv, json_string(jx_or_empty(JX_STR(rj, "status", "jobId"))));
    json_array_append_new(argv, json_string("--"));
    json_array_append_new(argv, json_string(jx_or_empty(JX_STR(rj, "spec", "entrypoint"))));
    return argv;
}

static void create_submitter(struct ctrl *c, const json_t *rj)
{
    json_t *job = api_object_new("batch/v1", "Job", api_namespace(rj), api_name(rj));
    /* the uid is drawn here so that the selector the API server would
     * generate (kubectl logs job/NAME lists the pods it selects) can be
     * written with the Job */
    char uid[37];
    rng_uuid(ctrl_rng(c), uid);
    JX_SET_NEW(job, json_string(uid), "metadata", "uid");
    api_set_label(job, "ray.io/originated-from-cr-name", api_name(rj));
    api_set_label(job, "ray.io/originated-from-crd", "RayJob");
    api_set_label(job, "app.kubernetes.io/created-by", "kuberay-operator");
    api_owner_ref_add(job, api_owner_ref_new(rj, true));
    const json_t *sub = JX_GET(rj, "spec", "submitterPodTemplate");
    json_t *tmpl = sub ? jx_deep_copy(sub) : jobs_ray_default_submitter(rj);
    json_t *tspec = JX_OBJ(tmpl, "spec");
    if (!JX_STR(tspec, "restartPolicy"))
        json_object_set_new(tspec, "restartPolicy", json_string("Never"));
    json_t *ctr0 = json_array_get(JX_GET(tspec, "containers"), 0);
    char *addr = dashboard_addr(c, rj);
    if (ctr0 && !JX_GET(ctr0, "command"))
        json_object_set_new(ctr0, "command", submit_argv(rj, addr));
    json_t *env = json_array();
    add_env(env, "RAY_DASHBOARD_ADDRESS", addr);
    xfree(addr);
    add_env(env, "RAY_JOB_SUBMISSION_ID", jx_or_empty(JX_STR(rj, "status", "jobId")));
    jobs_pod_add_env(tspec, env);
    json_decref(env);
    json_t *spec = JX_OBJ(job, "spec");
    json_object_set_new(spec, "template", tmpl);
    api_job_generate_selector(job);
    json_object_set_new(spec, "backoffLimit",
                        json_integer(JX_INT(rj, RAY_SUBMITTER_BACKOFF_LIMIT, "spec",
                                            "submitterConfig", "backoffLimit")));
    store_create(ctrl_store(c), KIND_JOB, api_namespace(rj), job, NULL);
    json_decref(job);
}

/* The submitter Job if it exists and belongs to this RayJob (new ref). */
static json_t *get_submitter(struct ctrl *c, const json_t *rj)
{
    json_t *job = store_get(ctrl_store(c), KIND_JOB, api_namespace(rj), api_name(rj));
    if (job && strcmp(jx_or_empty(api_controller_uid(job)), jx_or_empty(api_uid(rj)))) {
        json_decref(job);
        return NULL;
    }
    return job;
}

/* Failure text of the submitter Job's pods; *start_err when a pod could
 * not start at all. Caller frees. */
static char *submitter_failure(struct ctrl *c, const json_t *job, bool *start_err)
{
    json_t *pods = store_list(ctrl_store(c), KIND_POD, api_namespace(job), NULL);
    char *out = NULL;
    *start_err = false;
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p) {
        if (strcmp(jx_or_empty(api_controller_uid(p)), jx_or_empty(api_uid(job))))
            continue;
        char *msg = NULL;
        if (jobs_pod_start_failed(p, &msg)) {
            xfree(out);
            out = msg;
            *start_err = true;
            break;
        }
        if (!out && jobs_pod_failed(p))
            out = jobs_pod_failure(p);
    }
    json_decref(pods);
    if (!out)
        out = xstrdup(jx_or_empty(JX_STR(api_cond_get(job, "Failed"), "message")));
    return out;
}

/* ---- status ---- */

/* Append a hint when the failure is the missing `ray` program. */
static char *with_ray_hint(const char *msg)
{
    if (strstr(msg, "\"ray\"") && (strstr(msg, "not found") || strstr(msg, "no such file")))
        return xasprintf("%s (Ray is not installed on this machine: no `ray` executable on "
                         "PATH)",
                         msg);
    return xstrdup(msg);
}

static void set_now(struct ctrl *c, json_t *st, const char *key)
{
    char ts[TIMEFMT_LEN];
    json_object_set_new(st, key, json_string(timefmt_rfc3339(ctrl_now(c), false, ts)));
}

static void finish(struct ctrl *c, const json_t *rj, json_t *st, const char *dep,
                   const char *reason, const char *message)
{
    json_object_set_new(st, "jobDeploymentStatus", json_string(dep));
    if (reason)
        json_object_set_new(st, "reason", json_string(reason));
    char *m = with_ray_hint(jx_or_empty(message));
    json_object_set_new(st, "message", json_string(m));
    set_now(c, st, "endTime");
    if (strcmp(dep, "Complete"))
        ctrl_event(c, rj, "Warning", reason ? reason : "Failed", "%s", m);
    xfree(m);
}

static void initialize(struct ctrl *c, const json_t *rj, json_t *st)
{
    char sfx[6];
    rng_suffix(ctrl_rng(c), sfx, 5);
    char *cluster = xasprintf("%s-%s", api_name(rj), sfx);
    const char *user_id = JX_STR(rj, "spec", "jobId");
    rng_suffix(ctrl_rng(c), sfx, 5);
    char *job_id = user_id && user_id[0] ? xstrdup(user_id) : xasprintf("%s-%s", api_name(rj), sfx);
    int dash = jobs_pod_named_port(
        JX_GET(rj, "spec", "rayClusterSpec", "headGroupSpec", "template", "spec"), "dashboard");
    char *url = xasprintf("%s-head-svc.%s.svc.cluster.local:%d", cluster,
                          jx_or_empty(api_namespace(rj)),
                          dash ? dash : ray_known_ports[RP_DASHBOARD].def);
    json_object_set_new(st, "jobId", json_string(job_id));
    json_object_set_new(st, "rayClusterName", json_string(cluster));
    json_object_set_new(st, "dashboardURL", json_string(url));
    json_object_set_new(st, "jobStatus", json_string(""));
    json_object_set_new(st, "jobDeploymentStatus", json_string("Initializing"));
    json_object_del(st, "endTime");
    json_object_del(st, "reason");
    json_object_del(st, "message");
    json_object_del(st, "rayClusterStatus");
    set_now(c, st, "startTime");
    xfree(url);
    xfree(job_id);
    xfree(cluster);
}

/* Delete the cluster pods (and the submitter Job); true when nothing is
 * left of them. */
static bool teardown(struct ctrl *c, const json_t *rj, const json_t *pods, bool submitter)
{
    bool gone = true;
    delete_head_service(c, rj);
    size_t i;
    json_t *p;
    json_array_foreach(pods, i, p) {
        gone = false;
        if (!api_is_deleting(p))
            store_delete(ctrl_store(c), KIND_POD, api_namespace(p), api_name(p), api_uid(p), NULL);
    }
    json_t *job = submitter ? get_submitter(c, rj) : NULL;
    if (job) {
        gone = false;
        store_delete(ctrl_store(c), KIND_JOB, api_namespace(job), api_name(job), api_uid(job),
                     NULL);
    }
    json_decref(job);
    return gone;
}

/* activeDeadlineSeconds: true when exceeded (status set), else a timer. */
static bool past_deadline(struct ctrl *c, int rid, const json_t *rj, json_t *st)
{
    int64_t ads = JX_INT(rj, 0, "spec", "activeDeadlineSeconds");
    int64_t start = 0;
    if (ads <= 0 || timefmt_parse(jx_or_empty(JX_STR(st, "startTime")), &start) != 0)
        return false;
    int64_t at = start + ads * 1000;
    if (ctrl_now(c) < at) {
        ctrl_enqueue_at(c, rid, api_namespace(rj), api_name(rj), at);
        return false;
    }
    char *msg = xasprintf("The RayJob has passed the activeDeadlineSeconds. StartTime: %s. "
                          "ActiveDeadlineSeconds: %lld",
                          jx_or_empty(JX_STR(st, "startTime")), (long long)ads);
    finish(c, rj, st, "Failed", "DeadlineExceeded", msg);
    xfree(msg);
    return true;
}

static void cluster_status(json_t *st, const struct cluster_state *cs, bool ready)
{
    json_t *rcs = JX_OBJ(st, "rayClusterStatus");
    if (ready)
        json_object_set_new(rcs, "state", json_string("ready"));
    json_object_set_new(rcs, "desiredWorkerReplicas", json_integer(cs->desired));
    json_object_set_new(rcs, "availableWorkerReplicas", json_integer(cs->running));
    json_object_set_new(rcs, "readyWorkerReplicas", json_integer(cs->running));
    if (cs->head_pod)
        JX_SET_NEW(rcs, json_pack("{s:s}", "podName", cs->head_pod), "head");
}

/* Running: the submitter Job's outcome decides the deployment's. */
static void check_submitter(struct ctrl *c, const json_t *rj, json_t *st)
{
    json_t *job = get_submitter(c, rj);
    if (!job) {
        create_submitter(c, rj);
        json_object_set_new(st, "jobStatus", json_string("PENDING"));
        return;
    }
    if (api_cond_is_true(job, "Complete")) {
        json_object_set_new(st, "jobStatus", json_string("SUCCEEDED"));
        finish(c, rj, st, "Complete", NULL, "Job finished successfully.");
    } else if (api_cond_is_true(job, "Failed")) {
        bool start_err;
        char *why = submitter_failure(c, job, &start_err);
        if (!start_err)
            json_object_set_new(st, "jobStatus", json_string("FAILED"));
        char *msg = start_err ? xasprintf("Ray job submission failed: %s", why) : xstrdup(why);
        finish(c, rj, st, "Failed", start_err ? "SubmissionFailed" : "AppFailed", msg);
        xfree(msg);
        xfree(why);
    } else if (JX_INT(job, 0, "status", "active") > 0) {
        json_object_set_new(st, "jobStatus", json_string("RUNNING"));
    }
    json_decref(job);
}

static void step_active(struct ctrl *c, int rid, const json_t *rj, const json_t *pods, json_t *st)
{
    if (past_deadline(c, rid, rj, st))
        return;
    const char *cluster = jx_or_empty(JX_STR(st, "rayClusterName"));
    struct cluster_state cs;
    ensure_head_service(c, rj, cluster);
    sync_cluster(c, rj, cluster, pods, &cs);
    bool initializing = !strcmp(jx_or_empty(JX_STR(st, "jobDeploymentStatus")), "Initializing");
    if (cs.failure) {
        finish(c, rj, st, "Failed", "SubmissionFailed", cs.failure);
    } else {
        bool ready = cs.all_running;
        cluster_status(st, &cs, ready || !initializing);
        if (initializing && ready)
            json_object_set_new(st, "jobDeploymentStatus", json_string("Running"));
        if (!initializing || ready) {
            if (!strcmp(jobs_ray_mode(rj), "K8sJobMode"))
                check_submitter(c, rj, st);
        }
    }
    xfree(cs.failure);
    xfree(cs.head_pod);
}

static void step(struct ctrl *c, int rid, const json_t *rj, const json_t *pods, json_t *st)
{
    const char *dep = jx_or_empty(JX_STR(st, "jobDeploymentStatus"));
    bool suspend = JX_BOOL(rj, false, "spec", "suspend");
    bool active = !strcmp(dep, "Initializing") || !strcmp(dep, "Running");
    if (!dep[0] || !strcmp(dep, "Suspended")) {
        if (suspend)
            json_object_set_new(st, "jobDeploymentStatus", json_string("Suspended"));
        else
            initialize(c, rj, st);
    } else if (active && suspend) {
        json_object_set_new(st, "jobDeploymentStatus", json_string("Suspending"));
        teardown(c, rj, pods, true);
    } else if (active) {
        step_active(c, rid, rj, pods, st);
    } else if (!strcmp(dep, "Suspending")) {
        if (teardown(c, rj, pods, true)) {
            json_object_set_new(st, "jobDeploymentStatus", json_string("Suspended"));
            json_object_set_new(st, "jobStatus", json_string(""));
            const char *drop[] = {"rayClusterName", "dashboardURL", "rayClusterStatus",
                                  "startTime",      "endTime",      "jobId"};
            for (size_t i = 0; i < sizeof(drop) / sizeof(drop[0]); i++)
                json_object_del(st, drop[i]);
        }
    } else if (JX_BOOL(rj, false, "spec", "shutdownAfterJobFinishes")) {
        /* Complete/Failed: delete the cluster, keep the submitter for logs */
        teardown(c, rj, pods, false);
        json_object_del(JX_GET(st, "rayClusterStatus"), "state");
    }
}

void jobs_ray_sync(struct ctrl *c, int rid, struct kq_index *pods_ix, const json_t *rj,
                   int32_t cap)
{
    (void)cap;
    if (api_is_deleting(rj))
        return;
    json_t *pods = jobs_owned_pods(c, pods_ix, rj);
    json_t *cp = jx_deep_copy(rj);
    json_t *st = JX_OBJ(cp, "status");
    step(c, rid, rj, pods, st);
    int rc = 0;
    if (!jx_equal(JX_GET(cp, "status"), JX_GET(rj, "status")))
        rc = kq_update(c, KIND_RAYJOB, cp, STORE_UPDATE_STATUS);
    if (rc == 0 && jobs_collect_metrics(cp, pods))
        rc = kq_update(c, KIND_RAYJOB, cp, STORE_UPDATE_MAIN);
    if (rc == CU_ECONFLICT)
        ctrl_enqueue(c, rid, api_namespace(rj), api_name(rj));
    json_decref(cp);
    json_decref(pods);
}
