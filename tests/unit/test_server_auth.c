/* Unit tests of bearer tokens (src/server/auth.c) and of the request
 * checks and authorization (src/server/authz.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/kinds.h"
#include "server/srv-int.h"
#include "util/err.h"
#include "util/xalloc.h"

static char *temp_dir(void)
{
    char tmpl[] = "/tmp/cueue-auth-XXXXXX";
    char *d = mkdtemp(tmpl);
    assert_non_null(d);
    return xstrdup(d);
}

static void remove_dir(char *dir)
{
    char *p = xasprintf("%s/tokens", dir);
    unlink(p);
    xfree(p);
    rmdir(dir);
    xfree(dir);
}

static char *bearer(const char *tok) { return xasprintf("Bearer %s", tok); }

static void test_first_start_writes_a_private_admin_token(void **state)
{
    (void)state;
    char *dir = temp_dir(), err[256];
    struct srv_tokens *t;
    assert_int_equal(srv_tokens_open(dir, &t, err, sizeof(err)), 0);
    char *path = xasprintf("%s/tokens", dir);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    char *admin = srv_tokens_admin(t);
    assert_non_null(admin);
    assert_int_equal(strlen(admin), 64);
    char *h = bearer(admin);
    struct srv_principal *p = srv_tokens_check(t, h);
    assert_non_null(p);
    assert_true(p->admin);
    assert_string_equal(p->name, "admin");
    srv_principal_free(p);
    /* a second open keeps the same token */
    struct srv_tokens *t2;
    assert_int_equal(srv_tokens_open(dir, &t2, err, sizeof(err)), 0);
    char *again = srv_tokens_admin(t2);
    assert_string_equal(again, admin);
    xfree(again);
    srv_tokens_free(t2);
    xfree(h);
    xfree(admin);
    xfree(path);
    srv_tokens_free(t);
    remove_dir(dir);
}

static void test_wrong_or_malformed_tokens_are_refused(void **state)
{
    (void)state;
    char *dir = temp_dir(), err[256];
    struct srv_tokens *t;
    assert_int_equal(srv_tokens_open(dir, &t, err, sizeof(err)), 0);
    char *admin = srv_tokens_admin(t);
    assert_null(srv_tokens_check(t, NULL));
    assert_null(srv_tokens_check(t, ""));
    assert_null(srv_tokens_check(t, admin)); /* no "Bearer " */
    char *basic = xasprintf("Basic %s", admin);
    assert_null(srv_tokens_check(t, basic));
    char *shortened = xasprintf("Bearer %.63s", admin);
    assert_null(srv_tokens_check(t, shortened));
    char *changed = bearer(admin);
    changed[7 + 10] = changed[7 + 10] == 'a' ? 'b' : 'a';
    assert_null(srv_tokens_check(t, changed));
    char *lower = xasprintf("bearer %s", admin); /* the scheme is case-insensitive */
    struct srv_principal *p = srv_tokens_check(t, lower);
    assert_non_null(p);
    srv_principal_free(p);
    xfree(basic);
    xfree(shortened);
    xfree(changed);
    xfree(lower);
    xfree(admin);
    srv_tokens_free(t);
    remove_dir(dir);
}

static void test_scoped_token_created_later_is_seen(void **state)
{
    (void)state;
    char *dir = temp_dir(), err[256], tok[SRV_TOKEN_TEXT];
    struct srv_tokens *t;
    assert_int_equal(srv_tokens_open(dir, &t, err, sizeof(err)), 0);
    assert_int_equal(srv_tokens_create(dir, "alice", "team-a,team-b", tok, err, sizeof(err)), 0);
    char *h = bearer(tok);
    struct srv_principal *p = srv_tokens_check(t, h);
    assert_non_null(p);
    assert_false(p->admin);
    assert_string_equal(p->name, "alice");
    assert_int_equal(p->n_namespaces, 2);
    assert_true(srv_principal_has_namespace(p, "team-b"));
    assert_false(srv_principal_has_namespace(p, "team-c"));
    assert_false(srv_principal_has_namespace(p, NULL));
    srv_principal_free(p);
    xfree(h);
    assert_int_equal(srv_tokens_create(dir, "x", "Bad_NS", tok, err, sizeof(err)), CU_EINVAL);
    assert_non_null(strstr(err, "Bad_NS"));
    assert_int_equal(srv_tokens_create(dir, "two words", "a", tok, err, sizeof(err)), CU_EINVAL);
    assert_int_equal(srv_tokens_create(dir, "x", "", tok, err, sizeof(err)), CU_EINVAL);
    srv_tokens_free(t);
    remove_dir(dir);
}

/* Replace dir's tokens file with text (a new file renamed over it, as an
 * editor or a provisioning tool would). */
static void write_tokens(const char *dir, const char *text)
{
    char *tmp = xasprintf("%s/tokens.new", dir), *path = xasprintf("%s/tokens", dir);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(rename(tmp, path), 0);
    xfree(tmp);
    xfree(path);
}

static void test_file_edits_take_effect_and_bad_lines_are_skipped(void **state)
{
    (void)state;
    char *dir = temp_dir(), err[256];
    const char *a = "1111111111111111111111111111111111111111111111111111111111111111";
    const char *b = "2222222222222222222222222222222222222222222222222222222222222222";
    char *text = xasprintf("# who may come in\n"
                           "\n"
                           "%s bob team-a\n"
                           "%.63s short team-a\n" /* 63 hex digits */
                           "%s carol Bad_NS\n"       /* not a namespace name */
                           "%s dave\n"               /* no scope */
                           "%s erin * extra\n",      /* a fourth word */
                           a, b, b, b, b);
    write_tokens(dir, text);
    xfree(text);
    struct srv_tokens *t;
    assert_int_equal(srv_tokens_open(dir, &t, err, sizeof(err)), 0);
    char *ha = bearer(a), *hb = bearer(b);
    struct srv_principal *p = srv_tokens_check(t, ha);
    assert_non_null(p);
    assert_string_equal(p->name, "bob");
    srv_principal_free(p);
    assert_null(srv_tokens_check(t, hb)); /* every line with b is malformed */
    assert_null(srv_tokens_admin(t));     /* and none is an admin */
    /* removed while the server runs: refused from the next request on */
    text = xasprintf("%s erin *\n", b);
    write_tokens(dir, text);
    xfree(text);
    assert_null(srv_tokens_check(t, ha));
    p = srv_tokens_check(t, hb);
    assert_non_null(p);
    assert_true(p->admin);
    srv_principal_free(p);
    xfree(ha);
    xfree(hb);
    srv_tokens_free(t);
    remove_dir(dir);
}

static void test_request_checks(void **state)
{
    (void)state;
    assert_true(srv__public_path("/healthz"));
    assert_true(srv__public_path("/version"));
    assert_false(srv__public_path("/api/v1/pods"));
    assert_false(srv__public_path("/healthz/../api"));
    assert_true(srv__write_media_type_ok("GET", ""));
    assert_true(srv__write_media_type_ok("DELETE", ""));
    assert_false(srv__write_media_type_ok("POST", ""));
    assert_false(srv__write_media_type_ok("POST", "application/x-www-form-urlencoded"));
    assert_false(srv__write_media_type_ok("PUT", "text/plain"));
    assert_false(srv__write_media_type_ok("PATCH", "application/jsonx"));
    assert_true(srv__write_media_type_ok("POST", "application/json; charset=utf-8"));
    assert_true(srv__write_media_type_ok("PATCH", "application/merge-patch+json"));
    assert_true(srv__write_media_type_ok("POST", "application/vnd.kubernetes.protobuf"));
    assert_true(srv__host_allowed(true, "127.0.0.1:6443"));
    assert_true(srv__host_allowed(true, "localhost"));
    assert_true(srv__host_allowed(true, "[::1]:6443"));
    assert_true(srv__host_allowed(true, ""));
    assert_false(srv__host_allowed(true, "attacker.example:6443"));
    assert_false(srv__host_allowed(true, "127.0.0.1.attacker.example"));
    assert_true(srv__host_allowed(false, "attacker.example"));
    assert_true(srv__origin_allowed(NULL, "127.0.0.1:1", false));
    assert_true(srv__origin_allowed("http://127.0.0.1:1", "127.0.0.1:1", false));
    assert_false(srv__origin_allowed("http://127.0.0.1:1", "127.0.0.1:1", true));
    assert_false(srv__origin_allowed("http://attacker.example", "127.0.0.1:1", false));
    assert_false(srv__origin_allowed("null", "127.0.0.1:1", false));
}

static bool allowed(const struct srv_principal *who, const char *method, const char *plural,
                    const char *group, const char *ns, const char *name, int *code)
{
    struct srv_route rt = {.kind = api_kind_by_resource(group, plural), .ns = (char *)ns,
                           .name = (char *)name};
    assert_non_null(rt.kind);
    json_t *query = json_object();
    struct srv_req q = {.method = method, .path = "/x", .query = query, .principal = who};
    struct srv_resp r;
    srv__resp_init(&r);
    bool ok = srv__authorize(&q, &r, &rt);
    *code = r.code;
    srv__resp_release(&r);
    json_decref(query);
    return ok;
}

static void test_scoped_authorization(void **state)
{
    (void)state;
    struct srv_principal who = {0};
    char err[128];
    who.name = xstrdup("alice");
    assert_int_equal(srv_tokens_parse_scope("team-a", &who, err, sizeof(err)), 0);
    int code = 0;
    assert_true(allowed(NULL, "DELETE", "clusterqueues", "kueue.x-k8s.io", NULL, "q", &code));
    assert_true(allowed(&who, "POST", "configmaps", "", "team-a", NULL, &code));
    assert_true(allowed(&who, "DELETE", "workloads", "kueue.x-k8s.io", "team-a", "w", &code));
    assert_false(allowed(&who, "GET", "configmaps", "", "team-b", "c", &code));
    assert_int_equal(code, 403);
    assert_false(allowed(&who, "GET", "pods", "", NULL, NULL, &code));
    assert_true(allowed(&who, "GET", "clusterqueues", "kueue.x-k8s.io", NULL, NULL, &code));
    assert_true(allowed(&who, "GET", "resourceflavors", "kueue.x-k8s.io", NULL, "f", &code));
    assert_false(allowed(&who, "PATCH", "clusterqueues", "kueue.x-k8s.io", NULL, "q", &code));
    assert_false(allowed(&who, "POST", "namespaces", "", NULL, NULL, &code));
    assert_true(allowed(&who, "GET", "namespaces", "", NULL, "team-a", &code));
    assert_false(allowed(&who, "GET", "namespaces", "", NULL, "team-b", &code));
    assert_false(allowed(&who, "GET", "namespaces", "", NULL, NULL, &code));
    xfree(who.name);
    for (size_t i = 0; i < who.n_namespaces; i++)
        xfree(who.namespaces[i]);
    xfree(who.namespaces);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_start_writes_a_private_admin_token),
        cmocka_unit_test(test_wrong_or_malformed_tokens_are_refused),
        cmocka_unit_test(test_scoped_token_created_later_is_seen),
        cmocka_unit_test(test_file_edits_take_effect_and_bad_lines_are_skipped),
        cmocka_unit_test(test_request_checks),
        cmocka_unit_test(test_scoped_authorization),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
