/*
 * fuzz_api_merge_patch: JSON merge patch (RFC 7386, api_merge_patch) as a
 * PATCH body applies it: the input is a target document, a NUL byte, and a
 * patch (JSON or YAML, as the API decodes bodies). Neither input may be
 * changed; patching the result with itself gives it back without its null
 * members (a merge patch deletes those).
 */
#include <stdlib.h>

#include "api/decode.h"
#include "api/patch.h"
#include "fuzz.h"

static json_t *first_doc(const char *text, size_t len)
{
    struct diag d;
    diag_init(&d);
    json_t *docs = NULL;
    json_t *v = NULL;
    if (api_parse_documents(text, len, "fuzz", &docs, &d) == 0 && json_array_size(docs))
        v = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    diag_release(&d);
    return v;
}

/* v without its null object members, recursively through objects (what
 * merging an object into itself gives: RFC 7386 deletes null members). */
static json_t *strip_nulls(const json_t *v)
{
    if (!json_is_object(v))
        return json_deep_copy(v);
    json_t *out = json_object();
    const char *k;
    json_t *m;
    json_object_foreach((json_t *)v, k, m) {
        if (!json_is_null(m))
            json_object_set_new(out, k, strip_nulls(m));
    }
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    if (!nul)
        return 0;
    json_t *target = first_doc(text, (size_t)(nul - text));
    json_t *patch = first_doc(nul + 1, size - (size_t)(nul - text) - 1);
    if (patch) {
        json_t *t0 = target ? json_deep_copy(target) : NULL;
        json_t *p0 = json_deep_copy(patch);
        json_t *out = api_merge_patch(target, patch);
        if (!out || (target && !json_equal(target, t0)) || !json_equal(patch, p0))
            abort(); /* the inputs are borrowed, never changed */
        json_t *again = api_merge_patch(out, out);
        json_t *want = strip_nulls(out);
        if (!json_equal(again, want))
            abort(); /* merged with itself: itself without its null members */
        json_decref(want);
        json_decref(again);
        json_decref(out);
        json_decref(t0);
        json_decref(p0);
    }
    json_decref(target);
    json_decref(patch);
    return 0;
}
