/*
 * The output side of content negotiation (reference kubernetes-api.md 1.8): which form of its
 * answer a resource request asked for in its Accept header. Besides the resource's own JSON a
 * client may ask for a meta.k8s.io view of it: a Table (kubectl get), or only the metadata,
 * PartialObjectMetadata for one object and PartialObjectMetadataList for a list. Metadata-only
 * is what kube-controller-manager's garbage collector and quota controllers list and watch
 * every resource with (reference 6.8), and what a writer that needs no more than the new
 * resourceVersion asks for, so that a 17 KB NodeMetric report is not sent back to its agent.
 * kube-apiserver gives the same answers (apiserver handlers/response.go).
 */
#ifndef KOORD_APISERVER_NEGOTIATE_H
#define KOORD_APISERVER_NEGOTIATE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

enum negotiate_as {
    NEGOTIATE_OBJECT,       /* the resource's own JSON */
    NEGOTIATE_TABLE,        /* meta.k8s.io Table (table.h) */
    NEGOTIATE_PARTIAL,      /* meta.k8s.io PartialObjectMetadata: kind, apiVersion, metadata */
    NEGOTIATE_PARTIAL_LIST, /* meta.k8s.io PartialObjectMetadataList of those */
};

struct negotiate_output {
    enum negotiate_as as;
    const char *api_version; /* of a meta.k8s.io form: "meta.k8s.io/v1" or "meta.k8s.io/v1beta1" */
    bool yaml;               /* application/yaml: the same answer written as YAML (not watches) */
};

/* The 406 message when nothing listed is acceptable (apiserver negotiation/errors.go). */
#define NEGOTIATE_NOT_ACCEPTABLE                                                                   \
    "only the following media types are accepted: application/json, application/yaml"

/*
 * Picks the form to answer in from an Accept header (NULL or empty: the object as JSON), as
 * kube-apiserver's NegotiateOutputMediaType does: media ranges by q (highest first, q=0 never,
 * then the more specific, then in the order written); the first that names JSON
 * (application/json, or a wildcard range that covers it) or YAML (application/yaml: ret->yaml,
 * the answer is the JSON one written as YAML, as kube-apiserver's YAML serializer does for every
 * non-streaming answer) with an acceptable conversion wins. A conversion is
 * the parameters as, g and v together: Table, PartialObjectMetadata or
 * PartialObjectMetadataList in meta.k8s.io v1 or v1beta1; a range with any other as, g or v is
 * passed over, and so is one whose form does not fit the answer: list is whether it is a
 * collection (list), not one object (get, writes, and the objects of watch events), so
 * PartialObjectMetadata fits only one object and PartialObjectMetadataList only a list. Other
 * parameters (charset, pretty, stream) are ignored. Returns 0, or -EINVAL when no range is
 * acceptable (answer 406 NotAcceptable with NEGOTIATE_NOT_ACCEPTABLE).
 */
int negotiate_output(const char *accept, bool list, struct negotiate_output *ret);

/*
 * Writes the PartialObjectMetadata of the JSON object in obj[0..len) to out:
 * {"kind":"PartialObjectMetadata","apiVersion":<api_version>,"metadata":<its metadata>}, the
 * metadata's bytes as they are ({} when it has none). Returns -EINVAL (out untouched) when obj
 * is not a JSON object, and -ENOENT when its kind is Status (which is never converted).
 */
int negotiate_partial(const char *obj, size_t len, const char *api_version, struct strbuf *out);

#endif
