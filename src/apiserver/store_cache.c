/*
 * The watch cache (see store_cache.h). One read-write lock guards the sorted array and the
 * revision; the backend's observer (under the backend's write lock, in revision order) is the
 * only writer, and forwards each write to the cache's own observer before letting go of the
 * lock, so that observer sees exactly the states the cache moved through.
 */
#include "apiserver/store_cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

struct store_cache {
    struct store base;
    struct store *backend;
    pthread_rwlock_t lock;
    struct store_obj **v; /* sorted by key */
    size_t n, cap;
    uint64_t rev;
    store_event_fn observer;
    void *observer_data;
};

static const struct store_ops cache_ops;

/* The first index whose key is >= key; *ret_found says whether it is equal. */
static size_t lower_bound(const struct store_cache *c, const char *key, bool *ret_found)
{
    size_t lo = 0, hi = c->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(c->v[mid]->key, key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (ret_found)
        *ret_found = lo < c->n && !strcmp(c->v[lo]->key, key);
    return lo;
}

static void insert_at(struct store_cache *c, size_t i, struct store_obj *o)
{
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 256;
        c->v = xrealloc(c->v, c->cap * sizeof(struct store_obj *));
    }
    memmove(c->v + i + 1, c->v + i, (c->n - i) * sizeof(struct store_obj *));
    c->v[i] = o;
    c->n++;
}

/*
 * The backend's observer. The new state becomes a shared object here (once per write); the
 * event passed on carries it and the state it replaced, so watchers take references instead of
 * copies. Runs under the backend's lock: a write is in the cache before it is acknowledged.
 */
static int cache_observe(const struct store_event *ev, void *userdata)
{
    struct store_cache *c = userdata;
    struct store_event out = *ev;
    struct store_obj *o = NULL, *old = NULL;
    bool found;
    size_t i;

    if (ev->type != STORE_DELETED) {
        /* The write is committed: the cache must follow it or be wrong, and its size was
         * bounded when the write was accepted. */
        o = ev->obj ? store_obj_ref(ev->obj) : store_obj_new(ev->key, ev->rv, ev->value, ev->len);
        CHECK(o);
    }
    CHECK(pthread_rwlock_wrlock(&c->lock) == 0);
    i = lower_bound(c, ev->key, &found);
    if (found) {
        old = c->v[i];
        if (o) {
            c->v[i] = o;
        } else {
            memmove(c->v + i, c->v + i + 1, (c->n - i - 1) * sizeof(struct store_obj *));
            c->n--;
        }
    } else if (o) {
        insert_at(c, i, o);
    }
    c->rev = ev->rv;
    if (c->observer) {
        out.obj = o ? o : old;
        out.prev_obj = ev->type == STORE_MODIFIED ? old : NULL;
        if (!out.obj && ev->type == STORE_DELETED) /* not cached: should not happen */
            out.obj = old = store_obj_new(ev->key, ev->prev_rv, ev->value, ev->len);
        if (out.obj)
            (void)c->observer(&out, c->observer_data);
    }
    CHECK(pthread_rwlock_unlock(&c->lock) == 0);
    store_obj_unref(old);
    return 0;
}

static int load_item(const struct store_item *it, void *ud)
{
    struct store_cache *c = ud;

    /* The backend lists in key order: appending keeps the array sorted. */
    insert_at(c, c->n, store_obj_ref(it->obj));
    return 0;
}

int store_cache_new(struct store *backend, struct store **ret)
{
    struct store_cache *c = xcalloc(1, sizeof(*c));
    int r;

    c->base.ops = &cache_ops;
    c->backend = backend;
    {
        /* Writer-preferring: the observer takes the write lock while the backend holds its
         * own, so a stream of overlapping readers must not hold up every commit. */
        pthread_rwlockattr_t a;
        CHECK(pthread_rwlockattr_init(&a) == 0);
        CHECK(pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP) == 0);
        CHECK(pthread_rwlock_init(&c->lock, &a) == 0);
        (void)pthread_rwlockattr_destroy(&a);
    }
    /* Keys start with '/', and every printable byte after it sorts below DEL. */
    r = store_list(backend, "/", NULL, 0, load_item, c, &c->rev);
    if (r < 0) {
        store_close(&c->base);
        return r;
    }
    store_set_observer(backend, cache_observe, c);
    *ret = &c->base;
    return 0;
}

static void cache_close(struct store *base)
{
    struct store_cache *c = (struct store_cache *)base;

    if (c->backend) {
        store_set_observer(c->backend, NULL, NULL);
    }
    for (size_t i = 0; i < c->n; i++)
        store_obj_unref(c->v[i]);
    free(c->v);
    (void)pthread_rwlock_destroy(&c->lock);
    free(c);
}

static uint64_t cache_revision(struct store *base)
{
    struct store_cache *c = (struct store_cache *)base;
    uint64_t r;

    CHECK(pthread_rwlock_rdlock(&c->lock) == 0);
    r = c->rev;
    CHECK(pthread_rwlock_unlock(&c->lock) == 0);
    return r;
}

static uint64_t cache_oldest(struct store *base)
{
    return store_oldest(((struct store_cache *)base)->backend);
}

static int cache_get(struct store *base, const char *key, struct store_item *ret)
{
    struct store_cache *c = (struct store_cache *)base;
    bool found;
    size_t i;

    CHECK(pthread_rwlock_rdlock(&c->lock) == 0);
    i = lower_bound(c, key, &found);
    if (found)
        store_item_set(ret, c->v[i]);
    CHECK(pthread_rwlock_unlock(&c->lock) == 0);
    return found ? 0 : -ENOENT;
}

static int cache_write(struct store *base, enum store_write_op op, const char *key,
                       const char *value, size_t len, uint64_t expect_rv,
                       struct store_item *ret_old, uint64_t *ret_rv)
{
    struct store_cache *c = (struct store_cache *)base;
    return c->backend->ops->write(c->backend, op, key, value, len, expect_rv, ret_old, ret_rv);
}

/*
 * At the current revision: references to the matching objects are taken under the read lock
 * (pointer copies, no bytes), then fn runs unlocked. Any other revision is the backend's.
 */
static int cache_list_at(struct store *base, const char *prefix, const char *after, uint64_t at,
                         size_t limit, store_item_fn fn, void *userdata, uint64_t *ret_rv)
{
    struct store_cache *c = (struct store_cache *)base;
    size_t plen = strlen(prefix), i, n = 0, cap = 0;
    struct store_obj **snap = NULL;
    uint64_t rev;
    int r = 0;

    CHECK(pthread_rwlock_rdlock(&c->lock) == 0);
    rev = c->rev;
    if (at && at != rev) {
        CHECK(pthread_rwlock_unlock(&c->lock) == 0);
        return store_list_at(c->backend, prefix, after, at, limit, fn, userdata, ret_rv);
    }
    if (after && strcmp(after, prefix) >= 0) {
        bool found;
        i = lower_bound(c, after, &found);
        i += found;
    } else {
        i = lower_bound(c, prefix, NULL);
    }
    for (; i < c->n && (!limit || n < limit) && !strncmp(c->v[i]->key, prefix, plen); i++) {
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            snap = xrealloc(snap, cap * sizeof(struct store_obj *));
        }
        snap[n++] = store_obj_ref(c->v[i]);
    }
    CHECK(pthread_rwlock_unlock(&c->lock) == 0);
    if (ret_rv)
        *ret_rv = rev;
    for (i = 0; i < n && r == 0; i++) {
        struct store_item it = {snap[i]->key, snap[i]->rv, snap[i]->value, snap[i]->len, snap[i]};
        r = fn(&it, userdata);
    }
    for (i = 0; i < n; i++)
        store_obj_unref(snap[i]);
    free(snap);
    return r < 0 ? r : 0;
}

static int cache_events(struct store *base, uint64_t since, store_event_fn fn, void *userdata)
{
    return store_events(((struct store_cache *)base)->backend, since, fn, userdata);
}

static void cache_set_observer(struct store *base, store_event_fn fn, void *userdata)
{
    struct store_cache *c = (struct store_cache *)base;

    CHECK(pthread_rwlock_wrlock(&c->lock) == 0);
    c->observer = fn;
    c->observer_data = userdata;
    CHECK(pthread_rwlock_unlock(&c->lock) == 0);
}

static const struct store_ops cache_ops = {
    .close = cache_close,
    .revision = cache_revision,
    .oldest = cache_oldest,
    .get = cache_get,
    .write = cache_write,
    .list_at = cache_list_at,
    .events = cache_events,
    .set_observer = cache_set_observer,
};
