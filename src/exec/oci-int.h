/*
 * oci-int: internals of the OCI executor (exec_oci_new in exec.h). Not a
 * public API. The OCI executor is the local executor (local.c: one
 * supervisor per pod, status files, adoption) with hooks (struct
 * lx_hooks) that turn each container into an OCI container run by runc or
 * crun:
 *   oci_bundle.c  a container's OCI config.json from what to run and the
 *                 pod's limits (pure: unit-tested)
 *   oci_net.c     the pod network: the bridge, one network namespace and
 *                 veth pair per pod (netlink through libnl-route-3), the
 *                 pod IP allocator
 *                 and the GPU allocator (/dev/nvidia<N> bound to pods)
 *   oci.c         the hooks: per pod the bundles, the namespace, /etc/hosts,
 *                 the cleanup; the start-up probe
 *   oci_shim.c    `cueue-pod-supervisor --oci-shim`: what the supervisor
 *                 runs as a container's process: the runtime's run
 *                 --detach, waiting for the container (as a subreaper), its
 *                 OOM kill, the runtime's delete
 *
 * Files of a pod, <state_dir>/pods/<uid>/oci/: <i>/config.json (the bundle
 * of container i, initContainers then containers), pod.json (ip, hostname,
 * namespace, gpus: what a restarted server needs). Per namespace:
 * <state_dir>/oci-hosts/<ns>, the /etc/hosts of its pods (bind-mounted). Machine-wide: /run/cueue/netns/<uid> (the pod's network
 * namespace), /run/cueue/ip/<a.b.c.d> (a taken pod IP, its content the
 * pod's uid), /run/cueue/gpu/<index> (a bound GPU, likewise).
 */
#ifndef CUEUE_EXEC_OCI_INT_H
#define CUEUE_EXEC_OCI_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec/local-int.h"

#define OCI_SHIM_ARG "--oci-shim"
#define OCI_RUN_DIR "/run/cueue"
#define OCI_BRIDGE "cueue0"
/* the pod network: host-only, 10.88.0.0/16, the bridge 10.88.0.1 */
#define OCI_NET_BASE 0x0a580000u /* 10.88.0.0 */
#define OCI_NET_PREFIX 16
#define OCI_CGROUP_PARENT "cueue"
/* the annotation naming a local image root file system (a directory) */
#define OCI_ROOTFS_ANNOTATION "cueue.dev/rootfs"
/* the smallest memory limit a container starts with (Docker's 6 MiB) */
#define OCI_MIN_MEMORY_BYTES (6 << 20)
#define OCI_GPU_RESOURCE "nvidia.com/gpu"

/* A read-write bind mount into the container. Borrowed strings. */
struct oci_bind {
    const char *source;
    const char *destination;
    bool readonly;
};

/* A device node given to the container. */
struct oci_device {
    const char *path; /* /dev/nvidia0 */
    int64_t major, minor;
};

/* Everything one container's config.json says. Borrowed. */
struct oci_ctr_cfg {
    char *const *argv;        /* NULL-terminated */
    char *const *envp;        /* NULL-terminated */
    const char *cwd;
    const char *rootfs;       /* root.path */
    bool rootfs_readonly;
    const char *hostname;
    const char *netns_path;   /* NULL = a new network namespace */
    const char *cgroups_path; /* /cueue/<id> */
    const struct oci_bind *binds;
    size_t n_binds;
    const struct oci_device *devices;
    size_t n_devices;
    int64_t memory_limit_bytes; /* 0 = none */
    int64_t cpu_limit_milli;    /* 0 = none: cpu quota over a 100 ms period */
    int64_t cpu_request_milli;  /* 0 = none: cpu shares (v1) = weight (v2) */
    /* process.user: uid/gid/additionalGids (0/0/none when not given) */
    uint32_t uid, gid;
    const uint32_t *groups;
    size_t n_groups;
};

/* The OCI runtime config (runtime-spec 1.0) of one container: namespaces
 * pid, mount, ipc, uts (hostname), network (joined at netns_path when
 * given); mounts: /proc, /dev (tmpfs with the default devices), /dev/pts,
 * /dev/shm, /dev/mqueue, /sys read-only, /tmp a private tmpfs, then binds;
 * linux.resources: memory.limit (and swap = limit: none beyond), cpu.quota/period (limit_milli * 100 per
 * 100000 us), cpu.shares (request_milli * 1024 / 1000, at least 2), the
 * devices allowed; Docker's default capabilities; masked /proc paths;
 * process.user from uid, gid and groups (additionalGids). New reference. */
json_t *oci_config_new(const struct oci_ctr_cfg *cfg);

/* A container's limits from its resources (requests/limits.cpu,
 * limits.memory), 0 where absent or not parseable. */
void oci_limits_of(const json_t *container, int64_t *memory_limit_bytes,
                   int64_t *cpu_limit_milli, int64_t *cpu_request_milli);

/* The GPUs (nvidia.com/gpu) pod asks for, counted as the scheduler
 * counted them when it admitted the pod (api_podset_from_template: the
 * larger of the biggest init container and the containers' sum, limits
 * filling absent requests, sidecars with both); 0 when it asks for none or
 * a quantity does not parse. */
int64_t oci_gpus_of(const json_t *pod);

/* ---- pod IPs ---- */

/* Take the first free pod IP (host order) in net/prefix (network, bridge
 * .1 and broadcast excluded) by creating dir/<a.b.c.d> exclusively with
 * owner as content; an IP whose file names owner already is returned
 * again. 0 with *ip, CU_ELIMIT (none left) or CU_EIO. */
int oci_ip_take(const char *dir, uint32_t net, int prefix, const char *owner, uint32_t *ip);
/* Give back ip if dir/<ip> names owner. */
void oci_ip_release(const char *dir, uint32_t ip, const char *owner);
/* "a.b.c.d" into buf (16 bytes). */
void oci_ip_format(uint32_t ip, char buf[16]);

/* ---- GPUs ---- */

/* The GPU indexes (the N of /dev/nvidia<N>) under dev_dir, sorted; count
 * in *n; caller frees. */
int *oci_gpu_discover(const char *dev_dir, size_t *n);
/* Bind count GPUs of have[0..n_have) to owner by creating dir/<index>
 * exclusively (lowest free first; ones already owner's count). 0 with the
 * indexes in out[0..count), or CU_ELIMIT (fewer free: none taken) with a
 * message naming how many the node has free in err. */
int oci_gpu_take(const char *dir, const int *have, size_t n_have, int count, const char *owner,
                 int *out, char *err, size_t errlen);
/* Give back every GPU owner holds in dir. */
void oci_gpu_release(const char *dir, const char *owner);

/* ---- the pod network (oci_net.c; root only) ---- */

/* Make sure the bridge exists, has its address and is up. 0 or CU_EIO. */
int oci_net_bridge(char *err, size_t errlen);
/* Create the pod's network namespace at path (a bind mount of it), a veth
 * pair (host end host_if on the bridge, pod end eth0 with ip/prefix), lo
 * and eth0 up. 0 or CU_EIO (nothing left behind). */
int oci_net_pod_up(const char *path, const char *host_if, uint32_t ip, char *err,
                   size_t errlen);
/* Remove the pod's veth and namespace (missing ones are fine). */
void oci_net_pod_down(const char *path, const char *host_if);
/* The host end's name for a pod: "cu" and 12 hex digits of a hash of uid. */
void oci_net_host_if(const char *uid, char buf[16]);

/* ---- start-up ---- */

/* Whether pods can run under an OCI runtime here: root, the runtime
 * (runtime: a name or path; NULL = runc, else crun) found, namespaces
 * creatable, a writable cgroup hierarchy (v2, or v1's memory controller),
 * the bridge up, the shared read-only root bound. Sets up the last two.
 * 0 with the runtime's path in *runtime_path (caller frees), or
 * CU_EUNSUPPORTED/CU_EIO with the reason in err. */
int oci_probe(const char *runtime, char **runtime_path, char *err, size_t errlen);

/* ---- the shim ---- */

/* `cueue-pod-supervisor --oci-shim RUNTIME STATE_ROOT BUNDLE ID REASON_FILE
 * CGROUP`: run the container, wait for it, write "OOMKilled" to REASON_FILE
 * when the kernel OOM-killed in its cgroup, delete it, exit with its
 * status (killed by a signal: the same signal). oci_shim.c. */
int oci_shim_main(int argc, char **argv);

#endif
