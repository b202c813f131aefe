/*
 * LoadAwareScheduling against hand-computed cases of reference koordlet-and-scheduler.md 5.2 and
 * scheduler.md 8.2-8.3: args and their defaults, the estimator, Filter (thresholds, prod
 * thresholds, aggregated percentiles, expired metrics both ways, pods placed since the report),
 * Score with weights, and the NodeMetric feed through a real in-process koord apiserver raising
 * the plugin's cluster events.
 *
 * The node of most cases has 32 cores and 128 Gi; a pod requesting 1 core and 1 Gi is estimated
 * at 850m (85 %) and 751619277 bytes (70 % of 1 Gi, rounded).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../kube/kubetest.h"
#include "api/api.h"
#include "api/crd.h"
#include "api/pod.h"
#include "api/rfc3339.h"
#include "codec/codec.h"
#include "kube/informer.h"
#include "sched/config/config.h"
#include "sched/framework/runtime.h"
#include "sched/plugins/loadaware/load_aware.h"
#include "sched/plugins/registry.h"
#include "schedtest.h"

#define NOW       1780000000.0 /* 2026-05-28T20:26:40Z */
#define NO_UPDATE (-1e9)       /* metric(): no status.updateTime */
#define EST_MEM   751619277LL  /* round(1 Gi × 0.7) */
#define GI        (1024LL * 1024 * 1024)
#define POD_1C1G  "'containers':[{'name':'c','resources':{'requests':{'cpu':'1','memory':'1Gi'}}}]"
#define NODE_32C  "'cpu':'32','memory':'128Gi'"
#define BATCH_RES "'kubernetes.io/batch-cpu':'16000','kubernetes.io/batch-memory':'64Gi'"

static double clock_now = NOW;

static double test_clock(void)
{
    return clock_now;
}

static struct la *la_new(const char *args)
{
    cJSON *a = args ? fx_json(args) : NULL;
    struct field_errors errs = FIELD_ERRORS_INIT;
    void *self = NULL;
    int r = sched_plugin_load_aware.init(a, "args", NULL, &self, &errs);

    if (r != 0) {
        struct strbuf sb = STRBUF_INIT;
        for (size_t i = 0; i < errs.n; i++)
            field_error_format(&errs.v[i], &sb);
        fail_msg("init: %s", sb.buf);
    }
    field_errors_release(&errs);
    cJSON_Delete(a);
    clock_now = NOW;
    sched__la_set_clock(self, test_clock);
    return self;
}

/*
 * Feeds a NodeMetric of node updated age seconds before NOW (NO_UPDATE: none), with
 * nodeMetric members nm (single-quoted JSON; NULL: no status.nodeMetric) and podsMetric entries.
 */
static void metric(struct la *la, const char *node, double age, const char *nm, const char *pods)
{
    char buf[4096], t[RFC3339_STR_MAX + 32] = "";
    cJSON *o;

    if (age != NO_UPDATE) {
        char ts[RFC3339_STR_MAX];
        (void)rfc3339_format((int64_t)(NOW - age), ts);
        (void)snprintf(t, sizeof(t), "'updateTime':'%s',", ts);
    }
    (void)snprintf(buf, sizeof(buf),
                   "{'metadata':{'name':'%s'},'spec':{'metricCollectPolicy':"
                   "{'reportIntervalSeconds':60}},'status':{%s%s%s%s'podsMetric':[%s]}}",
                   node, t, nm ? "'nodeMetric':{" : "", nm ? nm : "", nm ? "}," : "",
                   pods ? pods : "");
    o = fx_json(buf);
    sched__la_metric_set(la, o, true);
    cJSON_Delete(o);
}

/* A node n1 with allocatable alloc (single-quoted members) and the pods given (taken over;
 * NULL-terminated). */
static struct sched_node_info *node(const char *alloc, ...)
{
    char buf[1024];
    struct sched_node_info *ni = sched_node_info_new("n1");
    struct sched_node *n = NULL;
    struct sched_pod *p;
    va_list ap;
    cJSON *o;

    (void)snprintf(buf, sizeof(buf), "{'metadata':{'name':'n1'},'status':{'allocatable':{%s}}}",
                   alloc);
    o = fx_json(buf);
    assert_int_equal(sched_node_decode(o, &n), 0);
    cJSON_Delete(o);
    sched_node_info_set_node(ni, n);
    sched_node_unref(n);
    va_start(ap, alloc);
    while ((p = va_arg(ap, struct sched_pod *))) {
        sched_node_info_add_pod(ni, p);
        sched_pod_unref(p);
    }
    va_end(ap);
    return ni;
}

/* A pod name (uid "uid-<name>") with the spec members given and the labels. */
#define POD(name, labels, spec)                                                                    \
    fx_pod("{'metadata':{'name':'%s','namespace':'default','uid':'uid-%s','labels':{%s}},"         \
           "'spec':{%s}}",                                                                         \
           name, name, labels, spec)

/* Filter's code and message. */
static const char *filter(struct la *la, const struct sched_pod *pod,
                          const struct sched_node_info *ni)
{
    static char out[512];
    struct sched_status st = {0};
    enum sched_code c = sched_plugin_load_aware.filter(la, NULL, pod, ni, &st);

    (void)snprintf(out, sizeof(out), "%s%s%s", sched_code_name(c), st.n ? ": " : "", MSG(&st));
    sched_status_release(&st);
    return out;
}

static int64_t score(struct la *la, const struct sched_pod *pod, const struct sched_node_info *ni)
{
    struct sched_status st = {0};
    int64_t s = -1;

    assert_int_equal(sched_plugin_load_aware.score(la, NULL, pod, ni, &s, &st), SCHED_SUCCESS);
    sched_status_release(&st);
    return s;
}

static int setup(void **state)
{
    (void)state;
    codec_init();
    return 0;
}

/* ---- args ---- */

static void test_args_defaults(void **state)
{
    struct la *la = la_new(NULL);

    (void)state;
    assert_true(la->a.filter_expired);
    assert_int_equal(la->a.expiration_s, 180);
    assert_false(la->a.schedule_when_expired);
    assert_int_equal(sched__la_rlist_get(&la->a.usage, "cpu"), 65);
    assert_int_equal(sched__la_rlist_get(&la->a.usage, "memory"), 95);
    assert_int_equal(sched__la_rlist_get(&la->a.factors, "cpu"), 85);
    assert_int_equal(sched__la_rlist_get(&la->a.factors, "memory"), 70);
    assert_int_equal(sched__la_rlist_get(&la->a.weights, "cpu"), 1);
    assert_int_equal(sched__la_rlist_get(&la->a.weights, "memory"), 1);
    assert_int_equal(la->a.prod_usage.n, 0);
    assert_int_equal(la->a.agg_usage.n, 0);
    sched_plugin_load_aware.free(la);

    /* Given maps replace the defaults whole; scaling factors are filled in per key; a dominant
     * weight leaves resourceWeights empty. */
    la = la_new("{'usageThresholds':{'memory':60},'estimatedScalingFactors':{'cpu':50},"
                "'dominantResourceWeight':1}");
    assert_int_equal(sched__la_rlist_get(&la->a.usage, "cpu"), -1);
    assert_int_equal(sched__la_rlist_get(&la->a.usage, "memory"), 60);
    assert_int_equal(sched__la_rlist_get(&la->a.factors, "cpu"), 50);
    assert_int_equal(sched__la_rlist_get(&la->a.factors, "memory"), 70);
    assert_int_equal(la->a.weights.n, 0);
    sched_plugin_load_aware.free(la);

    la = la_new("{'apiVersion':'kubescheduler.config.k8s.io/v1','kind':'LoadAwareSchedulingArgs',"
                "'aggregated':{'usageThresholds':{'cpu':60},'usageAggregationType':'p95',"
                "'usageAggregatedDuration':'5m','scoreAggregationType':'avg',"
                "'scoreAggregatedDuration':'10m'},'nodeMetricExpirationSeconds':300}");
    assert_int_equal(la->a.agg_usage_type, LA_AGG_P95);
    assert_int_equal(la->a.agg_usage_dur_s, 300);
    assert_int_equal(la->a.agg_score_type, LA_AGG_AVG);
    assert_int_equal(la->a.agg_score_dur_s, 600);
    assert_int_equal(la->a.expiration_s, 300);
    sched_plugin_load_aware.free(la);
}

static void test_args_refused(void **state)
{
    cJSON *a;

    (void)state;
    a = fx_json("{'bogus':1,'nodeMetricExpirationSeconds':0,'usageThresholds':{'cpu':101},"
                "'prodUsageThresholds':{'memory':-1},'estimatedScalingFactors':{'memory':0},"
                "'resourceWeights':{'cpu':'a'},'filterExpiredNodeMetrics':'yes',"
                "'estimator':'fancy','aggregated':{'usageAggregatedDuration':'5x',"
                "'scoreAggregationType':'max'}}");
    assert_args_refused(
        &sched_plugin_load_aware, a,
        "unknown field \"args.bogus\"\n"
        "args.filterExpiredNodeMetrics: Invalid value: \"yes\": must be a boolean\n"
        "args.nodeMetricExpirationSeconds: Invalid value: 0: must be a positive value\n"
        "args.resourceWeights.cpu: Invalid value: \"a\": must be an integer\n"
        "args.usageThresholds.cpu: Invalid value: 101: threshold of cpu must be in [0, 100]\n"
        "args.prodUsageThresholds.memory: Invalid value: -1: threshold of memory must be in "
        "[0, 100]\n"
        "args.estimator: Unsupported value: \"fancy\": supported values: \"default\"\n"
        "args.estimatedScalingFactors.memory: Invalid value: 0: scaling factor of memory must "
        "be in (0, 100]\n"
        "args.aggregated.usageAggregatedDuration: Invalid value: \"5x\": must be a duration "
        "such as \"5m\"\n"
        "args.aggregated.scoreAggregationType: Unsupported value: \"max\": supported values: "
        "\"avg\", \"p50\", \"p90\", \"p95\", \"p99\"");
    cJSON_Delete(a);
    a = fx_json("[1]");
    assert_args_refused(&sched_plugin_load_aware, a, "args: Invalid value: [1]: must be an object");
    cJSON_Delete(a);
}

/* ---- estimator ---- */

static void test_estimator(void **state)
{
    struct la *la = la_new(NULL);
    struct sched_node_info *ni = node(NODE_32C "," BATCH_RES, NULL); /* interns batch-* */
    struct sched_res e;
    struct sched_pod *p;

    (void)state;
    /* request × factor. */
    p = POD("a", "", POD_1C1G);
    sched__la_estimate(la, p, &e);
    assert_int_equal(e.v[SCHED_RES_CPU], 850);
    assert_int_equal(e.v[SCHED_RES_MEMORY], EST_MEM);
    sched_pod_unref(p);

    /* max(request, limit) × factor: a 2-core limit over a 1-core request gives 1700m. */
    p = POD("b", "",
            "'containers':[{'name':'c','resources':{'requests':{'cpu':'1','memory':'1Gi'},"
            "'limits':{'cpu':'2','memory':'1Gi'}}}]");
    sched__la_estimate(la, p, &e);
    assert_int_equal(e.v[SCHED_RES_CPU], 1700);
    assert_int_equal(e.v[SCHED_RES_MEMORY], EST_MEM);
    sched_pod_unref(p);

    /* Nothing requested (BestEffort, so koord-batch, asking no batch resources): the defaults
     * 250m and 200 MiB. */
    p = POD("c", "", "'containers':[{'name':'c'}]");
    assert_int_equal(p->koord_priority, API_PRIORITY_BATCH);
    sched__la_estimate(la, p, &e);
    assert_int_equal(e.v[SCHED_RES_CPU], 250);
    assert_int_equal(e.v[SCHED_RES_MEMORY], 200LL * 1024 * 1024);
    sched_pod_unref(p);

    /* A batch pod is estimated from its batch-cpu (milli) and batch-memory. */
    p = POD("d", "'koordinator.sh/priority-class':'koord-batch'",
            "'containers':[{'name':'c','resources':{'requests':{'kubernetes.io/batch-cpu':'2000',"
            "'kubernetes.io/batch-memory':'4Gi'},'limits':{'kubernetes.io/batch-cpu':'2000',"
            "'kubernetes.io/batch-memory':'4Gi'}}}]");
    sched__la_estimate(la, p, &e);
    assert_int_equal(e.v[SCHED_RES_CPU], 1700);
    assert_int_equal(e.v[SCHED_RES_MEMORY], 3006477107LL); /* round(4 Gi × 0.7) */
    sched_pod_unref(p);

    /* koord-mid and koord-free pods asking nothing are estimated at nothing. */
    p = POD("e", "'koordinator.sh/priority-class':'koord-mid'", "'containers':[{'name':'c'}]");
    sched__la_estimate(la, p, &e);
    assert_int_equal(e.v[SCHED_RES_CPU], 0);
    assert_int_equal(e.v[SCHED_RES_MEMORY], 0);
    sched_pod_unref(p);
    p = POD("f", "", "'priority':3500,'containers':[{'name':'c'}]");
    sched__la_estimate(la, p, &e);
    assert_int_equal(e.v[SCHED_RES_CPU], 0);
    sched_pod_unref(p);

    /* Init containers: the larger of their max and the containers' sum (limits too). */
    p = POD("g", "",
            "'initContainers':[{'name':'i','resources':{'limits':{'cpu':'3'},'requests':"
            "{'cpu':'3'}}}],'containers':[{'name':'c','resources':{'requests':{'cpu':'1'},"
            "'limits':{'cpu':'1'}}}]");
    sched__la_estimate(la, p, &e);
    assert_int_equal(e.v[SCHED_RES_CPU], 2550);
    sched_pod_unref(p);
    sched_plugin_load_aware.free(la);

    /* Other factors: 100 % of the limit. */
    la = la_new("{'estimatedScalingFactors':{'cpu':100,'memory':100}}");
    p = POD("h", "",
            "'containers':[{'name':'c','resources':{'requests':{'cpu':'500m','memory':'1Gi'},"
            "'limits':{'cpu':'1500m','memory':'2Gi'}}}]");
    sched__la_estimate(la, p, &e);
    assert_int_equal(e.v[SCHED_RES_CPU], 1500);
    assert_int_equal(e.v[SCHED_RES_MEMORY], 2 * GI);
    sched_pod_unref(p);
    sched_plugin_load_aware.free(la);
    sched_node_info_free(ni);
}

/* ---- filter ---- */

static void test_filter_thresholds(void **state)
{
    struct la *la = la_new(NULL);
    struct sched_node_info *ni = node(NODE_32C, NULL);
    struct sched_pod *p = POD("in", "", POD_1C1G), *ds;

    (void)state;
    /* No NodeMetric: the node is not load-aware. */
    assert_string_equal(filter(la, p, ni), "Success");
    /* 20000m + 850m of 32000m = 65.16 % -> 65, not above 65. */
    metric(la, "n1", 10, "'nodeUsage':{'resources':{'cpu':'20000m','memory':'64Gi'}}", NULL);
    assert_string_equal(filter(la, p, ni), "Success");
    /* 20500m + 850m = 66.7 % -> 67 > 65. */
    metric(la, "n1", 10, "'nodeUsage':{'resources':{'cpu':'20500m','memory':'64Gi'}}", NULL);
    assert_string_equal(filter(la, p, ni), "Unschedulable: node(s) cpu usage exceed threshold");
    /* DaemonSet pods skip the filter. */
    ds = fx_pod("{'metadata':{'name':'ds','uid':'uid-ds','ownerReferences':[{'kind':'DaemonSet',"
                "'name':'d','uid':'d1','controller':true}]},'spec':{" POD_1C1G "}}");
    assert_string_equal(filter(la, ds, ni), "Success");
    sched_pod_unref(ds);
    /* Memory: 121 Gi + 0.7 Gi of 128 Gi = 95.08 % -> 95 passes; 122 Gi -> 95.86 % -> 96. */
    metric(la, "n1", 10, "'nodeUsage':{'resources':{'cpu':'1000m','memory':'121Gi'}}", NULL);
    assert_string_equal(filter(la, p, ni), "Success");
    metric(la, "n1", 10, "'nodeUsage':{'resources':{'cpu':'1000m','memory':'122Gi'}}", NULL);
    assert_string_equal(filter(la, p, ni), "Unschedulable: node(s) memory usage exceed threshold");
    /* A NodeMetric without status.nodeMetric passes. */
    metric(la, "n1", 10, NULL, NULL);
    assert_string_equal(filter(la, p, ni), "Success");
    sched_plugin_load_aware.free(la);

    /* A 0 threshold is skipped: the sample's {cpu: 0, memory: 0} filters nothing. */
    la = la_new("{'usageThresholds':{'cpu':0,'memory':0}}");
    metric(la, "n1", 10, "'nodeUsage':{'resources':{'cpu':'32000m','memory':'128Gi'}}", NULL);
    assert_string_equal(filter(la, p, ni), "Success");
    sched_plugin_load_aware.free(la);
    sched_pod_unref(p);
    sched_node_info_free(ni);
}

static void test_filter_expired(void **state)
{
    struct la *la = la_new(NULL);
    struct sched_node_info *ni = node(NODE_32C, NULL);
    struct sched_pod *p = POD("in", "", POD_1C1G);
    const char *cool = "'nodeUsage':{'resources':{'cpu':'1000m','memory':'1Gi'}}";

    (void)state;
    /* Expired at exactly nodeMetricExpirationSeconds (>=), not a second before. */
    metric(la, "n1", 179, cool, NULL);
    assert_string_equal(filter(la, p, ni), "Success");
    assert_int_not_equal(score(la, p, ni), 0);
    metric(la, "n1", 180, cool, NULL);
    assert_string_equal(filter(la, p, ni), "Unschedulable: node(s) nodeMetric expired");
    assert_int_equal(score(la, p, ni), 0);
    /* No updateTime at all: expired too (a NodeMetric its agent never reported to). */
    metric(la, "n1", NO_UPDATE, NULL, NULL);
    assert_string_equal(filter(la, p, ni), "Unschedulable: node(s) nodeMetric expired");
    sched_plugin_load_aware.free(la);

    /* filterExpiredNodeMetrics false: the node passes, and scores 0. */
    la = la_new("{'filterExpiredNodeMetrics':false}");
    metric(la, "n1", 600, cool, NULL);
    assert_string_equal(filter(la, p, ni), "Success");
    assert_int_equal(score(la, p, ni), 0);
    sched_plugin_load_aware.free(la);

    /* enableScheduleWhenNodeMetricsExpired: passes even with the filter on; 300 s expiry. */
    la = la_new("{'enableScheduleWhenNodeMetricsExpired':true,'nodeMetricExpirationSeconds':300}");
    metric(la, "n1", 299, "'nodeUsage':{'resources':{'cpu':'31000m'}}", NULL);
    assert_string_equal(filter(la, p, ni), "Unschedulable: node(s) cpu usage exceed threshold");
    metric(la, "n1", 300, "'nodeUsage':{'resources':{'cpu':'31000m'}}", NULL);
    assert_string_equal(filter(la, p, ni), "Success");
    sched_plugin_load_aware.free(la);
    sched_pod_unref(p);
    sched_node_info_free(ni);
}

/* Pods on the node since the report: counted unless the report lists them and they were placed
 * before its window (updateTime - 60 s). */
static void test_filter_assigned_pods(void **state)
{
    struct la *la = la_new(NULL);
    struct sched_pod *p = POD("in", "", POD_1C1G);
    struct sched_pod *old = fx_pod(
        "{'metadata':{'name':'old','namespace':'default','uid':'uid-old'},'spec':{'nodeName':"
        "'n1','containers':[{'name':'c','resources':{'requests':{'cpu':'4'}}}]},'status':{"
        "'conditions':[{'type':'PodScheduled','status':'True','lastTransitionTime':"
        "'2026-05-28T00:00:00Z'}]}}");
    struct sched_pod *fresh = POD("fresh", "",
                                  "'nodeName':'n1','containers':[{'name':'c',"
                                  "'resources':{'requests':{'cpu':'4'}}}]");
    struct sched_node_info *ni;
    const char *usage = "'nodeUsage':{'resources':{'cpu':'18000m','memory':'1Gi'}}";
    const char *reported = "{'namespace':'default','name':'fresh','priority':'koord-prod',"
                           "'podUsage':{'resources':{'cpu':'1000m'}}}";

    (void)state;
    assert_true(old->scheduled > 0 && old->scheduled < NOW - 3600);
    /* "fresh" (4 cores -> 3400m) is not in podsMetric: counted whole. 18000 + 3400 + 850 =
     * 22250 of 32000 = 69.5 % -> 70 > 65. */
    ni = node(NODE_32C, sched_pod_ref(fresh), NULL);
    metric(la, "n1", 10, usage, NULL);
    assert_string_equal(filter(la, p, ni), "Unschedulable: node(s) cpu usage exceed threshold");
    /* Reported (1000m) and placed long ago (no Reserve, no PodScheduled time): in the usage
     * already. 18000 + 850 = 58.9 %. */
    metric(la, "n1", 10, usage, reported);
    assert_string_equal(filter(la, p, ni), "Success");
    /* Placed by this scheduler 5 s ago (Reserve): 3400 - 1000 reported = 2400 more; 18000 +
     * 2400 + 850 = 66.4 % -> 66 > 65. */
    clock_now = NOW - 5;
    assert_int_equal(sched_plugin_load_aware.reserve(la, NULL, fresh, "n1", NULL), SCHED_SUCCESS);
    clock_now = NOW;
    assert_string_equal(filter(la, p, ni), "Unschedulable: node(s) cpu usage exceed threshold");
    /* Unreserve forgets it. */
    sched_plugin_load_aware.unreserve(la, NULL, fresh, "n1");
    assert_string_equal(filter(la, p, ni), "Success");
    clock_now = NOW - 5;
    assert_int_equal(sched_plugin_load_aware.reserve(la, NULL, fresh, "n1", NULL), SCHED_SUCCESS);
    /* A report 50 s later still has it inside its window (45 s < 60 s) ... */
    clock_now = NOW + 50;
    metric(la, "n1", -50, usage, reported);
    assert_string_equal(filter(la, p, ni), "Unschedulable: node(s) cpu usage exceed threshold");
    assert_int_equal(la->assigned.n, 1);
    /* ... one 120 s later covers it: its time is dropped, its usage is the report's. */
    clock_now = NOW + 120;
    metric(la, "n1", -120, usage, reported);
    assert_int_equal(la->assigned.n, 0);
    assert_string_equal(filter(la, p, ni), "Success");
    sched_node_info_free(ni);

    /* A pod bound within the window by its PodScheduled time counts too; one bound an hour
     * before does not. */
    clock_now = NOW;
    ni = node(NODE_32C, sched_pod_ref(old), NULL);
    metric(la, "n1", 10, usage,
           "{'namespace':'default','name':'old','podUsage':{'resources':{'cpu':'1000m'}}}");
    assert_string_equal(filter(la, p, ni), "Success");
    sched_node_info_free(ni);
    sched_plugin_load_aware.free(la);

    /* estimatedSecondsAfterPodScheduled keeps the estimate past the window: bound at
     * 2026-05-28T00:00:00Z, counted while that + 10^8 s is after the report. */
    la = la_new("{'estimatedSecondsAfterPodScheduled':100000000}");
    ni = node(NODE_32C, sched_pod_ref(old), NULL);
    metric(la, "n1", 10, usage,
           "{'namespace':'default','name':'old','podUsage':{'resources':{'cpu':'1000m'}}}");
    assert_string_equal(filter(la, p, ni), "Unschedulable: node(s) cpu usage exceed threshold");
    sched_node_info_free(ni);
    sched_plugin_load_aware.free(la);

    /* Without nodeUsage the node's pods' full estimates stand in: 3400 + 850 of 32000. */
    la = la_new("{'usageThresholds':{'cpu':13}}");
    ni = node(NODE_32C, sched_pod_ref(fresh), NULL);
    metric(la, "n1", 10, "'systemUsage':{'resources':{'cpu':'30000m'}}", reported);
    assert_string_equal(filter(la, p, ni), "Success"); /* 13.3 % -> 13 */
    sched_plugin_load_aware.free(la);
    la = la_new("{'usageThresholds':{'cpu':12}}");
    metric(la, "n1", 10, "'systemUsage':{'resources':{'cpu':'30000m'}}", reported);
    assert_string_equal(filter(la, p, ni), "Unschedulable: node(s) cpu usage exceed threshold");
    sched_plugin_load_aware.free(la);
    sched_node_info_free(ni);
    sched_pod_unref(old);
    sched_pod_unref(fresh);
    sched_pod_unref(p);
}

static void test_filter_prod(void **state)
{
    struct la *la = la_new("{'prodUsageThresholds':{'cpu':50}}");
    struct sched_node_info *ni = node(NODE_32C, NULL);
    const char *usage = "'nodeUsage':{'resources':{'cpu':'20000m','memory':'8Gi'}}";
    const char *pods = "{'namespace':'default','name':'web','priority':'koord-prod','podUsage':"
                       "{'resources':{'cpu':'10000m'}}},{'namespace':'default','name':'job',"
                       "'priority':'koord-batch','podUsage':{'resources':{'cpu':'8000m'}}}";
    struct sched_pod *p8 = POD("p8", "",
                               "'priority':9500,'containers':[{'name':'c','resources':"
                               "{'requests':{'cpu':'8','memory':'1Gi'}}}]");
    struct sched_pod *p7 = POD("p7", "",
                               "'priority':9500,'containers':[{'name':'c','resources':"
                               "{'requests':{'cpu':'7','memory':'1Gi'}}}]");
    struct sched_pod *be = POD("be", "", "'containers':[{'name':'c'}]");

    (void)state;
    metric(la, "n1", 10, usage, pods);
    /* Prod pods: the prod pods' usage 10000m + 6800m = 52.5 % -> 53 > 50. */
    assert_string_equal(filter(la, p8, ni), "Unschedulable: node(s) cpu usage exceed threshold");
    /* 10000m + 5950m = 49.8 % -> 50. */
    assert_string_equal(filter(la, p7, ni), "Success");
    /* Others: node usage against usageThresholds: 20000m + 250m = 63 %. */
    assert_string_equal(filter(la, be, ni), "Success");
    sched_plugin_load_aware.free(la);

    /* prodUsageIncludeSys adds systemUsage (2000m): 10000 + 2000 + 5950 = 56 % -> fails. */
    la = la_new("{'prodUsageThresholds':{'cpu':50},'prodUsageIncludeSys':true}");
    metric(la, "n1", 10,
           "'nodeUsage':{'resources':{'cpu':'20000m'}},'systemUsage':{'resources':{'cpu':'2000m'}}",
           pods);
    assert_string_equal(filter(la, p7, ni), "Unschedulable: node(s) cpu usage exceed threshold");
    sched_plugin_load_aware.free(la);
    sched_pod_unref(p8);
    sched_pod_unref(p7);
    sched_pod_unref(be);
    sched_node_info_free(ni);
}

static void test_filter_aggregated(void **state)
{
    const char *nm =
        "'nodeUsage':{'resources':{'cpu':'30000m'}},'aggregatedNodeUsages':["
        "{'duration':'5m0s','usage':{'p95':{'resources':{'cpu':'18000m'}},'avg':{'resources':"
        "{'cpu':'10000m'}}}},{'duration':'30m0s','usage':{'p95':{'resources':{'cpu':'25000m'}}}}]";
    struct sched_node_info *ni = node(NODE_32C, NULL);
    struct sched_pod *p = POD("in", "", POD_1C1G);
    struct la *la;

    (void)state;
    /* p95 over 5 min: 18000m + 850m = 58.9 % -> 59, within 60 (node usage 30000m is not read). */
    la = la_new("{'aggregated':{'usageThresholds':{'cpu':60},'usageAggregationType':'p95',"
                "'usageAggregatedDuration':'5m'}}");
    metric(la, "n1", 10, nm, NULL);
    assert_string_equal(filter(la, p, ni), "Success");
    sched_plugin_load_aware.free(la);
    /* over 30 min: 25850 = 80.8 % -> 81 > 60. */
    la = la_new("{'aggregated':{'usageThresholds':{'cpu':60},'usageAggregationType':'p95',"
                "'usageAggregatedDuration':'30m'}}");
    metric(la, "n1", 10, nm, NULL);
    assert_string_equal(filter(la, p, ni),
                        "Unschedulable: node(s) cpu aggregated usage exceed threshold");
    sched_plugin_load_aware.free(la);
    /* No duration: the longest reported (30 min). */
    la = la_new("{'aggregated':{'usageThresholds':{'cpu':60},'usageAggregationType':'p95'}}");
    metric(la, "n1", 10, nm, NULL);
    assert_string_equal(filter(la, p, ni),
                        "Unschedulable: node(s) cpu aggregated usage exceed threshold");
    sched_plugin_load_aware.free(la);
    /* A duration the report lacks: the pods' estimates (none here) + 850m, not node usage. */
    la = la_new("{'aggregated':{'usageThresholds':{'cpu':60},'usageAggregationType':'p95',"
                "'usageAggregatedDuration':'10m'}}");
    metric(la, "n1", 10, nm, NULL);
    assert_string_equal(filter(la, p, ni), "Success");
    sched_plugin_load_aware.free(la);

    /* Score by the 5-minute average: cpu (32000 - 10850) × 100 / 32000 = 66; memory none
     * reported: (128 Gi - 751619277) × 100 / 128 Gi = 99; (66 + 99) / 2 = 82. */
    la = la_new("{'aggregated':{'scoreAggregationType':'avg','scoreAggregatedDuration':'5m'}}");
    metric(la, "n1", 10, nm, NULL);
    assert_int_equal(score(la, p, ni), 82);
    sched_plugin_load_aware.free(la);
    sched_pod_unref(p);
    sched_node_info_free(ni);
}

/* ---- score ---- */

static void test_score(void **state)
{
    /* The reference's example: 32000m / 128 Gi allocatable, 16000m / 32 Gi estimated with the
     * pod -> 50 and 75. Node usage is that less the pod's estimate. */
    const char *half = "'nodeUsage':{'resources':{'cpu':'15150m','memory':'33608119091'}}";
    struct sched_node_info *ni = node(NODE_32C, NULL);
    struct sched_pod *p = POD("in", "", POD_1C1G);
    struct la *la = la_new(NULL);

    (void)state;
    assert_int_equal(score(la, p, ni), 0); /* no NodeMetric */
    metric(la, "n1", 10, half, NULL);
    assert_int_equal(score(la, p, ni), 62); /* (50 + 75) / 2 */
    /* Over capacity: cpu scores 0. */
    metric(la, "n1", 10, "'nodeUsage':{'resources':{'cpu':'40000m','memory':'33608119091'}}", NULL);
    assert_int_equal(score(la, p, ni), 37); /* (0 + 75) / 2 */
    sched_plugin_load_aware.free(la);

    la = la_new("{'resourceWeights':{'cpu':2,'memory':1}}");
    metric(la, "n1", 10, half, NULL);
    assert_int_equal(score(la, p, ni), 58); /* (2 × 50 + 75) / 3 */
    sched_plugin_load_aware.free(la);

    la = la_new("{'resourceWeights':{'cpu':1,'memory':1},'dominantResourceWeight':1}");
    metric(la, "n1", 10, half, NULL);
    assert_int_equal(score(la, p, ni), 58); /* (50 + 75 + 1 × min 50) / 3 */
    sched_plugin_load_aware.free(la);

    /* scoreAccordingProdUsage: a prod pod is scored by the prod pods' usage (8000m, 0). */
    la = la_new("{'scoreAccordingProdUsage':true}");
    metric(la, "n1", 10, half,
           "{'namespace':'default','name':'web','priority':'koord-prod','podUsage':{'resources':"
           "{'cpu':'8000m'}}}");
    {
        struct sched_pod *prod = POD("prod", "", "'priority':9000," POD_1C1G);
        /* cpu (32000 - 8850) × 100 / 32000 = 72; memory 99; -> 85. */
        assert_int_equal(score(la, prod, ni), 85);
        sched_pod_unref(prod);
    }
    assert_int_equal(score(la, p, ni), 85); /* a plain pod is prod by default (LS) too */
    {
        struct sched_pod *be = POD("be", "", "'containers':[{'name':'c'}]");
        /* batch: node usage 15150m + 250m -> 51; 33608119091 + 200 MiB -> 75; -> 63. */
        assert_int_equal(score(la, be, ni), 63);
        sched_pod_unref(be);
    }
    sched_plugin_load_aware.free(la);
    sched_pod_unref(p);
    sched_node_info_free(ni);
}

/* ---- the feed: a real API server, the slo.koordinator.sh CRD, cluster events ---- */

struct feed {
    pthread_mutex_t lock;
    struct strbuf events;
    struct kube_informer *infs[4];
    size_t ninfs;
};

static void feed_add_informer(void *ud, struct kube_informer *inf)
{
    struct feed *f = ud;

    assert_true(f->ninfs < ARRAY_SIZE(f->infs));
    f->infs[f->ninfs++] = inf;
}

static void feed_event(void *ud, const char *label, const char *resource, unsigned actions)
{
    struct feed *f = ud;

    CHECK(pthread_mutex_lock(&f->lock) == 0);
    strbuf_addf(&f->events, "%s %s %u\n", label, resource, actions);
    CHECK(pthread_mutex_unlock(&f->lock) == 0);
}

struct feed_wait {
    struct feed *f;
    const char *want;
};

static bool feed_has(void *arg)
{
    struct feed_wait *w = arg;
    bool ok;

    CHECK(pthread_mutex_lock(&w->f->lock) == 0);
    ok = w->f->events.buf && strstr(w->f->events.buf, w->want);
    CHECK(pthread_mutex_unlock(&w->f->lock) == 0);
    return ok;
}

/* Writes node's NodeMetric status with cpu usage, updated now. */
static void put_status(struct kube_client *c, const struct kube_resource *r, const char *cpu)
{
    char ts[RFC3339_STR_MAX], buf[512];
    cJSON *o;

    (void)rfc3339_format((int64_t)time(NULL), ts);
    (void)snprintf(buf, sizeof(buf),
                   "{'apiVersion':'slo.koordinator.sh/v1alpha1','kind':'NodeMetric','metadata':{"
                   "'name':'n1'},'status':{'updateTime':'%s','nodeMetric':{'nodeUsage':{"
                   "'resources':{'cpu':'%s','memory':'1Gi'}}},'podsMetric':[]}}",
                   ts, cpu);
    o = fx_json(buf);
    assert_int_equal(kube_update(c, r, NULL, o, "status", NULL, NULL), 0);
    cJSON_Delete(o);
}

static void test_feed_real_apiserver(void **state)
{
    static const struct kube_resource slo = {"slo.koordinator.sh", "v1alpha1", "nodemetrics",
                                             "NodeMetric", false};
    struct kt_server *srv = kt_server_new(0);
    struct kube_client *c = kt_client(srv);
    struct feed f = {.lock = PTHREAD_MUTEX_INITIALIZER, .events = STRBUF_INIT};
    struct sched_framework_opts fo = {.client = c,
                                      .add_informer = feed_add_informer,
                                      .cluster_event = feed_event,
                                      .userdata = &f};
    char name[] = "koord-scheduler";
    struct sched_profile_config pc = {.scheduler_name = name};
    struct sched_plugin_ref ref = {.id = sched_registry_find("LoadAwareScheduling")};
    struct field_errors errs = FIELD_ERRORS_INIT;
    struct sched_framework *fw = NULL;
    struct sched_node_info *ni = node(NODE_32C, NULL);
    struct sched_pod *p = POD("in", "", POD_1C1G);
    struct sched_status st = {0};
    struct sched_cycle *cs = sched_cycle_new();
    struct feed_wait w = {&f, NULL};
    cJSON *crd = NULL, *o;

    (void)state;
    assert_true(ref.id >= 0);
    pc.points[SCHED_PT_FILTER] = &ref;
    pc.npoints[SCHED_PT_FILTER] = 1;

    /* Neither NodeMetric API served: no informer, and nodes are not load-aware. */
    assert_int_equal(sched_framework_new(&pc, &fo, &fw, &errs), 0);
    assert_int_equal(f.ninfs, 0);
    assert_int_equal(sched_framework_filter(fw, cs, p, ni, &st), SCHED_SUCCESS);
    sched_framework_free(fw);

    /* With upstream's CRD (no metrics.koordinator.sh): an informer on it. */
    assert_int_equal(
        api_crd_build(api_kind_find("slo.koordinator.sh/v1alpha1", "NodeMetric"), &crd), 0);
    {
        char *body = cJSON_PrintUnformatted(crd);
        assert_int_equal(kube_request(c, "POST",
                                      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                      body, NULL, NULL, NULL),
                         0);
        cJSON_free(body);
    }
    cJSON_Delete(crd);
    assert_int_equal(sched_framework_new(&pc, &fo, &fw, &errs), 0);
    assert_int_equal(f.ninfs, 1);
    assert_int_equal(kube_informer_start(f.infs[0]), 0);
    assert_true(kube_informer_wait_synced(f.infs[0], 10000));

    /* A hot report: the event, then the filter rejects. */
    o = fx_json("{'apiVersion':'slo.koordinator.sh/v1alpha1','kind':'NodeMetric',"
                "'metadata':{'name':'n1'}}");
    assert_int_equal(kube_create(c, &slo, NULL, o, NULL, NULL), 0);
    cJSON_Delete(o);
    w.want = "NodeMetricAdd " LA_NODEMETRIC_EVENT " 1\n";
    assert_true(kt_wait(feed_has, &w, 10));
    put_status(c, &slo, "30000m");
    w.want = "NodeMetricUpdate " LA_NODEMETRIC_EVENT " 124\n";
    assert_true(kt_wait(feed_has, &w, 10));
    assert_int_equal(sched_framework_filter(fw, cs, p, ni, &st), SCHED_UNSCHEDULABLE);
    assert_string_equal(MSG(&st), "node(s) cpu usage exceed threshold");
    sched_status_release(&st);

    /* Cooled down: passes. */
    CHECK(pthread_mutex_lock(&f.lock) == 0);
    strbuf_reset(&f.events);
    CHECK(pthread_mutex_unlock(&f.lock) == 0);
    put_status(c, &slo, "1000m");
    assert_true(kt_wait(feed_has, &w, 10));
    assert_int_equal(sched_framework_filter(fw, cs, p, ni, &st), SCHED_SUCCESS);

    /* Deleted: the event, and the node is not load-aware any more. */
    put_status(c, &slo, "31000m");
    assert_int_equal(kube_delete(c, &slo, NULL, "n1", NULL), 0);
    w.want = "NodeMetricDelete " LA_NODEMETRIC_EVENT " 2\n";
    assert_true(kt_wait(feed_has, &w, 10));
    assert_int_equal(sched_framework_filter(fw, cs, p, ni, &st), SCHED_SUCCESS);

    /* The scheduler stops plugin informers before it frees the plugins. */
    kube_informer_stop(f.infs[0]);
    sched_framework_free(fw);
    field_errors_release(&errs);
    sched_cycle_free(cs);
    strbuf_release(&f.events);
    sched_pod_unref(p);
    sched_node_info_free(ni);
    kube_client_free(c);
    kt_server_free(srv);
}

/*
 * A NodeInfo the scheduler's cache keeps (generation set) is read through its holder's summary
 * and memo; one no cache keeps (generation 0) the long way. Both must give the same answers as
 * the NodeMetric, the node's pods and the plugin instance change.
 */
static void test_summary_follows_changes(void **state)
{
    struct sched_pod *p = POD("in", "", POD_1C1G);
    struct sched_node_info *cached = node(NODE_32C, NULL), *plain = node(NODE_32C, NULL);
    struct sched_pod *placed = POD("placed", "",
                                   "'nodeName':'n1','containers':[{'name':'c',"
                                   "'resources':{'requests':{'cpu':'4'}}}]");
    struct la *la = la_new(NULL), *other;

    (void)state;
    cached->generation = 1;
#define BOTH(expect_filter, expect_score)                                                          \
    do {                                                                                           \
        assert_string_equal(filter(la, p, cached), expect_filter);                                 \
        assert_string_equal(filter(la, p, plain), expect_filter);                                  \
        assert_int_equal(score(la, p, cached), expect_score);                                      \
        assert_int_equal(score(la, p, plain), expect_score);                                       \
    } while (0)
    BOTH("Success", 0); /* no NodeMetric */
    /* 16000m used: (16000 + 850) / 32000 = 53 % <= 65; score cpu 47, memory 1.7 of 128 Gi
     * used -> 98; (47 + 98) / 2 = 72. */
    metric(la, "n1", 10, "'nodeUsage':{'resources':{'cpu':'16000m','memory':'1Gi'}}", NULL);
    BOTH("Success", 72);
    /* A new report replaces the summary: 20850 / 32000 = 65.2 % rounds to 65, not over; cpu
     * scores 34 -> 66. */
    metric(la, "n1", 10, "'nodeUsage':{'resources':{'cpu':'20000m','memory':'1Gi'}}", NULL);
    BOTH("Success", 66);
    /* A pod placed since the report (not in podsMetric) counts at its estimate (3400m, and
     * the 200 Mi default memory): the cached NodeInfo's new generation makes a new summary.
     * 20000 + 3400 + 850 = 75.8 % -> 76 > 65; cpu scores 24, memory 98 -> 61. */
    sched_node_info_add_pod(cached, placed);
    sched_node_info_add_pod(plain, placed);
    cached->generation = 2;
    BOTH("Unschedulable: node(s) cpu usage exceed threshold", 61);
    /* The NodeMetric goes: no usage to judge by. */
    sched__la_metric_delete(la, "n1");
    BOTH("Success", 0);
    metric(la, "n1", 10, "'nodeUsage':{'resources':{'cpu':'1000m','memory':'1Gi'}}", NULL);
    BOTH("Success", 90); /* 1000 + 3400 + 850 = 5250: cpu 83, memory 98 */
    /* Another instance reads the same NodeInfo with its own memo and records. */
    other = la_new(NULL);
    assert_int_equal(score(other, p, cached), 0);
    metric(other, "n1", 10, "'nodeUsage':{'resources':{'cpu':'16000m','memory':'1Gi'}}", NULL);
    assert_int_equal(score(other, p, cached), 67); /* 20250: cpu 36, memory 98 */
    assert_int_equal(score(la, p, cached), 90);
    /* An instance that is gone leaves its memo behind; the next one (same slot, new owner)
     * must not take it for its own. */
    sched_plugin_load_aware.free(other);
    other = la_new(NULL);
    assert_int_equal(score(other, p, cached), 0);
    sched_plugin_load_aware.free(other);
#undef BOTH
    sched_plugin_load_aware.free(la);
    sched_node_info_free(cached);
    sched_node_info_free(plain);
    sched_pod_unref(placed);
    sched_pod_unref(p);
}

/*
 * Score workers race on one node's summary: two cached NodeInfos of the same node (the same
 * holder) with different pods make every other read find the summary made for the other one,
 * so threads keep making it while others read it. No read may return the other NodeInfo's
 * figures (the holder's sequence lock).
 */
#define RACE_THREADS 4
#define RACE_ROUNDS  4000

struct race {
    struct la *la;
    const struct sched_pod *p;
    const struct sched_node_info *a, *b;
    _Atomic int wrong;
};

static void *race_worker(void *arg)
{
    struct race *r = arg;

    for (int i = 0; i < RACE_ROUNDS; i++) {
        if (score(r->la, r->p, r->a) != 72)
            atomic_fetch_add(&r->wrong, 1);
        if (score(r->la, r->p, r->b) != 67)
            atomic_fetch_add(&r->wrong, 1);
    }
    return NULL;
}

static void test_summary_race(void **state)
{
    struct sched_pod *p = POD("in", "", POD_1C1G);
    struct sched_node_info *a = node(NODE_32C, NULL), *b = node(NODE_32C, NULL);
    struct sched_pod *placed = POD("placed", "",
                                   "'nodeName':'n1','containers':[{'name':'c',"
                                   "'resources':{'requests':{'cpu':'4'}}}]");
    struct race r = {.la = la_new(NULL), .p = p, .a = a, .b = b};
    pthread_t t[RACE_THREADS];

    (void)state;
    a->generation = 1;
    sched_node_info_add_pod(b, placed);
    b->generation = 2;
    /* 16000m used: a scores 72 (cpu 47, memory 98); b's pod adds its 3400m estimate and 200 Mi:
     * 20250m -> cpu 36, memory 98 -> 67. */
    metric(r.la, "n1", 10, "'nodeUsage':{'resources':{'cpu':'16000m','memory':'1Gi'}}", NULL);
    for (int i = 0; i < RACE_THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, race_worker, &r), 0);
    for (int i = 0; i < RACE_THREADS; i++)
        assert_int_equal(pthread_join(t[i], NULL), 0);
    assert_int_equal(atomic_load(&r.wrong), 0);
    sched_plugin_load_aware.free(r.la);
    sched_node_info_free(a);
    sched_node_info_free(b);
    sched_pod_unref(placed);
    sched_pod_unref(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_args_defaults),
        cmocka_unit_test(test_args_refused),
        cmocka_unit_test(test_estimator),
        cmocka_unit_test(test_filter_thresholds),
        cmocka_unit_test(test_filter_expired),
        cmocka_unit_test(test_filter_assigned_pods),
        cmocka_unit_test(test_filter_prod),
        cmocka_unit_test(test_filter_aggregated),
        cmocka_unit_test(test_score),
        cmocka_unit_test(test_feed_real_apiserver),
        cmocka_unit_test(test_summary_follows_changes),
        cmocka_unit_test(test_summary_race),
    };

    return cmocka_run_group_tests(tests, setup, NULL);
}
