/*
 * The slo.koordinator.sh NodeMetric objects (the CRD) for agents in `--report-mode crd`, and
 * for upstream's koordlet, which only reports that way: it updates the status of the object
 * named like its node and never creates one. Upstream's koord-manager creates them
 * (manager-behaviour.md 3: one per Node, spec = the collect policy from colocation-config,
 * deleted with its Node, status left to the agent). koord's manager serves usage from its own
 * in-memory API (nodemetric.h), so it keeps these objects only when asked or when the CRD is
 * installed (manager.h nodemetric_crd; docs/design.md says why), with the same spec it serves.
 *
 * These are the API calls; the manager's spec worker decides when (on every Node and config
 * change, and for every Node and every existing object when it starts leading). The calls
 * block on the API server; call them from a worker, never from an informer handler.
 */
#ifndef KOORD_MANAGER_NODEMETRIC_CRD_H
#define KOORD_MANAGER_NODEMETRIC_CRD_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

struct kube_client;
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

#endif
