/* The NodeResourcesFit plugin (skeleton: filled in by its implementation). */
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

const struct sched_plugin sched_plugin_node_resources_fit = {
    .name = "NodeResourcesFit",
    .args_kind = "NodeResourcesFitArgs",
    .default_weight = 1,
};
