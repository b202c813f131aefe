/*
 * The admission webhooks koord-manager serves (upstream pkg/webhook; manager-behaviour.md 1.7,
 * 4.8, 5, 6.2, 10, 11), under upstream's paths and webhook names:
 *
 *   path                                                    webhook (configuration entry)    gate
 *   /mutate-pod                                             mpod-create, mpod-update
 * PodMutatingWebhook (on) /validate-pod                                           vpod
 * PodValidatingWebhook (on) /validate-configmap                                     vconfigmap
 * ConfigMapValidatingWebhook (off) /mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota
 * melasticquota                    ElasticMutatingWebhook (on)
 *   /validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota  velasticquota ElasticValidatingWebhook
 * (on) /mutate-node-status                                     mnode-status NodeMutatingWebhook
 * (off)
 *
 * (names end in ".koordinator.sh"; paths and names from upstream config/webhook/manifests.yaml
 * and patch_manifests.yaml). WebhookFramework (on) switches them all.
 *
 * Two halves. The decisions are pure: webhook_review() takes an AdmissionReview v1 request and
 * the objects the rules read (struct webhook_data) and returns the AdmissionReview response,
 * so every rule is table-tested without a server. webhook_server (server.h) is the effect
 * side: the HTTPS port, the informers that fill webhook_data, the webhook configurations.
 *
 * Protocol (admission.k8s.io/v1, as controller-runtime answers): response.uid echoes
 * request.uid; allowed; a denial carries result {code: 400, message} (upstream's
 * admission.Errored(http.StatusBadRequest, ...)); a failed step (an unreadable object, a
 * PriorityClass that does not exist, a bad probability) result {code: 500, message}; a mutation
 * patchType "JSONPatch" and patch = base64 of the RFC 6902 patch from the object received to
 * the object mutated; warnings when there are any.
 */
#ifndef KOORD_MANAGER_WEBHOOK_WEBHOOK_H
#define KOORD_MANAGER_WEBHOOK_WEBHOOK_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "api/elasticquota.h"
#include "base/strbuf.h"

#define WEBHOOK_PATH_MUTATE_POD        "/mutate-pod"
#define WEBHOOK_PATH_VALIDATE_POD      "/validate-pod"
#define WEBHOOK_PATH_VALIDATE_CM       "/validate-configmap"
#define WEBHOOK_PATH_MUTATE_QUOTA      "/mutate-scheduling-sigs-k8s-io-v1alpha1-elasticquota"
#define WEBHOOK_PATH_VALIDATE_QUOTA    "/validate-scheduling-sigs-k8s-io-v1alpha1-elasticquota"
#define WEBHOOK_PATH_MUTATE_NODE       "/mutate-node-status"
#define WEBHOOK_SERVICE_NAME           "koordinator-webhook-service"
#define WEBHOOK_MUTATING_CONFIG_NAME   "koordinator-mutating-webhook-configuration"
#define WEBHOOK_VALIDATING_CONFIG_NAME "koordinator-validating-webhook-configuration"
#define WEBHOOK_DEFAULT_PORT           9876 /* upstream's WEBHOOK_PORT */

/* Feature gates that change the webhooks (manager-behaviour.md 11), upstream's defaults from
 * webhook_gates_default(). */
struct webhook_gates {
    bool framework;                 /* WebhookFramework, true */
    bool pod_mutating;              /* PodMutatingWebhook, true */
    bool pod_validating;            /* PodValidatingWebhook, true */
    bool elastic_mutating;          /* ElasticMutatingWebhook, true */
    bool elastic_validating;        /* ElasticValidatingWebhook, true */
    bool configmap_validating;      /* ConfigMapValidatingWebhook, false */
    bool node_mutating;             /* NodeMutatingWebhook, false */
    bool skip_mutating_resources;   /* ColocationProfileSkipMutatingResources, false */
    bool skip_validating_priority;  /* ColocationProfileSkipValidatingPriority, false */
    bool disable_extended_spec;     /* DisableExtendedResourceSpec, false */
    bool support_parent_quota_pods; /* SupportParentQuotaSubmitPod, false */
    bool disable_device_spec;       /* DisableDeviceResourceSpec, false */
};

void webhook_gates_default(struct webhook_gates *ret);

/*
 * Applies a --feature-gates value ("Name=true,Other=false", Go's strconv.ParseBool values) to
 * g. Gates of upstream's list that do not touch the webhooks are accepted and ignored; a gate
 * that would change a webhook in a way koord does not implement may be set only to its
 * default (anything else is refused rather than ignored); an unknown name or a bad value is
 * -EINVAL with the reason in err (g may be half-changed then).
 */
int webhook_gates_parse(const char *s, struct webhook_gates *g, struct strbuf *err);

/* Settings of the handlers. */
struct webhook_config {
    struct webhook_gates gates;
    const char *config_namespace;  /* slo-controller-config's; NULL = koordinator-system */
    const char *config_name;       /* NULL = slo-controller-config */
    bool node_strategy_name_check; /* --node-strategy-name-need-check (1.7 step 4) */
    /* A uniform random integer in [0, 99] for CCP probabilities; NULL = random(). */
    unsigned (*rand100)(void *userdata);
    void *rand_userdata;
};

/*
 * The objects the rules read, borrowed for one webhook_review() call. Lookups return NULL for
 * "absent" (and, for namespaces, on a lookup error; a profile's namespaceSelector then counts
 * as matched, upstream's quirk).
 */
struct webhook_data {
    const cJSON *const *profiles; /* ClusterColocationProfiles (for /mutate-pod) */
    size_t nprofiles;
    const cJSON *(*namespace_get)(void *userdata, const char *name);
    const cJSON *(*priority_class_get)(void *userdata, const char *name);
    void *userdata;
    struct api_quota_lookup quotas; /* ElasticQuotas (quota paths, /validate-pod) */
    const cJSON *const *nodes;      /* Nodes (for /validate-configmap step 6) */
    size_t nnodes;
};

/* Which lookups a path needs, so the server fills only those. */
enum webhook_needs {
    WEBHOOK_NEED_PROFILES = 1 << 0,
    WEBHOOK_NEED_QUOTAS = 1 << 1,
    WEBHOOK_NEED_NODES = 1 << 2,
};

/*
 * Whether path is one of the paths above whose handler is enabled by cfg's gates; *ret_needs
 * (may be NULL) says what webhook_data it reads.
 */
bool webhook_path_enabled(const struct webhook_config *cfg, const char *path, unsigned *ret_needs);

/*
 * Answers the AdmissionReview review (request JSON, borrowed) sent to path. 0 with *ret the
 * AdmissionReview response (a new tree); -ENOENT when path is not an enabled handler (answer
 * 404); -EINVAL with err when review is no AdmissionReview v1 request (answer 400).
 */
int webhook_review(const struct webhook_config *cfg, const char *path, const cJSON *review,
                   const struct webhook_data *data, cJSON **ret, struct strbuf *err);

/*
 * The two webhook configurations upstream ships (config/webhook), keeping only the webhooks
 * whose handler cfg enables: MutatingWebhookConfiguration koordinator-mutating-webhook-
 * configuration and ValidatingWebhookConfiguration koordinator-validating-webhook-
 * configuration, clientConfig service koordinator-system/koordinator-webhook-service port 443
 * (or url when url_base is given, e.g. "https://10.0.0.1:9876", upstream's WEBHOOK_HOST) with
 * caBundle = base64 of ca_pem; admissionReviewVersions [v1]; sideEffects None; upstream's
 * failurePolicy, rules, namespaceSelector (control-plane DoesNotExist) and objectSelectors.
 * New trees.
 */
void webhook_configurations(const struct webhook_config *cfg, const char *ca_pem,
                            const char *url_base, cJSON **ret_mutating, cJSON **ret_validating);

#endif
