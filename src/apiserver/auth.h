/*
 * Who sent a request, and what a node may write.
 *
 * Authentication (reference kubernetes-api.md 6.4): a client certificate that verified against
 * the cluster CA (user = subject CN, groups = O values) or a bearer token from the static token
 * file. Every authenticated user also has the group system:authenticated.
 *
 * Authorization (the chain is authz.h): a node identity, user "system:node:<name>" (what
 * kubelets and koord agents present), is held to the rule kube-apiserver's Node authorizer and
 * NodeRestriction admission enforce together, narrowed to the objects koord's agent touches:
 *
 *   - reads (get, list, watch) of every resource are allowed;
 *   - nodes, nodes/status: only the Node named <name> (create, update, patch, delete);
 *   - pods, pods/status, pods/eviction: only pods whose spec.nodeName is <name>, both as
 *     stored and as written (so a node cannot move a pod to itself); pods/binding never;
 *   - events: only events whose involvedObject is the Node <name> or whose source.host is
 *     <name> (kubelet and koordlet record their events with the node as source host);
 *   - coordination.k8s.io leases: only the Lease <name> in namespace kube-node-lease
 *     (the node heartbeat);
 *   - nodemetrics of slo.koordinator.sh and metrics.koordinator.sh (and their status): only the
 *     object named <name>;
 *   - authentication.k8s.io tokenreviews: create (kubelet's own authentication webhook); the
 *     self reviews (selfsubjectreviews, selfsubjectaccessreviews, selfsubjectrulesreviews):
 *     create, what system:basic-user grants every user in kube;
 *   - every other write, and deletecollection of anything, is refused with 403 Forbidden.
 */
#ifndef KOORD_APISERVER_AUTH_H
#define KOORD_APISERVER_AUTH_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "base/strbuf.h"

struct api_reqinfo;
struct api_tokens;
struct http_request;

/* An authenticated identity. The strings belong to the request or the token table. */
struct api_user {
    const char *name;
    const char *uid;           /* "" for certificate users */
    const char *const *groups; /* NULL-terminated, without system:authenticated; may be NULL */
    const char *const *extra;  /* NULL-terminated key, value, key, value...; may be NULL */
    bool groups_exact;         /* system:authenticated only when listed in groups (the user a
                                  SubjectAccessReview names is taken as it is given) */
    void *priv;                /* an external authenticator's (apiserver.h), else NULL */
};

/*
 * The user of a request: its verified client certificate, else its bearer token looked up in
 * tokens (may be NULL). 0, -ENOENT when it presents neither, -EACCES when what it presents does
 * not verify (an unknown token, a certificate from another CA).
 */
int api_authenticate(const struct http_request *req, const struct api_tokens *tokens,
                     struct api_user *ret);

/* The node name of a node identity ("n1" for "system:node:n1"), else NULL. */
const char *api_user_node(const struct api_user *u);

enum api_authz_node {
    API_AUTHZ_ALLOW,         /* no object needs to be seen */
    API_AUTHZ_DENY,          /* refused by the request alone */
    API_AUTHZ_CHECK_OBJECTS, /* allowed if every object it reads or writes passes the check */
};

/* The decision for a request by the node named node, from the request alone. */
enum api_authz_node api_authz_node_request(const char *node, const struct api_reqinfo *ri);

/* For API_AUTHZ_CHECK_OBJECTS: whether obj (stored or about to be written) is about node. */
bool api_authz_node_object(const char *node, const struct api_reqinfo *ri, const cJSON *obj);

/* kube-apiserver's Forbidden message, e.g. `pods "p" is forbidden: User "system:node:n1"
 * cannot update resource "pods" in API group "" in the namespace "default"`, plus why. */
void api_authz_forbidden_message(const char *user, const struct api_reqinfo *ri, const char *name,
                                 const char *why, struct strbuf *out);

#endif
