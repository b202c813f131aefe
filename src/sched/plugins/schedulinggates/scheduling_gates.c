/* The SchedulingGates plugin (skeleton: filled in by its implementation). */
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

const struct sched_plugin sched_plugin_scheduling_gates = {
    .name = "SchedulingGates",
    .args_kind = NULL,
    .default_weight = 0,
};
