/*
 * Checked cgroup writes (see writer.h). A write opens, writes and closes its file each time:
 * strategies change few files rarely, and a kept descriptor would pin removed cgroups.
 */
#include "agent/cgroup/writer.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/cgroup/cgroup-int.h"
#include "agent/cgroup/reader.h"
#include "base/base.h"
#include "base/log.h"

#define COMP "cgroup"
/* Room for the longest canonical CPU list (every other CPU of CG_CPUSET_MAX_CPUS) and for what
 * a cgroup file we write holds. */
#define VALUE_MAX 16384

void cg_writer_init(struct cg_writer *w, const struct cg_layout *l, bool dry_run)
{
    w->layout = l;
    w->dry_run = dry_run;
    w->err[0] = '\0';
}

const char *cg_writer_error(const struct cg_writer *w)
{
    return w->err;
}

static int fail(struct cg_writer *w, int r, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct cg_writer *w, int r, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    /* NOLINTNEXTLINE(clang-analyzer-valist.Uninitialized): va_start initialised ap */
    (void)vsnprintf(w->err, sizeof(w->err), fmt, ap);
    va_end(ap);
    return r;
}

/* The file text without surrounding whitespace, shortened, for messages. */
static const char *shown(const char *text, char *buf, size_t size)
{
    size_t n;

    while (cg__is_space(*text))
        text++;
    n = strlen(text);
    while (n > 0 && cg__is_space(text[n - 1]))
        n--;
    if (n >= size)
        n = size - 1;
    memcpy(buf, text, n);
    buf[n] = '\0';
    return buf;
}

/* Whether the file text holds the value want (raw want_raw) as the kernel would store it. */
static bool same_value(enum cg_version v, enum cg_res r, const char *text, const char *want,
                       int64_t want_raw)
{
    const struct cg_res_info *info = cg_res_info(r);
    int64_t cur;
    long page;

    if (info->kind == CG_KIND_CPUSET) {
        struct cg_cpuset a, b;

        return cg_cpuset_parse(text, &a) == 0 && cg_cpuset_parse(want, &b) == 0 &&
               cg_cpuset_equal(&a, &b);
    }
    if (cg__res_parse_raw(v, r, text, &cur) < 0)
        return false;
    if (cur == want_raw)
        return true;
    /* The kernel keeps memory limits in pages and rounds a byte count down. */
    if (info->memory_bytes && want_raw > 0 && cur >= 0) {
        page = sysconf(_SC_PAGESIZE);
        return page > 0 && cur == want_raw / page * page;
    }
    return false;
}

/* On v2 the quota shares cpu.max with the period: write "<quota> <period>" with the period the
 * file has, so the write says the whole line (the kernel would keep the period anyway). Returns
 * the new length of want. */
static size_t keep_period(enum cg_version v, enum cg_res r, const char *cur, char *want,
                          size_t size, size_t len)
{
    int64_t quota, period;
    int n;

    if (v != CG_V2 || r != CG_CPU_CFS_QUOTA || cg_parse_cpu_max(cur, &quota, &period) < 0)
        return len;
    n = snprintf(want + len, size - len, " %" PRId64, period);
    if (n < 0 || (size_t)n >= size - len) {
        want[len] = '\0';
        return len;
    }
    return len + (size_t)n;
}

/* Writes text in one write(2), as the kernel's files want it, and closes fd. 0 or -errno. */
static int write_close(int fd, const char *text, size_t len)
{
    ssize_t n = write(fd, text, len);
    int r = 0;

    if (n < 0)
        r = -errno;
    else if ((size_t)n != len)
        r = -EIO;
    if (close(fd) < 0 && r == 0)
        r = -errno;
    return r;
}

static int write_file(const char *path, const char *text, size_t len)
{
    int fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);

    return fd < 0 ? -errno : write_close(fd, text, len);
}

/* The -ENOENT message: a missing directory is a gone cgroup, a missing file an old or
 * non-Anolis kernel. */
static int fail_absent(struct cg_writer *w, enum cg_res r, const char *dir, const char *path)
{
    const struct cg_res_info *info = cg_res_info(r);
    char dpath[CG_PATH_MAX];
    struct stat st;

    if (cg_dir_path(w->layout, info->v1_subsys, dir, dpath, sizeof(dpath)) >= 0 &&
        stat(dpath, &st) == 0)
        return fail(w, -ENOENT, "\"%s\" does not exist: not supported by this kernel", path);
    return fail(w, -ENOENT, "\"%s\" does not exist: the cgroup is gone", path);
}

static int fail_value(struct cg_writer *w, int r, enum cg_res res, const char *value,
                      const char *path)
{
    const struct cg_res_info *info = cg_res_info(res);

    if (r == -EOPNOTSUPP)
        return fail(w, r, "\"%s\" is not writable on cgroup %s", path,
                    cg_version_name(w->layout->version));
    if (r == -ERANGE && info->kind == CG_KIND_INT)
        return fail(w, r, "value \"%s\" for \"%s\" is out of range [%" PRId64 ", %" PRId64 "]%s",
                    value, path, info->min, info->max, info->unlimited_ok ? " or max" : "");
    if (r == -ERANGE)
        return fail(w, r, "value \"%s\" for \"%s\" names a CPU >= %d", value, path,
                    CG_CPUSET_MAX_CPUS);
    return fail(w, r, "invalid value \"%s\" for \"%s\": %s", value, path, err_str(r));
}

int cg_write(struct cg_writer *w, enum cg_res r, const char *dir, const char *value)
{
    const struct cg_layout *l = w->layout;
    char path[CG_PATH_MAX], want[VALUE_MAX], cur[VALUE_MAX], s1[256];
    int64_t want_raw = 0;
    size_t want_len;
    int n, rc;

    w->err[0] = '\0';
    n = cg_res_write_path(l, r, dir, path, sizeof(path));
    if (n < 0)
        return fail(w, n, "invalid cgroup dir \"%s\" for %s: %s", dir ? dir : "(null)",
                    cg_res_info(r)->name, err_str(n));
    n = cg__res_format_raw(l->version, r, value, want, sizeof(want), &want_raw);
    if (n < 0)
        return fail_value(w, n, r, value ? value : "(null)", path);
    want_len = (size_t)n;

    n = cg__read_path(path, cur, sizeof(cur));
    if (n == -ENOENT)
        return fail_absent(w, r, dir, path);
    if (n < 0)
        return fail(w, n, "cannot read \"%s\": %s", path, err_str(n));
    if (same_value(l->version, r, cur, want, want_raw))
        return CG_WRITE_UNCHANGED;
    want_len = keep_period(l->version, r, cur, want, sizeof(want), want_len);
    if (w->dry_run) {
        log_info(COMP, "dry run: would write \"%s\" to \"%s\" (now \"%s\")", want, path,
                 shown(cur, s1, sizeof(s1)));
        return CG_WRITE_DRY_RUN;
    }

    rc = write_file(path, want, want_len);
    if (rc == -ENOENT)
        return fail_absent(w, r, dir, path);
    if (rc < 0)
        return fail(w, rc, "cannot write \"%s\" to \"%s\": %s", want, path, err_str(rc));
    n = cg__read_path(path, cur, sizeof(cur));
    if (n < 0)
        return fail(w, n, "cannot read back \"%s\": %s", path, err_str(n));
    if (!same_value(l->version, r, cur, want, want_raw))
        return fail(w, -EIO, "\"%s\" reads \"%s\" after writing \"%s\"", path,
                    shown(cur, s1, sizeof(s1)), want);
    log_debug(COMP, "wrote \"%s\" to \"%s\"", want, path);
    return CG_WRITE_DONE;
}

bool cg_same_int(const char *current, const char *value)
{
    int64_t a, b;

    return cg_parse_i64(current, &a) == 0 && cg_parse_i64(value, &b) == 0 && a == b;
}

int cg_write_file(struct cg_writer *w, const char *path, const char *value, cg_same_fn same)
{
    char cur[VALUE_MAX], s1[256], s2[256];
    size_t len = strlen(value);
    int n, rc;

    w->err[0] = '\0';
    n = cg__read_path(path, cur, sizeof(cur));
    if (n == -ENOENT)
        return fail(w, n, "\"%s\" does not exist", path);
    if (n < 0)
        return fail(w, n, "cannot read \"%s\": %s", path, err_str(n));
    if (same(cur, value))
        return CG_WRITE_UNCHANGED;
    if (w->dry_run) {
        log_info(COMP, "dry run: would write \"%s\" to \"%s\" (now \"%s\")",
                 shown(value, s2, sizeof(s2)), path, shown(cur, s1, sizeof(s1)));
        return CG_WRITE_DRY_RUN;
    }
    rc = write_file(path, value, len);
    if (rc < 0)
        return fail(w, rc, "cannot write \"%s\" to \"%s\": %s", shown(value, s2, sizeof(s2)), path,
                    err_str(rc));
    n = cg__read_path(path, cur, sizeof(cur));
    if (n < 0)
        return fail(w, n, "cannot read back \"%s\": %s", path, err_str(n));
    if (!same(cur, value))
        return fail(w, -EIO, "\"%s\" reads \"%s\" after writing \"%s\"", path,
                    shown(cur, s1, sizeof(s1)), shown(value, s2, sizeof(s2)));
    log_debug(COMP, "wrote \"%s\" to \"%s\"", shown(value, s2, sizeof(s2)), path);
    return CG_WRITE_DONE;
}

int cg_append_file(struct cg_writer *w, const char *path, const char *value)
{
    size_t len = strlen(value);
    char s1[256];
    int fd, r = 0;

    w->err[0] = '\0';
    if (w->dry_run) {
        /* debug: resctrl appends every thread of every pod, each tick, in a dry run */
        log_debug(COMP, "dry run: would append \"%s\" to \"%s\"", shown(value, s1, sizeof(s1)),
                  path);
        return CG_WRITE_DRY_RUN;
    }
    fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) {
        r = -errno;
        if (r == -ENOENT)
            return fail(w, r, "\"%s\" does not exist", path);
        return fail(w, r, "cannot open \"%s\": %s", path, err_str(r));
    }
    r = write_close(fd, value, len);
    if (r < 0)
        return fail(w, r, "cannot write \"%s\" to \"%s\": %s", shown(value, s1, sizeof(s1)), path,
                    err_str(r));
    return CG_WRITE_DONE;
}

int cg_write_i64(struct cg_writer *w, enum cg_res r, const char *dir, int64_t value)
{
    char num[32];

    (void)snprintf(num, sizeof(num), "%" PRId64, value);
    return cg_write(w, r, dir, num);
}
