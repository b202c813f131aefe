/* The PodTopologySpread plugin (skeleton: filled in by its implementation). */
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

const struct sched_plugin sched_plugin_pod_topology_spread = {
    .name = "PodTopologySpread",
    .args_kind = "PodTopologySpreadArgs",
    .default_weight = 2,
};
