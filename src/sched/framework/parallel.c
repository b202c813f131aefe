/* The worker pool of parallel.h: a generation counter wakes the workers for each loop. */
#include "sched/framework/parallel.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "base/base.h"

struct sched_pool {
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    pthread_t *threads;
    int nthreads;
    bool stopping;
    unsigned long generation; /* of the loop being run */
    bool active;              /* that loop still hands out work (false once it returned) */
    int busy;                 /* workers inside the current loop */
    /* the current loop */
    size_t n, chunk;
    _Atomic size_t next;
    _Atomic int cancelled;
    void (*fn)(void *arg, size_t i);
    void *arg;
};

static void work(struct sched_pool *p)
{
    for (;;) {
        size_t start, end;
        if (atomic_load_explicit(&p->cancelled, memory_order_relaxed))
            return;
        start = atomic_fetch_add_explicit(&p->next, p->chunk, memory_order_relaxed);
        if (start >= p->n)
            return;
        end = start + p->chunk < p->n ? start + p->chunk : p->n;
        for (size_t i = start; i < end; i++)
            p->fn(p->arg, i);
    }
}

static void *worker(void *arg)
{
    struct sched_pool *p = arg;
    unsigned long seen = 0;

    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (!p->stopping && p->generation == seen)
            pthread_cond_wait(&p->wake, &p->lock);
        if (p->stopping)
            break;
        seen = p->generation;
        /* Woken too late: the loop returned (perhaps cancelled with indices left, its fn and
         * arg gone) and the caller may be setting up the next one. Only a worker counted in
         * busy may touch a loop. */
        if (!p->active)
            continue;
        p->busy++;
        pthread_mutex_unlock(&p->lock);
        work(p);
        pthread_mutex_lock(&p->lock);
        if (--p->busy == 0)
            pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

struct sched_pool *sched_pool_new(int workers)
{
    struct sched_pool *p = xcalloc(1, sizeof(*p));

    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->done, NULL);
    if (workers > 0)
        p->threads = xcalloc((size_t)workers, sizeof(*p->threads));
    for (int i = 0; i < workers; i++) {
        if (pthread_create(&p->threads[i], NULL, worker, p)) {
            sched_pool_free(p);
            return NULL;
        }
        p->nthreads++;
    }
    return p;
}

void sched_pool_free(struct sched_pool *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = true;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < p->nthreads; i++)
        pthread_join(p->threads[i], NULL);
    free(p->threads);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* The loop on the caller alone; p (may be NULL) only carries sched_pool_cancel(). */
static void run_serial(struct sched_pool *p, size_t n, void (*fn)(void *arg, size_t i), void *arg)
{
    /* A cancel belongs to one loop: one left by a caller that cancelled a loop it ran
     * without this pool must not stop this one. */
    if (p)
        atomic_store(&p->cancelled, 0);
    for (size_t i = 0; i < n; i++) {
        if (p && atomic_load_explicit(&p->cancelled, memory_order_relaxed))
            break;
        fn(arg, i);
    }
    if (p)
        atomic_store(&p->cancelled, 0);
}

void sched_pool_run(struct sched_pool *p, size_t n, size_t chunk, void (*fn)(void *arg, size_t i),
                    void *arg)
{
    size_t threads;

    if (!n)
        return;
    if (!p || !p->nthreads || n == 1) {
        run_serial(p, n, fn, arg);
        return;
    }
    threads = (size_t)p->nthreads + 1;
    if (!chunk)
        chunk = n / (4 * threads);
    if (!chunk)
        chunk = 1;
    pthread_mutex_lock(&p->lock);
    p->n = n;
    p->chunk = chunk;
    p->fn = fn;
    p->arg = arg;
    atomic_store(&p->next, 0);
    atomic_store(&p->cancelled, 0);
    p->active = true;
    p->generation++;
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->lock);
    work(p);
    pthread_mutex_lock(&p->lock);
    /* Wait for the workers inside; one that wakes later finds the loop inactive and never
     * enters it (after a cancel, indices are left that it must not run). */
    while (p->busy)
        pthread_cond_wait(&p->done, &p->lock);
    p->active = false;
    p->fn = NULL;
    atomic_store(&p->cancelled, 0);
    pthread_mutex_unlock(&p->lock);
}

void sched_pool_cancel(struct sched_pool *p)
{
    if (p)
        atomic_store_explicit(&p->cancelled, 1, memory_order_relaxed);
}

void sched_pool_run_measured(struct sched_pool *p, struct sched_pool_cost *c, size_t n,
                             size_t chunk, void (*fn)(void *arg, size_t i), void *arg)
{
    bool parallel = p && p->nthreads && c->ewma_ns >= SCHED_POOL_MIN_PARALLEL_NS;
    struct timespec a, b;
    double work;

    (void)clock_gettime(CLOCK_MONOTONIC, &a);
    if (parallel)
        sched_pool_run(p, n, chunk, fn, arg);
    else if (n)
        run_serial(p, n, fn, arg);
    (void)clock_gettime(CLOCK_MONOTONIC, &b);
    work = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    if (parallel)
        work *= (double)p->nthreads + 1;
    c->ewma_ns = c->ewma_ns == 0 ? work : c->ewma_ns + (work - c->ewma_ns) / 8;
}
