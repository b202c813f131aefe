/*
 * The watch hub (see watch.h): one mutex, a list of watchers, each with a condition variable and
 * a ring of shared events, and the index: watchers that want one index value (one node's pods)
 * hang off a hash bucket of that value instead of the list. A watcher is signalled only when its
 * ring goes from empty to not empty: a watcher that is busy sending finds everything queued
 * meanwhile on its next call and sends it in one piece, so a burst costs one wake-up per
 * watcher, not one per write.
 */
#include "apiserver/watch.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "base/strbuf.h"

#define DEFAULT_MAX_BYTES (16u << 20)
#define INDEX_SLOTS       4096 /* hash slots of index values; chains stay short to ~40,000 */

struct bucket {
    char *value;
    struct watcher *list;
    struct bucket *next; /* in its slot */
};

struct watcher {
    struct watch_hub *hub;
    char *prefix;
    size_t prefix_len;
    size_t max_bytes, bytes;
    struct watch_event **ring; /* queued events, oldest at head */
    size_t head, n, cap;
    bool overflow;
    pthread_cond_t cv;
    void (*notify)(void *ud);
    void *notify_ud;
    struct bucket *bucket; /* indexed: its value's bucket; else NULL (on the hub's list) */
    struct watcher *next;  /* in the hub's list or the bucket's */
};

struct watch_hub {
    pthread_mutex_t mu;
    struct watcher *list;
    watch_encode_fn encode;
    watch_index_fn index;
    char *index_prefix;
    size_t index_prefix_len;
    struct bucket **slots; /* INDEX_SLOTS of them, once an index is set */
    uint64_t last_rv;      /* of the last write observed */
    size_t nindexed;       /* watchers in buckets */
    bool closed;
    bool freed; /* watch_hub_free() ran while watchers remained: the last one frees */
};

struct watch_hub *watch_hub_new(watch_encode_fn encode)
{
    struct watch_hub *h = xcalloc(1, sizeof(*h));
    CHECK(pthread_mutex_init(&h->mu, NULL) == 0);
    h->encode = encode;
    return h;
}

static void hub_free(struct watch_hub *h)
{
    (void)pthread_mutex_destroy(&h->mu);
    free(h->slots); /* every bucket went with its last watcher */
    free(h->index_prefix);
    free(h);
}

static void wake(struct watcher *w)
{
    (void)pthread_cond_signal(&w->cv);
    if (w->notify)
        w->notify(w->notify_ud);
}

/* Every watcher, listed or indexed, woken: the hub closed. h->mu held. */
static void wake_all(struct watch_hub *h)
{
    for (struct watcher *w = h->list; w; w = w->next)
        wake(w);
    if (!h->slots)
        return;
    for (size_t i = 0; i < INDEX_SLOTS; i++)
        for (struct bucket *b = h->slots[i]; b; b = b->next)
            for (struct watcher *w = b->list; w; w = w->next)
                wake(w);
}

void watch_hub_close(struct watch_hub *h)
{
    if (!h)
        return;
    CHECK(pthread_mutex_lock(&h->mu) == 0);
    h->closed = true;
    wake_all(h);
    CHECK(pthread_mutex_unlock(&h->mu) == 0);
}

void watch_hub_set_index(struct watch_hub *h, const char *prefix, watch_index_fn fn)
{
    CHECK(pthread_mutex_lock(&h->mu) == 0);
    CHECK(!h->index); /* one index per hub, set once */
    h->index = fn;
    h->index_prefix = xstrdup(prefix);
    h->index_prefix_len = strlen(prefix);
    h->slots = xcalloc(INDEX_SLOTS, sizeof(struct bucket *));
    CHECK(pthread_mutex_unlock(&h->mu) == 0);
}

/* FNV-1a. */
static size_t slot_of(const char *value)
{
    uint32_t x = 2166136261u;

    for (const unsigned char *p = (const unsigned char *)value; *p; p++)
        x = (x ^ *p) * 16777619u;
    return x % INDEX_SLOTS;
}

static struct bucket *bucket_find(struct watch_hub *h, const char *value)
{
    for (struct bucket *b = h->slots[slot_of(value)]; b; b = b->next)
        if (!strcmp(b->value, value))
            return b;
    return NULL;
}

void watch_hub_free(struct watch_hub *h)
{
    bool empty;

    if (!h)
        return;
    CHECK(pthread_mutex_lock(&h->mu) == 0);
    h->closed = true;
    h->freed = true;
    empty = !h->list && !h->nindexed;
    wake_all(h);
    CHECK(pthread_mutex_unlock(&h->mu) == 0);
    if (empty)
        hub_free(h);
}

struct watch_event *watch_event_unref(struct watch_event *ev)
{
    if (ev && atomic_fetch_sub_explicit(&ev->refs, 1, memory_order_acq_rel) == 1) {
        store_obj_unref(ev->obj);
        store_obj_unref(ev->prev);
        free((char *)ev->wire);
        free(ev);
    }
    return NULL;
}

static void drop_queue(struct watcher *w)
{
    for (size_t i = 0; i < w->n; i++)
        watch_event_unref(w->ring[(w->head + i) % w->cap]);
    w->head = w->n = 0;
    w->bytes = 0;
}

static void push(struct watcher *w, struct watch_event *ev)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        struct watch_event **ring = xcalloc(cap, sizeof(struct watch_event *));
        for (size_t i = 0; i < w->n; i++)
            ring[i] = w->ring[(w->head + i) % w->cap];
        free(w->ring);
        w->ring = ring;
        w->cap = cap;
        w->head = 0;
    }
    w->ring[(w->head + w->n) % w->cap] = ev;
    w->n++;
}

/* The shared event of one write: made once, whatever the number of watchers. */
static struct watch_event *event_new(const struct watch_hub *h, const struct store_event *ev)
{
    struct watch_event *e = xcalloc(1, sizeof(*e));

    e->type = ev->type;
    e->rv = ev->rv;
    if (ev->obj) {
        e->obj = store_obj_ref(ev->obj);
        e->prev = store_obj_ref(ev->prev_obj);
    } else {
        /* Sizes were bounded when the write was accepted; the write is committed. */
        e->obj = store_obj_new(ev->key, ev->type == STORE_DELETED ? ev->prev_rv : ev->rv, ev->value,
                               ev->len);
        CHECK(e->obj);
        if (ev->prev) {
            e->prev = store_obj_new(ev->key, ev->prev_rv, ev->prev, ev->prev_len);
            CHECK(e->prev);
        }
    }
    if (h->encode) {
        struct strbuf sb = STRBUF_INIT;
        if (h->encode(e->type, e->rv, e->obj, &sb))
            e->wire = strbuf_detach(&sb, &e->wire_len);
        strbuf_release(&sb);
    }
    atomic_init(&e->refs, 1);
    return e;
}

/* Queues e for w, or cuts w off when it is too far behind. h->mu held. */
static void deliver(struct watcher *w, struct watch_event *e)
{
    if (w->overflow)
        return;
    if (w->bytes + e->obj->len > w->max_bytes) {
        /* Too far behind: cut it off instead of growing or blocking the writer. */
        w->overflow = true;
        drop_queue(w);
        wake(w);
        return;
    }
    atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
    push(w, e);
    w->bytes += e->obj->len;
    if (w->n == 1)
        wake(w);
}

static void deliver_bucket(struct watch_hub *h, const char *value, struct watch_event *e)
{
    struct bucket *b = bucket_find(h, value);

    for (struct watcher *w = b ? b->list : NULL; w; w = w->next)
        if (!strncmp(e->obj->key, w->prefix, w->prefix_len))
            deliver(w, e);
}

int watch_hub_observe(const struct store_event *ev, void *userdata)
{
    struct watch_hub *h = userdata;
    struct watch_event *e = NULL;

    CHECK(pthread_mutex_lock(&h->mu) == 0);
    h->last_rv = ev->rv;
    for (struct watcher *w = h->list; w; w = w->next) {
        if (w->overflow || strncmp(ev->key, w->prefix, w->prefix_len) != 0)
            continue;
        if (!e)
            e = event_new(h, ev);
        deliver(w, e);
    }
    if (h->nindexed && !strncmp(ev->key, h->index_prefix, h->index_prefix_len)) {
        struct strbuf now = STRBUF_INIT, before = STRBUF_INIT;
        bool has_now, has_before;

        if (!e)
            e = event_new(h, ev);
        has_now = h->index(e->obj, &now);
        has_before = e->prev && h->index(e->prev, &before);
        if (has_now)
            deliver_bucket(h, now.buf, e);
        if (has_before && (!has_now || strcmp(now.buf, before.buf)))
            deliver_bucket(h, before.buf, e);
        strbuf_release(&now);
        strbuf_release(&before);
    }
    CHECK(pthread_mutex_unlock(&h->mu) == 0);
    watch_event_unref(e);
    return 0;
}

struct watcher *watcher_new(struct watch_hub *h, const char *prefix, size_t max_bytes)
{
    return watcher_new_indexed(h, prefix, max_bytes, NULL);
}

struct watcher *watcher_new_indexed(struct watch_hub *h, const char *prefix, size_t max_bytes,
                                    const char *index_value)
{
    struct watcher *w = xcalloc(1, sizeof(*w));
    pthread_condattr_t attr;

    w->hub = h;
    w->prefix = xstrdup(prefix);
    w->prefix_len = strlen(prefix);
    w->max_bytes = max_bytes ? max_bytes : DEFAULT_MAX_BYTES;
    CHECK(pthread_condattr_init(&attr) == 0);
    CHECK(pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0);
    CHECK(pthread_cond_init(&w->cv, &attr) == 0);
    (void)pthread_condattr_destroy(&attr);
    CHECK(pthread_mutex_lock(&h->mu) == 0);
    if (index_value && h->index && !strncmp(prefix, h->index_prefix, h->index_prefix_len)) {
        struct bucket *b = bucket_find(h, index_value);
        if (!b) {
            size_t slot = slot_of(index_value);
            b = xcalloc(1, sizeof(*b));
            b->value = xstrdup(index_value);
            b->next = h->slots[slot];
            h->slots[slot] = b;
        }
        w->bucket = b;
        w->next = b->list;
        b->list = w;
        h->nindexed++;
    } else {
        w->next = h->list;
        h->list = w;
    }
    CHECK(pthread_mutex_unlock(&h->mu) == 0);
    return w;
}

void watcher_set_notify(struct watcher *w, void (*fn)(void *ud), void *ud)
{
    struct watch_hub *h = w->hub;

    CHECK(pthread_mutex_lock(&h->mu) == 0);
    w->notify = fn;
    w->notify_ud = ud;
    if (fn && (w->n || w->overflow || h->closed))
        fn(ud);
    CHECK(pthread_mutex_unlock(&h->mu) == 0);
}

/* Takes w off the list or its bucket (freeing a bucket it leaves empty). h->mu held. */
static void unlink_watcher(struct watch_hub *h, struct watcher *w)
{
    struct bucket *b = w->bucket;

    for (struct watcher **p = b ? &b->list : &h->list; *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            break;
        }
    }
    if (!b)
        return;
    h->nindexed--;
    if (b->list)
        return;
    for (struct bucket **p = &h->slots[slot_of(b->value)]; *p; p = &(*p)->next) {
        if (*p == b) {
            *p = b->next;
            break;
        }
    }
    free(b->value);
    free(b);
}

int watcher_next(struct watcher *w, int timeout_ms, struct watch_event **v, size_t max,
                 size_t *ret_n)
{
    struct watch_hub *h = w->hub;
    struct timespec deadline;
    int r = 0;

    *ret_n = 0;
    (void)clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    CHECK(pthread_mutex_lock(&h->mu) == 0);
    while (timeout_ms > 0 && !w->n && !w->overflow && !h->closed) {
        if (pthread_cond_timedwait(&w->cv, &h->mu, &deadline) != 0)
            break;
    }
    if (w->overflow) {
        r = -EOVERFLOW;
    } else if (w->n) {
        size_t k = 0;
        for (; k < max && w->n; k++) {
            struct watch_event *e = w->ring[w->head];
            w->head = (w->head + 1) % w->cap;
            w->n--;
            w->bytes -= e->obj->len;
            v[k] = e;
        }
        *ret_n = k;
        r = 1;
    } else if (h->closed) {
        r = -ESHUTDOWN;
    }
    CHECK(pthread_mutex_unlock(&h->mu) == 0);
    return r;
}

uint64_t watcher_progress(struct watcher *w)
{
    struct watch_hub *h = w->hub;
    uint64_t r;

    CHECK(pthread_mutex_lock(&h->mu) == 0);
    /* Writes reach every queue in revision order, so all before the head were handed out. */
    r = w->n ? w->ring[w->head]->rv - 1 : h->last_rv;
    CHECK(pthread_mutex_unlock(&h->mu) == 0);
    return r;
}

void watcher_free(struct watcher *w)
{
    struct watch_hub *h;
    bool last;

    if (!w)
        return;
    h = w->hub;
    CHECK(pthread_mutex_lock(&h->mu) == 0);
    unlink_watcher(h, w);
    drop_queue(w);
    last = h->freed && !h->list && !h->nindexed;
    CHECK(pthread_mutex_unlock(&h->mu) == 0);
    (void)pthread_cond_destroy(&w->cv);
    free(w->ring);
    free(w->prefix);
    free(w);
    if (last)
        hub_free(h);
}
