/*
 * rng: a small seeded pseudo-random generator (splitmix64) for everything
 * that must be reproducible: UIDs and name suffixes in `cueue sim`, the
 * reference-model tests. The server seeds it from the OS.
 */
#ifndef CUEUE_UTIL_RNG_H
#define CUEUE_UTIL_RNG_H

#include <stdint.h>

struct rng {
    uint64_t state;
};

/* Seed the generator (any value, 0 included). */
void rng_seed(struct rng *r, uint64_t seed);
/* Seed from the operating system's entropy (getrandom). */
void rng_seed_os(struct rng *r);
/* Next 64 random bits. */
uint64_t rng_next(struct rng *r);
/* Uniform integer in [0, n) (n > 0). */
uint64_t rng_below(struct rng *r, uint64_t n);
/* Write an RFC 4122 version-4 UUID ("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx")
 * into out (37 bytes with the NUL). */
void rng_uuid(struct rng *r, char out[37]);
/* Advance r exactly as rng_uuid does, without formatting a UUID (a draw
 * taken only to keep the sequence of later draws the same). */
void rng_uuid_skip(struct rng *r);
/* Write n random characters from Kubernetes' name-suffix alphabet
 * ("bcdfghjklmnpqrstvwxz2456789") plus a NUL into out (n+1 bytes). */
void rng_suffix(struct rng *r, char *out, int n);

#endif
