/*
 * Service-account tokens: what TokenRequest (POST .../serviceaccounts/<name>/token, `kubectl
 * create token`) issues and what authentication and TokenReview accept, as kube-apiserver's
 * pkg/serviceaccount/jwt.go and claims.go shape them: a JWT whose claims are iss, sub
 * ("system:serviceaccount:<ns>:<name>"), aud (the requested audiences), iat, nbf, exp, jti and
 * "kubernetes.io": {namespace, serviceaccount: {name, uid}}, plus, for a token bound to an
 * object (TokenRequest's spec.boundObjectRef, what the kubelet asks for a pod's projected
 * token), the private claims pod / secret / node: {name, uid} (a pod-bound token also names the
 * node the pod was bound to at issue, KEP-4193's ServiceAccountTokenPodNodeInfo).
 *
 * kube signs with an RSA or ECDSA key so that others can verify tokens through the issuer's
 * OIDC discovery document; koord signs with HMAC-SHA256 (HS256) under a 256-bit key kept in
 * the data directory (pki/sa.key), because only the server itself verifies its tokens (here
 * and through TokenReview). A token is good while its signature verifies, the clock is within
 * [nbf, exp) (60 s leeway, as kube allows), one of its audiences is wanted, and (checked by the
 * caller, authz.c) the service account still exists with the same uid.
 */
#ifndef KOORD_APISERVER_SATOKEN_H
#define KOORD_APISERVER_SATOKEN_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

/* kube-apiserver's default --service-account-issuer and API audience. */
#define API_SA_ISSUER "https://kubernetes.default.svc.cluster.local"

/* Token lifetimes kube accepts: at least 10 minutes, 1 hour by default. */
#define API_SA_MIN_EXPIRATION     600
#define API_SA_DEFAULT_EXPIRATION 3600
/* The longest koord issues (kube's --service-account-max-token-expiration is unset: 2^32 s). */
#define API_SA_MAX_EXPIRATION ((int64_t)48 * 3600)

struct api_satokens;

/* A signer/verifier over key[0..len) (at least 32 bytes). NULL only for a short key. */
struct api_satokens *api_satokens_new(const void *key, size_t len);
void api_satokens_free(struct api_satokens *s);

/* Reads the key file at path, or creates it (0600) with 32 random bytes when absent; the key
 * is appended to key. 0, -EINVAL (a file that is not 64 hex digits), -errno. */
int api_satokens_load_key(const char *path, struct strbuf *key);

/* An object a token is bound to (name NULL: none). Strings owned by whoever holds it. */
struct api_satoken_ref {
    char *name, *uid;
};

/* The objects a token is bound to: a pod (and the node it runs on), a secret, or a node. */
struct api_satoken_binding {
    struct api_satoken_ref pod, secret, node;
};

/* Frees the strings of b and zeroes it. NULL and a zeroed binding are fine. */
void api_satoken_binding_release(struct api_satoken_binding *b);

/*
 * Issues a token for service account ns/name (uid) good for audiences (a NULL-terminated list,
 * not empty) from now for seconds, bound to the objects of bound (NULL: none); the JWT is
 * appended to out. jti is a fresh random id.
 */
void api_satokens_issue(const struct api_satokens *s, const char *ns, const char *name,
                        const char *uid, const struct api_satoken_binding *bound,
                        const char *const *audiences, int64_t now, int64_t seconds,
                        struct strbuf *out);

/* What a verified token says. Strings owned by the struct; release with
 * api_satoken_claims_release. */
struct api_satoken_claims {
    char *ns, *name, *uid, *jti;
    struct api_satoken_binding
        bound;        /* the bound-object claims (a name without uid is malformed) */
    char **audiences; /* NULL-terminated */
    int64_t exp;
};

/*
 * Verifies token at now for one of audiences (NULL-terminated; NULL = API_SA_ISSUER). 0 with
 * *ret filled; -EINVAL when it is not a koord service-account token at all (another
 * authenticator may know it); -EACCES when it is one but bad, expired or for other audiences
 * (why says which).
 */
int api_satokens_verify(const struct api_satokens *s, const char *token,
                        const char *const *audiences, int64_t now, struct api_satoken_claims *ret,
                        struct strbuf *why);
void api_satoken_claims_release(struct api_satoken_claims *c);

#endif
