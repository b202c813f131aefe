/*
 * What kube-apiserver does to pods beyond schema validation (reference kubernetes-api.md 9):
 * the status a new pod starts with (Pending, its QoS class, PodScheduled=False/SchedulingGated
 * while gated), the update rules of scheduling readiness (KEP-3521: gates may only be removed;
 * spec.nodeName changes only through binding), and the binding subresource.
 */
#ifndef KOORD_APISERVER_PODS_H
#define KOORD_APISERVER_PODS_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "api/field.h"
#include "base/strbuf.h"

/*
 * kube's DefaultTolerationSeconds admission (on create and update of a pod): a pod that does
 * not tolerate the taint already (a toleration of its key, or of every key, with effect
 * NoExecute or none) tolerates node.kubernetes.io/not-ready and /unreachable for 300 s.
 */
void pods_default_tolerations(cJSON *pod);

/* Sets the status of a pod being created and adds the tolerations of kube's
 * DefaultTolerationSeconds admission (not-ready, unreachable: 300 s); now is an RFC 3339 time. */
void pods_prepare_create(cJSON *pod, const char *now);

/* The Kubernetes QoS class of a pod spec: "Guaranteed", "Burstable" or "BestEffort". */
const char *pods_qos_class(const cJSON *pod);

/* Appends the errors of updating old to new (gates added, nodeName changed). */
void pods_validate_update(const cJSON *old, const cJSON *new_pod, struct field_errors *errs);

/*
 * Appends the error of an update that changes the pod spec beyond what ValidatePodUpdate
 * allows: container and init container images, activeDeadlineSeconds (set or lowered),
 * tolerations (additions), terminationGracePeriodSeconds (to 1 from a negative value), gates
 * (removals), and nodeSelector and affinity while the pod is gated (KEP-3838; kube-apiserver
 * allows only narrowing changes there, koord any). Both pods must be defaulted alike.
 */
void pods_check_spec_update(const cJSON *old, const cJSON *new_pod, struct field_errors *errs);

/*
 * Sets the condition of the given type in pod's status.conditions (podutil.UpdatePodCondition):
 * added when absent, replaced otherwise; lastTransitionTime is now (RFC 3339) unless the status
 * stays the same. reason and message may be NULL. Returns whether the pod changed.
 */
bool pods_update_condition(cJSON *pod, const char *type, const char *status, const char *reason,
                           const char *message, const char *now);

/* The condition kube's eviction handler gives a pod it evicts (addConditionAndDeletePod). */
#define PODS_DISRUPTION_TARGET   "DisruptionTarget"
#define PODS_EVICTION_BY_API     "EvictionByEvictionAPI"
#define PODS_EVICTION_BY_API_MSG "Eviction API: evicting"

/*
 * Binds pod to the node a Binding names (9.1), in place: spec.nodeName, the Binding's
 * annotations merged in, PodScheduled=True. -EINVAL with why for a malformed binding (wrong
 * target kind, no target name); -EBUSY with why when the pod cannot be bound (being deleted,
 * already assigned, still gated).
 */
int pods_bind(cJSON *pod, const cJSON *binding, const char *now, struct strbuf *why);

#endif
