/*
 * metrics.k8s.io/v1beta1 served by the leader manager from the NodeMetric store (issue 18 §1):
 * the NodeMetrics and PodMetrics metrics-server serves, so that `kubectl top` and a Horizontal
 * Pod Autoscaler work on a cluster with koord and no metrics-server. The agents already report
 * every node's and pod's usage to the leader every report interval; metrics-server would scrape
 * every kubelet again for the same figures.
 *
 * Resources (read-only; get and list, other verbs 405; no watch, as metrics-server):
 *   /apis/metrics.k8s.io/v1beta1                      APIResourceList (nodes, pods)
 *   /apis/metrics.k8s.io/v1beta1/nodes[/NAME]         NodeMetrics[List]
 *   /apis/metrics.k8s.io/v1beta1/[namespaces/NS/]pods[/NAME]  PodMetrics[List]
 *
 * Objects, as metrics-server builds them: metadata {name, [namespace,] creationTimestamp (the
 * time of the request), labels (the Node's / the Pod's)}, timestamp (the report's
 * status.updateTime), window (the span the agent averaged over: the NodeMetric's
 * spec.metricCollectPolicy.aggregateDurationSeconds, default 300, floor 60, as the agent obeys
 * it) and usage {cpu, memory}; a PodMetrics has containers[{name, usage}] instead of usage.
 * Quantities are the canonical forms of the reported values (what metrics-server's
 * NewScaledQuantity / NewQuantity print for the same numbers: "2", "500m", "4Gi").
 *
 * Containers: the agent reports pod usage only (podsMetric[].podUsage, as upstream's
 * NodeMetric). A single-container pod's usage is its container's; a multi-container pod's is
 * split over its regular containers in proportion to their requests of each resource (equal
 * shares when none requests it), the Recommendation controller's rule, with the rounding rest on
 * the last container so that the containers always sum to the reported pod usage exactly
 * (kubectl top pods and an HPA's Resource metrics read the sum; a ContainerResource metric of a
 * multi-container pod reads an estimate, said in docs/metrics-k8s.md).
 *
 * Which objects exist, as metrics-server: a node or pod that the manager's informers know and
 * that has a fresh report. A report is stale once older than three report intervals
 * (reportIntervalSeconds, default 60, floor 30), as a node whose agent fell silent. A pod's
 * report counts only on the node the pod is bound to (a pod recreated elsewhere under the same
 * name is not given the old node's figures).
 *
 * Selectors: labelSelector on the Node's / Pod's labels; fieldSelector metadata.name (and for
 * pods metadata.namespace), = / == / !=; any other field is 400 "field label not supported".
 *
 * Authentication and authorization are the NodeMetric API's (nodemetric/auth.h hooks: every
 * authenticated user may read); before this manager leads, 503 with Retry-After as the NodeMetric
 * API answers. Answers are JSON (clients that also accept protobuf, as kube-controller-manager
 * does, take JSON), or a meta.k8s.io Table when asked (kubectl get): metrics-server's columns
 * Name, cpu, memory (a pod's summed over its containers) and Window, each row's object the
 * whole metrics object.
 */
#ifndef KOORD_MANAGER_METRICSK8S_METRICSK8S_H
#define KOORD_MANAGER_METRICSK8S_METRICSK8S_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct apiserver_auth;
struct http_request;
struct http_response;
struct kube_object;
struct label_selector;
struct strbuf;
struct nodemetric_server;

#define METRICSK8S_GROUP   "metrics.k8s.io"
#define METRICSK8S_VERSION "v1beta1"
#define METRICSK8S_PREFIX  "/apis/" METRICSK8S_GROUP "/" METRICSK8S_VERSION

/* ---- the objects (pure; unit-tested) ---- */

/*
 * When the report in top (nodemetric_server_get_top()'s tree) was taken and over which window
 * (seconds): 0, -ENOENT when it has no readable status.updateTime, -ESTALE when it is older than
 * three report intervals at now_s.
 */
int metricsk8s_report_time(const cJSON *top, int64_t now_s, int64_t *ret_ts, int64_t *ret_window_s);

/* The NodeMetrics of node (a Node object; its labels) from top at now_s, a new tree; NULL when
 * top has no fresh, readable nodeUsage. */
cJSON *metricsk8s_node_metrics(const cJSON *top, const cJSON *node, int64_t now_s);

/* The PodMetrics of pod (a Pod object: name, namespace, labels, containers) from its podsMetric
 * entry of top, a new tree; NULL when the report is not fresh, the usage is unreadable or the pod
 * has no containers. */
cJSON *metricsk8s_pod_metrics(const cJSON *top, const cJSON *entry, const cJSON *pod,
                              int64_t now_s);

/* The labelSelector and fieldSelector of a list. */
struct metricsk8s_field_req {
    char key[32]; /* metadata.name or metadata.namespace */
    bool neq;
    char *value;
};
struct metricsk8s_selectors {
    struct label_selector *labels; /* NULL = everything */
    struct metricsk8s_field_req *fields;
    size_t nfields;
};

/* Parses the query values (either may be NULL or ""); pods allows metadata.namespace. 0, or
 * -EINVAL with the message for the 400 in err (*ret then holds nothing). */
int metricsk8s_selectors_parse(const char *ls, const char *fs, bool pods,
                               struct metricsk8s_selectors *ret, struct strbuf *err);
/* Whether the Node or Pod object obj passes sel. */
bool metricsk8s_selected(const struct metricsk8s_selectors *sel, const cJSON *obj);
/* Frees and empties sel: releasing again is a no-op. */
void metricsk8s_selectors_release(struct metricsk8s_selectors *sel);

/* ---- the server ---- */

/* Where Node and Pod objects come from (the manager's informers): a new reference or NULL. */
struct metricsk8s_lookup {
    struct kube_object *(*node)(void *userdata, const char *name);
    struct kube_object *(*pod)(void *userdata, const char *ns_name); /* "namespace/name" */
    void *userdata;
};

struct metricsk8s_opts {
    struct nodemetric_server *nodemetrics; /* borrowed */
    const struct apiserver_auth *auth;     /* borrowed; NULL = no authentication (tests only) */
    struct metricsk8s_lookup lookup;
};

struct metricsk8s_server;

struct metricsk8s_server *metricsk8s_server_new(const struct metricsk8s_opts *opts);
void metricsk8s_server_free(struct metricsk8s_server *s);

/* Whether path is this API's (METRICSK8S_PREFIX or below). */
bool metricsk8s_path(const char *path);

/* The http_handler_fn for this API's paths; userdata is the server. */
void metricsk8s_server_handle(const struct http_request *req, struct http_response *resp,
                              void *userdata);

#endif
