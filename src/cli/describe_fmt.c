/*
 * describe_fmt: the layout every describer writes in, kubectl's describe
 * format: "Key:  value" lines indented two spaces per level, maps, tables,
 * YAML blocks, the common metadata, the conditions table and the object's
 * Events with kubectl's "82s (x3 over 31m)" ages. The lowest of the
 * describe files: describe.c (the verb) calls the per-kind describers
 * (describe_kueue.c, describe_jobs.c, describe_nodes.c,
 * describe_workload.c), and all of them call this file.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "cli/describe-int.h"
#include "util/jsonx.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

void cli__desc_kv(struct cli_ctx *c, int level, const char *key, const char *fmt, ...)
{
    fprintf(c->out, "%*s%s:", 2 * level, "", key);
    if (fmt) {
        va_list ap;
        fputc('\t', c->out);
        va_start(ap, fmt);
        vfprintf(c->out, fmt, ap);
        va_end(ap);
    }
    fputc('\n', c->out);
}

void cli__desc_map(struct cli_ctx *c, int level, const char *key, const json_t *map,
                   const char *hide)
{
    const char *k;
    json_t *v;
    bool first = true;
    json_object_foreach((json_t *)map, k, v) {
        if (hide && !strcmp(k, hide))
            continue;
        char *text = json_is_string(v) ? xstrdup(json_string_value(v)) : jx_dumps(v);
        if (first)
            cli__desc_kv(c, level, key, "%s=%s", k, text);
        else
            fprintf(c->out, "%*s\t%s=%s\n", 2 * level, "", k, text);
        first = false;
        xfree(text);
    }
    if (first)
        cli__desc_kv(c, level, key, "<none>");
}

void cli__desc_meta(struct cli_ctx *c, const json_t *obj)
{
    char age[32];
    const char *created = JX_STR(obj, "metadata", "creationTimestamp");
    cli__desc_kv(c, 0, "Name", "%s", jx_or_empty(JX_STR(obj, "metadata", "name")));
    if (JX_STR(obj, "metadata", "namespace"))
        cli__desc_kv(c, 0, "Namespace", "%s", JX_STR(obj, "metadata", "namespace"));
    cli__desc_map(c, 0, "Labels", JX_GET(obj, "metadata", "labels"), NULL);
    cli__desc_map(c, 0, "Annotations", JX_GET(obj, "metadata", "annotations"), CLI_LAST_APPLIED);
    cli__desc_kv(c, 0, "API Version", "%s", jx_or_empty(JX_STR(obj, "apiVersion")));
    cli__desc_kv(c, 0, "Kind", "%s", jx_or_empty(JX_STR(obj, "kind")));
    if (created)
        cli__desc_kv(c, 0, "Created", "%s (%s ago)", created, cli__age(created, age));
    if (JX_STR(obj, "metadata", "deletionTimestamp"))
        cli__desc_kv(c, 0, "Deleting", "since %s", JX_STR(obj, "metadata", "deletionTimestamp"));
}

void cli__desc_conditions(struct cli_ctx *c, int level, const json_t *obj)
{
    json_t *conds = JX_GET(obj, "status", "conditions");
    if (!json_array_size(conds))
        return;
    struct cli_table t;
    size_t i;
    json_t *cond;
    cli__table_init(&t, 5);
    cli__table_rowv(&t, "Type", "Status", "Reason", "Age", "Message");
    cli__table_rowv(&t, "----", "------", "------", "---", "-------");
    json_array_foreach(conds, i, cond) {
        char age[32];
        const char *when = JX_STR(cond, "lastTransitionTime");
        cli__table_rowv(&t, JX_STR(cond, "type"), JX_STR(cond, "status"), JX_STR(cond, "reason"),
                        when ? cli__age(when, age) : "", JX_STR(cond, "message"));
    }
    cli__desc_table(c, level, "Conditions", &t);
}

void cli__desc_table(struct cli_ctx *c, int level, const char *title, struct cli_table *t)
{
    char indent[32];
    snprintf(indent, sizeof(indent), "%*s", 2 * (level + 1), "");
    cli__desc_kv(c, level, title, t->nrows > 1 ? NULL : "<none>");
    if (t->nrows > 1)
        cli__table_print(t, c->out, indent);
    cli__table_release(t);
}

void cli__desc_yaml(struct cli_ctx *c, int level, const char *key, const json_t *v)
{
    struct sbuf sb;
    if (!v || (json_is_object(v) && json_object_size(v) == 0))
        return;
    sbuf_init(&sb, 0);
    cli__yaml_append(&sb, v);
    cli__desc_kv(c, level, key, NULL);
    char *save = NULL;
    for (char *line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        fprintf(c->out, "%*s%s\n", 2 * (level + 1), "", line);
    sbuf_release(&sb);
}

/* "82s (x3 over 31m)" for an event. */
static void event_age(const json_t *ev, char *out, size_t len)
{
    char last[32], first[32];
    const char *lt = JX_STR(ev, "lastTimestamp");
    const char *ft = JX_STR(ev, "firstTimestamp");
    if (!lt)
        lt = JX_STR(ev, "eventTime");
    if (!ft)
        ft = lt;
    json_int_t count = JX_INT(ev, 1, "count");
    cli__age(lt, last);
    if (count > 1)
        snprintf(out, len, "%s (x%lld over %s)", last, (long long)count, cli__age(ft, first));
    else
        snprintf(out, len, "%s", last);
}

static const char *event_time(const json_t *ev)
{
    const char *t = JX_STR(ev, "lastTimestamp");
    return t ? t : jx_or_empty(JX_STR(ev, "eventTime"));
}

/* By time, then by resourceVersion (the server's order within a second). */
static int cmp_event_time(const void *a, const void *b)
{
    const json_t *ea = *(const json_t *const *)a, *eb = *(const json_t *const *)b;
    int c = strcmp(event_time(ea), event_time(eb));
    if (c)
        return c;
    long long ra = atoll(jx_or_empty(JX_STR(ea, "metadata", "resourceVersion")));
    long long rb = atoll(jx_or_empty(JX_STR(eb, "metadata", "resourceVersion")));
    return ra < rb ? -1 : ra > rb;
}

void cli__desc_events(struct cli_ctx *c, const struct api_kind *k, const json_t *obj)
{
    json_t *items;
    char *sel = xasprintf("involvedObject.uid=%s", jx_or_empty(JX_STR(obj, "metadata", "uid")));
    int rc = cli__list_kind(c, api_kind_get(KIND_EVENT),
                            k->namespaced ? JX_STR(obj, "metadata", "namespace") : NULL, NULL,
                            sel, &items, NULL, 0);
    xfree(sel);
    if (rc)
        return;
    size_t n = json_array_size(items);
    if (n == 0) {
        cli__desc_kv(c, 0, "Events", "<none>");
        json_decref(items);
        return;
    }
    json_t **sorted = xcalloc(n, sizeof(*sorted));
    for (size_t i = 0; i < n; i++)
        sorted[i] = json_array_get(items, i);
    qsort(sorted, n, sizeof(*sorted), cmp_event_time);
    struct cli_table t;
    cli__table_init(&t, 5);
    cli__table_rowv(&t, "Type", "Reason", "Age", "From", "Message");
    cli__table_rowv(&t, "----", "------", "----", "----", "-------");
    for (size_t i = 0; i < n; i++) {
        char age[96];
        const json_t *ev = sorted[i];
        const char *from = JX_STR(ev, "source", "component");
        event_age(ev, age, sizeof(age));
        cli__table_rowv(&t, JX_STR(ev, "type"), JX_STR(ev, "reason"), age,
                        from ? from : JX_STR(ev, "reportingComponent"), JX_STR(ev, "message"));
    }
    cli__desc_table(c, 0, "Events", &t);
    xfree(sorted);
    json_decref(items);
}

const char *desc__or_none(const char *s)
{
    return s && *s ? s : "<none>";
}

char *desc__scalar(const json_t *v)
{
    if (!v || json_is_null(v))
        return xstrdup("-");
    if (json_is_string(v))
        return xstrdup(json_string_value(v));
    return jx_dumps(v);
}

char *desc__map_text(const json_t *map)
{
    struct sbuf sb;
    const char *k;
    json_t *v;
    sbuf_init(&sb, 0);
    json_object_foreach((json_t *)map, k, v) {
        char *t = desc__scalar(v);
        sbuf_addf(&sb, "%s%s=%s", sb.len ? ", " : "", k, t);
        xfree(t);
    }
    if (!sb.len)
        sbuf_adds(&sb, "<none>");
    return cli__sbuf_done(&sb);
}
