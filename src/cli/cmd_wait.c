/*
 * cmd_wait: `cueue wait --for=condition=C[=V] | --for=delete |
 * --for=jsonpath='{...}'[=V] KIND/NAME... [--timeout=30s]`. Polls each object
 * (every 200 ms) until the condition holds, with kubectl's rules: a
 * condition matches by type and status case-insensitively and only when its
 * observedGeneration is absent or equals metadata.generation; an object
 * missing at the start is an error except for --for=delete.
 */
#include <string.h>
#include <strings.h>

#include "cli/cli-int.h"
#include "util/duration.h"
#include "util/err.h"
#include "util/jsonx.h"
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
    "Prints KIND/NAME condition met for each object; exits 1 on timeout.\n"
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
    "  -n, --namespace NS      namespace (default \"default\")\n"
    "      --server URL        API server\n";

enum { OPT_FOR = 256, OPT_TIMEOUT };

static const struct option opts[] = {
    {"for", required_argument, NULL, OPT_FOR},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {0, 0, 0, 0},
};

static const struct cli_verb verb = {"wait", help, opts, NULL};

enum wait_kind { WAIT_NONE, WAIT_CONDITION, WAIT_DELETE, WAIT_JSONPATH };

struct wait_opts {
    enum wait_kind kind;
    char *cond_type;
    char *value; /* expected value, NULL = exists (jsonpath) */
    struct cli_jsonpath *jp;
    int64_t timeout_ms;
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

/* Wait for one object. Returns 0 when met, 1 on error or timeout. */
static int wait_one(struct cli_ctx *c, const struct wait_opts *o, const struct api_kind *k,
                    const char *name, int64_t deadline_ms)
{
    const char *ns = cli__ns_for(c, k);
    for (bool first = true;; first = false) {
        json_t *obj = NULL;
        int rc = cli__get_object(c, k, ns, name, o->kind == WAIT_DELETE || !first, &obj);
        bool met = false;
        if (rc == CU_ENOTFOUND && o->kind == WAIT_DELETE)
            met = true;
        else if (rc != 0 && (first || rc != CU_ENOTFOUND))
            return 1;
        else if (rc == 0 && o->kind == WAIT_CONDITION)
            met = condition_met(o, obj);
        else if (rc == 0 && o->kind == WAIT_JSONPATH)
            met = jsonpath_met(o, obj);
        json_decref(obj);
        if (met) {
            fprintf(c->out, "%s/%s condition met\n", cli__kind_prefix(k), name);
            fflush(c->out);
            return 0;
        }
        if (cli__now_ms() >= deadline_ms)
            return cli__error(c, "timed out waiting for the condition on %s/%s", k->plural, name);
        cli__sleep_ms(200);
    }
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
