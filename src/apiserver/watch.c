/* The watch hub (see watch.h): one mutex, a list of watchers, a condition variable each. */
#include "apiserver/watch.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"

#define DEFAULT_MAX_BYTES (16u << 20)

struct node {
    struct watch_item *item;
    struct node *next;
};

struct watcher {
    struct watch_hub *hub;
    char *prefix;
    size_t prefix_len;
    size_t max_bytes, bytes;
    unsigned flags;
    struct node *head, *tail;
    bool overflow;
    pthread_cond_t cv;
    struct watcher *next;
};

struct watch_hub {
    pthread_mutex_t mu;
    struct watcher *list;
    uint64_t last_rv; /* of the last write observed */
    bool closed;
    bool freed; /* watch_hub_free() ran while watchers remained: the last one frees */
};

struct watch_hub *watch_hub_new(void)
{
    struct watch_hub *h = xcalloc(1, sizeof(*h));
    CHECK(pthread_mutex_init(&h->mu, NULL) == 0);
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

void watch_item_free(struct watch_item *it)
{
    if (!it)
        return;
    free(it->key);
    free(it->value);
    free(it->prev);
    free(it);
}

static void drop_queue(struct watcher *w)
{
    while (w->head) {
        struct node *n = w->head;
        w->head = n->next;
        watch_item_free(n->item);
        free(n);
    }
    w->tail = NULL;
    w->bytes = 0;
}

int watch_hub_observe(const struct store_event *ev, void *userdata)
{
    struct watch_hub *h = userdata;

    CHECK(pthread_mutex_lock(&h->mu) == 0);
    h->last_rv = ev->rv;
    for (struct watcher *w = h->list; w; w = w->next) {
        struct watch_item *it;
        struct node *n;
        size_t size;

        if (w->overflow || strncmp(ev->key, w->prefix, w->prefix_len) != 0)
            continue;
        size = ev->len + ((w->flags & WATCHER_PREV) && ev->prev ? ev->prev_len : 0);
        if (w->bytes + size > w->max_bytes) {
            /* Too far behind: cut it off instead of growing or blocking the writer. */
            w->overflow = true;
            drop_queue(w);
            (void)pthread_cond_signal(&w->cv);
            continue;
        }
        it = xcalloc(1, sizeof(*it));
        it->type = ev->type;
        it->rv = ev->rv;
        it->key = xstrdup(ev->key);
        it->value = xstrndup(ev->value, ev->len);
        it->len = ev->len;
        if ((w->flags & WATCHER_PREV) && ev->prev) {
            it->prev = xstrndup(ev->prev, ev->prev_len);
            it->prev_len = ev->prev_len;
        }
        n = xcalloc(1, sizeof(*n));
        n->item = it;
        if (w->tail)
            w->tail->next = n;
        else
            w->head = n;
        w->tail = n;
        w->bytes += size;
        (void)pthread_cond_signal(&w->cv);
    }
    CHECK(pthread_mutex_unlock(&h->mu) == 0);
    return 0;
}

struct watcher *watcher_new(struct watch_hub *h, const char *prefix, size_t max_bytes,
                            unsigned flags)
{
    struct watcher *w = xcalloc(1, sizeof(*w));
    pthread_condattr_t attr;

    w->hub = h;
    w->prefix = xstrdup(prefix);
    w->prefix_len = strlen(prefix);
    w->max_bytes = max_bytes ? max_bytes : DEFAULT_MAX_BYTES;
    w->flags = flags;
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

int watcher_next(struct watcher *w, int timeout_ms, struct watch_item **ret)
{
    struct watch_hub *h = w->hub;
    struct timespec deadline;
    int r = 0;

    (void)clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
        deadline.tv_sec++;
        deadline.tv_nsec -= 1000000000L;
    }
    CHECK(pthread_mutex_lock(&h->mu) == 0);
    while (!w->head && !w->overflow && !h->closed) {
        if (pthread_cond_timedwait(&w->cv, &h->mu, &deadline) != 0)
            break;
    }
    if (w->overflow) {
        r = -EOVERFLOW;
    } else if (w->head) {
        struct node *n = w->head;
        w->head = n->next;
        if (!w->head)
            w->tail = NULL;
        w->bytes -= n->item->len + n->item->prev_len;
        *ret = n->item;
        free(n);
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
    r = w->head ? w->head->item->rv - 1 : h->last_rv;
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
    free(w->prefix);
    free(w);
    if (last)
        hub_free(h);
}
