/*
 * quantity: resource.Quantity text to int64 in Kueue's units (see
 * quantity.h). The number is kept exactly as a small big integer (up to
 * QTY_MAX_DIGITS significant digits; further digits only round up), scaled
 * by the suffix, then rounded away from zero as Quantity.Value() and
 * MilliValue() do. Anything that does not fit int64 in its unit saturates
 * at INT64_MAX (negatives at -INT64_MAX), which the engine reads as
 * Kueue's "Unlimited" amount (kueue#9843: a 1E cpu quota was taken as 0
 * until Kueue capped overflowing values; pkg/resources Amount).
 */
#include "api/quantity.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api-int.h"
#include "util/err.h"
#include "util/xalloc.h"

#define QTY_MAX_DIGITS 80
#define QTY_LIMBS 16 /* 512 bits: 10^80 * 2^60 < 2^327 */
#define QTY_MAX_EXP 100000

static const char QTY_REGEX_MSG[] =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

struct big {
    uint32_t l[QTY_LIMBS]; /* little-endian limbs */
};

/* b = b * m + a; false when it overflowed the fixed width */
static bool big_muladd(struct big *b, uint32_t m, uint32_t a)
{
    uint64_t carry = a;
    for (int i = 0; i < QTY_LIMBS; i++) {
        uint64_t t = (uint64_t)b->l[i] * m + carry;
        b->l[i] = (uint32_t)t;
        carry = t >> 32;
    }
    return carry == 0;
}

/* b = b / dv; returns the remainder */
static uint32_t big_div(struct big *b, uint32_t dv)
{
    uint64_t rem = 0;
    for (int i = QTY_LIMBS - 1; i >= 0; i--) {
        uint64_t cur = (rem << 32) | b->l[i];
        b->l[i] = (uint32_t)(cur / dv);
        rem = cur % dv;
    }
    return (uint32_t)rem;
}

static bool big_is_zero(const struct big *b)
{
    for (int i = 0; i < QTY_LIMBS; i++)
        if (b->l[i])
            return false;
    return true;
}

/* true when b <= INT64_MAX; sets *out */
static bool big_to_i64(const struct big *b, int64_t *out)
{
    for (int i = 2; i < QTY_LIMBS; i++)
        if (b->l[i])
            return false;
    uint64_t v = ((uint64_t)b->l[1] << 32) | b->l[0];
    if (v > (uint64_t)INT64_MAX)
        return false;
    *out = (int64_t)v;
    return true;
}

struct qty {
    bool neg;
    struct big mant;  /* significant digits */
    bool sticky;      /* nonzero digits were dropped past QTY_MAX_DIGITS */
    long e10;         /* decimal exponent */
    int b2;           /* binary exponent (Ki = 10 ... Ei = 60) */
};

static const struct {
    const char *s;
    int e10, b2;
} suffixes[] = {
    {"", 0, 0},    {"n", -9, 0}, {"u", -6, 0}, {"m", -3, 0},  {"k", 3, 0},   {"M", 6, 0},
    {"G", 9, 0},   {"T", 12, 0}, {"P", 15, 0}, {"E", 18, 0},  {"Ki", 0, 10}, {"Mi", 0, 20},
    {"Gi", 0, 30}, {"Ti", 0, 40}, {"Pi", 0, 50}, {"Ei", 0, 60},
};

/* Parse "e<int>"/"E<int>" or an SI/binary suffix. */
static bool parse_suffix(const char *s, struct qty *q)
{
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        if (!strcmp(s, suffixes[i].s)) {
            q->e10 += suffixes[i].e10;
            q->b2 = suffixes[i].b2;
            return true;
        }
    }
    if ((s[0] != 'e' && s[0] != 'E') || !s[1])
        return false;
    const char *p = s + 1;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (!*p)
        return false;
    long e = 0;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return false;
        if (e < QTY_MAX_EXP)
            e = e * 10 + (*p - '0');
    }
    q->e10 += neg ? -e : e;
    return true;
}

/* The numeric part: [+-]?digits[.digits]; returns the suffix start or NULL. */
static const char *parse_number(const char *s, struct qty *q, char *err, size_t errlen)
{
    const char *p = s;
    if (*p == '+' || *p == '-')
        q->neg = *p++ == '-';
    bool dot = false, any = false;
    int ndig = 0;
    for (; (*p >= '0' && *p <= '9') || *p == '.'; p++) {
        if (*p == '.') {
            if (dot) {
                snprintf(err, errlen, "unable to parse numeric part of quantity");
                return NULL;
            }
            dot = true;
            continue;
        }
        any = true;
        int c = *p - '0';
        if (ndig == 0 && c == 0) {
            if (dot)
                q->e10--;
        } else if (ndig < QTY_MAX_DIGITS) {
            big_muladd(&q->mant, 10, (uint32_t)c);
            ndig++;
            if (dot)
                q->e10--;
        } else {
            if (!dot)
                q->e10++;
            q->sticky |= c != 0;
        }
    }
    if (!any) {
        snprintf(err, errlen, "%s", QTY_REGEX_MSG);
        return NULL;
    }
    return p;
}

/* value * 10^exp10, rounded away from zero, into *out, saturating at
 * +-INT64_MAX. Always 0. */
static int scale(struct qty *q, int exp10, int64_t *out)
{
    struct big n = q->mant;
    long e = q->e10 + exp10;
    bool inexact = q->sticky;
    bool over = false;
    for (int i = 0; i < q->b2 / 10 && !over; i++)
        over = !big_muladd(&n, 1024, 0);
    if (!big_is_zero(&n)) {
        for (; e > 0 && !over; e--) {
            int64_t tmp;
            over = !big_muladd(&n, 10, 0) || !big_to_i64(&n, &tmp);
        }
        for (; e < 0 && !big_is_zero(&n); e++)
            inexact |= big_div(&n, 10) != 0;
    }
    if (inexact && !over)
        over = !big_muladd(&n, 1, 1); /* round away from zero */
    int64_t v = 0;
    if (over || !big_to_i64(&n, &v))
        v = INT64_MAX; /* saturate: Kueue's Unlimited */
    *out = q->neg ? -v : v;
    return 0;
}

bool api_resource_is_milli(const char *resource)
{
    return resource && !strcmp(resource, "cpu");
}

/* Parse text into q; 0 or CU_EINVAL with the reason in err. */
static int parse_text(const char *text, struct qty *q, char *err, size_t errlen)
{
    if (!text || !text[0]) {
        snprintf(err, errlen, "%s", QTY_REGEX_MSG);
        return CU_EINVAL;
    }
    memset(q, 0, sizeof(*q));
    const char *suffix = parse_number(text, q, err, errlen);
    if (!suffix)
        return CU_EINVAL;
    for (const char *p = suffix; *p; p++) {
        if (!strchr("eEinumkKMGTP+-0123456789", *p)) {
            snprintf(err, errlen, "%s", QTY_REGEX_MSG);
            return CU_EINVAL;
        }
    }
    if (!parse_suffix(suffix, q)) {
        snprintf(err, errlen, "unable to parse quantity's suffix");
        return CU_EINVAL;
    }
    return 0;
}

/*
 * api__quantity_quick: the fast path for the common shapes: [+-]?digits[.digits] (at most 18 digits)
 * followed by nothing or one exact SI/binary suffix. Computes the same value
 * as parse_text + scale (exact product, then rounding away from zero) in
 * 64-bit arithmetic; returns false, leaving *out alone, for anything else or
 * anything near overflow, so the general parser decides (and words any error).
 */
bool api__quantity_quick(const char *text, int exp10, int64_t *out)
{
    const char *p = text;
    bool neg = false;
    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (*p < '0' || *p > '9')
        return false;
    uint64_t m = 0;
    int nd = 0, e = exp10;
    for (; *p >= '0' && *p <= '9'; p++, nd++)
        m = m * 10 + (uint64_t)(*p - '0');
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return false;
        for (; *p >= '0' && *p <= '9'; p++, nd++, e--)
            m = m * 10 + (uint64_t)(*p - '0');
    }
    if (nd > 18)
        return false;
    int b2 = 0;
    if (*p) {
        bool bin = p[1] == 'i' && !p[2];
        if (!bin && p[1])
            return false;
        switch (*p) {
        case 'n': e -= 9; break;
        case 'u': e -= 6; break;
        case 'm': e -= 3; break;
        case 'k': e += 3; break;
        case 'K': b2 = 10; break;
        case 'M': bin ? (b2 = 20) : (e += 6); break;
        case 'G': bin ? (b2 = 30) : (e += 9); break;
        case 'T': bin ? (b2 = 40) : (e += 12); break;
        case 'P': bin ? (b2 = 50) : (e += 15); break;
        case 'E': bin ? (b2 = 60) : (e += 18); break;
        default: return false;
        }
        if (bin != (b2 != 0))
            return false; /* "Ki" only binary; "ni", "ki"... not suffixes */
    }
    if (b2 && m > ((uint64_t)INT64_MAX >> b2))
        return false;
    m <<= b2;
    for (; e > 0; e--) {
        if (m > (uint64_t)INT64_MAX / 10)
            return false;
        m *= 10;
    }
    if (e < 0) {
        if (e < -18)
            return false;
        uint64_t d = 1;
        for (; e < 0; e++)
            d *= 10;
        m = m / d + (m % d != 0); /* round away from zero */
    }
    *out = neg ? -(int64_t)m : (int64_t)m;
    return true;
}

int api_quantity_parse(const char *text, const char *resource, int64_t *out, char *err,
                       size_t errlen)
{
    if (text && api__quantity_quick(text, api_resource_is_milli(resource) ? 3 : 0, out)) {
        if (err && errlen)
            err[0] = '\0';
        return 0;
    }
    char dummy[8];
    if (!err || !errlen) {
        err = dummy;
        errlen = sizeof(dummy);
    }
    err[0] = '\0';
    struct qty q;
    int rc = parse_text(text, &q, err, errlen);
    if (rc)
        return rc;
    return scale(&q, api_resource_is_milli(resource) ? 3 : 0, out);
}

int api__quantity_parse_general(const char *text, int exp10, int64_t *out)
{
    char err[8];
    struct qty q;
    int rc = parse_text(text, &q, err, sizeof(err));
    return rc ? rc : scale(&q, exp10, out);
}

int api__quantity_parse_scaled(const char *text, int exp10, int64_t *out)
{
    if (text && api__quantity_quick(text, exp10, out))
        return 0;
    char err[8];
    struct qty q;
    int rc = parse_text(text, &q, err, sizeof(err));
    return rc ? rc : scale(&q, exp10, out);
}

int api_quantity_from_json(const json_t *v, const char *resource, const char *field,
                           int64_t *out, struct diag *d)
{
    char text[64];
    const char *s = NULL;
    if (json_is_string(v)) {
        s = json_string_value(v);
    } else if (json_is_integer(v) || (json_is_real(v) && isfinite(json_real_value(v)))) {
        api__number_text(v, text, sizeof(text));
        s = text;
    } else {
        if (d)
            diag_addj(d, DIAG_TYPE_INVALID, field, v, "expected a quantity (string or number)");
        return CU_EINVAL;
    }
    char err[256];
    if (api_quantity_parse(s, resource, out, err, sizeof(err)) < 0) {
        if (d)
            api__diag_str(d, DIAG_INVALID, field, s, "%s", err);
        return CU_EINVAL;
    }
    return 0;
}

char *api_quantity_format(int64_t value, const char *resource)
{
    if (value < 0) {
        uint64_t mag = value == INT64_MIN ? (uint64_t)INT64_MAX + 1 : (uint64_t)-value;
        if (mag > (uint64_t)INT64_MAX) /* cannot negate: print plainly */
            return xasprintf("%" PRId64 "%s", value, api_resource_is_milli(resource) ? "m" : "");
        char *pos = api_quantity_format((int64_t)mag, resource);
        char *s = xasprintf("-%s", pos);
        xfree(pos);
        return s;
    }
    if (api_resource_is_milli(resource)) {
        if (value % 1000 == 0)
            return xasprintf("%" PRId64, value / 1000);
        return xasprintf("%" PRId64 "m", value);
    }
    if (value == 0)
        return xstrdup("0");
    static const char *const bin[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    static const char *const dec[] = {"", "k", "M", "G", "T", "P", "E"};
    int bi = 0;
    int64_t bv = value;
    while (bi < 6 && bv % 1024 == 0) {
        bv /= 1024;
        bi++;
    }
    if (bi > 0)
        return xasprintf("%" PRId64 "%s", bv, bin[bi]);
    int di = 0;
    int64_t dv = value;
    while (di < 6 && dv % 1000 == 0) {
        dv /= 1000;
        di++;
    }
    return xasprintf("%" PRId64 "%s", dv, dec[di]);
}
