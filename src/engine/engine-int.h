/*
 * engine-int: the admission engine's private model, shared by the files of
 * src/engine/ (cross-file internals use the eng__ prefix).
 *
 * Representation (compact on purpose: a million pending workloads must fit
 * in well under 1 GiB):
 *  - resource names, ResourceFlavors and (flavor, resource) pairs ("FR")
 *    are interned to small integer ids; quotas and usage are int64 arrays;
 *  - every ClusterQueue and Cohort is an eng__node in the cohort forest;
 *    a node keeps the FRs it knows sorted by id, with the index of the same
 *    FR in its parent (pidx) so walking up never searches;
 *  - pod sets intern their placement constraints (nodeSelector, required
 *    affinity, tolerations) into shared eng__shape records that cache the
 *    per-flavor match verdict.
 *
 * Invariants:
 *  - node usage == Kueue's Usage: a ClusterQueue's usage is the sum of its
 *    quota-holding workloads' usage (plus, during a cycle only, preemptor and
 *    capacity reservations recorded in the undo log); a Cohort's usage is
 *    the sum over children of max(0, child.usage - child.localQuota);
 *  - nothing that decides iterates a hash table: ClusterQueues are visited
 *    through e->cq_sorted (by name), cohort children are sorted by name, and
 *    every ordering ends in a unique key.
 */
#ifndef CUEUE_ENGINE_ENGINE_INT_H
#define CUEUE_ENGINE_ENGINE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Every engine hash table uses cueue's word-at-a-time bucket hash
 * (util/hash.h) instead of uthash's byte-wise default; only the bucket a
 * key lands in depends on it (uthash iterates in insertion order), so
 * nothing the engine decides or emits does. */
#include "util/hash.h"
#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = cu_hash_bytes((keyptr), (size_t)(keylen)))
/* uthash's allocations go through the engine's wrapper (engine.c, with a
 * test hook that fails chosen allocations), and an allocation it cannot
 * make is not fatal: uthash's default calls exit(). Non-fatal mode leaves
 * the entry out of the table (its hh.tbl NULL); ENG__HASH_ADD below turns
 * that into "added or not", and each caller handles "not". */
#define HASH_NONFATAL_OOM 1
#define uthash_malloc(sz) eng__hash_malloc(sz)
#define uthash_free(ptr, sz) eng__hash_free(ptr)
void *eng__hash_malloc(size_t n);
void eng__hash_free(void *p);
#include <uthash.h>
/* Sparser tables than uthash's default (a table doubles its buckets when a
 * chain reaches 10 entries: 1.5 to 3 entries a bucket): the engine's
 * workload table is large and cold, and each entry a chain walk passes is
 * a cache miss. Doubling at chains of 6 keeps about 0.4 to 0.8 entries a
 * bucket. Only bucket counts change: iteration (insertion order) does not. */
#undef HASH_BKT_CAPACITY_THRESH
#define HASH_BKT_CAPACITY_THRESH 6U

#include "engine/engine.h"

/* Add add to the table head by the key at keyptr (keylen bytes), as
 * HASH_ADD_KEYPTR; ok becomes whether it is in. A table that exists always
 * takes it: when growing its buckets fails, it goes in without growing
 * (longer chains, same iteration order), so only the first entry of an
 * empty table (the table's own allocation) can fail. */
#define ENG__HASH_ADD(head, keyptr, keylen, add, ok)                                      \
    do {                                                                                   \
        HASH_ADD_KEYPTR(hh, head, keyptr, keylen, add);                                    \
        if (!(add)->hh.tbl && (head)) {                                                    \
            unsigned noexpand_ = (head)->hh.tbl->noexpand;                                 \
            (head)->hh.tbl->noexpand = 1;                                                  \
            HASH_ADD_KEYPTR(hh, head, keyptr, keylen, add);                                \
            (head)->hh.tbl->noexpand = noexpand_;                                          \
        }                                                                                  \
        (ok) = (add)->hh.tbl != NULL;                                                      \
    } while (0)

/* Test hook (tests/unit/test_engine_oom.c): the n-th uthash allocation
 * from now fails (n >= 1; 0: none fails); returns how many uthash
 * allocations the engine made so far, in all engines of the process. */
unsigned long eng__hash_alloc_fail_at(unsigned long n);

#define ENG__UNLIMITED INT64_MAX

/* ---- saturating amounts (Kueue pkg/resources/amount.go semantics) ---- */

/* a + b; Unlimited stays Unlimited; overflow saturates. (Inline: the
 * quota walks and the preemption search call these in their inner loops.) */
static inline int64_t eng__amt_add(int64_t a, int64_t b)
{
    if (a == ENG__UNLIMITED || b == ENG__UNLIMITED)
        return ENG__UNLIMITED;
    int64_t r;
    if (__builtin_add_overflow(a, b, &r))
        return a > 0 ? ENG__UNLIMITED : INT64_MIN;
    return r;
}

/* a - b; Unlimited - bounded = Unlimited; bounded - Unlimited = INT64_MIN. */
static inline int64_t eng__amt_sub(int64_t a, int64_t b)
{
    if (a == ENG__UNLIMITED)
        return ENG__UNLIMITED;
    if (b == ENG__UNLIMITED)
        return INT64_MIN;
    int64_t r;
    if (__builtin_sub_overflow(a, b, &r))
        return a > 0 ? ENG__UNLIMITED : INT64_MIN;
    return r;
}
/* a * n (n >= 0), saturating. */
int64_t eng__amt_mul(int64_t a, int64_t n);

/* The buffer's string (caller frees); the buffer is released. */
struct sbuf;
char *eng__sbuf_take(struct sbuf *sb);
/* "ns/name" (the key of namespaced objects) into buf when it fits in cap
 * bytes, else into a new allocation: the caller frees the result when it
 * is not buf. *len gets its length. For lookups without an allocation. */
char *eng__key_join(char *buf, size_t cap, const char *ns, const char *name, size_t *len);

/* ---- interned strings (shared, refcounted): namespaces, queue names,
 * pending reasons and messages repeated across many workloads ---- */
struct eng__istr {
    UT_hash_handle hh;
    int refs;
    char s[];
};
/* The interned copy of s (a reference the caller must put back). */
const char *eng__istr_get(struct eng *e, const char *s);
/* One more reference to s, itself interned (no lookup); returns s. */
const char *eng__istr_ref(const char *s);
/* Drop a reference; NULL is a no-op. */
void eng__istr_put(struct eng *e, const char *s);

/* ---- small growable string vector ---- */
struct eng__strv {
    char **v;
    size_t n, cap;
};
/* Append str (taken: freed with the vector). */
void eng__strv_push(struct eng__strv *s, char *str); /* takes str */
void eng__strv_pushf(struct eng__strv *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Sort (strcmp) and drop duplicates, freeing them. */
void eng__strv_sort_unique(struct eng__strv *s);
/* Free every string and the array; the vector is empty again. */
void eng__strv_clear(struct eng__strv *s);
/* Append copies of src's strings to dst. */
void eng__strv_copy(struct eng__strv *dst, const struct eng__strv *src);
/* Join the strings with sep into a new string (caller frees). */
char *eng__strv_join(const struct eng__strv *s, const char *sep);

/* ---- interning ---- */
struct eng__name {
    char *name;
    int id;
    UT_hash_handle hh;
};

struct eng__flavor {
    char *name;
    bool exists; /* a ResourceFlavor object with this name exists */
    struct api_labels labels;
    struct api_taint *taints;
    size_t n_taints;
    struct api_toleration *tols;
    size_t n_tols;
    uint64_t gen; /* bumped on every change (shape match caches) */
    char *topology; /* spec.topologyName (Kueue TAS) or NULL */
};

struct eng__fr_key {
    int64_t key; /* flavor id << 32 | resource id */
    int id;
    UT_hash_handle hh;
};

/* ---- quota tree ---- */
struct eng__quota {
    int64_t nominal;
    int64_t borrowing_limit;
    int64_t lending_limit;
    bool has_bl, has_ll;
};

struct eng__node {
    char *name;
    bool is_cq;
    bool in_cycle;             /* part of a Cohort parent cycle: unusable */
    struct eng__node *parent;  /* NULL = root */
    int n_fr;
    int *fr;                   /* global FR ids, ascending */
    int *pidx;                 /* index of fr[i] in parent, -1 if none */
    struct eng__quota *q;      /* own quota per FR (zero when undefined) */
    int64_t *subtree;          /* SubtreeQuota */
    int64_t *usage;            /* Usage */
    struct eng__node **kids;   /* Cohorts: children sorted by name */
    size_t n_kids, cap_kids;
    int height;                /* distance to the deepest leaf */
    int64_t fair_weight_milli;
};

/* Index of global FR id in node, or -1 (binary search; inline for the
 * quota walks). */
static inline int eng__node_idx(const struct eng__node *n, int fr)
{
    int lo = 0, hi = n->n_fr - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (n->fr[mid] == fr)
            return mid;
        if (n->fr[mid] < fr)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* ---- objects ---- */
struct eng__rg {
    int n_cov;
    int *res;      /* covered resource ids, in spec order */
    int n_flv;
    int *flv;      /* flavor ids in preference order */
    struct eng__quota *quota; /* [f * n_cov + r] */
};

struct eng__cohort {
    UT_hash_handle hh;
    struct eng__node node;
    bool has_object;       /* a Cohort object exists (else implicit) */
    char *parent_name;     /* "" = root */
    struct eng__rg *rgs;
    int n_rgs;
};

struct eng__wl;

/* A queued workload's queue-order key (priority, queue-order timestamp,
 * creation time; ties go to the workload's key and uid) and equivalence
 * hash, copied from the workload, which does not change them while it is
 * queued (a status change takes it out and puts it back). */
struct eng__qkey {
    int64_t qo_ts_ms;
    int64_t creation_ms;
    uint64_t hash;
    int32_t priority;
};

/* A parked workload with what the retry-inadmissible walk reads (copies:
 * fixed while parked). */
struct eng__parked {
    struct eng__wl *wl;       /* NULL: a hole left by a removal */
    const char *ns;           /* interned */
    int64_t requeue_at_ms;
    struct eng__qkey k;
    bool requeued_false;
    bool time_parked;         /* wl->time_parked */
};

enum eng__stop { ENG__STOP_NONE, ENG__STOP_HOLD, ENG__STOP_DRAIN };

struct eng__cq {
    struct eng__node node;     /* node.name: the allocation's tail */
    char *cohort_name;         /* "" = none */
    struct eng__rg *rgs;
    int n_rgs;
    bool covers_pods;
    int pods_res;              /* resource id of "pods" */
    enum api_queueing_strategy strategy;
    bool has_ns_selector;
    struct api_label_selector ns_selector;
    enum api_fungibility when_borrow, when_preempt;
    enum api_fung_preference preference;
    enum api_preempt_policy within_cq, reclaim, borrow_within;
    bool has_threshold;
    int32_t threshold;
    enum api_stop_policy stop_policy;
    char **check_names;        /* admission checks */
    int **check_flv;           /* their onFlavors (flavor ids; none = all) */
    size_t *n_check_flv;
    size_t n_checks;
    char *ext_inactive_msg;    /* from the caller (admission checks) */
    /* derived */
    bool active;
    char *inactive_reason;
    char *inactive_msg;
    uint64_t alloc_gen;        /* AllocatableResourceGeneration */
    /* queue: the heap as two parallel arrays, heap[i] and its order key
     * hkey[i] (cap_heap for both), so ordering and equivalence scans read
     * no workload; the parked workloads in park, in parking order (with
     * holes, wl == NULL, left by removals; n_park slots used, the last one
     * never a hole); n_inadm counts the workloads */
    struct eng__wl **heap;
    struct eng__qkey *hkey;
    size_t n_heap, cap_heap;
    bool heap_pos_stale;       /* a bulk rebuild moved entries without
                                * writing their pos (heap_find refreshes) */
    struct eng__parked *park;
    size_t n_park, cap_park;
    size_t n_inadm;
    struct eng__wl *sticky;    /* BestEffortFIFO preemptor kept at the head */
    struct eng__wl *preemptor; /* workload that issued preemptions */
    uint64_t *bulk_hash;       /* equivalence hashes bulk-moved */
    char **bulk_reason;
    size_t n_bulk, cap_bulk;
    bool requeue_pending;      /* retry inadmissible at the next schedule
                                * (set with eng__cq_mark_requeue) */
    uint32_t sorted_idx;       /* its index in e->cq_sorted */
    /* quota holders */
    struct eng__wl *holders;   /* utlist DL list (hprev/hnext) */
    int32_t n_reserving, n_admitted;
    /* classical preemption's tag for the search in progress (preempt.c):
     * valid when pstamp equals the search's stamp */
    uint64_t pstamp;
    struct eng__node *plca;
    unsigned plist;
    /* last member: the name (the key) follows hashv, as in eng__wl */
    UT_hash_handle hh;
};

struct eng__lq {
    UT_hash_handle hh;
    char *key; /* "ns/name" */
    char *ns, *name, *cq_name;
    enum api_stop_policy stop_policy;
};

struct eng__ns {
    UT_hash_handle hh;
    char *name;
    struct api_labels labels;
};

/* Interned placement constraints of a pod set. */
struct eng__shape {
    UT_hash_handle hh;
    char *key;
    int refs;
    struct api_labels node_selector;
    struct api_node_term *terms;
    size_t n_terms;
    struct api_toleration *tols;
    size_t n_tols;
    /* match cache per flavor id: gen+1 of the flavor when computed */
    uint64_t *cache_gen;
    char **cache_msg;   /* NULL = matches; else Kueue's reason */
    size_t n_cache;
};

struct eng__ps {
    char *name;
    int32_t count;
    int32_t min_count;   /* 0 = unset */
    int32_t reclaim;     /* status.reclaimablePods */
    int n_req;
    int *res;            /* resource ids, by resource name; in per_pod's allocation */
    int64_t *per_pod;
    struct eng__shape *shape;
    int topo_mode;       /* enum api_topology_mode */
    char *topo_level;    /* its level's node label, or NULL */
    char *slice_level;   /* podSetSliceRequiredTopology or NULL */
    int32_t slice_size;
};

/* One pod set's admission: flavors and usage per resource. */
struct eng__pa {
    char *name;
    int32_t count;
    int n;
    int *res;
    int *flv;
    int64_t *amt;   /* resourceUsage (whole pod set) */
    struct api_topology_assignment *ta; /* topologyAssignment or NULL */
};

/* Where a workload sits. */
enum eng__wlq { ENG__Q_NONE, ENG__Q_HEAP, ENG__Q_INADM };

struct eng__wl {
    /* queue state first: what parking, bulk moves and routing touch for
     * every pending workload shares the first cache line */
    bool queued;              /* in qcq's heap or parked (eng__wl_where) */
    bool time_parked;         /* parked by backoff: re-checked each schedule */
    bool bypassed;            /* parked by an equivalence bulk move (only
                               * meaningful while parked) */
    bool requeued_false;
    uint32_t pos;             /* parked: its slot in qcq->park; in the heap:
                               * its slot, unless qcq->heap_pos_stale */
    struct eng__cq *qcq;
    const char *ns;           /* interned */
    int64_t requeue_at_ms;
    const char *last_reason;  /* last pending status emitted (interned) */
    int n_avoid;              /* flavor fallback: flavors not to assign ... */
    int32_t priority;
    const char *last_msg;
    int64_t qo_ts_ms;         /* queue-order timestamp */
    int64_t creation_ms;
    uint64_t hash;            /* scheduling equivalence hash */
    char *key;                /* "ns/name"; key and uid share wl's allocation */
    char *uid;
    const char *name;         /* points into key */
    const char *queue_name;   /* interned */
    char *gated_by;           /* admission gate or NULL */
    char *replacement_for;    /* "ns/name" of the replaced slice, or NULL */
    char *job_uid;            /* owner job's uid (Preempted messages) or NULL */
    int *avoid_flv;           /* ... (flavor ids) ... */
    int64_t *avoid_until;     /* ... while now < these times */
    bool active, finished, elastic;
    int n_ps;
    struct eng__ps *ps;
    uint64_t state_hash;      /* everything queue placement depends on */
    char *rcq_name;
    struct eng__pa *pa;       /* status.admission.podSetAssignments */
    int n_pa;
    int *use_fr;              /* charged usage, global FR ids */
    int64_t *use_amt;
    struct eng__wl *hprev, *hnext;
    /* quota reservation and holder state, together (60 bytes): what a
     * preemption search (preempt.c classical) and eng__wl_charge read for
     * every candidate */
    struct eng__cq *rcq;      /* ClusterQueue charged (NULL if missing) */
    /* holder-order key when last placed in its tree's holder order
     * (preempt.c struct hord): group and priority, reservation time, uid
     * prefix */
    uint64_t hk1;
    int64_t hk2;
    uint64_t hk3;
    int64_t quota_reserved_ms;
    int64_t use0_amt;         /* use_fr[0] and use_amt[0] when n_use > 0: */
    int use0_fr;              /* eng__wl_charge's common case reads no array */
    int n_use;
    bool reserved, admitted;
    bool evicted;
    bool preempted;           /* the engine issued its preemption */
    uint64_t victim_cycle;    /* e->cycle of the cycle that made it a victim */
    int64_t expected_end_ms;
    int64_t expected_runtime_ms; /* once admitted, for eng_explain's estimate; 0 unknown */
    struct eng__wl *tprev, *tnext;
    /* flavor scan progress (§2.5) */
    bool has_last;
    int n_last;
    int *last_idx;            /* triples (pod set, resource id, index) */
    uint64_t last_cycle, last_gen, last_hash;
    bool blocker_emitted;     /* last status was a queue blocker */
    bool unsent;              /* last status decided outside eng_schedule */
    struct eng__wl *uprev, *unext;
    /* last member: the key ("ns/name", the allocation's tail) starts right
     * after hh's hashv, so a lookup that matches the hash finds the key's
     * first bytes on the cache line it already read */
    UT_hash_handle hh;
};

struct eng__fp;
struct eng__pscratch;

struct eng__undo {
    struct eng__node *node;
    int idx;
    int64_t delta;
};

struct eng {
    struct eng_config cfg;
    struct eng__name *res_ids;
    char **res_names;
    int n_res, cap_res;
    struct eng__name *flv_ids;
    struct eng__flavor *flavors;
    int n_flv, cap_flv;
    struct eng__fr_key *fr_ids;
    int *fr_flv, *fr_res;
    int n_fr, cap_fr;
    struct eng__cq *cqs;
    struct eng__cq **cq_sorted;
    size_t n_cq_sorted;
    /* bitmaps over cq_sorted indexes, (n_cq_sorted + 63) / 64 words: a
     * superset of the ClusterQueues with a non-empty heap (a bit is set
     * whenever a workload enters the heap and cleared by the cycle that
     * finds the heap empty), and of those with requeue_pending; cycles and
     * requeue passes visit only these, in cq_sorted order */
    uint64_t *cq_heap_bits, *cq_rq_bits;
    /* most flavors of a ClusterQueue resource group (eng_schedule's soft
     * cycle limit); -1: to recount (a ClusterQueue's spec, or the set of
     * them, changed) */
    int cq_max_flv;
    struct eng__cohort *cohorts;
    struct eng__lq *lqs;
    struct eng__ns *nss;
    struct eng__wl *wls;
    struct eng__shape *shapes;
    struct eng__fp *fp_tab;       /* object fingerprints (model.c) */
    struct eng__istr *istrs;      /* interned strings */
    struct eng__wl *time_parked;  /* utlist DL list (tprev/tnext) */
    struct eng__wl *unsent;       /* statuses to emit (uprev/unext) */
    bool tree_dirty;
    bool tree_unlinked; /* a rebuild could not allocate a parent Cohort: the
                           next complete one retries every ClusterQueue */
    uint64_t tree_gen;            /* bumped by every forest rebuild */
    bool route_all;               /* re-route every workload */
    uint64_t cycle;               /* scheduling cycle counter */
    int64_t now_ms;               /* `now` of the running schedule */
    struct eng__undo *undo;       /* cycle-local usage changes */
    size_t n_undo, cap_undo;
    bool undo_on;
    uint64_t progress;            /* bumped on any decision or scan change */
    uint64_t hard_progress;       /* admissions, preemptions, parking */
    struct eng_result *out;
    size_t max_decisions, n_decided;
    uint64_t usage_epoch;         /* bumped on every usage or quota-holder change */
    struct eng__pscratch *pre;    /* preemption search buffers and memo (preempt.c) */
    int fill_block_max;           /* largest block of classical preemption's removals and of
                                   * fill_back (preempt.c); 0 = default,
                                   * 1 = one victim at a time (tests compare the two) */
    struct eng__entry *cyc;       /* cycle entries, reused */
    size_t cap_cyc;
    bool *cyc_done;
    struct eng__wl **taken;       /* eng__heap_park_many's result, reused */
    size_t cap_taken;
    /* Kueue TAS (tas.c): Topology objects and the nodes they are built on */
    struct eng__topology *topos;
    int n_topos;
    struct eng__tnode *tnodes;    /* sorted by name */
    size_t n_tnodes;
};

/* ---- tas.c: Topology Aware Scheduling ---- */

/* A Topology object: its levels' node labels, highest level first. */
struct eng__topology {
    char *name;
    char **levels;
    int n_levels;
};

/* A node as TAS sees it: labels and free capacity (allocatable minus the
 * requests of the pods bound to it that belong to no TAS workload). */
struct eng__tnode {
    char *name;
    struct api_labels labels;
    int n;
    int *res;      /* resource ids */
    int64_t *free; /* per res */
};

struct eng__asg;
/* After a successful quota assignment: place every pod set assigned to a
 * flavor with a topology (Kueue FindTopologyAssignmentsForWorkload). A pod
 * set that cannot be placed fails with ENG__NF_TOPOLOGY and Kueue's
 * message; one that can gets its assignment in psa->ta. */
void eng__tas_assign(struct eng *e, const struct eng__cq *cq, const struct eng__wl *wl,
                     struct eng__asg *a);
/* Copy src's topologies and nodes into dst (eng_explain's forward run). */
void eng__tas_clone(struct eng *dst, const struct eng *src);
/* Free the topologies and nodes (eng_free). */
void eng__tas_free(struct eng *e);

/* ---- model.c: interning and objects ---- */
int eng__res_id(struct eng *e, const char *name);
/* Id of an interned name, or -1 (res/flv); the _id forms intern. */
int eng__res_find(const struct eng *e, const char *name);
/* Intern a flavor name (a flavor that has no object yet: exists = false). */
int eng__flv_id(struct eng *e, const char *name);
/* Id of a flavor name, or -1. */
int eng__flv_find(const struct eng *e, const char *name);
/* Intern a (flavor, resource) pair; _find returns -1 when unknown. */
int eng__fr_id(struct eng *e, int flv, int res);
/* Id of a (flavor, resource) pair, or -1. */
int eng__fr_find(const struct eng *e, int flv, int res);
/* Lookups by name (NULL when absent). */
struct eng__cq *eng__cq_find(const struct eng *e, const char *name);
/* The LocalQueue ns/name, or NULL. */
struct eng__lq *eng__lq_find(const struct eng *e, const char *ns, const char *name);
/* The workload ns/name, or NULL. */
struct eng__wl *eng__wl_find(const struct eng *e, const char *ns, const char *name);
/* Deep copies of api values into engine-owned memory (released with the api
 * _release functions or the _free helpers below). */
void eng__labels_copy(struct api_labels *dst, const struct api_labels *src);
void eng__tols_copy(struct api_toleration **dst, size_t *n, const struct api_toleration *src,
                    size_t n_src);
/* Free n tolerations and the array. */
void eng__tols_free(struct api_toleration *t, size_t n);
/* Free n taints and the array. */
void eng__taints_free(struct api_taint *t, size_t n);
void eng__selector_copy(struct api_label_selector *dst, const struct api_label_selector *src);
void eng__reqs_copy(struct api_sel_req **dst, size_t *n, const struct api_sel_req *src,
                    size_t n_src);
/* Free n selector requirements and the array. */
void eng__reqs_free(struct api_sel_req *r, size_t n);
/* Free n resource groups. */
void eng__rgs_free(struct eng__rg *rgs, int n);
/* The ResourceGroup of cq covering resource res, or NULL. */
const struct eng__rg *eng__cq_rg(const struct eng__cq *cq, int res);
/* The quota the CQ spec gives for (flavor, resource), NULL if none. */
const struct eng__quota *eng__cq_quota(const struct eng__cq *cq, int flv, int res);
/* Recompute the Active state and Kueue's inactive reason/message
 * ("Can't admit new workloads: ..."): stopPolicy, missing flavors, the
 * caller's admission-check part. */
void eng__cq_update_active(struct eng *e, struct eng__cq *cq);
/* Debug builds (no NDEBUG: the ASan build of make test): assert that no
 * ClusterQueue's or Cohort's usage is negative. Usage may dip below zero
 * inside a preemption search (simulated removals, undone before it ends),
 * so this runs where the model is at rest: the end of eng_schedule. */
void eng__check_usage(const struct eng *e);
/* The Cohort of that name, created implicit (no object) when absent; NULL
 * when its table entry could not be allocated (ENG__HASH_ADD). */
struct eng__cohort *eng__cohort_get(struct eng *e, const char *name);
/* Free the fingerprint table. */
void eng__fp_free_all(struct eng *e);
struct sbuf;
/* True when the fingerprint of (kind, name) changed; records it. Takes sb. */
bool eng__fp_changed(struct eng *e, const char *kind, const char *name, struct sbuf *sb);
/* Forget an object's fingerprint (it was deleted). */
void eng__fp_forget(struct eng *e, const char *kind, const char *name);
/* Resource groups from the api form (interning names; quotas matched by
 * resource name). */
struct eng__rg *eng__rgs_build(struct eng *e, const struct api_resource_group *g, size_t n);
/* Drop every workload link to cq (it is being deleted). */
void eng__cq_detach_all(struct eng *e, struct eng__cq *cq);

/* ---- tree.c: cohort forest and quota arithmetic (Kueue resource_node.go) ---- */
void eng__tree_rebuild(struct eng *e);
/* Kueue localQuota: SubtreeQuota - lendingLimit (>= 0) when a lending
 * limit is set, else 0. i indexes n's FR table. */
static inline int64_t eng__local_quota(const struct eng__node *n, int i)
{
    if (!n->q[i].has_ll)
        return 0;
    int64_t r = eng__amt_sub(n->subtree[i], n->q[i].lending_limit);
    return r > 0 ? r : 0;
}
/* Kueue LocalAvailable: max(0, localQuota - usage). */
static inline int64_t eng__local_available(const struct eng__node *n, int i)
{
    int64_t r = eng__amt_sub(eng__local_quota(n, i), n->usage[i]);
    return r > 0 ? r : 0;
}
/* Kueue available(): may be negative (over-admission). */
int64_t eng__available(const struct eng__node *n, int i);
/* ClusterQueue Available(): clamped at 0. */
int64_t eng__cq_available(const struct eng__cq *cq, int fr);
/* Kueue potentialAvailable ("maximum capacity", ignores usage). */
int64_t eng__potential_available(const struct eng__node *n, int i);
/* Add delta (may be negative) to node usage at index i and propagate the
 * change of the part stored in the parent. Logged for undo when e->undo_on. */
void eng__node_add_usage(struct eng *e, struct eng__node *n, int i, int64_t delta);
/* Add (sign=+1) or remove (-1) a workload's usage in its ClusterQueue. */
void eng__wl_charge(struct eng *e, struct eng__wl *wl, int sign);
/* Add fr/amount usage to cq (cycle-local when e->undo_on). */
void eng__cq_add_usage(struct eng *e, struct eng__cq *cq, int fr, int64_t amt);
/* Revert every cycle-local usage change, newest first. */
void eng__undo_all(struct eng *e);
/* Borrowing(cq, fr): usage > nominal (SubtreeQuota). */
bool eng__cq_borrowing(const struct eng__cq *cq, int fr);
/* BorrowingWith: usage + val > SubtreeQuota. */
bool eng__node_borrowing_with(const struct eng__node *n, int i, int64_t val);
/* FindHeightOfLowestSubtreeThatFits: returns the borrow level and sets
 * *may_reclaim (Kueue classical.FindHeightOfLowestSubtreeThatFits). */
int eng__lowest_fitting_height(const struct eng__cq *cq, int fr, int64_t val, bool *may_reclaim);
/* Kueue IsWithinNominalInResources: usage <= SubtreeQuota for each FR
 * (inline: the preemption search asks it for every candidate). */
static inline bool eng__node_within_nominal(const struct eng__node *n, const int *frs, int n_frs)
{
    for (int k = 0; k < n_frs; k++) {
        int i = eng__node_idx(n, frs[k]);
        if (i >= 0 && n->usage[i] > n->subtree[i])
            return false;
    }
    return true;
}
/* The root of n's tree (n itself when it has no parent). */
struct eng__node *eng__node_root(struct eng__node *n);

/* ---- workload.c ---- */
void eng__wl_free(struct eng *e, struct eng__wl *wl);
/* Recompute the charged usage from status.admission and reclaimablePods. */
void eng__wl_recompute_usage(struct eng *e, struct eng__wl *wl);
/* Give pa zeroed res, flv (int) and amt arrays of n (+1) items, one
 * allocation that eng__pa_free releases. */
void eng__pa_alloc(struct eng__pa *pa, int n);
/* Free n pod set assignments and the array. */
void eng__pa_free(struct eng__pa *pa, int n);
/* True when one of cq's admission checks applies to the flavors the
 * workload was given (then Admitted waits for the checks). */
bool eng__checks_apply(const struct eng__cq *cq, const struct eng__wl *wl);
/* Charge a reserved workload to its ClusterQueue (cq: the one named
 * wl->rcq_name, or NULL to look it up) and list it as a holder. */
void eng__holder_add(struct eng *e, struct eng__wl *wl, struct eng__cq *cq);
/* Release a holder's usage; `freed` bumps the allocatable generation and
 * retries the inadmissible workloads of the cohort tree. */
void eng__holder_remove(struct eng *e, struct eng__wl *wl, bool freed);

/* ---- queue.c: queues and routing ---- */
/* Kueue queue order (<0: a first): priority descending, queue-order
 * timestamp, creation time, key, uid; _queue puts cq's sticky
 * BestEffortFIFO preemptor first. */
int eng__wl_cmp_queue(const struct eng__cq *cq, const struct eng__wl *a, const struct eng__wl *b);
int eng__wl_cmp_order(const struct eng__wl *a, const struct eng__wl *b);
/* Heap operations on a ClusterQueue's active queue (order:
 * eng__wl_cmp_queue); pop returns NULL when empty. */
void eng__heap_push(struct eng *e, struct eng__cq *cq, struct eng__wl *wl);
/* Remove and return the head, or NULL. */
struct eng__wl *eng__heap_pop(struct eng__cq *cq);
/* Remove wl (which must be in cq's heap). */
void eng__heap_remove(struct eng__cq *cq, struct eng__wl *wl);
/* Restore the heap order after wl's key changed. */
void eng__heap_fix(struct eng__cq *cq, struct eng__wl *wl);
/* Move every workload with this scheduling hash from cq's heap to the end
 * of its parked list (as eng__wl_park, in heap array order) and rebuild
 * the heap once (Floyd, over the array in its order after the removal). Returns how many moved; they are in e->taken[0..n) in
 * that order (valid until the next call). */
size_t eng__heap_park_many(struct eng *e, struct eng__cq *cq, uint64_t hash);
/* Take wl out of its heap or parked list (and the backoff list). */
void eng__wl_unqueue(struct eng *e, struct eng__wl *wl);
/* Where wl sits: ENG__Q_NONE, ENG__Q_HEAP (qcq's heap) or ENG__Q_INADM
 * (parked in qcq). */
enum eng__wlq eng__wl_where(const struct eng__wl *wl);
/* wl is parked and was parked by an equivalence bulk move. */
bool eng__wl_bypassed(const struct eng__wl *wl);
/* Park wl in cq's inadmissible list (and the backoff list when its
 * requeueAt is in the future or Requeued=False). */
void eng__wl_park(struct eng *e, struct eng__cq *cq, struct eng__wl *wl);
/* Place a pending workload where it belongs (heap, parked, nowhere) and emit
 * a blocker status when it cannot be queued. */
void eng__wl_route(struct eng *e, struct eng__wl *wl);
/* Route every pending workload (after queue or namespace changes). */
void eng__route_all(struct eng *e);
/* Kueue "retry inadmissible" for cq's whole root cohort tree (deferred to
 * the next eng_schedule). */
void eng__requeue_tree(struct eng *e, struct eng__cq *cq);
/* Run the deferred retry-inadmissible requeues (start of eng_schedule). */
void eng__process_requeues(struct eng *e);
/* Defer a retry-inadmissible of cq to the next eng_schedule (sets
 * requeue_pending and cq's bit in e->cq_rq_bits). */
void eng__cq_mark_requeue(struct eng *e, struct eng__cq *cq);
/* Rebuild e->cq_heap_bits and e->cq_rq_bits and every sorted_idx from
 * e->cq_sorted (after it changed). */
void eng__cq_bits_rebuild(struct eng *e);
/* True when the bitmaps cover every ClusterQueue with a non-empty heap or
 * requeue_pending and every sorted_idx is right (unit tests). */
bool eng__cq_bits_ok(const struct eng *e);
/* Set bit i of a bitmap. */
static inline void eng__bit_set(uint64_t *bits, size_t i)
{
    bits[i >> 6] |= UINT64_C(1) << (i & 63);
}
/* Requeue parked workloads whose backoff has passed. */
void eng__process_time_parked(struct eng *e);
/* Kueue backoffWaitingTimeExpired: not Requeued=False and requeueAt <= now. */
bool eng__wl_backoff_expired(const struct eng *e, const struct eng__wl *wl);
/* Flavor fallback (beyond Kueue): the earliest end (ms) of an avoidance
 * still in force at e->now_ms, or 0; and whether flavor flv is avoided now. */
int64_t eng__wl_avoid_end(const struct eng *e, const struct eng__wl *wl);
bool eng__wl_avoids(const struct eng *e, const struct eng__wl *wl, int flv);
/* The namespace exists and the ClusterQueue's selector matches it (a nil
 * selector matches nothing). */
bool eng__ns_matches(const struct eng *e, const struct eng__cq *cq, const char *ns);
/* Drop a reference to an interned shape (freed at zero). */
void eng__shape_release(struct eng *e, struct eng__shape *s);
/* Match verdict of a shape against a flavor: NULL = matches, else reason. */
const char *eng__shape_match(struct eng *e, struct eng__shape *s, int flv);

/* ---- assign.c: flavor assignment (Kueue flavorassigner) ---- */
enum eng__mode { ENG__NOFIT = 0, ENG__PREEMPT = 1, ENG__DEFERRED = 2, ENG__FIT = 3 };
/* granular preemption modes, worst first */
enum eng__pmode { ENG__PM_NOFIT, ENG__PM_NOCAND, ENG__PM_PREEMPT, ENG__PM_RECLAIM, ENG__PM_FIT };
enum eng__nofit {
    ENG__NF_NONE,
    ENG__NF_TOPOLOGY,
    ENG__NF_WAITING,
    ENG__NF_EXCEEDS,
    ENG__NF_NOMATCH,
};
/* The QuotaReserved reason of a NoFit severity ("NoMatchingFlavor", ...). */
const char *eng__nofit_reason(int nf);

struct eng__ra {          /* one requested resource of a pod set */
    int res;
    int flv;              /* assigned flavor or -1 */
    int fr;
    int mode;             /* enum eng__mode */
    int borrow;
    int tried;            /* scan progress index, -1 = wrapped */
    int64_t total;        /* quota charged for this pod set */
};

struct eng__attempt {     /* FlavorAssignmentAttempt */
    int flv;
    int mode;
    int borrow;
    int poss;             /* -1 none, 0 NoCandidates, 1 Preempt, 2 Reclaim */
    struct eng__strv reasons;
    int nofit;
};

struct eng__psa {
    int32_t count;
    int n_ra;
    struct eng__ra *ra;
    struct eng__strv reasons;
    int nofit;
    struct eng__attempt *att;
    int n_att, cap_att;
    struct api_topology_assignment *ta; /* Kueue TAS placement, or NULL */
};

struct eng__asg {
    int n_ps;
    struct eng__psa *ps;
    int borrowing;
    int nofit;
    int n_use, cap_use;
    int *use_fr;
    int64_t *use_amt;
    uint64_t cycle, gen;  /* LastState */
};

/* Free an assignment's arrays (the struct is zeroed). */
void eng__asg_free(struct eng__asg *a);
/* Quantity text as Kueue's ResourceFormatter prints it (caller frees). */
char *eng__qty(const struct eng *e, int res, int64_t v);
/* Kueue RepresentativeMode: the worst pod set mode (NoFit when empty). */
int eng__asg_mode(const struct eng__asg *a);
/* A pod set's mode: Fit without reasons, else the worst flavor mode. */
int eng__psa_mode(const struct eng__psa *p);
/* Kueue PendingFlavors: some assigned resource stopped before the last flavor. */
bool eng__asg_pending_flavors(const struct eng__asg *a);
/* Kueue Assignment.Message(): "couldn't assign flavors to pod set ...". */
char *eng__asg_message(const struct eng__asg *a, const struct eng__wl *wl);
/* "Flavors considered" part of the QuotaReserved event, NULL if none. */
char *eng__asg_attempts_text(const struct eng *e, const struct eng__asg *a,
                             const struct eng__wl *wl);
/* The assignment's usage of fr so far (0 when none). */
int64_t eng__asg_usage(const struct eng__asg *a, int fr);
/* Compute the assignment of wl in cq; counts (NULL = spec counts minus
 * reclaimable) give partial-admission counts. old = elastic slice replaced. */
void eng__assign(struct eng *e, struct eng__cq *cq, struct eng__wl *wl, const int32_t *counts,
                 const struct eng__wl *old, struct eng__asg *out);
/* The same, trying only the flavors `pin` nominated (Kueue nomination
 * mapping, used when recomputing after overlapping preemption targets). */
void eng__assign_pinned(struct eng *e, struct eng__cq *cq, struct eng__wl *wl, const int32_t *counts,
                        const struct eng__wl *old, const struct eng__asg *pin, struct eng__asg *out);

/* ---- preempt.c: preemption (Kueue preemption/, classical + fair) ---- */
struct eng__target {
    struct eng__wl *wl;
    const char *reason;   /* InClusterQueue, InCohortReclamation, ... */
};
struct eng__targets {
    struct eng__target *v;
    size_t n, cap;
};
/* Free a target list. */
void eng__targets_free(struct eng__targets *t);
/* Full preemption targets for an assignment (Kueue Preemptor.GetTargets). */
void eng__get_targets(struct eng *e, struct eng__cq *cq, struct eng__wl *wl,
                      const struct eng__asg *a, struct eng__targets *out);
/* Preemption oracle for one FR (Kueue PreemptionOracle.SimulatePreemption):
 * returns ENG__PM_NOCAND/PREEMPT/RECLAIM and sets *borrow. */
int eng__oracle(struct eng *e, struct eng__cq *cq, struct eng__wl *wl, int fr, int64_t val,
                int *borrow);
/* Free the preemption search buffers. */
void eng__pscratch_free(struct eng *e);
/* Forget the last oracle search (a new nomination starts). */
void eng__pmemo_reset(struct eng *e);

/* Keep classical preemption's per-cohort-tree holder order (preempt.c)
 * in step with cq->holders: call after wl joins wl->rcq's holders and
 * before it leaves them (wl->rcq still set). No-ops when no order is kept
 * for that tree (none until a search needs one) or while the forest is
 * dirty (a rebuild drops every order). */
void eng__hord_add(struct eng *e, struct eng__wl *wl);
void eng__hord_remove(struct eng *e, struct eng__wl *wl);

/* The quota holders of cq's cohort tree in classical preemption's holder
 * order (evicted or preempted first, then priority ascending, reservation
 * time descending, uid, namespace/name), as a search walks it: the kept
 * order, sorted again when a key changed (and kept from then on). Returns
 * the count; *out points into engine memory, valid until the next engine
 * call. For tests. */
size_t eng__hord_of(struct eng *e, struct eng__cq *cq, struct eng__wl *const **out);
/* Temporarily remove / re-add a workload's usage (simulation). */
void eng__sim_remove(struct eng *e, struct eng__wl *wl);
/* Re-add a workload's usage after eng__sim_remove. */
void eng__sim_add(struct eng *e, struct eng__wl *wl);
/* Temporarily add (sign +1) or remove (-1) usage at cq, not logged. */
void eng__sim_usage(struct eng *e, struct eng__cq *cq, const int *fr, const int64_t *amt, int n,
                    int sign);
/* Kueue WorkloadUsesResources: the reservation uses one of the FRs. */
bool eng__wl_uses_frs(const struct eng__wl *wl, const int *frs, int n);

/* ---- fair.c: fair sharing (DRS) ---- */
struct eng__drs {
    double ratio;          /* unweighted dominant share, x1000 */
    int64_t weight_milli;
    bool borrowing;
};
/* DominantResourceShare of a node relative to its parent (Kueue
 * dominantResourceShare with no extra request). */
struct eng__drs eng__drs_of(const struct eng *e, const struct eng__node *n);
/* Kueue CompareDRS: <0 when a is the smaller (preferred for admission). */
int eng__drs_cmp(struct eng__drs a, struct eng__drs b);
/* status.fairSharing.weightedShare of a ClusterQueue. */
int64_t eng__weighted_share(struct eng *e, struct eng__cq *cq);
/* Dominant resource share of node (x1000 / weight), with extra usage. */
int64_t eng__drs(const struct eng *e, const struct eng__node *n, const int *fr,
                 const int64_t *amt, int n_amt, int sign);

/* ---- cycle.c ---- */
enum eng__rq {
    ENG__RQ_GENERIC,
    ENG__RQ_NS_MISMATCH,
    ENG__RQ_NOFIT,
    ENG__RQ_NOCAND,
    ENG__RQ_PENDING_PREEMPTION,
    ENG__RQ_FAILED_AFTER_NOMINATION,
};

/* One head of a scheduling cycle (Kueue scheduler entry). */
struct eng__entry {
    struct eng__wl *wl;
    struct eng__cq *cq;
    bool nominated;          /* reached flavor assignment */
    bool processed;
    bool assumed;            /* admitted in this cycle */
    bool skipped;
    struct eng__asg a;
    struct eng__targets t;
    struct eng__wl *old;     /* elastic slice replaced */
    bool keep_scan;          /* record the scan progress at requeue */
    uint64_t scan_before;    /* scan-progress signature before the cycle */
    enum eng__rq rq;
    char *msg;
    const char *reason;
};

/* Run one scheduling cycle; *had_heads tells whether any ClusterQueue had a
 * head. Returns the number of heads. */
int eng__run_cycle(struct eng *e, bool *had_heads);
/* The next entry to process under fair sharing (Kueue fairSharingIterator:
 * the tournament of the first remaining entry's root cohort). */
size_t eng__fair_next(struct eng *e, struct eng__entry *v, size_t n, const bool *done);

/* Bring routing, requeues and quotas up to date for time now_ms. */
void eng__prepare(struct eng *e, int64_t now_ms);

/* ---- clone.c ---- */
/* A new engine with the same objects and workloads (for eng_explain);
 * with `only`, just the workloads queued in or charged to its cohort tree. */
struct eng *eng__clone(const struct eng *e, const struct eng__cq *only);
/* Upsert src's workload (with its reservation) into dst. */
void eng__clone_workload(struct eng *dst, const struct eng *src, const struct eng__wl *wl);

/* ---- admit.c ---- */
/* Reserve quota for wl in cq with assignment a (Kueue admit + assume);
 * old = elastic slice replaced (finished in the engine). */
void eng__admit(struct eng *e, struct eng__cq *cq, struct eng__wl *wl, const struct eng__asg *a,
                struct eng__wl *old);

/* ---- decide.c: decisions ---- */
struct eng_decision *eng__decision_new(struct eng *e, enum eng_decision_type t,
                                       const struct eng__wl *wl, const char *cq);
/* Emit a pending status unless it equals the last one emitted. */
void eng__emit_pending(struct eng *e, struct eng__wl *wl, const char *reason, const char *msg);
/* The same with interned strings; takes one reference of each. */
void eng__emit_pending_interned(struct eng *e, struct eng__wl *wl, const char *r, const char *m);
/* Fill a decision reference with copies of the workload's ns/name/uid. */
void eng__wl_ref_set(struct eng_wl_ref *r, const struct eng__wl *wl);
/* Emit the statuses decided between two eng_schedule calls. */
void eng__flush_unsent(struct eng *e);
/* Take wl off the list of statuses still to emit. */
void eng__unsent_forget(struct eng *e, struct eng__wl *wl);
/* max_decisions not reached in this call. */
bool eng__budget_left(const struct eng *e);

/* ---- preempt.c: test hook ---- */
/* With on, classical preemption checks the recorded key of every holder
 * of the kept order it walks, candidates or not (the one-by-one check the
 * candidates-only check must decide as); for tests. */
void eng__hord_check_all(struct eng *e, bool on);

#endif
