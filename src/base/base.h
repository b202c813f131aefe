/*
 * base: the libc-only foundation every other module stands on. Including this header gives the
 * allocator, error codes, the CHECK macro and the banned-function list; it knows nothing of
 * Kubernetes.
 */
#ifndef KOORD_BASE_H
#define KOORD_BASE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"
#include "base/errors.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Invariant check for programming errors: prints file:line and aborts, also in release builds.
 * Never use it for bad input from a peer. */
#define CHECK(expr)                                                                                \
    do {                                                                                           \
        if (!(expr))                                                                               \
            check_failed(#expr, __FILE__, __LINE__);                                               \
    } while (0)

_Noreturn void check_failed(const char *expr, const char *file, int line);

/* Checked integer parsing of a whole string: no sign tricks, no trailing bytes. -EINVAL, -ERANGE.
 */
int parse_i64(const char *s, int64_t *ret);
int parse_u32(const char *s, uint32_t *ret);
/* Checked float parsing (strtod on the whole string, finite values only). */
int parse_double(const char *s, double *ret);

#include "base/banned.h"

#endif
