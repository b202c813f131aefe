/*
 * The agent's metric collection (upstream koordlet's metrics advisor; reference
 * koordlet-and-scheduler.md 1.5-1.9): one round per collect interval reads the node's
 * /proc/stat and /proc/meminfo and, for every pod of this node, its pod and container cgroups,
 * and appends usages to the metric cache:
 *
 *   node_cpu_usage     delta(user+nice+system+irq+softirq ticks) / (delta wall / jiffy)   cores
 *   node_memory_usage  (MemTotal - MemAvailable) x 1024; with page cache (MemTotal - MemFree)
 *   pod/container cpu  delta(cpuacct ns) / delta(wall ns)                                 cores
 *   pod/container mem  inactive_anon + active_anon + unevictable (memory.stat); with page
 *                      cache also active_file + inactive_file
 *   *_cpu_throttled    delta(nr_throttled) / delta(nr_periods), 0 when no period passed
 *   sys_*_usage        max(node - sum of pods, 0); not in a round where a pod was only
 *                      seeded (upstream would count that pod as system usage once)
 *   node_be (cpu)      real-limit, request, usage of the BestEffort QoS level, milli-cores
 *
 * A pod's first round only seeds its counters and records nothing, as upstream does (its first
 * cpu delta would span an unknown time). A pod gone from the list has its series dropped from
 * the cache and its open files closed; files are kept open between rounds (cgroup/reader.h) so a
 * round costs a pread per file. Host applications (NodeSLO hostApplications) are not collected
 * yet, so system usage includes them.
 *
 * One thread calls collect_round(); nothing here is shared with other threads but the cache.
 */
#ifndef KOORD_AGENT_COLLECT_COLLECT_H
#define KOORD_AGENT_COLLECT_COLLECT_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cg_layout;
struct mc;

struct collect_opts {
    const struct cg_layout *layout; /* borrowed; roots, version and driver */
    struct mc *mc;                  /* borrowed; where samples go */
    long jiffy_hz;                  /* clock ticks per second of /proc/stat; 0 = sysconf */
};

struct collect_stats {
    uint64_t rounds;
    size_t pods;           /* pods with a sample in the last round */
    size_t tracked;        /* pods the last round read (not completed ones) */
    size_t containers;     /* containers with a sample in the last round */
    uint64_t read_errors;  /* files that could not be read (counted per round and file) */
    int64_t last_round_ns; /* CPU time (thread) the last round took */
};

struct collector;

/* 0, -EINVAL (no layout or cache). */
int collect_new(const struct collect_opts *opts, struct collector **ret);

/*
 * One round over pods (the Pod objects of this node; borrowed), at wall_ms (ms since the epoch,
 * the samples' time) and mono_ns (CLOCK_MONOTONIC, for the rates). Returns 0; what could not be
 * read is skipped and counted (a pod whose cgroup does not exist yet, a gone container).
 */
int collect_round(struct collector *c, const cJSON *const *pods, size_t npods, int64_t wall_ms,
                  int64_t mono_ns);

void collect_stats(struct collector *c, struct collect_stats *ret);

void collect_free(struct collector *c);

#endif
