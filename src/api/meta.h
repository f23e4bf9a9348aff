/*
 * meta: helpers for the parts every Kubernetes object shares: conditions
 * (metav1.Condition semantics), owner references, labels and annotations.
 * Pure object logic over jansson documents; no I/O, time passed in.
 */
#ifndef CUEUE_API_META_H
#define CUEUE_API_META_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* A condition object's "type" string, or NULL when it has none (or not a
 * string). Borrowed from cond. Cheaper than a lookup when "type" is the
 * object's first member, as api_cond_set writes it (jansson keeps members
 * in insertion order); any other object is looked up. */
const char *api_cond_type(const json_t *cond);
/* The condition of this type in obj.status.conditions, or NULL. Borrowed. */
json_t *api_cond_get(const json_t *obj, const char *type);
/* api_cond_get for n types in one pass over the conditions: out[i] is the
 * (first) condition of types[i] or NULL. Borrowed. */
void api_cond_get_all(const json_t *obj, const char *const *types, size_t n,
                      const json_t **out);
/* api_cond_get_all over a conditions array in hand (conds: the value of
 * status.conditions, NULL or not an array: none found). Borrowed. */
void api_cond_find_all(const json_t *conds, const char *const *types, size_t n,
                       const json_t **out);
/* True when the condition exists with status "True". */
bool api_cond_is_true(const json_t *obj, const char *type);
/* True when cond, a condition object as api_cond_get or api_cond_get_all
 * give it (NULL: absent), has status "True": for callers that already
 * found it (metav1.IsStatusConditionTrue). */
bool api_cond_holds(const json_t *cond);
/* The condition's status ("True"/"False"/"Unknown"), or NULL when absent. */
const char *api_cond_status(const json_t *obj, const char *type);
/* Set a condition as metav1's SetStatusCondition does: lastTransitionTime
 * (RFC 3339, seconds) changes only when status changes; reason and message
 * are replaced; observedGeneration = metadata.generation. obj and its
 * status must be mutable; status.conditions is created when absent. The
 * conditions array and a condition object that are shared (held by another
 * reference too, e.g. a stored document: see store_status_copy) are
 * replaced by changed copies, never changed in place. A Workload's new
 * condition object may be one shared with other Workloads' documents (an
 * equal one set recently): never change it in place either. Returns true
 * when anything changed. */
bool api_cond_set(json_t *obj, const char *type, const char *status, const char *reason,
                  const char *message, int64_t now_ms);
/* Whether api_cond_set(obj, type, status, reason, message, ...) would
 * change anything (obj is only read): lets a caller that holds a stored,
 * immutable document copy it only when a condition really changes. */
bool api_cond_would_change(const json_t *obj, const char *type, const char *status,
                           const char *reason, const char *message);
/* Remove the condition of this type; true when one was removed. */
bool api_cond_remove(json_t *obj, const char *type);
/* ---- a Workload's state, derived once from its conditions ---- */

/* The furthest step a Workload has reached, as Kueue's workload.Status
 * names it (pkg/workload: "finished", "admitted", "quotaReserved",
 * "pending"): Finished beats Admitted beats a quota reservation. */
enum api_wl_phase { API_WL_PENDING, API_WL_QUOTA_RESERVED, API_WL_ADMITTED, API_WL_FINISHED };
/* What a Workload's conditions say, read in one pass (api_wl_state_of).
 * The flags are independent (a finished Workload may still hold its
 * reservation; an evicted one keeps QuotaReserved until the eviction is
 * done); phase is the summary Kueue shows. cueue counts a reservation
 * as held when quota_reserved and has_admission both hold
 * (api_wl_holds_reservation). */
struct api_wl_state {
    enum api_wl_phase phase;
    bool quota_reserved;      /* QuotaReserved True (Kueue's HasQuotaReservation) */
    bool has_admission;       /* status.admission present */
    bool admitted;            /* Admitted True */
    bool finished;            /* Finished True */
    bool evicted;             /* Evicted True */
    bool deactivation_target; /* DeactivationTarget True */
};
/* The state of wl (a Workload document; NULL or one without status:
 * pending, every flag false). The one definition of these flags: whatever
 * asks "is it admitted, finished, reserved, evicted" asks this, kq_wl_view's
 * copy of it, or a one-flag question (ctrl/kueue/wl.c) that reads only
 * its condition by the same rule. */
struct api_wl_state api_wl_state_of(const json_t *wl);
/* The state from conditions already found: cond[i] is the first condition
 * of type API_WL_STATE_TYPES[i] (NULL: absent), has_admission whether
 * status.admission is set. For callers that read the conditions in a pass
 * of their own (kq_wl_view). */
extern const char *const API_WL_STATE_TYPES[5];
struct api_wl_state api_wl_state_from(const json_t *const cond[5], bool has_admission);
/* The phase the flags of st give (Finished, then Admitted, then
 * QuotaReserved, else pending). */
enum api_wl_phase api_wl_phase_of(const struct api_wl_state *st);
/* The reservation is held: QuotaReserved True with status.admission set. */
static inline bool api_wl_holds_reservation(const struct api_wl_state *st)
{
    return st->quota_reserved && st->has_admission;
}
/* Kueue's name of a phase: "pending", "quotaReserved", "admitted", "finished". */
const char *api_wl_phase_name(enum api_wl_phase p);

/* lastTransitionTime of the condition in ms, or 0 when absent/unparseable. */
int64_t api_cond_time_ms(const json_t *obj, const char *type);
/* lastTransitionTime in ms of cond, a condition in hand (NULL: absent), or
 * 0 when absent/unparseable: api_cond_time_ms without the lookup. */
int64_t api_cond_ltt_ms(const json_t *cond);

/* A new ownerReference object naming owner (apiVersion, kind, name, uid;
 * controller and blockOwnerDeletion set when controller is true). */
json_t *api_owner_ref_new(const json_t *owner, bool controller);
/* Append an ownerReference to obj.metadata.ownerReferences (ref stolen). */
void api_owner_ref_add(json_t *obj, json_t *ref);
/* The uid of obj's controller ownerReference (controller: true), or NULL. */
const char *api_controller_uid(const json_t *obj);
/* True when obj has an ownerReference with this uid. */
bool api_is_owned_by(const json_t *obj, const char *owner_uid);

/* Label / annotation value or NULL (borrowed). */
const char *api_label(const json_t *obj, const char *key);
const char *api_annotation(const json_t *obj, const char *key);
/* Set a label / annotation (creating metadata maps as needed). */
void api_set_label(json_t *obj, const char *key, const char *value);
void api_set_annotation(json_t *obj, const char *key, const char *value);

/* metadata.name / namespace / uid / creationTimestamp (ms, 0 if absent). */
const char *api_name(const json_t *obj);
const char *api_namespace(const json_t *obj);
const char *api_uid(const json_t *obj);
int64_t api_creation_ms(const json_t *obj);
/* True when metadata.deletionTimestamp is set. */
bool api_is_deleting(const json_t *obj);

/* A new minimal object {"apiVersion","kind","metadata":{"name"[,"namespace"]}}. */
json_t *api_object_new(const char *api_version, const char *kind, const char *ns,
                       const char *name);

#endif
