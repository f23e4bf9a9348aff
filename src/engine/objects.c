/*
 * objects: ClusterQueues, LocalQueues and Namespaces as the engine keeps
 * them, the ClusterQueue Active state with Kueue's reasons and messages
 * (pkg/cache/scheduler/clusterqueue.go inactiveReason), and the sorted
 * ClusterQueue index every scheduling decision iterates.
 */
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "api/selector.h"
#include "engine/engine-int.h"
#include "util/err.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

/* ---- the sorted ClusterQueue index ---- */

static int cq_name_cmp(const void *a, const void *b)
{
    const struct eng__cq *x = *(struct eng__cq *const *)a, *y = *(struct eng__cq *const *)b;
    return strcmp(x->node.name, y->node.name);
}

static void cq_index_rebuild(struct eng *e)
{
    size_t n = HASH_COUNT(e->cqs), i = 0;
    xfree(e->cq_sorted);
    e->cq_sorted = xcalloc(n + 1, sizeof(*e->cq_sorted));
    for (struct eng__cq *cq = e->cqs; cq; cq = cq->hh.next)
        e->cq_sorted[i++] = cq;
    if (n)
        qsort(e->cq_sorted, n, sizeof(*e->cq_sorted), cq_name_cmp);
    e->n_cq_sorted = n;
    e->cq_max_flv = -1;
    eng__cq_bits_rebuild(e);
}

struct eng__cq *eng__cq_find(const struct eng *e, const char *name)
{
    struct eng__cq *cq;
    HASH_FIND_STR(e->cqs, name, cq);
    return cq;
}

/* ---- Active condition ---- */

static const char *ext_reason(const char *msg)
{
    if (strstr(msg, "missing AdmissionCheck"))
        return "AdmissionCheckNotFound";
    if (strstr(msg, "inactive AdmissionCheck"))
        return "AdmissionCheckInactive";
    if (strstr(msg, "MultiKueue"))
        return "MultipleMultiKueueAdmissionChecks";
    return "Unknown";
}

/* Missing flavors in the order the ClusterQueue lists them, comma-joined. */
static char *missing_flavors(const struct eng *e, const struct eng__cq *cq)
{
    struct sbuf sb;
    sbuf_init(&sb, 0);
    for (int g = 0; g < cq->n_rgs; g++)
        for (int f = 0; f < cq->rgs[g].n_flv; f++) {
            const struct eng__flavor *fl = &e->flavors[cq->rgs[g].flv[f]];
            if (!fl->exists)
                sbuf_addf(&sb, "%s%s", sb.len ? "," : "", fl->name);
        }
    if (!sb.len) {
        sbuf_release(&sb);
        return NULL;
    }
    return eng__sbuf_take(&sb);
}

void eng__cq_update_active(struct eng *e, struct eng__cq *cq)
{
    struct sbuf sb;
    const char *reason = NULL;
    XFREE(cq->inactive_reason);
    XFREE(cq->inactive_msg);
    if (cq->ext_inactive_msg && !strcmp(cq->ext_inactive_msg, ENG_CQ_TERMINATING)) {
        /* Kueue's inactiveReason: terminating says nothing else */
        cq->active = false;
        cq->inactive_reason = xstrdup("Terminating");
        cq->inactive_msg = xstrdup("Can't admit new workloads; " ENG_CQ_TERMINATING);
        return;
    }
    sbuf_init(&sb, 0);
    if (cq->stop_policy != STOP_NONE) {
        reason = "Stopped";
        sbuf_adds(&sb, "is stopped");
    }
    char *missing = missing_flavors(e, cq);
    if (missing) {
        if (!reason)
            reason = "FlavorNotFound";
        sbuf_addf(&sb, "%sreferences missing ResourceFlavor(s): %s", sb.len ? ", " : "", missing);
        xfree(missing);
    }
    if (cq->ext_inactive_msg && *cq->ext_inactive_msg) {
        if (!reason)
            reason = ext_reason(cq->ext_inactive_msg);
        sbuf_addf(&sb, "%s%s", sb.len ? ", " : "", cq->ext_inactive_msg);
    }
    cq->active = reason == NULL;
    if (reason) {
        cq->inactive_reason = xstrdup(reason);
        cq->inactive_msg = xasprintf("Can't admit new workloads: %s.", sb.buf);
    }
    sbuf_release(&sb);
}

/* ---- ClusterQueues ---- */

static void cq_clear_spec(struct eng__cq *cq)
{
    eng__rgs_free(cq->rgs, cq->n_rgs);
    cq->rgs = NULL;
    cq->n_rgs = 0;
    XFREE(cq->cohort_name);
    api_label_selector_release(&cq->ns_selector);
    for (size_t i = 0; i < cq->n_checks; i++) {
        xfree(cq->check_names[i]);
        xfree(cq->check_flv[i]);
    }
    XFREE(cq->check_names);
    XFREE(cq->check_flv);
    XFREE(cq->n_check_flv);
    cq->n_checks = 0;
    XFREE(cq->ext_inactive_msg);
}

static void cq_fingerprint(struct sbuf *sb, const struct api_cluster_queue *in, const char *ext)
{
    sbuf_addf(sb, "%s;%d;%d;%d;%d;%d;%d;%d;%d;%d;%d;%d;%lld;%s;", in->cohort ? in->cohort : "",
              (int)in->queueing_strategy, (int)in->has_namespace_selector, (int)in->when_can_borrow,
              (int)in->when_can_preempt, (int)in->preference, (int)in->within_cluster_queue,
              (int)in->reclaim_within_cohort, (int)in->borrow_within_cohort,
              (int)in->has_max_priority_threshold, (int)in->max_priority_threshold,
              (int)in->stop_policy, (long long)in->fair_weight_milli, ext ? ext : "-");
    const struct api_label_selector *s = &in->namespace_selector;
    for (size_t i = 0; i < s->match_labels.n; i++)
        sbuf_addf(sb, "%s=%s,", s->match_labels.items[i].key, s->match_labels.items[i].value);
    for (size_t i = 0; i < s->n_exprs; i++) {
        sbuf_addf(sb, "%s %d(", s->exprs[i].key, (int)s->exprs[i].op);
        for (size_t j = 0; j < s->exprs[i].n_values; j++)
            sbuf_addf(sb, "%s,", s->exprs[i].values[j]);
        sbuf_addc(sb, ')');
    }
    for (size_t i = 0; i < in->n_checks; i++) {
        sbuf_addf(sb, "ac:%s(", in->checks[i].name);
        for (size_t f = 0; f < in->checks[i].n_on_flavors; f++)
            sbuf_addf(sb, "%s,", in->checks[i].on_flavors[f]);
        sbuf_addc(sb, ')');
    }
    for (size_t g = 0; g < in->n_groups; g++) {
        const struct api_resource_group *rg = &in->groups[g];
        for (size_t c = 0; c < rg->n_covered; c++)
            sbuf_addf(sb, "%s,", rg->covered[c]);
        for (size_t f = 0; f < rg->n_flavors; f++) {
            sbuf_addf(sb, "[%s:", rg->flavors[f].name);
            for (size_t r = 0; r < rg->flavors[f].n_resources; r++) {
                const struct api_resource_quota *q = &rg->flavors[f].resources[r];
                sbuf_addf(sb, "%s %lld %d %lld %d %lld,", q->name, (long long)q->nominal,
                          (int)q->has_borrowing_limit, (long long)q->borrowing_limit,
                          (int)q->has_lending_limit, (long long)q->lending_limit);
            }
            sbuf_addc(sb, ']');
        }
        sbuf_addc(sb, '|');
    }
}

static void cq_set_spec(struct eng *e, struct eng__cq *cq, const struct api_cluster_queue *in,
                        const char *ext)
{
    cq_clear_spec(cq);
    cq->cohort_name = xstrdup(in->cohort ? in->cohort : "");
    cq->rgs = eng__rgs_build(e, in->groups, in->n_groups);
    e->cq_max_flv = -1;
    cq->n_rgs = (int)in->n_groups;
    cq->pods_res = eng__res_id(e, "pods");
    cq->covers_pods = eng__cq_rg(cq, cq->pods_res) != NULL;
    cq->strategy = in->queueing_strategy;
    cq->has_ns_selector = in->has_namespace_selector;
    eng__selector_copy(&cq->ns_selector, &in->namespace_selector);
    cq->when_borrow = in->when_can_borrow;
    cq->when_preempt = in->when_can_preempt;
    cq->preference = in->preference;
    cq->within_cq = in->within_cluster_queue;
    cq->reclaim = in->reclaim_within_cohort;
    cq->borrow_within = in->borrow_within_cohort;
    cq->has_threshold = in->has_max_priority_threshold;
    cq->threshold = in->max_priority_threshold;
    cq->stop_policy = in->stop_policy;
    cq->node.fair_weight_milli = in->fair_weight_milli;
    cq->n_checks = in->n_checks;
    cq->check_names = xcalloc(in->n_checks + 1, sizeof(char *));
    cq->check_flv = xcalloc(in->n_checks + 1, sizeof(int *));
    cq->n_check_flv = xcalloc(in->n_checks + 1, sizeof(size_t));
    for (size_t i = 0; i < in->n_checks; i++) {
        const struct api_admission_check_rule *r = &in->checks[i];
        cq->check_names[i] = xstrdup(r->name);
        cq->n_check_flv[i] = r->n_on_flavors;
        cq->check_flv[i] = xcalloc(r->n_on_flavors + 1, sizeof(int));
        for (size_t f = 0; f < r->n_on_flavors; f++)
            cq->check_flv[i][f] = eng__flv_id(e, r->on_flavors[f]);
    }
    cq->ext_inactive_msg = ext ? xstrdup(ext) : NULL;
}

int eng_upsert_cluster_queue(struct eng *e, const struct api_cluster_queue *in,
                             const char *inactive_message)
{
    if (!in || !in->name)
        return 0;
    struct sbuf sb;
    sbuf_init(&sb, 0);
    cq_fingerprint(&sb, in, inactive_message);
    if (!eng__fp_changed(e, "cq", in->name, &sb))
        return 0;
    struct eng__cq *cq = eng__cq_find(e, in->name);
    if (!cq) {
        size_t ln = strlen(in->name);
        cq = xcalloc(1, sizeof(*cq) + ln + 1);
        cq->node.name = memcpy(cq + 1, in->name, ln + 1);
        cq->node.is_cq = true;
        bool in_table;
        ENG__HASH_ADD(e->cqs, cq->node.name, ln, cq, in_table);
        if (!in_table) { /* nothing changed: the next upsert tries again */
            xfree(cq);
            eng__fp_forget(e, "cq", in->name);
            return CU_ENOMEM;
        }
        cq_index_rebuild(e);
    } else if (cq->node.parent) {
        /* leaving a cohort frees capacity there too */
        eng__requeue_tree(e, cq);
    }
    cq_set_spec(e, cq, in, inactive_message);
    eng__cq_update_active(e, cq);
    cq->alloc_gen++;
    eng__cq_mark_requeue(e, cq);
    e->tree_dirty = true;
    e->route_all = true;
    return 0;
}

void eng_delete_cluster_queue(struct eng *e, const char *name)
{
    struct eng__cq *cq = eng__cq_find(e, name);
    eng__fp_forget(e, "cq", name);
    if (!cq)
        return;
    if (cq->node.parent)
        eng__requeue_tree(e, cq);
    eng__cq_detach_all(e, cq);
    HASH_DEL(e->cqs, cq);
    cq_index_rebuild(e);
    cq_clear_spec(cq);
    XFREE(cq->inactive_reason);
    XFREE(cq->inactive_msg);
    xfree(cq->heap);
    for (size_t i = 0; i < cq->n_bulk; i++)
        xfree(cq->bulk_reason[i]);
    xfree(cq->bulk_hash);
    xfree(cq->bulk_reason);
    xfree(cq->node.fr);
    xfree(cq->node.pidx);
    xfree(cq->node.q);
    xfree(cq->node.subtree);
    xfree(cq->node.usage);
    xfree(cq);
    e->tree_dirty = true;
    e->route_all = true;
}

/* ---- LocalQueues ---- */

struct eng__lq *eng__lq_find(const struct eng *e, const char *ns, const char *name)
{
    if (!ns || !name)
        return NULL;
    char buf[256];
    size_t len;
    char *key = eng__key_join(buf, sizeof(buf), ns, name, &len);
    struct eng__lq *lq;
    HASH_FIND(hh, e->lqs, key, len, lq);
    if (key != buf)
        xfree(key);
    return lq;
}

int eng_upsert_local_queue(struct eng *e, const struct api_local_queue *in)
{
    if (!in || !in->ns || !in->name)
        return 0;
    struct eng__lq *lq = eng__lq_find(e, in->ns, in->name);
    const char *cqn = in->cluster_queue ? in->cluster_queue : "";
    if (lq && strcmp(lq->cq_name, cqn) == 0 && lq->stop_policy == in->stop_policy)
        return 0;
    if (!lq) {
        lq = xcalloc(1, sizeof(*lq));
        lq->key = xasprintf("%s/%s", in->ns, in->name);
        lq->ns = xstrdup(in->ns);
        lq->name = xstrdup(in->name);
        bool in_table;
        ENG__HASH_ADD(e->lqs, lq->key, strlen(lq->key), lq, in_table);
        if (!in_table) {
            xfree(lq->key);
            xfree(lq->ns);
            xfree(lq->name);
            xfree(lq);
            return CU_ENOMEM;
        }
    } else {
        xfree(lq->cq_name);
    }
    lq->cq_name = xstrdup(cqn);
    lq->stop_policy = in->stop_policy;
    e->route_all = true;
    return 0;
}

void eng_delete_local_queue(struct eng *e, const char *ns, const char *name)
{
    struct eng__lq *lq = eng__lq_find(e, ns, name);
    if (!lq)
        return;
    HASH_DEL(e->lqs, lq);
    xfree(lq->key);
    xfree(lq->ns);
    xfree(lq->name);
    xfree(lq->cq_name);
    xfree(lq);
    e->route_all = true;
}

/* ---- Namespaces ---- */

static bool labels_equal(const struct api_labels *a, const struct api_labels *b)
{
    size_t nb = b ? b->n : 0;
    if (a->n != nb)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->items[i].key, b->items[i].key) ||
            strcmp(a->items[i].value, b->items[i].value ? b->items[i].value : ""))
            return false;
    return true;
}

int eng_upsert_namespace(struct eng *e, const char *name, const struct api_labels *labels)
{
    if (!name)
        return 0;
    struct eng__ns *ns;
    HASH_FIND_STR(e->nss, name, ns);
    if (ns && labels_equal(&ns->labels, labels))
        return 0;
    if (!ns) {
        ns = xcalloc(1, sizeof(*ns));
        ns->name = xstrdup(name);
        bool in_table;
        ENG__HASH_ADD(e->nss, ns->name, strlen(ns->name), ns, in_table);
        if (!in_table) {
            xfree(ns->name);
            xfree(ns);
            return CU_ENOMEM;
        }
    } else {
        api_labels_release(&ns->labels);
    }
    eng__labels_copy(&ns->labels, labels);
    for (size_t i = 0; i < e->n_cq_sorted; i++)
        eng__cq_mark_requeue(e, e->cq_sorted[i]);
    return 0;
}

void eng_delete_namespace(struct eng *e, const char *name)
{
    struct eng__ns *ns;
    HASH_FIND_STR(e->nss, name, ns);
    if (!ns)
        return;
    HASH_DEL(e->nss, ns);
    api_labels_release(&ns->labels);
    xfree(ns->name);
    xfree(ns);
}

bool eng__ns_matches(const struct eng *e, const struct eng__cq *cq, const char *name)
{
    struct eng__ns *ns;
    if (!cq->has_ns_selector)
        return false; /* nil selector matches no namespace */
    HASH_FIND_STR(e->nss, name, ns);
    static const struct api_labels none = {0};
    return api_label_selector_matches(&cq->ns_selector, ns ? &ns->labels : &none);
}
