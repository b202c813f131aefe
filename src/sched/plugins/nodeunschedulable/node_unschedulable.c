/*
 * NodeUnschedulable (kube-scheduler plugins/nodeunschedulable/node_unschedulable.go, reference
 * scheduler.md 5.3): a cordoned node (spec.unschedulable) takes only pods that tolerate the
 * node.kubernetes.io/unschedulable:NoSchedule taint (DaemonSet pods do).
 */
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

static enum sched_code node_unschedulable_filter(void *self, struct sched_cycle *cs,
                                                 const struct sched_pod *pod,
                                                 const struct sched_node_info *ni,
                                                 struct sched_status *st)
{
    /* The taint the pod must tolerate; fields are not written through. */
    static const struct sched_taint unschedulable = {
        .key = (char *)"node.kubernetes.io/unschedulable",
        .value = (char *)"",
        .effect = SCHED_EFFECT_NO_SCHEDULE,
    };

    (void)self;
    (void)cs;
    if (!ni->node)
        return sched_status_set(st, SCHED_ERROR, "node not found");
    if (!ni->unschedulable || sched_pod_tolerates(pod, &unschedulable))
        return SCHED_SUCCESS;
    return sched_status_set(st, SCHED_UNRESOLVABLE, "node(s) were unschedulable");
}

static const struct sched_event_reg node_unschedulable_events[] = {
    {"Node", SCHED_ACT_ADD | SCHED_ACT_UPDATE},
    {NULL, 0},
};

const struct sched_plugin sched_plugin_node_unschedulable = {
    .name = "NodeUnschedulable",
    .args_kind = NULL,
    .default_weight = 0,
    .events = node_unschedulable_events,
    .filter = node_unschedulable_filter,
};
