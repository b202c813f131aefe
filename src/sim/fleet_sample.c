/*
 * What the fleet measures (fleet.h, outcome.h): its totals at a moment (a sample: usage,
 * allocatable, pods running and pending, nodes suppressed) and the per-pod figures of the whole
 * run (waits, scheduling latencies, evictions).
 */
#include <pthread.h>

#include "sim/fleet-int.h"
#include "sim/outcome.h"

void sim_fleet_sample(struct sim_fleet *f, double t, double wall_s, struct sim_sample *s)
{
    *s = (struct sim_sample){.trace_s = t, .wall_s = wall_s};
    (void)pthread_mutex_lock(&f->lock);
    for (size_t n = 0; n < f->nnodes; n++) {
        const struct sim_fleet__node *ns = &f->nodes[n];
        s->cpu_capacity += ns->def->cpu_milli;
        s->mem_capacity += ns->def->memory;
        s->ls_cpu_used += ns->ls_cpu;
        s->ls_mem_used += ns->ls_mem;
        s->be_cpu_used += ns->be_cpu;
        s->be_mem_used += ns->be_mem;
        s->batch_cpu_allocatable += ns->batch_cpu;
        s->batch_mem_allocatable += ns->batch_mem;
        s->nodes_suppressed += ns->suppressed;
        s->nodes_ls_over_threshold += ns->ls_over;
    }
    for (size_t i = 0; i < f->npods; i++) {
        const struct sim_fleet__pod *p = f->pods[i];
        const struct sim_pod *tp = &f->o.trace->pods[p->trace];
        if (!p->created || p->st == SIM_FLEET__POD_GONE || p->ours)
            continue;
        if (p->cls == SIM_LS) {
            s->ls_running += p->st == SIM_FLEET__POD_BOUND;
            s->ls_pending += p->st == SIM_FLEET__POD_NEW;
        } else {
            s->be_running += p->st == SIM_FLEET__POD_BOUND;
            s->be_pending += p->st == SIM_FLEET__POD_NEW;
            if (p->st == SIM_FLEET__POD_BOUND && f->o.colocation) {
                s->batch_cpu_requested += tp->cpu_milli;
                s->batch_mem_requested += tp->memory;
            }
        }
    }
    (void)pthread_mutex_unlock(&f->lock);
    s->cpu_used = s->ls_cpu_used + s->be_cpu_used;
    s->mem_used = s->ls_mem_used + s->be_mem_used;
    s->be_completed = f->be_completed;
    s->be_evicted = f->be_ev.be_cpu + f->be_ev.be_memory + f->be_ev.memory + f->be_ev.other;
    s->ls_evicted = f->ls_evicted;
}

size_t sim_fleet_unsettled(struct sim_fleet *f)
{
    size_t n = 0;

    (void)pthread_mutex_lock(&f->lock);
    for (size_t i = 0; i < f->npods; i++)
        n += f->pods[i]->st == SIM_FLEET__POD_NEW && !f->pods[i]->refused;
    (void)pthread_mutex_unlock(&f->lock);
    return n;
}

void sim_fleet_outcome(struct sim_fleet *f, struct sim_run *r)
{
    r->ls_pods = f->ls_created;
    r->be_pods = f->be_created;
    r->be_completed = f->be_completed;
    r->be_wait = sim_dist_of(f->waits, f->nwaits);
    r->ls_sched_latency = sim_dist_of(f->lat_ls, f->nlat_ls);
    r->be_sched_latency = sim_dist_of(f->lat_be, f->nlat_be);
    r->ls_evicted = f->ls_evicted;
    r->ls_suppressed = 0; /* suppression only ever applies to BE pods (cpusuppress.h) */
    r->be_evicted = f->be_ev;
    r->ls_over_threshold_s = f->ls_over_s;
}
