/* rng: splitmix64, UUIDs and Kubernetes-style name suffixes (see rng.h). */
#include "util/rng.h"

#include <sys/random.h>
#include <time.h>

void rng_seed(struct rng *r, uint64_t seed) { r->state = seed; }

void rng_seed_os(struct rng *r)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof(s), 0) != (ssize_t)sizeof(s))
        s = (uint64_t)time(NULL) ^ (uint64_t)clock();
    r->state = s;
}

uint64_t rng_next(struct rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t rng_below(struct rng *r, uint64_t n) { return rng_next(r) % n; }

/* n lowercase hex digits of v (its low 4n bits), most significant first */
static char *put_hex(char *p, uint64_t v, int n)
{
    static const char hex[] = "0123456789abcdef";
    for (int i = n - 1; i >= 0; i--) {
        p[i] = hex[v & 0xf];
        v >>= 4;
    }
    return p + n;
}

void rng_uuid(struct rng *r, char out[37])
{
    uint64_t a = rng_next(r), b = rng_next(r);
    a = (a & 0xffffffffffff0fffULL) | 0x4000ULL;             /* version 4 */
    b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL; /* variant */
    /* 8-4-4-4-12 hex digits: a's three groups, then b's top 16 and low 48 bits */
    char *p = put_hex(out, a >> 32, 8);
    *p++ = '-';
    p = put_hex(p, a >> 16, 4);
    *p++ = '-';
    p = put_hex(p, a, 4);
    *p++ = '-';
    p = put_hex(p, b >> 48, 4);
    *p++ = '-';
    p = put_hex(p, b, 12);
    *p = '\0';
}

void rng_uuid_skip(struct rng *r)
{
    (void)rng_next(r); /* the two draws of rng_uuid */
    (void)rng_next(r);
}

void rng_suffix(struct rng *r, char *out, int n)
{
    static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    for (int i = 0; i < n; i++)
        out[i] = alphabet[rng_below(r, sizeof(alphabet) - 1)];
    out[n] = '\0';
}
