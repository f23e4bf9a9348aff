/*
 * test_cli_fixtures: what the CLI's unit tests share: JSON fixtures from
 * text, and a context whose out and err streams are captured in memory.
 */
#ifndef CUEUE_TEST_CLI_FIXTURES_H
#define CUEUE_TEST_CLI_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "util/xalloc.h"

/* A fixture parsed from JSON text, any value (the test fails on bad text).
 * New ref. */
static inline json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &e);
    if (!v)
        fail_msg("bad fixture JSON: %s: %s", text, e.text);
    return v;
}

/* A context in namespace "default" whose streams go to memory. */
struct cap {
    char *out_buf, *err_buf;
    size_t out_len, err_len;
    struct cli_ctx c;
};

static inline void cap_open(struct cap *k)
{
    memset(k, 0, sizeof(*k));
    k->c.out = open_memstream(&k->out_buf, &k->out_len);
    k->c.err = open_memstream(&k->err_buf, &k->err_len);
    k->c.ns = xstrdup("default");
}

/* What was written to err so far (borrowed until the next write). */
static inline const char *cap_err(struct cap *k)
{
    fflush(k->c.err);
    return k->err_buf;
}

static inline void cap_close(struct cap *k)
{
    fclose(k->c.out);
    fclose(k->c.err);
    cli__ctx_release(&k->c);
    free(k->out_buf);
    free(k->err_buf);
}

#endif
