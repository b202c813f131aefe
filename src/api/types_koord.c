/*
 * The other Koordinator kinds: Recommendation, ClusterColocationProfile, ElasticQuotaProfile,
 * ElasticQuota (scheduling.sigs.k8s.io) and Reservation, with the rules of seed 000 and
 * reference/api-types.md sections 1-4 and 8.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/quantity.h"
#include "api/schema.h"
#include "base/base.h"

extern const struct api_schema api_nodemetric_spec, api_nodemetric_status, api_nodeslo_status;

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNull(c) ? NULL : c;
}

/* ---- Recommendation ---- */

static const struct api_prop workload_props[] = {
    {"apiVersion", &api_string, API_VAL},
    {"kind", &api_string, API_REQ | API_ALWAYS},
    {"name", &api_string, API_REQ | API_ALWAYS},
    {NULL},
};

/* `type` selects which target form applies; the named form must be present (seed 000). */
static void check_recommendation_target(const struct api_schema *s, const cJSON *v,
                                        struct api_walk *w)
{
    const cJSON *type = get(v, "type");
    (void)s;

    if (!cJSON_IsString(type))
        return;
    if (!strcmp(type->valuestring, "workload") && !get(v, "workload"))
        api_walk_error(w, "workload", FIELD_REQUIRED, NULL,
                       "must be specified when type is \"workload\"");
    else if (!strcmp(type->valuestring, "podSelector") && !get(v, "podSelector"))
        api_walk_error(w, "podSelector", FIELD_REQUIRED, NULL,
                       "must be specified when type is \"podSelector\"");
}

static const struct api_prop recommendation_target_props[] = {
    {"type", API_ENUM_SOFT("workload", "podSelector"), API_REQ | API_ALWAYS},
    {"workload", API_OBJ(workload_props)},
    {"podSelector", &api_label_selector},
    {NULL},
};

static const struct api_prop recommendation_spec_props[] = {
    {"target",
     &(const struct api_schema){.type = API_OBJECT,
                                .props = recommendation_target_props,
                                .check = check_recommendation_target},
     API_REQ | API_ALWAYS},
    {NULL},
};

static const struct api_prop container_status_props[] = {
    {"containerName", &api_string, API_VAL},
    {"resources", &api_resource_list},
    {NULL},
};

static const struct api_prop pod_status_props[] = {
    {"containerStatuses", API_ARR(API_OBJ(container_status_props))},
    {NULL},
};

static const struct api_prop recommendation_status_props[] = {
    {"podStatus", API_OBJ(pod_status_props)},
    {"updateTime", &api_time},
    {"conditions", API_ARR(&api_condition)},
    {NULL},
};

/* ---- ClusterColocationProfile ---- */

/* An integer N means N percent; a string must be a percentage such as "30%". */
static void check_probability(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    int64_t pct = 0;
    (void)s;

    if (cJSON_IsString(v)) {
        size_t n = strlen(v->valuestring);
        char *num;
        int r;
        if (n < 2 || v->valuestring[n - 1] != '%') {
            api_walk_error(w, NULL, FIELD_INVALID, v,
                           "must be an integer or a percentage such as \"30%%\"");
            return;
        }
        num = xstrndup(v->valuestring, n - 1);
        r = parse_i64(num, &pct);
        free(num);
        if (r < 0) {
            api_walk_error(w, NULL, FIELD_INVALID, v,
                           "must be an integer or a percentage such as \"30%%\"");
            return;
        }
    } else if (cJSON_IsNumber(v)) {
        pct = (int64_t)v->valuedouble;
    }
    if (pct < 0 || pct > 100)
        api_walk_error(w, NULL, FIELD_INVALID, v, "must be between 0 and 100 percent");
}

static const struct api_prop ccp_spec_props[] = {
    {"namespaceSelector", &api_label_selector},
    {"selector", &api_label_selector},
    {"probability",
     &(const struct api_schema){.type = API_INT_OR_STRING, .check = check_probability}},
    /* Go writes "" when unset (no omitempty), which the CRD enum then rejects; koord omits it. */
    {"qosClass", API_ENUM("LSE", "LSR", "LS", "BE", "SYSTEM"), API_VAL},
    {"priorityClassName", &api_string, API_VAL},
    {"koordinatorPriority", &api_int32},
    {"labels", &api_string_map},
    {"annotations", &api_string_map},
    {"labelKeysMapping", &api_string_map},
    {"annotationKeysMapping", &api_string_map},
    {"labelSuffixes", &api_string_map},
    {"schedulerName", &api_string, API_VAL},
    {"patch", &(const struct api_schema){.type = API_ANY, .flags = API_S_PRESERVE}},
    {NULL},
};

static const struct api_schema empty_status = {.type = API_OBJECT,
                                               .props = (const struct api_prop[]){{NULL}}};

/* ---- ElasticQuotaProfile ---- */

/* resourceRatio must parse as a number; upstream silently uses 1.0 outside (0, 1]. */
static void check_resource_ratio(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    double r;
    (void)s;

    if (!cJSON_IsString(v))
        return;
    if (parse_double(v->valuestring, &r) < 0) {
        api_walk_error(w, NULL, FIELD_INVALID, v, "must be a decimal ratio such as \"0.9\"");
        return;
    }
    if (!(r > 0 && r <= 1)) {
        size_t len = w->path.len;
        field_error_add(w->errs, FIELD_WARNING, w->path.buf, NULL,
                        "%s: %s is outside (0, 1] and is treated as 1.0", w->path.buf,
                        v->valuestring);
        api_walk_pop(w, len);
    }
}

static const struct api_prop eqp_spec_props[] = {
    {"quotaName", &api_string, API_REQ | API_ALWAYS},
    {"quotaLabels", &api_string_map},
    {"resourceRatio",
     &(const struct api_schema){.type = API_STRING, .check = check_resource_ratio}},
    {"nodeSelector", &api_label_selector, API_REQ | API_ALWAYS},
    {NULL},
};

/* ---- ElasticQuota: the quota webhook's value rules ---- */

static void check_elastic_quota_spec(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    const cJSON *min = get(v, "min"), *max = get(v, "max"), *c;
    (void)s;

    for (int pass = 0; pass < 2; pass++) {
        const cJSON *list = pass ? max : min;
        cJSON_ArrayForEach(c, list)
        {
            struct quantity q;
            if (cJSON_IsString(c) && quantity_parse(c->valuestring, &q) == 0 &&
                quantity_sign(&q) < 0) {
                size_t len = api_walk_push(w, pass ? "max" : "min", 0);
                strbuf_addf(&w->path, "[%s]", c->string);
                api_walk_error(w, NULL, FIELD_INVALID, c, "must be greater than or equal to 0");
                api_walk_pop(w, len);
            }
        }
    }
    cJSON_ArrayForEach(c, min)
    {
        const cJSON *mx = cJSON_IsObject(max) ? get(max, c->string) : NULL;
        struct quantity a, b;
        size_t len;

        if (!cJSON_IsString(c) || quantity_parse(c->valuestring, &a) < 0)
            continue;
        len = api_walk_push(w, "min", 0);
        strbuf_addf(&w->path, "[%s]", c->string);
        if (!mx)
            api_walk_error(w, NULL, FIELD_INVALID, c, "every resource in min must also be in max");
        else if (cJSON_IsString(mx) && quantity_parse(mx->valuestring, &b) == 0 &&
                 quantity_cmp(&a, &b) > 0)
            api_walk_error(w, NULL, FIELD_INVALID, c, "min must be less than or equal to max (%s)",
                           mx->valuestring);
        api_walk_pop(w, len);
    }
}

static const struct api_prop eq_spec_props[] = {
    {"min", &api_resource_list},
    {"max", &api_resource_list},
    {NULL},
};

static const struct api_prop eq_status_props[] = {
    {"used", &api_resource_list},
    {NULL},
};

/* ---- Reservation ---- */

static const struct api_prop owner_controller_props[] = {
    {"apiVersion", &api_string, API_REQ | API_ALWAYS},
    {"blockOwnerDeletion", &api_bool},
    {"controller", &api_bool},
    {"kind", &api_string, API_REQ | API_ALWAYS},
    {"name", &api_string, API_REQ | API_ALWAYS},
    {"uid", &api_string, API_REQ | API_ALWAYS},
    {"namespace", &api_string, API_VAL},
    {NULL},
};

/* Each owner matches by object, controller or label selector: at least one of them. */
static void check_reservation_owner(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    (void)s;
    if (!get(v, "object") && !get(v, "controller") && !get(v, "labelSelector"))
        api_walk_error(w, NULL, FIELD_REQUIRED, NULL,
                       "one of object, controller or labelSelector must be specified");
}

static const struct api_prop reservation_owner_props[] = {
    {"object", &api_object_reference},
    {"controller", API_OBJ(owner_controller_props)},
    {"labelSelector", &api_label_selector},
    {NULL},
};

static const struct api_prop pre_allocation_policy_props[] = {
    {"mode", API_ENUM("Default", "Cluster"), 0, "\"Default\""},
    {"enableMultiple", &api_bool, 0, "false"},
    {NULL},
};

/* ttl and expires are mutually exclusive (seed 000); checked on the object as written, before
 * the CRD default fills ttl. The template must be an object (consumer: non-nil). */
static void check_reservation_spec(const struct api_schema *s, const cJSON *v, struct api_walk *w)
{
    const cJSON *ttl = get(v, "ttl"), *expires = get(v, "expires"), *tmpl = get(v, "template");
    (void)s;

    if (ttl && expires)
        api_walk_error(w, "ttl", FIELD_INVALID, ttl, "ttl and expires are mutually exclusive");
    if (tmpl && !cJSON_IsObject(tmpl))
        api_walk_error(w, "template", FIELD_INVALID, tmpl, "must be a pod template object");
}

static const struct api_prop reservation_spec_props[] = {
    {"template", &api_pod_template_spec, API_REQ},
    {"owners",
     &(const struct api_schema){.type = API_ARRAY,
                                .min_items = 1,
                                .items =
                                    &(const struct api_schema){.type = API_OBJECT,
                                                               .props = reservation_owner_props,
                                                               .min_props = 1,
                                                               .check = check_reservation_owner}},
     API_REQ | API_ALWAYS},
    {"ttl", &api_duration, 0, "\"24h\""},
    {"expires", &api_time},
    {"preAllocation", &api_bool, API_VAL},
    {"preAllocationPolicy", API_OBJ(pre_allocation_policy_props)},
    {"allocateOnce", &api_bool, 0, "true"},
    {"allocatePolicy", API_ENUM("Aligned", "Restricted"), API_VAL},
    {"unschedulable", &api_bool, API_VAL},
    {"taints", API_ARR(&api_taint)},
    {NULL},
};

static const struct api_prop reservation_condition_props[] = {
    {"type", API_ENUM_SOFT("Scheduled", "Ready"), API_VAL},
    {"status", API_ENUM_SOFT("True", "False", "Unknown"), API_VAL},
    {"reason", &api_string, API_VAL},
    {"message", &api_string, API_VAL},
    {"lastProbeTime", &(const struct api_schema){.type = API_TIME, .flags = API_S_NULLABLE},
     API_ALWAYS},
    {"lastTransitionTime", &(const struct api_schema){.type = API_TIME, .flags = API_S_NULLABLE},
     API_ALWAYS},
    {NULL},
};

static const struct api_prop reservation_status_props[] = {
    {"phase", API_ENUM_SOFT("Pending", "Available", "Waiting", "Succeeded", "Failed"), 0,
     "\"Pending\""},
    {"conditions", API_ARR(API_OBJ(reservation_condition_props))},
    {"currentOwners", API_ARR(&api_object_reference)},
    {"nodeName", &api_string, API_VAL},
    {"allocatable", &api_resource_list},
    {"allocated", &api_resource_list},
    {NULL},
};

/* ---- The registry entries of the Koordinator kinds ---- */

const struct api_kind api_kind_recommendation = {
    .group = "analysis.koordinator.sh",
    .version = "v1alpha1",
    .kind = "Recommendation",
    .plural = "recommendations",
    .short_names = (const char *const[]){"recom", NULL},
    .namespaced = true,
    .status_subresource = true,
    .crd = true,
    .columns =
        (const struct api_printer_column[]){{"Age", "date", ".metadata.creationTimestamp", NULL},
                                            {"Type", "string", ".spec.target.type", NULL},
                                            {"Kind", "string", ".spec.target.workload.kind", NULL},
                                            {"Name", "string", ".spec.target.workload.name", NULL},
                                            {"LastUpdateTime", "date", ".status.updateTime", NULL},
                                            {NULL}},
    .spec = API_OBJ(recommendation_spec_props),
    .status = API_OBJ(recommendation_status_props),
};

const struct api_kind api_kind_cluster_colocation_profile = {
    .group = "config.koordinator.sh",
    .version = "v1alpha1",
    .kind = "ClusterColocationProfile",
    .plural = "clustercolocationprofiles",
    .status_subresource = true,
    .crd = true,
    .spec = API_OBJ(ccp_spec_props),
    .status = &empty_status,
};

const struct api_kind api_kind_elastic_quota_profile = {
    .group = "quota.koordinator.sh",
    .version = "v1alpha1",
    .kind = "ElasticQuotaProfile",
    .plural = "elasticquotaprofiles",
    .short_names = (const char *const[]){"eqp", NULL},
    .namespaced = true,
    .crd = true,
    .spec = API_OBJ(eqp_spec_props),
    .status = &empty_status,
};

const struct api_kind api_kind_elastic_quota = {
    .group = "scheduling.sigs.k8s.io",
    .version = "v1alpha1",
    .kind = "ElasticQuota",
    .plural = "elasticquotas",
    .namespaced = true,
    .crd = true,
    .crd_annotation = "api-approved.kubernetes.io=https://github.com/kubernetes-sigs/"
                      "scheduler-plugins/pull/52",
    .spec = &(const struct api_schema){.type = API_OBJECT,
                                       .props = eq_spec_props,
                                       .check = check_elastic_quota_spec},
    .status = API_OBJ(eq_status_props),
};

const struct api_kind api_kind_reservation = {
    .group = "scheduling.koordinator.sh",
    .version = "v1alpha1",
    .kind = "Reservation",
    .plural = "reservations",
    .status_subresource = true,
    .crd = true,
    .columns =
        (const struct api_printer_column[]){
            {"Phase", "string", ".status.phase", "The phase of reservation"},
            {"Age", "date", ".metadata.creationTimestamp", NULL},
            {"Node", "string", ".status.nodeName", NULL},
            {"TTL", "string", ".spec.ttl", NULL},
            {"Expires", "string", ".spec.expires", NULL},
            {NULL}},
    .spec = &(const struct api_schema){.type = API_OBJECT,
                                       .props = reservation_spec_props,
                                       .check = check_reservation_spec},
    .status = API_OBJ(reservation_status_props),
};

const struct api_kind api_kind_node_metric = {
    .group = "slo.koordinator.sh",
    .version = "v1alpha1",
    .kind = "NodeMetric",
    .plural = "nodemetrics",
    .status_subresource = true,
    .crd = true,
    .spec = &api_nodemetric_spec,
    .status = &api_nodemetric_status,
};

/*
 * The same NodeMetric served from the leader manager's memory (DESIGN.md 3.1): a CRD
 * group-version and an APIService of the same name collide in kube-apiserver, and
 * slo.koordinator.sh/v1alpha1 also holds the NodeSLO CRD, hence its own group.
 */
const struct api_kind api_kind_metrics_node_metric = {
    .group = "metrics.koordinator.sh",
    .version = "v1alpha1",
    .kind = "NodeMetric",
    .plural = "nodemetrics",
    .status_subresource = true,
    .aggregated = true,
    .spec = &api_nodemetric_spec,
    .status = &api_nodemetric_status,
};

const struct api_kind api_kind_node_slo = {
    .group = "slo.koordinator.sh",
    .version = "v1alpha1",
    .kind = "NodeSLO",
    .plural = "nodeslos",
    .status_subresource = true,
    .crd = true,
    .spec = &api_nodeslo_spec,
    .status = &api_nodeslo_status,
};
