/* koord manager: see manager.h. */
#include "manager/manager.h"

const char *manager_version(void)
{
    return KOORD_VERSION;
}
