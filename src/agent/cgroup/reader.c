/*
 * Open handles with a descriptor budget, and the allocation-free parsers (see reader.h). The
 * parsers walk the text line by line once and scan numbers in place; they copy their results
 * out only when the whole text was good, so callers never see half an answer.
 */
#include "agent/cgroup/reader.h"

#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/cgroup/cgroup-int.h"
#include "base/base.h"

static atomic_int max_open = CG_FILE_MAX_OPEN_DEFAULT;
static atomic_int open_count;

void cg_file_set_max_open(int n)
{
    atomic_store(&max_open, n < 0 ? 0 : n);
}

int cg_file_max_open(void)
{
    return atomic_load(&max_open);
}

int cg_file_open_count(void)
{
    return atomic_load(&open_count);
}

/* Takes a slot of the budget; false when none is left. */
static bool budget_take(void)
{
    int n = atomic_load(&open_count);

    while (n < atomic_load(&max_open))
        if (atomic_compare_exchange_weak(&open_count, &n, n + 1))
            return true;
    return false;
}

static void budget_put(void)
{
    (void)atomic_fetch_sub(&open_count, 1);
}

static int open_ro(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    return fd < 0 ? -errno : fd;
}

/* Closes f's descriptor and gives its slot back. */
static void drop_fd(struct cg_file *f)
{
    if (f->fd < 0)
        return;
    (void)close(f->fd);
    f->fd = -1;
    budget_put();
}

/* Opens f->path, keeping the descriptor in f when the budget allows (*ret_temp false) or
 * handing it to the caller to close (*ret_temp true). The fd or -errno. */
static int open_path(struct cg_file *f, bool *ret_temp)
{
    int fd = open_ro(f->path);

    if (fd < 0)
        return fd;
    *ret_temp = !budget_take();
    if (!*ret_temp)
        f->fd = fd;
    return fd;
}

/* One pread() from offset 0; when it filled the buffer, a one-byte probe tells a file that fit
 * exactly from one that did not. */
static int read_fd(int fd, char *buf, size_t size)
{
    ssize_t n = pread(fd, buf, size - 1, 0), m;
    char probe;

    if (n < 0)
        return -errno;
    buf[n] = '\0';
    if ((size_t)n == size - 1) {
        m = pread(fd, &probe, 1, n);
        if (m < 0)
            return -errno;
        if (m > 0)
            return -ENOBUFS;
    }
    return (int)n;
}

void cg_file_init(struct cg_file *f)
{
    f->fd = -1;
    f->path = NULL;
}

int cg_file_open(struct cg_file *f, const char *path)
{
    bool temp;
    int fd;

    CHECK(f->fd < 0 && !f->path);
    f->path = xstrdup(path);
    fd = open_path(f, &temp);
    if (fd < 0) {
        FREE_AND_NULL(f->path);
        return fd;
    }
    if (temp)
        (void)close(fd);
    return 0;
}

int cg_file_open_res(struct cg_file *f, const struct cg_layout *l, enum cg_res r, const char *dir)
{
    char path[CG_PATH_MAX];
    int n = cg_res_path(l, r, dir, path, sizeof(path));

    if (n < 0)
        return n;
    return cg_file_open(f, path);
}

int cg_file_read(struct cg_file *f, char *buf, size_t size)
{
    bool temp;
    int fd, r;

    CHECK(f->path && size >= 2 && size <= INT_MAX);
    buf[0] = '\0';
    for (int attempt = 0;; attempt++) {
        fd = f->fd;
        temp = false;
        if (fd < 0) {
            fd = open_path(f, &temp);
            if (fd < 0)
                return fd;
        }
        r = read_fd(fd, buf, size);
        if (temp)
            (void)close(fd);
        else if (r == -ENODEV || r == -ESTALE)
            drop_fd(f);
        /* The file we held was removed (its cgroup was): the path may name a new one. */
        if ((r == -ENODEV || r == -ESTALE) && attempt == 0)
            continue;
        return r == -ENODEV || r == -ESTALE ? -ENOENT : r;
    }
}

int cg_file_revalidate(struct cg_file *f)
{
    struct stat st, fst;
    bool temp;
    int fd;

    CHECK(f->path);
    if (stat(f->path, &st) < 0) {
        int r = -errno;

        if (r == -ENOENT)
            drop_fd(f);
        return r;
    }
    if (f->fd < 0)
        return 0;
    if (fstat(f->fd, &fst) < 0)
        return -errno;
    if (st.st_dev == fst.st_dev && st.st_ino == fst.st_ino)
        return 0;
    drop_fd(f);
    fd = open_path(f, &temp);
    if (fd < 0)
        return fd;
    if (temp)
        (void)close(fd);
    return 1;
}

const char *cg_file_path(const struct cg_file *f)
{
    return f->path;
}

void cg_file_release(struct cg_file *f)
{
    if (!f)
        return;
    drop_fd(f);
    free(f->path);
    cg_file_init(f);
}

int cg__read_path(const char *path, char *buf, size_t size)
{
    int fd, r;

    CHECK(size >= 2 && size <= INT_MAX);
    buf[0] = '\0';
    fd = open_ro(path);
    if (fd < 0)
        return fd;
    r = read_fd(fd, buf, size);
    (void)close(fd);
    return r;
}

/* Numbers. */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Digits at *p as an unsigned magnitude; -EBADMSG without digits, -ERANGE past UINT64_MAX. */
static int scan_digits(const char **p, uint64_t *ret)
{
    const char *s = *p;
    uint64_t v = 0;

    if (!is_digit(*s))
        return -EBADMSG;
    for (; is_digit(*s); s++) {
        unsigned d = (unsigned)(*s - '0');

        if (v > (UINT64_MAX - d) / 10)
            return -ERANGE;
        v = v * 10 + d;
    }
    *p = s;
    *ret = v;
    return 0;
}

int cg__scan_u64(const char **p, uint64_t *ret)
{
    return scan_digits(p, ret);
}

int cg__scan_i64(const char **p, int64_t *ret)
{
    const char *s = *p;
    bool neg = *s == '-';
    uint64_t v;
    int r;

    if (neg)
        s++;
    r = scan_digits(&s, &v);
    if (r < 0)
        return r;
    if (v > (neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX))
        return -ERANGE;
    *ret = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v) : (int64_t)v;
    *p = s;
    return 0;
}

static const char *skip_blanks(const char *s)
{
    while (cg__is_blank(*s))
        s++;
    return s;
}

static const char *skip_space(const char *s)
{
    while (cg__is_space(*s))
        s++;
    return s;
}

/* The end of the line at s: its '\n' or the terminating NUL. */
static const char *line_end(const char *s)
{
    const char *e = strchr(s, '\n');

    return e ? e : s + strlen(s);
}

/* The start of the line after the one ending at eol. */
static const char *next_line(const char *eol)
{
    return *eol ? eol + 1 : eol;
}

int cg_parse_i64(const char *text, int64_t *ret)
{
    const char *p = skip_space(text);
    int64_t v;
    int r = cg__scan_i64(&p, &v);

    if (r < 0)
        return r;
    if (*skip_space(p))
        return -EBADMSG;
    *ret = v;
    return 0;
}

int cg_parse_keyed(const char *text, const char *const *keys, size_t n, int64_t *vals,
                   uint64_t *ret_found)
{
    size_t klen[64];
    int64_t got[64];
    uint64_t found = 0, all;

    if (n > 64)
        return -EINVAL;
    all = n == 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
    for (size_t i = 0; i < n; i++)
        klen[i] = strlen(keys[i]);
    for (const char *line = text; *line && found != all;) {
        const char *eol = line_end(line), *k = line;
        size_t len;

        while (k < eol && !cg__is_blank(*k))
            k++;
        len = (size_t)(k - line);
        for (size_t i = 0; i < n; i++) {
            const char *p;

            if ((found >> i) & 1 || klen[i] != len || memcmp(keys[i], line, len) != 0)
                continue;
            p = skip_blanks(k);
            if (p == k || cg__scan_i64(&p, &got[i]) < 0)
                return -EBADMSG;
            p = skip_blanks(p);
            if (*p == '\r')
                p++;
            if (p != eol)
                return -EBADMSG;
            found |= UINT64_C(1) << i;
            break;
        }
        line = next_line(eol);
    }
    for (size_t i = 0; i < n; i++)
        if ((found >> i) & 1)
            vals[i] = got[i];
    *ret_found = found;
    return 0;
}

int cg_parse_cpu_max(const char *text, int64_t *ret_quota, int64_t *ret_period)
{
    const char *p = skip_space(text);
    int64_t quota, period;

    if (!strncmp(p, "max", 3)) {
        quota = CG_UNLIMITED;
        p += 3;
    } else if (cg__scan_i64(&p, &quota) < 0 || quota < 0) {
        return -EBADMSG;
    }
    if (!cg__is_blank(*p))
        return -EBADMSG;
    p = skip_blanks(p);
    if (cg__scan_i64(&p, &period) < 0 || period <= 0 || *skip_space(p))
        return -EBADMSG;
    *ret_quota = quota;
    *ret_period = period;
    return 0;
}

/* Keys whose values must all be present and >= 0 (bits of want), into vals. */
static int parse_counters(const char *text, const char *const *keys, size_t n, uint64_t want,
                          int64_t *vals, uint64_t *ret_found)
{
    uint64_t found = 0;
    int r = cg_parse_keyed(text, keys, n, vals, &found);

    if (r < 0)
        return r;
    if ((found & want) != want)
        return -EBADMSG;
    for (size_t i = 0; i < n; i++)
        if ((found >> i) & 1 && vals[i] < 0)
            return -EBADMSG;
    *ret_found = found;
    return 0;
}

static int usec_to_ns(int64_t usec, int64_t *ret)
{
    if (usec > INT64_MAX / 1000)
        return -ERANGE;
    *ret = usec * 1000;
    return 0;
}

int cg_parse_cpu_stat(const char *text, enum cg_version v, struct cg_cpu_stat *ret)
{
    static const char *const v1_keys[] = {"nr_periods", "nr_throttled", "throttled_time"};
    static const char *const v2_keys[] = {"usage_usec", "nr_periods", "nr_throttled",
                                          "throttled_usec"};
    struct cg_cpu_stat s = {.usage_ns = -1};
    int64_t vals[4] = {0};
    uint64_t found;
    int r;

    if (v == CG_V1) {
        r = parse_counters(text, v1_keys, 3, 0x7, vals, &found);
        if (r < 0)
            return r;
        s.nr_periods = vals[0];
        s.nr_throttled = vals[1];
        s.throttled_ns = vals[2];
        s.has_throttling = true;
    } else if (v == CG_V2) {
        r = parse_counters(text, v2_keys, 4, 0x1, vals, &found);
        if (r < 0)
            return r;
        r = usec_to_ns(vals[0], &s.usage_ns);
        if (r < 0)
            return r;
        if ((found & 0xe) == 0xe) {
            s.has_throttling = true;
            s.nr_periods = vals[1];
            s.nr_throttled = vals[2];
            r = usec_to_ns(vals[3], &s.throttled_ns);
            if (r < 0)
                return r;
        }
    } else {
        return -EINVAL;
    }
    *ret = s;
    return 0;
}

int cg_parse_memory_stat(const char *text, enum cg_version v, struct cg_memory_stat *ret)
{
    /* In the order of struct cg_memory_stat. */
    static const char *const v1_keys[] = {
        "total_cache",         "total_rss",         "total_inactive_anon", "total_active_anon",
        "total_inactive_file", "total_active_file", "total_unevictable"};
    static const char *const v2_keys[] = {"file",        "anon",          "inactive_anon",
                                          "active_anon", "inactive_file", "active_file",
                                          "unevictable"};
    int64_t vals[7];
    uint64_t found;
    int r;

    if (v != CG_V1 && v != CG_V2)
        return -EINVAL;
    r = parse_counters(text, v == CG_V1 ? v1_keys : v2_keys, 7, 0x7f, vals, &found);
    if (r < 0)
        return r;
    ret->cache = vals[0];
    ret->rss = vals[1];
    ret->inactive_anon = vals[2];
    ret->active_anon = vals[3];
    ret->inactive_file = vals[4];
    ret->active_file = vals[5];
    ret->unevictable = vals[6];
    return 0;
}

/* The busy ticks of a /proc/stat cpu line's fields at p (user nice system idle iowait irq
 * softirq ...; at least those seven). */
static int cpu_line_ticks(const char *p, uint64_t *ret)
{
    uint64_t f[7];

    for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
        if (!cg__is_blank(*p))
            return -EBADMSG;
        p = skip_blanks(p);
        if (cg__scan_u64(&p, &f[i]) < 0)
            return -EBADMSG;
    }
    /* Counters of a sane kernel are far from 2^64; a sum that wraps is a corrupt file. */
    *ret = 0;
    for (size_t i = 0; i < ARRAY_SIZE(f); i++)
        if (i != 3 && i != 4 && __builtin_add_overflow(*ret, f[i], ret))
            return -EBADMSG;
    return 0;
}

/* What a /proc/stat line of len bytes is: 0 not a cpu line, 1 the "cpu" total, 2 a "cpuN" line,
 * -1 too short to tell (the cut end of a prefix). */
static int cpu_line_kind(const char *line, size_t len)
{
    for (size_t i = 0; i < 3 && i < len; i++)
        if (line[i] != "cpu"[i])
            return 0;
    if (len < 4)
        return -1;
    return cg__is_blank(line[3]) ? 1 : is_digit(line[3]) ? 2 : 0;
}

int cg_parse_proc_stat(const char *text, uint64_t *ret_ticks, uint64_t *per_cpu, size_t max_cpus,
                       size_t *ret_ncpus)
{
    bool seen_total = false, complete = false;
    uint64_t total = 0, ticks, idx;
    size_t ncpus = 0;
    int r;

    if (per_cpu)
        memset(per_cpu, 0, max_cpus * sizeof(uint64_t));
    for (const char *line = text; *line;) {
        const char *eol = line_end(line), *p = line + 3;
        int kind = cpu_line_kind(line, (size_t)(eol - line));

        if (kind < 0 && *eol)
            kind = 0; /* a whole line too short to be a cpu line */

        if (kind == 0) {
            /* The cpu lines lead the file; the first other line closes them. */
            complete = seen_total;
            break;
        }
        /* An unterminated cpu line is the cut end of a prefix: its numbers may be short. */
        if (!*eol)
            break;
        if (kind == 1) {
            r = cpu_line_ticks(p, &total);
            if (r < 0)
                return r;
            seen_total = true;
            if (!per_cpu)
                break;
        } else if (per_cpu) {
            if (cg__scan_u64(&p, &idx) < 0)
                return -EBADMSG;
            r = cpu_line_ticks(p, &ticks);
            if (r < 0)
                return r;
            if (idx >= max_cpus)
                return -E2BIG;
            per_cpu[idx] = ticks;
            if (idx + 1 > ncpus)
                ncpus = (size_t)idx + 1;
        }
        line = next_line(eol);
    }
    if (!seen_total)
        return -EBADMSG;
    if (per_cpu && !complete)
        return -ENOBUFS;
    *ret_ticks = total;
    if (ret_ncpus)
        *ret_ncpus = ncpus;
    return 0;
}

int cg_parse_meminfo(const char *text, struct cg_meminfo *ret)
{
    static const char *const keys[] = {"MemTotal", "MemFree", "MemAvailable"};
    uint64_t vals[3], found = 0;

    for (const char *line = text; *line && found != 0x7;) {
        const char *eol = line_end(line), *colon = memchr(line, ':', (size_t)(eol - line));

        for (size_t i = 0; colon && i < ARRAY_SIZE(keys); i++) {
            const char *p = colon + 1;
            size_t len = strlen(keys[i]);

            if ((found >> i) & 1 || (size_t)(colon - line) != len || memcmp(line, keys[i], len))
                continue;
            p = skip_blanks(p);
            if (cg__scan_u64(&p, &vals[i]) < 0)
                return -EBADMSG;
            p = skip_blanks(p);
            if (!strncmp(p, "kB", 2))
                p = skip_blanks(p + 2);
            if (p != eol)
                return -EBADMSG;
            found |= UINT64_C(1) << i;
            break;
        }
        line = next_line(eol);
    }
    if (found != 0x7)
        return -EBADMSG;
    ret->mem_total_kib = vals[0];
    ret->mem_free_kib = vals[1];
    ret->mem_available_kib = vals[2];
    return 0;
}

/* Read + parse. */

int cg_read_i64(struct cg_file *f, enum cg_version v, enum cg_res r, int64_t *ret)
{
    char buf[CG_READ_BUF_SIZE];
    int n = cg_file_read(f, buf, sizeof(buf));

    return n < 0 ? n : cg_res_parse(v, r, buf, ret);
}

int cg_read_cpu_stat(struct cg_file *f, enum cg_version v, struct cg_cpu_stat *ret)
{
    char buf[CG_READ_BUF_SIZE];
    int n = cg_file_read(f, buf, sizeof(buf));

    return n < 0 ? n : cg_parse_cpu_stat(buf, v, ret);
}

int cg_read_memory_stat(struct cg_file *f, enum cg_version v, struct cg_memory_stat *ret)
{
    char buf[CG_READ_BUF_SIZE];
    int n = cg_file_read(f, buf, sizeof(buf));

    return n < 0 ? n : cg_parse_memory_stat(buf, v, ret);
}

int cg_read_cpuset(struct cg_file *f, struct cg_cpuset *ret)
{
    char buf[CG_READ_BUF_SIZE];
    int n = cg_file_read(f, buf, sizeof(buf));

    if (n < 0)
        return n;
    return cg_cpuset_parse(buf, ret) < 0 ? -EBADMSG : 0;
}

int cg_read_proc_stat(struct cg_file *f, uint64_t *ret_ticks, uint64_t *per_cpu, size_t max_cpus,
                      size_t *ret_ncpus)
{
    char buf[CG_PROC_STAT_BUF_SIZE];
    int n = cg_file_read(f, buf, sizeof(buf));

    /* The interrupt counters after the cpu lines may not fit; the parser checks that the cpu
     * lines did. */
    if (n < 0 && n != -ENOBUFS)
        return n;
    return cg_parse_proc_stat(buf, ret_ticks, per_cpu, max_cpus, ret_ncpus);
}

int cg_read_meminfo(struct cg_file *f, struct cg_meminfo *ret)
{
    char buf[CG_READ_BUF_SIZE];
    int n = cg_file_read(f, buf, sizeof(buf));

    return n < 0 ? n : cg_parse_meminfo(buf, ret);
}
