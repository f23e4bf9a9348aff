/* timefmt: RFC 3339 formatting and parsing, kubectl-style ages. */
#include "util/timefmt.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/err.h"

/* v as n decimal digits, zero-padded. Returns the end. */
static char *put_digits(char *p, int v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        p[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return p + n;
}

/* strftime's "%Y-%m-%dT%H:%M:%S" written directly (it is on every
 * condition change), for the years of four digits; NULL
 * for the others. Returns the end. */
static char *put_date_time(char *p, const struct tm *tm)
{
    int year = tm->tm_year + 1900;
    if (year < 1000 || year > 9999)
        return NULL;
    p = put_digits(p, year, 4);
    *p++ = '-';
    p = put_digits(p, tm->tm_mon + 1, 2);
    *p++ = '-';
    p = put_digits(p, tm->tm_mday, 2);
    *p++ = 'T';
    p = put_digits(p, tm->tm_hour, 2);
    *p++ = ':';
    p = put_digits(p, tm->tm_min, 2);
    *p++ = ':';
    return put_digits(p, tm->tm_sec, 2);
}

char *timefmt_rfc3339(int64_t ms, bool with_ms, char out[TIMEFMT_LEN])
{
    time_t secs = (time_t)(ms >= 0 ? ms / 1000 : (ms - 999) / 1000);
    int frac = (int)(ms - (int64_t)secs * 1000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char *end = put_date_time(out, &tm);
    size_t n = end ? (size_t)(end - out)
                   : strftime(out, TIMEFMT_LEN, "%Y-%m-%dT%H:%M:%S", &tm);
    if (with_ms && end) {
        out[n] = '.';
        memcpy(put_digits(out + n + 1, frac, 3), "Z", 2);
    } else if (with_ms) {
        snprintf(out + n, TIMEFMT_LEN - n, ".%03dZ", frac);
    } else {
        memcpy(out + n, "Z", 2);
    }
    return out;
}

static int digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)**p))
            return -1;
        v = v * 10 + (**p - '0');
        (*p)++;
    }
    *out = v;
    return 0;
}

int timefmt_parse(const char *s, int64_t *ms)
{
    if (!s)
        return CU_EINVAL;
    const char *p = s;
    int Y, M, D, h, m, sec;
    if (digits(&p, 4, &Y) || *p++ != '-' || digits(&p, 2, &M) || *p++ != '-' ||
        digits(&p, 2, &D) || (*p != 'T' && *p != 't' && *p != ' '))
        return CU_EINVAL;
    p++;
    if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &m) || *p++ != ':' ||
        digits(&p, 2, &sec))
        return CU_EINVAL;
    if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
        return CU_EINVAL;
    int frac_ms = 0;
    if (*p == '.') {
        p++;
        int nd = 0;
        while (isdigit((unsigned char)*p)) {
            if (nd < 3)
                frac_ms = frac_ms * 10 + (*p - '0');
            nd++;
            p++;
        }
        if (nd == 0)
            return CU_EINVAL;
        for (; nd < 3; nd++)
            frac_ms *= 10;
    }
    int offset_min = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1, oh, om;
        p++;
        if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om))
            return CU_EINVAL;
        offset_min = sign * (oh * 60 + om);
    } else {
        return CU_EINVAL;
    }
    if (*p)
        return CU_EINVAL;
    struct tm tm = {0};
    tm.tm_year = Y - 1900;
    tm.tm_mon = M - 1;
    tm.tm_mday = D;
    tm.tm_hour = h;
    tm.tm_min = m;
    tm.tm_sec = sec;
    time_t t = timegm(&tm);
    *ms = ((int64_t)t - (int64_t)offset_min * 60) * 1000 + frac_ms;
    return 0;
}

/* kubectl's human durations (k8s.io/apimachinery duration.HumanDuration):
 * two units while the smaller one still matters, and the smaller unit left
 * out when it is zero ("2m", not "2m0s"). */
char *timefmt_age(int64_t age_ms, char out[TIMEFMT_LEN])
{
    long long s = age_ms / 1000;
    if (s < 0)
        s = 0;
    long long m = s / 60, h = s / 3600, d = h / 24;
    if (s < 120)
        snprintf(out, TIMEFMT_LEN, "%llds", s);
    else if (m < 10 && s % 60)
        snprintf(out, TIMEFMT_LEN, "%lldm%llds", m, s % 60);
    else if (m < 180)
        snprintf(out, TIMEFMT_LEN, "%lldm", m);
    else if (h < 8 && m % 60)
        snprintf(out, TIMEFMT_LEN, "%lldh%lldm", h, m % 60);
    else if (h < 48)
        snprintf(out, TIMEFMT_LEN, "%lldh", h);
    else if (h < 24 * 8 && h % 24)
        snprintf(out, TIMEFMT_LEN, "%lldd%lldh", d, h % 24);
    else if (h < 24 * 365 * 2)
        snprintf(out, TIMEFMT_LEN, "%lldd", d);
    else if (h < 24 * 365 * 8 && d % 365)
        snprintf(out, TIMEFMT_LEN, "%lldy%lldd", d / 365, d % 365);
    else
        snprintf(out, TIMEFMT_LEN, "%lldy", d / 365);
    return out;
}
