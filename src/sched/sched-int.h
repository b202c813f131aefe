/*
 * Internals shared by scheduler.c (wiring, informers, events, asynchronous API work) and
 * schedule_one.c (the cycle). No other directory includes this.
 */
#ifndef KOORD_SCHED_INT_H
#define KOORD_SCHED_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "sched/cache/cache.h"
#include "sched/config/config.h"
#include "sched/framework/framework.h"
#include "sched/framework/parallel.h"
#include "sched/framework/runtime.h"
#include "sched/queue/queue.h"
#include "sched/scheduler.h"

struct kube_informer;
struct kube_recorder;
struct sched_pool;
struct sched_metrics;

/* The registry-id bit of a pod that cannot be decoded: no plugin registers for it, so only
 * an update of the pod (or the 5-minute flush) retries it. */
#define SCHED__INVALID_POD_BIT (UINT64_C(1) << 63)

/*
 * Work for the API threads. Bindings go first; failure reports (event and condition) and
 * Scheduled events wait in a second, bounded list and are dropped when it is full, as
 * client-go's event broadcaster drops events when its queue is full: under load the pods are
 * placed first and the record of it may be partial.
 */
enum sched__job_kind { SCHED__JOB_BIND, SCHED__JOB_FAIL, SCHED__JOB_EVENT };

#define SCHED__MAX_REPORTS 1000

struct sched__job {
    enum sched__job_kind kind;
    struct sched__job *next;
    struct sched_framework *fw;
    struct sched_queued_pod *qp; /* BIND: owned */
    struct sched_cycle *cs;      /* BIND: owned */
    char *node;                  /* BIND: the chosen node */
    double start;                /* BIND: when the attempt began (monotonic) */
    /* FAIL: the event and condition to write */
    struct sched_pod *pod; /* FAIL: a reference */
    char *reason;          /* "Unschedulable" or "SchedulerError" */
    char *message;
    char *nominated; /* NULL: leave status.nominatedNodeName alone */
    /* EVENT: pod and node (the Scheduled event) */
};

struct sched__jobs {
    struct sched__job *head, *tail;
    size_t n;
};

/*
 * The metric series the per-pod paths observe, found once (schedule_one.c): a scheduled pod
 * observes about nine, and building and hashing each "name{labels}" key cost more than the
 * observation. Filled on first use by whichever thread gets there (the same pointer either way).
 */
enum sched__point {
    SCHED__PT_PRE_FILTER,
    SCHED__PT_FILTER,
    SCHED__PT_POST_FILTER,
    SCHED__PT_SCORE,
    SCHED__PT_BIND,
    SCHED__NPOINTS
};
enum sched__result {
    SCHED__RES_SCHEDULED,
    SCHED__RES_UNSCHEDULABLE,
    SCHED__RES_ERROR,
    SCHED__NRESULTS
};
#define SCHED__NCODES    7  /* enum sched_code */
#define SCHED__SLI_SLOTS 16 /* attempts="1".."14", "15+" (slot 0 unused) */

struct sched_series;

struct sched__profile_series {
    _Atomic(struct sched_series *) point[SCHED__NPOINTS][SCHED__NCODES];
    _Atomic(struct sched_series *) attempts[SCHED__NRESULTS], attempt_duration[SCHED__NRESULTS];
};

struct sched__series {
    struct sched__profile_series *profile; /* one per s->fws entry */
    _Atomic(struct sched_series *) algorithm, pod_attempts, sli[SCHED__SLI_SLOTS];
};

struct sched_scheduler {
    struct sched_scheduler_opts o;
    const struct sched_config *cfg;
    struct sched_framework **fws;
    size_t nfws;
    struct sched_queue *queue;
    struct sched_cache *cache;
    struct sched_snapshot snap;
    struct sched_pool *pool;
    struct sched_metrics *metrics;
    struct sched__series series;
    struct kube_recorder *recorder;
    struct kube_informer *pods_inf, *nodes_inf;
    struct kube_informer *resv_inf;     /* Reservations, when a profile runs the plugin */
    bool resv_optional;                 /* their CRD was missing at start: no wait for the sync */
    struct sched_rcache *rcache;        /* the room they hold (reservation/rcache.h), or NULL */
    struct kube_informer **plugin_infs; /* plugins' own (sched_handle_add_informer), borrowed */
    size_t nplugin_infs;
    size_t next_start; /* round-robin start of the node search */
    struct sched_pool_cost filter_cost;
    unsigned rng;
    /* The cycle's node arrays, kept from cycle to cycle (scheduling thread only): a fresh
     * calloc of a few KB per cycle made glibc consolidate its fastbins every time. */
    struct sched_node_info **feasible_buf;
    size_t feasible_cap;
    struct sched_node_score *scores_buf;
    size_t scores_cap;

    pthread_t loop;
    bool running;
    _Atomic bool scheduling; /* running, for other threads (sched_handle_leading) */
    _Atomic int stopping;

    /* API work */
    pthread_mutex_t jobs_lock;
    pthread_cond_t jobs_cond, idle_cond;
    struct sched__jobs binds, reports;
    size_t inflight; /* jobs queued or running */
    uint64_t reports_dropped;
    pthread_t *binders;
    int nbinders;
    bool jobs_stop;

    /* figures */
    _Atomic uint64_t attempts, scheduled, unschedulable, errors, bound, bind_failures;
};

/* selectHost over n >= 1 scores: the highest total, ties broken uniformly at random with the
 * xorshift state *rng (0 is taken as a fixed seed). */
struct sched_node_info *sched__select_host(unsigned *rng, const struct sched_node_score *v,
                                           size_t n);
/* The profile of a scheduler name, or NULL. */
struct sched_framework *sched__framework_of(struct sched_scheduler *s, const char *name);
/* Queues API work (takes ownership of j). */
void sched__submit(struct sched_scheduler *s, struct sched__job *j);
/* Monotonic seconds. */
double sched__now(void);
/* The failure path of a cycle (handleSchedulingFailure): requeue qp (takes ownership), and
 * queue the event and condition. */
void sched__fail(struct sched_scheduler *s, struct sched_framework *fw, struct sched_queued_pod *qp,
                 const struct sched_status *st, const char *message, const char *nominated);
/* The binding cycle of a job (runs on an API thread). */
void sched__bind(struct sched_scheduler *s, struct sched__job *j);

#endif
