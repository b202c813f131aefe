/* The InterPodAffinity plugin (skeleton: filled in by its implementation). */
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

const struct sched_plugin sched_plugin_inter_pod_affinity = {
    .name = "InterPodAffinity",
    .args_kind = "InterPodAffinityArgs",
    .default_weight = 2,
};
