/* nodepool: reconciler (not yet implemented; registered by ctrl_new). */
#include "ctrl/ctrl-int.h"

void ctrl__nodepool_register(struct ctrl *c)
{
    (void)c;
}
