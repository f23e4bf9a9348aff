/* sbuf: capped growable string buffer (see sbuf.h for invariants). */
#include "util/sbuf.h"

#include <stdio.h>
#include <string.h>

#include "util/err.h"
#include "util/xalloc.h"

void sbuf_init(struct sbuf *sb, size_t max)
{
    sb->cap = 256; /* most formatted texts (messages, keys) fit: one vsnprintf */
    sb->buf = xmalloc(sb->cap);
    sb->buf[0] = '\0';
    sb->len = 0;
    sb->max = max ? max : SBUF_DEFAULT_MAX;
}

void sbuf_release(struct sbuf *sb)
{
    XFREE(sb->buf);
    sb->len = sb->cap = 0;
}

void sbuf_reset(struct sbuf *sb)
{
    sb->len = 0;
    sb->buf[0] = '\0';
}

static int grow(struct sbuf *sb, size_t extra)
{
    if (extra > sb->max - sb->len)
        return CU_ELIMIT;
    size_t need = sb->len + extra + 1;
    if (need <= sb->cap)
        return 0;
    size_t ncap = sb->cap * 2;
    while (ncap < need)
        ncap *= 2;
    sb->buf = xrealloc(sb->buf, ncap);
    sb->cap = ncap;
    return 0;
}

int sbuf_add(struct sbuf *sb, const void *p, size_t n)
{
    int rc = grow(sb, n);
    if (rc < 0)
        return rc;
    memcpy(sb->buf + sb->len, p, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
    return 0;
}

int sbuf_adds(struct sbuf *sb, const char *s) { return sbuf_add(sb, s, strlen(s)); }

int sbuf_addc(struct sbuf *sb, char c) { return sbuf_add(sb, &c, 1); }

/* Formats into the room already there first (one vsnprintf when it fits);
 * only a longer text grows the buffer and formats again. Whatever the
 * first try left past len is cut off again when it did not fit. */
int sbuf_vaddf(struct sbuf *sb, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    size_t room = sb->cap - sb->len;
    int n = vsnprintf(sb->buf + sb->len, room, fmt, cp);
    va_end(cp);
    if (n < 0) {
        if (room)
            sb->buf[sb->len] = '\0';
        return CU_EINTERNAL;
    }
    if ((size_t)n < room) {
        if ((size_t)n > sb->max - sb->len) { /* fits the buffer, not the limit */
            sb->buf[sb->len] = '\0';
            return CU_ELIMIT;
        }
        sb->len += (size_t)n;
        return 0;
    }
    if (room)
        sb->buf[sb->len] = '\0';
    int rc = grow(sb, (size_t)n);
    if (rc < 0)
        return rc;
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
    return 0;
}

int sbuf_addf(struct sbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = sbuf_vaddf(sb, fmt, ap);
    va_end(ap);
    return rc;
}

char *sbuf_take(struct sbuf *sb)
{
    char *s = sb->buf;
    sb->buf = NULL;
    sb->len = sb->cap = 0;
    return s;
}
