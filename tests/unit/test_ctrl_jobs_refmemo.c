/*
 * The Workload-event memo two job integrations share (jobs/frame.c
 * event_controller_ref): each integration must still see the controller
 * ownerReference of the event it is given, whether the memo holds another
 * event's (other resourceVersion, other object) or the same one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ctrl/jobs/jobs.h"

static const struct jobs_integration job_kind = {.kind = "Job", .kind_id = KIND_JOB};
static const struct jobs_integration ray_kind = {.kind = "RayJob", .kind_id = KIND_RAYJOB};

/* A Workload name owned (controller: true) by a kind/owner with uid, or
 * owned by nothing when kind is NULL. New reference. */
static json_t *workload(const char *name, const char *kind, const char *owner)
{
    json_t *meta = json_pack("{s:s, s:s}", "name", name, "namespace", "ns");
    if (kind)
        json_object_set_new(meta, "ownerReferences",
                            json_pack("[{s:s, s:s, s:s, s:b}]", "kind", kind, "name", owner,
                                      "uid", owner, "controller", 1));
    return json_pack("{s:s, s:o}", "kind", "Workload", "metadata", meta);
}

/* Two frames sharing one memo, as jobs_rec_join makes them. */
static void frames(struct jobs_frame *a, struct jobs_frame *b)
{
    jobs_frame_init(a, &job_kind);
    jobs_frame_init(b, &ray_kind);
    jobs_ref_memo_drop(b->memo);
    b->memo = jobs_ref_memo_hold(a->memo);
}

static void test_each_event_read_for_itself(void **state)
{
    (void)state;
    struct jobs_frame a, b;
    frames(&a, &b);
    json_t *ray_wl = workload("w1", "RayJob", "r1");
    json_t *job_wl = workload("w2", "Job", "j1");
    json_t *bare = workload("w3", NULL, NULL);
    struct store_event ev = {STORE_ADDED, KIND_WORKLOAD, 1, ray_wl};
    assert_null(jobs_frame_observe(&a, &ev));
    assert_string_equal(jobs_frame_observe(&b, &ev), "r1");
    /* another event: another object, later resourceVersion */
    ev = (struct store_event){STORE_ADDED, KIND_WORKLOAD, 2, job_wl};
    assert_string_equal(jobs_frame_observe(&a, &ev), "j1");
    assert_null(jobs_frame_observe(&b, &ev));
    /* the memo is filled by whichever frame sees the event first */
    ev = (struct store_event){STORE_ADDED, KIND_WORKLOAD, 3, bare};
    assert_null(jobs_frame_observe(&b, &ev));
    assert_null(jobs_frame_observe(&a, &ev));
    /* a later event of the same object address is read again */
    ev = (struct store_event){STORE_MODIFIED, KIND_WORKLOAD, 4, ray_wl};
    assert_string_equal(jobs_frame_observe(&b, &ev), "r1");
    assert_null(jobs_frame_observe(&a, &ev));
    size_t n = 0;
    assert_non_null(kq_index_get(b.workloads, "r1", &n));
    assert_int_equal(n, 1);
    assert_non_null(kq_index_get(a.workloads, "j1", &n));
    assert_int_equal(n, 1);
    /* the garbage collector's read (owners only) first, then a frame's */
    ev = (struct store_event){STORE_MODIFIED, KIND_WORKLOAD, 5, job_wl};
    assert_int_equal(json_array_size(jobs_ref_memo_owners(a.memo, &ev)), 1);
    assert_string_equal(jobs_frame_observe(&a, &ev), "j1");
    ev = (struct store_event){STORE_MODIFIED, KIND_WORKLOAD, 6, bare};
    assert_null(jobs_ref_memo_owners(b.memo, &ev));
    assert_null(jobs_frame_observe(&a, &ev));
    jobs_frame_release(&a);
    assert_int_equal(b.memo->refs, 1); /* still b's */
    jobs_frame_release(&b);
    json_decref(ray_wl);
    json_decref(job_wl);
    json_decref(bare);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_event_read_for_itself),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
