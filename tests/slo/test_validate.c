/*
 * Tests for slo/validate: the checks of upstream's slo-controller-config validating webhook
 * (reference/manager-behaviour.md 1.7 steps 1-5): JSON syntax, node selectors present and
 * parsable, the struct-tag ranges and paired thresholds (a pair with one member set fails),
 * node-entry names when required, overlapping selectors, and the network QoS request rules.
 * Every row is derived by hand from 1.7 and the WH columns of reference/api-types.md 6.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/field.h"
#include "base/base.h"
#include "codec/codec.h"
#include "slo/slo.h"
#include "testutil.h"

#define TH  SLO_KEY_THRESHOLD
#define QOS SLO_KEY_QOS
#define CB  SLO_KEY_CPU_BURST
#define SYS SLO_KEY_SYSTEM
#define COL SLO_KEY_COLOCATION

/* A system-config whose bandwidth leaves room for any network request below. */
#define SYS_BW "{\"clusterStrategy\":{\"totalNetworkBandwidth\":\"10000\"}}"

struct row {
    const char *key, *value;
    const char *field; /* NULL: valid */
    enum field_error_type type;
};

static const struct row rows[] = {
    /* step 1: JSON syntax */
    {TH, "{\"clusterStrategy\":", "data[resource-threshold-config]", FIELD_INVALID},
    {TH, "[1]", "data[resource-threshold-config]", FIELD_INVALID},
    {COL, "{\"enable\": tru", "data[colocation-config]", FIELD_INVALID},
    /* the shipped kustomize values (1.1) */
    {COL, "{\"enable\": true}", NULL, 0},
    {TH, "{\"clusterStrategy\": {\"enable\": true}}", NULL, 0},
    /* step 3, resource-threshold ranges */
    {TH, "{\"clusterStrategy\":{\"cpuSuppressThresholdPercent\":101}}",
     "data[resource-threshold-config].clusterStrategy.cpuSuppressThresholdPercent", FIELD_INVALID},
    {TH, "{\"clusterStrategy\":{\"cpuSuppressThresholdPercent\":100,\"cpuSuppressMinPercent\":0}}",
     NULL, 0},
    {TH, "{\"clusterStrategy\":{\"cpuEvictBEUsageThresholdPercent\":-1}}",
     "data[resource-threshold-config].clusterStrategy.cpuEvictBEUsageThresholdPercent",
     FIELD_INVALID},
    {TH, "{\"clusterStrategy\":{\"cpuEvictTimeWindowSeconds\":0}}",
     "data[resource-threshold-config].clusterStrategy.cpuEvictTimeWindowSeconds", FIELD_INVALID},
    {TH, "{\"clusterStrategy\":{\"allocatableEvictPriorityThreshold\":8000}}",
     "data[resource-threshold-config].clusterStrategy.allocatableEvictPriorityThreshold",
     FIELD_INVALID},
    {TH,
     "{\"clusterStrategy\":{\"memoryAllocatableEvictThresholdPercent\":-1,"
     "\"memoryAllocatableEvictLowerPercent\":-2}}",
     "data[resource-threshold-config].clusterStrategy.memoryAllocatableEvictThresholdPercent",
     FIELD_INVALID},
    /* the pair rule: one member alone fails (the shipped doc example does exactly that) */
    {TH, "{\"clusterStrategy\":{\"enable\":true,\"memoryEvictThresholdPercent\":70}}",
     "data[resource-threshold-config].clusterStrategy.memoryEvictLowerPercent", FIELD_REQUIRED},
    {TH, "{\"clusterStrategy\":{\"cpuEvictLowerPercent\":60}}",
     "data[resource-threshold-config].clusterStrategy.cpuEvictThresholdPercent", FIELD_REQUIRED},
    {TH,
     "{\"clusterStrategy\":{\"memoryEvictThresholdPercent\":70,\"memoryEvictLowerPercent\":"
     "70}}",
     "data[resource-threshold-config].clusterStrategy.memoryEvictThresholdPercent", FIELD_INVALID},
    {TH,
     "{\"clusterStrategy\":{\"memoryEvictThresholdPercent\":70,\"memoryEvictLowerPercent\":"
     "65,\"cpuEvictBESatisfactionUpperPercent\":90,\"cpuEvictBESatisfactionLowerPercent\":60,"
     "\"cpuEvictBEUsageThresholdPercent\":90}}",
     NULL, 0},
    /* node entries are range-checked too */
    {TH,
     "{\"nodeStrategies\":[{\"nodeSelector\":{\"matchLabels\":{\"a\":\"b\"}},"
     "\"cpuSuppressThresholdPercent\":120}]}",
     "data[resource-threshold-config].nodeStrategies[0].cpuSuppressThresholdPercent",
     FIELD_INVALID},
    /* resource-qos ranges */
    {QOS, "{\"clusterStrategy\":{\"lsClass\":{\"memoryQOS\":{\"wmarkMinAdj\":51}}}}",
     "data[resource-qos-config].clusterStrategy.lsClass.memoryQOS.wmarkMinAdj", FIELD_INVALID},
    {QOS,
     "{\"clusterStrategy\":{\"lsClass\":{\"memoryQOS\":{\"wmarkMinAdj\":-25}},\"beClass\":"
     "{\"memoryQOS\":{\"wmarkMinAdj\":50}}}}",
     NULL, 0},
    {QOS, "{\"clusterStrategy\":{\"beClass\":{\"cpuQOS\":{\"groupIdentity\":3}}}}",
     "data[resource-qos-config].clusterStrategy.beClass.cpuQOS.groupIdentity", FIELD_INVALID},
    {QOS, "{\"clusterStrategy\":{\"beClass\":{\"cpuQOS\":{\"groupIdentity\":-2}}}}",
     "data[resource-qos-config].clusterStrategy.beClass.cpuQOS.groupIdentity", FIELD_INVALID},
    {QOS, "{\"clusterStrategy\":{\"beClass\":{\"cpuQOS\":{\"schedIdle\":2}}}}",
     "data[resource-qos-config].clusterStrategy.beClass.cpuQOS.schedIdle", FIELD_INVALID},
    {QOS, "{\"clusterStrategy\":{\"lsrClass\":{\"memoryQOS\":{\"priority\":13}}}}",
     "data[resource-qos-config].clusterStrategy.lsrClass.memoryQOS.priority", FIELD_INVALID},
    {QOS, "{\"clusterStrategy\":{\"lsrClass\":{\"memoryQOS\":{\"oomKillGroup\":2}}}}",
     "data[resource-qos-config].clusterStrategy.lsrClass.memoryQOS.oomKillGroup", FIELD_INVALID},
    {QOS, "{\"clusterStrategy\":{\"lsrClass\":{\"memoryQOS\":{\"wmarkScalePermill\":0}}}}",
     "data[resource-qos-config].clusterStrategy.lsrClass.memoryQOS.wmarkScalePermill",
     FIELD_INVALID},
    {QOS, "{\"clusterStrategy\":{\"lsrClass\":{\"memoryQOS\":{\"pageCacheLimitPercent\":101}}}}",
     "data[resource-qos-config].clusterStrategy.lsrClass.memoryQOS.pageCacheLimitPercent",
     FIELD_INVALID},
    {QOS, "{\"clusterStrategy\":{\"beClass\":{\"resctrlQOS\":{\"catRangeStartPercent\":0}}}}",
     "data[resource-qos-config].clusterStrategy.beClass.resctrlQOS.catRangeEndPercent",
     FIELD_REQUIRED},
    {QOS,
     "{\"clusterStrategy\":{\"beClass\":{\"resctrlQOS\":{\"catRangeStartPercent\":50,"
     "\"catRangeEndPercent\":40}}}}",
     "data[resource-qos-config].clusterStrategy.beClass.resctrlQOS.catRangeEndPercent",
     FIELD_INVALID},
    {QOS,
     "{\"clusterStrategy\":{\"beClass\":{\"resctrlQOS\":{\"catRangeStartPercent\":0,"
     "\"catRangeEndPercent\":30,\"mbaPercent\":101}}}}",
     "data[resource-qos-config].clusterStrategy.beClass.resctrlQOS.mbaPercent", FIELD_INVALID},
    /* cpu-burst ranges */
    {CB, "{\"clusterStrategy\":{\"cpuBurstPercent\":0}}",
     "data[cpu-burst-config].clusterStrategy.cpuBurstPercent", FIELD_INVALID},
    {CB, "{\"clusterStrategy\":{\"cpuBurstPercent\":10001}}",
     "data[cpu-burst-config].clusterStrategy.cpuBurstPercent", FIELD_INVALID},
    {CB, "{\"clusterStrategy\":{\"cfsQuotaBurstPercent\":99}}",
     "data[cpu-burst-config].clusterStrategy.cfsQuotaBurstPercent", FIELD_INVALID},
    {CB, "{\"clusterStrategy\":{\"cfsQuotaBurstPeriodSeconds\":-2}}",
     "data[cpu-burst-config].clusterStrategy.cfsQuotaBurstPeriodSeconds", FIELD_INVALID},
    {CB, "{\"clusterStrategy\":{\"sharePoolThresholdPercent\":101}}",
     "data[cpu-burst-config].clusterStrategy.sharePoolThresholdPercent", FIELD_INVALID},
    {CB,
     "{\"clusterStrategy\":{\"policy\":\"none\",\"cpuBurstPercent\":1,"
     "\"cfsQuotaBurstPercent\":100,\"cfsQuotaBurstPeriodSeconds\":-1,"
     "\"sharePoolThresholdPercent\":0}}",
     NULL, 0},
    /* system ranges */
    {SYS, "{\"clusterStrategy\":{\"minFreeKbytesFactor\":0}}",
     "data[system-config].clusterStrategy.minFreeKbytesFactor", FIELD_INVALID},
    {SYS, "{\"clusterStrategy\":{\"watermarkScaleFactor\":0}}",
     "data[system-config].clusterStrategy.watermarkScaleFactor", FIELD_INVALID},
    {SYS, "{\"clusterStrategy\":{\"watermarkScaleFactor\":401}}",
     "data[system-config].clusterStrategy.watermarkScaleFactor", FIELD_INVALID},
    {SYS, "{\"clusterStrategy\":{\"memcgReapBackGround\":2}}",
     "data[system-config].clusterStrategy.memcgReapBackGround", FIELD_INVALID},
    {SYS, "{\"clusterStrategy\":{\"pageCacheLimitEnabled\":-1}}",
     "data[system-config].clusterStrategy.pageCacheLimitEnabled", FIELD_INVALID},
    {SYS,
     "{\"clusterStrategy\":{\"minFreeKbytesFactor\":1,\"watermarkScaleFactor\":400,"
     "\"memcgReapBackGround\":1}}",
     NULL, 0},
    /* colocation ranges (cluster fields inline, entries under nodeConfigs) */
    {COL, "{\"metricAggregateDurationSeconds\":0}",
     "data[colocation-config].metricAggregateDurationSeconds", FIELD_INVALID},
    {COL, "{\"metricReportIntervalSeconds\":0}",
     "data[colocation-config].metricReportIntervalSeconds", FIELD_INVALID},
    {COL, "{\"cpuReclaimThresholdPercent\":-1}",
     "data[colocation-config].cpuReclaimThresholdPercent", FIELD_INVALID},
    {COL, "{\"degradeTimeMinutes\":0}", "data[colocation-config].degradeTimeMinutes",
     FIELD_INVALID},
    {COL, "{\"updateTimeThresholdSeconds\":0}",
     "data[colocation-config].updateTimeThresholdSeconds", FIELD_INVALID},
    {COL, "{\"resourceDiffThreshold\":0}", "data[colocation-config].resourceDiffThreshold",
     FIELD_INVALID},
    {COL, "{\"resourceDiffThreshold\":1.5}", "data[colocation-config].resourceDiffThreshold",
     FIELD_INVALID},
    {COL, "{\"midCPUThresholdPercent\":101}", "data[colocation-config].midCPUThresholdPercent",
     FIELD_INVALID},
    {COL, "{\"midStaticMemoryReservedPercent\":-1}",
     "data[colocation-config].midStaticMemoryReservedPercent", FIELD_INVALID},
    {COL, "{\"batchCPUThresholdPercent\":-1}", "data[colocation-config].batchCPUThresholdPercent",
     FIELD_INVALID},
    {COL,
     "{\"resourceDiffThreshold\":1,\"midCPUThresholdPercent\":0,"
     "\"midUnallocatedPercent\":100,\"batchMemoryThresholdPercent\":0,"
     "\"cpuReclaimThresholdPercent\":0}",
     NULL, 0},
    {COL,
     "{\"nodeConfigs\":[{\"nodeSelector\":{\"matchLabels\":{\"a\":\"b\"}},"
     "\"midUnallocatedPercent\":101}]}",
     "data[colocation-config].nodeConfigs[0].midUnallocatedPercent", FIELD_INVALID},
    /* step 2: every node entry needs a non-empty, parsable selector */
    {TH, "{\"nodeStrategies\":[{\"name\":\"x\",\"enable\":true}]}",
     "data[resource-threshold-config].nodeStrategies[0].nodeSelector", FIELD_REQUIRED},
    {TH, "{\"nodeStrategies\":[{\"nodeSelector\":null,\"enable\":true}]}",
     "data[resource-threshold-config].nodeStrategies[0].nodeSelector", FIELD_REQUIRED},
    {TH, "{\"nodeStrategies\":[{\"nodeSelector\":{},\"enable\":true}]}",
     "data[resource-threshold-config].nodeStrategies[0].nodeSelector", FIELD_REQUIRED},
    {TH, "{\"nodeStrategies\":[{\"nodeSelector\":{\"matchLabels\":{}},\"enable\":true}]}",
     "data[resource-threshold-config].nodeStrategies[0].nodeSelector", FIELD_REQUIRED},
    {TH, "{\"nodeStrategies\":[{\"nodeSelector\":{\"matchExpressions\":[]},\"enable\":true}]}",
     "data[resource-threshold-config].nodeStrategies[0].nodeSelector", FIELD_REQUIRED},
    {TH,
     "{\"nodeStrategies\":[{\"nodeSelector\":{\"matchExpressions\":[{\"key\":\"a\","
     "\"operator\":\"Foo\"}]},\"enable\":true}]}",
     "data[resource-threshold-config].nodeStrategies[0].nodeSelector", FIELD_INVALID},
    {TH,
     "{\"nodeStrategies\":[{\"nodeSelector\":{\"matchExpressions\":[{\"key\":\"a\","
     "\"operator\":\"Exists\"}]},\"enable\":true}]}",
     NULL, 0},
    {COL,
     "{\"nodeConfigs\":[{\"nodeSelector\":{\"matchLabels\":{\"a\":\"b\"}},\"enable\":true},"
     "{\"enable\":false}]}",
     "data[colocation-config].nodeConfigs[1].nodeSelector", FIELD_REQUIRED},
    /* step 5: overlapping selectors, found through virtual label sets */
    {TH,
     "{\"nodeStrategies\":[{\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\"}}},"
     "{\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\",\"zone\":\"z\"}}}]}",
     "data[resource-threshold-config].nodeStrategies[1].nodeSelector", FIELD_INVALID},
    {TH,
     "{\"nodeStrategies\":[{\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\"}}},"
     "{\"nodeSelector\":{\"matchLabels\":{\"pool\":\"b\"}}}]}",
     NULL, 0},
    {TH,
     "{\"nodeStrategies\":[{\"nodeSelector\":{\"matchExpressions\":[{\"key\":\"zone\","
     "\"operator\":\"In\",\"values\":[\"z1\",\"z2\"]}]}},{\"nodeSelector\":"
     "{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"z2\","
     "\"z3\"]}]}}]}",
     "data[resource-threshold-config].nodeStrategies[0].nodeSelector", FIELD_INVALID},
    {TH,
     "{\"nodeStrategies\":[{\"nodeSelector\":{\"matchExpressions\":[{\"key\":\"zone\","
     "\"operator\":\"In\",\"values\":[\"z1\",\"z2\"]}]}},{\"nodeSelector\":"
     "{\"matchExpressions\":[{\"key\":\"zone\",\"operator\":\"In\",\"values\":[\"z3\"]}]}}]}",
     NULL, 0},
    {COL,
     "{\"nodeConfigs\":[{\"nodeSelector\":{\"matchLabels\":{\"a\":\"1\"}},\"enable\":true},"
     "{\"nodeSelector\":{\"matchLabels\":{\"a\":\"1\"}},\"enable\":false}]}",
     "data[colocation-config].nodeConfigs[0].nodeSelector", FIELD_INVALID},
    /* network QoS (resource-qos): bounds and forms of each value */
    {QOS, "{\"clusterStrategy\":{\"lsrClass\":{\"networkQOS\":{\"ingressLimit\":101}}}}",
     "data[resource-qos-config].clusterStrategy.lsrClass.networkQOS.ingressLimit", FIELD_INVALID},
    {QOS, "{\"clusterStrategy\":{\"lsrClass\":{\"networkQOS\":{\"egressLimit\":\"fast\"}}}}",
     "data[resource-qos-config].clusterStrategy.lsrClass.networkQOS.egressLimit", FIELD_INVALID},
    /* requests share one form */
    {QOS,
     "{\"clusterStrategy\":{\"lsrClass\":{\"networkQOS\":{\"ingressRequest\":10}},"
     "\"lsClass\":{\"networkQOS\":{\"ingressRequest\":\"10M\"}}}}",
     "data[resource-qos-config].clusterStrategy", FIELD_INVALID},
    /* the requests of one direction sum to at most 100 */
    {QOS,
     "{\"clusterStrategy\":{\"lsrClass\":{\"networkQOS\":{\"ingressRequest\":50}},"
     "\"lsClass\":{\"networkQOS\":{\"ingressRequest\":40}},\"beClass\":{\"networkQOS\":"
     "{\"ingressRequest\":20}}}}",
     "data[resource-qos-config].clusterStrategy", FIELD_INVALID},
    {QOS,
     "{\"clusterStrategy\":{\"lsrClass\":{\"networkQOS\":{\"egressRequest\":60}},"
     "\"beClass\":{\"networkQOS\":{\"egressRequest\":41}}}}",
     "data[resource-qos-config].clusterStrategy", FIELD_INVALID},
    {QOS,
     "{\"nodeStrategies\":[{\"nodeSelector\":{\"matchLabels\":{\"a\":\"b\"}},\"lsrClass\":"
     "{\"networkQOS\":{\"ingressRequest\":70}},\"lsClass\":{\"networkQOS\":"
     "{\"ingressRequest\":31}}}]}",
     "data[resource-qos-config].nodeStrategies[0]", FIELD_INVALID},
    {QOS,
     "{\"clusterStrategy\":{\"lsrClass\":{\"networkQOS\":{\"ingressRequest\":40,"
     "\"egressRequest\":0,\"ingressLimit\":100}},\"lsClass\":{\"networkQOS\":"
     "{\"ingressRequest\":30,\"egressRequest\":0}},\"beClass\":{\"networkQOS\":"
     "{\"ingressRequest\":30,\"egressRequest\":100}}}}",
     NULL, 0},
};

static void test_rows(void **state)
{
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        struct field_errors e = FIELD_ERRORS_INIT;
        cJSON *data = !strcmp(rows[i].key, QOS)
                          ? data_of(rows[i].key, rows[i].value, SYS, SYS_BW, NULL)
                          : data_of(rows[i].key, rows[i].value, NULL);
        size_t n = slo_config_validate(data, NULL, 0, false, &e);
        bool found = false;

        for (size_t j = 0; j < e.n; j++)
            found |= rows[i].field && !strcmp(e.v[j].field, rows[i].field) &&
                     e.v[j].type == rows[i].type;
        if (rows[i].field ? !found : n != 0)
            fail_with_errors(&e, "row %zu (%s = %s): want %s%s\nhave:", i, rows[i].key,
                             rows[i].value, rows[i].field ? "error at " : "valid",
                             rows[i].field ? rows[i].field : "");
        assert_int_equal(n, field_errors_count(&e));
        /* Warnings (the name and nodeSelector keys are unknown to the strategy types) never
         * reach the caller. */
        assert_int_equal(e.nwarn, 0);
        field_errors_release(&e);
        cJSON_Delete(data);
    }
}

/* The parse error of step 1 carries upstream's reason. */
static void test_parse_error_reason(void **state)
{
    struct field_errors e = FIELD_ERRORS_INIT;
    cJSON *data = data_of(SLO_KEY_CPU_BURST, "{\"clusterStrategy\":", NULL);
    (void)state;

    assert_int_equal(slo_config_validate(data, NULL, 0, false, &e), 1);
    assert_string_equal(e.v[0].field, "data[cpu-burst-config]");
    assert_true(!strncmp(e.v[0].detail, "ParseConfigFail", strlen("ParseConfigFail")));
    field_errors_release(&e);
    cJSON_Delete(data);
}

/* Step 4, only when names are required: non-empty and unique. */
static void test_names(void **state)
{
    static const char no_name[] =
        "{\"nodeStrategies\":[{\"nodeSelector\":{\"matchLabels\":{\"a\":\"1\"}}},"
        "{\"name\":\"\",\"nodeSelector\":{\"matchLabels\":{\"a\":\"2\"}}}]}";
    static const char dup[] =
        "{\"nodeStrategies\":[{\"name\":\"x\",\"nodeSelector\":{\"matchLabels\":{\"a\":\"1\"}}},"
        "{\"name\":\"x\",\"nodeSelector\":{\"matchLabels\":{\"a\":\"2\"}}}]}";
    static const char ok[] =
        "{\"nodeStrategies\":[{\"name\":\"x\",\"nodeSelector\":{\"matchLabels\":{\"a\":\"1\"}}},"
        "{\"name\":\"y\",\"nodeSelector\":{\"matchLabels\":{\"a\":\"2\"}}}]}";
    struct field_errors e = FIELD_ERRORS_INIT;
    cJSON *data;
    (void)state;

    data = data_of(SLO_KEY_THRESHOLD, no_name, NULL);
    assert_int_equal(slo_config_validate(data, NULL, 0, false, &e), 0);
    assert_int_equal(slo_config_validate(data, NULL, 0, true, &e), 2);
    assert_string_equal(e.v[0].field, "data[resource-threshold-config].nodeStrategies[0]");
    assert_int_equal(e.v[0].type, FIELD_REQUIRED);
    assert_string_equal(e.v[1].field, "data[resource-threshold-config].nodeStrategies[1]");
    assert_int_equal(e.v[1].type, FIELD_REQUIRED);
    field_errors_release(&e);
    cJSON_Delete(data);

    data = data_of(SLO_KEY_SYSTEM, dup, NULL);
    assert_int_equal(slo_config_validate(data, NULL, 0, false, &e), 0);
    assert_int_equal(slo_config_validate(data, NULL, 0, true, &e), 1);
    assert_string_equal(e.v[0].field, "data[system-config].nodeStrategies[1]");
    assert_int_equal(e.v[0].type, FIELD_DUPLICATE);
    field_errors_release(&e);
    cJSON_Delete(data);

    data = data_of(SLO_KEY_SYSTEM, ok, NULL);
    assert_int_equal(slo_config_validate(data, NULL, 0, true, &e), 0);
    field_errors_release(&e);
    cJSON_Delete(data);
}

/* Keys are checked in upstream's order and the first failing key rejects; empty strings and the
 * keys upstream never validates are skipped. */
static void test_key_order_and_skips(void **state)
{
    struct field_errors e = FIELD_ERRORS_INIT;
    cJSON *data;
    (void)state;

    data = data_of(SLO_KEY_THRESHOLD, "{\"clusterStrategy\":{\"cpuSuppressThresholdPercent\":-1}}",
                   SLO_KEY_COLOCATION, "{\"degradeTimeMinutes\":0}", NULL);
    assert_true(slo_config_validate(data, NULL, 0, false, &e) >= 1);
    for (size_t i = 0; i < e.n; i++)
        assert_true(
            !strncmp(e.v[i].field, "data[colocation-config]", strlen("data[colocation-config]")));
    field_errors_release(&e);
    cJSON_Delete(data);

    data = data_of(SLO_KEY_THRESHOLD, "", SLO_KEY_HOST_APP, "{bad", "cpu-normalization-config",
                   "{bad", "resource-amplification-config", "{bad", NULL);
    assert_int_equal(slo_config_validate(data, NULL, 0, false, &e), 0);
    assert_int_equal(e.n, 0);
    field_errors_release(&e);
    cJSON_Delete(data);

    assert_int_equal(slo_config_validate(NULL, NULL, 0, true, &e), 0);
    field_errors_release(&e);
}

/* The seed-002 template passes every check. */
static void test_template_valid(void **state)
{
    struct field_errors e = FIELD_ERRORS_INIT;
    cJSON *data = example_config_data();
    (void)state;

    if (slo_config_validate(data, NULL, 0, true, &e))
        fail_with_errors(&e, "template rejected:");
    field_errors_release(&e);
    cJSON_Delete(data);
}

/* Appending to a list that already holds errors: the result counts only the new ones, and the
 * earlier entries must not stop the checks. */
static void test_appends(void **state)
{
    struct field_errors e = FIELD_ERRORS_INIT;
    cJSON *data = data_of(SLO_KEY_CPU_BURST, "{\"clusterStrategy\":{\"cpuBurstPercent\":0}}", NULL);
    (void)state;

    field_error_add(&e, FIELD_INVALID, "earlier", NULL, "from another check");
    assert_int_equal(slo_config_validate(data, NULL, 0, false, &e), 1);
    assert_int_equal(field_errors_count(&e), 2);
    assert_string_equal(e.v[1].field, "data[cpu-burst-config].clusterStrategy.cpuBurstPercent");
    field_errors_release(&e);
    cJSON_Delete(data);
}

/* Requests are bounded by the applicable totalNetworkBandwidth (1.7): the system cluster value
 * for the cluster strategy, the system entry with an equal selector for a node entry. */
static void test_bandwidth(void **state)
{
    static const char qos_cluster[] =
        "{\"clusterStrategy\":{\"lsrClass\":{\"networkQOS\":{\"ingressRequest\":\"30M\"}},"
        "\"lsClass\":{\"networkQOS\":{\"ingressRequest\":\"20M\"}}}}";
    static const char qos_node[] =
        "{\"nodeStrategies\":[{\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\"}},"
        "\"beClass\":{\"networkQOS\":{\"egressRequest\":40}}}]}";
    struct {
        const char *qos, *sys;
        size_t want;
        const char *detail;
    } cases[] = {
        /* 30M + 20M = 50,000,000 > 100: strings count as their quantity value (upstream). */
        {qos_cluster, "{\"clusterStrategy\":{\"totalNetworkBandwidth\":\"1G\"}}", 1, "at most 100"},
        /* 40 <= 100 but > the default bandwidth "0" of an absent system-config. */
        {qos_node, NULL, 1, "totalNetworkBandwidth (0)"},
        /* The node entry's bandwidth: the system entry with the same selector (50). */
        {qos_node,
         "{\"clusterStrategy\":{\"totalNetworkBandwidth\":\"10\"},\"nodeStrategies\":[{"
         "\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\"}},\"totalNetworkBandwidth\":\"50\"}]}",
         0},
        /* No system entry with that selector while system has node entries: 0. */
        {qos_node,
         "{\"clusterStrategy\":{\"totalNetworkBandwidth\":\"1000\"},\"nodeStrategies\":[{"
         "\"nodeSelector\":{\"matchLabels\":{\"pool\":\"b\"}},\"totalNetworkBandwidth\":\"50\"}]}",
         1, "totalNetworkBandwidth (0)"},
        /* System has no node entries: the cluster value (1000) applies. */
        {qos_node, "{\"clusterStrategy\":{\"totalNetworkBandwidth\":\"1000\"}}", 0},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct field_errors e = FIELD_ERRORS_INIT;
        cJSON *data = cases[i].sys ? data_of(QOS, cases[i].qos, SYS, cases[i].sys, NULL)
                                   : data_of(QOS, cases[i].qos, NULL);
        size_t n = slo_config_validate(data, NULL, 0, false, &e);
        if (n != cases[i].want)
            fail_with_errors(&e, "case %zu: want %zu errors, have:", i, cases[i].want);
        if (n)
            assert_non_null(strstr(e.v[0].detail, cases[i].detail));
        field_errors_release(&e);
        cJSON_Delete(data);
    }
}

/* Step 6: with the cluster's nodes, a node matching two entries of one key is rejected, even
 * when the selectors alone do not overlap. */
static void test_real_nodes(void **state)
{
    static const char th[] =
        "{\"nodeStrategies\":[{\"name\":\"a\",\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\"}}},"
        "{\"name\":\"b\",\"nodeSelector\":{\"matchLabels\":{\"zone\":\"z1\"}}}]}";
    cJSON *data = data_of(TH, th, NULL);
    cJSON *n1 = cJSON_Parse("{\"metadata\":{\"name\":\"n1\",\"labels\":{\"pool\":\"a\"}}}");
    cJSON *n2 =
        cJSON_Parse("{\"metadata\":{\"name\":\"n2\",\"labels\":{\"pool\":\"a\",\"zone\":\"z1\"}}}");
    const cJSON *one[] = {n1}, *both[] = {n1, n2};
    struct field_errors e = FIELD_ERRORS_INIT;
    (void)state;

    assert_int_equal(slo_config_validate(data, NULL, 0, false, &e), 0);
    assert_int_equal(slo_config_validate(data, one, 1, false, &e), 0);
    assert_int_equal(slo_config_validate(data, both, 2, false, &e), 1);
    assert_string_equal(e.v[0].field, "data[resource-threshold-config]");
    assert_non_null(
        strstr(e.v[0].detail, "ExistNodeConflict: node \"n2\" matches node entries 0 and 1"));
    field_errors_release(&e);
    cJSON_Delete(n1);
    cJSON_Delete(n2);
    cJSON_Delete(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),           cmocka_unit_test(test_parse_error_reason),
        cmocka_unit_test(test_names),          cmocka_unit_test(test_key_order_and_skips),
        cmocka_unit_test(test_template_valid), cmocka_unit_test(test_appends),
        cmocka_unit_test(test_bandwidth),      cmocka_unit_test(test_real_nodes),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
