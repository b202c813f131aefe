/* Allocation wrappers; see alloc.h for the x* versus checked split. */
#include "base/alloc.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

static atomic_long fail_countdown; /* 0 = disarmed */
static atomic_int injected;

static _Noreturn void oom(size_t n)
{
    (void)fprintf(stderr, "fatal: out of memory allocating %zu bytes\n", n);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
    void *p;

    if (size && nmemb > SIZE_MAX / size)
        oom(SIZE_MAX);
    p = calloc(nmemb ? nmemb : 1, size ? size : 1);
    if (!p)
        oom(nmemb * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void *xaligned_zalloc(size_t align, size_t n)
{
    void *p = NULL;

    if (posix_memalign(&p, align, n ? n : 1))
        oom(n);
    memset(p, 0, n);
    return p;
}

static int should_fail(void)
{
    long c = atomic_load(&fail_countdown);

    if (c <= 0)
        return 0;
    if (c == 1) {
        atomic_store(&injected, 1);
        return 1; /* stays at 1: every later checked allocation fails too */
    }
    atomic_store(&fail_countdown, c - 1);
    return 0;
}

void *cmalloc(size_t n)
{
    if (should_fail())
        return NULL;
    return malloc(n ? n : 1);
}

void *crealloc(void *p, size_t n)
{
    if (should_fail())
        return NULL;
    return realloc(p, n ? n : 1);
}

void *ccalloc(size_t nmemb, size_t size)
{
    if (size && nmemb > SIZE_MAX / size)
        return NULL;
    if (should_fail())
        return NULL;
    return calloc(nmemb ? nmemb : 1, size ? size : 1);
}

char *cstrndup(const char *s, size_t n)
{
    char *p;

    if (n == SIZE_MAX)
        return NULL;
    p = cmalloc(n + 1);
    if (!p)
        return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void alloc_fail_after(long n)
{
    atomic_store(&injected, 0);
    atomic_store(&fail_countdown, n < 0 ? 0 : n);
}

int alloc_injected(void)
{
    return atomic_load(&injected);
}
