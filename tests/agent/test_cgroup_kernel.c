/*
 * agent/cgroup against the running kernel's cgroup v1 hierarchy: a group of our own,
 * /sys/fs/cgroup/<subsys>/koord-test-<pid>/ in cpu, cpuacct, memory and cpuset, takes a busy child
 * process; we read its CPU usage growing and its anon memory through kept-open handles, write
 * quota, shares, a memory limit (which the kernel rounds to a page) and a cpuset through
 * cg_write() and read them back, and see an open handle answer -ENOENT once the group is
 * removed. Other groups are never touched. Teardown kills the child and removes the group on
 * every exit path (cmocka runs it after a failed assertion too); the child also dies with us
 * (PR_SET_PDEATHSIG) if the test process is killed.
 *
 * Skipped, with a message, when not root, when /sys/fs/cgroup is not cgroup v1, or when the
 * group cannot be created (read-only or absent mounts in CI containers).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/cgroup/reader.h"
#include "agent/cgroup/writer.h"
#include "base/base.h"

#define CHILD_ANON  (32L << 20)
#define DEADLINE_MS 60000 /* generous: valgrind on a loaded 2-core machine */

static const char *const subsystems[] = {"cpu", "cpuacct", "memory", "cpuset"};

struct ktest {
    const char *skip; /* why the test cannot run here, or NULL */
    struct cg_layout l;
    char dir[64];                      /* koord-test-<pid> */
    bool made[ARRAY_SIZE(subsystems)]; /* the group dirs we created */
    pid_t child;
    int to_child[2], from_child[2];
    struct cg_file usage, f; /* released at teardown, also after a failed assertion */
};

static long now_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Waits up to ms for fd to become readable; the wait between polls of kernel counters. */
static bool wait_readable(int fd, int ms)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};

    return poll(&p, 1, ms) > 0;
}

static int write_str(const char *path, const char *s)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;
    size_t len = strlen(s);

    if (fd < 0)
        return -errno;
    if (write(fd, s, len) != (ssize_t)len)
        r = -errno;
    (void)close(fd);
    return r;
}

static void group_path(const struct ktest *k, size_t i, char *buf, size_t size)
{
    assert_true(cg_dir_path(&k->l, subsystems[i], k->dir, buf, size) > 0);
}

/* rmdir, retried while the kernel still counts the reaped child (EBUSY). */
static void remove_group(struct ktest *k, size_t i)
{
    char path[CG_PATH_MAX];
    long until = now_ms() + DEADLINE_MS;

    if (!k->made[i])
        return;
    group_path(k, i, path, sizeof(path));
    while (rmdir(path) < 0) {
        if (errno == ENOENT)
            break;
        if (errno != EBUSY || now_ms() > until) {
            print_error("cannot remove %s: %s\n", path, strerror(errno));
            return;
        }
        (void)poll(NULL, 0, 10);
    }
    k->made[i] = false;
}

static void stop_child(struct ktest *k)
{
    if (k->child <= 0)
        return;
    (void)kill(k->child, SIGKILL);
    while (waitpid(k->child, NULL, 0) < 0 && errno == EINTR)
        ;
    k->child = 0;
}

static int setup(void **state)
{
    struct ktest *k = calloc(1, sizeof(*k));
    enum cg_version v;
    char path[CG_PATH_MAX];

    assert_non_null(k);
    *state = k;
    k->to_child[0] = k->to_child[1] = k->from_child[0] = k->from_child[1] = -1;
    cg_file_init(&k->usage);
    cg_file_init(&k->f);
    if (geteuid() != 0) {
        k->skip = "not root";
        return 0;
    }
    if (cg_detect_version("/sys/fs/cgroup", &v) < 0 || v != CG_V1) {
        k->skip = "/sys/fs/cgroup is not a cgroup v1 hierarchy";
        return 0;
    }
    /* No kubepods here: the driver is irrelevant to a group we name ourselves. */
    assert_int_equal(cg_layout_init(&k->l, NULL, CG_V1, CG_DRIVER_CGROUPFS), 0);
    (void)snprintf(k->dir, sizeof(k->dir), "koord-test-%ld", (long)getpid());
    for (size_t i = 0; i < ARRAY_SIZE(subsystems); i++) {
        group_path(k, i, path, sizeof(path));
        if (mkdir(path, 0755) < 0) {
            k->skip = "cannot create a group under /sys/fs/cgroup (mounts not writable)";
            print_message("mkdir %s: %s\n", path, strerror(errno));
            return 0;
        }
        k->made[i] = true;
    }
    return 0;
}

static int teardown(void **state)
{
    struct ktest *k = *state;

    cg_file_release(&k->usage);
    cg_file_release(&k->f);
    stop_child(k);
    for (size_t i = 0; i < ARRAY_SIZE(subsystems); i++)
        remove_group(k, i);
    for (size_t i = 0; i < 2; i++) {
        if (k->to_child[i] >= 0)
            (void)close(k->to_child[i]);
        if (k->from_child[i] >= 0)
            (void)close(k->from_child[i]);
    }
    free(k);
    return 0;
}

/* The child: waits to be moved, allocates and touches CHILD_ANON bytes (charged to the new
 * memory group), says so, and spins. Never returns. */
static _Noreturn void child_main(struct ktest *k, pid_t parent)
{
    volatile unsigned long spin = 0;
    char c;
    char *mem;

    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(1);
    if (read(k->to_child[0], &c, 1) != 1)
        _exit(1);
    mem = malloc(CHILD_ANON);
    if (!mem)
        _exit(1);
    memset(mem, 1, CHILD_ANON);
    if (write(k->from_child[1], "r", 1) != 1)
        _exit(1);
    for (;;)
        spin = spin + (unsigned long)mem[spin % CHILD_ANON];
}

static void start_child(struct ktest *k)
{
    pid_t parent = getpid();
    char path[CG_PATH_MAX], procs[CG_PATH_MAX + 16], pid[32];
    long until;

    assert_int_equal(pipe2(k->to_child, O_CLOEXEC), 0);
    assert_int_equal(pipe2(k->from_child, O_CLOEXEC), 0);
    k->child = fork();
    assert_true(k->child >= 0);
    if (k->child == 0)
        child_main(k, parent);
    /* Into cpu, cpuacct and memory (a cpuset group needs cpus and mems before it takes
     * tasks; its knobs are tested on the empty group). */
    (void)snprintf(pid, sizeof(pid), "%ld", (long)k->child);
    for (size_t i = 0; i < 3; i++) {
        group_path(k, i, path, sizeof(path));
        (void)snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
        assert_int_equal(write_str(procs, pid), 0);
    }
    assert_int_equal(write(k->to_child[1], "g", 1), 1);
    until = now_ms() + DEADLINE_MS;
    while (!wait_readable(k->from_child[0], 100))
        if (now_ms() > until)
            fail_msg("the child did not allocate its memory in time");
}

static void test_kernel_v1(void **state)
{
    struct ktest *k = *state;
    struct cg_writer w;
    struct cg_file *usage = &k->usage, *f = &k->f;
    struct cg_memory_stat ms;
    struct cg_cpuset set;
    char path[CG_PATH_MAX];
    int64_t u0, u, x;
    long until;

    if (k->skip) {
        print_message("skipped: %s\n", k->skip);
        skip();
    }
    start_child(k);
    cg_writer_init(&w, &k->l, false);

    /* CPU usage grows while the child spins: 20 ms of CPU time, seen through one open fd. */
    assert_int_equal(cg_file_open_res(usage, &k->l, CG_CPU_USAGE, k->dir), 0);
    assert_int_equal(cg_read_i64(usage, CG_V1, CG_CPU_USAGE, &u0), 0);
    until = now_ms() + DEADLINE_MS;
    do {
        if (now_ms() > until)
            fail_msg("cpuacct.usage stayed at %lld", (long long)u0);
        (void)poll(NULL, 0, 10);
        assert_int_equal(cg_read_i64(usage, CG_V1, CG_CPU_USAGE, &u), 0);
        assert_true(u >= u0);
    } while (u - u0 < 20000000);

    /* Its anon memory is charged here. rss counts mapped pages at once; the LRU counts that
     * koordlet's usage sums lag by the pages still in per-CPU LRU batches, which a process that
     * stopped allocating may leave there for seconds: hence the margin. Stats are flushed
     * lazily, so poll. */
    assert_int_equal(cg_file_open_res(f, &k->l, CG_MEMORY_STAT, k->dir), 0);
    until = now_ms() + DEADLINE_MS;
    for (;;) {
        assert_int_equal(cg_read_memory_stat(f, CG_V1, &ms), 0);
        if (ms.rss >= CHILD_ANON && cg_memory_stat_usage(&ms) >= CHILD_ANON / 4 * 3)
            break;
        if (now_ms() > until)
            fail_msg("memory.stat rss %lld, anon %lld", (long long)ms.rss,
                     (long long)cg_memory_stat_usage(&ms));
        (void)poll(NULL, 0, 10);
    }
    cg_file_release(f);
    assert_int_equal(cg_file_open_res(f, &k->l, CG_MEMORY_USAGE, k->dir), 0);
    assert_int_equal(cg_read_i64(f, CG_V1, CG_MEMORY_USAGE, &x), 0);
    assert_true(x >= CHILD_ANON);
    cg_file_release(f);

    /* cfs quota: written, read back, then a repeat is no write. */
    assert_int_equal(cg_write_i64(&w, CG_CPU_CFS_QUOTA, k->dir, 50000), CG_WRITE_DONE);
    assert_int_equal(cg_file_open_res(f, &k->l, CG_CPU_CFS_QUOTA, k->dir), 0);
    assert_int_equal(cg_read_i64(f, CG_V1, CG_CPU_CFS_QUOTA, &x), 0);
    assert_int_equal(x, 50000);
    assert_int_equal(cg_write_i64(&w, CG_CPU_CFS_QUOTA, k->dir, 50000), CG_WRITE_UNCHANGED);
    assert_int_equal(cg_write(&w, CG_CPU_CFS_QUOTA, k->dir, "max"), CG_WRITE_DONE);
    assert_int_equal(cg_read_i64(f, CG_V1, CG_CPU_CFS_QUOTA, &x), 0);
    assert_int_equal(x, CG_UNLIMITED);
    cg_file_release(f);
    /* The kernel's own bound agrees with ours: 999 us never reaches it. */
    assert_int_equal(cg_write_i64(&w, CG_CPU_CFS_QUOTA, k->dir, 999), -ERANGE);

    /* shares */
    assert_int_equal(cg_write_i64(&w, CG_CPU_SHARES, k->dir, 512), CG_WRITE_DONE);
    assert_int_equal(cg_file_open_res(f, &k->l, CG_CPU_SHARES, k->dir), 0);
    assert_int_equal(cg_read_i64(f, CG_V1, CG_CPU_SHARES, &x), 0);
    assert_int_equal(x, 512);
    cg_file_release(f);
    assert_int_equal(cg_write_i64(&w, CG_CPU_SHARES, k->dir, 512), CG_WRITE_UNCHANGED);

    /* A fresh memory group is unlimited; a limit one byte past a page reads back rounded down,
     * which is no mismatch. */
    assert_int_equal(cg_file_open_res(f, &k->l, CG_MEMORY_LIMIT, k->dir), 0);
    assert_int_equal(cg_read_i64(f, CG_V1, CG_MEMORY_LIMIT, &x), 0);
    assert_int_equal(x, CG_UNLIMITED);
    assert_int_equal(cg_write_i64(&w, CG_MEMORY_LIMIT, k->dir, (1L << 30) + 1), CG_WRITE_DONE);
    assert_int_equal(cg_read_i64(f, CG_V1, CG_MEMORY_LIMIT, &x), 0);
    assert_int_equal(x, 1L << 30);
    assert_int_equal(cg_write_i64(&w, CG_MEMORY_LIMIT, k->dir, (1L << 30) + 1), CG_WRITE_UNCHANGED);
    assert_int_equal(cg_write_i64(&w, CG_MEMORY_LIMIT, k->dir, CG_UNLIMITED), CG_WRITE_DONE);
    assert_int_equal(cg_read_i64(f, CG_V1, CG_MEMORY_LIMIT, &x), 0);
    assert_int_equal(x, CG_UNLIMITED);
    cg_file_release(f);

    /* cpuset: a new group's list is empty until written. */
    assert_int_equal(cg_file_open_res(f, &k->l, CG_CPUSET_CPUS, k->dir), 0);
    assert_int_equal(cg_read_cpuset(f, &set), 0);
    assert_int_equal(cg_cpuset_count(&set), 0);
    assert_int_equal(cg_write(&w, CG_CPUSET_CPUS, k->dir, "0"), CG_WRITE_DONE);
    assert_int_equal(cg_read_cpuset(f, &set), 0);
    assert_int_equal(cg_cpuset_count(&set), 1);
    assert_true(cg_cpuset_has(&set, 0));
    assert_int_equal(cg_write(&w, CG_CPUSET_CPUS, k->dir, "0"), CG_WRITE_UNCHANGED);
    cg_file_release(f);

    /* Anolis-only files are absent on other kernels: reported as unsupported. */
    assert_true(cg_res_path(&k->l, CG_CPU_BVT_WARP_NS, k->dir, path, sizeof(path)) > 0);
    if (access(path, F_OK) < 0) {
        assert_int_equal(cg_write_i64(&w, CG_CPU_BVT_WARP_NS, k->dir, 2), -ENOENT);
        assert_non_null(strstr(cg_writer_error(&w), "not supported by this kernel"));
    }

    /* The "pod" goes away: the handle kept open on its cpuacct.usage says -ENOENT. */
    stop_child(k);
    remove_group(k, 1);
    assert_false(k->made[1]);
    assert_int_equal(cg_read_i64(usage, CG_V1, CG_CPU_USAGE, &u), -ENOENT);
    assert_int_equal(cg_write_i64(&w, CG_CPU_SHARES, k->dir, 2), CG_WRITE_DONE);
    cg_file_release(usage);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_kernel_v1, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
