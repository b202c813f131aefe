/* The TaintToleration plugin (skeleton: filled in by its implementation). */
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

const struct sched_plugin sched_plugin_taint_toleration = {
    .name = "TaintToleration",
    .args_kind = NULL,
    .default_weight = 3,
};
