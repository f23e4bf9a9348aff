/*
 * decode: YAML (libyaml) or JSON text to JSON documents. Multi-document
 * streams ("---") give one document each; empty documents are skipped.
 * Scalars are typed the way Kubernetes' YAML decoder does (sigs.k8s.io/yaml
 * over go-yaml v2, YAML 1.1 resolution, no target type): unquoted ints
 * (Go base prefixes), floats, booleans (true/false and also yes/no/on/off/
 * y/n in their go-yaml spellings, as kubectl and the API server read them)
 * and null become JSON numbers, booleans and null; quoted and block scalars
 * stay strings; standard tags (!!str, !!int...) are honoured. Anchors are
 * expanded by copying. Size, nesting depth and alias expansion are capped.
 * See docs/api.md.
 */
#ifndef CUEUE_API_DECODE_H
#define CUEUE_API_DECODE_H

#include <jansson.h>
#include <stddef.h>

#include "util/diag.h"

#define API_MAX_DOCUMENT_BYTES ((size_t)3 << 20) /* Kubernetes' 3 MiB request limit */
#define API_MAX_DEPTH 100
/* Whole input (a multi-document file given to the CLI). */
#define API_MAX_STREAM_BYTES ((size_t)64 << 20)
/* Nodes that alias expansion may create per input ("billion laughs" guard). */
#define API_MAX_ALIAS_NODES ((size_t)1 << 20)

/* Parse text[0..len) into *docs_out, a new JSON array of documents (each a
 * JSON object; documents that are empty or null are skipped). Text whose
 * first non-blank character is '{' is tried as a stream of JSON objects
 * first, then as YAML. source names the input in messages
 * ("dws-tpu-queue.yaml", "-"); callers read files or stdin themselves.
 * Returns 0, CU_ELIMIT (a document over API_MAX_DOCUMENT_BYTES, input over
 * API_MAX_STREAM_BYTES, nesting over API_MAX_DEPTH, alias expansion over
 * API_MAX_ALIAS_NODES) or CU_EBADREQ (syntax error, duplicate mapping key,
 * unknown anchor, non-finite number, NUL in a string, or a top-level value
 * that is not a mapping); each error is one DIAG_SYNTAX cause whose detail
 * reads "<source>: yaml: line L, column C: <problem>". On error *docs_out
 * is NULL. Caller frees *docs_out with json_decref. */
int api_parse_documents(const char *text, size_t len, const char *source, json_t **docs_out,
                        struct diag *d);

#endif
