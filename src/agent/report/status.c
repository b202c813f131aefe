/* The NodeMetric status (status.h). */
#include "agent/report/status.h"

#include <stdlib.h>
#include <string.h>

#include "agent/metriccache/metriccache.h"
#include "api/duration.h"
#include "api/quantity.h"
#include "api/rfc3339.h"
#include "base/base.h"

/* int64(x) of Go for the values we convert: truncation toward zero, saturated. */
static int64_t go_int64(double x)
{
    if (x >= 9.2e18)
        return INT64_MAX;
    if (x <= -9.2e18)
        return INT64_MIN;
    return (int64_t)x;
}

/* {"resources": {"cpu": ..., "memory": ...}} from cores and bytes. */
static cJSON *resources(double cores, double bytes)
{
    cJSON *o = cJSON_CreateObject(), *r;
    struct quantity q;
    char buf[QUANTITY_STR_MAX];

    CHECK(o);
    CHECK(r = cJSON_AddObjectToObject(o, "resources"));
    quantity_from_milli(go_int64(cores * 1000), QUANTITY_DECIMAL_SI, &q);
    (void)quantity_format(&q, buf);
    CHECK(cJSON_AddStringToObject(r, "cpu", buf));
    quantity_from_int(go_int64(bytes), QUANTITY_BINARY_SI, &q);
    (void)quantity_format(&q, buf);
    CHECK(cJSON_AddStringToObject(r, "memory", buf));
    return o;
}

static enum mc_kind memory_kind(const struct report_policy *p, bool pod)
{
    if (p->memory == REPORT_MEMORY_WITH_PAGE_CACHE)
        return pod ? MC_POD_MEMORY_USAGE_WITH_PAGE_CACHE : MC_NODE_MEMORY_USAGE_WITH_PAGE_CACHE;
    return pod ? MC_POD_MEMORY_USAGE : MC_NODE_MEMORY_USAGE;
}

/* avg of one series over [start, end]; false when it has no point there. */
static bool avg_of(struct mc *mc, enum mc_kind kind, const char *id, int64_t start, int64_t end,
                   double *ret)
{
    struct mc_result r;

    if (mc_query(mc, &(struct mc_select){.kind = kind, .id = id}, start, end, NULL, &r) < 0)
        return false;
    *ret = r.avg;
    return true;
}

/* The usage object {"resources": ...} of cpu_kind/mem_kind averaged over the window, or NULL. */
static cJSON *usage(struct mc *mc, enum mc_kind cpu_kind, enum mc_kind mem_kind, const char *id,
                    int64_t start, int64_t end)
{
    double cpu, mem;

    if (!avg_of(mc, cpu_kind, id, start, end, &cpu) || !avg_of(mc, mem_kind, id, start, end, &mem))
        return NULL;
    return resources(cpu, mem);
}

/*
 * One aggregatedNodeUsages entry: {"usage": {"avg": ..., "p50": ...}, "duration": "5m0s"}, or
 * NULL when cold or empty.
 */
static cJSON *aggregated(struct mc *mc, enum mc_kind cpu_kind, enum mc_kind mem_kind,
                         int64_t now_ms, int64_t duration_ns, struct mc_scratch *cpu_s,
                         struct mc_scratch *mem_s)
{
    static const struct {
        const char *key;
        double p;
    } stats[] = {{"p50", 0.5}, {"p90", 0.9}, {"p95", 0.95}, {"p99", 0.99}};
    int64_t d_ms = duration_ns / 1000000, start = now_ms - d_ms;
    struct mc_result cr, mr;
    cJSON *entry, *u;
    char buf[DURATION_STR_MAX];

    if (mc_query(mc, &(struct mc_select){.kind = cpu_kind}, start, now_ms, cpu_s, &cr) < 0 ||
        mc_query(mc, &(struct mc_select){.kind = mem_kind}, start, now_ms, mem_s, &mr) < 0 ||
        mc_result_is_cold(&cr, d_ms) || mc_result_is_cold(&mr, d_ms))
        return NULL;
    CHECK(entry = cJSON_CreateObject());
    CHECK(u = cJSON_AddObjectToObject(entry, "usage"));
    CHECK(cJSON_AddItemToObject(u, "avg", resources(cr.avg, mr.avg)));
    for (size_t i = 0; i < ARRAY_SIZE(stats); i++)
        CHECK(cJSON_AddItemToObject(
            u, stats[i].key,
            resources(mc_percentile(cpu_s, stats[i].p), mc_percentile(mem_s, stats[i].p))));
    (void)duration_format(duration_ns, buf);
    CHECK(cJSON_AddStringToObject(entry, "duration", buf));
    return entry;
}

static cJSON *aggregated_list(struct mc *mc, const struct report_policy *p, enum mc_kind cpu_kind,
                              enum mc_kind mem_kind, int64_t now_ms, struct mc_scratch *scratch)
{
    struct mc_scratch mem_s = MC_SCRATCH_INIT;
    cJSON *list = cJSON_CreateArray();

    CHECK(list);
    for (size_t i = 0; i < p->ndurations; i++) {
        cJSON *e = aggregated(mc, cpu_kind, mem_kind, now_ms, p->durations_ns[i], scratch, &mem_s);
        if (e)
            CHECK(cJSON_AddItemToArray(list, e));
    }
    mc_scratch_release(&mem_s);
    return list;
}

static int pod_cmp(const void *x, const void *y)
{
    const struct report_pod *a = *(const struct report_pod *const *)x;
    const struct report_pod *b = *(const struct report_pod *const *)y;
    int c = strcmp(a->ns, b->ns);

    return c ? c : strcmp(a->name, b->name);
}

cJSON *report_build_status(struct mc *mc, const struct report_policy *policy,
                           const struct report_pod *pods, size_t npods, int64_t now_ms,
                           struct mc_scratch *scratch)
{
    int64_t start = now_ms - policy->aggregate_s * 1000;
    cJSON *status, *nm, *node_usage, *sys, *list;
    const struct report_pod **sorted;
    char now[RFC3339_STR_MAX];

    node_usage = usage(mc, MC_NODE_CPU_USAGE, memory_kind(policy, false), NULL, start, now_ms);
    if (!node_usage)
        return NULL;
    CHECK(status = cJSON_CreateObject());
    (void)rfc3339_format(now_ms / 1000, now);
    CHECK(cJSON_AddStringToObject(status, "updateTime", now));
    CHECK(nm = cJSON_AddObjectToObject(status, "nodeMetric"));
    CHECK(cJSON_AddItemToObject(nm, "nodeUsage", node_usage));
    CHECK(cJSON_AddItemToObject(nm, "aggregatedNodeUsages",
                                aggregated_list(mc, policy, MC_NODE_CPU_USAGE,
                                                memory_kind(policy, false), now_ms, scratch)));
    if ((sys = usage(mc, MC_SYS_CPU_USAGE, MC_SYS_MEMORY_USAGE, NULL, start, now_ms))) {
        CHECK(cJSON_AddItemToObject(nm, "systemUsage", sys));
        CHECK(cJSON_AddItemToObject(
            nm, "aggregatedSystemUsages",
            aggregated_list(mc, policy, MC_SYS_CPU_USAGE, MC_SYS_MEMORY_USAGE, now_ms, scratch)));
    }
    sorted = xcalloc(npods ? npods : 1, sizeof(const struct report_pod *));
    for (size_t i = 0; i < npods; i++)
        sorted[i] = &pods[i];
    qsort(sorted, npods, sizeof(const struct report_pod *), pod_cmp);
    CHECK(list = cJSON_AddArrayToObject(status, "podsMetric"));
    for (size_t i = 0; i < npods; i++) {
        const struct report_pod *p = sorted[i];
        cJSON *u = usage(mc, MC_POD_CPU_USAGE, memory_kind(policy, true), p->uid, start, now_ms);
        cJSON *e;

        if (!u)
            continue; /* no samples: omitted, as upstream does */
        CHECK(e = cJSON_CreateObject());
        CHECK(cJSON_AddStringToObject(e, "namespace", p->ns));
        CHECK(cJSON_AddStringToObject(e, "name", p->name));
        /* omitempty upstream: a pod of no class has neither key. */
        if (p->priority != API_PRIORITY_NONE)
            CHECK(cJSON_AddStringToObject(e, "priority", api_priority_name(p->priority)));
        if (p->qos != API_QOS_NONE)
            CHECK(cJSON_AddStringToObject(e, "qos", api_qos_name(p->qos)));
        CHECK(cJSON_AddItemToObject(e, "podUsage", u));
        CHECK(cJSON_AddItemToArray(list, e));
    }
    free(sorted);
    return status;
}
