/*
 * Request bodies in the three forms kube-apiserver reads (reference kubernetes-api.md 1.8,
 * protobuf.md): JSON, YAML (application/yaml, one document) and protobuf
 * (application/vnd.kubernetes.protobuf, what client-go's typed clients send: kubectl create
 * namespace/configmap/secret/service/priorityclass). Whatever the form, the server goes on with
 * the same cJSON tree, and answers JSON unless the client asked for YAML; the answer's form is
 * converted here too, in one place, so no handler has to know about YAML.
 */
#ifndef KOORD_APISERVER_BODY_H
#define KOORD_APISERVER_BODY_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "base/strbuf.h"
#include "http/server.h"

/* Why a body was refused: the HTTP status (400 or 415, 413 never: the server's body limit came
 * first), its Status reason and message. */
struct body_error {
    int status;
    const char *reason;
    char msg[320];
};

/*
 * Decodes body[0..len) by its Content-Type (media type only, parameters ignored; none is JSON):
 * application/json, application/yaml (exactly one document) or application/vnd.kubernetes.protobuf
 * (api/protobuf.h: kind and apiVersion come from the envelope). Any other type is 415. Returns 0
 * with *ret a new tree (any JSON value: the caller checks it is an object of the right kind), or
 * -1 with err filled.
 */
int body_decode(const char *content_type, const char *body, size_t len, cJSON **ret,
                struct body_error *err);

/*
 * Go's decoder keeps the last of repeated object keys; cJSON keeps them all and finds the first.
 * Removes every earlier occurrence from o (recursively), so lookups see what kube sees, and
 * appends the path of each repeated key once, one a line ("metadata.name",
 * "spec.containers[0].image"), for the `duplicate field "<path>"` warnings or strict errors of
 * fieldValidation (sigs.k8s.io/json's strict decoding). Objects are checked by sorting their
 * keys: O(n log n) for any body.
 */
void body_dedupe_keys(cJSON *o, struct strbuf *paths);

/*
 * Rewrites a finished JSON answer (resp->body, Content-Type application/json, not a stream) as
 * YAML, the way kube-apiserver's YAML serializer writes the same object; anything else is left
 * alone. An answer that does not parse (it always does) stays JSON.
 */
void body_answer_yaml(struct http_response *resp);

#endif
