/*
 * Tests for api/kinds and the type tables behind it (types*.c): the kind registry, the samples
 * of reference/api-types.md decoding as valid objects, one failing object per validation rule
 * (seed 000, api-types.md sections 1-6, kubernetes-api.md 9.3 for scheduling gates) with the
 * exact field path it must name, and the defaults of sections 4, 5 and 6.3.6. Samples and
 * expected trees are transcribed by hand from the references.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "api/api.h"
#include "api/field.h"
#include "api/schema.h"
#include "base/base.h"
#include "codec/codec.h"
#include "testutil.h"

#define RES_HDR                                                                                    \
    "\"apiVersion\":\"scheduling.koordinator.sh/v1alpha1\",\"kind\":\"Reservation\","              \
    "\"metadata\":{\"name\":\"r\"}"
#define CCP_HDR                                                                                    \
    "\"apiVersion\":\"config.koordinator.sh/v1alpha1\",\"kind\":\"ClusterColocationProfile\","     \
    "\"metadata\":{\"name\":\"p\"}"
#define EQP_HDR                                                                                    \
    "\"apiVersion\":\"quota.koordinator.sh/v1alpha1\",\"kind\":\"ElasticQuotaProfile\","           \
    "\"metadata\":{\"name\":\"p\",\"namespace\":\"team-a\"}"
#define EQ_HDR                                                                                     \
    "\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"ElasticQuota\","                \
    "\"metadata\":{\"name\":\"q\",\"namespace\":\"team-a\"}"
#define NM_HDR                                                                                     \
    "\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeMetric\","                      \
    "\"metadata\":{\"name\":\"node-1\"}"
#define SLO_HDR                                                                                    \
    "\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeSLO\","                         \
    "\"metadata\":{\"name\":\"node-1\"}"
#define REC_HDR                                                                                    \
    "\"apiVersion\":\"analysis.koordinator.sh/v1alpha1\",\"kind\":\"Recommendation\","             \
    "\"metadata\":{\"name\":\"rec\",\"namespace\":\"default\"}"
#define NS_HDR "\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"a\"}"
#define POD_HDR                                                                                    \
    "\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web\",\"namespace\":"         \
    "\"default\"}"
#define CONTAINERS "\"containers\":[{\"name\":\"web\",\"image\":\"nginx:1.25\"}]"
#define OWNERS     "\"owners\":[{\"object\":{\"name\":\"p\"}}]"

/* ---- the registry ---- */

static void test_kind_find(void **state)
{
    static const struct {
        const char *av, *kind;
        bool found;
    } rows[] = {
        {"scheduling.koordinator.sh/v1alpha1", "Reservation", true},
        {"analysis.koordinator.sh/v1alpha1", "Recommendation", true},
        {"config.koordinator.sh/v1alpha1", "ClusterColocationProfile", true},
        {"quota.koordinator.sh/v1alpha1", "ElasticQuotaProfile", true},
        {"scheduling.sigs.k8s.io/v1alpha1", "ElasticQuota", true},
        {"slo.koordinator.sh/v1alpha1", "NodeMetric", true},
        {"slo.koordinator.sh/v1alpha1", "NodeSLO", true},
        {"metrics.koordinator.sh/v1alpha1", "NodeMetric", true},
        {"v1", "Pod", true},
        {"v1", "Node", true},
        {"v1", "ConfigMap", true},
        {"v1", "Event", true},
        {"v1", "Namespace", true},
        {"coordination.k8s.io/v1", "Lease", true},
        {"v1", "Reservation", false},
        {"scheduling.koordinator.sh/v1beta1", "Reservation", false},
        {"scheduling.koordinator.sh", "Reservation", false},
        {"scheduling.koordinator.sh/v1alpha1", "reservation", false},
        {"core/v1", "Pod", false},
        {"", "Pod", false},
        {"slo.koordinator.sh/v1alpha1", "", false},
    };
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        const struct api_kind *k = api_kind_find(rows[i].av, rows[i].kind);
        if (rows[i].found != (k != NULL))
            fail_msg("row %zu %s %s: found=%d", i, rows[i].av, rows[i].kind, k != NULL);
        if (k)
            assert_string_equal(k->kind, rows[i].kind);
    }
}

/* Every registered kind can be found again by its own apiVersion and kind. */
static void test_kinds_round_trip(void **state)
{
    const struct api_kind *const *ks = api_kinds();
    char av[128];
    size_t n = 0;
    (void)state;

    for (; ks[n]; n++) {
        const struct api_kind *k = ks[n];
        assert_ptr_equal(api_kind_find(api_kind_api_version(k, av, sizeof(av)), k->kind), k);
        assert_non_null(api_kind_schema(k));
        assert_non_null(k->plural);
    }
    /* 7 Koordinator CRD kinds, the manager's in-memory NodeMetric, 13 built-in ones, the 10
     * workload kinds (apps, batch, policy, events.k8s.io, discovery.k8s.io), the four RBAC
     * kinds and ServiceAccount */
    assert_int_equal(n, 36);
    assert_string_equal(api_kind_api_version(kind("v1", "Pod"), av, sizeof(av)), "v1");
    assert_string_equal(
        api_kind_api_version(kind("scheduling.koordinator.sh/v1alpha1", "Reservation"), av,
                             sizeof(av)),
        "scheduling.koordinator.sh/v1alpha1");
}

/* ---- samples of api-types.md ---- */

static const char *const samples[] = {
    /* 1.3 */
    "{" REC_HDR ",\"spec\":{\"target\":{\"type\":\"workload\",\"workload\":{\"apiVersion\":"
    "\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"nginx-sample-deployment\"}}},\"status\":"
    "{\"podStatus\":{\"containerStatuses\":[{\"containerName\":\"nginx\",\"resources\":"
    "{\"cpu\":\"1200m\",\"memory\":\"1280Mi\"}}]},\"updateTime\":\"2024-03-05T08:00:00Z\"}}",
    /* 2.4 */
    "{\"apiVersion\":\"config.koordinator.sh/v1alpha1\",\"kind\":\"ClusterColocationProfile\","
    "\"metadata\":{\"name\":\"colocation-profile-example\",\"labels\":"
    "{\"config.koordinator.sh/controller-managed\":\"true\"}},\"spec\":{\"namespaceSelector\":"
    "{\"matchLabels\":{\"koordinator.sh/enable-colocation\":\"true\"}},\"selector\":"
    "{\"matchLabels\":{\"koordinator.sh/enable-colocation\":\"true\"}},\"probability\":\"50%\","
    "\"qosClass\":\"BE\",\"priorityClassName\":\"koord-batch\",\"koordinatorPriority\":1000,"
    "\"schedulerName\":\"koord-scheduler\",\"labels\":{\"koordinator.sh/mutated\":\"true\"},"
    "\"annotations\":{\"koordinator.sh/intercepted\":\"true\"},\"labelKeysMapping\":"
    "{\"app\":\"app.kubernetes.io/name\"},\"labelSuffixes\":{\"app\":\"-colocated\"},\"patch\":"
    "{\"spec\":{\"tolerations\":[{\"key\":\"koordinator.sh/colocation\",\"operator\":"
    "\"Exists\",\"effect\":\"NoSchedule\"}]}}}}",
    /* 3.1 (fields of the table) */
    "{" EQP_HDR ",\"spec\":{\"quotaName\":\"team-a-root\",\"quotaLabels\":{\"team\":\"a\"},"
    "\"resourceRatio\":\"0.9\",\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\"}}}}",
    /* 3.4 */
    "{\"apiVersion\":\"scheduling.sigs.k8s.io/v1alpha1\",\"kind\":\"ElasticQuota\",\"metadata\":"
    "{\"namespace\":\"team-a\",\"name\":\"team-a-root\",\"labels\":"
    "{\"quota.scheduling.koordinator.sh/profile\":\"team-a-profile\","
    "\"quota.scheduling.koordinator.sh/tree-id\":\"1234567890123456789\","
    "\"quota.scheduling.koordinator.sh/is-root\":\"true\","
    "\"quota.scheduling.koordinator.sh/parent\":\"koordinator-root-quota\"},\"annotations\":"
    "{\"quota.scheduling.koordinator.sh/total-resource\":\"{\\\"cpu\\\":\\\"96\\\","
    "\\\"memory\\\":\\\"384Gi\\\"}\",\"quota.scheduling.koordinator.sh/unschedulable-resource\":"
    "\"{\\\"cpu\\\":\\\"0\\\",\\\"memory\\\":\\\"0\\\"}\","
    "\"quota.scheduling.koordinator.sh/shared-weight\":\"{\\\"cpu\\\":\\\"4611686018427387\\\","
    "\\\"memory\\\":\\\"4611686018427387\\\"}\"}},\"spec\":{\"min\":{\"cpu\":\"96\",\"memory\":"
    "\"384Gi\"},\"max\":{\"cpu\":\"4611686018427387\",\"memory\":\"4611686018427387\"}}}",
    /* 4.6 */
    "{\"apiVersion\":\"scheduling.koordinator.sh/v1alpha1\",\"kind\":\"Reservation\","
    "\"metadata\":{\"name\":\"reservation-sample\"},\"spec\":{\"template\":{\"metadata\":"
    "{\"namespace\":\"default\"},\"spec\":{\"schedulerName\":\"koord-scheduler\",\"containers\":"
    "[{\"name\":\"stress\",\"image\":\"polinux/stress\",\"resources\":{\"requests\":{\"cpu\":"
    "\"200m\",\"memory\":\"400Mi\"},\"limits\":{\"cpu\":\"1\",\"memory\":\"1Gi\"}}}]}},"
    "\"owners\":[{\"object\":{\"name\":\"reserve-demo-0\",\"namespace\":\"default\"}},"
    "{\"controller\":{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web-7d9f\","
    "\"uid\":\"\",\"namespace\":\"default\"}},{\"labelSelector\":{\"matchLabels\":{\"app\":"
    "\"web\"}}}],\"ttl\":\"1h\",\"allocateOnce\":true,\"allocatePolicy\":\"Aligned\"},"
    "\"status\":{\"phase\":\"Available\",\"nodeName\":\"node-1\",\"allocatable\":{\"cpu\":"
    "\"200m\",\"memory\":\"400Mi\"},\"allocated\":{\"cpu\":\"100m\"},\"currentOwners\":"
    "[{\"namespace\":\"default\",\"name\":\"reserve-demo-0\",\"uid\":\"0c7a...\"}],"
    "\"conditions\":[{\"type\":\"Scheduled\",\"status\":\"True\",\"reason\":\"Scheduled\","
    "\"lastProbeTime\":\"2024-03-05T08:00:00Z\",\"lastTransitionTime\":"
    "\"2024-03-05T08:00:00Z\"},{\"type\":\"Ready\",\"status\":\"True\",\"reason\":"
    "\"Available\",\"lastProbeTime\":\"2024-03-05T08:00:00Z\",\"lastTransitionTime\":"
    "\"2024-03-05T08:00:00Z\"}]}}",
    /* 5.4 */
    "{" NM_HDR ",\"spec\":{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":300,"
    "\"reportIntervalSeconds\":60,\"nodeAggregatePolicy\":{\"durations\":[\"5m0s\",\"10m0s\","
    "\"30m0s\"]},\"nodeMemoryCollectPolicy\":\"usageWithoutPageCache\"}},\"status\":"
    "{\"updateTime\":\"2024-03-05T08:00:00Z\",\"nodeMetric\":{\"nodeUsage\":{\"resources\":"
    "{\"cpu\":\"7500m\",\"memory\":\"30Gi\"}},\"systemUsage\":{\"resources\":{\"cpu\":\"500m\","
    "\"memory\":\"2Gi\"}},\"aggregatedNodeUsages\":[{\"usage\":{\"avg\":{\"resources\":"
    "{\"cpu\":\"7\",\"memory\":\"29Gi\"}},\"p50\":{\"resources\":{\"cpu\":\"7\",\"memory\":"
    "\"29Gi\"}},\"p90\":{\"resources\":{\"cpu\":\"9\",\"memory\":\"31Gi\"}},\"p95\":"
    "{\"resources\":{\"cpu\":\"9500m\",\"memory\":\"31Gi\"}},\"p99\":{\"resources\":{\"cpu\":"
    "\"10\",\"memory\":\"32Gi\"}}},\"duration\":\"5m0s\"}],\"numaUsages\":[{\"numaNodeID\":0,"
    "\"nodeUsage\":{\"resources\":{\"cpu\":\"4\",\"memory\":\"15Gi\"}}}]},\"podsMetric\":"
    "[{\"namespace\":\"default\",\"name\":\"web-0\",\"priority\":\"koord-prod\",\"qos\":\"LS\","
    "\"podUsage\":{\"resources\":{\"cpu\":\"1200m\",\"memory\":\"2Gi\"}}}],"
    "\"hostApplicationMetric\":[{\"name\":\"nginx\",\"priority\":\"koord-prod\",\"qos\":\"LS\","
    "\"usage\":{\"resources\":{\"cpu\":\"300m\"}}}],\"prodReclaimableMetric\":{\"resource\":"
    "{\"resources\":{\"cpu\":\"2\",\"memory\":\"4Gi\"}}},\"prodPeakMetric\":{\"resource\":"
    "{\"resources\":{\"cpu\":\"12\",\"memory\":\"40Gi\"}}}}}",
    /* 2.3 of manager-behaviour.md: what the controller writes with no ConfigMap keys */
    "{" SLO_HDR ",\"spec\":{\"resourceUsedThresholdWithBE\":{\"enable\":false,"
    "\"cpuSuppressThresholdPercent\":65,\"cpuSuppressPolicy\":\"cpuset\","
    "\"memoryEvictThresholdPercent\":70,\"cpuEvictPolicy\":\"evictByRealLimit\"},"
    "\"resourceQOSStrategy\":{},\"cpuBurstStrategy\":{\"policy\":\"none\",\"cpuBurstPercent\":"
    "1000,\"cfsQuotaBurstPercent\":300,\"cfsQuotaBurstPeriodSeconds\":-1,"
    "\"sharePoolThresholdPercent\":50},\"systemStrategy\":{\"totalNetworkBandwidth\":\"0\"},"
    "\"extensions\":{\"Object\":{}}},\"status\":{}}",
    /* Core kinds (kubernetes-api.md shapes). */
    "{" POD_HDR ",\"spec\":{\"schedulingGates\":[{\"name\":\"example.com/quota\"},{\"name\":"
    "\"koordinator.sh/reservation\"}]," CONTAINERS "}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":"
    "\"slo-controller-config\",\"namespace\":\"koordinator-system\"},\"data\":"
    "{\"colocation-config\":\"{\\\"enable\\\": true}\"}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team-a\"}}",
    "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":"
    "\"koord-manager\",\"namespace\":\"koordinator-system\"},\"spec\":{\"holderIdentity\":"
    "\"a\",\"leaseDurationSeconds\":15}}",
};

/* The lsClass and systemClass left out of 6.7, written out from 6.3.6. */
#define QOS_CLASS(gi, ce, wr, wsp, wma, cat)                                                       \
    "{\"cpuQOS\":{\"enable\":false,\"groupIdentity\":" gi ",\"schedIdle\":0,\"coreExpeller\":" ce  \
    "},\"memoryQOS\":{\"enable\":false,\"minLimitPercent\":0,\"lowLimitPercent\":0,"               \
    "\"throttlingPercent\":0,\"wmarkRatio\":" wr ",\"wmarkScalePermill\":" wsp                     \
    ",\"wmarkMinAdj\":" wma ",\"priorityEnable\":0,\"priority\":0,\"oomKillGroup\":0},"            \
    "\"blkioQOS\":{\"enable\":false},\"resctrlQOS\":{\"enable\":false,\"catRangeStartPercent\":0," \
    "\"catRangeEndPercent\":" cat ",\"mbaPercent\":100},\"networkQOS\":{\"enable\":false,"         \
    "\"ingressRequest\":0,\"ingressLimit\":0,\"egressRequest\":0,\"egressLimit\":0}}"
#define LSR_DEFAULT QOS_CLASS("2", "true", "95", "20", "-25", "100")
#define LS_DEFAULT  QOS_CLASS("2", "true", "95", "20", "-25", "100")
#define BE_DEFAULT  QOS_CLASS("-1", "false", "95", "20", "50", "30")
#define SYS_DEFAULT QOS_CLASS("0", "false", "0", "50", "0", "100")

/* 6.7 with every class written out. */
static const char nodeslo_full_default[] =
    "{\"resourceUsedThresholdWithBE\":{\"enable\":false,\"cpuSuppressThresholdPercent\":65,"
    "\"cpuSuppressPolicy\":\"cpuset\",\"memoryEvictThresholdPercent\":70,\"cpuEvictPolicy\":"
    "\"evictByRealLimit\"},\"resourceQOSStrategy\":{\"policies\":{\"cpuPolicy\":"
    "\"groupIdentity\",\"netQOSPolicy\":\"tc\"},\"lsrClass\":" LSR_DEFAULT
    ",\"lsClass\":" LS_DEFAULT ",\"beClass\":" BE_DEFAULT ",\"systemClass\":" SYS_DEFAULT
    ",\"cgroupRoot\":{\"blkioQOS\":{\"enable\":false}}},\"cpuBurstStrategy\":{\"policy\":"
    "\"none\",\"cpuBurstPercent\":1000,\"cfsQuotaBurstPercent\":300,"
    "\"cfsQuotaBurstPeriodSeconds\":-1,\"sharePoolThresholdPercent\":50},\"systemStrategy\":"
    "{\"totalNetworkBandwidth\":\"0\"},\"extensions\":{\"Object\":{}}}";

static void check_valid(const char *doc, size_t idx)
{
    struct field_errors e = FIELD_ERRORS_INIT;
    const struct api_kind *k = NULL;
    cJSON *o = J(doc);
    size_t n = api_object_validate(o, API_V_STRICT, &k, &e);

    if (n || e.n)
        fail_with_errors(&e, "sample %zu: %zu errors:", idx, n);
    assert_non_null(k);
    field_errors_release(&e);
    cJSON_Delete(o);
}

static void test_samples_valid(void **state)
{
    char *full;
    size_t len;
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(samples); i++)
        check_valid(samples[i], i);
    /* 6.7 in full is a valid NodeSLO spec too. */
    len = strlen(nodeslo_full_default) + 128;
    full = test_malloc(len);
    (void)snprintf(full, len, "{%s,\"spec\":%s}", SLO_HDR, nodeslo_full_default);
    check_valid(full, 99);
    test_free(full);
}

/* ---- one failing object per rule ---- */

struct rule_row {
    const char *doc;
    const char *field;
    enum field_error_type type;
    const char *rendered; /* exact rendering, or NULL to check only field and type */
};

static const struct rule_row rules[] = {
    /* Reservation (api-types.md 4.1, seed 000) */
    {"{" RES_HDR ",\"spec\":{" OWNERS "}}", "spec.template", FIELD_REQUIRED,
     "spec.template: Required value"},
    {"{" RES_HDR ",\"spec\":{\"template\":{}}}", "spec.owners", FIELD_REQUIRED,
     "spec.owners: Required value"},
    {"{" RES_HDR ",\"spec\":{\"template\":{},\"owners\":[]}}", "spec.owners", FIELD_INVALID, NULL},
    {"{" RES_HDR ",\"spec\":{\"template\":{},\"owners\":[{}]}}", "spec.owners[0]", FIELD_INVALID,
     NULL},
    {"{" RES_HDR ",\"spec\":{\"template\":{},\"owners\":[{\"object\":{}},{}]}}", "spec.owners[1]",
     FIELD_REQUIRED, NULL},
    {"{" RES_HDR ",\"spec\":{\"template\":{}," OWNERS
     ",\"ttl\":\"12h\",\"expires\":\"2024-03-05T08:00:00Z\"}}",
     "spec.ttl", FIELD_INVALID,
     "spec.ttl: Invalid value: \"12h\": ttl and expires are mutually exclusive"},
    {"{" RES_HDR ",\"spec\":{\"template\":{}," OWNERS ",\"allocatePolicy\":\"Fancy\"}}",
     "spec.allocatePolicy", FIELD_NOT_SUPPORTED,
     "spec.allocatePolicy: Unsupported value: \"Fancy\": supported values: \"Aligned\", "
     "\"Restricted\""},
    {"{" RES_HDR ",\"spec\":{\"template\":{},\"owners\":[{\"controller\":{\"kind\":"
     "\"ReplicaSet\",\"name\":\"web\"}}]}}",
     "spec.owners[0].controller.apiVersion", FIELD_REQUIRED, NULL},
    {"{" RES_HDR ",\"spec\":{\"template\":{},\"owners\":[{\"controller\":{\"apiVersion\":"
     "\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"web\"}}]}}",
     "spec.owners[0].controller.uid", FIELD_REQUIRED,
     "spec.owners[0].controller.uid: Required value"},
    {"{" RES_HDR ",\"spec\":{\"template\":{}," OWNERS ",\"ttl\":\"1 day\"}}", "spec.ttl",
     FIELD_INVALID, NULL},
    {"{" RES_HDR ",\"spec\":{\"template\":\"pod\"," OWNERS "}}", "spec.template", FIELD_INVALID,
     NULL},
    {"{" RES_HDR ",\"spec\":{\"template\":{}," OWNERS ",\"preAllocationPolicy\":{\"mode\":"
     "\"Sometimes\"}}}",
     "spec.preAllocationPolicy.mode", FIELD_NOT_SUPPORTED,
     "spec.preAllocationPolicy.mode: Unsupported value: \"Sometimes\": supported values: "
     "\"Default\", \"Cluster\""},
    {"{" RES_HDR ",\"spec\":{\"template\":{}," OWNERS ",\"taints\":[{\"key\":\"k\"}]}}",
     "spec.taints[0].effect", FIELD_REQUIRED, NULL},
    /* ClusterColocationProfile (2.1) */
    {"{" CCP_HDR ",\"spec\":{\"qosClass\":\"BestEffort\"}}", "spec.qosClass", FIELD_NOT_SUPPORTED,
     "spec.qosClass: Unsupported value: \"BestEffort\": supported values: \"LSE\", \"LSR\", "
     "\"LS\", \"BE\", \"SYSTEM\""},
    {"{" CCP_HDR ",\"spec\":{\"probability\":\"abc\"}}", "spec.probability", FIELD_INVALID, NULL},
    {"{" CCP_HDR ",\"spec\":{\"probability\":\"50\"}}", "spec.probability", FIELD_INVALID, NULL},
    {"{" CCP_HDR ",\"spec\":{\"probability\":\"30.5%\"}}", "spec.probability", FIELD_INVALID, NULL},
    {"{" CCP_HDR ",\"spec\":{\"probability\":\"150%\"}}", "spec.probability", FIELD_INVALID, NULL},
    {"{" CCP_HDR ",\"spec\":{\"probability\":150}}", "spec.probability", FIELD_INVALID, NULL},
    {"{" CCP_HDR ",\"spec\":{\"probability\":-1}}", "spec.probability", FIELD_INVALID, NULL},
    {"{" CCP_HDR ",\"spec\":{\"probability\":true}}", "spec.probability", FIELD_INVALID, NULL},
    {"{" CCP_HDR ",\"spec\":{\"selector\":{\"matchExpressions\":[{\"key\":\"app\",\"operator\":"
     "\"Equals\",\"values\":[\"batch\"]}]}}}",
     "spec.selector.matchExpressions[0].operator", FIELD_INVALID, NULL},
    {"{" CCP_HDR ",\"spec\":{\"selector\":{\"matchExpressions\":[{\"key\":\"app\",\"operator\":"
     "\"In\"}]}}}",
     "spec.selector.matchExpressions[0].values", FIELD_REQUIRED, NULL},
    {"{" CCP_HDR ",\"spec\":{\"namespaceSelector\":{\"matchExpressions\":[{\"key\":\"app\","
     "\"operator\":\"Exists\",\"values\":[\"x\"]}]}}}",
     "spec.namespaceSelector.matchExpressions[0].values", FIELD_FORBIDDEN, NULL},
    {"{" CCP_HDR ",\"spec\":{\"selector\":{\"matchExpressions\":[{\"operator\":\"Exists\"}]}}}",
     "spec.selector.matchExpressions[0].key", FIELD_REQUIRED, NULL},
    {"{" CCP_HDR ",\"spec\":{\"selector\":{\"matchLabels\":{\"app\":\"web server\"}}}}",
     "spec.selector.matchLabels", FIELD_INVALID, NULL},
    /* ElasticQuotaProfile (3.1) */
    {"{" EQP_HDR ",\"spec\":{\"nodeSelector\":{\"matchLabels\":{\"pool\":\"a\"}}}}",
     "spec.quotaName", FIELD_REQUIRED, "spec.quotaName: Required value"},
    {"{" EQP_HDR ",\"spec\":{\"quotaName\":\"q\"}}", "spec.nodeSelector", FIELD_REQUIRED,
     "spec.nodeSelector: Required value"},
    {"{" EQP_HDR ",\"spec\":{\"quotaName\":\"q\",\"nodeSelector\":{},\"resourceRatio\":\"abc\"}}",
     "spec.resourceRatio", FIELD_INVALID, NULL},
    /* ElasticQuota webhook (3.2) */
    {"{" EQ_HDR ",\"spec\":{\"min\":{\"cpu\":\"-1\"},\"max\":{\"cpu\":\"10\"}}}", "spec.min[cpu]",
     FIELD_INVALID, NULL},
    {"{" EQ_HDR ",\"spec\":{\"max\":{\"memory\":\"-1Gi\"}}}", "spec.max[memory]", FIELD_INVALID,
     NULL},
    {"{" EQ_HDR ",\"spec\":{\"min\":{\"cpu\":\"20\",\"memory\":\"16Gi\"},\"max\":{\"cpu\":\"10\","
     "\"memory\":\"32Gi\"}}}",
     "spec.min[cpu]", FIELD_INVALID, NULL},
    {"{" EQ_HDR ",\"spec\":{\"min\":{\"cpu\":\"1\",\"memory\":\"1Gi\"},\"max\":{\"cpu\":\"2\"}}}",
     "spec.min[memory]", FIELD_INVALID, NULL},
    /* NodeMetric (5.1, 5.2) */
    {"{" NM_HDR ",\"spec\":{\"metricCollectPolicy\":{\"nodeMemoryCollectPolicy\":"
     "\"usageWithCache\"}}}",
     "spec.metricCollectPolicy.nodeMemoryCollectPolicy", FIELD_NOT_SUPPORTED,
     "spec.metricCollectPolicy.nodeMemoryCollectPolicy: Unsupported value: \"usageWithCache\": "
     "supported values: \"usageWithHotPageCache\", \"usageWithoutPageCache\", "
     "\"usageWithPageCache\""},
    {"{" NM_HDR ",\"spec\":{\"metricCollectPolicy\":{\"nodeAggregatePolicy\":{\"durations\":"
     "[\"5 minutes\",\"10m0s\"]}}}}",
     "spec.metricCollectPolicy.nodeAggregatePolicy.durations[0]", FIELD_INVALID, NULL},
    {"{" NM_HDR ",\"status\":{\"nodeMetric\":{\"aggregatedNodeUsages\":[{\"duration\":\"5m\"},"
     "{\"duration\":\"5x\"}]}}}",
     "status.nodeMetric.aggregatedNodeUsages[1].duration", FIELD_INVALID, NULL},
    {"{" NM_HDR ",\"status\":{\"nodeMetric\":{\"nodeUsage\":{\"resources\":{\"cpu\":"
     "\"12 cores\"}}}}}",
     "status.nodeMetric.nodeUsage.resources[cpu]", FIELD_INVALID, NULL},
    {"{" NM_HDR ",\"status\":{\"updateTime\":\"yesterday\"}}", "status.updateTime", FIELD_INVALID,
     NULL},
    /* NodeSLO CRD bounds (6.2-6.5) */
    {"{" SLO_HDR ",\"spec\":{\"resourceUsedThresholdWithBE\":{\"cpuSuppressThresholdPercent\":"
     "150}}}",
     "spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent", FIELD_INVALID,
     "spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent: Invalid value: 150: "
     "spec.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent in body should be less than "
     "or equal to 100"},
    {"{" SLO_HDR ",\"spec\":{\"resourceQOSStrategy\":{\"beClass\":{\"memoryQOS\":"
     "{\"minLimitPercent\":-5}}}}}",
     "spec.resourceQOSStrategy.beClass.memoryQOS.minLimitPercent", FIELD_INVALID,
     "spec.resourceQOSStrategy.beClass.memoryQOS.minLimitPercent: Invalid value: -5: "
     "spec.resourceQOSStrategy.beClass.memoryQOS.minLimitPercent in body should be greater "
     "than or equal to 0"},
    {"{" SLO_HDR ",\"spec\":{\"resourceQOSStrategy\":{\"lsClass\":{\"memoryQOS\":"
     "{\"wmarkMinAdj\":60}}}}}",
     "spec.resourceQOSStrategy.lsClass.memoryQOS.wmarkMinAdj", FIELD_INVALID, NULL},
    {"{" SLO_HDR ",\"spec\":{\"resourceQOSStrategy\":{\"lsrClass\":{\"memoryQOS\":"
     "{\"wmarkMinAdj\":-26}}}}}",
     "spec.resourceQOSStrategy.lsrClass.memoryQOS.wmarkMinAdj", FIELD_INVALID, NULL},
    {"{" SLO_HDR ",\"spec\":{\"cpuBurstStrategy\":{\"cpuBurstPercent\":10001}}}",
     "spec.cpuBurstStrategy.cpuBurstPercent", FIELD_INVALID, NULL},
    {"{" SLO_HDR ",\"spec\":{\"cpuBurstStrategy\":{\"cpuBurstPercent\":-1}}}",
     "spec.cpuBurstStrategy.cpuBurstPercent", FIELD_INVALID, NULL},
    {"{" SLO_HDR ",\"spec\":{\"systemStrategy\":{\"totalNetworkBandwidth\":\"-1G\"}}}",
     "spec.systemStrategy.totalNetworkBandwidth", FIELD_INVALID, NULL},
    {"{" SLO_HDR ",\"spec\":{\"systemStrategy\":{\"totalNetworkBandwidth\":-5}}}",
     "spec.systemStrategy.totalNetworkBandwidth", FIELD_INVALID, NULL},
    {"{" SLO_HDR ",\"spec\":{\"cpuBurstStrategy\":{\"policy\":\"sometimes\"}}}",
     "spec.cpuBurstStrategy.policy", FIELD_NOT_SUPPORTED, NULL},
    {"{" SLO_HDR ",\"spec\":{\"resourceQOSStrategy\":{\"beClass\":{\"blkioQOS\":{\"blocks\":"
     "[{\"ioCfg\":{\"ioWeightPercent\":0}}]}}}}}",
     "spec.resourceQOSStrategy.beClass.blkioQOS.blocks[0].ioCfg.ioWeightPercent", FIELD_INVALID,
     NULL},
    /* Recommendation (1.1, seed 000) */
    {"{" REC_HDR ",\"spec\":{}}", "spec.target", FIELD_REQUIRED, "spec.target: Required value"},
    {"{" REC_HDR ",\"spec\":{\"target\":{}}}", "spec.target.type", FIELD_REQUIRED, NULL},
    {"{" REC_HDR ",\"spec\":{\"target\":{\"type\":\"workload\"}}}", "spec.target.workload",
     FIELD_REQUIRED, NULL},
    {"{" REC_HDR ",\"spec\":{\"target\":{\"type\":\"podSelector\"}}}", "spec.target.podSelector",
     FIELD_REQUIRED, NULL},
    {"{" REC_HDR ",\"spec\":{\"target\":{\"type\":\"workload\",\"workload\":{\"name\":\"x\"}}}}",
     "spec.target.workload.kind", FIELD_REQUIRED, NULL},
    {"{" REC_HDR ",\"spec\":{\"target\":{\"type\":\"pods\"}}}", "spec.target.type",
     FIELD_NOT_SUPPORTED, NULL},
    /* Pod scheduling gates (kubernetes-api.md 9.3) */
    {"{" POD_HDR ",\"spec\":{\"schedulingGates\":[{\"name\":\"example.com/quota\"},{\"name\":"
     "\"example.com/quota\"}]," CONTAINERS "}}",
     "spec.schedulingGates[1]", FIELD_DUPLICATE,
     "spec.schedulingGates[1]: Duplicate value: \"example.com/quota\""},
    {"{" POD_HDR ",\"spec\":{\"schedulingGates\":[{\"name\":\"bad name!\"}]," CONTAINERS "}}",
     "spec.schedulingGates[0]", FIELD_INVALID, NULL},
    {"{" POD_HDR ",\"spec\":{\"nodeName\":\"n1\",\"schedulingGates\":[{\"name\":\"a\"}]," CONTAINERS
     "}}",
     "spec.nodeName", FIELD_FORBIDDEN,
     "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared"},
    {"{" POD_HDR ",\"spec\":{\"schedulingGates\":[{}]," CONTAINERS "}}",
     "spec.schedulingGates[0].name", FIELD_REQUIRED, NULL},
    {"{" POD_HDR ",\"spec\":{}}", "spec.containers", FIELD_REQUIRED, NULL},
    /* Metadata */
    {"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":\"default\"}}",
     "metadata.name", FIELD_REQUIRED,
     "metadata.name: Required value: name or generateName is required"},
    {"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\"}", "metadata.name", FIELD_REQUIRED, NULL},
    {"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"Bad_Name\"}}",
     "metadata.name", FIELD_INVALID, NULL},
    {"{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"a.b\"}}",
     "metadata.name", FIELD_INVALID, NULL},
    /* Namespace spec.finalizers (validateFinalizerName) */
    {"{" NS_HDR ",\"spec\":{\"finalizers\":[\"kubernetes\",\"foo\"]}}", "spec.finalizers[1]",
     FIELD_INVALID,
     "spec.finalizers[1]: Invalid value: \"foo\": name is neither a standard finalizer name nor "
     "is it fully qualified"},
    {"{" NS_HDR ",\"spec\":{\"finalizers\":[\"example.com/a b\"]}}", "spec.finalizers[0]",
     FIELD_INVALID, NULL},
    {"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\",\"namespace\":"
     "\"Team_A\"}}",
     "metadata.namespace", FIELD_INVALID, NULL},
    {"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"app\":"
     "\"web server\"}},\"spec\":{" CONTAINERS "}}",
     "metadata.labels", FIELD_INVALID, NULL},
    /* apiVersion and kind */
    {"{\"apiVersion\":\"v1\",\"kind\":\"Foo\",\"metadata\":{\"name\":\"x\"}}", "kind",
     FIELD_NOT_SUPPORTED,
     "kind: Unsupported value: \"Foo\": no matches for kind \"Foo\" in version \"v1\""},
    {"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"x\"}}", "apiVersion", FIELD_REQUIRED, NULL},
    {"{\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"x\"}}", "kind", FIELD_REQUIRED, NULL},
};

static void test_rules(void **state)
{
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(rules); i++) {
        struct field_errors e = FIELD_ERRORS_INIT;
        cJSON *o = J(rules[i].doc);
        size_t n = api_object_validate(o, 0, NULL, &e);
        bool found = false;

        for (size_t j = 0; j < e.n && !found; j++)
            found = !strcmp(e.v[j].field, rules[i].field) && e.v[j].type == rules[i].type &&
                    (!rules[i].rendered || renders_as(&e.v[j], rules[i].rendered));
        if (!found || n == 0)
            fail_with_errors(&e, "rule %zu: want %d at %s%s%s\n doc: %s\nhave:", i,
                             (int)rules[i].type, rules[i].field, rules[i].rendered ? " as " : "",
                             rules[i].rendered ? rules[i].rendered : "", rules[i].doc);
        field_errors_release(&e);
        cJSON_Delete(o);
    }
}

/* The valid side of the same rules: boundaries and allowed forms pass. */
static const char *const valid_docs[] = {
    "{" RES_HDR ",\"spec\":{\"template\":{}," OWNERS ",\"ttl\":\"0\"}}",
    "{" RES_HDR ",\"spec\":{\"template\":{},\"owners\":[{\"controller\":{\"apiVersion\":\"\","
    "\"kind\":\"\",\"name\":\"\",\"uid\":\"\"}}],\"expires\":\"2024-03-05T08:00:00Z\"}}",
    "{" CCP_HDR ",\"spec\":{\"probability\":\"0%\"}}",
    "{" CCP_HDR ",\"spec\":{\"probability\":\"100%\"}}",
    "{" CCP_HDR ",\"spec\":{\"probability\":0}}",
    "{" CCP_HDR ",\"spec\":{\"probability\":100,\"qosClass\":\"LSE\"}}",
    "{" CCP_HDR ",\"spec\":{\"selector\":{\"matchExpressions\":[{\"key\":\"a\",\"operator\":"
    "\"NotIn\",\"values\":[\"x\"]},{\"key\":\"b\",\"operator\":\"DoesNotExist\"}]}}}",
    "{" EQ_HDR ",\"spec\":{\"min\":{\"cpu\":\"10\"},\"max\":{\"cpu\":\"10\"}}}",
    "{" SLO_HDR ",\"spec\":{\"cpuBurstStrategy\":{\"cpuBurstPercent\":10000},"
    "\"resourceQOSStrategy\":{\"beClass\":{\"memoryQOS\":{\"wmarkMinAdj\":50}}},"
    "\"systemStrategy\":{\"totalNetworkBandwidth\":\"10G\"}}}",
    "{" REC_HDR ",\"spec\":{\"target\":{\"type\":\"podSelector\",\"podSelector\":{}}}}",
    "{" POD_HDR ",\"spec\":{\"nodeName\":\"n1\",\"schedulingGates\":[]," CONTAINERS "}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"generateName\":\"cm-\"}}",
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a.b\"}}",
    "{" NS_HDR ",\"spec\":{\"finalizers\":[\"kubernetes\",\"orphan\",\"foregroundDeletion\","
    "\"example.com/hold\"]}}",
};

static void test_rules_valid_side(void **state)
{
    (void)state;

    for (size_t i = 0; i < ARRAY_SIZE(valid_docs); i++) {
        struct field_errors e = FIELD_ERRORS_INIT;
        cJSON *o = J(valid_docs[i]);
        size_t n = api_object_validate(o, API_V_STRICT, NULL, &e);
        if (n)
            fail_with_errors(&e, "doc %zu should be valid: %s\nhave:", i, valid_docs[i]);
        field_errors_release(&e);
        cJSON_Delete(o);
    }
}

/* resourceRatio outside (0, 1] is accepted and treated as 1.0 (3.1): a warning, not an error. */
static void test_resource_ratio_warning(void **state)
{
    struct field_errors e = FIELD_ERRORS_INIT;
    cJSON *o = J("{" EQP_HDR ",\"spec\":{\"quotaName\":\"q\",\"nodeSelector\":{},"
                 "\"resourceRatio\":\"1.5\"}}");
    (void)state;

    assert_int_equal(api_object_validate(o, 0, NULL, &e), 0);
    assert_int_equal(e.nwarn, 1);
    field_errors_release(&e);
    cJSON_Delete(o);
}

/* Validation returns only the errors it added; warnings are not counted. */
static void test_validate_counts(void **state)
{
    struct field_errors e = FIELD_ERRORS_INIT;
    const struct api_kind *k = (const struct api_kind *)1;
    cJSON *o = J("{" RES_HDR ",\"spec\":{\"foo\":1}}");
    (void)state;

    field_error_add(&e, FIELD_INVALID, "x", NULL, "earlier");
    assert_int_equal(api_object_validate(o, 0, &k, &e), 2); /* template, owners */
    assert_ptr_equal(k, kind("scheduling.koordinator.sh/v1alpha1", "Reservation"));
    assert_int_equal(e.nwarn, 1);
    assert_int_equal(field_errors_count(&e), 3);
    field_errors_release(&e);
    cJSON_Delete(o);

    o = J("[1]");
    assert_int_equal(api_object_validate(o, 0, &k, &e), 1);
    assert_null(k);
    field_errors_release(&e);
    cJSON_Delete(o);
}

/* ---- defaults ---- */

static void run_object_default(const char *in, unsigned flags, const char *want, int line)
{
    struct field_errors e = FIELD_ERRORS_INIT;
    const struct api_kind *k = NULL;
    cJSON *o = J(in);

    (void)api_object_validate(o, 0, &k, &e);
    field_errors_release(&e);
    assert_non_null(k);
    assert_int_equal(api_object_default(k, o, flags), 0);
    assert_json_eq_at(o, want, line);
    cJSON_Delete(o);
}

static void test_defaults_reservation(void **state)
{
    (void)state;

    run_object_default("{" RES_HDR ",\"spec\":{\"template\":{}," OWNERS "},\"status\":{}}", 0,
                       "{" RES_HDR ",\"spec\":{\"template\":{}," OWNERS
                       ",\"ttl\":\"24h\",\"allocateOnce\":true},\"status\":{\"phase\":"
                       "\"Pending\"}}",
                       __LINE__);
    /* Values the user set are kept. */
    run_object_default("{" RES_HDR ",\"spec\":{\"template\":{}," OWNERS
                       ",\"ttl\":\"1h\",\"allocateOnce\":false},\"status\":{\"phase\":"
                       "\"Available\"}}",
                       0,
                       "{" RES_HDR ",\"spec\":{\"template\":{}," OWNERS
                       ",\"ttl\":\"1h\",\"allocateOnce\":false},\"status\":{\"phase\":"
                       "\"Available\"}}",
                       __LINE__);
}

/* nodeMemoryCollectPolicy usageWithoutPageCache is a controller default (5.1): API_D_CTRL only. */
static void test_defaults_nodemetric(void **state)
{
    (void)state;

    run_object_default("{" NM_HDR ",\"spec\":{\"metricCollectPolicy\":{"
                       "\"aggregateDurationSeconds\":120}}}",
                       0,
                       "{" NM_HDR ",\"spec\":{\"metricCollectPolicy\":{"
                       "\"aggregateDurationSeconds\":120}}}",
                       __LINE__);
    run_object_default("{" NM_HDR ",\"spec\":{\"metricCollectPolicy\":{"
                       "\"aggregateDurationSeconds\":120}}}",
                       API_D_CTRL,
                       "{" NM_HDR ",\"spec\":{\"metricCollectPolicy\":{"
                       "\"aggregateDurationSeconds\":120,\"reportIntervalSeconds\":60,"
                       "\"nodeAggregatePolicy\":{\"durations\":[\"5m0s\",\"10m0s\",\"30m0s\"]},"
                       "\"nodeMemoryCollectPolicy\":\"usageWithoutPageCache\"}}}",
                       __LINE__);
}

/* The node agent's view of a NodeSLO (6.3.6 and 6.7): every field left out takes its default,
 * every value the object sets is kept, a pointer 0 included. */
static void test_defaults_nodeslo(void **state)
{
    static const char user[] =
        "{\"resourceUsedThresholdWithBE\":{\"enable\":true,\"cpuSuppressThresholdPercent\":0},"
        "\"resourceQOSStrategy\":{\"beClass\":{\"memoryQOS\":{\"enable\":true,\"wmarkRatio\":"
        "90}},\"lsClass\":{\"networkQOS\":{\"enable\":true}}},\"systemStrategy\":"
        "{\"totalNetworkBandwidth\":\"10G\"},\"extensions\":{\"Object\":{\"x\":1}}}";
    static const char want_spec[] =
        "{\"resourceUsedThresholdWithBE\":{\"enable\":true,\"cpuSuppressThresholdPercent\":0,"
        "\"cpuSuppressPolicy\":\"cpuset\",\"memoryEvictThresholdPercent\":70,\"cpuEvictPolicy\":"
        "\"evictByRealLimit\"},\"resourceQOSStrategy\":{\"policies\":{\"cpuPolicy\":"
        "\"groupIdentity\",\"netQOSPolicy\":\"tc\"},\"lsrClass\":" LSR_DEFAULT ",\"lsClass\":"
        "{\"cpuQOS\":{\"enable\":false,\"groupIdentity\":2,\"schedIdle\":0,\"coreExpeller\":true},"
        "\"memoryQOS\":{\"enable\":false,\"minLimitPercent\":0,\"lowLimitPercent\":0,"
        "\"throttlingPercent\":0,\"wmarkRatio\":95,\"wmarkScalePermill\":20,\"wmarkMinAdj\":-25,"
        "\"priorityEnable\":0,\"priority\":0,\"oomKillGroup\":0},\"blkioQOS\":{\"enable\":false},"
        "\"resctrlQOS\":{\"enable\":false,\"catRangeStartPercent\":0,\"catRangeEndPercent\":100,"
        "\"mbaPercent\":100},\"networkQOS\":{\"enable\":true,\"ingressRequest\":0,"
        "\"ingressLimit\":100,\"egressRequest\":0,\"egressLimit\":100}},\"beClass\":"
        "{\"cpuQOS\":{\"enable\":false,\"groupIdentity\":-1,\"schedIdle\":0,\"coreExpeller\":"
        "false},\"memoryQOS\":{\"enable\":true,\"minLimitPercent\":0,\"lowLimitPercent\":0,"
        "\"throttlingPercent\":0,\"wmarkRatio\":90,\"wmarkScalePermill\":20,\"wmarkMinAdj\":50,"
        "\"priorityEnable\":0,\"priority\":0,\"oomKillGroup\":0},\"blkioQOS\":{\"enable\":false},"
        "\"resctrlQOS\":{\"enable\":false,\"catRangeStartPercent\":0,\"catRangeEndPercent\":30,"
        "\"mbaPercent\":100},\"networkQOS\":{\"enable\":false,\"ingressRequest\":0,"
        "\"ingressLimit\":0,\"egressRequest\":0,\"egressLimit\":0}},\"systemClass\":" SYS_DEFAULT
        ",\"cgroupRoot\":{\"blkioQOS\":{\"enable\":false}}},\"cpuBurstStrategy\":{\"policy\":"
        "\"none\",\"cpuBurstPercent\":1000,\"cfsQuotaBurstPercent\":300,"
        "\"cfsQuotaBurstPeriodSeconds\":-1,\"sharePoolThresholdPercent\":50},"
        "\"systemStrategy\":{\"totalNetworkBandwidth\":\"10G\"},\"extensions\":{\"Object\":"
        "{\"x\":1}}}";
    const struct api_kind *k = kind("slo.koordinator.sh/v1alpha1", "NodeSLO");
    cJSON *o, *w;
    (void)state;

    o = J("{" SLO_HDR "}");
    cJSON_AddItemToObject(o, "spec", J(user));
    assert_int_equal(api_object_default(k, o, API_D_CTRL), 0);
    w = J("{" SLO_HDR "}");
    cJSON_AddItemToObject(w, "spec", J(want_spec));
    if (!cJSON_Compare(o, w, true))
        fail_msg("got %s", cJSON_PrintUnformatted(o));
    cJSON_Delete(w);
    cJSON_Delete(o);

    /* No spec at all: the whole default spec. */
    o = J("{" SLO_HDR "}");
    assert_int_equal(api_object_default(k, o, API_D_CTRL), 0);
    assert_json_eq(cJSON_GetObjectItemCaseSensitive(o, "spec"), nodeslo_full_default);
    assert_json_eq(api_nodeslo_default_spec(), nodeslo_full_default);
    cJSON_Delete(o);

    /* Without API_D_CTRL only CRD defaults apply. */
    o = J("{" SLO_HDR "}");
    cJSON_AddItemToObject(o, "spec", J(user));
    assert_int_equal(api_object_default(k, o, 0), 0);
    w = J("{" SLO_HDR "}");
    cJSON_AddItemToObject(
        w, "spec",
        J("{\"resourceUsedThresholdWithBE\":{\"enable\":true,\"cpuSuppressThresholdPercent\":0},"
          "\"resourceQOSStrategy\":{\"beClass\":{\"memoryQOS\":{\"enable\":true,\"wmarkRatio\":"
          "90}},\"lsClass\":{\"networkQOS\":{\"enable\":true,\"ingressRequest\":0,"
          "\"ingressLimit\":100,\"egressRequest\":0,\"egressLimit\":100}}},\"systemStrategy\":"
          "{\"totalNetworkBandwidth\":\"10G\"},\"extensions\":{\"Object\":{\"x\":1}}}"));
    assert_true(cJSON_Compare(o, w, true));
    cJSON_Delete(w);
    cJSON_Delete(o);
}

/* A Pod gets kube's PodSpec and Container defaults; imagePullPolicy follows the image's tag
 * (Always for :latest or none, IfNotPresent for another tag or a digest), and what the client
 * set stays. */
static void test_defaults_pod(void **state)
{
    const struct api_kind *k = api_kind_find("v1", "Pod");
    cJSON *o = J("{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":"
                 "{\"restartPolicy\":\"Never\",\"initContainers\":[{\"name\":\"i\",\"image\":"
                 "\"reg:5000/busybox\"}],\"containers\":["
                 "{\"name\":\"a\",\"image\":\"nginx\"},"
                 "{\"name\":\"b\",\"image\":\"nginx:latest\"},"
                 "{\"name\":\"c\",\"image\":\"reg:5000/nginx:1.25\"},"
                 "{\"name\":\"d\",\"image\":\"nginx@sha256:0123\"},"
                 "{\"name\":\"e\",\"image\":\"nginx:1.25\",\"imagePullPolicy\":\"Never\"}]}}");
    cJSON *spec, *c;
    const char *want[] = {"Always", "Always", "IfNotPresent", "IfNotPresent", "Never"};
    int i = 0;
    (void)state;

    assert_non_null(k);
    assert_int_equal(api_object_default(k, o, 0), 0);
    spec = cJSON_GetObjectItem(o, "spec");
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(spec, "containers"))
    {
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "imagePullPolicy")),
                            want[i++]);
        assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "terminationMessagePath")),
                            "/dev/termination-log");
        assert_string_equal(
            cJSON_GetStringValue(cJSON_GetObjectItem(c, "terminationMessagePolicy")), "File");
    }
    c = cJSON_GetArrayItem(cJSON_GetObjectItem(spec, "initContainers"), 0);
    assert_string_equal(cJSON_GetStringValue(cJSON_GetObjectItem(c, "imagePullPolicy")), "Always");
    cJSON_DeleteItemFromObject(spec, "containers");
    cJSON_DeleteItemFromObject(spec, "initContainers");
    assert_json_eq(spec, "{\"restartPolicy\":\"Never\",\"terminationGracePeriodSeconds\":30,"
                         "\"dnsPolicy\":\"ClusterFirst\",\"securityContext\":{},\"schedulerName\":"
                         "\"default-scheduler\",\"enableServiceLinks\":true}");
    cJSON_Delete(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_find),           cmocka_unit_test(test_kinds_round_trip),
        cmocka_unit_test(test_samples_valid),       cmocka_unit_test(test_rules),
        cmocka_unit_test(test_rules_valid_side),    cmocka_unit_test(test_resource_ratio_warning),
        cmocka_unit_test(test_validate_counts),     cmocka_unit_test(test_defaults_reservation),
        cmocka_unit_test(test_defaults_nodemetric), cmocka_unit_test(test_defaults_nodeslo),
        cmocka_unit_test(test_defaults_pod),
    };

    codec_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
