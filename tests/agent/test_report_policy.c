/*
 * Tests for agent/report/policy: the NodeMetric collect policy the agent obeys — koordlet's
 * defaults, the spec's fields over them, the floors (30 s reports, 60 s aggregation), and bad
 * fields that keep the default and are named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_spec_and_floors),
        cmocka_unit_test(test_bad_fields_keep_defaults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
