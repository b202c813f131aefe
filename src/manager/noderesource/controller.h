/*
 * The NodeResource controller (manager-behaviour.md 4.1-4.4, batch resources): for every Node,
 * from its NodeMetric (the manager's in-memory API), the Pods bound to it and its colocation
 * strategy, compute kubernetes.io/batch-cpu and kubernetes.io/batch-memory (batch.h) and write
 * them into the Node's status.capacity and status.allocatable with a full `nodes/status` PUT,
 * only when they moved by more than resourceDiffThreshold or updateTimeThresholdSeconds has
 * passed since this process last wrote them; remove them when colocation is off or the node's
 * metrics are older than degradeTimeMinutes.
 *
 * Which report: the in-memory NodeMetric, or, when the manager keeps the slo.koordinator.sh
 * objects (nodemetric/crd.h), the status an agent in crd mode (upstream's koordlet, which
 * reports only that way) wrote there, whichever has the later status.updateTime (the in-memory
 * one on a tie, and when neither has one). Both are the same NodeMetric status, so the one
 * chosen is the same input to the same calculation.
 *
 * Triggers: Node and Pod informer events, every NodeMetric report (either kind), and
 * configuration changes (the manager enqueues those); each node is also rechecked one degrade
 * window after its last reconcile, so a node whose agent falls silent loses its batch resources
 * without any event. After becoming leader nothing is degraded before a full window has passed
 * (seed 001: restart recovery must fit inside the health judgment time).
 */
#ifndef KOORD_MANAGER_NODERESOURCE_CONTROLLER_H
#define KOORD_MANAGER_NODERESOURCE_CONTROLLER_H

#include <stdint.h>

struct kube_client;
struct kube_object;
struct nodemetric_crd_watch;
struct nodemetric_server;
struct nodeslo_controller;

struct noderesource_opts {
    struct nodeslo_controller *slo;        /* the colocation strategy of each node (borrowed) */
    struct nodemetric_server *nodemetrics; /* where NodeMetrics are read (borrowed) */
    struct nodemetric_crd_watch *crd;      /* and the slo.koordinator.sh ones; NULL = none */
    unsigned workers;                      /* 0 = 2 */
    /* The length of one of degradeTimeMinutes' minutes, in ms; 0 = 60000. Tests only. */
    long degrade_scale_ms;
};

struct noderesource_controller;

int noderesource_controller_new(struct kube_client *c, const struct noderesource_opts *opts,
                                struct noderesource_controller **ret);

/*
 * Adds handler sets (copied; either may be NULL) to the controller's Node and Pod informers,
 * so another part of the manager (the dashboard, ui.h) follows the same watches instead of
 * opening its own. Before start only: 0 or -EBUSY.
 */
struct kube_handlers;
int noderesource_controller_add_handlers(struct noderesource_controller *c,
                                         const struct kube_handlers *nodes,
                                         const struct kube_handlers *pods);

/* Starts informers and workers; not_before_ms (Unix ms) is when this process became leader.
 * 0 or -errno. Once per controller. */
int noderesource_controller_start(struct noderesource_controller *c, int64_t not_before_ms);

/* Asks for node to be reconciled (quick; any thread). Ignored before start. */
void noderesource_controller_enqueue(struct noderesource_controller *c, const char *node);

struct noderesource_stats {
    unsigned long reconciles;
    unsigned long errors;
    unsigned long node_writes; /* nodes/status PUTs that succeeded */
    double latency_sum_s;
};
void noderesource_controller_stats(struct noderesource_controller *c,
                                   struct noderesource_stats *ret);

/*
 * The controller's cached Node (key "name") and Pod (key "namespace/name") of the informers it
 * keeps anyway, with a new reference (kube_object_unref), or NULL; empty before start. Any
 * thread. For the manager's metrics.k8s.io API (labels, containers), which so adds no second
 * watch of every Pod.
 */
struct kube_object *noderesource_controller_node(struct noderesource_controller *c,
                                                 const char *name);
struct kube_object *noderesource_controller_pod(struct noderesource_controller *c, const char *key);

/* Drains and joins the workers, stops the informers. NULL is fine; idempotent. */
void noderesource_controller_stop(struct noderesource_controller *c);
void noderesource_controller_free(struct noderesource_controller *c);

#endif
