/*
 * cmd_apply: `cueue apply -f FILE|DIR|- ...`, kubectl's client-side apply.
 * Every document is read first (a file that does not parse stops the
 * command before anything is sent); then, in file order, each object is
 * fetched: absent -> POST (created), present -> a three-way JSON merge
 * patch against the last-applied annotation (configured, or unchanged when
 * the patch is empty). A failing document is reported and the rest still
 * go through (but a server that cannot be reached stops the command); the
 * exit status is 1 if any failed. `kind: List` documents stand for their
 * items (manifest.c).
 */
#include <string.h>

#include "api/meta.h"
#include "cli/cli-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static const char help[] =
    "Create objects from files, or update them when they exist.\n"
    "\n"
    "Usage:\n"
    "  cueue apply -f FILE|DIR|- [-f ...] [flags]\n"
    "\n"
    "Each YAML/JSON document (multi-document files with ---, a directory's .yaml,\n"
    ".yml and .json files, or stdin with -) is created when it does not exist and\n"
    "updated when it does. Like kubectl, the document is kept in the annotation\n"
    "kubectl.kubernetes.io/last-applied-configuration; the next apply sends only the\n"
    "difference (fields removed from the file since the last apply are removed from\n"
    "the object). Prints one line per object: KIND/NAME created|configured|unchanged.\n"
    "Errors are printed and the other documents still applied; the exit status is 1\n"
    "if any document failed.\n"
    "\n"
    "Examples:\n"
    "  envsubst < dws-tpu-queue.yaml | cueue apply -f -\n"
    "  cueue apply -f queues.yaml -f job.yaml\n"
    "  cueue apply -f manifests/ -R\n"
    "\n"
    "Flags:\n"
    "  -f, --filename FILE   file, directory or - (stdin); repeatable\n"
    "  -R, --recursive       descend into sub-directories of a directory\n"
    "  -n, --namespace NS    namespace for documents that name none (default \"default\")\n"
    "      --validate=MODE   accepted for kubectl compatibility (the server always validates)\n"
    "      --server URL      API server\n";

enum { OPT_VALIDATE = 256 };

static const struct option opts[] = {
    {"filename", required_argument, NULL, 'f'},
    {"recursive", no_argument, NULL, 'R'},
    {"validate", optional_argument, NULL, OPT_VALIDATE},
    {0, 0, 0, 0},
};

static const struct cli_verb verb = {"apply", help, opts, "f:R"};

struct apply_opts {
    char **files;
    size_t nfiles, cap;
    bool recursive;
};

static int on_opt(struct cli_ctx *c, void *st, int code, const char *arg)
{
    struct apply_opts *o = st;
    (void)c;
    if (code == 'f') {
        XGROW(o->files, o->cap, o->nfiles + 1);
        o->files[o->nfiles++] = (char *)arg;
    } else if (code == 'R') {
        o->recursive = true;
    }
    return 0;
}

int cli__create_object(struct cli_ctx *c, const struct api_kind *k, const char *ns,
                       const char *name, const json_t *obj, const char *source,
                       const char *manager)
{
    struct sbuf path;
    char *action = source ? xasprintf("error when creating \"%s\": ", source) : NULL;
    struct cli_what w = {k, name, "post", action, false};
    sbuf_init(&path, 0);
    int rc = cli__path(c, &path, k, ns, NULL, NULL);
    if (rc == 0) {
        cli__query(&path, "fieldManager", manager);
        cli__query(&path, "fieldValidation", "Strict");
        rc = cli__send(c, "POST", path.buf, CLI_JSON, obj, &w, NULL);
    }
    if (rc == 0)
        fprintf(c->out, "%s/%s created\n", cli__kind_prefix(k), name);
    sbuf_release(&path);
    xfree(action);
    return rc != 0;
}

static int patch_object(struct cli_ctx *c, const struct api_kind *k, const char *ns,
                        const char *name, const json_t *patch, const char *source)
{
    struct sbuf path;
    char *action = xasprintf("error when patching \"%s\": ", source);
    struct cli_what w = {k, name, "patch", action, false};
    sbuf_init(&path, 0);
    int rc = cli__path(c, &path, k, ns, name, NULL);
    if (rc == 0) {
        cli__query(&path, "fieldManager", "kubectl-client-side-apply");
        cli__query(&path, "fieldValidation", "Strict");
        rc = cli__send(c, "PATCH", path.buf, CLI_MERGE_PATCH, patch, &w, NULL);
    }
    if (rc == 0)
        fprintf(c->out, "%s/%s configured\n", cli__kind_prefix(k), name);
    sbuf_release(&path);
    xfree(action);
    return rc != 0;
}

static int apply_doc(struct cli_ctx *c, const struct cli_doc *d)
{
    const struct api_kind *k;
    const char *name, *ns;
    if (cli__doc_target(c, d, &k, &name, &ns) != 0)
        return 1;
    json_t *modified = cli__apply_modified(d->obj);
    json_t *live = NULL;
    int rc = cli__get_object(c, k, ns, name, true, &live);
    if (rc == CU_ENOTFOUND) {
        rc = cli__create_object(c, k, ns, name, modified, d->source,
                                "kubectl-client-side-apply");
    } else if (rc == 0) {
        const char *last = api_annotation(live, CLI_LAST_APPLIED);
        json_error_t je;
        json_t *original = last ? json_loads(last, 0, &je) : NULL;
        json_t *patch = cli__apply_patch(original, modified, live);
        if (json_object_size(patch) == 0)
            fprintf(c->out, "%s/%s unchanged\n", cli__kind_prefix(k), name);
        else
            rc = patch_object(c, k, ns, name, patch, d->source);
        json_decref(patch);
        json_decref(original);
    } else {
        rc = 1;
    }
    json_decref(live);
    json_decref(modified);
    return rc != 0;
}

int cli__cmd_apply(struct cli_ctx *c, int argc, char **argv)
{
    struct apply_opts o = {0};
    struct cli_args a;
    struct cli_docs docs = {0};
    int rc = cli__parse(c, &verb, argc, argv, on_opt, &o, &a);
    if (rc == CLI_HELP) {
        rc = 0;
        goto out;
    }
    if (rc == 0 && a.n > 0)
        rc = cli__usage_error(c, "unexpected argument \"%s\" (files are given with -f)",
                              a.v[0]);
    else if (rc == 0 && o.nfiles == 0)
        rc = cli__usage_error(c, "must specify one of -f and -k");
    if (rc == 0)
        rc = cli__read_manifests(c, o.files, o.nfiles, o.recursive, &docs);
    if (rc == 0 && docs.n == 0)
        rc = cli__error(c, "no objects passed to apply");
    if (rc == 0) {
        int failed = 0;
        /* a server that cannot be reached is said once, not once a document */
        for (size_t i = 0; i < docs.n && !c->unreachable; i++)
            failed |= apply_doc(c, &docs.items[i]);
        rc = failed;
    }
out:
    cli__docs_release(&docs);
    xfree(o.files);
    return rc != 0;
}
