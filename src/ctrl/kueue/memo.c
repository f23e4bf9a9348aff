/*
 * kueue/memo: what the scheduler last fed the admission engine for each
 * Workload, so that a Workload event that changed nothing the engine reads
 * (most status writes: a Pending message, a check's message, the queue's
 * own bookkeeping) is not decoded and upserted again, and the
 * status.resourceRequests computed for a spec is not computed again.
 *
 * A Workload's inputs are the JSON values api_workload_from_json and
 * kq_avoid_from_workload read (metadata uid, creationTimestamp, labels,
 * annotations and deletionTimestamp; spec; status admission, requeueState
 * and reclaimablePods; the status and lastTransitionTime of the conditions
 * it decodes, and Evicted's reason), compared by identity. Identity is enough because stored
 * documents are immutable and share every value a write leaves alone
 * (store_status_copy, api_cond_set), so the same values mean the same
 * decoded Workload, and an upsert of it would be the no-op engine.h says it
 * is. The memo holds a reference to each value it compares (not to the
 * document they came from, so that the store's next version of a Workload
 * may take the metadata map of the last in place: the memo is not one more
 * holder of the stored document), which keeps them alive: an address is
 * never reused while it is compared.
 *
 * It also keeps the Workload that document decoded to (kq_memo_decode):
 * a later document with the very same metadata and spec values (a status
 * write) has only its status decoded again, and its pod sets give the
 * resourceRequests without decoding.
 *
 * A document is not read again for the memo: the Workload controller's
 * reading of the event (kq_wl_view_peek, which the queue controller reads too)
 * has every value it compares, and the reading is kept for the memo call
 * that follows for the same document (last_obj; every other call drops
 * it). Conditions are compared per condition, their members only where the
 * condition objects differ. A status write that only adds
 * Finished=True is recognised without decoding (kq_memo_finished), and a
 * decode that kept the metadata and spec says so (status_only), so the
 * engine can keep its copy's pod sets.
 *
 * Invariant: an entry's decoded Workload is what api_workload_from_json
 * (with kq_avoid_from_workload) gives for any document whose compared
 * values are the entry's. Debug builds (the ASan build of make test)
 * check it on every hit: kq_memo_same's "the same" and every
 * kq_memo_decode answer are compared with a fresh decode of the document
 * (check_decoded), so a stale entry fails a test, not an admission.
 */
#include <assert.h>
#include <string.h>

/* keys "ns NUL name", hashed a word at a time (cu_hash_bytes, util/hash.h) */
#include "util/hash.h"
#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = cu_hash_bytes((keyptr), (size_t)(keylen)))
#include <uthash.h>
/* Sparser tables than uthash's default (a bucket doubled at a chain of 10,
 * about 3 entries per bucket): a lookup steps along its chain through
 * entries that are each a cache miss, so the buckets double at a chain of
 * 5 (read where HASH_ADD expands), as the store's index does. */
#undef HASH_BKT_CAPACITY_THRESH
#define HASH_BKT_CAPACITY_THRESH 5U

#include "api/meta.h"
#include "api/object.h"
#include "api/types.h"
#include "ctrl/kueue/kueue.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

/* The conditions api_workload_from_json decodes, in its order. */
static const char *const MEMO_CONDS[] = {"QuotaReserved", "Admitted", "Finished", "Evicted",
                                         "Requeued"};
#define N_CONDS (sizeof(MEMO_CONDS) / sizeof(MEMO_CONDS[0]))
#define COND_FINISHED 2
#define COND_EVICTED 3
/* uid, creationTimestamp, labels, annotations, deletionTimestamp, spec,
 * admission, requeueState, reclaimablePods */
#define N_INPUTS 9

/* The conditions are compared by the values the decoding reads of them,
 * by identity: for each of MEMO_CONDS (the first of its type) its status
 * and lastTransitionTime, and Evicted's reason; NULL where absent (the
 * very same condition object holds the very same values). A write that
 * changes none of them shares them with the previous version (api_cond_set
 * copies a condition but keeps the members it does not set), so a
 * message-only change compares equal. A condition that appears or changes
 * status does not, even when the decoded Workload comes out the same (a
 * first Pending write: QuotaReserved=False appearing): the engine's upsert
 * of it is not a no-op then, it routes the workload again and refreshes
 * its blocker status (its Pending message), and skipping it left that
 * message stale. */

struct memo_entry {
    bool has_doc;          /* in and cobj are a document's (the last fed) */
    json_t *in[N_INPUTS];  /* its values (references), NULL where absent */
    json_t *cobj[N_CONDS]; /* its conditions (references), NULL absent */
    bool admitted;
    bool has_dec;           /* dec is what doc decodes to */
    struct api_workload dec; /* with its avoided flavors (kq_avoid_from_workload) */
    json_t *rr_spec; /* the spec rr was computed for (reference) */
    json_t *rr;      /* status.resourceRequests for it (reference) */
    /* kq_memo_admission_hint: a status.admission value (reference, NULL:
     * none) being written, and what it decodes to */
    json_t *hint_adm;
    struct api_admission hint;
    /* what the engine was last given (kq_memo_expected_changed): its
     * expected run time and, when has_end, its expected end */
    bool has_expected, has_end;
    int64_t run_ms, end_ms;
    struct kq_link link; /* to the queue controller's contribution */
    /* the hash handle and the key it compares in the same allocation,
     * next to each other (a lookup reads no separate string) */
    size_t keylen;
    UT_hash_handle hh;
    char key[]; /* ns NUL name NUL */
};

/* What the memo reads of a Workload document (values borrowed from it):
 * its namespace and name, the values its decoding reads outside the
 * conditions, and its conditions array. */
struct wl_view {
    const char *ns, *name;
    bool deleting; /* metadata.deletionTimestamp is a string */
    const json_t *owner_references;
    json_t *in[N_INPUTS];
    const json_t *cobj[N_CONDS]; /* the first condition of each of MEMO_CONDS */
};

struct kq_memo {
    struct memo_entry *entries;
    /* what a kq_memo_same that found a change (or no entry) read of
     * last_obj, for the kq_memo_decode / kq_memo_store of the same
     * document that follows it (every call but those clears or replaces
     * last_obj, so an address reused later never matches) */
    const json_t *last_obj;
    /* obj's entry, or NULL; the last entry view_entry found even after
     * last_obj is dropped (never a freed one: entry_free clears it) */
    struct memo_entry *last_entry;
    struct wl_view last_view;
    bool last_complete; /* all but the conditions were found the same */
    bool last_meta; /* last_obj was read by kq_memo_meta: kq_memo_same keeps it */
};

/* No document read is kept for the next call. */
static void drop_last(struct kq_memo *memo)
{
    memo->last_obj = NULL;
    memo->last_meta = false;
}

struct kq_memo *kq_memo_new(void) { return xcalloc(1, sizeof(struct kq_memo)); }

/* Release the decoded Workload (its avoid list is ctrl's: types.h).
 * Without one, dec is empty already (zeroed, or released by a failed
 * decoding): nothing to do. */
static void entry_drop_decoded(struct memo_entry *m)
{
    if (!m->has_dec)
        return;
    kq_avoid_release(m->dec.avoid_flavors, m->dec.n_avoid_flavors);
    m->dec.avoid_flavors = NULL;
    m->dec.n_avoid_flavors = 0;
    api_workload_release(&m->dec);
    m->has_dec = false;
}

static void entry_clear_inputs(struct memo_entry *m)
{
    for (size_t i = 0; i < N_INPUTS; i++)
        json_decref(m->in[i]);
    for (size_t k = 0; k < N_CONDS; k++)
        json_decref(m->cobj[k]);
    m->has_doc = false;
    memset(m->in, 0, sizeof(m->in));
    memset(m->cobj, 0, sizeof(m->cobj));
}

static void entry_drop_hint(struct memo_entry *m)
{
    json_decref(m->hint_adm);
    m->hint_adm = NULL;
    api_admission_release(&m->hint);
}

static void entry_free(struct kq_memo *memo, struct memo_entry *m)
{
    if (memo->last_entry == m)
        memo->last_entry = NULL;
    kq_link_cut(&m->link);
    entry_clear_inputs(m);
    entry_drop_decoded(m);
    entry_drop_hint(m);
    json_decref(m->rr_spec);
    json_decref(m->rr);
    xfree(m);
}

void kq_memo_free(struct kq_memo *memo)
{
    if (!memo)
        return;
    struct memo_entry *m, *t;
    HASH_ITER(hh, memo->entries, m, t) {
        HASH_DEL(memo->entries, m);
        entry_free(memo, m);
    }
    xfree(memo);
    kq_wl_view_drop(); /* what kq_wl_view_peek kept, if still kept */
}

/* The entry of ns/name, or NULL. */
static struct memo_entry *find(struct kq_memo *memo, const char *ns, const char *name)
{
    ns = jx_or_empty(ns);
    name = jx_or_empty(name);
    size_t nl = strlen(ns), ml = strlen(name), len = nl + 1 + ml;
    char buf[512];
    char *key = len <= sizeof(buf) ? buf : xmalloc(len);
    memcpy(key, ns, nl + 1);
    memcpy(key + nl + 1, name, ml);
    struct memo_entry *m;
    HASH_FIND(hh, memo->entries, key, len, m);
    if (key != buf)
        xfree(key);
    return m;
}

/* Whether m is the entry of ns/name. */
static bool entry_is(const struct memo_entry *m, const char *ns, const char *name)
{
    ns = jx_or_empty(ns);
    size_t nl = strlen(ns);
    return nl < m->keylen && !memcmp(m->key, ns, nl + 1) &&
           !strcmp(m->key + nl + 1, jx_or_empty(name));
}

/* The entry of ns/name, or NULL: the last one view_entry found when it is
 * that one (the calls for the event's Workload that follow the memo's
 * reading of it: no hashing, no bucket), else found in the table. */
static struct memo_entry *find_last(struct kq_memo *memo, const char *ns, const char *name)
{
    struct memo_entry *m = memo->last_entry;
    return m && entry_is(m, ns, name) ? m : find(memo, ns, name);
}

/* A new entry for ns/name (which has none). */
static struct memo_entry *add(struct kq_memo *memo, const char *ns, const char *name)
{
    size_t nl = strlen(jx_or_empty(ns)), ml = strlen(jx_or_empty(name));
    struct memo_entry *m = xcalloc(1, sizeof(*m) + nl + ml + 2);
    m->keylen = nl + 1 + ml;
    memcpy(m->key, jx_or_empty(ns), nl + 1);
    memcpy(m->key + nl + 1, jx_or_empty(name), ml + 1);
    HASH_ADD_KEYPTR(hh, memo->entries, m->key, m->keylen, m);
    return m;
}

static struct memo_entry *find_or_add(struct kq_memo *memo, const char *ns, const char *name)
{
    struct memo_entry *m = find_last(memo, ns, name);
    return m ? m : add(memo, ns, name);
}

/* obj's view: what kq_wl_view read of it (the Workload controller's
 * reading of the same event, usually: kq_wl_view_peek). */
static void view_of(const json_t *obj, struct wl_view *v)
{
    /* the kq_wl_view index of each of MEMO_CONDS */
    static const int vc[N_CONDS] = {KQ_VC_QUOTA_RESERVED, KQ_VC_ADMITTED, KQ_VC_FINISHED,
                                    KQ_VC_EVICTED, KQ_VC_REQUEUED};
    const struct kq_wl_view *w = kq_wl_view_peek(obj);
    v->ns = w->ns;
    v->name = w->name;
    v->deleting = json_string_value(w->deletion_timestamp) != NULL;
    v->owner_references = w->owner_references;
    const json_t *in[N_INPUTS] = {w->uid,         w->creation_timestamp, w->labels,
                                  w->annotations, w->deletion_timestamp, w->spec,
                                  w->admission,   w->requeue_state,      w->reclaimable_pods};
    memcpy(v->in, in, sizeof(in));
    for (size_t k = 0; k < N_CONDS; k++)
        v->cobj[k] = w->cond_obj[vc[k]];
}

/* The values the decoding reads of condition c, the k-th of MEMO_CONDS
 * (NULL: absent): out[0] its status, out[1] its lastTransitionTime, out[2]
 * its reason when it is Evicted; NULL where absent. One pass over its
 * members. Borrowed from c. */
static void cond_values(const json_t *c, size_t k, const json_t *out[3])
{
    static const char *const keys[] = {"status", "lastTransitionTime", "reason"};
    json_t *m[3] = {NULL, NULL, NULL};
    jx_members(c, keys, k == COND_EVICTED ? 3 : 2, m);
    for (int i = 0; i < 3; i++)
        out[i] = m[i];
}

/* Whether the conditions a and b (per MEMO_CONDS, NULL absent) hold the
 * very same values the decoding reads. */
static bool same_conds(const json_t *const *a, const json_t *const *b)
{
    for (size_t k = 0; k < N_CONDS; k++) {
        if (a[k] == b[k])
            continue; /* the very condition: the very values */
        const json_t *va[3], *vb[3];
        cond_values(a[k], k, va);
        cond_values(b[k], k, vb);
        if (memcmp(va, vb, sizeof(va)) != 0)
            return false;
    }
    return true;
}

/* obj's view in memo->last_view (read now unless the kq_memo_same just
 * before read it) and its entry (added when add; NULL when not add and
 * there is none). */
static struct memo_entry *view_entry(struct kq_memo *memo, const json_t *obj, bool add_missing)
{
    struct wl_view *v = &memo->last_view;
    if (memo->last_obj != obj) {
        view_of(obj, v);
        memo->last_obj = obj;
        memo->last_complete = false;
        memo->last_entry = find(memo, v->ns, v->name);
    }
    if (!memo->last_entry && add_missing) /* (found none above, or since) */
        memo->last_entry = add(memo, v->ns, v->name);
    return memo->last_entry;
}

#ifndef NDEBUG
/* The memo's check (debug builds: the ASan build of make test): dec, what
 * the memo answers for obj, must be what decoding obj afresh gives, and
 * admitted its Admitted. A stale entry fails here, in a test, instead of
 * changing an admission. */
static void check_decoded(const json_t *obj, const struct api_workload *dec, bool admitted)
{
    struct api_workload fresh;
    memset(&fresh, 0, sizeof(fresh));
    int rc = api_workload_from_json(obj, &fresh);
    if (rc == 0)
        kq_avoid_from_workload(obj, &fresh.avoid_flavors, &fresh.n_avoid_flavors);
    assert(rc == 0 && api_workload_equal(&fresh, dec) && fresh.admitted == admitted &&
           "stale kq_memo entry");
    api_workload_release(&fresh);
}
#endif

bool kq_memo_same(struct kq_memo *memo, const json_t *obj, bool *admitted)
{
    if (!memo->last_meta)
        drop_last(memo); /* read obj now */
    memo->last_meta = false;
    struct memo_entry *m = view_entry(memo, obj, false);
    if (!m)
        return false;
    struct wl_view *v = &memo->last_view;
    if (memcmp(v->in, m->in, sizeof(m->in)) != 0) /* the cheap ones first */
        return false;
    memo->last_complete = true;
    if (!same_conds(v->cobj, (const json_t *const *)m->cobj))
        return false;
#ifndef NDEBUG
    if (m->has_dec)
        check_decoded(obj, &m->dec, m->admitted);
#endif
    drop_last(memo);
    *admitted = m->admitted;
    return true;
}

void kq_memo_meta(struct kq_memo *memo, const json_t *obj, struct kq_wl_meta *out)
{
    drop_last(memo); /* read obj now */
    view_entry(memo, obj, false);
    memo->last_meta = true;
    const struct wl_view *v = &memo->last_view;
    out->ns = v->ns;
    out->name = v->name;
    out->annotations = v->in[3];
    out->owner_references = v->owner_references;
    out->deleting = v->deleting;
}

bool kq_memo_finished(struct kq_memo *memo, const json_t *obj)
{
    if (memo->last_obj != obj || !memo->last_complete)
        return false; /* the plain inputs were not all the same */
    const struct memo_entry *m = memo->last_entry;
    const json_t *fin[3];
    cond_values(memo->last_view.cobj[COND_FINISHED], COND_FINISHED, fin);
    const char *st = json_string_value(fin[0]);
    return m->has_doc && m->has_dec && st && !strcmp(st, "True");
}

/* Remember obj as m's document (memo->last_view is obj's: view_entry). */
static void entry_set_doc(struct kq_memo *memo, struct memo_entry *m, bool admitted)
{
    /* the references of the values that changed only (a status write
     * changes a few); the new taken before the old go */
    const struct wl_view *v = &memo->last_view;
    for (size_t i = 0; i < N_INPUTS; i++) {
        if (m->in[i] != v->in[i]) {
            json_t *old = m->in[i];
            m->in[i] = json_incref(v->in[i]);
            json_decref(old);
        }
    }
    for (size_t k = 0; k < N_CONDS; k++) {
        if (m->cobj[k] != v->cobj[k]) {
            json_t *old = m->cobj[k];
            m->cobj[k] = json_incref((json_t *)v->cobj[k]);
            json_decref(old);
        }
    }
    m->has_doc = true;
    drop_last(memo);
    m->admitted = admitted;
}

void kq_memo_store(struct kq_memo *memo, const json_t *obj, bool admitted)
{
    struct memo_entry *m = view_entry(memo, obj, true);
    entry_drop_decoded(m); /* decoded from another document */
    entry_set_doc(memo, m, admitted);
}

/* Whether obj's metadata and spec (every value api_workload_from_json
 * reads outside the status, and the annotations kq_avoid_from_workload
 * reads) are the very values of m's document. */
static bool same_source(const struct memo_entry *m, json_t *const *in)
{
    return m->has_doc && in[0] == m->in[0] && in[1] == m->in[1] && in[2] == m->in[2] &&
           in[3] == m->in[3] && in[5] == m->in[5];
}

/* The status values of a document whose inputs are in and conditions
 * cobj (MEMO_CONDS is the order of the API_WL_COND_* indices). */
static void status_values(json_t *const *in, const json_t *const *cobj,
                          struct api_wl_status_values *out)
{
    _Static_assert(N_CONDS == API_WL_N_CONDS && COND_EVICTED == API_WL_COND_EVICTED &&
                       COND_FINISHED == API_WL_COND_FINISHED,
                   "MEMO_CONDS in the order of API_WL_COND_*");
    out->admission = in[6];
    out->requeue_state = in[7];
    out->reclaimable = in[8];
    for (size_t k = 0; k < N_CONDS; k++)
        out->cond[k] = cobj[k];
}

/* m->dec decoded again from obj: only its status when m's document has
 * the same metadata and spec values (and not the admission when it is the
 * same value too), and of the status only what was read from values
 * that are not the very ones of m's document (the reading of obj its
 * view made). Returns 0 or CU_EINVAL. */
static int entry_decode(struct kq_memo *memo, struct memo_entry *m, const json_t *obj,
                        bool *status_only)
{
    *status_only = false;
    json_t *const *in = memo->last_view.in; /* obj's: view_entry */
    if (m->has_dec && same_source(m, in)) {
        struct api_flavor_avoid *avoid = m->dec.avoid_flavors; /* kept: same annotations */
        size_t n_avoid = m->dec.n_avoid_flavors;
        m->dec.avoid_flavors = NULL;
        m->dec.n_avoid_flavors = 0;
        struct api_wl_status_values now, was;
        status_values(in, memo->last_view.cobj, &now);
        status_values(m->in, (const json_t *const *)m->cobj, &was);
        if (m->hint_adm && now.admission == m->hint_adm && was.admission != now.admission) {
            /* the admission the hint says it decodes to: taken, not decoded */
            api_admission_release(&m->dec.admission);
            m->dec.admission = m->hint;
            m->dec.has_admission = true;
            memset(&m->hint, 0, sizeof(m->hint));
            entry_drop_hint(m);
            was.admission = now.admission;
        }
        if (api_workload_status_from_values(&now, &was, &m->dec) != 0) {
            kq_avoid_release(avoid, n_avoid);
            m->has_dec = false;
            return CU_EINVAL;
        }
        m->dec.avoid_flavors = avoid;
        m->dec.n_avoid_flavors = n_avoid;
        *status_only = true;
        return 0;
    }
    entry_drop_decoded(m);
    if (api_workload_from_json(obj, &m->dec) != 0)
        return CU_EINVAL;
    kq_avoid_from_workload(obj, &m->dec.avoid_flavors, &m->dec.n_avoid_flavors);
    m->has_dec = true;
    return 0;
}

const struct api_workload *kq_memo_decode(struct kq_memo *memo, const json_t *obj,
                                          bool *status_only)
{
    bool only = false;
    struct memo_entry *m = view_entry(memo, obj, true);
    int rc = entry_decode(memo, m, obj, &only);
    if (status_only)
        *status_only = only;
    if (rc != 0) {
        HASH_DEL(memo->entries, m);
        entry_free(memo, m);
        drop_last(memo);
        return NULL;
    }
#ifndef NDEBUG
    check_decoded(obj, &m->dec, m->dec.admitted);
#endif
    entry_set_doc(memo, m, m->dec.admitted);
    return &m->dec;
}

/* m's decoded Workload when it was decoded from spec, else NULL. */
static const struct api_workload *entry_dec_of(const struct memo_entry *m, const json_t *spec)
{
    return m && m->has_dec && spec && m->in[5] == spec ? &m->dec : NULL;
}

const struct api_workload *kq_memo_decoded_spec(struct kq_memo *memo, const char *ns,
                                                const char *name, const json_t *obj)
{
    drop_last(memo);
    return entry_dec_of(find_last(memo, ns, name), json_object_get(obj, "spec"));
}

bool kq_memo_expected_changed(struct kq_memo *memo, const char *ns, const char *name,
                              int64_t run_ms, bool has_end, int64_t end_ms)
{
    drop_last(memo);
    struct memo_entry *m = find_last(memo, ns, name); /* the event's, usually */
    if (!m)
        return true;
    if (m->has_expected && m->run_ms == run_ms && m->has_end == has_end &&
        (!has_end || m->end_ms == end_ms))
        return false;
    m->has_expected = true;
    m->run_ms = run_ms;
    m->has_end = has_end;
    m->end_ms = end_ms;
    return true;
}

struct kq_link *kq_memo_link(struct kq_memo *memo, const char *ns, const char *name)
{
    struct memo_entry *m = memo->last_entry;
    return m && entry_is(m, ns, name) ? &m->link : NULL;
}

void kq_memo_forget(struct kq_memo *memo, const char *ns, const char *name)
{
    drop_last(memo);
    struct memo_entry *m = find_last(memo, ns, name);
    if (m) {
        HASH_DEL(memo->entries, m);
        entry_free(memo, m);
    }
}

void kq_memo_admission_hint(struct kq_memo *memo, const char *ns, const char *name, json_t *adm,
                            struct api_admission *decoded)
{
    drop_last(memo);
    struct memo_entry *m = find_or_add(memo, ns, name);
    entry_drop_hint(m);
    m->hint_adm = json_incref(adm);
    m->hint = *decoded;
    memset(decoded, 0, sizeof(*decoded));
}

/* m's resourceRequests when computed for spec, as a new reference, else
 * NULL. */
static json_t *entry_rr_of(const struct memo_entry *m, const json_t *spec)
{
    return m && m->rr && spec && m->rr_spec == spec ? json_incref(m->rr) : NULL;
}

/* Remember rr (a reference of its own) as the resourceRequests of spec. */
static void entry_set_rr(struct memo_entry *m, json_t *spec, json_t *rr)
{
    json_decref(m->rr_spec);
    json_decref(m->rr);
    m->rr_spec = json_incref(spec);
    m->rr = json_incref(rr);
}

json_t *kq_memo_requests(struct kq_memo *memo, const char *ns, const char *name,
                         const json_t *obj)
{
    drop_last(memo);
    return entry_rr_of(find_last(memo, ns, name), json_object_get(obj, "spec"));
}

void kq_memo_set_requests(struct kq_memo *memo, const char *ns, const char *name,
                          const json_t *obj, json_t *rr)
{
    drop_last(memo);
    json_t *spec = json_object_get(obj, "spec");
    if (spec)
        entry_set_rr(find_or_add(memo, ns, name), spec, rr);
}

json_t *kq_memo_requests_or(struct kq_memo *memo, const char *ns, const char *name, const json_t *obj,
                            json_t *(*compute)(void *ctx, const struct api_workload *known),
                            void *ctx)
{
    drop_last(memo);
    struct memo_entry *m = find_last(memo, ns, name);
    json_t *spec = json_object_get(obj, "spec");
    json_t *rr = entry_rr_of(m, spec);
    if (rr)
        return rr;
    rr = compute(ctx, entry_dec_of(m, spec));
    if (spec)
        entry_set_rr(m ? m : add(memo, ns, name), spec, rr);
    return rr;
}
