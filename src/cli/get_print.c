/*
 * get_print: `cueue get` output. Tables are the server's (meta.k8s.io/v1
 * Table): column names upper-cased, priority>0 columns only with -o wide,
 * cells printed verbatim, NAMESPACE taken from each row's object with -A,
 * "kind/" before names when several kinds are listed. A server that
 * answers with a plain list instead gets kubectl's fallback NAME/AGE table.
 * Object formats fetch plain JSON and print one object or a v1 List.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "cli/get-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

json_t *get__visible_columns(const json_t *coldefs, bool wide)
{
    json_t *vis = json_array();
    size_t i;
    json_t *col;
    json_array_foreach(coldefs, i, col) {
        if (wide || JX_INT(col, 0, "priority") == 0)
            json_array_append_new(vis, json_integer((json_int_t)i));
    }
    return vis;
}

char *get__cell_text(const json_t *cell)
{
    switch (json_typeof(cell)) {
    case JSON_STRING:
        return xstrdup(json_string_value(cell));
    case JSON_INTEGER:
        return xasprintf("%" JSON_INTEGER_FORMAT, json_integer_value(cell));
    case JSON_REAL:
        return xasprintf("%g", json_real_value(cell));
    case JSON_TRUE:
        return xstrdup("true");
    case JSON_FALSE:
        return xstrdup("false");
    case JSON_NULL:
        return xstrdup("");
    default:
        return jx_dumps(cell);
    }
}

static bool show_ns(const struct cli_ctx *c, const struct api_kind *k)
{
    return c->all_ns && k->namespaced;
}

size_t get__ncols(const struct cli_ctx *c, const struct get_opts *g, const struct api_kind *k,
                  const json_t *visible)
{
    return json_array_size(visible) + (show_ns(c, k) ? 1 : 0) + json_array_size(g->label_cols) +
           (g->show_labels ? 1 : 0);
}

static char *labels_text(const json_t *labels)
{
    if (!json_is_object(labels) || json_object_size(labels) == 0)
        return xstrdup("<none>");
    struct sbuf sb;
    const char *key;
    json_t *v;
    sbuf_init(&sb, 0);
    json_object_foreach((json_t *)labels, key, v)
        sbuf_addf(&sb, "%s%s=%s", sb.len ? "," : "", key, jx_or_empty(json_string_value(v)));
    return cli__sbuf_done(&sb);
}

void get__header_cells(const struct cli_ctx *c, const struct get_opts *g,
                       const struct api_kind *k, const json_t *coldefs, const json_t *visible,
                       char **cells)
{
    size_t n = 0, i;
    json_t *idx;
    if (show_ns(c, k))
        cells[n++] = xstrdup("NAMESPACE");
    json_array_foreach(visible, i, idx) {
        const json_t *col = json_array_get(coldefs, (size_t)json_integer_value(idx));
        char *name = xstrdup(jx_or_empty(JX_STR(col, "name")));
        for (char *p = name; *p; p++)
            *p = (char)toupper((unsigned char)*p);
        cells[n++] = name;
    }
    json_array_foreach(g->label_cols, i, idx) {
        /* kubectl: the key's name part, upper-cased (gke-nodepool -> GKE-NODEPOOL) */
        const char *key = json_string_value(idx), *slash = strrchr(key, '/');
        char *name = xstrdup(slash ? slash + 1 : key);
        for (char *p = name; *p; p++)
            *p = (char)toupper((unsigned char)*p);
        cells[n++] = name;
    }
    if (g->show_labels)
        cells[n++] = xstrdup("LABELS");
}

void get__row_cells(const struct cli_ctx *c, const struct get_opts *g, const struct api_kind *k,
                    const json_t *row, const json_t *visible, const char *prefix, char **cells)
{
    size_t n = 0, i;
    json_t *idx;
    const json_t *obj = JX_GET(row, "object");
    if (show_ns(c, k))
        cells[n++] = xstrdup(jx_or_empty(JX_STR(obj, "metadata", "namespace")));
    json_array_foreach(visible, i, idx) {
        json_int_t ci = json_integer_value(idx);
        char *t = get__cell_text(json_array_get(JX_GET(row, "cells"), (size_t)ci));
        if (prefix && ci == 0) {
            char *p = xasprintf("%s/%s", prefix, t);
            xfree(t);
            t = p;
        }
        cells[n++] = t;
    }
    json_array_foreach(g->label_cols, i, idx)
        cells[n++] = xstrdup(jx_or_empty(
            json_string_value(json_object_get(JX_GET(obj, "metadata", "labels"),
                                              json_string_value(idx)))));
    if (g->show_labels)
        cells[n++] = labels_text(JX_GET(obj, "metadata", "labels"));
}

/* kubectl's fallback when the answer is not a Table: NAME and AGE. */
json_t *get__table_from_objects(const json_t *resp)
{
    json_t *t = json_object(), *rows = json_array();
    json_t *items = JX_GET(resp, "items");
    json_t *one = json_array();
    if (!json_is_array(items)) {
        json_array_append(one, (json_t *)resp);
        items = one;
    }
    json_object_set_new(t, "columnDefinitions",
                        json_pack("[{s:s,s:s},{s:s,s:s}]", "name", "Name", "type", "string",
                                  "name", "Age", "type", "date"));
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it) {
        char age[32];
        cli__age(JX_STR(it, "metadata", "creationTimestamp"), age);
        json_array_append_new(rows, json_pack("{s:[s,s],s:O}", "cells",
                                              jx_or_empty(JX_STR(it, "metadata", "name")), age,
                                              "object", it));
    }
    json_object_set_new(t, "rows", rows);
    JX_SET_NEW(t, json_string(jx_or_empty(JX_STR(resp, "metadata", "resourceVersion"))),
               "metadata", "resourceVersion");
    json_decref(one);
    return t;
}

/* doc as a Table: itself, or kubectl's fallback table when the server
 * sent objects. New ref. */
static json_t *as_table(json_t *doc)
{
    if (!strcmp(jx_or_empty(JX_STR(doc, "kind")), "Table"))
        return json_incref(doc);
    return get__table_from_objects(doc);
}

/* GET path as a Table (converted when the server sends objects). Returns
 * the Table (new ref) or NULL after printing the error. */
static json_t *fetch_table(struct cli_ctx *c, const char *path, const struct api_kind *k,
                           const char *name, bool quiet_404)
{
    struct cli_call r;
    json_t *t = NULL;
    cli__call_init(&r);
    if (cli__http(c, "GET", path, CLI_TABLE, NULL, NULL, &r) != 0) {
        cli__print_unreachable(c, &r);
    } else if (!cli__call_ok(&r) || !json_is_object(r.json)) {
        if (!(quiet_404 && r.http_status == 404))
            cli__print_call_error(c, &r, k, name, "get", NULL);
    } else {
        t = as_table(r.json);
    }
    cli__call_release(&r);
    return t;
}

/* All rows for kind k (its names, or its list) into one Table. */
static int kind_table(struct cli_ctx *c, struct get_opts *g, const struct api_kind *k,
                      json_t **table)
{
    int rc = 0;
    bool named = false;
    *table = NULL;
    for (size_t i = 0; i < g->t.n; i++) {
        if (g->t.items[i].k != k || !g->t.items[i].name)
            continue;
        named = true;
        struct sbuf path;
        json_t *t = NULL;
        sbuf_init(&path, 0);
        if (cli__path(c, &path, k, cli__ns_for(c, k), g->t.items[i].name, NULL) == 0)
            t = fetch_table(c, path.buf, k, g->t.items[i].name, g->ignore_not_found);
        sbuf_release(&path);
        if (c->unreachable)
            return 1;
        if (!t) {
            rc |= !g->ignore_not_found;
            continue;
        }
        if (!*table)
            *table = t;
        else {
            json_array_extend(JX_GET(*table, "rows"), JX_GET(t, "rows"));
            json_decref(t);
        }
    }
    if (!named) {
        struct sbuf path;
        json_t *doc = NULL;
        sbuf_init(&path, 0);
        rc = get__list_path(c, g, k, &path);
        if (rc == 0)
            rc = cli__list_pages(c, path.buf, CLI_TABLE, k, &doc);
        sbuf_release(&path);
        if (rc == 0)
            *table = as_table(doc);
        json_decref(doc);
    }
    return rc;
}

static void print_table(struct cli_ctx *c, struct get_opts *g, const struct api_kind *k,
                        const json_t *table)
{
    const json_t *coldefs = JX_GET(table, "columnDefinitions");
    json_t *vis = get__visible_columns(coldefs, g->fmt.kind == CLI_OUT_WIDE);
    size_t nc = get__ncols(c, g, k, vis), i;
    char **cells = xcalloc(nc, sizeof(*cells));
    json_t *row;
    cli__table_release(&g->shown);
    json_decref(g->shown_vis);
    g->shown_vis = NULL;
    cli__table_init(&g->shown, nc);
    get__header_cells(c, g, k, coldefs, vis, cells);
    cli__table_row(&g->shown, (const char *const *)cells);
    for (size_t j = 0; j < nc; j++)
        XFREE(cells[j]);
    json_array_foreach(JX_GET(table, "rows"), i, row) {
        get__row_cells(c, g, k, row, vis, g->multi_kind ? cli__kind_prefix(k) : NULL, cells);
        cli__table_row(&g->shown, (const char *const *)cells);
        for (size_t j = 0; j < nc; j++)
            XFREE(cells[j]);
    }
    if (g->no_headers) {
        struct cli_table body = g->shown;
        body.cells += nc;
        body.nrows--;
        cli__table_print(&body, c->out, NULL);
    } else {
        cli__table_print(&g->shown, c->out, NULL);
    }
    g->shown_vis = json_incref(vis);
    xfree(cells);
    json_decref(vis);
}

int get__tables(struct cli_ctx *c, struct get_opts *g)
{
    int rc = 0;
    size_t printed = 0;
    bool any_named = false;
    for (size_t i = 0; i < g->t.n; i++) {
        const struct api_kind *k = g->t.items[i].k;
        bool seen = false;
        any_named |= g->t.items[i].name != NULL;
        for (size_t j = 0; j < i; j++)
            seen |= g->t.items[j].k == k;
        if (seen)
            continue;
        json_t *table;
        rc |= kind_table(c, g, k, &table);
        if (c->unreachable)
            break;
        if (!table)
            continue;
        snprintf(g->rv, sizeof(g->rv), "%s",
                 jx_or_empty(JX_STR(table, "metadata", "resourceVersion")));
        if (json_array_size(JX_GET(table, "rows")) > 0) {
            if (printed++)
                fputc('\n', c->out);
            print_table(c, g, k, table);
        }
        json_decref(table);
    }
    if (!printed && !any_named && rc == 0 && !g->watch)
        cli__no_resources(c, g->t.items[0].k);
    return rc;
}

/* Items of a list GET (apiVersion and kind filled in) appended to items. */
static int list_items(struct cli_ctx *c, struct get_opts *g, const struct api_kind *k,
                      json_t *items)
{
    json_t *got;
    if (cli__list_kind(c, k, cli__ns_for(c, k), g->label_sel, g->field_sel, &got, g->rv,
                       sizeof(g->rv)) != 0)
        return 1;
    json_array_extend(items, got);
    json_decref(got);
    return 0;
}

int get__objects(struct cli_ctx *c, struct get_opts *g)
{
    json_t *items = json_array();
    int rc = 0;
    bool single = g->t.n == 1 && g->t.items[0].name;
    for (size_t i = 0; i < g->t.n && !c->unreachable; i++) {
        const struct api_kind *k = g->t.items[i].k;
        if (!g->t.items[i].name) {
            rc |= list_items(c, g, k, items);
            continue;
        }
        json_t *obj;
        int r = cli__get_object(c, k, cli__ns_for(c, k), g->t.items[i].name,
                                g->ignore_not_found, &obj);
        if (r == 0) {
            snprintf(g->rv, sizeof(g->rv), "%s",
                     jx_or_empty(JX_STR(obj, "metadata", "resourceVersion")));
            json_array_append_new(items, obj);
        } else if (!(g->ignore_not_found && r == CU_ENOTFOUND)) {
            rc = 1;
        }
    }
    if (c->unreachable) {
        rc = 1;
    } else if (single && json_array_size(items) == 1) {
        cli__print_object(c, &g->fmt, g->t.items[0].k, json_array_get(items, 0));
    } else if (json_array_size(items) > 0 || !single) {
        json_t *list = json_pack("{s:s,s:O,s:s,s:{s:s}}", "apiVersion", "v1", "items", items,
                                 "kind", "List", "metadata", "resourceVersion", "");
        cli__print_object(c, &g->fmt, g->t.items[0].k, list);
        json_decref(list);
    }
    json_decref(items);
    return rc;
}

int get__list_path(struct cli_ctx *c, const struct get_opts *g, const struct api_kind *k,
                   struct sbuf *path)
{
    if (cli__path(c, path, k, cli__ns_for(c, k), NULL, NULL) != 0)
        return 1;
    if (g->label_sel && *g->label_sel)
        cli__query(path, "labelSelector", g->label_sel);
    if (g->field_sel && *g->field_sel)
        cli__query(path, "fieldSelector", g->field_sel);
    return 0;
}
