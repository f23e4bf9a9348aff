/*
 * jobs/gc: Kubernetes' garbage collector for ownerReferences, with Background
 * propagation: once an owner is gone, every object whose ownerReferences
 * all name absent owners is deleted (its own dependents follow the same
 * way). An owner is present when an object of the reference's kind and
 * name exists with the referenced uid (in the dependent's namespace for
 * namespaced kinds). References to kinds cueue does not serve are never
 * considered absent. Events are not collected (Kubernetes expires them by
 * TTL; cueue keeps them).
 *
 * An index (owner uid -> dependents) built from store events finds the
 * dependents of a deleted object without listing; a newly seen dependent is
 * checked once too, so orphans left while the server was down are
 * collected after a restart. Keys handed to reconcile: ns = the
 * dependent's namespace, name = "<kind id>:<name>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/kinds.h"
#include "api/meta.h"
#include "ctrl/ctrl-int.h"
#include "ctrl/jobs/jobs.h"
#include "ctrl/kueue/kueue.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

struct gc_rec {
    int rid;
    struct kq_index *deps; /* owner uid -> "<kind id>:<ns>\x1f<name>" */
    struct jobs_ref_memo *refs; /* each event's ownerReferences, read once (shared) */
};

static char *dep_entry(enum api_kind_id kind, const char *ns, const char *name)
{
    return xasprintf("%d:%s\x1f%s", (int)kind, ns ? ns : "", name);
}

static void enqueue_dep(struct ctrl *c, struct gc_rec *r, const char *entry)
{
    char *cp = xstrdup(entry);
    char *colon = strchr(cp, ':');
    char *sep = colon ? strchr(colon, '\x1f') : NULL;
    if (sep) {
        *sep = '\0';
        char *key = xasprintf("%.*s:%s", (int)(colon - cp), cp, sep + 1);
        ctrl_enqueue(c, r->rid, colon[1] ? colon + 1 : NULL, key);
        xfree(key);
    }
    xfree(cp);
}

static void gc_on_event(struct ctrl *c, void *self, const struct store_event *ev)
{
    struct gc_rec *r = self;
    if (ev->kind == KIND_EVENT)
        return;
    const json_t *obj = ev->obj;
    const json_t *refs = jobs_ref_memo_owners(r->refs, ev);
    size_t n_refs = json_array_size(refs);
    if (ev->type != STORE_DELETED && n_refs == 0)
        return; /* owns nothing new, owned by nothing */
    /* the index entry is built only for an object that has owners */
    char *entry = n_refs ? dep_entry(ev->kind, api_namespace(obj), api_name(obj)) : NULL;
    size_t i;
    json_t *ref;
    if (ev->type == STORE_DELETED) {
        json_array_foreach(refs, i, ref) {
            kq_index_remove(r->deps, JX_STR(ref, "uid"), entry);
        }
        const char *uid = api_uid(obj);
        size_t n;
        char *const *deps = kq_index_get(r->deps, uid, &n);
        for (size_t j = 0; j < n; j++)
            enqueue_dep(c, r, deps[j]);
        kq_index_drop(r->deps, uid);
    } else {
        json_array_foreach(refs, i, ref) {
            kq_index_add(r->deps, JX_STR(ref, "uid"), entry);
        }
        if (ev->type == STORE_ADDED)
            enqueue_dep(c, r, entry);
    }
    xfree(entry);
}

/* True when the owner a reference names exists (or cannot be checked). */
static bool owner_present(struct ctrl *c, const char *dep_ns, const json_t *ref)
{
    const struct api_kind *k =
        api_kind_by_gvk(jx_or_empty(JX_STR(ref, "apiVersion")), jx_or_empty(JX_STR(ref, "kind")));
    if (!k)
        return true;
    json_t *owner = store_get(ctrl_store(c), k->id, k->namespaced ? dep_ns : NULL,
                              jx_or_empty(JX_STR(ref, "name")));
    bool present = owner && !strcmp(jx_or_empty(api_uid(owner)), jx_or_empty(JX_STR(ref, "uid")));
    json_decref(owner);
    return present;
}

static void gc_reconcile(struct ctrl *c, void *self, const char *ns, const char *key)
{
    (void)self;
    char *end;
    long kind = strtol(key, &end, 10);
    if (*end != ':' || kind < 0 || kind >= KIND__COUNT)
        return;
    const char *name = end + 1;
    json_t *obj = store_get(ctrl_store(c), (enum api_kind_id)kind, ns, name);
    if (!obj)
        return;
    const json_t *refs = JX_GET(obj, "metadata", "ownerReferences");
    bool orphan = json_array_size(refs) > 0 && !api_is_deleting(obj);
    size_t i;
    json_t *ref;
    json_array_foreach(refs, i, ref) {
        if (orphan && owner_present(c, ns, ref))
            orphan = false;
    }
    if (orphan)
        store_delete(ctrl_store(c), (enum api_kind_id)kind, ns, name, api_uid(obj), NULL);
    json_decref(obj);
}

static void gc_free(void *self)
{
    struct gc_rec *r = self;
    kq_index_free(r->deps);
    jobs_ref_memo_drop(r->refs);
    xfree(r);
}

static const struct ctrl_reconciler_ops gc_ops = {
    .name = "gc",
    .on_event = gc_on_event,
    .reconcile = gc_reconcile,
    .after_round = NULL,
    .free = gc_free,
};

void ctrl__gc_register(struct ctrl *c)
{
    struct gc_rec *r = xcalloc(1, sizeof(*r));
    r->deps = kq_index_new();
    r->refs = jobs_ref_memo_new();
    r->rid = ctrl_register(c, &gc_ops, r);
}

struct jobs_ref_memo *jobs_gc_ref_memo(struct ctrl *c)
{
    void *self = NULL;
    if (ctrl_find(c, "gc", &self) < 0 || !self)
        return NULL;
    return ((struct gc_rec *)self)->refs;
}
