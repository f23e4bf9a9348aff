/*
 * duration: the simulator's range for durations (parsed by the one parser,
 * util/duration.h: "200ms", "1.5s", "10m", "1h30m", "2d", or a plain number
 * of seconds; not negative, at most 36500d), durations from JSON numbers,
 * and its trace time format (seconds with at most three decimals, printed
 * from integer milliseconds so the output never shows binary
 * floating-point noise).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "sim/sim-int.h"
#include "util/duration.h"
#include "util/err.h"

int sim_duration_ms(const char *text, int64_t *ms)
{
    int64_t v;
    int rc = cu_duration_parse_ms(text, &v, NULL);
    if (rc)
        return rc;
    if (v < 0)
        return CU_EINVAL;
    if (v > SIM_MAX_DURATION_MS)
        return CU_ELIMIT;
    *ms = v;
    return 0;
}

int sim_duration_json(const json_t *v, const char *field, int64_t *ms, struct diag *d)
{
    int rc = CU_EINVAL;
    bool negative = false;
    if (json_is_number(v)) {
        double secs = json_number_value(v);
        negative = secs < 0;
        if (!negative && isfinite(secs) && secs * 1000 <= (double)SIM_MAX_DURATION_MS) {
            *ms = (int64_t)llround(secs * 1000);
            return 0;
        }
        rc = negative ? CU_EINVAL : CU_ELIMIT;
    } else if (json_is_string(v)) {
        int64_t signed_ms;
        rc = cu_duration_parse_ms(json_string_value(v), &signed_ms, NULL);
        negative = !rc && signed_ms < 0;
        if (!rc && !negative && signed_ms <= SIM_MAX_DURATION_MS) {
            *ms = signed_ms;
            return 0;
        }
        if (!rc && !negative)
            rc = CU_ELIMIT;
    }
    if (negative)
        diag_addj(d, DIAG_INVALID, field, v, "must not be negative");
    else if (rc == CU_ELIMIT)
        diag_addj(d, DIAG_INVALID, field, v, "too large: at most %s (100 years)",
                  SIM_MAX_DURATION_TEXT);
    else
        diag_addj(d, DIAG_INVALID, field, v, "must be %s", CU_DURATION_FORMS);
    return CU_EINVAL;
}

char *sim_format_seconds(int64_t ms, char out[SIM_SECONDS_LEN])
{
    const char *sign = "";
    uint64_t u = (uint64_t)ms;
    if (ms < 0) {
        sign = "-";
        u = (uint64_t)0 - (uint64_t)ms;
    }
    uint64_t secs = u / 1000, frac = u % 1000;
    if (!frac) {
        snprintf(out, SIM_SECONDS_LEN, "%s%llu", sign, (unsigned long long)secs);
        return out;
    }
    char f[4];
    snprintf(f, sizeof(f), "%03llu", (unsigned long long)frac);
    for (int i = 2; i > 0 && f[i] == '0'; i--)
        f[i] = '\0';
    snprintf(out, SIM_SECONDS_LEN, "%s%llu.%s", sign, (unsigned long long)secs, f);
    return out;
}
