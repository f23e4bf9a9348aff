/*
 * test_server_dashboard: the dashboard's listener without HTTP
 * (src/server/dashboard.c, dashboard_sse.c): its pages come from the
 * embedded files, writes are refused, a configured token is required
 * (query, cookie from /login, bearer), API reads fall through to the API,
 * and /ui/events sends a reset, a snapshot of the kinds the pages show,
 * `synced`, then the changes of those kinds only.
 */
#include "test_server_fixture.h"

struct dreq {
    const char *method, *path, *query_token, *cookie, *authorization;
};

/* Run one request through the dashboard's route; returns whether it
 * answered (false: the API's dispatch would). */
static bool dash(struct sfx *s, const struct dreq *d, struct srv_resp *r)
{
    json_t *qo = json_object();
    if (d->query_token)
        json_object_set_new(qo, "token", json_string(d->query_token));
    struct srv_req q = {.srv = &s->srv, .method = d->method ? d->method : "GET", .path = d->path,
                        .query = qo, .accept = "", .content_type = "", .body = "",
                        .cookie = d->cookie ? d->cookie : "",
                        .authorization = d->authorization ? d->authorization : "",
                        .client_fd = -1};
    srv__resp_init(r);
    bool answered = srv__dashboard_route(&q, r);
    json_decref(qo);
    return answered;
}

static int dash_code(struct sfx *s, const struct dreq *d)
{
    struct srv_resp r;
    bool answered = dash(s, d, &r);
    int code = answered ? r.code : 0;
    srv__resp_release(&r);
    return code;
}

static const char *header_of(const struct srv_resp *r, const char *name)
{
    for (int i = 0; i < r->n_headers; i++)
        if (!strcmp(r->headers[i][0], name))
            return r->headers[i][1];
    return NULL;
}

static struct sfx *dash_new(const char *token)
{
    struct sfx *s = sfx_new(false);
    s->srv.dashboard = true;
    s->srv.token = token ? xstrdup(token) : NULL;
    return s;
}

static void dash_free(struct sfx *s)
{
    xfree(s->srv.token);
    sfx_free(s);
}

static void pages_come_from_the_embedded_files(void **state)
{
    (void)state;
    struct sfx *s = dash_new(NULL);
    struct srv_resp r;
    assert_true(dash(s, &(struct dreq){.path = "/ui/"}, &r));
    assert_int_equal(r.code, 200);
    assert_string_equal(r.content_type, "text/html; charset=utf-8");
    assert_non_null(strstr(r.body, "<script src=\"core.js\"></script>"));
    assert_non_null(strstr(header_of(&r, "Content-Security-Policy"), "default-src 'self'"));
    srv__resp_release(&r);
    assert_true(dash(s, &(struct dreq){.path = "/ui/vendor/uPlot.iife.min.js"}, &r));
    assert_int_equal(r.code, 200);
    assert_string_equal(r.content_type, "text/javascript; charset=utf-8");
    assert_true(r.len > 10000);
    assert_non_null(memmem(r.body, r.len, "uPlot", 5));
    srv__resp_release(&r);
    assert_true(dash(s, &(struct dreq){.path = "/"}, &r));
    assert_int_equal(r.code, 302);
    assert_string_equal(header_of(&r, "Location"), "/ui/");
    srv__resp_release(&r);
    assert_int_equal(dash_code(s, &(struct dreq){.path = "/ui/nothing.js"}), 404);
    assert_int_equal(dash_code(s, &(struct dreq){.path = "/ui/../cueue.db"}), 404);
    dash_free(s);
}

static void writes_are_refused_reads_reach_the_api(void **state)
{
    (void)state;
    struct sfx *s = dash_new(NULL);
    static const char *const writes[] = {"POST", "PUT", "PATCH", "DELETE"};
    for (size_t i = 0; i < 4; i++) {
        struct srv_resp r;
        assert_true(dash(s, &(struct dreq){.method = writes[i], .path = "/api/v1/namespaces"}, &r));
        assert_int_equal(r.code, 405);
        json_t *st = sfx_json(&r);
        assert_string_equal(JX_STR(st, "reason"), "MethodNotAllowed");
        assert_non_null(strstr(JX_STR(st, "message"), "read-only"));
        json_decref(st);
        srv__resp_release(&r);
    }
    assert_int_equal(dash_code(s, &(struct dreq){.path = "/api/v1/namespaces"}), 0);
    assert_int_equal(dash_code(s, &(struct dreq){.method = "HEAD", .path = "/apis"}), 0);
    dash_free(s);
}

static void a_token_is_required_when_set(void **state)
{
    (void)state;
    struct sfx *s = dash_new("s3cret");
    assert_int_equal(dash_code(s, &(struct dreq){.path = "/ui/"}), 401);
    assert_int_equal(dash_code(s, &(struct dreq){.path = "/api/v1/namespaces"}), 401);
    assert_int_equal(dash_code(s, &(struct dreq){.path = "/ui/", .query_token = "s3cre"}), 401);
    assert_int_equal(dash_code(s, &(struct dreq){.path = "/ui/", .query_token = "s3cretx"}), 401);
    assert_int_equal(dash_code(s, &(struct dreq){.path = "/ui/", .query_token = "s3cret"}), 200);
    assert_int_equal(dash_code(s, &(struct dreq){.path = "/api/v1/namespaces", .query_token = "s3cret"}), 0);
    assert_int_equal(dash_code(s, &(struct dreq){.path = "/ui/", .cookie = "a=1; cueue_dashboard_token=s3cret"}), 200);
    assert_int_equal(dash_code(s, &(struct dreq){.path = "/ui/", .cookie = "xcueue_dashboard_token=s3cret"}), 401);
    assert_int_equal(dash_code(s, &(struct dreq){.path = "/ui/", .cookie = "cueue_dashboard_token=s3cret2"}), 401);
    assert_int_equal(dash_code(s, &(struct dreq){.path = "/ui/", .authorization = "Bearer s3cret"}), 200);
    assert_int_equal(dash_code(s, &(struct dreq){.path = "/ui/", .authorization = "Basic s3cret"}), 401);
    struct srv_resp r;
    assert_true(dash(s, &(struct dreq){.path = "/login", .query_token = "s3cret"}, &r));
    assert_int_equal(r.code, 302);
    assert_string_equal(header_of(&r, "Location"), "/ui/");
    assert_string_equal(header_of(&r, "Set-Cookie"),
                        "cueue_dashboard_token=s3cret; Path=/; HttpOnly; SameSite=Strict");
    srv__resp_release(&r);
    assert_int_equal(dash_code(s, &(struct dreq){.path = "/login", .query_token = "nope"}), 401);
    dash_free(s);
    s = dash_new(NULL); /* no token: /login has nothing to set */
    assert_int_equal(dash_code(s, &(struct dreq){.path = "/login", .query_token = "x"}), 401);
    dash_free(s);
}

static char *next_chunk(struct srv_resp *r)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    assert_int_equal(r->stream.next(r->stream.ctx, &sb), 0);
    char *t = sbuf_take(&sb);
    sbuf_release(&sb);
    return t;
}

static void apply_flavor(struct sfx *s, const char *name)
{
    char *y = xasprintf("apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n"
                        "  name: %s\n", name);
    fx_apply_text(s->fx, y, name);
    xfree(y);
}

/* t is a whole snapshot: a reset first, synced last. */
static void assert_snapshot(const char *t)
{
    static const char synced[] = "event: synced\ndata: {}\n\n";
    assert_true(!strncmp(t, "event: reset\ndata: {\"resourceVersion\":\"", 39));
    size_t n = strlen(t);
    assert_true(n >= sizeof(synced) - 1);
    assert_string_equal(t + n - (sizeof(synced) - 1), synced);
}

static void events_send_a_snapshot_then_changes_of_shown_kinds(void **state)
{
    (void)state;
    struct sfx *s = dash_new(NULL);
    apply_flavor(s, "rf-a");
    struct srv_resp r;
    assert_true(dash(s, &(struct dreq){.path = "/ui/events"}, &r));
    assert_int_equal(r.code, 200);
    assert_string_equal(r.content_type, "text/event-stream");
    char *t = next_chunk(&r);
    assert_snapshot(t);
    char *rf = strstr(t, "data: {\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"ResourceFlavor\"");
    assert_non_null(rf);
    assert_non_null(strstr(rf, "\"name\":\"rf-a\""));
    assert_null(strstr(t, "\"kind\":\"Namespace\"")); /* not a kind the pages show */
    xfree(t);
    fx_apply_text(s->fx, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n  namespace: default\n"
                  "data:\n  a: b\n", "cm");
    apply_flavor(s, "rf-b");
    t = next_chunk(&r);
    assert_non_null(strstr(t, "data: {\"type\":\"ADDED\""));
    assert_non_null(strstr(t, "\"name\":\"rf-b\""));
    assert_null(strstr(t, "ConfigMap"));
    assert_null(strstr(t, "rf-a"));
    /* each message is one data line ended by a blank line */
    for (const char *p = t; (p = strstr(p, "data: ")); p += 6)
        assert_ptr_equal(strchr(p, '\n'), strstr(p, "\n\n"));
    xfree(t);
    srv__resp_release(&r);
    dash_free(s);
}

/* While nothing changes, poll parks the stream (SRV_STREAM_IDLE) until a
 * ping is due (15 s of the server's clock); when the store's event log no
 * longer holds the stream's position (a watch would get 410 Expired), the
 * stream starts over: a reset and a fresh snapshot, then synced. */
static void events_ping_when_idle_and_start_over_when_their_place_is_gone(void **state)
{
    (void)state;
    struct sfx *s = dash_new(NULL);
    apply_flavor(s, "rf-a");
    struct srv_resp r;
    assert_true(dash(s, &(struct dreq){.path = "/ui/events"}, &r));
    xfree(next_chunk(&r)); /* the snapshot */
    struct sbuf sb;
    sbuf_init(&sb, 0);
    assert_int_equal(r.stream.poll(r.stream.ctx, &sb), SRV_STREAM_IDLE);
    assert_int_equal(sb.len, 0);
    clk_virtual_set(&s->fx->clock, clk_now(&s->fx->clock.clk) + 14999);
    assert_int_equal(r.stream.poll(r.stream.ctx, &sb), SRV_STREAM_IDLE);
    clk_virtual_set(&s->fx->clock, clk_now(&s->fx->clock.clk) + 1);
    assert_int_equal(r.stream.poll(r.stream.ctx, &sb), 0);
    assert_string_equal(sb.buf, ": ping\n\n");
    sbuf_release(&sb);

    apply_flavor(s, "rf-b");
    store_events_trim(s->fx->store, store_rv(s->fx->store)); /* rf-b's event is gone */
    sbuf_init(&sb, 0);
    assert_int_equal(r.stream.poll(r.stream.ctx, &sb), 0);
    char *t = sbuf_take(&sb);
    sbuf_release(&sb);
    assert_snapshot(t);
    assert_non_null(strstr(t, "\"name\":\"rf-a\""));
    assert_non_null(strstr(t, "\"name\":\"rf-b\""));
    xfree(t);
    srv__resp_release(&r);
    dash_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pages_come_from_the_embedded_files),
        cmocka_unit_test(writes_are_refused_reads_reach_the_api),
        cmocka_unit_test(a_token_is_required_when_set),
        cmocka_unit_test(events_send_a_snapshot_then_changes_of_shown_kinds),
        cmocka_unit_test(events_ping_when_idle_and_start_over_when_their_place_is_gone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
