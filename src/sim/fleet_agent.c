/*
 * The agent stand-ins' QoS decisions (fleet.h), with the agent's own code on the modelled
 * usage and the node's NodeSLO, every QoS tick: qos_cpusuppress_milli() caps what BE pods get
 * (the node counts as suppressed when that is below their demand), and the eviction plans of
 * BECPUEvict (cpuevict.h) and BEMemoryEvict/MemoryEvict (memoryevict.h) pick victims that
 * qos_evict_api_evict() evicts through the Eviction API, recording the Event the real agent
 * records. A suppression that starts, or moves by more than 10 % of the node's CPU, is recorded
 * as a Normal Event BECPUSuppress on the Node (at most one per node per 10 s of wall time): the
 * real agent records none, but a run's suppressions would otherwise leave no trace to look at.
 */
#include <pthread.h>
#include <stdlib.h>

#include "agent/qos/cpuevict.h"
#include "agent/qos/cpusuppress.h"
#include "agent/qos/evict.h"
#include "agent/qos/evict_api.h"
#include "agent/qos/memoryevict.h"
#include "agent/qos/nodeslo.h"
#include "agent/qos/qos.h"
#include "api/api.h"
#include "base/base.h"
#include "base/log.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "sim/fleet-int.h"
#include "sim/model.h"

#define COMP               "sim"
#define EVENT_MIN_MS       10000 /* BECPUSuppress Events per node at most this often */
#define EVENT_STEP_PERCENT 10    /* ... and only when the amount moved by this much of the node */

struct evict_ctx {
    struct sim_fleet *f;
    const size_t *ppod_of; /* qos pod index -> ppod index */
    const struct qos_pod *base;
    int64_t now_ms;
};

static bool evict_one(void *ctx, const struct qos_evict_task *task, const struct qos_pod *pod)
{
    struct evict_ctx *c = ctx;
    int r = qos_evict_api_evict(c->f->evict, task->feature, pod, c->now_ms);

    if (r < 0) {
        log_warn(COMP, "%s could not evict pod %s/%s: %s, ignoring", task->feature, pod->namespace,
                 pod->name, err_str(r));
        return false;
    }
    (void)pthread_mutex_lock(&c->f->lock);
    c->f->pods[c->ppod_of[pod - c->base]]->evicted_by = task->feature;
    (void)pthread_mutex_unlock(&c->f->lock);
    log_info(COMP, "%s evicted pod %s/%s", task->feature, pod->namespace, pod->name);
    return true;
}

static void suppress_event(struct sim_fleet *f, struct sim_fleet__node *ns, int64_t now_ms)
{
    const cJSON *obj;
    struct kube_object *o;
    int64_t step = ns->def->cpu_milli * EVENT_STEP_PERCENT / 100;
    bool moved = !ns->ev_active || llabs(ns->be_limit - ns->ev_amount) > step;

    if (!ns->suppressed) {
        ns->ev_active = false;
        return;
    }
    if (!moved || (ns->ev_ms && now_ms - ns->ev_ms < EVENT_MIN_MS))
        return;
    if (!(o = kube_informer_get(f->node_inf, ns->def->name)))
        return;
    obj = kube_object_json(o);
    if (kube_recorder_event(f->rec, obj, KUBE_EVENT_NORMAL, SIM_EVENT_REASON,
                            "suppressed BE pods to %lldm CPU (demand %lldm)",
                            (long long)ns->be_limit, (long long)ns->be_demand) < 0)
        log_debug(COMP, "recording the suppression of node \"%s\" failed", ns->def->name);
    kube_object_unref(o);
    ns->ev_active = true;
    ns->ev_amount = ns->be_limit;
    ns->ev_ms = now_ms;
}

/* The QoS tick of one node: usage from the model, suppression, evictions. */
static void node_qos(struct sim_fleet *f, size_t n, double t, double dt, int64_t now_ms)
{
    const struct sim_model *m = f->o.model;
    struct sim_fleet__node *ns = &f->nodes[n];
    struct kube_object **objs = NULL, *nobj;
    size_t nobjs = kube_informer_list_by_node(f->pod_inf, ns->def->name, &objs);
    struct qos_pod *qp = xcalloc(nobjs ? nobjs : 1, sizeof(*qp));
    size_t *pp = xcalloc(nobjs ? nobjs : 1, sizeof(*pp));
    size_t nq = 0;
    struct qos_node qn = {0};
    struct qos_threshold thr;
    bool have_slo, batch;
    int64_t cap = ns->def->cpu_milli, free_cpu, be_req_batch = 0;
    double be_used_frac;

    (void)pthread_mutex_lock(&f->lock);
    thr = ns->thr;
    have_slo = ns->have_slo;
    (void)pthread_mutex_unlock(&f->lock);
    if ((nobj = kube_informer_get(f->node_inf, ns->def->name))) {
        (void)qos_node_from_json(kube_object_json(nobj), &qn);
        kube_object_unref(nobj);
    }
    ns->sys_cpu = (int64_t)(m->sys_cpu * (double)cap);
    ns->sys_mem = (int64_t)(m->sys_memory * (double)ns->def->memory);
    ns->ls_cpu = ns->ls_mem = ns->be_demand = ns->be_mem = 0;
    batch = false;
    for (size_t i = 0; i < nobjs; i++) {
        size_t idx;
        struct sim_fleet__pod *p = sim_fleet__pod_of(f, kube_object_json(objs[i]), &idx);
        const struct sim_pod *tp;
        if (!p || qos_pod_from_json(kube_object_json(objs[i]), &qp[nq]) < 0)
            continue;
        if (!qp[nq].active) {
            qos_pod_release(&qp[nq]);
            continue;
        }
        tp = &f->o.trace->pods[p->trace];
        if (p->cls == SIM_LS) {
            p->cpu_used = (int64_t)(sim_model_ls_cpu(m, p->trace, t) * (double)tp->cpu_milli);
            p->mem_used = (int64_t)(m->ls_memory * (double)tp->memory);
            ns->ls_cpu += p->cpu_used;
            ns->ls_mem += p->mem_used;
        } else {
            p->cpu_used = (int64_t)(m->be_cpu * (double)tp->cpu_milli); /* demand, for now */
            p->mem_used = (int64_t)(m->be_memory * (double)tp->memory);
            ns->be_demand += p->cpu_used;
            ns->be_mem += p->mem_used;
            be_req_batch += qp[nq].requests.v[QOS_RES_BATCH_CPU];
            if (qp[nq].qos_label == API_QOS_BE)
                batch = true;
        }
        qp[nq].has_cpu_usage = true;
        qp[nq].cpu_usage = (double)p->cpu_used / 1000.0;
        qp[nq].has_memory_usage = true;
        qp[nq].memory_usage = (double)p->mem_used;
        pp[nq++] = idx;
    }
    free_cpu = cap - ns->sys_cpu - ns->ls_cpu;
    if (free_cpu < 0)
        free_cpu = 0;
    ns->be_limit = free_cpu;
    if (batch && have_slo && thr.enable) {
        double node_used = (double)(ns->sys_cpu + ns->ls_cpu + ns->be_demand) / 1000.0;
        struct qos_suppress_input in = {
            .cfg = &thr, .node = &qn, .node_cpu_usage = node_used, .pods = qp, .npods = nq};
        int64_t s = qos_cpusuppress_milli(&in);
        /* policy cpuset: whole CPUs, at least QOS_SUPPRESS_MIN_CPUS */
        int64_t cpus = s <= 0 ? 0 : (s + 999) / 1000;
        if (cpus < QOS_SUPPRESS_MIN_CPUS)
            cpus = QOS_SUPPRESS_MIN_CPUS;
        if (cpus * 1000 < ns->be_limit)
            ns->be_limit = cpus * 1000;
    }
    ns->be_cpu = ns->be_demand < ns->be_limit ? ns->be_demand : ns->be_limit;
    ns->suppressed = batch && ns->be_demand > ns->be_limit;
    be_used_frac = ns->be_demand ? (double)ns->be_cpu / (double)ns->be_demand : 0;
    for (size_t i = 0; i < nq; i++) {
        struct sim_fleet__pod *p = f->pods[pp[i]];
        if (p->cls != SIM_BE)
            continue;
        p->cpu_used = (int64_t)((double)p->cpu_used * be_used_frac);
        qp[i].cpu_usage = (double)p->cpu_used / 1000.0;
    }
    ns->ls_over = have_slo && thr.cpu_suppress_threshold_percent.set &&
                  ns->sys_cpu + ns->ls_cpu > cap * thr.cpu_suppress_threshold_percent.value / 100;
    if (ns->ls_over)
        f->ls_over_s += dt;
    suppress_event(f, ns, now_ms);

    /* evictions: the agent's plans on the modelled usage */
    if (batch && have_slo && thr.enable) {
        struct evict_ctx ctx = {.f = f, .ppod_of = pp, .base = qp, .now_ms = now_ms};
        struct qos_evict_result res;
        if (!qos_memevict_cooling(ns->mem_has_last, ns->mem_evict_ms, now_ms)) {
            struct qos_memevict_plan plan = {0};
            struct qos_memevict_input in = {.cfg = &thr,
                                            .node = &qn,
                                            .pods = qp,
                                            .npods = nq,
                                            .node_used =
                                                (double)(ns->sys_mem + ns->ls_mem + ns->be_mem),
                                            .has_node_used = true,
                                            .be_memory_evict = true,
                                            .memory_evict = true};
            if (qos_memevict_plan(&in, &plan) == 0 && plan.ntasks &&
                qos_evict_run(plan.tasks, plan.ntasks, qos_evict_api_recent(f->evict), now_ms,
                              evict_one, &ctx, &res) == 0 &&
                res.nevicted) {
                ns->mem_has_last = true;
                ns->mem_evict_ms = now_ms;
            }
            qos_memevict_plan_release(&plan);
        }
        if (!qos_cpuevict_cooling(ns->cpu_evict_ms, now_ms)) {
            struct qos_cpuevict_plan plan = {0};
            int64_t window = qos_cpuevict_window_seconds(1, &thr);
            struct qos_be_cpu cur = {.usage = (double)ns->be_cpu,
                                     .request = (double)be_req_batch,
                                     .real_limit = (double)ns->be_limit};
            struct qos_be_cpu_input be = {.avg = cur,
                                          .count = window,
                                          .current = cur,
                                          .window_s = window,
                                          .collect_interval_s = 1};
            struct qos_cpuevict_input in = {
                .cfg = &thr,
                .node = &qn,
                .pods = qp,
                .npods = nq,
                .be = &be,
                .avg_node_cores = (double)(ns->sys_cpu + ns->ls_cpu + ns->be_cpu) / 1000.0,
                .has_node_usage = true,
                .be_cpu_evict = true};
            if (qos_cpuevict_plan(&in, &plan) == 0 && plan.ntasks &&
                qos_evict_run(plan.tasks, plan.ntasks, qos_evict_api_recent(f->evict), now_ms,
                              evict_one, &ctx, &res) == 0 &&
                res.nevicted)
                ns->cpu_evict_ms = now_ms;
            qos_cpuevict_plan_release(&plan);
        }
    }

    ns->npods = 0;
    for (size_t i = 0; i < nq; i++) {
        if (ns->npods == ns->apods) {
            ns->apods = ns->apods ? ns->apods * 2 : 16;
            ns->pods = xrealloc(ns->pods, ns->apods * sizeof(*ns->pods));
        }
        ns->pods[ns->npods++] = pp[i];
        qos_pod_release(&qp[i]);
    }
    free(qp);
    free(pp);
    kube_objects_free(objs, nobjs);
}

void sim_fleet_qos(struct sim_fleet *f, double t, double dt, int64_t now_ms)
{
    for (size_t n = 0; n < f->nnodes; n++) {
        /* the agent's start, which the CPU evictor's first cool-down counts from */
        if (!f->nodes[n].cpu_evict_ms)
            f->nodes[n].cpu_evict_ms = now_ms;
        node_qos(f, n, t, dt, now_ms);
    }
}
