/*
 * nodes/volumes: what the node agent hands the executor to stage in a
 * pod's sandbox before its processes start (the kubelet's volume manager):
 * for each configMap volume one file per key, or per `items` entry with its
 * path and mode; emptyDir volumes empty; hostPath volumes the host path
 * itself. The executor writes them (exec_stage: on this machine for the
 * local executor, where the tasks read for Slurm) under
 * exec_volume_dir(sandbox, name). Each container's volumeMounts then become
 * mountPath -> directory rewrites for the executor.
 *
 * The node agent does no file I/O itself; in `cueue sim` (no sandbox)
 * nothing is staged and no rewrites are made.
 */
#include <stdio.h>
#include <string.h>

#include "api/meta.h"
#include "exec/exec.h"
#include "ctrl/nodes/nodes.h"
#include "util/base64.h"
#include "util/err.h"
#include "util/jsonx.h"
#include "util/xalloc.h"

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
    return cu_base64_decode(b64, strlen(b64), len);
}

/* The files of one volume being built (owned). */
struct vol_files {
    struct exec_file *files;
    size_t n;
};

static void files_release(struct vol_files *f)
{
    for (size_t i = 0; i < f->n; i++) {
        xfree((char *)f->files[i].path);
        xfree((unsigned char *)f->files[i].data);
    }
    xfree(f->files);
    memset(f, 0, sizeof(*f));
}

static int add_key(struct vol_files *f, const json_t *cm, const char *key, const char *rel,
                   int mode, char *msg, size_t msglen)
{
    size_t len = 0;
    unsigned char *v = cm_value(cm, key, &len);
    if (!v) {
        snprintf(msg, msglen, "configmap references non-existent config key: %s", key);
        return CU_EINVAL;
    }
    f->files = xreallocarray(f->files, f->n + 1, sizeof(*f->files));
    f->files[f->n++] = (struct exec_file){xstrdup(rel), v, len, mode};
    return 0;
}

static int configmap_files(struct ctrl *c, const char *ns, const json_t *vol,
                           struct vol_files *f, char *msg, size_t msglen)
{
    const char *vname = JX_STR(vol, "name"), *cmname = JX_STR(vol, "configMap", "name");
    json_t *cm = store_get(ctrl_store(c), KIND_CONFIGMAP, ns, jx_or_empty(cmname));
    if (!cm) {
        if (JX_BOOL(vol, false, "configMap", "optional"))
            return 0;
        snprintf(msg, msglen, "MountVolume.SetUp failed for volume \"%s\" : configmap \"%s\" "
                 "not found", jx_or_empty(vname), jx_or_empty(cmname));
        return CU_ENOTFOUND;
    }
    int rc = 0;
    int dmode = (int)JX_INT(vol, 0644, "configMap", "defaultMode");
    const json_t *items = JX_GET(vol, "configMap", "items");
    size_t i;
    json_t *it;
    json_array_foreach(items, i, it) {
        const char *key = JX_STR(it, "key"), *path = JX_STR(it, "path");
        if (rc == 0 && (!key || !exec_is_safe_relpath(path))) {
            snprintf(msg, msglen, "volume %s: items[%zu] needs a key and a relative path",
                     jx_or_empty(vname), i);
            rc = CU_EINVAL;
        }
        if (rc == 0)
            rc = add_key(f, cm, key, path, (int)JX_INT(it, dmode, "mode"), msg, msglen);
    }
    const char *const maps[] = {"data", "binaryData"};
    for (int m = 0; m < 2 && !json_array_size(items); m++) {
        const char *key;
        json_t *v;
        json_object_foreach(JX_GET(cm, maps[m]), key, v) {
            if (rc == 0 && exec_is_safe_relpath(key))
                rc = add_key(f, cm, key, key, dmode, msg, msglen);
        }
    }
    json_decref(cm);
    return rc;
}

static char *volume_dir(const char *sandbox, const json_t *vol)
{
    const char *host = JX_STR(vol, "hostPath", "path");
    return host ? xstrdup(host) : exec_volume_dir(sandbox, JX_STR(vol, "name"));
}

/* The volumes of pod as the executor stages them, in spec order; fills
 * vols[0..n) and files[0..n) (owned by the caller: files_release). */
static int collect_volumes(struct ctrl *c, const json_t *pod, struct exec_volume *vols,
                           struct vol_files *files, char *msg, size_t msglen)
{
    size_t i;
    json_t *vol;
    json_array_foreach(JX_GET(pod, "spec", "volumes"), i, vol) {
        const char *name = JX_STR(vol, "name");
        if (!name || !exec_is_safe_relpath(name)) {
            snprintf(msg, msglen, "spec.volumes[%zu]: invalid name", i);
            return CU_EINVAL;
        }
        vols[i] = (struct exec_volume){name, JX_STR(vol, "hostPath", "path"), NULL, 0};
        int rc = 0;
        if (JX_GET(vol, "configMap"))
            rc = configmap_files(c, api_namespace(pod), vol, &files[i], msg, msglen);
        else if (!JX_GET(vol, "emptyDir") && !JX_GET(vol, "hostPath")) {
            snprintf(msg, msglen, "volume %s: only configMap, emptyDir and hostPath volumes are "
                     "supported by cueue (pods run without containers)", name);
            rc = CU_EINVAL;
        }
        vols[i].files = files[i].files;
        vols[i].n_files = files[i].n;
        if (rc != 0)
            return rc;
    }
    return 0;
}

int nodes_volumes_prepare(struct ctrl *c, const json_t *pod, const char *sandbox, char *msg,
                          size_t msglen)
{
    size_t n = json_array_size(JX_GET(pod, "spec", "volumes"));
    struct exec_volume *vols = xcalloc(n + 1, sizeof(*vols));
    struct vol_files *files = xcalloc(n + 1, sizeof(*files));
    int rc = collect_volumes(c, pod, vols, files, msg, msglen);
    if (rc == 0)
        rc = exec_stage(ctrl_exec(c), api_uid(pod), sandbox, vols, n, msg, msglen);
    for (size_t i = 0; i < n; i++)
        files_release(&files[i]);
    xfree(files);
    xfree(vols);
    return rc;
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
                char *host = sub && exec_is_safe_relpath(sub) ? xasprintf("%s/%s", dir, sub)
                                                      : xstrdup(dir);
                xfree(dir);
                add_mount(out, n, path, host);
            }
        }
    }
}
