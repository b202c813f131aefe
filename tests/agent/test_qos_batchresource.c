/*
 * Tests for agent/qos/batchresource (reference 3.9, BatchResource): cpu.shares with its bounds,
 * cfs quota with the minimum, unlimited containers, the normalization ratio and the cfsQuota
 * suppress policy, memory limits, at pod and container level.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/qos/batchresource.h"
#include "base/base.h"
#include "codec/codec.h"

#define GI ((int64_t)1 << 30)

static struct qos_container mk(int64_t req, int64_t cpu_lim, int64_t mem_lim)
{
    struct qos_container c;

    memset(&c, 0, sizeof(c));
    c.name = "c";
    c.requests.v[QOS_RES_BATCH_CPU] = req;
    c.limits.v[QOS_RES_BATCH_CPU] = cpu_lim;
    c.limits.v[QOS_RES_BATCH_MEMORY] = mem_lim;
    return c;
}

static void test_applies(void **state)
{
    struct qos_pod p = {.qos = API_QOS_BE};

    (void)state;
    assert_false(qos_batch_applies(&p));
    p.qos_label = API_QOS_BE;
    assert_true(qos_batch_applies(&p));
    p.qos_label = API_QOS_LS;
    assert_false(qos_batch_applies(&p));
}

static void test_container(void **state)
{
    static const struct {
        int64_t req, cpu_lim, mem_lim;
        double ratio;
        bool suppress;
        int64_t shares, quota, mem;
    } cases[] = {
        {500, 2000, 4 * GI, 0, false, 512, 200000, 4 * GI},
        {1000, 1000, GI, 0, false, 1024, 100000, GI},
        /* Shares at least 2: 1 milli -> 1 -> 2; none -> 2; negative -> 2. */
        {1, 1, 0, 0, false, 2, 1000, -1},
        {0, 0, 0, 0, false, 2, -1, -1},
        {-5, -5, -5, 0, false, 2, -1, -1},
        /* 2 milli: 2 shares exactly; 3 milli: 3. */
        {2, 0, 0, 0, false, 2, -1, -1},
        {3, 10, 0, 0, false, 3, 1000, -1},
        /* At most 262144: 256000 milli -> 262144 exactly, more is capped. */
        {256000, 0, 0, 0, false, 262144, -1, -1},
        {300000, 0, 0, 0, false, 262144, -1, -1},
        /* Normalization: 200000 / 1.5; ratios <= 1 do nothing; minimum applied first. */
        {0, 2000, 0, 1.5, false, 2, 133333, -1},
        {0, 2000, 0, 1.0, false, 2, 200000, -1},
        {0, 2000, 0, 0.5, false, 2, 200000, -1},
        {0, 5, 0, 2.0, false, 2, 500, -1},
        /* cfsQuota suppress policy: -1 whatever the limit. */
        {500, 2000, GI, 1.5, true, 512, -1, GI},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct qos_container c = mk(cases[i].req, cases[i].cpu_lim, cases[i].mem_lim);
        struct qos_batch_node node = {cases[i].ratio, cases[i].suppress};
        struct qos_batch_values v;

        qos_batch_container(&c, &node, &v);
        if (v.cpu_shares != cases[i].shares || v.cfs_quota != cases[i].quota ||
            v.memory_limit != cases[i].mem)
            fail_msg("case %zu: shares %lld quota %lld mem %lld", i, (long long)v.cpu_shares,
                     (long long)v.cfs_quota, (long long)v.memory_limit);
    }
}

static void test_pod(void **state)
{
    struct qos_container cs[] = {mk(1000, 2000, 2 * GI), mk(500, 1000, GI), mk(-3, 1, 1)};
    struct qos_pod p = {.qos_label = API_QOS_BE, .containers = cs, .ncontainers = 2};
    struct qos_batch_node node = {0, false};
    struct qos_batch_values v;

    (void)state;
    qos_batch_pod(&p, &node, &v);
    assert_int_equal(v.cpu_shares, 1536);
    assert_int_equal(v.cfs_quota, 300000);
    assert_int_equal(v.memory_limit, 3 * GI);
    /* Negative requests are skipped; tiny limits add up. */
    p.ncontainers = 3;
    qos_batch_pod(&p, &node, &v);
    assert_int_equal(v.cpu_shares, 1536);
    assert_int_equal(v.cfs_quota, 300100);
    assert_int_equal(v.memory_limit, 3 * GI + 1);
    /* One unlimited container makes the pod unlimited, in CPU and memory separately. */
    cs[1].limits.v[QOS_RES_BATCH_CPU] = 0;
    qos_batch_pod(&p, &node, &v);
    assert_int_equal(v.cfs_quota, -1);
    assert_int_equal(v.memory_limit, 3 * GI + 1);
    cs[1].limits.v[QOS_RES_BATCH_CPU] = 1000;
    cs[0].limits.v[QOS_RES_BATCH_MEMORY] = 0;
    qos_batch_pod(&p, &node, &v);
    assert_int_equal(v.cfs_quota, 300100);
    assert_int_equal(v.memory_limit, -1);
    /* Suppress policy cfsQuota and normalization. */
    node.suppress_cfs_quota = true;
    qos_batch_pod(&p, &node, &v);
    assert_int_equal(v.cfs_quota, -1);
    node.suppress_cfs_quota = false;
    node.normalization_ratio = 2;
    qos_batch_pod(&p, &node, &v);
    assert_int_equal(v.cfs_quota, 150050);
    /* Small totals get the 1000 minimum. */
    p.containers = &cs[2];
    p.ncontainers = 1;
    node.normalization_ratio = 0;
    qos_batch_pod(&p, &node, &v);
    assert_int_equal(v.cpu_shares, 2);
    assert_int_equal(v.cfs_quota, 1000);
    /* No containers: unlimited. */
    p.ncontainers = 0;
    qos_batch_pod(&p, &node, &v);
    assert_int_equal(v.cfs_quota, -1);
    assert_int_equal(v.memory_limit, -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_applies),
        cmocka_unit_test(test_container),
        cmocka_unit_test(test_pod),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
