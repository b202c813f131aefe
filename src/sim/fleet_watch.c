/*
 * What the fleet's kubelets and agents see (fleet.h): one pod informer over all namespaces,
 * indexed by node (kubelet watches its node's pods; here one watch serves every node), the
 * fleet's Nodes (their batch allocatable, which the manager writes, for the samples) and the
 * NodeSLOs (each agent's thresholds). The handlers run on the informers' threads: they only
 * record, under f->lock, and queue the work for the caller's thread (fleet_kubelet.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "agent/qos/nodeslo.h"
#include "api/quantity.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "sim/fleet-int.h"

#define COMP "sim"

static void pod_seen(void *ud, const struct kube_object *o)
{
    struct sim_fleet *f = ud;
    const cJSON *obj = kube_object_json(o);
    const char *node = kube_object_node_name(o);
    bool deleting =
        cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "metadata"), "deletionTimestamp") != NULL;
    struct sim_fleet__pod *p;
    size_t i;
    int n;

    (void)pthread_mutex_lock(&f->lock);
    if (!(p = sim_fleet__pod_of(f, obj, &i)) || p->st == SIM_FLEET__POD_GONE)
        goto out;
    if (p->st == SIM_FLEET__POD_NEW && *node && (n = sim_fleet__node_of(f, node)) >= 0) {
        p->st = SIM_FLEET__POD_BOUND;
        p->node = n;
        p->bind_wall = sim_fleet__mono_s();
        p->run_since = f->t_now;
        if (!p->start_queued) {
            p->start_queued = true;
            sim_fleet__idxvec_push(&f->q_start, i);
        }
    }
    if (deleting && !p->delete_queued) {
        p->delete_queued = true;
        sim_fleet__idxvec_push(&f->q_delete, i);
    }
    if (p->st == SIM_FLEET__POD_NEW && !p->refused) {
        const cJSON *c;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(cJSON_GetObjectItem(obj, "status"), "conditions"))
        {
            const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(c, "type"));
            const char *status = cJSON_GetStringValue(cJSON_GetObjectItem(c, "status"));
            if (type && status && !strcmp(type, "PodScheduled") && !strcmp(status, "False"))
                p->refused = true;
        }
    }
out:
    (void)pthread_mutex_unlock(&f->lock);
}

static void pod_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    (void)old;
    pod_seen(ud, o);
}

static void pod_delete(void *ud, const struct kube_object *o)
{
    struct sim_fleet *f = ud;
    struct sim_fleet__pod *p;
    size_t i;

    (void)pthread_mutex_lock(&f->lock);
    if ((p = sim_fleet__pod_of(f, kube_object_json(o), &i)) && p->st != SIM_FLEET__POD_GONE) {
        p->st = SIM_FLEET__POD_GONE;
        if (!p->ours)
            sim_fleet__idxvec_push(&f->q_gone, i);
    }
    (void)pthread_mutex_unlock(&f->lock);
}

static int64_t alloc_value(const cJSON *node, const char *res, bool milli)
{
    const char *q = cJSON_GetStringValue(cJSON_GetObjectItem(
        cJSON_GetObjectItem(cJSON_GetObjectItem(node, "status"), "allocatable"), res));
    struct quantity v;
    int64_t x = 0;

    if (!q || quantity_parse(q, &v) < 0 ||
        (milli ? quantity_milli(&v, &x) : quantity_value(&v, &x)) < 0)
        return 0;
    return x;
}

static void node_seen(void *ud, const struct kube_object *o)
{
    struct sim_fleet *f = ud;
    const cJSON *obj = kube_object_json(o);
    int n = sim_fleet__node_of(f, kube_object_name(o));

    if (n < 0)
        return;
    (void)pthread_mutex_lock(&f->lock);
    /* batch-cpu counts milli-cores as its integer value (reference api-types.md 7.3) */
    f->nodes[n].batch_cpu = alloc_value(obj, "kubernetes.io/batch-cpu", false);
    f->nodes[n].batch_mem = alloc_value(obj, "kubernetes.io/batch-memory", false);
    (void)pthread_mutex_unlock(&f->lock);
}

static void node_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    (void)old;
    node_seen(ud, o);
}

static void slo_seen(void *ud, const struct kube_object *o)
{
    struct sim_fleet *f = ud;
    int n = sim_fleet__node_of(f, kube_object_name(o));
    struct qos_slo slo;
    struct strbuf why = STRBUF_INIT;

    if (n < 0)
        return;
    if (qos_slo_from_nodeslo(kube_object_json(o), &slo, &why) < 0) {
        log_warn(COMP, "NodeSLO of node \"%s\" does not decode: %s, ignoring", kube_object_name(o),
                 why.buf);
        strbuf_release(&why);
        return;
    }
    strbuf_release(&why);
    (void)pthread_mutex_lock(&f->lock);
    f->nodes[n].thr = slo.threshold;
    f->nodes[n].have_slo = true;
    (void)pthread_mutex_unlock(&f->lock);
}

static void slo_update(void *ud, const struct kube_object *old, const struct kube_object *o)
{
    (void)old;
    slo_seen(ud, o);
}

int sim_fleet__watch_start(struct sim_fleet *f, struct strbuf *err)
{
    struct kube_client *admin = f->o.admin;
    int r;

    f->pod_inf =
        kube_informer_new(admin, &(struct kube_informer_opts){.resource = &kube_res_pods,
                                                              .label_selector = SIM_LABEL_INDEX,
                                                              .index_node_name = true});
    f->node_inf = kube_informer_new(
        admin, &(struct kube_informer_opts){.resource = &kube_res_nodes,
                                            .label_selector = "sim.koordinator.sh/fleet"});
    f->slo_inf =
        kube_informer_new(admin, &(struct kube_informer_opts){.resource = &kube_res_nodeslos});
    CHECK(f->pod_inf && f->node_inf && f->slo_inf);
    CHECK(kube_informer_add_handlers(f->pod_inf, &(struct kube_handlers){.on_add = pod_seen,
                                                                         .on_update = pod_update,
                                                                         .on_delete = pod_delete,
                                                                         .userdata = f}) == 0);
    CHECK(kube_informer_add_handlers(f->node_inf, &(struct kube_handlers){.on_add = node_seen,
                                                                          .on_update = node_update,
                                                                          .userdata = f}) == 0);
    CHECK(kube_informer_add_handlers(f->slo_inf, &(struct kube_handlers){.on_add = slo_seen,
                                                                         .on_update = slo_update,
                                                                         .userdata = f}) == 0);
    if ((r = kube_informer_start(f->pod_inf)) < 0 || (r = kube_informer_start(f->node_inf)) < 0 ||
        (r = kube_informer_start(f->slo_inf)) < 0) {
        strbuf_addf(err, "cannot start the informers: %s", err_str(r));
        return r;
    }
    if (!kube_informer_wait_synced(f->pod_inf, 30000) ||
        !kube_informer_wait_synced(f->node_inf, 30000)) {
        r = -ETIMEDOUT;
        strbuf_addf(err, "the pod and node informers did not sync in 30 s");
        return r;
    }
    return 0;
}
