/*
 * Tests for the node-level strategies of agent/qos/runner (reference 3.6 resctrl, 3.7 system
 * config, 3.8 group identity): one tick at a time on prepared trees (a fake resctrl root with
 * info/L3/cbm_mask, info/MB and schemata files; a fake /proc and /sys; cgroup v1 and v2 trees
 * with cpu.bvt_warp_ns), with NodeSLO JSON inputs. The files written are compared with values
 * computed by hand from the reference formulas; the counters prove what was not rewritten, what
 * a dry run left alone and what this kernel lacks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "agent/cgroup/cgroup.h"
#include "agent/cgtest.h"
#include "agent/qos/runner.h"
#include "agent/qosrun.h"

#define NOW     INT64_C(1700000000000)

#define LSR_UID "11111111-0000-0000-0000-000000000001"
#define LS_UID  "11111111-0000-0000-0000-000000000002"
#define BE_UID  "11111111-0000-0000-0000-000000000003"
#define G_UID   "11111111-0000-0000-0000-000000000004"
#define ANN_UID "11111111-0000-0000-0000-000000000005"

/* cgroupfs directories, relative to a hierarchy root. */
#define LSR_POD  "kubepods/pod" LSR_UID
#define LS_POD   "kubepods/burstable/pod" LS_UID
#define BE_POD   "kubepods/besteffort/pod" BE_UID
#define G_POD    "kubepods/pod" G_UID
#define ANN_POD  "kubepods/pod" ANN_UID
#define ANN_BPOD "kubepods/burstable/pod" ANN_UID

/* A group's schemata as the kernel makes it: every way, all bandwidth. */
#define FULL_KERNEL "L3:0=7ff;1=7ff\nMB:0=100;1=100\n"
/* The same as the runner writes it. */
#define FULL_OURS "L3:0=7ff;1=7ff;\nMB:0=100;1=100;\n"

struct fx {
    struct cgt *t;
    struct cg_layout l;
    struct qr_source src;
    struct qos_runner *r;
    char cpu[CG_PATH_MAX]; /* <cgroup>/cpu (v1) or <cgroup> (v2) */
    int64_t now;
};

static struct fx *fx_new(enum cg_version v, uint32_t features, bool dry_run)
{
    struct fx *f = xcalloc(1, sizeof(*f));
    struct qos_runner_opts o;

    f->t = cgt_new();
    f->now = NOW;
    assert_int_equal(cg_layout_init(&f->l, &f->t->roots, v, CG_DRIVER_CGROUPFS), 0);
    (void)snprintf(f->cpu, sizeof(f->cpu), "%s%s", f->t->cgroup, v == CG_V1 ? "/cpu" : "");
    f->src.pods = cJSON_CreateArray();
    f->src.node = qr_node("8", "64Gi");
    qr_opts(&o, &f->l, NULL, &f->src, dry_run, features);
    assert_int_equal(qos_runner_new(&o, &f->r), 0);
    return f;
}

static void fx_free(struct fx *f)
{
    qos_runner_free(f->r);
    qr_source_release(&f->src);
    cgt_free(f->t);
    free(f);
}

static void tick(struct fx *f)
{
    assert_int_equal(qos_runner_tick(f->r, f->now), 0);
    f->now += 1000;
}

static struct qos_runner_counters counted(struct fx *f, enum qos_runner_strategy s)
{
    struct qos_runner_stats st;

    qos_runner_stats(f->r, &st);
    return st.s[s];
}

static void add_pod(struct fx *f, cJSON *pod)
{
    cJSON_AddItemToArray(f->src.pods, pod);
}

static cJSON *annotate(cJSON *pod, const char *key, const char *value)
{
    cJSON *md = cJSON_GetObjectItem(pod, "metadata");
    cJSON *a = cJSON_GetObjectItem(md, "annotations");

    if (!a)
        a = cJSON_AddObjectToObject(md, "annotations");
    assert_non_null(cJSON_AddStringToObject(a, key, value));
    return pod;
}

static void set_slo(struct fx *f, const char *spec)
{
    qr_set(&f->src.nodeslo, spec ? qr_nodeslo(spec) : NULL);
}

/* ---- resctrl ---- */

/*
 * The resctrl root of a 2-socket Intel host (cache ids 0 and 1, 11 ways: cbm 7ff), with MBA
 * when mb; the groups LSR, LS and BE as the kernel makes them when groups.
 */
static void put_resctrl(struct fx *f, bool mb, bool groups)
{
    static const char *const names[] = {"LSR", "LS", "BE"};
    const char *rd = f->t->resctrl;
    char rel[64];

    cgt_put(rd, "info/L3/cbm_mask", "7ff\n");
    cgt_put(rd, "info/L3/num_closids", "16\n");
    if (mb) {
        cgt_put(rd, "info/MB/bandwidth_gran", "10\n");
        cgt_put(rd, "info/MB/min_bandwidth", "10\n");
    }
    cgt_put(rd, "schemata", mb ? FULL_KERNEL : "L3:0=7ff;1=7ff\n");
    cgt_put(rd, "tasks", "1\n2\n");
    for (size_t i = 0; groups && i < ARRAY_SIZE(names); i++) {
        (void)snprintf(rel, sizeof(rel), "%s/schemata", names[i]);
        cgt_put(rd, rel, mb ? FULL_KERNEL : "L3:0=7ff;1=7ff\n");
        (void)snprintf(rel, sizeof(rel), "%s/tasks", names[i]);
        cgt_put(rd, rel, "");
    }
}

/* Threads of a cgroup directory (relative) of the cpu hierarchy. */
static void put_tasks(struct fx *f, const char *dir, const char *tids)
{
    char rel[CG_PATH_MAX];

    (void)snprintf(rel, sizeof(rel), "%s/%s", dir,
                   f->l.version == CG_V2 ? "cgroup.threads" : "tasks");
    cgt_put(f->cpu, rel, tids);
}

/*
 * Pods: an LSR pod (sandbox aaa0 with TID 100, container bbb1 with 102 and 101), an LS pod
 * (TID 150), a BE pod (TIDs 201, 202; 201 already in BE), and an LSR pod carrying the per-pod
 * annotation node.koordinator.sh/resctrl (TID 300: the runtime hook's, not ours).
 */
static void resctrl_pods(struct fx *f)
{
    add_pod(f, qr_pod("lsr", LSR_UID, "LSR", "Guaranteed", "containerd://bbb1", "{}"));
    add_pod(f, qr_pod("ls", LS_UID, "LS", "Burstable", "containerd://ls01", "{}"));
    add_pod(f, qr_pod("be", BE_UID, "BE", "BestEffort", "containerd://be01", "{}"));
    add_pod(f, annotate(qr_pod("ann", ANN_UID, "LSR", "Guaranteed", "containerd://an01", "{}"),
                        "node.koordinator.sh/resctrl", "{}"));
    put_tasks(f, LSR_POD "/aaa0", "100\n");
    put_tasks(f, LSR_POD "/bbb1", "102\n101\n");
    put_tasks(f, LS_POD "/ls01", "150\n");
    put_tasks(f, BE_POD "/be01", "201\n202\n");
    put_tasks(f, ANN_POD "/an01", "300\n");
    cgt_put(f->t->resctrl, "BE/tasks", "201\n");
}

/* LSR: 10-80 % of the ways, 55 % bandwidth; BE enabled with its defaults (0-30 %, 100 %); LS
 * not enabled. */
#define SLO_RESCTRL                                                                                \
    "{\"resourceQOSStrategy\":{"                                                                   \
    "\"lsrClass\":{\"resctrlQOS\":{\"enable\":true,\"catRangeStartPercent\":10,"                   \
    "\"catRangeEndPercent\":80,\"mbaPercent\":55}},"                                               \
    "\"beClass\":{\"resctrlQOS\":{\"enable\":true}}}}"

/*
 * By hand (reference 3.6), cbm 7ff -> 11 ways:
 *   LSR: startWay = ceil(11 x 10 / 100 = 1.1) = 2, endWay = ceil(11 x 80 / 100 = 8.8) = 9,
 *        mask = 2^9 - 2^2 = 508 = 0x1fc; MB (Intel) 55 rounded up to a multiple of 10 = 60
 *   LS : disabled -> None 0-100 %: 2^11 - 2^0 = 0x7ff, MB 100: what the group holds already
 *   BE : 0-30 %: endWay = ceil(3.3) = 4 -> 2^4 - 1 = 0xf, MB 100
 * Tasks: LSR gets 100, 101, 102 (sandbox first: directories in name order, each file's TIDs
 * ascending); BE gets 202 (201 is there); LS (disabled) and the annotated pod nothing.
 */
static void test_resctrl(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_RDT_RESCTRL, false);
    const char *rd = f->t->resctrl;
    struct qos_runner_counters c;
    char b[256];

    (void)state;
    put_resctrl(f, true, true);
    resctrl_pods(f);
    set_slo(f, SLO_RESCTRL);
    tick(f);
    assert_string_equal(cgt_get(rd, "LSR/schemata", b, sizeof(b)),
                        "L3:0=1fc;1=1fc;\nMB:0=60;1=60;\n");
    assert_string_equal(cgt_get(rd, "LS/schemata", b, sizeof(b)), FULL_KERNEL);
    assert_string_equal(cgt_get(rd, "BE/schemata", b, sizeof(b)), "L3:0=f;1=f;\nMB:0=100;1=100;\n");
    assert_string_equal(cgt_get(rd, "LSR/tasks", b, sizeof(b)), "100\n101\n102\n");
    assert_string_equal(cgt_get(rd, "BE/tasks", b, sizeof(b)), "201\n202\n");
    assert_string_equal(cgt_get(rd, "LS/tasks", b, sizeof(b)), "");
    assert_string_equal(cgt_get(rd, "tasks", b, sizeof(b)), "1\n2\n");
    c = counted(f, QOS_RUNNER_RESCTRL);
    assert_int_equal(c.writes, 2 + 3 + 1);
    assert_int_equal(c.unchanged, 1);
    assert_int_equal(c.errors, 0);
    assert_int_equal(c.unsupported, 0);

    /* The kernel shows the schemata its way (masks zero-padded to the cbm's width, MB values
     * space-padded): the same values, so nothing is rewritten. A new thread 103 of the LSR
     * container is moved; the listed ones are not again. */
    cgt_put(rd, "LSR/schemata", "L3:0=1fc;1=1fc\nMB:0= 60;1= 60\n");
    cgt_put(rd, "BE/schemata", "L3:0=00f;1=00f\nMB:0=100;1=100\n");
    put_tasks(f, LSR_POD "/bbb1", "101\n102\n103\n");
    tick(f);
    assert_string_equal(cgt_get(rd, "LSR/tasks", b, sizeof(b)), "100\n101\n102\n103\n");
    assert_string_equal(cgt_get(rd, "BE/tasks", b, sizeof(b)), "201\n202\n");
    c = counted(f, QOS_RUNNER_RESCTRL);
    assert_int_equal(c.writes, 6 + 1);
    assert_int_equal(c.unchanged, 1 + 3);

    /* Disabled (no NodeSLO: the defaults): every group back to the None values, and threads
     * are no longer moved. */
    set_slo(f, NULL);
    put_tasks(f, LSR_POD "/bbb1", "101\n102\n103\n104\n");
    tick(f);
    assert_string_equal(cgt_get(rd, "LSR/schemata", b, sizeof(b)), FULL_OURS);
    assert_string_equal(cgt_get(rd, "BE/schemata", b, sizeof(b)), FULL_OURS);
    assert_string_equal(cgt_get(rd, "LS/schemata", b, sizeof(b)), FULL_KERNEL);
    assert_string_equal(cgt_get(rd, "LSR/tasks", b, sizeof(b)), "100\n101\n102\n103\n");
    c = counted(f, QOS_RUNNER_RESCTRL);
    assert_int_equal(c.writes, 7 + 2);
    assert_int_equal(c.unchanged, 4 + 1);
    assert_int_equal(c.errors, 0);
    fx_free(f);
}

/* Dry run: nothing is created, written or moved; the would-be writes are counted. */
static void test_resctrl_dry_run(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_RDT_RESCTRL, true);
    const char *rd = f->t->resctrl;
    struct qos_runner_counters c;
    struct stat st;
    char b[256], p[CG_PATH_MAX];

    (void)state;
    put_resctrl(f, true, true);
    resctrl_pods(f);
    set_slo(f, SLO_RESCTRL);
    tick(f);
    assert_string_equal(cgt_get(rd, "LSR/schemata", b, sizeof(b)), FULL_KERNEL);
    assert_string_equal(cgt_get(rd, "BE/schemata", b, sizeof(b)), FULL_KERNEL);
    assert_string_equal(cgt_get(rd, "LSR/tasks", b, sizeof(b)), "");
    assert_string_equal(cgt_get(rd, "BE/tasks", b, sizeof(b)), "201\n");
    c = counted(f, QOS_RUNNER_RESCTRL);
    assert_int_equal(c.writes, 0);
    assert_int_equal(c.dry_run, 2 + 3 + 1);
    assert_int_equal(c.unchanged, 1);
    fx_free(f);

    /* Without the groups: not made in a dry run (one count each). */
    f = fx_new(CG_V1, QOS_RUNNER_F_RDT_RESCTRL, true);
    put_resctrl(f, true, false);
    tick(f);
    assert_int_equal(stat(cgt_join(p, f->t->resctrl, "LSR"), &st), -1);
    c = counted(f, QOS_RUNNER_RESCTRL);
    assert_int_equal(c.dry_run, 3);
    assert_int_equal(c.writes + c.errors, 0);
    fx_free(f);
}

/*
 * Missing groups are made (upstream's InitCatGroupIfNotExist). A real resctrl fills a new
 * group with its files; this tree cannot, so the first tick reports each group's missing
 * schemata; once "the kernel" has put them there, the next tick writes them.
 */
static void test_resctrl_groups_made(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_RDT_RESCTRL, false);
    const char *rd = f->t->resctrl;
    struct qos_runner_counters c;
    struct stat st;
    char p[CG_PATH_MAX], b[256];

    (void)state;
    put_resctrl(f, true, false);
    set_slo(f, SLO_RESCTRL);
    tick(f);
    assert_int_equal(stat(cgt_join(p, rd, "LSR"), &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(stat(cgt_join(p, rd, "LS"), &st), 0);
    assert_int_equal(stat(cgt_join(p, rd, "BE"), &st), 0);
    c = counted(f, QOS_RUNNER_RESCTRL);
    assert_int_equal(c.writes, 3);
    assert_int_equal(c.errors, 3);

    put_resctrl(f, true, true);
    tick(f);
    assert_string_equal(cgt_get(rd, "LSR/schemata", b, sizeof(b)),
                        "L3:0=1fc;1=1fc;\nMB:0=60;1=60;\n");
    c = counted(f, QOS_RUNNER_RESCTRL);
    assert_int_equal(c.writes, 3 + 2);
    assert_int_equal(c.errors, 3);
    fx_free(f);
}

/*
 * AMD (vendor_id AuthenticAMD): MB = int(160 x 55 / 100) = 88 for LSR, 2048 (unlimited) for
 * 100 %. Without info/MB (no MBA): the L3 line alone.
 */
static void test_resctrl_amd_and_no_mba(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_RDT_RESCTRL, false);
    char b[256];

    (void)state;
    put_resctrl(f, true, true);
    cgt_put(f->t->proc, "cpuinfo",
            "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n"
            "flags\t\t: fpu cat_l3 mba\n\n");
    set_slo(f, SLO_RESCTRL);
    tick(f);
    assert_string_equal(cgt_get(f->t->resctrl, "LSR/schemata", b, sizeof(b)),
                        "L3:0=1fc;1=1fc;\nMB:0=88;1=88;\n");
    assert_string_equal(cgt_get(f->t->resctrl, "BE/schemata", b, sizeof(b)),
                        "L3:0=f;1=f;\nMB:0=2048;1=2048;\n");
    fx_free(f);

    f = fx_new(CG_V1, QOS_RUNNER_F_RDT_RESCTRL, false);
    put_resctrl(f, false, true);
    set_slo(f, SLO_RESCTRL);
    tick(f);
    assert_string_equal(cgt_get(f->t->resctrl, "LSR/schemata", b, sizeof(b)), "L3:0=1fc;1=1fc;\n");
    assert_string_equal(cgt_get(f->t->resctrl, "LS/schemata", b, sizeof(b)), "L3:0=7ff;1=7ff\n");
    assert_int_equal(counted(f, QOS_RUNNER_RESCTRL).errors, 0);
    fx_free(f);
}

/* No resctrl mounted (no info/L3/cbm_mask): unsupported once per tick, never an error, nothing
 * made; the gate off: not even looked at. */
static void test_resctrl_unsupported(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_RDT_RESCTRL, false);
    struct fx *g = fx_new(CG_V1, 0, false);
    struct qos_runner_counters c;
    struct stat st;
    char p[CG_PATH_MAX];

    (void)state;
    set_slo(f, SLO_RESCTRL);
    resctrl_pods(f);
    tick(f);
    tick(f);
    c = counted(f, QOS_RUNNER_RESCTRL);
    assert_int_equal(c.unsupported, 2);
    assert_int_equal(c.errors + c.writes + c.unchanged, 0);
    assert_int_equal(stat(cgt_join(p, f->t->resctrl, "LSR"), &st), -1);

    put_resctrl(g, true, true);
    set_slo(g, SLO_RESCTRL);
    tick(g);
    c = counted(g, QOS_RUNNER_RESCTRL);
    assert_int_equal(c.unsupported + c.errors + c.writes + c.unchanged, 0);
    fx_free(f);
    fx_free(g);
}

/* An empty CAT range (start 50 = end 50) is an error for that line only: the MB line is still
 * written, and the error counted. */
static void test_resctrl_bad_range(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_RDT_RESCTRL, false);
    char b[256];

    (void)state;
    put_resctrl(f, true, true);
    set_slo(f, "{\"resourceQOSStrategy\":{\"lsrClass\":{\"resctrlQOS\":{\"enable\":true,"
               "\"catRangeStartPercent\":50,\"catRangeEndPercent\":50,\"mbaPercent\":30}}}}");
    tick(f);
    assert_string_equal(cgt_get(f->t->resctrl, "LSR/schemata", b, sizeof(b)), "MB:0=30;1=30;\n");
    assert_int_equal(counted(f, QOS_RUNNER_RESCTRL).errors, 1);
    fx_free(f);
}

/* cgroup v2: threads come from cgroup.threads. */
static void test_resctrl_v2(void **state)
{
    struct fx *f = fx_new(CG_V2, QOS_RUNNER_F_RDT_RESCTRL, false);
    char b[256];

    (void)state;
    put_resctrl(f, true, true);
    resctrl_pods(f);
    set_slo(f, SLO_RESCTRL);
    tick(f);
    assert_string_equal(cgt_get(f->t->resctrl, "LSR/tasks", b, sizeof(b)), "100\n101\n102\n");
    assert_string_equal(cgt_get(f->t->resctrl, "BE/tasks", b, sizeof(b)), "201\n202\n");
    fx_free(f);
}

/* ---- system config ---- */

/* The host's values before the runner (a 64 GiB machine's kernel defaults). */
static void put_sysctls(struct fx *f)
{
    cgt_put(f->t->proc, "sys/vm/min_free_kbytes", "67584\n");
    cgt_put(f->t->proc, "sys/vm/watermark_scale_factor", "10\n");
    cgt_put(f->t->proc, "sys/kernel/sched_group_identity_enabled", "0\n");
    cgt_put(f->t->proc, "sys/kernel/sched_idle_saver_wmark", "0\n");
    cgt_put(f->t->sys, "kernel/mm/memcg_reaper/reap_background", "0\n");
    cgt_put(f->t->sys, "kernel/debug/sched_features",
            "GENTLE_FAIR_SLEEPERS START_DEBIT NO_ID_ABSOLUTE_EXPELLER ID_LOAD_BALANCE\n");
}

#define SLO_SYSTEM                                                                                 \
    "{\"systemStrategy\":{\"minFreeKbytesFactor\":100,\"watermarkScaleFactor\":150,"               \
    "\"memcgReapBackGround\":1,\"schedGroupIdentityEnabled\":1,"                                   \
    "\"schedIdleSaverWmark\":1000000,\"pageCacheLimitEnabled\":1,"                                 \
    "\"schedFeatures\":{\"ID_ABSOLUTE_EXPELLER\":true,\"GENTLE_FAIR_SLEEPERS\":false,"             \
    "\"NOT_IN_THIS_KERNEL\":true}}}"

static const char *proc_file(struct fx *f, const char *rel, char *b)
{
    return qr_file(f->t->proc, rel, b);
}

/*
 * By hand (reference 3.7), node memory 64Gi = 68719476736 bytes:
 *   min_free_kbytes = 68719476736 / 1024 x 100 / 10000 = 67108864 x 100 / 10000 = 671088
 *     (within [10240, 10485760]);
 *   watermark_scale_factor 150 (within [10, 400]); reap_background 1; sched_group_identity 1;
 *   sched_idle_saver_wmark 1000000;
 *   pagecache_limit/enabled: this kernel has no such file -> unsupported;
 *   sched_features: GENTLE_FAIR_SLEEPERS on -> "NO_GENTLE_FAIR_SLEEPERS", ID_ABSOLUTE_EXPELLER
 *     off -> "ID_ABSOLUTE_EXPELLER" (names in order), NOT_IN_THIS_KERNEL skipped.
 * Then the NodeSLO drops systemStrategy: every value goes back to what the host had.
 */
static void test_sysconfig(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_SYSTEM_CONFIG, false);
    const char *feat = "kernel/debug/sched_features";
    struct qos_runner_counters c;
    char b[256];

    (void)state;
    put_sysctls(f);
    set_slo(f, SLO_SYSTEM);
    tick(f);
    assert_string_equal(proc_file(f, "sys/vm/min_free_kbytes", b), "671088");
    assert_string_equal(proc_file(f, "sys/vm/watermark_scale_factor", b), "150");
    assert_string_equal(proc_file(f, "sys/kernel/sched_group_identity_enabled", b), "1");
    assert_string_equal(proc_file(f, "sys/kernel/sched_idle_saver_wmark", b), "1000000");
    assert_string_equal(qr_file(f->t->sys, "kernel/mm/memcg_reaper/reap_background", b), "1");
    assert_string_equal(cgt_get(f->t->sys, feat, b, sizeof(b)),
                        "GENTLE_FAIR_SLEEPERS START_DEBIT NO_ID_ABSOLUTE_EXPELLER ID_LOAD_BALANCE\n"
                        "NO_GENTLE_FAIR_SLEEPERS\nID_ABSOLUTE_EXPELLER\n");
    c = counted(f, QOS_RUNNER_SYSTEM_CONFIG);
    assert_int_equal(c.writes, 5 + 2);
    assert_int_equal(c.unsupported, 1);
    assert_int_equal(c.errors, 0);

    /* Identical values are not rewritten (sched_features as the kernel then shows it). */
    cgt_put(f->t->sys, feat,
            "NO_GENTLE_FAIR_SLEEPERS START_DEBIT ID_ABSOLUTE_EXPELLER ID_LOAD_BALANCE\n");
    tick(f);
    c = counted(f, QOS_RUNNER_SYSTEM_CONFIG);
    assert_int_equal(c.writes, 7);
    assert_int_equal(c.unchanged, 5);
    assert_int_equal(c.unsupported, 2);

    /* Disabled in the NodeSLO: the host's own values come back. */
    set_slo(f, "{}");
    tick(f);
    assert_string_equal(proc_file(f, "sys/vm/min_free_kbytes", b), "67584");
    assert_string_equal(proc_file(f, "sys/vm/watermark_scale_factor", b), "10");
    assert_string_equal(proc_file(f, "sys/kernel/sched_group_identity_enabled", b), "0");
    assert_string_equal(proc_file(f, "sys/kernel/sched_idle_saver_wmark", b), "0");
    assert_string_equal(qr_file(f->t->sys, "kernel/mm/memcg_reaper/reap_background", b), "0");
    assert_string_equal(cgt_get(f->t->sys, feat, b, sizeof(b)),
                        "NO_GENTLE_FAIR_SLEEPERS START_DEBIT ID_ABSOLUTE_EXPELLER ID_LOAD_BALANCE\n"
                        "GENTLE_FAIR_SLEEPERS\nNO_ID_ABSOLUTE_EXPELLER\n");
    c = counted(f, QOS_RUNNER_SYSTEM_CONFIG);
    assert_int_equal(c.writes, 7 + 5 + 2);

    /* Restored once: nothing more afterwards. */
    cgt_put(f->t->sys, feat,
            "GENTLE_FAIR_SLEEPERS START_DEBIT NO_ID_ABSOLUTE_EXPELLER ID_LOAD_BALANCE\n");
    tick(f);
    c = counted(f, QOS_RUNNER_SYSTEM_CONFIG);
    assert_int_equal(c.writes, 14);
    assert_int_equal(c.errors, 0);
    fx_free(f);
}

/*
 * Out of range is not written (reference 3.7): factor 1 gives 67108864 / 10000 = 6710 KiB <
 * 10240; watermarkScaleFactor 401 > 400; schedGroupIdentityEnabled 2 > 1. Gate off, dry run
 * and no Node write nothing either.
 */
static void test_sysconfig_ranges_gate_dry_run(void **state)
{
    const char *slo_bad = "{\"systemStrategy\":{\"minFreeKbytesFactor\":1,"
                          "\"watermarkScaleFactor\":401,\"schedGroupIdentityEnabled\":2}}";
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_SYSTEM_CONFIG, false);
    struct qos_runner_counters c;
    char b[256];

    (void)state;
    put_sysctls(f);
    set_slo(f, slo_bad);
    tick(f);
    assert_string_equal(proc_file(f, "sys/vm/min_free_kbytes", b), "67584");
    assert_string_equal(proc_file(f, "sys/vm/watermark_scale_factor", b), "10");
    assert_string_equal(proc_file(f, "sys/kernel/sched_group_identity_enabled", b), "0");
    c = counted(f, QOS_RUNNER_SYSTEM_CONFIG);
    assert_int_equal(c.writes + c.unchanged + c.dry_run + c.errors + c.unsupported, 0);
    fx_free(f);

    f = fx_new(CG_V1, QOS_RUNNER_F_SYSTEM_CONFIG, true);
    put_sysctls(f);
    set_slo(f, SLO_SYSTEM);
    tick(f);
    assert_string_equal(proc_file(f, "sys/vm/min_free_kbytes", b), "67584");
    assert_string_equal(
        cgt_get(f->t->sys, "kernel/debug/sched_features", b, sizeof(b)),
        "GENTLE_FAIR_SLEEPERS START_DEBIT NO_ID_ABSOLUTE_EXPELLER ID_LOAD_BALANCE\n");
    c = counted(f, QOS_RUNNER_SYSTEM_CONFIG);
    assert_int_equal(c.writes, 0);
    assert_int_equal(c.dry_run, 5 + 2);
    /* Disabled after a dry run: nothing to put back. */
    set_slo(f, NULL);
    tick(f);
    assert_int_equal(counted(f, QOS_RUNNER_SYSTEM_CONFIG).dry_run, 7);
    fx_free(f);

    f = fx_new(CG_V1, 0, false);
    put_sysctls(f);
    set_slo(f, SLO_SYSTEM);
    tick(f);
    assert_string_equal(proc_file(f, "sys/vm/min_free_kbytes", b), "67584");
    fx_free(f);

    f = fx_new(CG_V1, QOS_RUNNER_F_SYSTEM_CONFIG, false);
    put_sysctls(f);
    set_slo(f, SLO_SYSTEM);
    qr_set(&f->src.node, NULL);
    tick(f);
    assert_string_equal(proc_file(f, "sys/vm/watermark_scale_factor", b), "10");
    fx_free(f);
}

/* ---- group identity ---- */

/* cpu.bvt_warp_ns of a cgroup (relative dir). */
static const char *bvt(struct fx *f, const char *dir, char *b)
{
    char rel[CG_PATH_MAX];

    (void)snprintf(rel, sizeof(rel), "%s/cpu.bvt_warp_ns", dir);
    return qr_file(f->cpu, rel, b);
}

static void put_bvt(struct fx *f, const char *dir)
{
    char rel[CG_PATH_MAX];

    (void)snprintf(rel, sizeof(rel), "%s/cpu.bvt_warp_ns", dir);
    cgt_put(f->cpu, rel, "0\n");
}

/*
 * An Anolis kernel's tree: bvt files on the kube root, the QoS dirs, and the pods below: an LS
 * pod, a BE pod (sandbox be00, container be01), an unlabelled Guaranteed pod, and an LS pod
 * overriding with koordinator.sh/cpuQOS {"enable":true,"groupIdentity":1}.
 */
static void gi_tree(struct fx *f)
{
    static const char *const dirs[] = {
        "kubepods", "kubepods/burstable", "kubepods/besteffort", LS_POD, LS_POD "/ls01",
        BE_POD,     BE_POD "/be00",       BE_POD "/be01",        G_POD,  G_POD "/g001",
        ANN_BPOD,   ANN_BPOD "/an01",
    };

    for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
        put_bvt(f, dirs[i]);
    cgt_put(f->t->proc, "sys/kernel/sched_core", "1\n");
    cgt_put(f->t->proc, "sys/kernel/sched_group_identity_enabled", "0\n");
    add_pod(f, qr_pod("ls", LS_UID, "LS", "Burstable", "containerd://ls01", "{}"));
    add_pod(f, qr_pod("be", BE_UID, "BE", "BestEffort", "containerd://be01", "{}"));
    add_pod(f, qr_pod("g", G_UID, "", "Guaranteed", "containerd://g001", "{}"));
    add_pod(f, annotate(qr_pod("ann", ANN_UID, "LS", "Burstable", "containerd://an01", "{}"),
                        "koordinator.sh/cpuQOS", "{\"enable\":true,\"groupIdentity\":1}"));
}

#define SLO_GI                                                                                     \
    "{\"resourceQOSStrategy\":{\"lsClass\":{\"cpuQOS\":{\"enable\":true}},"                        \
    "\"beClass\":{\"cpuQOS\":{\"enable\":true}}}}"

/*
 * By the table of reference 3.8, LS and BE enabled with their defaults (LS 2, BE -1), LSR not:
 *   kube root 0 (already: not rewritten); burstable 2; besteffort -1;
 *   LS pod and container 2; BE pod, sandbox and container -1;
 *   unlabelled Guaranteed pod: LSR not enabled -> the LS value 2;
 *   LS pod with the annotation: 1.
 * Before: sched_core 0, sched_group_identity_enabled 1. Disabled: bvt 0 everywhere but on the
 * annotated pod (groupidentity.h: its override does not depend on the class), the sysctls left
 * as they are.
 */
static void test_group_identity(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_GROUP_IDENTITY, false);
    struct qos_runner_counters c;
    char b[256];

    (void)state;
    gi_tree(f);
    set_slo(f, SLO_GI);
    tick(f);
    assert_string_equal(bvt(f, "kubepods", b), "0");
    assert_string_equal(bvt(f, "kubepods/burstable", b), "2");
    assert_string_equal(bvt(f, "kubepods/besteffort", b), "-1");
    assert_string_equal(bvt(f, LS_POD, b), "2");
    assert_string_equal(bvt(f, LS_POD "/ls01", b), "2");
    assert_string_equal(bvt(f, BE_POD, b), "-1");
    assert_string_equal(bvt(f, BE_POD "/be00", b), "-1");
    assert_string_equal(bvt(f, BE_POD "/be01", b), "-1");
    assert_string_equal(bvt(f, G_POD, b), "2");
    assert_string_equal(bvt(f, G_POD "/g001", b), "2");
    assert_string_equal(bvt(f, ANN_BPOD, b), "1");
    assert_string_equal(bvt(f, ANN_BPOD "/an01", b), "1");
    assert_string_equal(proc_file(f, "sys/kernel/sched_core", b), "0");
    assert_string_equal(proc_file(f, "sys/kernel/sched_group_identity_enabled", b), "1");
    c = counted(f, QOS_RUNNER_GROUP_IDENTITY);
    assert_int_equal(c.writes, 11 + 2);
    assert_int_equal(c.unchanged, 1);
    assert_int_equal(c.errors + c.unsupported, 0);

    tick(f);
    c = counted(f, QOS_RUNNER_GROUP_IDENTITY);
    assert_int_equal(c.writes, 13);
    assert_int_equal(c.unchanged, 1 + 14);

    set_slo(f, NULL);
    tick(f);
    assert_string_equal(bvt(f, "kubepods/burstable", b), "0");
    assert_string_equal(bvt(f, "kubepods/besteffort", b), "0");
    assert_string_equal(bvt(f, BE_POD "/be00", b), "0");
    assert_string_equal(bvt(f, G_POD "/g001", b), "0");
    /* The pod's own annotation still holds under the (default) groupIdentity policy. */
    assert_string_equal(bvt(f, ANN_BPOD, b), "1");
    assert_string_equal(proc_file(f, "sys/kernel/sched_group_identity_enabled", b), "1");
    c = counted(f, QOS_RUNNER_GROUP_IDENTITY);
    assert_int_equal(c.writes, 13 + 9);
    assert_int_equal(c.errors, 0);
    fx_free(f);
}

/*
 * SystemConfig on and the NodeSLO's systemStrategy sets schedGroupIdentityEnabled 0 while a
 * class enables group identity: system config owns the sysctl, so it stays 0 tick after tick
 * (group identity writing 1 after it would switch the kernel's feature off and on each second);
 * group identity still sets sched_core 0 and the bvt values.
 */
static void test_group_identity_sysconfig_owns_sysctl(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_GROUP_IDENTITY | QOS_RUNNER_F_SYSTEM_CONFIG, false);
    struct qos_runner_counters c;
    char b[256];

    (void)state;
    gi_tree(f);
    cgt_put(f->t->proc, "sys/kernel/sched_group_identity_enabled", "1\n");
    set_slo(f, "{\"systemStrategy\":{\"schedGroupIdentityEnabled\":0},"
               "\"resourceQOSStrategy\":{\"lsClass\":{\"cpuQOS\":{\"enable\":true}}}}");
    for (int i = 0; i < 3; i++) {
        tick(f);
        assert_string_equal(proc_file(f, "sys/kernel/sched_group_identity_enabled", b), "0");
    }
    assert_string_equal(proc_file(f, "sys/kernel/sched_core", b), "0");
    assert_string_equal(bvt(f, "kubepods/burstable", b), "2");
    c = counted(f, QOS_RUNNER_SYSTEM_CONFIG);
    assert_int_equal(c.errors, 0);
    fx_free(f);
}

/*
 * A kernel without group identity (no cpu.bvt_warp_ns on the kube root): one unsupported per
 * tick and nothing below is tried; a pod cgroup lacking the file where the root has it is
 * unsupported too. Dry run: nothing written. cgroup v2: the same file in the unified tree.
 */
static void test_group_identity_unsupported_dry_run_v2(void **state)
{
    struct fx *f = fx_new(CG_V1, QOS_RUNNER_F_GROUP_IDENTITY, false);
    struct qos_runner_counters c;
    char b[256], p[CG_PATH_MAX];

    (void)state;
    cgt_mkdirs(cgt_join(p, f->cpu, "kubepods/burstable"));
    cgt_put(f->t->proc, "sys/kernel/sched_core", "1\n");
    add_pod(f, qr_pod("ls", LS_UID, "LS", "Burstable", "containerd://ls01", "{}"));
    put_bvt(f, LS_POD);
    set_slo(f, SLO_GI);
    tick(f);
    tick(f);
    c = counted(f, QOS_RUNNER_GROUP_IDENTITY);
    assert_int_equal(c.unsupported, 2);
    assert_int_equal(c.errors + c.writes, 0);
    assert_string_equal(bvt(f, LS_POD, b), "0");
    fx_free(f);

    f = fx_new(CG_V1, QOS_RUNNER_F_GROUP_IDENTITY, false);
    gi_tree(f);
    assert_int_equal(unlink(cgt_join(p, f->cpu, BE_POD "/be00/cpu.bvt_warp_ns")), 0);
    set_slo(f, SLO_GI);
    tick(f);
    c = counted(f, QOS_RUNNER_GROUP_IDENTITY);
    assert_int_equal(c.unsupported, 1);
    assert_int_equal(c.writes, 10 + 2);
    assert_int_equal(c.errors, 0);
    fx_free(f);

    f = fx_new(CG_V1, QOS_RUNNER_F_GROUP_IDENTITY, true);
    gi_tree(f);
    set_slo(f, SLO_GI);
    tick(f);
    assert_string_equal(bvt(f, "kubepods/besteffort", b), "0");
    assert_string_equal(proc_file(f, "sys/kernel/sched_core", b), "1");
    c = counted(f, QOS_RUNNER_GROUP_IDENTITY);
    assert_int_equal(c.writes, 0);
    assert_int_equal(c.dry_run, 11 + 2);
    fx_free(f);

    f = fx_new(CG_V2, QOS_RUNNER_F_GROUP_IDENTITY, false);
    gi_tree(f);
    set_slo(f, SLO_GI);
    tick(f);
    assert_string_equal(qr_file(f->t->cgroup, "kubepods/besteffort/cpu.bvt_warp_ns", b), "-1");
    assert_string_equal(qr_file(f->t->cgroup, LS_POD "/ls01/cpu.bvt_warp_ns", b), "2");
    fx_free(f);
}

/* The gates' defaults (reference 3: RdtResctrl and GroupIdentity on, SystemConfig off) and the
 * new counters in /metrics. */
static void test_defaults_and_metrics(void **state)
{
    struct qos_runner_opts o;
    struct qos_runner_stats st;
    struct strbuf out = STRBUF_INIT;

    (void)state;
    qos_runner_opts_init(&o);
    assert_true(o.features & QOS_RUNNER_F_RDT_RESCTRL);
    assert_true(o.features & QOS_RUNNER_F_GROUP_IDENTITY);
    assert_false(o.features & QOS_RUNNER_F_SYSTEM_CONFIG);
    memset(&st, 0, sizeof(st));
    st.s[QOS_RUNNER_RESCTRL].writes = 4;
    st.s[QOS_RUNNER_SYSTEM_CONFIG].unsupported = 5;
    st.s[QOS_RUNNER_GROUP_IDENTITY].unchanged = 6;
    qos_runner_render_metrics(&st, &out);
    assert_non_null(strstr(
        out.buf, "koord_agent_qos_actions_total{strategy=\"resctrl\",action=\"writes\"} 4\n"));
    assert_non_null(strstr(out.buf, "koord_agent_qos_actions_total{strategy=\"system_config\","
                                    "action=\"unsupported\"} 5\n"));
    assert_non_null(strstr(out.buf, "koord_agent_qos_actions_total{strategy=\"group_identity\","
                                    "action=\"unchanged\"} 6\n"));
    strbuf_release(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resctrl),
        cmocka_unit_test(test_resctrl_dry_run),
        cmocka_unit_test(test_resctrl_groups_made),
        cmocka_unit_test(test_resctrl_amd_and_no_mba),
        cmocka_unit_test(test_resctrl_unsupported),
        cmocka_unit_test(test_resctrl_bad_range),
        cmocka_unit_test(test_resctrl_v2),
        cmocka_unit_test(test_sysconfig),
        cmocka_unit_test(test_sysconfig_ranges_gate_dry_run),
        cmocka_unit_test(test_group_identity),
        cmocka_unit_test(test_group_identity_sysconfig_owns_sysctl),
        cmocka_unit_test(test_group_identity_unsupported_dry_run_v2),
        cmocka_unit_test(test_defaults_and_metrics),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
