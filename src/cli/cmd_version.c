/*
 * cmd_version: `cueue version [--client] [-o json|yaml]`: the client's version and the
 * server's /version answer (gitVersion, the Kubernetes version the API
 * mimics, and the cueue build when the answer has cueueVersion).
 */
#include <string.h>

#include "cli/cli-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static const char help[] =
    "Print the client and server versions.\n"
    "\n"
    "Usage:\n"
    "  cueue version [--client] [-o json|yaml]\n"
    "\n"
    "The server version is the Kubernetes version its API mimics (what kubectl\n"
    "sees): \"Server Version: v1.32.0\". When the server's /version also names its\n"
    "cueue build (the field cueueVersion), it follows in parentheses:\n"
    "\"Server Version: v1.32.0 (cueue 0.1.0)\".\n"
    "\n"
    "Examples:\n"
    "  cueue version\n"
    "  cueue version --client\n"
    "\n"
    "Flags:\n"
    "      --client         print the client version only (no server needed)\n"
    "  -o, --output FORMAT  json or yaml\n"
    "      --server URL     API server\n";

enum { OPT_CLIENT = 256 };

static const struct option opts[] = {
    {"client", no_argument, NULL, OPT_CLIENT},
    {"output", required_argument, NULL, 'o'},
    {0, 0, 0, 0},
};

static const struct cli_verb verb = {"version", help, opts, "o:"};

struct version_opts {
    bool client_only;
    const char *output;
};

static int on_opt(struct cli_ctx *c, void *st, int code, const char *arg)
{
    struct version_opts *o = st;
    (void)c;
    if (code == OPT_CLIENT)
        o->client_only = true;
    else if (code == 'o')
        o->output = arg;
    return 0;
}

static int print_structured(struct cli_ctx *c, const char *output, const json_t *server)
{
    struct cli_outfmt f;
    char err[256];
    if (cli__outfmt_parse(output, &f, err, sizeof(err)) != 0 ||
        (f.kind != CLI_OUT_JSON && f.kind != CLI_OUT_YAML)) {
        cli__outfmt_release(&f);
        return cli__usage_error(c, "--output must be json or yaml");
    }
    json_t *v = json_pack("{s:{s:s}}", "clientVersion", "gitVersion", "v" CLI_VERSION);
    if (server)
        json_object_set(v, "serverVersion", (json_t *)server);
    cli__print_object(c, &f, NULL, v);
    json_decref(v);
    cli__outfmt_release(&f);
    return 0;
}

char *cli__server_version_line(const json_t *server)
{
    const char *cueue = JX_STR(server, "cueueVersion");
    return xasprintf("Server Version: %s%s%s%s", jx_or_empty(JX_STR(server, "gitVersion")),
                     cueue && *cueue ? " (cueue " : "", cueue && *cueue ? cueue : "",
                     cueue && *cueue ? ")" : "");
}

int cli__cmd_version(struct cli_ctx *c, int argc, char **argv)
{
    struct version_opts o = {0};
    struct cli_args a;
    int rc = cli__parse(c, &verb, argc, argv, on_opt, &o, &a);
    if (rc)
        return rc == CLI_HELP ? 0 : 1;
    json_t *server = NULL;
    struct cli_call r;
    cli__call_init(&r);
    if (!o.client_only) {
        if (cli__http(c, "GET", "/version", CLI_JSON, NULL, NULL, &r) != 0)
            rc = cli__print_unreachable(c, &r);
        else if (!cli__call_ok(&r) || !json_is_object(r.json))
            rc = cli__print_call_error(c, &r, NULL, NULL, "get", NULL);
        else
            server = r.json;
    }
    if (o.output) {
        rc |= print_structured(c, o.output, server);
    } else {
        fprintf(c->out, "Client Version: v%s (cueue)\n", CLI_VERSION);
        if (server) {
            char *line = cli__server_version_line(server);
            fprintf(c->out, "%s\n", line);
            xfree(line);
        }
    }
    cli__call_release(&r);
    return rc != 0;
}
