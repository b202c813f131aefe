/*
 * Who may read and write the manager's NodeMetric API, as an extension API server built on
 * k8s.io/apiserver decides it (reference kubernetes-api.md 6.4-6.6), without RBAC.
 *
 * Authentication, per request, first that applies:
 *   1. front proxy: a client certificate signed by the request-header CA (kube-apiserver's, or
 *      koord apiserver's, front-proxy client) whose CN is allowed: the user is X-Remote-User,
 *      the groups every X-Remote-Group, the node-name extra X-Remote-Extra-Authentication.
 *      kubernetes.io%2fnode-name. Without X-Remote-User it does not apply;
 *   2. a client certificate signed by the cluster CA: user = CN, groups = O (how node agents
 *      holding kubelet-style certificates, system:node:<name>, report straight to the leader);
 *   3. a bearer token, checked with a TokenReview against the API server; answers (both
 *      authenticated and not) are cached for a TTL (10 s, as k8s.io/apiserver's delegating
 *      authenticator caches both successes and failures), keyed by the token's SHA-256 so the
 *      cache holds no secrets; errors reaching the API server are not cached and answer 401.
 *      TokenReviews are bounded by a token bucket (review_qps, refilled continuously, up to
 *      review_burst at once): a token neither cached nor affordable is answered 401 without a
 *      review and without being cached, so a client sending random tokens costs the API
 *      server at most review_qps requests per second, and can push at most review_qps x TTL
 *      failures into the cache (far fewer than cache_max, so known tokens are not evicted).
 *      Upstream's delegating authenticator rate-limits its TokenReview client instead,
 *      queueing requests; a queue would hold a thread per waiting request here.
 *
 * Authorization: reads (get, list, watch) are allowed to every authenticated user. Writes (the
 * status of a NodeMetric) are allowed to a node identity for its own node only (user
 * system:node:<name>, or the authentication.kubernetes.io/node-name extra a service-account
 * token bound to a pod carries), and to members of the admin group (default system:masters);
 * everyone else gets 403.
 */
#ifndef KOORD_MANAGER_NODEMETRIC_AUTH_H
#define KOORD_MANAGER_NODEMETRIC_AUTH_H

#include <stddef.h>

struct apiserver_auth;
struct kube_client;

struct nodemetric_auth_opts {
    const char *client_ca_pem;        /* cluster CA for client certificates; NULL = none */
    const char *requestheader_ca_pem; /* front-proxy CA; NULL = no front proxy */
    const char *const *allowed_names; /* front-proxy CNs (NULL-terminated); NULL/empty = any */
    struct kube_client *tokenreview;  /* where TokenReviews go (borrowed); NULL = no tokens */
    long cache_ttl_ms;                /* 0 = 10000 */
    size_t cache_max;                 /* tokens remembered; 0 = 10000 */
    double review_qps;                /* TokenReviews per second; 0 = 200 */
    unsigned review_burst;            /* TokenReviews at once; 0 = 400 */
    const char *admin_group;          /* NULL = "system:masters" */
};

struct nodemetric_auth;

/* Copies opts (strings included; tokenreview stays borrowed) and parses the CAs once.
 * 0, -EINVAL when a CA is not PEM certificates, -ENOMEM. */
int nodemetric_auth_new(const struct nodemetric_auth_opts *opts, struct nodemetric_auth **ret);
void nodemetric_auth_free(struct nodemetric_auth *a);

/* The hooks for apiserver_new_opts(), valid while a lives. */
const struct apiserver_auth *nodemetric_auth_hooks(struct nodemetric_auth *a);

/*
 * Authenticates a bearer token given directly rather than in a request's Authorization header
 * (the dashboard's login form, ui.h): the same TokenReview, cache and rate as for requests.
 * 0 with *ret filled (release it with the hooks' release), -ENOENT when tokens are not
 * checked here (no TokenReview client), -EACCES when the token is not valid or cannot be
 * checked now, -E2BIG past 64 KiB.
 */
struct api_user;
int nodemetric_auth_token(struct nodemetric_auth *a, const char *token, struct api_user *ret);

/* TokenReviews sent so far (for /metrics and tests of the cache). */
unsigned long nodemetric_auth_reviews(struct nodemetric_auth *a);

/* Counters for /metrics. */
struct nodemetric_auth_stats {
    unsigned long reviews;       /* TokenReviews sent (cache misses within the rate) */
    unsigned long throttled;     /* tokens answered 401 unreviewed: over the rate */
    unsigned long cached_denied; /* tokens answered 401 from the cache (failed recently) */
};
void nodemetric_auth_stats(struct nodemetric_auth *a, struct nodemetric_auth_stats *ret);

#endif
