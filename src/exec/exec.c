/* exec: shared helpers of the executor seam (see exec.h). */
#include "exec/exec.h"

#include "util/xalloc.h"

void exec_reports_release(struct exec_reports *r)
{
    for (size_t i = 0; i < r->n; i++) {
        xfree(r->items[i].uid);
        xfree(r->items[i].reason);
        xfree(r->items[i].message);
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
