/*
 * store: lifecycle, the per-kind ordered index, reads (get/list/count) and
 * blocking waits. Mutations are in mutate.c, the event log in events.c and
 * SQLite in persist.c.
 *
 * Invariants: every function takes store.mu for its whole duration (except
 * while blocked on store.cv); documents handed out are new references to
 * immutable JSON, so callers may keep them after the lock is dropped.
 */
#include "store/store-int.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <time.h>

#include "util/err.h"
#include "util/hash.h"
#include "util/xalloc.h"

/* uthash doubles a table's buckets when an insert meets a chain of
 * HASH_BKT_CAPACITY_THRESH entries (default 10, a load near 3 entries per
 * bucket). Lookups here are the store's hottest path (every get, update and
 * delete) and each chain step is a cache miss into another entry, so the
 * index keeps its tables sparser: a quarter to half an entry per bucket (16 bytes
 * per bucket). The macro is read where HASH_ADD expands, below. */
#undef HASH_BKT_CAPACITY_THRESH
#define HASH_BKT_CAPACITY_THRESH 5U

static int obj_cmp(struct store_obj *a, struct store_obj *b)
{
    int c = strcmp(a->ns, b->ns);
    return c ? c : strcmp(a->name, b->name);
}

RB_GENERATE_STATIC(store_tree, store_obj, link, obj_cmp)

static const char *ns_key(enum api_kind_id kind, const char *ns)
{
    if (!api_kind_get(kind)->namespaced || !ns)
        return "";
    return ns;
}

/* A key as looked up: (ns, name) where they already are, not copied into
 * an entry's contiguous form. HASH_FIND_BYHASHVALUE hands it to
 * HASH_KEYCMP (below) as its keyptr, with the contiguous key's length. */
struct split_key {
    const char *ns;
    size_t nl;
    const char *name;
};

/* Whether an entry's contiguous key (ns, NUL, name) is k; n, the lengths'
 * sum plus one, is already known equal. */
static int split_key_cmp(const char *stored, const struct split_key *k, size_t n)
{
    return memcmp(stored, k->ns, k->nl) || stored[k->nl] ||
           memcmp(stored + k->nl + 1, k->name, n - k->nl - 1);
}

#undef HASH_KEYCMP
#define HASH_KEYCMP(a, b, n) split_key_cmp((const char *)(a), (const struct split_key *)(b), (n))

/* The bucket hash of (ns, name) with nl = strlen(ns), ml = strlen(name):
 * the same whether the key is contiguous (an entry's) or split (a lookup's). */
static unsigned key_hash(const char *ns, size_t nl, const char *name, size_t ml)
{
    uint64_t h = cu_hash_mem(CU_HASH_SEED ^ nl, ns, nl);
    /* the final avalanche spreads keys differing only in a few bytes
     * (queue-0001, queue-0002) over the low bits */
    return (unsigned)cu_hash_final(cu_hash_mem(h * CU_HASH_MUL, name, ml));
}

/* Lookups come in pairs: a controller reads an object (store_get,
 * store_get_status_copy), then writes it back, so the entry found last is
 * compared first (its key is in the entry, a cache line the lookup reads
 * anyway) before the key is hashed and its bucket read. */
struct store_obj *store__idx_find(struct store *s, enum api_kind_id kind, const char *ns,
                                  const char *name)
{
    struct store_index *ix = &s->idx[kind];
    const char *nsk = ns_key(kind, ns);
    struct store_obj *o = ix->last;
    struct split_key k = {nsk, strlen(nsk), name};
    /* compared in the key (o->name is o->key + k.nl + 1 when the
     * namespaces are equal): no load of the ns and name pointers */
    if (o && !strcmp(o->key, nsk) && !strcmp(o->key + k.nl + 1, name))
        return o;
    size_t ml = strlen(name);
    HASH_FIND_BYHASHVALUE(hh, ix->hash, &k, k.nl + 1 + ml, key_hash(k.ns, k.nl, name, ml), o);
    if (o)
        ix->last = o;
    return o;
}

struct store_obj *store__idx_insert(struct store *s, enum api_kind_id kind, const char *ns,
                                    const char *name, json_t *doc)
{
    const char *nsk = ns_key(kind, ns);
    size_t nl = strlen(nsk), ml = strlen(name);
    struct store_obj *o = xcalloc(1, sizeof(*o) + nl + ml + 2);
    memcpy(o->key, nsk, nl + 1);
    memcpy(o->key + nl + 1, name, ml + 1);
    o->keylen = nl + 1 + ml;
    o->ns = o->key;
    o->name = o->key + nl + 1;
    o->doc = doc;
    RB_INSERT(store_tree, &s->idx[kind].tree, o);
    HASH_ADD_KEYPTR_BYHASHVALUE(hh, s->idx[kind].hash, o->key, o->keylen,
                                key_hash(nsk, nl, name, ml), o);
    s->idx[kind].n++;
    return o;
}

static void obj_free(struct store_obj *o)
{
    json_decref(o->doc);
    xfree(o);
}

void store__idx_remove(struct store *s, enum api_kind_id kind, struct store_obj *o)
{
    RB_REMOVE(store_tree, &s->idx[kind].tree, o);
    HASH_DELETE(hh, s->idx[kind].hash, o);
    if (s->idx[kind].last == o)
        s->idx[kind].last = NULL;
    s->idx[kind].n--;
    obj_free(o);
}

static bool kind_ok(int kind) { return kind >= 0 && kind < KIND__COUNT; }

static void store_free(struct store *s)
{
    for (int k = 0; k < KIND__COUNT; k++) {
        struct store_obj *o, *next;
        HASH_CLEAR(hh, s->idx[k].hash);
        RB_FOREACH_SAFE(o, store_tree, &s->idx[k].tree, next) {
            RB_REMOVE(store_tree, &s->idx[k].tree, o);
            obj_free(o);
        }
    }
    store__log_release(&s->log);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    xfree(s);
}

int store_open(const struct store_opts *opts, struct store **out, char *err, size_t errlen)
{
    *out = NULL;
    if (err && errlen)
        err[0] = '\0';
    struct store *s = xcalloc(1, sizeof(*s));
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
    s->clock = opts->clock ? opts->clock : clk_real();
    if (opts->rng) {
        s->rng = opts->rng;
    } else {
        rng_seed_os(&s->own_rng);
        s->rng = &s->own_rng;
    }
    for (int k = 0; k < KIND__COUNT; k++)
        RB_INIT(&s->idx[k].tree);
    size_t history = opts->history ? opts->history : 100000;
    if (history > INT_MAX) /* store_events_since counts in an int */
        history = INT_MAX;
    store__log_init(&s->log, history);
    if (opts->db_path) {
        int rc = store__db_open(s, opts->db_path, err, errlen);
        if (rc < 0) {
            store_free(s);
            return rc;
        }
    }
    *out = s;
    return 0;
}

int store_close(struct store *s)
{
    if (!s)
        return 0;
    store__lock(s);
    int rc = store__db_close(s); /* flushes */
    store__unlock(s);
    store_free(s);
    return rc;
}

json_t *store_get(struct store *s, enum api_kind_id kind, const char *ns, const char *name)
{
    if (!kind_ok((int)kind) || !name)
        return NULL;
    store__lock(s);
    struct store_obj *o = store__idx_find(s, kind, ns, name);
    json_t *doc = o ? json_incref(o->doc) : NULL;
    store__unlock(s);
    return doc;
}

json_t *store_lookup(void *ctx, enum api_kind_id kind, const char *ns, const char *name)
{
    return store_get(ctx, kind, ns, name);
}

bool store_exists(void *ctx, enum api_kind_id kind, const char *ns, const char *name)
{
    json_t *o = store_get(ctx, kind, ns, name);
    json_decref(o);
    return o != NULL;
}

json_t *store_list(struct store *s, enum api_kind_id kind, const char *ns, uint64_t *rv_out)
{
    json_t *arr = json_array();
    store__lock(s);
    if (rv_out)
        *rv_out = s->rv;
    if (!kind_ok((int)kind)) {
        store__unlock(s);
        return arr;
    }
    struct store_tree *t = &s->idx[kind].tree;
    const char *want = ns_key(kind, ns);
    struct store_obj *o;
    if (want[0]) {
        /* the first entry of the namespace, then walk while it matches */
        struct store_obj key = {.ns = (char *)want, .name = (char *)""};
        for (o = RB_NFIND(store_tree, t, &key); o && strcmp(o->ns, want) == 0;
             o = RB_NEXT(store_tree, t, o))
            json_array_append(arr, o->doc);
    } else {
        RB_FOREACH(o, store_tree, t)
            json_array_append(arr, o->doc);
    }
    store__unlock(s);
    return arr;
}

size_t store_count(struct store *s, enum api_kind_id kind)
{
    if (!kind_ok((int)kind))
        return 0;
    store__lock(s);
    size_t n = s->idx[kind].n;
    store__unlock(s);
    return n;
}

uint64_t store_rv(struct store *s)
{
    store__lock(s);
    uint64_t rv = s->rv;
    store__unlock(s);
    return rv;
}

int store_flush(struct store *s)
{
    store__lock(s);
    int rc = store__db_flush(s);
    store__unlock(s);
    return rc;
}

bool store_writable(struct store *s, char *why, size_t whylen)
{
    store__lock(s);
    bool ok = store__db_writable(s, why, whylen);
    store__unlock(s);
    return ok;
}

/* Wait on s->cv (mu held) until rv passes since_rv, the wakeup counter
 * differs from seen_wakeups, or timeout_ms passes (<0 = forever, 0 = no
 * wait). The deadline is on CLOCK_MONOTONIC: this is a real blocking wait,
 * not simulated time. */
void store__wait_locked(struct store *s, uint64_t since_rv, uint64_t seen_wakeups,
                        int timeout_ms)
{
    if (timeout_ms == 0 || store__txn_owner == s)
        return; /* a durable write never lets go of the lock midway */
    struct timespec deadline;
    if (timeout_ms > 0) {
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += timeout_ms / 1000;
        deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
    }
    while (s->rv <= since_rv && s->wakeups == seen_wakeups) {
        if (timeout_ms < 0) {
            pthread_cond_wait(&s->cv, &s->mu);
        } else if (pthread_cond_timedwait(&s->cv, &s->mu, &deadline) == ETIMEDOUT) {
            break;
        }
    }
}

uint64_t store_wakeup_seq(struct store *s)
{
    store__lock(s);
    uint64_t n = s->wakeups;
    store__unlock(s);
    return n;
}

uint64_t store_wait_seq(struct store *s, uint64_t since_rv, uint64_t seen_wakeups,
                        int timeout_ms)
{
    store__lock(s);
    store__wait_locked(s, since_rv, seen_wakeups, timeout_ms);
    uint64_t rv = s->rv;
    store__unlock(s);
    return rv;
}

uint64_t store_wait(struct store *s, uint64_t since_rv, int timeout_ms)
{
    store__lock(s);
    store__wait_locked(s, since_rv, s->wakeups, timeout_ms);
    uint64_t rv = s->rv;
    store__unlock(s);
    return rv;
}

void store_hold_wakeups(struct store *s, bool hold)
{
    store__lock(s);
    s->hold_wakeups = hold;
    if (!hold && s->held_events) {
        s->held_events = false;
        pthread_cond_broadcast(&s->cv);
    }
    store__unlock(s);
}

void store_wakeup(struct store *s)
{
    store__lock(s);
    s->wakeups++;
    pthread_cond_broadcast(&s->cv);
    store__unlock(s);
}
