/* The NodeMetric collect policy (policy.h). */
#include "agent/report/policy.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "agent/metriccache/metriccache.h"
#include "api/duration.h"
#include "base/base.h"

#define NS_PER_MIN (60LL * 1000 * 1000 * 1000)

void report_policy_default(struct report_policy *ret)
{
    *ret = (struct report_policy){
        .aggregate_s = 300,
        .report_s = 60,
        .durations_ns = {5 * NS_PER_MIN, 10 * NS_PER_MIN, 30 * NS_PER_MIN},
        .ndurations = 3,
        .memory = REPORT_MEMORY_WITHOUT_PAGE_CACHE,
    };
}

static void complain(struct strbuf *why, const char *field, const char *what)
{
    if (why)
        strbuf_addf(why, "%sspec.metricCollectPolicy.%s: %s", why->len ? "; " : "", field, what);
}

/* A whole number of seconds >= 1, or -1. */
static int64_t seconds(const cJSON *v)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 1 ||
        v->valuedouble > 1e9)
        return -1;
    return (int64_t)v->valuedouble;
}

void report_policy_from(const cJSON *nodemetric, struct report_policy *ret, struct strbuf *why)
{
    const cJSON *spec = cJSON_GetObjectItemCaseSensitive(nodemetric, "spec");
    const cJSON *p, *v;
    int64_t s;

    report_policy_default(ret);
    if (!spec)
        spec = nodemetric; /* given the spec itself */
    p = cJSON_GetObjectItemCaseSensitive(spec, "metricCollectPolicy");
    if (!cJSON_IsObject(p))
        return;
    if ((v = cJSON_GetObjectItemCaseSensitive(p, "aggregateDurationSeconds"))) {
        if ((s = seconds(v)) > 0)
            ret->aggregate_s = s;
        else
            complain(why, "aggregateDurationSeconds", "not a positive whole number");
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(p, "reportIntervalSeconds"))) {
        if ((s = seconds(v)) > 0)
            ret->report_s = s;
        else
            complain(why, "reportIntervalSeconds", "not a positive whole number");
    }
    if (ret->aggregate_s < 60)
        ret->aggregate_s = 60;
    if (ret->report_s < 30)
        ret->report_s = 30;
    v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "nodeAggregatePolicy"),
                                         "durations");
    if (cJSON_IsArray(v)) {
        const cJSON *d;
        size_t n = 0;
        int64_t got[REPORT_MAX_DURATIONS];
        bool ok = cJSON_GetArraySize(v) <= REPORT_MAX_DURATIONS;

        cJSON_ArrayForEach(d, v)
        {
            int64_t ns;
            if (!ok || !cJSON_IsString(d) || duration_parse(d->valuestring, &ns) < 0 || ns <= 0) {
                ok = false;
                break;
            }
            got[n++] = ns;
        }
        if (ok) {
            memcpy(ret->durations_ns, got, n * sizeof(got[0]));
            ret->ndurations = n;
        } else {
            complain(why, "nodeAggregatePolicy.durations",
                     "want at most 16 positive durations such as \"5m0s\"");
        }
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(p, "nodeMemoryCollectPolicy"))) {
        const char *m = cJSON_GetStringValue(v);
        if (m && !strcmp(m, "usageWithoutPageCache"))
            ret->memory = REPORT_MEMORY_WITHOUT_PAGE_CACHE;
        else if (m && !strcmp(m, "usageWithPageCache"))
            ret->memory = REPORT_MEMORY_WITH_PAGE_CACHE;
        else if (m && !strcmp(m, "usageWithHotPageCache"))
            ret->memory = REPORT_MEMORY_WITH_HOT_PAGE_CACHE;
        else
            complain(why, "nodeMemoryCollectPolicy",
                     "want usageWithoutPageCache, usageWithPageCache or usageWithHotPageCache");
    }
}

int report_policy_retain(const struct report_policy *p, struct mc *mc)
{
    static const enum mc_kind node_kinds[] = {MC_NODE_CPU_USAGE, MC_NODE_MEMORY_USAGE,
                                              MC_NODE_MEMORY_USAGE_WITH_PAGE_CACHE,
                                              MC_SYS_CPU_USAGE, MC_SYS_MEMORY_USAGE};
    static const enum mc_kind pod_kinds[] = {MC_POD_CPU_USAGE, MC_POD_MEMORY_USAGE,
                                             MC_POD_MEMORY_USAGE_WITH_PAGE_CACHE};
    int64_t aggregate_ms = p->aggregate_s * 1000, node_ms = MC_RETENTION_NODE_MS;
    int64_t pod_ms = MC_RETENTION_DEFAULT_MS;
    int r;

    if (aggregate_ms > node_ms)
        node_ms = aggregate_ms;
    for (size_t i = 0; i < p->ndurations; i++) {
        int64_t ms = p->durations_ns[i] / 1000000 + (p->durations_ns[i] % 1000000 != 0);

        if (ms > node_ms)
            node_ms = ms;
    }
    if (aggregate_ms > pod_ms)
        pod_ms = aggregate_ms;
    /* Bounded memory whatever a NodeMetric asks: a day of a node series is 1 MB, an hour of
     * the pods' series 14 MB on a node of 110 pods (a day would be 340 MB). */
    if (node_ms > REPORT_MAX_NODE_WINDOW_MS || pod_ms > REPORT_MAX_POD_WINDOW_MS)
        return -E2BIG;
    /* The same retention for every node kind and a shorter one for pods: when one is refused,
     * the first is, before anything changed. */
    for (size_t i = 0; i < ARRAY_SIZE(node_kinds); i++)
        if ((r = mc_set_retention(mc, node_kinds[i], node_ms)) < 0)
            return r;
    for (size_t i = 0; i < ARRAY_SIZE(pod_kinds); i++)
        if ((r = mc_set_retention(mc, pod_kinds[i], pod_ms)) < 0)
            return r;
    return 0;
}
