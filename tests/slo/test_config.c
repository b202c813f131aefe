/*
 * Tests for slo/config (and slo/colocation): how ConfigMap updates become the in-memory config
 * (reference/manager-behaviour.md 1.3, 1.5): a key that fails to decode keeps its last good
 * value and yields the Warning Event upstream records; a missing key takes its default;
 * ret_changed says whether every Node must be re-enqueued. And a node's colocation strategy
 * (1.6): first matching nodeConfigs entry, the colocation-strategy annotation, the reclaim-ratio
 * labels with int() truncation. Expected values are worked out by hand from those sections.
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

/* One update; data is consumed. Returns ret_changed; events are left in *ev (released first). */
static bool update_at(struct slo_config *cfg, cJSON *data, struct slo_events *ev, int line)
{
    bool changed = true; /* must be overwritten */
    int r;

    slo_events_release(ev);
    r = slo_config_update(cfg, data, ev, &changed);
    if (r != 0)
        fail_msg("line %d: slo_config_update returned %d", line, r);
    cJSON_Delete(data);
    return changed;
}
#define update(cfg, data, ev) update_at((cfg), (data), (ev), __LINE__)

static void expect_no_events_at(const struct slo_events *ev, int line)
{
    if (ev->n)
        fail_msg("line %d: unexpected event on %s: %s: %s", line, ev->v[0].key,
                 ev->v[0].reason ? ev->v[0].reason : "(no reason)", ev->v[0].message);
}
#define expect_no_events(ev) expect_no_events_at((ev), __LINE__)

/* A new config after one update with data (consumed) that must report a change and record no
 * event; the caller frees it. */
static struct slo_config *changed_config_at(cJSON *data, int line)
{
    struct slo_config *cfg = slo_config_new();
    struct slo_events ev = {0};

    assert_non_null(cfg);
    if (!update_at(cfg, data, &ev, line))
        fail_msg("line %d: the update reported no change", line);
    expect_no_events_at(&ev, line);
    slo_events_release(&ev);
    return cfg;
}
#define changed_config(data) changed_config_at((data), __LINE__)

/* Exactly one event, for key, with reason and a message "<prefix><something>". */
static void expect_event_at(const struct slo_events *ev, const char *key, const char *reason,
                            const char *prefix, int line)
{
    if (ev->n != 1)
        fail_msg("line %d: %zu events, want 1", line, ev->n);
    if (strcmp(ev->v[0].key, key) != 0)
        fail_msg("line %d: event key %s, want %s", line, ev->v[0].key, key);
    if (!ev->v[0].reason || strcmp(ev->v[0].reason, reason) != 0)
        fail_msg("line %d: event reason %s, want %s", line,
                 ev->v[0].reason ? ev->v[0].reason : "(none)", reason);
    if (strncmp(ev->v[0].message, prefix, strlen(prefix)) != 0 ||
        strlen(ev->v[0].message) <= strlen(prefix))
        fail_msg("line %d: event message \"%s\", want \"%s<error>\"", line, ev->v[0].message,
                 prefix);
}
#define expect_event(ev, key, reason, prefix)                                                      \
    expect_event_at((ev), (key), (reason), (prefix), __LINE__)

/* The rendered section of the NodeSLO spec for an unlabelled node. */
static void expect_section_at(const struct slo_config *cfg, const char *section, const char *want,
                              int line)
{
    cJSON *node = mknode(NULL, NULL), *spec = NULL;

    assert_int_equal(slo_render_spec(cfg, node, NULL, &spec), 0);
    assert_json_eq_at(cJSON_GetObjectItemCaseSensitive(spec, section), want, line);
    cJSON_Delete(spec);
    cJSON_Delete(node);
}
#define expect_section(cfg, section, want) expect_section_at((cfg), (section), (want), __LINE__)

static void expect_colocation_at(const struct slo_config *cfg, const char *labels,
                                 const char *annotations, const char *want, int line)
{
    cJSON *node = mknode(labels, annotations), *s = NULL;

    assert_int_equal(slo_node_colocation(cfg, node, &s), 0);
    assert_json_eq_at(s, want, line);
    cJSON_Delete(s);
    cJSON_Delete(node);
}
#define expect_colocation(cfg, labels, ann, want)                                                  \
    expect_colocation_at((cfg), (labels), (ann), (want), __LINE__)

/* manager-behaviour.md 1.3, colocation-config defaults, with overridable fields. */
#define COLOC(enable, cpu, mem, durations, update, diff, midcpu, midmem)                           \
    "{\"enable\":" enable ",\"metricAggregateDurationSeconds\":300,"                               \
    "\"metricReportIntervalSeconds\":60,\"metricAggregatePolicy\":{\"durations\":" durations       \
    "},\"metricMemoryCollectPolicy\":\"usageWithoutPageCache\","                                   \
    "\"cpuReclaimThresholdPercent\":" cpu                                                          \
    ",\"cpuCalculatePolicy\":\"usage\",\"memoryReclaimThresholdPercent\":" mem                     \
    ",\"memoryCalculatePolicy\":\"usage\",\"degradeTimeMinutes\":15,"                              \
    "\"updateTimeThresholdSeconds\":" update ",\"resourceDiffThreshold\":" diff                    \
    ",\"midCPUThresholdPercent\":100,\"midMemoryThresholdPercent\":100,"                           \
    "\"midUnallocatedPercent\":0,\"midStaticCPUReservedPercent\":" midcpu                          \
    ",\"midStaticMemoryReservedPercent\":" midmem "}"
#define DURATIONS     "[\"5m0s\",\"10m0s\",\"30m0s\"]"
#define COLOC_DEFAULT COLOC("false", "60", "65", DURATIONS, "300", "0.1", "0", "0")

#define DEF_THRESHOLD                                                                              \
    "{\"enable\":false,\"cpuSuppressThresholdPercent\":65,\"cpuSuppressPolicy\":\"cpuset\","       \
    "\"memoryEvictThresholdPercent\":70,\"cpuEvictPolicy\":\"evictByRealLimit\"}"

/* ---- ret_changed ---- */

static void test_changed(void **state)
{
    struct slo_config *cfg = slo_config_new();
    struct slo_events ev = {0};
    static const char sel_a[] =
        "{\"nodeStrategies\":[{\"name\":\"x\",\"nodeSelector\":{\"matchLabels\":{\"pool\":"
        "\"a\"}},\"enable\":true}]}";
    static const char sel_b[] =
        "{\"nodeStrategies\":[{\"name\":\"x\",\"nodeSelector\":{\"matchLabels\":{\"pool\":"
        "\"b\"}},\"enable\":true}]}";
    static const char name_y[] =
        "{\"nodeStrategies\":[{\"name\":\"y\",\"nodeSelector\":{\"matchLabels\":{\"pool\":"
        "\"b\"}},\"enable\":true}]}";
    (void)state;

    /* Defaults over defaults: nothing changed, whether data is absent or empty. */
    assert_false(update(cfg, NULL, &ev));
    assert_false(update(cfg, cJSON_CreateObject(), &ev));
    expect_no_events(&ev);
    /* A key that equals its default after merging changes nothing either. */
    assert_false(update(cfg, data_of(SLO_KEY_THRESHOLD, "{\"clusterStrategy\":{}}", NULL), &ev));
    assert_false(update(cfg, data_of(SLO_KEY_THRESHOLD, "{}", NULL), &ev));
    assert_false(update(cfg, data_of(SLO_KEY_COLOCATION, "{\"enable\":false}", NULL), &ev));
    expect_no_events(&ev);

    assert_true(update(
        cfg, data_of(SLO_KEY_THRESHOLD, "{\"clusterStrategy\":{\"enable\":true}}", NULL), &ev));
    assert_false(update(
        cfg, data_of(SLO_KEY_THRESHOLD, "{\"clusterStrategy\":{\"enable\":true}}", NULL), &ev));
    /* Key removed: back to the default, a change. */
    assert_true(update(cfg, NULL, &ev));

    /* Node entries: a new entry, a changed selector, a changed name. */
    assert_true(update(cfg, data_of(SLO_KEY_THRESHOLD, sel_a, NULL), &ev));
    assert_false(update(cfg, data_of(SLO_KEY_THRESHOLD, sel_a, NULL), &ev));
    assert_true(update(cfg, data_of(SLO_KEY_THRESHOLD, sel_b, NULL), &ev));
    assert_true(update(cfg, data_of(SLO_KEY_THRESHOLD, name_y, NULL), &ev));
    assert_false(update(cfg, data_of(SLO_KEY_THRESHOLD, name_y, NULL), &ev));
    expect_no_events(&ev);

    /* Every other key counts too. */
    assert_true(update(
        cfg, data_of(SLO_KEY_THRESHOLD, name_y, SLO_KEY_COLOCATION, "{\"enable\":true}", NULL),
        &ev));
    assert_true(update(cfg,
                       data_of(SLO_KEY_THRESHOLD, name_y, SLO_KEY_COLOCATION, "{\"enable\":true}",
                               SLO_KEY_HOST_APP, "{\"applications\":[{\"name\":\"a\"}]}", NULL),
                       &ev));
    assert_true(
        update(cfg,
               data_of(SLO_KEY_THRESHOLD, name_y, SLO_KEY_COLOCATION, "{\"enable\":true}",
                       SLO_KEY_HOST_APP, "{\"applications\":[{\"name\":\"a\"}]}", SLO_KEY_SYSTEM,
                       "{\"clusterStrategy\":{\"minFreeKbytesFactor\":1}}", NULL),
               &ev));
    /* A colocation selector change alone. */
    assert_true(
        update(cfg,
               data_of(SLO_KEY_COLOCATION,
                       "{\"nodeConfigs\":[{\"nodeSelector\":{\"matchLabels\":{\"a\":\"1\"}},"
                       "\"enable\":true}]}",
                       NULL),
               &ev));
    assert_true(
        update(cfg,
               data_of(SLO_KEY_COLOCATION,
                       "{\"nodeConfigs\":[{\"nodeSelector\":{\"matchLabels\":{\"a\":\"2\"}},"
                       "\"enable\":true}]}",
                       NULL),
               &ev));
    expect_no_events(&ev);
    /* A ret_changed pointer is optional. */
    assert_int_equal(slo_config_update(cfg, NULL, NULL, NULL), 0);
    slo_events_release(&ev);
    slo_config_free(cfg);
}

/* ---- decode failures of the NodeSLO keys (1.5) ---- */

static void test_bad_json_keeps_previous(void **state)
{
    static const struct {
        const char *key, *what, *good, *section, *good_section, *default_section;
    } rows[] = {
        {SLO_KEY_THRESHOLD, "ThresholdCfg", "{\"clusterStrategy\":{\"enable\":true}}",
         "resourceUsedThresholdWithBE",
         "{\"enable\":true,\"cpuSuppressThresholdPercent\":65,\"cpuSuppressPolicy\":\"cpuset\","
         "\"memoryEvictThresholdPercent\":70,\"cpuEvictPolicy\":\"evictByRealLimit\"}",
         DEF_THRESHOLD},
        {SLO_KEY_QOS, "ResourceQOSCfg",
         "{\"clusterStrategy\":{\"beClass\":{\"cpuQOS\":"
         "{\"enable\":true}}}}",
         "resourceQOSStrategy", "{\"beClass\":{\"cpuQOS\":{\"enable\":true}}}", "{}"},
        {SLO_KEY_CPU_BURST, "CPUBurstCfg", "{\"clusterStrategy\":{\"policy\":\"auto\"}}",
         "cpuBurstStrategy",
         "{\"policy\":\"auto\",\"cpuBurstPercent\":1000,\"cfsQuotaBurstPercent\":300,"
         "\"cfsQuotaBurstPeriodSeconds\":-1,\"sharePoolThresholdPercent\":50}",
         "{\"policy\":\"none\",\"cpuBurstPercent\":1000,\"cfsQuotaBurstPercent\":300,"
         "\"cfsQuotaBurstPeriodSeconds\":-1,\"sharePoolThresholdPercent\":50}"},
        {SLO_KEY_SYSTEM, "SystemCfg", "{\"clusterStrategy\":{\"minFreeKbytesFactor\":200}}",
         "systemStrategy", "{\"minFreeKbytesFactor\":200,\"totalNetworkBandwidth\":\"0\"}",
         "{\"totalNetworkBandwidth\":\"0\"}"},
        {SLO_KEY_HOST_APP, "HostApplicationCfg", "{\"applications\":[{\"name\":\"nginx\"}]}",
         "hostApplications", "[{\"name\":\"nginx\"}]", NULL},
    };
    /* Invalid JSON, an empty string (a JSON error for these keys), and a JSON type mismatch. */
    static const char *const bad[] = {"{\"clusterStrategy\":", "", "[1,2]"};
    struct slo_events ev = {0};
    char prefix[128];
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        struct slo_config *cfg = slo_config_new();

        (void)snprintf(prefix, sizeof(prefix), "failed to unmarshal %s, err: ", rows[i].what);
        /* At start-up the previous value is the default. */
        assert_false(update(cfg, data_of(rows[i].key, bad[0], NULL), &ev));
        expect_event(&ev, rows[i].key, "SLOCfgUnmarshalFailed", prefix);
        if (rows[i].default_section)
            expect_section(cfg, rows[i].section, rows[i].default_section);

        assert_true(update(cfg, data_of(rows[i].key, rows[i].good, NULL), &ev));
        expect_no_events(&ev);
        expect_section(cfg, rows[i].section, rows[i].good_section);
        for (size_t j = 0; j < ARRAY_SIZE(bad); j++) {
            assert_false(update(cfg, data_of(rows[i].key, bad[j], NULL), &ev));
            expect_event(&ev, rows[i].key, "SLOCfgUnmarshalFailed", prefix);
            expect_section(cfg, rows[i].section, rows[i].good_section);
        }
        /* Other keys in the same update still apply. */
        assert_true(update(
            cfg, data_of(rows[i].key, bad[0], SLO_KEY_COLOCATION, "{\"enable\":true}", NULL), &ev));
        expect_event(&ev, rows[i].key, "SLOCfgUnmarshalFailed", prefix);
        expect_section(cfg, rows[i].section, rows[i].good_section);
        slo_config_free(cfg);
    }
    slo_events_release(&ev);
}

/* Type mismatches fail the decode as Go's json.Unmarshal does; out-of-range values do not (the
 * controller validates nothing, 1.5), and unknown fields are ignored. */
static void test_decode_rules(void **state)
{
    struct slo_config *cfg = slo_config_new();
    struct slo_events ev = {0};
    (void)state;

    assert_false(update(
        cfg, data_of(SLO_KEY_THRESHOLD, "{\"clusterStrategy\":{\"enable\":\"yes\"}}", NULL), &ev));
    expect_event(&ev, SLO_KEY_THRESHOLD, "SLOCfgUnmarshalFailed",
                 "failed to unmarshal ThresholdCfg, err: ");
    assert_false(update(cfg,
                        data_of(SLO_KEY_THRESHOLD,
                                "{\"nodeStrategies\":[{\"nodeSelector\":{},"
                                "\"cpuSuppressThresholdPercent\":\"high\"}]}",
                                NULL),
                        &ev));
    expect_event(&ev, SLO_KEY_THRESHOLD, "SLOCfgUnmarshalFailed",
                 "failed to unmarshal ThresholdCfg, err: ");
    assert_false(
        update(cfg, data_of(SLO_KEY_THRESHOLD, "{\"nodeStrategies\":{\"a\":1}}", NULL), &ev));
    expect_event(&ev, SLO_KEY_THRESHOLD, "SLOCfgUnmarshalFailed",
                 "failed to unmarshal ThresholdCfg, err: ");

    /* Node entries: name is a string and nodeSelector a LabelSelector, for every key. */
    assert_false(update(
        cfg,
        data_of(SLO_KEY_THRESHOLD, "{\"nodeStrategies\":[{\"name\":5,\"nodeSelector\":{}}]}", NULL),
        &ev));
    expect_event(&ev, SLO_KEY_THRESHOLD, "SLOCfgUnmarshalFailed",
                 "failed to unmarshal ThresholdCfg, err: ");
    assert_false(update(
        cfg, data_of(SLO_KEY_SYSTEM, "{\"nodeStrategies\":[{\"nodeSelector\":\"pool=a\"}]}", NULL),
        &ev));
    expect_event(&ev, SLO_KEY_SYSTEM, "SLOCfgUnmarshalFailed",
                 "failed to unmarshal SystemCfg, err: ");
    assert_false(update(
        cfg,
        data_of(
            SLO_KEY_COLOCATION,
            "{\"nodeConfigs\":[{\"name\":[],\"nodeSelector\":{\"matchLabels\":{\"a\":\"b\"}}}]}",
            NULL),
        &ev));
    expect_event(&ev, SLO_KEY_COLOCATION, "ColocationCfgUnmarshalFailed",
                 "failed to unmarshal colocation config, err: ");
    assert_false(update(
        cfg,
        data_of(SLO_KEY_HOST_APP,
                "{\"nodeConfigs\":[{\"nodeSelector\":{\"matchLabels\":[]},\"applications\":[]}]}",
                NULL),
        &ev));
    expect_event(&ev, SLO_KEY_HOST_APP, "SLOCfgUnmarshalFailed",
                 "failed to unmarshal HostApplicationCfg, err: ");

    assert_true(update(cfg,
                       data_of(SLO_KEY_THRESHOLD,
                               "{\"clusterStrategy\":{\"cpuSuppressThresholdPercent\":150,"
                               "\"foo\":1},\"bar\":2}",
                               NULL),
                       &ev));
    expect_no_events(&ev);
    expect_section(cfg, "resourceUsedThresholdWithBE",
                   "{\"enable\":false,\"cpuSuppressThresholdPercent\":150,\"cpuSuppressPolicy\":"
                   "\"cpuset\",\"memoryEvictThresholdPercent\":70,\"cpuEvictPolicy\":"
                   "\"evictByRealLimit\"}");
    slo_events_release(&ev);
    slo_config_free(cfg);
}

/* ---- colocation-config (1.5) ---- */

static void test_colocation_updates(void **state)
{
    struct slo_config *cfg = slo_config_new();
    struct slo_events ev = {0};
    static const char prefix[] = "failed to unmarshal colocation config, err: ";
    (void)state;

    expect_colocation(cfg, NULL, NULL, COLOC_DEFAULT);

    /* Invalid JSON before any good value: the defaults stay. */
    assert_false(update(cfg, data_of(SLO_KEY_COLOCATION, "{\"enable\": tru", NULL), &ev));
    expect_event(&ev, SLO_KEY_COLOCATION, "ColocationCfgUnmarshalFailed", prefix);
    expect_colocation(cfg, NULL, NULL, COLOC_DEFAULT);

    assert_true(update(cfg, data_of(SLO_KEY_COLOCATION, "{\"enable\":true}", NULL), &ev));
    expect_no_events(&ev);
    expect_colocation(cfg, NULL, NULL,
                      COLOC("true", "60", "65", DURATIONS, "300", "0.1", "0", "0"));

    /* Invalid JSON and type errors keep the last good config. */
    assert_false(update(cfg, data_of(SLO_KEY_COLOCATION, "{\"enable\": tru", NULL), &ev));
    expect_event(&ev, SLO_KEY_COLOCATION, "ColocationCfgUnmarshalFailed", prefix);
    assert_false(update(cfg, data_of(SLO_KEY_COLOCATION, "{\"enable\":\"yes\"}", NULL), &ev));
    expect_event(&ev, SLO_KEY_COLOCATION, "ColocationCfgUnmarshalFailed", prefix);
    expect_colocation(cfg, NULL, NULL,
                      COLOC("true", "60", "65", DURATIONS, "300", "0.1", "0", "0"));

    /* An invalid cluster strategy keeps it too, and upstream records no Event for it. */
    assert_false(update(cfg, data_of(SLO_KEY_COLOCATION, "{\"degradeTimeMinutes\":0}", NULL), &ev));
    for (size_t i = 0; i < ev.n; i++)
        if (ev.v[i].reason)
            fail_msg("invalid colocation strategy must not record an Event, got %s",
                     ev.v[i].reason);
    expect_colocation(cfg, NULL, NULL,
                      COLOC("true", "60", "65", DURATIONS, "300", "0.1", "0", "0"));

    /* An empty string means the defaults, without an event (unlike the NodeSLO keys). */
    assert_true(update(cfg, data_of(SLO_KEY_COLOCATION, "", NULL), &ev));
    expect_no_events(&ev);
    expect_colocation(cfg, NULL, NULL, COLOC_DEFAULT);
    slo_events_release(&ev);
    slo_config_free(cfg);
}

/* The colocation cache state of 1.5: available and errorStatus. */
static void test_colocation_state(void **state)
{
    struct slo_config *cfg = slo_config_new();
    struct slo_events ev = {0};
    bool changed = true;
    (void)state;

    /* Nothing taken yet. */
    assert_false(slo_colocation_available(cfg));
    assert_false(slo_colocation_error(cfg));

    /* A colocation-config that fails to decode before any good one: still not available. */
    assert_false(update(cfg, data_of(SLO_KEY_COLOCATION, "{\"enable\": tru", NULL), &ev));
    assert_false(slo_colocation_available(cfg));
    assert_true(slo_colocation_error(cfg));
    /* An invalid cluster strategy before any good one: the same. */
    assert_false(update(cfg, data_of(SLO_KEY_COLOCATION, "{\"degradeTimeMinutes\":0}", NULL), &ev));
    assert_false(slo_colocation_available(cfg));
    assert_true(slo_colocation_error(cfg));

    /* A good value: available, no error. */
    assert_true(update(cfg, data_of(SLO_KEY_COLOCATION, "{\"enable\":true}", NULL), &ev));
    assert_true(slo_colocation_available(cfg));
    assert_false(slo_colocation_error(cfg));

    /* Undecodable: in error, the last good value kept, still available. */
    assert_false(update(cfg, data_of(SLO_KEY_COLOCATION, "[1]", NULL), &ev));
    expect_event(&ev, SLO_KEY_COLOCATION, "ColocationCfgUnmarshalFailed",
                 "failed to unmarshal colocation config, err: ");
    assert_true(slo_colocation_available(cfg));
    assert_true(slo_colocation_error(cfg));
    expect_colocation(cfg, NULL, NULL,
                      COLOC("true", "60", "65", DURATIONS, "300", "0.1", "0", "0"));

    /* The same good value again clears the error without a change. */
    assert_false(update(cfg, data_of(SLO_KEY_COLOCATION, "{\"enable\":true}", NULL), &ev));
    assert_false(slo_colocation_error(cfg));

    /* Invalid cluster strategy: in error, no Event. */
    assert_false(
        update(cfg, data_of(SLO_KEY_COLOCATION, "{\"resourceDiffThreshold\":0}", NULL), &ev));
    for (size_t i = 0; i < ev.n; i++)
        assert_null(ev.v[i].reason);
    assert_true(slo_colocation_error(cfg));

    /* Key missing: defaults, no error. */
    assert_true(update(cfg, data_of(SLO_KEY_THRESHOLD, "{}", NULL), &ev));
    assert_false(slo_colocation_error(cfg));
    expect_colocation(cfg, NULL, NULL, COLOC_DEFAULT);

    /* The ConfigMap absent: defaults everywhere, available, in error. */
    assert_true(update(cfg,
                       data_of(SLO_KEY_THRESHOLD, "{\"clusterStrategy\":{\"enable\":true}}",
                               SLO_KEY_COLOCATION, "{\"enable\":true}", NULL),
                       &ev));
    assert_int_equal(slo_config_absent(cfg, &changed), 0);
    assert_true(changed);
    assert_true(slo_colocation_available(cfg));
    assert_true(slo_colocation_error(cfg));
    expect_colocation(cfg, NULL, NULL, COLOC_DEFAULT);
    expect_section(cfg, "resourceUsedThresholdWithBE", DEF_THRESHOLD);
    assert_int_equal(slo_config_absent(cfg, &changed), 0);
    assert_false(changed);
    slo_events_release(&ev);
    slo_config_free(cfg);

    /* Absent at start-up: available at once, in error, nothing changed. */
    cfg = slo_config_new();
    assert_int_equal(slo_config_absent(cfg, &changed), 0);
    assert_false(changed);
    assert_true(slo_colocation_available(cfg));
    assert_true(slo_colocation_error(cfg));
    /* An empty colocation-config is the defaults, not an error. */
    assert_false(update(cfg, data_of(SLO_KEY_COLOCATION, "", NULL), &ev));
    assert_false(slo_colocation_error(cfg));
    slo_events_release(&ev);
    slo_config_free(cfg);
}

/* The seed-002 colocation-config with its anolis entry. */
static void test_colocation_template_entry(void **state)
{
    /* A change: the cluster part equals the defaults, but the anolis entry is new. */
    struct slo_config *cfg = changed_config(
        data_of(SLO_KEY_COLOCATION,
                "{\"enable\":false,\"metricAggregateDurationSeconds\":300,"
                "\"metricReportIntervalSeconds\":60,\"metricAggregatePolicy\":{\"durations\":"
                "[\"5m\",\"10m\",\"30m\"]},\"cpuReclaimThresholdPercent\":60,"
                "\"memoryReclaimThresholdPercent\":65,\"memoryCalculatePolicy\":\"usage\","
                "\"degradeTimeMinutes\":15,\"updateTimeThresholdSeconds\":300,"
                "\"resourceDiffThreshold\":0.1,\"nodeConfigs\":[{\"name\":\"anolis\","
                "\"nodeSelector\":{\"matchLabels\":{\"kubernetes.io/kernel\":\"anolis\"}},"
                "\"updateTimeThresholdSeconds\":360,\"resourceDiffThreshold\":0.2}]}",
                NULL));
    (void)state;

    expect_colocation(cfg, "{\"kubernetes.io/kernel\":\"anolis\"}", NULL,
                      COLOC("false", "60", "65", DURATIONS, "360", "0.2", "0", "0"));
    expect_colocation(cfg, NULL, NULL, COLOC_DEFAULT);
    slo_config_free(cfg);
}

/* Node selection, the annotation and the ratio labels (1.6). */
static void test_colocation_node(void **state)
{
    struct slo_config *cfg = changed_config(
        data_of(SLO_KEY_COLOCATION,
                "{\"enable\":true,\"cpuReclaimThresholdPercent\":60,\"nodeConfigs\":["
                "{\"name\":\"pool-a\",\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\"}},"
                "\"cpuReclaimThresholdPercent\":70,\"metricAggregatePolicy\":{\"durations\":"
                "[\"1m\"]}},"
                "{\"name\":\"pool-a-too\",\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\"}},"
                "\"cpuReclaimThresholdPercent\":75},"
                "{\"name\":\"bad\",\"nodeSelector\":{\"matchLabels\":{\"pool\":\"b\"}},"
                "\"cpuReclaimThresholdPercent\":80,\"degradeTimeMinutes\":0}]}",
                NULL));
    (void)state;

    /* First matching entry merged over the cluster strategy. */
    expect_colocation(cfg, "{\"pool\":\"a\"}", NULL,
                      COLOC("true", "70", "65", "[\"1m0s\"]", "300", "0.1", "0", "0"));
    /* An invalid entry is replaced by the cluster strategy. */
    expect_colocation(cfg, "{\"pool\":\"b\"}", NULL,
                      COLOC("true", "60", "65", DURATIONS, "300", "0.1", "0", "0"));
    /* Non-matching node: the cluster strategy. */
    expect_colocation(cfg, "{\"pool\":\"c\"}", NULL,
                      COLOC("true", "60", "65", DURATIONS, "300", "0.1", "0", "0"));
    expect_colocation(cfg, NULL, NULL,
                      COLOC("true", "60", "65", DURATIONS, "300", "0.1", "0", "0"));

    /* The annotation is merged over the selected strategy, unvalidated. */
    expect_colocation(cfg, "{\"pool\":\"a\"}",
                      "{\"node.koordinator.sh/colocation-strategy\":"
                      "\"{\\\"memoryReclaimThresholdPercent\\\":80,"
                      "\\\"cpuReclaimThresholdPercent\\\":-5}\"}",
                      COLOC("true", "-5", "80", "[\"1m0s\"]", "300", "0.1", "0", "0"));
    /* Unparsable annotations are ignored. */
    expect_colocation(cfg, "{\"pool\":\"a\"}",
                      "{\"node.koordinator.sh/colocation-strategy\":\"{bad\"}",
                      COLOC("true", "70", "65", "[\"1m0s\"]", "300", "0.1", "0", "0"));
    expect_colocation(
        cfg, "{\"pool\":\"a\"}",
        "{\"node.koordinator.sh/colocation-strategy\":\"{\\\"enable\\\":\\\"no\\\"}\"}",
        COLOC("true", "70", "65", "[\"1m0s\"]", "300", "0.1", "0", "0"));

    /* Ratio labels: percent = int(ratio * 100), truncated ("0.29" -> 28). */
    expect_colocation(cfg,
                      "{\"node.koordinator.sh/cpu-reclaim-ratio\":\"0.29\","
                      "\"node.koordinator.sh/memory-reclaim-ratio\":\"0.655\","
                      "\"node.koordinator.sh/mid-static-cpu-reserved-ratio\":\"0.1\","
                      "\"node.koordinator.sh/mid-static-memory-reserved-ratio\":\"0.07\"}",
                      NULL, COLOC("true", "28", "65", DURATIONS, "300", "0.1", "10", "7"));
    /* Labels come after the annotation and win over it; no upper bound. */
    expect_colocation(cfg,
                      "{\"pool\":\"a\",\"node.koordinator.sh/cpu-reclaim-ratio\":\"0.5\","
                      "\"node.koordinator.sh/memory-reclaim-ratio\":\"1.5\"}",
                      "{\"node.koordinator.sh/colocation-strategy\":"
                      "\"{\\\"cpuReclaimThresholdPercent\\\":90}\"}",
                      COLOC("true", "50", "150", "[\"1m0s\"]", "300", "0.1", "0", "0"));
    /* Negative or unparsable ratios are ignored. */
    expect_colocation(cfg,
                      "{\"node.koordinator.sh/cpu-reclaim-ratio\":\"-0.1\","
                      "\"node.koordinator.sh/memory-reclaim-ratio\":\"abc\","
                      "\"node.koordinator.sh/mid-static-cpu-reserved-ratio\":\"\"}",
                      NULL, COLOC("true", "60", "65", DURATIONS, "300", "0.1", "0", "0"));
    slo_config_free(cfg);
}

/* ---- fault injection ---- */

/* The seed-002 data plus one entry of every kind, so every parse and merge path allocates. */
static cJSON *full_data(void)
{
    return data_of(
        SLO_KEY_COLOCATION,
        "{\"enable\":true,\"metricAggregatePolicy\":{\"durations\":[\"5m\",\"10m\"]},"
        "\"nodeConfigs\":[{\"name\":\"anolis\",\"nodeSelector\":{\"matchLabels\":"
        "{\"kubernetes.io/kernel\":\"anolis\"}},\"updateTimeThresholdSeconds\":360}]}",
        SLO_KEY_THRESHOLD,
        "{\"clusterStrategy\":{\"enable\":true,\"memoryEvictLowerPercent\":65},"
        "\"nodeStrategies\":[{\"name\":\"anolis\",\"nodeSelector\":{\"matchLabels\":"
        "{\"kubernetes.io/kernel\":\"anolis\"}},\"cpuEvictBEUsageThresholdPercent\":80},"
        "{\"name\":\"expr\",\"nodeSelector\":{\"matchExpressions\":[{\"key\":\"zone\","
        "\"operator\":\"In\",\"values\":[\"a\",\"b\"]}]},\"enable\":false}]}",
        SLO_KEY_QOS,
        "{\"clusterStrategy\":{\"beClass\":{\"memoryQOS\":{\"wmarkRatio\":95},\"blkioQOS\":"
        "{\"blocks\":[{\"name\":\"/dev/sda\",\"ioCfg\":{\"readIOPS\":1}}]}}},"
        "\"nodeStrategies\":[{\"nodeSelector\":{\"matchLabels\":{\"a\":\"b\"}},"
        "\"beClass\":{\"memoryQOS\":{\"wmarkRatio\":90}}}]}",
        SLO_KEY_CPU_BURST, "{\"clusterStrategy\":{\"policy\":\"auto\"}}", SLO_KEY_SYSTEM,
        "{\"clusterStrategy\":{\"schedFeatures\":{\"A\":true}},\"nodeStrategies\":"
        "[{\"nodeSelector\":{\"matchLabels\":{\"a\":\"b\"}},\"minFreeKbytesFactor\":1}]}",
        SLO_KEY_HOST_APP,
        "{\"applications\":[{\"name\":\"nginx\"}],\"nodeConfigs\":[{\"nodeSelector\":"
        "{\"matchLabels\":{\"a\":\"b\"}},\"applications\":[{\"name\":\"x\"}]}]}",
        NULL);
}

/* What a config renders for a few nodes, to compare configs. */
static cJSON *fingerprint(const struct slo_config *cfg)
{
    static const char *const labels[] = {NULL, "{\"kubernetes.io/kernel\":\"anolis\"}",
                                         "{\"zone\":\"b\"}", "{\"a\":\"b\"}"};
    cJSON *all = cJSON_CreateArray();

    for (size_t i = 0; i < ARRAY_SIZE(labels); i++) {
        cJSON *node = mknode(labels[i], NULL), *spec = NULL, *col = NULL;
        assert_int_equal(slo_render_spec(cfg, node, NULL, &spec), 0);
        assert_int_equal(slo_node_colocation(cfg, node, &col), 0);
        cJSON_AddItemToArray(all, spec);
        cJSON_AddItemToArray(all, col);
        cJSON_Delete(node);
    }
    return all;
}

/* Every checked allocation of an update may fail: the update then returns -ENOMEM, leaks
 * nothing, and never reports success with a silently degraded config. */
static void test_fault_injection_update(void **state)
{
    cJSON *data = full_data(), *want;
    struct slo_config *ref = slo_config_new();
    long n;
    (void)state;

    assert_int_equal(slo_config_update(ref, data, NULL, NULL), 0);
    want = fingerprint(ref);
    for (n = 1;; n++) {
        struct slo_config *cfg = slo_config_new();
        struct slo_events ev = {0};
        int r, injected;

        alloc_fail_after(n);
        r = slo_config_update(cfg, data, &ev, NULL);
        injected = alloc_injected();
        alloc_fail_after(0);
        if (!injected) {
            cJSON *got = fingerprint(cfg);
            assert_int_equal(r, 0);
            expect_no_events(&ev);
            assert_true(cJSON_Compare(got, want, true));
            cJSON_Delete(got);
            slo_config_free(cfg);
            break;
        }
        if (r != -ENOMEM)
            fail_msg("allocation %ld failed but slo_config_update returned %d", n, r);
        slo_events_release(&ev);
        slo_config_free(cfg);
    }
    assert_true(n > 50);
    cJSON_Delete(want);
    cJSON_Delete(data);
    slo_config_free(ref);
}

/* The colocation annotation is parsed per call: an allocation failure there is -ENOMEM, not an
 * "unparsable annotation" that is silently ignored. */
static void test_fault_injection_colocation(void **state)
{
    cJSON *data = full_data(), *want = NULL;
    struct slo_config *cfg = slo_config_new();
    /* No ratio label after the annotation: nothing later may mask a failure in its parse. */
    cJSON *node = mknode("{\"kubernetes.io/kernel\":\"anolis\"}",
                         "{\"node.koordinator.sh/colocation-strategy\":"
                         "\"{\\\"memoryReclaimThresholdPercent\\\":80}\"}");
    long n;
    (void)state;

    assert_int_equal(slo_config_update(cfg, data, NULL, NULL), 0);
    assert_int_equal(slo_node_colocation(cfg, node, &want), 0);
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(want, "memoryReclaimThresholdPercent"), "80");
    for (n = 1;; n++) {
        cJSON *s = NULL;
        int r, injected;

        alloc_fail_after(n);
        r = slo_node_colocation(cfg, node, &s);
        injected = alloc_injected();
        alloc_fail_after(0);
        if (!injected) {
            assert_int_equal(r, 0);
            assert_true(cJSON_Compare(s, want, true));
            cJSON_Delete(s);
            break;
        }
        if (r != -ENOMEM)
            fail_msg("allocation %ld failed but slo_node_colocation returned %d", n, r);
        assert_null(s);
    }
    cJSON_Delete(want);
    cJSON_Delete(node);
    cJSON_Delete(data);
    slo_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_rules),
        cmocka_unit_test(test_changed),
        cmocka_unit_test(test_bad_json_keeps_previous),
        cmocka_unit_test(test_colocation_updates),
        cmocka_unit_test(test_colocation_state),
        cmocka_unit_test(test_colocation_template_entry),
        cmocka_unit_test(test_colocation_node),
        cmocka_unit_test(test_fault_injection_update),
        cmocka_unit_test(test_fault_injection_colocation),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
