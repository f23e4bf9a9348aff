/*
 * Unit tests of the endpoints controller (jobs/endpoints.c): a Service's
 * Endpoints follow its selector as pods are relabelled into and out of
 * it (the second is the case a pod event's new labels alone do not show:
 * the controller remembers which pods each Service selected), and a
 * Service without a selector keeps the Endpoints its user wrote.
 */
#include "test_ctrl_jobs_fixture.h"

static void put_pod(struct fx *f, const char *name, const char *app, const char *ip)
{
    json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:[{s:s, s:s}]}}",
                            "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
                            "namespace", "default", "labels", "app", app, "spec", "containers",
                            "name", "c", "image", "x");
    assert_int_equal(store_create(f->store, KIND_POD, "default", pod, NULL), 0);
    json_decref(pod);
    fx_set_pod(f, name, "Running", true);
    json_t *cur = fx_get(f, KIND_POD, "default", name);
    pod = json_deep_copy(cur);
    json_decref(cur);
    JX_SET_NEW(pod, json_string(ip), "status", "podIP");
    fx_write_status(f, KIND_POD, pod);
    json_decref(pod);
    fx_run(f);
}

static void relabel(struct fx *f, const char *name, const char *app)
{
    json_t *cur = fx_get(f, KIND_POD, "default", name);
    json_t *pod = json_deep_copy(cur);
    json_decref(cur);
    JX_SET_NEW(pod, json_string(app), "metadata", "labels", "app");
    assert_int_equal(store_update(f->store, KIND_POD, "default", pod, STORE_UPDATE_MAIN, NULL), 0);
    json_decref(pod);
    fx_run(f);
}

/* The Endpoints' ready addresses as "name@ip ..." in order (caller frees). */
static char *addresses(struct fx *f, const char *svc)
{
    json_t *ep = fx_get(f, KIND_ENDPOINTS, "default", svc);
    assert_non_null(ep);
    struct sbuf sb;
    sbuf_init(&sb, 64);
    size_t i, j;
    json_t *s, *a;
    json_array_foreach(json_object_get(ep, "subsets"), i, s) {
        json_array_foreach(json_object_get(s, "addresses"), j, a) {
            sbuf_addf(&sb, "%s%s@%s", sb.len ? " " : "",
                      jx_or_empty(JX_STR(a, "targetRef", "name")), jx_or_empty(JX_STR(a, "ip")));
        }
    }
    json_decref(ep);
    char *out = xstrdup(sb.len ? sb.buf : "");
    sbuf_release(&sb);
    return out;
}

static void assert_addresses(struct fx *f, const char *svc, const char *want)
{
    char *got = addresses(f, svc);
    assert_string_equal(got, want);
    xfree(got);
}

static void endpoints_follow_relabelled_pods(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_apply_text(f,
                  "apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: default}\n"
                  "spec:\n  selector: {app: web}\n  ports: [{name: http, port: 80}]\n",
                  "web.yaml");
    fx_run(f);
    put_pod(f, "a", "web", "10.0.0.1");
    put_pod(f, "b", "db", "10.0.0.2");
    assert_addresses(f, "web", "a@10.0.0.1");
    relabel(f, "a", "db"); /* out of the Service: its new labels do not match */
    assert_addresses(f, "web", "");
    relabel(f, "b", "web"); /* into it */
    assert_addresses(f, "web", "b@10.0.0.2");
    relabel(f, "b", "db");
    assert_addresses(f, "web", "");
    fx_free(f);
}

static void a_service_without_selector_keeps_its_endpoints(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_apply_text(f,
                  "apiVersion: v1\nkind: Service\nmetadata: {name: ext, namespace: default}\n"
                  "spec:\n  ports: [{name: http, port: 80}]\n---\n"
                  "apiVersion: v1\nkind: Endpoints\nmetadata: {name: ext, namespace: default}\n"
                  "subsets:\n- addresses: [{ip: 192.0.2.1}]\n  ports: [{name: http, port: 80}]\n",
                  "ext.yaml");
    fx_run(f);
    put_pod(f, "a", "web", "10.0.0.1");
    json_t *ep = fx_get(f, KIND_ENDPOINTS, "default", "ext");
    const json_t *s0 = json_array_get(json_object_get(ep, "subsets"), 0);
    const json_t *a0 = json_array_get(json_object_get(s0, "addresses"), 0);
    assert_string_equal(jx_or_empty(JX_STR(a0, "ip")), "192.0.2.1");
    assert_null(json_object_get(a0, "targetRef"));
    json_decref(ep);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(endpoints_follow_relabelled_pods),
        cmocka_unit_test(a_service_without_selector_keeps_its_endpoints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
