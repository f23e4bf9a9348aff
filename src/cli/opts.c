/*
 * opts: flag parsing for every verb over getopt_long, with the global flags
 * merged into each verb's table so they may appear anywhere on the line
 * (`cueue -n ns get wl`, `cueue get wl -n ns`); plus the small value parsers
 * (counts, booleans; durations are util/duration.h's) and the path-segment
 * rule every name and namespace passes (cli__check_name). getopt_long keeps
 * global state: cli__parse resets it (optind = 0) on every call.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli-int.h"
#include "util/xalloc.h"

enum {
    OPT_SERVER = CLI_OPT_GLOBAL_BASE,
    OPT_STATE_DIR,
    OPT_NAMESPACE,
    OPT_ALL_NS,
    OPT_HELP,
};

static const struct option global_opts[] = {
    {"server", required_argument, NULL, OPT_SERVER},
    {"state-dir", required_argument, NULL, OPT_STATE_DIR},
    {"namespace", required_argument, NULL, OPT_NAMESPACE},
    {"all-namespaces", no_argument, NULL, OPT_ALL_NS},
    {"help", no_argument, NULL, OPT_HELP},
    {0, 0, 0, 0},
};

static void vprint_error(struct cli_ctx *c, const char *fmt, va_list ap)
{
    if (c->out)
        fflush(c->out); /* stdout's lines stay before the error when both share a pipe */
    fputs("error: ", c->err);
    vfprintf(c->err, fmt, ap);
    fputc('\n', c->err);
}

int cli__error(struct cli_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint_error(c, fmt, ap);
    va_end(ap);
    return 1;
}

int cli__usage_error(struct cli_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint_error(c, fmt, ap);
    va_end(ap);
    fprintf(c->err, "See 'cueue %s --help' for usage.\n", c->verb ? c->verb : "");
    return 1;
}

/* Global flags plus the verb's, as one getopt_long table (caller frees). */
static struct option *merge_opts(const struct option *verb)
{
    size_t nv = 0, ng = sizeof(global_opts) / sizeof(global_opts[0]) - 1;
    while (verb && verb[nv].name)
        nv++;
    struct option *all = xcalloc(nv + ng + 1, sizeof(*all));
    if (nv)
        memcpy(all, verb, nv * sizeof(*all));
    memcpy(all + nv, global_opts, ng * sizeof(*all));
    return all;
}

static char *merge_short(const char *verb)
{
    /* leading '-' would change getopt's mode; ':' reports missing values */
    return xasprintf(":n:Ah%s", verb ? verb : "");
}

static void set_str(char **dst, const char *v)
{
    xfree(*dst);
    *dst = xstrdup(v);
}

/* Handle a global flag; returns 1 when code was one, 0 otherwise. */
static int global_flag(struct cli_ctx *c, int code, const char *arg)
{
    switch (code) {
    case OPT_SERVER:
        set_str(&c->server_flag, arg);
        XFREE(c->server);
        return 1;
    case OPT_STATE_DIR:
        set_str(&c->state_dir_flag, arg);
        XFREE(c->server);
        return 1;
    case 'n':
    case OPT_NAMESPACE:
        set_str(&c->ns, arg);
        c->ns_explicit = true;
        return 1;
    case 'A':
    case OPT_ALL_NS:
        c->all_ns = true;
        return 1;
    default:
        return 0;
    }
}

static const char *bad_flag_text(int argc, char **argv, int code, char *buf, size_t len)
{
    /* optind already moved past the offending word */
    const char *word = (optind - 1 < argc && optind >= 1) ? argv[optind - 1] : "";
    if (optopt && optopt < 256 && (!word[0] || word[1] != '-'))
        snprintf(buf, len, "-%c", optopt);
    else
        snprintf(buf, len, "%s", word);
    (void)code;
    char *eq = strchr(buf, '=');
    if (eq)
        *eq = '\0';
    return buf;
}

int cli__parse(struct cli_ctx *c, const struct cli_verb *verb, int argc, char **argv,
               cli_opt_fn fn, void *st, struct cli_args *pos)
{
    struct option *opts = merge_opts(verb->opts);
    char *shorts = merge_short(verb->short_opts);
    int rc = 0, code, help = 0;
    c->verb = verb->name;
    optind = 0; /* GNU: full re-initialisation */
    opterr = 0;
    while (rc == 0 && (code = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
        char flag[128];
        if (code == '?') {
            rc = cli__usage_error(c, "unknown flag: %s",
                                  bad_flag_text(argc, argv, code, flag, sizeof(flag)));
        } else if (code == ':') {
            rc = cli__usage_error(c, "flag needs an argument: %s",
                                  bad_flag_text(argc, argv, code, flag, sizeof(flag)));
        } else if (code == 'h' || code == OPT_HELP) {
            help = 1;
        } else if (!global_flag(c, code, optarg)) {
            if (fn(c, st, code, optarg) != 0)
                rc = 1;
        }
    }
    /* -n goes into API paths: refuse "", ".", ".." and "/" or "%" as kubectl
     * does (a namespace is ignored with -A, as kubectl ignores it) */
    if (rc == 0 && !help && c->ns_explicit && !c->all_ns && cli__check_namespace(c, c->ns) != 0)
        rc = 1;
    if (rc == 0) {
        pos->n = argc - optind;
        pos->v = argv + optind;
    }
    xfree(opts);
    xfree(shorts);
    if (rc)
        return -1;
    if (help) {
        fputs(verb->help, c->out);
        return CLI_HELP;
    }
    return 0;
}

/* ---- value parsers ---- */

int cli__parse_count(const char *s, int32_t *out)
{
    if (!s || !*s)
        return -1;
    for (const char *p = s; *p; p++)
        if (!isdigit((unsigned char)*p))
            return -1;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno || v > INT32_MAX)
        return -1;
    *out = (int32_t)v;
    return 0;
}

int cli__parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"true", "1", "yes", "y", "on"};
    static const char *const no[] = {"false", "0", "no", "n", "off"};
    if (!s)
        return -1;
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (!strcasecmp(s, yes[i])) {
            *out = true;
            return 0;
        }
        if (!strcasecmp(s, no[i])) {
            *out = false;
            return 0;
        }
    }
    return -1;
}

int cli__segment_check(const char *what, const char *s, char *err, size_t errlen)
{
    bool is_name = !strcmp(what, "resource name");
    if (!s || !*s) {
        if (is_name)
            snprintf(err, errlen, "resource name may not be empty");
        else
            snprintf(err, errlen, "invalid %s \"\": [may not be empty]", what);
        return -1;
    }
    if (!strcmp(s, ".") || !strcmp(s, "..")) {
        snprintf(err, errlen, "invalid %s \"%s\": [may not be '%s']", what, s, s);
        return -1;
    }
    bool slash = strchr(s, '/') != NULL, pct = strchr(s, '%') != NULL;
    if (slash || pct) {
        snprintf(err, errlen, "invalid %s \"%s\": [%s%s%s]", what, s,
                 slash ? "may not contain '/'" : "", slash && pct ? " " : "",
                 pct ? "may not contain '%'" : "");
        return -1;
    }
    return 0;
}

static int check_segment(struct cli_ctx *c, const char *what, const char *s)
{
    char err[512];
    if (cli__segment_check(what, s, err, sizeof(err)) != 0)
        return cli__error(c, "%s", err);
    return 0;
}

int cli__check_name(struct cli_ctx *c, const char *name)
{
    return check_segment(c, "resource name", name);
}

int cli__check_namespace(struct cli_ctx *c, const char *ns)
{
    return check_segment(c, "namespace", ns);
}
