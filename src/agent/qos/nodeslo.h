/*
 * The NodeSLO as the agent's QoS strategies read it (reference koordlet-and-scheduler.md
 * section 3 intro, api-types.md section 6): the spec fields each strategy uses, merged field by
 * field over the agent-side defaults (upstream sloconfig.DefaultNodeSLOSpecConfig()), and then,
 * for the LSR, LS and BE classes, every cpuQOS / memoryQOS / resctrlQOS whose `enable` is false
 * replaced by the neutral "None" values (upstream statesinformer mergeNodeSLOSpec() and
 * mergeNoneResourceQOSIfDisabled()). SYSTEM keeps its values.
 *
 * Decoding follows Go's encoding/json on the NodeSLO types: member names match
 * case-insensitively, unknown members are ignored, a JSON null reads as "not set" (the default
 * stays), and a member of the wrong type fails the whole document, as it fails upstream's
 * informer decode. Differences: cJSON keeps numbers as doubles, so an integral number written as
 * "65.0" or "6.5e1" is accepted where Go refuses it, and integers beyond 2^53 are refused. Only
 * the members listed in the structs below are checked; others (blkioQOS, networkQOS,
 * hostApplications, extensions, ...) are not looked at.
 *
 * Everything is a plain value: a struct qos_slo can be copied and kept as the "last good"
 * configuration; the functions filling one write every byte (padding zeroed), so memcmp()
 * tells whether a configuration changed.
 */
#ifndef KOORD_AGENT_QOS_NODESLO_H
#define KOORD_AGENT_QOS_NODESLO_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/qos/qos.h"

struct strbuf;

/* spec.resourceUsedThresholdWithBE.cpuSuppressPolicy: "cfsQuota", anything else is cpuset. */
enum qos_suppress_policy {
    QOS_SUPPRESS_CPUSET,
    QOS_SUPPRESS_CFS_QUOTA,
};

/* cpuEvictPolicy: "evictByAllocatable", anything else is evictByRealLimit. */
enum qos_cpu_evict_policy {
    QOS_EVICT_BY_REAL_LIMIT,
    QOS_EVICT_BY_ALLOCATABLE,
};

/* spec.resourceUsedThresholdWithBE (ResourceThresholdStrategy). Defaults in brackets. */
struct qos_threshold {
    bool enable;                                   /* [false] */
    struct qos_opt cpu_suppress_threshold_percent; /* [65] */
    struct qos_opt cpu_suppress_min_percent;
    enum qos_suppress_policy cpu_suppress_policy;  /* [cpuset] */
    struct qos_opt memory_evict_threshold_percent; /* [70] */
    struct qos_opt memory_evict_lower_percent;
    struct qos_opt memory_allocatable_evict_threshold_percent;
    struct qos_opt memory_allocatable_evict_lower_percent;
    struct qos_opt cpu_evict_be_satisfaction_upper_percent;
    struct qos_opt cpu_evict_be_satisfaction_lower_percent;
    struct qos_opt cpu_evict_be_usage_threshold_percent;
    struct qos_opt cpu_evict_time_window_seconds;
    struct qos_opt cpu_evict_threshold_percent;
    struct qos_opt cpu_evict_lower_percent;
    struct qos_opt cpu_allocatable_evict_threshold_percent;
    struct qos_opt cpu_allocatable_evict_lower_percent;
    enum qos_cpu_evict_policy cpu_evict_policy;          /* [evictByRealLimit] */
    struct qos_opt evict_enabled_priority_threshold;     /* int32 */
    struct qos_opt allocatable_evict_priority_threshold; /* int32 */
};

/* resourceQOSStrategy.policies.cpuPolicy: "groupIdentity" [default], "coreSched", other. */
enum qos_cpu_policy {
    QOS_CPU_POLICY_GROUP_IDENTITY,
    QOS_CPU_POLICY_CORE_SCHED,
    QOS_CPU_POLICY_OTHER,
};

struct qos_cpu_qos {
    bool enable;
    int64_t group_identity;
    int64_t sched_idle;
    bool core_expeller;
};

struct qos_memory_qos {
    bool enable;
    int64_t min_limit_percent;
    int64_t low_limit_percent;
    int64_t throttling_percent;
    int64_t wmark_ratio;
    int64_t wmark_scale_permill;
    int64_t wmark_min_adj;
    int64_t priority_enable;
    int64_t priority;
    int64_t oom_kill_group;
    /* Anolis page-cache limit; unset reads as false / 0 (disabled). */
    bool page_cache_enable;
    int64_t page_cache_limit_percent;
    int64_t page_cache_limit_size;
    bool page_cache_reclaim_sync;
};

struct qos_resctrl_qos {
    bool enable;
    int64_t cat_range_start_percent;
    int64_t cat_range_end_percent;
    int64_t mba_percent;
};

struct qos_class_config {
    struct qos_cpu_qos cpu;
    struct qos_memory_qos memory;
    struct qos_resctrl_qos resctrl;
};

/* The classes of resourceQOSStrategy (there is no lseClass: LSE pods use lsrClass). */
enum qos_class {
    QOS_CLASS_LSR,
    QOS_CLASS_LS,
    QOS_CLASS_BE,
    QOS_CLASS_SYSTEM,
    QOS_CLASS_COUNT,
};

struct qos_resource_qos {
    enum qos_cpu_policy cpu_policy;
    struct qos_class_config classes[QOS_CLASS_COUNT];
};

/* cpuBurstStrategy.policy / the pod annotation's policy. Unknown strings act as none. */
enum qos_burst_policy {
    QOS_BURST_NONE,
    QOS_BURST_CPU_BURST_ONLY,
    QOS_BURST_CFS_QUOTA_BURST_ONLY,
    QOS_BURST_AUTO,
};

/* spec.cpuBurstStrategy (CPUBurstStrategy), also the shape of annotation koordinator.sh/cpuBurst
 * (without share_pool_threshold_percent). */
struct qos_cpu_burst {
    enum qos_burst_policy policy;           /* [none] */
    int64_t cpu_burst_percent;              /* [1000] */
    int64_t cfs_quota_burst_percent;        /* [300] */
    int64_t cfs_quota_burst_period_seconds; /* [-1] */
    int64_t share_pool_threshold_percent;   /* [50] */
};

#define QOS_SCHED_FEATURES_MAX     32
#define QOS_SCHED_FEATURE_NAME_MAX 64

struct qos_sched_feature {
    char name[QOS_SCHED_FEATURE_NAME_MAX];
    bool enabled;
};

/* spec.systemStrategy (all unset by default). */
struct qos_system {
    struct qos_opt min_free_kbytes_factor;
    struct qos_opt watermark_scale_factor;
    struct qos_opt memcg_reap_background;
    struct qos_opt sched_group_identity_enabled;
    struct qos_opt sched_idle_saver_wmark;
    struct qos_opt page_cache_limit_enabled;
    size_t nsched_features; /* schedFeatures, sorted by name */
    struct qos_sched_feature sched_features[QOS_SCHED_FEATURES_MAX];
};

struct qos_slo {
    struct qos_threshold threshold;
    struct qos_resource_qos resource_qos;
    struct qos_cpu_burst cpu_burst;
    struct qos_system system;
};

/* The agent's configuration when the NodeSLO says nothing (None values already applied). */
void qos_slo_defaults(struct qos_slo *ret);

/*
 * The configuration for a NodeSLO object (its `spec`; NULL object or absent spec: the
 * defaults). Returns 0 with *ret. On bad input returns -EINVAL with *ret set to the defaults
 * and the reason appended to why (may be NULL) as "<field path>: <problem>", e.g.
 * "spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent: want an integer, got a string".
 * A caller that prefers to keep its last good configuration simply ignores *ret on error.
 */
int qos_slo_from_nodeslo(const cJSON *nodeslo, struct qos_slo *ret, struct strbuf *why);

/* DefaultResourceQOSStrategy's values for class c, before None replacement (all enable false). */
void qos_class_defaults(enum qos_class c, struct qos_class_config *ret);

/* The neutral values (NoneCPUQOS, NoneMemoryQOS, NoneResctrlQOS); enable is left as is. */
void qos_cpu_qos_none(struct qos_cpu_qos *q);
void qos_memory_qos_none(struct qos_memory_qos *q);
void qos_resctrl_qos_none(struct qos_resctrl_qos *q);

/*
 * Merges the members present in obj (a JSON object; NULL or null: nothing) over *cfg, with the
 * decoding rules above; for pod annotations. On error *cfg may be partly merged: callers merge
 * into a copy. policy "" keeps the old policy (omitempty). The memoryQOS annotation flattens
 * MemoryQOS, which has no `enable`: qos_memory_qos_merge() ignores one. Returns 0 or -EINVAL
 * (why appended).
 */
int qos_cpu_burst_merge(const cJSON *obj, struct qos_cpu_burst *cfg, struct strbuf *why);
int qos_memory_qos_merge(const cJSON *obj, struct qos_memory_qos *cfg, struct strbuf *why);
int qos_cpu_qos_merge(const cJSON *obj, struct qos_cpu_qos *cfg, struct strbuf *why);

#endif
