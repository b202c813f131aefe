/*
 * The watch hub (see watch.h): one mutex, a list of watchers, each with a condition variable and
 * a ring of shared events. A watcher is signalled only when its ring goes from empty to not
 * empty: a watcher that is busy sending finds everything queued meanwhile on its next call and
 * sends it in one piece, so a burst costs one wake-up per watcher, not one per write.
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

struct watcher {
    struct watch_hub *hub;
    char *prefix;
    size_t prefix_len;
    size_t max_bytes, bytes;
    struct watch_event **ring; /* queued events, oldest at head */
    size_t head, n, cap;
    bool overflow;
    pthread_cond_t cv;
    struct watcher *next;
};

struct watch_hub {
    pthread_mutex_t mu;
    struct watcher *list;
    watch_encode_fn encode;
    uint64_t last_rv; /* of the last write observed */
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
    free(h);
}

void watch_hub_close(struct watch_hub *h)
{
    if (!h)
        return;
    CHECK(pthread_mutex_lock(&h->mu) == 0);
    h->closed = true;
    for (struct watcher *w = h->list; w; w = w->next)
        (void)pthread_cond_broadcast(&w->cv);
    CHECK(pthread_mutex_unlock(&h->mu) == 0);
}

void watch_hub_free(struct watch_hub *h)
{
    bool empty;

    if (!h)
        return;
    CHECK(pthread_mutex_lock(&h->mu) == 0);
    h->closed = true;
    h->freed = true;
    empty = !h->list;
    for (struct watcher *w = h->list; w; w = w->next)
        (void)pthread_cond_broadcast(&w->cv);
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
        if (w->bytes + e->obj->len > w->max_bytes) {
            /* Too far behind: cut it off instead of growing or blocking the writer. */
            w->overflow = true;
            drop_queue(w);
            (void)pthread_cond_signal(&w->cv);
            continue;
        }
        atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
        push(w, e);
        w->bytes += e->obj->len;
        if (w->n == 1)
            (void)pthread_cond_signal(&w->cv);
    }
    CHECK(pthread_mutex_unlock(&h->mu) == 0);
    watch_event_unref(e);
    return 0;
}

struct watcher *watcher_new(struct watch_hub *h, const char *prefix, size_t max_bytes)
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
    w->next = h->list;
    h->list = w;
    CHECK(pthread_mutex_unlock(&h->mu) == 0);
    return w;
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
    while (!w->n && !w->overflow && !h->closed) {
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
    for (struct watcher **p = &h->list; *p; p = &(*p)->next) {
        if (*p == w) {
            *p = w->next;
            break;
        }
    }
    drop_queue(w);
    last = h->freed && !h->list;
    CHECK(pthread_mutex_unlock(&h->mu) == 0);
    (void)pthread_cond_destroy(&w->cv);
    free(w->ring);
    free(w->prefix);
    free(w);
    if (last)
        hub_free(h);
}
