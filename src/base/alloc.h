/*
 * Allocation. x*() abort on OOM and are for small internal sizes. Anything sized by a peer
 * (documents, label maps, bodies) goes through the checked calls, which return NULL on failure
 * and honour the fault-injection hook so tests can prove every -ENOMEM path is clean.
 */
#ifndef KOORD_ALLOC_H
#define KOORD_ALLOC_H

#include <stddef.h>

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size); /* overflow-checked */
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* n bytes aligned to align (a power of two, a multiple of sizeof(void *)), zeroed; free(). */
void *xaligned_zalloc(size_t align, size_t n);

/* Checked allocation: NULL on failure (real or injected). Free with free(). */
void *cmalloc(size_t n);
void *crealloc(void *p, size_t n);
void *ccalloc(size_t nmemb, size_t size);
char *cstrndup(const char *s, size_t n);

/*
 * Fault injection for tests: after alloc_fail_after(n), the n-th following checked allocation
 * (1-based) and every one after it fails until alloc_fail_after(0) disarms the hook.
 * alloc_injected() says whether a failure was injected since the last arm.
 */
void alloc_fail_after(long n);
int alloc_injected(void);

#define FREE_AND_NULL(p)                                                                           \
    do {                                                                                           \
        free(p);                                                                                   \
        (p) = NULL;                                                                                \
    } while (0)

#endif
