/* The PrioritySort plugin (skeleton: filled in by its implementation). */
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

const struct sched_plugin sched_plugin_priority_sort = {
    .name = "PrioritySort",
    .args_kind = NULL,
    .default_weight = 0,
};
