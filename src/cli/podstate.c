/*
 * podstate: why a pod failed, in words, from its status alone (pure).
 * `cueue logs job/NAME` ends a failed Job's output with these lines for
 * pods that wrote nothing (a container that could not start leaves an
 * empty log, and the Job's BackoffLimitExceeded says nothing about why),
 * and describe uses the same container-state reading.
 */
#include <string.h>

#include "cli/cli-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

/* A terminated state that counts as a failure: non-zero exit code, or a
 * StartError (the executor could not start the process). */
static bool failed_state(const json_t *t)
{
    return t && (JX_INT(t, 0, "exitCode") != 0 ||
                 !strcmp(jx_or_empty(JX_STR(t, "reason")), "StartError"));
}

static char *state_text(const json_t *t, bool terminated)
{
    struct sbuf sb;
    const char *reason = JX_STR(t, "reason"), *msg = JX_STR(t, "message");
    sbuf_init(&sb, 0);
    sbuf_adds(&sb, reason && *reason ? reason : (terminated ? "Error" : "Waiting"));
    if (msg && *msg)
        sbuf_addf(&sb, ": %s", msg);
    if (terminated)
        sbuf_addf(&sb, " (exit code %lld)", (long long)JX_INT(t, 0, "exitCode"));
    return cli__sbuf_done(&sb);
}

char *cli__pod_failure(const json_t *pod)
{
    const char *which[] = {"state", "lastState"};
    size_t i;
    json_t *cs;
    for (size_t w = 0; w < 2; w++) {
        json_array_foreach(JX_GET(pod, "status", "containerStatuses"), i, cs) {
            const json_t *t = JX_GET(cs, which[w], "terminated");
            if (failed_state(t))
                return state_text(t, true);
        }
    }
    if (strcmp(jx_or_empty(JX_STR(pod, "status", "phase")), "Failed"))
        return NULL;
    json_array_foreach(JX_GET(pod, "status", "containerStatuses"), i, cs) {
        const json_t *t = JX_GET(cs, "state", "waiting");
        if (t && JX_STR(t, "reason"))
            return state_text(t, false);
    }
    const char *reason = JX_STR(pod, "status", "reason"), *msg = JX_STR(pod, "status", "message");
    if (msg && *msg)
        return xasprintf("%s: %s", reason && *reason ? reason : "Failed", msg);
    return xstrdup(reason && *reason ? reason : "Failed");
}

void cli__pod_failure_lines(const json_t *pods, const bool *quiet, struct sbuf *sb)
{
    size_t n = json_array_size(pods);
    char **why = xcalloc(n ? n : 1, sizeof(*why));
    for (size_t i = 0; i < n; i++)
        why[i] = quiet[i] ? cli__pod_failure(json_array_get(pods, i)) : NULL;
    for (size_t i = 0; i < n; i++) {
        if (!why[i])
            continue;
        size_t same = 0;
        for (size_t j = i + 1; j < n; j++) {
            if (why[j] && !strcmp(why[j], why[i])) {
                same++;
                XFREE(why[j]);
            }
        }
        sbuf_addf(sb, "Pod '%s' failed: %s",
                  jx_or_empty(JX_STR(json_array_get(pods, i), "metadata", "name")), why[i]);
        if (same)
            sbuf_addf(sb, " (and %zu more pod%s with the same error)", same, same > 1 ? "s" : "");
        sbuf_addc(sb, '\n');
        XFREE(why[i]);
    }
    xfree(why);
}
