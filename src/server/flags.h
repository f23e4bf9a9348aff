/*
 * flags: `cueue server`'s command line. One table (flags.c) drives both
 * getopt_long and --help, so a flag cannot be parsed without being
 * documented or documented without being parsed.
 *
 * Adding a flag: a field in struct srv_flags (with its "not given" value in
 * srv_flags_parse's defaults if it needs one), one FLAG(...) line in
 * flags.c's table (name, value placeholder or NULL for a switch, setter,
 * field, help text; '\n' in the help starts an indented line), and the use
 * of the field in server_main.c.
 */
#ifndef CUEUE_SERVER_FLAGS_H
#define CUEUE_SERVER_FLAGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "api/object.h"
#include "server/server.h"

/* Where a root server keeps the sandboxes of pods that run as other
 * users (--pod-sandboxes). */
#define SRV_DEFAULT_POD_SANDBOXES "/var/lib/cueue/sandboxes"

struct srv_flags {
    char *state_dir;             /* owned; the default rule when not given */
    const char *listen;          /* borrowed from argv or a literal */
    long port;
    int64_t scale_down_ms;       /* durations: -1 = not given (the control plane's default) */
    int64_t provisioning_max_wait_ms;
    bool flavor_fallback;
    int64_t fallback_node_wait_ms, fallback_provreq_timeout_ms, fallback_backoff_ms;
    int64_t event_ttl_ms;
    bool no_default_pool;
    bool stop_pods_on_exit;
    struct {
        char *addr; /* owned; NULL = no dashboard (--dashboard-listen=off) */
        long port;  /* -1 = not given: 8265, or 0 with --port 0 */
    } dash;
    struct api_pod_policy pods;  /* host_path_prefixes points into host_paths */
    const char *host_paths[16];  /* borrowed from argv */
    char *pod_sandboxes;         /* owned; NULL = SRV_DEFAULT_POD_SANDBOXES */
    const char *runtime;     /* "process" (default), "oci", "auto" (oci when usable) */
    const char *oci_runtime; /* runc/crun name or path, NULL = runc, else crun */
    int log_level;               /* enum log_level, or -1: not given */
    bool anonymous;              /* --anonymous: no tokens (loopback --listen only) */
    bool tls;                    /* HTTPS; always true without --anonymous */
    struct srv_limits limits;    /* srv_limits_defaults, then the --max-* flags */
    const char *kueue_config;    /* --config: Kueue's Configuration file, or NULL */
};

/* Parse argv (argv[0] is the verb, "server") into *f, which it initialises
 * first. Returns -1 to go on and run; 0 after printing --help to out; 2
 * after printing a one-line error naming the flag and the rule to err
 * (unknown flag, missing value, a value that does not parse, --anonymous
 * with a non-loopback --listen). Without --anonymous, tls is set. Free with
 * srv_flags_release whatever it returns. Uses getopt_long's globals. */
int srv_flags_parse(struct srv_flags *f, int argc, char **argv, FILE *out, FILE *err);

/* Print the --help text, generated from the flag table. */
void srv_flags_usage(FILE *out);

/* Free what *f owns. */
void srv_flags_release(struct srv_flags *f);

#endif
