/*
 * policy/v1 PodDisruptionBudget (pkg/apis/policy/validation, kubernetes 1.33). Its status is
 * the disruption controller's in a cluster; koord runs none, so koord apiserver computes what
 * an eviction needs from the pods when the eviction comes (apiserver/disruption.h).
 */
#include <string.h>

#include "api/api.h"
#include "api/workloads.h"
#include "base/base.h"

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, k) : NULL;
    return cJSON_IsNull(c) ? NULL : c;
}

/* ValidatePodDisruptionBudgetSpec. */
static void check_pdb_spec(const struct api_schema *s, const cJSON *spec, struct api_walk *w)
{
    const cJSON *min = get(spec, "minAvailable"), *max = get(spec, "maxUnavailable");
    (void)s;

    if (min && max)
        api_walk_error(w, NULL, FIELD_INVALID, NULL,
                       "minAvailable and maxUnavailable cannot be both set");
    api_check_int_or_percent(w, "minAvailable", min, true);
    api_check_int_or_percent(w, "maxUnavailable", max, true);
}

static const struct api_prop pdb_spec_props[] = {
    {"minAvailable", &api_int_or_string},
    {"selector", &api_label_selector},
    {"maxUnavailable", &api_int_or_string},
    {"unhealthyPodEvictionPolicy", API_ENUM("IfHealthyBudget", "AlwaysAllow")},
    {NULL},
};

static const struct api_schema time_map = {.type = API_MAP, .items = &api_time};

static const struct api_prop pdb_status_props[] = {
    {"observedGeneration", &api_int64, API_VAL},    {"disruptedPods", &time_map},
    {"disruptionsAllowed", &api_int32, API_ALWAYS}, {"currentHealthy", &api_int32, API_ALWAYS},
    {"desiredHealthy", &api_int32, API_ALWAYS},     {"expectedPods", &api_int32, API_ALWAYS},
    {"conditions", API_ARR(&api_condition)},        {NULL},
};

const struct api_kind api_kind_pod_disruption_budget = {
    .group = "policy",
    .version = "v1",
    .kind = "PodDisruptionBudget",
    .plural = "poddisruptionbudgets",
    .short_names = (const char *const[]){"pdb", NULL},
    .namespaced = true,
    .status_subresource = true,
    .spec = &(const struct api_schema){.type = API_OBJECT,
                                       .props = pdb_spec_props,
                                       .check = check_pdb_spec},
    .status = API_OBJ(pdb_status_props),
    .prepare_create = api_reset_status,
};
