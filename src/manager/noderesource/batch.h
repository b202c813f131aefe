/*
 * Batch resources of a Node (`kubernetes.io/batch-cpu`, `kubernetes.io/batch-memory`): the
 * calculation of upstream's NodeResource BatchResource plugin and the node-status preparation
 * around it, as a pure library. The NodeResource controller gathers the inputs (Node, its Pods,
 * its NodeMetric, the node's colocation strategy), calls noderesource_batch_calculate(), builds the
 * new Node status with noderesource_batch_prepare_status() and decides with
 * noderesource_batch_needs_sync() whether to PUT it. Keeping the arithmetic here, free of I/O,
 * lets it be checked unit by unit against reference/manager-behaviour.md 4.2-4.4.
 *
 * The formulas (manager-behaviour.md 4.4), per resource, cpu in milli-cores, memory in bytes:
 *   Margin   = int(Cap x (100 - reclaimThresholdPercent) / 100)     Cap = status.capacity
 *   Reserved = max(max(capacity - allocatable, 0), annotation node.koordinator.sh/reservation)
 *   SysUsed  = nodeMetric.systemUsage + host applications of priority koord-prod/koord-mid
 *   SysUsed' = max(SysUsed, Reserved)
 *   usage           = max(Cap - Margin - SysUsed' - HPUsed, 0)
 *   request         = max(Cap - Margin - Reserved - HPReq, 0)
 *   maxUsageRequest = max(Cap - Margin - SysUsed' - HPMaxUR, 0)
 * batch-cpu uses maxUsageRequest when cpuCalculatePolicy is "maxUsageRequest", else usage;
 * batch-memory uses request / maxUsageRequest / usage by memoryCalculatePolicy; then each is
 * capped at int(Cap x batch{CPU,Memory}ThresholdPercent / 100) when that field is set. HPReq,
 * HPUsed and HPMaxUR sum the high-priority pods (not koord-batch, not koord-free) that are
 * Running or Pending, plus the usage of "dangling" pod metrics, with upstream's quirks kept (see
 * noderesource_batch_calculate()).
 *
 * Arithmetic is exact where upstream's is (resource.Quantity sums: every value is kept to 1n, no
 * rounding until the end), and float64 where upstream's is (the margins and caps: Go's
 * int64(float64(x) * ratio), truncation toward zero), so results match upstream to the unit.
 *
 * No function logs, blocks or keeps state; all may run concurrently on different data. Inputs
 * are borrowed cJSON trees in the Go-client JSON encoding and are never modified.
 */
#ifndef KOORD_MANAGER_NODERESOURCE_BATCH_H
#define KOORD_MANAGER_NODERESOURCE_BATCH_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "api/pod.h"

/* Resource names (reference/api-types.md 7.3). */
#define NODERESOURCE_BATCH_CPU    "kubernetes.io/batch-cpu"
#define NODERESOURCE_BATCH_MEMORY "kubernetes.io/batch-memory"

/* Node annotations read here (reference/api-types.md 7.4). */
#define NODERESOURCE_ANNOTATION_RESERVATION "node.koordinator.sh/reservation"
#define NODERESOURCE_ANNOTATION_THIRD_PARTY "node.koordinator.sh/thirdPartyAllocations"

/* Reset messages, word for word upstream's (they end up in logs and events). */
#define NODERESOURCE_MSG_DISABLED "node colocation is disabled in Config, reason: DisableInConfig"
#define NODERESOURCE_MSG_DEGRADED                                                                  \
    "degrade node resource because of abnormal nodeMetric, reason: degradedByBatchResource"
#define NODERESOURCE_MSG_GRACE                                                                     \
    "keep node resource: nodeMetric missing or stale, manager became leader less than "            \
    "degradeTimeMinutes ago"

/*
 * The pod's effective cpu and memory request as kube-scheduler computes it
 * (k8s.io/component-helpers resource.PodRequests, KEP-753 sidecars): the sum over containers; each
 * init container with restartPolicy "Always" (a sidecar) is added to that sum and to the running
 * sidecar total; every other init container needs its own request plus the sidecars started
 * before it; the request is the larger of the container sum and the largest init-container need;
 * spec.overhead is added last. Only requests count (no defaulting from limits; the API server
 * already did it); in-place resize status and pod-level resources are not considered. A
 * malformed quantity counts as absent. The sums are exact; the results are rounded up to whole
 * milli-cores and bytes, as MilliValue() and Value() do. pod NULL gives 0 and 0.
 * Returns 0, or -ERANGE when a sum exceeds 2^63 milli-cores or bytes (outputs then untouched).
 */
int noderesource_pod_request(const cJSON *pod, int64_t *ret_cpu_milli, int64_t *ret_memory_bytes);

/* Everything noderesource_batch_calculate() reads. All pointers are borrowed. */
struct noderesource_batch_input {
    const cJSON *node;        /* core/v1 Node; required */
    const cJSON *const *pods; /* the pods whose spec.nodeName is the node; entries may be NULL */
    size_t npods;
    const cJSON *nodemetric; /* NodeMetric (slo.koordinator.sh or metrics.koordinator.sh
                              * v1alpha1), NULL when there is none */
    const cJSON *strategy;   /* the node's effective ColocationStrategy, as slo_node_colocation()
                              * returns it; required. Absent fields take upstream's defaults (1.3):
                              * reclaim 60/65, degradeTimeMinutes 15, policies "usage" */
    bool cluster_enable;     /* the merged *cluster* colocation strategy's enable (4.2 step 2) */
    int64_t now_ms;          /* current time, Unix milliseconds */
    int64_t not_before_ms;   /* when this process became leader, Unix milliseconds (0: no grace) */
};

enum noderesource_batch_action {
    NODERESOURCE_BATCH_SET,   /* write cpu_milli and memory_bytes */
    NODERESOURCE_BATCH_RESET, /* remove both resources from capacity and allocatable */
    NODERESOURCE_BATCH_KEEP,  /* leave whatever the Node has (leader grace window) */
};

struct noderesource_batch {
    enum noderesource_batch_action action;
    const char *message;  /* static string: one of NODERESOURCE_MSG_* for RESET and KEEP, NULL
                           * for SET */
    int64_t cpu_milli;    /* SET: batch-cpu in milli-cores (>= 0); else 0 */
    int64_t memory_bytes; /* SET: batch-memory in bytes (>= 0); else 0 */
};

/*
 * Computes the batch resources of in->node (manager-behaviour.md 4.2 steps 2-4, 4.3, 4.4), in
 * this order:
 *
 * 1. Disabled: !in->cluster_enable, or the strategy's `enable` is not true -> RESET with
 *    NODERESOURCE_MSG_DISABLED.
 * 2. Degraded: no NodeMetric, no parsable status.updateTime, now > updateTime + degradeTimeMinutes
 *    (strictly after: exactly at the boundary is fresh), or status.nodeMetric not an object ->
 *    RESET with NODERESOURCE_MSG_DEGRADED. Not upstream: while now <= not_before_ms +
 *    degradeTimeMinutes, a degraded node gets KEEP (NODERESOURCE_MSG_GRACE) instead. After a
 *    restart or failover the in-memory NodeMetrics are empty until agents push again; the grace
 *    makes recovery fit inside the health judgment window (seed 001, DESIGN.md 3.1) instead of
 *    stripping every node's batch resources.
 * 3. Otherwise SET with the formulas above. Pods: only phase Running or Pending count
 *    (terminating ones too); LP pods (koord-batch, koord-free) are skipped. An HP pod adds its
 *    request to HPReq; it is matched to status.podsMetric[] by namespace/name (the last entry
 *    wins for a repeated key, as upstream's map does). Without a metric its request is added to
 *    HPUsed and nothing to HPMaxUR (upstream quirk, kept). With metric usage u: QoS LSE adds
 *    {cpu: request.cpu, memory: u.memory} to HPUsed (LSE cpu is not reclaimed), others add u;
 *    both add max(request, u) to HPMaxUR. Metrics whose key no Running/Pending pod (of any
 *    priority) has are dangling: skipped when their `priority` is koord-batch or koord-free,
 *    else their usage is added to HPUsed and HPMaxUR. Host applications count into SysUsed when
 *    their priority's default value exceeds 5500 (koord-prod, koord-mid).
 *    The reservation annotation gives `resources`, with cpu replaced by the number of CPUs of
 *    `reservedCPUs` (a Linux cpulist, parsed like k8s cpuset.Parse) when that is non-empty; an
 *    annotation that is not valid JSON of that shape, has an unparsable quantity or cpulist, is
 *    ignored whole (as upstream's json.Unmarshal failure is).
 *    Malformed input is never fatal: a quantity that does not parse, or whose value in milli-cores
 *    or bytes is beyond int64, counts as absent (zero) in pods, metrics and the node. Percent
 *    fields are read as numbers and truncated to integers. Not upstream: a negative result of the
 *    threshold caps (a negative percent from an unvalidated node annotation) is written as 0, as
 *    the API server refuses negative quantities in a Node status.
 *
 * Returns 0 and fills *ret; -ENOMEM; -ERANGE when a sum leaves the exact range (more than 2^63
 * milli-cores or bytes, impossible with real objects), *ret then untouched. Upstream logs a
 * failed calculation and removes the resources: a caller that wants the same passes a RESET
 * result to noderesource_batch_prepare_status(). in, in->node and in->strategy must not be NULL.
 */
int noderesource_batch_calculate(const struct noderesource_batch_input *in,
                                 struct noderesource_batch *ret);

/*
 * The Node `status` to PUT for res (4.4 "Prepare", items 1, 2, 3, 5): a deep copy of
 * node.status (an empty object when the Node has none) where
 *  - SET: batch-cpu (DecimalSI, the milli-core count as an integer: 8000 prints "8k", 11700
 *    "11700") and batch-memory (bytes, in the format of status.capacity.memory, BinarySI when
 *    absent) are written into both status.capacity and status.allocatable (created when missing).
 *    If cpu_ratio > 1.0 (the CPU-normalization ratio the same reconcile produced, item 2; pass 1.0
 *    for none), batch-cpu := int(batch-cpu x 1000 x ratio) milli of a unit, rounded up to a whole
 *    unit. Then, if annotation node.koordinator.sh/thirdPartyAllocations parses, the resources of
 *    its koord-batch entries are subtracted from both values, floor 0 (item 5); an annotation that
 *    does not parse is ignored (upstream returns the error and writes the unsubtracted values);
 *    cpu and memory are then written DecimalSI and BinarySI as upstream does there, rounded up
 *    to whole units;
 *  - RESET: both resources are deleted from status.capacity and status.allocatable;
 *  - KEEP: nothing is changed.
 * Item 4, the node.koordinator.sh/originExtendedAllocatable annotation, is not produced: upstream
 * writes it only through the metadata merge-patch of NeedSyncMeta plugins, which this controller
 * does not send; the status PUT never carries annotations.
 *
 * Returns 0 with *ret_status a new tree (cJSON_Delete() it), or -ENOMEM (*ret_status untouched).
 * node and res must not be NULL.
 */
int noderesource_batch_prepare_status(const cJSON *node, const struct noderesource_batch *res,
                                      double cpu_ratio, cJSON **ret_status);

/*
 * upstream IsResourceDiff on status.allocatable for both batch resources (4.2): for each, presence
 * differs -> diff; both absent -> none; else diff iff |new - old| > old x threshold, strictly,
 * with cpu compared in milli-units of the batch-cpu quantity and memory in bytes. old_status is
 * the cached Node's status (the last written values), new_status the prepared one; either may be
 * NULL (no allocatable). A value that does not parse counts as present and 0.
 */
bool noderesource_batch_is_diff(const cJSON *old_status, const cJSON *new_status, double threshold);

/*
 * The time rule of 4.2 step 5b: true when no status write was recorded for the node since the
 * process started (last_write_ms == 0) or now_ms - last_write_ms > update_threshold_s seconds.
 */
bool noderesource_status_is_stale(int64_t now_ms, int64_t last_write_ms,
                                  int64_t update_threshold_s);

/*
 * Whether the prepared status must be written, as far as batch resources decide it (4.2 step 5b):
 * noderesource_status_is_stale() with the strategy's updateTimeThresholdSeconds (default 300) or
 * noderesource_batch_is_diff() with its resourceDiffThreshold (default 0.1). The controller ORs
 * this with the other NeedSync plugins (mid resources, devices). strategy as in
 * struct noderesource_batch_input (NULL: defaults).
 */
bool noderesource_batch_needs_sync(const cJSON *old_status, const cJSON *new_status,
                                   const cJSON *strategy, int64_t now_ms, int64_t last_write_ms);

#endif
