/*
 * xalloc: allocation wrappers that abort on out-of-memory (Redis, git, Slurm
 * style), so callers never carry untestable NULL checks. Every heap
 * allocation in cueue goes through these. xfree(NULL) is a no-op.
 */
#ifndef CUEUE_UTIL_XALLOC_H
#define CUEUE_UTIL_XALLOC_H

#include <stddef.h>

/* Allocate n bytes (n == 0 yields a unique non-NULL pointer). Never NULL. */
void *xmalloc(size_t n);
/* Allocate zeroed nmemb*size bytes; aborts on overflow. Never NULL. */
void *xcalloc(size_t nmemb, size_t size);
/* Resize p to n bytes; aborts on failure. Never NULL. */
void *xrealloc(void *p, size_t n);
/* Resize p to nmemb*size bytes, aborting on multiplication overflow. */
void *xreallocarray(void *p, size_t nmemb, size_t size);
/* Duplicate a NUL-terminated string; xstrdup(NULL) returns NULL. */
char *xstrdup(const char *s);
/* Duplicate at most n bytes of s and NUL-terminate. */
char *xstrndup(const char *s, size_t n);
/* a, the character sep, then b, as a newly allocated string (NULL reads as
 * ""): the "ns/name" keys of hot paths, without printf's cost. */
char *xjoin(const char *a, char sep, const char *b);
/* printf into a newly allocated string the caller frees with xfree(). */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Free p; NULL is a no-op. */
void xfree(void *p);

/* Free *pp and set it to NULL. */
#define XFREE(p) do { xfree(p); (p) = NULL; } while (0)

/* Grow an array (ptr, cap) to hold at least `need` elements (amortised). */
#define XGROW(ptr, cap, need)                                              \
    do {                                                                   \
        if ((size_t)(need) > (size_t)(cap)) {                              \
            size_t ncap_ = (cap) ? (size_t)(cap) * 2 : 8;                  \
            while (ncap_ < (size_t)(need)) ncap_ *= 2;                     \
            (ptr) = xreallocarray((ptr), ncap_, sizeof(*(ptr)));           \
            (cap) = ncap_;                                                 \
        }                                                                  \
    } while (0)

#endif
