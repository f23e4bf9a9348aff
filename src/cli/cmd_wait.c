/*
 * cmd_wait: `cueue wait --for=condition=C[=V] | --for=delete |
 * --for=jsonpath='{...}'[=V] KIND/NAME... [--timeout=30s] [-q]`. Reads each
 * object, then follows its watch stream (from the object's
 * resourceVersion, field selector metadata.name, the server ending the
 * stream at the deadline with timeoutSeconds) until the condition holds,
 * with kubectl's rules: a condition matches by type and status
 * case-insensitively and only when its observedGeneration is absent or
 * equals metadata.generation; an object missing at the start is an error
 * except for --for=delete. A stream that ends early, or an ERROR event
 * (410 Expired), is followed by a fresh read and a new stream; while the
 * object is absent (deleted during a condition wait) it is read again
 * every 200 ms.
 *
 * Progress: when stdout is a terminal (and without -q), each change of the
 * object's state (deletion, status.phase, conditions with their reasons,
 * a Workload's admission checks, the --for jsonpath's value) is printed as
 * "[ELAPSED] KIND/NAME: STATE", so a long wait shows what it waits for.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli/cli-int.h"
#include "util/duration.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

static const char help[] =
    "Wait until objects reach a condition, a JSONPath value, or are deleted.\n"
    "\n"
    "Usage:\n"
    "  cueue wait --for=CONDITION KIND/NAME [KIND/NAME...] [--timeout=30s]\n"
    "  cueue wait --for=CONDITION KIND NAME [NAME...] [--timeout=30s]\n"
    "\n"
    "CONDITION is one of:\n"
    "  condition=TYPE[=VALUE]        status.conditions has TYPE with status VALUE\n"
    "                                (default True; case-insensitive)\n"
    "  jsonpath='{EXPR}'[=VALUE]     the JSONPath result equals VALUE (or exists)\n"
    "  delete                        the object is gone\n"
    "\n"
    "Prints KIND/NAME condition met for each object; exits 1 on timeout. It follows\n"
    "the object's watch stream; on a terminal it also prints each change of the\n"
    "object's state (phase, conditions, admission checks) as it happens.\n"
    "\n"
    "Examples:\n"
    "  cueue wait --for=condition=Admitted workload/job-train-1a2b3 --timeout=60s\n"
    "  cueue wait --for=condition=Complete job/train --timeout=10m\n"
    "  cueue wait --for=jsonpath='{.status.phase}'=Running pod/train-0-abcde\n"
    "  cueue wait --for=delete rayjob/rayjob-tpu-v6e-dws-1 --timeout=2m\n"
    "\n"
    "Flags:\n"
    "      --for CONDITION     what to wait for (required)\n"
    "      --timeout DURATION  give up after this long (default 30s; e.g. 90s, 5m, 1h)\n"
    "  -q, --quiet             do not print state changes (they are printed only\n"
    "                          when stdout is a terminal)\n"
    "  -n, --namespace NS      namespace (default \"default\")\n"
    "      --server URL        API server\n";

enum { OPT_FOR = 256, OPT_TIMEOUT };

static const struct option opts[] = {
    {"for", required_argument, NULL, OPT_FOR},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"quiet", no_argument, NULL, 'q'},
    {0, 0, 0, 0},
};

static const struct cli_verb verb = {"wait", help, opts, "q"};

enum wait_kind { WAIT_NONE, WAIT_CONDITION, WAIT_DELETE, WAIT_JSONPATH };

struct wait_opts {
    enum wait_kind kind;
    char *cond_type;
    char *value; /* expected value, NULL = exists (jsonpath) */
    struct cli_jsonpath *jp;
    int64_t timeout_ms;
    bool quiet;
};

/* "jsonpath={.a}=V": the expression ends at the last '}' (filters may hold
 * '='); what follows '=' is the value. Quotes around either are dropped. */
static int parse_jsonpath_for(struct cli_ctx *c, struct wait_opts *o, const char *spec)
{
    const char *close = strrchr(spec, '}');
    if (!close)
        return -cli__usage_error(c, "jsonpath wait format must be --for=jsonpath='{.status.x}'=VALUE");
    const char *expr_end = close + 1;
    if (*expr_end == '\'' || *expr_end == '"')
        expr_end++;
    const char *start = spec + (spec[0] == '\'' || spec[0] == '"');
    char *expr = xstrndup(start, (size_t)(close + 1 - start));
    char err[256] = "";
    o->jp = cli__jsonpath_parse(expr, err, sizeof(err));
    xfree(expr);
    if (!o->jp)
        return -cli__usage_error(c, "invalid jsonpath in --for: %s", err);
    if (*expr_end == '=') {
        const char *v = expr_end + 1;
        size_t n = strlen(v);
        if (n >= 2 && (v[0] == '\'' || v[0] == '"') && v[n - 1] == v[0])
            o->value = xstrndup(v + 1, n - 2);
        else
            o->value = xstrdup(v);
    } else if (*expr_end) {
        return -cli__usage_error(c, "unexpected text after the jsonpath expression: %s", expr_end);
    }
    o->kind = WAIT_JSONPATH;
    return 0;
}

static int parse_for(struct cli_ctx *c, struct wait_opts *o, const char *arg)
{
    XFREE(o->cond_type); /* a repeated --for replaces the previous one */
    XFREE(o->value);
    cli__jsonpath_free(o->jp);
    o->jp = NULL;
    if (!strcmp(arg, "delete")) {
        o->kind = WAIT_DELETE;
        return 0;
    }
    if (!strncmp(arg, "condition=", 10)) {
        const char *t = arg + 10, *eq = strchr(t, '=');
        if (!*t || eq == t)
            return -cli__usage_error(c, "condition name must be given: --for=condition=NAME");
        o->cond_type = eq ? xstrndup(t, (size_t)(eq - t)) : xstrdup(t);
        o->value = xstrdup(eq ? eq + 1 : "True");
        o->kind = WAIT_CONDITION;
        return 0;
    }
    if (!strncmp(arg, "jsonpath=", 9))
        return parse_jsonpath_for(c, o, arg + 9);
    return -cli__usage_error(c, "unrecognized condition: \"%s\" (use condition=NAME[=VALUE], "
                             "jsonpath='{EXPR}'=VALUE or delete)", arg);
}

static int on_opt(struct cli_ctx *c, void *st, int code, const char *arg)
{
    struct wait_opts *o = st;
    if (code == OPT_FOR)
        return parse_for(c, o, arg);
    if (code == 'q')
        o->quiet = true;
    if (code == OPT_TIMEOUT &&
        (cu_duration_parse_ms(arg, &o->timeout_ms, NULL) || o->timeout_ms < 0))
        return -cli__usage_error(c, "invalid --timeout \"%s\" (e.g. 30s, 5m)", arg);
    return 0;
}

static bool condition_met(const struct wait_opts *o, const json_t *obj)
{
    size_t i;
    json_t *cond;
    json_int_t gen = JX_INT(obj, -1, "metadata", "generation");
    json_array_foreach(JX_GET(obj, "status", "conditions"), i, cond) {
        if (strcasecmp(jx_or_empty(JX_STR(cond, "type")), o->cond_type))
            continue;
        json_t *og = JX_GET(cond, "observedGeneration");
        if (json_is_integer(og) && gen >= 0 && json_integer_value(og) != gen)
            continue;
        return !strcasecmp(jx_or_empty(JX_STR(cond, "status")), o->value);
    }
    return false;
}

static bool jsonpath_met(const struct wait_opts *o, const json_t *obj)
{
    json_t *vals = cli__jsonpath_values(o->jp, obj);
    bool met = false;
    if (!o->value) {
        met = json_array_size(vals) > 0;
    } else if (json_array_size(vals) == 1) {
        const json_t *v = json_array_get(vals, 0);
        char *text = json_is_string(v) ? xstrdup(json_string_value(v)) : jx_dumps(v);
        met = !strcmp(text, o->value);
        xfree(text);
    }
    json_decref(vals);
    return met;
}

static bool object_met(const struct wait_opts *o, const json_t *obj)
{
    if (o->kind == WAIT_CONDITION)
        return condition_met(o, obj);
    if (o->kind == WAIT_JSONPATH)
        return jsonpath_met(o, obj);
    return false;
}

/* What the progress line says of obj: deletion, status.phase, every
 * condition as Type=Status (with its reason when not True), a Workload's
 * admission checks as check NAME=STATE, and the --for jsonpath's value. */
static char *state_text(const struct wait_opts *o, const json_t *obj)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    const char *sep = "";
    if (JX_GET(obj, "metadata", "deletionTimestamp")) {
        sbuf_adds(&sb, "deleting");
        sep = ", ";
    }
    const char *phase = JX_STR(obj, "status", "phase");
    if (phase) {
        sbuf_addf(&sb, "%sphase=%s", sep, phase);
        sep = ", ";
    }
    size_t i;
    json_t *x;
    json_array_foreach(JX_GET(obj, "status", "conditions"), i, x) {
        const char *st = jx_or_empty(JX_STR(x, "status")), *reason = JX_STR(x, "reason");
        sbuf_addf(&sb, "%s%s=%s", sep, jx_or_empty(JX_STR(x, "type")), st);
        if (strcmp(st, "True") && reason && *reason)
            sbuf_addf(&sb, "(%s)", reason);
        sep = ", ";
    }
    json_array_foreach(JX_GET(obj, "status", "admissionChecks"), i, x) {
        sbuf_addf(&sb, "%scheck %s=%s", sep, jx_or_empty(JX_STR(x, "name")),
                  jx_or_empty(JX_STR(x, "state")));
        sep = ", ";
    }
    if (o->kind == WAIT_JSONPATH) {
        json_t *vals = cli__jsonpath_values(o->jp, obj);
        char *text = jx_dumps(vals);
        sbuf_addf(&sb, "%svalue=%s", sep, text);
        xfree(text);
        json_decref(vals);
        sep = ", ";
    }
    if (!sb.len)
        sbuf_adds(&sb, "exists");
    return cli__sbuf_done(&sb);
}

/* One object's wait: the watch stream's reader and the progress shown. */
struct waiter {
    struct cli_ctx *c;
    const struct wait_opts *o;
    const struct api_kind *k;
    const char *name;
    bool progress;    /* print state changes */
    int64_t start_ms;
    char *last;       /* last state printed */
    char rv[64];      /* resourceVersion to watch from */
    bool met, expired;
};

static void show_state(struct waiter *w, const char *state)
{
    if (!w->progress || (w->last && !strcmp(w->last, state)))
        return;
    xfree(w->last);
    w->last = xstrdup(state);
    fprintf(w->c->out, "[%llds] %s/%s: %s\n",
            (long long)((cli__now_ms() - w->start_ms) / 1000), cli__kind_prefix(w->k), w->name,
            state);
    fflush(w->c->out);
}

static void observe(struct waiter *w, const json_t *obj)
{
    const char *rv = JX_STR(obj, "metadata", "resourceVersion");
    if (rv)
        snprintf(w->rv, sizeof(w->rv), "%s", rv);
    char *st = state_text(w->o, obj);
    show_state(w, st);
    xfree(st);
    w->met = object_met(w->o, obj);
}

static int on_watch_line(void *st, const char *line, size_t n)
{
    struct waiter *w = st;
    json_error_t je;
    json_t *ev = json_loadb(line, n, 0, &je);
    if (!ev)
        return 0; /* keep-alive */
    const char *type = jx_or_empty(JX_STR(ev, "type"));
    const json_t *obj = JX_GET(ev, "object");
    if (!strcmp(type, "ERROR")) {
        w->expired = true; /* 410 Expired (or another error): read again */
    } else if (!strcmp(type, "DELETED")) {
        w->met = w->o->kind == WAIT_DELETE;
        show_state(w, "deleted");
        w->rv[0] = '\0'; /* a new object of that name: watch from a fresh read */
        w->expired = !w->met;
    } else if (!strcmp(type, "BOOKMARK")) {
        const char *rv = JX_STR(obj, "metadata", "resourceVersion");
        if (rv)
            snprintf(w->rv, sizeof(w->rv), "%s", rv);
    } else if (obj) {
        observe(w, obj);
    }
    json_decref(ev);
    return w->met || w->expired;
}

static int watch_sink(void *st, const char *data, size_t n)
{
    return cli__lines_feed(st, data, n);
}

/* Follow the object's watch from w->rv until it is met, the stream ends
 * (the server's timeoutSeconds at the deadline) or needs a fresh read.
 * Returns 0, or 1 when the server could not be reached or refused. */
static int follow(struct waiter *w, const char *ns, int64_t deadline_ms)
{
    struct sbuf path;
    sbuf_init(&path, 0);
    if (cli__path(w->c, &path, w->k, ns, NULL, NULL) != 0) {
        sbuf_release(&path);
        return 1;
    }
    char *fs = xasprintf("metadata.name=%s", w->name);
    char secs[32];
    int64_t left = deadline_ms - cli__now_ms();
    snprintf(secs, sizeof(secs), "%lld", (long long)(left > 0 ? (left + 999) / 1000 : 1));
    cli__query(&path, "watch", "true");
    cli__query(&path, "fieldSelector", fs);
    cli__query(&path, "allowWatchBookmarks", "true");
    cli__query(&path, "timeoutSeconds", secs);
    if (w->rv[0])
        cli__query(&path, "resourceVersion", w->rv);
    xfree(fs);
    struct cli_lines lines;
    cli__lines_init(&lines, on_watch_line, w);
    struct cli_call r;
    cli__call_init(&r);
    int rc = cli__http_stream(w->c, path.buf, CLI_JSON, watch_sink, &lines, &r);
    cli__lines_finish(&lines);
    int out = 0;
    if (rc != 0)
        out = cli__print_unreachable(w->c, &r);
    else if (r.http_status && !cli__call_ok(&r))
        out = cli__print_call_error(w->c, &r, w->k, w->name, "watch", NULL);
    cli__call_release(&r);
    sbuf_release(&path);
    return out ? 1 : 0;
}

/* Read the object (first: a missing one is an error unless waiting for
 * its deletion). Returns 0, or 1 on an error. */
static int read_object(struct waiter *w, const char *ns, bool first)
{
    json_t *obj = NULL;
    int rc = cli__get_object(w->c, w->k, ns, w->name, w->o->kind == WAIT_DELETE || !first, &obj);
    w->expired = false;
    w->rv[0] = '\0';
    if (rc == CU_ENOTFOUND && w->o->kind == WAIT_DELETE) {
        w->met = true;
    } else if (rc == CU_ENOTFOUND && !first) {
        show_state(w, "not found");
    } else if (rc != 0) {
        return 1;
    } else {
        observe(w, obj);
    }
    json_decref(obj);
    return 0;
}

/* Wait for one object. Returns 0 when met, 1 on error or timeout. */
static int wait_one(struct cli_ctx *c, const struct wait_opts *o, const struct api_kind *k,
                    const char *name, int64_t deadline_ms)
{
    const char *ns = cli__ns_for(c, k);
    struct waiter w = {c, o, k, name, !o->quiet && isatty(fileno(c->out)), cli__now_ms(),
                       NULL, "", false, false};
    int rc = read_object(&w, ns, true);
    while (rc == 0 && !w.met && cli__now_ms() < deadline_ms) {
        if (!w.rv[0]) {
            /* not there (yet again): nothing to watch from; look again soon */
            cli__sleep_ms(200);
            rc = read_object(&w, ns, false);
            continue;
        }
        rc = follow(&w, ns, deadline_ms);
        if (rc == 0 && !w.met && (w.expired || !w.rv[0]))
            rc = read_object(&w, ns, false);
    }
    xfree(w.last);
    if (rc != 0)
        return 1;
    if (!w.met)
        return cli__error(c, "timed out waiting for the condition on %s/%s", k->plural, name);
    fprintf(c->out, "%s/%s condition met\n", cli__kind_prefix(k), name);
    fflush(c->out);
    return 0;
}

static int wait_targets(struct cli_ctx *c, const struct wait_opts *o, struct cli_args *a)
{
    int64_t deadline = cli__now_ms() + o->timeout_ms;
    struct cli_targets t = {0};
    int rc = a->n ? cli__parse_targets(c, a, &t)
                  : cli__usage_error(c, "resource(s) to wait for must be given: KIND/NAME");
    for (size_t i = 0; rc == 0 && i < t.n; i++)
        if (!t.items[i].name)
            rc = cli__usage_error(c, "a name must be given: %s/NAME", t.items[i].k->singular);
    int failed = 0;
    for (size_t i = 0; rc == 0 && i < t.n && !c->unreachable; i++)
        failed |= wait_one(c, o, t.items[i].k, t.items[i].name, deadline);
    xfree(t.items);
    return rc || failed;
}

int cli__cmd_wait(struct cli_ctx *c, int argc, char **argv)
{
    struct wait_opts o = {.timeout_ms = 30000};
    struct cli_args a;
    int rc = cli__parse(c, &verb, argc, argv, on_opt, &o, &a);
    if (rc == 0 && o.kind == WAIT_NONE)
        rc = cli__usage_error(c, "--for must be given");
    if (rc == 0)
        rc = wait_targets(c, &o, &a);
    xfree(o.cond_type);
    xfree(o.value);
    cli__jsonpath_free(o.jp);
    return rc == CLI_HELP ? 0 : rc != 0;
}
