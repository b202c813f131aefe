/*
 * Batch resources on the node (runtime hook BatchResource; reference koordlet-and-scheduler.md
 * 3.9 first bullet; upstream runtimehooks/hooks/batchresource/): cpu.shares, cpu.cfs_quota_us and
 * memory.limit_in_bytes of BE pods and their containers from their batch-cpu / batch-memory
 * requests and limits (which upstream reads from the annotation
 * node.koordinator.sh/extended-resource-spec because CRI requests lack extended resources; the
 * caller fills struct qos_container from whichever source it has). Only pods labelled BE are
 * concerned (qos_batch_applies()); other pods keep their kubelet values.
 */
#ifndef KOORD_AGENT_QOS_BATCHRESOURCE_H
#define KOORD_AGENT_QOS_BATCHRESOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/qos/qos.h"

#define QOS_CPU_SHARES_MIN 2
#define QOS_CPU_SHARES_MAX 262144
#define QOS_CFS_QUOTA_MIN  1000
#define QOS_UNLIMITED      (-1)

/* Whether the hook sets the pod's values: its QoS label is BE. */
bool qos_batch_applies(const struct qos_pod *p);

struct qos_batch_values {
    int64_t cpu_shares;   /* cpu.shares (v2: cpu.weight, converted by the writer) */
    int64_t cfs_quota;    /* cpu.cfs_quota_us, -1 unlimited */
    int64_t memory_limit; /* memory.limit_in_bytes, -1 unlimited */
};

/*
 * Node-side settings the quota depends on: normalization_ratio is the node's CPU normalization
 * ratio (annotation node.koordinator.sh/cpu-normalization-ratio; <= 1 or unknown: none), and
 * suppress_cfs_quota is true when the node's CPU suppress policy is cfsQuota (the BestEffort
 * QoS-level quota governs, so pods and containers get -1).
 */
struct qos_batch_node {
    double normalization_ratio;
    bool suppress_cfs_quota;
};

/*
 * Pod level:
 *   cpu.shares = clamp(sum of batch-cpu requests (<= 0 skipped) x 1024 / 1000, 2, 262144)
 *   cfs quota  = -1 when suppress_cfs_quota or any container's batch-cpu limit is unset;
 *                else sum x 100, at least 1000, then divided by the normalization ratio when it
 *                is above 1 (int64 of the float quotient; the reference's order: minimum first)
 *   memory     = -1 when any container's batch-memory limit is unset, else the sum.
 */
void qos_batch_pod(const struct qos_pod *p, const struct qos_batch_node *node,
                   struct qos_batch_values *ret);

/* Container level: the same on the container's own request and limits. */
void qos_batch_container(const struct qos_container *c, const struct qos_batch_node *node,
                         struct qos_batch_values *ret);

#endif
