/*
 * The fleet's pod writes (fleet.h): what the kubelet stand-in and the trace write to the API
 * server, done by worker threads so that one slow write does not hold up the clock. A pod's
 * writes all go to one worker (index modulo the worker count), in the order they were asked
 * for: its create before its Running, its Running before its Succeeded. A failed write is
 * logged and the run goes on (the API server may be briefly unavailable); a failed create is
 * counted, and the pod marked as never having been.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "api/rfc3339.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "kube/client.h"
#include "sim/fleet-int.h"

#define COMP "sim"

static int post_pod(struct sim_fleet *f, size_t idx)
{
    const struct sim_fleet__pod *p = f->pods[idx];
    const struct sim_pod *tp = &f->o.trace->pods[p->trace];
    struct strbuf sb = STRBUF_INIT, res = STRBUF_INIT;
    struct kube_status st = {0};
    cJSON *o;
    int r;

    strbuf_addf(&res, "{\"cpu\": \"%lldm\", \"memory\": \"%lld\"}", (long long)tp->cpu_milli,
                (long long)tp->memory);
    if (p->cls == SIM_LS)
        strbuf_addf(&sb,
                    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": "
                    "\"%s\", \"namespace\": \"" SIM_NS_LS "\", \"labels\": {\"" SIM_LABEL_INDEX
                    "\": \"%zu\", \"koordinator.sh/qosClass\": \"LS\"}}, \"spec\": "
                    "{\"priorityClassName\": \"koord-prod\", \"terminationGracePeriodSeconds\": "
                    "30, \"containers\": [{\"name\": \"main\", \"image\": "
                    "\"registry.k8s.io/pause:3.9\", \"resources\": {\"requests\": %s, "
                    "\"limits\": %s}}]}}",
                    p->name, idx, res.buf, res.buf);
    else
        strbuf_addf(&sb,
                    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": "
                    "\"%s\", \"namespace\": \"" SIM_NS_BE "\", \"labels\": {\"" SIM_LABEL_INDEX
                    "\": \"%zu\", \"" SIM_LABEL_COLOC "\": \"true\"}}, \"spec\": "
                    "{\"containers\": [{\"name\": \"main\", \"image\": "
                    "\"registry.k8s.io/pause:3.9\", \"resources\": {\"requests\": %s}}]}}",
                    p->name, idx, res.buf);
    o = sim_fleet__parse(sb.buf);
    r = kube_create(f->o.admin, &kube_res_pods, sim_fleet__ns_of(p->cls), o, NULL, &st);
    if (r < 0)
        log_warn(COMP, "creating pod %s/%s failed: %s, ignoring", sim_fleet__ns_of(p->cls), p->name,
                 st.message[0] ? st.message : err_str(r));
    cJSON_Delete(o);
    strbuf_release(&sb);
    strbuf_release(&res);
    return r;
}

static int delete_now(struct sim_fleet *f, const struct sim_fleet__pod *p)
{
    struct strbuf path = STRBUF_INIT;
    struct kube_status st = {0};
    int r;

    kube_path(&kube_res_pods, sim_fleet__ns_of(p->cls), p->name, NULL, &path);
    /* a write racing ours (the scheduler, an eviction) answers 409: try again */
    for (int i = 0; i < 5; i++) {
        r = kube_request(f->o.admin, "DELETE", path.buf, "{\"gracePeriodSeconds\": 0}", NULL, NULL,
                         &st);
        if (r != -ESTALE)
            break;
    }
    strbuf_release(&path);
    if (r == -ENOENT)
        r = 0;
    if (r < 0)
        log_warn(COMP, "deleting pod %s/%s failed: %s, ignoring", sim_fleet__ns_of(p->cls), p->name,
                 st.message[0] ? st.message : err_str(r));
    return r;
}

/* Merge-patches the status of pod p with json, as kubelet writes it; a failure is logged (doing:
 * what the write was). A pod already gone is no failure: the trace or an eviction won. */
static void patch_status(struct sim_fleet *f, const struct sim_fleet__pod *p, const char *doing,
                         const char *json)
{
    struct kube_status st = {0};
    cJSON *patch = sim_fleet__parse(json);
    int r = kube_patch(f->o.admin, &kube_res_pods, sim_fleet__ns_of(p->cls), p->name, "status",
                       KUBE_PATCH_MERGE, patch, NULL, &st);

    if (r < 0 && r != -ENOENT)
        log_warn(COMP, "%s pod %s/%s failed: %s, ignoring", doing, sim_fleet__ns_of(p->cls),
                 p->name, st.message[0] ? st.message : err_str(r));
    cJSON_Delete(patch);
}

/* What kubelet writes when the pod's container started. */
static void start_pod(struct sim_fleet *f, const struct sim_fleet__pod *p, int node, size_t idx)
{
    struct strbuf sb = STRBUF_INIT;
    char now[RFC3339_STR_MAX], ip[32];
    const char *qos = p->cls == SIM_LS  ? "Guaranteed"
                      : f->o.colocation ? "BestEffort"
                                        : "Burstable";

    sim_fleet__now_rfc3339(now);
    sim_fleet__host_ip((size_t)node, ip, sizeof(ip));
    strbuf_addf(&sb,
                "{\"status\": {\"phase\": \"Running\", \"hostIP\": \"%s\", \"hostIPs\": "
                "[{\"ip\": \"%s\"}], \"podIP\": \"172.%zu.%zu.%zu\", \"startTime\": \"%s\", "
                "\"qosClass\": \"%s\", \"conditions\": [",
                ip, ip, 16 + ((idx >> 16) & 15), (idx >> 8) & 255, idx & 255, now, qos);
    for (size_t i = 0; i < 4; i++) {
        static const char *const types[] = {"PodScheduled", "Initialized", "ContainersReady",
                                            "Ready"};
        strbuf_addf(&sb,
                    "%s{\"type\": \"%s\", \"status\": \"True\", \"lastTransitionTime\": "
                    "\"%s\"}",
                    i ? ", " : "", types[i], now);
    }
    strbuf_addf(&sb,
                "], \"containerStatuses\": [{\"name\": \"main\", \"ready\": true, \"started\": "
                "true, \"restartCount\": 0, \"image\": \"registry.k8s.io/pause:3.9\", "
                "\"imageID\": \"registry.k8s.io/pause@sha256:sim\", \"containerID\": "
                "\"containerd://sim-%zu\", \"state\": {\"running\": {\"startedAt\": \"%s\"}}}]}}",
                idx, now);
    patch_status(f, p, "starting", sb.buf);
    strbuf_release(&sb);
}

/* A BE pod whose work is done: Succeeded (kubelet's last status), then deleted. */
static void finish_pod(struct sim_fleet *f, const struct sim_fleet__pod *p)
{
    char now[RFC3339_STR_MAX];
    struct strbuf sb = STRBUF_INIT;

    sim_fleet__now_rfc3339(now);
    strbuf_addf(&sb,
                "{\"status\": {\"phase\": \"Succeeded\", \"conditions\": [{\"type\": \"Ready\", "
                "\"status\": \"False\", \"reason\": \"PodCompleted\", \"lastTransitionTime\": "
                "\"%s\"}], \"containerStatuses\": [{\"name\": \"main\", \"ready\": false, "
                "\"started\": false, \"restartCount\": 0, \"image\": "
                "\"registry.k8s.io/pause:3.9\", \"imageID\": "
                "\"registry.k8s.io/pause@sha256:sim\", \"state\": {\"terminated\": "
                "{\"exitCode\": 0, \"reason\": \"Completed\", \"finishedAt\": \"%s\"}}}]}}",
                now, now);
    patch_status(f, p, "finishing", sb.buf);
    strbuf_release(&sb);
    (void)delete_now(f, p);
}

void sim_fleet__post_op(struct sim_fleet *f, enum sim_fleet__op_kind kind, size_t idx, int node)
{
    struct sim_fleet__worker *w = &f->workers[idx % SIM_FLEET__NWORKERS];

    sim_fleet__queue_push(&w->q, &(struct sim_fleet__op){.kind = kind, .idx = idx, .node = node});
}

void *sim_fleet__worker_main(void *arg)
{
    struct sim_fleet__worker *w = arg;
    struct sim_fleet *f = w->f;

    struct sim_fleet__op op;

    while (sim_fleet__queue_pop(&w->q, &op)) {
        struct sim_fleet__pod *p;

        (void)pthread_mutex_lock(&f->lock);
        p = f->pods[op.idx];
        (void)pthread_mutex_unlock(&f->lock);
        switch (op.kind) {
        case SIM_FLEET__OP_CREATE:
            if (post_pod(f, op.idx) < 0) {
                atomic_fetch_add(&f->create_errors, 1);
                (void)pthread_mutex_lock(&f->lock);
                p->st = SIM_FLEET__POD_GONE; /* never was: nothing to end or count */
                p->ours = true;
                (void)pthread_mutex_unlock(&f->lock);
            }
            break;
        case SIM_FLEET__OP_START:
            start_pod(f, p, op.node, op.idx);
            break;
        case SIM_FLEET__OP_FINISH:
            finish_pod(f, p);
            break;
        case SIM_FLEET__OP_DELETE:
            (void)delete_now(f, p);
            break;
        }
    }
    return NULL;
}
