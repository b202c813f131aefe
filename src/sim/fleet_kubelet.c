/*
 * The kubelet stand-in and the trace's side of the pods (fleet.h): the fleet owns every
 * replayed pod's state (created, bound, running, ended, evicted), so it creates them for the
 * replay (replay.c), starts the bound ones as kubelet would, ends them when their trace time is
 * up, counts the ones that disappeared without the trace ending them (evicted), and re-creates
 * evicted BE pods as their Job would. It runs on the caller's thread (the replay clock) and
 * leaves the writes to the workers (fleet_writes.c).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/qos/evict.h"
#include "base/base.h"
#include "base/strbuf.h"
#include "sim/fleet-int.h"

static void push_double(double **v, size_t *n, size_t *alloc, double x)
{
    if (*n == *alloc) {
        *alloc = *alloc ? *alloc * 2 : 256;
        *v = xrealloc(*v, *alloc * sizeof(**v));
    }
    (*v)[(*n)++] = x;
}

static size_t add_ppod(struct sim_fleet *f, size_t trace, const char *name, double delete_s,
                       double need_s)
{
    struct sim_fleet__pod *p = xcalloc(1, sizeof(*p));
    size_t idx;

    p->trace = trace;
    (void)snprintf(p->name, sizeof(p->name), "%s", name);
    p->cls = f->o.trace->pods[trace].cls;
    p->delete_s = delete_s;
    p->need_s = need_s;
    p->run_since = -1;
    p->node = -1;
    p->create_wall = sim_fleet__mono_s();
    (void)pthread_mutex_lock(&f->lock);
    if (f->npods == f->apods) {
        f->apods = f->apods ? f->apods * 2 : 1024;
        f->pods = xrealloc(f->pods, f->apods * sizeof(struct sim_fleet__pod *));
    }
    idx = f->npods++;
    f->pods[idx] = p;
    (void)pthread_mutex_unlock(&f->lock);
    return idx;
}

int sim_fleet_create_pod(struct sim_fleet *f, size_t i, double t)
{
    const struct sim_pod *tp = &f->o.trace->pods[i];
    size_t idx;

    (void)t;
    /* LS pods end at their deletion time; BE pods run for as long as the trace gave them,
     * counted from when they start (a batch job that waited finishes later) */
    idx = add_ppod(f, i, tp->name, tp->cls == SIM_LS ? tp->delete_s : -1,
                   tp->delete_s < 0 ? -1 : tp->delete_s - tp->create_s);
    if (tp->cls == SIM_LS)
        f->ls_created++;
    else
        f->be_created++;
    f->pods[idx]->created = true;
    sim_fleet__post_op(f, SIM_FLEET__OP_CREATE, idx, -1);
    return 0;
}

static void take(struct sim_fleet *f, struct sim_fleet__idxvec *q, struct sim_fleet__idxvec *ret)
{
    (void)pthread_mutex_lock(&f->lock);
    *ret = *q;
    *q = (struct sim_fleet__idxvec){0};
    (void)pthread_mutex_unlock(&f->lock);
}

/* An evicted BE pod comes back, as its Job would re-create it, with the run time it had left. */
static void recreate(struct sim_fleet *f, const struct sim_fleet__pod *old, double t)
{
    double left = old->need_s;
    struct strbuf name = STRBUF_INIT;
    size_t idx;

    if (old->need_s >= 0 && old->run_since >= 0)
        left = old->need_s - (t - old->run_since);
    if (old->need_s >= 0 && left <= 0)
        return;
    strbuf_addf(&name, "%s-r%u", f->o.trace->pods[old->trace].name, old->gen + 1);
    idx = add_ppod(f, old->trace, name.buf, -1, left);
    f->pods[idx]->gen = old->gen + 1;
    f->pods[idx]->created = true;
    sim_fleet__post_op(f, SIM_FLEET__OP_CREATE, idx, -1);
    strbuf_release(&name);
}

void sim_fleet_step(struct sim_fleet *f, double t)
{
    struct sim_fleet__idxvec q;

    (void)pthread_mutex_lock(&f->lock);
    f->t_now = t;
    (void)pthread_mutex_unlock(&f->lock);

    take(f, &f->q_start, &q);
    for (size_t k = 0; k < q.n; k++) {
        struct sim_fleet__pod *p = f->pods[q.v[k]];
        double lat = p->bind_wall - p->create_wall;
        int node;
        bool before_clock;
        (void)pthread_mutex_lock(&f->lock);
        node = p->node;
        /* placed before the clock started: the cluster as the trace begins (replay.c), whose
         * filling says how fast one machine fills a fleet, not how long pods wait */
        before_clock = p->run_since <= 0 && f->o.trace->pods[p->trace].create_s <= 0;
        (void)pthread_mutex_unlock(&f->lock);
        if (before_clock) {
            if (p->cls == SIM_BE)
                f->waited[p->trace] = true;
        } else if (p->cls == SIM_LS) {
            push_double(&f->lat_ls, &f->nlat_ls, &f->alat_ls, lat);
        } else {
            push_double(&f->lat_be, &f->nlat_be, &f->alat_be, lat);
            if (!f->waited[p->trace]) {
                f->waited[p->trace] = true;
                push_double(&f->waits, &f->nwaits, &f->awaits,
                            p->run_since - f->o.trace->pods[p->trace].create_s);
            }
        }
        sim_fleet__post_op(f, SIM_FLEET__OP_START, q.v[k], node);
    }
    free(q.v);

    take(f, &f->q_delete, &q);
    for (size_t k = 0; k < q.n; k++)
        sim_fleet__post_op(f, SIM_FLEET__OP_DELETE, q.v[k], -1);
    free(q.v);

    take(f, &f->q_gone, &q);
    for (size_t k = 0; k < q.n; k++) {
        struct sim_fleet__pod *p = f->pods[q.v[k]];
        const char *by;
        (void)pthread_mutex_lock(&f->lock);
        by = p->evicted_by;
        (void)pthread_mutex_unlock(&f->lock);
        if (p->cls == SIM_LS)
            f->ls_evicted++;
        else if (by && !strcmp(by, QOS_FEATURE_BE_CPU_EVICT))
            f->be_ev.be_cpu++;
        else if (by && !strcmp(by, QOS_FEATURE_BE_MEMORY_EVICT))
            f->be_ev.be_memory++;
        else if (by && !strcmp(by, QOS_FEATURE_MEMORY_EVICT))
            f->be_ev.memory++;
        else
            f->be_ev.other++;
        if (p->cls == SIM_BE)
            recreate(f, p, t);
    }
    free(q.v);

    /* pods whose trace time is up */
    for (size_t i = 0; i < f->npods; i++) {
        struct sim_fleet__pod *p = f->pods[i];
        bool bound, end;
        if (!p->created)
            continue;
        (void)pthread_mutex_lock(&f->lock);
        bound = p->st == SIM_FLEET__POD_BOUND;
        if (p->cls == SIM_LS)
            end = p->delete_s >= 0 && p->delete_s <= t;
        else
            end = bound && p->need_s >= 0 && p->run_since + p->need_s <= t;
        end = end && !p->ours && p->st != SIM_FLEET__POD_GONE;
        if (end)
            p->ours = true;
        (void)pthread_mutex_unlock(&f->lock);
        if (!end)
            continue;
        if (p->cls == SIM_BE) {
            f->be_completed++;
            sim_fleet__post_op(f, SIM_FLEET__OP_FINISH, i, -1);
        } else {
            sim_fleet__post_op(f, SIM_FLEET__OP_DELETE, i, -1);
        }
    }
}
