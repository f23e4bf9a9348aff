/*
 * npflags: `gcloud container node-pools create` flags mapped onto a NodePool
 * object (cueue.dev/v1alpha1, docs/nodepool.md). Pure: checks only each
 * flag's own syntax (a count is a non-negative integer of at most
 * CLI_NP_MAX_NODES, GKE's per-zone node pool limit; an effect is one of
 * Kubernetes' three); the rules between fields (queued provisioning
 * needs autoscaling from zero, ...) are the server's validation, so the
 * CLI and `kubectl apply` of the same object get the same answer.
 */
#include <string.h>
#include <strings.h>

#include "cli/cli-int.h"
#include "util/duration.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

void cli__np_flags_init(struct cli_np_flags *f)
{
    memset(f, 0, sizeof(*f));
    f->autoscaling = -1;
    f->queued_provisioning = -1;
    f->flex_start = -1;
}

static bool set_count(json_t *obj, const char *flag, const char *text, char *err, size_t errlen,
                      const char *k1, const char *k2)
{
    int32_t v;
    if (!text)
        return true;
    bool digits = *text && strspn(text, "0123456789") == strlen(text);
    if (!digits) {
        snprintf(err, errlen, "invalid value for --%s: \"%s\": must be a non-negative integer",
                 flag, text);
        return false;
    }
    if (cli__parse_count(text, &v) != 0 || v > CLI_NP_MAX_NODES) {
        snprintf(err, errlen,
                 "invalid value for --%s: \"%s\": must be at most %d (GKE allows at most 1,000 "
                 "nodes per zone in a node pool)", flag, text, CLI_NP_MAX_NODES);
        return false;
    }
    if (k2)
        JX_SET_NEW(obj, json_integer(v), "spec", k1, k2);
    else
        JX_SET_NEW(obj, json_integer(v), "spec", k1);
    return true;
}

static bool set_reservation(json_t *obj, const char *v, char *err, size_t errlen)
{
    static const char *const names[][2] = {
        {"none", "NO_RESERVATION"},
        {"any", "ANY_RESERVATION"},
        {"specific", "SPECIFIC_RESERVATION"},
    };
    if (!v)
        return true;
    for (size_t i = 0; i < 3; i++)
        if (!strcasecmp(v, names[i][0])) {
            JX_SET_NEW(obj, json_string(names[i][1]), "spec", "config", "reservationAffinity",
                       "consumeReservationType");
            return true;
        }
    snprintf(err, errlen,
             "invalid value for --reservation-affinity: \"%s\": must be one of: any, none, "
             "specific", v);
    return false;
}

static bool set_capacity(json_t *obj, const char *v, char *err, size_t errlen)
{
    if (!v)
        return true;
    json_t *cap = JX_OBJ(obj, "spec", "capacity");
    if (!strcasecmp(v, "immediate")) {
        json_object_set_new(cap, "mode", json_string("Immediate"));
        return true;
    }
    if (!strcasecmp(v, "stockout")) {
        json_object_set_new(cap, "mode", json_string("Stockout"));
        return true;
    }
    const char *colon = strchr(v, ':');
    int64_t ms;
    if (colon && (!strncasecmp(v, "delay:", 6) || !strncasecmp(v, "delayed:", 8)) &&
        cu_duration_parse_ms(colon + 1, &ms, NULL) == 0 && ms >= 0) {
        json_object_set_new(cap, "mode", json_string("Delayed"));
        json_object_set_new(cap, "delaySeconds", json_integer((ms + 999) / 1000));
        return true;
    }
    snprintf(err, errlen,
             "invalid value for --capacity: \"%s\": must be immediate, stockout or "
             "delay:DURATION (e.g. delay:30s)", v);
    return false;
}

static bool set_labels(json_t *obj, const char *v, char *err, size_t errlen)
{
    if (!v)
        return true;
    json_t *labels = JX_OBJ(obj, "spec", "config", "labels");
    char *copy = xstrdup(v), *save = NULL;
    bool ok = true;
    for (char *tok = strtok_r(copy, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok) {
            snprintf(err, errlen, "invalid value for --node-labels: \"%s\": expected KEY=VALUE",
                     tok);
            ok = false;
        } else {
            *eq = '\0';
            json_object_set_new(labels, tok, json_string(eq + 1));
        }
    }
    xfree(copy);
    return ok;
}

/* "key=value:Effect" or "key:Effect" into {key, value, effect}; NULL if bad. */
static json_t *parse_taint(char *tok)
{
    char *colon = strrchr(tok, ':');
    if (!colon || colon == tok)
        return NULL;
    *colon = '\0';
    const char *effect = colon + 1;
    if (strcmp(effect, "NoSchedule") && strcmp(effect, "PreferNoSchedule") &&
        strcmp(effect, "NoExecute"))
        return NULL;
    char *eq = strchr(tok, '=');
    if (eq)
        *eq = '\0';
    if (!*tok)
        return NULL;
    json_t *t = json_object();
    json_object_set_new(t, "key", json_string(tok));
    if (eq)
        json_object_set_new(t, "value", json_string(eq + 1));
    json_object_set_new(t, "effect", json_string(effect));
    return t;
}

static bool set_taints(json_t *obj, const char *v, char *err, size_t errlen)
{
    if (!v)
        return true;
    json_t *taints = json_array();
    char *copy = xstrdup(v), *save = NULL;
    bool ok = true;
    for (char *tok = strtok_r(copy, ",", &save); tok && ok; tok = strtok_r(NULL, ",", &save)) {
        char *orig = xstrdup(tok);
        json_t *t = parse_taint(tok);
        if (!t) {
            snprintf(err, errlen,
                     "invalid value for --node-taints: \"%s\": expected KEY=VALUE:EFFECT with "
                     "EFFECT one of NoSchedule, PreferNoSchedule, NoExecute", orig);
            ok = false;
        } else {
            json_array_append_new(taints, t);
        }
        xfree(orig);
    }
    xfree(copy);
    JX_SET_NEW(obj, taints, "spec", "config", "taints");
    return ok;
}

static void set_tristate(json_t *obj, int v, const char *k1, const char *k2)
{
    if (v >= 0)
        JX_SET_NEW(obj, json_boolean(v), "spec", k1, k2);
}

json_t *cli__nodepool_from_flags(const char *name, const struct cli_np_flags *f, char *err,
                                 size_t errlen)
{
    const struct api_kind *k = api_kind_get(KIND_NODEPOOL);
    json_t *obj = json_object();
    json_object_set_new(obj, "apiVersion", json_string(api_kind_api_version(k)));
    json_object_set_new(obj, "kind", json_string(k->kind));
    JX_SET_NEW(obj, json_string(name), "metadata", "name");
    JX_OBJ(obj, "spec");
    if (f->machine_type)
        JX_SET_NEW(obj, json_string(f->machine_type), "spec", "config", "machineType");
    if (f->tpu_topology)
        JX_SET_NEW(obj, json_string(f->tpu_topology), "spec", "placementPolicy", "tpuTopology");
    if (f->provider)
        JX_SET_NEW(obj, json_string(f->provider), "spec", "provider");
    if (f->partition)
        JX_SET_NEW(obj, json_string(f->partition), "spec", "slurm", "partition");
    set_tristate(obj, f->flex_start, "config", "flexStart");
    set_tristate(obj, f->autoscaling, "autoscaling", "enabled");
    set_tristate(obj, f->queued_provisioning, "queuedProvisioning", "enabled");
    bool ok = set_reservation(obj, f->reservation_affinity, err, errlen) &&
              set_count(obj, "num-nodes", f->num_nodes, err, errlen, "initialNodeCount", NULL) &&
              set_count(obj, "min-nodes", f->min_nodes, err, errlen, "autoscaling",
                        "minNodeCount") &&
              set_count(obj, "max-nodes", f->max_nodes, err, errlen, "autoscaling",
                        "maxNodeCount") &&
              set_capacity(obj, f->capacity, err, errlen) &&
              set_labels(obj, f->node_labels, err, errlen) &&
              set_taints(obj, f->node_taints, err, errlen);
    if (!ok) {
        json_decref(obj);
        return NULL;
    }
    return obj;
}

json_t *cli__nodepool_view(const json_t *pool)
{
    json_t *view = json_object();
    json_object_set_new(view, "name", json_string(jx_or_empty(JX_STR(pool, "metadata", "name"))));
    json_t *spec = JX_GET(pool, "spec");
    if (json_is_object(spec))
        json_object_update(view, spec);
    json_t *status = JX_GET(pool, "status");
    if (status)
        json_object_set(view, "status", status);
    return view;
}
