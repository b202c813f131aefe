/*
 * Tests for agent/cgroup/reader.c: every parser against realistic files and hand-computed values
 * (cgtest.h), their refusals and untouched outputs; handles: re-reads see new content, a buffer
 * one byte short gives -ENOBUFS with the prefix, a removed pod directory gives -ENOENT and a
 * recreated one is read again, a replaced file is caught by revalidation, the descriptor budget;
 * and the read helpers on prepared v1 and v2 trees of both drivers, plus the host's own /proc.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/cgroup/reader.h"
#include "base/base.h"
#include "cgtest.h"

static void test_parse_i64(void **state)
{
    int64_t x = 7;

    (void)state;
    assert_int_equal(cg_parse_i64("123\n", &x), 0);
    assert_int_equal(x, 123);
    assert_int_equal(cg_parse_i64("-1\n", &x), 0);
    assert_int_equal(x, -1);
    assert_int_equal(cg_parse_i64(" 42 \n", &x), 0);
    assert_int_equal(x, 42);
    assert_int_equal(cg_parse_i64("9223372036854775807", &x), 0);
    assert_int_equal(x, INT64_MAX);
    assert_int_equal(cg_parse_i64("-9223372036854775808", &x), 0);
    assert_int_equal(x, INT64_MIN);
    x = 7;
    assert_int_equal(cg_parse_i64("9223372036854775808", &x), -ERANGE);
    assert_int_equal(cg_parse_i64("-9223372036854775809", &x), -ERANGE);
    assert_int_equal(cg_parse_i64("", &x), -EBADMSG);
    assert_int_equal(cg_parse_i64("\n", &x), -EBADMSG);
    assert_int_equal(cg_parse_i64("-", &x), -EBADMSG);
    assert_int_equal(cg_parse_i64("+5", &x), -EBADMSG);
    assert_int_equal(cg_parse_i64("abc", &x), -EBADMSG);
    assert_int_equal(cg_parse_i64("1 2", &x), -EBADMSG);
    assert_int_equal(cg_parse_i64("12kB", &x), -EBADMSG);
    assert_int_equal(x, 7);
}

static void test_parse_keyed(void **state)
{
    static const char *const keys[] = {"total_rss", "rss", "missing", "total_unevictable"};
    int64_t vals[4] = {-5, -5, -5, -5};
    uint64_t found = 0;

    (void)state;
    assert_int_equal(cg_parse_keyed(CGT_V1_MEMORY_STAT, keys, 4, vals, &found), 0);
    assert_int_equal(found, 0xb);
    assert_int_equal(vals[0], 360620032);
    assert_int_equal(vals[1], 6946816); /* not rss_huge, not total_rss */
    assert_int_equal(vals[2], -5);
    assert_int_equal(vals[3], 14483456);

    /* The first line of a key counts; CRLF and an unterminated last line are fine. */
    static const char *const ab[] = {"a", "b"};
    assert_int_equal(cg_parse_keyed("a 1\r\na 2\nb\t 3", ab, 2, vals, &found), 0);
    assert_int_equal(found, 3);
    assert_int_equal(vals[0], 1);
    assert_int_equal(vals[1], 3);
    assert_int_equal(cg_parse_keyed("", ab, 2, vals, &found), 0);
    assert_int_equal(found, 0);
    /* Unwanted lines are not looked at. */
    assert_int_equal(cg_parse_keyed("junk line here\nb 4\n", ab, 2, vals, &found), 0);
    assert_int_equal(found, 2);
    assert_int_equal(vals[1], 4);

    /* A wanted key with a bad value: -EBADMSG, outputs untouched. */
    static const char *const bad[] = {"a abc\n", "a\n",   "a 12x\n",
                                      "a 1 2\n", "a  \n", "a 99999999999999999999\n"};
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        vals[0] = vals[1] = -9;
        found = 77;
        if (cg_parse_keyed(bad[i], ab, 2, vals, &found) != -EBADMSG)
            fail_msg("\"%s\" should be malformed", bad[i]);
        assert_int_equal(vals[0], -9);
        assert_int_equal(found, 77);
    }
    /* ...but only when wanted. */
    assert_int_equal(cg_parse_keyed("c abc\na 5\n", ab, 2, vals, &found), 0);
    assert_int_equal(vals[0], 5);

    const char *many[65];
    int64_t v65[65];
    for (size_t i = 0; i < 65; i++)
        many[i] = "k";
    assert_int_equal(cg_parse_keyed("k 1\n", many, 65, v65, &found), -EINVAL);
    assert_int_equal(cg_parse_keyed("k 1\n", many, 64, v65, &found), 0);
    assert_int_equal(found, 1);
}

static void test_parse_cpu_max(void **state)
{
    int64_t q = 1, p = 2;

    (void)state;
    assert_int_equal(cg_parse_cpu_max("max 100000\n", &q, &p), 0);
    assert_int_equal(q, CG_UNLIMITED);
    assert_int_equal(p, 100000);
    assert_int_equal(cg_parse_cpu_max("50000 20000\n", &q, &p), 0);
    assert_int_equal(q, 50000);
    assert_int_equal(p, 20000);
    static const char *const bad[] = {
        "max\n", "50000\n", "-5 100000\n", "max 0\n", "max 100000 x", "maxx 100000", "", "max -1"};
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
        if (cg_parse_cpu_max(bad[i], &q, &p) != -EBADMSG)
            fail_msg("\"%s\" should be malformed", bad[i]);
    assert_int_equal(q, 50000);
    assert_int_equal(p, 20000);
}

static void test_parse_cpu_stat(void **state)
{
    struct cg_cpu_stat s;

    (void)state;
    assert_int_equal(cg_parse_cpu_stat(CGT_V1_CPU_STAT, CG_V1, &s), 0);
    assert_int_equal(s.usage_ns, -1);
    assert_int_equal(s.nr_periods, 4242);
    assert_int_equal(s.nr_throttled, 17);
    assert_int_equal(s.throttled_ns, 987654321);
    assert_true(s.has_throttling);

    assert_int_equal(cg_parse_cpu_stat(CGT_V2_CPU_STAT, CG_V2, &s), 0);
    assert_int_equal(s.usage_ns, INT64_C(8345678000));
    assert_int_equal(s.nr_periods, 500);
    assert_int_equal(s.nr_throttled, 25);
    assert_int_equal(s.throttled_ns, INT64_C(1234567000));
    assert_true(s.has_throttling);

    /* v2 without the cpu controller: usage only. */
    assert_int_equal(cg_parse_cpu_stat("usage_usec 100\nuser_usec 60\nsystem_usec 40\n", CG_V2, &s),
                     0);
    assert_int_equal(s.usage_ns, 100000);
    assert_false(s.has_throttling);
    assert_int_equal(s.nr_periods, 0);
    assert_int_equal(s.throttled_ns, 0);

    s.nr_periods = 99;
    assert_int_equal(cg_parse_cpu_stat("nr_periods 1\nnr_throttled 0\n", CG_V1, &s), -EBADMSG);
    assert_int_equal(cg_parse_cpu_stat(CGT_V1_CPU_STAT, CG_V2, &s), -EBADMSG);
    assert_int_equal(
        cg_parse_cpu_stat("nr_periods -1\nnr_throttled 0\nthrottled_time 0\n", CG_V1, &s),
        -EBADMSG);
    assert_int_equal(cg_parse_cpu_stat("usage_usec 9223372036854776\n", CG_V2, &s), -ERANGE);
    assert_int_equal(cg_parse_cpu_stat(CGT_V1_CPU_STAT, CG_VERSION_UNKNOWN, &s), -EINVAL);
    assert_int_equal(s.nr_periods, 99);
}

static void test_parse_memory_stat(void **state)
{
    struct cg_memory_stat m, keep;
    char *cut;

    (void)state;
    assert_int_equal(cg_parse_memory_stat(CGT_V1_MEMORY_STAT, CG_V1, &m), 0);
    assert_int_equal(m.cache, 839909376);
    assert_int_equal(m.rss, 360620032);
    assert_int_equal(m.inactive_anon, 353533952);
    assert_int_equal(m.active_anon, 1605632);
    assert_int_equal(m.inactive_file, 265166848);
    assert_int_equal(m.active_file, 565673984);
    assert_int_equal(m.unevictable, 14483456);
    assert_int_equal(cg_memory_stat_usage(&m), 369623040);
    {
        /* Values a corrupt file can hold: saturated, not wrapped. */
        struct cg_memory_stat big = m;

        big.inactive_anon = INT64_MAX;
        big.active_anon = 1;
        assert_int_equal(cg_memory_stat_usage(&big), INT64_MAX);
        big.inactive_anon = INT64_MAX - 2;
        big.unevictable = 2;
        assert_int_equal(cg_memory_stat_usage(&big), INT64_MAX);
    }

    assert_int_equal(cg_parse_memory_stat(CGT_V2_MEMORY_STAT, CG_V2, &m), 0);
    assert_int_equal(m.cache, 52428800);
    assert_int_equal(m.rss, 106954752);
    assert_int_equal(m.inactive_anon, 104857600);
    assert_int_equal(m.active_anon, 2097152);
    assert_int_equal(m.inactive_file, 31457280);
    assert_int_equal(m.active_file, 20971520);
    assert_int_equal(m.unevictable, 8192);
    assert_int_equal(cg_memory_stat_usage(&m), 106962944);

    /* Each version's keys only; every key required (reference 1.6). */
    keep = m;
    assert_int_equal(cg_parse_memory_stat(CGT_V2_MEMORY_STAT, CG_V1, &m), -EBADMSG);
    /* v1 non-hierarchical keys alone are not enough. */
    assert_int_equal(cg_parse_memory_stat(CGT_V1_MEMORY_STAT, CG_V2, &m), -EBADMSG);
    cut = strdup(CGT_V1_MEMORY_STAT);
    assert_non_null(cut);
    *strstr(cut, "total_unevictable") = '\0';
    assert_int_equal(cg_parse_memory_stat(cut, CG_V1, &m), -EBADMSG);
    free(cut);
    assert_int_equal(cg_parse_memory_stat(CGT_V2_MEMORY_STAT, CG_VERSION_UNKNOWN, &m), -EINVAL);
    assert_memory_equal(&m, &keep, sizeof(m));
}

static void test_parse_proc_stat(void **state)
{
    uint64_t ticks = 0, per[8];
    size_t n = 0;
    char buf[1024];
    const char *cpu3 = strstr(CGT_PROC_STAT, "cpu3"), *intr = strstr(CGT_PROC_STAT, "intr");

    (void)state;
    assert_int_equal(cg_parse_proc_stat(CGT_PROC_STAT, &ticks, NULL, 0, NULL), 0);
    assert_int_equal(ticks, 376156);
    ticks = 0;
    assert_int_equal(cg_parse_proc_stat(CGT_PROC_STAT, &ticks, per, ARRAY_SIZE(per), &n), 0);
    assert_int_equal(ticks, 376156);
    assert_int_equal(n, 4);
    assert_int_equal(per[0], 174468);
    assert_int_equal(per[1], 201686);
    assert_int_equal(per[2], 0); /* offline: no line */
    assert_int_equal(per[3], 1013);
    for (size_t i = 4; i < ARRAY_SIZE(per); i++)
        assert_int_equal(per[i], 0);
    assert_int_equal(cg_parse_proc_stat(CGT_PROC_STAT, &ticks, per, 4, NULL), 0);
    /* CPU 3 needs room for 4. */
    assert_int_equal(cg_parse_proc_stat(CGT_PROC_STAT, &ticks, per, 3, &n), -E2BIG);

    /* Prefixes, as a buffer too small for the file leaves them: cut before cpu3, inside cpu3,
     * right after it (the next line might be cpu4), after the "i" of intr (no cpu line starts
     * so), inside intr. */
    const char *ends[] = {cpu3, cpu3 + 10, intr, intr + 1, intr + 20};
    const int want[] = {-ENOBUFS, -ENOBUFS, -ENOBUFS, 0, 0};
    for (size_t i = 0; i < ARRAY_SIZE(ends); i++) {
        size_t len = (size_t)(ends[i] - CGT_PROC_STAT);

        memcpy(buf, CGT_PROC_STAT, len);
        buf[len] = '\0';
        if (cg_parse_proc_stat(buf, &ticks, per, ARRAY_SIZE(per), &n) != want[i])
            fail_msg("cut at %zu should give %d", len, want[i]);
        /* The total alone is always there. */
        ticks = 0;
        assert_int_equal(cg_parse_proc_stat(buf, &ticks, NULL, 0, NULL), 0);
        assert_int_equal(ticks, 376156);
    }
    /* "c" could start cpu4. */
    (void)snprintf(buf, sizeof(buf), "%.*sc", (int)(intr - CGT_PROC_STAT), CGT_PROC_STAT);
    assert_int_equal(cg_parse_proc_stat(buf, &ticks, per, ARRAY_SIZE(per), &n), -ENOBUFS);

    /* Malformed. */
    ticks = 5;
    assert_int_equal(cg_parse_proc_stat("", &ticks, NULL, 0, NULL), -EBADMSG);
    assert_int_equal(cg_parse_proc_stat("cpu  3085", &ticks, NULL, 0, NULL), -EBADMSG);
    assert_int_equal(cg_parse_proc_stat("intr 1\n", &ticks, NULL, 0, NULL), -EBADMSG);
    assert_int_equal(cg_parse_proc_stat("cpu  1 2 3 4 5 6\nintr 1\n", &ticks, NULL, 0, NULL),
                     -EBADMSG);
    assert_int_equal(cg_parse_proc_stat("cpu  1 2 3 4 5 6 x\nintr 1\n", &ticks, NULL, 0, NULL),
                     -EBADMSG);
    assert_int_equal(
        cg_parse_proc_stat("cpu  1 2 3 4 5 6 7\ncpu0 1 2\nintr 1\n", &ticks, per, 8, NULL),
        -EBADMSG);
    assert_int_equal(cg_parse_proc_stat("cpu  1 2 3 4 5 6 7\ncpux 1 2 3 4 5 6 7\nintr 1\n", &ticks,
                                        per, 8, NULL),
                     0);
    /* A whole line too short to be a cpu line ends the cpu lines (read past it before). */
    assert_int_equal(cg_parse_proc_stat("cpu  1 2 3 4 5 6 7\nc\n", &ticks, per, 8, &n), 0);
    assert_int_equal(ticks, 19);
    assert_int_equal(cg_parse_proc_stat("cpu  1 2 3 4 5 6 7\n\n", &ticks, per, 8, &n), 0);
    /* Busy ticks that would wrap 2^64: a corrupt file. */
    assert_int_equal(cg_parse_proc_stat("cpu  18446744073709551615 1 0 0 0 0 0\nintr 1\n", &ticks,
                                        NULL, 0, NULL),
                     -EBADMSG);
    /* Seven fields are enough (2.6 kernels); the sum is 1 + 2 + 3 + 6 + 7. */
    assert_int_equal(ticks, 19);
}

static void test_parse_meminfo(void **state)
{
    struct cg_meminfo m = {0}, keep;

    (void)state;
    assert_int_equal(cg_parse_meminfo(CGT_PROC_MEMINFO, &m), 0);
    assert_int_equal(m.mem_total_kib, 16314324);
    assert_int_equal(m.mem_free_kib, 923456);
    assert_int_equal(m.mem_available_kib, 9876543);
    /* node usage = (MemTotal - MemAvailable) x 1024 = 6437781 x 1024, reference 1.5 */
    assert_int_equal((m.mem_total_kib - m.mem_available_kib) * 1024, INT64_C(6592287744));

    assert_int_equal(cg_parse_meminfo("MemAvailable: 3\nMemFree: 2\nMemTotal: 1\n", &m), 0);
    assert_int_equal(m.mem_total_kib, 1);
    assert_int_equal(m.mem_free_kib, 2);
    assert_int_equal(m.mem_available_kib, 3);
    keep = m;
    assert_int_equal(cg_parse_meminfo("MemTotal: 1 kB\nMemFree: 2 kB\n", &m), -EBADMSG);
    assert_int_equal(cg_parse_meminfo("MemTotal: x kB\nMemFree: 2\nMemAvailable: 3\n", &m),
                     -EBADMSG);
    assert_int_equal(cg_parse_meminfo("MemTotal: 1 MB\nMemFree: 2\nMemAvailable: 3\n", &m),
                     -EBADMSG);
    /* Not the per-node form ("Node 0 MemTotal:"). */
    assert_int_equal(
        cg_parse_meminfo("Node 0 MemTotal: 1 kB\nNode 0 MemFree: 2 kB\nMemAvailable: 3\n", &m),
        -EBADMSG);
    assert_memory_equal(&m, &keep, sizeof(m));
}

static void test_file_read(void **state)
{
    struct cgt *t = *state;
    struct cg_file f = CG_FILE_INIT;
    char path[CG_PATH_MAX], buf[64];

    cgt_put(t->root, "a/f", "12345\n");
    assert_int_equal(cg_file_open(&f, cgt_join(path, t->root, "a/f")), 0);
    assert_string_equal(cg_file_path(&f), path);
    assert_int_equal(cg_file_read(&f, buf, sizeof(buf)), 6);
    assert_string_equal(buf, "12345\n");
    /* The kernel rewrites in place; every read starts at 0 again. */
    cgt_put(t->root, "a/f", "7\n");
    assert_int_equal(cg_file_read(&f, buf, sizeof(buf)), 2);
    assert_string_equal(buf, "7\n");
    cgt_put(t->root, "a/f", "12345\n");
    /* Exactly fitting, and one byte short: the prefix and -ENOBUFS. */
    assert_int_equal(cg_file_read(&f, buf, 7), 6);
    assert_string_equal(buf, "12345\n");
    assert_int_equal(cg_file_read(&f, buf, 6), -ENOBUFS);
    assert_string_equal(buf, "12345");
    cg_file_release(&f);
    assert_null(cg_file_path(&f));
    cg_file_release(&f);
    cg_file_release(NULL);

    /* Absent file, absent directory. */
    assert_int_equal(cg_file_open(&f, cgt_join(path, t->root, "a/nope")), -ENOENT);
    assert_null(cg_file_path(&f));
    assert_int_equal(cg_file_open(&f, cgt_join(path, t->root, "nope/f")), -ENOENT);
    cg_file_init(&f);
    assert_int_equal(cg_file_open(&f, cgt_join(path, t->root, "a")), 0);
    assert_int_equal(cg_file_read(&f, buf, sizeof(buf)), -EISDIR);
    cg_file_release(&f);
}

static void test_file_pod_gone(void **state)
{
    struct cgt *t = *state;
    struct cg_file f = CG_FILE_INIT;
    char path[CG_PATH_MAX], dir[CG_PATH_MAX], buf[64];
    int base = cg_file_open_count();

    cgt_put(t->cgroup, "cpuacct/kubepods/podx/cpuacct.usage", "100\n");
    assert_int_equal(
        cg_file_open(&f, cgt_join(path, t->cgroup, "cpuacct/kubepods/podx/cpuacct.usage")), 0);
    assert_int_equal(cg_file_open_count(), base + 1);
    assert_int_equal(cg_file_revalidate(&f), 0);

    /* The pod went away: its directory is removed. */
    cgt_rm_rf(cgt_join(dir, t->cgroup, "cpuacct/kubepods/podx"));
    assert_int_equal(cg_file_revalidate(&f), -ENOENT);
    assert_int_equal(cg_file_open_count(), base);
    assert_int_equal(cg_file_read(&f, buf, sizeof(buf)), -ENOENT);
    assert_int_equal(cg_file_revalidate(&f), -ENOENT);

    /* Recreated (the pod restarted): the same handle reads the new file. */
    cgt_put(t->cgroup, "cpuacct/kubepods/podx/cpuacct.usage", "5\n");
    assert_int_equal(cg_file_read(&f, buf, sizeof(buf)), 2);
    assert_string_equal(buf, "5\n");
    assert_int_equal(cg_file_open_count(), base + 1);
    assert_int_equal(cg_file_revalidate(&f), 0);
    cg_file_release(&f);
    assert_int_equal(cg_file_open_count(), base);
}

static void test_file_replaced(void **state)
{
    struct cgt *t = *state;
    struct cg_file f = CG_FILE_INIT;
    char path[CG_PATH_MAX], tmp[CG_PATH_MAX], buf[64];

    cgt_put(t->root, "f", "old\n");
    assert_int_equal(cg_file_open(&f, cgt_join(path, t->root, "f")), 0);
    cgt_put(t->root, "f.new", "new\n");
    assert_int_equal(rename(cgt_join(tmp, t->root, "f.new"), path), 0);
    /* The descriptor still reads the unlinked file: only revalidation sees the swap. */
    assert_int_equal(cg_file_read(&f, buf, sizeof(buf)), 4);
    assert_string_equal(buf, "old\n");
    assert_int_equal(cg_file_revalidate(&f), 1);
    assert_int_equal(cg_file_read(&f, buf, sizeof(buf)), 4);
    assert_string_equal(buf, "new\n");
    assert_int_equal(cg_file_revalidate(&f), 0);
    cg_file_release(&f);
}

static void test_file_budget(void **state)
{
    struct cgt *t = *state;
    struct cg_file a = CG_FILE_INIT, b = CG_FILE_INIT;
    char path[CG_PATH_MAX], buf[64];
    int base = cg_file_open_count();

    assert_int_equal(cg_file_max_open(), CG_FILE_MAX_OPEN_DEFAULT);
    cg_file_set_max_open(base + 1);
    cgt_put(t->root, "a", "1\n");
    cgt_put(t->root, "b", "2\n");
    assert_int_equal(cg_file_open(&a, cgt_join(path, t->root, "a")), 0);
    assert_int_equal(cg_file_open(&b, cgt_join(path, t->root, "b")), 0);
    assert_int_equal(cg_file_open_count(), base + 1);
    /* Over the budget, b reads by path, with the same results. */
    assert_int_equal(cg_file_read(&b, buf, sizeof(buf)), 2);
    assert_string_equal(buf, "2\n");
    assert_int_equal(cg_file_read(&a, buf, sizeof(buf)), 2);
    assert_string_equal(buf, "1\n");
    assert_int_equal(cg_file_revalidate(&b), 0);
    /* A slot freed is taken by the next read that opens. */
    cg_file_release(&a);
    assert_int_equal(cg_file_open_count(), base);
    assert_int_equal(cg_file_read(&b, buf, sizeof(buf)), 2);
    assert_int_equal(cg_file_open_count(), base + 1);
    cg_file_release(&b);
    assert_int_equal(cg_file_open_count(), base);

    /* Budget 0: nothing kept, a gone file still says -ENOENT. */
    cg_file_set_max_open(-3);
    assert_int_equal(cg_file_max_open(), 0);
    assert_int_equal(cg_file_open(&a, cgt_join(path, t->root, "a")), 0);
    assert_int_equal(cg_file_open_count(), base);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(cg_file_read(&a, buf, sizeof(buf)), -ENOENT);
    assert_int_equal(cg_file_revalidate(&a), -ENOENT);
    cg_file_release(&a);
    cg_file_set_max_open(CG_FILE_MAX_OPEN_DEFAULT);
}

static void read_pod(struct cgt *t, enum cg_version v, enum cg_driver d)
{
    struct cgt_pod p;
    struct cg_file f = CG_FILE_INIT;
    struct cg_cpu_stat cs;
    struct cg_memory_stat ms;
    struct cg_cpuset set;
    struct cg_meminfo mi;
    char path[CG_PATH_MAX];
    uint64_t ticks, per[4];
    size_t n;
    int64_t x;

    cgt_pod_tree(t, v, d, &p);
#define OPEN(res, dir) assert_int_equal(cg_file_open_res(&f, &p.l, (res), (dir)), 0)
    OPEN(CG_CPU_USAGE, p.pod);
    assert_int_equal(cg_read_i64(&f, v, CG_CPU_USAGE, &x), 0);
    assert_int_equal(x, v == CG_V1 ? INT64_C(123456789012) : INT64_C(8345678000));
    cg_file_release(&f);
    OPEN(CG_CPU_USAGE, p.ctr);
    assert_int_equal(cg_read_i64(&f, v, CG_CPU_USAGE, &x), 0);
    assert_int_equal(x, INT64_C(23456789012) - (v == CG_V2 ? 12 : 0));
    cg_file_release(&f);

    OPEN(CG_CPU_STAT, p.pod);
    assert_int_equal(cg_read_cpu_stat(&f, v, &cs), 0);
    assert_int_equal(cs.nr_throttled, v == CG_V1 ? 17 : 25);
    cg_file_release(&f);

    OPEN(CG_CPU_CFS_QUOTA, p.pod);
    assert_int_equal(cg_read_i64(&f, v, CG_CPU_CFS_QUOTA, &x), 0);
    assert_int_equal(x, CG_UNLIMITED);
    cg_file_release(&f);
    OPEN(CG_CPU_CFS_PERIOD, p.pod);
    assert_int_equal(cg_read_i64(&f, v, CG_CPU_CFS_PERIOD, &x), 0);
    assert_int_equal(x, 100000);
    cg_file_release(&f);
    OPEN(CG_CPU_SHARES, p.ctr);
    assert_int_equal(cg_read_i64(&f, v, CG_CPU_SHARES, &x), 0);
    assert_int_equal(x, v == CG_V1 ? 1024 : 998);
    cg_file_release(&f);

    OPEN(CG_CPUSET_CPUS, p.pod);
    assert_int_equal(cg_read_cpuset(&f, &set), 0);
    assert_int_equal(cg_cpuset_count(&set), 4);
    cg_file_release(&f);

    OPEN(CG_MEMORY_LIMIT, p.pod);
    assert_int_equal(cg_read_i64(&f, v, CG_MEMORY_LIMIT, &x), 0);
    assert_int_equal(x, CG_UNLIMITED);
    cg_file_release(&f);
    OPEN(CG_MEMORY_USAGE, p.pod);
    assert_int_equal(cg_read_i64(&f, v, CG_MEMORY_USAGE, &x), 0);
    assert_int_equal(x, 381456384);
    cg_file_release(&f);
    OPEN(CG_MEMORY_STAT, p.pod);
    assert_int_equal(cg_read_memory_stat(&f, v, &ms), 0);
    assert_int_equal(cg_memory_stat_usage(&ms), v == CG_V1 ? 369623040 : 106962944);
    /* A file of the wrong kind read as an integer. */
    assert_int_equal(cg_read_i64(&f, v, CG_MEMORY_STAT, &x), -EINVAL);
    assert_int_equal(cg_read_i64(&f, v, CG_MEMORY_USAGE, &x), -EBADMSG);
    assert_int_equal(cg_read_cpuset(&f, &set), -EBADMSG);
    cg_file_release(&f);
#undef OPEN

    /* Anolis-only files are absent on this "kernel". */
    assert_int_equal(cg_file_open_res(&f, &p.l, CG_CPU_BVT_WARP_NS, p.pod), -ENOENT);
    assert_int_equal(cg_file_open_res(&f, &p.l, CG_MEMORY_WMARK_RATIO, p.pod), -ENOENT);
    assert_int_equal(cg_file_open_res(&f, &p.l, CG_CPU_SHARES, "../etc"), -EINVAL);

    assert_true(cg_join_path(p.l.roots.proc_root, "stat", path, sizeof(path)) > 0);
    assert_int_equal(cg_file_open(&f, path), 0);
    assert_int_equal(cg_read_proc_stat(&f, &ticks, per, ARRAY_SIZE(per), &n), 0);
    assert_int_equal(ticks, 376156);
    assert_int_equal(per[3], 1013);
    assert_int_equal(n, 4);
    cg_file_release(&f);
    assert_true(cg_join_path(p.l.roots.proc_root, "meminfo", path, sizeof(path)) > 0);
    assert_int_equal(cg_file_open(&f, path), 0);
    assert_int_equal(cg_read_meminfo(&f, &mi), 0);
    assert_int_equal(mi.mem_total_kib, 16314324);
    /* Not meminfo. */
    assert_int_equal(cg_read_proc_stat(&f, &ticks, NULL, 0, NULL), -EBADMSG);
    cg_file_release(&f);
}

static void test_read_v1_systemd(void **state)
{
    read_pod(*state, CG_V1, CG_DRIVER_SYSTEMD);
}

static void test_read_v1_cgroupfs(void **state)
{
    read_pod(*state, CG_V1, CG_DRIVER_CGROUPFS);
}

static void test_read_v2_systemd(void **state)
{
    read_pod(*state, CG_V2, CG_DRIVER_SYSTEMD);
}

static void test_read_v2_cgroupfs(void **state)
{
    read_pod(*state, CG_V2, CG_DRIVER_CGROUPFS);
}

/* Files longer than the helpers' buffers: /proc/stat is parsed from its prefix, a cgroup file
 * is refused. */
static void test_read_long_files(void **state)
{
    struct cgt *t = *state;
    struct cg_file f = CG_FILE_INIT;
    size_t cap = 3 * CG_PROC_STAT_BUF_SIZE;
    char *big = malloc(cap), path[CG_PATH_MAX];
    struct cg_memory_stat ms;
    uint64_t ticks, per[4];
    size_t len;

    assert_non_null(big);
    len = (size_t)snprintf(big, cap, "%.*sintr 1",
                           (int)(strstr(CGT_PROC_STAT, "intr") - CGT_PROC_STAT), CGT_PROC_STAT);
    while (len < cap - 8)
        len += (size_t)snprintf(big + len, cap - len, " 0");
    big[len++] = '\n';
    big[len] = '\0';
    cgt_put(t->proc, "stat", big);
    assert_int_equal(cg_file_open(&f, cgt_join(path, t->proc, "stat")), 0);
    assert_int_equal(cg_read_proc_stat(&f, &ticks, per, ARRAY_SIZE(per), NULL), 0);
    assert_int_equal(ticks, 376156);
    assert_int_equal(per[1], 201686);
    cg_file_release(&f);

    /* A memory.stat longer than CG_READ_BUF_SIZE. */
    len = (size_t)snprintf(big, cap, "%s", CGT_V1_MEMORY_STAT);
    while (len < CG_READ_BUF_SIZE + 100)
        len += (size_t)snprintf(big + len, cap - len, "padding_key 0\n");
    cgt_put(t->root, "memory.stat", big);
    assert_int_equal(cg_file_open(&f, cgt_join(path, t->root, "memory.stat")), 0);
    assert_int_equal(cg_read_memory_stat(&f, CG_V1, &ms), -ENOBUFS);
    cg_file_release(&f);
    free(big);
}

/* The host's own /proc, through the same calls the node collector makes. */
static void test_read_host_proc(void **state)
{
    struct cg_file f = CG_FILE_INIT;
    struct cg_meminfo mi;
    uint64_t t1, t2, per[CG_CPUSET_MAX_CPUS];
    size_t n = 0;

    (void)state;
    assert_int_equal(cg_file_open(&f, "/proc/stat"), 0);
    assert_int_equal(cg_read_proc_stat(&f, &t1, per, ARRAY_SIZE(per), &n), 0);
    assert_true(n >= 1);
    assert_int_equal(cg_read_proc_stat(&f, &t2, NULL, 0, NULL), 0);
    assert_true(t2 >= t1);
    cg_file_release(&f);
    assert_int_equal(cg_file_open(&f, "/proc/meminfo"), 0);
    assert_int_equal(cg_read_meminfo(&f, &mi), 0);
    assert_true(mi.mem_total_kib > 0);
    assert_true(mi.mem_available_kib <= mi.mem_total_kib);
    assert_true(mi.mem_free_kib <= mi.mem_total_kib);
    cg_file_release(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_i64),
        cmocka_unit_test(test_parse_keyed),
        cmocka_unit_test(test_parse_cpu_max),
        cmocka_unit_test(test_parse_cpu_stat),
        cmocka_unit_test(test_parse_memory_stat),
        cmocka_unit_test(test_parse_proc_stat),
        cmocka_unit_test(test_parse_meminfo),
        cmocka_unit_test_setup_teardown(test_file_read, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_file_pod_gone, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_file_replaced, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_file_budget, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_read_v1_systemd, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_read_v1_cgroupfs, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_read_v2_systemd, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_read_v2_cgroupfs, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_read_long_files, cgt_setup, cgt_teardown),
        cmocka_unit_test(test_read_host_proc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
