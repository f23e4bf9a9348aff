/*
 * cmd_create: `cueue create configmap NAME --from-file=... --from-literal=...`,
 * `cueue create namespace NAME` and `cueue create -f FILE` (POST only: an
 * existing object is an AlreadyExists error, unlike apply). ConfigMap keys
 * are file base names (or KEY= given); text goes to data, non-UTF-8 bytes
 * to binaryData (base64), as kubectl does.
 */
#include <dirent.h>
#include <openssl/evp.h>
#include <string.h>
#include <sys/stat.h>

#include "api/meta.h"
#include "cli/cli-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static const char help[] =
    "Create a ConfigMap, a Namespace, or objects from files.\n"
    "\n"
    "Usage:\n"
    "  cueue create configmap NAME [--from-file=[KEY=]PATH]... [--from-literal=KEY=VALUE]...\n"
    "  cueue create namespace NAME\n"
    "  cueue create -f FILE|DIR|- [-f ...]\n"
    "\n"
    "--from-file takes a file (key = its base name unless KEY= is given) or a\n"
    "directory (one key per regular file in it). Text files go to data, other files\n"
    "to binaryData. An object that already exists is an error (use apply to update).\n"
    "\n"
    "Examples:\n"
    "  cueue create configmap jax-train-script --from-file=train.py\n"
    "  cueue create configmap settings --from-literal=epochs=50 --from-file=cfg=conf.yaml\n"
    "  cueue create configmap s --from-file=train.py --dry-run=client -o yaml\n"
    "  cueue create namespace team-a\n"
    "\n"
    "Flags:\n"
    "      --from-file [KEY=]PATH    add a file or a directory's files; repeatable\n"
    "      --from-literal KEY=VALUE  add a literal value; repeatable\n"
    "  -f, --filename FILE           create the objects of a file, directory or -\n"
    "      --dry-run=client          print the object instead of sending it (with -o)\n"
    "  -o, --output FORMAT           yaml or json (with --dry-run=client), or name\n"
    "  -n, --namespace NS            namespace (default \"default\")\n"
    "      --server URL              API server\n";

enum { OPT_FROM_FILE = 256, OPT_FROM_LITERAL, OPT_DRY_RUN };

static const struct option opts[] = {
    {"from-file", required_argument, NULL, OPT_FROM_FILE},
    {"from-literal", required_argument, NULL, OPT_FROM_LITERAL},
    {"filename", required_argument, NULL, 'f'},
    {"dry-run", optional_argument, NULL, OPT_DRY_RUN},
    {"output", required_argument, NULL, 'o'},
    {0, 0, 0, 0},
};

static const struct cli_verb verb = {"create", help, opts, "f:o:"};

struct create_opts {
    const char **from_file, **from_literal;
    size_t nff, ffcap, nfl, flcap;
    char **files;
    size_t nfiles, fcap;
    bool dry_run;
    const char *output;
};

static void push(const char ***arr, size_t *n, size_t *cap, const char *v)
{
    XGROW(*arr, *cap, *n + 1);
    (*arr)[(*n)++] = v;
}

static int on_opt(struct cli_ctx *c, void *st, int code, const char *arg)
{
    struct create_opts *o = st;
    switch (code) {
    case OPT_FROM_FILE:
        push(&o->from_file, &o->nff, &o->ffcap, arg);
        return 0;
    case OPT_FROM_LITERAL:
        push(&o->from_literal, &o->nfl, &o->flcap, arg);
        return 0;
    case 'f':
        XGROW(o->files, o->fcap, o->nfiles + 1);
        o->files[o->nfiles++] = (char *)arg;
        return 0;
    case OPT_DRY_RUN:
        if (arg && strcmp(arg, "client") && strcmp(arg, "none"))
            return -cli__usage_error(c, "--dry-run supports only \"client\" or \"none\"");
        o->dry_run = !arg || !strcmp(arg, "client");
        return 0;
    case 'o':
        o->output = arg;
        return 0;
    }
    return -1;
}

/* Add one file's content under key to the ConfigMap. Returns 0 or 1. */
static int add_file(struct cli_ctx *c, json_t *cm, const char *key, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return cli__error(c, "error reading %s: no such file or directory", path);
    struct sbuf sb;
    char buf[65536];
    size_t n;
    sbuf_init(&sb, (size_t)1 << 20); /* a ConfigMap holds at most 1 MiB */
    int rc = 0;
    while (rc == 0 && (n = fread(buf, 1, sizeof(buf), f)) > 0)
        if (sbuf_add(&sb, buf, n) != 0)
            rc = cli__error(c, "%s is larger than a ConfigMap's 1 MiB limit", path);
    fclose(f);
    json_t *section = NULL;
    if (rc == 0) {
        json_t *text = json_stringn(sb.buf, sb.len);
        if (text) {
            section = JX_OBJ(cm, "data");
            if (json_object_get(section, key))
                rc = cli__error(c, "cannot add key \"%s\", another key by that name already "
                                "exists in data", key);
            json_object_set_new(section, key, text);
        } else {
            char *b64 = xmalloc(4 * ((sb.len + 2) / 3) + 1);
            EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)sb.buf, (int)sb.len);
            section = JX_OBJ(cm, "binaryData");
            json_object_set_new(section, key, json_string(b64));
            xfree(b64);
        }
    }
    sbuf_release(&sb);
    return rc;
}

static int add_dir(struct cli_ctx *c, json_t *cm, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int rc = 0;
    if (!d)
        return cli__error(c, "error reading %s", dir);
    while (rc == 0 && (de = readdir(d)) != NULL) {
        char *p = xasprintf("%s/%s", dir, de->d_name);
        struct stat st;
        if (de->d_name[0] != '.' && stat(p, &st) == 0 && S_ISREG(st.st_mode))
            rc = add_file(c, cm, de->d_name, p);
        xfree(p);
    }
    closedir(d);
    return rc;
}

static int add_from_file(struct cli_ctx *c, json_t *cm, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (eq) {
        char *key = xstrndup(spec, (size_t)(eq - spec));
        int rc = *key ? add_file(c, cm, key, eq + 1)
                      : cli__error(c, "key names or file paths cannot be empty");
        xfree(key);
        return rc;
    }
    struct stat st;
    if (stat(spec, &st) != 0)
        return cli__error(c, "error reading %s: no such file or directory", spec);
    if (S_ISDIR(st.st_mode))
        return add_dir(c, cm, spec);
    const char *base = strrchr(spec, '/');
    return add_file(c, cm, base ? base + 1 : spec, spec);
}

static int add_literal(struct cli_ctx *c, json_t *cm, const char *spec)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec)
        return cli__error(c, "invalid literal source %s, expected key=value", spec);
    char *key = xstrndup(spec, (size_t)(eq - spec));
    json_t *data = JX_OBJ(cm, "data");
    int rc = 0;
    if (json_object_get(data, key))
        rc = cli__error(c, "cannot add key \"%s\", another key by that name already exists in "
                        "data", key);
    json_object_set_new(data, key, json_string(eq + 1));
    xfree(key);
    return rc;
}

/* Send (or with --dry-run print) a built object. */
static int finish_object(struct cli_ctx *c, struct create_opts *o, const struct api_kind *k,
                         const char *name, json_t *obj)
{
    if (o->dry_run) {
        struct cli_outfmt f;
        char err[256];
        if (!o->output) {
            fprintf(c->out, "%s/%s created (dry run)\n", cli__kind_prefix(k), name);
            return 0;
        }
        if (cli__outfmt_parse(o->output, &f, err, sizeof(err)) != 0)
            return cli__error(c, "%s", err);
        cli__print_object(c, &f, k, obj);
        cli__outfmt_release(&f);
        return 0;
    }
    const char *ns = cli__ns_for(c, k);
    int rc = cli__create_object(c, k, ns, name, obj, NULL, "kubectl-create");
    return rc;
}

static int create_configmap(struct cli_ctx *c, struct create_opts *o, const char *name)
{
    const struct api_kind *k = api_kind_get(KIND_CONFIGMAP);
    json_t *cm = api_object_new(api_kind_api_version(k), k->kind, cli__ns_for(c, k), name);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < o->nff; i++)
        rc = add_from_file(c, cm, o->from_file[i]);
    for (size_t i = 0; rc == 0 && i < o->nfl; i++)
        rc = add_literal(c, cm, o->from_literal[i]);
    if (rc == 0)
        rc = finish_object(c, o, k, name, cm);
    json_decref(cm);
    return rc;
}

static int create_files(struct cli_ctx *c, struct create_opts *o)
{
    struct cli_docs docs = {0};
    int rc = cli__read_manifests(c, o->files, o->nfiles, false, &docs), failed = 0;
    if (rc == 0 && docs.n == 0)
        rc = cli__error(c, "no objects passed to create");
    for (size_t i = 0; rc == 0 && i < docs.n && !c->unreachable; i++) {
        const struct api_kind *k;
        const char *name, *ns;
        if (cli__doc_target(c, &docs.items[i], &k, &name, &ns) != 0)
            failed = 1;
        else
            failed |= cli__create_object(c, k, ns, name, docs.items[i].obj,
                                         docs.items[i].source, "kubectl-create");
    }
    cli__docs_release(&docs);
    return rc || failed;
}

int cli__cmd_create(struct cli_ctx *c, int argc, char **argv)
{
    struct create_opts o = {0};
    struct cli_args a;
    int rc = cli__parse(c, &verb, argc, argv, on_opt, &o, &a);
    if (rc == 0 && o.nfiles) {
        rc = a.n ? cli__usage_error(c, "unexpected argument \"%s\" with -f", a.v[0])
                 : create_files(c, &o);
    } else if (rc == 0 && a.n == 2 && (!strcmp(a.v[0], "configmap") || !strcmp(a.v[0], "cm"))) {
        rc = create_configmap(c, &o, a.v[1]);
    } else if (rc == 0 && a.n == 2 && (!strcmp(a.v[0], "namespace") || !strcmp(a.v[0], "ns"))) {
        const struct api_kind *k = api_kind_get(KIND_NAMESPACE);
        json_t *ns = api_object_new(api_kind_api_version(k), k->kind, NULL, a.v[1]);
        rc = finish_object(c, &o, k, a.v[1], ns);
        json_decref(ns);
    } else if (rc == 0) {
        rc = cli__usage_error(c, a.n ? "unknown or incomplete create command \"%s\"; expected "
                                       "configmap NAME, namespace NAME or -f FILE"
                                     : "%sexpected configmap NAME, namespace NAME or -f FILE",
                              a.n ? a.v[0] : "");
    }
    xfree(o.from_file);
    xfree(o.from_literal);
    xfree(o.files);
    return rc == CLI_HELP ? 0 : rc != 0;
}
