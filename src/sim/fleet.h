/*
 * The simulated fleet (issue 19 §1): every node of the trace as an API object, and in this one
 * process the kubelet and the agent each node would run.
 *
 *  - Nodes are registered with capacity = allocatable from the node list, the labels kubelet
 *    sets and a Ready condition written once: neither koord manager nor koord scheduler looks
 *    at node heartbeats or Leases (the scheduler filters on unschedulable and taints only), so
 *    10,000 nodes do not cost 10,000 Lease writes every 10 s.
 *  - The kubelet stand-in watches the pods (one informer over all namespaces, indexed by
 *    node): a pod bound to a fleet node becomes Running through pods/status (phase, the four
 *    conditions, startTime, hostIP, podIP, qosClass, a running container status); a pod being
 *    deleted gracefully (an eviction) is deleted for good, as kubelet confirms a stopped pod.
 *  - The agent stand-in of each node reports the node's NodeMetric status (node usage = the
 *    pods' modelled usage + the model's system share; per-pod usage; the shape `koord agent`
 *    sends, canonical as agent/report/reporter.c sends it) to the manager's NodeMetric API at
 *    the report interval, reports spread evenly over the interval, with the node's own client
 *    certificate (CN=system:node:<name>, O=system:nodes, minted from the API server's CA, which
 *    koord manager trusts for client certificates: manager/nodemetric/auth.h);
 *  - and runs the agent's QoS decisions on the modelled usage every QoS tick, with the
 *    agent's code and the node's NodeSLO (a NodeSLO informer): qos_cpusuppress_milli() caps
 *    what BE pods get (the node counts as suppressed when that is below their demand), and the
 *    eviction plans of BECPUEvict (cpuevict.h) and BEMemoryEvict/MemoryEvict (memoryevict.h)
 *    pick victims that qos_evict_api_evict() evicts through the Eviction API, recording the
 *    Event the real agent records. A suppression that starts, or moves by more than 10 % of the
 *    node's CPU, is recorded as a Normal Event BECPUSuppress on the Node (at most one per node
 *    per 10 s of wall time).
 *
 * The fleet owns the state of every replayed pod (created, bound, running, ended, evicted), so
 * it also creates and ends them for the replay (replay.c) and measures the outcome.
 *
 * Threads: the caller's (the replay clock) calls every function below; the informers' threads
 * update pod and node state under the fleet's lock; worker threads make the pod writes (create,
 * Running, Succeeded, delete; a pod's writes in order on one worker) and sender threads PUT the
 * reports, so that a slow write never holds up the clock.
 */
#ifndef KOORD_SIM_FLEET_H
#define KOORD_SIM_FLEET_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/model.h"
#include "sim/outcome.h"
#include "sim/trace.h"

struct kube_client;
struct strbuf;

#define SIM_NS_LS        "sim-ls"
#define SIM_NS_BE        "sim-be"
#define SIM_LABEL_INDEX  "sim.koordinator.sh/pod-index"
#define SIM_LABEL_COLOC  "koordinator.sh/enable-colocation"
#define SIM_EVENT_REASON "BECPUSuppress"

struct sim_fleet_opts {
    struct kube_client *admin; /* the API server, as admin (borrowed) */
    const struct sim_trace *trace;
    const struct sim_model *model;
    bool colocation;

    /* Reports: to manager_url verified with manager_ca, each node with a certificate minted
     * from ca_dir/ca.{crt,key} into cert_dir; or, manager_url NULL, through the API server
     * (aggregation) with the admin credentials. */
    const char *manager_url;
    const char *manager_ca;
    const char *ca_dir;
    const char *cert_dir;
    /* node_certs false: every node reports to manager_url as the admin of this kubeconfig
     * (one client, a few connections: a fleet past the open-file limit) */
    bool node_certs;
    const char *admin_kubeconfig;
    unsigned report_interval_s;
    unsigned senders; /* 0 = 4 */
};

struct sim_fleet;

/*
 * Creates the namespaces (sim-be labelled for the ClusterColocationProfile when colocation is
 * on), registers the nodes (from several threads; the first node refused is named in err),
 * mints their certificates, starts the informers (waiting for their first list), waits for the
 * manager to have every node's NodeMetric and starts the senders. 0, or a negative errno with
 * err saying what failed.
 */
int sim_fleet_start(const struct sim_fleet_opts *o, struct sim_fleet **ret, struct strbuf *err);

/* Stops the threads and frees. NULL is fine. */
void sim_fleet_free(struct sim_fleet *f);

/* Creates trace pod i (at trace time t), through a worker: a failure is logged and counted,
 * not fatal (the API server may be briefly unavailable). Returns 0. */
int sim_fleet_create_pod(struct sim_fleet *f, size_t i, double t);

/*
 * One step of the kubelet stand-in and the trace at trace time t: bound pods become Running,
 * pods being deleted are confirmed, pods whose time is up end (LS deleted, BE Succeeded then
 * deleted), pods that disappeared without the trace ending them (evicted) are counted and BE
 * ones re-created with their remaining run time.
 */
void sim_fleet_step(struct sim_fleet *f, double t);

/* One QoS tick of every agent stand-in at trace time t (dt: trace seconds since the last),
 * wall clock now_ms. */
void sim_fleet_qos(struct sim_fleet *f, double t, double dt, int64_t now_ms);

/* Queues the reports due at now_ms (monotonic ms) for the senders. */
void sim_fleet_report(struct sim_fleet *f, int64_t now_ms);

/* The fleet totals now (trace time t, wall seconds since the start). */
void sim_fleet_sample(struct sim_fleet *f, double t, double wall_s, struct sim_sample *ret);

/* Pods created that the scheduler has neither placed nor refused (PodScheduled False) yet. */
size_t sim_fleet_unsettled(struct sim_fleet *f);

/* The per-pod figures of the run (counts, waits, latencies, evictions) into r. */
void sim_fleet_outcome(struct sim_fleet *f, struct sim_run *r);

/* Queues a report of every node now (before the replay starts: the scheduler's LoadAware
 * filter refuses nodes without a fresh NodeMetric), then spreads the next ones. */
void sim_fleet_report_all(struct sim_fleet *f, int64_t now_ms);

/* Reports sent and failed so far (for progress lines and tests). */
void sim_fleet_report_stats(struct sim_fleet *f, uint64_t *ret_sent, uint64_t *ret_failed);

#endif
