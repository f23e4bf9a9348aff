/*
 * patchreq: PATCH on an object or its /status, by Content-Type:
 *   application/merge-patch+json           RFC 7386 (every kind)
 *   application/strategic-merge-patch+json built-in kinds only (core, batch),
 *                                          as the API server refuses it for
 *                                          custom resources (415)
 *   application/json-patch+json            RFC 6902
 *   application/apply-patch+yaml           server-side apply, approximated
 *                                          for a single field manager: the
 *                                          applied document is merged over
 *                                          the live object (strategic for
 *                                          built-ins), created when absent
 * The patched document goes through the same admission and store path as
 * a PUT. A patch without a resourceVersion is retried when the object
 * changed underneath it (the API server does the same).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api/patch.h"
#include "api/decode.h"
#include "api/schema.h"
#include "server/srv-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define PATCH_RETRIES 5

enum patch_type { PT_MERGE, PT_STRATEGIC, PT_JSON, PT_APPLY, PT_UNKNOWN };

static enum patch_type patch_type(const char *ct)
{
    if (!strncasecmp(ct, "application/merge-patch+json", 28))
        return PT_MERGE;
    if (!strncasecmp(ct, "application/strategic-merge-patch+json", 38))
        return PT_STRATEGIC;
    if (!strncasecmp(ct, "application/json-patch+json", 27))
        return PT_JSON;
    if (!strncasecmp(ct, "application/apply-patch+yaml", 28))
        return PT_APPLY;
    return PT_UNKNOWN;
}

/* Parse the body as one JSON/YAML value (JSON patches are arrays, so
 * api_parse_documents, which wants mappings, is used only for objects). */
static json_t *parse_patch(struct srv_req *q, struct srv_resp *r, enum patch_type pt)
{
    if (!q->body_len) {
        srv__resp_statusf(r, 400, "BadRequest", "the patch body is empty");
        return NULL;
    }
    if (pt == PT_JSON) {
        json_error_t je;
        json_t *v = json_loadb(q->body, q->body_len, JSON_DECODE_ANY, &je);
        if (!v)
            srv__resp_statusf(r, 400, "BadRequest",
                              "the patch could not be decoded: line %d column %d: %s", je.line,
                              je.column, je.text);
        return v;
    }
    struct diag d;
    diag_init(&d);
    json_t *docs = NULL;
    int rc = api_parse_documents(q->body, q->body_len, "patch", &docs, &d);
    if (rc || json_array_size(docs) != 1) {
        char *s = rc ? diag_summary(&d) : xstrdup("the patch must be exactly one document");
        srv__resp_statusf(r, rc == CU_ELIMIT ? 413 : 400,
                          rc == CU_ELIMIT ? "RequestEntityTooLarge" : "BadRequest",
                          "the patch could not be decoded: %s", s);
        xfree(s);
        diag_release(&d);
        json_decref(docs);
        return NULL;
    }
    diag_release(&d);
    json_t *v = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return v;
}

/* Server-side apply over live: user-owned parts come from the applied
 * document; status and server-set metadata stay. */
static json_t *apply_over(const struct api_kind *k, const json_t *live, const json_t *applied)
{
    json_t *patch = json_deep_copy(applied);
    json_t *md = json_object_get(patch, "metadata");
    if (json_is_object(md)) {
        static const char *const drop[] = {"uid", "resourceVersion", "creationTimestamp",
                                           "generation", "managedFields", NULL};
        for (const char *const *d = drop; *d; d++)
            json_object_del(md, *d);
    }
    json_object_del(patch, "status");
    char err[256];
    json_t *out = api_patch_strategic_kind(k) ? api_strategic_merge_patch(api_schema_for_kind(k->id), live, patch, err,
                                                       sizeof(err))
                                : api_merge_patch(live, patch);
    if (!out)
        out = api_merge_patch(live, patch);
    json_decref(patch);
    return out;
}

static json_t *apply_patch(struct srv_req *q, struct srv_resp *r, const struct api_kind *k,
                           enum patch_type pt, const json_t *old, const json_t *patch)
{
    char err[512] = "";
    json_t *out = NULL;
    switch (pt) {
    case PT_MERGE:
        out = api_merge_patch(old, patch);
        break;
    case PT_STRATEGIC:
        out = api_strategic_merge_patch(api_schema_for_kind(k->id), old, patch, err, sizeof(err));
        break;
    case PT_JSON:
        out = api_json_patch(old, patch, err, sizeof(err));
        break;
    case PT_APPLY:
        out = apply_over(k, old, patch);
        break;
    default:
        break;
    }
    if (!out) {
        srv__resp_statusf(r, pt == PT_JSON ? 422 : 400, pt == PT_JSON ? "Invalid" : "BadRequest",
                          "the patch could not be applied: %s", err);
        return NULL;
    }
    if (!json_is_object(out)) {
        srv__resp_statusf(r, 400, "BadRequest", "the patched document is not an object");
        json_decref(out);
        return NULL;
    }
    (void)q;
    return out;
}

/* The patched object must still be the same object. */
static int check_identity(struct srv_resp *r, const struct api_kind *k, const json_t *old,
                          json_t *obj)
{
    const char *on = JX_STR(old, "metadata", "name"), *nn = JX_STR(obj, "metadata", "name");
    if (!nn || strcmp(on, nn)) {
        srv__resp_statusf(r, 400, "BadRequest",
                          "the name of the object (%s) does not match the name on the URL (%s)",
                          nn ? nn : "", on);
        return CU_EBADREQ;
    }
    const char *av = JX_STR(obj, "apiVersion"), *kd = JX_STR(obj, "kind");
    if (api_kind_by_gvk(av, kd) != k) {
        srv__resp_statusf(r, 400, "BadRequest", "a patch cannot change apiVersion or kind (%s %s)",
                          av ? av : "", kd ? kd : "");
        return CU_EBADREQ;
    }
    return 0;
}

static void apply_create(struct srv_req *q, struct srv_resp *r, struct srv_route *rt,
                         json_t *doc)
{
    const struct api_kind *k = rt->kind;
    if (!json_object_get(doc, "apiVersion"))
        json_object_set_new(doc, "apiVersion", json_string(api_kind_api_version(k)));
    if (!json_object_get(doc, "kind"))
        json_object_set_new(doc, "kind", json_string(k->kind));
    const char *n = JX_STR(doc, "metadata", "name");
    if (api_kind_by_gvk(JX_STR(doc, "apiVersion"), JX_STR(doc, "kind")) != k) {
        srv__resp_statusf(r, 400, "BadRequest", "the applied document is not a %s", k->kind);
    } else if (n && strcmp(n, rt->name)) {
        srv__resp_statusf(r, 400, "BadRequest",
                          "the name of the object (%s) does not match the name on the URL (%s)",
                          n, rt->name);
    } else {
        JX_SET_NEW(doc, json_string(rt->name), "metadata", "name");
        json_object_del(doc, "status");
        srv__create_object(q, r, k, rt->ns, doc);
    }
}

void srv__handle_patch(struct srv_req *q, struct srv_resp *r, struct srv_route *rt)
{
    r->verb = SRV_VERB_PATCH;
    const struct api_kind *k = rt->kind;
    enum patch_type pt = patch_type(q->content_type);
    if (pt == PT_UNKNOWN || (pt == PT_STRATEGIC && !api_patch_strategic_kind(k))) {
        srv__resp_statusf(r, 415, "UnsupportedMediaType",
                          "the body of the request was in an unknown format - accepted media "
                          "types include: application/json-patch+json, "
                          "application/merge-patch+json, application/apply-patch+yaml%s",
                          api_patch_strategic_kind(k) ? ", application/strategic-merge-patch+json" : "");
        return;
    }
    json_t *patch = parse_patch(q, r, pt);
    if (!patch)
        return;
    bool status = rt->sub != NULL;
    bool pinned = json_is_object(patch) && JX_STR(patch, "metadata", "resourceVersion");
    for (int attempt = 0; attempt < PATCH_RETRIES; attempt++) {
        json_t *old = store_get(q->srv->store, k->id, rt->ns, rt->name);
        if (!old) {
            if (pt == PT_APPLY && !status)
                apply_create(q, r, rt, patch);
            else
                srv__resp_err(r, CU_ENOTFOUND, k, rt->name);
            break;
        }
        json_t *typed = srv__with_type(k, old);
        json_t *obj = apply_patch(q, r, k, pt, typed, patch);
        json_decref(typed);
        int rc = obj ? check_identity(r, k, old, obj) : CU_EBADREQ;
        if (!rc && !pinned)
            JX_SET_NEW(obj, json_incref(JX_GET(old, "metadata", "resourceVersion")), "metadata",
                       "resourceVersion");
        if (!rc)
            rc = srv__update_object(q, r, k, rt->ns, obj, old, status);
        json_decref(obj);
        json_decref(old);
        if (rc != CU_ECONFLICT || pinned || attempt + 1 == PATCH_RETRIES)
            break;
        srv__resp_release(r); /* retry against the new state */
        r->verb = SRV_VERB_PATCH;
    }
    json_decref(patch);
}
