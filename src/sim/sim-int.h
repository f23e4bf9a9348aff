/*
 * sim-int: declarations shared by the simulator's files (and its unit
 * tests). The pieces:
 *   duration.c  the range of durations (util/duration.h parses) and trace times
 *   scenario.c  the scenario file: a `kind: Scenario` document plus
 *               manifests, decoded strictly into struct sim_scenario
 *   apply.c     scenario actions against the store (apply, delete, patch,
 *               scale), through api_admit like the API server does
 *   trace.c     trace records: fixed key order, byte-stable formatting
 *   observe.c   follows the store's event log: derives the trace from the
 *               objects' state changes, records what the summary needs,
 *               and plays the job integration for bare Workloads
 *   summary.c   waits, percentiles, usage over time; text and JSON forms
 *   check.c     a scenario's `expect` facts against its trace
 *   driver.c    the loop: actions -> ctrl_step -> observe -> advance time
 *   sim_main.c  `cueue sim` flags
 * Times inside the simulator are absolute ms (virtual clock) unless a name
 * says _rel (ms since the scenario's start).
 */
#ifndef CUEUE_SIM_SIM_INT_H
#define CUEUE_SIM_SIM_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/kinds.h"
#include "ctrl/ctrl.h"
#include "provider/provider.h"
#include "util/clock.h"
#include "util/diag.h"
#include "util/rng.h"
#include "util/sbuf.h"

/* Annotations and labels the simulator reads. */
#define SIM_ANN_RUNTIME "cueue.dev/sim-runtime"     /* duration a pod/workload runs */
#define SIM_ANN_EXIT_CODE "cueue.dev/sim-exit-code" /* pods exit with this code */
#define SIM_LABEL_KUEUE_RUNTIME "kueue.x-k8s.io/performance-scheduler-running-ms"
#define SIM_DEFAULT_CLASS_LABEL "cueue.dev/sim-class"
#define SIM_DEFAULT_START "2026-01-01T00:00:00Z"
#define SIM_DEFAULT_RUNTIME_MS (60 * 1000)

/* ---- duration.c ---- */

/* The longest duration, and so the latest time, a scenario may name: 100
 * years (times stay far inside int64 ms after adding the start). */
#define SIM_MAX_DURATION_MS (36500LL * 86400 * 1000)
#define SIM_MAX_DURATION_TEXT "36500d"
/* A scenario duration: text as util/duration.h parses it ("200ms", "1.5s",
 * "1h30m", "2d", or a plain number of seconds), in ms rounded to the
 * nearest. Returns 0 and *ms, CU_ELIMIT when longer than
 * SIM_MAX_DURATION_MS, or CU_EINVAL (not a duration, or negative). */
int sim_duration_ms(const char *text, int64_t *ms);
/* A duration from JSON: a number (seconds) or a string as above. On error
 * records a DIAG_INVALID cause at field saying which rule failed (not a
 * duration, negative, longer than SIM_MAX_DURATION_TEXT) and returns
 * CU_EINVAL. */
int sim_duration_json(const json_t *v, const char *field, int64_t *ms, struct diag *d);
#define SIM_SECONDS_LEN 32
/* ms as seconds with at most 3 decimals and no trailing zeros: 12500 ->
 * "12.5", 100 -> "0.1", 12000 -> "12". Returns out. */
char *sim_format_seconds(int64_t ms, char out[SIM_SECONDS_LEN]);

/* ---- scenario.c ---- */

enum sim_action_type { SIM_ACT_APPLY, SIM_ACT_DELETE, SIM_ACT_PATCH, SIM_ACT_SCALE, SIM_ACT_CONDITIONS };

/* A patch action's format (the API's three, api/patch.h). */
enum sim_patch_type { SIM_PATCH_MERGE, SIM_PATCH_STRATEGIC, SIM_PATCH_JSON };

/* One timed action (spec.actions[i]). */
struct sim_action {
    size_t index;          /* position in spec.actions (tie-break) */
    char *where;           /* "spec.actions[3]" for messages */
    int64_t at_rel;        /* first occurrence, ms after start */
    int32_t repeat;        /* occurrences (>= 1) */
    int64_t every_ms;      /* between occurrences */
    enum sim_action_type type;
    enum sim_patch_type patch_type; /* patch: merge, strategic or json */
    json_t *manifest;      /* apply: the object; patch: the patch (an
                              object; for json an array of operations);
                              conditions: the array of conditions to set; may
                              contain "${i}" (occurrence index) in strings */
    int64_t run_for_ms;    /* apply: runtime of what it creates; -1 = unset */
    json_t *admitted;      /* apply: occurrence 0 as sim_apply_precheck's
                              admission left it (uid a placeholder), or NULL
                              when rejected; read only */
    const struct api_kind *kind; /* delete, patch, scale, conditions */
    char *ns;              /* NULL for cluster-scoped kinds */
    char *name;            /* may contain "${i}" */
    /* scale */
    char *group;           /* RayJob worker group / Workload pod set; NULL = first */
    int32_t size;          /* parallelism, replicas or count */
};

/* A manifest created at time 0. */
struct sim_object {
    json_t *obj;
    char *where; /* "spec.objects[2]" or "document 3" */
};

struct sim_pool_cap {
    char *name;
    int64_t delay_ms;
    struct prov_sim_window *stockouts;    /* relative ms; to = PROV_NEVER open */
    size_t n_stockouts;
    struct prov_sim_revocation *revocations; /* relative ms */
    size_t n_revocations;
};

/* Controller settings a scenario may override (spec.controller). */
struct sim_controller {
    struct ctrl_config cfg;
};

struct sim_scenario {
    char *source;          /* file name for messages */
    char *name;            /* metadata.name or "" */
    uint64_t seed;
    int64_t start_ms;      /* absolute */
    char *class_label;
    int64_t default_runtime_ms;
    bool honor_grace;
    bool default_pool;     /* spec.defaultPool: the server's first-start NodePool */
    int64_t until_rel;     /* -1 = none */
    struct ctrl_config cfg;
    struct sim_object *objects;
    size_t n_objects;
    struct sim_pool_cap *pools;
    size_t n_pools;
    struct sim_action *actions; /* sorted by (at_rel, index) */
    size_t n_actions;
    json_t *expect;        /* the `expect` list or NULL */
};

/* The most objects plus action occurrences a scenario may ask for
 * (sim_scenario_size), checked before anything is created: every one is at
 * least one stored object, and the store keeps each version (about 40 KB
 * per bare Workload over its life). */
#define SIM_MAX_SCENARIO_SIZE 1000000
/* Objects created at time 0 plus every action occurrence (Σ repeat.count). */
uint64_t sim_scenario_size(const struct sim_scenario *sc);
/* Decode a scenario from text (YAML, one or more documents). Returns 0, or
 * a negative code with a message naming the file, document and field in
 * *err (caller frees). out is released on failure. */
int sim_scenario_parse(const char *text, size_t len, const char *source,
                       struct sim_scenario *out, char **err);
/* Read and decode a file ("-" = stdin). */
int sim_scenario_load(const char *path, struct sim_scenario *out, char **err);
void sim_scenario_release(struct sim_scenario *sc);

/* ---- the running simulation ---- */

struct sim_observer; /* observe.c */
struct sim_runtimes; /* apply.c: runFor table */

struct sim_options {
    int64_t until_rel;   /* -1 = run until nothing is left */
    FILE *trace_out;     /* NULL = no trace printed */
    bool keep_records;   /* keep every trace record (for --check) */
    bool quiet_warnings; /* no warnings on stderr */
};

#define SIM_EVENT_MEMO 16 /* a power of two */

/* A counter of sim.event_counts (see there). */
struct sim_event_memo {
    const char *event, *name;
    json_t *count;
};

struct sim {
    const struct sim_scenario *sc;
    struct sim_options opt;
    struct clk_virtual clock;
    struct rng rng;
    struct store *store;
    struct exec *exec;
    struct prov *prov;
    struct ctrl *ctrl;
    struct sim_observer *obs;
    struct sim_runtimes *runtimes;
    struct sim_admitted *admitted; /* per spec.actions entry, or NULL (apply.c) */
    /* trace */
    struct sbuf line;
    json_t *records;       /* kept records (opt.keep_records) */
    size_t n_records;
    json_t *event_counts;  /* event -> count (object) */
    /* counters of event_counts by the address of the name last counted
     * there (trace.c): slot i holds (event, its key in event_counts, its
     * counter), all borrowed; a hit also compares the names, so an
     * address reused for another name only misses */
    struct sim_event_memo event_memo[SIM_EVENT_MEMO];
    /* progress */
    int64_t end_ms;        /* when the run stopped: the last instant something
                              happened, or the --until / 30-day limit */
    const char *stopped_by; /* "completion", "until", "limit", "idle" */
    int64_t wall_ms;
    size_t n_warnings;
    json_t *warned;   /* keys of the warnings given once (apply.c) */
    json_t *warnings; /* every warning's text (opt.keep_records: --check) */
    size_t n_wakeups; /* distinct instants the loop visited */
    size_t n_steps;   /* ctrl_step calls */
};

/* ---- reading an object's members ---- */

/* A member name and its length (SIM_KEY("name") for a literal). */
struct sim_key {
    const char *name;
    size_t len;
};
#define SIM_KEY(lit) {lit, sizeof(lit) - 1}

/* The members of o named keys[0..n) into out[0..n) (NULL where absent, all
 * NULL when o is not an object), in one pass over o's members that stops
 * once all are found (as jx_members, for the few members of an object's
 * top level, metadata or status): a name's length is compared before its
 * bytes, so most members cost no string comparison. keys must be
 * distinct. Borrowed from o. */
static inline void sim_members(const json_t *o, const struct sim_key *keys, size_t n,
                               json_t **out)
{
    /* inline: with keys and n known where it is called, the loops unroll
     * and each comparison is of a known length */
    for (size_t i = 0; i < n; i++)
        out[i] = NULL;
    size_t left = n;
    for (void *it = json_object_iter((json_t *)o); it && left;
         it = json_object_iter_next((json_t *)o, it)) {
        size_t len = json_object_iter_key_len(it);
        for (size_t i = 0; i < n; i++) {
            if (keys[i].len == len && !out[i] &&
                !memcmp(json_object_iter_key(it), keys[i].name, keys[i].len)) {
                out[i] = json_object_iter_value(it);
                left--;
                break;
            }
        }
    }
}

/* ---- apply.c ---- */

/* Apply (create or update) a manifest the way `kubectl apply` would reach
 * the API: kind lookup, api_admit, store. obj is borrowed. run_for_ms >= 0
 * records the object's runtime. Returns 0 or a negative code with a message
 * in *err (caller frees) that names `where`. */
int sim_apply(struct sim *s, const json_t *obj, int64_t run_for_ms, const char *where,
              char **err);
/* Admit an apply action's manifest (its first occurrence, ${i} = 0) as a
 * new object, without a store: strict decoding, defaults and validation,
 * so a scenario with an object the API would reject fails before the run
 * starts. Causes go to d (fields as in the manifest). Returns 0, CU_EBADREQ
 * or CU_EINVAL. Checks that need the cluster (the namespace exists, an
 * update keeps immutable fields) still happen when the action runs.
 * admitted (may be NULL) receives the admitted object on success (new
 * reference; its uid is a placeholder), else NULL. */
int sim_apply_precheck(const json_t *manifest, struct diag *d, json_t **admitted);
/* Load-time memo of sim_apply_precheck over a scenario's actions (apply.c):
 * Workload manifests that differ only in metadata.name, metadata.namespace
 * and spec.queueName are admitted once. Owned by the caller; free with
 * sim_precheck_memo_free (NULL is fine). */
struct sim_precheck_memo;
struct sim_precheck_memo *sim_precheck_memo_new(void);
void sim_precheck_memo_free(struct sim_precheck_memo *m);
/* sim_apply_precheck through memo m (NULL: the plain precheck): the same
 * return value, causes and admitted object (equal, members in the same
 * order; it may share unchanged subtrees with earlier actions' admitted
 * objects, which are never changed). */
int sim_apply_precheck_memo(struct sim_precheck_memo *m, const json_t *manifest,
                            struct diag *d, json_t **admitted);
/* Run occurrence `occ` of an action at the current time. Missing targets of
 * delete/patch/scale are warnings (return 0); invalid results are errors. */
int sim_action_run(struct sim *s, const struct sim_action *a, int32_t occ, char **err);
/* Replace "${i}" with occ in every string of a copy of v. New reference. */
json_t *sim_subst_index(const json_t *v, int32_t occ);
/* The runtime recorded for (kind, ns, name) by runFor, or -1. */
int64_t sim_runtime_lookup(struct sim *s, const char *kind, const char *ns, const char *name);
void sim_runtimes_free(struct sim_runtimes *rt);
/* Release s->admitted (the admitted occurrences apply.c keeps per
 * repeated apply action). */
void sim_admitted_free(struct sim *s);
/* Runtime of an object from its annotation cueue.dev/sim-runtime or the
 * label kueue.x-k8s.io/performance-scheduler-running-ms, else runFor; -1
 * when none says. */
int64_t sim_object_runtime(struct sim *s, const json_t *obj);
/* The object named by obj's controller ownerReference (same namespace for
 * namespaced kinds) as a new reference, or NULL. */
json_t *sim_controller_owner(struct sim *s, const json_t *obj);
/* Outcome of a pod for the simulated executor (exec_sim_opts.outcome):
 * the pod's own annotations, then its owners' (up to 4 levels). */
void sim_pod_outcome(void *ctx, const json_t *pod, struct exec_sim_outcome *out);
/* Print a warning (stderr) unless quiet; counts it. */
void sim_warn(struct sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- trace.c ---- */

/* Emit one trace record at the current virtual time (fields stolen; may be
 * NULL): printed as one line when tracing, kept when keep_records, counted
 * always. */
void sim_trace_emit(struct sim *s, const char *event, json_t *fields);
/* True when a record's fields are printed or kept (a trace file or
 * keep_records); otherwise only its event is counted, and an emitter may
 * pass NULL fields instead of building them. */
bool sim_trace_wants_fields(const struct sim *s);
/* The sink handed to ctrl_set_trace: records from reconcilers whose event
 * the simulator derives itself (sim_trace_is_derived) are dropped; others
 * pass through sim_trace_emit. */
void sim_trace_sink(void *ctx, json_t *rec);
/* True for the event names of the trace contract (docs/sim.md). */
bool sim_trace_is_derived(const char *event);
/* True for a key the trace contract puts in records (time, event,
 * workload, clusterQueue, podSets, reason, ...: docs/sim.md). */
bool sim_trace_is_key(const char *key);
/* Append the line for a record ({"time"?, "event", ...}; time given in ms
 * since start) to sb: keys in the contract's fixed order, then the rest
 * sorted; no trailing newline. */
void sim_trace_format(struct sbuf *sb, int64_t rel_ms, const char *event, const json_t *fields);

/* ---- observe.c ---- */

struct sim_observer *sim_observer_new(struct sim *s);
void sim_observer_free(struct sim_observer *o);
/* Consume the store's events since the last call: emit trace records and
 * update the summary's state. Returns how many store writes it made itself
 * (bare Workloads finished or released); the caller steps again if > 0. */
int sim_observe(struct sim *s);
/* Earliest pending bare-Workload completion (absolute ms) or INT64_MAX. */
int64_t sim_observer_next_deadline(struct sim *s);
/* Finish the bare Workloads whose runtime is over. Returns writes made. */
int sim_observer_fire(struct sim *s);
/* True while the run has something left that can move on by itself: a
 * Workload neither finished nor deactivated, a Pod not done, or a bare
 * Workload's pending completion. Without --until the run completes when
 * this is false and no action or capacity revocation remains. */
bool sim_observer_busy(struct sim *s);
/* At the end of the run: warn about pods that never found a node (kept for
 * the summary's `unschedulablePods`). */
void sim_observer_finish(struct sim *s);
/* Number of unfinished workloads seen (pending or running). */
size_t sim_observer_unfinished(struct sim *s);
/* Build the summary object (see summary.c) at the end of the run. */
json_t *sim_observer_summary(struct sim *s);
/* The summary for its text form (sim_summary_text): without "perWorkload"
 * when there are more workloads than SIM_TEXT_MAX_WORKLOADS, which the
 * text does not list (it reads their number from workloads.total).
 * Otherwise as sim_observer_summary. New reference. */
json_t *sim_observer_summary_for_text(struct sim *s);

/* ---- usage.c ---- */

struct sim_usage; /* quota usage per ClusterQueue and flavor over time */

struct sim_usage *sim_usage_new(void);
void sim_usage_free(struct sim_usage *u);
/* A ClusterQueue appeared or changed (nominal quotas, class label): first
 * sight starts its observation window at now_ms. */
void sim_usage_cq_upsert(struct sim_usage *u, const json_t *cq, const char *class_label,
                         int64_t now_ms);
/* Add delta (Kueue units) of (flavor, resource) to a ClusterQueue's usage
 * at now_ms (delta < 0 removes). Unknown queues are created on the fly. */
void sim_usage_add(struct sim_usage *u, const char *cq, const char *flavor,
                   const char *resource, int64_t delta, int64_t now_ms);
/* Where one (ClusterQueue, flavor, resource) is accounted: its queue, the
 * index of the pair in the queue's list (entries are never removed, so it
 * stays valid while the list grows) and the flavor's total. */
struct cq_state;
struct flavor_state;
struct sim_usage_cell {
    struct cq_state *cq;
    size_t res;
    struct flavor_state *flavor;
};
/* The cell of (cq, flavor, resource), created at now_ms when new (as
 * sim_usage_add creates them; call it only for a delta != 0). */
struct sim_usage_cell sim_usage_cell(struct sim_usage *u, const char *cq, const char *flavor,
                                     const char *resource, int64_t now_ms);
/* sim_usage_add of delta (!= 0) to a cell: no name looked up. */
void sim_usage_cell_add(struct sim_usage_cell cell, int64_t delta, int64_t now_ms);
/* The usage part of the summary: {"clusterQueues": {...}, "clusterQueueClasses":
 * {...}, "flavors": {...}} (see docs/sim.md). New reference. */
json_t *sim_usage_summary(struct sim_usage *u, int64_t end_ms);

/* ---- summary.c ---- */

/* The text summary lists each workload up to this many workloads. */
#define SIM_TEXT_MAX_WORKLOADS 100

/* Nearest-rank percentile p (0..100) of sorted values v[0..n). 0 if n = 0. */
double sim_percentile(const double *sorted, size_t n, double p);
/* Render a summary object as text (caller frees). */
char *sim_summary_text(const json_t *summary);

/* ---- check.c ---- */

/* Match the scenario's expect facts against records (array of trace
 * objects with numeric "time") and warnings (array of the run's warning
 * texts, for warning facts; may be NULL). Writes a report to out; returns
 * the number of failed facts (0 = pass) or a negative code when the facts
 * are malformed (message in the report). */
int sim_check(const json_t *expect, const json_t *records, const json_t *warnings, FILE *out);

/* ---- driver.c ---- */

/* Build the simulation for a scenario. Returns 0 or a negative code with
 * *err (caller frees). */
int sim_new(const struct sim_scenario *sc, const struct sim_options *opt, struct sim **out,
            char **err);
/* Create the scenario's objects and run to completion / until. Returns 0 or
 * a negative code with *err. */
int sim_run(struct sim *s, char **err);
void sim_free(struct sim *s);

#endif
