/*
 * The ElasticQuotaProfile controller (upstream pkg/quota-controller/profile; manager-behaviour.md
 * section 8, api-types.md 3.1): keeps one scheduling.sigs.k8s.io/v1alpha1 ElasticQuota per
 * quota.koordinator.sh/v1alpha1 ElasticQuotaProfile, `<profile namespace>/<spec.quotaName>`,
 * the root of its own quota tree, whose min is the allocatable of the nodes the profile's
 * nodeSelector picks, scaled by resourceRatio.
 *
 * Shape: one informer on the profiles (all namespaces) whose handlers enqueue "namespace/name"
 * on add, delete and a generation change; workers over a rate-limited workqueue. As upstream,
 * there is no Node or ElasticQuota watch: each profile is re-synced every resync_ms (10 s) after
 * a pass that succeeded, listing its nodes afresh, so node changes show within that period.
 *
 * Reconcile of a profile (8, steps 1-8): gone -> nothing (its quota stays: no owner
 * references); no tree-id label -> set it to the decimal FNV-1a-64 of "<namespace>/<name>" and
 * update the profile; nodes = list by nodeSelector; total = sum of their status.allocatable,
 * unschedulable = the part of nodes with spec.unschedulable or Ready not True; with a ratio r
 * (0 < r <= 1, else 1.0) every entry is scaled (cpu in millicores, the rest in units,
 * truncated); min = total for the resource keys (annotation resource-keys, default cpu and
 * memory; 0 when absent), max = 4611686018427387 for each; labels profile, the quotaLabels,
 * tree-id and is-root="true" merged into the quota's; annotations total-resource and
 * unschedulable-resource (JSON); create, or update only when labels, annotations or spec
 * differ. A failed create or update records a Warning Event on the profile
 * (CreateQuotaFailed / UpdateQuotaFailed, "failed to create quota, err: ...") and retries after
 * 2 s; other errors retry with the per-key backoff.
 *
 * Thread safety: start/stop/free from one controlling thread (the leader elector's callbacks);
 * stop may also cancel a start waiting for the cache. stats from any thread.
 */
#ifndef KOORD_MANAGER_QUOTAPROFILE_QUOTAPROFILE_H
#define KOORD_MANAGER_QUOTAPROFILE_QUOTAPROFILE_H

#include <stdbool.h>
#include <stdint.h>

struct kube_client;

/* max of every generated quota: MaxInt64 / 2000, as upstream. */
#define QUOTAPROFILE_MAX_QUOTA "4611686018427387"

struct quotaprofile_opts {
    unsigned workers;      /* 0 = 1 */
    const char *component; /* Event source.component; NULL = "koord-manager" */
    const char *host;      /* Event source.host; may be NULL */
    long sync_timeout_ms;  /* start() waits this long for the cache; 0 = 60000 */
    long resync_ms;        /* re-sync period of each profile; 0 = 10000 (upstream) */
    long failed_write_ms;  /* retry after a failed quota write; 0 = 2000 (upstream) */
    long retry_base_ms;    /* per-key backoff of other errors; 0 = 5 (client-go) */
    long retry_max_ms;     /* its cap; 0 = 1000 s (client-go) */
};

struct quotaprofile_controller;

/* Copies opts (NULL = defaults); the client is borrowed. Nothing runs until start. 0. */
int quotaprofile_controller_new(struct kube_client *c, const struct quotaprofile_opts *opts,
                                struct quotaprofile_controller **ret);

/* Starts the informer, waits for it to list, starts the workers. 0; -EBUSY when running;
 * -ENOENT when the API server does not serve ElasticQuotaProfiles (nothing started);
 * -ETIMEDOUT or -ECANCELED (all torn down again); -errno. Logs what it returns. */
int quotaprofile_controller_start(struct quotaprofile_controller *c);

/* Stops the informer and the workers; pending re-syncs are dropped. Idempotent. */
void quotaprofile_controller_stop(struct quotaprofile_controller *c);

/* Stops and frees. NULL is fine. */
void quotaprofile_controller_free(struct quotaprofile_controller *c);

/* Counters for /metrics; they accumulate across restarts. */
struct quotaprofile_stats {
    unsigned long reconciles; /* profile keys synced */
    unsigned long errors;     /* of those, failed */
    unsigned long creates;    /* ElasticQuota writes made */
    unsigned long updates;
    double latency_sum_s;
};
void quotaprofile_controller_stats(struct quotaprofile_controller *c,
                                   struct quotaprofile_stats *ret);

/* The tree id upstream gives a profile: FNV-1a 64 of "<namespace>/<name>" in decimal. */
uint64_t quotaprofile_tree_id(const char *ns, const char *name);

#endif
