/*
 * store: the object store. Every object cueue knows (Kueue kinds, Jobs,
 * Pods, Nodes, ...) lives here as an immutable JSON document keyed by
 * (kind, namespace, name), stamped with Kubernetes metadata (uid,
 * resourceVersion, generation, creationTimestamp), persisted to SQLite, and
 * announced on a single ordered event log that feeds both HTTP watches and
 * the control loop.
 *
 * Invariants:
 *  - Stored documents are never modified in place: an update stores a new
 *    document. Getters hand out new references (json_incref) to these
 *    immutable documents; callers must not modify them (json_deep_copy
 *    first) and must json_decref them.
 *  - resourceVersion is one global counter, strictly increasing across all
 *    kinds; every mutation takes the next value and appends one event.
 *  - All functions are thread-safe (one internal mutex); HTTP threads and
 *    the control-loop thread share one store.
 *  - Mutations become durable at store_flush(), which writes every object
 *    changed since the last flush (its latest state only) and the
 *    resourceVersion counter in one SQLite transaction (batched commits).
 *    Mutations themselves never fail on I/O. Callers that acknowledge a
 *    write to a user make it inside a durable write (store_txn_begin ..
 *    store_txn_commit): saved before anyone sees it, or undone.
 *  - The store decodes nothing and validates nothing: callers pass objects
 *    that the api layer already defaulted and validated.
 */
#ifndef CUEUE_STORE_STORE_H
#define CUEUE_STORE_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/kinds.h"
#include "util/clock.h"
#include "util/rng.h"

struct store;

struct store_opts {
    const char *db_path;    /* SQLite file; NULL = memory only (sim, tests) */
    struct clk *clock;      /* timestamps; borrowed, must outlive the store */
    struct rng *rng;        /* UIDs; borrowed; NULL = seed from the OS */
    size_t history;         /* events kept for watch resume; 0 = 100000 */
};

/* Open (creating if needed) the store and load every persisted object.
 * On failure returns CU_EIO and writes a message into err[0..errlen).
 * *out is freed with store_close. */
int store_open(const struct store_opts *opts, struct store **out, char *err, size_t errlen);
/* Flush, close the database and free everything. Returns 0, or CU_EIO
 * when the final flush failed and changes were lost (logged with their
 * count and the cause). NULL is a no-op. */
int store_close(struct store *s);

/* The stored object, as a new reference, or NULL when absent. ns is NULL or
 * "" for cluster-scoped kinds. */
json_t *store_get(struct store *s, enum api_kind_id kind, const char *ns, const char *name);
/* store_get, and whether an object exists, with the store as a void *ctx:
 * the lookups admission takes (api_admit_env's get and exists), shared by
 * the API server and the simulator. ctx is a struct store *. store_lookup
 * returns a new reference or NULL. */
json_t *store_lookup(void *ctx, enum api_kind_id kind, const char *ns, const char *name);
bool store_exists(void *ctx, enum api_kind_id kind, const char *ns, const char *name);

/* All objects of a kind, in (namespace, name) order, restricted to namespace
 * ns when ns is non-NULL and non-empty. Returns a new JSON array of
 * references; *rv_out (if non-NULL) receives the store's current
 * resourceVersion (the list's resourceVersion). */
json_t *store_list(struct store *s, enum api_kind_id kind, const char *ns, uint64_t *rv_out);
/* Number of objects of a kind (all namespaces). */
size_t store_count(struct store *s, enum api_kind_id kind);

enum store_update_mode {
    STORE_UPDATE_MAIN,   /* spec/metadata from obj; existing status kept (on a kind
                          * without a status subresource, api_kind.has_status
                          * false, status is an ordinary field: same as ALL) */
    STORE_UPDATE_STATUS, /* status from obj; everything else kept */
    STORE_UPDATE_ALL,    /* the whole object from obj (controllers) */
};

/* Create obj (borrowed; the store copies it). The store sets metadata.uid
 * (unless present), creationTimestamp, resourceVersion and generation 1,
 * and metadata.namespace from ns for namespaced kinds (ns NULL/"": the
 * object's own metadata.namespace; cluster-scoped kinds lose any
 * namespace); deletionTimestamp/deletionGracePeriodSeconds are dropped. A
 * `metadata.generateName` without a name gets a 5-character suffix (base cut
 * to 58 characters; a colliding name is regenerated up to 8 times, as
 * Kubernetes does). Returns 0 and the stored object in *out (new reference;
 * out may be NULL), CU_EEXIST or CU_EINVAL (not an object, no name nor
 * generateName, namespaced kind without a namespace). */
int store_create(struct store *s, enum api_kind_id kind, const char *ns, const json_t *obj,
                 json_t **out);

/* store_create that takes obj's reference and keeps its values instead of
 * deep-copying them (only its top-level and metadata maps are copied, and
 * not even those when the caller handed over their only references): the
 * caller must not modify obj, or anything reachable from it, after the call
 * (reading is fine). Same results as store_create. */
int store_create_take(struct store *s, enum api_kind_id kind, const char *ns, json_t *obj,
                      json_t **out);

/* Replace an object (see enum store_update_mode), found by obj's
 * metadata.name and ns (or obj's namespace when ns is NULL/""). If obj
 * carries metadata.resourceVersion (other than "" or "0") it must equal the
 * stored one, and a non-empty metadata.uid must equal the stored uid (both
 * Kubernetes update preconditions), else CU_ECONFLICT. deletionTimestamp,
 * deletionGracePeriodSeconds and generation are the server's: obj's values
 * are ignored.
 * generation is incremented when anything outside metadata and status
 * changes. An update that changes nothing stores nothing and emits no event
 * (returns 0 with the current object). uid and creationTimestamp are kept.
 * If the object has metadata.deletionTimestamp and the update leaves
 * metadata.finalizers empty, the object is deleted (DELETED event).
 * Returns 0, CU_ENOTFOUND, CU_ECONFLICT or CU_EINVAL (obj not an object or
 * without metadata.name). */
int store_update(struct store *s, enum api_kind_id kind, const char *ns, const json_t *obj,
                 enum store_update_mode mode, json_t **out);

/* store_update that takes obj's reference instead of copying what it
 * stores: the status (STATUS), or everything but the status (MAIN), or the
 * whole object (ALL) becomes part of the stored document as it is. The
 * caller must therefore not modify obj, or anything reachable from it,
 * after the call, even through a reference it kept (reading is fine). obj
 * itself and its metadata map are used in place only when the caller held
 * their only reference, else they are copied (shallowly); for STATUS, only
 * when obj is otherwise the stored document's (a store_get_status_copy, or
 * a store_status_copy whose metadata the caller left alone); a metadata
 * map obj shares with the stored document is then replaced in obj by the
 * new version's. Same results as store_update. For controllers that build
 * a fresh document per write (store_get_status_copy, then
 * STORE_UPDATE_STATUS): no second copy. */
int store_update_take(struct store *s, enum api_kind_id kind, const char *ns, json_t *obj,
                      enum store_update_mode mode, json_t **out);

/* A status write (store_update_take, STORE_UPDATE_STATUS) for a caller
 * that goes on reading its document afterwards: *doc (the caller's
 * reference, typically its only one, to a store_status_copy) is taken and,
 * on success, replaced by a new reference to the resulting stored
 * document, which is *doc itself when the store could keep it as it is
 * (then without any copy; its metadata, a new map when it was the stored
 * one's, now carries the new resourceVersion). On failure *doc is left as it was, unchanged and
 * still the caller's. The caller must not modify a document it got back
 * on success (reading is fine) and decrefs *doc after. Same results as
 * store_update. */
int store_update_status_take(struct store *s, enum api_kind_id kind, const char *ns,
                             json_t **doc);

/* The stored object prepared for a status write, without copying what the
 * write leaves alone: a new top-level object whose "status" is a copy the
 * caller may modify and whose other members, "metadata" included, are the
 * stored document's own (immutable: never modify them; the store makes
 * the new version's metadata map, with its resourceVersion, when the
 * status write is stored). In the status, "conditions" is a new array
 * whose condition objects are shared (change them only through
 * api_cond_set and api_cond_remove, which copy a shared condition first);
 * the members named in shared (NULL-terminated; NULL = none) are shared as
 * well, for a caller that only replaces or removes them; every other
 * status member is a deep copy. NULL when absent. Caller decrefs, or hands
 * it to store_update_take(..., STORE_UPDATE_STATUS, ...) or
 * store_update_status_take. */
json_t *store_get_status_copy(struct store *s, enum api_kind_id kind, const char *ns,
                              const char *name, const char *const *shared);
/* The same copy of a stored document the caller already holds (doc is
 * borrowed), except that its "metadata" is a new map sharing its values
 * with doc's (the caller may set or remove its keys, not change the values
 * in place). New reference. */
json_t *store_status_copy(const json_t *doc, const char *const *shared);

/* Delete. If the object has finalizers it is only marked
 * (metadata.deletionTimestamp = now, deletionGracePeriodSeconds = 0,
 * generation + 1, MODIFIED event; deleting an already marked object changes
 * nothing) and removed once an update clears the finalizers. Otherwise it
 * is removed now; the DELETED event and *out carry its last state with the
 * deletion's resourceVersion. uid_precondition (NULL = none) must match
 * metadata.uid, else CU_ECONFLICT. Returns 0 and the last state in *out
 * (new reference, may be NULL), CU_ENOTFOUND or CU_ECONFLICT. */
int store_delete(struct store *s, enum api_kind_id kind, const char *ns, const char *name,
                 const char *uid_precondition, json_t **out);

/* Write every object changed since the last successful flush and the
 * resourceVersion counter to SQLite in one transaction (no-op for a memory
 * store or when nothing changed). Returns 0 or CU_EIO (logged; the
 * transaction is rolled back and the next flush writes the same changes
 * again, so memory stays ahead of disk until one succeeds). */
int store_flush(struct store *s);

/* Whether the store can write: false from a failed flush until the next
 * successful one (every flush retries while writes fail, even with nothing
 * to save, so a flush is also the probe). why (may be NULL) receives the
 * failure's message ("database PATH: COMMIT: database or disk is full"),
 * or "" when writable. A memory store is always writable. */
bool store_writable(struct store *s, char *why, size_t whylen);

/* Durable writes, for changes acknowledged to a user (Kubernetes answers
 * only once etcd has the change). store_txn_begin takes the store's lock
 * for the calling thread until store_txn_commit or store_txn_rollback:
 * other threads' store calls wait, this thread's work as usual (it must
 * not block inside: waits return at once, and it must not wait for a
 * thread that uses the store). It first saves the changes others left
 * unsaved (the control loop's); if that fails it returns CU_EIO, writes
 * the cause into why[0..whylen) (may be NULL) and no write is open.
 * store_txn_commit saves the write's mutations in one SQLite transaction
 * and returns 0; if that fails it undoes them all in memory (objects,
 * events, resourceVersions: as if they never happened; nobody saw them),
 * returns CU_EIO with the cause in why, and the store keeps retrying the
 * save at later flushes (store_writable false until one succeeds).
 * store_txn_rollback undoes the write's mutations and ends it (a request
 * that failed half-way). Durable writes do not nest: a second
 * store_txn_begin on the same thread, before commit or rollback, waits
 * for its own lock for ever. */
int store_txn_begin(struct store *s, char *why, size_t whylen);
int store_txn_commit(struct store *s, char *why, size_t whylen);
void store_txn_rollback(struct store *s);

/* The current (latest) resourceVersion. */
uint64_t store_rv(struct store *s);

enum store_event_type { STORE_ADDED, STORE_MODIFIED, STORE_DELETED };

struct store_event {
    enum store_event_type type;
    enum api_kind_id kind;
    uint64_t rv;
    json_t *obj; /* the object after the change (last state for DELETED); a reference */
};

struct store_events {
    struct store_event *items; /* owned */
    size_t n, cap;
};

/* Append to *out every event with rv > since_rv, oldest first, optionally
 * only those of one kind (kind < 0 = all kinds) and namespace (NULL/"" =
 * all). Waits up to timeout_ms (0 = do not wait, <0 = forever) for at least
 * one event of the whole log past since_rv (so callers can notice progress
 * even when their filter matches nothing). Returns the number appended, or
 * CU_EGONE when since_rv is older than the retained history (the caller
 * must re-list). */
int store_events_since(struct store *s, uint64_t since_rv, int kind, const char *ns,
                       int timeout_ms, struct store_events *out);
/* Drop the retained events with rv <= upto_rv from the history (their
 * object references go). For a caller that knows every reader of the log
 * has consumed them (`cueue sim`: the control loop and the recorder are
 * the only readers), so that old object versions do not stay alive for
 * nothing; a later store_events_since from before upto_rv gets CU_EGONE.
 * Events after upto_rv, resourceVersions and the history limit are
 * unchanged. */
void store_events_trim(struct store *s, uint64_t upto_rv);
/* Release the references and storage of an event batch (reusable after). */
void store_events_release(struct store_events *ev);

/* Block until the store's resourceVersion passes since_rv, store_wakeup is
 * called, or timeout_ms passes (<0 = forever). Returns the current rv. */
uint64_t store_wait(struct store *s, uint64_t since_rv, int timeout_ms);

/* Wake every thread blocked in store_events_since or store_wait (shutdown,
 * or an executor report the control loop must see). Only threads already
 * blocked wake; use store_wakeup_seq/store_wait_seq to close the window
 * between checking for work and blocking. */
void store_wakeup(struct store *s);

/* Hold (hold true) or release (false) the wake-ups of blocked readers:
 * while held, mutations append their events without waking the threads
 * blocked in store_events_since or store_wait; releasing wakes them once
 * when anything was appended meanwhile. The control loop holds them
 * during each of its rounds, so that its burst of writes wakes each watch
 * stream once instead of once per write (every write still becomes visible
 * to a reader that looks). Not nested; store_wakeup is never held. */
void store_hold_wakeups(struct store *s, bool hold);

/* The number of store_wakeup calls so far (read it before checking for
 * work, then pass it to store_wait_seq). */
uint64_t store_wakeup_seq(struct store *s);
/* store_wait that also returns at once when store_wakeup has been called
 * since store_wakeup_seq returned seen_wakeups (no lost wakeups). Returns
 * the current rv. */
uint64_t store_wait_seq(struct store *s, uint64_t since_rv, uint64_t seen_wakeups,
                        int timeout_ms);

#endif
