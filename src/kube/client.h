/*
 * The Kubernetes REST client: get, list, create, update, patch and delete on any resource,
 * named either by a compiled-in kind (api/api.h: the "typed" calls take the object and find
 * its resource from apiVersion/kind) or by group/version/plural (the "untyped" calls, for
 * aggregated APIs and anything the registry does not know). Bodies are cJSON trees; requests
 * send and accept application/json only (reference kubernetes-api.md sections 1-3).
 *
 * Errors come back as -errno with the decoded Status in an optional struct kube_status:
 *
 *   HTTP  reason                  errno           HTTP  reason               errno
 *   400   BadRequest              -EINVAL         410   Expired/Gone         -ERANGE
 *   401   Unauthorized            -EACCES         413   RequestEntityTooLarge -E2BIG
 *   403   Forbidden               -EACCES         415   UnsupportedMediaType -EPROTO
 *   404   NotFound                -ENOENT         422   Invalid              -EINVAL
 *   405   MethodNotAllowed        -EOPNOTSUPP     429   TooManyRequests      -EAGAIN
 *   406   NotAcceptable           -EPROTO         500   InternalError...     -EIO
 *   409   AlreadyExists           -EEXIST         503   ServiceUnavailable   -EAGAIN
 *   409   Conflict (and others)   -ESTALE         504   Timeout              -ETIMEDOUT
 *   other 4xx                     -EPROTO         other 5xx                -EIO
 *
 * and transport failures as in http/client.h (-ECONNREFUSED, -ETIMEDOUT, -EPROTO for TLS,
 * -ECANCELED, -EIO); their kube_status has code 0 and the message says what failed.
 *
 * A client-side token bucket (struct kube_config qps/burst) spaces requests; watches take one
 * token when they start. Thread safety: every call may run concurrently on one client.
 */
#ifndef KOORD_KUBE_CLIENT_H
#define KOORD_KUBE_CLIENT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

struct api_kind;
struct kube_config;
struct http_client_cancel;
struct http_client_resp;
struct strbuf;

/* A REST resource: where its objects live. Static strings. */
struct kube_resource {
    const char *group; /* "" for core */
    const char *version;
    const char *plural;
    const char *kind;
    bool namespaced;
};

/* The resources koord's controllers use. */
extern const struct kube_resource kube_res_pods, kube_res_nodes, kube_res_configmaps,
    kube_res_events, kube_res_leases, kube_res_nodeslos, kube_res_nodemetrics;

/* The resource of a compiled-in kind. */
void kube_resource_of_kind(const struct api_kind *k, struct kube_resource *ret);

/* The decoded error of a failed call. */
struct kube_status {
    int code;           /* HTTP status; 0 for a transport failure */
    char reason[64];    /* Status.reason ("NotFound", "Conflict", ...) or "" */
    char message[512];  /* Status.message, or the transport error */
    long retry_after_s; /* Retry-After / details.retryAfterSeconds, 0 when absent */
};

/*
 * Decodes an error response (status >= 400) into *ret (may be NULL) and returns its -errno per
 * the table above. A body that is not a Status still maps by HTTP code; its first bytes become
 * the message. Codes < 400 return 0.
 */
int kube_status_decode(int http_code, const char *body, size_t len, struct kube_status *ret);

/* Whether r/st mean "410: relist" (HTTP 410, reason Expired or Gone). */
bool kube_status_is_expired(int r, const struct kube_status *st);

struct kube_client;

/* Takes ownership of cfg (freed with the client, also on failure). 0, -ENOMEM, -EIO. */
int kube_client_new(struct kube_config *cfg, struct kube_client **ret);
void kube_client_free(struct kube_client *c);

/* The configuration the client runs with (borrowed). */
const struct kube_config *kube_client_config(const struct kube_client *c);

/* Changes the rate limit at run time (qps <= 0 = unlimited). */
void kube_client_set_rate_limit(struct kube_client *c, double qps, unsigned burst);

/* The collection URL path of r in ns ("" or NULL for cluster scope / all namespaces), with
 * name and subresource appended when set; into out (reset first). */
void kube_path(const struct kube_resource *r, const char *ns, const char *name,
               const char *subresource, struct strbuf *out);

enum kube_patch_type {
    KUBE_PATCH_MERGE,     /* application/merge-patch+json (RFC 7386) */
    KUBE_PATCH_JSON,      /* application/json-patch+json (RFC 6902) */
    KUBE_PATCH_STRATEGIC, /* application/strategic-merge-patch+json (built-in kinds only) */
};

struct kube_list_opts {
    const char *label_selector;
    const char *field_selector;
    const char *resource_version; /* NULL = consistent read */
    unsigned limit;               /* page size; 0 = no paging */
    const char *continue_token;
};

/*
 * The untyped calls. ns is ignored for cluster-scoped resources; *ret (may be NULL) receives
 * the response object on success (cJSON_Delete() it). st may be NULL. A write with ret NULL
 * asks the server for the object's metadata only (PartialObjectMetadata), not the whole object
 * it would not read.
 */
int kube_get(struct kube_client *c, const struct kube_resource *r, const char *ns, const char *name,
             cJSON **ret, struct kube_status *st);
/* One page (or all, without a limit): the List object. */
int kube_list(struct kube_client *c, const struct kube_resource *r, const char *ns,
              const struct kube_list_opts *o, cJSON **ret, struct kube_status *st);
int kube_create(struct kube_client *c, const struct kube_resource *r, const char *ns,
                const cJSON *obj, cJSON **ret, struct kube_status *st);
/* PUT to the object named in obj.metadata.name; obj's resourceVersion is the precondition.
 * subresource NULL or "status". */
int kube_update(struct kube_client *c, const struct kube_resource *r, const char *ns,
                const cJSON *obj, const char *subresource, cJSON **ret, struct kube_status *st);
int kube_patch(struct kube_client *c, const struct kube_resource *r, const char *ns,
               const char *name, const char *subresource, enum kube_patch_type type,
               const cJSON *patch, cJSON **ret, struct kube_status *st);
int kube_delete(struct kube_client *c, const struct kube_resource *r, const char *ns,
                const char *name, struct kube_status *st);

/*
 * The typed calls: the resource comes from obj's apiVersion and kind (api/api.h registry) and
 * the namespace from obj.metadata.namespace. -EINVAL with st->message when the kind is
 * unknown.
 */
int kube_create_object(struct kube_client *c, const cJSON *obj, cJSON **ret,
                       struct kube_status *st);
int kube_update_object(struct kube_client *c, const cJSON *obj, cJSON **ret,
                       struct kube_status *st);
int kube_delete_object(struct kube_client *c, const cJSON *obj, struct kube_status *st);

/*
 * Any request: path with its query ("/api/v1/pods?limit=1"), body NULL or JSON text with
 * content_type NULL (= application/json). 2xx → 0 and *ret the parsed body (NULL for an empty
 * one); errors as above.
 */
int kube_request(struct kube_client *c, const char *method, const char *path, const char *body,
                 const char *content_type, cJSON **ret, struct kube_status *st);

/*
 * A streamed GET for watches: on_data gets the body as it arrives (see http/client.h); cancel
 * (may be NULL) stops it. Returns 0 after the stream ended, or an error; resp->status tells a
 * 200 stream from an error answer, whose Status body on_data also received.
 */
int kube_stream(struct kube_client *c, const char *path,
                int (*on_data)(void *userdata, long status, const char *data, size_t len),
                void *userdata, struct http_client_cancel *cancel, struct http_client_resp *resp);

#endif
