/*
 * The NodeMetric status the agent reports (reference koordlet-and-scheduler.md 2.5), built from
 * the metric cache exactly as upstream's koordlet builds it:
 *
 *   updateTime           now
 *   nodeMetric.nodeUsage avg over [now - aggregate, now] of node_cpu_usage and of the memory
 *                        metric nodeMemoryCollectPolicy names
 *   aggregatedNodeUsages for each policy duration D, avg/p50/p90/p95/p99 over [now - D, now];
 *                        a duration whose samples cover less than D/2 is left out (upstream
 *                        appends an empty entry; an absent one says the same to every consumer
 *                        that looks entries up by duration, and does not read as a zero usage)
 *   systemUsage, aggregatedSystemUsages  the same over sys_cpu_usage / sys_memory_usage
 *   podsMetric           for each pod with samples in the aggregate window, sorted by
 *                        namespace/name: namespace, name, priority and qos "with default", and
 *                        podUsage avg cpu/memory
 *
 * Quantities as upstream writes them: cpu NewMilliQuantity(int64(cores*1000), DecimalSI) ("7340m",
 * "2"), memory NewQuantity(int64(bytes), BinarySI) ("41Gi", "44040192001").
 */
#ifndef KOORD_AGENT_REPORT_STATUS_H
#define KOORD_AGENT_REPORT_STATUS_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/report/policy.h"
#include "api/pod.h"

struct mc;
struct mc_scratch;

/* A pod of this node, as the report names it. Strings borrowed. */
struct report_pod {
    const char *uid;
    const char *ns;
    const char *name;
    enum api_qos qos;
    enum api_priority priority;
};

/*
 * The status at now_ms (wall clock, ms since the epoch), or NULL when the node has no sample in
 * the aggregate window yet (nothing worth sending). scratch is the caller's reusable buffer.
 */
cJSON *report_build_status(struct mc *mc, const struct report_policy *policy,
                           const struct report_pod *pods, size_t npods, int64_t now_ms,
                           struct mc_scratch *scratch);

#endif
