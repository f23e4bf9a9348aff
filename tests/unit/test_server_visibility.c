/*
 * Unit tests of Kueue's visibility API as cueue serves it (visibility.c),
 * through srv__dispatch with the whole control plane on a virtual clock:
 * two 4-cpu jobs on a 4-cpu ClusterQueue, the first admitted with an
 * expected runtime of 600 s, the second pending behind it. The pending one
 * is listed with Kueue's fields (positions, priority, localQueueName,
 * owner) and cueue's (reason, blocker flavor/resource/needed/holder,
 * estimated admission time = the holder's admission + 600 s); paging,
 * errors and discovery as Kueue's visibility server answers them.
 */
#include "test_server_fixture.h"

#define VIS "/apis/visibility.kueue.x-k8s.io/v1beta1"

/* POST one object (JSON) through the API and let the control plane run. */
static void post(struct sfx *s, const char *path, const char *body)
{
    char msg[512];
    int code = sfx_call(s, "POST", path, NULL, "application/json", body, msg, sizeof(msg));
    if (code != 201)
        fail_msg("POST %s: %d %s", path, code, msg);
    fx_run(s->fx);
}

/* A one-pod Job asking for all 4 cpus of the queue, with an expected
 * runtime in seconds (NULL: none). */
static void submit(struct sfx *s, const char *name, const char *runtime)
{
    char *ann = runtime ? xasprintf(",\"annotations\":{\"cueue.dev/expected-runtime-seconds\":"
                                    "\"%s\"}", runtime)
                        : xstrdup("");
    char *job = xasprintf(
        "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"kueue.x-k8s.io/queue-name\":\"lq\"}%s},"
        "\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":"
        "[{\"name\":\"c\",\"image\":\"x\",\"resources\":{\"requests\":{\"cpu\":\"4\"}}}]}}}}",
        name, ann);
    post(s, "/apis/batch/v1/namespaces/default/jobs", job);
    fx_advance(s->fx, 1000);
    xfree(job);
    xfree(ann);
}

static struct sfx *two_jobs(bool with_ctrl)
{
    struct sfx *s = sfx_new(with_ctrl);
    const char *kq = "/apis/kueue.x-k8s.io/v1beta1";
    char *p = xasprintf("%s/resourceflavors", kq);
    post(s, p, "{\"metadata\":{\"name\":\"rf\"}}");
    xfree(p);
    p = xasprintf("%s/clusterqueues", kq);
    post(s, p,
         "{\"metadata\":{\"name\":\"cq\"},\"spec\":{\"namespaceSelector\":{},"
         "\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"rf\","
         "\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":4}]}]}]}}");
    xfree(p);
    p = xasprintf("%s/namespaces/default/localqueues", kq);
    post(s, p, "{\"metadata\":{\"name\":\"lq\"},\"spec\":{\"clusterQueue\":\"cq\"}}");
    xfree(p);
    submit(s, "a", "600");
    submit(s, "b", NULL);
    return s;
}

static json_t *get_json(struct sfx *s, const char *path, const char *query, int want_code)
{
    struct srv_resp r;
    sfx_req(s, "GET", path, query, NULL, NULL, &r);
    json_t *v = sfx_json(&r);
    if (r.code != want_code)
        fail_msg("GET %s: %d, want %d: %s", path, r.code, want_code, r.body);
    srv__resp_release(&r);
    return v;
}

/* The pending item for b, as the LocalQueue, ClusterQueue and workload
 * endpoints give it. */
static void check_item(const json_t *it, const json_t *a, const json_t *b)
{
    assert_string_equal(JX_STR(it, "metadata", "name"), api_name(b));
    assert_string_equal(JX_STR(it, "metadata", "namespace"), "default");
    json_t *owner = json_array_get(JX_GET(it, "metadata", "ownerReferences"), 0);
    assert_string_equal(JX_STR(owner, "kind"), "Job");
    assert_string_equal(JX_STR(owner, "uid"),
                        JX_STR(json_array_get(JX_GET(b, "metadata", "ownerReferences"), 0), "uid"));
    assert_int_equal(JX_INT(it, -1, "priority"), 0);
    assert_string_equal(JX_STR(it, "localQueueName"), "lq");
    assert_int_equal(JX_INT(it, -1, "positionInClusterQueue"), 0);
    assert_int_equal(JX_INT(it, -1, "positionInLocalQueue"), 0);
    assert_string_equal(JX_STR(it, "reason"), fx_reason(b, "QuotaReserved"));
    assert_string_equal(JX_STR(it, "message"), fx_message(b, "QuotaReserved"));
    json_t *bl = json_array_get(JX_GET(it, "blockers"), 0);
    assert_non_null(bl);
    assert_string_equal(JX_STR(bl, "flavor"), "rf");
    assert_string_equal(JX_STR(bl, "resource"), "cpu");
    assert_string_equal(JX_STR(bl, "needed"), "4");
    json_t *h = json_array_get(JX_GET(bl, "holders"), 0);
    assert_string_equal(JX_STR(h, "namespace"), "default");
    assert_string_equal(JX_STR(h, "name"), api_name(a));
    char ts[TIMEFMT_LEN];
    timefmt_rfc3339(api_cond_time_ms(a, "Admitted") + 600000, false, ts);
    assert_string_equal(JX_STR(it, "estimatedAdmissionTime"), ts);
}

static void pending_workloads_say_why_and_when(void **state)
{
    (void)state;
    struct sfx *s = two_jobs(true);
    json_t *a = fx_workload_of(s->fx, "Job", "a");
    json_t *b = fx_workload_of(s->fx, "Job", "b");
    assert_true(api_cond_is_true(a, "Admitted"));
    json_t *lq = get_json(s, VIS "/namespaces/default/localqueues/lq/pendingworkloads", NULL, 200);
    assert_string_equal(JX_STR(lq, "kind"), "PendingWorkloadsSummary");
    assert_string_equal(JX_STR(lq, "apiVersion"), "visibility.kueue.x-k8s.io/v1beta1");
    assert_int_equal(json_array_size(JX_GET(lq, "items")), 1); /* a is admitted: not listed */
    check_item(json_array_get(JX_GET(lq, "items"), 0), a, b);
    json_t *cq = get_json(s, "/apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/cq/"
                             "pendingworkloads", NULL, 200);
    assert_string_equal(JX_STR(cq, "apiVersion"), "visibility.kueue.x-k8s.io/v1beta2");
    assert_int_equal(json_array_size(JX_GET(cq, "items")), 1);
    check_item(json_array_get(JX_GET(cq, "items"), 0), a, b);
    char *one = xasprintf(VIS "/namespaces/default/workloads/%s/pendingworkload", api_name(b));
    json_t *wl = get_json(s, one, NULL, 200);
    assert_string_equal(JX_STR(wl, "kind"), "PendingWorkload");
    check_item(wl, a, b);
    xfree(one);
    /* the admitted one has no pending entry */
    one = xasprintf(VIS "/namespaces/default/workloads/%s/pendingworkload", api_name(a));
    json_decref(get_json(s, one, NULL, 404));
    xfree(one);
    json_decref(wl);
    json_decref(cq);
    json_decref(lq);
    json_decref(b);
    json_decref(a);
    sfx_free(s);
}

static void paging_and_positions(void **state)
{
    (void)state;
    struct sfx *s = two_jobs(true);
    submit(s, "c", NULL);
    json_t *c = fx_workload_of(s->fx, "Job", "c");
    json_t *b = fx_workload_of(s->fx, "Job", "b");
    const char *lqp = VIS "/namespaces/default/localqueues/lq/pendingworkloads";
    json_t *all = get_json(s, lqp, NULL, 200);
    assert_int_equal(json_array_size(JX_GET(all, "items")), 2);
    json_t *second = json_array_get(JX_GET(all, "items"), 1);
    assert_string_equal(JX_STR(second, "metadata", "name"), api_name(c));
    assert_int_equal(JX_INT(second, -1, "positionInClusterQueue"), 1);
    assert_int_equal(JX_INT(second, -1, "positionInLocalQueue"), 1);
    json_t *pg = get_json(s, lqp, "offset=1&limit=1", 200);
    assert_int_equal(json_array_size(JX_GET(pg, "items")), 1);
    assert_string_equal(JX_STR(json_array_get(JX_GET(pg, "items"), 0), "metadata", "name"),
                        api_name(c));
    json_decref(pg);
    pg = get_json(s, VIS "/clusterqueues/cq/pendingworkloads", "limit=1", 200);
    assert_int_equal(json_array_size(JX_GET(pg, "items")), 1);
    assert_string_equal(JX_STR(json_array_get(JX_GET(pg, "items"), 0), "metadata", "name"),
                        api_name(b));
    json_decref(pg);
    pg = get_json(s, lqp, "offset=5", 200);
    assert_int_equal(json_array_size(JX_GET(pg, "items")), 0);
    json_decref(pg);
    json_decref(get_json(s, lqp, "limit=0", 400));
    json_decref(get_json(s, lqp, "offset=-1", 400));
    json_decref(all);
    json_decref(b);
    json_decref(c);
    sfx_free(s);
}

static void errors_as_kueue_answers_them(void **state)
{
    (void)state;
    struct sfx *s = two_jobs(true);
    json_t *st = get_json(s, VIS "/clusterqueues/nope/pendingworkloads", NULL, 404);
    assert_string_equal(JX_STR(st, "message"),
                        "clusterqueue.visibility.kueue.x-k8s.io \"nope\" not found");
    json_decref(st);
    st = get_json(s, VIS "/namespaces/default/localqueues/nope/pendingworkloads", NULL, 404);
    assert_string_equal(JX_STR(st, "message"),
                        "localqueue.visibility.kueue.x-k8s.io \"nope\" not found");
    json_decref(st);
    json_decref(get_json(s, VIS "/clusterqueues/cq/pendingworkloads/", NULL, 404));
    json_decref(get_json(s, "/apis/visibility.kueue.x-k8s.io/v1/clusterqueues/cq/"
                            "pendingworkloads", NULL, 404));
    char msg[256];
    assert_int_equal(sfx_call(s, "DELETE", VIS "/clusterqueues/cq/pendingworkloads", NULL, NULL,
                              NULL, msg, sizeof(msg)),
                     405);
    assert_true(store_count(s->fx->store, KIND_WORKLOAD) == 2);
    sfx_free(s);
}

static bool listed(const json_t *groups, const char *key, const char *name, size_t *at)
{
    size_t i;
    json_t *g;
    json_array_foreach(groups, i, g)
    {
        const char *n = !strcmp(key, "name") ? JX_STR(g, "name") : JX_STR(g, "metadata", "name");
        if (n && !strcmp(n, name)) {
            *at = i;
            return true;
        }
    }
    return false;
}

static void discovery_lists_the_group_last(void **state)
{
    (void)state;
    struct sfx *s = sfx_new(true);
    json_t *apis = get_json(s, "/apis", NULL, 200);
    size_t at = 0, kueue = 0;
    json_t *groups = JX_GET(apis, "groups");
    assert_true(listed(groups, "name", "visibility.kueue.x-k8s.io", &at));
    assert_true(listed(groups, "name", "kueue.x-k8s.io", &kueue));
    assert_int_equal(at, json_array_size(groups) - 1);
    assert_true(kueue < at);
    json_t *rl = get_json(s, VIS, NULL, 200);
    assert_string_equal(JX_STR(rl, "groupVersion"), "visibility.kueue.x-k8s.io/v1beta1");
    bool sub = false;
    size_t i;
    json_t *r;
    json_array_foreach(JX_GET(rl, "resources"), i, r)
        sub |= !strcmp(jx_or_empty(JX_STR(r, "name")), "localqueues/pendingworkloads");
    assert_true(sub);
    json_t *g = get_json(s, "/apis/visibility.kueue.x-k8s.io", NULL, 200);
    assert_string_equal(JX_STR(g, "kind"), "APIGroup");
    json_decref(g);
    json_decref(rl);
    json_decref(apis);
    sfx_free(s);
    /* without a control plane the group is not served */
    s = sfx_new(false);
    apis = get_json(s, "/apis", NULL, 200);
    assert_false(listed(JX_GET(apis, "groups"), "name", "visibility.kueue.x-k8s.io", &at));
    json_decref(get_json(s, VIS, NULL, 404));
    json_decref(get_json(s, VIS "/clusterqueues/cq/pendingworkloads", NULL, 404));
    json_decref(apis);
    sfx_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pending_workloads_say_why_and_when),
        cmocka_unit_test(paging_and_positions),
        cmocka_unit_test(errors_as_kueue_answers_them),
        cmocka_unit_test(discovery_lists_the_group_last),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
