/*
 * Tests for agent/qos/memoryqos (reference 3.5): pod configs under policies default, none and
 * auto with annotation fields merged, container memory.min/low/high with page rounding and the
 * node-allocatable fallback, BE pods on batch-memory, the low/high raises to min, the pod level
 * with the page-cache limit, and the kube-QoS level sums.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/qos/memoryqos.h"
#include "base/base.h"
#include "codec/codec.h"

#define GI ((int64_t)1 << 30)
#define MI ((int64_t)1 << 20)

static bool is_set(const struct qos_memcg *m, enum qos_memcg_field f)
{
    return m->set & (1u << f);
}

/* A node config with LS enabled (min 50 %, low 20 %, throttling 80 %). */
static void node_cfg(struct qos_resource_qos *q)
{
    struct qos_slo s;

    qos_slo_defaults(&s);
    *q = s.resource_qos;
    q->classes[QOS_CLASS_LS].memory.enable = true;
    q->classes[QOS_CLASS_LS].memory.min_limit_percent = 50;
    q->classes[QOS_CLASS_LS].memory.low_limit_percent = 20;
    q->classes[QOS_CLASS_LS].memory.throttling_percent = 80;
    q->classes[QOS_CLASS_LS].memory.wmark_ratio = 95;
    q->classes[QOS_CLASS_LS].memory.wmark_scale_permill = 20;
    q->classes[QOS_CLASS_LS].memory.wmark_min_adj = -25;
}

static void test_files(void **state)
{
    (void)state;
    assert_string_equal(qos_memcg_file(QOS_MEMCG_MIN), "memory.min");
    assert_string_equal(qos_memcg_file(QOS_MEMCG_HIGH), "memory.high");
    assert_string_equal(qos_memcg_file(QOS_MEMCG_USE_PRIORITY_OOM), "memory.use_priority_oom");
    assert_string_equal(qos_memcg_file(QOS_MEMCG_OOM_GROUP), "memory.oom.group");
    assert_string_equal(qos_memcg_file(QOS_MEMCG_PAGECACHE_SIZE), "memory.pagecache_limit.size");
    assert_string_equal(qos_memcg_file(QOS_MEMCG_COUNT), "");
    assert_true(qos_memcg_mergeable(QOS_MEMCG_MIN));
    assert_true(qos_memcg_mergeable(QOS_MEMCG_LOW));
    assert_true(qos_memcg_mergeable(QOS_MEMCG_HIGH));
    assert_false(qos_memcg_mergeable(QOS_MEMCG_WMARK_RATIO));
}

static void test_pod_config(void **state)
{
    struct qos_resource_qos node;
    struct qos_memory_qos m;
    struct qos_pod p = {.qos = API_QOS_LS};

    (void)state;
    node_cfg(&node);
    /* default: the node's LS values. */
    assert_int_equal(qos_memqos_pod_config(&node, &p, &m), 0);
    assert_int_equal(m.min_limit_percent, 50);
    assert_int_equal(m.throttling_percent, 80);
    p.memory_qos = "{\"policy\":\"default\",\"minLimitPercent\":70}";
    assert_int_equal(qos_memqos_pod_config(&node, &p, &m), 0);
    assert_int_equal(m.min_limit_percent, 70);
    assert_int_equal(m.low_limit_percent, 20);
    /* none: neutral, nothing merged. */
    p.memory_qos = "{\"policy\":\"none\",\"minLimitPercent\":70}";
    assert_int_equal(qos_memqos_pod_config(&node, &p, &m), 0);
    assert_false(m.enable);
    assert_int_equal(m.min_limit_percent, 0);
    assert_int_equal(m.throttling_percent, 0);
    assert_int_equal(m.wmark_ratio, 0);
    assert_int_equal(m.wmark_scale_permill, 50);
    assert_int_equal(m.wmark_min_adj, 0);
    /* auto: the recommended values of the class, then the fields. */
    p.memory_qos = "{\"policy\":\"auto\"}";
    assert_int_equal(qos_memqos_pod_config(&node, &p, &m), 0);
    assert_int_equal(m.min_limit_percent, 0);
    assert_int_equal(m.throttling_percent, 0);
    assert_int_equal(m.wmark_ratio, 95);
    assert_int_equal(m.wmark_scale_permill, 20);
    assert_int_equal(m.wmark_min_adj, -25);
    p.memory_qos = "{\"policy\":\"auto\",\"lowLimitPercent\":30}";
    assert_int_equal(qos_memqos_pod_config(&node, &p, &m), 0);
    assert_int_equal(m.low_limit_percent, 30);
    assert_int_equal(m.wmark_ratio, 95);
    /* BE's recommended wmarkMinAdj is 50, even though the node's BE class is disabled. */
    p.qos = API_QOS_BE;
    p.memory_qos = "{\"policy\":\"auto\"}";
    assert_int_equal(qos_memqos_pod_config(&node, &p, &m), 0);
    assert_int_equal(m.wmark_min_adj, 50);
    /* SYSTEM: 0, 50, 0. */
    p.qos = API_QOS_SYSTEM;
    assert_int_equal(qos_memqos_pod_config(&node, &p, &m), 0);
    assert_int_equal(m.wmark_ratio, 0);
    assert_int_equal(m.wmark_scale_permill, 50);
    /* LSE follows lsrClass (disabled here: neutral values). */
    p.qos = API_QOS_LSE;
    p.memory_qos = NULL;
    node.classes[QOS_CLASS_LSR].memory.min_limit_percent = 77;
    assert_int_equal(qos_memqos_pod_config(&node, &p, &m), 0);
    assert_int_equal(m.min_limit_percent, 77);
    /* Unknown policy strings act as default; bad annotations are ignored. */
    p.qos = API_QOS_LS;
    p.memory_qos = "{\"policy\":\"sometimes\",\"minLimitPercent\":1}";
    assert_int_equal(qos_memqos_pod_config(&node, &p, &m), 0);
    assert_int_equal(m.min_limit_percent, 1);
    p.memory_qos = "{\"policy\":\"none\",\"minLimitPercent\":\"x\"}";
    assert_int_equal(qos_memqos_pod_config(&node, &p, &m), 0);
    assert_int_equal(m.min_limit_percent, 0);
    p.memory_qos = "{\"policy\":\"auto\",\"minLimitPercent\":\"x\"}";
    assert_int_equal(qos_memqos_pod_config(&node, &p, &m), -EINVAL);
    assert_int_equal(m.min_limit_percent, 50);
    p.memory_qos = "{\"policy\":3}";
    assert_int_equal(qos_memqos_pod_config(&node, &p, &m), -EINVAL);
    assert_int_equal(m.min_limit_percent, 50);
    p.memory_qos = "not json";
    assert_int_equal(qos_memqos_pod_config(&node, &p, &m), -EINVAL);
    assert_int_equal(m.min_limit_percent, 50);
    p.memory_qos = "null";
    assert_int_equal(qos_memqos_pod_config(&node, &p, &m), 0);
    assert_int_equal(m.min_limit_percent, 50);
    /* No QoS class: nothing. */
    p.qos = API_QOS_NONE;
    assert_int_equal(qos_memqos_pod_config(&node, &p, &m), -ENOENT);
    assert_null(qos_memqos_class(&node, &p));
}

static void test_container(void **state)
{
    struct qos_memory_qos cfg, saved;
    struct qos_container c = {.name = "c",
                              .requests = {.v = {[QOS_RES_MEMORY] = GI}},
                              .limits = {.v = {[QOS_RES_MEMORY] = 2 * GI}}};
    struct qos_pod p = {.qos = API_QOS_LS};
    struct qos_memcg m;

    (void)state;
    memset(&cfg, 0, sizeof(cfg));
    cfg.min_limit_percent = 100;
    cfg.low_limit_percent = 100;
    cfg.throttling_percent = 80;
    cfg.wmark_ratio = 95;
    cfg.wmark_scale_permill = 20;
    cfg.wmark_min_adj = -25;
    cfg.priority_enable = 1;
    cfg.priority = 12;
    cfg.oom_kill_group = 1;
    /*
     * high = 1Gi + (2Gi - 1Gi) x 80 / 100 = 1073741824 + 858993459 = 1932735283, rounded down
     * to whole 4 KiB pages: 471859 x 4096 = 1932734464.
     */
    qos_memqos_container(&cfg, &p, &c, 8 * GI, 4096, &m);
    assert_int_equal(m.v[QOS_MEMCG_MIN], GI);
    assert_int_equal(m.v[QOS_MEMCG_LOW], GI);
    assert_int_equal(m.v[QOS_MEMCG_HIGH], INT64_C(1932734464));
    assert_int_equal(m.v[QOS_MEMCG_WMARK_RATIO], 95);
    assert_int_equal(m.v[QOS_MEMCG_WMARK_SCALE_FACTOR], 20);
    assert_int_equal(m.v[QOS_MEMCG_WMARK_MIN_ADJ], -25);
    assert_int_equal(m.v[QOS_MEMCG_USE_PRIORITY_OOM], 1);
    assert_int_equal(m.v[QOS_MEMCG_PRIORITY], 12);
    assert_int_equal(m.v[QOS_MEMCG_OOM_GROUP], 1);
    assert_false(is_set(&m, QOS_MEMCG_PAGECACHE_ENABLE));
    /* The same with 64 KiB pages: 29491 x 65536. */
    qos_memqos_container(&cfg, &p, &c, 8 * GI, 65536, &m);
    assert_int_equal(m.v[QOS_MEMCG_HIGH], INT64_C(1932722176));

    /* No limit: the node's allocatable memory. 100Mi + (8Gi - 100Mi) x 80 %. */
    c.requests.v[QOS_RES_MEMORY] = 100 * MI;
    c.limits.v[QOS_RES_MEMORY] = 0;
    qos_memqos_container(&cfg, &p, &c, 8 * GI, 4096, &m);
    assert_int_equal(m.v[QOS_MEMCG_HIGH], INT64_C(6892916736));

    /* Throttling 0: "max". */
    cfg.throttling_percent = 0;
    qos_memqos_container(&cfg, &p, &c, 8 * GI, 4096, &m);
    assert_int_equal(m.v[QOS_MEMCG_HIGH], INT64_MAX);
    assert_true(is_set(&m, QOS_MEMCG_HIGH));

    /* low below min is raised; low 0 stays 0. */
    cfg.min_limit_percent = 50;
    cfg.low_limit_percent = 20;
    c.requests.v[QOS_RES_MEMORY] = 1000;
    qos_memqos_container(&cfg, &p, &c, 8 * GI, 4096, &m);
    assert_int_equal(m.v[QOS_MEMCG_MIN], 500);
    assert_int_equal(m.v[QOS_MEMCG_LOW], 500);
    cfg.low_limit_percent = 0;
    qos_memqos_container(&cfg, &p, &c, 8 * GI, 4096, &m);
    assert_int_equal(m.v[QOS_MEMCG_LOW], 0);
    /* high below min is raised (a limit below the request). */
    cfg.min_limit_percent = 100;
    cfg.throttling_percent = 10;
    c.limits.v[QOS_RES_MEMORY] = 500;
    qos_memqos_container(&cfg, &p, &c, 8 * GI, 1, &m);
    assert_int_equal(m.v[QOS_MEMCG_HIGH], 1000);
    /* Rounded down to 0: upstream writes 0, which stalls the container; here no throttling. */
    qos_memqos_container(&cfg, &p, &c, 8 * GI, 4096, &m);
    assert_int_equal(m.v[QOS_MEMCG_HIGH], QOS_MEMORY_HIGH_MAX);
    /* No limit and no node allocatable to scale: no throttling either. */
    c.limits.v[QOS_RES_MEMORY] = 0;
    qos_memqos_container(&cfg, &p, &c, 0, 4096, &m);
    assert_int_equal(m.v[QOS_MEMCG_HIGH], QOS_MEMORY_HIGH_MAX);
    c.limits.v[QOS_RES_MEMORY] = 500;

    /* A request near INT64_MAX (any quantity a pod author writes): no overflow, exact. */
    saved = cfg;
    c.requests.v[QOS_RES_MEMORY] = INT64_MAX - 99;
    c.limits.v[QOS_RES_MEMORY] = 0;
    cfg.min_limit_percent = 50;
    cfg.low_limit_percent = 100;
    cfg.throttling_percent = 0;
    qos_memqos_container(&cfg, &p, &c, 8 * GI, 4096, &m);
    assert_int_equal(m.v[QOS_MEMCG_MIN], (INT64_MAX - 99) / 2);
    assert_int_equal(m.v[QOS_MEMCG_LOW], INT64_MAX - 99);
    cfg = saved;

    /* Unset request: 0. */
    c.requests.v[QOS_RES_MEMORY] = 0;
    c.limits.v[QOS_RES_MEMORY] = 4096 * 10;
    cfg.throttling_percent = 50;
    qos_memqos_container(&cfg, &p, &c, 8 * GI, 4096, &m);
    assert_int_equal(m.v[QOS_MEMCG_MIN], 0);
    assert_int_equal(m.v[QOS_MEMCG_HIGH], 4096 * 5);

    /* BE pods (by label) use batch-memory. */
    p.qos_label = API_QOS_BE;
    c.requests.v[QOS_RES_BATCH_MEMORY] = 2 * GI;
    c.limits.v[QOS_RES_BATCH_MEMORY] = 4 * GI;
    qos_memqos_container(&cfg, &p, &c, 8 * GI, 4096, &m);
    assert_int_equal(m.v[QOS_MEMCG_MIN], 2 * GI);
    assert_int_equal(m.v[QOS_MEMCG_HIGH], 3 * GI);
}

static void test_pod(void **state)
{
    struct qos_memory_qos cfg;
    struct qos_container cs[] = {
        {.name = "a",
         .requests = {.v = {[QOS_RES_MEMORY] = GI, [QOS_RES_BATCH_MEMORY] = GI}},
         .limits = {.v = {[QOS_RES_MEMORY] = 2 * GI, [QOS_RES_BATCH_MEMORY] = 2 * GI}}},
        {.name = "b",
         .requests = {.v = {[QOS_RES_BATCH_MEMORY] = -5}},
         .limits = {.v = {[QOS_RES_MEMORY] = GI, [QOS_RES_BATCH_MEMORY] = GI}}},
    };
    struct qos_pod p = {.qos = API_QOS_LS,
                        .containers = cs,
                        .ncontainers = 2,
                        .requests = {.v = {[QOS_RES_MEMORY] = 3 * GI}}};
    struct qos_memcg m;

    (void)state;
    memset(&cfg, 0, sizeof(cfg));
    cfg.min_limit_percent = 50;
    cfg.low_limit_percent = 10;
    cfg.throttling_percent = 80;
    cfg.wmark_ratio = 90;
    /* The pod request (with init containers, overhead): 3Gi; low raised to min. */
    qos_memqos_pod(&cfg, &p, &m);
    assert_int_equal(m.v[QOS_MEMCG_MIN], 3 * GI / 2);
    assert_int_equal(m.v[QOS_MEMCG_LOW], 3 * GI / 2);
    assert_false(is_set(&m, QOS_MEMCG_HIGH));
    assert_int_equal(m.v[QOS_MEMCG_WMARK_RATIO], 90);
    assert_true(is_set(&m, QOS_MEMCG_PAGECACHE_ENABLE));
    assert_int_equal(m.v[QOS_MEMCG_PAGECACHE_ENABLE], 0);
    assert_false(is_set(&m, QOS_MEMCG_PAGECACHE_SIZE));
    /* BE: batch-memory requests, the negative one skipped. */
    p.qos_label = API_QOS_BE;
    qos_memqos_pod(&cfg, &p, &m);
    assert_int_equal(m.v[QOS_MEMCG_MIN], GI / 2);

    /* Page cache: a size capped at the pod limit (3Gi), or a percent of it. */
    p.qos_label = API_QOS_LS;
    cfg.page_cache_enable = true;
    cfg.page_cache_limit_size = 4 * GI;
    cfg.page_cache_reclaim_sync = true;
    qos_memqos_pod(&cfg, &p, &m);
    assert_int_equal(m.v[QOS_MEMCG_PAGECACHE_ENABLE], 1);
    assert_int_equal(m.v[QOS_MEMCG_PAGECACHE_SYNC], 1);
    assert_int_equal(m.v[QOS_MEMCG_PAGECACHE_SIZE], 3 * GI);
    cfg.page_cache_limit_size = GI;
    qos_memqos_pod(&cfg, &p, &m);
    assert_int_equal(m.v[QOS_MEMCG_PAGECACHE_SIZE], GI);
    cfg.page_cache_limit_size = 0;
    cfg.page_cache_limit_percent = 50;
    cfg.page_cache_reclaim_sync = false;
    qos_memqos_pod(&cfg, &p, &m);
    assert_int_equal(m.v[QOS_MEMCG_PAGECACHE_SIZE], 3 * GI / 2);
    assert_int_equal(m.v[QOS_MEMCG_PAGECACHE_SYNC], 0);
    /* Unlimited pod: a percent gives no size, an absolute size stays. */
    cs[1].limits.v[QOS_RES_MEMORY] = 0;
    qos_memqos_pod(&cfg, &p, &m);
    assert_false(is_set(&m, QOS_MEMCG_PAGECACHE_SIZE));
    cfg.page_cache_limit_size = 8 * GI;
    qos_memqos_pod(&cfg, &p, &m);
    assert_int_equal(m.v[QOS_MEMCG_PAGECACHE_SIZE], 8 * GI);
}

static void test_kube_level(void **state)
{
    struct qos_resource_qos node;
    struct qos_container be_c = {.name = "c", .requests = {.v = {[QOS_RES_BATCH_MEMORY] = 2 * GI}}};
    struct qos_pod pods[] = {
        {.name = "ls",
         .active = true,
         .qos = API_QOS_LS,
         .kube_qos = QOS_KUBE_BURSTABLE,
         .requests = {.v = {[QOS_RES_MEMORY] = GI}}},
        {.name = "be",
         .active = true,
         .qos = API_QOS_BE,
         .qos_label = API_QOS_BE,
         .kube_qos = QOS_KUBE_BESTEFFORT,
         .containers = &be_c,
         .ncontainers = 1},
        {.name = "lsr",
         .active = true,
         .qos = API_QOS_LSR,
         .kube_qos = QOS_KUBE_GUARANTEED,
         .requests = {.v = {[QOS_RES_MEMORY] = 4 * GI}}},
        {.name = "done",
         .active = false,
         .qos = API_QOS_LS,
         .kube_qos = QOS_KUBE_BURSTABLE,
         .requests = {.v = {[QOS_RES_MEMORY] = 100 * GI}}},
        {.name = "noclass",
         .active = true,
         .kube_qos = QOS_KUBE_BURSTABLE,
         .requests = {.v = {[QOS_RES_MEMORY] = 100 * GI}}},
        /* Its own annotation counts: min 100 % of 1Gi into Burstable. */
        {.name = "ann",
         .active = true,
         .qos = API_QOS_LS,
         .kube_qos = QOS_KUBE_BURSTABLE,
         .memory_qos = "{\"minLimitPercent\":100}",
         .requests = {.v = {[QOS_RES_MEMORY] = GI}}},
    };
    struct qos_memqos_kube k;

    (void)state;
    node_cfg(&node);
    node.classes[QOS_CLASS_LS].memory.min_limit_percent = 10;
    node.classes[QOS_CLASS_BE].memory.min_limit_percent = 50;
    node.classes[QOS_CLASS_LSR].memory.min_limit_percent = 100;
    node.classes[QOS_CLASS_LSR].memory.priority_enable = 1;
    node.classes[QOS_CLASS_LSR].memory.priority = 12;
    node.classes[QOS_CLASS_BE].memory.oom_kill_group = 1;
    qos_memqos_kube_level(&node, pods, ARRAY_SIZE(pods), &k);
    /* Burstable: 1Gi x 10 % + 1Gi x 100 %; BestEffort: 2Gi x 50 %; root: all plus 4Gi. */
    assert_int_equal(k.burstable.v[QOS_MEMCG_MIN], GI * 10 / 100 + GI);
    assert_int_equal(k.besteffort.v[QOS_MEMCG_MIN], GI);
    assert_int_equal(k.guaranteed.v[QOS_MEMCG_MIN], 4 * GI + GI * 10 / 100 + GI + GI);
    /* low: LS 20 % of 1Gi twice (the annotation keeps 20 %); none for the others. */
    assert_int_equal(k.burstable.v[QOS_MEMCG_LOW], 2 * (GI * 20 / 100));
    assert_int_equal(k.guaranteed.v[QOS_MEMCG_LOW], 2 * (GI * 20 / 100));
    /* OOM settings by class; no wmarks or high at this level. */
    assert_int_equal(k.guaranteed.v[QOS_MEMCG_USE_PRIORITY_OOM], 1);
    assert_int_equal(k.guaranteed.v[QOS_MEMCG_PRIORITY], 12);
    assert_int_equal(k.besteffort.v[QOS_MEMCG_OOM_GROUP], 1);
    assert_int_equal(k.burstable.v[QOS_MEMCG_PRIORITY], 0);
    assert_true(is_set(&k.burstable, QOS_MEMCG_PRIORITY));
    assert_false(is_set(&k.burstable, QOS_MEMCG_WMARK_RATIO));
    assert_false(is_set(&k.guaranteed, QOS_MEMCG_HIGH));

    /* Without pods: min and low 0 everywhere (a level whose protected pods left is reset). */
    qos_memqos_kube_level(&node, pods, 0, &k);
    assert_true(is_set(&k.guaranteed, QOS_MEMCG_MIN));
    assert_int_equal(k.guaranteed.v[QOS_MEMCG_MIN], 0);
    assert_true(is_set(&k.burstable, QOS_MEMCG_LOW));
    assert_int_equal(k.burstable.v[QOS_MEMCG_LOW], 0);
    assert_true(is_set(&k.besteffort, QOS_MEMCG_MIN));
    assert_int_equal(k.besteffort.v[QOS_MEMCG_MIN], 0);
    assert_true(is_set(&k.besteffort, QOS_MEMCG_OOM_GROUP));
    /* Only a BestEffort pod: the root gets its sum, Burstable 0. */
    qos_memqos_kube_level(&node, &pods[1], 1, &k);
    assert_int_equal(k.guaranteed.v[QOS_MEMCG_MIN], GI);
    assert_true(is_set(&k.burstable, QOS_MEMCG_MIN));
    assert_int_equal(k.burstable.v[QOS_MEMCG_MIN], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_files),      cmocka_unit_test(test_pod_config),
        cmocka_unit_test(test_container),  cmocka_unit_test(test_pod),
        cmocka_unit_test(test_kube_level),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
