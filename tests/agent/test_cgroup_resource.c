/*
 * Tests for agent/cgroup/resource.c: the file of every resource on v1 and v2 (reference 1.4),
 * the shares/weight formulas, the conversions of cg_res_parse() (v2 usage x 1000, "max" and v1
 * unlimited -> -1), every validator at its edges (accepted) and one past them (-ERANGE), and CPU
 * list parsing and canonical formatting.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/cgroup/resource.h"
#include "base/base.h"
#include "cgtest.h"

#define D "kubepods/burstable/podx"

static void test_info_table(void **state)
{
    (void)state;
    for (int r = 0; r < CG_RES_COUNT; r++) {
        const struct cg_res_info *i = cg_res_info((enum cg_res)r);

        assert_non_null(i->name);
        assert_non_null(i->v1_subsys);
        assert_non_null(i->v1_file);
        assert_non_null(i->v2_file);
        if (i->kind == CG_KIND_INT && (i->writable_v1 || i->writable_v2))
            assert_true(i->min <= i->max);
        if (i->kind == CG_KIND_STAT)
            assert_false(i->writable_v1 || i->writable_v2);
    }
}

static void test_paths(void **state)
{
    static const struct {
        enum cg_res r;
        const char *v1, *v2, *v2_write;
    } cases[] = {
        {CG_CPU_USAGE, "/r/cpuacct/" D "/cpuacct.usage", "/r/" D "/cpu.stat", NULL},
        {CG_CPU_STAT, "/r/cpu/" D "/cpu.stat", "/r/" D "/cpu.stat", NULL},
        {CG_CPU_CFS_QUOTA, "/r/cpu/" D "/cpu.cfs_quota_us", "/r/" D "/cpu.max", NULL},
        {CG_CPU_CFS_PERIOD, "/r/cpu/" D "/cpu.cfs_period_us", "/r/" D "/cpu.max", NULL},
        {CG_CPU_SHARES, "/r/cpu/" D "/cpu.shares", "/r/" D "/cpu.weight", NULL},
        {CG_CPU_BURST, "/r/cpu/" D "/cpu.cfs_burst_us", "/r/" D "/cpu.max.burst", NULL},
        {CG_CPU_BVT_WARP_NS, "/r/cpu/" D "/cpu.bvt_warp_ns", "/r/" D "/cpu.bvt_warp_ns", NULL},
        {CG_CPU_IDLE, "/r/cpu/" D "/cpu.idle", "/r/" D "/cpu.idle", NULL},
        {CG_CPUSET_CPUS, "/r/cpuset/" D "/cpuset.cpus", "/r/" D "/cpuset.cpus.effective",
         "/r/" D "/cpuset.cpus"},
        {CG_MEMORY_LIMIT, "/r/memory/" D "/memory.limit_in_bytes", "/r/" D "/memory.max", NULL},
        {CG_MEMORY_USAGE, "/r/memory/" D "/memory.usage_in_bytes", "/r/" D "/memory.current", NULL},
        {CG_MEMORY_STAT, "/r/memory/" D "/memory.stat", "/r/" D "/memory.stat", NULL},
        {CG_MEMORY_MIN, "/r/memory/" D "/memory.min", "/r/" D "/memory.min", NULL},
        {CG_MEMORY_LOW, "/r/memory/" D "/memory.low", "/r/" D "/memory.low", NULL},
        {CG_MEMORY_HIGH, "/r/memory/" D "/memory.high", "/r/" D "/memory.high", NULL},
        {CG_MEMORY_WMARK_RATIO, "/r/memory/" D "/memory.wmark_ratio", "/r/" D "/memory.wmark_ratio",
         NULL},
        {CG_MEMORY_WMARK_SCALE_FACTOR, "/r/memory/" D "/memory.wmark_scale_factor",
         "/r/" D "/memory.wmark_scale_factor", NULL},
        {CG_MEMORY_WMARK_MIN_ADJ, "/r/memory/" D "/memory.wmark_min_adj",
         "/r/" D "/memory.wmark_min_adj", NULL},
        {CG_MEMORY_PRIORITY, "/r/memory/" D "/memory.priority", "/r/" D "/memory.priority", NULL},
        {CG_MEMORY_USE_PRIORITY_OOM, "/r/memory/" D "/memory.use_priority_oom",
         "/r/" D "/memory.use_priority_oom", NULL},
        {CG_MEMORY_OOM_GROUP, "/r/memory/" D "/memory.oom.group", "/r/" D "/memory.oom.group",
         NULL},
        {CG_MEMORY_PAGECACHE_ENABLE, "/r/memory/" D "/memory.pagecache_limit.enable",
         "/r/" D "/memory.pagecache_limit.enable", NULL},
        {CG_MEMORY_PAGECACHE_SIZE, "/r/memory/" D "/memory.pagecache_limit.size",
         "/r/" D "/memory.pagecache_limit.size", NULL},
        {CG_MEMORY_PAGECACHE_SYNC, "/r/memory/" D "/memory.pagecache_limit.sync",
         "/r/" D "/memory.pagecache_limit.sync", NULL},
    };
    struct cg_layout l1 = {.roots = {.cgroup_root = "/r"}, .version = CG_V1};
    struct cg_layout l2 = {.roots = {.cgroup_root = "/r"}, .version = CG_V2};
    char buf[CG_PATH_MAX];

    (void)state;
    assert_int_equal(ARRAY_SIZE(cases), CG_RES_COUNT);
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        const char *w2 = cases[i].v2_write ? cases[i].v2_write : cases[i].v2;

        assert_int_equal(cg_res_path(&l1, cases[i].r, D, buf, sizeof(buf)),
                         (int)strlen(cases[i].v1));
        assert_string_equal(buf, cases[i].v1);
        assert_true(cg_res_write_path(&l1, cases[i].r, D, buf, sizeof(buf)) > 0);
        assert_string_equal(buf, cases[i].v1);
        assert_true(cg_res_path(&l2, cases[i].r, D, buf, sizeof(buf)) > 0);
        assert_string_equal(buf, cases[i].v2);
        assert_true(cg_res_write_path(&l2, cases[i].r, D, buf, sizeof(buf)) > 0);
        assert_string_equal(buf, w2);
    }
    assert_null(cg_res_file(CG_VERSION_UNKNOWN, CG_CPU_SHARES, false));
    assert_string_equal(cg_res_file(CG_V2, CG_CPUSET_CPUS, false), "cpuset.cpus.effective");
    assert_string_equal(cg_res_file(CG_V2, CG_CPUSET_CPUS, true), "cpuset.cpus");
    assert_int_equal(cg_res_path(&l1, CG_CPU_SHARES, "../x", buf, sizeof(buf)), -EINVAL);
    assert_int_equal(cg_res_path(&l1, CG_CPU_SHARES, D, buf, 20), -ENAMETOOLONG);
    /* The directory fits, the file does not. */
    assert_int_equal(cg_res_path(&l1, CG_CPU_SHARES, "", buf, 10), -ENAMETOOLONG);
    assert_string_equal(buf, "");
}

static void test_shares_weight(void **state)
{
    (void)state;
    /* weight = 1 + (shares - 2) * 9999 / 262142 */
    assert_int_equal(cg_shares_to_weight(2), 1);
    assert_int_equal(cg_shares_to_weight(262144), 10000);
    assert_int_equal(cg_shares_to_weight(1024), 39);      /* 1 + 10218978 / 262142 = 1 + 38 */
    assert_int_equal(cg_shares_to_weight(102), 4);        /* 1 + 999900 / 262142 = 1 + 3 */
    assert_int_equal(cg_shares_to_weight(1), 1);          /* clamped */
    assert_int_equal(cg_shares_to_weight(300000), 10000); /* clamped */
    /* shares = (weight - 1) * 262142 / 9999 + 2 */
    assert_int_equal(cg_weight_to_shares(1), 2);
    assert_int_equal(cg_weight_to_shares(10000), 262144);
    assert_int_equal(cg_weight_to_shares(39), 998);   /* 9961396 / 9999 = 996 */
    assert_int_equal(cg_weight_to_shares(100), 2597); /* 25952058 / 9999 = 2595 */
    assert_int_equal(cg_weight_to_shares(0), 2);
    assert_int_equal(cg_weight_to_shares(20000), 262144);
}

static void expect_parse(enum cg_version v, enum cg_res r, const char *text, int64_t want)
{
    int64_t got = 12345;

    if (cg_res_parse(v, r, text, &got) != 0 || got != want)
        fail_msg("%s %s of \"%s\": got %" PRId64 ", want %" PRId64, cg_version_name(v),
                 cg_res_info(r)->name, text, got, want);
}

static void test_res_parse(void **state)
{
    int64_t x = 7;

    (void)state;
    expect_parse(CG_V1, CG_CPU_USAGE, "123456789\n", 123456789);
    expect_parse(CG_V2, CG_CPU_USAGE, CGT_V2_CPU_STAT, INT64_C(8345678000));
    expect_parse(CG_V2, CG_CPU_USAGE, "usage_usec 9223372036854775\n",
                 INT64_C(9223372036854775000));
    assert_int_equal(cg_res_parse(CG_V2, CG_CPU_USAGE, "usage_usec 9223372036854776\n", &x),
                     -ERANGE);
    assert_int_equal(cg_res_parse(CG_V2, CG_CPU_USAGE, "user_usec 1\n", &x), -EBADMSG);
    assert_int_equal(cg_res_parse(CG_V2, CG_CPU_USAGE, "usage_usec -1\n", &x), -EBADMSG);

    expect_parse(CG_V1, CG_CPU_CFS_QUOTA, "-1\n", CG_UNLIMITED);
    expect_parse(CG_V1, CG_CPU_CFS_QUOTA, "50000\n", 50000);
    expect_parse(CG_V1, CG_CPU_CFS_PERIOD, "100000\n", 100000);
    expect_parse(CG_V2, CG_CPU_CFS_QUOTA, "max 100000\n", CG_UNLIMITED);
    expect_parse(CG_V2, CG_CPU_CFS_QUOTA, "50000 100000\n", 50000);
    expect_parse(CG_V2, CG_CPU_CFS_PERIOD, "max 100000\n", 100000);
    expect_parse(CG_V2, CG_CPU_CFS_PERIOD, "50000 20000\n", 20000);
    assert_int_equal(cg_res_parse(CG_V2, CG_CPU_CFS_QUOTA, "50000\n", &x), -EBADMSG);

    expect_parse(CG_V1, CG_CPU_SHARES, "1024\n", 1024);
    expect_parse(CG_V2, CG_CPU_SHARES, "39\n", 998);
    expect_parse(CG_V2, CG_CPU_SHARES, "100\n", 2597);
    expect_parse(CG_V1, CG_CPU_BURST, "0\n", 0);
    expect_parse(CG_V2, CG_CPU_BURST, "2000\n", 2000);
    expect_parse(CG_V1, CG_CPU_BVT_WARP_NS, "-1\n", -1);
    expect_parse(CG_V2, CG_CPU_IDLE, "1\n", 1);

    /* v1 says unlimited with the page-aligned LONG_MAX; anything from 0x7FFFFFFFFFFFF000. */
    expect_parse(CG_V1, CG_MEMORY_LIMIT, "9223372036854771712\n", CG_UNLIMITED);
    expect_parse(CG_V1, CG_MEMORY_LIMIT, "9223372036854775807\n", CG_UNLIMITED);
    expect_parse(CG_V1, CG_MEMORY_LIMIT, "9223372036854771711\n", INT64_C(9223372036854771711));
    expect_parse(CG_V1, CG_MEMORY_LIMIT, "1073741824\n", 1073741824);
    expect_parse(CG_V2, CG_MEMORY_LIMIT, "max\n", CG_UNLIMITED);
    expect_parse(CG_V2, CG_MEMORY_LIMIT, "536870912\n", 536870912);
    expect_parse(CG_V2, CG_MEMORY_HIGH, "max\n", CG_UNLIMITED);
    expect_parse(CG_V2, CG_MEMORY_MIN, "0\n", 0);
    expect_parse(CG_V2, CG_MEMORY_LOW, "max\n", CG_UNLIMITED);
    expect_parse(CG_V1, CG_MEMORY_USAGE, "381456384\n", 381456384);
    expect_parse(CG_V2, CG_MEMORY_USAGE, "381456384\n", 381456384);
    expect_parse(CG_V1, CG_MEMORY_WMARK_MIN_ADJ, "-25\n", -25);
    expect_parse(CG_V2, CG_MEMORY_PRIORITY, "12\n", 12);
    expect_parse(CG_V1, CG_MEMORY_OOM_GROUP, "  1 \n", 1);

    /* Only unlimited-capable resources read "max". */
    assert_int_equal(cg_res_parse(CG_V1, CG_CPU_SHARES, "max\n", &x), -EBADMSG);
    assert_int_equal(cg_res_parse(CG_V1, CG_CPU_SHARES, "", &x), -EBADMSG);
    assert_int_equal(cg_res_parse(CG_V1, CG_CPU_SHARES, "12 34\n", &x), -EBADMSG);
    assert_int_equal(cg_res_parse(CG_V1, CG_CPU_SHARES, "0x10", &x), -EBADMSG);
    assert_int_equal(cg_res_parse(CG_V1, CG_CPU_SHARES, "99999999999999999999", &x), -ERANGE);
    assert_int_equal(cg_res_parse(CG_V1, CG_CPU_STAT, CGT_V1_CPU_STAT, &x), -EINVAL);
    assert_int_equal(cg_res_parse(CG_V1, CG_MEMORY_STAT, CGT_V1_MEMORY_STAT, &x), -EINVAL);
    assert_int_equal(cg_res_parse(CG_V1, CG_CPUSET_CPUS, "0-1", &x), -EINVAL);
    assert_int_equal(cg_res_parse(CG_VERSION_UNKNOWN, CG_CPU_SHARES, "2", &x), -EINVAL);
    assert_int_equal(x, 7);
}

static void expect_format(enum cg_version v, enum cg_res r, const char *value, const char *want)
{
    char buf[64];
    int n = cg_res_format(v, r, value, buf, sizeof(buf));

    if (n < 0 || strcmp(buf, want) != 0 || n != (int)strlen(want))
        fail_msg("%s %s of \"%s\": got %d \"%s\", want \"%s\"", cg_version_name(v),
                 cg_res_info(r)->name, value, n, buf, want);
}

static void expect_format_err(enum cg_version v, enum cg_res r, const char *value, int want)
{
    char buf[64];
    int n = cg_res_format(v, r, value, buf, sizeof(buf));

    if (n != want)
        fail_msg("%s %s of \"%s\": got %d \"%s\", want %d", cg_version_name(v),
                 cg_res_info(r)->name, value, n, buf, want);
    assert_string_equal(buf, "");
}

static void dec(char *buf, int64_t v)
{
    (void)snprintf(buf, 32, "%" PRId64, v);
}

/* Every validator of reference 1.4 (and the kernel bounds): edges accepted, one past -ERANGE. */
static void test_validators(void **state)
{
    static const struct {
        enum cg_res r;
        int64_t lo, hi;
    } ranges[] = {
        {CG_CPU_SHARES, 2, 262144},
        {CG_CPU_BURST, 0, 100000000},
        {CG_CPU_BVT_WARP_NS, -1, 2},
        {CG_CPU_IDLE, 0, 1},
        {CG_CPU_CFS_QUOTA, 1000, (INT64_C(1) << 44) - 1},
        {CG_MEMORY_WMARK_RATIO, 0, 100},
        {CG_MEMORY_WMARK_SCALE_FACTOR, 1, 1000},
        {CG_MEMORY_WMARK_MIN_ADJ, -25, 50},
        {CG_MEMORY_PRIORITY, 0, 12},
        {CG_MEMORY_USE_PRIORITY_OOM, 0, 1},
        {CG_MEMORY_OOM_GROUP, 0, 1},
        {CG_MEMORY_LIMIT, 0, CG_MEMORY_UNLIMITED_MIN - 1},
        {CG_MEMORY_MIN, 0, CG_MEMORY_UNLIMITED_MIN - 1},
        {CG_MEMORY_LOW, 0, CG_MEMORY_UNLIMITED_MIN - 1},
        {CG_MEMORY_HIGH, 0, CG_MEMORY_UNLIMITED_MIN - 1},
        {CG_MEMORY_PAGECACHE_ENABLE, 0, 1},
        {CG_MEMORY_PAGECACHE_SIZE, 0, CG_MEMORY_UNLIMITED_MIN - 1},
        {CG_MEMORY_PAGECACHE_SYNC, 0, 1},
    };
    static const enum cg_version versions[] = {CG_V1, CG_V2};
    char lo[32], hi[32], below[32], above[32];

    (void)state;
    for (size_t vi = 0; vi < ARRAY_SIZE(versions); vi++) {
        enum cg_version v = versions[vi];

        for (size_t i = 0; i < ARRAY_SIZE(ranges); i++) {
            enum cg_res r = ranges[i].r;
            bool shares2 = v == CG_V2 && r == CG_CPU_SHARES;

            dec(lo, ranges[i].lo);
            dec(hi, ranges[i].hi);
            dec(below, ranges[i].lo - 1);
            dec(above, ranges[i].hi + 1);
            /* v2 writes shares as a weight: the edges map onto the weight's edges. */
            expect_format(v, r, lo, shares2 ? "1" : lo);
            expect_format(v, r, hi, shares2 ? "10000" : hi);
            expect_format_err(v, r, above, -ERANGE);
            /* Below 0 is unlimited for memory: tested below. */
            if (!cg_res_info(r)->unlimited_ok || ranges[i].lo - 1 != CG_UNLIMITED)
                expect_format_err(v, r, below, -ERANGE);
        }
        /* Quota: -1 and max are unlimited; 0 and -2 are not values. */
        expect_format(v, CG_CPU_CFS_QUOTA, "-1", v == CG_V1 ? "-1" : "max");
        expect_format(v, CG_CPU_CFS_QUOTA, "max", v == CG_V1 ? "-1" : "max");
        expect_format_err(v, CG_CPU_CFS_QUOTA, "0", -ERANGE);
        expect_format_err(v, CG_CPU_CFS_QUOTA, "-2", -ERANGE);
        /* Memory: -1 and max are unlimited, -2 is nothing. */
        expect_format(v, CG_MEMORY_LIMIT, "-1", v == CG_V1 ? "-1" : "max");
        /* memory.min, low and high say "max" on v1 too: Anolis' v1 files refuse "-1". */
        expect_format(v, CG_MEMORY_HIGH, "max\n", "max");
        expect_format(v, CG_MEMORY_HIGH, "-1", "max");
        expect_format(v, CG_MEMORY_MIN, "-1", "max");
        expect_format(v, CG_MEMORY_LOW, "max", "max");
        expect_format_err(v, CG_MEMORY_LIMIT, "-2", -ERANGE);
        /* Not unlimited-capable: max is malformed, -1 out of range. */
        expect_format_err(v, CG_CPU_SHARES, "max", -EINVAL);
        expect_format_err(v, CG_CPU_SHARES, "-1", -ERANGE);
        /* Malformed. */
        expect_format_err(v, CG_CPU_SHARES, "", -EINVAL);
        expect_format_err(v, CG_CPU_SHARES, "12a", -EINVAL);
        expect_format_err(v, CG_CPU_SHARES, "0x10", -EINVAL);
        expect_format_err(v, CG_CPU_SHARES, "1 2", -EINVAL);
        expect_format_err(v, CG_CPU_SHARES, NULL, -EINVAL);
        expect_format_err(v, CG_CPU_SHARES, "99999999999999999999", -ERANGE);
        expect_format(v, CG_CPU_SHARES, " 1024\n", v == CG_V1 ? "1024" : "39");
        /* Read-only resources. */
        expect_format_err(v, CG_CPU_USAGE, "1", -EOPNOTSUPP);
        expect_format_err(v, CG_CPU_STAT, "1", -EOPNOTSUPP);
        expect_format_err(v, CG_MEMORY_USAGE, "1", -EOPNOTSUPP);
        expect_format_err(v, CG_MEMORY_STAT, "1", -EOPNOTSUPP);
    }
    /* The period: [1 ms, 1 s] on v1, read-only on v2 (it shares cpu.max with the quota). */
    expect_format(CG_V1, CG_CPU_CFS_PERIOD, "1000", "1000");
    expect_format(CG_V1, CG_CPU_CFS_PERIOD, "1000000", "1000000");
    expect_format_err(CG_V1, CG_CPU_CFS_PERIOD, "999", -ERANGE);
    expect_format_err(CG_V1, CG_CPU_CFS_PERIOD, "1000001", -ERANGE);
    expect_format_err(CG_V2, CG_CPU_CFS_PERIOD, "100000", -EOPNOTSUPP);
    expect_format_err(CG_VERSION_UNKNOWN, CG_CPU_SHARES, "2", -EINVAL);
    /* Shares between the edges, as weights. */
    expect_format(CG_V2, CG_CPU_SHARES, "1024", "39");
    expect_format(CG_V2, CG_CPU_SHARES, "102", "4");
    {
        char small[3];

        assert_int_equal(cg_res_format(CG_V1, CG_CPU_SHARES, "1024", small, sizeof(small)),
                         -ENAMETOOLONG);
        assert_int_equal(cg_res_format(CG_V2, CG_CPU_SHARES, "1024", small, sizeof(small)), 2);
        assert_string_equal(small, "39");
    }

    /* The file-level validator: the v2 weight range [1, 10000]. */
    assert_int_equal(cg_res_check_raw(CG_V2, CG_CPU_SHARES, 1), 0);
    assert_int_equal(cg_res_check_raw(CG_V2, CG_CPU_SHARES, 10000), 0);
    assert_int_equal(cg_res_check_raw(CG_V2, CG_CPU_SHARES, 0), -ERANGE);
    assert_int_equal(cg_res_check_raw(CG_V2, CG_CPU_SHARES, 10001), -ERANGE);
    assert_int_equal(cg_res_check_raw(CG_V1, CG_CPU_SHARES, 2), 0);
    assert_int_equal(cg_res_check_raw(CG_V1, CG_CPU_SHARES, 1), -ERANGE);
    assert_int_equal(cg_res_check_raw(CG_V1, CG_CPU_SHARES, 262145), -ERANGE);
    assert_int_equal(cg_res_check_raw(CG_V2, CG_CPU_CFS_QUOTA, CG_UNLIMITED), 0);
    assert_int_equal(cg_res_check_raw(CG_V2, CG_CPUSET_CPUS, 1), -EINVAL);
    assert_int_equal(cg_res_check_raw(CG_V1, CG_MEMORY_STAT, 1), -EINVAL);
    assert_int_equal(cg_res_check_raw(CG_VERSION_UNKNOWN, CG_CPU_SHARES, 2), -EINVAL);
}

static void test_cpuset_validator(void **state)
{
    (void)state;
    expect_format(CG_V1, CG_CPUSET_CPUS, "0,1,2", "0-2");
    expect_format(CG_V2, CG_CPUSET_CPUS, "8,0-3\n", "0-3,8");
    expect_format(CG_V1, CG_CPUSET_CPUS, "4095", "4095");
    expect_format_err(CG_V1, CG_CPUSET_CPUS, "", -EINVAL);
    expect_format_err(CG_V1, CG_CPUSET_CPUS, "\n", -EINVAL);
    expect_format_err(CG_V1, CG_CPUSET_CPUS, "4096", -ERANGE);
    expect_format_err(CG_V1, CG_CPUSET_CPUS, "0-4096", -ERANGE);
    expect_format_err(CG_V1, CG_CPUSET_CPUS, "3-1", -EINVAL);
    expect_format_err(CG_V1, CG_CPUSET_CPUS, "0-7:2", -EINVAL);
}

static void test_cpuset(void **state)
{
    struct cg_cpuset s, t, keep;
    char buf[16384], small[4];

    (void)state;
    assert_int_equal(cg_cpuset_parse("0-3,8,10-11\n", &s), 0);
    assert_int_equal(cg_cpuset_count(&s), 7);
    for (unsigned c = 0; c < 16; c++)
        assert_int_equal(cg_cpuset_has(&s, c), c <= 3 || c == 8 || c == 10 || c == 11);
    assert_false(cg_cpuset_has(&s, CG_CPUSET_MAX_CPUS));
    assert_int_equal(cg_cpuset_format(&s, buf, sizeof(buf)), 11);
    assert_string_equal(buf, "0-3,8,10-11");
    assert_int_equal(cg_cpuset_format(&s, small, sizeof(small)), -ENAMETOOLONG);
    assert_string_equal(small, "");

    /* Equal as sets, whatever the spelling. */
    assert_int_equal(cg_cpuset_parse("11,10,8,3,2,1,0", &t), 0);
    assert_true(cg_cpuset_equal(&s, &t));
    assert_int_equal(cg_cpuset_parse("0-3,8,10", &t), 0);
    assert_false(cg_cpuset_equal(&s, &t));

    /* Empty: a fresh v1 cpuset.cpus reads "\n". */
    assert_int_equal(cg_cpuset_parse("", &t), 0);
    assert_int_equal(cg_cpuset_count(&t), 0);
    assert_int_equal(cg_cpuset_parse(" \n", &t), 0);
    assert_int_equal(cg_cpuset_count(&t), 0);
    assert_int_equal(cg_cpuset_format(&t, buf, sizeof(buf)), 0);
    assert_string_equal(buf, "");

    /* The edges of the id space. */
    assert_int_equal(cg_cpuset_parse("0-4095", &t), 0);
    assert_int_equal(cg_cpuset_count(&t), 4096);
    assert_int_equal(cg_cpuset_format(&t, buf, sizeof(buf)), 6);
    assert_string_equal(buf, "0-4095");

    /* The longest canonical list: every other CPU. */
    memset(&t, 0, sizeof(t));
    for (size_t i = 0; i < ARRAY_SIZE(t.bits); i++)
        t.bits[i] = UINT64_C(0x5555555555555555);
    assert_int_equal(cg_cpuset_count(&t), 2048);
    assert_int_equal(cg_cpuset_format(&t, buf, sizeof(buf)), 9684);
    assert_int_equal(strncmp(buf, "0,2,4,6,8,10,", 13), 0);
    assert_string_equal(buf + 9684 - 9, "4092,4094");
    assert_int_equal(cg_cpuset_parse(buf, &s), 0);
    assert_true(cg_cpuset_equal(&s, &t));

    /* Refused, and *ret untouched. */
    assert_int_equal(cg_cpuset_parse("5", &keep), 0);
    static const struct {
        const char *in;
        int r;
    } bad[] = {
        {"4096", -ERANGE},  {"1-", -EINVAL},    {"-1", -EINVAL},
        {"1,,2", -EINVAL},  {"1,", -EINVAL},    {",1", -EINVAL},
        {"a", -EINVAL},     {"1 2", -EINVAL},   {"3-1", -EINVAL},
        {"0-7:2", -EINVAL}, {"1-2-3", -EINVAL}, {"99999999999999999999", -ERANGE},
    };
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        s = keep;
        if (cg_cpuset_parse(bad[i].in, &s) != bad[i].r)
            fail_msg("\"%s\" should give %d", bad[i].in, bad[i].r);
        assert_true(cg_cpuset_equal(&s, &keep));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_info_table),    cmocka_unit_test(test_paths),
        cmocka_unit_test(test_shares_weight), cmocka_unit_test(test_res_parse),
        cmocka_unit_test(test_validators),    cmocka_unit_test(test_cpuset_validator),
        cmocka_unit_test(test_cpuset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
