/*
 * The scheduling queue (kube-scheduler internal/queue/scheduling_queue.go; reference
 * scheduler.md 3): activeQ (a heap in QueueSort order), backoffQ (a heap by backoff expiry),
 * the unschedulable pool, the gated pods (seed 003, KEP-3521) and the nominator.
 *
 * Gated pods: a pod whose PreEnqueue plugins reject it waits in the unschedulable map marked
 * gated. It is never popped, never filtered, never backs off, and cluster events skip it when
 * the SchedulingGates plugin gated it (the kubernetes#124384 hot-fix): the only way out is an
 * update of the pod itself that passes PreEnqueue. An update of a gated pod that does not clear
 * its gates costs a map lookup and one PreEnqueue run.
 *
 * Requeueing follows QueueingHints *off* (1.30/1.31): a pod that failed goes to the
 * unschedulable pool, or to backoffQ when a move event arrived during its cycle or it failed with
 * an error; a cluster event moves the unschedulable pods whose rejecting plugins registered
 * for it (pods rejected by no plugin move on any event). Pods stay in the pool 5 minutes at
 * most. Backoff: 1 s doubling to 10 s per attempt, counted from when the pod was put back.
 *
 * Keys: pods by "namespace/name" (a recreated pod replaces its predecessor).
 *
 * Time comes from opts.now (tests pass a fake clock); the periodic flushes are calls the owner
 * makes (sched_queue_run() starts a thread that does it every second).
 *
 * Between pop and add_unschedulable/done a pod is "in flight": updates to it are remembered
 * (the newest version goes back into the queue) and a deletion makes the queue drop it when it
 * comes back.
 *
 * Thread safety: every call may run on any thread; pop blocks. The callbacks in the options
 * (pre_enqueue, less, interested, and the pre_check / match arguments) run under the queue's
 * lock: they must be quick and must not call back into the queue.
 */
#ifndef KOORD_SCHED_QUEUE_H
#define KOORD_SCHED_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sched_pod;
struct sched_status;

/* A pod in the queue, as pop hands it to the scheduling cycle. */
struct sched_queued_pod {
    struct sched_pod *pod;  /* a reference, owned by this record */
    double timestamp;       /* last (re)add: sort order and backoff start */
    double initial_attempt; /* first entry into activeQ; 0 until then */
    int attempts;
    uint64_t unschedulable_plugins; /* registry-id bits of the plugins that rejected it */
    uint64_t pending_plugins;
    bool gated;
    int64_t cycle; /* the scheduling cycle that popped it */
    /* private */
    int where;
    size_t heap_index;
    uint64_t gating_plugin; /* registry-id bit of the PreEnqueue plugin that gated it */
};

struct sched_queue_opts {
    double (*now)(void *userdata); /* NULL: CLOCK_MONOTONIC seconds */
    void *userdata;                /* for every callback */
    double initial_backoff_s;      /* 0 = 1 */
    double max_backoff_s;          /* 0 = 10 */
    double max_unschedulable_s;    /* 0 = 300 */
    /*
     * Runs the PreEnqueue plugins of the pod's profile: SCHED_SUCCESS, or the first rejection
     * with *ret_plugin its registry id. NULL: every pod passes.
     */
    int (*pre_enqueue)(void *userdata, const struct sched_pod *pod, int *ret_plugin);
    /* QueueSort Less; NULL: priority then timestamp (PrioritySort). */
    bool (*less)(void *userdata, const struct sched_pod *a, double ta, const struct sched_pod *b,
                 double tb);
    /*
     * Whether any plugin in mask (0: "any plugin") registered for the event (resource "Pod" or
     * "Node" or a GVK, action bits). NULL: every plugin is interested in every event.
     */
    bool (*interested)(void *userdata, uint64_t mask, const char *resource, unsigned actions);
    /* The registry id of SchedulingGates (its gated pods are skipped by events); -1 none. */
    int gates_plugin_id;
    /*
     * Registry-id bits of plugins that gate in PreEnqueue what they would reject later
     * (ElasticQuota: a full quota): a pod put back after one of them rejected it runs
     * PreEnqueue again and, if gated there, waits gated (no backoff, no further attempt)
     * rather than in the unschedulable pool. 0: none.
     */
    uint64_t recheck_plugins;
};

struct sched_queue;

struct sched_queue *sched_queue_new(const struct sched_queue_opts *opts);
/*
 * Closes (waking pop), stops the flush thread and frees every record. NULL is fine. A pop
 * blocked meanwhile returns -ECANCELED before the memory goes; no other call may be running or
 * follow.
 */
void sched_queue_free(struct sched_queue *q);
/*
 * Closes the queue (Close()): blocked and later pops return -ECANCELED, so the scheduling
 * threads can be stopped and joined before sched_queue_free(). Every other call keeps working.
 */
void sched_queue_close(struct sched_queue *q);

/* A new unassigned pod (takes a new reference): PreEnqueue, then activeQ or gated. */
void sched_queue_add(struct sched_queue *q, struct sched_pod *pod);
/*
 * An informer update of an unassigned pod (takes a new reference to newp). In activeQ or
 * backoffQ: replaced in place (and re-sorted). In the pool: if changed in a way that matters
 * (spec, labels, annotations; not resourceVersion or status), back to backoffQ while backing
 * off, else PreEnqueue and activeQ or stay gated; unchanged: only the stored pod is refreshed.
 * Not queued (and not being scheduled): like add. oldp may be NULL: the stored pod is then
 * what newp is compared with.
 */
void sched_queue_update(struct sched_queue *q, struct sched_pod *oldp, struct sched_pod *newp);
/* The pod left (deleted, or bound by someone else): removed from every structure. */
void sched_queue_delete(struct sched_queue *q, const struct sched_pod *pod);

/*
 * Blocks until activeQ has a pod or the queue is closed: 0 and *ret (attempts and cycle
 * counted, rejecting plugins cleared; the caller owns the record until it hands it back with
 * sched_queue_add_unschedulable() or frees it with sched_queued_pod_free()); -ECANCELED when
 * closed. timeout_s < 0 waits forever; else -ETIMEDOUT after it.
 */
int sched_queue_pop(struct sched_queue *q, double timeout_s, struct sched_queued_pod **ret);
void sched_queued_pod_free(struct sched_queued_pod *qp);
/*
 * Done(): the attempt of the popped pod key ended without handing the record back (bound, or
 * given up): the queue stops tracking it in flight. Call it before sched_queued_pod_free() for
 * every popped pod that is not handed to sched_queue_add_unschedulable() (which ends the
 * tracking itself). Unknown keys are ignored.
 */
void sched_queue_done(struct sched_queue *q, const char *key);

/* The attempt of the pod with key ended (bound, or dropped): stops tracking it as in flight. */
void sched_queue_done(struct sched_queue *q, const char *key);

/* Wakes every pop with -ECANCELED and refuses further pops; the records stay until free. */
void sched_queue_close(struct sched_queue *q);

/*
 * Puts back a pod whose attempt failed (takes ownership of qp). The latest version of the pod
 * the queue saw replaces qp->pod if an update arrived meanwhile; a pod deleted meanwhile is
 * dropped. -EEXIST (and qp freed) if the pod is queued already.
 */
int sched_queue_add_unschedulable(struct sched_queue *q, struct sched_queued_pod *qp);

/* The current scheduling cycle (incremented by pop). */
int64_t sched_queue_cycle(struct sched_queue *q);

/*
 * A cluster event (MoveAllToActiveOrBackoffQueue): every pool pod whose rejecting plugins
 * registered for (resource, actions), and which passes pre_check (NULL: all), moves to
 * backoffQ while backing off, else through PreEnqueue to activeQ. label names the event in
 * metrics ("NodeAdd", "AssignedPodDelete", ...).
 */
void sched_queue_move_all(struct sched_queue *q, const char *label, const char *resource,
                          unsigned actions,
                          bool (*pre_check)(void *arg, const struct sched_pod *pod), void *arg);

/*
 * Assigned pod added or updated: only pool pods with required pod affinity that the new pod's
 * labels could satisfy move (AssignedPodAdded); match decides per pod.
 */
void sched_queue_assigned_pod_added(struct sched_queue *q, const char *label,
                                    bool (*match)(void *arg, const struct sched_pod *pod),
                                    void *arg);

/* Pods in the pool or backoffQ move to activeQ now (PodsToActivate). */
void sched_queue_activate(struct sched_queue *q, const char *const *keys, size_t n);

/* Moves backoffQ pods whose backoff ended to activeQ (every second). */
void sched_queue_flush_backoff(struct sched_queue *q);
/* Moves pool pods older than max_unschedulable_s (every 30 s). */
void sched_queue_flush_unschedulable(struct sched_queue *q);
/* Starts a thread that calls the two flushes on their periods (real clock). 0 or -errno. */
int sched_queue_run(struct sched_queue *q);

/* ---- nominator ---- */

/* Records (node non-empty) or clears (node "" or NULL) the node a pod is nominated to. */
void sched_queue_nominate(struct sched_queue *q, struct sched_pod *pod, const char *node);
/* Pods nominated to node, as new references (free with sched_pods_free()); the count. */
size_t sched_queue_nominated(struct sched_queue *q, const char *node, struct sched_pod ***ret);
/* Whether any pod is nominated to any node (a cycle asks once, then per node only if so). */
bool sched_queue_has_nominations(struct sched_queue *q);

/* ---- figures ---- */

struct sched_queue_stats {
    size_t active, backoff, unschedulable, gated;
    /* queue_incoming_pods_total by (queue, event), summed per queue */
    uint64_t incoming_active, incoming_backoff, incoming_unschedulable, incoming_gated;
    uint64_t pre_enqueue_runs; /* PreEnqueue evaluations (the gated benchmark's figure) */
};
void sched_queue_stats(struct sched_queue *q, struct sched_queue_stats *ret);

/*
 * Calls fn for each (queue, event, count) of scheduler_queue_incoming_pods_total, under the
 * queue's lock (fn must not call back into the queue).
 */
void sched_queue_foreach_incoming(struct sched_queue *q,
                                  void (*fn)(void *arg, const char *queue, const char *event,
                                             uint64_t count),
                                  void *arg);

/* Whether the pod (by key) is in any structure, and which: "active", "backoff",
 * "unschedulable", "gated" or NULL. For tests and debugging. */
const char *sched_queue_where(struct sched_queue *q, const char *key);

#endif
