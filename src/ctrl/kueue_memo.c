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
 * and reclaimablePods; the status, lastTransitionTime (and for Evicted the
 * reason) of the conditions it decodes), compared by identity: stored
 * documents are immutable and share every value a write leaves alone
 * (store_status_copy, api_cond_set), so the same values mean the same
 * decoded Workload, and an upsert of it would be the no-op engine.h says it
 * is. The memo holds a reference to the document the values came from,
 * which keeps them alive: an address is never reused while it is compared.
 */
#include <string.h>
#include <uthash.h>

#include "api/meta.h"
#include "ctrl/kueue_sched.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

/* The conditions api_workload_from_json decodes. */
static const char *const MEMO_CONDS[] = {"QuotaReserved", "Admitted", "Finished", "Evicted",
                                         "Requeued"};
#define N_CONDS (sizeof(MEMO_CONDS) / sizeof(MEMO_CONDS[0]))
#define EVICTED 3
/* uid, creationTimestamp, labels, annotations, deletionTimestamp, spec,
 * admission, requeueState, reclaimablePods, then per condition its status
 * and lastTransitionTime, then Evicted's reason */
#define N_PLAIN 9
#define N_INPUTS (N_PLAIN + 2 * N_CONDS + 1)

struct memo_entry {
    char *key; /* ns NUL name */
    size_t keylen;
    json_t *doc;          /* the document last fed (reference) */
    json_t *in[N_INPUTS]; /* its values (borrowed from doc), NULL where absent */
    bool admitted;
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
    json_t *last_in[N_INPUTS];
    bool last_complete; /* last_in holds the condition values too */
};

struct kq_memo *kq_memo_new(void) { return xcalloc(1, sizeof(struct kq_memo)); }

static void entry_clear_inputs(struct memo_entry *m)
{
    json_decref(m->doc);
    m->doc = NULL;
    memset(m->in, 0, sizeof(m->in));
}

static void entry_free(struct memo_entry *m)
{
    entry_clear_inputs(m);
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
static void plain_inputs(const json_t *obj, json_t *out[N_PLAIN])
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

/* The values read from the conditions (borrowed). */
static void cond_inputs(const json_t *obj, json_t *out[N_INPUTS - N_PLAIN])
{
    for (size_t i = 0; i < N_INPUTS - N_PLAIN; i++)
        out[i] = NULL;
    bool seen[N_CONDS] = {false};
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c) {
        const char *type = api_cond_type(c);
        for (size_t k = 0; type && k < N_CONDS; k++) {
            if (seen[k] || strcmp(type, MEMO_CONDS[k]))
                continue; /* api_cond_get takes the first of a type */
            seen[k] = true;
            out[2 * k] = json_object_get(c, "status");
            out[2 * k + 1] = json_object_get(c, "lastTransitionTime");
            if (k == EVICTED)
                out[N_INPUTS - N_PLAIN - 1] = json_object_get(c, "reason");
        }
    }
}

static void inputs_of(const json_t *obj, json_t *out[N_INPUTS])
{
    plain_inputs(obj, out);
    cond_inputs(obj, out + N_PLAIN);
}

bool kq_memo_same(struct kq_memo *memo, const json_t *obj, bool *admitted)
{
    memo->last_obj = NULL;
    struct memo_entry *m = find(memo, api_namespace(obj), api_name(obj));
    if (!m)
        return false;
    json_t **in = memo->last_in;
    memo->last_obj = obj;
    memo->last_complete = false;
    plain_inputs(obj, in); /* the cheap ones first */
    if (memcmp(in, m->in, N_PLAIN * sizeof(in[0])) != 0)
        return false;
    cond_inputs(obj, in + N_PLAIN);
    memo->last_complete = true;
    if (memcmp(in + N_PLAIN, m->in + N_PLAIN, (N_INPUTS - N_PLAIN) * sizeof(in[0])) != 0)
        return false;
    memo->last_obj = NULL;
    *admitted = m->admitted;
    return true;
}

void kq_memo_store(struct kq_memo *memo, const json_t *obj, bool admitted)
{
    struct memo_entry *m = find_or_add(memo, api_namespace(obj), api_name(obj));
    json_t *doc = json_incref((json_t *)obj); /* before letting the old one go */
    entry_clear_inputs(m);
    m->doc = doc;
    if (memo->last_obj == obj && memo->last_complete) {
        memcpy(m->in, memo->last_in, sizeof(m->in));
    } else if (memo->last_obj == obj) {
        memcpy(m->in, memo->last_in, N_PLAIN * sizeof(m->in[0]));
        cond_inputs(obj, m->in + N_PLAIN);
    } else {
        inputs_of(obj, m->in);
    }
    memo->last_obj = NULL;
    m->admitted = admitted;
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
