/*
 * server_main: the `cueue server` process. Order of life:
 *   flags (flags.c) -> state directory (mkdir, lock) -> store (SQLite <state>/cueue.db)
 *   -> first-start objects (Namespace default, NodePool default-pool)
 *   -> control loop thread (ctrl_run) -> HTTP API (srv_start)
 *   -> server.url + kubeconfig -> wait for SIGINT/SIGTERM
 *   -> stop HTTP (streams end) -> stop the loop -> flush, close -> exit 0.
 * Signals are blocked in every thread and taken with sigwait() here, so no
 * handler runs in the middle of a library call.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/meta.h"
#include "api/object.h"
#include "ctrl/ctrl.h"
#include "ctrl/kconfig.h"
#include "api/schema.h"
#include "exec/exec.h"
#include "provider/catalog.h"
#include "server/flags.h"
#include "server/srv-int.h"
#include "server/statefiles.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/log.h"
#include "util/xalloc.h"

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

/* <dir>/<name> with text (mode 0600); text is freed. */
static int write_state_file(const char *dir, const char *name, char *text, char *err,
                            size_t errlen)
{
    char *path = xasprintf("%s/%s", dir, name);
    int rc = srv__write_file(path, text, 0600, err, errlen);
    xfree(path);
    xfree(text);
    return rc;
}

/* server.url, kubeconfig (with token and the CA's ca_pem when not NULL),
 * and dashboard.url (the dashboard's page) when dash_url is set. */
static int write_client_files(const char *dir, const char *url, const char *token,
                              const char *ca_pem, const char *dash_url, char *err, size_t errlen)
{
    int rc = 0;
    if (dash_url)
        rc = write_state_file(dir, "dashboard.url", xasprintf("%s\n", dash_url), err, errlen);
    if (!rc)
        rc = write_state_file(dir, "server.url", xasprintf("%s\n", url), err, errlen);
    if (!rc)
        rc = write_state_file(dir, "kubeconfig", srv__kubeconfig_text(url, token, ca_pem), err, errlen);
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
    struct srv *dash; /* the dashboard's listener, or NULL */
    struct srv_tokens *tokens; /* NULL with --anonymous */
    struct srv_tls tls;        /* empty without TLS */
    struct rng rng;
};

/* --config: Kueue's Configuration into *cfg (after its defaults, before
 * the flags); warnings go to stderr. Returns 0, or 2 after printing the
 * errors (the server does not start). */
static int load_kueue_config(const char *path, struct ctrl_config *cfg, struct ctrl_kconfig *kc)
{
    struct diag d;
    diag_init(&d);
    int rc = ctrl_kconfig_load_file(path, cfg, kc, &d);
    for (size_t i = 0; i < kc->n_warnings; i++)
        fprintf(stderr, "cueue server: warning: --config %s: %s\n", path, kc->warnings[i]);
    for (size_t i = 0; rc && i < d.n; i++) { /* every problem, one line each */
        char *why = diag_cause_string(&d.items[i]);
        fprintf(stderr, "cueue server: invalid --config %s: %s\n", path, why);
        xfree(why);
    }
    diag_release(&d);
    return rc ? 2 : 0;
}

static int open_all(const struct srv_flags *f, const struct ctrl_config *cfg,
                    struct running *rn, char *err, size_t errlen)
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
    struct ctrl_opts co = {.store = rn->store, .clock = clk_real(), .rng = &rn->rng,
                           .config = *cfg};
    co.config.state_dir = f->state_dir;
    if (f->scale_down_ms >= 0)
        co.config.scale_down_unneeded_ms = f->scale_down_ms;
    if (f->provisioning_max_wait_ms >= 0)
        co.config.provisioning_max_wait_ms = f->provisioning_max_wait_ms;
    co.config.flavor_fallback = f->flavor_fallback;
    if (f->event_ttl_ms >= 0)
        co.config.event_ttl_ms = f->event_ttl_ms;
    if (f->fallback_node_wait_ms >= 0)
        co.config.fallback_node_wait_ms = f->fallback_node_wait_ms;
    if (f->fallback_provreq_timeout_ms >= 0)
        co.config.fallback_provreq_timeout_ms = f->fallback_provreq_timeout_ms;
    if (f->fallback_backoff_ms >= 0)
        co.config.fallback_flavor_backoff_ms = f->fallback_backoff_ms;
    rn->exec = NULL;
    bool auto_rt = !strcmp(f->runtime, "auto");
    if (auto_rt || !strcmp(f->runtime, "oci")) {
        char why[512];
        rn->exec = exec_oci_new(f->state_dir, f->oci_runtime, why, sizeof(why));
        if (!rn->exec && !auto_rt) {
            snprintf(err, errlen, "--runtime=oci: pods cannot be isolated here: %s", why);
            return CU_EUNSUPPORTED;
        }
        if (rn->exec) {
            log_info("server", "pods run isolated under an OCI runtime (--runtime=oci)");
            co.config.pods_have_own_ip = true; /* Ray pods keep their manifest's ports */
        }
        else
            log_warn("server", "pods run as plain host processes (--runtime=process): %s", why);
    }
    if (!rn->exec)
        rn->exec = exec_local_new(f->state_dir);
    if (rn->exec) {
        exec_local_set_stop_on_free(rn->exec, f->stop_pods_on_exit);
        int prc = exec_local_set_pod_policy(rn->exec, &f->pods,
                                            f->pod_sandboxes ? f->pod_sandboxes
                                                             : SRV_DEFAULT_POD_SANDBOXES,
                                            err, errlen);
        if (prc)
            return prc;
        if (f->pods.switch_user)
            log_info("server", "pods run as uid %u gid %u unless their securityContext says "
                     "otherwise (--pod-user%s); their sandboxes are under %s",
                     (unsigned)f->pods.pod_uid, (unsigned)f->pods.pod_gid,
                     f->pods.allow_root ? ", --allow-root-pods" : "",
                     f->pod_sandboxes ? f->pod_sandboxes : SRV_DEFAULT_POD_SANDBOXES);
    }
    if (rn->exec) { /* pods on Slurm pools' nodes run as Slurm jobs (docs/slurm.md) */
        rn->exec = exec_slurm_new(f->state_dir, rn->exec);
        exec_slurm_set_stop_on_free(rn->exec, f->stop_pods_on_exit);
    }
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
                         .clock = clk_real(), .pod_policy = &f->pods, .exec = rn->exec,
                         .limits = &f->limits, .tokens = rn->tokens,
                         .job_policy = &cfg->jobs,
                         .tls = f->tls ? &rn->tls : NULL};
    rc = srv_start(&o, &rn->srv, err, errlen);
    if (rc || !f->dash.addr)
        return rc;
    struct srv_opts d = o;
    d.listen_addr = f->dash.addr;
    d.port = (uint16_t)f->dash.port;
    d.dashboard = true;
    /* plain HTTP, no API tokens: the dashboard is read-only and listens
     * only on loopback (srv_flags_parse refuses other addresses) until it
     * gets TLS and its own token (docs/dashboard.md) */
    d.tokens = NULL;
    d.tls = NULL;
    rc = srv_start(&d, &rn->dash, err, errlen);
    if (rc) {
        char why[768];
        snprintf(why, sizeof(why), "dashboard: %s (--dashboard-listen ADDR:PORT chooses another, "
                 "--dashboard-listen=off serves none)", err);
        snprintf(err, errlen, "%s", why);
    }
    return rc;
}

/* Stop everything; returns 0, or CU_EIO when changes could not be saved
 * (the store logged how many and why; they are lost). */
static int close_all(struct running *rn, const char *state_dir, bool wrote_url)
{
    srv_stop(rn->dash);
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
    char why[512] = "";
    if (rn->store && store_flush(rn->store))
        store_writable(rn->store, why, sizeof(why));
    int rc = store_close(rn->store); /* tries the final save once more */
    if (rc)
        fprintf(stderr, "cueue server: changes made before the shutdown could not be saved "
                        "and are lost: %s\n", why);
    if (wrote_url) {
        char *url = xasprintf("%s/server.url", state_dir);
        unlink(url);
        xfree(url);
        url = xasprintf("%s/dashboard.url", state_dir);
        unlink(url);
        xfree(url);
    }
    return rc;
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
 * [--state-dir DIR]`: argv[0] is "token". Returns the exit status. */
static int token_main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "create")) {
        fprintf(stderr, "usage: cueue server token create [--namespace NS[,NS...]] "
                        "[--name NAME] [--state-dir DIR]\n");
        return 2;
    }
    static const struct option opts[] = {{"namespace", required_argument, NULL, 'n'},
                                         {"name", required_argument, NULL, 'N'},
                                         {"state-dir", required_argument, NULL, 'd'},
                                         {NULL, 0, NULL, 0}};
    const char *ns = NULL, *name = NULL, *dir = NULL;
    optind = 0;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc - 1, argv + 1, "+:n:", opts, NULL)) != -1) {
        if (c == 'n')
            ns = optarg;
        else if (c == 'N')
            name = optarg;
        else if (c == 'd')
            dir = optarg;
        else {
            fprintf(stderr, c == ':' ? "cueue server token create: flag %s needs a value\n"
                                     : "cueue server token create: unknown flag \"%s\"\n",
                    argv[optind]);
            return 2;
        }
    }
    if (optind < argc - 1) {
        fprintf(stderr, "cueue server token create: unexpected argument \"%s\"\n",
                argv[optind + 1]);
        return 2;
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
    int rc = srv_flags_parse(&f, argc, argv, stdout, stderr);
    if (rc >= 0) {
        srv_flags_release(&f);
        return rc;
    }
    if (f.log_level >= 0)
        log_set_level((enum log_level)f.log_level);
    struct ctrl_config cfg;
    ctrl_config_defaults(&cfg);
    struct ctrl_kconfig kc = {0};
    if (f.kueue_config && load_kueue_config(f.kueue_config, &cfg, &kc)) {
        ctrl_kconfig_release(&kc);
        srv_flags_release(&f);
        return 2;
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
        srv__secure_state(f.state_dir, err, sizeof(err)) ||
        srv__lock_state(f.state_dir, &lock_fd, err, sizeof(err)) ||
        open_all(&f, &cfg, &rn, err, sizeof(err))) {
        fprintf(stderr, "cueue server: %s\n", err);
    } else {
        char *url = srv__base_url(f.listen, srv_port(rn.srv), f.tls);
        char *token = rn.tokens ? srv_tokens_admin(rn.tokens) : NULL;
        if (!rn.tokens)
            log_warn("server", "--anonymous: every request is served without authentication");
        char *dash = NULL;
        if (rn.dash) {
            char *base = srv__base_url(f.dash.addr, srv_port(rn.dash), false);
            dash = xasprintf("%s/ui/", base);
            xfree(base);
        }
        if (write_client_files(f.state_dir, url, token, f.tls ? rn.tls.ca_pem : NULL, dash, err,
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
            if (dash)
                printf("Dashboard: %s\n", dash);
            fflush(stdout);
            wait_for_signal();
            status = 0;
        }
        xfree(token);
        xfree(url);
        xfree(dash);
    }
    if (close_all(&rn, f.state_dir, wrote_url))
        status = 1;
    if (lock_fd >= 0)
        close(lock_fd);
    ctrl_kconfig_release(&kc); /* after close_all: the control plane borrowed it */
    srv_flags_release(&f);
    return status;
}
