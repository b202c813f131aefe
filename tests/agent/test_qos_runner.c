/*
 * Tests for agent/qos/runner (reference 3.1, 3.2, 3.3, 3.4): one deterministic tick at a time
 * on prepared cgroup trees (v1 cgroupfs, and one v2), with a metric cache holding chosen usages
 * and NodeSLO JSON inputs; the files written are compared with values computed by hand from the
 * reference formulas. Evictions go to a recording callback here; test_qos_runner_evict.c drives
 * them through a real API server.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "agent/cgroup/cgroup.h"
#include "agent/cgtest.h"
#include "agent/metriccache/metriccache.h"
#include "agent/qos/evict.h"
#include "agent/qos/runner.h"
#include "agent/qosrun.h"

#define NOW    INT64_C(1700000000000)

#define BE_UID "11111111-2222-3333-4444-555555555555"
#define LS_UID "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
#define BE_CID "containerd://be01"
#define LS_CID "containerd://ls01"

/* cgroupfs directories (relative to a hierarchy root). */
#define BE_QOS "kubepods/besteffort"
#define BE_POD BE_QOS "/pod" BE_UID
#define BE_CTR BE_POD "/be01"

struct fx {
    struct cgt *t;
    struct cg_layout l;
    struct mc *mc;
    struct qr_source src;
    struct qos_runner *r;
    char cpuset[CG_PATH_MAX]; /* <cgroup>/cpuset (v1) or <cgroup> (v2) */
    char cpu[CG_PATH_MAX];    /* <cgroup>/cpu (v1) or <cgroup> (v2) */
    /* Evictions seen by the recording callback. */
    char evicted[8][64];
    size_t nevicted;
};

/*
 * 8 logical CPUs, one socket and NUMA node: cpu0-3 are cores 0-3, cpu4-7 their hyper-thread
 * siblings (Linux numbering on x86).
 */
static void put_topology(struct cgt *t)
{
    char rel[128], v[16];

    for (int i = 0; i < 8; i++) {
        (void)snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/core_id", i);
        (void)snprintf(v, sizeof(v), "%d\n", i % 4);
        cgt_put(t->sys, rel, v);
        (void)snprintf(rel, sizeof(rel), "devices/system/cpu/cpu%d/topology/physical_package_id",
                       i);
        cgt_put(t->sys, rel, "0\n");
    }
    cgt_put(t->sys, "devices/system/cpu/online", "0-7\n");
    cgt_put(t->sys, "devices/system/node/node0/cpulist", "0-7\n");
}

/* BE QoS, pod and container cgroups with the full cpuset and no quota. */
static void put_be_tree(struct fx *f)
{
    if (f->l.version == CG_V1) {
        (void)snprintf(f->cpuset, sizeof(f->cpuset), "%s/cpuset", f->t->cgroup);
        (void)snprintf(f->cpu, sizeof(f->cpu), "%s/cpu", f->t->cgroup);
        cgt_put(f->cpuset, BE_QOS "/cpuset.cpus", "0-7\n");
        cgt_put(f->cpuset, BE_POD "/cpuset.cpus", "0-7\n");
        cgt_put(f->cpuset, BE_CTR "/cpuset.cpus", "0-7\n");
        cgt_put(f->cpu, BE_QOS "/cpu.cfs_quota_us", "-1\n");
    } else {
        (void)snprintf(f->cpuset, sizeof(f->cpuset), "%s", f->t->cgroup);
        (void)snprintf(f->cpu, sizeof(f->cpu), "%s", f->t->cgroup);
        cgt_put(f->cpuset, BE_QOS "/cpuset.cpus", "\n");
        cgt_put(f->cpuset, BE_QOS "/cpuset.cpus.effective", "0-7\n");
        cgt_put(f->cpuset, BE_POD "/cpuset.cpus", "\n");
        cgt_put(f->cpuset, BE_POD "/cpuset.cpus.effective", "0-7\n");
        cgt_put(f->cpu, BE_QOS "/cpu.max", "max 100000\n");
    }
}

static int record_evict(void *ctx, const char *feature, const struct qos_pod *pod, int64_t now)
{
    struct fx *f = ctx;
    cJSON *e;
    int i = 0;

    (void)feature;
    (void)now;
    assert_true(f->nevicted < ARRAY_SIZE(f->evicted));
    (void)snprintf(f->evicted[f->nevicted++], sizeof(f->evicted[0]), "%s", pod->name);
    /* Gone from the pod list, as an eviction through the API would make it. */
    cJSON_ArrayForEach(e, f->src.pods)
    {
        const char *uid =
            cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "metadata"), "uid"));

        if (uid && !strcmp(uid, pod->uid)) {
            cJSON_DeleteItemFromArray(f->src.pods, i);
            break;
        }
        i++;
    }
    return 0;
}

static struct fx *fx_new(enum cg_version v, uint32_t features, bool dry_run,
                         enum qos_kubelet_cpu_policy policy)
{
    struct fx *f = xcalloc(1, sizeof(*f));
    struct qos_runner_opts o;

    f->t = cgt_new();
    assert_int_equal(cg_layout_init(&f->l, &f->t->roots, v, CG_DRIVER_CGROUPFS), 0);
    put_topology(f->t);
    put_be_tree(f);
    assert_int_equal(mc_new(NULL, &f->mc), 0);
    f->src.pods = cJSON_CreateArray();
    f->src.node = qr_node("8", "10Gi");
    qr_opts(&o, &f->l, f->mc, &f->src, dry_run, features);
    o.evict = record_evict;
    o.evict_ctx = f;
    o.kubelet_cpu_policy = policy;
    assert_int_equal(qos_runner_new(&o, &f->r), 0);
    return f;
}

static void fx_free(struct fx *f)
{
    qos_runner_free(f->r);
    mc_free(f->mc);
    qr_source_release(&f->src);
    cgt_free(f->t);
    free(f);
}

/* The suppress scene: an LS pod using 2 cores, a BE pod using 0.5, the node 3 cores. */
static void suppress_scene(struct fx *f, int64_t now)
{
    cJSON_AddItemToArray(f->src.pods, qr_pod("ls", LS_UID, "LS", "Burstable", LS_CID,
                                             "{\"requests\":{\"cpu\":\"1\"}}"));
    cJSON_AddItemToArray(f->src.pods, qr_pod("be", BE_UID, "BE", "BestEffort", BE_CID, "{}"));
    assert_int_equal(mc_append(f->mc, MC_NODE_CPU_USAGE, NULL, NULL, now, 3.0), 0);
    assert_int_equal(mc_append(f->mc, MC_POD_CPU_USAGE, LS_UID, NULL, now, 2.0), 0);
    assert_int_equal(mc_append(f->mc, MC_POD_CPU_USAGE, BE_UID, NULL, now, 0.5), 0);
}

#define SLO_SUPPRESS                                                                               \
    "{\"resourceUsedThresholdWithBE\":{\"enable\":true,\"cpuSuppressThresholdPercent\":65}}"
#define SLO_SUPPRESS_QUOTA                                                                         \
    "{\"resourceUsedThresholdWithBE\":{\"enable\":true,\"cpuSuppressThresholdPercent\":65,"        \
    "\"cpuSuppressPolicy\":\"cfsQuota\"}}"

static void test_topology(void **state)
{
    struct fx *f = fx_new(CG_V1, 0, false, QOS_KUBELET_CPU_POLICY_NONE);
    const struct qos_cpu_info *c;
    size_t n;

    (void)state;
    c = qos_runner_cpus(f->r, &n);
    assert_int_equal(n, 8);
    for (int i = 0; i < 8; i++) {
        assert_int_equal(c[i].cpu, i);
        assert_int_equal(c[i].core, i % 4);
        assert_int_equal(c[i].socket, 0);
        assert_int_equal(c[i].node, 0);
    }
    fx_free(f);
}

/* Without sysfs topology the Node's capacity gives CPUs 0 .. n-1. */
static void test_topology_fallback(void **state)
{
    struct fx *f = fx_new(CG_V1, 0, false, QOS_KUBELET_CPU_POLICY_NONE);
    struct qos_runner_opts o;
    struct qos_runner *r;
    struct cgt *bare = cgt_new();
    struct cg_layout l;
    size_t n;

    (void)state;
    assert_int_equal(cg_layout_init(&l, &bare->roots, CG_V1, CG_DRIVER_CGROUPFS), 0);
    qos_runner_opts_init(&o);
    o.layout = &l;
    o.get_node = qr_get_node;
    o.source_ctx = &f->src;
    o.features = 0;
    assert_int_equal(qos_runner_new(&o, &r), 0);
    (void)qos_runner_cpus(r, &n);
    assert_int_equal(n, 0);
    assert_int_equal(qos_runner_tick(r, NOW), 0);
    assert_int_equal(qos_runner_cpus(r, &n)[7].core, 7);
    assert_int_equal(n, 8);
    qos_runner_free(r);
    cgt_free(bare);
    fx_free(f);
}

/*
 * Policy cpuset, kubelet policy none. By hand (reference 3.1):
 *   systemUsed = max(3 - (2 + 0.5), reserved 0) = 0.5 cores; nonBE = 2 cores
 *   suppress   = 8000 x 65 / 100 - 2000 - 0 - 500 = 2700 milli -> n = ceil(2.7) = 3
 *   growth     : n <= 8 + ceil(8 x 0.1) = 9
 *   picker     : one bucket sorted (core, cpu) = 0,4,1,5,2,6,3,7; pair (0,4), then single 1
 *   -> "0-1,4" on the QoS, pod and container dirs (union 0-7 top-down, then new bottom-up);
 *   the BestEffort quota stays -1.
 */
static void test_suppress_cpuset_none(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_BE_CPU_SUPPRESS, false, QOS_KUBELET_CPU_POLICY_NONE);
    struct qos_runner_stats st;
    char b[256];

    (void)state;
    suppress_scene(f, NOW);
    f->src.nodeslo = qr_nodeslo(SLO_SUPPRESS);
    assert_int_equal(qos_runner_tick(f->r, NOW), 0);
    assert_string_equal(qr_file(f->cpuset, BE_QOS "/cpuset.cpus", b), "0-1,4");
    assert_string_equal(qr_file(f->cpuset, BE_POD "/cpuset.cpus", b), "0-1,4");
    assert_string_equal(qr_file(f->cpuset, BE_CTR "/cpuset.cpus", b), "0-1,4");
    assert_string_equal(qr_file(f->cpu, BE_QOS "/cpu.cfs_quota_us", b), "-1");
    qos_runner_stats(f->r, &st);
    assert_int_equal(st.s[QOS_RUNNER_CPU_SUPPRESS].writes, 3);
    assert_int_equal(st.s[QOS_RUNNER_CPU_SUPPRESS].errors, 0);

    /* The same inputs a second later: every value is already there, nothing is rewritten. */
    assert_int_equal(mc_append(f->mc, MC_NODE_CPU_USAGE, NULL, NULL, NOW + 1000, 3.0), 0);
    assert_int_equal(qos_runner_tick(f->r, NOW + 1000), 0);
    qos_runner_stats(f->r, &st);
    assert_int_equal(st.s[QOS_RUNNER_CPU_SUPPRESS].writes, 3);
    assert_true(st.s[QOS_RUNNER_CPU_SUPPRESS].unchanged >= 4);

    /* The LS pod goes idle and the node uses 1 core: systemUsed = max(1 - 0.5, 0) = 0.5,
     * suppress = 5200 - 0 - 500 = 4700 -> n = 5, cut by the growth limit 3 + ceil(0.8) = 4:
     * pairs (0,4), (1,5). */
    assert_int_equal(mc_append(f->mc, MC_NODE_CPU_USAGE, NULL, NULL, NOW + 2000, 1.0), 0);
    assert_int_equal(mc_append(f->mc, MC_POD_CPU_USAGE, LS_UID, NULL, NOW + 2000, 0.0), 0);
    assert_int_equal(mc_append(f->mc, MC_POD_CPU_USAGE, BE_UID, NULL, NOW + 2000, 0.5), 0);
    assert_int_equal(qos_runner_tick(f->r, NOW + 2000), 0);
    assert_string_equal(qr_file(f->cpuset, BE_QOS "/cpuset.cpus", b), "0-1,4-5");
    assert_string_equal(qr_file(f->cpuset, BE_CTR "/cpuset.cpus", b), "0-1,4-5");
    fx_free(f);
}

/* Kubelet policy static: QoS and pod dirs keep the full set, containers get the new one. */
static void test_suppress_cpuset_static(void **state)
{
    struct fx *f =
        fx_new(CG_V1, QOS_RUNNER_F_BE_CPU_SUPPRESS, false, QOS_KUBELET_CPU_POLICY_STATIC);
    char b[256];

    (void)state;
    suppress_scene(f, NOW);
    f->src.nodeslo = qr_nodeslo(SLO_SUPPRESS);
    assert_int_equal(qos_runner_tick(f->r, NOW), 0);
    assert_string_equal(qr_file(f->cpuset, BE_QOS "/cpuset.cpus", b), "0-7");
    assert_string_equal(qr_file(f->cpuset, BE_POD "/cpuset.cpus", b), "0-7");
    assert_string_equal(qr_file(f->cpuset, BE_CTR "/cpuset.cpus", b), "0-1,4");
    fx_free(f);
}

/*
 * Policy cfsQuota: quota = max(2700 x 100000 / 1000, 2000) = 270000 (current -1: no growth
 * limit). Then the node idles: suppress = 5200 - 500 (systemUsed stays 0.5: the BE pod's own
 * 0.5 is subtracted from the node's 1) = 4700 -> 470000, limited to 270000 + 8 x 100000 x 0.1 =
 * 350000. cpusets stay full.
 */
static void test_suppress_cfs_quota(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_BE_CPU_SUPPRESS, false, QOS_KUBELET_CPU_POLICY_NONE);
    char b[256];

    (void)state;
    suppress_scene(f, NOW);
    f->src.nodeslo = qr_nodeslo(SLO_SUPPRESS_QUOTA);
    assert_int_equal(qos_runner_tick(f->r, NOW), 0);
    assert_string_equal(qr_file(f->cpu, BE_QOS "/cpu.cfs_quota_us", b), "270000");
    assert_string_equal(qr_file(f->cpuset, BE_QOS "/cpuset.cpus", b), "0-7");
    assert_string_equal(qr_file(f->cpuset, BE_CTR "/cpuset.cpus", b), "0-7");

    assert_int_equal(mc_append(f->mc, MC_NODE_CPU_USAGE, NULL, NULL, NOW + 1000, 1.0), 0);
    assert_int_equal(mc_append(f->mc, MC_POD_CPU_USAGE, LS_UID, NULL, NOW + 1000, 0.0), 0);
    assert_int_equal(mc_append(f->mc, MC_POD_CPU_USAGE, BE_UID, NULL, NOW + 1000, 0.5), 0);
    assert_int_equal(qos_runner_tick(f->r, NOW + 1000), 0);
    assert_string_equal(qr_file(f->cpu, BE_QOS "/cpu.cfs_quota_us", b), "350000");
    fx_free(f);
}

/* Disabling (resourceUsedThresholdWithBE.enable false, or no NodeSLO) recovers: quota -1 and
 * the full BE cpuset everywhere. */
static void test_suppress_disable_recovers(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_BE_CPU_SUPPRESS, false, QOS_KUBELET_CPU_POLICY_NONE);
    char b[256];

    (void)state;
    suppress_scene(f, NOW);
    f->src.nodeslo = qr_nodeslo(SLO_SUPPRESS);
    assert_int_equal(qos_runner_tick(f->r, NOW), 0);
    assert_string_equal(qr_file(f->cpuset, BE_CTR "/cpuset.cpus", b), "0-1,4");
    cgt_put(f->cpu, BE_QOS "/cpu.cfs_quota_us", "300000\n");

    qr_set(&f->src.nodeslo, qr_nodeslo("{\"resourceUsedThresholdWithBE\":{\"enable\":false}}"));
    assert_int_equal(qos_runner_tick(f->r, NOW + 1000), 0);
    assert_string_equal(qr_file(f->cpuset, BE_QOS "/cpuset.cpus", b), "0-7");
    assert_string_equal(qr_file(f->cpuset, BE_POD "/cpuset.cpus", b), "0-7");
    assert_string_equal(qr_file(f->cpuset, BE_CTR "/cpuset.cpus", b), "0-7");
    assert_string_equal(qr_file(f->cpu, BE_QOS "/cpu.cfs_quota_us", b), "-1");

    /* No NodeSLO at all: the defaults (disabled) keep it recovered. */
    qr_set(&f->src.nodeslo, NULL);
    assert_int_equal(qos_runner_tick(f->r, NOW + 2000), 0);
    assert_string_equal(qr_file(f->cpuset, BE_CTR "/cpuset.cpus", b), "0-7");
    fx_free(f);
}

/* A NodeSLO that fails to decode keeps the last good configuration (still suppressing). */
static void test_bad_nodeslo_keeps_last_good(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_BE_CPU_SUPPRESS, false, QOS_KUBELET_CPU_POLICY_NONE);
    struct qos_runner_stats st;
    char b[256];

    (void)state;
    suppress_scene(f, NOW);
    f->src.nodeslo = qr_nodeslo(SLO_SUPPRESS);
    assert_int_equal(qos_runner_tick(f->r, NOW), 0);
    qr_set(&f->src.nodeslo, qr_nodeslo("{\"resourceUsedThresholdWithBE\":{\"enable\":\"yes\"}}"));
    assert_int_equal(qos_runner_tick(f->r, NOW + 1000), 0);
    assert_int_equal(qos_runner_tick(f->r, NOW + 1500), 0);
    assert_string_equal(qr_file(f->cpuset, BE_CTR "/cpuset.cpus", b), "0-1,4");
    qos_runner_stats(f->r, &st);
    assert_int_equal(st.nodeslo_errors, 2);
    assert_int_equal(st.ticks, 3);
    fx_free(f);
}

/* Dry run: the writes are counted, the files untouched. */
static void test_dry_run(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_BE_CPU_SUPPRESS, true, QOS_KUBELET_CPU_POLICY_NONE);
    struct qos_runner_stats st;
    char b[256];

    (void)state;
    suppress_scene(f, NOW);
    f->src.nodeslo = qr_nodeslo(SLO_SUPPRESS_QUOTA);
    assert_int_equal(qos_runner_tick(f->r, NOW), 0);
    assert_string_equal(qr_file(f->cpu, BE_QOS "/cpu.cfs_quota_us", b), "-1");
    qos_runner_stats(f->r, &st);
    assert_int_equal(st.s[QOS_RUNNER_CPU_SUPPRESS].writes, 0);
    assert_int_equal(st.s[QOS_RUNNER_CPU_SUPPRESS].dry_run, 1);
    fx_free(f);
}

/* cgroup v2: the quota goes to cpu.max with the period kept. */
static void test_suppress_v2(void **state)
{
    struct fx *f = fx_new(CG_V2, QOS_RUNNER_F_BE_CPU_SUPPRESS, false, QOS_KUBELET_CPU_POLICY_NONE);
    char b[256];

    (void)state;
    suppress_scene(f, NOW);
    f->src.nodeslo = qr_nodeslo(SLO_SUPPRESS_QUOTA);
    assert_int_equal(qos_runner_tick(f->r, NOW), 0);
    assert_string_equal(qr_file(f->cpu, BE_QOS "/cpu.max", b), "270000 100000");

    /* Policy cpuset on v2: the new set is written to cpuset.cpus (read from .effective). */
    qr_set(&f->src.nodeslo, qr_nodeslo(SLO_SUPPRESS));
    assert_int_equal(qos_runner_tick(f->r, NOW + 500), 0);
    assert_string_equal(qr_file(f->cpuset, BE_POD "/cpuset.cpus", b), "0-1,4");
    assert_string_equal(qr_file(f->cpu, BE_QOS "/cpu.max", b), "max 100000");
    fx_free(f);
}

/*
 * CPU burst, cfs_burst_us: a Burstable pod with one container limited to 2 cores under
 * cpuBurstOnly at 1000 %: 2 x 1000 / 100 x 100000 = 2000000 us on the container and the pod.
 * Back to the default policy (none): 0. A kernel without the file: unsupported, logged once.
 */
static void test_cpu_burst(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_CPU_BURST, false, QOS_KUBELET_CPU_POLICY_NONE);
    struct qos_runner_stats st;
    struct cgt_pod tp;
    char b[CG_PATH_MAX];

    (void)state;
    cgt_pod_tree(f->t, CG_V1, CG_DRIVER_CGROUPFS, &tp);
    cgt_put_cg(&f->l, "cpu", tp.ctr, "cpu.cfs_burst_us", "0\n");
    cJSON_AddItemToArray(f->src.pods,
                         qr_pod("web", CGT_UID, "", "Burstable", CGT_CID,
                                "{\"limits\":{\"cpu\":\"2\"},\"requests\":{\"cpu\":\"1\"}}"));
    f->src.nodeslo = qr_nodeslo("{\"cpuBurstStrategy\":{\"policy\":\"cpuBurstOnly\"}}");
    assert_int_equal(qos_runner_tick(f->r, NOW), 0);
    {
        char dir[CG_PATH_MAX];

        assert_true(cg_dir_path(&f->l, "cpu", tp.ctr, dir, sizeof(dir)) > 0);
        assert_string_equal(qr_file(dir, "cpu.cfs_burst_us", b), "2000000");
        assert_true(cg_dir_path(&f->l, "cpu", tp.pod, dir, sizeof(dir)) > 0);
        assert_string_equal(qr_file(dir, "cpu.cfs_burst_us", b), "2000000");

        /* Without a NodeSLO upstream does nothing: the value stays. */
        qr_set(&f->src.nodeslo, NULL);
        assert_int_equal(qos_runner_tick(f->r, NOW + 1000), 0);
        assert_string_equal(qr_file(dir, "cpu.cfs_burst_us", b), "2000000");
        qr_set(&f->src.nodeslo, qr_nodeslo("{\"cpuBurstStrategy\":{\"policy\":\"none\"}}"));
        assert_int_equal(qos_runner_tick(f->r, NOW + 1500), 0);
        assert_string_equal(qr_file(dir, "cpu.cfs_burst_us", b), "0");

        /* The container's file absent: counted as unsupported on each tick, no error. */
        assert_true(cg_dir_path(&f->l, "cpu", tp.ctr, dir, sizeof(dir)) > 0);
        assert_int_equal(unlink(cgt_join(b, dir, "cpu.cfs_burst_us")), 0);
    }
    assert_int_equal(qos_runner_tick(f->r, NOW + 2000), 0);
    assert_int_equal(qos_runner_tick(f->r, NOW + 3000), 0);
    qos_runner_stats(f->r, &st);
    assert_int_equal(st.s[QOS_RUNNER_CPU_BURST].unsupported, 2);
    assert_int_equal(st.s[QOS_RUNNER_CPU_BURST].errors, 0);
    assert_int_equal(st.s[QOS_RUNNER_CPU_BURST].writes, 4);
    fx_free(f);
}

#define SLO_MEMEVICT                                                                               \
    "{\"resourceUsedThresholdWithBE\":{\"enable\":true,\"memoryEvictThresholdPercent\":70}}"

static void mem_usage(struct fx *f, int64_t now, const char *uid, double bytes)
{
    assert_int_equal(
        mc_append(f->mc, uid ? MC_POD_MEMORY_USAGE : MC_NODE_MEMORY_USAGE, uid, NULL, now, bytes),
        0);
}

/*
 * BEMemoryEvict: node 8Gi used of 10Gi -> 80 % >= 70; lower 68; release = 10Gi x 12 / 100 =
 * 1.2Gi. BE victims by usage: be-2 (2Gi) first, which covers it: only be-2 goes. The LS pod,
 * the largest user, is never a BE victim. Cool-down 4 s: at +1 s and +3.999 s nothing, at +4 s
 * be-1 (1Gi) goes; then no BE pod is left and the LS pod stays.
 */
static void test_memory_evict(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_BE_MEMORY_EVICT, false, QOS_KUBELET_CPU_POLICY_NONE);
    const int64_t ts[] = {NOW, NOW + 1000, NOW + 3999, NOW + 4000, NOW + 9000};
    const size_t want[] = {1, 1, 1, 2, 2};
    struct qos_runner_stats st;

    (void)state;
    cJSON_AddItemToArray(f->src.pods, qr_pod("ls", LS_UID, "LS", "Burstable", LS_CID, "{}"));
    cJSON_AddItemToArray(f->src.pods, qr_pod("be-1", "b1", "BE", "BestEffort", "", "{}"));
    cJSON_AddItemToArray(f->src.pods, qr_pod("be-2", "b2", "BE", "BestEffort", "", "{}"));
    f->src.nodeslo = qr_nodeslo(SLO_MEMEVICT);
    for (size_t i = 0; i < ARRAY_SIZE(ts); i++) {
        mem_usage(f, ts[i], NULL, 8.0 * (double)QR_GI);
        mem_usage(f, ts[i], LS_UID, 5.0 * (double)QR_GI);
        mem_usage(f, ts[i], "b1", 1.0 * (double)QR_GI);
        mem_usage(f, ts[i], "b2", 2.0 * (double)QR_GI);
        assert_int_equal(qos_runner_tick(f->r, ts[i]), 0);
        assert_int_equal(f->nevicted, want[i]);
    }
    assert_string_equal(f->evicted[0], "be-2");
    assert_string_equal(f->evicted[1], "be-1");
    assert_int_equal(cJSON_GetArraySize(f->src.pods), 1);
    qos_runner_stats(f->r, &st);
    assert_int_equal(st.s[QOS_RUNNER_MEMORY_EVICT].evictions, 2);
    fx_free(f);
}

/* Below the threshold (69 %) nothing is evicted; the feature gate off: nothing either. */
static void test_memory_evict_below(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_BE_MEMORY_EVICT, false, QOS_KUBELET_CPU_POLICY_NONE);
    struct fx *g = fx_new(CG_V1, 0, false, QOS_KUBELET_CPU_POLICY_NONE);

    (void)state;
    cJSON_AddItemToArray(f->src.pods, qr_pod("be-1", "b1", "BE", "BestEffort", "", "{}"));
    f->src.nodeslo = qr_nodeslo(SLO_MEMEVICT);
    mem_usage(f, NOW, NULL, 0.6999 * 10.0 * (double)QR_GI);
    mem_usage(f, NOW, "b1", 1.0 * (double)QR_GI);
    assert_int_equal(qos_runner_tick(f->r, NOW), 0);
    assert_int_equal(f->nevicted, 0);

    cJSON_AddItemToArray(g->src.pods, qr_pod("be-1", "b1", "BE", "BestEffort", "", "{}"));
    g->src.nodeslo = qr_nodeslo(SLO_MEMEVICT);
    mem_usage(g, NOW, NULL, 9.0 * (double)QR_GI);
    mem_usage(g, NOW, "b1", 1.0 * (double)QR_GI);
    assert_int_equal(qos_runner_tick(g->r, NOW), 0);
    assert_int_equal(g->nevicted, 0);
    fx_free(f);
    fx_free(g);
}

#define BATCH_RES "{\"requests\":{\"kubernetes.io/batch-cpu\":\"1000\"}}"

/*
 * BECPUEvict (reference 3.3) over a 10 s window: BE usage 950, request 4000, real limit 1000
 * milli-cores at every second. usage / limit = 0.95 >= 0.9; satisfaction = 1000 / 4000 = 0.25 <=
 * lower 0.4; release = 4000 x (0.6 - 0.25) = 1400 milli batch-cpu. Victims by cpu / batch-cpu
 * request: be-a (0.9 cores / 1000) then be-b (0.1) then be-c (0.05); each releases its 1000:
 * be-a and be-b go, be-c stays. The first tick starts the 20 s cool-down; the eviction restarts
 * it.
 */
static void test_be_cpu_evict(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_BE_CPU_EVICT, false, QOS_KUBELET_CPU_POLICY_NONE);
    const int64_t ticks[] = {NOW, NOW + 19000, NOW + 20000, NOW + 39000};
    const size_t want[] = {0, 0, 2, 2};
    size_t k = 0;

    (void)state;
    cJSON_AddItemToArray(f->src.pods, qr_pod("be-a", "ba", "BE", "BestEffort", "", BATCH_RES));
    cJSON_AddItemToArray(f->src.pods, qr_pod("be-b", "bb", "BE", "BestEffort", "", BATCH_RES));
    cJSON_AddItemToArray(f->src.pods, qr_pod("be-c", "bc", "BE", "BestEffort", "", BATCH_RES));
    cJSON_AddItemToArray(f->src.pods, qr_pod("ls", LS_UID, "LS", "Burstable", "", "{}"));
    f->src.nodeslo = qr_nodeslo(
        "{\"resourceUsedThresholdWithBE\":{\"enable\":true,"
        "\"cpuEvictBESatisfactionLowerPercent\":40,\"cpuEvictBESatisfactionUpperPercent\":60,"
        "\"cpuEvictTimeWindowSeconds\":10}}");
    for (int64_t t = NOW - 10000; t <= NOW + 39000; t += 1000) {
        assert_int_equal(mc_append(f->mc, MC_NODE_BE, MC_BE_CPU_USAGE, NULL, t, 950), 0);
        assert_int_equal(mc_append(f->mc, MC_NODE_BE, MC_BE_CPU_REQUEST, NULL, t, 4000), 0);
        assert_int_equal(mc_append(f->mc, MC_NODE_BE, MC_BE_CPU_REAL_LIMIT, NULL, t, 1000), 0);
        assert_int_equal(mc_append(f->mc, MC_NODE_CPU_USAGE, NULL, NULL, t, 6.0), 0);
        assert_int_equal(mc_append(f->mc, MC_POD_CPU_USAGE, "ba", NULL, t, 0.9), 0);
        assert_int_equal(mc_append(f->mc, MC_POD_CPU_USAGE, "bb", NULL, t, 0.1), 0);
        assert_int_equal(mc_append(f->mc, MC_POD_CPU_USAGE, "bc", NULL, t, 0.05), 0);
        assert_int_equal(mc_append(f->mc, MC_POD_CPU_USAGE, LS_UID, NULL, t, 4.0), 0);
        if (k < ARRAY_SIZE(ticks) && t == ticks[k]) {
            assert_int_equal(qos_runner_tick(f->r, t), 0);
            assert_int_equal(f->nevicted, want[k]);
            k++;
        }
    }
    assert_int_equal(k, ARRAY_SIZE(ticks));
    assert_string_equal(f->evicted[0], "be-a");
    assert_string_equal(f->evicted[1], "be-b");
    fx_free(f);
}

/* The counters render as Prometheus text. */
static void test_render(void **state)
{
    struct qos_runner_stats st;
    struct strbuf out = STRBUF_INIT;

    (void)state;
    memset(&st, 0, sizeof(st));
    st.ticks = 3;
    st.s[QOS_RUNNER_CPU_BURST].writes = 7;
    qos_runner_render_metrics(&st, &out);
    assert_non_null(strstr(out.buf, "koord_agent_qos_ticks_total 3\n"));
    assert_non_null(strstr(
        out.buf, "koord_agent_qos_actions_total{strategy=\"cpu_burst\",action=\"writes\"} 7\n"));
    strbuf_release(&out);
}

/* The thread ticks on its own and stops promptly. */
/*
 * Each strategy on its own interval: suppress every 3 s, memory eviction every 2 s, CPU
 * eviction at the 1 s default, the reconcile ones (burst, QoS, ...) every 1 s.
 */
static void test_intervals(void **state)
{
    const uint32_t all = (1u << QOS_RUNNER_STRATEGY_COUNT) - 1;
    const uint32_t suppress = 1u << QOS_RUNNER_CPU_SUPPRESS;
    const uint32_t memevict = 1u << QOS_RUNNER_MEMORY_EVICT;
    const uint32_t every_second = all & ~suppress & ~memevict;
    struct qos_runner_opts o;
    struct qos_runner *r = NULL;
    struct cg_layout l;
    struct cgt *t = cgt_new();
    int64_t next = 0;

    (void)state;
    assert_int_equal(cg_layout_init(&l, &t->roots, CG_V1, CG_DRIVER_CGROUPFS), 0);
    qos_runner_opts_init(&o);
    o.layout = &l;
    o.cpu_suppress_interval_ms = 3000;
    o.memory_evict_interval_ms = 2000;
    assert_int_equal(qos_runner_new(&o, &r), 0);
    /* All at first, then each when its time comes. */
    assert_int_equal(qos_runner_due(r, 10000, &next), all);
    assert_int_equal(next, 11000);
    assert_int_equal(qos_runner_due(r, 10999, &next), 0);
    assert_int_equal(next, 11000);
    assert_int_equal(qos_runner_due(r, 11000, &next), every_second);
    assert_int_equal(next, 12000);
    /* A late wake-up (12.4 s) keeps the schedule: the next is still at 13 s. */
    assert_int_equal(qos_runner_due(r, 12400, &next), every_second | memevict);
    assert_int_equal(next, 13000);
    assert_int_equal(qos_runner_due(r, 13000, &next), every_second | suppress);
    assert_int_equal(next, 14000);
    /* A stall of 10 s: each runs once, and is next due one interval later. */
    assert_int_equal(qos_runner_due(r, 24000, &next), all);
    assert_int_equal(next, 25000);
    assert_int_equal(qos_runner_due(r, 25000, &next), every_second);
    assert_int_equal(qos_runner_due(r, 26000, &next), every_second | memevict);
    assert_int_equal(qos_runner_due(r, 27000, &next), every_second | suppress);
    /* Only the strategies asked for run: a tick of none counts a tick and writes nothing. */
    assert_int_equal(qos_runner_tick_some(r, NOW, 0), 0);
    qos_runner_free(r);
    cgt_free(t);
}

static void test_start_stop(void **state)
{
    struct fx *f = fx_new(CG_V1, 0, false, QOS_KUBELET_CPU_POLICY_NONE);
    struct qos_runner_stats st;

    (void)state;
    assert_int_equal(qos_runner_start(f->r), 0);
    assert_int_equal(qos_runner_start(f->r), -EALREADY);
    /* The first tick runs at once on start; wait for it (bounded), then stop. */
    for (int i = 0; i < 2000; i++) {
        struct timespec step = {0, 5000000};

        qos_runner_stats(f->r, &st);
        if (st.ticks >= 1)
            break;
        (void)nanosleep(&step, NULL);
    }
    qos_runner_stop(f->r);
    qos_runner_stop(f->r);
    qos_runner_stats(f->r, &st);
    assert_true(st.ticks >= 1);
    fx_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_topology),
        cmocka_unit_test(test_intervals),
        cmocka_unit_test(test_topology_fallback),
        cmocka_unit_test(test_suppress_cpuset_none),
        cmocka_unit_test(test_suppress_cpuset_static),
        cmocka_unit_test(test_suppress_cfs_quota),
        cmocka_unit_test(test_suppress_disable_recovers),
        cmocka_unit_test(test_bad_nodeslo_keeps_last_good),
        cmocka_unit_test(test_dry_run),
        cmocka_unit_test(test_suppress_v2),
        cmocka_unit_test(test_cpu_burst),
        cmocka_unit_test(test_memory_evict),
        cmocka_unit_test(test_memory_evict_below),
        cmocka_unit_test(test_be_cpu_evict),
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_start_stop),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
