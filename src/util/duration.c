/*
 * duration: Go's time.ParseDuration grammar plus bare seconds and days
 * (util/duration.h). Integer arithmetic only: a unit is m * 10^j ns with
 * m <= 864, so a fraction f / 10^k of it is f * m * 10^(j-k), exact when
 * k <= j and truncated otherwise; f keeps at most 15 digits, so f * m never
 * overflows.
 */
#include "util/duration.h"

#include <stdbool.h>
#include <string.h>

#include "util/err.h"

#define FRAC_DIGITS_MAX 15

struct unit {
    const char *name;
    int64_t mant; /* the unit is mant * 10^exp10 ns */
    int exp10;
};

/* longest names first where one is a prefix of another ("ms" before "m") */
static const struct unit units[] = {
    {"ns", 1, 0},        {"us", 1, 3},  {"\xc2\xb5s", 1, 3}, {"\xce\xbcs", 1, 3},
    {"ms", 1, 6},        {"s", 1, 9},   {"m", 6, 10},        {"h", 36, 11},
    {"d", 864, 11},
};

static const int64_t pow10_tab[] = {
    1LL,           10LL,           100LL,           1000LL,           10000LL,
    100000LL,      1000000LL,      10000000LL,      100000000LL,      1000000000LL,
    10000000000LL, 100000000000LL, 1000000000000LL, 10000000000000LL, 100000000000000LL,
    1000000000000000LL,
};

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* a + b into *sum unless it passes INT64_MAX (both non-negative) */
static bool add_ok(int64_t a, int64_t b, int64_t *sum)
{
    if (a > INT64_MAX - b)
        return false;
    *sum = a + b;
    return true;
}

/* The unit at *p (advanced past it), or NULL. Go reads the unit as every
 * character up to the next digit or '.', so "5mss" is the unknown unit
 * "mss", not "5m" then junk. */
static const struct unit *unit_at(const char **p)
{
    size_t n = strcspn(*p, "0123456789.");
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strlen(units[i].name) == n && !strncmp(*p, units[i].name, n)) {
            *p += n;
            return &units[i];
        }
    return NULL;
}

/* whole * unit + frac / 10^nfrac * unit, in ns, into *out. */
static int component_ns(int64_t whole, int64_t frac, int nfrac, const struct unit *u,
                        int64_t *out)
{
    int64_t unit_ns = u->mant * pow10_tab[u->exp10];
    if (whole > INT64_MAX / unit_ns)
        return CU_ELIMIT;
    int64_t v = whole * unit_ns, f = frac * u->mant; /* < 10^15 * 864 */
    if (nfrac <= u->exp10) {
        int64_t scale = pow10_tab[u->exp10 - nfrac];
        if (f > INT64_MAX / scale)
            return CU_ELIMIT;
        f *= scale;
    } else {
        f /= pow10_tab[nfrac - u->exp10];
    }
    return add_ok(v, f, out) ? 0 : CU_ELIMIT;
}

/* A number at *p: digits, an optional '.' and digits, at least one digit.
 * CU_ELIMIT when the integer part passes INT64_MAX. */
static int number_at(const char **p, int64_t *whole, int64_t *frac, int *nfrac)
{
    const char *s = *p;
    bool any = false;
    *whole = *frac = 0;
    *nfrac = 0;
    int rc = 0;
    for (; is_digit(*s); s++, any = true) {
        if (*whole > (INT64_MAX - 9) / 10)
            rc = CU_ELIMIT; /* keep reading: the syntax still decides first */
        else
            *whole = *whole * 10 + (*s - '0');
    }
    if (*s == '.')
        for (s++; is_digit(*s); s++, any = true)
            if (*nfrac < FRAC_DIGITS_MAX) {
                *frac = *frac * 10 + (*s - '0');
                ++*nfrac;
            }
    if (!any)
        return CU_EINVAL;
    *p = s;
    return rc;
}

int cu_duration_parse_ns(const char *text, int64_t *ns, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    if (!text || !*text) {
        *why = "empty";
        return CU_EINVAL;
    }
    const char *p = text;
    bool neg = *p == '-';
    if (*p == '-' || *p == '+')
        p++;
    if (!strcmp(p, "0")) {
        *ns = 0;
        return 0;
    }
    int64_t total = 0;
    int limit = 0;
    bool first = true;
    do {
        int64_t whole, frac;
        int nfrac;
        int rc = number_at(&p, &whole, &frac, &nfrac);
        if (rc == CU_EINVAL) {
            *why = first ? "must start with a number" : "expected a number after the unit";
            return CU_EINVAL;
        }
        if (rc)
            limit = rc;
        const struct unit *u;
        static const struct unit seconds = {"s", 1, 9};
        if (first && !*p) {
            u = &seconds; /* a bare number: seconds */
        } else if (!*p) {
            *why = "missing unit after the last number (ns, us, ms, s, m, h, d)";
            return CU_EINVAL;
        } else if (!(u = unit_at(&p))) {
            *why = "unknown unit (use ns, us, ms, s, m, h or d)";
            return CU_EINVAL;
        }
        int64_t v;
        if (!limit && (component_ns(whole, frac, nfrac, u, &v) || !add_ok(total, v, &total)))
            limit = CU_ELIMIT;
        first = false;
    } while (*p);
    if (limit) {
        *why = "too large: longer than 2562047h (292 years)";
        return limit;
    }
    *ns = neg ? -total : total;
    return 0;
}

int cu_duration_parse_ms(const char *text, int64_t *ms, const char **why)
{
    int64_t ns;
    int rc = cu_duration_parse_ns(text, &ns, why);
    if (rc)
        return rc;
    /* half away from zero; |ns| <= INT64_MAX so the sums cannot overflow */
    *ms = ns >= 0 ? (ns / 500000 + 1) / 2 : -((-ns / 500000 + 1) / 2);
    return 0;
}
