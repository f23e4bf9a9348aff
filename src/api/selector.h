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

/* Parse a metav1.LabelSelector JSON object. Errors go to d under field. */
int api_label_selector_from_json(const json_t *v, const char *field,
                                 struct api_label_selector *out, struct diag *d);
/* Parse the query-string form ("a=b,c!=d,e in (x,y),!f,g"). Returns 0 or
 * CU_EBADREQ with a message in d. */
int api_label_selector_parse(const char *text, struct api_label_selector *out,
                             struct diag *d);
/* True when labels satisfy every requirement of sel. */
bool api_label_selector_matches(const struct api_label_selector *sel,
                                const struct api_labels *labels);
/* True when one requirement is satisfied by labels. */
bool api_sel_req_matches(const struct api_sel_req *r, const struct api_labels *labels);
/* Decode a JSON string map into a sorted api_labels (non-strings ignored). */
void api_labels_from_json(const json_t *map, struct api_labels *out);
/* True when the toleration tolerates the taint (scheduler semantics: empty
 * key with Exists matches every taint; empty effect matches every effect). */
bool api_toleration_tolerates(const struct api_toleration *tol, const struct api_taint *taint);
/* True when some toleration in tols[0..n) tolerates the taint. */
bool api_tolerations_tolerate(const struct api_toleration *tols, size_t n,
                              const struct api_taint *taint);

#endif
