/*
 * kueue/util: store and naming helpers shared by the Kueue-side reconcilers
 * (see kueue/kueue.h), and the owner -> owned-names index they use to find a
 * job's Workloads and Pods without listing a namespace.
 */
#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* keys hashed a word at a time (cu_hash_bytes, util/hash.h) */
#include "util/hash.h"
#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = cu_hash_bytes((keyptr), (size_t)(keylen)))
#include <uthash.h>

#include "api/meta.h"
#include "api/quantity.h"
#include "ctrl/kueue/kueue.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/sha1.h"
#include "util/xalloc.h"

json_t *kq_get_copy(struct ctrl *c, enum api_kind_id kind, const char *ns, const char *name)
{
    json_t *cur = store_get(ctrl_store(c), kind, ns, name);
    if (!cur)
        return NULL;
    json_t *cp = jx_deep_copy(cur);
    json_decref(cur);
    return cp;
}

/* After a write: obj's metadata follows the stored object's resourceVersion
 * and generation (out: the stored object, released here). */
static int follow_stored(json_t *obj, json_t *out, int rc)
{
    if (rc == 0 && out) {
        json_t *md = JX_OBJ(obj, "metadata");
        json_t *rv = JX_GET(out, "metadata", "resourceVersion");
        json_t *gen = JX_GET(out, "metadata", "generation");
        if (rv)
            json_object_set(md, "resourceVersion", rv);
        if (gen)
            json_object_set(md, "generation", gen);
    }
    json_decref(out);
    return rc;
}

int kq_update(struct ctrl *c, enum api_kind_id kind, json_t *obj, enum store_update_mode mode)
{
    json_t *out = NULL;
    int rc = store_update(ctrl_store(c), kind, api_namespace(obj), obj, mode, &out);
    return follow_stored(obj, out, rc);
}

int kq_update_take(struct ctrl *c, enum api_kind_id kind, json_t *obj,
                   enum store_update_mode mode)
{
    json_t *out = NULL;
    /* the caller keeps its reference: the store copies obj's top-level and
     * metadata maps, so follow_stored changes obj's own */
    int rc = store_update_take(ctrl_store(c), kind, api_namespace(obj), json_incref(obj), mode,
                               &out);
    return follow_stored(obj, out, rc);
}

bool kq_has_finalizer(const json_t *obj, const char *fin)
{
    size_t i;
    json_t *f;
    const json_t *fins = JX_GET(obj, "metadata", "finalizers"); /* looked up once */
    json_array_foreach(fins, i, f) {
        if (json_is_string(f) && !strcmp(json_string_value(f), fin))
            return true;
    }
    return false;
}

int kq_remove_finalizer(struct ctrl *c, enum api_kind_id kind, const char *ns,
                        const char *name, const char *fin)
{
    json_t *obj = kq_get_copy(c, kind, ns, name);
    if (!obj)
        return CU_ENOTFOUND;
    json_t *fins = JX_GET(obj, "metadata", "finalizers");
    int rc = 0;
    bool changed = false;
    for (size_t i = json_array_size(fins); i-- > 0;) {
        json_t *f = json_array_get(fins, i);
        if (json_is_string(f) && !strcmp(json_string_value(f), fin)) {
            json_array_remove(fins, i);
            changed = true;
        }
    }
    if (changed)
        rc = kq_update(c, kind, obj, STORE_UPDATE_MAIN);
    json_decref(obj);
    return rc;
}

const json_t *kq_controller_ref_in(const json_t *refs)
{
    size_t i;
    json_t *r;
    json_array_foreach(refs, i, r) {
        if (JX_BOOL(r, false, "controller"))
            return r;
    }
    return NULL;
}

const json_t *kq_controller_ref(const json_t *obj)
{
    return kq_controller_ref_in(JX_GET(obj, "metadata", "ownerReferences"));
}

bool kq_controlled_by_kind(const json_t *obj, const char *kind)
{
    const json_t *r = kq_controller_ref(obj);
    const char *k = r ? JX_STR(r, "kind") : NULL;
    return k && !strcmp(k, kind);
}

static void sha1_prefix(const char *text, char out[6])
{
    char hex[41];
    sha1_hex(text, strlen(text), hex);
    memcpy(out, hex, 5);
    out[5] = '\0';
}

char *kq_limit_name(const char *full)
{
    if (strlen(full) <= 253)
        return xstrdup(full);
    char h[6];
    sha1_prefix(full, h);
    return xasprintf("%.247s-%s", full, h);
}

char *kq_workload_name(const char *kind, const char *group, const char *job,
                       const char *uid, const char *extra)
{
    char *lower = xstrdup(kind);
    for (char *p = lower; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    char *hash_in = extra ? xasprintf("%s\n%s\n%s\n%s\n%s", kind, group, job, uid, extra)
                          : xasprintf("%s\n%s\n%s\n%s", kind, group, job, uid);
    char h[6];
    sha1_prefix(hash_in, h);
    char *prefixed = xasprintf("%s-%s", lower, job);
    char *name = xasprintf("%.247s-%s", prefixed, h);
    xfree(prefixed);
    xfree(hash_in);
    xfree(lower);
    return name;
}

/* The whole number v >= 0 as decimal text in buf (at least 21 bytes);
 * returns its length. */
static size_t decimal_text(int64_t v, char *buf)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = '\0';
    return n;
}

json_t *kq_quantity_json(int64_t value, const char *resource)
{
    /* api_quantity_format writes a plain number for whole cpus and for a
     * count with no binary (1024^k) or decimal (1000^k) suffix: done here
     * without its formatting and allocation */
    int64_t plain = -1;
    if (value >= 0 && api_resource_is_milli(resource)) {
        if (value % 1000 == 0)
            plain = value / 1000;
    } else if (value == 0 || (value > 0 && value % 1024 != 0 && value % 1000 != 0)) {
        plain = value;
    }
    if (plain >= 0) {
        char buf[24];
        size_t n = decimal_text(plain, buf);
        return json_stringn_nocheck(buf, n);
    }
    char *s = api_quantity_format(value, resource);
    json_t *j = json_string(s);
    xfree(s);
    return j;
}

/* A quantity that is a plain decimal integer of at most 15 digits (the
 * usual form of a pod set's resourceUsage): *units is its value, what
 * api_quantity_parse gives for it in whole units, without the general
 * parser. False for any other text. */
static bool plain_integer(const char *s, int64_t *units)
{
    int64_t v = 0;
    size_t n = 0;
    for (; s[n]; n++) {
        if (s[n] < '0' || s[n] > '9' || n >= 15)
            return false;
        v = v * 10 + (s[n] - '0');
    }
    *units = v;
    return n > 0;
}

int64_t kq_quantity_value(const json_t *v, const char *resource)
{
    int64_t out = 0;
    char err[128];
    if (json_is_string(v)) {
        if (plain_integer(json_string_value(v), &out))
            return api_resource_is_milli(resource) ? out * 1000 : out;
        if (api_quantity_parse(json_string_value(v), resource, &out, err, sizeof(err)) != 0)
            return 0;
        return out;
    }
    if (json_is_integer(v)) {
        int64_t x = json_integer_value(v);
        return api_resource_is_milli(resource) ? x * 1000 : x;
    }
    if (json_is_real(v)) {
        char buf[64];
        snprintf(buf, sizeof(buf), "%.17g", json_real_value(v));
        if (api_quantity_parse(buf, resource, &out, err, sizeof(err)) != 0)
            return 0;
        return out;
    }
    return 0;
}

char *kq_key(const char *ns, const char *name)
{
    return xjoin(ns, '/', name);
}

/* ---- owner index ---- */

struct kq_owner {
    char *owner;
    char **names; /* sorted, unique */
    size_t n, cap;
    UT_hash_handle hh;
};

struct kq_index {
    struct kq_owner *owners;
};

struct kq_index *kq_index_new(void)
{
    return xcalloc(1, sizeof(struct kq_index));
}

static void owner_free(struct kq_owner *o)
{
    for (size_t i = 0; i < o->n; i++)
        xfree(o->names[i]);
    xfree(o->names);
    xfree(o->owner);
    xfree(o);
}

void kq_index_free(struct kq_index *ix)
{
    if (!ix)
        return;
    struct kq_owner *o, *t;
    HASH_ITER(hh, ix->owners, o, t) {
        HASH_DEL(ix->owners, o);
        owner_free(o);
    }
    xfree(ix);
}

/* Position of name in o->names, or where it would go (*found tells). */
static size_t owner_find(const struct kq_owner *o, const char *name, bool *found)
{
    size_t lo = 0, hi = o->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int cmp = strcmp(o->names[mid], name);
        if (cmp == 0) {
            *found = true;
            return mid;
        }
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

void kq_index_add(struct kq_index *ix, const char *owner, const char *name)
{
    if (!owner || !name)
        return;
    struct kq_owner *o;
    HASH_FIND_STR(ix->owners, owner, o);
    if (!o) {
        o = xcalloc(1, sizeof(*o));
        o->owner = xstrdup(owner);
        HASH_ADD_KEYPTR(hh, ix->owners, o->owner, strlen(o->owner), o);
    }
    bool found;
    size_t at = owner_find(o, name, &found);
    if (found)
        return;
    XGROW(o->names, o->cap, o->n + 1);
    memmove(&o->names[at + 1], &o->names[at], (o->n - at) * sizeof(char *));
    o->names[at] = xstrdup(name);
    o->n++;
}

void kq_index_remove(struct kq_index *ix, const char *owner, const char *name)
{
    if (!owner || !name)
        return;
    struct kq_owner *o;
    HASH_FIND_STR(ix->owners, owner, o);
    if (!o)
        return;
    bool found;
    size_t at = owner_find(o, name, &found);
    if (!found)
        return;
    xfree(o->names[at]);
    memmove(&o->names[at], &o->names[at + 1], (o->n - at - 1) * sizeof(char *));
    o->n--;
    if (o->n == 0) {
        HASH_DEL(ix->owners, o);
        owner_free(o);
    }
}

void kq_index_drop(struct kq_index *ix, const char *owner)
{
    struct kq_owner *o;
    HASH_FIND_STR(ix->owners, owner ? owner : "", o);
    if (o) {
        HASH_DEL(ix->owners, o);
        owner_free(o);
    }
}

bool kq_index_has(struct kq_index *ix, const char *owner, const char *name)
{
    struct kq_owner *o;
    HASH_FIND_STR(ix->owners, owner ? owner : "", o);
    bool found = false;
    if (o && name)
        owner_find(o, name, &found);
    return found;
}

char *const *kq_index_get(struct kq_index *ix, const char *owner, size_t *n)
{
    struct kq_owner *o;
    HASH_FIND_STR(ix->owners, owner ? owner : "", o);
    *n = o ? o->n : 0;
    return o ? o->names : NULL;
}

/* ---- string set ---- */

struct kq_member {
    char *key;
    UT_hash_handle hh;
};

struct kq_set {
    struct kq_member *members;
};

struct kq_set *kq_set_new(void) { return xcalloc(1, sizeof(struct kq_set)); }

void kq_set_free(struct kq_set *s)
{
    if (!s)
        return;
    struct kq_member *m, *t;
    HASH_ITER(hh, s->members, m, t) {
        HASH_DEL(s->members, m);
        xfree(m->key);
        xfree(m);
    }
    xfree(s);
}

void kq_set_add(struct kq_set *s, const char *key)
{
    struct kq_member *m;
    HASH_FIND_STR(s->members, key, m);
    if (m)
        return;
    m = xcalloc(1, sizeof(*m));
    m->key = xstrdup(key);
    HASH_ADD_KEYPTR(hh, s->members, m->key, strlen(m->key), m);
}

void kq_set_remove(struct kq_set *s, const char *key)
{
    struct kq_member *m;
    HASH_FIND_STR(s->members, key, m);
    if (!m)
        return;
    HASH_DEL(s->members, m);
    xfree(m->key);
    xfree(m);
}

size_t kq_set_count(const struct kq_set *s) { return HASH_COUNT(s->members); }

void kq_set_each(const struct kq_set *s, void (*fn)(const char *key, void *arg), void *arg)
{
    struct kq_member *m, *t;
    HASH_ITER(hh, s->members, m, t) {
        fn(m->key, arg);
    }
}

/* ---- JSON values shared by content ---- */

struct kq_shared_value {
    char *key;
    size_t len;
    json_t *v; /* reference */
    UT_hash_handle hh;
};

struct kq_shared {
    struct kq_shared_value *values;
    size_t max;
    struct sbuf key; /* the key being built */
};

struct kq_shared *kq_shared_new(size_t max)
{
    struct kq_shared *t = xcalloc(1, sizeof(*t));
    t->max = max;
    sbuf_init(&t->key, 0);
    return t;
}

static void shared_clear(struct kq_shared *t)
{
    struct kq_shared_value *x, *tmp;
    HASH_ITER(hh, t->values, x, tmp) {
        HASH_DEL(t->values, x);
        json_decref(x->v);
        xfree(x->key);
        xfree(x);
    }
}

void kq_shared_free(struct kq_shared *t)
{
    if (!t)
        return;
    shared_clear(t);
    sbuf_release(&t->key);
    xfree(t);
}

void kq_shared_key_reset(struct kq_shared *t) { sbuf_reset(&t->key); }

/* sbuf_add(&t->key, p, n), copied in place while it fits (a key is built
 * from many small parts; sbuf's invariants kept: buf[len] is '\0', len <
 * cap). */
static void key_add(struct kq_shared *t, const void *p, size_t n)
{
    struct sbuf *k = &t->key;
    if (n < k->cap - k->len) {
        memcpy(k->buf + k->len, p, n);
        k->len += n;
        k->buf[k->len] = '\0';
    } else {
        sbuf_add(k, p, n);
    }
}

void kq_shared_key_str(struct kq_shared *t, const char *str)
{
    size_t n = str ? strlen(str) : SIZE_MAX;
    key_add(t, &n, sizeof(n));
    if (str)
        key_add(t, str, n);
}

void kq_shared_key_int(struct kq_shared *t, int64_t v) { key_add(t, &v, sizeof(v)); }

json_t *kq_shared_find(struct kq_shared *t)
{
    struct kq_shared_value *x;
    HASH_FIND(hh, t->values, t->key.buf, t->key.len, x);
    return x ? json_incref(x->v) : NULL;
}

json_t *kq_shared_keep(struct kq_shared *t, json_t *v)
{
    if (HASH_COUNT(t->values) >= t->max)
        shared_clear(t);
    struct kq_shared_value *x = xcalloc(1, sizeof(*x));
    x->len = t->key.len;
    x->key = xmalloc(x->len ? x->len : 1);
    memcpy(x->key, t->key.buf, x->len);
    x->v = v;
    HASH_ADD_KEYPTR(hh, t->values, x->key, x->len, x);
    return json_incref(v);
}

/* ---- a Workload event's document, read once ---- */


/* Whether the member key k (NUL-terminated) is "type" / "status", byte by
 * byte (no call: this runs for every condition of every event). */
static inline bool key_is_type(const char *k)
{
    return k[0] == 't' && k[1] == 'y' && k[2] == 'p' && k[3] == 'e' && !k[4];
}

static inline bool key_is_status(const char *k)
{
    return k[0] == 's' && k[1] == 't' && k[2] == 'a' && k[3] == 't' && k[4] == 'u' &&
           k[5] == 's' && !k[6];
}

/* What api_cond_holds says of cond, whose member after `it` (its first,
 * "type") is usually "status", as api_cond_set writes it: read there, else
 * looked up (it NULL: cond was not in that order). */
static bool view_holds(const json_t *cond, void *it)
{
    if (it && (it = json_object_iter_next((json_t *)cond, it)) &&
        key_is_status(json_object_iter_key(it))) {
        const char *s = json_string_value(json_object_iter_value(it));
        return s && s[0] == 'T' && s[1] == 'r' && s[2] == 'u' && s[3] == 'e' && !s[4];
    }
    return api_cond_holds(cond);
}

/* conds' first condition of each kq_view_cond type (api_cond_type), and
 * whether it holds: its type and status read in one pass over its first
 * two members. */
static void view_conds(const json_t *conds, struct kq_wl_view *v)
{
    static const char *const types[KQ__VC_COUNT] = {"Finished", "QuotaReserved", "Admitted",
                                                    "DeactivationTarget", "Requeued", "Evicted"};
    size_t left = KQ__VC_COUNT;
    for (size_t i = 0, n = json_array_size(conds); i < n && left; i++) {
        const json_t *cond = json_array_get(conds, i);
        void *it = json_object_iter((json_t *)cond);
        const char *t;
        if (it && key_is_type(json_object_iter_key(it))) {
            t = json_string_value(json_object_iter_value(it));
        } else {
            t = api_cond_type(cond);
            it = NULL;
        }
        int k;
        switch (t ? t[0] : 0) {
        case 'F': k = KQ_VC_FINISHED; break;
        case 'Q': k = KQ_VC_QUOTA_RESERVED; break;
        case 'A': k = KQ_VC_ADMITTED; break;
        case 'D': k = KQ_VC_DEACTIVATION_TARGET; break;
        case 'R': k = KQ_VC_REQUEUED; break;
        case 'E': k = KQ_VC_EVICTED; break;
        default: continue;
        }
        if (v->cond[k] || strcmp(t, types[k]))
            continue;
        v->cond[k] = view_holds(cond, it) ? 2 : 1;
        v->cond_obj[k] = cond;
        left--;
    }
}

/* Whether the member key k of length len (json_object_iter_key_len) is
 * the literal lit: lengths first, then a comparison of known size. */
#define VIEW_KEY_IS(k, len, lit) ((len) == sizeof(lit) - 1 && !memcmp((k), (lit), sizeof(lit) - 1))

/* The string member key (of length len) of obj (found by one pass), or
 * NULL. */
static const char *view_str(const json_t *obj, const char *key, size_t len)
{
    for (void *it = json_object_iter((json_t *)obj); it;
         it = json_object_iter_next((json_t *)obj, it)) {
        if (json_object_iter_key_len(it) == len && !memcmp(json_object_iter_key(it), key, len))
            return json_string_value(json_object_iter_value(it));
    }
    return NULL;
}

/* The slot of kq_wl_view for metadata's member k (len bytes), or NULL. */
static const json_t **metadata_slot(struct kq_wl_view *v, const char *k, size_t len)
{
    switch (len) { /* the lengths tell the members apart but for two */
    case 3: return VIEW_KEY_IS(k, len, "uid") ? &v->uid : NULL;
    case 6: return VIEW_KEY_IS(k, len, "labels") ? &v->labels : NULL;
    case 11: return VIEW_KEY_IS(k, len, "annotations") ? &v->annotations : NULL;
    case 15: return VIEW_KEY_IS(k, len, "ownerReferences") ? &v->owner_references : NULL;
    case 17:
        if (VIEW_KEY_IS(k, len, "creationTimestamp"))
            return &v->creation_timestamp;
        return VIEW_KEY_IS(k, len, "deletionTimestamp") ? &v->deletion_timestamp : NULL;
    default: return NULL;
    }
}

/* metadata's members (kq_wl_view's pass over them) */
static void view_metadata(const json_t *md, struct kq_wl_view *v)
{
    json_t *o = (json_t *)md;
    for (void *it = json_object_iter(o); it; it = json_object_iter_next(o, it)) {
        const char *k = json_object_iter_key(it);
        size_t len = json_object_iter_key_len(it);
        if (VIEW_KEY_IS(k, len, "name")) {
            v->name = json_string_value(json_object_iter_value(it));
        } else if (VIEW_KEY_IS(k, len, "namespace")) {
            v->ns = json_string_value(json_object_iter_value(it));
        } else {
            const json_t **slot = metadata_slot(v, k, len);
            if (slot)
                *slot = json_object_iter_value(it);
        }
    }
    v->deleting = v->deletion_timestamp != NULL;
    v->owned = v->owner_references != NULL;
}

/* spec's members (kq_wl_view's pass over them): queueName, and active and
 * maximumExecutionTimeSeconds as JX_BOOL and JX_INT read them */
static void view_spec(const json_t *spec, struct kq_wl_view *v)
{
    json_t *o = (json_t *)spec;
    v->active = true;
    for (void *it = json_object_iter(o); it; it = json_object_iter_next(o, it)) {
        const char *k = json_object_iter_key(it);
        size_t len = json_object_iter_key_len(it);
        if (VIEW_KEY_IS(k, len, "queueName")) {
            v->queue = json_string_value(json_object_iter_value(it));
        } else if (VIEW_KEY_IS(k, len, "active")) {
            const json_t *a = json_object_iter_value(it);
            v->active = !json_is_false(a);
        } else if (VIEW_KEY_IS(k, len, "maximumExecutionTimeSeconds")) {
            const json_t *m = json_object_iter_value(it);
            v->max_exec_s = json_is_integer(m) ? (int64_t)json_integer_value(m) : 0;
        }
    }
}

/* status's members (kq_wl_view's pass over them) */
static void view_status(const json_t *st, struct kq_wl_view *v)
{
    json_t *o = (json_t *)st;
    for (void *it = json_object_iter(o); it; it = json_object_iter_next(o, it)) {
        const char *k = json_object_iter_key(it);
        size_t len = json_object_iter_key_len(it);
        if (VIEW_KEY_IS(k, len, "conditions"))
            v->conditions = json_object_iter_value(it);
        else if (VIEW_KEY_IS(k, len, "admission"))
            v->admission = json_object_iter_value(it);
        else if (VIEW_KEY_IS(k, len, "requeueState"))
            v->requeue_state = json_object_iter_value(it);
        else if (VIEW_KEY_IS(k, len, "reclaimablePods"))
            v->reclaimable_pods = json_object_iter_value(it);
        else if (VIEW_KEY_IS(k, len, "admissionChecks"))
            v->admission_checks = json_object_iter_value(it);
    }
}

void kq_wl_view(const json_t *wl, struct kq_wl_view *v)
{
    memset(v, 0, sizeof(*v));
    const json_t *md = NULL;
    json_t *o = (json_t *)wl;
    for (void *it = json_object_iter(o); it; it = json_object_iter_next(o, it)) {
        const char *k = json_object_iter_key(it);
        size_t len = json_object_iter_key_len(it);
        if (VIEW_KEY_IS(k, len, "metadata"))
            md = json_object_iter_value(it);
        else if (VIEW_KEY_IS(k, len, "spec"))
            v->spec = json_object_iter_value(it);
        else if (VIEW_KEY_IS(k, len, "status"))
            v->status = json_object_iter_value(it);
    }
    view_metadata(md, v);
    view_spec(v->spec, v);
    view_status(v->status, v);
    v->cluster_queue = view_str(v->admission, "clusterQueue", 12);
    view_conds(v->conditions, v);
    /* field by field: the memset's zero padding stays (kq_wl_view_peek's
     * debug check compares whole views) */
    v->state.quota_reserved = v->cond[KQ_VC_QUOTA_RESERVED] == 2;
    v->state.has_admission = v->admission != NULL;
    v->state.admitted = v->cond[KQ_VC_ADMITTED] == 2;
    v->state.finished = v->cond[KQ_VC_FINISHED] == 2;
    v->state.evicted = v->cond[KQ_VC_EVICTED] == 2;
    v->state.deactivation_target = v->cond[KQ_VC_DEACTIVATION_TARGET] == 2;
    v->state.phase = api_wl_phase_of(&v->state);
}

/* The view kq_wl_view_peek keeps, with a reference to its document. */
static _Thread_local json_t *kept_doc;
static _Thread_local struct kq_wl_view kept_view;

/* The kept view is a memo keyed by the document's identity. Invariant: a
 * document handed here is never changed in place while it is kept (stored
 * documents are immutable; copies are made to change them), so the view
 * read when it was first peeked is still what kq_wl_view would read now.
 * Debug builds (the ASan build of make test) check it on every hit. */
const struct kq_wl_view *kq_wl_view_peek(const json_t *wl)
{
    if (!wl || kept_doc != wl) {
        kq_wl_view_drop();
        kq_wl_view(wl, &kept_view);
        kept_doc = json_incref((json_t *)wl);
    }
#ifndef NDEBUG
    else {
        struct kq_wl_view fresh;
        kq_wl_view(wl, &fresh);
        assert(!memcmp(&fresh, &kept_view, sizeof(fresh)) && "stale kq_wl_view_peek memo");
    }
#endif
    return &kept_view;
}

void kq_wl_view_drop(void)
{
    json_decref(kept_doc);
    kept_doc = NULL;
}
