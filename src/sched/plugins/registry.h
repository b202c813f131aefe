/*
 * The in-tree plugin registry (kube-scheduler pkg/scheduler/framework/plugins/registry.go
 * NewInTreeRegistry): every plugin koord scheduler can run, by name. A plugin's id is its index
 * in the table; ids fit in 64 bits of a mask (the queue records rejecting plugins that way).
 * Koordinator's plugins (LoadAwareScheduling, Reservation, ElasticQuota) are added here the
 * same way.
 */
#ifndef KOORD_SCHED_PLUGINS_REGISTRY_H
#define KOORD_SCHED_PLUGINS_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "sched/framework/framework.h"

#define SCHED_MAX_PLUGINS 64

extern const struct sched_plugin sched_plugin_scheduling_gates, sched_plugin_priority_sort,
    sched_plugin_node_unschedulable, sched_plugin_node_name, sched_plugin_taint_toleration,
    sched_plugin_node_affinity, sched_plugin_node_ports, sched_plugin_node_resources_fit,
    sched_plugin_balanced_allocation, sched_plugin_pod_topology_spread,
    sched_plugin_inter_pod_affinity, sched_plugin_default_preemption, sched_plugin_default_binder;
/* Koordinator's plugins. */
extern const struct sched_plugin sched_plugin_reservation, sched_plugin_load_aware,
    sched_plugin_schedule_admission, sched_plugin_elastic_quota;

/* The number of registered plugins. */
size_t sched_registry_count(void);
/* The plugin of id (0 <= id < count). */
const struct sched_plugin *sched_registry_get(int id);
/* The id of a plugin name, or -ENOENT. */
int sched_registry_find(const char *name);
/*
 * Whether name is a plugin of upstream kube-scheduler koord does not implement (volume plugins,
 * ImageLocality, DynamicResources): configurations may disable them; enabling one is an error
 * that says so.
 */
bool sched_registry_is_upstream_only(const char *name);

#endif
