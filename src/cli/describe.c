/*
 * describe: `cueue describe KIND [NAME...]`, a human view of objects in
 * kubectl's describe layout: "Key:  value" lines indented two spaces per
 * level, the common metadata first, then the kind's own sections
 * (describe_kueue.c, describe_jobs.c, describe_nodes.c,
 * describe_workload.c; the layout helpers they share are describe_fmt.c),
 * the status conditions as a table, and the object's events (involvedObject.uid) with kubectl's
 * "82s (x3 over 31m)" ages. Without NAME every object of the kind is
 * described, separated by blank lines.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "cli/describe-int.h"
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
    "  JobSet         replicated jobs with their child Jobs' counts, pods with phase and node\n"
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

cli_describe_fn cli__describer_for(const struct api_kind *k)
{
    switch (k->id) {
    case KIND_CLUSTERQUEUE: return desc__clusterqueue;
    case KIND_LOCALQUEUE: return desc__localqueue;
    case KIND_RESOURCEFLAVOR: return desc__resourceflavor;
    case KIND_ADMISSIONCHECK: return desc__admissioncheck;
    case KIND_PROVISIONINGREQUESTCONFIG: return desc__provreqconfig;
    case KIND_WORKLOAD: return desc__workload;
    case KIND_JOB: return desc__job;
    case KIND_RAYJOB: return desc__rayjob;
    case KIND_JOBSET: return desc__jobset;
    case KIND_POD: return desc__pod;
    case KIND_NODEPOOL: return desc__nodepool;
    case KIND_NODE: return desc__node;
    default: return NULL;
    }
}
