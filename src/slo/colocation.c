/*
 * The ColocationStrategy description (colocation-config, reference/api-types.md Appendix A).
 * `.wh` ranges are the ConfigMap webhook's struct tags (manager-behaviour.md 1.7).
 */
#include "api/schema.h"
#include "slo/slo.h"

static const struct api_prop aggregate_policy_props[] = {
    {"durations", API_ARR(&api_duration)},
    {NULL},
};

#define WH_MIN(lo) API_I64(API_NONE, API_MIN(lo))
#define WH_PCT     API_I64(API_NONE, API_RANGE(0, 100))

static const struct api_prop colocation_props[] = {
    {"enable", &api_bool},
    {"metricAggregateDurationSeconds", WH_MIN(1)},
    {"metricReportIntervalSeconds", WH_MIN(1)},
    {"metricAggregatePolicy", API_OBJ(aggregate_policy_props)},
    {"metricMemoryCollectPolicy",
     API_ENUM_SOFT("usageWithoutPageCache", "usageWithHotPageCache", "usageWithPageCache")},
    {"cpuReclaimThresholdPercent", WH_MIN(0)},
    {"cpuCalculatePolicy", API_ENUM_SOFT("usage", "maxUsageRequest")},
    {"memoryReclaimThresholdPercent", WH_MIN(0)},
    {"memoryCalculatePolicy", API_ENUM_SOFT("usage", "request", "maxUsageRequest")},
    {"degradeTimeMinutes", WH_MIN(1)},
    {"updateTimeThresholdSeconds", WH_MIN(1)},
    {"resourceDiffThreshold",
     &(const struct api_schema){.type = API_NUMBER, .wh = API_GT_LE(0, 1)}},
    {"midReclaimMode", API_ENUM_SOFT("static")},
    {"midCPUThresholdPercent", WH_PCT},
    {"midMemoryThresholdPercent", WH_PCT},
    {"midUnallocatedPercent", WH_PCT},
    {"midStaticCPUReservedPercent", WH_PCT},
    {"midStaticMemoryReservedPercent", WH_PCT},
    {"batchCPUThresholdPercent", WH_MIN(0)},
    {"batchMemoryThresholdPercent", WH_MIN(0)},
    {"extensions", API_MAPOF(&api_any)},
    {NULL},
};

const struct api_schema slo_colocation_strategy = {.type = API_OBJECT, .props = colocation_props};
