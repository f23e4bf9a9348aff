/*
 * cmd_nodepool: gcloud-like node pools, `cueue nodepool create|update|
 * describe|list|delete|machine-types`, so the seed's
 * `gcloud container node-pools ...` lines run with `cueue nodepool ...`
 * (or `cueue container node-pools ...`) unchanged. Flags map onto the
 * NodePool object (npflags.c); gcloud's placement flags (--cluster,
 * --location, --zone, --region, --project) are accepted and ignored since
 * there is one local cluster. describe prints the gcloud-shaped view
 * (gformat.c projections, YAML otherwise).
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "provider/catalog.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static const char help[] =
    "Manage node pools (gcloud container node-pools).\n"
    "\n"
    "Usage:\n"
    "  cueue nodepool create NAME [pool flags]\n"
    "  cueue nodepool update NAME [pool flags]      change the given fields only\n"
    "  cueue nodepool describe NAME [--format=FORMAT]\n"
    "  cueue nodepool list [--format=FORMAT]\n"
    "  cueue nodepool delete NAME [--async]\n"
    "  cueue nodepool machine-types                 the machine catalog\n"
    "(`cueue container node-pools ...` is the same command.)\n"
    "\n"
    "Pool flags (gcloud's, mapped onto the NodePool object, see docs/nodepool.md):\n"
    "  --machine-type TYPE             e.g. n2-standard-16, ct6e-standard-4t\n"
    "  --tpu-topology TOPO             TPU slice topology, e.g. 4x4\n"
    "  --reservation-affinity MODE     none | any | specific\n"
    "  --[no-]enable-autoscaling       scale between --min-nodes and --max-nodes\n"
    "  --num-nodes N                   nodes created at once (default 0)\n"
    "  --min-nodes N, --max-nodes N    autoscaling bounds\n"
    "  --[no-]enable-queued-provisioning  nodes only through ProvisioningRequests (DWS)\n"
    "  --[no-]flex-start               flex-start capacity\n"
    "  --node-labels K=V,...           extra node labels\n"
    "  --node-taints K=V:EFFECT,...    extra node taints\n"
    "  --provider local|slurm          where the nodes come from (default local;\n"
    "                                  slurm: a Slurm partition's nodes, docs/slurm.md)\n"
    "  --partition NAME                the Slurm partition (--provider=slurm)\n"
    "  --capacity MODE                 cueue's local provider: immediate, stockout,\n"
    "                                  or delay:DURATION (e.g. delay:30s)\n"
    "Accepted and ignored (one local cluster): --cluster, --location, --zone,\n"
    "--region, --project, --quiet/-q.\n"
    "\n"
    "FORMAT: yaml (default for describe), json, get(KEY,...) or value(KEY,...) with\n"
    "dotted keys over the pool (name, config.machineType, config.flexStart,\n"
    "autoscaling.maxNodeCount, ...); booleans print as True/False like gcloud.\n"
    "\n"
    "Examples:\n"
    "  cueue nodepool create dws-pool --machine-type=ct6e-standard-4t --tpu-topology=4x4 \\\n"
    "      --reservation-affinity=none --enable-autoscaling --num-nodes=0 --min-nodes=0 \\\n"
    "      --max-nodes=4 --enable-queued-provisioning --flex-start\n"
    "  cueue nodepool describe dws-pool --format=\"get(config.flexStart)\"    # True\n"
    "  cueue nodepool update on-demand-pool --capacity=stockout\n"
    "  cueue nodepool list\n";

enum {
    OPT_MACHINE = 256, OPT_TOPOLOGY, OPT_RESERVATION, OPT_AUTOSCALING, OPT_NO_AUTOSCALING,
    OPT_NUM, OPT_MIN, OPT_MAX, OPT_QUEUED, OPT_NO_QUEUED, OPT_FLEX, OPT_NO_FLEX, OPT_CAPACITY,
    OPT_LABELS, OPT_TAINTS, OPT_PROVIDER, OPT_PARTITION, OPT_FORMAT, OPT_ASYNC, OPT_IGNORED,
};

static const struct option opts[] = {
    {"machine-type", required_argument, NULL, OPT_MACHINE},
    {"tpu-topology", required_argument, NULL, OPT_TOPOLOGY},
    {"reservation-affinity", required_argument, NULL, OPT_RESERVATION},
    {"enable-autoscaling", no_argument, NULL, OPT_AUTOSCALING},
    {"no-enable-autoscaling", no_argument, NULL, OPT_NO_AUTOSCALING},
    {"num-nodes", required_argument, NULL, OPT_NUM},
    {"min-nodes", required_argument, NULL, OPT_MIN},
    {"max-nodes", required_argument, NULL, OPT_MAX},
    {"enable-queued-provisioning", no_argument, NULL, OPT_QUEUED},
    {"no-enable-queued-provisioning", no_argument, NULL, OPT_NO_QUEUED},
    {"flex-start", no_argument, NULL, OPT_FLEX},
    {"no-flex-start", no_argument, NULL, OPT_NO_FLEX},
    {"capacity", required_argument, NULL, OPT_CAPACITY},
    {"node-labels", required_argument, NULL, OPT_LABELS},
    {"node-taints", required_argument, NULL, OPT_TAINTS},
    {"provider", required_argument, NULL, OPT_PROVIDER},
    {"partition", required_argument, NULL, OPT_PARTITION},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"async", no_argument, NULL, OPT_ASYNC},
    {"cluster", required_argument, NULL, OPT_IGNORED},
    {"location", required_argument, NULL, OPT_IGNORED},
    {"zone", required_argument, NULL, OPT_IGNORED},
    {"region", required_argument, NULL, OPT_IGNORED},
    {"project", required_argument, NULL, OPT_IGNORED},
    {"quiet", no_argument, NULL, 'q'},
    {0, 0, 0, 0},
};

static const struct cli_verb verb = {"nodepool", help, opts, "q"};

struct np_opts {
    struct cli_np_flags f;
    bool spec_flags; /* any pool flag given */
    const char *format;
    bool async;
};

static int on_opt(struct cli_ctx *c, void *st, int code, const char *arg)
{
    struct np_opts *o = st;
    struct cli_np_flags *f = &o->f;
    (void)c;
    o->spec_flags |= code >= OPT_MACHINE && code <= OPT_PARTITION;
    switch (code) {
    case OPT_MACHINE: f->machine_type = arg; break;
    case OPT_TOPOLOGY: f->tpu_topology = arg; break;
    case OPT_RESERVATION: f->reservation_affinity = arg; break;
    case OPT_AUTOSCALING: f->autoscaling = 1; break;
    case OPT_NO_AUTOSCALING: f->autoscaling = 0; break;
    case OPT_NUM: f->num_nodes = arg; break;
    case OPT_MIN: f->min_nodes = arg; break;
    case OPT_MAX: f->max_nodes = arg; break;
    case OPT_QUEUED: f->queued_provisioning = 1; break;
    case OPT_NO_QUEUED: f->queued_provisioning = 0; break;
    case OPT_FLEX: f->flex_start = 1; break;
    case OPT_NO_FLEX: f->flex_start = 0; break;
    case OPT_CAPACITY: f->capacity = arg; break;
    case OPT_LABELS: f->node_labels = arg; break;
    case OPT_TAINTS: f->node_taints = arg; break;
    case OPT_PROVIDER: f->provider = arg; break;
    case OPT_PARTITION: f->partition = arg; break;
    case OPT_FORMAT: o->format = arg; break;
    case OPT_ASYNC: o->async = true; break;
    default: break; /* gcloud placement flags and --quiet: ignored */
    }
    return 0;
}

/* Print the pools as gcloud's list does (or through --format). */
static int print_pools(struct cli_ctx *c, const json_t *pools, const char *format)
{
    size_t i;
    json_t *p;
    struct sbuf sb;
    char err[256];
    sbuf_init(&sb, 0);
    if (format) {
        int rc = 0;
        json_array_foreach(pools, i, p) {
            json_t *view = cli__nodepool_view(p);
            if (cli__gformat(format, view, &sb, err, sizeof(err)) != 0)
                rc = cli__error(c, "%s", err);
            json_decref(view);
            if (rc)
                break;
        }
        fwrite(sb.buf, 1, sb.len, c->out);
        sbuf_release(&sb);
        return rc;
    }
    struct cli_table t;
    cli__table_init(&t, 8);
    cli__table_rowv(&t, "NAME", "MACHINE_TYPE", "TPU_TOPOLOGY", "NODES", "AUTOSCALING",
                    "QUEUED_PROVISIONING", "FLEX_START", "CAPACITY");
    json_array_foreach(pools, i, p) {
        char nodes[32], scale[64], machine[320];
        const char *part = JX_STR(p, "spec", "slurm", "partition");
        if (part) /* a Slurm pool: the partition's nodes */
            snprintf(machine, sizeof(machine), "slurm:%s", part);
        else
            snprintf(machine, sizeof(machine), "%s",
                     jx_or_empty(JX_STR(p, "spec", "config", "machineType")));
        snprintf(nodes, sizeof(nodes), "%lld", (long long)JX_INT(p, 0, "status", "nodeCount"));
        if (JX_BOOL(p, false, "spec", "autoscaling", "enabled"))
            snprintf(scale, sizeof(scale), "%lld-%lld",
                     (long long)JX_INT(p, 0, "spec", "autoscaling", "minNodeCount"),
                     (long long)JX_INT(p, 0, "spec", "autoscaling", "maxNodeCount"));
        else
            snprintf(scale, sizeof(scale), "off");
        cli__table_rowv(&t, JX_STR(p, "metadata", "name"), machine,
                        JX_STR(p, "spec", "placementPolicy", "tpuTopology"), nodes, scale,
                        JX_BOOL(p, false, "spec", "queuedProvisioning", "enabled") ? "True"
                                                                                  : "False",
                        JX_BOOL(p, false, "spec", "config", "flexStart") ? "True" : "False",
                        jx_or_empty(JX_STR(p, "spec", "capacity", "mode")));
    }
    cli__table_print(&t, c->out, NULL);
    cli__table_release(&t);
    sbuf_release(&sb);
    return 0;
}

/* POST (create) or merge-PATCH (update) the pool built from the flags. */
static int np_write(struct cli_ctx *c, struct np_opts *o, const char *name, bool create)
{
    char err[512];
    json_t *obj = cli__nodepool_from_flags(name, &o->f, err, sizeof(err));
    if (!obj)
        return cli__usage_error(c, "%s", err);
    if (!create && !o->spec_flags) {
        json_decref(obj);
        return cli__usage_error(c, "nothing to update: give at least one pool flag");
    }
    const struct api_kind *k = api_kind_get(KIND_NODEPOOL);
    struct cli_what w = {k, name, create ? "create" : "patch", NULL, false};
    json_t *body = create ? json_incref(obj) : json_pack("{s:O}", "spec", JX_GET(obj, "spec"));
    json_t *got = NULL;
    struct sbuf path;
    sbuf_init(&path, 0);
    int rc = cli__path(c, &path, k, NULL, create ? NULL : name, NULL);
    if (rc == 0)
        rc = cli__send(c, create ? "POST" : "PATCH", path.buf,
                       create ? CLI_JSON : CLI_MERGE_PATCH, body, &w, &got);
    if (rc == 0) {
        fprintf(c->out, "%s node pool [%s].\n", create ? "Created" : "Updated", name);
        json_t *one = json_pack("[O]", json_is_object(got) ? got : obj);
        print_pools(c, one, NULL);
        json_decref(one);
    }
    sbuf_release(&path);
    json_decref(got);
    json_decref(body);
    json_decref(obj);
    return rc != 0;
}

static int np_describe(struct cli_ctx *c, struct np_opts *o, const char *name)
{
    json_t *pool;
    if (cli__get_object(c, api_kind_get(KIND_NODEPOOL), NULL, name, false, &pool) != 0)
        return 1;
    json_t *view = cli__nodepool_view(pool);
    struct sbuf sb;
    char err[256];
    int rc = 0;
    sbuf_init(&sb, 0);
    if (!o->format || !strcmp(o->format, "yaml")) {
        cli__yaml_append(&sb, view);
    } else if (!strcmp(o->format, "json")) {
        char *t = json_dumps(view, JSON_INDENT(2) | JSON_SORT_KEYS);
        sbuf_addf(&sb, "%s\n", t);
        free(t);
    } else if (cli__gformat(o->format, view, &sb, err, sizeof(err)) != 0) {
        rc = cli__error(c, "%s", err);
    }
    fwrite(sb.buf, 1, sb.len, c->out);
    sbuf_release(&sb);
    json_decref(view);
    json_decref(pool);
    return rc;
}

static int np_list(struct cli_ctx *c, struct np_opts *o)
{
    json_t *items;
    int rc = cli__list_kind(c, api_kind_get(KIND_NODEPOOL), NULL, NULL, NULL, &items, NULL, 0);
    if (rc)
        return rc;
    if (json_array_size(items) == 0)
        fprintf(c->err, "Listed 0 items.\n");
    else
        rc = print_pools(c, items, o->format);
    json_decref(items);
    return rc;
}

int cli__nodepool_delete(struct cli_ctx *c, const char *name, bool wait)
{
    const struct api_kind *k = api_kind_get(KIND_NODEPOOL);
    struct cli_what w = {k, name, "delete", NULL, false};
    json_t *body = json_pack("{s:s}", "propagationPolicy", "Background");
    struct sbuf path;
    sbuf_init(&path, 0);
    int rc = cli__path(c, &path, k, NULL, name, NULL);
    if (rc == 0)
        rc = cli__send(c, "DELETE", path.buf, CLI_JSON, body, &w, NULL) != 0;
    json_decref(body);
    sbuf_release(&path);
    for (int64_t deadline = cli__now_ms() + 120000; rc == 0 && wait;) {
        json_t *obj = NULL;
        int g = cli__get_object(c, k, NULL, name, true, &obj);
        json_decref(obj);
        if (g == CU_ENOTFOUND)
            break;
        if (g != 0)
            return 1;
        if (cli__now_ms() >= deadline)
            return cli__error(c, "timed out waiting for node pool %s to be deleted", name);
        cli__sleep_ms(200);
    }
    if (rc == 0)
        fprintf(c->out, "Deleted node pool [%s].\n", name);
    return rc;
}

static int np_machine_types(struct cli_ctx *c)
{
    struct cli_table t;
    cli__table_init(&t, 5);
    cli__table_rowv(&t, "NAME", "VCPUS", "MEMORY_GIB", "ACCELERATORS", "TPU");
    for (size_t i = 0;; i++) {
        const struct prov_machine *m = prov_machine_at(i);
        if (!m)
            break;
        char cpus[16], mem[32], acc[64];
        snprintf(cpus, sizeof(cpus), "%d", m->vcpus);
        snprintf(mem, sizeof(mem), "%.1f", (double)m->memory_mib / 1024.0);
        snprintf(acc, sizeof(acc), "%d", m->accel_count);
        cli__table_rowv(&t, m->name, cpus, mem, acc, m->tpu ? m->tpu->name : "");
    }
    cli__table_print(&t, c->out, NULL);
    cli__table_release(&t);
    return 0;
}

static int dispatch(struct cli_ctx *c, struct np_opts *o, struct cli_args *a)
{
    const char *sub = a->n ? a->v[0] : "";
    bool needs_name = !strcmp(sub, "create") || !strcmp(sub, "update") ||
                      !strcmp(sub, "describe") || !strcmp(sub, "delete");
    if (needs_name && a->n != 2)
        return cli__usage_error(c, "nodepool %s takes exactly one NAME", sub);
    if (needs_name && cli__check_name(c, a->v[1]) != 0)
        return 1;
    if (!needs_name && a->n > 1)
        return cli__usage_error(c, "unexpected argument \"%s\"", a->v[1]);
    if (o->spec_flags && strcmp(sub, "create") && strcmp(sub, "update"))
        return cli__usage_error(c, "pool flags (--machine-type, ...) apply to create and update "
                                "only");
    if (!strcmp(sub, "create") || !strcmp(sub, "update"))
        return np_write(c, o, a->v[1], !strcmp(sub, "create"));
    if (!strcmp(sub, "describe"))
        return np_describe(c, o, a->v[1]);
    if (!strcmp(sub, "delete"))
        return cli__nodepool_delete(c, a->v[1], !o->async);
    if (!strcmp(sub, "list"))
        return np_list(c, o);
    if (!strcmp(sub, "machine-types"))
        return np_machine_types(c);
    return cli__usage_error(c, "%s%s%s", a->n ? "unknown nodepool command \"" : "",
                            a->n ? sub : "a nodepool command is required",
                            a->n ? "\" (create, update, describe, list, delete, machine-types)"
                                 : " (create, update, describe, list, delete, machine-types)");
}

int cli__cmd_nodepool(struct cli_ctx *c, int argc, char **argv)
{
    struct np_opts o = {0};
    struct cli_args a;
    cli__np_flags_init(&o.f);
    int rc = cli__parse(c, &verb, argc, argv, on_opt, &o, &a);
    if (rc == 0)
        rc = dispatch(c, &o, &a);
    return rc == CLI_HELP ? 0 : rc != 0;
}
