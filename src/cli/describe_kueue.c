/*
 * describe_kueue: describe sections for Kueue's kinds: ClusterQueue (quota
 * vs usage per flavor and resource), LocalQueue, ResourceFlavor,
 * AdmissionCheck, ProvisioningRequestConfig. Workloads are in
 * describe_workload.c. Each section reads the object as the server stores
 * it; absent fields print as "<none>" or are left out.
 */
#include <string.h>

#include "cli/describe-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

/* The status resource entry {name, total, borrowed} for flavor/resource in
 * a flavorsReservation/flavorsUsage/flavorUsage list. Borrowed or NULL. */
static const json_t *usage_entry(const json_t *list, const char *flavor, const char *res)
{
    size_t i, j;
    json_t *f, *r;
    json_array_foreach(list, i, f) {
        if (strcmp(jx_or_empty(JX_STR(f, "name")), flavor))
            continue;
        json_array_foreach(JX_GET(f, "resources"), j, r)
            if (!strcmp(jx_or_empty(JX_STR(r, "name")), res))
                return r;
    }
    return NULL;
}

static void cq_flavors(struct cli_ctx *c, const json_t *cq)
{
    struct cli_table t;
    size_t g, i, j;
    json_t *group, *flavor, *res;
    const json_t *reserved = JX_GET(cq, "status", "flavorsReservation");
    const json_t *used = JX_GET(cq, "status", "flavorsUsage");
    cli__table_init(&t, 7);
    cli__table_rowv(&t, "Flavor", "Resource", "Nominal", "Borrowing Limit", "Lending Limit",
                    "Reserved", "Admitted");
    json_array_foreach(JX_GET(cq, "spec", "resourceGroups"), g, group) {
        json_array_foreach(JX_GET(group, "flavors"), i, flavor) {
            const char *fname = jx_or_empty(JX_STR(flavor, "name"));
            json_array_foreach(JX_GET(flavor, "resources"), j, res) {
                const char *rname = jx_or_empty(JX_STR(res, "name"));
                char *cells[5] = {
                    desc__scalar(JX_GET(res, "nominalQuota")),
                    desc__scalar(JX_GET(res, "borrowingLimit")),
                    desc__scalar(JX_GET(res, "lendingLimit")),
                    desc__scalar(JX_GET(usage_entry(reserved, fname, rname), "total")),
                    desc__scalar(JX_GET(usage_entry(used, fname, rname), "total")),
                };
                cli__table_rowv(&t, j ? "" : fname, rname, cells[0], cells[1], cells[2],
                                cells[3], cells[4]);
                for (int k = 0; k < 5; k++)
                    xfree(cells[k]);
            }
        }
    }
    cli__desc_table(c, 0, "Flavors", &t);
}

static void cq_checks(struct cli_ctx *c, const json_t *cq)
{
    json_t *simple = JX_GET(cq, "spec", "admissionChecks");
    json_t *strat = JX_GET(cq, "spec", "admissionChecksStrategy", "admissionChecks");
    size_t i;
    json_t *ac;
    if (!json_array_size(simple) && !json_array_size(strat)) {
        cli__desc_kv(c, 1, "Admission Checks", "<none>");
        return;
    }
    cli__desc_kv(c, 1, "Admission Checks", NULL);
    json_array_foreach(simple, i, ac)
        fprintf(c->out, "      %s (every flavor)\n", jx_or_empty(json_string_value(ac)));
    json_array_foreach(strat, i, ac) {
        json_t *on = JX_GET(ac, "onFlavors");
        char *flavors = json_array_size(on) ? jx_dumps(on) : xstrdup("every flavor");
        fprintf(c->out, "      %s (on flavors: %s)\n", jx_or_empty(JX_STR(ac, "name")), flavors);
        xfree(flavors);
    }
}

void desc__clusterqueue(struct cli_ctx *c, const struct api_kind *k, const json_t *cq)
{
    (void)k;
    json_t *nss = JX_GET(cq, "spec", "namespaceSelector");
    char *sel = nss ? jx_dumps(nss) : NULL;
    cli__desc_kv(c, 0, "Spec", NULL);
    cli__desc_kv(c, 1, "Cohort", "%s", desc__or_none(JX_STR(cq, "spec", "cohort")));
    cli__desc_kv(c, 1, "Queueing Strategy", "%s",
                 JX_STR(cq, "spec", "queueingStrategy") ? JX_STR(cq, "spec", "queueingStrategy")
                                                        : "BestEffortFIFO");
    cli__desc_kv(c, 1, "Namespace Selector", "%s",
                 !sel ? "<none> (no namespace)"
                 : json_object_size(nss) == 0 ? "{} (every namespace)" : sel);
    cli__desc_kv(c, 1, "Stop Policy", "%s",
                 JX_STR(cq, "spec", "stopPolicy") ? JX_STR(cq, "spec", "stopPolicy") : "None");
    cq_checks(c, cq);
    if (JX_GET(cq, "spec", "preemption"))
        cli__desc_yaml(c, 1, "Preemption", JX_GET(cq, "spec", "preemption"));
    xfree(sel);
    cq_flavors(c, cq);
    cli__desc_kv(c, 0, "Workloads", NULL);
    cli__desc_kv(c, 1, "Pending", "%lld", (long long)JX_INT(cq, 0, "status", "pendingWorkloads"));
    cli__desc_kv(c, 1, "Reserving", "%lld",
                 (long long)JX_INT(cq, 0, "status", "reservingWorkloads"));
    cli__desc_kv(c, 1, "Admitted", "%lld", (long long)JX_INT(cq, 0, "status", "admittedWorkloads"));
}

static void usage_table(struct cli_ctx *c, const char *title, const json_t *list)
{
    struct cli_table t;
    size_t i, j;
    json_t *f, *r;
    cli__table_init(&t, 3);
    cli__table_rowv(&t, "Flavor", "Resource", "Total");
    json_array_foreach(list, i, f) {
        json_array_foreach(JX_GET(f, "resources"), j, r) {
            char *total = desc__scalar(JX_GET(r, "total"));
            cli__table_rowv(&t, j ? "" : JX_STR(f, "name"), JX_STR(r, "name"), total);
            xfree(total);
        }
    }
    cli__desc_table(c, 0, title, &t);
}

void desc__localqueue(struct cli_ctx *c, const struct api_kind *k, const json_t *lq)
{
    (void)k;
    cli__desc_kv(c, 0, "Cluster Queue", "%s", desc__or_none(JX_STR(lq, "spec", "clusterQueue")));
    cli__desc_kv(c, 0, "Stop Policy", "%s",
                 JX_STR(lq, "spec", "stopPolicy") ? JX_STR(lq, "spec", "stopPolicy") : "None");
    cli__desc_kv(c, 0, "Workloads", NULL);
    cli__desc_kv(c, 1, "Pending", "%lld", (long long)JX_INT(lq, 0, "status", "pendingWorkloads"));
    cli__desc_kv(c, 1, "Reserving", "%lld",
                 (long long)JX_INT(lq, 0, "status", "reservingWorkloads"));
    cli__desc_kv(c, 1, "Admitted", "%lld", (long long)JX_INT(lq, 0, "status", "admittedWorkloads"));
    usage_table(c, "Flavor Usage", JX_GET(lq, "status", "flavorUsage"));
}

void desc__resourceflavor(struct cli_ctx *c, const struct api_kind *k, const json_t *rf)
{
    (void)k;
    cli__desc_map(c, 0, "Node Labels", JX_GET(rf, "spec", "nodeLabels"), NULL);
    if (json_array_size(JX_GET(rf, "spec", "nodeTaints")))
        cli__desc_yaml(c, 0, "Node Taints", JX_GET(rf, "spec", "nodeTaints"));
    else
        cli__desc_kv(c, 0, "Node Taints", "<none>");
    if (json_array_size(JX_GET(rf, "spec", "tolerations")))
        cli__desc_yaml(c, 0, "Tolerations", JX_GET(rf, "spec", "tolerations"));
    if (JX_STR(rf, "spec", "topologyName"))
        cli__desc_kv(c, 0, "Topology", "%s", JX_STR(rf, "spec", "topologyName"));
}

void desc__admissioncheck(struct cli_ctx *c, const struct api_kind *k, const json_t *ac)
{
    (void)k;
    const json_t *p = JX_GET(ac, "spec", "parameters");
    cli__desc_kv(c, 0, "Controller Name", "%s",
                 desc__or_none(JX_STR(ac, "spec", "controllerName")));
    if (p)
        cli__desc_kv(c, 0, "Parameters", "%s %s/%s", jx_or_empty(JX_STR(p, "kind")),
                     jx_or_empty(JX_STR(p, "apiGroup")), jx_or_empty(JX_STR(p, "name")));
    else
        cli__desc_kv(c, 0, "Parameters", "<none>");
}

void desc__provreqconfig(struct cli_ctx *c, const struct api_kind *k, const json_t *prc)
{
    (void)k;
    json_t *managed = JX_GET(prc, "spec", "managedResources");
    char *m = managed ? jx_dumps(managed) : NULL;
    cli__desc_kv(c, 0, "Provisioning Class", "%s",
                 desc__or_none(JX_STR(prc, "spec", "provisioningClassName")));
    cli__desc_kv(c, 0, "Managed Resources", "%s", m ? m : "<none> (every resource)");
    cli__desc_map(c, 0, "Parameters", JX_GET(prc, "spec", "parameters"), NULL);
    if (JX_GET(prc, "spec", "retryStrategy"))
        cli__desc_yaml(c, 0, "Retry Strategy", JX_GET(prc, "spec", "retryStrategy"));
    if (JX_GET(prc, "spec", "podSetMergePolicy"))
        cli__desc_kv(c, 0, "Pod Set Merge Policy", "%s",
                     jx_or_empty(JX_STR(prc, "spec", "podSetMergePolicy")));
    xfree(m);
}
