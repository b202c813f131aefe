/*
 * Tests for agent/cgroup/writer.c on prepared v1 and v2 trees of both drivers: the file written
 * and its text per version (shares as a weight, "max", "<quota> <period>"), identical values
 * skipped without touching the file (also when spelled differently or rounded to a page by the
 * kernel), dry run writing nothing, validation before any I/O, -ENOENT for an unsupported file
 * and for a gone cgroup with messages telling them apart, and the error paths a plain tree can
 * produce: a directory where the file should be, a write the file refuses (/proc/version), and
 * a read-back that differs (/dev/null).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/cgroup/writer.h"
#include "base/base.h"
#include "base/log.h"
#include "cgtest.h"

/* The content of file in cgroup dir of subsys (ignored on v2). */
static const char *get_cg(const struct cg_layout *l, const char *subsys, const char *dir,
                          const char *file, char *buf, size_t size)
{
    char path[CG_PATH_MAX];

    assert_true(cg_dir_path(l, subsys, dir, path, sizeof(path)) > 0);
    return cgt_get(path, file, buf, size);
}

/* Sets the file's mtime to the epoch + 1000 s, so a later check tells whether it was written. */
static void age(const struct cg_layout *l, const char *subsys, const char *dir, const char *file)
{
    const struct timespec ts[2] = {{.tv_sec = 1000}, {.tv_sec = 1000}};
    char d[CG_PATH_MAX], path[CG_PATH_MAX];

    assert_true(cg_dir_path(l, subsys, dir, d, sizeof(d)) > 0);
    assert_int_equal(utimensat(AT_FDCWD, cgt_join(path, d, file), ts, 0), 0);
}

static bool untouched(const struct cg_layout *l, const char *subsys, const char *dir,
                      const char *file)
{
    char d[CG_PATH_MAX], path[CG_PATH_MAX];
    struct stat st;

    assert_true(cg_dir_path(l, subsys, dir, d, sizeof(d)) > 0);
    assert_int_equal(stat(cgt_join(path, d, file), &st), 0);
    return st.st_mtim.tv_sec == 1000;
}

#define assert_contains(hay, needle)                                                               \
    do {                                                                                           \
        if (!strstr((hay), (needle)))                                                              \
            fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle));                           \
    } while (0)

static void write_v1(struct cgt *t, enum cg_driver d)
{
    struct cgt_pod p;
    struct cg_writer w;
    char buf[256], other[CG_PATH_MAX], path[CG_PATH_MAX];
    long page = sysconf(_SC_PAGESIZE);

    cgt_pod_tree(t, CG_V1, d, &p);
    cg_writer_init(&w, &p.l, false);
    assert_string_equal(cg_writer_error(&w), "");

    /* Identical: not written at all. */
    age(&p.l, "cpu", p.pod, "cpu.shares");
    assert_int_equal(cg_write(&w, CG_CPU_SHARES, p.pod, "1024"), CG_WRITE_UNCHANGED);
    assert_true(untouched(&p.l, "cpu", p.pod, "cpu.shares"));
    assert_int_equal(cg_write(&w, CG_CPU_SHARES, p.pod, "512"), CG_WRITE_DONE);
    assert_string_equal(get_cg(&p.l, "cpu", p.pod, "cpu.shares", buf, sizeof(buf)), "512");
    assert_false(untouched(&p.l, "cpu", p.pod, "cpu.shares"));
    assert_int_equal(cg_write_i64(&w, CG_CPU_SHARES, p.pod, 512), CG_WRITE_UNCHANGED);

    /* Quota: -1 and max are the same unlimited. */
    assert_int_equal(cg_write(&w, CG_CPU_CFS_QUOTA, p.pod, "max"), CG_WRITE_UNCHANGED);
    assert_int_equal(cg_write_i64(&w, CG_CPU_CFS_QUOTA, p.pod, 50000), CG_WRITE_DONE);
    assert_string_equal(get_cg(&p.l, "cpu", p.pod, "cpu.cfs_quota_us", buf, sizeof(buf)), "50000");
    assert_int_equal(cg_write_i64(&w, CG_CPU_CFS_QUOTA, p.pod, CG_UNLIMITED), CG_WRITE_DONE);
    assert_string_equal(get_cg(&p.l, "cpu", p.pod, "cpu.cfs_quota_us", buf, sizeof(buf)), "-1");
    assert_int_equal(cg_write(&w, CG_CPU_CFS_PERIOD, p.pod, "100000"), CG_WRITE_UNCHANGED);
    assert_int_equal(cg_write(&w, CG_CPU_BURST, p.pod, "100000000"), CG_WRITE_DONE);
    assert_int_equal(cg_write(&w, CG_CPU_IDLE, p.pod, "1"), CG_WRITE_DONE);

    /* Memory: the v1 unlimited number is -1; a limit rounded down to a page is the limit. */
    assert_int_equal(cg_write(&w, CG_MEMORY_LIMIT, p.pod, "-1"), CG_WRITE_UNCHANGED);
    (void)snprintf(buf, sizeof(buf), "%ld\n", 1000001 / page * page);
    cgt_put_cg(&p.l, "memory", p.pod, "memory.limit_in_bytes", buf);
    assert_int_equal(cg_write(&w, CG_MEMORY_LIMIT, p.pod, "1000001"), CG_WRITE_UNCHANGED);
    assert_int_equal(cg_write(&w, CG_MEMORY_LIMIT, p.pod, "2000000"), CG_WRITE_DONE);
    assert_string_equal(get_cg(&p.l, "memory", p.pod, "memory.limit_in_bytes", buf, sizeof(buf)),
                        "2000000");

    /* Cpusets compare as sets and are written canonical. */
    assert_int_equal(cg_write(&w, CG_CPUSET_CPUS, p.pod, "3,2,1,0"), CG_WRITE_UNCHANGED);
    assert_int_equal(cg_write(&w, CG_CPUSET_CPUS, p.pod, "1,0"), CG_WRITE_DONE);
    assert_string_equal(get_cg(&p.l, "cpuset", p.pod, "cpuset.cpus", buf, sizeof(buf)), "0-1");

    /* Absent files: unsupported (the dir is there) or the pod is gone. */
    assert_int_equal(cg_write(&w, CG_CPU_BVT_WARP_NS, p.pod, "2"), -ENOENT);
    assert_contains(cg_writer_error(&w), "cpu.bvt_warp_ns\" does not exist: not supported");
    assert_contains(cg_writer_error(&w), p.pod);
    assert_int_equal(cg_write(&w, CG_MEMORY_WMARK_RATIO, p.pod, "95"), -ENOENT);
    assert_int_equal(cg_write(&w, CG_MEMORY_PRIORITY, p.pod, "12"), -ENOENT);
    assert_true(cg_pod_dir(d, CG_QOS_BESTEFFORT, "gone", other, sizeof(other)) > 0);
    assert_int_equal(cg_write(&w, CG_CPU_SHARES, other, "2"), -ENOENT);
    assert_contains(cg_writer_error(&w), "the cgroup is gone");
    assert_contains(cg_writer_error(&w), other);
    /* The pod removed after we computed its dir. */
    assert_true(cg_dir_path(&p.l, "cpu", p.pod, path, sizeof(path)) > 0);
    cgt_rm_rf(path);
    assert_int_equal(cg_write(&w, CG_CPU_SHARES, p.pod, "2"), -ENOENT);
    assert_contains(cg_writer_error(&w), "the cgroup is gone");

    /* Bad values and dirs fail before any I/O. */
    assert_int_equal(cg_write(&w, CG_MEMORY_LIMIT, p.pod, "-2"), -ERANGE);
    assert_contains(cg_writer_error(&w), "memory.limit_in_bytes\" is out of range [0, ");
    assert_contains(cg_writer_error(&w), "] or max");
    assert_int_equal(cg_write(&w, CG_CPUSET_CPUS, p.pod, "9999"), -ERANGE);
    assert_contains(cg_writer_error(&w), "names a CPU >= 4096");
    assert_int_equal(cg_write(&w, CG_CPU_SHARES, "../../etc", "2"), -EINVAL);
    assert_contains(cg_writer_error(&w), "invalid cgroup dir \"../../etc\" for cpu.shares");
    assert_int_equal(cg_write(&w, CG_CPU_USAGE, p.pod, "0"), -EOPNOTSUPP);
    assert_contains(cg_writer_error(&w), "is not writable on cgroup v1");
    assert_int_equal(cg_write(&w, CG_CPU_SHARES, p.pod, NULL), -EINVAL);
    assert_contains(cg_writer_error(&w), "invalid value \"(null)\"");
    /* A success clears the message. */
    assert_int_equal(cg_write(&w, CG_MEMORY_LIMIT, p.pod, "2000000"), CG_WRITE_UNCHANGED);
    assert_string_equal(cg_writer_error(&w), "");
}

static void test_write_v1_systemd(void **state)
{
    write_v1(*state, CG_DRIVER_SYSTEMD);
}

static void test_write_v1_cgroupfs(void **state)
{
    write_v1(*state, CG_DRIVER_CGROUPFS);
}

static void write_v2(struct cgt *t, enum cg_driver d)
{
    struct cgt_pod p;
    struct cg_writer w;
    char buf[256];

    cgt_pod_tree(t, CG_V2, d, &p);
    cg_writer_init(&w, &p.l, false);

    /* Shares as weights: 1024 is weight 39, already there. */
    age(&p.l, NULL, p.pod, "cpu.weight");
    assert_int_equal(cg_write(&w, CG_CPU_SHARES, p.pod, "1024"), CG_WRITE_UNCHANGED);
    assert_true(untouched(&p.l, NULL, p.pod, "cpu.weight"));
    /* 1 + 2046 * 9999 / 262142 = 1 + 78 */
    assert_int_equal(cg_write(&w, CG_CPU_SHARES, p.pod, "2048"), CG_WRITE_DONE);
    assert_string_equal(get_cg(&p.l, NULL, p.pod, "cpu.weight", buf, sizeof(buf)), "79");
    /* Another shares value of the same weight is no change. */
    assert_int_equal(cg_write(&w, CG_CPU_SHARES, p.pod, "2050"), CG_WRITE_UNCHANGED);

    /* cpu.max: the quota with the period the file has. */
    assert_int_equal(cg_write(&w, CG_CPU_CFS_QUOTA, p.pod, "-1"), CG_WRITE_UNCHANGED);
    assert_int_equal(cg_write(&w, CG_CPU_CFS_QUOTA, p.pod, "50000"), CG_WRITE_DONE);
    assert_string_equal(get_cg(&p.l, NULL, p.pod, "cpu.max", buf, sizeof(buf)), "50000 100000");
    assert_int_equal(cg_write(&w, CG_CPU_CFS_QUOTA, p.pod, "50000"), CG_WRITE_UNCHANGED);
    assert_int_equal(cg_write_i64(&w, CG_CPU_CFS_QUOTA, p.pod, CG_UNLIMITED), CG_WRITE_DONE);
    assert_string_equal(get_cg(&p.l, NULL, p.pod, "cpu.max", buf, sizeof(buf)), "max 100000");
    assert_int_equal(cg_write(&w, CG_CPU_CFS_PERIOD, p.pod, "100000"), -EOPNOTSUPP);
    assert_contains(cg_writer_error(&w), "cpu.max\" is not writable on cgroup v2");
    assert_int_equal(cg_write(&w, CG_CPU_BURST, p.pod, "2000"), CG_WRITE_DONE);
    assert_string_equal(get_cg(&p.l, NULL, p.pod, "cpu.max.burst", buf, sizeof(buf)), "2000");

    /* cpuset: written to cpuset.cpus (empty), compared there, not with .effective. */
    assert_int_equal(cg_write(&w, CG_CPUSET_CPUS, p.pod, "0-3"), CG_WRITE_DONE);
    assert_string_equal(get_cg(&p.l, NULL, p.pod, "cpuset.cpus", buf, sizeof(buf)), "0-3");
    assert_string_equal(get_cg(&p.l, NULL, p.pod, "cpuset.cpus.effective", buf, sizeof(buf)),
                        "0-3\n");

    /* "max" on v2. */
    assert_int_equal(cg_write(&w, CG_MEMORY_LIMIT, p.pod, "-1"), CG_WRITE_UNCHANGED);
    assert_int_equal(cg_write(&w, CG_MEMORY_HIGH, p.pod, "max"), CG_WRITE_UNCHANGED);
    assert_int_equal(cg_write(&w, CG_MEMORY_LIMIT, p.pod, "1073741824"), CG_WRITE_DONE);
    assert_string_equal(get_cg(&p.l, NULL, p.pod, "memory.max", buf, sizeof(buf)), "1073741824");
    assert_int_equal(cg_write(&w, CG_MEMORY_LIMIT, p.pod, "max"), CG_WRITE_DONE);
    assert_string_equal(get_cg(&p.l, NULL, p.pod, "memory.max", buf, sizeof(buf)), "max");
    assert_int_equal(cg_write(&w, CG_MEMORY_MIN, p.pod, "0"), CG_WRITE_UNCHANGED);
    assert_int_equal(cg_write(&w, CG_MEMORY_LOW, p.pod, "4096"), CG_WRITE_DONE);
    assert_int_equal(cg_write(&w, CG_MEMORY_OOM_GROUP, p.pod, "1"), CG_WRITE_DONE);
    assert_string_equal(get_cg(&p.l, NULL, p.pod, "memory.oom.group", buf, sizeof(buf)), "1");

    /* Anolis files: absent here. The container has only some files. */
    assert_int_equal(cg_write(&w, CG_MEMORY_WMARK_SCALE_FACTOR, p.pod, "50"), -ENOENT);
    assert_contains(cg_writer_error(&w), "not supported by this kernel");
    assert_int_equal(cg_write(&w, CG_MEMORY_USE_PRIORITY_OOM, p.ctr, "1"), -ENOENT);
    assert_int_equal(cg_write(&w, CG_CPU_SHARES, p.ctr, "2"), CG_WRITE_DONE);
    assert_string_equal(get_cg(&p.l, NULL, p.ctr, "cpu.weight", buf, sizeof(buf)), "1");
}

static void test_write_v2_systemd(void **state)
{
    write_v2(*state, CG_DRIVER_SYSTEMD);
}

static void test_write_v2_cgroupfs(void **state)
{
    write_v2(*state, CG_DRIVER_CGROUPFS);
}

static void test_dry_run(void **state)
{
    struct cgt_pod p;
    struct cg_writer w;
    char buf[256];
    enum log_level saved = log_max_level;

    /* The dry-run line is at info; keep the test output quiet. */
    log_max_level = LOG_ERROR;
    cgt_pod_tree(*state, CG_V1, CG_DRIVER_SYSTEMD, &p);
    cg_writer_init(&w, &p.l, true);
    age(&p.l, "cpu", p.pod, "cpu.shares");
    assert_int_equal(cg_write(&w, CG_CPU_SHARES, p.pod, "512"), CG_WRITE_DRY_RUN);
    assert_string_equal(get_cg(&p.l, "cpu", p.pod, "cpu.shares", buf, sizeof(buf)), "1024\n");
    assert_true(untouched(&p.l, "cpu", p.pod, "cpu.shares"));
    assert_int_equal(cg_write(&w, CG_CPU_SHARES, p.pod, "1024"), CG_WRITE_UNCHANGED);
    assert_int_equal(cg_write(&w, CG_CPUSET_CPUS, p.pod, "0"), CG_WRITE_DRY_RUN);
    assert_string_equal(get_cg(&p.l, "cpuset", p.pod, "cpuset.cpus", buf, sizeof(buf)), "0-3\n");
    assert_int_equal(cg_write(&w, CG_MEMORY_LIMIT, p.pod, "1048576"), CG_WRITE_DRY_RUN);
    assert_string_equal(get_cg(&p.l, "memory", p.pod, "memory.limit_in_bytes", buf, sizeof(buf)),
                        "9223372036854771712\n");
    /* Validation and absence are reported as without dry run. */
    assert_int_equal(cg_write(&w, CG_CPU_SHARES, p.pod, "1"), -ERANGE);
    assert_int_equal(cg_write(&w, CG_CPU_BVT_WARP_NS, p.pod, "1"), -ENOENT);
    log_max_level = saved;
}

static void test_write_errors(void **state)
{
    struct cgt *t = *state;
    struct cgt_pod p;
    struct cg_writer w;
    char dir[CG_PATH_MAX], path[CG_PATH_MAX];
    int r;

    cgt_pod_tree(t, CG_V1, CG_DRIVER_CGROUPFS, &p);
    cg_writer_init(&w, &p.l, false);
    assert_true(cg_dir_path(&p.l, "cpu", p.pod, dir, sizeof(dir)) > 0);

    /* A directory where the file should be: the first read fails, naming the path. */
    assert_int_equal(unlink(cgt_join(path, dir, "cpu.idle")), 0);
    cgt_mkdirs(path);
    assert_int_equal(cg_write(&w, CG_CPU_IDLE, p.pod, "1"), -EISDIR);
    assert_contains(cg_writer_error(&w), "cannot read \"");
    assert_contains(cg_writer_error(&w), path);

    /* A file that reads but refuses writes (EIO as root, EACCES otherwise). */
    assert_int_equal(unlink(cgt_join(path, dir, "cpu.cfs_burst_us")), 0);
    assert_int_equal(symlink("/proc/version", path), 0);
    r = cg_write(&w, CG_CPU_BURST, p.pod, "1000");
    assert_true(r < 0 && r != -ENOENT);
    assert_contains(cg_writer_error(&w), "cannot write \"1000\" to \"");
    assert_contains(cg_writer_error(&w), path);

    /* A file that takes the write and reads back something else: the kernel's silent clamp,
     * played by /dev/null. */
    assert_int_equal(unlink(cgt_join(path, dir, "cpu.shares")), 0);
    assert_int_equal(symlink("/dev/null", path), 0);
    assert_int_equal(cg_write(&w, CG_CPU_SHARES, p.pod, "2048"), -EIO);
    assert_contains(cg_writer_error(&w), "cpu.shares\" reads \"\" after writing \"2048\"");
}

/* A value compare for the tests: equal after a leading "v=". */
static bool same_tagged(const char *current, const char *value)
{
    return !strncmp(current, "v=", 2) && !strcmp(current + 2, value);
}

/*
 * Files outside the hierarchy (sysctls, resctrl): the caller's comparison decides "unchanged"
 * and the read-back; dry run writes nothing; a missing file is -ENOENT; a file that reads back
 * something else is -EIO. Commands (tasks, sched_features) are appended unchecked.
 */
static void test_write_file(void **state)
{
    struct cgt *t = *state;
    struct cg_layout l;
    struct cg_writer w, dry;
    char path[CG_PATH_MAX], buf[256];
    enum log_level saved = log_max_level;

    log_max_level = LOG_ERROR;
    assert_int_equal(cg_layout_init(&l, &t->roots, CG_V1, CG_DRIVER_CGROUPFS), 0);
    cg_writer_init(&w, &l, false);
    cg_writer_init(&dry, &l, true);
    cgt_put(t->proc, "sys/vm/min_free_kbytes", "67584\n");
    cgt_join(path, t->proc, "sys/vm/min_free_kbytes");

    assert_true(cg_same_int(" 67584\n", "67584"));
    assert_false(cg_same_int("67584", "67585"));
    assert_false(cg_same_int("", "0"));
    assert_false(cg_same_int("0", "zero"));

    assert_int_equal(cg_write_file(&w, path, "67584", cg_same_int), CG_WRITE_UNCHANGED);
    assert_int_equal(cg_write_file(&dry, path, "671088", cg_same_int), CG_WRITE_DRY_RUN);
    assert_string_equal(cgt_get(t->proc, "sys/vm/min_free_kbytes", buf, sizeof(buf)), "67584\n");
    assert_int_equal(cg_write_file(&w, path, "671088", cg_same_int), CG_WRITE_DONE);
    assert_string_equal(cgt_get(t->proc, "sys/vm/min_free_kbytes", buf, sizeof(buf)), "671088");

    /* The comparison is the caller's: "v=1" holds "1" for same_tagged; after a write of "2"
     * the file reads "2", which does not hold "2" for it: the read-back fails. */
    cgt_put(t->proc, "x", "v=1");
    cgt_join(path, t->proc, "x");
    assert_int_equal(cg_write_file(&w, path, "1", same_tagged), CG_WRITE_UNCHANGED);
    assert_int_equal(cg_write_file(&w, path, "2", same_tagged), -EIO);
    assert_contains(cg_writer_error(&w), "x\" reads \"2\" after writing \"2\"");
    assert_string_equal(cgt_get(t->proc, "x", buf, sizeof(buf)), "2");

    cgt_join(path, t->proc, "sys/vm/absent");
    assert_int_equal(cg_write_file(&w, path, "1", cg_same_int), -ENOENT);
    assert_contains(cg_writer_error(&w), "absent\" does not exist");
    assert_int_equal(cg_write_file(&dry, path, "1", cg_same_int), -ENOENT);

    /* Appends: each write kept in order; a dry run keeps the file; a missing file. */
    cgt_put(t->resctrl, "LS/tasks", "7\n");
    cgt_join(path, t->resctrl, "LS/tasks");
    assert_int_equal(cg_append_file(&w, path, "8\n"), CG_WRITE_DONE);
    assert_int_equal(cg_append_file(&w, path, "9\n"), CG_WRITE_DONE);
    assert_int_equal(cg_append_file(&dry, path, "10\n"), CG_WRITE_DRY_RUN);
    assert_string_equal(cgt_get(t->resctrl, "LS/tasks", buf, sizeof(buf)), "7\n8\n9\n");
    cgt_join(path, t->resctrl, "BE/tasks");
    assert_int_equal(cg_append_file(&w, path, "8\n"), -ENOENT);
    assert_contains(cg_writer_error(&w), "BE/tasks\" does not exist");
    log_max_level = saved;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_v1_systemd, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_write_v1_cgroupfs, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_write_v2_systemd, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_write_v2_cgroupfs, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_dry_run, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_write_errors, cgt_setup, cgt_teardown),
        cmocka_unit_test_setup_teardown(test_write_file, cgt_setup, cgt_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
