/*
 * What the two halves of bench/scheduler share: the object templates of scheduler_perf
 * (reference scheduler.md 9.2), rendered as bytes around a name so that creating thousands of
 * objects costs the client no JSON work, and the throughput collector of scheduler_perf
 * (throughputCollector: 1 s samples), run on a counter of scheduled pods that both the API
 * watch (main.c) and the in-process binding hook (cycle.c) advance.
 */
#ifndef KOORD_BENCH_SCHEDULER_SBENCH_H
#define KOORD_BENCH_SCHEDULER_SBENCH_H

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/strbuf.h"

/* The templates of reference 9.2 (upstream's test/integration/scheduler_perf/templates). */
enum sbench_tpl {
    SBENCH_NODE_DEFAULT,   /* node-default: pods 110, cpu 4, memory 32Gi, Ready */
    SBENCH_NODE_WITH_NAME, /* node-with-name: pods 90000, cpu 4, memory 32Gi, Ready */
    SBENCH_POD_DEFAULT,    /* pod-default: 100m/500Mi requests = limits, containerPort 80 */
    SBENCH_POD_LIGHT,      /* light-pod: no requests, terminationGracePeriodSeconds 0 */
    SBENCH_POD_GATED,      /* gated-pod: a light pod with the gate test.k8s.io/hold */
    SBENCH_POD_AFFINITY,   /* pod-with-pod-affinity: color=blue, required affinity by zone */
    SBENCH_POD_SPREAD,     /* pod-with-topology-spreading: maxSkew 5 by zone, DoNotSchedule */
    SBENCH_POD_LOW,        /* pod-low-priority: 900m/500Mi, terminationGracePeriodSeconds 0 */
    SBENCH_POD_HIGH,       /* pod-high-priority: priority 10, 3000m/500Mi */
    SBENCH_POD_LARGE_CPU,  /* pod-large-cpu: requests cpu 9 (fits no node-default) */
};

/* The PriorityClass of SBENCH_POD_HIGH: upstream's harness turns the Priority admission plugin
 * off and sets spec.priority 10; koord apiserver runs it, so the pods name a class of value 10. */
#define SBENCH_HIGH_CLASS "scheduler-perf-high"

/* The label key of the zones a node template may carry. */
#define SBENCH_ZONE_KEY "topology.kubernetes.io/zone"

/*
 * A template as a parsed object (name "@NAME@"): nodes labelled zone=zone when zone is not
 * NULL. The caller frees it with cJSON_Delete().
 */
cJSON *sbench_object(enum sbench_tpl t, const char *zone);

/* An object's bytes around its name, so that rendering one is two copies and the name. */
struct sbench_bytes {
    struct strbuf pre, post;
};

void sbench_bytes_init(struct sbench_bytes *b, enum sbench_tpl t, const char *zone);
void sbench_bytes_release(struct sbench_bytes *b);
/* Replaces out with the object named name. */
void sbench_bytes_render(const struct sbench_bytes *b, const char *name, struct strbuf *out);

/*
 * scheduler_perf's throughputCollector, exactly: every second it reads the number of measured
 * pods scheduled so far; nothing is recorded until that number is non-zero, and that first
 * non-zero sample is discarded (pod creation and sampling start independently); an interval
 * with no new pod is merged into the next one that has some, whose rate (new pods over the
 * measured time since the last recorded sample) is then recorded once per merged interval.
 * Average is the mean of the samples; PercN is sorted[ceil(len * N / 100) - 1].
 */
struct sbench_tput {
    atomic_size_t *count; /* borrowed: the pods scheduled so far */
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop, running;
    double *v; /* the samples (pods/s) */
    size_t n, cap;
};

struct sbench_tput_summary {
    size_t samples;
    double avg, p50, p90, p95, p99;
};

/* Starts sampling count (from now, every second). */
void sbench_tput_start(struct sbench_tput *t, atomic_size_t *count);
/* Stops sampling (the interval in progress is not recorded, as upstream's cancel) and
 * summarises the samples; all 0 when there were none. */
void sbench_tput_stop(struct sbench_tput *t, struct sbench_tput_summary *ret);

/* Sorts v ascending. */
void sbench_sort(double *v, size_t n);
/* The percentile p of sorted v in the collector's rule: v[ceil(n * p / 100) - 1]; 0 when n
 * is 0. */
double sbench_perc(const double *v, size_t n, unsigned p);

/* ---- the in-process cycle (cycle.c) ---- */

struct sbench_cycle_result {
    bool ran, ok;
    size_t nodes, init, measured;
    double feed_s;     /* feeding the measured pods to the queue */
    double wall_s;     /* from the first measured pod fed to the last bound */
    double pods_per_s; /* measured / wall_s */
    struct sbench_tput_summary tput;
    double cpu_s; /* this process, over wall_s */
};

/*
 * SchedulingBasic in this process: sched_scheduler_new() with a binding hook, nodes and pods
 * fed by hand, cycles run by sched_scheduler_schedule_one() on this thread until every
 * measured pod is bound. 0, or < 0 after bench_fail().
 */
int sbench_cycle_run(size_t nodes, size_t init, size_t measured, struct sbench_cycle_result *ret);

#endif
