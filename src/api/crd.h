/*
 * CustomResourceDefinition manifests generated from the type descriptions, and the structural-
 * schema check kube-apiserver applies to any CRD (apiextensions.k8s.io/v1). The same check will
 * gate CRDs created on koord's own API server.
 */
#ifndef KOORD_API_CRD_H
#define KOORD_API_CRD_H

#include <cjson/cJSON.h>

#include "api/api.h"
#include "api/field.h"

/* Builds the CRD object of k (k->crd must be true). 0 or -ENOMEM. */
int api_crd_build(const struct api_kind *k, cJSON **ret);

/* OpenAPI v3 schema of one description node (what goes under openAPIV3Schema). */
int api_crd_openapi(const struct api_schema *s, cJSON **ret);

/*
 * What the API server's /openapi documents add to api_crd_openapi(): references to named
 * types and per-property extensions. Either hook may be NULL.
 *  - ref is asked about every node below the root before it is written out; o is the node's
 *    (possibly non-empty: a property default) JSON object. Returning 1 means ref wrote the
 *    node itself (a $ref) and its subtree is not walked; 0 writes it inline; < 0 fails.
 *  - prop is called around each property of an object: with enter true before its schema is
 *    written (the caller may track the path), then with enter false and the written child.
 *    Returns 0 or < 0 to fail.
 */
struct api_openapi_hooks {
    int (*ref)(const struct api_schema *s, cJSON *o, void *userdata);
    int (*prop)(const struct api_prop *p, bool enter, cJSON *child, void *userdata);
    void *userdata;
};

/* api_crd_openapi() with hooks (NULL: none). */
int api_crd_openapi_hooked(const struct api_schema *s, const struct api_openapi_hooks *h,
                           cJSON **ret);

/* File name upstream uses for k's manifest: "<group>_<plural>.yaml". */
void api_crd_file_name(const struct api_kind *k, struct strbuf *out);

/*
 * Checks a CRD object the way kube-apiserver does before serving it: apiVersion/kind, names,
 * scope, exactly one storage version, and a structural openAPIV3Schema (every node typed, or
 * int-or-string, or preserving unknown fields; properties and additionalProperties exclusive;
 * array items present; metadata restricted; x-kubernetes-* extensions used where Kubernetes
 * allows them; x-kubernetes-list-type and -list-map-keys well formed; defaults valid against
 * their own schema). Appends errors; returns their number. Each schema node carrying
 * x-kubernetes-validations adds a warning (FIELD_WARNING, not counted): koord does not
 * evaluate CEL rules, so they are not enforced.
 */
size_t api_crd_check(const cJSON *crd, struct field_errors *errs);

/*
 * The defaults kube-apiserver gives a CRD before validating it (apiextensions v1 defaults.go):
 * spec.names.singular = the lower-cased kind, spec.names.listKind = kind + "List", and
 * spec.conversion = {strategy: None}. Aborts on OOM (CHECK), as the object is size-bounded.
 */
void api_crd_default(cJSON *crd);

/*
 * The status kube's CRD controllers write once a CRD is served (apiextensions-apiserver
 * controller/status NamingConditionController and establish EstablishingController), so that
 * `kubectl wait --for=condition=Established` returns: conditions NamesAccepted (reason
 * NoConflicts) and Established (reason InitialNamesAccepted), both True, each keeping its
 * lastTransitionTime while it stays True (else now, RFC 3339); acceptedNames = spec.names; the
 * storage version added to storedVersions (which is never shrunk here). Other conditions and
 * status fields are kept. Aborts on OOM (CHECK).
 */
void api_crd_set_status(cJSON *crd, const char *now);

#endif
