/*
 * table: meta.k8s.io/v1 Table output (kubectl get, and the cueue CLI).
 * Columns per kind: the Kubernetes printers' for built-ins (Pod, Job,
 * Node, Namespace, ConfigMap, Event), the kubebuilder printcolumn markers
 * of Kueue's, KubeRay's and GKE's ProvisioningRequest types, and cueue's
 * own for NodePool. As for a CRD on a real API server, a custom kind whose
 * markers list columns shows exactly those (ClusterQueue, LocalQueue and
 * WorkloadPriorityClass have no AGE), and one without markers gets AGE.
 * Cells are final text or integers (kubectl prints them verbatim);
 * a missing value is null (printed blank). row.object is a
 * PartialObjectMetadata (kubectl takes NAMESPACE and LABELS from it).
 * Pure: time comes in as now_ms.
 */
#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "server/srv-int.h"
#include "util/jsonx.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

typedef json_t *(*cell_fn)(const json_t *obj, int64_t now_ms);

struct col {
    const char *name;
    const char *type;   /* "string", "integer", "date" */
    int priority;       /* 1 = -o wide only */
    const char *path[6]; /* dotted path (NULL-terminated keys) when fn is NULL */
    cell_fn fn;
    const char *desc;
};

#define MAX_COLS 12

/* ---- generic cells ---- */

static json_t *str_or_null(const char *s) { return s ? json_string(s) : json_null(); }

static json_t *age_text(int64_t t_ms, int64_t now_ms)
{
    if (!t_ms)
        return json_string("<unknown>");
    char out[TIMEFMT_LEN];
    return json_string(timefmt_age(now_ms - t_ms, out));
}

static json_t *cell_age(const json_t *obj, int64_t now_ms)
{
    return age_text(api_creation_ms(obj), now_ms);
}

static json_t *cell_name(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    return json_string(jx_or_empty(api_name(obj)));
}

static json_t *cond_cell(const json_t *obj, const char *type)
{
    return str_or_null(api_cond_status(obj, type));
}

#define COND_CELL(fname, type)                                                 \
    static json_t *fname(const json_t *obj, int64_t now_ms)                    \
    {                                                                          \
        (void)now_ms;                                                          \
        return cond_cell(obj, type);                                           \
    }
COND_CELL(cell_admitted, "Admitted")
COND_CELL(cell_finished, "Finished")
COND_CELL(cell_accepted, "Accepted")
COND_CELL(cell_provisioned, "Provisioned")
COND_CELL(cell_failed, "Failed")
COND_CELL(cell_completed, "Completed")

static json_t *path_cell(const json_t *obj, const char *const *path)
{
    json_t *v = jx_get_(obj, path);
    if (!v || json_is_null(v))
        return json_null();
    if (json_is_string(v) || json_is_integer(v) || json_is_real(v))
        return json_incref(v);
    if (json_is_boolean(v))
        return json_string(json_is_true(v) ? "true" : "false");
    char *t = jx_dumps(v);
    json_t *s = json_string(t);
    xfree(t);
    return s;
}

/* ---- Pod ---- */

static json_t *cell_pod_ready(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    size_t total = json_array_size(JX_GET(obj, "spec", "containers")), ready = 0;
    json_t *cs = JX_GET(obj, "status", "containerStatuses");
    size_t i;
    json_t *c;
    json_array_foreach(cs, i, c)
    {
        if (JX_BOOL(c, false, "ready"))
            ready++;
    }
    char b[48];
    snprintf(b, sizeof(b), "%zu/%zu", ready, total);
    return json_string(b);
}

/* kubectl's pod STATUS: the phase, refined by a container's waiting or
 * terminated reason, and Terminating while a deletion is pending. */
static json_t *cell_pod_status(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    const char *reason = JX_STR(obj, "status", "reason");
    if (!reason)
        reason = JX_STR(obj, "status", "phase");
    json_t *cs = JX_GET(obj, "status", "containerStatuses");
    size_t i;
    json_t *c;
    json_array_foreach(cs, i, c)
    {
        const char *w = JX_STR(c, "state", "waiting", "reason");
        const char *t = JX_STR(c, "state", "terminated", "reason");
        if (w && *w)
            reason = w;
        else if (t && *t)
            reason = t;
    }
    if (api_is_deleting(obj))
        reason = "Terminating";
    return json_string(reason ? reason : "Pending");
}

static json_t *cell_pod_restarts(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    json_int_t n = 0;
    size_t i;
    json_t *c;
    json_array_foreach(JX_GET(obj, "status", "containerStatuses"), i, c)
    {
        n += JX_INT(c, 0, "restartCount");
    }
    return json_integer(n);
}

static json_t *or_none(const char *s) { return json_string(s && *s ? s : "<none>"); }

static json_t *cell_pod_ip(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    const char *ip = JX_STR(json_array_get(JX_GET(obj, "status", "podIPs"), 0), "ip");
    return or_none(ip ? ip : JX_STR(obj, "status", "podIP"));
}

static json_t *cell_pod_node(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    return or_none(JX_STR(obj, "spec", "nodeName"));
}

static json_t *cell_pod_nominated(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    return or_none(JX_STR(obj, "status", "nominatedNodeName"));
}

/* "true gates/all gates", or <none> without readiness gates */
static json_t *cell_pod_gates(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    const json_t *gates = JX_GET(obj, "spec", "readinessGates");
    if (!json_array_size(gates))
        return json_string("<none>");
    size_t i, n = 0;
    json_t *g;
    json_array_foreach(gates, i, g)
    {
        if (api_cond_is_true(obj, jx_or_empty(JX_STR(g, "conditionType"))))
            n++;
    }
    char b[48];
    snprintf(b, sizeof(b), "%zu/%zu", n, json_array_size(gates));
    return json_string(b);
}

/* ---- Job ---- */

static json_t *cell_job_status(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    if (api_cond_is_true(obj, "Complete"))
        return json_string("Complete");
    if (api_cond_is_true(obj, "Failed"))
        return json_string("Failed");
    if (api_is_deleting(obj))
        return json_string("Terminating");
    if (api_cond_is_true(obj, "FailureTarget"))
        return json_string("FailureTarget");
    if (api_cond_is_true(obj, "Suspended") || JX_BOOL(obj, false, "spec", "suspend"))
        return json_string("Suspended");
    return json_string("Running");
}

static json_t *cell_job_completions(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    json_int_t ok = JX_INT(obj, 0, "status", "succeeded");
    json_t *comp = JX_GET(obj, "spec", "completions");
    json_int_t par = JX_INT(obj, 1, "spec", "parallelism");
    char b[64];
    if (json_is_integer(comp))
        snprintf(b, sizeof(b), "%lld/%lld", (long long)ok, (long long)json_integer_value(comp));
    else if (par > 1)
        snprintf(b, sizeof(b), "%lld/1 of %lld", (long long)ok, (long long)par);
    else
        snprintf(b, sizeof(b), "%lld/1", (long long)ok);
    return json_string(b);
}

static json_t *cell_job_duration(const json_t *obj, int64_t now_ms)
{
    int64_t start, end = now_ms;
    if (timefmt_parse(jx_or_empty(JX_STR(obj, "status", "startTime")), &start))
        return json_string("");
    /* startTime has whole seconds, creationTimestamp milliseconds: a Job
     * never ran for longer than it has existed */
    if (start < api_creation_ms(obj))
        start = api_creation_ms(obj);
    const char *ct = JX_STR(obj, "status", "completionTime");
    if (ct && timefmt_parse(ct, &end))
        end = now_ms;
    char out[TIMEFMT_LEN];
    return json_string(timefmt_age(end - start, out));
}

static json_t *containers_field(const json_t *obj, const char *field, const char *const *spec)
{
    json_t *cs = jx_get_(obj, spec);
    struct sbuf sb;
    sbuf_init(&sb, 1 << 16);
    size_t i;
    json_t *c;
    json_array_foreach(cs, i, c)
    {
        if (i)
            sbuf_addc(&sb, ',');
        sbuf_adds(&sb, jx_or_empty(JX_STR(c, field)));
    }
    json_t *s = json_string(sb.buf);
    sbuf_release(&sb);
    return s;
}

static json_t *cell_job_containers(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    return containers_field(obj, "name", JX_KEYS("spec", "template", "spec", "containers"));
}

static json_t *cell_job_images(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    return containers_field(obj, "image", JX_KEYS("spec", "template", "spec", "containers"));
}

static json_t *cell_job_selector(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    json_t *ml = JX_GET(obj, "spec", "selector", "matchLabels");
    struct sbuf sb;
    sbuf_init(&sb, 1 << 16);
    const char *k;
    json_t *v;
    json_object_foreach(ml, k, v)
    {
        sbuf_addf(&sb, "%s%s=%s", sb.len ? "," : "", k, jx_or_empty(json_string_value(v)));
    }
    json_t *s = json_string(sb.len ? sb.buf : "<none>");
    sbuf_release(&sb);
    return s;
}

/* ---- Node, Namespace, ConfigMap, NodePool ---- */

static json_t *cell_node_status(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    const char *ready = api_cond_status(obj, "Ready");
    const char *base = !ready ? "Unknown" : !strcmp(ready, "True") ? "Ready" : "NotReady";
    char b[64];
    snprintf(b, sizeof(b), "%s%s", base,
             JX_BOOL(obj, false, "spec", "unschedulable") ? ",SchedulingDisabled" : "");
    return json_string(b);
}

static json_t *cell_node_roles(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    (void)obj;
    return json_string("<none>");
}

/* Kubernetes' node printer: the first address of a type, else <none> */
static json_t *node_address(const json_t *obj, const char *type)
{
    size_t i;
    json_t *a;
    json_array_foreach(JX_GET(obj, "status", "addresses"), i, a)
    {
        const char *addr = JX_STR(a, "address");
        if (!strcmp(jx_or_empty(JX_STR(a, "type")), type) && addr && *addr)
            return json_string(addr);
    }
    return json_string("<none>");
}

static json_t *node_info(const json_t *obj, const char *field)
{
    const char *v = JX_STR(obj, "status", "nodeInfo", field);
    return json_string(v && *v ? v : "<unknown>");
}

#define NODE_CELL(fname, expr)                                                 \
    static json_t *fname(const json_t *obj, int64_t now_ms)                    \
    {                                                                          \
        (void)now_ms;                                                          \
        return expr;                                                           \
    }
NODE_CELL(cell_node_internal_ip, node_address(obj, "InternalIP"))
NODE_CELL(cell_node_external_ip, node_address(obj, "ExternalIP"))
NODE_CELL(cell_node_os, node_info(obj, "osImage"))
NODE_CELL(cell_node_kernel, node_info(obj, "kernelVersion"))
NODE_CELL(cell_node_runtime, node_info(obj, "containerRuntimeVersion"))

static json_t *cell_cm_data(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    return json_integer((json_int_t)(json_object_size(JX_GET(obj, "data")) +
                                     json_object_size(JX_GET(obj, "binaryData"))));
}

static json_t *bool_cell(const json_t *obj, const char *const *path)
{
    return json_string(jx_bool_(obj, path, false) ? "true" : "false");
}

static json_t *cell_np_queued(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    return bool_cell(obj, JX_KEYS("spec", "queuedProvisioning", "enabled"));
}

static json_t *cell_np_flex(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    return bool_cell(obj, JX_KEYS("spec", "config", "flexStart"));
}

static json_t *cell_np_nodes(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    return json_integer(JX_INT(obj, 0, "status", "nodeCount"));
}

/* ---- Event ---- */

static int64_t event_time(const json_t *obj, const char *const *path)
{
    int64_t t = 0;
    const char *s = jx_str_(obj, path);
    if (!s || timefmt_parse(s, &t))
        return 0;
    return t;
}

/* Kubernetes' event printer: first = firstTimestamp, else eventTime; last =
 * series.lastObservedTime, else lastTimestamp, else first */
static int64_t event_first_ms(const json_t *obj)
{
    int64_t t = event_time(obj, JX_KEYS("firstTimestamp"));
    return t ? t : event_time(obj, JX_KEYS("eventTime"));
}

static json_t *cell_ev_last(const json_t *obj, int64_t now_ms)
{
    int64_t t = event_time(obj, JX_KEYS("series", "lastObservedTime"));
    if (!t)
        t = event_time(obj, JX_KEYS("lastTimestamp"));
    if (!t)
        t = event_first_ms(obj);
    if (!t)
        t = api_creation_ms(obj);
    return age_text(t, now_ms);
}

static json_t *cell_ev_first(const json_t *obj, int64_t now_ms)
{
    int64_t t = event_first_ms(obj);
    return t ? age_text(t, now_ms) : json_string("<unknown>");
}

/* "kind/name" in lower-case kind, or the kind alone without a name */
static json_t *cell_ev_object(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    char *kind = xstrdup(jx_or_empty(JX_STR(obj, "involvedObject", "kind")));
    for (char *p = kind; *p; p++)
        *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    const char *name = JX_STR(obj, "involvedObject", "name");
    char *s = name && *name ? xasprintf("%s/%s", kind, name) : xstrdup(kind);
    json_t *v = json_string(s);
    xfree(kind);
    xfree(s);
    return v;
}

static json_t *cell_ev_source(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    const char *c = JX_STR(obj, "source", "component");
    if (!c)
        c = JX_STR(obj, "reportingComponent");
    return json_string(c ? c : "");
}

/* events of the new API leave count unset: they happened once */
static json_t *cell_ev_count(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    json_int_t n = JX_INT(obj, 0, "series", "count");
    if (n <= 0)
        n = JX_INT(obj, 0, "count");
    return json_integer(n > 0 ? n : 1);
}

/* ---- the per-kind column sets ---- */

#define NAME_COL {"Name", "string", 0, {NULL}, cell_name, "Name must be unique within a namespace."}
#define AGE_COL {"Age", "string", 0, {NULL}, cell_age, "CreationTimestamp is a timestamp representing the server time when this object was created."}
#define P(...) {__VA_ARGS__, NULL}

static const struct col cols_generic[] = {NAME_COL, AGE_COL, {NULL}};

static const struct col cols_pod[] = {
    NAME_COL,
    {"Ready", "string", 0, {NULL}, cell_pod_ready, "The aggregate readiness state of this pod for accepting traffic."},
    {"Status", "string", 0, {NULL}, cell_pod_status, "The aggregate status of the containers in this pod."},
    {"Restarts", "integer", 0, {NULL}, cell_pod_restarts, "The number of times the containers in this pod have been restarted."},
    AGE_COL,
    {"IP", "string", 1, {NULL}, cell_pod_ip, "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated."},
    {"Node", "string", 1, {NULL}, cell_pod_node, "Name of the Node this pod is bound to."},
    {"Nominated Node", "string", 1, {NULL}, cell_pod_nominated, "Name of the node the scheduler nominated for the pod, if any."},
    {"Readiness Gates", "string", 1, {NULL}, cell_pod_gates, "The readiness gates of the pod that are true, out of all of them."},
    {NULL}};

static const struct col cols_job[] = {
    NAME_COL,
    {"Status", "string", 0, {NULL}, cell_job_status, "Status of the job."},
    {"Completions", "string", 0, {NULL}, cell_job_completions, "The desired number of successfully finished pods the job should be run with."},
    {"Duration", "string", 0, {NULL}, cell_job_duration, "Time required to complete the job."},
    AGE_COL,
    {"Containers", "string", 1, {NULL}, cell_job_containers, "Names of each container in the template."},
    {"Images", "string", 1, {NULL}, cell_job_images, "Images referenced by each container in the template."},
    {"Selector", "string", 1, {NULL}, cell_job_selector, "A label query over pods that should match the pod count."},
    {NULL}};

static const struct col cols_node[] = {
    NAME_COL,
    {"Status", "string", 0, {NULL}, cell_node_status, "The status of the node"},
    {"Roles", "string", 0, {NULL}, cell_node_roles, "The roles of the node"},
    AGE_COL,
    {"Version", "string", 0, P("status", "nodeInfo", "kubeletVersion"), NULL, "Kubelet Version reported by the node."},
    {"Internal-IP", "string", 1, {NULL}, cell_node_internal_ip, "List of internal IPs reported by the node."},
    {"External-IP", "string", 1, {NULL}, cell_node_external_ip, "List of external IPs reported by the node."},
    {"OS-Image", "string", 1, {NULL}, cell_node_os, "OS image reported by the node from /etc/os-release."},
    {"Kernel-Version", "string", 1, {NULL}, cell_node_kernel, "Kernel version reported by the node from 'uname -r'."},
    {"Container-Runtime", "string", 1, {NULL}, cell_node_runtime, "Container runtime version reported by the node."},
    {NULL}};

static const struct col cols_namespace[] = {
    NAME_COL,
    {"Status", "string", 0, P("status", "phase"), NULL, "The status of the namespace"},
    AGE_COL,
    {NULL}};

/* ---- Service, Endpoints, EndpointSlice ---- */

/* sb's text as a cell (empty: the placeholder), sb released. */
static json_t *sb_cell(struct sbuf *sb, const char *empty)
{
    json_t *out = json_string(sb->len ? sb->buf : empty);
    sbuf_release(sb);
    return out;
}

static json_t *cell_svc_ports(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    struct sbuf sb;
    sbuf_init(&sb, 0);
    size_t i;
    json_t *p;
    json_array_foreach(JX_GET(obj, "spec", "ports"), i, p) {
        sbuf_addf(&sb, "%s%lld/%s", i ? "," : "", (long long)JX_INT(p, 0, "port"),
                  jx_or_empty(JX_STR(p, "protocol")));
    }
    return sb_cell(&sb, "<none>");
}

static json_t *cell_svc_selector(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    struct sbuf sb;
    sbuf_init(&sb, 0);
    const char *k;
    json_t *v;
    json_object_foreach(JX_GET(obj, "spec", "selector"), k, v) {
        sbuf_addf(&sb, "%s%s=%s", sb.len ? "," : "", k, jx_or_empty(json_string_value(v)));
    }
    return sb_cell(&sb, "<none>");
}

static json_t *cell_none(const json_t *obj, int64_t now_ms)
{
    (void)obj;
    (void)now_ms;
    return json_string("<none>");
}

/* "ip:port,..." of an Endpoints object's ready addresses. */
static json_t *cell_ep_endpoints(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    struct sbuf sb;
    sbuf_init(&sb, 0);
    size_t i, j, k;
    json_t *s, *a, *p;
    json_array_foreach(JX_GET(obj, "subsets"), i, s) {
        json_array_foreach(JX_GET(s, "addresses"), j, a) {
            json_array_foreach(JX_GET(s, "ports"), k, p) {
                sbuf_addf(&sb, "%s%s:%lld", sb.len ? "," : "", jx_or_empty(JX_STR(a, "ip")),
                          (long long)JX_INT(p, 0, "port"));
            }
        }
    }
    return sb_cell(&sb, "<none>");
}

static json_t *cell_slice_ports(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    struct sbuf sb;
    sbuf_init(&sb, 0);
    size_t i;
    json_t *p;
    json_array_foreach(JX_GET(obj, "ports"), i, p) {
        sbuf_addf(&sb, "%s%lld", i ? "," : "", (long long)JX_INT(p, 0, "port"));
    }
    return sb_cell(&sb, "<unset>");
}

static json_t *cell_slice_endpoints(const json_t *obj, int64_t now_ms)
{
    (void)now_ms;
    struct sbuf sb;
    sbuf_init(&sb, 0);
    size_t i, j;
    json_t *e, *a;
    json_array_foreach(JX_GET(obj, "endpoints"), i, e) {
        json_array_foreach(JX_GET(e, "addresses"), j, a) {
            sbuf_addf(&sb, "%s%s", sb.len ? "," : "", jx_or_empty(json_string_value(a)));
        }
    }
    return sb_cell(&sb, "<unset>");
}

static const struct col cols_service[] = {
    NAME_COL,
    {"Type", "string", 0, P("spec", "type"), NULL, NULL},
    {"Cluster-IP", "string", 0, P("spec", "clusterIP"), NULL, NULL},
    {"External-IP", "string", 0, {NULL}, cell_none, NULL},
    {"Port(s)", "string", 0, {NULL}, cell_svc_ports, NULL},
    AGE_COL,
    {"Selector", "string", 1, {NULL}, cell_svc_selector, NULL},
    {NULL}};

static const struct col cols_endpoints[] = {
    NAME_COL,
    {"Endpoints", "string", 0, {NULL}, cell_ep_endpoints, NULL},
    AGE_COL,
    {NULL}};

static const struct col cols_endpointslice[] = {
    NAME_COL,
    {"AddressType", "string", 0, P("addressType"), NULL, NULL},
    {"Ports", "string", 0, {NULL}, cell_slice_ports, NULL},
    {"Endpoints", "string", 0, {NULL}, cell_slice_endpoints, NULL},
    AGE_COL,
    {NULL}};

static const struct col cols_configmap[] = {
    NAME_COL,
    {"Data", "string", 0, {NULL}, cell_cm_data, "Number of data entries."},
    AGE_COL,
    {NULL}};

static const struct col cols_event[] = {
    {"Last Seen", "string", 0, {NULL}, cell_ev_last, "Time when the most recent occurrence of this event was recorded."},
    {"Type", "string", 0, P("type"), NULL, "Type of this event."},
    {"Reason", "string", 0, P("reason"), NULL, "Why the action was taken."},
    {"Object", "string", 0, {NULL}, cell_ev_object, "The object that this event is about."},
    {"Subobject", "string", 1, P("involvedObject", "fieldPath"), NULL, "The subobject that this event is about."},
    {"Source", "string", 1, {NULL}, cell_ev_source, "The component reporting this event."},
    {"Message", "string", 0, P("message"), NULL, "A human-readable description of the status of this operation."},
    {"First Seen", "string", 1, {NULL}, cell_ev_first, "The time at which the event was first recorded."},
    {"Count", "string", 1, {NULL}, cell_ev_count, "The number of times this event has occurred."},
    {"Name", "string", 1, {NULL}, cell_name, "The name of the event."},
    {NULL}};

static const struct col cols_rayjob[] = {
    NAME_COL,
    {"Job Status", "string", 0, P("status", "jobStatus"), NULL, NULL},
    {"Deployment Status", "string", 0, P("status", "jobDeploymentStatus"), NULL, NULL},
    {"Ray Cluster Name", "string", 0, P("status", "rayClusterName"), NULL, NULL},
    {"Start Time", "string", 0, P("status", "startTime"), NULL, NULL},
    {"End Time", "string", 0, P("status", "endTime"), NULL, NULL},
    AGE_COL,
    {NULL}};

/* the JobSet CRD's printer columns */
static const struct col cols_jobset[] = {
    NAME_COL,
    {"TerminalState", "string", 0, P("status", "terminalState"), NULL, "Final state of JobSet"},
    {"Restarts", "string", 0, P("status", "restarts"), NULL, "Number of restarts"},
    {"Completed", "string", 0, {NULL}, cell_completed, NULL},
    {"Suspended", "string", 0, P("spec", "suspend"), NULL, "JobSet suspended"},
    AGE_COL,
    {NULL}};

static const struct col cols_cq[] = {
    NAME_COL,
    {"Cohort", "string", 0, P("spec", "cohort"), NULL, "Cohort that this ClusterQueue belongs to"},
    {"Strategy", "string", 1, P("spec", "queueingStrategy"), NULL, "The queueing strategy used to prioritize workloads"},
    {"Pending Workloads", "integer", 0, P("status", "pendingWorkloads"), NULL, "Number of pending workloads"},
    {"Admitted Workloads", "integer", 1, P("status", "admittedWorkloads"), NULL, "Number of admitted workloads that haven't finished yet"},
    {NULL}};

static const struct col cols_lq[] = {
    NAME_COL,
    {"ClusterQueue", "string", 0, P("spec", "clusterQueue"), NULL, "Backing ClusterQueue"},
    {"Pending Workloads", "integer", 0, P("status", "pendingWorkloads"), NULL, "Number of pending workloads"},
    {"Admitted Workloads", "integer", 0, P("status", "admittedWorkloads"), NULL, "Number of admitted workloads that haven't finished yet."},
    {NULL}};

static const struct col cols_wl[] = {
    NAME_COL,
    {"Queue", "string", 0, P("spec", "queueName"), NULL, "Name of the queue this workload was submitted to"},
    {"Reserved in", "string", 0, P("status", "admission", "clusterQueue"), NULL, "Name of the ClusterQueue where the workload is reserving quota"},
    {"Admitted", "string", 0, {NULL}, cell_admitted, "Admission status"},
    {"Finished", "string", 0, {NULL}, cell_finished, "Workload finished"},
    AGE_COL,
    {NULL}};

static const struct col cols_wpc[] = {
    NAME_COL,
    {"Value", "integer", 0, P("value"), NULL, "Value of workloadPriorityClass's Priority"},
    {NULL}};

static const struct col cols_provreq[] = {
    NAME_COL,
    {"Accepted", "string", 0, {NULL}, cell_accepted, NULL},
    {"Provisioned", "string", 0, {NULL}, cell_provisioned, NULL},
    {"Failed", "string", 0, {NULL}, cell_failed, NULL},
    AGE_COL,
    {NULL}};

static const struct col cols_nodepool[] = {
    NAME_COL,
    {"Machine Type", "string", 0, P("spec", "config", "machineType"), NULL, NULL},
    {"Nodes", "integer", 0, {NULL}, cell_np_nodes, "Nodes that currently exist"},
    {"Min", "integer", 0, P("spec", "autoscaling", "minNodeCount"), NULL, NULL},
    {"Max", "integer", 0, P("spec", "autoscaling", "maxNodeCount"), NULL, NULL},
    {"Queued", "string", 0, {NULL}, cell_np_queued, "queued provisioning"},
    {"Flex-Start", "string", 0, {NULL}, cell_np_flex, NULL},
    AGE_COL,
    {"TPU Topology", "string", 1, P("spec", "placementPolicy", "tpuTopology"), NULL, NULL},
    {"Capacity", "string", 1, P("spec", "capacity", "mode"), NULL, NULL},
    {NULL}};

static const struct col *cols_for(const struct api_kind *k)
{
    switch (k->id) {
    case KIND_POD: return cols_pod;
    case KIND_JOB: return cols_job;
    case KIND_NODE: return cols_node;
    case KIND_NAMESPACE: return cols_namespace;
    case KIND_CONFIGMAP: return cols_configmap;
    case KIND_EVENT: return cols_event;
    case KIND_RAYJOB: return cols_rayjob;
    case KIND_JOBSET: return cols_jobset;
    case KIND_CLUSTERQUEUE: return cols_cq;
    case KIND_LOCALQUEUE: return cols_lq;
    case KIND_WORKLOAD: return cols_wl;
    case KIND_WORKLOADPRIORITYCLASS: return cols_wpc;
    case KIND_PROVISIONINGREQUEST: return cols_provreq;
    case KIND_NODEPOOL: return cols_nodepool;
    case KIND_SERVICE: return cols_service;
    case KIND_ENDPOINTS: return cols_endpoints;
    case KIND_ENDPOINTSLICE: return cols_endpointslice;
    default: return cols_generic;
    }
}

json_t *srv_table_columns(const struct api_kind *k)
{
    json_t *arr = json_array();
    for (const struct col *c = cols_for(k); c->name; c++) {
        json_t *d = json_pack("{s:s, s:s, s:s, s:i, s:s}", "name", c->name, "type", c->type,
                              "format", !strcmp(c->name, "Name") && c == cols_for(k) ? "name" : "",
                              "priority", c->priority, "description", c->desc ? c->desc : "");
        json_array_append_new(arr, d);
    }
    return arr;
}

static json_t *partial_metadata(const json_t *obj)
{
    json_t *md = json_object();
    const json_t *src = JX_GET(obj, "metadata");
    static const char *const keep[] = {"name", "namespace", "uid", "resourceVersion",
                                       "creationTimestamp", "generation", "labels",
                                       "annotations", "ownerReferences", "deletionTimestamp",
                                       "finalizers", NULL};
    for (const char *const *k = keep; *k; k++) {
        json_t *v = json_object_get(src, *k);
        if (v)
            json_object_set(md, *k, v);
    }
    return json_pack("{s:s, s:s, s:o}", "kind", "PartialObjectMetadata", "apiVersion",
                     "meta.k8s.io/v1", "metadata", md);
}

json_t *srv_table_row(const struct api_kind *k, const json_t *obj, int64_t now_ms,
                      const char *include)
{
    json_t *cells = json_array();
    for (const struct col *c = cols_for(k); c->name; c++)
        json_array_append_new(cells, c->fn ? c->fn(obj, now_ms) : path_cell(obj, c->path));
    json_t *row = json_pack("{s:o}", "cells", cells);
    if (include && !strcmp(include, "Object"))
        json_object_set_new(row, "object", srv__with_type(k, (json_t *)obj));
    else if (!include || strcmp(include, "None"))
        json_object_set_new(row, "object", partial_metadata(obj));
    return row;
}

json_t *srv_table_new(const struct api_kind *k, const json_t *objs, uint64_t rv,
                      int64_t now_ms, const char *include, bool with_columns)
{
    char rvs[32];
    snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)rv);
    json_t *rows = json_array();
    size_t i;
    json_t *o;
    json_array_foreach((json_t *)objs, i, o)
    {
        json_array_append_new(rows, srv_table_row(k, o, now_ms, include));
    }
    return json_pack("{s:s, s:s, s:{s:s}, s:o, s:o}", "kind", "Table", "apiVersion",
                     "meta.k8s.io/v1", "metadata", "resourceVersion", rvs, "columnDefinitions",
                     with_columns ? srv_table_columns(k) : json_array(), "rows", rows);
}
