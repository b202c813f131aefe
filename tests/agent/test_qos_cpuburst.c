/*
 * Tests for agent/qos/cpuburst (reference 3.4): pod eligibility and config merging, the burst
 * values (2 cores at 1000 % -> 2 000 000 us), base and ceil quotas, the share-pool node state
 * and its boundaries, the operation and adjustment tables, target clamping, write order, and
 * the token-bucket limiter with a given random start.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/qos/cpuburst.h"
#include "base/base.h"
#include "codec/codec.h"

static struct qos_cpu_burst defaults(enum qos_burst_policy p)
{
    struct qos_cpu_burst c = {p, 1000, 300, -1, 50};
    return c;
}

/* Field by field: the struct has padding. */
static void assert_same_config(const struct qos_cpu_burst *a, const struct qos_cpu_burst *b)
{
    assert_int_equal(a->policy, b->policy);
    assert_int_equal(a->cpu_burst_percent, b->cpu_burst_percent);
    assert_int_equal(a->cfs_quota_burst_percent, b->cfs_quota_burst_percent);
    assert_int_equal(a->cfs_quota_burst_period_seconds, b->cfs_quota_burst_period_seconds);
    assert_int_equal(a->share_pool_threshold_percent, b->share_pool_threshold_percent);
}

static void test_policies_and_eligibility(void **state)
{
    static const struct {
        enum api_qos label;
        bool active, eligible;
    } pods[] = {
        {API_QOS_NONE, true, true}, {API_QOS_LS, true, true},   {API_QOS_SYSTEM, true, true},
        {API_QOS_LSR, true, false}, {API_QOS_LSE, true, false}, {API_QOS_BE, true, false},
        {API_QOS_LS, false, false},
    };

    (void)state;
    assert_true(qos_cpuburst_enabled(QOS_BURST_AUTO));
    assert_true(qos_cpuburst_enabled(QOS_BURST_CPU_BURST_ONLY));
    assert_false(qos_cpuburst_enabled(QOS_BURST_CFS_QUOTA_BURST_ONLY));
    assert_false(qos_cpuburst_enabled(QOS_BURST_NONE));
    assert_true(qos_cfs_quota_burst_enabled(QOS_BURST_AUTO));
    assert_true(qos_cfs_quota_burst_enabled(QOS_BURST_CFS_QUOTA_BURST_ONLY));
    assert_false(qos_cfs_quota_burst_enabled(QOS_BURST_CPU_BURST_ONLY));
    assert_false(qos_cfs_quota_burst_enabled(QOS_BURST_NONE));
    for (size_t i = 0; i < ARRAY_SIZE(pods); i++) {
        struct qos_pod p = {.qos_label = pods[i].label, .active = pods[i].active};

        /* The label decides, not the QoS with default. */
        p.qos = API_QOS_BE;
        if (qos_cpuburst_pod_eligible(&p) != pods[i].eligible)
            fail_msg("case %zu", i);
    }
}

static void test_pod_config(void **state)
{
    struct qos_cpu_burst node = defaults(QOS_BURST_AUTO), c;

    (void)state;
    assert_int_equal(qos_cpuburst_pod_config(&node, NULL, &c), 0);
    assert_same_config(&c, &node);
    assert_int_equal(qos_cpuburst_pod_config(&node,
                                             "{\"policy\":\"cpuBurstOnly\",\"cpuBurstPercent\":200,"
                                             "\"sharePoolThresholdPercent\":1}",
                                             &c),
                     0);
    assert_int_equal(c.policy, QOS_BURST_CPU_BURST_ONLY);
    assert_int_equal(c.cpu_burst_percent, 200);
    assert_int_equal(c.cfs_quota_burst_percent, 300);
    assert_int_equal(c.share_pool_threshold_percent, 50);
    /* policy "" keeps the node's; unknown policies act as none. */
    assert_int_equal(qos_cpuburst_pod_config(&node, "{\"policy\":\"\"}", &c), 0);
    assert_int_equal(c.policy, QOS_BURST_AUTO);
    assert_int_equal(qos_cpuburst_pod_config(&node, "{\"policy\":\"other\"}", &c), 0);
    assert_int_equal(c.policy, QOS_BURST_NONE);
    assert_int_equal(qos_cpuburst_pod_config(&node, "null", &c), 0);
    assert_same_config(&c, &node);
    /* Malformed: the node config. */
    assert_int_equal(qos_cpuburst_pod_config(&node, "{\"cpuBurstPercent\":\"9\"}", &c), -EINVAL);
    assert_same_config(&c, &node);
    assert_int_equal(qos_cpuburst_pod_config(&node, "{", &c), -EINVAL);
    assert_same_config(&c, &node);
    assert_int_equal(qos_cpuburst_pod_config(&node, "[]", &c), -EINVAL);
}

static void test_burst_values(void **state)
{
    struct qos_cpu_burst c = defaults(QOS_BURST_CPU_BURST_ONLY);
    struct qos_container cs[] = {
        {.name = "a", .id = "containerd://a", .limits = {.v = {[QOS_RES_CPU] = 2000}}},
        {.name = "b", .id = "containerd://b", .limits = {.v = {[QOS_RES_CPU] = 500}}},
        /* Not created yet: not counted. */
        {.name = "c", .id = "", .limits = {.v = {[QOS_RES_CPU] = 4000}}},
        {.name = "d", .limits = {.v = {[QOS_RES_CPU] = 4000}}},
        /* Unlimited: 0. */
        {.name = "e", .id = "containerd://e"},
    };
    struct qos_pod p = {.containers = cs, .ncontainers = ARRAY_SIZE(cs)};

    (void)state;
    /* The reference example: limit 2 cores, 1000 % -> 2 000 000 us. */
    assert_int_equal(qos_cpuburst_container_burst_us(&c, 2000), 2000000);
    assert_int_equal(qos_cpuburst_container_burst_us(&c, 500), 500000);
    assert_int_equal(qos_cpuburst_container_burst_us(&c, 0), 0);
    assert_int_equal(qos_cpuburst_container_burst_us(&c, -1), 0);
    c.cpu_burst_percent = 300;
    assert_int_equal(qos_cpuburst_container_burst_us(&c, 500), 150000);
    assert_int_equal(qos_cpuburst_container_burst_us(&c, 1), 300);
    assert_int_equal(qos_cpuburst_pod_burst_us(&c, &p), 600000 + 150000);
    c.policy = QOS_BURST_AUTO;
    assert_int_equal(qos_cpuburst_pod_burst_us(&c, &p), 750000);
    /* Policies without cpu burst write 0. */
    c.policy = QOS_BURST_CFS_QUOTA_BURST_ONLY;
    assert_int_equal(qos_cpuburst_container_burst_us(&c, 2000), 0);
    assert_int_equal(qos_cpuburst_pod_burst_us(&c, &p), 0);
    c.policy = QOS_BURST_NONE;
    assert_int_equal(qos_cpuburst_container_burst_us(&c, 2000), 0);
}

static void test_base_ceil(void **state)
{
    struct qos_cpu_burst c = defaults(QOS_BURST_AUTO);

    (void)state;
    assert_int_equal(qos_cpuburst_base_quota(2000), 200000);
    assert_int_equal(qos_cpuburst_base_quota(10), 1000);
    assert_int_equal(qos_cpuburst_base_quota(9), 1000);
    assert_int_equal(qos_cpuburst_base_quota(1), 1000);
    assert_int_equal(qos_cpuburst_base_quota(0), -1);
    assert_int_equal(qos_cpuburst_ceil_quota(200000, &c), 600000);
    c.cfs_quota_burst_percent = 150;
    assert_int_equal(qos_cpuburst_ceil_quota(200000, &c), 300000);
    c.cfs_quota_burst_percent = 101;
    assert_int_equal(qos_cpuburst_ceil_quota(200000, &c), 202000);
    c.cfs_quota_burst_percent = 100;
    assert_int_equal(qos_cpuburst_ceil_quota(200000, &c), 200000);
    c.cfs_quota_burst_percent = 50;
    assert_int_equal(qos_cpuburst_ceil_quota(200000, &c), 200000);
}

static void test_node_state(void **state)
{
    struct qos_pod pods[] = {
        {.qos_label = API_QOS_LSR,
         .requests = {.v = {[QOS_RES_CPU] = 4000}},
         .has_cpu_usage = true,
         .cpu_usage = 3},
        {.qos_label = API_QOS_LSE,
         .requests = {.v = {[QOS_RES_CPU] = 2000}},
         .has_cpu_usage = true,
         .cpu_usage = 2},
        {.qos_label = API_QOS_BE,
         .requests = {.v = {[QOS_RES_CPU] = 8000}},
         .has_cpu_usage = true,
         .cpu_usage = 1},
        {.qos_label = API_QOS_LS,
         .requests = {.v = {[QOS_RES_CPU] = 1000}},
         .has_cpu_usage = true,
         .cpu_usage = 4},
        /* LSR without a sample: its request still leaves the pool. */
        {.qos_label = API_QOS_LSR, .requests = {.v = {[QOS_RES_CPU] = 1000}}},
    };
    struct qos_share_pool_input in = {
        .has_node_usage = true,
        .node_usage = 10,
        .ncpus = 17,
        .pods = pods,
        .npods = ARRAY_SIZE(pods),
        .threshold_percent = 50,
    };
    double ratio;

    (void)state;
    /* usage 10 - 3 - 2 - 1 = 4 of 17 - 4 - 2 - 1 = 10: 0.4. Cooling from 0.45, overload 0.5. */
    assert_int_equal(qos_cpuburst_node_state(&in, &ratio), QOS_BURST_NODE_IDLE);
    assert_true(ratio == 0.4);
    in.threshold_percent = 45; /* cooling from 0.405 */
    assert_int_equal(qos_cpuburst_node_state(&in, NULL), QOS_BURST_NODE_IDLE);
    in.threshold_percent = 44; /* cooling from 0.396 */
    assert_int_equal(qos_cpuburst_node_state(&in, NULL), QOS_BURST_NODE_COOLING);
    in.threshold_percent = 41;
    assert_int_equal(qos_cpuburst_node_state(&in, NULL), QOS_BURST_NODE_COOLING);
    /* Exactly at the threshold is overload. */
    in.threshold_percent = 40;
    assert_int_equal(qos_cpuburst_node_state(&in, NULL), QOS_BURST_NODE_OVERLOAD);
    /* No room in the pool: ratio 1.0. */
    in.threshold_percent = 100;
    in.ncpus = 7;
    assert_int_equal(qos_cpuburst_node_state(&in, &ratio), QOS_BURST_NODE_OVERLOAD);
    assert_true(ratio == 1.0);
    in.ncpus = 8;
    assert_int_equal(qos_cpuburst_node_state(&in, &ratio), QOS_BURST_NODE_OVERLOAD);
    assert_true(ratio == 4.0);
    /* No data. */
    in.has_node_usage = false;
    assert_int_equal(qos_cpuburst_node_state(&in, &ratio), QOS_BURST_NODE_UNKNOWN);
    in.has_node_usage = true;
    in.ncpus = 0;
    assert_int_equal(qos_cpuburst_node_state(&in, &ratio), QOS_BURST_NODE_UNKNOWN);
}

static void test_ops(void **state)
{
    struct qos_cpu_burst on = defaults(QOS_BURST_CFS_QUOTA_BURST_ONLY);
    struct qos_cpu_burst off = defaults(QOS_BURST_CPU_BURST_ONLY);
    static const enum qos_burst_op ops[] = {QOS_BURST_OP_SCALE_UP, QOS_BURST_OP_SCALE_DOWN,
                                            QOS_BURST_OP_REMAIN, QOS_BURST_OP_RESET};
    /* [state][op] -> op */
    static const enum qos_burst_op adjust[4][4] = {
        [QOS_BURST_NODE_OVERLOAD] = {QOS_BURST_OP_SCALE_DOWN, QOS_BURST_OP_SCALE_DOWN,
                                     QOS_BURST_OP_SCALE_DOWN, QOS_BURST_OP_RESET},
        [QOS_BURST_NODE_COOLING] = {QOS_BURST_OP_REMAIN, QOS_BURST_OP_SCALE_DOWN,
                                    QOS_BURST_OP_REMAIN, QOS_BURST_OP_RESET},
        [QOS_BURST_NODE_IDLE] = {QOS_BURST_OP_SCALE_UP, QOS_BURST_OP_SCALE_DOWN,
                                 QOS_BURST_OP_REMAIN, QOS_BURST_OP_RESET},
        [QOS_BURST_NODE_UNKNOWN] = {QOS_BURST_OP_REMAIN, QOS_BURST_OP_SCALE_DOWN,
                                    QOS_BURST_OP_REMAIN, QOS_BURST_OP_RESET},
    };

    (void)state;
    assert_int_equal(qos_cpuburst_container_op(&off, true, true, 1), QOS_BURST_OP_RESET);
    assert_int_equal(qos_cpuburst_container_op(&on, false, true, 1), QOS_BURST_OP_SCALE_DOWN);
    assert_int_equal(qos_cpuburst_container_op(&on, true, false, 1), QOS_BURST_OP_REMAIN);
    assert_int_equal(qos_cpuburst_container_op(&on, true, true, 0.01), QOS_BURST_OP_SCALE_UP);
    assert_int_equal(qos_cpuburst_container_op(&on, true, true, 0), QOS_BURST_OP_REMAIN);
    for (int s = 0; s < 4; s++)
        for (size_t o = 0; o < ARRAY_SIZE(ops); o++)
            if (qos_cpuburst_node_op((enum qos_burst_node_state)s, ops[o]) != adjust[s][o])
                fail_msg("state %d op %d", s, (int)ops[o]);
}

static void test_target_and_writes(void **state)
{
    struct qos_quota_write w[2];

    (void)state;
    assert_int_equal(qos_cpuburst_target_quota(QOS_BURST_OP_SCALE_UP, 200000, 200000, 600000),
                     240000);
    assert_int_equal(qos_cpuburst_target_quota(QOS_BURST_OP_SCALE_UP, 123457, 100000, 600000),
                     148148);
    assert_int_equal(qos_cpuburst_target_quota(QOS_BURST_OP_SCALE_UP, 550000, 200000, 600000),
                     600000);
    assert_int_equal(qos_cpuburst_target_quota(QOS_BURST_OP_SCALE_DOWN, 300000, 200000, 600000),
                     240000);
    assert_int_equal(qos_cpuburst_target_quota(QOS_BURST_OP_SCALE_DOWN, 200000, 200000, 600000),
                     200000);
    assert_int_equal(qos_cpuburst_target_quota(QOS_BURST_OP_RESET, 480000, 200000, 600000), 200000);
    assert_int_equal(qos_cpuburst_target_quota(QOS_BURST_OP_REMAIN, 300000, 200000, 600000),
                     300000);
    /* An unlimited (-1) or out-of-range current quota comes back into [base, ceil]. */
    assert_int_equal(qos_cpuburst_target_quota(QOS_BURST_OP_REMAIN, -1, 200000, 600000), 200000);
    assert_int_equal(qos_cpuburst_target_quota(QOS_BURST_OP_SCALE_UP, -1, 200000, 600000), 200000);
    assert_int_equal(qos_cpuburst_target_quota(QOS_BURST_OP_REMAIN, 900000, 200000, 600000),
                     600000);

    /* Increase: pod first, same delta. */
    assert_int_equal(qos_cpuburst_quota_writes(200000, 240000, 400000, w), 2);
    assert_true(w[0].pod);
    assert_int_equal(w[0].quota, 440000);
    assert_false(w[1].pod);
    assert_int_equal(w[1].quota, 240000);
    /* Decrease: container first. */
    assert_int_equal(qos_cpuburst_quota_writes(240000, 200000, 440000, w), 2);
    assert_false(w[0].pod);
    assert_int_equal(w[0].quota, 200000);
    assert_true(w[1].pod);
    assert_int_equal(w[1].quota, 400000);
    /* Unlimited pod: container only. */
    assert_int_equal(qos_cpuburst_quota_writes(200000, 240000, -1, w), 1);
    assert_false(w[0].pod);
    assert_int_equal(qos_cpuburst_quota_writes(240000, 200000, 0, w), 1);
    assert_int_equal(qos_cpuburst_quota_writes(200000, 200000, 400000, w), 0);
}

static void test_limiter(void **state)
{
    struct qos_burst_limiter l;
    int64_t tokens;

    (void)state;
    /* capacity 60 x (300 - 100) = 12000; random 0.5 -> tokens 12000 x 0.25. */
    memset(&l, 0, sizeof(l));
    qos_burst_limiter_init(&l, 60, 300, 0.5, 1000);
    assert_true(l.initialized);
    assert_int_equal(l.capacity, 12000);
    assert_int_equal(l.tokens, 3000);
    assert_int_equal(l.expire_ms, 120000);
    /* 1.5 s at 150 %: 1 whole second, 50 spent. */
    assert_true(qos_burst_limiter_allow(&l, 2500, 150, &tokens));
    assert_int_equal(tokens, 2950);
    /* 0.999 s: nothing. */
    assert_true(qos_burst_limiter_allow(&l, 3499, 300, &tokens));
    assert_int_equal(tokens, 2950);
    /* The wall clock stepped back 10 s: no time passed (300 % would otherwise earn 2000). */
    assert_true(qos_burst_limiter_allow(&l, -6501, 300, &tokens));
    assert_int_equal(tokens, 2950);
    assert_true(qos_burst_limiter_allow(&l, 3499, 300, &tokens));
    assert_int_equal(tokens, 2950 - 10 * 200);
    l.tokens = 2950;
    /* Exactly 100 % spends 0 per second; 60-99 % neither spends nor saves. */
    assert_true(qos_burst_limiter_allow(&l, 13499, 100, &tokens));
    assert_int_equal(tokens, 2950);
    assert_true(qos_burst_limiter_allow(&l, 23499, 60, &tokens));
    assert_int_equal(tokens, 2950);
    /* 59 %: saves 41 per second. */
    assert_true(qos_burst_limiter_allow(&l, 33499, 59, &tokens));
    assert_int_equal(tokens, 2950 + 410);
    /* Saving is capped at the capacity. */
    assert_true(qos_burst_limiter_allow(&l, 1033499, 0, &tokens));
    assert_int_equal(tokens, 12000);
    /* Spending to exactly 0 denies; below is capped at -capacity. */
    assert_false(qos_burst_limiter_allow(&l, 1033499 + 60000, 300, &tokens));
    assert_int_equal(tokens, 0);
    assert_false(qos_burst_limiter_allow(&l, 1033499 + 120000, 500, &tokens));
    assert_int_equal(tokens, -12000);
    assert_true(qos_burst_limiter_allow(&l, 1033499 + 120000 + 241000, 0, &tokens));
    assert_int_equal(tokens, 12000);
    /* Expiry after 2 x period without use. */
    assert_false(qos_burst_limiter_expired(&l, 1033499 + 361000 + 120000));
    assert_true(qos_burst_limiter_expired(&l, 1033499 + 361000 + 120001));
    /* The initial tokens stay in [0, capacity / 2). */
    qos_burst_limiter_init(&l, 60, 300, 0, 0);
    assert_int_equal(l.tokens, 0);
    qos_burst_limiter_init(&l, 60, 300, 0.9999999, 0);
    assert_int_equal(l.tokens, 5999);
}

static void test_limiter_allows(void **state)
{
    struct qos_cpu_burst c = defaults(QOS_BURST_AUTO);
    struct qos_burst_limiter l;

    (void)state;
    memset(&l, 0, sizeof(l));
    /* Period -1: always allowed, no limiter. */
    assert_true(qos_cpuburst_limiter_allows(&c, &l, 2, true, 10, 0.5, 0));
    assert_false(l.initialized);
    /* Percent below 100: never. */
    c.cfs_quota_burst_period_seconds = 10;
    c.cfs_quota_burst_percent = 99;
    assert_false(qos_cpuburst_limiter_allows(&c, &l, 2, true, 1, 0.5, 0));
    assert_false(l.initialized);
    /* Created on first use: capacity 10 x 100 = 1000, tokens 250; no time passed yet. */
    c.cfs_quota_burst_percent = 200;
    assert_true(qos_cpuburst_limiter_allows(&c, &l, 2, true, 3, 0.5, 1000));
    assert_int_equal(l.capacity, 1000);
    assert_int_equal(l.tokens, 250);
    /* 3 of 2 cores = 150 % for 5 s: 250 spent. */
    assert_false(qos_cpuburst_limiter_allows(&c, &l, 2, true, 3, 0.5, 6000));
    assert_int_equal(l.tokens, 0);
    /* No sample: usage = limit, 100 %: nothing spent. */
    assert_false(qos_cpuburst_limiter_allows(&c, &l, 2, false, 0, 0.5, 16000));
    assert_int_equal(l.tokens, 0);
    /* A config change restarts the bucket with a new random start. */
    c.cfs_quota_burst_percent = 300;
    assert_true(qos_cpuburst_limiter_allows(&c, &l, 2, true, 1, 0.2, 17000));
    assert_int_equal(l.capacity, 2000);
    assert_int_equal(l.tokens, 200);
}

static void test_container(void **state)
{
    struct qos_cpu_burst c = defaults(QOS_BURST_AUTO);
    struct qos_burst_container_input in = {
        .limit_milli = 2000,
        .current_quota = 200000,
        .pod_quota = 400000,
        .has_usage = true,
        .usage_cores = 2,
        .has_throttled = true,
        .throttled_last = 0.2,
    };
    struct qos_burst_container_result r;
    struct qos_burst_limiter l;

    (void)state;
    memset(&l, 0, sizeof(l));
    /* Throttled on an idle node: up 20 %, pod first. */
    qos_cpuburst_container(&c, QOS_BURST_NODE_IDLE, &l, &in, 0.5, 0, &r);
    assert_false(r.skipped);
    assert_int_equal(r.base, 200000);
    assert_int_equal(r.ceil, 600000);
    assert_int_equal(r.op, QOS_BURST_OP_SCALE_UP);
    assert_int_equal(r.target, 240000);
    assert_int_equal(r.nwrites, 2);
    assert_true(r.writes[0].pod);
    assert_int_equal(r.writes[0].quota, 440000);
    /* Overload: down, clamped at base: nothing to write. */
    qos_cpuburst_container(&c, QOS_BURST_NODE_OVERLOAD, &l, &in, 0.5, 0, &r);
    assert_int_equal(r.op, QOS_BURST_OP_SCALE_DOWN);
    assert_int_equal(r.nwrites, 0);
    in.current_quota = 400000;
    qos_cpuburst_container(&c, QOS_BURST_NODE_OVERLOAD, &l, &in, 0.5, 0, &r);
    assert_int_equal(r.target, 320000);
    assert_int_equal(r.nwrites, 2);
    assert_false(r.writes[0].pod);
    assert_int_equal(r.writes[1].quota, 320000);
    /* Cooling keeps it. */
    qos_cpuburst_container(&c, QOS_BURST_NODE_COOLING, &l, &in, 0.5, 0, &r);
    assert_int_equal(r.op, QOS_BURST_OP_REMAIN);
    assert_int_equal(r.nwrites, 0);
    /* cfs quota burst off: reset to base; the limiter was still consulted. */
    c.policy = QOS_BURST_CPU_BURST_ONLY;
    c.cfs_quota_burst_period_seconds = 60;
    qos_cpuburst_container(&c, QOS_BURST_NODE_IDLE, &l, &in, 0.5, 0, &r);
    assert_int_equal(r.op, QOS_BURST_OP_RESET);
    assert_int_equal(r.target, 200000);
    assert_true(l.initialized);
    /* Limiter denies (tokens 0 at random 0, 100 %): down. */
    c.policy = QOS_BURST_AUTO;
    memset(&l, 0, sizeof(l));
    qos_cpuburst_container(&c, QOS_BURST_NODE_IDLE, &l, &in, 0, 0, &r);
    assert_int_equal(r.op, QOS_BURST_OP_SCALE_DOWN);
    /* No limit: skipped, limiter untouched. */
    memset(&l, 0, sizeof(l));
    in.limit_milli = 0;
    qos_cpuburst_container(&c, QOS_BURST_NODE_IDLE, &l, &in, 0.5, 0, &r);
    assert_true(r.skipped);
    assert_false(l.initialized);
    assert_int_equal(r.nwrites, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_policies_and_eligibility),
        cmocka_unit_test(test_pod_config),
        cmocka_unit_test(test_burst_values),
        cmocka_unit_test(test_base_ceil),
        cmocka_unit_test(test_node_state),
        cmocka_unit_test(test_ops),
        cmocka_unit_test(test_target_and_writes),
        cmocka_unit_test(test_limiter),
        cmocka_unit_test(test_limiter_allows),
        cmocka_unit_test(test_container),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
