/*
 * One replay (replay.h): the control plane, the fleet and the trace clock. The clock loop
 * wakes every TICK_MS of wall time; everything it does is driven by the trace time of that
 * moment, so a slow step delays work but never skips it (pods due meanwhile are created in the
 * next step, in trace order).
 *
 * The pods of trace time 0 are the cluster as it stands when the trace begins (an inflated
 * workload puts its services and running jobs there): they are created before the clock
 * starts, and it starts once the scheduler has placed or refused each of them, so a run
 * measures the trace, not how fast one machine fills an empty fleet.
 */
#include "sim/replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "kube/client.h"
#include "kube/config.h"
#include "sim/cluster.h"
#include "sim/fleet.h"
#include "slo/slo.h"

#define COMP     "sim"
#define TICK_MS  50
#define WARMUP_S 600 /* the time-0 pods get this long to settle, then the clock goes */

static int64_t mono_ms(void)
{
    struct timespec ts;

    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleeps until the monotonic time at_ms. */
static void sleep_until(int64_t at_ms)
{
    struct timespec ts = {.tv_sec = at_ms / 1000, .tv_nsec = (at_ms % 1000) * 1000000L};

    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void push_sample(struct sim_run *r, size_t *alloc, const struct sim_sample *s)
{
    if (r->nsamples == *alloc) {
        *alloc = *alloc ? *alloc * 2 : 256;
        r->samples = xrealloc(r->samples, *alloc * sizeof(*r->samples));
    }
    r->samples[r->nsamples++] = *s;
}

static int admin_client(const char *kubeconfig, struct kube_client **ret, struct strbuf *err)
{
    const char *paths[] = {kubeconfig, NULL};
    struct kube_config *cfg = NULL;
    int r = kube_config_from_kubeconfig(paths, NULL, &cfg, err);

    if (r < 0)
        return r;
    if ((r = kube_client_new(cfg, ret)) < 0)
        strbuf_addf(err, "cannot create the API client: %s", err_str(r));
    return r;
}

/*
 * A running cluster keeps its own slo-controller-config. When its report interval is not the
 * sim's, the run goes on but says what it costs: koord scheduler's LoadAware filter counts a pod
 * placed within one report interval at its estimate, which at a compressed clock is hours of
 * trace, so nodes look full of new pods and BE pods are refused for no reason of colocation.
 */
static void check_report_interval(struct kube_client *c, const struct sim_replay_opts *o)
{
    struct kube_status st = {0};
    cJSON *cm = NULL;
    double got = 0;
    int r = kube_get(c, &kube_res_configmaps, SLO_DEFAULT_NAMESPACE, SLO_DEFAULT_NAME, &cm, &st);

    if (r < 0 && st.code != 404) {
        log_warn(COMP, "cannot read %s/%s (%s): its report interval is not checked",
                 SLO_DEFAULT_NAMESPACE, SLO_DEFAULT_NAME, err_str(r));
    } else if (sim_cluster_report_interval(r < 0 ? NULL : cm, &got) == 0 &&
               got != (double)o->report_interval_s) {
        log_warn(COMP,
                 "the cluster's %s/%s has nodes report every %g s (metricReportIntervalSeconds), "
                 "this run every %u s (--report-interval): koord scheduler counts pods placed "
                 "within one interval (%g trace seconds at %gx) at their estimate and may refuse "
                 "BE pods as if nodes were full; set metricReportIntervalSeconds to %u "
                 "(docs/sim.md)",
                 SLO_DEFAULT_NAMESPACE, SLO_DEFAULT_NAME, got, o->report_interval_s, got * o->speed,
                 o->speed, o->report_interval_s);
    }
    cJSON_Delete(cm);
}

int sim_replay_run(const struct sim_replay_opts *o, struct sim_run *run, struct strbuf *err)
{
    struct sim_cluster cl = {0};
    struct kube_client *own = NULL;
    struct sim_fleet *fleet = NULL;
    struct strbuf certs = STRBUF_INIT;
    const struct sim_trace *tr = o->trace;
    int64_t start, next_qos, next_sample, now, warm_log, warm_end;
    bool warming;
    double last_qos_t = 0, t = 0;
    size_t next_pod = 0, alloc = 0;
    uint64_t sent = 0, failed = 0;
    int r;

    *run = (struct sim_run){.name = o->colocation ? "colocation on" : "colocation off",
                            .colocation = o->colocation};
    if (o->kubeconfig) {
        if ((r = admin_client(o->kubeconfig, &own, err)) < 0)
            goto out;
        check_report_interval(own, o);
    } else {
        struct sim_cluster_opts co = {.exe = o->exe,
                                      .state_dir = o->state_dir,
                                      .colocation = o->colocation,
                                      .report_interval_s = o->report_interval_s,
                                      .aggregate_s = o->report_interval_s * 3,
                                      .update_threshold_s = o->report_interval_s * 3,
                                      .diff_threshold = 0.05,
                                      .suppress_percent = 65,
                                      .memory_evict_percent = 70,
                                      .be_satisfaction_lower = 60,
                                      .be_satisfaction_upper = 80};
        log_info(COMP, "starting the control plane in \"%s\" (colocation %s)", o->state_dir,
                 o->colocation ? "on" : "off");
        if ((r = sim_cluster_start(&co, &cl, err)) < 0)
            goto out;
        /* where to watch the run: the manager's /ui (docs/dashboard.md), any token the API
         * server accepts (its default authorization lets every authenticated user in) */
        log_info(COMP,
                 "dashboard: %s/ui/ (log in with the token of `kubectl --kubeconfig %s create "
                 "token default -n default`; the manager's CA: %s)",
                 cl.manager_url, cl.kubeconfig, cl.manager_ca);
        strbuf_addf(&certs, "%s/nodes", o->state_dir);
    }
    log_info(COMP, "registering %zu nodes", tr->nnodes);
    {
        struct sim_fleet_opts fo = {.admin = own ? own : cl.admin,
                                    .trace = tr,
                                    .model = o->model,
                                    .colocation = o->colocation,
                                    .manager_url = own ? NULL : cl.manager_url,
                                    .node_certs = o->node_certs,
                                    .admin_kubeconfig = cl.kubeconfig,
                                    .manager_ca = cl.manager_ca,
                                    .ca_dir = cl.ca_dir,
                                    .cert_dir = certs.buf,
                                    .report_interval_s = o->report_interval_s,
                                    .senders = o->senders};
        if ((r = sim_fleet_start(&fo, &fleet, err)) < 0)
            goto out;
    }
    log_info(COMP, "replaying %zu pods over %.0f trace seconds at %gx (%.0f s)", tr->npods,
             tr->span_s, o->speed, tr->span_s / o->speed);

    /* every node reports once before the first pod comes: the scheduler's LoadAware filter
     * refuses a node without a fresh NodeMetric */
    now = mono_ms();
    sim_fleet_qos(fleet, 0, 0, now);
    sim_fleet_report_all(fleet, now);
    /* no deadline: each first report is a TLS handshake of its own, which on a loaded machine
     * takes minutes for 10,000 nodes; progress is logged, Ctrl-C stops */
    for (int64_t next_log = now + 10000;; now = mono_ms()) {
        sim_fleet_report_stats(fleet, &sent, &failed);
        if (sent + failed >= tr->nnodes)
            break;
        if (o->stop && atomic_load(o->stop)) {
            r = -EINTR;
            strbuf_addf(err, "stopped while the first NodeMetric reports went out");
            goto out;
        }
        if (now >= next_log) {
            log_info(COMP, "first reports: %llu of %zu sent", (unsigned long long)sent, tr->nnodes);
            next_log = now + 10000;
        }
        sleep_until(now + TICK_MS);
    }
    if (failed)
        log_warn(COMP, "%llu of the first %zu reports failed, going on", (unsigned long long)failed,
                 tr->nnodes);

    start = now = mono_ms();
    next_qos = next_sample = start;
    warming = tr->npods && tr->pods[0].create_s <= 0;
    warm_log = now + 10000;
    warm_end = now + (int64_t)WARMUP_S * 1000;
    if (warming)
        log_info(COMP, "placing the pods of trace time 0 before the clock starts");
    for (;;) {
        double wall_s;
        if (warming) {
            size_t left = sim_fleet_unsettled(fleet);
            if (next_pod && (!left || now >= warm_end)) {
                if (left)
                    log_warn(COMP,
                             "%zu pods of trace time 0 still wait for the scheduler after "
                             "%d s: starting the clock",
                             left, WARMUP_S);
                else
                    log_info(COMP,
                             "the %zu pods of trace time 0 are placed or refused (%.1f s): "
                             "starting the clock",
                             next_pod, (double)(now - start) / 1000.0);
                warming = false;
                start = next_qos = next_sample = now;
            } else if (now >= warm_log) {
                log_info(COMP, "trace time 0: %zu of %zu pods wait for the scheduler", left,
                         next_pod);
                warm_log = now + 10000;
            }
        }
        wall_s = (double)(now - start) / 1000.0;
        t = warming ? 0 : wall_s * o->speed;
        if (o->stop && atomic_load(o->stop)) {
            r = -EINTR;
            break;
        }
        /* the step first: it sets the time the informers stamp bindings with */
        sim_fleet_step(fleet, t);
        while (next_pod < tr->npods && tr->pods[next_pod].create_s <= t)
            (void)sim_fleet_create_pod(fleet, next_pod++, t);
        if (now >= next_qos) {
            sim_fleet_qos(fleet, t, t - last_qos_t, now);
            last_qos_t = t;
            next_qos += (int64_t)(o->qos_interval_s * 1000);
            if (next_qos <= now)
                next_qos = now + (int64_t)(o->qos_interval_s * 1000);
        }
        sim_fleet_report(fleet, now);
        if (!warming && now >= next_sample) {
            struct sim_sample s;
            sim_fleet_sample(fleet, t, wall_s, &s);
            push_sample(run, &alloc, &s);
            next_sample += (int64_t)(o->sample_interval_s * 1000);
            if (next_sample <= now)
                next_sample = now + (int64_t)(o->sample_interval_s * 1000);
        }
        if (t >= tr->span_s) {
            r = 0;
            break;
        }
        sleep_until(now + TICK_MS);
        now = mono_ms();
    }
    sim_fleet_outcome(fleet, run);
    sim_fleet_report_stats(fleet, &sent, &failed);
    log_info(COMP, "%s: %llu reports sent, %llu failed", run->name, (unsigned long long)sent,
             (unsigned long long)failed);
    if (sim_run_summarise(run) < 0 && r == 0)
        r = -ENOMEM;
out:
    sim_fleet_free(fleet);
    kube_client_free(own);
    sim_cluster_stop(&cl);
    strbuf_release(&certs);
    return r;
}
