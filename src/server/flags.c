/*
 * flags: `cueue server`'s flags, one table for getopt_long and --help
 * (how to add a flag: flags.h). Every flag takes `--flag value` or
 * `--flag=value`; errors exit 2 with one line naming the flag.
 */
#include "server/flags.h"

#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/srv-int.h"
#include "server/statefiles.h"
#include "util/duration.h"
#include "util/log.h"
#include "util/xalloc.h"

struct flag_def;
/* Store value v (NULL for a switch) in the field at f + d->off. Returns 0,
 * or prints "cueue server: invalid --NAME ..." to err and returns 2. */
typedef int (*flag_set_fn)(const struct flag_def *d, char *field, const char *v, FILE *err);

struct flag_def {
    const char *name; /* long name, without "--" */
    const char *arg;  /* value placeholder in --help ("DIR"); NULL: a switch */
    flag_set_fn set;
    size_t off;       /* offsetof(struct srv_flags, the field) */
    const char *help; /* '\n' starts a continuation line */
};

static int invalid(const struct flag_def *d, const char *v, const char *want, FILE *err)
{
    fprintf(err, "cueue server: invalid --%s \"%s\": want %s\n", d->name, v, want);
    return 2;
}

static int set_true(const struct flag_def *d, char *field, const char *v, FILE *err)
{
    *(bool *)field = true;
    return 0;
}

static int set_string(const struct flag_def *d, char *field, const char *v, FILE *err)
{
    *(const char **)field = v;
    return 0;
}

static int set_dir(const struct flag_def *d, char *field, const char *v, FILE *err)
{
    if (!*v)
        return invalid(d, v, "a directory path", err);
    char **dst = (char **)field;
    xfree(*dst);
    *dst = xstrdup(v);
    return 0;
}

static int set_port(const struct flag_def *d, char *field, const char *v, FILE *err)
{
    char *end;
    long port = strtol(v, &end, 10);
    if (*end || !*v || port < 0 || port > 65535)
        return invalid(d, v, "0..65535", err);
    *(long *)field = port;
    return 0;
}

/* --dashboard-listen: "off", "ADDR:PORT", "[V6ADDR]:PORT" or ":PORT"
 * (address 127.0.0.1) into the dash field. */
static int set_dashboard(const struct flag_def *d, char *field, const char *v, FILE *err)
{
    struct srv_flags *f = (struct srv_flags *)(field - offsetof(struct srv_flags, dash));
    XFREE(f->dash.addr);
    if (!strcmp(v, "off"))
        return 0;
    const char *colon = strrchr(v, ':');
    char *end = NULL;
    long port = colon ? strtol(colon + 1, &end, 10) : -1;
    if (!colon || !colon[1] || *end || port < 0 || port > 65535)
        return invalid(d, v,
                       "ADDR:PORT (127.0.0.1:8265, [::1]:8265, :8265) with a port 0..65535, or off",
                       err);
    size_t n = (size_t)(colon - v);
    if (n >= 2 && v[0] == '[' && v[n - 1] == ']')
        f->dash.addr = xstrndup(v + 1, n - 2);
    else
        f->dash.addr = n ? xstrndup(v, n) : xstrdup("127.0.0.1");
    f->dash.port = port;
    return 0;
}

/* --allow-host-path PREFIX (repeatable): an absolute path without "..", at
 * most 16, into the pod policy. */
static int add_host_path(const struct flag_def *d, char *field, const char *v, FILE *err)
{
    struct srv_flags *f = (struct srv_flags *)(field - offsetof(struct srv_flags, pods));
    size_t n = f->pods.n_host_path_prefixes;
    if (v[0] != '/' || strstr(v, "..") || n >= sizeof(f->host_paths) / sizeof(f->host_paths[0]))
        return invalid(d, v, "an absolute path without \"..\" (at most 16 of them)", err);
    f->host_paths[n] = v;
    f->pods.host_path_prefixes = f->host_paths;
    f->pods.n_host_path_prefixes = n + 1;
    return 0;
}

/* --allow-privileged-pods into the pod policy. */
static int allow_privileged(const struct flag_def *d, char *field, const char *v, FILE *err)
{
    struct srv_flags *f = (struct srv_flags *)(field - offsetof(struct srv_flags, pods));
    f->pods.allow_privileged = true;
    return 0;
}

/* --allow-root-pods into the pod policy. */
static int allow_root(const struct flag_def *d, char *field, const char *v, FILE *err)
{
    struct srv_flags *f = (struct srv_flags *)(field - offsetof(struct srv_flags, pods));
    f->pods.allow_root = true;
    return 0;
}

/* --pod-user UID[:GID] (GID defaults to UID) into the pod policy; 0 needs
 * --allow-root-pods too (checked after parsing: srv_flags_parse). */
static int set_pod_user(const struct flag_def *d, char *field, const char *v, FILE *err)
{
    struct srv_flags *f = (struct srv_flags *)(field - offsetof(struct srv_flags, pods));
    char *end;
    errno = 0;
    unsigned long u = strtoul(v, &end, 10), g = u;
    bool ok = v[0] >= '0' && v[0] <= '9' && !errno && (*end == '\0' || *end == ':');
    if (ok && *end == ':') {
        const char *gs = end + 1;
        g = strtoul(gs, &end, 10);
        ok = gs[0] >= '0' && gs[0] <= '9' && !errno && !*end;
    }
    if (!ok || u > 2147483647UL || g > 2147483647UL)
        return invalid(d, v, "UID or UID:GID, numbers from 0 to 2147483647", err);
    f->pods.pod_uid = (uint32_t)u;
    f->pods.pod_gid = (uint32_t)g;
    return 0;
}

/* --runtime: process, oci or auto. */
static int set_runtime(const struct flag_def *d, char *field, const char *v, FILE *err)
{
    if (strcmp(v, "process") && strcmp(v, "oci") && strcmp(v, "auto")) {
        fprintf(err, "cueue server: --runtime: Unsupported value: \"%s\": supported values: "
                     "\"process\", \"oci\", \"auto\"\n", v);
        return 2;
    }
    *(const char **)field = v;
    return 0;
}

static int set_duration(const struct flag_def *d, char *field, const char *v, FILE *err)
{
    int64_t ms;
    const char *why = "must not be negative";
    if (cu_duration_parse_ms(v, &ms, &why) || ms < 0) {
        fprintf(err, "cueue server: invalid --%s \"%s\": %s; want %s\n", d->name, v, why,
                CU_DURATION_FORMS);
        return 2;
    }
    *(int64_t *)field = ms;
    return 0;
}

static int set_log_level(const struct flag_def *d, char *field, const char *v, FILE *err)
{
    static const char *const names[] = {"error", "warn", "info", "debug"};
    for (int l = 0; l < 4; l++)
        if (!strcmp(v, names[l])) {
            *(int *)field = l;
            return 0;
        }
    return invalid(d, v, "error, warn, info or debug", err);
}

/* A count: an integer in [min, max] into an unsigned (or, for
 * --max-request-body, a size_t) field. */
static int set_count_in(const struct flag_def *d, char *field, const char *v, FILE *err,
                        unsigned long long min, unsigned long long max, bool is_size)
{
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (!*v || *end || errno || *v == '-' || n < min || n > max) {
        fprintf(err, "cueue server: invalid --%s \"%s\": want an integer in %llu..%llu\n",
                d->name, v, min, max);
        return 2;
    }
    if (is_size)
        *(size_t *)field = (size_t)n;
    else
        *(unsigned *)field = (unsigned)n;
    return 0;
}

/* --max-connections, --max-watches and their per-client forms: 1..1000000. */
static int set_limit(const struct flag_def *d, char *field, const char *v, FILE *err)
{
    return set_count_in(d, field, v, err, 1, 1000000, false);
}

/* --http-threads: 1..256. */
static int set_threads(const struct flag_def *d, char *field, const char *v, FILE *err)
{
    return set_count_in(d, field, v, err, 1, 256, false);
}

/* --max-request-body: 1 KiB..1 GiB. */
static int set_body_bytes(const struct flag_def *d, char *field, const char *v, FILE *err)
{
    return set_count_in(d, field, v, err, 1024, (unsigned long long)1 << 30, true);
}

/* --idle-timeout: a duration, kept in whole seconds (rounded up). */
static int set_idle_timeout(const struct flag_def *d, char *field, const char *v, FILE *err)
{
    int64_t ms;
    int rc = set_duration(d, (char *)&ms, v, err);
    if (!rc)
        *(unsigned *)field = (unsigned)((ms + 999) / 1000);
    return rc;
}

#define FLAG(name, arg, set, field, help) {name, arg, set, offsetof(struct srv_flags, field), help}

/* The flags, in --help order. One line per flag. */
static const struct flag_def flags[] = {
    FLAG("state-dir", "DIR", set_dir, state_dir,
         "state directory (database, pod logs, kubeconfig);\ndefault $CUEUE_STATE_DIR, else "
         "$XDG_STATE_HOME/cueue,\nelse ~/.local/state/cueue"),
    FLAG("listen", "ADDR", set_string, listen, "address to listen on (default 127.0.0.1)"),
    FLAG("port", "N", set_port, port, "port (default 6443; 0 = pick a free one and print it)"),
    FLAG("config", "FILE", set_string, kueue_config,
         "Kueue's own Configuration file (config.kueue.x-k8s.io/\n"
         "v1beta1): waitForPodsReady, fairSharing, integrations.\n"
         "frameworks, manageJobsWithoutQueueName... as the Kueue\n"
         "manager reads it (docs/server.md); fields cueue does not\n"
         "honour are named in warnings, bad ones stop the server"),
    FLAG("scale-down-unneeded-time", "DUR", set_duration, scale_down_ms,
         "idle time before a node is removed (default 10m)"),
    FLAG("provisioning-max-wait", "DUR", set_duration, provisioning_max_wait_ms,
         "how long a queued ProvisioningRequest may wait for\ncapacity (default 7d)"),
    FLAG("flavor-fallback", NULL, set_true, flavor_fallback,
         "beyond Kueue: when capacity does not come, evict the\nWorkload and try the next "
         "flavor of its ClusterQueue,\navoiding the failed one for a while (default off)"),
    FLAG("fallback-node-wait", "DUR", set_duration, fallback_node_wait_ms,
         "with --flavor-fallback: admitted pods still without a\nnode this long after "
         "admission (default 15m)"),
    FLAG("fallback-provisioning-timeout", "DUR", set_duration, fallback_provreq_timeout_ms,
         "with --flavor-fallback: a ProvisioningRequest not\nprovisioned this long after its "
         "creation (default 0:\nwait as long as --provisioning-max-wait)"),
    FLAG("fallback-flavor-backoff", "DUR", set_duration, fallback_backoff_ms,
         "how long the failed flavor is avoided (default 10m)"),
    FLAG("event-ttl", "DUR", set_duration, event_ttl_ms,
         "Events are deleted this long after their last change\n"
         "(default 1h, as kube-apiserver's --event-ttl; 0 = never)"),
    FLAG("no-default-pool", NULL, set_true, no_default_pool,
         "on first start, do not create NodePool default-pool"),
    FLAG("stop-pods-on-exit", NULL, set_true, stop_pods_on_exit,
         "kill every pod when the server stops (default: pods\nkeep running and a restarted "
         "server re-attaches)"),
    FLAG("dashboard-listen", "ADDR:PORT", set_dashboard, dash,
         "where the web dashboard listens (default 127.0.0.1:8265;\n"
         "with --port 0 the port defaults to 0 too); \"off\" serves no\n"
         "dashboard. Its URL is printed and written to\n<state-dir>/dashboard.url"),
    FLAG("allow-privileged-pods", NULL, allow_privileged, pods,
         "accept containers with securityContext.privileged\n"
         "(default: refused with a field error)"),
    FLAG("pod-user", "UID[:GID]", set_pod_user, pods,
         "when the server runs as root: the user (and group, default\n"
         "the same number) pods run as when their securityContext\n"
         "names none (default 65534:65534, nobody:nogroup; 0 only\n"
         "with --allow-root-pods)"),
    FLAG("pod-sandboxes", "DIR", set_dir, pod_sandboxes,
         "when the server runs as root: where pods' sandboxes (their\n"
         "working directory, volumes, metrics file) live, one\n"
         "directory per pod owned by its group; DIR is made mode 0711\n"
         "and must be reachable by the pods' users (default\n"
         SRV_DEFAULT_POD_SANDBOXES "; the state directory stays private)"),
    FLAG("allow-root-pods", NULL, allow_root, pods,
         "when the server runs as root: accept runAsUser/runAsGroup\n"
         "0 (default: refused with a field error; pods never run as\n"
         "root unless they ask)"),
    FLAG("allow-host-path", "PREFIX", add_host_path, pods,
         "accept hostPath volumes under PREFIX (repeatable, up\n"
         "to 16; default: none)"),
    FLAG("runtime", "process|oci|auto", set_runtime, runtime,
         "how pods run: process (bare host processes; the default),\n"
         "oci (each pod isolated by an OCI runtime: namespaces, cgroup\n"
         "limits, its own IP; needs root) or auto (oci when this machine\n"
         "allows it, else process, said once)"),
    FLAG("oci-runtime", "NAME", set_string, oci_runtime,
         "the OCI runtime, a name in PATH or a path (default runc,\nelse crun)"),
    FLAG("max-connections", "N", set_limit, limits.max_connections,
         "open connections in all (default 4096); a request\n"
         "over a limit is answered 429 with Retry-After"),
    FLAG("max-connections-per-client", "N", set_limit, limits.max_connections_per_client,
         "open connections per client IP (default 512)"),
    FLAG("max-watches", "N", set_limit, limits.max_watches,
         "open watches and `logs -f` streams in all (default\n"
         "10000); they do not count as connections"),
    FLAG("max-watches-per-client", "N", set_limit, limits.max_watches_per_client,
         "the same per client IP (default 4096)"),
    FLAG("max-request-body", "BYTES", set_body_bytes, limits.max_body_bytes,
         "largest request body (default 3145728: 3 MiB)"),
    FLAG("request-timeout", "DUR", set_duration, limits.request_timeout_ms,
         "longest time to receive a request body (default 60s;\n0 = no limit)"),
    FLAG("idle-timeout", "DUR", set_idle_timeout, limits.idle_timeout_s,
         "close a connection idle this long (default 120s,\n0 = never; streams are exempt)"),
    FLAG("http-threads", "N", set_threads, limits.threads,
         "HTTP event-loop threads (default 4)"),
    FLAG("anonymous", NULL, set_true, anonymous,
         "serve without authentication and over plain HTTP\n"
         "(only with a loopback --listen address); by default\n"
         "every request but /healthz, /livez, /readyz and\n"
         "/version needs a bearer token of <state-dir>/tokens,\n"
         "over HTTPS (certificates made in the state directory)"),
    FLAG("tls", NULL, set_true, tls, "serve HTTPS even with --anonymous"),
    FLAG("log-level", "LEVEL", set_log_level, log_level,
         "error, warn, info (default) or debug"),
};
#define N_FLAGS (sizeof(flags) / sizeof(flags[0]))
#define HELP_CODE 'h'
#define FLAG_CODE_BASE 256 /* getopt code of flags[i]: FLAG_CODE_BASE + i */
#define HELP_COLUMN 22

/* "  --name ARG" padded to HELP_COLUMN (own line when longer), then the
 * help's lines, continuation lines indented to HELP_COLUMN. */
static void usage_entry(FILE *out, const char *name, const char *arg, const char *help)
{
    int n = fprintf(out, "  %s%s%s", name, arg ? " " : "", arg ? arg : "");
    if (n >= HELP_COLUMN) { /* no room for one space */
        fputc('\n', out);
        n = 0;
    }
    for (const char *p = help; *p;) {
        size_t len = strcspn(p, "\n");
        fprintf(out, "%*s%.*s\n", HELP_COLUMN - n, "", (int)len, p);
        n = 0;
        p += len + (p[len] == '\n');
    }
}

void srv_flags_usage(FILE *out)
{
    fputs("usage: cueue server [flags]\n"
          "\n"
          "Run the cueue control plane: the object store, the control loop (queues,\n"
          "admission, node pools, pods as local processes) and a Kubernetes-shaped\n"
          "HTTP API that kubectl and the cueue CLI talk to.\n"
          "\n"
          "Flags (--flag value or --flag=value):\n",
          out);
    char name[64];
    for (size_t i = 0; i < N_FLAGS; i++) {
        snprintf(name, sizeof(name), "--%s", flags[i].name);
        usage_entry(out, name, flags[i].arg, flags[i].help);
    }
    usage_entry(out, "-h, --help", NULL, "show this help");
    fputs("\n"
          "cueue server token create [--namespace NS[,NS...]] [--name NAME]\n"
          "                    [--state-dir DIR]\n"
          "                      add a bearer token to <state-dir>/tokens and print it:\n"
          "                      an admin token, or with --namespace one limited to\n"
          "                      those namespaces (a running server picks it up)\n"
          "\n"
          "Durations: Go's (Kubernetes') form, numbers with units ns, us, ms, s, m, h,\n"
          "plus d (24h), or a bare number of seconds: \"90s\", \"1.5h\", \"1h30m\", \"7d\".\n"
          "On startup the server writes <state-dir>/server.url and a kubeconfig at\n"
          "<state-dir>/kubeconfig with the admin token (first start: generated into\n"
          "<state-dir>/tokens) (export KUBECONFIG=<state-dir>/kubeconfig).\n"
          "SIGINT or SIGTERM stops it cleanly.\n",
          out);
}

static void defaults(struct srv_flags *f)
{
    memset(f, 0, sizeof(*f));
    f->listen = "127.0.0.1";
    f->port = 6443;
    f->scale_down_ms = f->provisioning_max_wait_ms = -1;
    f->fallback_node_wait_ms = f->fallback_provreq_timeout_ms = f->fallback_backoff_ms = -1;
    f->event_ttl_ms = -1;
    f->runtime = "process";
    f->log_level = -1;
    f->dash.addr = xstrdup("127.0.0.1");
    f->dash.port = -1;
    srv_limits_defaults(&f->limits);
    f->pods.pod_uid = f->pods.pod_gid = 65534; /* nobody:nogroup */
    f->pods.server_uid = (uint32_t)geteuid();
    f->pods.server_gid = (uint32_t)getegid();
    f->pods.switch_user = geteuid() == 0;
}

int srv_flags_parse(struct srv_flags *f, int argc, char **argv, FILE *out, FILE *err)
{
    defaults(f);
    struct option opts[N_FLAGS + 2];
    for (size_t i = 0; i < N_FLAGS; i++)
        opts[i] = (struct option){flags[i].name, flags[i].arg ? required_argument : no_argument,
                                  NULL, FLAG_CODE_BASE + (int)i};
    opts[N_FLAGS] = (struct option){"help", no_argument, NULL, HELP_CODE};
    opts[N_FLAGS + 1] = (struct option){NULL, 0, NULL, 0};
    optind = 0; /* glibc: a full re-initialisation (the CLI parsed before) */
    opterr = 0;
    int code, rc = -1;
    /* '+': stop at the first non-flag (reported below, as before getopt) */
    while (rc < 0 && (code = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
        const char *word = argv[optind - 1];
        if (code == HELP_CODE) {
            srv_flags_usage(out);
            rc = 0;
        } else if (code == ':') {
            fprintf(err, "cueue server: flag %s needs a value\n", word);
            rc = 2;
        } else if (code < FLAG_CODE_BASE || code >= FLAG_CODE_BASE + (int)N_FLAGS) {
            fprintf(err, "cueue server: unknown flag \"%s\" (see cueue server --help)\n", word);
            rc = 2;
        } else {
            const struct flag_def *d = &flags[code - FLAG_CODE_BASE];
            rc = d->set(d, (char *)f + d->off, optarg, err) ? 2 : -1;
        }
    }
    if (rc < 0 && optind < argc) {
        fprintf(err, "cueue server: unexpected argument \"%s\" (see cueue server --help)\n",
                argv[optind]);
        rc = 2;
    }
    if (rc < 0 && (f->pods.pod_uid == 0 || f->pods.pod_gid == 0) && !f->pods.allow_root) {
        fprintf(err, "cueue server: --pod-user %u:%u runs pods as root: that needs "
                     "--allow-root-pods too\n", (unsigned)f->pods.pod_uid,
                (unsigned)f->pods.pod_gid);
        rc = 2;
    }
    if (rc < 0 && !f->state_dir)
        f->state_dir = srv_default_state_dir();
    if (rc < 0 && !f->anonymous)
        f->tls = true; /* kubectl sends a token only over TLS */
    if (rc < 0 && f->anonymous && !srv__is_loopback(f->listen)) {
        fprintf(err,
                "cueue server: --anonymous is allowed only with a loopback --listen address "
                "(127.0.0.1, ::1, localhost), not \"%s\"\n",
                f->listen);
        rc = 2;
    }
    if (rc < 0 && f->dash.addr && !srv__is_loopback(f->dash.addr)) {
        fprintf(err,
                "cueue server: invalid --dashboard-listen \"%s\": the dashboard has no TLS or "
                "authentication yet, so it listens only on a loopback address (127.0.0.1, "
                "::1, localhost)\n",
                f->dash.addr);
        rc = 2;
    }
    if (f->dash.port < 0) /* --port 0 (tests, the demo): no fixed port at all */
        f->dash.port = f->port == 0 ? 0 : 8265;
    return rc;
}

void srv_flags_release(struct srv_flags *f)
{
    XFREE(f->state_dir);
    XFREE(f->dash.addr);
    XFREE(f->pod_sandboxes);
}
