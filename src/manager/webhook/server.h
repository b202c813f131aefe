/*
 * The webhook server of koord manager (upstream's controller-runtime webhook server plus its
 * webhook controller; manager-behaviour.md 10, 11): it runs on every replica, leader or not, so
 * admission does not wait for an election. It serves the handlers of webhook.h over HTTPS on its
 * own port (upstream's WEBHOOK_PORT, 9876), and feeds them from informers: ClusterColocation-
 * Profiles, Namespaces and PriorityClasses for /mutate-pod, ElasticQuotas for the quota paths
 * and /validate-pod, Nodes for /validate-configmap (only when that gate is on). Pods are not
 * cached: the only pod question (does a quota still have pods, on a quota delete or an
 * is-parent change) is a rare write, so it is asked of the API server with a label or
 * namespace list of limit 1, instead of holding every pod of the cluster in memory.
 *
 * A resource the API server does not serve (the ClusterColocationProfile or ElasticQuota CRD
 * not installed) is treated as empty and probed again by the maintainer thread, which also
 * keeps the webhook configurations:
 *  - always: in the MutatingWebhookConfiguration koordinator-mutating-webhook-configuration and
 *    the ValidatingWebhookConfiguration koordinator-validating-webhook-configuration (when they
 *    exist), every webhook whose path this server handles gets caBundle = our CA, and webhooks
 *    whose handler is off are dropped, as upstream's webhook controller does;
 *  - with register_address (standalone, like --register-apiservice): the two configurations
 *    are created or replaced whole (webhook_configurations()), and the Service
 *    koordinator-system/koordinator-webhook-service with its Endpoints point at that address.
 * Failures, including 404s while the API server does not serve admissionregistration.k8s.io,
 * are retried with backoff (1 s doubling to 30 s) and logged once per kind of failure; after a
 * success the configurations are checked again every 60 s, so a deleted one comes back.
 *
 * Ready (what /readyz of the manager adds as webhook-ready) once listening, the first probe
 * pass is done and every started informer has synced.
 */
#ifndef KOORD_MANAGER_WEBHOOK_SERVER_H
#define KOORD_MANAGER_WEBHOOK_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "manager/webhook/webhook.h"

struct kube_client;

struct webhook_server_opts {
    struct kube_client *client; /* borrowed; must outlive the server */
    struct webhook_config config;
    const char *host;               /* listen address */
    uint16_t port;                  /* 0 = any */
    const char *cert_pem, *key_pem; /* serving certificate for koordinator-webhook-service */
    const char *ca_pem;             /* its CA: the caBundle written into the configurations */
    /* "IP:PORT" (port 0 = the port served on): create the configurations, Service and
     * Endpoints pointing there. NULL: only keep the caBundle of existing configurations. */
    const char *register_address;
    long backoff_max_ms; /* 0 = 30000 */
    long recheck_ms;     /* 0 = 60000 */
};

struct webhook_server;

/* Starts serving and the maintainer. 0, -EINVAL (bad register_address), -EADDRINUSE, -errno. */
int webhook_server_start(const struct webhook_server_opts *opts, struct webhook_server **ret);

uint16_t webhook_server_port(const struct webhook_server *s);

bool webhook_server_ready(struct webhook_server *s);

/* Whether the configurations were written at least once since start. */
bool webhook_server_registered(struct webhook_server *s);

/* Counters for /metrics. */
struct webhook_server_stats {
    unsigned long reviews; /* AdmissionReviews answered */
    unsigned long denied;  /* answered allowed=false */
    unsigned long patched; /* answered with a patch */
};
void webhook_server_stats(struct webhook_server *s, struct webhook_server_stats *ret);

/* Stops the port, the maintainer and the informers; frees. NULL is fine. */
void webhook_server_stop(struct webhook_server *s);

#endif
