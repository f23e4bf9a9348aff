/*
 * hash: one word-at-a-time hash for cueue's hash tables and fingerprints.
 *
 * uthash's default (Jenkins) reads a key a byte at a time; the store's
 * index, the engine's tables, the scheduler's memo, Event aggregation and
 * the shared-condition table look up short keys millions of times in a
 * `cueue sim` run, so they use this instead: eight bytes per step of a
 * multiply/xor-shift mix, and MurmurHash3's 64-bit finaliser where the low
 * bits matter (bucket indexes, Bloom bits). Not cryptographic, and not
 * stable across versions: nothing may store or print these values. Only a
 * uthash table's bucket layout follows the hash, never its iteration
 * (insertion) order, so changing it changes no output.
 */
#ifndef CUEUE_UTIL_HASH_H
#define CUEUE_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CU_HASH_SEED 0xcbf29ce484222325ULL
#define CU_HASH_MUL 0x9e3779b97f4a7c15ULL

/* h with the 64-bit word w mixed in. */
static inline uint64_t cu_hash_word(uint64_t h, uint64_t w)
{
    h = (h ^ w) * CU_HASH_MUL;
    return h ^ (h >> 29);
}

/* h with the len bytes at p mixed in, eight at a time; the last 1 to 7
 * bytes (every one of them read) are mixed with their count, so "ab" and
 * "ab\0" differ. */
static inline uint64_t cu_hash_mem(uint64_t h, const void *p, size_t len)
{
    const unsigned char *b = p;
    uint64_t w;
    for (; len >= 8; b += 8, len -= 8) {
        memcpy(&w, b, 8);
        h = cu_hash_word(h, w);
    }
    if (len >= 4) { /* two overlapping 4-byte reads: no variable-size copy */
        uint32_t lo, hi;
        memcpy(&lo, b, 4);
        // cppcheck-suppress pointerOutOfBoundsCond ; len >= 4 here, so b + len - 4 is inside
        memcpy(&hi, b + len - 4, 4);
        h = cu_hash_word(h, ((uint64_t)lo | (uint64_t)hi << 32) ^ ((uint64_t)len << 56));
    } else if (len) { /* the first, middle and last byte */
        w = (uint64_t)b[0] | (uint64_t)b[len / 2] << 8 | (uint64_t)b[len - 1] << 16;
        h = cu_hash_word(h, w ^ ((uint64_t)len << 56));
    }
    return h;
}

/* h with the string s (NULL mixes as "") and its length mixed in, so that
 * adjacent strings ("ab","c" and "a","bc") mix differently. */
static inline uint64_t cu_hash_str(uint64_t h, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return cu_hash_word(cu_hash_mem(h, s ? s : "", n), (uint64_t)n);
}

/* MurmurHash3's 64-bit finaliser: every input bit reaches the low bits. */
static inline uint64_t cu_hash_final(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

/* The bucket hash of len bytes at key, for uthash:
 *   #define HASH_FUNCTION(keyptr, keylen, hashv) \
 *       ((hashv) = cu_hash_bytes((keyptr), (size_t)(keylen)))
 * before including <uthash.h>. */
static inline unsigned cu_hash_bytes(const void *key, size_t len)
{
    return (unsigned)cu_hash_final(cu_hash_mem(CU_HASH_SEED ^ (uint64_t)len, key, len));
}

#endif
