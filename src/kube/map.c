/* The string-keyed chained hash map of kube-int.h: FNV-1a, doubling at load factor 1. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "kube/kube-int.h"

#define INITIAL_BUCKETS 16

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;

    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

void kube__map_init(struct kube__map *m)
{
    m->buckets = NULL;
    m->nbuckets = 0;
    m->n = 0;
}

void kube__map_release(struct kube__map *m)
{
    for (size_t i = 0; i < m->nbuckets; i++) {
        struct kube__map_entry *e = m->buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            free(e->key);
            free(e);
        }
    }
    free(m->buckets);
    kube__map_init(m);
}

static struct kube__map_entry **slot_of(const struct kube__map *m, const char *key)
{
    struct kube__map_entry **p;

    if (!m->nbuckets)
        return NULL;
    p = &m->buckets[hash(key) & (m->nbuckets - 1)];
    while (*p && strcmp((*p)->key, key))
        p = &(*p)->next;
    return p;
}

void *kube__map_get(const struct kube__map *m, const char *key)
{
    struct kube__map_entry **p = slot_of(m, key);
    return p && *p ? (*p)->value : NULL;
}

static void grow(struct kube__map *m)
{
    size_t nb = m->nbuckets ? m->nbuckets * 2 : INITIAL_BUCKETS;
    struct kube__map_entry **b = xcalloc(nb, sizeof(struct kube__map_entry *));

    for (size_t i = 0; i < m->nbuckets; i++) {
        struct kube__map_entry *e = m->buckets[i], *next;
        for (; e; e = next) {
            size_t j = hash(e->key) & (nb - 1);
            next = e->next;
            e->next = b[j];
            b[j] = e;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = nb;
}

struct kube__map_entry *kube__map_find(const struct kube__map *m, const char *key)
{
    struct kube__map_entry **p = slot_of(m, key);
    return p ? *p : NULL;
}

struct kube__map_entry *kube__map_upsert(struct kube__map *m, const char *key)
{
    struct kube__map_entry **p, *e;

    if (m->n >= m->nbuckets)
        grow(m);
    p = slot_of(m, key);
    if (*p)
        return *p;
    e = xcalloc(1, sizeof(*e));
    e->key = xstrdup(key);
    *p = e;
    m->n++;
    return e;
}

void *kube__map_put(struct kube__map *m, const char *key, void *value)
{
    struct kube__map_entry *e = kube__map_upsert(m, key);
    void *old = e->value;

    e->value = value;
    return old;
}

void *kube__map_del(struct kube__map *m, const char *key)
{
    struct kube__map_entry **p = slot_of(m, key), *e;
    void *old;

    if (!p || !*p)
        return NULL;
    e = *p;
    *p = e->next;
    old = e->value;
    free(e->key);
    free(e);
    m->n--;
    return old;
}

static struct kube__map_entry *scan(const struct kube__map *m, size_t *iter)
{
    for (; *iter < m->nbuckets; (*iter)++)
        if (m->buckets[*iter])
            return m->buckets[*iter];
    return NULL;
}

struct kube__map_entry *kube__map_first(const struct kube__map *m, size_t *iter)
{
    *iter = 0;
    return scan(m, iter);
}

struct kube__map_entry *kube__map_next(const struct kube__map *m, struct kube__map_entry *e,
                                       size_t *iter)
{
    if (e->next)
        return e->next;
    (*iter)++;
    return scan(m, iter);
}
