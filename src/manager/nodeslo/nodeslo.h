/*
 * The NodeSLO controller (upstream pkg/slo-controller/nodeslo; manager-behaviour.md sections
 * 1.5, 1.6 and 2): keeps one slo.koordinator.sh/v1alpha1 NodeSLO per Node whose spec is what
 * the `slo-controller-config` ConfigMap says for that node (src/slo/), and records a Warning
 * Event on the ConfigMap for each key that fails to decode (that key keeps its last good value).
 *
 * Shape (pkg/controller/<name>/ in Kubernetes): three informers (the ConfigMap, selected by a
 * metadata.name field selector in its namespace; Nodes; NodeSLOs) whose handlers only enqueue
 * keys; N workers over a rate-limited workqueue. Keys are node names, plus the ConfigMap's
 * "namespace/name" (never a node name: it has a '/'), whose sync re-reads the ConfigMap from the
 * informer cache, applies it (slo_config_update(), or slo_config_absent() when it does not
 * exist), records the Events and, when the effective config changed, enqueues every node.
 *
 * Triggers (2.1): a Node add or delete; a Node update only when its labels or
 * status.allocatable changed (as upstream: an annotation-only change does not trigger, although
 * the node.koordinator.sh/network-bandwidth and colocation-strategy annotations do affect the
 * rendered spec; they are picked up at the next trigger of that node); a NodeSLO add, delete,
 * or update whose metadata.generation changed (someone edited the spec: it is put back); the
 * ConfigMap's add, update of .data, and delete. Deviation from upstream, which ignores a
 * ConfigMap delete until restart: a delete is the ConfigMap's absence, i.e. the defaults, which
 * is also what a restarted manager would compute.
 *
 * Reconcile of a node (2.2), at most one write: config not yet available -> drop; neither
 * exists -> nothing; Node gone -> delete the NodeSLO; NodeSLO missing -> create {apiVersion,
 * kind, metadata{name}, spec, status{}}; both -> render from the current spec (extensions
 * kept) and PUT only when the canonical JSON of the spec, after the CRD defaults the API server
 * applies, differs. Any error (409 conflicts included) requeues with the per-key backoff;
 * success forgets the key.
 *
 * Thread safety: start/stop/free from one controlling thread (e.g. the leader elector's
 * callbacks); stop may also be called from another thread to cancel a start that waits for the
 * caches. The getters may be called from any thread at any time between new and free.
 */
#ifndef KOORD_MANAGER_NODESLO_NODESLO_H
#define KOORD_MANAGER_NODESLO_NODESLO_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

struct kube_client;
struct kube_object;

struct nodeslo_opts {
    const char *config_namespace; /* NULL = SLO_DEFAULT_NAMESPACE ("koordinator-system") */
    const char *config_name;      /* NULL = SLO_DEFAULT_NAME ("slo-controller-config") */
    unsigned workers;             /* 0 = 1 (upstream) */
    const char *component;        /* Event source.component; NULL = "koord-manager" */
    const char *host;             /* Event source.host; may be NULL */
    long sync_timeout_ms;         /* start() waits this long for the caches; 0 = 60000 */
    long retry_base_ms;           /* first retry delay of a failed key; 0 = 5 (client-go) */
    long retry_max_ms;            /* cap of its doubling; 0 = 1000 s (client-go) */
    /*
     * Called when a node appears (added = true) or disappears, on the Node informer's thread,
     * and after every reconcile of a node (added = whether the Node exists), on a worker
     * thread: so also when the configuration or the node's labels change what its NodeMetric
     * spec should be. Every start lists again, so a node already reported may be reported
     * again; stop reports nothing. Must return quickly and must not call back into this
     * controller (enqueue the name). May be NULL.
     */
    void (*on_node)(void *userdata, const char *node, bool added);
    void *userdata;
};

struct nodeslo_controller;

/* Copies opts (NULL = defaults); the client is borrowed and must outlive the controller.
 * Nothing runs until start. 0 or -EINVAL (a name that cannot be a field selector value). */
int nodeslo_controller_new(struct kube_client *c, const struct nodeslo_opts *opts,
                           struct nodeslo_controller **ret);

/*
 * Starts the informers, waits until all three listed (up to sync_timeout_ms), reads the
 * ConfigMap into a fresh config (as at process start: absent means defaults), then starts the
 * workers and returns. Each start begins from scratch, so start after stop works (a new
 * leadership term re-reads everything). 0; -EBUSY when running; -ETIMEDOUT when the caches
 * did not sync in time or -ECANCELED when stop was called meanwhile (everything started is
 * torn down again); -errno from pthread_create. Logs what it returns.
 */
int nodeslo_controller_start(struct nodeslo_controller *c);

/* Stops the informers, lets the workers finish the keys already queued (keys waiting for a
 * retry are dropped), joins them and frees the run's state. Idempotent; a no-op when stopped. */
void nodeslo_controller_stop(struct nodeslo_controller *c);

/* Stops and frees. NULL is fine. */
void nodeslo_controller_free(struct nodeslo_controller *c);

/* Counters for /metrics; they accumulate across restarts. */
struct nodeslo_stats {
    unsigned long reconciles; /* node keys synced (dropped ones included) */
    unsigned long errors;     /* of those, failed and requeued */
    unsigned long creates;    /* NodeSLO writes made */
    unsigned long updates;
    unsigned long deletes;
    unsigned long config_syncs;  /* ConfigMap states applied */
    unsigned long config_errors; /* keys that failed to decode or validate */
    double latency_sum_s;        /* summed duration of the node syncs counted in reconciles */
    double last_latency_s;       /* duration of the last one */
    bool running;
};
void nodeslo_controller_stats(struct nodeslo_controller *c, struct nodeslo_stats *ret);

/*
 * The NodeMetric spec of node (slo_render_nodemetric_spec(), manager-behaviour.md section 3)
 * from the current config and the Node informer's cache; *ret is a new tree. 0; -ENOENT when
 * the node is not in the cache; -EAGAIN when the controller is not running or the colocation
 * config is not available yet (1.5: the NodeMetric controller drops requests then); -ENOMEM.
 * While nodeslo_controller_colocation_error() holds, upstream keeps existing NodeMetric specs
 * as they are: the caller decides whether to use this spec or what it served before.
 */
int nodeslo_controller_nodemetric_spec(struct nodeslo_controller *c, const char *node, cJSON **ret);

/* slo_colocation_error() of the current config (false when not running). */
bool nodeslo_controller_colocation_error(struct nodeslo_controller *c);

/*
 * The node's effective colocation strategy (slo_node_colocation(); a new tree in
 * *ret_strategy) and whether the cluster strategy enables colocation, for the NodeResource
 * controller. 0, -EAGAIN while not running or colocation-config is not available yet
 * (upstream drops the request then), -ENOMEM.
 */
int nodeslo_controller_colocation(struct nodeslo_controller *c, const cJSON *node,
                                  cJSON **ret_strategy, bool *ret_cluster_enable);

/* Every Node in the cache, as new references in *ret (free with kube_objects_free());
 * returns the count; 0 (and *ret NULL) when not running. */
size_t nodeslo_controller_nodes(struct nodeslo_controller *c, struct kube_object ***ret);

#endif
