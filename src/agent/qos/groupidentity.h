/*
 * Group identity (runtime hook GroupIdentity; reference koordlet-and-scheduler.md 3.8;
 * upstream runtimehooks/hooks/groupidentity/): the cpu.bvt_warp_ns value of each cgroup level.
 * Values are in [-1, 2] (the checked writer validates); a class contributes its groupIdentity
 * only when resourceQOSStrategy.policies.cpuPolicy is groupIdentity and its cpuQOS.enable is
 * true, otherwise 0.
 *
 * Before writing any bvt value the caller sets /proc/sys/kernel/sched_core to 0 (core scheduling
 * excludes bvt -1) and /proc/sys/kernel/sched_group_identity_enabled to 1, where those exist.
 */
#ifndef KOORD_AGENT_QOS_GROUPIDENTITY_H
#define KOORD_AGENT_QOS_GROUPIDENTITY_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/qos/nodeslo.h"
#include "agent/qos/qos.h"

#define QOS_BVT_MIN (-1)
#define QOS_BVT_MAX 2

/* Whether the node's CPU QoS policy is group identity (the hook's rule is enabled). */
bool qos_gi_enabled(const struct qos_resource_qos *cfg);

/*
 * Whether the hook's rule is enabled (upstream bvtRule.enable): the policy is groupIdentity and
 * the cpuQOS of LSR, LS or BE is enabled. Only then does the caller turn the kernel's group
 * identity on (the sysctls above); the bvt values are written either way (0 when disabled).
 */
bool qos_gi_rule_enabled(const struct qos_resource_qos *cfg);

/* A class's bvt value: its groupIdentity when the policy is groupIdentity and the class's
 * cpuQOS is enabled, else 0. */
int64_t qos_gi_class_value(const struct qos_resource_qos *cfg, enum qos_class c);

/* The kube-QoS directories: the kube root (Guaranteed level) is always 0. */
struct qos_gi_kube {
    int64_t root;
    int64_t burstable;  /* LS value */
    int64_t besteffort; /* BE value */
};

void qos_gi_kube_values(const struct qos_resource_qos *cfg, struct qos_gi_kube *ret);

/*
 * A pod's value (its containers get the same):
 *  - QoS label LSE or LSR: the LSR value; LS: the LS value; BE: the BE value; SYSTEM: the
 *    SYSTEM class value (the reference's table lists no SYSTEM row; systemClass is used);
 *  - no QoS label: kube Guaranteed -> the LSR value if LSR's cpuQOS is enabled, else the LS
 *    value; Burstable -> LS; BestEffort -> BE; no kube class -> 0;
 *  - pods labelled LS (the label, chosen: the reference says "LS pods") may override with
 *    annotation koordinator.sh/cpuQOS: enable not true -> 0, else its groupIdentity; an
 *    annotation that does not decode, lacks groupIdentity or holds one outside [-1, 2] is
 *    ignored. The override applies only under the groupIdentity policy.
 */
int64_t qos_gi_pod_value(const struct qos_resource_qos *cfg, const struct qos_pod *p);

#endif
