/*
 * srv-int: declarations shared by the server module's files only
 * (routing, handlers, tables, discovery, openapi, patch, watch, logs,
 * protobuf, metrics). Public names are srv_, cross-file internals srv__.
 *
 * A request is turned into a struct srv_req (method, path, query, headers,
 * body) by http.c; handlers fill a struct srv_resp (status, content type,
 * body or a stream) without touching libmicrohttpd, so they are testable
 * with a memory store.
 */
#ifndef CUEUE_SERVER_SRV_INT_H
#define CUEUE_SERVER_SRV_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "api/kinds.h"
#include "api/types.h"
#include "server/server.h"
#include "store/store.h"
#include "util/diag.h"
#include "util/rng.h"
#include "util/sbuf.h"

/* The Kubernetes version cueue reports (/version, OpenAPI info): kubectl
 * and the gcloud dispatcher choose their behaviour from it (kubectl.md §0) */
#define SRV_K8S_MAJOR "1"
#define SRV_K8S_MINOR "32"
#define SRV_K8S_GIT_VERSION "v1.32.0"
#define SRV_MAX_WARNINGS 16
#define SRV_MAX_METRIC_SOURCES 16
#define SRV_MAX_HEADERS 6

/* Metrics: request counts by verb and status code. */
enum srv_verb {
    SRV_VERB_GET, SRV_VERB_LIST, SRV_VERB_WATCH, SRV_VERB_CREATE, SRV_VERB_UPDATE,
    SRV_VERB_PATCH, SRV_VERB_DELETE, SRV_VERB_OTHER, SRV_VERB__COUNT
};
#define SRV_N_CODES 16

struct srv_metric_source {
    void (*fn)(void *ctx, struct sbuf *out);
    void *ctx;
};

struct stream_reader; /* http.c */

struct srv {
    struct store *store;
    struct ctrl *ctrl;        /* borrowed; NULL = no control plane (no
                                 visibility API) */
    struct clk *clock;
    char *state_dir;          /* owned; may be NULL */
    const struct api_pod_policy *pod_policy; /* borrowed (srv_opts) */
    const struct api_job_policy *job_policy; /* borrowed (srv_opts) */
    struct exec *exec;        /* borrowed; NULL = logs by exec_log_path */
    char *listen_addr;        /* owned */
    uint16_t port;
    int listen_fd;
    void *mhd;                /* struct MHD_Daemon * */
    atomic_int stopping;      /* set by srv_stop: streams end */
    atomic_int active_watches;
    struct srv_limits limits;
    struct srv_conn_table *conns; /* connection accounting (limits.c) */
    struct srv_tokens *tokens;    /* borrowed; NULL = no authentication */
    bool loopback;                /* listening on a loopback address only */
    bool tls;                     /* serving HTTPS */
    pthread_mutex_t parked_mu;    /* guards the parked streams (http.c) */
    struct stream_reader *parked; /* streams whose connection is suspended */
    uint64_t pump_gen;            /* sweeps so far (under parked_mu) */
    bool pump_closed;             /* no stream parks any more (under parked_mu) */
    pthread_t pump;               /* resumes parked streams (http.c) */
    bool pump_started;
    pthread_mutex_t rng_mu;
    struct rng rng;           /* uids and generated names */
    pthread_mutex_t metrics_mu;
    uint64_t requests[SRV_VERB__COUNT][SRV_N_CODES];
    struct srv_metric_source sources[SRV_MAX_METRIC_SOURCES];
    int n_sources;
    bool dashboard;           /* the dashboard's listener (dashboard.c) */
    char *token;              /* owned; dashboard access token or NULL */
};

/* One parsed HTTP request. Everything is borrowed for the handler call. */
struct srv_req {
    struct srv *srv;
    const char *method;       /* "GET", "POST", ... */
    const char *path;         /* URL path, no query string */
    json_t *query;            /* object: parameter -> string (borrowed) */
    const char *accept;       /* "" when absent */
    const char *content_type; /* "" when absent */
    const char *body;         /* NUL-terminated; "" when none */
    size_t body_len;
    bool body_too_large;
    const char *cookie;       /* Cookie header; "" when absent */
    const char *authorization;/* Authorization header; "" when absent */
    int client_fd;            /* the connection's socket (streams poll it for
                                 a hang-up); -1 when unknown */
    const struct srv_principal *principal; /* the token's holder; NULL = no
                                 restriction (admin token, --anonymous,
                                 embedded servers) */
};

/* A streamed body (watch, logs -f). next() appends the next chunk to out,
 * blocking as long as it needs; returns 0 with data appended, or 1 at the
 * end of the stream (out may still hold a last chunk). poll() is the same
 * without blocking: it may also return SRV_STREAM_IDLE (nothing to send
 * yet), and the HTTP layer parks the connection until the store changes or
 * a second passes, then polls again; http.c uses poll() when set, so that
 * a stream never holds one of the few event-loop threads. free() releases
 * ctx. */
#define SRV_STREAM_IDLE 2
struct srv_stream {
    int (*next)(void *ctx, struct sbuf *out);
    int (*poll)(void *ctx, struct sbuf *out);
    void (*free)(void *ctx);
    void *ctx;
};

struct srv_resp {
    int code;
    char *content_type;       /* owned */
    char *body;               /* owned; NULL when streaming */
    size_t len;
    struct srv_stream stream; /* stream.next != NULL: streamed, chunked */
    char *warnings[SRV_MAX_WARNINGS]; /* owned "Warning: 299" texts (unquoted) */
    int n_warnings;
    char *headers[SRV_MAX_HEADERS][2]; /* owned extra {name, value} pairs */
    int n_headers;
    enum srv_verb verb;       /* for metrics */
};

/* A resource path after the group/version: /[namespaces/NS/]PLURAL[/NAME[/SUB]]. */
struct srv_route {
    const struct api_kind *kind;
    char *ns;   /* owned; NULL when absent */
    char *name; /* owned; NULL for a collection */
    char *sub;  /* owned; "status", "log", ...; NULL for the main resource */
};

/* ---- responses (status.c) ---- */
void srv__resp_init(struct srv_resp *r);
void srv__resp_release(struct srv_resp *r);
/* Set a JSON body (obj stolen) with Content-Type application/json. */
void srv__resp_json(struct srv_resp *r, int code, json_t *obj);
/* Same with an explicit content type (copied). */
void srv__resp_json_ct(struct srv_resp *r, int code, json_t *obj, const char *ctype);
/* A body of len bytes (copied; may hold NULs) with content type ctype. */
void srv__resp_bytes(struct srv_resp *r, int code, const void *data, size_t len,
                     const char *ctype);
/* A text/plain body (copied). */
void srv__resp_text(struct srv_resp *r, int code, const char *text, size_t len);
/* A Kubernetes Status failure: code, reason ("NotFound"), message, and
 * optional details (stolen; NULL = none). */
void srv__resp_status(struct srv_resp *r, int code, const char *reason, const char *message,
                      json_t *details);
/* Printf-style Status failure without details. */
void srv__resp_statusf(struct srv_resp *r, int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A Status for a store/api error code about one object of kind k:
 * NotFound, AlreadyExists, Conflict messages as Kubernetes words them. */
void srv__resp_err(struct srv_resp *r, int rc, const struct api_kind *k, const char *name);
/* 500 InternalError for a write that could not be saved (why: the store's
 * cause, from store_txn_begin/commit), shaped like the API server's
 * NewInternalError: message "Internal error occurred: ...", the cause in
 * details.causes. The change was undone: nothing of it remains. */
void srv__resp_unsaved(struct srv_resp *r, const struct api_kind *k, const char *name,
                       const char *why);
/* 422/400 for a rejected object: api_error_message + details.causes. */
void srv__resp_invalid(struct srv_resp *r, int rc, const struct api_kind *k, const char *name,
                       const struct diag *d);
/* Add a Warning header text (copied). */
void srv__resp_warn(struct srv_resp *r, const char *text);
/* Add a response header name: value (both copied; at most
 * SRV_MAX_HEADERS, more are dropped). */
void srv__resp_header(struct srv_resp *r, const char *name, const char *value);
/* The details object {name, group, kind} for k (plural as kind). New ref. */
json_t *srv__details(const struct api_kind *k, const char *name);

/* ---- request helpers (route.c) ---- */
/* Query parameter or NULL. */
const char *srv__q(const struct srv_req *q, const char *name);
/* Query parameter as a boolean ("true"/"1"). */
bool srv__qbool(const struct srv_req *q, const char *name);
/* Integer query parameter name into *out: 0 when set and valid, 1 when
 * absent (*out untouched), -1 when not an integer or below min (r then
 * holds a 400 BadRequest naming the parameter). */
int srv__qint(const struct srv_req *q, struct srv_resp *r, const char *name, long long min,
              long long *out);
/* Kubernetes' rule for a namespace or name taken from the URL
 * (apimachinery IsValidPathSegmentName): what ("Name", "Namespace") may not
 * be empty ("Name parameter required."), "." or "..", nor contain "/" or
 * "%" ("Name parameter invalid: \".\": may not be '.'"). NULL passes.
 * Returns 0, or CU_EBADREQ after answering r with 400 BadRequest. */
int srv__check_segment(struct srv_resp *r, const char *what, const char *value);
/* Whether kind k takes DELETE on its collection (deletecollection): every
 * kind but Namespace, as in Kubernetes. */
bool srv__has_deletecollection(const struct api_kind *k);
/* Dispatch one request to its handler. */
void srv__dispatch(struct srv_req *q, struct srv_resp *r);
/* Parse "/[namespaces/NS/]PLURAL[/NAME[/SUB]]" (segments after the
 * group/version) for group. Returns 0, or CU_ENOTFOUND when no kind
 * matches. */
int srv__route_parse(const char *group, char **segs, int nsegs, struct srv_route *out);
void srv__route_release(struct srv_route *rt);
/* Does Accept ask for a meta.k8s.io Table? */
bool srv__wants_table(const char *accept);
/* Ensure apiVersion and kind on obj for kind k; returns a new reference
 * (obj itself when both are already set, else a copy). */
json_t *srv__with_type(const struct api_kind *k, json_t *obj);
/* Random UUID (thread-safe). */
void srv__uuid(struct srv *s, char out[37]);
/* Random name suffix of n characters (thread-safe). */
void srv__suffix(struct srv *s, char *out, int n);

/* ---- handlers ---- */
void srv__handle_object(struct srv_req *q, struct srv_resp *r, struct srv_route *rt);
void srv__handle_get(struct srv_req *q, struct srv_resp *r, struct srv_route *rt);
void srv__handle_list(struct srv_req *q, struct srv_resp *r, struct srv_route *rt);
void srv__handle_create(struct srv_req *q, struct srv_resp *r, struct srv_route *rt);
void srv__handle_update(struct srv_req *q, struct srv_resp *r, struct srv_route *rt);
void srv__handle_patch(struct srv_req *q, struct srv_resp *r, struct srv_route *rt);
void srv__handle_delete(struct srv_req *q, struct srv_resp *r, struct srv_route *rt);
void srv__handle_delete_collection(struct srv_req *q, struct srv_resp *r,
                                   struct srv_route *rt);
void srv__handle_watch(struct srv_req *q, struct srv_resp *r, struct srv_route *rt);
void srv__handle_log(struct srv_req *q, struct srv_resp *r, struct srv_route *rt);
void srv__handle_version(struct srv_req *q, struct srv_resp *r);
void srv__handle_discovery(struct srv_req *q, struct srv_resp *r, char **segs, int nsegs);
void srv__handle_openapi(struct srv_req *q, struct srv_resp *r, char **segs, int nsegs);
/* "/apis/G/V/[namespaces/{namespace}/]PLURAL" (owned): a kind's collection
 * path as OpenAPI documents write it. */
char *srv__openapi_base_path(const struct api_kind *k);
/* GET /openapi/v2 (openapi_v2.c): protobuf or JSON by Accept. */
void srv__openapi_v2(const struct srv_req *q, struct srv_resp *r);
void srv__handle_metrics(struct srv_req *q, struct srv_resp *r);

/* ---- Kueue's visibility API, with cueue's pending explanation (visibility.c) ---- */
#define SRV_VISIBILITY_GROUP "visibility.kueue.x-k8s.io"
/* True when group is the visibility group (its paths go to
 * srv__handle_visibility, not to the kind registry). */
bool srv__visibility_path(const char *group);
/* GET /apis/visibility.kueue.x-k8s.io/VERSION/ + segs:
 * clusterqueues/CQ/pendingworkloads, namespaces/NS/localqueues/LQ/pendingworkloads,
 * namespaces/NS/workloads/NAME/pendingworkload. nsegs may count a trailing
 * empty segment. 404 when the server has no control plane. */
void srv__handle_visibility(struct srv_req *q, struct srv_resp *r, const char *version,
                            char **segs, int nsegs);
/* Discovery of the visibility group (NULL / false when the server has no
 * control plane): its aggregated-discovery entry (new ref), its APIGroup
 * entry (typed: with kind/apiVersion), and /apis/G/V's APIResourceList. */
json_t *srv__visibility_agg_group(const struct srv *s);
json_t *srv__visibility_group_entry(const struct srv *s, bool typed);
bool srv__visibility_resource_list(const struct srv *s, const char *version,
                                   struct srv_resp *r);

/* ---- writes (write.c) ---- */
enum srv_field_validation { SRV_FV_STRICT, SRV_FV_WARN, SRV_FV_IGNORE };
enum srv_field_validation srv__field_validation(const struct srv_req *q);
/* Decode the request body into one JSON object (new ref) for kind k:
 * JSON, YAML or the Kubernetes protobuf envelope (by Content-Type). Fills
 * apiVersion/kind from the URL when absent. On failure answers r and
 * returns NULL. */
json_t *srv__decode_body(struct srv_req *q, struct srv_resp *r, const struct api_kind *k);
/* Admission with fieldValidation handling: Ignore/Warn drop unknown fields
 * (Warn adds a Warning header per field). status: a /status write
 * (api_admit_status), else api_admit_in with store lookups for Kueue's
 * defaulting. Returns admission's code. */
int srv__admit(struct srv_req *q, struct srv_resp *r, const struct api_kind *k, json_t *obj,
               const json_t *old, const char *ns, bool status, struct diag *d);
/* Remove the value at a diag field path ("spec.a[2].b") from obj.
 * Returns true when something was removed. */
bool srv__remove_path(json_t *obj, const char *path);
/* Create obj (admitted here) in kind k / namespace ns and answer 201, or
 * answer the error. Used by POST and by apply-patch on a missing object. */
void srv__create_object(struct srv_req *q, struct srv_resp *r, const struct api_kind *k,
                        const char *ns, json_t *obj);
/* Admit obj as an update of old and store it (mode MAIN or STATUS);
 * answers r (200 + object, or the error). Returns the store's code. */
int srv__update_object(struct srv_req *q, struct srv_resp *r, const struct api_kind *k,
                       const char *ns, json_t *obj, const json_t *old, bool status);
/* True when ?dryRun=All. */
bool srv__dry_run(const struct srv_req *q);

/* ---- selectors (fieldsel.c; pure) ---- */
enum srv_fs_op { SRV_FS_EQ, SRV_FS_NE };
struct srv_fs_term {
    char *path;  /* "metadata.name", "involvedObject.kind", "spec.nodeName" */
    enum srv_fs_op op;
    char *value;
};
struct srv_fieldsel {
    struct srv_fs_term *terms;
    size_t n;
};
/* Parse "a=b,c==d,e!=f" (any order, values may be empty). Returns 0 or
 * CU_EBADREQ with a message in err. */
int srv_fieldsel_parse(const char *text, struct srv_fieldsel *out, char *err, size_t errlen);
void srv_fieldsel_release(struct srv_fieldsel *fs);
/* True when obj satisfies every term. A missing field reads as "";
 * numbers and booleans compare by their JSON text. */
bool srv_fieldsel_matches(const struct srv_fieldsel *fs, const json_t *obj);

/* A resourceVersion query parameter (a watch's start): a decimal number
 * that fits 64 bits, digits only (no sign, space or prefix), into *out.
 * 0, or -1 when it is not one (*out untouched). Pure. */
int srv_rv_parse(const char *rvs, uint64_t *out);

/* A list filter: label and field selectors from the query string. */
struct srv_filter {
    bool has_labels;
    struct api_label_selector labels;
    struct srv_fieldsel fields;
};
/* Build from ?labelSelector= and ?fieldSelector= for kind k (NULL: no
 * check of field paths); on error (a selector that does not parse, a field
 * k's schema lacks: "field label not supported: P") answers r (400) and
 * returns CU_EBADREQ. */
int srv__filter_init(struct srv_filter *f, const struct srv_req *q, struct srv_resp *r,
                     const struct api_kind *k);
/* Whether the dotted path names a field of kind k's schema (pass-through
 * subtrees accept any path below them). Pure. */
bool srv_fieldsel_path_known(const struct api_kind *k, const char *path);
void srv__filter_release(struct srv_filter *f);
bool srv__filter_matches(const struct srv_filter *f, const json_t *obj);

/* ---- tables (table.c; pure given now_ms) ---- */
/* The columnDefinitions array for kind k. New ref. */
json_t *srv_table_columns(const struct api_kind *k);
/* One row {"cells":[...],"object":...} for obj. include: "Metadata"
 * (PartialObjectMetadata, default), "Object" or "None". New ref. */
json_t *srv_table_row(const struct api_kind *k, const json_t *obj, int64_t now_ms,
                      const char *include);
/* A whole Table for objs (array) with metadata.resourceVersion rv. */
json_t *srv_table_new(const struct api_kind *k, const json_t *objs, uint64_t rv,
                      int64_t now_ms, const char *include, bool with_columns);

/* ---- protobuf bodies (proto.c) ---- */
/* Decode a `k8s\0`-enveloped v1 ConfigMap or Namespace, or batch/v1 Job
 * (what `kubectl create job` sends), into JSON (new ref), or NULL with a
 * message in err (also when an undeclared field holds a value). */
json_t *srv_proto_decode(const void *data, size_t len, char *err, size_t errlen);

/* ---- the web dashboard (dashboard.c, dashboard_sse.c) ---- */
/* On the dashboard's listener, before the API's dispatch: answers the
 * pages (/, /ui/...), /login, /ui/events, refuses writes (405) and
 * requests without the token (401). Returns true when it answered r,
 * false to let srv__dispatch serve a read of the API. */
bool srv__dashboard_route(struct srv_req *q, struct srv_resp *r);
/* GET /ui/events: the dashboard's server-sent event stream (dashboard_sse.c). */
void srv__dashboard_events(struct srv_req *q, struct srv_resp *r);
/* One file of web/, embedded at build time (generated dashboard_assets.c). */
struct srv_asset {
    const char *path;         /* "index.html", "vendor/uPlot.iife.min.js" */
    const char *content_type;
    const unsigned char *data;
    size_t len;
};
extern const struct srv_asset srv__assets[];
extern const size_t srv__n_assets;
/* ---- connection limits (limits.c) ---- */
struct srv_conn_table;
/* A table counting connections and streams per client for lim (copied).
 * Thread-safe. Free with srv_conn_table_free. */
struct srv_conn_table *srv_conn_table_new(const struct srv_limits *lim);
void srv_conn_table_free(struct srv_conn_table *t);
/* A connection from client (an IP address text) opened / closed; closed
 * says whether it was counted as a stream at the time. */
void srv_conn_opened(struct srv_conn_table *t, const char *client);
void srv_conn_closed(struct srv_conn_table *t, const char *client, bool streaming);
/* May a request on an open connection from client go on? NULL, or the
 * flag of the limit it is over ("--max-connections-per-client"). */
const char *srv_conn_check(struct srv_conn_table *t, const char *client);
/* Take a stream slot for client's connection (it stops counting as a
 * connection): NULL, or the flag of the limit that is full (nothing is
 * taken then). srv_watch_end gives it back (the connection counts again). */
const char *srv_watch_begin(struct srv_conn_table *t, const char *client);
void srv_watch_end(struct srv_conn_table *t, const char *client);
/* The connections and streams open for client (NULL: in total). */
void srv_conn_counts(struct srv_conn_table *t, const char *client, unsigned *conns,
                     unsigned *watches);

/* ---- bearer tokens (auth.c) and their use (authz.c) ---- */
#define SRV_TOKEN_TEXT 65 /* 64 hex digits and the NUL */
/* Who made a request: a token's name and scope. */
struct srv_principal {
    char *name;         /* owned */
    bool admin;         /* every namespace, cluster-scoped writes */
    char **namespaces;  /* owned; the namespaces of a scoped token */
    size_t n_namespaces;
};
struct srv_tokens;
/* Open <state_dir>/tokens, writing one admin token ("admin", scope "*")
 * when the file does not exist (first start). Returns 0, or CU_EIO with a
 * message. Thread-safe; free with srv_tokens_free. */
int srv_tokens_open(const char *state_dir, struct srv_tokens **out, char *err, size_t errlen);
void srv_tokens_free(struct srv_tokens *t);
/* The first admin token (owned by the caller), or NULL. */
char *srv_tokens_admin(struct srv_tokens *t);
/* The principal of an Authorization header value ("Bearer TOKEN"), or
 * NULL when it names no known token (the file is re-read when it changed).
 * Free with srv_principal_free. */
struct srv_principal *srv_tokens_check(struct srv_tokens *t, const char *authorization);
void srv_principal_free(struct srv_principal *p);
/* Append a new token for name with scope ("*" or "ns1,ns2") to
 * <state_dir>/tokens (created 0600) and return its text in out. Returns 0
 * or CU_EINVAL (bad name or scope, with the rule) or CU_EIO. */
int srv_tokens_create(const char *state_dir, const char *name, const char *scope,
                      char out[SRV_TOKEN_TEXT], char *err, size_t errlen);
/* Parse a scope ("*", "a,b") into p's admin/namespaces (p zeroed by the
 * caller). Returns 0 or CU_EINVAL naming the bad namespace. */
int srv_tokens_parse_scope(const char *scope, struct srv_principal *p, char *err,
                           size_t errlen);
/* True when p may act in namespace ns (NULL p or admin: always). */
bool srv_principal_has_namespace(const struct srv_principal *p, const char *ns);

/* Checks of authz.c (pure). Paths served without a token: /healthz,
 * /livez, /readyz, /version. */
bool srv__public_path(const char *path);
/* False for a POST, PUT or PATCH whose Content-Type is not JSON, YAML or
 * protobuf (any of the media types the API decodes; absent = false). */
bool srv__write_media_type_ok(const char *method, const char *content_type);
/* True for "localhost", 127.0.0.0/8 and ::1. */
bool srv__is_loopback(const char *addr);
/* The Host header check against DNS rebinding: with loopback_only, host
 * (an optional ":port" after it) must be a loopback name or address; a
 * missing Host passes. */
bool srv__host_allowed(bool loopback_only, const char *host);
/* An Origin header (NULL/"" passes) must be this server's own origin:
 * http(s)://HOST as the request's Host header says. */
bool srv__origin_allowed(const char *origin, const char *host, bool tls);
/* Authorization of a resource request for q->principal (NULL = anyone
 * authenticated as admin, or --anonymous). False after answering r with a
 * 403 Forbidden Status. */
bool srv__authorize(const struct srv_req *q, struct srv_resp *r, const struct srv_route *rt);
/* The same for the other paths (segs of the path): the visibility API
 * outside the token's namespaces and /metrics are admin-only. */
bool srv__authorize_path(const struct srv_req *q, struct srv_resp *r, char **segs, int n);

/* ---- misc ---- */
/* True when the peer of a streamed response hung up (POLLRDHUP/POLLHUP on
 * fd); false for fd < 0. Never blocks. */
bool srv__client_gone(int fd);
/* Count a finished request for /metrics. */
void srv__count(struct srv *s, enum srv_verb verb, int code);
/* Offset in fd's first size bytes where its last n lines start, found by
 * reading backwards in fixed-size chunks (memory does not grow with the
 * file): 0 when n < 0 or the file has no more than n lines, size when
 * n == 0. A final newline ends the last line (kubectl logs --tail). */
off_t srv__log_tail_offset(int fd, off_t size, long long n);
/* The log file of a pod container: the executor's (exec_ops.log_path),
 * else exec_log_path under the state directory. Caller frees; NULL = none. */
char *srv__log_path(struct srv *s, const char *pod_uid, const char *container);

#endif
