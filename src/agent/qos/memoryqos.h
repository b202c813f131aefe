/*
 * Memory QoS (strategy CgroupReconcile; reference koordlet-and-scheduler.md 3.5; upstream
 * qosmanager/plugins/cgreconcile/cgroup_reconcile.go): memcg protection and throttling values
 * (memory.min/low/high), the Anolis watermark and OOM-priority files, per container, per pod and
 * per kube-QoS directory.
 *
 * The values are written with the leveled update of the resource executor (min, low and high
 * only ever raised on the way down the hierarchy, final values on the way up): the caller
 * passes QoS-level, pod-level and container-level results to that writer in this order.
 * Disabled classes already carry the neutral values (nodeslo.h), which are written too.
 */
#ifndef KOORD_AGENT_QOS_MEMORYQOS_H
#define KOORD_AGENT_QOS_MEMORYQOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/qos/nodeslo.h"
#include "agent/qos/qos.h"

/* memory.high "max": writing MaxInt64 means max. */
#define QOS_MEMORY_HIGH_MAX INT64_MAX

enum qos_memcg_field {
    QOS_MEMCG_MIN,                /* memory.min */
    QOS_MEMCG_LOW,                /* memory.low */
    QOS_MEMCG_HIGH,               /* memory.high */
    QOS_MEMCG_WMARK_RATIO,        /* memory.wmark_ratio */
    QOS_MEMCG_WMARK_SCALE_FACTOR, /* memory.wmark_scale_factor */
    QOS_MEMCG_WMARK_MIN_ADJ,      /* memory.wmark_min_adj */
    QOS_MEMCG_PRIORITY,           /* memory.priority */
    QOS_MEMCG_USE_PRIORITY_OOM,   /* memory.use_priority_oom */
    QOS_MEMCG_OOM_GROUP,          /* memory.oom.group */
    QOS_MEMCG_PAGECACHE_ENABLE,   /* memory.pagecache_limit.enable (Anolis) */
    QOS_MEMCG_PAGECACHE_SIZE,     /* memory.pagecache_limit.size */
    QOS_MEMCG_PAGECACHE_SYNC,     /* memory.pagecache_limit.sync */
    QOS_MEMCG_COUNT,
};

/* The file name of a field ("memory.min"). */
const char *qos_memcg_file(enum qos_memcg_field f);

/* min, low and high are hierarchical: the leveled writer may only raise them top-down. */
bool qos_memcg_mergeable(enum qos_memcg_field f);

/* Values for one cgroup; a field is written only when its bit (1u << field) is in set. */
struct qos_memcg {
    uint32_t set;
    int64_t v[QOS_MEMCG_COUNT];
};

/* The pod annotation koordinator.sh/memoryQOS policy. */
enum qos_memqos_policy {
    QOS_MEMQOS_POLICY_DEFAULT, /* "default", "" or unknown: the node's class config */
    QOS_MEMQOS_POLICY_NONE,    /* all neutral */
    QOS_MEMQOS_POLICY_AUTO,    /* the recommended defaults of the pod's class */
};

/*
 * The class config a pod follows: QoS with default LSE and LSR -> lsrClass, LS -> lsClass,
 * BE -> beClass, SYSTEM -> systemClass; NULL for a pod without a QoS class (it gets nothing).
 */
const struct qos_class_config *qos_memqos_class(const struct qos_resource_qos *node,
                                                const struct qos_pod *p);

/*
 * The pod's memory QoS config: its class's node values, replaced by the neutral values
 * (enable false) under policy none or by the class's recommended values under policy auto (min
 * 0 %, low 0 %, throttling 0 %, wmarkRatio 95, wmarkScalePermill 20, wmarkMinAdj -25 for
 * LSR/LS and 50 for BE; SYSTEM 0, 50, 0), then, unless the policy is none, the annotation's
 * fields merged over. Returns 0; -ENOENT for a pod without a class (*ret untouched); -EINVAL
 * when the annotation does not decode (it is then ignored: *ret is the node values), -ENOMEM
 * (likewise).
 */
int qos_memqos_pod_config(const struct qos_resource_qos *node, const struct qos_pod *p,
                          struct qos_memory_qos *ret);

/*
 * Container level. req and lim are the container's memory request and limit, or its
 * batch-memory ones for a pod labelled BE; unset counts 0.
 *   min  = req x minLimitPercent / 100
 *   low  = req x lowLimitPercent / 100, raised to min when 0 < low < min
 *   high = MaxInt64 ("max") when throttlingPercent is 0; else
 *          floor((req + (L - req) x throttlingPercent / 100) / page_size) x page_size with
 *          L = lim when lim > 0, node allocatable memory otherwise; raised to min when
 *          0 < high < min
 *   wmark_ratio, wmark_scale_factor, wmark_min_adj, priority, use_priority_oom
 *   (priorityEnable), oom.group from the config. (Integer arithmetic, as upstream's int64.)
 */
void qos_memqos_container(const struct qos_memory_qos *cfg, const struct qos_pod *p,
                          const struct qos_container *c, int64_t node_allocatable_memory,
                          int64_t page_size, struct qos_memcg *ret);

/*
 * Pod level: min and low from the pod request (memory with init containers and overhead; for a
 * pod labelled BE the sum of its containers' batch-memory requests, unset ones skipped), low
 * raised to min as above, and the watermark and OOM fields. No memory.high.
 *
 * Page cache (Anolis; the reference leaves the details open, chosen here): when
 * pageCacheEnable, enable = 1, sync = pageCacheReclaimSync, and size = pageCacheLimitSize
 * capped at the pod limit when that size is > 0, else podLimit x pageCacheLimitPercent / 100
 * when both are > 0 (no size otherwise). The pod limit is the sum of the containers' memory
 * limits (batch-memory for BE), unlimited when any container has none. When pageCacheEnable is
 * false only enable = 0 is written.
 */
void qos_memqos_pod(const struct qos_memory_qos *cfg, const struct qos_pod *p,
                    struct qos_memcg *ret);

/* The three kube-QoS directories (the kube root is the Guaranteed level). */
struct qos_memqos_kube {
    struct qos_memcg guaranteed;
    struct qos_memcg burstable;
    struct qos_memcg besteffort;
};

/*
 * QoS level: the Burstable and BestEffort directories get the sums of their active pods'
 * pod-level min and low (each pod with its own merged config; pods without a class or a kube
 * class are left out); the kube root gets the sums over all three kube classes; a directory
 * without pods gets no min/low unless it is the root and some pod counted. Every directory gets
 * priority, use_priority_oom and oom.group from the node class mapped Guaranteed -> LSR,
 * Burstable -> LS, BestEffort -> BE.
 */
void qos_memqos_kube_level(const struct qos_resource_qos *node, const struct qos_pod *pods,
                           size_t npods, struct qos_memqos_kube *ret);

#endif
