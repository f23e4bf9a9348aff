/*
 * quantity: Kubernetes resource.Quantity syntax ("500m", "2", "4Gi",
 * "1e3", "1000000000Gi", "0.5") to int64 in Kueue's units: milli-units for
 * cpu, whole units (bytes for memory) for every other resource, fractional
 * values rounded up as Quantity.Value() does.
 */
#ifndef CUEUE_API_QUANTITY_H
#define CUEUE_API_QUANTITY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/diag.h"

/* True when the resource is counted in milli-units (only "cpu"). */
bool api_resource_is_milli(const char *resource);
/* Parse text as a quantity of resource: [+-]number[.fraction] then a
 * suffix: binary Ki Mi Gi Ti Pi Ei, decimal n u m "" k M G T P E, or an
 * exponent e<int>/E<int>. The exact value is scaled to the resource's unit
 * (cpu: milli) and rounded away from zero (ceil for positives), as
 * Quantity.MilliValue()/Value() do; it is exact up to 80 significant
 * digits. Returns 0 and sets *out, or CU_EINVAL with a reason
 * ("quantities must match the regular expression ...", "unable to parse
 * quantity's suffix") in err[0..errlen) (err may be NULL). Every quantity
 * Kubernetes accepts parses: a value that does not fit int64 in its unit
 * (`1E` of cpu is 10^21 milli) saturates at INT64_MAX (-INT64_MAX when
 * negative), Kueue's "Unlimited" since its fix for huge quotas; the text
 * as written is what objects keep and show. Negative values parse (the
 * caller decides whether they are allowed). */
int api_quantity_parse(const char *text, const char *resource, int64_t *out, char *err,
                       size_t errlen);
/* Parse a JSON string or number as a quantity (numbers are read from their
 * shortest decimal text, so 0.1 is exactly 0.1). On failure records a
 * DIAG_INVALID cause at `field` in d (DIAG_TYPE_INVALID for other JSON
 * types; nothing when d is NULL) and returns CU_EINVAL. */
int api_quantity_from_json(const json_t *v, const char *resource, const char *field,
                           int64_t *out, struct diag *d);
/* Canonical text for value in resource's units: cpu 1500 -> "1500m",
 * 2000 -> "2"; other resources take the largest binary suffix that divides
 * exactly (4294967296 -> "4Gi"), else the largest decimal one (1000 ->
 * "1k"), else plain digits; negatives get a leading '-'. Parsing the text
 * gives value back. Caller frees with xfree. */
char *api_quantity_format(int64_t value, const char *resource);

#endif
