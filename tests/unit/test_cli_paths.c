/*
 * Where the CLI's requests go: names and namespaces checked with
 * client-go's path-segment rule (kubectl's words: "resource name may not
 * be empty", "invalid resource name \"..\": [may not be '..']") and
 * percent-escaped, so "", ".", ".." or "a/b" can never address a whole
 * collection; targets (categories such as `all`, a name with -A); lists
 * that follow metadata.continue through every page (a fake paging server
 * in this process); `kind: List` documents expanded into their items; a
 * server that cannot be reached said once, not once a document.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/cli-int.h"
#include "test_cli_fixtures.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static void assert_segment(const char *what, const char *s, const char *want)
{
    char err[256] = "";
    int rc = cli__segment_check(what, s, err, sizeof(err));
    if (!want) {
        assert_int_equal(rc, 0);
        return;
    }
    assert_int_equal(rc, -1);
    assert_string_equal(err, want);
}

static void test_segment_rule_is_kubectls(void **state)
{
    (void)state;
    assert_segment("resource name", "train-1", NULL);
    assert_segment("resource name", "a.b", NULL);
    assert_segment("resource name", "", "resource name may not be empty");
    assert_segment("resource name", NULL, "resource name may not be empty");
    assert_segment("resource name", ".", "invalid resource name \".\": [may not be '.']");
    assert_segment("resource name", "..", "invalid resource name \"..\": [may not be '..']");
    assert_segment("resource name", "a/b", "invalid resource name \"a/b\": [may not contain '/']");
    assert_segment("resource name", "a%b", "invalid resource name \"a%b\": [may not contain '%']");
    assert_segment("resource name", "a/%", "invalid resource name \"a/%\": [may not contain '/' "
                                           "may not contain '%']");
    assert_segment("namespace", "..", "invalid namespace \"..\": [may not be '..']");
    assert_segment("namespace", "default/configmaps/race?x=",
                   "invalid namespace \"default/configmaps/race?x=\": [may not contain '/']");
    assert_segment("namespace", "", "invalid namespace \"\": [may not be empty]");
    assert_segment("namespace", "BAD NS", NULL); /* escaped, then the server's to judge */
}

static void test_path_escapes_every_segment(void **state)
{
    (void)state;
    struct cap k;
    struct sbuf sb;
    cap_open(&k);
    sbuf_init(&sb, 0);
    const struct api_kind *cm = api_kind_get(KIND_CONFIGMAP);
    assert_int_equal(cli__path(&k.c, &sb, cm, "BAD NS", "a b?c#d", NULL), 0);
    assert_string_equal(sb.buf, "/api/v1/namespaces/BAD%20NS/configmaps/a%20b%3Fc%23d");
    sbuf_reset(&sb);
    assert_int_equal(cli__path(&k.c, &sb, api_kind_get(KIND_POD), "team", "p-0", "log"), 0);
    assert_string_equal(sb.buf, "/api/v1/namespaces/team/pods/p-0/log");
    sbuf_reset(&sb);
    assert_int_equal(cli__path(&k.c, &sb, api_kind_get(KIND_CLUSTERQUEUE), "ignored", "cq", NULL),
                     0);
    assert_string_equal(sb.buf, "/apis/kueue.x-k8s.io/v1beta1/clusterqueues/cq");
    sbuf_reset(&sb);
    assert_int_equal(cli__path(&k.c, &sb, cm, "default", NULL, NULL), 0);
    assert_string_equal(sb.buf, "/api/v1/namespaces/default/configmaps");
    /* the names that would have addressed the collection are refused */
    sbuf_reset(&sb);
    assert_int_equal(cli__path(&k.c, &sb, cm, "default", "", NULL), 1);
    assert_int_equal(cli__path(&k.c, &sb, cm, "default", ".", NULL), 1);
    assert_int_equal(cli__path(&k.c, &sb, cm, "..", "x", NULL), 1);
    assert_int_equal(sb.len, 0);
    assert_string_equal(cap_err(&k), "error: resource name may not be empty\n"
                                     "error: invalid resource name \".\": [may not be '.']\n"
                                     "error: invalid namespace \"..\": [may not be '..']\n");
    sbuf_reset(&sb);
    assert_int_equal(cli__pending_workloads_path(&k.c, &sb, "team a", "user-queue"), 0);
    assert_string_equal(sb.buf, "/apis/visibility.kueue.x-k8s.io/v1beta1/namespaces/team%20a/"
                                "localqueues/user-queue/pendingworkloads");
    sbuf_release(&sb);
    cap_close(&k);
}

/* Parse targets from words; returns the status, the targets in *t. */
static int targets(struct cap *k, struct cli_targets *t, int n, const char *const *words)
{
    struct cli_args a = {n, (char **)words};
    memset(t, 0, sizeof(*t));
    return cli__parse_targets(&k->c, &a, t);
}

static void test_targets_refuse_bad_names(void **state)
{
    (void)state;
    static const struct {
        int n;
        const char *words[3];
        const char *err;
    } cases[] = {
        {2, {"cm", ""}, "error: resource name may not be empty\n"},
        {2, {"cm", ".."}, "error: invalid resource name \"..\": [may not be '..']\n"},
        {2, {"ns", "."}, "error: invalid resource name \".\": [may not be '.']\n"},
        {1, {"cm/.."}, "error: invalid resource name \"..\": [may not be '..']\n"},
        {1, {"cm/"}, "error: arguments in resource/name form must have a single resource and "
                     "name\n"},
        {1, {"/x"}, "error: arguments in resource/name form must have a single resource and "
                    "name\n"},
        {1, {"cm/a/b"}, "error: arguments in resource/name form may not have more than one "
                        "slash\n"},
        {2, {"cm", "a%2F"}, "error: invalid resource name \"a%2F\": [may not contain '%']\n"},
        {1, {"nosuchkind"}, "error: the server doesn't have a resource type \"nosuchkind\"\n"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct cap k;
        struct cli_targets t;
        cap_open(&k);
        assert_int_equal(targets(&k, &t, cases[i].n, cases[i].words), 1);
        assert_string_equal(cap_err(&k), cases[i].err);
        xfree(t.items);
        cap_close(&k);
    }
}

static void test_targets_all_and_all_namespaces(void **state)
{
    (void)state;
    struct cap k;
    struct cli_targets t;
    cap_open(&k);
    const char *all[] = {"all"};
    assert_int_equal(targets(&k, &t, 1, all), 0);
    assert_int_equal(t.n, 4);
    assert_int_equal(t.items[0].k->id, KIND_POD);
    assert_int_equal(t.items[1].k->id, KIND_JOB);
    assert_int_equal(t.items[2].k->id, KIND_RAYJOB);
    assert_int_equal(t.items[3].k->id, KIND_SERVICE); /* kubectl's "all" has services */
    assert_null(t.items[0].name);
    xfree(t.items);
    const char *kinds[] = {"cq,lq", "x"};
    assert_int_equal(targets(&k, &t, 2, kinds), 0);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.items[1].name, "x");
    xfree(t.items);
    const struct api_kind *ks[KIND__COUNT];
    assert_int_equal(cli__category_kinds("kueue", ks, KIND__COUNT), 9);
    assert_int_equal(cli__category_kinds("nope", ks, KIND__COUNT), 0);
    /* kubectl: a name with -A is an error, not a request without namespace */
    k.c.all_ns = true;
    const char *named[] = {"cm", "a"};
    assert_int_equal(targets(&k, &t, 2, named), 1);
    assert_string_equal(cap_err(&k), "error: a resource cannot be retrieved by name across all "
                                     "namespaces\n");
    xfree(t.items);
    cap_close(&k);
}

static int nop_opt(struct cli_ctx *c, void *st, int code, const char *arg)
{
    (void)c, (void)st, (void)code, (void)arg;
    return 0;
}

static void test_namespace_flag_is_checked(void **state)
{
    (void)state;
    static const struct cli_verb verb = {"get", "HELP\n", NULL, NULL};
    const char *bad[][4] = {{"get", "-n", "..", "cm"},
                            {"get", "--namespace=a/b", "cm", NULL},
                            {"get", "-n", "", "cm"}};
    const char *want[] = {"error: invalid namespace \"..\": [may not be '..']\n",
                          "error: invalid namespace \"a/b\": [may not contain '/']\n",
                          "error: invalid namespace \"\": [may not be empty]\n"};
    for (int i = 0; i < 3; i++) {
        struct cap k;
        struct cli_args a;
        cap_open(&k);
        int argc = bad[i][3] ? 4 : 3;
        assert_int_equal(cli__parse(&k.c, &verb, argc, (char **)bad[i], nop_opt, NULL, &a), -1);
        assert_string_equal(cap_err(&k), want[i]);
        cap_close(&k);
    }
    struct cap k;
    struct cli_args a;
    cap_open(&k);
    const char *ok[] = {"get", "-n", "..", "-A", "cm"}; /* -A ignores -n, as kubectl does */
    assert_int_equal(cli__parse(&k.c, &verb, 5, (char **)ok, nop_opt, NULL, &a), 0);
    cap_close(&k);
}

/* ---- a fake paging server: ConfigMaps cm-0000.. in pages of `limit` ---- */

struct fake {
    struct MHD_Daemon *d;
    int total;     /* objects */
    bool repeat;   /* send the same continue token forever */
    int requests;
    char url[64];
};

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_len, void **con_cls)
{
    struct fake *f = cls;
    (void)method, (void)version, (void)upload, (void)upload_len, (void)con_cls;
    f->requests++;
    const char *lim = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "limit");
    const char *cont = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "continue");
    const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
    bool table = accept && strstr(accept, "as=Table");
    int limit = lim ? atoi(lim) : f->total, start = cont ? atoi(cont) : 0;
    json_t *items = json_array();
    for (int i = start; i < f->total && i < start + limit; i++) {
        char name[32];
        snprintf(name, sizeof(name), "cm-%04d", i);
        json_t *obj = json_pack("{s:{s:s,s:s}}", "metadata", "name", name, "namespace", "default");
        if (table)
            json_array_append_new(items, json_pack("{s:[s],s:o}", "cells", name, "object", obj));
        else
            json_array_append_new(items, obj);
    }
    json_t *doc = json_pack("{s:s,s:s,s:{s:s},s:o}", "kind", table ? "Table" : "ConfigMapList",
                            "apiVersion", table ? "meta.k8s.io/v1" : "v1", "metadata",
                            "resourceVersion", start == 0 ? "7" : "9", table ? "rows" : "items",
                            items);
    if (table)
        json_object_set_new(doc, "columnDefinitions", json_pack("[{s:s}]", "name", "Name"));
    if (f->repeat || start + limit < f->total) {
        char next[32];
        snprintf(next, sizeof(next), "%d", f->repeat ? 0 : start + limit);
        JX_SET_NEW(doc, json_string(next), "metadata", "continue");
    }
    if (strcmp(url, "/api/v1/namespaces/default/configmaps") != 0) {
        json_decref(doc);
        doc = json_pack("{s:s,s:i}", "kind", "Status", "code", 404);
    }
    char *text = json_dumps(doc, 0);
    json_decref(doc);
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(r, "Content-Type", "application/json");
    enum MHD_Result ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ret;
}

static void fake_start(struct fake *f, int total)
{
    memset(f, 0, sizeof(*f));
    f->total = total;
    f->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, answer, f,
                            MHD_OPTION_SOCK_ADDR,
                            (struct sockaddr *)&(struct sockaddr_in){
                                .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)},
                            MHD_OPTION_END);
    assert_non_null(f->d);
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(f->d, MHD_DAEMON_INFO_BIND_PORT);
    snprintf(f->url, sizeof(f->url), "http://127.0.0.1:%u", (unsigned)info->port);
}

static void test_lists_follow_every_page(void **state)
{
    (void)state;
    struct fake f;
    struct cap k;
    fake_start(&f, 1203);
    cap_open(&k);
    k.c.server_flag = xstrdup(f.url);
    json_t *items = NULL;
    char rv[16];
    assert_int_equal(cli__list_kind(&k.c, api_kind_get(KIND_CONFIGMAP), "default", NULL, NULL,
                                    &items, rv, sizeof(rv)),
                     0);
    assert_int_equal(json_array_size(items), 1203); /* not 500: three pages */
    assert_int_equal(f.requests, 3);
    assert_string_equal(JX_STR(json_array_get(items, 1202), "metadata", "name"), "cm-1202");
    assert_string_equal(JX_STR(json_array_get(items, 0), "kind"), "ConfigMap");
    assert_string_equal(rv, "7"); /* the first page's, to watch from */
    json_decref(items);
    /* tables page the same way, rows appended */
    json_t *doc = NULL;
    assert_int_equal(cli__list_pages(&k.c, "/api/v1/namespaces/default/configmaps", CLI_TABLE,
                                     NULL, &doc),
                     0);
    assert_int_equal(json_array_size(JX_GET(doc, "rows")), 1203);
    assert_null(JX_GET(doc, "metadata", "continue"));
    json_decref(doc);
    /* a server that repeats its token is an error, not an endless loop */
    f.repeat = true;
    assert_int_equal(cli__list_pages(&k.c, "/api/v1/namespaces/default/configmaps", CLI_JSON,
                                     NULL, &doc),
                     1);
    assert_null(doc);
    assert_string_equal(cap_err(&k), "error: the server sent the same continue token twice (0)\n");
    cap_close(&k);
    MHD_stop_daemon(f.d);
}

/* A file under $TMPDIR holding text; returns its path (caller frees). */
static char *temp_file(const char *text)
{
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char *path = xasprintf("%s/cueue-test-XXXXXX.yaml", dir);
    int fd = mkstemps(path, 5);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_list_documents_are_their_items(void **state)
{
    (void)state;
    char *path = temp_file("apiVersion: v1\nkind: List\nmetadata: {resourceVersion: \"\"}\n"
                           "items:\n"
                           "- {apiVersion: kueue.x-k8s.io/v1beta1, kind: ClusterQueue, "
                           "metadata: {name: cq}}\n"
                           "- {apiVersion: v1, kind: List, items: [{apiVersion: v1, kind: "
                           "Namespace, metadata: {name: inner}}]}\n"
                           "---\n"
                           "apiVersion: v1\nkind: ConfigMapList\nitems:\n"
                           "- {metadata: {name: typed}}\n"
                           "---\n"
                           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain}\n");
    struct cap k;
    struct cli_docs docs = {0};
    cap_open(&k);
    assert_int_equal(cli__read_manifests(&k.c, &path, 1, false, &docs), 0);
    assert_int_equal(docs.n, 4);
    const char *kinds[] = {"ClusterQueue", "Namespace", "ConfigMap", "ConfigMap"};
    const char *names[] = {"cq", "inner", "typed", "plain"};
    for (size_t i = 0; i < 4; i++) {
        const struct api_kind *kd;
        const char *name, *ns;
        assert_string_equal(JX_STR(docs.items[i].obj, "kind"), kinds[i]);
        assert_int_equal(cli__doc_target(&k.c, &docs.items[i], &kd, &name, &ns), 0);
        assert_string_equal(name, names[i]);
        assert_string_equal(docs.items[i].source, path);
    }
    cli__docs_release(&docs);
    unlink(path);
    xfree(path);
    cap_close(&k);
}

static void test_document_names_are_checked(void **state)
{
    (void)state;
    char *path = temp_file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ..}\n---\n"
                           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: "
                           "a/b}\n");
    struct cap k;
    struct cli_docs docs = {0};
    cap_open(&k);
    assert_int_equal(cli__read_manifests(&k.c, &path, 1, false, &docs), 0);
    assert_int_equal(docs.n, 2);
    const struct api_kind *kd;
    const char *name, *ns;
    assert_int_equal(cli__doc_target(&k.c, &docs.items[0], &kd, &name, &ns), 1);
    assert_int_equal(cli__doc_target(&k.c, &docs.items[1], &kd, &name, &ns), 1);
    char *want = xasprintf("error: error when retrieving current configuration of ConfigMap from "
                           "\"%s\": invalid resource name \"..\": [may not be '..']\n"
                           "error: error when retrieving current configuration of ConfigMap "
                           "\"x\" from \"%s\": invalid namespace \"a/b\": [may not contain "
                           "'/']\n", path, path);
    assert_string_equal(cap_err(&k), want);
    xfree(want);
    cli__docs_release(&docs);
    unlink(path);
    xfree(path);
    cap_close(&k);
}

/* A loopback port nobody listens on. */
static int dead_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(a);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static void test_unreachable_server_is_said_once(void **state)
{
    (void)state;
    char *path = temp_file("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"
                           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\n"
                           "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n");
    struct cap k;
    cap_open(&k);
    char *server = xasprintf("--server=http://127.0.0.1:%d", dead_port());
    const char *argv[] = {"apply", server, "-f", path};
    assert_int_equal(cli__cmd_apply(&k.c, 4, (char **)argv), 1);
    const char *err = cap_err(&k);
    assert_non_null(strstr(err, "error: cannot reach the cueue server at http://127.0.0.1:"));
    assert_non_null(strchr(err, '\n'));
    assert_string_equal(strchr(err, '\n'), "\n"); /* one line, for three documents */
    unlink(path);
    xfree(path);
    xfree(server);
    cap_close(&k);
}

static void test_server_version_line(void **state)
{
    (void)state;
    json_t *plain = json_pack("{s:s}", "gitVersion", "v1.32.0");
    json_t *ours = json_pack("{s:s,s:s}", "gitVersion", "v1.32.0", "cueueVersion", "0.1.0");
    char *a = cli__server_version_line(plain), *b = cli__server_version_line(ours);
    assert_string_equal(a, "Server Version: v1.32.0");
    assert_string_equal(b, "Server Version: v1.32.0 (cueue 0.1.0)");
    xfree(a);
    xfree(b);
    json_decref(plain);
    json_decref(ours);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_segment_rule_is_kubectls),
        cmocka_unit_test(test_path_escapes_every_segment),
        cmocka_unit_test(test_targets_refuse_bad_names),
        cmocka_unit_test(test_targets_all_and_all_namespaces),
        cmocka_unit_test(test_namespace_flag_is_checked),
        cmocka_unit_test(test_lists_follow_every_page),
        cmocka_unit_test(test_list_documents_are_their_items),
        cmocka_unit_test(test_document_names_are_checked),
        cmocka_unit_test(test_unreachable_server_is_said_once),
        cmocka_unit_test(test_server_version_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
