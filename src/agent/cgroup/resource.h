/*
 * agent/cgroup/resource.h: the logical cgroup resources the agent reads and writes, the file
 * each is on cgroup v1 and v2, and the conversions and validators between the agent's value and
 * the file's text (koordlet pkg/koordlet/util/system/cgroup_resource.go, cgroup.go, cgroup2.go;
 * reference 1.4).
 *
 * One unit per resource, whatever the version: the v1 unit. Collectors and strategies compute
 * in shares, cfs microseconds, bytes and nanoseconds; only this file knows that v2 says
 * cpu.weight, cpu.max and usage_usec:
 *
 *   - CPU usage: nanoseconds (v2 usage_usec x 1000).
 *   - cfs quota: microseconds, CG_UNLIMITED (-1) for none (v2 "max").
 *   - shares: cpu.shares units 2..262144; v2 cpu.weight = 1 + (shares - 2) * 9999 / 262142 and
 *     back shares = (weight - 1) * 262142 / 9999 + 2, integer arithmetic as koordlet does, so a
 *     v2 read is the shares value of the weight, not always the shares written.
 *   - memory limits (limit, min, low, high): bytes, CG_UNLIMITED for none (v2 "max"; v1 reads
 *     >= CG_MEMORY_UNLIMITED_MIN, 0x7FFFFFFFFFFFF000, the page-aligned LONG_MAX v1 reports).
 *     v1 writes unlimited as "-1" to memory.limit_in_bytes but "max" to memory.min, low and
 *     high: those exist on v1 only in Anolis kernels, which reuse the v2 handlers (they parse
 *     "max" and refuse "-1").
 *
 * Validators (reference 1.4; kernel bounds where koordlet has none, cited at each): a write
 * outside them never reaches the kernel. The ranges are on the logical value; for shares the
 * v2 weight is checked again after conversion.
 */
#ifndef KOORD_AGENT_CGROUP_RESOURCE_H
#define KOORD_AGENT_CGROUP_RESOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/cgroup/cgroup.h"

#define CG_UNLIMITED            (-1)
#define CG_MEMORY_UNLIMITED_MIN INT64_C(0x7FFFFFFFFFFFF000)

/* Logical resources: access, v1 subsystem/file | v2 file. */
enum cg_res {
    CG_CPU_USAGE,                 /* ro cpuacct/cpuacct.usage | cpu.stat usage_usec x 1000 */
    CG_CPU_STAT,                  /* ro cpu/cpu.stat | cpu.stat */
    CG_CPU_CFS_QUOTA,             /* rw cpu/cpu.cfs_quota_us | cpu.max first field */
    CG_CPU_CFS_PERIOD,            /* rw cpu/cpu.cfs_period_us | cpu.max second field (ro) */
    CG_CPU_SHARES,                /* rw cpu/cpu.shares | cpu.weight (converted) */
    CG_CPU_BURST,                 /* rw cpu/cpu.cfs_burst_us | cpu.max.burst */
    CG_CPU_BVT_WARP_NS,           /* rw cpu/cpu.bvt_warp_ns | cpu.bvt_warp_ns (Anolis) */
    CG_CPU_IDLE,                  /* rw cpu/cpu.idle | cpu.idle */
    CG_CPUSET_CPUS,               /* rw cpuset/cpuset.cpus | cpuset.cpus, read .effective */
    CG_MEMORY_LIMIT,              /* rw memory/memory.limit_in_bytes | memory.max */
    CG_MEMORY_USAGE,              /* ro memory/memory.usage_in_bytes | memory.current */
    CG_MEMORY_STAT,               /* ro memory/memory.stat | memory.stat */
    CG_MEMORY_MIN,                /* rw memory/memory.min | memory.min */
    CG_MEMORY_LOW,                /* rw memory/memory.low | memory.low */
    CG_MEMORY_HIGH,               /* rw memory/memory.high | memory.high */
    CG_MEMORY_WMARK_RATIO,        /* rw memory/memory.wmark_ratio | same (Anolis) */
    CG_MEMORY_WMARK_SCALE_FACTOR, /* rw memory/memory.wmark_scale_factor | same (Anolis) */
    CG_MEMORY_WMARK_MIN_ADJ,      /* rw memory/memory.wmark_min_adj | same (Anolis) */
    CG_MEMORY_PRIORITY,           /* rw memory/memory.priority | same (Anolis) */
    CG_MEMORY_USE_PRIORITY_OOM,   /* rw memory/memory.use_priority_oom | same (Anolis) */
    CG_MEMORY_OOM_GROUP,          /* rw memory/memory.oom.group | same */
    CG_MEMORY_PAGECACHE_ENABLE,   /* rw memory/memory.pagecache_limit.enable | same (Anolis) */
    CG_MEMORY_PAGECACHE_SIZE,     /* rw memory/memory.pagecache_limit.size | same (Anolis) */
    CG_MEMORY_PAGECACHE_SYNC,     /* rw memory/memory.pagecache_limit.sync | same (Anolis) */
    CG_RES_COUNT
};

/* How a resource's file reads. */
enum cg_kind {
    CG_KIND_INT,    /* one logical integer: cg_res_parse(), cg_read_i64() */
    CG_KIND_STAT,   /* "key value" lines: cg_parse_cpu_stat(), cg_parse_memory_stat() */
    CG_KIND_CPUSET, /* a CPU list: cg_cpuset_parse() */
};

struct cg_res_info {
    const char *name;         /* the logical name in messages (the v1 file name) */
    const char *v1_subsys;    /* "cpu", "cpuacct", "cpuset", "memory" */
    const char *v1_file;      /* read and written on v1 */
    const char *v2_file;      /* written on v2, and read unless v2_read_file is set */
    const char *v2_read_file; /* NULL or the file read on v2 (cpuset.cpus.effective) */
    enum cg_kind kind;
    bool writable_v1, writable_v2;
    bool unlimited_ok; /* CG_UNLIMITED is a valid write */
    bool v1_max_word;  /* v1 writes unlimited as "max", not "-1" (see the table) */
    bool memory_bytes; /* the kernel rounds writes down to a page */
    int64_t min, max;  /* valid logical writes (CG_KIND_INT), besides CG_UNLIMITED */
};

/* The table row of r (r < CG_RES_COUNT, checked). */
const struct cg_res_info *cg_res_info(enum cg_res r);

/* The file name of r on version v (the one read, or the one written). NULL for
 * CG_VERSION_UNKNOWN. */
const char *cg_res_file(enum cg_version v, enum cg_res r, bool for_write);

/*
 * The absolute path of r's file in cgroup dir (see cg_dir_path()): the file read, and the file
 * written (they differ only for v2 cpuset). Errors of cg_dir_path(), -ENAMETOOLONG.
 */
int cg_res_path(const struct cg_layout *l, enum cg_res r, const char *dir, char *buf, size_t size);
int cg_res_write_path(const struct cg_layout *l, enum cg_res r, const char *dir, char *buf,
                      size_t size);

/* shares <-> v2 weight (formulas above); inputs outside the valid ranges are clamped into
 * them first, so the result is always valid. */
int64_t cg_shares_to_weight(int64_t shares);
int64_t cg_weight_to_shares(int64_t weight);

/*
 * The logical value of a CG_KIND_INT resource from the text of its (read) file on version v:
 * the conversions above, CG_UNLIMITED for "max" and v1 "unlimited" numbers. v2 CG_CPU_USAGE
 * takes the whole cpu.stat text. -EBADMSG for malformed text, -ERANGE for a number beyond
 * 64 bits or a v2 usage that overflows nanoseconds, -EINVAL for a resource not of CG_KIND_INT or
 * CG_VERSION_UNKNOWN.
 */
int cg_res_parse(enum cg_version v, enum cg_res r, const char *text, int64_t *ret);

/*
 * Validates the logical value text (a decimal integer, "max" or "-1" where unlimited is valid,
 * or a CPU list for cpuset) and writes into buf[size] the text to write to r's file on v: "max"
 * on v2 for unlimited, the weight for shares on v2, a canonical list for cpuset. Returns the
 * length; -EINVAL for malformed text or an empty cpuset, -ERANGE for a value out of range,
 * -EOPNOTSUPP when r is not writable on v, -ENAMETOOLONG when buf is too small.
 */
int cg_res_format(enum cg_version v, enum cg_res r, const char *value, char *buf, size_t size);

/*
 * The validator of the file-level value raw of r on v (v2 shares: a weight in [1, 10000]; other
 * resources: the logical range, CG_UNLIMITED where valid). 0 or -ERANGE; -EINVAL when r is not
 * of CG_KIND_INT. cg_res_format() applies it; exposed for the tests of each bound.
 */
int cg_res_check_raw(enum cg_version v, enum cg_res r, int64_t raw);

struct strbuf;

/* A set of CPU ids below CG_CPUSET_MAX_CPUS. Plain data; compare with cg_cpuset_equal(). */
#define CG_CPUSET_MAX_CPUS 4096
struct cg_cpuset {
    uint64_t bits[CG_CPUSET_MAX_CPUS / 64];
};

/*
 * Parses a kernel CPU list ("0-3,8,10-11"; surrounding whitespace allowed, "" is the empty set).
 * -EINVAL for bad syntax or a descending range, -ERANGE for a CPU >= CG_CPUSET_MAX_CPUS. *ret
 * untouched on failure.
 */
int cg_cpuset_parse(const char *text, struct cg_cpuset *ret);

/* The canonical list of s (ascending, ranges merged: "0-3,8"), "" when empty. Returns the
 * length or -ENAMETOOLONG. */
int cg_cpuset_format(const struct cg_cpuset *s, char *buf, size_t size);

/* Appends the canonical list of s (as cg_cpuset_format()) to out: no length limit. */
void cg_cpuset_append(const struct cg_cpuset *s, struct strbuf *out);

size_t cg_cpuset_count(const struct cg_cpuset *s);
bool cg_cpuset_has(const struct cg_cpuset *s, unsigned cpu);
bool cg_cpuset_equal(const struct cg_cpuset *a, const struct cg_cpuset *b);
void cg_cpuset_clear(struct cg_cpuset *s);
/* Adds cpu: 0, or -ERANGE when it is outside [0, CG_CPUSET_MAX_CPUS). */
int cg_cpuset_add(struct cg_cpuset *s, int cpu);
/* a |= b. */
void cg_cpuset_union(struct cg_cpuset *a, const struct cg_cpuset *b);

#endif
