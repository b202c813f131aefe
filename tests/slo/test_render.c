/*
 * Tests for slo/render: the NodeSLO spec a node gets from the slo-controller-config ConfigMap
 * (reference/manager-behaviour.md 1.4, 1.6, 2.3, 2.4). Expected specs are written by hand from
 * those sections: the defaults of 1.3 and 2.3, first-match selection, the MergeCfg overlay of
 * node entries over the cluster strategy (and its totalNetworkBandwidth quirk), the
 * network-bandwidth annotation, and the seed-002 template with an Anolis node. And the
 * NodeMetric spec of section 3: the default collect policy, replaced by the node's colocation
 * strategy's metric fields only when that strategy is enabled and valid.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "codec/codec.h"
#include "slo/slo.h"
#include "testutil.h"

/* ---- helpers ---- */

/* A config after one update with data (which this takes ownership of); no events expected. */
static struct slo_config *config_with(cJSON *data)
{
    struct slo_config *cfg = slo_config_new();
    struct slo_events ev = {0};
    bool changed = false;

    assert_non_null(cfg);
    assert_int_equal(slo_config_update(cfg, data, &ev, &changed), 0);
    if (ev.n)
        fail_msg("unexpected event on %s: %s", ev.v[0].key, ev.v[0].message);
    slo_events_release(&ev);
    cJSON_Delete(data);
    return cfg;
}

static cJSON *render(const struct slo_config *cfg, const char *labels, const char *annotations)
{
    cJSON *node = mknode(labels, annotations), *spec = NULL;

    assert_int_equal(slo_render_spec(cfg, node, NULL, &spec), 0);
    assert_non_null(spec);
    cJSON_Delete(node);
    return spec;
}

/* Asserts one section of the spec rendered for a node (want NULL: the section is absent). */
static void expect_section_at(const struct slo_config *cfg, const char *labels,
                              const char *annotations, const char *section, const char *want,
                              int line)
{
    cJSON *spec = render(cfg, labels, annotations);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(spec, section);

    if (!want) {
        if (s)
            fail_msg("line %d: %s should be absent, got %s", line, section,
                     cJSON_PrintUnformatted(s));
    } else {
        if (!s)
            fail_msg("line %d: %s is missing", line, section);
        assert_json_eq_at(s, want, line);
    }
    cJSON_Delete(spec);
}
#define expect_section(cfg, labels, ann, section, want)                                            \
    expect_section_at((cfg), (labels), (ann), (section), (want), __LINE__)

/* Asserts the whole spec rendered for a node. */
static void expect_spec_at(const struct slo_config *cfg, const char *labels,
                           const char *annotations, const char *want, int line)
{
    cJSON *spec = render(cfg, labels, annotations);

    assert_json_eq_at(spec, want, line);
    cJSON_Delete(spec);
}
#define expect_spec(cfg, labels, ann, want) expect_spec_at((cfg), (labels), (ann), (want), __LINE__)

/* ---- the defaults of 2.3 ---- */

#define DEF_THRESHOLD                                                                              \
    "{\"enable\":false,\"cpuSuppressThresholdPercent\":65,\"cpuSuppressPolicy\":\"cpuset\","       \
    "\"memoryEvictThresholdPercent\":70,\"cpuEvictPolicy\":\"evictByRealLimit\"}"
#define DEF_BURST                                                                                  \
    "{\"policy\":\"none\",\"cpuBurstPercent\":1000,\"cfsQuotaBurstPercent\":300,"                  \
    "\"cfsQuotaBurstPeriodSeconds\":-1,\"sharePoolThresholdPercent\":50}"
#define DEF_SYSTEM "{\"totalNetworkBandwidth\":\"0\"}"

static const char default_spec[] =
    "{\"resourceUsedThresholdWithBE\":" DEF_THRESHOLD ",\"resourceQOSStrategy\":{},"
    "\"cpuBurstStrategy\":" DEF_BURST ",\"systemStrategy\":" DEF_SYSTEM
    ",\"extensions\":{\"Object\":{}}}";

static void test_defaults_only(void **state)
{
    struct slo_config *cfg = slo_config_new();
    (void)state;

    /* A fresh config: as if the ConfigMap were absent. */
    expect_spec(cfg, "{\"kubernetes.io/kernel\":\"anolis\"}", NULL, default_spec);
    slo_config_free(cfg);

    /* A ConfigMap with no data, and one with only colocation-config, render the same. */
    cfg = config_with(NULL);
    expect_spec(cfg, NULL, NULL, default_spec);
    slo_config_free(cfg);
    cfg = config_with(data_of(SLO_KEY_COLOCATION, "{\"enable\":true}", NULL));
    expect_spec(cfg, NULL, NULL, default_spec);
    slo_config_free(cfg);
}

/* Each key on its own changes only its own section (cluster merged over the key's default). */
static void test_each_key_alone(void **state)
{
    static const struct {
        const char *key, *value, *section, *want;
    } rows[] = {
        {SLO_KEY_THRESHOLD,
         "{\"clusterStrategy\":{\"enable\":true,\"cpuSuppressThresholdPercent\":80}}",
         "resourceUsedThresholdWithBE",
         "{\"enable\":true,\"cpuSuppressThresholdPercent\":80,\"cpuSuppressPolicy\":\"cpuset\","
         "\"memoryEvictThresholdPercent\":70,\"cpuEvictPolicy\":\"evictByRealLimit\"}"},
        {SLO_KEY_QOS,
         "{\"clusterStrategy\":{\"beClass\":{\"cpuQOS\":{\"enable\":true,"
         "\"groupIdentity\":-1}}}}",
         "resourceQOSStrategy",
         "{\"beClass\":{\"cpuQOS\":{\"enable\":true,\"groupIdentity\":-1}}}"},
        {SLO_KEY_CPU_BURST, "{\"clusterStrategy\":{\"policy\":\"auto\",\"cpuBurstPercent\":500}}",
         "cpuBurstStrategy",
         "{\"policy\":\"auto\",\"cpuBurstPercent\":500,\"cfsQuotaBurstPercent\":300,"
         "\"cfsQuotaBurstPeriodSeconds\":-1,\"sharePoolThresholdPercent\":50}"},
        {SLO_KEY_SYSTEM,
         "{\"clusterStrategy\":{\"minFreeKbytesFactor\":100,\"totalNetworkBandwidth\":"
         "\"1.5Gi\"}}",
         "systemStrategy", "{\"minFreeKbytesFactor\":100,\"totalNetworkBandwidth\":\"1536Mi\"}"},
        {SLO_KEY_HOST_APP,
         "{\"applications\":[{\"name\":\"nginx\",\"priority\":\"koord-prod\",\"qos\":\"LS\","
         "\"cgroupPath\":{\"base\":\"CgroupRoot\",\"relativePath\":\"nginx/\"}}]}",
         "hostApplications",
         "[{\"name\":\"nginx\",\"priority\":\"koord-prod\",\"qos\":\"LS\",\"cgroupPath\":"
         "{\"base\":\"CgroupRoot\",\"relativePath\":\"nginx/\"}}]"},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        struct slo_config *cfg = config_with(data_of(rows[i].key, rows[i].value, NULL));
        cJSON *spec = render(cfg, NULL, NULL), *want = J(default_spec);

        /* The expected spec is 2.3 with this one section replaced. */
        cJSON_DeleteItemFromObjectCaseSensitive(want, rows[i].section);
        cJSON_AddItemToObject(want, rows[i].section, J(rows[i].want));
        if (!cJSON_Compare(spec, want, true))
            fail_msg("row %zu (%s):\n got: %s\nwant: %s", i, rows[i].key,
                     cJSON_PrintUnformatted(spec), cJSON_PrintUnformatted(want));
        cJSON_Delete(want);
        cJSON_Delete(spec);
        slo_config_free(cfg);
    }
}

/* ---- the seed-002 template ---- */

#define TPL_MEMQOS(wr, wma)                                                                        \
    "{\"enable\":false,\"minLimitPercent\":0,\"lowLimitPercent\":0,\"throttlingPercent\":0,"       \
    "\"wmarkRatio\":" wr ",\"wmarkScalePermill\":20,\"wmarkMinAdj\":" wma ",\"priorityEnable\":0," \
    "\"priority\":0,\"oomKillGroup\":0}"
#define TPL_LS_CLASS                                                                               \
    "{\"cpuQOS\":{\"enable\":false,\"groupIdentity\":2},\"memoryQOS\":" TPL_MEMQOS(                \
        "95", "-25") ",\"resctrlQOS\":{\"enable\":false,\"catRangeStartPercent\":0,"               \
                     "\"catRangeEndPercent\":100,"                                                 \
                     "\"mbaPercent\":100}}"
#define TPL_BE_CLASS(wr)                                                                           \
    "{\"cpuQOS\":{\"enable\":false,\"groupIdentity\":-1},\"memoryQOS\":" TPL_MEMQOS(               \
        wr, "50") ",\"resctrlQOS\":{\"enable\":false,\"catRangeStartPercent\":0,"                  \
                  "\"catRangeEndPercent\":30,"                                                     \
                  "\"mbaPercent\":100}}"
#define TPL_THRESHOLD(usage)                                                                       \
    "{\"enable\":false,\"cpuSuppressThresholdPercent\":65,\"cpuSuppressPolicy\":\"cpuset\","       \
    "\"memoryEvictThresholdPercent\":70,\"memoryEvictLowerPercent\":65,"                           \
    "\"cpuEvictBESatisfactionUpperPercent\":90,\"cpuEvictBESatisfactionLowerPercent\":60,"         \
    "\"cpuEvictBEUsageThresholdPercent\":" usage ",\"cpuEvictPolicy\":\"evictByRealLimit\"}"
#define TPL_SYSTEM                                                                                 \
    "{\"minFreeKbytesFactor\":100,\"watermarkScaleFactor\":150,\"memcgReapBackGround\":0,"         \
    "\"totalNetworkBandwidth\":\"0\"}"

/* The anolis node: its entries of every key, each merged over the template's cluster strategy
 * (which is itself merged over the key's default). */
static const char anolis_spec[] = "{\"resourceUsedThresholdWithBE\":" TPL_THRESHOLD(
    "80") ",\"resourceQOSStrategy\":"
          "{\"lsrClass\":" TPL_LS_CLASS ",\"lsClass\":" TPL_LS_CLASS ",\"beClass\":" TPL_BE_CLASS(
              "90") "},\"cpuBurstStrategy\":{\"policy\":\"cfsQuotaBurstOnly\",\"cpuBurstPercent\":"
                    "1000,"
                    "\"cfsQuotaBurstPercent\":400,\"cfsQuotaBurstPeriodSeconds\":-1,"
                    "\"sharePoolThresholdPercent\":50},\"systemStrategy\":" TPL_SYSTEM
                    ",\"extensions\":{\"Object\":{}}}";

/* An unlabelled node: the cluster strategies. */
static const char plain_spec[] = "{\"resourceUsedThresholdWithBE\":" TPL_THRESHOLD(
    "90") ",\"resourceQOSStrategy\":"
          "{\"lsrClass\":" TPL_LS_CLASS ",\"lsClass\":" TPL_LS_CLASS
          ",\"beClass\":" TPL_BE_CLASS("95") "},\"cpuBurstStrategy\":" DEF_BURST
                                             ",\"systemStrategy\":" TPL_SYSTEM
                                             ",\"extensions\":{\"Object\":{}}}";

static void test_template(void **state)
{
    struct slo_config *cfg = config_with(example_config_data());
    cJSON *spec, *node, *obj = NULL;
    (void)state;

    expect_spec(cfg, "{\"kubernetes.io/kernel\":\"anolis\",\"kubernetes.io/os\":\"linux\"}", NULL,
                anolis_spec);
    expect_spec(cfg, "{\"kubernetes.io/os\":\"linux\"}", NULL, plain_spec);
    expect_spec(cfg, NULL, NULL, plain_spec);
    /* A kernel label with another value does not match. */
    expect_spec(cfg, "{\"kubernetes.io/kernel\":\"linux\"}", NULL, plain_spec);

    /* The whole NodeSLO object (2.2 step 4): name of the node, no namespace, status {}. */
    node = mknode("{\"kubernetes.io/kernel\":\"anolis\"}", NULL);
    cJSON_ReplaceItemInObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "metadata"),
                                           "name", cJSON_CreateString("anolis-node"));
    assert_int_equal(slo_render_nodeslo(cfg, node, &obj), 0);
    spec = J("{\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeSLO\",\"metadata\":"
             "{\"name\":\"anolis-node\"},\"status\":{}}");
    cJSON_AddItemToObject(spec, "spec", J(anolis_spec));
    assert_true(cJSON_Compare(obj, spec, true));
    cJSON_Delete(spec);
    cJSON_Delete(obj);
    cJSON_Delete(node);
    slo_config_free(cfg);
}

/* ---- node selection (1.6) ---- */

static void test_selection(void **state)
{
    struct slo_config *cfg = config_with(data_of(
        SLO_KEY_THRESHOLD,
        "{\"clusterStrategy\":{\"cpuSuppressThresholdPercent\":60},\"nodeStrategies\":["
        "{\"name\":\"a\",\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\"}},"
        "\"cpuSuppressThresholdPercent\":70},"
        "{\"name\":\"anolis\",\"nodeSelector\":{\"matchLabels\":{\"kubernetes.io/kernel\":"
        "\"anolis\"}},\"cpuSuppressThresholdPercent\":80,\"enable\":true},"
        "{\"name\":\"expr\",\"nodeSelector\":{\"matchExpressions\":[{\"key\":\"zone\","
        "\"operator\":\"In\",\"values\":[\"z1\",\"z2\"]}]},\"cpuSuppressThresholdPercent\":90},"
        "{\"name\":\"null\",\"nodeSelector\":null,\"cpuSuppressThresholdPercent\":10},"
        "{\"name\":\"missing\",\"cpuSuppressThresholdPercent\":11}]}",
        NULL));
#define T(pct, en)                                                                                 \
    "{\"enable\":" en ",\"cpuSuppressThresholdPercent\":" pct ",\"cpuSuppressPolicy\":"            \
    "\"cpuset\",\"memoryEvictThresholdPercent\":70,\"cpuEvictPolicy\":\"evictByRealLimit\"}"
    static const struct {
        const char *labels, *want;
    } rows[] = {
        {"{\"pool\":\"a\"}", T("70", "false")},
        /* two matching entries: the first wins, nothing of the second is merged in */
        {"{\"kubernetes.io/kernel\":\"anolis\",\"pool\":\"a\"}", T("70", "false")},
        {"{\"kubernetes.io/kernel\":\"anolis\"}", T("80", "true")},
        {"{\"zone\":\"z2\"}", T("90", "false")},
        {"{\"zone\":\"z3\"}", T("60", "false")},
        /* non-matching selector: the cluster strategy */
        {"{\"pool\":\"c\"}", T("60", "false")},
        /* null and missing selectors match nothing, not even an unlabelled node */
        {NULL, T("60", "false")},
        {"{}", T("60", "false")},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
        expect_section(cfg, rows[i].labels, NULL, "resourceUsedThresholdWithBE", rows[i].want);
    slo_config_free(cfg);

    /* An empty selector {} matches every node; an unparsable selector is skipped. */
    cfg = config_with(
        data_of(SLO_KEY_THRESHOLD,
                "{\"nodeStrategies\":[{\"nodeSelector\":{\"matchExpressions\":[{\"key\":\"a\","
                "\"operator\":\"Foo\"}]},\"cpuSuppressThresholdPercent\":30},"
                "{\"nodeSelector\":{},\"cpuSuppressThresholdPercent\":40}]}",
                NULL));
    expect_section(cfg, "{\"a\":\"x\"}", NULL, "resourceUsedThresholdWithBE", T("40", "false"));
    expect_section(cfg, NULL, NULL, "resourceUsedThresholdWithBE", T("40", "false"));
#undef T
    slo_config_free(cfg);
}

/* ---- merging node entries over the cluster strategy (1.4, 1.5) ---- */

static void test_deep_merge_lists_maps(void **state)
{
    struct slo_config *cfg = config_with(data_of(
        SLO_KEY_QOS,
        "{\"clusterStrategy\":{\"beClass\":{\"memoryQOS\":{\"enable\":true,\"wmarkRatio\":95,"
        "\"wmarkMinAdj\":50},\"blkioQOS\":{\"enable\":true,\"blocks\":[{\"name\":\"/dev/sda\","
        "\"type\":\"device\",\"ioCfg\":{\"readIOPS\":100,\"writeIOPS\":200}},{\"name\":"
        "\"/dev/sdb\",\"type\":\"device\",\"ioCfg\":{\"readBPS\":5}}]}}},\"nodeStrategies\":["
        "{\"name\":\"a\",\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\"}},\"beClass\":"
        "{\"memoryQOS\":{\"wmarkRatio\":90},\"blkioQOS\":{\"blocks\":[{\"ioCfg\":{\"writeIOPS\":"
        "300}}]}}},"
        "{\"name\":\"b\",\"nodeSelector\":{\"matchLabels\":{\"pool\":\"b\"}},\"beClass\":"
        "{\"blkioQOS\":{\"blocks\":[]},\"memoryQOS\":{\"enable\":false,\"wmarkRatio\":0}}}]}",
        SLO_KEY_SYSTEM,
        "{\"clusterStrategy\":{\"schedFeatures\":{\"A\":true,\"B\":false},"
        "\"totalNetworkBandwidth\":\"10G\"},\"nodeStrategies\":["
        "{\"name\":\"a\",\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\"}},\"schedFeatures\":"
        "{\"B\":true,\"C\":true}},"
        "{\"name\":\"b\",\"nodeSelector\":{\"matchLabels\":{\"pool\":\"b\"}},\"schedFeatures\":{},"
        "\"totalNetworkBandwidth\":\"10G\"},"
        "{\"name\":\"c\",\"nodeSelector\":{\"matchLabels\":{\"pool\":\"c\"}}}]}",
        NULL));
    (void)state;

    /* Partial override deep-merged; blocks[0] field-merged, the list cut to the override's
     * length. */
    expect_section(cfg, "{\"pool\":\"a\"}", NULL, "resourceQOSStrategy",
                   "{\"beClass\":{\"memoryQOS\":{\"enable\":true,\"wmarkRatio\":90,\"wmarkMinAdj\":"
                   "50},\"blkioQOS\":{\"enable\":true,\"blocks\":[{\"name\":\"/dev/sda\",\"type\":"
                   "\"device\",\"ioCfg\":{\"readIOPS\":100,\"writeIOPS\":300}}]}}}");
    /* An empty list never clears; pointer false/0 do override. */
    expect_section(cfg, "{\"pool\":\"b\"}", NULL, "resourceQOSStrategy",
                   "{\"beClass\":{\"memoryQOS\":{\"enable\":false,\"wmarkRatio\":0,\"wmarkMinAdj\":"
                   "50},\"blkioQOS\":{\"enable\":true,\"blocks\":[{\"name\":\"/dev/sda\",\"type\":"
                   "\"device\",\"ioCfg\":{\"readIOPS\":100,\"writeIOPS\":200}},{\"name\":"
                   "\"/dev/sdb\",\"type\":\"device\",\"ioCfg\":{\"readBPS\":5}}]}}}");
    /* Maps: key union with values replaced; the bandwidth quirk resets to "0". */
    expect_section(cfg, "{\"pool\":\"a\"}", NULL, "systemStrategy",
                   "{\"schedFeatures\":{\"A\":true,\"B\":true,\"C\":true},"
                   "\"totalNetworkBandwidth\":\"0\"}");
    /* An empty map never clears. */
    expect_section(
        cfg, "{\"pool\":\"b\"}", NULL, "systemStrategy",
        "{\"schedFeatures\":{\"A\":true,\"B\":false},\"totalNetworkBandwidth\":\"10G\"}");
    /* An entry with no strategy fields is the cluster strategy, bandwidth quirk included. */
    expect_section(cfg, "{\"pool\":\"c\"}", NULL, "systemStrategy",
                   "{\"schedFeatures\":{\"A\":true,\"B\":false},\"totalNetworkBandwidth\":\"0\"}");
    expect_section(
        cfg, NULL, NULL, "systemStrategy",
        "{\"schedFeatures\":{\"A\":true,\"B\":false},\"totalNetworkBandwidth\":\"10G\"}");
    slo_config_free(cfg);
}

/* ---- node-bandwidth annotation (1.6) ---- */

static void test_bandwidth_annotation(void **state)
{
    struct slo_config *cfg = config_with(
        data_of(SLO_KEY_SYSTEM,
                "{\"clusterStrategy\":{\"minFreeKbytesFactor\":100,\"totalNetworkBandwidth\":"
                "\"1G\"}}",
                NULL));
    cJSON *spec;
    (void)state;

    expect_section(cfg, NULL, NULL, "systemStrategy",
                   "{\"minFreeKbytesFactor\":100,\"totalNetworkBandwidth\":\"1G\"}");
    expect_section(cfg, NULL, "{\"node.koordinator.sh/network-bandwidth\":\"10G\"}",
                   "systemStrategy",
                   "{\"minFreeKbytesFactor\":100,\"totalNetworkBandwidth\":\"10G\"}");
    expect_section(cfg, NULL, "{\"node.koordinator.sh/network-bandwidth\":\"1.5Gi\"}",
                   "systemStrategy",
                   "{\"minFreeKbytesFactor\":100,\"totalNetworkBandwidth\":\"1536Mi\"}");
    /* Upstream quirk: an unparsable annotation drops systemStrategy; the rest is unchanged. */
    spec = render(cfg, NULL, "{\"node.koordinator.sh/network-bandwidth\":\"fast\"}");
    assert_null(cJSON_GetObjectItemCaseSensitive(spec, "systemStrategy"));
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(spec, "resourceUsedThresholdWithBE"),
                   DEF_THRESHOLD);
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(spec, "cpuBurstStrategy"), DEF_BURST);
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(spec, "extensions"), "{\"Object\":{}}");
    cJSON_Delete(spec);
    slo_config_free(cfg);

    /* With the default config too. */
    cfg = slo_config_new();
    expect_section(cfg, NULL, "{\"node.koordinator.sh/network-bandwidth\":\"100M\"}",
                   "systemStrategy", "{\"totalNetworkBandwidth\":\"100M\"}");
    expect_section(cfg, NULL, "{\"node.koordinator.sh/network-bandwidth\":\"\"}", "systemStrategy",
                   NULL);
    slo_config_free(cfg);
}

/* ---- extensions (2.4) and host applications (1.6) ---- */

static void test_extensions_kept(void **state)
{
    struct slo_config *cfg = slo_config_new();
    cJSON *node = mknode(NULL, NULL), *spec = NULL;
    cJSON *old = J("{\"resourceUsedThresholdWithBE\":{\"enable\":true},\"extensions\":"
                   "{\"Object\":{\"vendor\":{\"a\":[1,2]},\"other\":true}}}");
    (void)state;

    /* On update the old spec's extensions are kept; everything else is recomputed. */
    assert_int_equal(slo_render_spec(cfg, node, old, &spec), 0);
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(spec, "extensions"),
                   "{\"Object\":{\"vendor\":{\"a\":[1,2]},\"other\":true}}");
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(spec, "resourceUsedThresholdWithBE"),
                   DEF_THRESHOLD);
    cJSON_Delete(spec);
    cJSON_Delete(old);
    /* An old spec without extensions gives the empty map. */
    old = J("{\"cpuBurstStrategy\":{}}");
    assert_int_equal(slo_render_spec(cfg, node, old, &spec), 0);
    assert_json_eq(spec, default_spec);
    cJSON_Delete(spec);
    cJSON_Delete(old);
    cJSON_Delete(node);
    slo_config_free(cfg);
}

static void test_host_applications(void **state)
{
    struct slo_config *cfg = config_with(data_of(
        SLO_KEY_HOST_APP,
        "{\"applications\":[{\"name\":\"a\"}],\"nodeConfigs\":["
        "{\"name\":\"n\",\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\"}},\"applications\":"
        "[{\"name\":\"b\",\"qos\":\"BE\"},{\"name\":\"c\"}]},"
        "{\"name\":\"none\",\"nodeSelector\":{\"matchLabels\":{\"pool\":\"b\"}},\"applications\":"
        "[]}]}",
        NULL));
    (void)state;

    /* The first matching entry's list replaces the cluster list entirely. */
    expect_section(cfg, "{\"pool\":\"a\"}", NULL, "hostApplications",
                   "[{\"name\":\"b\",\"qos\":\"BE\"},{\"name\":\"c\"}]");
    expect_section(cfg, NULL, NULL, "hostApplications", "[{\"name\":\"a\"}]");
    /* An empty list is omitted on the wire (2.3). */
    expect_section(cfg, "{\"pool\":\"b\"}", NULL, "hostApplications", NULL);
    slo_config_free(cfg);
}

/* ---- NodeMetric spec (section 3) ---- */

static void expect_nodemetric_at(const struct slo_config *cfg, const char *labels,
                                 const char *annotations, const char *want, int line)
{
    cJSON *node = mknode(labels, annotations), *spec = NULL;

    assert_int_equal(slo_render_nodemetric_spec(cfg, node, &spec), 0);
    assert_json_eq_at(spec, want, line);
    cJSON_Delete(spec);
    cJSON_Delete(node);
}
#define expect_nodemetric(cfg, labels, ann, want)                                                  \
    expect_nodemetric_at((cfg), (labels), (ann), (want), __LINE__)

#define NM(agg, report, durations, mem)                                                            \
    "{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":" agg                                  \
    ",\"reportIntervalSeconds\":" report ",\"nodeAggregatePolicy\":{\"durations\":" durations      \
    "},\"nodeMemoryCollectPolicy\":\"" mem "\"}}"
#define NM_DEFAULT NM("300", "60", "[\"5m0s\",\"10m0s\",\"30m0s\"]", "usageWithoutPageCache")
#define NM_CUSTOM  NM("600", "30", "[\"15m0s\",\"1h0m0s\"]", "usageWithPageCache")

/* Metric fields of a colocation-config, with enable as given. */
#define METRICS(enable)                                                                            \
    "\"enable\":" enable ",\"metricAggregateDurationSeconds\":600,"                                \
    "\"metricReportIntervalSeconds\":30,\"metricAggregatePolicy\":{\"durations\":[\"15m\","        \
    "\"3600s\"]},\"metricMemoryCollectPolicy\":\"usageWithPageCache\""

static void test_nodemetric_spec(void **state)
{
    struct slo_config *cfg = slo_config_new();
    (void)state;

    /* No ConfigMap: the default policy. */
    expect_nodemetric(cfg, NULL, NULL, NM_DEFAULT);
    slo_config_free(cfg);

    /* Enabled: the four fields replace the defaults, durations as Go prints them. */
    cfg = config_with(data_of(SLO_KEY_COLOCATION, "{" METRICS("true") "}", NULL));
    expect_nodemetric(cfg, NULL, NULL, NM_CUSTOM);
    /* An annotation that disables colocation for this node: defaults. */
    expect_nodemetric(cfg, NULL,
                      "{\"node.koordinator.sh/colocation-strategy\":\"{\\\"enable\\\":false}\"}",
                      NM_DEFAULT);
    /* An annotation (not validated) that makes the node's strategy invalid: defaults. */
    expect_nodemetric(cfg, NULL,
                      "{\"node.koordinator.sh/colocation-strategy\":"
                      "\"{\\\"degradeTimeMinutes\\\":0}\"}",
                      NM_DEFAULT);
    /* An unparsable annotation is ignored. */
    expect_nodemetric(cfg, NULL, "{\"node.koordinator.sh/colocation-strategy\":\"{\"}", NM_CUSTOM);
    slo_config_free(cfg);

    /* Disabled in the ConfigMap: the defaults even though it sets other metric values. */
    cfg = config_with(data_of(SLO_KEY_COLOCATION, "{" METRICS("false") "}", NULL));
    expect_nodemetric(cfg, NULL, NULL, NM_DEFAULT);
    /* ... unless the node's annotation enables it. */
    expect_nodemetric(cfg, NULL,
                      "{\"node.koordinator.sh/colocation-strategy\":\"{\\\"enable\\\":true,"
                      "\\\"metricReportIntervalSeconds\\\":20}\"}",
                      NM("600", "20", "[\"15m0s\",\"1h0m0s\"]", "usageWithPageCache"));
    slo_config_free(cfg);

    /* A nodeConfigs entry enables it for its nodes only. */
    cfg = config_with(
        data_of(SLO_KEY_COLOCATION,
                "{" METRICS("false") ",\"nodeConfigs\":[{\"name\":\"a\","
                                     "\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\"}},"
                                     "\"enable\":true,\"metricAggregateDurationSeconds\":120}]}",
                NULL));
    expect_nodemetric(cfg, "{\"pool\":\"a\"}", NULL,
                      NM("120", "30", "[\"15m0s\",\"1h0m0s\"]", "usageWithPageCache"));
    expect_nodemetric(cfg, "{\"pool\":\"b\"}", NULL, NM_DEFAULT);
    slo_config_free(cfg);
}

/* ---- fault injection ---- */

/* Rendering allocates only through cJSON (checked): every injected failure is -ENOMEM and
 * leaks nothing (ASan and valgrind watch). */
static void test_fault_injection_render(void **state)
{
    struct slo_config *cfg = config_with(example_config_data());
    cJSON *node = mknode("{\"kubernetes.io/kernel\":\"anolis\"}",
                         "{\"node.koordinator.sh/network-bandwidth\":\"10G\"}");
    cJSON *old = J("{\"extensions\":{\"Object\":{\"x\":{\"y\":[1]}}}}"), *want = NULL;
    long n;
    (void)state;

    assert_int_equal(slo_render_spec(cfg, node, old, &want), 0);
    for (n = 1;; n++) {
        cJSON *spec = NULL;
        int r, injected;

        alloc_fail_after(n);
        r = slo_render_spec(cfg, node, old, &spec);
        injected = alloc_injected();
        alloc_fail_after(0);
        if (!injected) {
            assert_int_equal(r, 0);
            assert_true(cJSON_Compare(spec, want, true));
            cJSON_Delete(spec);
            break;
        }
        if (r != -ENOMEM)
            fail_msg("allocation %ld failed but slo_render_spec returned %d", n, r);
        assert_null(spec);
    }
    assert_true(n > 20);
    cJSON_Delete(want);
    cJSON_Delete(old);
    cJSON_Delete(node);
    slo_config_free(cfg);
}

static void test_fault_injection_nodemetric(void **state)
{
    struct slo_config *cfg =
        config_with(data_of(SLO_KEY_COLOCATION, "{" METRICS("true") "}", NULL));
    cJSON *node = mknode("{\"node.koordinator.sh/cpu-reclaim-ratio\":\"0.5\"}",
                         "{\"node.koordinator.sh/colocation-strategy\":"
                         "\"{\\\"metricReportIntervalSeconds\\\":20}\"}");
    cJSON *want = NULL;
    long n;
    (void)state;

    assert_int_equal(slo_render_nodemetric_spec(cfg, node, &want), 0);
    assert_json_eq(want, NM("600", "20", "[\"15m0s\",\"1h0m0s\"]", "usageWithPageCache"));
    for (n = 1;; n++) {
        cJSON *spec = NULL;
        int r, injected;

        alloc_fail_after(n);
        r = slo_render_nodemetric_spec(cfg, node, &spec);
        injected = alloc_injected();
        alloc_fail_after(0);
        if (!injected) {
            assert_int_equal(r, 0);
            assert_true(cJSON_Compare(spec, want, true));
            cJSON_Delete(spec);
            break;
        }
        if (r != -ENOMEM)
            fail_msg("allocation %ld failed but slo_render_nodemetric_spec returned %d", n, r);
        assert_null(spec);
    }
    assert_true(n > 10);
    cJSON_Delete(want);
    cJSON_Delete(node);
    slo_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_only),
        cmocka_unit_test(test_each_key_alone),
        cmocka_unit_test(test_template),
        cmocka_unit_test(test_selection),
        cmocka_unit_test(test_deep_merge_lists_maps),
        cmocka_unit_test(test_bandwidth_annotation),
        cmocka_unit_test(test_extensions_kept),
        cmocka_unit_test(test_host_applications),
        cmocka_unit_test(test_nodemetric_spec),
        cmocka_unit_test(test_fault_injection_render),
        cmocka_unit_test(test_fault_injection_nodemetric),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
