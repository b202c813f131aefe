/*
 * The outcome of a `koord sim` replay (issue 19 §3): what one run of the trace measured, as a
 * time series of fleet totals and a summary. The replay (run.c) fills it; the report
 * (report.c) writes it as CSV, as a side-by-side summary table and as a self-contained HTML
 * page with charts. It is the seam between the two, so it holds plain numbers only: no API
 * objects, no pointers into the replay's state.
 *
 * Units: CPU in milli-cores, memory in bytes, times in seconds (trace time: seconds from the
 * trace's start, as the openb files count; wall time: seconds since the run started).
 */
#ifndef KOORD_SIM_OUTCOME_H
#define KOORD_SIM_OUTCOME_H

#include <stddef.h>
#include <stdint.h>

/* One point of the time series: fleet totals at one instant of one run. */
struct sim_sample {
    double trace_s;
    double wall_s;
    int64_t cpu_capacity; /* sum of the nodes' allocatable cpu */
    int64_t mem_capacity;
    int64_t cpu_used; /* modelled usage of every pod (LS + BE) */
    int64_t mem_used;
    int64_t ls_cpu_used; /* LS (and every non-BE) pod */
    int64_t ls_mem_used;
    int64_t be_cpu_used; /* BE pods, after suppression */
    int64_t be_mem_used;
    int64_t batch_cpu_allocatable; /* sum of the Nodes' kubernetes.io/batch-cpu */
    int64_t batch_mem_allocatable; /* sum of the Nodes' kubernetes.io/batch-memory */
    int64_t batch_cpu_requested;   /* requested by bound BE pods (batch-cpu) */
    int64_t batch_mem_requested;
    int32_t ls_running, ls_pending;
    int32_t be_running, be_pending;
    int32_t be_completed;            /* cumulative */
    int32_t be_evicted;              /* cumulative */
    int32_t ls_evicted;              /* cumulative; must stay 0 */
    int32_t nodes_suppressed;        /* nodes whose BE pods are held below their demand now */
    int32_t nodes_ls_over_threshold; /* nodes whose LS usage is above the suppress threshold */
};

/* Percentiles of a set of durations (seconds); n = 0 leaves the rest 0. */
struct sim_dist {
    size_t n;
    double mean, p50, p95, p99, max;
};

/* Why BE pods were evicted, by the agent feature that evicted them. */
struct sim_evictions {
    int32_t be_cpu;    /* BECPUEvict */
    int32_t be_memory; /* BEMemoryEvict */
    int32_t memory;    /* MemoryEvict */
    int32_t other;
};

/* One run: colocation off or on. */
struct sim_run {
    const char *name;           /* "colocation off", "colocation on" */
    int colocation;             /* 0 or 1 */
    struct sim_sample *samples; /* owned, in time order */
    size_t nsamples;

    /* usage / capacity over the samples, as fractions 0..1 */
    double cpu_util_mean, cpu_util_p95;
    double mem_util_mean, mem_util_p95;
    /* batch capacity advertised and used, means over the samples (milli-cores, bytes) */
    double batch_cpu_allocatable_mean, batch_cpu_used_mean;
    double batch_mem_allocatable_mean, batch_mem_used_mean;

    int32_t ls_pods, be_pods;         /* created from the trace */
    int32_t be_completed;             /* ran to their trace deletion time */
    struct sim_dist be_wait;          /* creation to first binding, BE pods */
    struct sim_dist ls_sched_latency; /* creation to binding, seconds of wall time */
    struct sim_dist be_sched_latency;
    int32_t ls_evicted, ls_suppressed; /* must be 0 */
    struct sim_evictions be_evicted;
    double ls_over_threshold_s; /* node-seconds of trace time LS usage spent above the
                                 * suppress threshold */
};

/* Frees what sim_run owns (samples), not the struct itself. */
void sim_run_release(struct sim_run *r);

/*
 * The distribution of n values (seconds), nearest-rank percentiles. Sorts v in place. n = 0
 * gives all zeros.
 */
struct sim_dist sim_dist_of(double *v, size_t n);

/*
 * Fills the run's utilisation and batch means from its samples (cpu_used / cpu_capacity per
 * sample, samples with zero capacity skipped; p95 by nearest rank). Returns -ENOMEM or 0.
 */
int sim_run_summarise(struct sim_run *r);

#endif
