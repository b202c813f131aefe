/*
 * SchedulingGates (KEP-3521; kube-scheduler 1.30 plugins/schedulinggates/scheduling_gates.go,
 * reference scheduler.md 3.6): a PreEnqueue plugin that keeps a pod with spec.schedulingGates out
 * of activeQ. The queue parks it as "gated"; only the pod's own Update (removing the last gate)
 * lets it in again, so the plugin registers no cluster events.
 */
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

static enum sched_code gates_pre_enqueue(void *self, const struct sched_pod *pod,
                                         struct sched_status *st)
{
    (void)self;
    if (pod->ngates == 0)
        return SCHED_SUCCESS;
    /* Go prints the []string of gate names with %v: "[g1 g2]". */
    return sched_status_set(st, SCHED_UNRESOLVABLE, "waiting for scheduling gates: [%s]",
                            pod->gates ? pod->gates : "");
}

/* 1.30 returns an empty list: no cluster event can ungate a pod. */
static const struct sched_event_reg gates_events[] = {{NULL, 0}};

const struct sched_plugin sched_plugin_scheduling_gates = {
    .name = "SchedulingGates",
    .args_kind = NULL,
    .default_weight = 0,
    .events = gates_events,
    .pre_enqueue = gates_pre_enqueue,
};
