/*
 * cmd_logs: `cueue logs pod/NAME | NAME | job/NAME [-c C] [-f] [--prefix]`.
 * A pod's log comes from .../pods/NAME/log (container: -c, else the
 * kubectl.kubernetes.io/default-container annotation, else the first). A
 * Job's logs are those of all its pods (selected by the job's
 * spec.selector, else batch.kubernetes.io/controller-uid=<uid>) in
 * completion-index order, one pod after the other; with -f they are
 * followed together (logs_follow.c) and lines never interleave mid-line;
 * both read the pods through logs_pods.c.
 * Once the Job has finished the output ends with "Job 'NAME' succeeded" or
 * "Job 'NAME' failed: REASON", as Ray's job submitter ends its log.
 * Lines get a "[pod-name] " prefix only with --prefix and several pods.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli-int.h"
#include "cli/logs-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static const char help[] =
    "Print the logs of a pod, or of every pod of a Job.\n"
    "\n"
    "Usage:\n"
    "  cueue logs pod/NAME | NAME [-c CONTAINER] [-f]\n"
    "  cueue logs job/NAME [-c CONTAINER] [-f] [--prefix]\n"
    "\n"
    "For a Job, the logs of all its pods are printed in completion-index order\n"
    "(pod 0 first). With -f they are followed together until the Job ends, each\n"
    "line printed whole as it arrives. Lines are printed as the pods wrote them;\n"
    "--prefix adds \"[POD] \" before each line when the Job has several pods. When\n"
    "the Job has finished, the output ends with \"Job 'NAME' succeeded\" or\n"
    "\"Job 'NAME' failed: REASON\".\n"
    "\n"
    "Examples:\n"
    "  cueue logs job/rayjob-tpu-v6e-dws-1\n"
    "  cueue logs -f job/train --prefix\n"
    "  cueue logs train-0-x7k2p -c worker --tail=20\n"
    "\n"
    "Flags:\n"
    "  -c, --container NAME   container (default: the pod's default, else its first)\n"
    "  -f, --follow           keep printing new lines until the pod or Job ends\n"
    "      --prefix           prefix each line with [POD] (Jobs with several pods)\n"
    "      --tail N           only the last N lines of each pod (-1: every line)\n"
    "      --timestamps       prefix each line with its RFC 3339 time\n"
    "  -n, --namespace NS     namespace (default \"default\")\n"
    "      --server URL       API server\n";

enum { OPT_PREFIX = 256, OPT_TAIL, OPT_TIMESTAMPS };

static const struct option opts[] = {
    {"container", required_argument, NULL, 'c'},
    {"follow", no_argument, NULL, 'f'},
    {"prefix", no_argument, NULL, OPT_PREFIX},
    {"tail", required_argument, NULL, OPT_TAIL},
    {"timestamps", no_argument, NULL, OPT_TIMESTAMPS},
    {0, 0, 0, 0},
};

static const struct cli_verb verb = {"logs", help, opts, "c:f"};

static int on_opt(struct cli_ctx *c, void *st, int code, const char *arg)
{
    struct logs_opts *o = st;
    switch (code) {
    case 'c':
        o->container = arg;
        return 0;
    case 'f':
        o->follow = true;
        return 0;
    case OPT_PREFIX:
        o->prefix = true;
        return 0;
    case OPT_TAIL:
        /* kubectl: -1 (the default) is every line; any int64 count is allowed */
        if (!strcmp(arg, "-1")) {
            o->tail = NULL;
            return 0;
        }
        if (!*arg || strspn(arg, "0123456789") != strlen(arg) || strlen(arg) > 18)
            return -cli__usage_error(c, "invalid --tail \"%s\": must be -1 (every line) or a "
                                     "number of lines", arg);
        o->tail = arg;
        return 0;
    case OPT_TIMESTAMPS:
        o->timestamps = true;
        return 0;
    }
    return -1;
}

/* Print "[pod] " before each line of text (used without -f). */
static void print_prefixed(struct cli_ctx *c, const char *pod, const char *text, size_t n)
{
    while (n > 0) {
        const char *nl = memchr(text, '\n', n);
        size_t len = nl ? (size_t)(nl - text) : n;
        fprintf(c->out, "[%s] %.*s\n", pod, (int)len, text);
        if (!nl)
            break;
        n -= len + 1;
        text = nl + 1;
    }
}

/* Print one pod's whole log; *quiet says whether it printed nothing.
 * Returns 0, or 1 after printing the error. allow_pending: part of a Job's
 * log (pods that have not started are reported without failing it, and an
 * unterminated last line is ended). */
static int print_pod_log(struct cli_ctx *c, const struct logs_opts *o, const json_t *pod,
                         bool prefix, bool allow_pending, bool *quiet)
{
    struct sbuf path;
    struct cli_call r;
    const char *name = jx_or_empty(JX_STR(pod, "metadata", "name"));
    int rc = 0;
    *quiet = true;
    sbuf_init(&path, 0);
    cli__call_init(&r);
    if (logs__pod_path(c, o, pod, false, &path) != 0) {
        rc = 1;
    } else if (cli__http(c, "GET", path.buf, "*/*", NULL, NULL, &r) != 0) {
        rc = cli__print_unreachable(c, &r);
    } else if (!cli__call_ok(&r)) {
        const char *phase = jx_or_empty(JX_STR(pod, "status", "phase"));
        if (allow_pending && !strcmp(phase, "Pending"))
            fprintf(c->err, "pod/%s has not started yet (Pending)\n", name);
        else
            rc = cli__print_call_error(c, &r, api_kind_get(KIND_POD), name, "get", NULL);
    } else if (prefix) {
        print_prefixed(c, name, r.body.buf, r.body.len);
        *quiet = r.body.len == 0;
    } else {
        fwrite(r.body.buf, 1, r.body.len, c->out);
        *quiet = r.body.len == 0;
        /* a Job's log goes on after this pod's (another pod, the final
         * line): a last line without its newline gets one */
        if (allow_pending && r.body.len && r.body.buf[r.body.len - 1] != '\n')
            fputc('\n', c->out);
    }
    fflush(c->out);
    cli__call_release(&r);
    sbuf_release(&path);
    return rc;
}

static int stream_to_out(void *st, const char *data, size_t n)
{
    struct cli_ctx *c = st;
    fwrite(data, 1, n, c->out);
    fflush(c->out);
    return 0;
}

static int pod_logs(struct cli_ctx *c, const struct logs_opts *o, const char *name)
{
    json_t *pod;
    const struct api_kind *k = api_kind_get(KIND_POD);
    if (cli__get_object(c, k, c->ns, name, false, &pod) != 0)
        return 1;
    json_t *containers = JX_GET(pod, "spec", "containers");
    if (!o->container && json_array_size(containers) > 1 &&
        !JX_STR(pod, "metadata", "annotations", "kubectl.kubernetes.io/default-container")) {
        fprintf(c->err, "Defaulted container \"%s\" out of:",
                jx_or_empty(JX_STR(json_array_get(containers, 0), "name")));
        for (size_t i = 0; i < json_array_size(containers); i++)
            fprintf(c->err, "%s %s", i ? "," : "",
                    jx_or_empty(JX_STR(json_array_get(containers, i), "name")));
        fputc('\n', c->err);
    }
    int rc = 0;
    bool quiet;
    if (!o->follow) {
        rc = print_pod_log(c, o, pod, false, false, &quiet);
    } else {
        struct sbuf path;
        struct cli_call r;
        sbuf_init(&path, 0);
        cli__call_init(&r);
        if (logs__pod_path(c, o, pod, true, &path) != 0)
            rc = 1;
        else if (cli__http_stream(c, path.buf, "*/*", stream_to_out, c, &r) != 0)
            rc = cli__print_unreachable(c, &r);
        else if (!cli__call_ok(&r))
            rc = cli__print_call_error(c, &r, k, name, "get", NULL);
        cli__call_release(&r);
        sbuf_release(&path);
    }
    json_decref(pod);
    return rc;
}

static int job_logs(struct cli_ctx *c, const struct logs_opts *o, const char *name)
{
    json_t *job, *pods = NULL;
    if (cli__get_object(c, api_kind_get(KIND_JOB), c->ns, name, false, &job) != 0)
        return 1;
    if (o->follow) {
        int rc = logs__follow_job(c, o, job);
        json_decref(job);
        return rc;
    }
    int rc = logs__job_pods(c, job, &pods);
    char *final = cli__job_final_line(job);
    if (rc == 0) {
        size_t n = json_array_size(pods);
        bool *quiet = xcalloc(n ? n : 1, sizeof(*quiet));
        if (n == 0 && !final)
            fprintf(c->err, "job/%s has no pods yet%s\n", name,
                    JX_BOOL(job, false, "spec", "suspend") ? " (suspended: waiting for admission)"
                                                           : "");
        for (size_t i = 0; i < n && !c->unreachable; i++)
            rc |= print_pod_log(c, o, json_array_get(pods, i), o->prefix && n > 1, true,
                                &quiet[i]);
        if (final && !c->unreachable && rc == 0)
            logs__print_final(c, job, pods, quiet, final);
        xfree(quiet);
    }
    xfree(final);
    json_decref(pods);
    json_decref(job);
    return rc;
}

int cli__cmd_logs(struct cli_ctx *c, int argc, char **argv)
{
    struct logs_opts o = {0};
    struct cli_args a;
    int rc = cli__parse(c, &verb, argc, argv, on_opt, &o, &a);
    if (rc)
        return rc == CLI_HELP ? 0 : 1;
    if (a.n != 1)
        return cli__usage_error(c, a.n ? "logs takes one of pod/NAME, job/NAME or NAME"
                                       : "a pod or job must be given: logs pod/NAME | job/NAME");
    const char *name = a.v[0], *slash = strchr(name, '/');
    const struct api_kind *k = api_kind_get(KIND_POD);
    if (slash && strchr(slash + 1, '/'))
        return cli__error(c, "arguments in resource/name form may not have more than one slash");
    if (slash && (slash == name || !slash[1]))
        return cli__error(c, "arguments in resource/name form must have a single resource and "
                          "name");
    if (slash) {
        k = cli__resolve_kind(c, name, &name, NULL);
        if (!k)
            return 1;
    }
    if (cli__check_name(c, name) != 0)
        return 1;
    if (k->id == KIND_JOB)
        return job_logs(c, &o, name);
    if (k->id == KIND_POD)
        return pod_logs(c, &o, name);
    return cli__error(c, "cannot get logs of a %s: use pod/NAME or job/NAME", k->kind);
}
