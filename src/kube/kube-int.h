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

/* String -> pointer map. Keys are copied; values are borrowed. */
struct kube__map_entry {
    char *key;
    void *value;
    double num; /* for maps of numbers (due times, retry counts): no allocation per value */
    struct kube__map_entry *next;
};

struct kube__map {
    struct kube__map_entry **buckets;
    size_t nbuckets;
    size_t n;
};

void kube__map_init(struct kube__map *m);
/* Frees the entries (not the values). */
void kube__map_release(struct kube__map *m);
void *kube__map_get(const struct kube__map *m, const char *key);
/* Sets key to value; returns the previous value or NULL. */
void *kube__map_put(struct kube__map *m, const char *key, void *value);
/* The entry of key, or NULL. */
struct kube__map_entry *kube__map_find(const struct kube__map *m, const char *key);
/* The entry of key, created (value NULL, num 0) when absent. */
struct kube__map_entry *kube__map_upsert(struct kube__map *m, const char *key);
/* Removes key; returns its value or NULL. */
void *kube__map_del(struct kube__map *m, const char *key);

/* Iteration: for (e = kube__map_first(m, &i); e; e = kube__map_next(m, e, &i)). The map must
 * not change meanwhile. */
struct kube__map_entry *kube__map_first(const struct kube__map *m, size_t *iter);
struct kube__map_entry *kube__map_next(const struct kube__map *m, struct kube__map_entry *e,
                                       size_t *iter);

#endif
