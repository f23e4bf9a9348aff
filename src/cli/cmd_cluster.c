/*
 * cmd_cluster: gcloud-like `cueue cluster create|delete|get-credentials NAME`.
 * There is one local cluster, the server itself: create makes (or updates)
 * its `default-pool` NodePool from --machine-type and --num-nodes (the pool
 * that hosts, e.g., a Ray head), delete removes every NodePool, and
 * get-credentials says where the server and its kubeconfig are. gcloud's
 * other cluster flags are accepted and ignored.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define DEFAULT_POOL "default-pool"

static const char help[] =
    "Manage the local cluster (gcloud container clusters).\n"
    "\n"
    "Usage:\n"
    "  cueue cluster create NAME [--machine-type=n2-standard-16] [--num-nodes=3]\n"
    "  cueue cluster delete NAME\n"
    "  cueue cluster get-credentials NAME\n"
    "(`cueue container clusters ...` is the same command.)\n"
    "\n"
    "The cluster is the running server. create makes or updates its NodePool\n"
    "\"default-pool\" (--num-nodes nodes of --machine-type, not autoscaled); delete\n"
    "removes every NodePool (their nodes go away; pods on them fail);\n"
    "get-credentials prints the server URL and the kubeconfig for kubectl.\n"
    "Accepted and ignored: --cluster-version, --location, --zone, --region, --project,\n"
    "--enable-image-streaming, --addons, --release-channel, --quiet.\n"
    "\n"
    "Examples:\n"
    "  cueue cluster create tpu-cluster --cluster-version=1.34 --machine-type=n2-standard-16 \\\n"
    "      --location=us-east5-b --enable-image-streaming --addons=RayOperator\n"
    "  cueue cluster get-credentials tpu-cluster\n"
    "  cueue cluster delete tpu-cluster\n";

enum { OPT_MACHINE = 256, OPT_NUM, OPT_IGNORED, OPT_IGNORED_BOOL };

static const struct option opts[] = {
    {"machine-type", required_argument, NULL, OPT_MACHINE},
    {"num-nodes", required_argument, NULL, OPT_NUM},
    {"cluster-version", required_argument, NULL, OPT_IGNORED},
    {"location", required_argument, NULL, OPT_IGNORED},
    {"zone", required_argument, NULL, OPT_IGNORED},
    {"region", required_argument, NULL, OPT_IGNORED},
    {"project", required_argument, NULL, OPT_IGNORED},
    {"addons", required_argument, NULL, OPT_IGNORED},
    {"release-channel", required_argument, NULL, OPT_IGNORED},
    {"enable-image-streaming", no_argument, NULL, OPT_IGNORED_BOOL},
    {"quiet", no_argument, NULL, 'q'},
    {0, 0, 0, 0},
};

static const struct cli_verb verb = {"cluster", help, opts, "q"};

struct cluster_opts {
    const char *machine_type;
    const char *num_nodes;
};

static int on_opt(struct cli_ctx *c, void *st, int code, const char *arg)
{
    struct cluster_opts *o = st;
    (void)c;
    if (code == OPT_MACHINE)
        o->machine_type = arg;
    else if (code == OPT_NUM)
        o->num_nodes = arg;
    return 0;
}

static int send_pool(struct cli_ctx *c, const char *method, const char *name, const json_t *body)
{
    const struct api_kind *k = api_kind_get(KIND_NODEPOOL);
    bool post = !strcmp(method, "POST");
    struct cli_what w = {k, name, post ? "create" : "patch", NULL, false};
    struct sbuf path;
    sbuf_init(&path, 0);
    int rc = cli__path(c, &path, k, NULL, post ? NULL : name, NULL);
    if (rc == 0)
        rc = cli__send(c, method, path.buf, post ? CLI_JSON : CLI_MERGE_PATCH, body, &w, NULL);
    sbuf_release(&path);
    return rc != 0;
}

static int cluster_create(struct cli_ctx *c, const struct cluster_opts *o, const char *cluster)
{
    struct cli_np_flags f;
    char err[512];
    cli__np_flags_init(&f);
    f.machine_type = o->machine_type ? o->machine_type : "n2-standard-16";
    f.num_nodes = o->num_nodes ? o->num_nodes : "3";
    json_t *pool = cli__nodepool_from_flags(DEFAULT_POOL, &f, err, sizeof(err));
    if (!pool)
        return cli__usage_error(c, "%s", err);
    json_t *live = NULL;
    int rc = cli__get_object(c, api_kind_get(KIND_NODEPOOL), NULL, DEFAULT_POOL, true, &live);
    if (rc == CU_ENOTFOUND) {
        rc = send_pool(c, "POST", DEFAULT_POOL, pool);
    } else if (rc == 0) {
        json_t *patch = json_pack("{s:O}", "spec", JX_GET(pool, "spec"));
        rc = send_pool(c, "PATCH", DEFAULT_POOL, patch);
        json_decref(patch);
    }
    if (rc == 0)
        fprintf(c->out, "Created cluster [%s]: node pool %s with %s x %s.\n", cluster,
                DEFAULT_POOL, f.num_nodes, f.machine_type);
    json_decref(live);
    json_decref(pool);
    return rc != 0;
}

static int cluster_delete(struct cli_ctx *c, const char *cluster)
{
    json_t *items;
    int rc = cli__list_kind(c, api_kind_get(KIND_NODEPOOL), NULL, NULL, NULL, &items, NULL, 0);
    if (rc)
        return rc;
    size_t i;
    json_t *p;
    json_array_foreach(items, i, p) {
        if (c->unreachable)
            break;
        rc |= cli__nodepool_delete(c, jx_or_empty(JX_STR(p, "metadata", "name")), true);
    }
    json_decref(items);
    if (rc == 0)
        fprintf(c->out, "Deleted cluster [%s].\n", cluster);
    return rc;
}

static int cluster_credentials(struct cli_ctx *c, const char *cluster)
{
    char *dir = cli__state_dir(c->state_dir_flag, getenv);
    fprintf(c->out, "Cluster [%s] is the cueue server at %s.\n", cluster, cli__server(c));
    if (dir)
        fprintf(c->out, "For kubectl: export KUBECONFIG=%s/kubeconfig\n", dir);
    xfree(dir);
    return 0;
}

int cli__cmd_cluster(struct cli_ctx *c, int argc, char **argv)
{
    struct cluster_opts o = {0};
    struct cli_args a;
    int rc = cli__parse(c, &verb, argc, argv, on_opt, &o, &a);
    if (rc)
        return rc == CLI_HELP ? 0 : 1;
    const char *sub = a.n ? a.v[0] : "";
    if (a.n != 2 && (!strcmp(sub, "create") || !strcmp(sub, "delete") ||
                     !strcmp(sub, "get-credentials")))
        return cli__usage_error(c, "cluster %s takes exactly one NAME", sub);
    if (a.n == 2 && cli__check_name(c, a.v[1]) != 0)
        return 1;
    if (!strcmp(sub, "create"))
        return cluster_create(c, &o, a.v[1]);
    if (!strcmp(sub, "delete"))
        return cluster_delete(c, a.v[1]);
    if (!strcmp(sub, "get-credentials"))
        return cluster_credentials(c, a.v[1]);
    return cli__usage_error(c, "unknown cluster command \"%s\" (create, delete, "
                            "get-credentials)", sub);
}
