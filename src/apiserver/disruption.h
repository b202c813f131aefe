/*
 * PodDisruptionBudgets as pods/eviction honours them (kube's
 * pkg/registry/core/pod/storage/eviction.go, reference kubernetes-api.md 9.4).
 *
 * In a cluster, kube-controller-manager's disruption controller keeps each PDB's status
 * (pkg/controller/disruption/disruption.go) and the eviction handler only reads it and
 * decrements status.disruptionsAllowed. koord runs no such controller, and a PDB whose status
 * nobody computes refuses every eviction ("still being processed"), so koord apiserver does the
 * controller's computation itself, at eviction time, from the pods as stored: the expected
 * count (the pods' controllers' spec.replicas through their ownerReferences, Deployment over
 * ReplicaSet, StatefulSet; the number of selected pods for an integer minAvailable), the
 * desired healthy count, the healthy pods (Ready, not being deleted, not already in
 * status.disruptedPods within the controller's two-minute window). It writes that status, with
 * the eviction's decrement and the pod in disruptedPods, to the PDB at every eviction it was
 * consulted for, and computes it too whenever the PDB itself is written (disruption_refresh):
 * the status is as of the last of those, since nothing follows the pods in between.
 */
#ifndef KOORD_APISERVER_DISRUPTION_H
#define KOORD_APISERVER_DISRUPTION_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

struct store;

/* How long an evicted pod counts as disrupted before it is expected gone (DeletionTimeout). */
#define DISRUPTION_DELETION_TIMEOUT 120
/* The most pods status.disruptedPods may hold (MaxDisruptedPodSize). */
#define DISRUPTION_MAX_DISRUPTED 2000

/*
 * Whether evicting pod skips the budgets (eviction.go canIgnorePDB): it is Pending, Succeeded
 * or Failed, or already being deleted (so a terminating pod is never counted twice).
 */
bool disruption_pod_exempt(const cJSON *pod);

/*
 * Whether the eviction of pod (a stored pod, decoded) may go ahead, as of now (Unix seconds):
 *  - 0: it may (no PDB selects the pod, the pod is Pending/Succeeded/Failed or being deleted,
 *    an unhealthy pod the policy lets go, or a PDB allowed it and, unless dry_run, its status
 *    was written with the decrement);
 *  - 1: it may not; *ret_reply is the Status to answer and *ret_code its HTTP code (429
 *    TooManyRequests with a DisruptionBudget cause; 201 with a code-500 Status for a pod under
 *    several PDBs, as kube-apiserver answers; 403 for a disruptedPods map past its bound);
 *  - < 0: a store error (-errno).
 * The caller owns *ret_reply.
 */
int disruption_check_eviction(struct store *s, const cJSON *pod, bool dry_run, int64_t now,
                              cJSON **ret_reply, int *ret_code);

/*
 * Sets the status of pdb (a PodDisruptionBudget being written: defaulted, with its generation)
 * to what the disruption controller would compute now from the stored pods, keeping its
 * disruptedPods, so that a budget shows its allowed disruptions from the moment it is written
 * and not only after the first eviction. A budget whose expected count cannot be known keeps
 * the status it has. 0, or a store error (-errno).
 */
int disruption_refresh(struct store *s, cJSON *pdb, int64_t now);

/*
 * The disruption controller's status for pdb over the pods it selects (pods[0..n), already
 * filtered by its selector; trySync): observedGeneration, disruptedPods pruned of pods gone,
 * deleted or past the timeout, currentHealthy, desiredHealthy, expectedPods,
 * disruptionsAllowed and the DisruptionAllowed condition. scale is the sum of spec.replicas
 * of the pods' controllers (getExpectedScale), -1 when one could not be found: a PDB that
 * needs it (maxUnavailable, a percentage minAvailable) then has no status (NULL), as the
 * controller fails to sync it. Returns a new tree or NULL.
 */
cJSON *disruption_status(const cJSON *pdb, const cJSON *const *pods, size_t n, int scale,
                         int64_t now);

#endif
