/*
 * CPU burst (reference koordlet-and-scheduler.md 3.4; upstream
 * qosmanager/plugins/cpuburst/cpu_burst.go): cpu.cfs_burst_us (v2 cpu.max.burst) from the CPU
 * limit, and "CFS quota burst", which raises a throttled container's cfs quota step by step up
 * to a ceiling while the node's share pool has room, guarded by a per-container token bucket.
 *
 * Every tick, for each pod qos_cpuburst_pod_eligible() accepts: its config is the node's
 * cpuBurstStrategy overridden by the pod annotation (qos_cpuburst_pod_config()); the burst values
 * are written (qos_cpuburst_container_burst_us(), qos_cpuburst_pod_burst_us()); then for each
 * running container with a limit, qos_cpuburst_container() decides the quota writes. The
 * node state (qos_cpuburst_node_state()) is computed once per tick.
 *
 * Not copied: newer upstream caps a burst value at the current quota (a cgroup v2 kernel
 * constraint); the reference describes the uncapped value, which is what is computed here.
 */
#ifndef KOORD_AGENT_QOS_CPUBURST_H
#define KOORD_AGENT_QOS_CPUBURST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/qos/nodeslo.h"
#include "agent/qos/qos.h"

#define QOS_BURST_INCREASE_STEP   1.2
#define QOS_BURST_DECREASE_STEP   0.8
#define QOS_BURST_COOLING_RATIO   0.9
#define QOS_BURST_MIN_QUOTA       1000 /* minimum base quota, us */
#define QOS_BURST_CONSUME_PERCENT 100  /* usage/limit at or above which tokens are spent */
#define QOS_BURST_SAVE_PERCENT    60   /* usage/limit below which tokens are saved */

/* cfs_burst_us is written under cpuBurstOnly and auto. */
bool qos_cpuburst_enabled(enum qos_burst_policy p);
/* cfs quota burst runs under cfsQuotaBurstOnly and auto. */
bool qos_cfs_quota_burst_enabled(enum qos_burst_policy p);

/* Active pods whose QoS *label* is not LSR, LSE or BE (unlabelled pods burst too). */
bool qos_cpuburst_pod_eligible(const struct qos_pod *p);

/*
 * The pod's config: *node with the members of annotation koordinator.sh/cpuBurst (JSON
 * CPUBurstConfig; NULL or null: none) merged field by field. Returns 0; -EINVAL when the
 * annotation does not decode, -ENOMEM: *ret is then the node config, as upstream falls back to
 * it.
 */
int qos_cpuburst_pod_config(const struct qos_cpu_burst *node, const char *annotation,
                            struct qos_cpu_burst *ret);

/*
 * cfs_burst_us of a container: 0 unless cpu burst is enabled and limit_milli > 0; else
 * int64(limit cores x cpuBurstPercent / 100 x 100000). E.g. 2 cores at 1000 % -> 2 000 000.
 */
int64_t qos_cpuburst_container_burst_us(const struct qos_cpu_burst *cfg, int64_t limit_milli);

/* cfs_burst_us of the pod: the sum over its containers that were created (non-empty id). */
int64_t qos_cpuburst_pod_burst_us(const struct qos_cpu_burst *cfg, const struct qos_pod *p);

/* ---- cfs quota burst ---- */

/* base = max(limit_milli x 100, 1000) us; -1 without a limit (the container is skipped). */
int64_t qos_cpuburst_base_quota(int64_t limit_milli);

/* ceil = int64(base x cfsQuotaBurstPercent / 100) when that percent is above 100, else base. */
int64_t qos_cpuburst_ceil_quota(int64_t base, const struct qos_cpu_burst *cfg);

enum qos_burst_node_state {
    QOS_BURST_NODE_OVERLOAD, /* share-pool usage ratio >= threshold */
    QOS_BURST_NODE_COOLING,  /* >= 0.9 x threshold */
    QOS_BURST_NODE_IDLE,
    QOS_BURST_NODE_UNKNOWN, /* no node usage data */
};

struct qos_share_pool_input {
    bool has_node_usage;
    double node_usage; /* cores, averaged over min(5 x reconcile interval, 10 s) */
    size_t ncpus;      /* logical CPUs; 0 (unknown topology) gives UNKNOWN */
    /* All pods; cpu_usage averaged over the same window, requests as Kubernetes sums them. */
    const struct qos_pod *pods;
    size_t npods;
    int64_t threshold_percent; /* sharePoolThresholdPercent */
};

/*
 * shareUsage = node usage - usage of pods labelled LSE, LSR or BE; shareTotal = ncpus - cpu
 * requests of pods labelled LSE or LSR; ratio = usage / total (1.0 when total <= 0). *ret_ratio
 * (may be NULL) gets the ratio (0 for UNKNOWN).
 */
enum qos_burst_node_state qos_cpuburst_node_state(const struct qos_share_pool_input *in,
                                                  double *ret_ratio);

enum qos_burst_op {
    QOS_BURST_OP_SCALE_UP,
    QOS_BURST_OP_SCALE_DOWN,
    QOS_BURST_OP_REMAIN,
    QOS_BURST_OP_RESET,
};

/*
 * A container's operation: cfs quota burst disabled -> reset; limiter denies -> scale down; no
 * throttled sample -> remain; last throttled ratio > 0 -> scale up; otherwise remain.
 */
enum qos_burst_op qos_cpuburst_container_op(const struct qos_cpu_burst *cfg, bool limiter_allows,
                                            bool has_throttled, double throttled_last);

/* The node state's correction: overload turns scale-up and remain into scale-down; cooling and
 * unknown turn scale-up into remain. */
enum qos_burst_op qos_cpuburst_node_op(enum qos_burst_node_state state, enum qos_burst_op op);

/*
 * target = current x 1.2 (up) | current x 0.8 (down) | base (reset) | current (remain),
 * truncated to int64, then clamped to [base, ceil].
 */
int64_t qos_cpuburst_target_quota(enum qos_burst_op op, int64_t current, int64_t base,
                                  int64_t ceil);

/* One cfs quota write. */
struct qos_quota_write {
    bool pod; /* the pod directory, else the container's */
    int64_t quota;
};

/*
 * The writes that move a container from current to target: none when equal; the same delta on
 * the pod directory unless its quota is <= 0 (unlimited); pod first when increasing, container
 * first when decreasing. Returns the number of writes (0, 1 or 2).
 */
size_t qos_cpuburst_quota_writes(int64_t container_current, int64_t container_target,
                                 int64_t pod_current, struct qos_quota_write ret[2]);

/* ---- limiter ---- */

/*
 * The token bucket that stops a container from bursting for too long: capacity = period x
 * (cfsQuotaBurstPercent - 100); spending (usage - 100) per second at or above 100 % of the
 * limit, saving (100 - usage) per second below 60 %, kept in [-capacity, capacity]; bursting is
 * allowed while tokens > 0. A zeroed struct is "no limiter yet".
 */
struct qos_burst_limiter {
    bool initialized;
    int64_t capacity;
    int64_t tokens;
    int64_t last_ms;
    int64_t expire_ms; /* 2 x period */
};

/*
 * (Re)starts the bucket at now_ms with tokens = int64(capacity x random01 / 2), random01 in
 * [0, 1) (upstream: rand.Float64() / 2, so the initial tokens are in [0, capacity / 2)).
 */
void qos_burst_limiter_init(struct qos_burst_limiter *l, int64_t period_s, int64_t percent,
                            double random01, int64_t now_ms);

/*
 * Upstream burstLimiter.Allow: elapsed whole seconds since the last call (truncated), spend or
 * save by usage_percent, clamp, remember now_ms. Returns tokens > 0; *ret_tokens (may be NULL)
 * gets the tokens.
 */
bool qos_burst_limiter_allow(struct qos_burst_limiter *l, int64_t now_ms, int64_t usage_percent,
                             int64_t *ret_tokens);

/* Whether the limiter was not used for more than 2 x period (the caller drops it). */
bool qos_burst_limiter_expired(const struct qos_burst_limiter *l, int64_t now_ms);

/*
 * Upstream cfsBurstAllowedByLimiter for one container: allowed without touching l when
 * cfsQuotaBurstPeriodSeconds < 0; denied when cfsQuotaBurstPercent < 100; otherwise l is
 * created (or restarted when its capacity changed) and asked with usage_percent =
 * int64(usage / limit x 100), usage defaulting to the limit when there is no sample.
 * limit_cores must be > 0.
 */
bool qos_cpuburst_limiter_allows(const struct qos_cpu_burst *cfg, struct qos_burst_limiter *l,
                                 double limit_cores, bool has_usage, double usage_cores,
                                 double random01, int64_t now_ms);

/* ---- one container ---- */

struct qos_burst_container_input {
    int64_t limit_milli;
    int64_t current_quota; /* the container's cpu.cfs_quota_us now */
    int64_t pod_quota;     /* the pod's now */
    bool has_usage;        /* last container CPU usage */
    double usage_cores;
    bool has_throttled; /* last container_cpu_throttled ratio (2 s window) */
    double throttled_last;
};

struct qos_burst_container_result {
    bool skipped; /* no limit: nothing touched (not even the limiter) */
    int64_t base;
    int64_t ceil;
    enum qos_burst_op op; /* after the node correction */
    int64_t target;
    struct qos_quota_write writes[2];
    size_t nwrites;
};

/*
 * One running container's cfs quota burst (applyCFSQuotaBurst): base and ceil, the limiter
 * (always consulted before the policy is looked at, as upstream does, so its tokens move even
 * when cfs quota burst is off), the operation, the node correction, the target and the writes.
 */
void qos_cpuburst_container(const struct qos_cpu_burst *cfg, enum qos_burst_node_state state,
                            struct qos_burst_limiter *limiter,
                            const struct qos_burst_container_input *in, double random01,
                            int64_t now_ms, struct qos_burst_container_result *ret);

#endif
