/*
 * Unit tests of inputs the API used to accept silently (issue 13, item 9),
 * through srv__dispatch with a memory store:
 *  - a watch's resourceVersion that is not a 64-bit decimal (-1, abc,
 *    2^64) is a 400 naming it; one past the store's is a 504 "Too large
 *    resource version" as the API server answers, never a silent stream;
 *  - DeleteOptions fields of the wrong type (gracePeriodSeconds "abc")
 *    are a 400 naming the field, and nothing is deleted;
 *  - the state directory is made private: 0700, the database 0600;
 *  - a generateName create whose generated name is taken tries new
 *    suffixes (8 names in all) before answering 409 (issue 13, item 4);
 *  - 200,000 duplicate finalizers get a bounded 422 (the first causes and
 *    how many more), 200,000 distinct ones are admitted (item 8).
 */
#include <sys/stat.h>

#include "server/statefiles.h"
#include "util/diag.h"
#include "util/sbuf.h"

#include "test_server_fixture.h"

#define JSON "application/json"
#define CMS "/api/v1/namespaces/default/configmaps"

static void create_cm(struct sfx *s, const char *name)
{
    char *body = xasprintf("{\"metadata\":{\"name\":\"%s\"},\"data\":{\"k\":\"v\"}}", name);
    assert_int_equal(sfx_call(s, "POST", CMS, NULL, JSON, body, NULL, 0), 201);
    xfree(body);
}

static void assert_mentions(const char *text, const char *needle)
{
    if (!strstr(text, needle))
        fail_msg("\"%s\" does not mention \"%s\"", text, needle);
}

static void watch_rejects_unparsable_versions(void **state)
{
    (void)state;
    struct sfx *s = sfx_new(false);
    const char *bad[] = {"resourceVersion=-1", "resourceVersion=18446744073709551616",
                         "resourceVersion=abc", "resourceVersion=+5", "resourceVersion= 5",
                         "resourceVersion=5x"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        char *query = xasprintf("watch=true&%s", bad[i]);
        char msg[512];
        int code = sfx_call(s, "GET", CMS, query, NULL, NULL, msg, sizeof(msg));
        if (code != 400)
            fail_msg("%s: got %d, want 400", bad[i], code);
        assert_mentions(msg, "invalid resource version");
        assert_mentions(msg, "resourceVersion must be a decimal number");
        xfree(query);
    }
    sfx_free(s);
}

static void watch_rejects_future_versions(void **state)
{
    (void)state;
    struct sfx *s = sfx_new(false);
    create_cm(s, "a");
    uint64_t rv = store_rv(s->fx->store);
    char *query = xasprintf("watch=true&resourceVersion=%llu", (unsigned long long)rv + 1);
    struct srv_resp r;
    sfx_req(s, "GET", CMS, query, NULL, NULL, &r);
    assert_int_equal(r.code, 504);
    json_t *st = sfx_json(&r);
    assert_string_equal(JX_STR(st, "reason"), "Timeout");
    char want[128];
    snprintf(want, sizeof(want), "Too large resource version: %llu, current: %llu",
             (unsigned long long)rv + 1, (unsigned long long)rv);
    assert_string_equal(JX_STR(st, "message"), want);
    assert_string_equal(JX_STR(json_array_get(JX_GET(st, "details", "causes"), 0), "reason"),
                        "ResourceVersionTooLarge");
    assert_int_equal(JX_INT(st, -1, "details", "retryAfterSeconds"), 1);
    json_decref(st);
    srv__resp_release(&r);
    xfree(query);
    /* the current version itself is a valid start (a stream) */
    query = xasprintf("watch=true&resourceVersion=%llu", (unsigned long long)rv);
    sfx_req(s, "GET", CMS, query, NULL, NULL, &r);
    assert_int_equal(r.code, 200);
    assert_non_null(r.stream.next);
    srv__resp_release(&r);
    xfree(query);
    sfx_free(s);
}

static void delete_options_of_the_wrong_type_are_refused(void **state)
{
    (void)state;
    struct sfx *s = sfx_new(false);
    create_cm(s, "keep");
    const struct {
        const char *body, *query, *field;
    } cases[] = {
        {"{\"gracePeriodSeconds\":\"abc\"}", NULL, "DeleteOptions.gracePeriodSeconds"},
        {"{\"gracePeriodSeconds\":1.5}", NULL, "DeleteOptions.gracePeriodSeconds"},
        {"{\"propagationPolicy\":7}", NULL, "DeleteOptions.propagationPolicy"},
        {"{\"orphanDependents\":\"yes\"}", NULL, "DeleteOptions.orphanDependents"},
        {"{\"preconditions\":{\"uid\":5}}", NULL, "DeleteOptions.preconditions.uid"},
        {"[1]", NULL, "must be a mapping"},
        {NULL, "gracePeriodSeconds=abc", "gracePeriodSeconds"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char msg[512];
        int code = sfx_call(s, "DELETE", CMS "/keep", cases[i].query, JSON, cases[i].body, msg,
                            sizeof(msg));
        if (code != 400)
            fail_msg("case %zu: got %d, want 400 (%s)", i, code, msg);
        assert_mentions(msg, cases[i].field);
        json_t *still = store_get(s->fx->store, KIND_CONFIGMAP, "default", "keep");
        assert_non_null(still);
        json_decref(still);
    }
    /* well-typed options delete */
    assert_int_equal(sfx_call(s, "DELETE", CMS "/keep", NULL, JSON,
                              "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
                              "\"gracePeriodSeconds\":0,\"propagationPolicy\":\"Background\"}",
                              NULL, 0),
                     200);
    sfx_free(s);
}

static mode_t mode_of(const char *path)
{
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    return st.st_mode & 07777;
}

static void state_directory_is_made_private(void **state)
{
    (void)state;
    char dir[64];
    snprintf(dir, sizeof(dir), "/tmp/cueue-secure-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char *db = xasprintf("%s/cueue.db", dir);
    char *wal = xasprintf("%s/cueue.db-wal", dir);
    char err[256] = "";
    /* a fresh directory: the database is created private */
    assert_int_equal(chmod(dir, 0755), 0);
    assert_int_equal(srv__secure_state(dir, err, sizeof(err)), 0);
    assert_int_equal(mode_of(dir), 0700);
    assert_int_equal(mode_of(db), 0600);
    /* an existing world-readable one is tightened */
    assert_int_equal(chmod(dir, 0755), 0);
    assert_int_equal(chmod(db, 0644), 0);
    FILE *fp = fopen(wal, "w");
    assert_non_null(fp);
    fclose(fp);
    assert_int_equal(chmod(wal, 0666), 0);
    assert_int_equal(srv__secure_state(dir, err, sizeof(err)), 0);
    assert_int_equal(mode_of(dir), 0700);
    assert_int_equal(mode_of(db), 0600);
    assert_int_equal(mode_of(wal), 0600);
    /* not a directory: refused with a message */
    assert_int_equal(srv__secure_state(db, err, sizeof(err)), CU_EIO);
    assert_mentions(err, "is not a directory");
    unlink(wal);
    unlink(db);
    rmdir(dir);
    xfree(wal);
    xfree(db);
}

/* Take the names the server's next n generateName attempts will pick for
 * base (each attempt draws a suffix, then a uid, from the server's rng),
 * without drawing from it; create each as a ConfigMap straight in the
 * store. */
static void take_next_generated_names(struct sfx *s, const char *base, int n)
{
    struct rng probe = s->srv.rng;
    for (int i = 0; i < n; i++) {
        char sfx[8], uid[37];
        rng_suffix(&probe, sfx, 5);
        rng_uuid(&probe, uid);
        char *name = xasprintf("%s%s", base, sfx);
        json_t *cm = json_pack("{s:{s:s}}", "metadata", "name", name);
        assert_int_equal(store_create(s->fx->store, KIND_CONFIGMAP, "default", cm, NULL), 0);
        json_decref(cm);
        xfree(name);
    }
}

static void generate_name_retries_on_collision(void **state)
{
    (void)state;
    struct sfx *s = sfx_new(false);
    take_next_generated_names(s, "gen-", 3);
    struct srv_resp r;
    sfx_req(s, "POST", CMS, NULL, JSON, "{\"metadata\":{\"generateName\":\"gen-\"}}", &r);
    assert_int_equal(r.code, 201);
    json_t *made = sfx_json(&r);
    const char *name = JX_STR(made, "metadata", "name");
    assert_int_equal(strlen(name), 9);
    assert_int_equal(strncmp(name, "gen-", 4), 0);
    json_decref(made);
    srv__resp_release(&r);
    assert_int_equal(store_count(s->fx->store, KIND_CONFIGMAP), 4);

    /* every one of the 8 names taken: 409, as the API server answers */
    take_next_generated_names(s, "all-", 8);
    char msg[512];
    assert_int_equal(sfx_call(s, "POST", CMS, NULL, JSON,
                              "{\"metadata\":{\"generateName\":\"all-\"}}", msg, sizeof(msg)),
                     409);
    assert_mentions(msg, "already exists");
    assert_int_equal(store_count(s->fx->store, KIND_CONFIGMAP), 12);
    sfx_free(s);
}

/* A ConfigMap whose metadata.finalizers holds n items, all "x.io/f"
 * (distinct false) or "x.io/f<i>". */
static char *cm_with_finalizers(const char *name, int n, bool distinct)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    sbuf_addf(&sb, "{\"metadata\":{\"name\":\"%s\",\"finalizers\":[", name);
    for (int i = 0; i < n; i++) {
        sbuf_addf(&sb, "%s\"x.io/f", i ? "," : "");
        if (distinct)
            sbuf_addf(&sb, "%d", i);
        sbuf_addc(&sb, '"');
    }
    sbuf_adds(&sb, "]}}");
    char *text = sbuf_take(&sb);
    sbuf_release(&sb);
    return text;
}

static void error_answers_are_bounded(void **state)
{
    (void)state;
    struct sfx *s = sfx_new(false);
    char *body = cm_with_finalizers("dups", 200000, false);
    struct srv_resp r;
    sfx_req(s, "POST", CMS, NULL, JSON, body, &r);
    assert_int_equal(r.code, 422);
    assert_true(r.len < 64 * 1024);
    json_t *st = sfx_json(&r);
    json_t *causes = JX_GET(st, "details", "causes");
    assert_int_equal(json_array_size(causes), DIAG_MAX_CAUSES + 1);
    assert_string_equal(JX_STR(json_array_get(causes, 0), "field"), "metadata.finalizers[1]");
    assert_string_equal(JX_STR(json_array_get(causes, DIAG_MAX_CAUSES), "message"),
                        "199899 more errors not shown");
    assert_mentions(JX_STR(st, "message"), "and 199899 more errors");
    json_decref(st);
    srv__resp_release(&r);
    xfree(body);
    /* distinct ones: no error, and no pairwise comparison of 2e10 pairs */
    body = cm_with_finalizers("many", 200000, true);
    assert_int_equal(sfx_call(s, "POST", CMS, NULL, JSON, body, NULL, 0), 201);
    xfree(body);
    sfx_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(watch_rejects_unparsable_versions),
        cmocka_unit_test(watch_rejects_future_versions),
        cmocka_unit_test(delete_options_of_the_wrong_type_are_refused),
        cmocka_unit_test(state_directory_is_made_private),
        cmocka_unit_test(generate_name_retries_on_collision),
        cmocka_unit_test(error_answers_are_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
