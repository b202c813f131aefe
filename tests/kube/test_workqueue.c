/*
 * Tests for kube/workqueue: client-go semantics. Waiting keys deduplicate; a key re-added while
 * processed is handed out again only after done(), so two workers never hold it at once;
 * add_after and add_rate_limited delay keys (exponential per key, reset by forget); shutdown
 * drains queued and processing keys and then get() says -ESHUTDOWN.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/base.h"
#include "kube/workqueue.h"

static double now(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *get(struct kube_workqueue *q)
{
    char *k = NULL;

    assert_int_equal(kube_workqueue_get(q, &k), 0);
    return k;
}

static void test_dedupe_and_fifo(void **state)
{
    struct kube_workqueue *q = kube_workqueue_new(NULL);
    char *k;

    (void)state;
    kube_workqueue_add(q, "a");
    kube_workqueue_add(q, "b");
    kube_workqueue_add(q, "a");
    assert_int_equal(kube_workqueue_len(q), 2);
    k = get(q);
    assert_string_equal(k, "a");
    /* Re-added while processing: not handed out until done. */
    kube_workqueue_add(q, "a");
    kube_workqueue_add(q, "a");
    assert_int_equal(kube_workqueue_len(q), 1);
    kube_workqueue_done(q, k);
    free(k);
    assert_int_equal(kube_workqueue_len(q), 2);
    k = get(q);
    assert_string_equal(k, "b");
    kube_workqueue_done(q, k);
    free(k);
    k = get(q);
    assert_string_equal(k, "a");
    kube_workqueue_done(q, k);
    free(k);
    assert_int_equal(kube_workqueue_len(q), 0);
    kube_workqueue_shutdown(q);
    assert_int_equal(kube_workqueue_get(q, &k), -ESHUTDOWN);
    kube_workqueue_free(q);
}

struct workers {
    struct kube_workqueue *q;
    atomic_int in_flight[4]; /* per key */
    atomic_int overlaps;
    atomic_int processed;
};

static void *worker(void *arg)
{
    struct workers *w = arg;
    char *k;

    while (kube_workqueue_get(w->q, &k) == 0) {
        int idx = k[0] - 'a';
        struct timespec pause = {0, 200000};

        if (atomic_fetch_add(&w->in_flight[idx], 1) != 0)
            atomic_fetch_add(&w->overlaps, 1);
        /* Hold the key a moment so other workers would collide if they could get it. */
        (void)nanosleep(&pause, NULL);
        atomic_fetch_sub(&w->in_flight[idx], 1);
        atomic_fetch_add(&w->processed, 1);
        kube_workqueue_done(w->q, k);
        free(k);
    }
    return NULL;
}

static void test_never_two_workers_on_one_key(void **state)
{
    struct workers w = {.q = kube_workqueue_new(NULL)};
    pthread_t t[4];
    static const char *const keys[] = {"a", "b", "c", "d"};

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(t); i++)
        assert_int_equal(pthread_create(&t[i], NULL, worker, &w), 0);
    for (int i = 0; i < 400; i++)
        kube_workqueue_add(w.q, keys[i % 4]);
    /* Drains: every queued key is processed before shutdown returns. */
    kube_workqueue_shutdown_drain(w.q);
    assert_int_equal(kube_workqueue_len(w.q), 0);
    for (size_t i = 0; i < ARRAY_SIZE(t); i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(atomic_load(&w.overlaps), 0);
    assert_true(atomic_load(&w.processed) >= 4);
    assert_true(atomic_load(&w.processed) <= 400);
    assert_int_equal(kube_workqueue_len(w.q), 0);
    kube_workqueue_free(w.q);
}

static void test_add_after_and_backoff(void **state)
{
    struct kube_workqueue_opts o = {.base_delay_ms = 20, .max_delay_ms = 80};
    struct kube_workqueue *q = kube_workqueue_new(&o);
    double t0;
    char *k;

    (void)state;
    t0 = now();
    kube_workqueue_add_after(q, "later", 50);
    kube_workqueue_add_after(q, "later", 500); /* the earlier one wins */
    assert_int_equal(kube_workqueue_len(q), 0);
    k = get(q);
    assert_string_equal(k, "later");
    assert_true(now() - t0 >= 0.05);
    assert_true(now() - t0 < 0.45);
    kube_workqueue_done(q, k);
    free(k);

    /* 20, 40, 80, 80 ms: exponential per key, capped. */
    for (unsigned i = 0; i < 4; i++) {
        double want = i == 0 ? 0.02 : i == 1 ? 0.04 : 0.08;

        assert_int_equal(kube_workqueue_num_requeues(q, "k"), i);
        t0 = now();
        kube_workqueue_add_rate_limited(q, "k");
        k = get(q);
        assert_true(now() - t0 >= want);
        kube_workqueue_done(q, k);
        free(k);
    }
    kube_workqueue_forget(q, "k");
    assert_int_equal(kube_workqueue_num_requeues(q, "k"), 0);

    /* Delayed keys not yet due are dropped at shutdown. */
    kube_workqueue_add_after(q, "never", 60000);
    kube_workqueue_add(q, "queued");
    kube_workqueue_shutdown(q);
    kube_workqueue_add(q, "after-shutdown");
    k = get(q);
    assert_string_equal(k, "queued");
    kube_workqueue_done(q, k);
    free(k);
    assert_int_equal(kube_workqueue_get(q, &k), -ESHUTDOWN);
    kube_workqueue_free(q);
}

struct blocked {
    struct kube_workqueue *q;
    atomic_int result;
};

static void *blocked_get(void *arg)
{
    struct blocked *b = arg;
    char *k = NULL;
    int r = kube_workqueue_get(b->q, &k);

    atomic_store(&b->result, r);
    free(k);
    return NULL;
}

static void test_shutdown_wakes_waiters(void **state)
{
    struct blocked b = {.q = kube_workqueue_new(NULL), .result = 1};
    pthread_t t;

    (void)state;
    assert_int_equal(pthread_create(&t, NULL, blocked_get, &b), 0);
    kube_workqueue_shutdown(b.q);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(atomic_load(&b.result), -ESHUTDOWN);
    kube_workqueue_shutdown(b.q); /* idempotent */
    kube_workqueue_free(b.q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dedupe_and_fifo),
        cmocka_unit_test(test_never_two_workers_on_one_key),
        cmocka_unit_test(test_add_after_and_backoff),
        cmocka_unit_test(test_shutdown_wakes_waiters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
