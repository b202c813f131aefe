/*
 * Tests for agent/qos/memoryevict (reference 3.2): the 4 s cool-down, the usage trigger and its
 * boundaries, lower-percent default, release bytes, the configuration checks, the allocatable
 * release in float32, the three victim orders, and a whole tick built by qos_memevict_plan()
 * and run by qos_evict_run().
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/qos/memoryevict.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

#define GI ((int64_t)1 << 30)

static void test_cooling(void **state)
{
    (void)state;
    assert_false(qos_memevict_cooling(false, 0, 0));
    assert_false(qos_memevict_cooling(false, 1000, 1001));
    assert_true(qos_memevict_cooling(true, 1000, 1000));
    assert_true(qos_memevict_cooling(true, 1000, 4999));
    /* now == last + 4 s is no longer "before". */
    assert_false(qos_memevict_cooling(true, 1000, 5000));
    assert_false(qos_memevict_cooling(true, 1000, 60000));
}

static struct qos_threshold cfg_default(void)
{
    struct qos_threshold t;

    memset(&t, 0, sizeof(t));
    t.enable = true;
    t.memory_evict_threshold_percent.set = true;
    t.memory_evict_threshold_percent.value = 70;
    return t;
}

static void test_usage_release(void **state)
{
    static const struct {
        int64_t capacity;
        double used;
        int64_t lower; /* -1: unset */
        int r;
        int64_t used_pct, lower_pct, release;
    } cases[] = {
        /* 699.9 bytes of 1000 truncate to 69 %: one below the threshold. */
        {1000, 699.9, -1, 0, 69, 68, 0},
        /* Exactly the threshold triggers; lower defaults to 70 - 2. */
        {1000, 700, -1, 1, 70, 68, 20},
        {1000, 755, -1, 1, 75, 68, 70},
        {1000, 755, 65, 1, 75, 65, 100},
        {1000, 1000, 0, 1, 100, 0, 1000},
        /* Integer percent of a real node: 100Gi of 128Gi is 78 %, release 10 % of 128Gi. */
        {128 * GI, 100.0 * GI, -1, 1, 78, 68, 128 * GI * 10 / 100},
        /* Usage above capacity. */
        {1000, 2000, -1, 1, 200, 68, 1320},
    };
    struct qos_usage_release ur;
    struct qos_threshold t;

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        int r;

        t = cfg_default();
        if (cases[i].lower >= 0) {
            t.memory_evict_lower_percent.set = true;
            t.memory_evict_lower_percent.value = cases[i].lower;
        }
        r = qos_memevict_usage_release(&t, false, cases[i].capacity, cases[i].used, &ur, NULL);
        if (r != cases[i].r || ur.used_percent != cases[i].used_pct ||
            ur.lower_percent != cases[i].lower_pct || ur.release != cases[i].release)
            fail_msg("case %zu: r %d used %lld lower %lld release %lld", i, r,
                     (long long)ur.used_percent, (long long)ur.lower_percent,
                     (long long)ur.release);
        assert_int_equal(ur.threshold_percent, 70);
    }
}

static void test_usage_config(void **state)
{
    struct qos_usage_release ur;
    struct qos_threshold t;
    const char *why = NULL;

    (void)state;
    t = cfg_default();
    t.memory_evict_threshold_percent.set = false;
    assert_int_equal(qos_memevict_usage_release(&t, false, 1000, 900, &ur, &why), -EINVAL);
    assert_string_equal(why, "memoryEvictThresholdPercent is not set");
    t = cfg_default();
    t.memory_evict_threshold_percent.value = -1;
    assert_int_equal(qos_memevict_usage_release(&t, false, 1000, 900, &ur, &why), -EINVAL);
    /* Threshold 0 is valid: lower -2. */
    t.memory_evict_threshold_percent.value = 0;
    assert_int_equal(qos_memevict_usage_release(&t, false, 1000, 0, &ur, &why), 1);
    assert_int_equal(ur.release, 20);
    /* lower must be below the threshold: equal fails, one below passes. */
    t = cfg_default();
    t.memory_evict_lower_percent.set = true;
    t.memory_evict_lower_percent.value = 70;
    assert_int_equal(qos_memevict_usage_release(&t, false, 1000, 900, &ur, &why), -EINVAL);
    assert_string_equal(why, "memoryEvictLowerPercent is not below memoryEvictThresholdPercent");
    t.memory_evict_lower_percent.value = 69;
    assert_int_equal(qos_memevict_usage_release(&t, false, 1000, 900, &ur, &why), 1);
    assert_int_equal(ur.release, 210);
    /* MemoryEvict also needs evictEnabledPriorityThreshold. */
    t = cfg_default();
    assert_int_equal(qos_memevict_usage_release(&t, true, 1000, 900, &ur, &why), -EINVAL);
    assert_string_equal(why, "evictEnabledPriorityThreshold is not set");
    t.evict_enabled_priority_threshold.set = true;
    assert_int_equal(qos_memevict_usage_release(&t, true, 1000, 900, &ur, &why), 1);
    assert_int_equal(qos_memevict_usage_release(&t, true, 0, 900, &ur, &why), -EINVAL);
    assert_string_equal(why, "node memory capacity is not positive");
}

static struct qos_threshold cfg_alloc(int64_t thr, int64_t lower, int64_t prio)
{
    struct qos_threshold t = cfg_default();

    t.memory_allocatable_evict_threshold_percent.set = thr >= -100;
    t.memory_allocatable_evict_threshold_percent.value = thr;
    t.memory_allocatable_evict_lower_percent.set = lower >= 0;
    t.memory_allocatable_evict_lower_percent.value = lower;
    t.allocatable_evict_priority_threshold.set = prio >= 0;
    t.allocatable_evict_priority_threshold.value = prio;
    return t;
}

static void test_allocatable_check(void **state)
{
    static const struct {
        int64_t thr, lower, prio;
        int r;
    } cases[] = {
        {110, 100, 7999, 0},     {110, -1, 5999, 0},        {-1000, 100, 7999, -EINVAL},
        {-1, -1, 7999, -EINVAL}, {110, 110, 7999, -EINVAL}, {110, 109, 7999, 0},
        {110, 100, -1, -EINVAL}, {110, 100, 8000, -EINVAL}, {0, -1, 0, -EINVAL},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct qos_threshold t = cfg_alloc(cases[i].thr, cases[i].lower, cases[i].prio);
        const char *why = NULL;

        if (qos_memevict_allocatable_check(&t, &why) != cases[i].r)
            fail_msg("case %zu", i);
        if (cases[i].r)
            assert_non_null(why);
    }
}

/* Containers with one request of resource r. */
static struct qos_container creq(enum qos_res r, int64_t v)
{
    struct qos_container c;

    memset(&c, 0, sizeof(c));
    c.name = "c";
    c.requests.v[r] = v;
    return c;
}

static void test_allocatable_release(void **state)
{
    struct qos_container c[] = {
        creq(QOS_RES_BATCH_MEMORY, 600),
        creq(QOS_RES_BATCH_MEMORY, 550),
        creq(QOS_RES_MID_MEMORY, 300),
        creq(QOS_RES_BATCH_MEMORY, 5000),
    };
    struct qos_pod pods[] = {
        {.name = "b1", .priority_class = API_PRIORITY_BATCH, .containers = &c[0], .ncontainers = 1},
        {.name = "b2",
         .priority_class = API_PRIORITY_BATCH,
         .containers = &c[1],
         .ncontainers = 1,
         .active = false},
        {.name = "m1", .priority_class = API_PRIORITY_MID, .containers = &c[2], .ncontainers = 1},
        /* koord-prod by class: above the priority threshold, not counted. */
        {.name = "p1",
         .priority_class = API_PRIORITY_BATCH,
         .has_priority = true,
         .priority = 9100,
         .containers = &c[3],
         .ncontainers = 1},
        {.name = "f1",
         .priority_class = API_PRIORITY_FREE,
         .requests = {.v = {[QOS_RES_MEMORY] = 200}}},
        {.name = "n1",
         .priority_class = API_PRIORITY_NONE,
         .requests = {.v = {[QOS_RES_MEMORY] = 300}}},
    };
    struct qos_node node;
    struct qos_threshold t = cfg_alloc(110, 100, 7999);
    struct qos_evict_task task;

    (void)state;
    memset(&node, 0, sizeof(node));
    node.allocatable.v[QOS_RES_BATCH_MEMORY] = 1000;
    node.allocatable.v[QOS_RES_MEMORY] = 5000;
    node.allocatable_present = 1u << QOS_RES_BATCH_MEMORY | 1u << QOS_RES_MEMORY;
    memset(&task, 0xa5, sizeof(task));
    qos_memevict_allocatable_release(&t, &node, pods, ARRAY_SIZE(pods), &task);
    /*
     * batch-memory: 1150 requested (inactive pods count) of 1000: 1.15 > 1.10, release
     * (1.15 - 1.00) x 1000 in float32 = 149.99997... -> 149 (150 in exact arithmetic).
     * mid-memory: not allocatable at all: all 300. memory: 500 of 5000, below 110 %.
     */
    assert_int_equal(task.release.v[QOS_RES_BATCH_MEMORY], 149);
    assert_int_equal(task.release.v[QOS_RES_MID_MEMORY], 300);
    assert_int_equal(task.release.v[QOS_RES_MEMORY], 0);
    assert_int_equal(task.request_classes, 1u << API_PRIORITY_BATCH | 1u << API_PRIORITY_MID);
    assert_int_equal(task.request_res, QOS_RES_MEMORY);

    /* Exactly at the threshold (1100 / 1000 vs 110 %) is not above it. */
    c[1].requests.v[QOS_RES_BATCH_MEMORY] = 500;
    qos_memevict_allocatable_release(&t, &node, pods, 2, &task);
    assert_int_equal(task.release.v[QOS_RES_BATCH_MEMORY], 0);
    assert_int_equal(task.request_classes, 0);
    /* One above: 1101 / 1000 releases (1.101 - 1.00) x 1000 = 100.99... -> 100 in float32. */
    c[1].requests.v[QOS_RES_BATCH_MEMORY] = 501;
    qos_memevict_allocatable_release(&t, &node, pods, 2, &task);
    assert_int_equal(task.release.v[QOS_RES_BATCH_MEMORY], 100);

    /* Zero allocatable releases the whole request; memory above the threshold has no class. */
    node.allocatable.v[QOS_RES_BATCH_MEMORY] = 0;
    node.allocatable.v[QOS_RES_MEMORY] = 400;
    qos_memevict_allocatable_release(&t, &node, pods, ARRAY_SIZE(pods), &task);
    assert_int_equal(task.release.v[QOS_RES_BATCH_MEMORY], 1101);
    /* 500 / 400 = 1.25: (1.25 - 1.00) x 400 = 100. */
    assert_int_equal(task.release.v[QOS_RES_MEMORY], 100);
    assert_int_equal(task.request_classes, 1u << API_PRIORITY_BATCH | 1u << API_PRIORITY_MID);

    /* Lower default 0: (1.25 - 0) x 400 = 500. */
    t = cfg_alloc(110, -1, 7999);
    qos_memevict_allocatable_release(&t, &node, pods, ARRAY_SIZE(pods), &task);
    assert_int_equal(task.release.v[QOS_RES_MEMORY], 500);
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
    struct qos_pod plain[] = {
        BE("c", .has_memory_usage = true, .memory_usage = 30),
        BE("x", .has_memory_usage = true, .memory_usage = 50),
        BE("d", .active = false),
        BE("e", .active = false),
        BE("y", .has_memory_usage = true, .memory_usage = 10),
        /* A zero sample sorts as no sample (upstream keeps usage as a plain number). */
        BE("a", .has_memory_usage = true, .memory_usage = 0),
        /* Not BE by label, or not allowed: never victims. */
        {.name = "ls", .qos_label = API_QOS_LS, .qos = API_QOS_LS},
        {.name = "kube-be", .qos = API_QOS_BE, .kube_qos = QOS_KUBE_BESTEFFORT},
        BE("policy", .eviction_policy = "[\"CPUEvict\"]"),
        BE("bad-policy", .eviction_policy = "{"),
        BE("allowed", .eviction_policy = "[\"BEMemoryEvict\"]", .has_memory_usage = true,
           .memory_usage = 20),
        /* Inactive BE pods are candidates too (upstream does not filter them). */
        BE("done", .active = false, .has_memory_usage = true, .memory_usage = 40),
    };
    struct qos_pod prio[] = {
        BE("p1", .has_priority = true, .priority = 5, .has_memory_usage = true, .memory_usage = 10),
        BE("p2", .has_priority = true, .priority = 3, .has_memory_usage = true, .memory_usage = 1),
        BE("p3", .has_priority = true, .priority = 5, .has_memory_usage = true, .memory_usage = 20),
        BE("p4", .has_priority = true, .priority = 5, .has_memory_usage = true, .memory_usage = 20),
        BE("p5", .has_priority = true, .priority = 5),
    };
    struct qos_evict_victim v[ARRAY_SIZE(plain)];
    struct strbuf sb = STRBUF_INIT;
    size_t n;

    (void)state;
    n = qos_memevict_be_victims(plain, ARRAY_SIZE(plain), v);
    assert_string_equal(names(v, n, &sb), "x done c allowed y e d a");
    assert_int_equal(v[0].used, 50);
    assert_int_equal(v[7].used, 0);
    /* Priority first when both have one and they differ; equal usage keeps input order. */
    n = qos_memevict_be_victims(prio, ARRAY_SIZE(prio), v);
    assert_string_equal(names(v, n, &sb), "p2 p3 p4 p1 p5");
    strbuf_release(&sb);
}

/* An eviction-enabled active pod with a memory sample; EVB adds class koord-batch. */
#define EV(n, ...)                                                                                 \
    {                                                                                              \
        .name = n, .uid = n, .active = true, .eviction_enabled = true, .has_memory_usage = true,   \
        __VA_ARGS__                                                                                \
    }
#define EVB(n, ...) EV(n, .priority_class = API_PRIORITY_BATCH, __VA_ARGS__)

static void test_priority_victims(void **state)
{
    struct qos_container big = creq(QOS_RES_BATCH_MEMORY, 900);
    struct qos_container small = creq(QOS_RES_BATCH_MEMORY, 100);
    struct qos_pod pods[] = {
        EVB("m1", .memory_usage = 100, .containers = &small, .ncontainers = 1),
        EVB("m2", .has_priority = true, .priority = 5100, .memory_usage = 500, .containers = &small,
            .ncontainers = 1),
        EVB("m3", .has_priority = true, .priority = 5100, .has_sub_priority = true,
            .sub_priority = -1, .memory_usage = 10, .containers = &big, .ncontainers = 1),
        EVB("m4", .eviction_priority = -5, .has_priority = true, .priority = 5900,
            .memory_usage = 1),
        {.name = "m5",
         .uid = "m5",
         .active = true,
         .has_memory_usage = true,
         .priority_class = API_PRIORITY_BATCH},
        {.name = "m6",
         .uid = "m6",
         .eviction_enabled = true,
         .has_memory_usage = true,
         .priority_class = API_PRIORITY_BATCH},
        {.name = "m7",
         .uid = "m7",
         .active = true,
         .eviction_enabled = true,
         .priority_class = API_PRIORITY_BATCH},
        EVB("m8", .has_priority = true, .priority = 6000),
        EVB("m9", .has_priority = true, .priority = 5999, .memory_usage = 7, .containers = &big,
            .ncontainers = 1),
        EVB("m10", .eviction_policy = "[\"BEMemoryEvict\"]"),
        EVB("m11", .eviction_policy = "[\"MemoryAllocatableEvict\"]", .memory_usage = 3,
            .containers = &big, .ncontainers = 1),
        /* spec.priority 0 means "use the class default" (5500). */
        EVB("m12", .has_priority = true, .priority = 0, .memory_usage = 1000),
    };
    struct qos_evict_victim v[ARRAY_SIZE(pods)];
    struct strbuf sb = STRBUF_INIT;
    size_t n;

    (void)state;
    /* MemoryEvict: eviction-priority, priority, label priority, then larger usage. */
    n = qos_memevict_victims(pods, ARRAY_SIZE(pods), 5999, false, v);
    assert_string_equal(names(v, n, &sb), "m4 m3 m2 m12 m1 m9");
    assert_int_equal(v[0].priority, 5900);
    assert_int_equal(v[1].label_priority, -1);
    assert_int_equal(v[2].label_priority, 5100);
    assert_int_equal(v[3].priority, 5500);
    /* Usage counts in real bytes (upstream's x1000 is not copied). */
    assert_int_equal(v[2].used, 500);
    /* One below the boundary priority drops m9. */
    n = qos_memevict_victims(pods, ARRAY_SIZE(pods), 5998, false, v);
    assert_string_equal(names(v, n, &sb), "m4 m3 m2 m12 m1");
    /* MemoryAllocatableEvict: same filter for its feature, larger request last key. */
    n = qos_memevict_victims(pods, ARRAY_SIZE(pods), 7999, true, v);
    assert_string_equal(names(v, n, &sb), "m4 m3 m2 m11 m1 m12 m9 m8");
    assert_int_equal(v[3].request, 900);
    strbuf_release(&sb);
}

/* ---- a whole tick ---- */

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
    struct qos_container big = creq(QOS_RES_BATCH_MEMORY, 600);
    struct qos_pod pods[] = {
        BE("be1", .active = true, .has_memory_usage = true, .memory_usage = 30,
           .priority_class = API_PRIORITY_BATCH, .priority_class_raw = API_PRIORITY_BATCH,
           .containers = &big, .ncontainers = 1),
        BE("be2", .active = true, .has_memory_usage = true, .memory_usage = 20,
           .priority_class = API_PRIORITY_BATCH, .priority_class_raw = API_PRIORITY_BATCH,
           .containers = &big, .ncontainers = 1),
        EV("ls1", .memory_usage = 15, .priority_class = API_PRIORITY_MID,
           .priority_class_raw = API_PRIORITY_MID),
        EV("ls2", .memory_usage = 5, .priority_class = API_PRIORITY_MID,
           .priority_class_raw = API_PRIORITY_MID),
    };
    struct qos_node node;
    struct qos_threshold t = cfg_alloc(110, 100, 7999);
    struct qos_memevict_input in = {
        .cfg = &t,
        .node = &node,
        .pods = pods,
        .npods = ARRAY_SIZE(pods),
        .node_used = 76,
        .has_node_used = true,
        .be_memory_evict = true,
        .memory_evict = true,
        .memory_allocatable_evict = true,
    };
    struct qos_memevict_plan p;
    struct qos_evict_result res;
    struct recorder rec = {STRBUF_INIT};

    (void)state;
    memset(&node, 0, sizeof(node));
    node.capacity.v[QOS_RES_MEMORY] = 100;
    node.allocatable.v[QOS_RES_BATCH_MEMORY] = 1000;
    node.allocatable_present = 1u << QOS_RES_BATCH_MEMORY;
    t.evict_enabled_priority_threshold.set = true;
    t.evict_enabled_priority_threshold.value = 7999;

    /* 76 % used of 100 bytes: release 8 (76 - 68). Allocatable: 1200 / 1000 > 110 %, release
     * (1.2 - 1.0) x 1000 = 200 (float32: 200.00005 -> 200). */
    assert_int_equal(qos_memevict_plan(&in, &p), 0);
    assert_int_equal(p.ntasks, 3);
    assert_string_equal(p.tasks[0].feature, "BEMemoryEvict");
    assert_string_equal(p.tasks[1].feature, "MemoryAllocatableEvict");
    assert_string_equal(p.tasks[2].feature, "MemoryEvict");
    assert_int_equal(p.tasks[0].release.v[QOS_RES_MEMORY], 8);
    assert_int_equal(p.tasks[1].release.v[QOS_RES_BATCH_MEMORY], 200);
    assert_int_equal(p.tasks[2].release.v[QOS_RES_MEMORY], 8);
    assert_int_equal(p.tasks[0].nvictims, 2);
    assert_int_equal(p.tasks[2].nvictims, 2);
    /* be1 alone releases 30 >= 8 bytes and 600 >= 200 batch-memory: every task is done. */
    assert_int_equal(qos_evict_run(p.tasks, p.ntasks, NULL, 0, record, &rec, &res), 0);
    assert_string_equal(rec.log.buf, "BEMemoryEvict:be1");
    assert_int_equal(res.nevicted, 1);
    qos_memevict_plan_release(&p);

    /* Only MemoryEvict: ls1 (15) covers 8 bytes; the priority threshold is required. */
    in.be_memory_evict = false;
    in.memory_allocatable_evict = false;
    strbuf_reset(&rec.log);
    assert_int_equal(qos_memevict_plan(&in, &p), 0);
    assert_int_equal(p.ntasks, 1);
    assert_int_equal(qos_evict_run(p.tasks, p.ntasks, NULL, 0, record, &rec, &res), 0);
    assert_string_equal(rec.log.buf, "MemoryEvict:ls1");
    qos_memevict_plan_release(&p);
    /* A larger target (90 %: 22 bytes) takes both, counting real bytes: 15 + 5 = 20 < 22. */
    in.node_used = 90;
    strbuf_reset(&rec.log);
    assert_int_equal(qos_memevict_plan(&in, &p), 0);
    assert_int_equal(p.tasks[0].release.v[QOS_RES_MEMORY], 22);
    assert_int_equal(qos_evict_run(p.tasks, p.ntasks, NULL, 0, record, &rec, &res), 0);
    assert_string_equal(rec.log.buf, "MemoryEvict:ls1 MemoryEvict:ls2");
    qos_memevict_plan_release(&p);
    t.evict_enabled_priority_threshold.set = false;
    assert_int_equal(qos_memevict_plan(&in, &p), 0);
    assert_int_equal(p.ntasks, 0);
    assert_string_equal(p.skipped[2], "evictEnabledPriorityThreshold is not set");
    qos_memevict_plan_release(&p);

    /* Below the threshold, no sample, disabled by NodeSLO: no task. */
    in.be_memory_evict = true;
    in.node_used = 69;
    assert_int_equal(qos_memevict_plan(&in, &p), 0);
    assert_int_equal(p.ntasks, 0);
    assert_string_equal(p.skipped[0], "node memory usage is below the threshold");
    qos_memevict_plan_release(&p);
    in.node_used = 90;
    in.has_node_used = false;
    assert_int_equal(qos_memevict_plan(&in, &p), 0);
    assert_int_equal(p.ntasks, 0);
    assert_string_equal(p.skipped[0], "no node memory usage sample");
    qos_memevict_plan_release(&p);
    in.has_node_used = true;
    t.enable = false;
    assert_int_equal(qos_memevict_plan(&in, &p), 0);
    assert_int_equal(p.ntasks, 0);
    assert_string_equal(p.skipped[0], "");
    qos_memevict_plan_release(&p);
    t.enable = true;
    node.capacity.v[QOS_RES_MEMORY] = 0;
    assert_int_equal(qos_memevict_plan(&in, &p), -EINVAL);
    assert_int_equal(p.ntasks, 0);
    qos_memevict_plan_release(&p);
    node.capacity.v[QOS_RES_MEMORY] = 100;
    alloc_fail_after(1);
    assert_int_equal(qos_memevict_plan(&in, &p), -ENOMEM);
    alloc_fail_after(0);
    strbuf_release(&rec.log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cooling),
        cmocka_unit_test(test_usage_release),
        cmocka_unit_test(test_usage_config),
        cmocka_unit_test(test_allocatable_check),
        cmocka_unit_test(test_allocatable_release),
        cmocka_unit_test(test_be_victims),
        cmocka_unit_test(test_priority_victims),
        cmocka_unit_test(test_plan),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
