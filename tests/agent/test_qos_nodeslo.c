/*
 * Tests for agent/qos/nodeslo: the agent-side defaults, field-by-field merging of a NodeSLO over
 * them, the None replacement of disabled classes, Go-like decoding errors that keep the
 * defaults, and the NodeSLO `koord slo render` writes for the shipped example config
 * (tests/agent/data/nodeslo-plain-node.json, from examples/slo-controller-config.yaml and
 * examples/nodes/node-plain.yaml).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/qos/nodeslo.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"
#include "testutil.h"

/* Parses a NodeSLO spec given as JSON text into *s; expects success. (Out parameter rather than
 * a return value: the tests compare padding bytes too.) */
static void slo_of_spec_at(const char *spec_json, struct qos_slo *s, int line)
{
    struct strbuf why = STRBUF_INIT;
    struct strbuf doc = STRBUF_INIT;
    cJSON *n;
    int r;

    strbuf_addf(&doc, "{\"spec\":%s}", spec_json);
    n = J(doc.buf);
    r = qos_slo_from_nodeslo(n, s, &why);
    cJSON_Delete(n);
    strbuf_release(&doc);
    if (r != 0) {
        print_error("line %d: spec %s: %d %s\n", line, spec_json, r, why.buf);
        strbuf_release(&why);
        fail();
    }
    strbuf_release(&why);
}
#define slo_of_spec(json, s) slo_of_spec_at((json), (s), __LINE__)

/* Expects the spec to fail with message want, and *ret to be the defaults. */
static void expect_bad_spec(const char *spec_json, const char *want)
{
    struct strbuf why = STRBUF_INIT, doc = STRBUF_INIT;
    struct qos_slo s, d;
    cJSON *n;

    strbuf_addf(&doc, "{\"spec\":%s}", spec_json);
    n = J(doc.buf);
    memset(&s, 0x5a, sizeof(s));
    assert_int_equal(qos_slo_from_nodeslo(n, &s, &why), -EINVAL);
    if (strcmp(why.buf, want))
        fail_msg("spec %s: why \"%s\", want \"%s\"", spec_json, why.buf, want);
    qos_slo_defaults(&d);
    assert_memory_equal(&s, &d, sizeof(s));
    cJSON_Delete(n);
    strbuf_release(&doc);
    strbuf_release(&why);
}

static void test_defaults(void **state)
{
    struct qos_slo s, t;
    const struct qos_class_config *c;

    (void)state;
    qos_slo_defaults(&s);
    assert_false(s.threshold.enable);
    assert_true(s.threshold.cpu_suppress_threshold_percent.set);
    assert_int_equal(s.threshold.cpu_suppress_threshold_percent.value, 65);
    assert_false(s.threshold.cpu_suppress_min_percent.set);
    assert_int_equal(s.threshold.cpu_suppress_policy, QOS_SUPPRESS_CPUSET);
    assert_int_equal(s.threshold.memory_evict_threshold_percent.value, 70);
    assert_false(s.threshold.memory_evict_lower_percent.set);
    assert_false(s.threshold.cpu_evict_be_usage_threshold_percent.set);
    assert_false(s.threshold.evict_enabled_priority_threshold.set);
    assert_int_equal(s.threshold.cpu_evict_policy, QOS_EVICT_BY_REAL_LIMIT);
    assert_int_equal(s.resource_qos.cpu_policy, QOS_CPU_POLICY_GROUP_IDENTITY);
    /* Disabled by default, so LSR/LS/BE carry the None values. */
    for (int i = QOS_CLASS_LSR; i <= QOS_CLASS_BE; i++) {
        c = &s.resource_qos.classes[i];
        assert_false(c->cpu.enable);
        assert_int_equal(c->cpu.group_identity, 0);
        assert_false(c->cpu.core_expeller);
        assert_int_equal(c->memory.wmark_ratio, 0);
        assert_int_equal(c->memory.wmark_scale_permill, 50);
        assert_int_equal(c->memory.wmark_min_adj, 0);
        assert_int_equal(c->resctrl.cat_range_start_percent, 0);
        assert_int_equal(c->resctrl.cat_range_end_percent, 100);
        assert_int_equal(c->resctrl.mba_percent, 100);
    }
    /* SYSTEM is never replaced: its defaults already are neutral. */
    c = &s.resource_qos.classes[QOS_CLASS_SYSTEM];
    assert_int_equal(c->memory.wmark_ratio, 0);
    assert_int_equal(c->memory.wmark_scale_permill, 50);
    assert_int_equal(c->cpu.group_identity, 0);
    assert_int_equal(s.cpu_burst.policy, QOS_BURST_NONE);
    assert_int_equal(s.cpu_burst.cpu_burst_percent, 1000);
    assert_int_equal(s.cpu_burst.cfs_quota_burst_percent, 300);
    assert_int_equal(s.cpu_burst.cfs_quota_burst_period_seconds, -1);
    assert_int_equal(s.cpu_burst.share_pool_threshold_percent, 50);
    assert_false(s.system.min_free_kbytes_factor.set);
    assert_int_equal(s.system.nsched_features, 0);

    /* NULL NodeSLO, no spec, empty spec, null spec: all the defaults. */
    assert_int_equal(qos_slo_from_nodeslo(NULL, &t, NULL), 0);
    assert_memory_equal(&s, &t, sizeof(s));
    slo_of_spec("{}", &t);
    assert_memory_equal(&s, &t, sizeof(s));
    slo_of_spec("null", &t);
    assert_memory_equal(&s, &t, sizeof(s));
}

static void test_class_defaults(void **state)
{
    struct qos_class_config c;

    (void)state;
    /* DefaultResourceQOSStrategy (api-types.md 6.3.6). */
    qos_class_defaults(QOS_CLASS_LSR, &c);
    assert_int_equal(c.cpu.group_identity, 2);
    assert_true(c.cpu.core_expeller);
    assert_int_equal(c.memory.wmark_ratio, 95);
    assert_int_equal(c.memory.wmark_scale_permill, 20);
    assert_int_equal(c.memory.wmark_min_adj, -25);
    assert_int_equal(c.resctrl.cat_range_end_percent, 100);
    qos_class_defaults(QOS_CLASS_LS, &c);
    assert_int_equal(c.cpu.group_identity, 2);
    assert_int_equal(c.memory.wmark_min_adj, -25);
    qos_class_defaults(QOS_CLASS_BE, &c);
    assert_int_equal(c.cpu.group_identity, -1);
    assert_false(c.cpu.core_expeller);
    assert_int_equal(c.memory.wmark_min_adj, 50);
    assert_int_equal(c.resctrl.cat_range_start_percent, 0);
    assert_int_equal(c.resctrl.cat_range_end_percent, 30);
    assert_int_equal(c.resctrl.mba_percent, 100);
    qos_class_defaults(QOS_CLASS_SYSTEM, &c);
    assert_int_equal(c.cpu.group_identity, 0);
    assert_int_equal(c.memory.wmark_ratio, 0);
    assert_int_equal(c.memory.wmark_scale_permill, 50);
    assert_int_equal(c.memory.wmark_min_adj, 0);
    assert_false(c.memory.enable);
}

static void test_merge_fields(void **state)
{
    struct qos_slo s;
    const struct qos_class_config *c;

    (void)state;
    /* The seed-002 example: enable, 60 % suppress, cpuset, 60 % memory. */
    slo_of_spec("{\"resourceUsedThresholdWithBE\":{\"enable\":true,"
                "\"cpuSuppressThresholdPercent\":60,\"cpuSuppressPolicy\":\"cpuset\","
                "\"memoryEvictThresholdPercent\":60}}",
                &s);
    assert_true(s.threshold.enable);
    assert_int_equal(s.threshold.cpu_suppress_threshold_percent.value, 60);
    assert_int_equal(s.threshold.memory_evict_threshold_percent.value, 60);
    assert_int_equal(s.threshold.cpu_suppress_policy, QOS_SUPPRESS_CPUSET);

    /* Field by field: absent members keep the default; null keeps it too; names fold case. */
    slo_of_spec("{\"resourceUsedThresholdWithBE\":{\"CPUSuppressPolicy\":\"cfsQuota\","
                "\"cpuSuppressThresholdPercent\":null,\"cpuSuppressMinPercent\":20,"
                "\"cpuEvictPolicy\":\"evictByAllocatable\",\"unknownField\":[1],"
                "\"evictEnabledPriorityThreshold\":5999,"
                "\"allocatableEvictPriorityThreshold\":-2147483648}}",
                &s);
    assert_int_equal(s.threshold.cpu_suppress_policy, QOS_SUPPRESS_CFS_QUOTA);
    assert_int_equal(s.threshold.cpu_suppress_threshold_percent.value, 65);
    assert_true(s.threshold.cpu_suppress_min_percent.set);
    assert_int_equal(s.threshold.cpu_suppress_min_percent.value, 20);
    assert_int_equal(s.threshold.cpu_evict_policy, QOS_EVICT_BY_ALLOCATABLE);
    assert_int_equal(s.threshold.evict_enabled_priority_threshold.value, 5999);
    assert_int_equal(s.threshold.allocatable_evict_priority_threshold.value, INT32_MIN);
    assert_int_equal(s.threshold.memory_evict_threshold_percent.value, 70);

    /* Unknown policy strings act as the default policy; "" keeps the current one. */
    slo_of_spec("{\"resourceUsedThresholdWithBE\":{\"cpuSuppressPolicy\":\"bogus\"},"
                "\"cpuBurstStrategy\":{\"policy\":\"\"}}",
                &s);
    assert_int_equal(s.threshold.cpu_suppress_policy, QOS_SUPPRESS_CPUSET);
    assert_int_equal(s.cpu_burst.policy, QOS_BURST_NONE);
    slo_of_spec("{\"cpuBurstStrategy\":{\"policy\":\"auto\",\"cpuBurstPercent\":500}}", &s);
    assert_int_equal(s.cpu_burst.policy, QOS_BURST_AUTO);
    assert_int_equal(s.cpu_burst.cpu_burst_percent, 500);
    assert_int_equal(s.cpu_burst.cfs_quota_burst_percent, 300);
    slo_of_spec("{\"cpuBurstStrategy\":{\"policy\":\"cpuBurstOnly\"}}", &s);
    assert_int_equal(s.cpu_burst.policy, QOS_BURST_CPU_BURST_ONLY);
    slo_of_spec("{\"cpuBurstStrategy\":{\"policy\":\"cfsQuotaBurstOnly\"}}", &s);
    assert_int_equal(s.cpu_burst.policy, QOS_BURST_CFS_QUOTA_BURST_ONLY);
    slo_of_spec("{\"cpuBurstStrategy\":{\"policy\":\"surprise\"}}", &s);
    assert_int_equal(s.cpu_burst.policy, QOS_BURST_NONE);

    /* An enabled class keeps its merged values; a disabled one gets None whatever it says. */
    slo_of_spec("{\"resourceQOSStrategy\":{\"policies\":{\"cpuPolicy\":\"coreSched\"},"
                "\"beClass\":{\"cpuQOS\":{\"enable\":true},\"memoryQOS\":{\"enable\":true,"
                "\"minLimitPercent\":10,\"wmarkRatio\":90},\"resctrlQOS\":{\"enable\":true,"
                "\"catRangeEndPercent\":50}},"
                "\"lsClass\":{\"cpuQOS\":{\"enable\":false,\"groupIdentity\":1},"
                "\"memoryQOS\":{\"wmarkRatio\":80}},"
                "\"systemClass\":{\"memoryQOS\":{\"wmarkRatio\":70}}}}",
                &s);
    assert_int_equal(s.resource_qos.cpu_policy, QOS_CPU_POLICY_CORE_SCHED);
    c = &s.resource_qos.classes[QOS_CLASS_BE];
    assert_true(c->cpu.enable);
    assert_int_equal(c->cpu.group_identity, -1);
    assert_true(c->memory.enable);
    assert_int_equal(c->memory.min_limit_percent, 10);
    assert_int_equal(c->memory.wmark_ratio, 90);
    assert_int_equal(c->memory.wmark_scale_permill, 20);
    assert_int_equal(c->memory.wmark_min_adj, 50);
    assert_int_equal(c->resctrl.cat_range_start_percent, 0);
    assert_int_equal(c->resctrl.cat_range_end_percent, 50);
    c = &s.resource_qos.classes[QOS_CLASS_LS];
    assert_int_equal(c->cpu.group_identity, 0);
    assert_int_equal(c->memory.wmark_ratio, 0);
    assert_int_equal(c->memory.wmark_scale_permill, 50);
    c = &s.resource_qos.classes[QOS_CLASS_SYSTEM];
    assert_int_equal(c->memory.wmark_ratio, 70);
    slo_of_spec("{\"resourceQOSStrategy\":{\"policies\":{\"cpuPolicy\":\"other\"}}}", &s);
    assert_int_equal(s.resource_qos.cpu_policy, QOS_CPU_POLICY_OTHER);

    /* System strategy: set fields only; sched features sorted, last duplicate wins. */
    slo_of_spec("{\"systemStrategy\":{\"minFreeKbytesFactor\":100,\"memcgReapBackGround\":0,"
                "\"schedFeatures\":{\"ID_LOOSE_EXPEL\":false,\"ID_ABSOLUTE_EXPEL\":true},"
                "\"totalNetworkBandwidth\":\"10G\"}}",
                &s);
    assert_true(s.system.min_free_kbytes_factor.set);
    assert_int_equal(s.system.min_free_kbytes_factor.value, 100);
    assert_true(s.system.memcg_reap_background.set);
    assert_int_equal(s.system.memcg_reap_background.value, 0);
    assert_false(s.system.watermark_scale_factor.set);
    assert_int_equal(s.system.nsched_features, 2);
    assert_string_equal(s.system.sched_features[0].name, "ID_ABSOLUTE_EXPEL");
    assert_true(s.system.sched_features[0].enabled);
    assert_string_equal(s.system.sched_features[1].name, "ID_LOOSE_EXPEL");
    assert_false(s.system.sched_features[1].enabled);
}

static void test_bad_input(void **state)
{
    struct strbuf why = STRBUF_INIT;
    struct qos_slo s, d;
    cJSON *n;

    (void)state;
    expect_bad_spec("[]", "spec: want an object, got an array");
    expect_bad_spec("{\"resourceUsedThresholdWithBE\":{\"cpuSuppressThresholdPercent\":\"65\"}}",
                    "spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent: want an "
                    "integer, got a string");
    expect_bad_spec("{\"resourceUsedThresholdWithBE\":{\"enable\":1}}",
                    "spec.resourceUsedThresholdWithBE.enable: want a boolean, got a number");
    expect_bad_spec("{\"resourceUsedThresholdWithBE\":{\"cpuSuppressPolicy\":1}}",
                    "spec.resourceUsedThresholdWithBE.cpuSuppressPolicy: want a string, got a "
                    "number");
    expect_bad_spec("{\"resourceUsedThresholdWithBE\":{\"memoryEvictThresholdPercent\":70.5}}",
                    "spec.resourceUsedThresholdWithBE.memoryEvictThresholdPercent: 70.5 is not an "
                    "integer in [0, 100]");
    /* Values the strategies multiply into bytes and quotas are bounded, so no product of them
     * can overflow: percents in [0, 100], burst percents up to 100000. */
    expect_bad_spec("{\"resourceQOSStrategy\":{\"lsClass\":{\"memoryQOS\":"
                    "{\"minLimitPercent\":9000000000000000}}}}",
                    "spec.resourceQOSStrategy.lsClass.memoryQOS.minLimitPercent: 9000000000000000 "
                    "is not an integer in [0, 100]");
    expect_bad_spec("{\"resourceUsedThresholdWithBE\":{\"cpuSuppressThresholdPercent\":-1}}",
                    "spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent: -1 is not an "
                    "integer in [0, 100]");
    expect_bad_spec("{\"cpuBurstStrategy\":{\"cpuBurstPercent\":100001}}",
                    "spec.cpuBurstStrategy.cpuBurstPercent: 100001 is not an integer in [0, "
                    "100000]");
    expect_bad_spec("{\"systemStrategy\":{\"minFreeKbytesFactor\":10001}}",
                    "spec.systemStrategy.minFreeKbytesFactor: 10001 is not an integer in [0, "
                    "10000]");
    /* int32 fields overflow as Go's decoder does. */
    expect_bad_spec(
        "{\"resourceUsedThresholdWithBE\":{\"evictEnabledPriorityThreshold\":2147483648}}",
        "spec.resourceUsedThresholdWithBE.evictEnabledPriorityThreshold: 2147483648 is not an "
        "integer in [-2147483648, 2147483647]");
    expect_bad_spec("{\"resourceQOSStrategy\":{\"lsrClass\":{\"memoryQOS\":{\"priority\":true}}}}",
                    "spec.resourceQOSStrategy.lsrClass.memoryQOS.priority: want an integer, got a "
                    "boolean");
    expect_bad_spec("{\"resourceQOSStrategy\":{\"beClass\":[]}}",
                    "spec.resourceQOSStrategy.beClass: want an object, got an array");
    expect_bad_spec("{\"systemStrategy\":{\"schedFeatures\":{\"A\":1}}}",
                    "spec.systemStrategy.schedFeatures.A: want a boolean, got a number");
    expect_bad_spec("{\"systemStrategy\":{\"schedFeatures\":[]}}",
                    "spec.systemStrategy.schedFeatures: want an object, got an array");
    expect_bad_spec("{\"systemStrategy\":{\"schedFeatures\":{\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
                    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAA\":true}}}",
                    "spec.systemStrategy.schedFeatures: feature name longer than 63 bytes");

    /* A bad field later in the document also discards the good ones before it. */
    expect_bad_spec("{\"cpuBurstStrategy\":{\"policy\":\"auto\"},\"systemStrategy\":7}",
                    "spec.systemStrategy: want an object, got a number");

    /* Too many sched features. */
    {
        struct strbuf doc = STRBUF_INIT;

        strbuf_addstr(&doc, "{\"systemStrategy\":{\"schedFeatures\":{");
        for (int i = 0; i <= QOS_SCHED_FEATURES_MAX; i++)
            strbuf_addf(&doc, "%s\"F%d\":true", i ? "," : "", i);
        strbuf_addstr(&doc, "}}}");
        expect_bad_spec(doc.buf, "spec.systemStrategy.schedFeatures: more than 32 features");
        strbuf_release(&doc);
    }

    /* Not an object at all. */
    n = J("\"x\"");
    assert_int_equal(qos_slo_from_nodeslo(n, &s, &why), -EINVAL);
    assert_string_equal(why.buf, "NodeSLO: want an object, got a string");
    qos_slo_defaults(&d);
    assert_memory_equal(&s, &d, sizeof(s));
    cJSON_Delete(n);
    strbuf_release(&why);
}

static void test_rendered_example(void **state)
{
    struct strbuf sb = STRBUF_INIT, why = STRBUF_INIT;
    cJSON *doc = NULL;
    struct qos_slo s, d;

    (void)state;
    assert_int_equal(
        codec_read_file(KOORD_SOURCE_DIR "/tests/agent/data/nodeslo-plain-node.json", 1 << 20, &sb),
        0);
    assert_int_equal(json_parse(sb.buf, sb.len, NULL, &doc, NULL), 0);
    assert_int_equal(qos_slo_from_nodeslo(doc, &s, &why), 0);
    assert_string_equal(why.buf, "");
    /* The template's cluster strategy, all defaults except the explicit thresholds. */
    assert_false(s.threshold.enable);
    assert_int_equal(s.threshold.cpu_suppress_threshold_percent.value, 65);
    assert_int_equal(s.threshold.memory_evict_threshold_percent.value, 70);
    assert_true(s.threshold.memory_evict_lower_percent.set);
    assert_int_equal(s.threshold.memory_evict_lower_percent.value, 65);
    assert_int_equal(s.threshold.cpu_evict_be_satisfaction_upper_percent.value, 90);
    assert_int_equal(s.threshold.cpu_evict_be_satisfaction_lower_percent.value, 60);
    assert_int_equal(s.threshold.cpu_evict_be_usage_threshold_percent.value, 90);
    assert_false(s.threshold.cpu_evict_time_window_seconds.set);
    assert_int_equal(s.system.min_free_kbytes_factor.value, 100);
    assert_int_equal(s.system.watermark_scale_factor.value, 150);
    assert_true(s.system.memcg_reap_background.set);
    assert_int_equal(s.system.memcg_reap_background.value, 0);
    /* Every class is disabled in the template, so resourceQOSStrategy ends as the defaults. */
    qos_slo_defaults(&d);
    assert_memory_equal(&s.resource_qos, &d.resource_qos, sizeof(d.resource_qos));
    assert_memory_equal(&s.cpu_burst, &d.cpu_burst, sizeof(d.cpu_burst));
    cJSON_Delete(doc);
    strbuf_release(&sb);
    strbuf_release(&why);
}

static void test_annotation_merges(void **state)
{
    struct strbuf why = STRBUF_INIT;
    struct qos_cpu_burst b;
    struct qos_memory_qos m;
    struct qos_cpu_qos c;
    cJSON *o;

    (void)state;
    memset(&b, 0, sizeof(b));
    b.policy = QOS_BURST_AUTO;
    b.share_pool_threshold_percent = 50;
    o = J("{\"policy\":\"cpuBurstOnly\",\"cpuBurstPercent\":200,"
          "\"sharePoolThresholdPercent\":10}");
    assert_int_equal(qos_cpu_burst_merge(o, &b, &why), 0);
    assert_int_equal(b.policy, QOS_BURST_CPU_BURST_ONLY);
    assert_int_equal(b.cpu_burst_percent, 200);
    /* Not part of the pod annotation's type. */
    assert_int_equal(b.share_pool_threshold_percent, 50);
    cJSON_Delete(o);
    o = J("{\"cfsQuotaBurstPercent\":\"x\"}");
    assert_int_equal(qos_cpu_burst_merge(o, &b, &why), -EINVAL);
    assert_string_equal(why.buf, "cpuBurst.cfsQuotaBurstPercent: want an integer, got a string");
    cJSON_Delete(o);

    memset(&m, 0, sizeof(m));
    o = J("{\"enable\":true,\"policy\":\"auto\",\"minLimitPercent\":40}");
    assert_int_equal(qos_memory_qos_merge(o, &m, NULL), 0);
    assert_false(m.enable);
    assert_int_equal(m.min_limit_percent, 40);
    cJSON_Delete(o);

    memset(&c, 0, sizeof(c));
    o = J("{\"enable\":true,\"groupIdentity\":-1}");
    assert_int_equal(qos_cpu_qos_merge(o, &c, NULL), 0);
    assert_true(c.enable);
    assert_int_equal(c.group_identity, -1);
    cJSON_Delete(o);
    assert_int_equal(qos_cpu_qos_merge(NULL, &c, NULL), 0);
    strbuf_release(&why);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),         cmocka_unit_test(test_class_defaults),
        cmocka_unit_test(test_merge_fields),     cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_rendered_example), cmocka_unit_test(test_annotation_merges),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
