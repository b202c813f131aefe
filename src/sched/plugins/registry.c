/* The in-tree registry: a static table, as nginx lists its modules. */
#include "sched/plugins/registry.h"

#include <errno.h>
#include <string.h>

/* Order matters only as ids; the default profile's order is in config/. */
static const struct sched_plugin *const registry[] = {
    &sched_plugin_scheduling_gates,    &sched_plugin_priority_sort,
    &sched_plugin_node_unschedulable,  &sched_plugin_node_name,
    &sched_plugin_taint_toleration,    &sched_plugin_node_affinity,
    &sched_plugin_node_ports,          &sched_plugin_node_resources_fit,
    &sched_plugin_pod_topology_spread, &sched_plugin_inter_pod_affinity,
    &sched_plugin_default_preemption,  &sched_plugin_balanced_allocation,
    &sched_plugin_default_binder,      &sched_plugin_reservation,
    &sched_plugin_load_aware,          &sched_plugin_schedule_admission,
    &sched_plugin_elastic_quota,
};

_Static_assert(sizeof(registry) / sizeof(registry[0]) <= SCHED_MAX_PLUGINS, "too many plugins");

size_t sched_registry_count(void)
{
    return sizeof(registry) / sizeof(registry[0]);
}

const struct sched_plugin *sched_registry_get(int id)
{
    return registry[id];
}

int sched_registry_find(const char *name)
{
    for (size_t i = 0; i < sched_registry_count(); i++)
        if (!strcmp(registry[i]->name, name))
            return (int)i;
    return -ENOENT;
}

/* kube-scheduler 1.30's other in-tree plugins (pkg/scheduler/framework/plugins/names). */
static const char *const upstream_only[] = {
    "VolumeRestrictions", "EBSLimits",  "GCEPDLimits",   "NodeVolumeLimits", "AzureDiskLimits",
    "VolumeBinding",      "VolumeZone", "ImageLocality", "DynamicResources", "CinderLimits",
};

bool sched_registry_is_upstream_only(const char *name)
{
    for (size_t i = 0; i < sizeof(upstream_only) / sizeof(upstream_only[0]); i++)
        if (!strcmp(upstream_only[i], name))
            return true;
    return false;
}
