/*
 * fuzz_api_merge_patch: JSON merge patch (RFC 7386, api_merge_patch) as a
 * PATCH body applies it: the input is a target document, a NUL byte, and a
 * patch (JSON or YAML, as the API decodes bodies). Neither input may be
 * changed; patching with the result's own content is a no-op.
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
        if (!json_equal(again, out))
            abort(); /* an object merged with itself is itself */
        json_decref(again);
        json_decref(out);
        json_decref(t0);
        json_decref(p0);
    }
    json_decref(target);
    json_decref(patch);
    return 0;
}
