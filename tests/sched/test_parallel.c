/*
 * Tests for sched/framework/parallel.c: every index runs exactly once whatever the sizes,
 * worker counts and chunks; cancel stops handing out indices and ends with its loop; a pool
 * survives many back-to-back loops (workers waking late must not touch the next loop).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/base.h"
#include "sched/framework/parallel.h"

struct job {
    struct sched_pool *pool;
    _Atomic int *hits; /* per index */
    _Atomic size_t calls;
    size_t cancel_at; /* cancel when this many calls were made (0: never) */
    size_t n;
    unsigned magic; /* a body called with a stale job would see another value */
};

#define MAGIC 0x5ca1ab1eu

static void body(void *arg, size_t i)
{
    struct job *j = arg;
    size_t c;

    if (j->magic != MAGIC || i >= j->n)
        abort();
    atomic_fetch_add(&j->hits[i], 1);
    c = atomic_fetch_add(&j->calls, 1) + 1;
    if (j->cancel_at && c == j->cancel_at)
        sched_pool_cancel(j->pool);
}

/* Runs a loop of n on p and returns how many calls were made; fails on an index run twice, or
 * (without cancel) not at all. */
static size_t run(struct sched_pool *p, size_t n, size_t chunk, size_t cancel_at)
{
    struct job j = {.pool = p, .cancel_at = cancel_at, .n = n, .magic = MAGIC};
    size_t calls;

    j.hits = xcalloc(n ? n : 1, sizeof(*j.hits));
    sched_pool_run(p, n, chunk, body, &j);
    for (size_t i = 0; i < n; i++) {
        int h = atomic_load(&j.hits[i]);
        if (h > 1 || (!cancel_at && h != 1))
            fail_msg("n %zu chunk %zu: index %zu ran %d times", n, chunk, i, h);
    }
    calls = atomic_load(&j.calls);
    free(j.hits);
    /* The job dies here: a body still running on it would read a dead frame. */
    j.magic = 0;
    return calls;
}

static void test_every_index_once(void **state)
{
    (void)state;
    static const int workers[] = {0, 1, 2, 3, 7, 15};
    static const size_t sizes[] = {0, 1, 2, 3, 5, 63, 64, 100, 1000, 4097};
    static const size_t chunks[] = {0, 1, 3, 64, 5000};

    for (size_t w = 0; w < sizeof(workers) / sizeof(workers[0]); w++) {
        struct sched_pool *p = sched_pool_new(workers[w]);
        assert_non_null(p);
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
            for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++)
                assert_int_equal(run(p, sizes[s], chunks[c], 0), sizes[s]);
        sched_pool_free(p);
    }
}

static size_t order_seen[16];
static size_t norder;

static void record(void *arg, size_t i)
{
    (void)arg;
    if (norder < 16)
        order_seen[norder++] = i;
}

static void test_null_pool(void **state)
{
    (void)state;
    /* No pool: a plain loop on the caller, in order. */
    norder = 0;
    sched_pool_run(NULL, 10, 0, record, NULL);
    assert_int_equal(norder, 10);
    for (size_t i = 0; i < 10; i++)
        assert_int_equal(order_seen[i], i);
    assert_int_equal(run(NULL, 1000, 7, 0), 1000);
    /* Cancel is a no-op without a pool: everything runs. */
    assert_int_equal(run(NULL, 100, 0, 3), 100);
    sched_pool_cancel(NULL);
    sched_pool_free(NULL);
}

static void test_cancel(void **state)
{
    (void)state;
    struct sched_pool *p = sched_pool_new(3), *serial = sched_pool_new(0);
    size_t calls;

    /* On the caller alone the loop stops right after the cancelling call. */
    assert_int_equal(run(serial, 1000, 0, 5), 5);
    assert_int_equal(run(serial, 1000, 0, 0), 1000);

    /* With workers, indices already handed out finish: at most one per thread with chunk 1. */
    for (int k = 0; k < 50; k++) {
        calls = run(p, 100000, 1, 10);
        if (calls < 10 || calls > 10 + 4)
            fail_msg("%zu calls after a cancel at the 10th", calls);
    }
    /* A cancel ends with its loop: the next one runs whole. */
    assert_int_equal(run(p, 5000, 0, 0), 5000);
    sched_pool_free(p);
    sched_pool_free(serial);
}

static void test_cancel_outside_a_loop(void **state)
{
    (void)state;
    struct sched_pool *p = sched_pool_new(2), *serial = sched_pool_new(0);

    /* A cancel that belongs to no loop of this pool (the caller ran its loop without the
     * pool) must not cut the next loop short. */
    sched_pool_cancel(serial);
    assert_int_equal(run(serial, 100, 0, 0), 100);
    sched_pool_cancel(p);
    assert_int_equal(run(p, 1, 0, 0), 1);
    sched_pool_cancel(p);
    assert_int_equal(run(p, 1000, 0, 0), 1000);
    sched_pool_free(p);
    sched_pool_free(serial);
}

static void test_cancel_early_many_loops(void **state)
{
    (void)state;
    struct sched_pool *p = sched_pool_new(3);

    /*
     * The caller cancels in its first chunk and returns while workers may still be waking up
     * for that loop: they must not run bodies of a loop that has ended (the job is gone) nor
     * disturb the next one.
     */
    for (int k = 0; k < 3000; k++) {
        size_t calls = run(p, 1000, 0, 1);
        if (calls > 1000)
            fail_msg("loop %d: %zu calls", k, calls);
        assert_int_equal(run(p, 1 + (size_t)k % 200, 0, 0), 1 + (size_t)k % 200);
    }
    sched_pool_free(p);
}

static void test_many_small_loops(void **state)
{
    (void)state;
    struct sched_pool *p = sched_pool_new(3);

    for (size_t k = 0; k < 10000; k++)
        assert_int_equal(run(p, 2 + k % 9, k % 3, 0), 2 + k % 9);
    sched_pool_free(p);

    /* Pools come and go. */
    for (int k = 0; k < 50; k++) {
        p = sched_pool_new(1 + k % 4);
        assert_int_equal(run(p, (size_t)k * 10, 0, 0), (size_t)k * 10);
        sched_pool_free(p);
    }
    /* A pool that never ran. */
    sched_pool_free(sched_pool_new(4));
}

/* ---- sched_pool_run_measured ---- */

struct who {
    pthread_t caller;
    _Atomic int others; /* indices run on another thread */
    _Atomic int calls;
    bool wait_for_other; /* index 0 waits (up to 10 s) until another thread ran one */
};

static void who_body(void *arg, size_t i)
{
    struct who *w = arg;

    atomic_fetch_add(&w->calls, 1);
    if (!pthread_equal(pthread_self(), w->caller)) {
        atomic_fetch_add(&w->others, 1);
        return;
    }
    if (i == 0 && w->wait_for_other) {
        struct timespec t0, t;
        (void)clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
            (void)clock_gettime(CLOCK_MONOTONIC, &t);
        } while (!atomic_load(&w->others) && t.tv_sec - t0.tv_sec < 10);
    }
}

static void test_measured(void **state)
{
    (void)state;
    struct sched_pool *p = sched_pool_new(2);
    struct sched_pool_cost light = {0}, heavy = {0};
    struct who w = {.caller = pthread_self()};

    /* The first loop of a call site runs on the caller alone and measures. */
    sched_pool_run_measured(p, &light, 200, 1, who_body, &w);
    assert_int_equal(atomic_load(&w.calls), 200);
    assert_int_equal(atomic_load(&w.others), 0);
    assert_true(light.ewma_ns > 0);
    /* A call site whose loops cost less than the threshold stays there (the cost is set: a
     * measured one depends on the machine, valgrind's included). */
    light.ewma_ns = SCHED_POOL_MIN_PARALLEL_NS / 2;
    sched_pool_run_measured(p, &light, 200, 1, who_body, &w);
    assert_int_equal(atomic_load(&w.calls), 400);
    assert_int_equal(atomic_load(&w.others), 0);

    /* A loop that cost more than the threshold fans out next time: index 0 waits for another
     * thread to run an index, which only a parallel loop can do. */
    heavy.ewma_ns = 2 * SCHED_POOL_MIN_PARALLEL_NS;
    w.wait_for_other = true;
    sched_pool_run_measured(p, &heavy, 200, 1, who_body, &w);
    assert_int_equal(atomic_load(&w.calls), 600);
    assert_true(atomic_load(&w.others) > 0);
    assert_true(heavy.ewma_ns > 0);

    /* Without a pool, or without workers, it is a plain loop. */
    w.wait_for_other = false;
    atomic_store(&w.others, 0);
    sched_pool_run_measured(NULL, &heavy, 10, 0, who_body, &w);
    assert_int_equal(atomic_load(&w.others), 0);
    assert_int_equal(atomic_load(&w.calls), 610);
    sched_pool_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_index_once),
        cmocka_unit_test(test_null_pool),
        cmocka_unit_test(test_cancel),
        cmocka_unit_test(test_measured),
        cmocka_unit_test(test_cancel_outside_a_loop),
        cmocka_unit_test(test_cancel_early_many_loops),
        cmocka_unit_test(test_many_small_loops),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
