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
    }
    XFREE(r->items);
    r->n = r->cap = 0;
}
