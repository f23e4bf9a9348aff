/*
 * server: `cueue server`, the control plane process: the object store
 * (SQLite in a state directory), the control loop (ctrl) on its own thread,
 * and a Kubernetes-shaped HTTP API on loopback (libmicrohttpd).
 *
 * Two ways in: srv_main() is the whole process (flags, state directory,
 * lock, store, control loop, signals); srv_start()/srv_stop() serve the API
 * for a store somebody else owns (tests, an embedded dashboard, a future
 * `cueue sim --serve`).
 */
#ifndef CUEUE_SERVER_SERVER_H
#define CUEUE_SERVER_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/clock.h"

struct store;
struct ctrl;
struct exec;
struct sbuf;
struct srv;
struct api_pod_policy;
struct api_job_policy;
struct srv_tokens;

/* Entry point of `cueue server [flags]` (argv[0] is "server"). Returns the
 * process exit status (0 after a clean SIGINT/SIGTERM shutdown, 1 on a
 * startup error, 2 on a usage error). Prints `--help` text. */
int srv_main(int argc, char **argv);

/* Limits that keep the server serving (flags of `cueue server`; defaults
 * from srv_limits_defaults, documented in docs/reliability.md "Limits").
 * Counts are per client IP address and in total; a stream (watch,
 * `logs -f`) counts as a watch, not as a connection, while it lasts. */
struct srv_limits {
    unsigned max_connections;            /* open non-stream connections, all clients */
    unsigned max_connections_per_client; /* the same, per client IP */
    unsigned max_watches;                /* open streams, all clients */
    unsigned max_watches_per_client;     /* the same, per client IP */
    size_t max_body_bytes;               /* one request body */
    int64_t request_timeout_ms;          /* receiving one request body */
    unsigned idle_timeout_s;             /* a connection with no traffic is closed */
    unsigned threads;                    /* HTTP event-loop threads */
};
/* Fill l with the defaults: 4096 connections, 512 per client, 10000
 * watches, 4096 per client, 3 MiB bodies, 60 s per request body, 120 s
 * idle, 4 threads. */
void srv_limits_defaults(struct srv_limits *l);

/* The server's TLS material as PEM texts (owned). */
struct srv_tls {
    char *ca_pem;   /* the CA that signed cert_pem (goes into the kubeconfig) */
    char *cert_pem; /* the serving certificate */
    char *key_pem;  /* its private key */
};
/* Load <state_dir>/ca.crt and ca.key (making a CA at first start), then
 * make a serving certificate signed by it for listen_addr's names
 * (localhost, 127.0.0.1, ::1, the address; a wildcard address: the
 * machine's addresses and host name); every file is written 0600
 * (tls.c, OpenSSL). Returns 0, or CU_EIO / CU_EINTERNAL with a message.
 * Free with srv_tls_release. */
int srv_tls_prepare(const char *state_dir, const char *listen_addr, struct srv_tls *out,
                    char *err, size_t errlen);
void srv_tls_release(struct srv_tls *t);

struct srv_opts {
    const char *listen_addr; /* IPv4 or IPv6 literal; NULL = "127.0.0.1" */
    uint16_t port;           /* 0 = ephemeral (srv_port tells which) */
    const char *state_dir;   /* pod logs live under it (exec_log_path); may be NULL */
    struct exec *exec;       /* borrowed, may be NULL: the executor whose
                                log_path names a pod's log file (else
                                exec_log_path under state_dir) */
    struct store *store;     /* borrowed; must outlive the server */
    struct ctrl *ctrl;       /* borrowed, may be NULL: the control plane the
                                visibility API asks (ctrl_explain_workload);
                                without it that API is not served */
    struct clk *clock;       /* borrowed; NULL = clk_real() */
    bool dashboard;          /* this listener is the web dashboard's
                                (docs/dashboard.md): it serves the embedded
                                pages under /ui/, their event stream, and
                                the API read-only (GET/HEAD only) */
    const char *token;       /* dashboard only; NULL = none: when set, every
                                request must carry it (?token=, the cookie
                                set by /login?token=, or Authorization:
                                Bearer) */
    /* borrowed, must outlive the server; NULL = no privileged pods, no
     * hostPath volumes (api/object.h) */
    const struct api_pod_policy *pod_policy;
    /* borrowed, must outlive the server; which jobs Kueue manages (the
     * job webhooks' suspend on create); NULL = api_job_policy_defaults */
    const struct api_job_policy *job_policy;
    const struct srv_limits *limits; /* copied; NULL = srv_limits_defaults */
    struct srv_tokens *tokens; /* borrowed (srv_tokens_open); NULL = no
                                  authentication: every request is admin */
    const struct srv_tls *tls; /* borrowed; NULL = plain HTTP */
};

/* Bind, listen and start serving the API in background threads
 * (libmicrohttpd's epoll event loop on a small thread pool; watches and
 * `logs -f` park their connection while they have nothing to send, so
 * they never hold a thread).
 * Returns 0, or CU_EIO with a message ("cannot listen on 127.0.0.1:6443:
 * Address already in use") in err[0..errlen). Free with srv_stop. */
int srv_start(const struct srv_opts *opts, struct srv **out, char *err, size_t errlen);
/* The port actually bound (useful with port 0). */
uint16_t srv_port(const struct srv *s);
/* End every open watch and log stream, stop accepting, join the threads and
 * free the server. NULL is a no-op. The store is not touched. */
void srv_stop(struct srv *s);

/* Add a source of Prometheus text lines to GET /metrics (e.g. admission
 * metrics from the control plane). fn appends complete lines (with their
 * # HELP / # TYPE headers) to out; it is called from HTTP threads, so it must
 * be thread-safe. At most 16 sources; returns 0 or CU_ELIMIT. */
int srv_add_metrics_source(struct srv *s, void (*fn)(void *ctx, struct sbuf *out), void *ctx);

#endif
