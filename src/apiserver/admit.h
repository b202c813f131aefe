/*
 * What kube-apiserver does to built-in kinds beyond their schema, for the kinds whose writes
 * depend on other objects or on what was stored before (pods' own rules are in pods.h):
 *
 *  - Secret: stringData is folded into data (base64) before validation, as the API's
 *    conversion does; type and, once `immutable` is true, data cannot change.
 *  - ConfigMap: once `immutable` is true, data and binaryData cannot change.
 *  - Service: a cluster IP from 10.96.0.0/12 (kube-apiserver's default service CIDR) and node
 *    ports from 30000-32767 are allocated unless given, given ones must be free and in range;
 *    clusterIPs, ipFamilies, ipFamilyPolicy, internalTrafficPolicy and each port's targetPort
 *    are defaulted; allocated values carry over an update that omits them and cannot change.
 *  - PriorityClass: names starting with "system-" are reserved for the two classes
 *    kube-apiserver creates (system-cluster-critical, system-node-critical, also created here
 *    at start); user classes are at most 1000000000; value and preemptionPolicy cannot change;
 *    at most one class is globalDefault.
 *  - Pod (the Priority admission plugin): spec.priorityClassName resolves to the class's value
 *    in spec.priority and its preemptionPolicy; without a name the globalDefault class (or 0)
 *    applies. This is what Koordinator's priority classes (koord-prod 9000, koord-mid 7000,
 *    koord-batch 5000, koord-free 3000) rely on. Updates keep what was resolved: left out, it
 *    is carried over; changed, it is refused.
 *  - ElasticQuota (scheduling.sigs.k8s.io/v1alpha1): the mutating and validating webhooks of
 *    Koordinator's koord-manager (manager-behaviour.md 6.2; admit_quota.c), for running
 *    without them: labels and shared-weight defaulted on create, the quota tree checked on
 *    create, update and delete against the other ElasticQuotas and the pods in the store.
 *
 * Checks that read other objects race with concurrent writes of the same kind unless the
 * caller serialises them: admit_serialized() says which resources need that.
 */
#ifndef KOORD_APISERVER_ADMIT_H
#define KOORD_APISERVER_ADMIT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "api/field.h"
#include "base/strbuf.h"

struct api_resource;
struct store;

/* Whether creates and updates of res must not run concurrently (allocation, uniqueness). */
bool admit_serialized(const struct api_resource *res);

/* The reserved quota names (upstream apis/extension/elastic_quota.go). */
#define ADMIT_ROOT_QUOTA    "koordinator-root-quota"
#define ADMIT_SYSTEM_QUOTA  "koordinator-system-quota"
#define ADMIT_DEFAULT_QUOTA "koordinator-default-quota"

/*
 * Changes and checks for obj about to be created (before schema validation) or replacing old
 * (after the subresource rules, before validation). Returns 0; -EINVAL with errs filled
 * (answer 422 Invalid); -EPERM with why (answer 403 Forbidden); -ENOSPC with why when an
 * allocation range is full (answer 500); -EACCES with why, the whole message of an admission
 * webhook's denial as kube-apiserver words it (answer 400 with why as the message); other
 * negative errnos from the store.
 */
int admit_create(struct store *store, const struct api_resource *res, cJSON *obj,
                 struct field_errors *errs, struct strbuf *why);
int admit_update(struct store *store, const struct api_resource *res, const cJSON *old, cJSON *obj,
                 struct field_errors *errs, struct strbuf *why);

/* Checks for old, stored, about to be deleted: 0, -EACCES with why as above, -errno. */
int admit_delete(struct store *store, const struct api_resource *res, const cJSON *old,
                 struct strbuf *why);

/* The ElasticQuota rules (api/elasticquota.h over the store, admit_quota.c), reached through
 * the three calls above. */
int admit_quota_create(struct store *store, cJSON *q, struct strbuf *why);
int admit_quota_update(struct store *store, const cJSON *old, cJSON *q, struct strbuf *why);
int admit_quota_delete(struct store *store, const cJSON *q, struct strbuf *why);

/* Creates the system priority classes kube-apiserver creates at start, when missing; now is
 * their creationTimestamp, new_uid makes their uids. */
int admit_bootstrap(struct store *store, const char *now, void (*new_uid)(char uid[37]));

#endif
