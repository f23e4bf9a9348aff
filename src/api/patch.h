/*
 * patch: the Kubernetes API's three patch formats (JSON merge patch,
 * strategic merge patch, JSON patch), the one implementation the API
 * server's PATCH (server/patchreq.c) and the simulator's patch actions
 * (sim/apply.c) share, so the two cannot drift.
 */
#ifndef CUEUE_API_PATCH_H
#define CUEUE_API_PATCH_H

#include <jansson.h>
#include <stdbool.h>

/* target with patch merged in, as RFC 7386 says: an object patch merges
 * member by member (null deletes the member, an object merges into the
 * member, anything else, lists included, replaces it); a patch that is not
 * an object replaces the whole target. Both are borrowed and never
 * modified (target may be NULL); returns a new reference (scalars may be
 * shared with the inputs, as jx_deep_copy shares them). */
json_t *api_merge_patch(const json_t *target, const json_t *patch);

/* Kubernetes strategic merge patch for built-in kinds (lists merged by
 * their merge key, $patch, $setElementOrder, $retainKeys,
 * $deleteFromPrimitiveList). Merge keys and list types come from the kind's
 * api schema (root, api_schema_for_kind; NULL = none), walked alongside the
 * document; where it has no answer (pass-through) the built-in table of
 * api_merge_key decides. Returns a new document, or NULL with a message in
 * err for a malformed patch. */
struct api_schema;
json_t *api_strategic_merge_patch(const struct api_schema *root, const json_t *target,
                                  const json_t *patch, char *err, size_t errlen);
/* RFC 6902 JSON patch (add, remove, replace, move, copy, test). Returns a
 * new document, or NULL with a message in err. */
json_t *api_json_patch(const json_t *target, const json_t *ops, char *err, size_t errlen);
/* The fallback strategic-merge key of a list field (by field name and its
 * parent field name), e.g. ("spec", "containers") -> "name",
 * ("containers", "ports") -> "containerPort"; NULL when the list is
 * replaced whole. The standard Kubernetes patchMergeKey tags. */
const char *api_merge_key(const char *parent, const char *field);
/* Whether k takes a strategic merge patch: the built-in kinds (core and
 * batch groups) only; for the others (CRDs: Kueue's kinds, RayJob, JobSet,
 * ...) the API server answers 415, as Kubernetes does. */
struct api_kind;
bool api_patch_strategic_kind(const struct api_kind *k);

#endif
