/*
 * Internals shared by the files of src/kube: the monotonic clock, query building, and a small
 * string-keyed hash map (the informer cache, its indexes and the workqueue's sets all key by
 * "namespace/name" strings). No other directory includes this.
 */
#ifndef KOORD_KUBE_INT_H
#define KOORD_KUBE_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/hmap.h"

struct strbuf;

/* Monotonic seconds. */
double kube__now(void);

/* When > 0, the time limit of this thread's requests instead of the config's timeout_ms: the
 * leader elector bounds each Lease request by what is left of its renew deadline, so a hung
 * connection cannot keep it leading past the lease (client-go bounds them by a context). */
extern _Thread_local long kube__request_timeout_ms;

/* Appends "?key=value" or "&key=value" (value URL-escaped); nothing when value is NULL/"". */
void kube__add_query(struct strbuf *sb, const char *key, const char *value);

/* A uniform random double in [0, 1) from a thread-local generator. */
double kube__rand(void);

/* Absolute CLOCK_MONOTONIC deadline seconds from now, for pthread_cond_timedwait on
 * condition variables made with kube__cond_init(). */
struct timespec;
void kube__deadline(double seconds, struct timespec *ret);
/* A condition variable that waits on CLOCK_MONOTONIC. */
void kube__cond_init(pthread_cond_t *c);

#endif
