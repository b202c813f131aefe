/* The node agent, wired (agent.h). */
#include "agent/agent.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "agent/collect/collect.h"
#include "agent/metriccache/metriccache.h"
#include "agent/qos/evict_api.h"
#include "agent/qos/runner.h"
#include "agent/report/policy.h"
#include "agent/report/reporter.h"
#include "agent/report/status.h"
#include "agent/states/states.h"
#include "api/pod.h"
#include "base/base.h"
#include "base/log.h"
#include "base/strbuf.h"
#include "http/server.h"
#include "kube/client.h"
#include "kube/events.h"
#include "kube/informer.h"

#define COMP "agent"

/* Series that stopped being written are dropped after this many intervals (upstream's
 * ContextExpiredRatio: 20). */
#define GC_AGE_INTERVALS 20
#define GC_EVERY_ROUNDS  60

static const struct kube_resource res_crd_nodemetrics = {"slo.koordinator.sh", "v1alpha1",
                                                         "nodemetrics", "NodeMetric", false};

struct agent {
    struct agent_opts o;
    char *node;
    struct mc *mc;
    struct collector *col;
    struct states *st;
    struct reporter *rep;
    struct kube_recorder *rec;
    struct qos_evict_api *evict;
    struct qos_runner *qos;
    struct http_server *http;
    atomic_bool rep_ready;

    pthread_t collect_thread;
    bool collect_started;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* CLOCK_MONOTONIC */
    bool stopping;
    struct collect_stats cstats; /* under lock, for /metrics */

    char *nm_uid;              /* the NodeMetric last seen (under lock); NULL: none */
    struct kube_object **held; /* the QoS tick's objects (the runner's thread only) */
    size_t nheld;
    struct mc_scratch scratch; /* the reporter thread's */
    bool retain_failed;        /* the last report_policy_retain() failed (reporter thread) */
    bool all_sampled;          /* a round sampled every pod (the collector thread's) */
};

static int64_t mono_ns(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    (void)clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
}

/* ---- collection ---- */

static void collect_once(struct agent *a)
{
    struct kube_object **pods = NULL;
    size_t n = states_pods(a->st, &pods);
    const cJSON **objs = xcalloc(n ? n : 1, sizeof(const cJSON *));
    struct collect_stats cs;

    for (size_t i = 0; i < n; i++)
        objs[i] = kube_object_json(pods[i]);
    (void)collect_round(a->col, objs, n, wall_ms(), mono_ns());
    free(objs);
    kube_objects_free(pods, n);
    collect_stats(a->col, &cs);
    if (cs.rounds % GC_EVERY_ROUNDS == 0)
        (void)mc_gc(a->mc, wall_ms(), 0);
    CHECK(pthread_mutex_lock(&a->lock) == 0);
    a->cstats = cs;
    CHECK(pthread_mutex_unlock(&a->lock) == 0);
    /* The first round with a sample of every pod: report now, so that the first complete
     * NodeMetric is not a report interval away when the first report (2 intervals after the
     * start) came before the pods were listed and seeded. Once. */
    if (!a->all_sampled && cs.tracked > 0 && cs.pods == cs.tracked && atomic_load(&a->rep_ready)) {
        a->all_sampled = true;
        reporter_now(a->rep);
    }
}

static void *collect_loop(void *arg)
{
    struct agent *a = arg;
    const int64_t step = a->o.collect_interval_ms * 1000000;
    int64_t next = mono_ns();

    CHECK(pthread_mutex_lock(&a->lock) == 0);
    while (!a->stopping) {
        struct timespec ts = {(time_t)(next / 1000000000), (long)(next % 1000000000)};

        if (mono_ns() < next) {
            (void)pthread_cond_timedwait(&a->cond, &a->lock, &ts);
            continue;
        }
        CHECK(pthread_mutex_unlock(&a->lock) == 0);
        collect_once(a);
        CHECK(pthread_mutex_lock(&a->lock) == 0);
        next += step;
        if (next < mono_ns()) /* fell behind (a stop of the process): no burst of rounds */
            next = mono_ns() + step;
    }
    CHECK(pthread_mutex_unlock(&a->lock) == 0);
    return NULL;
}

/* ---- reporting ---- */

static cJSON *build(void *userdata, int64_t *ret_interval_ms)
{
    struct agent *a = userdata;
    struct kube_object *nm = states_nodemetric(a->st), **pods = NULL;
    struct report_policy policy;
    struct report_pod *rp;
    struct strbuf why = STRBUF_INIT;
    size_t n;
    cJSON *status;

    report_policy_from(nm ? kube_object_json(nm) : NULL, &policy, &why);
    *ret_interval_ms = policy.report_s * 1000;
    if (!nm) {
        strbuf_release(&why);
        return NULL; /* the manager has not made this node's NodeMetric (yet) */
    }
    if (why.len)
        log_warn(COMP, "NodeMetric \"%s\": %s; using the defaults for those", a->node, why.buf);
    strbuf_release(&why);
    if (report_policy_retain(&policy, a->mc) < 0) {
        if (!a->retain_failed)
            log_warn(COMP,
                     "NodeMetric \"%s\": its windows are longer than the agent keeps (node "
                     "durations up to 24 h, aggregateDurationSeconds up to 3600, at a %" PRId64
                     " ms interval); reporting over what it holds",
                     a->node, a->o.collect_interval_ms);
        a->retain_failed = true;
    } else {
        a->retain_failed = false;
    }
    n = states_pods(a->st, &pods);
    rp = xcalloc(n ? n : 1, sizeof(*rp));
    for (size_t i = 0; i < n; i++) {
        const cJSON *o = kube_object_json(pods[i]);
        const char *uid = cJSON_GetStringValue(get(get(o, "metadata"), "uid"));

        rp[i] = (struct report_pod){.uid = uid ? uid : "",
                                    .ns = kube_object_namespace(pods[i]),
                                    .name = kube_object_name(pods[i]),
                                    .qos = api_pod_qos(o),
                                    .priority = api_pod_priority(o)};
    }
    status = report_build_status(a->mc, &policy, rp, n, wall_ms(), &a->scratch);
    free(rp);
    kube_objects_free(pods, n);
    (void)kube_object_unref(nm);
    return status;
}

/* The NodeMetric changed: when it is another object than before (a new leader's), report now. */
static void on_nodemetric(void *userdata)
{
    struct agent *a = userdata;
    struct kube_object *nm = states_nodemetric(a->st);
    const char *uid =
        nm ? cJSON_GetStringValue(get(get(kube_object_json(nm), "metadata"), "uid")) : NULL;
    bool changed = false;

    if (!uid) {
        (void)kube_object_unref(nm);
        return;
    }
    CHECK(pthread_mutex_lock(&a->lock) == 0);
    if (!a->nm_uid || strcmp(uid, a->nm_uid) != 0) {
        changed = true;
        free(a->nm_uid);
        a->nm_uid = xstrdup(uid);
    }
    CHECK(pthread_mutex_unlock(&a->lock) == 0);
    (void)kube_object_unref(nm);
    if (changed && atomic_load(&a->rep_ready)) {
        log_info(COMP, "NodeMetric of node \"%s\" (re)appeared: reporting now", a->node);
        reporter_now(a->rep);
    }
}

/* ---- QoS inputs: references to the informers' objects, held for one tick ---- */

/* cJSON's references share the object's members and never free them: the informer's immutable
 * objects are handed to the runner as they are, instead of a deep copy of every pod each
 * second. The references we take on them are dropped in qos_release(), after the tick. */
static cJSON *reference(const struct kube_object *o)
{
    cJSON *ref = cJSON_CreateObjectReference(kube_object_json(o)->child);

    CHECK(ref);
    return ref;
}

static void hold(struct agent *a, struct kube_object *o)
{
    a->held = xrealloc(a->held, (a->nheld + 1) * sizeof(struct kube_object *));
    a->held[a->nheld++] = o;
}

static cJSON *qos_pods(void *ctx)
{
    struct agent *a = ctx;
    struct kube_object **pods = NULL;
    size_t n = states_pods(a->st, &pods);
    cJSON *arr = cJSON_CreateArray();

    CHECK(arr);
    for (size_t i = 0; i < n; i++) {
        CHECK(cJSON_AddItemToArray(arr, reference(pods[i])));
        hold(a, pods[i]);
    }
    free(pods); /* the references moved to held */
    return arr;
}

static cJSON *qos_one(struct agent *a, struct kube_object *o)
{
    if (!o)
        return NULL;
    hold(a, o);
    return reference(o);
}

static cJSON *qos_node(void *ctx)
{
    return qos_one(ctx, states_node(((struct agent *)ctx)->st));
}

static cJSON *qos_nodeslo(void *ctx)
{
    return qos_one(ctx, states_nodeslo(((struct agent *)ctx)->st));
}

static void qos_release(void *ctx)
{
    struct agent *a = ctx;

    kube_objects_free(a->held, a->nheld);
    a->held = NULL;
    a->nheld = 0;
}

/* ---- /healthz, /metrics ---- */

static void render_metrics(struct agent *a, struct strbuf *out)
{
    struct collect_stats cs;
    struct reporter_stats rs = {0};
    struct mc_stats ms;
    struct rusage ru;
    long rss_pages = 0;
    FILE *f;

    CHECK(pthread_mutex_lock(&a->lock) == 0);
    cs = a->cstats;
    CHECK(pthread_mutex_unlock(&a->lock) == 0);
    if (atomic_load(&a->rep_ready))
        reporter_stats(a->rep, &rs);
    mc_stats(a->mc, &ms);
    (void)getrusage(RUSAGE_SELF, &ru);
    if ((f = fopen("/proc/self/statm", "re"))) {
        if (fscanf(f, "%*d %ld", &rss_pages) != 1)
            rss_pages = 0;
        (void)fclose(f);
    }
    strbuf_addf(out,
                "# HELP koord_agent_collect_rounds_total Collection rounds run.\n"
                "# TYPE koord_agent_collect_rounds_total counter\n"
                "koord_agent_collect_rounds_total %llu\n"
                "# HELP koord_agent_collect_round_cpu_seconds CPU time of the last round.\n"
                "# TYPE koord_agent_collect_round_cpu_seconds gauge\n"
                "koord_agent_collect_round_cpu_seconds %.6f\n"
                "# HELP koord_agent_collect_pods Pods sampled in the last round.\n"
                "# TYPE koord_agent_collect_pods gauge\n"
                "koord_agent_collect_pods %zu\n"
                "# HELP koord_agent_collect_containers Containers sampled in the last round.\n"
                "# TYPE koord_agent_collect_containers gauge\n"
                "koord_agent_collect_containers %zu\n"
                "# HELP koord_agent_collect_read_errors_total Files that could not be read.\n"
                "# TYPE koord_agent_collect_read_errors_total counter\n"
                "koord_agent_collect_read_errors_total %llu\n"
                "# HELP koord_agent_metric_series Series in the metric cache.\n"
                "# TYPE koord_agent_metric_series gauge\n"
                "koord_agent_metric_series %zu\n"
                "# HELP koord_agent_metric_bytes Bytes the metric cache holds.\n"
                "# TYPE koord_agent_metric_bytes gauge\n"
                "koord_agent_metric_bytes %zu\n"
                "# HELP koord_agent_reports_total NodeMetric reports accepted.\n"
                "# TYPE koord_agent_reports_total counter\n"
                "koord_agent_reports_total %llu\n"
                "# HELP koord_agent_report_failures_total Report attempts that failed.\n"
                "# TYPE koord_agent_report_failures_total counter\n"
                "koord_agent_report_failures_total %llu\n"
                "# HELP koord_agent_reports_dropped_total Reports given up.\n"
                "# TYPE koord_agent_reports_dropped_total counter\n"
                "koord_agent_reports_dropped_total %llu\n"
                "# HELP process_cpu_seconds_total User and system CPU time.\n"
                "# TYPE process_cpu_seconds_total counter\n"
                "process_cpu_seconds_total %.6f\n"
                "# HELP process_resident_memory_bytes Resident set size.\n"
                "# TYPE process_resident_memory_bytes gauge\n"
                "process_resident_memory_bytes %ld\n",
                (unsigned long long)cs.rounds, (double)cs.last_round_ns / 1e9, cs.pods,
                cs.containers, (unsigned long long)cs.read_errors, ms.series, ms.bytes,
                (unsigned long long)rs.sent, (unsigned long long)rs.failures,
                (unsigned long long)rs.dropped,
                (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
                    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
                rss_pages * sysconf(_SC_PAGESIZE));
    if (a->qos) {
        struct qos_runner_stats qs;
        qos_runner_stats(a->qos, &qs);
        qos_runner_render_metrics(&qs, out);
    }
}

static void handle(const struct http_request *req, struct http_response *resp, void *userdata)
{
    struct agent *a = userdata;
    const char *path = http_request_path(req);

    resp->content_type = "text/plain; charset=utf-8";
    if (!strcmp(path, "/healthz") || !strcmp(path, "/livez") || !strcmp(path, "/readyz")) {
        resp->status = 200;
        strbuf_addstr(&resp->body, "ok");
    } else if (!strcmp(path, "/metrics")) {
        resp->status = 200;
        resp->content_type = "text/plain; version=0.0.4; charset=utf-8";
        render_metrics(a, &resp->body);
    } else {
        resp->status = 404;
        strbuf_addstr(&resp->body, "404 page not found\n");
    }
}

/* ---- lifecycle ---- */

int agent_start(const struct agent_opts *opts, struct agent **ret)
{
    struct agent *a;
    pthread_condattr_t ca;
    int r;

    if (!opts->node || !*opts->node || !opts->client || !opts->metrics_client)
        return -EINVAL;
    a = xcalloc(1, sizeof(*a));
    a->o = *opts;
    a->node = xstrdup(opts->node);
    a->o.node = a->node;
    a->scratch = (struct mc_scratch)MC_SCRATCH_INIT;
    if (a->o.collect_interval_ms <= 0)
        a->o.collect_interval_ms = 1000;
    CHECK(pthread_mutex_init(&a->lock, NULL) == 0);
    CHECK(pthread_condattr_init(&ca) == 0);
    CHECK(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0);
    CHECK(pthread_cond_init(&a->cond, &ca) == 0);
    (void)pthread_condattr_destroy(&ca);
    if ((r = mc_new(&(struct mc_config){.interval_ms = a->o.collect_interval_ms}, &a->mc)) < 0 ||
        (r = collect_new(
             &(struct collect_opts){.layout = &a->o.layout, .mc = a->mc, .jiffy_hz = a->o.jiffy_hz},
             &a->col)) < 0)
        goto fail;
    if (a->o.host) {
        r = http_server_start(
            &(struct http_server_opts){.host = a->o.host, .port = a->o.port, .max_connections = 16},
            handle, a, &a->http);
        if (r < 0)
            goto fail;
    }
    r = states_start(&(struct states_opts){.client = a->o.client,
                                           .metrics_client = a->o.metrics_client,
                                           .nodemetric_resource = a->o.crd_mode
                                                                      ? &res_crd_nodemetrics
                                                                      : &kube_res_nodemetrics,
                                           .node = a->node,
                                           .on_nodemetric = on_nodemetric,
                                           .userdata = a},
                     &a->st);
    if (r < 0)
        goto fail;
    r = reporter_start(&(struct reporter_opts){.client = a->o.metrics_client,
                                               .resource = a->o.crd_mode ? &res_crd_nodemetrics
                                                                         : &kube_res_nodemetrics,
                                               .node = a->node,
                                               .build = build,
                                               .userdata = a,
                                               /* a few samples first: the report's window */
                                               .first_delay_ms = 2 * a->o.collect_interval_ms},
                       &a->rep);
    if (r < 0)
        goto fail;
    atomic_store(&a->rep_ready, true);
    if ((r = -pthread_create(&a->collect_thread, NULL, collect_loop, a)) < 0)
        goto fail;
    a->collect_started = true;
    if (!a->o.qos_off) {
        struct qos_runner_opts qo;

        a->rec = kube_recorder_new(
            a->o.client,
            &(struct kube_recorder_opts){.component = QOS_EVICT_EVENT_COMPONENT, .host = a->node});
        if ((r = qos_evict_api_new(
                 &(struct qos_evict_api_opts){.client = a->o.client, .recorder = a->rec},
                 &a->evict)) < 0)
            goto fail;
        qos_runner_opts_init(&qo);
        qo.layout = &a->o.layout;
        qo.metrics = a->mc;
        qo.dry_run = a->o.dry_run;
        qo.get_pods = qos_pods;
        qo.get_node = qos_node;
        qo.get_nodeslo = qos_nodeslo;
        qo.release = qos_release;
        qo.source_ctx = a;
        qo.evict = qos_evict_api_evict;
        qo.evict_ctx = a->evict;
        qo.recent = qos_evict_api_recent(a->evict);
        qo.kubelet_cpu_policy = a->o.kubelet_cpu_policy_static ? QOS_KUBELET_CPU_POLICY_STATIC
                                                               : QOS_KUBELET_CPU_POLICY_NONE;
        if (a->o.qos_features_set)
            qo.features = a->o.qos_features;
        qo.collect_interval_ms = a->o.collect_interval_ms;
        qo.interval_ms = a->o.reconcile_interval_ms;
        qo.cpu_suppress_interval_ms = a->o.cpu_suppress_interval_ms;
        qo.memory_evict_interval_ms = a->o.memory_evict_interval_ms;
        qo.cpu_evict_interval_ms = a->o.cpu_evict_interval_ms;
        if ((r = qos_runner_new(&qo, &a->qos)) < 0 || (r = qos_runner_start(a->qos)) < 0)
            goto fail;
    }
    log_info(COMP, "node \"%s\": collecting every %ld ms (cgroup %s, %s driver), reporting to %s",
             a->node, a->o.collect_interval_ms, cg_version_name(a->o.layout.version),
             cg_driver_name(a->o.layout.driver),
             a->o.crd_mode ? "the slo.koordinator.sh NodeMetric" : "the manager");
    *ret = a;
    return 0;
fail:
    agent_stop(a);
    return r;
}

uint16_t agent_port(const struct agent *a)
{
    return a->http ? http_server_port(a->http) : 0;
}

void agent_stop(struct agent *a)
{
    if (!a)
        return;
    CHECK(pthread_mutex_lock(&a->lock) == 0);
    a->stopping = true;
    CHECK(pthread_cond_broadcast(&a->cond) == 0);
    CHECK(pthread_mutex_unlock(&a->lock) == 0);
    if (a->collect_started)
        CHECK(pthread_join(a->collect_thread, NULL) == 0);
    qos_runner_free(a->qos); /* stops its thread: no more cgroup writes or evictions */
    qos_evict_api_free(a->evict);
    kube_recorder_free(a->rec);
    atomic_store(&a->rep_ready, false);
    states_stop(a->st); /* no more callbacks */
    reporter_free(a->rep);
    http_server_stop(a->http);
    states_free(a->st);
    collect_free(a->col);
    mc_free(a->mc);
    mc_scratch_release(&a->scratch);
    free(a->nm_uid);
    (void)pthread_cond_destroy(&a->cond);
    (void)pthread_mutex_destroy(&a->lock);
    free(a->node);
    free(a);
}
