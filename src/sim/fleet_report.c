/*
 * The agent stand-ins' reports (fleet.h): each node's NodeMetric status (node usage = the pods'
 * modelled usage + the model's system share; per-pod usage; the shape `koord agent` sends,
 * canonical as agent/report/reporter.c sends it) PUT to the manager's NodeMetric API at the
 * report interval, the nodes' reports spread evenly over the interval, by sender threads so
 * that a slow manager never holds up the clock.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "api/api.h"
#include "api/rfc3339.h"
#include "api/schema.h"
#include "base/base.h"
#include "base/log.h"
#include "kube/client.h"
#include "sim/fleet-int.h"

#define COMP             "sim"
#define METRICS_POLL_MS  1000  /* how often the NodeMetrics are counted before the first reports */
#define METRICS_STALL_MS 30000 /* ... and how long without one more before going on */

void *sim_fleet__sender_main(void *arg)
{
    struct sim_fleet *f = arg;
    const struct api_kind *k = api_kind_find("slo.koordinator.sh/v1alpha1", "NodeMetric");

    struct sim_fleet__job j;

    CHECK(k);
    while (sim_fleet__queue_pop(&f->jobs, &j)) {
        struct kube_status st = {0};
        cJSON *obj, *meta;
        int r;

        CHECK(api_canonicalize(k->status, j.status) == 0);
        obj = cJSON_CreateObject();
        CHECK(obj);
        CHECK(cJSON_AddStringToObject(obj, "apiVersion", "metrics.koordinator.sh/v1alpha1"));
        CHECK(cJSON_AddStringToObject(obj, "kind", "NodeMetric"));
        CHECK(meta = cJSON_AddObjectToObject(obj, "metadata"));
        CHECK(cJSON_AddStringToObject(meta, "name", f->nodes[j.node].def->name));
        CHECK(cJSON_AddItemToObject(obj, "status", j.status));
        r = kube_update(f->nodes[j.node].client, &kube_res_nodemetrics, NULL, obj, "status", NULL,
                        &st);
        cJSON_Delete(obj);
        if (r < 0) {
            atomic_fetch_add(&f->failed, 1);
            log_debug(COMP, "report of node \"%s\" failed: %s", f->nodes[j.node].def->name,
                      st.message[0] ? st.message : err_str(r));
        } else {
            atomic_fetch_add(&f->sent, 1);
        }
    }
    return NULL;
}

static void job_push(struct sim_fleet *f, size_t node, cJSON *status)
{
    sim_fleet__queue_push(&f->jobs, &(struct sim_fleet__job){.node = node, .status = status});
}

static cJSON *usage_obj(int64_t cpu, int64_t mem)
{
    cJSON *u = cJSON_CreateObject(), *r;
    char buf[64];

    CHECK(u);
    CHECK(r = cJSON_AddObjectToObject(u, "resources"));
    (void)snprintf(buf, sizeof(buf), "%lldm", (long long)cpu);
    CHECK(cJSON_AddStringToObject(r, "cpu", buf));
    (void)snprintf(buf, sizeof(buf), "%lld", (long long)mem);
    CHECK(cJSON_AddStringToObject(r, "memory", buf));
    return u;
}

static cJSON *build_status(struct sim_fleet *f, const struct sim_fleet__node *ns)
{
    cJSON *st = cJSON_CreateObject(), *nm, *pods;
    char now[RFC3339_STR_MAX];
    int64_t cpu = ns->sys_cpu + ns->ls_cpu + ns->be_cpu;
    int64_t mem = ns->sys_mem + ns->ls_mem + ns->be_mem;

    CHECK(st);
    sim_fleet__now_rfc3339(now);
    if (mem > ns->def->memory)
        mem = ns->def->memory;
    CHECK(cJSON_AddStringToObject(st, "updateTime", now));
    CHECK(nm = cJSON_AddObjectToObject(st, "nodeMetric"));
    CHECK(cJSON_AddItemToObject(nm, "nodeUsage", usage_obj(cpu, mem)));
    CHECK(cJSON_AddItemToObject(nm, "systemUsage", usage_obj(ns->sys_cpu, ns->sys_mem)));
    CHECK(pods = cJSON_AddArrayToObject(st, "podsMetric"));
    for (size_t i = 0; i < ns->npods; i++) {
        const struct sim_fleet__pod *p = f->pods[ns->pods[i]];
        cJSON *e = cJSON_CreateObject();
        CHECK(e);
        CHECK(cJSON_AddStringToObject(e, "namespace", sim_fleet__ns_of(p->cls)));
        CHECK(cJSON_AddStringToObject(e, "name", p->name));
        if (p->cls == SIM_LS) {
            CHECK(cJSON_AddStringToObject(e, "priority", "koord-prod"));
            CHECK(cJSON_AddStringToObject(e, "qos", "LS"));
        } else if (f->o.colocation) {
            CHECK(cJSON_AddStringToObject(e, "priority", "koord-batch"));
            CHECK(cJSON_AddStringToObject(e, "qos", "BE"));
        }
        CHECK(cJSON_AddItemToObject(e, "podUsage", usage_obj(p->cpu_used, p->mem_used)));
        CHECK(cJSON_AddItemToArray(pods, e));
    }
    return st;
}

void sim_fleet_report(struct sim_fleet *f, int64_t now_ms)
{
    int64_t iv = (int64_t)f->o.report_interval_s * 1000;

    for (size_t n = 0; n < f->nnodes; n++) {
        struct sim_fleet__node *ns = &f->nodes[n];
        if (!ns->next_report_ms) /* spread the first reports over one interval */
            ns->next_report_ms = now_ms + (int64_t)((double)iv * (double)n / (double)f->nnodes);
        if (ns->next_report_ms > now_ms)
            continue;
        job_push(f, n, build_status(f, ns));
        ns->next_report_ms += iv;
        if (ns->next_report_ms <= now_ms) /* fell behind: do not send a burst */
            ns->next_report_ms = now_ms + iv;
    }
}

void sim_fleet_report_all(struct sim_fleet *f, int64_t now_ms)
{
    int64_t iv = (int64_t)f->o.report_interval_s * 1000;

    for (size_t n = 0; n < f->nnodes; n++) {
        job_push(f, n, build_status(f, &f->nodes[n]));
        /* the next ones spread over the interval */
        f->nodes[n].next_report_ms =
            now_ms + iv + (int64_t)((double)iv * (double)n / (double)f->nnodes);
    }
}

void sim_fleet_report_stats(struct sim_fleet *f, uint64_t *ret_sent, uint64_t *ret_failed)
{
    *ret_sent = atomic_load(&f->sent);
    *ret_failed = atomic_load(&f->failed);
}

/* The fleet nodes that have a NodeMetric now, or -1 (the list failed: logged). */
static long count_nodemetrics(struct sim_fleet *f)
{
    struct kube_status st = {0};
    cJSON *list = NULL, *it;
    long n = 0;
    int r = kube_list(f->o.admin, &kube_res_nodemetrics, NULL, NULL, &list, &st);

    if (r < 0) {
        log_debug(COMP, "listing the NodeMetrics failed: %s",
                  st.message[0] ? st.message : err_str(r));
        return -1;
    }
    cJSON_ArrayForEach(it, cJSON_GetObjectItem(list, "items"))
    {
        const char *name =
            cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(it, "metadata"), "name"));
        n += name && sim_fleet__node_of(f, name) >= 0;
    }
    cJSON_Delete(list);
    return n;
}

void sim_fleet__wait_nodemetrics(struct sim_fleet *f)
{
    double start = sim_fleet__mono_s(), progress = start, next_log = start + 10;
    long have = 0;

    for (;;) {
        long n = count_nodemetrics(f);
        double now = sim_fleet__mono_s();
        if (n >= (long)f->nnodes)
            return;
        if (n > have) {
            have = n;
            progress = now;
        }
        if ((now - progress) * 1000 >= METRICS_STALL_MS) {
            log_warn(COMP,
                     "koord manager has the NodeMetric of %ld of %zu nodes and made none in %d s: "
                     "the first reports of the others will fail, going on",
                     have, f->nnodes, METRICS_STALL_MS / 1000);
            return;
        }
        if (now >= next_log) {
            log_info(COMP, "waiting for koord manager's NodeMetrics: %ld of %zu", have, f->nnodes);
            next_log = now + 10;
        }
        (void)nanosleep(&(struct timespec){.tv_sec = METRICS_POLL_MS / 1000,
                                           .tv_nsec = METRICS_POLL_MS % 1000 * 1000000L},
                        NULL);
    }
}
