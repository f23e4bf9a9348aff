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
    /* a custom resource keeps a numeric quantity a number, as the API
     * server does for an int-or-string field of a CRD (kubectl apply of the
     * unchanged file then finds nothing to change) */
    json_t *dws = json_array_get(JX_GET(cq, "spec", "resourceGroups"), 0);
    dws = json_array_get(json_object_get(dws, "flavors"), 2);
    json_t *nq = JX_GET(json_array_get(json_object_get(dws, "resources"), 0), "nominalQuota");
    assert_true(json_is_integer(nq));
    assert_int_equal(json_integer_value(nq), 1000000000);
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

/* ---- valid fixtures ---- */

static void test_valid_fixtures_accepted(void **state)
{
    (void)state;
    static const char *const files[] = {"core.yaml", "batch.yaml", "kueue.yaml", "capacity.yaml"};
    for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
        char *rel = xasprintf("tests/data/api/valid/%s", files[f]);
        char *path = t_src_path(rel);
        char *text = t_read_file(path, NULL);
        assert_non_null(text);
        json_t *docs = t_parse_ok(text);
        assert_true(json_array_size(docs) > 0);
        size_t i;
        json_t *doc;
        json_array_foreach(docs, i, doc) {
            t_admit_ok(doc, "default");
        }
        json_decref(docs);
        xfree(text);
        xfree(path);
        xfree(rel);
    }
}

/* ---- helpers for the behaviour tests ---- */

static json_t *doc_of(const char *yaml)
{
    json_t *docs = t_parse_ok(yaml);
    json_t *doc = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    return doc;
}

static int admit_update(json_t *obj, const json_t *old, char **msg)
{
    struct diag d;
    diag_init(&d);
    const struct api_kind *k = api_doc_kind(obj, &d);
    int rc = api_admit(k, obj, old, "default", &d);
    *msg = diag_summary(&d);
    diag_release(&d);
    return rc;
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!hay || !strstr(hay, needle))
        fprintf(stderr, "expected \"%s\" in \"%s\"\n", needle, hay ? hay : "(null)");
    assert_non_null(hay);
    assert_non_null(strstr(hay, needle));
}

static const char JOB[] = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: sample\n"
                          "  uid: 0f0e-uid\nspec:\n  template:\n    metadata:\n"
                          "      labels: {app: demo}\n    spec:\n      restartPolicy: Never\n"
                          "      containers:\n      - name: c\n        image: busybox\n";

static void test_job_defaults_and_generated_selector(void **state)
{
    (void)state;
    json_t *job = doc_of(JOB);
    t_admit_ok(job, "default");
    json_t *spec = json_object_get(job, "spec");
    assert_int_equal(JX_INT(spec, 0, "parallelism"), 1);
    assert_int_equal(JX_INT(spec, 0, "completions"), 1);
    assert_int_equal(JX_INT(spec, 0, "backoffLimit"), 6);
    assert_string_equal(JX_STR(spec, "completionMode"), "NonIndexed");
    assert_false(JX_BOOL(spec, true, "suspend"));
    assert_string_equal(JX_STR(spec, "podReplacementPolicy"), "TerminatingOrFailed");
    assert_string_equal(JX_STR(spec, "selector", "matchLabels",
                               "batch.kubernetes.io/controller-uid"), "0f0e-uid");
    json_t *tl = JX_GET(spec, "template", "metadata", "labels");
    assert_string_equal(JX_STR(tl, "batch.kubernetes.io/controller-uid"), "0f0e-uid");
    assert_string_equal(JX_STR(tl, "controller-uid"), "0f0e-uid");
    assert_string_equal(JX_STR(tl, "batch.kubernetes.io/job-name"), "sample");
    assert_string_equal(JX_STR(tl, "job-name"), "sample");
    /* the job's own labels come from the template as the user wrote it */
    assert_string_equal(JX_STR(job, "metadata", "labels", "app"), "demo");
    assert_null(JX_GET(job, "metadata", "labels", "job-name"));
    /* core PodSpec defaults */
    json_t *ps = JX_GET(spec, "template", "spec");
    assert_int_equal(JX_INT(ps, 0, "terminationGracePeriodSeconds"), 30);
    assert_string_equal(JX_STR(ps, "dnsPolicy"), "ClusterFirst");
    json_t *c = json_array_get(json_object_get(ps, "containers"), 0);
    assert_string_equal(JX_STR(c, "imagePullPolicy"), "Always"); /* untagged image */
    assert_string_equal(JX_STR(c, "terminationMessagePolicy"), "File");
    json_decref(job);

    /* only parallelism given: completions stays unset */
    json_t *j2 = doc_of("apiVersion: batch/v1\nkind: Job\nmetadata: {name: p}\nspec:\n"
                        "  parallelism: 3\n  backoffLimitPerIndex: 1\n  completionMode: Indexed\n"
                        "  completions: 3\n  template:\n    spec:\n      restartPolicy: Never\n"
                        "      containers: [{name: c, image: 'busybox:1.36'}]\n");
    t_admit_ok(j2, "default");
    assert_int_equal(JX_INT(j2, 0, "spec", "backoffLimit"), INT32_MAX);
    assert_null(JX_GET(j2, "spec", "selector")); /* no uid yet: nothing to generate */
    json_t *c2 = json_array_get(JX_GET(j2, "spec", "template", "spec", "containers"), 0);
    assert_string_equal(JX_STR(c2, "imagePullPolicy"), "IfNotPresent");
    json_decref(j2);

    json_t *j3 = doc_of("apiVersion: batch/v1\nkind: Job\nmetadata: {name: p}\nspec:\n"
                        "  parallelism: 3\n  template:\n    spec:\n      restartPolicy: Never\n"
                        "      containers: [{name: c}]\n");
    t_admit_ok(j3, "default");
    assert_null(JX_GET(j3, "spec", "completions"));
    json_decref(j3);

    /* a selector that does not select the generated uid */
    json_t *j4 = doc_of("apiVersion: batch/v1\nkind: Job\nmetadata: {name: p, uid: u1}\nspec:\n"
                        "  selector: {matchLabels: {batch.kubernetes.io/controller-uid: other}}\n"
                        "  template:\n    spec:\n      restartPolicy: Never\n"
                        "      containers: [{name: c}]\n");
    int rc;
    char *msg = t_admit_err(j4, "default", &rc);
    assert_int_equal(rc, CU_EINVAL);
    assert_contains(msg, "spec.selector: Invalid value: ");
    assert_contains(msg, "`selector` not auto-generated");
    assert_contains(msg, "`selector` does not match template `labels`");
    xfree(msg);
    json_decref(j4);
}

static void test_kueue_suspends_managed_jobs(void **state)
{
    (void)state;
    json_t *job = doc_of("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: q\n  labels:\n"
                         "    kueue.x-k8s.io/queue-name: user-queue\nspec:\n  template:\n"
                         "    spec:\n      restartPolicy: Never\n      containers: [{name: c}]\n");
    t_admit_ok(job, "default");
    assert_true(JX_BOOL(job, false, "spec", "suspend"));
    json_decref(job);
    job = doc_of("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: q\n  labels:\n"
                 "    kueue.x-k8s.io/queue-name: Bad_Queue\nspec:\n  template:\n"
                 "    spec:\n      restartPolicy: Never\n      containers: [{name: c}]\n");
    int rc;
    char *msg = t_admit_err(job, "default", &rc);
    assert_int_equal(rc, CU_EINVAL);
    assert_contains(msg, "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"Bad_Queue\"");
    xfree(msg);
    json_decref(job);
}

static bool fake_exists(void *ctx, enum api_kind_id kind, const char *ns, const char *name)
{
    const char *have = ctx; /* "kind:ns/name" entries separated by ';' */
    char *key = xasprintf("%d:%s/%s;", (int)kind, ns, name);
    bool found = strstr(have, key) != NULL;
    xfree(key);
    return found;
}

/* Kueue's pod webhook under a policy listing "pod": a Pod with a queue
 * name is labelled managed and gated; a Pod a Job owns, one without a
 * queue name, and every Pod under the default policy are left alone; a
 * Pod of a group needs a positive pod-group-total-count. */
static void test_plain_pod_gating_by_policy(void **state)
{
    (void)state;
    struct api_job_policy pol;
    api_job_policy_defaults(&pol);
    pol.frameworks |= API_FW_POD;
    struct api_admit_env env = {.job_policy = &pol};
    const struct api_kind *k = api_kind_get(KIND_POD);
    const char *head = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n";
    const char *body = "spec:\n  restartPolicy: Never\n  containers: [{name: c, image: i}]\n";
    struct diag d;
    diag_init(&d);
    char *text = xasprintf("%s  labels: {kueue.x-k8s.io/queue-name: q}\n%s", head, body);
    json_t *o = doc_of(text);
    assert_int_equal(api_admit_in(k, o, NULL, "team", &env, &d), 0);
    assert_string_equal(JX_STR(o, "metadata", "labels", "kueue.x-k8s.io/managed"), "true");
    assert_int_equal(json_array_size(JX_GET(o, "spec", "schedulingGates")), 1);
    assert_string_equal(JX_STR(json_array_get(JX_GET(o, "spec", "schedulingGates"), 0), "name"),
                        "kueue.x-k8s.io/admission");
    json_decref(o);
    /* the default policy (no --config) leaves plain Pods alone */
    o = doc_of(text);
    struct api_admit_env def_env = {0};
    assert_int_equal(api_admit_in(k, o, NULL, "team", &def_env, &d), 0);
    assert_null(JX_GET(o, "spec", "schedulingGates"));
    assert_null(JX_STR(o, "metadata", "labels", "kueue.x-k8s.io/managed"));
    json_decref(o);
    xfree(text);
    /* a Job's Pod (controller owner) is its Job's business */
    text = xasprintf("%s  labels: {kueue.x-k8s.io/queue-name: q}\n  ownerReferences:\n"
                     "  - {apiVersion: batch/v1, kind: Job, name: j, uid: u, controller: true}\n%s",
                     head, body);
    o = doc_of(text);
    assert_int_equal(api_admit_in(k, o, NULL, "team", &env, &d), 0);
    assert_null(JX_GET(o, "spec", "schedulingGates"));
    json_decref(o);
    xfree(text);
    /* no queue name: not managed */
    text = xasprintf("%s%s", head, body);
    o = doc_of(text);
    assert_int_equal(api_admit_in(k, o, NULL, "team", &env, &d), 0);
    assert_null(JX_GET(o, "spec", "schedulingGates"));
    json_decref(o);
    xfree(text);
    assert_int_equal(d.n, 0);
    /* a group's Pod without a usable total count */
    static const char *const counts[] = {NULL, "\"0\"", "\"three\""};
    for (int i = 0; i < 3; i++) {
        char *ann = counts[i] ? xasprintf("  annotations: {kueue.x-k8s.io/pod-group-total-count: %s}\n",
                                          counts[i])
                              : xstrdup("");
        text = xasprintf("%s  labels: {kueue.x-k8s.io/queue-name: q, "
                         "kueue.x-k8s.io/pod-group-name: g}\n%s%s", head, ann, body);
        o = doc_of(text);
        diag_init(&d);
        assert_int_equal(api_admit_in(k, o, NULL, "team", &env, &d), CU_EINVAL);
        assert_int_equal(d.n, 1);
        assert_string_equal(d.items[0].field,
                            "metadata.annotations[kueue.x-k8s.io/pod-group-total-count]");
        assert_int_equal(d.items[0].type, i == 0 ? DIAG_REQUIRED : DIAG_INVALID);
        diag_release(&d);
        json_decref(o);
        xfree(text);
        xfree(ann);
    }
}

static void test_default_local_queue_and_priority_class(void **state)
{
    (void)state;
    char *have = xasprintf("%d:team/default;%d:/default;", (int)KIND_LOCALQUEUE,
                           (int)KIND_WORKLOADPRIORITYCLASS);
    struct api_admit_env env = {.exists = fake_exists, .ctx = have};
    const char *job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: j}\nspec:\n"
                      "  template:\n    spec:\n      restartPolicy: Never\n"
                      "      containers: [{name: c}]\n";
    const struct api_kind *k = api_kind_get(KIND_JOB);
    struct diag d;
    diag_init(&d);
    json_t *o = doc_of(job);
    assert_int_equal(api_admit_in(k, o, NULL, "team", &env, &d), 0);
    assert_string_equal(JX_STR(o, "metadata", "labels", "kueue.x-k8s.io/queue-name"), "default");
    assert_string_equal(JX_STR(o, "metadata", "labels", "kueue.x-k8s.io/priority-class"),
                        "default");
    assert_true(JX_BOOL(o, false, "spec", "suspend"));
    json_decref(o);
    /* no LocalQueue "default" in this namespace: left alone, not suspended */
    o = doc_of(job);
    assert_int_equal(api_admit_in(k, o, NULL, "other", &env, &d), 0);
    assert_null(JX_STR(o, "metadata", "labels", "kueue.x-k8s.io/queue-name"));
    assert_false(JX_BOOL(o, true, "spec", "suspend"));
    json_decref(o);
    /* an explicit label wins; kube-system is never managed */
    o = doc_of("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: r}\nspec:\n"
               "  shutdownAfterJobFinishes: true\n  rayClusterSpec:\n    headGroupSpec:\n"
               "      template: {spec: {containers: [{name: h}]}}\n");
    assert_int_equal(api_admit_in(api_kind_get(KIND_RAYJOB), o, NULL, "kube-system", &env, &d),
                     0);
    assert_null(JX_STR(o, "metadata", "labels", "kueue.x-k8s.io/queue-name"));
    json_decref(o);
    /* without an env, api_admit does no lookups */
    o = doc_of(job);
    assert_int_equal(api_admit(k, o, NULL, "team", &d), 0);
    assert_null(JX_STR(o, "metadata", "labels", "kueue.x-k8s.io/queue-name"));
    json_decref(o);
    assert_int_equal(d.n, 0);
    diag_release(&d);
    xfree(have);
}

static void test_job_update_rules(void **state)
{
    (void)state;
    json_t *old = doc_of(JOB);
    json_object_set_new(json_object_get(old, "spec"), "suspend", json_true());
    t_admit_ok(old, "default");
    /* while suspended, scheduling directives of the template may change */
    json_t *upd = json_deep_copy(old);
    JX_SET_NEW(upd, json_pack("{s:s}", "cloud.google.com/gke-nodepool", "dws-pool"), "spec",
               "template", "spec", "nodeSelector");
    JX_SET_NEW(upd, json_false(), "spec", "suspend");
    char *msg;
    assert_int_equal(admit_update(upd, old, &msg), 0);
    xfree(msg);
    json_decref(upd);
    /* anything else in the template, or any change once running, is refused */
    upd = json_deep_copy(old);
    json_t *c = json_array_get(JX_GET(upd, "spec", "template", "spec", "containers"), 0);
    json_object_set_new(c, "image", json_string("busybox:2"));
    assert_int_equal(admit_update(upd, old, &msg), CU_EINVAL);
    assert_contains(msg, "spec.template: Invalid value: field is immutable");
    xfree(msg);
    json_decref(upd);
    upd = json_deep_copy(old);
    JX_SET_NEW(upd, json_pack("{s:{s:s}}", "matchLabels", "a", "b"), "spec", "selector");
    assert_int_equal(admit_update(upd, old, &msg), CU_EINVAL);
    assert_contains(msg, "spec.selector: Invalid value: ");
    assert_contains(msg, "field is immutable");
    xfree(msg);
    json_decref(upd);
    upd = json_deep_copy(old);
    JX_SET_NEW(upd, json_string("Indexed"), "spec", "completionMode");
    assert_int_equal(admit_update(upd, old, &msg), CU_EINVAL);
    assert_contains(msg, "spec.completionMode: Invalid value: \"Indexed\": field is immutable");
    xfree(msg);
    json_decref(upd);
    /* the queue of a running (not suspended) Job is fixed: not changed,
     * not removed (Kueue's job webhook); while suspended it may change */
    json_t *run = json_deep_copy(old);
    JX_SET_NEW(run, json_false(), "spec", "suspend");
    JX_SET_NEW(run, json_pack("{s:s}", "kueue.x-k8s.io/queue-name", "user-queue"), "metadata",
               "labels");
    upd = json_deep_copy(run);
    JX_SET_NEW(upd, json_string("other"), "metadata", "labels", "kueue.x-k8s.io/queue-name");
    assert_int_equal(admit_update(upd, run, &msg), CU_EINVAL);
    assert_contains(msg, "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"other\": "
                         "field is immutable");
    xfree(msg);
    json_object_del(JX_GET(upd, "metadata", "labels"), "kueue.x-k8s.io/queue-name");
    assert_int_equal(admit_update(upd, run, &msg), CU_EINVAL);
    assert_contains(msg, "metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: \"\": "
                         "field is immutable");
    xfree(msg);
    json_decref(upd);
    upd = json_deep_copy(run);
    JX_SET_NEW(run, json_true(), "spec", "suspend");
    JX_SET_NEW(upd, json_true(), "spec", "suspend");
    JX_SET_NEW(upd, json_string("other"), "metadata", "labels", "kueue.x-k8s.io/queue-name");
    assert_int_equal(admit_update(upd, run, &msg), 0);
    xfree(msg);
    json_decref(upd);
    json_decref(run);
    /* completions of a NonIndexed Job never change, finished or not */
    upd = json_deep_copy(old);
    JX_SET_NEW(upd, json_integer(3), "spec", "completions");
    assert_int_equal(admit_update(upd, old, &msg), CU_EINVAL);
    assert_contains(msg, "spec.completions: Invalid value: 3: field is immutable");
    xfree(msg);
    json_decref(upd);
    json_decref(old);
    /* an Indexed Job: completions change only in tandem with parallelism */
    old = doc_of(JOB);
    JX_SET_NEW(old, json_string("Indexed"), "spec", "completionMode");
    JX_SET_NEW(old, json_integer(2), "spec", "completions");
    JX_SET_NEW(old, json_integer(2), "spec", "parallelism");
    t_admit_ok(old, "default");
    upd = json_deep_copy(old);
    JX_SET_NEW(upd, json_integer(4), "spec", "completions");
    assert_int_equal(admit_update(upd, old, &msg), CU_EINVAL);
    assert_contains(msg, "spec.completions: Invalid value: 4: can only be modified in tandem "
                         "with spec.parallelism");
    xfree(msg);
    JX_SET_NEW(upd, json_integer(4), "spec", "parallelism");
    assert_int_equal(admit_update(upd, old, &msg), 0);
    xfree(msg);
    json_decref(upd);
    json_decref(old);
}

static void test_status_dropped_on_create_kept_on_update(void **state)
{
    (void)state;
    json_t *lq = doc_of("apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
                        "metadata: {name: q}\nspec: {clusterQueue: cq}\n"
                        "status: {pendingWorkloads: 5}\n");
    t_admit_ok(lq, "default");
    assert_null(json_object_get(lq, "status"));
    json_t *stored = json_deep_copy(lq);
    JX_SET_NEW(stored, json_integer(2), "status", "pendingWorkloads");
    json_t *upd = json_deep_copy(stored);
    JX_SET_NEW(upd, json_integer(99), "status", "pendingWorkloads");
    JX_SET_NEW(upd, json_string("Hold"), "spec", "stopPolicy");
    char *msg;
    assert_int_equal(admit_update(upd, stored, &msg), 0);
    xfree(msg);
    assert_int_equal(JX_INT(upd, 0, "status", "pendingWorkloads"), 2);
    assert_string_equal(JX_STR(upd, "spec", "stopPolicy"), "Hold");
    json_decref(upd);
    /* clusterQueue is immutable */
    upd = json_deep_copy(stored);
    JX_SET_NEW(upd, json_string("other"), "spec", "clusterQueue");
    assert_int_equal(admit_update(upd, stored, &msg), CU_EINVAL);
    assert_contains(msg, "spec.clusterQueue: Invalid value: \"other\": field is immutable");
    xfree(msg);
    json_decref(upd);
    json_decref(stored);
    json_decref(lq);
    /* a Node keeps its status on create */
    json_t *node = doc_of("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"
                          "status: {capacity: {cpu: 4}}\n");
    t_admit_ok(node, NULL);
    assert_string_equal(JX_STR(node, "status", "capacity", "cpu"), "4");
    json_decref(node);
}

static void test_status_subresource_rules(void **state)
{
    (void)state;
    json_t *wl = doc_of("apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
                        "metadata: {name: w, namespace: default}\nspec:\n  podSets:\n"
                        "  - name: main\n    count: 3\n    template:\n      spec:\n"
                        "        containers: [{name: c}]\n");
    t_admit_ok(wl, "default");
    const struct api_kind *k = api_kind_get(KIND_WORKLOAD);
    json_t *st = json_deep_copy(wl);
    JX_SET_NEW(st, json_string("x"), "spec", "queueName"); /* ignored on /status */
    JX_SET_NEW(st, json_loads("{\"conditions\":[{\"type\":\"QuotaReserved\",\"status\":\"True\","
                              "\"lastTransitionTime\":\"2026-01-02T03:04:05Z\",\"reason\":\"r\","
                              "\"message\":\"m\"}],\"admission\":{\"clusterQueue\":\"cq\","
                              "\"podSetAssignments\":[{\"name\":\"main\",\"count\":3,"
                              "\"resourceUsage\":{\"cpu\":\"4\"}}]},"
                              "\"reclaimablePods\":[{\"name\":\"main\",\"count\":4}]}",
                              0, NULL),
               "status");
    struct diag d;
    diag_init(&d);
    assert_int_equal(api_admit_status(k, st, wl, &d), CU_EINVAL);
    char *msg = diag_summary(&d);
    assert_contains(msg, "status.admission.podSetAssignments[0].resourceUsage[cpu]: Invalid value: "
                         "\"4\": is not a multiple of 3");
    assert_contains(msg, "status.reclaimablePods[main].count: Invalid value: 4: should be less or "
                         "equal to 3");
    assert_null(JX_STR(st, "spec", "queueName"));
    xfree(msg);
    diag_release(&d);
    json_decref(st);
    /* a consistent status is accepted */
    st = json_deep_copy(wl);
    JX_SET_NEW(st, json_loads("{\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":"
                              "[{\"name\":\"main\",\"count\":3,\"resourceUsage\":{\"cpu\":\"3\"}}]}}",
                              0, NULL),
               "status");
    diag_init(&d);
    assert_int_equal(api_admit_status(k, st, wl, &d), 0);
    diag_release(&d);
    json_decref(st);
    json_decref(wl);
}

static void test_workload_frozen_while_reserved(void **state)
{
    (void)state;
    json_t *old = doc_of("apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n"
                         "metadata: {name: w, namespace: default}\nspec:\n  queueName: q\n"
                         "  podSets:\n  - name: main\n    count: 3\n    template:\n      spec:\n"
                         "        containers: [{name: c}]\nstatus:\n  conditions:\n"
                         "  - {type: QuotaReserved, status: \"True\"}\n  admission:\n"
                         "    clusterQueue: cq\n    podSetAssignments: [{name: main, count: 3}]\n");
    json_t *upd = json_deep_copy(old);
    JX_SET_NEW(json_array_get(JX_GET(upd, "spec", "podSets"), 0), json_integer(5), "count");
    JX_SET_NEW(upd, json_string("other"), "spec", "queueName");
    char *msg;
    assert_int_equal(admit_update(upd, old, &msg), CU_EINVAL);
    assert_contains(msg, "spec.podSets[0]: Invalid value: field is immutable");
    assert_contains(msg, "spec.queueName: Invalid value: \"other\": field is immutable");
    xfree(msg);
    json_decref(upd);
    /* a count decrease is allowed (elastic scale-down) */
    upd = json_deep_copy(old);
    JX_SET_NEW(json_array_get(JX_GET(upd, "spec", "podSets"), 0), json_integer(2), "count");
    assert_int_equal(admit_update(upd, old, &msg), 0);
    xfree(msg);
    json_decref(upd);
    json_decref(old);
}

static void test_provisioning_request_spec_immutable(void **state)
{
    (void)state;
    json_t *old = doc_of("apiVersion: autoscaling.x-k8s.io/v1\nkind: ProvisioningRequest\n"
                         "metadata: {name: pr}\nspec:\n  provisioningClassName: a.b\n"
                         "  podSets: [{podTemplateRef: {name: t}, count: 4}]\n");
    t_admit_ok(old, "default");
    json_t *upd = json_deep_copy(old);
    JX_SET_NEW(upd, json_string("c.d"), "spec", "provisioningClassName");
    JX_SET_NEW(json_array_get(JX_GET(upd, "spec", "podSets"), 0), json_integer(5), "count");
    char *msg;
    assert_int_equal(admit_update(upd, old, &msg), CU_EINVAL);
    assert_contains(msg, "spec.podSets: Invalid value: ");
    assert_contains(msg, "spec.provisioningClassName: Invalid value: \"c.d\": Value is immutable");
    xfree(msg);
    json_decref(upd);
    json_decref(old);
}

static void test_namespace_rules(void **state)
{
    (void)state;
    json_t *cm = doc_of("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: a}\n");
    int rc;
    char *msg = t_admit_err(cm, "b", &rc);
    assert_int_equal(rc, CU_EBADREQ);
    assert_contains(msg, "does not match the namespace sent on the request");
    xfree(msg);
    json_decref(cm);
    /* cluster-scoped kinds lose a namespace silently */
    json_t *rf = doc_of("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
                        "metadata: {name: f, namespace: x}\n");
    t_admit_ok(rf, "default");
    assert_null(JX_GET(rf, "metadata", "namespace"));
    json_decref(rf);
    /* a namespaced kind without any namespace */
    cm = doc_of("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n");
    msg = t_admit_err(cm, NULL, &rc);
    assert_int_equal(rc, CU_EINVAL);
    assert_contains(msg, "metadata.namespace: Required value");
    xfree(msg);
    json_decref(cm);
    /* the Namespace kind gets its name label and phase */
    json_t *ns = doc_of("apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n");
    t_admit_ok(ns, NULL);
    assert_string_equal(JX_STR(ns, "metadata", "labels", "kubernetes.io/metadata.name"),
                        "team-a");
    assert_string_equal(JX_STR(ns, "status", "phase"), "Active");
    json_decref(ns);
}

static void test_pod_defaults_and_update(void **state)
{
    (void)state;
    json_t *pod = doc_of("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                         "  containers:\n  - name: c\n    image: busybox:1.36\n"
                         "    resources: {limits: {cpu: 1, memory: 1Gi}}\n");
    t_admit_ok(pod, "default");
    assert_string_equal(JX_STR(pod, "spec", "restartPolicy"), "Always");
    json_t *c = json_array_get(JX_GET(pod, "spec", "containers"), 0);
    assert_string_equal(JX_STR(c, "resources", "requests", "cpu"), "1");
    assert_string_equal(JX_STR(c, "resources", "requests", "memory"), "1Gi");
    json_t *upd = json_deep_copy(pod);
    json_t *uc = json_array_get(JX_GET(upd, "spec", "containers"), 0);
    json_object_set_new(uc, "image", json_string("busybox:1.37"));
    char *msg;
    assert_int_equal(admit_update(upd, pod, &msg), 0);
    xfree(msg);
    JX_SET_NEW(upd, json_string("Never"), "spec", "restartPolicy");
    assert_int_equal(admit_update(upd, pod, &msg), CU_EINVAL);
    assert_contains(msg, "spec: Forbidden: pod updates may not change fields other than");
    xfree(msg);
    json_decref(upd);
    json_decref(pod);
}

static void test_v1beta2_conversion(void **state)
{
    (void)state;
    json_t *cq = doc_of("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
                        "metadata: {name: cq}\nspec: {cohortName: team}\n");
    t_admit_ok(cq, NULL);
    assert_string_equal(JX_STR(cq, "apiVersion"), "kueue.x-k8s.io/v1beta1");
    assert_string_equal(JX_STR(cq, "spec", "cohort"), "team");
    assert_null(JX_GET(cq, "spec", "cohortName"));
    json_decref(cq);
    cq = doc_of("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
                "metadata: {name: cq}\nspec: {cohort: team, admissionChecks: [a]}\n");
    int rc;
    char *msg = t_admit_err(cq, NULL, &rc);
    assert_int_equal(rc, CU_EBADREQ);
    assert_contains(msg, "unknown field \"spec.cohort\"");
    assert_contains(msg, "unknown field \"spec.admissionChecks\"");
    xfree(msg);
    json_decref(cq);
    /* v1beta1 has no cohortName */
    cq = doc_of("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
                "metadata: {name: cq}\nspec: {cohortName: team}\n");
    msg = t_admit_err(cq, NULL, &rc);
    assert_int_equal(rc, CU_EBADREQ);
    assert_contains(msg, "unknown field \"spec.cohortName\"");
    xfree(msg);
    json_decref(cq);
}

static int fake_topology_hosts;

static bool fake_known(const char *mt) { return !strcmp(mt, "ct6e-standard-4t"); }

static const char *fake_topology(const char *mt, const char *topo, int *hosts)
{
    if (strcmp(topo, "4x4") && strcmp(topo, "2x2"))
        return "not a v6e topology";
    *hosts = fake_topology_hosts;
    return NULL;
}

static void test_nodepool_catalog_hook(void **state)
{
    (void)state;
    static const struct api_machine_catalog cat = {fake_known, fake_topology};
    fake_topology_hosts = 4;
    api_set_machine_catalog(&cat);
    json_t *np = doc_of("apiVersion: cueue.dev/v1alpha1\nkind: NodePool\nmetadata: {name: p}\n"
                        "spec:\n  config: {machineType: n9-imaginary}\n"
                        "  placementPolicy: {tpuTopology: 3x3}\n");
    int rc;
    char *msg = t_admit_err(np, NULL, &rc);
    assert_int_equal(rc, CU_EINVAL);
    assert_contains(msg, "spec.config.machineType: Unsupported value: \"n9-imaginary\": not in "
                         "the machine catalog");
    assert_contains(msg, "spec.placementPolicy.tpuTopology: Invalid value: \"3x3\": not a v6e "
                         "topology");
    xfree(msg);
    json_decref(np);
    np = doc_of("apiVersion: cueue.dev/v1alpha1\nkind: NodePool\nmetadata: {name: p}\n"
                "spec:\n  config: {machineType: ct6e-standard-4t}\n"
                "  autoscaling: {enabled: true, minNodeCount: 0, maxNodeCount: 6}\n"
                "  placementPolicy: {tpuTopology: 4x4}\n");
    msg = t_admit_err(np, NULL, &rc);
    assert_int_equal(rc, CU_EINVAL);
    assert_contains(msg, "spec.autoscaling.maxNodeCount: Invalid value: 6: must be a multiple of 4 "
                         "(the hosts of one 4x4 slice)");
    xfree(msg);
    json_decref(np);
    api_set_machine_catalog(NULL);
    /* without a catalog any machine type passes; topology syntax is still checked */
    np = doc_of("apiVersion: cueue.dev/v1alpha1\nkind: NodePool\nmetadata: {name: p}\n"
                "spec:\n  config: {machineType: n9-imaginary}\n"
                "  placementPolicy: {tpuTopology: 4x}\n");
    msg = t_admit_err(np, NULL, &rc);
    assert_int_equal(rc, CU_EINVAL);
    assert_contains(msg, "tpuTopology: Invalid value: \"4x\": must be two or three positive");
    xfree(msg);
    json_decref(np);
}

/* The server's pod policy: hostPath only under its prefixes (whole path
 * elements), privileged containers only with its leave; without a policy
 * neither. */
static void test_pod_policy_host_path_and_privileged(void **state)
{
    (void)state;
    const struct api_kind *k = api_kind_get(KIND_POD);
    const char *const prefixes[] = {"/data/", "/scratch"};
    struct api_pod_policy pol = {.allow_privileged = true, .host_path_prefixes = prefixes,
                                 .n_host_path_prefixes = 2};
    struct api_admit_env env = {.pod_policy = &pol};
    const char *const cases[][2] = {
        {"/data", NULL},
        {"/data/x/y", NULL},
        {"/scratch/a", NULL},
        {"/database", "hostPath.path: Forbidden: hostPath volumes are disallowed"},
        {"/etc", "hostPath.path: Forbidden: hostPath volumes are disallowed"},
        {"/data/../etc", "hostPath.path: Invalid value: \"/data/../etc\": must not contain '..'"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *y = xasprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                            "  containers: [{name: c, securityContext: {privileged: true}}]\n"
                            "  volumes: [{name: h, hostPath: {path: \"%s\"}}]\n", cases[i][0]);
        json_t *pod = doc_of(y);
        struct diag d;
        diag_init(&d);
        int rc = api_admit_in(k, pod, NULL, "default", &env, &d);
        char *msg = rc ? api_error_message(k, "p", rc, &d) : NULL;
        if (!cases[i][1]) {
            assert_int_equal(rc, 0);
        } else {
            assert_int_equal(rc, CU_EINVAL);
            assert_contains(msg, cases[i][1]);
        }
        xfree(msg);
        diag_release(&d);
        json_decref(pod);
        xfree(y);
    }
    /* without a policy: both refused, each naming its field */
    json_t *pod = doc_of("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
                         "  containers: [{name: c, securityContext: {privileged: true}}]\n"
                         "  volumes: [{name: h, hostPath: {path: /data}}]\n");
    int rc;
    char *msg = t_admit_err(pod, "default", &rc);
    assert_int_equal(rc, CU_EINVAL);
    assert_contains(msg, "spec.containers[0].securityContext.privileged: Forbidden");
    assert_contains(msg, "spec.volumes[0].hostPath.path: Forbidden");
    xfree(msg);
    json_decref(pod);
}

static void test_error_message_formats(void **state)
{
    (void)state;
    const struct api_kind *cq = api_kind_get(KIND_CLUSTERQUEUE);
    struct diag d;
    diag_init(&d);
    diag_add(&d, DIAG_INVALID, "spec.x", "\"1\"", "bad");
    char *m = api_error_message(cq, "cq", CU_EINVAL, &d);
    assert_string_equal(m, "ClusterQueue.kueue.x-k8s.io \"cq\" is invalid: spec.x: Invalid value: "
                           "\"1\": bad");
    xfree(m);
    diag_add(&d, DIAG_REQUIRED, "spec.y", NULL, NULL);
    m = api_error_message(cq, "cq", CU_EINVAL, &d);
    assert_string_equal(m, "ClusterQueue.kueue.x-k8s.io \"cq\" is invalid: [spec.x: Invalid value: "
                           "\"1\": bad, spec.y: Required value]");
    xfree(m);
    diag_release(&d);
    diag_init(&d);
    diag_add(&d, DIAG_UNKNOWN_FIELD, "spec.z", NULL, NULL);
    m = api_error_message(api_kind_get(KIND_JOB), "j", CU_EBADREQ, &d);
    assert_string_equal(m, "Job in version \"v1\" cannot be handled as a Job: strict decoding "
                           "error: unknown field \"spec.z\"");
    xfree(m);
    diag_release(&d);
    diag_init(&d);
    m = api_error_message(NULL, NULL, CU_ELIMIT, &d);
    assert_true(strlen(m) > 0);
    xfree(m);
    diag_release(&d);
}

/* ---- the schema table ---- */

static void test_every_kind_has_a_schema_and_openapi(void **state)
{
    (void)state;
    for (int i = 0; i < KIND__COUNT; i++) {
        const struct api_kind_schema *ks = api_kind_schema((enum api_kind_id)i);
        assert_non_null(ks);
        assert_int_equal(ks->kind, i);
        assert_non_null(ks->name_rule);
        const struct api_schema *root = api_schema_for_kind((enum api_kind_id)i);
        assert_non_null(api_schema_field(root, "metadata"));
        json_t *oa = api_schema_openapi(root);
        assert_string_equal(JX_STR(oa, "type"), "object");
        assert_non_null(JX_GET(oa, "properties", "metadata", "properties", "labels"));
        json_decref(oa);
    }
    assert_null(api_kind_schema(KIND__COUNT));
    json_t *oa = api_schema_openapi(api_schema_for_kind(KIND_CLUSTERQUEUE));
    assert_string_equal(JX_STR(oa, "properties", "spec", "properties", "queueingStrategy",
                               "default"), "BestEffortFIFO");
    json_t *flavors = JX_GET(oa, "properties", "spec", "properties", "resourceGroups", "items",
                             "properties", "flavors");
    assert_string_equal(JX_STR(flavors, "x-kubernetes-list-type"), "map");
    assert_int_equal(JX_INT(flavors, 0, "maxItems"), 64);
    json_decref(oa);
}

static void test_merge_keys_for_strategic_merge_patch(void **state)
{
    (void)state;
    struct {
        enum api_kind_id kind;
        const char *const *path;
        const char *key;
    } cases[] = {
        {KIND_POD, JX_KEYS("spec", "containers"), "name"},
        {KIND_POD, JX_KEYS("spec", "initContainers"), "name"},
        {KIND_POD, JX_KEYS("spec", "containers", "env"), "name"},
        {KIND_POD, JX_KEYS("spec", "volumes"), "name"},
        {KIND_POD, JX_KEYS("spec", "containers", "volumeMounts"), "mountPath"},
        {KIND_POD, JX_KEYS("spec", "containers", "ports"), "containerPort"},
        {KIND_POD, JX_KEYS("spec", "schedulingGates"), "name"},
        {KIND_JOB, JX_KEYS("spec", "template", "spec", "containers"), "name"},
        {KIND_RAYJOB, JX_KEYS("spec", "rayClusterSpec", "workerGroupSpecs"), "groupName"},
        {KIND_RAYJOB, JX_KEYS("spec", "rayClusterSpec", "workerGroupSpecs", "template", "spec",
                              "containers"), "name"},
        {KIND_CLUSTERQUEUE, JX_KEYS("spec", "resourceGroups", "flavors"), "name"},
        {KIND_WORKLOAD, JX_KEYS("spec", "podSets"), "name"},
        {KIND_WORKLOAD, JX_KEYS("status", "conditions"), "type"},
        {KIND_CONFIGMAP, JX_KEYS("metadata", "ownerReferences"), "uid"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct api_schema *s = api_schema_at(cases[i].kind, cases[i].path);
        assert_non_null(s);
        assert_string_equal(api_schema_merge_key(s), cases[i].key);
    }
    /* atomic lists and non-lists have none */
    assert_null(api_schema_merge_key(api_schema_at(KIND_POD, JX_KEYS("spec", "containers",
                                                                     "command"))));
    assert_null(api_schema_merge_key(api_schema_at(KIND_POD, JX_KEYS("spec"))));
    assert_null(api_schema_at(KIND_POD, JX_KEYS("spec", "nope")));
    assert_null(api_schema_at(KIND_POD, JX_KEYS("spec", "affinity", "podAffinity", "x")));
    const struct api_schema *req = api_schema_at(KIND_POD, JX_KEYS("spec", "containers",
                                                                   "resources", "requests"));
    assert_int_equal(api_schema_items(req)->type, SCH_QUANTITY);
}

/* Every pass-through subtree is documented in docs/api.md: a kind's own by
 * its path, those of the shared PodSpec once, by their path in a PodSpec. */
struct pt_ctx {
    const char *doc;
    const char *kind;
    const struct api_schema *pod_spec;
    size_t missing, seen;
};

static bool check_passthrough(void *ctx, const char *path, const struct api_schema *s)
{
    struct pt_ctx *c = ctx;
    if (s == c->pod_spec && c->kind)
        return false; /* checked once on its own */
    if (s->type != SCH_PASSTHROUGH)
        return true;
    c->seen++;
    char *quoted = xasprintf("`%s`", path);
    if (!strstr(c->doc, quoted)) {
        fprintf(stderr, "docs/api.md lacks %s pass-through %s\n", c->kind ? c->kind : "PodSpec",
                quoted);
        c->missing++;
    }
    xfree(quoted);
    return true;
}

static void test_passthrough_fields_are_documented(void **state)
{
    (void)state;
    char *path = t_src_path("docs/api.md");
    char *doc = t_read_file(path, NULL);
    xfree(path);
    assert_non_null(doc);
    struct pt_ctx c = {doc, NULL, api_schema_at(KIND_POD, JX_KEYS("spec")), 0, 0};
    for (int i = 0; i < KIND__COUNT; i++) {
        c.kind = api_kind_get((enum api_kind_id)i)->kind;
        api_schema_visit(api_schema_for_kind((enum api_kind_id)i), "", check_passthrough, &c);
    }
    c.kind = NULL;
    api_schema_visit(c.pod_spec, "", check_passthrough, &c);
    assert_true(c.seen > 30);
    assert_int_equal(c.missing, 0);
    xfree(doc);
}

/* The example JobSet (examples/jobset-tpu-v6e-dws.yaml) is accepted with
 * JobSet's defaults, and suspended by Kueue's webhook as a managed job. */
static void test_jobset_example_accepted_with_defaults(void **state)
{
    (void)state;
    char *path = t_src_path("examples/jobset-tpu-v6e-dws.yaml");
    char *raw = t_read_file(path, NULL);
    xfree(path);
    char *text = raw; /* JOB_ID=1 envsubst */
    for (char *at; (at = strstr(text, "${JOB_ID}"));) {
        *at = '\0';
        char *next = xasprintf("%s1%s", text, at + strlen("${JOB_ID}"));
        if (text != raw)
            xfree(text);
        text = next;
    }
    assert_true(text != raw);
    json_t *docs = t_parse_ok(text);
    json_t *js = json_array_get(docs, 0);
    t_admit_ok(js, "default");
    assert_string_equal(JX_STR(js, "metadata", "name"), "jobset-tpu-v6e-dws-1");
    assert_true(JX_BOOL(js, false, "spec", "suspend"));
    assert_true(JX_BOOL(js, false, "spec", "network", "enableDNSHostnames"));
    assert_true(JX_BOOL(js, false, "spec", "network", "publishNotReadyAddresses"));
    json_t *rj = json_array_get(JX_GET(js, "spec", "replicatedJobs"), 0);
    assert_int_equal(JX_INT(rj, -1, "replicas"), 1);
    assert_string_equal(JX_STR(rj, "template", "spec", "completionMode"), "Indexed");
    /* the example's own restartPolicy stays; an unset one becomes OnFailure */
    assert_string_equal(JX_STR(rj, "template", "spec", "template", "spec", "restartPolicy"),
                        "Never");
    json_decref(docs);
    docs = t_parse_ok("apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata: {name: js}\n"
                      "spec:\n  replicatedJobs:\n  - name: w\n    template: {spec: {template: "
                      "{spec: {containers: [{name: c, image: x}]}}}}\n");
    js = json_array_get(docs, 0);
    t_admit_ok(js, "default");
    rj = json_array_get(JX_GET(js, "spec", "replicatedJobs"), 0);
    assert_string_equal(JX_STR(rj, "template", "spec", "template", "spec", "restartPolicy"),
                        "OnFailure");
    assert_int_equal(JX_INT(rj, -1, "template", "spec", "completions"), 1);
    assert_int_equal(JX_INT(rj, -1, "template", "spec", "parallelism"), 1);
    assert_string_equal(JX_STR(js, "spec", "successPolicy", "operator"), "All");
    assert_false(JX_BOOL(js, false, "spec", "suspend")); /* not managed: runs at once */
    json_decref(docs);
    xfree(text);
    xfree(raw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_queue_accepted_with_kueue_defaults),
        cmocka_unit_test(test_seed_rayjob_accepted_with_kuberay_defaults),
        cmocka_unit_test(test_jobset_example_accepted_with_defaults),
        cmocka_unit_test(test_seed_copies_match_shared_tree),
        cmocka_unit_test(test_invalid_fixtures_rejected_naming_field_and_rule),
        cmocka_unit_test(test_valid_fixtures_accepted),
        cmocka_unit_test(test_job_defaults_and_generated_selector),
        cmocka_unit_test(test_kueue_suspends_managed_jobs),
        cmocka_unit_test(test_default_local_queue_and_priority_class),
        cmocka_unit_test(test_plain_pod_gating_by_policy),
        cmocka_unit_test(test_job_update_rules),
        cmocka_unit_test(test_status_dropped_on_create_kept_on_update),
        cmocka_unit_test(test_status_subresource_rules),
        cmocka_unit_test(test_workload_frozen_while_reserved),
        cmocka_unit_test(test_provisioning_request_spec_immutable),
        cmocka_unit_test(test_namespace_rules),
        cmocka_unit_test(test_pod_defaults_and_update),
        cmocka_unit_test(test_v1beta2_conversion),
        cmocka_unit_test(test_nodepool_catalog_hook),
        cmocka_unit_test(test_pod_policy_host_path_and_privileged),
        cmocka_unit_test(test_error_message_formats),
        cmocka_unit_test(test_every_kind_has_a_schema_and_openapi),
        cmocka_unit_test(test_merge_keys_for_strategic_merge_patch),
        cmocka_unit_test(test_passthrough_fields_are_documented),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
