/*
 * The Kubernetes-compatible API server: the HTTP handler that ties request info, the resource
 * registry, the type descriptions and the object store together (reference
 * kubernetes-api.md sections 1-3). This first part serves discovery, health, /version and the
 * get, list, create, update (incl. the status subresource) and delete verbs with
 * kube-apiserver's status codes and messages; CRDs created through it are served at once.
 * Watch, patch, Table output and authentication build on it next, and the aggregation layer
 * (aggregator.h) proxies the group-versions APIServices hand to other servers.
 */
#ifndef KOORD_APISERVER_APISERVER_H
#define KOORD_APISERVER_APISERVER_H

#include <stdbool.h>
#include <stddef.h>

struct api_kind;
struct api_reqinfo;
struct api_user;
struct http_request;
struct http_response;
struct store;
struct strbuf;

struct apiserver;

/* A server over an open store (borrowed; must outlive the server): `koord apiserver` passes the
 * watch cache over the SQLite backend (store_cache.h), so gets and lists are served from memory.
 * CRDs already in the store are served at once. 0, -ENOMEM, -EIO. */
int apiserver_new(struct store *store, struct apiserver **ret);

/*
 * Who may do what, when the embedding program decides instead of the built-in rules (client
 * certificates and static tokens, the node rule of auth.h): the manager's NodeMetric API
 * authenticates front-proxy headers and TokenReview'd tokens and has its own write rule.
 */
struct apiserver_auth {
    /* Fills *ret for the request: 0, -ENOENT when it presents no credentials (401 unless the
     * path is open), -EACCES when they do not verify (401). The strings must stay valid until
     * release(ret) (may be NULL) is called at the end of the request. */
    int (*authenticate)(void *userdata, const struct http_request *req, struct api_user *ret);
    void (*release)(void *userdata, struct api_user *u);
    /* 0 to allow; -EACCES to refuse with 403 Forbidden, why (may stay empty) saying why. Runs
     * for every resource request after authentication; not for /healthz, /version and the like. */
    int (*authorize)(void *userdata, const struct api_user *u, const struct api_reqinfo *ri,
                     struct strbuf *why);
    void *userdata;
};

/* A server profile other than koord apiserver's full one. */
struct apiserver_opts {
    /* Serve exactly these kinds (NULL-terminated): no CRDs, no TokenReview, no initial
     * namespaces or priority classes. NULL = everything koord apiserver serves. Objects of
     * aggregated kinds (api_kind.aggregated; read_only in the registry) are created and
     * deleted by the embedding program through the store: clients may read them and update or
     * patch their status, nothing else (405; a status write to a missing object is 404), and
     * discovery lists only those verbs. */
    const struct api_kind *const *kinds;
    const struct apiserver_auth *auth; /* borrowed; NULL = the built-in rules */
    /* /status PUTs whose status is already canonical are written by replacing the stored
     * object's status bytes, without decoding either (api_canonical_check; the result is the
     * same). For koord manager's NodeMetric reports; koord apiserver keeps kube-apiserver's
     * decode-validate-encode path for every write. */
    bool status_splice;
    /* A watch from a revision older than the kept history is answered 410 with a Status (kube's
     * etcd path, what the manager's NodeMetric API has documented for its epochs) instead of
     * 200 with one ERROR event carrying that Status (kube's watch cache, koord apiserver's
     * default). client-go relists on either (reference kubernetes-api.md 4.4). */
    bool expired_watch_status;
};

/* apiserver_new with a profile. 0, -ENOMEM, -EIO. */
int apiserver_new_opts(struct store *store, const struct apiserver_opts *opts,
                       struct apiserver **ret);
/*
 * Requires a verified client certificate (the identity kubectl's kubeconfig carries) on every
 * request except /healthz, /livez, /readyz and /version, which stay open as in Kubernetes;
 * others get 401. Off by default (plain-HTTP tests); `koord apiserver` turns it on.
 */
void apiserver_require_client_certs(struct apiserver *s, bool on);

/* Also accepts `Authorization: Bearer <token>` for the tokens of a --token-auth-file (borrowed;
 * must outlive the server; NULL for none), as kube-apiserver does when authentication is on. */
struct api_tokens;
void apiserver_set_tokens(struct apiserver *s, const struct api_tokens *tokens);

/*
 * The authorizer chain, as kube-apiserver's --authorization-mode names it (authz.h): a
 * comma-separated list of Node, RBAC, AlwaysAllow and AlwaysDeny; the default is
 * "Node,AlwaysAllow". With RBAC the bootstrap roles are created now when missing. 0; -EINVAL with
 * why for a bad list; -errno of the store with why. Before serving.
 */
int apiserver_set_authorization_mode(struct apiserver *s, const char *modes, struct strbuf *why);

/* Issues (serviceaccounts/<name>/token) and accepts service-account tokens with sat (borrowed;
 * must outlive the server; satoken.h), and from now on keeps a `default` ServiceAccount in every
 * namespace (serviceaccounts.h). Without it TokenRequest answers 500. */
struct api_satokens;
void apiserver_set_satokens(struct apiserver *s, struct api_satokens *sat);

/*
 * How long a watch that allowed bookmarks (allowWatchBookmarks=true) may stay silent before
 * the server sends a BOOKMARK with the revision it has caught up to, so the client's resume
 * point moves forward even when nothing it watches changes. 0 = the default, one minute (what
 * kube-apiserver does); tests use a short one. Applies to watches started afterwards.
 */
void apiserver_set_bookmark_interval(struct apiserver *s, unsigned ms);

/* The Prometheus text /metrics serves (request counts and latencies, watches, the store's
 * revision), for a program that serves /metrics itself. */
void apiserver_render_metrics(struct apiserver *s, struct strbuf *out);

/* A random (version 4) UID as Kubernetes writes them, for objects made outside a request. */
void apiserver_random_uid(char buf[37]);

/*
 * Turns on the aggregation layer (aggregator.h): APIServices with a service are proxied with
 * the front-proxy client certificate of opts, their availability is checked in the background,
 * and the kube-system/extension-apiserver-authentication ConfigMap is written now. 0, -EEXIST
 * when already on, else the errors of aggregator_new().
 */
struct aggregator_opts;
int apiserver_enable_aggregation(struct apiserver *s, const struct aggregator_opts *opts);

/* Ends every watch stream, proxied ones included (call before stopping the HTTP server, whose
 * connection threads would otherwise wait for them); also done by apiserver_free. */
void apiserver_stop_watches(struct apiserver *s);

void apiserver_free(struct apiserver *s);

/* The http_handler_fn: pass the apiserver as userdata to http_server_start(). */
void apiserver_handle(const struct http_request *req, struct http_response *resp, void *userdata);

#endif
