/*
 * Tests for agent/collect on prepared host trees (cgroup v1 with cgroupfs, v2 with systemd):
 * two rounds one second apart with counters advanced by hand, and every value the metric cache
 * then holds checked against the formulas of reference 1.5-1.9 computed in the comments; the
 * first round records nothing but node memory; a deleted pod's series are dropped.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/cgroup/cgroup.h"
#include "agent/collect/collect.h"
#include "agent/metriccache/metriccache.h"
#include "cgtest.h"
#include "testutil.h"

#define T0   1700000000000LL /* wall ms of round 1 */
#define SEC  1000000000LL
#define GIB  (1024.0 * 1024 * 1024)
#define UID  "7712555c-ce62-454a-9e18-9ff0217b8941"
#define CID  "containerd://0123456789abcdef"
#define UID2 "11111111-2222-3333-4444-555555555555"

/* /proc/stat with the cpu line's user+nice+system+irq+softirq = base + 0 (iowait/idle vary). */
static void put_proc(struct cgt *t, long ticks, long avail_kib)
{
    char buf[512];

    /* user nice system idle iowait irq softirq steal: counted = 1 + 2 + 3 + 6 + 7 fields. */
    (void)snprintf(buf, sizeof(buf),
                   "cpu  %ld 0 0 999999 5555 0 0 77 0 0\ncpu0 %ld 0 0 1 0 0 0 0 0 0\n"
                   "intr 1\nctxt 2\n",
                   ticks, ticks);
    cgt_put(t->proc, "stat", buf);
    (void)snprintf(buf, sizeof(buf),
                   "MemTotal:       16384000 kB\nMemFree:         4096000 kB\n"
                   "MemAvailable:   %ld kB\nBuffers: 1 kB\n",
                   avail_kib);
    cgt_put(t->proc, "meminfo", buf);
}

static cJSON *pod_json(const char *uid, const char *qos_class, const char *cid, bool be)
{
    char buf[1024];

    (void)snprintf(buf, sizeof(buf),
                   "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"uid\":\"%s\","
                   "\"labels\":{%s}},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":"
                   "{\"requests\":{\"kubernetes.io/batch-cpu\":\"1500\"}}}]},\"status\":"
                   "{\"phase\":\"Running\",\"qosClass\":\"%s\",\"containerStatuses\":[{\"name\":"
                   "\"c\",\"containerID\":\"%s\"}]}}",
                   uid, be ? "\"koordinator.sh/qosClass\":\"BE\"" : "", qos_class, cid);
    return J(buf);
}

/* Writes <cgroup root>/<subsys>/<dir>/<file> (subsys "" on v2). */
static void put(struct cgt *t, const char *subsys, const char *dir, const char *file,
                const char *text)
{
    char rel[CG_PATH_MAX];

    (void)snprintf(rel, sizeof(rel), "%s%s%s/%s", subsys, *subsys ? "/" : "", dir, file);
    cgt_put(t->cgroup, rel, text);
}

static double last(struct mc *mc, enum mc_kind kind, const char *id)
{
    struct mc_result r;

    if (mc_query(mc, &(struct mc_select){.kind = kind, .id = id}, 0, INT64_MAX, NULL, &r) < 0)
        return -1;
    return r.last;
}

static void test_v1_cgroupfs(void **state)
{
    struct cgt *t = *state;
    struct cg_layout l;
    struct mc *mc = NULL;
    struct collector *c = NULL;
    struct collect_stats st;
    const char *pod = "kubepods/burstable/pod" UID;
    const char *ctr = "kubepods/burstable/pod" UID "/0123456789abcdef";
    const char *be = "kubepods/besteffort";
    cJSON *pods[1] = {pod_json(UID, "Burstable", CID, true)};

    assert_int_equal(cg_layout_init(&l, &t->roots, CG_V1, CG_DRIVER_CGROUPFS), 0);
    assert_int_equal(mc_new(NULL, &mc), 0);
    assert_int_equal(
        collect_new(&(struct collect_opts){.layout = &l, .mc = mc, .jiffy_hz = 100}, &c), 0);
    /* Round 1: counters only seed. */
    put_proc(t, 1000, 12288000);
    put(t, "cpuacct", pod, "cpuacct.usage", "5000000000\n");
    put(t, "memory", pod, "memory.stat", CGT_V1_MEMORY_STAT);
    put(t, "cpu", pod, "cpu.stat", "nr_periods 100\nnr_throttled 10\nthrottled_time 5\n");
    put(t, "cpuacct", ctr, "cpuacct.usage", "1000000000\n");
    put(t, "memory", ctr, "memory.stat", CGT_V1_MEMORY_STAT);
    put(t, "cpuacct", be, "cpuacct.usage", "0\n");
    put(t, "cpuset", be, "cpuset.cpus", "0-3\n");
    put(t, "cpu", be, "cpu.cfs_quota_us", "150000\n");
    put(t, "cpu", be, "cpu.cfs_period_us", "100000\n");
    assert_int_equal(collect_round(c, (const cJSON *const *)pods, 1, T0, 10 * SEC), 0);
    assert_true(last(mc, MC_NODE_CPU_USAGE, NULL) < 0);
    assert_true(last(mc, MC_POD_CPU_USAGE, UID) < 0);
    /* Memory is a level, not a counter: node memory is there at once.
     * (16384000 - 12288000) KiB = 4096000 KiB = 4194304000 bytes. */
    assert_true(last(mc, MC_NODE_MEMORY_USAGE, NULL) == 4194304000.0);

    /* Round 2, one second later: node ticks +150 at 100 Hz = 1.5 cores; pod +750 ms of CPU =
     * 0.75 cores; container +250 ms = 0.25; throttling (14-10)/(110-100) = 0.4; BE +500 ms. */
    put_proc(t, 1150, 12288000);
    put(t, "cpuacct", pod, "cpuacct.usage", "5750000000\n");
    put(t, "cpu", pod, "cpu.stat", "nr_periods 110\nnr_throttled 14\nthrottled_time 9\n");
    put(t, "cpuacct", ctr, "cpuacct.usage", "1250000000\n");
    put(t, "cpuacct", be, "cpuacct.usage", "500999999\n");
    assert_int_equal(collect_round(c, (const cJSON *const *)pods, 1, T0 + 1000, 11 * SEC), 0);
    assert_true(last(mc, MC_NODE_CPU_USAGE, NULL) == 1.5);
    assert_true(last(mc, MC_POD_CPU_USAGE, UID) == 0.75);
    /* total_inactive_anon + total_active_anon + total_unevictable = 369623040 (cgtest.h);
     * with page cache + total_active_file + total_inactive_file = 369623040 + 830840832. */
    assert_true(last(mc, MC_POD_MEMORY_USAGE, UID) == 369623040.0);
    assert_true(last(mc, MC_POD_MEMORY_USAGE_WITH_PAGE_CACHE, UID) == 1200463872.0);
    assert_true(last(mc, MC_POD_CPU_THROTTLED, UID) == 0.4);
    assert_true(last(mc, MC_CONTAINER_CPU_USAGE, CID) == 0.25);
    assert_true(last(mc, MC_CONTAINER_MEMORY_USAGE, CID) == 369623040.0);
    /* System: max(1.5 - 0.75, 0) cores; max(4194304000 - 369623040, 0) bytes. */
    assert_true(last(mc, MC_SYS_CPU_USAGE, NULL) == 0.75);
    assert_true(last(mc, MC_SYS_MEMORY_USAGE, NULL) == 3824680960.0);
    /* BE: request 1500 (the BE-labelled pod's batch-cpu); real limit min(4 CPUs x 1000,
     * 150000 x 1000 / 100000) = 1500; usage int(500999999 ns / 10^6) = 500 ms over 1000 ms
     * x 1000 = 500 milli. */
    assert_true(last(mc, MC_NODE_BE, MC_BE_CPU_REQUEST) == 1500);
    assert_true(last(mc, MC_NODE_BE, MC_BE_CPU_REAL_LIMIT) == 1500);
    assert_true(last(mc, MC_NODE_BE, MC_BE_CPU_USAGE) == 500);
    collect_stats(c, &st);
    assert_int_equal(st.rounds, 2);
    assert_int_equal(st.pods, 1);
    assert_int_equal(st.containers, 1);

    /* A pod appears: its first round only seeds, so the pods' sum is incomplete and no system
     * usage is recorded for that round (it would count the new pod as system usage). */
    {
        cJSON *two[2] = {pods[0], pod_json(UID2, "Burstable", "", false)};
        struct mc_result r;

        put(t, "cpuacct", "kubepods/burstable/pod" UID2, "cpuacct.usage", "1\n");
        put(t, "memory", "kubepods/burstable/pod" UID2, "memory.stat", CGT_V1_MEMORY_STAT);
        put_proc(t, 1300, 12288000);
        assert_int_equal(collect_round(c, (const cJSON *const *)two, 2, T0 + 2000, 12 * SEC), 0);
        assert_int_equal(
            mc_query(mc, &(struct mc_select){.kind = MC_SYS_CPU_USAGE}, 0, INT64_MAX, NULL, &r), 0);
        assert_int_equal(r.last_ms, T0 + 1000);
        assert_true(last(mc, MC_NODE_CPU_USAGE, NULL) == 1.5);
        cJSON_Delete(two[1]);
    }

    /* The pods are gone: their series go with them. */
    assert_int_equal(collect_round(c, NULL, 0, T0 + 3000, 13 * SEC), 0);
    assert_true(last(mc, MC_POD_CPU_USAGE, UID) < 0);
    assert_true(last(mc, MC_CONTAINER_CPU_USAGE, CID) < 0);
    collect_free(c);
    mc_free(mc);
    cJSON_Delete(pods[0]);
}

static void test_v2_systemd(void **state)
{
    struct cgt *t = *state;
    struct cg_layout l;
    struct mc *mc = NULL;
    struct collector *c = NULL;
    /* systemd writes the UID with '_' for '-'. */
    const char *dir = "kubepods.slice/kubepods-pod11111111_2222_3333_4444_555555555555.slice";
    cJSON *pods[3] = {pod_json(UID2, "Guaranteed", "", false),
                      pod_json(UID, "BestEffort", "", false),
                      pod_json("99999999-2222-3333-4444-555555555555", "Burstable", "", false)};
    struct collect_stats st;

    assert_int_equal(cg_layout_init(&l, &t->roots, CG_V2, CG_DRIVER_SYSTEMD), 0);
    assert_int_equal(mc_new(NULL, &mc), 0);
    assert_int_equal(
        collect_new(&(struct collect_opts){.layout = &l, .mc = mc, .jiffy_hz = 100}, &c), 0);
    put_proc(t, 0, 16384000);
    put(t, "", dir, "cpu.stat",
        "usage_usec 2000000\nuser_usec 1\nsystem_usec 1\nnr_periods 0\nnr_throttled 0\n"
        "throttled_usec 0\n");
    put(t, "", dir, "memory.stat", CGT_V2_MEMORY_STAT);
    /* The third pod has completed: not read at all. */
    cJSON_SetValuestring(cJSON_GetObjectItem(cJSON_GetObjectItem(pods[2], "status"), "phase"),
                         "Succeeded");
    assert_int_equal(collect_round(c, (const cJSON *const *)pods, 3, T0, 1 * SEC), 0);
    put(t, "", dir, "cpu.stat",
        "usage_usec 2500000\nuser_usec 1\nsystem_usec 1\nnr_periods 0\nnr_throttled 0\n"
        "throttled_usec 0\n");
    put_proc(t, 100, 16384000);
    /* Two seconds: usage_usec +500000 = 0.5 s of CPU, 0.25 cores; no period passed: 0. */
    assert_int_equal(collect_round(c, (const cJSON *const *)pods, 3, T0 + 2000, 3 * SEC), 0);
    assert_true(last(mc, MC_POD_CPU_USAGE, UID2) == 0.25);
    assert_true(last(mc, MC_POD_MEMORY_USAGE, UID2) == 106962944.0);
    assert_true(last(mc, MC_POD_CPU_THROTTLED, UID2) == 0);
    /* The BestEffort pod has no cgroup in this tree: skipped, counted. */
    assert_true(last(mc, MC_POD_CPU_USAGE, UID) < 0);
    /* Node: 100 ticks over 2 s at 100 Hz = 0.5 cores; memory all available: 0. */
    assert_true(last(mc, MC_NODE_CPU_USAGE, NULL) == 0.5);
    assert_true(last(mc, MC_SYS_CPU_USAGE, NULL) == 0.25);
    assert_true(last(mc, MC_SYS_MEMORY_USAGE, NULL) == 0);
    /* Read: the two running pods; sampled: the one with a cgroup. */
    collect_stats(c, &st);
    assert_int_equal(st.tracked, 2);
    assert_int_equal(st.pods, 1);
    collect_free(c);
    mc_free(mc);
    cJSON_Delete(pods[0]);
    cJSON_Delete(pods[1]);
    cJSON_Delete(pods[2]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_v1_cgroupfs, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_v2_systemd, cgt_setup, cgt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
