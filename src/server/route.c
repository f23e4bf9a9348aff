/*
 * route: from a request path to its handler. The paths are the Kubernetes
 * API's:
 *   /version /healthz /readyz /livez /metrics
 *   /api  /api/v1  /apis  /apis/G  /apis/G/V          discovery
 *   /openapi/v2  /openapi/v3[/api/v1 | /apis/G/V]     OpenAPI
 *   /api/v1/...  /apis/G/V/...                        resources:
 *       [namespaces/NS/]PLURAL[/NAME[/SUBRESOURCE]]
 * plus the cluster-wide list of a namespaced kind (/apis/G/V/PLURAL), and
 * Kueue's visibility API (/apis/visibility.kueue.x-k8s.io/V/..., visibility.c).
 * Unknown query parameters are ignored, as the API server does.
 * Invariant: empty segments are kept, so a trailing slash or "//" is an
 * empty name or namespace (400, as is "." or ".."), never the collection.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "server/srv-int.h"
#include "util/diag.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define MAX_SEGS 16

const char *srv__q(const struct srv_req *q, const char *name)
{
    return q->query ? json_string_value(json_object_get(q->query, name)) : NULL;
}

bool srv__qbool(const struct srv_req *q, const char *name)
{
    const char *v = srv__q(q, name);
    return v && (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "True"));
}

int srv__qint(const struct srv_req *q, struct srv_resp *r, const char *name, long long min,
              long long *out)
{
    const char *v = srv__q(q, name);
    if (!v)
        return 1;
    char *end = NULL;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (!*v || *end || errno == ERANGE) {
        srv__resp_statusf(r, 400, "BadRequest", "invalid value \"%s\" for query parameter %s: "
                          "not an integer", v, name);
        return -1;
    }
    if (n < min) {
        srv__resp_statusf(r, 400, "BadRequest", "invalid value %lld for query parameter %s: "
                          "must be greater than or equal to %lld", n, name, min);
        return -1;
    }
    *out = n;
    return 0;
}

void srv__uuid(struct srv *s, char out[37])
{
    pthread_mutex_lock(&s->rng_mu);
    rng_uuid(&s->rng, out);
    pthread_mutex_unlock(&s->rng_mu);
}

void srv__suffix(struct srv *s, char *out, int n)
{
    pthread_mutex_lock(&s->rng_mu);
    rng_suffix(&s->rng, out, n);
    pthread_mutex_unlock(&s->rng_mu);
}

bool srv__wants_table(const char *accept)
{
    return accept && strstr(accept, "as=Table") != NULL;
}

json_t *srv__with_type(const struct api_kind *k, json_t *obj)
{
    const char *av = JX_STR(obj, "apiVersion");
    const char *kd = JX_STR(obj, "kind");
    if (av && kd && !strcmp(kd, k->kind)) {
        json_incref(obj);
        return obj;
    }
    json_t *c = json_copy(obj);
    json_object_set_new(c, "apiVersion", json_string(api_kind_api_version(k)));
    json_object_set_new(c, "kind", json_string(k->kind));
    return c;
}

void srv__route_release(struct srv_route *rt)
{
    XFREE(rt->ns);
    XFREE(rt->name);
    XFREE(rt->sub);
    rt->kind = NULL;
}

int srv__route_parse(const char *group, char **segs, int nsegs, struct srv_route *out)
{
    memset(out, 0, sizeof(*out));
    if (nsegs >= 3 && !strcmp(segs[0], "namespaces")) {
        const struct api_kind *k = api_kind_by_resource(group, segs[2]);
        if (k && k->namespaced) {
            if (nsegs > 5)
                return CU_ENOTFOUND;
            out->kind = k;
            out->ns = xstrdup(segs[1]);
            out->name = nsegs > 3 ? xstrdup(segs[3]) : NULL;
            out->sub = nsegs > 4 ? xstrdup(segs[4]) : NULL;
            return 0;
        }
    }
    if (nsegs < 1 || nsegs > 3)
        return CU_ENOTFOUND;
    const struct api_kind *k = api_kind_by_resource(group, segs[0]);
    if (!k)
        return CU_ENOTFOUND;
    out->kind = k;
    /* a namespaced kind at the cluster path is only a collection (list,
     * watch); an item needs its namespace */
    if (k->namespaced && nsegs > 1)
        return CU_ENOTFOUND;
    out->name = nsegs > 1 ? xstrdup(segs[1]) : NULL;
    out->sub = nsegs > 2 ? xstrdup(segs[2]) : NULL;
    return 0;
}

static bool version_served(const struct api_kind *k, const char *version)
{
    if (!strcmp(k->version, version))
        return true;
    for (const char *const *a = k->alt_versions; a && *a; a++)
        if (!strcmp(*a, version))
            return true;
    return false;
}

static void not_found(struct srv_resp *r)
{
    srv__resp_status(r, 404, "NotFound", "the server could not find the requested resource",
                     json_object());
}

static void method_not_allowed(struct srv_req *q, struct srv_resp *r)
{
    srv__resp_statusf(r, 405, "MethodNotAllowed", "the server does not allow this method on the requested resource (%s %s)",
                      q->method, q->path);
}

int srv__check_segment(struct srv_resp *r, const char *what, const char *value)
{
    static const char *const may_not_be[] = {".", ".."};
    static const char *const may_not_contain[] = {"/", "%"};
    if (!value)
        return 0;
    if (!*value) {
        srv__resp_statusf(r, 400, "BadRequest", "%s parameter required.", what);
        return CU_EBADREQ;
    }
    for (size_t i = 0; i < sizeof(may_not_be) / sizeof(*may_not_be); i++)
        if (!strcmp(value, may_not_be[i])) {
            srv__resp_statusf(r, 400, "BadRequest", "%s parameter invalid: \"%s\": may not be '%s'",
                              what, value, may_not_be[i]);
            return CU_EBADREQ;
        }
    for (size_t i = 0; i < sizeof(may_not_contain) / sizeof(*may_not_contain); i++)
        if (strstr(value, may_not_contain[i])) {
            srv__resp_statusf(r, 400, "BadRequest",
                              "%s parameter invalid: \"%s\": may not contain '%s'", what, value,
                              may_not_contain[i]);
            return CU_EBADREQ;
        }
    return 0;
}

/* GET/POST/... on a resource path. */
/* The options of a write (Kubernetes' CreateOptions, UpdateOptions,
 * PatchOptions, DeleteOptions validation): dryRun only "All", fieldValidation
 * only "Ignore", "Warn" or "Strict" (case-sensitive). An unsupported value
 * is refused with 422 Invalid before anything is decoded, so a mistyped
 * dryRun never writes. Returns false after answering r. */
static bool write_options_valid(struct srv_req *q, struct srv_resp *r)
{
    const char *m = q->method;
    const char *kind = !strcmp(m, "POST")    ? "CreateOptions"
                       : !strcmp(m, "PUT")   ? "UpdateOptions"
                       : !strcmp(m, "PATCH") ? "PatchOptions"
                       : !strcmp(m, "DELETE") ? "DeleteOptions"
                                              : NULL;
    if (!kind)
        return true;
    struct diag d;
    diag_init(&d);
    json_t *jv = NULL, *jv2 = NULL;
    const char *dry = srv__q(q, "dryRun");
    if (dry && strcmp(dry, "All"))
        diag_addj(&d, DIAG_NOT_SUPPORTED, "dryRun", jv = json_string(dry), "supported values: \"All\"");
    const char *fv = srv__q(q, "fieldValidation");
    if (fv && strcmp(m, "DELETE") && *fv && strcmp(fv, "Ignore") && strcmp(fv, "Warn") &&
        strcmp(fv, "Strict"))
        diag_addj(&d, DIAG_NOT_SUPPORTED, "fieldValidation", jv2 = json_string(fv),
                  "supported values: \"Ignore\", \"Warn\", \"Strict\"");
    json_decref(jv);
    json_decref(jv2);
    if (!diag_has_errors(&d)) {
        diag_release(&d);
        return true;
    }
    char *sum = diag_summary(&d);
    json_t *details = json_pack("{s:s,s:s,s:o}", "group", "meta.k8s.io", "kind", kind, "causes",
                                diag_causes_json(&d));
    char *msg = xasprintf("%s.meta.k8s.io \"\" is invalid: %s", kind, sum);
    srv__resp_status(r, 422, "Invalid", msg, details);
    xfree(msg);
    xfree(sum);
    diag_release(&d);
    return false;
}

static void dispatch_resource(struct srv_req *q, struct srv_resp *r, const char *group,
                              const char *version, char **segs, int nsegs)
{
    struct srv_route rt;
    if (srv__route_parse(group, segs, nsegs, &rt) || !version_served(rt.kind, version)) {
        srv__route_release(&rt);
        not_found(r);
        return;
    }
    /* an empty or dot name never falls back to the collection (a client
     * that sent DELETE .../configmaps/ meant one object, not all of them) */
    if (srv__check_segment(r, "Namespace", rt.ns) || srv__check_segment(r, "Name", rt.name)) {
        srv__route_release(&rt);
        return;
    }
    const char *m = q->method;
    if (!srv__authorize(q, r, &rt) || !write_options_valid(q, r)) {
        srv__route_release(&rt);
        return;
    }
    if (rt.sub && strcmp(rt.sub, "status") && strcmp(rt.sub, "log")) {
        srv__resp_statusf(r, 404, "NotFound", "the server could not find the requested resource (%s %s)",
                          rt.kind->plural, rt.sub);
    } else if (rt.sub && !strcmp(rt.sub, "status") && !rt.kind->has_status) {
        not_found(r);
    } else if (rt.sub && !strcmp(rt.sub, "log")) {
        if (rt.kind->id != KIND_POD)
            not_found(r);
        else if (strcmp(m, "GET"))
            method_not_allowed(q, r);
        else
            srv__handle_log(q, r, &rt);
    } else if (!rt.name) {
        if (!strcmp(m, "GET") && srv__qbool(q, "watch"))
            srv__handle_watch(q, r, &rt);
        else if (!strcmp(m, "GET"))
            srv__handle_list(q, r, &rt);
        else if (!strcmp(m, "POST") && (rt.ns || !rt.kind->namespaced))
            srv__handle_create(q, r, &rt);
        else if (!strcmp(m, "DELETE") && srv__has_deletecollection(rt.kind))
            srv__handle_delete_collection(q, r, &rt);
        else
            method_not_allowed(q, r);
    } else {
        srv__handle_object(q, r, &rt);
    }
    srv__route_release(&rt);
}

void srv__handle_object(struct srv_req *q, struct srv_resp *r, struct srv_route *rt)
{
    const char *m = q->method;
    if (!strcmp(m, "GET"))
        srv__handle_get(q, r, rt);
    else if (!strcmp(m, "PUT"))
        srv__handle_update(q, r, rt);
    else if (!strcmp(m, "PATCH"))
        srv__handle_patch(q, r, rt);
    else if (!strcmp(m, "DELETE") && !rt->sub)
        srv__handle_delete(q, r, rt);
    else
        method_not_allowed(q, r);
}

/* Split "/a/b//c/" in place into its segments, keeping empty ones
 * ("a", "b", "", "c", ""): an empty name must never turn an item path into
 * its collection. Returns the count, or -1 when there are too many. */
static int split_path(char *path, char **segs)
{
    int n = 0;
    char *p = path + (*path == '/');
    if (!*p)
        return 0;
    for (;;) {
        if (n == MAX_SEGS)
            return -1;
        segs[n++] = p;
        char *slash = strchr(p, '/');
        if (!slash)
            return n;
        *slash = '\0';
        p = slash + 1;
    }
}

/* Discovery, OpenAPI and health paths tolerate one trailing slash
 * ("/api/", "/apis/G/V/"), as the API server does; resource paths keep it
 * (an empty name). */
static int drop_trailing_empty(char **segs, int n)
{
    return n > 1 && !*segs[n - 1] ? n - 1 : n;
}

/* True when a segment is empty ("/apis//v1"): such a non-resource path is
 * unknown (404). */
static bool has_empty_segment(char **segs, int n)
{
    for (int i = 0; i < n; i++)
        if (!*segs[i])
            return true;
    return false;
}

/* /healthz and /livez: the process serves (liveness). /readyz also needs
 * the store to write: while saves fail it answers 503 and names the cause,
 * in the shape of the API server's failed readyz check. */
static void health(struct srv_req *q, struct srv_resp *r, bool ready)
{
    char why[512];
    if (atomic_load(&q->srv->stopping)) {
        srv__resp_text(r, 503, "shutting down\n", 14);
    } else if (ready && !store_writable(q->srv->store, why, sizeof(why))) {
        char *msg = xasprintf("[-]store failed: %s\nreadyz check failed\n", why);
        srv__resp_text(r, 503, msg, strlen(msg));
        xfree(msg);
    } else {
        srv__resp_text(r, 200, "ok", 2);
    }
}

void srv__dispatch(struct srv_req *q, struct srv_resp *r)
{
    char *path = xstrdup(q->path);
    char *segs[MAX_SEGS];
    int all = split_path(path, segs);
    int n = all < 0 ? all : drop_trailing_empty(segs, all);
    bool is_get = !strcmp(q->method, "GET") || !strcmp(q->method, "HEAD");
    bool core_res = n >= 3 && !strcmp(segs[0], "api") && !strcmp(segs[1], "v1");
    bool group_res = n >= 4 && !strcmp(segs[0], "apis");
    r->verb = SRV_VERB_OTHER;
    if (n < 0) {
        not_found(r);
    } else if (!srv__authorize_path(q, r, segs, n)) {
        /* answered 403 */
    } else if (core_res) {
        dispatch_resource(q, r, "", segs[1], segs + 2, all - 2);
    } else if (group_res && srv__visibility_path(segs[1])) {
        srv__handle_visibility(q, r, segs[2], segs + 3, all - 3);
    } else if (group_res) {
        dispatch_resource(q, r, segs[1], segs[2], segs + 3, all - 3);
    } else if (has_empty_segment(segs, n)) {
        not_found(r);
    } else if (n == 1 && !strcmp(segs[0], "version") && is_get) {
        srv__handle_version(q, r);
    } else if (n == 1 && (!strcmp(segs[0], "healthz") || !strcmp(segs[0], "readyz") ||
                          !strcmp(segs[0], "livez"))) {
        health(q, r, !strcmp(segs[0], "readyz"));
    } else if (n == 1 && !strcmp(segs[0], "metrics") && is_get) {
        srv__handle_metrics(q, r);
    } else if (n >= 1 && !strcmp(segs[0], "openapi") && is_get) {
        srv__handle_openapi(q, r, segs, n);
    } else if (n >= 1 && n <= 2 && !strcmp(segs[0], "api") && is_get) {
        srv__handle_discovery(q, r, segs, n);
    } else if (n >= 1 && n <= 3 && !strcmp(segs[0], "apis") && is_get) {
        srv__handle_discovery(q, r, segs, n);
    } else {
        not_found(r);
    }
    xfree(path);
}
