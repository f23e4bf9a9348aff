/*
 * oci: the OCI executor (exec_oci_new in exec.h): the local executor whose
 * hooks (struct lx_hooks) run every container through an OCI runtime. Per
 * pod, at start: a pod IP and a network namespace with a veth on the
 * bridge (oci_net.c), GPUs when it asks for nvidia.com/gpu, /etc/hosts,
 * and per container a bundle (oci_bundle.c) whose process the supervisor
 * runs through the shim (oci_shim.c). When the pod is over: the runtime's
 * leftovers, the namespace, the veth, the IP and the GPUs go.
 *
 * Invariants: o->mu guards the pod table (uid -> ip, hostname); it is
 * taken under the local executor's lock, never the other way round. The
 * machine-wide claims (IPs, GPUs) are files under /run/cueue naming the
 * pod's uid, so a restarted server, or another server on the machine,
 * agrees on who holds what.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uthash.h>

#include "exec/oci-int.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/log.h"
#include "util/sbuf.h"
#include "util/xalloc.h"

#define OCI_ROOTFS OCI_RUN_DIR "/rootfs"
#define OCI_IP_DIR OCI_RUN_DIR "/ip"
#define OCI_GPU_DIR OCI_RUN_DIR "/gpu"
#define SHIM_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct oci_pod {
    char *uid, *ns, *name, *hostname, *subdomain;
    uint32_t ip;
    UT_hash_handle hh;
};

struct oci {
    char *runtime;    /* runc or crun, a path */
    char *run_root;   /* the runtime's --root */
    char *shim;       /* the supervisor program, run as the shim */
    char *dev_dir;    /* where GPUs are found: /dev */
    char *hosts_dir;  /* <state_dir>/oci-hosts: one /etc/hosts per namespace */
    pthread_mutex_t mu;
    struct oci_pod *pods;
};

/* ---- small helpers ---- */

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return CU_EIO;
    size_t len = strlen(text);
    /* rewritten in place: the file is bind-mounted into running pods */
    bool ok = pwrite(fd, text, len, 0) == (ssize_t)len && ftruncate(fd, (off_t)len) == 0;
    close(fd);
    return ok ? 0 : CU_EIO;
}

static char *pod_file(const char *dir, const char *name)
{
    return xasprintf("%s/oci/%s", dir, name);
}

static const char *env_value(const struct exec_pod *pod, const char *name)
{
    for (size_t i = 0; i < pod->n_env; i++)
        if (!strcmp(pod->env[i].name, name))
            return pod->env[i].value;
    return NULL;
}

/* Run the runtime with args, wait for it (errors ignored: cleanup). */
static void runtime_run(const struct oci *o, const char *verb, const char *flag, const char *id)
{
    char *argv[] = {o->runtime, "--root", o->run_root, (char *)verb, (char *)flag,
                    (char *)id, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    if (posix_spawn(&pid, o->runtime, &fa, NULL, argv, (char *[]){SHIM_PATH, NULL}) == 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
        }
    posix_spawn_file_actions_destroy(&fa);
}

/* ---- /etc/hosts ---- */

static void hosts_line(struct sbuf *sb, const struct oci_pod *p)
{
    char ip[16];
    oci_ip_format(p->ip, ip);
    sbuf_addf(sb, "%s\t%s", ip, p->hostname);
    if (p->subdomain)
        sbuf_addf(sb, " %s.%s %s.%s.%s.svc %s.%s.%s.svc.cluster.local", p->hostname,
                  p->subdomain, p->hostname, p->subdomain, p->ns, p->hostname, p->subdomain,
                  p->ns);
    if (strcmp(p->name, p->hostname))
        sbuf_addf(sb, " %s", p->name);
    sbuf_addc(sb, '\n');
}

static int by_name(const struct oci_pod *a, const struct oci_pod *b)
{
    return strcmp(a->name, b->name);
}

/* The /etc/hosts of namespace ns's pods (one file, bind-mounted into each
 * of them; caller frees). */
static char *hosts_path_of(const struct oci *o, const char *ns)
{
    return xasprintf("%s/%s", o->hosts_dir, ns);
}

/* Rewrite the /etc/hosts of namespace ns: every pod of it, by name. In
 * place (pods hold it bind-mounted), so one write per change however many
 * pods read it. Under o->mu. */
static void hosts_update(struct oci *o, const char *ns)
{
    HASH_SORT(o->pods, by_name);
    struct sbuf sb;
    sbuf_init(&sb, 0);
    sbuf_adds(&sb, "# /etc/hosts of the pods of this namespace, kept current by cueue\n"
                   "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n");
    struct oci_pod *p = NULL, *tmp = NULL;
    HASH_ITER(hh, o->pods, p, tmp) {
        if (!strcmp(p->ns, ns))
            hosts_line(&sb, p);
    }
    char *path = hosts_path_of(o, ns);
    write_file(path, sb.buf);
    xfree(path);
    sbuf_release(&sb);
}

static void pod_free(struct oci_pod *p)
{
    xfree(p->uid);
    xfree(p->ns);
    xfree(p->name);
    xfree(p->hostname);
    xfree(p->subdomain);
    xfree(p);
}

/* Track p (taking it) and refresh its namespace's hosts files. */
static void pod_track(struct oci *o, struct oci_pod *p)
{
    pthread_mutex_lock(&o->mu);
    struct oci_pod *old;
    HASH_FIND_STR(o->pods, p->uid, old);
    if (old) {
        HASH_DEL(o->pods, old);
        pod_free(old);
    }
    HASH_ADD_KEYPTR(hh, o->pods, p->uid, strlen(p->uid), p);
    hosts_update(o, p->ns);
    pthread_mutex_unlock(&o->mu);
}

/* p from the pod.json a start wrote (a restarted server), or NULL. */
static struct oci_pod *pod_load(const char *uid, const char *dir)
{
    char *path = pod_file(dir, "pod.json");
    json_t *v = json_load_file(path, 0, NULL);
    xfree(path);
    const char *ns = JX_STR(v, "namespace"), *name = JX_STR(v, "name");
    const char *host = JX_STR(v, "hostname");
    if (!ns || !name || !host) {
        json_decref(v);
        return NULL;
    }
    struct oci_pod *p = xcalloc(1, sizeof(*p));
    p->uid = xstrdup(uid);
    p->ns = xstrdup(ns);
    p->name = xstrdup(name);
    p->hostname = xstrdup(host);
    p->subdomain = JX_STR(v, "subdomain") ? xstrdup(JX_STR(v, "subdomain")) : NULL;
    p->ip = (uint32_t)JX_INT(v, 0, "ip");
    json_decref(v);
    return p;
}

/* ---- containers ---- */

static const json_t *container_at(const json_t *pod, size_t i)
{
    const json_t *inits = JX_GET(pod, "spec", "initContainers");
    if (i < json_array_size(inits))
        return json_array_get(inits, i);
    return json_array_get(JX_GET(pod, "spec", "containers"), i - json_array_size(inits));
}

/* The GPUs' device nodes and env for a container. */
struct gpu_set {
    struct oci_device dev[64];
    char paths[64][32];
    size_t n;
    char visible[256];
};

static void gpu_devices(const struct oci *o, const int *idx, size_t n, struct gpu_set *g)
{
    g->n = 0;
    g->visible[0] = '\0';
    static const char *const shared[] = {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools",
                                         "nvidia-modeset"};
    for (size_t i = 0; i < n + 4 && g->n < 64; i++) {
        if (i < n)
            snprintf(g->paths[g->n], sizeof(g->paths[0]), "%s/nvidia%d", o->dev_dir, idx[i]);
        else
            snprintf(g->paths[g->n], sizeof(g->paths[0]), "%s/%s", o->dev_dir, shared[i - n]);
        struct stat st;
        if (stat(g->paths[g->n], &st) != 0 || !S_ISCHR(st.st_mode))
            continue;
        g->dev[g->n] = (struct oci_device){g->paths[g->n], major(st.st_rdev), minor(st.st_rdev)};
        g->n++;
    }
    for (size_t i = 0; i < n; i++)
        snprintf(g->visible + strlen(g->visible), sizeof(g->visible) - strlen(g->visible),
                 "%s%d", i ? "," : "", idx[i]);
}

static char **strv_plus(char *const *v, const char *a, const char *b)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    char **out = xcalloc(n + 3, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        out[i] = v[i];
    out[n] = (char *)a;
    out[n + 1] = (char *)b;
    return out;
}

struct pod_ctx {
    const char *uid, *dir, *sandbox, *rootfs, *netns, *hosts;
    bool image;
    const struct exec_pod *pod;
    const struct gpu_set *gpus;
    char *hostname;
};

static void set_error(struct lx_cmd *c, char *msg)
{
    if (c->error)
        xfree(msg);
    else
        c->error = msg;
}

/* Whether a container's working directory on the host root may be bound
 * writable: not the root, nor a system directory or one below it. */
static bool cwd_bindable(const char *cwd)
{
    static const char *const sys[] = {"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32",
                                      "/lib64", "/proc", "/run", "/sbin", "/sys", "/usr",
                                      "/var"};
    if (!cwd || cwd[0] != '/' || !cwd[1])
        return false;
    for (size_t i = 0; i < sizeof(sys) / sizeof(*sys); i++) {
        size_t n = strlen(sys[i]);
        if (!strncmp(cwd, sys[i], n) && (cwd[n] == '\0' || cwd[n] == '/'))
            return false;
    }
    return true;
}

/* The container's bind mounts: /etc/hosts, the sandbox, its working
 * directory (on the host root, when cwd_bindable), the volumes' host
 * directories outside the sandbox (and, in an image root, at their
 * mountPath). Returns how many (at most max). */
static size_t binds_of(const struct pod_ctx *pc, const char *cwd, struct oci_bind *binds,
                       size_t max)
{
    size_t nb = 0, len = strlen(pc->sandbox);
    binds[nb++] = (struct oci_bind){pc->hosts, "/etc/hosts", true};
    binds[nb++] = (struct oci_bind){pc->sandbox, pc->sandbox, false};
    if (!pc->image && cwd_bindable(cwd) && (strncmp(cwd, pc->sandbox, len) ||
                                            (cwd[len] != '\0' && cwd[len] != '/')))
        binds[nb++] = (struct oci_bind){cwd, cwd, false};
    for (size_t k = 0; k < pc->pod->n_mounts && nb + 2 <= max; k++) {
        const struct exec_env *m = &pc->pod->mounts[k];
        if (strncmp(m->value, pc->sandbox, strlen(pc->sandbox)))
            binds[nb++] = (struct oci_bind){m->value, m->value, false};
        if (pc->image)
            binds[nb++] = (struct oci_bind){m->value, m->name, false};
    }
    return nb;
}

/* c becomes the shim running bundle as container id (its argv, a PATH-only
 * env, the reason file); the old argv/envp are freed. */
static void become_shim(const struct oci *o, const struct pod_ctx *pc, struct lx_cmd *c,
                        const char *bundle, const char *id, const char *cgroup)
{
    c->reason_file = xasprintf("%s/reason", bundle);
    const char *shim_argv[] = {o->shim, OCI_SHIM_ARG, o->runtime, o->run_root, bundle, id,
                               c->reason_file, cgroup};
    for (char **s = c->argv; s && *s; s++)
        xfree(*s);
    for (char **s = c->envp; s && *s; s++)
        xfree(*s);
    xfree(c->argv);
    xfree(c->envp);
    c->argv = xcalloc(9, sizeof(char *));
    for (int k = 0; k < 8; k++)
        c->argv[k] = xstrdup(shim_argv[k]);
    c->envp = xcalloc(2, sizeof(char *));
    c->envp[0] = xstrdup(SHIM_PATH);
    if (pc->image) { /* the cwd is inside the image: the shim runs in the sandbox */
        xfree(c->cwd);
        c->cwd = xstrdup(pc->sandbox);
    }
}

/* Write container i's bundle and turn c into the shim's command. */
static void bundle_one(struct oci *o, const struct pod_ctx *pc, struct lx_cmd *c, size_t i)
{
    if (c->error)
        return;
    char *program = NULL, *err = NULL;
    if (!pc->image) { /* what the local executor reports for a missing program */
        program = lx_find_program(c->argv[0], c->envp, c->cwd, &err);
        if (!program) {
            set_error(c, err);
            return;
        }
    }
    struct oci_bind binds[66];
    struct oci_ctr_cfg cfg = {.cwd = c->cwd, .rootfs = pc->rootfs, .rootfs_readonly = !pc->image,
                              .hostname = pc->hostname, .netns_path = pc->netns,
                              .binds = binds, .n_binds = binds_of(pc, c->cwd, binds, 66),
                              .devices = pc->gpus->dev, .n_devices = pc->gpus->n};
    if (c->user.set) { /* the runtime changes users inside; the shim stays root */
        cfg.uid = c->user.uid;
        cfg.gid = c->user.gid;
        cfg.groups = c->user.groups;
        cfg.n_groups = c->user.n_groups;
        c->user.set = false;
    }
    char *argv0 = c->argv[0];
    if (program)
        c->argv[0] = program;
    cfg.argv = c->argv;
    char **env = NULL, *nv = NULL, *cuda = NULL;
    if (pc->gpus->visible[0]) {
        nv = xasprintf("NVIDIA_VISIBLE_DEVICES=%s", pc->gpus->visible);
        cuda = xasprintf("CUDA_VISIBLE_DEVICES=%s", pc->gpus->visible);
        env = strv_plus(c->envp, nv, cuda);
    }
    cfg.envp = env ? env : c->envp;
    const json_t *ctr = container_at(pc->pod->pod, i);
    oci_limits_of(ctr, &cfg.memory_limit_bytes, &cfg.cpu_limit_milli, &cfg.cpu_request_milli);
    if (cfg.memory_limit_bytes > 0 && cfg.memory_limit_bytes < OCI_MIN_MEMORY_BYTES)
        set_error(c, xasprintf("%s[%s].resources.limits.memory: Invalid value: \"%s\": must be "
                               "at least 6Mi, what the container runtime needs to start a "
                               "container", i < json_array_size(JX_GET(pc->pod->pod, "spec",
                                                                       "initContainers"))
                                                ? "spec.initContainers" : "spec.containers",
                               c->name, jx_or_empty(JX_STR(ctr, "resources", "limits",
                                                           "memory"))));
    char *id = xasprintf("%s-%zu", pc->uid, i);
    char *cgroup = xasprintf("/" OCI_CGROUP_PARENT "/%s", id);
    cfg.cgroups_path = cgroup;
    char *bundle = xasprintf("%s/oci/%zu", pc->dir, i);
    mkdir(bundle, 0755);
    char *config = xasprintf("%s/config.json", bundle);
    json_t *v = oci_config_new(&cfg);
    if (json_dump_file(v, config, JSON_COMPACT) != 0)
        set_error(c, xasprintf("cannot write the OCI bundle %s: %s", config, strerror(errno)));
    json_decref(v);
    xfree(env);
    xfree(nv);
    xfree(cuda);
    c->argv[0] = argv0;
    xfree(program);
    become_shim(o, pc, c, bundle, id, cgroup);
    xfree(config);
    xfree(bundle);
    xfree(cgroup);
    xfree(id);
}

/* ---- the hooks ---- */

static void fail_all(struct lx_cmd *cmds, size_t n, const char *msg)
{
    for (size_t i = 0; i < n; i++)
        set_error(&cmds[i], xstrdup(msg));
}

/* The pod's image root file system (annotation), NULL = the host's. A
 * bad one fails the pod. */
static const char *image_rootfs(const struct exec_pod *pod, char *err, size_t errlen)
{
    const char *r = JX_STR(pod->pod, "metadata", "annotations", OCI_ROOTFS_ANNOTATION);
    if (!r)
        return NULL;
    struct stat st;
    if (r[0] != '/' || stat(r, &st) != 0 || !S_ISDIR(st.st_mode))
        snprintf(err, errlen,
                 "metadata.annotations[%s]: Invalid value: \"%s\": must be the absolute path "
                 "of a directory holding a root file system",
                 OCI_ROOTFS_ANNOTATION, r);
    return r;
}

static void oci_prepare(void *ctx, const char *uid, const char *dir,
                        const struct exec_pod *pod, struct lx_cmd *cmds, size_t n)
{
    struct oci *o = ctx;
    char err[512] = "";
    char *odir = xasprintf("%s/oci", dir);
    mkdir(odir, 0755);
    xfree(odir);
    const char *rootfs = image_rootfs(pod, err, sizeof(err));
    int64_t want_gpus = oci_gpus_of(pod->pod);
    int gpus[64];
    size_t n_have = 0;
    int *have = want_gpus > 0 ? oci_gpu_discover(o->dev_dir, &n_have) : NULL;
    if (!err[0] && want_gpus > 64)
        snprintf(err, sizeof(err), "nvidia.com/gpu: %lld is more than a node can give",
                 (long long)want_gpus);
    bool gpus_taken = !err[0] && want_gpus > 0 &&
                      oci_gpu_take(OCI_GPU_DIR, have, n_have, (int)want_gpus, uid, gpus, err,
                                   sizeof(err)) == 0;
    xfree(have);
    struct oci_pod *p = xcalloc(1, sizeof(*p));
    p->uid = xstrdup(uid);
    p->ns = xstrdup(pod->ns ? pod->ns : "default");
    p->name = xstrdup(pod->name ? pod->name : uid);
    const char *h = env_value(pod, "HOSTNAME");
    p->hostname = h && h[0] ? xstrdup(h) : xstrndup(p->name, 63);
    const char *sub = JX_STR(pod->pod, "spec", "subdomain");
    p->subdomain = sub && sub[0] ? xstrdup(sub) : NULL;
    char *netns = xasprintf(OCI_RUN_DIR "/netns/%s", uid);
    char host_if[16];
    oci_net_host_if(uid, host_if);
    if (!err[0] && oci_ip_take(OCI_IP_DIR, OCI_NET_BASE, OCI_NET_PREFIX, uid, &p->ip) != 0)
        snprintf(err, sizeof(err), "no pod IP left in the pod network");
    else if (!err[0] && oci_net_pod_up(netns, host_if, p->ip, err, sizeof(err)) != 0)
        oci_ip_release(OCI_IP_DIR, p->ip, uid);
    if (err[0]) {
        if (gpus_taken)
            oci_gpu_release(OCI_GPU_DIR, uid);
        fail_all(cmds, n, err);
        pod_free(p);
        xfree(netns);
        return;
    }
    json_t *gj = json_array();
    for (int64_t i = 0; gpus_taken && i < want_gpus; i++)
        json_array_append_new(gj, json_integer(gpus[i]));
    json_t *rec = json_pack("{s:s, s:s, s:s, s:s?, s:I, s:o}", "namespace", p->ns, "name",
                            p->name, "hostname", p->hostname, "subdomain", p->subdomain, "ip",
                            (json_int_t)p->ip, "gpus", gj);
    char *rec_path = pod_file(dir, "pod.json");
    json_dump_file(rec, rec_path, JSON_COMPACT);
    xfree(rec_path);
    json_decref(rec);
    char *hosts = hosts_path_of(o, p->ns);
    struct gpu_set gs;
    gpu_devices(o, gpus, gpus_taken ? (size_t)want_gpus : 0, &gs);
    struct pod_ctx pc = {.uid = uid, .dir = dir, .sandbox = pod->sandbox_dir ? pod->sandbox_dir : dir,
                         .rootfs = rootfs ? rootfs : OCI_ROOTFS, .image = rootfs != NULL,
                         .netns = netns, .hosts = hosts, .pod = pod, .gpus = &gs,
                         .hostname = p->hostname};
    for (size_t i = 0; i < n; i++)
        bundle_one(o, &pc, &cmds[i], i);
    pod_track(o, p); /* writes the hosts file before any container starts */
    xfree(hosts);
    xfree(netns);
}

/* Remove what prepare made for the pod in dir (idempotent). */
static void oci_done(void *ctx, const char *uid, const char *dir)
{
    struct oci *o = ctx;
    char *odir = xasprintf("%s/oci", dir);
    DIR *d = opendir(odir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        char *id = xasprintf("%s-%s", uid, de->d_name);
        char *state = xasprintf("%s/%s", o->run_root, id);
        struct stat st;
        if (stat(state, &st) == 0) /* a shim that was killed left it */
            runtime_run(o, "delete", "--force", id);
        xfree(state);
        xfree(id);
    }
    if (d)
        closedir(d);
    xfree(odir);
    char *netns = xasprintf(OCI_RUN_DIR "/netns/%s", uid);
    char host_if[16];
    oci_net_host_if(uid, host_if);
    oci_net_pod_down(netns, host_if);
    xfree(netns);
    oci_gpu_release(OCI_GPU_DIR, uid);
    pthread_mutex_lock(&o->mu);
    struct oci_pod *p;
    HASH_FIND_STR(o->pods, uid, p);
    if (!p)
        p = pod_load(uid, dir);
    else
        HASH_DEL(o->pods, p);
    if (p) {
        oci_ip_release(OCI_IP_DIR, p->ip, uid);
        hosts_update(o, p->ns);
        pod_free(p);
    }
    pthread_mutex_unlock(&o->mu);
}

static void oci_adopted(void *ctx, const char *uid, const char *dir)
{
    struct oci_pod *p = pod_load(uid, dir);
    if (p)
        pod_track(ctx, p);
}

static char *oci_pod_ip(void *ctx, const char *uid)
{
    struct oci *o = ctx;
    char buf[16], *out = NULL;
    pthread_mutex_lock(&o->mu);
    struct oci_pod *p;
    HASH_FIND_STR(o->pods, uid, p);
    if (p) {
        oci_ip_format(p->ip, buf);
        out = xstrdup(buf);
    }
    pthread_mutex_unlock(&o->mu);
    return out;
}

static void oci_free(void *ctx)
{
    struct oci *o = ctx;
    struct oci_pod *p = NULL, *tmp = NULL;
    HASH_ITER(hh, o->pods, p, tmp) {
        HASH_DEL(o->pods, p);
        pod_free(p);
    }
    pthread_mutex_destroy(&o->mu);
    xfree(o->runtime);
    xfree(o->run_root);
    xfree(o->shim);
    xfree(o->dev_dir);
    xfree(o->hosts_dir);
    xfree(o);
}

/* ---- start-up ---- */

/* The runtime: name (a path, or looked up in PATH), NULL = runc, else
 * crun. Caller frees. */
static char *find_runtime(const char *name)
{
    const char *cands[] = {name, name ? NULL : "runc", name ? NULL : "crun"};
    for (size_t i = 0; i < 3; i++) {
        if (!cands[i])
            continue;
        char *err = NULL;
        char *path = lx_find_program(cands[i], (char *[]){SHIM_PATH, NULL}, "/", &err);
        xfree(err);
        if (path)
            return path;
    }
    return NULL;
}

/* Can this process make the namespaces a pod needs? A child tries; when
 * it cannot, errno is the child's reason (or fork's, waitpid's). */
static bool can_unshare(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS | CLONE_NEWIPC |
                      CLONE_NEWNET) == 0 ? 0 : (errno & 0xff ? errno & 0xff : EPERM));
    int wst = 0;
    if (pid < 0 || waitpid(pid, &wst, 0) != pid)
        return false;
    if (WIFEXITED(wst) && WEXITSTATUS(wst) == 0)
        return true;
    errno = WIFEXITED(wst) ? WEXITSTATUS(wst) : ECHILD;
    return false;
}

/* A cgroup hierarchy cueue may write: v2 at /sys/fs/cgroup, or v1's
 * memory controller (the hybrid layout). */
static bool cgroup_usable(void)
{
    const char *dirs[] = {"/sys/fs/cgroup/memory/" OCI_CGROUP_PARENT,
                          "/sys/fs/cgroup/" OCI_CGROUP_PARENT};
    struct stat st;
    bool v2 = stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0;
    const char *d = v2 ? dirs[1] : dirs[0];
    if (!v2 && stat("/sys/fs/cgroup/memory", &st) != 0)
        return false;
    return (mkdir(d, 0755) == 0 || errno == EEXIST) && access(d, W_OK) == 0;
}

/* The read-only view of the host's root the pods share: a recursive bind
 * of / at OCI_ROOTFS, private, read-only all the way down; made once per
 * machine boot (a bind of / has /'s inode). */
static int shared_rootfs(char *err, size_t errlen)
{
    struct stat root, here;
    mkdir(OCI_RUN_DIR, 0755);
    mkdir(OCI_ROOTFS, 0755);
    if (stat("/", &root) == 0 && stat(OCI_ROOTFS, &here) == 0 && root.st_dev == here.st_dev &&
        root.st_ino == here.st_ino)
        return 0;
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
    if (mount("/", OCI_ROOTFS, NULL, MS_BIND | MS_REC, NULL) != 0 ||
        mount(NULL, OCI_ROOTFS, NULL, MS_PRIVATE | MS_REC, NULL) != 0) {
        snprintf(err, errlen, "cannot bind the host's root at %s: %s", OCI_ROOTFS,
                 strerror(errno));
        return CU_EIO;
    }
    if (mount_setattr(AT_FDCWD, OCI_ROOTFS, AT_RECURSIVE, &attr, sizeof(attr)) != 0)
        log_warn("exec", "%s: cannot make every mount read-only (%s); the root itself is",
                 OCI_ROOTFS, strerror(errno));
    return 0;
}

int oci_probe(const char *runtime, char **runtime_path, char *err, size_t errlen)
{
    *runtime_path = NULL;
    if (geteuid() != 0) {
        snprintf(err, errlen, "not root: cannot create namespaces and cgroups");
        return CU_EUNSUPPORTED;
    }
    char *rt = find_runtime(runtime);
    if (!rt) {
        snprintf(err, errlen, "no OCI runtime (%s) found in PATH (scripts/install-deps.sh "
                 "installs runc)", runtime ? runtime : "runc or crun");
        return CU_EUNSUPPORTED;
    }
    int rc = CU_EUNSUPPORTED;
    if (!can_unshare())
        snprintf(err, errlen, "cannot create namespaces (unshare: %s)", strerror(errno));
    else if (!cgroup_usable())
        snprintf(err, errlen, "no writable cgroup hierarchy under /sys/fs/cgroup");
    else if (oci_net_bridge(err, errlen) == 0 && shared_rootfs(err, errlen) == 0)
        rc = 0;
    if (rc == 0)
        *runtime_path = rt;
    else
        xfree(rt);
    return rc;
}

struct exec *exec_oci_new(const char *state_dir, const char *runtime, char *err, size_t errlen)
{
    char *rt;
    if (oci_probe(runtime, &rt, err, errlen) != 0)
        return NULL;
    char perr[512];
    char *shim = lx_sup_program(NULL, perr, sizeof(perr));
    if (!shim) {
        snprintf(err, errlen, "%s", perr);
        xfree(rt);
        return NULL;
    }
    struct oci *o = xcalloc(1, sizeof(*o));
    o->runtime = rt;
    o->shim = shim;
    o->run_root = xasprintf(OCI_RUN_DIR "/runtime");
    o->dev_dir = xstrdup("/dev");
    o->hosts_dir = xasprintf("%s/oci-hosts", state_dir ? state_dir : ".");
    mkdir(o->hosts_dir, 0755);
    pthread_mutex_init(&o->mu, NULL);
    struct lx_hooks hooks = {.ctx = o, .prepare = oci_prepare, .done = oci_done,
                             .adopted = oci_adopted, .pod_ip = oci_pod_ip, .free = oci_free};
    struct exec *x = lx_new(state_dir, &hooks);
    if (!x) {
        oci_free(o);
        snprintf(err, errlen, "cannot start the executor");
    }
    return x;
}
