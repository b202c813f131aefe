/* The NodeResourcesBalancedAllocation plugin (skeleton: filled in by its implementation). */
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

const struct sched_plugin sched_plugin_balanced_allocation = {
    .name = "NodeResourcesBalancedAllocation",
    .args_kind = "NodeResourcesBalancedAllocationArgs",
    .default_weight = 1,
};
