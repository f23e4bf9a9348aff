/*
 * schema_capacity: the kinds about capacity: autoscaling.x-k8s.io/v1
 * ProvisioningRequest (provisioning.md §1.2: the spec is immutable,
 * "Value is immutable") and cueue.dev/v1alpha1 NodePool (docs/nodepool.md,
 * GKE's node-pool rules). Machine types and TPU topologies are checked
 * against the catalog registered with api_set_machine_catalog, if any.
 */
#include <stdlib.h>
#include <string.h>

#include "api/names.h"
#include "api/schema-int.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

/* ---- ProvisioningRequest ---- */

/* GKE's limit: a node pool has at most 1,000 nodes per zone (cueue's local
 * provider is one zone). Also keeps a typo from creating 10^11 Node objects. */
#define NODEPOOL_MAX_NODES 1000
#define S_NODE_COUNT_DEFAULT0                                                                    \
    SCH(.type = SCH_INTEGER, .int32 = true, .has_min = true, .min = 0, .has_max = true,          \
        .max = NODEPOOL_MAX_NODES, .default_json = "0")
#define S_NODE_COUNT                                                                             \
    SCH(.type = SCH_INTEGER, .int32 = true, .has_min = true, .min = 0, .has_max = true,          \
        .max = NODEPOOL_MAX_NODES)

static const struct api_schema s_provreq = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(
        FR("spec",
           OBJ(FR("podSets",
                  SCH(.type = SCH_ARRAY, .min_items = 1, .max_items = 32,
                      .items = OBJ(FR("podTemplateRef",
                                      OBJ(FR("name", SCH(.type = SCH_STRING, .max_length = 253,
                                                         .format = FMT_DNS_SUBDOMAIN)))),
                                   FR("count", SCH(.type = SCH_INTEGER, .int32 = true,
                                                   .has_min = true, .min = 1))))),
               FR("provisioningClassName", SCH(.type = SCH_STRING, .max_length = 253,
                                               .format = FMT_DNS_SUBDOMAIN)),
               F("parameters", SCH(.type = SCH_MAP, .max_items = 100,
                                   .items = SCH(.type = SCH_STRING, .max_length = 255))))),
        F("status", OBJ(F("conditions", S_CONDITIONS),
                        F("provisioningClassDetails",
                          SCH(.type = SCH_MAP, .max_items = 64,
                              .items = SCH(.type = SCH_STRING, .max_length = 32768))))))};

static void provreq_validate(struct api_vctx *c)
{
    if (!c->old || c->status_update)
        return;
    static const char *const fields[] = {"podSets", "provisioningClassName", "parameters"};
    for (int i = 0; i < 3; i++) {
        json_t *a = JX_GET(c->obj, "spec", fields[i]);
        json_t *b = JX_GET(c->old, "spec", fields[i]);
        if (jx_equal(a, b))
            continue;
        char *f = api__path("spec.%s", fields[i]);
        diag_addj(c->d, DIAG_INVALID, f, a, "Value is immutable");
        xfree(f);
    }
}

const struct api_kind_schema api__ks_provreq = {
    .kind = KIND_PROVISIONINGREQUEST, .root = &s_provreq,
    .name_rule = api_check_dns1123_subdomain, .validate = provreq_validate};

/* ---- NodePool ---- */

static const struct api_machine_catalog *catalog;

void api_set_machine_catalog(const struct api_machine_catalog *cat) { catalog = cat; }

static const struct api_schema s_nodepool = {
    .type = SCH_OBJECT,
    ROOT_FIELDS(
        FR("spec",
           /* config.machineType is required of every pool but a Slurm one
            * (validate_machine, validate_slurm) */
           OBJ(F("config",
                  OBJ(F("machineType", SCH(.type = SCH_STRING, .max_length = 63)),
                      F("flexStart", S_BOOL),
                      F("reservationAffinity",
                        OBJ(F("consumeReservationType",
                              SCH(.type = SCH_STRING,
                                  ENUM("NO_RESERVATION", "ANY_RESERVATION",
                                       "SPECIFIC_RESERVATION"))),
                            F("key", S_STR), F("values", S_STR_LIST))),
                      F("labels", S_LABELS), F("taints", S_TAINTS))),
               F("initialNodeCount", S_NODE_COUNT_DEFAULT0),
               F("autoscaling", OBJ(F("enabled", S_BOOL), F("minNodeCount", S_NODE_COUNT),
                                    F("maxNodeCount", S_NODE_COUNT))),
               F("placementPolicy", OBJ(F("tpuTopology", S_STR))),
               F("queuedProvisioning", OBJ(F("enabled", S_BOOL))),
               F("capacity",
                 SCH(.type = SCH_OBJECT, .default_json = "{}",
                     FIELDS(F("mode", SCH(.type = SCH_STRING,
                                          ENUM("Immediate", "Delayed", "Stockout"),
                                          .default_json = "\"Immediate\"")),
                            F("delaySeconds", S_NONNEG_INT64)))),
               F("scaleDownUnneededSeconds", S_NONNEG_INT64),
               F("provider", SCH(.type = SCH_STRING, ENUM("local", "slurm"))),
               F("slurm", OBJ(F("partition", SCH(.type = SCH_STRING, .max_length = 255)))))),
        F("status", OBJ(F("observedGeneration", S_NONNEG_INT64),
                        F("nodeCount", S_NONNEG_INT32), F("readyNodeCount", S_NONNEG_INT32),
                        F("conditions", S_CONDITIONS))))};

/* "4x4", "2x2x2": two or three positive dimensions. */
static bool topology_syntax_ok(const char *t)
{
    int dims = 0;
    const char *p = t;
    while (*p) {
        char *end = NULL;
        long v = strtol(p, &end, 10);
        if (end == p || v <= 0 || v > 1024)
            return false;
        dims++;
        p = end;
        if (*p == 'x')
            p++;
        else if (*p)
            return false;
    }
    return (dims == 2 || dims == 3) && t[strlen(t) - 1] != 'x';
}

static void validate_node_counts(struct api_vctx *c, const json_t *spec, int hosts,
                                 const char *topology)
{
    static const char *const counts[][2] = {{"spec.initialNodeCount", "initialNodeCount"},
                                           {"spec.autoscaling.minNodeCount", "minNodeCount"},
                                           {"spec.autoscaling.maxNodeCount", "maxNodeCount"}};
    for (int i = 0; i < 3; i++) {
        json_t *v = i == 0 ? json_object_get(spec, counts[i][1])
                           : JX_GET(spec, "autoscaling", counts[i][1]);
        if (json_is_integer(v) && json_integer_value(v) % hosts)
            api__diag_int(c->d, DIAG_INVALID, counts[i][0], json_integer_value(v),
                          "must be a multiple of %d (the hosts of one %s slice)", hosts,
                          topology);
    }
}

static void validate_machine(struct api_vctx *c, const json_t *spec)
{
    const char *mt = jx_or_empty(JX_STR(spec, "config", "machineType"));
    const char *topo = JX_STR(spec, "placementPolicy", "tpuTopology");
    if (!mt[0])
        diag_add(c->d, DIAG_REQUIRED, "spec.config.machineType", NULL, "must not be empty");
    else if (catalog && catalog->known && !catalog->known(mt))
        api__diag_str(c->d, DIAG_NOT_SUPPORTED, "spec.config.machineType", mt,
                      "not in the machine catalog (see `cueue nodepool machine-types`)");
    if (!topo)
        return;
    if (!topology_syntax_ok(topo)) {
        api__diag_str(c->d, DIAG_INVALID, "spec.placementPolicy.tpuTopology", topo,
                      "must be two or three positive dimensions joined by 'x' (e.g. 4x4, "
                      "2x2x2)");
        return;
    }
    int hosts = 1;
    const char *why = catalog && catalog->check_topology && mt[0]
                          ? catalog->check_topology(mt, topo, &hosts)
                          : NULL;
    if (why)
        api__diag_str(c->d, DIAG_INVALID, "spec.placementPolicy.tpuTopology", topo, "%s", why);
    else if (hosts > 1)
        validate_node_counts(c, spec, hosts, topo);
}

static void validate_provisioning_rules(struct api_vctx *c, const json_t *spec)
{
    const char *ra = JX_STR(spec, "config", "reservationAffinity", "consumeReservationType");
    bool no_res = ra && !strcmp(ra, "NO_RESERVATION");
    const char *raf = "spec.config.reservationAffinity.consumeReservationType";
    if (JX_BOOL(spec, false, "queuedProvisioning", "enabled")) {
        if (!JX_BOOL(spec, false, "autoscaling", "enabled"))
            diag_add(c->d, DIAG_INVALID, "spec.autoscaling.enabled", NULL,
                     "must be true when queuedProvisioning.enabled is true");
        if (JX_INT(spec, 0, "initialNodeCount") != 0)
            api__diag_int(c->d, DIAG_INVALID, "spec.initialNodeCount",
                          JX_INT(spec, 0, "initialNodeCount"),
                          "must be 0 when queuedProvisioning.enabled is true");
        if (JX_INT(spec, 0, "autoscaling", "minNodeCount") != 0)
            api__diag_int(c->d, DIAG_INVALID, "spec.autoscaling.minNodeCount",
                          JX_INT(spec, 0, "autoscaling", "minNodeCount"),
                          "must be 0 when queuedProvisioning.enabled is true");
        if (!no_res)
            api__diag_str(c->d, DIAG_INVALID, raf, ra ? ra : "",
                          "must be NO_RESERVATION when queuedProvisioning.enabled is true");
    }
    if (JX_BOOL(spec, false, "config", "flexStart") && !no_res)
        api__diag_str(c->d, DIAG_INVALID, raf, ra ? ra : "",
                      "must be NO_RESERVATION when config.flexStart is true");
    json_t *min = JX_GET(spec, "autoscaling", "minNodeCount");
    json_t *max = JX_GET(spec, "autoscaling", "maxNodeCount");
    if (min && max && json_integer_value(min) > json_integer_value(max))
        api__diag_int(c->d, DIAG_INVALID, "spec.autoscaling.minNodeCount",
                      json_integer_value(min), "must be less than or equal to maxNodeCount (%lld)",
                      (long long)json_integer_value(max));
}

/* A pool of provider slurm is a Slurm partition's nodes (docs/slurm.md): the
 * partition gives their number and shape, so the machine, topology and
 * autoscaling fields have no meaning there; queued provisioning on Slurm
 * CLOUD nodes is not done yet. */
static void validate_slurm(struct api_vctx *c, const json_t *spec)
{
    const char *part = JX_STR(spec, "slurm", "partition");
    if (!part || !part[0])
        diag_add(c->d, DIAG_REQUIRED, "spec.slurm.partition", NULL,
                 "a pool of provider slurm names the Slurm partition whose nodes it has");
    const char *shape = "the partition's nodes give the pool's size and shape";
    const struct {
        const char *field;
        const json_t *v;
        const char *why;
    } unused[] = {
        {"spec.config.machineType", JX_GET(spec, "config", "machineType"), shape},
        {"spec.placementPolicy.tpuTopology", JX_GET(spec, "placementPolicy", "tpuTopology"),
         shape},
        {"spec.autoscaling.enabled", JX_GET(spec, "autoscaling", "enabled"), shape},
        {"spec.initialNodeCount", JX_GET(spec, "initialNodeCount"), shape},
        {"spec.queuedProvisioning.enabled", JX_GET(spec, "queuedProvisioning", "enabled"),
         "queued provisioning on Slurm CLOUD nodes is not supported yet (docs/slurm.md)"},
    };
    for (size_t i = 0; i < sizeof(unused) / sizeof(unused[0]); i++) {
        const json_t *v = unused[i].v;
        bool set = v && !json_is_false(v) && !(json_is_integer(v) && !json_integer_value(v)) &&
                   !(json_is_string(v) && !json_string_value(v)[0]);
        if (set)
            diag_add(c->d, DIAG_FORBIDDEN, unused[i].field, NULL,
                     "must not be set when spec.provider is slurm: %s", unused[i].why);
    }
}

static void nodepool_validate(struct api_vctx *c)
{
    const json_t *spec = json_object_get(c->obj, "spec");
    const char *prov = JX_STR(spec, "provider");
    if (prov && !strcmp(prov, "slurm")) {
        validate_slurm(c, spec);
        return;
    }
    if (JX_STR(spec, "slurm", "partition"))
        diag_add(c->d, DIAG_FORBIDDEN, "spec.slurm", NULL,
                 "only for spec.provider slurm");
    validate_machine(c, spec);
    validate_provisioning_rules(c, spec);
}

const struct api_kind_schema api__ks_nodepool = {
    .kind = KIND_NODEPOOL, .root = &s_nodepool, .name_rule = api_check_dns1123_label,
    .validate = nodepool_validate};
