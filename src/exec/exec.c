/* exec: shared helpers of the executor seam (see exec.h). */
#include "exec/exec.h"

#include "util/xalloc.h"

void exec_reports_release(struct exec_reports *r)
{
    for (size_t i = 0; i < r->n; i++) {
        xfree(r->items[i].uid);
        xfree(r->items[i].reason);
        xfree(r->items[i].message);
        xfree(r->items[i].host_ip);
        json_decref(r->items[i].metrics);
        for (size_t j = 0; j < r->items[i].n_containers; j++) {
            xfree(r->items[i].containers[j].name);
            xfree(r->items[i].containers[j].reason);
            xfree(r->items[i].containers[j].message);
        }
        xfree(r->items[i].containers);
    }
    XFREE(r->items);
    r->n = r->cap = 0;
}

char *exec_log_path(const char *state_dir, const char *pod_uid, const char *container)
{
    return xasprintf("%s/pods/%s/%s.log", state_dir ? state_dir : ".", pod_uid, container);
}

char *exec_sandbox_dir(struct exec *x, const char *state_dir, const char *uid)
{
    if (x && x->stage_ops && x->stage_ops->sandbox_dir)
        return x->stage_ops->sandbox_dir(x, uid);
    return state_dir ? xasprintf("%s/pods/%s", state_dir, uid) : NULL;
}

char *exec_volume_dir(const char *sandbox, const char *name)
{
    return xasprintf("%s/volumes/%s", sandbox, name);
}

int exec_stage(struct exec *x, const char *uid, const char *sandbox,
               const struct exec_volume *vols, size_t n, char *err, size_t errlen)
{
    if (x && x->stage_ops && x->stage_ops->stage)
        return x->stage_ops->stage(x, uid, sandbox, vols, n, err, errlen);
    return exec_stage_fs(sandbox, vols, n, err, errlen);
}
