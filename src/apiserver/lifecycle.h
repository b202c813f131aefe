/*
 * The deletion lifecycle kube-apiserver and its controllers give namespaces and pods (issue 17
 * section 4; reference kubernetes-api.md 3.6), done inside koord apiserver because koord runs
 * no kube-controller-manager and its nodes no kubelet:
 *
 * - a namespace is deleted in two steps: DELETE marks it Terminating; then its content is
 *   deleted (objects holding finalizers stay, marked, until their controllers remove them),
 *   the deletion conditions kube's namespace controller writes are kept on it, and once it is
 *   empty the `kubernetes` finalizer is removed and the namespace goes;
 * - a pod bound to a node is deleted gracefully (deletionTimestamp = now + grace period), by a
 *   DELETE or by pods/eviction alike (lifecycle_pod_delete); what the kubelet does at the end
 *   of the period (the final delete) a sweep here does;
 * - a namespace goes only once its finalizers (removed by the sweep for `kubernetes`, by the
 *   namespaces/finalize subresource for others) and its content are all gone, never in the
 *   update that removes the last finalizer, so no content outlives it.
 *
 * A worker thread runs the sweeps: woken by the writes that start such work, then once a
 * second while any remains, idle otherwise. The decisions are plain functions over objects so
 * they are tested without the thread.
 */
#ifndef KOORD_APISERVER_LIFECYCLE_H
#define KOORD_APISERVER_LIFECYCLE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

struct store;
struct api_registry;

/* kube's default spec.terminationGracePeriodSeconds. */
#define LIFECYCLE_DEFAULT_GRACE 30

/*
 * The grace period of deleting pod (pod strategy CheckGracefulDelete): requested (the
 * DeleteOptions' gracePeriodSeconds, negative when not given), else the pod's
 * terminationGracePeriodSeconds, else 30; 0 when the pod is not bound to a node or has
 * finished (Succeeded/Failed). A negative result period becomes 1. 0 means delete now.
 */
int64_t lifecycle_pod_grace(const cJSON *pod, int64_t requested);

/*
 * Marks pod deleted with grace seconds at now (> 0): deletionTimestamp = now + grace and
 * deletionGracePeriodSeconds. A pod already being deleted keeps its deletion unless this one
 * is shorter (kube only lets it move earlier). Returns whether pod changed.
 */
bool lifecycle_pod_mark(cJSON *pod, int64_t grace, int64_t now);

/* What deleting a pod does to it (lifecycle_pod_delete). */
enum lifecycle_pod_deletion {
    LIFECYCLE_POD_REMOVE,  /* it goes now: period 0 and no finalizers */
    LIFECYCLE_POD_MARKED,  /* it stays, changed: write it (grace period or finalizers) */
    LIFECYCLE_POD_PENDING, /* it stays as it was: a deletion under way, not shortened */
};

/*
 * A DELETE of pod at now with the requested grace period (negative: not given), as kube's
 * generic store runs it for the pod strategy (rest.BeforeDelete, then
 * updateForGracefulDeletionAndFinalizers): a positive period marks the pod (lifecycle_pod_mark);
 * period 0 removes it unless finalizers hold it, which then keep it deleted now
 * (deletionTimestamp, kept when set, and deletionGracePeriodSeconds 0) until they are gone.
 * Changes pod in place. Shared by DELETE and pods/eviction.
 */
enum lifecycle_pod_deletion lifecycle_pod_delete(cJSON *pod, int64_t requested, int64_t now);

/* Whether a pod being deleted gracefully has passed its deletionTimestamp at now. */
bool lifecycle_pod_due(const cJSON *pod, int64_t now);

/* A namespace being created: status.phase Active, `kubernetes` in spec.finalizers (the
 * namespace strategy's PrepareForCreate). */
void lifecycle_ns_prepare_create(cJSON *ns);

/* DELETE of a namespace with spec finalizers: deletionTimestamp (kept when set) and phase
 * Terminating. Returns whether ns changed. */
bool lifecycle_ns_mark(cJSON *ns, int64_t now);

/* Whether ns is being deleted (deletionTimestamp set). */
bool lifecycle_ns_terminating(const cJSON *ns);

/*
 * One pass of the work: every terminating namespace's content deleted (finalizers honoured,
 * bound pods gracefully), its conditions written, empty ones finalized and removed; every pod
 * whose grace period has passed at now removed. Returns whether work remains (a namespace
 * or pod still terminating), or -errno of the store.
 */
int lifecycle_sweep(struct store *store, struct api_registry *reg, int64_t now);

struct lifecycle;

/* Starts the worker over store and reg (both borrowed; must outlive it). 0 or -errno. */
int lifecycle_start(struct store *store, struct api_registry *reg, struct lifecycle **ret);

/* Wakes the worker: a write may have started work. NULL is ignored. */
void lifecycle_kick(struct lifecycle *l);

/* Stops and frees the worker. NULL is ignored. */
void lifecycle_stop(struct lifecycle *l);

#endif
