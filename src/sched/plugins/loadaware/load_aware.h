/*
 * LoadAwareScheduling's parts (Koordinator pkg/scheduler/plugins/loadaware/; reference
 * koordlet-and-scheduler.md 5.2, scheduler.md 8.2-8.3), shared by the files of this directory
 * and by tests/sched/test_loadaware.c, which drives the plugin with NodeMetrics and a clock of
 * its own. Nothing else includes it.
 *
 *   args.c        LoadAwareSchedulingArgs: decoding, upstream's defaults, field errors
 *   node_metric.c NodeMetric objects -> per-node usage records, the plugin's map of them and
 *                 the informer that feeds it (metrics.koordinator.sh, else slo.koordinator.sh)
 *   load_aware.c  the estimator, Filter, Score, Reserve/Unreserve, the plugin table
 *
 * Thread safety: Filter and Score run on the framework's workers in parallel and only read; the
 * informer thread replaces NodeMetric records and Reserve/Unreserve (the scheduling thread)
 * record assignments, each under the write side of one rwlock that the readers hold for the
 * duration of one node's Filter or Score.
 */
#ifndef KOORD_SCHED_PLUGINS_LOADAWARE_LOAD_AWARE_H
#define KOORD_SCHED_PLUGINS_LOADAWARE_LOAD_AWARE_H

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hmap.h"
#include "sched/framework/framework.h"

struct field_errors;
struct kube_informer;
struct kube_resource;

/* The resource the plugin's cluster events name, whichever group feeds it. */
#define LA_NODEMETRIC_EVENT "nodemetrics.v1alpha1.slo.koordinator.sh"

/* A per-resource number of the args (threshold, weight, factor), sorted by name. The name is
 * resolved to a sched_res index when used: nodes intern scalar names after the args are read. */
struct la_rval {
    char *name;
    int64_t v;
    /* sched_res indexes + 1 of name, and of the names a batch and a mid pod request it under,
     * once interned (0: not yet): resolved once, not for every node (la_index()). */
    _Atomic int idx[3];
};

struct la_rlist {
    struct la_rval *v;
    size_t n;
};

/* NodeMetric aggregation types (slo/v1alpha1 AggregationType). */
enum la_agg_type {
    LA_AGG_UNSET = -1,
    LA_AGG_AVG,
    LA_AGG_P50,
    LA_AGG_P90,
    LA_AGG_P95,
    LA_AGG_P99,
    LA_AGG_COUNT,
};

/* LoadAwareSchedulingArgs after defaulting (scheduler.md 8.2). */
struct la_args {
    bool filter_expired;        /* filterExpiredNodeMetrics: true */
    int64_t expiration_s;       /* nodeMetricExpirationSeconds: 180 */
    bool schedule_when_expired; /* enableScheduleWhenNodeMetricsExpired: false */
    struct la_rlist weights;    /* resourceWeights: cpu 1, memory 1 (unless dominant weight) */
    int64_t dominant_weight;    /* dominantResourceWeight: 0 */
    struct la_rlist usage;      /* usageThresholds: cpu 65, memory 95 when empty */
    struct la_rlist prod_usage; /* prodUsageThresholds: none */
    bool prod_include_sys;      /* prodUsageIncludeSys */
    bool score_prod;            /* scoreAccordingProdUsage */
    struct la_rlist factors;    /* estimatedScalingFactors: cpu 85, memory 70, filled per key */
    int64_t after_scheduled_s;  /* estimatedSecondsAfterPodScheduled; 0 unset */
    int64_t after_initialized_s;
    bool allow_customize;
    char *estimator; /* "" or "default" */
    char **supported;
    size_t nsupported;
    /* aggregated (nil when none of its fields is given) */
    struct la_rlist agg_usage;
    enum la_agg_type agg_usage_type, agg_score_type;
    int64_t agg_usage_dur_s, agg_score_dur_s; /* 0: the longest duration reported */
};

/* Decodes args (NULL or {} = defaults) under path into a; 0, or -EINVAL with errs filled. */
int sched__la_args_decode(const cJSON *args, const char *path, struct la_args *a,
                          struct field_errors *errs);
void sched__la_args_release(struct la_args *a);
/* The value of name in l, or -1 when absent. */
int64_t sched__la_rlist_get(const struct la_rlist *l, const char *name);

/* One aggregated usage of a NodeMetric (status.nodeMetric.aggregatedNodeUsages[]). */
struct la_agg_usage {
    enum la_agg_type type;
    int64_t dur_s;
    struct sched_res u;
};

/* A pod in status.podsMetric. */
struct la_pod_usage {
    struct sched_res u;
    bool prod; /* reported with priority koord-prod */
};

/* What the plugin keeps of one NodeMetric. Immutable once in the map. */
/*
 * What a node's pods add to its NodeMetric (node_usage in load_aware.c), kept between cycles:
 * it changes only with the node's pods (the NodeInfo's generation), its NodeMetric (a new
 * struct la_metric) or a prune of the placement times (la->prune_epoch), and walking every pod
 * of every scored node for each pod was most of the Koordinator profile's cycle.
 */
struct la_usage_cache {
    pthread_mutex_t mu; /* Filter and Score run in parallel under the read lock */
    bool valid;
    uint64_t generation;
    size_t npods;
    unsigned long epoch;
    int nres; /* sched_res_count() when it was kept: a new resource name invalidates it */
    struct sched_res delta, prod_delta, estimated;
};

struct la_metric {
    struct la_usage_cache cache;
    double update;                     /* status.updateTime (wall clock seconds); 0 when absent */
    bool has_node;                     /* status.nodeMetric present */
    bool has_usage;                    /* status.nodeMetric.nodeUsage present */
    struct sched_res usage, sys, prod; /* node usage, system usage, Σ prod pods' usage */
    struct la_agg_usage *agg;
    size_t nagg;
    struct hmap pods;       /* "namespace/name" -> struct la_pod_usage * */
    double report_interval; /* spec.metricCollectPolicy.reportIntervalSeconds: 60 */
};

/* Decodes a NodeMetric object (either group); never fails but for OOM (aborts). */
struct la_metric *sched__la_metric_decode(const cJSON *obj);
void sched__la_metric_free(struct la_metric *m);

/* A pod this scheduler placed (Reserve), until its binding carries the time itself. */
struct la_assign {
    char *node;
    double at; /* wall clock */
};

/* Per-resource figures a holder's summary keeps: resourceWeights entries (cpu and memory
 * by default), entries of the non-prod thresholds. */
#define LA_SUMMARY_SCORE  3
#define LA_SUMMARY_FILTER 4

/*
 * The plugin's place for one node's NodeMetric: made when the node's first NodeMetric arrives
 * and kept (empty once the NodeMetric is deleted) until the plugin is freed, so that NodeInfos
 * can hold it as their memo (sched_node_memo_get()) while the records come and go.
 *
 * Its first cache line is all that Score reads of a node (with the NodeInfo's first line): a
 * summary of the usage it compares, made from the record and the NodeInfo's pods and kept until
 * either changes; Filter's summary is on the second line. Reading the record, its usage cache
 * and its lock cost about six cache misses per scored node, most of the Koordinator profile's
 * cycle. The summary is under a sequence lock (seq): one thread at a time makes it (seq odd
 * meanwhile; another that finds it so takes the long way), and readers only load, so that
 * the line stays shared between the Score workers (a lock word written by every reader moved
 * the line between the CPUs on every scored node). The writer of a record (under the plugin's
 * write lock, so with no reader or maker about) clears valid.
 */
struct la_holder {
    /* line 1 */
    _Atomic uint16_t seq;            /* odd: a thread is making the summary */
    bool has_node;                   /* m->has_node, under the plugin's lock */
    bool valid;                      /* the summary is for m and the key below */
    int nres;                        /* key: sched_res_count() */
    double update;                   /* m->update, under the plugin's lock */
    uint64_t generation;             /* key: the NodeInfo's */
    uint32_t npods;                  /* key: the NodeInfo's (saturated) */
    uint32_t epoch;                  /* key: la->prune_epoch (truncated) */
    struct la_metric *m;             /* NULL: no NodeMetric now */
    int64_t score[LA_SUMMARY_SCORE]; /* per resourceWeights entry: its usage, in order */
    /* line 2 */
    int64_t filter[LA_SUMMARY_FILTER]; /* per entry of the non-prod thresholds in use */
};

struct la {
    struct la_args a;
    struct sched_handle *h;
    double (*now)(void);    /* wall clock, seconds */
    double (*coarse)(void); /* the same at the clock tick's resolution, for NodeMetric expiry:
                               Filter and Score ask per node, and a precise reading per node was
                               3 % of the Koordinator profile's scheduler CPU */
    pthread_rwlock_t lock;
    struct hmap metrics;        /* node -> struct la_holder * */
    struct sched_memo_key memo; /* NodeInfo -> its struct la_holder * */
    struct hmap assigned;       /* pod uid -> struct la_assign * */
    unsigned long reserves;     /* prune assignments now and then */
    unsigned long prune_epoch;  /* bumped by every prune (under the write lock) */
    struct kube_informer *inf;
    const struct kube_resource *res; /* what inf watches; NULL without a feed */
};

/* Puts obj's NodeMetric in the map (replacing), drops the assignments it now covers and raises
 * the cluster event (label "NodeMetricAdd" or "NodeMetricUpdate"). */
void sched__la_metric_set(struct la *la, const cJSON *obj, bool added);
/* Removes the NodeMetric of node and raises "NodeMetricDelete". */
void sched__la_metric_delete(struct la *la, const char *node);
/* Drops every assignment made at or before cutoff (of node, or of every node when NULL). Call
 * with the write lock held. */
void sched__la_prune(struct la *la, const char *node, double cutoff);

/*
 * With a client: picks the NodeMetric API (discovery: metrics.koordinator.sh when served, else
 * slo.koordinator.sh, else none), creates the informer and hands it to the scheduler.
 */
void sched__la_feed_start(struct la *la, struct sched_handle *h);
void sched__la_feed_free(struct la *la);

/* The estimated usage of pod (default_estimator.go), into out (zeroed first). */
void sched__la_estimate(const struct la *la, const struct sched_pod *pod, struct sched_res *out);

/* Tests: a clock of their own. */
void sched__la_set_clock(void *self, double (*now)(void));

#endif
