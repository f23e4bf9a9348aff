/*
 * fuzz_api_decode: the path an API POST body takes before anything is
 * stored: YAML/JSON documents (api_parse_documents), each document's kind
 * (api_doc_kind) and admission (api_admit: decode against the schema,
 * defaults, validation), then the error message a rejected one gets. Any
 * crash, leak, sanitizer report or hang is a bug: bad input must only
 * ever give an error.
 */
#include "api/decode.h"
#include "api/object.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct diag d;
    diag_init(&d);
    json_t *docs = NULL;
    if (api_parse_documents((const char *)data, size, "fuzz", &docs, &d) == 0) {
        size_t i;
        json_t *doc;
        json_array_foreach(docs, i, doc) {
            struct diag dd;
            diag_init(&dd);
            const struct api_kind *k = api_doc_kind(doc, &dd);
            if (k) {
                json_t *copy = json_deep_copy(doc);
                int rc = api_admit(k, copy, NULL, "default", &dd);
                if (rc) {
                    char *msg = api_error_message(k, "fuzz", rc, &dd);
                    xfree(msg);
                } else {
                    /* an update of itself must pass the immutability rules */
                    json_t *again = json_deep_copy(copy);
                    struct diag du;
                    diag_init(&du);
                    api_admit(k, again, copy, "default", &du);
                    diag_release(&du);
                    json_decref(again);
                }
                json_decref(copy);
            }
            diag_release(&dd);
        }
        json_decref(docs);
    }
    diag_release(&d);
    return 0;
}
