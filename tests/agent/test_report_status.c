/*
 * Tests for agent/report/status: the NodeMetric status built from a metric cache holding
 * hand-made samples, checked against values computed by hand with upstream's rules (avg, the
 * sorted[int(n*p)-1] percentile, cold durations left out, int64 truncation, the quantity forms
 * koordlet writes, pods sorted and without samples omitted).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/metriccache/metriccache.h"
#include "agent/report/status.h"
#include "testutil.h"

#define NOW 1700000000000LL /* ms */
#define GIB (1024.0 * 1024 * 1024)

static void fill(struct mc *mc, enum mc_kind kind, const char *id, int seconds, double base,
                 double step)
{
    /* One point a second over the last `seconds` seconds: base, base+step, ... (newest last). */
    for (int i = 0; i < seconds; i++)
        assert_int_equal(
            mc_append(mc, kind, id, NULL, NOW - (seconds - 1 - i) * 1000LL, base + step * i), 0);
}

static const char *str(const cJSON *o, const char *path)
{
    char buf[256];
    char *save = NULL, *tok;
    const cJSON *cur = o;

    (void)snprintf(buf, sizeof(buf), "%s", path);
    for (tok = strtok_r(buf, ".", &save); tok && cur; tok = strtok_r(NULL, ".", &save)) {
        if (*tok >= '0' && *tok <= '9')
            cur = cJSON_GetArrayItem(cur, atoi(tok));
        else
            cur = cJSON_GetObjectItemCaseSensitive(cur, tok);
    }
    return cur && cJSON_IsString(cur) ? cur->valuestring : NULL;
}

static void expect(const cJSON *o, const char *path, const char *want)
{
    const char *got = str(o, path);
    if (!got || strcmp(got, want))
        fail_msg("%s: got %s, want %s", path, got ? got : "(none)", want);
}

static void test_status(void **state)
{
    struct mc *mc = NULL;
    struct mc_scratch s = MC_SCRATCH_INIT;
    struct report_policy p;
    const struct report_pod pods[] = {
        {"uid-b", "default", "web-b", API_QOS_LS, API_PRIORITY_PROD},
        {"uid-a", "default", "web-a", API_QOS_BE, API_PRIORITY_BATCH},
        {"uid-c", "kube-system", "idle", API_QOS_NONE, API_PRIORITY_NONE}, /* no samples */
        {"uid-0", "apps", "zero", API_QOS_NONE, API_PRIORITY_NONE},
    };
    cJSON *st;
    (void)state;

    assert_int_equal(mc_new(NULL, &mc), 0);
    report_policy_default(&p);
    /* 600 s of node samples: cpu 1 + i/128 cores for i = 0..599 (exact in binary, so the
     * expected values need no rounding argument); memory 4 GiB flat. */
    fill(mc, MC_NODE_CPU_USAGE, NULL, 600, 1.0, 1.0 / 128);
    fill(mc, MC_NODE_MEMORY_USAGE, NULL, 600, 4 * GIB, 0);
    fill(mc, MC_SYS_CPU_USAGE, NULL, 600, 0.25, 0);
    fill(mc, MC_SYS_MEMORY_USAGE, NULL, 600, 1 * GIB + 1, 0);
    fill(mc, MC_POD_CPU_USAGE, "uid-a", 300, 0.5, 0);
    fill(mc, MC_POD_MEMORY_USAGE, "uid-a", 300, 256.0 * 1024 * 1024, 0);
    fill(mc, MC_POD_CPU_USAGE, "uid-b", 300, 0.1234, 0);
    fill(mc, MC_POD_MEMORY_USAGE, "uid-b", 300, 1000, 0);
    fill(mc, MC_POD_CPU_USAGE, "uid-0", 300, 0, 0);
    fill(mc, MC_POD_MEMORY_USAGE, "uid-0", 300, 0, 0);

    st = report_build_status(mc, &p, pods, 4, NOW, &s);
    assert_non_null(st);
    expect(st, "updateTime", "2023-11-14T22:13:20Z");
    /* Aggregate window 300 s, bounds included: the last 301 points, i = 299..599, avg
     * 1 + 449/128 = 4.5078125 -> 4507m (int64 truncation). */
    expect(st, "nodeMetric.nodeUsage.resources.cpu", "4507m");
    expect(st, "nodeMetric.nodeUsage.resources.memory", "4Gi");
    /* 5m: 301 points (covers 300 s: warm); p50 = sorted[int(301*0.5)-1] = sorted[149], i = 448,
     * 4.5; p90 = sorted[269], i = 568, 5.4375; p95 = sorted[284], i = 583, 5.5546875;
     * p99 = sorted[296], i = 595, 5.6484375. */
    expect(st, "nodeMetric.aggregatedNodeUsages.0.duration", "5m0s");
    expect(st, "nodeMetric.aggregatedNodeUsages.0.usage.avg.resources.cpu", "4507m");
    expect(st, "nodeMetric.aggregatedNodeUsages.0.usage.p50.resources.cpu", "4500m");
    expect(st, "nodeMetric.aggregatedNodeUsages.0.usage.p90.resources.cpu", "5437m");
    expect(st, "nodeMetric.aggregatedNodeUsages.0.usage.p95.resources.cpu", "5554m");
    expect(st, "nodeMetric.aggregatedNodeUsages.0.usage.p99.resources.cpu", "5648m");
    expect(st, "nodeMetric.aggregatedNodeUsages.0.usage.p99.resources.memory", "4Gi");
    /* 10m: all 600 points, covering 599 s >= 300 s: warm; avg 1 + 299.5/128 = 3.33984375. */
    expect(st, "nodeMetric.aggregatedNodeUsages.1.duration", "10m0s");
    expect(st, "nodeMetric.aggregatedNodeUsages.1.usage.avg.resources.cpu", "3339m");
    /* 30m: 599 s < 900 s: cold, left out. */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetObjectItem(st, "nodeMetric"),
                                                            "aggregatedNodeUsages")),
                     2);
    expect(st, "nodeMetric.systemUsage.resources.cpu", "250m");
    expect(st, "nodeMetric.systemUsage.resources.memory", "1073741825");
    expect(st, "nodeMetric.aggregatedSystemUsages.0.usage.p95.resources.cpu", "250m");
    /* Pods: sorted by namespace/name, the one without samples omitted, class names as labels,
     * none for a pod of no class. */
    expect(st, "podsMetric.0.name", "zero");
    assert_null(str(st, "podsMetric.0.priority"));
    assert_null(str(st, "podsMetric.0.qos"));
    expect(st, "podsMetric.0.podUsage.resources.cpu", "0");
    expect(st, "podsMetric.1.name", "web-a");
    expect(st, "podsMetric.1.priority", "koord-batch");
    expect(st, "podsMetric.1.qos", "BE");
    expect(st, "podsMetric.1.podUsage.resources.cpu", "500m");
    expect(st, "podsMetric.1.podUsage.resources.memory", "256Mi");
    expect(st, "podsMetric.2.name", "web-b");
    expect(st, "podsMetric.2.qos", "LS");
    expect(st, "podsMetric.2.podUsage.resources.cpu", "123m");
    /* BinarySI below 1024 prints as DecimalSI, as Go's Quantity does. */
    expect(st, "podsMetric.2.podUsage.resources.memory", "1k");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(st, "podsMetric")), 3);
    cJSON_Delete(st);

    /* Page-cache policy reads the other memory series; none here yet: nothing to report. */
    p.memory = REPORT_MEMORY_WITH_PAGE_CACHE;
    assert_null(report_build_status(mc, &p, pods, 4, NOW, &s));
    mc_scratch_release(&s);
    mc_free(mc);
}

static void test_no_samples(void **state)
{
    struct mc *mc = NULL;
    struct mc_scratch s = MC_SCRATCH_INIT;
    struct report_policy p;
    (void)state;

    assert_int_equal(mc_new(NULL, &mc), 0);
    report_policy_default(&p);
    assert_null(report_build_status(mc, &p, NULL, 0, NOW, &s));
    /* Samples older than the aggregate window do not count either. */
    assert_int_equal(mc_append(mc, MC_NODE_CPU_USAGE, NULL, NULL, NOW - 301000, 1), 0);
    assert_int_equal(mc_append(mc, MC_NODE_MEMORY_USAGE, NULL, NULL, NOW - 301000, 1), 0);
    assert_null(report_build_status(mc, &p, NULL, 0, NOW, &s));
    mc_scratch_release(&s);
    mc_free(mc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status),
        cmocka_unit_test(test_no_samples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
