/*
 * Internals shared by the files of the simulated fleet (fleet.h): the fleet's state, every
 * replayed pod's and node's, and the helpers the files call across. One file per part of what
 * the fleet stands in for, so that each says why it is as it is:
 *
 *   fleet.c          start (namespaces, then the parts below in order) and free, the helpers
 *   fleet_nodes.c    the Node objects (registered in parallel) and the nodes' report clients
 *   fleet_watch.c    the informers: what the kubelets and agents see of pods, nodes, NodeSLOs
 *   fleet_writes.c   the workers and the pod writes they make (create, Running, Succeeded,
 *                    delete)
 *   fleet_kubelet.c  the replay's side of the pods: created, started, ended, re-created
 *   fleet_agent.c    the agents' QoS decisions: suppression, evictions
 *   fleet_report.c   the agents' NodeMetric reports, the senders that PUT them, and the wait
 *                    for the manager to have every node's NodeMetric first
 *   fleet_sample.c   the fleet's totals and the run's outcome
 *
 * Locking: the pod table (f->pods) is appended to by the caller's thread only, so that thread
 * reads it without the lock; the informer threads write a pod's binding, UID and deletion
 * under f->lock, and push work (pods to start, to confirm deleted, gone) onto queues the
 * caller drains under the same lock. HTTP calls are never made with the lock held.
 *
 * No other directory includes this, but the queue's unit test (tests/sim/test_fleet_queue.c).
 */
#ifndef KOORD_SIM_FLEET_INT_H
#define KOORD_SIM_FLEET_INT_H

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/qos/nodeslo.h"
#include "api/rfc3339.h"
#include "base/hmap.h"
#include "sim/fleet.h"
#include "sim/outcome.h"
#include "sim/trace.h"

struct kube_client;
struct kube_informer;
struct kube_recorder;
struct qos_evict_api;
struct strbuf;

enum sim_fleet__pod_state {
    SIM_FLEET__POD_NEW,   /* created, not bound */
    SIM_FLEET__POD_BOUND, /* bound to a fleet node */
    SIM_FLEET__POD_GONE,  /* deleted from the API server */
};

/* One replayed pod: a trace pod, or the re-creation of an evicted one. */
struct sim_fleet__pod {
    size_t trace; /* index of the trace pod: the model's pod number */
    char name[160];
    enum sim_class cls;
    double delete_s;              /* LS: trace time it ends; < 0: never */
    double need_s;                /* BE: trace seconds it still has to run; < 0: forever */
    unsigned gen;                 /* re-creations before this one */
    double create_wall;           /* monotonic seconds at creation */
    double bind_wall;             /* ... at binding, 0 until bound */
    double run_since;             /* under f->lock: trace time it was bound, -1 before */
    enum sim_fleet__pod_state st; /* under f->lock */
    int node;                     /* under f->lock; -1 until bound */
    bool start_queued;            /* under f->lock */
    bool delete_queued;           /* under f->lock */
    bool ours;                    /* under f->lock: the trace ended it */
    bool refused;                 /* under f->lock: the scheduler said Unschedulable */
    const char *evicted_by;       /* under f->lock: the feature that evicted it */
    bool created;                 /* the API server accepted it */
    int64_t cpu_used, mem_used;   /* the model's last tick (caller's thread) */
};

struct sim_fleet__node {
    const struct sim_node *def;
    struct kube_client *client; /* reports (node identity), or the admin client */
    bool own_client;
    struct qos_threshold thr; /* under f->lock (NodeSLO informer) */
    bool have_slo;
    int64_t batch_cpu, batch_mem; /* under f->lock (Node informer) */
    /* the last QoS tick (caller's thread) */
    int64_t ls_cpu, ls_mem, be_cpu, be_mem, be_demand, sys_cpu, sys_mem;
    int64_t be_limit;
    bool suppressed, ls_over;
    bool ev_active;
    int64_t ev_amount, ev_ms;
    int64_t cpu_evict_ms;
    bool mem_has_last;
    int64_t mem_evict_ms;
    int64_t next_report_ms;
    size_t *pods; /* pod indices bound here (last QoS tick) */
    size_t npods, apods;
};

struct sim_fleet__idxvec {
    size_t *v;
    size_t n, alloc;
};

/* A report for the senders: node index, its NodeMetric status (owned). */
struct sim_fleet__job {
    size_t node;
    cJSON *status;
};

/* What the kubelet stand-in and the trace write to the API server, done by workers so that
 * one slow write does not hold up the clock; a pod's writes all go to one worker (index modulo
 * the worker count), in the order they were asked for. */
enum sim_fleet__op_kind {
    SIM_FLEET__OP_CREATE,
    SIM_FLEET__OP_START,
    SIM_FLEET__OP_FINISH, /* Succeeded, then deleted */
    SIM_FLEET__OP_DELETE,
};

struct sim_fleet__op {
    enum sim_fleet__op_kind kind;
    size_t idx;
    int node;
};

/* A FIFO of fixed-size items between threads (a worker's writes, the senders' reports): a push
 * never waits (the ring grows), a pop waits for an item or for the end. */
struct sim_fleet__queue {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned char *v; /* ring of alloc items of size bytes */
    size_t size, head, n, alloc;
    bool quit;
};

struct sim_fleet__worker {
    struct sim_fleet *f;
    pthread_t thread;
    bool started;
    struct sim_fleet__queue q; /* of struct sim_fleet__op */
};

#define SIM_FLEET__NWORKERS 4

struct sim_fleet {
    struct sim_fleet_opts o;
    pthread_mutex_t lock;
    struct sim_fleet__node *nodes;
    size_t nnodes;
    struct hmap node_index; /* name -> node index + 1 */
    struct sim_fleet__pod **pods;
    size_t npods, apods;
    bool *waited; /* per trace pod: its first binding was counted */
    double t_now; /* under lock: the trace time of the last step */

    struct kube_informer *pod_inf, *node_inf, *slo_inf;
    struct kube_client *reports; /* the shared report client without node certificates */
    struct kube_recorder *rec;
    struct qos_evict_api *evict;

    struct sim_fleet__idxvec q_start, q_delete, q_gone; /* under lock */

    /* the outcome */
    int32_t ls_created, be_created, be_completed, ls_evicted;
    atomic_int create_errors;
    struct sim_evictions be_ev;
    double ls_over_s;
    double *waits; /* BE: trace seconds from creation to first binding */
    size_t nwaits, awaits;
    double *lat_ls, *lat_be; /* wall seconds from creation to binding */
    size_t nlat_ls, alat_ls, nlat_be, alat_be;

    /* senders */
    struct sim_fleet__queue jobs; /* of struct sim_fleet__job */
    pthread_t *threads;
    size_t nthreads;
    atomic_ulong sent, failed;

    struct sim_fleet__worker workers[SIM_FLEET__NWORKERS];
};

/* Monotonic seconds. */
double sim_fleet__mono_s(void);

/* The namespace of a class's pods. */
const char *sim_fleet__ns_of(enum sim_class c);

/* The index of the fleet node called name, or -1. */
int sim_fleet__node_of(struct sim_fleet *f, const char *name);

/* The replayed pod an informer object is, or NULL (not ours, or not of this run). */
struct sim_fleet__pod *sim_fleet__pod_of(struct sim_fleet *f, const cJSON *obj, size_t *ret_idx);

void sim_fleet__idxvec_push(struct sim_fleet__idxvec *q, size_t x);

void sim_fleet__queue_init(struct sim_fleet__queue *q, size_t size);
void sim_fleet__queue_push(struct sim_fleet__queue *q, const void *item);

/* Waits for the first item and takes it into *ret: true; false once the queue is ended. */
bool sim_fleet__queue_pop(struct sim_fleet__queue *q, void *ret);

/* Ends the queue: every pop, waiting or to come, returns false. */
void sim_fleet__queue_quit(struct sim_fleet__queue *q);

/* Frees; the items still queued go to drop first (drop may be NULL). */
void sim_fleet__queue_release(struct sim_fleet__queue *q, void (*drop)(void *item));

/* The tree of a JSON text this code wrote (a mistake in it aborts). */
cJSON *sim_fleet__parse(const char *json);

/* Node n's InternalIP. */
void sim_fleet__host_ip(size_t n, char *buf, size_t size);

/* The wall clock now, as RFC 3339. */
void sim_fleet__now_rfc3339(char buf[RFC3339_STR_MAX]);

/* fleet_nodes.c: creates the Node object of every node of the trace. 0, or a negative errno
 * with err naming the first node that failed. */
int sim_fleet__register_nodes(struct sim_fleet *f, struct strbuf *err);

/* fleet_nodes.c: the clients the nodes report with (f->o says which); err as above. */
int sim_fleet__report_clients(struct sim_fleet *f, struct strbuf *err);

/* fleet_watch.c: starts the pod, node and NodeSLO informers and waits for the pod and node
 * ones' first list. */
int sim_fleet__watch_start(struct sim_fleet *f, struct strbuf *err);

/* fleet_writes.c: queues a write of pod idx (node: for SIM_FLEET__OP_START) on its worker. */
void sim_fleet__post_op(struct sim_fleet *f, enum sim_fleet__op_kind kind, size_t idx, int node);

/* fleet_writes.c: a worker thread (arg: its struct sim_fleet__worker). */
void *sim_fleet__worker_main(void *arg);

/* fleet_report.c: waits until the NodeMetric of every node exists (koord manager creates one per
 * Node it sees, and a report before that is refused as NotFound: with the nodes registered in
 * parallel the manager is behind, 2,601 of 3,000 first reports were refused on a loaded 2-core
 * machine). Progress is logged every 10 s; after 30 s without one more it goes on, with a
 * warning (no manager behind the API: the reports fail as they would have). */
void sim_fleet__wait_nodemetrics(struct sim_fleet *f);

/* fleet_report.c: a sender thread (arg: the fleet). */
void *sim_fleet__sender_main(void *arg);

#endif
