/*
 * mutate: create, update and delete, with the metadata stamping the
 * Kubernetes API server does (uid, creationTimestamp, resourceVersion,
 * generation, generateName, deletionTimestamp and finalizers).
 *
 * Invariants: each mutation checks everything that can fail first, then
 * builds a complete new document and, under store.mu, swaps it into the
 * index, records it for the database and appends its event, so a refused
 * mutation leaves no trace. Documents share unchanged subtrees with their
 * predecessors (json_copy): nothing ever modifies a stored document.
 */
#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "store/store-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

/* Kubernetes' name generator keeps at most 63 - 5 characters of the base
 * and retries a colliding generated name (RetryGenerateName). */
#define GENERATE_NAME_BASE_MAX 58
#define GENERATE_NAME_SUFFIX_LEN 5
#define GENERATE_NAME_ATTEMPTS 8

/* Metadata only the server writes: kept from the stored object on update. */
static const char *const SYSTEM_META[] = {
    "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
    "generation", "resourceVersion", NULL,
};

static bool kind_ok(int kind) { return kind >= 0 && kind < KIND__COUNT; }

/* The namespace key for obj: "" for cluster-scoped kinds, else ns or the
 * object's own metadata.namespace. NULL when a namespaced kind has none. */
static const char *resolve_ns(enum api_kind_id kind, const char *ns, const json_t *obj)
{
    if (!api_kind_get(kind)->namespaced)
        return "";
    if (ns && ns[0])
        return ns;
    const char *own = JX_STR(obj, "metadata", "namespace");
    return own && own[0] ? own : NULL;
}

/* meta[key] = the string val, unless it already holds that very string
 * (then the value, equal JSON, stays as it is: no allocation). */
static void set_str(json_t *meta, const char *key, size_t klen, const char *val)
{
    const json_t *cur = json_object_getn(meta, key, klen);
    size_t n = strlen(val);
    if (json_is_string(cur) && json_string_length(cur) == n &&
        !memcmp(json_string_value(cur), val, n))
        return;
    json_object_setn_new_nocheck(meta, key, klen, jx_string(val));
}

static void set_ns(json_t *meta, enum api_kind_id kind, const char *ns)
{
    if (api_kind_get(kind)->namespaced)
        set_str(meta, "namespace", 9, ns);
    else
        json_object_del(meta, "namespace");
}

/* rv as a JSON string, decimal as %llu prints it (one per write: no
 * printf). New reference. */
static json_t *rv_string(uint64_t rv)
{
    char buf[24];
    char *p = buf + sizeof(buf);
    do {
        *--p = (char)('0' + rv % 10);
        rv /= 10;
    } while (rv);
    return json_stringn_nocheck(p, (size_t)(buf + sizeof(buf) - p));
}

static void set_rv(json_t *meta, uint64_t rv)
{
    JX_SET_LIT(meta, "resourceVersion", rv_string(rv));
}

static json_int_t generation_of(const json_t *doc)
{
    return json_integer_value(JX_GET(doc, "metadata", "generation"));
}

static bool has_finalizers(const json_t *doc)
{
    return json_array_size(JX_GET(doc, "metadata", "finalizers")) > 0;
}

/* A shallow copy of an object map, keys in its order (json_copy's result
 * without its strlen per key); json_copy for anything else. */
static json_t *copy_map(const json_t *m)
{
    if (!json_is_object(m))
        return json_copy((json_t *)m);
    json_t *c = json_object();
    JX_MEMBERS_FOREACH(m, it)
        json_object_setn_new_nocheck(c, json_object_iter_key(it), json_object_iter_key_len(it),
                                     json_incref(json_object_iter_value(it)));
    return c;
}

static bool key_is(const char *key, size_t klen, const char *want, size_t wlen)
{
    return klen == wlen && !memcmp(key, want, wlen);
}

/* A new metadata map for the next version of a document whose metadata
 * is m (an object): m's members in m's order with m's values, but
 * resourceVersion = rv (appended when m has none), built in one pass (the
 * same map as copy_map and set_rv). *deleting: m has a deletionTimestamp
 * (api_is_deleting). */
static json_t *next_meta(const json_t *m, uint64_t rv, bool *deleting)
{
    json_t *c = json_object();
    bool had_rv = false;
    *deleting = false;
    JX_MEMBERS_FOREACH(m, it) {
        const char *key = json_object_iter_key(it);
        size_t klen = json_object_iter_key_len(it);
        json_t *v = json_object_iter_value(it), *nv;
        if (!had_rv && key_is(key, klen, "resourceVersion", 15)) {
            nv = rv_string(rv);
            had_rv = true;
        } else {
            if (key_is(key, klen, "deletionTimestamp", 17))
                *deleting = json_is_string(v);
            nv = json_incref(v);
        }
        json_object_setn_new_nocheck(c, key, klen, nv);
    }
    if (!had_rv)
        JX_SET_LIT(c, "resourceVersion", rv_string(rv));
    return c;
}

/* A new top-level object sharing old's children, in old's order, except
 * for a fresh (shallow-copied) metadata map the caller may modify (an
 * empty one appended when old has none; with share_meta, old's own map,
 * not to be modified, when it is an object) and, when with_status, the
 * status replaced by status (taken; NULL = removed; appended after the
 * metadata when old has none). The same document as json_copy, a new
 * metadata map and json_object_set_new / json_object_del of "status",
 * built in one pass. */
static json_t *copy_with(const json_t *old, bool with_status, json_t *status, bool share_meta)
{
    json_t *c = json_object();
    bool had_meta = false, had_status = false;
    JX_MEMBERS_FOREACH(old, it) {
        const char *key = json_object_iter_key(it);
        size_t klen = json_object_iter_key_len(it);
        json_t *v = json_object_iter_value(it), *nv;
        if (key_is(key, klen, "metadata", 8)) {
            nv = share_meta && json_is_object(v) ? json_incref(v) : copy_map(v);
            had_meta = true;
        } else if (with_status && key_is(key, klen, "status", 6)) {
            had_status = true;
            if (!status)
                continue;
            nv = status;
        } else {
            nv = json_incref(v);
        }
        json_object_setn_new_nocheck(c, key, klen, nv);
    }
    if (!had_meta)
        json_object_setn_new_nocheck(c, "metadata", 8, json_object());
    if (with_status && !had_status && status)
        json_object_setn_new_nocheck(c, "status", 6, status);
    return c;
}

static json_t *copy_with_meta(const json_t *old) { return copy_with(old, false, NULL, false); }

/* True when anything outside metadata and status differs (generation). */
static bool spec_changed(const json_t *a, const json_t *b)
{
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)a, key, v) {
        if (strcmp(key, "metadata") == 0 || strcmp(key, "status") == 0)
            continue;
        if (!json_equal(v, json_object_get(b, key)))
            return true;
    }
    json_object_foreach((json_t *)b, key, v) {
        if (strcmp(key, "metadata") == 0 || strcmp(key, "status") == 0)
            continue;
        if (!json_object_get(a, key))
            return true;
    }
    return false;
}

/* ---- create ---- */

/* Pick the name (generateName + suffix, retried on collision). Returns a
 * new string or NULL when every generated name collided. mu held. */
static char *choose_name(struct store *s, enum api_kind_id kind, const char *ns,
                         const json_t *meta)
{
    const char *name = json_string_value(JX_GET(meta, "name"));
    if (name && name[0])
        return xstrdup(name);
    const char *base = json_string_value(JX_GET(meta, "generateName"));
    size_t blen = strlen(base);
    if (blen > GENERATE_NAME_BASE_MAX)
        blen = GENERATE_NAME_BASE_MAX;
    for (int i = 0; i < GENERATE_NAME_ATTEMPTS; i++) {
        char suffix[GENERATE_NAME_SUFFIX_LEN + 1];
        rng_suffix(s->rng, suffix, GENERATE_NAME_SUFFIX_LEN);
        char *cand = xasprintf("%.*s%s", (int)blen, base, suffix);
        if (!store__idx_find(s, kind, ns, cand))
            return cand;
        xfree(cand);
    }
    return NULL;
}

/* Stamp the server-set metadata of a new object. mu held. */
static void stamp_new(struct store *s, json_t *meta, const char *name)
{
    set_str(meta, "name", 4, name);
    const char *uid = json_string_value(JX_GET(meta, "uid"));
    if (!uid || !uid[0]) {
        char buf[37];
        rng_uuid(s->rng, buf);
        JX_SET_LIT(meta, "uid", jx_string(buf));
    }
    int64_t now = clk_now(s->clock);
    if (!s->stamp_valid || s->stamp_ms != now) {
        timefmt_rfc3339(now, true, s->stamp);
        s->stamp_ms = now;
        s->stamp_valid = true;
    }
    JX_SET_LIT(meta, "creationTimestamp", jx_string(s->stamp));
    set_rv(meta, s->rv + 1);
    JX_SET_LIT(meta, "generation", json_integer(1));
}

/* Create from doc (taken; its top-level and metadata maps are the store's
 * to change, everything else is never changed). */
static int create_doc(struct store *s, enum api_kind_id kind, const char *nsk, json_t *doc,
                      json_t **out)
{
    json_t *meta = JX_OBJ(doc, "metadata");
    set_ns(meta, kind, nsk);
    json_object_del(meta, "deletionTimestamp");
    json_object_del(meta, "deletionGracePeriodSeconds");

    store__lock(s);
    int rc = 0;
    char *final = choose_name(s, kind, nsk, meta);
    if (!final || store__idx_find(s, kind, nsk, final)) {
        rc = CU_EEXIST;
    } else {
        stamp_new(s, meta, final);
        store__undo_note(s, kind, nsk, final, NULL);
        store__db_put(s, kind, nsk, final, doc);
        store__idx_insert(s, kind, nsk, final, json_incref(doc));
        store__log_append(s, STORE_ADDED, kind, json_incref(doc));
    }
    store__unlock(s);
    xfree(final);
    if (rc == 0 && out)
        *out = doc;
    else
        json_decref(doc);
    return rc;
}

/* The checks store_create makes before copying: the namespace key, or NULL
 * with *rc set. */
static const char *create_check(enum api_kind_id kind, const char *ns, const json_t *obj, int *rc)
{
    *rc = CU_EINVAL;
    if (!kind_ok((int)kind) || !json_is_object(obj))
        return NULL;
    const json_t *meta_in = JX_GET(obj, "metadata");
    if (meta_in && !json_is_object(meta_in))
        return NULL;
    /* a name, else a generateName (read only then) */
    const char *name = json_string_value(json_object_getn(meta_in, "name", 4));
    if (!name || !name[0]) {
        const char *gen = json_string_value(json_object_getn(meta_in, "generateName", 12));
        if (!gen || !gen[0])
            return NULL;
    }
    const char *nsk = resolve_ns(kind, ns, obj);
    if (!nsk)
        return NULL;
    *rc = 0;
    return nsk;
}

int store_create(struct store *s, enum api_kind_id kind, const char *ns, const json_t *obj,
                 json_t **out)
{
    if (out)
        *out = NULL;
    int rc;
    const char *nsk = create_check(kind, ns, obj, &rc);
    if (!nsk)
        return rc;
    char *nsc = xstrdup(nsk);
    rc = create_doc(s, kind, nsc, jx_deep_copy(obj), out);
    xfree(nsc);
    return rc;
}

int store_create_take(struct store *s, enum api_kind_id kind, const char *ns, json_t *obj,
                      json_t **out)
{
    if (out)
        *out = NULL;
    int rc;
    const char *nsk = create_check(kind, ns, obj, &rc);
    if (!nsk) {
        json_decref(obj);
        return rc;
    }
    char *nsc = xstrdup(nsk);
    /* the caller may keep reading obj: its maps that change are copied,
     * unless the caller handed over their only references */
    json_t *doc = obj;
    if (obj->refcount > 1) {
        doc = json_copy(obj);
        json_decref(obj);
    }
    json_t *meta = JX_GET(doc, "metadata");
    if (!meta || meta->refcount > 1)
        JX_SET_LIT(doc, "metadata", meta ? json_copy(meta) : json_object());
    rc = create_doc(s, kind, nsc, doc, out);
    xfree(nsc);
    return rc;
}

/* ---- update ---- */

/* The part of obj an update takes, deep-copied before locking: the status
 * alone (STATUS), everything but status (MAIN on a kind with a status
 * subresource) or everything (ALL, or MAIN on a kind without one, where
 * status is an ordinary field as in Kubernetes). May be NULL for STATUS. */
static json_t *incoming_part(enum api_kind_id kind, const json_t *obj,
                             enum store_update_mode mode)
{
    if (mode == STORE_UPDATE_STATUS) {
        json_t *st = JX_GET(obj, "status");
        return st ? jx_deep_copy(st) : NULL;
    }
    if (mode == STORE_UPDATE_MAIN && api_kind_get(kind)->has_status) {
        json_t *c = json_object();
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)obj, key, v) {
            if (strcmp(key, "status") != 0)
                json_object_set_new(c, key, jx_deep_copy(v));
        }
        return c;
    }
    return jx_deep_copy(obj);
}

/* incoming_part for store_update_take: the same parts, shared instead of
 * deep-copied; takes one of obj's references (the caller keeps another
 * while the update runs). The top-level map and the metadata map are
 * copied shallowly: merge_update sets keys in them. */
static json_t *incoming_part_take(enum api_kind_id kind, json_t *obj,
                                  enum store_update_mode mode)
{
    json_t *in;
    if (mode == STORE_UPDATE_STATUS) {
        in = json_incref(JX_GET(obj, "status"));
    } else if (mode == STORE_UPDATE_MAIN && api_kind_get(kind)->has_status) {
        in = json_object();
        const char *key;
        json_t *v;
        json_object_foreach(obj, key, v) {
            if (strcmp(key, "status") != 0)
                json_object_set(in, key, v);
        }
    } else {
        in = json_copy(obj);
    }
    json_t *meta = mode == STORE_UPDATE_STATUS ? NULL : JX_GET(in, "metadata");
    if (meta)
        JX_SET_LIT(in, "metadata", json_copy(meta));
    json_decref(obj);
    return in;
}

/* The candidate document: incoming merged with the stored one, with the
 * server-managed metadata of the stored one. Takes incoming. mu held. */
static json_t *merge_update(enum api_kind_id kind, const char *ns, const json_t *old,
                            json_t *incoming, enum store_update_mode mode)
{
    if (mode == STORE_UPDATE_STATUS) /* commit_update makes the metadata map */
        return copy_with(old, true, incoming, true);
    json_t *cand = incoming;
    json_t *old_status = JX_GET(old, "status");
    if (mode == STORE_UPDATE_MAIN && api_kind_get(kind)->has_status && old_status)
        json_object_set(cand, "status", old_status);
    json_t *meta = JX_OBJ(cand, "metadata");
    const json_t *ometa = JX_GET(old, "metadata");
    for (int i = 0; SYSTEM_META[i]; i++) {
        json_t *v = json_object_get(ometa, SYSTEM_META[i]);
        if (v)
            json_object_set(meta, SYSTEM_META[i], v);
        else
            json_object_del(meta, SYSTEM_META[i]);
    }
    set_ns(meta, kind, ns);
    return cand;
}

/* Preconditions carried by the update's own metadata: resourceVersion
 * (absent, "" or "0" = unconditional) and uid (Kubernetes takes a non-empty
 * metadata.uid as a UID precondition). */
static int check_preconditions(const json_t *obj, const json_t *old)
{
    const json_t *meta = JX_GET(obj, "metadata");
    const json_t *rvj = JX_GET(meta, "resourceVersion");
    if (rvj && !json_is_null(rvj)) {
        const char *rv = json_string_value(rvj);
        if (!rv)
            return CU_ECONFLICT;
        if (rv[0] && strcmp(rv, "0") != 0 &&
            strcmp(rv, jx_or_empty(JX_STR(old, "metadata", "resourceVersion"))) != 0)
            return CU_ECONFLICT;
    }
    const char *uid = json_string_value(JX_GET(meta, "uid"));
    if (uid && uid[0] && strcmp(uid, jx_or_empty(api_uid(old))) != 0)
        return CU_ECONFLICT;
    return 0;
}

/* The members of a document an update reads: its metadata and status
 * (borrowed; NULL when absent), and the metadata's iterator in the
 * document when known (else NULL). */
struct doc_parts {
    json_t *meta;
    json_t *status;
    void *meta_it;
};

static struct doc_parts parts_of(const json_t *doc)
{
    return (struct doc_parts){JX_GET(doc, "metadata"), JX_GET(doc, "status"), NULL};
}

/* Store cand (reference taken) over o, or delete o when cand is a deleting
 * object whose finalizers are now empty. status_only: cand is o's document
 * with (at most) another status (copy_with over a document with a metadata
 * map), so comparing the statuses compares the documents and the spec is
 * unchanged. cand's metadata is either its own map, or o's very map
 * (shared by a status write), which is then replaced by a new one (cand is
 * the store's to change). op and np: parts_of(o->doc) and parts_of(cand)
 * when the caller has them (NULL: read here). Returns the resulting
 * document (new reference). mu held. */
static json_t *commit_update(struct store *s, enum api_kind_id kind, struct store_obj *o,
                             json_t *cand, bool status_only, const struct doc_parts *op,
                             const struct doc_parts *np)
{
    struct doc_parts op_read, np_read;
    if (!op) {
        op_read = parts_of(o->doc);
        np_read = parts_of(cand);
        op = &op_read;
        np = &np_read;
    }
    /* a status write shares what it did not replace: jx_equal_walk skips it */
    bool same = status_only ? jx_equal_walk(np->status, op->status, true) : json_equal(cand, o->doc);
    if (same) {
        json_decref(cand);
        return json_incref(o->doc);
    }
    /* before the in-place test below: a noted version is not the index's alone */
    store__undo_note(s, kind, o->ns, o->name, o->doc);
    json_t *meta = np->meta;
    bool deleting, rv_in_place = false;
    if (meta == op->meta && o->doc->refcount == 1 && meta->refcount == 2) {
        /* only the index holds the stored version, and only that version
         * and cand hold its metadata map: once the index lets the version
         * go (below), the map is cand's alone and takes the new
         * resourceVersion in place (the map next_meta would build) */
        rv_in_place = true;
        deleting = json_is_string(json_object_getn(meta, "deletionTimestamp", 17));
    } else if (meta == op->meta) {
        meta = next_meta(meta, s->rv + 1, &deleting);
        if (np->meta_it)
            json_object_iter_set_new(cand, np->meta_it, meta);
        else
            JX_SET_LIT(cand, "metadata", meta);
    } else {
        set_rv(meta, s->rv + 1);
        deleting = api_is_deleting(o->doc);
    }
    if (deleting && json_array_size(json_object_get(meta, "finalizers")) == 0) {
        store__db_del(s, kind, o->ns, o->name);
        store__idx_remove(s, kind, o);
        if (rv_in_place)
            set_rv(meta, s->rv + 1);
        store__log_append(s, STORE_DELETED, kind, json_incref(cand));
    } else {
        if (!status_only && spec_changed(cand, o->doc))
            JX_SET_LIT(meta, "generation", json_integer(generation_of(o->doc) + 1));
        json_decref(o->doc);
        o->doc = json_incref(cand);
        if (rv_in_place)
            set_rv(meta, s->rv + 1);
        store__db_put(s, kind, o->ns, o->name, cand);
        store__log_append(s, STORE_MODIFIED, kind, json_incref(cand));
    }
    return cand;
}

static bool update_args_ok(enum api_kind_id kind, const json_t *obj, enum store_update_mode mode)
{
    return kind_ok((int)kind) && json_is_object(obj) && mode >= STORE_UPDATE_MAIN &&
           mode <= STORE_UPDATE_ALL;
}

/* Whether the objects a and b hold the same keys in the same order with
 * the very same (pointer-equal) values. */
static bool same_members(const json_t *a, const json_t *b)
{
    if (json_object_size(a) != json_object_size(b))
        return false;
    JX_PAIRS_FOREACH(a, b, ia, ib)
        if (!jx_iter_same_key(ia, ib) || json_object_iter_value(ia) != json_object_iter_value(ib))
            return false;
    return true;
}

static bool iter_key_is(void *it, const char *want, size_t wlen)
{
    return key_is(json_object_iter_key(it), json_object_iter_key_len(it), want, wlen);
}

/* Whether obj, a status write's whole input, already is the document
 * copy_with(old, true, obj's status or NULL when it has none) would build,
 * so that it can be stored as it is: old's members in old's order and
 * with old's values, except the status (obj's, where old has one, or last
 * when old has none; absent when obj has none) and the metadata, old's
 * very map (commit_update gives the new version its own) or a map of
 * obj's own (referenced by obj alone: resourceVersion is set in it) with
 * old's metadata members; old's metadata must be an object. That is a
 * store_get_status_copy of the stored document, or a store_status_copy
 * whose metadata the caller left alone. When it is, *op and *np are
 * parts_of(old) and parts_of(obj), read in the same walk. mu held. */
static bool reusable_for_status(const json_t *old, json_t *obj, struct doc_parts *op,
                                struct doc_parts *np)
{
    *op = *np = (struct doc_parts){NULL, NULL, NULL};
    bool obj_lacks_status = false; /* old's status was passed over */
    void *io = json_object_iter((json_t *)old), *ib = json_object_iter(obj);
    for (;;) {
        if (!io) {
            if (ib) { /* obj's status last, where old has none */
                if (obj_lacks_status || !iter_key_is(ib, "status", 6) ||
                    json_object_iter_next(obj, ib))
                    return false;
                np->status = json_object_iter_value(ib);
            }
            return op->meta != NULL;
        }
        const char *key = json_object_iter_key(io);
        size_t klen = json_object_iter_key_len(io);
        json_t *ov = json_object_iter_value(io);
        bool is_status = key_is(key, klen, "status", 6);
        if (is_status) {
            op->status = ov;
            if (!ib || !iter_key_is(ib, "status", 6)) {
                /* obj has no status (else it sits elsewhere: a later
                 * member, or the end, fails) */
                obj_lacks_status = true;
                io = json_object_iter_next((json_t *)old, io);
                continue;
            }
        }
        if (!ib || !iter_key_is(ib, key, klen))
            return false;
        json_t *bv = json_object_iter_value(ib);
        if (is_status) {
            np->status = bv;
        } else if (key_is(key, klen, "metadata", 8)) {
            /* old's own map (commit_update replaces it), or a copy of it */
            if (!json_is_object(ov) ||
                (ov != bv && (!json_is_object(bv) || bv->refcount != 1 || !same_members(ov, bv))))
                return false;
            op->meta = ov;
            np->meta = bv;
            np->meta_it = ib;
        } else if (ov != bv) {
            return false;
        }
        io = json_object_iter_next((json_t *)old, io);
        ib = json_object_iter_next(obj, ib);
    }
}

/* The update itself, once incoming (taken) holds the part to store. The
 * preconditions are read from precond (obj's metadata, or a copy of it
 * when obj was taken). reuse: for a status write, the caller's whole input
 * when the caller handed over its only reference (NULL otherwise), with
 * incoming NULL: stored as it is instead of a copy when
 * reusable_for_status says it may, else its status is the incoming part. */
static int update_with(struct store *s, enum api_kind_id kind, const char *nsk,
                       const char *name, const json_t *precond, json_t *incoming,
                       enum store_update_mode mode, json_t *reuse, json_t **out)
{
    store__lock(s);
    json_t *res = NULL;
    int rc = CU_ENOTFOUND;
    struct store_obj *o = store__idx_find(s, kind, nsk, name);
    struct doc_parts op, np;
    bool status_only = false, reusable = false;
    if (o) {
        reusable = reuse && reusable_for_status(o->doc, reuse, &op, &np);
        status_only = reusable || (mode == STORE_UPDATE_STATUS &&
                                   json_is_object(JX_GET(o->doc, "metadata")));
        if (reuse && !reusable)
            incoming = json_incref(JX_GET(reuse, "status"));
        /* reusable: reuse (= precond) holds the stored metadata's very
         * values, so its resourceVersion and uid preconditions hold */
        rc = reusable ? 0 : check_preconditions(precond, o->doc);
    }
    if (rc == 0) {
        if (reusable)
            res = commit_update(s, kind, o, json_incref(reuse), true, &op, &np);
        else
            res = commit_update(s, kind, o, merge_update(kind, nsk, o->doc, incoming, mode),
                                status_only, NULL, NULL);
        incoming = NULL;
    }
    store__unlock(s);
    json_decref(incoming);
    if (out)
        *out = res;
    else
        json_decref(res);
    return rc;
}

int store_update(struct store *s, enum api_kind_id kind, const char *ns, const json_t *obj,
                 enum store_update_mode mode, json_t **out)
{
    if (out)
        *out = NULL;
    if (!update_args_ok(kind, obj, mode))
        return CU_EINVAL;
    const char *name = JX_STR(obj, "metadata", "name");
    const char *nsk = resolve_ns(kind, ns, obj);
    if (!name || !name[0] || !nsk)
        return CU_EINVAL;
    return update_with(s, kind, nsk, name, obj, incoming_part(kind, obj, mode), mode, NULL,
                       out);
}

/* store_update_take, and store_update_status_take when give_back: then a
 * refused update leaves the caller's reference to obj with the caller
 * (obj unchanged) instead of dropping it. */
static int update_take(struct store *s, enum api_kind_id kind, const char *ns, json_t *obj,
                       enum store_update_mode mode, json_t **out, bool give_back)
{
    if (out)
        *out = NULL;
    const char *name = update_args_ok(kind, obj, mode) ? api_name(obj) : NULL;
    const char *nsk = name ? resolve_ns(kind, ns, obj) : NULL;
    if (!name || !name[0] || !nsk) {
        if (!give_back)
            json_decref(obj);
        return CU_EINVAL;
    }
    /* a status write handed the only reference to its document may store
     * that document itself (update_with checks it is the stored one's
     * status copy, or takes its status) */
    int rc;
    if (mode == STORE_UPDATE_STATUS && obj->refcount == 1) {
        rc = update_with(s, kind, nsk, name, obj, NULL, mode, obj, out);
    } else {
        /* obj stays readable (key, preconditions) until the update is
         * done; the parts it shares with the stored document are never
         * modified */
        json_incref(obj);
        rc = update_with(s, kind, nsk, name, obj, incoming_part_take(kind, obj, mode), mode,
                         NULL, out);
    }
    if (rc == 0 || !give_back)
        json_decref(obj); /* else this is the caller's reference again */
    return rc;
}

int store_update_take(struct store *s, enum api_kind_id kind, const char *ns, json_t *obj,
                      enum store_update_mode mode, json_t **out)
{
    return update_take(s, kind, ns, obj, mode, out, false);
}

int store_update_status_take(struct store *s, enum api_kind_id kind, const char *ns,
                             json_t **doc)
{
    json_t *stored = NULL;
    int rc = update_take(s, kind, ns, *doc, STORE_UPDATE_STATUS, &stored, true);
    if (rc == 0)
        *doc = stored;
    return rc;
}

static bool is_shared(const char *key, const char *const *shared)
{
    /* first characters compared inline: most keys differ there */
    for (; shared && *shared; shared++)
        if (key[0] == (*shared)[0] && !strcmp(key, *shared))
            return true;
    return false;
}

/* The status of a store_status_copy (see store.h). NULL for NULL. */
static json_t *status_copy(json_t *st, const char *const *shared)
{
    if (!json_is_object(st))
        return jx_deep_copy(st);
    /* conditions change through api_cond_set, which copies a shared
     * condition before changing it: the array is new, its objects shared */
    json_t *out = json_object();
    JX_MEMBERS_FOREACH(st, it) {
        const char *key = json_object_iter_key(it);
        size_t klen = json_object_iter_key_len(it);
        json_t *v = json_object_iter_value(it), *c;
        if (key_is(key, klen, "conditions", 10) && json_is_array(v))
            c = json_copy(v);
        else if (is_shared(key, shared))
            c = json_incref(v);
        else
            c = jx_deep_copy(v);
        json_object_setn_new_nocheck(out, key, klen, c);
    }
    return out;
}

json_t *store_status_copy(const json_t *doc, const char *const *shared)
{
    return copy_with(doc, true, status_copy(JX_GET(doc, "status"), shared), false);
}

json_t *store_get_status_copy(struct store *s, enum api_kind_id kind, const char *ns,
                              const char *name, const char *const *shared)
{
    json_t *cur = store_get(s, kind, ns, name);
    if (!cur)
        return NULL;
    json_t *cp = copy_with(cur, true, status_copy(JX_GET(cur, "status"), shared), true);
    json_decref(cur);
    return cp;
}

/* ---- delete ---- */

/* Mark o as deleting (Kubernetes' markAsDeleting: deletionTimestamp = now,
 * deletionGracePeriodSeconds = 0, generation + 1). mu held. */
static json_t *mark_deleting(struct store *s, enum api_kind_id kind, struct store_obj *o)
{
    json_t *cand = copy_with_meta(o->doc);
    json_t *meta = JX_GET(cand, "metadata");
    char ts[TIMEFMT_LEN];
    JX_SET_LIT(meta, "deletionTimestamp",
                        jx_string(timefmt_rfc3339(clk_now(s->clock), true, ts)));
    JX_SET_LIT(meta, "deletionGracePeriodSeconds", json_integer(0));
    JX_SET_LIT(meta, "generation", json_integer(generation_of(o->doc) + 1));
    set_rv(meta, s->rv + 1);
    store__undo_note(s, kind, o->ns, o->name, o->doc);
    store__db_put(s, kind, o->ns, o->name, cand);
    json_decref(o->doc);
    o->doc = json_incref(cand);
    store__log_append(s, STORE_MODIFIED, kind, json_incref(cand));
    return cand;
}

/* Remove o; the DELETED event carries its last state with the deletion's
 * resourceVersion, as a Kubernetes watch does. mu held. */
static json_t *remove_now(struct store *s, enum api_kind_id kind, struct store_obj *o)
{
    json_t *last = copy_with_meta(o->doc);
    set_rv(JX_GET(last, "metadata"), s->rv + 1);
    store__undo_note(s, kind, o->ns, o->name, o->doc);
    store__db_del(s, kind, o->ns, o->name);
    store__idx_remove(s, kind, o);
    store__log_append(s, STORE_DELETED, kind, json_incref(last));
    return last;
}

int store_delete(struct store *s, enum api_kind_id kind, const char *ns, const char *name,
                 const char *uid_precondition, json_t **out)
{
    if (out)
        *out = NULL;
    if (!kind_ok((int)kind) || !name)
        return CU_ENOTFOUND;
    store__lock(s);
    json_t *res = NULL;
    int rc = 0;
    struct store_obj *o = store__idx_find(s, kind, ns, name);
    if (!o)
        rc = CU_ENOTFOUND;
    else if (uid_precondition && strcmp(uid_precondition, jx_or_empty(api_uid(o->doc))) != 0)
        rc = CU_ECONFLICT;
    else if (has_finalizers(o->doc) && api_is_deleting(o->doc))
        res = json_incref(o->doc); /* already marked: nothing changes */
    else if (has_finalizers(o->doc))
        res = mark_deleting(s, kind, o);
    else
        res = remove_now(s, kind, o);
    store__unlock(s);
    if (out)
        *out = res;
    else
        json_decref(res);
    return rc;
}
