/*
 * What the node agent knows about the cluster (upstream koordlet's statesinformer): this node's
 * Node, its pods, its NodeSLO and its NodeMetric, each kept current by an informer narrowed by a
 * field selector to this node (spec.nodeName=<node> for pods, metadata.name=<node> for the
 * rest), so an agent on a node of a 5,000-node cluster holds only its own objects.
 *
 * The NodeMetric is read where the agent reports it: from the manager's NodeMetric API
 * (metrics.koordinator.sh, the default) or from the slo.koordinator.sh CRD through the API
 * server (--report-mode=crd). A manager failover ends that watch; the informer reconnects with a
 * short backoff (at most 2 s) so the agent sees the new leader within seconds.
 *
 * Objects are immutable and refcounted (kube/informer.h): a caller keeps what it got for as
 * long as it likes. Callbacks run on informer threads and must only note the change.
 */
#ifndef KOORD_AGENT_STATES_H
#define KOORD_AGENT_STATES_H

#include <stdbool.h>
#include <stddef.h>

struct kube_client;
struct kube_object;
struct kube_resource;

struct states_opts {
    struct kube_client *client;         /* the API server (borrowed, must outlive states) */
    struct kube_client *metrics_client; /* where NodeMetrics are read; NULL = client */
    const struct kube_resource *nodemetric_resource; /* NULL = kube_res_nodemetrics */
    const char *node;                                /* this node's name (copied) */

    /* Any may be NULL; called on an informer thread after the cache changed. */
    void (*on_pods)(void *userdata);       /* a pod of this node added, changed or deleted */
    void (*on_nodeslo)(void *userdata);    /* the NodeSLO added or changed */
    void (*on_nodemetric)(void *userdata); /* the NodeMetric added or changed (spec, leader) */
    void *userdata;
};

struct states;

/* Starts the four informers. 0, -EINVAL (no client or node), -ENOMEM, -errno of a thread. */
int states_start(const struct states_opts *opts, struct states **ret);

/* Until the Node and pod informers have listed once (the NodeSLO and NodeMetric may not exist
 * yet), or timeout_ms passed: whether they did. */
bool states_wait_synced(struct states *s, long timeout_ms);

/* The pods of this node (new references; kube_objects_free()); returns the count. */
size_t states_pods(struct states *s, struct kube_object ***ret);

/* The pod with this UID (a new reference), or NULL. */
struct kube_object *states_pod_by_uid(struct states *s, const char *uid);

/* The Node, NodeSLO and NodeMetric of this node (new references), or NULL when absent. */
struct kube_object *states_node(struct states *s);
struct kube_object *states_nodeslo(struct states *s);
struct kube_object *states_nodemetric(struct states *s);

/* Stops the informers (idempotent), then frees. NULL is fine. */
void states_stop(struct states *s);
void states_free(struct states *s);

#endif
