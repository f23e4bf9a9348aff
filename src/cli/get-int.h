/*
 * get-int: what the files of `cueue get` share (cmd_get.c parses,
 * get_print.c prints tables and objects, get_watch.c follows changes).
 */
#ifndef CUEUE_CLI_GET_INT_H
#define CUEUE_CLI_GET_INT_H

#include "cli/cli-int.h"

struct get_opts {
    struct cli_outfmt fmt;
    const char *label_sel;
    const char *field_sel;
    bool watch;
    bool show_labels;
    json_t *label_cols;         /* -L keys (array of strings), or NULL */
    bool no_headers;
    bool ignore_not_found;
    bool multi_kind;            /* several kinds: names print as kind/name */
    struct cli_targets t;       /* what was asked for (items owned) */
    char rv[64];                /* resourceVersion to watch from */
    struct cli_table shown;     /* the table already printed (-w keeps its widths) */
    json_t *shown_vis;          /* its visible column indexes, or NULL */
};

/* The list path of k with the selectors (paging is cli__list_pages').
 * Returns 0, or 1 after printing (a bad namespace). */
int get__list_path(struct cli_ctx *c, const struct get_opts *g, const struct api_kind *k,
                   struct sbuf *path);
/* Default/wide output: one Table per kind. Returns 0 or 1. */
int get__tables(struct cli_ctx *c, struct get_opts *g);
/* yaml/json/name/jsonpath output. Returns 0 or 1. */
int get__objects(struct cli_ctx *c, struct get_opts *g);
/* -w: follow the single kind's changes from g->rv. Returns 0 or 1. */
int get__watch(struct cli_ctx *c, struct get_opts *g);

/* Visible columns of a Table's columnDefinitions (priority 0, or all when
 * wide) as a new array of indexes. */
json_t *get__visible_columns(const json_t *coldefs, bool wide);
/* Text of a Table cell (strings verbatim, numbers, null blank). Caller
 * frees. */
char *get__cell_text(const json_t *cell);
/* Append the printable cells of one Table row to cells (caller frees each
 * string): NAMESPACE first with -A, the visible columns (the name column
 * prefixed with kind/ when prefix is non-NULL), LABELS with --show-labels. */
void get__row_cells(const struct cli_ctx *c, const struct get_opts *g, const struct api_kind *k,
                    const json_t *row, const json_t *visible, const char *prefix, char **cells);
/* Header cells matching get__row_cells. */
void get__header_cells(const struct cli_ctx *c, const struct get_opts *g,
                       const struct api_kind *k, const json_t *coldefs, const json_t *visible,
                       char **cells);
/* kubectl's NAME/AGE Table built from a plain object or list (for
 * servers that do not answer with a Table). New ref. */
json_t *get__table_from_objects(const json_t *resp);
/* Number of printed columns for that layout. */
size_t get__ncols(const struct cli_ctx *c, const struct get_opts *g, const struct api_kind *k,
                  const json_t *visible);

#endif
