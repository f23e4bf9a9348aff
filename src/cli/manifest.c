/*
 * manifest: the -f inputs of apply, create and delete. Files, directories
 * (their .yaml/.yml/.json files in name order, as kubectl visits them) and
 * stdin ("-") are read whole and decoded client-side with
 * api_parse_documents, only to learn each document's kind, name and
 * namespace; validation is the server's. A list document (`kind: List`,
 * apiVersion v1, as `get -o yaml|json` prints several objects, or a typed
 * list such as ConfigMapList) stands for its items, as kubectl flattens
 * lists, so cueue reads its own output back.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/decode.h"
#include "cli/cli-int.h"
#include "util/diag.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

#define CLI_MAX_MANIFEST_BYTES ((size_t)64 << 20)
#define CLI_MAX_LIST_DEPTH 8 /* Lists inside Lists */

void cli__docs_release(struct cli_docs *docs)
{
    for (size_t i = 0; i < docs->n; i++) {
        json_decref(docs->items[i].obj);
        xfree(docs->items[i].source);
    }
    xfree(docs->items);
    memset(docs, 0, sizeof(*docs));
}

/* The kind a list document lists: "List" in v1 (any items), or KIND+"List"
 * for a known KIND in the same apiVersion; NULL for other documents. *any
 * is set for v1 List. */
static const struct api_kind *list_of(const json_t *doc, bool *any)
{
    const char *av = JX_STR(doc, "apiVersion"), *kind = JX_STR(doc, "kind");
    *any = false;
    if (!av || !kind || !json_is_array(JX_GET(doc, "items")))
        return NULL;
    if (!strcmp(av, "v1") && !strcmp(kind, "List")) {
        *any = true;
        return NULL;
    }
    size_t n = strlen(kind);
    if (n <= 4 || strcmp(kind + n - 4, "List"))
        return NULL;
    char *item_kind = xstrndup(kind, n - 4);
    const struct api_kind *k = api_kind_by_gvk(av, item_kind);
    xfree(item_kind);
    return k;
}

/* Append doc, or, for a list, each of its items (a typed list's items get
 * the list's apiVersion and kind when they name none). */
static void add_doc(struct cli_docs *docs, json_t *doc, const char *source, int depth)
{
    bool any;
    const struct api_kind *k = list_of(doc, &any);
    if ((k || any) && depth < CLI_MAX_LIST_DEPTH) {
        size_t i;
        json_t *it;
        json_array_foreach(JX_GET(doc, "items"), i, it) {
            if (k && json_is_object(it) && !JX_STR(it, "kind")) {
                json_object_set_new(it, "apiVersion", json_string(api_kind_api_version(k)));
                json_object_set_new(it, "kind", json_string(k->kind));
            }
            add_doc(docs, it, source, depth + 1);
        }
        return;
    }
    XGROW(docs->items, docs->cap, docs->n + 1);
    docs->items[docs->n].obj = json_incref(doc);
    docs->items[docs->n].source = xstrdup(source);
    docs->n++;
}

/* Read a stream whole into sb. Returns 0, -1 (read error, errno set) or
 * -2 (larger than sb's limit). */
static int slurp(FILE *f, struct sbuf *sb)
{
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        if (sbuf_add(sb, buf, n) != 0)
            return -2;
    return ferror(f) ? -1 : 0;
}

static int read_one(struct cli_ctx *c, const char *path, const char *source, struct cli_docs *docs)
{
    struct sbuf sb;
    sbuf_init(&sb, CLI_MAX_MANIFEST_BYTES);
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    if (!f)
        return cli__error(c, "the path \"%s\" does not exist", path);
    errno = 0;
    int bad = slurp(f, &sb);
    int err = errno;
    struct stat st;
    bool sized = bad == -2 && f != stdin && fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    if (f != stdin)
        fclose(f);
    if (bad)
        sbuf_release(&sb);
    if (bad == -2 && sized)
        return cli__error(c, "error reading \"%s\": the file is %.1f MiB, more than the limit "
                          "of %zu MiB", path, (double)st.st_size / (1 << 20),
                          CLI_MAX_MANIFEST_BYTES >> 20);
    if (bad == -2)
        return cli__error(c, "error reading \"%s\": more than the limit of %zu MiB", path,
                          CLI_MAX_MANIFEST_BYTES >> 20);
    if (bad)
        return cli__error(c, "error reading \"%s\": %s", path, strerror(err ? err : EIO));
    json_t *arr = NULL;
    struct diag d;
    diag_init(&d);
    if (api_parse_documents(sb.buf, sb.len, source, &arr, &d) != 0) {
        char *why = diag_summary(&d);
        size_t n = strlen(source);
        const char *text = !strncmp(why, source, n) && !strncmp(why + n, ": ", 2) ? why + n + 2
                                                                              : why;
        cli__error(c, "error parsing %s: %s", source, text);
        xfree(why);
        diag_release(&d);
        sbuf_release(&sb);
        return 1;
    }
    size_t i;
    json_t *doc;
    json_array_foreach(arr, i, doc)
        add_doc(docs, doc, source, 0);
    json_decref(arr);
    diag_release(&d);
    sbuf_release(&sb);
    return 0;
}

static bool manifest_ext(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && (!strcmp(dot, ".yaml") || !strcmp(dot, ".yml") || !strcmp(dot, ".json"));
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_path(struct cli_ctx *c, const char *path, bool recursive, bool top,
                     struct cli_docs *docs);

static int read_dir(struct cli_ctx *c, const char *path, bool recursive, struct cli_docs *docs)
{
    DIR *dir = opendir(path);
    if (!dir)
        return cli__error(c, "cannot read directory \"%s\"", path);
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(dir)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        XGROW(names, cap, n + 1);
        names[n++] = xasprintf("%s/%s", path, de->d_name);
    }
    closedir(dir);
    qsort(names, n, sizeof(*names), cmp_name);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (rc == 0)
            rc = read_path(c, names[i], recursive, false, docs);
        xfree(names[i]);
    }
    xfree(names);
    return rc;
}

static int read_path(struct cli_ctx *c, const char *path, bool recursive, bool top,
                     struct cli_docs *docs)
{
    struct stat st;
    if (!strcmp(path, "-"))
        return read_one(c, "-", "STDIN", docs);
    if (stat(path, &st) != 0)
        return cli__error(c, "the path \"%s\" does not exist", path);
    if (S_ISDIR(st.st_mode)) {
        if (!top && !recursive)
            return 0;
        return read_dir(c, path, recursive, docs);
    }
    if (!top && !manifest_ext(path))
        return 0;
    return read_one(c, path, path, docs);
}

int cli__read_manifests(struct cli_ctx *c, char **files, size_t nfiles, bool recursive,
                        struct cli_docs *docs)
{
    for (size_t i = 0; i < nfiles; i++)
        if (read_path(c, files[i], recursive, true, docs) != 0)
            return 1;
    return 0;
}

int cli__doc_target(struct cli_ctx *c, const struct cli_doc *d, const struct api_kind **k,
                    const char **name, const char **ns)
{
    const char *av = JX_STR(d->obj, "apiVersion"), *kind = JX_STR(d->obj, "kind");
    *name = JX_STR(d->obj, "metadata", "name");
    if (!av || !kind || !*av || !*kind)
        return cli__error(c, "error validating \"%s\": error validating data: %s%s%s",
                          d->source, !av || !*av ? "apiVersion not set" : "",
                          (!av || !*av) && (!kind || !*kind) ? ", " : "",
                          !kind || !*kind ? "kind not set" : "");
    *k = api_kind_by_gvk(av, kind);
    const char *doc_ns = JX_STR(d->obj, "metadata", "namespace");
    if (!*k) {
        fprintf(c->err,
                "error: resource mapping not found for name: \"%s\" namespace: \"%s\" from "
                "\"%s\": no matches for kind \"%s\" in version \"%s\"\n"
                "ensure CRDs are installed first\n",
                jx_or_empty(*name), jx_or_empty(doc_ns), d->source, kind, av);
        return 1;
    }
    char why[512];
    if (cli__segment_check("resource name", *name, why, sizeof(why)) != 0)
        return cli__error(c, "error when retrieving current configuration of %s from \"%s\": %s",
                          api_kind_kind_group(*k), d->source, why);
    *ns = NULL;
    if ((*k)->namespaced) {
        if (doc_ns && *doc_ns && c->ns_explicit && strcmp(doc_ns, c->ns))
            return cli__error(c, "the namespace from the provided object \"%s\" does not match "
                              "the namespace \"%s\". You must pass '--namespace=%s' to perform "
                              "this operation.", doc_ns, c->ns, doc_ns);
        *ns = doc_ns && *doc_ns ? doc_ns : c->ns;
        if (cli__segment_check("namespace", *ns, why, sizeof(why)) != 0)
            return cli__error(c, "error when retrieving current configuration of %s \"%s\" from "
                              "\"%s\": %s", api_kind_kind_group(*k), *name, d->source, why);
    }
    return 0;
}
