/*
 * Tests for agent/qos/resctrl (reference 3.6): ways from cbm_mask, start/end ways and masks
 * (the reference's 0x3ff 10-80 % -> 0xfe and 0x7ff 0-30 % -> 0xf), range checks, MB values for
 * Intel and AMD, schemata text over a set of cache ids, and pod groups by class.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/qos/resctrl.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "codec/codec.h"

static void test_cbm(void **state)
{
    uint64_t v;
    unsigned w;

    (void)state;
    assert_int_equal(qos_resctrl_parse_cbm("7ff", &v), 0);
    assert_int_equal(v, 0x7ff);
    assert_int_equal(qos_resctrl_parse_cbm("FFFFF", &v), 0);
    assert_int_equal(v, 0xfffff);
    assert_int_equal(qos_resctrl_parse_cbm("ffffffffffffffff", &v), 0);
    assert_int_equal(qos_resctrl_parse_cbm("1ffffffffffffffff", &v), -ERANGE);
    assert_int_equal(qos_resctrl_parse_cbm("", &v), -EINVAL);
    assert_int_equal(qos_resctrl_parse_cbm("0x7ff", &v), -EINVAL);
    assert_int_equal(qos_resctrl_parse_cbm("7ff\n", &v), -EINVAL);

    assert_int_equal(qos_resctrl_ways(0x7ff, &w), 0);
    assert_int_equal(w, 11);
    assert_int_equal(qos_resctrl_ways(0x3ff, &w), 0);
    assert_int_equal(w, 10);
    assert_int_equal(qos_resctrl_ways(0xfffff, &w), 0);
    assert_int_equal(w, 20);
    assert_int_equal(qos_resctrl_ways(1, &w), 0);
    assert_int_equal(w, 1);
    assert_int_equal(qos_resctrl_ways(0, &w), 0);
    assert_int_equal(w, 0);
    /* Not contiguous from bit 0. */
    assert_int_equal(qos_resctrl_ways(0x7fe, &w), -EINVAL);
    assert_int_equal(qos_resctrl_ways(0x5, &w), -EINVAL);
    assert_int_equal(qos_resctrl_ways(UINT64_MAX, &w), -EINVAL);
}

static void test_l3_mask(void **state)
{
    static const struct {
        uint64_t cbm;
        int64_t start, end;
        int r;
        uint64_t mask;
    } cases[] = {
        /* The reference's examples. */
        {0x3ff, 10, 80, 0, 0xfe},
        {0x7ff, 0, 30, 0, 0xf},
        /* And upstream's third: 11 ways, 10-50 %: ways 2..6. */
        {0x7ff, 10, 50, 0, 0x3c},
        {0x7ff, 0, 100, 0, 0x7ff},
        {0x3ff, 0, 100, 0, 0x3ff},
        /* Boundaries of ceil: 10 ways x 10 % is exactly way 1; 11 % rounds up to 2. */
        {0x3ff, 10, 100, 0, 0x3fe},
        {0x3ff, 11, 100, 0, 0x3fc},
        {0x3ff, 0, 1, 0, 0x1},
        /* BE default 0-30 % on 20 ways: 6 ways. */
        {0xfffff, 0, 30, 0, 0x3f},
        {0x7fffffffffffffff, 0, 100, 0, 0x7fffffffffffffff},
        {0x3ff, 0, 0, -EINVAL, 0},
        {0x3ff, 50, 50, -EINVAL, 0},
        {0x3ff, 60, 50, -EINVAL, 0},
        {0x3ff, -1, 50, -EINVAL, 0},
        {0x3ff, 0, 101, -EINVAL, 0},
        {0x3fe, 0, 100, -EINVAL, 0},
        /* Equal ways: an empty mask (upstream accepts it; the kernel will refuse it). */
        {0x3ff, 1, 9, 0, 0},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        uint64_t m = 0xdead;
        int r = qos_resctrl_l3_mask(cases[i].cbm, cases[i].start, cases[i].end, &m);

        if (r != cases[i].r || (r == 0 && m != cases[i].mask))
            fail_msg("case %zu: r %d mask %llx", i, r, (unsigned long long)m);
    }
}

static void test_mb(void **state)
{
    static const struct {
        int64_t pct;
        bool amd;
        int r;
        int64_t v;
    } cases[] = {
        {100, false, 0, 100},     {55, false, 0, 60},    {50, false, 0, 50},
        {1, false, 0, 10},        {91, false, 0, 100},   {0, false, -EINVAL, 0},
        {101, false, -EINVAL, 0}, {100, true, 0, 2048},  {50, true, 0, 80},
        {55, true, 0, 88},        {33, true, 0, 52},     {99, true, 0, 158},
        {1, true, 0, 1},          {0, true, -EINVAL, 0},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        int64_t v = -1;
        int r = qos_resctrl_mb(cases[i].pct, cases[i].amd, &v);

        if (r != cases[i].r || (r == 0 && v != cases[i].v))
            fail_msg("case %zu: r %d v %lld", i, r, (long long)v);
    }
}

static void test_schemata(void **state)
{
    struct qos_resctrl_qos be = {.enable = true,
                                 .cat_range_start_percent = 0,
                                 .cat_range_end_percent = 30,
                                 .mba_percent = 100};
    struct qos_resctrl_qos ls = {
        .cat_range_start_percent = 10, .cat_range_end_percent = 80, .mba_percent = 55};
    const int ids[] = {1, 0};
    struct strbuf sb = STRBUF_INIT;

    (void)state;
    assert_int_equal(qos_resctrl_schemata(&be, 0x7ff, ids, 2, true, false, &sb), 0);
    assert_string_equal(sb.buf, "L3:0=f;1=f;\nMB:0=100;1=100;\n");
    strbuf_reset(&sb);
    assert_int_equal(qos_resctrl_schemata(&be, 0x7ff, ids, 2, true, true, &sb), 0);
    assert_string_equal(sb.buf, "L3:0=f;1=f;\nMB:0=2048;1=2048;\n");
    strbuf_reset(&sb);
    assert_int_equal(qos_resctrl_schemata(&ls, 0x3ff, ids, 1, true, false, &sb), 0);
    assert_string_equal(sb.buf, "L3:1=fe;\nMB:1=60;\n");
    strbuf_reset(&sb);
    assert_int_equal(qos_resctrl_schemata(&ls, 0x3ff, ids, 2, false, false, &sb), 0);
    assert_string_equal(sb.buf, "L3:0=fe;1=fe;\n");
    strbuf_reset(&sb);
    assert_int_equal(qos_resctrl_schemata(&ls, 0x3ff, ids, 0, true, false, &sb), 0);
    assert_string_equal(sb.buf, "");
    /* Errors leave out untouched. */
    ls.cat_range_end_percent = 5;
    assert_int_equal(qos_resctrl_schemata(&ls, 0x3ff, ids, 2, true, false, &sb), -EINVAL);
    ls.cat_range_end_percent = 80;
    ls.mba_percent = 0;
    assert_int_equal(qos_resctrl_schemata(&ls, 0x3ff, ids, 2, true, false, &sb), -EINVAL);
    assert_int_equal(qos_resctrl_schemata(&ls, 0x3fe, ids, 2, false, false, &sb), -EINVAL);
    assert_string_equal(sb.buf, "");
    /* The agent's defaults: disabled classes are neutral, full ways and bandwidth. */
    {
        struct qos_slo s;

        qos_slo_defaults(&s);
        assert_int_equal(qos_resctrl_schemata(&s.resource_qos.classes[QOS_CLASS_BE].resctrl, 0x7ff,
                                              ids, 2, true, false, &sb),
                         0);
        assert_string_equal(sb.buf, "L3:0=7ff;1=7ff;\nMB:0=100;1=100;\n");
    }
    strbuf_release(&sb);
}

/* The lines alone, ids sorted; and the ids of the root schemata as the kernel shows it. */
static void test_lines_and_ids(void **state)
{
    const int ids_in[] = {1, 0};
    int ids[QOS_RESCTRL_CACHE_IDS_MAX + 1];
    struct strbuf sb = STRBUF_INIT;
    struct strbuf many = STRBUF_INIT;

    (void)state;
    qos_resctrl_l3_line(0x1fc, ids_in, 2, &sb);
    qos_resctrl_mb_line(60, ids_in, 2, &sb);
    assert_string_equal(sb.buf, "L3:0=1fc;1=1fc;\nMB:0=60;1=60;\n");
    strbuf_reset(&sb);
    qos_resctrl_l3_line(0x1fc, ids_in, 0, &sb);
    assert_string_equal(sb.buf, "");

    /* Names right-aligned (L3CODE beside L3), masks zero-padded, a trailing ';'. */
    assert_int_equal(qos_resctrl_cache_ids("    L3:0=7ff;1=7ff\n    MB:0=100;1=100\n", ids, 4), 2);
    assert_int_equal(ids[0], 0);
    assert_int_equal(ids[1], 1);
    assert_int_equal(qos_resctrl_cache_ids("MB:0=100\nL3:2=00ff ; 3=0ff0;\n", ids, 4), 2);
    assert_int_equal(ids[0], 2);
    assert_int_equal(ids[1], 3);
    assert_int_equal(qos_resctrl_cache_ids("L3:0=7ff", ids, 4), 1);
    /* No L3 line (CDP: L3CODE/L3DATA only), a malformed one, too many ids. */
    assert_int_equal(qos_resctrl_cache_ids("L3CODE:0=7ff\nL3DATA:0=7ff\n", ids, 4), -ENOENT);
    assert_int_equal(qos_resctrl_cache_ids("", ids, 4), -ENOENT);
    assert_int_equal(qos_resctrl_cache_ids("L3:\n", ids, 4), -EINVAL);
    assert_int_equal(qos_resctrl_cache_ids("L3:0=7ff,1=7ff\n", ids, 4), -EINVAL);
    assert_int_equal(qos_resctrl_cache_ids("L3:x=7ff\n", ids, 4), -EINVAL);
    assert_int_equal(qos_resctrl_cache_ids("L3:0=xyz\n", ids, 4), -EINVAL);
    assert_int_equal(qos_resctrl_cache_ids("L3:0=7ff;1=7ff;2=7ff\n", ids, 2), -E2BIG);
    strbuf_addstr(&many, "L3:");
    for (int i = 0; i <= QOS_RESCTRL_CACHE_IDS_MAX; i++)
        strbuf_addf(&many, "%d=7ff;", i);
    assert_int_equal(qos_resctrl_cache_ids(many.buf, ids, ARRAY_SIZE(ids)), -E2BIG);
    strbuf_release(&many);
    strbuf_release(&sb);
}

/* Values compare as numbers in the kernel's padding: hex masks, decimal MB. */
static void test_schemata_holds(void **state)
{
    static const struct {
        const char *current, *want;
        bool holds;
    } cases[] = {
        {"L3:0=1fc;1=1fc\nMB:0= 60;1= 60\n", "L3:0=1fc;1=1fc;\nMB:0=60;1=60;\n", true},
        {"L3:0=00f;1=00f\nMB:0=100;1=100\n", "L3:0=f;1=f;\nMB:0=100;1=100;\n", true},
        {"    L3:0=7FF;1=7ff\n    MB:0=100;1=100\nL2:0=ff\n", "L3:0=7ff;1=7ff;\n", true},
        /* Ids and resources want does not name are ignored; an empty want holds. */
        {"L3:0=f;1=7ff\n", "L3:0=f;\n", true},
        {"L3:0=f\n", "", true},
        /* One value differs; MB is decimal ("10" is not 0x10). */
        {"L3:0=1fc;1=1fe\nMB:0=60;1=60\n", "L3:0=1fc;1=1fc;\nMB:0=60;1=60;\n", false},
        {"L3:0=f\nMB:0=16\n", "L3:0=f;\nMB:0=10;\n", false},
        /* What want names and current lacks; a malformed line on either side. */
        {"L3:0=f\n", "L3:0=f;1=f;\n", false},
        {"L3:0=f\n", "L3:0=f;\nMB:0=100;\n", false},
        {"L3:0=f;garbage\n", "L3:0=f;\n", false},
        {"L3:0=f\n", "L3:0=g;\n", false},
        {"L3:0=f\n", "nonsense\n", false},
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
        if (qos_resctrl_schemata_holds(cases[i].current, cases[i].want) != cases[i].holds)
            fail_msg("case %zu: %s", i, cases[i].holds ? "not held" : "held");
}

static void test_groups(void **state)
{
    struct qos_slo s;
    struct qos_resource_qos *q;
    struct qos_pod p = {.active = true};

    (void)state;
    assert_string_equal(qos_resctrl_group(API_QOS_LSE), "LSR");
    assert_string_equal(qos_resctrl_group(API_QOS_LSR), "LSR");
    assert_string_equal(qos_resctrl_group(API_QOS_LS), "LS");
    assert_string_equal(qos_resctrl_group(API_QOS_BE), "BE");
    assert_null(qos_resctrl_group(API_QOS_SYSTEM));
    assert_null(qos_resctrl_group(API_QOS_NONE));

    qos_slo_defaults(&s);
    q = &s.resource_qos;
    /* Nothing is enabled by default. */
    p.qos = API_QOS_BE;
    assert_null(qos_resctrl_pod_group(q, &p));
    q->classes[QOS_CLASS_BE].resctrl.enable = true;
    assert_string_equal(qos_resctrl_pod_group(q, &p), "BE");
    p.has_resctrl_annotation = true;
    assert_null(qos_resctrl_pod_group(q, &p));
    p.has_resctrl_annotation = false;
    p.active = false;
    assert_null(qos_resctrl_pod_group(q, &p));
    p.active = true;
    p.qos = API_QOS_LSE;
    assert_null(qos_resctrl_pod_group(q, &p));
    q->classes[QOS_CLASS_LSR].resctrl.enable = true;
    assert_string_equal(qos_resctrl_pod_group(q, &p), "LSR");
    p.qos = API_QOS_LS;
    assert_null(qos_resctrl_pod_group(q, &p));
    p.qos = API_QOS_SYSTEM;
    assert_null(qos_resctrl_pod_group(q, &p));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cbm),
        cmocka_unit_test(test_l3_mask),
        cmocka_unit_test(test_mb),
        cmocka_unit_test(test_schemata),
        cmocka_unit_test(test_lines_and_ids),
        cmocka_unit_test(test_schemata_holds),
        cmocka_unit_test(test_groups),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
