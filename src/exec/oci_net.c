/*
 * oci_net: the pod network of the OCI executor. One Linux bridge (cueue0,
 * 10.88.0.1/16, host-only: no route out, no NAT), and per pod a network
 * namespace kept at a bind-mount path (the runtime joins it: config.json
 * linux.namespaces network.path) with one veth pair: the host end on the
 * bridge, the pod end eth0 with the pod's IP. Netlink through libnl-route-3.
 * Pod IPs are taken machine-wide by exclusive file creation, so several
 * servers on one machine (tests) never hand out the same IP.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/bridge.h>
#include <netlink/route/link/veth.h>

#include "exec/oci-int.h"
#include "util/err.h"
#include "util/xalloc.h"

/* ---- pod IPs ---- */

void oci_ip_format(uint32_t ip, char buf[16])
{
    snprintf(buf, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
}

/* The content of dir/name into buf (lx_read_line). */
static bool read_small(const char *dir, const char *name, char *buf, size_t len)
{
    char *path = xasprintf("%s/%s", dir, name);
    bool ok = lx_read_line(path, buf, len);
    xfree(path);
    return ok;
}

/* A claim whose pod has no network namespace and that is older than
 * STALE_CLAIM_S was left by a server that died before cleaning up (a
 * claim is made a moment before its pod's namespace). */
#define STALE_CLAIM_S 60
static bool is_stale(const char *path, const char *cur)
{
    struct stat st, ns;
    char *nsp = xasprintf(OCI_RUN_DIR "/netns/%s", cur);
    bool stale = stat(path, &st) == 0 && st.st_mtime + STALE_CLAIM_S < time(NULL) &&
                 stat(nsp, &ns) != 0 && errno == ENOENT;
    xfree(nsp);
    return stale;
}

/* Create dir/name holding owner, exclusively: 0, CU_EEXIST (someone
 * else's), CU_EIO. An existing file that names owner counts as created;
 * a stale one (is_stale) is taken over. */
static int claim(const char *dir, const char *name, const char *owner)
{
    char *path = xasprintf("%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        char cur[128];
        bool exists = errno == EEXIST;
        bool read = exists && read_small(dir, name, cur, sizeof(cur));
        int rc = !exists ? CU_EIO : read && !strcmp(cur, owner) ? 0 : CU_EEXIST;
        if (rc == CU_EEXIST && read && is_stale(path, cur) && unlink(path) == 0)
            fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) {
            xfree(path);
            return rc;
        }
    }
    xfree(path);
    size_t len = strlen(owner);
    bool ok = write(fd, owner, len) == (ssize_t)len;
    close(fd);
    return ok ? 0 : CU_EIO;
}

static void unclaim(const char *dir, const char *name, const char *owner)
{
    char cur[128];
    if (!read_small(dir, name, cur, sizeof(cur)) || strcmp(cur, owner))
        return;
    char *path = xasprintf("%s/%s", dir, name);
    unlink(path);
    xfree(path);
}

int oci_ip_take(const char *dir, uint32_t net, int prefix, const char *owner, uint32_t *ip)
{
    exec_mkdir_p(dir);
    uint32_t size = prefix >= 32 ? 1 : 1u << (32 - prefix);
    /* .0 the network, .1 the bridge, the last the broadcast */
    for (uint32_t i = 2; i + 1 < size; i++) {
        char name[16];
        oci_ip_format(net + i, name);
        int rc = claim(dir, name, owner);
        if (rc == CU_EEXIST)
            continue;
        if (rc == 0)
            *ip = net + i;
        return rc;
    }
    return CU_ELIMIT;
}

void oci_ip_release(const char *dir, uint32_t ip, const char *owner)
{
    char name[16];
    oci_ip_format(ip, name);
    unclaim(dir, name, owner);
}

/* ---- GPUs ---- */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int *oci_gpu_discover(const char *dev_dir, size_t *n)
{
    *n = 0;
    int *out = NULL;
    size_t cap = 0;
    DIR *d = opendir(dev_dir);
    if (!d)
        return NULL;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        const char *s = de->d_name;
        if (strncmp(s, "nvidia", 6) || !s[6])
            continue;
        char *end;
        long v = strtol(s + 6, &end, 10);
        if (*end || s[6] < '0' || s[6] > '9' || v < 0 || v > 4096)
            continue;
        XGROW(out, cap, *n + 1);
        out[(*n)++] = (int)v;
    }
    closedir(d);
    if (*n)
        qsort(out, *n, sizeof(*out), cmp_int);
    return out;
}

int oci_gpu_take(const char *dir, const int *have, size_t n_have, int count, const char *owner,
                 int *out, char *err, size_t errlen)
{
    exec_mkdir_p(dir);
    int got = 0;
    for (size_t i = 0; i < n_have && got < count; i++) {
        char name[16];
        snprintf(name, sizeof(name), "%d", have[i]);
        int rc = claim(dir, name, owner);
        if (rc == 0)
            out[got++] = have[i];
        else if (rc != CU_EEXIST)
            break;
    }
    if (got == count)
        return 0;
    for (int i = 0; i < got; i++) {
        char name[16];
        snprintf(name, sizeof(name), "%d", out[i]);
        unclaim(dir, name, owner);
    }
    snprintf(err, errlen,
             "nvidia.com/gpu: the pod asks for %d GPUs and the node has %d free of %zu", count,
             got, n_have);
    return CU_ELIMIT;
}

void oci_gpu_release(const char *dir, const char *owner)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) != NULL)
        if (de->d_name[0] != '.')
            unclaim(dir, de->d_name, owner);
    closedir(d);
}

/* ---- netlink ---- */

void oci_net_host_if(const char *uid, char buf[16])
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *s = uid; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    snprintf(buf, 16, "cu%012llx", (unsigned long long)(h & 0xffffffffffffull));
}

static struct nl_sock *nl_open(void)
{
    struct nl_sock *sk = nl_socket_alloc();
    if (sk && nl_connect(sk, NETLINK_ROUTE) != 0) {
        nl_socket_free(sk);
        return NULL;
    }
    return sk;
}

static int link_up(struct nl_sock *sk, const char *name)
{
    struct rtnl_link *l = NULL, *ch = rtnl_link_alloc();
    int rc = rtnl_link_get_kernel(sk, 0, name, &l);
    if (rc == 0) {
        rtnl_link_set_flags(ch, IFF_UP);
        rc = rtnl_link_change(sk, l, ch, 0);
    }
    rtnl_link_put(l);
    rtnl_link_put(ch);
    return rc;
}

static int addr_add(struct nl_sock *sk, const char *ifname, uint32_t ip, int prefix)
{
    struct rtnl_link *l = NULL;
    int rc = rtnl_link_get_kernel(sk, 0, ifname, &l);
    if (rc != 0)
        return rc;
    struct rtnl_addr *a = rtnl_addr_alloc();
    uint32_t be = htonl(ip);
    struct nl_addr *local = nl_addr_build(AF_INET, &be, 4);
    nl_addr_set_prefixlen(local, prefix);
    rtnl_addr_set_ifindex(a, rtnl_link_get_ifindex(l));
    rtnl_addr_set_local(a, local);
    rc = rtnl_addr_add(sk, a, 0);
    nl_addr_put(local);
    rtnl_addr_put(a);
    rtnl_link_put(l);
    return rc == -NLE_EXIST ? 0 : rc;
}

int oci_net_bridge(char *err, size_t errlen)
{
    struct nl_sock *sk = nl_open();
    if (!sk) {
        snprintf(err, errlen, "netlink: cannot open a route socket");
        return CU_EIO;
    }
    struct rtnl_link *l = NULL;
    int rc = rtnl_link_get_kernel(sk, 0, OCI_BRIDGE, &l);
    if (rc != 0) {
        rc = rtnl_link_bridge_add(sk, OCI_BRIDGE);
        if (rc == -NLE_EXIST)
            rc = 0;
    }
    rtnl_link_put(l);
    if (rc == 0)
        rc = addr_add(sk, OCI_BRIDGE, OCI_NET_BASE + 1, OCI_NET_PREFIX);
    if (rc == 0)
        rc = link_up(sk, OCI_BRIDGE);
    if (rc != 0)
        snprintf(err, errlen, "bridge %s: %s", OCI_BRIDGE, nl_geterror(rc));
    nl_socket_free(sk);
    return rc ? CU_EIO : 0;
}

/* A new network namespace bound at path; its fd in *fd and a route socket
 * inside it in *sk. The calling thread's namespace is restored. */
static int netns_new(const char *path, int *fd, struct nl_sock **sk, char *err, size_t errlen)
{
    int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    int file = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0444);
    if (file >= 0)
        close(file);
    int rc = CU_EIO;
    if (self < 0 || file < 0 || unshare(CLONE_NEWNET) != 0) {
        snprintf(err, errlen, "network namespace %s: %s", path, strerror(errno));
    } else {
        if (mount("/proc/thread-self/ns/net", path, NULL, MS_BIND, NULL) != 0)
            snprintf(err, errlen, "network namespace %s: bind mount: %s", path,
                     strerror(errno));
        else if ((*sk = nl_open()) == NULL)
            snprintf(err, errlen, "network namespace %s: no route socket", path);
        else
            rc = 0;
        if (setns(self, CLONE_NEWNET) != 0)
            abort(); /* this thread would stay in the pod's namespace */
    }
    if (self >= 0)
        close(self);
    *fd = rc == 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    return rc;
}

static int veth_add(struct nl_sock *sk, const char *host_if, int ns_fd)
{
    struct rtnl_link *br = NULL;
    int rc = rtnl_link_get_kernel(sk, 0, OCI_BRIDGE, &br);
    if (rc != 0)
        return rc;
    struct rtnl_link *veth = rtnl_link_veth_alloc();
    struct rtnl_link *peer = rtnl_link_veth_get_peer(veth);
    rtnl_link_set_name(veth, host_if);
    rtnl_link_set_master(veth, rtnl_link_get_ifindex(br));
    rtnl_link_set_flags(veth, IFF_UP);
    rtnl_link_set_name(peer, "eth0");
    rtnl_link_set_ns_fd(peer, ns_fd);
    rc = rtnl_link_add(sk, veth, NLM_F_CREATE | NLM_F_EXCL);
    rtnl_link_put(peer);
    rtnl_link_veth_release(veth);
    rtnl_link_put(br);
    return rc;
}

int oci_net_pod_up(const char *path, const char *host_if, uint32_t ip, char *err, size_t errlen)
{
    exec_mkdir_p(OCI_RUN_DIR "/netns");
    int ns_fd = -1;
    struct nl_sock *in = NULL, *host = NULL;
    int rc = netns_new(path, &ns_fd, &in, err, errlen);
    if (rc == 0 && (host = nl_open()) == NULL) {
        snprintf(err, errlen, "netlink: cannot open a route socket");
        rc = CU_EIO;
    }
    int nrc = 0;
    const char *what = "";
    if (rc == 0 && (nrc = veth_add(host, host_if, ns_fd)) != 0)
        what = "veth";
    else if (rc == 0 && (nrc = link_up(in, "lo")) != 0)
        what = "lo up";
    else if (rc == 0 && (nrc = addr_add(in, "eth0", ip, OCI_NET_PREFIX)) != 0)
        what = "eth0 address";
    else if (rc == 0 && (nrc = link_up(in, "eth0")) != 0)
        what = "eth0 up";
    if (nrc != 0) {
        snprintf(err, errlen, "pod network (%s, %s): %s", host_if, what, nl_geterror(nrc));
        rc = CU_EIO;
    }
    if (ns_fd >= 0)
        close(ns_fd);
    if (in)
        nl_socket_free(in);
    if (host)
        nl_socket_free(host);
    if (rc != 0)
        oci_net_pod_down(path, host_if);
    return rc;
}

void oci_net_pod_down(const char *path, const char *host_if)
{
    struct nl_sock *sk = nl_open();
    if (sk) {
        struct rtnl_link *l = NULL;
        if (rtnl_link_get_kernel(sk, 0, host_if, &l) == 0)
            rtnl_link_delete(sk, l); /* its peer goes with it */
        rtnl_link_put(l);
        nl_socket_free(sk);
    }
    umount2(path, MNT_DETACH);
    unlink(path);
}
