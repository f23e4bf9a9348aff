/*
 * apply: what the scenario does to the cluster. Objects enter the store the
 * way the API server lets them in (api_doc_kind, api_admit, then
 * store_create or store_update), so a bad manifest gets the same message
 * `kubectl apply` would print, prefixed with where it is in the scenario.
 * Also: the runFor table (object -> runtime) and the simulated executor's
 * outcome callback, which reads a pod's runtime from its own annotations or
 * its owners'.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "api/meta.h"
#include "api/names.h"
#include "api/object.h"
#include "api/patch.h"
#include "api/schema.h"
#include "sim/sim-int.h"
#include "store/store.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

struct runtime_entry {
    char *key; /* "Kind/ns/name" */
    int64_t ms;
    UT_hash_handle hh;
};

struct sim_runtimes {
    struct runtime_entry *map;
};

void sim_warn(struct sim *s, const char *fmt, ...)
{
    s->n_warnings++;
    if (s->opt.quiet_warnings && !s->opt.keep_records)
        return;
    struct sbuf sb;
    sbuf_init(&sb, 0);
    va_list ap;
    va_start(ap, fmt);
    sbuf_vaddf(&sb, fmt, ap);
    va_end(ap);
    char *text = sbuf_take(&sb);
    sbuf_release(&sb);
    if (s->opt.keep_records)
        json_array_append_new(s->warnings, json_string(text));
    if (!s->opt.quiet_warnings) {
        char t[SIM_SECONDS_LEN];
        sim_format_seconds(clk_now(&s->clock.clk) - s->sc->start_ms, t);
        fprintf(stderr, "cueue sim: warning at %ss: %s\n", t, text);
    }
    xfree(text);
}

static char *rt_key(const char *kind, const char *ns, const char *name)
{
    return xasprintf("%s/%s/%s", kind, ns ? ns : "", name ? name : "");
}

static void runtime_record(struct sim *s, const char *kind, const char *ns, const char *name,
                           int64_t ms)
{
    if (!s->runtimes)
        s->runtimes = xcalloc(1, sizeof(*s->runtimes));
    char *key = rt_key(kind, ns, name);
    struct runtime_entry *e;
    HASH_FIND_STR(s->runtimes->map, key, e);
    if (e) {
        e->ms = ms;
        xfree(key);
        return;
    }
    e = xcalloc(1, sizeof(*e));
    e->key = key;
    e->ms = ms;
    HASH_ADD_KEYPTR(hh, s->runtimes->map, e->key, strlen(e->key), e);
}

int64_t sim_runtime_lookup(struct sim *s, const char *kind, const char *ns, const char *name)
{
    if (!s->runtimes)
        return -1;
    char *key = rt_key(kind, ns, name);
    struct runtime_entry *e;
    HASH_FIND_STR(s->runtimes->map, key, e);
    xfree(key);
    return e ? e->ms : -1;
}

void sim_runtimes_free(struct sim_runtimes *rt)
{
    if (!rt)
        return;
    struct runtime_entry *e, *t;
    HASH_ITER(hh, rt->map, e, t) {
        HASH_DEL(rt->map, e);
        xfree(e->key);
        xfree(e);
    }
    xfree(rt);
}

/* Warn once per object and key that its annotation or label `key` holds
 * `value`, which breaks `rule`, so the simulator ignores it. */
static void warn_ignored(struct sim *s, const json_t *obj, const char *key, const char *value,
                         const char *rule)
{
    if (!s)
        return;
    char *id = xasprintf("%s\x1f%s\x1f%s\x1f%s", key, jx_or_empty(JX_STR(obj, "kind")),
                         jx_or_empty(api_namespace(obj)), jx_or_empty(api_name(obj)));
    if (!s->warned)
        s->warned = json_object();
    if (!json_object_get(s->warned, id)) {
        json_object_set_new(s->warned, id, json_true());
        const char *ns = api_namespace(obj);
        sim_warn(s, "%s %s%s%s: %s \"%s\" %s; ignored", jx_or_empty(JX_STR(obj, "kind")),
                 ns ? ns : "", ns ? "/" : "", jx_or_empty(api_name(obj)), key, value, rule);
    }
    xfree(id);
}

int64_t sim_object_runtime(struct sim *s, const json_t *obj)
{
    int64_t ms;
    const char *a = api_annotation(obj, SIM_ANN_RUNTIME);
    if (a) {
        int rc = sim_duration_ms(a, &ms);
        if (!rc)
            return ms;
        warn_ignored(s, obj, SIM_ANN_RUNTIME, a,
                     rc == CU_ELIMIT ? "is longer than " SIM_MAX_DURATION_TEXT
                                     : "is not a duration (such as 90s, 10m, 1h30m)");
    }
    const char *l = api_label(obj, SIM_LABEL_KUEUE_RUNTIME);
    if (l) {
        char *end;
        errno = 0;
        long long v = strtoll(l, &end, 10);
        if (end != l && !*end && v >= 0 && !errno && v <= SIM_MAX_DURATION_MS)
            return v;
        warn_ignored(s, obj, SIM_LABEL_KUEUE_RUNTIME, l,
                     "is not a number of milliseconds from 0 to 3153600000000 (36500d)");
    }
    return sim_runtime_lookup(s, jx_or_empty(JX_STR(obj, "kind")), api_namespace(obj),
                              api_name(obj));
}

json_t *sim_controller_owner(struct sim *s, const json_t *obj)
{
    json_t *refs = JX_GET(obj, "metadata", "ownerReferences");
    size_t i;
    json_t *r;
    json_array_foreach(refs, i, r) {
        if (!json_is_true(json_object_get(r, "controller")))
            continue;
        const struct api_kind *k = api_kind_by_gvk(jx_or_empty(JX_STR(r, "apiVersion")),
                                                   jx_or_empty(JX_STR(r, "kind")));
        if (!k)
            return NULL;
        return store_get(s->store, k->id, k->namespaced ? api_namespace(obj) : NULL,
                         JX_STR(r, "name"));
    }
    return NULL;
}

/* An exit code annotation (0..255), or -1 when absent or not such a
 * number (said once). */
static int exit_code_of(struct sim *s, const json_t *obj)
{
    const char *v = api_annotation(obj, SIM_ANN_EXIT_CODE);
    if (!v)
        return -1;
    char *end;
    long code = strtol(v, &end, 10);
    if (end != v && !*end && code >= 0 && code <= 255)
        return (int)code;
    warn_ignored(s, obj, SIM_ANN_EXIT_CODE, v, "is not an exit code from 0 to 255");
    return -1;
}

void sim_pod_outcome(void *ctx, const json_t *pod, struct exec_sim_outcome *out)
{
    struct sim *s = ctx;
    bool have_code = false, have_runtime = false;
    json_t *cur = json_incref((json_t *)pod);
    for (int depth = 0; cur && depth < 5 && !(have_code && have_runtime); depth++) {
        int code = exit_code_of(s, cur);
        if (!have_code && code >= 0) {
            out->exit_code = code;
            have_code = true;
        }
        int64_t ms = have_runtime ? -1 : sim_object_runtime(s, cur);
        if (ms >= 0) {
            out->runtime_ms = ms;
            have_runtime = true;
        }
        json_t *next = sim_controller_owner(s, cur);
        json_decref(cur);
        cur = next;
    }
    json_decref(cur);
}

/* ---- apply ---- */

static char *action_where(struct sim *s, const struct sim_action *a, int32_t occ);

/* Where an apply happened, for its error messages: a fixed text, or an
 * action occurrence whose text is only built when an error needs it. */
struct apply_where {
    const char *text; /* NULL: action_where(a, occ) */
    const struct sim_action *a;
    int32_t occ;
    char *built;
    json_t **keep; /* when set and *keep NULL: a new object, once admitted,
                      is copied there (admitted_apply) */
};

static const char *where_text(struct sim *s, struct apply_where *w)
{
    if (w->text)
        return w->text;
    if (!w->built)
        w->built = action_where(s, w->a, w->occ);
    return w->built;
}

static char *admit_error(const struct api_kind *k, const json_t *obj, int rc,
                         const struct diag *d, const char *where)
{
    const char *name = api_name(obj);
    if (!name)
        name = JX_STR(obj, "metadata", "generateName");
    char *m = api_error_message(k, jx_or_empty(name), rc, d);
    char *e = xasprintf("%s: %s", where, m);
    xfree(m);
    return e;
}

static const char *object_ns(const struct api_kind *k, const json_t *obj)
{
    if (!k->namespaced)
        return NULL;
    const char *ns = api_namespace(obj);
    return ns && ns[0] ? ns : "default";
}

static int ensure_namespace(struct sim *s, const char *ns, struct apply_where *wh, char **err)
{
    if (!ns)
        return 0;
    json_t *n = store_get(s->store, KIND_NAMESPACE, NULL, ns);
    if (n) {
        json_decref(n);
        return 0;
    }
    *err = xasprintf("%s: namespaces \"%s\" not found", where_text(s, wh), ns);
    return CU_ENOTFOUND;
}

/* What the API server does to a new object before admission: the one
 * create path of api/object.h (api_create_prepare, _name, _stamp), which
 * src/server/write.c takes too. */
static void prepare_create_with(const struct api_kind *k, json_t *obj, const char *suffix,
                                const char *uid)
{
    api_create_prepare(obj);
    api_create_name(obj, suffix);
    api_create_stamp(k, obj, uid);
}

static void prepare_create(struct sim *s, const struct api_kind *k, json_t *obj)
{
    char sfx[6];
    bool gen = !api_name(obj) && JX_STR(obj, "metadata", "generateName");
    if (gen)
        rng_suffix(&s->rng, sfx, 5);
    char uid[37];
    rng_uuid(&s->rng, uid);
    prepare_create_with(k, obj, gen ? sfx : NULL, uid);
}

int sim_apply_precheck(const json_t *manifest, struct diag *d, json_t **admitted)
{
    if (admitted)
        *admitted = NULL;
    const struct api_kind *k = api_doc_kind(manifest, d);
    if (!k)
        return CU_EBADREQ;
    json_t *o = sim_subst_index(manifest, 0);
    prepare_create_with(k, o, "aaaaa", "00000000-0000-4000-8000-000000000000");
    int rc = api_admit(k, o, NULL, object_ns(k, o), d);
    if (!rc && admitted)
        *admitted = json_incref(o);
    json_decref(o);
    return rc;
}

/* ---- the load-time precheck of many similar Workload actions ----
 *
 * Scenarios generated for many queues repeat one Workload manifest per
 * namespace: the actions differ only in metadata.name, metadata.namespace
 * and spec.queueName. Admitting a new Workload reads those three strings
 * only to check them (name: the kind's name rule, admit.c validate_meta;
 * namespace: a DNS label there, and apply_namespace finds it equal to the
 * request's; queueName: a plain string in the schema, compared with the
 * stored one on update only, schema_workload.c validate_update), each has
 * a plain-string schema without defaults or checks (verified below), and
 * admission copies none of them elsewhere. So the admission of a manifest
 * that equals an earlier admitted one, as written, in everything else
 * (same members in the same order, same types; equal texts give equal
 * texts once ${i} = 0 is put in, and prepare_create_with treats both
 * alike) is the earlier admitted object with the three strings (${i} = 0)
 * put in their places, provided the name and namespace pass their rules;
 * anything else (a failing rule, another kind, a missing namespace) takes
 * the full path, which gives the exact messages.
 * test_sim_scenario checks the memo against the full precheck. */

#define PRECHECK_MEMO_MAX 8

struct precheck_template {
    json_t *manifest; /* as written (only read) */
    json_t *admitted; /* its admission */
};

struct sim_precheck_memo {
    size_t n, next;
    struct precheck_template t[PRECHECK_MEMO_MAX];
};

struct sim_precheck_memo *sim_precheck_memo_new(void)
{
    return xcalloc(1, sizeof(struct sim_precheck_memo));
}

void sim_precheck_memo_free(struct sim_precheck_memo *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        json_decref(m->t[i].manifest);
        json_decref(m->t[i].admitted);
    }
    xfree(m);
}

/* A plain string field of the Workload schema: no enum, format, length,
 * check or default. */
static bool plain_string_field(const char *const *keys)
{
    const struct api_schema *f = api_schema_at(KIND_WORKLOAD, keys);
    return f && f->type == SCH_STRING && !f->enum_values && f->format == FMT_NONE &&
           !f->max_length && !f->check && !f->default_json;
}

static bool free_fields_plain(void)
{
    static const char *const name[] = {"metadata", "name", NULL};
    static const char *const ns[] = {"metadata", "namespace", NULL};
    static const char *const queue[] = {"spec", "queueName", NULL};
    return plain_string_field(name) && plain_string_field(ns) && plain_string_field(queue);
}

/* Members of two objects in the same order, equal except those named in
 * skip, which need only be strings in both; at the top level (skip NULL)
 * metadata skips name and namespace and spec skips queueName. */
static bool equal_but_free(const json_t *a, const json_t *b, const char *const *skip)
{
    static const char *const md_free[] = {"name", "namespace", NULL};
    static const char *const spec_free[] = {"queueName", NULL};
    if (!json_is_object(a) || !json_is_object(b) || json_object_size(a) != json_object_size(b))
        return false;
    void *ia = json_object_iter((json_t *)a), *ib = json_object_iter((json_t *)b);
    for (; ia && ib; ia = json_object_iter_next((json_t *)a, ia),
                     ib = json_object_iter_next((json_t *)b, ib)) {
        const char *key = json_object_iter_key(ia);
        size_t len = json_object_iter_key_len(ia);
        if (len != json_object_iter_key_len(ib) || memcmp(key, json_object_iter_key(ib), len))
            return false;
        const json_t *va = json_object_iter_value(ia), *vb = json_object_iter_value(ib);
        bool ok;
        bool skipped = false;
        for (const char *const *sk = skip; sk && *sk && !skipped; sk++)
            skipped = !strcmp(key, *sk);
        if (skipped)
            ok = json_is_string(va) && json_is_string(vb);
        else if (!skip && !strcmp(key, "metadata"))
            ok = equal_but_free(va, vb, md_free);
        else if (!skip && !strcmp(key, "spec"))
            ok = equal_but_free(va, vb, spec_free);
        else
            ok = jx_equal_walk(va, vb, false); /* the admitted object keeps the order */
        if (!ok)
            return false;
    }
    return !ia && !ib;
}

static char *subst_str(const char *s, int32_t occ);

/* m's string at keys with ${i} = 0, or NULL when absent or not a string.
 * New string. */
static char *free_string(const json_t *m, const char *k1, const char *k2)
{
    const char *v = JX_STR(m, k1, k2);
    char *r = v ? subst_str(v, 0) : NULL;
    return r ? r : v ? xstrdup(v) : NULL;
}

/* The admitted object of template t for manifest (equal_but_free to t's),
 * or NULL when its name or namespace is empty or breaks its rule (then
 * only the full path says what is wrong). */
static json_t *precheck_from(const json_t *admitted, const json_t *manifest)
{
    char *name = free_string(manifest, "metadata", "name");
    char *ns = free_string(manifest, "metadata", "namespace");
    char *q = free_string(manifest, "spec", "queueName");
    json_t *out = NULL;
    const struct api_kind_schema *ks = api_kind_schema(KIND_WORKLOAD);
    struct diag d;
    diag_init(&d);
    if (name && name[0] && ns && ns[0]) {
        api_validate_name(name, ks->name_rule, ks->name_max, false, "metadata.name", &d);
        api_validate_name(ns, api_check_dns1123_label, 0, false, "metadata.namespace", &d);
    }
    if (name && name[0] && ns && ns[0] && !diag_count(&d)) {
        json_t *md = json_copy(JX_GET(admitted, "metadata"));
        json_object_set_new(md, "name", json_string(name));
        json_object_set_new(md, "namespace", json_string(ns));
        out = jx_shallow_with(admitted, "metadata", 8, md);
        if (q) {
            json_t *spec = json_copy(JX_GET(admitted, "spec"));
            json_object_set_new(spec, "queueName", json_string(q));
            json_object_set_new(out, "spec", spec);
        }
    }
    diag_release(&d);
    xfree(name);
    xfree(ns);
    xfree(q);
    return out;
}

int sim_apply_precheck_memo(struct sim_precheck_memo *m, const json_t *manifest,
                            struct diag *d, json_t **admitted)
{
    if (admitted)
        *admitted = NULL;
    const struct api_kind *k = api_doc_kind(manifest, d);
    if (!k)
        return CU_EBADREQ;
    if (!m || k->id != KIND_WORKLOAD || !free_fields_plain())
        return sim_apply_precheck(manifest, d, admitted);
    for (size_t i = 0; i < m->n; i++) {
        if (!equal_but_free(manifest, m->t[i].manifest, NULL))
            continue;
        json_t *adm = precheck_from(m->t[i].admitted, manifest);
        if (!adm)
            break;
        if (admitted)
            *admitted = adm;
        else
            json_decref(adm);
        return 0;
    }
    json_t *adm = NULL;
    int rc = sim_apply_precheck(manifest, d, &adm);
    if (!rc) {
        struct precheck_template *t = &m->t[m->next];
        if (m->n < PRECHECK_MEMO_MAX) {
            m->n++;
        } else {
            json_decref(t->manifest);
            json_decref(t->admitted);
        }
        t->manifest = json_incref((json_t *)manifest);
        t->admitted = json_incref(adm);
        m->next = (m->next + 1) % PRECHECK_MEMO_MAX;
    }
    if (admitted)
        *admitted = adm;
    else
        json_decref(adm);
    return rc;
}

/* The API server's namespace strategy: a new Namespace is Active. */
/* Admission's lookups in the sim's store (api_admit_env), as the server's
 * (src/server/write.c admit_once): Kueue's defaulting webhooks see the
 * LocalQueue and WorkloadPriorityClass named "default", and run under the
 * scenario's job policy (spec.controller: integrations.frameworks,
 * manageJobsWithoutQueueName). */
static int admit_in_store(struct sim *s, const struct api_kind *k, json_t *obj,
                          const json_t *old, const char *ns, struct diag *d)
{
    struct api_admit_env env = {.exists = store_exists, .get = store_lookup, .ctx = s->store,
                                .job_policy = &s->sc->cfg.jobs};
    return api_admit_in(k, obj, old, ns, &env, d);
}

static void namespace_active(struct sim *s, const json_t *stored)
{
    json_t *c = api_namespace_activated(stored);
    store_update(s->store, KIND_NAMESPACE, NULL, c, STORE_UPDATE_STATUS, NULL);
    json_decref(c);
}

/* sim_apply of o, which is taken: admission changes it in place and the
 * store keeps its values (store_create_take). */
static int apply_owned(struct sim *s, json_t *o, int64_t run_for_ms, struct apply_where *wh,
                       char **err)
{
    *err = NULL;
    struct diag d;
    diag_init(&d);
    const struct api_kind *k = api_doc_kind(o, &d);
    if (!k) {
        char *m = diag_summary(&d);
        *err = xasprintf("%s: %s", where_text(s, wh), m);
        xfree(m);
        diag_release(&d);
        json_decref(o);
        return CU_EBADREQ;
    }
    const char *ns = object_ns(k, o);
    char *nsc = xstrdup(ns);
    int rc = ensure_namespace(s, nsc, wh, err);
    json_t *old = rc || !api_name(o) ? NULL : store_get(s->store, k->id, nsc, api_name(o));
    if (!rc && !old)
        prepare_create(s, k, o);
    if (!rc)
        rc = admit_in_store(s, k, o, old, nsc, &d);
    if (rc && !*err) {
        *err = admit_error(k, o, rc, &d, where_text(s, wh));
    } else if (!rc) {
        if (!old && wh->keep && !*wh->keep)
            *wh->keep = jx_deep_copy(o); /* as admission left it, before the store */
        json_t *stored = NULL;
        rc = old ? store_update(s->store, k->id, nsc, o, STORE_UPDATE_MAIN, &stored)
                 : store_create_take(s->store, k->id, nsc, json_incref(o), &stored);
        if (rc)
            *err = xasprintf("%s: %s %s \"%s\": %s", where_text(s, wh), k->kind,
                             old ? "update" : "create", jx_or_empty(api_name(o)),
                             cu_strerror(rc));
        else if (run_for_ms >= 0)
            runtime_record(s, k->kind, nsc, api_name(stored), run_for_ms);
        if (!rc && !old && k->id == KIND_NAMESPACE)
            namespace_active(s, stored);
        json_decref(stored);
    }
    json_decref(old);
    json_decref(o);
    xfree(nsc);
    diag_release(&d);
    return rc;
}

int sim_apply(struct sim *s, const json_t *obj, int64_t run_for_ms, const char *where,
              char **err)
{
    struct apply_where wh = {where, NULL, 0, NULL, NULL};
    return apply_owned(s, jx_deep_copy(obj), run_for_ms, &wh, err);
}

/* ---- helpers for the other verbs ---- */

static char *subst_str(const char *s, int32_t occ)
{
    if (!strstr(s, "${i}"))
        return NULL;
    /* occ in decimal, as "%d" prints it (occurrences are >= 0) */
    char digits[16];
    size_t nd = 0;
    uint32_t v = occ < 0 ? 0 : (uint32_t)occ;
    do
        digits[sizeof(digits) - ++nd] = (char)('0' + v % 10);
    while ((v /= 10));
    struct sbuf sb;
    sbuf_init(&sb, 0);
    const char *p = s, *q;
    while ((q = strstr(p, "${i}"))) {
        sbuf_add(&sb, p, (size_t)(q - p));
        sbuf_add(&sb, digits + sizeof(digits) - nd, nd);
        p = q + 4;
    }
    sbuf_adds(&sb, p);
    char *r = sbuf_take(&sb);
    sbuf_release(&sb);
    return r;
}

/* A copy of v with every string value's ${i} replaced by occ, made in one
 * pass: containers are new, strings without ${i} and other scalars are
 * shared (jansson scalars are never changed in place here), keys keep
 * their order. */
static json_t *subst_copy(const json_t *v, int32_t occ)
{
    if (json_is_object(v)) {
        json_t *out = json_object();
        const char *key;
        size_t klen;
        json_t *x;
        json_object_keylen_foreach((json_t *)v, key, klen, x)
            json_object_setn_new_nocheck(out, key, klen, subst_copy(x, occ));
        return out;
    }
    if (json_is_array(v)) {
        size_t n = json_array_size(v);
        json_t *out = json_array();
        for (size_t i = 0; i < n; i++)
            json_array_append_new(out, subst_copy(json_array_get(v, i), occ));
        return out;
    }
    if (json_is_string(v)) {
        char *r = subst_str(json_string_value(v), occ);
        if (r) {
            json_t *out = json_string(r);
            xfree(r);
            return out;
        }
    }
    return json_incref((json_t *)v);
}

json_t *sim_subst_index(const json_t *v, int32_t occ)
{
    return subst_copy(v, occ);
}

/* Admit obj as an update of old and store it. */
static int update_object(struct sim *s, const struct api_kind *k, const char *ns, json_t *obj,
                         const json_t *old, const char *where, char **err)
{
    struct diag d;
    diag_init(&d);
    json_object_del(json_object_get(obj, "metadata"), "resourceVersion");
    int rc = admit_in_store(s, k, obj, old, ns, &d);
    if (rc)
        *err = admit_error(k, obj, rc, &d, where);
    else if ((rc = store_update(s->store, k->id, ns, obj, STORE_UPDATE_MAIN, NULL)))
        *err = xasprintf("%s: %s update \"%s\": %s", where, k->kind,
                         jx_or_empty(api_name(obj)), cu_strerror(rc));
    diag_release(&d);
    return rc;
}

/* Where an action's error happened: "spec.actions[2] (at 90s)", with the
 * occurrence for repeated ones: "spec.actions[2] (i=3, at 90.3s)". */
static char *action_where(struct sim *s, const struct sim_action *a, int32_t occ)
{
    char t[SIM_SECONDS_LEN];
    sim_format_seconds(clk_now(&s->clock.clk) - s->sc->start_ms, t);
    if (a->repeat > 1)
        return xasprintf("%s (i=%d, at %ss)", a->where, (int)occ, t);
    return xasprintf("%s (at %ss)", a->where, t);
}

/* The array element whose "name" is group (or the first when NULL). */
static json_t *named_element(json_t *arr, const char *group)
{
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e) {
        if (!group || !strcmp(jx_or_empty(JX_STR(e, "name")), group))
            return e;
    }
    return NULL;
}

static int scale_object(const struct sim_action *a, const char *where, json_t *obj, char **err)
{
    json_t *target = NULL;
    const char *field = NULL;
    if (a->kind->id == KIND_JOB) {
        target = JX_OBJ(obj, "spec");
        field = "parallelism";
    } else if (a->kind->id == KIND_RAYJOB) {
        target = named_element(JX_GET(obj, "spec", "rayClusterSpec", "workerGroupSpecs"),
                               a->group);
        field = "replicas";
    } else {
        target = named_element(JX_GET(obj, "spec", "podSets"), a->group);
        field = "count";
    }
    if (!target) {
        *err = xasprintf("%s: %s \"%s\" has no %s \"%s\"", where, a->kind->kind,
                         jx_or_empty(api_name(obj)),
                         a->kind->id == KIND_RAYJOB ? "worker group" : "pod set",
                         a->group ? a->group : "(first)");
        return CU_EINVAL;
    }
    json_object_set_new(target, field, json_integer(a->size));
    return 0;
}

/* A later apply action that creates (kind, ns, name), compared as written
 * (before ${i}), or NULL. */
static const struct sim_action *later_apply(struct sim *s, const struct sim_action *a,
                                            const char *name)
{
    int64_t now_rel = clk_now(&s->clock.clk) - s->sc->start_ms;
    for (size_t i = 0; i < s->sc->n_actions; i++) {
        const struct sim_action *b = &s->sc->actions[i];
        if (b->type != SIM_ACT_APPLY || b->at_rel + (b->repeat - 1) * b->every_ms <= now_rel)
            continue;
        const json_t *m = b->manifest;
        const struct api_kind *k = api_kind_by_gvk(jx_or_empty(JX_STR(m, "apiVersion")),
                                                   jx_or_empty(JX_STR(m, "kind")));
        const char *n = api_name(m);
        const char *ns = k && k->namespaced ? object_ns(k, m) : NULL;
        if (k == a->kind && n && (!strcmp(n, a->name) || !strcmp(n, name)) &&
            (!ns || !strcmp(ns, a->ns)))
            return b;
    }
    return NULL;
}

/* A delete, patch or scale whose target does not exist (yet): a warning,
 * with a hint when a later action creates it (actions run in time order,
 * not in file order). */
static void warn_not_found(struct sim *s, const struct sim_action *a, const char *name,
                           const char *done)
{
    const struct sim_action *b = later_apply(s, a, name);
    if (!b) {
        sim_warn(s, "%s: %s \"%s\" not found, nothing %s", a->where, a->kind->kind, name, done);
        return;
    }
    char t[SIM_SECONDS_LEN];
    sim_warn(s, "%s: %s \"%s\" not found, nothing %s (%s creates it at %ss: actions run in "
                "time order, not file order)", a->where, a->kind->kind, name, done, b->where,
             sim_format_seconds(b->at_rel, t));
}

/* ---- repeated Workload applies: admitted once per template ----
 *
 * A repeated apply of a Workload whose only ${i} is in metadata.name gives
 * occurrences that differ, before admission, in metadata.name and in the
 * uid prepare_create draws, nothing else. Admission (api_admit on create)
 * reads metadata.name only to check it against the kind's name rule
 * (admit.c validate_meta; metadata.name is a plain string in the schema,
 * checked below; the Workload hooks of schema_workload.c never read it)
 * and never copies either value elsewhere. So once one occurrence has been
 * admitted as a new object, the next is that admitted object with its own
 * name and uid put in their places, provided its name passes the same rule.
 * Anything else (a name the rule rejects, a missing namespace, an existing
 * object of that name: an update) takes the full path, which gives the
 * exact message or update. test_sim_run checks both against the full path. */

struct admitted_entry {
    int state;   /* 0 = not yet looked at, 1 = eligible, -1 = not */
    json_t *obj; /* an occurrence as admission left it, or NULL */
};

struct sim_admitted {
    size_t n;
    struct admitted_entry *e; /* by spec.actions index */
};

/* Strings in v that contain ${i}. */
static size_t count_indexed(const json_t *v)
{
    size_t n = 0;
    if (json_is_string(v))
        return strstr(json_string_value(v), "${i}") != NULL;
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)v, k, x)
            n += count_indexed(x);
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        json_array_foreach(v, i, x)
            n += count_indexed(x);
    }
    return n;
}

static bool admitted_eligible(const struct sim_action *a)
{
    const json_t *m = a->manifest;
    const struct api_kind *k = api_kind_by_gvk(jx_or_empty(JX_STR(m, "apiVersion")),
                                               jx_or_empty(JX_STR(m, "kind")));
    if (a->repeat < 2 || !k || k->id != KIND_WORKLOAD)
        return false;
    const char *name = JX_STR(m, "metadata", "name");
    if (!name || !strstr(name, "${i}") || count_indexed(m) != 1)
        return false;
    const struct api_schema *f =
        api_schema_field(api_schema_field(api_kind_schema(k->id)->root, "metadata"), "name");
    return f && f->type == SCH_STRING && !f->enum_values && f->format == FMT_NONE &&
           !f->max_length && !f->check && !f->default_json;
}

/* The entry of a repeated apply action, or NULL when it is not eligible. */
static struct admitted_entry *admitted_entry(struct sim *s, const struct sim_action *a)
{
    if (a->repeat < 2)
        return NULL;
    if (!s->admitted) {
        s->admitted = xcalloc(1, sizeof(*s->admitted));
        s->admitted->n = s->sc->n_actions;
        s->admitted->e = xcalloc(s->admitted->n ? s->admitted->n : 1, sizeof(*s->admitted->e));
    }
    size_t idx = (size_t)(a - s->sc->actions);
    if (idx >= s->admitted->n)
        return NULL;
    struct admitted_entry *e = &s->admitted->e[idx];
    if (!e->state) {
        e->state = admitted_eligible(a) ? 1 : -1;
        /* the load-time admission of occurrence 0 (sim_apply_precheck) is
         * one such admitted object: its placeholder uid is replaced too */
        if (e->state > 0 && a->admitted)
            e->obj = json_incref(a->admitted);
    }
    return e->state > 0 ? e : NULL;
}

void sim_admitted_free(struct sim *s)
{
    if (!s->admitted)
        return;
    for (size_t i = 0; i < s->admitted->n; i++)
        json_decref(s->admitted->e[i].obj);
    xfree(s->admitted->e);
    XFREE(s->admitted);
}

/* The metadata map of an occurrence: tmd's members (tmd may be NULL) with
 * name and uid in their places (appended, name first, when absent). */
static json_t *occurrence_meta(const json_t *tmd, const char *name, const char *uid)
{
    json_t *md = json_object();
    bool has_name = false, has_uid = false;
    const char *key;
    size_t klen;
    json_t *v;
    json_object_keylen_foreach((json_t *)tmd, key, klen, v) {
        if (klen == 4 && !memcmp(key, "name", 4)) {
            v = jx_string(name);
            has_name = true;
        } else if (klen == 3 && !memcmp(key, "uid", 3)) {
            v = jx_string(uid);
            has_uid = true;
        } else {
            v = json_incref(v);
        }
        json_object_setn_new_nocheck(md, key, klen, v);
    }
    if (!has_name)
        JX_SET_LIT(md, "name", jx_string(name));
    if (!has_uid)
        JX_SET_LIT(md, "uid", jx_string(uid));
    return md;
}

/* An occurrence of the admitted template tmpl, as a copy of it whose
 * metadata has name and uid put in (the same members, in the same order,
 * as json_copy and json_object_set_new would give): only the top-level
 * and metadata maps are new, everything else is shared with tmpl and the
 * other occurrences, which nobody changes (store_create_take keeps the
 * values; stored documents never change in place). New reference, the
 * only one to it and to its metadata map. */
static json_t *occurrence_of(const json_t *tmpl, const char *name, const char *uid)
{
    return jx_shallow_with(tmpl, "metadata", 8,
                           occurrence_meta(JX_GET(tmpl, "metadata"), name, uid));
}

/* Occurrence occ of a, created from e->obj when it can be (see above):
 * true with the store's result in *rc (and *err), false when the full
 * path must run (nothing was done, no rng drawn). */
static bool admitted_apply(struct sim *s, const struct sim_action *a, struct admitted_entry *e,
                           int32_t occ, int *rc, char **err)
{
    const struct api_kind *k = api_kind_get(KIND_WORKLOAD);
    const struct api_kind_schema *ks = api_kind_schema(KIND_WORKLOAD);
    const char *ns = object_ns(k, e->obj);
    char *name = subst_str(JX_STR(a->manifest, "metadata", "name"), occ);
    struct diag d;
    diag_init(&d);
    bool ok = api_validate_name(name, ks->name_rule, ks->name_max, false, "metadata.name", &d);
    diag_release(&d);
    json_t *nso = ok ? store_get(s->store, KIND_NAMESPACE, NULL, ns) : NULL;
    json_t *old = nso ? store_get(s->store, k->id, ns, name) : NULL;
    if (!nso || old) {
        json_decref(nso);
        json_decref(old);
        xfree(name);
        return false;
    }
    json_decref(nso);
    char uid[37];
    rng_uuid(&s->rng, uid); /* prepare_create's draw */
    json_t *o = occurrence_of(e->obj, name, uid);
    json_t *stored = NULL;
    /* the only references to o and md: the store takes them as they are */
    *rc = store_create_take(s->store, k->id, ns, o, &stored);
    if (*rc) {
        char *where = action_where(s, a, occ);
        *err = xasprintf("%s: %s create \"%s\": %s", where, k->kind, name, cu_strerror(*rc));
        xfree(where);
    } else if (a->run_for_ms >= 0) {
        runtime_record(s, k->kind, ns, api_name(stored), a->run_for_ms);
    }
    json_decref(stored);
    xfree(name);
    return true;
}

/* The conditions action: each condition set as metav1's
 * SetStatusCondition does (api_cond_set), then a status-subresource write
 * (what `kubectl patch --subresource=status` does). */
static int set_conditions(struct sim *s, const struct sim_action *a, int32_t occ, json_t *obj,
                          const json_t *cur, const char *where, char **err)
{
    json_t *set = sim_subst_index(a->manifest, occ);
    int64_t now = clk_now(&s->clock.clk);
    size_t i;
    json_t *c;
    if (!json_is_object(json_object_get(obj, "status")))
        json_object_set_new(obj, "status", json_object());
    json_array_foreach(set, i, c)
        api_cond_set(obj, JX_STR(c, "type"), JX_STR(c, "status"), jx_or_empty(JX_STR(c, "reason")),
                     jx_or_empty(JX_STR(c, "message")), now);
    json_decref(set);
    struct diag d;
    diag_init(&d);
    json_object_del(json_object_get(obj, "metadata"), "resourceVersion");
    int rc = api_admit_status(a->kind, obj, cur, &d);
    if (rc)
        *err = admit_error(a->kind, obj, rc, &d, where);
    else if ((rc = store_update(s->store, a->kind->id, a->ns, obj, STORE_UPDATE_STATUS, NULL)))
        *err = xasprintf("%s: %s status update \"%s\": %s", where, a->kind->kind,
                         jx_or_empty(api_name(obj)), cu_strerror(rc));
    diag_release(&d);
    return rc;
}

int sim_action_run(struct sim *s, const struct sim_action *a, int32_t occ, char **err)
{
    *err = NULL;
    if (a->type == SIM_ACT_APPLY) {
        struct admitted_entry *e = admitted_entry(s, a);
        int rc;
        if (e && e->obj && admitted_apply(s, a, e, occ, &rc, err))
            return rc;
        /* a fresh copy of the manifest: applied as it is */
        struct apply_where wh = {NULL, a, occ, NULL, e ? &e->obj : NULL};
        rc = apply_owned(s, sim_subst_index(a->manifest, occ), a->run_for_ms, &wh, err);
        xfree(wh.built);
        return rc;
    }
    char *name = subst_str(a->name, occ);
    if (!name)
        name = xstrdup(a->name);
    int rc = 0;
    if (a->type == SIM_ACT_DELETE) {
        if (store_delete(s->store, a->kind->id, a->ns, name, NULL, NULL) == CU_ENOTFOUND)
            warn_not_found(s, a, name, "deleted");
        xfree(name);
        return 0;
    }
    json_t *cur = store_get(s->store, a->kind->id, a->ns, name);
    if (!cur) {
        warn_not_found(s, a, name,
                       a->type == SIM_ACT_PATCH        ? "patched"
                       : a->type == SIM_ACT_CONDITIONS ? "given conditions"
                                                       : "scaled");
        xfree(name);
        return 0;
    }
    json_t *obj;
    char *where = action_where(s, a, occ);
    if (a->type == SIM_ACT_CONDITIONS) {
        obj = jx_deep_copy(cur);
        rc = set_conditions(s, a, occ, obj, cur, where, err);
        xfree(where);
        json_decref(obj);
        json_decref(cur);
        xfree(name);
        return rc;
    }
    if (a->type == SIM_ACT_PATCH) { /* the API server's patch formats (api/patch.h) */
        json_t *p = sim_subst_index(a->manifest, occ);
        char perr[512] = "";
        obj = a->patch_type == SIM_PATCH_STRATEGIC
                  ? api_strategic_merge_patch(api_schema_for_kind(a->kind->id), cur, p, perr,
                                              sizeof(perr))
              : a->patch_type == SIM_PATCH_JSON ? api_json_patch(cur, p, perr, sizeof(perr))
                                                : api_merge_patch(cur, p);
        json_decref(p);
        if (!obj || !json_is_object(obj)) {
            *err = xasprintf("%s: %s \"%s\": the patch could not be applied: %s", where,
                             a->kind->kind, name, obj ? "the patched document is not an object"
                                                      : perr);
            json_decref(obj);
            xfree(where);
            json_decref(cur);
            xfree(name);
            return CU_EINVAL;
        }
    } else {
        obj = jx_deep_copy(cur);
        rc = scale_object(a, where, obj, err);
    }
    if (!rc)
        rc = update_object(s, a->kind, a->ns, obj, cur, where, err);
    xfree(where);
    json_decref(obj);
    json_decref(cur);
    xfree(name);
    return rc;
}
