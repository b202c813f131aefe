/*
 * Node-global kernel settings from spec.systemStrategy (strategy SystemConfig; reference
 * koordlet-and-scheduler.md 3.7; upstream qosmanager/plugins/sysreconcile/system_config.go).
 * Only fields the NodeSLO sets are written, and only values within each file's accepted range.
 */
#ifndef KOORD_AGENT_QOS_SYSCONFIG_H
#define KOORD_AGENT_QOS_SYSCONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/qos/nodeslo.h"

struct strbuf;

#define QOS_MIN_FREE_KBYTES_MIN        10240
#define QOS_MIN_FREE_KBYTES_MAX        10485760
#define QOS_WATERMARK_SCALE_FACTOR_MIN 10
#define QOS_WATERMARK_SCALE_FACTOR_MAX 400

enum qos_sysctl {
    QOS_SYSCTL_MIN_FREE_KBYTES,              /* /proc/sys/vm/min_free_kbytes */
    QOS_SYSCTL_WATERMARK_SCALE_FACTOR,       /* /proc/sys/vm/watermark_scale_factor */
    QOS_SYSCTL_MEMCG_REAP_BACKGROUND,        /* /sys/kernel/mm/memcg_reaper/reap_background */
    QOS_SYSCTL_SCHED_GROUP_IDENTITY_ENABLED, /* /proc/sys/kernel/sched_group_identity_enabled */
    QOS_SYSCTL_SCHED_IDLE_SAVER_WMARK,       /* /proc/sys/kernel/sched_idle_saver_wmark */
    QOS_SYSCTL_PAGE_CACHE_LIMIT_ENABLED,     /* /sys/kernel/mm/pagecache_limit/enabled */
    QOS_SYSCTL_COUNT,
};

/* The file of a setting, as an absolute host path (the caller prefixes its host root). */
const char *qos_sysctl_path(enum qos_sysctl s);

/* Values to write; a setting is written only when its bit (1u << enum qos_sysctl) is set. */
struct qos_sysconfig {
    uint32_t set;
    int64_t v[QOS_SYSCTL_COUNT];
};

/*
 * The settings of cfg for a node of memory_capacity bytes:
 *   min_free_kbytes = (capacity / 1024) x minFreeKbytesFactor / 10000, only within
 *                     [10240, 10485760] KiB;
 *   watermark_scale_factor within [10, 400]; memcg reap_background, sched_group_identity_enabled
 *   and pagecache_limit/enabled within [0, 1] (the last only on Anolis: anolis true);
 *   sched_idle_saver_wmark when >= 0 (the reference gives no range; negative is refused here).
 * Nothing at all when memory_capacity <= 0, or when minFreeKbytesFactor is set and the
 * capacity is below 1 KiB (upstream returns early there, skipping the later settings too).
 */
void qos_sysconfig_values(const struct qos_system *cfg, int64_t memory_capacity, bool anolis,
                          struct qos_sysconfig *ret);

/*
 * The writes to /sys/kernel/debug/sched_features for cfg's schedFeatures: current is that
 * file's content (space-separated "NAME" for enabled and "NO_NAME" for disabled features). For
 * each configured feature whose state differs, appends "NAME\n" (enable) or "NO_NAME\n"
 * (disable) to out; each line is one write(2). Features the kernel does not list are skipped
 * (the reference says "each changed entry"; an unknown name cannot be written). Returns the
 * number of lines appended.
 */
size_t qos_sysconfig_sched_features(const struct qos_system *cfg, const char *current,
                                    struct strbuf *out);

/* The state of feature name in the sched_features text current: 1 listed as "NAME" (enabled),
 * 0 as "NO_NAME" (disabled), -1 not listed. */
int qos_sysconfig_sched_feature_state(const char *current, const char *name);

#endif
