/*
 * timefmt: RFC 3339 timestamps as the Kubernetes API writes them. Times are
 * int64 milliseconds since the Unix epoch throughout cueue.
 */
#ifndef CUEUE_UTIL_TIMEFMT_H
#define CUEUE_UTIL_TIMEFMT_H

#include <stdbool.h>
#include <stdint.h>

#define TIMEFMT_LEN 32

/* Write "2026-11-30T10:00:00Z" (with_ms: "2026-11-30T10:00:00.123Z") into
 * out, which must hold TIMEFMT_LEN bytes. Returns out. */
char *timefmt_rfc3339(int64_t ms, bool with_ms, char out[TIMEFMT_LEN]);
/* Parse RFC 3339 (fractional seconds and numeric offsets accepted).
 * Returns 0 and sets *ms, or CU_EINVAL. */
int timefmt_parse(const char *s, int64_t *ms);
/* Kubernetes-style short age: "5s", "3m12s", "7h", "2d3h", "400d". */
char *timefmt_age(int64_t age_ms, char out[TIMEFMT_LEN]);

#endif
