/*
 * Unit tests of the API's safety rules, through srv__dispatch with a memory
 * store (no HTTP):
 *  - an empty, "." or ".." name in the URL is refused (400, Kubernetes'
 *    path segment rule) and never reaches the collection: DELETE
 *    .../configmaps/ used to delete every ConfigMap;
 *  - Namespaces: no collection delete (405, as in Kubernetes, so no bulk
 *    path can skip the cascade), deleting one by name removes its objects,
 *    default/kube-system/kube-public are refused (403);
 *  - metadata.uid cannot change: 422 on PATCH, 409 precondition on PUT;
 *  - pod logs are streamed in bounded chunks; tailLines reads backwards.
 */
#include <fcntl.h>

#include "exec/exec.h"

#include "test_server_fixture.h"

#define JSON "application/json"
#define MERGE "application/merge-patch+json"

static void create_cm(struct sfx *s, const char *ns, const char *name)
{
    char *path = xasprintf("/api/v1/namespaces/%s/configmaps", ns);
    char *body = xasprintf("{\"metadata\":{\"name\":\"%s\"},\"data\":{\"k\":\"v\"}}", name);
    char msg[512];
    assert_int_equal(sfx_call(s, "POST", path, NULL, JSON, body, msg, sizeof(msg)), 201);
    xfree(body);
    xfree(path);
}

static bool has(struct sfx *s, enum api_kind_id k, const char *ns, const char *name)
{
    json_t *o = store_get(s->fx->store, k, ns, name);
    json_decref(o);
    return o != NULL;
}

static void empty_or_dot_names_are_refused(void **state)
{
    (void)state;
    struct sfx *s = sfx_new(false);
    create_cm(s, "default", "a");
    create_cm(s, "default", "b");
    char msg[512];
    const char *cms = "/api/v1/namespaces/default/configmaps";
    static const char *const verbs[] = {"DELETE", "GET", "PUT", "PATCH", "POST"};
    for (size_t i = 0; i < sizeof(verbs) / sizeof(*verbs); i++) {
        char *p = xasprintf("%s/", cms);
        assert_int_equal(sfx_call(s, verbs[i], p, NULL, MERGE, "{}", msg, sizeof(msg)), 400);
        assert_string_equal(msg, "Name parameter required.");
        xfree(p);
    }
    assert_true(has(s, KIND_CONFIGMAP, "default", "a") && has(s, KIND_CONFIGMAP, "default", "b"));
    assert_int_equal(sfx_call(s, "DELETE", "/api/v1/namespaces/default/configmaps/.", NULL,
                              NULL, NULL, msg, sizeof(msg)),
                     400);
    assert_string_equal(msg, "Name parameter invalid: \".\": may not be '.'");
    assert_int_equal(sfx_call(s, "DELETE", "/api/v1/namespaces/default/configmaps/..", NULL,
                              NULL, NULL, msg, sizeof(msg)),
                     400);
    assert_string_equal(msg, "Name parameter invalid: \"..\": may not be '..'");
    assert_int_equal(sfx_call(s, "DELETE", "/api/v1/namespaces/default/configmaps/a%b", NULL,
                              NULL, NULL, msg, sizeof(msg)),
                     400);
    assert_string_equal(msg, "Name parameter invalid: \"a%b\": may not contain '%'");
    assert_int_equal(sfx_call(s, "DELETE", "/api/v1/namespaces//configmaps", NULL, NULL, NULL,
                              msg, sizeof(msg)),
                     400);
    assert_string_equal(msg, "Namespace parameter required.");
    assert_int_equal(sfx_call(s, "DELETE", "/api/v1/namespaces/default/configmaps//status",
                              NULL, NULL, NULL, msg, sizeof(msg)),
                     400);
    assert_true(has(s, KIND_CONFIGMAP, "default", "a") && has(s, KIND_CONFIGMAP, "default", "b"));
    /* a cluster-scoped collection too */
    fx_apply_text(s->fx,
                  "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n"
                  "  name: rf\n",
                  "rf");
    assert_int_equal(sfx_call(s, "DELETE", "/apis/kueue.x-k8s.io/v1beta1/resourceflavors/",
                              NULL, NULL, NULL, msg, sizeof(msg)),
                     400);
    assert_true(has(s, KIND_RESOURCEFLAVOR, NULL, "rf"));
    /* discovery keeps its trailing-slash forms; the collection path itself
     * still deletes the collection */
    assert_int_equal(sfx_call(s, "GET", "/api/", NULL, NULL, NULL, NULL, 0), 200);
    assert_int_equal(sfx_call(s, "GET", "/apis/kueue.x-k8s.io/v1beta1/", NULL, NULL, NULL,
                              NULL, 0),
                     200);
    assert_int_equal(sfx_call(s, "DELETE", cms, NULL, NULL, NULL, NULL, 0), 200);
    assert_false(has(s, KIND_CONFIGMAP, "default", "a") || has(s, KIND_CONFIGMAP, "default", "b"));
    sfx_free(s);
}

static bool ns_verbs_have(struct sfx *s, const char *verb)
{
    struct srv_resp r;
    sfx_req(s, "GET", "/api/v1", NULL, NULL, NULL, &r);
    json_t *list = sfx_json(&r);
    bool found = false;
    size_t i, j;
    json_t *res, *v;
    json_array_foreach(JX_GET(list, "resources"), i, res)
    {
        if (strcmp(jx_or_empty(JX_STR(res, "name")), "namespaces"))
            continue;
        json_array_foreach(JX_GET(res, "verbs"), j, v)
            found |= !strcmp(json_string_value(v), verb);
    }
    json_decref(list);
    srv__resp_release(&r);
    return found;
}

static void namespaces_delete_by_name_only_and_cascade(void **state)
{
    (void)state;
    struct sfx *s = sfx_new(false);
    char msg[512];
    assert_int_equal(sfx_call(s, "POST", "/api/v1/namespaces", NULL, JSON,
                              "{\"metadata\":{\"name\":\"team\",\"labels\":{\"x\":\"y\"}}}", msg,
                              sizeof(msg)),
                     201);
    create_cm(s, "team", "c");
    assert_int_equal(sfx_call(s, "DELETE", "/api/v1/namespaces", NULL, NULL, NULL, msg,
                              sizeof(msg)),
                     405);
    assert_int_equal(sfx_call(s, "DELETE", "/api/v1/namespaces", "labelSelector=x%3Dy", NULL,
                              NULL, msg, sizeof(msg)),
                     405);
    assert_true(has(s, KIND_NAMESPACE, NULL, "team") && has(s, KIND_CONFIGMAP, "team", "c"));
    assert_false(ns_verbs_have(s, "deletecollection"));
    assert_true(ns_verbs_have(s, "delete"));
    assert_int_equal(sfx_call(s, "DELETE", "/api/v1/namespaces/team", NULL, NULL, NULL, msg,
                              sizeof(msg)),
                     200);
    assert_false(has(s, KIND_CONFIGMAP, "team", "c"));
    assert_false(has(s, KIND_NAMESPACE, NULL, "team"));
    /* the namespaces Kubernetes never deletes */
    assert_int_equal(sfx_call(s, "POST", "/api/v1/namespaces", NULL, JSON,
                              "{\"metadata\":{\"name\":\"kube-system\"}}", NULL, 0),
                     201);
    static const char *const immortal[] = {"default", "kube-system"};
    for (size_t i = 0; i < 2; i++) {
        char *p = xasprintf("/api/v1/namespaces/%s", immortal[i]);
        char *want = xasprintf("namespaces \"%s\" is forbidden: this namespace may not be "
                               "deleted", immortal[i]);
        assert_int_equal(sfx_call(s, "DELETE", p, NULL, NULL, NULL, msg, sizeof(msg)), 403);
        assert_string_equal(msg, want);
        assert_int_equal(sfx_call(s, "DELETE", p, "dryRun=All", NULL, NULL, NULL, 0), 403);
        assert_true(has(s, KIND_NAMESPACE, NULL, immortal[i]));
        xfree(want);
        xfree(p);
    }
    create_cm(s, "default", "still-works");
    sfx_free(s);
}

static void uid_cannot_change(void **state)
{
    (void)state;
    struct sfx *s = sfx_new(false);
    create_cm(s, "default", "a");
    json_t *cm = store_get(s->fx->store, KIND_CONFIGMAP, "default", "a");
    char *uid = xstrdup(api_uid(cm));
    json_decref(cm);
    const char *item = "/api/v1/namespaces/default/configmaps/a";
    char msg[512];
    assert_int_equal(sfx_call(s, "PATCH", item, NULL, MERGE,
                              "{\"metadata\":{\"uid\":\"other\"}}", msg, sizeof(msg)),
                     422);
    assert_string_equal(msg, "ConfigMap \"a\" is invalid: metadata.uid: Invalid value: "
                             "\"other\": field is immutable");
    assert_int_equal(sfx_call(s, "PATCH", item, NULL, "application/json-patch+json",
                              "[{\"op\":\"replace\",\"path\":\"/metadata/uid\","
                              "\"value\":\"x\"}]",
                              msg, sizeof(msg)),
                     422);
    assert_int_equal(sfx_call(s, "PUT", item, NULL, JSON,
                              "{\"metadata\":{\"name\":\"a\",\"uid\":\"other\"}}", msg,
                              sizeof(msg)),
                     409);
    char *want = xasprintf("Operation cannot be fulfilled on configmaps \"a\": Precondition "
                           "failed: UID in precondition: other, UID in object meta: %s",
                           uid);
    assert_string_equal(msg, want);
    xfree(want);
    cm = store_get(s->fx->store, KIND_CONFIGMAP, "default", "a");
    assert_string_equal(api_uid(cm), uid);
    assert_string_equal(JX_STR(cm, "data", "k"), "v");
    json_decref(cm);
    /* the same uid, or none, is an ordinary write */
    char *same = xasprintf("{\"metadata\":{\"uid\":\"%s\"},\"data\":{\"k\":\"w\"}}", uid);
    assert_int_equal(sfx_call(s, "PATCH", item, NULL, MERGE, same, NULL, 0), 200);
    assert_int_equal(sfx_call(s, "PUT", item, NULL, JSON,
                              "{\"metadata\":{\"name\":\"a\"},\"data\":{\"k\":\"z\"}}", NULL, 0),
                     200);
    cm = store_get(s->fx->store, KIND_CONFIGMAP, "default", "a");
    assert_string_equal(api_uid(cm), uid);
    assert_string_equal(JX_STR(cm, "data", "k"), "z");
    json_decref(cm);
    xfree(same);
    xfree(uid);
    sfx_free(s);
}

/* ---- logs ---- */

/* Where the last n lines of text start, the plain way. */
static size_t naive_tail(const char *text, size_t len, long long n)
{
    if (n < 0)
        return 0;
    if (n == 0)
        return len;
    size_t end = len && text[len - 1] == '\n' ? len - 1 : len;
    long long seen = 0;
    for (size_t i = end; i > 0; i--)
        if (text[i - 1] == '\n' && ++seen == n)
            return i;
    return 0;
}

/* A log of n_lines lines of varying length (some longer than a read
 * chunk), with or without a final newline. */
static char *make_log(const char *path, int n_lines, bool final_nl, size_t *len)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    for (int i = 0; i < n_lines; i++) {
        sbuf_addf(&sb, "line %d ", i);
        size_t pad = i % 97 == 0 ? 70000 : (size_t)(i % 13) * 9;
        for (size_t k = 0; k < pad; k++)
            sbuf_addc(&sb, (char)('a' + k % 26));
        if (i + 1 < n_lines || final_nl)
            sbuf_addc(&sb, '\n');
    }
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    assert_int_equal(fwrite(sb.buf, 1, sb.len, fp), sb.len);
    fclose(fp);
    *len = sb.len;
    char *text = sbuf_take(&sb);
    sbuf_release(&sb);
    return text;
}

static void tail_offset_reads_backwards(void **state)
{
    (void)state;
    char path[] = "/tmp/cueue-test-tail.XXXXXX";
    int tmp = mkstemp(path);
    assert_true(tmp >= 0);
    close(tmp);
    for (int nl = 0; nl < 2; nl++) {
        size_t len;
        char *text = make_log(path, 400, nl, &len);
        int fd = open(path, O_RDONLY);
        static const long long ns[] = {-1, 0, 1, 2, 3, 96, 97, 98, 250, 399, 400, 401, 100000};
        for (size_t i = 0; i < sizeof(ns) / sizeof(*ns); i++)
            assert_int_equal(srv__log_tail_offset(fd, (off_t)len, ns[i]),
                             naive_tail(text, len, ns[i]));
        /* only the first `size` bytes count (the file may grow meanwhile) */
        assert_int_equal(srv__log_tail_offset(fd, 0, 5), 0);
        close(fd);
        xfree(text);
    }
    unlink(path);
}

/* GET the log with query q; the whole text (caller frees) and its length. */
static char *get_log(struct sfx *s, const char *q, size_t *len, size_t *max_chunk)
{
    struct srv_resp r;
    sfx_req(s, "GET", "/api/v1/namespaces/default/pods/p/log", q, NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    char *text = sfx_drain(&r, len, max_chunk);
    srv__resp_release(&r);
    return text;
}

static void logs_stream_bounded_chunks(void **state)
{
    (void)state;
    struct sfx *s = sfx_new(false);
    sfx_put_pod(s, "u-1", "Running");
    char *path = exec_log_path(s->state_dir, "u-1", "main");
    char *dir = xstrdup(path);
    *strrchr(dir, '/') = '\0';
    char *mk = xasprintf("mkdir -p '%s'", dir);
    assert_int_equal(system(mk), 0);
    size_t len, got, max_chunk;
    char *text = make_log(path, 3000, true, &len); /* ~2.3 MB */
    char *all = get_log(s, NULL, &got, &max_chunk);
    assert_int_equal(got, len);
    assert_memory_equal(all, text, len);
    assert_true(max_chunk <= 65536);
    xfree(all);
    all = get_log(s, "tailLines=2", &got, &max_chunk);
    size_t off = naive_tail(text, len, 2);
    assert_int_equal(got, len - off);
    assert_memory_equal(all, text + off, got);
    xfree(all);
    all = get_log(s, "tailLines=2&limitBytes=5", &got, &max_chunk);
    assert_int_equal(got, 5);
    assert_memory_equal(all, text + off, 5);
    xfree(all);
    all = get_log(s, "limitBytes=100000", &got, &max_chunk);
    assert_int_equal(got, 100000);
    assert_true(max_chunk <= 65536);
    xfree(all);
    all = get_log(s, "tailLines=1&timestamps=true", &got, &max_chunk);
    assert_true(got > 21 && all[4] == '-' && strstr(all, "Z line 2999 ") != NULL);
    xfree(all);
    char msg[256];
    assert_int_equal(sfx_call(s, "GET", "/api/v1/namespaces/default/pods/p/log",
                              "tailLines=x", NULL, NULL, msg, sizeof(msg)),
                     400);
    xfree(text);
    xfree(mk);
    xfree(dir);
    xfree(path);
    sfx_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_or_dot_names_are_refused),
        cmocka_unit_test(namespaces_delete_by_name_only_and_cascade),
        cmocka_unit_test(uid_cannot_change),
        cmocka_unit_test(tail_offset_reads_backwards),
        cmocka_unit_test(logs_stream_bounded_chunks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
