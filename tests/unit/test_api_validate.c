/*
 * test_api_validate: admission (api_admit) of every kind: the seed files
 * are accepted with Kueue's/KubeRay's defaults; the invalid fixtures under
 * tests/data/api/invalid are each rejected with an error naming the field
 * and the rule; plus the update, status and defaulting rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>

#include "test_api_lib.h"
#include "api/schema.h"
#include "util/err.h"
#include "util/jsonx.h"

/* ---- the seed ---- */

static void test_seed_queue_accepted_with_kueue_defaults(void **state)
{
    (void)state;
    char *yaml = t_seed_queue_yaml();
    json_t *docs = t_parse_ok(yaml);
    assert_int_equal(json_array_size(docs), 7);
    size_t i;
    json_t *doc;
    json_array_foreach(docs, i, doc)
        t_admit_ok(doc, "default");
    json_t *cq = json_array_get(docs, 3);
    assert_string_equal(JX_STR(cq, "kind"), "ClusterQueue");
    assert_string_equal(JX_STR(cq, "spec", "queueingStrategy"), "BestEffortFIFO");
    assert_string_equal(JX_STR(cq, "spec", "flavorFungibility", "whenCanBorrow"), "MayStopSearch");
    assert_string_equal(JX_STR(cq, "spec", "flavorFungibility", "whenCanPreempt"),
                        "TryNextFlavor");
    assert_string_equal(JX_STR(cq, "spec", "preemption", "withinClusterQueue"), "Never");
    assert_string_equal(JX_STR(cq, "spec", "preemption", "reclaimWithinCohort"), "Never");
    assert_string_equal(JX_STR(cq, "spec", "stopPolicy"), "None");
    /* namespaceSelector {} stays an empty (match-all) selector */
    assert_true(json_is_object(JX_GET(cq, "spec", "namespaceSelector")));
    assert_int_equal(json_object_size(JX_GET(cq, "spec", "namespaceSelector")), 0);
    /* numbers became quantity strings, as the API server returns them */
    json_t *dws = json_array_get(JX_GET(cq, "spec", "resourceGroups"), 0);
    dws = json_array_get(json_object_get(dws, "flavors"), 2);
    assert_string_equal(JX_STR(json_array_get(json_object_get(dws, "resources"), 0),
                               "nominalQuota"), "1000000000");
    assert_string_equal(
        json_string_value(json_array_get(JX_GET(cq, "metadata", "finalizers"), 0)),
        "kueue.x-k8s.io/resource-in-use");
    json_t *lq = json_array_get(docs, 4);
    assert_string_equal(JX_STR(lq, "metadata", "namespace"), "default");
    assert_string_equal(JX_STR(lq, "spec", "stopPolicy"), "None");
    json_t *prc = json_array_get(docs, 6);
    assert_int_equal(JX_INT(prc, -1, "spec", "retryStrategy", "backoffLimitCount"), 3);
    assert_int_equal(JX_INT(prc, -1, "spec", "retryStrategy", "backoffBaseSeconds"), 60);
    assert_int_equal(JX_INT(prc, -1, "spec", "retryStrategy", "backoffMaxSeconds"), 1800);
    json_decref(docs);
    xfree(yaml);
}

static void test_seed_rayjob_accepted_with_kuberay_defaults(void **state)
{
    (void)state;
    char *yaml = t_seed_rayjob_yaml("1");
    json_t *docs = t_parse_ok(yaml);
    assert_int_equal(json_array_size(docs), 1);
    json_t *rj = json_array_get(docs, 0);
    t_admit_ok(rj, "default");
    assert_string_equal(JX_STR(rj, "metadata", "name"), "rayjob-tpu-v6e-dws-1");
    assert_string_equal(JX_STR(rj, "spec", "submissionMode"), "K8sJobMode");
    assert_int_equal(JX_INT(rj, -1, "spec", "backoffLimit"), 0);
    assert_int_equal(JX_INT(rj, -1, "spec", "ttlSecondsAfterFinished"), 0);
    /* Kueue's webhook suspends a job that names a queue */
    assert_true(JX_BOOL(rj, false, "spec", "suspend"));
    json_t *wg = json_array_get(JX_GET(rj, "spec", "rayClusterSpec", "workerGroupSpecs"), 0);
    assert_int_equal(JX_INT(wg, -1, "numOfHosts"), 4);
    assert_int_equal(JX_INT(wg, -1, "replicas"), 1);
    /* the annotation stays the quoted string */
    assert_string_equal(JX_STR(rj, "metadata", "annotations", "kueue.x-k8s.io/elastic-job"),
                        "true");
    /* no PodSpec defaults inside a CRD */
    assert_null(JX_GET(wg, "template", "spec", "restartPolicy"));
    json_decref(docs);
    xfree(yaml);
}

/* The same files from the shared tree, when it is there (the copies under
 * tests/data must not drift from the real input). */
static void test_seed_copies_match_shared_tree(void **state)
{
    (void)state;
    static const char *const files[] = {"dws-tpu-queue.yaml", "rayjob-tpu-v6e-dws.yaml"};
    for (int i = 0; i < 2; i++) {
        char *rel = xasprintf("../shared/seed/%s", files[i]);
        char *shared = t_src_path(rel);
        char *mine_rel = xasprintf("tests/data/api/seed/%s", files[i]);
        char *mine = t_src_path(mine_rel);
        char *a = t_read_file(shared, NULL), *b = t_read_file(mine, NULL);
        assert_non_null(b);
        if (a) /* the shared tree is optional outside the workspace */
            assert_string_equal(a, b);
        xfree(a);
        xfree(b);
        xfree(rel);
        xfree(shared);
        xfree(mine_rel);
        xfree(mine);
    }
}

/* ---- invalid fixtures ---- */

static char *expect_line(const char *text)
{
    const char *p = strstr(text, "# expect: ");
    if (!p)
        return NULL;
    p += strlen("# expect: ");
    return xstrndup(p, strcspn(p, "\n"));
}

/* "# fill: N" in a fixture: replace @FILL@ by N 'x' bytes (an oversized
 * document without a multi-megabyte file in the repository). */
static char *apply_fill(char *text)
{
    const char *p = strstr(text, "# fill: ");
    char *at = strstr(text, "@FILL@");
    if (!p || !at)
        return text;
    size_t n = (size_t)strtoul(p + strlen("# fill: "), NULL, 10);
    char *pad = xmalloc(n + 1);
    memset(pad, 'x', n);
    pad[n] = '\0';
    *at = '\0';
    char *out = xasprintf("%s%s%s", text, pad, at + strlen("@FILL@"));
    xfree(pad);
    xfree(text);
    return out;
}

/* Parse then admit every document; the first failure's message. */
static char *first_error(const char *text, const char *name)
{
    struct diag d;
    diag_init(&d);
    json_t *docs = NULL;
    char *msg = NULL;
    int rc = api_parse_documents(text, strlen(text), name, &docs, &d);
    for (size_t i = 0; rc == 0 && i < json_array_size(docs); i++) {
        json_t *doc = json_array_get(docs, i);
        const struct api_kind *k = api_doc_kind(doc, &d);
        rc = k ? api_admit(k, doc, NULL, "default", &d) : CU_EBADREQ;
        if (rc)
            msg = api_error_message(k, JX_STR(doc, "metadata", "name"), rc, &d);
    }
    if (rc && !msg)
        msg = api_error_message(NULL, NULL, rc, &d);
    json_decref(docs);
    diag_release(&d);
    return msg;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_invalid_fixtures_rejected_naming_field_and_rule(void **state)
{
    (void)state;
    char *dir = t_src_path("tests/data/api/invalid");
    DIR *dh = opendir(dir);
    assert_non_null(dh);
    char *names[256];
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(dh)) && n < 256)
        if (strstr(de->d_name, ".yaml"))
            names[n++] = xstrdup(de->d_name);
    closedir(dh);
    qsort(names, n, sizeof(names[0]), cmp_str);
    assert_true(n >= 30);
    size_t failures = 0;
    for (size_t i = 0; i < n; i++) {
        char *path = xasprintf("%s/%s", dir, names[i]);
        char *text = apply_fill(t_read_file(path, NULL));
        char *expect = expect_line(text);
        char *msg = first_error(text, names[i]);
        if (!expect || !msg || !strstr(msg, expect)) {
            fprintf(stderr, "FIXTURE %s\n  expect: %s\n  got:    %s\n", names[i],
                    expect ? expect : "(no # expect: line)", msg ? msg : "(accepted)");
            failures++;
        }
        xfree(path);
        xfree(text);
        xfree(expect);
        xfree(msg);
        xfree(names[i]);
    }
    xfree(dir);
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_queue_accepted_with_kueue_defaults),
        cmocka_unit_test(test_seed_rayjob_accepted_with_kuberay_defaults),
        cmocka_unit_test(test_seed_copies_match_shared_tree),
        cmocka_unit_test(test_invalid_fixtures_rejected_naming_field_and_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
