/* The DefaultPreemption plugin (skeleton: filled in by its implementation). */
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

const struct sched_plugin sched_plugin_default_preemption = {
    .name = "DefaultPreemption",
    .args_kind = "DefaultPreemptionArgs",
    .default_weight = 0,
};
