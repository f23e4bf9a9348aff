/*
 * schema_pod: PodSpec, containers, volumes and pod status (core/v1), their
 * defaults (SetDefaults_PodSpec and friends, applied only for core kinds)
 * and Kubernetes' PodSpec validation (names, resources, env, volumes,
 * mounts). Probes, lifecycle hooks, security contexts, pod (anti-)affinity,
 * topology spread constraints and less common volume sources pass through.
 *
 * Pod specs are not trusted (docs/security.md, "What a pod may do"): file
 * modes of configMap/secret volumes stay within 0-0777; item paths,
 * subPaths, mount paths and working directories cannot step out with
 * "..", and item paths and subPaths are relative; privileged containers
 * and hostPath volumes need the server's leave (struct api_pod_policy in
 * api_admit_env; without an env, as in `cueue sim` and the unit tests,
 * both are refused); so do runAsUser/runAsGroup 0, and a server that is
 * not root refuses a runAsUser/runAsGroup other than its own
 * (api_pod_run_as).
 */
#include <stdio.h>
#include <string.h>

#include "api/names.h"
#include "api/object.h"
#include "api/quantity.h"
#include "api/schema-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static const struct api_schema s_key_to_path = {
    .type = SCH_OBJECT,
    FIELDS(FR("key", S_STR), FR("path", S_STR), F("mode", S_INT32))};

static const struct api_schema s_object_key_ref = {
    .type = SCH_OBJECT, FIELDS(F("name", S_STR), FR("key", S_STR), F("optional", S_BOOL))};

static const struct api_schema s_env_source = {
    .type = SCH_OBJECT,
    FIELDS(F("fieldRef", OBJ(F("apiVersion", S_STR), FR("fieldPath", S_STR))),
           F("resourceFieldRef", OBJ(F("containerName", S_STR), FR("resource", S_STR),
                                     F("divisor", S_QTY_NONNEG))),
           F("configMapKeyRef", &s_object_key_ref), F("secretKeyRef", &s_object_key_ref),
           F("fileKeyRef", S_PASS))};

const struct api_schema api__s_resources = {
    .type = SCH_OBJECT,
    FIELDS(F("limits", SCH(.type = SCH_MAP, .items = S_QTY_NONNEG,
                           .key_format = FMT_RESOURCE_NAME)),
           F("requests", SCH(.type = SCH_MAP, .items = S_QTY_NONNEG,
                             .key_format = FMT_RESOURCE_NAME)),
           F("claims", ARR(S_PASS)))};

static const struct api_schema s_port = {
    .type = SCH_OBJECT,
    FIELDS(F("name", SCH(.type = SCH_STRING, .max_length = 15)),
           FR("containerPort", SCH(.type = SCH_INTEGER, .int32 = true, .has_min = true,
                                   .min = 1, .has_max = true, .max = 65535)),
           F("protocol", SCH(.type = SCH_STRING, ENUM("TCP", "UDP", "SCTP"))),
           F("hostPort", SCH(.type = SCH_INTEGER, .int32 = true, .has_min = true, .min = 0,
                             .has_max = true, .max = 65535)),
           F("hostIP", S_STR))};

static const struct api_schema s_container = {
    .type = SCH_OBJECT,
    FIELDS(FR("name", S_DNS_LABEL), F("image", S_STR), F("command", S_STR_LIST),
           F("args", S_STR_LIST), F("workingDir", S_STR),
           F("ports", KEYED("containerPort", &s_port)),
           F("envFrom", ARR(OBJ(F("prefix", S_STR),
                                F("configMapRef", OBJ(F("name", S_STR), F("optional", S_BOOL))),
                                F("secretRef", OBJ(F("name", S_STR), F("optional", S_BOOL)))))),
           F("env", KEYED("name", OBJ(FR("name", S_STR), F("value", S_STR),
                                      F("valueFrom", &s_env_source)))),
           F("resources", S_RESOURCES), F("resizePolicy", ARR(S_PASS)),
           F("restartPolicy", SCH(.type = SCH_STRING, ENUM("Always"))),
           F("restartPolicyRules", ARR(S_PASS)),
           F("volumeMounts",
             KEYED("mountPath",
                   OBJ(FR("name", S_STR), FR("mountPath", S_STR), F("readOnly", S_BOOL),
                       F("recursiveReadOnly", S_STR), F("subPath", S_STR),
                       F("subPathExpr", S_STR),
                       F("mountPropagation", SCH(.type = SCH_STRING,
                                                 ENUM("None", "HostToContainer",
                                                      "Bidirectional")))))),
           F("volumeDevices", ARR(S_PASS)), F("livenessProbe", S_PASS),
           F("readinessProbe", S_PASS), F("startupProbe", S_PASS), F("lifecycle", S_PASS),
           F("terminationMessagePath", S_STR),
           F("terminationMessagePolicy",
             SCH(.type = SCH_STRING, ENUM("File", "FallbackToLogsOnError"))),
           F("imagePullPolicy", SCH(.type = SCH_STRING, ENUM("Always", "Never", "IfNotPresent"))),
           F("securityContext", S_PASS), F("stdin", S_BOOL), F("stdinOnce", S_BOOL),
           F("tty", S_BOOL))};

static const struct api_schema s_volume = {
    .type = SCH_OBJECT,
    FIELDS(FR("name", S_DNS_LABEL),
           F("configMap", OBJ(F("name", S_STR), F("items", ARR(&s_key_to_path)),
                              F("defaultMode", S_INT32), F("optional", S_BOOL))),
           F("secret", OBJ(F("secretName", S_STR), F("items", ARR(&s_key_to_path)),
                           F("defaultMode", S_INT32), F("optional", S_BOOL))),
           F("emptyDir", OBJ(F("medium", SCH(.type = SCH_STRING, ENUM("", "Memory", "HugePages"))),
                             F("sizeLimit", S_QTY_NONNEG))),
           F("hostPath", OBJ(FR("path", S_STR), F("type", S_STR))),
           F("persistentVolumeClaim", OBJ(FR("claimName", S_STR), F("readOnly", S_BOOL))),
           F("projected", S_PASS), F("downwardAPI", S_PASS), F("csi", S_PASS),
           F("ephemeral", S_PASS), F("nfs", S_PASS), F("image", S_PASS))};

/* volume source fields: exactly one is allowed */
static const char *const VOLUME_SOURCES[] = {"configMap", "secret", "emptyDir", "hostPath",
                                             "persistentVolumeClaim", "projected",
                                             "downwardAPI", "csi", "ephemeral", "nfs",
                                             "image", NULL};

const struct api_schema api__s_pod_spec = {
    .type = SCH_OBJECT,
    FIELDS(FR("containers", SCH(.type = SCH_ARRAY, .items = &s_container,
                                .list_type = LIST_MAP, .merge_key = "name", .min_items = 1)),
           F("initContainers", KEYED("name", &s_container)),
           F("ephemeralContainers", ARR(S_PASS)), F("volumes", KEYED("name", &s_volume)),
           F("restartPolicy", SCH(.type = SCH_STRING, ENUM("Always", "OnFailure", "Never"))),
           F("terminationGracePeriodSeconds", S_NONNEG_INT64),
           F("activeDeadlineSeconds", SCH(.type = SCH_INTEGER, .has_min = true, .min = 1)),
           F("dnsPolicy", SCH(.type = SCH_STRING,
                              ENUM("ClusterFirstWithHostNet", "ClusterFirst", "Default",
                                   "None"))),
           F("dnsConfig", S_PASS), F("nodeSelector", S_LABELS),
           F("serviceAccountName", S_STR), F("serviceAccount", S_STR),
           F("automountServiceAccountToken", S_BOOL), F("nodeName", S_STR),
           F("hostNetwork", S_BOOL), F("hostPID", S_BOOL), F("hostIPC", S_BOOL),
           F("shareProcessNamespace", S_BOOL), F("securityContext", S_PASS),
           F("imagePullSecrets", ARR(OBJ(F("name", S_STR)))), F("hostname", S_DNS_LABEL),
           F("subdomain", S_DNS_LABEL), F("affinity", S_AFFINITY), F("schedulerName", S_STR),
           F("tolerations", S_TOLERATIONS), F("hostAliases", ARR(S_PASS)),
           F("priorityClassName", S_STR), F("priority", S_INT32), F("readinessGates", ARR(S_PASS)),
           F("runtimeClassName", S_STR), F("enableServiceLinks", S_BOOL),
           F("preemptionPolicy", SCH(.type = SCH_STRING, ENUM("PreemptLowerPriority", "Never"))),
           F("overhead", S_RESOURCE_LIST), F("topologySpreadConstraints", ARR(S_PASS)),
           F("setHostnameAsFQDN", S_BOOL), F("os", S_PASS), F("hostUsers", S_BOOL),
           F("schedulingGates", KEYED("name", OBJ(FR("name", S_QNAME)))),
           F("resourceClaims", ARR(S_PASS)), F("resources", S_RESOURCES),
           F("hostnameOverride", S_STR))};

const struct api_schema api__s_pod_template_spec = {
    .type = SCH_OBJECT, FIELDS(F("metadata", S_TEMPLATE_META), F("spec", S_POD_SPEC))};

const struct api_schema api__s_pod_status = {
    .type = SCH_OBJECT,
    FIELDS(F("phase", SCH(.type = SCH_STRING,
                          ENUM("Pending", "Running", "Succeeded", "Failed", "Unknown"))),
           F("conditions", S_CONDITIONS), F("message", S_STR), F("reason", S_STR),
           F("nominatedNodeName", S_STR), F("hostIP", S_STR), F("hostIPs", ARR(S_PASS)),
           F("podIP", S_STR), F("podIPs", ARR(S_PASS)), F("startTime", S_TIME),
           F("initContainerStatuses", ARR(S_PASS)), F("containerStatuses", ARR(S_PASS)),
           F("ephemeralContainerStatuses", ARR(S_PASS)),
           F("qosClass", SCH(.type = SCH_STRING, ENUM("Guaranteed", "Burstable", "BestEffort"))),
           F("resize", S_STR), F("resourceClaimStatuses", ARR(S_PASS)),
           F("observedGeneration", S_INT64))};

/* ---- defaults (core kinds only) ---- */

static void set_default(json_t *o, const char *key, json_t *v)
{
    if (!json_object_get(o, key))
        json_object_set_new(o, key, v);
    else
        json_decref(v);
}

/* imagePullPolicy: Always for ":latest" or an untagged image, else IfNotPresent. */
static const char *pull_policy(const char *image)
{
    if (!image)
        return "IfNotPresent";
    if (strchr(image, '@'))
        return "IfNotPresent";
    const char *slash = strrchr(image, '/');
    const char *colon = strrchr(slash ? slash : image, ':');
    if (!colon || !strcmp(colon, ":latest"))
        return "Always";
    return "IfNotPresent";
}

static void default_containers(json_t *list)
{
    size_t i, j;
    json_t *c, *x;
    json_array_foreach(list, i, c) {
        set_default(c, "terminationMessagePath", json_string("/dev/termination-log"));
        set_default(c, "terminationMessagePolicy", json_string("File"));
        set_default(c, "imagePullPolicy", json_string(pull_policy(JX_STR(c, "image"))));
        json_array_foreach(json_object_get(c, "ports"), j, x) {
            set_default(x, "protocol", json_string("TCP"));
        }
        json_array_foreach(json_object_get(c, "env"), j, x) {
            json_t *fr = JX_GET(x, "valueFrom", "fieldRef");
            if (json_is_object(fr))
                set_default(fr, "apiVersion", json_string("v1"));
        }
    }
}

void api__default_pod_spec(json_t *spec)
{
    if (!json_is_object(spec))
        return;
    set_default(spec, "restartPolicy", json_string("Always"));
    set_default(spec, "terminationGracePeriodSeconds", json_integer(30));
    set_default(spec, "dnsPolicy", json_string("ClusterFirst"));
    set_default(spec, "schedulerName", json_string("default-scheduler"));
    set_default(spec, "securityContext", json_object());
    default_containers(json_object_get(spec, "containers"));
    default_containers(json_object_get(spec, "initContainers"));
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(spec, "volumes"), i, v) {
        if (json_is_object(json_object_get(v, "configMap")))
            set_default(json_object_get(v, "configMap"), "defaultMode", json_integer(420));
        if (json_is_object(json_object_get(v, "secret")))
            set_default(json_object_get(v, "secret"), "defaultMode", json_integer(420));
    }
}

/* ---- validation ---- */

/* requests <= limits for every resource present in both. */
static void validate_resources(struct api_vctx *c, const json_t *res, const char *path)
{
    json_t *limits = json_object_get(res, "limits");
    json_t *requests = json_object_get(res, "requests");
    const char *name;
    json_t *req;
    json_object_foreach(requests, name, req) {
        json_t *lim = json_object_get(limits, name);
        int64_t r, l;
        if (!lim || !api__quantity(req, name, &r) || !api__quantity(lim, name, &l))
            continue;
        if (r > l) {
            char *f = api__path("%s.requests[%s]", path, name);
            api__diag_str(c->d, DIAG_INVALID, f, json_string_value(req),
                          "must be less than or equal to %s limit of %s", name,
                          json_string_value(lim));
            xfree(f);
        }
    }
}

static void validate_env(struct api_vctx *c, const json_t *env, const char *path)
{
    size_t i;
    json_t *e;
    json_array_foreach(env, i, e) {
        const char *name = jx_or_empty(JX_STR(e, "name"));
        char *f = api__path("%s[%zu].name", path, i);
        bool printable = name[0] != '\0';
        for (const char *p = name; *p; p++)
            if (*p < 0x20 || *p > 0x7e || *p == '=')
                printable = false;
        if (!printable && name[0])
            api__diag_str(c->d, DIAG_INVALID, f, name,
                          "a valid environment variable name must consist only of printable "
                          "ASCII characters other than '='");
        xfree(f);
        json_t *vf = json_object_get(e, "valueFrom");
        if (!vf)
            continue;
        f = api__path("%s[%zu].valueFrom", path, i);
        if (JX_STR(e, "value") && JX_STR(e, "value")[0])
            diag_add(c->d, DIAG_INVALID, f, NULL,
                     "may not be specified when `value` is not empty");
        size_t n = json_object_size(vf);
        if (n == 0)
            diag_add(c->d, DIAG_INVALID, f, NULL,
                     "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` "
                     "or `secretKeyRef`");
        else if (n > 1)
            diag_add(c->d, DIAG_INVALID, f, NULL,
                     "may not have more than one field specified at a time");
        xfree(f);
    }
}

static void validate_mounts(struct api_vctx *c, const json_t *mounts, const json_t *volumes,
                            const char *path)
{
    size_t i, j;
    json_t *m, *v;
    json_array_foreach(mounts, i, m) {
        const char *name = JX_STR(m, "name");
        bool found = false;
        json_array_foreach(volumes, j, v) {
            const char *vn = JX_STR(v, "name");
            if (name && vn && !strcmp(name, vn))
                found = true;
        }
        if (name && !found) {
            char *f = api__path("%s[%zu].name", path, i);
            api__diag_str(c->d, DIAG_NOT_FOUND, f, name, NULL);
            xfree(f);
        }
    }
}

/* A path that must stay below its base: relative (when must_be_relative)
 * and without "..". field is the path's own field path. */
static void validate_subpath(struct api_vctx *c, const json_t *v, const char *field,
                             bool must_be_relative)
{
    const char *p = json_string_value(v);
    if (!p || !p[0])
        return;
    if (must_be_relative && p[0] == '/')
        api__diag_str(c->d, DIAG_INVALID, field, p, "must be a relative path");
    else if (api_path_has_dotdot(p))
        api__diag_str(c->d, DIAG_INVALID, field, p, "must not contain '..'");
}

/* A file mode of a volume: 0 to 0777 (no setuid, setgid or sticky bit). */
static void validate_mode(struct api_vctx *c, const json_t *v, const char *field)
{
    if (!json_is_integer(v))
        return;
    json_int_t m = json_integer_value(v);
    if (m < 0 || m > 0777)
        api__diag_int(c->d, DIAG_INVALID, field, (int64_t)m,
                      "must be a number between 0 and 0777 (octal), both inclusive");
}

static bool policy_allows_privileged(const struct api_vctx *c)
{
    return c->env && c->env->pod_policy && c->env->pod_policy->allow_privileged;
}

/* securityContext.privileged: true only with the server's leave. */
static void validate_security_context(struct api_vctx *c, const json_t *ct, const char *base)
{
    if (!json_is_true(JX_GET(ct, "securityContext", "privileged")) ||
        policy_allows_privileged(c))
        return;
    char *f = api__path("%s.securityContext.privileged", base);
    diag_add(c->d, DIAG_FORBIDDEN, f, NULL,
             "disallowed by cluster policy (cueue server --allow-privileged-pods)");
    xfree(f);
}

/* Who each container runs as (api_pod_run_as): a field the server cannot
 * honour is refused here, naming it, rather than failing the pod at
 * start. A pod-level field is reported once. */
static void validate_run_as(struct api_vctx *c, const json_t *spec, const char *path)
{
    const struct api_pod_policy *pol = c->env ? c->env->pod_policy : NULL;
    const char *const lists[] = {"initContainers", "containers"};
    bool pod_reported = false;
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *ct;
        json_array_foreach(json_object_get(spec, lists[l]), i, ct) {
            struct api_run_as ra;
            const char *field;
            bool in_ctr;
            char why[256];
            if (!api_pod_run_as(pol, spec, ct, &ra, &field, &in_ctr, why, sizeof(why)) ||
                (!in_ctr && pod_reported))
                continue;
            pod_reported |= !in_ctr;
            char *f = in_ctr ? api__path("%s.%s[%zu].securityContext.%s", path, lists[l], i,
                                         field)
                             : api__path("%s.securityContext.%s", path, field);
            const json_t *v = in_ctr ? JX_GET(ct, "securityContext", field)
                                     : JX_GET(spec, "securityContext", field);
            if (!strncmp(why, "must be between", 15) && json_is_integer(v))
                api__diag_int(c->d, DIAG_INVALID, f, (int64_t)json_integer_value(v), "%s",
                              why);
            else
                diag_add(c->d, DIAG_FORBIDDEN, f, NULL, "%s", why);
            xfree(f);
        }
    }
}

/* mountPath, subPath and subPathExpr of each mount; workingDir. */
static void validate_container_paths(struct api_vctx *c, const json_t *ct, const char *base)
{
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(ct, "volumeMounts"), i, m) {
        const char *const fields[] = {"mountPath", "subPath", "subPathExpr"};
        for (int k = 0; k < 3; k++) {
            char *f = api__path("%s.volumeMounts[%zu].%s", base, i, fields[k]);
            validate_subpath(c, json_object_get(m, fields[k]), f, k > 0);
            xfree(f);
        }
    }
    char *f = api__path("%s.workingDir", base);
    validate_subpath(c, json_object_get(ct, "workingDir"), f, false);
    xfree(f);
}

static void validate_containers(struct api_vctx *c, const json_t *spec, const char *list,
                                const char *path)
{
    size_t i;
    json_t *ct;
    json_t *volumes = json_object_get(spec, "volumes");
    json_array_foreach(json_object_get(spec, list), i, ct) {
        char *base = api__path("%s.%s[%zu]", path, list, i);
        char *f = api__path("%s.resources", base);
        validate_resources(c, json_object_get(ct, "resources"), f);
        xfree(f);
        f = api__path("%s.env", base);
        validate_env(c, json_object_get(ct, "env"), f);
        xfree(f);
        f = api__path("%s.volumeMounts", base);
        validate_mounts(c, json_object_get(ct, "volumeMounts"), volumes, f);
        xfree(f);
        validate_container_paths(c, ct, base);
        validate_security_context(c, ct, base);
        xfree(base);
    }
}

/* Container names are unique across containers and initContainers. */
static void validate_container_names(struct api_vctx *c, const json_t *spec, const char *path)
{
    size_t i, j;
    json_t *a, *b;
    json_array_foreach(json_object_get(spec, "initContainers"), i, a) {
        json_array_foreach(json_object_get(spec, "containers"), j, b) {
            const char *na = JX_STR(a, "name"), *nb = JX_STR(b, "name");
            if (na && nb && !strcmp(na, nb)) {
                char *f = api__path("%s.initContainers[%zu].name", path, i);
                api__diag_str(c->d, DIAG_DUPLICATE, f, na, NULL);
                xfree(f);
            }
        }
    }
}

/* Is hostPath p allowed: under one of the policy's prefixes (a whole
 * path element: "/data" allows "/data" and "/data/x", not "/database"). */
static bool host_path_allowed(const struct api_vctx *c, const char *p)
{
    const struct api_pod_policy *pol = c->env ? c->env->pod_policy : NULL;
    for (size_t i = 0; pol && i < pol->n_host_path_prefixes; i++) {
        const char *pre = pol->host_path_prefixes[i];
        size_t n = strlen(pre);
        while (n > 1 && pre[n - 1] == '/')
            n--;
        if (!strncmp(p, pre, n) && (p[n] == '\0' || p[n] == '/' || (n == 1 && pre[0] == '/')))
            return true;
    }
    return false;
}

/* The file modes and item paths of a configMap or secret volume, and a
 * hostPath's path. */
static void validate_volume_files(struct api_vctx *c, const json_t *v, const char *base)
{
    const char *const srcs[] = {"configMap", "secret"};
    for (int k = 0; k < 2; k++) {
        const json_t *src = json_object_get(v, srcs[k]);
        if (!src)
            continue;
        char *f = api__path("%s.%s.defaultMode", base, srcs[k]);
        validate_mode(c, json_object_get(src, "defaultMode"), f);
        xfree(f);
        size_t j;
        json_t *it;
        json_array_foreach(json_object_get(src, "items"), j, it) {
            f = api__path("%s.%s.items[%zu].mode", base, srcs[k], j);
            validate_mode(c, json_object_get(it, "mode"), f);
            xfree(f);
            f = api__path("%s.%s.items[%zu].path", base, srcs[k], j);
            validate_subpath(c, json_object_get(it, "path"), f, true);
            xfree(f);
        }
    }
    const char *hp = JX_STR(v, "hostPath", "path");
    if (!hp)
        return;
    char *f = api__path("%s.hostPath.path", base);
    if (api_path_has_dotdot(hp))
        api__diag_str(c->d, DIAG_INVALID, f, hp, "must not contain '..'");
    else if (!host_path_allowed(c, hp))
        diag_add(c->d, DIAG_FORBIDDEN, f, NULL,
                 "hostPath volumes are disallowed by cluster policy (cueue server "
                 "--allow-host-path PREFIX allows paths under PREFIX)");
    xfree(f);
}

static void validate_volumes(struct api_vctx *c, const json_t *spec, const char *path)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(spec, "volumes"), i, v) {
        char *base = api__path("%s.volumes[%zu]", path, i);
        validate_volume_files(c, v, base);
        xfree(base);
        size_t n = 0;
        for (const char *const *s = VOLUME_SOURCES; *s; s++)
            n += json_object_get(v, *s) != NULL;
        if (n == 1)
            continue;
        char *f = api__path("%s.volumes[%zu]", path, i);
        if (n == 0)
            diag_add(c->d, DIAG_REQUIRED, f, NULL, "must specify a volume type");
        else
            diag_add(c->d, DIAG_FORBIDDEN, f, NULL, "may not specify more than 1 volume type");
        xfree(f);
    }
}

void api__validate_pod_spec(struct api_vctx *c, const json_t *spec, const char *path)
{
    if (!json_is_object(spec))
        return;
    validate_container_names(c, spec, path);
    validate_containers(c, spec, "containers", path);
    validate_containers(c, spec, "initContainers", path);
    validate_volumes(c, spec, path);
    validate_run_as(c, spec, path);
    char *f = api__path("%s.resources", path);
    validate_resources(c, json_object_get(spec, "resources"), f);
    xfree(f);
}
