/*
 * Tests for the pod-level strategies of agent/qos/runner: CFS quota burst (reference 3.4),
 * memory QoS (3.5) and batch resources (3.9). Each runs on prepared cgroup v1 and v2 trees
 * (cgroupfs naming) with chosen usages in a metric cache and NodeSLO JSON inputs; the file
 * contents written are compared with values computed by hand from the reference formulas in
 * the comments, and the counters say what was written, skipped as unchanged, logged in dry-run
 * mode or missing from the kernel.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/cgroup/cgroup.h"
#include "agent/cgtest.h"
#include "agent/metriccache/metriccache.h"
#include "agent/qos/runner.h"
#include "agent/qosrun.h"

#define NOW     INT64_C(1700000000000)
#define GI      "1073741824"

#define WEB_UID "0a0a0a0a-1111-2222-3333-444444444444"
#define WEB_CID "containerd://web01"
#define LS_UID  "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
#define LS_CID  "containerd://ls01"
#define BE_UID  "11111111-2222-3333-4444-555555555555"
#define BE_CID  "containerd://be01"
#define BE2_UID "66666666-7777-8888-9999-000000000000"
#define BE2_CID "containerd://be02"

/* cgroupfs directories, relative to a hierarchy root. */
#define ROOT    "kubepods"
#define BU_QOS  "kubepods/burstable"
#define BE_QOS  "kubepods/besteffort"
#define WEB_POD BU_QOS "/pod" WEB_UID
#define WEB_CTR WEB_POD "/web01"
#define LS_POD  BU_QOS "/pod" LS_UID
#define LS_CTR  LS_POD "/ls01"
#define BE_POD  BE_QOS "/pod" BE_UID
#define BE_CTR  BE_POD "/be01"
#define BE2_POD BE_QOS "/pod" BE2_UID
#define BE2_CTR BE2_POD "/be02"

static const enum cg_version versions[] = {CG_V1, CG_V2};

struct fx {
    struct cgt *t;
    struct cg_layout l;
    struct mc *mc;
    struct qr_source src;
    struct qos_runner *r;
};

static struct fx *fx_new(enum cg_version v, uint32_t features, bool dry_run)
{
    struct fx *f = xcalloc(1, sizeof(*f));
    struct qos_runner_opts o;

    f->t = cgt_new();
    assert_int_equal(cg_layout_init(&f->l, &f->t->roots, v, CG_DRIVER_CGROUPFS), 0);
    assert_int_equal(mc_new(NULL, &f->mc), 0);
    f->src.pods = cJSON_CreateArray();
    f->src.node = qr_node("8", "10Gi");
    qr_opts(&o, &f->l, f->mc, &f->src, dry_run, features);
    o.random_seed = 42;
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

static void put(struct fx *f, const char *subsys, const char *dir, const char *file,
                const char *content)
{
    cgt_put_cg(&f->l, subsys, dir, file, content);
}

/* The file's content without its trailing newline, in buf[256]. */
static const char *get(struct fx *f, const char *subsys, const char *dir, const char *file,
                       char *buf)
{
    char d[CG_PATH_MAX];

    assert_true(cg_dir_path(&f->l, subsys, dir, d, sizeof(d)) > 0);
    return qr_file(d, file, buf);
}

static bool file_exists(struct fx *f, const char *subsys, const char *dir, const char *file)
{
    char d[CG_PATH_MAX], p[CG_PATH_MAX];
    struct stat st;

    assert_true(cg_dir_path(&f->l, subsys, dir, d, sizeof(d)) > 0);
    return stat(cgt_join(p, d, file), &st) == 0;
}

/* ---- cfs quota ---- */

static const char *quota_file(const struct fx *f)
{
    return f->l.version == CG_V1 ? "cpu.cfs_quota_us" : "cpu.max";
}

/* The quota as the file says it: v1 "<q>" (-1 unlimited), v2 "<q|max> 100000". */
static const char *quota_text(const struct fx *f, const char *q, char *buf)
{
    if (f->l.version == CG_V1)
        (void)snprintf(buf, 64, "%s", !strcmp(q, "max") ? "-1" : q);
    else
        (void)snprintf(buf, 64, "%s 100000", q);
    return buf;
}

static void put_quota(struct fx *f, const char *dir, const char *q)
{
    char b[64];

    put(f, "cpu", dir, quota_file(f), quota_text(f, q, b));
}

static void expect_quota(struct fx *f, const char *dir, const char *q)
{
    char b[256], want[64];

    assert_string_equal(get(f, "cpu", dir, quota_file(f), b), quota_text(f, q, want));
}

/*
 * CFS quota burst: an unlabelled Burstable pod "web", one running container limited to 2 cores
 * (request 1): base = 2000 x 100 = 200000 us, ceil at cfsQuotaBurstPercent 300 = 600000; the pod
 * and the container both start at 200000 (kubelet's values). 8 CPUs (from the Node's capacity).
 */
static struct fx *burst_fx(enum cg_version v, bool dry_run)
{
    struct fx *f = fx_new(v, QOS_RUNNER_F_CPU_BURST, dry_run);

    put_quota(f, WEB_POD, "200000");
    put_quota(f, WEB_CTR, "200000");
    put(f, "cpu", WEB_POD, v == CG_V1 ? "cpu.cfs_burst_us" : "cpu.max.burst", "0\n");
    put(f, "cpu", WEB_CTR, v == CG_V1 ? "cpu.cfs_burst_us" : "cpu.max.burst", "0\n");
    cJSON_AddItemToArray(f->src.pods,
                         qr_pod("web", WEB_UID, "", "Burstable", WEB_CID,
                                "{\"limits\":{\"cpu\":\"2\"},\"requests\":{\"cpu\":\"1\"}}"));
    return f;
}

/* The node's CPU usage and the container's throttled ratio at ts. */
static void burst_sample(struct fx *f, int64_t ts, double node_cores, double throttled)
{
    if (node_cores >= 0)
        assert_int_equal(mc_append(f->mc, MC_NODE_CPU_USAGE, NULL, NULL, ts, node_cores), 0);
    assert_int_equal(mc_append(f->mc, MC_CONTAINER_CPU_THROTTLED, WEB_CID, WEB_UID, ts, throttled),
                     0);
}

#define SLO_QUOTA_BURST "{\"cpuBurstStrategy\":{\"policy\":\"cfsQuotaBurstOnly\"}}"

/*
 * By hand (reference 3.4), sharePoolThresholdPercent 50 (cooling from 45 %), no LSE/LSR/BE pod:
 *   t0   node 2 cores over the 5 s window: 2 / 8 = 25 % -> idle; throttled 0.3 -> scale up:
 *        200000 x 1.2 = 240000; the pod moves by the same +40000 -> 240000 (pod first)
 *   t1   the same: 240000 x 1.2 = 288000, pod 288000
 *   t2   no node sample in the window: unknown -> scale up becomes remain: nothing written
 *   t3   node 7 cores over the window: 87.5 % >= 50 % -> overload -> scale down:
 *        288000 x 0.8 = 230400 (container first), pod 288000 - 57600 = 230400
 *   t4   policy none -> reset to the base: 200000, pod 200000
 *   t5   the same again: the target equals the file, nothing is written
 *   t6   no NodeSLO, then one without cpuBurstStrategy: nothing written (a quota set to
 *        unlimited meanwhile stays so)
 */
static void test_cfs_quota_burst(void **state)
{
    (void)state;
    for (size_t vi = 0; vi < ARRAY_SIZE(versions); vi++) {
        struct fx *f = burst_fx(versions[vi], false);
        struct qos_runner_stats st;

        f->src.nodeslo = qr_nodeslo(SLO_QUOTA_BURST);
        burst_sample(f, NOW, 2.0, 0.3);
        assert_int_equal(qos_runner_tick(f->r, NOW), 0);
        expect_quota(f, WEB_CTR, "240000");
        expect_quota(f, WEB_POD, "240000");

        burst_sample(f, NOW + 1000, 2.0, 0.3);
        assert_int_equal(qos_runner_tick(f->r, NOW + 1000), 0);
        expect_quota(f, WEB_CTR, "288000");
        expect_quota(f, WEB_POD, "288000");

        /* 7 s later the window [t - 5 s, t] holds no node sample. */
        burst_sample(f, NOW + 8000, -1, 0.3);
        assert_int_equal(qos_runner_tick(f->r, NOW + 8000), 0);
        expect_quota(f, WEB_CTR, "288000");
        expect_quota(f, WEB_POD, "288000");

        for (int64_t ts = NOW + 9000; ts <= NOW + 12000; ts += 1000)
            assert_int_equal(mc_append(f->mc, MC_NODE_CPU_USAGE, NULL, NULL, ts, 7.0), 0);
        burst_sample(f, NOW + 13000, 7.0, 0.3);
        assert_int_equal(qos_runner_tick(f->r, NOW + 13000), 0);
        expect_quota(f, WEB_CTR, "230400");
        expect_quota(f, WEB_POD, "230400");

        qr_set(&f->src.nodeslo, qr_nodeslo("{\"cpuBurstStrategy\":{\"policy\":\"none\"}}"));
        burst_sample(f, NOW + 14000, 7.0, 0.3);
        assert_int_equal(qos_runner_tick(f->r, NOW + 14000), 0);
        expect_quota(f, WEB_CTR, "200000");
        expect_quota(f, WEB_POD, "200000");

        burst_sample(f, NOW + 15000, 7.0, 0.3);
        assert_int_equal(qos_runner_tick(f->r, NOW + 15000), 0);
        /* No NodeSLO (or none with the strategy): upstream does nothing, nor do we, even to a
         * quota someone else changed. */
        put_quota(f, WEB_CTR, "max");
        qr_set(&f->src.nodeslo, NULL);
        burst_sample(f, NOW + 16000, 7.0, 0.3);
        assert_int_equal(qos_runner_tick(f->r, NOW + 16000), 0);
        expect_quota(f, WEB_CTR, "max");
        qr_set(&f->src.nodeslo, qr_nodeslo("{\"cpuBurstStrategy\":null}"));
        assert_int_equal(qos_runner_tick(f->r, NOW + 17000), 0);
        expect_quota(f, WEB_CTR, "max");
        qos_runner_stats(f->r, &st);
        assert_int_equal(st.s[QOS_RUNNER_CFS_QUOTA_BURST].writes, 8);
        assert_int_equal(st.s[QOS_RUNNER_CFS_QUOTA_BURST].errors, 0);
        assert_int_equal(st.s[QOS_RUNNER_CFS_QUOTA_BURST].unsupported, 0);
        expect_quota(f, WEB_POD, "200000");
        fx_free(f);
    }
}

/*
 * The limiter (cfsQuotaBurstPeriodSeconds 10, percent 300): capacity 10 x (300 - 100) = 2000,
 * initial tokens random in [0, 1000). The container uses 3 of its 2 cores (150 %): each second
 * costs 150 - 100 = 50 tokens. The first tick, not throttled and at the base, cannot move it
 * whatever the tokens (scale down or remain both end at the base). 20 s later 1000 tokens are
 * gone:
 * tokens < 0, burst denied -> scale down although throttled: a quota raised by hand to 400000
 * goes to 320000, the pod likewise (400000 - 80000).
 */
static void test_cfs_quota_burst_limiter(void **state)
{
    (void)state;
    for (size_t vi = 0; vi < ARRAY_SIZE(versions); vi++) {
        struct fx *f = burst_fx(versions[vi], false);

        f->src.nodeslo = qr_nodeslo("{\"cpuBurstStrategy\":{\"policy\":\"auto\","
                                    "\"cfsQuotaBurstPeriodSeconds\":10}}");
        burst_sample(f, NOW, 2.0, 0);
        assert_int_equal(mc_append(f->mc, MC_CONTAINER_CPU_USAGE, WEB_CID, WEB_UID, NOW, 3.0), 0);
        assert_int_equal(qos_runner_tick(f->r, NOW), 0);
        expect_quota(f, WEB_CTR, "200000");

        put_quota(f, WEB_POD, "400000");
        put_quota(f, WEB_CTR, "400000");
        burst_sample(f, NOW + 20000, 2.0, 0.3);
        assert_int_equal(
            mc_append(f->mc, MC_CONTAINER_CPU_USAGE, WEB_CID, WEB_UID, NOW + 20000, 3.0), 0);
        assert_int_equal(qos_runner_tick(f->r, NOW + 20000), 0);
        expect_quota(f, WEB_CTR, "320000");
        expect_quota(f, WEB_POD, "320000");
        fx_free(f);
    }
}

#define MULTI_UID "99999999-aaaa-bbbb-cccc-dddddddddddd"
#define MULTI_POD BU_QOS "/pod" MULTI_UID

/* An unlabelled Burstable pod with containers ma, mb (running) and mc (waiting to restart),
 * each limited to 1 core. */
static cJSON *multi_pod(void)
{
    static const char json[] =
        "{\"metadata\":{\"name\":\"multi\",\"namespace\":\"default\",\"uid\":\"" MULTI_UID "\"},"
        "\"spec\":{\"containers\":["
        "{\"name\":\"a\",\"resources\":{\"limits\":{\"cpu\":\"1\"}}},"
        "{\"name\":\"b\",\"resources\":{\"limits\":{\"cpu\":\"1\"}}},"
        "{\"name\":\"c\",\"resources\":{\"limits\":{\"cpu\":\"1\"}}}]},"
        "\"status\":{\"phase\":\"Running\",\"qosClass\":\"Burstable\",\"containerStatuses\":["
        "{\"name\":\"a\",\"containerID\":\"containerd://ma\",\"state\":{\"running\":{}}},"
        "{\"name\":\"b\",\"containerID\":\"containerd://mb\",\"state\":{\"running\":{}}},"
        "{\"name\":\"c\",\"containerID\":\"containerd://mc\",\"state\":{\"waiting\":{}}}]}}";
    cJSON *o = cJSON_Parse(json);

    assert_non_null(o);
    return o;
}

/*
 * Containers of one pod move the pod's quota one after the other, and a container that is not
 * running is skipped: base 100000 each, pod 300000 (kubelet's sum). All throttled, node idle:
 * ma 100000 -> 120000 (pod 300000 -> 320000), mb -> 120000 (pod -> 340000), mc stays 100000.
 */
static void test_cfs_quota_burst_containers(void **state)
{
    (void)state;
    for (size_t vi = 0; vi < ARRAY_SIZE(versions); vi++) {
        struct fx *f = fx_new(versions[vi], QOS_RUNNER_F_CPU_BURST, false);
        static const char *const ids[] = {"containerd://ma", "containerd://mb", "containerd://mc"};

        put_quota(f, MULTI_POD, "300000");
        put_quota(f, MULTI_POD "/ma", "100000");
        put_quota(f, MULTI_POD "/mb", "100000");
        put_quota(f, MULTI_POD "/mc", "100000");
        cJSON_AddItemToArray(f->src.pods, multi_pod());
        f->src.nodeslo = qr_nodeslo(SLO_QUOTA_BURST);
        assert_int_equal(mc_append(f->mc, MC_NODE_CPU_USAGE, NULL, NULL, NOW, 2.0), 0);
        for (size_t i = 0; i < ARRAY_SIZE(ids); i++)
            assert_int_equal(
                mc_append(f->mc, MC_CONTAINER_CPU_THROTTLED, ids[i], MULTI_UID, NOW, 0.5), 0);
        assert_int_equal(qos_runner_tick(f->r, NOW), 0);
        expect_quota(f, MULTI_POD "/ma", "120000");
        expect_quota(f, MULTI_POD "/mb", "120000");
        expect_quota(f, MULTI_POD "/mc", "100000");
        expect_quota(f, MULTI_POD, "340000");
        fx_free(f);
    }
}

/* Dry run: the two writes of the first scale-up are counted, the files keep 200000. */
static void test_cfs_quota_burst_dry_run(void **state)
{
    (void)state;
    for (size_t vi = 0; vi < ARRAY_SIZE(versions); vi++) {
        struct fx *f = burst_fx(versions[vi], true);
        struct qos_runner_stats st;

        f->src.nodeslo = qr_nodeslo(SLO_QUOTA_BURST);
        burst_sample(f, NOW, 2.0, 0.3);
        assert_int_equal(qos_runner_tick(f->r, NOW), 0);
        expect_quota(f, WEB_CTR, "200000");
        expect_quota(f, WEB_POD, "200000");
        qos_runner_stats(f->r, &st);
        assert_int_equal(st.s[QOS_RUNNER_CFS_QUOTA_BURST].dry_run, 2);
        assert_int_equal(st.s[QOS_RUNNER_CFS_QUOTA_BURST].writes, 0);
        fx_free(f);
    }
}

/* LSR, LSE and BE pods, and the gate off, are left alone. */
static void test_cfs_quota_burst_skips(void **state)
{
    struct fx *f = burst_fx(CG_V1, false);
    struct fx *g = fx_new(CG_V1, 0, false);
    struct qos_runner_stats st;

    (void)state;
    /* The web pod labelled LSR. */
    qr_set(&f->src.pods, cJSON_CreateArray());
    cJSON_AddItemToArray(f->src.pods, qr_pod("web", WEB_UID, "LSR", "Burstable", WEB_CID,
                                             "{\"limits\":{\"cpu\":\"2\"}}"));
    f->src.nodeslo = qr_nodeslo(SLO_QUOTA_BURST);
    burst_sample(f, NOW, 2.0, 0.3);
    assert_int_equal(qos_runner_tick(f->r, NOW), 0);
    expect_quota(f, WEB_CTR, "200000");

    put_quota(g, WEB_POD, "200000");
    put_quota(g, WEB_CTR, "200000");
    cJSON_AddItemToArray(g->src.pods, qr_pod("web", WEB_UID, "", "Burstable", WEB_CID,
                                             "{\"limits\":{\"cpu\":\"2\"}}"));
    g->src.nodeslo = qr_nodeslo(SLO_QUOTA_BURST);
    burst_sample(g, NOW, 2.0, 0.3);
    assert_int_equal(qos_runner_tick(g->r, NOW), 0);
    expect_quota(g, WEB_CTR, "200000");
    qos_runner_stats(g->r, &st);
    assert_int_equal(st.s[QOS_RUNNER_CFS_QUOTA_BURST].writes, 0);
    fx_free(f);
    fx_free(g);
}

/* ---- memory QoS ---- */

/*
 * The memory QoS scene: an LS pod (Burstable) with one container requesting 1Gi memory, limit
 * 2Gi; a BE pod (BestEffort) whose container requests 512Mi batch-memory, limit 1Gi.
 */
static void memqos_pods(struct fx *f)
{
    cJSON_AddItemToArray(
        f->src.pods, qr_pod("ls", LS_UID, "LS", "Burstable", LS_CID,
                            "{\"requests\":{\"memory\":\"1Gi\"},\"limits\":{\"memory\":\"2Gi\"}}"));
    cJSON_AddItemToArray(f->src.pods, qr_pod("be", BE_UID, "BE", "BestEffort", BE_CID,
                                             "{\"requests\":{\"kubernetes.io/batch-memory\":"
                                             "\"512Mi\"},\"limits\":{\"kubernetes.io/batch-"
                                             "memory\":\"1Gi\"}}"));
}

static const char *const memqos_dirs[] = {ROOT, BU_QOS, BE_QOS, LS_POD, LS_CTR, BE_POD, BE_CTR};

/*
 * The memcg files of every directory as the kernel starts them. v2: a vanilla kernel (min,
 * low, high, oom.group). v1: an Anolis kernel, which also has the watermark, priority and
 * page-cache files (a vanilla v1 kernel has none of these).
 */
static void memqos_tree(struct fx *f)
{
    for (size_t i = 0; i < ARRAY_SIZE(memqos_dirs); i++) {
        const char *d = memqos_dirs[i];

        put(f, "memory", d, "memory.min", "0\n");
        put(f, "memory", d, "memory.low", "0\n");
        put(f, "memory", d, "memory.high",
            f->l.version == CG_V1 ? "9223372036854771712\n" : "max\n");
        put(f, "memory", d, "memory.oom.group", "0\n");
        if (f->l.version == CG_V2)
            continue;
        put(f, "memory", d, "memory.wmark_ratio", "0\n");
        put(f, "memory", d, "memory.wmark_scale_factor", "50\n");
        put(f, "memory", d, "memory.wmark_min_adj", "0\n");
        put(f, "memory", d, "memory.priority", "0\n");
        put(f, "memory", d, "memory.use_priority_oom", "0\n");
        put(f, "memory", d, "memory.pagecache_limit.enable", "0\n");
        put(f, "memory", d, "memory.pagecache_limit.size", "0\n");
        put(f, "memory", d, "memory.pagecache_limit.sync", "0\n");
    }
}

#define SLO_MEMQOS                                                                                 \
    "{\"resourceQOSStrategy\":{"                                                                   \
    "\"lsClass\":{\"memoryQOS\":{\"enable\":true,\"minLimitPercent\":50,\"lowLimitPercent\":75,"   \
    "\"throttlingPercent\":75,\"priorityEnable\":1,\"priority\":6,\"oomKillGroup\":1}},"           \
    "\"beClass\":{\"memoryQOS\":{\"enable\":true,\"lowLimitPercent\":50,\"throttlingPercent\":50," \
    "\"wmarkRatio\":90}}}}"

/* One expected file content per directory of memqos_dirs. */
struct memqos_row {
    const char *file;
    const char *want[ARRAY_SIZE(memqos_dirs)]; /* NULL: not checked (absent on v2) */
};

static void expect_rows(struct fx *f, const struct memqos_row *rows, size_t n)
{
    char b[256];

    for (size_t i = 0; i < n; i++)
        for (size_t d = 0; d < ARRAY_SIZE(memqos_dirs); d++) {
            if (!rows[i].want[d])
                continue;
            if (strcmp(get(f, "memory", memqos_dirs[d], rows[i].file, b), rows[i].want[d]))
                fail_msg("%s of %s: \"%s\", want \"%s\"", rows[i].file, memqos_dirs[d], b,
                         rows[i].want[d]);
        }
}

/*
 * By hand (reference 3.5; lsClass and beClass enabled, the rest of each class its defaults:
 * wmarkRatio 95 (BE: 90 as set), wmarkScalePermill 20, wmarkMinAdj -25 (LS) / 50 (BE),
 * priorityEnable/priority/oomKillGroup 0 unless set; lsrClass disabled: the None values, of
 * which the kube root takes priority 0, use_priority_oom 0, oom.group 0):
 *   LS container  req 1Gi, lim 2Gi: min = 1Gi x 50 % = 536870912; low = 1Gi x 75 % = 805306368;
 *                 high = 1Gi + (2Gi - 1Gi) x 75 % = 1879048192 (page aligned)
 *   LS pod        min 536870912, low 805306368 (pod request 1Gi), no high
 *   BE container  req 512Mi, lim 1Gi (batch-memory): min 0; low = 512Mi x 50 % = 268435456;
 *                 high = 512Mi + 512Mi x 50 % = 805306368
 *   BE pod        min 0, low 268435456
 *   Burstable     sums of its pods: min 536870912, low 805306368; oom fields of lsClass
 *   BestEffort    min 0, low 268435456; oom fields of beClass
 *   kube root     sums of the three: min 536870912, low 805306368 + 268435456 = 1073741824
 * Watermarks and page cache (enable 0) on pods and containers only.
 */
/* Columns: kube root, Burstable, BestEffort, LS pod, LS container, BE pod, BE container. */
static const struct memqos_row memqos_on[] = {
    {"memory.min", {"536870912", "536870912", "0", "536870912", "536870912", "0", "0"}},
    {"memory.low",
     {GI, "805306368", "268435456", "805306368", "805306368", "268435456", "268435456"}},
    {"memory.oom.group", {"0", "1", "0", "1", "1", "0", "0"}},
};
static const struct memqos_row memqos_on_high_v1[] = {
    {"memory.high",
     {"9223372036854771712", "9223372036854771712", "9223372036854771712", "9223372036854771712",
      "1879048192", "9223372036854771712", "805306368"}},
};
static const struct memqos_row memqos_on_high_v2[] = {
    {"memory.high", {"max", "max", "max", "max", "1879048192", "max", "805306368"}},
};
/* Anolis files (v1 here). */
static const struct memqos_row memqos_on_anolis[] = {
    {"memory.priority", {"0", "6", "0", "6", "6", "0", "0"}},
    {"memory.use_priority_oom", {"0", "1", "0", "1", "1", "0", "0"}},
    {"memory.wmark_ratio", {"0", "0", "0", "95", "95", "90", "90"}},
    {"memory.wmark_scale_factor", {"50", "50", "50", "20", "20", "20", "20"}},
    {"memory.wmark_min_adj", {"0", "0", "0", "-25", "-25", "50", "50"}},
    {"memory.pagecache_limit.enable", {"0", "0", "0", "0", "0", "0", "0"}},
};

/*
 * Disabled again (the classes' enable false): the None values everywhere, min 0, low 0, high
 * max (throttlingPercent 0), oom.group 0; Anolis: wmark_ratio 0, scale 50, min_adj 0,
 * priority 0.
 */
static const struct memqos_row memqos_off[] = {
    {"memory.min", {"0", "0", "0", "0", "0", "0", "0"}},
    {"memory.low", {"0", "0", "0", "0", "0", "0", "0"}},
    {"memory.oom.group", {"0", "0", "0", "0", "0", "0", "0"}},
};
static const struct memqos_row memqos_off_high_v1[] = {
    /* The untouched directories keep v1's number; the written ones say "max" (which the
     * kernel reads back as that number). */
    {"memory.high",
     {"9223372036854771712", "9223372036854771712", "9223372036854771712", "9223372036854771712",
      "max", "9223372036854771712", "max"}},
};
static const struct memqos_row memqos_off_high_v2[] = {
    {"memory.high", {"max", "max", "max", "max", "max", "max", "max"}},
};
static const struct memqos_row memqos_off_anolis[] = {
    {"memory.priority", {"0", "0", "0", "0", "0", "0", "0"}},
    {"memory.use_priority_oom", {"0", "0", "0", "0", "0", "0", "0"}},
    {"memory.wmark_ratio", {"0", "0", "0", "0", "0", "0", "0"}},
    {"memory.wmark_scale_factor", {"50", "50", "50", "50", "50", "50", "50"}},
    {"memory.wmark_min_adj", {"0", "0", "0", "0", "0", "0", "0"}},
};

/*
 * Writes of the first tick on v2 (the rest already holds its value): root min, low;
 * Burstable min, low, oom.group; BestEffort low; LS pod min, low, oom.group; LS container min,
 * low, high, oom.group; BE pod low; BE container low, high: 16. The six Anolis files the
 * configuration sets (wmark_ratio, wmark_scale_factor, wmark_min_adj, priority,
 * use_priority_oom, pagecache_limit.enable) are missing: 6 unsupported per tick, found at the
 * kube root and not tried below it.
 */
static void test_memory_qos(void **state)
{
    (void)state;
    for (size_t vi = 0; vi < ARRAY_SIZE(versions); vi++) {
        enum cg_version v = versions[vi];
        struct fx *f = fx_new(v, QOS_RUNNER_F_CGROUP_RECONCILE, false);
        struct qos_runner_stats st;
        uint64_t writes;

        memqos_tree(f);
        memqos_pods(f);
        f->src.nodeslo = qr_nodeslo(SLO_MEMQOS);
        assert_int_equal(qos_runner_tick(f->r, NOW), 0);
        expect_rows(f, memqos_on, ARRAY_SIZE(memqos_on));
        if (v == CG_V1) {
            expect_rows(f, memqos_on_high_v1, ARRAY_SIZE(memqos_on_high_v1));
            expect_rows(f, memqos_on_anolis, ARRAY_SIZE(memqos_on_anolis));
        } else {
            expect_rows(f, memqos_on_high_v2, ARRAY_SIZE(memqos_on_high_v2));
            assert_false(file_exists(f, "memory", LS_CTR, "memory.wmark_ratio"));
        }
        qos_runner_stats(f->r, &st);
        writes = st.s[QOS_RUNNER_MEMORY_QOS].writes;
        assert_int_equal(st.s[QOS_RUNNER_MEMORY_QOS].errors, 0);
        if (v == CG_V2) {
            assert_int_equal(writes, 16);
            assert_int_equal(st.s[QOS_RUNNER_MEMORY_QOS].unsupported, 6);
        } else {
            assert_int_equal(st.s[QOS_RUNNER_MEMORY_QOS].unsupported, 0);
        }

        /* The same inputs again: nothing is rewritten. */
        assert_int_equal(qos_runner_tick(f->r, NOW + 1000), 0);
        qos_runner_stats(f->r, &st);
        assert_int_equal(st.s[QOS_RUNNER_MEMORY_QOS].writes, writes);
        assert_true(st.s[QOS_RUNNER_MEMORY_QOS].unchanged > 0);
        assert_int_equal(st.s[QOS_RUNNER_MEMORY_QOS].unsupported, v == CG_V2 ? 12 : 0);

        /* Disabled: the defaults come back. */
        qr_set(&f->src.nodeslo, qr_nodeslo("{\"resourceQOSStrategy\":{"
                                           "\"lsClass\":{\"memoryQOS\":{\"enable\":false}},"
                                           "\"beClass\":{\"memoryQOS\":{\"enable\":false}}}}"));
        assert_int_equal(qos_runner_tick(f->r, NOW + 2000), 0);
        expect_rows(f, memqos_off, ARRAY_SIZE(memqos_off));
        if (v == CG_V1) {
            expect_rows(f, memqos_off_high_v1, ARRAY_SIZE(memqos_off_high_v1));
            expect_rows(f, memqos_off_anolis, ARRAY_SIZE(memqos_off_anolis));
        } else {
            expect_rows(f, memqos_off_high_v2, ARRAY_SIZE(memqos_off_high_v2));
        }
        qos_runner_stats(f->r, &st);
        assert_int_equal(st.s[QOS_RUNNER_MEMORY_QOS].errors, 0);
        fx_free(f);
    }
}

/*
 * A vanilla v1 kernel has no memory.min/low/high, no Anolis file and no memory.oom.group (a v2
 * file): everything is unsupported, counted once per file per tick at the kube root, and no
 * error. The configuration sets 10 files (min, low, high, the 3 watermark files, priority,
 * use_priority_oom, oom.group, page-cache enable): 10 per tick, 20 in two ticks.
 */
static void test_memory_qos_vanilla_v1(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_CGROUP_RECONCILE, false);
    struct qos_runner_stats st;

    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(memqos_dirs); i++)
        put(f, "memory", memqos_dirs[i], "memory.limit_in_bytes", "9223372036854771712\n");
    memqos_pods(f);
    f->src.nodeslo = qr_nodeslo(SLO_MEMQOS);
    assert_int_equal(qos_runner_tick(f->r, NOW), 0);
    assert_int_equal(qos_runner_tick(f->r, NOW + 1000), 0);
    qos_runner_stats(f->r, &st);
    assert_int_equal(st.s[QOS_RUNNER_MEMORY_QOS].unsupported, 20);
    assert_int_equal(st.s[QOS_RUNNER_MEMORY_QOS].writes, 0);
    assert_int_equal(st.s[QOS_RUNNER_MEMORY_QOS].errors, 0);
    assert_false(file_exists(f, "memory", LS_CTR, "memory.min"));
    fx_free(f);
}

/*
 * Dry run on v2: the 16 changes of test_memory_qos are logged (the raising pass is left out, so
 * each once) and nothing is written. The gate off: nothing at all.
 */
static void test_memory_qos_dry_run_and_gate(void **state)
{
    struct fx *f = fx_new(CG_V2, QOS_RUNNER_F_CGROUP_RECONCILE, true);
    struct fx *g = fx_new(CG_V2, QOS_RUNNER_F_DEFAULT, false);
    struct qos_runner_stats st;
    char b[256];

    (void)state;
    memqos_tree(f);
    memqos_pods(f);
    f->src.nodeslo = qr_nodeslo(SLO_MEMQOS);
    assert_int_equal(qos_runner_tick(f->r, NOW), 0);
    assert_string_equal(get(f, "memory", ROOT, "memory.low", b), "0");
    assert_string_equal(get(f, "memory", LS_CTR, "memory.high", b), "max");
    qos_runner_stats(f->r, &st);
    assert_int_equal(st.s[QOS_RUNNER_MEMORY_QOS].dry_run, 16);
    assert_int_equal(st.s[QOS_RUNNER_MEMORY_QOS].writes, 0);
    /* No NodeSLO, then one without resourceQOSStrategy: nothing at all, as upstream. */
    {
        struct qos_runner_counters before = st.s[QOS_RUNNER_MEMORY_QOS], *c;

        qr_set(&f->src.nodeslo, NULL);
        assert_int_equal(qos_runner_tick(f->r, NOW + 1000), 0);
        qr_set(&f->src.nodeslo, qr_nodeslo("{\"cpuBurstStrategy\":{\"policy\":\"none\"}}"));
        assert_int_equal(qos_runner_tick(f->r, NOW + 2000), 0);
        qos_runner_stats(f->r, &st);
        c = &st.s[QOS_RUNNER_MEMORY_QOS];
        assert_int_equal(c->dry_run, before.dry_run);
        assert_int_equal(c->unchanged, before.unchanged);
        assert_int_equal(c->unsupported, before.unsupported);
    }

    /* CgroupReconcile is off by default. */
    assert_false(QOS_RUNNER_F_DEFAULT & QOS_RUNNER_F_CGROUP_RECONCILE);
    memqos_tree(g);
    memqos_pods(g);
    g->src.nodeslo = qr_nodeslo(SLO_MEMQOS);
    assert_int_equal(qos_runner_tick(g->r, NOW), 0);
    assert_string_equal(get(g, "memory", LS_CTR, "memory.min", b), "0");
    qos_runner_stats(g->r, &st);
    assert_int_equal(st.s[QOS_RUNNER_MEMORY_QOS].writes + st.s[QOS_RUNNER_MEMORY_QOS].unchanged +
                         st.s[QOS_RUNNER_MEMORY_QOS].unsupported,
                     0);
    fx_free(f);
    fx_free(g);
}

/* ---- batch resources ---- */

static const char *shares_file(const struct fx *f)
{
    return f->l.version == CG_V1 ? "cpu.shares" : "cpu.weight";
}

static const char *memlimit_file(const struct fx *f)
{
    return f->l.version == CG_V1 ? "memory.limit_in_bytes" : "memory.max";
}

/* kubelet's values of a BestEffort pod or container: shares 2 (weight 1), no quota, no limit. */
static void put_besteffort(struct fx *f, const char *dir)
{
    put(f, "cpu", dir, shares_file(f), f->l.version == CG_V1 ? "2\n" : "1\n");
    put_quota(f, dir, "max");
    put(f, "memory", dir, memlimit_file(f),
        f->l.version == CG_V1 ? "9223372036854771712\n" : "max\n");
}

static void expect_batch(struct fx *f, const char *dir, const char *shares_v1,
                         const char *weight_v2, const char *quota, const char *mem)
{
    char b[256];

    assert_string_equal(get(f, "cpu", dir, shares_file(f), b),
                        f->l.version == CG_V1 ? shares_v1 : weight_v2);
    expect_quota(f, dir, quota);
    assert_string_equal(get(f, "memory", dir, memlimit_file(f), b), mem);
}

static const char *mem_unlimited(const struct fx *f)
{
    return f->l.version == CG_V1 ? "9223372036854771712" : "max";
}

#define BATCH_RES                                                                                  \
    "{\"requests\":{\"kubernetes.io/batch-cpu\":\"1500\",\"kubernetes.io/batch-memory\":\"1Gi\"}," \
    "\"limits\":{\"kubernetes.io/batch-cpu\":\"2000\",\"kubernetes.io/batch-memory\":\"2Gi\"}}"

/*
 * By hand (reference 3.9): the BE pod "be", one container with batch-cpu request 1500 / limit
 * 2000 and batch-memory 1Gi / 2Gi:
 *   cpu.shares = 1500 x 1024 / 1000 = 1536 (v2 weight 1 + (1536 - 2) x 9999 / 262142 = 59)
 *   quota      = 2000 x 100 = 200000
 *   memory     = 2Gi = 2147483648
 * on the pod and on the container. "be2" is labelled BE without batch resources, "ls" has
 * batch resources but is not labelled BE: neither is touched.
 * The cfsQuota suppress policy alone (suppression disabled) changes nothing; once the NodeSLO
 * suppresses BE CPU by cfsQuota, quota -1 on both. Then a Node annotated
 * cpu-normalization-ratio 1.25 (suppression off again): 200000 / 1.25 = 160000.
 */
static void test_batch_resource(void **state)
{
    (void)state;
    for (size_t vi = 0; vi < ARRAY_SIZE(versions); vi++) {
        struct fx *f = fx_new(versions[vi], QOS_RUNNER_F_BATCH_RESOURCE, false);
        struct qos_runner_stats st;
        const char *none = mem_unlimited(f);
        char b[256];

        put_besteffort(f, BE_POD);
        put_besteffort(f, BE_CTR);
        put_besteffort(f, BE2_POD);
        put_besteffort(f, BE2_CTR);
        put_besteffort(f, LS_POD);
        put_besteffort(f, LS_CTR);
        cJSON_AddItemToArray(f->src.pods,
                             qr_pod("be", BE_UID, "BE", "BestEffort", BE_CID, BATCH_RES));
        cJSON_AddItemToArray(f->src.pods,
                             qr_pod("be2", BE2_UID, "BE", "BestEffort", BE2_CID, "{}"));
        cJSON_AddItemToArray(f->src.pods,
                             qr_pod("ls", LS_UID, "LS", "Burstable", LS_CID, BATCH_RES));
        assert_int_equal(qos_runner_tick(f->r, NOW), 0);
        expect_batch(f, BE_POD, "1536", "59", "200000", "2147483648");
        expect_batch(f, BE_CTR, "1536", "59", "200000", "2147483648");
        expect_batch(f, BE2_POD, "2", "1", "max", none);
        expect_batch(f, BE2_CTR, "2", "1", "max", none);
        expect_batch(f, LS_POD, "2", "1", "max", none);
        qos_runner_stats(f->r, &st);
        assert_int_equal(st.s[QOS_RUNNER_BATCH_RESOURCE].writes, 6);
        assert_int_equal(st.s[QOS_RUNNER_BATCH_RESOURCE].errors, 0);

        /* Unchanged inputs: six reads, no write. */
        assert_int_equal(qos_runner_tick(f->r, NOW + 1000), 0);
        qos_runner_stats(f->r, &st);
        assert_int_equal(st.s[QOS_RUNNER_BATCH_RESOURCE].writes, 6);
        assert_int_equal(st.s[QOS_RUNNER_BATCH_RESOURCE].unchanged, 6);

        f->src.nodeslo = qr_nodeslo("{\"resourceUsedThresholdWithBE\":{\"enable\":false,"
                                    "\"cpuSuppressPolicy\":\"cfsQuota\"}}");
        assert_int_equal(qos_runner_tick(f->r, NOW + 1500), 0);
        expect_batch(f, BE_POD, "1536", "59", "200000", "2147483648");
        qr_set(&f->src.nodeslo, qr_nodeslo("{\"resourceUsedThresholdWithBE\":{\"enable\":true,"
                                           "\"cpuSuppressPolicy\":\"cfsQuota\"}}"));
        assert_int_equal(qos_runner_tick(f->r, NOW + 2000), 0);
        expect_batch(f, BE_POD, "1536", "59", "max", "2147483648");
        expect_batch(f, BE_CTR, "1536", "59", "max", "2147483648");

        qr_set(&f->src.nodeslo, NULL);
        cJSON_AddItemToObject(
            cJSON_GetObjectItem(f->src.node, "metadata"), "annotations",
            cJSON_Parse("{\"node.koordinator.sh/cpu-normalization-ratio\":\"1.25\"}"));
        assert_int_equal(qos_runner_tick(f->r, NOW + 3000), 0);
        expect_batch(f, BE_POD, "1536", "59", "160000", "2147483648");
        expect_batch(f, BE_CTR, "1536", "59", "160000", "2147483648");
        assert_string_equal(get(f, "cpu", BE2_POD, shares_file(f), b),
                            versions[vi] == CG_V1 ? "2" : "1");
        fx_free(f);
    }
}

/*
 * A container without a batch-cpu limit makes the pod unlimited (quota -1), and without a
 * batch-memory limit likewise; the request alone gives the shares: 700 x 1024 / 1000 = 716.
 * Dry run: the would-be writes are counted, nothing changes.
 */
static void test_batch_resource_unlimited_dry_run(void **state)
{
    (void)state;
    for (size_t vi = 0; vi < ARRAY_SIZE(versions); vi++) {
        struct fx *f = fx_new(versions[vi], QOS_RUNNER_F_BATCH_RESOURCE, false);
        struct fx *g = fx_new(versions[vi], QOS_RUNNER_F_BATCH_RESOURCE, true);
        struct fx *both[] = {f, g};
        struct qos_runner_stats st;

        for (size_t k = 0; k < ARRAY_SIZE(both); k++) {
            put_besteffort(both[k], BE_POD);
            put_besteffort(both[k], BE_CTR);
            put_quota(both[k], BE_POD, "300000");
            cJSON_AddItemToArray(both[k]->src.pods,
                                 qr_pod("be", BE_UID, "BE", "BestEffort", BE_CID,
                                        "{\"requests\":{\"kubernetes.io/batch-cpu\":\"700\"}}"));
            assert_int_equal(qos_runner_tick(both[k]->r, NOW), 0);
        }
        /* v2 weight of 716: 1 + 714 x 9999 / 262142 = 1 + 27.23 = 28. */
        expect_batch(f, BE_POD, "716", "28", "max", mem_unlimited(f));
        expect_batch(f, BE_CTR, "716", "28", "max", mem_unlimited(f));
        /* Shares of pod and container, and the pod's quota 300000 -> -1. */
        expect_batch(g, BE_POD, "2", "1", "300000", mem_unlimited(g));
        qos_runner_stats(g->r, &st);
        assert_int_equal(st.s[QOS_RUNNER_BATCH_RESOURCE].dry_run, 3);
        assert_int_equal(st.s[QOS_RUNNER_BATCH_RESOURCE].writes, 0);
        fx_free(f);
        fx_free(g);
    }
}

/* The new strategies' counters render under their names; the default gates. */
static void test_render_and_defaults(void **state)
{
    struct qos_runner_stats st;
    struct strbuf out = STRBUF_INIT;

    (void)state;
    memset(&st, 0, sizeof(st));
    st.s[QOS_RUNNER_CFS_QUOTA_BURST].writes = 1;
    st.s[QOS_RUNNER_MEMORY_QOS].unsupported = 2;
    st.s[QOS_RUNNER_BATCH_RESOURCE].dry_run = 3;
    qos_runner_render_metrics(&st, &out);
    assert_non_null(strstr(
        out.buf,
        "koord_agent_qos_actions_total{strategy=\"cfs_quota_burst\",action=\"writes\"} 1\n"));
    assert_non_null(strstr(
        out.buf,
        "koord_agent_qos_actions_total{strategy=\"memory_qos\",action=\"unsupported\"} 2\n"));
    assert_non_null(strstr(
        out.buf,
        "koord_agent_qos_actions_total{strategy=\"batch_resource\",action=\"dry_run\"} 3\n"));
    strbuf_release(&out);
    assert_true(QOS_RUNNER_F_DEFAULT & QOS_RUNNER_F_BATCH_RESOURCE);
    assert_true(QOS_RUNNER_F_DEFAULT & QOS_RUNNER_F_CPU_BURST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cfs_quota_burst),
        cmocka_unit_test(test_cfs_quota_burst_limiter),
        cmocka_unit_test(test_cfs_quota_burst_containers),
        cmocka_unit_test(test_cfs_quota_burst_dry_run),
        cmocka_unit_test(test_cfs_quota_burst_skips),
        cmocka_unit_test(test_memory_qos),
        cmocka_unit_test(test_memory_qos_vanilla_v1),
        cmocka_unit_test(test_memory_qos_dry_run_and_gate),
        cmocka_unit_test(test_batch_resource),
        cmocka_unit_test(test_batch_resource_unlimited_dry_run),
        cmocka_unit_test(test_render_and_defaults),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
