/* The NodeAffinity plugin (skeleton: filled in by its implementation). */
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

const struct sched_plugin sched_plugin_node_affinity = {
    .name = "NodeAffinity",
    .args_kind = "NodeAffinityArgs",
    .default_weight = 2,
};
