/*
 * Tests for agent/report/policy: the NodeMetric collect policy the agent obeys — koordlet's
 * defaults, the spec's fields over them, the floors (30 s reports, 60 s aggregation), and bad
 * fields that keep the default and are named; the metric cache retentions a policy needs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/metriccache/metriccache.h"
#include "agent/report/policy.h"
#include "testutil.h"

#define MIN_NS (60LL * 1000000000LL)

static void test_defaults(void **state)
{
    struct report_policy p;
    (void)state;

    report_policy_from(NULL, &p, NULL);
    assert_int_equal(p.aggregate_s, 300);
    assert_int_equal(p.report_s, 60);
    assert_int_equal(p.ndurations, 3);
    assert_true(p.durations_ns[0] == 5 * MIN_NS && p.durations_ns[1] == 10 * MIN_NS &&
                p.durations_ns[2] == 30 * MIN_NS);
    assert_int_equal(p.memory, REPORT_MEMORY_WITHOUT_PAGE_CACHE);
}

static void test_spec_and_floors(void **state)
{
    cJSON *nm = J("{\"spec\":{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":30,"
                  "\"reportIntervalSeconds\":10,\"nodeAggregatePolicy\":{\"durations\":"
                  "[\"1m0s\",\"90s\"]},\"nodeMemoryCollectPolicy\":\"usageWithPageCache\"}}}");
    cJSON *spec = J("{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":120,"
                    "\"reportIntervalSeconds\":45}}");
    struct report_policy p;
    struct strbuf why = STRBUF_INIT;
    (void)state;

    report_policy_from(nm, &p, &why);
    assert_int_equal(why.len, 0);
    assert_int_equal(p.aggregate_s, 60); /* floor */
    assert_int_equal(p.report_s, 30);    /* floor */
    assert_int_equal(p.ndurations, 2);
    assert_true(p.durations_ns[0] == MIN_NS && p.durations_ns[1] == 90 * 1000000000LL);
    assert_int_equal(p.memory, REPORT_MEMORY_WITH_PAGE_CACHE);
    /* The spec object itself is accepted too. */
    report_policy_from(spec, &p, &why);
    assert_int_equal(p.aggregate_s, 120);
    assert_int_equal(p.report_s, 45);
    assert_int_equal(p.ndurations, 3);
    cJSON_Delete(nm);
    cJSON_Delete(spec);
    strbuf_release(&why);
}

static void test_bad_fields_keep_defaults(void **state)
{
    cJSON *nm = J("{\"spec\":{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":\"300\","
                  "\"reportIntervalSeconds\":1.5,\"nodeAggregatePolicy\":{\"durations\":"
                  "[\"5m\",\"soon\"]},\"nodeMemoryCollectPolicy\":\"all\"}}}");
    struct report_policy p;
    struct strbuf why = STRBUF_INIT;
    (void)state;

    report_policy_from(nm, &p, &why);
    assert_int_equal(p.aggregate_s, 300);
    assert_int_equal(p.report_s, 60);
    assert_int_equal(p.ndurations, 3);
    assert_int_equal(p.memory, REPORT_MEMORY_WITHOUT_PAGE_CACHE);
    assert_string_equal(
        why.buf, "spec.metricCollectPolicy.aggregateDurationSeconds: not a positive whole number; "
                 "spec.metricCollectPolicy.reportIntervalSeconds: not a positive whole number; "
                 "spec.metricCollectPolicy.nodeAggregatePolicy.durations: want at most 16 "
                 "positive durations such as \"5m0s\"; spec.metricCollectPolicy."
                 "nodeMemoryCollectPolicy: want usageWithoutPageCache, usageWithPageCache or "
                 "usageWithHotPageCache");
    cJSON_Delete(nm);
    strbuf_release(&why);
}

/* The cache keeps what the policy's windows read; never less than the kinds' defaults. */
static void test_retain(void **state)
{
    struct report_policy p;
    struct mc *mc = NULL;

    (void)state;
    assert_int_equal(mc_new(NULL, &mc), 0); /* 1 s interval */
    report_policy_default(&p);
    assert_int_equal(report_policy_retain(&p, mc), 0);
    assert_int_equal(mc_kind_capacity(mc, MC_NODE_CPU_USAGE), 1801); /* 30 min + 1 */
    assert_int_equal(mc_kind_capacity(mc, MC_POD_CPU_USAGE), 301);   /* 300 s + 1 */

    /* Aggregate 10 min, durations 5 min and 1 h: the node kinds keep 1 h, the pods 10 min. */
    p.aggregate_s = 600;
    p.durations_ns[1] = 60 * MIN_NS;
    assert_int_equal(report_policy_retain(&p, mc), 0);
    assert_int_equal(mc_kind_capacity(mc, MC_NODE_CPU_USAGE), 3601);
    assert_int_equal(mc_kind_capacity(mc, MC_NODE_MEMORY_USAGE_WITH_PAGE_CACHE), 3601);
    assert_int_equal(mc_kind_capacity(mc, MC_SYS_MEMORY_USAGE), 3601);
    assert_int_equal(mc_kind_capacity(mc, MC_POD_CPU_USAGE), 601);
    assert_int_equal(mc_kind_capacity(mc, MC_POD_MEMORY_USAGE_WITH_PAGE_CACHE), 601);
    /* Kinds no report reads are left alone. */
    assert_int_equal(mc_kind_capacity(mc, MC_NODE_BE), 301);
    assert_int_equal(mc_kind_capacity(mc, MC_CONTAINER_CPU_USAGE), 11);

    /* A window of 1.5 s rounds up; an aggregate above every duration sets the node kinds. */
    p.aggregate_s = 3600;
    p.durations_ns[1] = 1500000000LL;
    assert_int_equal(report_policy_retain(&p, mc), 0);
    assert_int_equal(mc_kind_capacity(mc, MC_NODE_CPU_USAGE), 3601);
    assert_int_equal(mc_kind_capacity(mc, MC_POD_CPU_USAGE), 3601);

    /* Above the bounds (pods 1 h, node 24 h): refused, nothing changed. */
    p.aggregate_s = 3601;
    assert_int_equal(report_policy_retain(&p, mc), -E2BIG);
    assert_int_equal(mc_kind_capacity(mc, MC_NODE_CPU_USAGE), 3601);
    assert_int_equal(mc_kind_capacity(mc, MC_POD_CPU_USAGE), 3601);
    p.aggregate_s = 3600;
    p.durations_ns[1] = 24 * 60 * MIN_NS + 1;
    assert_int_equal(report_policy_retain(&p, mc), -E2BIG);
    assert_int_equal(mc_kind_capacity(mc, MC_NODE_CPU_USAGE), 3601);
    p.durations_ns[1] = 24 * 60 * MIN_NS;
    assert_int_equal(report_policy_retain(&p, mc), 0);
    assert_int_equal(mc_kind_capacity(mc, MC_NODE_CPU_USAGE), 86401);

    /* Shorter windows than the defaults: back to the defaults. */
    p.aggregate_s = 60;
    p.ndurations = 1;
    assert_int_equal(report_policy_retain(&p, mc), 0);
    assert_int_equal(mc_kind_capacity(mc, MC_NODE_CPU_USAGE), 1801);
    assert_int_equal(mc_kind_capacity(mc, MC_POD_CPU_USAGE), 301);

    /* 12 h at 1 ms is more than a ring may hold (2^22 points): refused, nothing changed. */
    mc_free(mc);
    mc = NULL;
    assert_int_equal(mc_new(&(struct mc_config){.interval_ms = 1}, &mc), 0);
    report_policy_default(&p);
    p.durations_ns[0] = 12 * 60 * MIN_NS;
    assert_int_equal(report_policy_retain(&p, mc), -EINVAL);
    assert_int_equal(mc_kind_capacity(mc, MC_NODE_CPU_USAGE), 1800001);
    mc_free(mc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_spec_and_floors),
        cmocka_unit_test(test_bad_fields_keep_defaults),
        cmocka_unit_test(test_retain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
