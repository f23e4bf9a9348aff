/*
 * admit: admission of incoming objects (object.h): kind resolution,
 * v1beta2 -> v1beta1 conversion for Kueue kinds, strict decoding, the
 * namespace and status rules of the API server's REST strategies,
 * defaults, metadata validation, the schema's field rules and each kind's
 * own rules; and the Kubernetes-style error message for a rejection.
 *
 * Order (as the API server): decode (400 on any problem) -> namespace ->
 * drop/keep status -> defaults -> validation (422 with every cause).
 */
#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "api/names.h"
#include "api/object.h"
#include "api/schema-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

#define KUEUE_GROUP "kueue.x-k8s.io"

const struct api_kind *api_doc_kind(const json_t *doc, struct diag *d)
{
    const char *av = JX_STR(doc, "apiVersion");
    const char *kind = JX_STR(doc, "kind");
    if (!av || !av[0])
        diag_add(d, DIAG_REQUIRED, "apiVersion", NULL, "the object has no apiVersion");
    if (!kind || !kind[0])
        diag_add(d, DIAG_REQUIRED, "kind", NULL, "the object has no kind");
    if (!av || !av[0] || !kind || !kind[0])
        return NULL;
    const struct api_kind *k = api_kind_by_gvk(av, kind);
    if (!k)
        diag_add(d, DIAG_SYNTAX, "", NULL, "no matches for kind \"%s\" in version \"%s\"", kind,
                 av);
    return k;
}

/* ---- v1beta2 ---- */

/* Move a v1beta2 field to its v1beta1 name; the v1beta1 spelling is not a
 * v1beta2 field, so it is reported as unknown. */
static void rename_field(struct api_vctx *c, json_t *parent, const char *path,
                         const char *v2_name, const char *v1_name)
{
    if (json_object_get(parent, v1_name)) {
        char *f = api__path("%s.%s", path, v1_name);
        diag_add(c->d, DIAG_UNKNOWN_FIELD, f, NULL, NULL);
        xfree(f);
        return;
    }
    json_t *v = json_object_get(parent, v2_name);
    if (v) {
        json_object_set(parent, v1_name, v);
        json_object_del(parent, v2_name);
    }
}

static void convert_workload_priority(struct api_vctx *c, json_t *spec)
{
    static const char *const v1_only[] = {"priorityClassName", "priorityClassSource"};
    bool clean = true;
    for (int i = 0; i < 2; i++) {
        if (json_object_get(spec, v1_only[i])) {
            char *f = api__path("spec.%s", v1_only[i]);
            diag_add(c->d, DIAG_UNKNOWN_FIELD, f, NULL, NULL);
            xfree(f);
            clean = false;
        }
    }
    if (!clean)
        return;
    json_t *ref = json_object_get(spec, "priorityClassRef");
    if (!json_is_object(ref))
        return;
    const char *group = jx_or_empty(JX_STR(ref, "group"));
    const char *source = !strcmp(group, KUEUE_GROUP) ? "kueue.x-k8s.io/workloadpriorityclass"
                         : !strcmp(group, "scheduling.k8s.io") ? "scheduling.k8s.io/priorityclass"
                                                               : "";
    if (JX_STR(ref, "name"))
        json_object_set_new(spec, "priorityClassName", json_string(JX_STR(ref, "name")));
    json_object_set_new(spec, "priorityClassSource", json_string(source));
    json_object_del(spec, "priorityClassRef");
}

/* Kueue stores v1beta2; cueue stores v1beta1. Convert the few fields that
 * differ and relabel the object as v1beta1 (kueue.md §0.1). */
static void convert_v1beta2(struct api_vctx *c)
{
    const char *av = JX_STR(c->obj, "apiVersion");
    if (!av || strcmp(av, KUEUE_GROUP "/v1beta2"))
        return;
    json_t *spec = json_object_get(c->obj, "spec");
    size_t before = diag_count(c->d);
    if (c->kind->id == KIND_CLUSTERQUEUE && json_is_object(spec)) {
        rename_field(c, spec, "spec", "cohortName", "cohort");
        if (json_object_get(spec, "admissionChecks"))
            diag_add(c->d, DIAG_UNKNOWN_FIELD, "spec.admissionChecks", NULL, NULL);
    }
    if (c->kind->id == KIND_WORKLOAD && json_is_object(spec))
        convert_workload_priority(c, spec);
    /* relabel only a clean conversion: a caller that drops the reported
     * unknown fields (fieldValidation=Ignore) re-admits it as v1beta2 */
    if (diag_count(c->d) == before)
        json_object_set_new(c->obj, "apiVersion", json_string(api_kind_api_version(c->kind)));
}

/* ---- steps ---- */

static bool check_gvk(struct api_vctx *c)
{
    const char *av = JX_STR(c->obj, "apiVersion");
    const char *kind = JX_STR(c->obj, "kind");
    if (!av)
        json_object_set_new(c->obj, "apiVersion", json_string(api_kind_api_version(c->kind)));
    if (!kind)
        json_object_set_new(c->obj, "kind", json_string(c->kind->kind));
    if ((av && api_kind_by_gvk(av, c->kind->kind) != c->kind) ||
        (kind && strcmp(kind, c->kind->kind))) {
        diag_add(c->d, DIAG_SYNTAX, "", NULL,
                 "the API version in the data (%s/%s) does not match the expected API version "
                 "(%s/%s)", av ? av : "", kind ? kind : "", api_kind_api_version(c->kind),
                 c->kind->kind);
        return false;
    }
    return true;
}

static bool apply_namespace(struct api_vctx *c, const char *ns)
{
    json_t *md = JX_OBJ(c->obj, "metadata");
    const char *have = JX_STR(md, "namespace");
    if (!c->kind->namespaced) {
        json_object_del(md, "namespace"); /* cluster-scoped: silently cleared */
        return true;
    }
    if (ns && ns[0] && have && have[0] && strcmp(ns, have)) {
        diag_add(c->d, DIAG_SYNTAX, "metadata.namespace", NULL,
                 "the namespace of the provided object (%s) does not match the namespace sent "
                 "on the request (%s)", have, ns);
        return false;
    }
    if ((!have || !have[0]) && ns && ns[0])
        json_object_set_new(md, "namespace", json_string(ns));
    return true;
}

static void apply_status_rule(struct api_vctx *c, const struct api_kind_schema *ks)
{
    if (!api_schema_field(ks->root, "status"))
        return;
    if (!c->old) {
        if (!ks->keep_status_on_create)
            json_object_del(c->obj, "status");
        return;
    }
    json_t *st = json_object_get(c->old, "status");
    if (st)
        json_object_set_new(c->obj, "status", json_deep_copy(st));
    else
        json_object_del(c->obj, "status");
}

static void validate_meta(struct api_vctx *c, const struct api_kind_schema *ks)
{
    const char *name = JX_STR(c->obj, "metadata", "name");
    const char *gen = JX_STR(c->obj, "metadata", "generateName");
    if ((!name || !name[0]) && (!gen || !gen[0]))
        diag_add(c->d, DIAG_REQUIRED, "metadata.name", NULL, "name or generateName is required");
    if (name && name[0])
        api_validate_name(name, ks->name_rule, ks->name_max, false, "metadata.name", c->d);
    if (gen && gen[0])
        api_validate_name(gen, ks->name_rule, ks->name_max, true, "metadata.generateName", c->d);
    const char *ns = JX_STR(c->obj, "metadata", "namespace");
    if (c->kind->namespaced && (!ns || !ns[0]))
        diag_add(c->d, DIAG_REQUIRED, "metadata.namespace", NULL, NULL);
    else if (c->kind->namespaced)
        api_validate_name(ns, api_check_dns1123_label, 0, false, "metadata.namespace", c->d);
    if (c->old) {
        static const char *const frozen[] = {"name", "namespace", "uid"};
        for (int i = 0; i < 3; i++) {
            json_t *a = JX_GET(c->obj, "metadata", frozen[i]);
            json_t *b = JX_GET(c->old, "metadata", frozen[i]);
            if (a && b && !jx_equal(a, b)) {
                char *f = api__path("metadata.%s", frozen[i]);
                diag_addj(c->d, DIAG_INVALID, f, a, "field is immutable");
                xfree(f);
            }
        }
    }
}

/* Decode and kind checks shared by api_admit and api_admit_status. */
static int decode_phase(struct api_vctx *c, const struct api_kind_schema *ks)
{
    size_t before = diag_count(c->d);
    if (!json_is_object(c->obj)) {
        diag_add(c->d, DIAG_SYNTAX, "", NULL, "the object must be a JSON object");
        return CU_EBADREQ;
    }
    if (!check_gvk(c))
        return CU_EBADREQ;
    convert_v1beta2(c);
    api_schema_run(SCHEMA_DECODE, ks->root, c->obj, "", c, NULL);
    return diag_count(c->d) > before ? CU_EBADREQ : 0;
}

static int validate_phase(struct api_vctx *c, const struct api_kind_schema *ks, size_t before)
{
    api_schema_run(SCHEMA_DEFAULT, ks->root, c->obj, "", c, NULL);
    if (ks->defaults)
        ks->defaults(c);
    validate_meta(c, ks);
    api_schema_run(SCHEMA_VALIDATE, ks->root, c->obj, "", c, c->old);
    if (ks->validate)
        ks->validate(c);
    return diag_count(c->d) > before ? CU_EINVAL : 0;
}

int api_admit(const struct api_kind *k, json_t *obj, const json_t *old, const char *ns,
              struct diag *d)
{
    return api_admit_in(k, obj, old, ns, NULL, d);
}

int api_admit_in(const struct api_kind *k, json_t *obj, const json_t *old, const char *ns,
                 const struct api_admit_env *env, struct diag *d)
{
    const struct api_kind_schema *ks = k ? api_kind_schema(k->id) : NULL;
    if (!ks) {
        diag_add(d, DIAG_SYNTAX, "", NULL, "unknown kind");
        return CU_EBADREQ;
    }
    struct api_vctx c = {.kind = k, .obj = obj, .old = old, .d = d, .env = env};
    size_t before = diag_count(d);
    int rc = decode_phase(&c, ks);
    if (rc)
        return rc;
    if (!apply_namespace(&c, ns))
        return CU_EBADREQ;
    apply_status_rule(&c, ks);
    return validate_phase(&c, ks, before);
}

void api_create_prepare(json_t *obj)
{
    json_t *md = JX_OBJ(obj, "metadata");
    static const char *const keys[] = {"uid", "resourceVersion", "creationTimestamp",
                                       "deletionTimestamp", "deletionGracePeriodSeconds",
                                       "generation", "selfLink", "managedFields", NULL};
    for (const char *const *kk = keys; *kk; kk++)
        json_object_del(md, *kk);
}

void api_create_name(json_t *obj, const char *suffix)
{
    const char *gen = JX_STR(obj, "metadata", "generateName");
    if (JX_STR(obj, "metadata", "name") || !gen || !suffix)
        return;
    char *name = xasprintf("%.*s%s", API_GENERATE_NAME_BASE_MAX, gen, suffix);
    JX_SET_NEW(obj, json_string(name), "metadata", "name");
    xfree(name);
}

void api_create_stamp(const struct api_kind *k, json_t *obj, const char *uid)
{
    JX_SET_NEW(obj, json_string(uid), "metadata", "uid");
    const char *name = JX_STR(obj, "metadata", "name");
    if (k->id == KIND_NAMESPACE && name)
        api_set_label(obj, "kubernetes.io/metadata.name", name);
}

json_t *api_namespace_activated(const json_t *ns)
{
    json_t *c = json_deep_copy(ns);
    JX_SET_NEW(c, json_string("Active"), "status", "phase");
    return c;
}

int api_admit_status(const struct api_kind *k, json_t *obj, const json_t *old, struct diag *d)
{
    const struct api_kind_schema *ks = k ? api_kind_schema(k->id) : NULL;
    if (!ks || !old) {
        diag_add(d, DIAG_SYNTAX, "", NULL, ks ? "no stored object to update" : "unknown kind");
        return CU_EBADREQ;
    }
    struct api_vctx c = {.kind = k, .obj = obj, .old = old, .d = d, .status_update = true};
    size_t before = diag_count(d);
    int rc = decode_phase(&c, ks);
    if (rc)
        return rc;
    /* a /status write changes nothing but status */
    json_t *status = json_incref(json_object_get(obj, "status"));
    json_t *copy = json_deep_copy(old);
    json_object_clear(obj);
    json_object_update(obj, copy);
    json_decref(copy);
    if (status)
        json_object_set_new(obj, "status", status);
    else
        json_object_del(obj, "status");
    return validate_phase(&c, ks, before);
}

static bool has_type_decode_errors(const struct diag *d)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->items[i].type == DIAG_UNKNOWN_FIELD || d->items[i].type == DIAG_TYPE_INVALID)
            return true;
    return false;
}

char *api_error_message(const struct api_kind *k, const char *name, int rc,
                        const struct diag *d)
{
    char *summary = d && diag_count(d) ? diag_summary(d) : xstrdup(cu_strerror(rc));
    char *msg;
    if (k && rc == CU_EINVAL)
        msg = xasprintf("%s \"%s\" is invalid: %s", api_kind_kind_group(k), name ? name : "",
                        summary);
    else if (k && rc == CU_EBADREQ && d && has_type_decode_errors(d))
        msg = xasprintf("%s in version \"%s\" cannot be handled as a %s: %s", k->kind,
                        k->version, k->kind, summary);
    else
        msg = xstrdup(summary);
    xfree(summary);
    return msg;
}
