/*
 * describe_workload: the Workload view. Pod sets with their counts and
 * container requests; once quota is reserved, the admission (ClusterQueue,
 * the flavor chosen for each resource of each pod set, counts, usage) and
 * the admission checks' states; while pending, the pending reason and
 * message from the QuotaReserved condition and, when the server serves
 * Kueue's visibility API, the workload's position in its queues (plus
 * cueue's optional blockers / estimatedAdmissionTime fields there).
 */
#include <string.h>

#include "api/meta.h"
#include "cli/describe-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

/* Requests of a pod template's containers: "cpu=8, memory=16Gi" (with
 * "name: " before each when there are several containers). Caller frees. */
static char *template_requests(const json_t *tmpl)
{
    json_t *containers = JX_GET(tmpl, "spec", "containers");
    struct sbuf sb;
    size_t i;
    json_t *ct;
    sbuf_init(&sb, 0);
    json_array_foreach(containers, i, ct) {
        json_t *req = JX_GET(ct, "resources", "requests");
        if (!req)
            req = JX_GET(ct, "resources", "limits");
        char *t = desc__map_text(req);
        if (json_array_size(containers) > 1)
            sbuf_addf(&sb, "%s%s: %s", i ? "; " : "", jx_or_empty(JX_STR(ct, "name")), t);
        else
            sbuf_adds(&sb, t);
        xfree(t);
    }
    return cli__sbuf_done(&sb);
}

static void pod_sets(struct cli_ctx *c, const json_t *wl)
{
    struct cli_table t;
    size_t i;
    json_t *ps;
    cli__table_init(&t, 4);
    cli__table_rowv(&t, "Name", "Count", "Min Count", "Requests (per pod)");
    json_array_foreach(JX_GET(wl, "spec", "podSets"), i, ps) {
        char *count = desc__scalar(JX_GET(ps, "count"));
        char *min = desc__scalar(JX_GET(ps, "minCount"));
        char *req = template_requests(JX_GET(ps, "template"));
        cli__table_rowv(&t, JX_STR(ps, "name"), count, min, req);
        xfree(count);
        xfree(min);
        xfree(req);
    }
    cli__desc_table(c, 0, "Pod Sets", &t);
}

static void admission(struct cli_ctx *c, const json_t *adm)
{
    struct cli_table t;
    size_t i;
    json_t *psa;
    cli__desc_kv(c, 0, "Admission", NULL);
    cli__desc_kv(c, 1, "Cluster Queue", "%s", desc__or_none(JX_STR(adm, "clusterQueue")));
    cli__table_init(&t, 4);
    cli__table_rowv(&t, "Pod Set", "Count", "Flavors", "Resource Usage");
    json_array_foreach(JX_GET(adm, "podSetAssignments"), i, psa) {
        char *count = desc__scalar(JX_GET(psa, "count"));
        char *flavors = desc__map_text(JX_GET(psa, "flavors"));
        char *usage = desc__map_text(JX_GET(psa, "resourceUsage"));
        cli__table_rowv(&t, JX_STR(psa, "name"), count, flavors, usage);
        xfree(count);
        xfree(flavors);
        xfree(usage);
    }
    cli__table_print(&t, c->out, "    ");
    cli__table_release(&t);
}

static void checks(struct cli_ctx *c, const json_t *wl)
{
    json_t *acs = JX_GET(wl, "status", "admissionChecks");
    if (!json_array_size(acs))
        return;
    struct cli_table t;
    size_t i;
    json_t *ac;
    cli__table_init(&t, 4);
    cli__table_rowv(&t, "Name", "State", "Age", "Message");
    json_array_foreach(acs, i, ac) {
        char age[32];
        const char *when = JX_STR(ac, "lastTransitionTime");
        cli__table_rowv(&t, JX_STR(ac, "name"), JX_STR(ac, "state"),
                        when ? cli__age(when, age) : "", JX_STR(ac, "message"));
    }
    cli__desc_table(c, 0, "Admission Checks", &t);
}

#define VISIBILITY_PAGE 1000

/* The workload's entry in Kueue's visibility API for its LocalQueue, or
 * NULL (API not served, or not queued). The API pages with limit and
 * offset: pages are read until the entry or a short page. New ref. */
static json_t *visibility_entry(struct cli_ctx *c, const json_t *wl)
{
    const char *ns = JX_STR(wl, "metadata", "namespace");
    const char *lq = JX_STR(wl, "spec", "queueName");
    const char *name = JX_STR(wl, "metadata", "name");
    char err[256];
    if (!ns || !name || !lq || cli__segment_check("namespace", ns, err, sizeof(err)) ||
        cli__segment_check("resource name", lq, err, sizeof(err)))
        return NULL;
    json_t *hit = NULL;
    for (long offset = 0; !hit; offset += VISIBILITY_PAGE) {
        struct sbuf path;
        struct cli_call r;
        char num[32];
        size_t i, got = 0;
        json_t *it;
        sbuf_init(&path, 0);
        cli__pending_workloads_path(c, &path, ns, lq);
        snprintf(num, sizeof(num), "%d", VISIBILITY_PAGE);
        cli__query(&path, "limit", num);
        snprintf(num, sizeof(num), "%ld", offset);
        cli__query(&path, "offset", num);
        cli__call_init(&r);
        if (cli__http(c, "GET", path.buf, CLI_JSON, NULL, NULL, &r) == 0 && cli__call_ok(&r)) {
            got = json_array_size(JX_GET(r.json, "items"));
            json_array_foreach(JX_GET(r.json, "items"), i, it)
                if (!hit && !strcmp(jx_or_empty(JX_STR(it, "metadata", "name")), name))
                    hit = json_incref(it);
        }
        cli__call_release(&r);
        sbuf_release(&path);
        if (got < VISIBILITY_PAGE)
            break;
    }
    return hit;
}

static void blockers(struct cli_ctx *c, const json_t *list)
{
    size_t i, j;
    json_t *b, *h;
    cli__desc_kv(c, 1, "Blocked By", NULL);
    json_array_foreach(list, i, b) {
        char *needed = desc__scalar(JX_GET(b, "needed"));
        fprintf(c->out, "      %s in flavor %s: %s more needed", jx_or_empty(JX_STR(b, "resource")),
                jx_or_empty(JX_STR(b, "flavor")), needed);
        json_array_foreach(JX_GET(b, "holders"), j, h)
            fprintf(c->out, "%s%s/%s", j ? ", " : "; held by ",
                    jx_or_empty(JX_STR(h, "namespace")), jx_or_empty(JX_STR(h, "name")));
        fputc('\n', c->out);
        xfree(needed);
    }
}

/* The pending reason and message: the QuotaReserved condition's, else
 * (a workload the scheduler has not looked at, e.g. its ClusterQueue is in
 * a cohort cycle) the engine's explanation from the visibility entry v. */
static void pending(struct cli_ctx *c, const json_t *wl)
{
    const json_t *qr = api_cond_get(wl, "QuotaReserved");
    json_t *v = visibility_entry(c, wl);
    const json_t *why = qr;
    if (!JX_STR(qr, "message") && v && *jx_or_empty(JX_STR(v, "message")))
        why = v;
    cli__desc_kv(c, 0, "Pending", NULL);
    cli__desc_kv(c, 1, "Reason", "%s", desc__or_none(JX_STR(why, "reason")));
    cli__desc_kv(c, 1, "Message", "%s", desc__or_none(JX_STR(why, "message")));
    if (v) {
        char *cqpos = desc__scalar(JX_GET(v, "positionInClusterQueue"));
        char *lqpos = desc__scalar(JX_GET(v, "positionInLocalQueue"));
        cli__desc_kv(c, 1, "Position in ClusterQueue", "%s", cqpos);
        cli__desc_kv(c, 1, "Position in LocalQueue", "%s", lqpos);
        if (json_array_size(JX_GET(v, "blockers")))
            blockers(c, JX_GET(v, "blockers"));
        if (JX_STR(v, "estimatedAdmissionTime"))
            cli__desc_kv(c, 1, "Estimated Admission", "%s", JX_STR(v, "estimatedAdmissionTime"));
        xfree(cqpos);
        xfree(lqpos);
        json_decref(v);
    }
}

void desc__workload(struct cli_ctx *c, const struct api_kind *k, const json_t *wl)
{
    (void)k;
    const char *prio_class = JX_STR(wl, "spec", "priorityClassName");
    char *prio = desc__scalar(JX_GET(wl, "spec", "priority"));
    cli__desc_kv(c, 0, "Queue Name", "%s", desc__or_none(JX_STR(wl, "spec", "queueName")));
    cli__desc_kv(c, 0, "Priority", "%s%s%s%s", prio, prio_class ? " (" : "",
                 prio_class ? prio_class : "", prio_class ? ")" : "");
    cli__desc_kv(c, 0, "Active", "%s", JX_BOOL(wl, true, "spec", "active") ? "true" : "false");
    xfree(prio);
    pod_sets(c, wl);
    const json_t *adm = JX_GET(wl, "status", "admission");
    if (adm)
        admission(c, adm);
    checks(c, wl);
    struct api_wl_state st = api_wl_state_of(wl);
    if (!st.has_admission && !st.finished)
        pending(c, wl);
    const json_t *rq = JX_GET(wl, "status", "requeueState");
    if (rq)
        cli__desc_kv(c, 0, "Requeue", "%lld time(s)%s%s", (long long)JX_INT(rq, 0, "count"),
                     JX_STR(rq, "requeueAt") ? ", next at " : "",
                     jx_or_empty(JX_STR(rq, "requeueAt")));
}
