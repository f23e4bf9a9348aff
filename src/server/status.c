/*
 * status: building responses, and Kubernetes `Status` failures with the
 * HTTP code, reason and message kubectl prints ("Error from server
 * (NotFound): clusterqueues.kueue.x-k8s.io \"x\" not found").
 * Invariant: every JSON body carries Content-Type application/json.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api/object.h"
#include "server/srv-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

void srv__resp_init(struct srv_resp *r)
{
    memset(r, 0, sizeof(*r));
    r->code = 200;
    r->verb = SRV_VERB_OTHER;
}

void srv__resp_release(struct srv_resp *r)
{
    xfree(r->content_type);
    xfree(r->body);
    if (r->stream.free)
        r->stream.free(r->stream.ctx);
    for (int i = 0; i < r->n_warnings; i++)
        xfree(r->warnings[i]);
    for (int i = 0; i < r->n_headers; i++) {
        xfree(r->headers[i][0]);
        xfree(r->headers[i][1]);
    }
    int verb = r->verb;
    memset(r, 0, sizeof(*r));
    r->verb = verb;
}

void srv__resp_header(struct srv_resp *r, const char *name, const char *value)
{
    if (r->n_headers >= SRV_MAX_HEADERS)
        return;
    r->headers[r->n_headers][0] = xstrdup(name);
    r->headers[r->n_headers][1] = xstrdup(value);
    r->n_headers++;
}

static void set_body(struct srv_resp *r, int code, char *body, size_t len, const char *ctype)
{
    xfree(r->body);
    xfree(r->content_type);
    r->code = code;
    r->body = body;
    r->len = len;
    r->content_type = xstrdup(ctype);
}

void srv__resp_json_ct(struct srv_resp *r, int code, json_t *obj, const char *ctype)
{
    char *text = jx_dumps(obj);
    json_decref(obj);
    size_t n = strlen(text);
    /* newline-terminated like the Kubernetes API server's encoder */
    char *body = xmalloc(n + 2);
    memcpy(body, text, n);
    body[n] = '\n';
    body[n + 1] = '\0';
    xfree(text);
    set_body(r, code, body, n + 1, ctype);
}

void srv__resp_json(struct srv_resp *r, int code, json_t *obj)
{
    srv__resp_json_ct(r, code, obj, "application/json");
}

void srv__resp_bytes(struct srv_resp *r, int code, const void *data, size_t len,
                     const char *ctype)
{
    char *body = xmalloc(len + 1);
    if (len)
        memcpy(body, data, len);
    body[len] = '\0';
    set_body(r, code, body, len, ctype);
}

void srv__resp_text(struct srv_resp *r, int code, const char *text, size_t len)
{
    srv__resp_bytes(r, code, text, len, "text/plain; charset=utf-8");
}

void srv__resp_status(struct srv_resp *r, int code, const char *reason, const char *message,
                      json_t *details)
{
    json_t *st = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status",
                           "apiVersion", "v1", "metadata", "status", "Failure", "message",
                           message ? message : "", "reason", reason ? reason : "", "code",
                           code);
    if (details)
        json_object_set_new(st, "details", details);
    srv__resp_json(r, code, st);
}

void srv__resp_statusf(struct srv_resp *r, int code, const char *reason, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    srv__resp_status(r, code, reason, msg, NULL);
}

json_t *srv__details(const struct api_kind *k, const char *name)
{
    json_t *d = json_object();
    if (name)
        json_object_set_new(d, "name", json_string(name));
    if (k) {
        json_object_set_new(d, "group", json_string(k->group));
        json_object_set_new(d, "kind", json_string(k->plural));
    }
    return d;
}

void srv__resp_err(struct srv_resp *r, int rc, const struct api_kind *k, const char *name)
{
    const char *q = k ? api_kind_qualified(k) : "objects";
    const char *n = name ? name : "";
    char msg[1024];
    switch (rc) {
    case CU_ENOTFOUND:
        snprintf(msg, sizeof(msg), "%s \"%s\" not found", q, n);
        break;
    case CU_EEXIST:
        snprintf(msg, sizeof(msg), "%s \"%s\" already exists", q, n);
        break;
    case CU_ECONFLICT:
        snprintf(msg, sizeof(msg),
                 "Operation cannot be fulfilled on %s \"%s\": the object has been modified; "
                 "please apply your changes to the latest version and try again",
                 q, n);
        break;
    case CU_EGONE:
        snprintf(msg, sizeof(msg), "the resourceVersion for the provided watch is too old");
        break;
    default:
        snprintf(msg, sizeof(msg), "%s \"%s\": %s", q, n, cu_strerror(rc));
        break;
    }
    srv__resp_status(r, cu_err_http_status(rc), cu_err_reason(rc), msg, srv__details(k, name));
}

void srv__resp_unsaved(struct srv_resp *r, const struct api_kind *k, const char *name,
                       const char *why)
{
    char cause[1024];
    snprintf(cause, sizeof(cause), "%s \"%s\" was not saved: %s",
             k ? api_kind_qualified(k) : "objects", name ? name : "",
             why && *why ? why : "the store cannot write");
    char msg[1100];
    snprintf(msg, sizeof(msg), "Internal error occurred: %s", cause);
    json_t *details = srv__details(k, name);
    json_object_set_new(details, "causes", json_pack("[{s:s}]", "message", cause));
    srv__resp_status(r, 500, "InternalError", msg, details);
}

void srv__resp_invalid(struct srv_resp *r, int rc, const struct api_kind *k, const char *name,
                       const struct diag *d)
{
    char *msg = api_error_message(k, name ? name : "", rc, d);
    json_t *details = json_object();
    if (name)
        json_object_set_new(details, "name", json_string(name));
    json_object_set_new(details, "group", json_string(k->group));
    /* kubectl builds "The <Kind> \"x\" is invalid" from details.kind: the
     * Kind, not the plural, for Invalid (kubectl.md §5) */
    json_object_set_new(details, "kind", json_string(rc == CU_EINVAL ? k->kind : k->plural));
    json_object_set_new(details, "causes", diag_causes_json(d));
    srv__resp_status(r, cu_err_http_status(rc), cu_err_reason(rc), msg, details);
    xfree(msg);
}

void srv__resp_warn(struct srv_resp *r, const char *text)
{
    if (r->n_warnings < SRV_MAX_WARNINGS)
        r->warnings[r->n_warnings++] = xstrdup(text);
}
