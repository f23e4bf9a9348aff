/*
 * status: server errors worded exactly as kubectl words them
 * (cmdutil.CheckErr and apimachinery's StatusError), so scripts and people
 * who know kubectl read the same lines:
 *   Error from server (NotFound): clusterqueues.kueue.x-k8s.io "x" not found
 *   The ClusterQueue "x" is invalid: spec.cohort: Invalid value: ...
 * A body that is not a Status gets apimachinery's generic message for the
 * HTTP code plus "(verb resource name)".
 */
#include <string.h>

#include "cli/cli-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static const struct {
    long code;
    const char *reason;
    const char *message;
} generic[] = {
    {400, "BadRequest", "the server rejected our request for an unknown reason"},
    {401, "Unauthorized", "the server has asked for the client to provide credentials"},
    {403, "Forbidden", "the server does not allow access to the requested resource"},
    {404, "NotFound", "the server could not find the requested resource"},
    {405, "MethodNotAllowed", "the server does not allow this method on the requested resource"},
    {406, "NotAcceptable", "the server was unable to respond with a content type that the client supports"},
    {409, "Conflict", "the server reported a conflict"},
    {410, "Expired", "the requested resource is no longer available"},
    {413, "RequestEntityTooLarge", "the request entity is too large"},
    {415, "UnsupportedMediaType", "the server does not support the media type of the request"},
    {422, "Invalid", "the server rejected our request due to an error in our request"},
    {429, "TooManyRequests", "the server has received too many requests and has asked us to try again later"},
    {503, "ServiceUnavailable", "the server is currently unable to handle the request"},
    {504, "Timeout", "the server was unable to return a response in the time allotted, but may still be processing the request"},
};

static bool is_status(const json_t *j)
{
    const char *kind = JX_STR(j, "kind");
    return kind && !strcmp(kind, "Status");
}

const char *cli__status_reason(const struct cli_call *r)
{
    if (is_status(r->json) && JX_STR(r->json, "reason"))
        return JX_STR(r->json, "reason");
    for (size_t i = 0; i < sizeof(generic) / sizeof(generic[0]); i++)
        if (generic[i].code == r->http_status)
            return generic[i].reason;
    return r->http_status >= 500 ? "InternalError" : "";
}

/* "field: message" per cause, as statusCausesToAggrError builds them. */
static char *cause_text(const json_t *cause)
{
    const char *field = JX_STR(cause, "field");
    const char *msg = jx_or_empty(JX_STR(cause, "message"));
    if (field && *field)
        return xasprintf("%s: %s", field, msg);
    return xstrdup(msg);
}

static char *invalid_text(const json_t *st)
{
    const char *kind = JX_STR(st, "details", "kind");
    const char *name = JX_STR(st, "details", "name");
    json_t *causes = JX_GET(st, "details", "causes");
    struct sbuf sb;
    sbuf_init(&sb, 0);
    if ((kind && *kind) || (name && *name))
        sbuf_addf(&sb, "The %s \"%s\" is invalid", jx_or_empty(kind), jx_or_empty(name));
    else if (JX_STR(st, "message"))
        sbuf_addf(&sb, "The request is invalid: %s", JX_STR(st, "message"));
    else
        sbuf_adds(&sb, "The request is invalid");
    size_t n = json_is_array(causes) ? json_array_size(causes) : 0;
    if (n == 1) {
        char *t = cause_text(json_array_get(causes, 0));
        sbuf_addf(&sb, ": %s", t);
        xfree(t);
    } else if (n > 1) {
        sbuf_adds(&sb, ": ");
        for (size_t i = 0; i < n; i++) {
            char *t = cause_text(json_array_get(causes, i));
            sbuf_addf(&sb, "\n* %s", t);
            xfree(t);
        }
    }
    return cli__sbuf_done(&sb);
}

static char *generic_text(const struct cli_call *r, const struct api_kind *k, const char *name,
                          const char *verb, const char *action)
{
    const char *msg = NULL;
    for (size_t i = 0; i < sizeof(generic) / sizeof(generic[0]); i++)
        if (generic[i].code == r->http_status)
            msg = generic[i].message;
    char *own = NULL;
    if (!msg) {
        size_t n = strcspn(r->body.buf, "\r\n");
        if (n > 200)
            n = 200;
        own = xasprintf("an error on the server (\"%.*s\") has prevented the request from "
                        "succeeding", (int)n, r->body.buf);
        msg = own;
    }
    const char *reason = cli__status_reason(r);
    struct sbuf sb;
    sbuf_init(&sb, 0);
    sbuf_addf(&sb, "Error from server%s%s%s: %s%s", reason[0] ? " (" : "", reason,
              reason[0] ? ")" : "", action ? action : "", msg);
    if (k)
        sbuf_addf(&sb, " (%s %s%s%s)", verb ? verb : "get", api_kind_qualified(k),
                  name ? " " : "", name ? name : "");
    xfree(own);
    return cli__sbuf_done(&sb);
}

char *cli__status_text(const struct cli_call *r, const struct api_kind *k, const char *name,
                       const char *verb, const char *action)
{
    if (!is_status(r->json))
        return generic_text(r, k, name, verb, action);
    const char *reason = jx_or_empty(JX_STR(r->json, "reason"));
    if (!strcmp(reason, "Invalid"))
        return invalid_text(r->json);
    const char *msg = jx_or_empty(JX_STR(r->json, "message"));
    if (!reason[0])
        return xasprintf("Error from server: %s%s", action ? action : "", msg);
    return xasprintf("Error from server (%s): %s%s", reason, action ? action : "", msg);
}

int cli__print_call_error(struct cli_ctx *c, const struct cli_call *r, const struct api_kind *k,
                          const char *name, const char *verb, const char *action)
{
    if (r->http_status == 0)
        return cli__print_unreachable(c, r);
    char *t = cli__status_text(r, k, name, verb, action);
    if (c->out)
        fflush(c->out); /* what was printed before the error stays before it */
    fprintf(c->err, "%s\n", t);
    xfree(t);
    return 1;
}
