/*
 * crud: GET (item, list), POST, PUT and DELETE on resource paths, with the
 * Kubernetes answers: 201 on create, 409 AlreadyExists/Conflict, 404
 * NotFound, 200 + the object on delete (or the object with
 * deletionTimestamp while finalizers hold it). Tables when Accept asks.
 * Deletion propagation: Background (dependents collected by the control
 * plane's gc reconciler), Foreground (dependents deleted first, here),
 * Orphan (dependents' ownerReferences to the object removed first).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "api/decode.h"
#include "api/meta.h"
#include "server/srv-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define MAX_GC_DEPTH 8

static const char *include_object(const struct srv_req *q)
{
    const char *v = srv__q(q, "includeObject");
    return v && *v ? v : "Metadata";
}

void srv__handle_get(struct srv_req *q, struct srv_resp *r, struct srv_route *rt)
{
    r->verb = SRV_VERB_GET;
    const struct api_kind *k = rt->kind;
    json_t *obj = store_get(q->srv->store, k->id, rt->ns, rt->name);
    if (!obj) {
        srv__resp_err(r, CU_ENOTFOUND, k, rt->name);
        return;
    }
    if (srv__wants_table(q->accept)) {
        json_t *one = json_pack("[O]", obj);
        uint64_t rv = (uint64_t)strtoull(jx_or_empty(JX_STR(obj, "metadata", "resourceVersion")),
                                         NULL, 10);
        json_t *t = srv_table_new(k, one, rv, clk_now(q->srv->clock), include_object(q), true);
        json_decref(one);
        srv__resp_json_ct(r, 200, t, "application/json;as=Table;v=v1;g=meta.k8s.io");
    } else {
        srv__resp_json(r, 200, srv__with_type(k, obj));
    }
    json_decref(obj);
}

/* The list's items after filtering, each with apiVersion/kind. */
static json_t *filtered(const struct api_kind *k, json_t *items, const struct srv_filter *f)
{
    json_t *out = json_array();
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it)
    {
        if (srv__filter_matches(f, it))
            json_array_append_new(out, srv__with_type(k, it));
    }
    return out;
}

/* A continue token this server could have issued: "NAMESPACE/NAME" with
 * a non-empty name and exactly one slash. */
static bool continue_token_valid(const char *cont)
{
    const char *slash = strchr(cont, '/');
    return slash && slash[1] && !strchr(slash + 1, '/');
}

/* limit (>= 0) and continue, checked before the list is read. Returns
 * false after answering r with 400 BadRequest. */
static bool page_params_valid(struct srv_req *q, struct srv_resp *r, long long *limit)
{
    *limit = 0;
    if (srv__qint(q, r, "limit", 0, limit) < 0)
        return false;
    const char *cont = srv__q(q, "continue");
    if (cont && *cont && !continue_token_valid(cont)) {
        srv__resp_statusf(r, 400, "BadRequest",
                          "continue key is not valid: \"%s\" is not a continue token this "
                          "server issued (pass back metadata.continue of the previous page)",
                          cont);
        return false;
    }
    return true;
}

/* limit/continue: the continue token is the (namespace/name) key after
 * which the next page starts; pages come from the current state. */
static json_t *page(json_t *items, const struct srv_req *q, long long limit, char **cont_out,
                    long *remaining)
{
    *cont_out = NULL;
    *remaining = 0;
    const char *cont = srv__q(q, "continue");
    size_t start = 0, n = json_array_size(items);
    if (cont && *cont) {
        while (start < n) {
            json_t *it = json_array_get(items, start);
            char *key = xasprintf("%s/%s", jx_or_empty(JX_STR(it, "metadata", "namespace")),
                                  jx_or_empty(JX_STR(it, "metadata", "name")));
            int cmp = strcmp(key, cont);
            xfree(key);
            if (cmp > 0)
                break;
            start++;
        }
    }
    size_t end = n;
    if (limit > 0 && start + (size_t)limit < n) {
        end = start + (size_t)limit;
        json_t *last = json_array_get(items, end - 1);
        *cont_out = xasprintf("%s/%s", jx_or_empty(JX_STR(last, "metadata", "namespace")),
                              jx_or_empty(JX_STR(last, "metadata", "name")));
        *remaining = (long)(n - end);
    }
    if (start == 0 && end == n)
        return json_incref(items);
    json_t *out = json_array();
    for (size_t i = start; i < end; i++)
        json_array_append(out, json_array_get(items, i));
    return out;
}

void srv__handle_list(struct srv_req *q, struct srv_resp *r, struct srv_route *rt)
{
    r->verb = SRV_VERB_LIST;
    const struct api_kind *k = rt->kind;
    struct srv_filter f;
    long long limit;
    if (!page_params_valid(q, r, &limit) || srv__filter_init(&f, q, r, rt->kind))
        return;
    uint64_t rv = 0;
    json_t *all = store_list(q->srv->store, k->id, rt->ns, &rv);
    json_t *items = filtered(k, all, &f);
    json_decref(all);
    srv__filter_release(&f);
    char *cont;
    long remaining;
    json_t *pg = page(items, q, limit, &cont, &remaining);
    json_decref(items);
    if (srv__wants_table(q->accept)) {
        json_t *t = srv_table_new(k, pg, rv, clk_now(q->srv->clock), include_object(q), true);
        if (cont)
            JX_SET_NEW(t, json_string(cont), "metadata", "continue");
        srv__resp_json_ct(r, 200, t, "application/json;as=Table;v=v1;g=meta.k8s.io");
    } else {
        char rvs[32];
        snprintf(rvs, sizeof(rvs), "%llu", (unsigned long long)rv);
        char *lk = xasprintf("%sList", k->kind);
        json_t *list = json_pack("{s:s, s:s, s:{s:s}, s:O}", "kind", lk, "apiVersion",
                                 api_kind_api_version(k), "metadata", "resourceVersion", rvs,
                                 "items", pg);
        xfree(lk);
        if (cont) {
            JX_SET_NEW(list, json_string(cont), "metadata", "continue");
            JX_SET_NEW(list, json_integer(remaining), "metadata", "remainingItemCount");
        }
        srv__resp_json(r, 200, list);
    }
    xfree(cont);
    json_decref(pg);
}

void srv__handle_create(struct srv_req *q, struct srv_resp *r, struct srv_route *rt)
{
    r->verb = SRV_VERB_CREATE;
    json_t *obj = srv__decode_body(q, r, rt->kind);
    if (!obj)
        return;
    const char *bns = JX_STR(obj, "metadata", "namespace");
    if (rt->kind->namespaced && bns && *bns && strcmp(bns, rt->ns)) {
        srv__resp_statusf(r, 400, "BadRequest",
                          "the namespace of the provided object does not match the namespace "
                          "sent on the request");
        json_decref(obj);
        return;
    }
    srv__create_object(q, r, rt->kind, rt->ns, obj);
    json_decref(obj);
}

void srv__handle_update(struct srv_req *q, struct srv_resp *r, struct srv_route *rt)
{
    r->verb = SRV_VERB_UPDATE;
    const struct api_kind *k = rt->kind;
    json_t *obj = srv__decode_body(q, r, k);
    if (!obj)
        return;
    const char *bname = JX_STR(obj, "metadata", "name");
    const char *bns = JX_STR(obj, "metadata", "namespace");
    if (!bname || strcmp(bname, rt->name)) {
        srv__resp_statusf(r, 400, "BadRequest",
                          "the name of the object (%s) does not match the name on the URL (%s)",
                          bname ? bname : "", rt->name);
    } else if (k->namespaced && bns && *bns && strcmp(bns, rt->ns)) {
        srv__resp_statusf(r, 400, "BadRequest",
                          "the namespace of the provided object does not match the namespace "
                          "sent on the request");
    } else {
        json_t *old = store_get(q->srv->store, k->id, rt->ns, rt->name);
        if (!old)
            srv__resp_err(r, CU_ENOTFOUND, k, rt->name);
        else
            srv__update_object(q, r, k, rt->ns, obj, old, rt->sub != NULL);
        json_decref(old);
    }
    json_decref(obj);
}

/* ---- delete ---- */

struct del_opts {
    char *uid;    /* preconditions.uid */
    char *rv;     /* preconditions.resourceVersion */
    char policy;  /* 'B'ackground, 'F'oreground, 'O'rphan */
};

/* The DeleteOptions fields cueue reads or accepts, with their JSON type:
 * a field of another type is refused (400 naming it) as the API server's
 * typed decoding refuses it; other fields pass, as there. */
static const struct {
    const char *field;
    json_type type;
    const char *want;
} DELETE_OPTION_TYPES[] = {
    {"gracePeriodSeconds", JSON_INTEGER, "an integer"},
    {"propagationPolicy", JSON_STRING, "a string"},
    {"orphanDependents", JSON_TRUE, "a boolean"},
    {"preconditions", JSON_OBJECT, "an object"},
    {"dryRun", JSON_ARRAY, "a list of strings"},
    {"kind", JSON_STRING, "a string"},
    {"apiVersion", JSON_STRING, "a string"},
};

static bool type_is(const json_t *v, json_type t)
{
    return t == JSON_TRUE ? json_is_boolean(v) : json_typeof(v) == t;
}

/* 400 for a DeleteOptions body whose fields have the wrong type (body an
 * object). Returns 0 or CU_EBADREQ after answering r. */
static int check_delete_options(struct srv_resp *r, const json_t *body)
{
    const json_t *pre = json_object_get(body, "preconditions");
    for (size_t i = 0; i < sizeof(DELETE_OPTION_TYPES) / sizeof(*DELETE_OPTION_TYPES); i++) {
        const json_t *v = json_object_get(body, DELETE_OPTION_TYPES[i].field);
        if (v && !json_is_null(v) && !type_is(v, DELETE_OPTION_TYPES[i].type)) {
            char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
            srv__resp_statusf(r, 400, "BadRequest",
                              "DeleteOptions.%s: Invalid value: %.64s: must be %s",
                              DELETE_OPTION_TYPES[i].field, text ? text : "?",
                              DELETE_OPTION_TYPES[i].want);
            xfree(text);
            return CU_EBADREQ;
        }
    }
    const char *const pre_fields[] = {"uid", "resourceVersion"};
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_object_get(pre, pre_fields[i]);
        if (v && !json_is_null(v) && !json_is_string(v)) {
            srv__resp_statusf(r, 400, "BadRequest",
                              "DeleteOptions.preconditions.%s: Invalid value: must be a string",
                              pre_fields[i]);
            return CU_EBADREQ;
        }
    }
    return 0;
}

static int parse_delete_options(struct srv_req *q, struct srv_resp *r, struct del_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->policy = 'B';
    const char *pp = srv__q(q, "propagationPolicy");
    json_t *body = NULL;
    if (q->body_len) {
        struct diag d;
        diag_init(&d);
        json_t *docs = NULL;
        if (api_parse_documents(q->body, q->body_len, "DeleteOptions", &docs, &d) ||
            json_array_size(docs) > 1) {
            char *s = diag_summary(&d);
            srv__resp_statusf(r, 400, "BadRequest", "the DeleteOptions body could not be decoded: %s", s);
            xfree(s);
            diag_release(&d);
            json_decref(docs);
            return CU_EBADREQ;
        }
        diag_release(&d);
        body = json_incref(json_array_get(docs, 0));
        json_decref(docs);
    }
    long long grace = 0; /* checked only: pods end at once, whatever the grace */
    if (srv__qint(q, r, "gracePeriodSeconds", LLONG_MIN, &grace) < 0 ||
        (body && check_delete_options(r, body))) {
        json_decref(body);
        return CU_EBADREQ;
    }
    if (body) {
        o->uid = xstrdup(JX_STR(body, "preconditions", "uid"));
        o->rv = xstrdup(JX_STR(body, "preconditions", "resourceVersion"));
        if (JX_STR(body, "propagationPolicy"))
            pp = JX_STR(body, "propagationPolicy");
        else if (JX_BOOL(body, false, "orphanDependents"))
            pp = "Orphan";
    }
    int rc = 0;
    if (pp && !strcmp(pp, "Foreground"))
        o->policy = 'F';
    else if (pp && !strcmp(pp, "Orphan"))
        o->policy = 'O';
    else if (pp && *pp && strcmp(pp, "Background")) {
        srv__resp_statusf(r, 400, "BadRequest",
                          "propagationPolicy: Unsupported value: \"%s\": supported values: "
                          "\"Background\", \"Foreground\", \"Orphan\"", pp);
        rc = CU_EBADREQ;
    }
    json_decref(body);
    return rc;
}

static void del_opts_release(struct del_opts *o)
{
    xfree(o->uid);
    xfree(o->rv);
}

/* Apply fn to every object (any kind) owned by uid. */
static void for_each_dependent(struct store *st, const char *uid,
                               void (*fn)(struct store *st, const struct api_kind *k,
                                          json_t *obj, const char *owner_uid, int depth),
                               int depth)
{
    for (int i = 0; i < KIND__COUNT; i++) {
        const struct api_kind *k = api_kind_get((enum api_kind_id)i);
        json_t *all = store_list(st, k->id, NULL, NULL);
        size_t j;
        json_t *it;
        json_array_foreach(all, j, it)
        {
            if (api_is_owned_by(it, uid))
                fn(st, k, it, uid, depth);
        }
        json_decref(all);
    }
}

static void orphan_one(struct store *st, const struct api_kind *k, json_t *obj,
                       const char *owner_uid, int depth)
{
    (void)depth;
    json_t *c = json_deep_copy(obj);
    json_t *refs = JX_GET(c, "metadata", "ownerReferences");
    for (size_t i = json_array_size(refs); i-- > 0;)
        if (!strcmp(jx_or_empty(JX_STR(json_array_get(refs, i), "uid")), owner_uid))
            json_array_remove(refs, i);
    if (!json_array_size(refs))
        JX_DEL(c, "metadata", "ownerReferences");
    json_object_del(JX_OBJ(c, "metadata"), "resourceVersion");
    store_update(st, k->id, api_namespace(c), c, STORE_UPDATE_ALL, NULL);
    json_decref(c);
}

static void delete_tree(struct store *st, const struct api_kind *k, json_t *obj,
                        const char *owner_uid, int depth)
{
    (void)owner_uid;
    const char *uid = api_uid(obj);
    if (uid && depth < MAX_GC_DEPTH)
        for_each_dependent(st, uid, delete_tree, depth + 1);
    store_delete(st, k->id, api_namespace(obj), api_name(obj), uid, NULL);
}

/* The namespaces the API server's NamespaceLifecycle admission never lets
 * go (its "immortal" namespaces). */
static bool namespace_protected(const char *name)
{
    static const char *const immortal[] = {"default", "kube-system", "kube-public"};
    for (size_t i = 0; i < sizeof(immortal) / sizeof(*immortal); i++)
        if (!strcmp(name, immortal[i]))
            return true;
    return false;
}

/* The namespace controller's job, done at once: every namespaced object in
 * the namespace is deleted (objects with finalizers are marked). The only
 * way to delete a Namespace is by name (no deletecollection, as in
 * Kubernetes), so every Namespace deletion goes through here. */
static void delete_namespace_contents(struct store *st, const char *ns)
{
    for (int i = 0; i < KIND__COUNT; i++) {
        const struct api_kind *k = api_kind_get((enum api_kind_id)i);
        if (!k->namespaced)
            continue;
        json_t *all = store_list(st, k->id, ns, NULL);
        size_t j;
        json_t *it;
        json_array_foreach(all, j, it)
        {
            store_delete(st, k->id, ns, api_name(it), NULL, NULL);
        }
        json_decref(all);
    }
}

/* The deletion itself (and what it cascades to) as one durable write:
 * answered once saved, else undone whole (500, or the store's refusal). */
static void delete_durably(struct srv_resp *r, struct store *st, const struct api_kind *k,
                           const struct srv_route *rt, const struct del_opts *o, const char *uid)
{
    char why[512];
    if (store_txn_begin(st, why, sizeof(why))) {
        srv__resp_unsaved(r, k, rt->name, why);
        return;
    }
    if (k->id == KIND_NAMESPACE)
        delete_namespace_contents(st, rt->name);
    if (uid && o->policy == 'O')
        for_each_dependent(st, uid, orphan_one, 0);
    else if (uid && o->policy == 'F')
        for_each_dependent(st, uid, delete_tree, 1);
    json_t *out = NULL;
    int rc = store_delete(st, k->id, rt->ns, rt->name, o->uid, &out);
    if (rc) {
        store_txn_rollback(st);
        srv__resp_err(r, rc, k, rt->name);
    } else if (store_txn_commit(st, why, sizeof(why))) {
        srv__resp_unsaved(r, k, rt->name, why);
    } else {
        srv__resp_json(r, 200, srv__with_type(k, out));
    }
    json_decref(out);
}

void srv__handle_delete(struct srv_req *q, struct srv_resp *r, struct srv_route *rt)
{
    r->verb = SRV_VERB_DELETE;
    const struct api_kind *k = rt->kind;
    struct store *st = q->srv->store;
    struct del_opts o;
    if (parse_delete_options(q, r, &o))
        return;
    json_t *cur = store_get(st, k->id, rt->ns, rt->name);
    if (!cur) {
        srv__resp_err(r, CU_ENOTFOUND, k, rt->name);
    } else if (k->id == KIND_NAMESPACE && namespace_protected(rt->name)) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%s \"%s\" is forbidden: this namespace may not be deleted",
                 api_kind_qualified(k), rt->name);
        srv__resp_status(r, 403, "Forbidden", msg, srv__details(k, rt->name));
    } else if (o.rv && strcmp(o.rv, jx_or_empty(JX_STR(cur, "metadata", "resourceVersion")))) {
        srv__resp_err(r, CU_ECONFLICT, k, rt->name);
    } else if (o.uid && strcmp(o.uid, jx_or_empty(api_uid(cur)))) {
        srv__resp_statusf(r, 409, "Conflict",
                          "Precondition failed: UID in precondition: %s, UID in object meta: %s",
                          o.uid, jx_or_empty(api_uid(cur)));
    } else if (srv__dry_run(q)) {
        srv__resp_json(r, 200, srv__with_type(k, cur));
    } else {
        delete_durably(r, st, k, rt, &o, api_uid(cur));
    }
    json_decref(cur);
    del_opts_release(&o);
}

void srv__handle_delete_collection(struct srv_req *q, struct srv_resp *r, struct srv_route *rt)
{
    r->verb = SRV_VERB_DELETE;
    const struct api_kind *k = rt->kind;
    struct srv_filter f;
    if (srv__filter_init(&f, q, r, rt->kind))
        return;
    struct del_opts o;
    if (parse_delete_options(q, r, &o)) {
        srv__filter_release(&f);
        return;
    }
    uint64_t rv = 0;
    json_t *all = store_list(q->srv->store, k->id, rt->ns, &rv);
    json_t *items = filtered(k, all, &f);
    json_decref(all);
    srv__filter_release(&f);
    struct store *st = q->srv->store;
    char why[512];
    bool dry = srv__dry_run(q);
    if (!dry && store_txn_begin(st, why, sizeof(why))) {
        srv__resp_unsaved(r, k, NULL, why);
    } else {
        json_t *gone = json_array();
        size_t i;
        json_t *it;
        json_array_foreach(items, i, it)
        {
            json_t *out = NULL;
            if (dry || !store_delete(st, k->id, api_namespace(it), api_name(it), NULL, &out))
                json_array_append_new(gone, srv__with_type(k, out ? out : it));
            json_decref(out);
        }
        if (!dry && store_txn_commit(st, why, sizeof(why))) {
            json_decref(gone);
            srv__resp_unsaved(r, k, NULL, why);
        } else {
            char *lk = xasprintf("%sList", k->kind);
            srv__resp_json(r, 200,
                           json_pack("{s:s, s:s, s:{}, s:o}", "kind", lk, "apiVersion",
                                     api_kind_api_version(k), "metadata", "items", gone));
            xfree(lk);
        }
    }
    json_decref(items);
    del_opts_release(&o);
}
