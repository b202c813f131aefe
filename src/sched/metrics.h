/*
 * The scheduler's /metrics, in the Prometheus text format with kube-scheduler's names, labels
 * and buckets (pkg/scheduler/metrics/metrics.go; reference scheduler.md 6), so dashboards and
 * scheduler_perf-style collectors written for kube-scheduler read koord's:
 *
 *   scheduler_schedule_attempts_total{result,profile}                       counter
 *   scheduler_scheduling_attempt_duration_seconds{result,profile}           histogram
 *   scheduler_scheduling_algorithm_duration_seconds                          histogram
 *   scheduler_pod_scheduling_sli_duration_seconds{attempts}                 histogram
 *   scheduler_pod_scheduling_attempts                                        histogram
 *   scheduler_framework_extension_point_duration_seconds{extension_point,status,profile}
 *   scheduler_plugin_execution_duration_seconds{plugin,extension_point,status}  (10 % sampled)
 *   scheduler_preemption_attempts_total, scheduler_preemption_victims
 *   scheduler_pending_pods{queue}, scheduler_queue_incoming_pods_total{queue,event},
 *   scheduler_unschedulable_pods{plugin,profile}, scheduler_cache_size{type},
 *   scheduler_goroutines{operation}                                          (set at render)
 *
 * Series live in a map under one lock; their number is bounded by profiles x plugins x points
 * x codes.
 */
#ifndef KOORD_SCHED_METRICS_H
#define KOORD_SCHED_METRICS_H

#include "base/strbuf.h"

struct sched_metrics;

struct sched_metrics *sched_metrics_new(void);
void sched_metrics_free(struct sched_metrics *m);

/* labels is the inside of the braces ("result=\"scheduled\",profile=\"p\""), or "" for none.
 * name must be one of the metrics above (others are ignored). */
void sched_metrics_add(struct sched_metrics *m, const char *name, const char *labels, double v);
void sched_metrics_set(struct sched_metrics *m, const char *name, const char *labels, double v);
void sched_metrics_observe(struct sched_metrics *m, const char *name, const char *labels, double v);

/*
 * A series for repeated use: found (or created) once, valid until sched_metrics_free(); NULL
 * for an unknown name. The per-pod paths keep these rather than build "name{labels}" and hash
 * it several times per pod (about 9 lookups per scheduled pod).
 */
struct sched_series;
struct sched_series *sched_metrics_series(struct sched_metrics *m, const char *name,
                                          const char *labels);
/* As sched_metrics_add() and sched_metrics_observe(); NULL m or s are fine. */
void sched_metrics_series_add(struct sched_metrics *m, struct sched_series *s, double v);
void sched_metrics_series_observe(struct sched_metrics *m, struct sched_series *s, double v);

/* Appends every series, grouped by metric with HELP and TYPE lines. */
void sched_metrics_render(struct sched_metrics *m, struct strbuf *out);

#endif
