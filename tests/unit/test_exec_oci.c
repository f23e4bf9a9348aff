/* Unit tests for the OCI executor's pure parts: a container's config.json
 * (src/exec/oci_bundle.c: namespaces, mounts, limits, devices), limits read
 * from a container's resources, and the machine-wide claims
 * (src/exec/oci_net.c): pod IPs and GPUs, on a temporary directory with a
 * fake device list. No namespaces, no runtime: those are the e2e tests'
 * (tests/e2e/t6000-oci-pods.sh). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#include <cmocka.h>

#include "exec/oci-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

static json_t *find_by(const json_t *arr, const char *key, const char *val)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        if (!strcmp(jx_or_empty(JX_STR(v, key)), val))
            return v;
    }
    return NULL;
}

static bool has_str(const json_t *arr, const char *s)
{
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        if (json_is_string(v) && !strcmp(json_string_value(v), s))
            return true;
    }
    return false;
}

static void test_config_has_namespaces_hostname_and_joined_network(void **state)
{
    (void)state;
    char *argv[] = {"/usr/bin/python3", "-m", "http.server", "8265", NULL};
    char *envp[] = {"PATH=/usr/bin", "HOSTNAME=web-0", NULL};
    struct oci_ctr_cfg c = {.argv = argv, .envp = envp, .cwd = "/work/x", .rootfs = "/r",
                            .rootfs_readonly = true, .hostname = "web-0",
                            .netns_path = "/run/cueue/netns/u1", .cgroups_path = "/cueue/u1-0"};
    json_t *v = oci_config_new(&c);
    assert_string_equal(JX_STR(v, "hostname"), "web-0");
    assert_string_equal(JX_STR(v, "root", "path"), "/r");
    assert_true(json_is_true(JX_GET(v, "root", "readonly")));
    assert_string_equal(JX_STR(v, "process", "cwd"), "/work/x");
    assert_string_equal(json_string_value(json_array_get(JX_GET(v, "process", "args"), 3)),
                        "8265");
    assert_true(has_str(JX_GET(v, "process", "env"), "HOSTNAME=web-0"));
    const json_t *ns = JX_GET(v, "linux", "namespaces");
    const char *types[] = {"pid", "mount", "ipc", "uts", "network"};
    for (size_t i = 0; i < 5; i++)
        assert_non_null(find_by(ns, "type", types[i]));
    assert_string_equal(JX_STR(find_by(ns, "type", "network"), "path"), "/run/cueue/netns/u1");
    assert_null(JX_GET(find_by(ns, "type", "pid"), "path")); /* a new one */
    assert_string_equal(JX_STR(v, "linux", "cgroupsPath"), "/cueue/u1-0");
    /* no limits given: none written */
    assert_null(JX_GET(v, "linux", "resources", "memory"));
    assert_null(JX_GET(v, "linux", "resources", "cpu"));
    json_decref(v);
}

static void test_config_mounts_private_tmp_proc_and_binds(void **state)
{
    (void)state;
    char *argv[] = {"/bin/true", NULL};
    char *envp[] = {NULL};
    struct oci_bind binds[] = {{"/state/pods/u1/oci/hosts", "/etc/hosts", true},
                               {"/state/pods/u1", "/state/pods/u1", false}};
    struct oci_ctr_cfg c = {.argv = argv, .envp = envp, .cwd = "/", .rootfs = "/r",
                            .hostname = "h", .binds = binds, .n_binds = 2};
    json_t *v = oci_config_new(&c);
    const json_t *m = JX_GET(v, "mounts");
    assert_string_equal(JX_STR(find_by(m, "destination", "/tmp"), "type"), "tmpfs");
    assert_string_equal(JX_STR(find_by(m, "destination", "/proc"), "type"), "proc");
    assert_true(has_str(JX_GET(find_by(m, "destination", "/sys"), "options"), "ro"));
    const json_t *hosts = find_by(m, "destination", "/etc/hosts");
    assert_string_equal(JX_STR(hosts, "source"), "/state/pods/u1/oci/hosts");
    assert_true(has_str(JX_GET(hosts, "options"), "ro"));
    const json_t *sb = find_by(m, "destination", "/state/pods/u1");
    assert_string_equal(JX_STR(sb, "type"), "bind");
    assert_true(has_str(JX_GET(sb, "options"), "rw"));
    /* no network path: a namespace of its own */
    assert_null(JX_GET(find_by(JX_GET(v, "linux", "namespaces"), "type", "network"), "path"));
    json_decref(v);
}

static void test_config_limits_and_devices(void **state)
{
    (void)state;
    char *argv[] = {"/bin/true", NULL};
    char *envp[] = {NULL};
    struct oci_device dev[] = {{"/dev/nvidia1", 195, 1}};
    struct oci_ctr_cfg c = {.argv = argv, .envp = envp, .cwd = "/", .rootfs = "/r",
                            .hostname = "h", .devices = dev, .n_devices = 1,
                            .memory_limit_bytes = 64 << 20, .cpu_limit_milli = 250,
                            .cpu_request_milli = 500};
    json_t *v = oci_config_new(&c);
    const json_t *r = JX_GET(v, "linux", "resources");
    assert_int_equal(json_integer_value(JX_GET(r, "memory", "limit")), 64 << 20);
    assert_int_equal(json_integer_value(JX_GET(r, "memory", "swap")), 64 << 20);
    assert_int_equal(json_integer_value(JX_GET(r, "cpu", "quota")), 25000);
    assert_int_equal(json_integer_value(JX_GET(r, "cpu", "period")), 100000);
    assert_int_equal(json_integer_value(JX_GET(r, "cpu", "shares")), 512);
    /* deny all, then the GPU */
    const json_t *rules = JX_GET(r, "devices");
    assert_true(json_is_false(JX_GET(json_array_get(rules, 0), "allow")));
    assert_int_equal(json_integer_value(JX_GET(json_array_get(rules, 1), "minor")), 1);
    const json_t *d = json_array_get(JX_GET(v, "linux", "devices"), 0);
    assert_string_equal(JX_STR(d, "path"), "/dev/nvidia1");
    assert_int_equal(json_integer_value(JX_GET(d, "major")), 195);
    json_decref(v);
}

static void test_limits_from_container_resources(void **state)
{
    (void)state;
    json_t *ctr = json_loads("{\"resources\": {\"limits\": {\"memory\": \"64Mi\", \"cpu\": "
                             "\"1500m\"}, \"requests\": {\"cpu\": 0.5}}}", 0, NULL);
    int64_t mem, lim, req;
    oci_limits_of(ctr, &mem, &lim, &req);
    assert_int_equal(mem, 64 << 20);
    assert_int_equal(lim, 1500);
    assert_int_equal(req, 500);
    json_decref(ctr);
    /* requests default to limits, as in Kubernetes; garbage counts as none */
    ctr = json_loads("{\"resources\": {\"limits\": {\"cpu\": \"2\", \"memory\": \"lots\"}}}", 0,
                     NULL);
    oci_limits_of(ctr, &mem, &lim, &req);
    assert_int_equal(mem, 0);
    assert_int_equal(lim, 2000);
    assert_int_equal(req, 2000);
    json_decref(ctr);
    /* a JSON number is read from its shortest text: 0.1 cpu is 100m, not
     * 101m (what 0.10000000000000001 rounded up would give) */
    ctr = json_loads("{\"resources\": {\"limits\": {\"cpu\": 0.1}}}", 0, NULL);
    oci_limits_of(ctr, &mem, &lim, &req);
    assert_int_equal(lim, 100);
    assert_int_equal(req, 100);
    json_decref(ctr);
    oci_limits_of(NULL, &mem, &lim, &req);
    assert_int_equal(mem + lim + req, 0);
}

/* The GPUs a pod asks for, as the scheduler counts them: containers add
 * up, init containers run before them (the larger wins), limits stand in
 * for requests, numbers and strings alike. */
static void test_gpus_counted_as_the_scheduler_counts_them(void **state)
{
    (void)state;
    json_t *pod = json_loads(
        "{\"spec\": {\"initContainers\": [{\"name\": \"i\", \"resources\": {\"limits\": "
        "{\"nvidia.com/gpu\": 3}}}], \"containers\": [{\"name\": \"a\", \"resources\": "
        "{\"limits\": {\"nvidia.com/gpu\": \"1\"}}}, {\"name\": \"b\", \"resources\": "
        "{\"requests\": {\"nvidia.com/gpu\": 1}, \"limits\": {\"nvidia.com/gpu\": 1}}}]}}",
        0, NULL);
    assert_int_equal(oci_gpus_of(pod), 3); /* max(3, 1 + 1) */
    json_array_remove(JX_GET(pod, "spec", "initContainers"), 0);
    assert_int_equal(oci_gpus_of(pod), 2);
    json_decref(pod);
    pod = json_loads("{\"spec\": {\"containers\": [{\"name\": \"a\"}]}}", 0, NULL);
    assert_int_equal(oci_gpus_of(pod), 0);
    json_decref(pod);
    assert_int_equal(oci_gpus_of(NULL), 0);
}

static char *temp_dir(void)
{
    char tmpl[] = "/tmp/cueue-oci-test.XXXXXX";
    assert_non_null(mkdtemp(tmpl));
    return xstrdup(tmpl);
}

static void rm_rf(const char *dir)
{
    char *cmd = xasprintf("rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    xfree(cmd);
}

static void test_ip_claims_are_distinct_reused_and_bounded(void **state)
{
    (void)state;
    char *dir = temp_dir();
    char *ips = xasprintf("%s/ip", dir);
    uint32_t net = 0x0a580000u, a = 0, b = 0, again = 0, c = 0;
    assert_int_equal(oci_ip_take(ips, net, 29, "pod-a", &a), 0);
    assert_int_equal(oci_ip_take(ips, net, 29, "pod-b", &b), 0);
    char buf[16];
    oci_ip_format(a, buf);
    assert_string_equal(buf, "10.88.0.2"); /* .0 network, .1 the bridge */
    oci_ip_format(b, buf);
    assert_string_equal(buf, "10.88.0.3");
    /* the same owner asking again (a restarted server) gets its own IP */
    assert_int_equal(oci_ip_take(ips, net, 29, "pod-a", &again), 0);
    assert_int_equal(again, a);
    /* a /29 has .2-.6 for pods: three more, then none */
    for (int i = 0; i < 3; i++) {
        char owner[16];
        snprintf(owner, sizeof(owner), "pod-%d", i);
        assert_int_equal(oci_ip_take(ips, net, 29, owner, &c), 0);
    }
    assert_int_equal(oci_ip_take(ips, net, 29, "pod-z", &c), CU_ELIMIT);
    /* someone else's release is ignored; the owner's frees it */
    oci_ip_release(ips, a, "pod-b");
    assert_int_equal(oci_ip_take(ips, net, 29, "pod-z", &c), CU_ELIMIT);
    oci_ip_release(ips, a, "pod-a");
    assert_int_equal(oci_ip_take(ips, net, 29, "pod-z", &c), 0);
    assert_int_equal(c, a);
    /* a claim a dead server left (old, its pod has no network namespace)
     * is taken over; a fresh one is not */
    char path[512];
    oci_ip_format(b, buf);
    snprintf(path, sizeof(path), "%s/%s", ips, buf);
    struct utimbuf old = {.actime = time(NULL) - 3600, .modtime = time(NULL) - 3600};
    assert_int_equal(utime(path, &old), 0);
    assert_int_equal(oci_ip_take(ips, net, 29, "pod-y", &c), 0);
    assert_int_equal(c, b);
    rm_rf(dir);
    xfree(ips);
    xfree(dir);
}

static void touch(const char *dir, const char *name)
{
    char *p = xasprintf("%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
    xfree(p);
}

static void test_gpus_discovered_and_never_given_twice(void **state)
{
    (void)state;
    char *dir = temp_dir();
    char *dev = xasprintf("%s/dev", dir), *claims = xasprintf("%s/gpu", dir);
    mkdir(dev, 0755);
    const char *names[] = {"nvidia3", "nvidia0", "nvidia1", "nvidia2", "nvidiactl",
                           "nvidia-uvm", "nvidia-caps", "nvme0"};
    for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
        touch(dev, names[i]);
    size_t n = 0;
    int *have = oci_gpu_discover(dev, &n);
    assert_int_equal(n, 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(have[i], i); /* sorted, only nvidia<N> */
    int a[4], b[4], c[4];
    char err[256] = "";
    assert_int_equal(oci_gpu_take(claims, have, n, 2, "pod-a", a, err, sizeof(err)), 0);
    assert_int_equal(oci_gpu_take(claims, have, n, 1, "pod-b", b, err, sizeof(err)), 0);
    assert_int_equal(a[0], 0);
    assert_int_equal(a[1], 1);
    assert_int_equal(b[0], 2);
    /* two asked, one free: refused whole, nothing kept */
    assert_int_equal(oci_gpu_take(claims, have, n, 2, "pod-c", c, err, sizeof(err)), CU_ELIMIT);
    assert_non_null(strstr(err, "nvidia.com/gpu"));
    assert_non_null(strstr(err, "1 free of 4"));
    assert_int_equal(oci_gpu_take(claims, have, n, 1, "pod-d", c, err, sizeof(err)), 0);
    assert_int_equal(c[0], 3);
    oci_gpu_release(claims, "pod-a");
    assert_int_equal(oci_gpu_take(claims, have, n, 2, "pod-c", c, err, sizeof(err)), 0);
    assert_int_equal(c[0], 0);
    assert_int_equal(c[1], 1);
    xfree(have);
    rm_rf(dir);
    xfree(dev);
    xfree(claims);
    xfree(dir);
}

static void test_host_if_names_fit_and_differ(void **state)
{
    (void)state;
    char a[16], b[16];
    oci_net_host_if("3b51878d-4f2e-4617-819d-fbe0d8fe43ae", a);
    oci_net_host_if("4caeb5df-33e3-40c0-aa2d-91b0178b160b", b);
    assert_int_equal(strlen(a), 14); /* IFNAMSIZ is 16 with the NUL */
    assert_string_not_equal(a, b);
    assert_memory_equal(a, "cu", 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_has_namespaces_hostname_and_joined_network),
        cmocka_unit_test(test_config_mounts_private_tmp_proc_and_binds),
        cmocka_unit_test(test_config_limits_and_devices),
        cmocka_unit_test(test_limits_from_container_resources),
        cmocka_unit_test(test_gpus_counted_as_the_scheduler_counts_them),
        cmocka_unit_test(test_ip_claims_are_distinct_reused_and_bounded),
        cmocka_unit_test(test_gpus_discovered_and_never_given_twice),
        cmocka_unit_test(test_host_if_names_fit_and_differ),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
