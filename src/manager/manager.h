/*
 * koord manager (upstream koord-manager): the controllers that turn cluster state into
 * Koordinator objects, and the in-memory NodeMetric API of seed 001 (DESIGN.md section 3.1).
 * Everything runs only on the leader of the `koordinator-manager` Lease (manager-behaviour.md
 * section 10); a standby serves /healthz and /metrics, answers /readyz and the NodeMetric API
 * with 503, and takes over when the leader's lease runs out. A manager that loses the lease
 * stops (on_fatal), as upstream's does: a fresh process starts clean as a standby.
 *
 * Parts, one directory each:
 *   nodeslo/       slo-controller-config -> one NodeSLO per Node (manager-behaviour.md 2)
 *   nodemetric/    the metrics.koordinator.sh NodeMetric API over the memory store, its
 *                  authentication, and the spec of each node's NodeMetric (section 3), also
 *                  kept in the slo.koordinator.sh NodeMetric objects for agents in crd mode
 *   noderesource/  NodeMetrics, Pods, Nodes -> kubernetes.io/batch-cpu, batch-memory (4.4)
 *   quotaprofile/  ElasticQuotaProfile -> the root ElasticQuota of its quota tree (8)
 *   recommendation/ NodeMetric pod usage -> Recommendation status, VPA's algorithm (9;
 *                  docs/recommendation.md)
 *   webhook/       the admission webhooks (5, 6.2, 1.7, 4.8) and their configurations
 *
 *   ui/           the /ui dashboard: live per-node usage, totals, pending pods, QoS events
 *
 * One HTTPS port serves /healthz, /readyz, /metrics, the dashboard and the NodeMetric API. The
 * webhooks have their own port and run on every replica, leader or not (upstream's webhook server
 * does too): /readyz answers 200 only when this replica leads and its webhook server is ready.
 */
#ifndef KOORD_MANAGER_MANAGER_H
#define KOORD_MANAGER_MANAGER_H

#include <stdbool.h>
#include <stdint.h>

#include "http/server.h"
#include "manager/webhook/webhook.h"

struct kube_client;
struct rec_params;

/* Upstream's defaults (manager-behaviour.md 1.1, 10, 11). */
#define MANAGER_DEFAULT_NAMESPACE  "koordinator-system"
#define MANAGER_DEFAULT_LEASE_NAME "koordinator-manager"
/* The Service an APIService for the NodeMetric API names, and the DNS name an aggregating API
 * server checks the serving certificate for (<service>.<namespace>.svc). */
#define MANAGER_SERVICE_NAME "koord-manager"
#define MANAGER_SERVICE_DNS  MANAGER_SERVICE_NAME "." MANAGER_DEFAULT_NAMESPACE ".svc"

/* Whether the leader keeps the slo.koordinator.sh NodeMetric objects (nodemetric/crd.h). */
enum manager_nodemetric_crd {
    MANAGER_NODEMETRIC_CRD_AUTO, /* when the API server serves the CRD: at once, or when it is
                                    installed later (the watch's list retries) */
    MANAGER_NODEMETRIC_CRD_ON,   /* always (failures are retried with backoff) */
    MANAGER_NODEMETRIC_CRD_OFF,  /* never */
};

struct manager_opts {
    struct kube_client *client; /* borrowed; must outlive the manager */

    /* leader election (manager-behaviour.md 10) */
    const char *lease_namespace;       /* NULL = koordinator-system */
    const char *lease_name;            /* NULL = koordinator-manager */
    const char *identity;              /* NULL = <hostname>_<random> */
    long lease_ms, renew_ms, retry_ms; /* 0 = 15 s, 10 s, 2 s */

    /* slo-controller-config */
    const char *config_namespace; /* NULL = koordinator-system */
    const char *config_name;      /* NULL = slo-controller-config */

    /* the HTTPS port */
    const char *host;                 /* listen address; the port is below */
    const char *cert_pem, *key_pem;   /* serving certificate */
    const char *client_ca_pem;        /* cluster CA: client certificates; may be NULL */
    const char *requestheader_ca_pem; /* front-proxy CA; may be NULL */
    const char *const *allowed_names; /* front-proxy CNs; NULL = any */
    const char *admin_group;          /* NULL = system:masters */
    struct http_server_opts limits;   /* only its connection caps are read */
    unsigned long nodemetric_history; /* 0 = 10000 */

    /* NodeResource: only for tests that cannot wait minutes; 0 = the config's values */
    long degrade_scale_ms; /* length of one "minute" of degradeTimeMinutes, 0 = 60000 */

    /* Recommendation controller (on by default: idle without Recommendations) */
    const struct rec_params *recommendation_params; /* NULL = VPA's defaults; copied */
    long recommendation_interval_ms;                /* 0 = 60000 */
    long recommendation_checkpoint_ms;              /* 0 = 60000 */

    /*
     * Standalone registration: when set ("IP:PORT", port 0 for the port served on; anything
     * else fails start with -EINVAL),
     * the leader points the v1alpha1.metrics.koordinator.sh APIService (caBundle = register_ca_pem)
     * and its Service and Endpoints (koordinator-system/koord-manager) at this address, so koord
     * apiserver proxies the NodeMetric API to whichever manager leads.
     */
    const char *register_address;
    const char *register_ca_pem;

    /*
     * The admission webhooks (webhook/server.h), when webhooks is set: listen on
     * webhook_host:webhook_port with webhook_cert_pem/key_pem (for koordinator-webhook-service.
     * koordinator-system.svc), whose CA webhook_ca_pem is the caBundle; handlers and gates from
     * webhook_config (its config name/namespace default to the ones above). register_webhooks
     * ("IP:PORT", port 0 = the webhook port): create the webhook configurations, Service and
     * Endpoints pointing there (standalone mode).
     */
    const char *webhook_host;
    const char *webhook_cert_pem, *webhook_key_pem, *webhook_ca_pem;
    const char *register_webhooks;

    /* The dashboard (ui/ui.h): how long a login session lasts; 0 = one hour. */
    int64_t ui_session_ttl_ms;

    /* Called once, from any thread, when the manager cannot go on (lost the lease). */
    void (*on_fatal)(void *userdata, const char *why);
    void *userdata;

    struct webhook_config webhook_config;

    /* The small members together, after the pointers (no padding between them). */
    enum manager_nodemetric_crd nodemetric_crd;
    uint16_t port;           /* the HTTPS port; 0 = any */
    uint16_t webhook_port;   /* the webhook port */
    bool token_review;       /* check bearer tokens with TokenReview */
    bool recommendation_off; /* no Recommendation controller */
    bool webhooks;           /* serve the admission webhooks */
};

struct manager;

/* Starts serving and campaigning. 0, -EINVAL (bad options), -EADDRINUSE, -errno. */
int manager_start(const struct manager_opts *opts, struct manager **ret);

/* The bound port. */
uint16_t manager_port(const struct manager *m);

/* The bound port of the webhook server, 0 without webhooks. */
uint16_t manager_webhook_port(const struct manager *m);

/* Whether this manager leads and serves (what /readyz answers). */
bool manager_ready(struct manager *m);

/* Stops controllers, watches and the HTTP server, releases the lease, frees. NULL is fine. */
void manager_stop(struct manager *m);

#endif
