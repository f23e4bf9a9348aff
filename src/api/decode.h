/*
 * decode: YAML (libyaml) or JSON text to JSON documents. Multi-document
 * streams ("---") give one document each; empty documents are skipped.
 * Scalars are typed the way Kubernetes' YAML decoder does (sigs.k8s.io/yaml):
 * unquoted ints, floats, true/false and null become JSON numbers, booleans
 * and null; quoted scalars stay strings. Size and nesting depth are capped.
 */
#ifndef CUEUE_API_DECODE_H
#define CUEUE_API_DECODE_H

#include <jansson.h>
#include <stddef.h>

#include "util/diag.h"

#define API_MAX_DOCUMENT_BYTES ((size_t)3 << 20) /* Kubernetes' 3 MiB request limit */
#define API_MAX_DEPTH 100

/* Parse text[0..len) into *docs_out, a new JSON array of documents.
 * source names the input in messages ("dws-tpu-queue.yaml", "-").
 * Returns 0, CU_ELIMIT (too large or too deep) or CU_EBADREQ (syntax error,
 * a DIAG_SYNTAX cause naming line and column, or a top-level value that is
 * not a mapping). On error *docs_out is NULL. */
int api_parse_documents(const char *text, size_t len, const char *source, json_t **docs_out,
                        struct diag *d);

#endif
