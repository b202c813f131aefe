/*
 * The Recommendation controller (analysis.koordinator.sh/v1alpha1; issue 16 section 3):
 * right-sizing by Kubernetes' Vertical Pod Autoscaler recommender's algorithm (model.h,
 * histogram.h, docs/recommendation.md), which upstream Koordinator defines the API for but
 * never built.
 *
 * Shape: an informer on Recommendations (all namespaces) enqueues their keys; one worker
 * reconciles a key on every change and again every interval (60 s, VPA's recommender loop):
 * resolve the target's pods (podSelector: a label-selected list in the Recommendation's
 * namespace; workload: the namespace's pods whose controller owner is the workload, or a
 * ReplicaSet (Job) the Deployment (CronJob) controls, read from the API server, a 404 of the
 * kind or object being a condition, not an error), compute the estimate per container, write the
 * status when it changes (quantities move in 5 % bucket steps, so noise does not write), and
 * write the checkpoint ConfigMap every checkpoint interval. Samples come from the manager's own
 * NodeMetric store: rec_controller_on_report() (the manager's report listener) enqueues the
 * node on a second queue whose worker reads that node's podsMetric and feeds the pods the
 * Recommendations target. With no Recommendation the listener returns at once (one atomic
 * load): the controller costs nothing until one exists.
 *
 * Checkpoints: a ConfigMap `<name>-recommendation-checkpoint` in the Recommendation's
 * namespace, owned by it (ownerReference, so a cluster's garbage collector removes it; the
 * controller also deletes it when it sees the Recommendation go), data key `checkpoint`: the
 * VPA checkpoint fields per container. Loaded when the controller first reconciles the
 * Recommendation (a leader start), ignored when its owner uid is another object's.
 *
 * Thread safety: start/stop/free from one thread; on_report and stats from any thread.
 */
#ifndef KOORD_MANAGER_RECOMMENDATION_CONTROLLER_H
#define KOORD_MANAGER_RECOMMENDATION_CONTROLLER_H

#include <stdint.h>

#include "manager/recommendation/model.h"

struct kube_client;
struct nodemetric_server;

#define REC_CHECKPOINT_SUFFIX "-recommendation-checkpoint"
#define REC_CHECKPOINT_KEY    "checkpoint"

struct rec_opts {
    struct nodemetric_server *nodemetrics; /* borrowed: where reports are read */
    struct rec_params params;              /* all zero = rec_params_default() */
    long interval_ms;                      /* re-sync of each Recommendation; 0 = 60000 */
    long checkpoint_ms;                    /* checkpoint period; 0 = 60000 */
    long sync_timeout_ms;                  /* start() waits this long for the cache; 0 = 60000 */
};

struct rec_controller;

/* Copies opts; nothing runs until start. 0. */
int rec_controller_new(struct kube_client *c, const struct rec_opts *opts,
                       struct rec_controller **ret);

/* Starts the informer, waits for it to list, starts the workers. 0; -ENOENT when the API server
 * does not serve Recommendations (nothing started); -ETIMEDOUT; -errno. */
int rec_controller_start(struct rec_controller *c);

/* The manager's NodeMetric report listener: quick, any thread. */
void rec_controller_on_report(struct rec_controller *c, const char *node);

/* Writes every Recommendation's checkpoint now (a clean stop), then stops. Idempotent. */
void rec_controller_stop(struct rec_controller *c);
void rec_controller_free(struct rec_controller *c);

struct rec_stats {
    unsigned long reconciles, errors;
    unsigned long samples; /* container samples fed */
    unsigned long reports; /* node reports read */
    unsigned long status_writes, checkpoint_writes;
    double latency_sum_s; /* reconciles */
    double report_sum_s;  /* reading and feeding reports */
};
void rec_controller_stats(struct rec_controller *c, struct rec_stats *ret);

#endif
