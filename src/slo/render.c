/*
 * NodeSLO rendering (manager-behaviour.md 2.3) and a node's colocation strategy (1.6).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/quantity.h"
#include "base/base.h"
#include "codec/codec.h"
#include "slo/slo-int.h"
#include "slo/slo.h"

/* metadata.<map>[key] of the node when it is a string, else NULL. */
static const char *meta_string(const cJSON *node, const char *map, const char *key)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(node, "metadata"), map),
        key);
    return cJSON_IsString(a) ? a->valuestring : NULL;
}

static int add_dup(cJSON *o, const char *key, const cJSON *v)
{
    cJSON *d = cJSON_Duplicate(v, true);
    if (!d || !cJSON_AddItemToObject(o, key, d)) {
        cJSON_Delete(d);
        return -ENOMEM;
    }
    return 0;
}

int slo_render_spec(const struct slo_config *cfg, const cJSON *node, const cJSON *old_spec,
                    cJSON **ret)
{
    cJSON *spec = cJSON_CreateObject(), *sys = NULL, *ext;
    const char *bw = meta_string(node, "annotations", "node.koordinator.sh/network-bandwidth");
    const cJSON *apps, *old_ext;
    int r = -ENOMEM;

    if (!spec)
        return -ENOMEM;
    if (add_dup(spec, "resourceUsedThresholdWithBE", slo__select(&cfg->keys[SLO_THRESHOLD], node)) <
            0 ||
        add_dup(spec, "resourceQOSStrategy", slo__select(&cfg->keys[SLO_QOS], node)) < 0 ||
        add_dup(spec, "cpuBurstStrategy", slo__select(&cfg->keys[SLO_CPU_BURST], node)) < 0)
        goto out;
    sys = cJSON_Duplicate(slo__select(&cfg->keys[SLO_SYSTEM], node), true);
    if (!sys)
        goto out;
    if (bw) {
        struct quantity q;
        char buf[QUANTITY_STR_MAX];
        if (quantity_parse(bw, &q) < 0) {
            /* Upstream quirk kept: an unparsable annotation drops systemStrategy entirely. */
            cJSON_Delete(sys);
            sys = NULL;
        } else {
            (void)quantity_format(&q, buf);
            cJSON_DeleteItemFromObjectCaseSensitive(sys, "totalNetworkBandwidth");
            if (!cJSON_AddStringToObject(sys, "totalNetworkBandwidth", buf))
                goto out;
        }
    }
    if (sys && !cJSON_AddItemToObject(spec, "systemStrategy", sys))
        goto out;
    sys = NULL;
    /* Extensions: nothing is registered upstream; keep what the current object has. */
    old_ext = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(old_spec, "extensions"), "Object");
    ext = cJSON_AddObjectToObject(spec, "extensions");
    if (!ext)
        goto out;
    if (cJSON_IsObject(old_ext) ? add_dup(ext, "Object", old_ext) < 0
                                : !cJSON_AddObjectToObject(ext, "Object"))
        goto out;
    apps = slo__select(&cfg->host_apps, node);
    if (cJSON_GetArraySize(apps) > 0 && add_dup(spec, "hostApplications", apps) < 0)
        goto out;
    r = api_encode(&api_nodeslo_spec, spec, ret);
out:
    cJSON_Delete(sys);
    cJSON_Delete(spec);
    return r;
}

int slo_render_nodeslo(const struct slo_config *cfg, const cJSON *node, cJSON **ret)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(node, "metadata"), "name");
    cJSON *obj, *meta, *spec = NULL;
    int r;

    r = slo_render_spec(cfg, node, NULL, &spec);
    if (r < 0)
        return r;
    obj = cJSON_CreateObject();
    if (!obj || !cJSON_AddStringToObject(obj, "apiVersion", "slo.koordinator.sh/v1alpha1") ||
        !cJSON_AddStringToObject(obj, "kind", "NodeSLO") ||
        !(meta = cJSON_AddObjectToObject(obj, "metadata")) ||
        !cJSON_AddStringToObject(meta, "name", cJSON_IsString(name) ? name->valuestring : "") ||
        !cJSON_AddItemToObject(obj, "spec", spec)) {
        cJSON_Delete(spec);
        cJSON_Delete(obj);
        return -ENOMEM;
    }
    if (!cJSON_AddObjectToObject(obj, "status")) {
        cJSON_Delete(obj);
        return -ENOMEM;
    }
    *ret = obj;
    return 0;
}

/* Ratio labels: percent = int(ratio * 100), truncated; negative or unparsable ignored. */
static int apply_ratio_label(cJSON *s, const cJSON *node, const char *lbl, const char *field)
{
    const char *v = meta_string(node, "labels", lbl);
    double ratio;

    if (!v || parse_double(v, &ratio) < 0 || ratio < 0)
        return 0;
    cJSON_DeleteItemFromObjectCaseSensitive(s, field);
    return cJSON_AddNumberToObject(s, field, (double)(int64_t)(ratio * 100)) ? 0 : -ENOMEM;
}

int slo_node_colocation(const struct slo_config *cfg, const cJSON *node, cJSON **ret)
{
    cJSON *s = cJSON_Duplicate(slo__select(&cfg->colocation, node), true);
    const char *ann = meta_string(node, "annotations", "node.koordinator.sh/colocation-strategy");
    int r = 0;

    if (!s)
        return -ENOMEM;
    if (ann) {
        cJSON *ov = NULL;
        struct field_errors errs = FIELD_ERRORS_INIT;
        /* Unparsable JSON is ignored; values are not validated (as upstream). Running out of
         * memory is not "unparsable": json_parse() tells the two apart. */
        if (json_parse(ann, strlen(ann), NULL, &ov, NULL) == -ENOMEM)
            r = -ENOMEM;
        if (cJSON_IsObject(ov)) {
            api_validate(&slo_colocation_strategy, ov, "", API_V_TYPES, &errs);
            if (!field_errors_count(&errs))
                r = api_overlay(&slo_colocation_strategy, &s, ov);
        }
        field_errors_release(&errs);
        cJSON_Delete(ov);
    }
    if (r == 0)
        r = apply_ratio_label(s, node, "node.koordinator.sh/cpu-reclaim-ratio",
                              "cpuReclaimThresholdPercent");
    if (r == 0)
        r = apply_ratio_label(s, node, "node.koordinator.sh/memory-reclaim-ratio",
                              "memoryReclaimThresholdPercent");
    if (r == 0)
        r = apply_ratio_label(s, node, "node.koordinator.sh/mid-static-cpu-reserved-ratio",
                              "midStaticCPUReservedPercent");
    if (r == 0)
        r = apply_ratio_label(s, node, "node.koordinator.sh/mid-static-memory-reserved-ratio",
                              "midStaticMemoryReservedPercent");
    if (r < 0) {
        cJSON_Delete(s);
        return r;
    }
    *ret = s;
    return 0;
}

/* NodeMetricCollectPolicy defaults (nodemetric_controller.go); durations already canonical. */
static const char nodemetric_default_json[] =
    "{\"metricCollectPolicy\":{\"aggregateDurationSeconds\":300,\"reportIntervalSeconds\":60,"
    "\"nodeAggregatePolicy\":{\"durations\":[\"5m0s\",\"10m0s\",\"30m0s\"]},"
    "\"nodeMemoryCollectPolicy\":\"usageWithoutPageCache\"}}";

int slo_render_nodemetric_spec(const struct slo_config *cfg, const cJSON *node, cJSON **ret)
{
    /* ColocationStrategy field -> NodeMetricCollectPolicy field. */
    static const struct {
        const char *from, *to;
    } fields[] = {
        {"metricAggregateDurationSeconds", "aggregateDurationSeconds"},
        {"metricReportIntervalSeconds", "reportIntervalSeconds"},
        {"metricAggregatePolicy", "nodeAggregatePolicy"},
        {"metricMemoryCollectPolicy", "nodeMemoryCollectPolicy"},
    };
    const struct api_kind *k = api_kind_find("slo.koordinator.sh/v1alpha1", "NodeMetric");
    cJSON *s = NULL, *spec = NULL, *policy = NULL;
    int r;

    CHECK(k && k->spec);
    r = slo_node_colocation(cfg, node, &s);
    if (r < 0)
        return r;
    r = -ENOMEM;
    spec = cJSON_Parse(nodemetric_default_json);
    if (!spec)
        goto out;
    /* Disabled or invalid for this node: the defaults, whatever the ConfigMap says. */
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(s, "enable")) && slo_colocation_is_valid(s)) {
        policy = cJSON_CreateObject();
        if (!policy)
            goto out;
        for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, fields[i].from);
            if (v && !cJSON_IsNull(v) && add_dup(policy, fields[i].to, v) < 0)
                goto out;
        }
        cJSON_DeleteItemFromObjectCaseSensitive(spec, "metricCollectPolicy");
        if (!cJSON_AddItemToObject(spec, "metricCollectPolicy", policy))
            goto out;
        policy = NULL;
    }
    /* Go-client encoding: durations as Duration.String() prints them ("15m" -> "15m0s"). */
    r = api_encode(k->spec, spec, ret);
out:
    cJSON_Delete(policy);
    cJSON_Delete(spec);
    cJSON_Delete(s);
    return r;
}

bool slo_cluster_colocation_enabled(const struct slo_config *cfg)
{
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cfg->colocation.cluster, "enable"));
}
