/*
 * slo.koordinator.sh/v1alpha1: NodeSLO (the complete spec tree) and NodeMetric, written once as
 * field tables (reference/api-types.md sections 5 and 6). `.crd` ranges are the CRD schema's,
 * `.wh` ranges the slo-controller-config admission webhook's (manager-behaviour.md 1.7), which
 * are checked only in API_V_WEBHOOK mode. API_VAL marks Go value fields with omitempty, which
 * matters to the MergeCfg overlay: their zero value can never override.
 */
#include <string.h>

#include "api/api.h"
#include "api/quantity.h"
#include "api/schema.h"
#include "base/base.h"

#define PCT    API_I64(API_RANGE(0, 100), API_RANGE(0, 100))
#define PCT_WH API_I64(API_NONE, API_RANGE(0, 100))
#define NONNEG API_I64(API_MIN(0), API_MIN(0))

static const struct api_prop threshold_props[] = {
    {"enable", &api_bool},
    {"cpuSuppressThresholdPercent", PCT},
    {"cpuSuppressMinPercent", PCT},
    {"cpuSuppressPolicy", API_ENUM_SOFT("cpuset", "cfsQuota"), API_VAL},
    {"memoryEvictThresholdPercent", PCT},
    {"memoryEvictLowerPercent", PCT},
    {"memoryAllocatableEvictThresholdPercent", NONNEG},
    {"memoryAllocatableEvictLowerPercent", NONNEG},
    {"cpuEvictBESatisfactionUpperPercent", PCT_WH},
    {"cpuEvictBESatisfactionLowerPercent", PCT_WH},
    {"cpuEvictBEUsageThresholdPercent", PCT_WH},
    {"cpuEvictTimeWindowSeconds", API_I64(API_NONE, API_GT(0))},
    {"cpuEvictThresholdPercent", PCT},
    {"cpuEvictLowerPercent", PCT},
    {"cpuAllocatableEvictThresholdPercent", NONNEG},
    {"cpuAllocatableEvictLowerPercent", NONNEG},
    {"cpuEvictPolicy", API_ENUM_SOFT("evictByRealLimit", "evictByAllocatable"), API_VAL},
    {"evictEnabledPriorityThreshold", &api_int32},
    {"allocatableEvictPriorityThreshold", API_I32(API_NONE, API_RANGE(0, 7999))},
    {NULL},
};

static const struct api_pair threshold_pairs[] = {
    {"memoryEvictThresholdPercent", "memoryEvictLowerPercent"},
    {"memoryAllocatableEvictThresholdPercent", "memoryAllocatableEvictLowerPercent"},
    {"cpuEvictBESatisfactionUpperPercent", "cpuEvictBESatisfactionLowerPercent"},
    {"cpuEvictThresholdPercent", "cpuEvictLowerPercent"},
    {"cpuAllocatableEvictThresholdPercent", "cpuAllocatableEvictLowerPercent"},
    {NULL, NULL},
};

/* Rules the consumers (koordlet evictors) enforce, reported on the object itself. */
static void check_threshold(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(v, "memoryEvictThresholdPercent");
    const cJSON *l = cJSON_GetObjectItemCaseSensitive(v, "memoryEvictLowerPercent");
    (void)s;

    if (cJSON_IsNumber(t) && cJSON_IsNumber(l) && l->valuedouble >= t->valuedouble &&
        !(w->flags & API_V_WEBHOOK))
        api_walk_error(w, "memoryEvictLowerPercent", FIELD_INVALID, l,
                       "must be less than memoryEvictThresholdPercent (%g)", t->valuedouble);
    t = cJSON_GetObjectItemCaseSensitive(v, "cpuEvictThresholdPercent");
    l = cJSON_GetObjectItemCaseSensitive(v, "cpuEvictLowerPercent");
    if (cJSON_IsNumber(t) && cJSON_IsNumber(l) && l->valuedouble >= t->valuedouble &&
        !(w->flags & API_V_WEBHOOK))
        api_walk_error(w, "cpuEvictLowerPercent", FIELD_INVALID, l,
                       "must be less than cpuEvictThresholdPercent (%g)", t->valuedouble);
}

const struct api_schema api_resource_threshold_strategy = {
    .type = API_OBJECT,
    .props = threshold_props,
    .wh_pairs = threshold_pairs,
    .check = check_threshold,
    .desc = "BE suppression and eviction thresholds.",
};

static const struct api_prop cpu_qos_props[] = {
    {"enable", &api_bool},
    {"groupIdentity", API_I64(API_NONE, API_RANGE(-1, 2))},
    {"schedIdle", API_I64(API_NONE, API_RANGE(0, 1))},
    {"coreExpeller", &api_bool},
    {NULL},
};

static const struct api_prop memory_qos_props[] = {
    {"enable", &api_bool},
    {"minLimitPercent", API_I64(API_MIN(0), API_RANGE(0, 100))},
    {"lowLimitPercent", API_I64(API_MIN(0), API_RANGE(0, 100))},
    {"throttlingPercent", API_I64(API_MIN(0), API_RANGE(0, 100))},
    {"wmarkRatio", PCT},
    {"wmarkScalePermill", API_I64(API_RANGE(1, 1000), API_RANGE(1, 1000))},
    {"wmarkMinAdj", API_I64(API_RANGE(-25, 50), API_RANGE(-25, 50))},
    {"priorityEnable", API_I64(API_NONE, API_RANGE(0, 1))},
    {"priority", API_I64(API_NONE, API_RANGE(0, 12))},
    {"oomKillGroup", API_I64(API_NONE, API_RANGE(0, 1))},
    {"pageCacheEnable", &api_bool},
    {"pageCacheLimitPercent", PCT},
    {"pageCacheLimitSize", &api_int64},
    {"pageCacheReclaimSync", &api_bool},
    {NULL},
};

#define MIN1 API_I64(API_MIN(1), API_MIN(1))

static const struct api_prop io_cfg_props[] = {
    {"readIOPS", NONNEG},
    {"writeIOPS", NONNEG},
    {"readBPS", NONNEG},
    {"writeBPS", NONNEG},
    {"ioWeightPercent", API_I64(API_RANGE(1, 100), API_RANGE(1, 100))},
    {"readLatency", &api_int64},
    {"writeLatency", &api_int64},
    {"readLatencyPercent", PCT},
    {"writeLatencyPercent", PCT},
    {"enableUserModel", &api_bool},
    {"modelReadBPS", MIN1},
    {"modelWriteBPS", MIN1},
    {"modelReadSeqIOPS", MIN1},
    {"modelWriteSeqIOPS", MIN1},
    {"modelReadRandIOPS", MIN1},
    {"modelWriteRandIOPS", MIN1},
    {NULL},
};

static const struct api_prop block_props[] = {
    {"name", &api_string, API_VAL},
    {"type", API_ENUM_SOFT("device", "volumegroup", "podvolume"), API_VAL},
    {"ioCfg", API_OBJ(io_cfg_props), API_ALWAYS},
    {NULL},
};

static const struct api_prop blkio_qos_props[] = {
    {"enable", &api_bool},
    {"blocks", API_ARR(API_OBJ(block_props))},
    {NULL},
};

static const struct api_prop resctrl_qos_props[] = {
    {"enable", &api_bool},
    {"catRangeStartPercent", PCT},
    {"catRangeEndPercent", PCT},
    {"mbaPercent", PCT},
    {NULL},
};

static const struct api_pair resctrl_pairs[] = {
    {"catRangeEndPercent", "catRangeStartPercent"},
    {NULL, NULL},
};

/* Webhook: each bandwidth is an int percentage in [0,100] or a quantity string. */
static void check_network_qos(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    static const char *const keys[] = {"ingressRequest", "ingressLimit", "egressRequest",
                                       "egressLimit"};
    (void)s;

    if (!(w->flags & API_V_WEBHOOK))
        return;
    for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(v, keys[i]);
        struct quantity q;
        if (cJSON_IsNumber(c) && (c->valuedouble < 0 || c->valuedouble > 100))
            api_walk_error(w, keys[i], FIELD_INVALID, c, "must be in [0, 100] when an integer");
        else if (cJSON_IsString(c) && quantity_parse(c->valuestring, &q) < 0)
            api_walk_error(w, keys[i], FIELD_INVALID, c, "must be a quantity when a string");
    }
}

static const struct api_prop network_qos_props[] = {
    {"enable", &api_bool},
    {"ingressRequest", &api_int_or_string, 0, "0"},
    {"ingressLimit", &api_int_or_string, 0, "100"},
    {"egressRequest", &api_int_or_string, 0, "0"},
    {"egressLimit", &api_int_or_string, 0, "100"},
    {NULL},
};

static const struct api_prop resource_qos_props[] = {
    {"cpuQOS", API_OBJ(cpu_qos_props)},
    {"memoryQOS", API_OBJ(memory_qos_props)},
    {"blkioQOS", API_OBJ(blkio_qos_props)},
    {"resctrlQOS", &(const struct api_schema){.type = API_OBJECT,
                                              .props = resctrl_qos_props,
                                              .wh_pairs = resctrl_pairs}},
    {"networkQOS", &(const struct api_schema){.type = API_OBJECT,
                                              .props = network_qos_props,
                                              .check = check_network_qos}},
    {NULL},
};

static const struct api_schema resource_qos = {.type = API_OBJECT, .props = resource_qos_props};

static const struct api_prop qos_policies_props[] = {
    {"cpuPolicy", API_ENUM_SOFT("groupIdentity", "coreSched")},
    {"netQOSPolicy", API_ENUM_SOFT("tc", "terway-qos")},
    {NULL},
};

static const struct api_prop resource_qos_strategy_props[] = {
    {"policies", API_OBJ(qos_policies_props)},
    {"lsrClass", &resource_qos},
    {"lsClass", &resource_qos},
    {"beClass", &resource_qos},
    {"systemClass", &resource_qos},
    {"cgroupRoot", &resource_qos},
    {NULL},
};

const struct api_schema api_resource_qos_strategy = {
    .type = API_OBJECT,
    .props = resource_qos_strategy_props,
    .desc = "Per-QoS-class cgroup, resctrl, blkio and network QoS settings.",
};

static const struct api_prop cpu_burst_props[] = {
    {"policy", API_ENUM_SOFT("none", "cpuBurstOnly", "cfsQuotaBurstOnly", "auto"), API_VAL},
    {"cpuBurstPercent", API_I64(API_RANGE(0, 10000), API_RANGE(1, 10000))},
    {"cfsQuotaBurstPercent", API_I64(API_NONE, API_MIN(100))},
    {"cfsQuotaBurstPeriodSeconds", API_I64(API_NONE, API_MIN(-1))},
    {"sharePoolThresholdPercent", PCT_WH},
    {NULL},
};

const struct api_schema api_cpu_burst_strategy = {
    .type = API_OBJECT, .props = cpu_burst_props, .desc = "CPU burst policy."};

static void check_nonneg_quantity(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    struct quantity q;
    (void)s;

    if ((cJSON_IsString(v) && quantity_parse(v->valuestring, &q) == 0 && quantity_sign(&q) < 0) ||
        (cJSON_IsNumber(v) && v->valuedouble < 0))
        api_walk_error(w, NULL, FIELD_INVALID, v, "must be greater than or equal to 0");
}

static const struct api_prop system_props[] = {
    {"minFreeKbytesFactor", API_I64(API_NONE, API_GT(0))},
    {"watermarkScaleFactor", API_I64(API_NONE, API_GT_LE(0, 400))},
    {"memcgReapBackGround", API_I64(API_NONE, API_RANGE(0, 1))},
    {"schedGroupIdentityEnabled", &api_int64},
    {"schedIdleSaverWmark", &api_int64},
    {"schedFeatures", API_MAPOF(&api_bool)},
    {"pageCacheLimitEnabled", API_I64(API_NONE, API_RANGE(0, 1))},
    {"totalNetworkBandwidth",
     &(const struct api_schema){.type = API_QUANTITY, .check = check_nonneg_quantity}, API_ALWAYS},
    {NULL},
};

const struct api_schema api_system_strategy = {
    .type = API_OBJECT, .props = system_props, .desc = "Node-global kernel settings."};

static const struct api_prop cgroup_path_props[] = {
    {"base", API_ENUM_SOFT("CgroupRoot", "Kubepods", "KubepodsBurstable", "KubepodsBesteffort"),
     API_VAL},
    {"parentDir", &api_string, API_VAL},
    {"relativePath", &api_string, API_VAL},
    {NULL},
};

#define PRIORITY_CLASS API_ENUM_SOFT("koord-prod", "koord-mid", "koord-batch", "koord-free")
#define QOS_CLASS      API_ENUM_SOFT("LSE", "LSR", "LS", "BE", "SYSTEM")

static const struct api_prop host_app_props[] = {
    {"name", &api_string, API_VAL},
    {"priority", PRIORITY_CLASS, API_VAL},
    {"qos", QOS_CLASS, API_VAL},
    {"cgroupPath", API_OBJ(cgroup_path_props)},
    {"strategy", API_OBJ(((const struct api_prop[]){{NULL}}))},
    {NULL},
};

const struct api_schema api_host_application_spec = {.type = API_OBJECT, .props = host_app_props};

static const struct api_prop extensions_props[] = {
    {"Object", API_MAPOF(&api_any), API_ALWAYS},
    {NULL},
};

const struct api_schema api_extensions_map = {
    .type = API_OBJECT,
    .props = extensions_props,
    .flags = API_S_PRESERVE,
    .desc = "Third-party strategies, encoded as {\"Object\": {...}} as upstream's Go types do.",
};

static const struct api_prop nodeslo_spec_props[] = {
    {"resourceUsedThresholdWithBE", &api_resource_threshold_strategy},
    {"resourceQOSStrategy", &api_resource_qos_strategy},
    {"cpuBurstStrategy", &api_cpu_burst_strategy},
    {"systemStrategy", &api_system_strategy},
    {"extensions", &api_extensions_map},
    {"hostApplications", API_ARR(&api_host_application_spec)},
    {NULL},
};

const struct api_schema api_nodeslo_spec = {.type = API_OBJECT, .props = nodeslo_spec_props};

/* DefaultNodeSLOSpecConfig plus DefaultResourceQOSStrategy: what the node agent assumes for
 * every field a NodeSLO leaves out (reference/api-types.md 6.3.6 and 6.7). */
static const char nodeslo_default_spec_json[] =
    "{\"resourceUsedThresholdWithBE\":{\"enable\":false,\"cpuSuppressThresholdPercent\":65,"
    "\"cpuSuppressPolicy\":\"cpuset\",\"memoryEvictThresholdPercent\":70,"
    "\"cpuEvictPolicy\":\"evictByRealLimit\"},"
    "\"resourceQOSStrategy\":{\"policies\":{\"cpuPolicy\":\"groupIdentity\",\"netQOSPolicy\":"
    "\"tc\"},"
#define CLASS(gi, ce, wr, wsp, wma, cat)                                                           \
    "{\"cpuQOS\":{\"enable\":false,\"groupIdentity\":" gi ",\"schedIdle\":0,\"coreExpeller\":" ce  \
    "},\"memoryQOS\":{\"enable\":false,\"minLimitPercent\":0,\"lowLimitPercent\":0,"               \
    "\"throttlingPercent\":0,\"wmarkRatio\":" wr ",\"wmarkScalePermill\":" wsp                     \
    ",\"wmarkMinAdj\":" wma ",\"priorityEnable\":0,\"priority\":0,\"oomKillGroup\":0},"            \
    "\"blkioQOS\":{\"enable\":false},\"resctrlQOS\":{\"enable\":false,\"catRangeStartPercent\":0," \
    "\"catRangeEndPercent\":" cat ",\"mbaPercent\":100},\"networkQOS\":{\"enable\":false,"         \
    "\"ingressRequest\":0,\"ingressLimit\":0,\"egressRequest\":0,\"egressLimit\":0}}"
    "\"lsrClass\":" CLASS(
        "2", "true", "95", "20", "-25",
        "100") ","
               "\"lsClass\":" CLASS(
                   "2", "true", "95", "20", "-25",
                   "100") ","
                          "\"beClass\":" CLASS(
                              "-1", "false", "95", "20", "50",
                              "30") ","
                                    "\"systemClass\":" CLASS(
                                        "0", "false", "0", "50", "0",
                                        "100") ","
#undef CLASS
                                               "\"cgroupRoot\":{\"blkioQOS\":{\"enable\":false}}},"
                                               "\"cpuBurstStrategy\":{\"policy\":\"none\","
                                               "\"cpuBurstPercent\":1000,"
                                               "\"cfsQuotaBurstPercent\":300,"
                                               "\"cfsQuotaBurstPeriodSeconds\":-1,"
                                               "\"sharePoolThresholdPercent\":50},"
                                               "\"systemStrategy\":{\"totalNetworkBandwidth\":"
                                               "\"0\"},"
                                               "\"extensions\":{\"Object\":{}}}";

const cJSON *api_nodeslo_default_spec(void)
{
    static cJSON *spec;
    static int once;

    /* Built on first use and kept for the process lifetime (a constant). */
    if (!once) {
        spec = cJSON_Parse(nodeslo_default_spec_json);
        CHECK(spec);
        once = 1;
    }
    return spec;
}

/* ---- NodeMetric ---- */

static const struct api_prop topology_props[] = {
    {"socketID", &api_int32, API_REQ | API_ALWAYS},
    {"nodeID", &api_int32, API_REQ | API_ALWAYS},
    {"pcieID", &api_string, API_REQ | API_ALWAYS},
    {"busID", &api_string, API_VAL},
    {NULL},
};

static const struct api_prop vf_props[] = {
    {"minor", &api_int32, API_REQ | API_ALWAYS},
    {"busID", &api_string, API_VAL},
    {NULL},
};

static const struct api_prop vf_group_props[] = {
    {"labels", &api_string_map},
    {"vfs", API_ARR(API_OBJ(vf_props))},
    {NULL},
};

static const struct api_prop device_info_props[] = {
    {"type", API_ENUM_SOFT("gpu", "fpga", "rdma"), API_VAL},
    {"labels", &api_string_map},
    {"id", &api_string, API_VAL},
    {"minor", &api_int32},
    {"moduleID", &api_int32},
    {"health", &api_bool, API_REQ | API_ALWAYS, "false"},
    {"resources", &api_resource_list},
    {"topology", API_OBJ(topology_props)},
    {"vfGroups", API_ARR(API_OBJ(vf_group_props))},
    {"conditions", API_ARR(&api_condition)},
    {NULL},
};

static const struct api_prop resource_map_props[] = {
    {"resources", &api_resource_list},
    {"devices", API_ARR(API_OBJ(device_info_props))},
    {NULL},
};

static const struct api_schema resource_map = {.type = API_OBJECT, .props = resource_map_props};

static const struct api_prop aggregated_usage_props[] = {
    /* keys are AggregationType; upstream's CRD leaves them unchecked */
    {"usage", &(const struct api_schema){.type = API_MAP,
                                         .items = &resource_map,
                                         .enums = (const char *const[]){"avg", "p50", "p90", "p95",
                                                                        "p99", NULL},
                                         .flags = API_S_NOENUMCRD}},
    {"duration", &api_duration, API_ALWAYS},
    {NULL},
};

static const struct api_schema aggregated_usage = {.type = API_OBJECT,
                                                   .props = aggregated_usage_props};

static const struct api_prop numa_usage_props[] = {
    {"numaNodeID", &api_int32, API_REQ | API_ALWAYS},
    {"nodeUsage", &resource_map},
    {"systemUsage", &resource_map},
    {NULL},
};

static const struct api_prop node_metric_info_props[] = {
    {"nodeUsage", &resource_map},
    {"aggregatedNodeUsages", API_ARR(&aggregated_usage)},
    {"systemUsage", &resource_map},
    {"aggregatedSystemUsages", API_ARR(&aggregated_usage)},
    {"numaUsages", API_ARR(API_OBJ(numa_usage_props))},
    {NULL},
};

static const struct api_prop pod_metric_props[] = {
    {"namespace", &api_string, API_VAL},
    {"name", &api_string, API_VAL},
    {"podUsage", &resource_map, API_ALWAYS},
    {"priority", PRIORITY_CLASS, API_VAL},
    {"qos", QOS_CLASS, API_VAL},
    {"extensions", &api_extensions_map},
    {NULL},
};

static const struct api_prop host_app_metric_props[] = {
    {"name", &api_string, API_VAL},
    {"usage", &resource_map, API_ALWAYS},
    {"priority", PRIORITY_CLASS, API_VAL},
    {"qos", QOS_CLASS, API_VAL},
    {NULL},
};

static const struct api_prop reclaimable_props[] = {
    {"resource", &resource_map, API_ALWAYS},
    {NULL},
};

static const struct api_prop nodemetric_status_props[] = {
    {"updateTime", &api_time},
    {"nodeMetric", API_OBJ(node_metric_info_props)},
    {"podsMetric", API_ARR(API_OBJ(pod_metric_props))},
    {"hostApplicationMetric", API_ARR(API_OBJ(host_app_metric_props))},
    {"prodReclaimableMetric", API_OBJ(reclaimable_props)},
    {"prodPeakMetric", API_OBJ(reclaimable_props)},
    {NULL},
};

static const struct api_prop aggregate_policy_props[] = {
    {"durations", API_ARR(&api_duration)},
    {NULL},
};

static const struct api_prop collect_policy_props[] = {
    {"aggregateDurationSeconds", API_I64(API_NONE, API_MIN(1)), API_CTRL, "300"},
    {"reportIntervalSeconds", API_I64(API_NONE, API_MIN(1)), API_CTRL, "60"},
    {"nodeAggregatePolicy", API_OBJ(aggregate_policy_props), API_CTRL,
     "{\"durations\":[\"5m0s\",\"10m0s\",\"30m0s\"]}"},
    {"nodeMemoryCollectPolicy",
     API_ENUM("usageWithHotPageCache", "usageWithoutPageCache", "usageWithPageCache"), API_CTRL,
     "\"usageWithoutPageCache\""},
    {NULL},
};

static const struct api_prop nodemetric_spec_props[] = {
    {"metricCollectPolicy", API_OBJ(collect_policy_props), API_CTRL, "{}"},
    {NULL},
};

const struct api_schema api_nodemetric_spec = {.type = API_OBJECT, .props = nodemetric_spec_props};
const struct api_schema api_nodemetric_status = {.type = API_OBJECT,
                                                 .props = nodemetric_status_props};
const struct api_schema api_nodeslo_status = {.type = API_OBJECT,
                                              .props = (const struct api_prop[]){{NULL}}};
