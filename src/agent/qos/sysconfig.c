/* Node-global kernel settings (sysconfig.h). */
#include "agent/qos/sysconfig.h"

#include <string.h>

#include "base/base.h"
#include "base/strbuf.h"

static const char *const paths[QOS_SYSCTL_COUNT] = {
    [QOS_SYSCTL_MIN_FREE_KBYTES] = "/proc/sys/vm/min_free_kbytes",
    [QOS_SYSCTL_WATERMARK_SCALE_FACTOR] = "/proc/sys/vm/watermark_scale_factor",
    [QOS_SYSCTL_MEMCG_REAP_BACKGROUND] = "/sys/kernel/mm/memcg_reaper/reap_background",
    [QOS_SYSCTL_SCHED_GROUP_IDENTITY_ENABLED] = "/proc/sys/kernel/sched_group_identity_enabled",
    [QOS_SYSCTL_SCHED_IDLE_SAVER_WMARK] = "/proc/sys/kernel/sched_idle_saver_wmark",
    [QOS_SYSCTL_PAGE_CACHE_LIMIT_ENABLED] = "/sys/kernel/mm/pagecache_limit/enabled",
};

const char *qos_sysctl_path(enum qos_sysctl s)
{
    return (unsigned)s < QOS_SYSCTL_COUNT ? paths[s] : "";
}

/* Sets s to the option's value when it is set and within [min, max]. */
static void put_ranged(struct qos_sysconfig *r, enum qos_sysctl s, const struct qos_opt *o,
                       int64_t min, int64_t max)
{
    if (o->set && o->value >= min && o->value <= max) {
        r->set |= 1u << s;
        r->v[s] = o->value;
    }
}

void qos_sysconfig_values(const struct qos_system *cfg, int64_t memory_capacity, bool anolis,
                          struct qos_sysconfig *ret)
{
    memset(ret, 0, sizeof(*ret));
    if (memory_capacity <= 0)
        return;
    if (cfg->min_free_kbytes_factor.set) {
        int64_t kib = memory_capacity / 1024;
        struct qos_opt v = {true, 0};

        if (kib <= 0)
            return;
        v.value = kib * cfg->min_free_kbytes_factor.value / 10000;
        put_ranged(ret, QOS_SYSCTL_MIN_FREE_KBYTES, &v, QOS_MIN_FREE_KBYTES_MIN,
                   QOS_MIN_FREE_KBYTES_MAX);
    }
    put_ranged(ret, QOS_SYSCTL_WATERMARK_SCALE_FACTOR, &cfg->watermark_scale_factor,
               QOS_WATERMARK_SCALE_FACTOR_MIN, QOS_WATERMARK_SCALE_FACTOR_MAX);
    put_ranged(ret, QOS_SYSCTL_MEMCG_REAP_BACKGROUND, &cfg->memcg_reap_background, 0, 1);
    put_ranged(ret, QOS_SYSCTL_SCHED_GROUP_IDENTITY_ENABLED, &cfg->sched_group_identity_enabled, 0,
               1);
    put_ranged(ret, QOS_SYSCTL_SCHED_IDLE_SAVER_WMARK, &cfg->sched_idle_saver_wmark, 0, INT64_MAX);
    if (anolis)
        put_ranged(ret, QOS_SYSCTL_PAGE_CACHE_LIMIT_ENABLED, &cfg->page_cache_limit_enabled, 0, 1);
}

int qos_sysconfig_sched_feature_state(const char *current, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = current; p && *p;) {
        size_t len;

        while (*p == ' ' || *p == '\n' || *p == '\t')
            p++;
        len = strcspn(p, " \n\t");
        if (len == n && !strncmp(p, name, n))
            return 1;
        if (len == n + 3 && !strncmp(p, "NO_", 3) && !strncmp(p + 3, name, n))
            return 0;
        p += len;
    }
    return -1;
}

size_t qos_sysconfig_sched_features(const struct qos_system *cfg, const char *current,
                                    struct strbuf *out)
{
    size_t n = 0;

    for (size_t i = 0; i < cfg->nsched_features; i++) {
        const struct qos_sched_feature *f = &cfg->sched_features[i];
        int st = qos_sysconfig_sched_feature_state(current, f->name);

        if (st < 0 || st == (int)f->enabled)
            continue;
        strbuf_addf(out, "%s%s\n", f->enabled ? "" : "NO_", f->name);
        n++;
    }
    return n;
}
