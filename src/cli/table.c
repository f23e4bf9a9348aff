/*
 * table: column-aligned text the way kubectl's tabwriter lays it out (each
 * column as wide as its widest cell plus 3 spaces, the last unpadded), and
 * the time helpers the printers share (ages, now, sleeping in poll loops).
 * Invariant: cells holds (nrows * ncols) owned strings, never NULL.
 */
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "cli/cli-int.h"
#include "util/clock.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#define TABLE_PAD 3
#define DESC_PAD 2 /* kubectl describe's tabwriter padding */

void cli__table_init(struct cli_table *t, size_t ncols)
{
    memset(t, 0, sizeof(*t));
    t->ncols = ncols;
}

void cli__table_row(struct cli_table *t, const char *const *cells)
{
    XGROW(t->cells, t->cap, (t->nrows + 1) * t->ncols);
    for (size_t i = 0; i < t->ncols; i++)
        t->cells[t->nrows * t->ncols + i] = xstrdup(cells[i] ? cells[i] : "");
    t->nrows++;
}

void cli__table_rowv(struct cli_table *t, ...)
{
    const char **cells = xcalloc(t->ncols ? t->ncols : 1, sizeof(*cells));
    va_list ap;
    va_start(ap, t);
    for (size_t i = 0; i < t->ncols; i++)
        cells[i] = va_arg(ap, const char *);
    va_end(ap);
    cli__table_row(t, cells);
    xfree(cells);
}

/* Display width of n bytes of UTF-8 (code points; no wide glyphs here). */
static size_t text_width_n(const char *s, size_t n)
{
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            w++;
    return w;
}

static size_t text_width(const char *s)
{
    return text_width_n(s, strlen(s));
}

void cli__table_print_rows(const struct cli_table *t, size_t from, FILE *out, const char *indent)
{
    size_t *width = xcalloc(t->ncols ? t->ncols : 1, sizeof(*width));
    for (size_t r = 0; r < t->nrows; r++)
        for (size_t col = 0; col < t->ncols; col++) {
            size_t w = text_width(t->cells[r * t->ncols + col]);
            if (w > width[col])
                width[col] = w;
        }
    for (size_t r = from; r < t->nrows; r++) {
        fputs(indent ? indent : "", out);
        for (size_t col = 0; col < t->ncols; col++) {
            const char *cell = t->cells[r * t->ncols + col];
            fputs(cell, out);
            if (col + 1 < t->ncols)
                fprintf(out, "%*s", (int)(width[col] - text_width(cell) + TABLE_PAD), "");
        }
        fputc('\n', out);
    }
    xfree(width);
}

void cli__table_print(const struct cli_table *t, FILE *out, const char *indent)
{
    cli__table_print_rows(t, 0, out, indent);
}

void cli__table_release(struct cli_table *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        xfree(t->cells[i]);
    xfree(t->cells);
    memset(t, 0, sizeof(*t));
}

/* Length of the line starting at p (without the '\n'). */
static size_t line_len(const char *p)
{
    const char *nl = strchr(p, '\n');
    return nl ? (size_t)(nl - p) : strlen(p);
}

void cli__align_tabs(const char *text, FILE *out)
{
    const char *p = text;
    while (*p) {
        /* a block: consecutive lines that hold a tab */
        size_t width = 0;
        const char *q = p;
        while (*q) {
            size_t n = line_len(q);
            const char *tab = memchr(q, '\t', n);
            if (!tab)
                break;
            size_t w = text_width_n(q, (size_t)(tab - q));
            if (w > width)
                width = w;
            q += n + (q[n] == '\n');
        }
        if (q == p) { /* a line without a tab */
            size_t n = line_len(p);
            fwrite(p, 1, n, out);
            fputc('\n', out);
            p += n + (p[n] == '\n');
            continue;
        }
        for (; p < q;) {
            size_t n = line_len(p);
            const char *tab = memchr(p, '\t', n);
            size_t key = (size_t)(tab - p);
            fwrite(p, 1, key, out);
            fprintf(out, "%*s", (int)(width - text_width_n(p, key) + DESC_PAD), "");
            fwrite(tab + 1, 1, n - key - 1, out);
            fputc('\n', out);
            p += n + (p[n] == '\n');
        }
    }
}

int64_t cli__now_ms(void)
{
    return (int64_t)(clk_mono_s() * 1000.0);
}

const char *cli__age(const char *rfc3339, char out[32])
{
    int64_t t;
    if (!rfc3339 || timefmt_parse(rfc3339, &t) != 0) {
        snprintf(out, 32, "<unknown>");
        return out;
    }
    int64_t age = clk_now(clk_real()) - t;
    return timefmt_age(age < 0 ? 0 : age, out);
}

void cli__sleep_ms(int64_t ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

void cli__lines_init(struct cli_lines *l, int (*on_line)(void *, const char *, size_t), void *st)
{
    sbuf_init(&l->partial, 0);
    l->on_line = on_line;
    l->st = st;
}

int cli__lines_feed(struct cli_lines *l, const char *data, size_t n)
{
    while (n > 0) {
        const char *nl = memchr(data, '\n', n);
        if (!nl) {
            if (sbuf_add(&l->partial, data, n) != 0)
                return -1;
            return 0;
        }
        size_t take = (size_t)(nl - data);
        int rc;
        if (l->partial.len) {
            sbuf_add(&l->partial, data, take);
            rc = l->on_line(l->st, l->partial.buf, l->partial.len);
            sbuf_reset(&l->partial);
        } else {
            rc = l->on_line(l->st, data, take);
        }
        if (rc)
            return rc;
        data = nl + 1;
        n -= take + 1;
    }
    return 0;
}

int cli__lines_finish(struct cli_lines *l)
{
    int rc = 0;
    if (l->partial.len)
        rc = l->on_line(l->st, l->partial.buf, l->partial.len);
    sbuf_release(&l->partial);
    return rc;
}
