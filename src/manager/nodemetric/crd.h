/*
 * The slo.koordinator.sh NodeMetric objects (the CRD) for agents in `--report-mode crd`, and
 * for upstream's koordlet, which only reports that way: it updates the status of the object
 * named like its node and never creates one. Upstream's koord-manager creates them
 * (manager-behaviour.md 3: one per Node, spec = the collect policy from colocation-config,
 * deleted with its Node, status left to the agent). koord's manager serves usage from its own
 * in-memory API (nodemetric.h), so it keeps these objects only when asked or when the CRD is
 * installed (manager.h nodemetric_crd; docs/design.md says why), with the same spec it serves.
 *
 * The API calls below block on the API server; call them from a worker, never from an informer
 * handler. The manager's spec worker decides when: on every Node and config change, for every
 * Node when the CRD is first seen served, and for every object the watch (below) sees appear,
 * change its spec or go, which deletes those of Nodes that are gone and re-creates one deleted
 * by hand at once, as upstream's controller does on its NodeMetric informer's events.
 *
 * The watch is an informer on these objects. It also tells whether the CRD is served: its first
 * successful list is the answer, and until then the informer retries with its bounded backoff,
 * so a CRD installed after the manager started leading is picked up within that backoff
 * (issue 18), with no second discovery loop. Its cache is where the NodeResource controller
 * reads the status an agent in crd mode (upstream's koordlet) wrote (noderesource/controller.h).
 */
#ifndef KOORD_MANAGER_NODEMETRIC_CRD_H
#define KOORD_MANAGER_NODEMETRIC_CRD_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

struct kube_client;
struct kube_object;
struct kube_resource;

/* slo.koordinator.sh/v1alpha1 nodemetrics, cluster-scoped. */
extern const struct kube_resource nodemetric_crd_resource;

/* Whether the API server serves slo.koordinator.sh/v1alpha1 nodemetrics (its discovery lists
 * it): 1 or 0; -errno when discovery cannot be read (a 404 of the group is 0). */
int nodemetric_crd_served(struct kube_client *c);

/*
 * Makes sure the NodeMetric of node exists with spec (the object's whole spec, borrowed):
 * creates it (no status) or updates a different spec, keeping the status the agent wrote.
 * keep_spec: an existing object's spec stays as it is (upstream keeps specs while
 * colocation-config is in error); a missing one is still created. Writes nothing when it is
 * already so. 0, or -errno of the API call (-ESTALE on a conflict: retry).
 */
int nodemetric_crd_apply(struct kube_client *c, const char *node, const cJSON *spec,
                         bool keep_spec);

/* Deletes the NodeMetric of a node that is gone. 0, also when absent; -errno. */
int nodemetric_crd_delete(struct kube_client *c, const char *node);

/* The names of every NodeMetric object, into *ret (a NULL-terminated array of strings, free
 * each and the array); returns how many, or -errno. */
int nodemetric_crd_names(struct kube_client *c, char ***ret);

/* ---- the watch ---- */

/* Callbacks run on the watch's threads and must be quick (enqueue a key). Any may be NULL. */
struct nodemetric_crd_watch_opts {
    /* Once, after the first list succeeded (the CRD is served), before the on_object calls
     * for the objects that list found. */
    void (*on_served)(void *userdata);
    /* An object appeared, its spec changed, or it was deleted: its spec wants a look. After
     * on_served, also once for every object the first list found. */
    void (*on_object)(void *userdata, const char *node);
    /* An object appeared, its status changed (an agent's report), or it was deleted. */
    void (*on_status)(void *userdata, const char *node);
    void *userdata;
    long backoff_max_ms; /* the informer's retry bound while the CRD is absent; 0 = 30000 */
};

struct nodemetric_crd_watch;

/* The client is borrowed and must outlive the watch. */
struct nodemetric_crd_watch *nodemetric_crd_watch_new(struct kube_client *c,
                                                      const struct nodemetric_crd_watch_opts *o);

/* Starts the informer and the thread that waits for its first list. 0 or -errno. Once. */
int nodemetric_crd_watch_start(struct nodemetric_crd_watch *w);

/* Whether the first list succeeded. Any thread. */
bool nodemetric_crd_watch_served(struct nodemetric_crd_watch *w);

/* The cached object of node, with a new reference (kube_object_unref), or NULL (none, not
 * served, not started). Any thread; NULL w is fine. */
struct kube_object *nodemetric_crd_watch_get(struct nodemetric_crd_watch *w, const char *node);

/* Stops and joins the threads; idempotent. _free stops too; NULL is fine for both. */
void nodemetric_crd_watch_stop(struct nodemetric_crd_watch *w);
void nodemetric_crd_watch_free(struct nodemetric_crd_watch *w);

#endif
