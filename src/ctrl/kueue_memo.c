/*
 * kueue_memo: what the scheduler last fed the admission engine for each
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
 * is. The memo holds a reference to the document the values came from,
 * which keeps them alive: an address is never reused while it is compared.
 *
 * It also keeps the Workload that document decoded to (kq_memo_decode):
 * a later document with the very same metadata and spec values (a status
 * write) has only its status decoded again, and its pod sets give the
 * resourceRequests without decoding.
 */
#include <string.h>
#include <uthash.h>

#include "api/meta.h"
#include "api/object.h"
#include "ctrl/kueue_int.h"
#include "ctrl/kueue_sched.h"
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

/* The values the conditions the decoding reads hold, by identity: for each
 * of MEMO_CONDS (the first of its type) its status and lastTransitionTime,
 * and Evicted's reason; NULL where absent. A write that changes none of
 * them shares them with the previous version (api_cond_set copies a
 * condition but keeps the members it does not set), so a message-only
 * change compares equal. A condition that appears or changes status does
 * not, even when the decoded Workload comes out the same (a first Pending
 * write: QuotaReserved=False appearing): the engine's upsert of it is not a
 * no-op then, it routes the workload again and refreshes its blocker
 * status (its Pending message), and skipping it left that message stale. */
struct cond_sum {
    const json_t *v[2 * N_CONDS + 1];
};

struct memo_entry {
    char *key; /* ns NUL name */
    size_t keylen;
    json_t *doc;           /* the document last fed (reference) */
    json_t *in[N_INPUTS];  /* its values (borrowed from doc), NULL where absent */
    struct cond_sum conds; /* its conditions (values borrowed from doc) */
    bool admitted;
    bool has_dec;           /* dec is what doc decodes to */
    struct api_workload dec; /* with its avoided flavors (kq_avoid_from_workload) */
    json_t *rr_spec; /* the spec rr was computed for (reference) */
    json_t *rr;      /* status.resourceRequests for it (reference) */
    UT_hash_handle hh;
};

struct kq_memo {
    struct memo_entry *entries;
    /* the inputs a kq_memo_same that found a change read, for the
     * kq_memo_store of the same document that follows it (every other call
     * clears last_obj, so an address reused later never matches) */
    const json_t *last_obj;
    struct memo_entry *last_entry; /* obj's entry */
    json_t *last_in[N_INPUTS];
    struct cond_sum last_conds;
    bool last_complete; /* last_conds is filled too */
};

struct kq_memo *kq_memo_new(void) { return xcalloc(1, sizeof(struct kq_memo)); }

/* Release the decoded Workload (its avoid list is ctrl's: types.h). */
static void entry_drop_decoded(struct memo_entry *m)
{
    kq_avoid_release(m->dec.avoid_flavors, m->dec.n_avoid_flavors);
    m->dec.avoid_flavors = NULL;
    m->dec.n_avoid_flavors = 0;
    api_workload_release(&m->dec);
    m->has_dec = false;
}

static void entry_clear_inputs(struct memo_entry *m)
{
    json_decref(m->doc);
    m->doc = NULL;
    memset(m->in, 0, sizeof(m->in));
    memset(&m->conds, 0, sizeof(m->conds));
}

static void entry_free(struct memo_entry *m)
{
    entry_clear_inputs(m);
    entry_drop_decoded(m);
    json_decref(m->rr_spec);
    json_decref(m->rr);
    xfree(m->key);
    xfree(m);
}

void kq_memo_free(struct kq_memo *memo)
{
    if (!memo)
        return;
    struct memo_entry *m, *t;
    HASH_ITER(hh, memo->entries, m, t) {
        HASH_DEL(memo->entries, m);
        entry_free(m);
    }
    xfree(memo);
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

static struct memo_entry *find_or_add(struct kq_memo *memo, const char *ns, const char *name)
{
    struct memo_entry *m = find(memo, ns, name);
    if (m)
        return m;
    m = xcalloc(1, sizeof(*m));
    size_t nl = strlen(jx_or_empty(ns)), ml = strlen(jx_or_empty(name));
    m->keylen = nl + 1 + ml;
    m->key = xmalloc(m->keylen + 1);
    memcpy(m->key, jx_or_empty(ns), nl + 1);
    memcpy(m->key + nl + 1, jx_or_empty(name), ml + 1);
    HASH_ADD_KEYPTR(hh, memo->entries, m->key, m->keylen, m);
    return m;
}

/* The values obj's decoding reads outside the conditions (borrowed). */
static void plain_inputs(const json_t *obj, json_t *out[N_INPUTS])
{
    const json_t *md = json_object_get(obj, "metadata");
    const json_t *st = json_object_get(obj, "status");
    out[0] = json_object_get(md, "uid");
    out[1] = json_object_get(md, "creationTimestamp");
    out[2] = json_object_get(md, "labels");
    out[3] = json_object_get(md, "annotations");
    out[4] = json_object_get(md, "deletionTimestamp");
    out[5] = json_object_get(obj, "spec");
    out[6] = json_object_get(st, "admission");
    out[7] = json_object_get(st, "requeueState");
    out[8] = json_object_get(st, "reclaimablePods");
}

/* The conditions' values (api_cond_get_all takes the first of each type,
 * as the decoding does). Borrowed from obj. */
static void cond_summary(const json_t *obj, struct cond_sum *out)
{
    const json_t *c[N_CONDS];
    api_cond_get_all(obj, MEMO_CONDS, N_CONDS, c);
    for (size_t k = 0; k < N_CONDS; k++) {
        out->v[2 * k] = json_object_get(c[k], "status");
        out->v[2 * k + 1] = json_object_get(c[k], "lastTransitionTime");
    }
    out->v[2 * N_CONDS] = json_object_get(c[COND_EVICTED], "reason");
}

static bool same_conds(const struct cond_sum *a, const struct cond_sum *b)
{
    return memcmp(a->v, b->v, sizeof(a->v)) == 0;
}

bool kq_memo_same(struct kq_memo *memo, const json_t *obj, bool *admitted)
{
    memo->last_obj = NULL;
    struct memo_entry *m = find(memo, api_namespace(obj), api_name(obj));
    if (!m)
        return false;
    json_t **in = memo->last_in;
    memo->last_obj = obj;
    memo->last_entry = m;
    memo->last_complete = false;
    plain_inputs(obj, in); /* the cheap ones first */
    if (memcmp(in, m->in, sizeof(m->in)) != 0)
        return false;
    cond_summary(obj, &memo->last_conds);
    memo->last_complete = true;
    if (!same_conds(&memo->last_conds, &m->conds))
        return false;
    memo->last_obj = NULL;
    *admitted = m->admitted;
    return true;
}

bool kq_memo_finished(struct kq_memo *memo, const json_t *obj)
{
    if (memo->last_obj != obj || !memo->last_complete)
        return false; /* the plain inputs were not all the same */
    const struct memo_entry *m = memo->last_entry;
    const char *st = json_string_value(memo->last_conds.v[2 * COND_FINISHED]);
    return m->doc && m->has_dec && st && !strcmp(st, "True");
}

/* Remember obj as m's document (its inputs, from the kq_memo_same that
 * just read them when there was one). */
static void entry_set_doc(struct kq_memo *memo, struct memo_entry *m, const json_t *obj,
                          bool admitted)
{
    json_t *doc = json_incref((json_t *)obj); /* before letting the old one go */
    entry_clear_inputs(m);
    m->doc = doc;
    if (memo->last_obj == obj)
        memcpy(m->in, memo->last_in, sizeof(m->in));
    else
        plain_inputs(obj, m->in);
    if (memo->last_obj == obj && memo->last_complete)
        m->conds = memo->last_conds;
    else
        cond_summary(obj, &m->conds);
    memo->last_obj = NULL;
    m->admitted = admitted;
}

void kq_memo_store(struct kq_memo *memo, const json_t *obj, bool admitted)
{
    struct memo_entry *m = find_or_add(memo, api_namespace(obj), api_name(obj));
    entry_drop_decoded(m); /* decoded from another document */
    entry_set_doc(memo, m, obj, admitted);
}

/* Whether obj's metadata and spec (every value api_workload_from_json
 * reads outside the status, and the annotations kq_avoid_from_workload
 * reads) are the very values of m's document. */
static bool same_source(const struct memo_entry *m, json_t *const in[N_INPUTS])
{
    return m->doc && in[0] == m->in[0] && in[1] == m->in[1] && in[2] == m->in[2] &&
           in[3] == m->in[3] && in[5] == m->in[5];
}

/* m->dec decoded again from obj: only its status when m's document has
 * the same metadata and spec values (and not the admission when it is the
 * same value too). Returns 0 or CU_EINVAL. */
static int entry_decode(struct kq_memo *memo, struct memo_entry *m, const json_t *obj,
                        bool *status_only)
{
    *status_only = false;
    json_t *in[N_INPUTS];
    if (memo->last_obj == obj)
        memcpy(in, memo->last_in, sizeof(in));
    else
        plain_inputs(obj, in);
    if (m->has_dec && same_source(m, in)) {
        struct api_flavor_avoid *avoid = m->dec.avoid_flavors; /* kept: same annotations */
        size_t n_avoid = m->dec.n_avoid_flavors;
        m->dec.avoid_flavors = NULL;
        m->dec.n_avoid_flavors = 0;
        if (api_workload_status_from_json(obj, &m->dec, in[6] == m->in[6]) != 0) {
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
    struct memo_entry *m = memo->last_obj == obj
                               ? memo->last_entry
                               : find_or_add(memo, api_namespace(obj), api_name(obj));
    int rc = entry_decode(memo, m, obj, &only);
    if (status_only)
        *status_only = only;
    if (rc != 0) {
        HASH_DEL(memo->entries, m);
        entry_free(m);
        memo->last_obj = NULL;
        return NULL;
    }
    entry_set_doc(memo, m, obj, m->dec.admitted);
    return &m->dec;
}

const struct api_workload *kq_memo_decoded_spec(struct kq_memo *memo, const json_t *obj)
{
    struct memo_entry *m = find(memo, api_namespace(obj), api_name(obj));
    const json_t *spec = json_object_get(obj, "spec");
    return m && m->has_dec && spec && m->in[5] == spec ? &m->dec : NULL;
}

void kq_memo_forget(struct kq_memo *memo, const char *ns, const char *name)
{
    memo->last_obj = NULL;
    struct memo_entry *m = find(memo, ns, name);
    if (m) {
        HASH_DEL(memo->entries, m);
        entry_free(m);
    }
}

json_t *kq_memo_requests(struct kq_memo *memo, const json_t *obj)
{
    struct memo_entry *m = find(memo, api_namespace(obj), api_name(obj));
    const json_t *spec = json_object_get(obj, "spec");
    return m && m->rr && spec && m->rr_spec == spec ? json_incref(m->rr) : NULL;
}

void kq_memo_set_requests(struct kq_memo *memo, const json_t *obj, json_t *rr)
{
    json_t *spec = json_object_get(obj, "spec");
    if (!spec)
        return;
    struct memo_entry *m = find_or_add(memo, api_namespace(obj), api_name(obj));
    json_decref(m->rr_spec);
    json_decref(m->rr);
    m->rr_spec = json_incref(spec);
    m->rr = json_incref(rr);
}
