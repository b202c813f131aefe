/* err_str() for errno and koord's own codes; and the CHECK() failure path. */
#include "base/errors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

const char *err_str(int r)
{
    if (r < 0)
        r = -r;
    switch (r) {
#define KOORD_ERRNO_CASE(name, val, msg)                                                           \
    case val:                                                                                      \
        return msg;
        KOORD_ERRNO_MAP(KOORD_ERRNO_CASE)
#undef KOORD_ERRNO_CASE
    default:
        return strerror(r);
    }
}

void check_failed(const char *expr, const char *file, int line)
{
    (void)fprintf(stderr, "fatal: check failed: %s at %s:%d\n", expr, file, line);
    abort();
}
