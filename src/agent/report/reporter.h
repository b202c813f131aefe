/*
 * The agent's NodeMetric report loop (reference koordlet-and-scheduler.md 2.4, DESIGN.md 3.1,
 * seed 001). Every report interval it builds this node's NodeMetric status (a callback: the
 * metric cache answers) and sends it with `PUT .../nodemetrics/<node>/status`, straight to the
 * manager's in-memory API (or to the slo.koordinator.sh CRD through the API server in CRD mode).
 *
 * Upstream reports on a fixed period and drops a report that fails. A manager restart or
 * failover would then leave the node's metrics stale for a whole interval and more, which the
 * manager's degrade window has to absorb. Here a failed send is retried with a short jittered
 * backoff (200 ms doubling to 2 s) while the manager answers 503 or cannot be reached, until it
 * lands or the next report is due; and report_now() (called when the NodeMetric informer sees
 * the object again, e.g. served by a new leader) sends at once. Recovery after a failover is
 * then bounded by the lease and the backoff, seconds, not the report interval.
 *
 * What is not worth retrying (401/403: wrong identity, 400/422/413: a bad report) is logged and
 * dropped until the next interval. One thread; every function is thread-safe.
 */
#ifndef KOORD_AGENT_REPORT_REPORTER_H
#define KOORD_AGENT_REPORT_REPORTER_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

struct kube_client;
struct kube_resource;

struct reporter_opts {
    struct kube_client *client;           /* where to send (borrowed) */
    const struct kube_resource *resource; /* NULL = kube_res_nodemetrics */
    const char *node;                     /* copied */

    /*
     * Builds the status to send (a new tree the reporter frees), or NULL when there is nothing
     * to report yet (no NodeMetric seen, no samples); *ret_interval_ms gets the report period
     * to use (the NodeMetric's reportIntervalSeconds). Called on the reporter's thread.
     */
    cJSON *(*build)(void *userdata, int64_t *ret_interval_ms);
    void *userdata;

    long retry_initial_ms; /* 0 = 200 */
    long retry_max_ms;     /* 0 = 2000 */
    long first_delay_ms;   /* before the first report; 0 = send as soon as build gives one */
};

struct reporter_stats {
    uint64_t sent;      /* reports accepted */
    uint64_t failures;  /* attempts that failed (each retry counts) */
    uint64_t dropped;   /* reports given up (not retryable, or the next one was due) */
    int64_t last_ok_ms; /* CLOCK_MONOTONIC ms of the last accepted report, 0 = none */
};

struct reporter;

/* Starts the thread. 0, -EINVAL (no client, node or build), -errno of pthread_create. */
int reporter_start(const struct reporter_opts *opts, struct reporter **ret);

/* Sends a report now (wakes the loop; retries as above). */
void reporter_now(struct reporter *r);

void reporter_stats(struct reporter *r, struct reporter_stats *ret);

/* Stops the thread (a send in flight is cancelled) and frees. NULL is fine. */
void reporter_free(struct reporter *r);

#endif
