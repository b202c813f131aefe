/*
 * A small worker pool for fanning a loop out over nodes (kube-scheduler
 * framework/parallelize/parallelism.go: Until(ctx, pieces, fn) with 16 workers and chunked
 * work). The caller's thread works too; the loop returns when every index has been handed out
 * and finished. A body that wants to stop early (enough feasible nodes found) checks its own
 * flag and returns at once; the pool stops handing out indices when sched_pool_cancel() is
 * called.
 *
 * One loop runs at a time per pool (the scheduling thread is the only caller); the pool's
 * threads sleep on a condition variable between loops.
 */
#ifndef KOORD_SCHED_FRAMEWORK_PARALLEL_H
#define KOORD_SCHED_FRAMEWORK_PARALLEL_H

#include <stddef.h>

struct sched_pool;

/* workers extra threads (0: everything on the caller). NULL on thread creation failure. */
struct sched_pool *sched_pool_new(int workers);
/* Joins the threads. NULL is fine. */
void sched_pool_free(struct sched_pool *p);

/*
 * Calls fn(arg, i) for every i in [0, n), in chunks of chunk indices (0: n / (4 x threads),
 * at least 1), on the pool's threads and the caller's. p NULL runs a plain loop.
 */
void sched_pool_run(struct sched_pool *p, size_t n, size_t chunk, void (*fn)(void *arg, size_t i),
                    void *arg);
/*
 * What one loop of a call site has cost lately, for sched_pool_run_measured(). Zero it to
 * start. Only the caller's thread touches it.
 */
struct sched_pool_cost {
    double ewma_ns; /* the loop's work (wall time x threads taking part), smoothed */
};

/* Loops expected to cost less work than this run on the caller alone. */
#define SCHED_POOL_MIN_PARALLEL_NS 100000.0

/*
 * sched_pool_run() for a loop that runs once per cycle: when the last loops of this call site
 * cost less than SCHED_POOL_MIN_PARALLEL_NS of work, it runs on the caller alone. Waking a
 * sleeping worker, and its going back to sleep, costs more CPU than splitting a 50 us loop saves
 * (on a small machine that CPU is the API server's), while a heavy loop (pod affinity over
 * thousands of nodes) still fans out. The first loop runs alone and measures.
 */
void sched_pool_run_measured(struct sched_pool *p, struct sched_pool_cost *c, size_t n,
                             size_t chunk, void (*fn)(void *arg, size_t i), void *arg);
/* From inside fn: hand out no further indices in this loop. */
void sched_pool_cancel(struct sched_pool *p);

#endif
