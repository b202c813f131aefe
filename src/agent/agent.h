/*
 * koord agent: the node agent (upstream koordlet), wired from its parts:
 *
 *   states (informers: this node's Node, pods, NodeSLO, NodeMetric)
 *     -> collect (every collect interval: /proc and cgroups -> metriccache)
 *     -> report  (every reportIntervalSeconds: metriccache -> NodeMetric status -> manager)
 *     -> qos     (every second: NodeSLO + metriccache -> cgroup writes, evictions through the
 *                 Eviction API with an Event on the pod; qos/runner.h)
 *
 * plus a small HTTP port for /healthz and /metrics. One collection thread runs the rounds (and
 * the cache's garbage collection); the reporter has its own thread; informers have theirs.
 *
 * A report is sent at once when the NodeMetric informer sees a different object than before (a
 * new leader's, after a manager restart or failover: its uid changes), so the node's metrics
 * are back on the new leader within seconds rather than one report interval later.
 */
#ifndef KOORD_AGENT_AGENT_H
#define KOORD_AGENT_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/cgroup/cgroup.h"

struct kube_client;
struct kube_resource;

struct agent_opts {
    const char *node;                   /* this node's name */
    struct kube_client *client;         /* the API server (borrowed) */
    struct kube_client *metrics_client; /* where NodeMetrics are read and written (borrowed):
                                           the manager, or the API server in CRD mode */
    bool crd_mode;                      /* report to slo.koordinator.sh NodeMetric (upstream) */

    struct cg_layout layout;  /* roots, cgroup version and driver (detected by the caller) */
    long collect_interval_ms; /* 0 = 1000 */
    long jiffy_hz;            /* 0 = sysconf(_SC_CLK_TCK) */

    /* QoS enforcement (qos/runner.h) */
    bool qos_off;          /* collect and report only */
    bool qos_features_set; /* qos_features holds the gates; else QOS_RUNNER_F_DEFAULT */
    uint32_t qos_features; /* enum qos_runner_features bits; 0 = every gate off */
    bool dry_run;          /* log cgroup writes instead of doing them */
    /* How often the QoS strategies run (qos_runner_opts); 0 = 1000 each. */
    long reconcile_interval_ms, cpu_suppress_interval_ms, memory_evict_interval_ms;
    long cpu_evict_interval_ms;
    bool kubelet_cpu_policy_static; /* kubelet --cpu-manager-policy=static */

    const char *host; /* /healthz and /metrics (plain HTTP); NULL = no port */
    uint16_t port;    /* 0 = any */
};

struct agent;

/* Starts everything. 0, -EINVAL (bad options), -EADDRINUSE, -errno. */
int agent_start(const struct agent_opts *opts, struct agent **ret);

/* The bound HTTP port (0 without one). */
uint16_t agent_port(const struct agent *a);

/* Stops every thread (a report in flight finishes or times out) and frees. NULL is fine. */
void agent_stop(struct agent *a);

#endif
