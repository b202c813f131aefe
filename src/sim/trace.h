/*
 * The trace a `koord sim` replay plays (issue 19 §2): the fleet's nodes and the pods that come
 * and go, in the format of Alibaba's openb files (cluster-trace-gpu-v2023):
 *
 *   nodes: sn,cpu_milli,memory_mib,gpu,model
 *   pods:  name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,
 *          deletion_time,scheduled_time
 *
 * Strict: the header must be exactly this, every line must have every column, numbers must be
 * whole and non-negative; the first bad line fails the whole file with "FILE:LINE:COLUMN: why"
 * (column counted in characters from 1), so a trace is never half-replayed.
 *
 * What is kept: a node's name, CPU and memory; a pod's name, CPU and memory request, class
 * (qos LS, Burstable and Guaranteed are latency-sensitive production pods, BE is batch), creation
 * and deletion times (seconds from the trace's start; an empty deletion_time: it runs to the
 * end). The GPU columns are read and checked but ignored: the replay is about CPU and memory
 * colocation. pod_phase and scheduled_time are ignored too: every pod is replayed as created at
 * its creation time, and the scheduler decides (a trace pod that stayed Pending or Failed is
 * offered to the scheduler like any other).
 */
#ifndef KOORD_SIM_TRACE_H
#define KOORD_SIM_TRACE_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;

struct sim_node {
    char *name;
    int64_t cpu_milli;
    int64_t memory; /* bytes */
};

enum sim_class {
    SIM_LS, /* latency-sensitive: LS, Burstable, Guaranteed */
    SIM_BE, /* best effort: BE */
};

struct sim_pod {
    char *name;
    int64_t cpu_milli; /* request (= limit) */
    int64_t memory;    /* bytes */
    enum sim_class cls;
    double create_s; /* trace seconds */
    double delete_s; /* trace seconds; < 0: never (runs to the end of the trace) */
};

struct sim_trace {
    struct sim_node *nodes;
    size_t nnodes;
    struct sim_pod *pods; /* sorted by create_s, then LS before BE, then by name */
    size_t npods;
    double span_s; /* the largest creation or deletion time */
};

/* Bounds on what one file may hold (a larger one is refused, not truncated). */
#define SIM_TRACE_MAX_NODES 100000
#define SIM_TRACE_MAX_PODS  1000000

/*
 * Parses a node list (text of len bytes, named name in messages) into t->nodes (appending to
 * none: t must not hold nodes yet). 0; -EINVAL with "name:line:col: why" in err; -E2BIG past
 * SIM_TRACE_MAX_NODES; t is unchanged on failure.
 */
int sim_trace_parse_nodes(struct sim_trace *t, const char *name, const char *text, size_t len,
                          struct strbuf *err);

/* The same for a pod list into t->pods (sorted by creation time afterwards), updating span_s. */
int sim_trace_parse_pods(struct sim_trace *t, const char *name, const char *text, size_t len,
                         struct strbuf *err);

/* The same from files; -errno of reading names the file in err. */
int sim_trace_read_nodes(struct sim_trace *t, const char *path, struct strbuf *err);
int sim_trace_read_pods(struct sim_trace *t, const char *path, struct strbuf *err);

/*
 * Sorts pods by creation time, then LS before BE, then name (the order a replay creates them
 * in: at the same second the services come first), and refuses a
 * name that appears twice: -EINVAL with "name: pod \"x\" appears twice" in err.
 */
int sim_trace_sort_pods(struct sim_pod *v, size_t n, const char *name, struct strbuf *err);

/*
 * n synthetic nodes "sim-node-00000".. of cpu_milli and memory bytes each (openb's most common
 * shape among CPU-only nodes is 32 cores / 256 GiB). 0, -EINVAL (n = 0, n past
 * SIM_TRACE_MAX_NODES, or a size <= 0; err says which).
 */
int sim_trace_synthetic_nodes(struct sim_trace *t, size_t n, int64_t cpu_milli, int64_t memory,
                              struct strbuf *err);

/* Frees what t holds; t is empty afterwards. */
void sim_trace_release(struct sim_trace *t);

#endif
