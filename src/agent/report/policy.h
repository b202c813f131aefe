/*
 * The NodeMetric spec as the agent obeys it (reference koordlet-and-scheduler.md 2.3-2.4):
 * spec.metricCollectPolicy merged over koordlet's own defaults, with its floors. Kept apart from
 * the report loop so the rules are tested without a cluster.
 */
#ifndef KOORD_AGENT_REPORT_POLICY_H
#define KOORD_AGENT_REPORT_POLICY_H

#include <cjson/cJSON.h>
#include <stdint.h>

#include "base/strbuf.h"

struct mc;

#define REPORT_MAX_DURATIONS 16

enum report_memory_policy {
    REPORT_MEMORY_WITHOUT_PAGE_CACHE, /* usageWithoutPageCache (default) */
    REPORT_MEMORY_WITH_PAGE_CACHE,    /* usageWithPageCache */
    REPORT_MEMORY_WITH_HOT_PAGE_CACHE /* usageWithHotPageCache: hot pages are not collected
                                         here, so it reports as usageWithoutPageCache does */
};

struct report_policy {
    int64_t aggregate_s;                        /* current-value window; default 300, floor 60 */
    int64_t report_s;                           /* report period; default 60, floor 30 */
    int64_t durations_ns[REPORT_MAX_DURATIONS]; /* aggregatedNodeUsages windows */
    size_t ndurations;                          /* default 5m, 10m, 30m */
    enum report_memory_policy memory;
};

/* The defaults, as upstream's koordlet has them before any NodeMetric is seen. */
void report_policy_default(struct report_policy *ret);

/*
 * The policy of a NodeMetric object (or its spec, or NULL): each field it sets replaces the
 * default, then the floors apply. Fields of the wrong type or value are ignored (the default
 * stays) and named in why (may be NULL), so one bad field does not stop reporting.
 */
void report_policy_from(const cJSON *nodemetric, struct report_policy *ret, struct strbuf *why);

/*
 * Makes the metric cache keep what a report under p reads: the node and system usage kinds at
 * least the longest of p's durations and its aggregate window, the pod usage kinds at least the
 * aggregate window, each never below its default (metriccache.h). Cheap when nothing changes, so
 * the report loop calls it before each build. Returns 0; -E2BIG for a node window above
 * REPORT_MAX_NODE_WINDOW_MS or an aggregate window above REPORT_MAX_POD_WINDOW_MS, -EINVAL for one
 * longer than the cache can hold at its interval (the retentions stay as they were; the report
 * covers what the cache holds).
 */
#define REPORT_MAX_NODE_WINDOW_MS ((int64_t)24 * 3600 * 1000)
#define REPORT_MAX_POD_WINDOW_MS  ((int64_t)3600 * 1000)
int report_policy_retain(const struct report_policy *p, struct mc *mc);

#endif
