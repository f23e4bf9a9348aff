/*
 * patch: JSON merge patch (RFC 7386), the one implementation the API
 * server's PATCH (server/patchreq.c) and the simulator's patch actions
 * (sim/apply.c) share, so the two cannot drift. Strategic merge patch and
 * JSON patch (RFC 6902) stay in server/patch.c (only the API takes them).
 */
#ifndef CUEUE_API_PATCH_H
#define CUEUE_API_PATCH_H

#include <jansson.h>

/* target with patch merged in, as RFC 7386 says: an object patch merges
 * member by member (null deletes the member, an object merges into the
 * member, anything else, lists included, replaces it); a patch that is not
 * an object replaces the whole target. Both are borrowed and never
 * modified (target may be NULL); returns a new reference (scalars may be
 * shared with the inputs, as jx_deep_copy shares them). */
json_t *api_merge_patch(const json_t *target, const json_t *patch);

#endif
