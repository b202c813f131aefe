/*
 * koord scheduler: the scheduling loop of kube-scheduler (pkg/scheduler/scheduler.go,
 * schedule_one.go, eventhandlers.go; reference scheduler.md 2-4) over the framework, queue and
 * cache of this module. Informers feed the cache (nodes, assigned pods) and the queue
 * (unassigned pods of our profiles); one thread pops a pod at a time, runs the cycle on an
 * incremental snapshot, assumes the pod, and hands the binding to a small pool of threads so
 * the next pod is scheduled while the previous one binds. Failures requeue the pod, record a
 * FailedScheduling event and patch PodScheduled=False, asynchronously too.
 *
 * Objects can also be fed by hand (sched_scheduler_*_event) and cycles run one at a time
 * (sched_scheduler_schedule_one), which is how the unit tests and the in-process benchmark
 * drive it without an API server.
 */
#ifndef KOORD_SCHED_SCHEDULER_H
#define KOORD_SCHED_SCHEDULER_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/strbuf.h"

struct kube_client;
struct sched_config;
struct field_errors;
struct sched_pod;

struct sched_scheduler_opts {
    struct kube_client *client;        /* borrowed; NULL: no informers, no API calls */
    const struct sched_config *config; /* borrowed, must outlive the scheduler */
    double assumed_ttl_s;              /* 0 = 30 */
    int binders;                       /* binding threads; 0 = 16 */
    /*
     * Replaces the API binding and every other API write when set (benchmarks of the cycle
     * alone): called on a binding thread, returns 0 or -errno.
     */
    int (*bind_hook)(void *userdata, const struct sched_pod *pod, const char *node);
    void *userdata;
};

struct sched_scheduler;

/* Builds the profiles (plugins and args). 0, or -EINVAL with errs filled. */
int sched_scheduler_new(const struct sched_scheduler_opts *opts, struct sched_scheduler **ret,
                        struct field_errors *errs);

/* Starts the informers (nodes, pods) and the queue's flush thread. 0 or -errno. */
int sched_scheduler_start_informers(struct sched_scheduler *s);
/* Whether the informers have listed everything once. */
bool sched_scheduler_synced(struct sched_scheduler *s);
/* Starts the scheduling thread (the leader calls it). 0, -EBUSY, -errno. */
int sched_scheduler_run(struct sched_scheduler *s);
/* Stops everything and waits for in-flight bindings. Idempotent. */
void sched_scheduler_stop(struct sched_scheduler *s);
void sched_scheduler_free(struct sched_scheduler *s);

/* Objects fed by hand (what the informers' handlers call). old may be NULL for add. */
void sched_scheduler_pod_event(struct sched_scheduler *s, const cJSON *old, const cJSON *obj,
                               bool deleted);
/* A Reservation added, updated or deleted (reservation_handler.go): its reserve pod queued
 * while it waits for a node, cached while Available, dropped when done. */
void sched_scheduler_reservation_event(struct sched_scheduler *s, const cJSON *old,
                                       const cJSON *obj, bool deleted);
/* Whether a profile runs the named plugin. */
bool sched_scheduler_uses(const struct sched_scheduler *s, const char *plugin);
void sched_scheduler_node_event(struct sched_scheduler *s, const cJSON *old, const cJSON *obj,
                                bool deleted);

/* One cycle: pops a pod (waiting up to timeout_s) and schedules it. 1 a pod was handled, 0
 * timed out, -ECANCELED stopped. */
int sched_scheduler_schedule_one(struct sched_scheduler *s, double timeout_s);
/* Waits until no binding is in flight. */
void sched_scheduler_wait_bindings(struct sched_scheduler *s);

/*
 * The http_handler_fn of the scheduler's port (pass the scheduler as userdata): /metrics,
 * /healthz, /livez, /readyz (ready once the informers have synced).
 */
struct http_request;
struct http_response;
void sched_scheduler_http(const struct http_request *req, struct http_response *resp,
                          void *userdata);

/* /metrics text. */
void sched_scheduler_metrics(struct sched_scheduler *s, struct strbuf *out);

struct sched_scheduler_stats {
    uint64_t attempts, scheduled, unschedulable, errors, bound, bind_failures;
    size_t active, backoff, unschedulable_pods, gated, assumed;
    uint64_t pre_enqueue_runs;
};
void sched_scheduler_stats(struct sched_scheduler *s, struct sched_scheduler_stats *ret);

#endif
