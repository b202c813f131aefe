/*
 * A string-keyed chained hash map (FNV-1a, doubling at load factor 1): the informer cache, its
 * indexes, the work queue's sets and the scheduler's queue and cache all key by
 * "namespace/name" or uid strings. Keys are copied; values are borrowed. Not thread safe: the
 * owner locks.
 */
#ifndef KOORD_BASE_HMAP_H
#define KOORD_BASE_HMAP_H

#include <stddef.h>

struct hmap_entry {
    char *key;
    void *value;
    double num; /* for maps of numbers (due times, retry counts): no allocation per value */
    struct hmap_entry *next;
};

struct hmap {
    struct hmap_entry **buckets;
    size_t nbuckets;
    size_t n;
};

void hmap_init(struct hmap *m);
/* Frees the entries (not the values). */
void hmap_release(struct hmap *m);
void *hmap_get(const struct hmap *m, const char *key);
/* Sets key to value; returns the previous value or NULL. */
void *hmap_put(struct hmap *m, const char *key, void *value);
/* The entry of key, or NULL. */
struct hmap_entry *hmap_find(const struct hmap *m, const char *key);
/* The entry of key, created (value NULL, num 0) when absent. */
struct hmap_entry *hmap_upsert(struct hmap *m, const char *key);
/* Removes key; returns its value or NULL. */
void *hmap_del(struct hmap *m, const char *key);

/* Iteration: for (e = hmap_first(m, &i); e; e = hmap_next(m, e, &i)). The map must
 * not change meanwhile. */
struct hmap_entry *hmap_first(const struct hmap *m, size_t *iter);
struct hmap_entry *hmap_next(const struct hmap *m, struct hmap_entry *e, size_t *iter);

#endif
