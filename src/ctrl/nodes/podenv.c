/*
 * nodes/podenv: the environment a pod's processes get, resolved the way
 * the kubelet does before a container starts: env valueFrom (fieldRef,
 * configMapKeyRef, resourceFieldRef) and envFrom configMapRef become plain
 * values in a copy of the pod, and the node adds what GKE's TPU device
 * plugin gives pods requesting google.com/tpu (TPU_TOPOLOGY,
 * TPU_ACCELERATOR_TYPE, TPU_HOST_BOUNDS, TPU_CHIPS_PER_HOST_BOUNDS,
 * TPU_SKIP_MDS_QUERY, TPU_RUNTIME_METRICS_PORTS; on a single-host slice
 * also TPU_WORKER_ID=0 and TPU_WORKER_HOSTNAMES=localhost) plus
 * CUEUE_METRICS_FILE and HOSTNAME (spec.hostname, else the pod name).
 * Job-level identity (TPU_WORKER_ID on multi-host
 * slices, MASTER_ADDR, ...) is the job controllers' and already in the
 * spec. The pod and host IP of every local pod is 127.0.0.1.
 */
#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "api/quantity.h"
#include "ctrl/nodes/nodes.h"
#include "provider/catalog.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

#define LOCAL_IP "127.0.0.1"

/* metadata.labels['app'] -> the label value (or "" when absent). */
static const char *map_field(const json_t *pod, const char *path, const char *prefix,
                             const char *map)
{
    size_t pl = strlen(prefix);
    if (strncmp(path, prefix, pl) || path[pl] != '[')
        return NULL;
    const char *q = path + pl + 1;
    char quote = *q;
    if (quote != '\'' && quote != '"')
        return NULL;
    const char *end = strchr(q + 1, quote);
    if (!end || end[1] != ']' || end[2])
        return NULL;
    char *key = xstrndup(q + 1, (size_t)(end - q - 1));
    const char *v = JX_STR(pod, "metadata", map, key);
    xfree(key);
    return v ? v : "";
}

static int field_ref(const json_t *pod, const char *node, const char *path, char **out,
                     char *msg, size_t msglen)
{
    const char *v = NULL;
    if (!strcmp(path, "metadata.name"))
        v = api_name(pod);
    else if (!strcmp(path, "metadata.namespace"))
        v = api_namespace(pod);
    else if (!strcmp(path, "metadata.uid"))
        v = api_uid(pod);
    else if (!strcmp(path, "spec.nodeName"))
        v = node;
    else if (!strcmp(path, "spec.serviceAccountName"))
        v = jx_or_empty(JX_STR(pod, "spec", "serviceAccountName"))[0]
                ? JX_STR(pod, "spec", "serviceAccountName") : "default";
    else if (!strcmp(path, "status.podIP") || !strcmp(path, "status.hostIP") ||
             !strcmp(path, "status.podIPs") || !strcmp(path, "status.hostIPs"))
        v = LOCAL_IP;
    else if (!(v = map_field(pod, path, "metadata.labels", "labels")))
        v = map_field(pod, path, "metadata.annotations", "annotations");
    if (!v) {
        snprintf(msg, msglen, "unsupported fieldRef fieldPath \"%s\"", path);
        return CU_EINVAL;
    }
    *out = xstrdup(v);
    return 0;
}

static int resource_ref(const json_t *ctr, const json_t *node, const json_t *ref, char **out,
                        char *msg, size_t msglen)
{
    const char *res = jx_or_empty(JX_STR(ref, "resource"));
    const char *dot = strchr(res, '.');
    if (!dot || (strncmp(res, "limits", 6) && strncmp(res, "requests", 8))) {
        snprintf(msg, msglen, "unsupported resourceFieldRef resource \"%s\"", res);
        return CU_EINVAL;
    }
    char *kind = xstrndup(res, (size_t)(dot - res));
    const char *name = dot + 1;
    const char *text = JX_STR(ctr, "resources", kind, name);
    if (!text && !strcmp(kind, "limits"))
        text = JX_STR(node, "status", "allocatable", name); /* the kubelet's default */
    xfree(kind);
    int64_t v = 0, d = 0;
    char err[128];
    if (text && api_quantity_parse(text, name, &v, err, sizeof(err)) != 0)
        v = 0;
    const char *div = JX_STR(ref, "divisor");
    if (api_quantity_parse(div ? div : "1", name, &d, err, sizeof(err)) != 0 || d <= 0) {
        snprintf(msg, msglen, "resourceFieldRef %s: invalid divisor", res);
        return CU_EINVAL;
    }
    *out = xasprintf("%lld", (long long)((v + d - 1) / d));
    return 0;
}

static int configmap_ref(struct ctrl *c, const char *ns, const json_t *ref, char **out,
                         char *msg, size_t msglen)
{
    const char *name = jx_or_empty(JX_STR(ref, "name")), *key = jx_or_empty(JX_STR(ref, "key"));
    bool optional = JX_BOOL(ref, false, "optional");
    json_t *cm = store_get(ctrl_store(c), KIND_CONFIGMAP, ns, name);
    const char *v = cm ? JX_STR(cm, "data", key) : NULL;
    *out = xstrdup(v);
    json_decref(cm);
    if (v || optional)
        return 0;
    if (!cm)
        snprintf(msg, msglen, "configmap \"%s\" not found", name);
    else
        snprintf(msg, msglen, "couldn't find key %s in ConfigMap %s/%s", key, ns, name);
    return cm ? CU_EINVAL : CU_ENOTFOUND;
}

/* Resolve one env entry's valueFrom; *out NULL = leave the variable out. */
static int resolve_one(struct ctrl *c, const json_t *pod, const json_t *ctr, const json_t *node,
                       const json_t *from, char **out, char *msg, size_t msglen)
{
    *out = NULL;
    if (JX_GET(from, "fieldRef"))
        return field_ref(pod, api_name(node), jx_or_empty(JX_STR(from, "fieldRef", "fieldPath")),
                         out, msg, msglen);
    if (JX_GET(from, "resourceFieldRef"))
        return resource_ref(ctr, node, JX_GET(from, "resourceFieldRef"), out, msg, msglen);
    if (JX_GET(from, "configMapKeyRef"))
        return configmap_ref(c, api_namespace(pod), JX_GET(from, "configMapKeyRef"), out, msg,
                             msglen);
    snprintf(msg, msglen, "unsupported env valueFrom (secrets do not exist in cueue)");
    return CU_EINVAL;
}

/* envFrom configMapRef entries, as plain {name, value}. */
static int env_from(struct ctrl *c, const char *ns, const json_t *ctr, json_t *env, char *msg,
                    size_t msglen)
{
    size_t i;
    json_t *src;
    json_array_foreach(JX_GET(ctr, "envFrom"), i, src) {
        const char *name = JX_STR(src, "configMapRef", "name");
        if (!name) {
            snprintf(msg, msglen, "envFrom[%zu]: only configMapRef is supported", i);
            return CU_EINVAL;
        }
        json_t *cm = store_get(ctrl_store(c), KIND_CONFIGMAP, ns, name);
        if (!cm && !JX_BOOL(src, false, "configMapRef", "optional")) {
            snprintf(msg, msglen, "configmap \"%s\" not found", name);
            return CU_ENOTFOUND;
        }
        const char *key;
        json_t *v;
        json_object_foreach(JX_GET(cm, "data"), key, v) {
            char *full = xasprintf("%s%s", jx_or_empty(JX_STR(src, "prefix")), key);
            json_array_append_new(env, json_pack("{s:s,s:O}", "name", full, "value", v));
            xfree(full);
        }
        json_decref(cm);
    }
    return 0;
}

static int resolve_container(struct ctrl *c, const json_t *pod, json_t *ctr, const json_t *node,
                             char *msg, size_t msglen)
{
    json_t *env = json_array();
    int rc = env_from(c, api_namespace(pod), ctr, env, msg, msglen);
    size_t i;
    json_t *e;
    json_array_foreach(JX_GET(ctr, "env"), i, e) {
        const json_t *from = JX_GET(e, "valueFrom");
        if (rc != 0 || !from) {
            if (rc == 0)
                json_array_append(env, e);
            continue;
        }
        char *v;
        rc = resolve_one(c, pod, ctr, node, from, &v, msg, msglen);
        if (rc == 0 && v)
            json_array_append_new(env, json_pack("{s:s,s:s}", "name",
                                                 jx_or_empty(JX_STR(e, "name")), "value", v));
        xfree(v);
    }
    json_object_del(ctr, "envFrom");
    json_object_set_new(ctr, "env", env);
    return rc;
}

static void env_add(struct nodes_podrun *r, const char *name, const char *value)
{
    r->env = xreallocarray(r->env, r->n_env + 1, sizeof(*r->env));
    r->env[r->n_env].name = xstrdup(name);
    r->env[r->n_env].value = xstrdup(value);
    r->n_env++;
}

static bool spec_defines(const json_t *pod, const char *var)
{
    size_t i, j;
    json_t *ctr, *e;
    json_array_foreach(JX_GET(pod, "spec", "containers"), i, ctr) {
        json_array_foreach(JX_GET(ctr, "env"), j, e) {
            if (!strcmp(jx_or_empty(JX_STR(e, "name")), var))
                return true;
        }
    }
    return false;
}

/* google.com/tpu requested by the pod (limits fill absent requests). */
static int64_t tpu_chips(const json_t *pod)
{
    int64_t total = 0;
    size_t i;
    json_t *ctr;
    json_array_foreach(JX_GET(pod, "spec", "containers"), i, ctr) {
        const char *t = JX_STR(ctr, "resources", "requests", PROV_TPU_RESOURCE);
        if (!t)
            t = JX_STR(ctr, "resources", "limits", PROV_TPU_RESOURCE);
        int64_t v = 0;
        char err[64];
        if (t && api_quantity_parse(t, PROV_TPU_RESOURCE, &v, err, sizeof(err)) == 0)
            total += v;
    }
    return total;
}

static void tpu_env(struct nodes_podrun *r, const json_t *pod, const json_t *node)
{
    int64_t chips = tpu_chips(pod);
    const struct prov_machine *m = prov_machine_find(api_label(node, LABEL_INSTANCE_TYPE));
    struct prov_slice s;
    char err[256], b[32];
    if (chips <= 0 || !m || !m->tpu ||
        prov_slice_for(m, api_label(node, LABEL_TPU_TOPOLOGY), &s, err, sizeof(err)) != 0)
        return;
    env_add(r, "TPU_SKIP_MDS_QUERY", "true");
    env_add(r, "TPU_TOPOLOGY", s.topology);
    env_add(r, "TPU_ACCELERATOR_TYPE", s.accelerator_type);
    prov_bounds_str(s.host_bounds, b, sizeof(b));
    env_add(r, "TPU_HOST_BOUNDS", b);
    prov_bounds_str(s.chip_bounds, b, sizeof(b));
    env_add(r, "TPU_CHIPS_PER_HOST_BOUNDS", b);
    struct sbuf sb;
    sbuf_init(&sb, 0);
    for (int64_t i = 0; i < chips && i < 64; i++)
        sbuf_addf(&sb, "%s%lld", i ? "," : "", (long long)(PROV_TPU_METRICS_PORT_BASE + i));
    env_add(r, "TPU_RUNTIME_METRICS_PORTS", sb.buf);
    sbuf_release(&sb);
    if (s.hosts == 1 && !spec_defines(pod, "TPU_WORKER_ID"))
        env_add(r, "TPU_WORKER_ID", "0");
    if (s.hosts == 1 && !spec_defines(pod, "TPU_WORKER_HOSTNAMES"))
        env_add(r, "TPU_WORKER_HOSTNAMES", "localhost");
}

int nodes_podrun_prepare(struct ctrl *c, const json_t *pod, const json_t *node,
                         struct nodes_podrun *r, char *msg, size_t msglen)
{
    memset(r, 0, sizeof(*r));
    r->pod = jx_deep_copy(pod);
    int rc = 0;
    r->sandbox = exec_sandbox_dir(ctrl_exec(c), ctrl_cfg(c)->state_dir, api_uid(pod));
    if (r->sandbox) {
        rc = nodes_volumes_prepare(c, pod, r->sandbox, msg, msglen);
        if (rc == 0)
            nodes_volume_mounts(pod, r->sandbox, &r->mounts, &r->n_mounts);
    }
    const char *const lists[] = {"initContainers", "containers"};
    for (int l = 0; l < 2 && rc == 0; l++) {
        const json_t *ctrs = JX_GET(r->pod, "spec", lists[l]);
        for (size_t i = 0; rc == 0 && i < json_array_size(ctrs); i++)
            rc = resolve_container(c, pod, json_array_get(ctrs, i), node, msg, msglen);
    }
    if (rc != 0)
        return rc;
    tpu_env(r, pod, node);
    if (!spec_defines(pod, "HOSTNAME")) {
        /* the container runtime's HOSTNAME: spec.hostname, else the pod's
         * name cut to 63 characters (Kubernetes' pod hostname) */
        const char *h = JX_STR(pod, "spec", "hostname");
        char host[64];
        snprintf(host, sizeof(host), "%s", h && *h ? h : jx_or_empty(api_name(pod)));
        env_add(r, "HOSTNAME", host);
    }
    if (r->sandbox) {
        char *mf = xasprintf("%s/%s", r->sandbox, EXEC_METRICS_FILE);
        env_add(r, EXEC_METRICS_ENV, mf);
        xfree(mf);
    }
    return 0;
}

void nodes_podrun_release(struct nodes_podrun *r)
{
    json_decref(r->pod);
    xfree(r->sandbox);
    for (size_t i = 0; i < r->n_env; i++) {
        xfree(r->env[i].name);
        xfree(r->env[i].value);
    }
    xfree(r->env);
    for (size_t i = 0; i < r->n_mounts; i++) {
        xfree(r->mounts[i].name);
        xfree(r->mounts[i].value);
    }
    xfree(r->mounts);
    memset(r, 0, sizeof(*r));
}
