/*
 * The questions the API server answers without storing anything (reference kubernetes-api.md
 * 6.6): authentication.k8s.io/v1 TokenReview and SelfSubjectReview (`kubectl auth whoami`),
 * authorization.k8s.io/v1 SubjectAccessReview, LocalSubjectAccessReview,
 * SelfSubjectAccessReview (`kubectl auth can-i`) and SelfSubjectRulesReview (`kubectl auth
 * can-i --list`), and the TokenRequest of serviceaccounts/<name>/token (`kubectl create
 * token`). Each takes the decoded request object and gives the answer kube-apiserver gives
 * (pkg/registry/authorization, pkg/registry/authentication,
 * pkg/registry/core/serviceaccount/storage/token.go), with its validation messages.
 */
#ifndef KOORD_APISERVER_REVIEWS_H
#define KOORD_APISERVER_REVIEWS_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "api/field.h"
#include "base/strbuf.h"

struct api_authz;
struct api_reqinfo;
struct api_resource;
struct api_satokens;
struct api_tokens;
struct api_user;
struct store;

/* Resources whose create is answered by api_review(), for the registry (NULL-terminated by
 * kind NULL): group, plural, kind, namespaced. */
struct api_review_kind {
    const char *group, *plural, *kind;
    bool namespaced;
};
extern const struct api_review_kind api_review_kinds[];

/*
 * Answers a create of res (one of api_review_kinds) with body (owned by the caller; kind and
 * apiVersion checked), asked by u (NULL: an unauthenticated request) in the request ri. On 0
 * *ret is the answer (201 Created). -EINVAL with errs filled (422 Invalid) or, when errs stays
 * empty, with why (400 BadRequest).
 */
int api_review(struct api_authz *az, const struct api_tokens *tokens,
               const struct api_resource *res, const struct api_reqinfo *ri,
               const struct api_user *u, const cJSON *body, cJSON **ret, struct field_errors *errs,
               struct strbuf *why);

/*
 * TokenRequest for the stored ServiceAccount sa (validated spec: expirationSeconds at least
 * 600 s, defaulted to 3600, capped at API_SA_MAX_EXPIRATION; audiences defaulted to the API's;
 * boundObjectRef, when set, a Pod running as sa, a Secret or a Node read from store, which must
 * exist and carry the ref's uid when one is given; the token then names it, and a pod's node):
 * *ret is the TokenRequest answered. now is the Unix time. 0; -EINVAL with errs (422);
 * -ENOTSUP with why when the server issues no tokens (500); -EBADMSG with *ret_status, kube's
 * answer for a bound object that cannot be had (400 BadRequest for another kind or a pod of
 * another service account, 404 NotFound, 409 Conflict for another uid).
 */
int api_token_request(const struct api_satokens *sat, struct store *store, const cJSON *sa,
                      const cJSON *body, int64_t now, cJSON **ret, struct field_errors *errs,
                      cJSON **ret_status, struct strbuf *why);

#endif
