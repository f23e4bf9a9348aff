/*
 * The seed end to end at the engine level: the tutorial's ClusterQueue
 * (flavors default-cpu, on-demand, dws selecting cloud.google.com/gke-nodepool)
 * and two RayJob-shaped workloads submitted one after the other. Job 1 gets
 * on-demand for its TPU workers, job 2 falls back to dws; the Ray head and the
 * submitter land on default-cpu. The batch-Job shape (one pod set of
 * 4 x {8 cpu, 4 tpu, 16Gi}) gives the same plan A / plan B split.
 */
#include "test_engine_fixture.h"

#define SEED_QUOTAS                                                                  \
    "default-cpu:cpu=10,memory=20Gi,google.com/tpu=0;"                               \
    "on-demand:cpu=40,memory=75Gi,google.com/tpu=16;"                                \
    "dws:cpu=1000000000,memory=1000000000Gi,google.com/tpu=1000000000"

static struct fx *seed_cluster(void)
{
    struct fx *f = fx_new(NULL);
    fx_flavor(f, "default-cpu", "cloud.google.com/gke-nodepool=default-pool");
    fx_flavor(f, "on-demand", "cloud.google.com/gke-nodepool=on-demand-pool");
    fx_flavor(f, "dws", "cloud.google.com/gke-nodepool=dws-pool");
    struct api_cluster_queue *cq = fx_cq_make(f, "cluster-queue", NULL, SEED_QUOTAS);
    cq->n_checks = 1;
    cq->checks = fx_alloc(f, sizeof(*cq->checks));
    cq->checks[0].name = fx_str(f, "dws-prov");
    cq->checks[0].on_flavors = fx_alloc(f, sizeof(char *));
    cq->checks[0].on_flavors[0] = fx_str(f, "dws");
    cq->checks[0].n_on_flavors = 1;
    fx_cq_apply(f, cq);
    fx_ns(f, "default", "kubernetes.io/metadata.name=default");
    fx_lq(f, "default", "user-queue", "cluster-queue");
    return f;
}

/* The Workload Kueue derives from the seed RayJob (in-tree autoscaling adds
 * a 500m/512Mi autoscaler container to the head; K8sJobMode adds the
 * submitter pod set). */
static struct api_workload *rayjob(struct fx *f, const char *name, int64_t created_ms)
{
    struct api_workload *w = fx_wl(f, "default", name, "user-queue", 0, created_ms);
    struct api_podset *head = fx_ps(f, w, "head", 1, "cpu=2500m,memory=4608Mi");
    fx_ps_selector(f, head, "cloud.google.com/gke-nodepool=default-pool");
    struct api_podset *tpu = fx_ps(f, w, "tpu-group", 4, "cpu=8,memory=16Gi,google.com/tpu=4");
    fx_ps_selector(f, tpu, "cloud.google.com/gke-tpu-accelerator=tpu-v6e-slice,"
                           "cloud.google.com/gke-tpu-topology=4x4");
    fx_ps_tolerate(f, tpu, "google.com/tpu", "NoSchedule");
    fx_ps_tolerate(f, tpu, "cloud.google.com/gke-queued", "NoSchedule");
    fx_ps(f, w, "submitter", 1, "cpu=500m,memory=200Mi");
    w->elastic = true;
    return w;
}

static void seed_rayjobs_take_on_demand_then_dws(void **state)
{
    (void)state;
    struct fx *f = seed_cluster();
    struct api_workload *j1 = rayjob(f, "rayjob-rayjob-tpu-v6e-dws-1-8a1b2", 1000);
    struct api_workload *j2 = rayjob(f, "rayjob-rayjob-tpu-v6e-dws-2-3c4d5", 2000);
    fx_submit(f, j1);
    fx_submit(f, j2);
    fx_schedule(f);

    const struct eng_decision *d1 = fx_find(f, ENG_RESERVE, j1->name);
    const struct eng_decision *d2 = fx_find(f, ENG_RESERVE, j2->name);
    assert_non_null(d1);
    assert_non_null(d2);
    assert_true(d1 < d2); /* FIFO: job 1 first */
    assert_string_equal(d1->cluster_queue, "cluster-queue");
    assert_string_equal(fx_flavor_of(d1, "head", "cpu"), "default-cpu");
    assert_string_equal(fx_flavor_of(d1, "head", "memory"), "default-cpu");
    assert_null(fx_flavor_of(d1, "head", "google.com/tpu"));
    assert_string_equal(fx_flavor_of(d1, "tpu-group", "google.com/tpu"), "on-demand");
    assert_string_equal(fx_flavor_of(d1, "tpu-group", "cpu"), "on-demand");
    assert_string_equal(fx_flavor_of(d1, "submitter", "cpu"), "default-cpu");
    assert_string_equal(fx_flavor_of(d2, "head", "cpu"), "default-cpu");
    assert_string_equal(fx_flavor_of(d2, "tpu-group", "google.com/tpu"), "dws");
    assert_string_equal(fx_flavor_of(d2, "tpu-group", "memory"), "dws");
    assert_string_equal(fx_flavor_of(d2, "submitter", "memory"), "default-cpu");

    /* status.admission shape: counts and whole-pod-set usage */
    assert_int_equal(d1->admission.n_podsets, 3);
    assert_string_equal(d1->admission.podsets[1].name, "tpu-group");
    assert_int_equal(d1->admission.podsets[1].count, 4);
    assert_int_equal(api_reslist_get(&d1->admission.podsets[1].resource_usage, "google.com/tpu"), 16);
    assert_int_equal(api_reslist_get(&d1->admission.podsets[1].resource_usage, "cpu"), 32000);
    assert_int_equal(api_reslist_get(&d1->admission.podsets[0].resource_usage, "memory"),
                     4608LL * 1024 * 1024);
    assert_false(d1->borrowing);
    assert_string_equal(d1->message, "Quota reserved in ClusterQueue cluster-queue");

    /* Kueue's QuotaReserved event lists the flavors it passed over */
    assert_string_equal(
        d1->event_message,
        "Quota reserved in ClusterQueue cluster-queue, wait time since queued was 999s; Flavors "
        "considered: tpu-group: default-cpu(NoFit;insufficient quota for cpu in flavor default-cpu, "
        "previously considered podsets requests (2500m) + current podset request (32) > maximum "
        "capacity (10))");
    assert_string_equal(
        d2->event_message,
        "Quota reserved in ClusterQueue cluster-queue, wait time since queued was 998s; Flavors "
        "considered: tpu-group: default-cpu(NoFit;insufficient quota for cpu in flavor default-cpu, "
        "previously considered podsets requests (2500m) + current podset request (32) > maximum "
        "capacity (10)), on-demand(preemptionMode=NoCandidates;insufficient unused quota for cpu "
        "in flavor on-demand, 24 more needed;insufficient unused quota for google.com/tpu in flavor "
        "on-demand, 16 more needed;insufficient unused quota for memory in flavor on-demand, 53Gi "
        "more needed)");

    /* usage per flavor */
    struct eng_cq_status st;
    assert_int_equal(eng_cq_status(f->e, "cluster-queue", &st), 0);
    assert_true(st.active);
    assert_int_equal(st.reserving, 2);
    assert_int_equal(st.pending, 0);
    assert_int_equal(st.admitted, 1); /* job 2 waits for the dws-prov check */
    assert_int_equal(st.n_reservation, 3);
    assert_string_equal(st.reservation[1].flavor, "on-demand");
    assert_int_equal(api_reslist_get(&st.reservation[1].total, "google.com/tpu"), 16);
    assert_int_equal(api_reslist_get(&st.reservation[0].total, "cpu"), 6000);
    assert_int_equal(api_reslist_get(&st.reservation[2].total, "google.com/tpu"), 16);
    assert_int_equal(api_reslist_get(&st.usage[2].total, "google.com/tpu"), 0);
    eng_cq_status_release(&st);
    fx_free(f);
}

static struct api_workload *batch_job(struct fx *f, const char *name, int64_t created_ms)
{
    struct api_workload *w = fx_wl(f, "default", name, "user-queue", 0, created_ms);
    fx_ps(f, w, "main", 4, "cpu=8,memory=16Gi,google.com/tpu=4");
    return w;
}

static void seed_batch_jobs_take_on_demand_then_dws(void **state)
{
    (void)state;
    struct fx *f = seed_cluster();
    struct api_workload *j1 = batch_job(f, "job-tpu-1-aaaaa", 1000);
    struct api_workload *j2 = batch_job(f, "job-tpu-2-bbbbb", 2000);
    fx_submit(f, j1);
    fx_submit(f, j2);
    fx_schedule(f);
    const struct eng_decision *d1 = fx_find(f, ENG_RESERVE, j1->name);
    const struct eng_decision *d2 = fx_find(f, ENG_RESERVE, j2->name);
    assert_non_null(d1);
    assert_non_null(d2);
    assert_string_equal(fx_flavor_of(d1, "main", "google.com/tpu"), "on-demand");
    assert_string_equal(fx_flavor_of(d2, "main", "google.com/tpu"), "dws");
    assert_string_equal(fx_flavor_of(d2, "main", "cpu"), "dws");
    assert_int_equal(fx_count(f, ENG_PENDING), 0);
    fx_free(f);
}

/* The control plane writing the reservation back changes nothing; finishing
 * job 1 frees on-demand for a third job. */
static void seed_third_job_reuses_on_demand_after_job_1_finishes(void **state)
{
    (void)state;
    struct fx *f = seed_cluster();
    struct api_workload *j1 = batch_job(f, "job-1", 1000);
    struct api_workload *j2 = batch_job(f, "job-2", 2000);
    fx_submit(f, j1);
    fx_submit(f, j2);
    fx_schedule(f);
    fx_apply_reserve(f, j1, fx_find(f, ENG_RESERVE, "job-1"), true);
    fx_apply_reserve(f, j2, fx_find(f, ENG_RESERVE, "job-2"), false);
    assert_int_equal(fx_schedule(f), 0);
    fx_finish(f, j1);
    struct api_workload *j3 = batch_job(f, "job-3", 3000);
    fx_submit(f, j3);
    fx_schedule(f);
    assert_string_equal(fx_flavor_of(fx_find(f, ENG_RESERVE, "job-3"), "main", "google.com/tpu"),
                        "on-demand");
    fx_free(f);
}

/* Without the dws flavor, job 2 waits; Kueue lists every reason, sorted. */
static void seed_without_dws_job_2_waits_for_on_demand(void **state)
{
    (void)state;
    struct fx *f = fx_new(NULL);
    fx_flavor(f, "default-cpu", "cloud.google.com/gke-nodepool=default-pool");
    fx_flavor(f, "on-demand", "cloud.google.com/gke-nodepool=on-demand-pool");
    fx_cq(f, "cluster-queue", NULL,
          "default-cpu:cpu=10,memory=20Gi,google.com/tpu=0;on-demand:cpu=40,memory=75Gi,google.com/tpu=16");
    fx_ns(f, "default", NULL);
    fx_lq(f, "default", "user-queue", "cluster-queue");
    fx_submit(f, rayjob(f, "job-1", 1000));
    fx_submit(f, rayjob(f, "job-2", 2000));
    fx_schedule(f);
    assert_non_null(fx_find(f, ENG_RESERVE, "job-1"));
    const struct eng_decision *d = fx_find(f, ENG_PENDING, "job-2");
    assert_non_null(d);
    assert_string_equal(d->reason, "WaitingForQuota");
    assert_string_equal(
        d->message,
        "couldn't assign flavors to pod set tpu-group: insufficient quota for cpu in flavor default-cpu, "
        "previously considered podsets requests (2500m) + current podset request (32) > maximum "
        "capacity (10), insufficient unused quota for cpu in flavor on-demand, 24 more needed, "
        "insufficient unused quota for google.com/tpu in flavor on-demand, 16 more needed, "
        "insufficient unused quota for memory in flavor on-demand, 53Gi more needed");
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(seed_rayjobs_take_on_demand_then_dws),
        cmocka_unit_test(seed_batch_jobs_take_on_demand_then_dws),
        cmocka_unit_test(seed_third_job_reuses_on_demand_after_job_1_finishes),
        cmocka_unit_test(seed_without_dws_job_2_waits_for_on_demand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
