/*
 * kueue_sched: the scheduler reconciler's private pieces (scheduler.c,
 * kueue_queues.c). ctrl-internal.
 *
 * kq_queues keeps what ClusterQueue and LocalQueue status needs between
 * rounds: per-LocalQueue counts and flavor usage, maintained incrementally
 * from Workload events (each Workload's last contribution is remembered and
 * replaced), and the sets of queues whose status must be rewritten. The
 * ClusterQueue figures come from the engine (eng_cq_status).
 */
#ifndef CUEUE_CTRL_KUEUE_SCHED_H
#define CUEUE_CTRL_KUEUE_SCHED_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "ctrl/ctrl.h"
#include "engine/engine.h"

struct kq_queues;

/* A two-way link between two records of the same Workload kept by
 * different tables (the scheduler memo's entry and the queue controller's
 * contribution), so that one reaches the other without a lookup: each
 * embeds a kq_link; peer is the other's, or NULL. Either side cuts it
 * (kq_link_cut) before it is freed, so a peer is never a freed record. */
struct kq_link {
    struct kq_link *peer;
};

/* Join a and b (each cut from any previous peer first). */
static inline void kq_link_join(struct kq_link *a, struct kq_link *b)
{
    if (a->peer == b)
        return;
    if (a->peer)
        a->peer->peer = NULL;
    if (b->peer)
        b->peer->peer = NULL;
    a->peer = b;
    b->peer = a;
}

/* Cut l from its peer, if any (before l's record is freed). */
static inline void kq_link_cut(struct kq_link *l)
{
    if (l->peer)
        l->peer->peer = NULL;
    l->peer = NULL;
}

struct kq_queues *kq_queues_new(void);
void kq_queues_free(struct kq_queues *q);
/* A Workload was added/changed (deleted = false) or removed: update its
 * LocalQueue's figures and mark that LocalQueue and its ClusterQueue.
 * link: the caller's record of the same Workload (kq_memo_link), or NULL:
 * its peer, when it has one, is the Workload's contribution (no table
 * lookup); when it has none, it is joined to the contribution found or
 * made. */
void kq_queues_observe_workload(struct kq_queues *q, struct ctrl *c, const json_t *wl,
                                bool deleted, struct kq_link *link);
/* Mark a queue for a status rewrite. */
void kq_queues_mark_cq(struct kq_queues *q, const char *cq);
void kq_queues_mark_lq(struct kq_queues *q, const char *ns, const char *name);
/* A ClusterQueue or LocalQueue event that changed no spec (a status
 * write): mark the queue for a rewrite (the status is ours), unless obj is
 * the very document our last status write of it left (that write seen
 * back: nothing to rewrite). */
void kq_queues_observe_status(struct kq_queues *q, enum api_kind_id kind, const json_t *obj);
/* Rewrite the status of every marked ClusterQueue (from eng_cq_status;
 * its finalizer is dropped once a deleting ClusterQueue holds nothing) and
 * LocalQueue. Returns true when something was written. */
bool kq_queues_flush(struct kq_queues *q, struct ctrl *c, struct eng *e);

/* ---- scheduler.c ---- */

/* status.admission for the admission a (clusterQueue: a's, else cq):
 * {clusterQueue, podSetAssignments: [{name, flavors, resourceUsage
 * (quantities as kq_quantity_json writes them), count}]}. New reference.
 * Decoding it (api_workload_from_json) gives a back when a is
 * api_admission_is_canonical (test_ctrl_memo). */
json_t *kq_admission_json(const struct api_admission *a, const char *cq);

/* The scheduler's admission engine (borrowed), or NULL when c has no
 * scheduler. Loop thread only (kueue_metrics.c reads its figures). */
struct eng *kq_sched_engine(struct ctrl *c);

/* ---- kueue_memo.c: what the engine was last fed per Workload ---- */

struct kq_memo;

struct kq_memo *kq_memo_new(void);
void kq_memo_free(struct kq_memo *m);
/* What the memo reads of a Workload document that the scheduler needs
 * too, borrowed from the document: metadata.namespace and metadata.name
 * (NULL where absent, as api_namespace/api_name), metadata.annotations
 * and metadata.ownerReferences (NULL where absent) and whether
 * metadata.deletionTimestamp is set (api_is_deleting). */
struct kq_wl_meta {
    const char *ns, *name;
    const json_t *annotations;
    const json_t *owner_references;
    bool deleting;
};
/* obj's kq_wl_meta. The reading is kept for the memo call that follows at
 * once when it is a kq_memo_same, kq_memo_decode or kq_memo_store of the
 * same, unchanged obj (they do not read obj again). */
void kq_memo_meta(struct kq_memo *m, const json_t *obj, struct kq_wl_meta *out);
/* True when every JSON value of obj that api_workload_from_json and
 * kq_avoid_from_workload read outside the conditions is the very value
 * (same reference) of the last kq_memo_store / kq_memo_decode for obj's
 * namespace/name, and the conditions decode the same (the same ones hold,
 * with equal lastTransitionTime, and Evicted reason, where the decoding
 * reads them): decoding obj would give the same Workload, whose upsert
 * engine.h says is a no-op. *admitted then receives the decoded Admitted
 * flag of that store. */
bool kq_memo_same(struct kq_memo *m, const json_t *obj, bool *admitted);
/* After a kq_memo_same(m, obj) that returned false, the very next memo
 * call for obj: true when obj differs from the document last decoded only
 * in its conditions and its Finished condition holds. obj then decodes (it
 * cannot fail: every other value is one that decoded) to a finished
 * Workload, which the engine keeps nothing of (eng_upsert_workload is
 * eng_delete_workload then), so the caller need not decode it. */
bool kq_memo_finished(struct kq_memo *m, const json_t *obj);
/* Remember obj's values (references held) after feeding it to the engine. */
void kq_memo_store(struct kq_memo *m, const json_t *obj, bool admitted);
/* What obj decodes to (api_workload_from_json, with avoid_flavors from
 * kq_avoid_from_workload), to be fed to the engine; the memo then
 * remembers obj as kq_memo_store(obj, its Admitted flag) does. When the
 * last document decoded for obj's namespace/name has the very metadata and
 * spec values of obj, only the status is decoded again
 * (api_workload_status_from_json) and *status_only (when not NULL) is set
 * true: the result differs from the last one only in its status fields
 * (eng_upsert_workload_status may feed it). Borrowed: valid until the memo's next
 * call for that namespace/name. NULL when obj does not decode (the
 * Workload is then forgotten). */
const struct api_workload *kq_memo_decode(struct kq_memo *m, const json_t *obj,
                                          bool *status_only);
/* The Workload last decoded for obj's namespace/name (ns, name: obj's
 * metadata.namespace and metadata.name, which the caller knows; not read
 * again) (kq_memo_decode) when it was decoded from obj's very spec value,
 * else NULL: its spec fields (pod sets, queue, priority) are obj's.
 * Borrowed, as kq_memo_decode's. */
const struct api_workload *kq_memo_decoded_spec(struct kq_memo *m, const char *ns,
                                                const char *name, const json_t *obj);
/* Whether run_ms and end_ms, the expected run time and end the scheduler
 * is about to give the engine for the Workload ns/name
 * (eng_set_expected_runtime, and eng_set_expected_end when has_end),
 * differ from the ones this returned true for last: they are then
 * remembered. True when the memo has no entry for ns/name (nothing
 * is remembered then). The engine keeps both values across upserts of a
 * Workload and loses them only when it is deleted, which the memo is told
 * (kq_memo_forget, or a failed kq_memo_decode), so false means both calls
 * would leave the engine as it is. */
bool kq_memo_expected_changed(struct kq_memo *m, const char *ns, const char *name,
                              int64_t run_ms, bool has_end, int64_t end_ms);
/* Tell the memo that the Workload ns/name is being written with
 * status.admission adm (a reference is held), which decodes to *decoded
 * (taken: left empty; the caller vouches for it, e.g. the engine's
 * decision adm was built from, when api_admission_is_canonical). The
 * kq_memo_decode of a document of ns/name whose admission is the very
 * value adm, where the last one's was not, then takes *decoded instead of
 * decoding adm again. A later hint for ns/name replaces it; forgetting the
 * Workload drops it. */
void kq_memo_admission_hint(struct kq_memo *m, const char *ns, const char *name, json_t *adm,
                            struct api_admission *decoded);
/* The kq_link of ns/name's entry when it is the one the memo's last call
 * for a document found or added (the event's Workload, after the memo
 * calls for it: no lookup), else NULL. Valid until that entry is forgotten
 * (which cuts the link). */
struct kq_link *kq_memo_link(struct kq_memo *m, const char *ns, const char *name);
/* Forget a Workload (deleted, finished, or to be decoded again). */
void kq_memo_forget(struct kq_memo *m, const char *ns, const char *name);
/* The status.resourceRequests remembered for obj's spec (the same spec
 * value), as a new reference, or NULL. ns, name: obj's (as for
 * kq_memo_decoded_spec). */
json_t *kq_memo_requests(struct kq_memo *m, const char *ns, const char *name, const json_t *obj);
/* Remember rr (borrowed: the memo keeps a reference of its own) as the
 * status.resourceRequests of obj's spec. ns, name: obj's. */
void kq_memo_set_requests(struct kq_memo *m, const char *ns, const char *name, const json_t *obj,
                          json_t *rr);
/* kq_memo_requests, else compute(ctx, known) remembered as by
 * kq_memo_set_requests, with one lookup of ns/name: known is what
 * kq_memo_decoded_spec gives (NULL: obj's spec is to be decoded). compute
 * returns a new reference. Returns a new reference. */
json_t *kq_memo_requests_or(struct kq_memo *m, const char *ns, const char *name, const json_t *obj,
                            json_t *(*compute)(void *ctx, const struct api_workload *known),
                            void *ctx);

#endif
