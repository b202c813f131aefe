/* The string-keyed chained hash map of hmap.h. */
#include "base/hmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

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

void hmap_init(struct hmap *m)
{
    m->buckets = NULL;
    m->nbuckets = 0;
    m->n = 0;
}

void hmap_release(struct hmap *m)
{
    for (size_t i = 0; i < m->nbuckets; i++) {
        struct hmap_entry *e = m->buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            free(e->key);
            free(e);
        }
    }
    free(m->buckets);
    hmap_init(m);
}

static struct hmap_entry **slot_of(const struct hmap *m, const char *key)
{
    struct hmap_entry **p;

    if (!m->nbuckets)
        return NULL;
    p = &m->buckets[hash(key) & (m->nbuckets - 1)];
    while (*p && strcmp((*p)->key, key))
        p = &(*p)->next;
    return p;
}

void *hmap_get(const struct hmap *m, const char *key)
{
    struct hmap_entry **p = slot_of(m, key);
    return p && *p ? (*p)->value : NULL;
}

static void grow(struct hmap *m)
{
    size_t nb = m->nbuckets ? m->nbuckets * 2 : INITIAL_BUCKETS;
    struct hmap_entry **b = xcalloc(nb, sizeof(struct hmap_entry *));

    for (size_t i = 0; i < m->nbuckets; i++) {
        struct hmap_entry *e = m->buckets[i], *next;
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

struct hmap_entry *hmap_find(const struct hmap *m, const char *key)
{
    struct hmap_entry **p = slot_of(m, key);
    return p ? *p : NULL;
}

struct hmap_entry *hmap_upsert(struct hmap *m, const char *key)
{
    struct hmap_entry **p, *e;

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

void *hmap_put(struct hmap *m, const char *key, void *value)
{
    struct hmap_entry *e = hmap_upsert(m, key);
    void *old = e->value;

    e->value = value;
    return old;
}

void *hmap_del(struct hmap *m, const char *key)
{
    struct hmap_entry **p = slot_of(m, key), *e;
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

static struct hmap_entry *scan(const struct hmap *m, size_t *iter)
{
    for (; *iter < m->nbuckets; (*iter)++)
        if (m->buckets[*iter])
            return m->buckets[*iter];
    return NULL;
}

struct hmap_entry *hmap_first(const struct hmap *m, size_t *iter)
{
    *iter = 0;
    return scan(m, iter);
}

struct hmap_entry *hmap_next(const struct hmap *m, struct hmap_entry *e, size_t *iter)
{
    if (e->next)
        return e->next;
    (*iter)++;
    return scan(m, iter);
}
