/*
 * The work queue (see workqueue.h). Delayed keys sit in a min-heap by due time with lazy
 * deletion: a map holds each key's earliest due time, and heap entries that no longer match it
 * are skipped when they surface. No timer thread: get() moves due keys to the queue and sleeps
 * until the next one is due.
 */
#include "kube/workqueue.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "kube/kube-int.h"

#define DEFAULT_BASE_MS 5L
#define DEFAULT_MAX_MS  1000000L

struct delayed {
    double at;
    char *key;
};

struct kube_workqueue {
    pthread_mutex_t lock;
    pthread_cond_t ready;   /* a key was queued, a delay changed, or shutdown */
    pthread_cond_t drained; /* queue and processing became empty */
    char **queue;           /* FIFO: queue[head..n) */
    size_t head, n, alloc;
    struct hmap dirty;      /* waiting keys */
    struct hmap processing; /* keys handed out */
    struct hmap due;        /* delayed key -> earliest due time (entry num) */
    struct hmap failures;   /* key -> retries (entry num) */
    struct delayed *heap;
    size_t nheap, aheap;
    double base_s, max_s;
    bool shutting_down;
};

struct kube_workqueue *kube_workqueue_new(const struct kube_workqueue_opts *opts)
{
    struct kube_workqueue *q = xcalloc(1, sizeof(*q));
    long base = opts && opts->base_delay_ms > 0 ? opts->base_delay_ms : DEFAULT_BASE_MS;
    long max = opts && opts->max_delay_ms > 0 ? opts->max_delay_ms : DEFAULT_MAX_MS;

    CHECK(pthread_mutex_init(&q->lock, NULL) == 0);
    kube__cond_init(&q->ready);
    kube__cond_init(&q->drained);
    hmap_init(&q->dirty);
    hmap_init(&q->processing);
    hmap_init(&q->due);
    hmap_init(&q->failures);
    q->base_s = (double)base / 1000.0;
    q->max_s = (double)max / 1000.0;
    return q;
}

void kube_workqueue_free(struct kube_workqueue *q)
{
    if (!q)
        return;
    for (size_t i = q->head; i < q->n; i++)
        free(q->queue[i]);
    free(q->queue);
    for (size_t i = 0; i < q->nheap; i++)
        free(q->heap[i].key);
    free(q->heap);
    hmap_release(&q->dirty);
    hmap_release(&q->processing);
    hmap_release(&q->due);
    hmap_release(&q->failures);
    (void)pthread_cond_destroy(&q->ready);
    (void)pthread_cond_destroy(&q->drained);
    (void)pthread_mutex_destroy(&q->lock);
    free(q);
}

static void push_queue(struct kube_workqueue *q, const char *key)
{
    if (q->head > 0 && q->head * 2 >= q->n) {
        memmove(q->queue, q->queue + q->head, (q->n - q->head) * sizeof(*q->queue));
        q->n -= q->head;
        q->head = 0;
    }
    if (q->n == q->alloc) {
        q->alloc = q->alloc ? q->alloc * 2 : 16;
        q->queue = xrealloc(q->queue, q->alloc * sizeof(*q->queue));
    }
    q->queue[q->n++] = xstrdup(key);
    (void)pthread_cond_signal(&q->ready);
}

/* client-go Type.Add: dedupe on dirty; a processing key waits for done(). */
static void add_locked(struct kube_workqueue *q, const char *key)
{
    if (q->shutting_down || hmap_get(&q->dirty, key))
        return;
    (void)hmap_put(&q->dirty, key, (void *)1);
    if (hmap_get(&q->processing, key))
        return;
    push_queue(q, key);
}

void kube_workqueue_add(struct kube_workqueue *q, const char *key)
{
    (void)pthread_mutex_lock(&q->lock);
    add_locked(q, key);
    (void)pthread_mutex_unlock(&q->lock);
}

static void heap_push(struct kube_workqueue *q, double at, const char *key)
{
    size_t i;

    if (q->nheap == q->aheap) {
        q->aheap = q->aheap ? q->aheap * 2 : 16;
        q->heap = xrealloc(q->heap, q->aheap * sizeof(*q->heap));
    }
    i = q->nheap++;
    q->heap[i] = (struct delayed){at, xstrdup(key)};
    while (i > 0 && q->heap[(i - 1) / 2].at > q->heap[i].at) {
        struct delayed t = q->heap[i];
        q->heap[i] = q->heap[(i - 1) / 2];
        q->heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static struct delayed heap_pop(struct kube_workqueue *q)
{
    struct delayed top = q->heap[0];
    size_t i = 0;

    q->nheap--;
    q->heap[0] = q->heap[q->nheap];
    q->heap[q->nheap] = (struct delayed){0, NULL};
    if (q->nheap == 0)
        q->heap[0] = (struct delayed){0, NULL};
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->nheap && q->heap[l].at < q->heap[m].at)
            m = l;
        if (r < q->nheap && q->heap[r].at < q->heap[m].at)
            m = r;
        if (m == i)
            break;
        struct delayed t = q->heap[i];
        q->heap[i] = q->heap[m];
        q->heap[m] = t;
        i = m;
    }
    return top;
}

static void add_after_locked(struct kube_workqueue *q, const char *key, double delay_s)
{
    struct hmap_entry *cur;
    double at;

    if (q->shutting_down)
        return;
    if (delay_s <= 0) {
        add_locked(q, key);
        return;
    }
    at = kube__now() + delay_s;
    cur = hmap_find(&q->due, key);
    if (cur && cur->num <= at)
        return;
    if (!cur)
        cur = hmap_upsert(&q->due, key);
    cur->num = at;
    heap_push(q, at, key);
    (void)pthread_cond_broadcast(&q->ready);
}

void kube_workqueue_add_after(struct kube_workqueue *q, const char *key, long delay_ms)
{
    (void)pthread_mutex_lock(&q->lock);
    add_after_locked(q, key, (double)delay_ms / 1000.0);
    (void)pthread_mutex_unlock(&q->lock);
}

void kube_workqueue_add_rate_limited(struct kube_workqueue *q, const char *key)
{
    struct hmap_entry *f;
    double d, n;

    (void)pthread_mutex_lock(&q->lock);
    f = hmap_upsert(&q->failures, key);
    n = f->num;
    f->num = n + 1;
    /* ItemExponentialFailureRateLimiter: base * 2^n, capped. */
    d = q->base_s;
    for (double i = 0; i < n && d < q->max_s; i++)
        d *= 2;
    if (d > q->max_s)
        d = q->max_s;
    add_after_locked(q, key, d);
    (void)pthread_mutex_unlock(&q->lock);
}

void kube_workqueue_forget(struct kube_workqueue *q, const char *key)
{
    (void)pthread_mutex_lock(&q->lock);
    (void)hmap_del(&q->failures, key);
    (void)pthread_mutex_unlock(&q->lock);
}

unsigned kube_workqueue_num_requeues(struct kube_workqueue *q, const char *key)
{
    struct hmap_entry *f;
    unsigned n;

    (void)pthread_mutex_lock(&q->lock);
    f = hmap_find(&q->failures, key);
    n = f ? (unsigned)f->num : 0;
    (void)pthread_mutex_unlock(&q->lock);
    return n;
}

/* Moves due delayed keys to the queue; returns the due time of the next one, or 0. */
static double promote_due(struct kube_workqueue *q)
{
    double now = kube__now();

    while (q->nheap > 0) {
        const struct hmap_entry *cur = hmap_find(&q->due, q->heap[0].key);
        bool current = cur && cur->num == q->heap[0].at;
        struct delayed d;

        if (current && q->heap[0].at > now)
            return q->heap[0].at;
        d = heap_pop(q);
        if (current) {
            (void)hmap_del(&q->due, d.key);
            add_locked(q, d.key);
        }
        free(d.key);
    }
    return 0;
}

int kube_workqueue_get(struct kube_workqueue *q, char **ret_key)
{
    char *key;

    (void)pthread_mutex_lock(&q->lock);
    for (;;) {
        double next = q->shutting_down ? 0 : promote_due(q);

        if (q->head < q->n)
            break;
        if (q->shutting_down) {
            (void)pthread_mutex_unlock(&q->lock);
            return -ESHUTDOWN;
        }
        if (next > 0) {
            struct timespec ts;
            kube__deadline(next - kube__now(), &ts);
            (void)pthread_cond_timedwait(&q->ready, &q->lock, &ts);
        } else {
            (void)pthread_cond_wait(&q->ready, &q->lock);
        }
    }
    key = q->queue[q->head++];
    (void)hmap_put(&q->processing, key, (void *)1);
    (void)hmap_del(&q->dirty, key);
    if (q->head == q->n)
        q->head = q->n = 0;
    (void)pthread_mutex_unlock(&q->lock);
    *ret_key = key;
    return 0;
}

void kube_workqueue_done(struct kube_workqueue *q, const char *key)
{
    (void)pthread_mutex_lock(&q->lock);
    (void)hmap_del(&q->processing, key);
    if (hmap_get(&q->dirty, key))
        push_queue(q, key);
    if (q->processing.n == 0 && q->head == q->n)
        (void)pthread_cond_broadcast(&q->drained);
    (void)pthread_mutex_unlock(&q->lock);
}

size_t kube_workqueue_len(struct kube_workqueue *q)
{
    size_t n;

    (void)pthread_mutex_lock(&q->lock);
    (void)promote_due(q);
    n = q->n - q->head;
    (void)pthread_mutex_unlock(&q->lock);
    return n;
}

void kube_workqueue_shutdown(struct kube_workqueue *q)
{
    (void)pthread_mutex_lock(&q->lock);
    if (!q->shutting_down) {
        q->shutting_down = true;
        for (size_t i = 0; i < q->nheap; i++)
            free(q->heap[i].key);
        q->nheap = 0;
        hmap_release(&q->due);
        (void)pthread_cond_broadcast(&q->ready);
    }
    (void)pthread_mutex_unlock(&q->lock);
}

void kube_workqueue_shutdown_drain(struct kube_workqueue *q)
{
    kube_workqueue_shutdown(q);
    (void)pthread_mutex_lock(&q->lock);
    while (q->head < q->n || q->processing.n > 0)
        (void)pthread_cond_wait(&q->drained, &q->lock);
    (void)pthread_mutex_unlock(&q->lock);
}
