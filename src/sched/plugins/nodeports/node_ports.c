/*
 * NodePorts (kube-scheduler plugins/nodeports/node_ports.go, framework/types.go
 * HostPortInfo.CheckConflict; reference scheduler.md 5.3): a pod asking for a host port fits a
 * node only when no pod there already holds the same protocol and port on the same host IP, a
 * wildcard 0.0.0.0 on either side overlapping every IP. Pods without host ports skip the filter.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "sched/framework/framework.h"
#include "sched/plugins/registry.h"

#define ALL_IPS "0.0.0.0"

/* PreFilter's state: the pod's host ports (those with port > 0), copied. */
struct np_state {
    struct sched_host_port *v;
    size_t n;
};

static void np_state_free(void *data)
{
    struct np_state *s = data;

    if (!s)
        return;
    free(s->v);
    free(s);
}

static const struct sched_state_type np_state_type = {
    .name = "PreFilterNodePorts",
    .free = np_state_free,
    .clone = NULL, /* read-only after PreFilter */
};

static enum sched_code np_pre_filter(void *self, struct sched_cycle *cs,
                                     const struct sched_pod *pod,
                                     struct sched_prefilter_result *res, struct sched_status *st)
{
    struct np_state *s;

    (void)self;
    (void)res;
    (void)st;
    s = xcalloc(1, sizeof(*s));
    if (pod->nports)
        s->v = xcalloc(pod->nports, sizeof(*s->v));
    for (size_t i = 0; i < pod->nports; i++)
        if (pod->ports[i].port > 0)
            s->v[s->n++] = pod->ports[i];
    if (s->n == 0) {
        np_state_free(s);
        return SCHED_SKIP;
    }
    sched_cycle_write(cs, &np_state_type, s);
    return SCHED_SUCCESS;
}

static bool is_all_ips(const char *ip)
{
    return !ip[0] || !strcmp(ip, ALL_IPS);
}

/* HostPortInfo.CheckConflict for one wanted port against the node's used ports. */
static bool port_conflicts(const struct sched_host_port *want, const struct sched_node_info *ni)
{
    if (want->port <= 0)
        return false;
    for (size_t i = 0; i < ni->nports; i++) {
        const struct sched_port_use *u = &ni->ports[i];
        if (u->port != want->port || u->protocol != want->protocol)
            continue;
        if (is_all_ips(want->ip) || is_all_ips(u->ip) || !strcmp(want->ip, u->ip))
            return true;
    }
    return false;
}

static enum sched_code np_filter(void *self, struct sched_cycle *cs, const struct sched_pod *pod,
                                 const struct sched_node_info *ni, struct sched_status *st)
{
    const struct np_state *s = sched_cycle_read(cs, &np_state_type);
    /* Without PreFilter's state (PreFilter disabled) the pod's own list serves. */
    const struct sched_host_port *want = s ? s->v : pod->ports;
    size_t n = s ? s->n : pod->nports;

    (void)self;
    for (size_t i = 0; i < n; i++)
        if (port_conflicts(&want[i], ni))
            return sched_status_set(st, SCHED_UNSCHEDULABLE,
                                    "node(s) didn't have free ports for the requested pod ports");
    return SCHED_SUCCESS;
}

static const struct sched_event_reg np_events[] = {
    {"Pod", SCHED_ACT_DELETE},
    {"Node", SCHED_ACT_ADD | SCHED_ACT_UPDATE},
    {NULL, 0},
};

const struct sched_plugin sched_plugin_node_ports = {
    .name = "NodePorts",
    .args_kind = NULL,
    .default_weight = 0,
    .events = np_events,
    .pre_filter = np_pre_filter,
    .filter = np_filter,
};
