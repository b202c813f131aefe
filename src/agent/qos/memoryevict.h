/*
 * Memory eviction decisions (reference koordlet-and-scheduler.md 3.2; upstream
 * qosmanager/plugins/memoryevict/memory_evict.go): BEMemoryEvict, MemoryEvict and
 * MemoryAllocatableEvict. Each enabled feature becomes an evict task (evict.h) with a release
 * target and a sorted victim list; the round runs them in the order BEMemoryEvict ->
 * MemoryAllocatableEvict -> MemoryEvict, usage released by one counting for the next.
 *
 * The MemoryEvict "x1000" quirk is NOT copied. Upstream records a MemoryEvict victim's usage as
 * bytes x 1000 (a leftover of the CPU code's milli-cores), so its first victim nearly always
 * "releases" the whole target and the round stops after one pod. Here victims count their real
 * bytes and the round evicts until the target is met, as the design describes (and as
 * BEMemoryEvict does upstream). The sort order is unaffected (scaling keeps the order); only how
 * many pods one round evicts differs.
 */
#ifndef KOORD_AGENT_QOS_MEMORYEVICT_H
#define KOORD_AGENT_QOS_MEMORYEVICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/qos/evict.h"
#include "agent/qos/nodeslo.h"
#include "agent/qos/qos.h"

/* Cool-down after a round that evicted someone (MemoryEvictCoolTimeSeconds). */
#define QOS_MEMORY_EVICT_COOL_MS 4000
/* Default gap between threshold and lower percent. */
#define QOS_MEMORY_RELEASE_BUFFER_PERCENT 2

/*
 * Whether the memory evictor skips this tick: now_ms < last_evict_ms + 4 s, where last_evict_ms
 * is the time of the last round that evicted someone (has_last false: never, so no cool-down;
 * upstream's zero time).
 */
bool qos_memevict_cooling(bool has_last, int64_t last_evict_ms, int64_t now_ms);

/*
 * The usage release target shared by BEMemoryEvict and MemoryEvict:
 *   used_percent = int64(node_used) * 100 / capacity   (integer percent)
 *   triggered when used_percent >= memoryEvictThresholdPercent
 *   lower        = memoryEvictLowerPercent, default threshold - 2
 *   release      = capacity * (used_percent - lower) / 100
 */
struct qos_usage_release {
    int64_t used_percent;
    int64_t threshold_percent;
    int64_t lower_percent;
    int64_t release; /* bytes; 0 when not triggered */
};

/*
 * Checks the configuration (threshold set and >= 0; lower < threshold; for MemoryEvict also
 * evictEnabledPriorityThreshold set) and computes the target. Returns 1 (triggered, *ret
 * filled), 0 (below the threshold: ret->release 0), -EINVAL (bad configuration, or capacity
 * <= 0; *why, when why is not NULL, points at a static reason).
 */
int qos_memevict_usage_release(const struct qos_threshold *cfg, bool memory_evict, int64_t capacity,
                               double node_used, struct qos_usage_release *ret, const char **why);

/*
 * MemoryAllocatableEvict's configuration: memoryAllocatableEvictThresholdPercent set and >= 0;
 * lower (default 0) < threshold; allocatableEvictPriorityThreshold set and <= 7999 (koord-prod
 * pods are never evicted). 0 or -EINVAL with *why.
 */
int qos_memevict_allocatable_check(const struct qos_threshold *cfg, const char **why);

/*
 * MemoryAllocatableEvict's target into task->release and task->request_classes (other task
 * fields untouched). Pods (active or not) whose priority value is <= the priority threshold add
 * their class request (qos_pod_class_request(): batch-memory, mid-memory or memory) per name.
 * For each name requested: when the node's allocatable lacks it or is 0 the whole request is to
 * be released; otherwise, in float32 as upstream computes it, when r/a > threshold/100 the
 * release is int64((r/a - lower/100) * a). Only koord-batch and koord-mid pods (raw class) count
 * toward names batch-memory and mid-memory; nothing can be released toward "memory". The
 * configuration must have passed qos_memevict_allocatable_check().
 */
void qos_memevict_allocatable_release(const struct qos_threshold *cfg, const struct qos_node *node,
                                      const struct qos_pod *pods, size_t npods,
                                      struct qos_evict_task *task);

/*
 * BEMemoryEvict victims into ret (room for npods): pods labelled koordinator.sh/qosClass=BE
 * (the label, any priority, active or not) whose eviction policy allows BEMemoryEvict, `used`
 * = int64 of the memory sample (0 without one). Order: spec.priority ascending when both pods
 * set it and it differs; else both with usage: larger first; both without: name descending;
 * otherwise the one without usage goes last. Ties keep the input order. Returns the count.
 */
size_t qos_memevict_be_victims(const struct qos_pod *pods, size_t npods,
                               struct qos_evict_victim *ret);

/*
 * MemoryEvict (by_request false) or MemoryAllocatableEvict (true) victims: active pods with a
 * memory sample whose priority value is <= priority_threshold, labelled eviction-enabled, and
 * allowed by their eviction policy for the feature. Order: eviction-priority annotation, priority
 * value, label priority (default: the priority value) ascending; then larger usage first
 * (MemoryEvict) or larger class request first (MemoryAllocatableEvict). Returns the count.
 */
size_t qos_memevict_victims(const struct qos_pod *pods, size_t npods, int32_t priority_threshold,
                            bool by_request, struct qos_evict_victim *ret);

/* ---- one tick ---- */

struct qos_memevict_input {
    const struct qos_threshold *cfg;
    const struct qos_node *node;
    const struct qos_pod *pods; /* with memory usage samples ("last") */
    size_t npods;
    double node_used; /* node memory usage, "last" sample, bytes */
    bool has_node_used;
    /* Feature gates (koordlet flags); each also needs cfg->enable. */
    bool be_memory_evict;
    bool memory_evict;
    bool memory_allocatable_evict;
};

/* The tasks of one tick; victims point into storage and at the input pods. */
struct qos_memevict_plan {
    struct qos_evict_task tasks[3];
    size_t ntasks;
    struct qos_evict_victim *storage;
    /* Why a feature built no task ("" when it did, or was not enabled), for logs. */
    const char *skipped[3];
};

/*
 * Builds the tasks of the enabled features whose configuration is valid and whose target is
 * positive, in round order. A feature is enabled when its gate is on and cfg->enable
 * (resourceUsedThresholdWithBE.enable) is true. Without a node usage sample the usage tasks are
 * skipped. Returns 0 (release with qos_memevict_plan_release()), -EINVAL (capacity <= 0: no
 * task), -ENOMEM.
 */
int qos_memevict_plan(const struct qos_memevict_input *in, struct qos_memevict_plan *ret);
void qos_memevict_plan_release(struct qos_memevict_plan *p);

#endif
