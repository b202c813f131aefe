/*
 * agent/cgroup/reader.h: cheap repeated reads of cgroup and /proc files. The collectors read a
 * few files per pod and per container every second; opening and closing each one costs a path
 * walk in the kernel, so a series keeps its file open and pread()s it from offset 0 into a
 * fixed buffer, and the parsers below extract numbers from that buffer without allocating.
 *
 * Handles: one struct cg_file per series, owned by the collector next to the series' previous
 * counter, so its lifetime is the pod's and no cache, eviction policy or lock is needed. What a
 * cache keyed by path would bound, a global budget bounds: at most cg_file_max_open() handles
 * (default CG_FILE_MAX_OPEN_DEFAULT) keep their descriptor; a handle opened beyond it keeps only
 * its path and reads by open + pread + close, with the same results. The agent raises the
 * budget with cg_file_set_max_open() after raising RLIMIT_NOFILE.
 *
 * When a pod goes away: the kernel answers reads of an open file of a removed cgroup with
 * ENODEV (kernfs), and an NFS-style stale handle with ESTALE. cg_file_read() then reopens the
 * path once: a recreated cgroup (same pod restarted) is read again transparently; a gone one
 * gives -ENOENT, and the handle may be released. A file on a plain filesystem (test trees) that
 * is unlinked keeps reading its old content through the open descriptor; cg_file_revalidate()
 * compares the path with the descriptor and catches that, and a collector may call it whenever it
 * resyncs its pod list.
 *
 * A read uses one pread(): a read shorter than asked is taken as the end of the file, which holds
 * for regular files, kernfs and seq_file (they fill the buffer unless the file ended).
 *
 * A handle is used by one thread at a time; the budget counter is atomic.
 */
#ifndef KOORD_AGENT_CGROUP_READER_H
#define KOORD_AGENT_CGROUP_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/cgroup/cgroup.h"
#include "agent/cgroup/resource.h"

#define CG_FILE_MAX_OPEN_DEFAULT 512

/* Buffer sizes the cg_read_*() helpers use (on the stack): cgroup files, and /proc/stat, whose
 * per-CPU lines take about 64 bytes each (so about 1000 CPUs). */
#define CG_READ_BUF_SIZE      8192
#define CG_PROC_STAT_BUF_SIZE 65536

struct cg_file {
    /* private */
    int fd;     /* -1: not open (released, gone, or over the budget) */
    char *path; /* owned; NULL when released */
};

/* clang-format off */
#define CG_FILE_INIT { .fd = -1, .path = NULL }
/* clang-format on */

void cg_file_init(struct cg_file *f);

/*
 * Opens path for reading (O_RDONLY | O_CLOEXEC) into f, which must be initialised or released.
 * -ENOENT when it does not exist (or its directory does not), other -errno of open().
 */
int cg_file_open(struct cg_file *f, const char *path);

/* cg_file_open() of the file read for r in cgroup dir (cg_res_path()); also its errors. */
int cg_file_open_res(struct cg_file *f, const struct cg_layout *l, enum cg_res r, const char *dir);

/*
 * Reads the whole file into buf[size] (size >= 2), NUL-terminated, and returns its length.
 * -ENOENT when the file or its cgroup is gone (see above); -ENOBUFS when the file is longer than
 * size - 1 bytes (buf then holds its NUL-terminated first size - 1 bytes: /proc/stat readers
 * want that prefix); other -errno of pread()/open(), with buf "". f must be open
 * (cg_file_open() returned 0).
 */
int cg_file_read(struct cg_file *f, char *buf, size_t size);

/*
 * Checks that f's path still names the file it reads: 0 if so, 1 if the path now names another
 * file and f was reopened on it, -ENOENT if the path is gone (f's descriptor is closed; reads
 * retry the path). Other -errno of stat()/open().
 */
int cg_file_revalidate(struct cg_file *f);

/* The path f reads, NULL when released. */
const char *cg_file_path(const struct cg_file *f);

/* Closes and frees; f is initialised again. NULL or released is fine. */
void cg_file_release(struct cg_file *f);

/* The descriptor budget (>= 0; 0 = every read opens and closes) and how much of it is in use. */
void cg_file_set_max_open(int n);
int cg_file_max_open(void);
int cg_file_open_count(void);

/*
 * Parsers of file text (NUL-terminated, as cg_file_read() leaves it). They never allocate and
 * leave their outputs untouched on failure unless said otherwise. -EBADMSG for malformed text.
 */

/* One integer (optional '-'), surrounding whitespace allowed: cpuacct.usage, cpu.shares.
 * -ERANGE when it does not fit in 64 bits. */
int cg_parse_i64(const char *text, int64_t *ret);

/*
 * One pass over "key value" lines (cpu.stat, memory.stat): for each of the n keys (n <= 64)
 * found, vals[i] is its value and bit i of *ret_found is set; keys not found leave vals[i]
 * alone. The first line of a key counts. -EBADMSG when a wanted key has no integer value;
 * -EINVAL when n > 64.
 */
int cg_parse_keyed(const char *text, const char *const *keys, size_t n, int64_t *vals,
                   uint64_t *ret_found);

/* v2 cpu.max "<quota|max> <period>": quota CG_UNLIMITED for "max". */
int cg_parse_cpu_max(const char *text, int64_t *ret_quota, int64_t *ret_period);

/* Throttling and usage of cpu.stat. */
struct cg_cpu_stat {
    int64_t usage_ns;     /* v2 usage_usec x 1000; -1 on v1 (cpuacct.usage has it) */
    int64_t nr_periods;   /* 0 when absent (v2 without the cpu controller) */
    int64_t nr_throttled; /* 0 when absent */
    int64_t throttled_ns; /* v1 throttled_time; v2 throttled_usec x 1000; 0 when absent */
    bool has_throttling;  /* the three throttling keys were there */
};

/* v1 needs nr_periods, nr_throttled, throttled_time; v2 needs usage_usec (the throttling keys
 * appear only with the cpu controller enabled). -EBADMSG when missing, -ERANGE on overflow. */
int cg_parse_cpu_stat(const char *text, enum cg_version v, struct cg_cpu_stat *ret);

/* What the collectors take from memory.stat, in bytes. v1 reads the hierarchical total_* keys. */
struct cg_memory_stat {
    int64_t cache;         /* v1 total_cache, v2 file */
    int64_t rss;           /* v1 total_rss, v2 anon */
    int64_t inactive_anon; /* v1 total_inactive_anon, v2 inactive_anon; likewise below */
    int64_t active_anon;
    int64_t inactive_file;
    int64_t active_file;
    int64_t unevictable;
};

/* All seven keys are required, as koordlet requires them (reference 1.6). -EBADMSG. */
int cg_parse_memory_stat(const char *text, enum cg_version v, struct cg_memory_stat *ret);

/* Pod and container memory usage as koordlet counts it: anon (active + inactive) +
 * unevictable; page cache is not usage (reference 1.6). */
static inline int64_t cg_memory_stat_usage(const struct cg_memory_stat *s)
{
    int64_t sum;

    /* Saturated: the parser keeps each value >= 0, but a corrupt file can hold any three. */
    if (__builtin_add_overflow(s->inactive_anon, s->active_anon, &sum) ||
        __builtin_add_overflow(sum, s->unevictable, &sum))
        return INT64_MAX;
    return sum;
}

/*
 * /proc/stat: *ret_ticks = user + nice + system + irq + softirq of the "cpu" line (fields 1, 2,
 * 3, 6, 7; idle, iowait, steal and guest excluded), in USER_HZ ticks (reference 1.5). When
 * per_cpu is not NULL, per_cpu[0..max_cpus) is zeroed and per_cpu[N] gets the same sum of line
 * "cpuN" (offline CPUs have no line and stay 0), and *ret_ncpus is the highest N + 1 (may be
 * NULL). The per-CPU section must be complete: a text cut off before the line after the last
 * "cpuN" (a buffer too small for the machine) gives -ENOBUFS, a CPU >= max_cpus -E2BIG. per_cpu
 * is undefined after a failure. -EBADMSG without a "cpu" line or with fewer than 7 fields.
 */
int cg_parse_proc_stat(const char *text, uint64_t *ret_ticks, uint64_t *per_cpu, size_t max_cpus,
                       size_t *ret_ncpus);

/* /proc/meminfo, in KiB. */
struct cg_meminfo {
    uint64_t mem_total_kib;
    uint64_t mem_free_kib;
    uint64_t mem_available_kib;
};

/* All three are required (MemAvailable exists since Linux 3.14). -EBADMSG. */
int cg_parse_meminfo(const char *text, struct cg_meminfo *ret);

/*
 * Read + parse in one call, with a buffer on the stack (CG_READ_BUF_SIZE, for /proc/stat
 * CG_PROC_STAT_BUF_SIZE). f must have been opened on the matching file (cg_file_open_res() for
 * r; the version v of the layout it was opened with). Errors of cg_file_read() and of the
 * parser; a cgroup file longer than the buffer is -ENOBUFS, /proc/stat is parsed from its prefix.
 */
int cg_read_i64(struct cg_file *f, enum cg_version v, enum cg_res r, int64_t *ret);
int cg_read_cpu_stat(struct cg_file *f, enum cg_version v, struct cg_cpu_stat *ret);
int cg_read_memory_stat(struct cg_file *f, enum cg_version v, struct cg_memory_stat *ret);
int cg_read_cpuset(struct cg_file *f, struct cg_cpuset *ret);
int cg_read_proc_stat(struct cg_file *f, uint64_t *ret_ticks, uint64_t *per_cpu, size_t max_cpus,
                      size_t *ret_ncpus);
int cg_read_meminfo(struct cg_file *f, struct cg_meminfo *ret);

#endif
