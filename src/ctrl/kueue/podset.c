/*
 * kueue/podset: what starting a job injects into its pod templates (Kueue's
 * podset.PodSetInfo, kueue.md §4.1 "Start" and §3.4): per admitted pod set,
 * the assigned flavors' nodeLabels (as nodeSelector) and tolerations, the
 * pod set and queue labels, the elastic slice annotation, then every
 * admission check's podSetUpdates. Maps merge additively; the same key with
 * a different value is a permanent start error with Kueue's message.
 * Stopping restores what the Workload recorded as the original template.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/meta.h"
#include "ctrl/kueue/kueue.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

void kq_podset_infos_free(struct kq_podset_info *infos, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        xfree(infos[i].name);
        json_decref(infos[i].node_selector);
        json_decref(infos[i].tolerations);
        json_decref(infos[i].labels);
        json_decref(infos[i].annotations);
    }
    xfree(infos);
}

/* Merge src into dst (string maps). On a conflicting key write Kueue's
 * message for `field` and return CU_EINVAL. */
static int merge_map(json_t *dst, const json_t *src, const char *field, char *err, size_t errlen)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)src, k, v) {
        json_t *have = json_object_get(dst, k);
        if (have && !json_equal(have, v)) {
            snprintf(err, errlen,
                     "invalid admission check PodSetUpdate: conflict for %s: conflict for "
                     "key=%s, value1=%s, value2=%s",
                     field, k, jx_or_empty(json_string_value(have)),
                     jx_or_empty(json_string_value(v)));
            return CU_EINVAL;
        }
        if (!have)
            json_object_set(dst, k, v);
    }
    return 0;
}

/* Append every toleration of src not already in dst. */
static void merge_tolerations(json_t *dst, const json_t *src)
{
    size_t i, j;
    json_t *t, *d;
    json_array_foreach(src, i, t) {
        bool dup = false;
        json_array_foreach(dst, j, d) {
            if (json_equal(d, t)) {
                dup = true;
                break;
            }
        }
        if (!dup)
            json_array_append(dst, t);
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Flavor nodeLabels and tolerations of one pod set assignment, flavors in
 * name order (deterministic), first value kept on repeated keys. */
static void add_flavors(struct ctrl *c, const json_t *psa, struct kq_podset_info *info)
{
    const json_t *flv = JX_GET(psa, "flavors");
    size_t n = json_object_size(flv), m = 0;
    const char **names = xcalloc(n + 1, sizeof(char *));
    const char *res;
    json_t *f;
    json_object_foreach((json_t *)flv, res, f) {
        if (!json_is_string(f))
            continue;
        bool dup = false;
        for (size_t i = 0; i < m; i++)
            dup |= !strcmp(names[i], json_string_value(f));
        if (!dup)
            names[m++] = json_string_value(f);
    }
    qsort(names, m, sizeof(char *), cmp_str);
    for (size_t i = 0; i < m; i++) {
        json_t *rf = store_get(ctrl_store(c), KIND_RESOURCEFLAVOR, NULL, names[i]);
        if (!rf)
            continue;
        const char *k;
        json_t *v;
        json_object_foreach(JX_GET(rf, "spec", "nodeLabels"), k, v) {
            if (!json_object_get(info->node_selector, k))
                json_object_set(info->node_selector, k, v);
        }
        merge_tolerations(info->tolerations, JX_GET(rf, "spec", "tolerations"));
        json_decref(rf);
    }
    xfree(names);
}

/* Merge every admission check's podSetUpdates for this pod set. */
static int add_check_updates(const json_t *wl, struct kq_podset_info *info, char *err,
                             size_t errlen)
{
    size_t i, j;
    json_t *ac, *u;
    json_array_foreach(JX_GET(wl, "status", "admissionChecks"), i, ac) {
        json_array_foreach(JX_GET(ac, "podSetUpdates"), j, u) {
            if (strcmp(jx_or_empty(JX_STR(u, "name")), info->name))
                continue;
            int rc = 0;
            if (JX_GET(u, "labels"))
                rc = merge_map(info->labels, JX_GET(u, "labels"), "labels", err, errlen);
            if (!rc && JX_GET(u, "annotations"))
                rc = merge_map(info->annotations, JX_GET(u, "annotations"), "annotations", err,
                               errlen);
            if (!rc && JX_GET(u, "nodeSelector"))
                rc = merge_map(info->node_selector, JX_GET(u, "nodeSelector"), "nodeSelector",
                               err, errlen);
            if (rc)
                return rc;
            merge_tolerations(info->tolerations, JX_GET(u, "tolerations"));
        }
    }
    return 0;
}

/* The spec count of pod set name in wl (1 when absent). */
static int32_t spec_count(const json_t *wl, const char *name)
{
    size_t i;
    json_t *ps;
    json_array_foreach(JX_GET(wl, "spec", "podSets"), i, ps) {
        if (!strcmp(jx_or_empty(JX_STR(ps, "name")), name))
            return (int32_t)JX_INT(ps, 1, "count");
    }
    return 1;
}

int kq_podset_infos_from_workload(struct ctrl *c, const json_t *wl, struct kq_podset_info **infos_out,
                             size_t *n_out, char *err, size_t errlen)
{
    const json_t *psas = JX_GET(wl, "status", "admission", "podSetAssignments");
    size_t n = json_array_size(psas);
    struct kq_podset_info *infos = xcalloc(n + 1, sizeof(*infos));
    const char *slice = api_annotation(wl, KQ_SLICE_NAME_ANNOTATION);
    const char *elastic = api_annotation(wl, KQ_ELASTIC_ANNOTATION);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const json_t *psa = json_array_get(psas, i);
        struct kq_podset_info *info = &infos[i];
        info->name = xstrdup(jx_or_empty(JX_STR(psa, "name")));
        info->count = (int32_t)JX_INT(psa, spec_count(wl, info->name), "count");
        info->node_selector = json_object();
        info->tolerations = json_array();
        info->labels = json_object();
        info->annotations = json_object();
        add_flavors(c, psa, info);
        json_object_set_new(info->labels, KQ_PODSET_LABEL, json_string(info->name));
        if (JX_STR(wl, "spec", "queueName"))
            json_object_set_new(info->labels, KQ_LQ_NAME_LABEL,
                                json_string(JX_STR(wl, "spec", "queueName")));
        if (kq_wl_cluster_queue(wl))
            json_object_set_new(info->labels, KQ_CQ_NAME_LABEL,
                                json_string(kq_wl_cluster_queue(wl)));
        if (json_is_object(json_object_get(psa, "topologyAssignment"))) {
            /* Kueue TAS: the pods' label and their Workload, which the
             * binder reads to place them on the assigned domains */
            json_object_set_new(info->labels, "kueue.x-k8s.io/tas", json_string("true"));
            json_object_set_new(info->annotations, "kueue.x-k8s.io/workload",
                                json_string(api_name(wl)));
        }
        if (elastic && !strcmp(elastic, "true"))
            json_object_set_new(info->annotations, KQ_SLICE_NAME_ANNOTATION,
                                json_string(slice ? slice : api_name(wl)));
        rc = add_check_updates(wl, info, err, errlen);
    }
    if (rc) {
        kq_podset_infos_free(infos, n);
        *infos_out = NULL;
        *n_out = 0;
        return rc;
    }
    *infos_out = infos;
    *n_out = n;
    return 0;
}

int kq_template_merge(json_t *tmpl, const struct kq_podset_info *info, char *err,
                        size_t errlen)
{
    int rc = merge_map(JX_OBJ(tmpl, "metadata", "labels"), info->labels, "labels", err, errlen);
    if (!rc)
        rc = merge_map(JX_OBJ(tmpl, "metadata", "annotations"), info->annotations,
                       "annotations", err, errlen);
    if (!rc)
        rc = merge_map(JX_OBJ(tmpl, "spec", "nodeSelector"), info->node_selector,
                       "nodeSelector", err, errlen);
    if (rc)
        return rc;
    json_t *spec = JX_OBJ(tmpl, "spec");
    json_t *tols = json_object_get(spec, "tolerations");
    if (!json_is_array(tols)) {
        tols = json_array();
        json_object_set_new(spec, "tolerations", tols);
    }
    merge_tolerations(tols, info->tolerations);
    if (json_array_size(tols) == 0)
        json_object_del(spec, "tolerations");
    if (json_object_size(JX_GET(spec, "nodeSelector")) == 0)
        json_object_del(spec, "nodeSelector");
    if (json_object_size(JX_GET(tmpl, "metadata", "annotations")) == 0)
        JX_DEL(tmpl, "metadata", "annotations");
    return 0;
}

static void restore_field(json_t *dst_parent, const json_t *src_parent, const char *key)
{
    json_t *v = src_parent ? json_object_get(src_parent, key) : NULL;
    if (v)
        json_object_set_new(dst_parent, key, jx_deep_copy(v));
    else
        json_object_del(dst_parent, key);
}

/* The labels the API server puts on a Job's template for its selector
 * (generateSelector): the Workload's pod set does not carry them (job.c
 * drops them), so restoring the recorded labels keeps the template's own,
 * or the Job would no longer match its selector and every later update of
 * it would be rejected ("`selector` does not match template `labels`"). */
static const char *const SELECTOR_LABELS[] = {"job-name", "controller-uid",
                                              "batch.kubernetes.io/job-name",
                                              "batch.kubernetes.io/controller-uid"};
#define N_SELECTOR_LABELS (sizeof(SELECTOR_LABELS) / sizeof(SELECTOR_LABELS[0]))

static void restore_labels(json_t *md, const json_t *omd)
{
    json_t *kept[N_SELECTOR_LABELS];
    const json_t *cur = json_object_get(md, "labels");
    for (size_t i = 0; i < N_SELECTOR_LABELS; i++)
        kept[i] = json_incref(json_object_get(cur, SELECTOR_LABELS[i]));
    restore_field(md, omd, "labels");
    for (size_t i = 0; i < N_SELECTOR_LABELS; i++)
        if (kept[i])
            json_object_set_new(JX_OBJ(md, "labels"), SELECTOR_LABELS[i], kept[i]);
}

void kq_template_restore(json_t *tmpl, const json_t *orig)
{
    json_t *md = JX_OBJ(tmpl, "metadata");
    json_t *spec = JX_OBJ(tmpl, "spec");
    const json_t *omd = JX_GET(orig, "metadata");
    const json_t *ospec = JX_GET(orig, "spec");
    restore_labels(md, omd);
    restore_field(md, omd, "annotations");
    restore_field(spec, ospec, "nodeSelector");
    restore_field(spec, ospec, "tolerations");
    restore_field(spec, ospec, "schedulingGates");
    if (json_object_size(md) == 0)
        json_object_del(tmpl, "metadata");
}

static bool resources_use(const json_t *ctrs, const char *res)
{
    size_t i;
    json_t *ctr;
    json_array_foreach(ctrs, i, ctr) {
        if (JX_GET(ctr, "resources", "requests", res) || JX_GET(ctr, "resources", "limits", res))
            return true;
    }
    return false;
}

bool kq_spec_uses_resource(const json_t *pod_spec, const char *res)
{
    return resources_use(JX_GET(pod_spec, "containers"), res) ||
           resources_use(JX_GET(pod_spec, "initContainers"), res);
}
