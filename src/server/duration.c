/*
 * duration: Go-style durations for flags ("10m", "1h30m", "500ms", "7d").
 * Pure; no I/O.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "server/server.h"
#include "util/err.h"

static int unit_ms(const char **p, int64_t *mult)
{
    const char *s = *p;
    if (!strncmp(s, "ms", 2)) {
        *mult = 1;
        *p += 2;
    } else if (*s == 's') {
        *mult = 1000;
        *p += 1;
    } else if (*s == 'm') {
        *mult = 60 * 1000;
        *p += 1;
    } else if (*s == 'h') {
        *mult = 3600 * 1000;
        *p += 1;
    } else if (*s == 'd') {
        *mult = 86400 * 1000;
        *p += 1;
    } else {
        return CU_EINVAL;
    }
    return 0;
}

int srv_parse_duration_ms(const char *text, int64_t *out_ms)
{
    if (!text || !*text)
        return CU_EINVAL;
    const char *p = text;
    int64_t total = 0;
    bool any = false;
    while (*p) {
        if (!isdigit((unsigned char)*p))
            return CU_EINVAL;
        int64_t v = 0;
        while (isdigit((unsigned char)*p)) {
            if (v > (INT64_MAX - 9) / 10)
                return CU_EINVAL;
            v = v * 10 + (*p++ - '0');
        }
        int64_t mult;
        if (!*p && !any) {
            mult = 1000; /* a bare number: seconds */
        } else if (unit_ms(&p, &mult)) {
            return CU_EINVAL;
        }
        if (v > (INT64_MAX - total) / mult)
            return CU_EINVAL;
        total += v * mult;
        any = true;
    }
    *out_ms = total;
    return 0;
}
