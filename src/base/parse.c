/* Whole-string number parsing; the banned atoi() family silently accepts garbage. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "base/base.h"

int parse_i64(const char *s, int64_t *ret)
{
    char *end;
    long long v;

    /* strto*() skip every isspace() byte, which a whole-string parse must refuse. */
    if (!s || !*s || isspace((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno == ERANGE)
        return -ERANGE;
    if (errno || *end)
        return -EINVAL;
    *ret = v;
    return 0;
}

int parse_u32(const char *s, uint32_t *ret)
{
    int64_t v;
    int r;

    if (s && *s == '-')
        return -EINVAL;
    r = parse_i64(s, &v);
    if (r < 0)
        return r;
    if (v < 0 || v > UINT32_MAX)
        return -ERANGE;
    *ret = (uint32_t)v;
    return 0;
}

int parse_double(const char *s, double *ret)
{
    char *end;
    double v;

    /* strto*() skip every isspace() byte, which a whole-string parse must refuse. */
    if (!s || !*s || isspace((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    v = strtod(s, &end);
    if (*end)
        return -EINVAL;
    if (errno == ERANGE || !isfinite(v))
        return -ERANGE;
    *ret = v;
    return 0;
}
