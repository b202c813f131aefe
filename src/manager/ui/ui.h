/*
 * The dashboard (issue 19 §4): `koord manager` serves a live web page at /ui on its HTTPS port,
 * showing per node the LS usage, batch usage and batch allocatable, cluster totals over time,
 * the pending pods by class with the scheduler's reason, and recent evictions and suppressions.
 * The page and its charting library are built into the binary (web/web.h); the data comes from
 * what the manager already holds: the NodeMetric store (every report), the NodeResource
 * controller's Node and Pod informers, and one Events informer of its own (field selector
 * source=koordlet-qosManager, so it sees only the QoS events).
 *
 * Live, not polled: the page opens one Server-Sent Events stream (/ui/api/stream). Informer
 * handlers and the report listener only queue keys (collapsing repeats); one flusher thread
 * applies them to the model (state.h), at most max_updates_per_s times a second, and sends every
 * stream the delta, so a burst of 10,000 reports costs one update per stream, and no work is
 * done per node per tick. A new stream first gets a snapshot. The totals are also appended to a
 * bounded history every history_interval_ms (one point per report interval by default).
 *
 * Who may look, as for the NodeMetric API (nodemetric/auth.h): a client certificate, a front
 * proxy's headers, or a bearer token checked with a TokenReview; and then a SubjectAccessReview
 * for verb `get` on the non-resource URL `/ui` (RBAC: a ClusterRole with nonResourceURLs
 * ["/ui"], verbs ["get"]). A browser cannot send a bearer token by itself, so /ui/login takes
 * one in a form (from `kubectl create token ...`), runs both reviews once, and sets a session
 * cookie (session.h: random id, HttpOnly, Secure, SameSite=Strict, Path=/ui, expiry). The page
 * and its scripts are public (they hold no data); /ui/ and the /ui/api/ paths need a session or
 * credentials. Only the leader has data: a standby answers 503.
 */
#ifndef KOORD_MANAGER_UI_UI_H
#define KOORD_MANAGER_UI_UI_H

#include <stdbool.h>
#include <stdint.h>

struct http_request;
struct http_response;
struct kube_client;
struct kube_handlers;
struct nodemetric_auth;
struct nodemetric_server;

struct ui_opts {
    struct kube_client *client;            /* Events informer, SubjectAccessReviews (borrowed);
                                              NULL: no events, and every authenticated user is
                                              allowed (tests only) */
    struct nodemetric_auth *auth;          /* who the caller is (borrowed); NULL: anyone (tests) */
    struct nodemetric_server *nodemetrics; /* reports are read here (borrowed) */
    int64_t session_ttl_ms;                /* 0 = one hour */
    unsigned max_sessions;                 /* 0 = 1000 */
    unsigned max_updates_per_s;            /* deltas per second at most; 0 = 4 */
    long history_interval_ms;              /* one totals point per interval; 0 = 10000 */
    unsigned history_points;               /* points kept; 0 = 360 (an hour at 10 s) */
};

struct ui_server;

/* Copies opts. 0 or -ENOMEM. */
int ui_server_new(const struct ui_opts *opts, struct ui_server **ret);

/* The handler sets for the Node and Pod informers (noderesource_controller_add_handlers). */
void ui_server_handlers(struct ui_server *s, struct kube_handlers *ret_nodes,
                        struct kube_handlers *ret_pods);

/* Starts the flusher and the Events informer (when leading). 0 or -errno. Once. */
int ui_server_start(struct ui_server *s);

/* A NodeMetric report of node arrived (nodemetric_server_set_listener): quick, any thread. */
void ui_server_on_report(struct ui_server *s, const char *node);

/* Whether path is the dashboard's (/ui, /ui/...). */
bool ui_server_path(const char *path);

/* The http_handler_fn for ui_server_path() paths; userdata is the server. */
void ui_server_handle(const struct http_request *req, struct http_response *resp, void *userdata);

/* Stops the flusher and the informer and ends the streams (they finish at once; the HTTP
 * server frees them). Before stopping the HTTP server; NULL is fine; idempotent. */
void ui_server_stop(struct ui_server *s);

/* Frees; after the HTTP server stopped (streams point at the server). NULL is fine. */
void ui_server_free(struct ui_server *s);

#endif
