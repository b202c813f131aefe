/*
 * Helpers shared by the tests of agent/cgroup (tests/agent/test_cgroup*.c): a prepared host tree
 * in a mkdtemp() directory (cgroup root, /proc, /sys), written file by file, and removed
 * recursively at teardown; and realistic file contents with the numbers the tests expect from
 * them, computed by hand in the comments.
 *
 * Include after <cmocka.h>. Helpers fail the running test through cmocka when the tree cannot
 * be prepared, so a broken fixture never passes as an empty file.
 */
#ifndef KOORD_TESTS_AGENT_CGTEST_H
#define KOORD_TESTS_AGENT_CGTEST_H

#ifndef cmocka_unit_test
#error "include <cmocka.h> before cgtest.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/cgroup/cgroup.h"
#include "agent/cgroup/resource.h"

/* A test's host tree: root holds cgroup/, proc/, sys/, resctrl/. */
struct cgt {
    char root[64];
    char cgroup[128], proc[128], sys[128], resctrl[128];
    struct cg_roots roots;
};

static inline void cgt_mkdirs(const char *path)
{
    char buf[CG_PATH_MAX];
    size_t n = strlen(path);

    assert_true(n < sizeof(buf));
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            fail_msg("mkdir %s: %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, 0755) < 0 && errno != EEXIST)
        fail_msg("mkdir %s: %s", buf, strerror(errno));
}

/* "<a>/<b>" into buf[CG_PATH_MAX]. */
static inline const char *cgt_join(char *buf, const char *a, const char *b)
{
    int n = snprintf(buf, CG_PATH_MAX, "%s/%s", a, b);

    assert_true(n > 0 && n < CG_PATH_MAX);
    return buf;
}

/* Writes content to <dir>/<rel>, creating the parents. */
static inline void cgt_put(const char *dir, const char *rel, const char *content)
{
    char path[CG_PATH_MAX];
    char *slash;
    size_t len = strlen(content);
    int fd;

    cgt_join(path, dir, rel);
    slash = strrchr(path, '/');
    *slash = '\0';
    cgt_mkdirs(path);
    *slash = '/';
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        fail_msg("open %s: %s", path, strerror(errno));
    assert_int_equal(write(fd, content, len), (ssize_t)len);
    assert_int_equal(close(fd), 0);
}

/* The content of <dir>/<rel> into buf[size]; "" when absent. */
static inline const char *cgt_get(const char *dir, const char *rel, char *buf, size_t size)
{
    char path[CG_PATH_MAX];
    int fd = open(cgt_join(path, dir, rel), O_RDONLY | O_CLOEXEC);
    ssize_t n = 0;

    if (fd >= 0) {
        n = read(fd, buf, size - 1);
        (void)close(fd);
    }
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static inline int cgt_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static inline void cgt_rm_rf(const char *path)
{
    struct stat st;

    if (lstat(path, &st) < 0)
        return;
    if (nftw(path, cgt_rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
        fail_msg("cannot remove %s: %s", path, strerror(errno));
}

/* A fresh empty host tree; remove it with cgt_free(). */
static inline struct cgt *cgt_new(void)
{
    struct cgt *t = calloc(1, sizeof(*t));

    assert_non_null(t);
    (void)snprintf(t->root, sizeof(t->root), "/tmp/koord-cgtest-XXXXXX");
    assert_non_null(mkdtemp(t->root));
    (void)snprintf(t->cgroup, sizeof(t->cgroup), "%s/cgroup", t->root);
    (void)snprintf(t->proc, sizeof(t->proc), "%s/proc", t->root);
    (void)snprintf(t->sys, sizeof(t->sys), "%s/sys", t->root);
    (void)snprintf(t->resctrl, sizeof(t->resctrl), "%s/resctrl", t->root);
    cgt_mkdirs(t->cgroup);
    cgt_mkdirs(t->proc);
    cgt_mkdirs(t->sys);
    cgt_mkdirs(t->resctrl);
    t->roots = (struct cg_roots){.cgroup_root = t->cgroup,
                                 .proc_root = t->proc,
                                 .sys_root = t->sys,
                                 .resctrl_root = t->resctrl};
    return t;
}

static inline void cgt_free(struct cgt *t)
{
    if (!t)
        return;
    cgt_rm_rf(t->root);
    free(t);
}

/* A cmocka setup/teardown pair keeping a struct cgt in *state. */
static inline int cgt_setup(void **state)
{
    *state = cgt_new();
    return 0;
}

static inline int cgt_teardown(void **state)
{
    cgt_free(*state);
    return 0;
}

/*
 * Realistic contents. The memory.stat texts are whole files as a 6.x kernel writes them (v1 from
 * a kubepods burstable pod, v2 likewise); the numbers the tests expect:
 *   v1: usage = total_inactive_anon + total_active_anon + total_unevictable
 *             = 353533952 + 1605632 + 14483456 = 369623040
 *   v2: usage = inactive_anon + active_anon + unevictable = 104857600 + 2097152 + 8192
 *             = 106962944
 */
#define CGT_V1_MEMORY_STAT                                                                         \
    "cache 9523200\n"                                                                              \
    "rss 6946816\n"                                                                                \
    "rss_huge 0\n"                                                                                 \
    "shmem 9068544\n"                                                                              \
    "mapped_file 7643136\n"                                                                        \
    "dirty 94208\n"                                                                                \
    "writeback 0\n"                                                                                \
    "swap 0\n"                                                                                     \
    "pgpgin 71675\n"                                                                               \
    "pgpgout 67654\n"                                                                              \
    "pgfault 114829\n"                                                                             \
    "pgmajfault 0\n"                                                                               \
    "inactive_anon 0\n"                                                                            \
    "active_anon 1531904\n"                                                                        \
    "inactive_file 0\n"                                                                            \
    "active_file 454656\n"                                                                         \
    "unevictable 14483456\n"                                                                       \
    "hierarchical_memory_limit 9223372036854771712\n"                                              \
    "hierarchical_memsw_limit 9223372036854771712\n"                                               \
    "total_cache 839909376\n"                                                                      \
    "total_rss 360620032\n"                                                                        \
    "total_rss_huge 0\n"                                                                           \
    "total_shmem 9068544\n"                                                                        \
    "total_mapped_file 100175872\n"                                                                \
    "total_dirty 35262464\n"                                                                       \
    "total_writeback 0\n"                                                                          \
    "total_swap 0\n"                                                                               \
    "total_pgpgin 115624380\n"                                                                     \
    "total_pgpgout 115346457\n"                                                                    \
    "total_pgfault 152594828\n"                                                                    \
    "total_pgmajfault 10130\n"                                                                     \
    "total_inactive_anon 353533952\n"                                                              \
    "total_active_anon 1605632\n"                                                                  \
    "total_inactive_file 265166848\n"                                                              \
    "total_active_file 565673984\n"                                                                \
    "total_unevictable 14483456\n"

#define CGT_V2_MEMORY_STAT                                                                         \
    "anon 106954752\n"                                                                             \
    "file 52428800\n"                                                                              \
    "kernel 3276800\n"                                                                             \
    "kernel_stack 245760\n"                                                                        \
    "pagetables 430080\n"                                                                          \
    "sec_pagetables 0\n"                                                                           \
    "percpu 1440\n"                                                                                \
    "sock 0\n"                                                                                     \
    "vmalloc 0\n"                                                                                  \
    "shmem 0\n"                                                                                    \
    "zswap 0\n"                                                                                    \
    "zswapped 0\n"                                                                                 \
    "file_mapped 20971520\n"                                                                       \
    "file_dirty 4096\n"                                                                            \
    "file_writeback 0\n"                                                                           \
    "swapcached 0\n"                                                                               \
    "anon_thp 0\n"                                                                                 \
    "file_thp 0\n"                                                                                 \
    "shmem_thp 0\n"                                                                                \
    "inactive_anon 104857600\n"                                                                    \
    "active_anon 2097152\n"                                                                        \
    "inactive_file 31457280\n"                                                                     \
    "active_file 20971520\n"                                                                       \
    "unevictable 8192\n"                                                                           \
    "slab_reclaimable 1572864\n"                                                                   \
    "slab_unreclaimable 983040\n"                                                                  \
    "slab 2555904\n"                                                                               \
    "workingset_refault_anon 0\n"                                                                  \
    "workingset_refault_file 12\n"                                                                 \
    "workingset_activate_anon 0\n"                                                                 \
    "workingset_activate_file 3\n"                                                                 \
    "pgscan 0\n"                                                                                   \
    "pgsteal 0\n"                                                                                  \
    "pgfault 51234\n"                                                                              \
    "pgmajfault 12\n"                                                                              \
    "thp_fault_alloc 0\n"                                                                          \
    "thp_collapse_alloc 0\n"

/* v1 cpu.stat (with the burst keys of 5.14+); v2 cpu.stat with the cpu controller enabled:
 * usage 8345678 us -> 8345678000 ns, throttled 1234567 us -> 1234567000 ns. */
#define CGT_V1_CPU_STAT                                                                            \
    "nr_periods 4242\n"                                                                            \
    "nr_throttled 17\n"                                                                            \
    "throttled_time 987654321\n"                                                                   \
    "nr_bursts 0\n"                                                                                \
    "burst_time 0\n"
#define CGT_V2_CPU_STAT                                                                            \
    "usage_usec 8345678\n"                                                                         \
    "user_usec 6000000\n"                                                                          \
    "system_usec 2345678\n"                                                                        \
    "core_sched.force_idle_usec 0\n"                                                               \
    "nr_periods 500\n"                                                                             \
    "nr_throttled 25\n"                                                                            \
    "throttled_usec 1234567\n"                                                                     \
    "nr_bursts 0\n"                                                                                \
    "burst_usec 0\n"

/*
 * /proc/stat of a 4-CPU host, CPU 2 offline (no line). Busy ticks = user + nice + system + irq +
 * softirq:
 *   cpu  : 308546 + 547 + 64339 + 0 + 2724 = 376156
 *   cpu0 : 144366 + 297 + 29032 + 0 + 773  = 174468
 *   cpu1 : 164180 + 249 + 35307 + 0 + 1950 = 201686
 *   cpu3 : 1 + 1 + 1 + 1000 + 10          = 1013
 */
#define CGT_PROC_STAT                                                                              \
    "cpu  308546 547 64339 561840 3624 0 2724 194 0 0\n"                                           \
    "cpu0 144366 297 29032 295514 1051 0 773 99 0 0\n"                                             \
    "cpu1 164180 249 35307 266326 2572 0 1950 94 0 0\n"                                            \
    "cpu3 1 1 1 7 0 1000 10 0 0 0\n"                                                               \
    "intr 8194280 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 1 1 12 0 0 0 0 951 304 0 90\n"   \
    "ctxt 17498963\n"                                                                              \
    "btime 1769000000\n"                                                                           \
    "processes 123456\n"                                                                           \
    "procs_running 3\n"                                                                            \
    "procs_blocked 0\n"                                                                            \
    "softirq 4213253 0 1130263 124 318470 0 0 32 1493920 0 1270444\n"

#define CGT_PROC_MEMINFO                                                                           \
    "MemTotal:       16314324 kB\n"                                                                \
    "MemFree:          923456 kB\n"                                                                \
    "MemAvailable:    9876543 kB\n"                                                                \
    "Buffers:          204800 kB\n"                                                                \
    "Cached:          8123456 kB\n"                                                                \
    "SwapCached:            0 kB\n"                                                                \
    "Active:          6000000 kB\n"                                                                \
    "Inactive:        7000000 kB\n"                                                                \
    "HugePages_Total:       0\n"                                                                   \
    "Hugepagesize:       2048 kB\n"

/* A pod UID and a container ID as the kubelet reports them. */
#define CGT_UID "7712555c-ce62-454a-9e18-9ff0217b8941"
#define CGT_CID "containerd://4f1d1c1e8a0b2d3c4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f1"

/* Writes content to file in cgroup dir of subsystem subsys (ignored on v2). */
static inline void cgt_put_cg(const struct cg_layout *l, const char *subsys, const char *dir,
                              const char *file, const char *content)
{
    char path[CG_PATH_MAX];

    assert_true(cg_dir_path(l, subsys, dir, path, sizeof(path)) > 0);
    cgt_put(path, file, content);
}

/* A Burstable pod with one container, laid out for version v and driver d in t. */
struct cgt_pod {
    struct cg_layout l;
    char pod[CG_PATH_MAX]; /* the pod dir */
    char ctr[CG_PATH_MAX]; /* the container dir */
};

/*
 * The files of the pod (and the fewer of its container) with these values:
 *   CPU usage        pod 123456789012 ns, container 23456789012 ns (v2: usage_usec / 1000)
 *   cpu.stat         CGT_V1_CPU_STAT / CGT_V2_CPU_STAT (pod only)
 *   quota, period    unlimited, 100000
 *   shares           1024 (v2: weight 39, read back as 998)
 *   burst, idle      0, 0
 *   cpuset           0-3 (v2: cpuset.cpus empty, cpuset.cpus.effective 0-3)
 *   memory limit     unlimited; usage 381456384; memory.stat CGT_V1/V2_MEMORY_STAT
 *   v2 only          memory.min 0, memory.low 0, memory.high max, memory.oom.group 0
 * No Anolis files (cpu.bvt_warp_ns, memory.wmark_*, memory.priority). Plus /proc/stat
 * (CGT_PROC_STAT) and /proc/meminfo (CGT_PROC_MEMINFO).
 */
static inline void cgt_pod_tree(struct cgt *t, enum cg_version v, enum cg_driver d,
                                struct cgt_pod *ret)
{
    const struct cg_layout *l = &ret->l;
    const char *pod = ret->pod, *ctr = ret->ctr;

    assert_int_equal(cg_layout_init(&ret->l, &t->roots, v, d), 0);
    assert_true(cg_pod_dir(d, CG_QOS_BURSTABLE, CGT_UID, ret->pod, sizeof(ret->pod)) > 0);
    assert_true(cg_container_dir(d, ret->pod, CGT_CID, ret->ctr, sizeof(ret->ctr)) > 0);
    if (v == CG_V1) {
        cgt_put_cg(l, "cpuacct", pod, "cpuacct.usage", "123456789012\n");
        cgt_put_cg(l, "cpuacct", ctr, "cpuacct.usage", "23456789012\n");
        cgt_put_cg(l, "cpu", pod, "cpu.stat", CGT_V1_CPU_STAT);
        cgt_put_cg(l, "cpu", pod, "cpu.cfs_quota_us", "-1\n");
        cgt_put_cg(l, "cpu", pod, "cpu.cfs_period_us", "100000\n");
        cgt_put_cg(l, "cpu", pod, "cpu.shares", "1024\n");
        cgt_put_cg(l, "cpu", pod, "cpu.cfs_burst_us", "0\n");
        cgt_put_cg(l, "cpu", pod, "cpu.idle", "0\n");
        cgt_put_cg(l, "cpu", ctr, "cpu.shares", "1024\n");
        cgt_put_cg(l, "cpuset", pod, "cpuset.cpus", "0-3\n");
        cgt_put_cg(l, "memory", pod, "memory.limit_in_bytes", "9223372036854771712\n");
        cgt_put_cg(l, "memory", pod, "memory.usage_in_bytes", "381456384\n");
        cgt_put_cg(l, "memory", pod, "memory.stat", CGT_V1_MEMORY_STAT);
    } else {
        cgt_put_cg(l, NULL, pod, "cpu.stat", CGT_V2_CPU_STAT);
        cgt_put_cg(l, NULL, ctr, "cpu.stat", "usage_usec 23456789\nuser_usec 1\nsystem_usec 2\n");
        cgt_put_cg(l, NULL, pod, "cpu.max", "max 100000\n");
        cgt_put_cg(l, NULL, pod, "cpu.weight", "39\n");
        cgt_put_cg(l, NULL, pod, "cpu.max.burst", "0\n");
        cgt_put_cg(l, NULL, pod, "cpu.idle", "0\n");
        cgt_put_cg(l, NULL, ctr, "cpu.weight", "39\n");
        cgt_put_cg(l, NULL, pod, "cpuset.cpus", "\n");
        cgt_put_cg(l, NULL, pod, "cpuset.cpus.effective", "0-3\n");
        cgt_put_cg(l, NULL, pod, "memory.max", "max\n");
        cgt_put_cg(l, NULL, pod, "memory.current", "381456384\n");
        cgt_put_cg(l, NULL, pod, "memory.stat", CGT_V2_MEMORY_STAT);
        cgt_put_cg(l, NULL, pod, "memory.min", "0\n");
        cgt_put_cg(l, NULL, pod, "memory.low", "0\n");
        cgt_put_cg(l, NULL, pod, "memory.high", "max\n");
        cgt_put_cg(l, NULL, pod, "memory.oom.group", "0\n");
    }
    cgt_put(t->proc, "stat", CGT_PROC_STAT);
    cgt_put(t->proc, "meminfo", CGT_PROC_MEMINFO);
}

#endif
