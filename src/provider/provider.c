/* provider: shared helpers of the capacity-provider seam (see provider.h). */
#include "provider/provider.h"

#include "util/xalloc.h"

void prov_events_release(struct prov_events *ev)
{
    for (size_t i = 0; i < ev->n; i++) {
        xfree(ev->items[i].pool);
        xfree(ev->items[i].reason);
        xfree(ev->items[i].message);
    }
    XFREE(ev->items);
    ev->n = ev->cap = 0;
}
