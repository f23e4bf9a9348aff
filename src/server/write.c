/*
 * write: the shared path of every write (POST, PUT, PATCH, apply): decode
 * the body (JSON, YAML or the protobuf envelope), check it names the kind
 * and namespace of the URL, stamp a fresh uid before admission (Job
 * selectors are derived from it), admit (strict decoding unless
 * fieldValidation says Ignore/Warn), store, flush, answer.
 * Invariant: nothing reaches the store unless admission accepted it, so an
 * invalid request never changes the state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/decode.h"
#include "api/meta.h"
#include "api/object.h"
#include "server/srv-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

enum srv_field_validation srv__field_validation(const struct srv_req *q)
{
    const char *v = srv__q(q, "fieldValidation");
    if (v && !strcasecmp(v, "Ignore"))
        return SRV_FV_IGNORE;
    if (v && !strcasecmp(v, "Warn"))
        return SRV_FV_WARN;
    return SRV_FV_STRICT;
}

bool srv__dry_run(const struct srv_req *q)
{
    const char *v = srv__q(q, "dryRun");
    return v && !strcmp(v, "All");
}

static bool ctype_is(const char *ct, const char *want)
{
    size_t n = strlen(want);
    return !strncasecmp(ct, want, n) && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* The body's content type family: 0 JSON/YAML text, 1 protobuf, -1 other. */
static int body_format(const char *ct)
{
    if (!*ct || ctype_is(ct, "application/json") || ctype_is(ct, "application/yaml") ||
        ctype_is(ct, "application/x-yaml") || ctype_is(ct, "text/yaml") ||
        ctype_is(ct, "application/merge-patch+json") ||
        ctype_is(ct, "application/strategic-merge-patch+json") ||
        ctype_is(ct, "application/apply-patch+yaml") ||
        ctype_is(ct, "application/json-patch+json"))
        return 0;
    if (ctype_is(ct, "application/vnd.kubernetes.protobuf"))
        return 1;
    return -1;
}

static json_t *parse_text(struct srv_req *q, struct srv_resp *r, const struct api_kind *k)
{
    struct diag d;
    diag_init(&d);
    json_t *docs = NULL;
    int rc = api_parse_documents(q->body, q->body_len, "request body", &docs, &d);
    if (rc) {
        char *sum = diag_summary(&d);
        if (rc == CU_ELIMIT)
            srv__resp_statusf(r, 413, "RequestEntityTooLarge", "%s", sum);
        else
            srv__resp_statusf(r, 400, "BadRequest", "the body of the request could not be decoded: %s", sum);
        xfree(sum);
        diag_release(&d);
        return NULL;
    }
    diag_release(&d);
    if (json_array_size(docs) != 1) {
        srv__resp_statusf(r, 400, "BadRequest",
                          "the request body must hold exactly one %s object, found %zu documents",
                          k->kind, json_array_size(docs));
        json_decref(docs);
        return NULL;
    }
    json_t *obj = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return obj;
}

/* Default apiVersion/kind from the URL; reject a body of another kind. */
static int check_type(struct srv_resp *r, const struct api_kind *k, json_t *obj)
{
    json_t *av = json_object_get(obj, "apiVersion"), *kd = json_object_get(obj, "kind");
    if ((av && !json_is_string(av)) || (kd && !json_is_string(kd))) {
        srv__resp_statusf(r, 400, "BadRequest", "apiVersion and kind must be strings");
        return CU_EBADREQ;
    }
    if (!av || !json_string_length(av))
        json_object_set_new(obj, "apiVersion", json_string(api_kind_api_version(k)));
    if (!kd || !json_string_length(kd))
        json_object_set_new(obj, "kind", json_string(k->kind));
    const struct api_kind *bk = api_kind_by_gvk(JX_STR(obj, "apiVersion"), JX_STR(obj, "kind"));
    if (bk != k) {
        srv__resp_statusf(r, 400, "BadRequest",
                          "the body is a %s in version \"%s\", but the URL is for %s in version \"%s\"",
                          JX_STR(obj, "kind"), JX_STR(obj, "apiVersion"), k->kind,
                          api_kind_api_version(k));
        return CU_EBADREQ;
    }
    json_t *md = json_object_get(obj, "metadata");
    if (md && !json_is_object(md)) {
        srv__resp_statusf(r, 400, "BadRequest",
                          "%s in version \"%s\" cannot be handled as a %s: metadata must be an object",
                          k->kind, k->version, k->kind);
        return CU_EBADREQ;
    }
    return 0;
}

json_t *srv__decode_body(struct srv_req *q, struct srv_resp *r, const struct api_kind *k)
{
    int fmt = body_format(q->content_type);
    json_t *obj = NULL;
    if (fmt < 0) {
        srv__resp_statusf(r, 415, "UnsupportedMediaType",
                          "the body of the request was in an unknown format - accepted media "
                          "types include: application/json, application/yaml, "
                          "application/vnd.kubernetes.protobuf");
        return NULL;
    }
    if (!q->body_len) {
        srv__resp_statusf(r, 400, "BadRequest", "the request body is empty: a %s object is required",
                          k->kind);
        return NULL;
    }
    if (fmt == 1) {
        char err[512];
        obj = srv_proto_decode(q->body, q->body_len, err, sizeof(err));
        if (!obj) {
            srv__resp_statusf(r, 400, "BadRequest", "the protobuf body could not be decoded: %s", err);
            return NULL;
        }
    } else {
        obj = parse_text(q, r, k);
        if (!obj)
            return NULL;
    }
    if (check_type(r, k, obj)) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

/* Split "spec.a[2].b" into keys and indices and delete the last one. */
bool srv__remove_path(json_t *obj, const char *path)
{
    char *p = xstrdup(path);
    json_t *cur = obj, *parent = NULL;
    char *last_key = NULL;
    long last_idx = -1;
    bool ok = true;
    for (char *s = p; *s && ok;) {
        if (*s == '.') {
            s++;
            continue;
        }
        parent = cur;
        if (*s == '[') {
            char *end;
            last_idx = strtol(s + 1, &end, 10);
            last_key = NULL;
            ok = *end == ']' && json_is_array(cur);
            cur = ok ? json_array_get(cur, (size_t)last_idx) : NULL;
            s = end + (*end == ']');
        } else {
            size_t n = strcspn(s, ".[");
            char save = s[n];
            s[n] = '\0';
            xfree(last_key);
            last_key = xstrdup(s);
            last_idx = -1;
            s[n] = save;
            ok = json_is_object(cur);
            cur = ok ? json_object_get(cur, last_key) : NULL;
            s += n;
        }
        ok = ok && cur;
    }
    bool removed = false;
    if (ok && parent) {
        if (last_key && json_is_object(parent))
            removed = json_object_del(parent, last_key) == 0;
        else if (last_idx >= 0 && json_is_array(parent))
            removed = json_array_remove(parent, (size_t)last_idx) == 0;
    }
    xfree(last_key);
    xfree(p);
    return removed;
}

static bool only_unknown_fields(const struct diag *d)
{
    if (!d->n)
        return false;
    for (size_t i = 0; i < d->n; i++)
        if (d->items[i].type != DIAG_UNKNOWN_FIELD)
            return false;
    return true;
}

/* One admission pass: the /status rules, or the main ones with the store
 * for Kueue's defaulting webhooks (default LocalQueue, priority class). */
static int admit_once(struct srv_req *q, const struct api_kind *k, json_t *obj,
                      const json_t *old, const char *ns, bool status, struct diag *d)
{
    if (status)
        return api_admit_status(k, obj, old, d);
    struct api_admit_env env = {.exists = store_exists, .get = store_lookup, .ctx = q->srv->store,
                                .pod_policy = q->srv->pod_policy,
                                .job_policy = q->srv->job_policy};
    return api_admit_in(k, obj, old, ns, &env, d);
}

int srv__admit(struct srv_req *q, struct srv_resp *r, const struct api_kind *k, json_t *obj,
               const json_t *old, const char *ns, bool status, struct diag *d)
{
    enum srv_field_validation fv = srv__field_validation(q);
    int rc = admit_once(q, k, obj, old, ns, status, d);
    for (int round = 0; rc == CU_EBADREQ && fv != SRV_FV_STRICT && only_unknown_fields(d) &&
                        round < 4;
         round++) {
        for (size_t i = 0; i < d->n; i++) {
            if (fv == SRV_FV_WARN) {
                char w[1024];
                snprintf(w, sizeof(w), "unknown field \"%s\"", d->items[i].field);
                srv__resp_warn(r, w);
            }
            srv__remove_path(obj, d->items[i].field);
        }
        diag_release(d);
        diag_init(d);
        rc = admit_once(q, k, obj, old, ns, status, d);
    }
    return rc;
}

static int check_namespace(struct srv_req *q, struct srv_resp *r, const struct api_kind *k,
                           const char *ns)
{
    if (!k->namespaced)
        return 0;
    json_t *nso = store_get(q->srv->store, KIND_NAMESPACE, NULL, ns);
    if (!nso) {
        srv__resp_err(r, CU_ENOTFOUND, api_kind_get(KIND_NAMESPACE), ns);
        return CU_ENOTFOUND;
    }
    bool deleting = JX_GET(nso, "metadata", "deletionTimestamp") != NULL;
    json_decref(nso);
    if (deleting) {
        srv__resp_statusf(r, 403, "Forbidden",
                          "unable to create new content in namespace %s because it is being terminated",
                          ns);
        return CU_EFORBIDDEN;
    }
    return 0;
}

/* A generated name that is taken is tried again with a new suffix, up to
 * 8 names in all (the API server's RetryGenerateName), before the 409. */
#define GENERATE_NAME_ATTEMPTS 8

static void generate_name(struct srv_req *q, json_t *obj)
{
    if (JX_STR(obj, "metadata", "name") || !JX_STR(obj, "metadata", "generateName"))
        return;
    char sfx[8];
    srv__suffix(q->srv, sfx, 5);
    api_create_name(obj, sfx);
}

/* What a dry-run create answers: the admitted object with the metadata the
 * store would stamp. */
static json_t *dry_run_object(struct srv_req *q, const json_t *obj)
{
    json_t *c = json_deep_copy(obj);
    char ts[TIMEFMT_LEN];
    timefmt_rfc3339(clk_now(q->srv->clock), false, ts);
    JX_SET_NEW(c, json_string(ts), "metadata", "creationTimestamp");
    JX_SET_NEW(c, json_integer(1), "metadata", "generation");
    return c;
}

/* The API server's namespace strategy sets status.phase Active. */
static void namespace_active(struct store *st, json_t **obj)
{
    json_t *c = api_namespace_activated(*obj);
    json_t *out = NULL;
    if (!store_update(st, KIND_NAMESPACE, NULL, c, STORE_UPDATE_STATUS, &out) && out) {
        json_decref(*obj);
        *obj = out;
    }
    json_decref(c);
}

/* One attempt at a create (obj is this attempt's, named). Answers r and
 * returns 0, except when the name is taken and another_name_may_follow:
 * then returns CU_EEXIST without answering or changing anything. */
static int create_once(struct srv_req *q, struct srv_resp *r, const struct api_kind *k,
                       const char *ns, json_t *obj, bool another_name_may_follow)
{
    char uid[37];
    srv__uuid(q->srv, uid);
    api_create_stamp(k, obj, uid);
    struct diag d;
    diag_init(&d);
    int rc = srv__admit(q, r, k, obj, NULL, k->namespaced ? ns : NULL, false, &d);
    if (rc) {
        srv__resp_invalid(r, rc, k, JX_STR(obj, "metadata", "name"), &d);
        diag_release(&d);
        return 0;
    }
    diag_release(&d);
    const char *name = JX_STR(obj, "metadata", "name");
    struct store *st = q->srv->store;
    if (srv__dry_run(q)) {
        json_t *have = store_get(st, k->id, ns, name);
        json_decref(have);
        if (have && another_name_may_follow)
            return CU_EEXIST;
        if (have) {
            srv__resp_err(r, CU_EEXIST, k, name);
        } else {
            json_t *dry = dry_run_object(q, obj);
            srv__resp_json(r, 201, srv__with_type(k, dry)); /* a new reference */
            json_decref(dry);
        }
        return 0;
    }
    json_t *out = NULL;
    char why[512];
    if (store_txn_begin(st, why, sizeof(why))) {
        srv__resp_unsaved(r, k, name, why);
        return 0;
    }
    rc = store_create(st, k->id, k->namespaced ? ns : NULL, obj, &out);
    if (rc) {
        store_txn_rollback(st);
        if (rc == CU_EEXIST && another_name_may_follow)
            return rc;
        srv__resp_err(r, rc, k, name);
        return 0;
    }
    if (k->id == KIND_NAMESPACE)
        namespace_active(st, &out);
    if (store_txn_commit(st, why, sizeof(why))) {
        json_decref(out);
        srv__resp_unsaved(r, k, name, why);
        return 0;
    }
    json_t *typed = srv__with_type(k, out);
    json_decref(out);
    srv__resp_json(r, 201, typed);
    return 0;
}

void srv__create_object(struct srv_req *q, struct srv_resp *r, const struct api_kind *k,
                        const char *ns, json_t *obj)
{
    r->verb = SRV_VERB_CREATE;
    if (check_namespace(q, r, k, ns))
        return;
    api_create_prepare(obj);
    bool generated = !JX_STR(obj, "metadata", "name") && JX_STR(obj, "metadata", "generateName");
    for (int i = 0;; i++) {
        bool last = !generated || i + 1 == GENERATE_NAME_ATTEMPTS;
        /* admission changes what it admits: each name starts from the request */
        json_t *attempt = last ? json_incref(obj) : json_deep_copy(obj);
        generate_name(q, attempt);
        int rc = create_once(q, r, k, ns, attempt, !last);
        json_decref(attempt);
        if (rc != CU_EEXIST)
            return;
    }
}

/* A write that names another uid than the stored object's is refused, as
 * the API server does: an update (PUT) sends its uid as a precondition
 * (409 Conflict, "Precondition failed: UID in precondition: ..."); a
 * patched object fails the immutable-field validation of metadata.uid
 * (422 Invalid). A write without a uid keeps the stored one. Returns true
 * after answering r. */
static bool uid_changed(struct srv_resp *r, const struct api_kind *k, const json_t *obj,
                        const json_t *old)
{
    const char *want = JX_STR(obj, "metadata", "uid");
    const char *have = jx_or_empty(JX_STR(old, "metadata", "uid"));
    if (!want || !*want || !strcmp(want, have))
        return false;
    const char *name = JX_STR(old, "metadata", "name");
    if (r->verb == SRV_VERB_PATCH) {
        struct diag d;
        diag_init(&d);
        diag_addj(&d, DIAG_INVALID, "metadata.uid", JX_GET(obj, "metadata", "uid"),
                  "field is immutable");
        srv__resp_invalid(r, CU_EINVAL, k, name, &d);
        diag_release(&d);
        return true;
    }
    char msg[1024];
    snprintf(msg, sizeof(msg),
             "Operation cannot be fulfilled on %s \"%s\": Precondition failed: UID in "
             "precondition: %s, UID in object meta: %s",
             api_kind_qualified(k), name ? name : "", want, have);
    srv__resp_status(r, 409, "Conflict", msg, srv__details(k, name));
    return true;
}

int srv__update_object(struct srv_req *q, struct srv_resp *r, const struct api_kind *k,
                       const char *ns, json_t *obj, const json_t *old, bool status)
{
    r->verb = r->verb == SRV_VERB_PATCH ? SRV_VERB_PATCH : SRV_VERB_UPDATE;
    const char *name = JX_STR(old, "metadata", "name");
    if (uid_changed(r, k, obj, old))
        return r->code == 409 ? CU_ECONFLICT : CU_EINVAL;
    /* uid and creationTimestamp are the server's: carry them over */
    json_t *md = JX_OBJ(obj, "metadata");
    json_object_set(md, "uid", JX_GET(old, "metadata", "uid"));
    if (JX_GET(old, "metadata", "creationTimestamp"))
        json_object_set(md, "creationTimestamp", JX_GET(old, "metadata", "creationTimestamp"));
    struct diag d;
    diag_init(&d);
    int rc = srv__admit(q, r, k, obj, old, k->namespaced ? ns : NULL, status, &d);
    if (rc) {
        srv__resp_invalid(r, rc, k, name, &d);
        diag_release(&d);
        return rc;
    }
    diag_release(&d);
    if (srv__dry_run(q)) {
        srv__resp_json(r, 200, srv__with_type(k, obj));
        return 0;
    }
    json_t *out = NULL;
    struct store *st = q->srv->store;
    char why[512];
    if (store_txn_begin(st, why, sizeof(why))) {
        srv__resp_unsaved(r, k, name, why);
        return CU_EIO;
    }
    rc = store_update(st, k->id, k->namespaced ? ns : NULL, obj,
                      status ? STORE_UPDATE_STATUS : STORE_UPDATE_MAIN, &out);
    if (rc) {
        store_txn_rollback(st);
        srv__resp_err(r, rc, k, name);
        return rc;
    }
    if (store_txn_commit(st, why, sizeof(why))) {
        json_decref(out);
        srv__resp_unsaved(r, k, name, why);
        return CU_EIO;
    }
    json_t *typed = srv__with_type(k, out ? out : obj);
    json_decref(out);
    srv__resp_json(r, 200, typed);
    return 0;
}
