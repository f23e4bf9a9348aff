/*
 * exec/stage: a pod's sandbox and volumes on this machine's file system,
 * the default of the executor seam's stage op (exec.h): the kubelet's
 * volume manager for processes without containers. Executors whose pods
 * run elsewhere (Slurm) stage where their tasks can read, through their
 * own op. Invariant: nothing is written outside the sandbox except a
 * hostPath volume's own directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/names.h"
#include "exec/exec.h"
#include "util/err.h"
#include "util/xalloc.h"

int exec_mkdir_p(const char *path)
{
    /* the leaf first: its parents usually exist (one call) */
    if (mkdir(path, 0755) == 0 || errno == EEXIST)
        return 0;
    if (errno != ENOENT)
        return CU_EIO;
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

bool exec_is_safe_relpath(const char *p)
{
    return p && p[0] && p[0] != '/' && !api_path_has_dotdot(p);
}

static int write_file(const char *dir, const struct exec_file *f, char *err, size_t errlen)
{
    char *path = xasprintf("%s/%s", dir, f->path);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    int rc = exec_mkdir_p(path);
    *slash = '/';
    /* never through a symlink standing in the file's place */
    int fd = rc == 0 ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, f->mode)
                     : -1;
    if (fd < 0 || (f->len && write(fd, f->data, f->len) != (ssize_t)f->len))
        rc = CU_EIO;
    if (rc != 0)
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    xfree(path);
    return rc;
}

static int stage_one(const char *sandbox, const struct exec_volume *v, char *err, size_t errlen)
{
    if (!exec_is_safe_relpath(v->name) || strchr(v->name, '/')) {
        snprintf(err, errlen, "volume %s: invalid name", v->name ? v->name : "");
        return CU_EINVAL;
    }
    char *dir = v->host_path ? xstrdup(v->host_path) : exec_volume_dir(sandbox, v->name);
    int rc = exec_mkdir_p(dir);
    if (rc != 0)
        snprintf(err, errlen, "volume %s: cannot create %s: %s", v->name, dir, strerror(errno));
    for (size_t i = 0; rc == 0 && i < v->n_files; i++) {
        if (!exec_is_safe_relpath(v->files[i].path)) {
            snprintf(err, errlen, "volume %s: file path %s is not relative", v->name,
                     v->files[i].path ? v->files[i].path : "");
            rc = CU_EINVAL;
        } else {
            rc = write_file(dir, &v->files[i], err, errlen);
        }
    }
    xfree(dir);
    return rc;
}

int exec_stage_fs(const char *sandbox, const struct exec_volume *vols, size_t n, char *err,
                  size_t errlen)
{
    if (!sandbox)
        return 0;
    if (exec_mkdir_p(sandbox) != 0) {
        snprintf(err, errlen, "cannot create the pod sandbox %s", sandbox);
        return CU_EIO;
    }
    for (size_t i = 0; i < n; i++) {
        int rc = stage_one(sandbox, &vols[i], err, errlen);
        if (rc != 0)
            return rc;
    }
    return 0;
}
