/*
 * schema_service: core/v1 Service and Endpoints and discovery.k8s.io/v1
 * EndpointSlice, with the API server's defaults and the validation rules
 * that matter here (ValidateService, ValidateEndpoints,
 * ValidateEndpointSlice). Only ClusterIP Services are served (headless:
 * clusterIP "None"); a ClusterIP is recorded, not routed: nothing on this
 * machine forwards traffic sent to it (docs/nodes.md "Services").
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "api/names.h"
#include "api/schema-int.h"
#include "util/jsonx.h"
#include "util/sha1.h"
#include "util/xalloc.h"

#define S_PORT_NUM SCH(.type = SCH_INTEGER, .int32 = true, .has_min = true, .min = 1, \
                       .has_max = true, .max = 65535)
#define S_PROTOCOL SCH(.type = SCH_STRING, ENUM("TCP", "UDP", "SCTP"))

/* ---- Service ---- */

static const struct api_schema s_service_port = {
    .type = SCH_OBJECT,
    FIELDS(F("name", S_STR), F("protocol", S_PROTOCOL), F("appProtocol", S_STR),
           FR("port", S_PORT_NUM), F("targetPort", S_INT_OR_STR), F("nodePort", S_INT32))};

static const struct api_schema s_service_spec = {
    .type = SCH_OBJECT,
    FIELDS(F("type", SCH(.type = SCH_STRING, ENUM("ClusterIP"))), F("selector", S_STR_MAP),
           F("ports", ARR(&s_service_port)), F("clusterIP", S_STR), F("clusterIPs", S_STR_LIST),
           F("publishNotReadyAddresses", S_BOOL),
           F("sessionAffinity", SCH(.type = SCH_STRING, ENUM("None", "ClientIP"))),
           F("sessionAffinityConfig", S_PASS), F("ipFamilies", S_STR_LIST),
           F("ipFamilyPolicy", S_STR), F("internalTrafficPolicy", S_STR),
           F("trafficDistribution", S_STR))};

static const struct api_schema s_service = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(F("spec", &s_service_spec), F("status", S_PASS))};

/* A ClusterIP for a new Service: 10.96.0.0/16 from a hash of its
 * namespace/name (recorded only, see the file comment). */
static char *cluster_ip_new(const json_t *svc)
{
    char *key = xasprintf("%s/%s", jx_or_empty(JX_STR(svc, "metadata", "namespace")),
                          jx_or_empty(JX_STR(svc, "metadata", "name")));
    unsigned v = sha1_u32(key, strlen(key)) >> 16;
    xfree(key);
    return xasprintf("10.96.%u.%u", (v >> 8) & 0xff, (v & 0xff) ? (v & 0xff) : 1);
}

static void service_defaults(struct api_vctx *c)
{
    json_t *spec = JX_OBJ(c->obj, "spec");
    if (!json_object_get(spec, "type"))
        json_object_set_new(spec, "type", json_string("ClusterIP"));
    if (!json_object_get(spec, "sessionAffinity"))
        json_object_set_new(spec, "sessionAffinity", json_string("None"));
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(spec, "ports"), i, p) {
        if (!json_is_object(p))
            continue;
        if (!json_object_get(p, "protocol"))
            json_object_set_new(p, "protocol", json_string("TCP"));
        if (!json_object_get(p, "targetPort") && json_object_get(p, "port"))
            json_object_set_new(p, "targetPort", json_incref(json_object_get(p, "port")));
    }
    const json_t *old_ip = JX_GET(c->old, "spec", "clusterIP");
    if (!json_object_get(spec, "clusterIP") || !jx_or_empty(JX_STR(spec, "clusterIP"))[0]) {
        char *ip = old_ip ? xstrdup(jx_or_empty(json_string_value(old_ip))) : cluster_ip_new(c->obj);
        json_object_set_new(spec, "clusterIP", json_string(ip));
        xfree(ip);
    }
    if (!json_object_get(spec, "clusterIPs"))
        json_object_set_new(spec, "clusterIPs",
                            json_pack("[O]", json_object_get(spec, "clusterIP")));
}

/* IsValidPortName: an IANA service name, 1-15 of [a-z0-9-], at least one
 * letter, no leading, trailing or double '-'. NULL when valid. */
static const char *port_name_error(const char *s)
{
    size_t n = strlen(s);
    bool letter = false;
    if (n == 0 || n > 15)
        return "must be no more than 15 characters";
    for (size_t i = 0; i < n; i++) {
        if (islower((unsigned char)s[i]))
            letter = true;
        else if (!isdigit((unsigned char)s[i]) && s[i] != '-')
            return "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)";
    }
    if (!letter)
        return "must contain at least one letter (a-z)";
    if (s[0] == '-' || s[n - 1] == '-' || strstr(s, "--"))
        return "must not begin or end with a hyphen, nor contain adjacent hyphens";
    return NULL;
}

static void validate_target_port(struct api_vctx *c, const json_t *tp, size_t i)
{
    char *f = api__path("spec.ports[%zu].targetPort", i);
    if (json_is_integer(tp)) {
        json_int_t v = json_integer_value(tp);
        if (v < 1 || v > 65535)
            api__diag_int(c->d, DIAG_INVALID, f, (int64_t)v,
                          "must be between 1 and 65535, inclusive");
    } else if (json_is_string(tp)) {
        const char *why = port_name_error(json_string_value(tp));
        if (why)
            api__diag_str(c->d, DIAG_INVALID, f, json_string_value(tp), "%s", why);
    }
    xfree(f);
}

static void validate_ports(struct api_vctx *c, const json_t *ports, bool headless)
{
    size_t n = json_array_size(ports);
    if (n == 0 && !headless)
        diag_add(c->d, DIAG_REQUIRED, "spec.ports", NULL, NULL);
    for (size_t i = 0; i < n; i++) {
        const json_t *p = json_array_get(ports, i);
        const char *name = JX_STR(p, "name");
        char *f = api__path("spec.ports[%zu].name", i);
        if (n > 1 && (!name || !name[0]))
            diag_add(c->d, DIAG_REQUIRED, f, NULL, NULL);
        const char *bad = name && name[0] ? api_check_dns1123_label(name) : NULL;
        if (bad)
            api__diag_str(c->d, DIAG_INVALID, f, name, "%s", bad);
        for (size_t j = 0; name && name[0] && j < i; j++) {
            if (!strcmp(name, jx_or_empty(JX_STR(json_array_get(ports, j), "name"))))
                api__diag_str(c->d, DIAG_DUPLICATE, f, name, "%s", "");
        }
        xfree(f);
        validate_target_port(c, json_object_get(p, "targetPort"), i);
    }
}

static void service_validate(struct api_vctx *c)
{
    const json_t *spec = json_object_get(c->obj, "spec");
    const char *ip = jx_or_empty(JX_STR(spec, "clusterIP"));
    bool headless = !strcmp(ip, "None");
    validate_ports(c, json_object_get(spec, "ports"), headless);
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(spec, "selector"), k, v) {
        const char *bad = api_check_qualified_name(k);
        char *f = api__path("spec.selector[%s]", k);
        if (bad)
            api__diag_str(c->d, DIAG_INVALID, f, k, "%s", bad);
        bad = api_check_label_value(jx_or_empty(json_string_value(v)));
        if (bad)
            api__diag_str(c->d, DIAG_INVALID, f, json_string_value(v), "%s", bad);
        xfree(f);
    }
    if (c->old && !c->status_update)
        api__immutable(c, JX_GET(spec, "clusterIP"), JX_GET(c->old, "spec", "clusterIP"),
                       "spec.clusterIP");
}

const struct api_kind_schema api__ks_service = {
    .kind = KIND_SERVICE, .root = &s_service, .name_rule = api_check_dns1035_label,
    .defaults = service_defaults, .validate = service_validate};

/* ---- Endpoints ---- */

static const struct api_schema s_endpoint_port = {
    .type = SCH_OBJECT,
    FIELDS(F("name", S_STR), FR("port", S_PORT_NUM), F("protocol", S_PROTOCOL),
           F("appProtocol", S_STR))};

static const struct api_schema s_endpoint_address = {
    .type = SCH_OBJECT,
    FIELDS(FR("ip", S_STR), F("hostname", S_STR), F("nodeName", S_STR), F("targetRef", S_PASS))};

static const struct api_schema s_endpoints = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(F("subsets", ARR(OBJ(F("addresses", ARR(&s_endpoint_address)),
                                     F("notReadyAddresses", ARR(&s_endpoint_address)),
                                     F("ports", ARR(&s_endpoint_port))))))};

const struct api_kind_schema api__ks_endpoints = {
    .kind = KIND_ENDPOINTS, .root = &s_endpoints, .name_rule = api_check_dns1123_subdomain};

/* ---- EndpointSlice ---- */

static const struct api_schema s_slice_endpoint = {
    .type = SCH_OBJECT,
    FIELDS(FR("addresses", S_STR_LIST),
           F("conditions", OBJ(F("ready", S_BOOL), F("serving", S_BOOL),
                               F("terminating", S_BOOL))),
           F("hostname", S_STR), F("nodeName", S_STR), F("zone", S_STR), F("targetRef", S_PASS),
           F("hints", S_PASS))};

static const struct api_schema s_endpointslice = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(FR("addressType", SCH(.type = SCH_STRING, ENUM("IPv4", "IPv6", "FQDN"))),
                F("endpoints", ARR(&s_slice_endpoint)), F("ports", ARR(&s_endpoint_port)))};

const struct api_kind_schema api__ks_endpointslice = {
    .kind = KIND_ENDPOINTSLICE, .root = &s_endpointslice,
    .name_rule = api_check_dns1123_subdomain};
