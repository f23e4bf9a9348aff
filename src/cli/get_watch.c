/*
 * get_watch: `cueue get KIND [NAME] -w`. After the list, one watch request
 * from the list's resourceVersion (?watch=true; a NAME becomes the field
 * selector metadata.name=NAME). In table mode each event's object is a
 * one-row Table whose row is printed under the columns already shown; in
 * object modes each object is printed (YAML documents separated by ---).
 * Like kubectl, the command ends (status 0) when the server closes the
 * stream, and with status 1 on an ERROR event.
 */
#include <string.h>

#include "cli/get-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

struct watch_state {
    struct cli_ctx *c;
    struct get_opts *g;
    const struct api_kind *k;
    bool table;
    size_t printed; /* objects printed in object modes */
    int rc;
};

static void ensure_header(struct watch_state *w, const json_t *coldefs)
{
    struct get_opts *g = w->g;
    if (g->shown_vis || !json_array_size(coldefs))
        return;
    g->shown_vis = get__visible_columns(coldefs, g->fmt.kind == CLI_OUT_WIDE);
    size_t nc = get__ncols(w->c, g, w->k, g->shown_vis);
    char **cells = xcalloc(nc, sizeof(*cells));
    cli__table_release(&g->shown);
    cli__table_init(&g->shown, nc);
    get__header_cells(w->c, g, w->k, coldefs, g->shown_vis, cells);
    cli__table_row(&g->shown, (const char *const *)cells);
    for (size_t i = 0; i < nc; i++)
        xfree(cells[i]);
    xfree(cells);
    if (!g->no_headers)
        cli__table_print_rows(&g->shown, 0, w->c->out, NULL);
}

static void table_event(struct watch_state *w, const json_t *obj)
{
    json_t *table = NULL;
    if (strcmp(jx_or_empty(JX_STR(obj, "kind")), "Table"))
        obj = table = get__table_from_objects(obj);
    ensure_header(w, JX_GET(obj, "columnDefinitions"));
    struct get_opts *g = w->g;
    if (!g->shown_vis) {
        json_decref(table);
        return;
    }
    size_t nc = g->shown.ncols, i;
    char **cells = xcalloc(nc, sizeof(*cells));
    json_t *row;
    json_array_foreach(JX_GET(obj, "rows"), i, row) {
        get__row_cells(w->c, g, w->k, row, g->shown_vis, NULL, cells);
        cli__table_row(&g->shown, (const char *const *)cells);
        for (size_t j = 0; j < nc; j++)
            XFREE(cells[j]);
        cli__table_print_rows(&g->shown, g->shown.nrows - 1, w->c->out, NULL);
    }
    xfree(cells);
    json_decref(table);
}

static int on_event(void *st, const char *line, size_t n)
{
    struct watch_state *w = st;
    json_error_t je;
    json_t *ev = json_loadb(line, n, 0, &je);
    if (!ev)
        return 0; /* blank keep-alive lines */
    const char *type = jx_or_empty(JX_STR(ev, "type"));
    const json_t *obj = JX_GET(ev, "object");
    int stop = 0;
    if (!strcmp(type, "ERROR")) {
        fprintf(w->c->err, "error: %s\n",
                jx_or_empty(JX_STR(obj, "message")));
        w->rc = 1;
        stop = 1;
    } else if (!strcmp(type, "BOOKMARK") || !obj) {
        /* nothing to print */
    } else if (w->table) {
        table_event(w, obj);
    } else {
        if (w->g->fmt.kind == CLI_OUT_YAML && w->printed++)
            fputs("---\n", w->c->out);
        cli__print_object(w->c, &w->g->fmt, w->k, obj);
    }
    fflush(w->c->out);
    json_decref(ev);
    return stop;
}

static int sink(void *st, const char *data, size_t n)
{
    return cli__lines_feed(st, data, n);
}

int get__watch(struct cli_ctx *c, struct get_opts *g)
{
    const struct api_kind *k = g->t.items[0].k;
    struct watch_state w = {c, g, k, g->fmt.kind == CLI_OUT_TABLE || g->fmt.kind == CLI_OUT_WIDE,
                            0, 0};
    struct sbuf path;
    sbuf_init(&path, 0);
    if (cli__path(c, &path, k, cli__ns_for(c, k), NULL, NULL) != 0) {
        sbuf_release(&path);
        return 1;
    }
    cli__query(&path, "watch", "true");
    if (g->rv[0])
        cli__query(&path, "resourceVersion", g->rv);
    if (g->label_sel && *g->label_sel)
        cli__query(&path, "labelSelector", g->label_sel);
    if (g->t.items[0].name) {
        char *fs = xasprintf("metadata.name=%s", g->t.items[0].name);
        cli__query(&path, "fieldSelector", fs);
        xfree(fs);
    } else if (g->field_sel && *g->field_sel) {
        cli__query(&path, "fieldSelector", g->field_sel);
    }
    fflush(c->out);
    struct cli_lines lines;
    cli__lines_init(&lines, on_event, &w);
    struct cli_call r;
    cli__call_init(&r);
    int rc = cli__http_stream(c, path.buf, w.table ? CLI_TABLE : CLI_JSON, sink, &lines, &r);
    cli__lines_finish(&lines);
    if (rc != 0)
        w.rc = cli__print_unreachable(c, &r);
    else if (r.http_status && !cli__call_ok(&r))
        w.rc = cli__print_call_error(c, &r, k, g->t.items[0].name, "watch", NULL);
    cli__call_release(&r);
    sbuf_release(&path);
    cli__table_release(&g->shown);
    json_decref(g->shown_vis);
    g->shown_vis = NULL;
    return w.rc;
}
