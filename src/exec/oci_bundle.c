/*
 * oci_bundle: one container's OCI runtime config (config.json, runtime-spec
 * 1.0) from what the local executor resolved (argv, env, cwd) and the
 * pod's limits and devices. Pure: no I/O, unit-tested
 * (tests/unit/test_exec_oci.c).
 */
#include <string.h>

#include "api/object.h"
#include "api/quantity.h"
#include "exec/oci-int.h"
#include "util/jsonx.h"

#define CPU_PERIOD_US 100000

/* Docker's default capability set (what a Kubernetes container gets). */
static const char *const default_caps[] = {
    "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD",
    "CAP_NET_RAW", "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP",
    "CAP_NET_BIND_SERVICE", "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE", NULL};

static const char *const masked_paths[] = {
    "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
    "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/sys/firmware", NULL};

static const char *const readonly_paths[] = {
    "/proc/asound", "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger",
    NULL};

static json_t *strv(const char *const *v)
{
    json_t *a = json_array();
    for (; v && *v; v++)
        json_array_append_new(a, json_string(*v));
    return a;
}

static json_t *mount_new(const char *dst, const char *type, const char *src,
                         const char *const *opts)
{
    return json_pack("{s:s, s:s, s:s, s:o}", "destination", dst, "type", type, "source", src,
                     "options", strv(opts));
}

static json_t *mounts_new(const struct oci_ctr_cfg *c)
{
    json_t *m = json_array();
    json_array_append_new(m, mount_new("/proc", "proc", "proc", NULL));
    json_array_append_new(m, mount_new("/dev", "tmpfs", "tmpfs",
                                       (const char *[]){"nosuid", "strictatime", "mode=755",
                                                        "size=65536k", NULL}));
    json_array_append_new(m, mount_new("/dev/pts", "devpts", "devpts",
                                       (const char *[]){"nosuid", "noexec", "newinstance",
                                                        "ptmxmode=0666", "mode=0620", NULL}));
    json_array_append_new(m, mount_new("/dev/shm", "tmpfs", "shm",
                                       (const char *[]){"nosuid", "noexec", "nodev",
                                                        "mode=1777", "size=65536k", NULL}));
    json_array_append_new(m, mount_new("/dev/mqueue", "mqueue", "mqueue",
                                       (const char *[]){"nosuid", "noexec", "nodev", NULL}));
    json_array_append_new(m, mount_new("/sys", "sysfs", "sysfs",
                                       (const char *[]){"nosuid", "noexec", "nodev", "ro",
                                                        NULL}));
    json_array_append_new(m, mount_new("/tmp", "tmpfs", "tmpfs",
                                       (const char *[]){"nosuid", "nodev", "mode=1777", NULL}));
    for (size_t i = 0; i < c->n_binds; i++) {
        const struct oci_bind *b = &c->binds[i];
        json_array_append_new(m, mount_new(b->destination, "bind", b->source,
                                           (const char *[]){"rbind", b->readonly ? "ro" : "rw",
                                                            NULL}));
    }
    return m;
}

static json_t *resources_new(const struct oci_ctr_cfg *c)
{
    json_t *r = json_object();
    json_t *devs = json_array();
    json_array_append_new(devs, json_pack("{s:b, s:s}", "allow", 0, "access", "rwm"));
    /* the defaults runc and crun create (null, zero, full, random,
     * urandom, tty, ptmx) are allowed by the runtime itself */
    for (size_t i = 0; i < c->n_devices; i++)
        json_array_append_new(devs, json_pack("{s:b, s:s, s:I, s:I, s:s}", "allow", 1, "type",
                                              "c", "major", (json_int_t)c->devices[i].major,
                                              "minor", (json_int_t)c->devices[i].minor,
                                              "access", "rwm"));
    json_object_set_new(r, "devices", devs);
    if (c->memory_limit_bytes > 0) /* swap (memory + swap) = limit: no swapping past it */
        json_object_set_new(r, "memory",
                            json_pack("{s:I, s:I}", "limit", (json_int_t)c->memory_limit_bytes,
                                      "swap", (json_int_t)c->memory_limit_bytes));
    json_t *cpu = json_object();
    if (c->cpu_limit_milli > 0) {
        int64_t quota = c->cpu_limit_milli * (CPU_PERIOD_US / 1000);
        json_object_set_new(cpu, "quota", json_integer(quota < 1000 ? 1000 : quota));
        json_object_set_new(cpu, "period", json_integer(CPU_PERIOD_US));
    }
    if (c->cpu_request_milli > 0) {
        int64_t shares = c->cpu_request_milli * 1024 / 1000;
        json_object_set_new(cpu, "shares", json_integer(shares < 2 ? 2 : shares));
    }
    if (json_object_size(cpu))
        json_object_set_new(r, "cpu", cpu);
    else
        json_decref(cpu);
    return r;
}

static json_t *linux_new(const struct oci_ctr_cfg *c)
{
    json_t *ns = json_array();
    const char *types[] = {"pid", "mount", "ipc", "uts"};
    for (size_t i = 0; i < sizeof(types) / sizeof(*types); i++)
        json_array_append_new(ns, json_pack("{s:s}", "type", types[i]));
    json_t *net = json_pack("{s:s}", "type", "network");
    if (c->netns_path)
        json_object_set_new(net, "path", json_string(c->netns_path));
    json_array_append_new(ns, net);
    json_t *devices = json_array();
    for (size_t i = 0; i < c->n_devices; i++)
        json_array_append_new(devices,
                              json_pack("{s:s, s:s, s:I, s:I, s:i}", "path", c->devices[i].path,
                                        "type", "c", "major", (json_int_t)c->devices[i].major,
                                        "minor", (json_int_t)c->devices[i].minor, "fileMode",
                                        0666));
    json_t *l = json_pack("{s:o, s:o, s:o, s:o, s:o, s:s}", "namespaces", ns, "devices", devices,
                          "resources", resources_new(c), "maskedPaths", strv(masked_paths),
                          "readonlyPaths", strv(readonly_paths), "rootfsPropagation",
                          "rprivate");
    if (c->cgroups_path)
        json_object_set_new(l, "cgroupsPath", json_string(c->cgroups_path));
    return l;
}

json_t *oci_config_new(const struct oci_ctr_cfg *c)
{
    json_t *caps = strv(default_caps);
    json_t *capset = json_pack("{s:O, s:O, s:O, s:O}", "bounding", caps, "effective", caps,
                               "permitted", caps, "inheritable", caps);
    json_decref(caps);
    json_t *user = json_pack("{s:I, s:I}", "uid", (json_int_t)c->uid, "gid", (json_int_t)c->gid);
    if (c->n_groups) {
        json_t *g = json_array();
        for (size_t i = 0; i < c->n_groups; i++)
            json_array_append_new(g, json_integer(c->groups[i]));
        json_object_set_new(user, "additionalGids", g);
    }
    json_t *process = json_pack(
        "{s:b, s:o, s:o, s:o, s:s, s:o, s:b}", "terminal", 0, "user", user,
        "args", strv((const char *const *)c->argv), "env",
        strv((const char *const *)c->envp), "cwd", c->cwd && c->cwd[0] == '/' ? c->cwd : "/",
        "capabilities", capset, "noNewPrivileges", 0);
    return json_pack("{s:s, s:o, s:{s:s, s:b}, s:s, s:o, s:o}", "ociVersion", "1.0.2",
                     "process", process, "root", "path", c->rootfs, "readonly",
                     c->rootfs_readonly, "hostname", c->hostname ? c->hostname : "pod",
                     "mounts", mounts_new(c), "linux", linux_new(c));
}

/* resources.<kind>.<resource> of ctr in its unit (cpu: milli), 0 when
 * absent, not a quantity or negative. */
static int64_t quantity_at(const json_t *ctr, const char *kind, const char *resource)
{
    const json_t *v = JX_GET(ctr, "resources", kind, resource);
    int64_t out = 0;
    if (!v || api_quantity_from_json(v, resource, NULL, &out, NULL) != 0 || out < 0)
        return 0;
    return out;
}

void oci_limits_of(const json_t *container, int64_t *memory_limit_bytes,
                   int64_t *cpu_limit_milli, int64_t *cpu_request_milli)
{
    *memory_limit_bytes = quantity_at(container, "limits", "memory");
    *cpu_limit_milli = quantity_at(container, "limits", "cpu");
    *cpu_request_milli = quantity_at(container, "requests", "cpu");
    if (!*cpu_request_milli) /* Kubernetes: requests default to limits */
        *cpu_request_milli = *cpu_limit_milli;
}

int64_t oci_gpus_of(const json_t *pod)
{
    struct api_podset ps;
    if (!pod || api_podset_from_template(pod, NULL, 1, &ps) != 0)
        return 0;
    int64_t n = api_reslist_get(&ps.requests, OCI_GPU_RESOURCE);
    api_podset_release(&ps);
    return n > 0 ? n : 0;
}
