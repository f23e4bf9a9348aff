/*
 * cmd_delete: `cueue delete KIND NAME... | KIND/NAME... | -f FILE |
 * KIND --all | KIND -l SEL`. Each object gets a DELETE with
 * propagationPolicy Background (dependents go asynchronously, as kubectl
 * asks); then, by default (--wait=true, like kubectl), the command polls
 * each object until the server answers 404 or --timeout passes.
 */
#include <string.h>

#include "cli/cli-int.h"
#include "util/duration.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static const char help[] =
    "Delete objects by kind and name, by label selector, or from files.\n"
    "\n"
    "Usage:\n"
    "  cueue delete KIND NAME [NAME...] [flags]\n"
    "  cueue delete KIND/NAME [KIND/NAME...] [flags]\n"
    "  cueue delete -f FILE|DIR|- [flags]\n"
    "  cueue delete KIND (--all | -l SELECTOR) [flags]\n"
    "\n"
    "Prints KIND \"NAME\" deleted for each object. By default waits until each object\n"
    "is gone (the server may finish deleting it after answering).\n"
    "\n"
    "Examples:\n"
    "  cueue delete cq cluster-queue\n"
    "  cueue delete rayjob/rayjob-tpu-v6e-dws-1\n"
    "  envsubst < dws-tpu-queue.yaml | cueue delete -f -\n"
    "  cueue delete wl --all --wait=false\n"
    "\n"
    "Flags:\n"
    "  -f, --filename FILE      file, directory or -; repeatable\n"
    "  -R, --recursive          descend into sub-directories of a directory\n"
    "  -l, --selector SEL       delete the objects of KIND matching a label selector\n"
    "      --all                delete every object of KIND in the namespace\n"
    "      --ignore-not-found   a missing object is not an error\n"
    "      --wait[=true|false]  wait until objects are gone (default true)\n"
    "      --timeout DURATION   how long --wait waits (default 60s; 0 means the default)\n"
    "  -n, --namespace NS       namespace (default \"default\")\n"
    "      --server URL         API server\n";

enum { OPT_ALL = 256, OPT_IGNORE_NF, OPT_WAIT, OPT_TIMEOUT };

static const struct option opts[] = {
    {"filename", required_argument, NULL, 'f'},
    {"recursive", no_argument, NULL, 'R'},
    {"selector", required_argument, NULL, 'l'},
    {"all", no_argument, NULL, OPT_ALL},
    {"ignore-not-found", no_argument, NULL, OPT_IGNORE_NF},
    {"wait", optional_argument, NULL, OPT_WAIT},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {0, 0, 0, 0},
};

static const struct cli_verb verb = {"delete", help, opts, "f:Rl:"};

struct del_item {
    const struct api_kind *k;
    char *ns;
    char *name;
    char *source; /* -f file, or NULL */
};

struct del_opts {
    char **files;
    size_t nfiles, fcap;
    bool recursive, all, ignore_nf, wait;
    const char *selector;
    int64_t timeout_ms;
    struct del_item *items;
    size_t n, cap;
};

static int on_opt(struct cli_ctx *c, void *st, int code, const char *arg)
{
    struct del_opts *o = st;
    switch (code) {
    case 'f':
        XGROW(o->files, o->fcap, o->nfiles + 1);
        o->files[o->nfiles++] = (char *)arg;
        return 0;
    case 'R':
        o->recursive = true;
        return 0;
    case 'l':
        o->selector = *arg ? arg : NULL; /* kubectl: -l "" selects nothing */
        return 0;
    case OPT_ALL:
        o->all = true;
        return 0;
    case OPT_IGNORE_NF:
        o->ignore_nf = true;
        return 0;
    case OPT_WAIT:
        if (arg && cli__parse_bool(arg, &o->wait) != 0)
            return -cli__usage_error(c, "invalid argument \"%s\" for --wait", arg);
        if (!arg)
            o->wait = true;
        return 0;
    case OPT_TIMEOUT:
        if (cu_duration_parse_ms(arg, &o->timeout_ms, NULL) || o->timeout_ms < 0)
            return -cli__usage_error(c, "invalid --timeout \"%s\" (e.g. 30s, 2m)", arg);
        if (o->timeout_ms == 0) /* kubectl: 0 picks a timeout for the object; ours is 60s */
            o->timeout_ms = 60000;
        return 0;
    }
    return -1;
}

static void add_item(struct del_opts *o, const struct api_kind *k, const char *ns,
                     const char *name, const char *source)
{
    XGROW(o->items, o->cap, o->n + 1);
    o->items[o->n++] = (struct del_item){k, xstrdup(ns), xstrdup(name), xstrdup(source)};
}

/* Names of KIND matching --all / -l. Returns 0 or 1. */
static int collect_listed(struct cli_ctx *c, struct del_opts *o, const struct api_kind *k)
{
    json_t *items;
    if (cli__list_kind(c, k, cli__ns_for(c, k), o->selector, NULL, &items, NULL, 0) != 0)
        return 1;
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it) {
        const char *name = JX_STR(it, "metadata", "name");
        if (name && *name) /* never "": that path is the collection */
            add_item(o, k, k->namespaced ? JX_STR(it, "metadata", "namespace") : NULL, name,
                     NULL);
    }
    if (json_array_size(items) == 0)
        cli__no_resources(c, k);
    json_decref(items);
    return 0;
}

static int collect_args(struct cli_ctx *c, struct del_opts *o, struct cli_args *a)
{
    struct cli_targets t = {0};
    int rc = a->n ? cli__parse_targets(c, a, &t)
                  : cli__usage_error(c, "you must provide one or more resources by argument "
                                        "or filename");
    bool listed = o->all || o->selector;
    for (size_t i = 0; rc == 0 && i < t.n && !c->unreachable; i++) {
        const struct api_kind *k = t.items[i].k;
        if (listed && t.items[i].name)
            rc = cli__usage_error(c, "names cannot be provided when a selector or --all is "
                                  "specified");
        else if (listed)
            rc = collect_listed(c, o, k);
        else if (!t.items[i].name)
            rc = cli__usage_error(c, "resource(s) were provided, but no name was specified");
        else
            add_item(o, k, cli__ns_for(c, k), t.items[i].name, NULL);
    }
    xfree(t.items);
    return rc;
}

static int collect_files(struct cli_ctx *c, struct del_opts *o)
{
    struct cli_docs docs = {0};
    int rc = cli__read_manifests(c, o->files, o->nfiles, o->recursive, &docs);
    for (size_t i = 0; rc == 0 && i < docs.n; i++) {
        const struct api_kind *k;
        const char *name, *ns;
        if (cli__doc_target(c, &docs.items[i], &k, &name, &ns) != 0)
            rc = 1;
        else
            add_item(o, k, ns, name, docs.items[i].source);
    }
    cli__docs_release(&docs);
    return rc;
}

/* DELETE one object. Returns 0 deleted, 2 not found (ignored), 1 error. */
static int delete_one(struct cli_ctx *c, struct del_opts *o, const struct del_item *it)
{
    struct sbuf path;
    char *action = it->source ? xasprintf("error when deleting \"%s\": ", it->source) : NULL;
    struct cli_what w = {it->k, it->name, "delete", action, o->ignore_nf};
    json_t *body = json_pack("{s:s}", "propagationPolicy", "Background");
    sbuf_init(&path, 0);
    int rc = cli__path(c, &path, it->k, it->ns, it->name, NULL);
    if (rc == 0)
        rc = cli__send(c, "DELETE", path.buf, CLI_JSON, body, &w, NULL);
    if (rc == 0)
        fprintf(c->out, "%s \"%s\" deleted\n", cli__kind_prefix(it->k), it->name);
    json_decref(body);
    sbuf_release(&path);
    xfree(action);
    if (rc == CU_ENOTFOUND)
        return o->ignore_nf ? 2 : 1;
    return rc != 0;
}

/* Who still uses a deleting object, when one list says it cheaply: the
 * ClusterQueues that name a ResourceFlavor or AdmissionCheck, the quota
 * still reserved in a ClusterQueue (the two things Kueue's
 * resource-in-use finalizer waits for). New string or NULL. */
static char *users_of(struct cli_ctx *c, const struct del_item *it, const json_t *obj)
{
    if (it->k->id == KIND_CLUSTERQUEUE) {
        json_int_t n = JX_INT(obj, 0, "status", "reservingWorkloads");
        if (n <= 0)
            n = JX_INT(obj, 0, "status", "admittedWorkloads");
        return n > 0 ? xasprintf("%lld workload%s still reserve%s quota in it", (long long)n,
                                 n > 1 ? "s" : "", n > 1 ? "" : "s")
                     : NULL;
    }
    if (it->k->id != KIND_RESOURCEFLAVOR && it->k->id != KIND_ADMISSIONCHECK)
        return NULL;
    json_t *cqs = NULL;
    if (cli__list_kind(c, api_kind_get(KIND_CLUSTERQUEUE), NULL, NULL, NULL, &cqs, NULL, 0))
        return NULL;
    char *users = cli__in_use_by(cqs, it->k, it->name);
    json_decref(cqs);
    return users;
}

/* The timeout error, saying which finalizers hold an object that the
 * server is still deleting. Returns 1. */
static int timed_out(struct cli_ctx *c, const struct del_item *it, const json_t *obj)
{
    char *users = users_of(c, it, obj);
    char *why = cli__deletion_holdup(it->k, obj, users);
    cli__error(c, "timed out waiting for the condition on %s/%s%s%s", it->k->plural, it->name,
               why ? ": " : "", why ? why : "");
    xfree(why);
    xfree(users);
    return 1;
}

/* Poll until the object is gone. Returns 0, or 1 on timeout/error. */
static int wait_gone(struct cli_ctx *c, const struct del_item *it, int64_t deadline_ms)
{
    for (;;) {
        json_t *obj = NULL;
        int rc = cli__get_object(c, it->k, it->ns, it->name, true, &obj);
        if (rc == CU_ENOTFOUND)
            return 0;
        if (rc == 0 && cli__now_ms() >= deadline_ms)
            rc = timed_out(c, it, obj);
        json_decref(obj);
        if (rc != 0)
            return 1;
        cli__sleep_ms(200);
    }
}

int cli__cmd_delete(struct cli_ctx *c, int argc, char **argv)
{
    struct del_opts o = {.wait = true, .timeout_ms = 60000};
    struct cli_args a;
    int rc = cli__parse(c, &verb, argc, argv, on_opt, &o, &a);
    if (rc == 0 && o.nfiles)
        rc = a.n ? cli__usage_error(c, "names cannot be provided with -f") : collect_files(c, &o);
    else if (rc == 0)
        rc = collect_args(c, &o, &a);
    int failed = 0;
    bool *deleted = xcalloc(o.n ? o.n : 1, sizeof(*deleted));
    for (size_t i = 0; rc == 0 && i < o.n && !c->unreachable; i++) {
        int r = delete_one(c, &o, &o.items[i]);
        deleted[i] = r == 0;
        failed |= r == 1;
    }
    int64_t deadline = cli__now_ms() + o.timeout_ms;
    for (size_t i = 0; rc == 0 && o.wait && i < o.n && !c->unreachable; i++)
        if (deleted[i])
            failed |= wait_gone(c, &o.items[i], deadline);
    for (size_t i = 0; i < o.n; i++) {
        xfree(o.items[i].ns);
        xfree(o.items[i].name);
        xfree(o.items[i].source);
    }
    xfree(deleted);
    xfree(o.items);
    xfree(o.files);
    if (rc == CLI_HELP)
        return 0;
    return rc != 0 || failed;
}
