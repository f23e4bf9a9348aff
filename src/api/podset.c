/*
 * podset: the scheduling view of a pod template (object.h
 * api_podset_from_template), computed as Kueue computes a pod set's
 * per-pod requests: limits fill absent requests; regular containers add
 * up; restartable (sidecar) init containers add to them and to every later
 * init container; the pod needs the larger of that and its biggest init
 * container; pod-level requests replace container sums where given; then
 * the pod overhead is added (k8s component-helpers PodRequests). The `pods`
 * resource is not derived here. Sums saturate at INT64_MAX.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/object.h"
#include "api/quantity.h"
#include "api/selector.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static int64_t sat_add(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

/* A container's effective requests: requests, with limits for the rest. */
static int container_requests(const json_t *ct, struct api_reslist *out)
{
    memset(out, 0, sizeof(*out));
    const json_t *req = JX_GET(ct, "resources", "requests");
    const json_t *lim = JX_GET(ct, "resources", "limits");
    const char *k;
    json_t *v;
    int64_t q;
    json_object_foreach((json_t *)lim, k, v) {
        if (json_object_get(req, k))
            continue;
        if (api_quantity_from_json(v, k, "", &q, NULL) < 0)
            return CU_EINVAL;
        api_reslist_set(out, k, q);
    }
    json_object_foreach((json_t *)req, k, v) {
        if (api_quantity_from_json(v, k, "", &q, NULL) < 0)
            return CU_EINVAL;
        api_reslist_set(out, k, q);
    }
    return 0;
}

static void reslist_add(struct api_reslist *dst, const struct api_reslist *src)
{
    for (size_t i = 0; i < src->n; i++)
        api_reslist_set(dst, src->items[i].name,
                        sat_add(api_reslist_get(dst, src->items[i].name), src->items[i].value));
}

static void reslist_max(struct api_reslist *dst, const struct api_reslist *src)
{
    for (size_t i = 0; i < src->n; i++) {
        const char *n = src->items[i].name;
        bool present = false;
        for (size_t j = 0; j < dst->n; j++)
            present |= !strcmp(dst->items[j].name, n);
        if (!present || src->items[i].value > api_reslist_get(dst, n))
            api_reslist_set(dst, n, src->items[i].value);
    }
}

static int sum_containers(const json_t *list, struct api_reslist *sum)
{
    size_t i;
    json_t *ct;
    json_array_foreach(list, i, ct) {
        struct api_reslist r;
        int rc = container_requests(ct, &r);
        if (rc == 0)
            reslist_add(sum, &r);
        api_reslist_release(&r);
        if (rc)
            return rc;
    }
    return 0;
}

static int init_requests(const json_t *inits, struct api_reslist *reqs)
{
    struct api_reslist sidecars = {0}, init_max = {0};
    size_t i;
    json_t *ct;
    int rc = 0;
    json_array_foreach(inits, i, ct) {
        struct api_reslist r;
        if ((rc = container_requests(ct, &r)) != 0) {
            api_reslist_release(&r);
            break;
        }
        const char *rp = JX_STR(ct, "restartPolicy");
        if (rp && !strcmp(rp, "Always")) {
            reslist_add(reqs, &r);
            reslist_add(&sidecars, &r);
            reslist_max(&init_max, &sidecars);
        } else {
            reslist_add(&r, &sidecars);
            reslist_max(&init_max, &r);
        }
        api_reslist_release(&r);
    }
    if (rc == 0)
        reslist_max(reqs, &init_max);
    api_reslist_release(&sidecars);
    api_reslist_release(&init_max);
    return rc;
}

static int overhead_and_pod_level(const json_t *spec, struct api_reslist *reqs)
{
    const char *k;
    json_t *v;
    int64_t q;
    json_object_foreach(JX_GET(spec, "resources", "requests"), k, v) {
        if (api_quantity_from_json(v, k, "", &q, NULL) < 0)
            return CU_EINVAL;
        api_reslist_set(reqs, k, q);
    }
    json_object_foreach(json_object_get(spec, "overhead"), k, v) {
        if (api_quantity_from_json(v, k, "", &q, NULL) < 0)
            return CU_EINVAL;
        api_reslist_set(reqs, k, sat_add(api_reslist_get(reqs, k), q));
    }
    return 0;
}

static void scheduling_fields(const json_t *spec, struct api_podset *out)
{
    api_labels_from_json(json_object_get(spec, "nodeSelector"), &out->node_selector);
    json_t *terms = JX_GET(spec, "affinity", "nodeAffinity",
                           "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms");
    size_t n = json_array_size(terms);
    out->affinity_terms = n ? xcalloc(n, sizeof(*out->affinity_terms)) : NULL;
    for (size_t i = 0; i < n; i++)
        api_node_term_from_json(json_array_get(terms, i), &out->affinity_terms[i]);
    out->n_affinity_terms = n;
    json_t *tols = json_object_get(spec, "tolerations");
    n = json_array_size(tols);
    out->tolerations = n ? xcalloc(n, sizeof(*out->tolerations)) : NULL;
    for (size_t i = 0; i < n; i++)
        api_toleration_from_json(json_array_get(tols, i), &out->tolerations[i]);
    out->n_tolerations = n;
}

int api_podset_from_template(const json_t *tmpl, const char *name, int32_t count,
                             struct api_podset *out)
{
    memset(out, 0, sizeof(*out));
    const json_t *spec = json_object_get(tmpl, "spec");
    if (!json_is_object(tmpl) || !json_is_object(spec))
        return CU_EINVAL;
    out->name = xstrdup(name ? name : "main");
    out->count = count;
    int rc = sum_containers(json_object_get(spec, "containers"), &out->requests);
    if (rc == 0)
        rc = init_requests(json_object_get(spec, "initContainers"), &out->requests);
    if (rc == 0)
        rc = overhead_and_pod_level(spec, &out->requests);
    if (rc) {
        api_podset_release(out);
        return rc;
    }
    scheduling_fields(spec, out);
    json_t *tr = api_topology_request_from_template(tmpl);
    api_topology_request_decode(tr, out);
    json_decref(tr);
    return 0;
}

#define TAS_REQUIRED "kueue.x-k8s.io/podset-required-topology"
#define TAS_PREFERRED "kueue.x-k8s.io/podset-preferred-topology"
#define TAS_UNCONSTRAINED "kueue.x-k8s.io/podset-unconstrained-topology"
#define TAS_SLICE_LEVEL "kueue.x-k8s.io/podset-slice-required-topology"
#define TAS_SLICE_SIZE "kueue.x-k8s.io/podset-slice-size"

json_t *api_topology_request_from_template(const json_t *tmpl)
{
    const json_t *ann = JX_GET(tmpl, "metadata", "annotations");
    const char *req = JX_STR(ann, TAS_REQUIRED), *pref = JX_STR(ann, TAS_PREFERRED);
    const char *unc = JX_STR(ann, TAS_UNCONSTRAINED), *slice = JX_STR(ann, TAS_SLICE_LEVEL);
    const char *size = JX_STR(ann, TAS_SLICE_SIZE);
    json_t *tr = NULL;
    if (req && *req)
        tr = json_pack("{s:s}", "required", req);
    else if (pref && *pref)
        tr = json_pack("{s:s}", "preferred", pref);
    else if (unc && !strcmp(unc, "true"))
        tr = json_pack("{s:b}", "unconstrained", 1);
    if (slice && *slice) {
        if (!tr)
            tr = json_object();
        json_object_set_new(tr, "podSetSliceRequiredTopology", json_string(slice));
        char *end = NULL;
        long n = size ? strtol(size, &end, 10) : 0;
        if (size && end && !*end && n >= 1 && n <= INT32_MAX)
            json_object_set_new(tr, "podSetSliceSize", json_integer(n));
    }
    return tr;
}

void api_topology_request_decode(const json_t *tr, struct api_podset *p)
{
    xfree(p->topology_level);
    p->topology_level = NULL;
    p->topology_mode = TOPO_NONE;
    const char *req = JX_STR(tr, "required"), *pref = JX_STR(tr, "preferred");
    if (req && *req) {
        p->topology_mode = TOPO_REQUIRED;
        p->topology_level = xstrdup(req);
    } else if (pref && *pref) {
        p->topology_mode = TOPO_PREFERRED;
        p->topology_level = xstrdup(pref);
    } else if (json_is_true(json_object_get(tr, "unconstrained"))) {
        p->topology_mode = TOPO_UNCONSTRAINED;
    }
    xfree(p->slice_level);
    p->slice_level = NULL;
    p->slice_size = 0;
    const char *slice = JX_STR(tr, "podSetSliceRequiredTopology");
    if (slice && *slice) {
        p->slice_level = xstrdup(slice);
        p->slice_size = (int32_t)JX_INT(tr, 0, "podSetSliceSize");
    }
}
