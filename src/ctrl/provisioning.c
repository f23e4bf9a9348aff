/* provisioning: reconciler (not yet implemented; registered by ctrl_new). */
#include "ctrl/ctrl-int.h"

void ctrl__provisioning_register(struct ctrl *c)
{
    (void)c;
}
