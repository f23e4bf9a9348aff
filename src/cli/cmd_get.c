/*
 * cmd_get: `cueue get KIND[,KIND...] [NAME...] | KIND/NAME...`. The default
 * output is the server's Table (columns as the server defines them, the
 * priority-1 ones only with -o wide, NAMESPACE added with -A, exactly as
 * kubectl renders a Table); -o yaml|json|name|jsonpath=... print the
 * objects. -w keeps watching one kind (get_watch.c prints the stream).
 */
#include <string.h>

#include "cli/cli-int.h"
#include "cli/get-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static const char help[] =
    "Print objects.\n"
    "\n"
    "Usage:\n"
    "  cueue get KIND[,KIND...] [NAME...] [flags]\n"
    "  cueue get KIND/NAME [KIND/NAME...] [flags]\n"
    "\n"
    "KIND is a plural, singular, kind or short name: clusterqueues, clusterqueue,\n"
    "ClusterQueue, cq; localqueues/lq/queue, resourceflavors/rf/flavor, workloads/wl,\n"
    "admissionchecks/ac, provisioningrequestconfigs/prc, workloadpriorityclasses/wpc,\n"
    "cohorts, topologies, provisioningrequests/provreq, jobs, rayjobs, jobsets, pods/po,\n"
    "nodes/no, nodepools/np, configmaps/cm, namespaces/ns, events/ev; or\n"
    "\"plural.group\" (workloads.kueue.x-k8s.io); or a category, as kubectl expands\n"
    "them: all (pods, jobs, rayjobs), kueue (every Kueue kind).\n"
    "\n"
    "The default output is the server's table; -o wide adds the extra columns.\n"
    "\n"
    "Examples:\n"
    "  cueue get cq                         # ClusterQueues as a table\n"
    "  cueue get wl -A                      # Workloads in every namespace\n"
    "  cueue get cq,lq,rf                   # several kinds, one table each\n"
    "  cueue get all                        # pods, jobs and rayjobs\n"
    "  cueue get cq cluster-queue -o yaml   # one object as YAML\n"
    "  cueue get wl -o jsonpath='{.items[*].metadata.name}'\n"
    "  cueue get pods -l job-name=train -o wide\n"
    "  cueue get wl -w                      # watch Workloads change\n"
    "\n"
    "Flags:\n"
    "  -o, --output FORMAT       yaml, json, wide, name, jsonpath=TEMPLATE\n"
    "  -l, --selector SEL        label selector (k=v,k2!=v2,k3 in (a,b),!k4)\n"
    "      --field-selector SEL  field selector (metadata.name=x, status.phase=Running)\n"
    "  -w, --watch               after listing, print changes until interrupted\n"
    "  -L, --label-columns KEYS  a column per label key (comma-separated, repeatable)\n"
    "      --show-labels         add a LABELS column\n"
    "      --no-headers          print table rows without the header\n"
    "      --ignore-not-found    a missing NAME is not an error\n"
    "  -n, --namespace NS        namespace (default \"default\")\n"
    "  -A, --all-namespaces      list across every namespace\n"
    "      --server URL          API server\n";

enum { OPT_FIELD_SEL = 256, OPT_SHOW_LABELS, OPT_NO_HEADERS, OPT_IGNORE_NF };

static const struct option opts[] = {
    {"output", required_argument, NULL, 'o'},
    {"selector", required_argument, NULL, 'l'},
    {"watch", no_argument, NULL, 'w'},
    {"field-selector", required_argument, NULL, OPT_FIELD_SEL},
    {"show-labels", no_argument, NULL, OPT_SHOW_LABELS},
    {"label-columns", required_argument, NULL, 'L'},
    {"no-headers", no_argument, NULL, OPT_NO_HEADERS},
    {"ignore-not-found", no_argument, NULL, OPT_IGNORE_NF},
    {0, 0, 0, 0},
};

static const struct cli_verb verb = {"get", help, opts, "o:l:wL:"};

static int on_opt(struct cli_ctx *c, void *st, int code, const char *arg)
{
    struct get_opts *g = st;
    char err[512];
    switch (code) {
    case 'o':
        cli__outfmt_release(&g->fmt);
        if (cli__outfmt_parse(arg, &g->fmt, err, sizeof(err)) != 0)
            return -cli__error(c, "%s", err);
        return 0;
    case 'l':
        g->label_sel = arg;
        return 0;
    case 'w':
        g->watch = true;
        return 0;
    case OPT_FIELD_SEL:
        g->field_sel = arg;
        return 0;
    case OPT_SHOW_LABELS:
        g->show_labels = true;
        return 0;
    case 'L': { /* kubectl's --label-columns: comma-separated keys, repeatable */
        if (!g->label_cols)
            g->label_cols = json_array();
        char *copy = xstrdup(arg), *save = NULL;
        for (char *k = strtok_r(copy, ",", &save); k; k = strtok_r(NULL, ",", &save))
            if (*k)
                json_array_append_new(g->label_cols, json_string(k));
        xfree(copy);
        return 0;
    }
    case OPT_NO_HEADERS:
        g->no_headers = true;
        return 0;
    case OPT_IGNORE_NF:
        g->ignore_not_found = true;
        return 0;
    }
    return -1;
}

static size_t distinct_kinds(const struct get_opts *g)
{
    size_t n = 0;
    for (size_t i = 0; i < g->t.n; i++) {
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen |= g->t.items[j].k == g->t.items[i].k;
        n += !seen;
    }
    return n;
}

int cli__cmd_get(struct cli_ctx *c, int argc, char **argv)
{
    struct get_opts g = {0};
    struct cli_args a;
    int rc = cli__parse(c, &verb, argc, argv, on_opt, &g, &a);
    if (rc == 0)
        rc = cli__parse_targets(c, &a, &g.t);
    if (rc == 0 && g.watch && distinct_kinds(&g) > 1)
        rc = cli__error(c, "you may only specify a single resource type");
    if (rc == 0) {
        g.multi_kind = distinct_kinds(&g) > 1;
        if (g.fmt.kind == CLI_OUT_TABLE || g.fmt.kind == CLI_OUT_WIDE)
            rc = get__tables(c, &g);
        else
            rc = get__objects(c, &g);
    }
    if (rc == 0 && g.watch)
        rc = get__watch(c, &g);
    cli__outfmt_release(&g.fmt);
    json_decref(g.label_cols);
    cli__table_release(&g.shown);
    json_decref(g.shown_vis);
    xfree(g.t.items);
    return rc == CLI_HELP ? 0 : rc != 0;
}
