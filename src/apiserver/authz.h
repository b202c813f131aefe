/*
 * Who may do what in `koord apiserver`: the authorizer chain kube-apiserver builds from
 * --authorization-mode (pkg/kubeapiserver/authorizer/config.go, union.go), impersonation
 * (apiserver pkg/endpoints/filters/impersonation.go) and the admission checks of RBAC writes.
 *
 * The chain. Members of system:masters are always allowed (kube's privileged-group
 * authorizer). Then each mode in order; the first that allows or denies decides, and a request
 * no mode decides is refused:
 *   - Node: the node rule of auth.h for node identities (system:node:<name>). koord's node rule
 *     also carries what NodeRestriction admission enforces, so unlike kube's Node authorizer it
 *     denies what it does not allow (no later mode can widen what a node writes); it has no
 *     opinion on other users.
 *   - RBAC: rbac.h. Allows or has no opinion.
 *   - AlwaysAllow, AlwaysDeny: what they say.
 * The default is "Node,AlwaysAllow": every authenticated user may do everything except a node,
 * which is what the server did before RBAC existed; `--authorization-mode=Node,RBAC` is kube's
 * production setting. RBAC in the chain also creates kube's bootstrap roles at start and turns
 * on the escalation check of RBAC writes.
 *
 * Impersonation (reference kubernetes-api.md 11.1): a request carrying Impersonate-User (and
 * optionally Impersonate-Group, repeated, Impersonate-Uid, Impersonate-Extra-<key>) runs as that
 * user once the requester may `impersonate` each part: users/<name>, or serviceaccounts/<name>
 * in <namespace> for system:serviceaccount:<namespace>:<name> (core group); groups/<group>;
 * uids/<uid> and userextras/<key> with the value as name (authentication.k8s.io).
 */
#ifndef KOORD_APISERVER_AUTHZ_H
#define KOORD_APISERVER_AUTHZ_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "api/field.h"
#include "base/strbuf.h"

struct api_reqinfo;
struct api_resource;
struct api_satokens;
struct api_tokens;
struct api_user;
struct http_request;
struct store;

struct api_authz;

/* A chain over store (borrowed) in the default mode. */
struct api_authz *api_authz_new(struct store *store);
void api_authz_free(struct api_authz *az);

/* Sets the modes from a comma-separated list (Node, RBAC, AlwaysAllow, AlwaysDeny; each at most
 * once; not empty). 0; -EINVAL with why. Before serving only. */
int api_authz_set_modes(struct api_authz *az, const char *modes, struct strbuf *why);

bool api_authz_rbac_enabled(const struct api_authz *az);

/* With RBAC in the chain: creates the bootstrap roles and bindings that are missing (rbac.h).
 * 0 or -errno. */
int api_authz_bootstrap(struct api_authz *az, const char *now, void (*new_uid)(char uid[37]));

/* Service-account tokens to accept (satoken.h; borrowed, may be NULL). */
void api_authz_set_satokens(struct api_authz *az, struct api_satokens *sat);

enum api_authz_decision {
    API_AUTHZ_DECISION_ALLOW,
    API_AUTHZ_DECISION_ALLOW_CHECK_OBJECTS, /* the node rule: every object must be about it */
    API_AUTHZ_DECISION_DENY,                /* a mode refused it (the node rule, AlwaysDeny) */
    API_AUTHZ_DECISION_NO_OPINION,          /* no mode decided: refused too, but not explicitly */
};

/*
 * The decision for u doing ri. reason (may be NULL) receives why: the allowing binding, or
 * for a refusal, what kube's authorizers append to the Forbidden message (may stay empty).
 */
enum api_authz_decision api_authz_decide(struct api_authz *az, const struct api_user *u,
                                         const struct api_reqinfo *ri, struct strbuf *reason);

/* Appends to resource_rules and non_resource_rules (arrays of ResourceRule / NonResourceRule)
 * what u may do in namespace ns, as SelfSubjectRulesReview reports it; returns whether the
 * list is incomplete (a mode that cannot list its rules, such as the node rule, took part). */
bool api_authz_rules(struct api_authz *az, const struct api_user *u, const char *ns,
                     cJSON *resource_rules, cJSON *non_resource_rules);

/* An identity the server made for one request (impersonated, or from a service-account token),
 * owning the strings a struct api_user points to. */
struct api_ident;
void api_ident_free(struct api_ident *id);

/*
 * Authentication with the server's credentials: api_authenticate(), then service-account tokens
 * for bearer tokens the token file does not know. On success *ret is set and *ret_ident (may be
 * NULL) owns its strings until api_ident_free. Returns as api_authenticate does.
 */
int api_authz_authenticate(struct api_authz *az, const struct http_request *req,
                           const struct api_tokens *tokens, struct api_user *ret,
                           struct api_ident **ret_ident);

/* TokenReview: the user of token when it is good for one of audiences (NULL-terminated; NULL or
 * empty = the API's own): a static token (API audience only) or a service-account token. 0 with
 * *ret (strings in *ret_ident when not NULL), -EACCES. */
int api_authz_review_token(struct api_authz *az, const struct api_tokens *tokens, const char *token,
                           const char *const *audiences, struct api_user *ret,
                           struct api_ident **ret_ident);

/*
 * Impersonation: when req carries Impersonate-* headers, checks that u may impersonate each
 * part and replaces *u with the impersonated user (the old identity in *ident is released).
 * 0 (also without headers); -EINVAL with why (400: groups, uid or extras without a user);
 * -EPERM with why, kube's Forbidden message (403).
 */
int api_authz_impersonate(struct api_authz *az, const struct http_request *req, struct api_user *u,
                          struct api_ident **ident, struct strbuf *why);

/*
 * The checks kube's RBAC storage makes on a Role, ClusterRole, RoleBinding or ClusterRoleBinding
 * about to be written by u (old is the stored object of an update, else NULL): subjects' and
 * roleRef's apiGroup defaulted; roleRef immutable (-EINVAL, errs); with RBAC in the chain, no
 * escalation (-EPERM with why) unless u may escalate the role or bind the role referenced.
 * 0 for other resources.
 */
int api_authz_admit(struct api_authz *az, const struct api_user *u, const struct api_resource *res,
                    const cJSON *old, cJSON *obj, struct field_errors *errs, struct strbuf *why);

/* A write to group/plural succeeded: RBAC objects are read again before the next decision,
 * and a ClusterRole write runs aggregation. */
void api_authz_note_write(struct api_authz *az, const char *group, const char *plural);

/* For SelfSubjectReview, TokenReview: the user as an authentication.k8s.io/v1 UserInfo (with
 * system:authenticated among the groups). */
cJSON *api_authz_user_info(const struct api_user *u);

#endif
