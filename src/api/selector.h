/*
 * selector: label selectors, node affinity and taint/toleration matching,
 * with Kubernetes' semantics (k8s.io/apimachinery labels, the scheduler's
 * TaintToleration rules, and Kueue's flavor matching).
 */
#ifndef CUEUE_API_SELECTOR_H
#define CUEUE_API_SELECTOR_H

#include <jansson.h>
#include <stdbool.h>

#include "api/types.h"
#include "util/diag.h"

/* Parse a metav1.LabelSelector JSON object ({matchLabels, matchExpressions}
 * with operators In, NotIn, Exists, DoesNotExist) into *out (release with
 * api_label_selector_release, also on error). Invalid keys, values and
 * operators, In/NotIn without values and Exists/DoesNotExist with values
 * are recorded in d under field ("spec.namespaceSelector.matchExpressions[0]
 * .operator") and make it return CU_EINVAL; 0 otherwise. */
int api_label_selector_from_json(const json_t *v, const char *field,
                                 struct api_label_selector *out, struct diag *d);
/* Parse the query-string form of k8s.io/apimachinery labels.Parse
 * ("a=b,c==d,e!=f,g in (x,y),h notin (z),!i,j,k>3,l<4") into *out: = and ==
 * are In, != is NotIn, a bare key Exists, !key DoesNotExist. Keys must be
 * qualified names, values label values (integers for > and <). Returns 0
 * or CU_EBADREQ with one DIAG_SYNTAX cause ("unable to parse requirement
 * ... at offset N: why"); *out is empty on error. */
int api_label_selector_parse(const char *text, struct api_label_selector *out,
                             struct diag *d);
/* True when labels satisfy every requirement of sel (an empty selector
 * matches everything). */
bool api_label_selector_matches(const struct api_label_selector *sel,
                                const struct api_labels *labels);
/* True when one requirement is satisfied by labels: In needs the key with
 * one of the values; NotIn matches a missing key; Gt/Lt compare integers
 * (a non-integer label never matches). */
bool api_sel_req_matches(const struct api_sel_req *r, const struct api_labels *labels);
/* Decode a JSON string map into a sorted api_labels (non-strings ignored). */
void api_labels_from_json(const json_t *map, struct api_labels *out);
/* A NodeSelectorTerm's matchExpressions (In, NotIn, Exists, DoesNotExist,
 * Gt, Lt) from a validated document. Release with api_node_term_release. */
void api_node_term_from_json(const json_t *term, struct api_node_term *out);
/* Kubernetes node affinity semantics: terms are ORed, expressions of a
 * term ANDed; no terms at all matches every node; a term without
 * expressions matches none. (Kueue's flavor matching, which first drops
 * keys the flavor does not label, is the engine's.) */
bool api_node_terms_match(const struct api_node_term *terms, size_t n,
                          const struct api_labels *labels);
/* A taint ({key, value, effect}) from a validated document; out owns
 * copies ("" for absent fields). Release with api_taint_release. */
void api_taint_from_json(const json_t *v, struct api_taint *out);
/* A toleration from a validated document: operator defaults to "Equal",
 * absent strings become "". Release with api_toleration_release. */
void api_toleration_from_json(const json_t *v, struct api_toleration *out);
/* True when the toleration tolerates the taint (scheduler semantics: empty
 * key with Exists matches every taint; empty effect matches every effect). */
bool api_toleration_tolerates(const struct api_toleration *tol, const struct api_taint *taint);
/* True when some toleration in tols[0..n) tolerates the taint. */
bool api_tolerations_tolerate(const struct api_toleration *tols, size_t n,
                              const struct api_taint *taint);

#endif
