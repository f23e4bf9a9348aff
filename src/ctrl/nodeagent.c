/* nodeagent: reconciler (not yet implemented; registered by ctrl_new). */
#include "ctrl/ctrl-int.h"

void ctrl__nodeagent_register(struct ctrl *c)
{
    (void)c;
}
