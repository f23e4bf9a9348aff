/*
 * patch: the three patch formats of the Kubernetes API, pure functions over
 * jansson documents (inputs are never modified; results are new), the one
 * implementation the API server's PATCH (server/patchreq.c) and the
 * simulator's patch actions (sim/apply.c) share, so the two cannot drift:
 *   - JSON merge patch (RFC 7386).
 *   - strategic merge patch (built-in kinds): like merge patch, but lists
 *     whose field has a merge key (containers by name, env by name, ports
 *     by containerPort, ...) merge item by item, and the directives
 *     $patch (merge|replace|delete), $setElementOrder/<list>, $retainKeys
 *     and $deleteFromPrimitiveList/<list> are honoured.
 *   - JSON patch (RFC 6902) with RFC 6901 pointers.
 */
#include "api/patch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/schema.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

/* Every member is copied once: target's members in target's order (those
 * the patch leaves alone copied, the others merged), then the members the
 * patch adds. A member the patch reaches into is merged from target's own
 * value, never copied first and merged after. */
json_t *api_merge_patch(const json_t *target, const json_t *patch)
{
    if (!json_is_object(patch))
        return jx_deep_copy(patch);
    json_t *out = json_object();
    const char *key;
    json_t *tv, *pv;
    json_object_foreach((json_t *)target, key, tv) /* none when not an object */
    {
        pv = json_object_get(patch, key);
        if (!pv)
            json_object_set_new(out, key, jx_deep_copy(tv));
        else if (!json_is_null(pv))
            json_object_set_new(out, key, api_merge_patch(tv, pv));
    }
    json_object_foreach((json_t *)patch, key, pv)
    {
        if (!json_is_null(pv) && !json_object_get(out, key))
            json_object_set_new(out, key, api_merge_patch(NULL, pv));
    }
    return out;
}

/* ---- strategic merge patch and JSON patch ---- */

#define SMP_MAX_DEPTH 64

/* ---- strategic merge patch ---- */

struct merge_key {
    const char *parent; /* NULL = any parent */
    const char *field;
    const char *key;
};

/* The standard Kubernetes patchMergeKey tags of the built-in types cueue
 * serves (core/v1 Pod, PodTemplate, Node, Event; batch/v1 Job; ObjectMeta). */
static const struct merge_key merge_keys[] = {
    {"containers", "ports", "containerPort"},
    {"initContainers", "ports", "containerPort"},
    {"ephemeralContainers", "ports", "containerPort"},
    {NULL, "containers", "name"},
    {NULL, "initContainers", "name"},
    {NULL, "ephemeralContainers", "name"},
    {NULL, "env", "name"},
    {NULL, "volumeMounts", "mountPath"},
    {NULL, "volumeDevices", "devicePath"},
    {NULL, "volumes", "name"},
    {NULL, "imagePullSecrets", "name"},
    {NULL, "hostAliases", "ip"},
    {NULL, "topologySpreadConstraints", "topologyKey"},
    {NULL, "resourceClaims", "name"},
    {NULL, "schedulingGates", "name"},
    {NULL, "conditions", "type"},
    {NULL, "ownerReferences", "uid"},
    {NULL, "addresses", "type"},
    {NULL, "readinessGates", "conditionType"},
    {NULL, "podIPs", "ip"},
    {NULL, "hostIPs", "ip"},
};

/* Primitive lists merged as sets (patchStrategy:merge without a key). */
static const char *const merge_sets[] = {"finalizers", NULL};

const char *api_merge_key(const char *parent, const char *field)
{
    for (size_t i = 0; i < sizeof(merge_keys) / sizeof(merge_keys[0]); i++) {
        const struct merge_key *m = &merge_keys[i];
        if (strcmp(m->field, field))
            continue;
        if (!m->parent || (parent && !strcmp(m->parent, parent)))
            return m->key;
    }
    return NULL;
}

static bool is_merge_set(const char *field)
{
    for (const char *const *s = merge_sets; *s; s++)
        if (!strcmp(*s, field))
            return true;
    return false;
}

struct smp {
    char *err;
    size_t errlen;
    bool failed;
};

static void smp_fail(struct smp *c, const char *msg, const char *field)
{
    if (!c->failed)
        snprintf(c->err, c->errlen, "%s%s%s", msg, field ? ": " : "", field ? field : "");
    c->failed = true;
}

static json_t *smp_object(struct smp *c, const json_t *orig, const json_t *patch,
                          const char *parent, const struct api_schema *sch, int depth);

/* The schema of field k inside an object (or map value) schema; NULL when
 * unknown (pass-through, or no schema): the merge-key table decides then. */
static const struct api_schema *child_schema(const struct api_schema *s, const char *k)
{
    if (!s)
        return NULL;
    if (s->type == SCH_OBJECT)
        return api_schema_field(s, k);
    if (s->type == SCH_MAP)
        return api_schema_items(s);
    return NULL;
}

/* How list field k merges: 'k' keyed (*key set), 's' set, 'r' replaced. */
static char list_mode(const struct api_schema *fs, const char *parent, const char *k,
                      const char **key)
{
    *key = NULL;
    if (fs && fs->type == SCH_ARRAY) {
        if (fs->list_type == LIST_MAP && fs->merge_key) {
            *key = fs->merge_key;
            return 'k';
        }
        return fs->list_type == LIST_SET ? 's' : 'r';
    }
    *key = api_merge_key(parent, k);
    if (*key)
        return 'k';
    return is_merge_set(k) ? 's' : 'r';
}

/* Drop directive keys ($patch, $setElementOrder/..., ...) from a value that
 * is inserted whole (no original to merge with). */
static json_t *strip_directives(const json_t *v)
{
    if (json_is_array(v)) {
        json_t *out = json_array();
        size_t i;
        json_t *it;
        json_array_foreach((json_t *)v, i, it)
        {
            json_array_append_new(out, strip_directives(it));
        }
        return out;
    }
    if (!json_is_object(v))
        return json_deep_copy(v);
    json_t *out = json_object();
    const char *k;
    json_t *it;
    json_object_foreach((json_t *)v, k, it)
    {
        if (k[0] != '$')
            json_object_set_new(out, k, strip_directives(it));
    }
    return out;
}

static bool key_equal(const json_t *a, const json_t *b, const char *key)
{
    json_t *va = json_object_get(a, key), *vb = json_object_get(b, key);
    return va && vb && json_equal(va, vb);
}

static long find_by_key(const json_t *list, const json_t *item, const char *key)
{
    for (size_t i = 0; i < json_array_size(list); i++)
        if (key_equal(json_array_get(list, i), item, key))
            return (long)i;
    return -1;
}

/* Merge a keyed list: patch items update, add or ($patch: delete) remove
 * items of orig matched by key. A {"$patch":"replace"} item replaces the
 * whole list with the patch's other items. */
static json_t *smp_keyed_list(struct smp *c, const json_t *orig, const json_t *patch,
                              const char *field, const char *key,
                              const struct api_schema *item_sch, int depth)
{
    size_t i;
    json_t *pi;
    json_array_foreach((json_t *)patch, i, pi)
    {
        const char *d = JX_STR(pi, "$patch");
        if (d && !strcmp(d, "replace")) {
            json_t *out = json_array();
            size_t j;
            json_t *pj;
            json_array_foreach((json_t *)patch, j, pj)
            {
                if (!JX_STR(pj, "$patch"))
                    json_array_append_new(out, strip_directives(pj));
            }
            return out;
        }
    }
    json_t *out = json_is_array(orig) ? json_deep_copy(orig) : json_array();
    json_array_foreach((json_t *)patch, i, pi)
    {
        if (!json_is_object(pi)) {
            smp_fail(c, "a list with a merge key must hold objects", field);
            break;
        }
        if (!json_object_get(pi, key)) {
            smp_fail(c, "a list item lacks its merge key", key);
            break;
        }
        long at = find_by_key(out, pi, key);
        const char *d = JX_STR(pi, "$patch");
        if (d && !strcmp(d, "delete")) {
            if (at >= 0)
                json_array_remove(out, (size_t)at);
        } else if (at >= 0) {
            json_array_set_new(out, (size_t)at,
                               smp_object(c, json_array_get(out, (size_t)at), pi, field,
                                          item_sch, depth + 1));
        } else {
            json_array_append_new(out, strip_directives(pi));
        }
    }
    return out;
}

static json_t *smp_set_list(const json_t *orig, const json_t *patch)
{
    json_t *out = json_is_array(orig) ? json_deep_copy(orig) : json_array();
    size_t i;
    json_t *pi;
    json_array_foreach((json_t *)patch, i, pi)
    {
        bool have = false;
        for (size_t j = 0; j < json_array_size(out) && !have; j++)
            have = json_equal(json_array_get(out, j), pi);
        if (!have)
            json_array_append(out, pi);
    }
    return out;
}

/* $setElementOrder/<field>: items named in the order list come first, in
 * that order; the rest keep their relative order after them. */
static void apply_order(json_t *list, const json_t *order, const char *key)
{
    if (!json_is_array(list) || !json_is_array(order))
        return;
    json_t *sorted = json_array();
    json_t *rest = json_deep_copy(list);
    size_t i;
    json_t *o;
    json_array_foreach((json_t *)order, i, o)
    {
        for (size_t j = 0; j < json_array_size(rest); j++) {
            json_t *it = json_array_get(rest, j);
            bool match = key ? (json_is_object(o) && key_equal(it, o, key)) : json_equal(it, o);
            if (match) {
                json_array_append(sorted, it);
                json_array_remove(rest, j);
                break;
            }
        }
    }
    json_array_extend(sorted, rest);
    json_array_clear(list);
    json_array_extend(list, sorted);
    json_decref(sorted);
    json_decref(rest);
}

static void delete_from_primitive(json_t *list, const json_t *values)
{
    if (!json_is_array(list))
        return;
    for (size_t i = json_array_size(list); i-- > 0;) {
        size_t j;
        json_t *v;
        json_array_foreach((json_t *)values, j, v)
        {
            if (json_equal(json_array_get(list, i), v)) {
                json_array_remove(list, i);
                break;
            }
        }
    }
}

static void retain_keys(json_t *out, const json_t *keys, const json_t *patch)
{
    const char *k;
    json_t *v;
    void *tmp;
    json_object_foreach_safe(out, tmp, k, v)
    {
        bool keep = false;
        size_t i;
        json_t *rk;
        json_array_foreach((json_t *)keys, i, rk)
        {
            if (json_is_string(rk) && !strcmp(json_string_value(rk), k))
                keep = true;
        }
        if (!keep && !json_object_get(patch, k))
            json_object_del(out, k);
    }
}

static void smp_field(struct smp *c, json_t *out, const char *parent, const char *k,
                      const json_t *pv, const struct api_schema *fs, int depth)
{
    json_t *ov = json_object_get(out, k);
    if (json_is_null(pv)) {
        json_object_del(out, k);
    } else if (json_is_object(pv)) {
        const char *d = JX_STR(pv, "$patch");
        if (d && !strcmp(d, "delete"))
            json_object_del(out, k);
        else if (d && !strcmp(d, "replace"))
            json_object_set_new(out, k, strip_directives(pv));
        else
            json_object_set_new(out, k, smp_object(c, json_is_object(ov) ? ov : NULL, pv, k, fs,
                                                   depth + 1));
    } else if (json_is_array(pv)) {
        const char *key;
        char mode = list_mode(fs, parent, k, &key);
        if (mode == 'k')
            json_object_set_new(out, k,
                                smp_keyed_list(c, ov, pv, k, key, fs ? api_schema_items(fs) : NULL,
                                               depth));
        else if (mode == 's')
            json_object_set_new(out, k, smp_set_list(ov, pv));
        else
            json_object_set_new(out, k, strip_directives(pv));
    } else {
        json_object_set(out, k, (json_t *)pv);
    }
}

static json_t *smp_object(struct smp *c, const json_t *orig, const json_t *patch,
                          const char *parent, const struct api_schema *sch, int depth)
{
    if (depth > SMP_MAX_DEPTH) {
        smp_fail(c, "the patch is nested too deeply", NULL);
        return json_object();
    }
    json_t *out = json_is_object(orig) ? json_deep_copy(orig) : json_object();
    json_t *retain = json_object_get(patch, "$retainKeys");
    if (retain && !json_is_array(retain))
        smp_fail(c, "$retainKeys must be a list", parent);
    else if (retain)
        retain_keys(out, retain, patch);
    const char *k;
    json_t *pv;
    json_object_foreach((json_t *)patch, k, pv)
    {
        if (k[0] != '$')
            smp_field(c, out, parent, k, pv, child_schema(sch, k), depth);
    }
    json_object_foreach((json_t *)patch, k, pv)
    {
        if (!strncmp(k, "$setElementOrder/", 17)) {
            const char *key;
            list_mode(child_schema(sch, k + 17), parent, k + 17, &key);
            apply_order(json_object_get(out, k + 17), pv, key);
        } else if (!strncmp(k, "$deleteFromPrimitiveList/", 25)) {
            delete_from_primitive(json_object_get(out, k + 25), pv);
        } else if (k[0] == '$' && strcmp(k, "$patch") && strcmp(k, "$retainKeys")) {
            smp_fail(c, "unknown patch directive", k);
        }
    }
    return out;
}

json_t *api_strategic_merge_patch(const struct api_schema *root, const json_t *target,
                                  const json_t *patch, char *err, size_t errlen)
{
    struct smp c = {err, errlen, false};
    if (!json_is_object(patch)) {
        smp_fail(&c, "a strategic merge patch must be a JSON object", NULL);
        return NULL;
    }
    const char *d = JX_STR(patch, "$patch");
    json_t *out;
    if (d && !strcmp(d, "replace"))
        out = strip_directives(patch);
    else
        out = smp_object(&c, target, patch, NULL, root, 0);
    if (c.failed) {
        json_decref(out);
        return NULL;
    }
    return out;
}

/* ---- JSON patch (RFC 6902) ---- */

/* Resolve a pointer to (parent container, last token). The token is
 * unescaped (~1 -> /, ~0 -> ~); caller frees *tok. */
static int pointer_parent(json_t *doc, const char *ptr, json_t **parent, char **tok)
{
    if (*ptr != '/')
        return -1;
    char *p = xstrdup(ptr + 1);
    json_t *cur = doc;
    char *save = p, *seg;
    char *last = NULL;
    while ((seg = strsep(&save, "/")) != NULL) {
        /* unescape in place */
        char *w = seg;
        for (char *r = seg; *r; r++) {
            if (r[0] == '~' && r[1] == '1') {
                *w++ = '/';
                r++;
            } else if (r[0] == '~' && r[1] == '0') {
                *w++ = '~';
                r++;
            } else {
                *w++ = *r;
            }
        }
        *w = '\0';
        if (last) {
            if (json_is_object(cur))
                cur = json_object_get(cur, last);
            else if (json_is_array(cur)) {
                char *end;
                unsigned long idx = strtoul(last, &end, 10);
                cur = (*end || !*last) ? NULL : json_array_get(cur, idx);
            } else {
                cur = NULL;
            }
            if (!cur) {
                xfree(p);
                return -1;
            }
        }
        last = seg;
    }
    *parent = cur;
    *tok = xstrdup(last ? last : "");
    xfree(p);
    return 0;
}

static json_t *pointer_get(json_t *doc, const char *ptr)
{
    if (!*ptr)
        return doc;
    json_t *parent;
    char *tok;
    if (pointer_parent(doc, ptr, &parent, &tok))
        return NULL;
    json_t *v = NULL;
    if (json_is_object(parent)) {
        v = json_object_get(parent, tok);
    } else if (json_is_array(parent)) {
        char *end;
        unsigned long idx = strtoul(tok, &end, 10);
        v = (*end || !*tok) ? NULL : json_array_get(parent, idx);
    }
    xfree(tok);
    return v;
}

/* Remove and return (new ref) the value at ptr, or NULL. */
static json_t *pointer_take(json_t *doc, const char *ptr)
{
    json_t *parent;
    char *tok;
    if (pointer_parent(doc, ptr, &parent, &tok))
        return NULL;
    json_t *v = NULL;
    if (json_is_object(parent)) {
        v = json_incref(json_object_get(parent, tok));
        if (v)
            json_object_del(parent, tok);
    } else if (json_is_array(parent)) {
        char *end;
        unsigned long idx = strtoul(tok, &end, 10);
        if (*tok && !*end && idx < json_array_size(parent)) {
            v = json_incref(json_array_get(parent, idx));
            json_array_remove(parent, idx);
        }
    }
    xfree(tok);
    return v;
}

/* Add v (stolen) at ptr; replace=true requires the target to exist. */
static int pointer_put(json_t *doc, const char *ptr, json_t *v, bool replace)
{
    json_t *parent;
    char *tok;
    if (pointer_parent(doc, ptr, &parent, &tok)) {
        json_decref(v);
        return -1;
    }
    int rc = -1;
    if (json_is_object(parent)) {
        if (!replace || json_object_get(parent, tok))
            rc = json_object_set_new(parent, tok, v) ? -1 : 0;
        else
            json_decref(v);
    } else if (json_is_array(parent)) {
        char *end;
        size_t n = json_array_size(parent);
        if (!replace && !strcmp(tok, "-")) {
            rc = json_array_append_new(parent, v) ? -1 : 0;
        } else {
            unsigned long idx = strtoul(tok, &end, 10);
            if (!*tok || *end || idx > n || (replace && idx == n))
                json_decref(v);
            else if (replace)
                rc = json_array_set_new(parent, idx, v) ? -1 : 0;
            else
                rc = json_array_insert_new(parent, idx, v) ? -1 : 0;
        }
    } else {
        json_decref(v);
    }
    xfree(tok);
    return rc;
}

static int json_patch_op(json_t *doc, const json_t *op, char *err, size_t errlen)
{
    const char *name = JX_STR(op, "op"), *path = JX_STR(op, "path");
    const char *from = JX_STR(op, "from");
    json_t *value = json_object_get(op, "value");
    if (!name || !path) {
        snprintf(err, errlen, "every operation needs \"op\" and \"path\"");
        return -1;
    }
    int rc = -1;
    if (!strcmp(name, "add") && value) {
        rc = pointer_put(doc, path, json_deep_copy(value), false);
    } else if (!strcmp(name, "replace") && value) {
        rc = pointer_put(doc, path, json_deep_copy(value), true);
    } else if (!strcmp(name, "remove")) {
        json_t *v = pointer_take(doc, path);
        rc = v ? 0 : -1;
        json_decref(v);
    } else if (!strcmp(name, "test") && value) {
        json_t *v = pointer_get(doc, path);
        rc = v && json_equal(v, value) ? 0 : -1;
        if (rc) {
            snprintf(err, errlen, "testing value %s failed", path);
            return -1;
        }
    } else if ((!strcmp(name, "move") || !strcmp(name, "copy")) && from) {
        json_t *v = !strcmp(name, "move") ? pointer_take(doc, from)
                                          : json_deep_copy(pointer_get(doc, from));
        rc = v ? pointer_put(doc, path, v, false) : -1;
    } else {
        snprintf(err, errlen, "unsupported or incomplete operation \"%s\"", name);
        return -1;
    }
    if (rc)
        snprintf(err, errlen, "%s operation does not apply: doc is missing path: \"%s\"", name,
                 path);
    return rc;
}

json_t *api_json_patch(const json_t *target, const json_t *ops, char *err, size_t errlen)
{
    if (!json_is_array(ops)) {
        snprintf(err, errlen, "a JSON patch must be a list of operations");
        return NULL;
    }
    json_t *doc = json_deep_copy(target);
    size_t i;
    json_t *op;
    json_array_foreach((json_t *)ops, i, op)
    {
        if (!json_is_object(op) || json_patch_op(doc, op, err, errlen)) {
            if (!json_is_object(op))
                snprintf(err, errlen, "operation %zu is not an object", i);
            json_decref(doc);
            return NULL;
        }
    }
    return doc;
}

bool api_patch_strategic_kind(const struct api_kind *k)
{
    return k && (!k->group[0] || !strcmp(k->group, "batch"));
}
