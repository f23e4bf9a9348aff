/*
 * store-int: declarations shared by the store module's files only (the
 * index, the event log, the SQLite persistence and the mutations). Nothing
 * outside src/store includes this.
 *
 * Invariants (all under store.mu):
 *  - idx[k] holds every live object of kind k exactly once, ordered by
 *    (namespace, name) in its tree and by the same key in its hash table
 *    (lookups by key; the tree serves ordered lists); ns is "" for
 *    cluster-scoped kinds.
 *  - rv is the last resourceVersion handed out; the event log holds the
 *    events with resourceVersions (rv - log.n, rv], one per value, so the
 *    event with resourceVersion v sits at offset v - (rv - log.n + 1).
 *  - db is NULL for a memory-only store; otherwise every mutation applied
 *    in memory since the last successful flush is in db's dirty set.
 */
#ifndef CUEUE_STORE_STORE_INT_H
#define CUEUE_STORE_STORE_INT_H

#ifndef __unused
#define __unused __attribute__((unused)) /* used by libbsd tree.h */
#endif
#include <bsd/sys/tree.h>
#include <pthread.h>
#include <uthash.h>

#include "store/store.h"
#include "util/timefmt.h"

/* What a lookup reads is together at the end: a chain step reads the
 * hash handle's next pointer and hash value, a match the key right after
 * it, the caller the document between them. */
struct store_obj {
    RB_ENTRY(store_obj) link;
    char *ns;          /* into key; "" for cluster-scoped kinds */
    char *name;        /* into key */
    size_t keylen;
    UT_hash_handle hh; /* by key */
    json_t *doc;       /* owned reference to the immutable stored document */
    char key[];        /* ns, '\0', name, '\0' (keylen excludes the last NUL) */
};

RB_HEAD(store_tree, store_obj);

struct store_index {
    struct store_tree tree;
    struct store_obj *hash; /* uthash head */
    struct store_obj *last; /* the entry store__idx_find found last, or NULL */
    size_t n;
};

/* Ring of the last `cap` events; head is the oldest event's slot. While
 * alloc < cap the ring has not wrapped: head is 0 and items grows on
 * demand. Once alloc == cap the events are the n slots from head on
 * (modulo cap), n < cap after store_events_trim. */
struct store_log {
    struct store_event *items;
    size_t alloc; /* slots allocated */
    size_t cap;   /* slots kept at most (opts.history) */
    size_t head;
    size_t n;
};

struct store_db; /* persist.c */

/* What one mutation inside a durable write (store_txn_begin) replaced:
 * the key's previous document (a reference; NULL = the key was absent). */
struct store_undo {
    enum api_kind_id kind;
    char *ns;
    char *name;
    json_t *prev;
};

/* The open durable write, if any (txn.c). While open, its thread holds
 * store.mu from store_txn_begin to store_txn_commit/rollback. */
struct store_txn {
    bool open;
    uint64_t rv0; /* resourceVersion at begin */
    struct store_undo *undo;
    size_t n, cap;
};

struct store {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* broadcast on every event and on store_wakeup */
    uint64_t rv;
    uint64_t wakeups; /* store_wakeup calls so far */
    bool hold_wakeups; /* store_hold_wakeups: events appended without a broadcast */
    bool held_events;  /* an event was appended while held (broadcast owed) */
    struct clk *clock;
    struct rng *rng;
    struct rng own_rng;
    struct store_index idx[KIND__COUNT];
    struct store_log log;
    struct store_db *db;
    struct store_txn txn;
    /* the RFC 3339 text of stamp_ms (creationTimestamp), reused by the
     * creates of one instant (mutate.c stamp_new; mu held) */
    bool stamp_valid;
    int64_t stamp_ms;
    char stamp[TIMEFMT_LEN];
};

/* The store whose lock the calling thread holds for a durable write
 * (txn.c), else NULL. store__lock/store__unlock leave store.mu alone for
 * that thread, so its store calls inside the write work as usual. */
extern _Thread_local struct store *store__txn_owner;

static inline void store__lock(struct store *s)
{
    if (store__txn_owner != s)
        pthread_mutex_lock(&s->mu);
}

static inline void store__unlock(struct store *s)
{
    if (store__txn_owner != s)
        pthread_mutex_unlock(&s->mu);
}

/* Record, inside an open durable write (persistent or memory store: both
 * roll back), the state of a key a mutation is about to change (prev: its
 * current document, borrowed, a reference kept until the write ends;
 * NULL = absent). mu held. No-op outside a durable write. */
void store__undo_note(struct store *s, enum api_kind_id kind, const char *ns, const char *name,
                      const json_t *prev);

/* index (store.c) */
struct store_obj *store__idx_find(struct store *s, enum api_kind_id kind, const char *ns,
                                  const char *name);
/* Insert a new entry taking the doc reference; the key must be absent. */
struct store_obj *store__idx_insert(struct store *s, enum api_kind_id kind, const char *ns,
                                    const char *name, json_t *doc);
/* Remove and free an entry (drops its doc reference). */
void store__idx_remove(struct store *s, enum api_kind_id kind, struct store_obj *o);

/* Block on store.cv (mu held); see store_wait_seq. */
void store__wait_locked(struct store *s, uint64_t since_rv, uint64_t seen_wakeups,
                        int timeout_ms);

/* event log (events.c) */
void store__log_init(struct store_log *log, size_t cap);
void store__log_release(struct store_log *log);
/* Take the next resourceVersion and append its event (obj: new reference
 * taken by the log); wakes waiters. */
void store__log_append(struct store *s, enum store_event_type type, enum api_kind_id kind,
                       json_t *obj);
/* Drop the newest event and give its resourceVersion back (rolling back a
 * durable write nobody has seen). */
void store__log_pop(struct store *s);

/* persistence (persist.c). put/del record the key's new state for the
 * next flush (no-ops for a memory store); open and flush return 0 or
 * CU_EIO; close flushes and returns CU_EIO when changes were left
 * unsaved. discard forgets every unsaved change (a rolled-back durable
 * write, whose changes are the only ones unsaved). why copies the last
 * failure's message and returns false while writes fail. */
int store__db_open(struct store *s, const char *path, char *err, size_t errlen);
void store__db_put(struct store *s, enum api_kind_id kind, const char *ns, const char *name,
                   const json_t *doc);
void store__db_del(struct store *s, enum api_kind_id kind, const char *ns, const char *name);
int store__db_flush(struct store *s);
int store__db_close(struct store *s);
void store__db_discard(struct store *s);
bool store__db_writable(struct store *s, char *why, size_t whylen);

#endif
