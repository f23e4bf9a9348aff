/*
 * sbuf: a growable, always NUL-terminated byte buffer with a hard size cap
 * (curl's dynbuf). Invariants after sbuf_init: buf is never NULL, buf[len]
 * is '\0', len < cap. An append that would pass `max` fails with CU_ELIMIT
 * and leaves the buffer unchanged.
 */
#ifndef CUEUE_UTIL_SBUF_H
#define CUEUE_UTIL_SBUF_H

#include <stdarg.h>
#include <stddef.h>

#define SBUF_DEFAULT_MAX ((size_t)256 << 20) /* 256 MiB */

struct sbuf {
    char *buf;   /* owned; never NULL after init */
    size_t len;  /* bytes used, excluding the NUL */
    size_t cap;  /* bytes allocated */
    size_t max;  /* largest allowed len */
};

/* Initialise an empty buffer that may grow to `max` bytes (0 = default). */
void sbuf_init(struct sbuf *sb, size_t max);
/* Free the contents; the buffer may be re-initialised. */
void sbuf_release(struct sbuf *sb);
/* Empty the buffer, keeping its allocation. */
void sbuf_reset(struct sbuf *sb);
/* Append n bytes. Returns 0 or CU_ELIMIT. */
int sbuf_add(struct sbuf *sb, const void *p, size_t n);
/* Append a NUL-terminated string. Returns 0 or CU_ELIMIT. */
int sbuf_adds(struct sbuf *sb, const char *s);
/* Append one byte. Returns 0 or CU_ELIMIT. */
int sbuf_addc(struct sbuf *sb, char c);
/* Append formatted text. Returns 0 or CU_ELIMIT. */
int sbuf_addf(struct sbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int sbuf_vaddf(struct sbuf *sb, const char *fmt, va_list ap);
/* Take the string out (caller frees with xfree). The buffer is left
 * released, with nothing allocated: sbuf_init it again to reuse it (a
 * following sbuf_release is a harmless no-op). */
char *sbuf_take(struct sbuf *sb);

#endif
