/*
 * The OpenAPI documents an API server publishes, as kube-apiserver publishes them (kube-openapi
 * handler3 for /openapi/v3, handler for /openapi/v2), so that clients reading schemas work:
 * `kubectl explain` (v3), kubectl's check that the server validates fields itself (a PATCH
 * operation carrying the kind and a fieldValidation parameter, reference kubernetes-api.md
 * 10.5), kubectl's strategic merge patches computed from x-kubernetes-patch-* extensions, and
 * its client-side validation of what the server cannot be asked about (`kubectl apply -f` of a
 * `kind: List` file validates every item against /openapi/v2, fetched as protobuf only).
 *
 * One generator, two forms:
 *  - /openapi/v3/<api/v1 | apis/<group>/<version>>: paths (get, list, create, update, patch,
 *    delete, deletecollection, and the status subresource's), each operation tagged with
 *    x-kubernetes-action and x-kubernetes-group-version-kind, and components.schemas holding
 *    the kinds, their Lists and every named type they reach. Built-in kinds come from their
 *    type descriptions (api/schema.h) through api_crd_openapi_hooked(): a node with a def_name
 *    (ObjectMeta, PodSpec, Container, Quantity...) and a kind's spec and status become
 *    definitions of their own under kube's names, referenced by $ref ("allOf": [$ref] when the
 *    reference carries a default or description, as kube writes it). Custom resources come
 *    from their CRD's schema (the description tree the registry built from it) under the name
 *    kube gives them, the reversed group, version and kind ("sh.koordinator.slo.v1alpha1.
 *    NodeSLO"), with metadata a reference to ObjectMeta.
 *  - /openapi/v2: one Swagger 2.0 document with every served kind's definitions (the v3 schemas
 *    with #/definitions/ references, int-or-string and Quantity as kube's v2 writes them), in
 *    JSON or, when asked for, as the gnostic openapi.v2.Document protobuf message that
 *    client-go decodes (OpenAPIv2.proto of github.com/google/gnostic).
 *
 * Documents are generated on first use and cached until the registry's generation changes (a
 * CRD served, replaced or removed). Each answer carries an ETag (the SHA-256 of the document);
 * If-None-Match with it answers 304. The v3 index lists each group-version's URL with
 * ?hash=<its ETag> as kube's does; a request with the current hash is answered with
 * "Cache-Control: public, immutable", one with a stale hash is redirected (301) to the current
 * one, as handler3 does, so a client caching by URL never reads a stale document.
 *
 * Thread-safe: documents are generated and cached under one mutex.
 */
#ifndef KOORD_APISERVER_OPENAPI_H
#define KOORD_APISERVER_OPENAPI_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "base/strbuf.h"

struct api_registry;
struct aggregator;
struct http_request;
struct http_response;

/* The media type client-go asks /openapi/v2 for (and the one kube answers with). */
#define OPENAPI_V2_PROTOBUF_ACCEPT "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
#define OPENAPI_V2_PROTOBUF_TYPE   "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"

struct openapi;

/* The documents of reg (borrowed; it must outlive the result). */
struct openapi *openapi_new(struct api_registry *reg);
void openapi_free(struct openapi *o);

/*
 * Serves GET /openapi/v2, /openapi/v3 and /openapi/v3/<gv> (the index lists agg's group-versions
 * too; agg may be NULL). Returns false for any other path, and for a group-version that is not
 * served, leaving resp untouched (the caller answers 404).
 */
bool openapi_serve(struct openapi *o, struct aggregator *agg, const struct http_request *req,
                   struct http_response *resp);

/* The generated documents as new trees (tests and tools): the v3 document of one group-version
 * (group "" for core; NULL when not served), the v3 index (without hashes' freshness checks),
 * and the v2 document. */
cJSON *openapi_v3_doc(struct openapi *o, const char *group, const char *version);
cJSON *openapi_v3_index(struct openapi *o);
cJSON *openapi_v2_doc(struct openapi *o);

/*
 * Encodes a Swagger 2.0 document as the gnostic openapi.v2.Document protobuf message: swagger,
 * info (title, version), paths (empty: clients read definitions) and definitions with every
 * Schema field kube writes ($ref, format, title, description, default, the numeric and length
 * bounds, pattern, required, enum, additionalProperties, type, items, allOf, properties,
 * readOnly, and x-* vendor extensions as their YAML (JSON) text). Appends to out.
 */
void openapi_v2_protobuf(const cJSON *swagger, struct strbuf *out);

#endif
