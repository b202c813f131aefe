/*
 * The NodeMetric API of seed 001 (DESIGN.md 3.1), served by the leader manager from memory:
 * metrics.koordinator.sh/v1alpha1 nodemetrics, cluster-scoped, one object per Node named like
 * it. Node agents PUT (or PATCH) `.../nodemetrics/<node>/status` straight to the leader every
 * report interval; the NodeResource controller and the scheduler list and watch them. No
 * write reaches etcd or SQLite.
 *
 * Built from the API-serving library (apiserver.h) with the memory backend
 * (store_memory.h): the same verbs, watch, Table output, Status errors and discovery as every
 * other koord server, profile "exact kinds" (NodeMetric is a read-only kind). The objects are
 * made and removed by the manager (nodemetric_server_set_spec / _remove, from the Node
 * informer and colocation-config); clients cannot create or delete them (405).
 *
 * Availability: until nodemetric_server_activate() (called when this manager becomes leader)
 * every API path answers 503 ServiceUnavailable with Retry-After: 1, so agents retry quickly
 * and reach the new leader within seconds; the manager's /readyz says the same.
 *
 * resourceVersions: the memory store numbers revisions (epoch << 40) | n, and the manager
 * passes the leadership term (Lease leaseTransitions + 1) as the epoch, so revisions keep
 * increasing across restarts and failovers and a list or watch from an older term is 410
 * Gone: clients relist, which is how seed 001's "informer can no longer watch" risk is met.
 */
#ifndef KOORD_MANAGER_NODEMETRIC_NODEMETRIC_H
#define KOORD_MANAGER_NODEMETRIC_NODEMETRIC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct apiserver_auth;
struct http_request;
struct http_response;

#define NODEMETRIC_GROUP   "metrics.koordinator.sh"
#define NODEMETRIC_VERSION "v1alpha1"

struct nodemetric_opts {
    const struct apiserver_auth *auth; /* borrowed; NULL = no authentication (tests only) */
    size_t history;                    /* writes kept for watches to resume; 0 = 10000 */
    size_t max_object;                 /* bytes one NodeMetric may take; 0 = 1 MiB */
};

struct nodemetric_server;

int nodemetric_server_new(const struct nodemetric_opts *opts, struct nodemetric_server **ret);

/*
 * Starts serving from an empty store whose revisions carry epoch (1 .. 2^23-1). Once per
 * server: a manager that loses the lease exits, as upstream's does. 0, -EALREADY, -EINVAL.
 */
int nodemetric_server_activate(struct nodemetric_server *s, uint64_t epoch);

bool nodemetric_server_active(struct nodemetric_server *s);

/* The http_handler_fn for the API paths (/apis..., /openapi...); userdata is the server. */
void nodemetric_server_handle(const struct http_request *req, struct http_response *resp,
                              void *userdata);

/*
 * Makes sure the NodeMetric of node exists with this spec (a metricCollectPolicy object;
 * borrowed), creating it with an empty status or updating only the spec (never the status).
 * Writes nothing when the spec is already that. 0, -EAGAIN before activation, -ENOMEM,
 * -EINVAL for a name that is not a valid object name, -E2BIG when the object would exceed the
 * size bound.
 */
int nodemetric_server_set_spec(struct nodemetric_server *s, const char *node, const cJSON *spec);

/* Removes the NodeMetric of a deleted node. 0 (also when absent), -EAGAIN before activation. */
int nodemetric_server_remove(struct nodemetric_server *s, const char *node);

/* The NodeMetric of node as clients see it (a new tree), or -ENOENT / -EAGAIN. */
int nodemetric_server_get(struct nodemetric_server *s, const char *node, cJSON **ret);

/*
 * The parts of node's NodeMetric the NodeResource controller reads (manager-behaviour 4.4), as
 * a new tree: {"status": {updateTime, nodeMetric: {systemUsage}, hostApplicationMetric,
 * podsMetric: [{namespace, name, priority, podUsage}]}}, each present when the object has it.
 * The controller runs after every report; this picks those members out of the stored bytes
 * rather than building the whole 17 KB object (aggregates, node usage, qos) to read a third of
 * it. -ENOENT / -EAGAIN as nodemetric_server_get().
 */
int nodemetric_server_get_usage(struct nodemetric_server *s, const char *node, cJSON **ret);

/*
 * The parts of node's NodeMetric the metrics.k8s.io API serves (metricsk8s.h), picked the same
 * way: {"spec": {metricCollectPolicy}, "status": {updateTime, nodeMetric: {nodeUsage},
 * podsMetric: [{namespace, name, podUsage}]}}, each present when the object has it. -ENOENT /
 * -EAGAIN as nodemetric_server_get().
 */
int nodemetric_server_get_top(struct nodemetric_server *s, const char *node, cJSON **ret);

/*
 * Calls fn(userdata, node, top) for every NodeMetric in name order, top being what
 * nodemetric_server_get_top() returns (borrowed for the call). Stops at fn's first negative
 * result and returns it; 0, -EAGAIN before activation, -EIO for unreadable stored bytes.
 */
int nodemetric_server_each_top(struct nodemetric_server *s,
                               int (*fn)(void *userdata, const char *node, const cJSON *top),
                               void *userdata);

/*
 * Calls fn(userdata, node) after each write that leaves a NodeMetric in place: a client's
 * status write (a report) and the manager's own spec writes (one no-op reconcile each); not
 * after a removal. On the writing thread: it must be quick (enqueue a key). Set before
 * activation.
 */
void nodemetric_server_set_listener(struct nodemetric_server *s,
                                    void (*fn)(void *userdata, const char *node), void *userdata);

/* Counters for /metrics. */
struct nodemetric_stats {
    unsigned long reports; /* status writes accepted */
    unsigned long objects; /* NodeMetrics held */
    uint64_t revision;     /* current resourceVersion */
};
void nodemetric_server_stats(struct nodemetric_server *s, struct nodemetric_stats *ret);

/* The API's request metrics (apiserver_render_metrics); nothing before activation. */
struct strbuf;
void nodemetric_server_render_metrics(struct nodemetric_server *s, struct strbuf *out);

/* Ends every watch (before stopping the HTTP server); also done by _free. */
void nodemetric_server_stop_watches(struct nodemetric_server *s);
void nodemetric_server_free(struct nodemetric_server *s);

#endif
