/*
 * The aggregation layer (reference kubernetes-api.md 6): what lets `koord apiserver` serve a
 * group-version that another server implements, exactly as kube-apiserver does for
 * metrics-server, so that `kubectl get nodemetrics` through the API server reaches the NodeMetric
 * API koord-manager serves from memory (DESIGN.md 3.1, group metrics.koordinator.sh).
 *
 *  - APIService objects (apiregistration.k8s.io/v1, stored like any object) name the
 *    group-version and a Service. There is no kube-proxy here, so the Service is resolved the way
 *    kube-apiserver does with --enable-aggregator-routing=true: the Service's port whose `port`
 *    is spec.service.port, then a random ready address of its Endpoints object that carries a
 *    port of the same name (ExternalName services: spec.externalName). The Service's cluster IP
 *    is never used: nothing routes it.
 *  - Every request under /apis/<group>/<version>/ of an APIService with a service (watches,
 *    subresources and all verbs included) is authenticated here (401 without an identity), then
 *    forwarded over TLS to the resolved endpoint, verifying the serving certificate against
 *    spec.caBundle for the name <service>.<namespace>.svc (unless insecureSkipTLSVerify), and
 *    presenting the front-proxy client certificate. The caller's Authorization and X-Remote-*
 *    headers are dropped; X-Remote-User and one X-Remote-Group per group (system:authenticated
 *    included) say who asked. Path, query, body and the other headers go as they came; status,
 *    headers and body come back as they are, streamed as they arrive (a watch stays open as long
 *    as the backend keeps it open). There is no RBAC here: authorization of aggregated resources
 *    is the extension server's (reference 6.5), except that a node identity's writes are held to
 *    auth.h's rule for the object named in the URL and in the body.
 *  - A background loop (every interval, and at once after a write to an APIService, Service or
 *    Endpoints) checks each APIService as kube-aggregator's remote_available_controller.go does:
 *    Service, port, Endpoints, then GET /apis/<group>/<version> on the backend as
 *    system:kube-aggregator / system:masters, 2xx passing; it writes status.conditions
 *    Available (True "Passed", or False "ServiceNotFound", "ServicePortError",
 *    "EndpointsNotFound", "MissingEndpoints", "FailedDiscoveryCheck" with kube's messages; local
 *    APIServices without a service are True "Local") when it changed. Requests for a
 *    group-version that is not Available are 503 ServiceUnavailable at once.
 *  - Discovery: /apis lists each aggregated group-version (preferred version by versionPriority)
 *    and /apis/<group> is answered here, as kube-apiserver does; /apis/<group>/<version> is the
 *    backend's own APIResourceList, proxied. The /openapi/v3 index lists the group-version too,
 *    and its document /openapi/v3/apis/<group>/<version> is the backend's, proxied (what
 *    kubectl create and apply read before they send an object).
 *  - A group-version this server already serves (built-in or CRD) cannot get an APIService with a
 *    service (422). A CRD created later for a proxied group-version is shadowed by the APIService
 *    while that exists.
 *  - At start the kube-system/extension-apiserver-authentication ConfigMap is written with the CA
 *    extension servers trust for client certificates and the request-header settings they check
 *    front-proxy requests with (reference 6.3).
 *
 * Thread safety: every function may be called from any request thread; the loop runs on a
 * thread of its own.
 */
#ifndef KOORD_APISERVER_AGGREGATOR_H
#define KOORD_APISERVER_AGGREGATOR_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "api/field.h"

struct api_registry;
struct api_user;
struct http_request;
struct http_response;
struct store;

struct aggregator_opts {
    const char *proxy_cert_file;      /* front-proxy client certificate (PEM file) */
    const char *proxy_key_file;       /* and its key */
    const char *client_ca_pem;        /* the cluster CA: ConfigMap key client-ca-file */
    const char *requestheader_ca_pem; /* CA of the front-proxy client certificate:
                                         requestheader-client-ca-file */
    const char *const *allowed_names; /* requestheader-allowed-names, NULL-terminated; NULL =
                                         {"front-proxy-client"}, {NULL} = any name */
    const char *work_dir;             /* private directory for the caBundle files curl reads */
    unsigned interval_ms;             /* availability re-check period; 0 = 5000 */
    unsigned check_timeout_ms;        /* one discovery check, connect included; 0 = 5000 */
};

struct aggregator;

/*
 * Writes the extension-apiserver-authentication ConfigMap (replacing what differs), then starts
 * the availability loop over store (borrowed, like reg, the registry collisions are checked
 * against; both must outlive the aggregator). Copies opts. 0, -EINVAL (missing option),
 * -ENOMEM, errors of the store.
 */
int aggregator_new(struct store *store, struct api_registry *reg,
                   const struct aggregator_opts *opts, struct aggregator **ret);

/*
 * Proxies req when its path is under /apis/<group>/<version> of an APIService with a service
 * (or is that group-version's /openapi/v3/apis/<group>/<version>),
 * filling resp (a stream for the body, or an error Status): returns true. false (resp untouched)
 * for every other path. user is the authenticated identity or NULL (then 401); node, when not
 * NULL, is the node a node identity writing speaks for (the body's metadata.name must be it).
 */
bool aggregator_handle(struct aggregator *a, const struct http_request *req,
                       const struct api_user *user, const char *node, struct http_response *resp);

/* Tells the loop that an object of group/plural was written: APIServices, Services and
 * Endpoints start a check at once. */
void aggregator_note_write(struct aggregator *a, const char *group, const char *plural);

/*
 * Adds the aggregated group-versions to a discovery document: group NULL for the APIGroupList of
 * /apis (*doc), else the APIGroup of /apis/<group> (*doc is NULL when nothing local serves the
 * group; it is then created when an APIService names the group).
 */
void aggregator_discovery(struct aggregator *a, const char *group, cJSON **doc);

/* Adds "apis/<group>/<version>" of every aggregated group-version to an /openapi/v3 index. */
void aggregator_openapi_index(struct aggregator *a, cJSON *index);

/*
 * The APIService rules beyond its schema, for obj about to be created (old NULL) or to replace
 * old: create clears status (as kube-aggregator's strategy does), and a remote APIService may not
 * name a group-version reg already serves. 0, or -EINVAL with errs filled.
 */
int aggregator_admit(struct api_registry *reg, const cJSON *old, cJSON *obj,
                     struct field_errors *errs);

/* Ends every proxied stream and the loop; later requests get 503. Idempotent. NULL is fine. */
void aggregator_stop(struct aggregator *a);

/* Stops, then frees. No proxied stream may still be open (stop the HTTP server first). */
void aggregator_free(struct aggregator *a);

#endif
