/*
 * CPU eviction decisions (reference koordlet-and-scheduler.md 3.3; upstream
 * qosmanager/plugins/cpuevict/cpu_evict.go): BECPUEvict (BE satisfaction), CPUEvict (node usage
 * threshold) and CPUAllocatableEvict (requests over allocatable). Each enabled feature becomes
 * an evict task (evict.h). Round order here: BECPUEvict -> CPUEvict -> CPUAllocatableEvict (the
 * first two in upstream's order; the reference does not place the third, which is appended).
 *
 * The metric queries are the caller's: it passes averages over the window and their sample
 * counts, and the "last" values (2 s window).
 */
#ifndef KOORD_AGENT_QOS_CPUEVICT_H
#define KOORD_AGENT_QOS_CPUEVICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/qos/evict.h"
#include "agent/qos/memoryevict.h"
#include "agent/qos/nodeslo.h"
#include "agent/qos/qos.h"

/* Cool-down after a round that evicted someone, and after start (CPUEvictCoolTimeSeconds). */
#define QOS_CPU_EVICT_COOL_MS 20000
/* Defaults and bounds of BECPUEvict. */
#define QOS_BE_CPU_SATISFACTION_LOWER_MAX 60
#define QOS_BE_CPU_SATISFACTION_UPPER_MAX 100
#define QOS_BE_CPU_USAGE_THRESHOLD        90
#define QOS_CPU_RELEASE_BUFFER_PERCENT    2

/*
 * Whether the CPU evictor skips this tick: now_ms - last_ms < 20 s, where last_ms is the time of
 * the last round that evicted someone or, before any, the agent's start.
 */
bool qos_cpuevict_cooling(int64_t last_ms, int64_t now_ms);

/* ---- BECPUEvict ---- */

/*
 * Configuration check: cpuEvictBESatisfactionLowerPercent and ...UpperPercent both set, lower
 * in (0, 60], upper in (0, 100), upper >= lower. 0 or -EINVAL with *why (may be NULL).
 */
int qos_cpuevict_be_check(const struct qos_threshold *cfg, const char **why);

/* window = max(collect interval, cpuEvictTimeWindowSeconds when set), seconds. */
int64_t qos_cpuevict_window_seconds(int64_t collect_interval_s, const struct qos_threshold *cfg);

/* Averages are valid when count x collect interval >= window / 3 (integer division). */
bool qos_cpuevict_samples_valid(int64_t window_s, int64_t collect_interval_s, int64_t count);

/*
 * "Usage high enough" (milli-cores): false when limit <= 0; true when limit < 1000; otherwise
 * usage / limit >= threshold / 100, threshold = cpuEvictBEUsageThresholdPercent or 90.
 */
bool qos_cpuevict_usage_high_enough(double usage, double limit, const struct qos_opt *threshold);

/*
 * Release by satisfaction (milli batch-cpu): 0 when request <= 0; satisfaction = limit /
 * request; 0 when satisfaction > lower / 100; gap = upper / 100 - satisfaction, 0 when gap <= 0;
 * else int64(request x gap).
 */
int64_t qos_cpuevict_release_by_satisfaction(double request, double limit, int64_t lower,
                                             int64_t upper);

/*
 * The BE limit used in satisfaction under cpuEvictPolicy evictByAllocatable: the node's
 * batch-cpu allocatable value; -1 when absent or negative; 1 (milli) when 0, so that the
 * satisfaction can still be computed when high-priority usage squeezed it to zero.
 */
double qos_cpuevict_be_allocatable(const struct qos_node *node);

/* BE CPU figures of node_be metrics, milli-cores. */
struct qos_be_cpu {
    double usage;
    double request;
    double real_limit;
};

struct qos_be_cpu_input {
    struct qos_be_cpu avg;     /* averages over the window */
    int64_t count;             /* the smallest sample count of the three averages */
    struct qos_be_cpu current; /* "last" values */
    int64_t window_s;          /* qos_cpuevict_window_seconds() */
    int64_t collect_interval_s;
};

/*
 * BECPUEvict's release (milli batch-cpu), as upstream computes it: with limit = real limit (or
 * qos_cpuevict_be_allocatable() under evictByAllocatable): 0 unless the averages are valid and
 * high enough; the average-based release (0 -> 0); 0 unless the current usage is high enough;
 * the average-based release when current request and limit equal the averages; else
 * min(average-based, current-based), 0 when the current-based one is <= 0. cfg must have passed
 * qos_cpuevict_be_check().
 */
int64_t qos_cpuevict_be_release(const struct qos_threshold *cfg, const struct qos_node *node,
                                const struct qos_be_cpu_input *in);

/*
 * BECPUEvict victims: pods labelled BE whose eviction policy allows BECPUEvict (active or not);
 * used = int64(cpu cores x 1000) (0 without a sample), request = batch-cpu requests,
 * usage_ratio = used / request (0 without request). Order: spec.priority ascending when both
 * pods set it and it differs, otherwise larger usage_ratio first; ties keep the input order.
 * Each releases its batch-cpu request.
 */
size_t qos_cpuevict_be_victims(const struct qos_pod *pods, size_t npods,
                               struct qos_evict_victim *ret);

/* ---- CPUEvict ---- */

/* cpuEvictThresholdPercent set and >= 0, lower (default threshold - 2) < threshold,
 * evictEnabledPriorityThreshold set. 0 or -EINVAL with *why. */
int qos_cpuevict_usage_check(const struct qos_threshold *cfg, const char **why);

/*
 * CPUEvict's target (cfg checked): used_percent = int64(avg_node_cores x 1000) x 100 /
 * capacity_milli; triggered when >= cpuEvictThresholdPercent; release = capacity_milli x
 * (used_percent - lower) / 100 milli-cores. Returns 1 (triggered) or 0.
 */
int qos_cpuevict_usage_release(const struct qos_threshold *cfg, int64_t capacity_milli,
                               double avg_node_cores, struct qos_usage_release *ret);

/*
 * CPUEvict (by_request false) and CPUAllocatableEvict (true) victims: active pods with a CPU
 * sample, priority value <= priority_threshold, label eviction-enabled, eviction policy allowing
 * the feature; used = int64(cores x 1000); order as the memory priority evictors, last key the
 * larger usage (CPUEvict) or the larger class cpu request (CPUAllocatableEvict).
 */
size_t qos_cpuevict_victims(const struct qos_pod *pods, size_t npods, int32_t priority_threshold,
                            bool by_request, struct qos_evict_victim *ret);

/* ---- CPUAllocatableEvict ---- */

/* cpuAllocatableEvictThresholdPercent set and >= 0, lower (default 0) < threshold,
 * allocatableEvictPriorityThreshold set and <= 7999. */
int qos_cpuevict_allocatable_check(const struct qos_threshold *cfg, const char **why);

/* As qos_memevict_allocatable_release() on cpu, batch-cpu and mid-cpu requests:
 * release = (requested / allocatable - lower%) x allocatable, in float32. */
void qos_cpuevict_allocatable_release(const struct qos_threshold *cfg, const struct qos_node *node,
                                      const struct qos_pod *pods, size_t npods,
                                      struct qos_evict_task *task);

/* ---- one tick ---- */

struct qos_cpuevict_input {
    const struct qos_threshold *cfg;
    const struct qos_node *node;
    const struct qos_pod *pods; /* with CPU usage samples ("last") */
    size_t npods;
    const struct qos_be_cpu_input *be; /* NULL: no BE metrics */
    double avg_node_cores;             /* node CPU usage averaged over the window */
    bool has_node_usage;
    bool be_cpu_evict; /* feature gates; each also needs cfg->enable */
    bool cpu_evict;
    bool cpu_allocatable_evict;
};

struct qos_cpuevict_plan {
    struct qos_evict_task tasks[3];
    size_t ntasks;
    struct qos_evict_victim *storage;
    const char *skipped[3]; /* BECPUEvict, CPUEvict, CPUAllocatableEvict */
};

/*
 * Builds the tasks of the enabled features with a valid configuration and a positive target,
 * in round order. Returns 0 (release with qos_cpuevict_plan_release()), -EINVAL (cpu capacity
 * <= 0: no task), -ENOMEM.
 */
int qos_cpuevict_plan(const struct qos_cpuevict_input *in, struct qos_cpuevict_plan *ret);
void qos_cpuevict_plan_release(struct qos_cpuevict_plan *p);

#endif
