/*
 * kq_link (ctrl/kueue/kueue.h) between the scheduler memo's entry of a
 * Workload (kq_memo_link) and the queue controller's contribution of it
 * (kq_queues_observe_workload): joined on the first event that has both,
 * kept while the Workload moves between ClusterQueues, cut when either
 * side is freed (memo forgotten, contribution dropped, either table freed)
 * and joined again to the right record afterwards. Run under valgrind or
 * ASan, a link left to a freed record is a use after free here.
 */
#include "test_ctrl_jobs_fixture.h"

#include "ctrl/kueue/kueue.h"

#define T0 INT64_C(1767225600000)

/* A pending Workload ns/name of LocalQueue "q"; with cq, reserved and
 * admitted in that ClusterQueue. */
static json_t *wl_doc(const char *name, const char *cq)
{
    json_t *wl = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s, s:i, s:[{s:s}]}}", "apiVersion",
                           "kueue.x-k8s.io/v1beta1", "kind", "Workload", "metadata", "name",
                           name, "namespace", "ns", "uid", name, "spec", "queueName", "q",
                           "priority", 1, "podSets", "name", "main");
    if (!cq) {
        api_cond_set(wl, "QuotaReserved", "False", "Pending", "waiting", T0);
        return wl;
    }
    JX_SET_NEW(wl, json_pack("{s:s, s:[]}", "clusterQueue", cq, "podSetAssignments"), "status",
               "admission");
    api_cond_set(wl, "QuotaReserved", "True", "QuotaReserved", "reserved", T0);
    api_cond_set(wl, "Admitted", "True", "Admitted", "admitted", T0);
    return wl;
}

/* What the scheduler does with a Workload event (observe_workload): the
 * memo reads it, then the queue controller, given the memo's link.
 * Returns that link. */
static struct kq_link *observe(struct fx *f, struct kq_memo *m, struct kq_queues *q,
                               const json_t *wl, bool deleted)
{
    kq_memo_store(m, wl, false);
    struct kq_link *l = kq_memo_link(m, "ns", api_name(wl));
    assert_non_null(l);
    kq_queues_observe_workload(q, f->ctrl, wl, deleted, l);
    return l;
}

static void link_follows_both_sides(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    struct kq_memo *m = kq_memo_new();
    struct kq_queues *q = kq_queues_new();
    json_t *p = wl_doc("w", NULL), *a = wl_doc("w", "cq-a"), *b = wl_doc("w", "cq-b");
    json_t *other = wl_doc("x", NULL);

    struct kq_link *l = observe(f, m, q, p, false);
    struct kq_link *contrib = l->peer; /* the contribution made */
    assert_non_null(contrib);
    assert_ptr_equal(contrib->peer, l);
    /* reserved in one ClusterQueue, moved to another: the same records */
    assert_ptr_equal(observe(f, m, q, a, false), l);
    assert_ptr_equal(l->peer, contrib);
    assert_ptr_equal(observe(f, m, q, b, false), l);
    assert_ptr_equal(l->peer, contrib);
    /* another Workload's event: its own records, w's link untouched */
    struct kq_link *lx = observe(f, m, q, other, false);
    assert_non_null(lx->peer);
    assert_ptr_not_equal(lx->peer, contrib);
    assert_ptr_equal(l->peer, contrib);
    /* the memo's entry answers for the last Workload read only */
    assert_null(kq_memo_link(m, "ns", "w"));

    /* the memo side freed: the contribution is cut, and found in its table
     * and joined to the memo's new entry at the next event */
    kq_memo_forget(m, "ns", "w");
    assert_null(contrib->peer);
    l = observe(f, m, q, b, false);
    assert_ptr_equal(l->peer, contrib);
    assert_ptr_equal(contrib->peer, l);

    /* the queue side freed (the Workload deleted): the memo's entry is cut,
     * and a new contribution is joined at the next event */
    assert_ptr_equal(observe(f, m, q, b, true), l);
    assert_null(l->peer);
    observe(f, m, q, p, false);
    assert_non_null(l->peer);
    assert_ptr_equal(l->peer->peer, l);

    /* either table freed first cuts what the other still holds */
    kq_queues_free(q);
    assert_null(l->peer);
    q = kq_queues_new();
    observe(f, m, q, p, false);
    assert_non_null(l->peer);
    kq_memo_free(m);
    kq_queues_free(q);

    json_decref(p);
    json_decref(a);
    json_decref(b);
    json_decref(other);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(link_follows_both_sides),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
