/* meta: conditions, owner references and metadata helpers (see meta.h).
 * A condition object is never changed in place once written: a changed one
 * is replaced by a new object, so versions of a document, and Workloads
 * with equal conditions (api_cond_set's table below), may share them. */
#include "api/meta.h"

#include <assert.h>
#include <pthread.h>
#include <string.h>

#include "util/hash.h"
#include "util/jsonx.h"
#include "util/timefmt.h"

/* strcmp(a, b) == 0, with the first characters compared inline: condition
 * types and member names mostly differ there, so most comparisons of a
 * scan never call strcmp. */
static inline bool str_eq(const char *a, const char *b)
{
    return a[0] == b[0] && (!a[0] || !strcmp(a + 1, b + 1));
}

/* key == "type", byte by byte (no strcmp call: this runs for every
 * condition every scan looks at). */
static inline bool is_type_key(const char *key)
{
    return key[0] == 't' && key[1] == 'y' && key[2] == 'p' && key[3] == 'e' && !key[4];
}

/* obj's member key (klen bytes), as json_object_getn finds it, looked for
 * first among obj's first `probe` members in order: Kubernetes documents
 * keep metadata third (after apiVersion and kind) and name, namespace and
 * uid near the front of it, where comparing a few keys costs less than
 * hashing one. NULL when obj is not an object or has no such member. */
static inline json_t *member_near_front(const json_t *obj, const char *key, size_t klen,
                                        int probe)
{
    void *it = json_object_iter((json_t *)obj);
    for (int i = 0; it && i < probe; i++, it = json_object_iter_next((json_t *)obj, it)) {
        if (json_object_iter_key_len(it) == klen && !memcmp(json_object_iter_key(it), key, klen))
            return json_object_iter_value(it);
    }
    return it ? json_object_getn(obj, key, klen) : NULL;
}

/* obj's metadata member (see member_near_front), or NULL. */
static inline json_t *metadata_of(const json_t *obj)
{
    return member_near_front(obj, "metadata", 8, 3);
}

/* metadata.generation of obj, 0 when absent or not an integer. */
static json_int_t generation_of(const json_t *obj)
{
    json_t *g = json_object_getn(metadata_of(obj), "generation", 10);
    return json_is_integer(g) ? json_integer_value(g) : 0;
}

const char *api_cond_type(const json_t *cond)
{
    void *it = json_object_iter((json_t *)cond);
    if (it && is_type_key(json_object_iter_key(it)))
        return json_string_value(json_object_iter_value(it));
    return json_string_value(JX_GET(cond, "type"));
}

/* The condition of this type in conds (borrowed) and its index, or NULL. */
static json_t *cond_find(const json_t *conds, const char *type, size_t *at)
{
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c) {
        const char *t = api_cond_type(c);
        if (t && str_eq(t, type)) {
            *at = i;
            return c;
        }
    }
    return NULL;
}

json_t *api_cond_get(const json_t *obj, const char *type)
{
    size_t at;
    return cond_find(JX_GET(obj, "status", "conditions"), type, &at);
}

void api_cond_get_all(const json_t *obj, const char *const *types, size_t n,
                      const json_t **out)
{
    api_cond_find_all(JX_GET(obj, "status", "conditions"), types, n, out);
}

void api_cond_find_all(const json_t *conds, const char *const *types, size_t n,
                       const json_t **out)
{
    for (size_t k = 0; k < n; k++)
        out[k] = NULL;
    size_t left = n;
    for (size_t i = 0, len = json_array_size(conds); i < len && left; i++) {
        json_t *c = json_array_get(conds, i);
        const char *t = api_cond_type(c);
        for (size_t k = 0; t && k < n; k++) {
            if (!out[k] && str_eq(t, types[k])) {
                out[k] = c;
                left--;
                break;
            }
        }
    }
}

/* cond's "status" string, or NULL: cheaper than a lookup when it is the
 * second member, as api_cond_set writes it; any other object is looked up. */
static const char *cond_status_of(const json_t *cond)
{
    void *it = json_object_iter((json_t *)cond);
    if (it && (it = json_object_iter_next((json_t *)cond, it))) {
        const char *k = json_object_iter_key(it);
        if (k[0] == 's' && k[1] == 't' && k[2] == 'a' && k[3] == 't' && k[4] == 'u' &&
            k[5] == 's' && !k[6])
            return json_string_value(json_object_iter_value(it));
    }
    return json_string_value(JX_GET(cond, "status"));
}

bool api_cond_holds(const json_t *cond)
{
    const char *s = cond_status_of(cond);
    return s && str_eq(s, "True");
}

bool api_cond_is_true(const json_t *obj, const char *type)
{
    return api_cond_holds(api_cond_get(obj, type));
}

const char *const API_WL_STATE_TYPES[5] = {"QuotaReserved", "Admitted", "Finished", "Evicted",
                                           "DeactivationTarget"};

struct api_wl_state api_wl_state_from(const json_t *const cond[5], bool has_admission)
{
    struct api_wl_state st = {
        .quota_reserved = api_cond_holds(cond[0]),
        .has_admission = has_admission,
        .admitted = api_cond_holds(cond[1]),
        .finished = api_cond_holds(cond[2]),
        .evicted = api_cond_holds(cond[3]),
        .deactivation_target = api_cond_holds(cond[4]),
    };
    st.phase = api_wl_phase_of(&st);
    return st;
}

enum api_wl_phase api_wl_phase_of(const struct api_wl_state *st)
{
    return st->finished         ? API_WL_FINISHED
           : st->admitted       ? API_WL_ADMITTED
           : st->quota_reserved ? API_WL_QUOTA_RESERVED
                                : API_WL_PENDING;
}

struct api_wl_state api_wl_state_of(const json_t *wl)
{
    const json_t *cond[5];
    api_cond_get_all(wl, API_WL_STATE_TYPES, 5, cond);
    const json_t *st = json_object_get(wl, "status");
    return api_wl_state_from(cond, json_object_get(st, "admission") != NULL);
}

const char *api_wl_phase_name(enum api_wl_phase p)
{
    switch (p) {
    case API_WL_QUOTA_RESERVED: return "quotaReserved";
    case API_WL_ADMITTED: return "admitted";
    case API_WL_FINISHED: return "finished";
    case API_WL_PENDING: break;
    }
    return "pending";
}

const char *api_cond_status(const json_t *obj, const char *type)
{
    json_t *c = api_cond_get(obj, type);
    return c ? cond_status_of(c) : NULL;
}

/* The members of a condition api_cond_set compares, from one pass over it
 * (a condition has few members: cheaper than a hash lookup of each). */
struct cond_view {
    const json_t *status, *reason, *message, *gen;
};

static void cond_view_of(const json_t *c, struct cond_view *v)
{
    static const char *const keys[] = {"status", "reason", "message", "observedGeneration"};
    json_t *m[4];
    jx_members(c, keys, 4, m);
    v->status = m[0];
    v->reason = m[1];
    v->message = m[2];
    v->gen = m[3];
}

/* True when api_cond_set would change the condition viewed by v. */
static bool cond_differs(const struct cond_view *v, const char *status, const char *reason,
                         const char *message, json_int_t gen)
{
    const char *s = json_string_value(v->status);
    const char *r = json_string_value(v->reason);
    const char *m = json_string_value(v->message);
    return !s || strcmp(s, status) || !r || strcmp(r, reason ? reason : "") || !m ||
           strcmp(m, message ? message : "") ||
           (gen > 0 && jx_int_of_(v->gen, -1) != gen);
}

bool api_cond_would_change(const json_t *obj, const char *type, const char *status,
                           const char *reason, const char *message)
{
    const json_t *c = api_cond_get(obj, type);
    if (!c)
        return true;
    struct cond_view v;
    cond_view_of(c, &v);
    return cond_differs(&v, status, reason, message, generation_of(obj));
}

/* lastTransitionTime for now_ms (RFC 3339, seconds). A reconcile round
 * sets many conditions at the same instant: the last one formatted (per
 * thread) is reused. Borrowed until the thread's next call. */
static const char *transition_time(int64_t now_ms)
{
    static _Thread_local struct {
        bool set;
        int64_t ms;
        char ts[TIMEFMT_LEN];
    } last;
    if (!last.set || last.ms != now_ms) {
        timefmt_rfc3339(now_ms, false, last.ts);
        last.ms = now_ms;
        last.set = true;
    }
    return last.ts;
}

/* The value of key in a new condition replacing old: a new string when
 * old's is not val (json_string's NULL for invalid UTF-8 keeps old's, as
 * json_object_set_new ignores a NULL value), else old's own. */
static json_t *str_or_same(json_t *cur, const char *val)
{
    const char *s = json_string_value(cur);
    if (s && !strcmp(s, val))
        return json_incref(cur);
    json_t *n = jx_string(val);
    return n ? n : json_incref(cur);
}

/* api_cond_set's change to an existing condition c, as a new condition
 * built in one pass (c may be shared with other document versions: it is
 * never changed): c's members in c's order, status, reason, message and
 * observedGeneration replaced, lastTransitionTime when the status flips,
 * missing ones appended. */
static json_t *cond_changed_copy(const json_t *c, const struct cond_view *view,
                                 const char *status, const char *reason, const char *message,
                                 json_int_t gen, int64_t now_ms)
{
    const char *cur = json_string_value(view->status);
    bool flip = !cur || strcmp(cur, status);
    const char *ltt = flip ? transition_time(now_ms) : NULL;
    bool set_gen = gen > 0;
    json_t *out = json_object();
    bool seen_status = false, seen_ltt = false, seen_reason = false, seen_msg = false;
    const char *key;
    size_t klen;
    json_t *v;
    json_object_keylen_foreach((json_t *)c, key, klen, v) {
        json_t *nv;
        if (str_eq(key, "status")) {
            nv = str_or_same(v, status);
            seen_status = true;
        } else if (str_eq(key, "lastTransitionTime") && flip) {
            nv = str_or_same(v, ltt);
            seen_ltt = true;
        } else if (str_eq(key, "reason")) {
            nv = str_or_same(v, reason);
            seen_reason = true;
        } else if (str_eq(key, "message")) {
            nv = str_or_same(v, message);
            seen_msg = true;
        } else if (str_eq(key, "observedGeneration") && set_gen) {
            nv = json_is_integer(v) && json_integer_value(v) == gen ? json_incref(v)
                                                                    : json_integer(gen);
            set_gen = false;
        } else {
            nv = json_incref(v);
        }
        json_object_setn_new_nocheck(out, key, klen, nv);
    }
    if (!seen_status)
        JX_SET_LIT(out, "status", jx_string(status));
    if (flip && !seen_ltt)
        JX_SET_LIT(out, "lastTransitionTime", jx_string(ltt));
    if (!seen_reason)
        JX_SET_LIT(out, "reason", jx_string(reason));
    if (!seen_msg)
        JX_SET_LIT(out, "message", jx_string(message));
    if (set_gen)
        JX_SET_LIT(out, "observedGeneration", json_integer(gen));
    return out;
}

/* ---- shared Workload condition objects ----
 *
 * Many Workloads get the very same condition at the same instant (Admitted
 * "The workload is admitted", Finished, a Pending message a round repeats),
 * so api_cond_set keeps the last ones it built (a small table keyed by
 * content) and hands out a reference to an equal one instead of building
 * it again: a condition is never changed in place (store_status_copy shares
 * them between versions already), so sharing one between documents is the
 * same. Only for Workloads (a Job's condition is changed after it is set:
 * jobs_batch adds lastProbeTime) and only for a condition in the order
 * api_cond_set writes it (type, status, lastTransitionTime, reason,
 * message[, observedGeneration]), so the document written is the one the
 * plain build would write. The status strings "True"/"False" and the
 * instant's lastTransitionTime are shared too; a condition taken from the
 * table has the same status and lastTransitionTime values, by identity, as
 * the one it would have built (what kueue_memo compares), and for Evicted
 * the same reason (kueue_memo compares that too). A caller on another
 * thread while one uses the table builds its condition as before.
 * Invariant: an entry's condition is equal (json_equal) to what cond_build
 * gives for the same want; debug builds (the ASan build of make test)
 * build it afresh on every hit and compare. */
#define COND_SLOTS 1024
/* The table's conditions are also found by address (a condition a
 * document holds is often one the table handed out): COND_PTR_SLOTS
 * direct-mapped slots, each an entry's index + 1 (0: none), checked
 * against the entry's condition. */
#define COND_PTR_SLOTS 4096

/* A condition as api_cond_set would write it: the values by identity where
 * they would be kept or shared, the texts by content. */
struct cond_want {
    const char *type, *reason, *message;
    json_t *status, *ltt;
    json_t *keep_reason; /* the reason value that must be kept (Evicted), or NULL */
    bool has_gen;
    json_int_t gen;
    uint64_t hash;
};

struct cond_entry {
    json_t *cond; /* reference; NULL: empty slot */
    uint64_t hash;
    const char *type, *reason, *message; /* borrowed from cond */
    const json_t *status, *ltt, *reason_v;
    bool has_gen;
    json_int_t gen;
    json_t *v[6]; /* cond's member values (cond_is_canonical's), borrowed */
};

static struct {
    pthread_mutex_t lock;
    json_t *truth[2]; /* "False", "True" (references) */
    bool ltt_set;
    int64_t ltt_ms;
    json_t *ltt; /* lastTransitionTime of ltt_ms (reference) */
    struct cond_entry e[COND_SLOTS];
    uint16_t by_ptr[COND_PTR_SLOTS];
} g_share = {.lock = PTHREAD_MUTEX_INITIALIZER};

static unsigned cond_ptr_slot(const json_t *c)
{
    return (unsigned)cu_hash_final((uint64_t)(uintptr_t)c) & (COND_PTR_SLOTS - 1);
}

/* The table's entry whose condition is c itself, or NULL. Lock held. */
static const struct cond_entry *cond_known(const json_t *c)
{
    unsigned i = g_share.by_ptr[cond_ptr_slot(c)];
    if (!i || g_share.e[i - 1].cond != c)
        return NULL;
    return &g_share.e[i - 1];
}

/* The shared "True"/"False" string, or NULL for any other status. */
static json_t *shared_status(const char *status)
{
    int i = str_eq(status, "True") ? 1 : str_eq(status, "False") ? 0 : -1;
    if (i < 0)
        return NULL;
    if (!g_share.truth[i])
        g_share.truth[i] = json_string_nocheck(status);
    return g_share.truth[i];
}

/* The shared lastTransitionTime string of now_ms: one for all the
 * instants of a second (the text has seconds). */
static json_t *shared_ltt(int64_t now_ms)
{
    if (!g_share.ltt_set || g_share.ltt_ms != now_ms) {
        const char *ts = transition_time(now_ms);
        if (!g_share.ltt || strcmp(json_string_value(g_share.ltt), ts)) {
            json_decref(g_share.ltt);
            g_share.ltt = json_string_nocheck(ts);
        }
        g_share.ltt_ms = now_ms;
        g_share.ltt_set = true;
    }
    return g_share.ltt;
}

static uint64_t cond_want_hash(const struct cond_want *w)
{
    uint64_t h = cu_hash_str(cu_hash_str(cu_hash_str(CU_HASH_SEED, w->type), w->reason), w->message);
    h = cu_hash_word(h, (uint64_t)(uintptr_t)w->status);
    h = cu_hash_word(h, (uint64_t)(uintptr_t)w->ltt);
    h = cu_hash_word(h, (uint64_t)(w->has_gen ? w->gen + 1 : 0));
    return cu_hash_final(h);
}

static struct cond_entry *cond_slot(uint64_t hash)
{
    return &g_share.e[hash & (COND_SLOTS - 1)];
}

/* The table's condition equal to w, or NULL. Borrowed. */
static json_t *cond_lookup(const struct cond_want *w)
{
    const struct cond_entry *e = cond_slot(w->hash);
    if (!e->cond || e->hash != w->hash || e->status != w->status || e->ltt != w->ltt ||
        e->has_gen != w->has_gen || (w->has_gen && e->gen != w->gen) ||
        (w->keep_reason && e->reason_v != w->keep_reason) || strcmp(e->type, w->type) ||
        strcmp(e->reason, w->reason) || strcmp(e->message, w->message))
        return NULL;
    return e->cond;
}

/* True when c's members are api_cond_set's, in its order, all strings (an
 * observedGeneration an integer): v[i] is the value of the i-th (v[5] NULL
 * when there is no observedGeneration). */
/* key (klen bytes) == lit, a literal: memcmp of a constant size, which the
 * compiler inlines (this runs for every member of every condition set). */
#define KEY_IS(key, klen, lit) ((klen) == sizeof(lit) - 1 && !memcmp((key), lit, sizeof(lit) - 1))

/* True when the i-th member key of a condition api_cond_set writes is key. */
static inline bool canonical_key(int i, const char *key, size_t klen)
{
    switch (i) {
    case 0: return KEY_IS(key, klen, "type");
    case 1: return KEY_IS(key, klen, "status");
    case 2: return KEY_IS(key, klen, "lastTransitionTime");
    case 3: return KEY_IS(key, klen, "reason");
    case 4: return KEY_IS(key, klen, "message");
    case 5: return KEY_IS(key, klen, "observedGeneration");
    default: return false;
    }
}

static bool cond_is_canonical(const json_t *c, json_t *v[6])
{
    v[5] = NULL;
    int i = 0;
    for (void *it = json_object_iter((json_t *)c); it;
         it = json_object_iter_next((json_t *)c, it), i++) {
        if (!canonical_key(i, json_object_iter_key(it), json_object_iter_key_len(it)))
            return false;
        v[i] = json_object_iter_value(it);
        if (i < 5 ? !json_is_string(v[i]) : !json_is_integer(v[i]))
            return false;
    }
    return i >= 5;
}

/* Remember cond, built for w with the values v (cond_build), in the table,
 * unless it is not what w says (a text that is not UTF-8, which the build
 * leaves out or keeps). */
static void cond_remember(const struct cond_want *w, json_t *cond, json_t *const v[6])
{
    if (!v[0] || !v[3] || !v[4] || strcmp(json_string_value(v[3]), w->reason) ||
        strcmp(json_string_value(v[4]), w->message))
        return;
    struct cond_entry *e = cond_slot(w->hash);
    json_decref(e->cond);
    *e = (struct cond_entry){json_incref(cond), w->hash, json_string_value(v[0]),
                             json_string_value(v[3]), json_string_value(v[4]), v[1], v[2],
                             v[3], w->has_gen, w->gen, {v[0], v[1], v[2], v[3], v[4], v[5]}};
    g_share.by_ptr[cond_ptr_slot(cond)] = (uint16_t)(e - g_share.e + 1);
}

/* The condition w describes, built in api_cond_set's order; old holds the
 * values of the condition it replaces (cond_is_canonical: its type and
 * unchanged texts are kept), or NULLs for a new one. v: the values set
 * (borrowed from the result; NULL where a text is not UTF-8). */
static json_t *cond_build(const struct cond_want *w, json_t *const old[6], json_t *v[6])
{
    json_t *c = json_object();
    v[0] = old[0] ? json_incref(old[0]) : jx_string(w->type);
    v[1] = json_incref(w->status);
    v[2] = json_incref(w->ltt);
    v[3] = old[3] ? str_or_same(old[3], w->reason) : jx_string(w->reason);
    v[4] = old[4] ? str_or_same(old[4], w->message) : jx_string(w->message);
    v[5] = !w->has_gen                                        ? NULL
           : old[5] && json_integer_value(old[5]) == w->gen ? json_incref(old[5])
                                                            : json_integer(w->gen);
    JX_SET_LIT(c, "type", v[0]);
    JX_SET_LIT(c, "status", v[1]);
    JX_SET_LIT(c, "lastTransitionTime", v[2]);
    JX_SET_LIT(c, "reason", v[3]);
    JX_SET_LIT(c, "message", v[4]);
    if (v[5])
        JX_SET_LIT(c, "observedGeneration", v[5]);
    return c;
}

/* The condition api_cond_set should write (new reference): the table's
 * when it has it, else built and remembered. old: the values of the
 * condition replaced (cond_is_canonical), or NULLs for a new one. NULL when
 * the table does not apply (a status other than True/False): build as
 * usual then. Called with the table's lock held. */
static json_t *cond_shared(json_t *const old[6], const char *type, const char *status,
                           const char *reason, const char *message, json_int_t gen,
                           int64_t now_ms)
{
    struct cond_want w = {.type = type, .reason = reason, .message = message};
    if (old[1] && !strcmp(json_string_value(old[1]), status)) {
        w.status = old[1];
        w.ltt = old[2];
    } else {
        if (!(w.status = shared_status(status)))
            return NULL;
        w.ltt = shared_ltt(now_ms); /* str_or_same keeps an equal old one */
        if (old[2] && !strcmp(json_string_value(old[2]), json_string_value(w.ltt)))
            w.ltt = old[2];
    }
    if (old[3] && str_eq(type, "Evicted") && !strcmp(json_string_value(old[3]), reason))
        w.keep_reason = old[3];
    if (gen > 0 || old[5]) {
        w.has_gen = true;
        w.gen = gen > 0 ? gen : json_integer_value(old[5]);
    }
    w.hash = cond_want_hash(&w);
    json_t *hit = cond_lookup(&w);
#ifndef NDEBUG
    if (hit) { /* the table's check (debug builds): what it hands out is
                * the condition the plain build gives */
        json_t *v[6];
        json_t *fresh = cond_build(&w, old, v);
        assert(json_equal(fresh, hit) && "stale condition table entry");
        json_decref(fresh);
    }
#endif
    if (hit)
        return json_incref(hit);
    json_t *v[6];
    json_t *out = cond_build(&w, old, v);
    cond_remember(&w, out, v);
    return out;
}

/* Whether the table applies to obj (a Workload) and this thread holds its
 * lock (unlocked by the caller). */
static bool cond_table_lock(const json_t *obj)
{
    const char *kind = json_string_value(member_near_front(obj, "kind", 4, 2));
    return kind && !strcmp(kind, "Workload") && !pthread_mutex_trylock(&g_share.lock);
}

/* cond_find, with the types of the table's own conditions read from the
 * table. Lock held. */
static json_t *cond_find_known(const json_t *conds, const char *type, size_t *at)
{
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c) {
        const struct cond_entry *e = cond_known(c);
        const char *t = e ? e->type : api_cond_type(c);
        if (t && str_eq(t, type)) {
            *at = i;
            return c;
        }
    }
    return NULL;
}

/* c's values in api_cond_set's order (see cond_is_canonical), from the
 * table when c is one of its conditions (table: the lock is held). */
static bool cond_values(const json_t *c, bool table, json_t *v[6])
{
    const struct cond_entry *e = table ? cond_known(c) : NULL;
    if (!e)
        return cond_is_canonical(c, v);
    memcpy(v, e->v, sizeof(e->v));
    return true;
}

static bool cond_set(json_t *obj, const char *type, const char *status, const char *reason,
                     const char *message, int64_t now_ms, bool table);

bool api_cond_set(json_t *obj, const char *type, const char *status, const char *reason,
                  const char *message, int64_t now_ms)
{
    /* a Workload's conditions come from the shared table (see above) when
     * this thread has it; the document written is the same either way */
    bool table = cond_table_lock(obj);
    bool changed = cond_set(obj, type, status, reason ? reason : "", message ? message : "",
                            now_ms, table);
    if (table)
        pthread_mutex_unlock(&g_share.lock);
    return changed;
}

/* api_cond_set with reason and message not NULL; table: obj is a Workload
 * and the table's lock is held. */
static bool cond_set(json_t *obj, const char *type, const char *status, const char *reason,
                     const char *message, int64_t now_ms, bool table)
{
    json_t *st = JX_GET(obj, "status");
    if (!json_is_object(st))
        st = JX_OBJ(obj, "status");
    json_t *conds = JX_GET(st, "conditions");
    if (!json_is_array(conds)) {
        conds = json_array();
        JX_SET_LIT(st, "conditions", conds);
    }
    json_int_t gen = generation_of(obj);
    size_t at = 0;
    json_t *c = table ? cond_find_known(conds, type, &at) : cond_find(conds, type, &at);
    struct cond_view view;
    json_t *old[6] = {NULL}; /* c's values when in api_cond_set's order */
    bool canonical = !c;
    if (c) { /* one pass over c, two when it is not in that order */
        canonical = cond_values(c, table, old);
        if (canonical)
            view = (struct cond_view){old[1], old[3], old[4], old[5]};
        else
            cond_view_of(c, &view);
        if (!cond_differs(&view, status, reason, message, gen))
            return false;
    }
    /* shared containers are changed as copies (their scalars stay shared) */
    if (conds->refcount > 1) {
        conds = json_copy(conds);
        JX_SET_LIT(st, "conditions", conds);
        c = c ? json_array_get(conds, at) : NULL;
    }
    json_t *shared =
        canonical && table ? cond_shared(old, type, status, reason, message, gen, now_ms) : NULL;
    if (shared) {
        if (c)
            json_array_set_new(conds, at, shared);
        else
            json_array_append_new(conds, shared);
        return true;
    }
    if (c) { /* shared or not, replaced by its changed copy */
        json_array_set_new(conds, at,
                           cond_changed_copy(c, &view, status, reason, message, gen, now_ms));
        return true;
    }
    c = json_object();
    JX_SET_LIT(c, "type", jx_string(type));
    JX_SET_LIT(c, "status", jx_string(status));
    JX_SET_LIT(c, "lastTransitionTime", jx_string(transition_time(now_ms)));
    JX_SET_LIT(c, "reason", jx_string(reason));
    JX_SET_LIT(c, "message", jx_string(message));
    if (gen > 0)
        JX_SET_LIT(c, "observedGeneration", json_integer(gen));
    json_array_append_new(conds, c);
    return true;
}

bool api_cond_remove(json_t *obj, const char *type)
{
    json_t *conds = JX_GET(obj, "status", "conditions");
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c) {
        const char *t = api_cond_type(c);
        if (t && str_eq(t, type)) {
            json_array_remove(conds, i);
            return true;
        }
    }
    return false;
}

/* timefmt_parse of a lastTransitionTime: the conditions of a round share a
 * few instants, so the last one parsed (per thread) is remembered. 0 when
 * ts is NULL or does not parse. */
static int64_t transition_ms(const char *ts)
{
    static _Thread_local struct {
        bool set;
        int64_t ms;
        char ts[TIMEFMT_LEN];
    } last;
    if (!ts)
        return 0;
    if (last.set && !strcmp(ts, last.ts))
        return last.ms;
    int64_t ms = 0;
    if (timefmt_parse(ts, &ms) < 0)
        return 0;
    size_t n = strlen(ts);
    if (n < sizeof(last.ts)) {
        memcpy(last.ts, ts, n + 1);
        last.ms = ms;
        last.set = true;
    }
    return ms;
}

int64_t api_cond_time_ms(const json_t *obj, const char *type)
{
    return api_cond_ltt_ms(api_cond_get(obj, type));
}

int64_t api_cond_ltt_ms(const json_t *cond)
{
    return cond ? transition_ms(json_string_value(member_near_front(cond, "lastTransitionTime",
                                                                     18, 3)))
                : 0;
}

json_t *api_owner_ref_new(const json_t *owner, bool controller)
{
    json_t *r = json_pack("{s:s, s:s, s:s, s:s}",
        "apiVersion", jx_or_empty(JX_STR(owner, "apiVersion")),
        "kind", jx_or_empty(JX_STR(owner, "kind")),
        "name", jx_or_empty(api_name(owner)),
        "uid", jx_or_empty(api_uid(owner)));
    if (controller) {
        JX_SET_LIT(r, "controller", json_true());
        JX_SET_LIT(r, "blockOwnerDeletion", json_true());
    }
    return r;
}

void api_owner_ref_add(json_t *obj, json_t *ref)
{
    json_t *md = JX_OBJ(obj, "metadata");
    json_t *refs = JX_GET(md, "ownerReferences");
    if (!json_is_array(refs)) {
        refs = json_array();
        JX_SET_LIT(md, "ownerReferences", refs);
    }
    json_array_append_new(refs, ref);
}

const char *api_controller_uid(const json_t *obj)
{
    json_t *refs = JX_GET(obj, "metadata", "ownerReferences");
    size_t i;
    json_t *r;
    json_array_foreach(refs, i, r) {
        if (JX_BOOL(r, false, "controller"))
            return JX_STR(r, "uid");
    }
    return NULL;
}

bool api_is_owned_by(const json_t *obj, const char *owner_uid)
{
    json_t *refs = JX_GET(obj, "metadata", "ownerReferences");
    size_t i;
    json_t *r;
    json_array_foreach(refs, i, r) {
        const char *u = JX_STR(r, "uid");
        if (u && owner_uid && !strcmp(u, owner_uid))
            return true;
    }
    return false;
}

const char *api_label(const json_t *obj, const char *key)
{
    return JX_STR(obj, "metadata", "labels", key);
}

const char *api_annotation(const json_t *obj, const char *key)
{
    return JX_STR(obj, "metadata", "annotations", key);
}

void api_set_label(json_t *obj, const char *key, const char *value)
{
    json_object_set_new(JX_OBJ(obj, "metadata", "labels"), key, jx_string(value));
}

void api_set_annotation(json_t *obj, const char *key, const char *value)
{
    json_object_set_new(JX_OBJ(obj, "metadata", "annotations"), key, jx_string(value));
}

/* The positions probed are where the store's documents keep these members
 * (name, namespace, labels, uid, ...): see member_near_front. */
const char *api_name(const json_t *obj)
{
    return json_string_value(member_near_front(metadata_of(obj), "name", 4, 2));
}

const char *api_namespace(const json_t *obj)
{
    return json_string_value(member_near_front(metadata_of(obj), "namespace", 9, 3));
}

const char *api_uid(const json_t *obj)
{
    return json_string_value(member_near_front(metadata_of(obj), "uid", 3, 5));
}

int64_t api_creation_ms(const json_t *obj)
{
    int64_t ms = 0;
    if (timefmt_parse(JX_STR(obj, "metadata", "creationTimestamp"), &ms) < 0)
        return 0;
    return ms;
}

bool api_is_deleting(const json_t *obj)
{
    return json_is_string(json_object_getn(metadata_of(obj), "deletionTimestamp", 17));
}

json_t *api_object_new(const char *api_version, const char *kind, const char *ns,
                       const char *name)
{
    json_t *o = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", api_version, "kind", kind,
                          "metadata", "name", name);
    if (ns && ns[0])
        JX_SET_LIT(JX_GET(o, "metadata"), "namespace", jx_string(ns));
    return o;
}
