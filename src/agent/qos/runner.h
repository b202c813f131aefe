/*
 * The QoS loop of the node agent (upstream koordlet qosmanager; reference
 * koordlet-and-scheduler.md sections 3 and 4): once per reconcile interval it gathers the inputs
 * of every strategy (this node's pods, its Node and NodeSLO through the caller's callbacks, the
 * "last" and windowed samples of the metric cache, the current cgroup values, the CPU topology
 * of the sys root), calls the pure decision functions of agent/qos/, and applies what they
 * return: checked cgroup writes (agent/cgroup/writer.h: identical values are not rewritten, dry
 * run logs instead of writing) and evictions through the caller's eviction callback (normally
 * agent/qos/evict_api.h).
 *
 * Strategies applied, in this order each tick:
 *   1. BE CPU suppress (3.1): cpuset policy (cpuset.cpus of the BestEffort QoS directory, its pod
 *      and container directories, found by listing the BestEffort directory as upstream does) or
 *      cfsQuota policy (the BestEffort directory's quota); recovery (quota -1, full BE cpuset)
 *      when resourceUsedThresholdWithBE.enable is false;
 *   2. memory eviction (3.2): BEMemoryEvict, MemoryAllocatableEvict, MemoryEvict, with the 4 s
 *      cool-down;
 *   3. CPU eviction (3.3): BECPUEvict, CPUEvict, CPUAllocatableEvict, with the 20 s cool-down
 *      (also after the first tick, upstream's "after start");
 *   4. CPU burst (3.4), cpu.cfs_burst_us part: per container and pod; 0 when the policy does not
 *      enable it.
 *   5. CPU burst (3.4), CFS quota burst (gate CPUBurst too): per running container with a CPU
 *      limit, its cfs quota scaled up while throttled (x 1.2, at most cfsQuotaBurstPercent of
 *      the base limit x 100) and down (x 0.8) when the share pool is overloaded or the
 *      container's token bucket is empty; the pod's quota moves by the same delta (pod first
 *      when growing, container first when shrinking). A policy without it resets the quota to
 *      the base. Token buckets are kept per container ID and dropped after 2 x their period
 *      unused.
 *   6. memory QoS (3.5, gate CgroupReconcile): memory.min/low/high, the Anolis watermark,
 *      priority and page-cache files, and memory.oom.group, on the kube root, Burstable and
 *      BestEffort directories, pod and container directories, written with the resource
 *      executor's leveled update (min/low/high only raised top-down, then the final values
 *      bottom-up). Disabled classes carry the neutral values (min 0, low 0, high max), so
 *      disabling restores the kernel defaults. A file the kube root lacks is unsupported:
 *      counted once per tick and skipped at every level.
 *   7. batch resources (3.9, gate BatchResource): cpu.shares, cfs quota and memory limit of the
 *      pods labelled BE that have batch-cpu or batch-memory, and of their containers, from
 *      those requests and limits (quota -1 while the NodeSLO suppresses BE CPU by cfsQuota;
 *      divided by the node's cpu-normalization-ratio annotation above 1). The pod's quota is
 *      written before its containers' when it grows, after them when it shrinks (a v1 child
 *      may not exceed its parent).
 *   8. resctrl (3.6; gate RdtResctrl, on): under the resctrl root, the groups LSR, LS and BE
 *      (made when missing) get their class's L3 mask over the cache ids of the root schemata
 *      and the ways of info/L3/cbm_mask, and an MB line when info/MB exists (Intel percent, or
 *      AMD's scale when <proc>/cpuinfo says AuthenticAMD); a disabled class gets the neutral
 *      0-100 %, 100 %. The TIDs of each active pod of an enabled class (every cgroup under its
 *      pod cgroup: containers and sandbox; v1 cpu "tasks", v2 "cgroup.threads") not yet in its
 *      group's "tasks" are written there; nothing moves pods out. Without info/L3/cbm_mask
 *      (resctrl not mounted, or no L3 CAT) the strategy is unsupported: upstream mounts resctrl
 *      itself, the runner does not.
 *   9. system config (3.7; gate SystemConfig, off): min_free_kbytes, watermark_scale_factor,
 *      memcg reap_background, sched_group_identity_enabled, sched_idle_saver_wmark and
 *      pagecache_limit/enabled under the proc and sys roots, and the sched_features switches
 *      (debugfs under the sys root), from spec.systemStrategy and the Node's memory capacity
 *      (nothing without a Node). Not upstream: the value a file held before the runner first
 *      changed it is kept, and written back once the NodeSLO no longer sets it (or sets it out
 *      of range); upstream leaves the last value in place.
 *  10. group identity (3.8; gate GroupIdentity, on): cpu.bvt_warp_ns of the kube root (0), the
 *      Burstable and BestEffort directories, each pod and every cgroup under it (containers and
 *      sandbox); when a class enables it, first sched_core 0 and sched_group_identity_enabled 1
 *      where those sysctls exist. Disabled classes carry 0, so disabling writes 0 back. Without
 *      cpu.bvt_warp_ns on the kube root (not an Anolis kernel) the strategy is unsupported.
 * Not done yet: node-reserved and SYSTEM-exclusive CPUs (NodeResourceTopology) are not
 * subtracted from the BE cpuset, and usage of pods missing from the pod list is not counted as
 * non-BE (the metric cache cannot list them).
 *
 * NodeSLO: decoded with qos_slo_from_nodeslo() each tick; an absent NodeSLO means the defaults;
 * one that fails to decode keeps the last good configuration, and the reason is logged once (again
 * only when it changes). As upstream, CPU burst and memory QoS do nothing without a NodeSLO
 * that has their strategy (cpuBurstStrategy, resourceQOSStrategy; the manager always renders
 * both): resetting to defaults there would turn a quota kubelet left unlimited into the limit
 * and clear kubelet's memory.oom.group.
 *
 * Errors of single writes never stop a tick: they are counted per strategy (struct
 * qos_runner_stats) and logged at warn once per strategy until a tick of it succeeds again. A
 * file the kernel lacks (ENOENT in an existing cgroup directory, a missing sysctl, no resctrl,
 * no cpu.bvt_warp_ns on the kube root) is "unsupported": counted each time it is skipped, and
 * logged once per strategy and file. sysctls, resctrl files and sched_features go through the
 * writer's cg_write_file()/cg_append_file(): the same skip of identical values, read-back and
 * dry run as cgroup files.
 *
 * Thread safety: qos_runner_tick() and qos_runner_stats() may be called from any thread (a mutex
 * serialises ticks); the callbacks run on the ticking thread, with the runner's lock held, and
 * must not call back into the runner.
 */
#ifndef KOORD_AGENT_QOS_RUNNER_H
#define KOORD_AGENT_QOS_RUNNER_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/qos/cpusuppress.h"
#include "agent/qos/evict.h"
#include "agent/qos/qos.h"

struct cg_layout;
struct mc;
struct strbuf;

/* What the counters are kept for. */
enum qos_runner_strategy {
    QOS_RUNNER_CPU_SUPPRESS,
    QOS_RUNNER_MEMORY_EVICT,
    QOS_RUNNER_CPU_EVICT,
    QOS_RUNNER_CPU_BURST,
    QOS_RUNNER_CFS_QUOTA_BURST,
    QOS_RUNNER_MEMORY_QOS,
    QOS_RUNNER_BATCH_RESOURCE,
    QOS_RUNNER_RESCTRL,
    QOS_RUNNER_SYSTEM_CONFIG,
    QOS_RUNNER_GROUP_IDENTITY,
    QOS_RUNNER_STRATEGY_COUNT,
};

/* "cpu_suppress", "memory_evict", "cpu_evict", "cpu_burst", "cfs_quota_burst", "memory_qos",
 * "batch_resource", "resctrl", "system_config", "group_identity". */
const char *qos_runner_strategy_name(enum qos_runner_strategy s);

/* The koordlet feature gates the runner honours (reference 3, intro; GroupIdentity is a runtime
 * hook gate upstream, set through the same --feature-gates). */
enum qos_runner_features {
    QOS_RUNNER_F_BE_CPU_SUPPRESS = 1 << 0,          /* on by default */
    QOS_RUNNER_F_BE_MEMORY_EVICT = 1 << 1,          /* off */
    QOS_RUNNER_F_MEMORY_EVICT = 1 << 2,             /* off */
    QOS_RUNNER_F_MEMORY_ALLOCATABLE_EVICT = 1 << 3, /* off */
    QOS_RUNNER_F_BE_CPU_EVICT = 1 << 4,             /* off */
    QOS_RUNNER_F_CPU_EVICT = 1 << 5,                /* off */
    QOS_RUNNER_F_CPU_ALLOCATABLE_EVICT = 1 << 6,    /* off */
    QOS_RUNNER_F_CPU_BURST = 1 << 7,                /* on: cfs_burst_us and CFS quota burst */
    QOS_RUNNER_F_CGROUP_RECONCILE = 1 << 8,         /* off: memory QoS */
    QOS_RUNNER_F_BATCH_RESOURCE = 1 << 9,           /* on (a runtime-hook gate upstream) */
    QOS_RUNNER_F_RDT_RESCTRL = 1 << 10,             /* on: RdtResctrl */
    QOS_RUNNER_F_SYSTEM_CONFIG = 1 << 11,           /* off: SystemConfig */
    QOS_RUNNER_F_GROUP_IDENTITY = 1 << 12,          /* on (a runtime-hook gate upstream) */
};
#define QOS_RUNNER_F_DEFAULT                                                                       \
    (QOS_RUNNER_F_BE_CPU_SUPPRESS | QOS_RUNNER_F_CPU_BURST | QOS_RUNNER_F_BATCH_RESOURCE |         \
     QOS_RUNNER_F_RDT_RESCTRL | QOS_RUNNER_F_GROUP_IDENTITY)

/*
 * Returns a new JSON tree the runner owns (it cJSON_Delete()s it after the tick), or NULL when
 * the object is absent or cannot be had. Pods: a JSON array of core/v1 Pod objects of this node;
 * Node: the Node; NodeSLO: this node's NodeSLO.
 */
typedef cJSON *(*qos_runner_get_fn)(void *ctx);

/*
 * Evicts pod for feature (QOS_FEATURE_*) at now_ms (the tick's wall clock). Returns 0 when the
 * pod was evicted, a negative errno when not (the next victim is tried). pod is borrowed for the
 * call.
 */
typedef int (*qos_runner_evict_fn)(void *ctx, const char *feature, const struct qos_pod *pod,
                                   int64_t now_ms);

struct qos_runner_opts {
    const struct cg_layout *layout; /* borrowed; required */
    struct mc *metrics;             /* borrowed; NULL: no samples (strategies needing them skip) */
    bool dry_run;                   /* log cgroup writes instead of doing them */

    qos_runner_get_fn get_pods; /* each may be NULL: always absent */
    qos_runner_get_fn get_node;
    qos_runner_get_fn get_nodeslo;
    /* May be NULL. Called at the end of each tick, after the three trees were deleted: a
     * source may hand out cJSON references to objects it holds (no copy) and let go of them
     * here. */
    void (*release)(void *ctx);
    void *source_ctx;

    qos_runner_evict_fn evict; /* NULL: eviction tasks are computed and nothing is evicted */
    void *evict_ctx;
    /* UIDs evicted recently (evict_api's memory), counted as already being released; borrowed,
     * read on the ticking thread only; may be NULL. */
    const struct qos_evicted *recent;

    enum qos_kubelet_cpu_policy kubelet_cpu_policy; /* default none */
    uint32_t features;                              /* enum qos_runner_features bits */
    /* How often each strategy runs (upstream's --*-interval-seconds; 0 = 1000 each): BE CPU
     * suppress, memory eviction, CPU eviction, and every other strategy (reconcile). */
    int64_t cpu_suppress_interval_ms;
    int64_t memory_evict_interval_ms;
    int64_t cpu_evict_interval_ms;
    int64_t interval_ms;         /* reconcile interval */
    int64_t collect_interval_ms; /* the collector's interval (BECPUEvict window); 0 = 1000 */
    /* Seeds the random initial tokens of the CFS quota burst limiters (upstream
     * rand.Float64()); 0: seeded from the clock. Tests fix it. */
    uint64_t random_seed;
};

/* Defaults: no sources, features QOS_RUNNER_F_DEFAULT, kubelet policy none, 1 s intervals. */
void qos_runner_opts_init(struct qos_runner_opts *ret);

/* Per-strategy counters since the runner was created. */
struct qos_runner_counters {
    uint64_t writes;      /* files changed (resctrl: also groups made and TIDs moved) */
    uint64_t unchanged;   /* writes skipped: the file held the value */
    uint64_t dry_run;     /* writes logged instead of done */
    uint64_t evictions;   /* pods evicted (through the callback) */
    uint64_t errors;      /* failed writes, reads and evictions */
    uint64_t unsupported; /* files this kernel lacks */
};

struct qos_runner_stats {
    uint64_t ticks;
    uint64_t nodeslo_errors; /* ticks whose NodeSLO failed to decode (the last good one kept) */
    struct qos_runner_counters s[QOS_RUNNER_STRATEGY_COUNT];
};

struct qos_runner;

/*
 * Creates a runner (opts copied; what it points at is borrowed) and reads the CPU topology of
 * the sys root: <sys>/devices/system/cpu/cpuN/topology/{core_id,physical_package_id} and
 * <sys>/devices/system/node/nodeN/cpulist; without them, a CPU's core is its id, its socket and
 * NUMA node 0, and without any cpuN directory the CPUs are 0 .. (node cpu capacity - 1), taken at
 * the first tick that has a Node. Returns 0, -EINVAL (no layout).
 */
int qos_runner_new(const struct qos_runner_opts *opts, struct qos_runner **ret);

/* Stops the thread if running, then frees. NULL is fine. */
void qos_runner_free(struct qos_runner *r);

/*
 * Runs every enabled strategy once at wall_ms (milliseconds since the epoch, the clock of the
 * metric cache's timestamps and of the cool-downs). Returns 0; failures inside are counted.
 */
int qos_runner_tick(struct qos_runner *r, int64_t wall_ms);

/*
 * Runs the strategies whose bits (1u << enum qos_runner_strategy) are in mask, as
 * qos_runner_tick() runs them all.
 */
int qos_runner_tick_some(struct qos_runner *r, int64_t wall_ms, uint32_t mask);

/*
 * The strategies due at mono_ms (a monotonic clock in milliseconds), as a mask for
 * qos_runner_tick_some(), each then scheduled one of its intervals later (or one interval after
 * mono_ms when it fell more than an interval behind: no burst of runs after a stall); the first
 * call finds them all due. *ret_next_ms gets the earliest time one is due again. For the ticking
 * thread, or a test that has not started it.
 */
uint32_t qos_runner_due(struct qos_runner *r, int64_t mono_ms, int64_t *ret_next_ms);

/*
 * Starts a thread that runs each strategy on its own interval (qos_runner_due()) with the
 * real-time clock. 0, -EALREADY, -errno.
 */
int qos_runner_start(struct qos_runner *r);

/* Stops and joins the thread (idempotent). */
void qos_runner_stop(struct qos_runner *r);

/* A consistent copy of the counters. */
void qos_runner_stats(struct qos_runner *r, struct qos_runner_stats *ret);

/*
 * Appends the counters in the Prometheus text format:
 *   koord_agent_qos_ticks_total N
 *   koord_agent_qos_nodeslo_errors_total N
 *   koord_agent_qos_actions_total{strategy="cpu_suppress",action="writes"} N   (and so on)
 */
void qos_runner_render_metrics(const struct qos_runner_stats *s, struct strbuf *out);

/* The CPUs the runner knows (for tests and logs); *ret_n gets the count. Borrowed. */
const struct qos_cpu_info *qos_runner_cpus(const struct qos_runner *r, size_t *ret_n);

#endif
