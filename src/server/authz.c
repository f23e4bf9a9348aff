/*
 * authz: who may do what, and the request checks that keep other web
 * sites out (docs/security.md). Pure functions of the request; http.c and
 * route.c call them and answer what they fill in.
 *
 *  - Authentication: every request but /healthz, /livez, /readyz and
 *    /version carries "Authorization: Bearer TOKEN" naming a token of
 *    <state-dir>/tokens (auth.c), else 401 Unauthorized; `--anonymous`
 *    (loopback only) turns this off.
 *  - Authorization of a scoped token (the apiserver's RBAC answers, in
 *    spirit): objects of namespaced kinds only in its namespaces (a list or
 *    watch across all namespaces is forbidden, not filtered, as the
 *    apiserver does without a cluster-wide role); cluster-scoped kinds
 *    read-only (its own Namespaces only); /metrics and the cluster-wide
 *    visibility API admin-only. Refusals are 403 Forbidden Statuses worded
 *    as Kubernetes words them.
 *  - Cross-site requests: a POST, PUT or PATCH with a body needs a JSON,
 *    YAML or protobuf Content-Type (415 otherwise: a browser form cannot
 *    send one without a CORS preflight, which is never granted); an Origin header
 *    must be the server's own (403); on loopback the Host header must be a
 *    loopback name or address (403; DNS rebinding).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "server/srv-int.h"
#include "util/xalloc.h"

bool srv__public_path(const char *path)
{
    return !strcmp(path, "/healthz") || !strcmp(path, "/livez") || !strcmp(path, "/readyz") ||
           !strcmp(path, "/version") || !strcmp(path, "/version/");
}

bool srv__write_media_type_ok(const char *method, const char *content_type)
{
    if (strcmp(method, "POST") && strcmp(method, "PUT") && strcmp(method, "PATCH"))
        return true;
    static const char *const ok[] = {
        "application/json", "application/yaml", "application/x-yaml", "text/yaml",
        "application/merge-patch+json", "application/strategic-merge-patch+json",
        "application/apply-patch+yaml", "application/json-patch+json",
        "application/vnd.kubernetes.protobuf",
    };
    size_t n = strcspn(content_type, "; \t");
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        if (n == strlen(ok[i]) && !strncasecmp(content_type, ok[i], n))
            return true;
    return false;
}

/* host without its port: "[::1]:6443" -> "::1", "a:1" -> "a". */
static void host_name(const char *host, char *out, size_t outlen)
{
    if (*host == '[') {
        size_t n = strcspn(host + 1, "]");
        snprintf(out, outlen, "%.*s", (int)n, host + 1);
    } else {
        size_t n = strcspn(host, ":");
        snprintf(out, outlen, "%.*s", (int)n, host);
    }
}

bool srv__is_loopback(const char *addr)
{
    struct in_addr a4;
    struct in6_addr a6;
    if (!strcmp(addr, "localhost"))
        return true;
    if (inet_pton(AF_INET, addr, &a4) == 1)
        return (ntohl(a4.s_addr) >> 24) == 127;
    if (inet_pton(AF_INET6, addr, &a6) == 1)
        return IN6_IS_ADDR_LOOPBACK(&a6);
    return false;
}

bool srv__host_allowed(bool loopback_only, const char *host)
{
    if (!loopback_only || !host || !*host)
        return true;
    char name[256];
    host_name(host, name, sizeof(name));
    return srv__is_loopback(name);
}

bool srv__origin_allowed(const char *origin, const char *host, bool tls)
{
    if (!origin || !*origin)
        return true;
    if (!host || !*host)
        return false;
    char *own = xasprintf("%s://%s", tls ? "https" : "http", host);
    bool same = !strcasecmp(origin, own);
    xfree(own);
    return same;
}

/* The RBAC verb of a resource request. */
static const char *verb_of(const struct srv_req *q, const struct srv_route *rt)
{
    const char *m = q->method;
    if (!strcmp(m, "GET") || !strcmp(m, "HEAD"))
        return rt->name ? "get" : srv__qbool(q, "watch") ? "watch" : "list";
    if (!strcmp(m, "POST"))
        return "create";
    if (!strcmp(m, "PUT"))
        return "update";
    if (!strcmp(m, "PATCH"))
        return "patch";
    if (!strcmp(m, "DELETE"))
        return rt->name ? "delete" : "deletecollection";
    return m;
}

static void forbid(struct srv_resp *r, const struct srv_principal *who, const char *verb,
                   const struct srv_route *rt, const char *scope_ns)
{
    const struct api_kind *k = rt->kind;
    char res[128];
    snprintf(res, sizeof(res), "%s%s%s", k->plural, rt->sub ? "/" : "", rt->sub ? rt->sub : "");
    char what[512];
    if (rt->name)
        snprintf(what, sizeof(what), "%s%s%s \"%s\"", k->plural, *k->group ? "." : "", k->group,
                 rt->name);
    else
        snprintf(what, sizeof(what), "%s%s%s", k->plural, *k->group ? "." : "", k->group);
    char *msg;
    if (scope_ns)
        msg = xasprintf("%s is forbidden: User \"%s\" cannot %s resource \"%s\" in API group "
                        "\"%s\" in the namespace \"%s\"",
                        what, who->name, verb, res, k->group, scope_ns);
    else
        msg = xasprintf("%s is forbidden: User \"%s\" cannot %s resource \"%s\" in API group "
                        "\"%s\" at the cluster scope",
                        what, who->name, verb, res, k->group);
    srv__resp_status(r, 403, "Forbidden", msg, srv__details(k, rt->name));
    xfree(msg);
}

bool srv__authorize(const struct srv_req *q, struct srv_resp *r, const struct srv_route *rt)
{
    const struct srv_principal *who = q->principal;
    if (!who || who->admin)
        return true;
    const char *verb = verb_of(q, rt);
    bool read = !strcmp(verb, "get") || !strcmp(verb, "list") || !strcmp(verb, "watch");
    if (rt->kind->namespaced) {
        if (!rt->ns) {
            forbid(r, who, verb, rt, NULL);
            return false;
        }
        if (!srv_principal_has_namespace(who, rt->ns)) {
            forbid(r, who, verb, rt, rt->ns);
            return false;
        }
        return true;
    }
    /* cluster-scoped: read-only; Namespaces only the token's own */
    bool ok = read;
    if (ok && rt->kind->id == KIND_NAMESPACE)
        ok = rt->name && srv_principal_has_namespace(who, rt->name);
    if (!ok)
        forbid(r, who, verb, rt, NULL);
    return ok;
}

bool srv__authorize_path(const struct srv_req *q, struct srv_resp *r, char **segs, int n)
{
    const struct srv_principal *who = q->principal;
    if (!who || who->admin)
        return true;
    bool visibility = n >= 2 && !strcmp(segs[0], "apis") && srv__visibility_path(segs[1]);
    if (visibility && n >= 5 && !strcmp(segs[3], "namespaces") &&
        srv_principal_has_namespace(who, segs[4]))
        return true;
    if (!visibility && !(n >= 1 && !strcmp(segs[0], "metrics")))
        return true;
    char *msg = xasprintf("forbidden: User \"%s\" cannot get path \"%s\"", who->name, q->path);
    srv__resp_status(r, 403, "Forbidden", msg, NULL);
    xfree(msg);
    return false;
}
