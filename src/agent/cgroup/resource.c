/*
 * The cgroup file map, value conversions and validators (see resource.h). Values go through
 * three forms: the logical value (v1 units), the raw value (what the file of this version says,
 * as an integer: a weight on v2, -1 for "max"), and the file text. Writes compare raw values, so
 * the lossy shares -> weight -> shares round trip never makes a value look changed.
 */
#include "agent/cgroup/resource.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "agent/cgroup/cgroup-int.h"
#include "agent/cgroup/reader.h"
#include "base/base.h"
#include "base/strbuf.h"

/* The largest cfs quota the kernel accepts: max_cfs_runtime, 2^44 - 1 us (kernel/sched/core.c,
 * MAX_BW). The period is bounded to [1 ms, 1 s] there too (min/max_cfs_quota_period). */
#define CFS_QUOTA_MAX  ((INT64_C(1) << 44) - 1)
#define CFS_PERIOD_MIN 1000
#define CFS_PERIOD_MAX 1000000
#define SHARES_MIN     2
#define SHARES_MAX     262144
#define WEIGHT_MIN     1
#define WEIGHT_MAX     10000

/* clang-format off */
static const struct cg_res_info table[CG_RES_COUNT] = {
    [CG_CPU_USAGE] = {
        .name = "cpuacct.usage", .v1_subsys = "cpuacct", .v1_file = "cpuacct.usage",
        .v2_file = "cpu.stat", .kind = CG_KIND_INT},
    [CG_CPU_STAT] = {
        .name = "cpu.stat", .v1_subsys = "cpu", .v1_file = "cpu.stat", .v2_file = "cpu.stat",
        .kind = CG_KIND_STAT},
    [CG_CPU_CFS_QUOTA] = {
        .name = "cpu.cfs_quota_us", .v1_subsys = "cpu", .v1_file = "cpu.cfs_quota_us",
        .v2_file = "cpu.max", .kind = CG_KIND_INT, .writable_v1 = true, .writable_v2 = true,
        .unlimited_ok = true, .min = 1000, .max = CFS_QUOTA_MAX},
    /* Written on v1 only: on v2 the period shares cpu.max with the quota, and koordlet never
     * changes the 100 ms default. */
    [CG_CPU_CFS_PERIOD] = {
        .name = "cpu.cfs_period_us", .v1_subsys = "cpu", .v1_file = "cpu.cfs_period_us",
        .v2_file = "cpu.max", .kind = CG_KIND_INT, .writable_v1 = true,
        .min = CFS_PERIOD_MIN, .max = CFS_PERIOD_MAX},
    [CG_CPU_SHARES] = {
        .name = "cpu.shares", .v1_subsys = "cpu", .v1_file = "cpu.shares",
        .v2_file = "cpu.weight", .kind = CG_KIND_INT, .writable_v1 = true, .writable_v2 = true,
        .min = SHARES_MIN, .max = SHARES_MAX},
    [CG_CPU_BURST] = {
        .name = "cpu.cfs_burst_us", .v1_subsys = "cpu", .v1_file = "cpu.cfs_burst_us",
        .v2_file = "cpu.max.burst", .kind = CG_KIND_INT, .writable_v1 = true,
        .writable_v2 = true, .min = 0, .max = 100000000},
    [CG_CPU_BVT_WARP_NS] = {
        .name = "cpu.bvt_warp_ns", .v1_subsys = "cpu", .v1_file = "cpu.bvt_warp_ns",
        .v2_file = "cpu.bvt_warp_ns", .kind = CG_KIND_INT, .writable_v1 = true,
        .writable_v2 = true, .min = -1, .max = 2},
    [CG_CPU_IDLE] = {
        .name = "cpu.idle", .v1_subsys = "cpu", .v1_file = "cpu.idle", .v2_file = "cpu.idle",
        .kind = CG_KIND_INT, .writable_v1 = true, .writable_v2 = true, .min = 0, .max = 1},
    [CG_CPUSET_CPUS] = {
        .name = "cpuset.cpus", .v1_subsys = "cpuset", .v1_file = "cpuset.cpus",
        .v2_file = "cpuset.cpus", .v2_read_file = "cpuset.cpus.effective",
        .kind = CG_KIND_CPUSET, .writable_v1 = true, .writable_v2 = true},
    [CG_MEMORY_LIMIT] = {
        .name = "memory.limit_in_bytes", .v1_subsys = "memory",
        .v1_file = "memory.limit_in_bytes", .v2_file = "memory.max", .kind = CG_KIND_INT,
        .writable_v1 = true, .writable_v2 = true, .unlimited_ok = true, .memory_bytes = true,
        .min = 0, .max = CG_MEMORY_UNLIMITED_MIN - 1},
    [CG_MEMORY_USAGE] = {
        .name = "memory.usage_in_bytes", .v1_subsys = "memory",
        .v1_file = "memory.usage_in_bytes", .v2_file = "memory.current", .kind = CG_KIND_INT},
    [CG_MEMORY_STAT] = {
        .name = "memory.stat", .v1_subsys = "memory", .v1_file = "memory.stat",
        .v2_file = "memory.stat", .kind = CG_KIND_STAT},
    [CG_MEMORY_MIN] = {
        .name = "memory.min", .v1_subsys = "memory", .v1_file = "memory.min",
        .v2_file = "memory.min", .kind = CG_KIND_INT, .writable_v1 = true, .writable_v2 = true,
        .unlimited_ok = true, .v1_max_word = true, .memory_bytes = true, .min = 0,
        .max = CG_MEMORY_UNLIMITED_MIN - 1},
    [CG_MEMORY_LOW] = {
        .name = "memory.low", .v1_subsys = "memory", .v1_file = "memory.low",
        .v2_file = "memory.low", .kind = CG_KIND_INT, .writable_v1 = true, .writable_v2 = true,
        .unlimited_ok = true, .v1_max_word = true, .memory_bytes = true, .min = 0,
        .max = CG_MEMORY_UNLIMITED_MIN - 1},
    [CG_MEMORY_HIGH] = {
        .name = "memory.high", .v1_subsys = "memory", .v1_file = "memory.high",
        .v2_file = "memory.high", .kind = CG_KIND_INT, .writable_v1 = true, .writable_v2 = true,
        .unlimited_ok = true, .v1_max_word = true, .memory_bytes = true, .min = 0,
        .max = CG_MEMORY_UNLIMITED_MIN - 1},
    [CG_MEMORY_WMARK_RATIO] = {
        .name = "memory.wmark_ratio", .v1_subsys = "memory", .v1_file = "memory.wmark_ratio",
        .v2_file = "memory.wmark_ratio", .kind = CG_KIND_INT, .writable_v1 = true,
        .writable_v2 = true, .min = 0, .max = 100},
    [CG_MEMORY_WMARK_SCALE_FACTOR] = {
        .name = "memory.wmark_scale_factor", .v1_subsys = "memory",
        .v1_file = "memory.wmark_scale_factor", .v2_file = "memory.wmark_scale_factor",
        .kind = CG_KIND_INT, .writable_v1 = true, .writable_v2 = true, .min = 1, .max = 1000},
    [CG_MEMORY_WMARK_MIN_ADJ] = {
        .name = "memory.wmark_min_adj", .v1_subsys = "memory",
        .v1_file = "memory.wmark_min_adj", .v2_file = "memory.wmark_min_adj",
        .kind = CG_KIND_INT, .writable_v1 = true, .writable_v2 = true, .min = -25, .max = 50},
    [CG_MEMORY_PRIORITY] = {
        .name = "memory.priority", .v1_subsys = "memory", .v1_file = "memory.priority",
        .v2_file = "memory.priority", .kind = CG_KIND_INT, .writable_v1 = true,
        .writable_v2 = true, .min = 0, .max = 12},
    [CG_MEMORY_USE_PRIORITY_OOM] = {
        .name = "memory.use_priority_oom", .v1_subsys = "memory",
        .v1_file = "memory.use_priority_oom", .v2_file = "memory.use_priority_oom",
        .kind = CG_KIND_INT, .writable_v1 = true, .writable_v2 = true, .min = 0, .max = 1},
    [CG_MEMORY_OOM_GROUP] = {
        .name = "memory.oom.group", .v1_subsys = "memory", .v1_file = "memory.oom.group",
        .v2_file = "memory.oom.group", .kind = CG_KIND_INT, .writable_v1 = true,
        .writable_v2 = true, .min = 0, .max = 1},
    /* The Anolis page-cache limit of a memcg (reference 3.5, pod level). */
    [CG_MEMORY_PAGECACHE_ENABLE] = {
        .name = "memory.pagecache_limit.enable", .v1_subsys = "memory",
        .v1_file = "memory.pagecache_limit.enable", .v2_file = "memory.pagecache_limit.enable",
        .kind = CG_KIND_INT, .writable_v1 = true, .writable_v2 = true, .min = 0, .max = 1},
    [CG_MEMORY_PAGECACHE_SIZE] = {
        .name = "memory.pagecache_limit.size", .v1_subsys = "memory",
        .v1_file = "memory.pagecache_limit.size", .v2_file = "memory.pagecache_limit.size",
        .kind = CG_KIND_INT, .writable_v1 = true, .writable_v2 = true, .memory_bytes = true,
        .min = 0, .max = CG_MEMORY_UNLIMITED_MIN - 1},
    [CG_MEMORY_PAGECACHE_SYNC] = {
        .name = "memory.pagecache_limit.sync", .v1_subsys = "memory",
        .v1_file = "memory.pagecache_limit.sync", .v2_file = "memory.pagecache_limit.sync",
        .kind = CG_KIND_INT, .writable_v1 = true, .writable_v2 = true, .min = 0, .max = 1},
};
/* clang-format on */

const struct cg_res_info *cg_res_info(enum cg_res r)
{
    CHECK((unsigned)r < CG_RES_COUNT);
    return &table[r];
}

const char *cg_res_file(enum cg_version v, enum cg_res r, bool for_write)
{
    const struct cg_res_info *info = cg_res_info(r);

    if (v == CG_V1)
        return info->v1_file;
    if (v == CG_V2)
        return for_write || !info->v2_read_file ? info->v2_file : info->v2_read_file;
    return NULL;
}

static int res_path(const struct cg_layout *l, enum cg_res r, const char *dir, bool for_write,
                    char *buf, size_t size)
{
    const char *file = cg_res_file(l->version, r, for_write);
    struct cg__path p;
    int n;

    n = cg_dir_path(l, cg_res_info(r)->v1_subsys, dir, buf, size);
    if (n < 0)
        return n;
    p = (struct cg__path){.buf = buf, .size = size, .len = (size_t)n};
    cg__path_add_component(&p, file);
    return cg__path_end(&p);
}

int cg_res_path(const struct cg_layout *l, enum cg_res r, const char *dir, char *buf, size_t size)
{
    return res_path(l, r, dir, false, buf, size);
}

int cg_res_write_path(const struct cg_layout *l, enum cg_res r, const char *dir, char *buf,
                      size_t size)
{
    return res_path(l, r, dir, true, buf, size);
}

static int64_t clamp(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int64_t cg_shares_to_weight(int64_t shares)
{
    shares = clamp(shares, SHARES_MIN, SHARES_MAX);
    return 1 + (shares - 2) * 9999 / 262142;
}

int64_t cg_weight_to_shares(int64_t weight)
{
    weight = clamp(weight, WEIGHT_MIN, WEIGHT_MAX);
    return (weight - 1) * 262142 / 9999 + 2;
}

/* Whether text is word with optional surrounding whitespace. */
static bool is_word(const char *text, const char *word)
{
    size_t n = strlen(word);

    while (cg__is_space(*text))
        text++;
    if (strncmp(text, word, n) != 0)
        return false;
    for (text += n; cg__is_space(*text);)
        text++;
    return *text == '\0';
}

static bool version_ok(enum cg_version v)
{
    return v == CG_V1 || v == CG_V2;
}

int cg__res_parse_raw(enum cg_version v, enum cg_res r, const char *text, int64_t *ret)
{
    const struct cg_res_info *info = cg_res_info(r);
    int64_t x, quota, period;
    int rc;

    if (!version_ok(v) || info->kind != CG_KIND_INT)
        return -EINVAL;
    if (v == CG_V2 && r == CG_CPU_USAGE) {
        static const char *const keys[] = {"usage_usec"};
        uint64_t found = 0;

        rc = cg_parse_keyed(text, keys, 1, &x, &found);
        if (rc < 0)
            return rc;
        if (!found || x < 0)
            return -EBADMSG;
        *ret = x;
        return 0;
    }
    if (v == CG_V2 && (r == CG_CPU_CFS_QUOTA || r == CG_CPU_CFS_PERIOD)) {
        rc = cg_parse_cpu_max(text, &quota, &period);
        if (rc < 0)
            return rc;
        *ret = r == CG_CPU_CFS_QUOTA ? quota : period;
        return 0;
    }
    if (info->unlimited_ok && is_word(text, "max")) {
        *ret = CG_UNLIMITED;
        return 0;
    }
    rc = cg_parse_i64(text, &x);
    if (rc < 0)
        return rc;
    if (info->memory_bytes && x >= CG_MEMORY_UNLIMITED_MIN)
        x = CG_UNLIMITED;
    *ret = x;
    return 0;
}

static int raw_to_logical(enum cg_version v, enum cg_res r, int64_t raw, int64_t *ret)
{
    if (v == CG_V2 && r == CG_CPU_SHARES) {
        *ret = cg_weight_to_shares(raw);
    } else if (v == CG_V2 && r == CG_CPU_USAGE) {
        if (raw > INT64_MAX / 1000)
            return -ERANGE;
        *ret = raw * 1000;
    } else {
        *ret = raw;
    }
    return 0;
}

int cg_res_parse(enum cg_version v, enum cg_res r, const char *text, int64_t *ret)
{
    int64_t raw;
    int rc = cg__res_parse_raw(v, r, text, &raw);

    if (rc < 0)
        return rc;
    return raw_to_logical(v, r, raw, ret);
}

int cg_res_check_raw(enum cg_version v, enum cg_res r, int64_t raw)
{
    const struct cg_res_info *info = cg_res_info(r);

    if (!version_ok(v) || info->kind != CG_KIND_INT)
        return -EINVAL;
    if (raw == CG_UNLIMITED && info->unlimited_ok)
        return 0;
    if (v == CG_V2 && r == CG_CPU_SHARES)
        return raw >= WEIGHT_MIN && raw <= WEIGHT_MAX ? 0 : -ERANGE;
    return raw >= info->min && raw <= info->max ? 0 : -ERANGE;
}

static int format_cpuset(const char *value, char *buf, size_t size)
{
    struct cg_cpuset set;
    int r = cg_cpuset_parse(value, &set);

    if (r < 0)
        return r;
    /* An empty cpuset starves every task in the group; no strategy means that. */
    if (cg_cpuset_count(&set) == 0)
        return -EINVAL;
    return cg_cpuset_format(&set, buf, size);
}

int cg__res_format_raw(enum cg_version v, enum cg_res r, const char *value, char *buf, size_t size,
                       int64_t *ret_raw)
{
    const struct cg_res_info *info = cg_res_info(r);
    struct cg__path p;
    char num[32];
    int64_t x;
    int rc;

    CHECK(size > 0);
    buf[0] = '\0';
    if (!version_ok(v) || !value)
        return -EINVAL;
    if (!(v == CG_V1 ? info->writable_v1 : info->writable_v2))
        return -EOPNOTSUPP;
    if (info->kind == CG_KIND_CPUSET)
        return format_cpuset(value, buf, size);
    if (info->unlimited_ok && is_word(value, "max")) {
        x = CG_UNLIMITED;
    } else {
        rc = cg_parse_i64(value, &x);
        if (rc < 0)
            return rc == -ERANGE ? -ERANGE : -EINVAL;
    }
    if (!(x == CG_UNLIMITED && info->unlimited_ok) && (x < info->min || x > info->max))
        return -ERANGE;
    if (v == CG_V2 && r == CG_CPU_SHARES)
        x = cg_shares_to_weight(x);
    rc = cg_res_check_raw(v, r, x);
    if (rc < 0)
        return rc;
    cg__path_start(&p, buf, size);
    if (x == CG_UNLIMITED && info->unlimited_ok) {
        cg__path_adds(&p, v == CG_V2 || info->v1_max_word ? "max" : "-1");
    } else {
        (void)snprintf(num, sizeof(num), "%" PRId64, x);
        cg__path_adds(&p, num);
    }
    rc = cg__path_end(&p);
    if (rc >= 0)
        *ret_raw = x;
    return rc;
}

int cg_res_format(enum cg_version v, enum cg_res r, const char *value, char *buf, size_t size)
{
    int64_t raw;

    return cg__res_format_raw(v, r, value, buf, size, &raw);
}

/* CPU lists. */

static void cpuset_add_range(struct cg_cpuset *s, unsigned a, unsigned b)
{
    for (unsigned c = a; c <= b; c++)
        s->bits[c / 64] |= UINT64_C(1) << (c % 64);
}

int cg_cpuset_parse(const char *text, struct cg_cpuset *ret)
{
    struct cg_cpuset s;
    const char *p = text;
    uint64_t a, b;
    int r;

    memset(&s, 0, sizeof(s));
    while (cg__is_space(*p))
        p++;
    while (*p) {
        r = cg__scan_u64(&p, &a);
        if (r < 0)
            return r == -ERANGE ? -ERANGE : -EINVAL;
        b = a;
        if (*p == '-') {
            p++;
            r = cg__scan_u64(&p, &b);
            if (r < 0)
                return r == -ERANGE ? -ERANGE : -EINVAL;
        }
        if (b < a)
            return -EINVAL;
        if (b >= CG_CPUSET_MAX_CPUS)
            return -ERANGE;
        cpuset_add_range(&s, (unsigned)a, (unsigned)b);
        if (*p == ',') {
            p++;
            if (!(*p >= '0' && *p <= '9'))
                return -EINVAL;
            continue;
        }
        while (cg__is_space(*p))
            p++;
        if (*p)
            return -EINVAL;
    }
    *ret = s;
    return 0;
}

void cg_cpuset_append(const struct cg_cpuset *s, struct strbuf *out)
{
    unsigned c = 0;
    bool first = true;

    while (c < CG_CPUSET_MAX_CPUS) {
        unsigned end;

        if (!cg_cpuset_has(s, c)) {
            c++;
            continue;
        }
        for (end = c; end + 1 < CG_CPUSET_MAX_CPUS && cg_cpuset_has(s, end + 1);)
            end++;
        if (end == c)
            strbuf_addf(out, "%s%u", first ? "" : ",", c);
        else
            strbuf_addf(out, "%s%u-%u", first ? "" : ",", c, end);
        first = false;
        c = end + 1;
    }
}

int cg_cpuset_format(const struct cg_cpuset *s, char *buf, size_t size)
{
    struct strbuf sb = STRBUF_INIT;
    int r = -ENAMETOOLONG;

    cg_cpuset_append(s, &sb);
    if (size > 0)
        buf[0] = '\0';
    if (sb.len < size && sb.len <= INT_MAX) {
        memcpy(buf, sb.buf, sb.len + 1);
        r = (int)sb.len;
    }
    strbuf_release(&sb);
    return r;
}

size_t cg_cpuset_count(const struct cg_cpuset *s)
{
    size_t n = 0;

    for (size_t i = 0; i < ARRAY_SIZE(s->bits); i++)
        n += (size_t)__builtin_popcountll(s->bits[i]);
    return n;
}

bool cg_cpuset_has(const struct cg_cpuset *s, unsigned cpu)
{
    return cpu < CG_CPUSET_MAX_CPUS && (s->bits[cpu / 64] >> (cpu % 64)) & 1;
}

bool cg_cpuset_equal(const struct cg_cpuset *a, const struct cg_cpuset *b)
{
    return !memcmp(a->bits, b->bits, sizeof(a->bits));
}

void cg_cpuset_clear(struct cg_cpuset *s)
{
    memset(s->bits, 0, sizeof(s->bits));
}

int cg_cpuset_add(struct cg_cpuset *s, int cpu)
{
    if (cpu < 0 || cpu >= CG_CPUSET_MAX_CPUS)
        return -ERANGE;
    s->bits[(unsigned)cpu / 64] |= UINT64_C(1) << ((unsigned)cpu % 64);
    return 0;
}

void cg_cpuset_union(struct cg_cpuset *a, const struct cg_cpuset *b)
{
    for (size_t i = 0; i < ARRAY_SIZE(a->bits); i++)
        a->bits[i] |= b->bits[i];
}
