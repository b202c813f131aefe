/*
 * BE CPU suppression (reference koordlet-and-scheduler.md 3.1; upstream
 * qosmanager/plugins/cpusuppress/cpu_suppress.go): how much CPU the BE pods may use, and how to
 * hold them to it, either by shrinking the cpuset of the BE cgroups (policy cpuset, default) or
 * by the cfs quota of the BestEffort QoS cgroup (policy cfsQuota). When the strategy is
 * disabled (resourceUsedThresholdWithBE.enable false) the BE cgroups are recovered: full BE
 * cpuset, quota -1.
 *
 * cgroup levels below the BestEffort QoS directory are named by enum qos_cgroup_level; the
 * caller turns a write into paths (v1 cpuset/cpu, v2 unified) and applies it with the checked
 * writer, in the order given.
 */
#ifndef KOORD_AGENT_QOS_CPUSUPPRESS_H
#define KOORD_AGENT_QOS_CPUSUPPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/qos/nodeslo.h"
#include "agent/qos/qos.h"

#define QOS_SUPPRESS_MIN_CPUS         2    /* beMinCPUSetCores */
#define QOS_SUPPRESS_MIN_QUOTA        2000 /* beMinQuota, us per 100 ms */
#define QOS_SUPPRESS_UNSET_QUOTA      (-1)
#define QOS_SUPPRESS_INCREASE_RATIO   0.1  /* beMaxIncreaseCPUPercent */
#define QOS_SUPPRESS_QUOTA_SKIP_RATIO 0.01 /* suppressBypassQuotaDeltaRatio */

/* A process outside pods whose usage the metric cache tracks (NodeSLO hostApplications). */
struct qos_host_app {
    const char *name;
    enum api_qos qos;
    bool besteffort_base; /* cgroupPath.base is KubepodsBesteffort */
    bool has_cpu_usage;
    double cpu_usage; /* cores */
};

/* Bound on spec.hostApplications entries qos_host_apps_from_nodeslo() accepts. */
#define QOS_HOST_APPS_MAX 1024

/*
 * The host applications of a NodeSLO (spec.hostApplications[]: name, qos, cgroupPath.base)
 * into a new array (*ret_apps, free() it; NULL when there are none) of *ret_n entries with
 * usage fields zeroed; names are borrowed from nodeslo. An unknown qos string is no class; base
 * "KubepodsBesteffort" sets besteffort_base. Returns 0; -EINVAL when the list or an entry has
 * the wrong JSON type (nothing returned); -E2BIG beyond QOS_HOST_APPS_MAX; -ENOMEM.
 */
int qos_host_apps_from_nodeslo(const cJSON *nodeslo, struct qos_host_app **ret_apps, size_t *ret_n);

struct qos_suppress_input {
    const struct qos_threshold *cfg;
    const struct qos_node *node;
    double node_cpu_usage;      /* cores, last sample */
    const struct qos_pod *pods; /* the pod list, with last CPU samples */
    size_t npods;
    /* Sum of the samples of pods that are not in the pod list (they count as non-BE). */
    double unknown_pods_cpu_usage;
    const struct qos_host_app *apps;
    size_t napps;
};

/*
 * The BE suppress amount in milli-cores:
 *   nodeReserved  = qos_node_reserved_cpu_milli() / 1000 (cores)
 *   systemUsed    = max(max(nodeUsed - sum(all pod samples) - sum(all app samples), 0),
 *                       nodeReserved)
 *   nonBEPodsUsed = samples of pods whose QoS label is not BE and kube QoS is not BestEffort,
 *                   plus unknown_pods_cpu_usage
 *   nonBEHostUsed = samples of apps unless QoS BE under the BestEffort base
 *   suppress      = capacityMilli x cpuSuppressThresholdPercent / 100 - int64(nonBEPodsUsed x
 *                   1000) - int64(nonBEHostUsed x 1000) - int64(systemUsed x 1000)
 *   with cpuSuppressMinPercent set: at least capacityMilli x min / 100.
 * May be negative.
 */
int64_t qos_cpusuppress_milli(const struct qos_suppress_input *in);

/* ---- cpuset policy ---- */

/* One logical CPU of the node topology (NodeCPUInfo processors). */
struct qos_cpu_info {
    int cpu;
    int core;
    int socket;
    int node; /* NUMA node */
};

/*
 * The cpuset picker (calculateBESuppressCPUSetPolicy): want CPUs from pool into ret_cpus (room
 * for want), in pick order; returns how many were picked. Nothing when pool has fewer than want
 * CPUs (upstream refuses rather than hand out a partial set). Buckets by (NUMA node, socket),
 * each sorted by (core, cpu); buckets ordered by size descending, ties by the smaller cpu id at
 * the bucket's head. Round-robin over buckets taking the first hyper-thread sibling pair (two
 * adjacent unused CPUs of the bucket with the same core id) per visit while at least 2 CPUs are
 * needed; then, from the bucket where that stopped, round-robin taking the first unused CPU. A
 * pass stops early when a full round picks nothing.
 */
size_t qos_cpusuppress_pick(const struct qos_cpu_info *pool, size_t npool, size_t want,
                            int *ret_cpus);

struct qos_cpuset_input {
    int64_t suppress_milli;
    const struct qos_cpu_info *cpus; /* all logical CPUs of the node */
    size_t ncpus;
    /* reservedCPUs of node.koordinator.sh/reservation on the NodeResourceTopology; NULL: none. */
    const struct cg_cpuset *reserved;
    /* qos_system_qos_exclusive_cpus() of the NodeResourceTopology; NULL: none. */
    const struct cg_cpuset *system_exclusive;
    const struct qos_pod *pods; /* resource-status cpusets and QoS labels */
    size_t npods;
    size_t current_be_cpus; /* CPUs in the BestEffort QoS cgroup's cpuset now */
};

struct qos_cpuset_result {
    struct cg_cpuset cpus; /* the new BE cpuset (empty: do not apply) */
    int want;              /* n after the minimum and the growth limit */
    int want_lsr;          /* CPUs asked of the LSR pool */
    size_t lsr_pool;       /* candidates bound to LSR pods */
    size_t ls_pool;        /* other candidates */
};

/*
 * The BE cpuset for the suppress amount:
 * 1. candidates = all CPUs minus reserved and SYSTEM-exclusive ones; a candidate in the
 *    resource-status cpuset of a pod labelled LSR is in the LSR pool, of a pod labelled LSE is
 *    dropped, otherwise in the LS pool (a CPU listed by several pods takes the last one's
 *    label; unparsable annotations are skipped);
 * 2. n = ceil(suppress / 1000), at least 2, then at most current + ceil(ncpus x 0.1) (ncpus:
 *    all logical CPUs). The minimum comes first, as upstream orders it, so a node with at most
 *    10 CPUs and an empty BE cpuset gets 1 CPU on the first tick;
 * 3. nLSR = n x |LSR| / (|LSR| + |LS|) (integer) from the LSR pool, n - nLSR from the LS pool,
 *    each by qos_cpusuppress_pick(); no candidates at all: nothing.
 */
void qos_cpusuppress_cpuset(const struct qos_cpuset_input *in, struct qos_cpuset_result *ret);

/*
 * The full BE cpuset (calcBECPUSet): all CPUs minus the SYSTEM-exclusive and reserved ones and
 * the resource-status cpusets of pods labelled LSE. What recovery writes.
 */
void qos_cpusuppress_full_cpuset(const struct qos_cpuset_input *in, struct cg_cpuset *ret);

/* Cgroup levels under the BestEffort QoS directory, as bits. */
enum qos_cgroup_level {
    QOS_LEVEL_QOS = 1 << 0,       /* the BestEffort QoS directory itself */
    QOS_LEVEL_POD = 1 << 1,       /* its pod directories */
    QOS_LEVEL_CONTAINER = 1 << 2, /* container (and sandbox) directories */
};
#define QOS_LEVEL_ALL (QOS_LEVEL_QOS | QOS_LEVEL_POD | QOS_LEVEL_CONTAINER)

/* kubelet CPU manager policy (NodeResourceTopology annotation). */
enum qos_kubelet_cpu_policy {
    QOS_KUBELET_CPU_POLICY_NONE,
    QOS_KUBELET_CPU_POLICY_STATIC,
};

/* Write cpus to cpuset.cpus of every directory at the levels, top-down or bottom-up. */
struct qos_cpuset_write {
    struct cg_cpuset cpus;
    unsigned levels;
    bool bottom_up;
};

/* What one tick writes to the BE cgroups, in order. */
struct qos_suppress_plan {
    bool write_quota;
    int64_t be_quota; /* cfs quota of the BestEffort QoS directory (-1: unlimited) */
    struct qos_cpuset_write cpuset[2];
    size_t ncpuset;
};

/*
 * Policy cpuset, applied every tick: quota -1 on the BestEffort directory, then
 *  - kubelet policy none: union(old, new) on all levels top-down, then new bottom-up;
 *  - static: full on the QoS and pod levels top-down, then new on containers.
 * An empty new cpuset writes no cpuset (static still restores QoS and pod levels).
 */
void qos_cpusuppress_cpuset_plan(enum qos_kubelet_cpu_policy policy, const struct cg_cpuset *old,
                                 const struct cg_cpuset *new_cpus, const struct cg_cpuset *full,
                                 struct qos_suppress_plan *ret);

/*
 * Policy cfsQuota: quota = max(suppress x 100000 / 1000, 2000); skipped (false) when |quota -
 * current| < capacityCores x 100000 x 0.01 and quota != 2000; when current != -1 at most
 * current + int64(capacityCores x 100000 x 0.1). capacityCores is the capacity rounded up to
 * whole cores (Quantity.Value()). Returns whether to write; *ret_quota is set either way.
 */
bool qos_cpusuppress_cfs_quota(int64_t suppress_milli, int64_t capacity_milli,
                               int64_t current_quota, int64_t *ret_quota);

/* Policy cfsQuota's tick: the quota (when not skipped), then the full cpuset on all levels. */
void qos_cpusuppress_cfs_plan(int64_t suppress_milli, int64_t capacity_milli, int64_t current_quota,
                              const struct cg_cpuset *full, struct qos_suppress_plan *ret);

/* Recovery (strategy disabled): quota -1, full cpuset on all levels top-down. */
void qos_cpusuppress_recover_plan(const struct cg_cpuset *full, struct qos_suppress_plan *ret);

#endif
