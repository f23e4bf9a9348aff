/*
 * metrics: GET /metrics in the Prometheus text exposition format (0.0.4):
 * API request counts by verb and code, store object counts by kind, the
 * store's resourceVersion, open watches; the control plane's families
 * (Kueue's kueue_* and cueue's node, ProvisioningRequest and executor
 * metrics: ctrl_metrics_write, on the loop thread) when the server has a
 * control plane; and lines from registered sources (srv_add_metrics_source).
 */
#include <string.h>

#include "ctrl/metrics.h"
#include "server/srv-int.h"
#include "util/err.h"
#include "util/prom.h"
#include "util/xalloc.h"

static const int codes[SRV_N_CODES] = {200, 201, 400, 403, 404, 405, 409, 410,
                                       413, 415, 422, 500, 503, 504, 0, 0};
static const char *const verbs[SRV_VERB__COUNT] = {"GET",   "LIST",  "WATCH",  "CREATE",
                                                   "UPDATE", "PATCH", "DELETE", "OTHER"};

static int code_index(int code)
{
    for (int i = 0; i < SRV_N_CODES - 1 && codes[i]; i++)
        if (codes[i] == code)
            return i;
    return SRV_N_CODES - 1; /* "other" */
}

void srv__count(struct srv *s, enum srv_verb verb, int code)
{
    if ((unsigned)verb >= SRV_VERB__COUNT)
        verb = SRV_VERB_OTHER;
    pthread_mutex_lock(&s->metrics_mu);
    s->requests[verb][code_index(code)]++;
    pthread_mutex_unlock(&s->metrics_mu);
}

int srv_add_metrics_source(struct srv *s, void (*fn)(void *ctx, struct sbuf *out), void *ctx)
{
    pthread_mutex_lock(&s->metrics_mu);
    int rc = CU_ELIMIT;
    if (s->n_sources < SRV_MAX_METRIC_SOURCES) {
        s->sources[s->n_sources].fn = fn;
        s->sources[s->n_sources].ctx = ctx;
        s->n_sources++;
        rc = 0;
    }
    pthread_mutex_unlock(&s->metrics_mu);
    return rc;
}

static void request_lines(struct srv *s, struct sbuf *sb)
{
    sbuf_adds(sb, "# HELP cueue_apiserver_requests_total API requests by verb and HTTP code.\n"
                  "# TYPE cueue_apiserver_requests_total counter\n");
    pthread_mutex_lock(&s->metrics_mu);
    for (int v = 0; v < SRV_VERB__COUNT; v++)
        for (int c = 0; c < SRV_N_CODES; c++) {
            if (!s->requests[v][c])
                continue;
            char code[8];
            if (c == SRV_N_CODES - 1 || !codes[c])
                snprintf(code, sizeof(code), "other");
            else
                snprintf(code, sizeof(code), "%d", codes[c]);
            sbuf_addf(sb, "cueue_apiserver_requests_total{verb=\"%s\",code=\"%s\"} %llu\n",
                      verbs[v], code, (unsigned long long)s->requests[v][c]);
        }
    pthread_mutex_unlock(&s->metrics_mu);
}

void srv__handle_metrics(struct srv_req *q, struct srv_resp *r)
{
    struct srv *s = q->srv;
    struct sbuf sb;
    sbuf_init(&sb, 0);
    request_lines(s, &sb);
    sbuf_adds(&sb, "# HELP cueue_store_objects Objects in the store by kind.\n"
                   "# TYPE cueue_store_objects gauge\n");
    for (int k = 0; k < KIND__COUNT; k++) {
        const struct api_kind *ak = api_kind_get((enum api_kind_id)k);
        sbuf_addf(&sb, "cueue_store_objects{group=\"%s\",kind=\"%s\"} %zu\n", ak->group,
                  ak->kind, store_count(s->store, ak->id));
    }
    sbuf_addf(&sb, "# HELP cueue_store_resource_version The store's latest resourceVersion.\n"
                   "# TYPE cueue_store_resource_version gauge\n"
                   "cueue_store_resource_version %llu\n",
              (unsigned long long)store_rv(s->store));
    sbuf_addf(&sb, "# HELP cueue_apiserver_watches Open watch streams.\n"
                   "# TYPE cueue_apiserver_watches gauge\n"
                   "cueue_apiserver_watches %d\n",
              atomic_load(&s->active_watches));
    pthread_mutex_lock(&s->metrics_mu);
    int n = s->n_sources;
    struct srv_metric_source src[SRV_MAX_METRIC_SOURCES];
    memcpy(src, s->sources, sizeof(src));
    pthread_mutex_unlock(&s->metrics_mu);
    if (s->ctrl)
        ctrl_metrics_write(s->ctrl, &sb);
    for (int i = 0; i < n; i++)
        src[i].fn(src[i].ctx, &sb);
    srv__resp_text(r, 200, sb.buf, sb.len);
    xfree(r->content_type);
    r->content_type = xstrdup(PROM_CONTENT_TYPE);
    sbuf_release(&sb);
}
