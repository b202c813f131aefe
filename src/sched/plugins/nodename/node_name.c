/*
 * NodeName (kube-scheduler plugins/nodename/node_name.go, reference scheduler.md 5.3): a pod
 * that already names its node (spec.nodeName) fits only that node.
 */
#include <string.h>

#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

static enum sched_code node_name_filter(void *self, struct sched_cycle *cs,
                                        const struct sched_pod *pod,
                                        const struct sched_node_info *ni, struct sched_status *st)
{
    (void)self;
    (void)cs;
    if (!ni->node)
        return sched_status_set(st, SCHED_ERROR, "node not found");
    if (!pod->node_name || !pod->node_name[0] || !strcmp(pod->node_name, ni->node->name))
        return SCHED_SUCCESS;
    return sched_status_set(st, SCHED_UNRESOLVABLE, "node(s) didn't match the requested node name");
}

static const struct sched_event_reg node_name_events[] = {
    {"Node", SCHED_ACT_ADD | SCHED_ACT_UPDATE},
    {NULL, 0},
};

const struct sched_plugin sched_plugin_node_name = {
    .name = "NodeName",
    .args_kind = NULL,
    .default_weight = 0,
    .events = node_name_events,
    .filter = node_name_filter,
};
