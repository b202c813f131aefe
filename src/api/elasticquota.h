/*
 * The ElasticQuota (scheduling.sigs.k8s.io/v1alpha1) admission rules of Koordinator's quota
 * webhooks (manager-behaviour.md 6.2): labels and shared-weight defaulted on create; the self
 * checks (no negatives, min <= max, strict max keys); the tree checks against the other quotas
 * (parent exists and is a parent, same max keys as parent and children, min sums, tree ids,
 * is-parent changes); the delete rules; the pod rules (a pod may not join a parent quota, the
 * preemptible label may not change).
 *
 * Two servers enforce them: `koord manager`'s webhooks (upstream's home for them, fed by its
 * informers) and `koord apiserver` run without the manager (fed by its store, under its admit
 * lock). So the rules are pure functions over a small lookup the caller fills: every
 * ElasticQuota, and a question about pods, which only the delete and is-parent rules ask.
 *
 * A refusal returns -EACCES with upstream's bare message in why (e.g. "parent not exist");
 * the caller words it as its protocol wants (an AdmissionReview result, or kube-apiserver's
 * `admission webhook "<name>" denied the request: <message>`).
 */
#ifndef KOORD_API_ELASTICQUOTA_H
#define KOORD_API_ELASTICQUOTA_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

/* The reserved quota names (upstream apis/extension/elastic_quota.go). */
#define API_QUOTA_ROOT    "koordinator-root-quota"
#define API_QUOTA_SYSTEM  "koordinator-system-quota"
#define API_QUOTA_DEFAULT "koordinator-default-quota"

struct api_quota_lookup {
    /* Every ElasticQuota known (on update the stored old one among them); borrowed. */
    const cJSON *const *quotas;
    size_t n;
    /*
     * Whether some pod is bound to quota q: labelled quota.scheduling.koordinator.sh/name=<q>,
     * or, when by_namespace, in the namespace named like q or one q's namespaces annotation
     * lists (api_quota_pod_bound() decides for one pod). 0 with *ret, or -errno (the rule then
     * fails with it). NULL: no pods anywhere.
     */
    int (*pods_bound)(void *userdata, const cJSON *q, bool by_namespace, bool *ret);
    void *userdata;
};

/* Whether pod is bound to q in the sense of pods_bound above. */
bool api_quota_pod_bound(const cJSON *q, const cJSON *pod, bool by_namespace);

/* Whether q's namespaces annotation (a JSON list) names ns. */
bool api_quota_binds_namespace(const cJSON *q, const char *ns);

/* The mutating webhook on CREATE: changes q in place. 0, or -EACCES ("parent not exist"). */
int api_quota_mutate(const struct api_quota_lookup *l, cJSON *q, struct strbuf *why);

/*
 * The validating webhook. 0; -EACCES with why; -errno from pods_bound. need_known: refuse an
 * update or delete of a quota the lookup does not hold (the webhook's in-memory tree; a store
 * always holds the object it updates, so the API server passes false).
 */
int api_quota_validate_create(const struct api_quota_lookup *l, const cJSON *q, struct strbuf *why);
int api_quota_validate_update(const struct api_quota_lookup *l, const cJSON *old, const cJSON *q,
                              bool need_known, struct strbuf *why);
int api_quota_validate_delete(const struct api_quota_lookup *l, const cJSON *q, bool need_known,
                              struct strbuf *why);

/* Whether an update from old to q is checked at all: it changes the parent, is-parent or tree-id
 * label, the namespaces annotation or the spec (upstream lets other updates through). */
bool api_quota_touches_tree(const cJSON *old, const cJSON *q);

/* The quota a pod belongs to: its quota.scheduling.koordinator.sh/name label, else the quota
 * named like its namespace in that namespace, else one whose namespaces annotation lists the
 * namespace, else koordinator-default-quota. Borrowed from pod or the lookup. */
const char *api_quota_of_pod(const struct api_quota_lookup *l, const cJSON *pod);

/* The pod rules of the pod validating webhook (5.4 group 3): on create (old NULL) the pod's
 * quota must not be a parent quota; on update the preemptible label must not change. 0 or
 * -EACCES with why. */
int api_quota_validate_pod(const struct api_quota_lookup *l, const cJSON *old, const cJSON *pod,
                           struct strbuf *why);

#endif
