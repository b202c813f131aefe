/*
 * Tests for the fleet's FIFO between threads (struct sim_fleet__queue, fleet-int.h), which
 * carries every pod write to its worker and every report to the senders: items come out in the
 * order they went in, also when the ring wraps and then grows with items on both sides of its
 * end (a pod's create must come before its Running); a pop waits for a push from another
 * thread; after quit every pop, waiting or not, returns false; release hands each item still
 * queued to drop (the reports' trees would leak otherwise).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cmocka.h>

#include "sim/fleet-int.h"

struct item {
    size_t seq;
    int tag;
};

static void test_fifo_across_wrap_and_growth(void **state)
{
    struct sim_fleet__queue q;
    struct item it;
    size_t next_in = 0, next_out = 0;

    (void)state;
    sim_fleet__queue_init(&q, sizeof(struct item));
    /* 200 in, 150 out: the head is at 150 of a 256-item ring */
    for (; next_in < 200; next_in++)
        sim_fleet__queue_push(&q, &(struct item){.seq = next_in, .tag = (int)next_in * 3});
    for (; next_out < 150; next_out++) {
        assert_true(sim_fleet__queue_pop(&q, &it));
        assert_int_equal(it.seq, next_out);
    }
    /* 300 more: the ring wraps past its end, then grows with 256 items in it */
    for (; next_in < 500; next_in++)
        sim_fleet__queue_push(&q, &(struct item){.seq = next_in, .tag = (int)next_in * 3});
    assert_true(q.alloc > 256);
    for (; next_out < 500; next_out++) {
        assert_true(sim_fleet__queue_pop(&q, &it));
        assert_int_equal(it.seq, next_out);
        assert_int_equal(it.tag, (int)next_out * 3);
    }
    assert_int_equal(q.n, 0);
    sim_fleet__queue_release(&q, NULL);
}

struct popper {
    struct sim_fleet__queue *q;
    size_t got;
    struct item last;
};

static void *pop_all(void *arg)
{
    struct popper *p = arg;

    while (sim_fleet__queue_pop(p->q, &p->last))
        p->got++;
    return NULL;
}

static void test_pop_waits_and_quit_ends(void **state)
{
    struct sim_fleet__queue q;
    struct popper p = {.q = &q};
    pthread_t th;
    int64_t deadline = (int64_t)time(NULL) + 30;

    (void)state;
    sim_fleet__queue_init(&q, sizeof(struct item));
    assert_int_equal(pthread_create(&th, NULL, pop_all, &p), 0);
    sim_fleet__queue_push(&q, &(struct item){.seq = 7});
    /* the waiting thread takes it (poll with a deadline, no sleep-and-hope) */
    for (;;) {
        size_t n;
        (void)pthread_mutex_lock(&q.mu);
        n = q.n;
        (void)pthread_mutex_unlock(&q.mu);
        if (n == 0)
            break;
        assert_true((int64_t)time(NULL) < deadline);
        (void)nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
    sim_fleet__queue_quit(&q);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(p.got, 1);
    assert_int_equal(p.last.seq, 7);
    /* after quit nothing comes out, even what is pushed */
    sim_fleet__queue_push(&q, &(struct item){.seq = 8});
    assert_false(sim_fleet__queue_pop(&q, &p.last));
    sim_fleet__queue_release(&q, NULL);
}

static size_t dropped, dropped_sum;

static void drop(void *item)
{
    dropped++;
    dropped_sum += ((struct item *)item)->seq;
}

static void test_release_drops_what_is_left(void **state)
{
    struct sim_fleet__queue q;
    struct item it;

    (void)state;
    sim_fleet__queue_init(&q, sizeof(struct item));
    for (size_t i = 0; i < 300; i++)
        sim_fleet__queue_push(&q, &(struct item){.seq = i});
    for (size_t i = 0; i < 100; i++)
        assert_true(sim_fleet__queue_pop(&q, &it));
    sim_fleet__queue_quit(&q);
    sim_fleet__queue_release(&q, drop);
    /* items 100 .. 299, each once */
    assert_int_equal(dropped, 200);
    assert_int_equal(dropped_sum, (100 + 299) * 200 / 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_across_wrap_and_growth),
        cmocka_unit_test(test_pop_waits_and_quit_ends),
        cmocka_unit_test(test_release_drops_what_is_left),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
