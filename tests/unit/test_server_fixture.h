/*
 * test_server_fixture: the API's handlers without HTTP. A memory store, a
 * virtual clock and the whole control plane (test_ctrl_jobs_fixture.h),
 * plus a struct srv over them with a temporary state directory (pod logs),
 * and helpers that run one request through srv__dispatch and read the
 * answer, streamed or not. Header-only; every function is static.
 */
#ifndef CUEUE_TEST_SERVER_FIXTURE_H
#define CUEUE_TEST_SERVER_FIXTURE_H

#include <unistd.h>

#include "server/srv-int.h"
#include "test_ctrl_jobs_fixture.h"

struct sfx {
    struct fx *fx;    /* store, clock, control plane */
    struct srv srv;   /* handlers' view of the server */
    char state_dir[64];
};

/* with_ctrl false: a server with no control plane (no visibility API). */
static inline struct sfx *sfx_new(bool with_ctrl)
{
    struct sfx *s = calloc(1, sizeof(*s));
    s->fx = fx_new(NULL);
    snprintf(s->state_dir, sizeof(s->state_dir), "/tmp/cueue-test-server.XXXXXX");
    if (!mkdtemp(s->state_dir))
        fail_msg("mkdtemp failed");
    s->srv.store = s->fx->store;
    s->srv.ctrl = with_ctrl ? s->fx->ctrl : NULL;
    s->srv.clock = &s->fx->clock.clk;
    s->srv.state_dir = xstrdup(s->state_dir);
    s->srv.listen_addr = xstrdup("127.0.0.1");
    s->srv.listen_fd = -1;
    pthread_mutex_init(&s->srv.rng_mu, NULL);
    pthread_mutex_init(&s->srv.metrics_mu, NULL);
    rng_seed(&s->srv.rng, 11);
    fx_apply_text(s->fx, "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n",
                  "default namespace");
    return s;
}

static inline void sfx_free(struct sfx *s)
{
    char *cmd = xasprintf("rm -rf '%s'", s->state_dir);
    if (system(cmd) != 0)
        print_message("could not remove %s\n", s->state_dir);
    xfree(cmd);
    xfree(s->srv.state_dir);
    xfree(s->srv.listen_addr);
    pthread_mutex_destroy(&s->srv.rng_mu);
    pthread_mutex_destroy(&s->srv.metrics_mu);
    fx_free(s->fx);
    free(s);
}

/* One request: query is "k=v&k2=v2" (no escaping) or NULL; body may be
 * NULL. The answer lands in *r (release with srv__resp_release). */
static inline void sfx_req(struct sfx *s, const char *method, const char *path,
                           const char *query, const char *ctype, const char *body,
                           struct srv_resp *r)
{
    json_t *qo = json_object();
    if (query) {
        char *qs = xstrdup(query);
        for (char *save = NULL, *kv = strtok_r(qs, "&", &save); kv;
             kv = strtok_r(NULL, "&", &save)) {
            char *eq = strchr(kv, '=');
            if (eq)
                *eq = '\0';
            json_object_set_new(qo, kv, json_string(eq ? eq + 1 : ""));
        }
        xfree(qs);
    }
    struct srv_req q = {.srv = &s->srv, .method = method, .path = path, .query = qo,
                        .accept = "", .content_type = ctype ? ctype : "",
                        .body = body ? body : "", .body_len = body ? strlen(body) : 0,
                        .client_fd = -1};
    srv__resp_init(r);
    srv__dispatch(&q, r);
    json_decref(qo);
}

/* The answer's JSON body (new ref; fails the test when it is not JSON). */
static inline json_t *sfx_json(const struct srv_resp *r)
{
    json_error_t e;
    json_t *v = r->body ? json_loadb(r->body, r->len, 0, &e) : NULL;
    if (!v)
        fail_msg("answer %d is not JSON: %s", r->code, r->body ? r->body : "(streamed)");
    return v;
}

/* Status code and, for a failure, the message; frees the answer. */
static inline int sfx_call(struct sfx *s, const char *method, const char *path,
                           const char *query, const char *ctype, const char *body, char *msg,
                           size_t msglen)
{
    struct srv_resp r;
    sfx_req(s, method, path, query, ctype, body, &r);
    int code = r.code;
    if (msg) {
        msg[0] = '\0';
        if (r.body && code >= 400) {
            json_t *st = sfx_json(&r);
            snprintf(msg, msglen, "%s", jx_or_empty(JX_STR(st, "message")));
            json_decref(st);
        }
    }
    srv__resp_release(&r);
    return code;
}

/* Store Pod default/p (uid, one container "main", status.phase phase), as
 * the log endpoint's tests need it. */
static inline void sfx_put_pod(struct sfx *s, const char *uid, const char *phase)
{
    json_t *pod = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:[{s:s, s:s}]}, s:{s:s}}",
                            "apiVersion", "v1", "kind", "Pod", "metadata", "name", "p",
                            "namespace", "default", "uid", uid, "spec", "containers", "name",
                            "main", "image", "x", "status", "phase", phase);
    assert_int_equal(store_create(s->fx->store, KIND_POD, "default", pod, NULL), 0);
    json_decref(pod);
}

/* Read a streamed answer to its end; *max_chunk gets the largest piece
 * one next() call produced. Caller frees the text. */
static inline char *sfx_drain(struct srv_resp *r, size_t *len, size_t *max_chunk)
{
    struct sbuf all;
    sbuf_init(&all, 0);
    *max_chunk = 0;
    if (!r->stream.next)
        fail_msg("the answer is not streamed");
    for (int end = 0; !end;) {
        struct sbuf piece;
        sbuf_init(&piece, 0);
        end = r->stream.next(r->stream.ctx, &piece);
        if (piece.len > *max_chunk)
            *max_chunk = piece.len;
        sbuf_add(&all, piece.buf, piece.len);
        sbuf_release(&piece);
    }
    *len = all.len;
    char *text = sbuf_take(&all);
    sbuf_release(&all);
    return text;
}

#endif
