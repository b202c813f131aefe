/*
 * Tests for agent/qos/sysconfig (reference 3.7): min_free_kbytes and its bounds, the ranges of
 * the other settings, only fields set, the Anolis-only page-cache switch, the rendered example
 * NodeSLO, and sched_features writes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/qos/sysconfig.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

#define GI ((int64_t)1 << 30)

static void set(struct qos_opt *o, int64_t v)
{
    o->set = true;
    o->value = v;
}

static bool has(const struct qos_sysconfig *s, enum qos_sysctl k)
{
    return s->set & (1u << k);
}

static void test_paths(void **state)
{
    (void)state;
    assert_string_equal(qos_sysctl_path(QOS_SYSCTL_MIN_FREE_KBYTES),
                        "/proc/sys/vm/min_free_kbytes");
    assert_string_equal(qos_sysctl_path(QOS_SYSCTL_WATERMARK_SCALE_FACTOR),
                        "/proc/sys/vm/watermark_scale_factor");
    assert_string_equal(qos_sysctl_path(QOS_SYSCTL_MEMCG_REAP_BACKGROUND),
                        "/sys/kernel/mm/memcg_reaper/reap_background");
    assert_string_equal(qos_sysctl_path(QOS_SYSCTL_PAGE_CACHE_LIMIT_ENABLED),
                        "/sys/kernel/mm/pagecache_limit/enabled");
    assert_string_equal(qos_sysctl_path(QOS_SYSCTL_COUNT), "");
}

static void test_min_free_kbytes(void **state)
{
    static const struct {
        int64_t capacity, factor;
        bool written;
        int64_t value;
    } cases[] = {
        /* 128Gi: 134217728 KiB x 100 / 10000. */
        {128 * GI, 100, true, 1342177},
        /* The lower bound 10240 KiB is inclusive: 1000 MiB at factor 100; one KiB less is out. */
        {INT64_C(1024000) * 1024, 100, true, 10240},
        {INT64_C(1023999) * 1024, 100, false, 0},
        /* Sub-KiB bytes are dropped before the product. */
        {INT64_C(1024000) * 1024 + 1023, 100, true, 10240},
        /* The upper bound 10485760 KiB is inclusive: 1000 GiB at factor 100; factor 101 is out. */
        {1000 * GI, 100, true, 10485760},
        {1000 * GI, 101, false, 0},
        {128 * GI, 0, false, 0},
        {128 * GI, -5, false, 0},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct qos_system cfg;
        struct qos_sysconfig s;

        memset(&cfg, 0, sizeof(cfg));
        set(&cfg.min_free_kbytes_factor, cases[i].factor);
        qos_sysconfig_values(&cfg, cases[i].capacity, false, &s);
        if (has(&s, QOS_SYSCTL_MIN_FREE_KBYTES) != cases[i].written ||
            (cases[i].written && s.v[QOS_SYSCTL_MIN_FREE_KBYTES] != cases[i].value))
            fail_msg("case %zu: %lld", i, (long long)s.v[QOS_SYSCTL_MIN_FREE_KBYTES]);
        assert_int_equal(s.set & ~(1u << QOS_SYSCTL_MIN_FREE_KBYTES), 0);
    }
}

static void test_ranges(void **state)
{
    static const struct {
        enum qos_sysctl key;
        int64_t value;
        bool anolis, written;
    } cases[] = {
        {QOS_SYSCTL_WATERMARK_SCALE_FACTOR, 150, false, true},
        {QOS_SYSCTL_WATERMARK_SCALE_FACTOR, 10, false, true},
        {QOS_SYSCTL_WATERMARK_SCALE_FACTOR, 9, false, false},
        {QOS_SYSCTL_WATERMARK_SCALE_FACTOR, 400, false, true},
        {QOS_SYSCTL_WATERMARK_SCALE_FACTOR, 401, false, false},
        {QOS_SYSCTL_MEMCG_REAP_BACKGROUND, 0, false, true},
        {QOS_SYSCTL_MEMCG_REAP_BACKGROUND, 1, false, true},
        {QOS_SYSCTL_MEMCG_REAP_BACKGROUND, 2, false, false},
        {QOS_SYSCTL_MEMCG_REAP_BACKGROUND, -1, false, false},
        {QOS_SYSCTL_SCHED_GROUP_IDENTITY_ENABLED, 1, false, true},
        {QOS_SYSCTL_SCHED_GROUP_IDENTITY_ENABLED, 2, false, false},
        {QOS_SYSCTL_SCHED_IDLE_SAVER_WMARK, 5000000, false, true},
        {QOS_SYSCTL_SCHED_IDLE_SAVER_WMARK, 0, false, true},
        {QOS_SYSCTL_SCHED_IDLE_SAVER_WMARK, -1, false, false},
        {QOS_SYSCTL_PAGE_CACHE_LIMIT_ENABLED, 1, true, true},
        {QOS_SYSCTL_PAGE_CACHE_LIMIT_ENABLED, 1, false, false},
        {QOS_SYSCTL_PAGE_CACHE_LIMIT_ENABLED, 2, true, false},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct qos_system cfg;
        struct qos_opt *fields[QOS_SYSCTL_COUNT] = {
            [QOS_SYSCTL_WATERMARK_SCALE_FACTOR] = &cfg.watermark_scale_factor,
            [QOS_SYSCTL_MEMCG_REAP_BACKGROUND] = &cfg.memcg_reap_background,
            [QOS_SYSCTL_SCHED_GROUP_IDENTITY_ENABLED] = &cfg.sched_group_identity_enabled,
            [QOS_SYSCTL_SCHED_IDLE_SAVER_WMARK] = &cfg.sched_idle_saver_wmark,
            [QOS_SYSCTL_PAGE_CACHE_LIMIT_ENABLED] = &cfg.page_cache_limit_enabled,
        };
        struct qos_sysconfig s;

        memset(&cfg, 0, sizeof(cfg));
        set(fields[cases[i].key], cases[i].value);
        qos_sysconfig_values(&cfg, 128 * GI, cases[i].anolis, &s);
        if (has(&s, cases[i].key) != cases[i].written ||
            (cases[i].written && s.v[cases[i].key] != cases[i].value))
            fail_msg("case %zu", i);
        /* Only that one field. */
        assert_int_equal(s.set & ~(1u << cases[i].key), 0);
    }
}

static void test_capacity_and_example(void **state)
{
    struct strbuf sb = STRBUF_INIT;
    struct qos_system cfg;
    struct qos_sysconfig s;
    struct qos_slo slo;
    cJSON *doc = NULL;

    (void)state;
    memset(&cfg, 0, sizeof(cfg));
    set(&cfg.watermark_scale_factor, 150);
    qos_sysconfig_values(&cfg, 0, false, &s);
    assert_int_equal(s.set, 0);
    qos_sysconfig_values(&cfg, 1000, false, &s);
    assert_true(has(&s, QOS_SYSCTL_WATERMARK_SCALE_FACTOR));
    /* With a factor, a capacity under 1 KiB stops everything (upstream returns early). */
    set(&cfg.min_free_kbytes_factor, 100);
    qos_sysconfig_values(&cfg, 1000, false, &s);
    assert_int_equal(s.set, 0);
    /* Nothing set, nothing written. */
    memset(&cfg, 0, sizeof(cfg));
    qos_sysconfig_values(&cfg, 128 * GI, true, &s);
    assert_int_equal(s.set, 0);

    /* The template's cluster system strategy on the 128Gi plain node. */
    assert_int_equal(
        codec_read_file(KOORD_SOURCE_DIR "/tests/agent/data/nodeslo-plain-node.json", 1 << 20, &sb),
        0);
    assert_int_equal(json_parse(sb.buf, sb.len, NULL, &doc, NULL), 0);
    assert_int_equal(qos_slo_from_nodeslo(doc, &slo, NULL), 0);
    qos_sysconfig_values(&slo.system, 128 * GI, false, &s);
    assert_int_equal(s.set, 1u << QOS_SYSCTL_MIN_FREE_KBYTES |
                                1u << QOS_SYSCTL_WATERMARK_SCALE_FACTOR |
                                1u << QOS_SYSCTL_MEMCG_REAP_BACKGROUND);
    assert_int_equal(s.v[QOS_SYSCTL_MIN_FREE_KBYTES], 1342177);
    assert_int_equal(s.v[QOS_SYSCTL_WATERMARK_SCALE_FACTOR], 150);
    assert_int_equal(s.v[QOS_SYSCTL_MEMCG_REAP_BACKGROUND], 0);
    cJSON_Delete(doc);
    strbuf_release(&sb);
}

static void feature(struct qos_system *cfg, size_t i, const char *name, bool on)
{
    (void)snprintf(cfg->sched_features[i].name, sizeof(cfg->sched_features[i].name), "%s", name);
    cfg->sched_features[i].enabled = on;
}

static void test_sched_features(void **state)
{
    struct qos_system cfg;
    struct strbuf out = STRBUF_INIT;
    static const char *const current =
        "GENTLE_FAIR_SLEEPERS START_DEBIT NO_ID_ABSOLUTE_EXPEL ID_LOOSE_EXPEL NO_HRTICK\n";

    (void)state;
    memset(&cfg, 0, sizeof(cfg));
    assert_int_equal(qos_sysconfig_sched_features(&cfg, current, &out), 0);
    cfg.nsched_features = 5;
    feature(&cfg, 0, "GENTLE_FAIR_SLEEPERS", true);
    feature(&cfg, 1, "HRTICK", false);
    feature(&cfg, 2, "ID_ABSOLUTE_EXPEL", true);
    feature(&cfg, 3, "ID_LOOSE_EXPEL", false);
    feature(&cfg, 4, "UNKNOWN", true);
    /* Unchanged ones (GENTLE_FAIR_SLEEPERS on, HRTICK off) and unknown ones are not written. */
    assert_int_equal(qos_sysconfig_sched_features(&cfg, current, &out), 2);
    assert_string_equal(out.buf, "ID_ABSOLUTE_EXPEL\nNO_ID_LOOSE_EXPEL\n");
    /* A name that is a prefix of another is not confused with it. */
    strbuf_reset(&out);
    cfg.nsched_features = 1;
    feature(&cfg, 0, "ID_LOOSE", true);
    assert_int_equal(qos_sysconfig_sched_features(&cfg, current, &out), 0);
    assert_int_equal(qos_sysconfig_sched_features(&cfg, "", &out), 0);
    strbuf_release(&out);

    /* The state of one feature: listed on, listed off, not listed (prefixes not confused). */
    assert_int_equal(qos_sysconfig_sched_feature_state(current, "GENTLE_FAIR_SLEEPERS"), 1);
    assert_int_equal(qos_sysconfig_sched_feature_state(current, "ID_ABSOLUTE_EXPEL"), 0);
    assert_int_equal(qos_sysconfig_sched_feature_state(current, "HRTICK"), 0);
    assert_int_equal(qos_sysconfig_sched_feature_state(current, "ID_LOOSE"), -1);
    assert_int_equal(qos_sysconfig_sched_feature_state(current, "START"), -1);
    assert_int_equal(qos_sysconfig_sched_feature_state("", "HRTICK"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paths),          cmocka_unit_test(test_min_free_kbytes),
        cmocka_unit_test(test_ranges),         cmocka_unit_test(test_capacity_and_example),
        cmocka_unit_test(test_sched_features),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
