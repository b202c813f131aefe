/*
 * PrioritySort (kube-scheduler plugins/queuesort/priority_sort.go, reference scheduler.md 5.8):
 * activeQ's order. Higher spec.priority first; among equals the pod queued earlier (its queue
 * timestamp, not its creation time) first.
 */
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

static bool priority_sort_less(void *self, const struct sched_pod *a, double ta,
                               const struct sched_pod *b, double tb)
{
    (void)self;
    return a->priority > b->priority || (a->priority == b->priority && ta < tb);
}

/* No events: like upstream, the plugin does not implement EnqueueExtensions (NULL = all). */
const struct sched_plugin sched_plugin_priority_sort = {
    .name = "PrioritySort",
    .args_kind = NULL,
    .default_weight = 0,
    .less = priority_sort_less,
};
