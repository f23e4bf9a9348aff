/*
 * observe-int: the recorder's state, shared by observe.c (Workloads, bare
 * Workload play), observe_objects.c (the event-log loop, ProvisioningRequests,
 * Nodes, ClusterQueues) and observe_summary.c (the summary object).
 */
#ifndef CUEUE_SIM_OBSERVE_INT_H
#define CUEUE_SIM_OBSERVE_INT_H

#ifndef __unused
#define __unused __attribute__((unused)) /* used by libbsd tree.h */
#endif
#include <bsd/sys/tree.h>
#include <uthash.h>

#include "sim/sim-int.h"
#include "store/store.h"

/* Usage a Workload adds to one (ClusterQueue, flavor, resource). */
struct sim_contrib {
    struct sim_usage_cell cell;
    int64_t amount; /* != 0 */
};

struct wl_state;

/* One condition of the status a Workload was last diffed against: which of
 * the transition types it is (index into the recorder's list, -1 another)
 * and whether its status is "True". The pointer is valid, and names only
 * that condition, while wl_state.seen_status holds the status (conditions
 * are shared between versions and copied before any change). */
struct wl_cond_memo {
    const json_t *cond;
    int8_t type;
    bool is_true;
    bool first; /* the first of its type there (the one the diff read) */
};

/* A bare Workload's completion, ordered by (at_ms, seq). */
struct sim_finish {
    int64_t at_ms;
    uint64_t seq;
    struct wl_state *w;
    RB_ENTRY(sim_finish) link;
};

RB_HEAD(sim_finish_tree, sim_finish);
int sim_finish_cmp(struct sim_finish *a, struct sim_finish *b);
RB_PROTOTYPE(sim_finish_tree, sim_finish, link, sim_finish_cmp)

struct wl_state {
    char *key; /* ns/name */
    char *ns;
    char *name;
    char *uid;
    json_t *uid_json; /* the uid string of the documents (reference): the
                         key of this Workload's uid_cache slot */
    char *class_name;
    char *cq;
    const json_t *cq_read; /* the document cq was read from, during a diff */
    /* during a diff: the diffed status's conditions, admission checks,
     * admission and the admission's clusterQueue (borrowed from the
     * document) */
    const json_t *cur_conds, *cur_checks;
    json_t *cur_adm;
    const char *cur_adm_cq;
    const json_t *cur_psas; /* the admission's podSetAssignments */
    int64_t created_ms;
    int64_t admitted_ms; /* first Admitted=True, -1 */
    int64_t finished_ms; /* -1 */
    int32_t evictions;
    bool bare;
    bool deleted;
    bool progressing; /* counted in n_progressing: live, unfinished, active */
    /* last state seen */
    bool active, reserved, admitted, finished, evicted, preempted;
    char *requeued; /* status \x1f reason */
    char *pending;  /* reason \x1f message of the last Pending record */
    json_t *checks; /* check name -> state */
    struct sim_contrib *contrib;
    size_t n_contrib, cap_contrib;
    json_t *contrib_from; /* the status.admission contrib was computed from
                             (reference; NULL = contributes nothing) */
    const char *queue_name; /* seen_spec's queueName (borrowed from it),
                               during a diff the diffed spec's; NULL none */
    json_t *seen_spec, *seen_status; /* the spec and status last diffed
                                        (references: stored documents never
                                        change in place, so the same pointers
                                        mean the same content) */
    struct wl_cond_memo *conds; /* seen_status's conditions, in order */
    size_t n_conds, cap_conds;
    /* bare play */
    struct sim_finish *finish;
    int64_t run_ms;
    bool needs_release;
    UT_hash_handle hh;     /* live, by key */
    UT_hash_handle hh_uid; /* live, by uid */
};

struct pr_state;
struct pool_count;
struct pod_state;  /* observe_pods.c */
struct pod_group;

/* Consecutive node additions (dir +1) or removals (-1) in one pool. */
struct node_run {
    char *pool;
    char *request;
    int dir;
    int n;
    json_t *names; /* node names, in order */
};

#define SIM_FINISH_MSGS 8

/* uid_cache: a memo in front of the by_uid index, keyed by the address of
 * a document's metadata.uid string (the store shares it between an
 * object's versions). A slot holds (p, w) only while w is live and
 * w->uid_json == p; w's reference keeps p from being freed and its address
 * reused, so a slot whose p matches names the right Workload. Misses (a
 * full set, a new string) go to by_uid. Set-associative: p maps to a set
 * of SIM_UID_WAYS slots (one cache line), the most recently put first.
 * The table starts with 2^SIM_UID_CACHE_LOG2 slots and is replaced by an
 * empty one twice as large whenever the live Workloads outnumber its sets
 * (up to 2^SIM_UID_CACHE_MAX_LOG2 slots): on the large scenario (50,000
 * live Workloads), a direct-mapped table of 16,384 slots sent most events
 * to by_uid's chains of cold wl_states. */
#define SIM_UID_CACHE_LOG2 14
#define SIM_UID_CACHE_MAX_LOG2 20
#define SIM_UID_WAYS_LOG2 2
#define SIM_UID_WAYS (1u << SIM_UID_WAYS_LOG2)
struct uid_slot {
    const json_t *uid;
    struct wl_state *w;
};

/* A record made while the control plane is still stepping (sim_obs_catch_up),
 * written out when the step is over. */
struct sim_deferred {
    const char *event; /* a literal */
    json_t *fields;    /* owned; NULL = counted only */
};

struct sim_observer {
    uint64_t cursor; /* last store resourceVersion consumed */
    /* while true (inside sim_obs_catch_up), records go to `deferred`, in
     * order, instead of the trace */
    bool deferring;
    struct sim_deferred *deferred;
    size_t n_deferred, cap_deferred;
    struct wl_state *live;
    struct wl_state *by_uid;
    struct uid_slot *uid_cache; /* 1 << uid_cache_log2 slots */
    unsigned uid_cache_log2;
    size_t n_live; /* Workloads in `live` */
    struct wl_state **all; /* every Workload seen, in creation order */
    size_t n_all, cap_all;
    struct sim_finish_tree finishes;
    uint64_t seq;
    struct wl_state **release; /* bare Workloads to release after the step */
    size_t n_release, cap_release;
    struct pr_state *prs;
    json_t *pr_names; /* ProvisioningRequest name -> ns/name, never pruned */
    struct pool_count *pools;
    struct node_run run;
    struct sim_usage *usage;
    int64_t last_finish_ms;
    /* completion (sim_observer_busy) */
    size_t n_progressing;  /* live Workloads neither finished nor deactivated */
    struct pod_state *pods; /* live Pods by uid */
    size_t n_running_pods;  /* live Pods not Succeeded/Failed */
    struct pod_group *pod_groups; /* (owner, nodeSelector) -> placement */
    json_t *unplaced;       /* the end-of-run report (sim_observer_finish) */
    /* Finished messages by runtime, made once each (a run has few
     * runtimes): slot i holds finish_msg_ms[i]'s, replaced round-robin */
    int64_t finish_msg_ms[SIM_FINISH_MSGS];
    char *finish_msg[SIM_FINISH_MSGS];
    size_t n_finish_msgs;
};

/* observe.c */
/* A record of the recorder's (event: a literal; fields stolen): to the
 * trace, or kept for later while the observer is deferring. */
void sim_obs_record(struct sim *s, const char *event, json_t *fields);
/* The pending node run (if any), then the record. */
void sim_obs_emit(struct sim *s, const char *event, json_t *fields);
void sim_obs_workload(struct sim *s, const struct store_event *ev);
/* Forget the live Workloads that are not in list (the store's current
 * Workloads): deleted while the recorder was not looking. */
void sim_obs_workloads_prune(struct sim *s, const json_t *list);

/* observe_pods.c */
/* A Pod was added, changed or deleted: liveness and placement. */
void sim_obs_pod(struct sim *s, const struct store_event *ev);
/* Warn about each group of pods none of which ever got a node, and return
 * them as the summary's `unschedulablePods` array (new reference). */
json_t *sim_obs_pods_report(struct sim *s);
/* Drop every live pod (their groups stay): before a resync replays them. */
void sim_obs_pods_forget_all(struct sim_observer *o);
void sim_obs_pods_free(struct sim_observer *o);

/* observe_objects.c */
/* Consume store events since the cursor. Returns 0 (writes happen later). */
int sim_obs_consume(struct sim *s);
/* Between two rounds of a control-plane step: consume the store events
 * since the cursor as sim_obs_consume does, but keep the records made
 * (sim_obs_record) and the pending node run for sim_observe, which writes
 * them after the step, where they would have come had the events been
 * read then. The recorder thus reads every version in the order written,
 * and the trace is the same, while the log may let these versions go
 * before the step writes their successors. */
void sim_obs_catch_up(struct sim *s);
/* Emit the pending node run, if any. */
void sim_obs_flush_nodes(struct sim *s);
/* The class of a workload: the class label on it, else on its controller
 * owner(s); "" when none. Caller frees. */
char *sim_obs_class_of(struct sim *s, const json_t *obj);
void sim_obs_objects_free(struct sim_observer *o);

#endif
