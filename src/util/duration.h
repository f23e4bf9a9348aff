/*
 * duration: the one duration parser of cueue (server flags, sim scenarios,
 * CLI flags). Grammar: Go's time.ParseDuration, which Kubernetes and Kueue
 * use, plus two forms cueue has always accepted:
 *
 *   [-+] ( <number> <unit> )+        "300ms", "1.5h", "1h30m", "-1.5h", ".5s"
 *   "0"                              zero, without a unit
 *   [-+] <number>                    a bare number of seconds: "30", "0.5"
 *   units  ns, us, µs (U+00B5), μs (U+03BC), ms, s, m, h, and d (24h, ours)
 *   number digits with an optional fraction: "1", "1.", ".5", "1.25"
 *
 * No spaces, exponents or hex. Values are exact integer nanoseconds: the
 * fraction is applied with integer arithmetic (digits beyond the 15th after
 * the point are dropped, as are sub-nanosecond remainders: truncation toward
 * zero, like Go). Pure; no I/O.
 */
#ifndef CUEUE_UTIL_DURATION_H
#define CUEUE_UTIL_DURATION_H

#include <stdint.h>

/* What the parser accepts, for error messages ("must be " CU_DURATION_FORMS). */
#define CU_DURATION_FORMS                                                                  \
    "a duration such as 300ms, 1.5s, 10m, 1h30m, 1.5h or 7d, or a number of seconds"

/* Parse text into *ns (signed nanoseconds). Returns 0; CU_EINVAL when text
 * is not a duration (empty, no digits, unknown or missing unit, spaces...);
 * CU_ELIMIT when its magnitude does not fit int64 nanoseconds (about 292
 * years). *ns is written on success only. When why is not NULL it is set on
 * error to a static phrase naming the rule broken ("unknown unit", ...). */
int cu_duration_parse_ns(const char *text, int64_t *ns, const char **why);

/* As cu_duration_parse_ns, in milliseconds rounded to the nearest (halves
 * away from zero): "1.5h" -> 5400000, "0.0005s" -> 1. */
int cu_duration_parse_ms(const char *text, int64_t *ms, const char **why);

#endif
