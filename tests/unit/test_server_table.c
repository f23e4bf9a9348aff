/* Unit tests of Table output: columns per kind, cells (ages formatted by
 * the server, Kueue conditions, Job completions/duration/status, Pod
 * readiness), PartialObjectMetadata rows. Time is passed in, never read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "server/srv-int.h"
#include "util/jsonx.h"
#include "util/timefmt.h"
#include "util/xalloc.h"

#define T0 1767225600000LL /* 2026-01-01T00:00:00Z */

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    if (!v)
        fail_msg("bad test JSON: %s", e.text);
    return v;
}

static char *cells(enum api_kind_id id, const char *obj, int64_t now)
{
    json_t *o = J(obj);
    json_t *row = srv_table_row(api_kind_get(id), o, now, NULL);
    char *s = jx_dumps(json_object_get(row, "cells"));
    json_decref(row);
    json_decref(o);
    return s;
}

static char *column_names(enum api_kind_id id)
{
    json_t *cols = srv_table_columns(api_kind_get(id));
    json_t *names = json_array();
    size_t i;
    json_t *c;
    json_array_foreach(cols, i, c)
    {
        char *n = xasprintf("%s%s", JX_STR(c, "name"), JX_INT(c, 0, "priority") ? "*" : "");
        json_array_append_new(names, json_string(n));
        xfree(n);
    }
    char *s = jx_dumps(names);
    json_decref(names);
    json_decref(cols);
    return s;
}

static void expect(char *got, const char *want)
{
    assert_string_equal(got, want);
    xfree(got);
}

static void test_columns(void **state)
{
    (void)state;
    expect(column_names(KIND_CLUSTERQUEUE),
           "[\"Name\",\"Cohort\",\"Strategy*\",\"Pending Workloads\",\"Admitted Workloads*\"]");
    expect(column_names(KIND_WORKLOAD),
           "[\"Name\",\"Queue\",\"Reserved in\",\"Admitted\",\"Finished\",\"Age\"]");
    expect(column_names(KIND_LOCALQUEUE),
           "[\"Name\",\"ClusterQueue\",\"Pending Workloads\",\"Admitted Workloads\"]");
    /* a CRD's printer columns replace AGE; a CRD without them gets AGE */
    expect(column_names(KIND_WORKLOADPRIORITYCLASS), "[\"Name\",\"Value\"]");
    expect(column_names(KIND_RESOURCEFLAVOR), "[\"Name\",\"Age\"]");
    expect(column_names(KIND_ADMISSIONCHECK), "[\"Name\",\"Age\"]");
    expect(column_names(KIND_PROVISIONINGREQUEST),
           "[\"Name\",\"Accepted\",\"Provisioned\",\"Failed\",\"Age\"]");
    expect(column_names(KIND_RAYJOB),
           "[\"Name\",\"Job Status\",\"Deployment Status\",\"Ray Cluster Name\",\"Start Time\","
           "\"End Time\",\"Age\"]");
    expect(column_names(KIND_POD), "[\"Name\",\"Ready\",\"Status\",\"Restarts\",\"Age\",\"IP*\","
                                   "\"Node*\",\"Nominated Node*\",\"Readiness Gates*\"]");
    expect(column_names(KIND_NODE),
           "[\"Name\",\"Status\",\"Roles\",\"Age\",\"Version\",\"Internal-IP*\",\"External-IP*\","
           "\"OS-Image*\",\"Kernel-Version*\",\"Container-Runtime*\"]");
    json_t *cols = srv_table_columns(api_kind_get(KIND_POD));
    assert_string_equal(JX_STR(json_array_get(cols, 0), "format"), "name");
    json_decref(cols);
}

static void test_age_and_kueue_cells(void **state)
{
    (void)state;
    const char *wl = "{\"metadata\":{\"name\":\"w\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
                     "\"spec\":{\"queueName\":\"user-queue\"},"
                     "\"status\":{\"admission\":{\"clusterQueue\":\"cq\"},\"conditions\":["
                     "{\"type\":\"Admitted\",\"status\":\"True\"}]}}";
    expect(cells(KIND_WORKLOAD, wl, T0 + 150 * 1000), "[\"w\",\"user-queue\",\"cq\",\"True\",null,\"2m30s\"]");
    expect(cells(KIND_WORKLOAD, wl, T0 + 3 * 86400000LL), "[\"w\",\"user-queue\",\"cq\",\"True\",null,\"3d\"]");
    /* missing values are null (printed blank), integers stay integers */
    expect(cells(KIND_CLUSTERQUEUE,
                 "{\"metadata\":{\"name\":\"cq\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
                 "\"spec\":{},\"status\":{\"pendingWorkloads\":4}}",
                 T0 + 5000),
           "[\"cq\",null,null,4,null]");
}

static void test_job_cells(void **state)
{
    (void)state;
    const char *job = "{\"metadata\":{\"name\":\"j\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
                      "\"spec\":{\"completions\":3,\"parallelism\":3,\"suspend\":false,"
                      "\"selector\":{\"matchLabels\":{\"batch.kubernetes.io/controller-uid\":\"u\"}},"
                      "\"template\":{\"spec\":{\"containers\":[{\"name\":\"main\",\"image\":\"busybox\"},"
                      "{\"name\":\"s\",\"image\":\"alpine\"}]}}},"
                      "\"status\":{\"succeeded\":1,\"startTime\":\"2026-01-01T00:00:10Z\"}}";
    expect(cells(KIND_JOB, job, T0 + 70 * 1000),
           "[\"j\",\"Running\",\"1/3\",\"60s\",\"70s\",\"main,s\",\"busybox,alpine\","
           "\"batch.kubernetes.io/controller-uid=u\"]");
    const char *done = "{\"metadata\":{\"name\":\"j\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
                       "\"spec\":{\"template\":{\"spec\":{\"containers\":[]}}},"
                       "\"status\":{\"succeeded\":1,\"startTime\":\"2026-01-01T00:00:00Z\","
                       "\"completionTime\":\"2026-01-01T00:00:42Z\",\"conditions\":["
                       "{\"type\":\"Complete\",\"status\":\"True\"}]}}";
    expect(cells(KIND_JOB, done, T0 + 3600 * 1000),
           "[\"j\",\"Complete\",\"1/1\",\"42s\",\"60m\",\"\",\"\",\"<none>\"]");
    /* created at .900 s, started in the same second (whole seconds): the
     * duration is never longer than the age */
    const char *fresh = "{\"metadata\":{\"name\":\"j\",\"creationTimestamp\":"
                        "\"2026-01-01T00:00:00.900Z\"},"
                        "\"spec\":{\"template\":{\"spec\":{\"containers\":[]}}},"
                        "\"status\":{\"startTime\":\"2026-01-01T00:00:00Z\"}}";
    expect(cells(KIND_JOB, fresh, T0 + 7800),
           "[\"j\",\"Running\",\"0/1\",\"6s\",\"6s\",\"\",\"\",\"<none>\"]");
}

static void test_pod_cells_and_row_object(void **state)
{
    (void)state;
    const char *pod = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\","
                      "\"labels\":{\"a\":\"b\"},\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
                      "\"spec\":{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"a\"},{\"name\":\"b\"}]},"
                      "\"status\":{\"phase\":\"Running\",\"podIP\":\"10.0.0.1\",\"containerStatuses\":["
                      "{\"name\":\"a\",\"ready\":true,\"restartCount\":2},"
                      "{\"name\":\"b\",\"ready\":false,\"restartCount\":1,\"state\":{\"waiting\":"
                      "{\"reason\":\"CrashLoopBackOff\"}}}]}}";
    expect(cells(KIND_POD, pod, T0 + 1000),
           "[\"p\",\"1/2\",\"CrashLoopBackOff\",3,\"1s\",\"10.0.0.1\",\"n1\",\"<none>\",\"<none>\"]");
    /* unscheduled, no IP: <none> as Kubernetes' pod printer; gates counted */
    expect(cells(KIND_POD,
                 "{\"metadata\":{\"name\":\"q\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
                 "\"spec\":{\"containers\":[{\"name\":\"a\"}],\"readinessGates\":["
                 "{\"conditionType\":\"x\"},{\"conditionType\":\"y\"}]},"
                 "\"status\":{\"phase\":\"Pending\",\"conditions\":[{\"type\":\"y\",\"status\":\"True\"}]}}",
                 T0),
           "[\"q\",\"0/1\",\"Pending\",0,\"0s\",\"<none>\",\"<none>\",\"<none>\",\"1/2\"]");
    json_t *o = J(pod);
    json_t *row = srv_table_row(api_kind_get(KIND_POD), o, T0, NULL);
    json_t *ro = json_object_get(row, "object");
    assert_string_equal(JX_STR(ro, "kind"), "PartialObjectMetadata");
    assert_string_equal(JX_STR(ro, "apiVersion"), "meta.k8s.io/v1");
    assert_string_equal(JX_STR(ro, "metadata", "namespace"), "ns");
    assert_string_equal(JX_STR(ro, "metadata", "labels", "a"), "b");
    assert_null(JX_GET(ro, "spec"));
    json_decref(row);
    row = srv_table_row(api_kind_get(KIND_POD), o, T0, "None");
    assert_null(json_object_get(row, "object"));
    json_decref(row);
    json_t *objs = json_pack("[O]", o);
    json_t *t = srv_table_new(api_kind_get(KIND_POD), objs, 42, T0, "Metadata", false);
    assert_string_equal(JX_STR(t, "kind"), "Table");
    assert_string_equal(JX_STR(t, "metadata", "resourceVersion"), "42");
    assert_int_equal(json_array_size(JX_GET(t, "columnDefinitions")), 0);
    assert_int_equal(json_array_size(JX_GET(t, "rows")), 1);
    json_decref(t);
    json_decref(objs);
    json_decref(o);
}

static void test_event_and_nodepool_cells(void **state)
{
    (void)state;
    expect(cells(KIND_EVENT,
                 "{\"metadata\":{\"name\":\"e\"},\"type\":\"Warning\",\"reason\":\"Failed\","
                 "\"message\":\"boom\",\"count\":2,\"source\":{\"component\":\"cueue\"},"
                 "\"involvedObject\":{\"kind\":\"RayJob\",\"name\":\"r\"},"
                 "\"firstTimestamp\":\"2026-01-01T00:00:00Z\",\"lastTimestamp\":\"2026-01-01T00:01:00Z\"}",
                 T0 + 120 * 1000),
           "[\"60s\",\"Warning\",\"Failed\",\"rayjob/r\",null,\"cueue\",\"boom\",\"2m\",2,\"e\"]");
    /* events.k8s.io style: eventTime and series, no count; no object name */
    expect(cells(KIND_EVENT,
                 "{\"metadata\":{\"name\":\"f\"},\"type\":\"Normal\",\"reason\":\"R\",\"message\":\"m\","
                 "\"reportingComponent\":\"c\",\"involvedObject\":{\"kind\":\"Node\"},"
                 "\"eventTime\":\"2026-01-01T00:00:00.000000Z\","
                 "\"series\":{\"count\":5,\"lastObservedTime\":\"2026-01-01T00:01:30.000000Z\"}}",
                 T0 + 120 * 1000),
           "[\"30s\",\"Normal\",\"R\",\"node\",null,\"c\",\"m\",\"2m\",5,\"f\"]");
    expect(cells(KIND_EVENT,
                 "{\"metadata\":{\"name\":\"g\"},\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"p\"},"
                 "\"lastTimestamp\":\"2026-01-01T00:00:00Z\"}",
                 T0 + 1000),
           "[\"1s\",null,null,\"pod/p\",null,\"\",null,\"<unknown>\",1,\"g\"]");
    expect(cells(KIND_NODE,
                 "{\"metadata\":{\"name\":\"n\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
                 "\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}],"
                 "\"addresses\":[{\"type\":\"Hostname\",\"address\":\"n\"},"
                 "{\"type\":\"InternalIP\",\"address\":\"127.0.0.1\"}],"
                 "\"nodeInfo\":{\"kubeletVersion\":\"v1.34.0\",\"osImage\":\"os\",\"kernelVersion\":\"\"}}}",
                 T0 + 60000),
           "[\"n\",\"Ready\",\"<none>\",\"60s\",\"v1.34.0\",\"127.0.0.1\",\"<none>\",\"os\","
           "\"<unknown>\",\"<unknown>\"]");
    expect(cells(KIND_NODEPOOL,
                 "{\"metadata\":{\"name\":\"dws\",\"creationTimestamp\":\"2026-01-01T00:00:00Z\"},"
                 "\"spec\":{\"config\":{\"machineType\":\"ct6e-standard-4t\",\"flexStart\":true},"
                 "\"autoscaling\":{\"enabled\":true,\"minNodeCount\":0,\"maxNodeCount\":4},"
                 "\"queuedProvisioning\":{\"enabled\":true},\"placementPolicy\":{\"tpuTopology\":\"4x4\"}},"
                 "\"status\":{\"nodeCount\":4}}",
                 T0),
           "[\"dws\",\"ct6e-standard-4t\",4,0,4,\"true\",\"true\",\"0s\",\"4x4\",null]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_columns),
        cmocka_unit_test(test_age_and_kueue_cells),
        cmocka_unit_test(test_job_cells),
        cmocka_unit_test(test_pod_cells_and_row_object),
        cmocka_unit_test(test_event_and_nodepool_cells),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
