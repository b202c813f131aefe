/*
 * Tests for agent/metriccache: upstream's query semantics (reference koordlet-and-scheduler.md
 * 2.2, 2.5) on small sets worked out by hand, windows, ring wraparound and re-basing, series
 * lifecycle (drop, drop by owner, GC) and its memory accounting, the sizing of a full node, and
 * one writer racing readers (for TSan, ASan and valgrind; the invariants are checked after join).
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/metriccache/metriccache.h"
#include "base/base.h"

#define S_MS 1000 /* one second */

static struct mc *new_cache(const struct mc_config *cfg)
{
    struct mc *mc = NULL;

    assert_int_equal(mc_new(cfg, &mc), 0);
    assert_non_null(mc);
    return mc;
}

/* Appends values v[0..n) to the node CPU series at 1 s, 2 s, ... */
static void append_node(struct mc *mc, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        assert_int_equal(
            mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, (int64_t)(i + 1) * S_MS, v[i]), 0);
}

static const struct mc_select node_cpu = {MC_NODE_CPU_USAGE, NULL, NULL};

/* ---- aggregation semantics on hand-computed sets ---- */

static void test_single_point(void **state)
{
    struct mc *mc = new_cache(NULL);
    struct mc_scratch sc = MC_SCRATCH_INIT;
    struct mc_result r;

    (void)state;
    append_node(mc, (const double[]){5.0}, 1);
    assert_int_equal(mc_query(mc, &node_cpu, 0, 10 * S_MS, &sc, &r), 0);
    assert_int_equal(r.count, 1);
    assert_int_equal(r.series, 1);
    assert_true(r.avg == 5.0 && r.sum == 5.0 && r.last == 5.0);
    assert_int_equal(r.first_ms, S_MS);
    assert_int_equal(r.last_ms, S_MS);
    assert_int_equal(mc_result_duration_ms(&r), 0);
    /* int(1 x p) - 1 = -1 for every p < 1: clamped to index 0. */
    assert_true(mc_percentile(&sc, 0.5) == 5.0);
    assert_true(mc_percentile(&sc, 0.99) == 5.0);
    assert_true(mc_percentile(&sc, 1.0) == 5.0);
    mc_scratch_release(&sc);
    mc_free(mc);
}

static void test_unsorted_input(void **state)
{
    struct mc *mc = new_cache(NULL);
    struct mc_scratch sc = MC_SCRATCH_INIT;
    struct mc_result r;

    (void)state;
    /* Sorted: 10 20 30 40. */
    append_node(mc, (const double[]){40, 10, 30, 20}, 4);
    assert_int_equal(mc_query(mc, &node_cpu, 0, 10 * S_MS, &sc, &r), 0);
    assert_int_equal(r.count, 4);
    assert_true(r.avg == 25.0);
    assert_true(r.last == 20.0); /* the newest point, not the largest */
    assert_int_equal(mc_result_duration_ms(&r), 3 * S_MS);
    assert_true(mc_percentile(&sc, 0.5) == 20.0);  /* int(2.0) - 1 = 1 */
    assert_true(mc_percentile(&sc, 0.9) == 30.0);  /* int(3.6) - 1 = 2 */
    assert_true(mc_percentile(&sc, 0.95) == 30.0); /* int(3.8) - 1 = 2 */
    assert_true(mc_percentile(&sc, 0.99) == 30.0); /* int(3.96) - 1 = 2 */
    assert_true(mc_percentile(&sc, 0.2) == 10.0);  /* int(0.8) - 1 = -1 -> 0 */
    assert_true(mc_percentile(&sc, 1.0) == 40.0);  /* int(4) - 1 = 3 */
    mc_scratch_release(&sc);
    mc_free(mc);
}

static void test_three_points(void **state)
{
    struct mc *mc = new_cache(NULL);
    struct mc_scratch sc = MC_SCRATCH_INIT;
    struct mc_result r;

    (void)state;
    append_node(mc, (const double[]){9, 7, 8}, 3);
    assert_int_equal(mc_query(mc, &node_cpu, 0, 10 * S_MS, &sc, &r), 0);
    assert_true(r.avg == 8.0);
    assert_true(mc_percentile(&sc, 0.5) == 7.0);  /* int(1.5) - 1 = 0: the minimum */
    assert_true(mc_percentile(&sc, 0.9) == 8.0);  /* int(2.7) - 1 = 1 */
    assert_true(mc_percentile(&sc, 0.99) == 8.0); /* int(2.97) - 1 = 1: never the maximum */
    mc_scratch_release(&sc);
    mc_free(mc);
}

static void test_duplicates(void **state)
{
    struct mc *mc = new_cache(NULL);
    struct mc_scratch sc = MC_SCRATCH_INIT;
    struct mc_result r;

    (void)state;
    /* Sorted: 1 1 2 2 3 3 3 3 3 3; sum 24. */
    append_node(mc, (const double[]){3, 1, 3, 3, 2, 1, 3, 2, 3, 3}, 10);
    assert_int_equal(mc_query(mc, &node_cpu, 0, 100 * S_MS, &sc, &r), 0);
    assert_int_equal(r.count, 10);
    assert_true(r.sum == 24.0);
    assert_true(fabs(r.avg - 2.4) < 1e-12);
    assert_true(mc_percentile(&sc, 0.2) == 1.0);  /* int(2) - 1 = 1 */
    assert_true(mc_percentile(&sc, 0.3) == 2.0);  /* int(3) - 1 = 2 */
    assert_true(mc_percentile(&sc, 0.5) == 3.0);  /* int(5) - 1 = 4 */
    assert_true(mc_percentile(&sc, 0.9) == 3.0);  /* int(9) - 1 = 8 */
    assert_true(mc_percentile(&sc, 0.99) == 3.0); /* int(9.9) - 1 = 8 */
    mc_scratch_release(&sc);
    mc_free(mc);
}

static void test_twenty_shuffled(void **state)
{
    static const double v[20] = {7,  19, 3,  12, 1, 20, 15, 9, 4,  17,
                                 11, 2,  14, 18, 6, 10, 16, 5, 13, 8};
    struct mc *mc = new_cache(NULL);
    struct mc_scratch sc = MC_SCRATCH_INIT;
    struct mc_result r;

    (void)state;
    append_node(mc, v, 20);
    assert_int_equal(mc_query(mc, &node_cpu, 0, 100 * S_MS, &sc, &r), 0);
    assert_true(r.avg == 10.5);
    assert_true(r.last == 8.0);
    /* Sorted it is 1..20, so element i is i + 1. */
    assert_true(mc_percentile(&sc, 0.5) == 10.0);  /* int(10) - 1 = 9 */
    assert_true(mc_percentile(&sc, 0.9) == 18.0);  /* int(18) - 1 = 17 */
    assert_true(mc_percentile(&sc, 0.95) == 19.0); /* 20 x 0.95 rounds to 19.0: 18 */
    assert_true(mc_percentile(&sc, 0.99) == 19.0); /* int(19.8) - 1 = 18 */
    /* Asking again after the selections reordered the buffer gives the same answers. */
    assert_true(mc_percentile(&sc, 0.5) == 10.0);
    assert_true(mc_percentile(&sc, 0.9) == 18.0);
    mc_scratch_release(&sc);
    mc_free(mc);
}

/* A full 30 min ring of one value: the selection must stay linear on duplicates. */
static void test_constant_series(void **state)
{
    struct mc *mc = new_cache(NULL);
    struct mc_scratch sc = MC_SCRATCH_INIT;
    struct mc_result r;
    uint32_t cap = mc_kind_capacity(mc, MC_NODE_CPU_USAGE);

    (void)state;
    assert_int_equal(cap, 1801);
    for (uint32_t i = 0; i < cap; i++)
        assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, (int64_t)i * S_MS, 0.0), 0);
    assert_int_equal(mc_query(mc, &node_cpu, 0, INT64_MAX, &sc, &r), 0);
    assert_int_equal(r.count, 1801);
    assert_int_equal(mc_result_duration_ms(&r), 1800 * S_MS);
    assert_true(r.avg == 0.0);
    assert_true(mc_percentile(&sc, 0.99) == 0.0);
    assert_true(mc_percentile(&sc, 0.5) == 0.0);
    mc_scratch_release(&sc);
    mc_free(mc);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* xorshift64: a fixed sequence, so a failure reproduces. */
static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The selection against sorting, over many sizes and value shapes (few distinct, sorted,
 * reversed, random), at upstream's percentiles and the edges. */
static void test_percentile_matches_sort(void **state)
{
    static const double ps[] = {0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 1.0};
    struct mc_scratch sc = MC_SCRATCH_INIT;
    double *sorted = calloc(2000, sizeof(double));
    uint64_t seed = 0x9e3779b97f4a7c15ULL;

    (void)state;
    assert_non_null(sorted);
    for (size_t n = 1; n <= 2000; n += n < 64 ? 1 : 97) {
        for (int shape = 0; shape < 4; shape++) {
            for (size_t pi = 0; pi < ARRAY_SIZE(ps); pi++) {
                size_t k = (size_t)((double)n * ps[pi]);
                double want;

                sc.n = 0;
                if (sc.alloc < n) {
                    sc.v = realloc(sc.v, n * sizeof(double));
                    assert_non_null(sc.v);
                    sc.alloc = n;
                }
                for (size_t i = 0; i < n; i++) {
                    uint64_t x = next_rand(&seed);
                    sc.v[i] = shape == 0   ? (double)(x % 5)
                              : shape == 1 ? (double)i
                              : shape == 2 ? (double)(n - i)
                                           : (double)(x % 100000) / 1000.0;
                }
                sc.n = n;
                memcpy(sorted, sc.v, n * sizeof(double));
                qsort(sorted, n, sizeof(double), cmp_double);
                want = sorted[k > 0 ? k - 1 : 0];
                if (mc_percentile(&sc, ps[pi]) != want)
                    fail_msg("n=%zu shape=%d p=%g: want %g", n, shape, ps[pi], want);
            }
        }
    }
    free(sorted);
    mc_scratch_release(&sc);
}

/* ---- windows ---- */

static void test_window_bounds(void **state)
{
    struct mc *mc = new_cache(NULL);
    struct mc_scratch sc = MC_SCRATCH_INIT;
    struct mc_result r = {0};

    (void)state;
    /* Values 1..10 at 1 s..10 s. */
    append_node(mc, (const double[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10);

    /* Both ends inclusive. */
    assert_int_equal(mc_query(mc, &node_cpu, 3 * S_MS, 5 * S_MS, &sc, &r), 0);
    assert_int_equal(r.count, 3);
    assert_int_equal(sc.n, 3);
    assert_true(r.avg == 4.0 && r.last == 5.0);
    assert_int_equal(r.first_ms, 3 * S_MS);
    assert_int_equal(r.last_ms, 5 * S_MS);

    assert_int_equal(mc_query(mc, &node_cpu, 3 * S_MS + 1, 5 * S_MS - 1, NULL, &r), 0);
    assert_int_equal(r.count, 1);
    assert_true(r.avg == 4.0);

    assert_int_equal(mc_query(mc, &node_cpu, 10 * S_MS, 10 * S_MS, NULL, &r), 0);
    assert_int_equal(r.count, 1);
    assert_true(r.last == 10.0);
    assert_int_equal(mc_query(mc, &node_cpu, 1 * S_MS, 1 * S_MS, NULL, &r), 0);
    assert_true(r.last == 1.0);

    /* The QoS strategies' "last in 2 s" at now = 10.5 s. */
    assert_int_equal(mc_query(mc, &node_cpu, 10500 - 2 * S_MS, 10500, NULL, &r), 0);
    assert_int_equal(r.count, 2);
    assert_true(r.last == 10.0);

    /* Nothing inside: -ENODATA, ret untouched, scratch emptied. */
    r.count = 77;
    assert_int_equal(mc_query(mc, &node_cpu, 0, S_MS - 1, &sc, &r), -ENODATA);
    assert_int_equal(r.count, 77);
    assert_int_equal(sc.n, 0);
    assert_int_equal(mc_query(mc, &node_cpu, 10 * S_MS + 1, 20 * S_MS, NULL, &r), -ENODATA);
    assert_int_equal(mc_query(mc, &node_cpu, 5500, 5600, NULL, &r), -ENODATA);
    assert_int_equal(mc_query(mc, &node_cpu, 5 * S_MS, 4 * S_MS, NULL, &r), -EINVAL);
    assert_int_equal(mc_query(mc, &(struct mc_select){MC_KIND_COUNT, NULL, NULL}, 0, 1, NULL, &r),
                     -EINVAL);
    assert_int_equal(
        mc_query(mc, &(struct mc_select){MC_POD_CPU_USAGE, "nope", NULL}, 0, INT64_MAX, NULL, &r),
        -ENODATA);
    /* The whole range of int64 is a valid window. */
    assert_int_equal(mc_query(mc, &node_cpu, INT64_MIN, INT64_MAX, NULL, &r), 0);
    assert_int_equal(r.count, 10);
    mc_scratch_release(&sc);
    mc_free(mc);
}

/* ---- the ring ---- */

static void test_wraparound(void **state)
{
    struct mc_config cfg = {.interval_ms = S_MS};
    struct mc *mc;
    struct mc_scratch sc = MC_SCRATCH_INIT;
    struct mc_result r;
    struct mc_stats st;

    (void)state;
    cfg.retention_ms[MC_NODE_CPU_USAGE] = 5 * S_MS; /* 5 s at 1 s: 6 points, bounds included */
    mc = new_cache(&cfg);
    assert_int_equal(mc_kind_capacity(mc, MC_NODE_CPU_USAGE), 6);

    for (int i = 1; i <= 4; i++)
        assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, i * S_MS, i), 0);
    mc_stats(mc, &st);
    assert_int_equal(st.points, 4);
    assert_int_equal(st.capacity, 6);

    for (int i = 5; i <= 20; i++)
        assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, i * S_MS, i), 0);
    mc_stats(mc, &st);
    assert_int_equal(st.points, 6);
    assert_int_equal(st.series, 1);

    /* Only 15..20 are left. */
    assert_int_equal(mc_query(mc, &node_cpu, 0, INT64_MAX, &sc, &r), 0);
    assert_int_equal(r.count, 6);
    assert_int_equal(r.first_ms, 15 * S_MS);
    assert_int_equal(r.last_ms, 20 * S_MS);
    assert_true(r.avg == 17.5);
    assert_true(r.last == 20.0);
    assert_true(mc_percentile(&sc, 0.5) == 17.0); /* int(3) - 1 = 2 of 15..20 */
    assert_int_equal(mc_query(mc, &node_cpu, 0, 15 * S_MS - 1, NULL, &r), -ENODATA);
    /* A window across the physical end of the array (head is not 0 now). */
    assert_int_equal(mc_query(mc, &node_cpu, 16 * S_MS, 19 * S_MS, &sc, &r), 0);
    assert_int_equal(r.count, 4);
    assert_true(r.sum == 16 + 17 + 18 + 19);
    assert_true(mc_percentile(&sc, 1.0) == 19.0);
    mc_scratch_release(&sc);
    mc_free(mc);
}

static void test_out_of_order(void **state)
{
    struct mc *mc = new_cache(NULL);
    struct mc_result r;

    (void)state;
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, 2000, 1.0), 0);
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, 1999, 2.0), -ERANGE);
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, 2000, 3.0), -EEXIST);
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, 2001, 4.0), 0);
    assert_int_equal(mc_query(mc, &node_cpu, 0, INT64_MAX, NULL, &r), 0);
    assert_int_equal(r.count, 2);
    assert_true(r.sum == 5.0);
    /* Each series has its own clock. */
    assert_int_equal(mc_append(mc, MC_NODE_MEMORY_USAGE, NULL, NULL, 1000, 1.0), 0);
    mc_free(mc);
}

/* Offsets are uint32 ms from a per-series base; a jump past 2^32 ms re-bases the ring. */
static void test_rebase(void **state)
{
    const int64_t big = INT64_C(1) << 32; /* ~49.7 days in ms */
    struct mc *mc = new_cache(NULL);
    struct mc_result r;
    struct mc_stats st;

    (void)state;
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, 0, 1.0), 0);
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, 1000, 2.0), 0);
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, big - 1000, 3.0), 0);
    /* big + 10 - 0 > 2^32 - 1: the point at 0 goes, 1000 becomes the base. */
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, big + 10, 4.0), 0);
    mc_stats(mc, &st);
    assert_int_equal(st.points, 3);
    assert_int_equal(mc_query(mc, &node_cpu, INT64_MIN, INT64_MAX, NULL, &r), 0);
    assert_int_equal(r.count, 3);
    assert_int_equal(r.first_ms, 1000);
    assert_int_equal(r.last_ms, big + 10);
    assert_true(r.sum == 9.0 && r.last == 4.0);
    assert_int_equal(mc_query(mc, &node_cpu, big - 1000, big - 1000, NULL, &r), 0);
    assert_true(r.last == 3.0);

    /* A gap longer than 2^32 ms leaves only the new point. */
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, 5 * big, 5.0), 0);
    assert_int_equal(mc_query(mc, &node_cpu, INT64_MIN, INT64_MAX, NULL, &r), 0);
    assert_int_equal(r.count, 1);
    assert_int_equal(r.first_ms, 5 * big);
    /* Timestamps far from the epoch work the same. */
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, INT64_MAX - 1, 6.0), 0);
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, INT64_MAX, 7.0), 0);
    assert_int_equal(mc_query(mc, &node_cpu, INT64_MAX - 1, INT64_MAX, NULL, &r), 0);
    assert_int_equal(r.count, 2);
    assert_true(r.last == 7.0);
    mc_stats(mc, &st);
    assert_int_equal(st.points, 2);
    mc_free(mc);
}

static void test_set_retention(void **state)
{
    struct mc *mc = new_cache(NULL);
    struct mc_result r;
    struct mc_stats st, before;

    (void)state;
    for (int i = 1; i <= 100; i++) {
        assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, "pod-a", NULL, i * S_MS, i), 0);
        assert_int_equal(mc_append(mc, MC_POD_MEMORY_USAGE, "pod-a", NULL, i * S_MS, i), 0);
    }
    mc_stats(mc, &before);
    assert_int_equal(before.capacity, 2 * 301);

    /* Shrink to 10 s: 11 points, the newest kept. */
    assert_int_equal(mc_set_retention(mc, MC_POD_CPU_USAGE, 10 * S_MS), 0);
    assert_int_equal(mc_kind_capacity(mc, MC_POD_CPU_USAGE), 11);
    mc_stats(mc, &st);
    assert_int_equal(st.capacity, 301 + 11);
    assert_int_equal(st.points, 100 + 11);
    assert_int_equal(st.bytes, before.bytes - (301 - 11) * MC_POINT_BYTES);
    assert_int_equal(
        mc_query(mc, &(struct mc_select){MC_POD_CPU_USAGE, "pod-a", NULL}, 0, INT64_MAX, NULL, &r),
        0);
    assert_int_equal(r.count, 11);
    assert_int_equal(r.first_ms, 90 * S_MS);
    /* New points still go in, in order. */
    assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, "pod-a", NULL, 101 * S_MS, 101), 0);
    assert_int_equal(
        mc_query(mc, &(struct mc_select){MC_POD_CPU_USAGE, "pod-a", NULL}, 0, INT64_MAX, NULL, &r),
        0);
    assert_int_equal(r.count, 11);
    assert_int_equal(r.first_ms, 91 * S_MS);
    assert_true(r.last == 101.0);

    /* Back to the default (0): everything kept still there, room for more. */
    assert_int_equal(mc_set_retention(mc, MC_POD_CPU_USAGE, 0), 0);
    mc_stats(mc, &st);
    assert_int_equal(st.capacity, 2 * 301);
    assert_int_equal(st.bytes, before.bytes);
    assert_int_equal(
        mc_query(mc, &(struct mc_select){MC_POD_CPU_USAGE, "pod-a", NULL}, 0, INT64_MAX, NULL, &r),
        0);
    assert_int_equal(r.count, 11);
    assert_int_equal(mc_set_retention(mc, MC_POD_CPU_USAGE, -1), -EINVAL);
    assert_int_equal(mc_set_retention(mc, MC_KIND_COUNT, 1), -EINVAL);
    mc_free(mc);
}

/* ---- configuration, kinds and argument checks ---- */

static void test_config(void **state)
{
    struct mc_config cfg = {.interval_ms = 2 * S_MS};
    struct mc *mc = NULL;

    (void)state;
    cfg.retention_ms[MC_POD_CPU_USAGE] = 2500; /* ceil(1.25) + 1 */
    mc = new_cache(&cfg);
    assert_int_equal(mc_kind_capacity(mc, MC_NODE_CPU_USAGE), 901);
    assert_int_equal(mc_kind_capacity(mc, MC_SYS_MEMORY_USAGE), 901);
    assert_int_equal(mc_kind_capacity(mc, MC_POD_MEMORY_USAGE), 151);
    assert_int_equal(mc_kind_capacity(mc, MC_POD_CPU_USAGE), 3);
    assert_int_equal(mc_kind_capacity(mc, MC_CONTAINER_CPU_USAGE), 6); /* 10 s / 2 s + 1 */
    assert_int_equal(mc_kind_capacity(mc, MC_KIND_COUNT), 0);
    mc_free(mc);

    mc = new_cache(NULL);
    assert_int_equal(mc_kind_capacity(mc, MC_NODE_CPU_USAGE), 1801);
    assert_int_equal(mc_kind_capacity(mc, MC_NODE_MEMORY_USAGE_WITH_PAGE_CACHE), 1801);
    assert_int_equal(mc_kind_capacity(mc, MC_SYS_CPU_USAGE), 1801);
    assert_int_equal(mc_kind_capacity(mc, MC_NODE_BE), 301);
    assert_int_equal(mc_kind_capacity(mc, MC_POD_MEMORY_USAGE_WITH_PAGE_CACHE), 301);
    /* Read only as "last in 2 s": 10 s kept. */
    assert_int_equal(mc_kind_capacity(mc, MC_POD_CPU_THROTTLED), 11);
    assert_int_equal(mc_kind_capacity(mc, MC_CONTAINER_CPU_USAGE), 11);
    assert_int_equal(mc_kind_capacity(mc, MC_CONTAINER_MEMORY_USAGE), 11);
    assert_int_equal(mc_kind_capacity(mc, MC_CONTAINER_MEMORY_USAGE_WITH_PAGE_CACHE), 11);
    assert_int_equal(mc_kind_capacity(mc, MC_CONTAINER_CPU_THROTTLED), 11);
    mc_free(mc);

    mc = NULL;
    cfg = (struct mc_config){.interval_ms = -1};
    assert_int_equal(mc_new(&cfg, &mc), -EINVAL);
    cfg = (struct mc_config){0};
    cfg.retention_ms[MC_HOST_APP_CPU_USAGE] = -5;
    assert_int_equal(mc_new(&cfg, &mc), -EINVAL);
    cfg.retention_ms[MC_HOST_APP_CPU_USAGE] = (int64_t)MC_MAX_CAPACITY * S_MS;
    assert_int_equal(mc_new(&cfg, &mc), -EINVAL);
    cfg.retention_ms[MC_HOST_APP_CPU_USAGE] = INT64_MAX;
    assert_int_equal(mc_new(&cfg, &mc), -EINVAL);
    assert_null(mc);

    assert_string_equal(mc_kind_name(MC_NODE_CPU_USAGE), "node_cpu_usage");
    assert_string_equal(mc_kind_name(MC_CONTAINER_MEMORY_USAGE_WITH_PAGE_CACHE),
                        "container_memory_usage_with_page_cache");
    assert_string_equal(mc_kind_name(MC_HOST_APP_CPU_USAGE), "host_application_cpu_usage");
    assert_string_equal(mc_kind_name(MC_KIND_COUNT), "unknown");
    for (int k = 0; k < MC_KIND_COUNT; k++)
        assert_string_not_equal(mc_kind_name((enum mc_kind)k), "unknown");
}

static void test_append_checks(void **state)
{
    struct mc *mc = new_cache(NULL);
    char long_id[MC_ID_MAX + 2];

    (void)state;
    memset(long_id, 'x', sizeof(long_id) - 1);
    long_id[MC_ID_MAX + 1] = '\0';

    /* Node kinds take no id and no owner; "" is no id. */
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, "x", NULL, 1, 1), -EINVAL);
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, "o", 1, 1), -EINVAL);
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, "", NULL, 1, 1), 0);
    /* Pod kinds need an id; an owner, if given, is the same UID. */
    assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, NULL, NULL, 1, 1), -EINVAL);
    assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, "", NULL, 1, 1), -EINVAL);
    assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, "uid-1", "uid-2", 1, 1), -EINVAL);
    assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, "uid-1", "uid-1", 1, 1), 0);
    /* Container kinds need the pod UID, and keep the first one. */
    assert_int_equal(mc_append(mc, MC_CONTAINER_CPU_USAGE, "c-1", NULL, 1, 1), -EINVAL);
    assert_int_equal(mc_append(mc, MC_CONTAINER_CPU_USAGE, "c-1", "uid-1", 1, 1), 0);
    assert_int_equal(mc_append(mc, MC_CONTAINER_CPU_USAGE, "c-1", "uid-2", 2, 1), -EINVAL);
    assert_int_equal(mc_append(mc, MC_CONTAINER_CPU_USAGE, "c-1", "uid-1", 2, 1), 0);
    /* Other kinds: id required, owner optional but fixed. */
    assert_int_equal(mc_append(mc, MC_NODE_BE, NULL, NULL, 1, 1), -EINVAL);
    assert_int_equal(mc_append(mc, MC_NODE_BE, MC_BE_CPU_USAGE, NULL, 1, 1), 0);
    assert_int_equal(mc_append(mc, MC_NODE_BE, MC_BE_CPU_USAGE, "o", 2, 1), -EINVAL);
    assert_int_equal(mc_append(mc, MC_HOST_APP_CPU_USAGE, "nginx", "app/nginx", 1, 1), 0);
    assert_int_equal(mc_append(mc, MC_HOST_APP_CPU_USAGE, "nginx", NULL, 2, 1), -EINVAL);
    /* Lengths, kinds, timestamps, values. */
    assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, long_id, NULL, 1, 1), -EINVAL);
    long_id[MC_ID_MAX] = '\0';
    assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, long_id, NULL, 1, 1), 0);
    assert_int_equal(mc_append(mc, MC_CONTAINER_CPU_USAGE, "c-2", "", 1, 1), -EINVAL);
    assert_int_equal(mc_append(mc, MC_KIND_COUNT, NULL, NULL, 1, 1), -EINVAL);
    assert_int_equal(mc_append(mc, (enum mc_kind) - 1, NULL, NULL, 1, 1), -EINVAL);
    assert_int_equal(mc_append(mc, MC_NODE_MEMORY_USAGE, NULL, NULL, -1, 1), -EINVAL);
    assert_int_equal(mc_append(mc, MC_NODE_MEMORY_USAGE, NULL, NULL, 1, NAN), -EINVAL);
    assert_int_equal(mc_append(mc, MC_NODE_MEMORY_USAGE, NULL, NULL, 1, INFINITY), -EINVAL);
    assert_int_equal(mc_append(mc, MC_NODE_MEMORY_USAGE, NULL, NULL, 1, -INFINITY), -EINVAL);
    assert_int_equal(mc_append(mc, MC_NODE_MEMORY_USAGE, NULL, NULL, 0, -0.5), 0);
    mc_free(mc);
}

static void test_max_series(void **state)
{
    struct mc_config cfg = {.max_series = 2};
    struct mc *mc = new_cache(&cfg);
    struct mc_stats st;

    (void)state;
    assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, "a", NULL, 1, 1), 0);
    assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, "b", NULL, 1, 1), 0);
    assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, "c", NULL, 1, 1), -ENOSPC);
    assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, "a", NULL, 2, 1), 0);
    mc_stats(mc, &st);
    assert_int_equal(st.series, 2);
    assert_int_equal(mc_drop(mc, MC_POD_CPU_USAGE, "a"), 0);
    assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, "c", NULL, 1, 1), 0);
    mc_free(mc);
}

/* ---- sets of series, lifecycle and memory ---- */

/* Pod uid-1 with containers c1 and c2, pod uid-2 with c3. */
static void add_pods(struct mc *mc)
{
    for (int i = 1; i <= 2; i++) {
        int64_t ts = i * S_MS;
        assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, "uid-1", NULL, ts, 2 * i), 0);
        assert_int_equal(mc_append(mc, MC_POD_MEMORY_USAGE, "uid-1", NULL, ts, 100 * i), 0);
        assert_int_equal(mc_append(mc, MC_CONTAINER_CPU_USAGE, "c1", "uid-1", ts, i), 0);
        assert_int_equal(mc_append(mc, MC_CONTAINER_MEMORY_USAGE, "c1", "uid-1", ts, 50 * i), 0);
        assert_int_equal(mc_append(mc, MC_CONTAINER_CPU_USAGE, "c2", "uid-1", ts, i + 2), 0);
        assert_int_equal(mc_append(mc, MC_CONTAINER_MEMORY_USAGE, "c2", "uid-1", ts, 50 * i), 0);
        assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, "uid-2", NULL, ts, 10), 0);
        assert_int_equal(mc_append(mc, MC_CONTAINER_CPU_USAGE, "c3", "uid-2", ts, 10), 0);
    }
}

static void test_sets(void **state)
{
    struct mc *mc = new_cache(NULL);
    struct mc_scratch sc = MC_SCRATCH_INIT;
    struct mc_result r;

    (void)state;
    add_pods(mc);

    /* A pod's containers, pooled: c1 = {1, 2}, c2 = {3, 4}. */
    assert_int_equal(mc_query(mc, &(struct mc_select){MC_CONTAINER_CPU_USAGE, NULL, "uid-1"}, 0,
                              INT64_MAX, &sc, &r),
                     0);
    assert_int_equal(r.count, 4);
    assert_int_equal(r.series, 2);
    assert_true(r.avg == 2.5);
    assert_int_equal(sc.n, 4);
    assert_true(mc_percentile(&sc, 0.5) == 2.0); /* int(2) - 1 = 1 of 1 2 3 4 */
    /* Both end at 2 s: the series created first (c1) gives last. */
    assert_int_equal(r.last_ms, 2 * S_MS);
    assert_true(r.last == 2.0);
    /* The owner's other kinds stay out. */
    assert_int_equal(mc_query(mc, &(struct mc_select){MC_CONTAINER_MEMORY_USAGE, NULL, "uid-1"}, 0,
                              INT64_MAX, NULL, &r),
                     0);
    assert_true(r.sum == 50 + 100 + 50 + 100);
    /* By owner, the pod's own series is found too. */
    assert_int_equal(
        mc_query(mc, &(struct mc_select){MC_POD_CPU_USAGE, NULL, "uid-1"}, 0, INT64_MAX, NULL, &r),
        0);
    assert_true(r.sum == 6.0);
    /* One series by id. */
    assert_int_equal(mc_query(mc, &(struct mc_select){MC_CONTAINER_CPU_USAGE, "c2", NULL}, 0,
                              INT64_MAX, NULL, &r),
                     0);
    assert_true(r.avg == 3.5);
    /* A whole kind: every pod. uid-1 {2, 4}, uid-2 {10, 10}. */
    assert_int_equal(
        mc_query(mc, &(struct mc_select){MC_POD_CPU_USAGE, NULL, NULL}, 0, INT64_MAX, &sc, &r), 0);
    assert_int_equal(r.count, 4);
    assert_int_equal(r.series, 2);
    assert_true(r.sum == 26.0);
    assert_true(r.last == 4.0);
    assert_true(mc_percentile(&sc, 1.0) == 10.0);
    /* Unknown owner. */
    assert_int_equal(mc_query(mc, &(struct mc_select){MC_CONTAINER_CPU_USAGE, NULL, "uid-9"}, 0,
                              INT64_MAX, NULL, &r),
                     -ENODATA);
    mc_scratch_release(&sc);
    mc_free(mc);
}

static void test_drop_frees(void **state)
{
    struct mc *mc = new_cache(NULL);
    struct mc_stats base, st;
    struct mc_result r;

    (void)state;
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, S_MS, 1), 0);
    mc_stats(mc, &base);
    assert_int_equal(base.series, 1);
    assert_int_equal(base.owners, 0);

    add_pods(mc);
    mc_stats(mc, &st);
    assert_int_equal(st.series, 1 + 8);
    assert_int_equal(st.owners, 2);
    assert_int_equal(st.points, 1 + 8 * 2);
    /* 3 pod series of 301 points, 5 container series of 11. */
    assert_int_equal(st.capacity, 1801 + 3 * 301 + 5 * 11);
    assert_true(st.bytes > base.bytes + (3 * 301 + 5 * 11) * MC_POINT_BYTES);

    /* Pod uid-1 is deleted: its 2 pod series and 4 container series go. */
    assert_int_equal(mc_drop_owner(mc, "uid-1"), 6);
    assert_int_equal(mc_drop_owner(mc, "uid-1"), 0);
    assert_int_equal(mc_drop_owner(mc, NULL), 0);
    mc_stats(mc, &st);
    assert_int_equal(st.series, 1 + 2);
    assert_int_equal(st.owners, 1);
    assert_int_equal(mc_query(mc, &(struct mc_select){MC_CONTAINER_CPU_USAGE, "c1", NULL}, 0,
                              INT64_MAX, NULL, &r),
                     -ENODATA);
    assert_int_equal(
        mc_query(mc, &(struct mc_select){MC_POD_CPU_USAGE, NULL, NULL}, 0, INT64_MAX, NULL, &r), 0);
    assert_int_equal(r.series, 1);

    /* uid-2 one series at a time: the owner goes with its last series. */
    assert_int_equal(mc_drop(mc, MC_CONTAINER_CPU_USAGE, "c3"), 0);
    assert_int_equal(mc_drop(mc, MC_CONTAINER_CPU_USAGE, "c3"), -ENOENT);
    assert_int_equal(mc_drop(mc, MC_KIND_COUNT, "c3"), -ENOENT);
    mc_stats(mc, &st);
    assert_int_equal(st.owners, 1);
    assert_int_equal(mc_drop(mc, MC_POD_CPU_USAGE, "uid-2"), 0);

    mc_stats(mc, &st);
    assert_int_equal(st.series, base.series);
    assert_int_equal(st.owners, 0);
    assert_int_equal(st.points, base.points);
    assert_int_equal(st.capacity, base.capacity);
    assert_int_equal(st.bytes, base.bytes);

    /* Node series drop with a NULL id. */
    assert_int_equal(mc_drop(mc, MC_NODE_CPU_USAGE, NULL), 0);
    mc_stats(mc, &st);
    assert_int_equal(st.series, 0);
    assert_int_equal(st.points, 0);
    mc_free(mc);
}

/* Many owners grow both tables; dropping them all shrinks them back to the first size. */
static void test_tables_shrink(void **state)
{
    struct mc *mc = new_cache(NULL);
    struct mc_stats empty, full, st;
    char uid[32], cid[32];

    (void)state;
    mc_stats(mc, &empty);
    for (int i = 0; i < 1000; i++) {
        (void)snprintf(uid, sizeof(uid), "pod-%d", i);
        (void)snprintf(cid, sizeof(cid), "ctr-%d", i);
        assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, uid, NULL, 1, i), 0);
        assert_int_equal(mc_append(mc, MC_CONTAINER_CPU_USAGE, cid, uid, 1, i), 0);
    }
    mc_stats(mc, &full);
    assert_int_equal(full.series, 2000);
    assert_int_equal(full.owners, 1000);
    for (int i = 0; i < 1000; i++) {
        struct mc_result r;
        (void)snprintf(uid, sizeof(uid), "pod-%d", i);
        assert_int_equal(mc_query(mc, &(struct mc_select){MC_CONTAINER_CPU_USAGE, NULL, uid}, 0,
                                  INT64_MAX, NULL, &r),
                         0);
        assert_true(r.count == 1 && r.last == (double)i);
    }
    for (int i = 0; i < 1000; i++) {
        (void)snprintf(uid, sizeof(uid), "pod-%d", i);
        assert_int_equal(mc_drop_owner(mc, uid), 2);
    }
    mc_stats(mc, &st);
    assert_int_equal(st.series, 0);
    assert_int_equal(st.bytes, empty.bytes);
    mc_free(mc);
}

static void test_gc(void **state)
{
    struct mc *mc = new_cache(NULL);
    struct mc_stats st;
    struct mc_result r;

    (void)state;
    /* a: newest at 10 s; b: newest at 70 s; c (b's container) and the node: at 100 s. */
    assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, "a", NULL, 10 * S_MS, 1), 0);
    assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, "b", NULL, 5 * S_MS, 1), 0);
    assert_int_equal(mc_append(mc, MC_POD_CPU_USAGE, "b", NULL, 70 * S_MS, 1), 0);
    assert_int_equal(mc_append(mc, MC_CONTAINER_CPU_USAGE, "c", "b", 100 * S_MS, 1), 0);
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, 100 * S_MS, 1), 0);

    /* At 100 s, 30 x 1 s: a and b are stale; b's owner stays with c. 70 s is exactly 30 s old
     * at 100 s and is kept. */
    assert_int_equal(mc_gc(mc, 100 * S_MS, 30 * S_MS), 1);
    mc_stats(mc, &st);
    assert_int_equal(st.series, 4 - 1);
    assert_int_equal(mc_gc(mc, 100 * S_MS + 1, 30 * S_MS), 1);
    mc_stats(mc, &st);
    assert_int_equal(st.series, 4 - 2);
    assert_int_equal(st.owners, 1);
    assert_int_equal(
        mc_query(mc, &(struct mc_select){MC_POD_CPU_USAGE, "a", NULL}, 0, INT64_MAX, NULL, &r),
        -ENODATA);

    /* The kinds' retentions: 10 s for containers, 1800 s for the node. */
    assert_int_equal(mc_gc(mc, 110 * S_MS, 0), 0);
    assert_int_equal(mc_gc(mc, 110 * S_MS + 1, 0), 1);
    mc_stats(mc, &st);
    assert_int_equal(st.series, 1);
    assert_int_equal(st.owners, 0);
    assert_int_equal(mc_gc(mc, 1900 * S_MS, -1), 0);
    assert_int_equal(mc_gc(mc, 1900 * S_MS + 1, -1), 1);
    mc_stats(mc, &st);
    assert_int_equal(st.series, 0);
    assert_int_equal(mc_gc(mc, -5, 1), 0);
    mc_free(mc);
}

/* ---- the cold-start rule ---- */

static void test_cold_start(void **state)
{
    const int64_t d = 300 * S_MS;
    struct mc *mc = new_cache(NULL);
    struct mc_result r;

    (void)state;
    assert_true(mc_result_is_cold(NULL, d));
    /* 1 s .. 150 s: 149 s covered < 150 s. */
    for (int i = 1; i <= 150; i++)
        assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, i * S_MS, 1), 0);
    assert_int_equal(mc_query(mc, &node_cpu, 150 * S_MS - d, 150 * S_MS, NULL, &r), 0);
    assert_int_equal(mc_result_duration_ms(&r), 149 * S_MS);
    assert_true(mc_result_is_cold(&r, d));
    /* 151 s: exactly half covered is enough. */
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, 151 * S_MS, 1), 0);
    assert_int_equal(mc_query(mc, &node_cpu, 151 * S_MS - d, 151 * S_MS, NULL, &r), 0);
    assert_int_equal(mc_result_duration_ms(&r), 150 * S_MS);
    assert_false(mc_result_is_cold(&r, d));
    /* One point covers nothing. */
    r.first_ms = r.last_ms = 0;
    assert_true(mc_result_is_cold(&r, d));
    assert_false(mc_result_is_cold(&r, 0));
    /* Odd durations: 3 ms needs 1.5 ms, i.e. 2. */
    r.last_ms = 1;
    assert_true(mc_result_is_cold(&r, 3));
    r.last_ms = 2;
    assert_false(mc_result_is_cold(&r, 3));
    mc_free(mc);
}

/* ---- sizing ---- */

#define PODS               110
#define CONTAINERS_PER_POD 2
/*
 * The documented bound for 110 pods x 2 containers at 1 s with the default retentions and the
 * default collectors (no page-cache variants): node and system CPU/memory (1801 points each),
 * the three BE series and pod cpu and memory (301 points), pod throttling and the container
 * series (11 points).
 */
#define NODE_BYTES_MAX (3u << 19) /* 1.5 MiB */

static void test_memory_bound(void **state)
{
    static const enum mc_kind node_kinds[] = {MC_NODE_CPU_USAGE, MC_NODE_MEMORY_USAGE,
                                              MC_SYS_CPU_USAGE, MC_SYS_MEMORY_USAGE};
    static const char *const be_ids[] = {MC_BE_CPU_REAL_LIMIT, MC_BE_CPU_REQUEST, MC_BE_CPU_USAGE};
    static const enum mc_kind pod_kinds[] = {MC_POD_CPU_USAGE, MC_POD_MEMORY_USAGE,
                                             MC_POD_CPU_THROTTLED};
    static const enum mc_kind ctr_kinds[] = {MC_CONTAINER_CPU_USAGE, MC_CONTAINER_MEMORY_USAGE,
                                             MC_CONTAINER_CPU_THROTTLED};
    struct mc *mc = new_cache(NULL);
    struct mc_stats st;
    size_t points = 0, bound = 0, nseries = 0;
    char uid[40], cid[80];
    int64_t ts_max = 0;

    (void)state;
    /* Fill every ring exactly (a full ring stores capacity points). */
    for (size_t i = 0; i < ARRAY_SIZE(node_kinds); i++) {
        uint32_t cap = mc_kind_capacity(mc, node_kinds[i]);
        for (uint32_t t = 0; t < cap; t++)
            assert_int_equal(mc_append(mc, node_kinds[i], NULL, NULL, (int64_t)t * S_MS, 1.5 * t),
                             0);
        points += cap;
        bound += (size_t)cap * MC_POINT_BYTES + MC_SERIES_OVERHEAD_MAX;
        nseries++;
    }
    for (size_t i = 0; i < ARRAY_SIZE(be_ids); i++) {
        uint32_t cap = mc_kind_capacity(mc, MC_NODE_BE);
        for (uint32_t t = 0; t < cap; t++)
            assert_int_equal(mc_append(mc, MC_NODE_BE, be_ids[i], NULL, (int64_t)t * S_MS, t), 0);
        points += cap;
        bound += (size_t)cap * MC_POINT_BYTES + strlen(be_ids[i]) + MC_SERIES_OVERHEAD_MAX;
        nseries++;
    }
    for (int p = 0; p < PODS; p++) {
        /* Realistic lengths: a UUID, a containerd:// ID of 64 hex digits. */
        (void)snprintf(uid, sizeof(uid), "%08x-1234-5678-9abc-def012345678", p);
        for (size_t k = 0; k < ARRAY_SIZE(pod_kinds); k++) {
            uint32_t cap = mc_kind_capacity(mc, pod_kinds[k]);
            for (uint32_t t = 0; t < cap; t++)
                assert_int_equal(mc_append(mc, pod_kinds[k], uid, NULL, (int64_t)t * S_MS, t), 0);
            points += cap;
            bound += (size_t)cap * MC_POINT_BYTES + 2 * strlen(uid) + MC_SERIES_OVERHEAD_MAX;
            nseries++;
        }
        for (int c = 0; c < CONTAINERS_PER_POD; c++) {
            (void)snprintf(cid, sizeof(cid), "containerd://%056x%08x", c, p);
            for (size_t k = 0; k < ARRAY_SIZE(ctr_kinds); k++) {
                uint32_t cap = mc_kind_capacity(mc, ctr_kinds[k]);
                for (uint32_t t = 0; t < cap; t++) {
                    assert_int_equal(mc_append(mc, ctr_kinds[k], cid, uid, (int64_t)t * S_MS, t),
                                     0);
                    ts_max = (int64_t)t * S_MS;
                }
                points += cap;
                bound += (size_t)cap * MC_POINT_BYTES + strlen(cid) + strlen(uid) +
                         MC_SERIES_OVERHEAD_MAX;
                nseries++;
            }
        }
    }
    /* The cache struct and the first buckets of both tables: generous. */
    bound += 4096;

    mc_stats(mc, &st);
    print_message("metriccache: %d pods x %d containers at 1 s: %zu series, %zu points, "
                  "%zu bytes (%.2f MiB; points alone %zu); formula bound %zu, documented %u\n",
                  PODS, CONTAINERS_PER_POD, st.series, st.points, st.bytes,
                  (double)st.bytes / (1 << 20), st.capacity * MC_POINT_BYTES, bound,
                  NODE_BYTES_MAX);
    assert_int_equal(st.series, nseries);
    assert_int_equal(st.series, 4 + 3 + PODS * 3 + PODS * CONTAINERS_PER_POD * 3);
    assert_int_equal(st.owners, PODS);
    assert_int_equal(st.points, points);
    assert_int_equal(st.capacity, points);
    assert_true(st.bytes > st.capacity * MC_POINT_BYTES);
    assert_true(st.bytes <= bound);
    assert_true(bound <= NODE_BYTES_MAX);
    assert_int_equal(ts_max, 10 * S_MS);
    mc_free(mc);
}

/* ---- one writer, several readers ---- */

#define RACE_STEPS   3000
#define RACE_READERS 3
#define RACE_PODS    8

struct race {
    struct mc *mc;
    atomic_bool done;
    atomic_long bad;     /* invariant violations seen by readers */
    atomic_long queries; /* successful queries */
};

static void race_pod(char *uid, size_t n, int i)
{
    (void)snprintf(uid, n, "pod-%d", i);
}

/*
 * The writer: every step appends value = timestamp in seconds to the node series, to RACE_PODS
 * pods and a container of each, and now and then deletes the oldest pod, creates a new one,
 * changes a retention and runs the GC; so readers meet series being created and freed.
 */
static void *race_writer(void *arg)
{
    struct race *rc = arg;
    char uid[32];
    int first_pod = 0;

    for (int step = 1; step <= RACE_STEPS; step++) {
        int64_t ts = (int64_t)step * S_MS;
        int r = mc_append(rc->mc, MC_NODE_CPU_USAGE, NULL, NULL, ts, step);

        if (r)
            atomic_fetch_add(&rc->bad, 1);
        for (int p = first_pod; p < first_pod + RACE_PODS; p++) {
            race_pod(uid, sizeof(uid), p);
            if (mc_append(rc->mc, MC_POD_CPU_USAGE, uid, NULL, ts, step) ||
                mc_append(rc->mc, MC_CONTAINER_CPU_USAGE, uid, uid, ts, step))
                atomic_fetch_add(&rc->bad, 1);
        }
        if (step % 50 == 0) {
            race_pod(uid, sizeof(uid), first_pod++);
            if (mc_drop_owner(rc->mc, uid) != 2)
                atomic_fetch_add(&rc->bad, 1);
        }
        if (step % 500 == 0)
            (void)mc_set_retention(rc->mc, MC_NODE_CPU_USAGE, (step % 1000 ? 100 : 0) * S_MS);
        if (step % 100 == 0)
            (void)mc_gc(rc->mc, ts, 0);
        /* Let the readers in: every 20 steps wait for one more of their queries to finish, so
         * reads interleave with writes however the threads are scheduled (no sleeps). */
        if (step % 20 == 0) {
            long target = atomic_load(&rc->queries) + 1;
            while (atomic_load(&rc->queries) < target)
                (void)sched_yield();
        }
    }
    atomic_store(&rc->done, true);
    return NULL;
}

/* Readers check what must hold whatever the interleaving: values equal their timestamps in
 * seconds, so last, avg and every percentile lie between the oldest and newest point. */
static void race_check(struct race *rc, const struct mc_result *r, struct mc_scratch *sc)
{
    double lo = (double)(r->first_ms / S_MS), hi = (double)(r->last_ms / S_MS);
    double p99 = mc_percentile(sc, 0.99), p50 = mc_percentile(sc, 0.5);

    if (r->count != sc->n || r->last != hi || r->avg < lo || r->avg > hi || p50 < lo || p50 > hi ||
        p99 < p50 || p99 > hi)
        atomic_fetch_add(&rc->bad, 1);
    atomic_fetch_add(&rc->queries, 1);
}

static void *race_reader(void *arg)
{
    struct race *rc = arg;
    struct mc_scratch sc = MC_SCRATCH_INIT;
    struct mc_result r;
    struct mc_stats st;
    char uid[32];
    int i = 0;

    do {
        if (mc_query(rc->mc, &node_cpu, 0, INT64_MAX, &sc, &r) == 0) {
            if (r.count > 1801 || r.series != 1)
                atomic_fetch_add(&rc->bad, 1);
            race_check(rc, &r, &sc);
        }
        race_pod(uid, sizeof(uid), i++ % (RACE_STEPS / 50 + RACE_PODS));
        if (mc_query(rc->mc, &(struct mc_select){MC_CONTAINER_CPU_USAGE, NULL, uid}, 0, INT64_MAX,
                     &sc, &r) == 0)
            race_check(rc, &r, &sc);
        if (mc_query(rc->mc, &(struct mc_select){MC_POD_CPU_USAGE, NULL, NULL}, 0, INT64_MAX, &sc,
                     &r) == 0)
            race_check(rc, &r, &sc);
        mc_stats(rc->mc, &st);
        if (st.points > st.capacity || st.series > 1 + 2 * RACE_PODS + 2)
            atomic_fetch_add(&rc->bad, 1);
    } while (!atomic_load(&rc->done));
    mc_scratch_release(&sc);
    return NULL;
}

static void test_concurrent(void **state)
{
    struct race rc = {.mc = new_cache(NULL)};
    pthread_t writer, readers[RACE_READERS];
    struct mc_result r;
    struct mc_stats st;

    (void)state;
    atomic_init(&rc.done, false);
    atomic_init(&rc.bad, 0);
    atomic_init(&rc.queries, 0);
    for (int i = 0; i < RACE_READERS; i++)
        assert_int_equal(pthread_create(&readers[i], NULL, race_reader, &rc), 0);
    assert_int_equal(pthread_create(&writer, NULL, race_writer, &rc), 0);
    assert_int_equal(pthread_join(writer, NULL), 0);
    for (int i = 0; i < RACE_READERS; i++)
        assert_int_equal(pthread_join(readers[i], NULL), 0);

    assert_int_equal(atomic_load(&rc.bad), 0);
    assert_true(atomic_load(&rc.queries) >= RACE_STEPS / 20);
    /* The final state is the writer's alone: the node ring (retention back to 1800 s at step
     * 3000 after 100 s at step 2500) holds steps 2400..3000 less what the 101-point ring lost:
     * 2900..3000. */
    assert_int_equal(mc_query(rc.mc, &node_cpu, 0, INT64_MAX, NULL, &r), 0);
    assert_int_equal(r.count, 101);
    assert_int_equal(r.first_ms, 2900 * S_MS);
    assert_true(r.last == (double)RACE_STEPS);
    /* The last step dropped one of the RACE_PODS pods it had just written. */
    mc_stats(rc.mc, &st);
    assert_int_equal(st.series, 1 + 2 * (RACE_PODS - 1));
    assert_int_equal(st.owners, RACE_PODS - 1);
    print_message("metriccache race: %ld reader queries\n", atomic_load(&rc.queries));
    mc_free(rc.mc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_point),
        cmocka_unit_test(test_unsorted_input),
        cmocka_unit_test(test_three_points),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_twenty_shuffled),
        cmocka_unit_test(test_constant_series),
        cmocka_unit_test(test_percentile_matches_sort),
        cmocka_unit_test(test_window_bounds),
        cmocka_unit_test(test_wraparound),
        cmocka_unit_test(test_out_of_order),
        cmocka_unit_test(test_rebase),
        cmocka_unit_test(test_set_retention),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_append_checks),
        cmocka_unit_test(test_max_series),
        cmocka_unit_test(test_sets),
        cmocka_unit_test(test_drop_frees),
        cmocka_unit_test(test_tables_shrink),
        cmocka_unit_test(test_gc),
        cmocka_unit_test(test_cold_start),
        cmocka_unit_test(test_memory_bound),
        cmocka_unit_test(test_concurrent),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
