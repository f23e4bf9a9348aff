/* gc: reconciler (not yet implemented; registered by ctrl_new). */
#include "ctrl/ctrl-int.h"

void ctrl__gc_register(struct ctrl *c)
{
    (void)c;
}
