/*
 * duration: the simulator's durations ("200ms", "1.5s", "10m", "1h30m",
 * "2d", or a plain number of seconds) and its trace time format (seconds
 * with at most three decimals, printed from integer milliseconds so the
 * output never shows binary floating-point noise).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "sim/sim-int.h"
#include "util/err.h"

static int unit_ms(const char **p, double *mult)
{
    static const struct {
        const char *name;
        double ms;
    } units[] = {{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
    /* "ms" before "m": the longest unit that matches wins */
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        size_t n = strlen(units[i].name);
        if (!strncmp(*p, units[i].name, n) && !isalpha((unsigned char)(*p)[n])) {
            *mult = units[i].ms;
            *p += n;
            return 0;
        }
    }
    return CU_EINVAL;
}

/* A number at *p: plain decimal digits, or (lenient) anything strtod reads
 * such as 1e300, which only serves to tell "too large" from "malformed". */
static int number(const char **p, double *out, bool lenient)
{
    const char *s = *p;
    if (!isdigit((unsigned char)*s) && !(*s == '.' && isdigit((unsigned char)s[1])))
        return CU_EINVAL;
    char *end;
    *out = strtod(s, &end);
    if (end == s)
        return CU_EINVAL;
    /* strtod also reads exponents and hex; a duration number is plain */
    for (const char *q = s; q < end && !lenient; q++)
        if (!isdigit((unsigned char)*q) && *q != '.')
            return CU_EINVAL;
    *p = end;
    return 0;
}

static int parse(const char *text, double *total_ms, bool lenient)
{
    if (!text || !*text)
        return CU_EINVAL;
    const char *p = text;
    double total = 0;
    double v;
    if (number(&p, &v, lenient))
        return CU_EINVAL;
    if (!*p) { /* plain seconds */
        total = v * 1000;
    } else {
        for (;;) {
            double mult;
            if (unit_ms(&p, &mult))
                return CU_EINVAL;
            total += v * mult;
            if (!*p)
                break;
            if (number(&p, &v, lenient))
                return CU_EINVAL;
        }
    }
    *total_ms = total;
    return 0;
}

int sim_duration_parse(const char *text, int64_t *ms)
{
    double total;
    if (parse(text, &total, false)) {
        /* malformed, unless it is a number far too large in another notation */
        return !parse(text, &total, true) && !(total <= (double)SIM_MAX_DURATION_MS)
                   ? CU_ELIMIT
                   : CU_EINVAL;
    }
    if (!isfinite(total) || total > (double)SIM_MAX_DURATION_MS)
        return CU_ELIMIT;
    *ms = (int64_t)llround(total);
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
        const char *t = json_string_value(v);
        rc = sim_duration_parse(t, ms);
        if (!rc)
            return 0;
        negative = t[strspn(t, " ")] == '-';
    }
    if (negative)
        diag_addj(d, DIAG_INVALID, field, v, "must not be negative");
    else if (rc == CU_ELIMIT)
        diag_addj(d, DIAG_INVALID, field, v, "too large: at most %s (100 years)",
                  SIM_MAX_DURATION_TEXT);
    else
        diag_addj(d, DIAG_INVALID, field, v,
                  "must be a duration such as 200ms, 1.5s, 10m, 1h30m or 2d (plain decimal "
                  "numbers), or a number of seconds");
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
