/*
 * server_main: the `cueue server` process. Order of life:
 *   flags -> state directory (mkdir, lock) -> store (SQLite <state>/cueue.db)
 *   -> first-start objects (Namespace default, NodePool default-pool)
 *   -> control loop thread (ctrl_run) -> HTTP API (srv_start)
 *   -> server.url + kubeconfig -> wait for SIGINT/SIGTERM
 *   -> stop HTTP (streams end) -> stop the loop -> flush, close -> exit 0.
 * Signals are blocked in every thread and taken with sigwait() here, so no
 * handler runs in the middle of a library call.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/meta.h"
#include "api/object.h"
#include "ctrl/ctrl.h"
#include "api/schema.h"
#include "exec/exec.h"
#include "provider/catalog.h"
#include "server/srv-int.h"
#include "server/statefiles.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/log.h"
#include "util/xalloc.h"

struct srv_flags {
    char *state_dir;
    const char *listen;
    long port;
    int64_t scale_down_ms;
    int64_t provisioning_max_wait_ms;
    bool flavor_fallback;
    int64_t fallback_node_wait_ms, fallback_provreq_timeout_ms, fallback_backoff_ms;
    bool no_default_pool;
    bool stop_pods_on_exit;
    bool anonymous;
    bool tls;
    struct srv_limits limits;
};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cueue server [flags]\n"
            "\n"
            "Run the cueue control plane: the object store, the control loop (queues,\n"
            "admission, node pools, pods as local processes) and a Kubernetes-shaped\n"
            "HTTP API that kubectl and the cueue CLI talk to.\n"
            "\n"
            "Flags:\n"
            "  --state-dir DIR     state directory (database, pod logs, kubeconfig);\n"
            "                      default $CUEUE_STATE_DIR, else $XDG_STATE_HOME/cueue,\n"
            "                      else ~/.local/state/cueue\n"
            "  --listen ADDR       address to listen on (default 127.0.0.1)\n"
            "  --port N            port (default 6443; 0 = pick a free one and print it)\n"
            "  --scale-down-unneeded-time DUR\n"
            "                      idle time before a node is removed (default 10m)\n"
            "  --provisioning-max-wait DUR\n"
            "                      how long a queued ProvisioningRequest may wait for\n"
            "                      capacity (default 7d)\n"
            "  --flavor-fallback   beyond Kueue: when capacity does not come, evict the\n"
            "                      Workload and try the next flavor of its ClusterQueue,\n"
            "                      avoiding the failed one for a while (default off)\n"
            "  --fallback-node-wait DUR\n"
            "                      with --flavor-fallback: admitted pods still without a\n"
            "                      node this long after admission (default 15m)\n"
            "  --fallback-provisioning-timeout DUR\n"
            "                      with --flavor-fallback: a ProvisioningRequest not\n"
            "                      provisioned this long after its creation (default 0:\n"
            "                      wait as long as --provisioning-max-wait)\n"
            "  --fallback-flavor-backoff DUR\n"
            "                      how long the failed flavor is avoided (default 10m)\n"
            "  --no-default-pool   on first start, do not create NodePool default-pool\n"
            "  --stop-pods-on-exit kill every pod when the server stops (default: pods\n"
            "                      keep running and a restarted server re-attaches)\n"
            "  --max-connections N open connections in all (default 4096); a request\n"
            "                      over a limit is answered 429 with Retry-After\n"
            "  --max-connections-per-client N\n"
            "                      open connections per client IP (default 512)\n"
            "  --max-watches N     open watches and `logs -f` streams in all (default\n"
            "                      10000); they do not count as connections\n"
            "  --max-watches-per-client N\n"
            "                      the same per client IP (default 4096)\n"
            "  --max-request-body BYTES\n"
            "                      largest request body (default 3145728: 3 MiB)\n"
            "  --request-timeout DUR\n"
            "                      longest time to receive a request body (default 60s;\n"
            "                      0 = no limit)\n"
            "  --idle-timeout DUR  close a connection idle this long (default 120s,\n"
            "                      0 = never; streams are exempt)\n"
            "  --http-threads N    HTTP event-loop threads (default 4)\n"
            "  --anonymous         serve without authentication and over plain HTTP\n"
            "                      (only with a loopback --listen address); by default\n"
            "                      every request but /healthz, /livez, /readyz and\n"
            "                      /version needs a bearer token of <state-dir>/tokens,\n"
            "                      over HTTPS (certificates made in the state directory)\n"
            "  --tls               serve HTTPS even with --anonymous\n"
            "  --log-level LEVEL   error, warn, info (default) or debug\n"
            "  -h, --help          show this help\n"
            "\n"
            "cueue server token create [--namespace NS[,NS...]] [--name NAME]\n"
            "                    [--state-dir DIR]\n"
            "                      add a bearer token to <state-dir>/tokens and print it:\n"
            "                      an admin token, or with --namespace one limited to\n"
            "                      those namespaces (a running server picks it up)\n"
            "\n"
            "Durations: a number with a unit: ms, s, m, h, d (\"90s\", \"1h30m\", \"7d\").\n"
            "On startup the server writes <state-dir>/server.url and a kubeconfig at\n"
            "<state-dir>/kubeconfig with the admin token (first start: generated into\n"
            "<state-dir>/tokens) (export KUBECONFIG=<state-dir>/kubeconfig).\n"
            "SIGINT or SIGTERM stops it cleanly.\n");
}

/* "--name=value" or "--name value". Returns the value or NULL (not this
 * flag); *bad is set when the flag is there without a value. */
static const char *flag_value(const char *name, int argc, char **argv, int *i, bool *bad)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n))
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *bad = true;
        return NULL;
    }
    return argv[++*i];
}

static int parse_duration_flag(const char *flag, const char *v, int64_t *out)
{
    if (srv_parse_duration_ms(v, out)) {
        fprintf(stderr, "cueue server: invalid %s \"%s\": want a duration such as 10m, 30s, 7d\n",
                flag, v);
        return 2;
    }
    return 0;
}

/* A count flag: an integer in [min, max]. */
static int parse_count_flag(const char *flag, const char *v, unsigned long long min,
                            unsigned long long max, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (!*v || *end || errno || *v == '-' || n < min || n > max) {
        fprintf(stderr, "cueue server: invalid %s \"%s\": want an integer in %llu..%llu\n", flag,
                v, min, max);
        return 2;
    }
    *out = n;
    return 0;
}

/* The limit flags (struct srv_limits). Returns 2 on a bad value, 0 when
 * parsed, -1 when argv[*i] is not one of them. */
static int parse_limit_flag(struct srv_limits *l, int argc, char **argv, int *i, bool *bad)
{
    static const struct {
        const char *flag;
        size_t off;
    } counts[] = {
        {"--max-connections", offsetof(struct srv_limits, max_connections)},
        {"--max-connections-per-client", offsetof(struct srv_limits, max_connections_per_client)},
        {"--max-watches", offsetof(struct srv_limits, max_watches)},
        {"--max-watches-per-client", offsetof(struct srv_limits, max_watches_per_client)},
        {"--http-threads", offsetof(struct srv_limits, threads)},
    };
    const char *v;
    unsigned long long n;
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        if (!(v = flag_value(counts[k].flag, argc, argv, i, bad)))
            continue;
        unsigned long long max = !strcmp(counts[k].flag, "--http-threads") ? 256 : 1000000;
        if (parse_count_flag(counts[k].flag, v, 1, max, &n))
            return 2;
        *(unsigned *)((char *)l + counts[k].off) = (unsigned)n;
        return 0;
    }
    if ((v = flag_value("--max-request-body", argc, argv, i, bad))) {
        if (parse_count_flag("--max-request-body", v, 1024, (unsigned long long)1 << 30, &n))
            return 2;
        l->max_body_bytes = (size_t)n;
        return 0;
    }
    int64_t ms;
    if ((v = flag_value("--request-timeout", argc, argv, i, bad))) {
        if (parse_duration_flag("--request-timeout", v, &ms))
            return 2;
        l->request_timeout_ms = ms;
        return 0;
    }
    if ((v = flag_value("--idle-timeout", argc, argv, i, bad))) {
        if (parse_duration_flag("--idle-timeout", v, &ms))
            return 2;
        l->idle_timeout_s = (unsigned)((ms + 999) / 1000);
        return 0;
    }
    return -1;
}

static int parse_log_level(const char *v)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    for (int l = 0; l < 4; l++)
        if (!strcmp(v, names[l])) {
            log_set_level((enum log_level)l);
            return 0;
        }
    fprintf(stderr, "cueue server: invalid --log-level \"%s\": want error, warn, info or debug\n",
            v);
    return 2;
}

static int parse_flag(struct srv_flags *f, int argc, char **argv, int *i)
{
    bool bad = false;
    const char *v;
    int rc = 0;
    if ((v = flag_value("--state-dir", argc, argv, i, &bad))) {
        xfree(f->state_dir);
        f->state_dir = xstrdup(v);
        if (!*v) {
            fprintf(stderr, "cueue server: invalid --state-dir \"\": want a directory path\n");
            rc = 2;
        }
    } else if ((v = flag_value("--listen", argc, argv, i, &bad))) {
        f->listen = v;
    } else if ((v = flag_value("--port", argc, argv, i, &bad))) {
        char *end;
        f->port = strtol(v, &end, 10);
        if (*end || !*v || f->port < 0 || f->port > 65535) {
            fprintf(stderr, "cueue server: invalid --port \"%s\": want 0..65535\n", v);
            rc = 2;
        }
    } else if ((v = flag_value("--scale-down-unneeded-time", argc, argv, i, &bad))) {
        rc = parse_duration_flag("--scale-down-unneeded-time", v, &f->scale_down_ms);
    } else if ((v = flag_value("--provisioning-max-wait", argc, argv, i, &bad))) {
        rc = parse_duration_flag("--provisioning-max-wait", v, &f->provisioning_max_wait_ms);
    } else if ((v = flag_value("--fallback-node-wait", argc, argv, i, &bad))) {
        rc = parse_duration_flag("--fallback-node-wait", v, &f->fallback_node_wait_ms);
    } else if ((v = flag_value("--fallback-provisioning-timeout", argc, argv, i, &bad))) {
        rc = parse_duration_flag("--fallback-provisioning-timeout", v,
                                 &f->fallback_provreq_timeout_ms);
    } else if ((v = flag_value("--fallback-flavor-backoff", argc, argv, i, &bad))) {
        rc = parse_duration_flag("--fallback-flavor-backoff", v, &f->fallback_backoff_ms);
    } else if (!strcmp(argv[*i], "--flavor-fallback")) {
        f->flavor_fallback = true;
    } else if ((v = flag_value("--log-level", argc, argv, i, &bad))) {
        rc = parse_log_level(v);
    } else if (!strcmp(argv[*i], "--no-default-pool")) {
        f->no_default_pool = true;
    } else if (!strcmp(argv[*i], "--stop-pods-on-exit")) {
        f->stop_pods_on_exit = true;
    } else if (!strcmp(argv[*i], "--anonymous")) {
        f->anonymous = true;
    } else if (!strcmp(argv[*i], "--tls")) {
        f->tls = true;
    } else if (!bad && (rc = parse_limit_flag(&f->limits, argc, argv, i, &bad)) >= 0) {
        /* parsed (or rc = 2) */
    } else if (!bad) {
        fprintf(stderr, "cueue server: unknown flag \"%s\" (see cueue server --help)\n", argv[*i]);
        rc = 2;
    }
    if (bad) {
        fprintf(stderr, "cueue server: flag %s needs a value\n", argv[*i]);
        rc = 2;
    }
    return rc;
}

/* Returns -1 to continue, or an exit status. */
static int parse_flags(struct srv_flags *f, int argc, char **argv)
{
    memset(f, 0, sizeof(*f));
    f->listen = "127.0.0.1";
    f->port = 6443;
    f->scale_down_ms = -1;
    f->provisioning_max_wait_ms = -1;
    f->fallback_node_wait_ms = f->fallback_provreq_timeout_ms = f->fallback_backoff_ms = -1;
    srv_limits_defaults(&f->limits);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        }
        int rc = parse_flag(f, argc, argv, &i);
        if (rc)
            return rc;
    }
    if (!f->state_dir)
        f->state_dir = srv_default_state_dir();
    if (!f->anonymous)
        f->tls = true; /* kubectl sends a token only over TLS */
    if (f->anonymous && !srv__is_loopback(f->listen)) {
        fprintf(stderr,
                "cueue server: --anonymous is allowed only with a loopback --listen address "
                "(127.0.0.1, ::1, localhost), not \"%s\"\n",
                f->listen);
        return 2;
    }
    return -1;
}

/* Create an object through admission, as if POSTed (first-start objects). */
static void seed_object(struct store *st, struct rng *rng, const char *json)
{
    json_error_t je;
    json_t *obj = json_loads(json, 0, &je);
    const struct api_kind *k = api_kind_by_gvk(JX_STR(obj, "apiVersion"), JX_STR(obj, "kind"));
    char uid[37];
    rng_uuid(rng, uid);
    JX_SET_NEW(obj, json_string(uid), "metadata", "uid");
    struct diag d;
    diag_init(&d);
    int rc = api_admit(k, obj, NULL, k->namespaced ? "default" : NULL, &d);
    if (!rc)
        rc = store_create(st, k->id, k->namespaced ? "default" : NULL, obj, NULL);
    if (rc && rc != CU_EEXIST) {
        char *msg = api_error_message(k, api_name(obj), rc, &d);
        log_error("server", "cannot create %s: %s", json, msg);
        xfree(msg);
    }
    diag_release(&d);
    json_decref(obj);
}

static void seed_first_start(struct store *st, struct rng *rng, bool pool)
{
    size_t total = 0;
    for (int k = 0; k < KIND__COUNT; k++)
        total += store_count(st, (enum api_kind_id)k);
    json_t *def = store_get(st, KIND_NAMESPACE, NULL, "default");
    if (!def)
        seed_object(st, rng,
                    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":"
                    "\"default\",\"labels\":{\"kubernetes.io/metadata.name\":\"default\"}}}");
    json_decref(def);
    if (!total && pool)
        seed_object(st, rng,
                    "{\"apiVersion\":\"cueue.dev/v1alpha1\",\"kind\":\"NodePool\",\"metadata\":"
                    "{\"name\":\"default-pool\"},\"spec\":{\"config\":{\"machineType\":"
                    "\"n2-standard-16\"},\"initialNodeCount\":3,\"autoscaling\":"
                    "{\"enabled\":false}}}");
    json_t *ns = store_get(st, KIND_NAMESPACE, NULL, "default");
    if (ns && !JX_STR(ns, "status", "phase")) {
        json_t *c = json_deep_copy(ns);
        JX_SET_NEW(c, json_string("Active"), "status", "phase");
        store_update(st, KIND_NAMESPACE, NULL, c, STORE_UPDATE_STATUS, NULL);
        json_decref(c);
    }
    json_decref(ns);
    store_flush(st);
}

struct loop {
    struct ctrl *ctrl;
    atomic_int stop; /* set by the main thread at shutdown */
};

static void *loop_main(void *arg)
{
    struct loop *l = arg;
    ctrl_run(l->ctrl, &l->stop);
    return NULL;
}

static int write_client_files(const char *dir, const char *url, const char *token,
                              const char *ca_pem, char *err, size_t errlen)
{
    char *path = xasprintf("%s/server.url", dir);
    char *text = xasprintf("%s\n", url);
    int rc = srv__write_file(path, text, 0600, err, errlen);
    xfree(path);
    xfree(text);
    if (rc)
        return rc;
    path = xasprintf("%s/kubeconfig", dir);
    text = srv__kubeconfig_text(url, token, ca_pem);
    rc = srv__write_file(path, text, 0600, err, errlen);
    xfree(path);
    xfree(text);
    return rc;
}

struct running {
    struct store *store;
    struct exec *exec;
    struct ctrl *ctrl;
    struct loop loop;
    pthread_t loop_thread;
    bool loop_started;
    struct srv *srv;
    struct srv_tokens *tokens; /* NULL with --anonymous */
    struct srv_tls tls;        /* empty without TLS */
    struct rng rng;
};

static int open_all(const struct srv_flags *f, struct running *rn, char *err, size_t errlen)
{
    char *db = xasprintf("%s/cueue.db", f->state_dir);
    /* CUEUE_STORE_HISTORY: events kept for watch resume (tests shrink it to
     * exercise 410 Expired); 0 or unset = the store's default */
    const char *hist = getenv("CUEUE_STORE_HISTORY");
    struct store_opts so = {.db_path = db, .clock = clk_real(), .rng = NULL,
                            .history = hist ? (size_t)strtoull(hist, NULL, 10) : 0};
    int rc = store_open(&so, &rn->store, err, errlen);
    xfree(db);
    if (rc)
        return rc;
    rng_seed_os(&rn->rng);
    /* admission of the first-start NodePool already checks machine types
     * (ctrl_new registers the same catalog again) */
    api_set_machine_catalog(prov_api_catalog());
    seed_first_start(rn->store, &rn->rng, !f->no_default_pool);
    struct ctrl_opts co = {.store = rn->store, .clock = clk_real(), .rng = &rn->rng};
    ctrl_config_defaults(&co.config);
    co.config.state_dir = f->state_dir;
    if (f->scale_down_ms >= 0)
        co.config.scale_down_unneeded_ms = f->scale_down_ms;
    if (f->provisioning_max_wait_ms >= 0)
        co.config.provisioning_max_wait_ms = f->provisioning_max_wait_ms;
    co.config.flavor_fallback = f->flavor_fallback;
    if (f->fallback_node_wait_ms >= 0)
        co.config.fallback_node_wait_ms = f->fallback_node_wait_ms;
    if (f->fallback_provreq_timeout_ms >= 0)
        co.config.fallback_provreq_timeout_ms = f->fallback_provreq_timeout_ms;
    if (f->fallback_backoff_ms >= 0)
        co.config.fallback_flavor_backoff_ms = f->fallback_backoff_ms;
    rn->exec = exec_local_new(f->state_dir);
    if (rn->exec)
        exec_local_set_stop_on_free(rn->exec, f->stop_pods_on_exit);
    co.exec = rn->exec;
    if (ctrl_new(&co, &rn->ctrl)) {
        snprintf(err, errlen, "cannot create the control plane");
        return CU_EINTERNAL;
    }
    rn->loop.ctrl = rn->ctrl;
    ctrl_set_threaded(rn->ctrl); /* HTTP threads' ctrl_call wait for the loop */
    if (pthread_create(&rn->loop_thread, NULL, loop_main, &rn->loop)) {
        snprintf(err, errlen, "cannot start the control loop thread");
        return CU_EINTERNAL;
    }
    rn->loop_started = true;
    if (!f->anonymous && (rc = srv_tokens_open(f->state_dir, &rn->tokens, err, errlen)))
        return rc;
    if (f->tls && (rc = srv_tls_prepare(f->state_dir, f->listen, &rn->tls, err, errlen)))
        return rc;
    struct srv_opts o = {.listen_addr = f->listen, .port = (uint16_t)f->port,
                         .state_dir = f->state_dir, .store = rn->store, .ctrl = rn->ctrl,
                         .clock = clk_real(), .limits = &f->limits, .tokens = rn->tokens,
                         .tls = f->tls ? &rn->tls : NULL};
    return srv_start(&o, &rn->srv, err, errlen);
}

static void close_all(struct running *rn, const char *state_dir, bool wrote_url)
{
    srv_stop(rn->srv);
    srv_tokens_free(rn->tokens);
    srv_tls_release(&rn->tls);
    if (rn->loop_started) {
        atomic_store(&rn->loop.stop, 1);
        store_wakeup(rn->store);
        pthread_join(rn->loop_thread, NULL);
    }
    if (rn->ctrl)
        ctrl_free(rn->ctrl);
    if (rn->exec)
        rn->exec->ops->free(rn->exec);
    if (rn->store && store_flush(rn->store))
        log_error("server", "final store flush failed");
    store_close(rn->store);
    if (wrote_url) {
        char *url = xasprintf("%s/server.url", state_dir);
        unlink(url);
        xfree(url);
    }
}

/* The signals that stop the server: blocked everywhere, taken by sigwait. */
static void stop_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
}

static void wait_for_signal(void)
{
    sigset_t set;
    stop_signals(&set);
    int sig = 0;
    while (sigwait(&set, &sig) == 0 && sig != SIGINT && sig != SIGTERM) {
    }
    log_info("server", "received %s, shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
}

/* `cueue server token create [--namespace NS,...] [--name NAME]
 * [--state-dir DIR]`. Returns the exit status. */
static int token_main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "create")) {
        fprintf(stderr, "usage: cueue server token create [--namespace NS[,NS...]] "
                        "[--name NAME] [--state-dir DIR]\n");
        return 2;
    }
    const char *ns = NULL, *name = NULL, *dir = NULL, *v;
    for (int i = 2; i < argc; i++) {
        bool bad = false;
        if ((v = flag_value("--namespace", argc, argv, &i, &bad)) ||
            (v = flag_value("-n", argc, argv, &i, &bad)))
            ns = v;
        else if ((v = flag_value("--name", argc, argv, &i, &bad)))
            name = v;
        else if ((v = flag_value("--state-dir", argc, argv, &i, &bad)))
            dir = v;
        else {
            fprintf(stderr, bad ? "cueue server token create: flag %s needs a value\n"
                                : "cueue server token create: unknown flag \"%s\"\n",
                    argv[i]);
            return 2;
        }
    }
    char *state = dir ? xstrdup(dir) : srv_default_state_dir();
    char err[512], tok[SRV_TOKEN_TEXT];
    int rc = srv__mkdirs(state, err, sizeof(err));
    if (!rc)
        rc = srv_tokens_create(state, name ? name : ns ? ns : "admin", ns ? ns : "*", tok, err,
                               sizeof(err));
    xfree(state);
    if (rc) {
        fprintf(stderr, "cueue server token create: %s\n", err);
        return rc == CU_EINVAL ? 2 : 1;
    }
    printf("%s\n", tok);
    return 0;
}

int srv_main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "token"))
        return token_main(argc - 1, argv + 1);
    struct srv_flags f;
    int rc = parse_flags(&f, argc, argv);
    if (rc >= 0) {
        xfree(f.state_dir);
        return rc;
    }
    /* block the stop signals in every thread created from here on */
    sigset_t set;
    stop_signals(&set);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    char err[1024] = "";
    int lock_fd = -1;
    struct running rn;
    memset(&rn, 0, sizeof(rn));
    int status = 1;
    bool wrote_url = false;
    if (srv__mkdirs(f.state_dir, err, sizeof(err)) ||
        srv__lock_state(f.state_dir, &lock_fd, err, sizeof(err)) ||
        open_all(&f, &rn, err, sizeof(err))) {
        fprintf(stderr, "cueue server: %s\n", err);
    } else {
        char *url = srv__base_url(f.listen, srv_port(rn.srv), f.tls);
        char *token = rn.tokens ? srv_tokens_admin(rn.tokens) : NULL;
        if (!rn.tokens)
            log_warn("server", "--anonymous: every request is served without authentication");
        if (write_client_files(f.state_dir, url, token, f.tls ? rn.tls.ca_pem : NULL, err,
                               sizeof(err))) {
            fprintf(stderr, "cueue server: %s\n", err);
        } else {
            wrote_url = true;
            bool v6 = strchr(f.listen, ':') != NULL;
            printf("cueue server: listening on %s://%s%s%s:%u (%s; state directory %s)\n"
                   "Clients on this machine: %s\n"
                   "To use kubectl with it:\n  export KUBECONFIG=%s/kubeconfig\n",
                   f.tls ? "https" : "http", v6 ? "[" : "", f.listen, v6 ? "]" : "",
                   srv_port(rn.srv),
                   rn.tokens ? "bearer tokens required" : "no authentication: --anonymous",
                   f.state_dir, url, f.state_dir);
            fflush(stdout);
            wait_for_signal();
            status = 0;
        }
        xfree(token);
        xfree(url);
    }
    close_all(&rn, f.state_dir, wrote_url);
    if (lock_fd >= 0)
        close(lock_fd);
    xfree(f.state_dir);
    return status;
}
