/*
 * nodes/volumes: what the node agent puts in a pod's sandbox before its
 * processes start (the kubelet's volume manager, for processes without
 * containers): <state_dir>/pods/<uid>/volumes/<name>/ for each configMap
 * (one file per key, or per `items` entry with its path and mode) and
 * emptyDir volume; hostPath volumes are the host path itself. Each
 * container's volumeMounts then become mountPath -> host directory rewrites
 * for the executor.
 *
 * This is the node agent's only file I/O; in `cueue sim` (no state
 * directory) nothing is written and no rewrites are made.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/meta.h"
#include "ctrl/nodes/nodes.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

int nodes_mkdir_p(const char *path)
{
    char *p = xstrdup(path);
    int rc = 0;
    for (char *s = p + 1; *s && rc == 0; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST)
            rc = CU_EIO;
        *s = '/';
    }
    if (rc == 0 && mkdir(p, 0755) != 0 && errno != EEXIST)
        rc = CU_EIO;
    xfree(p);
    return rc;
}

static bool safe_relpath(const char *p)
{
    if (!p || !p[0] || p[0] == '/')
        return false;
    for (const char *s = p; *s; s = strchr(s, '/') ? strchr(s, '/') + 1 : s + strlen(s))
        if (!strncmp(s, "..", 2) && (s[2] == '/' || s[2] == '\0'))
            return false;
    return true;
}

static int write_file(const char *dir, const char *rel, const void *data, size_t len, int mode)
{
    char *path = xasprintf("%s/%s", dir, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    int rc = nodes_mkdir_p(path);
    *slash = '/';
    /* never through a symlink standing in the file's place */
    int fd = rc == 0 ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
                     : -1;
    if (fd < 0 || (len && write(fd, data, len) != (ssize_t)len))
        rc = CU_EIO;
    if (fd >= 0)
        close(fd);
    xfree(path);
    return rc;
}

/* A configMap key's bytes (data, or base64 binaryData). Caller frees. */
static unsigned char *cm_value(const json_t *cm, const char *key, size_t *len)
{
    const char *s = JX_STR(cm, "data", key);
    if (s) {
        *len = strlen(s);
        return (unsigned char *)xstrdup(s);
    }
    const char *b64 = JX_STR(cm, "binaryData", key);
    if (!b64)
        return NULL;
    size_t n = strlen(b64);
    unsigned char *out = xmalloc(n / 4 * 3 + 4);
    int got = EVP_DecodeBlock(out, (const unsigned char *)b64, (int)n);
    if (got < 0) {
        xfree(out);
        return NULL;
    }
    size_t pad = (n >= 1 && b64[n - 1] == '=') + (n >= 2 && b64[n - 2] == '=');
    *len = (size_t)got - pad;
    return out;
}

static int write_key(const char *dir, const json_t *cm, const char *key, const char *rel,
                     int mode, char *msg, size_t msglen)
{
    size_t len = 0;
    unsigned char *v = cm_value(cm, key, &len);
    if (!v) {
        snprintf(msg, msglen, "configmap references non-existent config key: %s", key);
        return CU_EINVAL;
    }
    int rc = write_file(dir, rel, v, len, mode);
    xfree(v);
    if (rc != 0)
        snprintf(msg, msglen, "cannot write %s/%s: %s", dir, rel, strerror(errno));
    return rc;
}

static int configmap_volume(struct ctrl *c, const char *ns, const json_t *vol, const char *dir,
                            char *msg, size_t msglen)
{
    const char *vname = JX_STR(vol, "name"), *cmname = JX_STR(vol, "configMap", "name");
    json_t *cm = store_get(ctrl_store(c), KIND_CONFIGMAP, ns, jx_or_empty(cmname));
    if (!cm) {
        if (JX_BOOL(vol, false, "configMap", "optional"))
            return nodes_mkdir_p(dir);
        snprintf(msg, msglen, "MountVolume.SetUp failed for volume \"%s\" : configmap \"%s\" "
                 "not found", jx_or_empty(vname), jx_or_empty(cmname));
        return CU_ENOTFOUND;
    }
    int rc = nodes_mkdir_p(dir);
    int dmode = (int)JX_INT(vol, 0644, "configMap", "defaultMode");
    const json_t *items = JX_GET(vol, "configMap", "items");
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it) {
        const char *key = JX_STR(it, "key"), *path = JX_STR(it, "path");
        if (rc == 0 && (!key || !safe_relpath(path))) {
            snprintf(msg, msglen, "volume %s: items[%zu] needs a key and a relative path",
                     jx_or_empty(vname), i);
            rc = CU_EINVAL;
        }
        if (rc == 0)
            rc = write_key(dir, cm, key, path, (int)JX_INT(it, dmode, "mode"), msg, msglen);
    }
    const char *const maps[] = {"data", "binaryData"};
    for (int m = 0; m < 2 && !json_array_size(items); m++) {
        const char *key;
        json_t *v;
        json_object_foreach(JX_GET(cm, maps[m]), key, v) {
            if (rc == 0 && safe_relpath(key))
                rc = write_key(dir, cm, key, key, dmode, msg, msglen);
        }
    }
    json_decref(cm);
    return rc;
}

static char *volume_dir(const char *sandbox, const json_t *vol)
{
    const char *host = JX_STR(vol, "hostPath", "path");
    return host ? xstrdup(host) : xasprintf("%s/volumes/%s", sandbox, JX_STR(vol, "name"));
}

int nodes_volumes_prepare(struct ctrl *c, const json_t *pod, const char *sandbox, char *msg,
                          size_t msglen)
{
    const json_t *vols = JX_GET(pod, "spec", "volumes");
    size_t i;
    json_t *vol;
    json_array_foreach(vols, i, vol) {
        const char *name = JX_STR(vol, "name");
        if (!name || !safe_relpath(name)) {
            snprintf(msg, msglen, "spec.volumes[%zu]: invalid name", i);
            return CU_EINVAL;
        }
        char *dir = volume_dir(sandbox, vol);
        int rc = 0;
        if (JX_GET(vol, "configMap"))
            rc = configmap_volume(c, api_namespace(pod), vol, dir, msg, msglen);
        else if (JX_GET(vol, "emptyDir") || JX_GET(vol, "hostPath"))
            rc = nodes_mkdir_p(dir);
        else {
            snprintf(msg, msglen, "volume %s: only configMap, emptyDir and hostPath volumes are "
                     "supported by cueue (pods run as local processes)", name);
            rc = CU_EINVAL;
        }
        if (rc == CU_EIO)
            snprintf(msg, msglen, "volume %s: cannot create %s: %s", name, dir, strerror(errno));
        xfree(dir);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static void add_mount(struct exec_env **arr, size_t *n, const char *path, char *host)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*arr)[i].name, path)) {
            xfree(host); /* first container's mount wins */
            return;
        }
    *arr = xreallocarray(*arr, *n + 1, sizeof(**arr));
    (*arr)[*n].name = xstrdup(path);
    (*arr)[*n].value = host;
    (*n)++;
}

void nodes_volume_mounts(const json_t *pod, const char *sandbox, struct exec_env **out, size_t *n)
{
    const json_t *vols = JX_GET(pod, "spec", "volumes");
    const char *const lists[] = {"initContainers", "containers"};
    for (int l = 0; l < 2; l++) {
        size_t i, j;
        json_t *ctr, *m;
        json_array_foreach(JX_GET(pod, "spec", lists[l]), i, ctr) {
            json_array_foreach(JX_GET(ctr, "volumeMounts"), j, m) {
                const char *vname = JX_STR(m, "name"), *path = JX_STR(m, "mountPath");
                size_t k;
                json_t *vol, *found = NULL;
                json_array_foreach(vols, k, vol) {
                    if (vname && !strcmp(jx_or_empty(JX_STR(vol, "name")), vname))
                        found = vol;
                }
                if (!found || !path)
                    continue;
                char *dir = volume_dir(sandbox, found);
                const char *sub = JX_STR(m, "subPath");
                char *host = sub && safe_relpath(sub) ? xasprintf("%s/%s", dir, sub)
                                                      : xstrdup(dir);
                xfree(dir);
                add_mount(out, n, path, host);
            }
        }
    }
}
