/*
 * Internals shared by the files of src/apiserver that serve requests: the server and the
 * per-request context (struct apiserver__call), and the helpers the verbs' files call across.
 * apiserver.c creates the server and routes each request to a verb; each verb has its own
 * handle_<verb>.c, as kube-apiserver's endpoints/handlers/ has get.go, create.go, update.go,
 * patch.go, delete.go and watch.go (issue 17 section 7); handle_response.c and handle_rest.c hold
 * what they share. No other directory includes this.
 */
#ifndef KOORD_APISERVER_INT_H
#define KOORD_APISERVER_INT_H

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "apiserver/apiserver.h"
#include "apiserver/auth.h"
#include "apiserver/negotiate.h"
#include "apiserver/reqinfo.h"
#include "apiserver/status.h"
#include "apiserver/store.h"
#include "apiserver/table.h"
#include "apiserver/webhook.h"
#include "base/strbuf.h"

struct api_kind;
struct api_resource;
struct http_request;
struct http_response;
struct label_selector;

#define APISERVER__MAX_LIST            100000 /* objects one list request may return */
#define APISERVER__DEFAULT_BOOKMARK_MS 60000  /* kube-apiserver's cacher: about once a minute */

/* One field selector requirement: key, operator (= or !=), unescaped value. */
struct apiserver__field_req {
    char *key;
    bool neq;
    char *value;
};

/* Tries of an unconditional write that keeps losing races before it answers 409. Every lost
 * race is another writer's success, so this bounds only a pathological stream of writers
 * (kube's GuaranteedUpdate retries until the request's deadline). */
#define APISERVER__UPDATE_TRIES 64

/* The operations a JSON patch may have (kube's maxJSONPatchOperations). */
#define APISERVER__MAX_PATCH_OPS 10000

/*
 * The hub's index (watch_hub_set_index): pods by spec.nodeName, as kube-apiserver's watch cache
 * indexes them, since every kubelet and agent watches its own node's pods. A pod without a node
 * has the empty value, which is what the scheduler's `spec.nodeName=` watch asks for.
 */
#define APISERVER__POD_INDEX_PREFIX "/core/pods/"

struct apiserver {
    struct store *store;
    pthread_mutex_t admit_lock; /* serialises writes admit_serialized() names */
    struct api_metrics *metrics;
    struct api_registry *reg;
    struct watch_hub *hub;
    bool require_certs;
    const struct api_tokens *tokens;
    const struct apiserver_auth *auth; /* external authentication and authorization, or NULL */
    struct api_authz *authz;           /* the built-in authorizer chain (authz.h) */
    struct api_satokens *sat;          /* service-account token signer, or NULL */
    unsigned bookmark_ms;              /* idle time before a watch sends a BOOKMARK */
    struct aggregator *agg;            /* APIService proxying, when enabled */
    struct webhooks *webhooks;         /* dynamic admission (webhook.h) */
    bool status_splice;                /* apiserver_opts.status_splice */
    bool expired_watch_status;         /* apiserver_opts.expired_watch_status */
    atomic_ulong status_splices;       /* writes it made (/metrics) */
    struct lifecycle *lifecycle;       /* namespace and pod deletion (lifecycle.h), or NULL */
    struct openapi *openapi;           /* the /openapi documents (openapi.h) */
};

/* Everything one request needs, released in one place. */
struct apiserver__call {
    struct apiserver *srv;
    const struct http_request *req;
    struct http_response *resp;
    struct api_reqinfo ri;
    const struct api_resource *res;
    struct api_status_target target;
    struct strbuf key;
    struct api_user user;        /* valid when user.name is set */
    struct api_ident *ident;     /* owns user's strings when the server made them (authz.h) */
    const char *node;            /* the node a node identity speaks for, else NULL */
    bool check_objects;          /* node identity: every object touched must be about c->node */
    bool dry_run;                /* dryRun=All: everything but the write */
    bool as_scale;               /* answer a CRD's objects as their Scale (handle_scale.c) */
    struct negotiate_output out; /* the form of the answer the Accept header asked for */
    struct strbuf warnings;      /* the Warning values of the last validation, one a line: a write
                                  * retried on a newer object answers with that attempt's */
    struct strbuf wh_warnings;   /* the admission webhooks' Warning values, likewise */
    struct strbuf dups;          /* paths of keys the body repeated, one a line (body.h) */
    bool applied;                /* an apply patch: managedFields already set (apply.h) */
    const char *mf_subresource;  /* the subresource managedFields record when a write runs as
                                  * the main resource's (scale), else NULL */
};

/* ---- handle_response.c ---- */

/* The PartialObjectMetadata of o (taking its metadata), for answers built as trees. */
cJSON *apiserver__partial_tree(cJSON *o, const char *api_version);
/* One Warning header per line of lines, which is emptied. */
void apiserver__add_warning_headers(struct apiserver__call *c, struct strbuf *lines);
/* Replies with body (taken) as the client negotiated it (a Scale, PartialObjectMetadata). */
void apiserver__reply(struct apiserver__call *c, int code, cJSON *body);
/* Replies with a Status, its code the HTTP status (a Success without one is 200). */
void apiserver__reply_status(struct apiserver__call *c, cJSON *status);
/* 404 NotFound: the server could not find the requested resource. */
void apiserver__reply_not_served(struct apiserver__call *c);
/* 400 BadRequest with msg. */
void apiserver__reply_bad_request(struct apiserver__call *c, const char *msg);
/* The store key "/<group|core>/<plural>/<namespace>/<name>" into key (reset first). */
void apiserver__object_key(struct strbuf *key, const struct api_resource *res, const char *ns,
                           const char *name);
/* Appends res's apiVersion ("group/version", or "version" for core) to out. */
void apiserver__api_version_of(const struct api_resource *res, struct strbuf *out);
/* obj's metadata object, made (or replacing a non-object) when missing. */
cJSON *apiserver__meta_of(cJSON *obj);
/* Sets string member k of o to v, replacing any. */
void apiserver__set_string(cJSON *o, const char *k, const char *v);
/* The string member k of o, or NULL. */
const char *apiserver__get_string(const cJSON *o, const char *k);
/* A stored object with its resourceVersion filled in; NULL when the bytes do not parse. */
cJSON *apiserver__decode_stored(const char *value, size_t len, uint64_t rv);
/* Appends the bytes decode_stored() + json_print() would give, without them; false: slow path. */
bool apiserver__splice_bytes(const char *value, size_t len, size_t splice_at, bool comma,
                             uint64_t rv, const char *partial, const char *api_version,
                             struct strbuf *out);
/* splice_bytes() of a stored object */
bool apiserver__splice_stored(const struct store_obj *o, uint64_t rv, const char *partial,
                              const char *api_version, struct strbuf *out);
/* The apiVersion answers of res carry when stored objects may hold another, else NULL. */
const char *apiserver__restamp_version(const struct api_resource *res, struct strbuf *buf);
/* Gives obj res's apiVersion when objects of res may be stored at another CRD version. */
void apiserver__restamp(const struct api_resource *res, cJSON *obj);
/* The bytes stored for obj: its JSON without metadata.resourceVersion. */
int apiserver__encode_for_store(cJSON *obj, struct strbuf *out);

/* ---- handle_rest.c ---- */

/* Validates obj for the resource */
bool apiserver__validate(struct apiserver__call *c, cJSON *obj);
/* What the webhooks are told about this request; op and old (the stored object) as given. */
void apiserver__wh_attrs(const struct apiserver__call *c, enum webhook_op op, const cJSON *old,
                         struct webhook_attrs *a);
/* The mutating webhooks over *obj (possibly replaced); replies and returns false on refusal. */
bool apiserver__wh_mutate(struct apiserver__call *c, const struct webhook_attrs *a, cJSON **obj);
/* The validating webhooks over obj; replies and returns false on refusal. */
bool apiserver__wh_validate(struct apiserver__call *c, const struct webhook_attrs *a,
                            const cJSON *obj);
/* Whether the request body is JSON by its Content-Type (none counts as JSON). */
bool apiserver__json_body(const struct apiserver__call *c);
/* The body as a tree, whatever its Content-Type (body.h); replies 400/415 and NULL when bad. */
cJSON *apiserver__decode_body(struct apiserver__call *c);
/* The body as one object of the resource's kind; replies 400 and returns NULL otherwise. */
cJSON *apiserver__read_body(struct apiserver__call *c);
/* Namespace in the body versus the URL (reference 2.1); replies 400 and false on a mismatch. */
bool apiserver__reconcile_namespace(struct apiserver__call *c, cJSON *meta, bool create);
/* Sets metadata member key to the current time (RFC 3339). */
void apiserver__set_now(cJSON *meta, const char *key);
/* Whether res serves a status subresource. */
bool apiserver__has_status_subresource(const struct api_resource *res);
/* Defaults and the canonical encoding through the resource's description. */
int apiserver__finish_object(struct apiserver__call *c, cJSON *obj);
/* Whether res is core pods. */
bool apiserver__is_pods(const struct api_resource *res);
/* Whether res is core namespaces. */
bool apiserver__is_namespaces(const struct api_resource *res);
/* Whether the request is PUT namespaces/<name>/finalize (namespaceFinalizeStrategy). */
bool apiserver__is_ns_finalize(const struct apiserver__call *c);
/* kube's NamespaceLifecycle admission */
bool apiserver__namespace_terminating(struct apiserver__call *c, const struct store_item *ns,
                                      const cJSON *obj);
/* Whether an update completes a deletion (the generic store's shouldDeleteDuringUpdate). */
bool apiserver__deletes_during_update(const struct api_resource *res, const cJSON *old,
                                      const cJSON *obj);
/* Whether res is policy poddisruptionbudgets. */
bool apiserver__is_pdb(const struct api_resource *res);
/* Whether res is apiextensions.k8s.io customresourcedefinitions. */
bool apiserver__is_crd_resource(const struct api_resource *res);
/* Writes the status kube's CRD controllers would write once the CRD is served. */
void apiserver__crd_set_status(cJSON *crd);
/* Serves a stored CRD's kinds. */
bool apiserver__serve_crd(struct apiserver__call *c, const cJSON *crd);
/* uid / resourceVersion preconditions of a Binding or DeleteOptions; replies 409. */
bool apiserver__preconditions_hold(struct apiserver__call *c, const cJSON *pre, const cJSON *pod,
                                   uint64_t rv);
/* Whether a CRD about to be stored can be served */
bool apiserver__crd_servable(struct apiserver__call *c, const cJSON *crd);
/* The managedFields a write leaves on obj (apply.h); replies 422 and false when bad. */
bool apiserver__managed_fields(struct apiserver__call *c, const cJSON *live, const cJSON *obj,
                               cJSON **ret_mf);
/* Puts mf (taken) as obj's metadata.managedFields, or removes them when NULL. */
void apiserver__set_managed_fields(cJSON *obj, cJSON *mf);
/* Parses a subresource body whose metadata.name must equal the pod's; replies 400 otherwise. */
cJSON *apiserver__read_sub_body(struct apiserver__call *c, const char *what);
/* The kind rules of admit.h; replies and returns false when they refuse the write. */
bool apiserver__admit(struct apiserver__call *c, const cJSON *old, cJSON *obj);
/* 403 for a node identity writing an object that is not about its node (auth.h). */
bool apiserver__node_may(struct apiserver__call *c, const cJSON *obj);

/* ---- handle_get.c ---- */

/* Whether the client asked for a meta.k8s.io Table. */
bool apiserver__wants_table(const struct apiserver__call *c);
/* The apiVersion of the PartialObjectMetadata a one-object answer is to be, or NULL. */
const char *apiserver__partial_of(const struct apiserver__call *c);
/* The static description behind a resource, also for Koordinator kinds served from CRDs. */
const struct api_kind *apiserver__kind_of(const struct api_resource *res);
/* The Table of objects of res */
cJSON *apiserver__build_table(const struct api_resource *res, const struct api_kind *k,
                              const cJSON *const *objs, size_t n, const char *rv, const char *cont,
                              enum table_include inc);
/* GET of one object (c->key). */
void apiserver__do_get(struct apiserver__call *c);
/* Frees n field selector requirements. */
void apiserver__field_reqs_free(struct apiserver__field_req *v, size_t n);
/* The labelSelector and fieldSelector of a list or watch; replies 400 and false when bad. */
bool apiserver__parse_selectors(struct apiserver__call *c, struct label_selector **ret_labels,
                                struct apiserver__field_req **ret_fields, size_t *ret_n);
/* Whether obj passes the label and field selectors. */
bool apiserver__selected(const cJSON *obj, const struct label_selector *labels,
                         const struct apiserver__field_req *fields, size_t n);
/* 504 for a resourceVersion the store has not reached (ResourceVersionTooLarge). */
void apiserver__reply_too_large(struct apiserver__call *c, uint64_t rv, uint64_t current);
/* GET of a collection: selectors, resourceVersion semantics, paging, Table output. */
void apiserver__do_list(struct apiserver__call *c);

/* ---- handle_create.c ---- */

/* POST: creates the body's object. */
void apiserver__do_create(struct apiserver__call *c);
/* Create of obj (taken): a POST's body, or the object an apply creates. */
void apiserver__create_object(struct apiserver__call *c, cJSON *obj);
/* A review (reviews.h): answered, never stored. */
void apiserver__do_review(struct apiserver__call *c);

/* ---- handle_update.c ---- */

/* Reads the object a request acts on, with its revision; replies 404 when absent. */
cJSON *apiserver__read_current(struct apiserver__call *c, uint64_t *ret_rv);
/* PUT semantics for obj (taken), shared by update, patch, scale, binding; true: retry. */
bool apiserver__update_once(struct apiserver__call *c, cJSON *obj, uint64_t based_on,
                            bool may_retry);
/* PUT of an object, its status or a namespace's finalize. */
void apiserver__do_update(struct apiserver__call *c);

/* ---- handle_scale.c ---- */

/* The autoscaling/v1 Scale of obj, an object of res (a custom resource or apps/v1 workload). */
cJSON *apiserver__scale_of(const struct api_resource *res, const cJSON *obj);
/* GET, PUT and PATCH of <resource>/<name>/scale */
void apiserver__do_scale(struct apiserver__call *c);

/* ---- handle_patch.c ---- */

/* PATCH in every patch type, server-side apply included. */
void apiserver__do_patch(struct apiserver__call *c);

/* ---- handle_delete.c ---- */

/* DELETE of a collection: every object the selectors pass. */
void apiserver__do_deletecollection(struct apiserver__call *c);
/* DELETE of one object, with DeleteOptions. */
void apiserver__do_delete(struct apiserver__call *c);

/* ---- handle_watch.c ---- */

/* The shared wire form of an event (watch_encode_fn) */
bool apiserver__encode_event(enum store_event_type type, uint64_t rv, const struct store_obj *obj,
                             struct strbuf *out);
/* The hub index value of a pod: its spec.nodeName (watch_index_fn). */
bool apiserver__pod_node_index(const struct store_obj *obj, struct strbuf *out);
/* Starts a watch. */
void apiserver__do_watch(struct apiserver__call *c);

/* ---- handle_binding.c ---- */

/* POST pods/<name>/binding. */
void apiserver__do_bind(struct apiserver__call *c);

/* ---- handle_eviction.c ---- */

/* pods/eviction (eviction.go, reference 9.4) */
void apiserver__do_evict(struct apiserver__call *c);

/* ---- handle_token.c ---- */

/* POST serviceaccounts/<name>/token: a TokenRequest for the stored account. */
void apiserver__do_token_request(struct apiserver__call *c);

/* ---- apiserver.c ---- */

/* dryRun (query or DeleteOptions) */
bool apiserver__parse_dry_run(struct apiserver__call *c, const char *v);

#endif
