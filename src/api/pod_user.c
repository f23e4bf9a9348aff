/*
 * pod_user: who a pod's container runs as (api_pod_run_as in object.h).
 * Kubernetes' rules for the fields (securityContext runAsUser, runAsGroup
 * on the pod and the container, the container's winning; the pod's
 * supplementalGroups and fsGroup) with the server's policy on top
 * (docs/security.md, "Who a pod runs as"): a root server never runs a pod
 * as root by accident. Pure: admission (schema_pod.c) and the local
 * executor (src/exec/local.c) call the same function, so what is admitted
 * is what runs.
 */
#include <stdio.h>
#include <string.h>

#include "api/object.h"
#include "util/jsonx.h"

#define ID_MAX 2147483647 /* Kubernetes: runAsUser/runAsGroup are int64 in 0..2^31-1 */

/* A securityContext field: the container's, else the pod's. */
static const json_t *field_of(const json_t *spec, const json_t *ctr, const char *name,
                              bool *in_ctr)
{
    const json_t *v = JX_GET(ctr, "securityContext", name);
    *in_ctr = v != NULL;
    return v ? v : JX_GET(spec, "securityContext", name);
}

/* An id in range, or 1 with why filled. */
static int check_id(json_int_t v, char *why, size_t whylen)
{
    if (v < 0 || v > ID_MAX) {
        snprintf(why, whylen, "must be between 0 and %d, inclusive", ID_MAX);
        return 1;
    }
    return 0;
}

static int root_refused(const struct api_pod_policy *pol, const char *what, char *why,
                        size_t whylen)
{
    if (pol && pol->allow_root)
        return 0;
    snprintf(why, whylen, "running pods as %s 0 (root) is disallowed by cluster policy "
             "(cueue server --allow-root-pods)", what);
    return 1;
}

/* One id field (runAsUser or runAsGroup): *out = its value, else dflt. */
static int resolve_id(const struct api_pod_policy *pol, const json_t *spec, const json_t *ctr,
                      const char *name, uint32_t dflt, uint32_t server_id, uint32_t *out,
                      bool *in_ctr, char *why, size_t whylen)
{
    const json_t *v = field_of(spec, ctr, name, in_ctr);
    *out = dflt;
    if (!json_is_integer(v))
        return 0;
    json_int_t id = json_integer_value(v);
    const char *what = !strcmp(name, "runAsUser") ? "uid" : "gid";
    if (check_id(id, why, whylen))
        return 1;
    if (pol && !pol->switch_user && (uint32_t)id != server_id) {
        snprintf(why, whylen, "cueue server runs as %s %u, not as root: it runs pods as that "
                 "%s and cannot run them as %s %lld (a server started as root can)",
                 what, (unsigned)server_id, !strcmp(what, "uid") ? "user" : "group", what,
                 (long long)id);
        return 1;
    }
    if (id == 0 && (!pol || pol->switch_user) && root_refused(pol, what, why, whylen))
        return 1;
    *out = (uint32_t)id;
    return 0;
}

static int add_group(struct api_run_as *out, uint32_t g, char *why, size_t whylen)
{
    for (size_t i = 0; i < out->n_groups; i++)
        if (out->groups[i] == g)
            return 0;
    if (out->n_groups == API_RUN_AS_MAX_GROUPS) {
        snprintf(why, whylen, "must have at most %d groups", API_RUN_AS_MAX_GROUPS - 2);
        return 1;
    }
    out->groups[out->n_groups++] = g;
    return 0;
}

/* A group id of the pod's supplementalGroups or fsGroup into out. */
static int pod_group(const struct api_pod_policy *pol, const json_t *v, struct api_run_as *out,
                     char *why, size_t whylen)
{
    if (!json_is_integer(v))
        return 0;
    json_int_t g = json_integer_value(v);
    if (check_id(g, why, whylen))
        return 1;
    if (g == 0 && (!pol || pol->switch_user) && root_refused(pol, "gid", why, whylen))
        return 1;
    return out->switch_user ? add_group(out, (uint32_t)g, why, whylen) : 0;
}

int api_pod_run_as(const struct api_pod_policy *pol, const json_t *spec, const json_t *ctr,
                   struct api_run_as *out, const char **field, bool *in_ctr, char *why,
                   size_t whylen)
{
    memset(out, 0, sizeof(*out));
    out->switch_user = pol && pol->switch_user;
    uint32_t du = pol ? (pol->switch_user ? pol->pod_uid : pol->server_uid) : 0;
    uint32_t dg = pol ? (pol->switch_user ? pol->pod_gid : pol->server_gid) : 0;
    *field = "runAsUser";
    if (resolve_id(pol, spec, ctr, "runAsUser", du, pol ? pol->server_uid : 0, &out->uid, in_ctr,
                   why, whylen))
        return 1;
    *field = "runAsGroup";
    if (resolve_id(pol, spec, ctr, "runAsGroup", dg, pol ? pol->server_gid : 0, &out->gid,
                   in_ctr, why, whylen))
        return 1;
    *in_ctr = false;
    const json_t *fs = JX_GET(spec, "securityContext", "fsGroup");
    const json_t *pg = JX_GET(spec, "securityContext", "runAsGroup");
    out->sandbox_gid = json_is_integer(fs) && json_integer_value(fs) >= 0 &&
                               json_integer_value(fs) <= ID_MAX
                           ? (uint32_t)json_integer_value(fs)
                       : json_is_integer(pg) && json_integer_value(pg) >= 0 &&
                               json_integer_value(pg) <= ID_MAX
                           ? (uint32_t)json_integer_value(pg)
                           : dg;
    if (out->sandbox_gid == 0 && !(pol && pol->allow_root))
        out->sandbox_gid = dg; /* a pod-level 0 every container overrides */
    if (out->switch_user && add_group(out, out->sandbox_gid, why, whylen))
        return 1;
    *field = "supplementalGroups";
    size_t i;
    const json_t *g;
    json_array_foreach(JX_GET(spec, "securityContext", "supplementalGroups"), i, g) {
        if (pod_group(pol, g, out, why, whylen))
            return 1;
    }
    *field = "fsGroup";
    return pod_group(pol, fs, out, why, whylen);
}
