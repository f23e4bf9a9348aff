/*
 * describe: `cueue describe KIND [NAME...]`, a human view of objects in
 * kubectl's describe layout: "Key:  value" lines indented two spaces per
 * level, the common metadata first, then the kind's own sections
 * (describe_kinds.c, describe_workload.c), the status conditions as a
 * table, and the object's events (involvedObject.uid) with kubectl's
 * "82s (x3 over 31m)" ages. Without NAME every object of the kind is
 * described, separated by blank lines.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "util/jsonx.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

static const char help[] =
    "Show objects in detail.\n"
    "\n"
    "Usage:\n"
    "  cueue describe KIND [NAME...] | KIND/NAME... [flags]\n"
    "\n"
    "Prints metadata, a summary of the spec, the status conditions (type, status,\n"
    "reason, age, message) and the object's events. Per kind:\n"
    "  ClusterQueue   flavors with quota, borrowing limit and usage per resource\n"
    "  LocalQueue     its ClusterQueue, workload counts and flavor usage\n"
    "  Workload       pod sets, the admission (flavors per pod set), admission check\n"
    "                 states; for a pending workload its reason and queue position\n"
    "  Job, RayJob    pods with phase and node, per-worker metrics (cueue.dev/metrics)\n"
    "  NodePool       the pool's settings and its nodes\n"
    "  Node, Pod      placement, resources, taints/tolerations\n"
    "Without NAME, every object of KIND (in the namespace) is described.\n"
    "\n"
    "Examples:\n"
    "  cueue describe cq cluster-queue\n"
    "  cueue describe workload -l kueue.x-k8s.io/queue-name=user-queue\n"
    "  cueue describe job/train\n"
    "  cueue describe np dws-pool\n"
    "\n"
    "Flags:\n"
    "  -l, --selector SEL     describe the objects of KIND matching a label selector\n"
    "  -n, --namespace NS     namespace (default \"default\")\n"
    "  -A, --all-namespaces   every namespace (without NAME)\n"
    "      --server URL       API server\n";

static const struct option opts[] = {
    {"selector", required_argument, NULL, 'l'},
    {0, 0, 0, 0},
};

static const struct cli_verb verb = {"describe", help, opts, "l:"};

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

static void describe_sections(struct cli_ctx *c, const struct api_kind *k, const json_t *obj)
{
    cli__desc_meta(c, obj);
    cli_describe_fn fn = cli__describer_for(k);
    if (fn) {
        fn(c, k, obj);
    } else {
        cli__desc_yaml(c, 0, "Spec", JX_GET(obj, "spec"));
        json_t *status = json_deep_copy(JX_GET(obj, "status"));
        json_object_del(status, "conditions");
        cli__desc_yaml(c, 0, "Status", status);
        json_decref(status);
    }
    cli__desc_conditions(c, 0, obj);
    cli__desc_events(c, k, obj);
}

/* Sections are written to memory, then aligned onto the real output. */
static void describe_one(struct cli_ctx *c, const struct api_kind *k, const json_t *obj)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *real = c->out;
    c->out = open_memstream(&buf, &len);
    if (!c->out) {
        c->out = real;
        describe_sections(c, k, obj);
        return;
    }
    describe_sections(c, k, obj);
    fclose(c->out);
    c->out = real;
    cli__align_tabs(buf, real);
    free(buf);
}

static int describe_list(struct cli_ctx *c, const struct api_kind *k, const char *selector,
                         size_t *printed)
{
    json_t *items;
    if (cli__list_kind(c, k, cli__ns_for(c, k), selector, NULL, &items, NULL, 0) != 0)
        return 1;
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it) {
        if (c->unreachable)
            break;
        if ((*printed)++)
            fputs("\n\n", c->out);
        describe_one(c, k, it);
    }
    if (json_array_size(items) == 0)
        cli__no_resources(c, k);
    json_decref(items);
    return 0;
}

static int describe_named(struct cli_ctx *c, const struct api_kind *k, const char *name,
                          size_t *printed)
{
    json_t *obj;
    if (cli__get_object(c, k, cli__ns_for(c, k), name, false, &obj) != 0)
        return 1;
    if ((*printed)++)
        fputs("\n\n", c->out);
    describe_one(c, k, obj);
    json_decref(obj);
    return 0;
}

static int on_opt(struct cli_ctx *c, void *st, int code, const char *arg)
{
    (void)c;
    if (code == 'l')
        *(const char **)st = arg;
    return 0;
}

int cli__cmd_describe(struct cli_ctx *c, int argc, char **argv)
{
    const char *selector = NULL;
    struct cli_args a;
    size_t printed = 0;
    int rc = cli__parse(c, &verb, argc, argv, on_opt, &selector, &a);
    if (rc)
        return rc == CLI_HELP ? 0 : 1;
    struct cli_targets t = {0};
    if (cli__parse_targets(c, &a, &t) != 0)
        return 1;
    for (size_t i = 0; i < t.n && !c->unreachable; i++)
        rc |= t.items[i].name ? describe_named(c, t.items[i].k, t.items[i].name, &printed)
                              : describe_list(c, t.items[i].k, selector, &printed);
    xfree(t.items);
    return rc != 0;
}
