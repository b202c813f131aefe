/*
 * Tests for agent/qos/cpuevict (reference 3.3): the 20 s cool-down (also after start), the
 * BECPUEvict configuration check, window, sample validity, "usage high enough", satisfaction
 * release and the avg/current minimum, evictByAllocatable, victim orders, CPUEvict's usage
 * target, CPUAllocatableEvict, and a whole tick.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/qos/cpuevict.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

static void test_cooling(void **state)
{
    (void)state;
    /* Started (or last evicted) at 1000: 20 s of cool-down, the boundary excluded. */
    assert_true(qos_cpuevict_cooling(1000, 1000));
    assert_true(qos_cpuevict_cooling(1000, 20999));
    assert_false(qos_cpuevict_cooling(1000, 21000));
    assert_false(qos_cpuevict_cooling(1000, 100000));
}

static void set(struct qos_opt *o, int64_t v)
{
    o->set = true;
    o->value = v;
}

static struct qos_threshold be_cfg(int64_t lower, int64_t upper)
{
    struct qos_threshold t;

    memset(&t, 0, sizeof(t));
    t.enable = true;
    if (lower != INT64_MIN)
        set(&t.cpu_evict_be_satisfaction_lower_percent, lower);
    if (upper != INT64_MIN)
        set(&t.cpu_evict_be_satisfaction_upper_percent, upper);
    return t;
}

static void test_be_check(void **state)
{
    static const struct {
        int64_t lower, upper;
        int r;
    } cases[] = {
        {60, 90, 0},
        {61, 90, -EINVAL},
        {0, 90, -EINVAL},
        {1, 90, 0},
        {60, 100, -EINVAL},
        {60, 99, 0},
        {-1, 0, -EINVAL},
        {50, 40, -EINVAL},
        {50, 50, 0},
        {INT64_MIN, 90, -EINVAL},
        {60, INT64_MIN, -EINVAL},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct qos_threshold t = be_cfg(cases[i].lower, cases[i].upper);
        const char *why = NULL;

        if (qos_cpuevict_be_check(&t, &why) != cases[i].r)
            fail_msg("case %zu", i);
        if (cases[i].r)
            assert_non_null(why);
    }
}

static void test_window_and_validity(void **state)
{
    struct qos_threshold t = be_cfg(60, 90);

    (void)state;
    assert_int_equal(qos_cpuevict_window_seconds(1, &t), 1);
    set(&t.cpu_evict_time_window_seconds, 60);
    assert_int_equal(qos_cpuevict_window_seconds(1, &t), 60);
    assert_int_equal(qos_cpuevict_window_seconds(90, &t), 90);
    set(&t.cpu_evict_time_window_seconds, 1);
    assert_int_equal(qos_cpuevict_window_seconds(1, &t), 1);
    /* count x interval >= window / 3, integer division. */
    assert_true(qos_cpuevict_samples_valid(60, 1, 20));
    assert_false(qos_cpuevict_samples_valid(60, 1, 19));
    assert_true(qos_cpuevict_samples_valid(10, 1, 3));
    assert_false(qos_cpuevict_samples_valid(10, 1, 2));
    assert_true(qos_cpuevict_samples_valid(60, 2, 10));
    assert_false(qos_cpuevict_samples_valid(60, 2, 9));
    assert_true(qos_cpuevict_samples_valid(2, 1, 0));
}

static void test_usage_high_enough(void **state)
{
    struct qos_opt thr = {0};

    (void)state;
    assert_false(qos_cpuevict_usage_high_enough(5000, 0, NULL));
    assert_false(qos_cpuevict_usage_high_enough(5000, -1, NULL));
    /* Below one core of limit it is always "high enough". */
    assert_true(qos_cpuevict_usage_high_enough(0, 999, NULL));
    assert_true(qos_cpuevict_usage_high_enough(900, 1000, &thr));
    assert_false(qos_cpuevict_usage_high_enough(899, 1000, &thr));
    set(&thr, 80);
    assert_true(qos_cpuevict_usage_high_enough(800, 1000, &thr));
    assert_false(qos_cpuevict_usage_high_enough(799, 1000, &thr));
}

static void test_satisfaction(void **state)
{
    static const struct {
        double request, limit;
        int64_t lower, upper, release;
    } cases[] = {
        {10000, 5000, 60, 90, 4000},
        /* Exactly the lower percent is "<=": gap 0.9 - 0.6. */
        {10000, 6000, 60, 90, 3000},
        {10000, 6001, 60, 90, 0},
        {0, 5000, 60, 90, 0},
        {-1, 5000, 60, 90, 0},
        /* Satisfaction equal to the upper percent: gap 0. */
        {10000, 6000, 60, 60, 0},
        {20000, 1, 60, 90, 17999},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        int64_t r = qos_cpuevict_release_by_satisfaction(cases[i].request, cases[i].limit,
                                                         cases[i].lower, cases[i].upper);
        if (r != cases[i].release)
            fail_msg("case %zu: %lld, want %lld", i, (long long)r, (long long)cases[i].release);
    }
}

static void test_be_allocatable_and_release(void **state)
{
    struct qos_threshold t = be_cfg(60, 90);
    struct qos_be_cpu_input in = {
        .avg = {.usage = 9500, .request = 20000, .real_limit = 10000},
        .count = 60,
        .current = {.usage = 9500, .request = 20000, .real_limit = 10000},
        .window_s = 60,
        .collect_interval_s = 1,
    };
    struct qos_node node;

    (void)state;
    memset(&node, 0, sizeof(node));
    assert_true(qos_cpuevict_be_allocatable(&node) == -1);
    node.allocatable_present = 1u << QOS_RES_BATCH_CPU;
    node.allocatable.v[QOS_RES_BATCH_CPU] = -5;
    assert_true(qos_cpuevict_be_allocatable(&node) == -1);
    node.allocatable.v[QOS_RES_BATCH_CPU] = 0;
    assert_true(qos_cpuevict_be_allocatable(&node) == 1);
    node.allocatable.v[QOS_RES_BATCH_CPU] = 10000;
    assert_true(qos_cpuevict_be_allocatable(&node) == 10000);

    /* Satisfaction 0.5: 20000 x (0.9 - 0.5); current equal to the averages. */
    assert_int_equal(qos_cpuevict_be_release(&t, &node, &in), 8000);
    /* Current satisfaction 0.4 would release 10000: the minimum stays 8000. */
    in.current.real_limit = 8000;
    in.current.usage = 7500;
    assert_int_equal(qos_cpuevict_be_release(&t, &node, &in), 8000);
    /* Current satisfaction 0.6 releases 6000: smaller. */
    in.current.real_limit = 12000;
    in.current.usage = 11000;
    assert_int_equal(qos_cpuevict_be_release(&t, &node, &in), 6000);
    /* Current satisfaction above the lower percent: nothing. */
    in.current.real_limit = 13000;
    in.current.usage = 13000;
    assert_int_equal(qos_cpuevict_be_release(&t, &node, &in), 0);
    /* Current usage not high enough: nothing. */
    in.current = in.avg;
    in.current.usage = 8999;
    assert_int_equal(qos_cpuevict_be_release(&t, &node, &in), 0);
    /* Averages not valid: nothing. */
    in.current = in.avg;
    in.count = 19;
    assert_int_equal(qos_cpuevict_be_release(&t, &node, &in), 0);
    in.count = 20;
    assert_int_equal(qos_cpuevict_be_release(&t, &node, &in), 8000);
    /* Average usage not high enough. */
    in.avg.usage = 8999;
    in.current = in.avg;
    assert_int_equal(qos_cpuevict_be_release(&t, &node, &in), 0);
    in.avg.usage = 9500;
    in.current = in.avg;
    /* A lower usage threshold accepts 8999 / 10000. */
    set(&t.cpu_evict_be_usage_threshold_percent, 85);
    in.avg.usage = in.current.usage = 8999;
    assert_int_equal(qos_cpuevict_be_release(&t, &node, &in), 8000);

    /* evictByAllocatable: the limit is batch-cpu allocatable (10000), whatever the real limit. */
    t.cpu_evict_policy = QOS_EVICT_BY_ALLOCATABLE;
    in.avg.real_limit = in.current.real_limit = 19000;
    assert_int_equal(qos_cpuevict_be_release(&t, &node, &in), 8000);
    /* Allocatable 0 counts as 1 milli: always "high enough", satisfaction ~0. */
    node.allocatable.v[QOS_RES_BATCH_CPU] = 0;
    assert_int_equal(qos_cpuevict_be_release(&t, &node, &in), 17999);
    /* Allocatable absent: -1, never high enough. */
    node.allocatable_present = 0;
    assert_int_equal(qos_cpuevict_be_release(&t, &node, &in), 0);
}

static struct qos_container batch_cpu(int64_t req)
{
    struct qos_container c;

    memset(&c, 0, sizeof(c));
    c.name = "c";
    c.requests.v[QOS_RES_BATCH_CPU] = req;
    return c;
}

static const char *names(const struct qos_evict_victim *v, size_t n, struct strbuf *sb)
{
    strbuf_reset(sb);
    for (size_t i = 0; i < n; i++)
        strbuf_addf(sb, "%s%s", i ? " " : "", v[i].pod->name);
    return sb->buf;
}

#define BE(n, ...)                                                                                 \
    {                                                                                              \
        .name = n, .uid = n, .qos_label = API_QOS_BE, .qos = API_QOS_BE, __VA_ARGS__               \
    }

static void test_be_victims(void **state)
{
    struct qos_container c2000 = batch_cpu(2000), c1000 = batch_cpu(1000);
    struct qos_pod plain[] = {
        BE("b1", .has_cpu_usage = true, .cpu_usage = 1.0, .containers = &c2000, .ncontainers = 1),
        BE("b2", .has_cpu_usage = true, .cpu_usage = 1.8, .containers = &c2000, .ncontainers = 1),
        /* No request: ratio 0. */
        BE("b3", .has_cpu_usage = true, .cpu_usage = 5),
        /* No sample: used 0. */
        BE("b4", .containers = &c1000, .ncontainers = 1),
        BE("b5", .has_cpu_usage = true, .cpu_usage = 0.9, .containers = &c1000, .ncontainers = 1),
        {.name = "ls", .qos = API_QOS_LS, .qos_label = API_QOS_LS},
        BE("no", .eviction_policy = "[\"BEMemoryEvict\"]"),
    };
    struct qos_pod prio[] = {
        BE("p1", .has_priority = true, .priority = 5, .has_cpu_usage = true, .cpu_usage = 1,
           .containers = &c1000, .ncontainers = 1),
        BE("p2", .has_priority = true, .priority = 3, .has_cpu_usage = true, .cpu_usage = 0.1,
           .containers = &c1000, .ncontainers = 1),
        BE("p3", .has_priority = true, .priority = 5, .has_cpu_usage = true, .cpu_usage = 2,
           .containers = &c1000, .ncontainers = 1),
    };
    struct qos_evict_victim v[ARRAY_SIZE(plain)];
    struct strbuf sb = STRBUF_INIT;
    size_t n;

    (void)state;
    n = qos_cpuevict_be_victims(plain, ARRAY_SIZE(plain), v);
    /* Ratios: b5 0.9, b2 0.9, b1 0.5, b3 0, b4 0 (ties keep input order). */
    assert_string_equal(names(v, n, &sb), "b2 b5 b1 b3 b4");
    assert_int_equal(v[0].used, 1800);
    assert_int_equal(v[0].request, 2000);
    assert_true(v[0].usage_ratio == 0.9);
    n = qos_cpuevict_be_victims(prio, ARRAY_SIZE(prio), v);
    assert_string_equal(names(v, n, &sb), "p2 p3 p1");
    strbuf_release(&sb);
}

static void test_usage_release(void **state)
{
    struct qos_threshold t = be_cfg(60, 90);
    struct qos_usage_release ur;
    const char *why = NULL;

    (void)state;
    assert_int_equal(qos_cpuevict_usage_check(&t, &why), -EINVAL);
    assert_string_equal(why, "cpuEvictThresholdPercent is not set");
    set(&t.cpu_evict_threshold_percent, 80);
    assert_int_equal(qos_cpuevict_usage_check(&t, &why), -EINVAL);
    assert_string_equal(why, "evictEnabledPriorityThreshold is not set");
    set(&t.evict_enabled_priority_threshold, 5999);
    assert_int_equal(qos_cpuevict_usage_check(&t, &why), 0);
    set(&t.cpu_evict_lower_percent, 80);
    assert_int_equal(qos_cpuevict_usage_check(&t, &why), -EINVAL);
    t.cpu_evict_lower_percent.set = false;
    t.cpu_evict_threshold_percent.value = -1;
    assert_int_equal(qos_cpuevict_usage_check(&t, &why), -EINVAL);
    t.cpu_evict_threshold_percent.value = 80;

    /* 25.6 of 32 cores is 80 %: the threshold itself triggers; release 2 % of 32000. */
    assert_int_equal(qos_cpuevict_usage_release(&t, 32000, 25.6, &ur), 1);
    assert_int_equal(ur.used_percent, 80);
    assert_int_equal(ur.lower_percent, 78);
    assert_int_equal(ur.release, 640);
    /* int64(25599) x 100 / 32000 = 79: one below. */
    assert_int_equal(qos_cpuevict_usage_release(&t, 32000, 25.5999, &ur), 0);
    assert_int_equal(ur.used_percent, 79);
    assert_int_equal(ur.release, 0);
    set(&t.cpu_evict_lower_percent, 50);
    assert_int_equal(qos_cpuevict_usage_release(&t, 32000, 32, &ur), 1);
    assert_int_equal(ur.release, 16000);
    assert_int_equal(qos_cpuevict_usage_release(&t, 0, 32, &ur), 0);
}

#define EV(n, ...)                                                                                 \
    {                                                                                              \
        .name = n, .uid = n, .active = true, .eviction_enabled = true, .has_cpu_usage = true,      \
        __VA_ARGS__                                                                                \
    }

static void test_priority_victims(void **state)
{
    struct qos_container c = batch_cpu(3000);
    struct qos_pod pods[] = {
        EV("a", .priority_class = API_PRIORITY_BATCH, .cpu_usage = 1, .containers = &c,
           .ncontainers = 1),
        EV("b", .priority_class = API_PRIORITY_BATCH, .cpu_usage = 2),
        EV("c", .priority_class = API_PRIORITY_MID, .cpu_usage = 3),
        EV("d", .priority_class = API_PRIORITY_BATCH, .eviction_priority = -1, .cpu_usage = 0.5),
        {.name = "e", .active = true, .has_cpu_usage = true, .priority_class = API_PRIORITY_FREE},
        EV("f", .priority_class = API_PRIORITY_FREE, .eviction_policy = "[\"CPUEvict\"]",
           .cpu_usage = 0.1),
        {.name = "g",
         .active = true,
         .eviction_enabled = true,
         .priority_class = API_PRIORITY_FREE},
    };
    struct qos_evict_victim v[ARRAY_SIZE(pods)];
    struct strbuf sb = STRBUF_INIT;
    size_t n;

    (void)state;
    n = qos_cpuevict_victims(pods, ARRAY_SIZE(pods), 5999, false, v);
    assert_string_equal(names(v, n, &sb), "d f b a");
    assert_int_equal(v[3].used, 1000);
    assert_int_equal(v[3].request, 3000);
    n = qos_cpuevict_victims(pods, ARRAY_SIZE(pods), 7500, false, v);
    assert_string_equal(names(v, n, &sb), "d f b a c");
    /* CPUAllocatableEvict: f's policy excludes it; larger request first among batch. */
    n = qos_cpuevict_victims(pods, ARRAY_SIZE(pods), 5999, true, v);
    assert_string_equal(names(v, n, &sb), "d a b");
    strbuf_release(&sb);
}

static void test_allocatable(void **state)
{
    struct qos_container c1 = batch_cpu(6000), c2 = batch_cpu(5000);
    struct qos_pod pods[] = {
        {.name = "a", .priority_class = API_PRIORITY_BATCH, .containers = &c1, .ncontainers = 1},
        {.name = "b", .priority_class = API_PRIORITY_BATCH, .containers = &c2, .ncontainers = 1},
        {.name = "p", .priority_class = API_PRIORITY_PROD, .requests = {.v = {[QOS_RES_CPU] = 1}}},
    };
    struct qos_threshold t = be_cfg(60, 90);
    struct qos_evict_task task;
    struct qos_node node;
    const char *why;

    (void)state;
    memset(&node, 0, sizeof(node));
    node.allocatable_present = 1u << QOS_RES_BATCH_CPU | 1u << QOS_RES_CPU;
    node.allocatable.v[QOS_RES_BATCH_CPU] = 10000;
    node.allocatable.v[QOS_RES_CPU] = 1;
    assert_int_equal(qos_cpuevict_allocatable_check(&t, &why), -EINVAL);
    set(&t.cpu_allocatable_evict_threshold_percent, 105);
    set(&t.cpu_allocatable_evict_lower_percent, 100);
    assert_int_equal(qos_cpuevict_allocatable_check(&t, &why), -EINVAL);
    set(&t.allocatable_evict_priority_threshold, 8000);
    assert_int_equal(qos_cpuevict_allocatable_check(&t, &why), -EINVAL);
    t.allocatable_evict_priority_threshold.value = 7999;
    assert_int_equal(qos_cpuevict_allocatable_check(&t, &why), 0);
    t.cpu_allocatable_evict_lower_percent.value = 105;
    assert_int_equal(qos_cpuevict_allocatable_check(&t, &why), -EINVAL);
    t.cpu_allocatable_evict_lower_percent.value = 100;

    /* 11000 / 10000 > 105 %: (1.1 - 1.0) x 10000 = 1000; the prod pod is above 7999. */
    qos_cpuevict_allocatable_release(&t, &node, pods, ARRAY_SIZE(pods), &task);
    assert_int_equal(task.release.v[QOS_RES_BATCH_CPU], 1000);
    assert_int_equal(task.release.v[QOS_RES_CPU], 0);
    assert_int_equal(task.request_classes, 1u << API_PRIORITY_BATCH);
    assert_int_equal(task.request_res, QOS_RES_CPU);
}

struct recorder {
    struct strbuf log;
};

static bool record(void *ctx, const struct qos_evict_task *task, const struct qos_pod *pod)
{
    struct recorder *r = ctx;

    strbuf_addf(&r->log, "%s%s:%s", r->log.len ? " " : "", task->feature, pod->name);
    return true;
}

static void test_plan(void **state)
{
    struct qos_container c = batch_cpu(4000);
    struct qos_pod pods[] = {
        BE("be1", .active = true, .has_cpu_usage = true, .cpu_usage = 3.5,
           .priority_class = API_PRIORITY_BATCH, .priority_class_raw = API_PRIORITY_BATCH,
           .containers = &c, .ncontainers = 1),
        BE("be2", .active = true, .has_cpu_usage = true, .cpu_usage = 3.9,
           .priority_class = API_PRIORITY_BATCH, .priority_class_raw = API_PRIORITY_BATCH,
           .containers = &c, .ncontainers = 1, .eviction_enabled = true),
        EV("mid", .priority_class = API_PRIORITY_MID, .cpu_usage = 6),
    };
    struct qos_threshold t = be_cfg(60, 90);
    struct qos_be_cpu_input be = {
        .avg = {.usage = 9500, .request = 8000, .real_limit = 4000},
        .count = 60,
        .window_s = 60,
        .collect_interval_s = 1,
    };
    struct qos_node node;
    struct qos_cpuevict_input in = {
        .cfg = &t,
        .node = &node,
        .pods = pods,
        .npods = ARRAY_SIZE(pods),
        .be = &be,
        .avg_node_cores = 28,
        .has_node_usage = true,
        .be_cpu_evict = true,
        .cpu_evict = true,
        .cpu_allocatable_evict = true,
    };
    struct qos_cpuevict_plan p;
    struct qos_evict_result res;
    struct recorder rec = {STRBUF_INIT};

    (void)state;
    memset(&node, 0, sizeof(node));
    node.capacity.v[QOS_RES_CPU] = 32000;
    be.current = be.avg;
    set(&t.cpu_evict_threshold_percent, 80);
    set(&t.evict_enabled_priority_threshold, 7999);

    /*
     * BE: satisfaction 4000 / 8000 = 0.5: release 8000 x 0.4 = 3200 batch-cpu; be2 first (ratio
     * 3900 / 4000), it releases its 4000 request. CPUEvict: 28 / 32 = 87 %: release 32000 x 9 %
     * = 2880; be2's 3900 milli of usage already cover it. No allocatable configuration.
     */
    assert_int_equal(qos_cpuevict_plan(&in, &p), 0);
    assert_int_equal(p.ntasks, 2);
    assert_int_equal(p.tasks[0].release.v[QOS_RES_CPU], 3200);
    assert_int_equal(p.tasks[1].release.v[QOS_RES_CPU], 2880);
    assert_string_equal(p.skipped[2], "cpuAllocatableEvictThresholdPercent is not set");
    assert_int_equal(qos_evict_run(p.tasks, p.ntasks, NULL, 0, record, &rec, &res), 0);
    assert_string_equal(rec.log.buf, "BECPUEvict:be2");
    qos_cpuevict_plan_release(&p);

    /* Without BECPUEvict, at 31 cores (96 %: release 5760): be2 (5500, 3900 milli) is not
     * enough, mid (7500 <= 7999, 6000 milli) follows. be1 lacks the eviction-enabled label. */
    in.be_cpu_evict = false;
    in.avg_node_cores = 31;
    strbuf_reset(&rec.log);
    assert_int_equal(qos_cpuevict_plan(&in, &p), 0);
    assert_int_equal(p.ntasks, 1);
    assert_int_equal(p.tasks[0].release.v[QOS_RES_CPU], 5760);
    assert_int_equal(qos_evict_run(p.tasks, p.ntasks, NULL, 0, record, &rec, &res), 0);
    assert_string_equal(rec.log.buf, "CPUEvict:be2 CPUEvict:mid");
    qos_cpuevict_plan_release(&p);

    /* No BE metrics, no node sample, NodeSLO disabled, no capacity. */
    in.be_cpu_evict = true;
    in.be = NULL;
    in.has_node_usage = false;
    assert_int_equal(qos_cpuevict_plan(&in, &p), 0);
    assert_int_equal(p.ntasks, 0);
    assert_string_equal(p.skipped[0], "no BE CPU metrics");
    assert_string_equal(p.skipped[1], "no node CPU usage sample");
    qos_cpuevict_plan_release(&p);
    t.enable = false;
    in.be = &be;
    in.has_node_usage = true;
    assert_int_equal(qos_cpuevict_plan(&in, &p), 0);
    assert_int_equal(p.ntasks, 0);
    qos_cpuevict_plan_release(&p);
    t.enable = true;
    node.capacity.v[QOS_RES_CPU] = 0;
    assert_int_equal(qos_cpuevict_plan(&in, &p), -EINVAL);
    qos_cpuevict_plan_release(&p);
    node.capacity.v[QOS_RES_CPU] = 32000;
    alloc_fail_after(1);
    assert_int_equal(qos_cpuevict_plan(&in, &p), -ENOMEM);
    alloc_fail_after(0);
    strbuf_release(&rec.log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cooling),
        cmocka_unit_test(test_be_check),
        cmocka_unit_test(test_window_and_validity),
        cmocka_unit_test(test_usage_high_enough),
        cmocka_unit_test(test_satisfaction),
        cmocka_unit_test(test_be_allocatable_and_release),
        cmocka_unit_test(test_be_victims),
        cmocka_unit_test(test_usage_release),
        cmocka_unit_test(test_priority_victims),
        cmocka_unit_test(test_allocatable),
        cmocka_unit_test(test_plan),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
