/* Summary statistics of a replay's outcome (outcome.h). */
#include "sim/outcome.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "base/base.h"

void sim_run_release(struct sim_run *r)
{
    if (!r)
        return;
    FREE_AND_NULL(r->samples);
    r->nsamples = 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest rank: the smallest value with at least p percent of the values at or below it. */
static double rank(const double *v, size_t n, double p)
{
    size_t k = (size_t)ceil(p / 100.0 * (double)n);
    return v[k ? k - 1 : 0];
}

struct sim_dist sim_dist_of(double *v, size_t n)
{
    struct sim_dist d = {.n = n};
    double sum = 0;

    if (!n)
        return d;
    qsort(v, n, sizeof(*v), cmp_double);
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    d.mean = sum / (double)n;
    d.p50 = rank(v, n, 50);
    d.p95 = rank(v, n, 95);
    d.p99 = rank(v, n, 99);
    d.max = v[n - 1];
    return d;
}

int sim_run_summarise(struct sim_run *r)
{
    double *cpu, *mem, bca = 0, bcu = 0, bma = 0, bmu = 0;
    size_t nc = 0, nm = 0;
    struct sim_dist dc, dm;

    cpu = ccalloc(r->nsamples ? r->nsamples : 1, sizeof(*cpu));
    mem = ccalloc(r->nsamples ? r->nsamples : 1, sizeof(*mem));
    if (!cpu || !mem) {
        free(cpu);
        free(mem);
        return -ENOMEM;
    }
    for (size_t i = 0; i < r->nsamples; i++) {
        const struct sim_sample *s = &r->samples[i];
        if (s->cpu_capacity > 0)
            cpu[nc++] = (double)s->cpu_used / (double)s->cpu_capacity;
        if (s->mem_capacity > 0)
            mem[nm++] = (double)s->mem_used / (double)s->mem_capacity;
        bca += (double)s->batch_cpu_allocatable;
        bma += (double)s->batch_mem_allocatable;
        bcu += (double)s->be_cpu_used;
        bmu += (double)s->be_mem_used;
    }
    dc = sim_dist_of(cpu, nc);
    dm = sim_dist_of(mem, nm);
    r->cpu_util_mean = dc.mean;
    r->cpu_util_p95 = dc.p95;
    r->mem_util_mean = dm.mean;
    r->mem_util_p95 = dm.p95;
    if (r->nsamples) {
        double n = (double)r->nsamples;
        r->batch_cpu_allocatable_mean = bca / n;
        r->batch_cpu_used_mean = bcu / n;
        r->batch_mem_allocatable_mean = bma / n;
        r->batch_mem_used_mean = bmu / n;
    }
    free(cpu);
    free(mem);
    return 0;
}
