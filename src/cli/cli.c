/*
 * cli: the `cueue` command's dispatcher (see cli.h). `server` and `sim` go
 * to their modules; every other verb is a kubectl- or gcloud-like client
 * of a running server. Global flags may come before the verb
 * (`cueue -n team get wl`): they are moved after it so each verb's parser
 * sees them.
 */
#include "cli/cli.h"

#include <curl/curl.h>
#include <string.h>

#include "cli/cli-int.h"
#include "server/server.h"
#include "sim/sim.h"
#include "util/xalloc.h"

static const char top_help[] =
    "cueue: job queueing and admission for AI training (Kueue's objects and behaviour).\n"
    "\n"
    "Control plane:\n"
    "  server          Run the control plane and its Kubernetes-shaped API\n"
    "  sim             Run a scenario through the control plane in virtual time\n"
    "\n"
    "Objects (kubectl-like, talk to a running server over HTTP):\n"
    "  apply           Create or update objects from YAML/JSON files (-f)\n"
    "  get             Print objects as a table, YAML, JSON, names or JSONPath\n"
    "  describe        Show an object in detail, with its conditions and events\n"
    "  delete          Delete objects by kind and name, or from files\n"
    "  logs            Print the logs of a pod, or of every pod of a job\n"
    "  create          Create a ConfigMap, a Namespace, or objects from files\n"
    "  wait            Wait for a condition, a JSONPath value or deletion\n"
    "\n"
    "Node pools and clusters (gcloud-like):\n"
    "  nodepool        create | update | describe | list | delete node pools;\n"
    "                  machine-types lists the machine catalog\n"
    "  cluster         create | delete | get-credentials (the default-pool)\n"
    "\n"
    "Other:\n"
    "  version         Print the client and server versions\n"
    "\n"
    "Global flags (any verb):\n"
    "  --server URL          API server (default: $CUEUE_SERVER, else <state-dir>/server.url,\n"
    "                        else " CLI_DEFAULT_SERVER ")\n"
    "  --state-dir DIR       where `cueue server` keeps server.url (default $CUEUE_STATE_DIR,\n"
    "                        $XDG_STATE_HOME/cueue or ~/.local/state/cueue)\n"
    "  -n, --namespace NS    namespace (default \"default\")\n"
    "  -A, --all-namespaces  every namespace (get, describe, delete --all)\n"
    "  -h, --help            help for any verb: `cueue get --help`\n"
    "\n"
    "Exit status: 0 on success, 1 on any error.\n";

struct verb_entry {
    const char *name;
    int (*fn)(struct cli_ctx *c, int argc, char **argv);
};

static const struct verb_entry verbs[] = {
    {"apply", cli__cmd_apply},       {"get", cli__cmd_get},
    {"describe", cli__cmd_describe}, {"delete", cli__cmd_delete},
    {"logs", cli__cmd_logs},         {"create", cli__cmd_create},
    {"wait", cli__cmd_wait},         {"nodepool", cli__cmd_nodepool},
    {"nodepools", cli__cmd_nodepool}, {"node-pools", cli__cmd_nodepool},
    {"cluster", cli__cmd_cluster},   {"clusters", cli__cmd_cluster},
    {"version", cli__cmd_version},
};

/* Global flags that take a value when written without '='. */
static bool global_takes_value(const char *a)
{
    return !strcmp(a, "--server") || !strcmp(a, "--state-dir") || !strcmp(a, "-n") ||
           !strcmp(a, "--namespace");
}

/* Index of the verb in argv (first word that is not a global flag or its
 * value), or argc when there is none. */
static int find_verb(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] != '-')
            return i;
        if (global_takes_value(argv[i]))
            i++;
    }
    return argc;
}

/* argv reordered as: verb, pre-verb global flags, the rest. */
static char **reorder(int argc, char **argv, int vi, int skip)
{
    char **out = xcalloc((size_t)argc + 1, sizeof(*out));
    int n = 0;
    out[n++] = argv[vi + skip];
    for (int i = 1; i < vi; i++)
        out[n++] = argv[i];
    for (int i = vi + skip + 1; i < argc; i++)
        out[n++] = argv[i];
    return out;
}

static int run_verb(int argc, char **argv, int vi)
{
    /* gcloud spelling: `cueue container node-pools create ...` */
    int skip = !strcmp(argv[vi], "container") && vi + 1 < argc ? 1 : 0;
    const char *name = argv[vi + skip];
    int nargs = argc - skip - 1; /* entries in args */
    char **args = reorder(argc, argv, vi, skip);
    int rc;
    if (!strcmp(name, "server")) {
        rc = srv_main(nargs, args);
    } else if (!strcmp(name, "sim")) {
        rc = sim_main(nargs, args);
    } else {
        const struct verb_entry *v = NULL;
        for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
            if (!strcmp(verbs[i].name, name))
                v = &verbs[i];
        if (!v) {
            fprintf(stderr, "error: unknown command \"%s\" for \"cueue\"\n"
                            "Run 'cueue --help' for usage.\n", name);
            xfree(args);
            return 1;
        }
        struct cli_ctx c = {0};
        c.out = stdout;
        c.err = stderr;
        c.ns = xstrdup(CLI_DEFAULT_NAMESPACE);
        curl_global_init(CURL_GLOBAL_DEFAULT);
        rc = v->fn(&c, nargs, args);
        cli__ctx_release(&c);
        curl_global_cleanup();
    }
    xfree(args);
    return rc;
}

int cli_main(int argc, char **argv)
{
    int vi = find_verb(argc, argv);
    if (vi >= argc || !strcmp(argv[vi], "help")) {
        bool asked = vi < argc || (argc > 1 && (!strcmp(argv[1], "--help") ||
                                                !strcmp(argv[1], "-h")));
        fputs(top_help, asked ? stdout : stderr);
        return asked ? 0 : 1;
    }
    return run_verb(argc, argv, vi);
}
